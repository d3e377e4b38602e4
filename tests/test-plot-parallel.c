/* test-plot-parallel.c — the parallel-coordinates plot (caml-plot-parallel.c)
 * without a display: brushing, its axes' scales and labels, the hit tests
 * against the geometry it draws, the description of a run, and PNGs that
 * show what they should and change with a brush. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <glib/gstdio.h>

#include "caml-plot.h"
#include "plot-png.h"

/* ------------------------------------------------------------ helpers --- */

/* cmocka's assert_float_equal compares floats: too coarse for values. */
#define assert_near(a, b, eps) assert_true (fabs ((a) - (b)) <= (eps))

/* A cr for the text's extents, as a window's hit tests have one. */
static cairo_t *
measuring_cr (void)
{
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (surface);
  cairo_surface_destroy (surface);
  return cr;
}

/* A sweep of 12 runs as the Sweep page will show it: kernel × depth, each
 * point's CA model and its baseline (dashed), their results; run 7 failed
 * (no accuracy, no loss). */
enum { SWEEP_ROWS = 12, SWEEP_AXES = 6 };

typedef struct {
  double kernel[SWEEP_ROWS], depth[SWEEP_ROWS], model[SWEEP_ROWS];
  double accuracy[SWEEP_ROWS], loss[SWEEP_ROWS], seconds[SWEEP_ROWS];
  gboolean dashed[SWEEP_ROWS];
  char *names[SWEEP_ROWS + 1];
} Sweep;

static const char *const models[] = { "CA", "baseline" };

static CamlPlotParallel *
sweep_plot (Sweep *sw)
{
  static const int kernels[3] = { 3, 5, 8 }, depths[3] = { 8, 16, 32 };

  for (int i = 0; i < SWEEP_ROWS; i++)
    {
      int point = i / 2;
      sw->kernel[i] = kernels[point % 3];
      sw->depth[i] = depths[point / 3 + point % 2];
      sw->model[i] = i % 2;
      sw->dashed[i] = i % 2 == 1;
      sw->accuracy[i] = 0.95 + 0.004 * sw->kernel[i] - 0.006 * sw->model[i] + 0.0007 * (i % 5);
      sw->loss[i] = 0.18 - 1.6 * (sw->accuracy[i] - 0.95) + 0.002 * (i % 3);
      sw->seconds[i] = 40 + 3.1 * sw->kernel[i] * sw->depth[i] / 8 + 5 * sw->model[i];
      sw->names[i] = g_strdup_printf ("kernel=%g-depth=%g/%s", sw->kernel[i], sw->depth[i],
                                      models[i % 2]);
    }
  sw->names[SWEEP_ROWS] = NULL;
  sw->accuracy[7] = NAN;
  sw->loss[7] = NAN;
  CamlPlotParallelAxis axes[SWEEP_AXES] = {
    { .name = "kernel", .values = sw->kernel, .integer = TRUE },
    { .name = "depth", .values = sw->depth, .integer = TRUE },
    { .name = "model", .values = sw->model, .categories = models, .n_categories = 2 },
    { .name = "test_accuracy", .values = sw->accuracy },
    { .name = "test_loss", .values = sw->loss },
    { .name = "seconds", .values = sw->seconds },
  };
  CamlPlotParallelOptions opts = {
    .title = "sweep: kernel × depth", .color_axis = 3, .dashed = sw->dashed,
    .row_names = (const char *const *) sw->names,
  };
  return caml_plot_parallel_new (&opts, axes, SWEEP_AXES, SWEEP_ROWS);
}

static void
sweep_clear (Sweep *sw)
{
  for (int i = 0; i < SWEEP_ROWS; i++)
    g_free (sw->names[i]);
}

/* Rows i = 0 … n−1 at the values i, 10·i and i / 10 on three axes: lines
 * that never cross, far apart. */
static CamlPlotParallel *
ladder_plot (int n)
{
  g_autofree double *a = g_new (double, n), *b = g_new (double, n), *c = g_new (double, n);
  for (int i = 0; i < n; i++)
    {
      a[i] = i;
      b[i] = 10.0 * i;
      c[i] = i / 10.0;
    }
  CamlPlotParallelAxis axes[] = {
    { .name = "a", .values = a }, { .name = "b", .values = b }, { .name = "c", .values = c },
  };
  return caml_plot_parallel_new (NULL, axes, 3, n);
}

static cairo_surface_t *
write_and_load (CamlPlotParallel *p, const char *path, int width, int height)
{
  g_autoptr (GError) error = NULL;
  assert_true (caml_plot_write_png (path, width, height, caml_plot_parallel_draw_cb, p, &error));
  assert_null (error);
  return load_png (path, width, height);
}

/* Pixels that differ between two images of one size. */
static int
differing_pixels (cairo_surface_t *a, cairo_surface_t *b)
{
  int w = cairo_image_surface_get_width (a), h = cairo_image_surface_get_height (a);
  int stride = cairo_image_surface_get_stride (a), n = 0;
  const unsigned char *da = cairo_image_surface_get_data (a);
  const unsigned char *db = cairo_image_surface_get_data (b);

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      n += *(const guint32 *) (da + (size_t) y * stride + 4 * (size_t) x)
           != *(const guint32 *) (db + (size_t) y * stride + 4 * (size_t) x);
  return n;
}

/* Distinct colours of an image. */
static guint
count_colours (cairo_surface_t *img)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_direct_hash, g_direct_equal);
  const unsigned char *data = cairo_image_surface_get_data (img);
  int stride = cairo_image_surface_get_stride (img);
  int w = cairo_image_surface_get_width (img), h = cairo_image_surface_get_height (img);

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      g_hash_table_add (seen, GUINT_TO_POINTER (
                          *(const guint32 *) (data + (size_t) y * stride + 4 * (size_t) x)
                          & 0xffffff));
  return g_hash_table_size (seen);
}

/* -------------------------------------------------------------- tests --- */

/* A row passes a brush when its value lies in [lo, hi] (either order,
 * ends included, a missing value never); it passes every brushed axis or
 * it is out. */
static void
test_brushing (void **state)
{
  double a[] = { 1.0, 2.0, 3.0, NAN }, b[] = { 10.0, 20.0, 30.0, 40.0 };
  CamlPlotParallelAxis axes[] = { { .name = "a", .values = a }, { .name = "b", .values = b } };
  g_autoptr (CamlPlotParallel) p = caml_plot_parallel_new (NULL, axes, 2, 4);
  double lo = 0.0, hi = 0.0;

  assert_int_equal (caml_plot_parallel_get_n_axes (p), 2);
  assert_int_equal (caml_plot_parallel_get_n_rows (p), 4);
  assert_int_equal (caml_plot_parallel_count_passing (p), 4);
  assert_false (caml_plot_parallel_get_brush (p, 0, &lo, &hi));

  caml_plot_parallel_set_brush (p, 0, 1.5, 3.0);
  assert_true (caml_plot_parallel_get_brush (p, 0, &lo, &hi));
  assert_true (lo == 1.5 && hi == 3.0);
  assert_false (caml_plot_parallel_row_passes (p, 0));
  assert_true (caml_plot_parallel_row_passes (p, 1));
  assert_true (caml_plot_parallel_row_passes (p, 2));   /* the end is in */
  assert_false (caml_plot_parallel_row_passes (p, 3));  /* missing: never */
  assert_int_equal (caml_plot_parallel_count_passing (p), 2);

  /* either order; and with the first, both must hold */
  caml_plot_parallel_set_brush (p, 1, 35.0, 15.0);
  assert_true (caml_plot_parallel_get_brush (p, 1, &lo, &hi));
  assert_true (lo == 15.0 && hi == 35.0);
  assert_int_equal (caml_plot_parallel_count_passing (p), 2);
  caml_plot_parallel_set_brush (p, 1, 45.0, 25.0);
  assert_int_equal (caml_plot_parallel_count_passing (p), 1);
  assert_true (caml_plot_parallel_row_passes (p, 2));

  /* clearing one axis, then all */
  caml_plot_parallel_clear_brush (p, 0);
  assert_false (caml_plot_parallel_get_brush (p, 0, NULL, NULL));
  assert_true (caml_plot_parallel_get_brush (p, 1, NULL, NULL));
  assert_int_equal (caml_plot_parallel_count_passing (p), 2);   /* 30 and 40 */
  assert_true (caml_plot_parallel_row_passes (p, 3));
  caml_plot_parallel_set_brush (p, 0, 2.0, 2.0);                /* one value */
  assert_int_equal (caml_plot_parallel_count_passing (p), 0);
  caml_plot_parallel_clear_brush (p, -1);
  assert_false (caml_plot_parallel_get_brush (p, 0, NULL, NULL));
  assert_false (caml_plot_parallel_get_brush (p, 1, NULL, NULL));
  assert_int_equal (caml_plot_parallel_count_passing (p), 4);

  caml_plot_parallel_set_highlight (p, 2);
  assert_int_equal (caml_plot_parallel_get_highlight (p), 2);
  caml_plot_parallel_set_highlight (p, 9);   /* no such row */
  assert_int_equal (caml_plot_parallel_get_highlight (p), -1);
}

/* axis_at finds the axis at the x that axis_x gives, and reads the value
 * there; nothing between two axes or above them. */
static void
check_axis_round_trip (CamlPlotParallel *p, cairo_t *cr, double w, double h)
{
  int n = caml_plot_parallel_get_n_axes (p);
  for (int k = 0; k < n; k++)
    {
      double x, top, bottom, v = NAN;
      caml_plot_parallel_axis_x (p, cr, w, h, k, &x, &top, &bottom);
      assert_true (top > 0.0 && bottom < h && bottom - top > 50.0);
      assert_true (x > 0.0 && x < w);
      const CamlPlotAxis *axis = caml_plot_parallel_get_axis (p, k);
      double mid = 0.5 * (top + bottom);

      assert_int_equal (caml_plot_parallel_axis_at (p, cr, w, h, x, mid, &v), k);
      assert_near (v, caml_plot_axis_unmap (axis, mid, bottom, top), 1e-9);
      assert_int_equal (caml_plot_parallel_axis_at (p, cr, w, h, x + 8.0, top, &v), k);
      assert_near (v, axis->hi, 1e-9 * fabs (axis->hi) + 1e-12);
      assert_int_equal (caml_plot_parallel_axis_at (p, cr, w, h, x - 8.0, bottom, &v), k);
      assert_near (v, axis->lo, 1e-9 * fabs (axis->lo) + 1e-12);
      /* above the axes (the names) */
      assert_int_equal (caml_plot_parallel_axis_at (p, cr, w, h, x, top - 20.0, NULL), -1);
      if (k + 1 < n)
        {
          double next;
          caml_plot_parallel_axis_x (p, cr, w, h, k + 1, &next, NULL, NULL);
          assert_true (next - x > 30.0);
          assert_int_equal (caml_plot_parallel_axis_at (p, cr, w, h, 0.5 * (x + next), mid,
                                                        NULL), -1);
        }
    }
}

static void
test_axis_at (void **state)
{
  Sweep sw;
  g_autoptr (CamlPlotParallel) p = sweep_plot (&sw);
  cairo_t *cr = measuring_cr ();

  check_axis_round_trip (p, cr, 1200, 600);
  check_axis_round_trip (p, cr, 500, 300);
  cairo_destroy (cr);
  sweep_clear (&sw);
}

/* A point halfway along a row's segment finds that row, unless a brush
 * has made it faint. */
static void
test_row_at (void **state)
{
  g_autoptr (CamlPlotParallel) p = ladder_plot (5);
  cairo_t *cr = measuring_cr ();
  const double w = 800, h = 400;

  for (int r = 0; r < 5; r++)
    for (int k = 0; k < 2; k++)
      {
        double x0, y0, x1, y1;
        caml_plot_parallel_row_point (p, cr, w, h, r, k, &x0, &y0);
        caml_plot_parallel_row_point (p, cr, w, h, r, k + 1, &x1, &y1);
        double mx = 0.5 * (x0 + x1), my = 0.5 * (y0 + y1);
        assert_int_equal (caml_plot_parallel_row_at (p, cr, w, h, mx, my), r);
        assert_int_equal (caml_plot_parallel_row_at (p, cr, w, h, mx, my + 3.0), r);
      }
  /* the lines are far apart: nothing between two */
  double xa, ya, xb, yb;
  caml_plot_parallel_row_point (p, cr, w, h, 1, 0, &xa, &ya);
  caml_plot_parallel_row_point (p, cr, w, h, 2, 0, &xb, &yb);
  assert_true (ya - yb > 30.0);
  assert_int_equal (caml_plot_parallel_row_at (p, cr, w, h, xa + 40.0,
                                               0.5 * (ya + yb)), -1);

  /* brushed out on axis b: row 3 is faint and is not found */
  double x0, y0, x1, y1;
  caml_plot_parallel_row_point (p, cr, w, h, 3, 0, &x0, &y0);
  caml_plot_parallel_row_point (p, cr, w, h, 3, 1, &x1, &y1);
  caml_plot_parallel_set_brush (p, 1, 0.0, 25.0);
  assert_false (caml_plot_parallel_row_passes (p, 3));
  assert_int_equal (caml_plot_parallel_row_at (p, cr, w, h, 0.5 * (x0 + x1),
                                               0.5 * (y0 + y1)), -1);
  caml_plot_parallel_clear_brush (p, 1);
  assert_int_equal (caml_plot_parallel_row_at (p, cr, w, h, 0.5 * (x0 + x1),
                                               0.5 * (y0 + y1)), 3);
  cairo_destroy (cr);
}

static void
test_describe_row (void **state)
{
  double kernel[] = { 5, 3 }, model[] = { 1, 0 }, acc[] = { 0.98712345, NAN };
  double lr[] = { 0.001, 1e-5 }, secs[] = { 123456.0, 12.5 };
  const char *names[] = { "kernel=5/baseline", "kernel=3/ca" };
  CamlPlotParallelAxis axes[] = {
    { .name = "kernel", .values = kernel, .integer = TRUE },
    { .name = "model", .values = model, .categories = models, .n_categories = 2 },
    { .name = "test_accuracy", .values = acc },
    { .name = "lr", .values = lr, .log_scale = TRUE },
    { .name = "seconds", .values = secs },
  };
  CamlPlotParallelOptions opts = { .color_axis = 2, .row_names = names };
  g_autoptr (CamlPlotParallel) p = caml_plot_parallel_new (&opts, axes, 5, 2);
  g_autofree char *first = caml_plot_parallel_describe_row (p, 0);
  g_autofree char *second = caml_plot_parallel_describe_row (p, 1);

  assert_string_equal (first, "kernel=5/baseline: kernel 5 · model baseline · "
                              "test_accuracy 0.9871 · lr 0.001 · seconds 1.235e+05");
  assert_string_equal (second, "kernel=3/ca: kernel 3 · model CA · test_accuracy – · "
                               "lr 1e-05 · seconds 12.5");

  /* without names: the run's number */
  g_autoptr (CamlPlotParallel) unnamed = caml_plot_parallel_new (NULL, axes, 2, 2);
  g_autofree char *plain = caml_plot_parallel_describe_row (unnamed, 1);
  assert_string_equal (plain, "run 2: kernel 3 · model CA");
}

/* A log axis spreads decades evenly; a value <= 0 on it is missing. */
static void
test_log_axis (void **state)
{
  double lr[] = { 1e-4, 1e-3, 1e-2, 1e-1, 0.0 };
  CamlPlotParallelAxis axes[] = { { .name = "learning rate", .values = lr, .log_scale = TRUE },
                                  { .name = "x", .values = lr } };
  g_autoptr (CamlPlotParallel) p = caml_plot_parallel_new (NULL, axes, 2, 5);
  cairo_t *cr = measuring_cr ();
  const double w = 600, h = 400;
  const CamlPlotAxis *axis = caml_plot_parallel_get_axis (p, 0);

  assert_true (axis->log);
  assert_true (axis->lo <= 1e-4 && axis->hi >= 1e-1);
  /* decades, labelled as they are */
  gboolean saw_milli = FALSE;
  for (int i = 0; i < axis->n_ticks; i++)
    saw_milli |= strcmp (caml_plot_parallel_get_tick_label (p, 0, i), "0.001") == 0;
  assert_true (saw_milli);

  double y[4], x, top, bottom, v;
  for (int r = 0; r < 4; r++)
    caml_plot_parallel_row_point (p, cr, w, h, r, 0, &x, &y[r]);
  assert_true (y[0] > y[1] && y[1] > y[2] && y[2] > y[3]);   /* up the axis */
  assert_near (y[0] - y[1], y[1] - y[2], 1e-6);
  assert_near (y[1] - y[2], y[2] - y[3], 1e-6);
  /* halfway between 1e-3 and 1e-2 reads their geometric mean */
  assert_int_equal (caml_plot_parallel_axis_at (p, cr, w, h, x, 0.5 * (y[1] + y[2]), &v), 0);
  assert_near (v, sqrt (1e-5), 1e-9);
  /* 0: the missing slot under the axis; never inside a brush */
  double y_missing;
  caml_plot_parallel_axis_x (p, cr, w, h, 0, NULL, &top, &bottom);
  caml_plot_parallel_row_point (p, cr, w, h, 4, 0, NULL, &y_missing);
  assert_true (y_missing > bottom);
  caml_plot_parallel_set_brush (p, 0, -1.0, 1.0);
  assert_false (caml_plot_parallel_row_passes (p, 4));
  assert_int_equal (caml_plot_parallel_count_passing (p), 4);
  cairo_destroy (cr);
}

/* Categories label their axis, in order, evenly spaced; whole numbers get
 * ticks at their values; an axis of one value a single centred tick. */
static void
test_axis_labels (void **state)
{
  double kind[] = { 0, 1, 2, 1 }, kernel[] = { 3, 5, 8, 5 }, same[] = { 0.25, 0.25, 0.25, 0.25 };
  const char *kinds[] = { "bahdanau", "luong", "general" };
  CamlPlotParallelAxis axes[] = {
    { .name = "attention", .values = kind, .categories = kinds, .n_categories = 3 },
    { .name = "kernel", .values = kernel, .integer = TRUE },
    { .name = "dropout", .values = same },
  };
  g_autoptr (CamlPlotParallel) p = caml_plot_parallel_new (NULL, axes, 3, 4);
  cairo_t *cr = measuring_cr ();
  const double w = 600, h = 400;

  const CamlPlotAxis *cat = caml_plot_parallel_get_axis (p, 0);
  assert_int_equal (cat->n_ticks, 3);
  for (int i = 0; i < 3; i++)
    {
      assert_string_equal (caml_plot_parallel_get_tick_label (p, 0, i), kinds[i]);
      assert_near (cat->ticks[i], i, 0.0);
    }
  double y0, y1, y2, top, bottom;
  caml_plot_parallel_row_point (p, cr, w, h, 0, 0, NULL, &y0);
  caml_plot_parallel_row_point (p, cr, w, h, 1, 0, NULL, &y1);
  caml_plot_parallel_row_point (p, cr, w, h, 2, 0, NULL, &y2);
  assert_true (y0 > y1 && y1 > y2);
  assert_near (y0 - y1, y1 - y2, 1e-6);

  const CamlPlotAxis *k = caml_plot_parallel_get_axis (p, 1);
  assert_int_equal (k->n_ticks, 3);
  assert_string_equal (caml_plot_parallel_get_tick_label (p, 1, 0), "3");
  assert_string_equal (caml_plot_parallel_get_tick_label (p, 1, 1), "5");
  assert_string_equal (caml_plot_parallel_get_tick_label (p, 1, 2), "8");

  const CamlPlotAxis *d = caml_plot_parallel_get_axis (p, 2);
  assert_int_equal (d->n_ticks, 1);
  assert_string_equal (caml_plot_parallel_get_tick_label (p, 2, 0), "0.25");
  caml_plot_parallel_axis_x (p, cr, w, h, 2, NULL, &top, &bottom);
  caml_plot_parallel_row_point (p, cr, w, h, 0, 2, NULL, &y0);
  assert_near (y0, 0.5 * (top + bottom), 0.5);
  cairo_destroy (cr);
}

/* The 12-run sweep as a PNG: drawn (many colours); a brush changes it
 * (faint lines, a band), and so does a highlighted run; an empty chart
 * draws its note. */
static void
test_png (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("test-plot-parallel-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "parallel.png", NULL);
  Sweep sw;
  g_autoptr (CamlPlotParallel) p = sweep_plot (&sw);

  cairo_surface_t *plain = write_and_load (p, path, 1200, 600);
  assert_true (count_colours (plain) > 100);
  caml_plot_parallel_set_brush (p, 3, 0.96, 0.99);   /* test_accuracy */
  int passing = caml_plot_parallel_count_passing (p);
  assert_true (passing > 0 && passing < SWEEP_ROWS);
  cairo_surface_t *brushed = write_and_load (p, path, 1200, 600);
  assert_true (differing_pixels (plain, brushed) > 2000);
  caml_plot_parallel_clear_brush (p, -1);
  caml_plot_parallel_set_highlight (p, 4);
  cairo_surface_t *highlighted = write_and_load (p, path, 1200, 600);
  assert_true (differing_pixels (plain, highlighted) > 1000);
  caml_plot_parallel_set_highlight (p, -1);
  cairo_surface_t *again = write_and_load (p, path, 1200, 600);
  assert_int_equal (differing_pixels (plain, again), 0);
  /* small, as in a window */
  cairo_surface_destroy (write_and_load (p, path, 500, 300));

  double no_values[1] = { 0 };
  CamlPlotParallelAxis axes[] = { { .name = "kernel", .values = no_values },
                                  { .name = "test_accuracy", .values = no_values } };
  CamlPlotParallelOptions quiet = { .title = "sweep", .color_axis = 1 };
  CamlPlotParallelOptions noted = quiet;
  noted.note = "No run has finished yet.";
  g_autoptr (CamlPlotParallel) empty = caml_plot_parallel_new (&quiet, axes, 2, 0);
  g_autoptr (CamlPlotParallel) with_note = caml_plot_parallel_new (&noted, axes, 2, 0);
  cairo_surface_t *e = write_and_load (empty, path, 500, 300);
  cairo_surface_t *n = write_and_load (with_note, path, 500, 300);
  assert_true (count_colours (e) > 1);    /* axes and names */
  assert_true (differing_pixels (e, n) > 200);
  assert_int_equal (caml_plot_parallel_count_passing (empty), 0);

  cairo_surface_destroy (plain);
  cairo_surface_destroy (brushed);
  cairo_surface_destroy (highlighted);
  cairo_surface_destroy (again);
  cairo_surface_destroy (e);
  cairo_surface_destroy (n);
  g_unlink (path);
  g_rmdir (dir);
  sweep_clear (&sw);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_brushing),
    cmocka_unit_test (test_axis_at),
    cmocka_unit_test (test_row_at),
    cmocka_unit_test (test_describe_row),
    cmocka_unit_test (test_log_axis),
    cmocka_unit_test (test_axis_labels),
    cmocka_unit_test (test_png),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
