/* gui-harness.c — see gui-harness.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <glib/gstdio.h>

#include "caml-model-editor.h"
#include "gui-harness.h"

CamlApplication *app;
char *autosave_dir;

gboolean
is_mapped (gpointer data)
{
  return gtk_widget_get_mapped (GTK_WIDGET (data));
}

gboolean
not_loading (gpointer data)
{
  return !caml_window_is_loading (CAML_WINDOW (data));
}

gboolean
run_ended (gpointer data)
{
  CamlTrainerState s = caml_window_get_state (CAML_WINDOW (data));
  return s == CAML_TRAINER_FINISHED || s == CAML_TRAINER_STOPPED || s == CAML_TRAINER_FAILED;
}

void
activate (CamlWindow *win, const char *action, GVariant *param)
{
  g_assert_true (g_action_group_get_action_enabled (G_ACTION_GROUP (win), action));
  g_action_group_activate_action (G_ACTION_GROUP (win), action, param);
}

gboolean
enabled (CamlWindow *win, const char *action)
{
  return g_action_group_get_action_enabled (G_ACTION_GROUP (win), action);
}

GActionGroup *
editor_actions (CamlWindow *win)
{
  return caml_model_editor_get_actions (CAML_MODEL_EDITOR (template_child (win, "model_editor")));
}

void
activate_editor (CamlWindow *win, const char *action, GVariant *param)
{
  g_assert_true (g_action_group_get_action_enabled (editor_actions (win), action));
  g_action_group_activate_action (editor_actions (win), action, param);
}

gboolean
editor_enabled (CamlWindow *win, const char *action)
{
  return g_action_group_get_action_enabled (editor_actions (win), action);
}

void
save_screenshot (GtkWidget *widget, const char *path)
{
  int w = 0, h = 0;
  GdkPaintable *paintable = gtk_widget_paintable_new (widget);
  GskRenderNode *node = NULL;

  /* A widget that has not been drawn since it last changed has no render
   * node yet, and one just shown no size; under the sanitizers the next
   * frame can take a while. */
  for (int tries = 0; node == NULL && tries < 100; tries++)
    {
      w = gtk_widget_get_width (widget);
      h = gtk_widget_get_height (widget);
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

gboolean
autosave_written (gpointer data)
{
  g_autofree char *path = caml_window_get_autosave_path (CAML_WINDOW (data));
  return path != NULL && g_file_test (path, G_FILE_TEST_EXISTS);
}

gpointer
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

GtkWidget *
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

GtkWidget *
template_child (CamlWindow *win, const char *name)
{
  GObject *child = gtk_widget_get_template_child (GTK_WIDGET (win), CAML_TYPE_WINDOW, name);
  if (child == NULL)
    child = G_OBJECT (find_by_id (GTK_WIDGET (win), name));
  assert_non_null (child);
  return GTK_WIDGET (child);
}

void
type_into (CamlWindow *win, GtkSpinButton *spin, const char *text)
{
  assert_true (gtk_widget_grab_focus (GTK_WIDGET (spin)));
  gtk_editable_set_text (GTK_EDITABLE (spin), text);
  assert_true (gtk_widget_is_ancestor (gtk_root_get_focus (GTK_ROOT (win)), GTK_WIDGET (spin)));
}

const char *
status_text (CamlWindow *win)
{
  return gtk_label_get_text (GTK_LABEL (template_child (win, "status_label")));
}

char *
loss_labels (CamlWindow *win)
{
  const CamlPlotLine *line = caml_plot_view_get_line (caml_window_get_plot_view (win, "loss"));
  GString *out = g_string_new (NULL);
  for (size_t i = 0; line != NULL && i < caml_plot_line_get_n_series (line); i++)
    g_string_append_printf (out, "%s%s", i > 0 ? "|" : "", caml_plot_line_get_label (line, i));
  return g_string_free (out, FALSE);
}

gboolean
can_train (gpointer data)
{
  return !caml_window_is_loading (CAML_WINDOW (data))
         && g_action_group_get_action_enabled (G_ACTION_GROUP (data), "train");
}

gboolean
is_enabled_save_run (gpointer data)
{
  return g_action_group_get_action_enabled (G_ACTION_GROUP (data), "save-run");
}

CamlWindow *
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

gboolean
notice_has (CamlWindow *win, const char *text)
{
  const char *notice = caml_window_get_last_notice (win);
  return notice != NULL && strstr (notice, text) != NULL;
}

gboolean
has_error_with (CamlWindow *win, const char *text)
{
  const char *msg = caml_window_get_error (win);
  return msg != NULL && strstr (msg, text) != NULL;
}

gboolean
run_failed_or_finished (gpointer data)
{
  CamlTrainerState s = caml_window_get_state (CAML_WINDOW (data));
  return s == CAML_TRAINER_FAILED || s == CAML_TRAINER_FINISHED;
}

const char *
placeholder_of (CamlWindow *win, const char *view)
{
  CamlPlotView *v = caml_window_get_plot_view (win, view);
  return caml_plot_view_has_plot (v) ? NULL : caml_plot_view_get_placeholder (v);
}

GtkWindow *
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

gboolean
gui_harness_init (const char *program)
{
  g_autoptr (GError) error = NULL;

  /* A GLib or GTK critical is a bug of the workbench (a handler left on a
   * destroyed window, a banner measured inconsistently): it fails the run. */
  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  autosave_dir = g_dir_make_tmp ("caml-autosave-XXXXXX", NULL);
  g_setenv ("CAML_AUTOSAVE_DIR", autosave_dir, TRUE);
  app = caml_application_new (G_APPLICATION_NON_UNIQUE);
  if (!g_application_register (G_APPLICATION (app), NULL, &error))
    {
      fprintf (stderr, "%s: %s\n", program, error->message);
      return FALSE;
    }
  /* One test or a few by name, when debugging: CAML_GUI_TEST_FILTER=test_quit* */
  if (g_getenv ("CAML_GUI_TEST_FILTER") != NULL)
    cmocka_set_test_filter (g_getenv ("CAML_GUI_TEST_FILTER"));
  return TRUE;
}

int
gui_harness_finish (int failed)
{
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
