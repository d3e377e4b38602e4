/* caml-run.h — one training run of the workbench: the experiment it was
 * started from, its data, model and trainer, and the snapshot of the fitted
 * surface and χ maps that the trainer thread writes for the window.
 *
 * Plain C on the engine and GLib: no GTK, so tests can drive it headless. */
#pragma once

#include "caml.h"
#include "report.h"
#include "layer-stats.h"

G_BEGIN_DECLS

/* The data sets of an experiment, shared (reference counted) between the
 * window's shape checks and the runs. */
typedef struct {
  CamlDataset *train;
  CamlDataset *test;
} CamlRunData;

/* Loads or makes exp's data sets: seconds for files, up to 93 ms for the
 * largest built-in surface. The workbench calls it on worker threads only. */
CamlRunData *caml_run_data_load (const CamlExperiment *exp, GError **error);
/* How many times caml_run_data_load was called on the calling thread (tests:
 * none on the workbench's main thread). */
guint        caml_run_data_get_loads_here (void);
/* How many times caml_run_data_load was called on any thread (tests: data
 * chosen are read once). */
guint        caml_run_data_get_loads (void);
CamlRunData *caml_run_data_ref (CamlRunData *data);
void         caml_run_data_unref (CamlRunData *data);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CamlRunData, caml_run_data_unref)

typedef struct _CamlRun CamlRun;

/* Called on the trainer thread after each progress report (the snapshot may
 * have changed). It must only hand the news to the main loop. */
typedef void (*CamlRunNotify) (gpointer user_data);

/* Copies exp, references data, builds the model (initialised from exp's
 * seed) and a trainer that has not started. For 2-D → 1-D regression it
 * samples the untrained surface at once, with the parts of the CA-NN layer
 * parts_preferred (see caml_run_set_parts_layer). Takes seconds for a big
 * model: call it on a worker thread. */
CamlRun *caml_run_new (const CamlExperiment *exp, CamlRunData *data, int grid,
                       int parts_preferred, CamlRunNotify notify, gpointer notify_data,
                       GError **error);
/* The same for a run whose weights come next from a file
 * (caml_run_load_weights), which replaces every one of them: the model's
 * pretrained embedding tables are not filled from data.embeddings (seconds
 * of reading, and the file may be gone). If the load fails, build the run
 * again with caml_run_new. */
CamlRun *caml_run_new_for_weights (const CamlExperiment *exp, CamlRunData *data, int grid,
                                   int parts_preferred, CamlRunNotify notify,
                                   gpointer notify_data, GError **error);
/* Stops and joins the trainer thread, then frees everything. */
void     caml_run_free (CamlRun *run);

CamlTrainer          *caml_run_get_trainer (CamlRun *run);
const CamlExperiment *caml_run_get_experiment (CamlRun *run);
/* The experiment's name (Save As named it after its new file). Main thread;
 * the trainer reads no name. */
void                  caml_run_set_name (CamlRun *run, const char *name);
const CamlDataset    *caml_run_get_train (CamlRun *run);
CamlRunData          *caml_run_get_data (CamlRun *run);   /* borrowed */
/* A copy of the weights as an evaluation sees them now (the average when
 * the run keeps one), caml_run_get_n_weights of them; g_free it. Taken
 * between two steps: the caller waits for the trainer thread. */
float                *caml_run_copy_weights (CamlRun *run);
size_t                caml_run_get_n_weights (CamlRun *run);
/* The words of the training vocabulary whose pre-trained vector the
 * model's pretrained embedding tables started from (model->n_word_vectors;
 * 0: none, and 0 after caml_run_load_weights: the file's rows replaced
 * them), and the vocabulary's size in *n_words (may be NULL). */
int                   caml_run_get_word_vectors (CamlRun *run, int *n_words);

/* Surface snapshot (2-D → 1-D regression only). */
gboolean caml_run_has_surface (CamlRun *run);
int      caml_run_get_grid (CamlRun *run);
int      caml_run_get_n_chi (CamlRun *run);
/* Layer index and title of the k-th χ map. */
int      caml_run_get_chi_layer (CamlRun *run, int k, const char **title);
/* If the snapshot is newer than *version: copies fit (grid, grid), chi
 * (n_chi, grid, grid) and, when the snapshot has them, the CA-NN parts
 * (grid, grid): sensitive_part, the output with the parts layer's χ held at
 * 0 (it emits w₀: the context-sensitive part), and free_part, held at 1 (it
 * emits v(c): the context-free part, Eq. 37) — and sets *parts_layer to
 * their layer (-1: none); updates *version and returns TRUE. Any of chi …
 * parts_layer may be NULL. */
/* The step of the weights the surface caml_run_copy_surface copied last
 * was sampled from (the main thread's). */
long     caml_run_get_surface_step (CamlRun *run);
gboolean caml_run_copy_surface (CamlRun *run, guint64 *version, float *fit, float *chi,
                                float *sensitive_part, float *free_part, int *parts_layer);
/* Chooses the CA-NN layer whose parts are sampled: `preferred` when it is
 * one, else the last CA-NN (caml_report_parts_layer). Returns the layer, or
 * -1 (no CA-NN, or not a surface run). Nothing is sampled here: a running
 * trainer samples the new layer's parts at its next report; otherwise the
 * caller samples them off the main thread (on a model of its own, from
 * caml_run_copy_weights) and hands them over with caml_run_put_parts. */
int      caml_run_set_parts_layer (CamlRun *run, int preferred);
int      caml_run_get_parts_layer (CamlRun *run);
/* The parts of the layer chosen are not the ones sampled yet. */
gboolean caml_run_parts_pending (CamlRun *run);
/* Takes (copies) parts sampled elsewhere, (grid × grid) each, when they are
 * of the layer chosen and that is still pending; FALSE when not taken. */
gboolean caml_run_put_parts (CamlRun *run, int layer, const float *sensitive_part,
                             const float *free_part);
/* σ-map snapshots (image models with a convolutional CA layer only):
 * sampled at most twice a second on the trainer thread (once while training
 * takes every core), each with its step and the foreground/background AUC over the first 100 test images; at most
 * 200 kept (every other one is dropped when full). */
gboolean caml_run_has_sigma (CamlRun *run);
/* Whose σ-maps they are (layer, type, sublayer), or NULL without them. */
const CamlSigmaSource *caml_run_get_sigma_source (CamlRun *run);
/* Number of snapshots kept; *version changes whenever they change. */
int      caml_run_get_sigma_count (CamlRun *run, guint64 *version);
/* A copy of snapshot index (0 = oldest), or NULL. */
CamlSigmaSnapshot *caml_run_copy_sigma (CamlRun *run, int index);
/* Steps and AUCs of every snapshot (new arrays, g_free them); returns the count. */
int      caml_run_copy_sigma_auc (CamlRun *run, double **steps, double **auc);

/* Word gates (text data and a layer with CamlLayerOps.word_chi, e.g.
 * CA-BSFE, or a per-position gate, caml_report_token_gate_layer: CA-ATT,
 * CA-RNN): χ̃ of every vocabulary word, or the per-position χ at every word
 * of the word samples and each word's mean χ over the first 500 test texts,
 * sampled at most twice a second on the trainer thread. The layer, or -1
 * when the run has none. */
int      caml_run_get_words_layer (CamlRun *run);
gboolean caml_run_words_per_position (CamlRun *run);
/* The words' layer as the words figure names it, "layer 1 (CA-BSFE)", and
 * for a per-position gate the texts its means are over, "the first 500 test
 * texts" (NULL for a per-word gate); new strings. */
char    *caml_run_describe_words (CamlRun *run, char **texts_read);
/* If the sample is newer than *version: copies χ̃ — for a per-position gate
 * the mean χ, NaN for words not in those texts — (caml_vocab_size of the
 * training vocabulary), its step (may be NULL), the model's P(class 1) for
 * each word sample (may be NULL; NaN when the model has no such output) and,
 * for a per-position gate, the χ of each word shown (may be NULL; (word
 * samples, CAML_RUN_WORDS_SHOWN), NaN past the model's steps), updates
 * *version and returns TRUE. */
gboolean caml_run_copy_words (CamlRun *run, guint64 *version, float *chi, long *step,
                              float *probabilities, float *token_chi);

/* A test text as the words page shows it: its first tokens (as the data
 * set's tokenizer splits it) with their ids in the training vocabulary. */
typedef struct {
  char **words;      /* (n_words), NULL-terminated */
  int   *ids;        /* (n_words) −1: unseen in training (χ̃ = 1) */
  gboolean *read;    /* (n_words) the model reads the word: FALSE past the
                      * data's max_tokens (caml_words_read_next) */
  int    n_words;
  int    more;       /* tokens left out */
  int    label;      /* class index, or −1 */
  gboolean aligned;  /* the data set's ids are these words in order
                      * (caml_report_text_aligned) */
} CamlWordSample;

/* Words shown of each word sample, at most. */
#define CAML_RUN_WORDS_SHOWN 150

/* The first test texts (a dozen at most) when the run has a word gate;
 * fixed for the run's life. */
const CamlWordSample *caml_run_get_word_samples (CamlRun *run, int *n);

/* The model's weights file (caml_weights_save), written between two steps. */
gboolean caml_run_save_weights (CamlRun *run, const char *path, GError **error);
/* Before the run starts: replaces the initial weights with a file's (the
 * model must match it) and samples the surface again. */
gboolean caml_run_load_weights (CamlRun *run, const char *path, GError **error);
/* Exact continuation across the workbench and `caml train --resume`.
 * caml_run_load_state: before the run starts, after caml_run_load_weights
 * with the weights the state was saved with — the run then stands at the
 * saved step with its losses, rows and optimizer state, and Train goes on
 * as one run of the total would (caml_trainer_state_load). A failed load
 * changes nothing. */
gboolean caml_run_load_state (CamlRun *run, const char *path, GError **error);
/* The files `caml train --resume DIR` reads — experiment.json (the run's
 * experiment at the learning rate and em_steps it has now, its steps the
 * run's total), model.weights and trainer.state. Of a run that finished,
 * was stopped or diverged (then at the step it rolled back to) — one
 * continued after a divergence too.
 * caml_run_take_resumable copies what they are made of (the weights, the
 * optimizer's state, losses and rows: memcpy only, no checksum) while the
 * run cannot be extended meanwhile — the workbench's main thread;
 * caml_run_resumable_write makes the files from the copy and writes them
 * into dir, made when missing, from any thread, while the run goes on or
 * goes. A directory that holds anything else (another run's summary.json,
 * say) is refused before anything is written, so that no stale result sits
 * beside the saved run. */
typedef struct _CamlRunResumable CamlRunResumable;
CamlRunResumable *caml_run_take_resumable (CamlRun *run, GError **error);
gboolean          caml_run_resumable_write (const CamlRunResumable *saved, const char *dir,
                                            GError **error);
/* The step the run was saved at. */
long              caml_run_resumable_get_step (const CamlRunResumable *saved);
void              caml_run_resumable_free (CamlRunResumable *saved);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CamlRunResumable, caml_run_resumable_free)
/* Both in one (tests, and callers on one thread). */
gboolean          caml_run_save_resumable (CamlRun *run, const char *dir, GError **error);
/* Why caml_run_take_resumable would refuse the run now (a new string), or
 * NULL when it can be saved. */
char             *caml_run_why_not_resumable (CamlRun *run);
/* The names written, NULL-terminated. */
extern const char *const caml_run_resumable_files[];

/* The layer table with the χ statistics of every gated layer over the
 * first CAML_STATS_MAX test samples (layer-stats.h): measured when the run
 * is made or loads weights, then on the trainer thread at most twice a
 * second. A copy when newer than *version (updated), else NULL. */
CamlLayerStats *caml_run_copy_layer_stats (CamlRun *run, guint64 *version);

/* Seconds the trainer thread spent sampling surfaces or σ-maps so far. */
double   caml_run_get_sample_seconds (CamlRun *run);

/* Live optimizer changes, passed to the trainer and remembered (a baseline
 * started later, or a continued run, starts from them). */
void     caml_run_set_lr (CamlRun *run, double lr);
void     caml_run_set_em_steps (CamlRun *run, int em_steps);
double   caml_run_get_lr (CamlRun *run);
int      caml_run_get_em_steps (CamlRun *run);

/* The current trainer's progress and history: after a continuation, from
 * the checkpoint's state on, so still counted from the run's start. */
void         caml_run_get_progress (CamlRun *run, CamlProgress *progress);
float       *caml_run_copy_losses (CamlRun *run, long *n_steps);
CamlEvalRow *caml_run_copy_rows (CamlRun *run, int *n_rows);
/* The current trainer's error (a copy, or NULL). */
GError      *caml_run_get_error (CamlRun *run);
/* After a divergence: caml_trainer_get_divergence's. FALSE when the run
 * has not diverged. */
gboolean     caml_run_get_divergence (CamlRun *run, CamlDivergence *divergence);

/* The run keeps its state at its last healthy evaluation — one whose loss
 * (test, else train) was finite and at most twice the lowest so far; a
 * copy of the weights, the optimizer's state and the history — or the
 * state it was loaded with (caml_run_load_state), or else its initial
 * weights: the step it belongs to — the step Continue goes on from, which
 * after a divergence that rolled back to the checkpoint or before it is
 * that step. */
long     caml_run_get_checkpoint_step (CamlRun *run);
/* Before the run starts: whether it keeps those copies (TRUE); a run that
 * will never be continued — a baseline — spares their time and memory. */
void     caml_run_set_keep_checkpoints (CamlRun *run, gboolean keep);
/* After a divergence (the trainer FAILED): goes back to the checkpoint,
 * drops the history after it, and trains the steps left with a new trainer
 * at learning rate lr, put in the checkpoint's state
 * (caml_trainer_state_restore): the optimizer's moments or sums, the
 * em_steps phase and the batch order go on from there, so that the run is
 * the one stopped at the checkpoint and resumed at rate lr — and stays one
 * that can be saved and resumed. (Not from the step the engine rolled back
 * to: the updates just before a divergence are often already off course.
 * When the divergence rolled back to the checkpoint or before it — the
 * loss of the step right after the checkpoint failed, which no rate
 * changes — the trainer goes on from the step it rolled back to, and that
 * step's state becomes the checkpoint.) A failed restore leaves the failed
 * run as it was. */
gboolean caml_run_continue (CamlRun *run, double lr, GError **error);
/* More steps for a run that finished or was stopped: `steps` in all, more
 * than it has done. It goes on where it ended, paused (resume it), with
 * its optimizer's state, batch order, history and samples
 * (caml_trainer_extend); the run's experiment says `steps`. A run under
 * way or paused simply ends later; one that diverged is refused. */
gboolean caml_run_extend (CamlRun *run, int steps, GError **error);

G_END_DECLS
