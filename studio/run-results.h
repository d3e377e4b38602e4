/* run-results.h — the results folder of a run: what a trained run leaves
 * in a directory (metrics.csv, summary.json, model.weights, trainer.state,
 * experiment.json, loss.png, the model's figures, σ-maps at chosen steps,
 * the words page), and what is recorded on the trainer thread for it (the
 * losses a divergence drops, σ-map snapshots at the chosen steps).
 *
 * `caml train` (and so `caml sweep`) writes a run through it; the constants
 * of its words page are the workbench's Export Words Page's too. Plain C on
 * the engine and report.h: nothing here prints, a problem goes to the
 * caller's CamlRunResultsReport. */
#pragma once

#include "caml.h"
#include "report.h"

G_BEGIN_DECLS

/* words.html: test texts shown, and the lists of the CAML_RUN_WORDS_TOP
 * most and least context-free words among those seen at least
 * CAML_RUN_WORDS_MIN_COUNT times in training. */
#define CAML_RUN_WORDS_SAMPLES   20
#define CAML_RUN_WORDS_MIN_COUNT 20
#define CAML_RUN_WORDS_TOP       50

/* ------------------------------------------------- recording while training */

typedef struct _CamlRunRecorder CamlRunRecorder;

/* What the trainer's progress function records for the results: the
 * losses of the last steps (a divergence takes the trainer's losses back,
 * but loss.png shows what the run went through) and, for a model with
 * σ-maps (caml_report_sigma_layer), a snapshot of the first
 * CAML_FIGURE_SIGMA_IMAGES images of test at each of steps (ascending,
 * copied), taken on the trainer thread after the step is checked. */
CamlRunRecorder *caml_run_recorder_new (CamlTrainer *trainer, CamlModel *model,
                                        const CamlDataset *test, const long *steps,
                                        int n_steps);
void             caml_run_recorder_free (CamlRunRecorder *rec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CamlRunRecorder, caml_run_recorder_free)

/* From the trainer's progress function, on the trainer thread. */
void             caml_run_recorder_progress (CamlRunRecorder *rec, const CamlProgress *p);

/* ------------------------------------------------------ a run's results */

/* Where a run came from, for summary.json. */
typedef struct {
  const char *preset;        /* or NULL */
  const char *init_weights;  /* the weights file the run started from (after
                              * a resume, the one the resumed run started from),
                              * or NULL */
  const char *resumed_from;  /* the saved run it went on with, or NULL */
  long        resumed_step;  /* … from this step */
  int         ranks;         /* the processes that trained it together (1: one) */
  /* with ranks > 1: the gradient sums, as the process writing saw them */
  long        allreduce_calls;
  double      allreduce_bytes, allreduce_seconds;
} CamlRunOrigin;

/* "NAME, seed N": the title of a run's loss.png and words page (the
 * workbench's exported words page too). */
char *caml_run_results_title (const CamlExperiment *exp);

/* "idle", "running", "paused", "finished", "stopped", "failed". */
const char *caml_run_state_name (CamlTrainerState state);

/* A run that has ended, as its results are written: filled from the
 * trainer (caml_run_results_take), then by caml_run_results_write. */
typedef struct {
  /* the run: borrowed */
  const CamlExperiment *exp;
  const CamlRunOrigin  *origin;
  CamlModel            *model;         /* the trained weights, evaluated here */
  const CamlDataset    *train, *test;
  CamlRunRecorder      *rec;
  gboolean              sigma_stretch; /* σ-maps over their own χ range */
  /* taken from the trainer: owned */
  CamlProgress          p;             /* seconds grow by a final evaluation */
  float                *losses;        /* kept, (n_steps) */
  long                  n_steps;
  float                *plotted;       /* loss.png's, (n_plotted): after a
                                        * divergence through the failed step */
  long                  n_plotted;
  gboolean              diverged;
  CamlDivergence        divergence;
  GError               *run_error;     /* or NULL */
  CamlEvalRow          *rows;          /* room for one more */
  int                   n_rows;
  GBytes               *state;         /* trainer.state, or NULL: none */
  GError               *state_error;   /* why there is none though steps were made */
  /* written */
  gboolean              final_row;     /* rows[n_rows - 1] was added by the write */
  double                train_loss, train_metric;  /* the final weights, whole train set */
  double                sigma_auc;     /* NaN: no σ-maps */
  gboolean              sigma_high_on_fg;
  CamlSigmaSource       sigma_source;  /* whose σ-maps, with them */
  GString              *drawn;         /* ", NAME" per file after loss.png */
} CamlRunResults;

/* Takes what the results are made of from a trainer that has ended: its
 * progress, losses, rows, error and state. A run that diverged goes back
 * to checkpoint first (the last healthy evaluation, or the start:
 * caml_checkpoint_roll_back) when that is before the step the trainer
 * rolled back to, dropping the snapshots rec took after it; when that
 * fails, the run keeps the step it rolled back to itself and
 * *roll_back_error says why. Free with caml_run_results_clear. */
void caml_run_results_take (CamlRunResults *r, CamlTrainer *trainer,
                            CamlCheckpoint *checkpoint, GError **roll_back_error);
void caml_run_results_clear (CamlRunResults *r);

/* What caml_run_results_write says on the way: a result not written
 * (problem; the others are still tried), or a note (something left out on
 * purpose: no trainer.state). */
typedef enum {
  CAML_RUN_RESULTS_PROBLEM,
  CAML_RUN_RESULTS_NOTE,
} CamlRunResultsSay;

typedef void (*CamlRunResultsReport) (CamlRunResultsSay kind, const char *message,
                                      gpointer user_data);

/* Evaluates the final weights on the training set (and on the test set
 * when the last evaluation was at an earlier step: a last row), then
 * writes every result of the run into dir: sigma-stepN.png at each
 * snapshot and at the last step (with sigma_auc over the first
 * CAML_REPORT_SIGMA_AUC_IMAGES test images), those a resumed run's
 * directory kept of its steps, model.weights, trainer.state,
 * experiment.json, metrics.csv, summary.json, loss.png, surface.png,
 * chi.png, parts.png, words.html and words.png — each tried even when one
 * fails, each failure reported. Returns whether all were written. Any
 * thread. */
gboolean caml_run_results_write (CamlRunResults *r, const char *dir,
                                 CamlRunResultsReport report, gpointer user_data);

/* A run that failed with nothing worth keeping (back at step 0): its
 * summary and loss plot as failed-summary.json and failed-loss.png in dir,
 * no figures. Returns whether both were written. */
gboolean caml_run_results_write_failure (const CamlRunResults *r, const char *dir,
                                         CamlRunResultsReport report, gpointer user_data);

/* summary.json of r (the keys: `caml train --help`). */
gboolean caml_run_results_write_summary (const CamlRunResults *r, const char *path,
                                         GError **error);

/* The names of a results folder: whether name is one a run may write
 * (a run that keeps its results replaces every such file an earlier run
 * left, so a folder holds one run's), and those a run of this model may
 * write — every run's, the failure report's, its kind of model's plots and
 * sigma-stepN.png at the σ-map steps (ascending). */
gboolean   caml_run_results_is_name (const char *name);
GPtrArray *caml_run_results_planned_names (const CamlModel *model, const CamlDataset *train,
                                           const long *steps, int n_steps);

/* Going on with a run saved in a results folder (`caml train --resume`):
 * the preset, init_weights and as_trained (the experiment, as JSON) of its
 * summary.json, when it has them; NULL otherwise. A summary that cannot be
 * read only loses them: the run itself comes from experiment.json and
 * trainer.state. */
void     caml_run_results_read_summary (const char *dir, char **preset, char **init_weights,
                                        char **as_trained);
/* A resumed run is the saved one going on: its experiment.json (exp, as
 * loaded from source) may differ from the experiment it was trained with
 * (as_trained) in the live settings only — optimizer.lr, em_steps and
 * weight_decay, training.steps and eval_every, the names, the data files'
 * paths and plot.domain. Another loss, data setting or layer option would
 * still load the state and go on silently as a different run: an error
 * names the first line that differs. TRUE when as_trained does not load
 * (an older or damaged summary: nothing to hold it to). */
gboolean caml_run_results_check_resumed (const CamlExperiment *exp, const char *as_trained,
                                         const char *source, GError **error);

G_END_DECLS
