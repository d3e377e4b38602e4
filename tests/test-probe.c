/* test-probe.c — looking inside models: grid sampling, σ-map AUC, and the
 * matched baseline. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "caml-private.h"   /* tests the engine's internals */
#include "gradcheck.h"

static void
test_sample_grid_matches_forward (void **state)
{
  CamlShape in = caml_shape_flat (2);
  CamlLayerSpec specs[] = {
    caml_test_spec ("ca_nn", "units", 3.0, NULL),
    caml_test_spec ("dense", "units", 1.0, NULL),
  };
  GRand *rng = g_rand_new_with_seed (2);
  CamlModel *model = caml_model_new (&in, specs, 2, rng, NULL);
  const double domain[4] = { -1, 2, -3, 0.5 };
  float out[5 * 4], chi[5 * 4];
  assert_true (caml_model_sample_grid (model, domain, 5, 4, out, 0, chi, NULL));
  /* Row j, column i is the point (x_i, y_j). */
  float xy[2] = { (float) (-1 + 3.0 * 3 / 4), (float) (-3 + 3.5 * 2 / 3) };
  const float *o = caml_model_forward (model, xy, 1);
  assert_float_equal (out[2 * 5 + 3], o[0], 1e-6);
  int per;
  assert_float_equal (chi[2 * 5 + 3], model->layers[0]->ops->chi (model->layers[0], &per)[0],
                      1e-6);

  GError *error = NULL;
  assert_false (caml_model_sample_grid (model, domain, 5, 4, out, 1, chi, &error));
  assert_non_null (strstr (error->message, "layer 1"));
  g_clear_error (&error);
  caml_model_free (model);
  g_rand_free (rng);
}

static const float *
param (const CamlLayer *layer, const char *name)
{
  for (int i = 0; i < layer->n_params; i++)
    if (g_str_equal (layer->params[i].name, name))
      return layer->params[i].w;
  fail_msg ("layer %s has no parameter %s", layer->ops->name, name);
  return NULL;
}

/* The parts of a CA-NN under a dense readout, against the formula worked by
 * hand from the weights: with χ held at 1 the output is the dense sublayer
 * path readout(tanh(W c + b)); with χ held at 0 it is readout(w0); and with
 * an affine readout the fit is χ·free_part + (1 − χ)·sensitive_part. */
static void
test_sample_grid_parts (void **state)
{
  CamlShape in = caml_shape_flat (2);
  CamlLayerSpec specs[] = {
    caml_test_spec ("ca_nn", "units", 3.0, NULL),
    caml_test_spec ("dense", "units", 1.0, "activation", (double) CAML_ACT_IDENTITY, NULL),
  };
  GRand *rng = g_rand_new_with_seed (5);
  CamlModel *model = caml_model_new (&in, specs, 2, rng, NULL);
  assert_non_null (model);
  /* Move w0 and the biases away from their initial values. */
  for (size_t k = 0; k < model->n_weights; k++)
    model->w[k] += 0.3f * (float) g_rand_double_range (rng, -1, 1);
  const CamlLayer *ca = model->layers[0], *dense = model->layers[1];
  const float *W = param (ca, "W"), *b = param (ca, "b"), *w0 = param (ca, "w0");
  const float *Wd = param (dense, "W"), *bd = param (dense, "b");

  enum { NX = 7, NY = 5 };
  const double domain[4] = { -2, 2, -1.5, 1 };
  float out[NX * NY], chi[NX * NY], sensitive_part[NX * NY], free_part[NX * NY], again[NX * NY];
  assert_true (caml_model_sample_grid (model, domain, NX, NY, out, 0, chi, NULL));
  assert_true (caml_model_sample_grid_parts (model, domain, NX, NY, 0, sensitive_part, free_part,
                                             NULL));
  double f0 = bd[0];
  for (int j = 0; j < 3; j++)
    f0 += Wd[j] * w0[j];
  gboolean varies = FALSE;
  for (int r = 0; r < NY; r++)
    for (int c = 0; c < NX; c++)
      {
        double x = domain[0] + (domain[1] - domain[0]) * c / (NX - 1);
        double y = domain[2] + (domain[3] - domain[2]) * r / (NY - 1);
        double f1 = bd[0];
        for (int j = 0; j < 3; j++)
          f1 += Wd[j] * tanh (W[2 * j] * x + W[2 * j + 1] * y + b[j]);
        int k = r * NX + c;
        assert_float_equal (free_part[k], f1, 1e-5);
        assert_float_equal (sensitive_part[k], f0, 1e-5);
        assert_float_equal (out[k], chi[k] * free_part[k] + (1 - chi[k]) * sensitive_part[k], 1e-5);
        varies |= fabsf (free_part[k] - free_part[0]) > 1e-3f;
      }
  assert_true (varies);
  /* The gate is released: the model computes the same fit as before. */
  assert_true (caml_model_sample_grid (model, domain, NX, NY, again, -1, NULL, NULL));
  for (int k = 0; k < NX * NY; k++)
    assert_float_equal (again[k], out[k], 1e-7);
  /* Only null outputs: nothing to do, still fine. */
  assert_true (caml_model_sample_grid_parts (model, domain, NX, NY, 0, NULL, NULL, NULL));

  /* A dense layer has no gate to hold; neither has a layer that is not there. */
  GError *error = NULL;
  assert_false (caml_model_sample_grid_parts (model, domain, NX, NY, 1, sensitive_part, NULL,
                                              &error));
  assert_non_null (strstr (error->message, "layer 1 (dense)"));
  g_clear_error (&error);
  assert_false (caml_model_sample_grid_parts (model, domain, NX, NY, 7, sensitive_part, NULL,
                                              &error));
  g_clear_error (&error);
  caml_model_free (model);
  g_rand_free (rng);
}

static void
test_sigma_auc_known_cases (void **state)
{
  /* Two 2×3 images; foreground > 0.5, background == 0, 0.3 is neither. */
  const float images[] = { 0, 1, 0.9f,  0, 0.3f, 0,
                           1, 0, 0,     0, 0.8f, 0 };
  float maps[12];
  gboolean high;
  /* χ equal to the image separates perfectly, higher on the digit. */
  memcpy (maps, images, sizeof maps);
  assert_float_equal (caml_sigma_auc (images, 2, 3, maps, 2, 3, 2, &high), 1.0, 1e-12);
  assert_true (high);
  /* Inverted: still perfectly separated, higher on the background. */
  for (int i = 0; i < 12; i++)
    maps[i] = 1.0f - images[i];
  assert_float_equal (caml_sigma_auc (images, 2, 3, maps, 2, 3, 2, &high), 1.0, 1e-12);
  assert_false (high);
  /* Constant: every pair tied, 0.5. */
  for (int i = 0; i < 12; i++)
    maps[i] = 0.25f;
  assert_float_equal (caml_sigma_auc (images, 2, 3, maps, 2, 3, 2, &high), 0.5, 1e-12);
  /* By hand. Foreground pixels (> 0.5) get χ {0.6, 0.2, 0.9, 0.5}; background
   * pixels (== 0) get {0.1, 0.3, 0.5, 0.7, 0.2, 0.4, 0.0}; 0.3 is neither.
   * Pairs won by the foreground, ties half: 0.6 → 6, 0.2 → 2 + ½, 0.9 → 7,
   * 0.5 → 5 + ½; AUC = 21 / (4 · 7). */
  const float hand[] = { 0.1f, 0.6f, 0.2f,  0.3f, 0.99f, 0.5f,
                         0.9f, 0.7f, 0.2f,  0.4f, 0.5f, 0.0f };
  double expect = 21.0 / 28.0;
  assert_float_equal (caml_sigma_auc (images, 2, 3, hand, 2, 3, 2, &high), expect, 1e-12);
  assert_true (high);
}

/* Against the definition, pair by pair: P(χ_fg > χ_bg) + ½ P(χ_fg = χ_bg),
 * on maps with many ties, negative values, both zeros and a NaN (left out);
 * the sort behind caml_sigma_auc orders the floats' bits. */
static void
test_sigma_auc_matches_pairs (void **state)
{
  enum { N = 7, H = 9, W = 11 };
  float images[N * H * W], maps[N * H * W];
  GRand *rng = g_rand_new_with_seed (5);
  const float values[] = { -3.5f, -1.0f, -0.0f, 0.0f, 1e-30f, 0.25f, 0.5f, 0.75f, 2.0f,
                           INFINITY, -INFINITY };
  for (int i = 0; i < N * H * W; i++)
    {
      double u = g_rand_double (rng);
      images[i] = u < 0.4 ? 0.0f : u < 0.8 ? 1.0f : 0.3f;
      maps[i] = g_rand_boolean (rng)
                ? values[g_rand_int_range (rng, 0, G_N_ELEMENTS (values))]
                : (float) g_rand_double_range (rng, -2, 2);
    }
  maps[17] = NAN;
  double won = 0, pairs = 0;
  for (int a = 0; a < N * H * W; a++)
    for (int b = 0; b < N * H * W; b++)
      if (images[a] > 0.5f && images[b] == 0.0f && !isnan (maps[a]) && !isnan (maps[b]))
        {
          pairs++;
          won += maps[a] > maps[b] ? 1.0 : maps[a] == maps[b] ? 0.5 : 0.0;
        }
  double expect = won / pairs;
  gboolean high;
  double auc = caml_sigma_auc (images, H, W, maps, H, W, N, &high);
  assert_float_equal (auc, expect >= 0.5 ? expect : 1.0 - expect, 1e-12);
  assert_true (high == (expect >= 0.5));
  /* The other way round ranks the same pairs the other way. */
  for (int i = 0; i < N * H * W; i++)
    maps[i] = -maps[i];
  assert_float_equal (caml_sigma_auc (images, H, W, maps, H, W, N, &high), auc, 1e-12);
  assert_true (high == (expect < 0.5));
  g_rand_free (rng);
}

static void
test_sigma_auc_maps_smaller_than_images (void **state)
{
  /* A 4×4 image with a 2×2 bright block top-left; a 2×2 map that is 1 on
   * the top-left cell covers exactly the block. */
  float image[16] = { 0 };
  image[0] = image[1] = image[4] = image[5] = 1.0f;
  const float map[4] = { 1, 0, 0, 0 };
  gboolean high;
  assert_float_equal (caml_sigma_auc (image, 4, 4, map, 2, 2, 1, &high), 1.0, 1e-12);
  assert_true (high);
}

static void
test_baseline_replaces_ca_layers (void **state)
{
  CamlExperiment *exp = caml_experiment_new_default ();
  g_free (exp->layers);
  exp->n_layers = 3;
  exp->layers = g_new0 (CamlLayerSpec, 3);
  exp->layers[0] = caml_test_spec ("ca_nn", "units", 5.0, "activation", (double) CAML_ACT_RELU, NULL);
  exp->layers[1] = caml_test_spec ("ca_res", "units", 4.0, "sublayers", 3.0, NULL);
  exp->layers[2] = caml_test_spec ("dense", "units", 1.0, NULL);
  CamlExperiment *base = caml_experiment_make_baseline (exp);
  assert_int_equal (base->n_layers, 3);
  for (int i = 0; i < 3; i++)
    assert_string_equal (base->layers[i].ops->name, "dense");
  int units = caml_layer_ops_option_index (base->layers[0].ops, "units");
  int act = caml_layer_ops_option_index (base->layers[0].ops, "activation");
  assert_int_equal ((int) base->layers[0].opt[units], 5);
  assert_int_equal ((int) base->layers[0].opt[act], CAML_ACT_RELU);
  assert_int_equal ((int) base->layers[1].opt[units], 4);
  assert_int_equal ((int) base->layers[2].opt[units], 1);
  assert_int_equal (base->seed, exp->seed);
  assert_non_null (strstr (base->name, "-baseline"));
  /* The baseline has the same output shape and fewer parameters. */
  CamlShape in = caml_shape_flat (2);
  CamlModel *m1 = caml_model_new (&in, exp->layers, 3, NULL, NULL);
  CamlModel *m2 = caml_model_new (&in, base->layers, 3, NULL, NULL);
  assert_true (caml_shape_equal (caml_model_output_shape (m1), caml_model_output_shape (m2)));
  assert_true (m2->n_weights < m1->n_weights);
  caml_model_free (m1);
  caml_model_free (m2);
  caml_experiment_free (base);
  caml_experiment_free (exp);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_sample_grid_matches_forward),
    cmocka_unit_test (test_sample_grid_parts),
    cmocka_unit_test (test_sigma_auc_known_cases),
    cmocka_unit_test (test_sigma_auc_matches_pairs),
    cmocka_unit_test (test_sigma_auc_maps_smaller_than_images),
    cmocka_unit_test (test_baseline_replaces_ca_layers),
  };
  return cmocka_run_group_tests_name ("probe", tests, NULL, NULL);
}
