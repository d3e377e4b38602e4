/* caml-plot-view.h — a GtkDrawingArea that shows one prepared Cairo plot
 * (a line plot, a row of heatmaps or of bar plots, or tiles) from studio/plots. */
#pragma once

#include <gtk/gtk.h>

#include "caml-plot.h"

G_BEGIN_DECLS

#define CAML_TYPE_PLOT_VIEW (caml_plot_view_get_type ())
G_DECLARE_FINAL_TYPE (CamlPlotView, caml_plot_view, CAML, PLOT_VIEW, GtkDrawingArea)

/* Text for the hover read-out at data coordinates (x, y) of a line plot, or
 * NULL for none; the view frees it. */
typedef char *(*CamlPlotViewHoverFunc) (CamlPlotView *view, double x, double y,
                                        gpointer user_data);

GtkWidget *caml_plot_view_new (void);
/* The white card with rounded corners plots are shown on in a window (the
 * plots use dark ink, so they read the same in light and dark themes), and
 * the clip to it; for other views of plots too (caml-parallel-view.c). */
void       caml_plot_view_draw_card (cairo_t *cr, int width, int height);
/* Shows plots [first, first + n) of figure side by side (NULL: none);
 * takes a reference of its own. */
void       caml_plot_view_set_figure (CamlPlotView *self, CamlPlotFigure *figure, int first,
                                      int n);
/* The figure shown (NULL: none) and which of its plots. */
const CamlPlotFigure *caml_plot_view_get_figure (CamlPlotView *self, int *first, int *n);
/* Takes ownership of plot (may be NULL to clear). */
void       caml_plot_view_set_line (CamlPlotView *self, CamlPlotLine *plot);
/* Bar plot index of the row shown (NULL when out of range); *n_bars: how many. */
const CamlPlotBars *caml_plot_view_get_bars (CamlPlotView *self, int index, int *n_bars);
void       caml_plot_view_clear (CamlPlotView *self);
/* Shown when there is no plot. */
void       caml_plot_view_set_placeholder (CamlPlotView *self, const char *text);
/* A line plot's hint ("hover to read values"), drawn small with the plot
 * in the card's bottom-right corner where it fits whole (NULL: none); the
 * next image has it. */
void       caml_plot_view_set_hint (CamlPlotView *self, const char *text);
/* The text shown while there is no plot (NULL: none). */
const char *caml_plot_view_get_placeholder (CamlPlotView *self);
void       caml_plot_view_set_hover_func (CamlPlotView *self, CamlPlotViewHoverFunc func,
                                          gpointer user_data);
/* The read-out the hover func gives at data coordinates (x, y) of the line
 * plot shown (free it), or NULL: what the pointer there would read. */
char      *caml_plot_view_get_hover_text_at (CamlPlotView *self, double x, double y);
/* Widget pixels (x, y) inside the line plot's data area as data
 * coordinates, and the pixels one unit of data spans there (may be NULL);
 * FALSE outside it or without a line plot. */
gboolean   caml_plot_view_to_data (CamlPlotView *self, double x, double y, double *data_x,
                                   double *data_y, double *pixels_per_x, double *pixels_per_y);
gboolean   caml_plot_view_has_plot (CamlPlotView *self);
/* The line plot shown, or NULL. */
const CamlPlotLine *caml_plot_view_get_line (CamlPlotView *self);
/* The tiles shown, or NULL. */
const CamlPlotTiles *caml_plot_view_get_tiles (CamlPlotView *self);
/* Heatmap index of the row shown (NULL when out of range); *n_maps: how many. */
const CamlPlotHeatmap *caml_plot_view_get_heatmap (CamlPlotView *self, int index, int *n_maps);
/* Plots set so far, and frames drawn so far (for tests). */
guint      caml_plot_view_get_update_count (CamlPlotView *self);
guint      caml_plot_view_get_draw_count (CamlPlotView *self);
/* Images the worker drew and the view took (for tests). */
guint      caml_plot_view_get_image_count (CamlPlotView *self);
/* Images asked of the worker so far (for tests). */
guint      caml_plot_view_get_render_count (CamlPlotView *self);
/* Writes the plot as SVG when path ends in ".svg", else as PNG. Tiles (the
 * σ-maps) take the height their grid needs at width, not height. */
gboolean   caml_plot_view_write (CamlPlotView *self, const char *path, int width, int height,
                                 GError **error);

G_END_DECLS
