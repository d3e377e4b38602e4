/* caml-plot-math.c — the display-free arithmetic behind the plots: axis
 * ranges and ticks, tick labels, colormaps, normalisation, smoothing and
 * marching-squares contours. Nothing here touches a cairo_t. */
#include "caml-plot.h"

#include <math.h>
#include <string.h>
#include <stdio.h>

#define DEFAULT_MAX_TICKS 8

gboolean
caml_plot_finite_range (const double *v, size_t n, gboolean positive_only,
                        double *lo, double *hi)
{
  gboolean found = FALSE;
  double mn = 0.0, mx = 0.0;

  for (size_t i = 0; i < n; i++)
    {
      if (!isfinite (v[i]) || (positive_only && v[i] <= 0.0))
        continue;
      if (!found || v[i] < mn)
        mn = v[i];
      if (!found || v[i] > mx)
        mx = v[i];
      found = TRUE;
    }
  if (found)
    {
      *lo = mn;
      *hi = mx;
    }
  return found;
}

static int
clamp_max_ticks (int max_ticks)
{
  if (max_ticks <= 0)
    return DEFAULT_MAX_TICKS;
  return CLAMP (max_ticks, 2, CAML_PLOT_MAX_TICKS);
}

/* 10^e with the decimal rounding of a literal ("0.1", not 0.1000000001). */
static double
pow10i (int e)
{
  return e >= 0 ? pow (10.0, e) : 1.0 / pow (10.0, -e);
}

/* k · mantissa · 10^e, rounded like the decimal literal would be. */
static double
scaled (double k, double mantissa, int e)
{
  return e >= 0 ? k * mantissa * pow (10.0, e) : k * mantissa / pow (10.0, -e);
}

static void
sanitize_range (double *lo, double *hi)
{
  if (!isfinite (*lo) && !isfinite (*hi))
    {
      *lo = 0.0;
      *hi = 1.0;
    }
  else if (!isfinite (*lo))
    *lo = *hi;
  else if (!isfinite (*hi))
    *hi = *lo;

  if (*lo > *hi)
    {
      double t = *lo;
      *lo = *hi;
      *hi = t;
    }
  /* a span beyond the double range (−1e308 … 1e308): the middle half of it */
  if (!isfinite (*hi - *lo))
    {
      *lo = MAX (*lo, -G_MAXDOUBLE / 4);
      *hi = MIN (*hi, G_MAXDOUBLE / 4);
    }
  if (*hi - *lo <= fabs (*hi) * 1e-12)
    {
      double d = *lo == 0.0 ? 1.0 : fabs (*lo) * 0.1;
      *lo -= d;
      *hi += d;
    }
}

/* Fills ticks k·m·10^e inside [lo, hi] for the finest 1-2-5 step that gives
 * at most max_ticks of them. Returns the step. */
static double
nice_ticks (double lo, double hi, int max_ticks, double *ticks, int *n_ticks)
{
  static const double mantissas[] = { 1.0, 2.0, 5.0 };
  double span = hi - lo;
  int e0 = (int) floor (log10 (span)) - 2;

  for (int e = e0; e < e0 + 40; e++)
    for (int m = 0; m < 3; m++)
      {
        double step = scaled (1.0, mantissas[m], e);
        double eps = step * 1e-9;
        double k0 = ceil ((lo - eps) / step);
        double k1 = floor ((hi + eps) / step);
        double count = k1 - k0 + 1.0;

        if (count > max_ticks)
          continue;
        *n_ticks = 0;
        for (double k = k0; k <= k1; k++)
          {
            double t = scaled (k, mantissas[m], e);
            ticks[(*n_ticks)++] = fabs (t) < eps ? 0.0 : t;
          }
        return step;
      }
  *n_ticks = 0;  /* unreachable for finite, non-empty ranges */
  return span;
}

void
caml_plot_axis_linear (CamlPlotAxis *axis, double lo, double hi, int max_ticks)
{
  sanitize_range (&lo, &hi);
  axis->lo = lo;
  axis->hi = hi;
  axis->log = FALSE;
  axis->counts = FALSE;
  axis->n_minor = 0;
  axis->step = nice_ticks (lo, hi, clamp_max_ticks (max_ticks), axis->ticks, &axis->n_ticks);
}

void
caml_plot_axis_integer_ticks (CamlPlotAxis *axis, int max_ticks)
{
  axis->counts = !axis->log;
  if (axis->log || axis->step >= 1.0)
    return;
  /* Steps of 1, 2, 5, 10… from 1 up: the finest with at most max_ticks. */
  double lo = MAX (axis->lo, -1e15), hi = MIN (axis->hi, 1e15);
  max_ticks = clamp_max_ticks (max_ticks);
  if (floor (hi) - ceil (lo) + 1.0 <= max_ticks)
    {
      axis->n_ticks = 0;
      for (double k = ceil (lo); k <= floor (hi); k++)
        axis->ticks[axis->n_ticks++] = k == 0.0 ? 0.0 : k;
      axis->step = 1.0;
      return;
    }
  /* More than max_ticks whole numbers: nice_ticks already picked a step >= 1. */
}

void
caml_plot_axis_log (CamlPlotAxis *axis, double lo, double hi, int max_ticks)
{
  max_ticks = clamp_max_ticks (max_ticks);
  if (!(hi > 0.0) || !isfinite (hi))
    hi = lo > 0.0 && isfinite (lo) ? lo : 1.0;
  if (!(lo > 0.0) || !isfinite (lo))
    lo = hi / 1000.0;
  if (lo > hi)
    {
      double t = lo;
      lo = hi;
      hi = t;
    }
  if (hi / lo < 1.0 + 1e-9)
    {
      lo /= sqrt (10.0);
      hi *= sqrt (10.0);
    }

  axis->lo = lo;
  axis->hi = hi;
  axis->log = TRUE;
  axis->counts = FALSE;
  axis->step = 0.0;
  axis->n_ticks = 0;
  axis->n_minor = 0;

  int d0 = (int) ceil (log10 (lo) - 1e-9);
  int d1 = (int) floor (log10 (hi) + 1e-9);
  int n_decades = d1 - d0 + 1;

  if (n_decades >= 3)
    {
      int every = (n_decades + max_ticks - 1) / max_ticks;
      for (int d = d0; d <= d1; d++)
        if (((d % every) + every) % every == 0 && axis->n_ticks < CAML_PLOT_MAX_TICKS)
          axis->ticks[axis->n_ticks++] = pow10i (d);
      if (every == 1)
        for (int d = d0 - 1; d <= d1; d++)
          for (int m = 2; m <= 9; m++)
            {
              double v = scaled (1.0, m, d);
              if (v >= lo && v <= hi && axis->n_minor < CAML_PLOT_MAX_TICKS)
                axis->minor[axis->n_minor++] = v;
            }
      return;
    }

  /* Under three decades: 1, 2, 5 × each decade. */
  static const double mantissas[] = { 1.0, 2.0, 5.0 };
  for (int d = (int) floor (log10 (lo)) - 1; d <= d1 + 1; d++)
    for (int m = 0; m < 3; m++)
      {
        double v = scaled (1.0, mantissas[m], d);
        if (v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9)
            && axis->n_ticks < CAML_PLOT_MAX_TICKS)
          axis->ticks[axis->n_ticks++] = v;
      }
  if (axis->n_ticks >= 3 && axis->n_ticks <= max_ticks)
    return;
  if (axis->n_ticks > max_ticks && n_decades >= 2)
    {
      axis->n_ticks = 0;
      for (int d = d0; d <= d1; d++)
        axis->ticks[axis->n_ticks++] = pow10i (d);
      return;
    }
  /* Less than a decade: linear nice ticks read fine on a short log axis. */
  axis->step = nice_ticks (lo, hi, MIN (max_ticks, 6), axis->ticks, &axis->n_ticks);
}

double
caml_plot_axis_map (const CamlPlotAxis *axis, double v, double p0, double p1)
{
  double t;

  if (axis->log)
    {
      if (!(v > 0.0))
        return NAN;
      t = (log10 (v) - log10 (axis->lo)) / (log10 (axis->hi) - log10 (axis->lo));
    }
  else
    t = (v - axis->lo) / (axis->hi - axis->lo);
  return p0 + t * (p1 - p0);
}

double
caml_plot_axis_unmap (const CamlPlotAxis *axis, double p, double p0, double p1)
{
  double t = (p - p0) / (p1 - p0);

  if (axis->log)
    return pow (10.0, log10 (axis->lo) + t * (log10 (axis->hi) - log10 (axis->lo)));
  return axis->lo + t * (axis->hi - axis->lo);
}

gboolean
caml_plot_parse_numbers (const char *const *texts, int n, double *values)
{
  for (int i = 0; i < n; i++)
    {
      char *end = NULL;
      double v = g_ascii_strtod (texts[i], &end);
      if (end == texts[i] || *end != '\0' || !isfinite (v))
        return FALSE;
    }
  for (int i = 0; values != NULL && i < n; i++)
    values[i] = g_ascii_strtod (texts[i], NULL);
  return TRUE;
}

/* "1.000e+06" → "1e6", "2.50e-05" → "2.5e-5": the mantissa without
 * trailing zeros, the exponent without its sign's "+" and leading zeros. */
static void
compact_exponent (char *buf)
{
  char *e = strchr (buf, 'e');
  if (e == NULL)
    return;
  if (strchr (buf, '.') != NULL)
    {
      char *end = e;
      while (end[-1] == '0')
        end--;
      if (end[-1] == '.')
        end--;
      memmove (end, e, strlen (e) + 1);
      e = end;
    }
  char *from = e + 1, *to = e + 1;
  if (*from == '+')
    from++;
  else if (*from == '-')
    *to++ = *from++;
  while (*from == '0' && from[1] != '\0')
    from++;
  memmove (to, from, strlen (from) + 1);
}

/* A nonzero value whose fixed form would be long: written with an exponent. */
static gboolean
needs_exponent (double a)
{
  return a > 0.0 && (a < 1e-4 || a >= 1e6);
}

static void
format_tick (char *buf, size_t size, double v, double step, gboolean exponent)
{
  double a = fabs (v);

  if (size == 0)
    return;
  if (!isfinite (v))
    {
      g_strlcpy (buf, isnan (v) ? "nan" : (v > 0 ? "inf" : "-inf"), size);
      return;
    }
  if (a == 0.0 || (step > 0.0 && a < step * 1e-6))
    {
      g_strlcpy (buf, "0", size);
      return;
    }
  if (!(step > 0.0))
    {
      /* a log axis: decades, 2 × and 5 × decades — the value as it is */
      if (exponent)
        {
          snprintf (buf, size, "%.3e", v);
          compact_exponent (buf);
          return;
        }
      /* fixed, never an exponent ("%g" writes 1e4 as "1e+04" beside "1000") */
      snprintf (buf, size, "%.10f", v);
      char *end = buf + strlen (buf);
      while (end > buf && end[-1] == '0')
        end--;
      if (end > buf && end[-1] == '.')
        end--;
      *end = '\0';
      return;
    }

  int e_step = (int) floor (log10 (step) + 1e-9);
  double mant = step / pow (10.0, e_step);
  int extra = fabs (mant - round (mant)) > 1e-6 ? 1 : 0;  /* 2.5 × 10^k */

  if (!exponent)
    {
      int decimals = CLAMP (-e_step + extra, 0, 10);
      snprintf (buf, size, "%.*f", decimals, v);
    }
  else
    {
      /* as many digits as the step needs at this value's magnitude */
      int digits = (int) floor (log10 (MAX (a, step)) + 1e-9) - e_step + extra;
      snprintf (buf, size, "%.*e", CLAMP (digits, 0, 14), v);
      compact_exponent (buf);
    }
}

/* A count in the axis's unit: "20k", "1.5M" (the step sets the digits,
 * trailing zeros dropped: "1M" beside "1.5M"). */
static void
format_count (char *buf, size_t size, double v, double step, double unit, const char *suffix)
{
  if (v == 0.0 || fabs (v) < step * 1e-6)
    {
      g_strlcpy (buf, "0", size);
      return;
    }
  double s = step / unit;
  int e = (int) floor (log10 (s) + 1e-9);
  double mant = s / pow (10.0, e);
  int extra = fabs (mant - round (mant)) > 1e-6 ? 1 : 0;   /* 2.5 × 10^k */
  int decimals = CLAMP (-e + extra, 0, 6);
  char number[64];
  snprintf (number, sizeof number, "%.*f", decimals, v / unit);
  if (decimals > 0)
    {
      char *end = number + strlen (number);
      while (end[-1] == '0')
        end--;
      if (end[-1] == '.')
        end--;
      *end = '\0';
    }
  snprintf (buf, size, "%s%s", number, suffix);
}

void
caml_plot_axis_tick_label (const CamlPlotAxis *axis, int i, char *buf, size_t size)
{
  if (axis->counts && axis->step > 0.0 && size > 0 && isfinite (axis->ticks[i]))
    {
      double largest = 0.0;
      for (int k = 0; k < axis->n_ticks; k++)
        largest = MAX (largest, fabs (axis->ticks[k]));
      static const struct { double unit; const char *suffix; } units[] = {
        { 1e9, "G" }, { 1e6, "M" }, { 1e4, "k" },
      };
      for (guint u = 0; u < G_N_ELEMENTS (units); u++)
        if (largest >= units[u].unit)
          {
            /* "k" from 10,000 on, in thousands */
            double unit = units[u].unit == 1e4 ? 1e3 : units[u].unit;
            format_count (buf, size, axis->ticks[i], axis->step, unit, units[u].suffix);
            return;
          }
      format_count (buf, size, axis->ticks[i], MAX (axis->step, 1.0), 1.0, "");
      return;
    }

  /* One form for the whole axis: "800000" beside "1e6" read as two scales. */
  gboolean exponent = FALSE;
  double step = axis->step;   /* 0 on a log axis: the values as they are */
  for (int k = 0; k < axis->n_ticks; k++)
    {
      double a = fabs (axis->ticks[k]);
      if (!(step > 0.0 && a < step * 1e-6))   /* a zero tick prints "0" either way */
        exponent |= needs_exponent (a);
    }
  format_tick (buf, size, axis->ticks[i], step, exponent);
}

/* ---------------------------------------------------------- colours --- */

/* Polynomial fit of matplotlib's viridis (Matt Zucker, CC0); max error ~0.01
 * against the reference table, luminance monotonic. */
static void
viridis (double t, double rgb[3])
{
  static const double c[7][3] = {
    { 0.2777273272234177, 0.005407344544966578, 0.3340998053353061 },
    { 0.1050930431085774, 1.404613529898575, 1.384590162594685 },
    { -0.3308618287255563, 0.214847559468213, 0.09509516302823659 },
    { -4.634230498983486, -5.799100973351585, -19.33244095627987 },
    { 6.228269936347081, 14.17993336680509, 56.69055260068105 },
    { 4.776384997670288, -13.74514537774601, -65.35303263337234 },
    { -5.435455855934631, 4.645852612178535, 26.3124352495832 },
  };

  for (int k = 0; k < 3; k++)
    {
      double v = c[6][k];
      for (int p = 5; p >= 0; p--)
        v = v * t + c[p][k];
      rgb[k] = CLAMP (v, 0.0, 1.0);
    }
}

static void
diverging (double t, double rgb[3])
{
  static const double blue[3] = { 0.230, 0.299, 0.754 };
  static const double red[3] = { 0.706, 0.016, 0.150 };
  const double *end = t < 0.5 ? blue : red;
  double s = t < 0.5 ? (0.5 - t) * 2.0 : (t - 0.5) * 2.0;  /* 0 white → 1 end */

  for (int k = 0; k < 3; k++)
    rgb[k] = 1.0 + s * (end[k] - 1.0);
}

void
caml_plot_colormap_rgb (CamlPlotColormap cmap, double t, double rgb[3])
{
  if (isnan (t))
    {
      rgb[0] = rgb[1] = rgb[2] = 0.85;
      return;
    }
  t = CLAMP (t, 0.0, 1.0);
  switch (cmap)
    {
    case CAML_PLOT_COLORMAP_GREY:
      rgb[0] = rgb[1] = rgb[2] = t;
      break;
    case CAML_PLOT_COLORMAP_DIVERGING:
      diverging (t, rgb);
      break;
    case CAML_PLOT_COLORMAP_BLUES:   /* #08306b → white */
      rgb[0] = (8 + t * (255 - 8)) / 255.0;
      rgb[1] = (48 + t * (255 - 48)) / 255.0;
      rgb[2] = (107 + t * (255 - 107)) / 255.0;
      break;
    case CAML_PLOT_COLORMAP_VIRIDIS:
    default:
      viridis (t, rgb);
      break;
    }
}

void
caml_plot_normalize (double *out, const double *in, size_t n, double vmin, double vmax)
{
  gboolean constant = !(vmax > vmin) || !isfinite (vmax - vmin);

  for (size_t i = 0; i < n; i++)
    {
      double v = in[i];
      if (!isfinite (v))
        out[i] = NAN;
      else if (constant)
        out[i] = 0.5;
      else
        out[i] = CLAMP ((v - vmin) / (vmax - vmin), 0.0, 1.0);
    }
}

void
caml_plot_palette_rgb (int index, double rgb[3])
{
  /* Tableau 10: distinguishable, prints well. */
  static const guint32 palette[] = {
    0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
    0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf,
  };
  guint32 c = palette[((index % 10) + 10) % 10];

  rgb[0] = ((c >> 16) & 0xff) / 255.0;
  rgb[1] = ((c >> 8) & 0xff) / 255.0;
  rgb[2] = (c & 0xff) / 255.0;
}

double *
caml_plot_doubles_from_floats (const float *v, size_t n)
{
  double *out = g_new (double, MAX (n, 1));

  for (size_t i = 0; i < n; i++)
    out[i] = v[i];
  return out;
}

void
caml_plot_ema (double *out, const double *in, size_t n, double factor)
{
  gboolean started = FALSE;
  double avg = 0.0;

  factor = CLAMP (factor, 0.0, 0.9999);
  for (size_t i = 0; i < n; i++)
    {
      double v = in[i];
      if (!isfinite (v))
        {
          out[i] = NAN;
          continue;
        }
      avg = started ? factor * avg + (1.0 - factor) * v : v;
      started = TRUE;
      out[i] = avg;
    }
}

void
caml_plot_ema_log (double *out, const double *in, size_t n, double factor)
{
  gboolean started = FALSE;
  double avg = 0.0;   /* running average of log(in) */

  factor = CLAMP (factor, 0.0, 0.9999);
  for (size_t i = 0; i < n; i++)
    {
      double v = in[i];
      if (!isfinite (v) || v <= 0.0)
        {
          out[i] = NAN;
          continue;
        }
      double lv = log (v);
      avg = started ? factor * avg + (1.0 - factor) * lv : lv;
      started = TRUE;
      out[i] = exp (avg);
    }
}

/* ---------------------------------------------------------- contours --- */

static void
crossing (double xa, double ya, double va, double xb, double yb, double vb,
          double level, double *x, double *y)
{
  double t = (level - va) / (vb - va);
  *x = xa + t * (xb - xa);
  *y = ya + t * (yb - ya);
}

CamlPlotSegment *
caml_plot_contours (const double *values, int nx, int ny,
                    double x0, double x1, double y0, double y1,
                    const double *levels, int n_levels, size_t *n_segments)
{
  *n_segments = 0;
  g_return_val_if_fail (nx >= 2 && ny >= 2, NULL);

  GArray *segs = g_array_new (FALSE, FALSE, sizeof (CamlPlotSegment));
  double dx = (x1 - x0) / (nx - 1);
  double dy = (y1 - y0) / (ny - 1);

  for (int l = 0; l < n_levels; l++)
    {
      double level = levels[l];
      if (!isfinite (level))
        continue;
      for (int j = 0; j + 1 < ny; j++)
        for (int i = 0; i + 1 < nx; i++)
          {
            /* corners counter-clockwise from bottom-left */
            double v[4] = {
              values[j * nx + i], values[j * nx + i + 1],
              values[(j + 1) * nx + i + 1], values[(j + 1) * nx + i],
            };
            double cx[4] = { x0 + i * dx, x0 + (i + 1) * dx, x0 + (i + 1) * dx, x0 + i * dx };
            double cy[4] = { y0 + j * dy, y0 + j * dy, y0 + (j + 1) * dy, y0 + (j + 1) * dy };
            int mask = 0;

            if (!isfinite (v[0]) || !isfinite (v[1]) || !isfinite (v[2]) || !isfinite (v[3]))
              continue;
            for (int k = 0; k < 4; k++)
              mask |= (v[k] >= level) << k;
            if (mask == 0 || mask == 15)
              continue;

            /* crossing point on edge k (corner k → corner k+1) */
            double px[4], py[4];
            gboolean cut[4];
            for (int k = 0; k < 4; k++)
              {
                int k1 = (k + 1) % 4;
                cut[k] = (v[k] >= level) != (v[k1] >= level);
                if (cut[k])
                  crossing (cx[k], cy[k], v[k], cx[k1], cy[k1], v[k1], level, &px[k], &py[k]);
              }

            int pairs[2][2];
            int n_pairs = 0;
            if (mask == 5 || mask == 10)
              {
                /* saddle: is the centre on the same side as corner 0? */
                double centre = 0.25 * (v[0] + v[1] + v[2] + v[3]);
                gboolean corner0_high = mask == 5;
                if ((centre >= level) == corner0_high)
                  {
                    /* corner 0's side connects through the centre: cut off 1 and 3 */
                    pairs[0][0] = 0; pairs[0][1] = 1;  /* around corner 1 */
                    pairs[1][0] = 2; pairs[1][1] = 3;  /* around corner 3 */
                  }
                else
                  {
                    pairs[0][0] = 3; pairs[0][1] = 0;  /* around corner 0 */
                    pairs[1][0] = 1; pairs[1][1] = 2;  /* around corner 2 */
                  }
                n_pairs = 2;
              }
            else
              {
                int a = -1;
                for (int k = 0; k < 4; k++)
                  if (cut[k])
                    {
                      if (a < 0)
                        a = k;
                      else
                        {
                          pairs[0][0] = a;
                          pairs[0][1] = k;
                          n_pairs = 1;
                        }
                    }
              }

            for (int p = 0; p < n_pairs; p++)
              {
                CamlPlotSegment s = {
                  px[pairs[p][0]], py[pairs[p][0]], px[pairs[p][1]], py[pairs[p][1]], l,
                };
                g_array_append_val (segs, s);
              }
          }
    }

  *n_segments = segs->len;
  if (segs->len == 0)
    {
      g_array_free (segs, TRUE);
      return NULL;
    }
  return (CamlPlotSegment *) g_array_free (segs, FALSE);
}
