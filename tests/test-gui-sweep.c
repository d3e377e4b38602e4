/* test-gui-sweep.c — a sweep from the window, under Xvfb: Sweep… asks for
 * the settings and checks the plan as it is typed, Start queues the runs
 * in the background while the window goes on, the Sweep page's table,
 * Fig. 17 plot and parallel coordinates fill as they end, the Runs list
 * keeps each, and a point opens its run in a window of its own. What the
 * session does with a sweep is tested headless by test-session-runs.c. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <glib/gstdio.h>
#include <gtk/gtk.h>

#include "caml-application.h"
#include "caml-window.h"
#include "caml-session.h"
#include "caml-sweep-dialog.h"
#include "caml-sweep-view.h"
#include "gui-harness.h"

/* The first toplevel that is, or NULL. */
static GtkWindow *
toplevel_where (gboolean (*is) (GtkWindow *window))
{
  GtkWindow *found = NULL;
  GListModel *tops = gtk_window_get_toplevels ();
  for (guint i = 0; i < g_list_model_get_n_items (tops) && found == NULL; i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (tops, i);
      if (is (w))
        found = w;   /* the list holds it */
    }
  return found;
}

static gboolean
is_sweep_dialog (GtkWindow *window)
{
  return g_object_get_data (G_OBJECT (window), "caml-sweep-dialog") != NULL;
}

static gboolean
is_question (GtkWindow *window)
{
  return GTK_IS_MESSAGE_DIALOG (window) && gtk_widget_get_visible (GTK_WIDGET (window));
}

static GtkWindow *
sweep_dialog (void)
{
  return toplevel_where (is_sweep_dialog);
}

static gboolean
dialog_shown (gpointer data)
{
  return sweep_dialog () != NULL;
}

static gboolean
not_sweeping (gpointer data)
{
  return !caml_session_is_sweeping (caml_window_get_session (data));
}

static guint
n_windows (void)
{
  return g_list_length (gtk_application_get_windows (GTK_APPLICATION (app)));
}

static gboolean
more_windows (gpointer data)
{
  return n_windows () > GPOINTER_TO_UINT (data);
}

/* Picks key in the dialog's drop-down of axis (by its text). */
static void
pick_key (GtkWindow *dialog, int axis, const char *key)
{
  GtkDropDown *drop = caml_sweep_dialog_get_key (dialog, axis);
  GListModel *titles = gtk_drop_down_get_model (drop);
  for (guint i = 0; i < g_list_model_get_n_items (titles); i++)
    {
      g_autoptr (GtkStringObject) title = g_list_model_get_item (titles, i);
      if (strstr (gtk_string_object_get_string (title), key) != NULL)
        {
          gtk_drop_down_set_selected (drop, i);
          return;
        }
    }
  fail_msg ("no key %s in the sweep dialog", key);
}

static void
test_sweep_from_window (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  gtk_window_set_default_size (GTK_WINDOW (win), 1280, 860);
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "steps_spin")), 60);
  CamlSession *session = caml_window_get_session (win);

  /* Before any sweep the page says what one is. */
  activate (win, "plots-page", g_variant_new_string ("sweep"));
  CamlSweepView *view = CAML_SWEEP_VIEW (template_child (win, "sweep_page"));
  assert_null (gtk_column_view_get_model (caml_sweep_view_get_table (view)));
  assert_null (caml_session_get_sweep (session));

  assert_true (enabled (win, "sweep"));
  activate (win, "sweep", NULL);
  assert_true (iterate_until (dialog_shown, NULL, 5));
  GtkWindow *dialog = sweep_dialog ();
  print_message ("dialog: %s\n", caml_sweep_dialog_get_summary (dialog));

  /* A value out of range is said at once, and Start waits. */
  pick_key (dialog, 0, "optimizer.lr");
  gtk_editable_set_text (caml_sweep_dialog_get_values (dialog, 0), "0.01,-1");
  print_message ("bad: %s\n", caml_sweep_dialog_get_summary (dialog));
  assert_false (gtk_widget_get_sensitive (GTK_WIDGET (caml_sweep_dialog_get_start (dialog))));
  assert_non_null (strstr (caml_sweep_dialog_get_summary (dialog), "-1"));
  assert_false (g_str_has_prefix (caml_sweep_dialog_get_summary (dialog), "--grid"));

  /* A point whose model does not fit the data is said before anything
   * trains: the CA-NN is the readout here, its width the data's. */
  pick_key (dialog, 0, "layer 0 (CA-NN): units");
  gtk_editable_set_text (caml_sweep_dialog_get_values (dialog, 0), "1,2");
  print_message ("shape: %s\n", caml_sweep_dialog_get_summary (dialog));
  assert_non_null (strstr (caml_sweep_dialog_get_summary (dialog),
                           "0.units=2: the model's output has width 2, the data need 1"));
  assert_false (gtk_widget_get_sensitive (GTK_WIDGET (caml_sweep_dialog_get_start (dialog))));
  /* a word's values to start from are its choices */
  pick_key (dialog, 0, "layer 0 (CA-NN): activation");
  g_autofree char *words = g_strdup (gtk_editable_get_text (caml_sweep_dialog_get_values (dialog, 0)));
  print_message ("activation: %s\n", words);
  assert_non_null (strstr (words, "tanh"));
  assert_non_null (strstr (words, "relu"));
  pick_key (dialog, 0, "optimizer.lr");

  /* Two rates by two seeds, each with its baseline: 8 runs. */
  gtk_editable_set_text (caml_sweep_dialog_get_values (dialog, 0), "0.01,0.1");
  gtk_check_button_set_active (caml_sweep_dialog_get_second (dialog), TRUE);
  pick_key (dialog, 1, "seed");
  gtk_editable_set_text (caml_sweep_dialog_get_values (dialog, 1), "1,2");
  print_message ("good: %s\n", caml_sweep_dialog_get_summary (dialog));
  assert_non_null (strstr (caml_sweep_dialog_get_summary (dialog), "8 runs"));
  assert_true (gtk_widget_get_sensitive (GTK_WIDGET (caml_sweep_dialog_get_start (dialog))));
  const char *shots = g_getenv ("CAML_SCREENSHOT_DIR");
  g_autofree char *asked = g_build_filename (shots != NULL ? shots : ".", "sweep-dialog.png",
                                             NULL);
  assert_true (iterate_until (is_mapped, dialog, 30));
  save_screenshot (GTK_WIDGET (dialog), asked);
  g_signal_emit_by_name (caml_sweep_dialog_get_start (dialog), "clicked");
  assert_true (caml_session_is_sweeping (session));
  assert_false (enabled (win, "sweep"));            /* one at a time */
  assert_true (enabled (win, "train"));             /* the window goes on */

  assert_true (iterate_until (not_sweeping, win, 180));
  assert_true (iterate_until (no_jobs, NULL, 30));
  CamlSweep *sweep = caml_session_get_sweep (session);
  assert_int_equal (caml_sweep_get_n_ended (sweep), 8);
  print_message ("status: %s\n", caml_sweep_view_get_status (view));
  assert_non_null (strstr (caml_sweep_view_get_status (view), "8 of 8 runs"));
  GListModel *rows = G_LIST_MODEL (gtk_column_view_get_model (caml_sweep_view_get_table (view)));
  assert_int_equal (g_list_model_get_n_items (rows), 8);
  assert_int_equal (g_list_model_get_n_items (caml_session_get_runs (session)), 8);
  assert_true (caml_plot_view_has_plot (caml_sweep_view_get_plot (view)));
  const CamlPlotParallel *parallel = caml_parallel_view_get_plot (caml_sweep_view_get_parallel (view));
  assert_non_null (parallel);
  assert_int_equal (caml_plot_parallel_get_n_rows (parallel), 8);
  assert_true (enabled (win, "sweep"));

  const char *dir = g_getenv ("CAML_SCREENSHOT_DIR");
  g_autofree char *shot = g_build_filename (dir != NULL ? dir : ".", "sweep-page.png", NULL);
  iterate_until (always_false, NULL, 0.5);
  save_screenshot (GTK_WIDGET (win), shot);
  /* the loss card gives the sweep its room, and takes it back */
  assert_false (gtk_widget_get_visible (template_child (win, "loss_card")));
  gtk_window_set_default_size (GTK_WINDOW (win), 1024, 700);
  iterate_until (always_false, NULL, 0.5);
  g_autofree char *small = g_build_filename (dir != NULL ? dir : ".", "sweep-page-1024.png",
                                             NULL);
  save_screenshot (GTK_WIDGET (win), small);
  activate (win, "plots-page", g_variant_new_string ("runs"));
  assert_true (gtk_widget_get_visible (template_child (win, "loss_card")));
  activate (win, "plots-page", g_variant_new_string ("sweep"));

  /* A point of the plot opens its run: the point at rate 0.1 is that of
   * a run of rate 0.1. */
  int n = 0;
  const CamlSweepResult *results = caml_sweep_get_results (sweep, &n);
  g_autofree char *at = caml_sweep_view_run_at (view, 0.1, results[2].metric);
  assert_non_null (at);
  assert_non_null (strstr (at, "optimizer.lr=0.1"));
  /* Opening it keeps this window (it shows a sweep): a new one. */
  guint before = n_windows ();
  caml_sweep_view_open_run (view, 0);
  assert_true (iterate_until (more_windows, GUINT_TO_POINTER (before), 10));
  assert_true (caml_session_get_sweep (session) == sweep);

  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL;)
    {
      GList *next = l->next;
      gtk_window_destroy (l->data);
      l = next;
    }
  iterate_until (always_false, NULL, 0.2);
}

static GtkDialog *
message_dialog (void)
{
  return GTK_DIALOG (toplevel_where (is_question));
}

static gboolean
asking (gpointer data)
{
  return message_dialog () != NULL;
}

static gboolean
sweep_training (gpointer data)
{
  CamlSweep *sweep = data;
  g_autoptr (CamlSweepRun) first = g_list_model_get_item (caml_sweep_get_runs (sweep), 0);
  return caml_sweep_run_get_state (first) == CAML_SWEEP_RUN_TRAINING;
}

/* Closing a window whose sweep runs says so when it asks; closing stops
 * the run under way, which is still written (the application waits for
 * it), and skips the rest. */
static void
test_close_while_sweeping (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "steps_spin")), 1000000);
  CamlSession *session = caml_window_get_session (win);
  activate (win, "sweep", NULL);
  assert_true (iterate_until (dialog_shown, NULL, 5));
  GtkWindow *dialog = sweep_dialog ();
  pick_key (dialog, 0, "seed");
  gtk_editable_set_text (caml_sweep_dialog_get_values (dialog, 0), "1,2");
  g_signal_emit_by_name (caml_sweep_dialog_get_start (dialog), "clicked");
  CamlSweep *sweep = g_object_ref (caml_session_get_sweep (session));
  assert_true (iterate_until (sweep_training, sweep, 30));

  gtk_window_close (GTK_WINDOW (win));
  assert_true (iterate_until (asking, NULL, 5));
  GtkDialog *question = message_dialog ();
  g_autofree char *text = NULL, *more = NULL;
  g_object_get (question, "text", &text, "secondary-text", &more, NULL);
  print_message ("asked: %s — %s\n", text, more);
  /* the steps were edited: Save or Discard, and the sweep stops either way */
  assert_non_null (strstr (more, "The sweep under way stops"));
  gtk_dialog_response (question, 1);   /* Discard */
  assert_true (iterate_until (no_jobs, NULL, 60));
  assert_false (caml_sweep_is_running (sweep));
  g_autoptr (CamlSweepRun) first = g_list_model_get_item (caml_sweep_get_runs (sweep), 0);
  assert_int_equal (caml_sweep_run_get_state (first), CAML_SWEEP_RUN_DONE);
  g_autofree char *weights = g_build_filename (caml_sweep_run_get_dir (first), "model.weights",
                                               NULL);
  assert_true (g_file_test (weights, G_FILE_TEST_IS_REGULAR));
  g_object_unref (sweep);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_sweep_from_window),
    cmocka_unit_test (test_close_while_sweeping),
  };
  /* the sweeps' default folder, under $XDG_DATA_HOME */
  g_autofree char *data_home = g_dir_make_tmp ("caml-gui-sweep-XXXXXX", NULL);
  g_setenv ("XDG_DATA_HOME", data_home, TRUE);
  if (!gui_harness_init ("test-gui-sweep"))
    return 1;
  int failed = gui_harness_finish (cmocka_run_group_tests (tests, NULL, NULL));
  remove_tree (data_home);
  return failed;
}
