/* caml-session.c — one experiment being worked on (caml-session.h): the
 * object, what it announces, the document, the edits and what the window
 * reads. Its data, its run and its jobs are in caml-session-data.c,
 * caml-session-run.c and caml-session-jobs.c. */
#include <math.h>
#include <string.h>

#include "caml-session-private.h"
#include "caml-autosave.h"
#include "caml-data-source.h"
#include "caml-format.h"
#include "figures.h"
#include "presets.h"
#include "report.h"

G_DEFINE_FINAL_TYPE (CamlSession, caml_session, G_TYPE_OBJECT)

enum {
  PROP_0, PROP_STATE, PROP_MODIFIED, PROP_PATH, PROP_DATA_CHOICE, PROP_COMPARE, PROP_SPEED, PROP_MARKED_STEP,
  PROP_CONTINUOUS, PROP_RUNS, PROP_SWEEP, N_PROPS
};
static GParamSpec *properties[N_PROPS];

enum {
  SIGNAL_PROGRESS,
  SIGNAL_NOTICE,
  SIGNAL_ERROR,
  SIGNAL_WAITING,
  SIGNAL_DATA_CHANGED,
  SIGNAL_EXPERIMENT_CHANGED,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

/* --------------------------------------------------------------- news */

/* What can be done, or what the progress line says, changed. */
void
session_changed (CamlSession *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
}

void
session_banner (CamlSession *self, CamlSessionBanner kind, const char *message)
{
  g_signal_emit (self, signals[SIGNAL_ERROR], 0, kind, message);
}

void
session_error (CamlSession *self, const char *message)
{
  session_banner (self, CAML_SESSION_BANNER_ERROR, message);
}

void
session_data_changed (CamlSession *self)
{
  g_signal_emit (self, signals[SIGNAL_DATA_CHANGED], 0);
}

void
session_notify_sweep (CamlSession *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SWEEP]);
}

void
session_notify_compare (CamlSession *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMPARE]);
}

void
session_notify_pace (CamlSession *self, gboolean continuous)
{
  g_object_notify_by_pspec (G_OBJECT (self),
                            properties[continuous ? PROP_CONTINUOUS : PROP_SPEED]);
}

void
session_data_choice (CamlSession *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DATA_CHOICE]);
}

void
session_notice (CamlSession *self, const char *message, gboolean warning)
{
  g_signal_emit (self, signals[SIGNAL_NOTICE], 0, message, warning);
}

/* "Saved the weights to surface.weights": what, and the file's name. */
void
session_done (CamlSession *self, const char *what, const char *path)
{
  g_autofree char *name = g_filename_display_basename (path);
  g_autofree char *text = g_strdup_printf ("%s %s", what, name);
  session_notice (self, text, FALSE);
}

void
session_waiting (CamlSession *self, CamlSessionWait wait, const char *why)
{
  g_signal_emit (self, signals[SIGNAL_WAITING], 0, wait, why);
}

void
session_progress (CamlSession *self, CamlSessionChange what)
{
  g_signal_emit (self, signals[SIGNAL_PROGRESS], 0, what);
}

/* The banner that says the trained weights of the replaced run are kept. */
void
show_set_aside (CamlSession *self)
{
  g_autofree char *text =
    g_strdup_printf ("The weights of the run trained to step %ld are set aside, unsaved, "
                     "in case you want them.", self->set_aside->step);
  session_banner (self, CAML_SESSION_BANNER_SET_ASIDE, text);
}

/* With the error gone, the banner is back to the set-aside weights, when
 * there are any: a new message hides their banner only while it stays. */
void
session_clear_error (CamlSession *self)
{
  if (self->set_aside != NULL)
    show_set_aside (self);
  else
    session_error (self, NULL);
}

void
caml_session_clear_error (CamlSession *self)
{
  session_clear_error (self);
}

/* ------------------------------------------------------------- helpers */

gboolean
caml_session_baseline_active (CamlSession *self)
{
  if (self->baseline == NULL)
    return FALSE;
  CamlProgress p;
  caml_trainer_get_progress (caml_run_get_trainer (self->baseline), &p);
  return p.state == CAML_TRAINER_RUNNING || p.state == CAML_TRAINER_PAUSED
         || p.state == CAML_TRAINER_IDLE;
}

gboolean
run_active (CamlSession *self)
{
  return self->run != NULL && self->run_started
         && (self->progress.state == CAML_TRAINER_RUNNING
             || self->progress.state == CAML_TRAINER_PAUSED);
}

char *
caml_session_dup_display_name (CamlSession *self)
{
  return g_strdup_printf ("%s%s", self->exp->name != NULL ? self->exp->name : "untitled",
                          self->recovered ? " (recovered)" : "");
}

char *
caml_session_dup_run_title (CamlSession *self)
{
  const CamlExperiment *exp = self->run != NULL ? caml_run_get_experiment (self->run) : self->exp;
  return g_strdup_printf ("%s, seed %" G_GUINT64_FORMAT, exp->name ? exp->name : "experiment",
                          exp->seed);
}

/* The comparison's figures: the baseline's last evaluation and its
 * difference from the run's at the same step, and the last σ-map AUC. */
gboolean
caml_session_get_comparison (CamlSession *self, double *model, double *baseline,
                             double *sigma_auc)
{
  *model = *baseline = *sigma_auc = NAN;
  if (self->run == NULL)
    return FALSE;
  if (self->n_rows > 0 && self->base_n_rows > 0)
    {
      const CamlEvalRow *b = &self->base_rows[self->base_n_rows - 1];
      for (int i = self->n_rows; i-- > 0;)
        if (self->rows[i].step == b->step)
          {
            *model = self->rows[i].test_metric;
            *baseline = b->test_metric;
            break;
          }
    }
  if (caml_run_has_sigma (self->run))
    {
      g_autofree double *steps = NULL, *auc = NULL;
      int n = caml_run_copy_sigma_auc (self->run, &steps, &auc);
      if (n > 0)
        *sigma_auc = auc[n - 1];
    }
  return !isnan (*baseline) || !isnan (*sigma_auc);
}

char *
caml_session_dup_comparison (CamlSession *self)
{
  double model, baseline, auc;
  if (!caml_session_get_comparison (self, &model, &baseline, &auc))
    return NULL;
  GString *text = g_string_new (NULL);
  if (!isnan (baseline))
    g_string_append_printf (text, "baseline %.4g (difference %+.4g)", baseline,
                            model - baseline);
  if (!isnan (auc))
    g_string_append_printf (text, "%sσ-AUC %.4f", text->len > 0 ? " · " : "", auc);
  return g_string_free (text, FALSE);
}

/* ------------------------------------------------------------ document */

static void schedule_autosave (CamlSession *self);

static void
set_dirty (CamlSession *self, gboolean dirty)
{
  if (dirty != self->dirty)
    {
      self->dirty = dirty;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MODIFIED]);
    }
}

/* After an edit: the experiment is modified when it differs from the file
 * or preset as opened or last saved — an edit undone, or a value set back,
 * is no change — or when it was recovered from an autosave, which no file
 * holds. A modified one is autosaved soon; one back to clean needs none. */
void
mark_dirty (CamlSession *self)
{
  gboolean dirty = self->recovered || self->clean_exp == NULL
                   || !caml_experiment_equal (self->exp, self->clean_exp);
  set_dirty (self, dirty);
  if (dirty)
    schedule_autosave (self);
  else
    caml_session_drop_autosave (self);
}

/* exp is what the file or preset holds now (opened or saved). */
static void
mark_clean (CamlSession *self)
{
  caml_experiment_free (self->clean_exp);
  self->clean_exp = caml_experiment_copy (self->exp);
  self->recovered = FALSE;
  set_dirty (self, FALSE);
  caml_session_drop_autosave (self);
}

/* Every change (mark_dirty) makes sure one timeout is pending: it writes
 * the experiment AUTOSAVE_DELAY_MS after the first unsaved change
 * (caml-autosave.c). Saving, replacing the experiment or closing the
 * window removes the file: only a process that ends without closing its
 * windows leaves one behind. */
static gboolean
autosave_timeout (gpointer data)
{
  CamlSession *self = data;
  g_autoptr (GError) error = NULL;

  self->autosave_source = 0;
  if (self->exp != NULL && self->dirty && !caml_session_autosave_now (self, &error))
    g_warning ("autosave: %s", error->message);
  return G_SOURCE_REMOVE;
}

static void
schedule_autosave (CamlSession *self)
{
  if (self->autosave_source == 0)
    self->autosave_source = g_timeout_add_full (G_PRIORITY_DEFAULT, AUTOSAVE_DELAY_MS,
                                                autosave_timeout, g_object_ref (self),
                                                g_object_unref);
}

void
caml_session_drop_autosave (CamlSession *self)
{
  g_clear_handle_id (&self->autosave_source, g_source_remove);
  if (self->autosave_id != NULL)
    caml_autosave_remove (self->autosave_id);
}

gboolean
caml_session_autosave_now (CamlSession *self, GError **error)
{
  if (self->autosave_id == NULL)
    self->autosave_id = caml_autosave_new_id ();
  return caml_autosave_write (self->autosave_id, self->exp, error);
}

char *
caml_session_get_autosave_path (CamlSession *self)
{
  return self->autosave_id != NULL ? caml_autosave_path (self->autosave_id) : NULL;
}

void
caml_session_mark_recovered (CamlSession *self)
{
  self->recovered = TRUE;
  g_free (self->origin);
  self->origin = g_strdup ("recovered, not saved");
  self->dirty = FALSE;   /* mark_dirty notifies */
  mark_dirty (self);
}

gboolean
caml_session_is_recovered (CamlSession *self)
{
  return self->recovered;
}

gboolean
caml_session_is_modified (CamlSession *self)
{
  return self->dirty;
}

const char *
caml_session_get_path (CamlSession *self)
{
  return self->path;
}

const char *
caml_session_get_origin (CamlSession *self)
{
  return self->origin;
}

const CamlExperiment *
caml_session_get_experiment (CamlSession *self)
{
  return self->exp;
}

/* The session changed the experiment itself: the fields that show it follow. */
void
session_experiment_changed (CamlSession *self)
{
  g_signal_emit (self, signals[SIGNAL_EXPERIMENT_CHANGED], 0);
}

/* The name the experiment takes when saved to path (NULL: it keeps its own).
 * A name that follows its file — a preset's or "untitled" while no file
 * holds the experiment, or the base name of the file that holds it —
 * follows it to another file: `caml train` names its run folder
 * after it (runs/NAME-seedN), so a preset changed and saved as mine.json
 * no longer trains into the preset's folder. A name set apart from the file
 * stays, and so does the name in a run folder's experiment.json. */
static char *
name_for_new_path (CamlSession *self, const char *path)
{
  if (g_strcmp0 (self->path, path) == 0)
    return NULL;
  g_autofree char *name = caml_experiment_name_for_path (path);
  if (g_str_equal (name, "experiment") || g_str_equal (name, "")
      || g_strcmp0 (name, self->exp->name) == 0)
    return NULL;
  if (self->path != NULL)
    {
      g_autofree char *current = caml_experiment_name_for_path (self->path);
      if (g_str_equal (current, "experiment") || g_strcmp0 (current, self->exp->name) != 0)
        return NULL;
    }
  else if (!g_str_equal (self->exp->name != NULL ? self->exp->name : "untitled", "untitled")
           && !(self->origin != NULL && g_str_has_prefix (self->origin, "preset ")
                && g_str_equal (self->origin + strlen ("preset "), self->exp->name)))
    return NULL;   /* recovered: its name may be one set apart from its file */
  return g_steal_pointer (&name);
}

gboolean
caml_session_save (CamlSession *self, const char *path, GError **error)
{
  g_autofree char *renamed = name_for_new_path (self, path);
  /* A preset changed is no longer the preset: its description and paper
   * figure say so in the file (they stay in memory too). */
  caml_presets_mark_edited (self->exp);
  char *name = self->exp->name;
  if (renamed != NULL)
    self->exp->name = renamed;
  gboolean saved = caml_experiment_save_file (self->exp, path, error);
  self->exp->name = name;
  if (!saved)
    return FALSE;
  if (renamed != NULL)
    {
      self->exp->name = g_steal_pointer (&renamed);
      g_free (name);
      /* what Save Run and the exports write carry it too */
      if (self->run != NULL)
        caml_run_set_name (self->run, self->exp->name);
      if (self->baseline != NULL)
        {
          g_autofree char *base = g_strconcat (self->exp->name, "-baseline", NULL);
          caml_run_set_name (self->baseline, base);
        }
    }
  if (g_strcmp0 (self->path, path) != 0)
    {
      g_free (self->path);
      self->path = g_strdup (path);
    }
  mark_clean (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PATH]);
  return TRUE;
}

CamlExperiment *
caml_session_read_run (const char *dir, GError **error)
{
  g_autofree char *exp_path = g_build_filename (dir, "experiment.json", NULL);
  g_autofree char *weights = g_build_filename (dir, "model.weights", NULL);

  if (!g_file_test (exp_path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                   "%s is not a saved run: it has no experiment.json (a run folder holds "
                   "experiment.json, model.weights and trainer.state)", dir);
      return NULL;
    }
  CamlExperiment *exp = caml_experiment_load_file (exp_path, error);
  if (exp != NULL && !g_file_test (weights, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                   "%s is not a saved run: it has no model.weights (a run that stopped "
                   "before its first step keeps none)", dir);
      g_clear_pointer (&exp, caml_experiment_free);
    }
  return exp;
}

void
caml_session_set_experiment (CamlSession *self, CamlExperiment *exp, const char *path,
                             const char *origin, const char *run_dir)
{
  discard_run (self);
  session_clear_error (self);
  g_clear_pointer (&self->exp, caml_experiment_free);
  self->exp = exp;
  forget_previous_if_other_data (self);
  g_free (self->path);
  self->path = g_strdup (path);
  g_free (self->origin);
  self->origin = g_strdup (origin);
  mark_clean (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PATH]);
  invalidate_data (self);
  drop_choice (self);   /* data chosen for the experiment that goes */
  self->pending = PENDING_NONE;
  set_pending_load (self, NULL, NULL);
  g_clear_pointer (&self->loaded_weights, g_free);
  g_clear_pointer (&self->loaded_state, g_free);
  g_clear_pointer (&self->opening_run, g_free);
  if (run_dir != NULL)
    {
      g_autofree char *weights = g_build_filename (run_dir, "model.weights", NULL);
      g_autofree char *state = g_build_filename (run_dir, "trainer.state", NULL);
      set_pending_load (self, weights, g_file_test (state, G_FILE_TEST_EXISTS) ? state : NULL);
      self->announce_load = TRUE;
      self->opening_run = g_strdup (run_dir);
    }
  session_experiment_changed (self);
  sync_data_choice (self);
  request_data (self);
  prepare_run (self);
  session_changed (self);
}

/* --------------------------------------------------------------- edits */

void
caml_session_set_layers (CamlSession *self, const CamlLayerSpec *specs, int n)
{
  g_free (self->exp->layers);
  self->exp->layers = g_memdup2 (specs, sizeof *specs * MAX (n, 1));
  self->exp->n_layers = n;
  experiment_changed (self);
  session_changed (self);
}

void
caml_session_set_loss (CamlSession *self, CamlLossKind loss)
{
  if (loss == self->exp->loss)
    return;
  self->exp->loss = loss;
  experiment_changed (self);
}

void
caml_session_set_optimizer (CamlSession *self, CamlOptimizerKind kind)
{
  if (kind == self->exp->optimizer.kind)
    return;
  double lr = self->exp->optimizer.lr, weight_decay = self->exp->optimizer.weight_decay;
  int em = self->exp->optimizer.em_steps;
  caml_optimizer_config_defaults (&self->exp->optimizer, kind);
  self->exp->optimizer.lr = lr;
  self->exp->optimizer.em_steps = em;
  self->exp->optimizer.weight_decay = weight_decay;
  experiment_changed (self);
}

void
caml_session_set_lr (CamlSession *self, double lr)
{
  if (!(lr > 0) || lr == self->exp->optimizer.lr)
    return;
  self->exp->optimizer.lr = lr;
  gboolean live = run_active (self), base_live = caml_session_baseline_active (self);
  if (live)
    caml_run_set_lr (self->run, lr);
  if (base_live)
    caml_run_set_lr (self->baseline, lr);   /* the comparison stays like for like */
  if (live || base_live)
    {
      g_autofree char *shown = caml_format_positive (lr);
      record_event (self, g_strdup_printf ("lr %s", shown));
      mark_dirty (self);
    }
  else
    experiment_changed (self);
}

void
caml_session_set_em_steps (CamlSession *self, int em)
{
  if (em < 0 || em == self->exp->optimizer.em_steps)
    return;
  self->exp->optimizer.em_steps = em;
  gboolean live = run_active (self), base_live = caml_session_baseline_active (self);
  if (live)
    caml_run_set_em_steps (self->run, em);
  if (base_live)
    caml_run_set_em_steps (self->baseline, em);
  if (live || base_live)
    {
      record_event (self, g_strdup_printf ("em %d", em));
      mark_dirty (self);
    }
  else
    experiment_changed (self);
}

void
caml_session_set_weight_decay (CamlSession *self, double weight_decay)
{
  if (weight_decay == self->exp->optimizer.weight_decay)
    return;
  self->exp->optimizer.weight_decay = weight_decay;
  experiment_changed (self);
}

void
caml_session_set_batch_size (CamlSession *self, int batch_size)
{
  self->exp->batch_size = batch_size;
  experiment_changed (self);
}

void
caml_session_set_steps (CamlSession *self, int steps)
{
  self->exp->steps = steps;
  if (!extend_run (self, steps, FALSE))
    experiment_changed (self);
}

void
caml_session_set_eval_every (CamlSession *self, int eval_every)
{
  self->exp->eval_every = eval_every;
  experiment_changed (self);
}

void
caml_session_set_seed (CamlSession *self, guint64 seed)
{
  self->exp->seed = seed;
  if (data_follow_seed (self->exp))
    invalidate_data (self);
  experiment_changed (self);
}

void
caml_session_set_average_decay (CamlSession *self, double average_decay)
{
  self->exp->average_decay = average_decay;
  experiment_changed (self);
}

void
caml_session_set_parts_layer (CamlSession *self, int preferred)
{
  self->parts_preferred = preferred;
  /* The parts shown follow the selected CA-NN layer. */
  if (self->run != NULL && caml_run_has_surface (self->run))
    {
      caml_run_set_parts_layer (self->run, preferred);
      sample_parts (self);
    }
}

/* ------------------------------------------------------------- getters */

CamlTrainerState
caml_session_get_state (CamlSession *self)
{
  return self->run_started ? self->progress.state : CAML_TRAINER_IDLE;
}

gboolean
caml_session_is_loading (CamlSession *self)
{
  return self->data_loading || self->run_building || self->files_loading
         || self->weights_loading || self->baseline_building || self->parts_sampling > 0;
}

gboolean
caml_session_is_busy (CamlSession *self)
{
  /* No spinner for a build that is still quiet (see prepare_run), nor for
   * the parts of another layer (a moment, usually). */
  return (self->data_loading || self->run_building || self->files_loading
          || self->weights_loading || self->baseline_building)
         && self->build_source == 0;
}

gboolean
caml_session_model_builds (CamlSession *self)
{
  return caml_session_model_fits (self) && self->data != NULL && self->build_error == NULL;
}

gboolean
caml_session_can_train (CamlSession *self)
{
  gboolean valid = caml_session_model_builds (self);
  /* Train and Step pressed while the data loads or the model is built act
   * once it is there (start_run keeps them pending). */
  gboolean waiting = self->run == NULL && (self->data_loading || self->run_building
                                           || self->files_loading);
  return valid || waiting;
}

gboolean
caml_session_is_active (CamlSession *self)
{
  return run_active (self);
}

gboolean
caml_session_has_run (CamlSession *self)
{
  return self->run_started;
}

gboolean
caml_session_baseline_ended (CamlSession *self)
{
  if (self->baseline == NULL)
    return FALSE;
  CamlProgress p;
  caml_trainer_get_progress (caml_run_get_trainer (self->baseline), &p);
  return p.state == CAML_TRAINER_FINISHED || p.state == CAML_TRAINER_STOPPED
         || p.state == CAML_TRAINER_FAILED;
}

CamlRun *
caml_session_peek_run (CamlSession *self)
{
  return self->run;
}

CamlRun *
caml_session_peek_baseline (CamlSession *self)
{
  return self->baseline;
}

char *
caml_session_why_not_resumable (CamlSession *self)
{
  if (self->run == NULL || !self->run_started)
    return g_strdup ("there is no run to save");
  return caml_run_why_not_resumable (self->run);
}

gboolean
caml_session_has_set_aside (CamlSession *self, long *step, const char **name)
{
  if (self->set_aside != NULL && step != NULL)
    *step = self->set_aside->step;
  if (self->set_aside != NULL && name != NULL)
    *name = self->set_aside->exp->name;
  return self->set_aside != NULL;
}

static char *
format_duration (double s)
{
  if (!isfinite (s) || s < 0)
    return g_strdup ("—");
  if (s < 0.1)
    return g_strdup_printf ("%.0f ms", 1000 * s);   /* not "0.0 s" for a short run */
  if (s < 10)
    return g_strdup_printf ("%.1f s", s);
  if (s < 3600)
    return g_strdup_printf ("%d:%02d", (int) s / 60, (int) s % 60);
  return g_strdup_printf ("%d:%02d:%02d", (int) s / 3600, ((int) s / 60) % 60, (int) s % 60);
}

/* Steps a second of training, evaluations left out: the figure summary.json
 * and the Runs table give for the same run. */
static double
training_rate (const CamlProgress *p)
{
  double training = p->seconds - p->eval_seconds;
  return training > 0 && p->step > 0 ? p->step / training : 0.0;
}

static gboolean
describe_progress (CamlSession *self, double *fraction, char **text, char **status)
{
  const CamlProgress *p = &self->progress;
  static const char *const state_names[] = {
    "ready", "training", "paused", "finished", "stopped", "failed",
  };

  *text = *status = NULL;
  *fraction = 0;
  /* A quiet build (prepare_run): the line and status stay as they were. */
  if (self->run == NULL && self->build_source != 0)
    return FALSE;
  if (self->run == NULL)
    {
      *text = self->files_loading ? choice_loading_text (self)
              : self->data_loading ? data_loading_text (self, TRUE)
              : self->run_building ? g_strdup ("building the model…")
              : g_strdup ("no model to train");
      *status = g_strdup (self->pending != PENDING_NONE ? "starts when the model is built" : "");
      return TRUE;
    }
  long total = p->total_steps > 0 ? p->total_steps : self->exp->steps;
  CamlDivergence d;
  /* A divergence says where it happened, not only where the weights are
   * now ("failed — step 0" read as if nothing had run). */
  *text = self->run_started && p->state == CAML_TRAINER_FAILED
          && caml_run_get_divergence (self->run, &d)
          ? g_strdup_printf ("diverged at step %ld — back at step %ld of %ld",
                             d.step, p->step, total)
          : self->continuous && run_active (self)
          ? g_strdup_printf ("%s — step %ld, until stopped", state_names[p->state], p->step)
          : g_strdup_printf ("%s — step %ld of %ld", state_names[p->state], p->step, total);
  *fraction = total > 0 ? (double) p->step / total : 0;

  g_autofree char *elapsed = format_duration (p->seconds);
  /* Played slowly, the run goes at the speed's pace, not the trainer's. */
  double rate = self->playing ? self->speed * 1000.0 / PACE_TICK_MS : p->steps_per_second;
  g_autofree char *left = format_duration (rate > 0 ? (total - p->step) / rate : NAN);
  if (p->state == CAML_TRAINER_RUNNING && self->continuous)
    *status = g_strdup_printf ("%.0f steps/s · Stop ends it · loss %.4g", rate, p->last_loss);
  else if (p->state == CAML_TRAINER_RUNNING)
    *status = g_strdup_printf ("%.0f steps/s · %s left · loss %.4g", rate, left, p->last_loss);
  else if (p->n_rows > 0)
    {
      /* the last evaluation's figure, and its step when the run is past it;
       * beside it the baseline's and the difference, and the σ-maps' AUC */
      g_autofree char *at = p->last_row.step != p->step
                            ? g_strdup_printf (" at step %ld", p->last_row.step)
                            : g_strdup ("");
      g_autofree char *compared = caml_session_dup_comparison (self);
      *status = g_strdup_printf ("%s %s %.4g%s%s%s · %s, %.0f steps/s",
                                 caml_session_evaluated_on (self),
                                 p->classification ? "accuracy" : "MSE",
                                 p->last_row.test_metric, at,
                                 compared != NULL ? " · " : "", compared != NULL ? compared : "",
                                 elapsed, training_rate (p));
    }
  else
    {
      g_autofree char *vectors = word_vector_coverage (self);
      *status = g_strdup_printf ("%'zu weights%s%s", caml_run_get_n_weights (self->run),
                                 vectors != NULL ? " · " : "", vectors != NULL ? vectors : "");
    }
  if (self->files_loading || self->weights_loading)
    {
      /* The run shown stays until what it waits for is there. */
      g_autofree char *what = self->files_loading ? choice_loading_text (self)
                                                  : g_strdup ("loading weights…");
      g_free (*status);
      *status = self->pending != PENDING_NONE ? g_strdup_printf ("%s then training", what)
                                              : g_steal_pointer (&what);
    }
  else if (self->run_started && !run_active (self) && caml_session_baseline_active (self))
    {
      /* The run has ended; its baseline trains on, alone, to its step. */
      CamlProgress bp;
      caml_run_get_progress (self->baseline, &bp);
      g_autofree char *base_left = format_duration (bp.steps_per_second > 0
                                                    ? (bp.total_steps - bp.step)
                                                      / bp.steps_per_second : NAN);
      g_free (*text);
      *text = g_strdup_printf ("baseline — step %ld of %ld", bp.step, bp.total_steps);
      *fraction = bp.total_steps > 0 ? (double) bp.step / bp.total_steps : 0;
      g_free (*status);
      *status = g_strdup_printf ("training the baseline: %.0f steps/s · %s left",
                                 bp.steps_per_second, base_left);
    }
  return TRUE;
}

/* What the progress line and the status say, each a sentence
 * (caml_format_sentence: one style for every message of the line). */
gboolean
caml_session_describe_progress (CamlSession *self, double *fraction, char **text,
                                char **status)
{
  if (!describe_progress (self, fraction, text, status))
    return FALSE;
  char *t = caml_format_sentence (*text), *s = caml_format_sentence (*status);
  g_free (*text);
  g_free (*status);
  *text = t;
  *status = s;
  return TRUE;
}

const CamlProgress *
caml_session_get_progress (CamlSession *self)
{
  return &self->progress;
}

const float *
caml_session_get_losses (CamlSession *self, long *n_steps)
{
  *n_steps = self->n_steps;
  return self->losses;
}

const CamlEvalRow *
caml_session_get_rows (CamlSession *self, int *n_rows)
{
  *n_rows = self->n_rows;
  return self->rows;
}

const float *
caml_session_get_baseline_losses (CamlSession *self, long *n_steps)
{
  *n_steps = self->base_n_steps;
  return self->base_losses;
}

const CamlEvalRow *
caml_session_get_baseline_rows (CamlSession *self, int *n_rows)
{
  *n_rows = self->base_n_rows;
  return self->base_rows;
}

const float *
caml_session_get_previous_losses (CamlSession *self, long *n_steps, const CamlEvalRow **rows,
                                  int *n_rows, gboolean *classification)
{
  *n_steps = self->prev_n_steps;
  *rows = self->prev_rows;
  *n_rows = self->prev_n_rows;
  *classification = self->prev_classification;
  return self->prev_losses;
}

const CamlSessionEvent *
caml_session_get_events (CamlSession *self, guint *n)
{
  *n = self->events->len;
  return (const CamlSessionEvent *) self->events->data;
}

const float *
caml_session_get_surface (CamlSession *self, const float **chi, const float **sensitive_part,
                          const float **free_part)
{
  if (chi != NULL)
    *chi = self->chi;
  if (sensitive_part != NULL)
    *sensitive_part = self->sensitive_part;
  if (free_part != NULL)
    *free_part = self->free_part;
  return self->surface_version != 0 ? self->fit : NULL;
}

int
caml_session_get_parts_layer (CamlSession *self)
{
  return self->run != NULL ? self->parts_layer : -1;
}

gboolean
caml_session_has_parts (CamlSession *self)
{
  return self->run != NULL && self->has_parts;
}

int
caml_session_get_sigma_count (CamlSession *self)
{
  return self->n_sigma;
}

const CamlLayerStats *
caml_session_get_layer_stats (CamlSession *self)
{
  return self->layer_stats;
}

const float *
caml_session_get_words (CamlSession *self, const float **probabilities,
                        const float **token_chi)
{
  if (probabilities != NULL)
    *probabilities = self->word_probs;
  if (token_chi != NULL)
    *token_chi = self->token_chi;
  return self->word_chi;
}

long
caml_session_get_resume_step (CamlSession *self)
{
  return self->run != NULL ? caml_run_get_checkpoint_step (self->run) : -1;
}

/* ------------------------------------------------------------ lifecycle */

void
caml_session_close (CamlSession *self)
{
  /* Jobs still under way end without touching the session. */
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  pace_stop (self);
  sweep_close (self);
  discard_run (self);   /* joins the trainer thread: no more notifications */
  g_clear_handle_id (&self->build_source, g_source_remove);
}

static void
clear_event (gpointer p)
{
  g_free (((CamlSessionEvent *) p)->text);
}

static void
caml_session_dispose (GObject *object)
{
  CamlSession *self = CAML_SESSION (object);

  caml_session_close (self);
  forget_previous (self);
  runs_clear (self);
  g_clear_object (&self->sweep);
  g_clear_pointer (&self->set_aside, set_aside_free);
  invalidate_data (self);
  g_clear_pointer (&self->pending_weights, g_free);
  g_clear_pointer (&self->loaded_weights, g_free);
  g_clear_pointer (&self->pending_state, g_free);
  g_clear_pointer (&self->loaded_state, g_free);
  g_clear_pointer (&self->opening_run, g_free);
  g_clear_pointer (&self->files_chosen, g_strfreev);
  g_clear_pointer (&self->clean_exp, caml_experiment_free);
  g_clear_pointer (&self->exp, caml_experiment_free);
  g_clear_pointer (&self->path, g_free);
  g_clear_pointer (&self->origin, g_free);
  g_clear_pointer (&self->events, g_array_unref);
  g_clear_pointer (&self->layer_stats, caml_layer_stats_free);
  g_clear_pointer (&self->data_text, g_free);
  g_clear_pointer (&self->data_shape_error, g_free);
  /* A session that goes without closing its window keeps its autosave file. */
  g_clear_handle_id (&self->autosave_source, g_source_remove);
  g_clear_pointer (&self->autosave_id, g_free);
  G_OBJECT_CLASS (caml_session_parent_class)->dispose (object);
}

static void
caml_session_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  CamlSession *self = CAML_SESSION (object);

  switch (prop_id)
    {
    case PROP_STATE:
      g_value_set_int (value, caml_session_get_state (self));
      break;
    case PROP_MODIFIED:
      g_value_set_boolean (value, self->dirty);
      break;
    case PROP_PATH:
      g_value_set_string (value, self->path);
      break;
    case PROP_DATA_CHOICE:
      g_value_set_int (value, caml_session_get_data_choice (self));
      break;
    case PROP_COMPARE:
      g_value_set_boolean (value, self->compare);
      break;
    case PROP_SPEED:
      g_value_set_int (value, self->speed);
      break;
    case PROP_MARKED_STEP:
      g_value_set_long (value, self->marked_step);
      break;
    case PROP_CONTINUOUS:
      g_value_set_boolean (value, self->continuous);
      break;
    case PROP_RUNS:
      g_value_set_object (value, self->runs);
      break;
    case PROP_SWEEP:
      g_value_set_object (value, self->sweep);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
caml_session_set_property (GObject *object, guint prop_id, const GValue *value,
                           GParamSpec *pspec)
{
  CamlSession *self = CAML_SESSION (object);

  switch (prop_id)
    {
    case PROP_COMPARE:
      caml_session_set_compare (self, g_value_get_boolean (value));
      break;
    case PROP_SPEED:
      caml_session_set_speed (self, g_value_get_int (value));
      break;
    case PROP_MARKED_STEP:
      caml_session_set_marked_step (self, g_value_get_long (value));
      break;
    case PROP_CONTINUOUS:
      caml_session_set_continuous (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
caml_session_class_init (CamlSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = caml_session_dispose;
  object_class->get_property = caml_session_get_property;
  object_class->set_property = caml_session_set_property;

  /* The trainer's state as shown (a CamlTrainerState); notified whenever
   * what can be done or what the progress line says changes. */
  properties[PROP_STATE] =
    g_param_spec_int ("state", NULL, NULL, CAML_TRAINER_IDLE, CAML_TRAINER_FAILED,
                      CAML_TRAINER_IDLE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_MODIFIED] =
    g_param_spec_boolean ("modified", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_PATH] =
    g_param_spec_string ("path", NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /* The data the picker shows (a CamlDataKind): those chosen while they
   * load, else those in use. */
  properties[PROP_DATA_CHOICE] =
    g_param_spec_int ("data-choice", NULL, NULL, 0, CAML_N_DATA_KINDS - 1, 0,
                      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /* Compare with Baseline: a setting. Each run that Train (or Step) starts
   * while it is on gets its matched baseline; turned on beside a run that
   * has ended, the baseline alone trains to that run's step. Turning it on
   * never starts the run itself. */
  properties[PROP_COMPARE] =
    g_param_spec_boolean ("compare", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* Steps a tick (caml_session_set_speed), 0: full speed. */
  properties[PROP_SPEED] =
    g_param_spec_int ("speed", NULL, NULL, 0, CAML_SESSION_MAX_SPEED, 0,
                      G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* The step looked at, marked on the plots by step; -1: none. */
  properties[PROP_MARKED_STEP] =
    g_param_spec_long ("marked-step", NULL, NULL, -1, G_MAXLONG, -1,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* Train until stopped. */
  properties[PROP_CONTINUOUS] =
    g_param_spec_boolean ("continuous", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* The runs kept (a GListModel of CamlRunRecord), oldest first. */
  properties[PROP_RUNS] =
    g_param_spec_object ("runs", NULL, NULL, G_TYPE_LIST_MODEL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /* The last sweep started (a CamlSweep), or NULL. */
  properties[PROP_SWEEP] =
    g_param_spec_object ("sweep", NULL, NULL, CAML_TYPE_SWEEP,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  signals[SIGNAL_PROGRESS] =
    g_signal_new ("progress", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
  signals[SIGNAL_NOTICE] =
    g_signal_new ("notice", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_BOOLEAN);
  signals[SIGNAL_ERROR] =
    g_signal_new ("error", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_STRING);
  signals[SIGNAL_WAITING] =
    g_signal_new ("waiting", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_STRING);
  signals[SIGNAL_DATA_CHANGED] =
    g_signal_new ("data-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_EXPERIMENT_CHANGED] =
    g_signal_new ("experiment-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                  NULL, NULL, G_TYPE_NONE, 0);
}

void
caml_session_set_marked_step (CamlSession *self, long step)
{
  g_return_if_fail (CAML_IS_SESSION (self));
  step = MAX (step, -1);
  if (step == self->marked_step)
    return;
  self->marked_step = step;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MARKED_STEP]);
}

long
caml_session_get_marked_step (CamlSession *self)
{
  return self->marked_step;
}

static void
caml_session_init (CamlSession *self)
{
  self->marked_step = -1;
  self->events = g_array_new (FALSE, TRUE, sizeof (CamlSessionEvent));
  g_array_set_clear_func (self->events, clear_event);
  self->saved_step = -1;
  self->progress.state = CAML_TRAINER_IDLE;
  self->parts_layer = -1;
  self->parts_preferred = -1;
  self->shown_kind = -1;
  self->cancellable = g_cancellable_new ();
  self->exp = caml_experiment_new_default ();
  self->clean_exp = caml_experiment_copy (self->exp);
  runs_init (self);
}

CamlSession *
caml_session_new (void)
{
  return g_object_new (CAML_TYPE_SESSION, NULL);
}
