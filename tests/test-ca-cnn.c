/* test-ca-cnn.c — CA-CNN and the convolutional CA-RES: gradient checks over
 * activations, paddings and strides, the fused [W; u] kernel against the
 * naive reference, the σ-map, the open-gate and ResNet special cases. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "caml-private.h"   /* tests the engine's internals */
#include "layers/layers.h"   /* caml_conv_kernels_force */
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

/* Case t of the comparison with the reference: small random shapes, or
 * (wide) rows of up to two vectors and more, more channels than one kernel
 * call takes, kernels wider than one weight-gradient call. */
static void
test_ca_cnn_matches_reference_case (GRand *rng, int t, gboolean wide)
{
  {
    {
      int c = t % 2 == 0 ? 1 : 3;
      int k = g_rand_int_range (rng, 1, 7);
      int stride = g_rand_int_range (rng, 1, 3);
      gboolean same = t % 4 < 2;
      int h = g_rand_int_range (rng, k, k + 8), w = g_rand_int_range (rng, k, k + 8);
      int m = g_rand_int_range (rng, 1, 5), n = g_rand_int_range (rng, 1, 4);
      CamlActivation act = (CamlActivation) (t % CAML_N_ACTS);
      if (wide)
        {
          k = g_rand_int_range (rng, 1, 12);
          stride = 1;
          h = g_rand_int_range (rng, k, k + 6);
          w = g_rand_int_range (rng, MAX (k, 12), 45);
          m = g_rand_int_range (rng, 1, 20);
          n = g_rand_int_range (rng, 1, 6);
        }
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
  }
}

/* Every case under every instruction set this CPU runs, on 1 thread and
 * on 3 (an odd split of the samples). */
static void
test_ca_cnn_matches_reference (void **state)
{
  static const char *const isas[] = { "AVX-512", "AVX2", "SSE2", "generic" };
  int ran = 0;
  for (gsize i = 0; i < G_N_ELEMENTS (isas); i++)
    {
      if (!caml_conv_kernels_force (isas[i]))
        continue;
      ran++;
      for (int threads = 1; threads <= 3; threads += 2)
        {
          caml_set_threads (threads);
          GRand *rng = g_rand_new_with_seed (91);
          for (int t = 0; t < 32; t++)
            test_ca_cnn_matches_reference_case (rng, t, FALSE);
          for (int t = 0; t < 12; t++)
            test_ca_cnn_matches_reference_case (rng, t, TRUE);
          g_rand_free (rng);
        }
    }
  caml_conv_kernels_force (NULL);
  caml_set_threads (0);
  assert_true (ran >= 1);
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

/* ---- added by review: the convolutional CA-RES against the naive
 * convolution, every form; and batches over several im2col blocks ---- */

/* Sublayer input [c, w_{k−1}, …, w_{k−m}] per sample as floats (N, C + m·D, H, W). */
static float *
res_conv_cat (const float *c, double *const *w, int k, int m, int n, int C, int D, int P)
{
  int ch = C + m * D;
  float *cat = g_new (float, (size_t) n * ch * P);
  for (int i = 0; i < n; i++)
    {
      memcpy (cat + (size_t) i * ch * P, c + (size_t) i * C * P, (size_t) C * P * sizeof (float));
      for (int j = 1; j <= m; j++)
        for (size_t a = 0; a < (size_t) D * P; a++)
          cat[(size_t) i * ch * P + (size_t) (C + (j - 1) * D) * P + a]
            = (float) w[k - j][(size_t) i * D * P + a];
    }
  return cat;
}

static void
check_ca_res_conv_reference (int C, int D, int H, int W, int k, int l, int n_v, int n_s,
                             gboolean always_on, gboolean sum, CamlActivation act, int n,
                             guint32 seed)
{
  CamlShape in = caml_shape_image (C, H, W);
  CamlLayerSpec spec = caml_test_spec ("ca_res_conv", "kernel", (double) k, "depth", (double) D,
                                       "sublayers", (double) l, "n_v", (double) n_v,
                                       "n_sigma", (double) n_s, "always_on", (double) always_on,
                                       "v_form", (double) sum, "activation", (double) act, NULL);
  GRand *rng = g_rand_new_with_seed (seed);
  CamlModel *model = caml_model_new (&in, &spec, 1, rng, NULL);
  assert_non_null (model);
  for (size_t i = 0; i < model->n_weights; i++)
    model->w[i] = (float) g_rand_double_range (rng, -0.4, 0.4);
  CamlLayer *layer = model->layers[0];
  const int P = H * W;
  size_t n_in = (size_t) n * C * P, n_out = (size_t) n * D * P;
  float *x = g_new (float, n_in);
  for (size_t i = 0; i < n_in; i++)
    x[i] = (float) g_rand_double_range (rng, -1, 1);
  const float *out = caml_model_forward (model, x, n);

  double *w[12];
  double *chi = g_new (double, (size_t) n * P);
  int p = 0;
  for (int s = 0; s < l; s++)
    {
      int nv = MIN (n_v, s), ns = MIN (n_s, s);
      w[s] = g_new (double, n_out);
      double *v = g_new (double, n_out);
      if (s == 0 || !sum)
        {
          float *cat = res_conv_cat (x, w, s, nv, n, C, D, P);
          CamlRefConv r;
          caml_ref_conv_init (&r, n, C + nv * D, H, W, D, k, 1, TRUE);
          const float *Wt = layer->params[p++].w, *b = layer->params[p++].w;
          caml_ref_conv_forward (&r, v, cat, Wt);
          for (size_t a = 0; a < n_out; a++)
            v[a] = caml_ref_act (act, v[a] + b[a / P % D]);
          g_free (cat);
        }
      else
        for (size_t a = 0; a < n_out; a++)
          {
            v[a] = x[a];
            for (int j = 1; j <= nv; j++)
              v[a] += w[s - j][a];
          }
      if (always_on)
        memcpy (w[s], v, n_out * sizeof (double));
      else
        {
          float *cat = res_conv_cat (x, w, s, ns, n, C, D, P);
          CamlRefConv r;
          caml_ref_conv_init (&r, n, C + ns * D, H, W, 1, k, 1, TRUE);
          const float *u = layer->params[p++].w, *b_chi = layer->params[p++].w;
          const float *w0 = layer->params[p++].w;
          caml_ref_conv_forward (&r, chi, cat, u);
          for (size_t q = 0; q < (size_t) n * P; q++)
            chi[q] = 1 / (1 + exp (-(chi[q] + b_chi[0])));
          for (size_t a = 0; a < n_out; a++)
            {
              size_t i = a / ((size_t) D * P), q = a % P;
              double cq = chi[i * P + q];
              w[s][a] = cq * v[a] + (1 - cq) * w0[a / P % D];
            }
          g_free (cat);
        }
      g_free (v);
    }
  assert_int_equal (p, layer->n_params);
  for (size_t a = 0; a < n_out; a++)
    if (fabs (out[a] - w[l - 1][a]) > 1e-4 * fmax (1.0, fabs (w[l - 1][a])))
      fail_msg ("ca_res_conv (l %d, n_v %d, n_σ %d, b %d, %s, %s) out[%zu] = %.7g, "
                "reference %.7g", l, n_v, n_s, always_on, sum ? "sum" : "dense",
                caml_activation_names[act], a, out[a], w[l - 1][a]);
  if (!always_on)
    {
      int per = 0;
      const float *ch = layer->ops->chi (layer, &per);
      assert_int_equal (per, P);
      for (size_t q = 0; q < (size_t) n * P; q++)
        assert_close (ch[q], chi[q], 1e-5, "ca_res_conv chi", q);
    }
  for (int s = 0; s < l; s++)
    g_free (w[s]);
  g_free (chi);
  g_free (x);
  caml_model_free (model);
  g_rand_free (rng);
}

static void
test_ca_res_conv_matches_reference (void **state)
{
  (void) state;
  /* C, D, H, W, k, l, n_v, n_σ, b, sum, act, n */
  check_ca_res_conv_reference (2, 3, 5, 4, 3, 3, 2, 2, FALSE, FALSE, CAML_ACT_TANH, 2, 900);
  check_ca_res_conv_reference (1, 2, 4, 5, 2, 4, 3, 1, FALSE, FALSE, CAML_ACT_SIGMOID, 3, 901);
  check_ca_res_conv_reference (3, 3, 5, 5, 3, 3, 2, 1, FALSE, TRUE, CAML_ACT_RELU, 2, 902);
  check_ca_res_conv_reference (2, 2, 4, 4, 3, 4, 2, 3, FALSE, TRUE, CAML_ACT_IDENTITY, 2, 903);
  check_ca_res_conv_reference (2, 3, 5, 6, 3, 3, 2, 1, TRUE, FALSE, CAML_ACT_RELU, 2, 904);
  check_ca_res_conv_reference (2, 2, 6, 5, 4, 3, 2, 1, TRUE, TRUE, CAML_ACT_TANH, 2, 905);
  /* MNIST-sized, a batch over several im2col blocks on both workers */
  check_ca_res_conv_reference (1, 4, 28, 28, 5, 2, 1, 1, FALSE, FALSE, CAML_ACT_RELU, 24, 906);
}

/* Gradients of a batch spanning several im2col sub-batches (both conv
 * workers, the bias accumulators of each summed) against the sum of the
 * same layer's gradients taken one sample at a time, for conv2d with a
 * bias and for the convolutional CA-RES. Also the outputs, per sample. */
static void
check_batch_equals_samples (const CamlLayerSpec *spec, const CamlShape *in, int n, guint32 seed)
{
  GRand *rng = g_rand_new_with_seed (seed);
  CamlModel *model = caml_model_new (in, spec, 1, rng, NULL);
  assert_non_null (model);
  for (size_t i = 0; i < model->n_weights; i++)
    model->w[i] += (float) g_rand_double_range (rng, -0.2, 0.2);
  CamlLayer *layer = model->layers[0];
  size_t isz = caml_shape_size (in), osz = caml_shape_size (&layer->out);
  size_t nw = model->n_weights;
  float *x = g_new (float, n * isz), *dout = g_new (float, n * osz);
  float *dx = g_new (float, n * isz), *dx1 = g_new (float, isz);
  for (size_t i = 0; i < n * isz; i++)
    x[i] = (float) g_rand_double_range (rng, -1, 1);
  for (size_t i = 0; i < n * osz; i++)
    dout[i] = (float) g_rand_double_range (rng, -1, 1);

  float *out = g_memdup2 (caml_model_forward (model, x, n), n * osz * sizeof (float));
  caml_model_zero_grad (model);
  layer->ops->backward (layer, dx, dout, x, out, n);
  float *dw = g_memdup2 (model->dw, nw * sizeof (float));

  double *sum = g_new0 (double, nw);
  for (int i = 0; i < n; i++)
    {
      const float *o1 = caml_model_forward (model, x + i * isz, 1);
      for (size_t a = 0; a < osz; a++)
        assert_close (out[i * osz + a], o1[a], 1e-5, "batch out", i * osz + a);
      caml_model_zero_grad (model);
      layer->ops->backward (layer, dx1, dout + i * osz, x + i * isz, o1, 1);
      for (size_t a = 0; a < isz; a++)
        assert_close (dx[i * isz + a], dx1[a], 1e-4, "batch dinp", i * isz + a);
      for (size_t a = 0; a < nw; a++)
        sum[a] += model->dw[a];
    }
  for (size_t a = 0; a < nw; a++)
    assert_close (dw[a], sum[a], 1e-3, "batch dw", a);
  g_free (sum); g_free (dw); g_free (out); g_free (x); g_free (dout); g_free (dx); g_free (dx1);
  caml_model_free (model);
  g_rand_free (rng);
}

static void
test_batch_over_several_blocks (void **state)
{
  (void) state;
  CamlShape mnist = caml_shape_image (1, 28, 28);
  CamlLayerSpec conv = caml_test_spec ("conv2d", "kernel", 8.0, "depth", 3.0,
                                       "activation", (double) CAML_ACT_TANH, NULL);
  check_batch_equals_samples (&conv, &mnist, 11, 950);
  CamlLayerSpec res = caml_test_spec ("ca_res_conv", "kernel", 5.0, "depth", 3.0,
                                      "sublayers", 3.0, "n_v", 2.0, "n_sigma", 2.0,
                                      "activation", (double) CAML_ACT_TANH, NULL);
  check_batch_equals_samples (&res, &mnist, 9, 951);
  CamlLayerSpec cacnn = caml_test_spec ("ca_cnn", "kernel", 8.0, "depth", 3.0,
                                        "stride", 2.0, "activation", (double) CAML_ACT_SIGMOID,
                                        NULL);
  check_batch_equals_samples (&cacnn, &mnist, 13, 952);
}

/* Every activation of the convolutional CA-RES (the existing check uses
 * tanh and one relu case). */
static void
test_ca_res_conv_gradients_activations (void **state)
{
  (void) state;
  CamlShape in = caml_shape_image (2, 4, 4);
  guint32 seed = 960;
  for (int act = 0; act < CAML_N_ACTS; act++)
    for (int form = 0; form <= 1; form++)
      {
        CamlLayerSpec spec = caml_test_spec ("ca_res_conv", "kernel", 3.0, "depth", 2.0,
                                             "sublayers", 3.0, "n_v", 2.0, "n_sigma", 2.0,
                                             "v_form", (double) form,
                                             "activation", (double) act, NULL);
        caml_gradcheck_layer (&spec, &in, 2, seed++);
      }
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
    cmocka_unit_test (test_ca_res_conv_matches_reference),
    cmocka_unit_test (test_batch_over_several_blocks),
    cmocka_unit_test (test_ca_res_conv_gradients_activations),
  };
  return cmocka_run_group_tests_name ("ca-cnn", tests, NULL, NULL);
}
