/* test-rnn.c — the recurrent layers ca_rnn, lstm and gru: gradient checks
 * over ragged batches in every output mode, each cell against a plain scalar
 * implementation written out below, padding that cannot reach the output,
 * zeros after each length, parameter groups, the CA-RNN's χ, its LSTM
 * baseline, learning the paper's sanity sentences, and scratch buffers
 * reserved with the model's: a reserved pass allocates nothing, a batch
 * too large to reserve is an error. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "alloc-count.h"
#include "caml-private.h"   /* tests the engine's internals */
#include "gradcheck.h"

static const char *const cells[] = { "ca_rnn", "lstm", "gru" };

/* ------------------------------------------------------------- gradients */

/* T = 5 steps, lengths random with one full and one empty sample; both
 * outputs (last step, whole sequence) and both emitted vectors (y, c). */
static void
test_gradients (void **state)
{
  (void) state;
  CamlShape in = caml_shape_sequence (5, 3);
  guint32 seed = 1;
  for (gsize c = 0; c < G_N_ELEMENTS (cells); c++)
    for (int sequences = 0; sequences <= 1; sequences++)
      for (int emit = 0; emit <= 1; emit++)
        {
          CamlLayerSpec spec = caml_test_spec (cells[c], "units", 3.0,
                                               "return_sequences", (double) sequences,
                                               "emit", (double) emit, NULL);
          caml_gradcheck_layer (&spec, &in, 5, seed++);
        }
}

/* Other activations than tanh take their own derivatives. */
static void
test_gradients_activations (void **state)
{
  (void) state;
  CamlShape in = caml_shape_sequence (4, 2);
  CamlLayerSpec ca = caml_test_spec ("ca_rnn", "units", 3.0, "h_v", (double) CAML_ACT_SIGMOID,
                                     "h_c", (double) CAML_ACT_IDENTITY,
                                     "h_ov", (double) CAML_ACT_SIGMOID,
                                     "h_oc", (double) CAML_ACT_IDENTITY, NULL);
  caml_gradcheck_layer (&ca, &in, 4, 40);
  CamlLayerSpec lstm = caml_test_spec ("lstm", "units", 2.0, "g", (double) CAML_ACT_SIGMOID,
                                       "h", (double) CAML_ACT_IDENTITY, NULL);
  caml_gradcheck_layer (&lstm, &in, 4, 41);
  CamlLayerSpec gru = caml_test_spec ("gru", "units", 2.0, "h", (double) CAML_ACT_SIGMOID,
                                      NULL);
  caml_gradcheck_layer (&gru, &in, 4, 42);
}

/* A whole text model: token ids → embedding → cell → dense under the
 * sigmoid cross-entropy, lengths coming from the padding ids. */
static void
test_gradients_text_model (void **state)
{
  (void) state;
  CamlShape in = caml_shape_tokens (6, 7);
  const float x[] = {
    1, 2, 3, 4, 5, 6,
    0, CAML_TOKEN_OOV, 2, CAML_TOKEN_PAD, CAML_TOKEN_PAD, CAML_TOKEN_PAD,
    CAML_TOKEN_PAD, CAML_TOKEN_PAD, CAML_TOKEN_PAD, CAML_TOKEN_PAD, CAML_TOKEN_PAD,
    CAML_TOKEN_PAD,
    6, 6, 5, 1, CAML_TOKEN_PAD, CAML_TOKEN_PAD,
  };
  const float target[] = { 1, 0, 1, 0 };
  for (gsize c = 0; c < G_N_ELEMENTS (cells); c++)
    {
      CamlLayerSpec specs[3] = {
        caml_test_spec ("embedding", "dim", 3.0, NULL),
        caml_test_spec (cells[c], "units", 3.0, NULL),
        caml_test_spec ("dense", "units", 1.0, "activation", (double) CAML_ACT_IDENTITY, NULL),
      };
      GRand *rng = g_rand_new_with_seed (7 + c);
      CamlModel *model = caml_model_new (&in, specs, 3, rng, NULL);
      assert_non_null (model);
      for (size_t i = 0; i < model->n_weights; i++)
        model->w[i] += (float) g_rand_double_range (rng, -0.3, 0.3);
      caml_gradcheck_model (model, CAML_LOSS_SIGMOID_XENT, x, target, 4);
      caml_model_free (model);
      g_rand_free (rng);
    }
}

/* ------------------------------------------------- scalar references */

static const float *
param (CamlModel *model, const char *name)
{
  CamlLayer *layer = model->layers[0];
  for (int j = 0; j < layer->n_params; j++)
    if (g_str_equal (layer->params[j].name, name))
      return layer->params[j].w;
  fail_msg ("no parameter %s", name);
  return NULL;
}

static double
act (CamlActivation a, double x)
{
  switch (a)
    {
    case CAML_ACT_TANH: return tanh (x);
    case CAML_ACT_RELU: return x > 0 ? x : 0;
    case CAML_ACT_SIGMOID: return 1 / (1 + exp (-x));
    default: return x;
    }
}

static double
sigm (double x)
{
  return 1 / (1 + exp (-x));
}

/* Σ_k M[j, k] v[k] for a row-major (·, k) matrix. */
static double
row_dot (const float *M, int j, const double *v, int k)
{
  double s = 0;
  for (int i = 0; i < k; i++)
    s += (double) M[j * k + i] * v[i];
  return s;
}

#define T_REF 6
#define D_REF 3
#define U_REF 4

/* Eq. 34 and 36, one sample, step by step: y (T, U), c (T, U), f (T). */
static void
ca_rnn_reference (CamlModel *m, const float *x, int len, const CamlActivation h[4],
                  double *ys, double *cs, double *fs)
{
  const int D = D_REF, U = U_REF;
  const float *v_f = param (m, "v_f"), *w_f = param (m, "w_f"), *u_f = param (m, "u_f");
  const float *b_f = param (m, "b_f"), *W_v = param (m, "W_v"), *U_v = param (m, "U_v");
  const float *p_v = param (m, "p_v"), *b_v = param (m, "b_v"), *W_c = param (m, "W_c");
  const float *U_c = param (m, "U_c"), *b_c = param (m, "b_c"), *z_o = param (m, "z_o");
  const float *v_o = param (m, "v_o"), *w_o = param (m, "w_o"), *u_o = param (m, "u_o");
  const float *b_o = param (m, "b_o"), *Z_ov = param (m, "Z_ov"), *V_ov = param (m, "V_ov");
  const float *W_ov = param (m, "W_ov"), *U_ov = param (m, "U_ov"), *b_ov = param (m, "b_ov");
  const float *V_oc = param (m, "V_oc"), *W_oc = param (m, "W_oc"), *U_oc = param (m, "U_oc");
  const float *b_oc = param (m, "b_oc");
  double c[U_REF] = { 0 }, y[U_REF] = { 0 };
  for (int t = 0; t < len; t++)
    {
      double xt[D_REF], cn[U_REF], yn[U_REF];
      for (int k = 0; k < D; k++)
        xt[k] = x[t * D + k];
      double f = sigm (row_dot (v_f, 0, c, U) + row_dot (w_f, 0, xt, D)
                       + row_dot (u_f, 0, y, U) + b_f[0]);
      for (int j = 0; j < U; j++)
        {
          double v = act (h[0], row_dot (W_v, j, xt, D) + row_dot (U_v, j, y, U)
                                + p_v[j] * c[j] + b_v[j]);
          double cp = act (h[1], row_dot (W_c, j, xt, D) + row_dot (U_c, j, y, U) + b_c[j]);
          cn[j] = f * v + (1 - f) * cp;
        }
      double o = sigm (row_dot (z_o, 0, cn, U) + row_dot (v_o, 0, c, U)
                       + row_dot (w_o, 0, xt, D) + row_dot (u_o, 0, y, U) + b_o[0]);
      for (int j = 0; j < U; j++)
        {
          double vo = act (h[2], row_dot (Z_ov, j, cn, U) + row_dot (V_ov, j, c, U)
                                 + row_dot (W_ov, j, xt, D) + row_dot (U_ov, j, y, U) + b_ov[j]);
          double co = act (h[3], row_dot (V_oc, j, c, U) + row_dot (W_oc, j, xt, D)
                                 + row_dot (U_oc, j, y, U) + b_oc[j]);
          yn[j] = o * vo + (1 - o) * co;
        }
      for (int j = 0; j < U; j++)
        {
          c[j] = cs[t * U + j] = cn[j];
          y[j] = ys[t * U + j] = yn[j];
        }
      fs[t] = f;
    }
}

/* Table 1's LSTM with peepholes; W, R, b stack z, i, f, o; the block input
 * z = g(·) and the output y = h(c) ⊙ o (tanh both by default). */
static void
lstm_reference (CamlModel *m, const float *x, int len, CamlActivation g, CamlActivation h,
                double *ys, double *cs)
{
  const int D = D_REF, U = U_REF;
  const float *W = param (m, "W"), *R = param (m, "R"), *b = param (m, "b");
  const float *p_i = param (m, "p_i"), *p_f = param (m, "p_f"), *p_o = param (m, "p_o");
  double c[U_REF] = { 0 }, y[U_REF] = { 0 };
  for (int t = 0; t < len; t++)
    {
      double xt[D_REF], cn[U_REF];
      for (int k = 0; k < D; k++)
        xt[k] = x[t * D + k];
      for (int j = 0; j < U; j++)
        {
          double pre[4];
          for (int blk = 0; blk < 4; blk++)
            pre[blk] = row_dot (W, blk * U + j, xt, D) + row_dot (R, blk * U + j, y, U)
                       + b[blk * U + j];
          double z = act (g, pre[0]);
          double in = sigm (pre[1] + p_i[j] * c[j]);
          double f = sigm (pre[2] + p_f[j] * c[j]);
          cn[j] = z * in + c[j] * f;
        }
      for (int j = 0; j < U; j++)
        {
          double o = sigm (row_dot (W, 3 * U + j, xt, D) + row_dot (R, 3 * U + j, y, U)
                           + b[3 * U + j] + p_o[j] * cn[j]);
          ys[t * U + j] = act (h, cn[j]) * o;
        }
      for (int j = 0; j < U; j++)
        {
          c[j] = cs[t * U + j] = cn[j];
          y[j] = ys[t * U + j];
        }
    }
}

/* Table 1's GRU; W stacks W_r, W_z, W and U_rz stacks U_r, U_z. */
static void
gru_reference (CamlModel *m, const float *x, int len, double *ys, double *cs)
{
  const int D = D_REF, U = U_REF;
  const float *W = param (m, "W"), *U_rz = param (m, "U_rz"), *Uh = param (m, "U");
  const float *W_y = param (m, "W_y"), *b_y = param (m, "b_y");
  double c[U_REF] = { 0 };
  for (int t = 0; t < len; t++)
    {
      double xt[D_REF], rc[U_REF], cn[U_REF];
      for (int k = 0; k < D; k++)
        xt[k] = x[t * D + k];
      for (int j = 0; j < U; j++)
        rc[j] = sigm (row_dot (W, j, xt, D) + row_dot (U_rz, j, c, U)) * c[j];
      for (int j = 0; j < U; j++)
        {
          double z = sigm (row_dot (W, U + j, xt, D) + row_dot (U_rz, U + j, c, U));
          double hh = tanh (row_dot (W, 2 * U + j, xt, D) + row_dot (Uh, j, rc, U));
          cn[j] = z * c[j] + (1 - z) * hh;
        }
      for (int j = 0; j < U; j++)
        c[j] = cs[t * U + j] = cn[j];
      for (int j = 0; j < U; j++)
        ys[t * U + j] = tanh (row_dot (W_y, j, c, U) + b_y[j]);
    }
}

/* One sample of length 5 in T = 6: the layer's every step (return_sequences),
 * the last step, and the emitted cell state against the references. */
static void
check_reference (const char *cell, const CamlActivation h[4])
{
  const int T = T_REF, D = D_REF, U = U_REF, len = 5;
  CamlShape in = caml_shape_sequence (T, D);
  GRand *rng = g_rand_new_with_seed (99);
  float x[T_REF * D_REF] = { 0 };
  for (int i = 0; i < len * D; i++)
    x[i] = (float) g_rand_double_range (rng, -1, 1);
  double ys[T_REF * U_REF], cs[T_REF * U_REF], fs[T_REF];

  for (int emit = 0; emit <= 1; emit++)
    for (int sequences = 0; sequences <= 1; sequences++)
      {
        CamlLayerSpec spec;
        if (g_str_equal (cell, "ca_rnn"))
          spec = caml_test_spec (cell, "units", (double) U, "return_sequences", (double) sequences,
                                 "emit", (double) emit, "h_v", (double) h[0],
                                 "h_c", (double) h[1], "h_ov", (double) h[2],
                                 "h_oc", (double) h[3], NULL);
        else
          spec = caml_test_spec (cell, "units", (double) U, "return_sequences",
                                 (double) sequences, "emit", (double) emit, NULL);
        GRand *init = g_rand_new_with_seed (5);
        CamlModel *model = caml_model_new (&in, &spec, 1, init, NULL);
        assert_non_null (model);
        /* every parameter non-zero, large enough to leave the linear range */
        for (size_t i = 0; i < model->n_weights; i++)
          model->w[i] += (float) g_rand_double_range (init, -0.5, 0.5);
        int lengths[1] = { len };
        caml_model_set_sequence_lengths (model, lengths);
        const float *out = caml_model_forward (model, x, 1);

        if (g_str_equal (cell, "ca_rnn"))
          ca_rnn_reference (model, x, len, h, ys, cs, fs);
        else if (g_str_equal (cell, "lstm"))
          lstm_reference (model, x, len, CAML_ACT_TANH, CAML_ACT_TANH, ys, cs);
        else
          gru_reference (model, x, len, ys, cs);
        const double *want = emit ? cs : ys;
        if (sequences)
          for (int t = 0; t < T; t++)
            for (int j = 0; j < U; j++)
              {
                double expect = t < len ? want[t * U + j] : 0.0;
                if (fabs (out[t * U + j] - expect) > 1e-5)
                  fail_msg ("%s emit %d step %d unit %d: %.7f, reference %.7f", cell, emit, t,
                            j, out[t * U + j], expect);
              }
        else
          for (int j = 0; j < U; j++)
            if (fabs (out[j] - want[(len - 1) * U + j]) > 1e-5)
              fail_msg ("%s emit %d last step unit %d: %.7f, reference %.7f", cell, emit, j,
                        out[j], want[(len - 1) * U + j]);

        /* the CA-RNN's χ: f_t at each step, 0 after the length */
        if (g_str_equal (cell, "ca_rnn"))
          {
            CamlLayer *layer = model->layers[0];
            int per = 0;
            const float *chi = layer->ops->chi (layer, &per);
            assert_int_equal (per, T);
            for (int t = 0; t < T; t++)
              assert_float_equal (chi[t], t < len ? fs[t] : 0.0, 1e-5);
          }
        caml_model_free (model);
        g_rand_free (init);
      }
  g_rand_free (rng);
}

static void
test_ca_rnn_reference (void **state)
{
  (void) state;
  const CamlActivation tanh4[4] = { CAML_ACT_TANH, CAML_ACT_TANH, CAML_ACT_TANH, CAML_ACT_TANH };
  const CamlActivation mixed[4] = { CAML_ACT_RELU, CAML_ACT_SIGMOID, CAML_ACT_IDENTITY,
                                    CAML_ACT_TANH };
  check_reference ("ca_rnn", tanh4);
  check_reference ("ca_rnn", mixed);
}

static void
test_lstm_reference (void **state)
{
  (void) state;
  check_reference ("lstm", NULL);
}

static void
test_gru_reference (void **state)
{
  (void) state;
  check_reference ("gru", NULL);
}

/* LSTM's g and h and GRU's h against the scalar references, and relu in
 * the gradient checks of every cell. */

/* Table 1's GRU with y = h(W_y c + b_y). */
static void
gru_reference_acts (CamlModel *m, const float *x, int len, CamlActivation h, double *ys,
                    double *cs)
{
  gru_reference (m, x, len, ys, cs);   /* c is independent of h */
  const float *W_y = param (m, "W_y"), *b_y = param (m, "b_y");
  for (int t = 0; t < len; t++)
    for (int j = 0; j < U_REF; j++)
      ys[t * U_REF + j] = act (h, row_dot (W_y, j, cs + t * U_REF, U_REF) + b_y[j]);
}

static void
check_activation_reference (const char *cell, CamlActivation g, CamlActivation h)
{
  const int T = T_REF, D = D_REF, U = U_REF, len = 4;
  CamlShape in = caml_shape_sequence (T, D);
  GRand *rng = g_rand_new_with_seed (98);
  float x[T_REF * D_REF] = { 0 };
  for (int i = 0; i < len * D; i++)
    x[i] = (float) g_rand_double_range (rng, -1, 1);
  double ys[T_REF * U_REF], cs[T_REF * U_REF];
  gboolean lstm = g_str_equal (cell, "lstm");
  for (int sequences = 0; sequences <= 1; sequences++)
    {
      CamlLayerSpec spec = lstm
        ? caml_test_spec (cell, "units", (double) U, "return_sequences", (double) sequences,
                          "g", (double) g, "h", (double) h, NULL)
        : caml_test_spec (cell, "units", (double) U, "return_sequences", (double) sequences,
                          "h", (double) h, NULL);
      GRand *init = g_rand_new_with_seed (6);
      CamlModel *model = caml_model_new (&in, &spec, 1, init, NULL);
      assert_non_null (model);
      for (size_t i = 0; i < model->n_weights; i++)
        model->w[i] += (float) g_rand_double_range (init, -0.5, 0.5);
      int lengths[1] = { len };
      caml_model_set_sequence_lengths (model, lengths);
      const float *out = caml_model_forward (model, x, 1);
      if (lstm)
        lstm_reference (model, x, len, g, h, ys, cs);
      else
        gru_reference_acts (model, x, len, h, ys, cs);
      for (int t = sequences ? 0 : len - 1; t < len; t++)
        for (int j = 0; j < U; j++)
          {
            float got = sequences ? out[t * U + j] : out[j];
            if (fabs (got - ys[t * U + j]) > 1e-5)
              fail_msg ("%s g=%s h=%s seq %d step %d unit %d: %.7f, reference %.7f", cell,
                        caml_activation_names[g], caml_activation_names[h], sequences, t, j,
                        got, ys[t * U + j]);
          }
      caml_model_free (model);
      g_rand_free (init);
    }
  g_rand_free (rng);
}

static void
test_activation_options_reference (void **state)
{
  (void) state;
  for (int g = 0; g < CAML_N_ACTS; g++)
    for (int h = 0; h < CAML_N_ACTS; h++)
      check_activation_reference ("lstm", (CamlActivation) g, (CamlActivation) h);
  for (int h = 0; h < CAML_N_ACTS; h++)
    check_activation_reference ("gru", CAML_ACT_TANH, (CamlActivation) h);
}

static void
test_gradients_relu (void **state)
{
  (void) state;
  CamlShape in = caml_shape_sequence (4, 2);
  guint32 seed = 60;
  for (int k = 0; k < 4; k++)   /* relu in one of h_v, h_c, h_ov, h_oc at a time */
    {
      CamlActivation h[4] = { CAML_ACT_TANH, CAML_ACT_TANH, CAML_ACT_TANH, CAML_ACT_TANH };
      h[k] = CAML_ACT_RELU;
      CamlLayerSpec ca = caml_test_spec ("ca_rnn", "units", 3.0, "return_sequences", 1.0,
                                         "h_v", (double) h[0], "h_c", (double) h[1],
                                         "h_ov", (double) h[2], "h_oc", (double) h[3], NULL);
      caml_gradcheck_layer (&ca, &in, 4, seed++);
    }
  CamlLayerSpec lstm = caml_test_spec ("lstm", "units", 2.0, "g", (double) CAML_ACT_RELU,
                                       "h", (double) CAML_ACT_RELU, "return_sequences", 1.0,
                                       NULL);
  caml_gradcheck_layer (&lstm, &in, 4, seed++);
  for (int h = 0; h < CAML_N_ACTS; h++)
    {
      CamlLayerSpec gru = caml_test_spec ("gru", "units", 2.0, "h", (double) h, NULL);
      caml_gradcheck_layer (&gru, &in, 4, seed++);
    }
}

/* --------------------------------------------------------------- padding */

#define N_PAD 5

/* Forward of a model with the given T over samples padded with `fill`
 * (0: zeros; otherwise garbage) after their lengths; returns a copy. */
static float *
forward_padded (CamlModel *model, int t_max, const float *steps, int t_src, const int *lengths,
                int n, gboolean garbage, GRand *rng)
{
  const int D = 3;
  float *x = g_new (float, (size_t) n * t_max * D);
  for (int i = 0; i < n; i++)
    for (int t = 0; t < t_max; t++)
      for (int k = 0; k < D; k++)
        {
          float *v = &x[((size_t) i * t_max + t) * D + k];
          if (t < lengths[i])
            *v = steps[((size_t) i * t_src + t) * D + k];
          else
            *v = garbage ? (float) g_rand_double_range (rng, -50, 50) : 0.0f;
        }
  caml_model_set_sequence_lengths (model, lengths);
  size_t out_size = (size_t) n * caml_shape_size (caml_model_output_shape (model));
  float *out = g_memdup2 (caml_model_forward (model, x, n), out_size * sizeof (float));
  g_free (x);
  return out;
}

/* Garbage after each length changes nothing; nor does a longer T (more
 * padding), nor running a sample alone instead of in a ragged batch. */
static void
test_padding_changes_nothing (void **state)
{
  (void) state;
  const int T = 7, D = 3, U = 4, T_LONG = 11;
  const int lengths[N_PAD] = { 4, 7, 2, 0, 5 };
  GRand *rng = g_rand_new_with_seed (12);
  float steps[N_PAD * 7 * 3];
  for (gsize i = 0; i < G_N_ELEMENTS (steps); i++)
    steps[i] = (float) g_rand_double_range (rng, -1, 1);

  for (gsize c = 0; c < G_N_ELEMENTS (cells); c++)
    for (int sequences = 0; sequences <= 1; sequences++)
      {
        CamlLayerSpec spec = caml_test_spec (cells[c], "units", (double) U,
                                             "return_sequences", (double) sequences, NULL);
        CamlShape in = caml_shape_sequence (T, D), in_long = caml_shape_sequence (T_LONG, D);
        GRand *init = g_rand_new_with_seed (3);
        CamlModel *model = caml_model_new (&in, &spec, 1, init, NULL);
        CamlModel *longer = caml_model_new (&in_long, &spec, 1, NULL, NULL);
        assert_int_equal (model->n_weights, longer->n_weights);
        memcpy (longer->w, model->w, model->n_weights * sizeof (float));
        size_t per = sequences ? (size_t) T * U : (size_t) U;
        size_t per_long = sequences ? (size_t) T_LONG * U : (size_t) U;

        float *clean = forward_padded (model, T, steps, T, lengths, N_PAD, FALSE, rng);
        float *dirty = forward_padded (model, T, steps, T, lengths, N_PAD, TRUE, rng);
        float *padded = forward_padded (longer, T_LONG, steps, T, lengths, N_PAD, TRUE, rng);
        for (int i = 0; i < N_PAD; i++)
          {
            for (size_t j = 0; j < per; j++)
              {
                assert_float_equal (dirty[i * per + j], clean[i * per + j], 0);
                assert_float_equal (padded[i * per_long + j], clean[i * per + j], 1e-6);
              }
            for (size_t j = per; j < per_long; j++)
              assert_float_equal (padded[i * per_long + j], 0.0, 0);

            float *alone = forward_padded (model, T, steps + (size_t) i * T * D, T,
                                           &lengths[i], 1, TRUE, rng);
            for (size_t j = 0; j < per; j++)
              assert_float_equal (alone[j], clean[i * per + j], 1e-5);
            g_free (alone);
          }
        g_free (clean);
        g_free (dirty);
        g_free (padded);
        caml_model_free (model);
        caml_model_free (longer);
        g_rand_free (init);
      }
  g_rand_free (rng);
}

/* return_sequences: zeros at and after each length, non-zero before it, and
 * its row at length − 1 is what the last-step mode outputs; a sample of
 * length 0 outputs its initial state, zeros, in both modes. */
static void
test_sequences_zero_after_length (void **state)
{
  (void) state;
  const int T = 6, D = 3, U = 3;
  const int lengths[4] = { 3, 0, 6, 1 };
  GRand *rng = g_rand_new_with_seed (21);
  float steps[4 * 6 * 3];
  for (gsize i = 0; i < G_N_ELEMENTS (steps); i++)
    steps[i] = (float) g_rand_double_range (rng, -1, 1);
  for (gsize c = 0; c < G_N_ELEMENTS (cells); c++)
    for (int emit = 0; emit <= 1; emit++)
      {
        CamlShape in = caml_shape_sequence (T, D);
        CamlLayerSpec seq = caml_test_spec (cells[c], "units", (double) U,
                                            "return_sequences", 1.0, "emit", (double) emit, NULL);
        CamlLayerSpec last = caml_test_spec (cells[c], "units", (double) U, "emit",
                                             (double) emit, NULL);
        GRand *init = g_rand_new_with_seed (8);
        CamlModel *ms = caml_model_new (&in, &seq, 1, init, NULL);
        CamlModel *ml = caml_model_new (&in, &last, 1, NULL, NULL);
        memcpy (ml->w, ms->w, ms->n_weights * sizeof (float));
        for (size_t i = 0; i < ms->n_weights; i++)   /* b_y ≠ 0: h(b_y) would not be 0 */
          ms->w[i] = ml->w[i] += 0.2f;
        float *outs = forward_padded (ms, T, steps, T, lengths, 4, TRUE, rng);
        float *outl = forward_padded (ml, T, steps, T, lengths, 4, TRUE, rng);
        for (int i = 0; i < 4; i++)
          {
            for (int t = 0; t < T; t++)
              {
                double norm = 0;
                for (int j = 0; j < U; j++)
                  norm += fabs (outs[(i * T + t) * U + j]);
                if (t >= lengths[i])
                  assert_float_equal (norm, 0.0, 0);
                else
                  assert_true (norm > 1e-4);
              }
            for (int j = 0; j < U; j++)
              {
                double expect = lengths[i] > 0 ? outs[(i * T + lengths[i] - 1) * U + j] : 0.0;
                assert_float_equal (outl[i * U + j], expect, 1e-6);
              }
          }
        g_free (outs);
        g_free (outl);
        caml_model_free (ms);
        caml_model_free (ml);
        g_rand_free (init);
      }
  g_rand_free (rng);
}

/* ------------------------------------------------ groups and the baseline */

static void
test_groups_and_baseline (void **state)
{
  (void) state;
  static const char *const gates[] = { "v_f", "w_f", "u_f", "b_f", "z_o", "v_o", "w_o", "u_o",
                                       "b_o", NULL };
  CamlShape in = caml_shape_sequence (4, 2);
  for (gsize c = 0; c < G_N_ELEMENTS (cells); c++)
    {
      CamlLayerSpec spec = caml_test_spec (cells[c], "units", 3.0, NULL);
      CamlModel *model = caml_model_new (&in, &spec, 1, NULL, NULL);
      CamlLayer *layer = model->layers[0];
      int n_gate = 0;
      for (int j = 0; j < layer->n_params; j++)
        {
          const CamlParam *p = &layer->params[j];
          if (c > 0)
            {
              assert_int_equal (p->group, CAML_GROUP_ALWAYS);
              continue;
            }
          gboolean gate = g_strv_contains (gates, p->name);
          n_gate += gate;
          assert_int_equal (p->group, gate ? CAML_GROUP_GATE : CAML_GROUP_VALUE);
        }
      if (c == 0)
        assert_int_equal (n_gate, 9);
      caml_model_free (model);
    }

  const char *doc =
    "{ \"data\": { \"builtin\": \"rnn_sanity\" },"
    "  \"model\": [ { \"layer\": \"embedding\", \"dim\": 4 },"
    "    { \"layer\": \"ca_rnn\", \"units\": 7, \"emit\": \"cell\", \"return_sequences\": true,"
    "      \"h_v\": \"relu\" },"
    "    { \"layer\": \"mean_pool\" },"
    "    { \"layer\": \"dense\", \"units\": 1 } ],"
    "  \"loss\": \"sigmoid_cross_entropy\" }";
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (doc, -1, "rnn.json", &error);
  if (exp == NULL)
    fail_msg ("%s", error->message);
  assert_true (exp->layers[1].ops->context_aware);
  CamlExperiment *base = caml_experiment_make_baseline (exp);
  const CamlLayerSpec *lstm = &base->layers[1];
  assert_string_equal (lstm->ops->name, "lstm");
  assert_float_equal (lstm->opt[caml_layer_ops_option_index (lstm->ops, "units")], 7, 0);
  assert_float_equal (lstm->opt[caml_layer_ops_option_index (lstm->ops, "emit")], 1, 0);
  assert_float_equal (lstm->opt[caml_layer_ops_option_index (lstm->ops, "return_sequences")],
                      1, 0);
  caml_experiment_free (base);
  caml_experiment_free (exp);
}

/* ------------------------------------------------------ p_v's start */

/* p_v starts uniform ±0.1 around peephole_init (default 1, Eq. 32's
 * v_t ↔ c_{t−1}); 0 is the old start. The value only shifts p_v: every
 * other parameter, and p_v less its centre, are the same draws. A bad value
 * in an experiment file is an error naming the file and the key. */
static void
test_peephole_init (void **state)
{
  (void) state;
  CamlShape in = caml_shape_sequence (4, 2);
  const double centres[] = { 0.0, 1.0, 2.0, -0.5 };
  float first[64 * 64];
  size_t n_weights = 0, pv_offset = 0, pv_count = 0;
  for (gsize k = 0; k < G_N_ELEMENTS (centres); k++)
    {
      CamlLayerSpec spec = k == 1 ? caml_test_spec ("ca_rnn", "units", 5.0, NULL)
                                  : caml_test_spec ("ca_rnn", "units", 5.0, "peephole_init",
                                                    centres[k], NULL);
      GRand *rng = g_rand_new_with_seed (11);
      CamlModel *model = caml_model_new (&in, &spec, 1, rng, NULL);
      assert_non_null (model);
      CamlLayer *layer = model->layers[0];
      const CamlParam *pv = NULL;
      for (int j = 0; j < layer->n_params; j++)
        if (g_str_equal (layer->params[j].name, "p_v"))
          pv = &layer->params[j];
      assert_non_null (pv);
      assert_int_equal (pv->count, 5);
      gboolean spread = FALSE;
      for (size_t i = 0; i < pv->count; i++)
        {
          assert_true (fabs (pv->w[i] - centres[k]) <= 0.1 + 1e-6);
          spread |= pv->w[i] != pv->w[0];
        }
      assert_true (spread);
      if (k == 0)
        {
          n_weights = model->n_weights;
          assert_true (n_weights <= G_N_ELEMENTS (first));
          memcpy (first, model->w, n_weights * sizeof (float));
          pv_offset = pv->offset;
          pv_count = pv->count;
        }
      else
        for (size_t i = 0; i < n_weights; i++)
          {
            gboolean in_pv = i >= pv_offset && i < pv_offset + pv_count;
            assert_float_equal (model->w[i], first[i] + (in_pv ? centres[k] : 0.0), 1e-6);
          }
      caml_model_free (model);
      g_rand_free (rng);
    }

  /* the gradient check at a start far from 0 */
  CamlLayerSpec spec = caml_test_spec ("ca_rnn", "units", 3.0, "peephole_init", 2.0, NULL);
  caml_gradcheck_layer (&spec, &in, 4, 77);

  const char *bad[][2] = {
    { "\"big\"", "model[1].peephole_init: expected a number, found a string" },
    { "11", "model[1].peephole_init: 11 is out of range" },
  };
  for (gsize k = 0; k < G_N_ELEMENTS (bad); k++)
    {
      g_autofree char *doc = g_strdup_printf (
        "{ \"data\": { \"builtin\": \"rnn_sanity\" },"
        "  \"model\": [ { \"layer\": \"embedding\", \"dim\": 4 },"
        "    { \"layer\": \"ca_rnn\", \"units\": 7, \"peephole_init\": %s },"
        "    { \"layer\": \"dense\", \"units\": 1 } ],"
        "  \"loss\": \"sigmoid_cross_entropy\" }", bad[k][0]);
      GError *error = NULL;
      assert_null (caml_experiment_load_data (doc, -1, "peep.json", &error));
      assert_non_null (error);
      if (strstr (error->message, "peep.json") == NULL || strstr (error->message, bad[k][1]) == NULL)
        fail_msg ("unexpected error: %s", error->message);
      g_clear_error (&error);
    }
}

/* ------------------------------------------------------------- training */

/* Each cell learns the paper's two training sentences (Fig. 13) in 100
 * full-batch Adam steps: the loss falls below a tenth of where it started
 * and both are classified right. */
static void
test_learns_sanity_sentences (void **state)
{
  (void) state;
  CamlDataset *train, *test;
  caml_data_rnn_sanity (&train, &test);
  float x[2 * 64];
  assert_true (caml_shape_size (&train->x_shape) <= 64);
  const float *rows = caml_dataset_rows (train, 0, train->n, x);
  for (gsize c = 0; c < G_N_ELEMENTS (cells); c++)
    {
      CamlLayerSpec specs[3] = {
        caml_test_spec ("embedding", "dim", 8.0, NULL),
        caml_test_spec (cells[c], "units", 8.0, NULL),
        caml_test_spec ("dense", "units", 1.0, "activation", (double) CAML_ACT_IDENTITY, NULL),
      };
      GRand *rng = g_rand_new_with_seed (0);
      CamlModel *model = caml_model_new (&train->x_shape, specs, 3, rng, NULL);
      CamlOptimizerConfig config;
      caml_optimizer_config_defaults (&config, CAML_OPTIM_ADAM);
      config.lr = 0.01;
      CamlOptimizer *opt = caml_optimizer_new (&config, model->n_weights);
      float dpred[2], first = 0, loss = 0;
      for (int step = 0; step < 100; step++)
        {
          const float *pred = caml_model_forward (model, rows, train->n);
          loss = caml_loss_compute (CAML_LOSS_SIGMOID_XENT, dpred, pred, train->y, train->n, 1);
          if (step == 0)
            first = loss;
          caml_model_zero_grad (model);
          caml_model_backward (model, rows, dpred, train->n);
          caml_optimizer_step (opt, model, step);
        }
      const float *pred = caml_model_forward (model, rows, train->n);
      if (!(loss < 0.1f * first) || !(pred[0] > 0) || !(pred[1] < 0))
        fail_msg ("%s: loss %g → %g, logits %g %g", cells[c], first, loss, pred[0], pred[1]);
      caml_optimizer_free (opt);
      caml_model_free (model);
      g_rand_free (rng);
    }
  caml_dataset_free (train);
  caml_dataset_free (test);
}

static void
test_shape_errors (void **state)
{
  (void) state;
  CamlShape flat = caml_shape_flat (4), tokens = caml_shape_tokens (5, 10);
  for (gsize c = 0; c < G_N_ELEMENTS (cells); c++)
    {
      CamlLayerSpec spec = caml_test_spec (cells[c], NULL);
      GError *error = NULL;
      assert_null (caml_model_new (&flat, &spec, 1, NULL, &error));
      assert_non_null (strstr (error->message, "takes a sequence of vectors"));
      g_clear_error (&error);
      assert_null (caml_model_new (&tokens, &spec, 1, NULL, &error));
      assert_non_null (strstr (error->message, "takes a sequence of vectors"));
      g_clear_error (&error);
    }
}

/* ------------------------------------------------------ reserved buffers */

/* The bytes of a cell's scratch for batches of n samples of T steps of
 * width D, what its reserve op counts: the packed buffers for n·T rows
 * (every sample full length) and the pack's arrays. */
static size_t
scratch_bytes (const char *cell, int n, int T, int D, int U, int sequences, int emit)
{
  size_t rows = (size_t) n * T, u = U, floats;
  if (g_str_equal (cell, "lstm"))          /* x, P, dP (4U); c, c_{t−1}, h(c), y, y_{t−1}, dc, dy */
    floats = rows * (D + 2 * 4 * u + 7 * u);
  else if (g_str_equal (cell, "gru"))      /* x, P, dP (3U); c, c_{t−1}, r ⊙ c_{t−1}, dc, scratch */
    {
      floats = rows * (D + 2 * 3 * u + 5 * u);
      if (emit == 0 && sequences)          /* y (rows, U) */
        floats += rows * u;
      else if (emit == 0)                  /* the last c, dy, dc (N, U) */
        floats += 3 * (size_t) n * u;
    }
  else                                     /* x, P, dP (2 + 4U); c, c_{t−1}, y, y_{t−1}, dc, dy; χ */
    floats = rows * (D + 2 * (2 + 4 * u) + 6 * u) + (size_t) n * T;
  size_t ints = 3 * (size_t) n + 2 * ((size_t) T + 1);   /* order, rank, length; active, offset */
  return floats * sizeof (float) + ints * sizeof (int);
}

/* After caml_model_reserve for n samples, a training pass over n samples of
 * full length (the most packed rows n samples have), then one over a ragged
 * batch of fewer, allocates nothing: the reserve op counted and allocated
 * every buffer forward, backward and χ use. */
static void
test_reserved_pass_allocates_nothing (void **state)
{
  (void) state;
  enum { N = 6, T = 5, D = 3, U = 4 };
  CamlShape in = caml_shape_sequence (T, D);
  const int full[N] = { T, T, T, T, T, T }, ragged[4] = { 2, 0, 5, 1 };
  GRand *rng = g_rand_new_with_seed (31);
  float x[N * T * D], dout[N * T * U];
  for (gsize i = 0; i < G_N_ELEMENTS (x); i++)
    x[i] = (float) g_rand_double_range (rng, -1, 1);
  for (gsize i = 0; i < G_N_ELEMENTS (dout); i++)
    dout[i] = (float) g_rand_double_range (rng, -1, 1);

  for (gsize c = 0; c < G_N_ELEMENTS (cells); c++)
    for (int sequences = 0; sequences <= 1; sequences++)
      for (int emit = 0; emit <= 1; emit++)
        {
          CamlLayerSpec spec = caml_test_spec (cells[c], "units", (double) U,
                                               "return_sequences", (double) sequences,
                                               "emit", (double) emit, NULL);
          GError *error = NULL;
          CamlModel *model = caml_model_new (&in, &spec, 1, rng, &error);
          assert_non_null (model);
          CamlLayer *layer = model->layers[0];
          if (layer->ops->reserve == NULL)
            fail_msg ("%s has no reserve op", cells[c]);
          size_t bytes = 0;
          assert_true (layer->ops->reserve (layer, N, FALSE, &bytes));
          assert_int_equal (bytes, scratch_bytes (cells[c], N, T, D, U, sequences, emit));
          assert_true (caml_model_reserve (model, N, &error));
          model->training = TRUE;
          caml_model_zero_grad (model);

          guint before = caml_test_allocations ();
          caml_model_set_sequence_lengths (model, full);
          caml_model_forward (model, x, N);
          caml_model_backward (model, x, dout, N);
          caml_model_set_sequence_lengths (model, ragged);
          caml_model_forward (model, x, 4);
          caml_model_backward (model, x, dout, 4);
          int per = 0;
          if (layer->ops->chi != NULL)
            assert_non_null (layer->ops->chi (layer, &per));
          guint made = caml_test_allocations () - before;
          if (made != 0)
            fail_msg ("%s (return_sequences %d, emit %d): %u allocations in reserved passes",
                      cells[c], sequences, emit, made);
          for (size_t i = 0; i < model->n_weights; i++)
            assert_true (isfinite (model->dw[i]));
          caml_model_free (model);
        }
  g_rand_free (rng);
}

/* A batch whose outputs fit but whose packed steps no memory holds is an
 * error from caml_model_reserve naming the layer and the size (the outputs,
 * their gradients and the cell's scratch), not an abort in the forward
 * pass, and the model still runs batches that fit. 2^25 samples of 2048
 * steps of width 1024 with one unit: 128 MB of outputs, and 2^48 bytes for
 * the packed input alone (beyond a 47-bit address space: refused even where
 * the kernel overcommits without limit). */
static void
test_reserve_too_large (void **state)
{
  (void) state;
  /* No limit from the machine's memory: what is tested is the allocation
   * failing (caml_memory_limit is tested in test-layers). */
  caml_set_memory_limit (SIZE_MAX);
  const int N = 1 << 25, T = 2048, D = 1024, U = 1;
  CamlShape in = caml_shape_sequence (T, D);
  const int lengths[2] = { 3, 0 };
  float *x = g_new0 (float, (size_t) 2 * T * D), dout[2] = { 1, -1 };
  for (int k = 0; k < 3 * D; k++)
    x[k] = (float) (k % 7) / 7.0f;
  for (gsize c = 0; c < G_N_ELEMENTS (cells); c++)
    {
      CamlLayerSpec spec = caml_test_spec (cells[c], "units", (double) U, NULL);
      GRand *rng = g_rand_new_with_seed (4);
      GError *error = NULL;
      CamlModel *model = caml_model_new (&in, &spec, 1, rng, &error);
      g_rand_free (rng);
      assert_non_null (model);

      assert_false (caml_model_reserve (model, N, &error));
      size_t need = 2 * (size_t) N * U * sizeof (float)
                    + scratch_bytes (cells[c], N, T, D, U, FALSE, 0);
      g_autofree char *size = g_format_size (need);
      g_autofree char *expected =
        g_strdup_printf ("layer 0 (%s): the buffers for a batch of %d samples need %s, "
                         "which cannot be allocated", cells[c], N, size);
      assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_INVALID));
      assert_string_equal (error->message, expected);
      g_clear_error (&error);
      assert_int_equal (model->capacity, 0);

      assert_true (caml_model_reserve (model, 2, &error));
      caml_model_set_sequence_lengths (model, lengths);
      model->training = TRUE;
      const float *out = caml_model_forward (model, x, 2);
      assert_true (isfinite (out[0]) && out[0] != 0.0f);
      assert_float_equal (out[1], 0.0, 0);   /* length 0 */
      caml_model_zero_grad (model);
      caml_model_backward (model, x, dout, 2);
      for (size_t i = 0; i < model->n_weights; i++)
        assert_true (isfinite (model->dw[i]));
      caml_model_free (model);
    }
  g_free (x);
  caml_set_memory_limit (0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_gradients),
    cmocka_unit_test (test_gradients_activations),
    cmocka_unit_test (test_gradients_text_model),
    cmocka_unit_test (test_ca_rnn_reference),
    cmocka_unit_test (test_lstm_reference),
    cmocka_unit_test (test_gru_reference),
    cmocka_unit_test (test_activation_options_reference),
    cmocka_unit_test (test_gradients_relu),
    cmocka_unit_test (test_padding_changes_nothing),
    cmocka_unit_test (test_sequences_zero_after_length),
    cmocka_unit_test (test_groups_and_baseline),
    cmocka_unit_test (test_peephole_init),
    cmocka_unit_test (test_learns_sanity_sentences),
    cmocka_unit_test (test_shape_errors),
    cmocka_unit_test (test_reserved_pass_allocates_nothing),
    cmocka_unit_test (test_reserve_too_large),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
