/* caml-plot.h — plain-Cairo plots for the CLI (PNG/SVG files) and the GUI.
 *
 * No GTK here. Every plot is used in two steps:
 *
 *   1. prepare: caml_plot_line_new() / caml_plot_heatmap_new() copy the data
 *      and do all the arithmetic (ranges, ticks, smoothing, colour mapping,
 *      contour extraction). Call this when data arrives, never in a draw
 *      handler. The helpers it uses (ticks, colormaps, EMA, marching squares)
 *      are public so tests can call them without a display.
 *   2. draw: caml_plot_line_draw() / caml_plot_heatmap_draw() only draw, into
 *      the rectangle (0, 0, width, height) of the current user space of a
 *      cairo_t — one that the three functions below hand to their draw
 *      function.
 *
 * caml_plot_write_png() / caml_plot_write_svg() render a CamlPlotDrawFunc into
 * a file atomically, caml_plot_draw_image() into an image for a window; draw
 * plots with these three, which may run in any thread. caml_plot_panel_draw()
 * lays several plots side by side.
 *
 * All data arrays are double; non-finite values are skipped (lines break,
 * heatmap cells are drawn light grey, contours avoid them).
 */
#pragma once

#include <stddef.h>
#include <cairo.h>
#include <glib.h>

G_BEGIN_DECLS

#define CAML_PLOT_ERROR (caml_plot_error_quark ())
GQuark caml_plot_error_quark (void);

typedef enum {
  CAML_PLOT_ERROR_RENDER,    /* cairo reported an error while drawing/encoding */
  CAML_PLOT_ERROR_FILE_NAME, /* a file name whose extension is not .png or .svg */
} CamlPlotError;

/* A rectangle in device units (pixels). */
typedef struct {
  double x, y, width, height;
} CamlPlotRect;

/* Draws a figure into (0, 0, width, height) of cr. */
typedef void (*CamlPlotDrawFunc) (cairo_t *cr, double width, double height,
                                  gpointer user_data);

/* Text in the plots' font (Sans, with their font options: caml-plot.c,
 * "Plots and threads"), for anything drawn with a plot: anchored at (x, y),
 * ax 0 left / 0.5 centre / 1 right, ay 0 top / 0.5 middle / 1 baseline. */
void caml_plot_text (cairo_t *cr, double size, gboolean bold,
                     double x, double y, double ax, double ay, const char *text);
double caml_plot_text_width (cairo_t *cr, double size, const char *text);

/* ---------------------------------------------------------------- axes --- */

#define CAML_PLOT_MAX_TICKS 32

typedef struct {
  double lo, hi;       /* axis range, lo < hi always (reversed input is swapped) */
  gboolean log;        /* log10 axis: lo > 0 */
  int n_ticks;
  double ticks[CAML_PLOT_MAX_TICKS];  /* major ticks, ascending, inside [lo, hi] */
  int n_minor;
  double minor[CAML_PLOT_MAX_TICKS];  /* log axes: 2..9 × decade, else none */
  double step;         /* linear: tick spacing; log: 0 (labels use the value) */
  gboolean counts;     /* whole numbers that count (steps): caml_plot_axis_integer_ticks */
} CamlPlotAxis;

/* Smallest and largest finite value of v (n); NaN/Inf are ignored. With
 * positive_only, values <= 0 are ignored too (for log axes). Returns FALSE and
 * leaves *lo and *hi untouched when there is no such value. */
gboolean caml_plot_finite_range (const double *v, size_t n, gboolean positive_only,
                                 double *lo, double *hi);

/* Linear axis over [lo, hi] with "nice" ticks: steps of 1, 2 or 5 × 10^k, the
 * finest step that gives at most max_ticks ticks (<= 0: 8). The range itself
 * is kept (ticks lie inside it). Reversed ranges are swapped; a zero-width
 * range is widened (±1 around 0, else ±10 %); a non-finite end is replaced by
 * the other end, and [0, 1] is used when both are non-finite. */
void caml_plot_axis_linear (CamlPlotAxis *axis, double lo, double hi, int max_ticks);

/* Keeps a linear axis's ticks on whole numbers (step counts): a tick step
 * below 1 becomes 1, so a one-step range gets the tick "1", not 0.9, 0.95, …
 * The range itself is kept. Its labels then count: "900", "20k", "1.5M"
 * (caml_plot_axis_tick_label). */
void caml_plot_axis_integer_ticks (CamlPlotAxis *axis, int max_ticks);

/* Log10 axis over [lo, hi] (lo, hi > 0; a non-positive lo becomes hi / 1000).
 * Ticks at decades (every k-th decade when there are more than max_ticks);
 * below two decades in range it adds 2× and 5× ticks, and falls back to linear
 * nice ticks when that still gives fewer than 3. */
void caml_plot_axis_log (CamlPlotAxis *axis, double lo, double hi, int max_ticks);

/* The range a linear y axis shows for data in [lo, hi]: 4 % of room on
 * either side, but never across 0 or 1 when the data do not cross them
 * (accuracies and AUCs stay within [0, 1], losses above 0). A single value
 * (lo == hi) gets ±0.05 around it, kept inside [0, 1] when it lies there,
 * else ±10 % (±1 around 0). */
void caml_plot_padded_range (double lo, double hi, double *out_lo, double *out_hi);

/* Data → pixel: maps axis->lo to p0 and axis->hi to p1 (p1 < p0 for a y axis).
 * Log axes map non-positive values to NaN. */
double caml_plot_axis_map (const CamlPlotAxis *axis, double v, double p0, double p1);

/* Pixel → data, the inverse of caml_plot_axis_map (for hover read-outs). */
double caml_plot_axis_unmap (const CamlPlotAxis *axis, double p, double p0, double p1);

/* Whether every one of texts (n) is a finite number, as a whole
 * (g_ascii_strtod, nothing left over): then values (n, may be NULL) holds
 * them. "3", "0.5", "1e-3" are numbers; "bahdanau", "3x", "" and "nan" are
 * not — such values are categories (CamlPlotLineOptions.x_categories). */
gboolean caml_plot_parse_numbers (const char *const *texts, int n, double *values);

/* The label of an axis's tick i, compact — "0", "0.001", "2.5", "1000",
 * and with an exponent below 1e-4 and from 1e6 ("1e-5", "1.2e6") — and in
 * one form for all of the axis's ticks: with an exponent when any one
 * needs it ("0, 2e5, 4e5 … 1e6", not "800000" beside "1e6"). The linear
 * axis's tick spacing sets the digits so neighbouring labels differ (a log
 * axis writes its values as they are); -0 and rounding noise print as "0".
 * An axis that counts (steps) writes its ticks in one unit chosen by the
 * largest — plain up to 9999, then thousands "k", millions "M", billions
 * "G": "0 20k 40k … 100k" while a run trains and "0 50k … 200k" when it
 * ends, "0 0.5M 1M 1.5M", never "2e5". */
void caml_plot_axis_tick_label (const CamlPlotAxis *axis, int i, char *buf, size_t size);

/* ---------------------------------------------------------- colormaps --- */

typedef enum {
  CAML_PLOT_COLORMAP_VIRIDIS,   /* perceptual, for value surfaces */
  CAML_PLOT_COLORMAP_GREY,      /* 0 black → 1 white, for σ-maps */
  CAML_PLOT_COLORMAP_DIVERGING, /* blue → white (0.5) → red */
  CAML_PLOT_COLORMAP_BLUES,     /* 0 deep blue → 1 white, for word gates (χ̃) */
} CamlPlotColormap;

/* t in [0, 1] (clamped) → rgb[3] in [0, 1]. NaN gives light grey. */
void caml_plot_colormap_rgb (CamlPlotColormap cmap, double t, double rgb[3]);

/* out[i] = (in[i] - vmin) / (vmax - vmin) clamped to [0, 1]; NaN/Inf in → NaN
 * out; vmax <= vmin (constant data) gives 0.5 for every finite value. out may
 * equal in. */
void caml_plot_normalize (double *out, const double *in, size_t n,
                          double vmin, double vmax);

/* Series colour i (cycled) of a 10-colour qualitative palette → rgb[3]. */
void caml_plot_palette_rgb (int index, double rgb[3]);

/* Newly allocated double copy of a float array (engine tensors are float32). */
double *caml_plot_doubles_from_floats (const float *v, size_t n);

/* -------------------------------------------------------- line plot --- */

/* Exponential moving average: out[0] = in[0], out[i] = factor·out[i-1] +
 * (1 - factor)·in[i], factor in [0, 1) (0 copies). Non-finite inputs give NaN
 * at that index and leave the running average unchanged. out may equal in. */
void caml_plot_ema (double *out, const double *in, size_t n, double factor);

/* The same average taken of log(in), then exp: the trend a log axis shows. A
 * linear average of a loss falling by decades sits near the larger, older
 * values, far above the curve it smooths. Values <= 0 or non-finite give NaN
 * at that index and leave the running average unchanged. out may equal in. */
void caml_plot_ema_log (double *out, const double *in, size_t n, double factor);

typedef struct {
  const double *x;      /* (n) or NULL for 0, 1, …, n-1 */
  const double *y;      /* (n) */
  size_t n;
  const char *label;    /* legend entry, NULL for none */
  int color;            /* palette index, see caml_plot_palette_rgb */
  gboolean dashed;      /* dashed in the colour of a solid series: unlabelled, the
                         * raw data under that trend (drawn faint, below);
                         * labelled, a reference such as a baseline (drawn in a
                         * hue of its own, above the others); dashed in a colour
                         * no solid series has: a backdrop such as an earlier
                         * run (drawn under the solid series) */
  gboolean same_hue;    /* dashed: a curve of its own in exactly `color`, drawn like
                         * a solid one, whatever else has that colour — the test
                         * curve of a model beside its solid train curve */
} CamlPlotSeries;

/* A vertical marker, e.g. where the learning rate changed. */
typedef struct {
  double x;
  const char *text;     /* short, e.g. "lr 0.05"; may be NULL */
} CamlPlotEvent;

typedef struct {
  const char *title;    /* all strings may be NULL */
  const char *x_label;
  const char *y_label;
  gboolean log_y;
  double smoothing;     /* EMA factor in [0, 1); 0 = no smoothing */
  gboolean show_raw;    /* with smoothing: also draw the raw data, faint */
  gboolean legend;
  gboolean grid;
  double x_min, x_max;  /* when x_min < x_max, the x axis covers at least this: give
                         * plots side by side the same span to line them up */
  gboolean integer_x;   /* x counts something (steps): whole-number ticks always,
                         * with no data too (else only when every x is whole) */
  const char *note;     /* may be NULL: a few words drawn in the middle of the plot
                         * area, wrapped, e.g. why it is empty */
  /* A categorical x axis: when n_x_categories > 0, x = 0, 1, …, n - 1 stand
   * for these values (say, words such as "bahdanau", "luong"), evenly spaced
   * and labelled with them; x_min and x_max are ignored. Copied. */
  const char *const *x_categories;
  int n_x_categories;
} CamlPlotLineOptions;

typedef struct _CamlPlotLine CamlPlotLine;

/* Copies series, events and strings; computes smoothing, ranges and ticks.
 * opts may be NULL (legend and grid on, everything else off). */
CamlPlotLine *caml_plot_line_new (const CamlPlotLineOptions *opts,
                                  const CamlPlotSeries *series, size_t n_series,
                                  const CamlPlotEvent *events, size_t n_events);
void caml_plot_line_free (CamlPlotLine *plot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CamlPlotLine, caml_plot_line_free)

const CamlPlotAxis *caml_plot_line_get_x_axis (const CamlPlotLine *plot);
const CamlPlotAxis *caml_plot_line_get_y_axis (const CamlPlotLine *plot);
/* The smoothed (or raw, without smoothing) y values of series i (n values). */
const double *caml_plot_line_get_values (const CamlPlotLine *plot, size_t i, size_t *n);
size_t        caml_plot_line_get_n_series (const CamlPlotLine *plot);
/* Its vertical markers (n of them; owned by the plot). */
const CamlPlotEvent *caml_plot_line_get_events (const CamlPlotLine *plot, size_t *n);
/* The label of x tick i: a category's value on a categorical axis, else
 * NULL (the tick's number is drawn). */
const char   *caml_plot_line_get_x_tick_label (const CamlPlotLine *plot, int i);
/* Series i's legend entry (NULL for none). */
const char   *caml_plot_line_get_label (const CamlPlotLine *plot, size_t i);

/* The colour series i is drawn in (rgb[3]). */
void caml_plot_line_get_series_rgb (const CamlPlotLine *plot, size_t i, double rgb[3]);

/* Draws into (0, 0, width, height); if frame is not NULL it receives the plot
 * area in pixels (to map the mouse with caml_plot_axis_unmap). Series of
 * few points (or one) get a marker at each point; x axes whose data are
 * whole numbers (or with integer_x) get whole-number ticks; the legend goes into the corner
 * of the plot area that covers the fewest points; a title too long for the
 * figure is shrunk, then shortened with "…". */
void caml_plot_line_draw (const CamlPlotLine *plot, cairo_t *cr,
                          double width, double height, CamlPlotRect *frame);
/* CamlPlotDrawFunc adapter; user_data is a CamlPlotLine. */
void caml_plot_line_draw_cb (cairo_t *cr, double width, double height, gpointer user_data);
/* Where caml_plot_line_draw puts the legend box (width 0: none, or a strip
 * above the plot area) and each event's label box (labels: n_events of
 * them; width 0: not shown) in width × height of cr (for tests): inside
 * the plot area, clear of the legend and of each other. */
void caml_plot_line_event_rects (const CamlPlotLine *plot, cairo_t *cr, double width,
                                 double height, CamlPlotRect *legend_box, CamlPlotRect *labels);

/* ---------------------------------------------------------- contours --- */

typedef struct {
  double x0, y0, x1, y1;  /* in domain coordinates */
  int level;              /* index into the levels array */
} CamlPlotSegment;

/* Marching squares over the nx × ny field values (row-major, row j at
 * y = y0 + j·(y1-y0)/(ny-1), column i at x = x0 + i·(x1-x0)/(nx-1)). Edge
 * crossings are linearly interpolated; saddles are resolved by the cell's
 * mean. Cells with a non-finite corner are skipped. Returns a new array of
 * *n_segments segments (NULL when there are none); free with g_free. */
CamlPlotSegment *caml_plot_contours (const double *values, int nx, int ny,
                                     double x0, double x1, double y0, double y1,
                                     const double *levels, int n_levels,
                                     size_t *n_segments);

/* ----------------------------------------------------------- heatmap --- */

typedef enum {
  CAML_PLOT_MARKER_DOT,
  CAML_PLOT_MARKER_CROSS,
} CamlPlotMarker;

typedef struct {
  const char *title;        /* all strings may be NULL */
  const char *x_label;
  const char *y_label;
  const char *value_label;  /* colour bar caption */
  CamlPlotColormap colormap;
  gboolean fixed_range;     /* use vmin/vmax, else the finite data range */
  double vmin, vmax;
  int n_contours;           /* ~ number of contour levels (nice values); 0: none */
  gboolean colorbar;
  gboolean smooth;          /* bilinear interpolation between grid values */
  gboolean equal_aspect;    /* one data unit is as long on x as on y */
  CamlPlotMarker marker;    /* for the scatter overlay */
} CamlPlotHeatmapOptions;

typedef struct _CamlPlotHeatmap CamlPlotHeatmap;

/* The most scatter points a heatmap draws. */
#define CAML_PLOT_HEATMAP_MAX_POINTS 2500

/* values: (ny, nx) row-major, row 0 at y0 (bottom), row ny-1 at y1 (top);
 * nx, ny >= 2, x0 < x1, y0 < y1. points: optional scatter overlay px, py
 * (n_points) and, if pv is not NULL, a value per point drawn with the
 * heatmap's colour scale; of more than CAML_PLOT_HEATMAP_MAX_POINTS, that
 * many are drawn, evenly spread through the list.
 * Copies everything; computes the range, ticks, colour image and contours.
 * opts may be NULL (viridis, automatic range, colour bar, smooth). */
CamlPlotHeatmap *caml_plot_heatmap_new (const CamlPlotHeatmapOptions *opts,
                                        const double *values, int nx, int ny,
                                        double x0, double x1, double y0, double y1,
                                        const double *px, const double *py,
                                        const double *pv, size_t n_points);
void caml_plot_heatmap_free (CamlPlotHeatmap *plot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CamlPlotHeatmap, caml_plot_heatmap_free)

/* The value range the colours span, and the contour levels. */
void caml_plot_heatmap_get_range (const CamlPlotHeatmap *plot, double *vmin, double *vmax);
const double *caml_plot_heatmap_get_levels (const CamlPlotHeatmap *plot, int *n_levels);
const CamlPlotSegment *caml_plot_heatmap_get_segments (const CamlPlotHeatmap *plot,
                                                       size_t *n_segments);

void caml_plot_heatmap_draw (const CamlPlotHeatmap *plot, cairo_t *cr,
                             double width, double height, CamlPlotRect *frame);
/* CamlPlotDrawFunc adapter; user_data is a CamlPlotHeatmap. */
void caml_plot_heatmap_draw_cb (cairo_t *cr, double width, double height, gpointer user_data);

/* ------------------------------------------------------------- tiles --- */

/* A grid of small images — test digits beside their σ-maps. Values in [0, 1]
 * (clamped; NaN light grey) through a colormap, drawn with sharp pixels. */
typedef struct {
  const char      *title;     /* may be NULL */
  CamlPlotColormap colormap;
  int              n_cols;    /* tiles per row (>= 1) */
  int              group;     /* draw a wider gap after every `group` tiles in a row; 0: none */
  const char      *legend;    /* a colour bar under the grid captioned so ("χ"), or NULL */
  double           legend_lo, legend_hi;  /* the values the colormap's ends stand for */
} CamlPlotTilesOptions;

typedef struct _CamlPlotTiles CamlPlotTiles;

/* tiles: (count, h, w) row-major. Builds the image once; drawing only scales it. */
CamlPlotTiles *caml_plot_tiles_new (const CamlPlotTilesOptions *opts, const float *tiles,
                                    int count, int h, int w);
void caml_plot_tiles_free (CamlPlotTiles *plot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CamlPlotTiles, caml_plot_tiles_free)
/* Width / height of the grid in tile pixels (with gaps), for choosing a size. */
void caml_plot_tiles_get_size (const CamlPlotTiles *plot, int *width, int *height);
const char *caml_plot_tiles_get_title (const CamlPlotTiles *plot);
/* The figure height at which the grid, drawn width wide, fills it with no
 * empty band below (for exports: size the figure to its content). */
int  caml_plot_tiles_fit_height (const CamlPlotTiles *plot, int width);
void caml_plot_tiles_draw (const CamlPlotTiles *plot, cairo_t *cr, double width, double height);
/* CamlPlotDrawFunc adapter; user_data is a CamlPlotTiles. */
void caml_plot_tiles_draw_cb (cairo_t *cr, double width, double height, gpointer user_data);

/* -------------------------------------------------------------- bars --- */

/* Labelled horizontal bars, one row each from the top — e.g. the words of a
 * ranking with their χ̃. A bar's length and colour (through the colormap)
 * both show its value on [vmin, vmax]; the value is printed after it. */
typedef struct {
  const char      *title;     /* may be NULL */
  CamlPlotColormap colormap;
  double           vmin, vmax;
} CamlPlotBarsOptions;

typedef struct _CamlPlotBars CamlPlotBars;

/* labels (n, UTF-8) and values (n) are copied; non-finite values draw no bar. */
CamlPlotBars *caml_plot_bars_new (const CamlPlotBarsOptions *opts, const char *const *labels,
                                  const double *values, int n);
void caml_plot_bars_free (CamlPlotBars *plot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CamlPlotBars, caml_plot_bars_free)
/* Rows, and row i's label and value (for tests). */
int         caml_plot_bars_get_n (const CamlPlotBars *plot);
const char *caml_plot_bars_get_row (const CamlPlotBars *plot, int i, double *value);
/* Where row i's bar (at full length) lies when drawn into width × height
 * of cr (text extents need cr); the drawn bar is the left fraction of it
 * that the value gives. */
void caml_plot_bars_row_rect (const CamlPlotBars *plot, cairo_t *cr, double width,
                              double height, int i, CamlPlotRect *rect);
void caml_plot_bars_draw (const CamlPlotBars *plot, cairo_t *cr, double width, double height);
/* CamlPlotDrawFunc adapter; user_data is a CamlPlotBars. */
void caml_plot_bars_draw_cb (cairo_t *cr, double width, double height, gpointer user_data);

/* ------------------------------------------------ parallel coordinates --- */

/* A sweep's runs as lines across one vertical axis per setting and per
 * result (as Weights & Biases' and TensorBoard's HParams views draw them).
 * Brushes on axes keep the runs whose value there lies in a range; the
 * others are drawn faint. Unlike the plots above, brushes and the
 * highlighted run change a prepared plot: draw it in one thread. */
typedef struct {
  const char *name;               /* the axis' title; a long one is wrapped or shortened */
  const double *values;           /* (n_rows); NaN (or <= 0 on a log axis): missing,
                                   * drawn at a "–" slot below the axis */
  const char *const *categories;  /* NULL, or the labels of the values 0 … n_categories − 1,
                                   * evenly spaced ("bahdanau", "luong"; "CA", "baseline") */
  int n_categories;
  gboolean log_scale;             /* positive values over decades (learning rates) */
  gboolean integer;               /* whole-number ticks (kernel, depth): at the values
                                   * themselves when there are few of them */
} CamlPlotParallelAxis;

typedef struct {
  const char *title;              /* all may be NULL */
  const char *note;               /* said on an empty chart (no rows) */
  int color_axis;                 /* lines coloured by this axis' value (viridis, with a
                                   * small legend); -1: a palette colour per row */
  const gboolean *dashed;         /* (n_rows): drawn dashed (baselines) */
  const char *const *row_names;   /* (n_rows): names in describe_row ("run 3" without) */
} CamlPlotParallelOptions;

typedef struct _CamlPlotParallel CamlPlotParallel;

/* Copies everything; computes each axis' scale, ticks and labels and the
 * rows' colours. opts may be NULL. No brushes, no highlight. */
CamlPlotParallel *caml_plot_parallel_new (const CamlPlotParallelOptions *opts,
                                          const CamlPlotParallelAxis *axes, int n_axes,
                                          int n_rows);
void caml_plot_parallel_free (CamlPlotParallel *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CamlPlotParallel, caml_plot_parallel_free)

int caml_plot_parallel_get_n_axes (const CamlPlotParallel *p);
int caml_plot_parallel_get_n_rows (const CamlPlotParallel *p);
const char *caml_plot_parallel_get_axis_name (const CamlPlotParallel *p, int axis);
/* An axis' scale: values map onto it from its bottom (lo) to its top (hi);
 * its ticks are the ones drawn, labelled by get_tick_label. */
const CamlPlotAxis *caml_plot_parallel_get_axis (const CamlPlotParallel *p, int axis);
/* Tick i's label: the category's, the value's (a single tick "0.9871" on
 * an axis whose values are all equal), or the axis' tick label. */
const char *caml_plot_parallel_get_tick_label (const CamlPlotParallel *p, int axis, int i);

/* Brushing: a row passes an axis' brush when its value there lies in
 * [lo, hi] (either order given; a missing value never does); it passes
 * when it passes every brushed axis. */
void     caml_plot_parallel_set_brush (CamlPlotParallel *p, int axis, double lo, double hi);
/* axis -1: every axis. */
void     caml_plot_parallel_clear_brush (CamlPlotParallel *p, int axis);
/* Whether axis is brushed, and over [*lo, *hi] (lo <= hi; either may be NULL). */
gboolean caml_plot_parallel_get_brush (const CamlPlotParallel *p, int axis, double *lo,
                                       double *hi);
gboolean caml_plot_parallel_row_passes (const CamlPlotParallel *p, int row);
int      caml_plot_parallel_count_passing (const CamlPlotParallel *p);
/* The row drawn thick, on top (-1: none). */
void     caml_plot_parallel_set_highlight (CamlPlotParallel *p, int row);
int      caml_plot_parallel_get_highlight (const CamlPlotParallel *p);

/* Geometry of the drawing at width × height, the one draw uses (cr for the
 * text's extents). The axis within 12 px of x whose band (its ends, and
 * the missing slot, with 6 px to spare) holds y, and *value (may be NULL):
 * its data value at y, taken within the axis; -1: none. */
int  caml_plot_parallel_axis_at (const CamlPlotParallel *p, cairo_t *cr, double width,
                                 double height, double x, double y, double *value);
/* Where an axis is drawn: its x, its top and its bottom (any may be NULL). */
void caml_plot_parallel_axis_x (const CamlPlotParallel *p, cairo_t *cr, double width,
                                double height, int axis, double *x, double *y_top,
                                double *y_bottom);
/* Where row's line crosses axis (its missing slot when the value is missing). */
void caml_plot_parallel_row_point (const CamlPlotParallel *p, cairo_t *cr, double width,
                                   double height, int row, int axis, double *x, double *y);
/* The passing row whose line passes nearest (x, y), within 6 px; -1: none. */
int  caml_plot_parallel_row_at (const CamlPlotParallel *p, cairo_t *cr, double width,
                                double height, double x, double y);
/* "NAME: kernel 5 · depth 8 · test_accuracy 0.9871 · …": values to 4
 * significant digits, categories by their labels, missing ones "–" (new). */
char *caml_plot_parallel_describe_row (const CamlPlotParallel *p, int row);

/* Draws into (0, 0, width, height): the axes with their ticks and titles,
 * rows failing the brushes faint, the others in their colours (dashed
 * ones dashed), the highlighted row on top, the brushes as bands on their
 * axes; under them how many runs pass and the colour legend. An empty
 * chart draws its axes and its note. */
void caml_plot_parallel_draw (const CamlPlotParallel *p, cairo_t *cr, double width,
                              double height);
/* CamlPlotDrawFunc adapter; user_data is a CamlPlotParallel. */
void caml_plot_parallel_draw_cb (cairo_t *cr, double width, double height, gpointer user_data);

/* ------------------------------------------------------------- panel --- */

typedef struct {
  CamlPlotDrawFunc draw;
  gpointer user_data;
} CamlPlotPanelCell;

typedef struct {
  const char *title;              /* figure title above all cells, may be NULL */
  const CamlPlotPanelCell *cells; /* (n_cells) */
  int n_cells;
  int n_cols;                     /* <= 0: all in one row */
  double cell_aspect;             /* > 0: n_cols is chosen for the figure: the
                                   * columns that give cells of this width to
                                   * height the most room (one row unless
                                   * another gives them over 10 % more) */
} CamlPlotPanel;

/* Rectangle of cell index in a width × height figure (row-major cells). */
void caml_plot_panel_cell_rect (const CamlPlotPanel *panel, double width, double height,
                                int index, CamlPlotRect *rect);
/* Draws each cell translated and clipped to its rectangle. */
void caml_plot_panel_draw (const CamlPlotPanel *panel, cairo_t *cr, double width, double height);
/* CamlPlotDrawFunc adapter; user_data is a CamlPlotPanel. */
void caml_plot_panel_draw_cb (cairo_t *cr, double width, double height, gpointer user_data);

/* ------------------------------------------------------------ output --- */

/* Renders draw on a white width × height image (PNG) or SVG document,
 * encodes it in memory and replaces path atomically (mode 0644). Never
 * prints; returns FALSE with error set on failure. */
gboolean caml_plot_write_png (const char *path, int width, int height,
                              CamlPlotDrawFunc draw, gpointer user_data, GError **error);
gboolean caml_plot_write_svg (const char *path, int width, int height,
                              CamlPlotDrawFunc draw, gpointer user_data, GError **error);

/* Draws into a new transparent image surface of (width × height)·scale
 * pixels, device scale scale, for a window: the plot's text there and in the
 * files above never shares Cairo's fonts with another thread (caml-plot.c,
 * "Plots and threads"). Any thread; a failure is the surface's status. */
cairo_surface_t *caml_plot_draw_image (int width, int height, int scale,
                                       CamlPlotDrawFunc draw, gpointer user_data);

/* ------------------------------------------------------------ figure --- */

/* A figure: its plots side by side (a loss plot and its accuracy, a row of
 * heatmaps or of bar plots, a tile grid), under an optional title, with
 * the size it is written at. Built once, then never changed and shared by
 * reference, so that any thread may draw it: the same figure is a file
 * for `caml train` and an export or a card of the workbench. */
typedef struct _CamlPlotFigure CamlPlotFigure;

/* A figure written width × height; height <= 0: as tall as its tile grid
 * needs at that width (caml_plot_tiles_fit_height). title may be NULL. */
CamlPlotFigure *caml_plot_figure_new (const char *title, int width, int height);
/* Add a plot after the others, taking ownership; only while building. */
void caml_plot_figure_add_line (CamlPlotFigure *figure, CamlPlotLine *plot);
void caml_plot_figure_add_heatmap (CamlPlotFigure *figure, CamlPlotHeatmap *plot);
void caml_plot_figure_add_bars (CamlPlotFigure *figure, CamlPlotBars *plot);
void caml_plot_figure_add_tiles (CamlPlotFigure *figure, CamlPlotTiles *plot);
CamlPlotFigure *caml_plot_figure_ref (CamlPlotFigure *figure);
void caml_plot_figure_unref (CamlPlotFigure *figure);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CamlPlotFigure, caml_plot_figure_unref)

int         caml_plot_figure_get_n_plots (const CamlPlotFigure *figure);
/* The size the figure is written at. */
void        caml_plot_figure_get_size (const CamlPlotFigure *figure, int *width, int *height);
/* Plot i when it is of that kind, else NULL. */
const CamlPlotLine    *caml_plot_figure_get_line (const CamlPlotFigure *figure, int i);
const CamlPlotHeatmap *caml_plot_figure_get_heatmap (const CamlPlotFigure *figure, int i);
const CamlPlotBars    *caml_plot_figure_get_bars (const CamlPlotFigure *figure, int i);
const CamlPlotTiles   *caml_plot_figure_get_tiles (const CamlPlotFigure *figure, int i);

/* Draws plots [first, first + n) side by side into (0, 0, width, height)
 * of cr — the title too when they are all the figure's plots. cell_aspect
 * as CamlPlotPanel's (0: one row). When one line plot is drawn, *frame (may
 * be NULL) gets its data area. */
void caml_plot_figure_draw (const CamlPlotFigure *figure, int first, int n, double cell_aspect,
                            cairo_t *cr, double width, double height, CamlPlotRect *frame);
/* The whole figure at its size: SVG when path ends in ".svg", PNG when it
 * ends in ".png" or has no extension; another extension is an error. */
gboolean caml_plot_figure_write (const CamlPlotFigure *figure, const char *path,
                                 GError **error);

G_END_DECLS
