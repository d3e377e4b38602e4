/* caml-status-line.h — the line under the plots: a spinner while the
 * session's jobs are under way, the run's progress and its status, as the
 * session describes them (caml_session_describe_progress), or for a while
 * a notice — the session's news, or what the window did with a value
 * typed. */
#pragma once

#include <gtk/gtk.h>

#include "caml-session.h"

G_BEGIN_DECLS

#define CAML_TYPE_STATUS_LINE (caml_status_line_get_type ())
G_DECLARE_FINAL_TYPE (CamlStatusLine, caml_status_line, CAML, STATUS_LINE, GtkBox)

/* Follows session (a reference is kept; NULL: none). */
void        caml_status_line_set_session (CamlStatusLine *self, CamlSession *session);
/* Shown instead of the status for a few seconds: as a warning (what was
 * done with a value typed: "units set to 65536: must be 1…65536"), or
 * plainly (a file was written). A warning is not replaced by news. */
void        caml_status_line_show_notice (CamlStatusLine *self, const char *message,
                                          gboolean warning);
/* News is old once the user acts on the run; a warning stays its time. */
void        caml_status_line_end_news (CamlStatusLine *self);
/* The latest notice, also after it has gone (NULL: none yet). */
const char *caml_status_line_get_last_notice (CamlStatusLine *self);

G_END_DECLS
