/* caml-start-view.h — the page a window started with no arguments shows
 * over its (blank) experiment, and ☰ → Start… shows again: New…, Open…,
 * Open Run…, the recent files, and the presets grouped by the paper's
 * sections, each card with its description, the paper's claim and what
 * this build measured (studio/preset-guide.h). Every choice is an action
 * (app.new, app.open, app.open-recent, app.preset, win.hide-start); the
 * window leaves the page when an experiment opens in it. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define CAML_TYPE_START_VIEW (caml_start_view_get_type ())
G_DECLARE_FINAL_TYPE (CamlStartView, caml_start_view, CAML, START_VIEW, GtkWidget)

/* Lists the items of recent (the application's Open Recent menu: label,
 * action and target each), following its changes; a reference is kept. */
void caml_start_view_set_recent (CamlStartView *self, GMenuModel *recent);

G_END_DECLS
