/* test-session-runs.c — the runs a CamlSession keeps (caml-session.h, "runs
 * kept"), without a display: a record for each run that ended, each
 * matched baseline beside its run with CA − baseline, what differs from
 * the run before, deleting them, and their CSV. The window's Runs page is
 * tested by test-gui-runs-list.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <glib/gstdio.h>

#include "caml-session.h"
#include "harness.h"
#include "presets.h"


static gboolean
not_loading (gpointer data)
{
  return !caml_session_is_loading (data);
}

static gboolean
run_ended (gpointer data)
{
  CamlTrainerState s = caml_session_get_state (data);
  return s == CAML_TRAINER_FINISHED || s == CAML_TRAINER_STOPPED || s == CAML_TRAINER_FAILED;
}

static gboolean
baseline_done (gpointer data)
{
  CamlSession *s = data;
  return caml_session_baseline_ended (s) && !caml_session_is_loading (s);
}

/* The preset as the Presets menu opens it, at steps steps. */
static CamlSession *
session_preset (const char *name, int steps)
{
  g_autoptr (GError) error = NULL;
  CamlSession *s = caml_session_new ();
  CamlExperiment *exp = caml_presets_load (name, &error);
  assert_non_null (exp);
  caml_session_set_experiment (s, exp, NULL, "preset", NULL);
  caml_session_set_steps (s, steps);
  assert_true (iterate_until (not_loading, s, 30));
  return s;
}

static void
session_free (CamlSession *s)
{
  caml_session_close (s);
  assert_true (iterate_until (no_jobs, NULL, 30));
  g_object_unref (s);
}

static CamlRunRecord *
nth (CamlSession *s, guint i)
{
  CamlRunRecord *r = g_list_model_get_item (caml_session_get_runs (s), i);
  g_object_unref (r);   /* the list holds it */
  return r;
}

static void
train_to_end (CamlSession *s)
{
  caml_session_train (s);
  assert_true (iterate_until (run_ended, s, 120));
  iterate_until (always_false, NULL, 0.2);   /* the last copies */
}

/* Each run that ended is kept, named in order, with what differs from the
 * run before and its final figures; a run that goes on (more steps)
 * updates its record instead of adding one. */
static void
test_runs_recorded (void **state)
{
  CamlSession *s = session_preset ("xor-ca-nn", 200);
  GListModel *runs = caml_session_get_runs (s);
  GListModel *prop = NULL;
  g_object_get (s, "runs", &prop, NULL);
  assert_ptr_equal (prop, runs);
  g_object_unref (prop);
  assert_int_equal (g_list_model_get_n_items (runs), 0);

  train_to_end (s);
  assert_int_equal (g_list_model_get_n_items (runs), 1);
  CamlRunRecord *first = nth (s, 0);
  assert_string_equal (caml_run_record_get_name (first), "Run 1");
  assert_string_equal (caml_run_record_get_differs (first), "first run");
  const CamlRunFigures *f = caml_run_record_get_figures (first);
  assert_int_equal (f->state, CAML_TRAINER_FINISHED);
  assert_int_equal (f->step, 200);
  assert_false (f->classification);   /* XOR here is a regression: MSE */
  int n_rows = 0;
  const CamlEvalRow *rows = caml_session_get_rows (s, &n_rows);
  assert_true (n_rows > 0);
  assert_true (f->test_metric == rows[n_rows - 1].test_metric);
  assert_true (f->test_loss == rows[n_rows - 1].test_loss);
  assert_true (isfinite (f->train_loss));
  assert_true (isnan (f->sigma_auc));   /* no σ-maps */
  assert_int_equal (f->n_params, caml_run_get_n_weights (caml_session_peek_run (s)));
  assert_true (f->steps_per_second > 0 && f->seconds > 0);
  assert_true (isnan (caml_run_record_get_difference (first)));
  assert_false (caml_run_record_get_shown (first));
  const double *steps;
  long n = 0, stride = 0;
  const double *losses = caml_run_record_get_losses (first, &steps, &n, &stride);
  assert_int_equal (n, 200);
  assert_int_equal (stride, 1);
  assert_true (steps[0] == 1.0 && steps[199] == 200.0 && isfinite (losses[199]));

  /* More steps: the same run goes on, and its record follows. */
  caml_session_set_steps (s, 300);
  train_to_end (s);
  assert_int_equal (g_list_model_get_n_items (runs), 1);
  assert_int_equal (caml_run_record_get_figures (first)->step, 300);

  /* Another learning rate: a second run, which says what changed. */
  double lr = caml_session_get_experiment (s)->optimizer.lr;
  caml_session_set_lr (s, lr * 10);
  assert_true (iterate_until (not_loading, s, 30));
  train_to_end (s);
  assert_int_equal (g_list_model_get_n_items (runs), 2);
  CamlRunRecord *second = nth (s, 1);
  assert_string_equal (caml_run_record_get_name (second), "Run 2");
  const char *differs = caml_run_record_get_differs (second);
  print_message ("Run 2 differs: %s\n", differs);
  assert_non_null (strstr (differs, "lr "));
  assert_null (strstr (differs, "seed"));
  /* Renamed by the user. */
  caml_run_record_set_name (second, "high lr");
  assert_string_equal (caml_run_record_get_name (nth (s, 1)), "high lr");
  caml_run_record_set_name (second, "");   /* a name is never empty */
  assert_string_equal (caml_run_record_get_name (second), "high lr");
  session_free (s);
}

/* A run stopped, or dropped while it trains (Reset), is kept as stopped
 * where it was. */
static void
test_stopped_kept (void **state)
{
  CamlSession *s = session_preset ("xor-ca-nn", 100000);
  caml_session_set_speed (s, 5);   /* slow: 100 steps a second, stopped well before the end */
  caml_session_train (s);
  iterate_until (always_false, NULL, 0.5);
  caml_session_stop (s);
  assert_true (iterate_until (run_ended, s, 30));
  iterate_until (always_false, NULL, 0.2);
  GListModel *runs = caml_session_get_runs (s);
  assert_int_equal (g_list_model_get_n_items (runs), 1);
  const CamlRunFigures *f = caml_run_record_get_figures (nth (s, 0));
  assert_int_equal (f->state, CAML_TRAINER_STOPPED);
  assert_true (f->step > 0 && f->step < 100000);

  caml_session_train (s);   /* Stopped with steps ahead: it goes on … */
  iterate_until (always_false, NULL, 0.3);
  caml_session_reset (s);   /* … and Reset drops it while it trains */
  assert_int_equal (g_list_model_get_n_items (runs), 1);   /* the same run */
  assert_true (caml_run_record_get_figures (nth (s, 0))->step >= f->step);
  session_free (s);
}

/* Compare with Baseline: the baseline is a record of its own, just after
 * its run's, and both carry the model's test figure minus the
 * baseline's at the baseline's last evaluation. */
static void
test_baseline_pair (void **state)
{
  CamlSession *s = session_preset ("xor-ca-nn", 200);
  caml_session_set_compare (s, TRUE);
  caml_session_train (s);
  assert_true (iterate_until (run_ended, s, 120));
  assert_true (iterate_until (baseline_done, s, 120));
  iterate_until (always_false, NULL, 0.3);

  GListModel *runs = caml_session_get_runs (s);
  assert_int_equal (g_list_model_get_n_items (runs), 2);
  CamlRunRecord *model = nth (s, 0), *base = nth (s, 1);
  assert_string_equal (caml_run_record_get_name (model), "Run 1");
  assert_string_equal (caml_run_record_get_name (base), "Run 1 (baseline)");
  assert_true (caml_run_record_is_baseline (base));
  assert_false (caml_run_record_is_baseline (model));
  assert_string_equal (caml_run_record_get_differs (base), "baseline of Run 1");
  double m, b, auc;
  assert_true (caml_session_get_comparison (s, &m, &b, &auc));
  double d = caml_run_record_get_difference (model);
  assert_true (isfinite (d));
  assert_true (fabs (d - (m - b)) < 1e-12);
  assert_true (caml_run_record_get_difference (base) == d);
  /* The baseline's experiment has no CA layer. */
  const CamlExperiment *be = caml_run_record_get_experiment (base);
  for (int i = 0; i < be->n_layers; i++)
    assert_false (be->layers[i].ops->context_aware);

  /* The next run (Train after a finished one) gets records of its own. */
  caml_session_train (s);
  assert_true (iterate_until (run_ended, s, 120));
  assert_true (iterate_until (baseline_done, s, 120));
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (g_list_model_get_n_items (runs), 4);
  assert_string_equal (caml_run_record_get_name (nth (s, 2)), "Run 2");
  assert_string_equal (caml_run_record_get_name (nth (s, 3)), "Run 2 (baseline)");
  assert_string_equal (caml_run_record_get_differs (nth (s, 2)), "same settings");
  session_free (s);
}

static void
on_progress (CamlSession *s, guint what, int *curves)
{
  if (what & CAML_SESSION_CURVES)
    (*curves)++;
}

/* Ticking a record is news for the loss plot; deleting one or all. */
static void
test_tick_and_delete (void **state)
{
  CamlSession *s = session_preset ("xor-ca-nn", 100);
  train_to_end (s);
  caml_session_set_seed (s, 7);
  assert_true (iterate_until (not_loading, s, 30));
  train_to_end (s);
  GListModel *runs = caml_session_get_runs (s);
  assert_int_equal (g_list_model_get_n_items (runs), 2);
  assert_non_null (strstr (caml_run_record_get_differs (nth (s, 1)), "seed"));

  int curves = 0;
  g_signal_connect (s, "progress", G_CALLBACK (on_progress), &curves);
  g_object_set (nth (s, 0), "shown", TRUE, NULL);
  assert_int_equal (curves, 1);
  caml_run_record_set_shown (nth (s, 0), TRUE);   /* no change, no news */
  assert_int_equal (curves, 1);

  CamlRunRecord *first = g_object_ref (nth (s, 0));
  caml_session_delete_run (s, first);
  assert_int_equal (curves, 2);   /* a ticked one went */
  assert_int_equal (g_list_model_get_n_items (runs), 1);
  assert_string_equal (caml_run_record_get_name (nth (s, 0)), "Run 2");
  caml_run_record_set_shown (first, FALSE);   /* no longer the session's */
  assert_int_equal (curves, 2);
  g_object_unref (first);

  caml_session_delete_all_runs (s);
  assert_int_equal (g_list_model_get_n_items (runs), 0);
  /* The next run is Run 3: names are not reused. */
  caml_session_set_seed (s, 8);
  assert_true (iterate_until (not_loading, s, 30));
  train_to_end (s);
  assert_string_equal (caml_run_record_get_name (nth (s, 0)), "Run 3");
  g_signal_handlers_disconnect_by_data (s, &curves);
  session_free (s);
}

static void
on_notice (CamlSession *s, const char *message, gboolean warning, char **notice)
{
  g_free (*notice);
  *notice = g_strdup (message);
}

static void
on_error (CamlSession *s, int kind, const char *message, char **error)
{
  g_free (*error);
  *error = g_strdup (message);
}

static gboolean
has_text (gpointer data)
{
  return *(char **) data != NULL;
}

/* Export Runs: a header and a row per record, written on a worker thread;
 * a name with a comma is quoted. */
static void
test_export_csv (void **state)
{
  CamlSession *s = session_preset ("xor-ca-nn", 100);
  caml_session_set_compare (s, TRUE);
  caml_session_train (s);
  assert_true (iterate_until (run_ended, s, 120));
  assert_true (iterate_until (baseline_done, s, 120));
  iterate_until (always_false, NULL, 0.3);
  caml_run_record_set_name (nth (s, 0), "CA, first");

  g_autofree char *dir = g_dir_make_tmp ("caml-runs-csv-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "runs.csv", NULL);
  char *notice = NULL;
  g_signal_connect (s, "notice", G_CALLBACK (on_notice), &notice);
  caml_session_export_runs (s, path);
  assert_true (iterate_until (has_text, &notice, 30));
  assert_non_null (strstr (notice, "Exported the runs"));
  g_autofree char *text = NULL;
  assert_true (g_file_get_contents (path, &text, NULL, NULL));
  print_message ("%s", text);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  assert_int_equal (g_strv_length (lines), 4);   /* header, 2 rows, "" after the last \n */
  assert_string_equal (lines[0], "name,baseline,state,steps,differs,train_loss,test_loss,"
                                 "test_accuracy,test_mse,sigma_auc,parameters,steps_per_second,"
                                 "seconds,difference_vs_baseline");
  assert_true (g_str_has_prefix (lines[1], "\"CA, first\",0,finished,100,first run,"));
  assert_true (g_str_has_prefix (lines[2], "Run 1 (baseline),1,finished,100,baseline of Run 1,"));
  /* The figures: MSE (XOR is a regression here), no accuracy or σ-AUC, the
   * difference on both rows. */
  g_auto (GStrv) base = g_strsplit (lines[2], ",", -1);
  assert_int_equal (g_strv_length (base), 14);
  const CamlRunFigures *bf = caml_run_record_get_figures (nth (s, 1));
  assert_true (fabs (g_ascii_strtod (base[8], NULL) - bf->test_metric) < 1e-5);
  assert_string_equal (base[7], "");
  assert_string_equal (base[9], "");
  assert_int_equal (g_ascii_strtoull (base[10], NULL, 10), bf->n_params);
  assert_true (fabs (g_ascii_strtod (base[13], NULL)
                     - caml_run_record_get_difference (nth (s, 1))) < 1e-5);
  g_autofree char *direct = caml_session_dup_runs_csv (s);
  assert_string_equal (direct, text);

  /* A folder that is not there: the banner says why. */
  g_clear_pointer (&notice, g_free);
  g_autofree char *bad = g_build_filename (dir, "missing", "runs.csv", NULL);
  char *error = NULL;
  g_signal_connect (s, "error", G_CALLBACK (on_error), &error);
  caml_session_export_runs (s, bad);
  assert_true (iterate_until (no_jobs, NULL, 30));
  print_message ("error: %s\n", error);
  assert_non_null (error);
  assert_non_null (strstr (error, "Cannot export the runs: "));
  g_signal_handlers_disconnect_by_data (s, &notice);
  g_signal_handlers_disconnect_by_data (s, &error);
  g_free (notice);
  g_free (error);
  g_unlink (path);
  g_rmdir (dir);
  session_free (s);
}

static gboolean
not_sweeping (gpointer data)
{
  return !caml_session_is_sweeping (data);
}

static gboolean
sweep_training (gpointer data)
{
  CamlSweep *sweep = caml_session_get_sweep (data);
  if (sweep == NULL)
    return FALSE;
  g_autoptr (CamlSweepRun) first = g_list_model_get_item (caml_sweep_get_runs (sweep), 0);
  return caml_sweep_run_get_state (first) == CAML_SWEEP_RUN_TRAINING;
}

static int
count_lines (const char *path)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return -1;
  int n = 0;
  for (const char *c = text; *c; c++)
    n += *c == '\n';
  return n;
}

/* A sweep over two learning rates trains each point and its baseline on a
 * thread of its own, keeps each in the runs list (named after its point,
 * the baseline paired with its model), and leaves `caml sweep`'s folder:
 * sweep.json, the tables and a results folder per run. The session's own
 * run is not touched, and a second sweep is refused while one runs. */
static void
test_sweep_keeps_runs (void **state)
{
  CamlSession *s = session_preset ("xor-ca-nn", 40);
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("caml-session-sweep-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "sweep", NULL);
  CamlSweepPlan *plan = caml_sweep_plan_new (caml_experiment_copy (caml_session_get_experiment (s)),
                                             "xor-ca-nn", NULL);
  const char *lrs[] = { "0.01", "0.1" };
  assert_true (caml_sweep_plan_add_axis (plan, "optimizer.lr", lrs, 2, &error));
  assert_true (caml_session_start_sweep (s, plan, out, &error));
  assert_true (caml_session_is_sweeping (s));
  /* one at a time */
  CamlSweepPlan *again = caml_sweep_plan_new (caml_experiment_copy (caml_session_get_experiment (s)),
                                              NULL, NULL);
  assert_true (caml_sweep_plan_add_axis (again, "optimizer.lr", lrs, 1, &error));
  assert_false (caml_session_start_sweep (s, again, out, &error));
  assert_non_null (strstr (error->message, "a sweep is under way"));
  g_clear_error (&error);

  assert_true (iterate_until (not_sweeping, s, 120));
  assert_true (iterate_until (no_jobs, NULL, 30));
  CamlSweep *sweep = caml_session_get_sweep (s);
  assert_int_equal (caml_sweep_get_n_ended (sweep), 4);
  assert_null (caml_sweep_get_problem (sweep));
  int n = 0;
  const CamlSweepResult *results = caml_sweep_get_results (sweep, &n);
  assert_int_equal (n, 4);
  for (int i = 0; i < n; i++)
    {
      assert_true (results[i].done);
      assert_int_equal (results[i].status, 0);
      assert_true (isfinite (results[i].metric));
      assert_int_equal (results[i].baseline, i % 2 == 1);
      assert_int_equal (results[i].index[0], i / 2);
    }
  /* the session's run was not started */
  assert_int_equal (caml_session_get_state (s), CAML_TRAINER_IDLE);

  GListModel *runs = caml_session_get_runs (s);
  assert_int_equal (g_list_model_get_n_items (runs), 4);
  g_autoptr (CamlRunRecord) model = g_list_model_get_item (runs, 0);
  g_autoptr (CamlRunRecord) base = g_list_model_get_item (runs, 1);
  g_autoptr (CamlRunRecord) model2 = g_list_model_get_item (runs, 2);
  assert_string_equal (caml_run_record_get_name (model), "optimizer.lr=0.01");
  assert_string_equal (caml_run_record_get_name (base), "optimizer.lr=0.01 (baseline)");
  assert_string_equal (caml_run_record_get_name (model2), "optimizer.lr=0.1");
  assert_true (caml_run_record_is_baseline (base));
  assert_int_equal (caml_run_record_get_number (model), caml_run_record_get_number (base));
  assert_int_not_equal (caml_run_record_get_number (model), caml_run_record_get_number (model2));
  assert_true (isfinite (caml_run_record_get_difference (model)));
  assert_int_equal (caml_run_record_get_figures (model)->step, 40);
  print_message ("differs: %s\n", caml_run_record_get_differs (model2));
  assert_non_null (strstr (caml_run_record_get_differs (model2), "lr"));

  const char *files[] = { "sweep.json", "sweep.csv", "sweep.md", "sweep.png",
                          "optimizer.lr=0.01/ca/summary.json",
                          "optimizer.lr=0.01/baseline/model.weights",
                          "optimizer.lr=0.1/ca/experiment.json" };
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *path = g_build_filename (out, files[i], NULL);
      if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
        fail_msg ("%s was not written", path);
    }
  g_autofree char *csv = g_build_filename (out, "sweep.csv", NULL);
  assert_int_equal (count_lines (csv), 5);
  /* the folder's plan runs again headless: it loads as it was */
  g_autofree char *json = g_build_filename (out, "sweep.json", NULL);
  g_autoptr (CamlSweepPlan) back = caml_sweep_plan_load (json, &error);
  assert_non_null (back);
  assert_int_equal (caml_sweep_plan_n_runs (back), 4);
  session_free (s);
  remove_tree (dir);
}

/* Cancel stops the run under way (its results are kept, as Stop keeps a
 * run's) and skips the rest. */
static void
test_sweep_cancel (void **state)
{
  CamlSession *s = session_preset ("xor-ca-nn", 1000000);
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("caml-session-sweep-XXXXXX", NULL);
  CamlSweepPlan *plan = caml_sweep_plan_new (caml_experiment_copy (caml_session_get_experiment (s)),
                                             NULL, NULL);
  const char *seeds[] = { "1", "2", "3" };
  assert_true (caml_sweep_plan_add_axis (plan, "seed", seeds, 3, &error));
  assert_true (caml_session_start_sweep (s, plan, dir, &error));
  assert_true (iterate_until (sweep_training, s, 60));
  iterate_until (always_false, NULL, 0.3);   /* some steps */
  caml_session_cancel_sweep (s);
  assert_true (iterate_until (not_sweeping, s, 60));
  assert_true (iterate_until (no_jobs, NULL, 30));
  CamlSweep *sweep = caml_session_get_sweep (s);
  GListModel *items = caml_sweep_get_runs (sweep);
  g_autoptr (CamlSweepRun) first = g_list_model_get_item (items, 0);
  g_autoptr (CamlSweepRun) last = g_list_model_get_item (items, g_list_model_get_n_items (items) - 1);
  assert_int_equal (caml_sweep_run_get_state (first), CAML_SWEEP_RUN_DONE);
  assert_string_equal (caml_sweep_status_name (caml_sweep_run_get_result (first)->status),
                       "interrupted");
  assert_int_equal (caml_sweep_run_get_state (last), CAML_SWEEP_RUN_SKIPPED);
  assert_int_equal (caml_sweep_get_n_ended (sweep), 1);
  g_autofree char *status = caml_sweep_dup_status (sweep, NULL);
  assert_non_null (strstr (status, "cancelled"));
  g_autofree char *weights = g_build_filename (caml_sweep_run_get_dir (first), "model.weights",
                                               NULL);
  assert_true (g_file_test (weights, G_FILE_TEST_IS_REGULAR));
  assert_int_equal (g_list_model_get_n_items (caml_session_get_runs (s)), 1);
  session_free (s);
  remove_tree (dir);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_runs_recorded),
    cmocka_unit_test (test_stopped_kept),
    cmocka_unit_test (test_baseline_pair),
    cmocka_unit_test (test_tick_and_delete),
    cmocka_unit_test (test_export_csv),
    cmocka_unit_test (test_sweep_keeps_runs),
    cmocka_unit_test (test_sweep_cancel),
  };
  g_autofree char *autosave_dir = g_dir_make_tmp ("caml-session-autosave-XXXXXX", NULL);
  g_setenv ("CAML_AUTOSAVE_DIR", autosave_dir, TRUE);
  int failed = cmocka_run_group_tests (tests, NULL, NULL);
  remove_tree (autosave_dir);
  return failed;
}
