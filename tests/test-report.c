/* test-report.c — the plots `caml train` leaves (app/report.c), prepared
 * without writing them: loss.png's panels line up and count steps in whole
 * numbers, and a run that diverged is marked where it did. */
#include <math.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "caml-plot.h"
#include "report.h"

static void
assert_whole_ticks (const CamlPlotAxis *a)
{
  assert_true (a->n_ticks >= 1);
  for (int i = 0; i < a->n_ticks; i++)
    {
      char buf[64];
      assert_true (a->ticks[i] == floor (a->ticks[i]));
      caml_plot_format_tick (buf, sizeof buf, a->ticks[i], a->step);
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
  g_autoptr (CamlPlotLine) loss = NULL;
  g_autoptr (CamlPlotLine) accuracy = NULL;
  caml_report_loss_plots (rows, n_rows, losses, n_steps, NULL, TRUE, "test", "t", &loss,
                          &accuracy);
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
  g_autoptr (CamlPlotLine) loss = NULL;
  caml_report_loss_plots (NULL, 0, losses, 2, &d, FALSE, "test", "t", &loss, NULL);
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
  g_autoptr (CamlPlotLine) none = NULL;
  CamlDivergence first = { .kind = CAML_DIVERGED_LOSS, .step = 1, .rolled_back_to = 0 };
  caml_report_loss_plots (NULL, 0, NULL, 0, &first, FALSE, "test", "t", &none, NULL);
  assert_whole_ticks (caml_plot_line_get_x_axis (none));
  g_autoptr (CamlPlotLine) nothing = NULL;
  caml_report_loss_plots (NULL, 0, NULL, 0, NULL, TRUE, "test", "t", &nothing, NULL);
  assert_whole_ticks (caml_plot_line_get_x_axis (nothing));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_panels_aligned),
    cmocka_unit_test (test_divergence_marked),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
