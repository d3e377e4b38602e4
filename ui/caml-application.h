/* caml-application.h — the GtkApplication (org.caml.Workbench). */
#pragma once

#include <gtk/gtk.h>

#include "caml.h"

G_BEGIN_DECLS

#define CAML_APP_ID "org.caml.Workbench"

#define CAML_TYPE_APPLICATION (caml_application_get_type ())
G_DECLARE_FINAL_TYPE (CamlApplication, caml_application, CAML, APPLICATION, GtkApplication)

/* flags are added to G_APPLICATION_HANDLES_OPEN (tests pass NON_UNIQUE). */
CamlApplication *caml_application_new (GApplicationFlags flags);
/* Call first thing in main(), before any thread: unless GSK_RENDERER is set,
 * sets it to "cairo" when OpenGL could only be software-rendered (no GPU
 * render node, LIBGL_ALWAYS_SOFTWARE, or an X server without DRI3 such as
 * Xvfb). Returns the reason it did, or NULL. */
const char *caml_application_choose_renderer (void);
/* The org.caml.Workbench settings, or NULL when the schema is not installed
 * (and not found in the build tree either). */
GSettings  *caml_application_get_settings (CamlApplication *self);
/* One item per preset, "name — the paper's figure", activating app.preset. */
GMenuModel *caml_application_get_presets_menu (CamlApplication *self);
/* Open Recent: one item per recently opened or saved experiment (the
 * "recent-files" setting, most recent first), activating app.open-recent;
 * shared by every window's header bar menu. */
GMenuModel *caml_application_get_recent_menu (CamlApplication *self);
/* The Threads submenu: the app.threads choices (0: every core). */
GMenuModel *caml_application_get_threads_menu (CamlApplication *self);
/* Puts path first in the recent experiments (at most CAML_MAX_RECENT), and
 * tells the desktop's recent-files list too. */
void        caml_application_note_recent (CamlApplication *self, const char *path);
#define CAML_MAX_RECENT 8
/* A new window showing the preset (a blank experiment on the surface data
 * when name is NULL or empty). */
GtkWindow  *caml_application_open_preset (CamlApplication *self, const char *name);
/* New: a blank experiment (no layers) on built-in data of that kind, in the
 * active window when it is idle and unmodified, else in a new one, which
 * is returned. */
GtkWindow  *caml_application_new_experiment (CamlApplication *self, CamlDataKind kind);

G_END_DECLS
