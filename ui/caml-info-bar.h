/* caml-info-bar.h — the banner above the window's content: an error, a
 * run that diverged (with Continue), the set-aside weights of a replaced
 * run (Save Them… or Dismiss), or the autosaves a session left (Recover or
 * Discard). Its buttons activate win.* and app.* actions. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define CAML_TYPE_INFO_BAR (caml_info_bar_get_type ())
G_DECLARE_FINAL_TYPE (CamlInfoBar, caml_info_bar, CAML, INFO_BAR, GtkBox)

/* An error (NULL: the banner goes). */
void        caml_info_bar_show_error (CamlInfoBar *self, const char *message);
/* A divergence; Continue says the rate it goes on at. */
void        caml_info_bar_show_divergence (CamlInfoBar *self, const char *message,
                                           const char *continue_label);
/* The trained weights of a replaced run are kept: Save Them… or Dismiss. */
void        caml_info_bar_show_set_aside (CamlInfoBar *self, const char *message);
/* The autosaves of a session that ended: Recover (when can_recover) or
 * Discard. */
void        caml_info_bar_show_recovery (CamlInfoBar *self, const char *message,
                                         gboolean can_recover);
/* The message shown, or NULL. */
const char *caml_info_bar_get_message (CamlInfoBar *self);
/* The banner is about the set-aside weights (Dismiss lets them go). */
gboolean    caml_info_bar_is_set_aside (CamlInfoBar *self);

G_END_DECLS
