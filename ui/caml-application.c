/* caml-application.c — the application: app-level actions, accelerators,
 * settings, the presets menu, the dark style, opening files, and offering
 * the autosaves a crashed session left behind (caml-autosave.h).
 *
 *   caml-workbench [FILE.json…] [--preset NAME]
 */
#include "caml-application.h"
#include "caml-window.h"
#include "caml-autosave.h"
#include "caml-new-dialog.h"
#include "presets.h"
#include "preset-guide.h"

#include <string.h>
#include <glib/gstdio.h>

/* Last: Xlib's macros (None, Bool, Status…) stay out of the other headers. */
#if CAML_HAVE_X11
#include <X11/Xlib.h>
#endif

struct _CamlApplication {
  GtkApplication parent_instance;

  /* owned */
  GSettings *settings;        /* NULL without an installed schema */
  GMenu     *presets_menu;
  GMenu     *recent_menu;
  GMenu     *threads_menu;
  char      *initial_preset;  /* --preset */
  GDBusProxy *portal;         /* org.freedesktop.portal.Settings, may be NULL */
  gboolean   system_dark;
  GPtrArray *leftovers;       /* autosave paths of crashed sessions, NULL until looked for */
  GPtrArray *quitting;        /* app.quit under way: the windows (held) to close, or NULL */
  guint      quit_asked;      /* … the first of them not asked yet */
  GPtrArray *quit_discarded;  /* … those whose changes were discarded (borrowed) */
  GtkWindow *quit_waiting;    /* … the one asking now, until it answers (borrowed) */

  /* borrowed */
  GtkWindow *recovery_window; /* weak: the window whose banner offers them */
};

G_DEFINE_FINAL_TYPE (CamlApplication, caml_application, GTK_TYPE_APPLICATION)

/* ----------------------------------------------------------- dark style */

static void
apply_style (CamlApplication *self)
{
  g_autofree char *style = self->settings != NULL
                           ? g_settings_get_string (self->settings, "style")
                           : g_strdup ("system");
  gboolean dark = g_str_equal (style, "dark")
                  || (g_str_equal (style, "system") && self->system_dark);
  GtkSettings *gtk_settings = gtk_settings_get_default ();
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), "style");

  if (gtk_settings != NULL)
    g_object_set (gtk_settings, "gtk-application-prefer-dark-theme", dark, NULL);
  if (action != NULL)
    g_simple_action_set_state (G_SIMPLE_ACTION (action), g_variant_new_string (style));
}

/* color-scheme: 0 no preference, 1 prefer dark, 2 prefer light. */
static void
set_color_scheme (CamlApplication *self, GVariant *value)
{
  while (value != NULL && g_variant_is_of_type (value, G_VARIANT_TYPE_VARIANT))
    {
      GVariant *inner = g_variant_get_variant (value);
      g_variant_unref (value);
      value = inner;
    }
  if (value != NULL && g_variant_is_of_type (value, G_VARIANT_TYPE_UINT32))
    self->system_dark = g_variant_get_uint32 (value) == 1;
  g_clear_pointer (&value, g_variant_unref);
  apply_style (self);
}

static void
on_portal_signal (GDBusProxy *proxy, const char *sender, const char *signal,
                  GVariant *params, CamlApplication *self)
{
  const char *ns = NULL, *key = NULL;
  GVariant *value = NULL;

  if (!g_str_equal (signal, "SettingChanged"))
    return;
  g_variant_get (params, "(&s&sv)", &ns, &key, &value);
  if (g_str_equal (ns, "org.freedesktop.appearance") && g_str_equal (key, "color-scheme"))
    set_color_scheme (self, value);
  else
    g_variant_unref (value);
}

static void
on_portal_read (GObject *source, GAsyncResult *result, gpointer user_data)
{
  CamlApplication *self = user_data;
  g_autoptr (GVariant) reply = g_dbus_proxy_call_finish (G_DBUS_PROXY (source), result, NULL);
  GVariant *value = NULL;

  if (reply != NULL)
    {
      g_variant_get (reply, "(v)", &value);
      set_color_scheme (self, value);
    }
  g_object_unref (self);
}

static void
on_portal_ready (GObject *source, GAsyncResult *result, gpointer user_data)
{
  CamlApplication *self = user_data;

  self->portal = g_dbus_proxy_new_for_bus_finish (result, NULL);
  if (self->portal != NULL && g_dbus_proxy_get_name_owner (self->portal) != NULL)
    {
      g_signal_connect (self->portal, "g-signal", G_CALLBACK (on_portal_signal), self);
      g_dbus_proxy_call (self->portal, "Read",
                         g_variant_new ("(ss)", "org.freedesktop.appearance", "color-scheme"),
                         G_DBUS_CALL_FLAGS_NONE, 2000, NULL, on_portal_read,
                         g_object_ref (self));
    }
  g_object_unref (self);
}

static void
watch_system_style (CamlApplication *self)
{
  g_dbus_proxy_new_for_bus (G_BUS_TYPE_SESSION,
                            G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES
                            | G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START_AT_CONSTRUCTION,
                            NULL, "org.freedesktop.portal.Desktop",
                            "/org/freedesktop/portal/desktop",
                            "org.freedesktop.portal.Settings", NULL, on_portal_ready,
                            g_object_ref (self));
}

/* ---------------------------------------------------------------- setup */

static GSettings *
find_settings (void)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr (GSettingsSchema) schema = NULL;

  if (source != NULL)
    schema = g_settings_schema_source_lookup (source, CAML_APP_ID, TRUE);
#ifdef CAML_BUILD_SCHEMA_DIR
  if (schema == NULL)
    {
      /* Run from the build tree without installing. */
      g_autoptr (GSettingsSchemaSource) build =
        g_settings_schema_source_new_from_directory (CAML_BUILD_SCHEMA_DIR, source, FALSE,
                                                     NULL);
      if (build != NULL)
        schema = g_settings_schema_source_lookup (build, CAML_APP_ID, FALSE);
    }
#endif
  return schema != NULL ? g_settings_new_full (schema, NULL, NULL) : NULL;
}

/* "measured 0.8824 test accuracy" (the first figure), or "not measured yet". */
static char *
measured_short (GHashTable *measures, const char *name)
{
  GPtrArray *list = measures != NULL ? g_hash_table_lookup (measures, name) : NULL;
  if (list == NULL || list->len == 0)
    return g_strdup ("not measured yet");
  const CamlPresetMeasure *m = list->pdata[0];
  return g_strdup_printf ("measured %.4g %s", m->value, caml_preset_metric_label (m->metric));
}

/* The presets in the paper's sections (studio/preset-guide.c, the start
 * page's grouping), each with the paper's claim and what this build
 * measured of it. */
static void
build_presets_menu (CamlApplication *self)
{
  g_auto (GStrv) names = caml_presets_list ();
  g_autoptr (GHashTable) measures = caml_preset_measures_load (NULL);
  GMenu *sections[CAML_PRESET_N_SECTIONS];

  self->presets_menu = g_menu_new ();
  for (int s = 0; s < CAML_PRESET_N_SECTIONS; s++)
    sections[s] = g_menu_new ();
  for (int i = 0; names != NULL && names[i] != NULL; i++)
    {
      CamlExperiment *exp = caml_presets_load (names[i], NULL);
      CamlPresetSection section = exp != NULL ? caml_preset_section_of (exp)
                                  : CAML_PRESET_SECTION_OTHER;
      g_autofree char *label = NULL;
      g_autofree char *measured = measured_short (measures, names[i]);
      g_autoptr (GMenuItem) item = NULL;

      /* The paper's claim, said to be the paper's: some are not reproduced
       * here (README), and the menu must not state them as results; what
       * the build reached beside it. */
      if (exp != NULL && exp->paper != NULL)
        label = g_strdup_printf ("%s — paper: %s — %s", names[i], exp->paper, measured);
      else
        label = g_strdup_printf ("%s — %s", names[i], measured);
      /* Underscores in preset names are not mnemonics. */
      g_autoptr (GString) escaped = g_string_new (label);
      g_string_replace (escaped, "_", "__", 0);
      item = g_menu_item_new (escaped->str, NULL);
      g_menu_item_set_action_and_target_value (item, "app.preset",
                                               g_variant_new_string (names[i]));
      g_menu_append_item (sections[section], item);
      g_clear_pointer (&exp, caml_experiment_free);
    }
  for (int s = 0; s < CAML_PRESET_N_SECTIONS; s++)
    {
      if (g_menu_model_get_n_items (G_MENU_MODEL (sections[s])) > 0)
        g_menu_append_section (self->presets_menu, caml_preset_section_title (s),
                               G_MENU_MODEL (sections[s]));
      g_object_unref (sections[s]);
    }
}

/* ---------------------------------------------------------- recent files
 *
 * A GSettings string list rather than GtkRecentManager for the menu: GTK 4
 * has no recent-chooser menu to build on, and the recent manager's store is
 * the desktop's (shared by every application, written lazily, in the
 * user's home even under tests), so the menu would filter someone else's
 * list. The setting is this application's own, and the memory backend makes
 * it testable. A run opened with Open Run is listed as its folder. The desktop still hears of each file (GtkRecentManager), so
 * file choosers list it under Recent. */

static void
rebuild_recent_menu (CamlApplication *self)
{
  g_auto (GStrv) paths = self->settings != NULL
                         ? g_settings_get_strv (self->settings, "recent-files") : NULL;
  g_autofree char *home = g_strdup (g_get_home_dir ());

  g_menu_remove_all (self->recent_menu);
  for (int i = 0; paths != NULL && paths[i] != NULL; i++)
    {
      /* Shown, so valid UTF-8 whatever the file names' bytes. */
      g_autofree char *base = g_filename_display_basename (paths[i]);
      g_autofree char *raw_dir = g_path_get_dirname (paths[i]);
      g_autofree char *dir = g_filename_display_name (raw_dir);
      g_autofree char *short_dir = home != NULL && g_str_has_prefix (dir, home)
                                   ? g_strconcat ("~", dir + strlen (home), NULL)
                                   : g_strdup (dir);
      /* a run's folder (Open Run) opens as a run */
      gboolean run = g_file_test (paths[i], G_FILE_TEST_IS_DIR);
      g_autofree char *label = g_strdup_printf ("%s%s — %s", base, run ? " (run)" : "",
                                                short_dir);
      g_autoptr (GString) escaped = g_string_new (label);
      g_string_replace (escaped, "_", "__", 0);   /* not mnemonics */
      g_autoptr (GMenuItem) item = g_menu_item_new (escaped->str, NULL);
      g_menu_item_set_action_and_target_value (item, "app.open-recent",
                                               g_variant_new_string (paths[i]));
      g_menu_append_item (self->recent_menu, item);
    }
  if (paths == NULL || paths[0] == NULL)
    g_menu_append (self->recent_menu, "No Recent Experiments", "app.no-recent");
}

static void
set_recent (CamlApplication *self, const char *first, const char *drop)
{
  if (self->settings == NULL)
    return;
  g_auto (GStrv) old = g_settings_get_strv (self->settings, "recent-files");
  g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
  int n = 0;
  if (first != NULL)
    {
      g_strv_builder_add (builder, first);
      n++;
    }
  for (int i = 0; old[i] != NULL && n < CAML_MAX_RECENT; i++)
    if (g_strcmp0 (old[i], first) != 0 && g_strcmp0 (old[i], drop) != 0)
      {
        g_strv_builder_add (builder, old[i]);
        n++;
      }
  g_auto (GStrv) paths = g_strv_builder_end (builder);
  g_settings_set_strv (self->settings, "recent-files", (const char *const *) paths);
}

void
caml_application_note_recent (CamlApplication *self, const char *path)
{
  g_autofree char *abs = g_canonicalize_filename (path, NULL);
  g_autofree char *uri = g_filename_to_uri (abs, NULL, NULL);

  if (uri != NULL)
    gtk_recent_manager_add_item (gtk_recent_manager_get_default (), uri);
  set_recent (self, abs, NULL);
}

GMenuModel *
caml_application_get_recent_menu (CamlApplication *self)
{
  return G_MENU_MODEL (self->recent_menu);
}

static CamlWindow *
active_window (CamlApplication *self)
{
  GtkWindow *win = gtk_application_get_active_window (GTK_APPLICATION (self));
  return CAML_IS_WINDOW (win) ? CAML_WINDOW (win) : NULL;
}

static void
show_blank (CamlWindow *win, CamlDataKind kind)
{
  caml_window_set_experiment (win, caml_presets_new_blank (kind), NULL, "new experiment");
}

GtkWindow *
caml_application_open_preset (CamlApplication *self, const char *name)
{
  g_autoptr (GError) error = NULL;
  CamlWindow *win = caml_window_new (GTK_APPLICATION (self));

  if (name == NULL || *name == '\0')
    show_blank (win, CAML_DATA_SURFACE);   /* a start on nothing but the data */
  else
    {
      CamlExperiment *exp = caml_presets_load (name, &error);
      if (exp != NULL)
        {
          g_autofree char *origin = g_strdup_printf ("preset %s", name);
          caml_window_set_experiment (win, exp, NULL, origin);
        }
      else
        caml_window_show_error (win, error->message);
    }
  gtk_window_present (GTK_WINDOW (win));
  return GTK_WINDOW (win);
}

/* Where an experiment opens — the one rule, caml_window_why_kept: in
 * place of the active window's when that has nothing to lose, else in a
 * new window — and the notice that says which, shown once it is there
 * (NULL when there was no window). */
static CamlWindow *
window_to_open_in (CamlApplication *self, CamlWindow *win, char **notice)
{
  g_autofree char *why = win != NULL ? caml_window_why_kept (win) : NULL;

  *notice = NULL;
  if (win != NULL && why == NULL)
    {
      *notice = g_strdup ("Opened here: nothing was unsaved and no run under way");
      return win;
    }
  if (why != NULL)
    *notice = g_strdup_printf ("Opened in a new window: %s", why);
  win = caml_window_new (GTK_APPLICATION (self));
  gtk_window_present (GTK_WINDOW (win));
  return win;
}

static void
show_opened_notice (CamlWindow *win, const char *notice)
{
  if (notice != NULL)
    caml_window_show_notice (win, notice, FALSE);
}

GtkWindow *
caml_application_new_experiment (CamlApplication *self, CamlDataKind kind)
{
  g_autofree char *notice = NULL;
  CamlWindow *win = window_to_open_in (self, active_window (self), &notice);

  show_blank (win, kind);
  show_opened_notice (win, notice);
  return GTK_WINDOW (win);
}

static void
on_new_chosen (CamlDataKind kind, gpointer user_data)
{
  caml_application_new_experiment (CAML_APPLICATION (user_data), kind);
}

/* File → New (Ctrl+N): which data set, then a blank experiment on it. */
static void
action_new (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlApplication *self = user_data;
  CamlWindow *win = active_window (self);

  caml_new_dialog_present (win != NULL ? GTK_WINDOW (win) : NULL, on_new_chosen, self);
}

/* ------------------------------------------------------------- recovery */

/* Tells win about the leftovers (loading each to tell readable files from
 * corrupt ones), or hides the offer when none are left. */
static void
show_leftovers (CamlApplication *self, CamlWindow *win)
{
  guint readable = 0, corrupt = 0;
  g_autofree char *first_error = NULL;

  for (guint i = 0; i < self->leftovers->len; i++)
    {
      g_autoptr (GError) error = NULL;
      CamlExperiment *exp = caml_experiment_load_file (self->leftovers->pdata[i], &error);
      if (exp != NULL)
        readable++;
      else if (corrupt++ == 0)
        first_error = g_strdup (error->message);
      g_clear_pointer (&exp, caml_experiment_free);
    }
  if (readable + corrupt == 0)
    {
      if (g_strcmp0 (caml_window_get_error (win), NULL) != 0)
        caml_window_show_error (win, NULL);
      return;
    }

  GString *text = g_string_new (NULL);
  if (readable > 0)
    g_string_append_printf (text, "%u unsaved experiment%s from a session that ended "
                            "unexpectedly can be recovered.", readable,
                            readable == 1 ? "" : "s");
  if (corrupt > 0)
    g_string_append_printf (text, "%s%u autosave%s from a session that ended unexpectedly "
                            "could not be read: %s", readable > 0 ? " " : "", corrupt,
                            corrupt == 1 ? "" : "s", first_error);
  caml_window_show_recovery (win, text->str, readable > 0);
  g_string_free (text, TRUE);
  g_set_weak_pointer (&self->recovery_window, GTK_WINDOW (win));
}

/* Once per run, in the first window shown — or, when that window's banner
 * says something else (busy: files that could not be opened), in a window
 * of its own. */
static void
offer_recovery (CamlApplication *self, CamlWindow *win, CamlWindow *busy)
{
  if (self->leftovers != NULL || win == NULL)
    return;
  self->leftovers = caml_autosave_list_leftovers ();
  if (self->leftovers->len == 0)
    return;
  if (win == busy)
    win = CAML_WINDOW (caml_application_open_preset (self, self->initial_preset));
  show_leftovers (self, win);
}

/* Opens each readable leftover in a new window, modified and titled
 * "(recovered)"; once the window has written its own autosave the leftover
 * goes. Corrupt ones stay until Discard. */
static void
action_recover_autosaves (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlApplication *self = user_data;
  g_autoptr (GPtrArray) kept = g_ptr_array_new_with_free_func (g_free);

  if (self->leftovers == NULL)
    return;
  for (guint i = 0; i < self->leftovers->len; i++)
    {
      const char *path = self->leftovers->pdata[i];
      g_autoptr (GError) error = NULL;
      CamlExperiment *exp = caml_experiment_load_file (path, &error);
      if (exp == NULL)
        {
          g_ptr_array_add (kept, g_strdup (path));
          continue;
        }
      CamlWindow *win = caml_window_new (GTK_APPLICATION (self));
      caml_window_set_experiment (win, exp, NULL, NULL);
      caml_window_mark_recovered (win);
      if (caml_window_autosave_now (win, &error))
        g_unlink (path);
      else
        caml_window_show_error (win, error->message);
      gtk_window_present (GTK_WINDOW (win));
    }
  g_ptr_array_unref (self->leftovers);
  self->leftovers = g_steal_pointer (&kept);
  if (self->recovery_window != NULL)
    show_leftovers (self, CAML_WINDOW (self->recovery_window));
}

static void
action_discard_autosaves (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlApplication *self = user_data;

  if (self->leftovers == NULL)
    return;
  for (guint i = 0; i < self->leftovers->len; i++)
    g_unlink (self->leftovers->pdata[i]);
  g_ptr_array_set_size (self->leftovers, 0);
  if (self->recovery_window != NULL)
    show_leftovers (self, CAML_WINDOW (self->recovery_window));
}

/* -------------------------------------------------------------- actions */

/* Quitting asks first and closes after: every window with unsaved changes
 * asks in turn (win.ask-close, answered with "close-answered"); a Cancel
 * ends the quit with every window still open. Once all have answered the
 * windows close — closing one stops and joins its trainer — and the
 * application ends with its last window. */
static void quit_ask_next (CamlApplication *self);

static void
quit_end (CamlApplication *self)
{
  self->quit_waiting = NULL;
  g_clear_pointer (&self->quitting, g_ptr_array_unref);
  g_clear_pointer (&self->quit_discarded, g_ptr_array_unref);
}

static gboolean
is_open (CamlApplication *self, GtkWindow *win)
{
  return g_list_find (gtk_application_get_windows (GTK_APPLICATION (self)), win) != NULL;
}

static void
on_quit_answer (CamlWindow *win, gboolean may_close, CamlApplication *self)
{
  g_signal_handlers_disconnect_by_func (win, on_quit_answer, self);
  self->quit_waiting = NULL;
  if (self->quitting == NULL)
    return;
  if (!may_close)
    {
      quit_end (self);
      return;
    }
  if (caml_window_is_modified (win))
    g_ptr_array_add (self->quit_discarded, win);
  quit_ask_next (self);
}

/* GtkApplication::window-removed: the window asking was destroyed before it
 * answered (its question goes with it, without a response); the quit goes
 * on with the others. */
static void
on_quit_window_removed (GtkApplication *app, GtkWindow *win, CamlApplication *self)
{
  if (self->quitting == NULL || win != self->quit_waiting)
    return;
  g_signal_handlers_disconnect_by_func (win, on_quit_answer, self);
  self->quit_waiting = NULL;
  quit_ask_next (self);
}

static void
quit_ask_next (CamlApplication *self)
{
  while (self->quit_asked < self->quitting->len)
    {
      GtkWindow *win = self->quitting->pdata[self->quit_asked++];
      if (!CAML_IS_WINDOW (win) || !is_open (self, win))
        continue;
      /* Every window is asked, not only those modified now: asking takes a
       * value still being typed first, which may modify it. The answer
       * comes at once when there is nothing to ask. */
      g_signal_connect (win, "close-answered", G_CALLBACK (on_quit_answer), self);
      self->quit_waiting = win;
      g_action_group_activate_action (G_ACTION_GROUP (win), "ask-close", NULL);
      return;
    }

  /* Everything saved or discarded: close them all. */
  g_autoptr (GPtrArray) windows = g_steal_pointer (&self->quitting);
  g_autoptr (GPtrArray) discarded = g_steal_pointer (&self->quit_discarded);
  for (guint i = 0; i < windows->len; i++)
    {
      GtkWindow *win = windows->pdata[i];
      if (!is_open (self, win))
        continue;
      if (g_ptr_array_find (discarded, win, NULL))
        g_object_set (win, "close-confirmed", TRUE, NULL);
      gtk_window_close (win);
    }
}

static void
action_quit (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlApplication *self = user_data;
  GList *windows = gtk_application_get_windows (GTK_APPLICATION (self));

  if (self->quitting != NULL && self->quit_asked > 0)
    {
      GtkWindow *asking = self->quitting->pdata[self->quit_asked - 1];
      if (is_open (self, asking))
        {
          gtk_window_present (asking);   /* it is asking already */
          return;
        }
      /* Closed while it asked: start again. */
      g_signal_handlers_disconnect_by_func (asking, on_quit_answer, self);
      quit_end (self);
    }
  self->quitting = g_ptr_array_new_with_free_func (g_object_unref);
  self->quit_discarded = g_ptr_array_new ();
  self->quit_asked = 0;
  for (GList *l = windows; l != NULL; l = l->next)
    g_ptr_array_add (self->quitting, g_object_ref (l->data));
  quit_ask_next (self);
}

static void
action_about (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  static const char *authors[] = { "The CAML Workbench authors", NULL };

  gtk_show_about_dialog (gtk_application_get_active_window (GTK_APPLICATION (user_data)),
                         "program-name", "CAML Workbench",
                         "logo-icon-name", CAML_APP_ID,
                         "version", CAML_VERSION,
                         "comments", "Assemble context-aware layers, train them in the "
                                     "background and watch the fit, after Yun Zeng's "
                                     "Context Aware Machine Learning",
                         "license-type", GTK_LICENSE_MIT_X11,
                         "authors", authors,
                         NULL);
}

static void
on_open_response (GtkNativeDialog *dialog, int response, gpointer user_data)
{
  CamlApplication *self = user_data;

  if (response == GTK_RESPONSE_ACCEPT)
    {
      GFile *file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_application_open (G_APPLICATION (self), &file, 1, "");
      g_object_unref (file);
    }
  g_object_unref (dialog);
  g_object_unref (self);
}

static void
action_open (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlApplication *self = user_data;
  GtkFileChooserNative *dialog =
    gtk_file_chooser_native_new ("Open Experiment",
                                 gtk_application_get_active_window (GTK_APPLICATION (self)),
                                 GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel");
  GtkFileFilter *json = gtk_file_filter_new ();
  GtkFileFilter *all = gtk_file_filter_new ();

  gtk_file_filter_set_name (json, "Experiment files (*.json)");
  gtk_file_filter_add_pattern (json, "*.json");
  gtk_file_filter_set_name (all, "All files");
  gtk_file_filter_add_pattern (all, "*");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), json);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), all);
  g_object_unref (json);
  g_object_unref (all);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  g_signal_connect (dialog, "response", G_CALLBACK (on_open_response), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* A run's folder opens through the same path as a file (caml_application_open
 * tells folders from files). */
static void
action_open_run (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlApplication *self = user_data;
  GtkFileChooserNative *dialog =
    gtk_file_chooser_native_new ("Open Run (the Folder caml train or Save Run Wrote)",
                                 gtk_application_get_active_window (GTK_APPLICATION (self)),
                                 GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, "_Open", "_Cancel");
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  g_signal_connect (dialog, "response", G_CALLBACK (on_open_response), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* The same path as Open: a window with changes keeps them (the file opens
 * in a new window), and a folder opens as a run. A file that is gone
 * leaves the list. */
static void
action_open_recent (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlApplication *self = user_data;
  const char *path = g_variant_get_string (param, NULL);

  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR) && !g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      CamlWindow *win = active_window (self);
      g_autofree char *text = g_strdup_printf ("%s is no longer there; it has been taken off "
                                               "the recent experiments", path);
      set_recent (self, NULL, path);
      if (win == NULL)
        win = CAML_WINDOW (caml_application_open_preset (self, NULL));
      caml_window_show_error (win, text);
      return;
    }
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_application_open (G_APPLICATION (self), &file, 1, "");
}

static void
action_preset (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlApplication *self = user_data;
  const char *name = g_variant_get_string (param, NULL);
  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = caml_presets_load (name, &error);

  if (exp == NULL)
    {
      CamlWindow *win = active_window (self);
      if (win == NULL)
        win = CAML_WINDOW (caml_application_open_preset (self, NULL));
      caml_window_show_error (win, error->message);
      return;
    }
  g_autofree char *notice = NULL;
  CamlWindow *win = window_to_open_in (self, active_window (self), &notice);
  g_autofree char *origin = g_strdup_printf ("preset %s", name);
  caml_window_set_experiment (win, exp, NULL, origin);
  show_opened_notice (win, notice);
}

static void
action_style (GSimpleAction *action, GVariant *value, gpointer user_data)
{
  CamlApplication *self = user_data;

  g_simple_action_set_state (action, value);
  if (self->settings != NULL)
    g_settings_set_string (self->settings, "style", g_variant_get_string (value, NULL));
  apply_style (self);
}

/* The thread count of the runs started from now on (GSettings "threads"). */
static void
apply_threads (CamlApplication *self)
{
  int threads = self->settings != NULL ? g_settings_get_int (self->settings, "threads") : 0;
  caml_set_threads (threads);
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), "threads");
  if (action != NULL)
    g_simple_action_set_state (G_SIMPLE_ACTION (action), g_variant_new_int32 (threads));
}

static void
action_threads (GSimpleAction *action, GVariant *value, gpointer user_data)
{
  CamlApplication *self = user_data;

  g_simple_action_set_state (action, value);
  if (self->settings != NULL)
    g_settings_set_int (self->settings, "threads", g_variant_get_int32 (value));
  else
    caml_set_threads (g_variant_get_int32 (value));
}

/* Every core, then 1, 2, 4, … and the core count itself. */
static void
build_threads_menu (CamlApplication *self)
{
  int cores = caml_get_cores ();
  self->threads_menu = g_menu_new ();
  g_autofree char *all = g_strdup_printf ("All Cores (%d)", cores);
  g_autoptr (GMenuItem) item = g_menu_item_new (all, NULL);
  g_menu_item_set_action_and_target_value (item, "app.threads", g_variant_new_int32 (0));
  g_menu_append_item (self->threads_menu, item);
  for (int n = 1; n <= cores; n = n * 2 > cores && n < cores ? cores : n * 2)
    {
      g_autofree char *label = g_strdup_printf (n == 1 ? "%d Thread" : "%d Threads", n);
      g_autoptr (GMenuItem) one = g_menu_item_new (label, NULL);
      g_menu_item_set_action_and_target_value (one, "app.threads", g_variant_new_int32 (n));
      g_menu_append_item (self->threads_menu, one);
    }
}

GMenuModel *
caml_application_get_threads_menu (CamlApplication *self)
{
  return G_MENU_MODEL (self->threads_menu);
}

static const GActionEntry app_entries[] = {
  { "quit", action_quit },
  { "about", action_about },
  { "new", action_new },
  { "open", action_open },
  { "open-run", action_open_run },
  { "preset", action_preset, "s" },
  { "open-recent", action_open_recent, "s" },
  { "style", NULL, "s", "'system'", action_style },
  { "threads", NULL, "i", "0", action_threads },
  { "recover-autosaves", action_recover_autosaves },
  { "discard-autosaves", action_discard_autosaves },
};

static const struct {
  const char *action;
  const char *accels[3];
} accels[] = {
  { "app.quit", { "<Control>q", NULL } },
  { "app.new", { "<Control>n", NULL } },
  { "app.open", { "<Control>o", NULL } },
  { "win.save", { "<Control>s", NULL } },
  { "win.save-as", { "<Control><Shift>s", NULL } },
  { "win.train", { "F5", "<Control>Return", NULL } },
  { "win.pause", { "F6", NULL } },
  { "win.step", { "F10", "F7", NULL } },
  { "win.stop", { "<Shift>F5", NULL } },
  { "win.reset", { "<Control>r", NULL } },
  { "editor.undo", { "<Control>z", NULL } },
  { "editor.redo", { "<Control><Shift>z", "<Control>y", NULL } },
  { "win.export-metrics", { "<Control>e", NULL } },
  { "window.close", { "<Control>w", NULL } },
};

/* GTK 4.8 draws with OpenGL whenever it gets a context — also from Mesa's
 * software rasteriser (llvmpipe), e.g. under Xvfb or on a machine without a
 * GPU. There Cairo is far faster: measured while training surface-ca-nn-2
 * under Xvfb, frames took a median 85 ms with GL against 4 ms with Cairo,
 * and llvmpipe's threads took the trainer's cores (56 % of the headless
 * throughput against ≥ 95 %). */
static gboolean
has_render_node (void)
{
  g_autoptr (GDir) dir = g_dir_open ("/dev/dri", 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, "renderD"))
      return TRUE;
  return FALSE;
}

const char *
caml_application_choose_renderer (void)
{
  const char *reason = NULL;

  if (g_getenv ("GSK_RENDERER") != NULL)
    return NULL;
  if (g_getenv ("LIBGL_ALWAYS_SOFTWARE") != NULL)
    reason = "LIBGL_ALWAYS_SOFTWARE is set";
  else if (!has_render_node ())
    reason = "no GPU render node in /dev/dri";
#if CAML_HAVE_X11
  else if (g_getenv ("WAYLAND_DISPLAY") == NULL && g_getenv ("DISPLAY") != NULL)
    {
      Display *x = XOpenDisplay (NULL);
      int opcode, event, error;
      if (x != NULL)
        {
          if (!XQueryExtension (x, "DRI3", &opcode, &event, &error))
            reason = "the X server has no DRI3";
          XCloseDisplay (x);
        }
    }
#endif
  if (reason != NULL)
    g_setenv ("GSK_RENDERER", "cairo", TRUE);
  return reason;
}

static void
caml_application_startup (GApplication *app)
{
  CamlApplication *self = CAML_APPLICATION (app);
  GtkCssProvider *css;

  G_APPLICATION_CLASS (caml_application_parent_class)->startup (app);

  g_action_map_add_action_entries (G_ACTION_MAP (self), app_entries,
                                   G_N_ELEMENTS (app_entries), self);
  g_signal_connect (self, "window-removed", G_CALLBACK (on_quit_window_removed), self);
  for (gsize i = 0; i < G_N_ELEMENTS (accels); i++)
    gtk_application_set_accels_for_action (GTK_APPLICATION (self), accels[i].action,
                                           accels[i].accels);

  css = gtk_css_provider_new ();
  gtk_css_provider_load_from_resource (css, "/org/caml/Workbench/style.css");
  gtk_style_context_add_provider_for_display (gdk_display_get_default (),
                                              GTK_STYLE_PROVIDER (css),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  g_object_unref (css);
  gtk_window_set_default_icon_name (CAML_APP_ID);

  self->settings = find_settings ();
  if (self->settings != NULL)
    g_signal_connect_swapped (self->settings, "changed::style", G_CALLBACK (apply_style), self);
  /* Training yields the CPU to the window and the display server: frames
   * stay short while every otherwise idle cycle still trains. Read once:
   * a thread's priority, once lowered, cannot be raised again. */
  if (self->settings == NULL || g_settings_get_boolean (self->settings, "train-in-background"))
    caml_set_background_priority ();
  /* Only trainers keep OpenMP teams: one left idle by the main thread's
   * probe would make the trainers' barriers sleep (caml_set_interactive). */
  caml_set_interactive ();
  if (self->settings != NULL)
    g_signal_connect_swapped (self->settings, "changed::threads", G_CALLBACK (apply_threads),
                              self);
  apply_threads (self);
  build_threads_menu (self);
  build_presets_menu (self);
  self->recent_menu = g_menu_new ();
  if (self->settings != NULL)
    g_signal_connect_swapped (self->settings, "changed::recent-files",
                              G_CALLBACK (rebuild_recent_menu), self);
  rebuild_recent_menu (self);
  /* The placeholder item of an empty list: never enabled. */
  g_autoptr (GSimpleAction) none = g_simple_action_new ("no-recent", NULL);
  g_simple_action_set_enabled (none, FALSE);
  g_action_map_add_action (G_ACTION_MAP (self), G_ACTION (none));
  apply_style (self);
  watch_system_style (self);
}

static void
caml_application_activate (GApplication *app)
{
  CamlApplication *self = CAML_APPLICATION (app);
  g_autofree char *preset = NULL;

  if (self->initial_preset != NULL)
    preset = g_strdup (self->initial_preset);
  else if (self->settings != NULL)
    preset = g_settings_get_string (self->settings, "default-preset");
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (self, preset));
  /* Nothing asked for: the start page, over the blank experiment. */
  if (preset == NULL || *preset == '\0')
    caml_window_show_start (win, TRUE);
  offer_recovery (self, win, NULL);
}

static void
caml_application_open (GApplication *app, GFile **files, int n_files, const char *hint)
{
  CamlApplication *self = CAML_APPLICATION (app);
  /* The files that cannot be opened are listed together in one window's
   * banner, one line each (the engine's message names the file); that
   * window is not then reused for a file that opens, which would clear
   * the banner. */
  CamlWindow *error_win = NULL, *opened = NULL;
  g_autoptr (GString) errors = g_string_new (NULL);

  for (int i = 0; i < n_files; i++)
    {
      g_autofree char *path = g_file_get_path (files[i]);
      g_autoptr (GError) error = NULL;
      /* a folder is a saved run (its experiment.json, model.weights, trainer.state) */
      gboolean run = path != NULL && g_file_test (path, G_FILE_TEST_IS_DIR);
      CamlExperiment *exp = path == NULL ? NULL
                            : run ? caml_window_read_run (path, &error)
                            : caml_experiment_load_file (path, &error);
      CamlWindow *win = active_window (self);

      if (exp == NULL)
        {
          /* Nothing changes; the engine's message says why. */
          if (error_win == NULL)
            error_win = win != NULL ? win
                        : CAML_WINDOW (caml_application_open_preset (self, self->initial_preset));
          if (errors->len > 0)
            g_string_append_c (errors, '\n');
          if (error != NULL)
            g_string_append (errors, error->message);
          else
            {
              g_autofree char *uri = g_file_get_uri (files[i]);
              g_string_append_printf (errors, "%s: only local files can be opened", uri);
            }
          caml_window_show_error (error_win, errors->str);
          gtk_window_present (GTK_WINDOW (error_win));
          continue;
        }
      /* The window of the banner's errors, and one this call has just
       * filled, are not replaced. */
      g_autofree char *notice = NULL;
      win = window_to_open_in (self, win == error_win || win == opened ? NULL : win, &notice);
      if (run)
        caml_window_set_run (win, exp, path);
      else
        caml_window_set_experiment (win, exp, path, NULL);
      gtk_window_present (GTK_WINDOW (win));
      show_opened_notice (win, notice);
      opened = win;
    }
  offer_recovery (self, opened != NULL ? opened : active_window (self), error_win);
}

static int
caml_application_handle_local_options (GApplication *app, GVariantDict *options)
{
  CamlApplication *self = CAML_APPLICATION (app);

  if (g_variant_dict_contains (options, "version"))
    {
      g_print ("caml-workbench %s\n", CAML_VERSION);
      return 0;
    }
  g_variant_dict_lookup (options, "preset", "s", &self->initial_preset);
  return -1;
}

static void
caml_application_dispose (GObject *object)
{
  CamlApplication *self = CAML_APPLICATION (object);

  g_clear_object (&self->settings);
  g_clear_object (&self->presets_menu);
  g_clear_object (&self->recent_menu);
  g_clear_object (&self->threads_menu);
  g_clear_object (&self->portal);
  g_clear_pointer (&self->initial_preset, g_free);
  g_clear_pointer (&self->leftovers, g_ptr_array_unref);
  quit_end (self);
  g_clear_weak_pointer (&self->recovery_window);
  G_OBJECT_CLASS (caml_application_parent_class)->dispose (object);
}

static void
caml_application_class_init (CamlApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = caml_application_dispose;
  app_class->startup = caml_application_startup;
  app_class->activate = caml_application_activate;
  app_class->open = caml_application_open;
  app_class->handle_local_options = caml_application_handle_local_options;
}

static void
caml_application_init (CamlApplication *self)
{
  static const GOptionEntry entries[] = {
    { "preset", 'p', 0, G_OPTION_ARG_STRING, NULL,
      "Open a built-in experiment (without one, and without files: the start "
      "page, over a blank experiment on the surface data)", "NAME" },
    { "version", 0, 0, G_OPTION_ARG_NONE, NULL, "Print the version and exit", NULL },
    { NULL }
  };

  g_application_add_main_option_entries (G_APPLICATION (self), entries);
  g_application_set_option_context_parameter_string (G_APPLICATION (self), "[FILE.json… | RUN-FOLDER…]");
  g_application_set_option_context_summary (G_APPLICATION (self),
                                            "The CAML Workbench: build, train and watch "
                                            "context-aware models.\n\nA folder is a saved "
                                            "run (what caml train writes, or Save Run): it "
                                            "opens at the step it was saved at, and Train "
                                            "goes on with it.");
}

CamlApplication *
caml_application_new (GApplicationFlags flags)
{
  return g_object_new (CAML_TYPE_APPLICATION,
                       "application-id", CAML_APP_ID,
                       "flags", G_APPLICATION_HANDLES_OPEN | flags,
                       "resource-base-path", "/org/caml/Workbench",
                       NULL);
}

GSettings *
caml_application_get_settings (CamlApplication *self)
{
  return self->settings;
}

GMenuModel *
caml_application_get_presets_menu (CamlApplication *self)
{
  return G_MENU_MODEL (self->presets_menu);
}
