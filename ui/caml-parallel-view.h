/* caml-parallel-view.h — a GtkDrawingArea showing a parallel-coordinates
 * plot (studio/plots, CamlPlotParallel) of a sweep's runs: drag along an
 * axis to brush it, click an axis to clear its brush, Escape or a double
 * click to clear them all; hover a line to read its run, click it to open
 * the run. */
#pragma once

#include <gtk/gtk.h>

#include "caml-plot.h"

G_BEGIN_DECLS

#define CAML_TYPE_PARALLEL_VIEW (caml_parallel_view_get_type ())
G_DECLARE_FINAL_TYPE (CamlParallelView, caml_parallel_view, CAML, PARALLEL_VIEW,
                      GtkDrawingArea)

/* Signals:
 *   brush-changed (int axis)  a brush was set, moved or cleared by the user
 *                             or through the functions below; axis -1:
 *                             several (all cleared; brushes a new plot
 *                             had no axis for)
 *   row-activated (int row)   a click on a line (not a drag): open that run */

GtkWidget *caml_parallel_view_new (void);
/* Shows plot (taken; NULL: none). The brushes of axes whose names the new
 * plot has too are kept — the plot is rebuilt as runs finish, and the
 * user's brushes stay — the others dropped (brush-changed, -1); the
 * highlighted run is cleared. */
void       caml_parallel_view_set_plot (CamlParallelView *self, CamlPlotParallel *plot);
/* The plot shown, or NULL. */
const CamlPlotParallel *caml_parallel_view_get_plot (CamlParallelView *self);
/* Brushes axis over [lo, hi] (either order), as a drag along it does. */
void       caml_parallel_view_brush (CamlParallelView *self, int axis, double lo, double hi);
/* Clears axis' brush (-1: every axis'), as a click on it (Escape) does. */
void       caml_parallel_view_clear_brush (CamlParallelView *self, int axis);
/* What a click at (x, y) in the view's pixels does when it is not on an
 * axis: the passing line there is activated (row-activated); returns its
 * row, or -1 when there is none. */
int        caml_parallel_view_activate_at (CamlParallelView *self, double x, double y);
/* Frames painted and images drawn so far (for tests). */
guint      caml_parallel_view_get_draw_count (CamlParallelView *self);
guint      caml_parallel_view_get_image_count (CamlParallelView *self);
/* Writes what the view shows (brushes and all) as a width × height PNG. */
gboolean   caml_parallel_view_write (CamlParallelView *self, const char *path, int width,
                                     int height, GError **error);

G_END_DECLS
