/* test-gui-parallel.c — the parallel-coordinates view (ui/caml-parallel-view.c)
 * in a window under Xvfb, on a fixed plot of six runs: brushes through its
 * functions and through its drag gesture, clicks on an axis and on a line,
 * hovering, Escape and a double click, brushes kept across a rebuilt plot,
 * and its PNG. Input is the view's controllers' signals, emitted as GTK
 * would emit them for a pointer or a key.
 *
 * Run by `meson test gui-parallel` through xvfb-run (tests/meson.build). */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <glib/gstdio.h>
#include <gtk/gtk.h>

#include "caml-parallel-view.h"
#include "gui-harness.h"

enum { ROWS = 6 };

/* Six runs: kernel × depth, each with its accuracy; depth 8 scored below
 * depth 16, so no two lines cross between depth and accuracy. With
 * `seconds`, an axis in front of the others and a seventh run: the plot
 * rebuilt as a run finished. Without `kernel`, a sweep that no longer
 * varies it. */
static CamlPlotParallel *
fixed_plot (gboolean seconds, gboolean kernel)
{
  double k[] = { 3, 5, 8, 3, 5, 8, 5 }, d[] = { 8, 8, 8, 16, 16, 16, 32 };
  double acc[] = { 0.90, 0.91, 0.92, 0.93, 0.94, 0.95, 0.96 };
  double secs[] = { 10, 12, 15, 20, 24, 30, 44 };
  const char *names[] = { "k3-d8", "k5-d8", "k8-d8", "k3-d16", "k5-d16", "k8-d16", "k5-d32" };
  CamlPlotParallelAxis axes[4];
  int n = 0;

  if (seconds)
    axes[n++] = (CamlPlotParallelAxis) { .name = "seconds", .values = secs };
  if (kernel)
    axes[n++] = (CamlPlotParallelAxis) { .name = "kernel", .values = k, .integer = TRUE };
  axes[n++] = (CamlPlotParallelAxis) { .name = "depth", .values = d, .integer = TRUE };
  axes[n++] = (CamlPlotParallelAxis) { .name = "test_accuracy", .values = acc };
  CamlPlotParallelOptions opts = { .title = "sweep", .color_axis = n - 1, .row_names = names };
  return caml_plot_parallel_new (&opts, axes, n, seconds ? ROWS + 1 : ROWS);
}

typedef struct {
  int brush_changes;
  int last_axis;
  int activations;
  int last_row;
} Heard;

static void
on_brush_changed (CamlParallelView *view, int axis, Heard *heard)
{
  heard->brush_changes++;
  heard->last_axis = axis;
}

static void
on_row_activated (CamlParallelView *view, int row, Heard *heard)
{
  heard->activations++;
  heard->last_row = row;
}

typedef struct {
  GtkWindow *window;
  CamlParallelView *view;
  cairo_t *cr;            /* for the plot's geometry (its text's extents) */
  double width, height;
  Heard heard;            /* what the view said */
} Shown;

static gboolean
drawn (gpointer data)
{
  return caml_parallel_view_get_image_count (data) > 0;
}

/* The view on plot in a window, drawn, and listened to. */
static void
show (Shown *s, CamlPlotParallel *plot)
{
  *s = (Shown) { 0 };
  s->window = GTK_WINDOW (gtk_window_new ());
  gtk_window_set_default_size (s->window, 640, 380);
  s->view = CAML_PARALLEL_VIEW (caml_parallel_view_new ());
  gtk_window_set_child (s->window, GTK_WIDGET (s->view));
  caml_parallel_view_set_plot (s->view, plot);
  g_signal_connect (s->view, "brush-changed", G_CALLBACK (on_brush_changed), &s->heard);
  g_signal_connect (s->view, "row-activated", G_CALLBACK (on_row_activated), &s->heard);
  gtk_window_present (s->window);
  assert_true (iterate_until (is_mapped, s->view, 10));
  assert_true (iterate_until (drawn, s->view, 10));
  s->width = gtk_widget_get_width (GTK_WIDGET (s->view));
  s->height = gtk_widget_get_height (GTK_WIDGET (s->view));
  assert_true (s->width > 300 && s->height > 200);
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  s->cr = cairo_create (surface);
  cairo_surface_destroy (surface);
}

static void
unshow (Shown *s)
{
  cairo_destroy (s->cr);
  gtk_window_destroy (s->window);
}

static const CamlPlotParallel *
plot_of (Shown *s)
{
  return caml_parallel_view_get_plot (s->view);
}

/* The middle of row's segment from axis to axis + 1, in the view. */
static void
segment_middle (Shown *s, int row, int axis, double *x, double *y)
{
  double x0, y0, x1, y1;
  caml_plot_parallel_row_point (plot_of (s), s->cr, s->width, s->height, row, axis, &x0, &y0);
  caml_plot_parallel_row_point (plot_of (s), s->cr, s->width, s->height, row, axis + 1, &x1,
                                &y1);
  *x = 0.5 * (x0 + x1);
  *y = 0.5 * (y0 + y1);
}

static void
axis_place (Shown *s, int axis, double *x, double *top, double *bottom)
{
  caml_plot_parallel_axis_x (plot_of (s), s->cr, s->width, s->height, axis, x, top, bottom);
}

static gboolean
newer_image (gpointer data)
{
  gpointer *args = data;
  return caml_parallel_view_get_image_count (args[0]) > GPOINTER_TO_UINT (args[1]);
}

/* Brushing through the view's function and by a drag along an axis;
 * activating a line where it is drawn, not a faint one. */
static void
test_brush_and_activate (void **state)
{
  Shown s;
  double lo, hi, x, y;

  show (&s, fixed_plot (FALSE, TRUE));
  Heard *heard = &s.heard;

  /* accuracy 0.905 … 0.925: runs 1 and 2 */
  guint images = caml_parallel_view_get_image_count (s.view);
  caml_parallel_view_brush (s.view, 2, 0.925, 0.905);
  assert_int_equal (heard->brush_changes, 1);
  assert_int_equal (heard->last_axis, 2);
  assert_int_equal (caml_plot_parallel_count_passing (plot_of (&s)), 2);
  assert_true (iterate_until (newer_image, (gpointer[]) { s.view, GUINT_TO_POINTER (images) },
                              10));

  /* a click on run 1's line opens it; run 4's is faint */
  segment_middle (&s, 1, 1, &x, &y);
  assert_int_equal (caml_parallel_view_activate_at (s.view, x, y), 1);
  assert_int_equal (heard->activations, 1);
  assert_int_equal (heard->last_row, 1);
  segment_middle (&s, 4, 1, &x, &y);
  assert_int_equal (caml_parallel_view_activate_at (s.view, x, y), -1);
  assert_int_equal (heard->activations, 1);
  /* the same through the click gesture (a press and release, no drag) */
  GtkGestureClick *click = controller_of (GTK_WIDGET (s.view), GTK_TYPE_GESTURE_CLICK);
  assert_non_null (click);
  segment_middle (&s, 2, 1, &x, &y);
  g_signal_emit_by_name (click, "released", 1, x, y);
  assert_int_equal (heard->activations, 2);
  assert_int_equal (heard->last_row, 2);

  /* a drag along the kernel axis from near its bottom to its middle
   * brushes it live, from the press to the pointer */
  double ax, top, bottom;
  axis_place (&s, 0, &ax, &top, &bottom);
  GtkGestureDrag *drag = controller_of (GTK_WIDGET (s.view), GTK_TYPE_GESTURE_DRAG);
  assert_non_null (drag);
  double start = bottom - 4.0, end = 0.5 * (top + bottom);
  /* as GTK sends it: the click gesture hears the press and the release too */
  g_signal_emit_by_name (click, "pressed", 1, ax + 3.0, start);
  g_signal_emit_by_name (drag, "drag-begin", ax + 3.0, start);
  g_signal_emit_by_name (drag, "drag-update", 0.0, 2.0);   /* under the threshold */
  assert_false (caml_plot_parallel_get_brush (plot_of (&s), 0, NULL, NULL));
  int before = heard->brush_changes;
  g_signal_emit_by_name (drag, "drag-update", 0.0, 0.5 * (end - start));
  g_signal_emit_by_name (drag, "drag-update", 0.0, end - start);
  g_signal_emit_by_name (drag, "drag-end", 0.0, end - start);
  g_signal_emit_by_name (click, "released", 1, ax + 3.0, end);   /* a drag's, not a click */
  assert_int_equal (heard->brush_changes, before + 2);
  assert_int_equal (heard->last_axis, 0);
  assert_true (caml_plot_parallel_get_brush (plot_of (&s), 0, &lo, &hi));
  const CamlPlotAxis *kernel = caml_plot_parallel_get_axis (plot_of (&s), 0);
  assert_true (fabs (lo - caml_plot_axis_unmap (kernel, start, bottom, top)) < 1e-9);
  assert_true (fabs (hi - caml_plot_axis_unmap (kernel, end, bottom, top)) < 1e-9);
  assert_true (lo < 3.0 + 0.2 && hi > 5.0 && hi < 8.0);
  /* kernel 3 or 5 and accuracy 0.905 … 0.925: run 1 alone */
  assert_int_equal (caml_plot_parallel_count_passing (plot_of (&s)), 1);
  assert_true (caml_plot_parallel_row_passes (plot_of (&s), 1));

  /* as a user sees it, hovering run 1: gui-parallel.png in the build's tests/ */
  GtkEventControllerMotion *motion = controller_of (GTK_WIDGET (s.view),
                                                    GTK_TYPE_EVENT_CONTROLLER_MOTION);
  segment_middle (&s, 1, 1, &x, &y);
  g_signal_emit_by_name (motion, "motion", x, y);
  const char *dir = g_getenv ("CAML_SCREENSHOT_DIR");
  g_autofree char *shot = g_build_filename (dir != NULL ? dir : ".", "gui-parallel.png", NULL);
  if (dir != NULL)
    save_screenshot (GTK_WIDGET (s.window), shot);

  /* a click on the axis clears its brush */
  g_signal_emit_by_name (click, "pressed", 1, ax, end);
  g_signal_emit_by_name (click, "released", 1, ax, end);
  assert_false (caml_plot_parallel_get_brush (plot_of (&s), 0, NULL, NULL));
  assert_true (caml_plot_parallel_get_brush (plot_of (&s), 2, NULL, NULL));
  assert_int_equal (heard->last_axis, 0);
  assert_int_equal (heard->activations, 2);

  unshow (&s);
}

/* Hovering a line highlights it and shows its run; Escape and a double
 * click clear every brush. */
static void
test_hover_and_clear (void **state)
{
  Shown s;
  double x, y;

  show (&s, fixed_plot (FALSE, TRUE));
  Heard *heard = &s.heard;
  GtkEventControllerMotion *motion = controller_of (GTK_WIDGET (s.view),
                                                    GTK_TYPE_EVENT_CONTROLLER_MOTION);
  assert_non_null (motion);

  segment_middle (&s, 3, 1, &x, &y);
  g_signal_emit_by_name (motion, "motion", x, y);
  assert_int_equal (caml_plot_parallel_get_highlight (plot_of (&s)), 3);
  g_autofree char *expected = caml_plot_parallel_describe_row (plot_of (&s), 3);
  assert_string_equal (gtk_widget_get_tooltip_text (GTK_WIDGET (s.view)), expected);
  assert_string_equal (expected, "k3-d16: kernel 3 · depth 16 · test_accuracy 0.93");
  g_signal_emit_by_name (motion, "leave");
  assert_int_equal (caml_plot_parallel_get_highlight (plot_of (&s)), -1);
  assert_null (gtk_widget_get_tooltip_text (GTK_WIDGET (s.view)));

  /* a brush that leaves the hovered line faint drops the highlight */
  g_signal_emit_by_name (motion, "motion", x, y);
  assert_int_equal (caml_plot_parallel_get_highlight (plot_of (&s)), 3);
  caml_parallel_view_brush (s.view, 1, 7.0, 9.0);   /* depth 8 */
  assert_int_equal (caml_plot_parallel_get_highlight (plot_of (&s)), -1);
  caml_parallel_view_brush (s.view, 0, 4.0, 9.0);

  GtkEventControllerKey *key = controller_of (GTK_WIDGET (s.view), GTK_TYPE_EVENT_CONTROLLER_KEY);
  assert_non_null (key);
  gboolean handled = FALSE;
  int before = heard->brush_changes;
  g_signal_emit_by_name (key, "key-pressed", GDK_KEY_Escape, 0, 0, &handled);
  assert_true (handled);
  assert_int_equal (heard->brush_changes, before + 1);
  assert_int_equal (heard->last_axis, -1);
  assert_int_equal (caml_plot_parallel_count_passing (plot_of (&s)), ROWS);
  handled = TRUE;
  g_signal_emit_by_name (key, "key-pressed", GDK_KEY_Escape, 0, 0, &handled);
  assert_false (handled);   /* nothing to clear: the key goes on */

  caml_parallel_view_brush (s.view, 2, 0.90, 0.91);
  GtkGestureClick *click = controller_of (GTK_WIDGET (s.view), GTK_TYPE_GESTURE_CLICK);
  g_signal_emit_by_name (click, "pressed", 2, 5.0, 5.0);
  assert_false (caml_plot_parallel_get_brush (plot_of (&s), 2, NULL, NULL));
  assert_int_equal (caml_plot_parallel_count_passing (plot_of (&s)), ROWS);
  unshow (&s);
}

/* The plot rebuilt as runs finish keeps the user's brushes by axis name
 * (an axis added in front moves the others) and drops the highlight; a
 * brush on an axis the new plot lacks is dropped, and said. The PNG is
 * what the view shows. */
static void
test_rebuilt_plot (void **state)
{
  Shown s;
  double lo, hi, x, y;

  show (&s, fixed_plot (FALSE, TRUE));
  caml_parallel_view_brush (s.view, 2, 0.915, 0.945);
  caml_parallel_view_brush (s.view, 0, 4.0, 9.0);
  GtkEventControllerMotion *motion = controller_of (GTK_WIDGET (s.view),
                                                    GTK_TYPE_EVENT_CONTROLLER_MOTION);
  segment_middle (&s, 4, 1, &x, &y);
  g_signal_emit_by_name (motion, "motion", x, y);
  assert_int_equal (caml_plot_parallel_get_highlight (plot_of (&s)), 4);
  int changes = s.heard.brush_changes;

  caml_parallel_view_set_plot (s.view, fixed_plot (TRUE, TRUE));
  assert_int_equal (s.heard.brush_changes, changes);   /* the brushes are as they were */
  assert_int_equal (caml_plot_parallel_get_n_rows (plot_of (&s)), ROWS + 1);
  assert_string_equal (caml_plot_parallel_get_axis_name (plot_of (&s), 3), "test_accuracy");
  assert_true (caml_plot_parallel_get_brush (plot_of (&s), 3, &lo, &hi));
  assert_true (lo == 0.915 && hi == 0.945);
  assert_true (caml_plot_parallel_get_brush (plot_of (&s), 1, &lo, &hi));
  assert_true (lo == 4.0 && hi == 9.0);
  assert_false (caml_plot_parallel_get_brush (plot_of (&s), 0, NULL, NULL));
  assert_false (caml_plot_parallel_get_brush (plot_of (&s), 2, NULL, NULL));
  assert_int_equal (caml_plot_parallel_get_highlight (plot_of (&s)), -1);
  assert_null (gtk_widget_get_tooltip_text (GTK_WIDGET (s.view)));
  /* kernel 5 or 8, accuracy 0.92 … 0.94: runs 2 and 4 */
  assert_int_equal (caml_plot_parallel_count_passing (plot_of (&s)), 2);

  g_autofree char *dir = g_dir_make_tmp ("caml-gui-parallel-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "parallel.png", NULL);
  g_autoptr (GError) error = NULL;
  assert_true (caml_parallel_view_write (s.view, path, 900, 450, &error));
  cairo_surface_t *png = cairo_image_surface_create_from_png (path);
  assert_int_equal (cairo_surface_status (png), CAIRO_STATUS_SUCCESS);
  assert_int_equal (cairo_image_surface_get_width (png), 900);
  assert_int_equal (cairo_image_surface_get_height (png), 450);
  cairo_surface_destroy (png);
  g_unlink (path);
  g_rmdir (dir);

  /* a sweep that no longer varies the kernel: its brush goes */
  caml_parallel_view_set_plot (s.view, fixed_plot (FALSE, FALSE));
  assert_int_equal (s.heard.brush_changes, changes + 1);
  assert_int_equal (s.heard.last_axis, -1);
  assert_true (caml_plot_parallel_get_brush (plot_of (&s), 1, &lo, &hi));
  assert_true (lo == 0.915 && hi == 0.945);
  assert_false (caml_plot_parallel_get_brush (plot_of (&s), 0, NULL, NULL));

  caml_parallel_view_set_plot (s.view, NULL);
  assert_null (plot_of (&s));
  assert_false (caml_parallel_view_write (s.view, "unused.png", 10, 10, &error));
  assert_non_null (error);
  unshow (&s);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_brush_and_activate),
    cmocka_unit_test (test_hover_and_clear),
    cmocka_unit_test (test_rebuilt_plot),
  };
  if (!gui_harness_init ("test-gui-parallel"))
    return 1;
  return gui_harness_finish (cmocka_run_group_tests (tests, NULL, NULL));
}
