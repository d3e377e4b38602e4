/* test-gui-teaching.c — the workbench as a teaching instrument (issue 29),
 * under Xvfb: New and the blank start, Compare with Baseline as a setting,
 * the speed control and training until stopped, and the comparison's
 * numbers. Driven through the actions a user triggers, as test-gui.c.
 * Nothing here measures time: speeds are checked by counting steps between
 * the session's updates. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <glib/gstdio.h>
#include <gtk/gtk.h>

#include "caml-application.h"
#include "caml-new-dialog.h"
#include "caml-window.h"
#include "caml-session.h"
#include "presets.h"
#include "harness.h"

static CamlApplication *app;

static gboolean
is_mapped (gpointer data)
{
  return gtk_widget_get_mapped (GTK_WIDGET (data));
}

static gboolean
not_loading (gpointer data)
{
  return !caml_window_is_loading (CAML_WINDOW (data));
}

static gboolean
run_ended (gpointer data)
{
  CamlTrainerState s = caml_window_get_state (CAML_WINDOW (data));
  return s == CAML_TRAINER_FINISHED || s == CAML_TRAINER_STOPPED || s == CAML_TRAINER_FAILED;
}

static void
activate (CamlWindow *win, const char *action, GVariant *param)
{
  assert_true (g_action_group_get_action_enabled (G_ACTION_GROUP (win), action));
  g_action_group_activate_action (G_ACTION_GROUP (win), action, param);
}

static gboolean
action_state (CamlWindow *win, const char *action)
{
  g_autoptr (GVariant) on = g_action_group_get_action_state (G_ACTION_GROUP (win), action);
  return g_variant_get_boolean (on);
}

/* The toplevel window titled so, or NULL. */
static GtkWindow *
find_toplevel (const char *title)
{
  GListModel *list = gtk_window_get_toplevels ();
  for (guint i = 0; i < g_list_model_get_n_items (list); i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (list, i);
      if (g_strcmp0 (gtk_window_get_title (w), title) == 0 && gtk_widget_get_visible (GTK_WIDGET (w)))
        return w;
    }
  return NULL;
}

static gboolean
new_dialog_shown (gpointer data)
{
  GtkWindow *d = find_toplevel ("New Experiment");
  return d != NULL && gtk_widget_get_mapped (GTK_WIDGET (d));
}


/* A widget of a template by its id, below widget (or widget itself). */
static GtkWidget *
find_by_id (GtkWidget *widget, const char *name)
{
  const char *id = gtk_buildable_get_buildable_id (GTK_BUILDABLE (widget));
  if (id != NULL && g_str_equal (id, name))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_by_id (c, name);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static GtkWidget *
template_child (CamlWindow *win, const char *name)
{
  GObject *child = gtk_widget_get_template_child (GTK_WIDGET (win), CAML_TYPE_WINDOW, name);
  if (child == NULL)
    child = G_OBJECT (find_by_id (GTK_WIDGET (win), name));
  assert_non_null (child);
  return GTK_WIDGET (child);
}

/* win may be gone (freed): only compared. */
static gboolean
is_open (gconstpointer win)
{
  return g_list_find (gtk_application_get_windows (GTK_APPLICATION (app)), win) != NULL;
}

/* The message dialog shown for win (the close question), or NULL. */
static GtkWindow *
question_of (CamlWindow *win)
{
  GListModel *toplevels = gtk_window_get_toplevels ();
  GtkWindow *found = NULL;

  for (guint i = 0; found == NULL && i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (toplevels, i);
      if (GTK_IS_MESSAGE_DIALOG (w) && gtk_widget_get_visible (GTK_WIDGET (w))
          && gtk_window_get_transient_for (w) == GTK_WINDOW (win))
        found = w;
    }
  return found;
}

static int
n_windows (void)
{
  return (int) g_list_length (gtk_application_get_windows (GTK_APPLICATION (app)));
}

/* ----------------------------------------------------------------- New */

/* With no file and no preset the workbench starts on a blank experiment
 * (surface data, no layers), not on a preset. New (Ctrl+N, ☰, the header
 * bar) asks for the data set and opens a blank experiment on it: in the
 * window when that holds nothing to lose, else in a new one. */
static void
test_new_experiment (void **state)
{
  g_auto (GStrv) accels = gtk_application_get_accels_for_action (GTK_APPLICATION (app),
                                                                 "app.new");
  assert_non_null (accels[0]);
  assert_string_equal (accels[0], "<Control>n");

  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, NULL));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 30));
  const CamlExperiment *exp = caml_window_get_experiment (win);
  assert_int_equal (exp->n_layers, 0);
  assert_int_equal (exp->data.kind, CAML_DATA_SURFACE);
  assert_int_equal (exp->loss, CAML_LOSS_MSE);
  assert_false (caml_window_is_modified (win));
  assert_string_equal (exp->name, "untitled");

  /* New: the dialog, XOR picked, Create. */
  g_action_group_activate_action (G_ACTION_GROUP (app), "new", NULL);
  assert_true (iterate_until (new_dialog_shown, NULL, 10));
  GtkWindow *dialog = find_toplevel ("New Experiment");
  assert_true (gtk_window_get_modal (dialog));
  GtkDropDown *picker = caml_new_dialog_get_picker (dialog);
  assert_non_null (picker);
  int xor = -1;
  for (int i = 0; i < caml_presets_n_blank_kinds; i++)
    if (caml_presets_blank_kinds[i] == CAML_DATA_XOR)
      xor = i;
  assert_true (xor >= 0);
  gtk_drop_down_set_selected (picker, (guint) xor);
  g_signal_emit_by_name (caml_new_dialog_get_create (dialog), "clicked");
  iterate_until (always_false, NULL, 0.1);
  assert_null (find_toplevel ("New Experiment"));
  assert_true (iterate_until (not_loading, win, 30));
  exp = caml_window_get_experiment (win);   /* the same window: it held nothing */
  assert_int_equal (exp->n_layers, 0);
  assert_int_equal (exp->data.kind, CAML_DATA_XOR);
  assert_false (caml_window_is_modified (win));
  assert_false (g_action_group_get_action_enabled (G_ACTION_GROUP (win), "train"));

  /* A window with unsaved edits keeps them: New opens another. */
  GtkWindow *preset = caml_application_open_preset (app, "xor-ca-nn");
  assert_true (iterate_until (is_mapped, preset, 10));
  assert_true (iterate_until (not_loading, preset, 30));
  GtkSpinButton *steps = GTK_SPIN_BUTTON (gtk_widget_get_template_child (GTK_WIDGET (preset),
                                                                         CAML_TYPE_WINDOW,
                                                                         "steps_spin"));
  gtk_spin_button_set_value (steps, 123);
  assert_true (caml_window_is_modified (CAML_WINDOW (preset)));
  gtk_window_present (preset);
  iterate_until (always_false, NULL, 0.1);
  GtkWindow *other = caml_application_new_experiment (app, CAML_DATA_MNIST);
  assert_true (other != preset);
  assert_int_equal (caml_window_get_experiment (CAML_WINDOW (preset))->steps, 123);
  exp = caml_window_get_experiment (CAML_WINDOW (other));
  assert_int_equal (exp->n_layers, 0);
  assert_int_equal (exp->data.kind, CAML_DATA_MNIST);
  assert_int_equal (exp->loss, CAML_LOSS_SOFTMAX_XENT);
  assert_true (exp->batch_size > 0);
  assert_true (iterate_until (not_loading, other, 30));
  gtk_window_destroy (other);
  gtk_window_destroy (preset);
  gtk_window_destroy (GTK_WINDOW (win));
}

/* ---------------------------------------------------------- comparison */

/* ☰ → Compare with Baseline before any run: the check mark follows the
 * session's setting, and nothing trains until Train — which then trains
 * the model and its baseline, with no "previous run" under them. */
static void
test_compare_waits_for_train (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 30));
  CamlSession *session = caml_window_get_session (win);

  activate (win, "compare-baseline", NULL);
  assert_true (action_state (win, "compare-baseline"));
  assert_true (caml_session_get_compare (session));
  iterate_until (always_false, NULL, 0.5);
  assert_true (iterate_until (no_jobs, NULL, 10));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_IDLE);
  assert_false (caml_window_has_run (win));
  long n = -1;
  assert_null (caml_window_get_baseline_losses (win, &n));

  /* The session's setting, changed elsewhere, moves the check mark. */
  caml_session_set_compare (session, FALSE);
  assert_false (action_state (win, "compare-baseline"));
  caml_session_set_compare (session, TRUE);
  assert_true (action_state (win, "compare-baseline"));

  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_true (iterate_until ((Condition) caml_window_baseline_ended, win, 60));
  iterate_until (always_false, NULL, 0.3);
  caml_window_get_losses (win, &n);
  assert_int_equal (n, caml_window_get_experiment (win)->steps);
  assert_non_null (caml_window_get_baseline_losses (win, &n));
  long prev = 0;
  const CamlEvalRow *rows = NULL;
  int n_rows = 0;
  gboolean classification = FALSE;
  assert_null (caml_session_get_previous_losses (session, &prev, &rows, &n_rows,
                                                 &classification));
  activate (win, "compare-baseline", NULL);   /* off */
  assert_false (action_state (win, "compare-baseline"));
  gtk_window_destroy (GTK_WINDOW (win));
}

/* ---------------------------------------------------------------- speed */

static int
action_int (CamlWindow *win, const char *action)
{
  g_autoptr (GVariant) v = g_action_group_get_action_state (G_ACTION_GROUP (win), action);
  return g_variant_get_int32 (v);
}

/* The header bar's speed button: its menu's choices set the session's
 * speed and "until stopped"; the button's label and the menu's marks
 * follow the session. A slow run trains to its end by itself. */
static void
test_speed_control (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 30));
  CamlSession *session = caml_window_get_session (win);
  GtkMenuButton *button = GTK_MENU_BUTTON (gtk_widget_get_template_child (GTK_WIDGET (win),
                                                                         CAML_TYPE_WINDOW,
                                                                         "speed_button"));
  assert_string_equal (gtk_menu_button_get_label (button), "Full speed");
  assert_int_equal (action_int (win, "speed"), 0);

  activate (win, "speed", g_variant_new_int32 (1));
  assert_int_equal (caml_session_get_speed (session), 1);
  assert_string_equal (gtk_menu_button_get_label (button), "Slow motion");
  activate (win, "continuous", NULL);
  assert_true (caml_session_get_continuous (session));
  assert_true (action_state (win, "continuous"));
  assert_string_equal (gtk_menu_button_get_label (button), "Slow motion · until stopped");
  activate (win, "continuous", NULL);
  assert_false (caml_session_get_continuous (session));
  caml_session_set_speed (session, 5);   /* from elsewhere: the window follows */
  assert_int_equal (action_int (win, "speed"), 5);
  assert_string_equal (gtk_menu_button_get_label (button), "Slow");

  GtkSpinButton *steps = GTK_SPIN_BUTTON (gtk_widget_get_template_child (GTK_WIDGET (win),
                                                                         CAML_TYPE_WINDOW,
                                                                         "steps_spin"));
  gtk_spin_button_set_value (steps, 40);
  assert_true (iterate_until (not_loading, win, 30));
  activate (win, "train", NULL);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_RUNNING);
  assert_false (g_action_group_get_action_enabled (G_ACTION_GROUP (win), "step"));
  assert_true (iterate_until (run_ended, win, 60));
  long n = 0;
  caml_window_get_losses (win, &n);
  assert_int_equal (n, 40);
  assert_true (caml_session_get_pace_ticks (session) >= 8);
  activate (win, "speed", g_variant_new_int32 (0));
  gtk_window_destroy (GTK_WINDOW (win));
}


/* ---------------------------------------------------- what opens where */

/* One rule for New, Open and the presets: the active window is replaced
 * when it has no unsaved changes, no run under way and no set-aside
 * weights, else a new window opens — and the status line says which. */
static void
test_one_rule_for_opening (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 30));
  gtk_window_present (GTK_WINDOW (win));
  int before = n_windows ();

  /* Nothing to lose: the preset replaces it, and the notice says so. */
  g_action_group_activate_action (G_ACTION_GROUP (app), "preset",
                                  g_variant_new_string ("xor-nn"));
  assert_int_equal (n_windows (), before);
  assert_string_equal (caml_window_get_experiment (win)->name, "xor-nn");
  assert_non_null (strstr (caml_window_get_last_notice (win), "Opened here: nothing was unsaved"));
  assert_true (iterate_until (not_loading, win, 30));

  /* Unsaved changes: a new window, which says why. */
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  gtk_spin_button_set_value (steps, 77);
  assert_true (caml_window_is_modified (win));
  g_action_group_activate_action (G_ACTION_GROUP (app), "preset",
                                  g_variant_new_string ("xor-ca-nn"));
  assert_int_equal (n_windows (), before + 1);
  assert_int_equal (caml_window_get_experiment (win)->steps, 77);
  CamlWindow *other = CAML_WINDOW (gtk_application_get_active_window (GTK_APPLICATION (app)));
  assert_true (other != win);
  assert_string_equal (caml_window_get_experiment (other)->name, "xor-ca-nn");
  const char *notice = caml_window_get_last_notice (other);
  assert_non_null (strstr (notice, "Opened in a new window"));
  assert_non_null (strstr (notice, "“xor-nn” has unsaved changes"));
  assert_true (iterate_until (not_loading, other, 30));

  /* Open (a file) follows the same rule: the clean window is replaced. */
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-open-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "mine.json", NULL);
  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = caml_presets_load ("surface-nn", &error);
  assert_non_null (exp);
  assert_true (caml_experiment_save_file (exp, path, &error));
  caml_experiment_free (exp);
  gtk_window_present (GTK_WINDOW (other));
  iterate_until (always_false, NULL, 0.1);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  GtkWindow *active = gtk_application_get_active_window (GTK_APPLICATION (app));
  g_autofree char *why = caml_window_why_kept (CAML_WINDOW (active));
  int now = n_windows ();
  g_application_open (G_APPLICATION (app), &file, 1, "");
  assert_int_equal (n_windows (), why == NULL ? now : now + 1);
  iterate_until (not_loading, gtk_application_get_active_window (GTK_APPLICATION (app)), 30);
  gtk_window_destroy (GTK_WINDOW (other));
  if (is_open (active))
    gtk_window_destroy (active);
  GList *left = gtk_application_get_windows (GTK_APPLICATION (app));
  while (left != NULL)
    {
      gtk_window_destroy (left->data);
      left = gtk_application_get_windows (GTK_APPLICATION (app));
    }
  g_unlink (path);
  g_rmdir (dir);
}

/* An edit after a run sets its weights aside: the banner says so calmly
 * (information, neither button drawn as a warning), and closing the
 * window asks before letting them go — Cancel keeps the window, Let Them
 * Go closes it. */
static void
test_set_aside_calm_and_asked (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 30));
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  gtk_spin_button_set_value (steps, 50);
  assert_true (iterate_until (not_loading, win, 30));
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  gtk_spin_button_set_value (steps, 40);
  assert_true (iterate_until (not_loading, win, 30));
  assert_true (caml_window_has_set_aside_weights (win, NULL));

  GtkWidget *revealer = template_child (win, "banner_revealer");
  GtkWidget *save = template_child (win, "banner_button");
  GtkWidget *drop = template_child (win, "banner_discard_button");
  assert_true (gtk_widget_has_css_class (revealer, "info"));
  assert_true (gtk_widget_get_visible (drop));
  assert_false (gtk_widget_has_css_class (drop, "destructive-action"));
  assert_false (gtk_widget_has_css_class (save, "suggested-action"));
  assert_null (strstr (caml_window_get_error (win), "replaced"));

  /* Saved first: the experiment's changes are asked about with the weights. */
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-aside-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "aside.json", NULL);
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_save_to_path (win, path, &error));
  assert_false (caml_window_is_modified (win));
  gtk_window_close (GTK_WINDOW (win));
  iterate_until (always_false, NULL, 0.1);
  assert_true (is_open (win));
  GtkWindow *question = question_of (win);
  assert_non_null (question);
  gtk_dialog_response (GTK_DIALOG (question), GTK_RESPONSE_CANCEL);
  iterate_until (always_false, NULL, 0.1);
  assert_true (is_open (win));
  assert_true (caml_window_has_set_aside_weights (win, NULL));

  gtk_window_close (GTK_WINDOW (win));
  iterate_until (always_false, NULL, 0.1);
  question = question_of (win);
  assert_non_null (question);
  gtk_dialog_response (GTK_DIALOG (question), 1);   /* Let Them Go */
  iterate_until (always_false, NULL, 0.2);
  assert_false (is_open (win));
  g_unlink (path);
  g_rmdir (dir);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_new_experiment),
    cmocka_unit_test (test_compare_waits_for_train),
    cmocka_unit_test (test_speed_control),
    cmocka_unit_test (test_one_rule_for_opening),
    cmocka_unit_test (test_set_aside_calm_and_asked),
  };
  g_autoptr (GError) error = NULL;

  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  g_autofree char *autosave_dir = g_dir_make_tmp ("caml-autosave-XXXXXX", NULL);
  g_setenv ("CAML_AUTOSAVE_DIR", autosave_dir, TRUE);
  app = caml_application_new (G_APPLICATION_NON_UNIQUE);
  if (!g_application_register (G_APPLICATION (app), NULL, &error))
    {
      fprintf (stderr, "test-gui-teaching: %s\n", error->message);
      return 1;
    }
  if (g_getenv ("CAML_GUI_TEST_FILTER") != NULL)
    cmocka_set_test_filter (g_getenv ("CAML_GUI_TEST_FILTER"));
  int failed = cmocka_run_group_tests (tests, NULL, NULL);
  g_object_unref (app);
  remove_tree (autosave_dir);
  return failed;
}
