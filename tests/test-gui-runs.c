/* test-gui-runs.c — data and runs as the window shows them, under Xvfb:
 * the data drop-down and menu, file choosers, loading, comparison with a
 * baseline, divergence and its banner. What the session does with the
 * data and runs is tested headless by test-session.c.
 *
 * Run by `meson test gui-runs` through xvfb-run, with GSETTINGS_SCHEMA_DIR
 * set to the schema compiled in the build tree, GSETTINGS_BACKEND=memory. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <sys/wait.h>
#include <cmocka.h>

#include <glib/gstdio.h>
#include <gtk/gtk.h>

#include "caml-application.h"
#include "words-page.h"
#include "caml-window.h"
#include "caml-model-editor.h"
#include "presets.h"
#include "caml-data-source.h"
#include "caml-run.h"
#include "caml-session.h"
#include "gui-harness.h"

static const char *
progress_text (CamlWindow *win)
{
  return gtk_progress_bar_get_text (GTK_PROGRESS_BAR (template_child (win, "progress_bar")));
}

/* Picks a data set in the drop-down, as a click does. */
static void
pick_data (CamlWindow *win, CamlDataKind kind)
{
  gtk_drop_down_set_selected (GTK_DROP_DOWN (template_child (win, "data_drop")), kind);
}

static guint
data_picked (CamlWindow *win)
{
  return gtk_drop_down_get_selected (GTK_DROP_DOWN (template_child (win, "data_drop")));
}

/* The Data section: fetched sets that are not there change nothing and say
 * which command fetches them; four IDX files chosen in any order load on a
 * worker thread and become the data only when they load; a broken file
 * changes nothing and shows the engine's message. */
static void
test_data_picker (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-data-XXXXXX", NULL);
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  CamlExperiment *before = caml_experiment_copy (caml_window_get_experiment (win));

  g_autofree char *saved_dir = g_strdup (g_getenv ("CAML_DATA_DIR"));
  g_setenv ("CAML_DATA_DIR", dir, TRUE);
  activate (win, "data", g_variant_new_string ("mnist"));
  const char *msg = caml_window_get_error (win);
  assert_non_null (msg);
  print_message ("%s\n", msg);
  assert_non_null (strstr (msg, "datasets/fetch mnist`"));
  assert_true (caml_experiment_equal (before, caml_window_get_experiment (win)));
  activate (win, "data", g_variant_new_string ("fashion_mnist"));
  assert_non_null (strstr (caml_window_get_error (win), "datasets/fetch fashion-mnist`"));
  assert_true (caml_experiment_equal (before, caml_window_get_experiment (win)));
  assert_false (caml_window_is_modified (win));
  assert_true (enabled (win, "train"));
  if (saved_dir != NULL)
    g_setenv ("CAML_DATA_DIR", saved_dir, TRUE);
  else
    g_unsetenv ("CAML_DATA_DIR");

  /* Four IDX files, in any order. */
  const char *names[] = { "train-images", "train-labels", "test-images", "test-labels" };
  char *paths[4];
  for (int i = 0; i < 4; i++)
    paths[i] = g_build_filename (dir, names[i], NULL);
  write_idx_pair (paths[0], paths[1], 200, 1);
  write_idx_pair (paths[2], paths[3], 120, 2);
  const char *shuffled[] = { paths[3], paths[0], paths[2], paths[1] };
  caml_window_use_idx_files (win, shuffled, 4);
  assert_true (caml_window_is_loading (win));
  assert_true (caml_experiment_equal (before, caml_window_get_experiment (win)));
  assert_true (iterate_until (not_loading, win, 60));
  assert_null (caml_window_get_error (win));
  const CamlExperiment *exp = caml_window_get_experiment (win);
  assert_int_equal (exp->data.kind, CAML_DATA_IDX);
  for (int i = 0; i < 4; i++)
    assert_string_equal (exp->data.idx_paths[i], paths[i]);
  assert_int_equal (exp->loss, CAML_LOSS_SOFTMAX_XENT);   /* the loss follows the data */
  assert_true (caml_window_is_modified (win));
  print_message ("data: %s\n", caml_window_get_data_text (win));
  assert_non_null (strstr (caml_window_get_data_text (win), "200 training and 120 test"));

  /* A truncated image file: the header says 200 images, the file holds 3. */
  CamlExperiment *with_idx = caml_experiment_copy (exp);
  g_autofree char *cut = g_build_filename (dir, "cut-train-images", NULL);
  {
    g_autofree char *bytes = NULL;
    gsize len = 0;
    assert_true (g_file_get_contents (paths[0], &bytes, &len, NULL));
    assert_true (g_file_set_contents (cut, bytes, 16 + 3 * 28 * 28, NULL));
  }
  const char *broken[] = { cut, paths[1], paths[2], paths[3] };
  caml_window_use_idx_files (win, broken, 4);
  assert_true (iterate_until (not_loading, win, 60));
  msg = caml_window_get_error (win);
  assert_non_null (msg);
  print_message ("%s\n", msg);
  assert_non_null (strstr (msg, "cut-train-images"));
  assert_true (caml_experiment_equal (with_idx, caml_window_get_experiment (win)));
  /* Three files: nothing is read, nothing changes. */
  caml_window_use_idx_files (win, broken, 3);
  assert_true (iterate_until (not_loading, win, 60));
  assert_non_null (strstr (caml_window_get_error (win), "not 3"));
  assert_true (caml_experiment_equal (with_idx, caml_window_get_experiment (win)));
  /* Other files that load, then at once broken ones: the later choice counts. */
  g_autofree char *other_images = g_build_filename (dir, "other-train-images", NULL);
  g_autofree char *other_labels = g_build_filename (dir, "other-train-labels", NULL);
  write_idx_pair (other_images, other_labels, 150, 3);
  const char *other[] = { other_images, other_labels, paths[2], paths[3] };
  caml_window_use_idx_files (win, other, 4);
  caml_window_use_idx_files (win, broken, 4);
  assert_true (iterate_until (not_loading, win, 60));
  assert_true (iterate_until (no_jobs, NULL, 60));
  msg = caml_window_get_error (win);
  assert_non_null (msg);
  assert_non_null (strstr (msg, "cut-train-images"));
  assert_true (caml_experiment_equal (with_idx, caml_window_get_experiment (win)));
  assert_non_null (strstr (caml_window_get_data_text (win), "200 training and 120 test"));
  g_unlink (other_images);
  g_unlink (other_labels);
  caml_experiment_free (with_idx);
  caml_experiment_free (before);

  /* Train pressed while the model is being built starts it once built. */
  g_autofree char *json = g_strdup_printf (
    "{ \"name\": \"idx-pending\", \"seed\": 0,"
    "  \"data\": { \"idx\": { \"train_images\": \"%s\", \"train_labels\": \"%s\","
    "                        \"test_images\": \"%s\", \"test_labels\": \"%s\" } },"
    "  \"model\": [ { \"layer\": \"ca_cnn\", \"kernel\": 3, \"depth\": 2 },"
    "               { \"layer\": \"flatten\" },"
    "               { \"layer\": \"dense\", \"units\": 10, \"activation\": \"identity\" } ],"
    "  \"loss\": \"softmax_cross_entropy\","
    "  \"optimizer\": { \"type\": \"adagrad\", \"lr\": 0.01 },"
    "  \"training\": { \"steps\": 20, \"batch_size\": 20, \"eval_every\": 10 } }",
    paths[0], paths[1], paths[2], paths[3]);
  g_autofree char *exp_path = g_build_filename (dir, "idx.json", NULL);
  assert_true (g_file_set_contents (exp_path, json, -1, NULL));
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_load_file (win, exp_path, &error));
  assert_true (iterate_until (not_loading, win, 60));
  activate_editor (win, "select-layer", g_variant_new_int32 (0));
  activate_editor (win, "layer-option", g_variant_new ("(sd)", "depth", 3.0));
  assert_true (caml_window_is_loading (win));      /* the new model is being built */
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 120));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  long n_steps = 0;
  caml_window_get_losses (win, &n_steps);
  assert_int_equal (n_steps, 20);
  gtk_window_destroy (GTK_WINDOW (win));

  /* A window closed while its data loads: the job ends on its own and
   * drops what it loaded. */
  CamlWindow *gone = caml_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (gone));
  assert_true (caml_window_load_file (gone, exp_path, &error));
  assert_true (caml_window_is_loading (gone));
  assert_true (caml_window_get_jobs_in_flight () > 0);
  gtk_window_destroy (GTK_WINDOW (gone));
  assert_true (iterate_until (no_jobs, NULL, 60));

  g_unlink (exp_path);
  g_unlink (cut);
  for (int i = 0; i < 4; i++)
    {
      g_unlink (paths[i]);
      g_free (paths[i]);
    }
  g_rmdir (dir);
}

/* MNIST (when fetched) loads while the window keeps drawing: the main loop
 * runs all along, and the window says what it is loading. */
static void
test_mnist_loading (void **state)
{
  char *missing = caml_data_source_missing (CAML_DATA_MNIST);
  if (missing != NULL)
    {
      print_message ("skipped: %s\n", missing);
      g_free (missing);   /* skip () does not return */
      skip ();
    }
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "mnist-ca-cnn"));
  assert_true (caml_window_is_loading (win));
  assert_non_null (strstr (caml_window_get_data_text (win), "Loading MNIST"));
  /* Train can be pressed already: it starts once the model is built. */
  assert_true (enabled (win, "train"));
  activate (win, "train", NULL);
  Stall stall = { 0, 0, g_array_new (FALSE, FALSE, sizeof (gint64)) };
  guint tick = g_timeout_add (5, on_stall_tick, &stall);
  assert_true (iterate_until (not_loading, win, 120));
  g_source_remove (tick);
  print_message ("MNIST loaded while the main loop ran %u times; longest gap %.1f ms\n",
                 stall.gaps->len, stall.max_gap / 1000.0);
  assert_true (stall.gaps->len > 0);
  assert_null (caml_window_get_error (win));
  assert_true (caml_window_get_sigma_snapshots (win, NULL) >= 1);   /* the untrained maps */
  assert_true (caml_window_has_run (win));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_RUNNING);
  activate (win, "stop", NULL);
  assert_true (iterate_until (run_ended, win, 30));
  g_array_unref (stall.gaps);
  gtk_window_destroy (GTK_WINDOW (win));
}

/* Text data loads on a worker thread too (IMDB's reviews take seconds, and
 * so do word vectors): the window is drawn and says what it loads. Needs
 * the shared SST files. */
static void
test_text_loading (void **state)
{
  char *sst = g_build_filename (caml_shared_datasets_dir (), "sst", "sentiment-train", NULL);
  gboolean there = g_file_test (sst, G_FILE_TEST_EXISTS);
  if (!there)
    print_message ("skipped: %s is not there (../shared/datasets)\n", sst);
  g_free (sst);   /* skip () does not return */
  if (!there)
    skip ();
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "sst-ca-bsfe"));
  assert_true (caml_window_is_loading (win));
  assert_non_null (strstr (caml_window_get_data_text (win), "Loading SST"));
  assert_true (iterate_until (not_loading, win, 60));
  assert_null (caml_window_get_error (win));
  assert_true (enabled (win, "train"));
  gtk_window_destroy (GTK_WINDOW (win));
}

static gboolean
baseline_ended (gpointer data)
{
  return caml_window_baseline_ended (CAML_WINDOW (data)) && run_ended (data);
}

static gboolean
baseline_copied (gpointer data)
{
  long n = 0;
  caml_window_get_baseline_losses (CAML_WINDOW (data), &n);
  return n == caml_window_get_experiment (CAML_WINDOW (data))->steps;
}

static gboolean
baseline_paused (gpointer data)
{
  CamlRun *base = caml_window_peek_baseline (CAML_WINDOW (data));
  CamlProgress p;
  if (base == NULL)
    return FALSE;
  caml_run_get_progress (base, &p);
  return p.state == CAML_TRAINER_PAUSED;
}

/* Steps raised on a finished run: the run goes on from where it ended,
 * paused (Train resumes it), with its optimizer's state and batch order —
 * the losses are those of one run of that many steps, bit for bit — and
 * its baseline goes on beside it. Nothing is set aside. Fewer steps than
 * done start a new run; so does Reset. */
static void
test_extend_finished_run (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  activate (win, "compare-baseline", NULL);

  /* One run of 70 steps, for reference. */
  gtk_spin_button_set_value (steps, 70);
  assert_true (iterate_until (not_loading, win, 10));
  activate (win, "train", NULL);
  assert_true (iterate_until (baseline_ended, win, 60));
  assert_true (iterate_until (baseline_copied, win, 10));
  long n = 0, n_base = 0;
  g_autofree float *whole = g_memdup2 (caml_window_get_losses (win, &n), 70 * sizeof (float));
  assert_int_equal (n, 70);
  g_autofree float *whole_base = g_memdup2 (caml_window_get_baseline_losses (win, &n_base),
                                            70 * sizeof (float));
  assert_int_equal (n_base, 70);

  /* 40 steps (a new run: fewer than done), then 70 */
  gtk_spin_button_set_value (steps, 40);
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_IDLE);
  activate (win, "drop-set-aside", NULL);
  activate (win, "train", NULL);
  assert_true (iterate_until (baseline_ended, win, 60));
  assert_true (iterate_until (baseline_copied, win, 10));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  gtk_spin_button_set_value (steps, 70);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_PAUSED);
  assert_false (caml_window_has_set_aside_weights (win, NULL));
  assert_true (caml_window_is_modified (win));
  assert_int_equal (caml_window_get_experiment (win)->steps, 70);
  assert_non_null (strstr (caml_window_get_last_notice (win), "goes on from step 40: Resume"));
  CamlProgress p;
  caml_run_get_progress (caml_window_peek_run (win), &p);
  assert_int_equal (p.step, 40);
  assert_int_equal (p.total_steps, 70);
  assert_int_equal (caml_run_get_experiment (caml_window_peek_run (win))->steps, 70);
  caml_window_get_losses (win, &n);
  assert_int_equal (n, 40);
  assert_true (iterate_until (baseline_paused, win, 10));
  assert_false (gtk_widget_get_sensitive (GTK_WIDGET (steps)));   /* a paused run's */

  assert_non_null (strstr (status_text (win), "Resume (F5)"));
  activate (win, "train", NULL);   /* resumes both */
  assert_null (strstr (status_text (win), "Resume (F5)"));   /* old news once acted on */
  assert_true (iterate_until (baseline_ended, win, 60));
  assert_true (iterate_until (baseline_copied, win, 10));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  const float *losses = caml_window_get_losses (win, &n);
  assert_int_equal (n, 70);
  assert_memory_equal (losses, whole, 70 * sizeof (float));
  const float *base = caml_window_get_baseline_losses (win, &n_base);
  assert_int_equal (n_base, 70);
  assert_memory_equal (base, whole_base, 70 * sizeof (float));
  int n_rows = 0;
  const CamlEvalRow *rows = caml_window_get_rows (win, &n_rows);
  assert_true (n_rows >= 2);
  assert_int_equal (rows[n_rows - 1].step, 70);

  /* Reset starts afresh (the trained weights set aside). */
  activate (win, "reset", NULL);
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_IDLE);
  assert_true (caml_window_has_set_aside_weights (win, NULL));
  activate (win, "drop-set-aside", NULL);
  activate (win, "compare-baseline", NULL);   /* off, for the tests after */
  gtk_window_destroy (GTK_WINDOW (win));
}

static gboolean
comparing (CamlWindow *win)
{
  g_autoptr (GVariant) on = g_action_group_get_action_state (G_ACTION_GROUP (win),
                                                             "compare-baseline");
  return g_variant_get_boolean (on);
}

static void
test_compare_baseline (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  activate (win, "data", g_variant_new_string ("xor"));
  activate_editor (win, "clear-model", NULL);
  activate_editor (win, "add-layer", g_variant_new_string ("ca_nn"));
  activate_editor (win, "layer-option", g_variant_new ("(sd)", "units", 1.0));

  long n_base = -1;
  double base_lr = 0;
  int base_em = -1;
  assert_null (caml_window_get_baseline_losses (win, &n_base));
  assert_false (caml_window_get_baseline_optimizer (win, &base_lr, &base_em));

  /* One step, then a live learning-rate change: a baseline started now
   * trains at the rate the run has now. */
  activate (win, "step", NULL);
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_PAUSED);
  activate (win, "set-lr", g_variant_new_double (0.04));
  activate (win, "compare-baseline", NULL);
  /* Built on a worker thread; a change meanwhile reaches it too. */
  assert_true (comparing (win));
  assert_true (caml_window_is_loading (win));
  activate (win, "set-lr", g_variant_new_double (0.05));
  assert_true (iterate_until (not_loading, win, 10));
  assert_true (enabled (win, "compare-baseline"));   /* to turn it off */
  assert_true (caml_window_get_baseline_optimizer (win, &base_lr, &base_em));
  assert_true (base_lr == 0.05);
  /* Later changes reach both runs. */
  activate (win, "set-lr", g_variant_new_double (0.02));
  activate (win, "set-em-steps", g_variant_new_int32 (3));
  assert_true (caml_window_get_baseline_optimizer (win, &base_lr, &base_em));
  assert_true (base_lr == 0.02);
  assert_int_equal (base_em, 3);
  assert_int_equal (caml_window_get_n_events (win), 4);
  activate (win, "set-em-steps", g_variant_new_int32 (0));
  activate (win, "set-lr", g_variant_new_double (0.1));
  activate (win, "train", NULL);   /* resumes both */
  assert_true (iterate_until (baseline_ended, win, 120));
  assert_true (iterate_until (baseline_copied, win, 10));   /* the window's last update */
  const float *base = caml_window_get_baseline_losses (win, &n_base);
  assert_non_null (base);
  assert_int_equal (n_base, caml_window_get_experiment (win)->steps);
  const CamlPlotLine *plot = caml_plot_view_get_line (caml_window_get_plot_view (win, "loss"));
  assert_non_null (plot);
  size_t n_values = 0;
  caml_plot_line_get_values (plot, 2, &n_values);   /* the dashed baseline train loss */
  assert_true (n_values > 0);

  const char *out_dir = g_getenv ("CAML_SCREENSHOT_DIR");
  g_autofree char *shot = g_build_filename (out_dir != NULL ? out_dir : ".",
                                            "gui-baseline-loss.png", NULL);
  g_autoptr (GError) error = NULL;
  assert_true (caml_plot_view_write (caml_window_get_plot_view (win, "loss"), shot, 800, 400,
                                     &error));
  /* Only PNG and SVG: a .jpg name got PNG data. */
  g_autofree char *jpg = g_build_filename (g_get_tmp_dir (), "caml-gui-loss.jpg", NULL);
  assert_false (caml_plot_view_write (caml_window_get_plot_view (win, "loss"), jpg, 800, 400,
                                      &error));
  assert_non_null (strstr (error->message, "PNG or SVG"));
  assert_false (g_file_test (jpg, G_FILE_TEST_EXISTS));
  g_clear_error (&error);

  /* Reset drops the baseline, not the comparison; the previous run's
   * curves stay, and so does their export. */
  activate (win, "reset", NULL);
  assert_null (caml_window_get_baseline_losses (win, &n_base));
  assert_true (comparing (win));
  assert_true (iterate_until (can_train, win, 10));
  assert_true (caml_plot_view_has_plot (caml_window_get_plot_view (win, "loss")));
  assert_true (enabled (win, "export-loss"));
  /* F5 then trains a baseline beside the new run. */
  activate (win, "train", NULL);
  assert_true (iterate_until (baseline_ended, win, 120));
  assert_true (iterate_until (baseline_copied, win, 10));
  /* Off: the baseline and its curves go. */
  activate (win, "compare-baseline", NULL);
  assert_false (comparing (win));
  assert_null (caml_window_get_baseline_losses (win, &n_base));
  gtk_window_destroy (GTK_WINDOW (win));
}

/* Compare with Baseline after the run has finished (it used to be greyed
 * out until Reset): the baseline trains alone to the run's step and its
 * curves are overlaid; the progress bar follows it meanwhile, and Stop
 * stops it. Stopped at step N, the run's baseline trains N steps. */
static void
test_compare_after_run (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (can_train, win, 10));
  assert_false (enabled (win, "export-loss"));   /* nothing in the loss plot yet */
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  assert_true (enabled (win, "export-loss"));
  assert_true (enabled (win, "compare-baseline"));
  activate (win, "compare-baseline", NULL);
  assert_true (comparing (win));
  assert_true (iterate_until (baseline_ended, win, 120));
  assert_true (iterate_until (baseline_copied, win, 10));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);   /* not run again */
  const CamlPlotLine *plot = caml_plot_view_get_line (caml_window_get_plot_view (win, "loss"));
  g_autofree char *labels = loss_labels (win);
  print_message ("loss plot: %s\n", labels);
  assert_non_null (strstr (labels, "baseline train loss"));
  size_t n_values = 0;
  assert_non_null (plot);

  /* A stopped run: its baseline trains as many steps as it did. */
  activate (win, "compare-baseline", NULL);   /* off */
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  gtk_spin_button_set_value (steps, 1000000);
  assert_true (iterate_until (can_train, win, 10));
  activate (win, "train", NULL);
  assert_true (iterate_until (not_loading, win, 10));
  iterate_until (always_false, NULL, 0.2);
  activate (win, "stop", NULL);
  assert_true (iterate_until (run_ended, win, 30));
  iterate_until (always_false, NULL, 0.2);
  long n_run = 0, n_base = 0;
  caml_window_get_losses (win, &n_run);
  activate (win, "compare-baseline", NULL);   /* on */
  assert_true (iterate_until (not_loading, win, 30));
  iterate_until (always_false, NULL, 0.2);
  print_message ("baseline of a run stopped at step %ld: %s\n", n_run, progress_text (win));
  assert_true (enabled (win, "stop") || caml_window_baseline_ended (win));
  assert_true (iterate_until (baseline_ended, win, 120));
  iterate_until (always_false, NULL, 0.3);
  caml_window_get_baseline_losses (win, &n_base);
  assert_int_equal (n_base, n_run);
  caml_plot_line_get_values (caml_plot_view_get_line (caml_window_get_plot_view (win, "loss")),
                             2, &n_values);
  assert_true (n_values > 0);
  activate (win, "compare-baseline", NULL);   /* off, for the tests after */
  gtk_window_destroy (GTK_WINDOW (win));
}

/* A run that diverged before any loss was kept says so — where, and that
 * it went back — rather than "Press Train" and "failed — step 0". Continue
 * says at once that it goes on, and a continued run that fails again (at
 * once, maybe before the window's first look at it) brings the banner
 * back each time. */
static void
test_divergence_feedback (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-divfb-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "lr1000.json", NULL);
  static const char json[] =
    "{ \"name\": \"lr1000\", \"seed\": 0, \"data\": { \"builtin\": \"surface\" },"
    "  \"model\": [ { \"layer\": \"dense\", \"units\": 16, \"activation\": \"relu\" },"
    "               { \"layer\": \"dense\", \"units\": 1 } ],"
    "  \"optimizer\": { \"type\": \"sgd\", \"lr\": 1e6 }, \"training\": { \"steps\": 200 } }";
  assert_true (g_file_set_contents (path, json, -1, NULL));
  CamlWindow *win = open_window_on (path);
  assert_string_equal (placeholder_of (win, "loss"), "Press Train (F5) to start");
  assert_false (enabled (win, "continue-diverged"));

  activate (win, "train", NULL);
  assert_true (iterate_until (run_failed_or_finished, win, 60));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FAILED);
  /* (test-session.c, test_divergence: what Continue does) */
  assert_true (enabled (win, "continue-diverged"));
  const char *out_dir = g_getenv ("CAML_SCREENSHOT_DIR");
  g_autofree char *shot = g_build_filename (out_dir != NULL ? out_dir : ".",
                                            "gui-divergence.png", NULL);
  iterate_until (always_false, NULL, 0.3);
  save_screenshot (GTK_WIDGET (win), shot);
  long n = -1;
  caml_window_get_losses (win, &n);
  assert_int_equal (n, 0);   /* rolled back to step 0 */
  print_message ("loss plot: %s\nprogress: %s\n", placeholder_of (win, "loss"),
                 progress_text (win));
  long at = 0;
  assert_int_equal (sscanf (placeholder_of (win, "loss"), "Diverged at step %ld;", &at), 1);
  assert_true (at >= 1);
  assert_non_null (strstr (placeholder_of (win, "loss"), "back at step 0"));
  g_autofree char *expected = g_strdup_printf ("Diverged at step %ld — back at step 0 of 200", at);
  assert_string_equal (progress_text (win), expected);

  /* Each continuation (lr 1e5, 1e4, … all too high) fails again: the
   * banner comes back every time, with the next rate. */
  for (int i = 0; i < 4; i++)
    {
      activate (win, "continue-diverged", NULL);
      /* (The banner may be back already: the new trainer can fail before
       * Continue returns.) */
      g_autofree char *continuing = g_strdup_printf ("Continuing from step 0 at lr %s",
                                                     i == 0 ? "100000" : i == 1 ? "10000"
                                                     : i == 2 ? "1000" : "100");
      if (caml_window_get_error (win) == NULL)   /* still going: it says so */
        assert_string_equal (status_text (win), continuing);
      assert_true (iterate_until (run_failed_or_finished, win, 60));
      iterate_until (always_false, NULL, 0.1);
      assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FAILED);
      assert_non_null (caml_window_get_error (win));
      assert_non_null (strstr (caml_window_get_error (win), "diverged"));
    }
  gtk_window_destroy (GTK_WINDOW (win));
  g_unlink (path);
  g_rmdir (dir);
}

typedef struct {
  GtkFileChooser *chooser;
  GFile          *file;
} Chosen;

static gboolean
file_selected (gpointer data)
{
  Chosen *c = data;
  g_autoptr (GFile) now = gtk_file_chooser_get_file (c->chooser);
  return now != NULL && g_file_equal (now, c->file);
}

/* Choosing the file for a chooser that is open, as a click on Open does. */
static void
choose_file (CamlWindow *win, const char *path)
{
  GtkWindow *chooser = NULL;
  for (int i = 0; i < 200 && chooser == NULL; i++)
    {
      iterate_until (always_false, NULL, 0.05);
      chooser = dialog_of (win, GTK_TYPE_FILE_CHOOSER_DIALOG);
    }
  assert_non_null (chooser);
  assert_true (iterate_until (is_mapped, chooser, 10));
  g_autoptr (GFile) file = g_file_new_for_path (path);
  /* The folder is read, and the file selected in it, before Open: a fixed
   * 0.2 s was too short on a loaded machine (the answer was no file, and
   * the test waited in vain for the data). On a loaded machine the chooser
   * can also settle on another row of the folder when its load ends after
   * the file was set (other.tsv for train.tsv, seen under ASan): the file
   * is set again until it is the one selected. */
  Chosen c = { GTK_FILE_CHOOSER (chooser), file };
  gboolean selected = FALSE;
  for (int attempt = 0; attempt < 20 && !selected; attempt++)
    {
      assert_true (gtk_file_chooser_set_file (GTK_FILE_CHOOSER (chooser), file, NULL));
      if (!iterate_until (file_selected, &c, 1))
        continue;
      iterate_until (always_false, NULL, 0.2);
      selected = file_selected (&c);   /* and still so once the load has settled */
    }
  assert_true (selected);
  gtk_dialog_response (GTK_DIALOG (chooser), GTK_RESPONSE_ACCEPT);
  iterate_until (always_false, NULL, 0.1);
}

static gboolean
text_data_or_error (gpointer data)
{
  CamlWindow *win = CAML_WINDOW (data);
  return caml_window_get_experiment (win)->data.kind == CAML_DATA_TEXT
         || caml_window_get_error (win) != NULL;
}

static gboolean
window_has_error (gpointer data)
{
  return caml_window_get_error (CAML_WINDOW (data)) != NULL;
}

/* The data are text files, the training one at path [1]. */
static gboolean
text_paths_are (gpointer data)
{
  const CamlExperiment *exp = caml_window_get_experiment (CAML_WINDOW (((gpointer *) data)[0]));
  return !caml_window_is_loading (CAML_WINDOW (((gpointer *) data)[0]))
         && exp->data.kind == CAML_DATA_TEXT && exp->data.text_paths[0] != NULL
         && g_str_equal (exp->data.text_paths[0], ((gpointer *) data)[1]);
}

/* Text files as data: the window asks for the training and the test file
 * (an experiment of text data without files could be saved but not read
 * back: autosave recovery failed). */
static void
test_choose_text_files (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-text-XXXXXX", NULL);
  const char *layers = "{ \"layer\": \"ca_bsfe\" }";
  g_autofree char *exp_path = write_words_experiment (dir, "", layers, 20);
  g_autofree char *train = g_build_filename (dir, "train.tsv", NULL);
  g_autofree char *test = g_build_filename (dir, "test.tsv", NULL);
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "rnn-sanity-gru"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  activate (win, "data", g_variant_new_string ("text"));
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_RNN_SANITY);
  choose_file (win, train);
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_RNN_SANITY);
  choose_file (win, test);
  /* The chooser's answer may come after choose_file returns (a slow build),
   * and the files load on a worker: wait for the data, or an error. */
  assert_true (iterate_until (text_data_or_error, win, 30));
  assert_true (iterate_until (not_loading, win, 30));
  assert_null (caml_window_get_error (win));
  const CamlExperiment *exp = caml_window_get_experiment (win);
  assert_int_equal (exp->data.kind, CAML_DATA_TEXT);
  assert_string_equal (exp->data.text_paths[0], train);
  assert_string_equal (exp->data.text_paths[1], test);
  /* the drop-down follows (test-session.c, test_text_files_failed_load) */
  assert_int_equal (data_picked (win), CAML_DATA_TEXT);

  /* Saved, it reads back. */
  g_autofree char *saved = g_build_filename (dir, "saved.json", NULL);
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_save_to_path (win, saved, &error));
  CamlExperiment *back = caml_experiment_load_file (saved, &error);
  assert_non_null (back);
  assert_int_equal (back->data.kind, CAML_DATA_TEXT);
  caml_experiment_free (back);
  g_unlink (saved);
  g_autofree char *label = g_strdup (caml_window_get_data_text (win));
  assert_non_null (strstr (label, train));   /* the files are named */

  /* Other files: "Files…" asks for both again (picking Text files, which is
   * selected, did nothing), and they replace the pair in use. */
  g_autofree char *other = g_build_filename (dir, "other.tsv", NULL);
  assert_true (g_file_set_contents (other, "a good film\t1\na bad film\t0\n", -1, NULL));
  assert_true (enabled (win, "choose-data-files"));
  activate (win, "choose-data-files", NULL);
  choose_file (win, other);
  choose_file (win, test);
  gpointer used[] = { win, other };
  assert_true (iterate_until (text_paths_are, used, 30));
  assert_null (caml_window_get_error (win));
  assert_string_equal (caml_window_get_experiment (win)->data.text_paths[1], test);
  /* … and picking Text files asks again too */
  activate (win, "data", g_variant_new_string ("text"));
  choose_file (win, train);
  choose_file (win, test);
  gpointer back_to[] = { win, train };
  assert_true (iterate_until (text_paths_are, back_to, 30));
  /* built-in data have no files to choose */
  activate (win, "data", g_variant_new_string ("rnn_sanity"));
  assert_true (iterate_until (not_loading, win, 30));
  assert_false (enabled (win, "choose-data-files"));

  g_unlink (other);
  gtk_window_destroy (GTK_WINDOW (win));
  remove_words_experiment (dir);
}

/* What a failed choice of data files must leave as it was. */
typedef struct {
  CamlExperiment *exp;
  CamlRun        *run;
  CamlTrainerState state;
  long            n_steps;
  float          *losses;         /* (n_steps) a copy */
  gboolean        modified;
  gboolean        previous;
  guint           data_choice;
  char           *data_text;
} WindowSnapshot;

static void
take_snapshot (CamlWindow *win, WindowSnapshot *snap)
{
  snap->exp = caml_experiment_copy (caml_window_get_experiment (win));
  snap->run = caml_window_peek_run (win);
  snap->state = caml_window_get_state (win);
  const float *losses = caml_window_get_losses (win, &snap->n_steps);
  snap->losses = g_memdup2 (losses, snap->n_steps * sizeof (float));
  snap->modified = caml_window_is_modified (win);
  snap->previous = enabled (win, "forget-previous");
  snap->data_choice = gtk_drop_down_get_selected (GTK_DROP_DOWN (template_child (win,
                                                                                 "data_drop")));
  snap->data_text = g_strdup (caml_window_get_data_text (win));
}

static void
assert_unchanged (CamlWindow *win, WindowSnapshot *snap)
{
  long n_steps = 0;
  assert_true (caml_experiment_equal (snap->exp, caml_window_get_experiment (win)));
  assert_ptr_equal (caml_window_peek_run (win), snap->run);
  assert_int_equal (caml_window_get_state (win), snap->state);
  const float *losses = caml_window_get_losses (win, &n_steps);
  assert_int_equal (n_steps, snap->n_steps);
  assert_true (n_steps == 0 || memcmp (losses, snap->losses, n_steps * sizeof (float)) == 0);
  assert_int_equal (caml_window_is_modified (win), snap->modified);
  assert_int_equal (enabled (win, "forget-previous"), snap->previous);
  assert_int_equal (gtk_drop_down_get_selected (GTK_DROP_DOWN (template_child (win,
                                                                               "data_drop"))),
                    snap->data_choice);
  assert_string_equal (caml_window_get_data_text (win), snap->data_text);
}

static void
free_snapshot (WindowSnapshot *snap)
{
  caml_experiment_free (snap->exp);
  g_free (snap->losses);
  g_free (snap->data_text);
}

/* The banner shows no error: nothing, or the weights of a trained run
 * that new data replaced, set aside. */
static void
assert_no_error (CamlWindow *win)
{
  const char *msg = caml_window_get_error (win);
  if (msg != NULL)
    {
      assert_true (caml_window_has_set_aside_weights (win, NULL));
      assert_non_null (strstr (msg, "set aside"));
    }
}

/* Trains twice, so there is a finished run and a previous one. */
static void
train_twice (CamlWindow *win)
{
  for (int i = 0; i < 2; i++)
    {
      activate (win, "train", NULL);
      assert_true (iterate_until (run_ended, win, 60));
    }
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  assert_true (enabled (win, "forget-previous"));
}

/* A data set picked in the drop-down is loaded on a worker thread from a
 * copy of the experiment, and used only when it loads: MNIST files that
 * are damaged, or the text files an experiment names broken since it
 * left them, change nothing — experiment, data, run and its curves,
 * previous run, modified flag — the drop-down goes back to the data in
 * use, and the banner names the file. Picked once they are mended, they
 * are used. Train pressed while the data load trains on them. */
static void
test_data_kind_failed_load (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-kind-bad-XXXXXX", NULL);
  char *idx[4];
  char *saved_dir = write_fake_mnist (dir, idx);
  /* Cut short: the header says 200 images, the file holds 3. */
  {
    g_autofree char *bytes = NULL;
    gsize len = 0;
    assert_true (g_file_get_contents (idx[0], &bytes, &len, NULL));
    assert_true (g_file_set_contents (idx[0], bytes, 16 + 3 * 28 * 28, NULL));
  }
  g_autofree char *train = g_build_filename (dir, "train.tsv", NULL);
  g_autofree char *test = g_build_filename (dir, "test.tsv", NULL);
  write_text_tsv (train, 400);
  write_text_tsv (test, 40);

  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "rnn-sanity-gru"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "steps_spin")), 20);
  train_twice (win);

  /* Built-in data, a trained run: MNIST, its training images cut short. */
  WindowSnapshot snap;
  take_snapshot (win, &snap);
  pick_data (win, CAML_DATA_MNIST);
  assert_true (caml_window_is_loading (win));
  assert_true (caml_experiment_equal (snap.exp, caml_window_get_experiment (win)));
  assert_ptr_equal (caml_window_peek_run (win), snap.run);
  print_message ("while it loads: %s\n", status_text (win));
  assert_non_null (strstr (status_text (win), "Loading MNIST"));
  assert_true (iterate_until (not_loading, win, 30));
  const char *msg = caml_window_get_error (win);
  assert_non_null (msg);
  print_message ("%s\n", msg);
  assert_non_null (strstr (msg, "Cannot use the MNIST data"));
  assert_non_null (strstr (msg, idx[0]));
  assert_unchanged (win, &snap);
  assert_int_equal (data_picked (win), CAML_DATA_RNN_SANITY);

  /* MNIST, then at once the data in use again: nothing changes. */
  pick_data (win, CAML_DATA_MNIST);
  pick_data (win, CAML_DATA_RNN_SANITY);
  assert_true (iterate_until (not_loading, win, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_no_error (win);
  assert_unchanged (win, &snap);
  free_snapshot (&snap);

  /* Mended: MNIST is used (a sequence model does not fit it). */
  write_idx_pair (idx[0], idx[1], 200, 1);
  pick_data (win, CAML_DATA_MNIST);
  assert_true (iterate_until (not_loading, win, 30));
  assert_no_error (win);
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_MNIST);
  assert_int_equal (data_picked (win), CAML_DATA_MNIST);
  print_message ("data: %s\n", caml_window_get_data_text (win));
  assert_non_null (strstr (caml_window_get_data_text (win), "200 training and 100 test"));
  assert_false (enabled (win, "forget-previous"));   /* other data */
  assert_true (caml_window_is_modified (win));

  /* Text files, trained on; the sanity sentences, with Train pressed while
   * they are made: it trains on them. */
  caml_window_use_text_files (win, train, test);
  assert_true (iterate_until (not_loading, win, 30));
  assert_no_error (win);
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_TEXT);
  train_twice (win);
  pick_data (win, CAML_DATA_RNN_SANITY);
  activate (win, "train", NULL);
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_TEXT);
  assert_true (iterate_until (not_loading, win, 30));
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_RNN_SANITY);
  assert_int_not_equal (caml_window_get_state (win), CAML_TRAINER_IDLE);
  assert_true (iterate_until (run_ended, win, 60));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  long n_steps = 0;
  caml_window_get_losses (win, &n_steps);
  assert_int_equal (n_steps, 20);
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  assert_true (enabled (win, "forget-previous"));

  /* Back to the text files, broken since: nothing changes. (Picking Text
   * files asks for them again.) */
  assert_true (g_file_set_contents (train, "a fine film\t1\nno label on this line\n", -1, NULL));
  take_snapshot (win, &snap);
  pick_data (win, CAML_DATA_TEXT);
  choose_file (win, train);
  choose_file (win, test);
  assert_true (iterate_until (not_loading, win, 30));
  assert_true (iterate_until (window_has_error, win, 30));
  msg = caml_window_get_error (win);
  assert_non_null (msg);
  print_message ("%s\n", msg);
  g_autofree char *where = g_strdup_printf ("%s:2:", train);
  assert_non_null (strstr (msg, where));
  assert_unchanged (win, &snap);
  assert_int_equal (data_picked (win), CAML_DATA_RNN_SANITY);
  free_snapshot (&snap);

  /* Mended: they are used. */
  write_text_tsv (train, 400);
  pick_data (win, CAML_DATA_TEXT);
  choose_file (win, train);
  choose_file (win, test);
  gpointer mended[] = { win, train };
  assert_true (iterate_until (text_paths_are, mended, 30));
  assert_true (iterate_until (not_loading, win, 30));
  assert_no_error (win);
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_TEXT);
  assert_non_null (strstr (caml_window_get_data_text (win), "400 training and 40 test"));
  assert_true (iterate_until (can_train, win, 30));

  gtk_window_destroy (GTK_WINDOW (win));
  assert_true (iterate_until (no_jobs, NULL, 60));
  g_unlink (train);
  g_unlink (test);
  remove_fake_mnist (dir, idx, saved_dir);
}

/* The data the menu's radio items show: the "data" action's state. */
static CamlDataKind
data_in_menu (CamlWindow *win)
{
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (win), "data");
  const char *name = g_variant_get_string (state, NULL);
  for (int k = 0; k < CAML_N_DATA_KINDS; k++)
    if (g_str_equal (caml_data_kind_names[k], name))
      return (CamlDataKind) k;
  fail_msg ("the data action's state is \"%s\"", name);
  return CAML_N_DATA_KINDS;
}

/* The drop-down and the menu both show kind. */
static void
assert_data_shown (CamlWindow *win, CamlDataKind kind)
{
  assert_int_equal (data_picked (win), kind);
  assert_int_equal (data_in_menu (win), kind);
}

/* The drop-down and the menu's data items always agree: while data chosen
 * load, both show them — picked in either, or files chosen — both go back
 * to the data in use when they do not load or a later choice drops them,
 * and both show them once they are used. */
static void
test_data_choice_shown (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-shown-XXXXXX", NULL);
  char *idx[4];
  char *saved_dir = write_fake_mnist (dir, idx);
  g_autofree char *good = NULL;
  gsize good_len = 0;
  assert_true (g_file_get_contents (idx[0], &good, &good_len, NULL));
  assert_true (g_file_set_contents (idx[0], good, 16 + 3 * 28 * 28, NULL));   /* cut short */

  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (can_train, win, 30));
  assert_data_shown (win, CAML_DATA_SURFACE);

  /* Picked in the drop-down: both show MNIST while it loads; it does not
   * load, and both show the surface again. */
  pick_data (win, CAML_DATA_MNIST);
  assert_true (caml_window_is_loading (win));
  assert_data_shown (win, CAML_DATA_MNIST);
  assert_true (iterate_until (not_loading, win, 30));
  assert_non_null (caml_window_get_error (win));
  assert_data_shown (win, CAML_DATA_SURFACE);

  /* Picked in the menu: the same; the data in use picked again drop it. */
  activate (win, "data", g_variant_new_string ("mnist"));
  assert_true (caml_window_is_loading (win));
  assert_data_shown (win, CAML_DATA_MNIST);
  activate (win, "data", g_variant_new_string ("surface"));
  assert_data_shown (win, CAML_DATA_SURFACE);
  assert_true (iterate_until (not_loading, win, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_null (caml_window_get_error (win));
  assert_data_shown (win, CAML_DATA_SURFACE);

  /* IDX files chosen: both show them while they load, and the surface
   * again when they do not. */
  caml_window_use_idx_files (win, (const char *const *) idx, 4);
  assert_data_shown (win, CAML_DATA_IDX);
  assert_true (iterate_until (not_loading, win, 30));
  assert_non_null (caml_window_get_error (win));
  assert_data_shown (win, CAML_DATA_SURFACE);

  /* Mended, picked in the menu: both show MNIST while it loads and once it
   * is used. */
  assert_true (g_file_set_contents (idx[0], good, good_len, NULL));
  activate (win, "data", g_variant_new_string ("mnist"));
  assert_data_shown (win, CAML_DATA_MNIST);
  assert_true (iterate_until (not_loading, win, 30));
  assert_null (caml_window_get_error (win));
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_MNIST);
  assert_data_shown (win, CAML_DATA_MNIST);

  gtk_window_destroy (GTK_WINDOW (win));
  assert_true (iterate_until (no_jobs, NULL, 60));
  remove_fake_mnist (dir, idx, saved_dir);
}

static gboolean
status_has (gpointer data)
{
  const char *text = status_text (CAML_WINDOW (((gpointer *) data)[0]));
  return strstr (text, ((gpointer *) data)[1]) != NULL;
}

static gboolean
error_has (gpointer data)
{
  return has_error_with (CAML_WINDOW (((gpointer *) data)[0]), ((gpointer *) data)[1]);
}

/* A text model whose embedding starts from word vectors says how many
 * words of the vocabulary had one, as `caml train` does: in a notice when
 * it is built, then in the status line while it is ready; a rebuild on the
 * same data does not say it again, and a model without pre-trained vectors
 * does not say it. */
static void
test_word_vector_coverage (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-vectors-XXXXXX", NULL);
  g_autofree char *vectors = g_build_filename (dir, "vectors.txt", NULL);
  /* 9 of the 45 words of write_text_tsv (GloVe text: a word, then 4 values),
   * and one it does not have. */
  static const char *const words[] = { "the", "movie", "good", "bad", "w0", "w1", "w2", "w3",
                                       "w4", "unseen" };
  g_autoptr (GString) glove = g_string_new (NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (words); i++)
    g_string_append_printf (glove, "%s %g 0.5 -0.25 %g\n", words[i], 0.1 * i, -0.1 * i);
  assert_true (g_file_set_contents (vectors, glove->str, -1, NULL));
  g_autofree char *extra = g_strdup_printf (", \"embeddings\": \"%s\"", vectors);
  g_autofree char *path = write_words_experiment (
    dir, extra, "{ \"layer\": \"embedding\", \"dim\": 4, \"pretrained\": true },"
                " { \"layer\": \"mean_pool\" }", 20);

  CamlWindow *win = open_window_on (path);
  assert_null (caml_window_get_error (win));
  g_autofree char *notice = g_strdup_printf ("Pre-trained vectors for %'d of %'d words (%d %%)",
                                             9, 45, 20);
  assert_non_null (caml_window_get_last_notice (win));
  assert_string_equal (caml_window_get_last_notice (win), notice);
  /* The notice goes; the status line keeps it beside the weight count. */
  g_autofree char *status = g_strdup_printf ("weights · vectors for %'d of %'d words (%d %%)",
                                             9, 45, 20);
  gpointer shown[] = { win, status };
  assert_true (iterate_until (status_has, shown, 15));
  print_message ("status: %s\n", status_text (win));

  /* Not pre-trained: nothing to say. */
  activate_editor (win, "select-layer", g_variant_new_int32 (0));
  activate_editor (win, "layer-option", g_variant_new ("(sd)", "pretrained", 0.0));
  assert_true (iterate_until (can_train, win, 30));
  assert_non_null (strstr (status_text (win), "weights"));
  assert_null (strstr (status_text (win), "vectors"));
  /* Pre-trained again on the same data: the status line says it, no
   * second notice covers it. */
  activate_editor (win, "layer-option", g_variant_new ("(sd)", "pretrained", 1.0));
  assert_true (iterate_until (can_train, win, 30));
  assert_non_null (strstr (status_text (win), status));

  /* A saved run opens without its word vectors, which its weights replace:
   * they are not read (here: they are gone). */
  g_autofree char *saved = g_build_filename (dir, "saved", NULL);
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  assert_true (iterate_until (is_enabled_save_run, win, 10));
  caml_window_save_run (win, saved);
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_null (caml_window_get_error (win));
  gtk_window_destroy (GTK_WINDOW (win));
  g_unlink (vectors);
  win = caml_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (win));
  assert_true (iterate_until (is_mapped, win, 10));
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_open_run (win, saved, &error));
  assert_true (iterate_until (can_train, win, 30));
  assert_null (caml_window_get_error (win));
  assert_true (notice_has (win, "at step 20"));
  assert_null (strstr (status_text (win), "vectors"));   /* the file's rows */

  /* Weights that do not load: the run is built again from the word vectors
   * — gone too, so both failures are said, the weights first. */
  g_autofree char *weights = g_build_filename (saved, "model.weights", NULL);
  assert_true (g_file_set_contents (weights, "CAML", 4, NULL));
  assert_true (caml_window_open_run (win, saved, &error));
  gpointer failed[] = { win, "and without them" };
  assert_true (iterate_until (error_has, failed, 30));
  print_message ("error: %s\n", caml_window_get_error (win));
  assert_non_null (strstr (caml_window_get_error (win), "model.weights"));
  assert_non_null (strstr (caml_window_get_error (win), "vectors.txt"));

  gtk_window_destroy (GTK_WINDOW (win));
  remove_tree (saved);
  remove_words_experiment (dir);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_extend_finished_run),
    cmocka_unit_test (test_choose_text_files),
    cmocka_unit_test (test_data_kind_failed_load),
    cmocka_unit_test (test_data_choice_shown),
    cmocka_unit_test (test_word_vector_coverage),
    cmocka_unit_test (test_compare_baseline),
    cmocka_unit_test (test_compare_after_run),
    cmocka_unit_test (test_data_picker),
    cmocka_unit_test (test_divergence_feedback),
    cmocka_unit_test (test_mnist_loading),
    cmocka_unit_test (test_text_loading),
  };
  if (!gui_harness_init ("test-gui-runs"))
    return 1;
  return gui_harness_finish (cmocka_run_group_tests (tests, NULL, NULL));
}
