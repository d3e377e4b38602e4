/* caml-session-jobs.c — the session's work on worker threads: loading
 * data, building runs and baselines, loading weights, sampling parts, and
 * writing weights, runs and words pages. Every job works on copies and
 * comes back to the main thread, which drops a result whose data, run or
 * request changed meanwhile (serial numbers) or whose session closed (its
 * cancellable). */
#include <string.h>

#include "caml-session-private.h"
#include "caml-data-source.h"
#include "figures.h"
#include "report.h"

/* Jobs under way in every session (tests wait for them). */
static gint jobs_in_flight;

struct _Job {
  JobKind         kind;
  CamlSession    *session;      /* the run's notify data; never touched on the worker */
  CamlExperiment *exp;          /* a copy: what to load and build */
  char           *files[4];     /* JOB_FILES: the files chosen (IDX: in any order; text: */
  int             n_files;      /* training, test), or none: those exp names */
  gboolean        alone;        /* JOB_BASELINE: for a run that has ended, to its steps */
  char           *weights;      /* a weights file to load into the run built (a copy) */
  char           *state;        /* … and a trainer.state to go on from, or NULL */
  guint           weights_serial;
  guint           data_serial;
  guint           files_serial;   /* JOB_FILES: which choice of files */
  guint           run_serial;
  GApplication   *app;          /* held while the job runs, so the process waits for it */
  /* results */
  CamlRunData    *data;         /* JOB_RUN: given; others: loaded */
  CamlRun        *run;
  char           *data_error;
  char           *run_error;
  char           *weights_error;  /* the run is built, its weights could not be loaded */
  char           *state_error;    /* … its weights loaded, its state not: it starts afresh */
  int             parts_layer;    /* JOB_RUN…: the CA-NN whose parts to sample; JOB_PARTS: */
  float          *w;              /* the weights of the run (a copy) */
  size_t          n_weights;
  int             grid;
  float          *parts_sensitive;     /* results: (grid × grid) each */
  float          *parts_free;
};

/* Main thread, when the job's results have been used (or dropped): the
 * task itself may be finalised on the worker thread, so nothing that
 * belongs to the main thread waits for job_free. */
static void
job_release (Job *job)
{
  g_clear_pointer (&job->run, caml_run_free);   /* a run never installed: not started */
  g_clear_pointer (&job->data, caml_run_data_unref);
  if (job->app != NULL)
    {
      g_application_release (job->app);
      g_clear_object (&job->app);
    }
}

static void
job_free (gpointer p)
{
  Job *job = p;
  job_release (job);   /* nothing left when the job was done */
  caml_experiment_free (job->exp);
  for (int i = 0; i < 4; i++)
    g_free (job->files[i]);
  g_free (job->data_error);
  g_free (job->run_error);
  g_free (job->weights);
  g_free (job->weights_error);
  g_free (job->state);
  g_free (job->state_error);
  g_free (job->w);
  g_free (job->parts_sensitive);
  g_free (job->parts_free);
  g_free (job);
}

/* Worker thread: engine calls only, on the job's own copies. The run is
 * built with the session as its notify data; nothing notifies before its
 * trainer starts, which happens on the main thread. */
static void
job_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Job *job = task_data;
  g_autoptr (GError) error = NULL;

  if (job->kind == JOB_FILES && job->exp->data.kind == CAML_DATA_IDX)
    {
      char *ordered[4];
      if (!caml_data_source_order_idx ((const char *const *) job->files, job->n_files, ordered,
                                       &error))
        {
          job->data_error = g_strdup (error->message);
          g_task_return_boolean (task, TRUE);
          return;
        }
      for (int i = 0; i < 4; i++)
        {
          g_free (job->exp->data.idx_paths[i]);
          job->exp->data.idx_paths[i] = ordered[i];
        }
    }
  if (job->kind == JOB_PARTS)
    {
      /* The layers only, with the run's weights: a model of the job's own. */
      CamlModel *model = caml_experiment_build_model (job->exp, &job->data->train->x_shape,
                                                      &error);
      if (model != NULL && model->n_weights == job->n_weights)
        {
          size_t cells = (size_t) job->grid * job->grid;
          memcpy (model->w, job->w, job->n_weights * sizeof (float));
          job->parts_sensitive = g_new (float, cells);
          job->parts_free = g_new (float, cells);
          if (!caml_model_sample_grid_parts (model, job->exp->plot_domain, job->grid, job->grid,
                                             job->parts_layer, job->parts_sensitive,
                                             job->parts_free, NULL))
            g_clear_pointer (&job->parts_sensitive, g_free);
        }
      caml_model_free (model);
      g_task_return_boolean (task, TRUE);
      return;
    }
  if (job->kind != JOB_RUN && job->kind != JOB_WEIGHTS && job->kind != JOB_BASELINE)
    {
      gint64 start = g_get_monotonic_time ();
      job->data = caml_run_data_load (job->exp, &error);
      g_debug ("loaded the %s data in %.2f s", caml_data_kind_names[job->exp->data.kind],
               (g_get_monotonic_time () - start) / 1e6);
      if (job->data == NULL)
        {
          job->data_error = g_strdup (error->message);
          g_task_return_boolean (task, TRUE);
          return;
        }
    }
  /* Every job but JOB_FILES (and JOB_PARTS, above) builds a run. */
  if (job->kind != JOB_FILES && !g_cancellable_is_cancelled (cancellable))
    {
      /* The baseline's surface is never shown: the smallest grid. */
      int grid = job->kind == JOB_BASELINE ? 2 : CAML_FIGURE_GRID;
      gboolean weights = job->weights != NULL && job->kind != JOB_BASELINE;
      /* Weights from a file replace the word vectors: they are read only
       * if the weights cannot be loaded and the run stays as built. */
      job->run = (weights ? caml_run_new_for_weights : caml_run_new)
        (job->exp, job->data, grid, job->parts_layer, session_on_run_notify, job->session, &error);
      if (job->run == NULL)
        job->run_error = g_strdup (error->message);
      else if (job->kind == JOB_BASELINE)
        caml_run_set_keep_checkpoints (job->run, FALSE);   /* never continued */
      /* Its trainer has not started: the weights load on this thread. */
      else if (weights && !caml_run_load_weights (job->run, job->weights, &error))
        {
          job->weights_error = g_strdup (error->message);
          g_clear_error (&error);
          g_clear_pointer (&job->run, caml_run_free);
          /* JOB_WEIGHTS: the current run stays, nothing to build */
          if (job->kind != JOB_WEIGHTS && !g_cancellable_is_cancelled (cancellable)
              && !(job->run = caml_run_new (job->exp, job->data, grid, job->parts_layer,
                                            session_on_run_notify, job->session, &error)))
            job->run_error = g_strdup (error->message);
        }
      else if (job->weights != NULL && job->state != NULL
               && !caml_run_load_state (job->run, job->state, &error))
        job->state_error = g_strdup (error->message);   /* the run is as built */
    }
  g_task_return_boolean (task, TRUE);
}


/* Data chosen that loaded: they become the data (their kind and the paths
 * of chosen files, from the job's copy), and only now does the run go —
 * with the previous run, whose losses were on other data. */
static void
commit_files (CamlSession *self, Job *job)
{
  CamlDataConfig *data = &self->exp->data;
  const CamlDataConfig *chosen = &job->exp->data;

  if (chosen->kind == CAML_DATA_IDX)
    for (int i = 0; i < 4; i++)
      {
        g_free (data->idx_paths[i]);
        data->idx_paths[i] = g_strdup (chosen->idx_paths[i]);
      }
  else if (chosen->kind == CAML_DATA_TEXT)
    for (int i = 0; i < 2; i++)
      {
        g_free (data->text_paths[i]);
        data->text_paths[i] = g_strdup (chosen->text_paths[i]);
      }
  data->kind = chosen->kind;
  discard_run (self);
  forget_previous (self);
  invalidate_data (self);
  install_data (self, g_steal_pointer (&job->data));
  adapt_to_data (self);
  sync_data_choice (self);
  session_clear_error (self);
  mark_dirty (self);
  prepare_run (self);
}


static void job_done (CamlSession *self, Job *job);

/* Main thread, when a job has ended. Results for a data config or a run that
 * has changed since are dropped. */
static void
on_job_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (CamlSession) self = user_data;   /* the task's reference (job_run) */
  Job *job = g_task_get_task_data (G_TASK (result));

  g_atomic_int_add (&jobs_in_flight, -1);
  if (self->cancellable != NULL && !g_cancellable_is_cancelled (self->cancellable))
    job_done (self, job);   /* else the session is closed */
  job_release (job);
}

static void
job_done (CamlSession *self, Job *job)
{
  if (job->kind == JOB_FILES)
    {
      /* Other data were chosen meanwhile, or those in use again. */
      if (job->files_serial != self->files_serial)
        return;
      self->files_loading = FALSE;
      /* Reload Data pressed meanwhile, or a new seed that the data in use
       * follow, read the data in use again, not these: this read was under
       * way and counts (a second one of a slow set such as IMDB would
       * double the wait). A new seed that these data follow makes them
       * again, from the experiment as it is now (Train pressed meanwhile
       * still waits). */
      if (data_follow_seed (job->exp) && job->exp->seed != self->exp->seed)
        {
          choose_data (self, job->exp->data.kind, (const char *const *) job->files,
                       job->n_files);
          return;
        }
      /* Nothing changes when they did not load — and Train pressed
       * meanwhile does not start on the data in use; the engine's message
       * says why. Nor when the run went on meanwhile (Resume after Steps
       * were raised, Continue after a divergence): the data stay as they
       * are while a run trains or is paused. */
      const char *why = job->data == NULL ? job->data_error
                        : run_active (self) ? "the run went on while they loaded (choose them "
                                              "again once it has ended)"
                        : NULL;
      if (why != NULL)
        refuse_choice (self, job->exp->data.kind, why);
      else
        commit_files (self, job);
      session_changed (self);
      return;
    }

  if (job->kind == JOB_PARTS)
    {
      self->parts_sampling--;
      if (job->run_serial == self->run_serial && self->run != NULL && job->parts_sensitive != NULL
          && caml_run_put_parts (self->run, job->parts_layer, job->parts_sensitive,
                                 job->parts_free))
        update_from_run (self);
      session_changed (self);
      return;
    }

  if (job->kind == JOB_BASELINE)
    {
      if (job->run_serial == self->run_serial && self->baseline_building)
        install_baseline (self, job);
      session_changed (self);
      return;
    }

  /* Its weights are still the ones asked for: this job uses the request up. */
  gboolean weights_current = job->weights != NULL && job->weights_serial == self->weights_serial;

  if (job->kind == JOB_WEIGHTS)
    {
      if (job->run_serial == self->run_serial && self->run != NULL && weights_current)
        {
          if (job->weights_error != NULL || job->run == NULL)
            {
              /* A failed load changes nothing: the current run stays, and
               * Train pressed meanwhile is not started from other weights. */
              set_pending_load (self, NULL, NULL);
              self->pending = PENDING_NONE;
              self->announce_load = FALSE;
              g_clear_pointer (&self->opening_run, g_free);
              session_error (self, job->weights_error != NULL ? job->weights_error
                                      : job->run_error != NULL ? job->run_error
                                      : "the model could not be built");
            }
          else
            {
              set_pending_load (self, NULL, NULL);
              discard_run (self);
              g_free (self->loaded_weights);
              self->loaded_weights = g_strdup (job->weights);
              self->loaded_state = job->state_error == NULL ? g_strdup (job->state) : NULL;
              install_run (self, g_steal_pointer (&job->run));
              announce_loaded (self, job->weights, job->state, job->state_error);
            }
        }
      /* else: the run or the weights asked for changed meanwhile (and
       * weights_loading was cleared then); what is pending is, or will be,
       * built by another job. */
      session_changed (self);
      return;
    }

  if (job->kind == JOB_DATA)
    {
      if (job->data_serial != self->data_serial)
        return;
      if (job->data == NULL)
        {
          set_data_error (self, job->data_error);
          self->run_building = FALSE;
          g_clear_handle_id (&self->build_source, g_source_remove);   /* nothing to be quiet for */
          if (!self->files_loading)   /* else Train waits for the data chosen */
            self->pending = PENDING_NONE;
          session_waiting (self, CAML_SESSION_WAIT_NO_DATA, "the data could not be read");
          session_changed (self);
          session_changed (self);
          return;
        }
      install_data (self, g_steal_pointer (&job->data));
    }

  if (job->run_serial != self->run_serial || self->run != NULL)
    {
      /* The model changed while this one was built: build the current one
       * (weights asked for stay pending in the window). */
      if (self->run == NULL && !self->run_building)
        prepare_run (self);
      return;
    }
  self->run_building = FALSE;
  if (job->run != NULL && caml_session_model_fits (self))
    {
      if (weights_current)
        {
          set_pending_load (self, NULL, NULL);
          g_free (self->loaded_weights);
          self->loaded_weights = job->weights_error == NULL ? g_strdup (job->weights) : NULL;
          g_free (self->loaded_state);
          self->loaded_state = job->weights_error == NULL && job->state_error == NULL
                               ? g_strdup (job->state) : NULL;
          if (job->weights_error != NULL || job->state_error != NULL)
            self->pending = PENDING_NONE;   /* not started from weights not asked for */
        }
      install_run (self, g_steal_pointer (&job->run));
      if (weights_current && job->weights_error != NULL)
        {
          self->announce_load = FALSE;
          g_clear_pointer (&self->opening_run, g_free);
          session_error (self, job->weights_error);
        }
      else if (weights_current)
        announce_loaded (self, job->weights, job->state, job->state_error);
    }
  else if (job->run == NULL && job->run_error == NULL)
    prepare_run (self);   /* not built yet (the data came first): build it now */
  else
    {
      /* weights that failed to load, then a build without them that failed
       * too: both are said, the weights first */
      g_autofree char *both = weights_current && job->weights_error != NULL
                              && job->run_error != NULL
                              ? g_strdup_printf ("%s; and without them: %s", job->weights_error,
                                                 job->run_error)
                              : NULL;
      if (weights_current && job->weights_error != NULL)
        {
          self->announce_load = FALSE;
          g_clear_pointer (&self->opening_run, g_free);
        }
      if (job->run_error != NULL && caml_session_model_fits (self))
        session_error (self, both != NULL ? both : job->run_error);
      /* Not built again (it would fail again) until the experiment changes. */
      g_free (self->build_error);
      self->build_error = g_strdup (job->run_error != NULL ? job->run_error
                                                           : "the model could not be built");
      g_clear_handle_id (&self->build_source, g_source_remove);   /* nothing to be quiet for */
      if (!self->files_loading)   /* else Train waits for the data chosen */
        self->pending = PENDING_NONE;
      set_pending_load (self, NULL, NULL);
      prepare_run (self);   /* shows why there is no run */
    }
  session_changed (self);
}

/* A job on a copy of exp, as things stand now. */
static Job *
job_new (CamlSession *self, JobKind kind)
{
  Job *job = g_new0 (Job, 1);
  GApplication *app = g_application_get_default ();

  job->kind = kind;
  job->session = self;
  job->exp = caml_experiment_copy (self->exp);
  job->data_serial = self->data_serial;
  job->run_serial = self->run_serial;
  job->weights = g_strdup (self->pending_weights);
  job->state = g_strdup (self->pending_state);
  job->weights_serial = self->weights_serial;
  job->parts_layer = self->parts_preferred;
  if (app != NULL)
    {
      job->app = g_object_ref (app);
      g_application_hold (job->app);
    }
  return job;
}

static void
job_run (CamlSession *self, Job *job)
{
  g_atomic_int_add (&jobs_in_flight, 1);
  /* The session is the callback's data, released there on the main thread:
   * as the task's source object it would be released with the task's last
   * reference, which the worker may hold — finalizing a closed window's
   * session on the worker (a crash seen in the GUI tests). */
  GTask *task = g_task_new (NULL, self->cancellable, on_job_done, g_object_ref (self));
  g_task_set_name (task, "caml-session-job");
  g_task_set_task_data (task, job, job_free);
  g_task_run_in_thread (task, job_thread);
  g_object_unref (task);
  session_changed (self);
}

/* Every job but JOB_FILES (choose_data). */
void
start_job (CamlSession *self, JobKind kind)
{
  Job *job = job_new (self, kind);

  switch (kind)
    {
    case JOB_DATA:
      self->data_loading = TRUE;
      self->run_building = TRUE;   /* the run is built too */
      /* Built-in data of the kind shown have the shapes shown: the label
       * and the editor stay as they are (quietly, see prepare_run). */
      if (kind_from_files (self->exp->data.kind) || self->shown_kind != (int) self->exp->data.kind)
        show_data_loading (self);
      break;
    case JOB_RUN:
      job->data = caml_run_data_ref (self->data);
      self->run_building = TRUE;
      break;
    case JOB_WEIGHTS:
      job->data = caml_run_data_ref (self->data);
      self->weights_loading = TRUE;
      break;
    case JOB_BASELINE:
      /* Every CA layer replaced by its plain counterpart, at the learning
       * rate and em_steps the run has now, not those it started with. */
      caml_experiment_free (job->exp);
      job->exp = caml_experiment_make_baseline (caml_run_get_experiment (self->run));
      job->exp->optimizer.lr = caml_run_get_lr (self->run);
      job->exp->optimizer.em_steps = caml_run_get_em_steps (self->run);
      {
        /* A run that has ended: its baseline trains alone, as many steps. */
        CamlProgress p;
        caml_run_get_progress (self->run, &p);
        job->alone = self->run_started && (p.state == CAML_TRAINER_FINISHED
                                           || p.state == CAML_TRAINER_STOPPED);
        if (job->alone)
          job->exp->steps = (int) CLAMP (p.step, 1, G_MAXINT);
      }
      job->data = caml_run_data_ref (self->data);
      g_clear_pointer (&job->weights, g_free);   /* the run's file is not the baseline's */
      g_clear_pointer (&job->state, g_free);
      job->parts_layer = -1;
      self->baseline_building = TRUE;
      break;
    case JOB_PARTS:
      caml_experiment_free (job->exp);
      job->exp = caml_experiment_copy (caml_run_get_experiment (self->run));
      job->data = caml_run_data_ref (caml_run_get_data (self->run));
      g_clear_pointer (&job->weights, g_free);
      g_clear_pointer (&job->state, g_free);
      job->parts_layer = caml_run_get_parts_layer (self->run);
      job->w = caml_run_copy_weights (self->run);
      job->n_weights = caml_run_get_n_weights (self->run);
      job->grid = caml_run_get_grid (self->run);
      self->parts_sampling++;
      break;
    case JOB_FILES:
      g_assert_not_reached ();
    }
  job_run (self, job);
}

/* Whether the data chosen that are loading are kind from files. */
static gboolean
choice_under_way (CamlSession *self, CamlDataKind kind, const char *const *files, int n_files)
{
  if (!self->files_loading || self->files_kind != kind
      || g_strv_length (self->files_chosen) != (guint) n_files)
    return FALSE;
  for (int i = 0; i < n_files; i++)
    if (g_strcmp0 (self->files_chosen[i], files[i]) != 0)
      return FALSE;
  return TRUE;
}

/* Loads the data chosen — of kind, from files (IDX: four in any order;
 * text: the training and the test file) or, with none, from those exp
 * names — on a worker thread, from a copy of exp; they become the data
 * only if they load (commit_files). A choice made meanwhile replaces this
 * one; the same choice again (its menu item pressed again) changes
 * nothing: they are read once. Train and Step pressed meanwhile wait for
 * it (start_run); a change of the seed they follow loads it again
 * (job_done), Reload Data does not. */
void
choose_data (CamlSession *self, CamlDataKind kind, const char *const *files, int n_files)
{
  if (choice_under_way (self, kind, files, n_files))
    return;

  Job *job = job_new (self, JOB_FILES);
  CamlDataConfig *data = &job->exp->data;

  data->kind = kind;   /* IDX: the paths once the worker has ordered the files */
  for (int i = 0; i < n_files && i < 4; i++)
    job->files[i] = g_strdup (files[i]);
  job->n_files = n_files;
  if (kind == CAML_DATA_TEXT && n_files == 2)
    for (int i = 0; i < 2; i++)
      {
        g_free (data->text_paths[i]);
        data->text_paths[i] = g_strdup (files[i]);
      }
  job->files_serial = ++self->files_serial;
  self->files_loading = TRUE;
  self->files_kind = kind;
  g_strfreev (self->files_chosen);
  self->files_chosen = g_new0 (char *, n_files + 1);
  for (int i = 0; i < n_files; i++)
    self->files_chosen[i] = g_strdup (files[i]);
  sync_data_choice (self);   /* the drop-down and the menu show them while they load */
  /* Built-in data are made in a moment: no spinner for them (see
   * prepare_run). */
  if (!kind_from_files (kind))
    start_build_quiet (self);
  job_run (self, job);
  session_changed (self);
}


/* Main thread: the baseline built for the current run is there. It starts
 * as the run is now (paused or training, at its learning rate and
 * em_steps), or alone when the run has ended since (finished, or stopped
 * before the baseline was asked for). */
void
install_baseline (CamlSession *self, Job *job)
{
  g_autoptr (GError) error = NULL;

  self->baseline_building = FALSE;
  if (job->run == NULL)
    {
      g_autofree char *text = g_strdup_printf ("Cannot build the baseline: %s", job->run_error);
      session_error (self, text);
      return;
    }
  /* The run's state now, not at the window's last update (which may be
   * before a Stop or a Pause). */
  CamlProgress p;
  caml_run_get_progress (self->run, &p);
  gboolean alongside = p.state == CAML_TRAINER_RUNNING || p.state == CAML_TRAINER_PAUSED;
  gboolean after = p.state == CAML_TRAINER_FINISHED
                   || (job->alone && p.state == CAML_TRAINER_STOPPED);
  if (!self->run_started || !self->compare || !(alongside || after))
    {
      if (self->compare && self->run_started)
        session_notice (self, "The run ended before its baseline was built: no baseline trained",
                        TRUE);
      return;   /* job_release frees it */
    }
  self->baseline = g_steal_pointer (&job->run);
  caml_run_set_lr (self->baseline, caml_run_get_lr (self->run));
  caml_run_set_em_steps (self->baseline, caml_run_get_em_steps (self->run));
  self->base_state = CAML_TRAINER_IDLE;
  runs_forget_current (self, TRUE);   /* a new baseline: a record of its own */
  if (!caml_trainer_start (caml_run_get_trainer (self->baseline),
                           p.state == CAML_TRAINER_PAUSED, &error))
    {
      session_error (self, error->message);
      g_clear_pointer (&self->baseline, caml_run_free);
    }
  else if (after)
    {
      g_autofree char *text = g_strdup_printf ("Training the baseline to step %ld", p.step);
      session_notice (self, text, FALSE);
    }
}


typedef int WriteKind;   /* WRITE_WEIGHTS, WRITE_WORDS, WRITE_RUN */

typedef struct {
  WriteKind       kind;
  CamlExperiment *exp;
  CamlRunData    *data;
  float          *w;
  size_t          n_weights;
  guint           run_serial;  /* the run whose weights these are … */
  long            step;        /* … at this step */
  guint           set_aside;   /* or the set-aside weights with this serial (0: not) */
  char           *path;
  CamlRunResumable *resumable;  /* WRITE_RUN: what is written (no model is built) */
  GApplication   *app;       /* held while the job runs */
  char           *error;
} WriteJob;

static void
write_job_free (gpointer p)
{
  WriteJob *job = p;
  caml_experiment_free (job->exp);
  caml_run_resumable_free (job->resumable);
  g_free (job->w);
  g_free (job->path);
  g_free (job->error);
  g_free (job);
}

/* Worker thread: engine calls on the job's copies only. */
static void
write_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  WriteJob *job = task_data;
  g_autoptr (GError) error = NULL;
  if (job->kind == WRITE_RUN)
    {
      if (!caml_run_resumable_write (job->resumable, job->path, &error))
        job->error = g_strdup (error->message);
      g_task_return_boolean (task, TRUE);
      return;
    }
  /* The layers only: the weights are the run's (no word vectors to read). */
  CamlModel *model = caml_experiment_build_model (job->exp, &job->data->train->x_shape, &error);
  gboolean ok = model != NULL;
  if (ok)
    caml_model_set_vocab (model, job->data->train->vocab);   /* recorded in the weights file */
  if (ok && model->n_weights != job->n_weights)
    {
      g_set_error (&error, CAML_ERROR, CAML_ERROR_INVALID,
                   "%s: the model has %zu weights, the run %zu", job->path, model->n_weights,
                   job->n_weights);
      ok = FALSE;
    }
  if (ok)
    {
      memcpy (model->w, job->w, job->n_weights * sizeof (float));
      if (job->kind == WRITE_WEIGHTS)
        ok = caml_weights_save (model, job->path, &error);
      else
        {
          g_autofree char *title = caml_run_results_title (job->exp);
          gboolean written = FALSE;
          ok = caml_report_write_words_on (job->path, NULL, title, model, job->exp,
                                           job->data->train, job->data->test,
                                           CAML_RUN_WORDS_SAMPLES, CAML_RUN_WORDS_MIN_COUNT,
                                           CAML_RUN_WORDS_TOP,
                                           &written, &error);
          if (ok && !written)
            {
              g_set_error (&error, CAML_ERROR, CAML_ERROR_INVALID,
                           "this model has no gate over words to show");
              ok = FALSE;
            }
        }
    }
  if (!ok)
    job->error = g_strdup (error->message);
  caml_model_free (model);
  g_task_return_boolean (task, TRUE);
}

/* Main thread: report a failure; release what belongs to the main thread. */
static void
on_write_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (CamlSession) self = user_data;   /* the task's reference (start_write) */
  WriteJob *job = g_task_get_task_data (G_TASK (result));

  g_atomic_int_add (&jobs_in_flight, -1);
  if (self->cancellable != NULL && !g_cancellable_is_cancelled (self->cancellable))
    {
      if (job->error != NULL)
        session_error (self, job->error);
      else
        {
          if ((job->kind == WRITE_WEIGHTS || job->kind == WRITE_RUN) && job->set_aside == 0)
            {
              self->saved_serial = job->run_serial;
              self->saved_step = job->step;
            }
          else if (job->kind == WRITE_WEIGHTS && self->set_aside != NULL
                   && job->set_aside == self->set_aside->serial)
            {
              /* Saved: they need no keeping, and the banner goes. */
              g_clear_pointer (&self->set_aside, set_aside_free);
              session_clear_error (self);
              session_changed (self);
            }
          session_done (self, job->kind == WRITE_WEIGHTS ? "Saved the weights to"
                           : job->kind == WRITE_RUN ? "Saved the run (caml train --resume "
                                                      "goes on with it) to"
                           : "Wrote the words page to", job->path);
        }
    }
  g_clear_pointer (&job->data, caml_run_data_unref);
  if (job->app != NULL)
    {
      g_application_release (job->app);
      g_clear_object (&job->app);
    }
}

/* Writes the run's weights (or words page), or with set_aside those
 * weights, on a worker thread. */
void
start_write (CamlSession *self, int kind, const char *path, SetAside *set_aside)
{
  if (self->run == NULL && set_aside == NULL)
    {
      session_error (self, "There is no model to save yet.");
      return;
    }
  WriteJob *job = g_new0 (WriteJob, 1);
  GApplication *app = g_application_get_default ();
  job->kind = kind;
  if (kind == WRITE_RUN)
    {
      /* Taken here, between the run's steps: the weights, the optimizer's
       * state and the experiment as they are now. */
      g_autoptr (GError) error = NULL;
      job->resumable = caml_run_take_resumable (self->run, &error);
      if (job->resumable == NULL)
        {
          g_autofree char *text = g_strdup_printf ("Cannot save the run: %s", error->message);
          session_error (self, text);
          write_job_free (job);
          return;
        }
      job->run_serial = self->run_serial;
      job->step = caml_run_resumable_get_step (job->resumable);
    }
  else if (set_aside != NULL)
    {
      job->exp = caml_experiment_copy (set_aside->exp);
      job->data = caml_run_data_ref (set_aside->data);
      job->w = g_memdup2 (set_aside->w, set_aside->n_weights * sizeof (float));
      job->n_weights = set_aside->n_weights;
      job->set_aside = set_aside->serial;
    }
  else
    {
      CamlProgress p;
      caml_run_get_progress (self->run, &p);
      job->exp = caml_experiment_copy (caml_run_get_experiment (self->run));
      job->data = caml_run_data_ref (caml_run_get_data (self->run));
      job->w = caml_run_copy_weights (self->run);
      job->n_weights = caml_run_get_n_weights (self->run);
      job->run_serial = self->run_serial;
      job->step = p.step;
    }
  job->path = g_strdup (path);
  if (app != NULL)
    {
      job->app = g_object_ref (app);
      g_application_hold (job->app);
    }
  g_atomic_int_add (&jobs_in_flight, 1);
  /* The session is the callback's data, not the source object (job_run). */
  GTask *task = g_task_new (NULL, self->cancellable, on_write_done, g_object_ref (self));
  g_task_set_name (task, "caml-session-write");
  g_task_set_task_data (task, job, write_job_free);
  g_task_run_in_thread (task, write_thread);
  g_object_unref (task);
}


/* The parts of the CA-NN layer chosen, when they are not the ones sampled:
 * a training run's thread samples them at its next report; otherwise a
 * worker does, on a copy of the weights (for a big model, seconds). */
void
sample_parts (CamlSession *self)
{
  if (self->run == NULL || !caml_run_parts_pending (self->run))
    return;
  CamlProgress p;
  caml_run_get_progress (self->run, &p);
  if (self->run_started && p.state == CAML_TRAINER_RUNNING)
    return;
  start_job (self, JOB_PARTS);
}


void
caml_session_load_weights (CamlSession *self, const char *path)
{
  /* Loaded into a fresh run built on a worker thread: Train continues from
   * these weights. With a run there, the fresh one is built beside it and
   * replaces it only when the file loads (a failed load changes nothing);
   * without one, the run being built (or the next) takes them. */
  /* The weights go into a run on the data in use: data chosen meanwhile
   * would replace it. */
  caml_session_cancel_choice (self, "weights were loaded meanwhile (choose them again)");
  set_pending_load (self, path, NULL);
  self->announce_load = TRUE;   /* not when a change reloads them into a rebuilt run */
  if (self->run != NULL && self->data != NULL)
    {
      start_job (self, JOB_WEIGHTS);
      session_changed (self);
    }
  else
    prepare_run (self);
}


void
caml_session_save_weights (CamlSession *self, const char *path)
{
  start_write (self, WRITE_WEIGHTS, path, NULL);
}

void
caml_session_save_run (CamlSession *self, const char *dir)
{
  start_write (self, WRITE_RUN, dir, NULL);
}

void
caml_session_save_set_aside (CamlSession *self, const char *path)
{
  if (self->set_aside == NULL)
    {
      session_error (self, "There are no set-aside weights to save.");
      return;
    }
  start_write (self, WRITE_WEIGHTS, path, self->set_aside);
}

void
caml_session_drop_set_aside (CamlSession *self)
{
  g_clear_pointer (&self->set_aside, set_aside_free);
  session_clear_error (self);
  session_changed (self);
}

void
caml_session_export_words_page (CamlSession *self, const char *path)
{
  start_write (self, WRITE_WORDS, path, NULL);
}

gboolean
caml_session_write_metrics (CamlSession *self, const char *path, GError **error)
{
  gboolean sigma = self->run != NULL && caml_run_has_sigma (self->run);
  if (self->base_n_rows == 0 && !sigma)
    return caml_report_write_metrics (path, self->rows, self->n_rows,
                                      self->progress.classification, error);
  /* caml train's columns, then the baseline's at the same steps and the
   * σ-maps' AUC of the latest snapshot at or before each row (empty where
   * there is none). */
  const char *metric = self->progress.classification ? "test_accuracy" : "test_mse";
  g_autofree double *steps = NULL, *auc = NULL;
  int n_auc = sigma ? caml_run_copy_sigma_auc (self->run, &steps, &auc) : 0;
  GString *csv = g_string_new (NULL);
  g_string_append_printf (csv, "step,train_loss,test_loss,%s,seconds", metric);
  if (self->base_n_rows > 0)
    g_string_append_printf (csv, ",baseline_train_loss,baseline_test_loss,baseline_%s", metric);
  if (sigma)
    g_string_append (csv, ",sigma_auc");
  g_string_append_c (csv, '\n');
  for (int i = 0, b = 0, s = 0; i < self->n_rows; i++)
    {
      const CamlEvalRow *r = &self->rows[i];
      g_string_append_printf (csv, "%ld,%.9g,%.9g,%.9g,%.3f", r->step, r->train_loss,
                              r->test_loss, r->test_metric, r->seconds);
      if (self->base_n_rows > 0)
        {
          while (b < self->base_n_rows && self->base_rows[b].step < r->step)
            b++;
          if (b < self->base_n_rows && self->base_rows[b].step == r->step)
            g_string_append_printf (csv, ",%.9g,%.9g,%.9g", self->base_rows[b].train_loss,
                                    self->base_rows[b].test_loss,
                                    self->base_rows[b].test_metric);
          else
            g_string_append (csv, ",,,");
        }
      if (sigma)
        {
          while (s < n_auc && steps[s] <= r->step)
            s++;
          if (s > 0)
            g_string_append_printf (csv, ",%.6f", auc[s - 1]);
          else
            g_string_append_c (csv, ',');
        }
      g_string_append_c (csv, '\n');
    }
  gboolean ok = caml_file_replace (path, csv->str, csv->len, error);
  g_string_free (csv, TRUE);
  return ok;
}

/* A job of another file (caml-session-runs.c) begins or ends. */
void
session_jobs_begin (void)
{
  g_atomic_int_add (&jobs_in_flight, 1);
}

void
session_jobs_end (void)
{
  g_atomic_int_add (&jobs_in_flight, -1);
}

int
caml_session_get_jobs_in_flight (void)
{
  return g_atomic_int_get (&jobs_in_flight) + caml_sweep_get_in_flight ();
}
