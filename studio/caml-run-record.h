/* caml-run-record.h — one run the session kept (CamlSession's "runs"
 * list): its name, the experiment it ran, what differs from the run
 * before it, its final figures, and small copies of its loss and
 * evaluation curves for overlaying. No weights (the session's set-aside
 * weights are a separate thing). Plain GObject, no GTK: main thread only.
 *
 *   notify::name   the user renamed it.
 *   notify::shown  ticked (its curves overlay the loss plot) or not.
 *   notify::difference  its pair (model and matched baseline) was recorded. */
#pragma once

#include <glib-object.h>

#include "caml.h"

G_BEGIN_DECLS

#define CAML_TYPE_RUN_RECORD (caml_run_record_get_type ())
G_DECLARE_FINAL_TYPE (CamlRunRecord, caml_run_record, CAML, RUN_RECORD, GObject)

/* Curves kept: at most this many train-loss points (means of equal runs of
 * steps) and evaluation rows (every k-th, and the last). */
#define CAML_RUN_RECORD_MAX_POINTS 2000

/* The figures of a run at its end (NaN: none). */
typedef struct {
  CamlTrainerState state;      /* FINISHED, STOPPED or FAILED */
  long     step;               /* steps done */
  double   train_loss;         /* the last evaluation's (else the last step's) */
  double   test_loss;          /* NaN: not evaluated */
  double   test_metric;        /* accuracy (classification) or MSE; NaN: none */
  gboolean classification;
  double   sigma_auc;          /* the last σ-map AUC; NaN: no σ-maps */
  size_t   n_params;
  double   steps_per_second;   /* steps over training time (evaluations excluded) */
  double   seconds;            /* training time, pauses excluded */
} CamlRunFigures;

/* number: the run's ordinal in the session ("Run 3"), shared by a run and
 * its matched baseline; exp is copied; losses (n_steps) and rows (n_rows)
 * are subsampled into copies. */
CamlRunRecord *caml_run_record_new (int number, gboolean baseline, const CamlExperiment *exp,
                                    const CamlRunFigures *figures, const float *losses,
                                    long n_steps, const CamlEvalRow *rows, int n_rows);
/* The run went on (extended, continued) and ended again: new figures and
 * curves, the same record. */
void        caml_run_record_update (CamlRunRecord *self, const CamlExperiment *exp,
                                    const CamlRunFigures *figures, const float *losses,
                                    long n_steps, const CamlEvalRow *rows, int n_rows);

int                   caml_run_record_get_number (CamlRunRecord *self);
gboolean              caml_run_record_is_baseline (CamlRunRecord *self);
const char           *caml_run_record_get_name (CamlRunRecord *self);
void                  caml_run_record_set_name (CamlRunRecord *self, const char *name);
gboolean              caml_run_record_get_shown (CamlRunRecord *self);
void                  caml_run_record_set_shown (CamlRunRecord *self, gboolean shown);
const CamlExperiment *caml_run_record_get_experiment (CamlRunRecord *self);
const CamlRunFigures *caml_run_record_get_figures (CamlRunRecord *self);
/* "lr 0.01 → 0.1, seed 1 → 2", "first run", "baseline of Run 2". */
const char           *caml_run_record_get_differs (CamlRunRecord *self);
void                  caml_run_record_set_differs (CamlRunRecord *self, const char *differs);
/* The model's test figure minus its matched baseline's at the baseline's
 * last evaluation (NaN: no pair yet, or no common evaluation). */
double                caml_run_record_get_difference (CamlRunRecord *self);
void                  caml_run_record_set_difference (CamlRunRecord *self, double difference);
/* The kept train-loss points: steps (x) and mean losses (y), n of them;
 * *stride is the steps each point averages (1: every step). */
const double         *caml_run_record_get_losses (CamlRunRecord *self, const double **steps,
                                                  long *n, long *stride);
const CamlEvalRow    *caml_run_record_get_rows (CamlRunRecord *self, int *n_rows);

/* "lr 0.01 → 0.1, em_steps 1 → 2, layers": what differs from before to
 * exp, in a few words (new; "same settings" when nothing). */
char *caml_run_record_describe_changes (const CamlExperiment *before,
                                        const CamlExperiment *exp);
/* Short texts of the figures as the table and the CSV give them. */
const char *caml_run_record_state_name (CamlTrainerState state);

G_END_DECLS
