/* caml-plot-line.c — line plots (loss curves): several series, optional
 * log y, EMA smoothing, legend, grid and vertical event markers. */
#include "caml-plot-private.h"

#include <math.h>
#include <string.h>

/* How a series is drawn beside the others. A dashed series in the colour
 * of a solid one is its companion: unlabelled, it is the raw data under a
 * trend (drawn first, faint); labelled, it is a reference such as a
 * baseline (drawn last, in a colour of its own, over a halo, so that it
 * stays visible over the noisy curve it is compared with). A dashed series
 * in a colour of its own is a backdrop, such as an earlier run: drawn
 * under the solid series, which it must not hide. */
typedef enum {
  ROLE_PLAIN,
  ROLE_FAINT,
  ROLE_REFERENCE,
  ROLE_BACKDROP,
} SeriesRole;

typedef struct {
  double *x;      /* (n) */
  double *raw;    /* (n) y as given */
  double *y;      /* (n) smoothed y, or a copy of raw */
  size_t n;
  size_t n_finite; /* points with finite x and y */
  char *label;
  int color;
  double rgb[3];  /* the colour drawn, after the role's */
  gboolean dashed;
  gboolean same_hue;
  SeriesRole role;
} LineSeries;

struct _CamlPlotLine {
  CamlPlotLineOptions opts;   /* string fields point at the copies below */
  char *title;
  char *x_label;
  char *y_label;
  char *note;
  LineSeries *series;         /* (n_series) */
  size_t n_series;
  CamlPlotEvent *events;      /* (n_events), text owned */
  size_t n_events;
  char **categories;          /* (opts.n_x_categories) or NULL: a categorical x axis */
  const char *tick_labels[CAML_PLOT_MAX_TICKS]; /* of the x ticks, borrowed from categories */
  CamlPlotAxis x;
  CamlPlotAxis y;
};

static gboolean
smoothed (const CamlPlotLine *plot)
{
  return plot->opts.smoothing > 0.0;
}

/* TRUE when every finite x is a whole number (steps, iterations). */
static gboolean
integer_x (const CamlPlotLine *plot)
{
  for (size_t s = 0; s < plot->n_series; s++)
    for (size_t i = 0; i < plot->series[s].n; i++)
      {
        double v = plot->series[s].x[i];
        if (isfinite (v) && v != floor (v))
          return FALSE;
      }
  return TRUE;
}

/* The y range of a linear axis with a little room around the data. The
 * room never takes the axis across 0 or 1 when the data do not cross them:
 * accuracies and AUCs stay within [0, 1], losses above 0. A single value
 * gets a range around it, within [0, 1] when it lies there. */
void
caml_plot_padded_range (double lo, double hi, double *out_lo, double *out_hi)
{
  double a, b;

  if (hi - lo > fabs (hi) * 1e-9)
    {
      double pad = 0.04 * (hi - lo);
      a = lo - pad;
      b = hi + pad;
    }
  else
    {
      gboolean unit = lo >= 0.0 && hi <= 1.0;
      double d = unit ? 0.05 : (lo == 0.0 ? 1.0 : 0.1 * fabs (lo));
      a = lo - d;
      b = hi + d;
      if (unit && b > 1.0)
        {
          a -= b - 1.0;
          b = 1.0;
        }
      if (unit && a < 0.0)
        {
          b -= a;
          a = 0.0;
        }
    }
  if (lo >= 0.0 && a < 0.0)
    a = 0.0;
  if (hi <= 1.0 && lo < 1.0 && b > 1.0)
    b = 1.0;
  *out_lo = a;
  *out_hi = b;
}

static void
compute_axes (CamlPlotLine *plot)
{
  gboolean log_y = plot->opts.log_y;
  gboolean have_x = FALSE, have_y = FALSE;
  double xlo = 0.0, xhi = 1.0, ylo = log_y ? 0.1 : 0.0, yhi = 1.0;

  for (size_t s = 0; s < plot->n_series; s++)
    {
      const LineSeries *ls = &plot->series[s];
      double lo, hi;

      if (caml_plot_finite_range (ls->x, ls->n, FALSE, &lo, &hi))
        {
          xlo = have_x ? MIN (xlo, lo) : lo;
          xhi = have_x ? MAX (xhi, hi) : hi;
          have_x = TRUE;
        }
      for (int pass = 0; pass < 2; pass++)
        {
          const double *v = pass == 0 ? ls->y : ls->raw;
          if (pass == 1 && !(smoothed (plot) && plot->opts.show_raw) && ls->role != ROLE_FAINT)
            continue;
          if (caml_plot_finite_range (v, ls->n, log_y, &lo, &hi))
            {
              ylo = have_y ? MIN (ylo, lo) : lo;
              yhi = have_y ? MAX (yhi, hi) : hi;
              have_y = TRUE;
            }
        }
    }

  if (plot->categories != NULL)
    {
      /* one tick per category (every k-th when there are too many), half a
       * step of room either side */
      int n = plot->opts.n_x_categories;
      int every = (n + CAML_PLOT_MAX_TICKS - 1) / CAML_PLOT_MAX_TICKS;
      caml_plot_axis_linear (&plot->x, -0.5, n - 0.5, 8);
      plot->x.n_ticks = 0;
      plot->x.n_minor = 0;
      plot->x.step = every;
      for (int i = 0; i < n; i += every)
        {
          plot->tick_labels[plot->x.n_ticks] = plot->categories[i];
          plot->x.ticks[plot->x.n_ticks++] = i;
        }
    }
  else if (plot->opts.x_min < plot->opts.x_max)
    {
      xlo = have_x ? MIN (xlo, plot->opts.x_min) : plot->opts.x_min;
      xhi = have_x ? MAX (xhi, plot->opts.x_max) : plot->opts.x_max;
      have_x = TRUE;
    }
  gboolean whole = plot->opts.integer_x || (have_x && integer_x (plot));
  if (whole && xhi - xlo < 1.0)
    {
      /* one step: a step either side, not a tenth of it */
      double d = MAX (1.0, 0.1 * fabs (xlo));
      xlo = xlo >= 0.0 ? MAX (xlo - d, 0.0) : xlo - d;
      xhi += d;
    }
  if (plot->categories == NULL)
    caml_plot_axis_linear (&plot->x, xlo, xhi, 8);
  if (whole && plot->categories == NULL)
    caml_plot_axis_integer_ticks (&plot->x, 8);
  if (log_y)
    {
      if (yhi <= ylo)
        {
          ylo /= 2.0;
          yhi *= 2.0;
        }
      double pad = pow (yhi / ylo, 0.04);
      caml_plot_axis_log (&plot->y, ylo / pad, yhi * pad, 8);
    }
  else
    {
      double lo, hi;
      caml_plot_padded_range (ylo, yhi, &lo, &hi);
      caml_plot_axis_linear (&plot->y, lo, hi, 8);
    }
}

/* Roles and colours, from the dashes, labels and colours of all series. */
static void
assign_roles (CamlPlotLine *plot)
{
  for (size_t s = 0; s < plot->n_series; s++)
    {
      LineSeries *ls = &plot->series[s];
      gboolean shares = FALSE;

      for (size_t o = 0; o < plot->n_series; o++)
        if (o != s && !plot->series[o].dashed && plot->series[o].color == ls->color)
          shares = TRUE;
      ls->role = !ls->dashed || ls->same_hue ? ROLE_PLAIN
                 : !shares ? ROLE_BACKDROP
                 : ls->label == NULL || *ls->label == '\0' ? ROLE_FAINT : ROLE_REFERENCE;
      /* a reference takes a hue four places on in the palette: blue's is
       * purple, orange's brown, green's pink */
      caml_plot_palette_rgb (ls->role == ROLE_REFERENCE ? ls->color + 4 : ls->color, ls->rgb);
      ls->n_finite = 0;
      for (size_t i = 0; i < ls->n; i++)
        ls->n_finite += isfinite (ls->x[i]) && isfinite (ls->y[i]);
    }
}

CamlPlotLine *
caml_plot_line_new (const CamlPlotLineOptions *opts,
                    const CamlPlotSeries *series, size_t n_series,
                    const CamlPlotEvent *events, size_t n_events)
{
  static const CamlPlotLineOptions defaults = { .legend = TRUE, .grid = TRUE };
  CamlPlotLine *plot = g_new0 (CamlPlotLine, 1);

  plot->opts = opts != NULL ? *opts : defaults;
  plot->opts.smoothing = isfinite (plot->opts.smoothing)
                         ? CLAMP (plot->opts.smoothing, 0.0, 0.999) : 0.0;
  plot->title = g_strdup (plot->opts.title);
  plot->x_label = g_strdup (plot->opts.x_label);
  plot->y_label = g_strdup (plot->opts.y_label);
  plot->note = g_strdup (plot->opts.note);
  plot->opts.title = plot->title;
  plot->opts.x_label = plot->x_label;
  plot->opts.y_label = plot->y_label;
  plot->opts.note = plot->note;
  if (plot->opts.n_x_categories > 0 && plot->opts.x_categories != NULL)
    {
      plot->categories = g_new0 (char *, plot->opts.n_x_categories + 1);
      for (int i = 0; i < plot->opts.n_x_categories; i++)
        plot->categories[i] = g_strdup (plot->opts.x_categories[i]);
    }
  else
    plot->opts.n_x_categories = 0;
  plot->opts.x_categories = (const char *const *) plot->categories;

  plot->series = g_new0 (LineSeries, MAX (n_series, 1));
  plot->n_series = n_series;
  for (size_t s = 0; s < n_series; s++)
    {
      const CamlPlotSeries *in = &series[s];
      LineSeries *ls = &plot->series[s];
      size_t n = in->y != NULL ? in->n : 0;

      ls->n = n;
      ls->x = g_new (double, MAX (n, 1));
      for (size_t i = 0; i < n; i++)
        ls->x[i] = in->x != NULL ? in->x[i] : (double) i;
      /* An empty series (no y yet) still gets buffers: draw loops see n = 0. */
      ls->raw = g_new0 (double, MAX (n, 1));
      if (n > 0)
        memcpy (ls->raw, in->y, n * sizeof (double));
      ls->y = g_new (double, MAX (n, 1));
      /* on a log axis the trend is an average of log(y) */
      if (smoothed (plot) && plot->opts.log_y)
        caml_plot_ema_log (ls->y, ls->raw, n, plot->opts.smoothing);
      else if (smoothed (plot))
        caml_plot_ema (ls->y, ls->raw, n, plot->opts.smoothing);
      else
        memcpy (ls->y, ls->raw, n * sizeof (double));
      ls->label = g_strdup (in->label);
      ls->color = in->color;
      ls->dashed = in->dashed;
      ls->same_hue = in->same_hue;
    }

  plot->events = g_new0 (CamlPlotEvent, MAX (n_events, 1));
  plot->n_events = n_events;
  for (size_t e = 0; e < n_events; e++)
    {
      plot->events[e].x = events[e].x;
      plot->events[e].text = g_strdup (events[e].text);
    }

  assign_roles (plot);
  compute_axes (plot);
  return plot;
}

void
caml_plot_line_free (CamlPlotLine *plot)
{
  if (plot == NULL)
    return;
  for (size_t s = 0; s < plot->n_series; s++)
    {
      g_free (plot->series[s].x);
      g_free (plot->series[s].raw);
      g_free (plot->series[s].y);
      g_free (plot->series[s].label);
    }
  for (size_t e = 0; e < plot->n_events; e++)
    g_free ((char *) plot->events[e].text);
  g_free (plot->series);
  g_free (plot->events);
  g_free (plot->title);
  g_free (plot->x_label);
  g_free (plot->y_label);
  g_free (plot->note);
  g_strfreev (plot->categories);
  g_free (plot);
}

const CamlPlotEvent *
caml_plot_line_get_events (const CamlPlotLine *plot, size_t *n)
{
  *n = plot->n_events;
  return plot->events;
}

const CamlPlotAxis *
caml_plot_line_get_x_axis (const CamlPlotLine *plot)
{
  return &plot->x;
}

const char *
caml_plot_line_get_x_tick_label (const CamlPlotLine *plot, int i)
{
  g_return_val_if_fail (i >= 0 && i < plot->x.n_ticks, NULL);
  return plot->categories != NULL ? plot->tick_labels[i] : NULL;
}

const CamlPlotAxis *
caml_plot_line_get_y_axis (const CamlPlotLine *plot)
{
  return &plot->y;
}

const double *
caml_plot_line_get_values (const CamlPlotLine *plot, size_t i, size_t *n)
{
  g_return_val_if_fail (i < plot->n_series, NULL);
  if (n != NULL)
    *n = plot->series[i].n;
  return plot->series[i].y;
}

size_t
caml_plot_line_get_n_series (const CamlPlotLine *plot)
{
  return plot->n_series;
}

const char *
caml_plot_line_get_label (const CamlPlotLine *plot, size_t i)
{
  g_return_val_if_fail (i < plot->n_series, NULL);
  return plot->series[i].label;
}

void
caml_plot_line_get_series_rgb (const CamlPlotLine *plot, size_t i, double rgb[3])
{
  g_return_if_fail (i < plot->n_series);
  memcpy (rgb, plot->series[i].rgb, sizeof plot->series[i].rgb);
}

/* ----------------------------------------------------------- drawing --- */

/* The points of one half-pixel column of a series, reduced to the four
 * that decide how its stroke looks there: the first, the lowest, the highest
 * and the last ("M4" aggregation). A curve of 300,000 steps then costs a few
 * thousand segments instead of 300,000 — a loss curve redrawn while
 * training took 55 ms, now a few — and rasterises the same. */
typedef struct {
  double x, y;
  size_t i;
} ColumnPoint;

typedef struct {
  gboolean open;
  long column;
  ColumnPoint first, low, high, last;
  size_t run;            /* points drawn since the pen went down */
  double dot_x, dot_y;   /* the run's first point */
} Column;

static void
emit_point (cairo_t *cr, Column *c, const ColumnPoint *p)
{
  if (c->run == 0)
    {
      cairo_move_to (cr, p->x, p->y);
      c->dot_x = p->x;
      c->dot_y = p->y;
    }
  else
    cairo_line_to (cr, p->x, p->y);
  c->run++;
}

static void
flush_column (cairo_t *cr, Column *c)
{
  if (!c->open)
    return;
  gboolean low_first = c->low.i <= c->high.i;
  const ColumnPoint *order[4] = { &c->first, low_first ? &c->low : &c->high,
                                  low_first ? &c->high : &c->low, &c->last };
  size_t drawn = (size_t) -1;
  for (int k = 0; k < 4; k++)
    if (order[k]->i != drawn)
      {
        emit_point (cr, c, order[k]);
        drawn = order[k]->i;
      }
  c->open = FALSE;
}

/* A break in the series (a value that cannot be drawn) lifts the pen; a
 * lone point still shows as a dot (round caps). */
static void
end_run (cairo_t *cr, Column *c)
{
  flush_column (cr, c);
  if (c->run == 1)
    cairo_line_to (cr, c->dot_x, c->dot_y);
  c->run = 0;
}

static void
stroke_series (cairo_t *cr, const CamlPlotLine *plot, const CamlPlotRect *area,
               const double *x, const double *y, size_t n)
{
  double x0 = area->x, x1 = area->x + area->width;
  double y0 = area->y + area->height, y1 = area->y;
  Column c = { 0 };

  for (size_t i = 0; i < n; i++)
    {
      ColumnPoint p = { caml_plot_axis_map (&plot->x, x[i], x0, x1),
                        caml_plot_axis_map (&plot->y, y[i], y0, y1), i };
      if (!isfinite (p.x) || !isfinite (p.y))
        {
          end_run (cr, &c);
          continue;
        }
      long column = (long) floor (2.0 * p.x);
      if (c.open && column != c.column)
        flush_column (cr, &c);
      if (!c.open)
        {
          c.open = TRUE;
          c.column = column;
          c.first = c.low = c.high = p;
        }
      else if (p.y < c.low.y)
        c.low = p;
      else if (p.y > c.high.y)
        c.high = p;
      c.last = p;
    }
  end_run (cr, &c);
  cairo_stroke (cr);
}

/* A series gets markers when its points are far apart (evaluations every
 * few hundred steps) or when there is only one. */
static gboolean
wants_markers (const LineSeries *ls, const CamlPlotStyle *style, const CamlPlotRect *area)
{
  return ls->n_finite > 0
         && (ls->n_finite == 1 || area->width / ls->n_finite >= 12.0 * style->scale);
}

static void
draw_markers (cairo_t *cr, const CamlPlotLine *plot, const CamlPlotStyle *style,
              const CamlPlotRect *area, const LineSeries *ls)
{
  double s = style->scale;
  double r = MAX ((ls->n_finite == 1 ? 4.5 : 3.5) * s, 3.0);
  double x0 = area->x, x1 = area->x + area->width;
  double y0 = area->y + area->height, y1 = area->y;

  cairo_save (cr);
  /* a point on the frame still shows whole */
  cairo_rectangle (cr, area->x - r - 2.0 * s, area->y - r - 2.0 * s,
                   area->width + 2.0 * r + 4.0 * s, area->height + 2.0 * r + 4.0 * s);
  cairo_clip (cr);
  cairo_set_dash (cr, NULL, 0, 0.0);
  cairo_set_line_width (cr, 1.2 * s);
  for (size_t i = 0; i < ls->n; i++)
    {
      double px = caml_plot_axis_map (&plot->x, ls->x[i], x0, x1);
      double py = caml_plot_axis_map (&plot->y, ls->y[i], y0, y1);
      if (!isfinite (px) || !isfinite (py) || px < x0 - 0.5 || px > x1 + 0.5
          || py < y1 - 0.5 || py > y0 + 0.5)
        continue;
      cairo_new_sub_path (cr);
      cairo_arc (cr, px, py, r, 0.0, 2.0 * G_PI);
      cairo_set_source_rgb (cr, ls->rgb[0], ls->rgb[1], ls->rgb[2]);
      cairo_fill_preserve (cr);
      cairo_set_source_rgb (cr, 1.0, 1.0, 1.0);
      cairo_stroke (cr);
    }
  cairo_restore (cr);
}

static void
draw_one_series (cairo_t *cr, const CamlPlotLine *plot, const CamlPlotStyle *style,
                 const CamlPlotRect *area, const LineSeries *ls)
{
  double s = style->scale;
  const double *rgb = ls->rgb;
  double dash[2] = { 6.0 * s, 4.0 * s };

  if (ls->role == ROLE_FAINT)
    {
      /* the raw data under its trend: thin, faint, solid (dashes on noise
       * read as more noise) */
      cairo_set_dash (cr, NULL, 0, 0.0);
      cairo_set_source_rgba (cr, rgb[0], rgb[1], rgb[2], 0.3);
      cairo_set_line_width (cr, 1.0 * s);
      stroke_series (cr, plot, area, ls->x, ls->y, ls->n);
      return;
    }
  cairo_set_dash (cr, dash, ls->dashed ? 2 : 0, 0.0);
  if (smoothed (plot) && plot->opts.show_raw)
    {
      cairo_set_source_rgba (cr, rgb[0], rgb[1], rgb[2], 0.25);
      cairo_set_line_width (cr, 1.0 * s);
      stroke_series (cr, plot, area, ls->x, ls->raw, ls->n);
    }
  if (ls->role == ROLE_REFERENCE)
    {
      /* a halo keeps the dashes readable over the curves below */
      cairo_set_dash (cr, NULL, 0, 0.0);
      cairo_set_source_rgba (cr, 1.0, 1.0, 1.0, 0.8);
      cairo_set_line_width (cr, 4.4 * s);
      stroke_series (cr, plot, area, ls->x, ls->y, ls->n);
      cairo_set_dash (cr, dash, 2, 0.0);
    }
  cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
  cairo_set_line_width (cr, (ls->role == ROLE_REFERENCE ? 2.2 : 1.8) * s);
  stroke_series (cr, plot, area, ls->x, ls->y, ls->n);
}

/* Faint raw data first, then backdrops, the series, and references over
 * them. */
static void
draw_series (cairo_t *cr, const CamlPlotLine *plot, const CamlPlotStyle *style,
             const CamlPlotRect *area)
{
  static const SeriesRole order[] = { ROLE_FAINT, ROLE_BACKDROP, ROLE_PLAIN, ROLE_REFERENCE };

  cairo_save (cr);
  cairo_rectangle (cr, area->x, area->y, area->width, area->height);
  cairo_clip (cr);
  cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_ROUND);
  for (size_t k = 0; k < G_N_ELEMENTS (order); k++)
    for (size_t i = 0; i < plot->n_series; i++)
      if (plot->series[i].role == order[k])
        draw_one_series (cr, plot, style, area, &plot->series[i]);
  cairo_restore (cr);
  for (size_t k = 1; k < G_N_ELEMENTS (order); k++)
    for (size_t i = 0; i < plot->n_series; i++)
      if (plot->series[i].role == order[k] && wants_markers (&plot->series[i], style, area))
        draw_markers (cr, plot, style, area, &plot->series[i]);
}

static gboolean
rects_overlap (const CamlPlotRect *a, const CamlPlotRect *b, double gap)
{
  return a->width > 0 && b->width > 0
         && a->x < b->x + b->width + gap && b->x < a->x + a->width + gap
         && a->y < b->y + b->height + gap && b->y < a->y + a->height + gap;
}

/* An event label's box: its text (ascenders and descenders too, with a
 * margin) right of its line at px (side 0) or left of it (side 1), on row
 * `row` of the rows from `top` down. Row 0 from the plot area's top keeps
 * the text clear of the frame line, which the "l" of "lr 0.05" touched.
 * The text goes at event_label_text_x/_y. */
static CamlPlotRect
event_label_box (const CamlPlotStyle *style, double px, double text_w, double top, int row,
                 int side)
{
  double s = style->scale;
  double size = style->tick_size * 0.95;
  double w = text_w + 4.0 * s, h = size * 1.06 + 3.0 * s;
  return (CamlPlotRect) { side == 0 ? px + 1.5 * s : px - 1.5 * s - w,
                          top + 3.0 * s + row * (h + 2.0 * s), w, h };
}

static double
event_label_text_x (const CamlPlotStyle *style, const CamlPlotRect *box)
{
  return box->x + 2.0 * style->scale;
}

static double
event_label_text_y (const CamlPlotStyle *style, const CamlPlotRect *box)
{
  return box->y + 1.5 * style->scale + style->tick_size * 0.95 * 0.12;   /* capitals' top */
}

/* Where each event's label goes (width 0: none): inside the plot area,
 * right of its line or else left of it, in the first of a few rows under
 * the top of the frame that meets neither the legend box (avoid, may be
 * NULL) nor a label placed before — or, when those are taken, in rows
 * below the legend. */
static void
place_event_labels (cairo_t *cr, const CamlPlotLine *plot, const CamlPlotStyle *style,
                    const CamlPlotRect *area, const CamlPlotRect *avoid, CamlPlotRect *boxes)
{
  enum { ROWS = 3 };
  double s = style->scale;
  double size = style->tick_size * 0.95;
  double left_end = area->x + 1.0 * s, right_end = area->x + area->width - 1.0 * s;

  for (size_t e = 0; e < plot->n_events; e++)
    {
      boxes[e] = (CamlPlotRect) { 0 };
      double px = caml_plot_axis_map (&plot->x, plot->events[e].x, area->x,
                                      area->x + area->width);
      const char *text = plot->events[e].text;
      if (!isfinite (px) || px < area->x - 0.5 || px > area->x + area->width + 0.5
          || text == NULL || *text == '\0')
        continue;
      double tw = caml_plot_text_width (cr, size, text);
      double below = avoid != NULL ? avoid->y + avoid->height + 1.0 * s : area->y;
      gboolean found = FALSE;

      /* Rows under the top first, then rows below the legend. */
      for (int pass = 0; pass < 2 && !found; pass++)
        for (int row = 0; row < ROWS && !found; row++)
          for (int side = 0; side < 2 && !found; side++)
            {
              CamlPlotRect box = event_label_box (style, px, tw, pass == 0 ? area->y : below,
                                                  row, side);
              gboolean clear = box.x >= left_end && box.x + box.width <= right_end
                               && box.y + box.height <= area->y + area->height
                               && (avoid == NULL || !rects_overlap (&box, avoid, 2.0 * s));
              for (size_t f = 0; clear && f < e; f++)
                clear = !rects_overlap (&box, &boxes[f], 1.0 * s);
              if (clear)
                {
                  boxes[e] = box;
                  found = TRUE;
                }
            }
      if (!found)   /* crowded: the first row, kept inside the area */
        {
          boxes[e] = event_label_box (style, px, tw, area->y, 0, 0);
          boxes[e].x = CLAMP (boxes[e].x, left_end, MAX (right_end - boxes[e].width, left_end));
        }
    }
}

static void
draw_events (cairo_t *cr, const CamlPlotLine *plot, const CamlPlotStyle *style,
             const CamlPlotRect *area, const CamlPlotRect *avoid)
{
  double s = style->scale;
  double dash[2] = { 3.0 * s, 3.0 * s };
  double size = style->tick_size * 0.95;
  g_autofree CamlPlotRect *boxes = g_new0 (CamlPlotRect, MAX (plot->n_events, 1));

  place_event_labels (cr, plot, style, area, avoid, boxes);
  cairo_save (cr);
  cairo_rectangle (cr, area->x, area->y, area->width, area->height);
  cairo_clip (cr);
  for (size_t e = 0; e < plot->n_events; e++)
    {
      double px = caml_plot_axis_map (&plot->x, plot->events[e].x, area->x,
                                      area->x + area->width);
      if (!isfinite (px) || px < area->x - 0.5 || px > area->x + area->width + 0.5)
        continue;

      cairo_set_source_rgb (cr, 0.45, 0.45, 0.45);
      cairo_set_line_width (cr, 1.0 * s);
      cairo_set_dash (cr, dash, 2, 0.0);
      cairo_move_to (cr, px, area->y);
      cairo_line_to (cr, px, area->y + area->height);
      cairo_stroke (cr);
      cairo_set_dash (cr, NULL, 0, 0.0);
    }
  for (size_t e = 0; e < plot->n_events; e++)
    {
      const CamlPlotRect *box = &boxes[e];
      if (box->width <= 0)
        continue;
      cairo_set_source_rgba (cr, 1.0, 1.0, 1.0, 0.85);
      cairo_rectangle (cr, box->x, box->y, box->width, box->height);
      cairo_fill (cr);
      cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
      caml_plot_text (cr, size, FALSE, event_label_text_x (style, box),
                      event_label_text_y (style, box), 0.0, 0.0, plot->events[e].text);
    }
  cairo_restore (cr);
}

/* How much of the data a box would cover: points of every series inside
 * it, with sparse series sampled along their segments too. */
static size_t
covered (const CamlPlotLine *plot, const CamlPlotRect *area, const CamlPlotRect *box)
{
  double x0 = area->x, x1 = area->x + area->width;
  double y0 = area->y + area->height, y1 = area->y;
  size_t count = 0;

  for (size_t s = 0; s < plot->n_series; s++)
    {
      const LineSeries *ls = &plot->series[s];
      size_t stride = MAX (ls->n / 4000, 1);
      int sub = ls->n <= 2000 ? 8 : 1;
      double qx = NAN, qy = NAN;

      for (size_t i = 0; i < ls->n; i += stride)
        {
          double px = caml_plot_axis_map (&plot->x, ls->x[i], x0, x1);
          double py = caml_plot_axis_map (&plot->y, ls->y[i], y0, y1);
          if (!isfinite (px) || !isfinite (py))
            {
              qx = qy = NAN;
              continue;
            }
          for (int k = isfinite (qx) ? 1 : sub; k <= sub; k++)
            {
              double t = (double) k / sub;
              double x = isfinite (qx) ? qx + t * (px - qx) : px;
              double y = isfinite (qy) ? qy + t * (py - qy) : py;
              count += x >= box->x && x <= box->x + box->width
                       && y >= box->y && y <= box->y + box->height;
            }
          qx = px;
          qy = py;
        }
    }
  return count;
}

/* Whether a box would hide an event's text where it goes with no legend
 * in the way: the first row, right of the marker, or left when it would
 * leave the area (place_event_labels, which also moves a label off a
 * legend that could not avoid it). */
static gboolean
hides_event_text (cairo_t *cr, const CamlPlotLine *plot, const CamlPlotStyle *style,
                  const CamlPlotRect *area, const CamlPlotRect *box)
{
  double size = style->tick_size * 0.95;
  for (size_t e = 0; e < plot->n_events; e++)
    {
      const char *text = plot->events[e].text;
      double px = caml_plot_axis_map (&plot->x, plot->events[e].x, area->x,
                                      area->x + area->width);
      if (text == NULL || *text == '\0' || !isfinite (px))
        continue;
      double tw = caml_plot_text_width (cr, size, text);
      CamlPlotRect label = event_label_box (style, px, tw, area->y, 0, 0);
      if (label.x + label.width > area->x + area->width - 1.0 * style->scale)
        label = event_label_box (style, px, tw, area->y, 0, 1);
      if (rects_overlap (&label, box, 0.0))
        return TRUE;
    }
  return FALSE;
}

/* Where the legend goes: a box in a corner of the plot area, or, when
 * every corner would cover data, a strip of entries side by side above the
 * plot area (which then gives up strip_h of its height). */
typedef struct {
  int rows;              /* labelled series */
  double size, sample, pad, row_h;
  double widest;         /* widest label */
  gboolean strip;
  double x, y, w, h;     /* the box, or the strip */
} Legend;

static double
entry_width (const Legend *lg, cairo_t *cr, const char *label, double s)
{
  return lg->sample + 6.0 * s + caml_plot_text_width (cr, lg->size, label);
}

static gboolean
legend_place (cairo_t *cr, const CamlPlotLine *plot, const CamlPlotStyle *style,
              CamlPlotRect *area, Legend *lg)
{
  double s = style->scale;

  *lg = (Legend) { 0 };
  lg->size = style->tick_size;
  lg->sample = 22.0 * s;
  lg->pad = 7.0 * s;
  lg->row_h = lg->size * 1.45;
  for (size_t i = 0; i < plot->n_series; i++)
    if (plot->series[i].label != NULL && *plot->series[i].label)
      {
        lg->widest = MAX (lg->widest, caml_plot_text_width (cr, lg->size, plot->series[i].label));
        lg->rows++;
      }
  if (lg->rows == 0)
    return FALSE;

  double bw = lg->pad + lg->sample + 6.0 * s + lg->widest + lg->pad;
  double bh = lg->pad * 2.0 + lg->rows * lg->row_h - (lg->row_h - lg->size * 0.72);
  double margin = 8.0 * s;
  /* The corner that covers the least data, top right on a tie; never over
   * an event's text if another corner is free of it. */
  double corners[4][2] = {
    { area->x + area->width - bw - margin, area->y + margin },
    { area->x + margin, area->y + margin },
    { area->x + area->width - bw - margin, area->y + area->height - bh - margin },
    { area->x + margin, area->y + area->height - bh - margin },
  };
  size_t best_count = G_MAXSIZE;
  for (int c = 0; c < 4; c++)
    {
      CamlPlotRect box = { corners[c][0] - 3.0 * s, corners[c][1] - 3.0 * s,
                           bw + 6.0 * s, bh + 6.0 * s };
      size_t n = covered (plot, area, &box);
      if (hides_event_text (cr, plot, style, area, &box))
        n = n + G_MAXSIZE / 8;
      if (n < best_count)
        {
          best_count = n;
          lg->x = corners[c][0];
          lg->y = corners[c][1];
        }
    }
  lg->w = bw;
  lg->h = bh;
  if (best_count == 0 || bw > 0.9 * area->width || bh > 0.9 * area->height)
    return TRUE;

  /* Every corner covers data (or an event's text): entries in rows above
   * the plot area. */
  int lines = 1;
  double x = 0.0;
  for (size_t i = 0; i < plot->n_series; i++)
    {
      const char *label = plot->series[i].label;
      if (label == NULL || *label == '\0')
        continue;
      double w = entry_width (lg, cr, label, s);
      if (x > 0.0 && x + w > area->width)
        {
          lines++;
          x = 0.0;
        }
      x += w + 14.0 * s;
    }
  lg->strip = TRUE;
  lg->h = lines * lg->row_h + 2.0 * s;
  lg->x = area->x;
  lg->w = area->width;
  area->y += lg->h;
  area->height = MAX (area->height - lg->h, 10.0);
  lg->y = area->y - lg->h;
  return TRUE;
}

static void
legend_entry (cairo_t *cr, const CamlPlotLine *plot, const CamlPlotStyle *style,
              const CamlPlotRect *area, const Legend *lg, const LineSeries *ls,
              double x, double ty)
{
  double s = style->scale;
  double dash[2] = { 6.0 * s, 4.0 * s };
  double cy = ty + lg->size * 0.36;

  cairo_set_source_rgb (cr, ls->rgb[0], ls->rgb[1], ls->rgb[2]);
  cairo_set_line_width (cr, (ls->role == ROLE_REFERENCE ? 2.2 : 1.8) * s);
  cairo_set_dash (cr, dash, ls->dashed ? 2 : 0, 0.0);
  cairo_move_to (cr, x, cy);
  cairo_line_to (cr, x + lg->sample, cy);
  cairo_stroke (cr);
  cairo_set_dash (cr, NULL, 0, 0.0);
  if (wants_markers (ls, style, area))
    {
      cairo_arc (cr, x + 0.5 * lg->sample, cy, MAX (3.5 * s, 3.0), 0.0, 2.0 * G_PI);
      cairo_fill (cr);
    }
  cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
  caml_plot_text (cr, lg->size, FALSE, x + lg->sample + 6.0 * s, ty, 0.0, 0.0, ls->label);
}

static void
draw_legend (cairo_t *cr, const CamlPlotLine *plot, const CamlPlotStyle *style,
             const CamlPlotRect *area, const Legend *lg)
{
  double s = style->scale;

  cairo_save (cr);
  if (lg->strip)
    {
      double x = lg->x, ty = lg->y;
      for (size_t i = 0; i < plot->n_series; i++)
        {
          const LineSeries *ls = &plot->series[i];
          if (ls->label == NULL || *ls->label == '\0')
            continue;
          double w = entry_width (lg, cr, ls->label, s);
          if (x > lg->x && x + w > lg->x + lg->w)
            {
              x = lg->x;
              ty += lg->row_h;
            }
          legend_entry (cr, plot, style, area, lg, ls, x, ty);
          x += w + 14.0 * s;
        }
      cairo_restore (cr);
      return;
    }

  cairo_rectangle (cr, lg->x, lg->y, lg->w, lg->h);
  cairo_set_source_rgba (cr, 1.0, 1.0, 1.0, 0.88);
  cairo_fill_preserve (cr);
  cairo_set_source_rgb (cr, 0.8, 0.8, 0.8);
  cairo_set_line_width (cr, 0.8 * s);
  cairo_stroke (cr);

  int row = 0;
  for (size_t i = 0; i < plot->n_series; i++)
    {
      const LineSeries *ls = &plot->series[i];
      if (ls->label == NULL || *ls->label == '\0')
        continue;
      legend_entry (cr, plot, style, area, lg, ls, lg->x + lg->pad,
                    lg->y + lg->pad + row * lg->row_h);
      row++;
    }
  cairo_restore (cr);
}

void
caml_plot_line_draw (const CamlPlotLine *plot, cairo_t *cr,
                     double width, double height, CamlPlotRect *frame)
{
  CamlPlotStyle style;
  CamlPlotRect area;
  Legend legend;

  caml_plot_style_init (&style, width, height);
  caml_plot_layout (cr, &style, width, height, plot->title, plot->x_label, plot->y_label,
                    &plot->y, 0.0, &area);
  /* the title stays where the layout put it when a legend strip moves the area */
  double title_y = area.y - style.title_size * 0.75;
  gboolean show_legend = plot->opts.legend && legend_place (cr, plot, &style, &area, &legend);
  if (frame != NULL)
    *frame = area;

  cairo_save (cr);
  if (plot->opts.grid)
    caml_plot_draw_grid (cr, &style, &area, &plot->x, &plot->y);
  draw_series (cr, plot, &style, &area);
  draw_events (cr, plot, &style, &area,
               show_legend && !legend.strip
               ? &(CamlPlotRect) { legend.x, legend.y, legend.w, legend.h } : NULL);
  caml_plot_draw_note (cr, &style, &area, plot->note);
  caml_plot_draw_axes (cr, &style, width, &area, &plot->x, &plot->y,
                       plot->categories != NULL ? plot->tick_labels : NULL, NULL, plot->x_label, plot->y_label);
  cairo_set_source_rgb (cr, 0.0, 0.0, 0.0);
  caml_plot_draw_title (cr, style.title_size, width, area.x + 0.5 * area.width, title_y,
                        plot->title);
  if (show_legend)
    draw_legend (cr, plot, &style, &area, &legend);
  cairo_restore (cr);
}

void
caml_plot_line_event_rects (const CamlPlotLine *plot, cairo_t *cr, double width, double height,
                            CamlPlotRect *legend_box, CamlPlotRect *labels)
{
  CamlPlotStyle style;
  CamlPlotRect area;
  Legend legend;

  caml_plot_style_init (&style, width, height);
  caml_plot_layout (cr, &style, width, height, plot->title, plot->x_label, plot->y_label,
                    &plot->y, 0.0, &area);
  gboolean box = plot->opts.legend && legend_place (cr, plot, &style, &area, &legend)
                 && !legend.strip;
  CamlPlotRect avoid = box ? (CamlPlotRect) { legend.x, legend.y, legend.w, legend.h }
                           : (CamlPlotRect) { 0 };
  if (legend_box != NULL)
    *legend_box = avoid;
  place_event_labels (cr, plot, &style, &area, box ? &avoid : NULL, labels);
}

void
caml_plot_line_draw_cb (cairo_t *cr, double width, double height, gpointer user_data)
{
  caml_plot_line_draw (user_data, cr, width, height, NULL);
}
