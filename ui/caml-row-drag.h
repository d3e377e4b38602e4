/* caml-row-drag.h — a list row that drags itself: the palette's rows
 * ("new:NAME") and the model stack's ("move:INDEX") share it. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* What a row carries when dragged (g_free'd), or NULL when it may not be
 * dragged now (locked, greyed). */
typedef char *(*CamlRowDragPayload) (GtkWidget *row);

/* Makes row a drag source of actions: the drag's icon is the row itself,
 * drawn live and held where it was grabbed; the payload is a string. */
void caml_row_drag_add (GtkWidget *row, GdkDragAction actions, CamlRowDragPayload payload);

G_END_DECLS
