/* caml-sweep.c — a sweep under way in the workbench (caml-sweep.h): a
 * worker thread trains the plan's runs in turn, each through the results
 * writer `caml train` uses (run-results.h) into a staging directory that
 * is moved into place (results-dir.h), then rewrites the sweep's tables;
 * the main thread hears of it through idle callbacks that hold a
 * reference to the sweep. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <glib/gstdio.h>

#include "caml-sweep.h"
#include "results-dir.h"
#include "run-results.h"

#define STATUS_INTERVAL_US 200000   /* ≤ 5 progress updates a second */
#define POLL_MS            50       /* the worker looks for Cancel this often */

/* ------------------------------------------------------------ a run item */

/* What a run leaves when it ends: its figures for the tables, what it
 * trained, and for the runs list its figures and curves (has_figures: it
 * made steps). */
typedef struct {
  CamlSweepResult result;
  CamlExperiment *exp;
  gboolean        has_figures;
  CamlRunFigures  figures;
  float          *losses;
  long            n_steps;
  CamlEvalRow    *rows;
  int             n_rows;
} Ended;

static void
ended_clear (Ended *e)
{
  caml_sweep_result_clear (&e->result);
  g_clear_pointer (&e->exp, caml_experiment_free);
  g_clear_pointer (&e->losses, g_free);
  g_clear_pointer (&e->rows, g_free);
}

static void
ended_init (Ended *e)
{
  memset (e, 0, sizeof *e);
  e->result.metric = e->result.test_loss = e->result.sigma_auc = NAN;
  e->result.seconds = e->result.steps_per_second = NAN;
}

struct _CamlSweepRun {
  GObject parent_instance;
  int               index;
  int               point[2];
  gboolean          baseline;
  char             *name;
  char             *dir;
  CamlSweepRunState state;
  Ended             ended;     /* figures NaN until it ends */
  CamlRunRecord    *record;    /* weak: the session's list holds it */
};

G_DEFINE_FINAL_TYPE (CamlSweepRun, caml_sweep_run, G_TYPE_OBJECT)

static void
caml_sweep_run_finalize (GObject *object)
{
  CamlSweepRun *self = CAML_SWEEP_RUN (object);
  g_free (self->name);
  g_free (self->dir);
  ended_clear (&self->ended);
  if (self->record != NULL)
    g_object_remove_weak_pointer (G_OBJECT (self->record), (gpointer *) &self->record);
  G_OBJECT_CLASS (caml_sweep_run_parent_class)->finalize (object);
}

static void
caml_sweep_run_class_init (CamlSweepRunClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = caml_sweep_run_finalize;
}

static void
caml_sweep_run_init (CamlSweepRun *self)
{
  ended_init (&self->ended);
}

int caml_sweep_run_get_index (CamlSweepRun *self) { return self->index; }
gboolean caml_sweep_run_is_baseline (CamlSweepRun *self) { return self->baseline; }
const char *caml_sweep_run_get_name (CamlSweepRun *self) { return self->name; }
CamlSweepRunState caml_sweep_run_get_state (CamlSweepRun *self) { return self->state; }
const CamlSweepResult *caml_sweep_run_get_result (CamlSweepRun *self) { return &self->ended.result; }
const char *caml_sweep_run_get_dir (CamlSweepRun *self) { return self->dir; }
const CamlExperiment *caml_sweep_run_get_experiment (CamlSweepRun *self) { return self->ended.exp; }
CamlRunRecord *caml_sweep_run_get_record (CamlSweepRun *self) { return self->record; }

void
caml_sweep_run_get_point (CamlSweepRun *self, int index[2])
{
  index[0] = self->point[0];
  index[1] = self->point[1];
}

const CamlRunFigures *
caml_sweep_run_get_figures (CamlSweepRun *self)
{
  return self->ended.has_figures ? &self->ended.figures : NULL;
}

const float *
caml_sweep_run_get_losses (CamlSweepRun *self, long *n_steps)
{
  *n_steps = self->ended.n_steps;
  return self->ended.losses;
}

const CamlEvalRow *
caml_sweep_run_get_rows (CamlSweepRun *self, int *n_rows)
{
  *n_rows = self->ended.n_rows;
  return self->ended.rows;
}

void
caml_sweep_run_set_record (CamlSweepRun *self, CamlRunRecord *record)
{
  if (self->record != NULL)
    g_object_remove_weak_pointer (G_OBJECT (self->record), (gpointer *) &self->record);
  self->record = record;
  if (record != NULL)
    g_object_add_weak_pointer (G_OBJECT (record), (gpointer *) &self->record);
}

/* ------------------------------------------------------------ the sweep */

struct _CamlSweep {
  GObject parent_instance;

  CamlSweepPlan   *plan;
  CamlRunData     *data;        /* shared with the worker: read only */
  char            *out_dir;
  GListStore      *runs;        /* CamlSweepRun */
  CamlSweepResult *results;     /* (n_runs) the main thread's copies */
  int              n_runs;
  int              n_ended;
  gboolean         running;
  char            *problem;

  /* between the worker and the main thread */
  gint             cancelled;   /* atomic */
  gint             current;     /* atomic: the run training, -1 */
  gint             step, total; /* atomic: the run training's step, for the status line */
  gint64           last_status_us;
  gint             status_pending;  /* atomic: an idle is queued */
};

G_DEFINE_FINAL_TYPE (CamlSweep, caml_sweep, G_TYPE_OBJECT)

enum { PROP_0, PROP_RUNNING, N_PROPS };
static GParamSpec *props[N_PROPS];
enum { SIGNAL_CHANGED, SIGNAL_RUN_ENDED, N_SIGNALS };
static guint signals[N_SIGNALS];

static gint in_flight;   /* atomic */

int
caml_sweep_get_in_flight (void)
{
  return g_atomic_int_get (&in_flight);
}

static void
caml_sweep_finalize (GObject *object)
{
  CamlSweep *self = CAML_SWEEP (object);
  for (int i = 0; i < self->n_runs; i++)
    caml_sweep_result_clear (&self->results[i]);
  g_free (self->results);
  g_clear_object (&self->runs);
  g_clear_pointer (&self->plan, caml_sweep_plan_free);
  g_clear_pointer (&self->data, caml_run_data_unref);
  g_free (self->out_dir);
  g_free (self->problem);
  G_OBJECT_CLASS (caml_sweep_parent_class)->finalize (object);
}

static void
caml_sweep_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  CamlSweep *self = CAML_SWEEP (object);
  if (id == PROP_RUNNING)
    g_value_set_boolean (value, self->running);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
}

static void
caml_sweep_class_init (CamlSweepClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->finalize = caml_sweep_finalize;
  object_class->get_property = caml_sweep_get_property;
  props[PROP_RUNNING] = g_param_spec_boolean ("running", NULL, NULL, FALSE,
                                              G_PARAM_READABLE | G_PARAM_STATIC_STRINGS
                                              | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, props);
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass),
                                          G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                          G_TYPE_NONE, 0);
  signals[SIGNAL_RUN_ENDED] = g_signal_new ("run-ended", G_TYPE_FROM_CLASS (klass),
                                            G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                            G_TYPE_NONE, 1, CAML_TYPE_SWEEP_RUN);
}

static void
caml_sweep_init (CamlSweep *self)
{
  self->runs = g_list_store_new (CAML_TYPE_SWEEP_RUN);
  self->current = -1;
}

const CamlSweepPlan *caml_sweep_get_plan (CamlSweep *self) { return self->plan; }
const char *caml_sweep_get_out_dir (CamlSweep *self) { return self->out_dir; }
GListModel *caml_sweep_get_runs (CamlSweep *self) { return G_LIST_MODEL (self->runs); }
int caml_sweep_get_n_ended (CamlSweep *self) { return self->n_ended; }
gboolean caml_sweep_is_running (CamlSweep *self) { return self->running; }
const char *caml_sweep_get_problem (CamlSweep *self) { return self->problem; }

const CamlSweepResult *
caml_sweep_get_results (CamlSweep *self, int *n)
{
  *n = self->n_runs;
  return self->results;
}

void
caml_sweep_cancel (CamlSweep *self)
{
  g_return_if_fail (CAML_IS_SWEEP (self));
  g_atomic_int_set (&self->cancelled, 1);
}

static CamlSweepRun *
run_item (CamlSweep *self, int index)
{
  /* the store holds it */
  CamlSweepRun *item = g_list_model_get_item (G_LIST_MODEL (self->runs), (guint) index);
  g_object_unref (item);
  return item;
}

/* "1,200" */
static char *
grouped (long n)
{
  return g_strdup_printf ("%'ld", n);
}

char *
caml_sweep_dup_status (CamlSweep *self, double *fraction)
{
  int current = g_atomic_int_get (&self->current);
  long step = g_atomic_int_get (&self->step), total = g_atomic_int_get (&self->total);
  double part = current >= 0 && total > 0 ? (double) step / (double) total : 0.0;
  if (fraction != NULL)
    *fraction = self->n_runs > 0 ? (self->n_ended + part) / self->n_runs : 1.0;
  int failed = 0, skipped = 0;
  for (int i = 0; i < self->n_runs; i++)
    {
      CamlSweepRunState state = run_item (self, i)->state;
      failed += state == CAML_SWEEP_RUN_FAILED;
      skipped += state == CAML_SWEEP_RUN_SKIPPED;
    }
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "%d of %d runs", self->n_ended, self->n_runs);
  if (failed > 0)
    g_string_append_printf (s, " (%d failed)", failed);
  if (current >= 0 && self->running)
    {
      g_autofree char *at = grouped (step), *of = grouped (total);
      g_string_append_printf (s, " · training %s, step %s of %s",
                              run_item (self, current)->name, at, of);
    }
  else if (!self->running)
    g_string_append (s, skipped > 0 ? " · cancelled" : " · finished");
  return g_string_free (s, FALSE);
}

/* ------------------------------------------------------ main-thread news */

typedef struct {
  CamlSweep       *sweep;
  int              index;     /* -1: none (the last news) */
  CamlSweepRunState state;
  Ended            ended;     /* with an ended state */
  char            *problem;
  gboolean         last;      /* the worker has ended */
} News;

static void
news_free (News *news)
{
  ended_clear (&news->ended);
  g_free (news->problem);
  g_object_unref (news->sweep);
  g_free (news);
}

static void
set_problem (CamlSweep *self, char *problem)
{
  if (problem == NULL)
    return;
  g_free (self->problem);
  self->problem = problem;
}

static gboolean
deliver (gpointer data)
{
  News *news = data;
  CamlSweep *self = news->sweep;
  set_problem (self, g_steal_pointer (&news->problem));
  if (news->index >= 0)
    {
      CamlSweepRun *item = run_item (self, news->index);
      gboolean ended = news->state != CAML_SWEEP_RUN_TRAINING && news->state != CAML_SWEEP_RUN_QUEUED;
      item->state = news->state;
      if (ended)
        {
          /* the news' to the item, a copy of its result to the tables' */
          caml_sweep_result_clear (&self->results[news->index]);
          self->results[news->index] = news->ended.result;
          self->results[news->index].error = g_strdup (news->ended.result.error);
          ended_clear (&item->ended);
          item->ended = news->ended;
          ended_init (&news->ended);
          if (news->state != CAML_SWEEP_RUN_SKIPPED)
            self->n_ended++;
        }
      if (ended && news->state != CAML_SWEEP_RUN_SKIPPED)
        g_signal_emit (self, signals[SIGNAL_RUN_ENDED], 0, item);
      /* the table's row shows the new state */
      g_list_model_items_changed (G_LIST_MODEL (self->runs), (guint) news->index, 1, 1);
    }
  if (news->last)
    {
      g_atomic_int_add (&in_flight, -1);   /* every piece of news is in */
      self->running = FALSE;
      g_atomic_int_set (&self->current, -1);
      g_object_notify_by_pspec (G_OBJECT (self), props[PROP_RUNNING]);
    }
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
  return G_SOURCE_REMOVE;
}

/* The worker's: news goes to the main thread in order (one default-priority
 * idle each; the main loop runs them in the order they were added). */
static void
post (News *news)
{
  g_idle_add_full (G_PRIORITY_DEFAULT, deliver, news, (GDestroyNotify) news_free);
}

static News *
news_new (CamlSweep *self, int index, CamlSweepRunState state)
{
  News *news = g_new0 (News, 1);
  news->sweep = g_object_ref (self);
  news->index = index;
  news->state = state;
  ended_init (&news->ended);
  return news;
}

static gboolean
deliver_status (gpointer data)
{
  CamlSweep *self = data;
  g_atomic_int_set (&self->status_pending, 0);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
  return G_SOURCE_REMOVE;
}

/* From the trainer thread: the step, for the progress line. */
static void
note_step (CamlSweep *self, long step, long total)
{
  g_atomic_int_set (&self->step, (gint) MIN (step, G_MAXINT));
  g_atomic_int_set (&self->total, (gint) MIN (total, G_MAXINT));
  gint64 now = g_get_monotonic_time ();
  if (now - self->last_status_us < STATUS_INTERVAL_US
      || !g_atomic_int_compare_and_exchange (&self->status_pending, 0, 1))
    return;
  self->last_status_us = now;
  g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, deliver_status, g_object_ref (self), g_object_unref);
}

/* --------------------------------------------------------------- worker */

typedef struct {
  CamlSweep       *sweep;
  CamlTrainer     *trainer;
  CamlCheckpoint  *checkpoint;
  CamlRunRecorder *rec;
} Watch;

static void
on_progress (const CamlProgress *p, gpointer user_data)
{
  Watch *w = user_data;
  caml_checkpoint_progress (w->checkpoint, w->trainer, p);
  caml_run_recorder_progress (w->rec, p);
  note_step (w->sweep, p->step, p->total_steps);
}

/* The figures of an ended run, as the session's runs list keeps them
 * (caml-session-runs.c's figures_of, from the results instead of a CamlRun). */
static void
figures_from (const CamlRunResults *r, CamlRunFigures *f)
{
  const CamlEvalRow *last = r->n_rows > 0 ? &r->rows[r->n_rows - 1] : NULL;
  f->state = r->p.state == CAML_TRAINER_FINISHED || r->p.state == CAML_TRAINER_FAILED
             ? r->p.state : CAML_TRAINER_STOPPED;
  f->step = r->p.step;
  f->classification = r->train->n_classes > 0;
  f->train_loss = r->train_loss;
  f->test_loss = last != NULL ? last->test_loss : NAN;
  f->test_metric = last != NULL ? last->test_metric : NAN;
  f->sigma_auc = r->sigma_auc;
  f->n_params = r->model->n_weights;
  double training = r->p.seconds - r->p.eval_seconds;
  f->steps_per_second = training > 0 && r->p.step > 0 ? r->p.step / training : NAN;
  f->seconds = r->p.seconds;
}

typedef struct {
  GString *problems;
} Said;

static void
on_results_say (CamlRunResultsSay kind, const char *message, gpointer user_data)
{
  Said *said = user_data;
  if (kind == CAML_RUN_RESULTS_PROBLEM)
    g_string_append_printf (said->problems, "%s%s", said->problems->len ? "; " : "", message);
}

/* The data of a run: the sweep's when they are the same as the plan's
 * experiment would load (a surface split follows the seed unless
 * data.split_seed fixes it), else its own. */
static CamlRunData *
run_data (CamlSweep *self, const CamlExperiment *exp, GError **error)
{
  const CamlExperiment *base = self->plan->exp;
  gboolean follows_seed = exp->data.kind == CAML_DATA_SURFACE && !exp->data.has_split_seed;
  if (self->data != NULL && (!follows_seed || exp->seed == base->seed))
    return caml_run_data_ref (self->data);
  return caml_run_data_load (exp, error);
}

/* Trains run i and writes its folder; the news of it, to post. */
static News *
train_one (CamlSweep *self, int i)
{
  News *news = news_new (self, i, CAML_SWEEP_RUN_FAILED);
  caml_sweep_plan_run_of (self->plan, i, news->ended.result.index, &news->ended.result.baseline);
  news->ended.result.plain = !caml_sweep_plan_has_context_aware (self->plan);
  news->ended.result.done = TRUE;
  news->ended.result.status = 1;
  g_autofree char *dir = caml_sweep_plan_run_dir (self->plan, self->out_dir, i);
  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = caml_sweep_plan_experiment (self->plan, i, &error);
  CamlRunData *data = exp != NULL ? run_data (self, exp, &error) : NULL;
  CamlModel *model = data != NULL
                     ? caml_experiment_build_model_for (exp, data->train, &error) : NULL;
  CamlTrainer *trainer = model != NULL ? caml_trainer_new (exp, model, data->train, data->test)
                                       : NULL;
  CamlCheckpoint *checkpoint = trainer != NULL ? caml_checkpoint_new (model, &error) : NULL;
  if (checkpoint == NULL || !caml_trainer_prepare (trainer, &error)
      || g_mkdir_with_parents (dir, 0755) != 0)
    {
      if (error == NULL)
        g_set_error (&error, G_FILE_ERROR, g_file_error_from_errno (errno),
                     "%s: cannot make the folder: %s", dir, g_strerror (errno));
      news->ended.result.error = g_strdup (error->message);
      g_clear_pointer (&checkpoint, caml_checkpoint_free);
      g_clear_pointer (&trainer, caml_trainer_free);
      g_clear_pointer (&model, caml_model_free);
      g_clear_pointer (&data, caml_run_data_unref);
      news->ended.exp = exp;
      return news;
    }

  CamlRunRecorder *rec = caml_run_recorder_new (trainer, model, data->test, NULL, 0);
  Watch watch = { self, trainer, checkpoint, rec };
  caml_trainer_set_progress_func (trainer, on_progress, &watch, 1);
  g_atomic_int_set (&self->step, 0);
  g_atomic_int_set (&self->total, exp->steps);
  if (caml_trainer_start (trainer, FALSE, &error))
    {
      for (;;)
        {
          CamlProgress p;
          caml_trainer_get_progress (trainer, &p);
          if (p.state == CAML_TRAINER_FINISHED || p.state == CAML_TRAINER_STOPPED
              || p.state == CAML_TRAINER_FAILED)
            break;
          if (g_atomic_int_get (&self->cancelled))
            caml_trainer_stop (trainer);
          g_usleep (POLL_MS * 1000);
        }
      caml_trainer_join (trainer);
    }

  CamlRunOrigin origin = { .preset = self->plan->preset, .ranks = 1 };
  CamlRunResults r = { .exp = exp, .origin = &origin, .model = model, .train = data->train,
                       .test = data->test, .rec = rec };
  g_autoptr (GError) roll_back = NULL;
  caml_run_results_take (&r, trainer, checkpoint, &roll_back);
  caml_trainer_free (trainer);
  Said said = { g_string_new (error != NULL ? error->message : NULL) };
  if (roll_back != NULL)
    on_results_say (CAML_RUN_RESULTS_PROBLEM, roll_back->message, &said);
  gboolean kept = FALSE;
  if (r.p.step > 0)
    {
      g_autoptr (CamlResultsDir) staging = caml_results_dir_new (dir, &error);
      if (staging == NULL)
        on_results_say (CAML_RUN_RESULTS_PROBLEM, error->message, &said);
      else if (caml_run_results_write (&r, staging->dir, on_results_say, &said))
        {
          g_clear_error (&error);
          kept = caml_results_dir_commit (staging, caml_run_results_is_name, &error);
          if (!kept)
            on_results_say (CAML_RUN_RESULTS_PROBLEM, error->message, &said);
        }
    }
  else if (r.run_error != NULL)
    on_results_say (CAML_RUN_RESULTS_PROBLEM, r.run_error->message, &said);
  else
    on_results_say (CAML_RUN_RESULTS_PROBLEM, "stopped before its first step: nothing kept",
                    &said);

  /* its figures: from the summary written, as `caml sweep` reads them */
  if (kept)
    {
      CamlSweepResult point = news->ended.result;
      caml_sweep_result_read (&news->ended.result, dir);
      memcpy (news->ended.result.index, point.index, sizeof point.index);
      news->ended.result.baseline = point.baseline;
      news->ended.result.plain = point.plain;
      news->ended.result.done = TRUE;
    }
  if (r.run_error != NULL && news->ended.result.error == NULL)
    news->ended.result.error = g_strdup (r.run_error->message);
  if (said.problems->len > 0 && news->ended.result.error == NULL)
    news->ended.result.error = g_strdup (said.problems->str);
  gboolean cancelled = g_atomic_int_get (&self->cancelled) && r.p.state == CAML_TRAINER_STOPPED;
  news->ended.result.status = !kept || r.p.state == CAML_TRAINER_FAILED ? 1 : cancelled ? 130 : 0;
  news->state = news->ended.result.status == 1 ? CAML_SWEEP_RUN_FAILED : CAML_SWEEP_RUN_DONE;
  if (r.p.step > 0)
    {
      news->ended.has_figures = TRUE;
      figures_from (&r, &news->ended.figures);
      news->ended.losses = g_memdup2 (r.losses, sizeof (float) * (gsize) r.n_steps);
      news->ended.n_steps = r.n_steps;
      news->ended.rows = g_memdup2 (r.rows, sizeof (CamlEvalRow) * (gsize) r.n_rows);
      news->ended.n_rows = r.n_rows;
      if (isnan (news->ended.result.steps_per_second))
        news->ended.result.steps_per_second = news->ended.figures.steps_per_second;
    }
  g_string_free (said.problems, TRUE);
  caml_run_results_clear (&r);
  caml_run_recorder_free (rec);
  caml_checkpoint_free (checkpoint);
  caml_model_free (model);
  caml_run_data_unref (data);
  news->ended.exp = exp;
  return news;
}

/* The tables of what ended so far, into the sweep's folder (all or
 * nothing). The worker's results: results[i] is set as run i ends. */
static char *
write_tables (CamlSweep *self, const CamlSweepResult *results)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CamlResultsDir) staging = caml_results_dir_new (self->out_dir, &error);
  if (staging == NULL
      || !caml_sweep_write_tables (self->plan, results, self->n_runs, staging->dir, &error)
      || !caml_results_dir_commit (staging, caml_sweep_is_table_name, &error))
    return g_strdup_printf ("the sweep's tables were not written: %s", error->message);
  return NULL;
}

static gpointer
work (gpointer data)
{
  CamlSweep *self = data;
  CamlSweepResult *results = g_new0 (CamlSweepResult, self->n_runs);
  /* the folder and the plan first: a sweep cancelled or cut short can be
   * run again headless from its sweep.json */
  g_autoptr (GError) error = NULL;
  g_autofree char *plan_path = g_build_filename (self->out_dir, "sweep.json", NULL);
  News *first = news_new (self, -1, CAML_SWEEP_RUN_QUEUED);
  if (g_mkdir_with_parents (self->out_dir, 0755) != 0)
    first->problem = g_strdup_printf ("%s: cannot make the folder: %s", self->out_dir,
                                      g_strerror (errno));
  else if (!caml_sweep_plan_save (self->plan, plan_path, &error))
    first->problem = g_strdup (error->message);
  post (first);
  for (int i = 0; i < self->n_runs; i++)
    {
      News *news;
      if (g_atomic_int_get (&self->cancelled))
        news = news_new (self, i, CAML_SWEEP_RUN_SKIPPED);
      else
        {
          g_atomic_int_set (&self->current, i);
          post (news_new (self, i, CAML_SWEEP_RUN_TRAINING));
          news = train_one (self, i);
          results[i] = news->ended.result;
          results[i].error = g_strdup (news->ended.result.error);
          news->problem = write_tables (self, results);
        }
      post (news);
    }
  for (int i = 0; i < self->n_runs; i++)
    caml_sweep_result_clear (&results[i]);
  g_free (results);
  News *last = news_new (self, -1, CAML_SWEEP_RUN_QUEUED);
  last->last = TRUE;
  post (last);
  g_object_unref (self);
  return NULL;
}

CamlSweep *
caml_sweep_new (CamlSweepPlan *plan, CamlRunData *data, const char *out_dir)
{
  g_return_val_if_fail (plan != NULL && out_dir != NULL, NULL);
  CamlSweep *self = g_object_new (CAML_TYPE_SWEEP, NULL);
  self->plan = plan;
  self->data = data != NULL ? caml_run_data_ref (data) : NULL;
  self->out_dir = g_strdup (out_dir);
  self->n_runs = caml_sweep_plan_n_runs (plan);
  self->results = g_new0 (CamlSweepResult, self->n_runs);
  for (int i = 0; i < self->n_runs; i++)
    {
      CamlSweepRun *item = g_object_new (CAML_TYPE_SWEEP_RUN, NULL);
      item->index = i;
      caml_sweep_plan_run_of (plan, i, item->point, &item->baseline);
      self->results[i].index[0] = item->point[0];
      self->results[i].index[1] = item->point[1];
      self->results[i].baseline = item->baseline;
      /* "kernel=3 depth=8": the folder's label, spaced */
      GString *name = g_string_new (NULL);
      for (int a = 0; a < plan->n_axes; a++)
        g_string_append_printf (name, "%s%s=%s", a ? " " : "", plan->axes[a].key,
                                plan->axes[a].values[item->point[a]]);
      if (item->baseline)
        g_string_append (name, " (baseline)");
      item->name = g_string_free (name, FALSE);
      item->dir = caml_sweep_plan_run_dir (plan, out_dir, i);
      g_list_store_append (self->runs, item);
      g_object_unref (item);
    }
  self->running = TRUE;

  g_atomic_int_add (&in_flight, 1);
  g_thread_unref (g_thread_new ("caml-sweep", work, g_object_ref (self)));
  return self;
}
