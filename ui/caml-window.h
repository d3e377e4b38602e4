/* caml-window.h — the workbench window: header bar with the training
 * actions, the model builder, data and optimizer settings, live plots. */
#pragma once

#include <gtk/gtk.h>

#include "caml.h"
#include "caml-plot-view.h"

G_BEGIN_DECLS

#define CAML_TYPE_WINDOW (caml_window_get_type ())
G_DECLARE_FINAL_TYPE (CamlWindow, caml_window, CAML, WINDOW, GtkApplicationWindow)

CamlWindow *caml_window_new (GtkApplication *app);

/* Shows exp (taking ownership), discarding any run. path: the file it came
 * from, or NULL; origin: what the subtitle says when there is no path. */
void  caml_window_set_experiment (CamlWindow *self, CamlExperiment *exp, const char *path,
                                  const char *origin);
/* Loads an experiment file; on failure the window is unchanged and the
 * error carries the engine's message. */
gboolean caml_window_load_file (CamlWindow *self, const char *path, GError **error);
gboolean caml_window_save_to_path (CamlWindow *self, const char *path, GError **error);
/* Open Run: a saved run's folder — what `caml train` writes (experiment.json,
 * model.weights, trainer.state and its other results) or Save Run does.
 * caml_window_read_run reads the experiment and checks that the weights
 * are there (an error names the folder and what is missing);
 * caml_window_set_run shows exp (taking ownership) and builds the run with
 * those weights and, when the folder has one, the trainer.state, on a
 * worker thread: it then stands at the saved step with its curves, and
 * Train goes on exactly as one run of the total would. Open does both. */
/* The start page (CamlStartView) over the editor, or the editor; an
 * experiment or run set in the window leaves the start page. */
void     caml_window_show_start (CamlWindow *self, gboolean show);
gboolean caml_window_is_start_shown (CamlWindow *self);
CamlExperiment *caml_window_read_run (const char *dir, GError **error);
void     caml_window_set_run (CamlWindow *self, CamlExperiment *exp, const char *dir);
gboolean caml_window_open_run (CamlWindow *self, const char *dir, GError **error);
/* Save Run: what `caml train --resume DIR` goes on with (caml_run_take_resumable),
 * taken now and written into dir on a worker thread; only a run that
 * finished or was stopped (errors are shown in the window). */
void     caml_window_save_run (CamlWindow *self, const char *dir);
/* Load Weights: a fresh run built with the weights of path on a worker
 * thread (errors are shown in the window; the run then keeps its initial
 * weights). */
void     caml_window_load_weights (CamlWindow *self, const char *path);
/* Save Weights, Export Words Page: the run's weights as an evaluation sees
 * them now, written — or the words page (words.html) drawn from them — on a
 * worker thread (caml_window_get_jobs_in_flight counts it; errors are shown
 * in the window). */
void     caml_window_save_weights (CamlWindow *self, const char *path);
/* A trained run that a new run replaced (an edit, Train after it ended,
 * another preset) leaves its weights set aside, with a banner, until they
 * are saved, dismissed or replaced by another's: whether there are (and
 * the step they were trained to). */
gboolean caml_window_has_set_aside_weights (CamlWindow *self, long *step);
void     caml_window_export_words_page (CamlWindow *self, const char *path);
/* Uses four IDX files (any order: caml_data_source_order_idx tells them
 * apart), or two labelled text files (text<TAB>label: the training and the
 * test set), as the data, loaded on a worker thread from a copy of the
 * experiment. Only when they load does anything change (the experiment,
 * the data, the run); otherwise the banner shows the engine's message and
 * nothing changes. A choice made while another loads replaces it. What the
 * IDX and the text file choosers call. */
void     caml_window_use_idx_files (CamlWindow *self, const char *const *paths, int n_paths);
void     caml_window_use_text_files (CamlWindow *self, const char *train, const char *test);
/* Data being loaded, or a run being built, on a worker thread. */
gboolean caml_window_is_loading (CamlWindow *self);
/* The latest notice of the status line, also after it has gone (NULL: none yet). */
const char *caml_window_get_last_notice (CamlWindow *self);
/* Jobs under way on worker threads, in every window (a window closed while
 * loading leaves its job to finish and drop its results). */
int      caml_window_get_jobs_in_flight (void);
/* What the Data section says about the data (loading, sizes, or an error). */
const char *caml_window_get_data_text (CamlWindow *self);
/* The one rule of what opens where (New, Open, Open Recent, a preset):
 * an experiment replaces the window's when it has no unsaved changes, no
 * run under way and no set-aside weights; otherwise it opens in a new
 * window. NULL when it may be replaced, else why not (a new string, as
 * the notice says it: "“xor-ca-nn” has unsaved changes"). */
char    *caml_window_why_kept (CamlWindow *self);
/* Edited since it was opened or saved. */
gboolean caml_window_is_modified (CamlWindow *self);

void        caml_window_show_error (CamlWindow *self, const char *message);
/* A notice in the status line (warning: drawn as one), for a few seconds. */
void        caml_window_show_notice (CamlWindow *self, const char *message, gboolean warning);
/* The banner offers leftover autosaves: message, a Recover button
 * (app.recover-autosaves) when can_recover, and Discard
 * (app.discard-autosaves). */
void        caml_window_show_recovery (CamlWindow *self, const char *message,
                                       gboolean can_recover);

/* Crash recovery (caml-autosave.h): a window with unsaved changes writes
 * its experiment to its autosave file a second after a change. Writes it
 * now; the file's path once written (free with g_free), or NULL. */
gboolean    caml_window_autosave_now (CamlWindow *self, GError **error);
char       *caml_window_get_autosave_path (CamlWindow *self);
/* exp came from a crashed session: modified, titled "(recovered)". */
void        caml_window_mark_recovered (CamlWindow *self);
gboolean    caml_window_is_recovered (CamlWindow *self);
/* The message shown in the banner, or NULL. */
const char *caml_window_get_error (CamlWindow *self);

/* The experiment, its data and runs that the window shows. */
struct _CamlSession  *caml_window_get_session (CamlWindow *self);
/* For tests and scripts: the state the window shows. */
const CamlExperiment *caml_window_get_experiment (CamlWindow *self);
CamlTrainerState      caml_window_get_state (CamlWindow *self);
/* TRUE once a run was started and has not been reset. */
gboolean              caml_window_has_run (CamlWindow *self);
const float          *caml_window_get_losses (CamlWindow *self, long *n_steps);
const CamlEvalRow    *caml_window_get_rows (CamlWindow *self, int *n_rows);
/* Learning-rate / em_steps changes marked on the loss curve this run. */
guint                 caml_window_get_n_events (CamlWindow *self);
/* The CA-NN layer whose parts the "parts" view shows, or -1. */
int                   caml_window_get_parts_layer (CamlWindow *self);
/* "loss", "surface", "chi", "parts", "words", "accuracy", "sigma" or "sigma-auc". */
CamlPlotView         *caml_window_get_plot_view (CamlWindow *self, const char *name);
/* Export Plot: writes that plot's figure to path (.png or .svg) as caml
 * train draws it — the loss of every step with its accuracy, the surface
 * beside its ground truth — or the accuracy card alone. */
gboolean              caml_window_export_plot (CamlWindow *self, const char *name,
                                               const char *path, GError **error);
/* The words page's test texts, each word tagged "g<shade>" by its χ̃
 * (caml_words_shade), an unseen word also "oov". */
GtkTextView          *caml_window_get_words_text (CamlWindow *self);
/* σ-map snapshots the grid and scrubber span, and the scrubber's upper end. */
int                   caml_window_get_sigma_snapshots (CamlWindow *self, double *scrub_upper);
/* The step scrubber under the σ-map grid (value: snapshot index). */
GtkRange             *caml_window_get_sigma_scrubber (CamlWindow *self);
/* The matched baseline's per-step losses (Compare with baseline), or NULL. */
const float          *caml_window_get_baseline_losses (CamlWindow *self, long *n_steps);
/* The step a run that diverged continues from (win.continue-diverged), or
 * -1 without a run. */
long                  caml_window_get_resume_step (CamlWindow *self);
/* The learning rate and em_steps the baseline trains with now; FALSE when
 * there is no baseline. */
gboolean              caml_window_get_baseline_optimizer (CamlWindow *self, double *lr,
                                                          int *em_steps);
/* A baseline is being compared and its trainer has ended. */
gboolean              caml_window_baseline_ended (CamlWindow *self);
/* The current run and its baseline, or NULL (for tests: read them, do not
 * keep them). */
struct _CamlRun      *caml_window_peek_run (CamlWindow *self);
struct _CamlRun      *caml_window_peek_baseline (CamlWindow *self);
/* Throughput of the last run: steps per second of training time, and the
 * seconds the trainer thread spent sampling surfaces or σ-maps for the plots. */
void                  caml_window_get_run_timing (CamlWindow *self, double *steps_per_second,
                                                  double *sample_seconds);

G_END_DECLS
