/* caml-plot-line.c — line plots (loss curves): several series, optional
 * log y, EMA smoothing, legend, grid and vertical event markers. */
#include "caml-plot-private.h"

#include <math.h>
#include <string.h>

typedef struct {
  double *x;      /* (n) */
  double *raw;    /* (n) y as given */
  double *y;      /* (n) smoothed y, or a copy of raw */
  size_t n;
  char *label;
  int color;
  gboolean dashed;
} LineSeries;

struct _CamlPlotLine {
  CamlPlotLineOptions opts;   /* string fields point at the copies below */
  char *title;
  char *x_label;
  char *y_label;
  LineSeries *series;         /* (n_series) */
  size_t n_series;
  CamlPlotEvent *events;      /* (n_events), text owned */
  size_t n_events;
  CamlPlotAxis x;
  CamlPlotAxis y;
};

static gboolean
smoothed (const CamlPlotLine *plot)
{
  return plot->opts.smoothing > 0.0;
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
          if (pass == 1 && !(smoothed (plot) && plot->opts.show_raw))
            continue;
          if (caml_plot_finite_range (v, ls->n, log_y, &lo, &hi))
            {
              ylo = have_y ? MIN (ylo, lo) : lo;
              yhi = have_y ? MAX (yhi, hi) : hi;
              have_y = TRUE;
            }
        }
    }

  caml_plot_axis_linear (&plot->x, xlo, xhi, 8);
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
      double pad = 0.04 * (yhi - ylo);
      caml_plot_axis_linear (&plot->y, ylo - pad, yhi + pad, 8);
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
  plot->opts.title = plot->title;
  plot->opts.x_label = plot->x_label;
  plot->opts.y_label = plot->y_label;

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
      if (smoothed (plot))
        caml_plot_ema (ls->y, ls->raw, n, plot->opts.smoothing);
      else
        memcpy (ls->y, ls->raw, n * sizeof (double));
      ls->label = g_strdup (in->label);
      ls->color = in->color;
      ls->dashed = in->dashed;
    }

  plot->events = g_new0 (CamlPlotEvent, MAX (n_events, 1));
  plot->n_events = n_events;
  for (size_t e = 0; e < n_events; e++)
    {
      plot->events[e].x = events[e].x;
      plot->events[e].text = g_strdup (events[e].text);
    }

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
  g_free (plot);
}

const CamlPlotAxis *
caml_plot_line_get_x_axis (const CamlPlotLine *plot)
{
  return &plot->x;
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

static void
draw_series (cairo_t *cr, const CamlPlotLine *plot, const CamlPlotStyle *style,
             const CamlPlotRect *area)
{
  double s = style->scale;

  cairo_save (cr);
  cairo_rectangle (cr, area->x, area->y, area->width, area->height);
  cairo_clip (cr);
  cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_ROUND);
  for (size_t i = 0; i < plot->n_series; i++)
    {
      const LineSeries *ls = &plot->series[i];
      double rgb[3], dash[2] = { 6.0 * s, 4.0 * s };

      caml_plot_palette_rgb (ls->color, rgb);
      cairo_set_dash (cr, dash, ls->dashed ? 2 : 0, 0.0);
      if (smoothed (plot) && plot->opts.show_raw)
        {
          cairo_set_source_rgba (cr, rgb[0], rgb[1], rgb[2], 0.25);
          cairo_set_line_width (cr, 1.0 * s);
          stroke_series (cr, plot, area, ls->x, ls->raw, ls->n);
        }
      cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
      cairo_set_line_width (cr, 1.8 * s);
      stroke_series (cr, plot, area, ls->x, ls->y, ls->n);
    }
  cairo_restore (cr);
}

static void
draw_events (cairo_t *cr, const CamlPlotLine *plot, const CamlPlotStyle *style,
             const CamlPlotRect *area)
{
  enum { ROWS = 3 };
  double s = style->scale;
  double dash[2] = { 3.0 * s, 3.0 * s };
  double row_end[ROWS];
  double size = style->tick_size * 0.95;

  for (int r = 0; r < ROWS; r++)
    row_end[r] = -G_MAXDOUBLE;

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

      const char *text = plot->events[e].text;
      if (text == NULL || *text == '\0')
        continue;
      double tw = caml_plot_text_width (cr, size, text);
      double tx = px + 3.0 * s;
      if (tx + tw > area->x + area->width - 2.0 * s)
        tx = px - 3.0 * s - tw;
      int row = 0;
      while (row < ROWS - 1 && tx < row_end[row] + 4.0 * s)
        row++;
      row_end[row] = tx + tw;

      double ty = area->y + 4.0 * s + row * size * 1.4;
      cairo_set_source_rgba (cr, 1.0, 1.0, 1.0, 0.85);
      cairo_rectangle (cr, tx - 1.5 * s, ty - 1.5 * s, tw + 3.0 * s, size * 0.72 + 3.0 * s);
      cairo_fill (cr);
      cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
      caml_plot_text (cr, size, FALSE, tx, ty, 0.0, 0.0, text);
    }
  cairo_restore (cr);
}

static void
draw_legend (cairo_t *cr, const CamlPlotLine *plot, const CamlPlotStyle *style,
             const CamlPlotRect *area)
{
  double s = style->scale;
  double size = style->tick_size;
  double sample = 22.0 * s, pad = 7.0 * s, row_h = size * 1.45;
  double widest = 0.0;
  int rows = 0;

  for (size_t i = 0; i < plot->n_series; i++)
    if (plot->series[i].label != NULL && *plot->series[i].label)
      {
        widest = MAX (widest, caml_plot_text_width (cr, size, plot->series[i].label));
        rows++;
      }
  if (rows == 0)
    return;

  double bw = pad + sample + 6.0 * s + widest + pad;
  double bh = pad * 2.0 + rows * row_h - (row_h - size * 0.72);
  double bx = area->x + area->width - bw - 8.0 * s;
  double by = area->y + 8.0 * s;

  cairo_save (cr);
  cairo_rectangle (cr, bx, by, bw, bh);
  cairo_set_source_rgba (cr, 1.0, 1.0, 1.0, 0.88);
  cairo_fill_preserve (cr);
  cairo_set_source_rgb (cr, 0.8, 0.8, 0.8);
  cairo_set_line_width (cr, 0.8 * s);
  cairo_stroke (cr);

  int row = 0;
  for (size_t i = 0; i < plot->n_series; i++)
    {
      const LineSeries *ls = &plot->series[i];
      double rgb[3], dash[2] = { 6.0 * s, 4.0 * s };
      if (ls->label == NULL || *ls->label == '\0')
        continue;
      double ty = by + pad + row * row_h;
      double cy = ty + size * 0.36;

      caml_plot_palette_rgb (ls->color, rgb);
      cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
      cairo_set_line_width (cr, 1.8 * s);
      cairo_set_dash (cr, dash, ls->dashed ? 2 : 0, 0.0);
      cairo_move_to (cr, bx + pad, cy);
      cairo_line_to (cr, bx + pad + sample, cy);
      cairo_stroke (cr);
      cairo_set_dash (cr, NULL, 0, 0.0);
      cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
      caml_plot_text (cr, size, FALSE, bx + pad + sample + 6.0 * s, ty, 0.0, 0.0, ls->label);
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

  caml_plot_style_init (&style, width, height);
  caml_plot_layout (cr, &style, width, height, plot->title, plot->x_label, plot->y_label,
                    &plot->y, 0.0, &area);
  if (frame != NULL)
    *frame = area;

  cairo_save (cr);
  if (plot->opts.grid)
    caml_plot_draw_grid (cr, &style, &area, &plot->x, &plot->y);
  draw_series (cr, plot, &style, &area);
  draw_events (cr, plot, &style, &area);
  caml_plot_draw_axes (cr, &style, width, &area, &plot->x, &plot->y,
                       plot->title, plot->x_label, plot->y_label);
  if (plot->opts.legend)
    draw_legend (cr, plot, &style, &area);
  cairo_restore (cr);
}

void
caml_plot_line_draw_cb (cairo_t *cr, double width, double height, gpointer user_data)
{
  caml_plot_line_draw (user_data, cr, width, height, NULL);
}
