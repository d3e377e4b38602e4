/* test-gui.c — the workbench under Xvfb, driven through the same actions a
 * user triggers: build the XOR CA-NN, train to the end, check that the loss
 * dropped and the surface plot was rebuilt and redrawn, save and reopen the
 * experiment, load a broken file, and write a screenshot of the window.
 *
 * Run by `meson test gui` through xvfb-run, with GSETTINGS_SCHEMA_DIR set to
 * the schema compiled in the build tree and GSETTINGS_BACKEND=memory. */
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
#include "caml-private.h"   /* caml_data_surface, an engine internal */
#include "words-page.h"
#include "caml-window.h"
#include "caml-model-editor.h"
#include "presets.h"
#include "caml-data-source.h"
#include "caml-run.h"
#include "caml-session.h"
#include "harness.h"

static CamlApplication *app;
static char *autosave_dir;   /* $CAML_AUTOSAVE_DIR for the whole run */



static GtkWidget *template_child (CamlWindow *win, const char *name);

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



typedef struct {
  CamlPlotView *view;
  guint         draws;
} DrawWait;

static gboolean
drawn_since (gpointer data)
{
  DrawWait *w = data;
  return caml_plot_view_get_draw_count (w->view) > w->draws;
}


static void
activate (CamlWindow *win, const char *action, GVariant *param)
{
  g_assert_true (g_action_group_get_action_enabled (G_ACTION_GROUP (win), action));
  g_action_group_activate_action (G_ACTION_GROUP (win), action, param);
}

static gboolean
enabled (CamlWindow *win, const char *action)
{
  return g_action_group_get_action_enabled (G_ACTION_GROUP (win), action);
}

/* The model editor's own actions (editor.*). */
static GActionGroup *
editor_actions (CamlWindow *win)
{
  return caml_model_editor_get_actions (CAML_MODEL_EDITOR (template_child (win, "model_editor")));
}

static void
activate_editor (CamlWindow *win, const char *action, GVariant *param)
{
  g_assert_true (g_action_group_get_action_enabled (editor_actions (win), action));
  g_action_group_activate_action (editor_actions (win), action, param);
}

static gboolean
editor_enabled (CamlWindow *win, const char *action)
{
  return g_action_group_get_action_enabled (editor_actions (win), action);
}

static void
save_screenshot (GtkWidget *widget, const char *path)
{
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  GdkPaintable *paintable = gtk_widget_paintable_new (widget);
  GskRenderNode *node = NULL;

  /* A widget that has not been drawn since it last changed has no render
   * node yet; under the sanitizers the next frame can take a while. */
  for (int tries = 0; node == NULL && tries < 100; tries++)
    {
      GtkSnapshot *snapshot = gtk_snapshot_new ();
      gdk_paintable_snapshot (paintable, snapshot, w, h);
      node = gtk_snapshot_free_to_node (snapshot);
      if (node == NULL)
        iterate_until (always_false, NULL, 0.1);
    }
  assert_non_null (node);
  GskRenderer *renderer = gtk_native_get_renderer (GTK_NATIVE (widget));
  GdkTexture *texture = gsk_renderer_render_texture (renderer, node,
                                                     &GRAPHENE_RECT_INIT (0, 0, w, h));
  assert_true (gdk_texture_save_to_png (texture, path));
  g_object_unref (texture);
  gsk_render_node_unref (node);
  g_object_unref (paintable);
}

/* ------------------------------------------------------------ autosave */

static gboolean
autosave_written (gpointer data)
{
  g_autofree char *path = caml_window_get_autosave_path (CAML_WINDOW (data));
  return path != NULL && g_file_test (path, G_FILE_TEST_EXISTS);
}

static CamlWindow *
find_window (gboolean (*pred) (CamlWindow *win))
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (CAML_IS_WINDOW (l->data) && pred (CAML_WINDOW (l->data)))
      return CAML_WINDOW (l->data);
  return NULL;
}

static gboolean
shows_recovery (CamlWindow *win)
{
  const char *msg = caml_window_get_error (win);
  return msg != NULL && strstr (msg, "session that ended unexpectedly") != NULL;
}

static gboolean
is_recovered (CamlWindow *win)
{
  return caml_window_is_recovered (win);
}

static char *
plant_leftover (GPid pid, const char *tag, const char *contents)
{
  g_autofree char *name = g_strdup_printf ("%ld-%s.json", (long) pid, tag);
  char *path = g_build_filename (autosave_dir, name, NULL);
  assert_true (g_file_set_contents (path, contents, -1, NULL));
  return path;
}

/* An edit is autosaved within a second (and loads back equal); a save
 * removes the file. A crashed session's leftovers (a dead pid's files, one
 * corrupt) are offered at startup: Recover opens the readable one as a
 * modified "(recovered)" window, Discard deletes the corrupt one. Runs
 * first: the application looks for leftovers once, at its first window. */
static void
test_autosave (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_null (caml_window_get_autosave_path (win));
  activate_editor (win, "add-layer", g_variant_new_string ("dense"));
  assert_true (caml_window_is_modified (win));
  assert_true (iterate_until (autosave_written, win, 5));
  g_autofree char *own = caml_window_get_autosave_path (win);
  assert_true (g_str_has_prefix (own, autosave_dir));
  g_autoptr (GError) error = NULL;
  CamlExperiment *saved = caml_experiment_load_file (own, &error);
  assert_non_null (saved);
  assert_true (caml_experiment_equal (saved, caml_window_get_experiment (win)));

  g_autofree char *dir = g_dir_make_tmp ("caml-gui-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "edited.json", NULL);
  assert_true (caml_window_save_to_path (win, path, &error));
  assert_false (g_file_test (own, G_FILE_TEST_EXISTS));
  gtk_window_destroy (GTK_WINDOW (win));
  g_unlink (path);
  g_rmdir (dir);

  /* A crashed session: its pid is a child that has exited. */
  const char *argv[] = { "true", NULL };
  GPid dead = 0;
  int status = 0;
  assert_true (g_spawn_async (NULL, (char **) argv, NULL,
                              G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                              &dead, &error));
  assert_int_equal (waitpid (dead, &status, 0), dead);
  g_spawn_close_pid (dead);
  g_autofree char *json = caml_experiment_to_json (saved);
  g_autofree char *good = plant_leftover (dead, "good", json);
  g_autofree char *corrupt = plant_leftover (dead, "corrupt", "{ \"steps\": ");

  g_application_activate (G_APPLICATION (app));
  CamlWindow *first = find_window (shows_recovery);
  assert_non_null (first);
  print_message ("recovery banner: %s\n", caml_window_get_error (first));
  /* An offer, not an error, and nothing is recovered before Recover. */
  assert_non_null (strstr (caml_window_get_error (first),
                           "1 unsaved experiment from a session that ended unexpectedly "
                           "can be recovered"));
  GtkWidget *banner = template_child (first, "banner_revealer");
  assert_true (gtk_widget_has_css_class (GTK_WIDGET (banner), "info"));
  assert_non_null (strstr (caml_window_get_error (first), "corrupt.json"));
  assert_true (g_action_group_get_action_enabled (G_ACTION_GROUP (app), "recover-autosaves"));

  g_action_group_activate_action (G_ACTION_GROUP (app), "recover-autosaves", NULL);
  CamlWindow *recovered = find_window (is_recovered);
  assert_non_null (recovered);
  assert_true (caml_window_is_modified (recovered));
  assert_true (caml_experiment_equal (saved, caml_window_get_experiment (recovered)));
  assert_non_null (strstr (gtk_window_get_title (GTK_WINDOW (recovered)), "(recovered)"));
  assert_false (g_file_test (good, G_FILE_TEST_EXISTS));      /* now the window's own */
  assert_true (autosave_written (recovered));
  /* The corrupt one is still offered, to be discarded. */
  assert_true (shows_recovery (first));
  assert_true (g_file_test (corrupt, G_FILE_TEST_EXISTS));
  g_action_group_activate_action (G_ACTION_GROUP (app), "discard-autosaves", NULL);
  assert_false (g_file_test (corrupt, G_FILE_TEST_EXISTS));
  assert_null (caml_window_get_error (first));

  /* Saved elsewhere, a recovered experiment keeps its name: it may be one
   * set apart from the file it came from. */
  g_autofree char *recovered_own = caml_window_get_autosave_path (recovered);
  g_autofree char *later = g_dir_make_tmp ("caml-gui-XXXXXX", NULL);
  g_autofree char *elsewhere = g_build_filename (later, "elsewhere.json", NULL);
  assert_true (caml_window_save_to_path (recovered, elsewhere, &error));
  assert_string_equal (caml_window_get_experiment (recovered)->name, saved->name);
  g_unlink (elsewhere);
  g_rmdir (later);
  g_unlink (recovered_own);
  caml_experiment_free (saved);
  gtk_window_destroy (GTK_WINDOW (recovered));
  gtk_window_destroy (GTK_WINDOW (first));
}

/* What tools/run opens (caml-workbench --preset surface-ca-nn-2): the
 * preset, ready to train at once — Train enabled while the model is built
 * (on a worker thread, in a moment), and F5 and Ctrl+Return bound to it. */
static void
test_ready_to_train (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_string_equal (caml_window_get_experiment (win)->name, "surface-ca-nn-2");
  assert_true (enabled (win, "train"));
  assert_true (iterate_until (not_loading, win, 10));
  assert_true (caml_plot_view_has_plot (caml_window_get_plot_view (win, "surface")));
  assert_true (enabled (win, "train"));
  assert_null (caml_window_get_error (win));
  g_auto (GStrv) accels = gtk_application_get_accels_for_action (GTK_APPLICATION (app),
                                                                 "win.train");
  assert_true (g_strv_contains ((const char *const *) accels, "F5"));
  assert_true (g_strv_contains ((const char *const *) accels, "<Control>Return"));
  gtk_window_destroy (GTK_WINDOW (win));
}


/* A layer row lists its options; an option whose 0 stands for something
 * says what ("stride = size", not "stride 0"). */
static void
test_options_text (void **state)
{
  CamlLayerSpec spec = { 0 };
  spec.ops = caml_layer_lookup ("max_pool");
  assert_non_null (spec.ops);
  caml_layer_ops_default_options (spec.ops, spec.opt);
  g_autofree char *pool = caml_model_editor_options_text (&spec);
  assert_string_equal (pool, "size 2, stride = size, valid");
  spec.opt[caml_layer_ops_option_index (spec.ops, "stride")] = 1;
  g_autofree char *strided = caml_model_editor_options_text (&spec);
  assert_string_equal (strided, "size 2, stride 1, valid");
}

/* The mapped item of a popover menu that reads text. */
static GtkWidget *
find_menu_item (GtkWidget *root, const char *text)
{
  for (GtkWidget *c = gtk_widget_get_first_child (root); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      if (g_str_equal (G_OBJECT_TYPE_NAME (c), "GtkModelButton") && gtk_widget_get_mapped (c))
        {
          g_autofree char *label = NULL;
          g_object_get (c, "text", &label, NULL);
          if (label != NULL && g_str_equal (label, text))
            return c;
        }
      GtkWidget *found = find_menu_item (c, text);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The header bar's ☰ button. */
static GtkMenuButton *
find_main_menu (GtkWidget *root)
{
  for (GtkWidget *c = gtk_widget_get_first_child (root); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      const char *tip = gtk_widget_get_tooltip_text (c);
      if (GTK_IS_MENU_BUTTON (c) && tip != NULL && g_str_equal (tip, "Main menu"))
        return GTK_MENU_BUTTON (c);
      GtkMenuButton *found = find_main_menu (c);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static gboolean
focus_settled (gpointer data)
{
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (data));
  return focus == NULL || gtk_widget_get_mapped (focus);
}

/* A menu that closes gives the keyboard back: GTK 4.8 left the focus in
 * the closed popover when the item chosen was in a submenu (☰ → Style →
 * Dark), where F5 and the other shortcuts reached nothing until a click.
 * Fails without the window's focus_rescue. */
static void
test_focus_after_menu (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_true (iterate_until (is_mapped, win, 10));
  GtkWidget *bar = gtk_window_get_titlebar (GTK_WINDOW (win));
  GtkMenuButton *menu = find_main_menu (bar);
  assert_non_null (menu);
  GtkPopover *popover = gtk_menu_button_get_popover (menu);
  assert_non_null (popover);
  gtk_menu_button_popup (menu);
  assert_true (iterate_until (is_mapped, popover, 10));
  /* Style opens its submenu, and Dark is chosen there, by the keyboard
   * as a user does (Space or Enter on the focused item). */
  GtkWidget *style = find_menu_item (GTK_WIDGET (popover), "Style");
  assert_non_null (style);
  assert_true (gtk_widget_grab_focus (style));
  assert_true (gtk_widget_activate (style));
  iterate_until (always_false, NULL, 0.3);
  GtkWidget *dark = find_menu_item (GTK_WIDGET (popover), "Dark");
  assert_non_null (dark);
  assert_true (gtk_widget_grab_focus (dark));
  assert_true (gtk_widget_activate (dark));
  assert_true (iterate_until (focus_settled, win, 5));
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (win));
  print_message ("after the menu closed, the focus is on %s\n",
                 focus != NULL ? G_OBJECT_TYPE_NAME (focus) : "nothing");
  assert_false (focus != NULL && gtk_widget_is_ancestor (focus, GTK_WIDGET (popover)));
  g_action_group_activate_action (G_ACTION_GROUP (app), "style", g_variant_new_string ("system"));
  gtk_window_destroy (GTK_WINDOW (win));
}

/* ☰ → Threads → 1 Thread: the runs started after train on one thread (the
 * engine's count and the setting say so), and All Cores goes back. */
static void
test_threads_menu (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_true (iterate_until (is_mapped, win, 10));
  GtkMenuButton *menu = find_main_menu (gtk_window_get_titlebar (GTK_WINDOW (win)));
  assert_non_null (menu);
  GtkPopover *popover = gtk_menu_button_get_popover (menu);
  gtk_menu_button_popup (menu);
  assert_true (iterate_until (is_mapped, popover, 10));
  GtkWidget *threads = find_menu_item (GTK_WIDGET (popover), "Threads");
  assert_non_null (threads);
  assert_true (gtk_widget_grab_focus (threads));
  assert_true (gtk_widget_activate (threads));
  iterate_until (always_false, NULL, 0.3);
  g_autofree char *all = g_strdup_printf ("All Cores (%d)", caml_get_cores ());
  assert_non_null (find_menu_item (GTK_WIDGET (popover), all));
  GtkWidget *one = find_menu_item (GTK_WIDGET (popover), "1 Thread");
  assert_non_null (one);
  assert_true (gtk_widget_grab_focus (one));
  assert_true (gtk_widget_activate (one));
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (caml_get_threads (), 1);
  g_autoptr (GVariant) state1 = g_action_group_get_action_state (G_ACTION_GROUP (app), "threads");
  assert_int_equal (g_variant_get_int32 (state1), 1);
  g_action_group_activate_action (G_ACTION_GROUP (app), "threads", g_variant_new_int32 (0));
  iterate_until (always_false, NULL, 0.1);
  g_autoptr (GVariant) state0 = g_action_group_get_action_state (G_ACTION_GROUP (app), "threads");
  assert_int_equal (g_variant_get_int32 (state0), 0);
  assert_true (caml_get_threads () >= 1);
  gtk_window_destroy (GTK_WINDOW (win));
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

/* A widget of the window's template, or of the templates inside it (the
 * info bar's, the status line's, the pages'), by its id. */
static GtkWidget *
template_child (CamlWindow *win, const char *name)
{
  GObject *child = gtk_widget_get_template_child (GTK_WIDGET (win), CAML_TYPE_WINDOW, name);
  if (child == NULL)
    child = G_OBJECT (find_by_id (GTK_WIDGET (win), name));
  assert_non_null (child);
  return GTK_WIDGET (child);
}

/* The spin button of the selected layer's first option (the inspector's
 * grid: the layer's description in row 0, then one option a row). */
static GtkSpinButton *
first_option_spin (CamlWindow *win)
{
  GtkWidget *editor = template_child (win, "model_editor");
  GObject *grid = gtk_widget_get_template_child (editor, CAML_TYPE_MODEL_EDITOR, "inspector");
  assert_non_null (grid);
  GtkWidget *spin = gtk_grid_get_child_at (GTK_GRID (grid), 1, 1);
  assert_true (GTK_IS_SPIN_BUTTON (spin));
  return GTK_SPIN_BUTTON (spin);
}

static int
units_of_layer (CamlWindow *win, int layer)
{
  const CamlExperiment *exp = caml_window_get_experiment (win);
  const CamlLayerSpec *spec = &exp->layers[layer];
  return (int) spec->opt[caml_layer_ops_option_index (spec->ops, "units")];
}

/* Types into a field (the text only: no Enter, no focus-out), keeping the
 * keyboard focus there, as a user does before pressing F5. */
static void
type_into (CamlWindow *win, GtkSpinButton *spin, const char *text)
{
  assert_true (gtk_widget_grab_focus (GTK_WIDGET (spin)));
  gtk_editable_set_text (GTK_EDITABLE (spin), text);
  assert_true (gtk_widget_is_ancestor (gtk_root_get_focus (GTK_ROOT (win)), GTK_WIDGET (spin)));
}

/* Train and Step take what is typed in the field that has the focus: the
 * number of steps, a layer's units. */
static void
test_pending_edit (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_true (iterate_until (is_mapped, win, 10));
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  assert_int_equal (caml_window_get_experiment (win)->steps, 1000);

  type_into (win, steps, "500");
  assert_int_equal (caml_window_get_experiment (win)->steps, 1000);   /* not yet taken */
  activate (win, "train", NULL);
  assert_int_equal (caml_window_get_experiment (win)->steps, 500);
  assert_true (iterate_until (run_ended, win, 60));
  long n_steps = 0;
  caml_window_get_losses (win, &n_steps);
  assert_int_equal (n_steps, 500);
  assert_int_equal (gtk_spin_button_get_value_as_int (steps), 500);

  /* A layer option typed and not yet left: Step builds the run with it. */
  activate (win, "reset", NULL);
  activate_editor (win, "select-layer", g_variant_new_int32 (0));
  GtkSpinButton *units = first_option_spin (win);
  assert_int_equal (gtk_spin_button_get_value_as_int (units), 5);
  type_into (win, units, "3");
  assert_int_equal (units_of_layer (win, 0), 5);
  activate (win, "step", NULL);
  assert_int_equal (units_of_layer (win, 0), 3);
  assert_true (iterate_until (not_loading, win, 10));   /* built, then stepped */
  assert_true (caml_window_has_run (win));
  /* Paused after the step: Train resumes, and says so. */
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_PAUSED);
  assert_string_equal (gtk_label_get_label (GTK_LABEL (template_child (win, "train_label"))),
                       "_Resume");
  const char *error = caml_model_editor_get_error (CAML_MODEL_EDITOR (template_child (win, "model_editor")),
                                                   NULL);
  assert_null (error);
  gtk_window_destroy (GTK_WINDOW (win));
}

/* The model header has room for a few words: a data error (whose end,
 * "(it fetches into CAML_DATA_DIR, /tmp/…).", was all it showed) reads as
 * its gist, the whole message in the tooltip. */
static void
test_model_header_short (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  GtkWidget *editor = template_child (win, "model_editor");
  GtkLabel *summary = GTK_LABEL (gtk_widget_get_template_child (editor, CAML_TYPE_MODEL_EDITOR,
                                                                "summary_label"));
  assert_non_null (strstr (gtk_label_get_text (summary), "weights"));
  static const char why[] = "MNIST is not fetched: /tmp/x/mnist has no train-images-idx3-ubyte. "
                            "Get it with `datasets/fetch mnist` (it fetches into CAML_DATA_DIR, "
                            "/tmp/x).";
  caml_model_editor_set_data (CAML_MODEL_EDITOR (editor), NULL, 0, "MNIST", why);
  assert_string_equal (gtk_label_get_text (summary), "no MNIST data");
  const char *tip = gtk_widget_get_tooltip_text (GTK_WIDGET (summary));
  assert_non_null (strstr (tip, why));
  caml_model_editor_set_data (CAML_MODEL_EDITOR (editor), NULL, 0, "MNIST", NULL);
  assert_string_equal (gtk_label_get_text (summary), "waiting for the MNIST data");
  gtk_window_destroy (GTK_WINDOW (win));
}

static gboolean
lacks_error_style (gpointer data)
{
  return !gtk_widget_has_css_class (GTK_WIDGET (data), "error");
}

static const char *
status_text (CamlWindow *win)
{
  return gtk_label_get_text (GTK_LABEL (template_child (win, "status_label")));
}

static const char *field_text (GtkSpinButton *spin);

/* A value typed out of range, or not a number, is not taken silently:
 * the field turns red for a moment and the status says the range and
 * what was set (a layer's option, the learning rate). */
static void
test_value_corrected (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_true (iterate_until (is_mapped, win, 10));
  activate_editor (win, "select-layer", g_variant_new_int32 (0));

  GtkSpinButton *units = first_option_spin (win);
  type_into (win, units, "999999999");
  gtk_spin_button_update (units);   /* what Enter or leaving the field does */
  assert_int_equal (units_of_layer (win, 0), 65536);
  print_message ("status: %s\n", status_text (win));
  assert_string_equal (status_text (win), "Units set to 65536: must be 1…65536");
  assert_true (gtk_widget_has_css_class (GTK_WIDGET (units), "error"));

  units = first_option_spin (win);   /* the inspector may have been rebuilt */
  type_into (win, units, "abc");
  gtk_spin_button_update (units);
  assert_int_equal (units_of_layer (win, 0), 65536);   /* kept, not 1 */
  print_message ("status: %s\n", status_text (win));
  /* (A numeric field drops the letters: the text left is empty.) */
  assert_string_equal (status_text (win), "Units kept at 65536: no number typed (1…65536)");

  /* A value in range is taken as typed and says nothing new. */
  type_into (win, units, "7");
  gtk_spin_button_update (units);
  assert_int_equal (units_of_layer (win, 0), 7);

  /* The learning rate takes any number > 0, as experiment files do. */
  GtkSpinButton *lr = GTK_SPIN_BUTTON (template_child (win, "lr_spin"));
  type_into (win, lr, "abc");   /* not a numeric field: the letters stay */
  gtk_spin_button_update (lr);
  assert_string_equal (status_text (win), "Learning rate kept at 0.1: \"abc\" is not a number (> 0)");
  assert_string_equal (field_text (lr), "0.1");
  type_into (win, lr, "-1");
  gtk_spin_button_update (lr);
  assert_true (caml_window_get_experiment (win)->optimizer.lr == 0.1);
  print_message ("status: %s\n", status_text (win));
  assert_string_equal (status_text (win), "Learning rate kept at 0.1: must be > 0");
  assert_true (gtk_widget_has_css_class (GTK_WIDGET (lr), "error"));
  /* The red goes, and the notice, in a few seconds. */
  assert_true (iterate_until (lacks_error_style, lr, 5));
  gtk_window_destroy (GTK_WINDOW (win));
}

static void
test_xor_ca_nn (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (enabled (win, "train"));

  /* Build the XOR CA-NN exactly as a user does (the XOR data are made on
   * a worker thread, the model checked against them once there). */
  activate (win, "data", g_variant_new_string ("xor"));
  assert_true (iterate_until (not_loading, win, 10));
  activate_editor (win, "clear-model", NULL);
  assert_false (enabled (win, "train"));           /* no layers: nothing to train */
  {
    /* … saved so, it opens again (an empty model was written, then refused) */
    g_autofree char *dir = g_dir_make_tmp ("caml-gui-empty-XXXXXX", NULL);
    g_autofree char *path = g_build_filename (dir, "empty.json", NULL);
    g_autoptr (GError) error = NULL;
    assert_true (caml_window_save_to_path (win, path, &error));
    CamlWindow *other = caml_window_new (GTK_APPLICATION (app));
    gtk_window_present (GTK_WINDOW (other));
    assert_true (caml_window_load_file (other, path, &error));
    assert_null (error);
    assert_int_equal (caml_window_get_experiment (other)->n_layers, 0);
    gtk_window_destroy (GTK_WINDOW (other));
    g_unlink (path);
    g_rmdir (dir);
  }
  activate_editor (win, "add-layer", g_variant_new_string ("ca_nn"));
  activate_editor (win, "layer-option", g_variant_new ("(sd)", "units", 1.0));
  const CamlExperiment *exp = caml_window_get_experiment (win);
  assert_int_equal (exp->data.kind, CAML_DATA_XOR);
  assert_int_equal (exp->n_layers, 1);
  assert_string_equal (exp->layers[0].ops->name, "ca_nn");
  assert_int_equal ((int) exp->layers[0].opt[caml_layer_ops_option_index (exp->layers[0].ops,
                                                                          "units")], 1);
  assert_true (enabled (win, "train"));

  /* A layer whose output does not fit the data blocks training; undo
   * brings the working model back. */
  activate_editor (win, "add-layer", g_variant_new_string ("dense"));
  activate_editor (win, "layer-option", g_variant_new ("(sd)", "units", 3.0));
  assert_false (enabled (win, "train"));
  activate_editor (win, "undo", NULL);
  activate_editor (win, "undo", NULL);
  assert_int_equal (caml_window_get_experiment (win)->n_layers, 1);
  assert_true (enabled (win, "train"));
  activate_editor (win, "redo", NULL);
  assert_int_equal (caml_window_get_experiment (win)->n_layers, 2);
  /* Ctrl+Z: the editor's undo, reached from the window as its shortcut is. */
  g_auto (GStrv) undo_accels = gtk_application_get_accels_for_action (GTK_APPLICATION (app),
                                                                      "editor.undo");
  assert_true (g_strv_contains ((const char *const *) undo_accels, "<Control>z"));
  assert_true (gtk_widget_activate_action (GTK_WIDGET (win), "editor.undo", NULL));
  assert_int_equal (caml_window_get_experiment (win)->n_layers, 1);

  /* Train to the end. */
  CamlPlotView *surface = caml_window_get_plot_view (win, "surface");
  CamlPlotView *loss_view = caml_window_get_plot_view (win, "loss");
  guint surface_updates = caml_plot_view_get_update_count (surface);
  DrawWait surface_wait = { surface, caml_plot_view_get_draw_count (surface) };
  DrawWait loss_wait = { loss_view, caml_plot_view_get_draw_count (loss_view) };
  activate (win, "train", NULL);
  assert_true (iterate_until (not_loading, win, 10));   /* built, then started */
  assert_false (enabled (win, "train"));
  assert_true (enabled (win, "pause"));
  assert_false (editor_enabled (win, "add-layer"));      /* the model is fixed while training */
  assert_true (iterate_until (run_ended, win, 120));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  assert_true (enabled (win, "train"));
  assert_true (enabled (win, "reset"));

  long n_steps = 0;
  const float *losses = caml_window_get_losses (win, &n_steps);
  assert_int_equal (n_steps, caml_window_get_experiment (win)->steps);
  double first = losses[0], last = 0;
  for (long i = n_steps - 10; i < n_steps; i++)
    last += losses[i] / 10.0;
  print_message ("XOR CA-NN: loss %.4g at step 1, %.4g over the last 10 steps\n", first, last);
  assert_true (last < 0.5 * first);
  int n_rows = 0;
  const CamlEvalRow *rows = caml_window_get_rows (win, &n_rows);
  assert_true (n_rows >= 2);
  assert_true (rows[n_rows - 1].test_loss < rows[0].test_loss);

  /* The surface plot was rebuilt from the trainer's snapshot and redrawn. */
  assert_true (caml_plot_view_get_update_count (surface) > surface_updates);
  assert_true (iterate_until (drawn_since, &surface_wait, 5));
  assert_true (iterate_until (drawn_since, &loss_wait, 5));
  double rate = 0, sample_seconds = 0;
  caml_window_get_run_timing (win, &rate, &sample_seconds);
  print_message ("GUI run: %.0f steps/s, %.4f s sampling surfaces on the trainer thread\n",
                 rate, sample_seconds);

  /* Save, reopen, compare. */
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "xor.json", NULL);
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_save_to_path (win, path, &error));
  /* Saved, with its run ended, the window has nothing to lose, so Open
   * would open the file in its place (test-gui-teaching.c): read it into
   * a window beside it. */
  CamlWindow *reopened = caml_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (reopened));
  assert_true (caml_window_load_file (reopened, path, &error));
  assert_true (iterate_until (not_loading, reopened, 30));
  assert_true (caml_experiment_equal (caml_window_get_experiment (win),
                                      caml_window_get_experiment (reopened)));
  assert_true (enabled (reopened, "train"));

  /* A broken file changes nothing and shows the engine's message. */
  g_autofree char *bad = g_build_filename (dir, "bad.json", NULL);
  assert_true (g_file_set_contents (bad, "{ \"model\": [ { \"layer\": \"nope\" } ] }", -1,
                                    NULL));
  CamlExperiment *before = caml_experiment_copy (caml_window_get_experiment (reopened));
  gtk_window_present (GTK_WINDOW (reopened));
  g_autoptr (GFile) bad_file = g_file_new_for_path (bad);
  g_application_open (G_APPLICATION (app), &bad_file, 1, "");
  gboolean shown = FALSE;
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    {
      const char *msg = caml_window_get_error (CAML_WINDOW (l->data));
      if (msg != NULL && strstr (msg, "bad.json") != NULL)
        {
          print_message ("error shown: %s\n", msg);
          shown = TRUE;
        }
    }
  assert_true (shown);
  assert_true (caml_experiment_equal (before, caml_window_get_experiment (reopened)));
  caml_experiment_free (before);
  gtk_window_destroy (GTK_WINDOW (reopened));

  /* Screenshot of the trained window. */
  iterate_until (always_false, NULL, 0.5);
  const char *out_dir = g_getenv ("CAML_SCREENSHOT_DIR");
  g_autofree char *shot = g_build_filename (out_dir != NULL ? out_dir : ".",
                                            "gui-screenshot.png", NULL);
  save_screenshot (GTK_WIDGET (win), shot);
  print_message ("screenshot: %s\n", shot);
  GStatBuf st;
  assert_int_equal (g_stat (shot, &st), 0);
  assert_true (st.st_size > 10000);

  g_unlink (path);
  g_unlink (bad);
  g_rmdir (dir);
  gtk_window_destroy (GTK_WINDOW (win));
}

/* ------------------------------------------------------ CA-NN parts */

/* The labels of the loss plot's series, joined by "|". */
static char *
loss_labels (CamlWindow *win)
{
  const CamlPlotLine *line = caml_plot_view_get_line (caml_window_get_plot_view (win, "loss"));
  GString *out = g_string_new (NULL);
  for (size_t i = 0; line != NULL && i < caml_plot_line_get_n_series (line); i++)
    g_string_append_printf (out, "%s%s", i > 0 ? "|" : "", caml_plot_line_get_label (line, i));
  return g_string_free (out, FALSE);
}

/* A run that trained leaves its curves, dashed, when the model changes or
 * Train starts afresh: the next run is compared with it. Forget the
 * Previous Run and other data drop them. */
static void
test_previous_run (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  assert_false (enabled (win, "forget-previous"));
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  gtk_spin_button_set_value (steps, 60);
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  iterate_until (always_false, NULL, 0.2);
  g_autofree char *trained = loss_labels (win);
  assert_string_equal (trained, "train loss (smoothed)|test loss");
  long n_first = 0;
  caml_window_get_losses (win, &n_first);
  assert_int_equal (n_first, 60);

  /* The model changes: the new, untrained run shows the previous curves. */
  activate_editor (win, "select-layer", g_variant_new_int32 (0));
  activate_editor (win, "layer-option", g_variant_new ("(sd)", "units", 4.0));
  assert_true (iterate_until (not_loading, win, 10));
  assert_true (enabled (win, "forget-previous"));
  g_autofree char *before = loss_labels (win);
  assert_string_equal (before, "train loss (smoothed)|test loss|previous run: train loss"
                               "|previous run: test loss");
  const CamlPlotLine *line = caml_plot_view_get_line (caml_window_get_plot_view (win, "loss"));
  size_t n = 0;
  caml_plot_line_get_values (line, 2, &n);
  assert_true (n >= 2);
  caml_plot_line_get_values (line, 0, &n);
  assert_int_equal (n, 0);   /* nothing of the new run yet */

  /* Trained too: both, until the previous run is forgotten. */
  gtk_spin_button_set_value (steps, 30);
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  iterate_until (always_false, NULL, 0.2);
  caml_plot_line_get_values (caml_plot_view_get_line (caml_window_get_plot_view (win, "loss")),
                             0, &n);
  assert_true (n > 0);
  g_autofree char *both = loss_labels (win);
  assert_string_equal (both, before);
  activate (win, "forget-previous", NULL);
  g_autofree char *forgotten = loss_labels (win);
  assert_string_equal (forgotten, "train loss (smoothed)|test loss");
  assert_false (enabled (win, "forget-previous"));

  /* Train again: this run becomes the previous one; other data drops it. */
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  assert_true (enabled (win, "forget-previous"));
  activate (win, "data", g_variant_new_string ("xor"));
  assert_true (iterate_until (not_loading, win, 10));
  assert_false (enabled (win, "forget-previous"));
  gtk_window_destroy (GTK_WINDOW (win));
}

/* The Smoothing slider's trend is an average of log(loss) on the log axis
 * (a linear one sat far above a loss falling by decades), a linear one on
 * the linear axis, and the legend says the line is smoothed. */
static void
test_smoothing_follows_axis (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "steps_spin")), 60);
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  iterate_until (always_false, NULL, 0.2);
  long n_steps = 0;
  const float *losses = caml_window_get_losses (win, &n_steps);
  assert_int_equal (n_steps, 60);
  GtkRange *smoothing = GTK_RANGE (template_child (win, "smoothing_scale"));
  double factor = gtk_range_get_value (smoothing);
  assert_true (factor > 0);
  g_autofree double *log_ema = caml_plot_doubles_from_floats (losses, n_steps);
  g_autofree double *lin_ema = caml_plot_doubles_from_floats (losses, n_steps);
  caml_plot_ema_log (log_ema, log_ema, n_steps, factor);
  caml_plot_ema (lin_ema, lin_ema, n_steps, factor);
  CamlPlotView *view = caml_window_get_plot_view (win, "loss");

  gboolean axis[] = { TRUE, FALSE };
  for (int a = 0; a < 2; a++)
    {
      g_action_group_change_action_state (G_ACTION_GROUP (win), "log-scale",
                                          g_variant_new_boolean (axis[a]));
      const CamlPlotLine *line = caml_plot_view_get_line (view);
      assert_string_equal (caml_plot_line_get_label (line, 0), "train loss (smoothed)");
      size_t n = 0;
      const double *v = caml_plot_line_get_values (line, 0, &n);
      assert_int_equal (n, 60);
      const double *want = axis[a] ? log_ema : lin_ema;
      for (size_t i = 0; i < n; i++)
        assert_true (fabs (v[i] - want[i]) <= 1e-9 * fabs (want[i]));
    }
  /* the two differ on this run, so the check above tells them apart */
  assert_true (fabs (log_ema[n_steps - 1] - lin_ema[n_steps - 1])
               > 1e-6 * lin_ema[n_steps - 1]);

  /* no smoothing: the raw loss, called what it is */
  gtk_range_set_value (smoothing, 0.0);
  assert_string_equal (caml_plot_line_get_label (caml_plot_view_get_line (view), 0),
                       "train loss");
  gtk_range_set_value (smoothing, factor);
  g_action_group_change_action_state (G_ACTION_GROUP (win), "log-scale",
                                      g_variant_new_boolean (TRUE));
  gtk_window_destroy (GTK_WINDOW (win));
}

/* The parts page follows the selected CA-NN layer (falling back to the last
 * CA-NN), and after training both shares vary over the plane. */
static gboolean can_train (gpointer data);

static int want_parts_layer;

static gboolean
parts_on_wanted_layer (gpointer data)
{
  return caml_window_get_parts_layer (CAML_WINDOW (data)) == want_parts_layer;
}

static void
test_ca_nn_parts (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  CamlPlotView *parts = caml_window_get_plot_view (win, "parts");
  assert_non_null (parts);

  activate_editor (win, "select-layer", g_variant_new_int32 (1));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_parts_layer (win), 1);
  activate_editor (win, "select-layer", g_variant_new_int32 (0));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_parts_layer (win), 0);
  activate_editor (win, "select-layer", g_variant_new_int32 (2));   /* dense: the last CA-NN */
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_parts_layer (win), 1);

  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 120));
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  /* The page is prepared when it is shown. */
  guint before_page = caml_plot_view_get_update_count (parts);
  activate (win, "plots-page", g_variant_new_string ("parts"));
  assert_true (caml_plot_view_get_update_count (parts) > before_page);
  int n_maps = 0;
  caml_plot_view_get_heatmap (parts, 0, &n_maps);
  assert_int_equal (n_maps, 4);   /* χ, χ·f₁, (1 − χ)·f₀, the fit */
  double lo, hi;
  caml_plot_heatmap_get_range (caml_plot_view_get_heatmap (parts, 2, NULL), &lo, &hi);
  print_message ("the context-sensitive part (1 − χ)·f₀ spans %.4g … %.4g\n", lo, hi);
  assert_true (hi - lo > 1e-6);
  size_t n_segments = 0;
  caml_plot_heatmap_get_segments (caml_plot_view_get_heatmap (parts, 1, NULL), &n_segments);
  assert_true (n_segments > 0);   /* χ·f₁ has contours: it is not flat */

  /* Choosing the other CA-NN after training samples its parts on a worker
   * thread, from the trained weights. */
  guint updates = caml_plot_view_get_update_count (parts);
  activate_editor (win, "select-layer", g_variant_new_int32 (0));
  assert_true (caml_window_is_loading (win));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_parts_layer (win), 0);
  assert_true (caml_plot_view_get_update_count (parts) > updates);
  caml_plot_heatmap_get_range (caml_plot_view_get_heatmap (parts, 2, NULL), &lo, &hi);
  assert_true (hi - lo > 1e-6);
  activate_editor (win, "select-layer", g_variant_new_int32 (1));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_parts_layer (win), 1);

  /* While a run trains, or is paused, the model is locked but a layer can
   * still be chosen for the parts (the whole editor was insensitive). */
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  gtk_spin_button_set_value (steps, 1000000);
  assert_true (iterate_until (can_train, win, 30));
  activate (win, "train", NULL);
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_RUNNING);
  assert_false (editor_enabled (win, "add-layer"));
  assert_true (editor_enabled (win, "select-layer"));
  GtkWidget *editor = template_child (win, "model_editor");
  assert_true (gtk_widget_is_sensitive (editor));
  activate_editor (win, "select-layer", g_variant_new_int32 (0));
  want_parts_layer = 0;   /* sampled by the trainer's thread at its next report */
  assert_true (iterate_until (parts_on_wanted_layer, win, 30));
  activate (win, "pause", NULL);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_PAUSED);
  updates = caml_plot_view_get_update_count (parts);
  activate_editor (win, "select-layer", g_variant_new_int32 (1));
  want_parts_layer = 1;   /* sampled on a worker */
  assert_true (iterate_until (parts_on_wanted_layer, win, 30));
  assert_true (caml_plot_view_get_update_count (parts) > updates);
  activate (win, "stop", NULL);
  assert_true (iterate_until (run_ended, win, 30));
  /* the model did not change */
  assert_int_equal (caml_window_get_experiment (win)->n_layers, 3);

  const char *out_dir = g_getenv ("CAML_SCREENSHOT_DIR");
  g_autofree char *png = g_build_filename (out_dir != NULL ? out_dir : ".", "gui-parts.png",
                                           NULL);
  g_autoptr (GError) error = NULL;
  assert_true (caml_plot_view_write (parts, png, 4 * 400, 400, &error));

  /* A surface model exports its surface, χ maps and parts, nothing else. */
  assert_string_equal (gtk_button_get_label (GTK_BUTTON (template_child (win, "main_toggle"))),
                       "Surface and χ");
  assert_true (enabled (win, "export-surface"));
  assert_true (enabled (win, "export-chi"));
  assert_true (enabled (win, "export-parts"));
  assert_false (enabled (win, "export-words"));
  assert_false (enabled (win, "export-sigma"));
  assert_false (enabled (win, "export-accuracy"));   /* no accuracy for a surface */
  assert_false (enabled (win, "export-sigma-auc"));

  /* A model without a CA-NN has no parts. */
  activate (win, "reset", NULL);
  activate_editor (win, "clear-model", NULL);
  activate_editor (win, "add-layer", g_variant_new_string ("dense"));
  activate_editor (win, "layer-option", g_variant_new ("(sd)", "units", 1.0));
  assert_true (enabled (win, "train"));
  assert_int_equal (caml_window_get_parts_layer (win), -1);
  gtk_window_destroy (GTK_WINDOW (win));
}

/* ------------------------------------------------------------ words */

static gboolean
can_train (gpointer data)
{
  return !caml_window_is_loading (CAML_WINDOW (data))
         && g_action_group_get_action_enabled (G_ACTION_GROUP (data), "train");
}

static gboolean
is_enabled_save_run (gpointer data)
{
  return g_action_group_get_action_enabled (G_ACTION_GROUP (data), "save-run");
}


/* The shade tag (g0 … g20) of the character at offset in the words text,
 * -2 for the grey of a word the model did not read, or -1. */
static int
shade_at (GtkTextBuffer *buffer, int offset)
{
  GtkTextIter at;
  gtk_text_buffer_get_iter_at_offset (buffer, &at, offset);
  int shade = -1;
  GSList *tags = gtk_text_iter_get_tags (&at);
  for (GSList *t = tags; t != NULL; t = t->next)
    {
      g_autofree char *name = NULL;
      g_object_get (t->data, "name", &name, NULL);
      if (name != NULL && name[0] == 'g')
        shade = atoi (name + 1);
      else if (name != NULL && g_str_equal (name, "cut"))
        shade = -2;
    }
  g_slist_free (tags);
  return shade;
}

/* dir/train.tsv and dir/test.tsv (write_text_tsv) and an experiment on them,
 * dir/words.json, with `data_extra` (JSON members, may be "") in "data",
 * the given layers and steps; returns its path. */


/* A window on the experiment file at path, once its run can train. */
static CamlWindow *
open_window_on (const char *path)
{
  CamlWindow *win = caml_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (win));
  assert_true (iterate_until (is_mapped, win, 10));
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_load_file (win, path, &error));
  assert_true (iterate_until (can_train, win, 30));
  return win;
}

/* A text model with a per-word gate offers the words page: the most and
 * least context-free words as two bar plots, rebuilt while training. */
static void
test_words (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-words-XXXXXX", NULL);
  g_autofree char *path = write_words_experiment (
    dir, "", "{ \"layer\": \"ca_bsfe\", \"dim\": 5, \"gate_dim\": 5 }", 400);
  CamlWindow *win = open_window_on (path);
  g_autoptr (GError) error = NULL;

  /* Shown before training: the untrained gates. */
  CamlPlotView *words = caml_window_get_plot_view (win, "words");
  assert_non_null (words);
  guint before_page = caml_plot_view_get_update_count (words);
  activate (win, "plots-page", g_variant_new_string ("words"));
  g_autoptr (GVariant) page = g_action_group_get_action_state (G_ACTION_GROUP (win),
                                                                "plots-page");
  assert_string_equal (g_variant_get_string (page, NULL), "words");
  assert_true (caml_plot_view_get_update_count (words) > before_page);

  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 120));
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  /* A classifier exports its test accuracy plot (the menu had no item). */
  assert_true (enabled (win, "export-accuracy"));
  assert_false (enabled (win, "export-sigma-auc"));
  /* Rebuilt from the samples taken while training (and the final one). */
  assert_true (caml_plot_view_get_update_count (words) >= before_page + 2);
  int n_bars = 0;
  caml_plot_view_get_bars (words, 0, &n_bars);
  assert_int_equal (n_bars, 2);
  const CamlPlotBars *most_free = caml_plot_view_get_bars (words, 0, NULL);
  const CamlPlotBars *most_sensitive = caml_plot_view_get_bars (words, 1, NULL);
  /* 25 a list, or — fewer than 50 words seen 20 times — split between
   * them (caml_words_split), no word in both */
  int n_free = caml_plot_bars_get_n (most_free);
  int n_sensitive = caml_plot_bars_get_n (most_sensitive);
  assert_true (n_free > 0 && n_free <= 25 && (n_free == n_sensitive || n_free == n_sensitive + 1));
  for (int i = 0; i < n_free; i++)
    for (int j = 0; j < n_sensitive; j++)
      assert_string_not_equal (caml_plot_bars_get_row (most_free, i, NULL),
                               caml_plot_bars_get_row (most_sensitive, j, NULL));
  double top, bottom;
  const char *free_word = caml_plot_bars_get_row (most_free, 0, &top);
  const char *sensitive_word = caml_plot_bars_get_row (most_sensitive, 0, &bottom);
  print_message ("most context-free \"%s\" χ̃ = %.3f, least \"%s\" χ̃ = %.3f\n", free_word, top,
                 sensitive_word, bottom);
  assert_true (top >= 0 && top <= 1 && bottom >= 0 && bottom <= 1);
  assert_true (top > bottom);
  /* The label words carry the sentiment: they keep their own vectors. */
  gboolean label_words_sensitive = FALSE;
  for (int i = 0; i < 5; i++)
    {
      const char *w = caml_plot_bars_get_row (most_sensitive, i, NULL);
      label_words_sensitive |= g_str_equal (w, "good") || g_str_equal (w, "bad");
    }
  assert_true (label_words_sensitive);

  /* Beside the lists, the first test texts word by word: a header with the
   * label and the model's P(1), then each word shaded by its χ̃ — the label
   * word of the first text as dark as the list says it is. */
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (caml_window_get_words_text (win));
  GtkTextIter start, end;
  gtk_text_buffer_get_bounds (buffer, &start, &end);
  g_autofree char *shown = gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
  assert_non_null (strstr (shown, "test text 0 · label "));
  assert_non_null (strstr (shown, "test text 11 · label "));
  assert_null (strstr (shown, "test text 12"));
  assert_non_null (strstr (shown, " · model: P(1) = 0."));
  const char *first = strstr (shown, "the movie is bad");
  assert_non_null (first);
  int shade = shade_at (buffer, (int) g_utf8_pointer_to_offset (shown, first)
                                + (int) strlen ("the movie is "));
  double bad_chi = -1;   /* 45 words are seen 20 times: the two lists hold them all */
  for (int list = 0; list < 2; list++)
    for (int i = 0; i < (list ? n_sensitive : n_free); i++)
      {
        double v;
        if (g_str_equal (caml_plot_bars_get_row (list ? most_sensitive : most_free, i, &v),
                         "bad"))
          bad_chi = v;
      }
  print_message ("\"bad\" in the first text: shade %d (χ̃ %.3f)\n", shade, bad_chi);
  assert_true (bad_chi >= 0);
  assert_int_equal (shade, caml_words_shade ((float) bad_chi));

  const char *out_dir = g_getenv ("CAML_SCREENSHOT_DIR");
  g_autofree char *png = g_build_filename (out_dir != NULL ? out_dir : ".", "gui-words.png",
                                           NULL);
  assert_true (caml_plot_view_write (words, png, 1120, 600, &error));

  /* Export Words Page: the page caml train writes, drawn on a worker thread
   * from the run's weights. */
  g_autofree char *page_path = g_build_filename (dir, "words.html", NULL);
  caml_window_export_words_page (win, page_path);
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_null (caml_window_get_error (win));
  g_autofree char *html = NULL;
  assert_true (g_file_get_contents (page_path, &html, NULL, NULL));
  assert_non_null (strstr (html, "<title>χ̃ for words: words, seed 0</title>"));
  assert_non_null (strstr (html, "<h2>20 test samples</h2>"));
  g_autofree char *bad_row = g_strdup_printf (">bad</span></td><td class=\"n\">%.3f</td>",
                                              bad_chi);
  assert_non_null (strstr (html, bad_row));   /* the same χ̃ as the bars */
  g_unlink (page_path);

  /* Saved weights record the vocabulary their word rows belong to (its
   * size at byte 12, after the magic and the version). */
  g_autofree char *weights_path = g_build_filename (dir, "words.weights", NULL);
  caml_window_save_weights (win, weights_path);
  assert_true (iterate_until (no_jobs, NULL, 30));
  g_autofree char *bytes = NULL;
  gsize n_bytes = 0;
  assert_true (g_file_get_contents (weights_path, &bytes, &n_bytes, NULL));
  assert_true (n_bytes > 24);
  guint32 version = 0, vocab_words = 0;
  memcpy (&version, bytes + 8, 4);
  memcpy (&vocab_words, bytes + 12, 4);
  assert_int_equal (GUINT32_FROM_LE (version), 2);
  assert_true (GUINT32_FROM_LE (vocab_words) > 0);
  g_unlink (weights_path);

  /* A text model: its first page shows the test accuracy, and only the
   * plots it has can be exported. */
  GtkWidget *main_toggle = template_child (win, "main_toggle");
  assert_string_equal (gtk_button_get_label (GTK_BUTTON (main_toggle)), "Test Accuracy");
  assert_true (enabled (win, "export-loss"));
  assert_true (enabled (win, "export-words"));
  assert_false (enabled (win, "export-surface"));
  assert_false (enabled (win, "export-chi"));
  assert_false (enabled (win, "export-parts"));
  assert_false (enabled (win, "export-sigma"));

  /* Data the model does not fit: once they are there, the words page keeps
   * nothing of the run. */
  activate (win, "data", g_variant_new_string ("xor"));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_XOR);
  assert_false (caml_window_has_run (win));
  gtk_text_buffer_get_bounds (buffer, &start, &end);
  g_autofree char *after = gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
  assert_null (strstr (after, "test text 0"));
  assert_null (strstr (after, "P(1)"));
  assert_null (caml_plot_view_get_bars (words, 0, NULL));
  assert_false (enabled (win, "export-words"));
  gtk_window_destroy (GTK_WINDOW (win));
  remove_words_experiment (dir);
}


static char *
plots_page (CamlWindow *win)
{
  g_autoptr (GVariant) page = g_action_group_get_action_state (G_ACTION_GROUP (win),
                                                                "plots-page");
  return g_strdup (g_variant_get_string (page, NULL));
}

/* The page the user chose comes back with a run that offers it again: an
 * edit that leaves no words to show goes to the main page, its undo back to
 * the words (it stayed on the main page). */
static void
test_words_page_chosen (void **state)
{
  (void) state;
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-words-XXXXXX", NULL);
  g_autofree char *path = write_words_experiment (
    dir, "", "{ \"layer\": \"ca_bsfe\", \"dim\": 5, \"gate_dim\": 5 }", 400);
  CamlWindow *win = open_window_on (path);
  activate (win, "plots-page", g_variant_new_string ("words"));

  /* A last layer three wide: the model does not fit the data, no run. */
  activate_editor (win, "add-layer", g_variant_new_string ("dense"));
  activate_editor (win, "layer-option", g_variant_new ("(sd)", "units", 3.0));
  assert_true (iterate_until (not_loading, win, 10));
  assert_false (enabled (win, "train"));
  g_autofree char *left = plots_page (win);
  assert_string_equal (left, "main");

  activate_editor (win, "undo", NULL);
  activate_editor (win, "undo", NULL);
  assert_true (iterate_until (can_train, win, 30));
  g_autofree char *back = plots_page (win);
  assert_string_equal (back, "words");
  gtk_window_destroy (GTK_WINDOW (win));
  remove_words_experiment (dir);
}

/* A per-position gate (CA-ATT, whose χ_i depends on the text with the mean
 * of the words as its query) offers the words page too: every word of the
 * test texts shaded by its χ there — words past max_tokens grey — and the
 * lists by mean χ. */
static void
test_words_per_position (void **state)
{
  (void) state;
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-words-XXXXXX", NULL);
  g_autofree char *path = write_words_experiment (
    dir, ", \"max_tokens\": 5",
    "{ \"layer\": \"embedding\", \"dim\": 8 }, { \"layer\": \"ca_att\", \"query\": \"mean\" }",
    300);
  CamlWindow *win = open_window_on (path);
  activate (win, "plots-page", g_variant_new_string ("words"));
  g_autoptr (GVariant) page = g_action_group_get_action_state (G_ACTION_GROUP (win),
                                                                "plots-page");
  assert_string_equal (g_variant_get_string (page, NULL), "words");
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 120));
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);

  CamlPlotView *words = caml_window_get_plot_view (win, "words");
  int n_bars = 0;
  caml_plot_view_get_bars (words, 0, &n_bars);
  assert_int_equal (n_bars, 2);
  double top, bottom;
  caml_plot_bars_get_row (caml_plot_view_get_bars (words, 0, NULL), 0, &top);
  caml_plot_bars_get_row (caml_plot_view_get_bars (words, 1, NULL), 0, &bottom);
  assert_true (top >= bottom && top <= 1 && bottom >= 0);

  /* The first five words of the first text have a shade, the last two,
   * which the model did not read, are grey. */
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (caml_window_get_words_text (win));
  GtkTextIter start, end;
  gtk_text_buffer_get_bounds (buffer, &start, &end);
  g_autofree char *shown = gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
  const char *first = strstr (shown, "the movie is ");
  assert_non_null (first);
  int offset = (int) g_utf8_pointer_to_offset (shown, first);
  for (int k = 0; k < 7; k++)   /* the movie is good|bad wA | wB wC */
    {
      if (k < 5)
        assert_true (shade_at (buffer, offset) >= 0);
      else
        assert_int_equal (shade_at (buffer, offset), -2);
      const char *space = strchr (shown + (first - shown), ' ');
      assert_non_null (space);
      offset += (int) g_utf8_pointer_to_offset (first, space) + 1;
      first = space + 1;
    }
  gtk_window_destroy (GTK_WINDOW (win));
  remove_words_experiment (dir);
}

/* Saves the window's weights and tells whether they are the bytes of file. */
static gboolean
window_weights_equal (CamlWindow *win, const char *dir, const char *file)
{
  g_autofree char *out = g_build_filename (dir, "out.weights", NULL);
  caml_window_save_weights (win, out);   /* written on a worker thread */
  assert_true (iterate_until (no_jobs, NULL, 30));
  g_autofree char *a = NULL, *b = NULL;
  gsize na = 0, nb = 0;
  assert_true (g_file_get_contents (file, &a, &na, NULL));
  assert_true (g_file_get_contents (out, &b, &nb, NULL));
  g_unlink (out);
  return na == nb && memcmp (a, b, na) == 0;
}


/* ------------------------------------------------------------ saved runs */


static gboolean
notice_has (CamlWindow *win, const char *text)
{
  const char *notice = caml_window_get_last_notice (win);
  return notice != NULL && strstr (notice, text) != NULL;
}

/* Save Run writes what `caml train --resume` reads; Open Run (a folder, as
 * the CLI writes it too) stands the run at the saved step with its curves,
 * and Train goes on exactly: the weights at the end are those of one run
 * of the total, through minibatches, dropout, Adam and em_steps. A run at
 * its last step says to raise Steps; raised, it goes on. A state that no
 * longer fits (another seed) is said, and the run starts at step 0 from the
 * weights; a folder without experiment.json changes nothing; Save Run into a
 * folder with other files is refused. Open Recent lists the run's folder,
 * and opens it as a run again. */
static gboolean
surface_at_40 (gpointer data)
{
  CamlRun *run = caml_window_peek_run (CAML_WINDOW (data));
  return run != NULL && caml_run_get_surface_step (run) == 40;
}

static void
test_open_run (void **state)
{
  (void) state;
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-run-XXXXXX", NULL);
  g_autofree char *exp_path = g_build_filename (dir, "exp.json", NULL);
  g_autofree char *saved = g_build_filename (dir, "saved", NULL);
  g_autofree char *reference = g_build_filename (dir, "reference.weights", NULL);
  g_autofree char *busy = g_build_filename (dir, "busy", NULL);
  g_autofree char *busy_file = g_build_filename (busy, "summary.json", NULL);
  g_autoptr (GError) error = NULL;
  static const char json[] =
    "{ \"name\": \"resumable\", \"seed\": 2,"
    "  \"data\": { \"builtin\": \"surface\", \"grid\": 21, \"train_fraction\": 0.3 },"
    "  \"model\": [ { \"layer\": \"dense\", \"units\": 6, \"activation\": \"tanh\" },"
    "               { \"layer\": \"dropout\", \"rate\": 0.2 },"
    "               { \"layer\": \"ca_nn\", \"units\": 3, \"activation\": \"tanh\" },"
    "               { \"layer\": \"dense\", \"units\": 1 } ],"
    "  \"optimizer\": { \"type\": \"adam\", \"lr\": 0.02, \"em_steps\": 5 },"
    "  \"training\": { \"steps\": 40, \"batch_size\": 8, \"eval_every\": 10 } }";
  assert_true (g_file_set_contents (exp_path, json, -1, NULL));

  /* Trained to 40 and saved; then on to 100 in the same window (exactly
   * one run of 100: the reference). */
  CamlWindow *win = open_window_on (exp_path);
  assert_false (enabled (win, "save-run"));   /* nothing trained yet */
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  assert_true (iterate_until (is_enabled_save_run, win, 10));
  caml_window_save_run (win, saved);
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_null (caml_window_get_error (win));
  assert_true (notice_has (win, "Saved the run"));
  for (int i = 0; caml_run_resumable_files[i] != NULL; i++)
    {
      g_autofree char *path = g_build_filename (saved, caml_run_resumable_files[i], NULL);
      assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
    }
  /* … not into a folder that holds other files */
  g_mkdir (busy, 0700);
  assert_true (g_file_set_contents (busy_file, "{}", -1, NULL));
  caml_window_save_run (win, busy);
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_non_null (caml_window_get_error (win));
  assert_non_null (strstr (caml_window_get_error (win), "summary.json"));
  caml_window_show_error (win, NULL);

  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  gtk_spin_button_set_value (steps, 100);     /* goes on from step 40 */
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  caml_window_save_weights (win, reference);
  assert_true (iterate_until (no_jobs, NULL, 30));
  gtk_window_destroy (GTK_WINDOW (win));

  /* Opened: at step 40 with its 40 losses, not started. */
  win = caml_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (win));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (caml_window_open_run (win, saved, &error));
  assert_true (iterate_until (can_train, win, 30));
  assert_null (caml_window_get_error (win));
  assert_true (notice_has (win, "at step 40"));
  assert_true (iterate_until (surface_at_40, win, 10));   /* the surface's title: step 40 */
  {
    /* Open Recent lists the run as its folder */
    g_auto (GStrv) recent = g_settings_get_strv (caml_application_get_settings (app),
                                                 "recent-files");
    g_autofree char *canonical = g_canonicalize_filename (saved, NULL);
    assert_non_null (recent[0]);
    assert_string_equal (recent[0], canonical);
  }
  CamlRun *run = caml_window_peek_run (win);
  assert_non_null (run);
  CamlProgress p;
  caml_run_get_progress (run, &p);
  assert_int_equal (p.step, 40);
  assert_int_equal (p.state, CAML_TRAINER_IDLE);
  long n_losses = 0;
  g_free (caml_run_copy_losses (run, &n_losses));
  assert_int_equal (n_losses, 40);
  /* at its last step: Train says to raise Steps */
  activate (win, "train", NULL);
  assert_true (notice_has (win, "raise Steps"));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_IDLE);
  /* raised: the run is built again on the same weights and state */
  steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  gtk_spin_button_set_value (steps, 100);
  assert_true (iterate_until (can_train, win, 30));
  caml_run_get_progress (caml_window_peek_run (win), &p);
  assert_int_equal (p.step, 40);
  assert_false (enabled (win, "forget-previous"));   /* the same curves: not a previous run */
  /* … and its weights are on disk: not set aside (a banner offered to save them) */
  assert_false (enabled (win, "save-set-aside"));
  assert_null (caml_window_get_error (win));
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  assert_true (window_weights_equal (win, dir, reference));

  /* Another seed in the saved experiment: its state no longer fits. */
  {
    g_autofree char *path = g_build_filename (saved, "experiment.json", NULL);
    g_autofree char *text = NULL;
    assert_true (g_file_get_contents (path, &text, NULL, NULL));
    char *seed = strstr (text, "\"seed\": 2");
    assert_non_null (seed);
    seed[strlen ("\"seed\": ")] = '9';
    assert_true (g_file_set_contents (path, text, -1, NULL));
  }
  assert_true (caml_window_open_run (win, saved, &error));
  assert_true (iterate_until (can_train, win, 30));
  assert_non_null (caml_window_get_error (win));
  assert_non_null (strstr (caml_window_get_error (win), "state was not loaded"));
  assert_non_null (strstr (caml_window_get_error (win), "trainer.state"));
  caml_run_get_progress (caml_window_peek_run (win), &p);
  assert_int_equal (p.step, 0);

  /* Not a run: nothing changes. */
  const CamlExperiment *before = caml_window_get_experiment (win);
  assert_false (caml_window_open_run (win, busy, &error));
  assert_non_null (strstr (error->message, "no experiment.json"));
  g_clear_error (&error);
  assert_true (caml_window_get_experiment (win) == before);

  /* A folder on the command line (or dropped on the icon) opens as a run. */
  gtk_window_destroy (GTK_WINDOW (win));
  g_autoptr (GFile) folder = g_file_new_for_path (saved);
  g_application_open (G_APPLICATION (app), &folder, 1, "");
  win = CAML_WINDOW (gtk_application_get_active_window (GTK_APPLICATION (app)));
  assert_non_null (win);
  assert_true (iterate_until (can_train, win, 30));
  assert_string_equal (caml_window_get_experiment (win)->name, "resumable");
  gtk_window_destroy (GTK_WINDOW (win));

  /* … and so does the folder from Open Recent: its weights and state load
   * (the state, of seed 2, no longer fits the experiment's seed 9). */
  g_action_group_activate_action (G_ACTION_GROUP (app), "open-recent",
                                  g_variant_new_string (saved));
  win = CAML_WINDOW (gtk_application_get_active_window (GTK_APPLICATION (app)));
  assert_non_null (win);
  assert_true (iterate_until (can_train, win, 30));
  assert_string_equal (caml_window_get_experiment (win)->name, "resumable");
  assert_non_null (caml_window_get_error (win));
  assert_non_null (strstr (caml_window_get_error (win), "state was not loaded"));
  gtk_window_destroy (GTK_WINDOW (win));

  remove_tree (dir);
}

/* ------------------------------------------------- σ-maps and baseline */



static void
test_sigma_maps (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-idx-XXXXXX", NULL);
  const char *names[] = { "train-images", "train-labels", "test-images", "test-labels" };
  char *paths[4];
  for (int i = 0; i < 4; i++)
    paths[i] = g_build_filename (dir, names[i], NULL);
  write_idx_pair (paths[0], paths[1], 200, 1);
  write_idx_pair (paths[2], paths[3], 120, 2);

  g_autofree char *json = g_strdup_printf (
    "{ \"name\": \"idx-ca-cnn\", \"seed\": 0,"
    "  \"data\": { \"idx\": { \"train_images\": \"%s\", \"train_labels\": \"%s\","
    "                        \"test_images\": \"%s\", \"test_labels\": \"%s\" } },"
    "  \"model\": [ { \"layer\": \"ca_cnn\", \"kernel\": 3, \"depth\": 2 },"
    "               { \"layer\": \"flatten\" },"
    "               { \"layer\": \"dense\", \"units\": 10, \"activation\": \"identity\" } ],"
    "  \"loss\": \"softmax_cross_entropy\","
    "  \"optimizer\": { \"type\": \"adagrad\", \"lr\": 0.01 },"
    "  \"training\": { \"steps\": 30, \"batch_size\": 20, \"eval_every\": 10 } }",
    paths[0], paths[1], paths[2], paths[3]);
  g_autofree char *exp_path = g_build_filename (dir, "idx.json", NULL);
  assert_true (g_file_set_contents (exp_path, json, -1, NULL));

  CamlWindow *win = caml_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (win));
  assert_true (iterate_until (is_mapped, win, 10));
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_load_file (win, exp_path, &error));
  /* Files load on a worker thread: the window says so, and Train (not
   * pressed here) would wait for them. */
  assert_true (caml_window_is_loading (win));
  assert_non_null (strstr (caml_window_get_data_text (win), "Loading"));
  assert_true (iterate_until (not_loading, win, 60));
  assert_null (caml_window_get_error (win));
  assert_true (enabled (win, "train"));

  /* The untrained maps are there before training; image models show no
   * surface. */
  assert_false (gtk_widget_is_visible (GTK_WIDGET (caml_window_get_plot_view (win, "surface"))));
  CamlPlotView *sigma = caml_window_get_plot_view (win, "sigma");
  assert_true (gtk_widget_is_visible (GTK_WIDGET (sigma)));
  assert_true (caml_window_get_sigma_snapshots (win, NULL) >= 1);
  assert_true (caml_plot_view_has_plot (sigma));

  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 120));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  iterate_until (always_false, NULL, 0.3);   /* the last report's update */
  double upper = -1;
  int n = caml_window_get_sigma_snapshots (win, &upper);
  print_message ("σ-maps: %d snapshots, scrubber up to %g\n", n, upper);
  assert_true (n >= 2);                       /* untrained + the final one at least */
  assert_true (upper == n - 1);
  assert_true (caml_plot_view_has_plot (sigma));
  assert_true (caml_plot_view_has_plot (caml_window_get_plot_view (win, "sigma-auc")));
  /* The accuracy and AUC plots span the run's steps as the loss plot
   * does, not just the evaluations (10…30 here; one at step 1000 spanned
   * 900…1100). The AUC starts at the untrained maps, step 0, and so do
   * the others (the AUC's 0…2 stood beside a loss plot's 1…10). */
  const CamlPlotAxis *loss_x =
    caml_plot_line_get_x_axis (caml_plot_view_get_line (caml_window_get_plot_view (win, "loss")));
  const CamlPlotAxis *acc_x = caml_plot_line_get_x_axis (
    caml_plot_view_get_line (caml_window_get_plot_view (win, "accuracy")));
  const CamlPlotAxis *auc_x = caml_plot_line_get_x_axis (
    caml_plot_view_get_line (caml_window_get_plot_view (win, "sigma-auc")));
  print_message ("x axes: loss %g…%g, accuracy %g…%g, AUC %g…%g\n", loss_x->lo, loss_x->hi,
                 acc_x->lo, acc_x->hi, auc_x->lo, auc_x->hi);
  assert_true (acc_x->lo == loss_x->lo && acc_x->hi == loss_x->hi);
  assert_true (auc_x->lo == loss_x->lo && auc_x->hi == loss_x->hi);
  assert_true (loss_x->lo == 0.0);
  /* Scrubbing back shows the first snapshot again, and its step is
   * marked on every plot by step; at the right end, none is. */
  guint updates = caml_plot_view_get_update_count (sigma);
  gtk_range_set_value (caml_window_get_sigma_scrubber (win), 0);
  assert_true (caml_plot_view_get_update_count (sigma) > updates);
  assert_int_equal (caml_session_get_marked_step (caml_window_get_session (win)), 0);
  const char *const by_step[] = { "loss", "accuracy", "sigma-auc" };
  for (size_t v = 0; v < G_N_ELEMENTS (by_step); v++)
    {
      size_t n_marks = 0;
      const CamlPlotEvent *marks = caml_plot_line_get_events (
        caml_plot_view_get_line (caml_window_get_plot_view (win, by_step[v])), &n_marks);
      gboolean marked = FALSE;
      for (size_t e = 0; e < n_marks; e++)
        marked |= marks[e].x == 0.0 && g_strcmp0 (marks[e].text, "shown") == 0;
      print_message ("%s: %zu markers\n", by_step[v], n_marks);
      assert_true (marked);
    }
  updates = caml_plot_view_get_update_count (sigma);
  gtk_range_set_value (caml_window_get_sigma_scrubber (win), n - 1);
  assert_true (caml_plot_view_get_update_count (sigma) > updates);
  assert_int_equal (caml_session_get_marked_step (caml_window_get_session (win)), -1);
  /* Stretch redraws the grid on the maps' own range, which the title
   * gives, and is remembered; off again, the title is the plain one. */
  const char *title = caml_plot_tiles_get_title (caml_plot_view_get_tiles (sigma));
  assert_null (strstr (title, "stretched"));
  /* … whose maps: the layer's index and type, in the CLI's grid's title */
  assert_non_null (strstr (title, ", step "));
  assert_non_null (strstr (title, ": σ-maps of layer 0 (ca_cnn) ("));
  updates = caml_plot_view_get_update_count (sigma);
  g_action_group_change_action_state (G_ACTION_GROUP (win), "sigma-stretch",
                                      g_variant_new_boolean (TRUE));
  assert_true (caml_plot_view_get_update_count (sigma) > updates);
  title = caml_plot_tiles_get_title (caml_plot_view_get_tiles (sigma));
  print_message ("stretched: %s\n", title);
  assert_non_null (strstr (title, "stretched"));
  assert_non_null (strstr (title, "χ black "));
  GSettings *settings = caml_application_get_settings (app);
  assert_true (g_settings_get_boolean (settings, "sigma-stretch"));
  g_action_group_change_action_state (G_ACTION_GROUP (win), "sigma-stretch",
                                      g_variant_new_boolean (FALSE));
  assert_false (g_settings_get_boolean (settings, "sigma-stretch"));
  title = caml_plot_tiles_get_title (caml_plot_view_get_tiles (sigma));
  assert_null (strstr (title, "stretched"));
  g_autofree char *png = g_build_filename (dir, "sigma.png", NULL);
  assert_true (caml_plot_view_write (sigma, png, 800, 300, &error));

  g_unlink (png);
  g_unlink (exp_path);
  for (int i = 0; i < 4; i++)
    {
      g_unlink (paths[i]);
      g_free (paths[i]);
    }
  g_rmdir (dir);
  gtk_window_destroy (GTK_WINDOW (win));
}


/* ------------------------------------------------ one figure code */

/* The window's copy of the run is at its last step: the losses, the
 * surface and the σ-maps the cards show. */
static long caught_up_steps;

static gboolean
caught_up (gpointer data)
{
  CamlWindow *win = CAML_WINDOW (data);
  CamlRun *run = caml_window_peek_run (win);
  long n = 0;
  caml_window_get_losses (win, &n);
  if (run == NULL || n != caught_up_steps)
    return FALSE;
  if (caml_run_has_surface (run) && caml_run_get_surface_step (run) != caught_up_steps)
    return FALSE;
  if (caml_run_has_sigma (run))
    {
      const CamlPlotTiles *tiles =
        caml_plot_view_get_tiles (caml_window_get_plot_view (win, "sigma"));
      g_autofree char *at = g_strdup_printf (", step %ld:", caught_up_steps);
      return tiles != NULL && strstr (caml_plot_tiles_get_title (tiles), at) != NULL;
    }
  return TRUE;
}

/* Runs `caml train` with args (NULL-terminated) and the window's thread
 * count into out. */
static void
cli_train (const char *caml, const char *out, const char *const *args)
{
  g_autofree char *threads = g_strdup_printf ("%d", caml_get_threads ());
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) caml);
  g_ptr_array_add (argv, (gpointer) "train");
  for (int i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  const char *tail[] = { "--threads", threads, "--out", out, "-q", NULL };
  for (int i = 0; tail[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) tail[i]);
  g_ptr_array_add (argv, NULL);
  g_autofree char *err = NULL;
  int status = 0;
  g_autoptr (GError) error = NULL;
  assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL,
                             NULL, NULL, NULL, &err, &status, &error));
  if (!g_spawn_check_wait_status (status, NULL))
    fail_msg ("caml train failed: %s", err);
  g_ptr_array_unref (argv);
}

/* Export Plot of `what` is, byte for byte, the PNG caml train wrote. */
static void
assert_export_is (CamlWindow *win, const char *what, const char *dir, const char *cli_png)
{
  g_autofree char *name = g_strdup_printf ("export-%s.png", what);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_export_plot (win, what, path, &error));
  g_autofree char *exported = NULL, *written = NULL;
  gsize n_exported = 0, n_written = 0;
  assert_true (g_file_get_contents (path, &exported, &n_exported, NULL));
  assert_true (g_file_get_contents (cli_png, &written, &n_written, NULL));
  print_message ("%s: exported %" G_GSIZE_FORMAT " bytes, caml train %" G_GSIZE_FORMAT "\n",
                 what, n_exported, n_written);
  if (n_exported != n_written || memcmp (exported, written, n_written) != 0)
    fail_msg ("the exported %s (%s) is not caml train's %s", what, path, cli_png);
  g_unlink (path);
}

/* One figure code: the workbench's exports of a trained run's loss,
 * surface and σ-maps are the files caml train writes for the same run. */
static void
test_export_matches_cli (void **state)
{
  const char *caml = g_getenv ("CAML_CLI");
  if (caml == NULL)
    {
      print_message ("CAML_CLI is not set: nothing to compare with\n");
      skip ();
    }
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-figures-XXXXXX", NULL);
  g_autofree char *cli_dir = g_build_filename (dir, "surface", NULL);

  /* A surface: the loss and the fitted surface beside its ground truth. */
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "steps_spin")), 300);
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  caught_up_steps = 300;
  assert_true (iterate_until (caught_up, win, 10));
  const char *surface_args[] = { "--preset", "surface-ca-nn-1", "--steps", "300", NULL };
  cli_train (caml, cli_dir, surface_args);
  g_autofree char *loss_png = g_build_filename (cli_dir, "loss.png", NULL);
  g_autofree char *surface_png = g_build_filename (cli_dir, "surface.png", NULL);
  assert_export_is (win, "loss", dir, loss_png);
  assert_export_is (win, "surface", dir, surface_png);
  gtk_window_destroy (GTK_WINDOW (win));

  /* An image model: its loss with the accuracy, and the σ-maps at the end. */
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
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 120));
  caught_up_steps = 30;
  assert_true (iterate_until (caught_up, win, 10));
  g_autofree char *bars_dir = g_build_filename (dir, "bars", NULL);
  const char *bars_args[] = { exp_path, "--sigma-steps", "last", NULL };
  cli_train (caml, bars_dir, bars_args);
  g_autofree char *bars_loss = g_build_filename (bars_dir, "loss.png", NULL);
  g_autofree char *sigma_png = g_build_filename (bars_dir, "sigma-step30.png", NULL);
  assert_export_is (win, "loss", dir, bars_loss);
  assert_export_is (win, "sigma", dir, sigma_png);
  gtk_window_destroy (GTK_WINDOW (win));

  for (int i = 0; i < 4; i++)
    g_free (paths[i]);
  remove_tree (dir);
}


/* The loss plot's read-out gives the step's train loss and the evaluation
 * nearest it — before the first evaluation too. */
static void
test_loss_hover (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "steps_spin")), 100);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "eval_spin")), 50);
  assert_true (iterate_until (not_loading, win, 10));
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  iterate_until (always_false, NULL, 0.3);   /* the last report's update */
  CamlPlotView *loss = caml_window_get_plot_view (win, "loss");
  long n = 0;
  const float *losses = caml_window_get_losses (win, &n);
  assert_int_equal (n, 100);
  struct { double x; long step; long eval; } at[] = {
    { 10.2, 10, 50 }, { 74.0, 74, 50 }, { 75.0, 75, 50 }, { 76.0, 76, 100 }, { 100.0, 100, 100 },
  };
  for (size_t k = 0; k < G_N_ELEMENTS (at); k++)
    {
      g_autofree char *text = caml_plot_view_get_hover_text_at (loss, at[k].x, 0.5);
      assert_non_null (text);
      g_autofree char *head = g_strdup_printf ("step %ld  train %.4g", at[k].step,
                                               (double) losses[at[k].step - 1]);
      g_autofree char *tail = g_strdup_printf (" at step %ld", at[k].eval);
      if (!g_str_has_prefix (text, head) || !g_str_has_suffix (text, tail))
        fail_msg ("at %g: \"%s\" (expected \"%s…%s\")", at[k].x, text, head, tail);
    }
  gtk_window_destroy (GTK_WINDOW (win));
}

/* Modified means other than the file or preset as opened or last saved:
 * an edit undone, or a field set back, leaves the experiment unmodified
 * (and its autosave goes); a save makes the saved state the clean one. */
static void
test_undo_to_clean (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-clean-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "exp.json", NULL);
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  int preset_steps = caml_window_get_experiment (win)->steps;
  assert_false (caml_window_is_modified (win));

  activate_editor (win, "add-layer", g_variant_new_string ("dense"));
  assert_true (caml_window_is_modified (win));
  assert_true (iterate_until (autosave_written, win, 5));
  g_autofree char *autosave = caml_window_get_autosave_path (win);
  activate_editor (win, "undo", NULL);
  assert_false (caml_window_is_modified (win));
  assert_false (g_file_test (autosave, G_FILE_TEST_EXISTS));
  activate_editor (win, "redo", NULL);
  assert_true (caml_window_is_modified (win));
  activate_editor (win, "undo", NULL);
  assert_false (caml_window_is_modified (win));

  gtk_spin_button_set_value (steps, preset_steps + 7);
  assert_true (caml_window_is_modified (win));
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_save_to_path (win, path, &error));
  assert_false (caml_window_is_modified (win));
  gtk_spin_button_set_value (steps, preset_steps);   /* the preset's, not the file's */
  assert_true (caml_window_is_modified (win));
  gtk_spin_button_set_value (steps, preset_steps + 7);
  assert_false (caml_window_is_modified (win));

  g_unlink (path);
  g_rmdir (dir);
  gtk_window_destroy (GTK_WINDOW (win));
}

/* Train with the focus in a field that training locks: the focus is not
 * left in it. (The GTK warning this was about — "GtkText - did not receive
 * a focus-out event", from the cursor blink of a field clicked into —
 * needs real pointer and keyboard input: under Xvfb with xdotool, a click
 * into Steps then F5 gave it before the fix and not after. This checks
 * only where the focus ends.) */
static void
test_focus_leaves_locked_field (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  GtkWidget *steps = GTK_WIDGET (template_child (win, "steps_spin"));
  gtk_widget_grab_focus (steps);
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (win));
  assert_true (focus == steps || gtk_widget_is_ancestor (focus, steps));
  activate (win, "train", NULL);
  assert_false (gtk_widget_get_sensitive (steps));
  focus = gtk_root_get_focus (GTK_ROOT (win));
  assert_false (focus != NULL && (focus == steps || gtk_widget_is_ancestor (focus, steps)));
  assert_true (iterate_until (run_ended, win, 60));
  gtk_window_destroy (GTK_WINDOW (win));
}

/* A plot whose scene is replaced faster than the worker draws it still
 * shows new images: each finished image is taken even though its scene has
 * moved on (they were all thrown away, so a fast run's loss plot stayed at
 * step 700 while training reached step 400,000). Counted in work, not
 * time: every scene the worker starts on is replaced before it finishes,
 * and every image it finishes must be taken. */
typedef struct {
  CamlPlotView *view;
  guint count;
} ViewCount;

static gboolean
render_started (gpointer data)
{
  ViewCount *c = data;
  return caml_plot_view_get_render_count (c->view) > c->count;
}

static gboolean
frame_drawn (gpointer data)
{
  return caml_plot_view_get_draw_count (CAML_PLOT_VIEW (data)) > 0;
}

static void
set_loss_scene (CamlPlotView *view, int scene)
{
  enum { N = 20000 };
  g_autofree double *x = g_new (double, N);
  g_autofree double *y = g_new (double, N);
  for (int i = 0; i < N; i++)
    {
      x[i] = i + 1;
      y[i] = 1.0 / (i + 1) + 0.01 * sin (i * 0.01 + scene);
    }
  CamlPlotSeries series[] = { { x, y, N, "loss", 0, FALSE } };
  CamlPlotLineOptions opts = { .title = "loss", .x_label = "step", .y_label = "loss",
                               .log_y = TRUE };
  caml_plot_view_set_line (view, caml_plot_line_new (&opts, series, 1, NULL, 0));
}

static void
test_plot_view_fast_scenes (void **state)
{
  GtkWidget *win = gtk_window_new ();
  CamlPlotView *view = CAML_PLOT_VIEW (caml_plot_view_new ());
  gtk_widget_set_size_request (GTK_WIDGET (view), 700, 400);
  gtk_window_set_child (GTK_WINDOW (win), GTK_WIDGET (view));
  gtk_window_present (GTK_WINDOW (win));
  assert_true (iterate_until (is_mapped, view, 10));

  enum { ROUNDS = 4, PER_RENDER = 3 };
  int scenes = 0;
  set_loss_scene (view, scenes++);
  /* The view's first image is drawn on the main thread. */
  assert_true (iterate_until (frame_drawn, view, 60));
  guint images_before = caml_plot_view_get_image_count (view);
  guint renders_before = caml_plot_view_get_render_count (view);
  set_loss_scene (view, scenes++);
  /* Each scene the worker starts on is replaced, more than once, before it
   * can finish (a render started and its image taken are two dispatches of
   * the main loop, and nothing runs between the wait and the new scenes).
   * The worker draws one image at a time, so when the (ROUNDS + 1)th has
   * started, ROUNDS have finished, all of scenes replaced meanwhile. */
  for (int round = 0; round <= ROUNDS; round++)
    {
      ViewCount started = { view, caml_plot_view_get_render_count (view) };
      assert_true (iterate_until (render_started, &started, 60));
      for (int k = 0; k < PER_RENDER; k++)
        set_loss_scene (view, scenes++);
    }
  guint renders = caml_plot_view_get_render_count (view) - renders_before;
  guint images = caml_plot_view_get_image_count (view) - images_before;
  print_message ("%d scenes set, %u images asked of the worker, %u taken\n",
                 scenes, renders, images);
  assert_int_equal (renders, ROUNDS + 1);
  /* Every finished image was taken, though its scene had moved on. */
  assert_int_equal (images, ROUNDS);
  gtk_window_destroy (GTK_WINDOW (win));
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

/* A window of 1024×700 shows every plot and control without cutting any
 * off: the window's content asks for no more (the header bar included), and
 * at that size neither the side bar nor the plots need to scroll — which
 * is what they do in a smaller window. For a surface, an image and a text
 * model (its words page), those whose data is there. */
static gboolean
scrolls (GtkWidget *scroller)
{
  GtkScrolledWindow *sw = GTK_SCROLLED_WINDOW (scroller);
  GtkAdjustment *adj[] = { gtk_scrolled_window_get_hadjustment (sw),
                           gtk_scrolled_window_get_vadjustment (sw) };
  for (int i = 0; i < 2; i++)
    if (gtk_adjustment_get_upper (adj[i]) - gtk_adjustment_get_lower (adj[i])
        > gtk_adjustment_get_page_size (adj[i]) + 0.5)
      {
        print_message ("%s scrolls: %g of %g\n", i == 0 ? "across" : "down",
                       gtk_adjustment_get_page_size (adj[i]),
                       gtk_adjustment_get_upper (adj[i]) - gtk_adjustment_get_lower (adj[i]));
        return TRUE;
      }
  return FALSE;
}

static void
test_small_window (void **state)
{
  static const char *const presets[] = { "surface-ca-nn-2", "mnist-ca-cnn", "sst-ca-bsfe" };

  for (guint p = 0; p < G_N_ELEMENTS (presets); p++)
    {
      g_autoptr (GError) error = NULL;
      CamlExperiment *exp = caml_presets_load (presets[p], &error);
      assert_non_null (exp);
      char *missing = caml_data_source_missing (exp->data.kind);
      if (exp->data.kind == CAML_DATA_SST)
        {
          g_autofree char *sst = g_build_filename (caml_shared_datasets_dir (), "sst",
                                                   "sentiment-train", NULL);
          if (!g_file_test (sst, G_FILE_TEST_EXISTS))
            missing = g_strdup_printf ("%s is not there (../shared/datasets)", sst);
        }
      if (missing != NULL)
        {
          print_message ("%s skipped: %s\n", presets[p], missing);
          g_free (missing);
          caml_experiment_free (exp);
          continue;
        }
      CamlWindow *win = caml_window_new (GTK_APPLICATION (app));
      gtk_window_set_default_size (GTK_WINDOW (win), 1024, 700);
      caml_window_set_experiment (win, exp, NULL, presets[p]);
      gtk_window_present (GTK_WINDOW (win));
      assert_true (iterate_until (is_mapped, win, 10));
      assert_true (iterate_until (not_loading, win, 120));
      assert_null (caml_window_get_error (win));
      if (exp->data.kind == CAML_DATA_SST)
        activate (win, "plots-page", g_variant_new_string ("words"));

      GtkWidget *child = gtk_window_get_child (GTK_WINDOW (win));
      GtkWidget *bar = gtk_window_get_titlebar (GTK_WINDOW (win));
      int min_width, min_height, bar_height;
      gtk_widget_measure (child, GTK_ORIENTATION_HORIZONTAL, -1, &min_width, NULL, NULL, NULL);
      gtk_widget_measure (child, GTK_ORIENTATION_VERTICAL, -1, &min_height, NULL, NULL, NULL);
      gtk_widget_measure (bar, GTK_ORIENTATION_VERTICAL, -1, &bar_height, NULL, NULL, NULL);
      print_message ("%s: the window's content needs at least %d × %d (+ %d for the header "
                     "bar)\n", presets[p], min_width, min_height, bar_height);
      assert_true (min_width <= 1024);
      assert_true (min_height + bar_height <= 700);

      /* At 1024×700 (the frame included) nothing scrolls yet. */
      iterate_until (always_false, NULL, 0.5);
      assert_true (gtk_widget_get_width (GTK_WIDGET (win)) <= 1024);
      assert_true (gtk_widget_get_height (GTK_WIDGET (win)) <= 700);
      GtkWidget *sidebar = template_child (win, "sidebar_scroller");
      GtkWidget *plots = template_child (win, "plots_scroller");
      print_message ("%s at 1024×700: side bar %d × %d, plots %d × %d\n", presets[p],
                     gtk_widget_get_width (sidebar), gtk_widget_get_height (sidebar),
                     gtk_widget_get_width (plots), gtk_widget_get_height (plots));
      gboolean sidebar_scrolls = scrolls (sidebar), plots_scroll = scrolls (plots);
      assert_false (sidebar_scrolls);
      assert_false (plots_scroll);
      gtk_window_destroy (GTK_WINDOW (win));
    }
}

/* Narrower than about 1240 px the side bar gives up width (to 325 px at
 * 975 and below), so that at 900 px the plots still fit across; it is 420
 * again in a wide window, and a width the user dragged it to stays. */
static gboolean
scrolls_across (GtkWidget *scroller)
{
  GtkAdjustment *adj = gtk_scrolled_window_get_hadjustment (GTK_SCROLLED_WINDOW (scroller));
  return gtk_adjustment_get_upper (adj) - gtk_adjustment_get_lower (adj)
         > gtk_adjustment_get_page_size (adj) + 0.5;
}

static void
test_narrow_window (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  GtkPaned *paned = GTK_PANED (template_child (win, "main_paned"));
  GtkWidget *plots = template_child (win, "plots_scroller");

  gtk_window_set_default_size (GTK_WINDOW (win), 1360, 860);
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (gtk_paned_get_position (paned), 420);

  gtk_window_set_default_size (GTK_WINDOW (win), 900, 700);
  iterate_until (always_false, NULL, 0.5);
  print_message ("at 900×700: window %d, side bar %d, plots %d\n",
                 gtk_widget_get_width (GTK_WIDGET (win)), gtk_paned_get_position (paned),
                 gtk_widget_get_width (plots));
  assert_int_equal (gtk_paned_get_position (paned), 325);
  assert_true (gtk_widget_get_width (GTK_WIDGET (win)) <= 900);
  assert_false (scrolls_across (plots));

  gtk_window_set_default_size (GTK_WINDOW (win), 1110, 800);
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (gtk_paned_get_position (paned), 370);
  gtk_window_set_default_size (GTK_WINDOW (win), 1360, 860);
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (gtk_paned_get_position (paned), 420);

  /* Below the window's smallest width GTK clamps the divider; fitting goes
   * on once the window is wide again (it stopped: a narrow side bar for
   * good). */
  gtk_window_set_default_size (GTK_WINDOW (win), 700, 500);
  iterate_until (always_false, NULL, 0.5);
  print_message ("at 700×500: window %d, side bar %d\n",
                 gtk_widget_get_width (GTK_WIDGET (win)), gtk_paned_get_position (paned));
  gtk_window_set_default_size (GTK_WINDOW (win), 1360, 860);
  iterate_until (always_false, NULL, 0.5);
  assert_int_equal (gtk_paned_get_position (paned), 420);

  /* dragged by the user: kept */
  gtk_paned_set_position (paned, 380);
  gtk_window_set_default_size (GTK_WINDOW (win), 1000, 800);
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (gtk_paned_get_position (paned), 380);
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



/* A stopped run whose Steps are still ahead of it: Train and Step go on
 * with it from where it stopped (they started a new run from step 0, with
 * only a banner to say the stopped one was replaced); Reset starts afresh. */
/* Ctrl+Z is the model's undo: no field keeps an undo of its own, which
 * emptied the focused field once the model had nothing left to undo. */
static void
test_fields_leave_undo (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  static const char *const spins[] = { "lr_spin", "em_spin", "weight_decay_spin", "batch_spin",
                                       "steps_spin", "eval_spin", "average_spin", "seed_spin" };
  for (gsize i = 0; i < G_N_ELEMENTS (spins); i++)
    assert_false (gtk_editable_get_enable_undo (GTK_EDITABLE (template_child (win, spins[i]))));
  /* the layer options' fields, in the inspector */
  int found = 0;
  for (GtkWidget *w = GTK_WIDGET (win); w != NULL;)
    {
      if (GTK_IS_SPIN_BUTTON (w))
        {
          found++;
          assert_false (gtk_editable_get_enable_undo (GTK_EDITABLE (w)));
        }
      /* depth-first walk */
      GtkWidget *next = gtk_widget_get_first_child (w);
      while (next == NULL && w != NULL && w != GTK_WIDGET (win))
        {
          next = gtk_widget_get_next_sibling (w);
          if (next == NULL)
            w = gtk_widget_get_parent (w);
        }
      w = next;
    }
  assert_true (found > (int) G_N_ELEMENTS (spins));   /* the inspector's units too */
  gtk_window_destroy (GTK_WINDOW (win));
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

static const char *progress_text (CamlWindow *win);

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

/* ----------------------------------------------------- drag and drop */

typedef gboolean (*WidgetTest) (GtkWidget *widget, gpointer data);

static GtkWidget *
find_widget (GtkWidget *root, WidgetTest test, gpointer data)
{
  if (test (root, data))
    return root;
  for (GtkWidget *c = gtk_widget_get_first_child (root); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_widget (c, test, data);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The widget's first controller of type `type`, or NULL. */
static gpointer
controller_of (GtkWidget *widget, GType type)
{
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (widget);
  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GObject) c = g_list_model_get_item (controllers, i);
      if (G_TYPE_CHECK_INSTANCE_TYPE (c, type))
        return c;   /* still held by the widget */
    }
  return NULL;
}

static gboolean
has_drop_target (GtkWidget *widget, gpointer unused)
{
  return GTK_IS_LIST_BOX (widget) && controller_of (widget, GTK_TYPE_DROP_TARGET) != NULL;
}

static gboolean
is_palette_row (GtkWidget *widget, gpointer name)
{
  return GTK_IS_LIST_BOX_ROW (widget)
         && g_strcmp0 (g_object_get_data (G_OBJECT (widget), "caml-layer"), name) == 0;
}

/* What a drag from `row` carries: its GtkDragSource's "prepare". */
static char *
drag_payload (GtkWidget *row)
{
  GtkDragSource *source = controller_of (row, GTK_TYPE_DRAG_SOURCE);
  GdkContentProvider *provider = NULL;
  GValue value = G_VALUE_INIT;

  assert_non_null (source);
  g_signal_emit_by_name (source, "prepare", 4.0, 4.0, &provider);
  assert_non_null (provider);
  g_value_init (&value, G_TYPE_STRING);
  assert_true (gdk_content_provider_get_value (provider, &value, NULL));
  char *payload = g_value_dup_string (&value);
  g_value_unset (&value);
  g_object_unref (provider);
  return payload;
}

/* Every row of the stack has been laid out (rows rebuilt after an edit have
 * no allocation until the next frame, which a busy machine delays). */
static gboolean
rows_allocated (gpointer data)
{
  GtkListBoxRow *row;
  int n = 0;
  while ((row = gtk_list_box_get_row_at_index (GTK_LIST_BOX (data), n)) != NULL)
    {
      if (gtk_widget_get_height (GTK_WIDGET (row)) <= 0)
        return FALSE;
      n++;
    }
  return n > 0;
}

/* Drops payload on the model stack, a quarter of the way into row `index`
 * (above its middle: before it), or below the last row when index is -1. */
static gboolean
drop_on_stack (GtkWidget *stack, const char *payload, int index)
{
  GtkDropTarget *target = controller_of (stack, GTK_TYPE_DROP_TARGET);
  GValue value = G_VALUE_INIT;
  gboolean accepted = FALSE;
  double y;

  assert_true (iterate_until (rows_allocated, stack, 10));
  if (index >= 0)
    {
      graphene_rect_t bounds;
      GtkListBoxRow *row = gtk_list_box_get_row_at_index (GTK_LIST_BOX (stack), index);
      assert_non_null (row);
      assert_true (gtk_widget_compute_bounds (GTK_WIDGET (row), stack, &bounds));
      y = bounds.origin.y + bounds.size.height / 4;
    }
  else
    y = gtk_widget_get_height (stack) - 2;
  g_value_init (&value, G_TYPE_STRING);
  g_value_set_string (&value, payload);
  g_signal_emit_by_name (target, "drop", &value, 10.0, y, &accepted);
  g_value_unset (&value);
  return accepted;
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

/* Activates the stack's keyboard shortcut whose trigger reads `trigger`. */
static void
press_shortcut (GtkWidget *stack, const char *trigger)
{
  GtkShortcutController *keys = controller_of (stack, GTK_TYPE_SHORTCUT_CONTROLLER);
  assert_non_null (keys);
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (keys)); i++)
    {
      g_autoptr (GtkShortcut) shortcut = g_list_model_get_item (G_LIST_MODEL (keys), i);
      g_autofree char *text = gtk_shortcut_trigger_to_string (gtk_shortcut_get_trigger (shortcut));
      if (strstr (text, trigger) != NULL)
        {
          assert_true (gtk_shortcut_action_activate (gtk_shortcut_get_action (shortcut), 0, stack,
                                                     NULL));
          return;
        }
    }
  fail_msg ("no shortcut %s on the model stack", trigger);
}

/* The palette → stack drag and the reorder-by-drag, through the real drag
 * source and drop target handlers; undo brings the model back. Then the
 * keyboard: Alt+Up/Down move the selected layer, Delete removes it. */
static void
test_drag_and_drop (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_true (iterate_until (is_mapped, win, 10));
  iterate_until (always_false, NULL, 0.3);   /* rows get their allocation */
  GtkWidget *stack = find_widget (GTK_WIDGET (win), has_drop_target, NULL);
  assert_non_null (stack);
  const char *start[] = { "ca_nn", "ca_nn", "dense", NULL };
  assert_layers (win, start);

  /* Palette → between layers 0 and 1. */
  GtkWidget *palette_dense = find_widget (GTK_WIDGET (win), is_palette_row, (gpointer) "dense");
  assert_non_null (palette_dense);
  g_autofree char *new_dense = drag_payload (palette_dense);
  assert_string_equal (new_dense, "new:dense");
  assert_true (drop_on_stack (stack, new_dense, 1));
  const char *inserted[] = { "ca_nn", "dense", "ca_nn", "dense", NULL };
  assert_layers (win, inserted);
  assert_true (caml_window_is_modified (win));
  activate_editor (win, "undo", NULL);
  assert_layers (win, start);

  /* Palette → below the last layer appends. */
  GtkWidget *palette_ca = find_widget (GTK_WIDGET (win), is_palette_row, (gpointer) "ca_nn");
  g_autofree char *new_ca = drag_payload (palette_ca);
  assert_true (drop_on_stack (stack, new_ca, -1));
  const char *appended[] = { "ca_nn", "ca_nn", "dense", "ca_nn", NULL };
  assert_layers (win, appended);
  activate_editor (win, "undo", NULL);
  assert_layers (win, start);

  /* Reorder: the dense layer (row 2) dragged above row 0. */
  iterate_until (always_false, NULL, 0.1);
  GtkWidget *row2 = GTK_WIDGET (gtk_list_box_get_row_at_index (GTK_LIST_BOX (stack), 2));
  g_autofree char *move = drag_payload (row2);
  assert_string_equal (move, "move:2");
  assert_true (drop_on_stack (stack, move, 0));
  const char *moved[] = { "dense", "ca_nn", "ca_nn", NULL };
  assert_layers (win, moved);
  activate_editor (win, "undo", NULL);
  assert_layers (win, start);
  assert_false (drop_on_stack (stack, "nonsense", 0));   /* unknown payloads are refused */
  assert_false (drop_on_stack (stack, "new:no_such_layer", 0));
  assert_layers (win, start);

  /* Keyboard. */
  activate_editor (win, "select-layer", g_variant_new_int32 (2));
  press_shortcut (stack, "<Alt>Up");
  const char *up[] = { "ca_nn", "dense", "ca_nn", NULL };
  assert_layers (win, up);
  press_shortcut (stack, "<Alt>Up");
  const char *top[] = { "dense", "ca_nn", "ca_nn", NULL };
  assert_layers (win, top);
  press_shortcut (stack, "<Alt>Down");
  assert_layers (win, up);
  press_shortcut (stack, "Delete");
  const char *removed[] = { "ca_nn", "ca_nn", NULL };
  assert_layers (win, removed);
  activate_editor (win, "undo", NULL);
  activate_editor (win, "undo", NULL);
  activate_editor (win, "undo", NULL);
  activate_editor (win, "undo", NULL);
  assert_layers (win, start);
  gtk_window_destroy (GTK_WINDOW (win));
}

/* ----------------------------------------------------- recent files */

static char *
recent_target (GMenuModel *menu, int i)
{
  g_autoptr (GVariant) v = g_menu_model_get_item_attribute_value (menu, i,
                                                                  G_MENU_ATTRIBUTE_TARGET,
                                                                  G_VARIANT_TYPE_STRING);
  return v != NULL ? g_variant_dup_string (v, NULL) : NULL;
}

static CamlWindow *
window_with_lr (double lr)
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (CAML_IS_WINDOW (l->data)
        && fabs (caml_window_get_experiment (l->data)->optimizer.lr - lr) < 1e-12)
      return CAML_WINDOW (l->data);
  return NULL;
}

/* Saved and opened experiments go first in Open Recent (eight at most);
 * opening one goes the way of Open — a window with changes keeps them — and
 * a file that is gone leaves the list. */
static void
test_recent_files (void **state)
{
  GSettings *settings = caml_application_get_settings (app);
  assert_non_null (settings);
  g_settings_set_strv (settings, "recent-files", NULL);
  GMenuModel *menu = caml_application_get_recent_menu (app);
  assert_int_equal (g_menu_model_get_n_items (menu), 1);   /* "No Recent Experiments" */
  assert_false (g_action_group_get_action_enabled (G_ACTION_GROUP (app), "no-recent"));

  g_autofree char *dir = g_dir_make_tmp ("caml-gui-recent-XXXXXX", NULL);
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  char *paths[10];
  for (int i = 0; i < 10; i++)
    {
      g_autofree char *name = g_strdup_printf ("e%d.json", i);
      paths[i] = g_build_filename (dir, name, NULL);
      activate (win, "set-lr", g_variant_new_double (0.01 * (i + 1)));
      g_autoptr (GError) error = NULL;
      assert_true (caml_window_save_to_path (win, paths[i], &error));
    }
  assert_int_equal (g_menu_model_get_n_items (menu), CAML_MAX_RECENT);
  g_autofree char *first = recent_target (menu, 0);
  g_autofree char *last = recent_target (menu, CAML_MAX_RECENT - 1);
  assert_string_equal (first, paths[9]);
  assert_string_equal (last, paths[2]);

  /* Open e3 with unsaved changes in the window: they stay in it. */
  activate (win, "set-lr", g_variant_new_double (0.5));
  assert_true (caml_window_is_modified (win));
  g_action_group_activate_action (G_ACTION_GROUP (app), "open-recent",
                                  g_variant_new_string (paths[3]));
  CamlWindow *opened = window_with_lr (0.04);
  assert_non_null (opened);
  assert_true (opened != win);
  assert_true (caml_window_get_experiment (win)->optimizer.lr == 0.5);
  g_autofree char *now_first = recent_target (menu, 0);
  assert_string_equal (now_first, paths[3]);
  gtk_window_destroy (GTK_WINDOW (opened));

  /* A file that is gone. */
  g_unlink (paths[5]);
  g_action_group_activate_action (G_ACTION_GROUP (app), "open-recent",
                                  g_variant_new_string (paths[5]));
  assert_non_null (caml_window_get_error (win));
  assert_non_null (strstr (caml_window_get_error (win), "no longer there"));
  g_auto (GStrv) left = g_settings_get_strv (settings, "recent-files");
  assert_false (g_strv_contains ((const char *const *) left, paths[5]));
  assert_int_equal (g_strv_length (left), CAML_MAX_RECENT - 1);

  gtk_window_destroy (GTK_WINDOW (win));
  for (int i = 0; i < 10; i++)
    {
      g_unlink (paths[i]);
      g_free (paths[i]);
    }
  g_rmdir (dir);
}

/* ------------------------------------------------------ open several */

static gboolean
has_error_with (CamlWindow *win, const char *text)
{
  const char *msg = caml_window_get_error (win);
  return msg != NULL && strstr (msg, text) != NULL;
}

/* `caml-workbench missing.json bad.json good.json`: every file that cannot
 * be opened is named in a banner — the first one too, which the second
 * used to replace — and the file that opens gets a window of its own, not
 * the one whose banner lists the others. */
static void
test_open_several (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-open-XXXXXX", NULL);
  g_autofree char *missing = g_build_filename (dir, "missing.json", NULL);
  g_autofree char *bad = g_build_filename (dir, "bad.json", NULL);
  g_autofree char *good = g_build_filename (dir, "good.json", NULL);
  assert_true (g_file_set_contents (bad, "{ \"steps\": ", -1, NULL));
  assert_true (g_file_set_contents (good, "{ \"name\": \"good\", \"training\": { \"steps\": 77 } }",
                                    -1, NULL));
  GList *before = g_list_copy (gtk_application_get_windows (GTK_APPLICATION (app)));
  GFile *files[3] = { g_file_new_for_path (missing), g_file_new_for_path (bad),
                      g_file_new_for_path (good) };

  g_application_open (G_APPLICATION (app), files, 3, "");
  CamlWindow *errors = NULL, *opened = NULL;
  int n_new = 0;
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    {
      if (!CAML_IS_WINDOW (l->data))
        continue;
      CamlWindow *win = CAML_WINDOW (l->data);
      gboolean is_new = g_list_find (before, l->data) == NULL;
      n_new += is_new;
      /* (An open window may take the errors: the active one.) */
      if (has_error_with (win, "missing.json"))
        errors = win;
      if (is_new && g_strcmp0 (caml_window_get_experiment (win)->name, "good") == 0)
        opened = win;
    }
  assert_non_null (errors);
  print_message ("banner: %s\n", caml_window_get_error (errors));
  assert_true (has_error_with (errors, "bad.json"));          /* both, one line each */
  assert_non_null (strchr (caml_window_get_error (errors), '\n'));
  assert_non_null (opened);
  assert_true (opened != errors);
  assert_null (caml_window_get_error (opened));
  assert_int_equal (caml_window_get_experiment (opened)->steps, 77);
  assert_int_equal (n_new, g_list_find (before, errors) != NULL ? 1 : 2);

  gtk_window_destroy (GTK_WINDOW (errors));
  gtk_window_destroy (GTK_WINDOW (opened));
  for (int i = 0; i < 3; i++)
    g_object_unref (files[i]);
  g_list_free (before);
  g_unlink (bad);
  g_unlink (good);
  g_rmdir (dir);
}

/* ------------------------------------------------------- divergence */

static gboolean
run_failed_or_finished (gpointer data)
{
  CamlTrainerState s = caml_window_get_state (CAML_WINDOW (data));
  return s == CAML_TRAINER_FAILED || s == CAML_TRAINER_FINISHED;
}

/* Plain SGD at lr 10 on a linear readout overflows within a few steps. The
 * banner names the step and offers to continue from the last evaluation at
 * a tenth of the rate; the loss history up to there is kept. */
static void
test_divergence (void **state)
{
  char *dir = g_dir_make_tmp ("caml-gui-div-XXXXXX", NULL);
  char *path = g_build_filename (dir, "div.json", NULL);
  const char *json =
    "{ \"name\": \"diverges\", \"seed\": 0, \"data\": { \"builtin\": \"surface\" },"
    "  \"model\": [ { \"layer\": \"ca_nn\", \"units\": 5 },"
    "               { \"layer\": \"dense\", \"units\": 1, \"activation\": \"identity\" } ],"
    "  \"loss\": \"mse\", \"optimizer\": { \"type\": \"sgd\", \"lr\": 10 },"
    "  \"training\": { \"steps\": 400, \"eval_every\": 2 } }";
  assert_true (g_file_set_contents (path, json, -1, NULL));
  CamlWindow *win = caml_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (win));
  assert_true (iterate_until (is_mapped, win, 10));
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_load_file (win, path, &error));
  assert_false (enabled (win, "continue-diverged"));

  activate (win, "train", NULL);
  assert_true (iterate_until (run_failed_or_finished, win, 60));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FAILED);
  const char *msg = caml_window_get_error (win);
  assert_non_null (msg);
  print_message ("banner: %s\n", msg);
  assert_non_null (strstr (msg, "diverged"));
  assert_non_null (strstr (msg, "step "));
  assert_true (enabled (win, "continue-diverged"));
  /* One story: Continue goes on from where the weights are, or says it
   * goes back further than the step they were rolled back to. */
  CamlDivergence d;
  assert_true (caml_run_get_divergence (caml_window_peek_run (win), &d));
  long from = caml_run_get_checkpoint_step (caml_window_peek_run (win));
  g_autofree char *further = g_strdup_printf ("Continue goes back further, to step %ld", from);
  assert_non_null (strstr (msg, from != d.rolled_back_to ? further : "Continue from there"));

  const char *out_dir = g_getenv ("CAML_SCREENSHOT_DIR");
  char *shot = g_build_filename (out_dir != NULL ? out_dir : ".",
                                            "gui-divergence.png", NULL);
  iterate_until (always_false, NULL, 0.3);
  save_screenshot (GTK_WIDGET (win), shot);
  g_free (shot);

  /* Continue, a tenth of the rate each time, until a run gets through. */
  int tries = 0;
  double lr = 10;
  while (caml_window_get_state (win) == CAML_TRAINER_FAILED && tries < 6)
    {
      long n_before = 0;
      const float *before = caml_window_get_losses (win, &n_before);
      g_autofree float *kept = g_memdup2 (before, MAX (n_before, 1) * sizeof (float));
      long from = caml_window_get_resume_step (win);
      assert_true (from >= 0 && from <= n_before);
      activate (win, "continue-diverged", NULL);
      lr /= 10;
      tries++;
      /* The banner goes — or is back already, for a continued run that
       * diverged before Continue returned. */
      assert_true (caml_window_get_error (win) == NULL
                   || caml_window_get_state (win) == CAML_TRAINER_FAILED);
      assert_true (fabs (caml_window_get_experiment (win)->optimizer.lr - lr) < 1e-12 * lr);
      assert_true (iterate_until (run_failed_or_finished, win, 60));
      iterate_until (always_false, NULL, 0.2);
      /* The steps up to the checkpoint are kept as they were. */
      long n_after = 0;
      const float *after = caml_window_get_losses (win, &n_after);
      print_message ("continued from step %ld at lr %g: %ld steps, %s\n", from, lr, n_after,
                     caml_window_get_state (win) == CAML_TRAINER_FAILED ? "failed" : "finished");
      assert_true (n_after >= from);
      for (long i = 0; i < from; i++)
        assert_true (after[i] == kept[i]);
    }
  print_message ("finished after %d continuation(s), at lr %g\n", tries, lr);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  long n_steps = 0;
  const float *losses = caml_window_get_losses (win, &n_steps);
  assert_int_equal (n_steps, 400);
  assert_true (isfinite (losses[n_steps - 1]));
  assert_true (caml_window_is_modified (win));   /* the experiment keeps the new rate */
  gtk_window_destroy (GTK_WINDOW (win));
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
}

static const char *
field_text (GtkSpinButton *spin)
{
  return gtk_editable_get_text (GTK_EDITABLE (spin));
}

/* The learning-rate field shows and takes any rate an experiment file
 * does (> 0): lr 1000 reads "1000", not the old range's 10, and what the
 * field shows is what the run trains at and Save writes — after "Continue
 * at lr 100" too, whose next offer is then 10. Small rates read as the
 * file has them ("1e-7", not "0.00000"), "+" and "−" step within the
 * value's decade. */
static void
test_lr_any_value (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-lr-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "lr1000.json", NULL);
  g_autofree char *saved = g_build_filename (dir, "saved.json", NULL);
  static const char json[] =
    "{ \"name\": \"lr1000\", \"seed\": 0, \"data\": { \"builtin\": \"surface\" },"
    "  \"model\": [ { \"layer\": \"dense\", \"units\": 16, \"activation\": \"relu\" },"
    "               { \"layer\": \"dense\", \"units\": 1 } ],"
    "  \"optimizer\": { \"type\": \"sgd\", \"lr\": 1000 }, \"training\": { \"steps\": 200 } }";
  assert_true (g_file_set_contents (path, json, -1, NULL));
  CamlWindow *win = open_window_on (path);
  GtkSpinButton *lr = GTK_SPIN_BUTTON (template_child (win, "lr_spin"));
  assert_string_equal (field_text (lr), "1000");
  assert_true (gtk_spin_button_get_value (lr) == 1000);

  gtk_spin_button_spin (lr, GTK_SPIN_STEP_FORWARD, 0);
  assert_string_equal (field_text (lr), "1100");
  assert_true (caml_window_get_experiment (win)->optimizer.lr == 1100);
  type_into (win, lr, "0.01");
  gtk_spin_button_update (lr);
  gtk_spin_button_spin (lr, GTK_SPIN_STEP_FORWARD, 0);
  assert_string_equal (field_text (lr), "0.011");   /* not 0.011000000000000001 */
  assert_true (caml_window_get_experiment (win)->optimizer.lr == 0.011);
  gtk_spin_button_spin (lr, GTK_SPIN_STEP_BACKWARD, 0);
  gtk_spin_button_spin (lr, GTK_SPIN_STEP_BACKWARD, 0);
  assert_string_equal (field_text (lr), "0.009");
  type_into (win, lr, "1e-7");
  gtk_spin_button_update (lr);
  assert_string_equal (field_text (lr), "1e-7");
  assert_true (caml_window_get_experiment (win)->optimizer.lr == 1e-7);
  assert_false (caml_spin_button_is_edited (lr));
  type_into (win, lr, "2e-13");   /* under GTK's own 1e-10 threshold */
  gtk_spin_button_update (lr);
  assert_true (caml_window_get_experiment (win)->optimizer.lr == 2e-13);
  assert_string_equal (field_text (lr), "2e-13");
  type_into (win, lr, "1000");
  gtk_spin_button_update (lr);
  assert_true (caml_window_get_experiment (win)->optimizer.lr == 1000);

  assert_true (iterate_until (can_train, win, 30));
  activate (win, "train", NULL);
  assert_true (iterate_until (run_failed_or_finished, win, 60));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FAILED);
  GtkButton *banner_button = GTK_BUTTON (template_child (win, "banner_button"));
  assert_string_equal (gtk_button_get_label (banner_button), "_Continue at lr 100");
  assert_string_equal (field_text (lr), "1000");   /* the rate it diverged at */

  activate (win, "continue-diverged", NULL);
  assert_string_equal (field_text (lr), "100");
  assert_true (gtk_spin_button_get_value (lr) == 100);
  assert_true (caml_window_get_experiment (win)->optimizer.lr == 100);
  assert_true (iterate_until (run_failed_or_finished, win, 60));
  iterate_until (always_false, NULL, 0.2);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FAILED);   /* 100 is too much too */
  assert_string_equal (gtk_button_get_label (banner_button), "_Continue at lr 10");
  assert_string_equal (field_text (lr), "100");
  assert_non_null (caml_window_get_error (win));
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_save_to_path (win, saved, &error));
  CamlExperiment *back = caml_experiment_load_file (saved, &error);
  assert_non_null (back);
  assert_true (back->optimizer.lr == 100);
  caml_experiment_free (back);

  gtk_window_destroy (GTK_WINDOW (win));
  g_unlink (path);
  g_unlink (saved);
  g_rmdir (dir);
}

/* The weight-decay field shows and takes what optimizer.weight_decay does
 * (any number ≥ 0, as the file has it), says when it keeps a value, keeps
 * the decay when another optimizer is chosen, and Save writes it — and
 * leaves it out at 0. */
static void
test_weight_decay_field (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-wd-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "wd.json", NULL);
  g_autofree char *saved = g_build_filename (dir, "saved.json", NULL);
  static const char json[] =
    "{ \"name\": \"wd\", \"data\": { \"builtin\": \"xor\" },"
    "  \"optimizer\": { \"type\": \"adagrad\", \"lr\": 0.1, \"weight_decay\": 0.0005 } }";
  assert_true (g_file_set_contents (path, json, -1, NULL));
  CamlWindow *win = open_window_on (path);
  GtkSpinButton *wd = GTK_SPIN_BUTTON (template_child (win, "weight_decay_spin"));
  const CamlExperiment *exp = caml_window_get_experiment (win);
  assert_string_equal (field_text (wd), "0.0005");
  assert_true (exp->optimizer.weight_decay == 0.0005);

  /* every optimizer reads it: another one keeps it */
  gtk_drop_down_set_selected (GTK_DROP_DOWN (template_child (win, "optimizer_drop")),
                              CAML_OPTIM_ADAM);
  exp = caml_window_get_experiment (win);
  assert_int_equal (exp->optimizer.kind, CAML_OPTIM_ADAM);
  assert_true (exp->optimizer.weight_decay == 0.0005);

  type_into (win, wd, "1e-5");
  gtk_spin_button_update (wd);
  assert_true (caml_window_get_experiment (win)->optimizer.weight_decay == 1e-5);
  assert_string_equal (field_text (wd), "1e-5");
  type_into (win, wd, "-1");
  gtk_spin_button_update (wd);
  assert_true (caml_window_get_experiment (win)->optimizer.weight_decay == 1e-5);
  assert_string_equal (status_text (win), "Weight decay kept at 1e-5: must be ≥ 0");
  assert_true (gtk_widget_has_css_class (GTK_WIDGET (wd), "error"));
  type_into (win, wd, "abc");
  gtk_spin_button_update (wd);
  assert_string_equal (status_text (win),
                       "Weight decay kept at 1e-5: \"abc\" is not a number (≥ 0)");
  assert_string_equal (field_text (wd), "1e-5");
  type_into (win, wd, "0.01");
  gtk_spin_button_update (wd);
  assert_true (caml_window_get_experiment (win)->optimizer.weight_decay == 0.01);

  g_autoptr (GError) error = NULL;
  assert_true (caml_window_save_to_path (win, saved, &error));
  CamlExperiment *back = caml_experiment_load_file (saved, &error);
  assert_non_null (back);
  assert_int_equal (back->optimizer.kind, CAML_OPTIM_ADAM);
  assert_true (back->optimizer.weight_decay == 0.01);
  caml_experiment_free (back);

  /* 0 is off, "-0" too: not written */
  type_into (win, wd, "-0");
  gtk_spin_button_update (wd);
  exp = caml_window_get_experiment (win);
  assert_true (exp->optimizer.weight_decay == 0 && !signbit (exp->optimizer.weight_decay));
  assert_string_equal (field_text (wd), "0");
  assert_true (caml_window_save_to_path (win, saved, &error));
  g_autofree char *contents = NULL;
  assert_true (g_file_get_contents (saved, &contents, NULL, NULL));
  assert_null (strstr (contents, "weight_decay"));

  gtk_window_destroy (GTK_WINDOW (win));
  g_unlink (path);
  g_unlink (saved);
  g_rmdir (dir);
}

/* Saved to another file, a name that follows its file follows it
 * (test-session.c, test_save_as_name), and the title shows it. */
static void
test_save_as_title (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-name-XXXXXX", NULL);
  g_autofree char *mine = g_build_filename (dir, "mine.json", NULL);
  g_autoptr (GError) error = NULL;
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_string_equal (gtk_window_get_title (GTK_WINDOW (win)), "xor-ca-nn");
  assert_true (caml_window_save_to_path (win, mine, &error));
  assert_string_equal (caml_window_get_experiment (win)->name, "mine");
  assert_string_equal (gtk_window_get_title (GTK_WINDOW (win)), "mine");
  assert_false (caml_window_is_modified (win));
  gtk_window_destroy (GTK_WINDOW (win));
  g_unlink (mine);
  g_rmdir (dir);
}

static const char *
placeholder_of (CamlWindow *win, const char *view)
{
  CamlPlotView *v = caml_window_get_plot_view (win, view);
  return caml_plot_view_has_plot (v) ? NULL : caml_plot_view_get_placeholder (v);
}

static const char *
progress_text (CamlWindow *win)
{
  return gtk_progress_bar_get_text (GTK_PROGRESS_BAR (template_child (win, "progress_bar")));
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

  activate (win, "train", NULL);
  assert_true (iterate_until (run_failed_or_finished, win, 60));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FAILED);
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

/* Stopped before the first evaluation, the accuracy pane says so instead
 * of promising an evaluation at a step the run will not reach. */
static void
test_stop_before_evaluation (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "rnn-sanity-gru"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (can_train, win, 30));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "steps_spin")), 1000000);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "eval_spin")), 500000);
  assert_true (iterate_until (can_train, win, 30));
  assert_string_equal (placeholder_of (win, "accuracy"), "test accuracy appears at step 500000");
  activate (win, "train", NULL);
  assert_true (iterate_until (not_loading, win, 10));
  iterate_until (always_false, NULL, 0.2);
  activate (win, "stop", NULL);
  assert_true (iterate_until (run_ended, win, 30));
  iterate_until (always_false, NULL, 0.2);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_STOPPED);
  long n = 0;
  caml_window_get_losses (win, &n);
  g_autofree char *expected = g_strdup_printf ("stopped at step %ld, before the first "
                                               "evaluation (step 500000)", n);
  print_message ("accuracy: %s\n", placeholder_of (win, "accuracy"));
  assert_string_equal (placeholder_of (win, "accuracy"), expected);
  gtk_window_destroy (GTK_WINDOW (win));
}

/* ------------------------------------------------------------ quit */

/* win may be gone (freed): only compared. */
static gboolean
is_open (gconstpointer win)
{
  return g_list_find (gtk_application_get_windows (GTK_APPLICATION (app)), win) != NULL;
}

/* The dialog of a type shown for win (the close question, the file
 * chooser), or NULL. */
static GtkWindow *
dialog_of (CamlWindow *win, GType type)
{
  GListModel *toplevels = gtk_window_get_toplevels ();
  GtkWindow *found = NULL;

  for (guint i = 0; found == NULL && i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (toplevels, i);
      if (G_TYPE_CHECK_INSTANCE_TYPE (w, type) && gtk_widget_get_visible (GTK_WIDGET (w))
          && gtk_window_get_transient_for (w) == GTK_WINDOW (win))
        found = w;
    }
  return found;
}

static gboolean
has_file (gpointer path)
{
  return g_file_test (path, G_FILE_TEST_EXISTS);
}

static gboolean
all_closed (gpointer windows)
{
  for (CamlWindow **w = windows; *w != NULL; w++)
    if (is_open (*w))
      return FALSE;
  return TRUE;
}

/* app.quit asks about each window with unsaved changes before it closes
 * any: Cancel keeps every window open; Discard and Save (choosing a file)
 * go on, and then all close — without GLib criticals (fatal here). */
static void
test_quit (void **state)
{
  CamlWindow *clean = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  CamlWindow *edited = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  CamlWindow *unsaved = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  CamlWindow *windows[] = { clean, edited, unsaved, NULL };
  assert_true (iterate_until (is_mapped, unsaved, 10));
  activate_editor (edited, "add-layer", g_variant_new_string ("dense"));
  activate_editor (unsaved, "add-layer", g_variant_new_string ("dense"));

  /* Cancel: nothing closes, not even the window without changes. */
  g_action_group_activate_action (G_ACTION_GROUP (app), "quit", NULL);
  CamlWindow *asking = dialog_of (edited, GTK_TYPE_MESSAGE_DIALOG) != NULL ? edited : unsaved;
  GtkWindow *question = dialog_of (asking, GTK_TYPE_MESSAGE_DIALOG);
  assert_non_null (question);
  assert_null (dialog_of (asking == edited ? unsaved : edited, GTK_TYPE_MESSAGE_DIALOG));
  for (CamlWindow **w = windows; *w != NULL; w++)
    assert_true (is_open (*w));
  gtk_dialog_response (GTK_DIALOG (question), GTK_RESPONSE_CANCEL);
  iterate_until (always_false, NULL, 0.1);
  for (CamlWindow **w = windows; *w != NULL; w++)
    assert_true (is_open (*w));
  assert_null (dialog_of (edited, GTK_TYPE_MESSAGE_DIALOG));
  assert_null (dialog_of (unsaved, GTK_TYPE_MESSAGE_DIALOG));

  /* Again: Discard one, Save the other into a file chosen then. */
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-quit-XXXXXX", NULL);
  /* The chooser suggests the experiment's name. */
  g_autofree char *path = g_build_filename (dir, "surface-ca-nn-1.json", NULL);
  g_action_group_activate_action (G_ACTION_GROUP (app), "quit", NULL);
  for (int answered = 0; answered < 2; answered++)
    {
      asking = dialog_of (edited, GTK_TYPE_MESSAGE_DIALOG) != NULL ? edited : unsaved;
      question = dialog_of (asking, GTK_TYPE_MESSAGE_DIALOG);
      assert_non_null (question);
      for (CamlWindow **w = windows; *w != NULL; w++)
        assert_true (is_open (*w));
      if (asking == edited)
        {
          gtk_dialog_response (GTK_DIALOG (question), 1);   /* Discard */
          continue;
        }
      gtk_dialog_response (GTK_DIALOG (question), 2);       /* Save */
      GtkWindow *chooser = dialog_of (unsaved, GTK_TYPE_FILE_CHOOSER_DIALOG);
      assert_non_null (chooser);
      assert_true (iterate_until (is_mapped, chooser, 10));
      iterate_until (always_false, NULL, 0.2);   /* it has its suggested name */
      g_autoptr (GFile) file = g_file_new_for_path (path);
      assert_true (gtk_file_chooser_set_file (GTK_FILE_CHOOSER (chooser), file, NULL));
      iterate_until (always_false, NULL, 0.2);   /* the folder is read */
      /* As a click does (the chooser checks the name before it answers). */
      GtkWidget *accept = gtk_dialog_get_widget_for_response (GTK_DIALOG (chooser),
                                                              GTK_RESPONSE_ACCEPT);
      assert_non_null (accept);
      gtk_widget_activate (accept);
      assert_true (iterate_until (has_file, path, 10));
    }
  assert_true (iterate_until (all_closed, windows, 10));
  g_autoptr (GError) error = NULL;
  CamlExperiment *saved = caml_experiment_load_file (path, &error);
  assert_non_null (saved);
  assert_int_equal (saved->n_layers, 3);   /* the preset's two and the one added */
  caml_experiment_free (saved);
  g_unlink (path);
  g_rmdir (dir);
}

/* A window with no changes but a value still being typed is asked too,
 * before any window closes: Cancel then keeps all of them open. */
static void
test_quit_pending_edit (void **state)
{
  CamlWindow *dirty = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  CamlWindow *typing = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_true (iterate_until (is_mapped, typing, 10));
  activate_editor (dirty, "add-layer", g_variant_new_string ("dense"));
  type_into (typing, GTK_SPIN_BUTTON (template_child (typing, "steps_spin")), "500");
  assert_false (caml_window_is_modified (typing));

  g_action_group_activate_action (G_ACTION_GROUP (app), "quit", NULL);
  for (int answered = 0; answered < 2; answered++)
    {
      CamlWindow *asking = dialog_of (dirty, GTK_TYPE_MESSAGE_DIALOG) != NULL ? dirty : typing;
      GtkWindow *question = dialog_of (asking, GTK_TYPE_MESSAGE_DIALOG);
      assert_non_null (question);
      assert_true (is_open (dirty) && is_open (typing));
      gtk_dialog_response (GTK_DIALOG (question),
                           asking == dirty ? 1 /* Discard */ : GTK_RESPONSE_CANCEL);
      iterate_until (always_false, NULL, 0.1);
      if (asking == typing)
        break;
    }
  /* Cancelled in the typing window: both still open, its edit taken. */
  assert_true (is_open (dirty) && is_open (typing));
  assert_int_equal (caml_window_get_experiment (typing)->steps, 500);
  gtk_window_destroy (GTK_WINDOW (dirty));
  gtk_window_destroy (GTK_WINDOW (typing));
}

/* A window destroyed while it asks (its question dies without an answer)
 * does not stall the quit: the next window asks. */
static void
test_quit_asking_destroyed (void **state)
{
  CamlWindow *a = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  CamlWindow *b = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_true (iterate_until (is_mapped, b, 10));
  activate_editor (a, "add-layer", g_variant_new_string ("dense"));
  activate_editor (b, "add-layer", g_variant_new_string ("dense"));
  g_action_group_activate_action (G_ACTION_GROUP (app), "quit", NULL);
  CamlWindow *asking = dialog_of (a, GTK_TYPE_MESSAGE_DIALOG) != NULL ? a : b;
  CamlWindow *other = asking == a ? b : a;
  assert_null (dialog_of (other, GTK_TYPE_MESSAGE_DIALOG));
  gtk_window_destroy (GTK_WINDOW (asking));
  iterate_until (always_false, NULL, 0.1);
  GtkWindow *question = dialog_of (other, GTK_TYPE_MESSAGE_DIALOG);
  assert_non_null (question);
  gtk_dialog_response (GTK_DIALOG (question), 1);   /* Discard: the quit ends it */
  CamlWindow *rest[] = { other, NULL };
  assert_true (iterate_until (all_closed, rest, 10));
}

/* Train, Save or Close with the focus in a field nobody typed into change
 * nothing: GTK would re-read its rounded display (lr 0.000015 shows as
 * 0.00002 at five digits) and change the value. */
static void
test_focus_without_edit (void **state)
{
  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = caml_presets_load ("surface-ca-nn-1", &error);
  assert_non_null (exp);
  exp->optimizer.lr = 0.000015;
  CamlWindow *win = caml_window_new (GTK_APPLICATION (app));
  caml_window_set_experiment (win, exp, NULL, "rounding");
  gtk_window_present (GTK_WINDOW (win));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_false (caml_window_is_modified (win));
  gtk_widget_grab_focus (template_child (win, "lr_spin"));
  gtk_window_close (GTK_WINDOW (win));
  iterate_until (always_false, NULL, 0.2);
  /* Unchanged, so it closed without asking. */
  assert_false (is_open (win));
}

/* ------------------------------------------------------- renderer */

/* Cairo instead of software OpenGL, unless the user chose. (The windows of
 * this test run already have their renderer: GSK reads the variable once.) */
static void
test_renderer_choice (void **state)
{
  g_autofree char *saved = g_strdup (g_getenv ("GSK_RENDERER"));
  g_autofree char *saved_soft = g_strdup (g_getenv ("LIBGL_ALWAYS_SOFTWARE"));

  g_setenv ("GSK_RENDERER", "ngl", TRUE);
  g_setenv ("LIBGL_ALWAYS_SOFTWARE", "1", TRUE);
  assert_null (caml_application_choose_renderer ());
  assert_string_equal (g_getenv ("GSK_RENDERER"), "ngl");

  g_unsetenv ("GSK_RENDERER");
  assert_non_null (caml_application_choose_renderer ());
  assert_string_equal (g_getenv ("GSK_RENDERER"), "cairo");

  /* Without a GPU render node, or on Xvfb (no DRI3), also Cairo. */
  g_unsetenv ("GSK_RENDERER");
  g_unsetenv ("LIBGL_ALWAYS_SOFTWARE");
  const char *reason = caml_application_choose_renderer ();
  print_message ("this machine: %s\n", reason != NULL ? reason : "hardware OpenGL, GSK's choice");

  if (saved_soft != NULL)
    g_setenv ("LIBGL_ALWAYS_SOFTWARE", saved_soft, TRUE);
  else
    g_unsetenv ("LIBGL_ALWAYS_SOFTWARE");
  if (saved != NULL)
    g_setenv ("GSK_RENDERER", saved, TRUE);
  else
    g_unsetenv ("GSK_RENDERER");
}

/* ------------------------------------------------------- throughput */

static int
compare_gaps (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

/* The same experiment headless, in this process: steps per second. */
static double
headless_rate (const CamlExperiment *exp)
{
  CamlDataset *train = NULL, *test = NULL;
  CamlProgress p;

  assert_true (caml_experiment_load_datasets (exp, &train, &test, NULL));
  CamlModel *model = caml_experiment_build_model (exp, &train->x_shape, NULL);
  assert_non_null (model);
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  caml_trainer_join (trainer);
  caml_trainer_get_progress (trainer, &p);
  caml_trainer_free (trainer);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  return p.step / p.seconds;
}

/* Frame clock: how long each frame's update, layout and paint took. */
typedef struct {
  gint64  start, layout_end, paint_end;
  GArray *durations;   /* gint64 µs */
  /* frames over 16 ms: how long their update + layout and their paint took */
  GArray *slow_layout, *slow_paint;
} FrameTimes;

static void
on_before_paint (GdkFrameClock *clock, gpointer data)
{
  FrameTimes *ft = data;
  ft->start = g_get_monotonic_time ();
  ft->layout_end = ft->paint_end = 0;
}

/* Connected after GTK's own handlers of these phases, so they mark their end. */
static void
on_layout (GdkFrameClock *clock, gpointer data)
{
  ((FrameTimes *) data)->layout_end = g_get_monotonic_time ();
}

static void
on_paint (GdkFrameClock *clock, gpointer data)
{
  ((FrameTimes *) data)->paint_end = g_get_monotonic_time ();
}

static void
on_after_paint (GdkFrameClock *clock, gpointer data)
{
  FrameTimes *ft = data;
  if (ft->start != 0)
    {
      gint64 d = g_get_monotonic_time () - ft->start;
      g_array_append_val (ft->durations, d);
      if (d > 16000 && ft->layout_end != 0 && ft->paint_end >= ft->layout_end)
        {
          gint64 layout = ft->layout_end - ft->start, paint = ft->paint_end - ft->layout_end;
          g_array_append_val (ft->slow_layout, layout);
          g_array_append_val (ft->slow_paint, paint);
        }
    }
  ft->start = 0;
}

static double
percentile_ms (GArray *values, double q)
{
  if (values->len == 0)
    return 0;
  g_array_sort (values, compare_gaps);
  return g_array_index (values, gint64, (guint) (q * (values->len - 1))) / 1000.0;
}

/* Training with the window open and its plots updating, against the same
 * run headless (the trainer the CLI runs, in this process): throughput,
 * how long the main loop ever stalled, and how long each frame took. A
 * measurement, not a test of speed (the machine is shared): it runs only
 * with CAML_GUI_BENCHMARK set — to 1 for surface-ca-nn-2, or to a preset's
 * name; CAML_GUI_BENCHMARK_STEPS overrides its step count — and prints its
 * figures; the live learning-rate change it makes is checked. */
static void
test_throughput (void **state)
{
  const char *which = g_getenv ("CAML_GUI_BENCHMARK");
  if (which == NULL)
    {
      print_message ("throughput measurement skipped: set CAML_GUI_BENCHMARK=1 to run it\n");
      skip ();
    }
  const char *preset = g_str_equal (which, "1") ? "surface-ca-nn-2" : which;
  const char *steps_text = g_getenv ("CAML_GUI_BENCHMARK_STEPS");
  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = caml_presets_load (preset, &error);
  assert_non_null (exp);
  if (steps_text != NULL)
    exp->steps = atoi (steps_text);
  else if (g_str_equal (preset, "surface-ca-nn-2"))
    exp->steps = 30000;
  exp->eval_every = MAX (1, MIN (exp->eval_every, exp->steps / 10));

  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, preset));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 300));
  double best_cli = 0, best_gui = 0, sample_seconds = 0;
  Stall stall = { 0, 0, g_array_new (FALSE, FALSE, sizeof (gint64)) };
  FrameTimes frames = { 0, 0, 0, g_array_new (FALSE, FALSE, sizeof (gint64)),
                        g_array_new (FALSE, FALSE, sizeof (gint64)),
                        g_array_new (FALSE, FALSE, sizeof (gint64)) };
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (win));
  gulong before_id = g_signal_connect (clock, "before-paint", G_CALLBACK (on_before_paint), &frames);
  gulong after_id = g_signal_connect (clock, "after-paint", G_CALLBACK (on_after_paint), &frames);
  gulong layout_id = g_signal_connect (clock, "layout", G_CALLBACK (on_layout), &frames);
  gulong paint_id = g_signal_connect (clock, "paint", G_CALLBACK (on_paint), &frames);

  const char *rounds_text = g_getenv ("CAML_GUI_BENCHMARK_ROUNDS");
  int rounds = rounds_text != NULL ? CLAMP (atoi (rounds_text), 1, 50) : 2;
  GArray *ratios = g_array_new (FALSE, FALSE, sizeof (gint64));   /* ‰ */
  for (int round = 0; round < rounds; round++)
    {
      double cli = headless_rate (exp);
      best_cli = MAX (best_cli, cli);

      caml_window_set_experiment (win, caml_experiment_copy (exp), NULL, "benchmark");
      assert_true (iterate_until (not_loading, win, 300));
      iterate_until (always_false, NULL, 0.2);
      stall.last = 0;
      guint tick = g_timeout_add (5, on_stall_tick, &stall);
      activate (win, "train", NULL);
      if (round == 0)
        {
          /* A live learning-rate change reaches the trainer and is marked
           * (small enough not to change what is being measured). */
          double lr = caml_window_get_experiment (win)->optimizer.lr * 0.999;
          activate (win, "set-lr", g_variant_new_double (lr));
          assert_int_equal (caml_window_get_n_events (win), 1);
          assert_true (caml_window_get_experiment (win)->optimizer.lr == lr);
        }
      assert_true (iterate_until (run_ended, win, 3600));
      g_source_remove (tick);
      double rate = 0;
      caml_window_get_run_timing (win, &rate, &sample_seconds);
      best_gui = MAX (best_gui, rate);
      gint64 ratio = (gint64) (1000 * rate / cli);   /* the pair ran back to back */
      g_array_append_val (ratios, ratio);
    }
  g_signal_handler_disconnect (clock, before_id);
  g_signal_handler_disconnect (clock, after_id);
  g_signal_handler_disconnect (clock, layout_id);
  g_signal_handler_disconnect (clock, paint_id);
  print_message ("%s, %d steps: headless %.1f steps/s, with the window %.1f steps/s (%.1f %%); "
                 "%.3f s sampling plots; main loop stalls: p99 %.1f ms, max %.1f ms; "
                 "%u frames: median %.1f ms, p99 %.1f ms, max %.1f ms\n",
                 preset, exp->steps, best_cli, best_gui, 100 * best_gui / best_cli,
                 sample_seconds, percentile_ms (stall.gaps, 0.99), stall.max_gap / 1000.0,
                 frames.durations->len, percentile_ms (frames.durations, 0.5),
                 percentile_ms (frames.durations, 0.99), percentile_ms (frames.durations, 1.0));
  print_message ("%d rounds, each headless then in the window: median ratio %.1f %%, "
                 "lowest %.1f %%, highest %.1f %%\n", rounds, percentile_ms (ratios, 0.5) * 100,
                 percentile_ms (ratios, 0) * 100, percentile_ms (ratios, 1) * 100);
  g_array_unref (ratios);
  print_message ("%u frames over 16 ms; their update + layout: median %.1f ms, max %.1f ms; "
                 "paint: median %.1f ms, max %.1f ms\n",
                 frames.slow_layout->len, percentile_ms (frames.slow_layout, 0.5),
                 percentile_ms (frames.slow_layout, 1.0), percentile_ms (frames.slow_paint, 0.5),
                 percentile_ms (frames.slow_paint, 1.0));
  g_array_unref (stall.gaps);
  g_array_unref (frames.durations);
  g_array_unref (frames.slow_layout);
  g_array_unref (frames.slow_paint);
  caml_experiment_free (exp);
  gtk_window_destroy (GTK_WINDOW (win));
}


/* Compare with Baseline, then Stop before the baseline is built: no
 * baseline trains on behind the stopped run. */
static void
test_baseline_after_stop (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  gtk_spin_button_set_value (steps, 1000000);
  assert_true (iterate_until (can_train, win, 10));
  activate (win, "train", NULL);
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_RUNNING);
  activate (win, "compare-baseline", NULL);
  activate (win, "stop", NULL);
  assert_true (iterate_until (no_jobs, NULL, 10));
  assert_true (iterate_until (run_ended, win, 10));
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_STOPPED);
  double lr = 0;
  int em = 0;
  assert_false (caml_window_get_baseline_optimizer (win, &lr, &em));
  assert_false (caml_window_is_loading (win));
  gtk_window_destroy (GTK_WINDOW (win));
}

/* A correction ("Learning rate kept at 0.1: must be > 0") stays in the status
 * line: rebuilding the run loaded from a file does not cover it with a
 * second "Loaded the weights from …". */
static void
test_notice_kept (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-notice-XXXXXX", NULL);
  g_autofree char *exp_path = g_build_filename (dir, "xor.json", NULL);
  g_autofree char *wa = g_build_filename (dir, "a.weights", NULL);
  static const char json[] =
    "{ \"name\": \"xor\", \"seed\": 0, \"data\": { \"builtin\": \"xor\" },"
    "  \"model\": [ { \"layer\": \"ca_nn\", \"units\": 1, \"activation\": \"tanh\" } ],"
    "  \"loss\": \"mse\", \"optimizer\": { \"type\": \"adam\", \"lr\": 0.1 },"
    "  \"training\": { \"steps\": 20, \"batch_size\": 0, \"eval_every\": 10 } }";
  assert_true (g_file_set_contents (exp_path, json, -1, NULL));
  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (json, -1, "xor", &error);
  assert_non_null (exp);
  CamlDataset *train = NULL, *test = NULL;
  assert_true (caml_experiment_load_datasets (exp, &train, &test, &error));
  CamlModel *model = caml_experiment_build_model_for (exp, train, &error);
  assert_non_null (model);
  assert_true (caml_weights_save (model, wa, &error));

  CamlWindow *win = open_window_on (exp_path);
  caml_window_load_weights (win, wa);
  assert_true (iterate_until (can_train, win, 30));
  assert_string_equal (caml_window_get_last_notice (win), "Loaded the weights from a.weights");
  GtkSpinButton *lr = GTK_SPIN_BUTTON (template_child (win, "lr_spin"));
  type_into (win, lr, "0");
  gtk_spin_button_update (lr);
  type_into (win, lr, "0.2");   /* a change that rebuilds the run */
  gtk_spin_button_update (lr);
  assert_string_equal (status_text (win), "Learning rate kept at 0.1: must be > 0");
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_true (iterate_until (can_train, win, 30));
  /* (The notice, not the label: a slow machine may outlast its 6 s.) */
  assert_string_equal (caml_window_get_last_notice (win), "Learning rate kept at 0.1: must be > 0");
  gtk_window_destroy (GTK_WINDOW (win));
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_experiment_free (exp);
  g_unlink (wa);
  g_unlink (exp_path);
  g_rmdir (dir);
}

/* A build on built-in data is quiet for a moment: the progress bar and
 * the status keep what they said. */
static void
test_quiet_build (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  GtkProgressBar *bar = GTK_PROGRESS_BAR (template_child (win, "progress_bar"));
  g_autofree char *before = g_strdup (gtk_progress_bar_get_text (bar));
  g_autofree char *status_before = g_strdup (status_text (win));
  activate_editor (win, "select-layer", g_variant_new_int32 (0));
  activate_editor (win, "layer-option", g_variant_new ("(sd)", "units", 6.0));
  assert_true (caml_window_is_loading (win));
  assert_string_equal (gtk_progress_bar_get_text (bar), before);
  assert_string_equal (status_text (win), status_before);
  assert_true (iterate_until (not_loading, win, 10));

  /* Built-in data of the kind shown, made on a worker thread (a 1024²
   * surface grid): the plots, bar and status stay while they are made. */
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-grid-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "grid.json", NULL);
  static const char json[] =
    "{ \"name\": \"big-grid\", \"seed\": 0,"
    "  \"data\": { \"builtin\": \"surface\", \"grid\": 1024 },"
    "  \"model\": [ { \"layer\": \"ca_nn\", \"units\": 4, \"activation\": \"tanh\" },"
    "               { \"layer\": \"dense\", \"units\": 1, \"activation\": \"identity\" } ],"
    "  \"loss\": \"mse\", \"optimizer\": { \"type\": \"adam\", \"lr\": 0.01 },"
    "  \"training\": { \"steps\": 20, \"batch_size\": 32, \"eval_every\": 10 } }";
  assert_true (g_file_set_contents (path, json, -1, NULL));
  g_autofree char *bar_before = g_strdup (gtk_progress_bar_get_text (bar));
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_load_file (win, path, &error));
  assert_true (caml_window_is_loading (win));   /* returned at once; a job makes the data */
  assert_true (enabled (win, "train"));
  assert_true (enabled (win, "compare-baseline"));
  assert_true (caml_plot_view_has_plot (caml_window_get_plot_view (win, "surface")));
  assert_string_equal (gtk_progress_bar_get_text (bar), bar_before);
  assert_true (iterate_until (not_loading, win, 60));
  assert_non_null (strstr (caml_window_get_data_text (win), "10486 training"));
  assert_true (caml_plot_view_has_plot (caml_window_get_plot_view (win, "surface")));
  assert_true (enabled (win, "train"));
  gtk_window_destroy (GTK_WINDOW (win));
  g_unlink (path);
  g_rmdir (dir);
}

/* The set-aside weights of a replaced run (test-session.c: when they are
 * kept, saved and dropped) show in the banner, with Save Them… enabled
 * until they are saved or dismissed. */
static void
test_set_aside_banner (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  assert_false (enabled (win, "save-set-aside"));
  gtk_spin_button_set_value (steps, 50);
  assert_true (iterate_until (not_loading, win, 10));
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  gtk_spin_button_set_value (steps, 40);
  assert_true (iterate_until (not_loading, win, 10));
  assert_true (caml_window_has_set_aside_weights (win, NULL));
  assert_true (enabled (win, "save-set-aside"));
  assert_non_null (strstr (caml_window_get_error (win), "trained to step 50"));
  GtkButton *save = GTK_BUTTON (template_child (win, "banner_button"));
  assert_true (gtk_widget_get_visible (GTK_WIDGET (save)));
  assert_string_equal (gtk_actionable_get_action_name (GTK_ACTIONABLE (save)),
                       "win.save-set-aside");
  activate (win, "dismiss-banner", NULL);   /* Dismiss: they go */
  assert_false (caml_window_has_set_aside_weights (win, NULL));
  assert_false (enabled (win, "save-set-aside"));
  assert_null (caml_window_get_error (win));
  gtk_window_destroy (GTK_WINDOW (win));
}




/* Switching a two-class model's data keeps a loss it can train with: one
 * output under the sigmoid (it became softmax, and Train was refused). */
static void
test_loss_follows_data (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "rnn-sanity-gru"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_experiment (win)->loss, CAML_LOSS_SIGMOID_XENT);
  activate (win, "data", g_variant_new_string ("xor"));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_experiment (win)->loss, CAML_LOSS_MSE);
  activate (win, "data", g_variant_new_string ("rnn_sanity"));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_experiment (win)->loss, CAML_LOSS_SIGMOID_XENT);
  assert_true (enabled (win, "train"));

  /* Trained, then made invalid: no accuracy curve of the gone run stays. */
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  gtk_spin_button_set_value (steps, 20);
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  iterate_until (always_false, NULL, 0.2);
  assert_true (caml_plot_view_has_plot (caml_window_get_plot_view (win, "accuracy")));
  activate_editor (win, "select-layer", g_variant_new_int32 (0));
  activate_editor (win, "remove-layer", NULL);
  assert_false (caml_model_editor_is_valid (CAML_MODEL_EDITOR (template_child (win,
                                                                               "model_editor"))));
  assert_false (caml_plot_view_has_plot (caml_window_get_plot_view (win, "accuracy")));
  gtk_window_destroy (GTK_WINDOW (win));
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

/* Chosen text files are loaded on a worker thread from a copy of the
 * experiment, and used only when both load: a malformed one changes
 * nothing — experiment, data, run, previous run, modified flag, data
 * choice — and the banner names the file and the line. Of two choices made
 * one after the other, the later one counts, whichever loads first. */
static void
test_text_files_failed_load (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-text-bad-XXXXXX", NULL);
  g_autofree char *train = g_build_filename (dir, "train.tsv", NULL);
  g_autofree char *test = g_build_filename (dir, "test.tsv", NULL);
  g_autofree char *other = g_build_filename (dir, "other-train.tsv", NULL);
  g_autofree char *no_tab = g_build_filename (dir, "no-tab.tsv", NULL);
  g_autofree char *bad_label = g_build_filename (dir, "bad-label.tsv", NULL);
  write_text_tsv (train, 400);
  write_text_tsv (test, 40);
  write_text_tsv (other, 200);
  assert_true (g_file_set_contents (no_tab, "a fine film\t1\nno label on this line\n"
                                            "the end\t0\n", -1, NULL));
  assert_true (g_file_set_contents (bad_label, "a fine film\t1\nthe end\tbad\n", -1, NULL));

  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "rnn-sanity-gru"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "steps_spin")), 20);
  train_twice (win);

  /* Built-in data, a trained run: a malformed training file. */
  WindowSnapshot snap;
  take_snapshot (win, &snap);
  caml_window_use_text_files (win, no_tab, test);
  assert_true (caml_window_is_loading (win));
  assert_true (caml_experiment_equal (snap.exp, caml_window_get_experiment (win)));
  assert_true (iterate_until (not_loading, win, 30));
  const char *msg = caml_window_get_error (win);
  assert_non_null (msg);
  print_message ("%s\n", msg);
  g_autofree char *where = g_strdup_printf ("%s:2:", no_tab);
  assert_non_null (strstr (msg, where));
  assert_non_null (strstr (msg, "no tab"));
  assert_unchanged (win, &snap);
  free_snapshot (&snap);

  /* Files that load: the data change (and the drop-down with them). */
  caml_window_use_text_files (win, train, test);
  assert_true (iterate_until (not_loading, win, 30));
  assert_no_error (win);
  const CamlExperiment *exp = caml_window_get_experiment (win);
  assert_int_equal (exp->data.kind, CAML_DATA_TEXT);
  assert_string_equal (exp->data.text_paths[0], train);
  assert_string_equal (exp->data.text_paths[1], test);
  assert_int_equal (gtk_drop_down_get_selected (GTK_DROP_DOWN (template_child (win,
                                                                               "data_drop"))),
                    CAML_DATA_TEXT);
  assert_non_null (strstr (caml_window_get_data_text (win), "400 training and 40 test"));
  assert_false (enabled (win, "forget-previous"));   /* other data */
  assert_true (enabled (win, "train"));
  train_twice (win);

  /* Text data, a trained run: a test file with a label that is no class. */
  take_snapshot (win, &snap);
  caml_window_use_text_files (win, other, bad_label);
  assert_true (iterate_until (not_loading, win, 30));
  msg = caml_window_get_error (win);
  assert_non_null (msg);
  print_message ("%s\n", msg);
  g_autofree char *where_label = g_strdup_printf ("%s:2:", bad_label);
  assert_non_null (strstr (msg, where_label));
  assert_non_null (strstr (msg, "\"bad\""));
  assert_unchanged (win, &snap);

  /* Good files, then at once bad ones: the bad choice counts. */
  caml_window_use_text_files (win, other, test);
  caml_window_use_text_files (win, no_tab, test);
  assert_true (iterate_until (not_loading, win, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  msg = caml_window_get_error (win);
  assert_non_null (msg);
  assert_non_null (strstr (msg, where));
  assert_unchanged (win, &snap);
  free_snapshot (&snap);

  /* Bad files, then at once good ones: the good choice counts. */
  caml_window_use_text_files (win, no_tab, test);
  caml_window_use_text_files (win, other, test);
  assert_true (iterate_until (not_loading, win, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_no_error (win);
  assert_string_equal (caml_window_get_experiment (win)->data.text_paths[0], other);
  assert_non_null (strstr (caml_window_get_data_text (win), "200 training and 40 test"));
  assert_true (iterate_until (can_train, win, 30));

  /* A window closed while its files load: the job drops what it loaded. */
  caml_window_use_text_files (win, train, test);
  gtk_window_destroy (GTK_WINDOW (win));
  assert_true (iterate_until (no_jobs, NULL, 60));

  static const char *const files[] = { "train.tsv", "test.tsv", "other-train.tsv",
                                       "no-tab.tsv", "bad-label.tsv" };
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *f = g_build_filename (dir, files[i], NULL);
      g_unlink (f);
    }
  g_rmdir (dir);
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

/* dir/mnist with MNIST's four files (200 training and 100 test images),
 * dir becoming $CAML_DATA_DIR (its value before returned, to give back
 * with restore_data_dir); idx gets the paths, in MNIST's order. */


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

/* Whether the run's training set is the surface split made with seed. */
static gboolean
surface_split_of (CamlWindow *win, guint64 seed)
{
  const CamlExperiment *exp = caml_window_get_experiment (win);
  CamlRun *run = caml_window_peek_run (win);
  CamlDataset *train = NULL, *test = NULL;

  assert_non_null (run);
  caml_data_surface (exp->data.grid, exp->data.train_fraction, seed, &train, &test);
  const CamlDataset *used = caml_run_get_data (run)->train;
  gboolean same = used->n == train->n
                  && memcmp (used->x, train->x,
                             (size_t) train->n * caml_shape_size (&train->x_shape)
                             * sizeof (float)) == 0;
  caml_dataset_free (train);
  caml_dataset_free (test);
  return same;
}

/* Data picked are used even when the data in use are read again while
 * they load — Reload Data, a seed that the surface's split follows — and
 * data that follow the seed themselves are made with the seed as it is
 * when they are used: the choice is loaded again. A run that goes on
 * while they load is not discarded for them. */
static void
test_data_choice_kept (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (can_train, win, 30));
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_SURFACE);
  assert_false (caml_window_get_experiment (win)->data.has_split_seed);
  GtkSpinButton *seed = GTK_SPIN_BUTTON (template_child (win, "seed_spin"));

  /* XOR, and at once another seed: the surface in use is made again, XOR is
   * still used. */
  pick_data (win, CAML_DATA_XOR);
  gtk_spin_button_set_value (seed, 7);
  assert_true (iterate_until (not_loading, win, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_null (caml_window_get_error (win));
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_XOR);
  assert_int_equal (data_picked (win), CAML_DATA_XOR);
  assert_int_equal (caml_window_get_experiment (win)->seed, 7);
  assert_non_null (strstr (caml_window_get_data_text (win), "4 training"));

  /* The surface, and at once another seed: made with that seed. */
  pick_data (win, CAML_DATA_SURFACE);
  gtk_spin_button_set_value (seed, 9);
  assert_true (iterate_until (can_train, win, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_SURFACE);
  assert_true (surface_split_of (win, 9));

  /* XOR, and at once Reload Data: XOR is still used. */
  pick_data (win, CAML_DATA_XOR);
  activate (win, "reload-data", NULL);
  assert_true (iterate_until (not_loading, win, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_null (caml_window_get_error (win));
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_XOR);
  assert_int_equal (data_picked (win), CAML_DATA_XOR);

  /* A finished run; the surface, and at once more steps: the run goes on
   * (paused, ready to resume) and is not discarded under it — the surface
   * is not used, and the banner says why. */
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "steps_spin")), 20);
  assert_true (iterate_until (can_train, win, 30));
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  CamlRun *run = caml_window_peek_run (win);
  pick_data (win, CAML_DATA_SURFACE);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "steps_spin")), 40);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_PAUSED);
  /* At once, not when the load ends: the run may end before it does. */
  const char *msg = caml_window_get_error (win);
  assert_non_null (msg);
  print_message ("%s\n", msg);
  assert_non_null (strstr (msg, "the run went on"));
  assert_int_equal (data_picked (win), CAML_DATA_XOR);
  assert_true (iterate_until (not_loading, win, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_XOR);
  assert_int_equal (data_picked (win), CAML_DATA_XOR);
  assert_ptr_equal (caml_window_peek_run (win), run);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_PAUSED);

  /* Resumed to its end, the run stays (the surface was dropped already). */
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_ptr_equal (caml_window_peek_run (win), run);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_XOR);

  /* The surface, and at once weights loaded: they are loaded into a run on
   * the data in use, which the surface would replace — it is dropped. */
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-kept-XXXXXX", NULL);
  g_autofree char *weights = g_build_filename (dir, "xor.weights", NULL);
  caml_window_save_weights (win, weights);
  assert_true (iterate_until (no_jobs, NULL, 30));
  pick_data (win, CAML_DATA_SURFACE);
  caml_window_load_weights (win, weights);
  msg = caml_window_get_error (win);
  assert_non_null (msg);
  assert_non_null (strstr (msg, "weights were loaded meanwhile"));
  assert_int_equal (data_picked (win), CAML_DATA_XOR);
  assert_true (iterate_until (not_loading, win, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_XOR);
  assert_non_null (caml_window_peek_run (win));
  g_unlink (weights);
  g_rmdir (dir);
  gtk_window_destroy (GTK_WINDOW (win));
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



/* Held-out training data (data.validation_fraction) is called what it is:
 * not "test". */
static void
test_validation_labels (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-validation-XXXXXX", NULL);
  g_autofree char *path = write_words_experiment (dir, ", \"validation_fraction\": 0.2",
                                                  "{ \"layer\": \"ca_bsfe\" }", 20);
  CamlWindow *win = open_window_on (path);
  assert_non_null (strstr (caml_window_get_data_text (win), "validation samples"));
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  iterate_until (always_false, NULL, 0.2);
  g_autofree char *labels = loss_labels (win);
  assert_string_equal (labels, "train loss (smoothed)|validation loss");
  const CamlPlotLine *acc = caml_plot_view_get_line (caml_window_get_plot_view (win, "accuracy"));
  assert_non_null (acc);
  assert_string_equal (caml_plot_line_get_label (acc, 0), "validation accuracy");
  assert_non_null (strstr (status_text (win), "Validation accuracy"));
  gtk_window_destroy (GTK_WINDOW (win));
  remove_words_experiment (dir);
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
    cmocka_unit_test (test_plot_view_fast_scenes),
    cmocka_unit_test (test_threads_menu),
    cmocka_unit_test (test_focus_leaves_locked_field),
    cmocka_unit_test (test_undo_to_clean),
    cmocka_unit_test (test_loss_hover),
    cmocka_unit_test (test_extend_finished_run),
    cmocka_unit_test (test_fields_leave_undo),
    cmocka_unit_test (test_autosave),
    cmocka_unit_test (test_ready_to_train),
    cmocka_unit_test (test_options_text),
    cmocka_unit_test (test_previous_run),
    cmocka_unit_test (test_smoothing_follows_axis),
    cmocka_unit_test (test_baseline_after_stop),
    cmocka_unit_test (test_notice_kept),
    cmocka_unit_test (test_quiet_build),
    cmocka_unit_test (test_set_aside_banner),
    cmocka_unit_test (test_loss_follows_data),
    cmocka_unit_test (test_choose_text_files),
    cmocka_unit_test (test_text_files_failed_load),
    cmocka_unit_test (test_data_kind_failed_load),
    cmocka_unit_test (test_data_choice_kept),
    cmocka_unit_test (test_data_choice_shown),
    cmocka_unit_test (test_validation_labels),
    cmocka_unit_test (test_word_vector_coverage),
    cmocka_unit_test (test_focus_after_menu),
    cmocka_unit_test (test_pending_edit),
    cmocka_unit_test (test_value_corrected),
    cmocka_unit_test (test_model_header_short),
    cmocka_unit_test (test_xor_ca_nn),
    cmocka_unit_test (test_ca_nn_parts),
    cmocka_unit_test (test_words),
    cmocka_unit_test (test_words_page_chosen),
    cmocka_unit_test (test_words_per_position),
    cmocka_unit_test (test_open_run),
    cmocka_unit_test (test_sigma_maps),
    cmocka_unit_test (test_export_matches_cli),
    cmocka_unit_test (test_compare_baseline),
    cmocka_unit_test (test_compare_after_run),
    cmocka_unit_test (test_data_picker),
    cmocka_unit_test (test_divergence),
    cmocka_unit_test (test_lr_any_value),
    cmocka_unit_test (test_weight_decay_field),
    cmocka_unit_test (test_save_as_title),
    cmocka_unit_test (test_divergence_feedback),
    cmocka_unit_test (test_stop_before_evaluation),
    cmocka_unit_test (test_recent_files),
    cmocka_unit_test (test_open_several),
    cmocka_unit_test (test_drag_and_drop),
    cmocka_unit_test (test_mnist_loading),
    cmocka_unit_test (test_text_loading),
    cmocka_unit_test (test_small_window),
    cmocka_unit_test (test_narrow_window),
    cmocka_unit_test (test_quit),
    cmocka_unit_test (test_quit_pending_edit),
    cmocka_unit_test (test_quit_asking_destroyed),
    cmocka_unit_test (test_focus_without_edit),
    cmocka_unit_test (test_renderer_choice),
    cmocka_unit_test (test_throughput),
  };
  g_autoptr (GError) error = NULL;

  /* A GLib or GTK critical is a bug of the workbench (a handler left on a
   * destroyed window, a banner measured inconsistently): it fails the run. */
  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  autosave_dir = g_dir_make_tmp ("caml-autosave-XXXXXX", NULL);
  g_setenv ("CAML_AUTOSAVE_DIR", autosave_dir, TRUE);
  app = caml_application_new (G_APPLICATION_NON_UNIQUE);
  if (!g_application_register (G_APPLICATION (app), NULL, &error))
    {
      fprintf (stderr, "test-gui: %s\n", error->message);
      return 1;
    }
  /* One test or a few by name, when debugging: CAML_GUI_TEST_FILTER=test_quit* */
  if (g_getenv ("CAML_GUI_TEST_FILTER") != NULL)
    cmocka_set_test_filter (g_getenv ("CAML_GUI_TEST_FILTER"));
  int failed = cmocka_run_group_tests (tests, NULL, NULL);
  g_object_unref (app);
  /* Windows destroyed without closing keep their autosaves (this pid's). */
  GDir *left = g_dir_open (autosave_dir, 0, NULL);
  for (const char *name; left != NULL && (name = g_dir_read_name (left)) != NULL;)
    {
      g_autofree char *path = g_build_filename (autosave_dir, name, NULL);
      g_unlink (path);
    }
  g_clear_pointer (&left, g_dir_close);
  g_rmdir (autosave_dir);
  g_free (autosave_dir);
  return failed;
}
