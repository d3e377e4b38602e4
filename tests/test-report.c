/* test-report.c — the plots `caml train` leaves (studio/figures.c), prepared
 * without writing them: loss.png's panels line up and count steps in whole
 * numbers, a run that diverged is marked where it did, the smoothed train
 * loss follows a fast fall on the log axis, and σ-map tiles show
 * χ as it is or stretched over the maps' own range. */
#include <math.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "caml-plot.h"
#include "figures.h"
#include "report.h"

/* loss.png's figure as caml train builds it: the loss, then for a
 * classification the accuracy. */
static CamlPlotFigure *
loss_figure (const CamlEvalRow *rows, int n_rows, const float *losses, long n_steps,
             const CamlDivergence *divergence, gboolean classification)
{
  CamlFigureLoss loss = {
    .run = { losses, n_steps, rows, n_rows, classification },
    .divergence = divergence, .title = "t", .evaluated_on = "test",
    .smoothing = -1, .detail = CAML_FIGURE_FILE,
  };
  return caml_figure_loss (&loss);
}

static void
assert_whole_ticks (const CamlPlotAxis *a)
{
  assert_true (a->n_ticks >= 1);
  for (int i = 0; i < a->n_ticks; i++)
    {
      char buf[64];
      assert_true (a->ticks[i] == floor (a->ticks[i]));
      caml_plot_axis_tick_label (a, i, buf, sizeof buf);
      assert_null (strchr (buf, '.'));
    }
}

/* n_rows evaluations at steps[] of a run of n_steps: the accuracy panel's
 * x axis is the loss panel's (it spanned 100…300 beside 1…300, and a single
 * evaluation at step 400 got 360…440). */
static void
check_aligned (const long *steps, int n_rows, long n_steps)
{
  g_autofree CamlEvalRow *rows = g_new0 (CamlEvalRow, MAX (n_rows, 1));
  g_autofree float *losses = g_new (float, MAX (n_steps, 1));
  for (int i = 0; i < n_rows; i++)
    {
      rows[i].step = steps[i];
      rows[i].test_loss = 0.5 / (i + 1);
      rows[i].test_metric = 0.8 + 0.01 * i;
    }
  for (long i = 0; i < n_steps; i++)
    losses[i] = 1.0f / (float) (i + 1);
  g_autoptr (CamlPlotFigure) figure = loss_figure (rows, n_rows, losses, n_steps, NULL, TRUE);
  const CamlPlotLine *loss = caml_plot_figure_get_line (figure, 0);
  const CamlPlotLine *accuracy = caml_plot_figure_get_line (figure, 1);
  assert_non_null (accuracy);
  const CamlPlotAxis *lx = caml_plot_line_get_x_axis (loss);
  const CamlPlotAxis *ax = caml_plot_line_get_x_axis (accuracy);
  assert_true (lx->lo == ax->lo && lx->hi == ax->hi);
  assert_int_equal (lx->n_ticks, ax->n_ticks);
  assert_true (lx->lo <= 1.0 && lx->hi >= (double) n_steps);
  assert_whole_ticks (lx);
  assert_whole_ticks (ax);
}

static void
test_panels_aligned (void **state)
{
  (void) state;
  static const long every_100[] = { 100, 200, 300 };
  check_aligned (every_100, 3, 300);
  static const long one[] = { 400 };
  check_aligned (one, 1, 400);
  static const long stopped[] = { 100, 200, 300, 385 };
  check_aligned (stopped, 4, 385);
  static const long first[] = { 1 };
  check_aligned (first, 1, 1);
}

/* A run that failed at step 2 and went back to step 0: the losses it had
 * (step 1's, and the blown-up one of step 2) are drawn, on whole-number
 * steps, with a marker at step 2 saying so. It was an empty chart with
 * ticks 0.2…0.8. */
static void
test_divergence_marked (void **state)
{
  (void) state;
  float losses[] = { 2.81f, 9.22e11f };
  CamlDivergence d = { .kind = CAML_DIVERGED_LOSS, .step = 2, .rolled_back_to = 0, .layer = 1 };
  g_autoptr (CamlPlotFigure) figure = loss_figure (NULL, 0, losses, 2, &d, FALSE);
  assert_int_equal (caml_plot_figure_get_n_plots (figure), 1);
  const CamlPlotLine *loss = caml_plot_figure_get_line (figure, 0);
  const CamlPlotAxis *x = caml_plot_line_get_x_axis (loss);
  assert_whole_ticks (x);
  assert_true (x->lo <= 1.0 && x->hi >= 2.0);
  const CamlPlotAxis *y = caml_plot_line_get_y_axis (loss);
  assert_true (y->lo <= 2.81 && y->hi >= 9.22e11);   /* both losses in view */
  /* the train loss curve holds both steps */
  size_t n = 0;
  const double *v = caml_plot_line_get_values (loss, 0, &n);
  assert_int_equal (n, 2);
  assert_true (isfinite (v[0]) && isfinite (v[1]));

  /* no step at all: still whole numbers */
  CamlDivergence first = { .kind = CAML_DIVERGED_LOSS, .step = 1, .rolled_back_to = 0 };
  g_autoptr (CamlPlotFigure) none = loss_figure (NULL, 0, NULL, 0, &first, FALSE);
  assert_whole_ticks (caml_plot_line_get_x_axis (caml_plot_figure_get_line (none, 0)));
  g_autoptr (CamlPlotFigure) nothing = loss_figure (NULL, 0, NULL, 0, NULL, TRUE);
  assert_whole_ticks (caml_plot_line_get_x_axis (caml_plot_figure_get_line (nothing, 0)));
}

/* A loss falling fast on loss.png's log axis, 1e-1 → 1e-9 over 1000 steps:
 * the bold trend follows it within a small factor to the end, and says it is
 * smoothed. A linear-space average sat ~100× above the raw values. */
static void
test_smoothed_loss_follows_log_axis (void **state)
{
  (void) state;
  enum { N = 1000 };
  g_autofree float *losses = g_new (float, N);
  for (int i = 0; i < N; i++)
    losses[i] = (float) pow (10.0, -1.0 - 8.0 * i / (N - 1));
  g_autoptr (CamlPlotFigure) figure = loss_figure (NULL, 0, losses, N, NULL, FALSE);
  const CamlPlotLine *loss = caml_plot_figure_get_line (figure, 0);
  assert_int_equal (caml_plot_line_get_n_series (loss), 3);
  assert_null (caml_plot_line_get_label (loss, 0));   /* the raw curve, faint */
  assert_string_equal (caml_plot_line_get_label (loss, 1), "train loss (smoothed)");
  size_t n_raw = 0, n = 0;
  const double *raw = caml_plot_line_get_values (loss, 0, &n_raw);
  const double *smooth = caml_plot_line_get_values (loss, 1, &n);
  assert_int_equal (n, N);
  assert_int_equal (n_raw, N);
  /* a trend lags a falling curve (above it), but by a small factor */
  for (size_t i = N - 100; i < N; i++)
    {
      assert_true (smooth[i] >= raw[i]);
      assert_true (smooth[i] < 2.0 * raw[i]);
    }
  assert_true (smooth[N - 1] < 1e-8);

  /* a short run is drawn as it is, and not called smoothed */
  float few[] = { 0.5f, 0.25f, 0.125f };
  g_autoptr (CamlPlotFigure) short_figure = loss_figure (NULL, 0, few, 3, NULL, FALSE);
  const CamlPlotLine *short_run = caml_plot_figure_get_line (short_figure, 0);
  assert_string_equal (caml_plot_line_get_label (short_run, 1), "train loss");
  const double *v = caml_plot_line_get_values (short_run, 1, &n);
  assert_int_equal (n, 3);
  for (int i = 0; i < 3; i++)
    assert_true (fabs (v[i] - few[i]) < 1e-9);
}

/* Two 4×4 images with 2×2 maps (each map pixel covers 2×2 image pixels). */
static CamlSigmaSnapshot *
small_snapshot (const float *maps)
{
  CamlSigmaSnapshot *snap = g_new0 (CamlSigmaSnapshot, 1);
  snap->step = 7;
  snap->count = 2;
  snap->height = snap->width = 4;
  snap->map_h = snap->map_w = 2;
  snap->images = g_new (float, 2 * 16);
  for (int i = 0; i < 32; i++)
    snap->images[i] = (float) i / 31.0f;
  snap->maps = g_memdup2 (maps, 8 * sizeof (float));
  return snap;
}

static void
test_sigma_tiles (void **state)
{
  const float maps[8] = { 0.40f, 0.45f, 0.50f, 0.55f, 0.60f, 0.42f, 0.48f, 0.52f };
  g_autoptr (CamlSigmaSnapshot) snap = small_snapshot (maps);
  CamlSigmaScale scale;

  /* As it is: each image, then its map at the image's size. */
  g_autofree float *plain = caml_sigma_tiles (snap, 2, FALSE, &scale);
  assert_false (scale.stretched);
  assert_true (scale.lo == 0.0 && scale.hi == 1.0);
  for (int t = 0; t < 2; t++)
    {
      assert_memory_equal (plain + 2 * t * 16, snap->images + t * 16, 16 * sizeof (float));
      for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++)
          assert_true (plain[(2 * t + 1) * 16 + y * 4 + x]
                       == maps[t * 4 + (y / 2) * 2 + x / 2]);
    }
  g_autofree char *plain_text = caml_sigma_scale_text (&scale);
  assert_string_equal (plain_text, "χ black 0 … white 1");

  /* Stretched: the 1st and 99th percentiles of the eight values (0.40 and
   * 0.60 here: nearest ranks of 8) become black and white; the images stay. */
  g_autofree float *wide = caml_sigma_tiles (snap, 2, TRUE, &scale);
  assert_true (scale.stretched);
  assert_float_equal (scale.lo, 0.40, 1e-6);
  assert_float_equal (scale.hi, 0.60, 1e-6);
  assert_memory_equal (wide, snap->images, 16 * sizeof (float));
  for (int t = 0; t < 2; t++)
    for (int k = 0; k < 4; k++)
      {
        int y = (k / 2) * 2, x = (k % 2) * 2;
        assert_float_equal (wide[(2 * t + 1) * 16 + y * 4 + x],
                            (maps[t * 4 + k] - 0.40) / 0.20, 1e-5);
      }
  g_autofree char *wide_text = caml_sigma_scale_text (&scale);
  assert_string_equal (wide_text, "χ black 0.4 … white 0.6, stretched");

  /* One outlier among many values does not set the scale; it is clamped. */
  g_autofree float *many = g_new (float, 200 * 4);
  for (int i = 0; i < 800; i++)
    many[i] = 0.45f + 0.1f * (float) (i % 100) / 99.0f;
  many[0] = 0.0f;
  CamlSigmaSnapshot big = { .count = 200, .height = 2, .width = 2, .map_h = 2, .map_w = 2,
                            .images = many, .maps = many };
  g_autofree float *clamped = caml_sigma_tiles (&big, 200, TRUE, &scale);
  assert_true (scale.lo > 0.44 && scale.lo < 0.46);
  assert_true (scale.hi > 0.54 && scale.hi < 0.56);
  assert_true (clamped[4] == 0.0f);                     /* the outlier: black */
  for (int i = 0; i < 200 * 2 * 4; i++)
    assert_true (clamped[i] >= 0.0f && clamped[i] <= 1.0f);

  /* Flat maps get a scale 0.001 wide around their value, printed so that
   * its ends differ. */
  const float flat[8] = { 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f };
  g_autoptr (CamlSigmaSnapshot) level = small_snapshot (flat);
  g_autofree float *level_tiles = caml_sigma_tiles (level, 2, TRUE, &scale);
  assert_true (fabs (scale.hi - scale.lo - 1e-3) < 1e-9);
  assert_float_equal (level_tiles[16], 0.5, 1e-3);
  g_autofree char *level_text = caml_sigma_scale_text (&scale);
  assert_string_equal (level_text, "χ black 0.4995 … white 0.5005, stretched");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_panels_aligned),
    cmocka_unit_test (test_divergence_marked),
    cmocka_unit_test (test_smoothed_loss_follows_log_axis),
    cmocka_unit_test (test_sigma_tiles),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
