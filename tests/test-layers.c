/* test-layers.c — dense, activation and CA-NN: gradient checks, a reference
 * computed by hand, shape errors, and models too large to allocate. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "caml-private.h"   /* tests the engine's internals */
#include "gradcheck.h"

static void
test_registry_lists_every_layer (void **state)
{
  int n = 0;
  const CamlLayerOps *const *types = caml_layer_registry (&n);
  assert_true (n >= 4);
  for (int i = 0; i < n; i++)
    {
      assert_ptr_equal (caml_layer_lookup (types[i]->name), types[i]);
      assert_non_null (types[i]->setup);
      assert_non_null (types[i]->forward);
      assert_non_null (types[i]->backward);
      assert_true (types[i]->n_options <= CAML_MAX_OPTIONS);
      if (types[i]->baseline != NULL)
        assert_non_null (caml_layer_lookup (types[i]->baseline));
    }
  assert_null (caml_layer_lookup ("no_such_layer"));
}

static void
test_dense_gradients (void **state)
{
  CamlShape in = caml_shape_flat (4);
  for (int act = 0; act < CAML_N_ACTS; act++)
    {
      CamlLayerSpec spec = caml_test_spec ("dense", "units", 3.0, "activation", (double) act, NULL);
      caml_gradcheck_layer (&spec, &in, 5, 11 + act);
    }
  CamlLayerSpec no_bias = caml_test_spec ("dense", "units", 2.0, "bias", 0.0, NULL);
  caml_gradcheck_layer (&no_bias, &in, 3, 7);
}

static void
test_activation_gradients (void **state)
{
  CamlShape in = caml_shape_flat (6);
  for (int act = 0; act < CAML_N_ACTS; act++)
    {
      CamlLayerSpec spec = caml_test_spec ("activation", "function", (double) act, NULL);
      caml_gradcheck_layer (&spec, &in, 4, 3 + act);
    }
}

/* The activations against libm in double: tanh and sigmoid are computed
 * in vectorisable float arithmetic, so check them everywhere that matters,
 * from tiny to saturated arguments (relative error, 1e-6). */
static void
test_activation_accuracy (void **state)
{
  (void) state;
  const size_t n = 400001;
  float *x = g_new (float, n), *y = g_new (float, n);
  for (size_t i = 0; i < n; i++)
    {
      double u = -1.0 + 2.0 * (double) i / (n - 1);           /* −1 … 1 */
      x[i] = (float) (copysign (pow (10.0, 4.0 * fabs (u) - 5.0), u) * 2.0); /* ±2e-5 … ±20 */
    }
  x[n / 2] = 0.0f;
  for (int act = CAML_ACT_TANH; act <= CAML_ACT_SIGMOID; act += CAML_ACT_SIGMOID - CAML_ACT_TANH)
    {
      caml_activation_forward (act, y, x, n);
      for (size_t i = 0; i < n; i++)
        {
          double want = act == CAML_ACT_TANH ? tanh ((double) x[i])
                                             : 1.0 / (1.0 + exp (-(double) x[i]));
          double err = fabs (y[i] - want) / fmax (fabs (want), 1e-30);
          if (err > 1e-6)
            fail_msg ("%s(%.9g) = %.9g, want %.9g (relative error %.3g)",
                      caml_activation_names[act], x[i], y[i], want, err);
        }
    }
  float special[] = { INFINITY, -INFINITY, NAN };
  caml_activation_forward (CAML_ACT_TANH, y, special, 3);
  assert_true (y[0] == 1.0f && y[1] == -1.0f && isnan (y[2]));
  g_free (x);
  g_free (y);
}

static void
test_ca_nn_gradients (void **state)
{
  CamlShape in = caml_shape_flat (3);
  for (int act = 0; act < CAML_N_ACTS; act++)
    {
      print_message ("ca_nn activation %s\n", caml_activation_names[act]);
      CamlLayerSpec spec = caml_test_spec ("ca_nn", "units", 4.0, "activation", (double) act, NULL);
      caml_gradcheck_layer (&spec, &in, 6, 21 + act);
    }
  CamlLayerSpec wide_in = caml_test_spec ("ca_nn", "units", 1.0, NULL);
  CamlShape in9 = caml_shape_flat (9);
  caml_gradcheck_layer (&wide_in, &in9, 2, 5);
}

/* CA-NN against Eq. 38–39 evaluated by hand in double precision. */
static void
test_ca_nn_matches_hand_computation (void **state)
{
  CamlShape in = caml_shape_flat (2);
  CamlLayerSpec spec = caml_test_spec ("ca_nn", "units", 2.0, "activation",
                                       (double) CAML_ACT_TANH, NULL);
  GRand *rng = g_rand_new_with_seed (1);
  CamlModel *model = caml_model_new (&in, &spec, 1, rng, NULL);
  assert_non_null (model);
  CamlLayer *layer = model->layers[0];
  /* Parameters in declaration order: W (2×2), b (2), u (2), b_chi (1), w0 (2). */
  const float W[] = { 0.5f, -1.0f, 2.0f, 0.25f }, b[] = { 0.1f, -0.2f };
  const float u[] = { 1.5f, -0.5f }, b_chi[] = { 0.3f }, w0[] = { -0.7f, 0.9f };
  const float *values[] = { W, b, u, b_chi, w0 };
  assert_int_equal (layer->n_params, 5);
  for (int j = 0; j < 5; j++)
    memcpy (layer->params[j].w, values[j], layer->params[j].count * sizeof (float));

  const float x[] = { 0.8f, -0.3f, -1.2f, 0.4f };
  const float *out = caml_model_forward (model, x, 2);
  for (int s = 0; s < 2; s++)
    {
      double c0 = x[2 * s], c1 = x[2 * s + 1];
      double chi = 1.0 / (1.0 + exp (-(u[0] * c0 + u[1] * c1 + b_chi[0])));
      for (int j = 0; j < 2; j++)
        {
          double v = tanh (W[2 * j] * c0 + W[2 * j + 1] * c1 + b[j]);
          double expect = chi * v + (1.0 - chi) * w0[j];
          assert_float_equal (out[2 * s + j], expect, 1e-5);
        }
      int per = 0;
      const float *chis = layer->ops->chi (layer, &per);
      assert_int_equal (per, 1);
      assert_float_equal (chis[s], chi, 1e-6);
    }
  caml_model_free (model);
  g_rand_free (rng);
}

/* A CA-NN whose gate is pinned open (χ = 1) is a dense layer. */
static void
test_ca_nn_open_gate_is_dense (void **state)
{
  CamlShape in = caml_shape_flat (3);
  CamlLayerSpec ca = caml_test_spec ("ca_nn", "units", 2.0, NULL);
  CamlLayerSpec dense = caml_test_spec ("dense", "units", 2.0, "activation",
                                        (double) CAML_ACT_TANH, NULL);
  GRand *rng = g_rand_new_with_seed (4);
  CamlModel *m1 = caml_model_new (&in, &ca, 1, rng, NULL);
  CamlModel *m2 = caml_model_new (&in, &dense, 1, rng, NULL);
  memcpy (m1->w, m2->w, 8 * sizeof (float));      /* W and b */
  memset (m1->layers[0]->params[2].w, 0, 3 * sizeof (float));
  m1->layers[0]->params[3].w[0] = 40.0f;           /* b_chi: sigmoid(40) = 1 */
  const float x[] = { 0.1f, 0.2f, 0.3f, -1.0f, 0.5f, 2.0f };
  const float *a = caml_model_forward (m1, x, 2);
  const float *b = caml_model_forward (m2, x, 2);
  for (int i = 0; i < 4; i++)
    assert_float_equal (a[i], b[i], 1e-6);
  caml_model_free (m1);
  caml_model_free (m2);
  g_rand_free (rng);
}

static void
test_model_gradients_through_stack (void **state)
{
  CamlShape in = caml_shape_flat (2);
  CamlLayerSpec specs[] = {
    caml_test_spec ("ca_nn", "units", 5.0, NULL),
    caml_test_spec ("ca_nn", "units", 5.0, NULL),
    caml_test_spec ("dense", "units", 1.0, NULL),
  };
  GRand *rng = g_rand_new_with_seed (9);
  CamlModel *model = caml_model_new (&in, specs, 3, rng, NULL);
  assert_non_null (model);
  CamlDataset *train, *test;
  caml_data_surface (21, 0.05, 3, &train, &test);
  caml_gradcheck_model (model, CAML_LOSS_MSE, train->x, train->y, train->n);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_model_free (model);
  g_rand_free (rng);
}

static void
test_bad_options_name_the_layer (void **state)
{
  CamlShape in = caml_shape_flat (2);
  CamlLayerSpec specs[] = {
    caml_test_spec ("dense", "units", 4.0, NULL),
    caml_test_spec ("ca_nn", "units", 0.0, NULL),
  };
  GError *error = NULL;
  CamlModel *model = caml_model_new (&in, specs, 2, NULL, &error);
  assert_null (model);
  assert_non_null (error);
  assert_non_null (strstr (error->message, "layer 1 (ca_nn)"));
  assert_non_null (strstr (error->message, "units"));
  g_error_free (error);
}

static void
test_shape_mismatch_names_both_shapes (void **state)
{
  CamlShape in = caml_shape_flat (3);
  CamlLayerSpec specs[] = {
    caml_test_spec ("dense", "units", 4.0, NULL),
    caml_test_spec ("ca_res", "units", 5.0, "v_form", 1.0, NULL),
  };
  GError *error = NULL;
  CamlModel *model = caml_model_new (&in, specs, 2, NULL, &error);
  assert_null (model);
  assert_int_equal (error->code, CAML_ERROR_SHAPE);
  assert_non_null (strstr (error->message, "layer 1 (ca_res)"));
  assert_non_null (strstr (error->message, "(4)"));
  assert_non_null (strstr (error->message, "5"));
  g_error_free (error);
}

/* Dropout: the identity outside training; while training, a seeded mask
 * zeroes about `rate` of the values and scales the rest, and backward uses
 * the same mask. */
static void
test_dropout (void **state)
{
  enum { N = 50, D = 40 };
  CamlShape in = caml_shape_flat (D);
  CamlLayerSpec spec = caml_test_spec ("dropout", "rate", 0.25, NULL);
  GRand *rng = g_rand_new_with_seed (6);
  CamlModel *model = caml_model_new (&in, &spec, 1, rng, NULL);
  assert_non_null (model);
  static float x[N * D], dout[N * D], dx[N * D], first[N * D];
  for (int i = 0; i < N * D; i++)
    {
      x[i] = (float) g_rand_double_range (rng, 0.5, 1.5);   /* never zero */
      dout[i] = (float) g_rand_double_range (rng, -1, 1);
    }

  const float *out = caml_model_forward (model, x, N);    /* evaluation */
  assert_memory_equal (out, x, sizeof x);

  model->training = TRUE;
  out = caml_model_forward (model, x, N);
  int zeros = 0;
  for (int i = 0; i < N * D; i++)
    {
      if (out[i] == 0.0f)
        zeros++;
      else
        assert_float_equal (out[i], x[i] / 0.75f, 1e-5);
    }
  /* 2000 values at rate 0.25: 500 ± 3σ (σ ≈ 19). */
  assert_in_range (zeros, 440, 560);
  memcpy (first, out, sizeof first);
  CamlLayer *layer = model->layers[0];
  layer->ops->backward (layer, dx, dout, x, out, N);
  for (int i = 0; i < N * D; i++)
    assert_float_equal (dx[i], first[i] == 0.0f ? 0.0f : dout[i] / 0.75f, 1e-5);

  /* A new mask each pass, and the same sequence from the same seed. */
  out = caml_model_forward (model, x, N);
  assert_memory_not_equal (out, first, sizeof first);
  GRand *again = g_rand_new_with_seed (6);
  CamlModel *twin = caml_model_new (&in, &spec, 1, again, NULL);
  twin->training = TRUE;
  assert_memory_equal (caml_model_forward (twin, x, N), first, sizeof first);
  caml_model_free (twin);
  g_rand_free (again);
  caml_model_free (model);
  g_rand_free (rng);
}

/* Sizes from the user (layer options, the input, the batch) can ask for
 * more than any machine holds; that is an error naming the layer and the
 * size, not an abort in g_malloc. The sizes here are petabytes, so nothing
 * is really allocated. */
/* caml_model_new_shapes (the editor's quick check) infers what
 * caml_model_new does — every layer's output shape and the parameter count —
 * without weights, even for a model whose weights cannot be allocated. */
static void
test_shapes_only (void **state)
{
  (void) state;
  CamlShape flat = caml_shape_flat (2), image = caml_shape_image (1, 28, 28);
  CamlLayerSpec surface[] = {
    caml_test_spec ("ca_nn", "units", 5.0, NULL),
    caml_test_spec ("dense", "units", 1.0, NULL),
  };
  CamlLayerSpec conv[] = {
    caml_test_spec ("ca_cnn", "kernel", 5.0, "depth", 4.0, NULL),
    caml_test_spec ("max_pool", NULL),
    caml_test_spec ("dense", "units", 10.0, NULL),
  };
  struct { const CamlShape *in; const CamlLayerSpec *specs; int n; } cases[] = {
    { &flat, surface, 2 }, { &image, conv, 3 },
  };
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      GRand *rng = g_rand_new_with_seed (1);
      CamlModel *full = caml_model_new (cases[c].in, cases[c].specs, cases[c].n, rng, NULL);
      CamlModel *shapes = caml_model_new_shapes (cases[c].in, cases[c].specs, cases[c].n, NULL);
      assert_non_null (full);
      assert_non_null (shapes);
      assert_null (shapes->w);
      assert_int_equal (shapes->n_weights, full->n_weights);
      assert_int_equal (shapes->n_layers, full->n_layers);
      for (int i = 0; i < full->n_layers; i++)
        {
          g_autofree char *a = caml_shape_to_string (&full->layers[i]->out);
          g_autofree char *b = caml_shape_to_string (&shapes->layers[i]->out);
          assert_string_equal (a, b);
        }
      caml_model_free (full);
      caml_model_free (shapes);
      g_rand_free (rng);
    }

  /* 2^47 parameters: counted, not allocated. */
  CamlShape wide = caml_shape_flat (G_MAXINT);
  CamlLayerSpec dense = caml_test_spec ("dense", "units", 65536.0, NULL);
  CamlModel *big = caml_model_new_shapes (&wide, &dense, 1, NULL);
  assert_non_null (big);
  assert_int_equal (big->n_weights, (size_t) G_MAXINT * 65536 + 65536);
  caml_model_free (big);

  /* A shape that does not fit is the same error. */
  GError *error = NULL;
  CamlLayerSpec bad[] = { caml_test_spec ("max_pool", NULL) };
  assert_null (caml_model_new_shapes (&flat, bad, 1, &error));
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_SHAPE));
  g_clear_error (&error);
}

static void
test_too_large_to_allocate (void **state)
{
  (void) state;
  /* No limit from the machine's memory: what is tested is the allocation
   * failing (caml_memory_limit is tested in test-layers). */
  caml_set_memory_limit (SIZE_MAX);
  GError *error = NULL;

  /* Weights: dense 65536 on 2^31 − 1 inputs, 2^47 parameters. */
  CamlShape wide = caml_shape_flat (G_MAXINT);
  CamlLayerSpec dense = caml_test_spec ("dense", "units", 65536.0, NULL);
  assert_null (caml_model_new (&wide, &dense, 1, NULL, &error));
  size_t params = (size_t) G_MAXINT * 65536 + 65536;
  g_autofree char *need = g_format_size ((guint64) params * sizeof (float) * 2);
  g_autofree char *expected = g_strdup_printf (
    "the weights need %s (%zu parameters and their gradients; layer 0 (dense) holds %zu "
    "of them), which cannot be allocated", need, params, params);
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_INVALID));
  assert_string_equal (error->message, expected);
  g_clear_error (&error);

  /* One sample's activations: an image of 2^47 values (512 TB a buffer, more
   * than a 47-bit address space holds, so it fails even where the kernel
   * overcommits without limit). */
  CamlShape huge = caml_shape_image (1 << 7, 1 << 20, 1 << 20);
  CamlLayerSpec act = caml_test_spec ("activation", NULL);
  assert_null (caml_model_new (&huge, &act, 1, NULL, &error));
  g_free (need);
  need = g_format_size ((guint64) 1 << 50);
  g_free (expected);
  expected = g_strdup_printf ("layer 0 (activation): the buffers for a batch of 1 sample "
                              "need %s, which cannot be allocated", need);
  assert_string_equal (error->message, expected);
  g_clear_error (&error);

  /* A batch: 2^31 − 1 samples of 65536 units, 512 TB a buffer: the
   * output, its gradient and dense's own scratch for backward. The model
   * stays usable at sizes that fit. */
  CamlShape two = caml_shape_flat (2);
  GRand *rng = g_rand_new_with_seed (1);
  CamlModel *model = caml_model_new (&two, &dense, 1, rng, &error);
  assert_non_null (model);
  assert_false (caml_model_reserve (model, G_MAXINT, &error));
  g_free (need);
  need = g_format_size ((guint64) G_MAXINT * 65536 * sizeof (float) * 3);
  g_free (expected);
  expected = g_strdup_printf ("layer 0 (dense): the buffers for a batch of %d samples "
                              "need %s, which cannot be allocated", G_MAXINT, need);
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_INVALID));
  assert_string_equal (error->message, expected);
  g_clear_error (&error);
  assert_int_equal (model->capacity, 0);
  assert_true (caml_model_reserve (model, 3, &error));
  assert_int_equal (model->capacity, 3);
  const float x[] = { 1, 2, 3, 4, 5, 6 };
  const float *out = caml_model_forward (model, x, 3);
  for (int i = 0; i < 3 * 65536; i++)
    assert_true (isfinite (out[i]));
  caml_model_free (model);
  g_rand_free (rng);
  caml_set_memory_limit (0);
}

/* Sizes within the address space but beyond the memory there is are refused
 * before anything is allocated: Linux would grant them (overcommit) and
 * the process would die, or the machine swap, once they are touched. */
static void
test_memory_limit (void **state)
{
  (void) state;
  GError *error = NULL;

  /* The machine's own limit: three dense layers of 65,536 units on 65,536
   * inputs, 12.9 G parameters, 103 GB with their gradients. */
  size_t limit = caml_memory_limit ();
  assert_true (limit > 0);
  CamlShape wide = caml_shape_flat (65536);
  CamlLayerSpec dense = caml_test_spec ("dense", "units", 65536.0, NULL);
  CamlLayerSpec three[] = { dense, dense, dense };
  size_t params = 3 * ((size_t) 65536 * 65536 + 65536);
  if (limit / 8 < params)
    {
      gint64 start = g_get_monotonic_time ();
      assert_null (caml_model_new (&wide, three, 3, NULL, &error));
      g_autofree char *need = g_format_size ((guint64) params * 8);
      g_autofree char *machine = g_format_size ((guint64) limit);
      g_autofree char *expected = g_strdup_printf (
        "the weights need %s (%zu parameters and their gradients; layer 0 (dense) holds "
        "%zu of them), more than this machine's memory (%s)", need, params, params / 3,
        machine);
      assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_INVALID));
      assert_string_equal (error->message, expected);
      g_clear_error (&error);
      /* Refused, not allocated and touched: far below a second (no
       * threshold asserted; the machine is shared). */
      print_message ("refused 103 GB of weights in %.1f ms\n",
                     (g_get_monotonic_time () - start) / 1e3);
    }
  else
    print_message ("skipped the 103 GB model: this machine has %zu bytes\n", limit);

  /* A limit of 1 MB: 2 MB of weights and gradients are refused … */
  caml_set_memory_limit (1 << 20);
  CamlShape in = caml_shape_flat (1023);
  CamlLayerSpec d256 = caml_test_spec ("dense", "units", 256.0, NULL);
  assert_null (caml_model_new (&in, &d256, 1, NULL, &error));
  g_autofree char *mb2 = g_format_size (262144 * 8), *mb1 = g_format_size (1 << 20);
  g_autofree char *refused = g_strdup_printf (
    "the weights need %s (262144 parameters and their gradients; layer 0 (dense) holds "
    "262144 of them), more than the memory limit (%s)", mb2, mb1);
  assert_string_equal (error->message, refused);
  g_clear_error (&error);

  /* … and so are batch buffers that would take the model past it: 4,000
   * samples of 16 units are 512 kB, output and gradient, a layer (dense
   * keeps a third buffer for backward), beside 1.3 kB of weights. */
  CamlShape two = caml_shape_flat (2);
  CamlLayerSpec small[] = { caml_test_spec ("dense", "units", 16.0, NULL),
                            caml_test_spec ("dense", "units", 16.0, NULL) };
  GRand *rng = g_rand_new_with_seed (3);
  CamlModel *model = caml_model_new (&two, small, 2, rng, &error);
  g_rand_free (rng);
  assert_non_null (model);
  assert_false (caml_model_reserve (model, 4000, &error));
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_INVALID));
  g_autofree char *buffers = g_format_size (2 * (size_t) 4000 * 16 * 3 * sizeof (float));
  g_autofree char *prefix = g_strdup_printf ("the buffers for a batch of 4000 samples need "
                                             "%s (layer 0 (dense) the most, ", buffers);
  g_autofree char *suffix = g_strdup_printf ("that is more than the memory limit (%s)", mb1);
  assert_true (g_str_has_prefix (error->message, prefix));
  assert_true (g_str_has_suffix (error->message, suffix));
  g_clear_error (&error);
  assert_int_equal (model->capacity, 0);
  assert_int_equal (model->buffer_bytes, 0);
  /* What fits is reserved, and counted. */
  assert_true (caml_model_reserve (model, 1000, &error));
  assert_int_equal (model->buffer_bytes, 2 * (size_t) 1000 * 16 * 3 * sizeof (float));
  caml_model_free (model);

  caml_set_memory_limit (0);
  assert_int_equal (caml_memory_limit (), limit);
}

/* A layer's own scratch sized by the batch (CamlLayerOps.reserve) is
 * allocated by caml_model_reserve, where a size that cannot be allocated is
 * a FALSE with the size, not an abort; the layer then holds none (none
 * half-made) and grows them again for a batch that fits. Each layer type with such buffers,
 * configured so that 2^31 − 1 samples need over 2^49 bytes (beyond a 47-bit
 * address space: refused even where the kernel overcommits without limit). */
static void
test_scratch_too_large (void **state)
{
  (void) state;
  /* 65536 values a sample in the first buffer each allocates (so none is
   * allocated): flat, a 256×256 image (512×512 before a 2×2 pool), 65536
   * tokens, a sequence of 256 steps of width 256 (the packed steps). */
  const struct {
    const char *name;
    CamlShape   in;
    const char *key;      /* an option to set, or NULL */
    double      value;
  } cases[] = {
    { "dense", caml_shape_flat (1), "units", 65536 },
    { "ca_nn", caml_shape_flat (1), "units", 65536 },
    { "ca_res", caml_shape_flat (65536), "units", 1 },
    { "dropout", caml_shape_flat (65536), NULL, 0 },
    { "max_pool", caml_shape_image (1, 512, 512), NULL, 0 },
    { "ca_cnn", caml_shape_image (1, 256, 256), "kernel", 1 },
    { "ca_res_conv", caml_shape_image (1, 256, 256), "kernel", 1 },
    { "ca_bsfe", caml_shape_tokens (65536, 10), NULL, 0 },
    { "ca_rnn", caml_shape_sequence (256, 256), NULL, 0 },
    { "lstm", caml_shape_sequence (256, 256), NULL, 0 },
    { "gru", caml_shape_sequence (256, 256), NULL, 0 },
    { "attention", caml_shape_sequence (256, 256), NULL, 0 },
    { "ca_att", caml_shape_sequence (256, 256), NULL, 0 },
  };
  int n_types = 0, covered = 0;
  const CamlLayerOps *const *types = caml_layer_registry (&n_types);

  for (int t = 0; t < n_types; t++)
    {
      if (types[t]->reserve == NULL)
        continue;
      const char *name = types[t]->name;
      gsize c = 0;
      while (c < G_N_ELEMENTS (cases) && !g_str_equal (cases[c].name, name))
        c++;
      if (c == G_N_ELEMENTS (cases))
        fail_msg ("layer type %s has a reserve op but no case here", name);
      covered++;
      CamlShape in = cases[c].in;
      CamlLayerSpec spec = cases[c].key != NULL
                           ? caml_test_spec (name, cases[c].key, cases[c].value, NULL)
                           : caml_test_spec (name, NULL);
      GRand *rng = g_rand_new_with_seed (3);
      GError *error = NULL;
      CamlModel *model = caml_model_new (&in, &spec, 1, rng, &error);
      g_rand_free (rng);
      assert_null (error);
      assert_non_null (model);
      CamlLayer *layer = model->layers[0];

      size_t bytes = 0;
      assert_false (layer->ops->reserve (layer, G_MAXINT, TRUE, &bytes));
      if (bytes < (size_t) G_MAXINT * 65536 * sizeof (int))
        fail_msg ("%s: %zu bytes counted for 2^31 − 1 samples", name, bytes);
      /* Counting alone gives the same size. */
      size_t counted = 0;
      assert_true (layer->ops->reserve (layer, G_MAXINT, FALSE, &counted));
      assert_true (counted == bytes);

      /* A batch that fits, within the model's capacity (1 sample, reserved
       * by caml_model_new): forward and backward grow the buffers again. */
      int n = 1;
      size_t in_size = caml_shape_size (&in), out_size = caml_shape_size (&layer->out);
      float *x = g_new (float, n * in_size), *dout = g_new (float, n * out_size);
      for (size_t k = 0; k < n * in_size; k++)
        x[k] = g_str_equal (name, "ca_bsfe") ? (k % in_size < 5 ? (float) (k % 7) : -1.0f)
                                             : (float) (k % 13) / 13.0f;
      for (size_t k = 0; k < n * out_size; k++)
        dout[k] = 1.0f;
      model->training = TRUE;
      const float *out = caml_model_forward (model, x, n);
      for (size_t k = 0; k < n * out_size; k++)
        assert_true (isfinite (out[k]));
      caml_model_backward (model, x, dout, n);
      assert_true (isfinite (model->dw[0]));
      g_free (x);
      g_free (dout);
      caml_model_free (model);
    }
  assert_int_equal (covered, G_N_ELEMENTS (cases));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_registry_lists_every_layer),
    cmocka_unit_test (test_dense_gradients),
    cmocka_unit_test (test_activation_gradients),
    cmocka_unit_test (test_activation_accuracy),
    cmocka_unit_test (test_ca_nn_gradients),
    cmocka_unit_test (test_ca_nn_matches_hand_computation),
    cmocka_unit_test (test_ca_nn_open_gate_is_dense),
    cmocka_unit_test (test_model_gradients_through_stack),
    cmocka_unit_test (test_bad_options_name_the_layer),
    cmocka_unit_test (test_shape_mismatch_names_both_shapes),
    cmocka_unit_test (test_dropout),
    cmocka_unit_test (test_shapes_only),
    cmocka_unit_test (test_too_large_to_allocate),
    cmocka_unit_test (test_memory_limit),
    cmocka_unit_test (test_scratch_too_large),
  };
  return cmocka_run_group_tests_name ("layers", tests, NULL, NULL);
}
