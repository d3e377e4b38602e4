/* test-ca-cnn.c — CA-CNN and the convolutional CA-RES: gradient checks over
 * activations, paddings and strides, the fused [W; u] kernel against the
 * naive reference, the σ-map, the open-gate and ResNet special cases. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "caml.h"
#include "conv-reference.h"
#include "gradcheck.h"

enum { SAME = 0, VALID = 1 };
/* Parameter order of ca_cnn: W, u, b, b_chi, w0. */
enum { P_W, P_U, P_B, P_B_CHI, P_W0 };

static void
assert_close (double got, double want, double tol, const char *what, size_t index)
{
  if (fabs (got - want) > tol * fmax (1.0, fabs (want)))
    fail_msg ("%s[%zu]: %.7g, reference %.7g", what, index, got, want);
}

static void
test_ca_cnn_gradients (void **state)
{
  CamlShape in = caml_shape_image (2, 5, 5);
  guint32 seed = 200;
  for (int act = 0; act < CAML_N_ACTS; act++)
    for (int pad = SAME; pad <= VALID; pad++)
      for (int stride = 1; stride <= 2; stride++)
        {
          CamlLayerSpec spec = caml_test_spec ("ca_cnn", "kernel", 3.0,
                                               "stride", (double) stride,
                                               "padding", (double) pad, "depth", 2.0,
                                               "activation", (double) act, NULL);
          caml_gradcheck_layer (&spec, &in, 2, seed++);
        }
  /* An even kernel on one channel. */
  CamlShape one = caml_shape_image (1, 5, 4);
  CamlLayerSpec spec = caml_test_spec ("ca_cnn", "kernel", 2.0, "depth", 3.0, NULL);
  caml_gradcheck_layer (&spec, &one, 2, seed++);
}

static void
test_ca_cnn_matches_reference (void **state)
{
  GRand *rng = g_rand_new_with_seed (91);
  for (int t = 0; t < 32; t++)
    {
      int c = t % 2 == 0 ? 1 : 3;
      int k = g_rand_int_range (rng, 1, 7);
      int stride = g_rand_int_range (rng, 1, 3);
      gboolean same = t % 4 < 2;
      int h = g_rand_int_range (rng, k, k + 8), w = g_rand_int_range (rng, k, k + 8);
      int m = g_rand_int_range (rng, 1, 5), n = g_rand_int_range (rng, 1, 4);
      CamlActivation act = (CamlActivation) (t % CAML_N_ACTS);
      if (t == 0)
        {
          /* The MNIST shape over several im2col blocks, so both workers run
           * and their bias accumulators are summed. */
          c = 1; h = w = 28; k = 8; stride = 1; same = TRUE; m = 3; n = 7;
        }
      CamlRefConv r;
      caml_ref_conv_init (&r, n, c, h, w, m, k, stride, same);

      CamlShape in = caml_shape_image (c, h, w);
      CamlLayerSpec spec = caml_test_spec ("ca_cnn", "kernel", (double) k,
                                           "stride", (double) stride,
                                           "padding", (double) (same ? SAME : VALID),
                                           "depth", (double) m, "activation", (double) act,
                                           NULL);
      CamlModel *model = caml_model_new (&in, &spec, 1, rng, NULL);
      assert_non_null (model);
      for (size_t i = 0; i < model->n_weights; i++)
        model->w[i] += (float) g_rand_double_range (rng, -0.3, 0.3);
      CamlLayer *layer = model->layers[0];
      CamlRefCaCnnParams p = { layer->params[P_W].w, layer->params[P_U].w,
                               layer->params[P_B].w, layer->params[P_B_CHI].w,
                               layer->params[P_W0].w };

      size_t n_in = caml_ref_conv_in_size (&r), n_out = caml_ref_conv_out_size (&r);
      size_t P = (size_t) r.oh * r.ow, K = (size_t) c * k * k;
      float *x = g_new (float, n_in), *dout = g_new (float, n_out), *dx = g_new (float, n_in);
      double *rdout = g_new (double, n_out);
      for (size_t i = 0; i < n_in; i++)
        x[i] = (float) g_rand_double_range (rng, -1, 1);
      for (size_t i = 0; i < n_out; i++)
        rdout[i] = dout[i] = (float) g_rand_double_range (rng, -1, 1);

      double *out_ref = g_new (double, n_out), *chi_ref = g_new (double, n * P);
      caml_ref_ca_cnn_forward (&r, act, &p, out_ref, chi_ref, x);
      const float *out = caml_model_forward (model, x, n);
      for (size_t i = 0; i < n_out; i++)
        assert_close (out[i], out_ref[i], 1e-4, "ca_cnn out", i);
      int per = 0;
      const float *chi = layer->ops->chi (layer, &per);
      assert_int_equal (per, (int) P);
      for (size_t i = 0; i < n * P; i++)
        assert_close (chi[i], chi_ref[i], 1e-5, "ca_cnn chi", i);

      double *rdx = g_new (double, n_in), *rdW = g_new (double, m * K);
      double *rdu = g_new (double, K), *rdb = g_new (double, m), *rdw0 = g_new (double, m);
      double rdb_chi;
      caml_ref_ca_cnn_backward (&r, act, &p, rdout, x, rdx, rdW, rdu, rdb, &rdb_chi, rdw0);
      caml_model_zero_grad (model);
      layer->ops->backward (layer, dx, dout, x, out, n);
      for (size_t i = 0; i < n_in; i++)
        assert_close (dx[i], rdx[i], 1e-4, "ca_cnn dinp", i);
      for (size_t i = 0; i < m * K; i++)
        assert_close (layer->params[P_W].dw[i], rdW[i], 1e-4, "ca_cnn dW", i);
      for (size_t i = 0; i < K; i++)
        assert_close (layer->params[P_U].dw[i], rdu[i], 1e-4, "ca_cnn du", i);
      for (int j = 0; j < m; j++)
        {
          assert_close (layer->params[P_B].dw[j], rdb[j], 1e-4, "ca_cnn db", j);
          assert_close (layer->params[P_W0].dw[j], rdw0[j], 1e-4, "ca_cnn dw0", j);
        }
      assert_close (layer->params[P_B_CHI].dw[0], rdb_chi, 1e-4, "ca_cnn db_chi", 0);

      g_free (x); g_free (dout); g_free (dx); g_free (rdout); g_free (out_ref);
      g_free (chi_ref); g_free (rdx); g_free (rdW); g_free (rdu); g_free (rdb); g_free (rdw0);
      caml_model_free (model);
    }
  g_rand_free (rng);
}

/* The σ-map: (N, OH·OW) gates, one per position, equal to the formula. */
static void
test_ca_cnn_chi_map (void **state)
{
  const int C = 2, H = 6, W = 7, k = 3, D = 4, N = 3;
  CamlShape in = caml_shape_image (C, H, W);
  CamlLayerSpec spec = caml_test_spec ("ca_cnn", "kernel", (double) k, "depth", (double) D,
                                       NULL);
  GRand *rng = g_rand_new_with_seed (17);
  CamlModel *model = caml_model_new (&in, &spec, 1, rng, NULL);
  CamlLayer *layer = model->layers[0];
  assert_true (layer->ops->context_aware);
  assert_string_equal (layer->ops->baseline, "conv2d");
  layer->params[P_B_CHI].w[0] = 0.2f;
  float x[N * C * H * W];
  for (int i = 0; i < N * C * H * W; i++)
    x[i] = (float) g_rand_double_range (rng, -1, 1);
  const float *out = caml_model_forward (model, x, N);
  int per = 0;
  const float *chi = layer->ops->chi (layer, &per);
  assert_int_equal (per, H * W);   /* stride 1, same: an H×W σ-map per image */

  /* Sample 2, position (0, 4): the top row, so the patch is partly zero border. */
  const int s = 2, oy = 0, ox = 4;
  const float *u = layer->params[P_U].w, *Wt = layer->params[P_W].w;
  double zu = layer->params[P_B_CHI].w[0];
  double zv[D];
  for (int j = 0; j < D; j++)
    zv[j] = layer->params[P_B].w[j];
  for (int c = 0; c < C; c++)
    for (int a = 0; a < k; a++)
      for (int b = 0; b < k; b++)
        {
          int iy = oy + a - 1, ix = ox + b - 1;
          if (iy < 0 || iy >= H || ix < 0 || ix >= W)
            continue;
          double xv = x[((s * C + c) * H + iy) * W + ix];
          zu += u[(c * k + a) * k + b] * xv;
          for (int j = 0; j < D; j++)
            zv[j] += Wt[((j * C + c) * k + a) * k + b] * xv;
        }
  double expect_chi = 1.0 / (1.0 + exp (-zu));
  assert_float_equal (chi[s * H * W + oy * W + ox], expect_chi, 1e-5);
  for (int j = 0; j < D; j++)
    {
      double v = fmax (zv[j], 0.0);   /* default activation: relu */
      double expect = expect_chi * v + (1 - expect_chi) * layer->params[P_W0].w[j];
      assert_float_equal (out[((s * D + j) * H + oy) * W + ox], expect, 1e-5);
    }
  caml_model_free (model);
  g_rand_free (rng);
}

/* With u = 0 and b_χ = +40 every gate is 1: CA-CNN is conv2d with the same W, b. */
static void
test_ca_cnn_open_gate_is_conv2d (void **state)
{
  const int C = 3, H = 7, W = 6, N = 2;
  CamlShape in = caml_shape_image (C, H, W);
  for (int stride = 1; stride <= 2; stride++)
    {
      CamlLayerSpec ca = caml_test_spec ("ca_cnn", "kernel", 4.0, "stride", (double) stride,
                                         "depth", 5.0, "activation", (double) CAML_ACT_TANH,
                                         NULL);
      CamlLayerSpec conv = caml_test_spec ("conv2d", "kernel", 4.0, "stride", (double) stride,
                                           "depth", 5.0, "activation", (double) CAML_ACT_TANH,
                                           NULL);
      GRand *rng = g_rand_new_with_seed (23);
      CamlModel *m1 = caml_model_new (&in, &ca, 1, rng, NULL);
      CamlModel *m2 = caml_model_new (&in, &conv, 1, rng, NULL);
      CamlLayer *l1 = m1->layers[0], *l2 = m2->layers[0];
      for (int j = 0; j < 5; j++)
        l2->params[1].w[j] = (float) g_rand_double_range (rng, -0.5, 0.5);
      memcpy (l1->params[P_W].w, l2->params[0].w, l2->params[0].count * sizeof (float));
      memcpy (l1->params[P_B].w, l2->params[1].w, 5 * sizeof (float));
      memset (l1->params[P_U].w, 0, l1->params[P_U].count * sizeof (float));
      l1->params[P_B_CHI].w[0] = 40.0f;
      float x[N * C * H * W];
      for (int i = 0; i < N * C * H * W; i++)
        x[i] = (float) g_rand_double_range (rng, -1, 1);
      const float *a = caml_model_forward (m1, x, N);
      const float *b = caml_model_forward (m2, x, N);
      size_t n_out = N * caml_shape_size (&l1->out);
      assert_true (caml_shape_equal (&l1->out, &l2->out));
      for (size_t i = 0; i < n_out; i++)
        assert_float_equal (a[i], b[i], 1e-6);
      caml_model_free (m1);
      caml_model_free (m2);
      g_rand_free (rng);
    }
}

static void
test_ca_cnn_options_map_to_conv2d (void **state)
{
  const CamlLayerOps *ca = caml_layer_lookup ("ca_cnn");
  const CamlLayerOps *conv = caml_layer_lookup (ca->baseline);
  for (int i = 0; i < ca->n_options; i++)
    assert_true (caml_layer_ops_option_index (conv, ca->options[i].key) >= 0);
  const CamlLayerOps *res = caml_layer_lookup ("ca_res_conv");
  assert_string_equal (res->baseline, "conv2d");
}

static void
test_ca_res_conv_gradients (void **state)
{
  guint32 seed = 300;
  for (int l = 1; l <= 3; l++)
    for (int nv = 1; nv <= 2; nv++)
      for (int ns = 1; ns <= 2; ns++)
        for (int b = 0; b <= 1; b++)
          for (int form = 0; form <= 1; form++)
            {
              if ((b == 1 && ns > 1) || (l == 1 && (nv > 1 || ns > 1 || form == 1)))
                continue;   /* n_σ is ignored when b = 1; l = 1 uses neither */
              CamlShape in = caml_shape_image (2, 4, 4);
              CamlLayerSpec spec = caml_test_spec ("ca_res_conv", "kernel", 3.0,
                                                   "depth", form == 1 ? 2.0 : 3.0,
                                                   "sublayers", (double) l,
                                                   "n_v", (double) nv,
                                                   "n_sigma", (double) ns,
                                                   "always_on", (double) b,
                                                   "v_form", (double) form,
                                                   "activation", (double) CAML_ACT_TANH,
                                                   NULL);
              caml_gradcheck_layer (&spec, &in, 2, seed++);
            }
  /* An even kernel, relu. */
  CamlShape in = caml_shape_image (1, 4, 5);
  CamlLayerSpec spec = caml_test_spec ("ca_res_conv", "kernel", 2.0, "depth", 2.0,
                                       "sublayers", 2.0, NULL);
  caml_gradcheck_layer (&spec, &in, 2, seed++);
}

/* (2, 1, –, 1), v_2 = c + w_1, v_1 = relu(conv(c)): out = c + relu(W ⊛ c + b). */
static void
test_ca_res_conv_is_resnet_block (void **state)
{
  const int C = 3, H = 5, W = 6, N = 2, k = 3;
  CamlShape in = caml_shape_image (C, H, W);
  CamlLayerSpec spec = caml_test_spec ("ca_res_conv", "kernel", (double) k,
                                       "depth", (double) C, "sublayers", 2.0, "n_v", 1.0,
                                       "always_on", 1.0, "v_form", 1.0,
                                       "activation", (double) CAML_ACT_RELU, NULL);
  GRand *rng = g_rand_new_with_seed (31);
  CamlModel *model = caml_model_new (&in, &spec, 1, rng, NULL);
  assert_non_null (model);
  CamlLayer *layer = model->layers[0];
  assert_int_equal (model->n_weights, C * C * k * k + C);   /* only v_1's W and b */
  for (int j = 0; j < C; j++)
    layer->params[1].w[j] = (float) g_rand_double_range (rng, -0.3, 0.3);
  int per = -1;
  float x[N * C * H * W];
  for (int i = 0; i < N * C * H * W; i++)
    x[i] = (float) g_rand_double_range (rng, -1, 1);
  const float *out = caml_model_forward (model, x, N);
  assert_null (layer->ops->chi (layer, &per));

  CamlRefConv r;
  caml_ref_conv_init (&r, N, C, H, W, C, k, 1, TRUE);
  double y[N * C * H * W];
  caml_ref_conv_forward (&r, y, x, layer->params[0].w);
  for (int i = 0; i < N * C * H * W; i++)
    {
      int j = i / (H * W) % C;
      double expect = x[i] + fmax (y[i] + layer->params[1].w[j], 0.0);
      assert_float_equal (out[i], expect, 1e-5);
    }
  caml_model_free (model);
  g_rand_free (rng);
}

static void
test_ca_res_conv_chi_and_errors (void **state)
{
  CamlShape in = caml_shape_image (2, 5, 4);
  CamlLayerSpec spec = caml_test_spec ("ca_res_conv", "depth", 3.0, "sublayers", 3.0, NULL);
  GRand *rng = g_rand_new_with_seed (1);
  CamlModel *model = caml_model_new (&in, &spec, 1, rng, NULL);
  g_rand_free (rng);
  assert_non_null (model);
  CamlLayer *layer = model->layers[0];
  assert_int_equal (layer->out.dims[0], 3);
  assert_int_equal (layer->out.dims[1], 5);
  assert_int_equal (layer->out.dims[2], 4);
  float x[2 * 2 * 5 * 4] = { 0 };
  caml_model_forward (model, x, 2);
  int per = 0;
  const float *chi = layer->ops->chi (layer, &per);
  assert_non_null (chi);
  assert_int_equal (per, 20);
  for (int i = 0; i < 40; i++)
    assert_true (chi[i] > 0.0f && chi[i] < 1.0f);
  caml_model_free (model);

  GError *error = NULL;
  spec = caml_test_spec ("ca_res_conv", "depth", 3.0, "v_form", 1.0, NULL);
  assert_null (caml_model_new (&in, &spec, 1, NULL, &error));
  assert_int_equal (error->code, CAML_ERROR_SHAPE);
  assert_non_null (strstr (error->message, "depth 3"));
  g_clear_error (&error);

  CamlShape flat = caml_shape_flat (10);
  spec = caml_test_spec ("ca_cnn", NULL);
  assert_null (caml_model_new (&flat, &spec, 1, NULL, &error));
  assert_int_equal (error->code, CAML_ERROR_SHAPE);
  g_clear_error (&error);
}

/* A CA-CNN image classifier end to end (the MNIST recipe in miniature). */
static void
test_ca_cnn_model_gradients (void **state)
{
  CamlShape in = caml_shape_image (1, 6, 6);
  CamlLayerSpec specs[] = {
    caml_test_spec ("ca_cnn", "kernel", 4.0, "depth", 2.0, "activation",
                    (double) CAML_ACT_TANH, NULL),
    caml_test_spec ("dense", "units", 5.0, "activation", (double) CAML_ACT_TANH, NULL),
    caml_test_spec ("dense", "units", 3.0, NULL),
  };
  GRand *rng = g_rand_new_with_seed (13);
  CamlModel *model = caml_model_new (&in, specs, 3, rng, NULL);
  assert_non_null (model);
  float x[4 * 36], y[4] = { 1, 0, 2, 2 };
  for (int i = 0; i < 4 * 36; i++)
    x[i] = (float) g_rand_double (rng);
  caml_gradcheck_model (model, CAML_LOSS_SOFTMAX_XENT, x, y, 4);
  caml_model_free (model);
  g_rand_free (rng);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_ca_cnn_gradients),
    cmocka_unit_test (test_ca_cnn_matches_reference),
    cmocka_unit_test (test_ca_cnn_chi_map),
    cmocka_unit_test (test_ca_cnn_open_gate_is_conv2d),
    cmocka_unit_test (test_ca_cnn_options_map_to_conv2d),
    cmocka_unit_test (test_ca_res_conv_gradients),
    cmocka_unit_test (test_ca_res_conv_is_resnet_block),
    cmocka_unit_test (test_ca_res_conv_chi_and_errors),
    cmocka_unit_test (test_ca_cnn_model_gradients),
  };
  return cmocka_run_group_tests_name ("ca-cnn", tests, NULL, NULL);
}
