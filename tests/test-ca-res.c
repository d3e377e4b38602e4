/* test-ca-res.c — CA-RES in every (l, n_v, n_σ, b) and v-form combination the
 * presets use and then some, the ResNet special case, and em_steps on it. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "caml-private.h"   /* tests the engine's internals */
#include "gradcheck.h"

static void
test_ca_res_gradients_all_configurations (void **state)
{
  CamlShape in = caml_shape_flat (3);
  guint32 seed = 100;
  for (int l = 1; l <= 4; l++)
    for (int nv = 1; nv <= 3; nv++)
      for (int ns = 1; ns <= 3; ns++)
        for (int b = 0; b <= 1; b++)
          for (int form = 0; form <= 1; form++)
            {
              if (b == 1 && ns > 1)
                continue;                    /* n_σ is ignored when b = 1 */
              int units = form == 1 ? 3 : 4; /* the sum form needs equal widths */
              CamlLayerSpec spec = caml_test_spec ("ca_res", "units", (double) units,
                                                   "sublayers", (double) l,
                                                   "n_v", (double) nv,
                                                   "n_sigma", (double) ns,
                                                   "always_on", (double) b,
                                                   "v_form", (double) form, NULL);
              caml_gradcheck_layer (&spec, &in, 3, seed++);
            }
}

static void
test_ca_res_parameter_counts (void **state)
{
  /* (3, 2, 1, 0), dense, D = 2, U = 5:
   * k=1: W 5×2 + b 5 + u 2 + b_χ 1 + w0 5          = 23
   * k=2: W 5×7 + b 5 + u 7 + b_χ 1 + w0 5          = 53
   * k=3: W 5×12 + b 5 + u 7 + b_χ 1 + w0 5         = 78 */
  CamlShape in = caml_shape_flat (2);
  CamlLayerSpec spec = caml_test_spec ("ca_res", "units", 5.0, "sublayers", 3.0,
                                       "n_v", 2.0, "n_sigma", 1.0, NULL);
  CamlModel *model = caml_model_new (&in, &spec, 1, NULL, NULL);
  assert_non_null (model);
  assert_int_equal (model->n_weights, 23 + 53 + 78);
  caml_model_free (model);
}

/* (2, 1, –, 1) with v_2 = c + w_1 and v_1 = relu(W c + b) is a ResNet block:
 * out = c + relu(W c + b). */
static void
test_ca_res_is_resnet_block (void **state)
{
  const int D = 4, N = 3;
  CamlShape in = caml_shape_flat (D);
  CamlLayerSpec spec = caml_test_spec ("ca_res", "units", (double) D, "sublayers", 2.0,
                                       "n_v", 1.0, "always_on", 1.0, "v_form", 1.0,
                                       "activation", (double) CAML_ACT_RELU, NULL);
  GRand *rng = g_rand_new_with_seed (5);
  CamlModel *model = caml_model_new (&in, &spec, 1, rng, NULL);
  assert_non_null (model);
  /* Only v_1's W and b exist: no gates, no defaults, no weights for v_2. */
  assert_int_equal (model->n_weights, D * D + D);
  const float *W = model->w, *b = model->w + D * D;

  float x[N * D];
  for (int i = 0; i < N * D; i++)
    x[i] = (float) g_rand_double_range (rng, -1, 1);
  const float *out = caml_model_forward (model, x, N);
  for (int s = 0; s < N; s++)
    for (int j = 0; j < D; j++)
      {
        double pre = b[j];
        for (int a = 0; a < D; a++)
          pre += (double) W[j * D + a] * x[s * D + a];
        double expect = x[s * D + j] + fmax (pre, 0.0);
        assert_float_equal (out[s * D + j], expect, 1e-5);
      }
  caml_model_free (model);
  g_rand_free (rng);
}

/* Under em_steps = E, gate parameters move only in even blocks of E steps
 * and value parameters only in odd ones; the readout always moves. */
static void
test_em_steps_on_ca_res (void **state)
{
  CamlShape in = caml_shape_flat (2);
  CamlLayerSpec specs[] = {
    caml_test_spec ("ca_res", "units", 3.0, "sublayers", 2.0, "n_v", 1.0, "n_sigma", 1.0, NULL),
    caml_test_spec ("dense", "units", 1.0, NULL),
  };
  GRand *rng = g_rand_new_with_seed (8);
  CamlModel *model = caml_model_new (&in, specs, 2, rng, NULL);
  CamlDataset *train, *test;
  caml_data_surface (11, 0.2, 1, &train, &test);
  caml_gradcheck_model (model, CAML_LOSS_MSE, train->x, train->y, train->n);

  CamlOptimizerConfig config;
  caml_optimizer_config_defaults (&config, CAML_OPTIM_SGD);
  config.lr = 0.1;
  config.em_steps = 3;
  CamlOptimizer *opt = caml_optimizer_new (&config, model->n_weights);
  float *before = g_new (float, model->n_weights);
  float *dpred = g_new (float, train->n);
  for (long step = 0; step < 12; step++)
    {
      memcpy (before, model->w, model->n_weights * sizeof (float));
      caml_model_zero_grad (model);
      const float *pred = caml_model_forward (model, train->x, train->n);
      caml_loss_compute (CAML_LOSS_MSE, dpred, pred, train->y, train->n, 1);
      caml_model_backward (model, train->x, dpred, train->n);
      caml_optimizer_step (opt, model, step);
      gboolean gate_phase = (step / 3) % 2 == 0;
      for (int i = 0; i < model->n_layers; i++)
        for (int j = 0; j < model->layers[i]->n_params; j++)
          {
            CamlParam *p = &model->layers[i]->params[j];
            gboolean changed = memcmp (before + p->offset, p->w,
                                       p->count * sizeof (float)) != 0;
            gboolean expected = p->group == CAML_GROUP_ALWAYS
                                || (p->group == CAML_GROUP_GATE) == gate_phase;
            if (changed != expected)
              fail_msg ("step %ld, layer %d param %s: changed=%d, expected %d",
                        step, i, p->name, changed, expected);
          }
    }
  g_free (before);
  g_free (dpred);
  caml_optimizer_free (opt);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_model_free (model);
  g_rand_free (rng);
}

/* ---- added by review: forward reference for every CA-RES form, and the
 * gradient check over every activation ---- */

static double
ref_act (CamlActivation a, double x)
{
  switch (a)
    {
    case CAML_ACT_TANH:    return tanh (x);
    case CAML_ACT_RELU:    return x > 0 ? x : 0;
    case CAML_ACT_SIGMOID: return 1 / (1 + exp (-x));
    default:               return x;
    }
}

/* Eq. 42 written out in double for one sample c (D), reading the parameters
 * in declaration order (per sublayer: W, b when dense; u, b_χ, w0 when gated)
 * and the documented input order [c, w_{k−1}, …, w_{k−m}]. out (U). */
static void
ca_res_reference (CamlLayer *layer, const float *c, int d, int u, int l, int n_v, int n_s,
                  gboolean always_on, gboolean sum, CamlActivation act, double *out)
{
  double w[12][64];
  int p = 0;
  for (int k = 0; k < l; k++)
    {
      int nv = MIN (n_v, k), ns = MIN (n_s, k);
      double v[64], cat[256];
      /* v's input */
      for (int a = 0; a < d; a++)
        cat[a] = c[a];
      for (int j = 1; j <= nv; j++)
        for (int a = 0; a < u; a++)
          cat[d + (j - 1) * u + a] = w[k - j][a];
      if (k == 0 || !sum)
        {
          int dv = d + nv * u;
          const float *W = layer->params[p++].w, *b = layer->params[p++].w;
          for (int j = 0; j < u; j++)
            {
              double z = b[j];
              for (int a = 0; a < dv; a++)
                z += (double) W[j * dv + a] * cat[a];
              v[j] = ref_act (act, z);
            }
        }
      else
        for (int j = 0; j < u; j++)
          {
            v[j] = c[j];
            for (int i = 1; i <= nv; i++)
              v[j] += w[k - i][j];
          }
      if (always_on)
        {
          for (int j = 0; j < u; j++)
            w[k][j] = v[j];
          continue;
        }
      int dc = d + ns * u;
      for (int j = 1; j <= ns; j++)
        for (int a = 0; a < u; a++)
          cat[d + (j - 1) * u + a] = w[k - j][a];
      const float *uu = layer->params[p++].w, *b_chi = layer->params[p++].w;
      const float *w0 = layer->params[p++].w;
      double z = b_chi[0];
      for (int a = 0; a < dc; a++)
        z += (double) uu[a] * cat[a];
      double chi = 1 / (1 + exp (-z));
      for (int j = 0; j < u; j++)
        w[k][j] = chi * v[j] + (1 - chi) * w0[j];
    }
  assert_int_equal (p, layer->n_params);   /* every parameter used */
  for (int j = 0; j < u; j++)
    out[j] = w[l - 1][j];
}

static void
test_ca_res_matches_reference (void **state)
{
  (void) state;
  /* (D, U, l, n_v, n_σ, b, sum, activation) */
  const int cases[][8] = {
    { 3, 4, 3, 2, 2, 0, 0, CAML_ACT_TANH },
    { 2, 5, 4, 3, 1, 0, 0, CAML_ACT_SIGMOID },
    { 2, 3, 4, 1, 3, 0, 0, CAML_ACT_IDENTITY },
    { 4, 4, 3, 2, 1, 0, 1, CAML_ACT_RELU },
    { 3, 3, 4, 2, 3, 0, 1, CAML_ACT_TANH },
    { 3, 2, 3, 2, 1, 1, 0, CAML_ACT_RELU },
    { 3, 3, 4, 3, 1, 1, 1, CAML_ACT_SIGMOID },
    { 2, 2, 1, 1, 1, 0, 0, CAML_ACT_TANH },
  };
  enum { N = 4 };
  for (gsize t = 0; t < G_N_ELEMENTS (cases); t++)
    {
      const int *cs = cases[t];
      int d = cs[0], u = cs[1];
      CamlShape in = caml_shape_flat (d);
      CamlLayerSpec spec = caml_test_spec ("ca_res", "units", (double) u,
                                           "sublayers", (double) cs[2], "n_v", (double) cs[3],
                                           "n_sigma", (double) cs[4],
                                           "always_on", (double) cs[5],
                                           "v_form", (double) cs[6],
                                           "activation", (double) cs[7], NULL);
      GRand *rng = g_rand_new_with_seed (700 + t);
      CamlModel *model = caml_model_new (&in, &spec, 1, rng, NULL);
      assert_non_null (model);
      for (size_t i = 0; i < model->n_weights; i++)
        model->w[i] = (float) g_rand_double_range (rng, -0.8, 0.8);
      float x[N * 8];
      for (int i = 0; i < N * d; i++)
        x[i] = (float) g_rand_double_range (rng, -1, 1);
      const float *out = caml_model_forward (model, x, N);
      for (int s = 0; s < N; s++)
        {
          double ref[64];
          ca_res_reference (model->layers[0], x + s * d, d, u, cs[2], cs[3], cs[4], cs[5],
                            cs[6], (CamlActivation) cs[7], ref);
          for (int j = 0; j < u; j++)
            if (fabs (out[s * u + j] - ref[j]) > 1e-5 * fmax (1.0, fabs (ref[j])))
              fail_msg ("case %zu sample %d unit %d: %.7g, reference %.7g", t, s, j,
                        out[s * u + j], ref[j]);
        }
      caml_model_free (model);
      g_rand_free (rng);
    }
}

/* The existing check covers tanh only: every other activation, in a dense
 * and a sum block, gated and always on. */
static void
test_ca_res_gradients_activations (void **state)
{
  (void) state;
  CamlShape in = caml_shape_flat (3);
  guint32 seed = 800;
  for (int act = 0; act < CAML_N_ACTS; act++)
    for (int form = 0; form <= 1; form++)
      for (int b = 0; b <= 1; b++)
        {
          CamlLayerSpec spec = caml_test_spec ("ca_res", "units", 3.0, "sublayers", 3.0,
                                               "n_v", 2.0, "n_sigma", 2.0,
                                               "always_on", (double) b,
                                               "v_form", (double) form,
                                               "activation", (double) act, NULL);
          caml_gradcheck_layer (&spec, &in, 4, seed++);
        }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_ca_res_gradients_all_configurations),
    cmocka_unit_test (test_ca_res_parameter_counts),
    cmocka_unit_test (test_ca_res_is_resnet_block),
    cmocka_unit_test (test_em_steps_on_ca_res),
    cmocka_unit_test (test_ca_res_matches_reference),
    cmocka_unit_test (test_ca_res_gradients_activations),
  };
  return cmocka_run_group_tests_name ("ca-res", tests, NULL, NULL);
}
