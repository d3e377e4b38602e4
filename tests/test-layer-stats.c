/* test-layer-stats.c — the Inspect page's numbers (studio/layer-stats.c) and
 * its χ histogram (caml_figure_chi_histogram): known weights give a known
 * mean, spread and bins. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "figures.h"
#include "layer-stats.h"

static float
logit (double p)
{
  return (float) log (p / (1.0 - p));
}

/* Values go to bin floor(20 χ); 1 and above to the last, below 0 to the
 * first; NaN is skipped. */
static void
test_stat_add (void **state)
{
  CamlLayerStat s = { 0 };
  const float chi[] = { 0.0f, 0.049f, 0.05f, 0.5f, 1.0f, 1.5f, -0.2f, NAN };
  caml_layer_stat_add (&s, chi, G_N_ELEMENTS (chi));
  assert_int_equal (s.count, 7);
  assert_int_equal (s.bins[0], 3);    /* 0, 0.049, -0.2 */
  assert_int_equal (s.bins[1], 1);    /* 0.05 */
  assert_int_equal (s.bins[10], 1);   /* 0.5 */
  assert_int_equal (s.bins[19], 2);   /* 1, 1.5 */

  CamlLayerStat empty = { 0 };
  assert_true (isnan (caml_layer_stat_mean (&empty)));
  assert_true (isnan (caml_layer_stat_sd (&empty)));
}

/* A CA-NN on one input whose gate is sigmoid(x) (u = 1, b_chi = 0), then a
 * dense layer: χ of four samples is 0.125, 0.125, 0.125, 0.875. */
static void
test_measure_known_weights (void **state)
{
  const CamlLayerOps *ca = caml_layer_lookup ("ca_nn"), *dense = caml_layer_lookup ("dense");
  CamlLayerSpec specs[2] = { { ca }, { dense } };
  caml_layer_ops_default_options (ca, specs[0].opt);
  caml_layer_ops_default_options (dense, specs[1].opt);
  specs[0].opt[caml_layer_ops_option_index (ca, "units")] = 2;
  specs[1].opt[caml_layer_ops_option_index (dense, "units")] = 1;
  CamlShape input = caml_shape_flat (1);
  g_autoptr (GRand) rng = g_rand_new_with_seed (1);
  g_autoptr (GError) error = NULL;
  CamlModel *model = caml_model_new (&input, specs, 2, rng, &error);
  assert_non_null (model);
  CamlLayer *layer = model->layers[0];
  for (int p = 0; p < layer->n_params; p++)
    if (g_str_equal (layer->params[p].name, "u"))
      layer->params[p].w[0] = 1.0f;
    else if (g_str_equal (layer->params[p].name, "b_chi"))
      layer->params[p].w[0] = 0.0f;

  CamlDataset *set = caml_dataset_new (4, &input, 1, 0);
  set->x[0] = set->x[1] = set->x[2] = logit (0.125);
  set->x[3] = logit (0.875);

  g_autoptr (CamlLayerStats) stats = caml_layer_stats_new (model);
  assert_int_equal (stats->n_layers, 2);
  assert_true (stats->layers[0].gated);
  assert_false (stats->layers[1].gated);
  assert_string_equal (stats->layers[0].title, "CA-NN");
  assert_int_equal (stats->layers[0].n_params, 2 + 2 + 1 + 1 + 2);   /* W b u b_chi w0 */
  assert_int_equal (stats->layers[1].n_params, 2 + 1);
  assert_string_equal (stats->layers[1].shape, "(1)");
  assert_int_equal (stats->n_samples, 0);

  /* Three samples only: n_max counts. */
  caml_layer_stats_measure (stats, model, set, 3, 7);
  assert_int_equal (stats->n_samples, 3);
  assert_int_equal (stats->step, 7);
  assert_int_equal (stats->layers[0].count, 3);
  assert_int_equal (stats->layers[0].bins[2], 3);
  assert_float_equal (caml_layer_stat_sd (&stats->layers[0]), 0.0, 1e-6);

  caml_layer_stats_measure (stats, model, set, 1000, 8);
  const CamlLayerStat *s = &stats->layers[0];
  assert_int_equal (stats->n_samples, 4);
  assert_int_equal (s->count, 4);
  assert_int_equal (s->bins[2], 3);    /* 0.125 */
  assert_int_equal (s->bins[17], 1);   /* 0.875 */
  double mean = (3 * 0.125 + 0.875) / 4;
  double sd = sqrt ((3 * 0.125 * 0.125 + 0.875 * 0.875) / 4 - mean * mean);
  assert_float_equal (caml_layer_stat_mean (s), mean, 1e-6);
  assert_float_equal (caml_layer_stat_sd (s), sd, 1e-6);
  assert_int_equal (stats->layers[1].count, 0);
  assert_true (isnan (caml_layer_stat_mean (&stats->layers[1])));

  /* A copy is its own. */
  g_autoptr (CamlLayerStats) copy = caml_layer_stats_copy (stats);
  assert_ptr_not_equal (copy->layers[1].shape, stats->layers[1].shape);
  assert_string_equal (copy->layers[1].shape, "(1)");
  assert_int_equal (copy->layers[0].bins[17], 1);

  /* The histogram: a step line over the bins' edges, shares summing to 1. */
  double x[2 * CAML_CHI_BINS + 2], y[2 * CAML_CHI_BINS + 2];
  int n = caml_figure_chi_histogram_points (s, x, y);
  assert_int_equal (n, 2 * CAML_CHI_BINS + 2);
  assert_float_equal (x[0], 0.0, 0);
  assert_float_equal (x[n - 1], 1.0, 0);
  assert_float_equal (y[1 + 2 * 2], 0.75, 1e-12);    /* bin 2's left edge */
  assert_float_equal (y[2 + 2 * 2], 0.75, 1e-12);    /* … and right edge */
  assert_float_equal (y[1 + 2 * 17], 0.25, 1e-12);
  assert_float_equal (x[1 + 2 * 17], 0.85, 1e-12);
  assert_float_equal (y[1 + 2 * 5], 0.0, 0);
  g_autoptr (CamlPlotFigure) figure = caml_figure_chi_histogram (s, 8);
  assert_non_null (caml_plot_figure_get_line (figure, 0));

  caml_dataset_free (set);
  caml_model_free (model);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_stat_add),
    cmocka_unit_test (test_measure_known_weights),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
