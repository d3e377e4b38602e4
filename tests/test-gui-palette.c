/* test-gui-palette.c — finding layers and reading plots in a small window
 * (issue 29), under Xvfb: the palette's groups, its search (Enter adds the
 * first match, focus on the new row), layers greyed where the model's end
 * cannot take them, and the plots' sizes in a 1024×700 window. Driven
 * through the widgets and actions a user reaches. */
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
#include "caml-layer-palette.h"
#include "caml-layer-row.h"
#include "caml-model-editor.h"
#include "caml-plot-view.h"
#include "caml-plot.h"
#include "caml-window.h"
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

/* The first widget below widget (or widget) of type. */
static GtkWidget *
find_type (GtkWidget *widget, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_type (c, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static void
assert_layers (CamlWindow *win, const char *const *names)
{
  const CamlExperiment *exp = caml_window_get_experiment (win);
  int n = (int) g_strv_length ((char **) names);
  assert_int_equal (exp->n_layers, n);
  for (int i = 0; i < n; i++)
    assert_string_equal (exp->layers[i].ops->name, names[i]);
}

/* The names of the rows the search shows, space-separated. */
static char *
shown_rows (CamlLayerPalette *palette)
{
  GString *s = g_string_new (NULL);
  GtkListBox *list = caml_layer_palette_get_list (palette);
  GtkListBoxRow *row;
  for (int i = 0; (row = gtk_list_box_get_row_at_index (list, i)) != NULL; i++)
    if (gtk_widget_get_child_visible (GTK_WIDGET (row)))
      g_string_append_printf (s, "%s%s", s->len > 0 ? " " : "",
                              (const char *) g_object_get_data (G_OBJECT (row), "caml-layer"));
  return g_string_free (s, FALSE);
}

typedef struct {
  CamlLayerPalette *palette;
  const char       *want;     /* the rows shown, or their start */
  gboolean          prefix;
} Shown;

static gboolean
shows (gpointer data)
{
  Shown *s = data;
  g_autofree char *rows = shown_rows (s->palette);
  return s->prefix ? g_str_has_prefix (rows, s->want) : g_str_equal (rows, s->want);
}

/* The rows shown once the search entry has applied its text (after its
 * delay; under the sanitizers on a busy machine, well after): what the
 * test expects, or what is shown when that never comes. */
static char *
shown_rows_after_search (CamlLayerPalette *palette, const char *want, gboolean prefix)
{
  Shown s = { palette, want, prefix };
  iterate_until (shows, &s, 20);
  return shown_rows (palette);
}

/* ---------------------------------------------------------------- groups */

/* Every registry type falls in one of the five groups, derived from what it
 * takes: none is left out and none is empty. */
static void
test_palette_groups (void **state)
{
  static const struct { const char *name; CamlLayerGroup group; } expected[] = {
    { "dense", CAML_LAYER_GROUP_DENSE },
    { "activation", CAML_LAYER_GROUP_DENSE },
    { "dropout", CAML_LAYER_GROUP_DENSE },
    { "conv2d", CAML_LAYER_GROUP_CONVOLUTION },
    { "max_pool", CAML_LAYER_GROUP_CONVOLUTION },
    { "flatten", CAML_LAYER_GROUP_CONVOLUTION },
    { "ca_nn", CAML_LAYER_GROUP_CONTEXT_AWARE },
    { "ca_res", CAML_LAYER_GROUP_CONTEXT_AWARE },
    { "ca_cnn", CAML_LAYER_GROUP_CONTEXT_AWARE },
    { "ca_res_conv", CAML_LAYER_GROUP_CONTEXT_AWARE },
    { "embedding", CAML_LAYER_GROUP_TEXT },
    { "average", CAML_LAYER_GROUP_TEXT },
    { "ca_bsfe", CAML_LAYER_GROUP_TEXT },
    { "mean_pool", CAML_LAYER_GROUP_SEQUENCE },
    { "lstm", CAML_LAYER_GROUP_SEQUENCE },
    { "gru", CAML_LAYER_GROUP_SEQUENCE },
    { "ca_rnn", CAML_LAYER_GROUP_SEQUENCE },
    { "attention", CAML_LAYER_GROUP_SEQUENCE },
    { "ca_att", CAML_LAYER_GROUP_SEQUENCE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      const CamlLayerOps *ops = caml_layer_lookup (expected[i].name);
      assert_non_null (ops);
      if (caml_layer_group_of (ops) != expected[i].group)
        fail_msg ("%s: group %s, expected %s", expected[i].name,
                  caml_layer_group_title (caml_layer_group_of (ops)),
                  caml_layer_group_title (expected[i].group));
    }
  int n = 0, count[CAML_N_LAYER_GROUPS] = { 0 };
  const CamlLayerOps *const *types = caml_layer_registry (&n);
  for (int i = 0; i < n; i++)
    count[caml_layer_group_of (types[i])]++;
  for (int g = 0; g < CAML_N_LAYER_GROUPS; g++)
    assert_true (count[g] > 0);
  assert_string_equal (caml_layer_group_title (CAML_LAYER_GROUP_CONTEXT_AWARE), "Context-aware");
}

/* ------------------------------------------------------- search, greying */

/* On surface data the text, sequence and image layers are greyed, each
 * saying why; the search filters by name, group and description; Enter adds
 * the first layer shown that fits, and the new row has the focus, so
 * Alt+Up moves it at once. */
static void
test_palette_search (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 30));
  CamlLayerPalette *palette = CAML_LAYER_PALETTE (find_type (GTK_WIDGET (win),
                                                             CAML_TYPE_LAYER_PALETTE));
  assert_non_null (palette);
  GtkWidget *search = caml_layer_palette_get_search (palette);

  /* Greyed, with the reason. */
  const char *greyed[] = { "embedding", "ca_bsfe", "lstm", "attention", "conv2d", "max_pool",
                           "ca_cnn" };
  for (guint i = 0; i < G_N_ELEMENTS (greyed); i++)
    {
      GtkWidget *row = caml_layer_palette_get_row (palette, greyed[i]);
      assert_non_null (row);
      assert_false (gtk_widget_get_sensitive (row));
      const char *reason = caml_layer_palette_get_reason (palette, greyed[i]);
      assert_non_null (reason);
      assert_non_null (strstr (reason, "cannot come next"));
      assert_string_equal (gtk_widget_get_tooltip_text (row), reason);
    }
  assert_non_null (strstr (caml_layer_palette_get_reason (palette, "embedding"), "token ids"));
  assert_non_null (strstr (caml_layer_palette_get_reason (palette, "conv2d"), "(1)"));
  const char *open[] = { "dense", "activation", "dropout", "flatten", "ca_nn", "ca_res" };
  for (guint i = 0; i < G_N_ELEMENTS (open); i++)
    {
      assert_true (gtk_widget_get_sensitive (caml_layer_palette_get_row (palette, open[i])));
      assert_null (caml_layer_palette_get_reason (palette, open[i]));
    }

  /* The search: by name, by group, nothing. */
  gtk_editable_set_text (GTK_EDITABLE (search), "lst");
  g_autofree char *lstm = shown_rows_after_search (palette, "lstm", FALSE);
  assert_string_equal (lstm, "lstm");
  assert_null (caml_layer_palette_get_first_match (palette));   /* greyed: Enter adds nothing */
  g_signal_emit_by_name (search, "activate");
  const char *start[] = { "ca_nn", "dense", NULL };
  assert_layers (win, start);

  /* the group first, then the CA layers of text and sequences */
  gtk_editable_set_text (GTK_EDITABLE (search), "context");
  g_autofree char *context = shown_rows_after_search (palette, "ca_nn ca_res ca_cnn ca_res_conv ",
                                                      TRUE);
  assert_true (g_str_has_prefix (context, "ca_nn ca_res ca_cnn ca_res_conv "));
  assert_non_null (strstr (context, "ca_att"));
  assert_null (strstr (context, "dense"));

  gtk_editable_set_text (GTK_EDITABLE (search), "no such layer");
  g_autofree char *none = shown_rows_after_search (palette, "", FALSE);
  assert_string_equal (none, "");

  /* Enter adds the first match; the new row has the focus. */
  gtk_editable_set_text (GTK_EDITABLE (search), "drop");
  g_autofree char *drop = shown_rows_after_search (palette, "dropout", FALSE);
  assert_string_equal (drop, "dropout");
  assert_string_equal (caml_layer_palette_get_first_match (palette), "dropout");
  gtk_widget_grab_focus (search);
  g_signal_emit_by_name (search, "activate");
  const char *added[] = { "ca_nn", "dense", "dropout", NULL };
  assert_layers (win, added);
  CamlModelEditor *editor = CAML_MODEL_EDITOR (find_type (GTK_WIDGET (win),
                                                          CAML_TYPE_MODEL_EDITOR));
  assert_int_equal (caml_model_editor_get_selected (editor), 2);
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (win));
  assert_non_null (focus);
  assert_true (CAML_IS_LAYER_ROW (focus) || gtk_widget_get_ancestor (focus, CAML_TYPE_LAYER_ROW));
  GtkWidget *row = CAML_IS_LAYER_ROW (focus) ? focus
                   : gtk_widget_get_ancestor (focus, CAML_TYPE_LAYER_ROW);
  assert_int_equal (gtk_list_box_row_get_index (GTK_LIST_BOX_ROW (row)), 2);
  /* Alt+Up, as the model list's shortcut does it. */
  assert_true (gtk_widget_activate_action (row, "editor.move-layer-up", NULL));
  const char *moved[] = { "ca_nn", "dropout", "dense", NULL };
  assert_layers (win, moved);

  /* After the dropout the model ends with (1) still; after a flatten of an
   * image nothing changes here. A model that does not build greys nothing:
   * where a new layer goes is not known. */
  gtk_widget_activate_action (GTK_WIDGET (editor), "editor.add-layer", "s", "conv2d");
  assert_false (caml_model_editor_is_valid (editor));
  assert_true (gtk_widget_get_sensitive (caml_layer_palette_get_row (palette, "embedding")));
  assert_null (caml_layer_palette_get_reason (palette, "embedding"));
  gtk_widget_activate_action (GTK_WIDGET (editor), "editor.undo", NULL);
  assert_false (gtk_widget_get_sensitive (caml_layer_palette_get_row (palette, "embedding")));

  /* An empty model: a new layer takes the data themselves, (2). */
  gtk_widget_activate_action (GTK_WIDGET (editor), "editor.clear-model", NULL);
  assert_non_null (strstr (caml_layer_palette_get_reason (palette, "embedding"), "(2)"));
  assert_true (gtk_widget_get_sensitive (caml_layer_palette_get_row (palette, "ca_nn")));
  gtk_widget_activate_action (GTK_WIDGET (editor), "editor.undo", NULL);

  /* Escape (stop-search) clears the search: every type shows again. */
  g_signal_emit_by_name (search, "stop-search");
  g_autofree char *all = shown_rows_after_search (palette, "dense activation dropout ", TRUE);
  int n_types = 0;
  caml_layer_registry (&n_types);
  g_auto (GStrv) names = g_strsplit (all, " ", -1);
  assert_int_equal ((int) g_strv_length (names), n_types);

  /* While a run trains the palette is locked as a whole. */
  gtk_widget_activate_action (GTK_WIDGET (editor), "editor.undo", NULL);
  gtk_widget_activate_action (GTK_WIDGET (editor), "editor.undo", NULL);
  g_action_group_activate_action (G_ACTION_GROUP (win), "step", NULL);
  iterate_until (always_false, NULL, 0.5);
  assert_false (gtk_widget_is_sensitive (caml_layer_palette_get_row (palette, "dense")));
  g_action_group_activate_action (G_ACTION_GROUP (win), "stop", NULL);
  iterate_until (no_jobs, win, 10);
  gtk_window_destroy (GTK_WINDOW (win));
  iterate_until (always_false, NULL, 0.2);
}

/* --------------------------------------------------------- small window */

static gboolean
allocated_tall (gpointer data)
{
  return gtk_widget_get_height (GTK_WIDGET (data)) > 50;
}

/* At 1024×700 the loss yields height to the maps: the surface and χ keep
 * most of it, the CA-NN parts go in two rows of readable cells; a divider
 * moved by hand stays where it was put. */
static void
test_small_window_plots (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  gtk_window_set_default_size (GTK_WINDOW (win), 1024, 700);
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 30));
  g_action_group_activate_action (G_ACTION_GROUP (win), "train", NULL);
  assert_true (iterate_until (run_ended, win, 120));
  GtkWidget *loss = GTK_WIDGET (caml_window_get_plot_view (win, "loss"));
  GtkWidget *surface = GTK_WIDGET (caml_window_get_plot_view (win, "surface"));
  assert_true (iterate_until (allocated_tall, surface, 10));
  iterate_until (always_false, NULL, 0.3);
  int loss_h = gtk_widget_get_height (loss), surface_h = gtk_widget_get_height (surface);
  print_message ("1024×700: window %d × %d, loss %d, surface %d × %d\n",
                 gtk_widget_get_width (GTK_WIDGET (win)), gtk_widget_get_height (GTK_WIDGET (win)),
                 loss_h, gtk_widget_get_width (surface), surface_h);
  assert_true (gtk_widget_get_height (GTK_WIDGET (win)) <= 700);
  assert_true (loss_h >= 150);
  assert_true (surface_h >= 280);
  assert_true (surface_h > loss_h);

  /* The parts: four maps in two rows, each over 140 px tall. */
  g_action_group_activate_action (G_ACTION_GROUP (win), "plots-page",
                                  g_variant_new_string ("parts"));
  GtkWidget *parts = GTK_WIDGET (caml_window_get_plot_view (win, "parts"));
  assert_true (iterate_until (allocated_tall, parts, 10));
  iterate_until (always_false, NULL, 0.3);
  int pw = gtk_widget_get_width (parts), ph = gtk_widget_get_height (parts);
  CamlPlotPanel panel = { NULL, NULL, 4, 0, 1.2 };   /* as the view lays its figure out */
  CamlPlotRect last;
  caml_plot_panel_cell_rect (&panel, pw, ph, 3, &last);
  print_message ("parts %d × %d: cells %.0f × %.0f\n", pw, ph, last.width, last.height);
  assert_true (last.y > 0);   /* a second row */
  assert_true (last.height >= 140);

  /* A divider moved by hand stays where it was put when the window grows. */
  GtkPaned *paned = GTK_PANED (gtk_widget_get_ancestor (loss, GTK_TYPE_PANED));
  assert_true (gtk_orientable_get_orientation (GTK_ORIENTABLE (paned))
               == GTK_ORIENTATION_VERTICAL);
  gtk_paned_set_position (paned, 230);
  gtk_window_set_default_size (GTK_WINDOW (win), 1024, 690);
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (gtk_paned_get_position (paned), 230);
  gtk_window_destroy (GTK_WINDOW (win));
  iterate_until (always_false, NULL, 0.2);
}

/* ------------------------------------------------------------- exports */

/* Exports what, and returns the PNG's width (its height in *height). */
static int
export_width (CamlWindow *win, const char *dir, const char *what, int *height)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *name = g_strdup_printf ("%s.png", what);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  if (!caml_window_export_plot (win, what, path, &error))
    fail_msg ("export %s: %s", what, error->message);
  cairo_surface_t *img = cairo_image_surface_create_from_png (path);
  assert_int_equal (cairo_surface_status (img), CAIRO_STATUS_SUCCESS);
  int width = cairo_image_surface_get_width (img);
  *height = cairo_image_surface_get_height (img);
  cairo_surface_destroy (img);
  print_message ("%s: %d×%d\n", what, width, *height);
  if (g_getenv ("CAML_SCREENSHOT_DIR") != NULL)
    {
      g_autofree char *keep = g_strdup_printf ("%s/export-%s.png",
                                               g_getenv ("CAML_SCREENSHOT_DIR"), what);
      g_rename (path, keep);
    }
  else
    g_unlink (path);
  return width;
}

/* Every export is at least 1200 px wide — the σ-maps, the loss, the
 * surface, χ, the CA-NN parts — whatever the window's size. */
static void
test_exports_wide (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-exports-XXXXXX", NULL);
  int height = 0;

  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 30));
  g_action_group_activate_action (G_ACTION_GROUP (win), "train", NULL);
  assert_true (iterate_until (run_ended, win, 120));
  g_action_group_activate_action (G_ACTION_GROUP (win), "plots-page",
                                  g_variant_new_string ("parts"));
  iterate_until (no_jobs, NULL, 10);
  iterate_until (always_false, NULL, 0.5);
  const char *surface[] = { "loss", "surface", "chi", "parts" };
  for (guint i = 0; i < G_N_ELEMENTS (surface); i++)
    assert_true (export_width (win, dir, surface[i], &height) >= 1200);
  gtk_window_destroy (GTK_WINDOW (win));

  const char *names[] = { "train-images", "train-labels", "test-images", "test-labels" };
  char *paths[4];
  for (int i = 0; i < 4; i++)
    paths[i] = g_build_filename (dir, names[i], NULL);
  write_idx_pair (paths[0], paths[1], 200, 1);
  write_idx_pair (paths[2], paths[3], 120, 2);
  g_autofree char *json = g_strdup_printf (
    "{ \"name\": \"bars\", \"seed\": 3,"
    "  \"data\": { \"idx\": { \"train_images\": \"%s\", \"train_labels\": \"%s\","
    "                        \"test_images\": \"%s\", \"test_labels\": \"%s\" } },"
    "  \"model\": [ { \"layer\": \"ca_cnn\", \"kernel\": 3, \"depth\": 2 },"
    "               { \"layer\": \"flatten\" },"
    "               { \"layer\": \"dense\", \"units\": 10, \"activation\": \"identity\" } ],"
    "  \"loss\": \"softmax_cross_entropy\","
    "  \"optimizer\": { \"type\": \"adagrad\", \"lr\": 0.01 },"
    "  \"training\": { \"steps\": 30, \"batch_size\": 20, \"eval_every\": 10 } }",
    paths[0], paths[1], paths[2], paths[3]);
  g_autofree char *exp_path = g_build_filename (dir, "bars.json", NULL);
  assert_true (g_file_set_contents (exp_path, json, -1, NULL));
  win = caml_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (win));
  assert_true (iterate_until (is_mapped, win, 10));
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_load_file (win, exp_path, &error));
  assert_true (iterate_until (not_loading, win, 60));
  g_action_group_activate_action (G_ACTION_GROUP (win), "train", NULL);
  assert_true (iterate_until (run_ended, win, 120));
  iterate_until (always_false, NULL, 0.5);
  const char *images[] = { "loss", "accuracy", "sigma", "sigma-auc" };
  for (guint i = 0; i < G_N_ELEMENTS (images); i++)
    assert_true (export_width (win, dir, images[i], &height) >= 1200);
  gtk_window_destroy (GTK_WINDOW (win));
  iterate_until (no_jobs, NULL, 10);
  g_unlink (exp_path);
  for (int i = 0; i < 4; i++)
    {
      g_unlink (paths[i]);
      g_free (paths[i]);
    }
  g_rmdir (dir);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_palette_groups),
    cmocka_unit_test (test_palette_search),
    cmocka_unit_test (test_small_window_plots),
    cmocka_unit_test (test_exports_wide),
  };
  g_autoptr (GError) error = NULL;

  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  g_autofree char *autosave_dir = g_dir_make_tmp ("caml-autosave-XXXXXX", NULL);
  g_setenv ("CAML_AUTOSAVE_DIR", autosave_dir, TRUE);
  app = caml_application_new (G_APPLICATION_NON_UNIQUE);
  if (!g_application_register (G_APPLICATION (app), NULL, &error))
    {
      fprintf (stderr, "test-gui-palette: %s\n", error->message);
      return 1;
    }
  if (g_getenv ("CAML_GUI_TEST_FILTER") != NULL)
    cmocka_set_test_filter (g_getenv ("CAML_GUI_TEST_FILTER"));
  int failed = cmocka_run_group_tests (tests, NULL, NULL);
  g_object_unref (app);
  remove_tree (autosave_dir);
  return failed;
}
