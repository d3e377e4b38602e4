/* run-results.c — the results folder of a run (run-results.h). */
#include <math.h>
#include <string.h>

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "run-results.h"
#include "figures.h"

/* The losses of the last steps, with their steps: a divergence takes the
 * trainer's losses back to the step rolled back to (one or two steps
 * before the failed one), but loss.png shows what the run went through. */
#define LOSS_TAIL 8

struct _CamlRunRecorder {
  long               tail_step[LOSS_TAIL];  /* 0: empty */
  float              tail_loss[LOSS_TAIL];
  CamlTrainer       *trainer;
  const CamlDataset *test;
  int                layer;       /* of the σ-maps, or -1 */
  long              *steps;       /* wanted steps, ascending */
  int                n_steps;
  GPtrArray         *snapshots;   /* CamlSigmaSnapshot, in step order */
  long               last_taken;
  long               taking;      /* the step of the snapshot being taken */
  CamlSigmaSnapshot *taken;       /* by take_snapshot, until kept */
  GError            *error;
};

CamlRunRecorder *
caml_run_recorder_new (CamlTrainer *trainer, CamlModel *model, const CamlDataset *test,
                       const long *steps, int n_steps)
{
  CamlRunRecorder *rec = g_new0 (CamlRunRecorder, 1);
  rec->trainer = trainer;
  rec->test = test;
  rec->layer = caml_report_sigma_layer (model);
  rec->steps = g_memdup2 (steps, (gsize) n_steps * sizeof (long));
  rec->n_steps = n_steps;
  rec->snapshots = g_ptr_array_new_with_free_func ((GDestroyNotify) caml_sigma_snapshot_free);
  rec->last_taken = -1;
  return rec;
}

void
caml_run_recorder_free (CamlRunRecorder *rec)
{
  if (rec == NULL)
    return;
  g_free (rec->steps);
  g_ptr_array_free (rec->snapshots, TRUE);
  g_clear_error (&rec->error);
  g_free (rec);
}

/* The forward passes of a snapshot do not touch the weights. */
static void
take_snapshot (CamlModel *model, gpointer user_data)
{
  CamlRunRecorder *rec = user_data;
  rec->taken = caml_sigma_snapshot_new (model, rec->layer, rec->test, CAML_FIGURE_SIGMA_IMAGES,
                                        rec->taking, &rec->error);
}

void
caml_run_recorder_progress (CamlRunRecorder *rec, const CamlProgress *p)
{
  /* every step's report, while running (the last report of a failed run
   * has the step rolled back to with the failed step's loss) */
  if (p->state == CAML_TRAINER_RUNNING && p->step > 0)
    {
      rec->tail_step[p->step % LOSS_TAIL] = p->step;
      rec->tail_loss[p->step % LOSS_TAIL] = (float) p->last_loss;
    }
  if (rec->layer < 0)
    return;
  gboolean wanted = FALSE;
  for (int i = 0; i < rec->n_steps; i++)
    wanted |= rec->steps[i] == p->step;
  if (!wanted || p->step == rec->last_taken || rec->error != NULL)
    return;
  /* At once, on this thread, but after the latest update is checked: one
   * that diverged is rolled back and the run fails, so its snapshot, of the
   * weights before that step, is not kept. */
  rec->taking = p->step;
  caml_trainer_with_model (rec->trainer, take_snapshot, rec);
  g_autoptr (GError) failed = caml_trainer_get_error (rec->trainer);
  CamlSigmaSnapshot *snap = g_steal_pointer (&rec->taken);
  if (snap != NULL && failed == NULL)
    g_ptr_array_add (rec->snapshots, snap);
  else if (snap != NULL)
    caml_sigma_snapshot_free (snap);
  rec->last_taken = p->step;
}

/* After the run went back to step: no σ-maps of the weights gone back
 * from, and the latest kept is the latest taken (one at that step is not
 * taken again when the results are written). */
static void
recorder_go_back (CamlRunRecorder *rec, long step)
{
  for (guint i = rec->snapshots->len; i-- > 0;)
    if (((CamlSigmaSnapshot *) rec->snapshots->pdata[i])->step > step)
      g_ptr_array_remove_index (rec->snapshots, i);
  if (rec->last_taken > step)
    rec->last_taken = rec->snapshots->len > 0
                      ? ((CamlSigmaSnapshot *) rec->snapshots->pdata[rec->snapshots->len - 1])->step
                      : -1;
}

/* The losses loss.png draws for a run that diverged: those kept (steps
 * 1 … rolled_back_to) and those the rollback dropped, up to the failed
 * step's (its loss, last_loss, may be the one that blew up); a step whose
 * loss the tail lost is NaN, not drawn. g_free the result. */
static float *
losses_through_divergence (const float *kept, long n_kept, const CamlRunRecorder *rec,
                           const CamlDivergence *d, double last_loss, long *n)
{
  long total = MAX (d->step, n_kept);
  float *out = g_new (float, MAX (total, 1));
  for (long i = 0; i < total; i++)
    {
      long step = i + 1;
      if (i < n_kept)
        out[i] = kept[i];
      else if (step == d->step)
        out[i] = (float) last_loss;
      else
        out[i] = rec->tail_step[step % LOSS_TAIL] == step ? rec->tail_loss[step % LOSS_TAIL]
                                                           : NAN;
    }
  *n = total;
  return out;
}

const char *
caml_run_state_name (CamlTrainerState state)
{
  switch (state)
    {
    case CAML_TRAINER_IDLE: return "idle";
    case CAML_TRAINER_RUNNING: return "running";
    case CAML_TRAINER_PAUSED: return "paused";
    case CAML_TRAINER_FINISHED: return "finished";
    case CAML_TRAINER_STOPPED: return "stopped";
    case CAML_TRAINER_FAILED: return "failed";
    }
  return "?";
}

/* ------------------------------------------------------------ taking */

void
caml_run_results_take (CamlRunResults *r, CamlTrainer *trainer, CamlCheckpoint *checkpoint,
                       GError **roll_back_error)
{
  caml_trainer_get_progress (trainer, &r->p);
  r->diverged = caml_trainer_get_divergence (trainer, &r->divergence);
  /* loss.png: the losses up to the failed step, not only those kept */
  r->losses = caml_trainer_copy_losses (trainer, &r->n_steps);
  r->n_plotted = r->n_steps;
  r->plotted = r->diverged ? losses_through_divergence (r->losses, r->n_steps, r->rec,
                                                        &r->divergence, r->p.last_loss,
                                                        &r->n_plotted)
                           : NULL;
  /* The trainer rolled back to the last weights whose loss was finite and
   * in bounds, one or two steps back, which may have blown up already: the
   * run goes back to its last healthy evaluation, as the workbench's
   * Continue does, so that a lower rate resumed from there trains. */
  if (r->diverged && caml_checkpoint_get_step (checkpoint, trainer) < r->divergence.rolled_back_to)
    {
      g_autoptr (GError) error = NULL;
      if (caml_checkpoint_roll_back (checkpoint, trainer, &error))
        {
          caml_trainer_get_divergence (trainer, &r->divergence);
          caml_trainer_get_progress (trainer, &r->p);
          g_free (r->losses);
          r->losses = caml_trainer_copy_losses (trainer, &r->n_steps);
          recorder_go_back (r->rec, r->p.step);
        }
      else   /* it keeps the step it rolled back to itself */
        {
          g_prefix_error (&error, "going back to step %ld after the divergence: ",
                          caml_checkpoint_get_step (checkpoint, trainer));
          g_propagate_error (roll_back_error, g_steal_pointer (&error));
        }
    }
  CamlEvalRow *rows = caml_trainer_copy_rows (trainer, &r->n_rows);
  r->rows = g_renew (CamlEvalRow, rows, r->n_rows + 1);
  r->run_error = caml_trainer_get_error (trainer);
  /* what `caml train --resume` goes on from: a diverged run's is that of
   * the step it rolled back to */
  r->state = r->p.step > 0 ? caml_trainer_state_to_bytes (trainer, &r->state_error) : NULL;
  r->sigma_auc = NAN;
  r->train_loss = r->train_metric = NAN;
}

void
caml_run_results_clear (CamlRunResults *r)
{
  g_clear_pointer (&r->losses, g_free);
  g_clear_pointer (&r->plotted, g_free);
  g_clear_pointer (&r->rows, g_free);
  g_clear_error (&r->run_error);
  g_clear_pointer (&r->state, g_bytes_unref);
  g_clear_error (&r->state_error);
  if (r->drawn != NULL)
    g_string_free (g_steal_pointer (&r->drawn), TRUE);
}

/* ------------------------------------------------------------ writing */

static const float *
plotted (const CamlRunResults *r)
{
  return r->plotted != NULL ? r->plotted : r->losses;
}

char *
caml_run_results_title (const CamlExperiment *exp)
{
  return g_strdup_printf ("%s, seed %" G_GUINT64_FORMAT, exp->name ? exp->name : "experiment",
                          exp->seed);
}

/* Reports a result file that could not be written; returns ok. */
static gboolean
kept (gboolean ok, GError **error, CamlRunResultsReport report, gpointer user_data)
{
  if (!ok)
    {
      report (CAML_RUN_RESULTS_PROBLEM, (*error)->message, user_data);
      g_clear_error (error);
    }
  return ok;
}

/* summary.json; of a run that kept nothing (`kept` FALSE), without the
 * figures of weights that are not kept. */
static gboolean
write_summary (const CamlRunResults *r, const char *path, gboolean kept, GError **error)
{
  const CamlExperiment *exp = r->exp;
  const CamlRunOrigin *origin = r->origin;
  const CamlProgress *p = &r->p;
  const CamlEvalRow *last = kept && r->n_rows > 0 ? &r->rows[r->n_rows - 1] : NULL;
  gboolean classification = r->train->n_classes > 0;
  double sigma_auc = kept ? r->sigma_auc : NAN;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "preset");
  if (origin->preset)
    json_builder_add_string_value (b, origin->preset);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "experiment");
  json_builder_add_string_value (b, exp->name ? exp->name : "");
  json_builder_set_member_name (b, "seed");
  json_builder_add_int_value (b, (gint64) exp->seed);
  /* the weights file the run started from (`caml train --init-weights`;
   * after --resume, the one the resumed run started from) */
  json_builder_set_member_name (b, "init_weights");
  if (origin->init_weights)
    json_builder_add_string_value (b, origin->init_weights);
  else
    json_builder_add_null_value (b);
  /* the saved run this one went on with (`caml train --resume`) */
  json_builder_set_member_name (b, "resumed_from");
  if (origin->resumed_from)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "dir");
      json_builder_add_string_value (b, origin->resumed_from);
      json_builder_set_member_name (b, "step");
      json_builder_add_int_value (b, origin->resumed_step);
      json_builder_end_object (b);
    }
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "steps");
  json_builder_add_int_value (b, p->step);
  /* the experiment as trained, which --resume holds experiment.json to: as
   * its text (json-glib would write 1e-08 back as "1e-08.0", not JSON) */
  g_autofree char *as_trained = caml_experiment_to_json (exp);
  json_builder_set_member_name (b, "as_trained");
  json_builder_add_string_value (b, as_trained);
  json_builder_set_member_name (b, "state");
  json_builder_add_string_value (b, caml_run_state_name (p->state));
  /* What the test_* figures are of: the test set, or the validation part
   * held out of the training set (data.validation_fraction). */
  json_builder_set_member_name (b, "evaluated_on");
  json_builder_add_string_value (b, caml_report_evaluated_on (exp));
  /* train_loss and train_accuracy/train_mse: the final weights over the
   * whole training set (metrics.csv's train_loss is a mean over the batches
   * since the evaluation before). */
  caml_report_json_add_number (b, "train_loss", kept ? r->train_loss : NAN);
  caml_report_json_add_number (b, "test_loss", last ? last->test_loss : NAN);
  caml_report_json_add_number (b, classification ? "train_accuracy" : "train_mse",
                               kept ? r->train_metric : NAN);
  caml_report_json_add_number (b, classification ? "test_accuracy" : "test_mse",
                               last ? last->test_metric : NAN);
  caml_report_json_add_number (b, "seconds", p->seconds);
  /* Rates over the time spent training, evaluations excluded. */
  double training = p->seconds - p->eval_seconds;
  caml_report_json_add_number (b, "eval_seconds", p->eval_seconds);
  caml_report_json_add_number (b, "steps_per_second", training > 0 ? p->step / training : NAN);
  /* several ranks: the gradient sums, as the first rank saw them */
  if (origin->ranks > 1)
    {
      long calls = origin->allreduce_calls;
      json_builder_set_member_name (b, "ranks");
      json_builder_add_int_value (b, origin->ranks);
      json_builder_set_member_name (b, "allreduce");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "calls");
      json_builder_add_int_value (b, calls);
      caml_report_json_add_number (b, "bytes_per_call",
                                   calls > 0 ? origin->allreduce_bytes / calls : NAN);
      caml_report_json_add_number (b, "seconds", origin->allreduce_seconds);
      caml_report_json_add_number (b, "fraction_of_training",
                                   training > 0 ? origin->allreduce_seconds / training : NAN);
      json_builder_end_object (b);
    }
  if (p->tokens > 0)
    {
      json_builder_set_member_name (b, "tokens");
      json_builder_add_int_value (b, p->tokens);
      caml_report_json_add_number (b, "tokens_per_second",
                                   training > 0 ? p->tokens / training : NAN);
    }
  if (!isnan (sigma_auc))
    {
      const CamlSigmaSource *source = &r->sigma_source;
      caml_report_json_add_number (b, "sigma_auc", sigma_auc);
      json_builder_set_member_name (b, "sigma_high_on");
      json_builder_add_string_value (b, r->sigma_high_on_fg ? "foreground" : "background");
      /* whose σ-maps: a model may have several CA conv layers, and a
       * ca_res_conv block a gate per sublayer */
      json_builder_set_member_name (b, "sigma_layer");
      json_builder_add_int_value (b, source->layer);
      json_builder_set_member_name (b, "sigma_layer_type");
      json_builder_add_string_value (b, source->type);
      if (source->n_sublayers > 0)
        {
          json_builder_set_member_name (b, "sigma_sublayer");
          json_builder_add_int_value (b, source->sublayer);
          json_builder_set_member_name (b, "sigma_sublayers");
          json_builder_add_int_value (b, source->n_sublayers);
        }
    }
  if (r->run_error)
    {
      json_builder_set_member_name (b, "error");
      json_builder_add_string_value (b, r->run_error->message);
    }
  if (r->diverged)
    {
      json_builder_set_member_name (b, "diverged_at_step");
      json_builder_add_int_value (b, r->divergence.step);
      json_builder_set_member_name (b, "rolled_back_to");
      json_builder_add_int_value (b, r->divergence.rolled_back_to);
    }
  json_builder_end_object (b);

  return caml_report_json_write (b, path, error);
}

gboolean
caml_run_results_write_failure (const CamlRunResults *r, const char *dir,
                                CamlRunResultsReport report, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *summary_path = g_build_filename (dir, "failed-summary.json", NULL);
  g_autofree char *loss_path = g_build_filename (dir, "failed-loss.png", NULL);
  g_autofree char *title = caml_run_results_title (r->exp);
  g_autofree char *loss_title = g_strdup_printf ("%s: failed", title);
  /* no figures: the untrained weights are not what anyone asked for */
  gboolean ok = kept (write_summary (r, summary_path, FALSE, &error), &error, report, user_data);
  ok &= kept (caml_report_write_loss (loss_path, NULL, 0, plotted (r), r->n_plotted,
                                      r->diverged ? &r->divergence : NULL,
                                      r->train->n_classes > 0,
                                      caml_report_evaluated_on (r->exp), loss_title, &error),
              &error, report, user_data);
  return ok;
}

/* rows has room for one more: a row at p's step, of the final weights on
 * the test set as `caml eval` measures them, for a run whose last
 * evaluation was at an earlier step (stopped, or rolled back between two
 * evaluations), so that summary.json, metrics.csv and loss.png describe
 * the weights saved. Its train_loss is the mean over the steps since the
 * row before, as the trainer's rows have; its time counts as evaluating,
 * and p's seconds grow by it. */
static void
add_final_row (CamlRunResults *r)
{
  CamlProgress *p = &r->p;
  CamlEvalRow *row = &r->rows[r->n_rows];
  long from = r->n_rows > 0 ? r->rows[r->n_rows - 1].step : 0;
  double sum = 0;
  for (long i = from; i < MIN (p->step, r->n_steps); i++)
    sum += r->losses[i];
  *row = (CamlEvalRow) { .step = p->step, .tokens = p->tokens };
  row->train_loss = p->step > from ? sum / (double) (MIN (p->step, r->n_steps) - from) : NAN;
  gint64 start = g_get_monotonic_time ();
  caml_evaluate (r->model, r->exp->loss, r->test, &row->test_loss, &row->test_metric);
  double spent = (g_get_monotonic_time () - start) / 1e6;
  p->seconds += spent;
  p->eval_seconds += spent;
  row->seconds = p->seconds;
  row->eval_seconds = p->eval_seconds;
  r->n_rows++;
  r->final_row = TRUE;
}

/* The step of a σ-map's file name, "sigma-stepN.png"; -1 for any other name. */
static long
sigma_file_step (const char *name)
{
  const char *digits = name + strlen ("sigma-step");
  if (!g_str_has_prefix (name, "sigma-step") || !g_str_has_suffix (name, ".png")
      || !g_ascii_isdigit (*digits))
    return -1;
  guint64 step;
  g_autofree char *number = g_strndup (digits, strlen (digits) - strlen (".png"));
  if (!g_ascii_string_to_unsigned (number, 10, 0, G_MAXLONG, &step, NULL))
    return -1;
  return (long) step;
}

static int
compare_longs (gconstpointer a, gconstpointer b)
{
  long x = *(const long *) a, y = *(const long *) b;
  return (x > y) - (x < y);
}

/* A resumed run cannot draw the σ-maps of the steps before it went on: the
 * ones the run it goes on with left in its directory, at those steps, are
 * copied beside the new results (which replace that directory's, or go
 * elsewhere). Appends their names to `names`. */
static gboolean
keep_earlier_sigma_maps (const CamlRunResults *r, const char *dir, GString *names,
                         GError **error)
{
  const char *from = r->origin->resumed_from;
  g_autoptr (GDir) d = from != NULL ? g_dir_open (from, 0, NULL) : NULL;
  if (d == NULL)
    return TRUE;
  g_autoptr (GArray) steps = g_array_new (FALSE, FALSE, sizeof (long));
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      long step = sigma_file_step (name);
      g_autofree char *target = g_build_filename (dir, name, NULL);
      if (step >= 0 && step <= r->origin->resumed_step
          && !g_file_test (target, G_FILE_TEST_EXISTS))
        g_array_append_val (steps, step);
    }
  g_array_sort (steps, compare_longs);
  for (guint i = 0; i < steps->len; i++)
    {
      g_autofree char *file = g_strdup_printf ("sigma-step%ld.png",
                                               g_array_index (steps, long, i));
      g_autoptr (GFile) source = g_file_new_build_filename (from, file, NULL);
      g_autoptr (GFile) target = g_file_new_build_filename (dir, file, NULL);
      if (!g_file_copy (source, target, G_FILE_COPY_NONE, NULL, NULL, NULL, error))
        return FALSE;
      g_string_append_printf (names, ", %s", file);
    }
  return TRUE;
}

/* σ-maps: a grid at every snapshot (and at the end, whatever step that
 * is), and the AUC over the first test images. Appends the names written. */
static gboolean
write_sigma_maps (CamlRunResults *r, const char *dir, GString *names,
                  CamlRunResultsReport report, gpointer user_data)
{
  CamlRunRecorder *rec = r->rec;
  const CamlExperiment *exp = r->exp;
  g_autoptr (GError) error = NULL;
  gboolean ok = TRUE;
  r->sigma_auc = NAN;
  r->sigma_high_on_fg = FALSE;
  if (rec->layer >= 0 && rec->error == NULL && rec->last_taken != r->p.step)
    {
      CamlSigmaSnapshot *snap = caml_sigma_snapshot_new (r->model, rec->layer, r->test,
                                                         CAML_FIGURE_SIGMA_IMAGES, r->p.step,
                                                         &rec->error);
      if (snap)
        g_ptr_array_add (rec->snapshots, snap);
    }
  if (rec->layer >= 0 && rec->error == NULL)
    {
      g_autoptr (CamlSigmaSnapshot) all = caml_sigma_snapshot_new (r->model, rec->layer,
                                                                   r->test,
                                                                   CAML_REPORT_SIGMA_AUC_IMAGES,
                                                                   r->p.step, &rec->error);
      if (all)
        r->sigma_auc = caml_sigma_auc (all->images, all->height, all->width, all->maps,
                                       all->map_h, all->map_w, all->count,
                                       &r->sigma_high_on_fg);
    }
  if (rec->error)
    {
      report (CAML_RUN_RESULTS_PROBLEM, rec->error->message, user_data);
      g_clear_error (&rec->error);
    }
  if (rec->layer >= 0)
    caml_report_sigma_source (r->model, rec->layer, &r->sigma_source);
  for (guint i = 0; i < rec->snapshots->len; i++)
    {
      const CamlSigmaSnapshot *snap = rec->snapshots->pdata[i];
      g_autofree char *name = g_strdup_printf ("sigma-step%ld.png", snap->step);
      g_autofree char *path = g_build_filename (dir, name, NULL);
      if (kept (caml_report_write_sigma_grid (path, snap, r->sigma_stretch,
                                              exp->name ? exp->name : "experiment",
                                              &r->sigma_source, &error),
                &error, report, user_data))
        g_string_append_printf (names, ", %s", name);
      else
        ok = FALSE;
    }
  return ok;
}

gboolean
caml_run_results_write (CamlRunResults *r, const char *dir, CamlRunResultsReport report,
                        gpointer user_data)
{
  const CamlExperiment *exp = r->exp;
  g_autoptr (GError) error = NULL;
  gboolean classification = r->train->n_classes > 0;
  g_autofree char *title = caml_run_results_title (exp);
  if (r->drawn == NULL)
    r->drawn = g_string_new (NULL);

  /* The final weights on the whole training set, as `caml eval` measures
   * them: summary.json's and the last line's train figures. */
  r->train_loss = r->train_metric = NAN;
  caml_evaluate (r->model, exp->loss, r->train, &r->train_loss, &r->train_metric);
  /* … and on the test set, when the last evaluation was at an earlier step
   * (a stopped run, or one rolled back to a step between evaluations). */
  if (r->n_rows == 0 || r->rows[r->n_rows - 1].step != r->p.step)
    add_final_row (r);

  g_autoptr (GString) sigma_written = g_string_new (NULL);
  gboolean written_all = write_sigma_maps (r, dir, sigma_written, report, user_data);
  g_autoptr (GString) sigma_kept = g_string_new (NULL);
  written_all &= kept (keep_earlier_sigma_maps (r, dir, sigma_kept, &error), &error, report,
                       user_data);
  g_string_prepend (sigma_written, sigma_kept->str);

  g_autofree char *metrics_path = g_build_filename (dir, "metrics.csv", NULL);
  g_autofree char *summary_path = g_build_filename (dir, "summary.json", NULL);
  g_autofree char *weights_path = g_build_filename (dir, "model.weights", NULL);
  g_autofree char *exp_path = g_build_filename (dir, "experiment.json", NULL);
  g_autofree char *loss_path = g_build_filename (dir, "loss.png", NULL);
  g_autofree char *words_path = g_build_filename (dir, "words.html", NULL);
  g_autofree char *words_png = g_build_filename (dir, "words.png", NULL);
  gboolean words = FALSE;
  /* Every file tried even when one fails: each failure is reported. */
  gboolean ok = TRUE;
  ok &= kept (caml_weights_save (r->model, weights_path, &error), &error, report, user_data);
  if (r->state != NULL)
    {
      g_autofree char *state_path = g_build_filename (dir, "trainer.state", NULL);
      gsize length;
      const guint8 *data = g_bytes_get_data (r->state, &length);
      ok &= kept (caml_file_replace (state_path, data, length, &error), &error, report,
                  user_data);
    }
  else if (r->state_error != NULL)   /* too large for a state file: the rest is kept */
    {
      g_autofree char *note = g_strdup_printf ("no trainer.state, so --resume cannot go on "
                                               "with this run: %s", r->state_error->message);
      report (CAML_RUN_RESULTS_NOTE, note, user_data);
    }
  ok &= kept (caml_experiment_save_file (exp, exp_path, &error), &error, report, user_data);
  ok &= kept (caml_report_write_metrics (metrics_path, r->rows, r->n_rows, classification,
                                         &error), &error, report, user_data);
  ok &= kept (write_summary (r, summary_path, TRUE, &error), &error, report, user_data);
  ok &= kept (caml_report_write_loss (loss_path, r->rows, r->n_rows, plotted (r), r->n_plotted,
                                      r->diverged ? &r->divergence : NULL, classification,
                                      caml_report_evaluated_on (exp), title, &error),
              &error, report, user_data);
  /* the plots of a model, before the σ-maps: ", surface.png, chi.png" … */
  ok &= kept (caml_report_write_surfaces (dir, exp, r->model, r->train, r->drawn, &error),
              &error, report, user_data);
  ok &= kept (caml_report_write_words_on (words_path, words_png, title, r->model, exp,
                                          r->train, r->test, CAML_RUN_WORDS_SAMPLES,
                                          CAML_RUN_WORDS_MIN_COUNT, CAML_RUN_WORDS_TOP, &words,
                                          &error), &error, report, user_data);
  if (words)
    g_string_append (r->drawn, ", words.html, words.png");
  g_string_append (r->drawn, sigma_written->str);
  return written_all && ok;
}

/* ------------------------------------------------------------ resuming */

/* The preset, init_weights and as_trained (the experiment, as JSON) of the
 * summary.json in dir, when it has them; NULL otherwise. A summary that
 * cannot be read only loses them: the run itself comes from
 * experiment.json and trainer.state. */
void
caml_run_results_read_summary (const char *dir, char **preset, char **init_weights, char **as_trained)
{
  g_autofree char *path = g_build_filename (dir, "summary.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  *preset = *init_weights = *as_trained = NULL;
  if (!json_parser_load_from_file (parser, path, NULL))
    return;
  JsonNode *root = json_parser_get_root (parser);
  JsonObject *o = root && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  JsonNode *node;
  if (o && (node = json_object_get_member (o, "preset")) && JSON_NODE_HOLDS_VALUE (node)
      && json_node_get_value_type (node) == G_TYPE_STRING)
    *preset = json_node_dup_string (node);
  if (o && (node = json_object_get_member (o, "init_weights")) && JSON_NODE_HOLDS_VALUE (node)
      && json_node_get_value_type (node) == G_TYPE_STRING)
    *init_weights = json_node_dup_string (node);
  if (o && (node = json_object_get_member (o, "as_trained")) && JSON_NODE_HOLDS_VALUE (node)
      && json_node_get_value_type (node) == G_TYPE_STRING)
    *as_trained = json_node_dup_string (node);
}

/* What of a saved run's experiment.json --resume lets change: the live
 * settings (the trainer takes them at any step), the names, the plots'
 * domain, and where the data files are (moved or renamed since: a text
 * set's vocabulary is checked against the weights' all the same). */
static void
copy_live_settings (CamlExperiment *to, const CamlExperiment *from)
{
  for (int i = 0; i < 4; i++)
    {
      g_free (to->data.idx_paths[i]);
      to->data.idx_paths[i] = g_strdup (from->data.idx_paths[i]);
      to->plot_domain[i] = from->plot_domain[i];
    }
  for (int i = 0; i < 2; i++)
    {
      g_free (to->data.text_paths[i]);
      to->data.text_paths[i] = g_strdup (from->data.text_paths[i]);
    }
  g_free (to->data.embeddings);
  to->data.embeddings = g_strdup (from->data.embeddings);
  to->optimizer.lr = from->optimizer.lr;
  to->optimizer.em_steps = from->optimizer.em_steps;
  to->optimizer.weight_decay = from->optimizer.weight_decay;
  to->steps = from->steps;
  to->eval_every = from->eval_every;
  g_free (to->name);
  to->name = g_strdup (from->name);
  g_free (to->description);
  to->description = g_strdup (from->description);
  g_free (to->paper);
  to->paper = g_strdup (from->paper);
}

/* A resumed run is the saved one going on: its experiment.json (exp, as
 * loaded) may differ from the experiment it was trained with (as_trained,
 * from summary.json) in the live settings only. Another loss, data
 * setting or layer option would still load the state and go on silently
 * as a different run. */
gboolean
caml_run_results_check_resumed (const CamlExperiment *exp, const char *as_trained,
                          const char *source, GError **error)
{
  CamlExperiment *then = caml_experiment_load_data (as_trained, -1, "summary.json", NULL);
  if (then == NULL)   /* an older or damaged summary: nothing to hold it to */
    return TRUE;
  copy_live_settings (then, exp);
  g_autofree char *was = caml_experiment_to_json (then);
  g_autofree char *now = caml_experiment_to_json (exp);
  caml_experiment_free (then);
  if (g_str_equal (was, now))
    return TRUE;
  g_auto (GStrv) was_lines = g_strsplit (was, "\n", -1);
  g_auto (GStrv) now_lines = g_strsplit (now, "\n", -1);
  int i = 0;
  while (was_lines[i] != NULL && now_lines[i] != NULL && g_str_equal (was_lines[i], now_lines[i]))
    i++;
  char *lines[2] = { was_lines[i], now_lines[i] };
  for (int k = 0; k < 2; k++)
    {
      lines[k] = g_strstrip (g_strdup (lines[k] != NULL ? lines[k] : ""));
      if (g_str_has_suffix (lines[k], ","))
        lines[k][strlen (lines[k]) - 1] = '\0';
    }
  g_autofree char *was_line = lines[0], *now_line = lines[1];
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
               "%s has %s where the run was trained with %s: a resumed run may change only "
               "optimizer.lr, em_steps and weight_decay, training.steps and eval_every, the "
               "data files' paths and plot.domain (to train the weights on otherwise, use "
               "--init-weights)", source, now_line,
               was_line);
  return FALSE;
}

/* ------------------------------------------------------------ names */

gboolean
caml_run_results_is_name (const char *name)
{
  static const char *const names[] = {
    "metrics.csv", "summary.json", "model.weights", "trainer.state", "experiment.json",
    "loss.png",
    "surface.png", "chi.png", "parts.png", "words.html", "words.png",
    "failed-summary.json", "failed-loss.png", NULL
  };
  return g_strv_contains (names, name)
         || (g_str_has_prefix (name, "sigma-step") && g_str_has_suffix (name, ".png"));
}

GPtrArray *
caml_run_results_planned_names (const CamlModel *model, const CamlDataset *train,
                                const long *steps, int n_steps)
{
  static const char *const always[] = {
    "metrics.csv", "summary.json", "model.weights", "trainer.state", "experiment.json",
    "loss.png", "failed-summary.json", "failed-loss.png", NULL
  };
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; always[i] != NULL; i++)
    g_ptr_array_add (names, g_strdup (always[i]));
  if (caml_shape_is_plane (&model->input)
      && caml_shape_size (caml_model_output_shape (model)) == 1)
    {
      g_ptr_array_add (names, g_strdup ("surface.png"));
      g_ptr_array_add (names, g_strdup ("chi.png"));
      g_ptr_array_add (names, g_strdup ("parts.png"));
    }
  if (train->vocab != NULL && model->input.kind == CAML_SHAPE_TOKENS)
    {
      g_ptr_array_add (names, g_strdup ("words.html"));
      g_ptr_array_add (names, g_strdup ("words.png"));
    }
  if (caml_report_sigma_layer (model) >= 0)
    for (int i = 0; i < n_steps; i++)
      g_ptr_array_add (names, g_strdup_printf ("sigma-step%ld.png", steps[i]));
  return names;
}
