/* test-text-layers.c — embedding, mean_pool, average and CA-BSFE: gradient
 * checks over ragged batches, references computed by hand, shape errors. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "caml-private.h"   /* tests the engine's internals */
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
  for (int scale = 0; scale <= 2; scale++)   /* sum, mean, sqrt */
    {
      CamlLayerSpec spec = caml_test_spec ("ca_bsfe", "dim", 3.0, "gate_dim", 2.0,
                                           "scale", (double) scale, NULL);
      caml_gradcheck_layer (&spec, &in, 5, 21 + scale);
      /* with the gate's bias b_σ (central differences reach it too) */
      CamlLayerSpec biased = caml_test_spec ("ca_bsfe", "dim", 3.0, "gate_dim", 2.0,
                                             "scale", (double) scale, "gate_bias", 1.0, NULL);
      caml_gradcheck_layer (&biased, &in, 5, 31 + scale);
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

  /* The same weights with the bag's sum divided by its size (3 tokens, the
   * unseen one included) or by the square root of it. */
  const double divisor[] = { 3.0, sqrt (3.0) };
  for (int k = 0; k < 2; k++)
    {
      CamlLayerSpec scaled = caml_test_spec ("ca_bsfe", "dim", 2.0, "gate_dim", 2.0,
                                             "scale", (double) (k + 1), NULL);
      CamlModel *m = caml_model_new (&in, &scaled, 1, NULL, NULL);
      assert_non_null (m);
      assert_int_equal (m->n_weights, model->n_weights);
      memcpy (m->w, model->w, model->n_weights * sizeof (float));
      const float *o = caml_model_forward (m, x, 1);
      assert_float_equal (o[0], e0 / divisor[k], 1e-5);
      assert_float_equal (o[1], e1 / divisor[k], 1e-5);
      caml_model_free (m);
    }

  /* With the gate's bias (Google's reading): χ̃ = sigmoid(θ·w_σ + b_σ), the
   * same weights and b_σ = 0.75, summed and averaged. One more parameter,
   * declared last, in the gate group. */
  for (int mean = 0; mean <= 1; mean++)
    {
      CamlLayerSpec biased = caml_test_spec ("ca_bsfe", "dim", 2.0, "gate_dim", 2.0,
                                             "scale", (double) mean, "gate_bias", 1.0, NULL);
      CamlModel *m = caml_model_new (&in, &biased, 1, NULL, NULL);
      assert_non_null (m);
      assert_int_equal (m->n_weights, model->n_weights + 1);
      CamlParam *b;
      find_param_layer (m, "b_sigma", &b);
      assert_int_equal (b->group, CAML_GROUP_GATE);
      assert_int_equal (b->offset, model->n_weights);
      memcpy (m->w, model->w, model->n_weights * sizeof (float));
      b->w[0] = 0.75f;
      const float *o = caml_model_forward (m, x, 1);
      double b2 = 1.0 / (1.0 + exp (-(1 * -1.0 + 0.5 * 1.0 + 0.75)));
      double b0 = 1.0 / (1.0 + exp (-(1 * 0.5 + 0.5 * -1.0 + 0.75)));
      double sum = b2 + b0 + 1.0, div = mean ? 3.0 : 1.0;
      assert_float_equal (o[0], (-1 * sum + (1 - b2) * 5 + (1 - b0) * 1) / div, 1e-5);
      assert_float_equal (o[1], (10 * sum + (1 - b2) * 6 + (1 - b0) * 2) / div, 1e-5);
      float bchi[3];
      assert_true (m->layers[0]->ops->word_chi (m->layers[0], bchi, 3));
      assert_float_equal (bchi[0], b0, 1e-6);
      assert_float_equal (bchi[2], b2, 1e-6);
      caml_model_free (m);
    }

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

/* ------------------------------------------------- sparse token tables */

/* A random token batch (n, t) over vocab with ragged lengths and OOV ids,
 * and random 0/1 targets. */
static void
random_token_batch (GRand *rng, float *x, float *y, int n, int t, int vocab)
{
  for (int i = 0; i < n; i++)
    {
      int len = g_rand_int_range (rng, 0, t + 1);
      for (int k = 0; k < t; k++)
        x[i * t + k] = k >= len ? (float) CAML_TOKEN_PAD
                       : g_rand_int_range (rng, 0, 10) == 0 ? (float) CAML_TOKEN_OOV
                       : (float) g_rand_int_range (rng, 0, vocab);
      y[i] = (float) g_rand_int_range (rng, 0, 2);
    }
}

static void
mark_range (size_t offset, size_t count, gpointer user_data)
{
  guint8 *mark = user_data;
  memset (mark + offset, 1, count);
}

/* Trains two copies of a text model on the same batches, one with
 * sparse_grads (token tables zeroed and updated row by row), one dense:
 * the weights must agree bit for bit, for sparse and dense optimizers,
 * under em_steps and under weight decay (which reaches only the rows of
 * the batch's tokens on both paths: a sparse optimizer leaves the other
 * rows as they were on the dense path too); and after every backward no
 * gradient may lie outside the ranges caml_model_foreach_grad_range names. */
static void
test_sparse_grads_match_dense (void **state)
{
  (void) state;
  enum { N = 4, T = 6, VOCAB = 40, STEPS = 30 };
  const CamlLayerSpec models[][3] = {
    { caml_test_spec ("ca_bsfe", "dim", 3.0, "gate_dim", 2.0, NULL),
      caml_test_spec ("dense", "units", 1.0, NULL) },
    { caml_test_spec ("average", "dim", 3.0, NULL),
      caml_test_spec ("dense", "units", 1.0, NULL) },
    { caml_test_spec ("embedding", "dim", 2.0, NULL), caml_test_spec ("mean_pool", NULL),
      caml_test_spec ("dense", "units", 1.0, NULL) },
  };
  const int n_layers[] = { 2, 2, 3 };
  CamlOptimizerConfig configs[8];
  caml_optimizer_config_defaults (&configs[0], CAML_OPTIM_ADAGRAD);
  configs[0].lr = 0.5;
  configs[0].em_steps = 3;
  caml_optimizer_config_defaults (&configs[1], CAML_OPTIM_SGD);
  configs[1].lr = 0.3;
  caml_optimizer_config_defaults (&configs[2], CAML_OPTIM_SGD);
  configs[2].momentum = 0.9;
  caml_optimizer_config_defaults (&configs[3], CAML_OPTIM_ADAM);
  configs[3].lr = 0.05;
  for (int c = 0; c < 4; c++)
    {
      configs[4 + c] = configs[c];
      configs[4 + c].weight_decay = 0.2;
    }
  CamlShape in = caml_shape_tokens (T, VOCAB);

  for (gsize m = 0; m < G_N_ELEMENTS (models); m++)
    for (gsize c = 0; c < G_N_ELEMENTS (configs); c++)
      {
        CamlModel *model[2];
        CamlOptimizer *opt[2];
        for (int k = 0; k < 2; k++)
          {
            GRand *init = g_rand_new_with_seed (7);
            model[k] = caml_model_new (&in, models[m], n_layers[m], init, NULL);
            g_rand_free (init);
            assert_non_null (model[k]);
            model[k]->sparse_grads = k == 0;
            opt[k] = caml_optimizer_new (&configs[c], model[k]->n_weights);
          }
        size_t nw = model[0]->n_weights;
        GRand *rng = g_rand_new_with_seed (11);
        float x[N * T], y[N], dpred[N];
        guint8 *live = g_new (guint8, nw);
        float *before = g_new (float, nw);
        gboolean some_outside = FALSE;
        for (int step = 0; step < STEPS; step++)
          {
            random_token_batch (rng, x, y, N, T, VOCAB);
            for (int k = 0; k < 2; k++)
              {
                caml_model_zero_grad (model[k]);
                const float *pred = caml_model_forward (model[k], x, N);
                caml_loss_compute (CAML_LOSS_SIGMOID_XENT, dpred, pred, y, N, 1);
                caml_model_backward (model[k], x, dpred, N);
              }
            memset (live, 0, nw);
            caml_model_foreach_grad_range (model[0], mark_range, live);
            for (size_t i = 0; i < nw; i++)
              {
                if (!live[i])
                  {
                    assert_true (model[0]->dw[i] == 0.0f);
                    some_outside = TRUE;
                  }
                assert_true (model[0]->dw[i] == model[1]->dw[i]);
              }
            memcpy (before, model[1]->w, nw * sizeof (float));
            for (int k = 0; k < 2; k++)
              caml_optimizer_step (opt[k], model[k], step);
            assert_memory_equal (model[0]->w, model[1]->w, nw * sizeof (float));
            if (caml_optimizer_is_sparse (opt[1]))
              for (size_t i = 0; i < nw; i++)
                if (!live[i] && memcmp (&model[1]->w[i], &before[i], sizeof (float)) != 0)
                  fail_msg ("%s (weight decay %g), model %zu: weight %zu, without a "
                            "gradient, moved on the dense path at step %d",
                            caml_optimizer_names[configs[c].kind], configs[c].weight_decay,
                            m, i, step);
          }
        /* The batches never cover the vocabulary: rows were skipped. */
        assert_true (some_outside);
        caml_model_zero_grad (model[0]);
        for (size_t i = 0; i < nw; i++)
          assert_true (model[0]->dw[i] == 0.0f);
        g_free (live);
        g_free (before);
        g_rand_free (rng);
        for (int k = 0; k < 2; k++)
          {
            caml_optimizer_free (opt[k]);
            caml_model_free (model[k]);
          }
      }
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
    cmocka_unit_test (test_sparse_grads_match_dense),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
