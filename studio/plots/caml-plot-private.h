/* caml-plot-private.h — drawing helpers shared by the plot types. Layout only
 * (text extents, margins); no data arithmetic. */
#pragma once

#include "caml-plot.h"

/* Font sizes and line widths grow with the figure (1.0 at 640 × 480). */
typedef struct {
  double scale;
  double title_size;
  double label_size;
  double tick_size;
} CamlPlotStyle;

void caml_plot_style_init (CamlPlotStyle *style, double width, double height);

/* caml_plot_text (caml-plot.h), rotated 90° counter-clockwise (for y-axis
 * captions). */
void caml_plot_text_vertical (cairo_t *cr, double size, double x, double y, const char *text);

/* text (new), or, when it is wider than avail at size, its longest head
 * that fits with a trailing "…" (at least one character). Texts are
 * measured up to 1000 characters. */
char *caml_plot_shorten_text (cairo_t *cr, double size, gboolean bold, const char *text,
                              double avail);

/* A bold title centred near cx with its baseline at y, kept inside
 * [0, width]: shrunk to at most 3/4 of size if need be, then shortened
 * with a trailing "…". Never clipped at either side. */
void caml_plot_draw_title (cairo_t *cr, double size, double width, double cx, double y,
                           const char *title);

/* Plot area of a width × height figure with axes x and y, leaving
 * extra_right pixels on the right (colour bar). */
void caml_plot_layout (cairo_t *cr, const CamlPlotStyle *style, double width, double height,
                       const char *title, const char *x_label, const char *y_label,
                       const CamlPlotAxis *y, double extra_right, CamlPlotRect *area);

/* Light grid lines at the ticks (and log minor ticks), inside area. */
void caml_plot_draw_grid (cairo_t *cr, const CamlPlotStyle *style, const CamlPlotRect *area,
                          const CamlPlotAxis *x, const CamlPlotAxis *y);
/* Frame, tick marks, tick labels, captions and title. x_tick_labels, if
 * not NULL, holds the label of each x tick (x->n_ticks) in place of its
 * number (a categorical axis). */
void caml_plot_draw_axes (cairo_t *cr, const CamlPlotStyle *style, double width,
                          const CamlPlotRect *area, const CamlPlotAxis *x, const CamlPlotAxis *y,
                          const char *const *x_tick_labels, const char *title,
                          const char *x_label, const char *y_label);

/* A few words (why a plot is empty) wrapped at spaces to lines of at most
 * 80 % of area's width, in a box at its middle; nothing for NULL or "". */
void caml_plot_draw_note (cairo_t *cr, const CamlPlotStyle *style, const CamlPlotRect *area,
                          const char *note);
