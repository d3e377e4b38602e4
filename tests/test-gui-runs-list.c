/* test-gui-runs-list.c — the window's Runs page under Xvfb (issue 29 item
 * 3): after two runs the table has a row each, ticking a row overlays its
 * curves on the loss plot (named in the legend), a row's bin deletes it,
 * Delete All empties the table, and Export Runs follows. The records
 * themselves are tested headless in test-session-runs.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "gui-harness.h"
#include "caml-session.h"

/* The widgets of type below widget, in order (a new array). */
static void
collect (GtkWidget *widget, GType type, GPtrArray *out)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type) && gtk_widget_get_mapped (widget))
    g_ptr_array_add (out, widget);
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    collect (c, type, out);
}

static GPtrArray *
widgets_of (CamlWindow *win, GType type)
{
  GPtrArray *out = g_ptr_array_new ();
  collect (template_child (win, "runs_page"), type, out);
  return out;
}

static guint
n_runs (CamlWindow *win)
{
  return g_list_model_get_n_items (caml_session_get_runs (caml_window_get_session (win)));
}

static gboolean
two_ticks (gpointer data)
{
  g_autoptr (GPtrArray) ticks = widgets_of (data, GTK_TYPE_CHECK_BUTTON);
  return ticks->len == 2;
}

static gboolean
one_tick (gpointer data)
{
  g_autoptr (GPtrArray) ticks = widgets_of (data, GTK_TYPE_CHECK_BUTTON);
  return ticks->len == 1;
}

static void
train_once (CamlWindow *win)
{
  assert_true (iterate_until (can_train, win, 30));
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  assert_true (iterate_until (not_loading, win, 10));
}

static void
test_runs_page (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  gtk_window_set_default_size (GTK_WINDOW (win), 1024, 700);
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  gtk_spin_button_set_value (steps, 200);
  assert_false (enabled (win, "export-runs"));   /* nothing kept yet */
  activate (win, "plots-page", g_variant_new_string ("runs"));
  GtkStack *runs_stack = GTK_STACK (template_child (win, "runs_stack"));
  assert_string_equal (gtk_stack_get_visible_child_name (runs_stack), "empty");

  /* Two runs (another seed for the second): a row each. */
  train_once (win);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "seed_spin")), 3);
  train_once (win);
  assert_int_equal (n_runs (win), 2);
  assert_string_equal (gtk_stack_get_visible_child_name (runs_stack), "table");
  assert_true (enabled (win, "export-runs"));
  assert_true (iterate_until (two_ticks, win, 10));
  g_autoptr (GPtrArray) labels = widgets_of (win, GTK_TYPE_LABEL);
  gboolean seen_differs = FALSE;
  for (guint i = 0; i < labels->len; i++)
    seen_differs |= g_str_has_prefix (gtk_label_get_text (labels->pdata[i]), "seed ");
  assert_true (seen_differs);   /* "seed 0 → 3" */

  /* Ticking Run 1 overlays its curves, named, on the loss plot. */
  g_autofree char *before = loss_labels (win);
  assert_null (strstr (before, "Run 1"));
  g_autoptr (GPtrArray) ticks = widgets_of (win, GTK_TYPE_CHECK_BUTTON);
  gtk_check_button_set_active (ticks->pdata[0], TRUE);
  iterate_until (always_false, NULL, 0.2);
  g_autofree char *after = loss_labels (win);
  print_message ("loss series: %s\n", after);
  assert_non_null (strstr (after, "Run 1: train loss"));
  assert_non_null (strstr (after, "Run 1: test loss"));
  g_autoptr (CamlRunRecord) first = g_list_model_get_item (
    caml_session_get_runs (caml_window_get_session (win)), 0);
  assert_true (caml_run_record_get_shown (first));
  const char *dir = g_getenv ("CAML_SCREENSHOT_DIR");
  g_autofree char *shot = g_build_filename (dir != NULL ? dir : ".", "runs-page.png", NULL);
  save_screenshot (GTK_WIDGET (win), shot);

  /* Its bin deletes it: one row left, and its curves leave the plot. */
  g_autoptr (GPtrArray) bins = widgets_of (win, GTK_TYPE_BUTTON);
  GtkWidget *bin = NULL;
  for (guint i = 0; i < bins->len && bin == NULL; i++)
    if (!GTK_IS_CHECK_BUTTON (bins->pdata[i])
        && g_strcmp0 (gtk_button_get_icon_name (bins->pdata[i]), "user-trash-symbolic") == 0)
      bin = bins->pdata[i];
  assert_non_null (bin);
  g_signal_emit_by_name (bin, "clicked");
  assert_int_equal (n_runs (win), 1);
  assert_true (iterate_until (one_tick, win, 10));
  iterate_until (always_false, NULL, 0.2);
  g_autofree char *gone = loss_labels (win);
  assert_null (strstr (gone, "Run 1:"));

  /* Delete All: the table says what it holds when empty. */
  gtk_widget_activate_action (template_child (win, "runs_page"), "runs.delete-all", NULL);
  assert_int_equal (n_runs (win), 0);
  assert_string_equal (gtk_stack_get_visible_child_name (runs_stack), "empty");
  assert_false (enabled (win, "export-runs"));
  activate (win, "drop-set-aside", NULL);
  gtk_window_destroy (GTK_WINDOW (win));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_runs_page),
  };
  if (!gui_harness_init ("test-gui-runs-list"))
    return 1;
  return gui_harness_finish (cmocka_run_group_tests (tests, NULL, NULL));
}
