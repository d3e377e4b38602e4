/* caml-row-drag.c — a list row that drags itself (see caml-row-drag.h). */
#include "caml-row-drag.h"

#define HOT_X   "caml-hot-x"   /* where the row was grabbed (source data) */
#define HOT_Y   "caml-hot-y"
#define PAYLOAD "caml-payload" /* the row's CamlRowDragPayload (source data) */

static GdkContentProvider *
on_prepare (GtkDragSource *source, double x, double y, gpointer unused)
{
  GtkWidget *row = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (source));
  CamlRowDragPayload payload = (CamlRowDragPayload) g_object_get_data (G_OBJECT (source),
                                                                       PAYLOAD);
  g_autofree char *text = payload (row);

  if (text == NULL)
    return NULL;   /* no drag */
  g_object_set_data (G_OBJECT (source), HOT_X, GINT_TO_POINTER ((int) x));
  g_object_set_data (G_OBJECT (source), HOT_Y, GINT_TO_POINTER ((int) y));
  return gdk_content_provider_new_typed (G_TYPE_STRING, text);
}

/* The row itself is dragged, not the text of the payload: drawn live, with
 * an opaque background while it is dragged (a drag surface without a
 * compositor has no transparency). */
static void
on_begin (GtkDragSource *source, GdkDrag *drag, gpointer unused)
{
  GtkWidget *row = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (source));
  g_autoptr (GdkPaintable) icon = gtk_widget_paintable_new (row);

  gtk_widget_add_css_class (row, "dragged");
  gtk_drag_source_set_icon (source, icon,
                            GPOINTER_TO_INT (g_object_get_data (G_OBJECT (source), HOT_X)),
                            GPOINTER_TO_INT (g_object_get_data (G_OBJECT (source), HOT_Y)));
}

static void
on_end (GtkDragSource *source, GdkDrag *drag, gboolean delete_data, gpointer unused)
{
  gtk_widget_remove_css_class (gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (source)),
                               "dragged");
}

void
caml_row_drag_add (GtkWidget *row, GdkDragAction actions, CamlRowDragPayload payload)
{
  g_return_if_fail (GTK_IS_WIDGET (row) && payload != NULL);
  GtkDragSource *source = gtk_drag_source_new ();
  gtk_drag_source_set_actions (source, actions);
  g_object_set_data (G_OBJECT (source), PAYLOAD, (gpointer) payload);
  g_signal_connect (source, "prepare", G_CALLBACK (on_prepare), NULL);
  g_signal_connect (source, "drag-begin", G_CALLBACK (on_begin), NULL);
  g_signal_connect (source, "drag-end", G_CALLBACK (on_end), NULL);
  gtk_widget_add_controller (row, GTK_EVENT_CONTROLLER (source));
}
