/* caml-session-run.c — the session's run: building it (through jobs,
 * caml-session-jobs.c), copying what its trainer thread reports, training,
 * pausing, extending and continuing it, its baseline, the previous run's
 * curves and the weights of a replaced run set aside. */
#include <math.h>
#include <string.h>

#include "caml-session-private.h"
#include "caml-data-source.h"
#include "caml-format.h"
#include "figures.h"
#include "report.h"

/* ----------------------------------------------------------------- run */

static void
clear_history (CamlSession *self)
{
  g_clear_pointer (&self->rows, g_free);
  g_clear_pointer (&self->losses, g_free);
  g_clear_pointer (&self->base_losses, g_free);
  g_clear_pointer (&self->base_rows, g_free);
  self->base_n_steps = 0;
  self->base_n_rows = 0;
  self->n_rows = 0;
  self->n_steps = 0;
  if (self->events != NULL)      /* NULL after dispose */
    g_array_set_size (self->events, 0);
  memset (&self->progress, 0, sizeof self->progress);
  self->progress.state = CAML_TRAINER_IDLE;
  self->failure_shown = FALSE;
}

/* The weights file the next installed run is to have (NULL: none). Jobs
 * take a copy with the serial; only a job with the current serial uses the
 * request up. */
void
set_pending_load (CamlSession *self, const char *path, const char *state)
{
  g_free (self->pending_weights);
  self->pending_weights = g_strdup (path);
  g_free (self->pending_state);
  self->pending_state = path != NULL ? g_strdup (state) : NULL;
  self->weights_serial++;
  self->weights_loading = FALSE;   /* a JOB_WEIGHTS under way is stale now */
}

void
set_aside_free (SetAside *s)
{
  if (s == NULL)
    return;
  caml_experiment_free (s->exp);
  caml_run_data_unref (s->data);
  g_free (s->w);
  g_free (s);
}

/* Before a run that trained is dropped: its weights are set aside unless
 * they were saved at the step they are at — here, or they are those of an
 * opened run that has not trained here (on disk with its state). */
static void
set_aside_run (CamlSession *self)
{
  CamlProgress p;
  caml_run_get_progress (self->run, &p);
  if (p.step <= 0 || (self->saved_serial == self->run_serial && self->saved_step == p.step)
      || (!self->run_started && self->loaded_state != NULL))
    return;
  float *w = caml_run_copy_weights (self->run);
  if (w == NULL)
    return;
  set_aside_free (self->set_aside);
  self->set_aside = g_new0 (SetAside, 1);
  self->set_aside->exp = caml_experiment_copy (caml_run_get_experiment (self->run));
  self->set_aside->data = caml_run_data_ref (caml_run_get_data (self->run));
  self->set_aside->w = w;
  self->set_aside->n_weights = caml_run_get_n_weights (self->run);
  self->set_aside->step = p.step;
  self->set_aside->serial = ++self->set_aside_serial;
  show_set_aside (self);
}

void
discard_run (CamlSession *self)
{
  pace_stop (self);
  if (self->run != NULL && self->cancellable != NULL)   /* not when the session closes */
    {
      set_aside_run (self);
      /* A run dropped while it trained is kept as stopped where it was. */
      runs_record_run (self);
      runs_record_baseline (self);
    }
  runs_forget_current (self, FALSE);
  /* An opened run rebuilt on its own state (an edit before Train) comes
   * back with the same curves: they are not another run to compare with. */
  gboolean reloading = !self->run_started && self->pending_state != NULL
                       && g_strcmp0 (self->pending_state, self->loaded_state) == 0;
  if (self->n_steps > 0 && self->run != NULL && !reloading)
    {
      /* A run that trained: its curves stay for comparison with the next. */
      forget_previous (self);
      self->prev_losses = g_steal_pointer (&self->losses);
      self->prev_n_steps = self->n_steps;
      self->prev_rows = g_steal_pointer (&self->rows);
      self->prev_n_rows = self->n_rows;
      self->prev_classification = self->progress.classification;
      self->prev_exp = caml_experiment_copy (caml_run_get_experiment (self->run));
    }
  g_clear_pointer (&self->baseline, caml_run_free);
  g_clear_pointer (&self->run, caml_run_free);   /* stops and joins the thread */
  self->run_started = FALSE;
  self->run_building = FALSE;   /* a run being built is dropped when it arrives */
  self->baseline_building = FALSE;   /* … and so is its baseline */
  g_clear_pointer (&self->build_error, g_free);   /* the next model may build */
  g_clear_handle_id (&self->build_source, g_source_remove);
  self->weights_loading = FALSE;   /* … and one built beside it */
  g_clear_pointer (&self->loaded_weights, g_free);   /* experiment_changed reads it first */
  g_clear_pointer (&self->loaded_state, g_free);
  self->run_serial++;
  self->sigma_version = 0;
  self->n_sigma = 0;
  self->surface_version = 0;
  g_clear_pointer (&self->fit, g_free);
  g_clear_pointer (&self->chi, g_free);
  g_clear_pointer (&self->sensitive_part, g_free);
  g_clear_pointer (&self->free_part, g_free);
  self->parts_layer = -1;
  self->has_parts = FALSE;
  self->words_version = 0;
  g_clear_pointer (&self->word_chi, g_free);
  g_clear_pointer (&self->word_probs, g_free);
  g_clear_pointer (&self->token_chi, g_free);
  self->layers_version = 0;
  g_clear_pointer (&self->layer_stats, caml_layer_stats_free);
  clear_history (self);
  /* No texts, P(1), bars or layer table of a run that is gone. */
  if (self->cancellable != NULL)
    session_progress (self, CAML_SESSION_WORDS | CAML_SESSION_LAYERS);
}

/* Trainer thread: hand the news to the main loop, at most one source at a
 * time, holding a reference on the session. */
static gboolean on_update (gpointer data);

void
session_on_run_notify (gpointer user_data)
{
  CamlSession *self = user_data;

  if (g_atomic_int_compare_and_exchange (&self->update_pending, 0, 1))
    g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, on_update, g_object_ref (self), g_object_unref);
}

/* The run diverged: the banner says where (the engine's message names the
 * step, and the layer when a gradient or weight overflowed) and offers to
 * go on from the last evaluation at a tenth of the learning rate. */
static void
show_divergence (CamlSession *self)
{
  g_autoptr (GError) error = caml_run_get_error (self->run);
  long from = caml_run_get_checkpoint_step (self->run);
  CamlDivergence d;
  gboolean further = caml_run_get_divergence (self->run, &d) && d.rolled_back_to != from;
  /* Two steps can be named: where the weights are (the last finite ones)
   * and where Continue goes on from (the last evaluation in bounds). */
  g_autofree char *text =
    further
    ? g_strdup_printf ("Training diverged: %s. Continue goes back further, to step %ld — the "
                       "last evaluation whose loss was in bounds — with the learning rate ÷ 10; "
                       "or change the model or the optimizer and Train again.",
                       error != NULL ? error->message : "unknown error", from)
    : g_strdup_printf ("Training diverged: %s. Continue from there with the learning rate ÷ 10, "
                       "or change the model or the optimizer and Train again.",
                       error != NULL ? error->message : "unknown error");
  session_banner (self, CAML_SESSION_BANNER_DIVERGED, text);
}

/* Main thread: copy the snapshot and say what changed. */
void
update_from_run (CamlSession *self)
{
  CamlProgress p;
  CamlTrainerState old_state = self->progress.state;
  CamlSessionChange changed = 0;

  if (self->run == NULL)
    return;
  pace_keep_ahead (self);   /* until stopped: the end stays ahead */
  caml_run_get_progress (self->run, &p);
  if (!self->run_started)
    p.state = CAML_TRAINER_IDLE;
  p.state = pace_shown_state (self, p.state);

  if (p.step != self->n_steps || p.n_rows != self->n_rows || self->losses == NULL)
    {
      g_free (self->rows);
      g_free (self->losses);
      self->rows = caml_run_copy_rows (self->run, &self->n_rows);
      self->losses = caml_run_copy_losses (self->run, &self->n_steps);
      changed |= CAML_SESSION_CURVES;
    }
  self->progress = p;

  if (self->baseline != NULL)
    {
      CamlProgress bp;
      caml_run_get_progress (self->baseline, &bp);
      if (bp.step != self->base_n_steps || bp.n_rows != self->base_n_rows)
        {
          g_free (self->base_rows);
          g_free (self->base_losses);
          self->base_rows = caml_run_copy_rows (self->baseline, &self->base_n_rows);
          self->base_losses = caml_run_copy_losses (self->baseline, &self->base_n_steps);
          changed |= CAML_SESSION_CURVES;
        }
      gboolean base_ended = bp.state == CAML_TRAINER_FINISHED
                            || bp.state == CAML_TRAINER_STOPPED || bp.state == CAML_TRAINER_FAILED;
      gboolean base_ends = base_ended && self->base_state != bp.state;
      if (bp.state == CAML_TRAINER_FAILED && self->base_state != CAML_TRAINER_FAILED)
        {
          g_autoptr (GError) error = caml_run_get_error (self->baseline);
          g_autofree char *text = g_strdup_printf ("The baseline diverged: %s",
                                                   error != NULL ? error->message : "?");
          session_error (self, text);
        }
      self->base_state = bp.state;
      if (base_ends)
        runs_record_baseline (self);   /* a baseline that ended is kept */
    }

  if (caml_run_has_sigma (self->run))
    {
      guint64 version;
      int n = caml_run_get_sigma_count (self->run, &version);
      if (version != self->sigma_version)
        {
          self->sigma_version = version;
          self->n_sigma = n;
          changed |= CAML_SESSION_SIGMA;
        }
    }

  if (caml_run_get_words_layer (self->run) >= 0)
    {
      if (self->word_chi == NULL)
        self->word_chi = g_new0 (float, MAX (caml_vocab_size (caml_run_get_train (self->run)->vocab),
                                             1));
      int n_samples = 0;
      caml_run_get_word_samples (self->run, &n_samples);
      if (self->word_probs == NULL)
        self->word_probs = g_new (float, MAX (n_samples, 1));
      if (self->token_chi == NULL && caml_run_words_per_position (self->run))
        self->token_chi = g_new (float, (size_t) MAX (n_samples, 1) * CAML_RUN_WORDS_SHOWN);
      if (caml_run_copy_words (self->run, &self->words_version, self->word_chi, NULL,
                               self->word_probs, self->token_chi))
        changed |= CAML_SESSION_WORDS;
    }

  CamlLayerStats *stats = caml_run_copy_layer_stats (self->run, &self->layers_version);
  if (stats != NULL)
    {
      caml_layer_stats_free (self->layer_stats);
      self->layer_stats = stats;
      changed |= CAML_SESSION_LAYERS;
    }

  if (caml_run_has_surface (self->run))
    {
      size_t cells = (size_t) CAML_FIGURE_GRID * CAML_FIGURE_GRID;
      if (self->fit == NULL)
        {
          self->fit = g_new0 (float, cells);
          self->chi = g_new0 (float, MAX (caml_run_get_n_chi (self->run), 1) * cells);
          self->sensitive_part = g_new0 (float, cells);
          self->free_part = g_new0 (float, cells);
        }
      if (caml_run_copy_surface (self->run, &self->surface_version, self->fit, self->chi,
                                 self->sensitive_part, self->free_part, &self->parts_layer))
        changed |= CAML_SESSION_SURFACE;
    }

  /* What the empty plots say follows the state: "diverged at step 2",
   * "stopped before the first evaluation". A run that ended is kept. */
  if (p.state != old_state)
    {
      changed |= CAML_SESSION_CURVES;
      if (p.state == CAML_TRAINER_FINISHED || p.state == CAML_TRAINER_STOPPED
          || p.state == CAML_TRAINER_FAILED)
        runs_record_run (self);
    }
  if (changed != 0)
    session_progress (self, changed);
  /* Each failure once, a continued run's too (which may have failed again
   * before the first look at it). */
  if (p.state == CAML_TRAINER_FAILED && !self->failure_shown)
    {
      self->failure_shown = TRUE;
      show_divergence (self);
    }
  /* the progress line, and Stop for a baseline training alone */
  session_changed (self);
}

/* The least time between two copies of a training run: each copy costs
 * the window about three frames (the numbers, then each plot's new image),
 * and while training takes every core each of those frames is taken from
 * it. Measured on two cores (mnist-ca-cnn, README): 10 copies a second
 * trained at 80 % of the headless speed, 4 at 86–88 %. */
static gint64
update_interval (CamlSession *self)
{
  CamlTrainer *trainer = self->run != NULL ? caml_run_get_trainer (self->run) : NULL;
  int threads = trainer != NULL ? caml_trainer_get_threads (trainer) : caml_get_threads ();
  if (self->baseline != NULL && !caml_session_baseline_ended (self))
    threads *= 2;   /* the baseline trains beside it */
  return threads >= caml_get_cores () ? UPDATE_BUSY_US : UPDATE_INTERVAL_US;
}

static gboolean
on_update (gpointer data)
{
  CamlSession *self = data;
  gint64 now = g_get_monotonic_time ();

  gboolean busy = self->progress.state == CAML_TRAINER_RUNNING
                  || (self->baseline != NULL && !caml_session_baseline_ended (self));
  gint64 interval = busy ? update_interval (self) : 0;
  if (self->run != NULL && busy && now - self->last_update_us < interval)
    {
      /* Too soon after the last update: come back later, still the one
       * pending source. */
      guint delay = (guint) ((interval - (now - self->last_update_us)) / 1000) + 1;
      g_timeout_add_full (G_PRIORITY_DEFAULT_IDLE, delay, on_update, g_object_ref (self),
                          g_object_unref);
      return G_SOURCE_REMOVE;
    }
  /* Clear first: a report arriving while we copy schedules the next update. */
  g_atomic_int_set (&self->update_pending, 0);
  self->last_update_us = now;
  if (self->cancellable != NULL)
    update_from_run (self);
  return G_SOURCE_REMOVE;
}

/* "vectors for 12,345 of 16,000 words (77 %)": the words of the training
 * vocabulary whose pre-trained vector the run's embedding tables start
 * from (what `caml train` prints), digits grouped as the weight count is;
 * NULL when there are none (or a weights file replaced them). */
char *
word_vector_coverage (CamlSession *self)
{
  int words = 0;
  int found = self->run != NULL ? caml_run_get_word_vectors (self->run, &words) : 0;

  if (found <= 0 || words <= 0)
    return NULL;
  /* Whole percents: never 100 when a word has none. */
  int percent = CLAMP ((int) lround (100.0 * found / words), 1, found < words ? 99 : 100);
  return g_strdup_printf ("vectors for %'d of %'d words (%d %%)", found, words, percent);
}

/* Once per Load Weights or Open Run (the run is installed). A state that
 * did not load is said whenever it happens: the run starts afresh. */
void
announce_loaded (CamlSession *self, const char *weights, const char *state,
                 const char *state_error)
{
  g_autofree char *run_dir = g_steal_pointer (&self->opening_run);
  g_autofree char *dir_name = run_dir != NULL ? g_filename_display_basename (run_dir) : NULL;
  CamlProgress p;

  /* A load that worked: the error of one that failed before is old news. */
  if (state_error == NULL && self->announce_load)
    session_clear_error (self);
  if (state_error != NULL)
    {
      g_autofree char *text = g_strdup_printf ("The run's state was not loaded, so training "
                                               "starts at step 0 from its weights: %s",
                                               state_error);
      session_error (self, text);
    }
  else if (self->announce_load && state != NULL && self->run != NULL)
    {
      caml_run_get_progress (self->run, &p);
      g_autofree char *text =
        p.step < p.total_steps
        ? g_strdup_printf ("Opened run %s at step %ld: Train goes on to %ld",
                           dir_name != NULL ? dir_name : "", p.step, p.total_steps)
        : g_strdup_printf ("Opened run %s at step %ld, its last: raise Steps to go on",
                           dir_name != NULL ? dir_name : "", p.step);
      session_notice (self, text, FALSE);
    }
  else if (self->announce_load && run_dir != NULL)
    {
      g_autofree char *text =
        g_strdup_printf ("Opened the weights of %s: it has no trainer.state (earlier "
                         "versions kept none for a run that diverged), so training starts "
                         "at step 0", dir_name);
      session_notice (self, text, FALSE);
    }
  else if (self->announce_load)
    session_done (self, "Loaded the weights from", weights);
  self->announce_load = FALSE;
}

/* A run whose embedding tables start from word vectors says how many
 * words had one, as `caml train` does: in the status line while it is
 * ready (word_vector_coverage), and in a notice once per data and count,
 * which a rebuild after each edit does not repeat and a Train pressed
 * during the build does not cover at once. */
static void
announce_word_vectors (CamlSession *self)
{
  g_autofree char *coverage = word_vector_coverage (self);
  int found = caml_run_get_word_vectors (self->run, NULL);

  if (coverage == NULL
      || (found == self->vectors_told && self->data_serial == self->vectors_told_serial))
    return;
  self->vectors_told = found;
  self->vectors_told_serial = self->data_serial;
  g_autofree char *text = g_strdup_printf ("Pre-trained %s", coverage);
  session_notice (self, text, FALSE);
}

static void do_pending (CamlSession *self);

/* Takes ownership of run: its untrained surface or σ-maps are shown. */
void
install_run (CamlSession *self, CamlRun *run)
{
  self->run = run;
  self->run_building = FALSE;
  g_clear_handle_id (&self->build_source, g_source_remove);
  clear_history (self);
  self->sigma_version = 0;
  self->n_sigma = 0;
  if (caml_run_has_surface (self->run))
    self->has_parts = caml_run_set_parts_layer (self->run, self->parts_preferred) >= 0;
  session_progress (self, CAML_SESSION_NEW_RUN | CAML_SESSION_CURVES);
  if (caml_run_has_surface (self->run))
    sample_parts (self);   /* when another layer was chosen during the build */
  self->last_update_us = 0;
  update_from_run (self);
  session_changed (self);
  announce_word_vectors (self);
  do_pending (self);
}

/* A build on built-in data that has taken BUILD_QUIET_MS: say so. */
static gboolean
end_build_quiet (gpointer data)
{
  CamlSession *self = data;

  self->build_source = 0;
  if (self->run == NULL && self->data_loading)
    {
      g_autofree char *text = data_loading_text (self, FALSE);
      show_data_loading (self);
      session_waiting (self, CAML_SESSION_WAIT_LOADING, text);
      session_changed (self);
    }
  else if (self->run == NULL && self->run_building)
    {
      session_waiting (self, CAML_SESSION_WAIT_LOADING, "Building the model…");
      session_changed (self);
    }
  else if (self->files_loading)
    session_changed (self);   /* the spinner: data chosen are still being made */
  return G_SOURCE_REMOVE;
}

/* A build on built-in data begins (or built-in data chosen are made):
 * nothing changes in the plots, progress line and status for BUILD_QUIET_MS
 * (from the start of the data or the model, whichever came first). */
void
start_build_quiet (CamlSession *self)
{
  if (self->build_source == 0)
    self->build_source = g_timeout_add_full (G_PRIORITY_DEFAULT, BUILD_QUIET_MS, end_build_quiet,
                                             g_object_ref (self), g_object_unref);
}

/* Builds a run from exp, when the model and data allow it, on a worker
 * thread; the run arrives later (install_run). */
void
prepare_run (CamlSession *self)
{
  if (self->run != NULL)
    return;
  /* Built, and given the weights asked for, on a worker thread: even on
   * built-in data a big model takes seconds (its untrained surface is a
   * forward pass over the grid), and the largest surface grid takes 93 ms
   * to make. A build on built-in data that is usually done within a frame
   * or two keeps the plots shown until then, so that editing does not
   * flash "Building the model…" at every change. */
  gboolean quiet = !kind_from_files (self->exp->data.kind) && self->pending_weights == NULL;
  request_data (self);
  if (self->data_loading || self->run_building)
    {
      if (!quiet)   /* weights asked for: the build says so at once */
        g_clear_handle_id (&self->build_source, g_source_remove);
      if (self->build_source == 0)   /* a quiet build keeps the plots */
        {
          g_autofree char *text = self->data_loading ? data_loading_text (self, FALSE)
                                                     : g_strdup ("Building the model…");
          session_waiting (self, CAML_SESSION_WAIT_LOADING, text);
        }
      session_changed (self);
      return;
    }
  if (self->data == NULL)
    {
      const char *fetch = caml_data_source_fetch_name (self->exp->data.kind);
      g_autofree char *why = self->data_error != NULL && fetch != NULL
                             && strstr (self->data_error, "not fetched") != NULL
                             ? g_strdup_printf ("%s is not fetched: datasets/fetch %s gets it",
                                                data_title (self), fetch)
                             : g_strdup ("the data could not be read (see above)");
      session_waiting (self, CAML_SESSION_WAIT_NO_DATA, why);
      session_changed (self);
      return;
    }
  if (!caml_session_model_fits (self))
    {
      /* Train pressed while the data loaded: there is nothing to train
       * (weights to load stay pending until the model fits). */
      self->pending = PENDING_NONE;
      session_waiting (self, CAML_SESSION_WAIT_BAD_MODEL, "the model does not fit the data yet");
      session_changed (self);
      return;
    }
  if (self->build_error != NULL)
    {
      session_waiting (self, CAML_SESSION_WAIT_NO_BUILD, "the model cannot be built (see above)");
      session_changed (self);
      return;
    }
  if (quiet)
    start_build_quiet (self);
  else
    g_clear_handle_id (&self->build_source, g_source_remove);
  start_job (self, JOB_RUN);
  if (!quiet)
    session_waiting (self, CAML_SESSION_WAIT_LOADING, "Building the model…");
  session_changed (self);
}

/* The experiment changed in a way the run depends on. */
void
experiment_changed (CamlSession *self)
{
  mark_dirty (self);
  /* An untrained run loaded from a file: the rebuilt one loads it too (an
   * error says so if it no longer fits). */
  if (self->loaded_weights != NULL && !self->run_started && self->pending_weights == NULL)
    set_pending_load (self, self->loaded_weights, self->loaded_state);
  discard_run (self);   /* drops loaded_weights */
  forget_previous_if_other_data (self);
  prepare_run (self);
}

/* Starts a fresh run. When the run is still being built, `then` says what
 * to do once it is there, and this returns FALSE. */
gboolean
start_run (CamlSession *self, gboolean paused, Pending then)
{
  g_autoptr (GError) error = NULL;

  if (self->files_loading || self->weights_loading)
    {
      /* Starts on the data chosen, or from the weights, being loaded. */
      self->pending = then;
      session_changed (self);
      return FALSE;
    }
  if (self->run != NULL && self->run_started)
    discard_run (self);     /* finished, stopped or failed: start afresh */
  prepare_run (self);
  if (self->run == NULL)
    {
      if (self->run_building || self->data_loading)
        {
          self->pending = then;
          session_changed (self);
        }
      return FALSE;
    }
  CamlProgress p;
  caml_run_get_progress (self->run, &p);
  if (p.step > 0 && p.step >= p.total_steps)
    {
      /* An opened run that has done all its steps: nothing to train. */
      g_autofree char *text = g_strdup_printf ("The run has done all its %ld steps: raise "
                                               "Steps to go on", p.step);
      session_notice (self, text, FALSE);
      return FALSE;
    }
  /* At a slow speed the trainer starts paused: the session's tick plays it
   * (pace_run_started), and no step runs ungranted. */
  if (!caml_trainer_start (caml_run_get_trainer (self->run), paused || self->speed > 0, &error))
    {
      session_error (self, error->message);
      return FALSE;
    }
  session_clear_error (self);
  self->run_started = TRUE;
  g_clear_pointer (&self->loaded_weights, g_free);   /* the run's weights are its own now */
  g_clear_pointer (&self->loaded_state, g_free);
  self->progress.state = paused ? CAML_TRAINER_PAUSED : CAML_TRAINER_RUNNING;
  if (!paused)
    pace_run_started (self);   /* a slow speed: played by the session's tick */
  start_baseline_if_wanted (self);   /* Compare with Baseline is on */
  session_changed (self);
  return TRUE;
}

/* Steps raised past where a finished or stopped run ended: the run goes on
 * from there — paused, Train resumes it — with its optimizer's state, its
 * curves, σ-maps and baseline, instead of starting afresh (Reset does that).
 * FALSE when there is no such run (or it cannot go on): the caller starts
 * a new one. pressed: Train or Step goes on with it at once (the notice
 * says so, not "Resume"). */
gboolean
extend_run (CamlSession *self, int steps, gboolean pressed)
{
  CamlProgress p;

  if (self->run == NULL || !self->run_started)
    return FALSE;
  caml_run_get_progress (self->run, &p);
  if ((p.state != CAML_TRAINER_FINISHED && p.state != CAML_TRAINER_STOPPED) || steps <= p.step
      || !caml_run_extend (self->run, steps, NULL))
    return FALSE;
  /* Its baseline goes on beside it (one that diverged stays where it ended). */
  if (self->baseline != NULL)
    caml_run_extend (self->baseline, steps, NULL);
  /* Data chosen meanwhile would replace the run that goes on. */
  caml_session_cancel_choice (self, "the run went on (choose them again once it has ended)");
  mark_dirty (self);
  update_from_run (self);
  g_autofree char *message = pressed
                             ? g_strdup_printf ("The stopped run goes on from step %ld "
                                                "(Reset starts afresh)", p.step)
                             : g_strdup_printf ("The run goes on from step %ld: Resume (F5)",
                                                p.step);
  session_notice (self, message, FALSE);
  return TRUE;
}

/* A stopped run whose Steps are still ahead of it goes on (paused) when
 * Train or Step is pressed, as it does when Steps are raised past it;
 * Reset starts afresh. */
static void
go_on_if_stopped (CamlSession *self)
{
  /* Data or weights chosen and loading, or a new model being built: Train
   * waits for those (start_run), which replace the stopped run. */
  if (self->files_loading || self->weights_loading || self->data_loading
      || self->run_building)
    return;
  if (self->run != NULL && self->run_started && self->progress.state == CAML_TRAINER_STOPPED
      && self->exp->steps > self->progress.step)
    extend_run (self, self->exp->steps, TRUE);
}

void
caml_session_train (CamlSession *self)
{
  go_on_if_stopped (self);
  if (self->run != NULL && self->run_started && self->progress.state == CAML_TRAINER_PAUSED)
    {
      pace_resume (self);   /* resumed, or played at a slow speed */
      update_from_run (self);
      return;
    }
  start_run (self, FALSE, PENDING_TRAIN);
}

void
caml_session_pause (CamlSession *self)
{
  if (self->run == NULL || !self->run_started)
    return;
  pace_stop (self);
  caml_trainer_pause (caml_run_get_trainer (self->run));
  if (self->baseline != NULL)
    caml_trainer_pause (caml_run_get_trainer (self->baseline));
  update_from_run (self);
}

void
caml_session_step (CamlSession *self)
{
  go_on_if_stopped (self);
  if (!(self->run != NULL && self->run_started && self->progress.state == CAML_TRAINER_PAUSED)
      && !start_run (self, TRUE, PENDING_STEP))
    return;
  caml_trainer_step (caml_run_get_trainer (self->run));
  if (self->baseline != NULL)
    caml_trainer_step (caml_run_get_trainer (self->baseline));
}

void
caml_session_stop (CamlSession *self)
{
  pace_stop (self);
  if (self->run != NULL && self->run_started)
    caml_trainer_stop (caml_run_get_trainer (self->run));
  if (self->baseline != NULL)
    caml_trainer_stop (caml_run_get_trainer (self->baseline));
  self->baseline_building = FALSE;   /* a baseline still being built is dropped */
}

void
caml_session_reset (CamlSession *self)
{
  discard_run (self);
  session_clear_error (self);
  prepare_run (self);
}

/* With Compare with Baseline on, the current run gets its matched baseline
 * (every CA layer replaced by its plain counterpart; same data, seed and
 * schedule), built on a worker thread (install_baseline): trained alongside
 * a run that is under way, or alone, to the same step, beside one that has
 * finished or was stopped. A run that diverged gets none (it waits to be
 * continued); the next fresh run does. */
void
start_baseline_if_wanted (CamlSession *self)
{
  if (!self->compare || self->baseline != NULL || self->baseline_building
      || self->run == NULL || !self->run_started)
    return;
  CamlProgress p;
  caml_run_get_progress (self->run, &p);
  if (p.state == CAML_TRAINER_FAILED || p.state == CAML_TRAINER_IDLE
      || (p.state != CAML_TRAINER_RUNNING && p.state != CAML_TRAINER_PAUSED && p.step == 0))
    return;
  start_job (self, JOB_BASELINE);
}

void
caml_session_set_compare (CamlSession *self, gboolean compare)
{
  if (compare == self->compare)
    return;
  self->compare = compare;
  session_notify_compare (self);
  if (!self->compare)
    {
      runs_record_baseline (self);   /* kept, as stopped where it was if it trained */
      runs_forget_current (self, TRUE);
      g_clear_pointer (&self->baseline, caml_run_free);   /* stops and joins it */
      self->baseline_building = FALSE;   /* one being built is dropped */
      g_clear_pointer (&self->base_losses, g_free);
      g_clear_pointer (&self->base_rows, g_free);
      self->base_n_steps = 0;
      self->base_n_rows = 0;
      session_progress (self, CAML_SESSION_CURVES);
      session_changed (self);
      return;
    }
  /* A setting: a run under way, paused or ended gets its baseline now (one
   * that has ended: the baseline alone, to its step); otherwise the next
   * run Train starts gets it. Nothing is started here. */
  if (self->run != NULL && self->run_started)
    {
      start_baseline_if_wanted (self);
      if (!self->baseline_building && self->progress.state == CAML_TRAINER_FAILED)
        session_notice (self, "The baseline trains beside the next run (this one diverged)",
                        FALSE);
    }
  else
    session_notice (self, "Train starts the model and its baseline together", FALSE);
  session_changed (self);
}

gboolean
caml_session_get_compare (CamlSession *self)
{
  return self->compare;
}

/* The run that was being built is there: do what was asked meanwhile. */
static void
do_pending (CamlSession *self)
{
  Pending what = self->pending;

  if (self->files_loading)
    return;   /* what was pressed waits for the data chosen (start_run) */
  if (self->pending_weights != NULL)
    {
      /* Weights asked for after this run's build began: build it again with
       * them, on a worker thread; what was pressed waits for that run. */
      discard_run (self);
      prepare_run (self);
      return;
    }
  self->pending = PENDING_NONE;
  switch (what)
    {
    case PENDING_TRAIN:
      start_run (self, FALSE, PENDING_NONE);
      break;
    case PENDING_STEP:
      if (start_run (self, TRUE, PENDING_NONE))
        caml_trainer_step (caml_run_get_trainer (self->run));
      break;
    case PENDING_NONE:
      break;
    }
}

void
caml_session_forget_previous (CamlSession *self)
{
  forget_previous (self);
  session_progress (self, CAML_SESSION_CURVES);
  session_changed (self);
}

void
record_event (CamlSession *self, char *text)
{
  CamlSessionEvent e = { self->progress.step, text };
  g_array_append_val (self->events, e);
  session_progress (self, CAML_SESSION_CURVES);
}

/* After a divergence: on from the last evaluation at a tenth of the
 * learning rate, keeping the loss history up to there. */
void
caml_session_continue (CamlSession *self)
{
  g_autoptr (GError) error = NULL;

  if (self->run == NULL || !self->run_started || self->progress.state != CAML_TRAINER_FAILED)
    return;
  double lr = caml_run_get_lr (self->run) / 10;
  long from = caml_run_get_checkpoint_step (self->run);
  if (!caml_run_continue (self->run, lr, &error))
    {
      session_error (self, error->message);
      return;
    }
  /* Data chosen meanwhile would replace the run that goes on. */
  caml_session_cancel_choice (self, "the run went on (choose them again once it has ended)");
  self->failure_shown = FALSE;   /* the new trainer's failure, if it comes, is news */
  if (caml_session_baseline_active (self))
    caml_run_set_lr (self->baseline, lr);
  /* The experiment keeps the learning rate it goes on with. */
  self->exp->optimizer.lr = lr;
  session_experiment_changed (self);
  mark_dirty (self);
  session_clear_error (self);
  pace_run_started (self);   /* on at the speed chosen */
  /* Marks on the steps that were dropped go with them. */
  for (guint i = self->events->len; i-- > 0;)
    if (g_array_index (self->events, CamlSessionEvent, i).step > from)
      g_array_remove_index (self->events, i);
  update_from_run (self);
  g_autofree char *shown = caml_format_positive (lr);
  record_event (self, g_strdup_printf ("lr %s after divergence", shown));
  session_changed (self);
  /* Feedback at once, before the first report of the new trainer (unless
   * it has failed already: the banner is back). */
  g_autofree char *text = g_strdup_printf ("Continuing from step %ld at lr %s", from, shown);
  if (!self->failure_shown)
    session_notice (self, text, FALSE);
}

