/* test-gui-start.c — the start page under Xvfb (issue 29 item 1): started
 * with no arguments the window shows it over the blank experiment; its
 * sections hold every preset exactly once, in the section the preset's
 * data and layers give; a card says what this build measured or "not
 * measured yet"; New opens the dialog; a preset opens in that window (the
 * one rule: a window with changes keeps them, the preset opens in a new
 * one); the recent files are listed; the Presets menu has the same
 * sections. The derivation and measured.json are tested headless in
 * test-preset-guide.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <glib/gstdio.h>
#include <cmocka.h>

#include "gui-harness.h"
#include "caml-start-view.h"
#include "preset-guide.h"
#include "presets.h"

static void
collect_cards (GtkWidget *widget, GPtrArray *out)
{
  if (GTK_IS_BUTTON (widget) && gtk_widget_has_css_class (widget, "preset-card"))
    g_ptr_array_add (out, widget);
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    collect_cards (c, out);
}

static GtkWidget *
start_view_of (CamlWindow *win)
{
  return GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (win), CAML_TYPE_WINDOW,
                                                    "start_view"));
}

static GtkWidget *
card_of (CamlWindow *win, const char *preset)
{
  g_autoptr (GPtrArray) cards = g_ptr_array_new ();
  collect_cards (start_view_of (win), cards);
  for (guint i = 0; i < cards->len; i++)
    if (g_strcmp0 (g_object_get_data (cards->pdata[i], "caml-preset"), preset) == 0)
      return cards->pdata[i];
  return NULL;
}

/* The texts of the labels below widget, joined by "|". */
static void
collect_text (GtkWidget *widget, GString *out)
{
  if (GTK_IS_LABEL (widget))
    g_string_append_printf (out, "%s|", gtk_label_get_text (GTK_LABEL (widget)));
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    collect_text (c, out);
}

static char *
text_of (GtkWidget *widget)
{
  GString *out = g_string_new (NULL);
  collect_text (widget, out);
  return g_string_free (out, FALSE);
}

static guint
n_windows (void)
{
  return g_list_length (gtk_application_get_windows (GTK_APPLICATION (app)));
}

static gboolean
new_dialog_shown (gpointer data)
{
  GListModel *list = gtk_window_get_toplevels ();
  for (guint i = 0; i < g_list_model_get_n_items (list); i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (list, i);
      if (g_strcmp0 (gtk_window_get_title (w), "New Experiment") == 0
          && gtk_widget_get_mapped (GTK_WIDGET (w)))
        {
          *(GtkWindow **) data = w;
          return TRUE;
        }
    }
  return FALSE;
}

static void
test_start_page (void **state)
{
  /* No file, no preset: the start page over the blank experiment. */
  guint before = n_windows ();
  g_application_activate (G_APPLICATION (app));
  assert_int_equal (n_windows (), before + 1);
  CamlWindow *win = CAML_WINDOW (gtk_application_get_windows (GTK_APPLICATION (app))->data);
  gtk_window_set_default_size (GTK_WINDOW (win), 1024, 700);
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 30));
  assert_true (caml_window_is_start_shown (win));
  assert_true (gtk_widget_get_mapped (start_view_of (win)));
  assert_string_equal (caml_window_get_experiment (win)->name, "untitled");
  assert_true (enabled (win, "hide-start"));
  iterate_until (always_false, NULL, 0.3);
  const char *dir = g_getenv ("CAML_SCREENSHOT_DIR");
  g_autofree char *shot = g_build_filename (dir != NULL ? dir : ".", "start-page.png", NULL);
  save_screenshot (GTK_WIDGET (win), shot);

  /* Every preset exactly once, in its own section's box. */
  g_auto (GStrv) names = caml_presets_list ();
  g_autoptr (GPtrArray) cards = g_ptr_array_new ();
  collect_cards (start_view_of (win), cards);
  assert_int_equal (cards->len, g_strv_length (names));
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < cards->len; i++)
    {
      const char *name = g_object_get_data (cards->pdata[i], "caml-preset");
      assert_true (caml_presets_exists (name));
      assert_false (g_hash_table_contains (seen, name));
      g_hash_table_add (seen, (gpointer) name);
      CamlExperiment *exp = caml_presets_load (name, NULL);
      GtkWidget *flow = gtk_widget_get_ancestor (cards->pdata[i], GTK_TYPE_FLOW_BOX);
      assert_int_equal (GPOINTER_TO_INT (g_object_get_data (G_OBJECT (flow), "caml-section")),
                        caml_preset_section_of (exp));
      caml_experiment_free (exp);
    }

  /* A measured preset says its figure; one without says so plainly. */
  g_autoptr (GHashTable) measures = caml_preset_measures_load (NULL);
  assert_non_null (measures);
  const char *measured = NULL, *unmeasured = NULL;
  for (int i = 0; names[i] != NULL; i++)
    if (g_hash_table_contains (measures, names[i]))
      measured = measured != NULL ? measured : names[i];
    else
      unmeasured = unmeasured != NULL ? unmeasured : names[i];
  assert_non_null (measured);
  assert_non_null (unmeasured);
  g_autofree char *yes = text_of (card_of (win, measured));
  g_autofree char *no = text_of (card_of (win, unmeasured));
  print_message ("%s: %s\n%s: %s\n", measured, yes, unmeasured, no);
  assert_non_null (strstr (yes, "|measured: "));
  assert_non_null (strstr (yes, "caml reproduce"));
  assert_null (strstr (yes, "not measured"));
  assert_non_null (strstr (no, "|not measured yet|"));
  CamlExperiment *claimed = caml_presets_load ("surface-ca-nn-1", NULL);
  g_autofree char *paper = g_strdup_printf ("|paper: %s|", claimed->paper);
  g_autofree char *surface = text_of (card_of (win, "surface-ca-nn-1"));
  assert_non_null (strstr (surface, paper));
  caml_experiment_free (claimed);

  /* New: the dialog; cancelled, the start page stays. */
  GtkWidget *new_button = find_by_id (start_view_of (win), "new_button");
  assert_non_null (new_button);
  g_signal_emit_by_name (new_button, "clicked");
  GtkWindow *dialog = NULL;
  assert_true (iterate_until (new_dialog_shown, &dialog, 10));
  gtk_window_destroy (dialog);
  iterate_until (always_false, NULL, 0.1);
  assert_true (caml_window_is_start_shown (win));

  /* A preset: in this window (it held nothing), and the page is gone. */
  g_signal_emit_by_name (card_of (win, "xor-ca-nn"), "clicked");
  assert_true (iterate_until (not_loading, win, 30));
  assert_int_equal (n_windows (), before + 1);
  assert_string_equal (caml_window_get_experiment (win)->name, "xor-ca-nn");
  assert_false (caml_window_is_start_shown (win));
  assert_false (enabled (win, "hide-start"));

  /* ☰ → Start Page again, Back leaves it. */
  activate (win, "start", NULL);
  assert_true (caml_window_is_start_shown (win));
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (win));   /* for Escape */
  assert_true (focus != NULL && gtk_widget_is_ancestor (focus, start_view_of (win)));
  g_signal_emit_by_name (find_by_id (start_view_of (win), "back_button"), "clicked");
  assert_false (caml_window_is_start_shown (win));

  /* With unsaved changes the window keeps them: the preset opens in a
   * new window (the one rule). */
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "steps_spin")), 123);
  assert_true (caml_window_is_modified (win));
  activate (win, "start", NULL);
  g_signal_emit_by_name (card_of (win, "surface-nn"), "clicked");
  assert_int_equal (n_windows (), before + 2);
  assert_string_equal (caml_window_get_experiment (win)->name, "xor-ca-nn");
  assert_int_equal (caml_window_get_experiment (win)->steps, 123);
  CamlWindow *other = CAML_WINDOW (gtk_application_get_windows (GTK_APPLICATION (app))->data);
  assert_true (other != win);
  assert_true (iterate_until (not_loading, other, 30));
  assert_string_equal (caml_window_get_experiment (other)->name, "surface-nn");
  assert_false (caml_window_is_start_shown (other));
  gtk_window_destroy (GTK_WINDOW (other));
  gtk_window_destroy (GTK_WINDOW (win));
  iterate_until (always_false, NULL, 0.1);
}

/* A file noted as recent is listed on the start page (the application's
 * Open Recent list). */
static void
test_recent (void **state)
{
  g_autofree char *tmp = g_dir_make_tmp ("caml-start-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (tmp, "mine.json", NULL);
  CamlExperiment *exp = caml_presets_load ("xor-nn", NULL);
  assert_true (caml_experiment_save_file (exp, path, NULL));
  caml_experiment_free (exp);
  caml_application_note_recent (app, path);

  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, NULL));
  caml_window_show_start (win, TRUE);
  assert_true (iterate_until (is_mapped, win, 10));
  GtkWidget *recent = find_by_id (start_view_of (win), "recent_box");
  g_autofree char *text = text_of (recent);
  print_message ("recent: %s\n", text);
  assert_non_null (strstr (text, "mine.json"));
  gtk_window_destroy (GTK_WINDOW (win));
  iterate_until (always_false, NULL, 0.1);
  g_unlink (path);
  g_rmdir (tmp);
}

/* The Presets menu: the same sections, every preset once. */
static void
test_presets_menu (void **state)
{
  GMenuModel *menu = caml_application_get_presets_menu (app);
  g_auto (GStrv) names = caml_presets_list ();
  int total = 0;
  for (int i = 0; i < g_menu_model_get_n_items (menu); i++)
    {
      g_autofree char *label = NULL;
      assert_true (g_menu_model_get_item_attribute (menu, i, G_MENU_ATTRIBUTE_LABEL, "s", &label));
      g_autoptr (GMenuModel) section = g_menu_model_get_item_link (menu, i, G_MENU_LINK_SECTION);
      assert_non_null (section);
      gboolean known = FALSE;
      for (int s = 0; s < CAML_PRESET_N_SECTIONS; s++)
        known |= g_strcmp0 (label, caml_preset_section_title (s)) == 0;
      assert_true (known);
      total += g_menu_model_get_n_items (section);
    }
  assert_int_equal (total, (int) g_strv_length (names));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_start_page),
    cmocka_unit_test (test_recent),
    cmocka_unit_test (test_presets_menu),
  };
  if (!gui_harness_init ("test-gui-start"))
    return 1;
  return gui_harness_finish (cmocka_run_group_tests (tests, NULL, NULL));
}
