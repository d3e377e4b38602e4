/* test-plot.c — plot math (ticks, labels, colormaps, normalisation, EMA,
 * marching squares) without a display, and PNG/SVG rendering round trips. */
#include <math.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <glib/gstdio.h>

#include "caml-plot.h"
#include "plot-png.h"

#ifdef CAML_HAVE_FONTCONFIG
#include <fontconfig/fontconfig.h>
#endif

/* ------------------------------------------------------------ helpers --- */

static gboolean
is_125_step (double step)
{
  double e = floor (log10 (step) + 1e-9);
  double m = step / pow (10.0, e);
  return fabs (m - 1.0) < 1e-6 || fabs (m - 2.0) < 1e-6 || fabs (m - 5.0) < 1e-6;
}

/* Ticks ascending, inside the range, evenly spaced multiples of a 1-2-5 step,
 * and between 4 and 8 of them. */
static void
assert_nice_axis (const CamlPlotAxis *a, double lo, double hi)
{
  assert_false (a->log);
  assert_true (a->lo < a->hi);
  assert_true (a->lo <= lo && a->hi >= hi);
  assert_in_range (a->n_ticks, 4, 8);
  assert_true (is_125_step (a->step));
  for (int i = 0; i < a->n_ticks; i++)
    {
      double t = a->ticks[i];
      assert_true (t >= a->lo - 1e-12 && t <= a->hi + 1e-12);
      assert_true (fabs (t / a->step - round (t / a->step)) < 1e-6);
      if (i > 0)
        assert_true (fabs ((t - a->ticks[i - 1]) - a->step) < 1e-9 * fmax (1.0, fabs (t)));
    }
}

static void
assert_tick_label (double v, double step, const char *expected)
{
  /* an axis of that one tick: linear with its spacing, or log (step 0) */
  CamlPlotAxis a = { .log = step == 0.0, .n_ticks = 1, .ticks = { v }, .step = step };
  char buf[64];
  caml_plot_axis_tick_label (&a, 0, buf, sizeof buf);
  assert_string_equal (buf, expected);
}

static double
luminance (const double rgb[3])
{
  return 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2];
}

/* ---------------------------------------------------------------- axes --- */

static void
test_ticks_unit_range (void **state)
{
  CamlPlotAxis a;
  static const double expected[] = { 0.0, 0.2, 0.4, 0.6, 0.8, 1.0 };

  caml_plot_axis_linear (&a, 0.0, 1.0, 8);
  assert_nice_axis (&a, 0.0, 1.0);
  assert_int_equal (a.n_ticks, 6);
  for (int i = 0; i < 6; i++)
    assert_true (fabs (a.ticks[i] - expected[i]) < 1e-12);
  assert_true (a.ticks[0] == 0.0 && a.ticks[5] == 1.0);
}

static void
test_ticks_odd_range (void **state)
{
  CamlPlotAxis a;

  caml_plot_axis_linear (&a, 0.013, 0.87, 8);
  assert_nice_axis (&a, 0.013, 0.87);
  assert_true (fabs (a.step - 0.1) < 1e-12);
  assert_true (fabs (a.ticks[0] - 0.1) < 1e-12);
  assert_true (fabs (a.ticks[a.n_ticks - 1] - 0.8) < 1e-12);

  caml_plot_axis_linear (&a, 0.0, 1000.0, 8);
  assert_nice_axis (&a, 0.0, 1000.0);
  assert_true (a.step == 200.0);

  caml_plot_axis_linear (&a, 1e-5, 7.3e-5, 8);
  assert_nice_axis (&a, 1e-5, 7.3e-5);
}

static void
test_ticks_negative (void **state)
{
  CamlPlotAxis a;

  caml_plot_axis_linear (&a, -37.0, -2.0, 8);
  assert_nice_axis (&a, -37.0, -2.0);
  assert_true (a.ticks[a.n_ticks - 1] <= -2.0);

  /* symmetric range: zero is a tick and exactly zero */
  caml_plot_axis_linear (&a, -2.0, 2.0, 8);
  assert_nice_axis (&a, -2.0, 2.0);
  gboolean has_zero = FALSE;
  for (int i = 0; i < a.n_ticks; i++)
    if (a.ticks[i] == 0.0 && !signbit (a.ticks[i]))
      has_zero = TRUE;
  assert_true (has_zero);
}

static void
test_ticks_degenerate (void **state)
{
  CamlPlotAxis a, b;

  /* reversed = swapped */
  caml_plot_axis_linear (&a, 1.0, 0.0, 8);
  caml_plot_axis_linear (&b, 0.0, 1.0, 8);
  assert_true (a.lo == 0.0 && a.hi == 1.0);
  assert_int_equal (a.n_ticks, b.n_ticks);
  assert_memory_equal (a.ticks, b.ticks, sizeof (double) * a.n_ticks);

  /* zero width: widened around the value */
  caml_plot_axis_linear (&a, 3.0, 3.0, 8);
  assert_true (a.lo < 3.0 && a.hi > 3.0);
  assert_in_range (a.n_ticks, 3, 8);
  caml_plot_axis_linear (&a, 0.0, 0.0, 8);
  assert_true (a.lo < 0.0 && a.hi > 0.0);
  assert_in_range (a.n_ticks, 3, 8);

  /* non-finite ends are ignored */
  caml_plot_axis_linear (&a, NAN, 5.0, 8);
  assert_true (isfinite (a.lo) && isfinite (a.hi) && a.lo < 5.0 && a.hi > 5.0);
  caml_plot_axis_linear (&a, -INFINITY, NAN, 8);
  assert_true (a.lo == 0.0 && a.hi == 1.0);

  /* a width beyond the double range (it overflowed an int in nice_ticks):
   * the middle of it, with ticks */
  caml_plot_axis_linear (&a, -1e308, 1e308, 8);
  assert_true (isfinite (a.hi - a.lo) && a.lo < 0.0 && a.hi > 0.0);
  assert_in_range (a.n_ticks, 2, 8);
  for (int i = 0; i < a.n_ticks; i++)
    assert_true (isfinite (a.ticks[i]) && a.ticks[i] >= a.lo && a.ticks[i] <= a.hi);
}

static void
test_finite_range (void **state)
{
  double v[] = { NAN, 3.0, -INFINITY, -2.0, INFINITY, 0.5, 0.0 };
  double lo = 99.0, hi = 99.0;

  assert_true (caml_plot_finite_range (v, G_N_ELEMENTS (v), FALSE, &lo, &hi));
  assert_true (lo == -2.0 && hi == 3.0);
  assert_true (caml_plot_finite_range (v, G_N_ELEMENTS (v), TRUE, &lo, &hi));
  assert_true (lo == 0.5 && hi == 3.0);

  double bad[] = { NAN, INFINITY };
  lo = hi = 42.0;
  assert_false (caml_plot_finite_range (bad, 2, FALSE, &lo, &hi));
  assert_true (lo == 42.0 && hi == 42.0);
}

static void
test_log_ticks (void **state)
{
  CamlPlotAxis a;
  static const double decades[] = { 1e-4, 1e-3, 1e-2, 1e-1, 1.0 };

  caml_plot_axis_log (&a, 1e-4, 1.0, 8);
  assert_true (a.log);
  assert_int_equal (a.n_ticks, 5);
  for (int i = 0; i < 5; i++)
    assert_true (fabs (a.ticks[i] / decades[i] - 1.0) < 1e-12);
  assert_true (a.n_minor > 20);  /* 2..9 of each decade */

  /* many decades: every k-th decade, still at most max_ticks */
  caml_plot_axis_log (&a, 1e-12, 1e6, 8);
  assert_in_range (a.n_ticks, 3, 8);

  /* under a decade: still at least three ticks, all inside */
  caml_plot_axis_log (&a, 0.2, 0.9, 8);
  assert_in_range (a.n_ticks, 3, 8);
  for (int i = 0; i < a.n_ticks; i++)
    {
      assert_true (a.ticks[i] >= 0.2 - 1e-12 && a.ticks[i] <= 0.9 + 1e-12);
      if (i > 0)
        assert_true (a.ticks[i] > a.ticks[i - 1]);
    }

  /* two decades: 1-2-5 ticks */
  caml_plot_axis_log (&a, 0.01, 0.5, 8);
  assert_int_equal (a.n_ticks, 6);
  assert_true (fabs (a.ticks[0] - 0.01) < 1e-15 && fabs (a.ticks[5] - 0.5) < 1e-15);

  /* non-positive lower end falls back to something positive */
  caml_plot_axis_log (&a, 0.0, 10.0, 8);
  assert_true (a.lo > 0.0 && a.hi == 10.0);
}

static void
test_axis_map (void **state)
{
  CamlPlotAxis a;

  caml_plot_axis_linear (&a, -1.0, 3.0, 8);
  assert_true (fabs (caml_plot_axis_map (&a, -1.0, 100.0, 500.0) - 100.0) < 1e-9);
  assert_true (fabs (caml_plot_axis_map (&a, 3.0, 100.0, 500.0) - 500.0) < 1e-9);
  assert_true (fabs (caml_plot_axis_map (&a, 1.0, 400.0, 0.0) - 200.0) < 1e-9);  /* y: up */
  assert_true (fabs (caml_plot_axis_unmap (&a, 200.0, 400.0, 0.0) - 1.0) < 1e-9);

  caml_plot_axis_log (&a, 1e-4, 1.0, 8);
  assert_true (fabs (caml_plot_axis_map (&a, 1e-2, 0.0, 400.0) - 200.0) < 1e-9);
  assert_true (fabs (caml_plot_axis_unmap (&a, 300.0, 0.0, 400.0) / 1e-1 - 1.0) < 1e-9);
  assert_true (isnan (caml_plot_axis_map (&a, 0.0, 0.0, 400.0)));
}

static void
test_tick_labels (void **state)
{
  assert_tick_label (0.001, 0.001, "0.001");
  assert_tick_label (1e-5, 1e-5, "1e-5");
  assert_tick_label (2.5e-5, 5e-6, "2.5e-5");
  assert_tick_label (2.5, 0.5, "2.5");
  assert_tick_label (1000.0, 200.0, "1000");
  assert_tick_label (0.1 * 3.0, 0.1, "0.3");
  assert_tick_label (-1e-17, 0.1, "0");
  assert_tick_label (-0.0, 0.2, "0");
  assert_tick_label (-1.5, 0.5, "-1.5");
  assert_tick_label (0.75, 0.25, "0.75");
  assert_tick_label (1000.1, 0.1, "1000.1");
  assert_tick_label (1.2e6, 2e5, "1.2e6");
  assert_tick_label (-3e-7, 1e-7, "-3e-7");
  /* log axes pass step 0 */
  assert_tick_label (1e-4, 0.0, "0.0001");
  assert_tick_label (1e-5, 0.0, "1e-5");
  assert_tick_label (2e-5, 0.0, "2e-5");
  assert_tick_label (1e6, 0.0, "1e6");
  assert_tick_label (1e10, 0.0, "1e10");
  assert_tick_label (1000.0, 0.0, "1000");
  assert_tick_label (1e4, 0.0, "10000");
  assert_tick_label (5e5, 0.0, "500000");
  assert_tick_label (2.5e-4, 0.0, "0.00025");
  assert_tick_label (0.5, 0.0, "0.5");
}

/* The labels of all of an axis's ticks, space-separated (free it). */
static char *
axis_labels (const CamlPlotAxis *a)
{
  GString *all = g_string_new (NULL);
  char buf[64];
  for (int i = 0; i < a->n_ticks; i++)
    {
      caml_plot_axis_tick_label (a, i, buf, sizeof buf);
      g_string_append_printf (all, "%s%s", i > 0 ? " " : "", buf);
    }
  return g_string_free (all, FALSE);
}

/* An axis's labels share one form: a run of 1,000,000 steps reads "0, 2e5,
 * 4e5, 6e5, 8e5, 1e6", not "800000" beside "1e+06"; a log axis down to
 * 1e-5 writes every decade with an exponent. */
static void
test_axis_tick_labels (void **state)
{
  CamlPlotAxis a;
  g_autofree char *million = NULL, *half = NULL, *decades = NULL;

  caml_plot_axis_linear (&a, 0.0, 1e6, 6);
  assert_string_equal (million = axis_labels (&a), "0 2e5 4e5 6e5 8e5 1e6");
  caml_plot_axis_linear (&a, 0.0, 5e5, 6);
  assert_string_equal (half = axis_labels (&a), "0 100000 200000 300000 400000 500000");
  caml_plot_axis_log (&a, 1e-5, 0.1, 8);
  assert_string_equal (decades = axis_labels (&a), "1e-5 1e-4 1e-3 1e-2 1e-1");
}

/* A step axis counts in one unit at every range: plain to 9999, then "k",
 * "M" — the loss's axis reads "100k" while a run trains and "200k" when it
 * has ended, never "100000" then "2e5". */
static void
test_count_tick_labels (void **state)
{
  static const struct { double lo, hi; const char *labels; } cases[] = {
    { 0, 1000, "0 200 400 600 800 1000" },
    { 0, 9000, "0 2000 4000 6000 8000" },
    { 0, 12000, "0 2k 4k 6k 8k 10k 12k" },
    { 0, 1e5, "0 20k 40k 60k 80k 100k" },
    { 0, 2e5, "0 50k 100k 150k 200k" },
    { 100000, 102000, "100k 100.5k 101k 101.5k 102k" },
    { 0, 1.5e6, "0 0.2M 0.4M 0.6M 0.8M 1M 1.2M 1.4M" },
    { 0, 1e6, "0 0.2M 0.4M 0.6M 0.8M 1M" },
    { 0, 2.5e9, "0 0.5G 1G 1.5G 2G 2.5G" },
    { -20000, 20000, "-20k -10k 0 10k 20k" },
  };
  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      CamlPlotAxis a;
      caml_plot_axis_linear (&a, cases[k].lo, cases[k].hi, 8);
      caml_plot_axis_integer_ticks (&a, 8);
      assert_true (a.counts);
      g_autofree char *labels = axis_labels (&a);
      if (!g_str_equal (labels, cases[k].labels))
        fail_msg ("%g…%g: \"%s\", expected \"%s\"", cases[k].lo, cases[k].hi, labels,
                  cases[k].labels);
    }

  /* The loss figure's x axis (integer_x), while training and finished. */
  const double ends[] = { 1e5, 2e5 };
  const char *expected[] = { "0 20k 40k 60k 80k 100k", "0 50k 100k 150k 200k" };
  for (guint k = 0; k < G_N_ELEMENTS (ends); k++)
    {
      double x[2] = { 1, ends[k] }, y[2] = { 0.5, 0.4 };
      CamlPlotSeries series = { x, y, 2, "loss", 0, FALSE };
      CamlPlotLineOptions opts = { .integer_x = TRUE, .x_min = 0, .x_max = ends[k] };
      g_autoptr (CamlPlotLine) plot = caml_plot_line_new (&opts, &series, 1, NULL, 0);
      g_autofree char *labels = axis_labels (caml_plot_line_get_x_axis (plot));
      assert_string_equal (labels, expected[k]);
    }

  /* An axis that does not count keeps its exponents. */
  CamlPlotAxis plain;
  caml_plot_axis_linear (&plain, 0.0, 1e6, 6);
  assert_false (plain.counts);
  g_autofree char *million = axis_labels (&plain);
  assert_string_equal (million, "0 2e5 4e5 6e5 8e5 1e6");
}

/* ---------------------------------------------------------- colours --- */

static void
test_colormap_endpoints (void **state)
{
  double rgb[3];

  /* viridis: #440154 → #fde725 */
  caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_VIRIDIS, 0.0, rgb);
  assert_true (fabs (rgb[0] - 0x44 / 255.0) < 0.015 && fabs (rgb[1] - 0x01 / 255.0) < 0.015
               && fabs (rgb[2] - 0x54 / 255.0) < 0.015);
  caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_VIRIDIS, 1.0, rgb);
  assert_true (fabs (rgb[0] - 0xfd / 255.0) < 0.015 && fabs (rgb[1] - 0xe7 / 255.0) < 0.015
               && fabs (rgb[2] - 0x25 / 255.0) < 0.015);
  /* mid point #21918c */
  caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_VIRIDIS, 0.5, rgb);
  assert_true (fabs (rgb[1] - 0x91 / 255.0) < 0.015);

  caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_GREY, 0.0, rgb);
  assert_true (rgb[0] == 0.0 && rgb[1] == 0.0 && rgb[2] == 0.0);
  caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_GREY, 1.0, rgb);
  assert_true (rgb[0] == 1.0 && rgb[1] == 1.0 && rgb[2] == 1.0);
  caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_GREY, 7.0, rgb);  /* clamped */
  assert_true (rgb[0] == 1.0);

  caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_DIVERGING, 0.5, rgb);
  assert_true (rgb[0] == 1.0 && rgb[1] == 1.0 && rgb[2] == 1.0);
  caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_DIVERGING, 0.0, rgb);
  assert_true (rgb[2] > 0.6 && rgb[0] < 0.4);
  caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_DIVERGING, 1.0, rgb);
  assert_true (rgb[0] > 0.6 && rgb[2] < 0.4);

  caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_BLUES, 0.0, rgb);   /* #08306b */
  assert_true (fabs (rgb[0] - 8 / 255.0) < 1e-9 && fabs (rgb[1] - 48 / 255.0) < 1e-9
               && fabs (rgb[2] - 107 / 255.0) < 1e-9);
  caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_BLUES, 1.0, rgb);
  assert_true (rgb[0] == 1.0 && rgb[1] == 1.0 && rgb[2] == 1.0);

  caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_VIRIDIS, NAN, rgb);
  assert_true (isfinite (rgb[0]) && rgb[0] == rgb[1] && rgb[1] == rgb[2]);
}

static void
test_colormap_monotonic (void **state)
{
  static const CamlPlotColormap maps[] = { CAML_PLOT_COLORMAP_VIRIDIS, CAML_PLOT_COLORMAP_GREY };

  for (size_t m = 0; m < G_N_ELEMENTS (maps); m++)
    {
      double prev = -1.0;
      for (int i = 0; i <= 200; i++)
        {
          double rgb[3];
          caml_plot_colormap_rgb (maps[m], i / 200.0, rgb);
          for (int k = 0; k < 3; k++)
            assert_true (rgb[k] >= 0.0 && rgb[k] <= 1.0);
          double l = luminance (rgb);
          assert_true (l > prev);
          prev = l;
        }
    }

  /* diverging: lightest in the middle, darker towards both ends */
  double rgb[3], l_mid, l_end;
  caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_DIVERGING, 0.5, rgb);
  l_mid = luminance (rgb);
  caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_DIVERGING, 0.1, rgb);
  l_end = luminance (rgb);
  assert_true (l_end < l_mid);
}

static void
test_normalize (void **state)
{
  double in[] = { 1.0, 2.0, 3.0, NAN, 10.0, -5.0, INFINITY };
  double out[G_N_ELEMENTS (in)];

  caml_plot_normalize (out, in, G_N_ELEMENTS (in), 1.0, 3.0);
  assert_true (out[0] == 0.0 && out[1] == 0.5 && out[2] == 1.0);
  assert_true (isnan (out[3]) && isnan (out[6]));
  assert_true (out[4] == 1.0 && out[5] == 0.0);  /* clamped */

  /* constant data: every finite value at 0.5, no division by zero */
  double flat[] = { 4.0, 4.0, NAN, 4.0 };
  caml_plot_normalize (flat, flat, 4, 4.0, 4.0);
  assert_true (flat[0] == 0.5 && flat[1] == 0.5 && isnan (flat[2]) && flat[3] == 0.5);
  double one = 2.0;
  caml_plot_normalize (&one, &one, 1, NAN, NAN);
  assert_true (one == 0.5);
}

/* ------------------------------------------------------------ smoothing --- */

static void
test_ema (void **state)
{
  double step[] = { 0.0, 1.0, 1.0, 1.0 };
  double out[4];

  caml_plot_ema (out, step, 4, 0.0);
  assert_memory_equal (out, step, sizeof step);

  caml_plot_ema (out, step, 4, 0.5);
  assert_true (out[0] == 0.0 && out[1] == 0.5 && out[2] == 0.75 && out[3] == 0.875);

  double flat[] = { 3.0, 3.0, 3.0, 3.0, 3.0 };
  double sm[5];
  caml_plot_ema (sm, flat, 5, 0.9);
  for (int i = 0; i < 5; i++)
    assert_true (fabs (sm[i] - 3.0) < 1e-12);

  /* a NaN leaves a gap and does not poison what follows */
  double gap[] = { 2.0, NAN, 4.0 };
  caml_plot_ema (gap, gap, 3, 0.5);
  assert_true (gap[0] == 2.0 && isnan (gap[1]) && gap[2] == 3.0);
}

/* The log-space average: the geometric mean's trend, so 1 and 100 average
 * to 10 (not 50.5); a loss of 0 has no log and is a gap. */
static void
test_ema_log (void **state)
{
  (void) state;
  double decades[] = { 1.0, 100.0, 1e-3 };
  double out[3];
  caml_plot_ema_log (out, decades, 3, 0.5);
  assert_true (fabs (out[0] - 1.0) < 1e-12);
  assert_true (fabs (out[1] - 10.0) < 1e-9);
  assert_true (fabs (out[2] - 1e-1) < 1e-13);

  double gap[] = { 4.0, 0.0, NAN, -1.0, 1.0 };
  caml_plot_ema_log (gap, gap, 5, 0.5);
  assert_true (gap[0] == 4.0 && isnan (gap[1]) && isnan (gap[2]) && isnan (gap[3]));
  assert_true (fabs (gap[4] - 2.0) < 1e-12);
}

/* ------------------------------------------------------------ contours --- */

static double *
cone (int n)
{
  double *v = g_new (double, n * n);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++)
      {
        double x = -1.0 + 2.0 * i / (n - 1), y = -1.0 + 2.0 * j / (n - 1);
        v[j * n + i] = x * x + y * y;
      }
  return v;
}

static void
test_contours_cone (void **state)
{
  enum { N = 41 };
  g_autofree double *v = cone (N);
  double levels[] = { 0.25, 0.64 };
  size_t n = 0;
  g_autofree CamlPlotSegment *segs = caml_plot_contours (v, N, N, -1.0, 1.0, -1.0, 1.0,
                                                         levels, 2, &n);
  size_t per_level[2] = { 0, 0 };

  assert_non_null (segs);
  for (size_t k = 0; k < n; k++)
    {
      double r = sqrt (levels[segs[k].level]);
      double r0 = hypot (segs[k].x0, segs[k].y0), r1 = hypot (segs[k].x1, segs[k].y1);
      assert_true (fabs (r0 - r) < 0.005);
      assert_true (fabs (r1 - r) < 0.005);
      per_level[segs[k].level]++;
    }
  /* closed circles: many short segments, the bigger circle has more */
  assert_true (per_level[0] > 30);
  assert_true (per_level[1] > per_level[0]);

  /* a level outside the field gives nothing */
  double outside = 5.0;
  size_t n_out = 99;
  assert_null (caml_plot_contours (v, N, N, -1.0, 1.0, -1.0, 1.0, &outside, 1, &n_out));
  assert_int_equal (n_out, 0);
}

static void
test_contours_plane_and_nan (void **state)
{
  enum { NX = 5, NY = 4 };
  double v[NX * NY];
  for (int j = 0; j < NY; j++)
    for (int i = 0; i < NX; i++)
      v[j * NX + i] = i;  /* f = x on [0, 4] × [0, 3] */
  double level = 1.5;
  size_t n = 0;
  g_autofree CamlPlotSegment *segs = caml_plot_contours (v, NX, NY, 0.0, 4.0, 0.0, 3.0,
                                                         &level, 1, &n);
  assert_int_equal (n, NY - 1);  /* one vertical segment per cell row */
  for (size_t k = 0; k < n; k++)
    assert_true (fabs (segs[k].x0 - 1.5) < 1e-12 && fabs (segs[k].x1 - 1.5) < 1e-12
                 && fabs (fabs (segs[k].y1 - segs[k].y0) - 1.0) < 1e-12);

  /* a NaN corner removes the two cells that touch it on that column pair */
  v[1 * NX + 1] = NAN;
  size_t n_nan = 0;
  g_autofree CamlPlotSegment *segs2 = caml_plot_contours (v, NX, NY, 0.0, 4.0, 0.0, 3.0,
                                                          &level, 1, &n_nan);
  assert_int_equal (n_nan, NY - 3);
}

static void
test_contours_saddle (void **state)
{
  /* one cell, high corners on a diagonal: two separate segments */
  double v[] = { 1.0, 0.0, 0.0, 1.0 };  /* row 0: (0,0)=1 (1,0)=0; row 1: (0,1)=0 (1,1)=1 */
  double level = 0.5;
  size_t n = 0;
  g_autofree CamlPlotSegment *segs = caml_plot_contours (v, 2, 2, 0.0, 1.0, 0.0, 1.0,
                                                         &level, 1, &n);
  assert_int_equal (n, 2);
  for (size_t k = 0; k < n; k++)
    {
      /* each segment joins two edge midpoints */
      assert_true (fabs (fabs (segs[k].x1 - segs[k].x0) - 0.5) < 1e-12);
      assert_true (fabs (fabs (segs[k].y1 - segs[k].y0) - 0.5) < 1e-12);
    }
}

/* ------------------------------------------------------------- heatmap --- */

static void
test_heatmap_ranges (void **state)
{
  enum { N = 21 };
  g_autofree double *v = cone (N);
  CamlPlotHeatmapOptions opts = { .colormap = CAML_PLOT_COLORMAP_VIRIDIS, .n_contours = 6 };
  double vmin, vmax;
  int n_levels;

  g_autoptr (CamlPlotHeatmap) automatic = caml_plot_heatmap_new (&opts, v, N, N, -1, 1, -1, 1,
                                                                 NULL, NULL, NULL, 0);
  caml_plot_heatmap_get_range (automatic, &vmin, &vmax);
  assert_true (vmin == 0.0 && vmax == 2.0);
  const double *levels = caml_plot_heatmap_get_levels (automatic, &n_levels);
  assert_in_range (n_levels, 3, 8);
  for (int i = 0; i < n_levels; i++)
    assert_true (levels[i] > vmin && levels[i] < vmax);
  size_t n_segments;
  assert_non_null (caml_plot_heatmap_get_segments (automatic, &n_segments));
  assert_true (n_segments > 0);

  opts.fixed_range = TRUE;
  opts.vmin = -1.0;
  opts.vmax = 5.0;
  g_autoptr (CamlPlotHeatmap) fixed = caml_plot_heatmap_new (&opts, v, N, N, -1, 1, -1, 1,
                                                             NULL, NULL, NULL, 0);
  caml_plot_heatmap_get_range (fixed, &vmin, &vmax);
  assert_true (vmin == -1.0 && vmax == 5.0);

  double flat[9] = { 7, 7, 7, 7, 7, 7, 7, 7, 7 };
  g_autoptr (CamlPlotHeatmap) constant = caml_plot_heatmap_new (NULL, flat, 3, 3, 0, 1, 0, 1,
                                                                NULL, NULL, NULL, 0);
  caml_plot_heatmap_get_range (constant, &vmin, &vmax);
  assert_true (vmin < 7.0 && vmax > 7.0);
}

/* ---------------------------------------------------------- rendering --- */

/* Points beyond CAML_PLOT_HEATMAP_MAX_POINTS: an even stride through them
 * is drawn (a million markers took minutes) — the same image as those
 * points alone, here all at (0.5, 0.5) while the others, never drawn, sit
 * at (−0.5, −0.5). */
static cairo_surface_t *
draw_heatmap (const double *v, int n, const double *px, const double *py, size_t n_points)
{
  CamlPlotHeatmapOptions opts = { .colormap = CAML_PLOT_COLORMAP_VIRIDIS,
                                  .marker = CAML_PLOT_MARKER_DOT };
  CamlPlotHeatmap *map = caml_plot_heatmap_new (&opts, v, n, n, -1, 1, -1, 1, px, py, NULL,
                                                n_points);
  cairo_surface_t *img = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 300, 260);
  cairo_t *cr = cairo_create (img);
  caml_plot_heatmap_draw_cb (cr, 300, 260, map);
  cairo_destroy (cr);
  cairo_surface_flush (img);
  caml_plot_heatmap_free (map);
  return img;
}

static gboolean
same_image (cairo_surface_t *a, cairo_surface_t *b)
{
  int stride = cairo_image_surface_get_stride (a);
  return memcmp (cairo_image_surface_get_data (a), cairo_image_surface_get_data (b),
                 (size_t) stride * cairo_image_surface_get_height (a)) == 0;
}

static void
test_heatmap_many_points (void **state)
{
  enum { N = 11, STRIDE = 10, SHOWN = CAML_PLOT_HEATMAP_MAX_POINTS };
  g_autofree double *v = cone (N);
  size_t n = (size_t) STRIDE * SHOWN;
  g_autofree double *px = g_new (double, n), *py = g_new (double, n);
  for (size_t i = 0; i < n; i++)
    px[i] = py[i] = i % STRIDE == 0 ? 0.5 : -0.5;
  g_autofree double *at = g_new (double, SHOWN);
  for (size_t i = 0; i < SHOWN; i++)
    at[i] = 0.5;
  cairo_surface_t *all = draw_heatmap (v, N, px, py, n);
  cairo_surface_t *strided = draw_heatmap (v, N, at, at, SHOWN);   /* those at (0.5, 0.5) */
  at[SHOWN - 1] = -0.5;
  cairo_surface_t *others = draw_heatmap (v, N, at, at, SHOWN);    /* and one at −0.5 */
  assert_true (same_image (all, strided));
  assert_false (same_image (all, others));
  cairo_surface_destroy (all);
  cairo_surface_destroy (strided);
  cairo_surface_destroy (others);
}


static guint
count_colours (cairo_surface_t *img, int x0, int y0, int x1, int y1)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_direct_hash, g_direct_equal);
  unsigned char *data = cairo_image_surface_get_data (img);
  int stride = cairo_image_surface_get_stride (img);

  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      {
        guint32 px = *(guint32 *) (data + (size_t) y * stride + 4 * (size_t) x);
        g_hash_table_add (seen, GUINT_TO_POINTER (px & 0xffffff));
      }
  return g_hash_table_size (seen);
}

typedef struct {
  char *dir;
} RenderFixture;

static int
render_setup (void **state)
{
  RenderFixture *f = g_new0 (RenderFixture, 1);
  f->dir = g_dir_make_tmp ("test-plot-XXXXXX", NULL);
  assert_non_null (f->dir);
  *state = f;
  return 0;
}

static int
render_teardown (void **state)
{
  RenderFixture *f = *state;
  GDir *dir = g_dir_open (f->dir, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (f->dir, name, NULL);
      g_unlink (path);
    }
  if (dir != NULL)
    g_dir_close (dir);
  g_rmdir (f->dir);
  g_free (f->dir);
  g_free (f);
  return 0;
}

static CamlPlotHeatmap *
sample_heatmap (void)
{
  enum { N = 81 };
  g_autofree double *v = g_new (double, N * N);
  double px[40], py[40], pv[40];

  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++)
      {
        double x = -2.0 + 4.0 * i / (N - 1), y = -2.0 + 4.0 * j / (N - 1);
        v[j * N + i] = x * exp (-x * x - y * y);
      }
  for (int k = 0; k < 40; k++)
    {
      px[k] = -1.9 + 3.8 * ((k * 37) % 40) / 39.0;
      py[k] = -1.9 + 3.8 * ((k * 11) % 40) / 39.0;
      pv[k] = px[k] * exp (-px[k] * px[k] - py[k] * py[k]);
    }
  CamlPlotHeatmapOptions opts = {
    .title = "fitted surface", .x_label = "x", .y_label = "y", .value_label = "z",
    .colormap = CAML_PLOT_COLORMAP_VIRIDIS, .n_contours = 8, .colorbar = TRUE,
    .smooth = TRUE, .equal_aspect = TRUE,
  };
  return caml_plot_heatmap_new (&opts, v, N, N, -2.0, 2.0, -2.0, 2.0, px, py, pv, 40);
}

static CamlPlotLine *
sample_line (void)
{
  enum { N = 400 };
  double x[N], train[N], test[N];

  for (int i = 0; i < N; i++)
    {
      x[i] = 2.5 * i;
      train[i] = 0.2 * exp (-i / 80.0) + 0.002 + 0.01 * fabs (sin (i * 1.7)) * exp (-i / 150.0);
      test[i] = 1.3 * train[i] + 0.001;
    }
  train[100] = NAN;  /* a gap */
  CamlPlotSeries series[] = {
    { .x = x, .y = train, .n = N, .label = "train loss", .color = 0 },
    { .x = x, .y = test, .n = N, .label = "test loss", .color = 1, .dashed = TRUE },
  };
  CamlPlotEvent events[] = { { 250.0, "lr 0.05" }, { 600.0, "em_steps 2" } };
  CamlPlotLineOptions opts = {
    .title = "loss", .x_label = "step", .y_label = "mse", .log_y = TRUE,
    .smoothing = 0.6, .show_raw = TRUE, .legend = TRUE, .grid = TRUE,
  };
  return caml_plot_line_new (&opts, series, 2, events, 2);
}

static void
test_render_heatmap_png (void **state)
{
  RenderFixture *f = *state;
  g_autofree char *path = g_build_filename (f->dir, "surface.png", NULL);
  g_autoptr (CamlPlotHeatmap) plot = sample_heatmap ();
  g_autoptr (GError) error = NULL;

  assert_true (caml_plot_write_png (path, 640, 480, caml_plot_heatmap_draw_cb, plot, &error));
  assert_null (error);

  cairo_surface_t *img = load_png (path, 640, 480);
  /* the middle of the figure is inside the field: a smooth colour surface */
  assert_true (count_colours (img, 220, 140, 420, 340) > 200);
  /* the corner is background: white */
  assert_int_equal (count_colours (img, 0, 0, 4, 4), 1);
  guint32 corner = *(guint32 *) cairo_image_surface_get_data (img);
  assert_int_equal (corner & 0xffffff, 0xffffff);
  cairo_surface_destroy (img);
}

static void
test_render_line_png (void **state)
{
  RenderFixture *f = *state;
  g_autofree char *path = g_build_filename (f->dir, "loss.png", NULL);
  g_autoptr (CamlPlotLine) plot = sample_line ();
  g_autoptr (GError) error = NULL;

  assert_true (caml_plot_write_png (path, 640, 480, caml_plot_line_draw_cb, plot, &error));
  assert_null (error);

  cairo_surface_t *img = load_png (path, 640, 480);
  /* two coloured curves, grid, text, anti-aliasing: far from uniform */
  assert_true (count_colours (img, 0, 0, 640, 480) > 50);
  cairo_surface_destroy (img);

  /* the smoothed values are what gets drawn */
  size_t n;
  const double *y = caml_plot_line_get_values (plot, 0, &n);
  assert_int_equal (n, 400);
  assert_true (isnan (y[100]) && isfinite (y[101]));
  assert_true (caml_plot_line_get_y_axis (plot)->log);
}

/* Draws a one-series line plot (no legend, grid or smoothing) into a white
 * 600 × 300 image; *frame gets its data area. */
static cairo_surface_t *
draw_one_series (const double *x, const double *y, size_t n, CamlPlotRect *frame,
                 CamlPlotLine **plot_out)
{
  CamlPlotSeries series = { .x = x, .y = y, .n = n, .label = "s", .color = 0 };
  CamlPlotLineOptions opts = { .title = "t" };
  CamlPlotLine *plot = caml_plot_line_new (&opts, &series, 1, NULL, 0);
  cairo_surface_t *img = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 600, 300);
  cairo_t *cr = cairo_create (img);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  caml_plot_line_draw (plot, cr, 600, 300, frame);
  cairo_destroy (cr);
  cairo_surface_flush (img);
  if (plot_out != NULL)
    *plot_out = plot;
  else
    caml_plot_line_free (plot);
  return img;
}

/* A long series is drawn from a few points per pixel column (first, lowest,
 * highest, last): 200,000 points of a smooth curve look like 500 samples of
 * it, and a one-point spike among 200,000 still shows. */
static void
test_line_decimation (void **state)
{
  (void) state;
  enum { DENSE = 200000, SPARSE = 500 };
  double *x = g_new (double, DENSE), *y = g_new (double, DENSE);
  for (int i = 0; i < DENSE; i++)
    {
      x[i] = 1000.0 * i / (DENSE - 1);
      y[i] = 0.5 + 0.4 * sin (x[i] / 60.0);
    }
  double xs[SPARSE], ys[SPARSE];
  for (int i = 0; i < SPARSE; i++)
    {
      xs[i] = 1000.0 * i / (SPARSE - 1);
      ys[i] = 0.5 + 0.4 * sin (xs[i] / 60.0);
    }
  CamlPlotRect frame;
  cairo_surface_t *a = draw_one_series (x, y, DENSE, &frame, NULL);
  cairo_surface_t *b = draw_one_series (xs, ys, SPARSE, NULL, NULL);
  const unsigned char *pa = cairo_image_surface_get_data (a);
  const unsigned char *pb = cairo_image_surface_get_data (b);
  int stride = cairo_image_surface_get_stride (a), differ = 0, inked = 0;
  for (int r = 0; r < 300; r++)
    for (int c = 0; c < 600; c++)
      {
        const unsigned char *qa = pa + r * stride + 4 * c, *qb = pb + r * stride + 4 * c;
        int d = 0;
        for (int k = 0; k < 3; k++)
          d = MAX (d, abs (qa[k] - qb[k]));
        differ += d > 96;
        inked += qa[0] < 128 || qa[1] < 128 || qa[2] < 128;
      }
  assert_true (inked > 1000);
  assert_true (differ < 60);   /* a few anti-aliased edge pixels */
  cairo_surface_destroy (a);
  cairo_surface_destroy (b);

  /* The spike: one point at 0.9 in a flat line at 0.1 (and 0 and 1 at the
   * ends to fix the axis). Its column is inked near the top of the line. */
  for (int i = 0; i < DENSE; i++)
    y[i] = 0.1;
  y[0] = 0.0;
  y[DENSE - 1] = 1.0;
  y[DENSE / 2 + 7] = 0.9;
  CamlPlotLine *plot;
  cairo_surface_t *img = draw_one_series (x, y, DENSE, &frame, &plot);
  double px = caml_plot_axis_map (caml_plot_line_get_x_axis (plot), x[DENSE / 2 + 7],
                                  frame.x, frame.x + frame.width);
  double py = caml_plot_axis_map (caml_plot_line_get_y_axis (plot), 0.85,
                                  frame.y + frame.height, frame.y);
  const unsigned char *p = cairo_image_surface_get_data (img);
  stride = cairo_image_surface_get_stride (img);
  int col = (int) px, row = (int) py, dark = 0;
  for (int c = col - 1; c <= col + 1; c++)
    {
      const unsigned char *q = p + row * stride + 4 * c;
      dark += q[0] < 200 || q[1] < 200 || q[2] < 200;
    }
  assert_true (dark > 0);
  cairo_surface_destroy (img);
  caml_plot_line_free (plot);
  g_free (x);
  g_free (y);
}

/* A tile grid: each value lands on its pixel through the colormap, gaps are
 * white, groups get wider gaps. */
static void
test_tiles (void **state)
{
  RenderFixture *f = *state;
  enum { H = 3, W = 4, COUNT = 5 };
  float tiles[COUNT * H * W];
  for (int i = 0; i < COUNT * H * W; i++)
    tiles[i] = (float) (i % (H * W)) / (H * W - 1);
  CamlPlotTilesOptions opts = { .colormap = CAML_PLOT_COLORMAP_GREY, .n_cols = 4, .group = 2 };
  g_autoptr (CamlPlotTiles) plot = caml_plot_tiles_new (&opts, tiles, COUNT, H, W);
  int width, height;
  caml_plot_tiles_get_size (plot, &width, &height);
  /* 4 columns of 4 px, 1 px gaps, one 4 px group gap; 2 rows of 3 px + 1 gap. */
  assert_int_equal (width, 4 * 4 + 2 * 1 + 4);
  assert_int_equal (height, 2 * 3 + 1);

  /* Drawn at one pixel per value, without a title, the first tile's first
   * pixel is black and its last white. */
  g_autofree char *path = g_build_filename (f->dir, "tiles.png", NULL);
  g_autoptr (GError) error = NULL;
  assert_true (caml_plot_write_png (path, width + 12, height + 10, caml_plot_tiles_draw_cb,
                                    plot, &error));
  cairo_surface_t *img = load_png (path, width + 12, height + 10);
  unsigned char *data = cairo_image_surface_get_data (img);
  int stride = cairo_image_surface_get_stride (img);
  guint32 first = ((guint32 *) (data + 4 * stride))[6];
  guint32 last = ((guint32 *) (data + (4 + H - 1) * stride))[6 + W - 1];
  guint32 gap = ((guint32 *) (data + 4 * stride))[6 + W];
  assert_int_equal (first & 0xffffff, 0x000000);
  assert_int_equal (last & 0xffffff, 0xffffff);
  assert_int_equal (gap & 0xffffff, 0xffffff);
  cairo_surface_destroy (img);
}

/* Bars: each row's bar as long as its value says, in its colour; the data
 * are copied. */
static void
test_bars (void **state)
{
  RenderFixture *f = *state;
  const char *labels[] = { "superb", "naïve", "<b>", "gap" };
  double values[] = { 0.0, 1.0, 0.5, NAN };
  CamlPlotBarsOptions opts = { .title = "χ̃", .colormap = CAML_PLOT_COLORMAP_BLUES,
                               .vmin = 0.0, .vmax = 1.0 };
  g_autoptr (CamlPlotBars) plot = caml_plot_bars_new (&opts, labels, values, 4);
  values[1] = 0.0;   /* copied: no effect */
  const int width = 400, height = 200;
  g_autofree char *path = g_build_filename (f->dir, "bars.png", NULL);
  g_autoptr (GError) error = NULL;
  assert_true (caml_plot_write_png (path, width, height, caml_plot_bars_draw_cb, plot, &error));

  cairo_surface_t *img = load_png (path, width, height);
  cairo_t *cr = cairo_create (img);
  unsigned char *data = cairo_image_surface_get_data (img);
  int stride = cairo_image_surface_get_stride (img);
  CamlPlotRect r[4];
  for (int i = 0; i < 4; i++)
    caml_plot_bars_row_rect (plot, cr, width, height, i, &r[i]);
  cairo_destroy (cr);
  for (int i = 1; i < 4; i++)   /* rows top to bottom, the same bar span */
    assert_true (r[i].y > r[i - 1].y && r[i].x == r[0].x && r[i].width == r[0].width);
  /* Row 2 (0.5): mid-blue in its first half, white past its end; row 0
   * (0.0) has no length. */
  double rgb[3];
  caml_plot_colormap_rgb (CAML_PLOT_COLORMAP_BLUES, 0.5, rgb);
  guint32 want = ((guint32) lround (rgb[0] * 255) << 16) | ((guint32) lround (rgb[1] * 255) << 8)
                 | (guint32) lround (rgb[2] * 255);
  int y2 = (int) (r[2].y + r[2].height / 2);
  guint32 inside = ((guint32 *) (data + y2 * stride))[(int) (r[2].x + 0.25 * r[2].width)];
  guint32 past = ((guint32 *) (data + y2 * stride))[(int) (r[2].x + 0.75 * r[2].width)];
  for (int c = 0; c < 3; c++)   /* within one step of rounding per channel */
    assert_true (abs ((int) ((inside >> (8 * c)) & 0xff) - (int) ((want >> (8 * c)) & 0xff)) <= 1);
  assert_int_equal (past & 0xffffff, 0xffffff);
  int y0 = (int) (r[0].y + r[0].height / 2);
  assert_int_equal (((guint32 *) (data + y0 * stride))[(int) (r[0].x + 0.5 * r[0].width)]
                    & 0xffffff, 0xffffff);
  cairo_surface_destroy (img);
}

/* A panel with cell_aspect picks its grid for the figure: four maps in one
 * row when that is about as good (a wide, short view), in 2 × 2 — never
 * 3 + 1 — when rows give them clearly more room; n_cols is kept without. */
static void
test_panel_fit (void **state)
{
  (void) state;
  CamlPlotPanelCell cells[4] = { { NULL, NULL } };
  CamlPlotPanel panel = { .cells = cells, .n_cells = 4, .n_cols = 4, .cell_aspect = 1.2 };
  CamlPlotRect r;

  caml_plot_panel_cell_rect (&panel, 890, 370, 3, &r);   /* one row */
  assert_true (r.y == 0 && fabs (r.x - 667.5) < 1e-9 && fabs (r.height - 370) < 1e-9);
  caml_plot_panel_cell_rect (&panel, 890, 560, 2, &r);   /* 2 × 2 */
  assert_true (r.x == 0 && fabs (r.y - 280) < 1e-9 && fabs (r.width - 445) < 1e-9);
  caml_plot_panel_cell_rect (&panel, 300, 1200, 3, &r);  /* a tall, narrow view: a column */
  assert_true (r.x == 0 && fabs (r.y - 900) < 1e-9);
  for (int w = 200; w <= 1600; w += 100)                 /* no grid leaves a row two short */
    for (int h = 150; h <= 1200; h += 50)
      {
        caml_plot_panel_cell_rect (&panel, w, h, 0, &r);
        int cols = (int) lround (w / r.width);
        assert_true (cols == 4 || cols == 2 || cols == 1);
      }
  panel.cell_aspect = 0;
  caml_plot_panel_cell_rect (&panel, 890, 560, 3, &r);   /* as asked: one row of 4 */
  assert_true (r.y == 0 && fabs (r.x - 667.5) < 1e-9);
}

static void
test_render_panel_and_svg (void **state)
{
  RenderFixture *f = *state;
  g_autofree char *png = g_build_filename (f->dir, "panel.png", NULL);
  g_autofree char *svg = g_build_filename (f->dir, "panel.svg", NULL);
  g_autoptr (CamlPlotHeatmap) a = sample_heatmap ();
  g_autoptr (CamlPlotLine) b = sample_line ();
  g_autoptr (GError) error = NULL;
  CamlPlotPanelCell cells[] = {
    { caml_plot_heatmap_draw_cb, a }, { caml_plot_line_draw_cb, b },
  };
  CamlPlotPanel panel = { .title = "truth | loss", .cells = cells, .n_cells = 2 };

  /* cells tile the figure below the title */
  CamlPlotRect r0, r1;
  caml_plot_panel_cell_rect (&panel, 1200, 500, 0, &r0);
  caml_plot_panel_cell_rect (&panel, 1200, 500, 1, &r1);
  assert_true (r0.x == 0.0 && r0.width == 600.0 && r1.x == 600.0);
  assert_true (r0.y > 0.0 && r0.y + r0.height == 500.0 && r1.y == r0.y);

  assert_true (caml_plot_write_png (png, 1200, 500, caml_plot_panel_draw_cb, &panel, &error));
  cairo_surface_t *img = load_png (png, 1200, 500);
  assert_true (count_colours (img, 0, 0, 600, 500) > 200);
  assert_true (count_colours (img, 600, 0, 1200, 500) > 30);
  cairo_surface_destroy (img);

  assert_true (caml_plot_write_svg (svg, 1200, 500, caml_plot_panel_draw_cb, &panel, &error));
  assert_null (error);
  g_autofree char *contents = NULL;
  gsize length = 0;
  assert_true (g_file_get_contents (svg, &contents, &length, NULL));
  assert_non_null (strstr (contents, "<svg"));
  assert_true (length > 1000);
}

static void
test_write_errors (void **state)
{
  RenderFixture *f = *state;
  g_autofree char *missing = g_build_filename (f->dir, "no-such-dir", "x.png", NULL);
  g_autofree char *path = g_build_filename (f->dir, "bad.png", NULL);
  g_autoptr (CamlPlotLine) plot = caml_plot_line_new (NULL, NULL, 0, NULL, 0);
  GError *error = NULL;

  /* an empty plot still draws (axes only) */
  assert_true (caml_plot_write_png (path, 320, 240, caml_plot_line_draw_cb, plot, &error));
  assert_null (error);

  assert_false (caml_plot_write_png (missing, 320, 240, caml_plot_line_draw_cb, plot, &error));
  assert_non_null (error);
  g_clear_error (&error);

  assert_false (caml_plot_write_png (path, 0, 240, caml_plot_line_draw_cb, plot, &error));
  assert_true (g_error_matches (error, CAML_PLOT_ERROR, CAML_PLOT_ERROR_RENDER));
  g_clear_error (&error);
}

/* Left half opaque red, right half half-transparent blue (painted with
 * SOURCE over the white background). */
static void
draw_halves (cairo_t *cr, double width, double height, gpointer user_data)
{
  (void) user_data;
  cairo_set_source_rgb (cr, 1.0, 0.0, 0.0);
  cairo_rectangle (cr, 0, 0, width / 2, height);
  cairo_fill (cr);
  cairo_set_operator (cr, CAIRO_OPERATOR_SOURCE);
  cairo_set_source_rgba (cr, 0.0, 0.0, 1.0, 0.5);
  cairo_rectangle (cr, width / 2, 0, width / 2, height);
  cairo_fill (cr);
}

static void
draw_red (cairo_t *cr, double width, double height, gpointer user_data)
{
  (void) user_data;
  cairo_set_source_rgb (cr, 0.8, 0.2, 0.4);
  cairo_rectangle (cr, 4, 4, width - 8, height - 8);
  cairo_fill (cr);
}

/* The PNG writer's two layouts read back as drawn: an opaque image (RGB)
 * and one with transparency (straight, not premultiplied, RGBA). */
static void
test_png_round_trip (void **state)
{
  RenderFixture *f = *state;
  g_autofree char *opaque = g_build_filename (f->dir, "opaque.png", NULL);
  g_autofree char *halves = g_build_filename (f->dir, "halves.png", NULL);

  assert_true (caml_plot_write_png (opaque, 40, 30, draw_red, NULL, NULL));
  cairo_surface_t *s = cairo_image_surface_create_from_png (opaque);
  assert_int_equal (cairo_surface_status (s), CAIRO_STATUS_SUCCESS);
  assert_int_equal (cairo_image_surface_get_width (s), 40);
  assert_int_equal (cairo_image_surface_get_height (s), 30);
  assert_int_equal (cairo_image_surface_get_format (s), CAIRO_FORMAT_RGB24);
  const uint32_t *row = (const uint32_t *) (cairo_image_surface_get_data (s)
                                            + 15 * cairo_image_surface_get_stride (s));
  assert_int_equal (row[0] & 0xffffff, 0xffffff);            /* the white border */
  assert_int_equal (row[20] & 0xffffff, (204u << 16) | (51u << 8) | 102u);
  cairo_surface_destroy (s);

  assert_true (caml_plot_write_png (halves, 40, 30, draw_halves, NULL, NULL));
  s = cairo_image_surface_create_from_png (halves);
  assert_int_equal (cairo_surface_status (s), CAIRO_STATUS_SUCCESS);
  assert_int_equal (cairo_image_surface_get_format (s), CAIRO_FORMAT_ARGB32);
  row = (const uint32_t *) (cairo_image_surface_get_data (s)
                            + 15 * cairo_image_surface_get_stride (s));
  assert_int_equal (row[5], 0xffff0000u);
  /* Cairo reads back premultiplied: alpha 128 of full blue. */
  uint32_t p = row[30];
  assert_in_range (p >> 24, 127, 128);
  assert_int_equal ((p >> 16) & 0xff, 0);
  assert_int_equal ((p >> 8) & 0xff, 0);
  assert_in_range (p & 0xff, 127, 128);
  cairo_surface_destroy (s);
}

/* ------------------------------------------ what a user test found --- */

/* Renders a line plot into a white width × height image. */
static cairo_surface_t *
render_line (const CamlPlotLine *plot, int width, int height, CamlPlotRect *frame)
{
  cairo_surface_t *img = cairo_image_surface_create (CAIRO_FORMAT_RGB24, width, height);
  cairo_t *cr = cairo_create (img);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  caml_plot_line_draw (plot, cr, width, height, frame);
  cairo_destroy (cr);
  cairo_surface_flush (img);
  return img;
}

/* Pixels of img within 40 (per channel) of rgb, in a rectangle. */
static int
count_near (cairo_surface_t *img, const double rgb[3], int x0, int y0, int x1, int y1)
{
  const unsigned char *data = cairo_image_surface_get_data (img);
  int stride = cairo_image_surface_get_stride (img);
  int w = cairo_image_surface_get_width (img), h = cairo_image_surface_get_height (img);
  int n = 0;

  for (int y = MAX (y0, 0); y < MIN (y1, h); y++)
    for (int x = MAX (x0, 0); x < MIN (x1, w); x++)
      {
        guint32 px = *(const guint32 *) (data + (size_t) y * stride + 4 * (size_t) x);
        int r = (px >> 16) & 0xff, g = (px >> 8) & 0xff, b = px & 0xff;
        n += abs (r - (int) lround (rgb[0] * 255)) <= 40 && abs (g - (int) lround (rgb[1] * 255)) <= 40
             && abs (b - (int) lround (rgb[2] * 255)) <= 40;
      }
  return n;
}

/* A series of one point (the first evaluation) paints a visible marker in
 * its colour, also at the right edge of the plot; so does a sparse one. */
static void
test_single_point_visible (void **state)
{
  (void) state;
  double x[1000], y[1000], ex[1] = { 1000.0 }, ey[1] = { 0.0671 };
  for (int i = 0; i < 1000; i++)
    {
      x[i] = i + 1;
      y[i] = 2.0 * exp (-i / 50.0) + 0.05;
    }
  CamlPlotSeries series[] = {
    { x, y, 1000, "train loss", 0, FALSE },
    { ex, ey, 1, "test loss", 1, FALSE },
  };
  CamlPlotLineOptions opts = { .title = "loss", .x_label = "step", .log_y = TRUE, .grid = TRUE };
  g_autoptr (CamlPlotLine) loss = caml_plot_line_new (&opts, series, 2, NULL, 0);
  CamlPlotRect frame;
  cairo_surface_t *img = render_line (loss, 560, 400, &frame);
  double rgb[3];
  caml_plot_line_get_series_rgb (loss, 1, rgb);
  double py = caml_plot_axis_map (caml_plot_line_get_y_axis (loss), 0.0671,
                                  frame.y + frame.height, frame.y);
  int px = (int) (frame.x + frame.width);
  assert_true (count_near (img, rgb, px - 8, (int) py - 8, px + 8, (int) py + 8) >= 12);
  cairo_surface_destroy (img);

  /* the accuracy of that evaluation, alone in its plot */
  double acc[1] = { 0.978 };
  CamlPlotSeries one = { ex, acc, 1, "test accuracy", 2, FALSE };
  g_autoptr (CamlPlotLine) accuracy = caml_plot_line_new (NULL, &one, 1, NULL, 0);
  img = render_line (accuracy, 300, 200, &frame);
  caml_plot_line_get_series_rgb (accuracy, 0, rgb);
  assert_true (count_near (img, rgb, (int) frame.x, (int) frame.y,
                           (int) (frame.x + frame.width), (int) (frame.y + frame.height)) >= 12);
  cairo_surface_destroy (img);
}

/* Accuracies and AUCs keep their axis inside [0, 1]; one value gets a range
 * around it there; losses do not go below 0. */
static void
test_bounded_axis (void **state)
{
  (void) state;
  double lo, hi;

  caml_plot_padded_range (0.90, 1.0, &lo, &hi);
  assert_true (lo < 0.90 && hi <= 1.0);
  caml_plot_padded_range (0.0, 0.0, &lo, &hi);      /* AUC at step 0 */
  assert_true (lo >= 0.0 && hi <= 1.0 && hi > lo);
  caml_plot_padded_range (0.978, 0.978, &lo, &hi);
  assert_true (lo < 0.978 && hi >= 0.978 && hi <= 1.0);
  caml_plot_padded_range (0.01, 2.0, &lo, &hi);
  assert_true (lo >= 0.0 && hi > 2.0);
  caml_plot_padded_range (-0.5, 0.5, &lo, &hi);     /* crossing 0: padded */
  assert_true (lo < -0.5 && hi > 0.5);
  caml_plot_padded_range (5.0, 5.0, &lo, &hi);      /* unbounded: ±10 % */
  assert_true (fabs (lo - 4.5) < 1e-12 && fabs (hi - 5.5) < 1e-12);

  double x[3] = { 1000, 2000, 3000 }, acc[3] = { 0.95, 0.98, 0.995 };
  CamlPlotSeries series = { x, acc, 3, "test accuracy", 2, FALSE };
  g_autoptr (CamlPlotLine) plot = caml_plot_line_new (NULL, &series, 1, NULL, 0);
  const CamlPlotAxis *y = caml_plot_line_get_y_axis (plot);
  assert_true (y->hi <= 1.0 && y->lo < 0.95);
  for (int i = 0; i < y->n_ticks; i++)
    assert_true (y->ticks[i] <= 1.0);

  double zero[1] = { 0.0 }, step0[1] = { 0.0 };
  CamlPlotSeries auc = { step0, zero, 1, "AUC", 3, FALSE };
  g_autoptr (CamlPlotLine) auc_plot = caml_plot_line_new (NULL, &auc, 1, NULL, 0);
  y = caml_plot_line_get_y_axis (auc_plot);
  assert_true (y->lo >= 0.0 && y->hi <= 1.0);
  assert_true (caml_plot_line_get_x_axis (auc_plot)->lo >= 0.0);
}

/* A step axis has whole-number ticks, also for a single step. */
static void
test_integer_step_ticks (void **state)
{
  (void) state;
  static const double ends[][2] = { { 1, 1 }, { 1, 2 }, { 1, 5 }, { 3, 9 }, { 0, 100000 } };

  for (size_t k = 0; k < G_N_ELEMENTS (ends); k++)
    {
      double x[2] = { ends[k][0], ends[k][1] }, y[2] = { 0.5, 0.4 };
      CamlPlotSeries series = { x, y, ends[k][0] == ends[k][1] ? 1 : 2, "loss", 0, FALSE };
      g_autoptr (CamlPlotLine) plot = caml_plot_line_new (NULL, &series, 1, NULL, 0);
      const CamlPlotAxis *a = caml_plot_line_get_x_axis (plot);
      assert_true (a->n_ticks >= 1);
      for (int i = 0; i < a->n_ticks; i++)
        {
          char buf[64];
          assert_true (a->ticks[i] == floor (a->ticks[i]));
          caml_plot_axis_tick_label (a, i, buf, sizeof buf);
          assert_null (strchr (buf, '.'));
        }
      assert_true (a->lo <= ends[k][0] && a->hi >= ends[k][1]);
    }

  /* fractional x keep their fractional ticks */
  double fx[2] = { 0.0, 1.0 }, fy[2] = { 1.0, 2.0 };
  CamlPlotSeries frac = { fx, fy, 2, NULL, 0, FALSE };
  fx[1] = 0.5;
  g_autoptr (CamlPlotLine) plot = caml_plot_line_new (NULL, &frac, 1, NULL, 0);
  assert_true (caml_plot_line_get_x_axis (plot)->step < 1.0);
}

/* Leftmost and rightmost columns with dark ink in rows [y0, y1). */
static void
ink_span (cairo_surface_t *img, int y0, int y1, int *left, int *right)
{
  const unsigned char *data = cairo_image_surface_get_data (img);
  int stride = cairo_image_surface_get_stride (img);
  int w = cairo_image_surface_get_width (img);

  *left = w;
  *right = -1;
  for (int y = y0; y < y1; y++)
    for (int x = 0; x < w; x++)
      {
        const unsigned char *q = data + (size_t) y * stride + 4 * (size_t) x;
        if (q[0] < 128 && q[1] < 128 && q[2] < 128)
          {
            *left = MIN (*left, x);
            *right = MAX (*right, x);
          }
      }
}

/* A title wider than the figure is shrunk and shortened, never clipped —
 * one of 200,000 characters too (an experiment's name; shortening one
 * character at a time took an hour). */
static void
test_title_fits (void **state)
{
  RenderFixture *f = *state;
  double v[9] = { 0, 1, 0, 1, 0, 1, 0, 1, 0 };
  g_autofree char *huge = g_strnfill (200000, 'n');
  const char *titles[] = {
    "fitted surface, step 100550, 66 training points",
    "fitted surface, step 100550, 66 training points, and a good deal more to say about it",
    huge,
  };
  for (size_t k = 0; k < G_N_ELEMENTS (titles); k++)
    {
      CamlPlotHeatmapOptions opts = {
        .title = titles[k], .x_label = "x", .y_label = "y", .value_label = "output",
        .colorbar = TRUE, .smooth = TRUE, .equal_aspect = TRUE,
      };
      g_autoptr (CamlPlotHeatmap) map = caml_plot_heatmap_new (&opts, v, 3, 3, 0, 1, 0, 1,
                                                               NULL, NULL, NULL, 0);
      g_autofree char *path = g_build_filename (f->dir, "title.png", NULL);
      assert_true (caml_plot_write_png (path, 330, 300, caml_plot_heatmap_draw_cb, map, NULL));
      cairo_surface_t *img = load_png (path, 330, 300);
      int left, right;
      ink_span (img, 0, 22, &left, &right);    /* the title row, above the frame */
      assert_true (right > left);              /* there is a title */
      assert_true (left >= 2 && right <= 330 - 3);
      cairo_surface_destroy (img);
    }
}

/* The legend goes where it covers no data: with a curve from bottom left
 * to top right, the curve's top-right end stays in its own colour. */
static void
test_legend_avoids_data (void **state)
{
  (void) state;
  double x[50], y[50];
  for (int i = 0; i < 50; i++)
    {
      x[i] = i;
      y[i] = i / 49.0 * 0.8 + 0.1;
    }
  CamlPlotSeries series = { x, y, 50, "foreground / background AUC", 3, FALSE };
  CamlPlotLineOptions opts = { .title = "σ-map AUC", .legend = TRUE, .grid = TRUE };
  g_autoptr (CamlPlotLine) plot = caml_plot_line_new (&opts, &series, 1, NULL, 0);
  CamlPlotRect frame;
  cairo_surface_t *img = render_line (plot, 360, 220, &frame);
  double rgb[3];
  caml_plot_line_get_series_rgb (plot, 0, rgb);
  const CamlPlotAxis *xa = caml_plot_line_get_x_axis (plot), *ya = caml_plot_line_get_y_axis (plot);
  for (int i = 2; i < 48; i += 5)   /* the curve all along, the top-right end too */
    {
      double px = caml_plot_axis_map (xa, x[i], frame.x, frame.x + frame.width);
      double py = caml_plot_axis_map (ya, y[i], frame.y + frame.height, frame.y);
      assert_true (count_near (img, rgb, (int) px - 2, (int) py - 2, (int) px + 3,
                               (int) py + 3) > 0);
    }
  cairo_surface_destroy (img);
}

static gboolean
boxes_meet (const CamlPlotRect *a, const CamlPlotRect *b)
{
  return a->x < b->x + b->width && b->x < a->x + a->width
         && a->y < b->y + b->height && b->y < a->y + a->height;
}

/* Learning-rate change markers on a falling loss curve, whose legend sits
 * in a corner: every label is inside the plot area (its letters clear of
 * the frame's top line), off the legend box and off the other labels, the
 * ones crowded at the right end too. */
static void
test_event_labels_clear (void **state)
{
  (void) state;
  double x[1000], y[1000], tx[5], ty[5];
  for (int i = 0; i < 1000; i++)
    {
      x[i] = i + 1;
      y[i] = 2.3 * exp (-i / 150.0) + 0.05;
    }
  for (int i = 0; i < 5; i++)
    {
      tx[i] = 200 * (i + 1);
      ty[i] = 2.3 * exp (-tx[i] / 150.0) + 0.1;
    }
  CamlPlotSeries series[2] = { { x, y, 1000, "train loss", 0, FALSE },
                               { tx, ty, 5, "test loss", 1, FALSE } };
  CamlPlotEvent events[] = { { 120, "lr 0.05" }, { 880, "lr 0.05" }, { 905, "em 3" },
                             { 990, "lr 0.005 after divergence" } };
  for (int log_y = 0; log_y < 2; log_y++)
    {
      CamlPlotLineOptions opts = { .title = "loss", .x_label = "step", .y_label = "loss",
                                   .log_y = log_y, .legend = TRUE, .grid = TRUE };
      g_autoptr (CamlPlotLine) plot = caml_plot_line_new (&opts, series, 2, events,
                                                          G_N_ELEMENTS (events));
      int sizes[2][2] = { { 900, 260 }, { 1120, 500 } };
      for (int k = 0; k < 2; k++)
        {
          CamlPlotRect frame, legend, labels[G_N_ELEMENTS (events)];
          cairo_surface_t *img = render_line (plot, sizes[k][0], sizes[k][1], &frame);
          cairo_t *cr = cairo_create (img);
          caml_plot_line_event_rects (plot, cr, sizes[k][0], sizes[k][1], &legend, labels);
          cairo_destroy (cr);
          cairo_surface_destroy (img);
          assert_true (legend.width > 0);   /* a box in a corner: the case at hand */
          for (size_t i = 0; i < G_N_ELEMENTS (events); i++)
            {
              const CamlPlotRect *b = &labels[i];
              assert_true (b->width > 0);
              assert_true (b->x >= frame.x && b->x + b->width <= frame.x + frame.width);
              /* below the frame line, which cut the tops of the letters */
              assert_true (b->y >= frame.y + 2.0 && b->y + b->height <= frame.y + frame.height);
              assert_false (boxes_meet (b, &legend));
              for (size_t j = 0; j < i; j++)
                assert_false (boxes_meet (b, &labels[j]));
            }
        }
    }
}

/* A baseline (dashed, labelled, in a main series' colour) is drawn in a
 * hue of its own; an unlabelled dashed companion (raw data) keeps it. */
static void
test_baseline_distinct (void **state)
{
  (void) state;
  double x[200], noisy[200], base[200];
  for (int i = 0; i < 200; i++)
    {
      x[i] = i + 1;
      noisy[i] = 0.5 + 0.3 * ((i * 7919) % 13) / 13.0;
      base[i] = 0.65;
    }
  CamlPlotSeries series[] = {
    { x, noisy, 200, "train loss", 0, FALSE },
    { x, noisy, 200, NULL, 0, TRUE },
    { x, base, 200, "baseline train loss", 0, TRUE },
  };
  g_autoptr (CamlPlotLine) plot = caml_plot_line_new (NULL, series, 3, NULL, 0);
  double main_rgb[3], raw_rgb[3], base_rgb[3];
  caml_plot_line_get_series_rgb (plot, 0, main_rgb);
  caml_plot_line_get_series_rgb (plot, 1, raw_rgb);
  caml_plot_line_get_series_rgb (plot, 2, base_rgb);
  assert_memory_equal (main_rgb, raw_rgb, sizeof main_rgb);
  double d = fabs (main_rgb[0] - base_rgb[0]) + fabs (main_rgb[1] - base_rgb[1])
             + fabs (main_rgb[2] - base_rgb[2]);
  assert_true (d > 0.4);

  /* drawn above the noisy curve: its colour shows all along its line */
  CamlPlotRect frame;
  cairo_surface_t *img = render_line (plot, 600, 300, &frame);
  double py = caml_plot_axis_map (caml_plot_line_get_y_axis (plot), 0.65,
                                  frame.y + frame.height, frame.y);
  int hits = count_near (img, base_rgb, (int) frame.x, (int) py - 2,
                         (int) (frame.x + frame.width), (int) py + 3);
  assert_true (hits > frame.width * 0.4);
  cairo_surface_destroy (img);
}

/* An earlier run (dashed, labelled, in a colour no solid series has) is a
 * backdrop: where it lies on the current curve, the current one shows. */
static void
test_backdrop_under (void **state)
{
  (void) state;
  double x[200], y[200];
  for (int i = 0; i < 200; i++)
    {
      x[i] = i + 1;
      y[i] = 0.5;
    }
  CamlPlotSeries series[] = {
    { x, y, 200, "train loss", 0, FALSE },
    { x, y, 200, "previous run: train loss", 7, TRUE },
  };
  g_autoptr (CamlPlotLine) plot = caml_plot_line_new (NULL, series, 2, NULL, 0);
  double main_rgb[3], prev_rgb[3];
  caml_plot_line_get_series_rgb (plot, 0, main_rgb);
  caml_plot_line_get_series_rgb (plot, 1, prev_rgb);
  double grey[3];
  caml_plot_palette_rgb (7, grey);
  assert_memory_equal (prev_rgb, grey, sizeof grey);   /* its own colour, kept */
  CamlPlotRect frame;
  cairo_surface_t *img = render_line (plot, 600, 300, &frame);
  double py = caml_plot_axis_map (caml_plot_line_get_y_axis (plot), 0.5,
                                  frame.y + frame.height, frame.y);
  int x0 = (int) frame.x + 20, x1 = (int) (frame.x + frame.width) - 20;
  int solid = count_near (img, main_rgb, x0, (int) py - 2, x1, (int) py + 3);
  int dashed = count_near (img, prev_rgb, x0, (int) py - 2, x1, (int) py + 3);
  assert_true (solid > (x1 - x0) * 0.9);
  assert_int_equal (dashed, 0);
  cairo_surface_destroy (img);
}

/* caml rnn-sanity drew each model's test curve (dashed) in another hue than
 * its train curve, as a baseline's: with same_hue it keeps the colour, is
 * drawn dashed and its legend sample too. */
static void
test_same_hue (void **state)
{
  (void) state;
  double x[100], train[100], test[100];
  for (int i = 0; i < 100; i++)
    {
      x[i] = i + 1;
      train[i] = 0.3;
      test[i] = 0.7;
    }
  CamlPlotSeries series[] = {
    { x, train, 100, "LSTM train", 1, FALSE },
    { x, test, 100, "LSTM test", 1, TRUE, TRUE },
  };
  g_autoptr (CamlPlotLine) plot = caml_plot_line_new (NULL, series, 2, NULL, 0);
  double train_rgb[3], test_rgb[3];
  caml_plot_line_get_series_rgb (plot, 0, train_rgb);
  caml_plot_line_get_series_rgb (plot, 1, test_rgb);
  assert_memory_equal (train_rgb, test_rgb, sizeof train_rgb);
  /* dashed: along its line, its colour shows in stretches, not all along */
  CamlPlotRect frame;
  cairo_surface_t *img = render_line (plot, 600, 300, &frame);
  double py = caml_plot_axis_map (caml_plot_line_get_y_axis (plot), 0.7,
                                  frame.y + frame.height, frame.y);
  int columns = 0, x0 = (int) frame.x + 10, x1 = (int) (frame.x + frame.width) - 10;
  for (int px = x0; px < x1; px++)
    columns += count_near (img, test_rgb, px, (int) py - 1, px + 1, (int) py + 2) > 0;
  assert_true (columns > (x1 - x0) * 0.4 && columns < (x1 - x0) * 0.85);
  cairo_surface_destroy (img);

  /* without it, the old rule: a labelled dashed companion is a reference */
  series[1].same_hue = FALSE;
  g_autoptr (CamlPlotLine) reference = caml_plot_line_new (NULL, series, 2, NULL, 0);
  caml_plot_line_get_series_rgb (reference, 1, test_rgb);
  assert_memory_not_equal (train_rgb, test_rgb, sizeof train_rgb);
}

/* A step axis with no data at all (a run that failed before its first step
 * was drawn on 0…1 with ticks 0.2 … 0.8): integer_x keeps whole numbers. */
static void
test_integer_x_without_data (void **state)
{
  (void) state;
  CamlPlotSeries empty = { NULL, NULL, 0, "train loss", 0, FALSE };
  CamlPlotLineOptions opts = { .log_y = TRUE, .legend = TRUE, .grid = TRUE };
  g_autoptr (CamlPlotLine) before = caml_plot_line_new (&opts, &empty, 1, NULL, 0);
  assert_true (caml_plot_line_get_x_axis (before)->step < 1.0);   /* the bug, without it */
  opts.integer_x = TRUE;
  g_autoptr (CamlPlotLine) plot = caml_plot_line_new (&opts, &empty, 1, NULL, 0);
  const CamlPlotAxis *a = caml_plot_line_get_x_axis (plot);
  assert_true (a->n_ticks >= 1);
  for (int i = 0; i < a->n_ticks; i++)
    assert_true (a->ticks[i] == floor (a->ticks[i]));
}

/* A note is drawn in the middle of the plot area, wrapped to fit. */
static void
test_note (void **state)
{
  (void) state;
  CamlPlotSeries empty = { NULL, NULL, 0, "context-aware", 0, FALSE };
  CamlPlotLineOptions opts = { .title = "sweep", .legend = TRUE, .grid = TRUE };
  const char *note = "no run succeeded: the first error was preset surface-ca-nn-1: the "
                     "training set has targets of width 1 but the model's 2 outputs";
  double ink[3] = { 0.2, 0.2, 0.2 };
  for (int with = 0; with <= 1; with++)
    {
      opts.note = with ? note : NULL;
      g_autoptr (CamlPlotLine) plot = caml_plot_line_new (&opts, &empty, 1, NULL, 0);
      CamlPlotRect frame;
      cairo_surface_t *img = render_line (plot, 400, 300, &frame);
      int mid = count_near (img, ink, (int) frame.x + 2, (int) (frame.y + 0.25 * frame.height),
                            (int) (frame.x + frame.width) - 2,
                            (int) (frame.y + 0.75 * frame.height));
      int left = count_near (img, ink, (int) frame.x + 2, (int) frame.y + 2,
                             (int) (frame.x + 0.08 * frame.width),
                             (int) (frame.y + frame.height) - 2);
      if (with)
        assert_true (mid > 100);
      else
        assert_int_equal (mid, 0);
      assert_int_equal (left, 0);   /* wrapped within the area, not clipped at its side */
      cairo_surface_destroy (img);
    }
}

/* A failed run's loss plot: the marker's text at the top right was hidden
 * under the legend, which now takes another free corner. */
static void
test_legend_avoids_event_text (void **state)
{
  (void) state;
  double x[] = { 1, 2 }, y[] = { 2.8, 9e11 };
  CamlPlotSeries series = { x, y, 2, "train loss", 0, FALSE };
  CamlPlotEvent event = { 2, "diverged at step 2; rolled back to step 0" };
  CamlPlotLineOptions opts = { .log_y = TRUE, .legend = TRUE, .grid = TRUE,
                               .x_min = 1, .x_max = 2, .integer_x = TRUE };
  g_autoptr (CamlPlotLine) plot = caml_plot_line_new (&opts, &series, 1, &event, 1);
  CamlPlotRect frame;
  cairo_surface_t *img = render_line (plot, 1120, 500, &frame);
  double ink[3] = { 0.3, 0.3, 0.3 };
  /* the text ends left of the marker at the right edge, on the top row,
   * where a legend box at the top right would start */
  int text = count_near (img, ink, (int) (frame.x + frame.width) - 100, (int) frame.y + 9,
                         (int) (frame.x + frame.width), (int) frame.y + 15);
  assert_true (text > 20);
  cairo_surface_destroy (img);
}

/* A σ-map grid exported at its fitted height has no empty band below. */
static void
test_tiles_fit_height (void **state)
{
  RenderFixture *f = *state;
  enum { H = 28, W = 28, COUNT = 24 };
  g_autofree float *tiles = g_new0 (float, COUNT * H * W);   /* black */
  CamlPlotTilesOptions opts = { .title = "images | σ-maps of layer 0, step 518 (13/13)",
                                .colormap = CAML_PLOT_COLORMAP_GREY, .n_cols = 8, .group = 2 };
  g_autoptr (CamlPlotTiles) plot = caml_plot_tiles_new (&opts, tiles, COUNT, H, W);
  const int width = 560;
  int height = caml_plot_tiles_fit_height (plot, width);
  assert_true (height > 100 && height < 500);
  g_autofree char *path = g_build_filename (f->dir, "sigma.png", NULL);
  assert_true (caml_plot_write_png (path, width, height, caml_plot_tiles_draw_cb, plot, NULL));
  cairo_surface_t *img = load_png (path, width, height);
  int left, right;
  ink_span (img, height - 12, height, &left, &right);   /* the last rows of tiles */
  assert_true (right - left > width / 2);
  cairo_surface_destroy (img);
}

/* The green channel of pixel (x, y). */
static int
green_at (cairo_surface_t *img, int x, int y)
{
  const unsigned char *data = cairo_image_surface_get_data (img);
  int stride = cairo_image_surface_get_stride (img);
  return (int) ((const guint32 *) (data + (size_t) y * stride))[x] >> 8 & 0xff;
}

/* A σ-map grid always says what its greys mean: a bar from black to white
 * under the grid (0 … 1, or a stretched range), in the height the grid is
 * fitted to. */
static void
test_tiles_legend (void **state)
{
  RenderFixture *f = *state;
  enum { H = 28, W = 28, COUNT = 32 };
  g_autofree float *tiles = g_new0 (float, COUNT * H * W);   /* black */
  CamlPlotTilesOptions bare = { .colormap = CAML_PLOT_COLORMAP_GREY, .n_cols = 16, .group = 2 };
  CamlPlotTilesOptions opts = bare;
  opts.legend = "χ";
  opts.legend_lo = 0.4;
  opts.legend_hi = 0.8;
  g_autoptr (CamlPlotTiles) without = caml_plot_tiles_new (&bare, tiles, COUNT, H, W);
  g_autoptr (CamlPlotTiles) plot = caml_plot_tiles_new (&opts, tiles, COUNT, H, W);
  const int width = 1200;
  int height = caml_plot_tiles_fit_height (plot, width);
  assert_true (height > caml_plot_tiles_fit_height (without, width) + 20);
  g_autofree char *path = g_build_filename (f->dir, "sigma-legend.png", NULL);
  assert_true (caml_plot_write_png (path, width, height, caml_plot_tiles_draw_cb, plot, NULL));
  cairo_surface_t *img = load_png (path, width, height);
  /* Some row of the band below the grid runs dark → light across the middle. */
  gboolean ramp = FALSE;
  for (int y = height - 60; y < height && !ramp; y++)
    ramp = green_at (img, width / 2 - 100, y) < 60 && green_at (img, width / 2, y) > 100
           && green_at (img, width / 2, y) < 160 && green_at (img, width / 2 + 100, y) > 200;
  assert_true (ramp);
  cairo_surface_destroy (img);
}

/* caml sweep --grid 1.score=bahdanau,luong: the words were read as numbers
 * (both 0) and every point drawn at x = 0 of an unlabelled axis 0…1. Words
 * are categories: evenly spaced ticks labelled with them; numbers stay
 * numbers. */
static void
test_categorical_x (void **state)
{
  RenderFixture *f = *state;
  const char *words[] = { "bahdanau", "luong" };
  const char *numbers[] = { "3", "0.5", "1e-3" };
  const char *mixed[] = { "3", "3x" };
  const char *odd[] = { "", "nan" };
  double v[3] = { 0 };
  assert_false (caml_plot_parse_numbers (words, 2, v));
  assert_false (caml_plot_parse_numbers (mixed, 2, v));
  assert_false (caml_plot_parse_numbers (odd, 1, v));
  assert_false (caml_plot_parse_numbers (odd + 1, 1, v));
  assert_true (caml_plot_parse_numbers (numbers, 3, v));
  assert_true (v[0] == 3.0 && v[1] == 0.5 && fabs (v[2] - 1e-3) < 1e-12);

  double xs[] = { 0, 1 }, ys[] = { 0.81, 0.83 }, base[] = { 0.79, 0.80 };
  CamlPlotSeries series[] = {
    { xs, ys, 2, "context-aware", 0, FALSE },
    { xs, base, 2, "baseline", 0, TRUE },
  };
  CamlPlotLineOptions opts = {
    .title = "sst: test_accuracy by 1.score", .x_label = "1.score",
    .y_label = "test_accuracy", .legend = TRUE, .grid = TRUE,
    .x_categories = words, .n_x_categories = 2,
  };
  g_autoptr (CamlPlotLine) plot = caml_plot_line_new (&opts, series, 2, NULL, 0);
  const CamlPlotAxis *x = caml_plot_line_get_x_axis (plot);
  assert_int_equal (x->n_ticks, 2);
  assert_true (x->ticks[0] == 0.0 && x->ticks[1] == 1.0);
  assert_true (x->lo < 0.0 && x->hi > 1.0);   /* room either side */
  assert_string_equal (caml_plot_line_get_x_tick_label (plot, 0), "bahdanau");
  assert_string_equal (caml_plot_line_get_x_tick_label (plot, 1), "luong");
  g_autofree char *path = g_build_filename (f->dir, "categories.png", NULL);
  assert_true (caml_plot_write_png (path, 900, 560, caml_plot_line_draw_cb, plot, NULL));

  /* A numeric axis has no tick labels of its own. */
  CamlPlotLineOptions plain = { .title = "t" };
  g_autoptr (CamlPlotLine) numeric = caml_plot_line_new (&plain, series, 1, NULL, 0);
  assert_null (caml_plot_line_get_x_tick_label (numeric, 0));
}

/* Plots drawn from several threads at once (the workbench's plot worker, a
 * words page written on another, an export on the main thread) are drawn
 * one at a time, and their text uses the plots' own font options, so that
 * no Cairo scaled font is ever used by two threads (cairo 1.16 aborts now
 * and then when one is: caml-plot.c, "Plots and threads"). */
typedef struct {
  CamlPlotLine *line;
  const char *dir;
  gint inside;         /* draw functions running now */
  gint most_inside;
  gint wrong_options;  /* text drawn with other font options */
  gint failures;
} Crowd;

static void
crowd_draw (cairo_t *cr, double width, double height, gpointer user_data)
{
  Crowd *crowd = user_data;
  gint now = g_atomic_int_add (&crowd->inside, 1) + 1;
  gint most = g_atomic_int_get (&crowd->most_inside);
  while (now > most && !g_atomic_int_compare_and_exchange (&crowd->most_inside, most, now))
    most = g_atomic_int_get (&crowd->most_inside);

  caml_plot_line_draw (crowd->line, cr, width, height, NULL);
  caml_plot_text (cr, 11, FALSE, width - 8, height - 6, 1.0, 1.0, "hover to read values");
  cairo_font_options_t *options = cairo_font_options_create ();
  cairo_scaled_font_get_font_options (cairo_get_scaled_font (cr), options);
  if (cairo_font_options_get_antialias (options) != CAIRO_ANTIALIAS_GRAY
      || cairo_font_options_get_subpixel_order (options) != CAIRO_SUBPIXEL_ORDER_VBGR)
    g_atomic_int_inc (&crowd->wrong_options);
  cairo_font_options_destroy (options);
  g_usleep (500);   /* long enough for another thread to come in, were it let */
  g_atomic_int_add (&crowd->inside, -1);
}

static gpointer
crowd_thread (gpointer data)
{
  Crowd *crowd = data;
  g_autofree char *png = g_strdup_printf ("%s/%p.png", crowd->dir, (void *) g_thread_self ());
  g_autofree char *svg = g_strdup_printf ("%s/%p.svg", crowd->dir, (void *) g_thread_self ());
  for (int i = 0; i < 8; i++)
    {
      cairo_surface_t *image = caml_plot_draw_image (320 + i, 240, 1 + i % 2, crowd_draw, crowd);
      if (cairo_surface_status (image) != CAIRO_STATUS_SUCCESS
          || cairo_image_surface_get_width (image) != (320 + i) * (1 + i % 2))
        g_atomic_int_inc (&crowd->failures);
      cairo_surface_destroy (image);
      if (!caml_plot_write_png (png, 300, 200, crowd_draw, crowd, NULL)
          || !caml_plot_write_svg (svg, 300, 200, crowd_draw, crowd, NULL))
        g_atomic_int_inc (&crowd->failures);
    }
  return NULL;
}

static void
test_plots_from_threads (void **state)
{
  RenderFixture *f = *state;
  Crowd crowd = { .line = sample_line (), .dir = f->dir };
  GThread *threads[4];

  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("plot", crowd_thread, &crowd);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);
  assert_int_equal (crowd.failures, 0);
  assert_int_equal (crowd.most_inside, 1);
  assert_int_equal (crowd.wrong_options, 0);
  caml_plot_line_free (crowd.line);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_ticks_unit_range),
    cmocka_unit_test (test_ticks_odd_range),
    cmocka_unit_test (test_ticks_negative),
    cmocka_unit_test (test_ticks_degenerate),
    cmocka_unit_test (test_finite_range),
    cmocka_unit_test (test_log_ticks),
    cmocka_unit_test (test_axis_map),
    cmocka_unit_test (test_tick_labels),
    cmocka_unit_test (test_axis_tick_labels),
    cmocka_unit_test (test_count_tick_labels),
    cmocka_unit_test (test_colormap_endpoints),
    cmocka_unit_test (test_colormap_monotonic),
    cmocka_unit_test (test_normalize),
    cmocka_unit_test (test_ema),
    cmocka_unit_test (test_ema_log),
    cmocka_unit_test (test_contours_cone),
    cmocka_unit_test (test_contours_plane_and_nan),
    cmocka_unit_test (test_contours_saddle),
    cmocka_unit_test (test_heatmap_ranges),
    cmocka_unit_test (test_heatmap_many_points),
    cmocka_unit_test_setup_teardown (test_render_heatmap_png, render_setup, render_teardown),
    cmocka_unit_test_setup_teardown (test_render_line_png, render_setup, render_teardown),
    cmocka_unit_test (test_line_decimation),
    cmocka_unit_test_setup_teardown (test_render_panel_and_svg, render_setup, render_teardown),
    cmocka_unit_test (test_panel_fit),
    cmocka_unit_test_setup_teardown (test_tiles, render_setup, render_teardown),
    cmocka_unit_test_setup_teardown (test_bars, render_setup, render_teardown),
    cmocka_unit_test_setup_teardown (test_png_round_trip, render_setup, render_teardown),
    cmocka_unit_test_setup_teardown (test_write_errors, render_setup, render_teardown),
    cmocka_unit_test (test_single_point_visible),
    cmocka_unit_test (test_bounded_axis),
    cmocka_unit_test (test_integer_step_ticks),
    cmocka_unit_test_setup_teardown (test_title_fits, render_setup, render_teardown),
    cmocka_unit_test (test_legend_avoids_data),
    cmocka_unit_test (test_event_labels_clear),
    cmocka_unit_test (test_baseline_distinct),
    cmocka_unit_test (test_backdrop_under),
    cmocka_unit_test (test_same_hue),
    cmocka_unit_test (test_integer_x_without_data),
    cmocka_unit_test (test_note),
    cmocka_unit_test (test_legend_avoids_event_text),
    cmocka_unit_test_setup_teardown (test_tiles_fit_height, render_setup, render_teardown),
    cmocka_unit_test_setup_teardown (test_tiles_legend, render_setup, render_teardown),
    cmocka_unit_test_setup_teardown (test_categorical_x, render_setup, render_teardown),
    cmocka_unit_test_setup_teardown (test_plots_from_threads, render_setup, render_teardown),
  };
  int failed = cmocka_run_group_tests (tests, NULL, NULL);

  /* drop cairo's font caches so leak checkers see only our allocations */
  cairo_debug_reset_static_data ();
#ifdef CAML_HAVE_FONTCONFIG
  FcFini ();
#endif
  return failed;
}
