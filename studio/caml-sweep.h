/* caml-sweep.h — a sweep under way in the workbench (CamlSession's
 * "sweep"): the plan's runs, trained one after another on a worker thread
 * of their own while the window goes on, each written as a results folder
 * under the sweep's folder as `caml sweep` writes it (sweep.h: the same
 * plan, folders and tables), and each a CamlSweepRun item that the Sweep
 * page's table, plot and parallel coordinates follow.
 *
 *   "changed"    the progress line, or a run's state, changed.
 *   "run-ended"  (CamlSweepRun) a run ended: its figures and curves are in
 *                the item (the session keeps it in its runs list).
 *   notify::running  the sweep ended (finished, cancelled).
 *
 * Main thread only; the worker reports through the main loop (at most five
 * progress updates a second). The engine's threads do the training. */
#pragma once

#include <gio/gio.h>

#include "caml.h"
#include "caml-run.h"
#include "caml-run-record.h"
#include "sweep.h"

G_BEGIN_DECLS

#define CAML_TYPE_SWEEP_RUN (caml_sweep_run_get_type ())
G_DECLARE_FINAL_TYPE (CamlSweepRun, caml_sweep_run, CAML, SWEEP_RUN, GObject)

#define CAML_TYPE_SWEEP (caml_sweep_get_type ())
G_DECLARE_FINAL_TYPE (CamlSweep, caml_sweep, CAML, SWEEP, GObject)

typedef enum {
  CAML_SWEEP_RUN_QUEUED,
  CAML_SWEEP_RUN_TRAINING,
  CAML_SWEEP_RUN_DONE,       /* finished, or stopped by Cancel: its results are kept */
  CAML_SWEEP_RUN_FAILED,     /* diverged, or could not be built, trained or written */
  CAML_SWEEP_RUN_SKIPPED,    /* the sweep was cancelled before it started */
} CamlSweepRunState;

/* Starts the plan's runs at once. plan is taken and must be checked
 * (caml_sweep_plan_check); data: the loaded data sets of plan->exp, shared
 * by every run whose data are the same (a surface split that follows the
 * seed is made again per seed), or NULL: each run loads its own. The
 * folder is made if needed and sweep.json written first, on the sweep's
 * thread (the main thread writes nothing). */
CamlSweep *caml_sweep_new (CamlSweepPlan *plan, CamlRunData *data, const char *out_dir);
/* The run under way stops (its results are kept, as Stop keeps a run's),
 * and the runs not started are skipped. */
void       caml_sweep_cancel (CamlSweep *self);
gboolean   caml_sweep_is_running (CamlSweep *self);
/* Sweeps whose news has not all reached the main thread, in every
 * session (caml_session_get_jobs_in_flight counts them). */
int        caml_sweep_get_in_flight (void);

const CamlSweepPlan *caml_sweep_get_plan (CamlSweep *self);
const char          *caml_sweep_get_out_dir (CamlSweep *self);
/* CamlSweepRun items, in the plan's run order (the first axis fastest,
 * each point's model then its baseline). */
GListModel          *caml_sweep_get_runs (CamlSweep *self);
int                  caml_sweep_get_n_ended (CamlSweep *self);
/* The results of every run, ended or not (done FALSE), in run order: what
 * caml_sweep_plot_new and caml_sweep_write_tables take. */
const CamlSweepResult *caml_sweep_get_results (CamlSweep *self, int *n);
/* "7 of 18 runs · training kernel=5 depth=8 (CA), step 1,200 of 2,000" (new),
 * and its fraction of the whole sweep. */
char                *caml_sweep_dup_status (CamlSweep *self, double *fraction);
/* Why the tables or the plan could not be written (the last such), or NULL. */
const char          *caml_sweep_get_problem (CamlSweep *self);

/* ---------------------------------------------------------------- a run */

int                   caml_sweep_run_get_index (CamlSweepRun *self);
void                  caml_sweep_run_get_point (CamlSweepRun *self, int index[2]);
gboolean              caml_sweep_run_is_baseline (CamlSweepRun *self);
/* "kernel=3 depth=8" — and " (baseline)" for a baseline. */
const char           *caml_sweep_run_get_name (CamlSweepRun *self);
CamlSweepRunState     caml_sweep_run_get_state (CamlSweepRun *self);
const CamlSweepResult *caml_sweep_run_get_result (CamlSweepRun *self);
/* Its results folder (there once it ended, unless it failed to write). */
const char           *caml_sweep_run_get_dir (CamlSweepRun *self);
/* Once ended: what it trained, its figures and curves (NULL before). */
const CamlExperiment *caml_sweep_run_get_experiment (CamlSweepRun *self);
const CamlRunFigures *caml_sweep_run_get_figures (CamlSweepRun *self);
const float          *caml_sweep_run_get_losses (CamlSweepRun *self, long *n_steps);
const CamlEvalRow    *caml_sweep_run_get_rows (CamlSweepRun *self, int *n_rows);
/* The record the session keeps of it in its runs list, or NULL. */
CamlRunRecord        *caml_sweep_run_get_record (CamlSweepRun *self);
void                  caml_sweep_run_set_record (CamlSweepRun *self, CamlRunRecord *record);

G_END_DECLS
