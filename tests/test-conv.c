/* test-conv.c — conv2d, max_pool and flatten: gradient checks, the im2col +
 * sgemm convolution against the naive reference (forward and backward), and
 * shape errors. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "caml.h"
#include "layers/layers.h"   /* caml_conv_kernels_force */
#include "conv-reference.h"
#include "gradcheck.h"

enum { SAME = 0, VALID = 1 };

static void
assert_close (double got, double want, double tol, const char *what, size_t index)
{
  if (fabs (got - want) > tol * fmax (1.0, fabs (want)))
    fail_msg ("%s[%zu]: %.7g, reference %.7g", what, index, got, want);
}

static void
test_conv2d_gradients (void **state)
{
  /* (C, H, W, k, stride, padding, depth, activation, bias) */
  const int cases[][9] = {
    { 1, 5, 5, 3, 1, SAME,  2, CAML_ACT_TANH,     1 },
    { 2, 6, 5, 2, 2, VALID, 3, CAML_ACT_IDENTITY, 1 },
    { 3, 5, 6, 4, 2, SAME,  2, CAML_ACT_SIGMOID,  0 },
    { 2, 4, 4, 1, 1, VALID, 2, CAML_ACT_RELU,     1 },
    { 1, 6, 6, 4, 1, SAME,  2, CAML_ACT_RELU,     1 },
  };
  for (gsize t = 0; t < G_N_ELEMENTS (cases); t++)
    {
      const int *c = cases[t];
      CamlShape in = caml_shape_image (c[0], c[1], c[2]);
      CamlLayerSpec spec = caml_test_spec ("conv2d", "kernel", (double) c[3],
                                           "stride", (double) c[4], "padding", (double) c[5],
                                           "depth", (double) c[6], "activation", (double) c[7],
                                           "bias", (double) c[8], NULL);
      caml_gradcheck_layer (&spec, &in, 2, 40 + t);
    }
}

/* Random shapes: im2col + sgemm against the direct loops, forward and backward. */
/* Case t of the comparison with the reference: small random shapes, or
 * (wide) rows of up to two vectors and more, more channels than one kernel
 * call takes, kernels wider than one weight-gradient call. */
static void
test_conv2d_matches_reference_case (GRand *rng, int t, gboolean wide)
{
  {
    {
      int c = t % 2 == 0 ? 1 : 3;
      int k = g_rand_int_range (rng, 1, 7);          /* even and odd */
      int stride = g_rand_int_range (rng, 1, 3);     /* 1 and 2 */
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
      CamlRefConv r;
      caml_ref_conv_init (&r, n, c, h, w, m, k, stride, same);

      CamlShape in = caml_shape_image (c, h, w);
      CamlLayerSpec spec = caml_test_spec ("conv2d", "kernel", (double) k,
                                           "stride", (double) stride,
                                           "padding", (double) (same ? SAME : VALID),
                                           "depth", (double) m, "activation", (double) act,
                                           NULL);
      GError *error = NULL;
      CamlModel *model = caml_model_new (&in, &spec, 1, rng, &error);
      if (model == NULL)
        fail_msg ("case %d: %s", t, error->message);
      CamlLayer *layer = model->layers[0];
      assert_int_equal (layer->out.dims[0], m);
      assert_int_equal (layer->out.dims[1], r.oh);
      assert_int_equal (layer->out.dims[2], r.ow);
      const float *W = layer->params[0].w, *b = layer->params[1].w;
      for (int j = 0; j < m; j++)
        layer->params[1].w[j] = (float) g_rand_double_range (rng, -0.5, 0.5);

      size_t n_in = caml_ref_conv_in_size (&r), n_out = caml_ref_conv_out_size (&r);
      size_t P = (size_t) r.oh * r.ow, K = (size_t) c * k * k;
      float *x = g_new (float, n_in), *dout = g_new (float, n_out);
      float *dx = g_new (float, n_in);
      for (size_t i = 0; i < n_in; i++)
        x[i] = (float) g_rand_double_range (rng, -1, 1);
      for (size_t i = 0; i < n_out; i++)
        dout[i] = (float) g_rand_double_range (rng, -1, 1);

      double *y = g_new (double, n_out), *dy = g_new (double, n_out);
      double *rdx = g_new0 (double, n_in), *rdW = g_new0 (double, m * K);
      double *rdb = g_new0 (double, m);
      caml_ref_conv_forward (&r, y, x, W);
      const float *out = caml_model_forward (model, x, n);
      for (size_t i = 0; i < n_out; i++)
        {
          int j = (int) (i / P % m);
          double want = caml_ref_act (act, y[i] + b[j]);
          assert_close (out[i], want, 1e-4, "conv2d out", i);
          dy[i] = dout[i] * caml_ref_act_grad (act, out[i]);
          rdb[j] += dy[i];
        }
      caml_ref_conv_backward (&r, rdx, rdW, dy, x, W);
      caml_model_zero_grad (model);
      layer->ops->backward (layer, dx, dout, x, out, n);
      for (size_t i = 0; i < n_in; i++)
        assert_close (dx[i], rdx[i], 1e-4, "conv2d dinp", i);
      for (size_t i = 0; i < m * K; i++)
        assert_close (layer->params[0].dw[i], rdW[i], 1e-4, "conv2d dW", i);
      for (int j = 0; j < m; j++)
        assert_close (layer->params[1].dw[j], rdb[j], 1e-4, "conv2d db", j);

      g_free (x); g_free (dout); g_free (dx); g_free (y); g_free (dy);
      g_free (rdx); g_free (rdW); g_free (rdb);
      caml_model_free (model);
    }
  }
}

/* Every case under every instruction set this CPU runs, on 1 thread and
 * on 3 (an odd split of the samples). */
static void
test_conv2d_matches_reference (void **state)
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
          GRand *rng = g_rand_new_with_seed (77);
          for (int t = 0; t < 40; t++)
            test_conv2d_matches_reference_case (rng, t, FALSE);
          for (int t = 0; t < 12; t++)
            test_conv2d_matches_reference_case (rng, t, TRUE);
          g_rand_free (rng);
        }
    }
  caml_conv_kernels_force (NULL);
  caml_set_threads (0);
  assert_true (ran >= 1);
}

/* More samples than one im2col block: the sub-batches must tile N exactly,
 * and dW must accumulate across them. */
static void
test_conv2d_many_samples (void **state)
{
  const int n = 70, c = 1, h = 28, w = 28, k = 8, m = 3;
  CamlRefConv r;
  caml_ref_conv_init (&r, n, c, h, w, m, k, 1, TRUE);
  CamlShape in = caml_shape_image (c, h, w);
  CamlLayerSpec spec = caml_test_spec ("conv2d", "kernel", (double) k, "depth", (double) m,
                                       "activation", (double) CAML_ACT_IDENTITY,
                                       "bias", 0.0, NULL);
  GRand *rng = g_rand_new_with_seed (8);
  CamlModel *model = caml_model_new (&in, &spec, 1, rng, NULL);
  CamlLayer *layer = model->layers[0];
  size_t n_in = caml_ref_conv_in_size (&r), n_out = caml_ref_conv_out_size (&r);
  float *x = g_new (float, n_in), *dout = g_new (float, n_out);
  for (size_t i = 0; i < n_in; i++)
    x[i] = (float) g_rand_double (rng);
  for (size_t i = 0; i < n_out; i++)
    dout[i] = (float) g_rand_double_range (rng, -1, 1);
  double *y = g_new (double, n_out), *dy = g_new (double, n_out);
  double *rdW = g_new0 (double, m * k * k);
  caml_ref_conv_forward (&r, y, x, layer->params[0].w);
  const float *out = caml_model_forward (model, x, n);
  for (size_t i = 0; i < n_out; i++)
    {
      assert_close (out[i], y[i], 1e-4, "out", i);
      dy[i] = dout[i];
    }
  caml_ref_conv_backward (&r, NULL, rdW, dy, x, layer->params[0].w);
  caml_model_zero_grad (model);
  layer->ops->backward (layer, NULL, dout, x, out, n);   /* first layer: no dinp */
  for (int i = 0; i < m * k * k; i++)
    assert_close (layer->params[0].dw[i], rdW[i], 1e-3, "dW", i);
  double fwd = 0, bwd = 0;
  layer->ops->flops (layer, n, &fwd, &bwd);
  assert_true (fwd == 2.0 * m * k * k * h * w * n);
  g_free (x); g_free (dout); g_free (y); g_free (dy); g_free (rdW);
  caml_model_free (model);
  g_rand_free (rng);
}

static void
test_conv2d_shape_errors (void **state)
{
  GError *error = NULL;
  CamlShape flat = caml_shape_flat (784);
  CamlLayerSpec spec = caml_test_spec ("conv2d", NULL);
  assert_null (caml_model_new (&flat, &spec, 1, NULL, &error));
  assert_int_equal (error->code, CAML_ERROR_SHAPE);
  assert_non_null (strstr (error->message, "layer 0 (conv2d)"));
  assert_non_null (strstr (error->message, "(C, H, W)"));
  assert_non_null (strstr (error->message, "(784)"));
  g_clear_error (&error);

  CamlShape small = caml_shape_image (1, 5, 6);
  spec = caml_test_spec ("conv2d", "kernel", 7.0, "padding", (double) VALID, NULL);
  assert_null (caml_model_new (&small, &spec, 1, NULL, &error));
  assert_int_equal (error->code, CAML_ERROR_SHAPE);
  assert_non_null (strstr (error->message, "7×7"));
  assert_non_null (strstr (error->message, "5×6"));
  g_clear_error (&error);

  /* "same" pads, so the same kernel fits and keeps the grid. */
  spec = caml_test_spec ("conv2d", "kernel", 7.0, "stride", 2.0, NULL);
  CamlModel *model = caml_model_new (&small, &spec, 1, NULL, &error);
  assert_non_null (model);
  assert_int_equal (model->layers[0]->out.dims[1], 3);
  assert_int_equal (model->layers[0]->out.dims[2], 3);
  caml_model_free (model);
}

static void
test_max_pool_gradients (void **state)
{
  /* (size, stride, padding) */
  const int cases[][3] = { { 2, 0, VALID }, { 3, 2, SAME }, { 2, 1, VALID }, { 3, 0, SAME } };
  CamlShape in = caml_shape_image (2, 5, 6);
  for (gsize t = 0; t < G_N_ELEMENTS (cases); t++)
    {
      CamlLayerSpec spec = caml_test_spec ("max_pool", "size", (double) cases[t][0],
                                           "stride", (double) cases[t][1],
                                           "padding", (double) cases[t][2], NULL);
      caml_gradcheck_layer (&spec, &in, 2, 60 + t);
    }
}

static void
test_max_pool_values (void **state)
{
  /* One 1×3×4 image, 2×2 windows, stride 2: valid gives 1×2, same 2×2. */
  const float x[] = { 1, 5, 2, 0,
                      3, 4, 8, 7,
                      9, 6, -1, -2 };
  CamlShape in = caml_shape_image (1, 3, 4);
  CamlLayerSpec valid = caml_test_spec ("max_pool", NULL);
  CamlModel *model = caml_model_new (&in, &valid, 1, NULL, NULL);
  assert_int_equal (model->layers[0]->out.dims[1], 1);
  assert_int_equal (model->layers[0]->out.dims[2], 2);
  const float *out = caml_model_forward (model, x, 1);
  assert_float_equal (out[0], 5, 0);
  assert_float_equal (out[1], 8, 0);
  float dout[] = { 1.0f, 2.0f }, dx[12];
  model->layers[0]->ops->backward (model->layers[0], dx, dout, x, out, 1);
  for (int i = 0; i < 12; i++)
    assert_float_equal (dx[i], i == 1 ? 1.0f : i == 6 ? 2.0f : 0.0f, 0);
  caml_model_free (model);

  CamlLayerSpec same = caml_test_spec ("max_pool", "padding", (double) SAME, NULL);
  model = caml_model_new (&in, &same, 1, NULL, NULL);
  assert_int_equal (model->layers[0]->out.dims[1], 2);
  out = caml_model_forward (model, x, 1);
  assert_float_equal (out[2], 9, 0);    /* the border row is ignored, not zero */
  assert_float_equal (out[3], -1, 0);
  caml_model_free (model);

  /* Ties go to the first value in row-major order, and a NaN wins only
   * where it comes first — in the 2×2 fast path, a 3×3 window (the
   * general one) and a clipped border window alike. */
  const float t[] = { 2, 2, NAN, 1,
                      2, 2, 1, 7,
                      5, 5, 5, 5,
                      5, 5, 5, 5 };
  CamlShape in4 = caml_shape_image (1, 4, 4);
  for (int size = 2; size <= 3; size++)
    {
      CamlLayerSpec spec = caml_test_spec ("max_pool", "size", (double) size,
                                           "padding", (double) SAME, NULL);
      model = caml_model_new (&in4, &spec, 1, NULL, NULL);
      CamlLayer *layer = model->layers[0];
      int p = layer->out.dims[1] * layer->out.dims[2];
      out = caml_model_forward (model, t, 1);
      float ones[4] = { 1, 1, 1, 1 }, d[16];
      layer->ops->backward (layer, d, ones, t, out, 1);
      if (size == 2)
        {
          assert_int_equal (p, 4);
          assert_float_equal (out[0], 2, 0);
          assert_true (isnan (out[1]));        /* the NaN comes first in its window */
          assert_float_equal (d[0], 1, 0);     /* the first of the four 2s */
          assert_float_equal (d[8], 1, 0);     /* the first of the four 5s */
          assert_float_equal (d[10], 1, 0);
        }
      else
        {
          /* same, 3×3, stride 3: windows at rows −1…1 and 2…4 (clipped) */
          assert_int_equal (p, 4);
          assert_float_equal (out[0], 2, 0);
          assert_float_equal (d[0], 1, 0);
          assert_float_equal (out[2], 5, 0);
          assert_float_equal (d[8], 1, 0);
        }
      caml_model_free (model);
    }
}

static void
test_flatten (void **state)
{
  CamlShape in = caml_shape_image (2, 3, 4);
  CamlLayerSpec spec = caml_test_spec ("flatten", NULL);
  caml_gradcheck_layer (&spec, &in, 2, 5);
  CamlLayerSpec specs[] = { caml_test_spec ("conv2d", "kernel", 3.0, "depth", 4.0, NULL),
                            caml_test_spec ("flatten", NULL),
                            caml_test_spec ("dense", "units", 2.0, NULL) };
  CamlModel *model = caml_model_new (&in, specs, 3, NULL, NULL);
  assert_non_null (model);
  assert_int_equal (model->layers[1]->out.ndim, 1);
  assert_int_equal (model->layers[1]->out.dims[0], 4 * 3 * 4);
  caml_model_free (model);
}

/* A small CNN end to end: conv → conv (stride 2) → flatten → dense under
 * softmax. (No max_pool here: this check has no smaller second step, and a
 * weight step can move a window's argmax; its layer check above covers it.) */
static void
test_cnn_model_gradients (void **state)
{
  CamlShape in = caml_shape_image (1, 6, 6);
  CamlLayerSpec specs[] = {
    caml_test_spec ("conv2d", "kernel", 3.0, "depth", 2.0, "activation",
                    (double) CAML_ACT_TANH, NULL),
    caml_test_spec ("conv2d", "kernel", 2.0, "stride", 2.0, "depth", 3.0, "activation",
                    (double) CAML_ACT_SIGMOID, NULL),
    caml_test_spec ("flatten", NULL),
    caml_test_spec ("dense", "units", 3.0, NULL),
  };
  GRand *rng = g_rand_new_with_seed (12);
  CamlModel *model = caml_model_new (&in, specs, 4, rng, NULL);
  assert_non_null (model);
  float x[4 * 36], y[4] = { 0, 2, 1, 2 };
  for (int i = 0; i < 4 * 36; i++)
    x[i] = (float) g_rand_double_range (rng, -1, 1);
  caml_gradcheck_model (model, CAML_LOSS_SOFTMAX_XENT, x, y, 4);
  caml_model_free (model);
  g_rand_free (rng);
}

/* max_pool against a direct reference for every (size, stride, padding),
 * overlapping windows included, under every instruction set this CPU runs
 * (the 2×2 windows' vector kernels): odd and even sizes, rows of more than
 * one vector of outputs, and values drawn from a few levels, so that
 * windows hold equal values (the first in row-major order wins). */
static void
max_pool_case (GRand *rng, int size, int stride, int pad, int H, int W, gboolean ties)
{
  const int C = 2, N = 2;
  int st = stride > 0 ? stride : size;
  CamlShape in = caml_shape_image (C, H, W);
  CamlLayerSpec spec = caml_test_spec ("max_pool", "size", (double) size,
                                       "stride", (double) stride,
                                       "padding", (double) pad, NULL);
  CamlModel *model = caml_model_new (&in, &spec, 1, NULL, NULL);
  assert_non_null (model);
  /* TF geometry, computed here: same → ceil(H / s), border split with the
   * smaller half before; valid → floor((H − k) / s) + 1. */
  int oh = pad == SAME ? (H + st - 1) / st : (H - size) / st + 1;
  int ow = pad == SAME ? (W + st - 1) / st : (W - size) / st + 1;
  int pt = pad == SAME ? MAX ((oh - 1) * st + size - H, 0) / 2 : 0;
  int pl = pad == SAME ? MAX ((ow - 1) * st + size - W, 0) / 2 : 0;
  CamlLayer *layer = model->layers[0];
  assert_int_equal (layer->out.dims[1], oh);
  assert_int_equal (layer->out.dims[2], ow);
  const int n_in = N * C * H * W, n_out = N * C * oh * ow;
  float *x = g_new (float, n_in), *dx = g_new (float, n_in);
  for (int i = 0; i < n_in; i++)
    x[i] = ties ? (float) g_rand_int_range (rng, -2, 3)
                : (float) g_rand_double_range (rng, -1, 1);
  const float *out = caml_model_forward (model, x, N);
  float *dout = g_new (float, n_out);
  double *rdx = g_new0 (double, n_in);
  for (int i = 0; i < n_out; i++)
    dout[i] = (float) g_rand_double_range (rng, -1, 1);
  for (int nc = 0; nc < N * C; nc++)
    for (int oy = 0; oy < oh; oy++)
      for (int ox = 0; ox < ow; ox++)
        {
          double best = -INFINITY;
          int at = -1;
          for (int a = 0; a < size; a++)
            for (int b = 0; b < size; b++)
              {
                int y = oy * st - pt + a, xx = ox * st - pl + b;
                if (y < 0 || y >= H || xx < 0 || xx >= W)
                  continue;
                if (x[(nc * H + y) * W + xx] > best)
                  best = x[(nc * H + y) * W + xx], at = (nc * H + y) * W + xx;
              }
          int o = (nc * oh + oy) * ow + ox;
          if (out[o] != (float) best)
            fail_msg ("max_pool size %d stride %d %s %d×%d (%s): out[%d] = %g, reference %g",
                      size, stride, pad == SAME ? "same" : "valid", H, W,
                      caml_kernels_isa (), o, out[o], best);
          rdx[at] += dout[o];
        }
  layer->ops->backward (layer, dx, dout, x, out, N);
  for (int i = 0; i < n_in; i++)
    assert_close (dx[i], rdx[i], 1e-6, "max_pool dinp", i);
  g_free (x);
  g_free (dx);
  g_free (dout);
  g_free (rdx);
  caml_model_free (model);
}

static void
test_max_pool_matches_reference (void **state)
{
  (void) state;
  static const char *const isas[] = { "AVX-512", "AVX2", "SSE2", "generic" };
  /* (H, W): small, even (2×2 windows tile it), rows of 18 and 20 outputs */
  const int shapes[][2] = { { 7, 6 }, { 8, 10 }, { 6, 36 }, { 9, 41 } };
  int ran = 0;
  for (gsize i = 0; i < G_N_ELEMENTS (isas); i++)
    {
      if (!caml_conv_kernels_force (isas[i]))
        continue;
      ran++;
      GRand *rng = g_rand_new_with_seed (31);
      for (gsize t = 0; t < G_N_ELEMENTS (shapes); t++)
        for (int size = 1; size <= 4; size++)
          for (int stride = 0; stride <= 3; stride++)
            for (int pad = SAME; pad <= VALID; pad++)
              for (int ties = 0; ties <= 1; ties++)
                max_pool_case (rng, size, stride, pad, shapes[t][0], shapes[t][1], ties);
      /* images narrower or shorter than the window ("same" pads them) */
      const int narrow[][2] = { { 5, 1 }, { 1, 5 }, { 6, 2 }, { 2, 3 } };
      for (gsize t = 0; t < G_N_ELEMENTS (narrow); t++)
        for (int size = 2; size <= 4; size++)
          for (int stride = 0; stride <= 2; stride++)
            max_pool_case (rng, size, stride, SAME, narrow[t][0], narrow[t][1], FALSE);
      g_rand_free (rng);
    }
  caml_conv_kernels_force (NULL);
  assert_true (ran >= 1);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_conv2d_gradients),
    cmocka_unit_test (test_conv2d_matches_reference),
    cmocka_unit_test (test_conv2d_many_samples),
    cmocka_unit_test (test_conv2d_shape_errors),
    cmocka_unit_test (test_max_pool_gradients),
    cmocka_unit_test (test_max_pool_values),
    cmocka_unit_test (test_max_pool_matches_reference),
    cmocka_unit_test (test_flatten),
    cmocka_unit_test (test_cnn_model_gradients),
  };
  return cmocka_run_group_tests_name ("conv", tests, NULL, NULL);
}
