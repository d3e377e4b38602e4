/* test-text-layers.c — embedding, mean_pool, average and CA-BSFE: gradient
 * checks over ragged batches, references computed by hand, shape errors. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "caml.h"
#include "gradcheck.h"

static void
test_embedding_gradients (void **state)
{
  (void) state;
  CamlShape in = caml_shape_tokens (6, 9);
  CamlLayerSpec spec = caml_test_spec ("embedding", "dim", 3.0, NULL);
  caml_gradcheck_layer (&spec, &in, 5, 3);
}

static void
test_mean_pool_gradients (void **state)
{
  (void) state;
  CamlShape in = caml_shape_sequence (5, 4);
  CamlLayerSpec spec = caml_test_spec ("mean_pool", NULL);
  caml_gradcheck_layer (&spec, &in, 4, 5);
}

static void
test_average_gradients (void **state)
{
  (void) state;
  CamlShape in = caml_shape_tokens (7, 6);
  CamlLayerSpec spec = caml_test_spec ("average", "dim", 3.0, NULL);
  caml_gradcheck_layer (&spec, &in, 5, 8);
}

static void
test_ca_bsfe_gradients (void **state)
{
  (void) state;
  CamlShape in = caml_shape_tokens (7, 6);
  for (int mean = 0; mean <= 1; mean++)
    {
      CamlLayerSpec spec = caml_test_spec ("ca_bsfe", "dim", 3.0, "gate_dim", 2.0,
                                           "mean", (double) mean, NULL);
      caml_gradcheck_layer (&spec, &in, 5, 21 + mean);
    }
}

static CamlLayer *
find_param_layer (CamlModel *model, const char *name, CamlParam **param)
{
  for (int i = 0; i < model->n_layers; i++)
    for (int j = 0; j < model->layers[i]->n_params; j++)
      if (g_str_equal (model->layers[i]->params[j].name, name))
        {
          *param = &model->layers[i]->params[j];
          return model->layers[i];
        }
  fail_msg ("no parameter %s", name);
  return NULL;
}

/* s = v0 Σ χ̃ + Σ (1 − χ̃) w', written out for a bag of three tokens, one of
 * them unseen, against the layer. */
static void
test_ca_bsfe_reference (void **state)
{
  (void) state;
  CamlShape in = caml_shape_tokens (5, 3);
  CamlLayerSpec spec = caml_test_spec ("ca_bsfe", "dim", 2.0, "gate_dim", 2.0, NULL);
  GRand *rng = g_rand_new_with_seed (1);
  CamlModel *model = caml_model_new (&in, &spec, 1, rng, NULL);
  assert_non_null (model);
  CamlParam *wp, *ws, *theta, *v0;
  find_param_layer (model, "w_prime", &wp);
  find_param_layer (model, "w_sigma", &ws);
  find_param_layer (model, "theta", &theta);
  find_param_layer (model, "v0", &v0);

  const float wp_v[] = { 1, 2,   3, 4,   5, 6 };
  const float ws_v[] = { 0.5f, -1,   2, 0,   -1, 1 };
  const float theta_v[] = { 1, 0.5f };
  const float v0_v[] = { -1, 10 };
  memcpy (wp->w, wp_v, sizeof wp_v);
  memcpy (ws->w, ws_v, sizeof ws_v);
  memcpy (theta->w, theta_v, sizeof theta_v);
  memcpy (v0->w, v0_v, sizeof v0_v);

  /* Bag: token 2, token 0, an unseen word; then padding. */
  const float x[] = { 2, 0, CAML_TOKEN_OOV, CAML_TOKEN_PAD, CAML_TOKEN_PAD };
  const float *out = caml_model_forward (model, x, 1);

  double c2 = 1.0 / (1.0 + exp (-(1 * -1.0 + 0.5 * 1.0)));
  double c0 = 1.0 / (1.0 + exp (-(1 * 0.5 + 0.5 * -1.0)));
  double chi_sum = c2 + c0 + 1.0;
  double e0 = -1 * chi_sum + (1 - c2) * 5 + (1 - c0) * 1;
  double e1 = 10 * chi_sum + (1 - c2) * 6 + (1 - c0) * 2;
  assert_float_equal (out[0], e0, 1e-5);
  assert_float_equal (out[1], e1, 1e-5);

  /* The per-word view: χ̃ of each vocabulary word. */
  float chi[3];
  assert_true (model->layers[0]->ops->word_chi (model->layers[0], chi, 3));
  assert_float_equal (chi[0], c0, 1e-6);
  assert_float_equal (chi[2], c2, 1e-6);

  caml_model_free (model);
  g_rand_free (rng);
}

/* Averaging skips unseen words; an empty bag gives zeros. */
static void
test_average_reference (void **state)
{
  (void) state;
  CamlShape in = caml_shape_tokens (4, 2);
  CamlLayerSpec spec = caml_test_spec ("average", "dim", 2.0, NULL);
  CamlModel *model = caml_model_new (&in, &spec, 1, NULL, NULL);
  const float E[] = { 1, 2, 3, 8 };
  memcpy (model->w, E, sizeof E);
  const float x[] = { 0, CAML_TOKEN_OOV, 1, CAML_TOKEN_PAD,
                      CAML_TOKEN_PAD, CAML_TOKEN_PAD, CAML_TOKEN_PAD, CAML_TOKEN_PAD };
  const float *out = caml_model_forward (model, x, 2);
  assert_float_equal (out[0], 2.0, 1e-6);
  assert_float_equal (out[1], 5.0, 1e-6);
  assert_float_equal (out[2], 0.0, 0);
  assert_float_equal (out[3], 0.0, 0);
  caml_model_free (model);
}

/* embedding → mean_pool equals average (same table). */
static void
test_embedding_mean_pool_equals_average (void **state)
{
  (void) state;
  CamlShape in = caml_shape_tokens (6, 5);
  CamlLayerSpec pair[2] = { caml_test_spec ("embedding", "dim", 3.0, NULL),
                            caml_test_spec ("mean_pool", NULL) };
  CamlLayerSpec avg = caml_test_spec ("average", "dim", 3.0, NULL);
  GRand *rng = g_rand_new_with_seed (4);
  CamlModel *a = caml_model_new (&in, pair, 2, rng, NULL);
  CamlModel *b = caml_model_new (&in, &avg, 1, NULL, NULL);
  assert_int_equal (a->n_weights, b->n_weights);
  memcpy (b->w, a->w, a->n_weights * sizeof (float));
  const float x[] = { 4, 1, 1, 3, CAML_TOKEN_PAD, CAML_TOKEN_PAD,
                      0, 2, 4, 1, 3, 0 };
  const float *oa = caml_model_forward (a, x, 2);
  const float *ob = caml_model_forward (b, x, 2);
  for (int i = 0; i < 6; i++)
    assert_float_equal (oa[i], ob[i], 1e-6);
  caml_model_free (a);
  caml_model_free (b);
  g_rand_free (rng);
}

static void
expect_build_error (const CamlShape *in, const CamlLayerSpec *specs, int n, const char *fragment)
{
  GError *error = NULL;
  CamlModel *model = caml_model_new (in, specs, n, NULL, &error);
  assert_null (model);
  assert_non_null (error);
  if (strstr (error->message, fragment) == NULL)
    fail_msg ("\"%s\" does not contain \"%s\"", error->message, fragment);
  g_error_free (error);
}

static void
test_shape_errors (void **state)
{
  (void) state;
  CamlShape tokens = caml_shape_tokens (10, 50);
  CamlLayerSpec dense = caml_test_spec ("dense", "units", 2.0, NULL);
  expect_build_error (&tokens, &dense, 1, "layer 0 (dense) takes vectors or images, but its input is (10 tokens)");

  CamlLayerSpec seq[2] = { caml_test_spec ("embedding", NULL), caml_test_spec ("dense", NULL) };
  expect_build_error (&tokens, seq, 2, "reduce the sequence first");

  CamlShape flat = caml_shape_flat (4);
  CamlLayerSpec bsfe = caml_test_spec ("ca_bsfe", NULL);
  expect_build_error (&flat, &bsfe, 1, "takes token ids");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_embedding_gradients),
    cmocka_unit_test (test_mean_pool_gradients),
    cmocka_unit_test (test_average_gradients),
    cmocka_unit_test (test_ca_bsfe_gradients),
    cmocka_unit_test (test_ca_bsfe_reference),
    cmocka_unit_test (test_average_reference),
    cmocka_unit_test (test_embedding_mean_pool_equals_average),
    cmocka_unit_test (test_shape_errors),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
