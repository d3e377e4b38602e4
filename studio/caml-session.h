/* caml-session.h — one experiment being worked on: the document (its file,
 * unsaved changes, autosave), its data, the run built from it with its
 * baseline and the previous run's curves, the live learning rate and
 * em_steps, and every worker job that loads, builds, samples or writes
 * them. Plain GLib, no GTK: the workbench's window shows a session and
 * hands it what the user does; the session announces what changed.
 *
 *   notify::state  what can be done changed: the trainer's state, the data
 *                  (loading, loaded, failed), the run (built, dropped), the
 *                  baseline, the previous run, the set-aside weights.
 *   notify::modified, notify::path  the document.
 *   notify::data-choice  the data the picker shows.
 *   notify::compare  Compare with Baseline was turned on or off.
 *   notify::speed, notify::continuous  how fast runs train.
 *   notify::sweep  a sweep was started (caml-sweep.h says how it goes).
 *   runs           (a GListModel of CamlRunRecord) the runs kept; a record
 *                  ticked or unticked is news on "progress" (CURVES).
 *   "progress"     (CamlSessionChange) the run's copies changed.
 *   "notice"       (message, warning) news for the status line.
 *   "error"        (CamlSessionBanner, message) what the banner says.
 *   "waiting"      (CamlSessionWait, why) no run to show, and why.
 *   "data-changed" the data's description (and the shapes the model is
 *                  checked against) changed.
 *   "experiment-changed"  the session changed the experiment itself (the
 *                  loss after other data, the rate a run continues at).
 *
 * Main thread only. Jobs run on worker threads on copies, and a run's
 * trainer thread reports through the main loop (at most one idle source,
 * holding a reference, ~10 updates a second). */
#pragma once

#include <gio/gio.h>

#include "caml.h"
#include "caml-run.h"
#include "caml-run-record.h"
#include "caml-sweep.h"

G_BEGIN_DECLS

#define CAML_TYPE_SESSION (caml_session_get_type ())
G_DECLARE_FINAL_TYPE (CamlSession, caml_session, CAML, SESSION, GObject)

typedef enum {
  CAML_SESSION_BANNER_ERROR,      /* a message, or NULL: none */
  CAML_SESSION_BANNER_DIVERGED,   /* the run diverged: Continue (at lr ÷ 10) is offered */
  CAML_SESSION_BANNER_SET_ASIDE,  /* a replaced run's trained weights are kept */
} CamlSessionBanner;

typedef enum {
  CAML_SESSION_WAIT_LOADING,      /* the data load or the model is built: why says */
  CAML_SESSION_WAIT_NO_DATA,      /* the data could not be read: why says */
  CAML_SESSION_WAIT_BAD_MODEL,    /* the model does not fit the data */
  CAML_SESSION_WAIT_NO_BUILD,     /* the model cannot be built */
} CamlSessionWait;

typedef enum {
  CAML_SESSION_CURVES  = 1 << 0,  /* losses, evaluations, baseline, previous run, events */
  CAML_SESSION_SURFACE = 1 << 1,  /* the fit, χ and the parts */
  CAML_SESSION_SIGMA   = 1 << 2,  /* σ-map snapshots */
  CAML_SESSION_WORDS   = 1 << 3,  /* word gates (and a run dropped: no words) */
  CAML_SESSION_NEW_RUN = 1 << 4,  /* a run was installed: what it shows is laid out */
  CAML_SESSION_LAYERS  = 1 << 5,  /* the layer table and χ statistics (and a run dropped) */
} CamlSessionChange;

/* A live change marked on the loss curve ("lr 0.01"). */
typedef struct {
  long  step;
  char *text;
} CamlSessionEvent;

CamlSession *caml_session_new (void);
/* The window goes: jobs under way end without touching the session, the
 * run and its baseline are stopped and joined. */
void         caml_session_close (CamlSession *self);
/* Jobs under way in every session, sweeps included (tests wait for them). */
int          caml_session_get_jobs_in_flight (void);

/* ------------------------------------------------------------ document */

const CamlExperiment *caml_session_get_experiment (CamlSession *self);
/* Takes exp; path (may be NULL) is its file, origin (may be NULL) what the
 * subtitle says without one ("preset xor"). run_dir: a saved run whose
 * model.weights (and trainer.state, when there) the run loads. */
void         caml_session_set_experiment (CamlSession *self, CamlExperiment *exp,
                                          const char *path, const char *origin,
                                          const char *run_dir);
/* The experiment of a saved run's folder (caml train's results, Save
 * Run's), or NULL with an error saying what the folder lacks. */
CamlExperiment *caml_session_read_run (const char *dir, GError **error);
/* Saves to path (a name that follows its file follows it to path). */
gboolean     caml_session_save (CamlSession *self, const char *path, GError **error);
const char  *caml_session_get_path (CamlSession *self);
const char  *caml_session_get_origin (CamlSession *self);
/* The experiment's name as the title shows it (new). */
char        *caml_session_dup_display_name (CamlSession *self);
/* "NAME, seed S" of the run (or of the experiment without one): the title
 * of its loss and words figures, as caml train's (new). */
char        *caml_session_dup_run_title (CamlSession *self);
gboolean     caml_session_is_modified (CamlSession *self);
gboolean     caml_session_is_recovered (CamlSession *self);
void         caml_session_mark_recovered (CamlSession *self);
gboolean     caml_session_autosave_now (CamlSession *self, GError **error);
char        *caml_session_get_autosave_path (CamlSession *self);
/* Saved, discarded or unchanged: nothing to recover. */
void         caml_session_drop_autosave (CamlSession *self);

/* --------------------------------------------------------------- edits */

void caml_session_set_layers (CamlSession *self, const CamlLayerSpec *specs, int n);
void caml_session_set_loss (CamlSession *self, CamlLossKind loss);
/* What every optimizer reads stays; the rest are the new one's defaults. */
void caml_session_set_optimizer (CamlSession *self, CamlOptimizerKind kind);
/* Live while a run (or its baseline) trains or is paused, marked on the
 * loss curve; else an edit. */
void caml_session_set_lr (CamlSession *self, double lr);
void caml_session_set_em_steps (CamlSession *self, int em_steps);
void caml_session_set_weight_decay (CamlSession *self, double weight_decay);
void caml_session_set_batch_size (CamlSession *self, int batch_size);
/* Steps raised past where a finished or stopped run ended: it goes on
 * (paused) from there instead of starting afresh. */
void caml_session_set_steps (CamlSession *self, int steps);
void caml_session_set_eval_every (CamlSession *self, int eval_every);
void caml_session_set_seed (CamlSession *self, guint64 seed);
void caml_session_set_average_decay (CamlSession *self, double average_decay);
/* The built-in surface's train fraction (0 … 1, open) and noise on the
 * training targets (data.noise, 0 … CAML_MAX_NOISE): the data are made
 * again on a worker. Values out of range are clamped; other data ignore
 * them. */
void caml_session_set_train_fraction (CamlSession *self, double train_fraction);
void caml_session_set_noise (CamlSession *self, double noise);
/* The CA-NN layer whose parts are shown: this one when it is one. */
void caml_session_set_parts_layer (CamlSession *self, int preferred);

/* ---------------------------------------------------------------- data */

/* A data kind that reads no files to choose (not IDX or text files): it is
 * used once it loads. The data in use, or a set not fetched, drop a choice
 * still loading (and the latter says which command fetches it). */
void caml_session_use_data_kind (CamlSession *self, CamlDataKind kind);
/* Four IDX files in any order, or a training and a test text file. */
void caml_session_choose_files (CamlSession *self, CamlDataKind kind, const char *const *files,
                                int n_files);
/* Data chosen that still load are not used (why, when not NULL, is said). */
void caml_session_cancel_choice (CamlSession *self, const char *why);
void caml_session_reload_data (CamlSession *self);
/* What the data picker shows: the data chosen while they load, else those
 * in use. */
CamlDataKind caml_session_get_data_choice (CamlSession *self);
/* "66 training and 34 test samples, input (2), …", "Loading MNIST…", or an
 * error (*error_shown TRUE). */
const char  *caml_session_get_data_text (CamlSession *self, gboolean *error_shown);
/* What the model is checked against: the data's per-sample input shape
 * (NULL while there is none), the outputs they need, their title and why
 * there is none (NULL while they load). */
const CamlShape *caml_session_get_data_shape (CamlSession *self, int *want_outputs,
                                              const char **title, const char **error);
/* "test", or "validation" when the experiment holds part of the training
 * set out. */
const char  *caml_session_evaluated_on (CamlSession *self);

/* ----------------------------------------------------------------- run */

void     caml_session_train (CamlSession *self);
void     caml_session_step (CamlSession *self);
void     caml_session_pause (CamlSession *self);
void     caml_session_stop (CamlSession *self);
/* The run goes; a fresh one is built. */
void     caml_session_reset (CamlSession *self);
/* After a divergence: on from the last healthy evaluation at lr ÷ 10. */
void     caml_session_continue (CamlSession *self);
/* Compare with Baseline (the "compare" property), a setting: each run
 * started while it is on gets its matched baseline, trained alongside; on
 * beside a run that has ended, the baseline alone trains to its step.
 * It never starts the run. Off drops the baseline and its curves. */
void     caml_session_set_compare (CamlSession *self, gboolean compare);
gboolean caml_session_get_compare (CamlSession *self);
/* The step the user is looking at (the "marked-step" property: the σ-map
 * scrubber's snapshot), marked on every plot by step; -1: none, the
 * latest is shown. */
void     caml_session_set_marked_step (CamlSession *self, long step);
long     caml_session_get_marked_step (CamlSession *self);
/* How fast runs train (the "speed" property): steps a tick of the
 * session's clock (20 ticks a second), each shown before the next steps
 * are granted — every plot follows every step at 1 — or 0, full speed.
 * The trainer stays on its thread either way; changing the speed while a
 * run trains takes effect at once. */
#define CAML_SESSION_MAX_SPEED 1000
void     caml_session_set_speed (CamlSession *self, int steps_per_tick);
int      caml_session_get_speed (CamlSession *self);
/* Train until stopped (the "continuous" property): a run's steps are
 * raised ahead of it as it goes, so it trains until Stop, which keeps its
 * weights. */
void     caml_session_set_continuous (CamlSession *self, gboolean continuous);
gboolean caml_session_get_continuous (CamlSession *self);
/* Grants of steps the tick has made so far (tests count them). */
guint    caml_session_get_pace_ticks (CamlSession *self);
void     caml_session_forget_previous (CamlSession *self);
/* Loaded into a fresh run built on a worker thread, which replaces the run
 * only if the file loads. */
void     caml_session_load_weights (CamlSession *self, const char *path);
/* Written by worker threads; a notice says so, the banner why not. */
void     caml_session_save_weights (CamlSession *self, const char *path);
void     caml_session_save_run (CamlSession *self, const char *dir);
void     caml_session_save_set_aside (CamlSession *self, const char *path);
void     caml_session_drop_set_aside (CamlSession *self);
void     caml_session_export_words_page (CamlSession *self, const char *path);
gboolean caml_session_write_metrics (CamlSession *self, const char *path, GError **error);
/* The banner's message was dismissed: back to the set-aside weights' one,
 * if any. */
void     caml_session_clear_error (CamlSession *self);

/* The state shown: the run's once it has started, else idle. */
CamlTrainerState caml_session_get_state (CamlSession *self);
/* A job loads data, builds a run or its baseline, loads weights or samples
 * parts. */
gboolean caml_session_is_loading (CamlSession *self);
/* Train and Step do something now or once the run being built is there. */
gboolean caml_session_can_train (CamlSession *self);
/* The model's shapes fit the data's (or those shown while they load). */
gboolean caml_session_model_fits (CamlSession *self);
/* … and the data are there and the model did not fail to build. */
gboolean caml_session_model_builds (CamlSession *self);
/* Trains or is paused. */
gboolean caml_session_is_active (CamlSession *self);
gboolean caml_session_has_run (CamlSession *self);          /* started, not reset */
gboolean caml_session_baseline_active (CamlSession *self);
gboolean caml_session_baseline_ended (CamlSession *self);
CamlRun *caml_session_peek_run (CamlSession *self);
CamlRun *caml_session_peek_baseline (CamlSession *self);
/* Why Save Run cannot save the run (new), or NULL when it can. */
char    *caml_session_why_not_resumable (CamlSession *self);
gboolean caml_session_has_set_aside (CamlSession *self, long *step, const char **name);

/* The progress line: its fraction and text, and the status text (new
 * strings; FALSE: leave them as they are, a quick build is under way). */
gboolean caml_session_describe_progress (CamlSession *self, double *fraction,
                                         char **text, char **status);
/* A job is under way that is not quick (the status shows a spinner). */
gboolean caml_session_is_busy (CamlSession *self);

/* What Compare with Baseline and the σ-maps give to compare: the run's
 * and the baseline's test figure (accuracy or MSE) at the baseline's last
 * evaluation (NaN without one), and the run's last σ-map AUC (NaN without
 * σ-maps); FALSE when there is neither. */
gboolean     caml_session_get_comparison (CamlSession *self, double *model, double *baseline,
                                          double *sigma_auc);
/* The same in words, "baseline 0.5 (difference +0.25) · σ-AUC 0.9910",
 * or NULL (new). */
char        *caml_session_dup_comparison (CamlSession *self);

/* The main thread's copies of the run. */
const CamlProgress *caml_session_get_progress (CamlSession *self);
const float       *caml_session_get_losses (CamlSession *self, long *n_steps);
const CamlEvalRow *caml_session_get_rows (CamlSession *self, int *n_rows);
const float       *caml_session_get_baseline_losses (CamlSession *self, long *n_steps);
const CamlEvalRow *caml_session_get_baseline_rows (CamlSession *self, int *n_rows);
/* The previous run's curves (NULL: none): kept dashed until the data change. */
const float       *caml_session_get_previous_losses (CamlSession *self, long *n_steps,
                                                     const CamlEvalRow **rows, int *n_rows,
                                                     gboolean *classification);
const CamlSessionEvent *caml_session_get_events (CamlSession *self, guint *n);
/* (grid × grid) each, grid CAML_FIGURE_GRID; NULL without a surface. The
 * CA-NN parts: the outputs with the parts layer's χ held at 0 (its
 * context-sensitive part) and at 1 (its context-free part). */
const float *caml_session_get_surface (CamlSession *self, const float **chi,
                                       const float **sensitive_part, const float **free_part);
int          caml_session_get_parts_layer (CamlSession *self);   /* -1: none */
gboolean     caml_session_has_parts (CamlSession *self);
int          caml_session_get_sigma_count (CamlSession *self);
/* The run's layer table with the χ statistics of its gated layers
 * (caml_run_copy_layer_stats); NULL without a run. */
const CamlLayerStats *caml_session_get_layer_stats (CamlSession *self);
/* Word gates: χ̃ (vocabulary), P(class 1) per word sample, and per-position
 * χ (word samples × CAML_RUN_WORDS_SHOWN) or NULL; NULL before a sample. */
const float *caml_session_get_words (CamlSession *self, const float **probabilities,
                                     const float **token_chi);
/* ---------------------------------------------------------- runs kept */

/* Every run that ended (finished, stopped, diverged, or dropped after it
 * trained) — and each matched baseline, as a record of its own beside its
 * run's, named alike ("Run 2", "Run 2 (baseline)") — oldest first, until
 * deleted. A run that goes on and ends again updates its record. No
 * weights are kept (the set-aside weights are the replaced run's only). */
GListModel *caml_session_get_runs (CamlSession *self);
void        caml_session_delete_run (CamlSession *self, CamlRunRecord *record);
void        caml_session_delete_all_runs (CamlSession *self);
/* The table as CSV text (new): a header and a row per record. */
char       *caml_session_dup_runs_csv (CamlSession *self);
/* Written atomically on a worker thread; a notice says so, the banner why
 * not. */
void        caml_session_export_runs (CamlSession *self, const char *path);

/* ---------------------------------------------------------------- sweeps */

/* Starts a sweep of plan (taken) on the session's data: its runs train one
 * after another on a thread of their own — the session's run is not
 * touched — each written under out_dir as `caml sweep` writes it, and each
 * kept in the runs list as it ends, named after its point. One sweep at a
 * time. FALSE with an error (plan taken all the same) when the plan does
 * not check (caml_session_check_sweep), the data are still loading, or a
 * sweep is under way. The "sweep" property changes. */
gboolean    caml_session_start_sweep (CamlSession *self, CamlSweepPlan *plan,
                                      const char *out_dir, GError **error);
/* The plan checks (caml_sweep_plan_check) and each point's model fits the
 * data's shapes (when they are there): else an error naming the point. */
gboolean    caml_session_check_sweep (CamlSession *self, const CamlSweepPlan *plan,
                                      GError **error);
/* The run under way stops (kept) and the rest are skipped. */
void        caml_session_cancel_sweep (CamlSession *self);
/* The last sweep started (the "sweep" property), or NULL. */
CamlSweep  *caml_session_get_sweep (CamlSession *self);
/* A sweep is under way. */
gboolean    caml_session_is_sweeping (CamlSession *self);
/* Where a new sweep of the experiment goes by default (new):
 * $XDG_DATA_HOME/caml-workbench/sweeps/NAME-YYYYMMDD-HHMMSS. */
char       *caml_session_dup_sweep_dir (CamlSession *self);

/* The step Continue goes on from (-1: no run). */
long         caml_session_get_resume_step (CamlSession *self);

G_END_DECLS
