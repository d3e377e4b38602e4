/* caml-session-runs.c — the runs a session keeps (caml-session.h, "runs
 * kept"): a CamlRunRecord for each run that ended, and for each matched
 * baseline, paired by number so that the table can give CA − baseline;
 * deleting them; their CSV, written on a worker thread. */
#include <math.h>
#include <string.h>

#include "caml-session-private.h"

static void
on_record_shown (CamlRunRecord *record, GParamSpec *pspec, CamlSession *self)
{
  session_progress (self, CAML_SESSION_CURVES);   /* the overlays changed */
}

static void
on_record_named (CamlRunRecord *record, GParamSpec *pspec, CamlSession *self)
{
  if (caml_run_record_get_shown (record))
    session_progress (self, CAML_SESSION_CURVES);   /* the legend names it */
}

void
runs_init (CamlSession *self)
{
  self->runs = g_list_store_new (CAML_TYPE_RUN_RECORD);
}

static void
forget_record (CamlSession *self, CamlRunRecord *record)
{
  g_signal_handlers_disconnect_by_data (record, self);
  if (record == self->run_record)
    {
      self->run_record = NULL;
      self->run_deleted = TRUE;
    }
  if (record == self->base_record)
    {
      self->base_record = NULL;
      self->base_deleted = TRUE;
    }
}

void
runs_clear (CamlSession *self)
{
  if (self->runs == NULL)
    return;
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->runs));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr (CamlRunRecord) record = g_list_model_get_item (G_LIST_MODEL (self->runs), i);
      forget_record (self, record);
    }
  g_clear_object (&self->runs);
}

void
runs_forget_current (CamlSession *self, gboolean baseline_only)
{
  self->base_record = NULL;
  self->base_deleted = FALSE;
  if (baseline_only)
    return;
  self->run_record = NULL;
  self->run_deleted = FALSE;
  self->run_number = 0;
}

/* The figures of a run from the copies the session holds. */
static void
figures_of (CamlRun *run, const CamlProgress *p, const float *losses, long n_steps,
            const CamlEvalRow *rows, int n_rows, CamlRunFigures *f)
{
  const CamlEvalRow *last = n_rows > 0 ? &rows[n_rows - 1] : NULL;

  f->state = p->state == CAML_TRAINER_FINISHED || p->state == CAML_TRAINER_FAILED
             ? p->state : CAML_TRAINER_STOPPED;
  f->step = p->step;
  f->classification = p->classification;
  /* The last evaluation's train loss when it is at the last step, else the
   * mean of the steps since it (at most the last 100). */
  if (last != NULL && last->step == n_steps)
    f->train_loss = last->train_loss;
  else if (n_steps > 0)
    {
      long from = MAX (last != NULL ? last->step : 0, n_steps - 100);
      double sum = 0.0;
      for (long i = from; i < n_steps; i++)
        sum += losses[i];
      f->train_loss = sum / (double) (n_steps - from);
    }
  else
    f->train_loss = NAN;
  f->test_loss = last != NULL ? last->test_loss : NAN;
  f->test_metric = last != NULL ? last->test_metric : NAN;
  f->sigma_auc = NAN;
  if (caml_run_has_sigma (run))
    {
      g_autofree double *steps = NULL, *auc = NULL;
      int n = caml_run_copy_sigma_auc (run, &steps, &auc);
      if (n > 0)
        f->sigma_auc = auc[n - 1];
    }
  f->n_params = caml_run_get_n_weights (run);
  double training = p->seconds - p->eval_seconds;
  f->steps_per_second = training > 0 && p->step > 0 ? p->step / training : NAN;
  f->seconds = p->seconds;
}

/* Where a record of number goes: beside its pair (the model first), else
 * last. */
static guint
position_for (CamlSession *self, int number, gboolean baseline)
{
  GListModel *runs = G_LIST_MODEL (self->runs);
  guint n = g_list_model_get_n_items (runs);
  for (guint i = n; i-- > 0;)
    {
      g_autoptr (CamlRunRecord) r = g_list_model_get_item (runs, i);
      if (caml_run_record_get_number (r) == number)
        return baseline ? i + 1 : i;
    }
  return n;
}

/* The last record of a model run before number, or NULL. */
static CamlRunRecord *
previous_model (CamlSession *self, int number)
{
  GListModel *runs = G_LIST_MODEL (self->runs);
  CamlRunRecord *found = NULL;
  for (guint i = 0; i < g_list_model_get_n_items (runs); i++)
    {
      g_autoptr (CamlRunRecord) r = g_list_model_get_item (runs, i);
      if (!caml_run_record_is_baseline (r) && caml_run_record_get_number (r) < number)
        found = r;   /* borrowed: the list holds it */
    }
  return found;
}

/* CA − baseline: the model's test figure at its baseline's last
 * evaluation, minus the baseline's, on both records. */
static void
pair (CamlRunRecord *model_record, CamlRunRecord *base_record)
{
  int n_model, n_base;
  const CamlEvalRow *model = caml_run_record_get_rows (model_record, &n_model);
  const CamlEvalRow *base = caml_run_record_get_rows (base_record, &n_base);
  double difference = NAN;
  if (n_base > 0)
    for (int i = n_model; i-- > 0;)
      if (model[i].step == base[n_base - 1].step)
        {
          difference = model[i].test_metric - base[n_base - 1].test_metric;
          break;
        }
  caml_run_record_set_difference (model_record, difference);
  caml_run_record_set_difference (base_record, difference);
}

static void
pair_records (CamlSession *self)
{
  if (self->run_record != NULL && self->base_record != NULL)
    pair (self->run_record, self->base_record);
}

/* Makes or updates *record for run (its copies: losses, rows). */
static void
record (CamlSession *self, CamlRunRecord **slot, gboolean baseline, CamlRun *run,
        const float *losses, long n_steps, const CamlEvalRow *rows, int n_rows)
{
  CamlProgress p;
  CamlRunFigures f;

  if (self->runs == NULL || self->cancellable == NULL || run == NULL || n_steps <= 0)
    return;
  caml_run_get_progress (run, &p);
  p.step = MIN (p.step, n_steps);   /* as far as the copies go */
  figures_of (run, &p, losses, n_steps, rows, n_rows, &f);
  const CamlExperiment *exp = caml_run_get_experiment (run);
  if (*slot != NULL)
    {
      const CamlRunFigures *had = caml_run_record_get_figures (*slot);
      gboolean same_metric = had->test_metric == f.test_metric
                             || (isnan (had->test_metric) && isnan (f.test_metric));
      if (had->step == f.step && had->state == f.state && same_metric)
        return;   /* nothing new */
      caml_run_record_update (*slot, exp, &f, losses, n_steps, rows, n_rows);
      /* Its row shows the new figures: the list says the item changed. */
      guint pos;
      if (g_list_store_find (self->runs, *slot, &pos))
        g_list_model_items_changed (G_LIST_MODEL (self->runs), pos, 1, 1);
    }
  else
    {
      if (self->run_number == 0)
        self->run_number = ++self->runs_counted;
      *slot = caml_run_record_new (self->run_number, baseline, exp, &f, losses, n_steps, rows,
                                   n_rows);
      g_autofree char *differs = NULL;
      CamlRunRecord *before = baseline ? NULL : previous_model (self, self->run_number);
      if (baseline)
        differs = g_strdup_printf ("baseline of Run %d", self->run_number);
      else if (before == NULL)
        differs = g_strdup ("first run");
      else
        differs = caml_run_record_describe_changes (caml_run_record_get_experiment (before), exp);
      caml_run_record_set_differs (*slot, differs);
      g_signal_connect (*slot, "notify::shown", G_CALLBACK (on_record_shown), self);
      g_signal_connect (*slot, "notify::name", G_CALLBACK (on_record_named), self);
      g_list_store_insert (self->runs, position_for (self, self->run_number, baseline), *slot);
      g_object_unref (*slot);   /* the list holds it; *slot borrows */
    }
  pair_records (self);
}

/* A sweep's run ended: a record of its own, numbered as the window's runs
 * are ("Run 7"), named after its point ("kernel=3 depth=8"), its baseline
 * (the run after it) sharing its number and paired with it. */
void
runs_keep_sweep_run (CamlSession *self, CamlSweep *sweep, CamlSweepRun *run)
{
  const CamlRunFigures *f = caml_sweep_run_get_figures (run);
  const CamlExperiment *exp = caml_sweep_run_get_experiment (run);
  if (self->runs == NULL || f == NULL || exp == NULL)
    return;
  long n_steps;
  int n_rows;
  const float *losses = caml_sweep_run_get_losses (run, &n_steps);
  const CamlEvalRow *rows = caml_sweep_run_get_rows (run, &n_rows);
  gboolean baseline = caml_sweep_run_is_baseline (run);
  int index = caml_sweep_run_get_index (run);
  CamlRunRecord *model = NULL;
  if (baseline && index > 0)
    {
      g_autoptr (CamlSweepRun) before = g_list_model_get_item (caml_sweep_get_runs (sweep),
                                                               (guint) index - 1);
      model = caml_sweep_run_get_record (before);
    }
  int number = model != NULL ? caml_run_record_get_number (model) : ++self->runs_counted;
  CamlRunRecord *record = caml_run_record_new (number, baseline, exp, f, losses, n_steps, rows,
                                               n_rows);
  caml_run_record_set_name (record, caml_sweep_run_get_name (run));
  /* what differs from the sweep's model run before it (the first: from
   * the experiment swept) */
  const CamlExperiment *before = caml_sweep_get_plan (sweep)->exp;
  for (int i = index - 1; model == NULL && i >= 0; i--)
    {
      g_autoptr (CamlSweepRun) earlier = g_list_model_get_item (caml_sweep_get_runs (sweep),
                                                                (guint) i);
      if (!caml_sweep_run_is_baseline (earlier) && caml_sweep_run_get_experiment (earlier))
        {
          before = caml_sweep_run_get_experiment (earlier);
          break;
        }
    }
  g_autofree char *differs = model != NULL
                             ? g_strdup_printf ("baseline of Run %d", number)
                             : caml_run_record_describe_changes (before, exp);
  g_autofree char *said = g_strdup_printf ("sweep: %s", differs);
  caml_run_record_set_differs (record, said);
  g_signal_connect (record, "notify::shown", G_CALLBACK (on_record_shown), self);
  g_signal_connect (record, "notify::name", G_CALLBACK (on_record_named), self);
  g_list_store_insert (self->runs, position_for (self, number, baseline), record);
  caml_sweep_run_set_record (run, record);
  if (model != NULL)
    pair (model, record);
  g_object_unref (record);   /* the list holds it */
}

void
runs_record_run (CamlSession *self)
{
  if (self->run == NULL || !self->run_started || self->run_deleted)
    return;
  record (self, &self->run_record, FALSE, self->run, self->losses, self->n_steps, self->rows,
          self->n_rows);
}

void
runs_record_baseline (CamlSession *self)
{
  if (self->base_deleted)
    return;
  record (self, &self->base_record, TRUE, self->baseline, self->base_losses,
          self->base_n_steps, self->base_rows, self->base_n_rows);
}

GListModel *
caml_session_get_runs (CamlSession *self)
{
  g_return_val_if_fail (CAML_IS_SESSION (self), NULL);
  return G_LIST_MODEL (self->runs);
}

void
caml_session_delete_run (CamlSession *self, CamlRunRecord *record)
{
  guint pos;

  g_return_if_fail (CAML_IS_SESSION (self));
  if (self->runs == NULL || !g_list_store_find (self->runs, record, &pos))
    return;
  gboolean shown = caml_run_record_get_shown (record);
  forget_record (self, record);
  g_list_store_remove (self->runs, pos);
  if (shown)
    session_progress (self, CAML_SESSION_CURVES);
}

void
caml_session_delete_all_runs (CamlSession *self)
{
  g_return_if_fail (CAML_IS_SESSION (self));
  GListModel *runs = G_LIST_MODEL (self->runs);
  gboolean shown = FALSE;
  for (guint i = 0; i < g_list_model_get_n_items (runs); i++)
    {
      g_autoptr (CamlRunRecord) r = g_list_model_get_item (runs, i);
      shown |= caml_run_record_get_shown (r);
      forget_record (self, r);
    }
  g_list_store_remove_all (self->runs);
  if (shown)
    session_progress (self, CAML_SESSION_CURVES);
}

/* ----------------------------------------------------------------- CSV */

static void
csv_text (GString *s, const char *text)
{
  if (strpbrk (text, ",\"\n\r") == NULL)
    {
      g_string_append (s, text);
      return;
    }
  g_string_append_c (s, '"');
  for (const char *c = text; *c != '\0'; c++)
    {
      if (*c == '"')
        g_string_append_c (s, '"');
      g_string_append_c (s, *c);
    }
  g_string_append_c (s, '"');
}

static void
csv_number (GString *s, double value)
{
  g_string_append_c (s, ',');
  if (isfinite (value))
    {
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      g_string_append (s, g_ascii_formatd (buf, sizeof buf, "%.6g", value));
    }
}

char *
caml_session_dup_runs_csv (CamlSession *self)
{
  GListModel *runs = caml_session_get_runs (self);
  GString *s = g_string_new ("name,baseline,state,steps,differs,train_loss,test_loss,"
                             "test_accuracy,test_mse,sigma_auc,parameters,steps_per_second,"
                             "seconds,difference_vs_baseline\n");
  for (guint i = 0; i < g_list_model_get_n_items (runs); i++)
    {
      g_autoptr (CamlRunRecord) r = g_list_model_get_item (runs, i);
      const CamlRunFigures *f = caml_run_record_get_figures (r);
      csv_text (s, caml_run_record_get_name (r));
      g_string_append_printf (s, ",%d,%s,%ld,", caml_run_record_is_baseline (r) ? 1 : 0,
                              caml_run_record_state_name (f->state), f->step);
      csv_text (s, caml_run_record_get_differs (r));
      csv_number (s, f->train_loss);
      csv_number (s, f->test_loss);
      csv_number (s, f->classification ? f->test_metric : NAN);
      csv_number (s, f->classification ? NAN : f->test_metric);
      csv_number (s, f->sigma_auc);
      g_string_append_printf (s, ",%zu", f->n_params);
      csv_number (s, f->steps_per_second);
      csv_number (s, f->seconds);
      csv_number (s, caml_run_record_get_difference (r));
      g_string_append_c (s, '\n');
    }
  return g_string_free (s, FALSE);
}

typedef struct {
  char *path;
  char *text;
} CsvJob;

static void
csv_job_free (gpointer data)
{
  CsvJob *job = data;
  g_free (job->path);
  g_free (job->text);
  g_free (job);
}

static void
csv_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  CsvJob *job = data;
  GError *error = NULL;

  if (caml_file_replace (job->path, job->text, strlen (job->text), &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
on_csv_written (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (CamlSession) self = user_data;   /* the task's reference */
  CsvJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;

  session_jobs_end ();
  gboolean ok = g_task_propagate_boolean (G_TASK (result), &error);
  if (self->cancellable == NULL || g_cancellable_is_cancelled (self->cancellable))
    return;   /* the window went */
  if (!ok)
    {
      g_autofree char *text = g_strdup_printf ("Cannot export the runs: %s", error->message);
      session_error (self, text);
    }
  else
    session_done (self, "Exported the runs to", job->path);
}

void
caml_session_export_runs (CamlSession *self, const char *path)
{
  g_return_if_fail (CAML_IS_SESSION (self));
  CsvJob *job = g_new0 (CsvJob, 1);
  job->path = g_strdup (path);
  job->text = caml_session_dup_runs_csv (self);   /* the records as they are now */
  session_jobs_begin ();
  GTask *task = g_task_new (NULL, NULL, on_csv_written, g_object_ref (self));
  g_task_set_name (task, "caml-session-runs-csv");
  g_task_set_task_data (task, job, csv_job_free);
  g_task_run_in_thread (task, csv_thread);
  g_object_unref (task);
}
