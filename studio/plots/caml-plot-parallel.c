/* caml-plot-parallel.c — parallel coordinates: one vertical axis per
 * setting and result of a sweep, each run a line across them; brushes on
 * axes, a highlighted run, and the hit tests a window needs.
 *
 * caml_plot_parallel_new does the arithmetic (each axis' scale, ticks and
 * labels, the rows' colours); the layout below depends only on the size
 * and the text's extents, so the hit tests and draw agree on it. */
#include "caml-plot-private.h"

#include <math.h>
#include <string.h>

#define AXIS_MAX_TICKS 6        /* nice ticks of a numeric axis */
#define AXIS_HIT_PX    12.0     /* axis_at: how far from an axis a point still is on it */
#define BAND_SLACK_PX  6.0      /* … and beyond its ends */
#define ROW_HIT_PX     6.0      /* row_at: how far from a line */
#define COLOR_SPAN     0.88     /* viridis up to yellow-green: its yellow end is pale on white */

typedef struct {
  char       *name;
  double     *values;           /* (n_rows) */
  char      **categories;       /* (n_categories + 1) or NULL */
  int         n_categories;
  gboolean    log_scale;
  gboolean    integer;
  CamlPlotAxis axis;            /* value → place along the axis, and its ticks */
  char       *tick_text[CAML_PLOT_MAX_TICKS];   /* (axis.n_ticks) */
  gboolean    has_missing;
  gboolean    have_range;       /* some value is not missing */
  double      vmin, vmax;       /* of the values not missing */
  gboolean    brushed;
  double      lo, hi;           /* the brush, lo <= hi */
} ParallelAxis;

struct _CamlPlotParallel {
  char         *title;
  char         *note;
  int           color_axis;     /* -1: palette by row */
  gboolean     *dashed;         /* (n_rows) */
  char        **row_names;      /* (n_rows + 1) or NULL */
  ParallelAxis *axes;           /* (n_axes) */
  int           n_axes, n_rows;
  double       *color_t;        /* (n_rows) place on the colour scale in [0, 1], NaN: none */
  char         *legend_lo, *legend_hi;   /* the colour legend's ends, or NULL: no legend */
  gboolean      any_missing;
  int           highlight;
};

/* ------------------------------------------------------------ prepare --- */

static gboolean
is_missing (const ParallelAxis *ax, double v)
{
  return !isfinite (v) || (ax->log_scale && v <= 0.0);
}

/* Ticks at the values themselves when they are few whole numbers (a
 * sweep's kernels 3, 5, 8 rather than 3, 4, 5, 6, 7, 8). */
static gboolean
ticks_at_values (ParallelAxis *ax, int n_rows)
{
  double distinct[AXIS_MAX_TICKS + 2];
  int n = 0;

  for (int r = 0; r < n_rows; r++)
    {
      double v = ax->values[r];
      if (is_missing (ax, v))
        continue;
      if (v != floor (v) || fabs (v) > 1e15)
        return FALSE;
      gboolean seen = FALSE;
      for (int i = 0; i < n && !seen; i++)
        seen = distinct[i] == v;
      if (seen)
        continue;
      if (n == (int) G_N_ELEMENTS (distinct))
        return FALSE;
      distinct[n++] = v;
    }
  /* ascending */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && distinct[j - 1] > distinct[j]; j--)
      {
        double t = distinct[j];
        distinct[j] = distinct[j - 1];
        distinct[j - 1] = t;
      }
  ax->axis.n_ticks = n;
  memcpy (ax->axis.ticks, distinct, n * sizeof (double));
  return n > 0;
}

static void
prepare_axis (ParallelAxis *ax, int n_rows)
{
  double lo = 0.0, hi = 1.0;

  ax->have_range = FALSE;
  for (int r = 0; r < n_rows; r++)
    {
      double v = ax->values[r];
      if (is_missing (ax, v))
        {
          ax->has_missing = TRUE;
          continue;
        }
      lo = ax->have_range ? MIN (lo, v) : v;
      hi = ax->have_range ? MAX (hi, v) : v;
      ax->have_range = TRUE;
    }
  ax->vmin = lo;
  ax->vmax = hi;

  if (ax->categories != NULL)
    {
      /* one tick per category (labels that would collide are skipped when
       * drawn), half a step of room at either end */
      caml_plot_axis_linear (&ax->axis, -0.5, ax->n_categories - 0.5, 2);
      ax->axis.n_ticks = MIN (ax->n_categories, CAML_PLOT_MAX_TICKS);
      ax->axis.n_minor = 0;
      ax->axis.step = 1.0;
      for (int i = 0; i < ax->axis.n_ticks; i++)
        {
          ax->axis.ticks[i] = i;
          ax->tick_text[i] = g_strdup (ax->categories[i]);
        }
      return;
    }
  if (!ax->have_range)
    {
      /* nothing to place: an axis without ticks */
      caml_plot_axis_linear (&ax->axis, 0.0, 1.0, 2);
      ax->axis.n_ticks = 0;
      return;
    }

  gboolean constant = ax->log_scale ? hi / lo < 1.0 + 1e-9 : hi - lo <= fabs (hi) * 1e-12;
  if (constant)
    {
      /* the range widens evenly around the one value: a centred tick */
      if (ax->log_scale)
        caml_plot_axis_log (&ax->axis, lo, hi, AXIS_MAX_TICKS);
      else
        caml_plot_axis_linear (&ax->axis, lo, hi, AXIS_MAX_TICKS);
      ax->axis.n_ticks = 1;
      ax->axis.n_minor = 0;
      ax->axis.ticks[0] = lo;
      ax->tick_text[0] = g_strdup_printf ("%.4g", lo);
      return;
    }
  if (ax->log_scale)
    {
      double pad = pow (hi / lo, 0.04);
      caml_plot_axis_log (&ax->axis, lo / pad, hi * pad, AXIS_MAX_TICKS);
    }
  else
    {
      double a, b;
      caml_plot_padded_range (lo, hi, &a, &b);
      caml_plot_axis_linear (&ax->axis, a, b, AXIS_MAX_TICKS);
      if (ax->integer)
        {
          caml_plot_axis_integer_ticks (&ax->axis, AXIS_MAX_TICKS);
          ticks_at_values (ax, n_rows);
        }
    }
  for (int i = 0; i < ax->axis.n_ticks; i++)
    {
      char buf[64];
      caml_plot_axis_tick_label (&ax->axis, i, buf, sizeof buf);
      ax->tick_text[i] = g_strdup (buf);
    }
}

/* Where a value lies on the colour axis, in [0, 1]; NaN when missing. */
static double
color_place (const ParallelAxis *ax, double v)
{
  if (is_missing (ax, v) || !ax->have_range)
    return NAN;
  if (ax->categories != NULL)
    return ax->n_categories > 1 ? CLAMP (v / (ax->n_categories - 1), 0.0, 1.0) : 0.5;
  double a = ax->vmin, b = ax->vmax;
  if (ax->log_scale)
    {
      v = log10 (v);
      a = log10 (a);
      b = log10 (b);
    }
  return b > a ? CLAMP ((v - a) / (b - a), 0.0, 1.0) : 0.5;
}

static void
prepare_colors (CamlPlotParallel *p)
{
  p->color_t = g_new (double, MAX (p->n_rows, 1));
  if (p->color_axis < 0)
    {
      for (int r = 0; r < p->n_rows; r++)
        p->color_t[r] = NAN;
      return;
    }
  const ParallelAxis *ax = &p->axes[p->color_axis];
  for (int r = 0; r < p->n_rows; r++)
    p->color_t[r] = color_place (ax, ax->values[r]);
  if (ax->categories != NULL && ax->n_categories > 0)
    {
      p->legend_lo = g_strdup (ax->categories[0]);
      p->legend_hi = g_strdup (ax->categories[ax->n_categories - 1]);
    }
  else if (ax->have_range)
    {
      p->legend_lo = g_strdup_printf ("%.4g", ax->vmin);
      p->legend_hi = g_strdup_printf ("%.4g", ax->vmax);
    }
}

CamlPlotParallel *
caml_plot_parallel_new (const CamlPlotParallelOptions *opts, const CamlPlotParallelAxis *axes,
                        int n_axes, int n_rows)
{
  static const CamlPlotParallelOptions defaults = { .color_axis = -1 };
  CamlPlotParallel *p = g_new0 (CamlPlotParallel, 1);

  if (opts == NULL)
    opts = &defaults;
  p->n_axes = MAX (n_axes, 0);
  p->n_rows = MAX (n_rows, 0);
  p->title = g_strdup (opts->title);
  p->note = g_strdup (opts->note);
  p->color_axis = opts->color_axis >= 0 && opts->color_axis < p->n_axes ? opts->color_axis : -1;
  p->highlight = -1;
  p->dashed = g_new0 (gboolean, MAX (p->n_rows, 1));
  for (int r = 0; opts->dashed != NULL && r < p->n_rows; r++)
    p->dashed[r] = opts->dashed[r];
  if (opts->row_names != NULL)
    {
      p->row_names = g_new0 (char *, p->n_rows + 1);
      for (int r = 0; r < p->n_rows; r++)
        p->row_names[r] = g_strdup (opts->row_names[r]);
    }

  p->axes = g_new0 (ParallelAxis, MAX (p->n_axes, 1));
  for (int a = 0; a < p->n_axes; a++)
    {
      const CamlPlotParallelAxis *in = &axes[a];
      ParallelAxis *ax = &p->axes[a];
      ax->name = g_strdup (in->name != NULL ? in->name : "");
      ax->values = g_new (double, MAX (p->n_rows, 1));
      for (int r = 0; r < p->n_rows; r++)
        ax->values[r] = in->values != NULL ? in->values[r] : NAN;
      if (in->categories != NULL && in->n_categories > 0)
        {
          ax->n_categories = in->n_categories;
          ax->categories = g_new0 (char *, in->n_categories + 1);
          for (int i = 0; i < in->n_categories; i++)
            ax->categories[i] = g_strdup (in->categories[i] != NULL ? in->categories[i] : "");
        }
      ax->log_scale = in->log_scale && ax->categories == NULL;
      ax->integer = in->integer;
      prepare_axis (ax, p->n_rows);
      p->any_missing |= ax->has_missing;
    }
  prepare_colors (p);
  return p;
}

void
caml_plot_parallel_free (CamlPlotParallel *p)
{
  if (p == NULL)
    return;
  for (int a = 0; a < p->n_axes; a++)
    {
      ParallelAxis *ax = &p->axes[a];
      g_free (ax->name);
      g_free (ax->values);
      g_strfreev (ax->categories);
      for (int i = 0; i < ax->axis.n_ticks; i++)
        g_free (ax->tick_text[i]);
    }
  g_free (p->axes);
  g_free (p->title);
  g_free (p->note);
  g_free (p->dashed);
  g_strfreev (p->row_names);
  g_free (p->color_t);
  g_free (p->legend_lo);
  g_free (p->legend_hi);
  g_free (p);
}

int
caml_plot_parallel_get_n_axes (const CamlPlotParallel *p)
{
  return p->n_axes;
}

int
caml_plot_parallel_get_n_rows (const CamlPlotParallel *p)
{
  return p->n_rows;
}

const char *
caml_plot_parallel_get_axis_name (const CamlPlotParallel *p, int axis)
{
  g_return_val_if_fail (axis >= 0 && axis < p->n_axes, NULL);
  return p->axes[axis].name;
}

const CamlPlotAxis *
caml_plot_parallel_get_axis (const CamlPlotParallel *p, int axis)
{
  g_return_val_if_fail (axis >= 0 && axis < p->n_axes, NULL);
  return &p->axes[axis].axis;
}

const char *
caml_plot_parallel_get_tick_label (const CamlPlotParallel *p, int axis, int i)
{
  g_return_val_if_fail (axis >= 0 && axis < p->n_axes, NULL);
  g_return_val_if_fail (i >= 0 && i < p->axes[axis].axis.n_ticks, NULL);
  return p->axes[axis].tick_text[i];
}

/* ----------------------------------------------------------- brushing --- */

void
caml_plot_parallel_set_brush (CamlPlotParallel *p, int axis, double lo, double hi)
{
  g_return_if_fail (axis >= 0 && axis < p->n_axes);
  g_return_if_fail (!isnan (lo) && !isnan (hi));
  ParallelAxis *ax = &p->axes[axis];
  ax->brushed = TRUE;
  ax->lo = MIN (lo, hi);
  ax->hi = MAX (lo, hi);
}

void
caml_plot_parallel_clear_brush (CamlPlotParallel *p, int axis)
{
  g_return_if_fail (axis >= -1 && axis < p->n_axes);
  for (int a = 0; a < p->n_axes; a++)
    if (axis == -1 || a == axis)
      p->axes[a].brushed = FALSE;
}

gboolean
caml_plot_parallel_get_brush (const CamlPlotParallel *p, int axis, double *lo, double *hi)
{
  g_return_val_if_fail (axis >= 0 && axis < p->n_axes, FALSE);
  const ParallelAxis *ax = &p->axes[axis];
  if (ax->brushed && lo != NULL)
    *lo = ax->lo;
  if (ax->brushed && hi != NULL)
    *hi = ax->hi;
  return ax->brushed;
}

static gboolean
any_brush (const CamlPlotParallel *p)
{
  for (int a = 0; a < p->n_axes; a++)
    if (p->axes[a].brushed)
      return TRUE;
  return FALSE;
}

gboolean
caml_plot_parallel_row_passes (const CamlPlotParallel *p, int row)
{
  g_return_val_if_fail (row >= 0 && row < p->n_rows, FALSE);
  for (int a = 0; a < p->n_axes; a++)
    {
      const ParallelAxis *ax = &p->axes[a];
      double v = ax->values[row];
      if (ax->brushed && (is_missing (ax, v) || v < ax->lo || v > ax->hi))
        return FALSE;
    }
  return TRUE;
}

int
caml_plot_parallel_count_passing (const CamlPlotParallel *p)
{
  int n = 0;
  for (int r = 0; r < p->n_rows; r++)
    n += caml_plot_parallel_row_passes (p, r);
  return n;
}

void
caml_plot_parallel_set_highlight (CamlPlotParallel *p, int row)
{
  p->highlight = row >= 0 && row < p->n_rows ? row : -1;
}

int
caml_plot_parallel_get_highlight (const CamlPlotParallel *p)
{
  return p->highlight;
}

/* ------------------------------------------------------------- layout --- */

typedef struct {
  CamlPlotStyle style;
  double x0, step;              /* axis k at x0 + k·step */
  double y_top, y_bottom;       /* the axes' ends */
  double y_missing;             /* the slot of missing values, NaN: none */
  double title_y;               /* the title's baseline */
  double names_y;               /* the top of the axis names' first line */
  double name_size, name_row;   /* their size and line spacing */
  double footer_y;              /* the middle of the row of counts and legend */
  double first_room;            /* the widest tick label of the first axis (the others':
                                 * the spacing of the axes) */
  char **names;                 /* (2 · n_axes): each name's first and second line (or NULL) */
} Layout;

static double
axis_px (const Layout *l, int axis)
{
  return l->x0 + axis * l->step;
}

static void
layout_clear (Layout *l, int n_axes)
{
  for (int i = 0; i < 2 * n_axes; i++)
    g_free (l->names[i]);
  g_free (l->names);
}

/* Splits name after a space, '_', '-', '.' or '/' (a space is dropped)
 * where both lines fit avail, the split nearest the middle; FALSE when
 * there is none. */
static gboolean
wrap_name (cairo_t *cr, double size, const char *name, double avail, char **lines)
{
  size_t len = strlen (name);
  long best = -1;
  double best_off = G_MAXDOUBLE;

  for (size_t i = 1; i + 1 < len; i++)
    {
      if (strchr (" _-./", name[i]) == NULL)
        continue;
      g_autofree char *first = g_strndup (name, name[i] == ' ' ? i : i + 1);
      const char *second = name + i + 1;
      if (caml_plot_text_width (cr, size, first) > avail
          || caml_plot_text_width (cr, size, second) > avail)
        continue;
      double off = fabs ((double) i - 0.5 * len);
      if (off < best_off)
        {
          best_off = off;
          best = (long) i;
        }
    }
  if (best < 0)
    return FALSE;
  lines[0] = g_strndup (name, name[best] == ' ' ? (size_t) best : (size_t) best + 1);
  lines[1] = g_strdup (name + best + 1);
  return TRUE;
}

/* Each axis name on one line when it fits avail, else on two, else
 * shortened with "…"; returns the widest line. */
static double
fit_names (const CamlPlotParallel *p, cairo_t *cr, Layout *l, double avail)
{
  double widest = 0.0;
  for (int a = 0; a < p->n_axes; a++)
    {
      char **lines = &l->names[2 * a];
      g_clear_pointer (&lines[0], g_free);
      g_clear_pointer (&lines[1], g_free);
      const char *name = p->axes[a].name;
      gboolean fits = caml_plot_text_width (cr, l->name_size, name) <= avail;
      if (fits || !wrap_name (cr, l->name_size, name, avail, lines))
        lines[0] = caml_plot_shorten_text (cr, l->name_size, FALSE, name, avail);
      for (int k = 0; k < 2; k++)
        if (lines[k] != NULL)
          widest = MAX (widest, caml_plot_text_width (cr, l->name_size, lines[k]));
    }
  return widest;
}

static double
name_width (cairo_t *cr, const Layout *l, int axis)
{
  double w = 0.0;
  for (int k = 0; k < 2; k++)
    if (l->names[2 * axis + k] != NULL)
      w = MAX (w, caml_plot_text_width (cr, l->name_size, l->names[2 * axis + k]));
  return w;
}

static double
widest_tick_label (const ParallelAxis *ax, cairo_t *cr, double size)
{
  double w = ax->has_missing ? caml_plot_text_width (cr, size, "–") : 0.0;
  for (int i = 0; i < ax->axis.n_ticks; i++)
    w = MAX (w, caml_plot_text_width (cr, size, ax->tick_text[i]));
  return w;
}

/* How wide an axis' tick labels may be: longer ones are shortened. */
static double
label_room (const Layout *l, int axis)
{
  return axis == 0 ? l->first_room : MAX (l->step - 12.0 * l->style.scale, 10.0);
}

/* Axes spread across the width: tick labels left of each axis (the first
 * axis' set the left margin), names centred above them within the gap
 * between two axes; under the axes the missing slot, then a row for the
 * count of runs and the colour legend. */
static void
layout_compute (const CamlPlotParallel *p, cairo_t *cr, double width, double height, Layout *l)
{
  CamlPlotStyle *st = &l->style;
  caml_plot_style_init (st, width, height);
  double s = st->scale, pad = 8.0 * s, tick = st->tick_size;

  l->names = g_new0 (char *, 2 * MAX (p->n_axes, 1));
  l->name_size = st->label_size * 0.95;
  l->name_row = l->name_size * 1.25;

  /* horizontally: margins from the first axis' labels and the end names */
  int n = p->n_axes;
  l->first_room = n > 0 ? MIN (widest_tick_label (&p->axes[0], cr, tick), 0.2 * width) : 0.0;
  double left = pad + 4.0 * s + 4.0 * s + l->first_room;
  double right = 2.0 * pad;
  /* names narrow as the margins they need widen: twice, then the names
   * refitted to the final spacing stay within the margins */
  for (int pass = 0; pass < 3; pass++)
    {
      l->step = n > 1 ? MAX ((width - left - right) / (n - 1), 1.0) : 0.0;
      l->x0 = n > 1 ? left : 0.5 * width;
      fit_names (p, cr, l, n > 1 ? MAX (l->step - 10.0 * s, 10.0) : width - 2.0 * pad);
      if (n > 1 && pass < 2)
        {
          left = MAX (left, 0.5 * name_width (cr, l, 0) + pad);
          right = MAX (right, 0.5 * name_width (cr, l, n - 1) + pad);
        }
    }

  /* vertically */
  int lines = 1;
  for (int a = 0; a < n; a++)
    if (l->names[2 * a + 1] != NULL)
      lines = 2;
  l->title_y = st->title_size * 1.45;
  l->names_y = p->title != NULL && *p->title ? st->title_size * 2.1 : pad;
  l->y_top = l->names_y + (lines - 1) * l->name_row + l->name_size * 0.72
             + 0.5 * tick + 8.0 * s;
  double footer = p->n_rows > 0 ? tick * 2.4 : 0.0;
  double missing = p->any_missing ? tick * 1.9 : 0.0;
  l->footer_y = height - pad - 0.5 * footer;
  l->y_bottom = MAX (height - pad - footer - missing - 0.6 * tick, l->y_top + 10.0);
  l->y_missing = p->any_missing ? l->y_bottom + tick * 1.6 : NAN;
}

/* Where a row's line crosses an axis. */
static double
row_y (const CamlPlotParallel *p, const Layout *l, int row, int axis)
{
  const ParallelAxis *ax = &p->axes[axis];
  double v = ax->values[row];
  if (is_missing (ax, v))
    return l->y_missing;
  double y = caml_plot_axis_map (&ax->axis, v, l->y_bottom, l->y_top);
  return CLAMP (y, l->y_top, l->y_bottom);
}

/* An axis' value at y, taken within the axis. */
static double
axis_value (const ParallelAxis *ax, const Layout *l, double y)
{
  y = CLAMP (y, l->y_top, l->y_bottom);
  return caml_plot_axis_unmap (&ax->axis, y, l->y_bottom, l->y_top);
}

int
caml_plot_parallel_axis_at (const CamlPlotParallel *p, cairo_t *cr, double width,
                            double height, double x, double y, double *value)
{
  Layout l;
  int found = -1;
  double best = AXIS_HIT_PX;

  layout_compute (p, cr, width, height, &l);
  double bottom = isfinite (l.y_missing) ? l.y_missing : l.y_bottom;
  if (y >= l.y_top - BAND_SLACK_PX && y <= bottom + BAND_SLACK_PX)
    for (int a = 0; a < p->n_axes; a++)
      {
        double d = fabs (x - axis_px (&l, a));
        if (d <= best)
          {
            best = d;
            found = a;
          }
      }
  if (found >= 0 && value != NULL)
    *value = axis_value (&p->axes[found], &l, y);
  layout_clear (&l, p->n_axes);
  return found;
}

void
caml_plot_parallel_axis_x (const CamlPlotParallel *p, cairo_t *cr, double width,
                           double height, int axis, double *x, double *y_top, double *y_bottom)
{
  g_return_if_fail (axis >= 0 && axis < p->n_axes);
  Layout l;
  layout_compute (p, cr, width, height, &l);
  if (x != NULL)
    *x = axis_px (&l, axis);
  if (y_top != NULL)
    *y_top = l.y_top;
  if (y_bottom != NULL)
    *y_bottom = l.y_bottom;
  layout_clear (&l, p->n_axes);
}

void
caml_plot_parallel_row_point (const CamlPlotParallel *p, cairo_t *cr, double width,
                              double height, int row, int axis, double *x, double *y)
{
  g_return_if_fail (axis >= 0 && axis < p->n_axes && row >= 0 && row < p->n_rows);
  Layout l;
  layout_compute (p, cr, width, height, &l);
  if (x != NULL)
    *x = axis_px (&l, axis);
  if (y != NULL)
    *y = row_y (p, &l, row, axis);
  layout_clear (&l, p->n_axes);
}

/* Distance from (x, y) to the segment (ax, ay)–(bx, by). */
static double
segment_distance (double x, double y, double ax, double ay, double bx, double by)
{
  double dx = bx - ax, dy = by - ay;
  double len2 = dx * dx + dy * dy;
  double t = len2 > 0.0 ? CLAMP (((x - ax) * dx + (y - ay) * dy) / len2, 0.0, 1.0) : 0.0;
  return hypot (x - (ax + t * dx), y - (ay + t * dy));
}

int
caml_plot_parallel_row_at (const CamlPlotParallel *p, cairo_t *cr, double width,
                           double height, double x, double y)
{
  Layout l;
  int found = -1;
  double best = ROW_HIT_PX;

  if (p->n_axes == 0)
    return -1;
  layout_compute (p, cr, width, height, &l);
  for (int r = 0; r < p->n_rows; r++)
    {
      if (!caml_plot_parallel_row_passes (p, r))
        continue;
      for (int a = 0; a < MAX (p->n_axes - 1, 1); a++)
        {
          int b = MIN (a + 1, p->n_axes - 1);
          double d = segment_distance (x, y, axis_px (&l, a), row_y (p, &l, r, a),
                                       axis_px (&l, b), row_y (p, &l, r, b));
          if (d <= best)
            {
              best = d;
              found = r;
            }
        }
    }
  layout_clear (&l, p->n_axes);
  return found;
}

/* ---------------------------------------------------------- describe --- */

static void
append_value (GString *out, const ParallelAxis *ax, double v)
{
  int i = (int) v;
  if (is_missing (ax, v))
    g_string_append (out, "–");
  else if (ax->categories != NULL && v == i && i >= 0 && i < ax->n_categories)
    g_string_append (out, ax->categories[i]);
  else
    g_string_append_printf (out, "%.4g", v);
}

char *
caml_plot_parallel_describe_row (const CamlPlotParallel *p, int row)
{
  g_return_val_if_fail (row >= 0 && row < p->n_rows, NULL);
  GString *out = g_string_new (NULL);

  if (p->row_names != NULL && p->row_names[row] != NULL)
    g_string_append (out, p->row_names[row]);
  else
    g_string_append_printf (out, "run %d", row + 1);
  g_string_append (out, ":");
  for (int a = 0; a < p->n_axes; a++)
    {
      g_string_append_printf (out, "%s%s ", a > 0 ? " · " : " ", p->axes[a].name);
      append_value (out, &p->axes[a], p->axes[a].values[row]);
    }
  return g_string_free (out, FALSE);
}

/* ----------------------------------------------------------- drawing --- */

static void
row_rgb (const CamlPlotParallel *p, int row, double rgb[3])
{
  if (p->color_axis < 0)
    caml_plot_palette_rgb (row, rgb);
  else if (isnan (p->color_t[row]))
    rgb[0] = rgb[1] = rgb[2] = 0.55;
  else
    caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_VIRIDIS, COLOR_SPAN * p->color_t[row], rgb);
}

static void
trace_row (cairo_t *cr, const CamlPlotParallel *p, const Layout *l, int row)
{
  cairo_move_to (cr, axis_px (l, 0), row_y (p, l, row, 0));
  for (int a = 1; a < p->n_axes; a++)
    cairo_line_to (cr, axis_px (l, a), row_y (p, l, row, a));
  if (p->n_axes == 1)   /* a dot */
    cairo_line_to (cr, axis_px (l, 0) + 0.01, row_y (p, l, row, 0));
}

static void
draw_rows (cairo_t *cr, const CamlPlotParallel *p, const Layout *l)
{
  double s = l->style.scale;
  double dash[2] = { 6.0 * s, 4.0 * s };
  double rgb[3];

  cairo_save (cr);
  cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_ROUND);
  /* the rows that fail a brush, faint and under the others */
  cairo_set_line_width (cr, 1.0 * s);
  cairo_set_source_rgba (cr, 0.55, 0.55, 0.55, 0.28);
  for (int r = 0; r < p->n_rows; r++)
    if (!caml_plot_parallel_row_passes (p, r))
      {
        cairo_set_dash (cr, dash, p->dashed[r] ? 2 : 0, 0.0);
        trace_row (cr, p, l, r);
        cairo_stroke (cr);
      }
  cairo_set_line_width (cr, 1.7 * s);
  for (int r = 0; r < p->n_rows; r++)
    if (caml_plot_parallel_row_passes (p, r))
      {
        row_rgb (p, r, rgb);
        cairo_set_source_rgba (cr, rgb[0], rgb[1], rgb[2], 0.85);
        cairo_set_dash (cr, dash, p->dashed[r] ? 2 : 0, 0.0);
        trace_row (cr, p, l, r);
        cairo_stroke (cr);
      }
  if (p->highlight >= 0)
    {
      int r = p->highlight;
      cairo_set_dash (cr, NULL, 0, 0.0);
      cairo_set_source_rgba (cr, 1.0, 1.0, 1.0, 0.9);
      cairo_set_line_width (cr, 6.0 * s);
      trace_row (cr, p, l, r);
      cairo_stroke (cr);
      row_rgb (p, r, rgb);
      cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
      cairo_set_line_width (cr, 3.2 * s);
      cairo_set_dash (cr, dash, p->dashed[r] ? 2 : 0, 0.0);
      trace_row (cr, p, l, r);
      cairo_stroke (cr);
    }
  cairo_restore (cr);
}

static void
draw_brushes (cairo_t *cr, const CamlPlotParallel *p, const Layout *l)
{
  double s = l->style.scale, half = 7.0 * s;

  cairo_save (cr);
  cairo_set_line_width (cr, 1.0 * s);
  for (int a = 0; a < p->n_axes; a++)
    {
      const ParallelAxis *ax = &p->axes[a];
      if (!ax->brushed)
        continue;
      double y0 = caml_plot_axis_map (&ax->axis, ax->lo, l->y_bottom, l->y_top);
      double y1 = caml_plot_axis_map (&ax->axis, ax->hi, l->y_bottom, l->y_top);
      /* a brush beyond the axis (or below 0 on a log axis) ends at its end */
      y0 = isfinite (y0) ? CLAMP (y0, l->y_top, l->y_bottom) : l->y_bottom;
      y1 = isfinite (y1) ? CLAMP (y1, l->y_top, l->y_bottom) : l->y_bottom;
      double top = MIN (y0, y1), h = MAX (fabs (y1 - y0), 2.0 * s);
      cairo_rectangle (cr, axis_px (l, a) - half, top, 2.0 * half, h);
      cairo_set_source_rgba (cr, 0.15, 0.35, 0.75, 0.22);
      cairo_fill_preserve (cr);
      cairo_set_source_rgba (cr, 0.15, 0.35, 0.75, 0.85);
      cairo_stroke (cr);
    }
  cairo_restore (cr);
}

/* A tick label right-aligned left of an axis, on a light backdrop so that
 * it reads over the lines. */
static void
backed_label (cairo_t *cr, const Layout *l, double x, double y, const char *text)
{
  double s = l->style.scale, size = l->style.tick_size;
  double w = caml_plot_text_width (cr, size, text);
  cairo_set_source_rgba (cr, 1.0, 1.0, 1.0, 0.8);
  cairo_rectangle (cr, x - w - 2.0 * s, y - 0.36 * size - 2.0 * s, w + 4.0 * s,
                   0.72 * size + 0.25 * size + 4.0 * s);
  cairo_fill (cr);
  cairo_set_source_rgb (cr, 0.15, 0.15, 0.15);
  caml_plot_text (cr, size, FALSE, x, y, 1.0, 0.5, text);
}

static void
draw_axis_line (cairo_t *cr, const CamlPlotParallel *p, const Layout *l, int a)
{
  double s = l->style.scale, x = axis_px (l, a);

  cairo_save (cr);
  cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
  cairo_set_line_width (cr, 1.2 * s);
  cairo_move_to (cr, x, l->y_top);
  cairo_line_to (cr, x, l->y_bottom);
  if (p->axes[a].has_missing)
    {
      cairo_move_to (cr, x - 4.0 * s, l->y_missing);
      cairo_line_to (cr, x + 4.0 * s, l->y_missing);
    }
  cairo_stroke (cr);
  if (p->axes[a].has_missing)
    {
      /* the missing slot, dotted on from the axis' end */
      double dots[2] = { 1.5 * s, 3.0 * s };
      cairo_set_dash (cr, dots, 2, 0.0);
      cairo_move_to (cr, x, l->y_bottom);
      cairo_line_to (cr, x, l->y_missing);
      cairo_stroke (cr);
    }
  cairo_restore (cr);
}

/* An axis' name above it and, with ticks, its tick marks and labels. */
static void
draw_axis_marks (cairo_t *cr, const CamlPlotParallel *p, const Layout *l, int a,
                 gboolean ticks)
{
  const ParallelAxis *ax = &p->axes[a];
  double s = l->style.scale, tick_len = 4.0 * s, size = l->style.tick_size;
  double x = axis_px (l, a);

  cairo_save (cr);
  if (ticks)
    {
      cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
      cairo_set_line_width (cr, 1.2 * s);
      for (int i = 0; i < ax->axis.n_ticks; i++)
        {
          double y = caml_plot_axis_map (&ax->axis, ax->axis.ticks[i], l->y_bottom, l->y_top);
          cairo_move_to (cr, x - tick_len, y);
          cairo_line_to (cr, x, y);
        }
      cairo_stroke (cr);
      /* from the bottom up, each label clear of the one below it */
      double last = G_MAXDOUBLE;
      for (int i = 0; i < ax->axis.n_ticks; i++)
        {
          double y = caml_plot_axis_map (&ax->axis, ax->axis.ticks[i], l->y_bottom, l->y_top);
          if (last - y < 1.15 * size)
            continue;
          g_autofree char *text = caml_plot_shorten_text (cr, size, FALSE, ax->tick_text[i],
                                                          label_room (l, a));
          backed_label (cr, l, x - tick_len - 2.0 * s, y, text);
          last = y;
        }
      if (ax->has_missing)
        backed_label (cr, l, x - tick_len - 2.0 * s, l->y_missing, "–");
    }
  cairo_set_source_rgb (cr, 0.05, 0.05, 0.05);
  for (int k = 0; k < 2; k++)
    caml_plot_text (cr, l->name_size, FALSE, x, l->names_y + k * l->name_row, 0.5, 0.0,
                    l->names[2 * a + k]);
  cairo_restore (cr);
}

/* Under the axes: how many runs pass the brushes (left), and what the
 * colours stand for (right). */
static void
draw_footer (cairo_t *cr, const CamlPlotParallel *p, const Layout *l, double width)
{
  double s = l->style.scale, size = l->style.tick_size, pad = 8.0 * s;
  int passing = caml_plot_parallel_count_passing (p);
  g_autofree char *count = any_brush (p)
    ? g_strdup_printf ("%d of %d %s", passing, p->n_rows, p->n_rows == 1 ? "run" : "runs")
    : g_strdup_printf ("%d %s", p->n_rows, p->n_rows == 1 ? "run" : "runs");
  double y = l->footer_y;

  cairo_save (cr);
  cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
  caml_plot_text (cr, size, FALSE, pad, y, 0.0, 0.5, count);
  if (p->legend_lo == NULL)
    {
      cairo_restore (cr);
      return;
    }
  double bar_w = MIN (140.0 * s, 0.22 * width), bar_h = 0.8 * size;
  g_autofree char *hi = caml_plot_shorten_text (cr, size, FALSE, p->legend_hi, 0.15 * width);
  g_autofree char *lo = caml_plot_shorten_text (cr, size, FALSE, p->legend_lo, 0.15 * width);
  double hi_w = caml_plot_text_width (cr, size, hi);
  double lo_w = caml_plot_text_width (cr, size, lo);
  double bar_x = width - pad - hi_w - 5.0 * s - bar_w;
  double lo_x = bar_x - 5.0 * s;
  double name_end = lo_x - lo_w - 8.0 * s;
  double count_end = pad + caml_plot_text_width (cr, size, count) + 16.0 * s;

  cairo_pattern_t *ramp = cairo_pattern_create_linear (bar_x, 0, bar_x + bar_w, 0);
  for (int k = 0; k <= 16; k++)
    {
      double rgb[3];
      caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_VIRIDIS, COLOR_SPAN * k / 16.0, rgb);
      cairo_pattern_add_color_stop_rgb (ramp, k / 16.0, rgb[0], rgb[1], rgb[2]);
    }
  cairo_rectangle (cr, bar_x, y - 0.5 * bar_h, bar_w, bar_h);
  cairo_set_source (cr, ramp);
  cairo_fill (cr);
  cairo_pattern_destroy (ramp);
  cairo_set_source_rgb (cr, 0.15, 0.15, 0.15);
  caml_plot_text (cr, size, FALSE, lo_x, y, 1.0, 0.5, lo);
  caml_plot_text (cr, size, FALSE, bar_x + bar_w + 5.0 * s, y, 0.0, 0.5, hi);
  if (name_end - count_end > 20.0 * s)
    {
      g_autofree char *name = caml_plot_shorten_text (cr, size, FALSE,
                                                      p->axes[p->color_axis].name,
                                                      name_end - count_end);
      caml_plot_text (cr, size, FALSE, name_end, y, 1.0, 0.5, name);
    }
  cairo_restore (cr);
}

void
caml_plot_parallel_draw (const CamlPlotParallel *p, cairo_t *cr, double width, double height)
{
  Layout l;

  layout_compute (p, cr, width, height, &l);
  cairo_save (cr);
  cairo_set_source_rgb (cr, 0.0, 0.0, 0.0);
  caml_plot_draw_title (cr, l.style.title_size, width, 0.5 * width, l.title_y, p->title);
  gboolean rows = p->n_rows > 0;
  for (int a = 0; a < p->n_axes; a++)
    draw_axis_line (cr, p, &l, a);
  if (rows)
    {
      draw_rows (cr, p, &l);
      draw_brushes (cr, p, &l);
    }
  /* ticks and labels over the lines */
  for (int a = 0; a < p->n_axes; a++)
    draw_axis_marks (cr, p, &l, a, rows);
  if (rows)
    draw_footer (cr, p, &l, width);
  else
    {
      double pad = 8.0 * l.style.scale;
      CamlPlotRect area = { pad, l.y_top, width - 2.0 * pad, l.y_bottom - l.y_top };
      caml_plot_draw_note (cr, &l.style, &area, p->note);
    }
  cairo_restore (cr);
  layout_clear (&l, p->n_axes);
}

void
caml_plot_parallel_draw_cb (cairo_t *cr, double width, double height, gpointer user_data)
{
  caml_plot_parallel_draw (user_data, cr, width, height);
}
