/* test-attention.c — CA-ATT and softmax attention: gradient checks of every
 * (layer, score, query) over ragged batches with a zero-length sample,
 * outputs against references written out here with plain loops, softmax
 * weights, padding that must change nothing, χ per step, the matched
 * baseline, a small learning task, and scratch buffers reserved with the
 * model's: a reserved pass allocates nothing, a batch too large to reserve
 * is an error. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "alloc-count.h"
#include "caml-private.h"   /* tests the engine's internals */
#include "gradcheck.h"

enum { SCORE_BAHDANAU, SCORE_LUONG, SCORE_LINEAR };   /* the `score` choices */
enum { QUERY_LEARNED, QUERY_MEAN };                   /* the `query` choices */

static const char *const score_names[] = { "bahdanau", "luong", "linear" };
static const char *const query_names[] = { "learned", "mean" };

/* ------------------------------------------------------- gradient checks */

static void
test_ca_att_gradients (void **state)
{
  (void) state;
  CamlShape in = caml_shape_sequence (5, 4);
  guint32 seed = 100;
  for (int score = 0; score < 3; score++)
    for (int query = 0; query < 2; query++)
      for (int normalize = 0; normalize < 2; normalize++)
        {
          print_message ("ca_att score=%s query=%s normalize=%d\n", score_names[score],
                         query_names[query], normalize);
          CamlLayerSpec spec = caml_test_spec ("ca_att", "score", (double) score,
                                               "query", (double) query,
                                               "query_dim", 3.0, "att_dim", 3.0,
                                               "normalize", (double) normalize, NULL);
          caml_gradcheck_layer (&spec, &in, 5, seed++);
        }
}

static void
test_attention_gradients (void **state)
{
  (void) state;
  CamlShape in = caml_shape_sequence (5, 4);
  guint32 seed = 200;
  for (int score = 0; score < 2; score++)
    for (int query = 0; query < 2; query++)
      {
        print_message ("attention score=%s query=%s\n", score_names[score], query_names[query]);
        CamlLayerSpec spec = caml_test_spec ("attention", "score", (double) score,
                                             "query", (double) query,
                                             "query_dim", 3.0, "att_dim", 3.0, NULL);
        caml_gradcheck_layer (&spec, &in, 5, seed++);
      }
}

/* Through a whole text model: embedding → ca_att → dense under the sigmoid
 * cross-entropy, token input (lengths from the padding ids). */
static void
test_text_model_gradients (void **state)
{
  (void) state;
  CamlShape in = caml_shape_tokens (6, 7);
  for (int layer = 0; layer < 2; layer++)
    {
      CamlLayerSpec specs[3] = {
        caml_test_spec ("embedding", "dim", 3.0, NULL),
        layer == 0 ? caml_test_spec ("ca_att", "query", (double) QUERY_MEAN, NULL)
                   : caml_test_spec ("attention", "score", (double) SCORE_LUONG,
                                     "query_dim", 2.0, NULL),
        caml_test_spec ("dense", "units", 1.0, NULL),
      };
      GRand *rng = g_rand_new_with_seed (5 + layer);
      CamlModel *model = caml_model_new (&in, specs, 3, rng, NULL);
      assert_non_null (model);
      const float x[] = {
        1, 2, 3, 4, 5, 6,
        0, CAML_TOKEN_OOV, 6, CAML_TOKEN_PAD, CAML_TOKEN_PAD, CAML_TOKEN_PAD,
        CAML_TOKEN_PAD, CAML_TOKEN_PAD, CAML_TOKEN_PAD, CAML_TOKEN_PAD, CAML_TOKEN_PAD,
        CAML_TOKEN_PAD,
        3, CAML_TOKEN_PAD, CAML_TOKEN_PAD, CAML_TOKEN_PAD, CAML_TOKEN_PAD, CAML_TOKEN_PAD,
      };
      const float y[] = { 1, 0, 1, 0 };
      caml_gradcheck_model (model, CAML_LOSS_SIGMOID_XENT, x, y, 4);
      caml_model_free (model);
      g_rand_free (rng);
    }
}

/* ------------------------------------------------------------ references */

static const float *
param (CamlLayer *layer, const char *name)
{
  for (int i = 0; i < layer->n_params; i++)
    if (g_str_equal (layer->params[i].name, name))
      return layer->params[i].w;
  fail_msg ("layer %s has no parameter %s", layer->ops->name, name);
  return NULL;
}

static gboolean
has_param (CamlLayer *layer, const char *name)
{
  for (int i = 0; i < layer->n_params; i++)
    if (g_str_equal (layer->params[i].name, name))
      return TRUE;
  return FALSE;
}

static double
sigmoid (double x)
{
  return 1.0 / (1.0 + exp (-x));
}

/* One sample, memory s (L, D), written out from the equations in double:
 * out (D), and the gates (χ for ca_att, α for attention) in gate (L). */
static void
reference (CamlLayer *layer, int score, int query, gboolean normalize, const float *s,
           int len, int d, int q, int a, double *out, double *gate)
{
  gboolean ca = g_str_equal (layer->ops->name, "ca_att");
  double c[64] = { 0 };
  if (query == QUERY_LEARNED)
    {
      const float *learned = param (layer, "query");
      for (int j = 0; j < q; j++)
        c[j] = learned[j];
    }
  else
    for (int j = 0; j < d; j++)
      {
        for (int i = 0; i < len; i++)
          c[j] += s[i * d + j];
        c[j] = len > 0 ? c[j] / len : 0.0;
      }

  double f[64];
  for (int i = 0; i < len; i++)
    {
      const float *si = s + i * d;
      double z = 0.0;
      if (score == SCORE_BAHDANAU)
        {
          const float *W1 = param (layer, "W1"), *W2 = param (layer, "W2");
          const float *v = param (layer, "v");
          for (int k = 0; k < a; k++)
            {
              double h = 0.0;
              for (int j = 0; j < q; j++)
                h += W1[k * q + j] * c[j];
              for (int j = 0; j < d; j++)
                h += W2[k * d + j] * si[j];
              z += v[k] * tanh (h);
            }
        }
      else if (score == SCORE_LUONG)
        {
          const float *W = param (layer, "W");
          for (int j = 0; j < q; j++)
            for (int k = 0; k < d; k++)
              z += c[j] * W[j * d + k] * si[k];
        }
      else
        {
          const float *w_g = param (layer, "w_g"), *u_g = param (layer, "u_g");
          for (int j = 0; j < d; j++)
            z += w_g[j] * si[j];
          for (int j = 0; j < q; j++)
            z += u_g[j] * c[j];
        }
      f[i] = z;
    }

  for (int j = 0; j < d; j++)
    out[j] = 0.0;
  if (ca)
    {
      const float *W_h = param (layer, "W_h"), *b_h = param (layer, "b_h");
      double b_g = param (layer, "b_g")[0], chi_sum = 0.0;
      for (int i = 0; i < len; i++)
        {
          gate[i] = sigmoid (f[i] + b_g);
          chi_sum += gate[i];
          for (int j = 0; j < d; j++)
            out[j] += (1.0 - gate[i]) * s[i * d + j];
        }
      for (int j = 0; j < d; j++)
        {
          double h = b_h[j];
          for (int k = 0; k < q; k++)
            h += W_h[j * q + k] * c[k];
          out[j] += tanh (h) * chi_sum;
          if (normalize && len > 0)
            out[j] /= len;
        }
    }
  else
    {
      double zmax = -INFINITY, sum = 0.0;
      for (int i = 0; i < len; i++)
        zmax = fmax (zmax, f[i]);
      for (int i = 0; i < len; i++)
        sum += gate[i] = exp (f[i] - zmax);
      for (int i = 0; i < len; i++)
        {
          gate[i] /= sum;
          for (int j = 0; j < d; j++)
            out[j] += gate[i] * s[i * d + j];
        }
    }
}

/* A batch of three: full length, length 3 with garbage (NaN) in its
 * padding, length 0. Every output matches the reference; χ per step too. */
static void
check_against_reference (const char *type, int score, int query, gboolean normalize,
                         guint32 seed)
{
  enum { T = 5, D = 4, Q = 3, A = 2, N = 3 };
  CamlShape in = caml_shape_sequence (T, D);
  CamlLayerSpec spec = caml_test_spec (type, "score", (double) score, "query", (double) query,
                                       "query_dim", (double) Q, "att_dim", (double) A, NULL);
  if (g_str_equal (type, "ca_att"))
    spec.opt[caml_layer_ops_option_index (spec.ops, "normalize")] = normalize;
  GRand *rng = g_rand_new_with_seed (seed);
  CamlModel *model = caml_model_new (&in, &spec, 1, rng, NULL);
  assert_non_null (model);
  for (size_t i = 0; i < model->n_weights; i++)
    model->w[i] = (float) g_rand_double_range (rng, -0.8, 0.8);

  const int lengths[N] = { T, 3, 0 };
  float x[N * T * D];
  for (int i = 0; i < N; i++)
    for (int t = 0; t < T; t++)
      for (int j = 0; j < D; j++)
        x[(i * T + t) * D + j] = t < lengths[i] ? (float) g_rand_double_range (rng, -1, 1)
                                                : NAN;
  caml_model_set_sequence_lengths (model, lengths);
  const float *out = caml_model_forward (model, x, N);
  CamlLayer *layer = model->layers[0];
  int q = query == QUERY_MEAN ? D : Q;

  for (int i = 0; i < N; i++)
    {
      double ref[D], gate[T];
      reference (layer, score, query, normalize, x + i * T * D, lengths[i], D, q, A, ref, gate);
      for (int j = 0; j < D; j++)
        if (fabs (out[i * D + j] - ref[j]) > 1e-5 * fmax (1.0, fabs (ref[j])))
          fail_msg ("%s score=%s query=%s normalize=%d: sample %d out[%d] = %.7g, reference %.7g",
                    type, score_names[score], query_names[query], normalize, i, j,
                    out[i * D + j], ref[j]);
      if (layer->ops->chi != NULL)
        {
          int per = 0;
          const float *chi = layer->ops->chi (layer, &per);
          assert_int_equal (per, T);
          for (int t = 0; t < T; t++)
            assert_float_equal (chi[i * T + t], t < lengths[i] ? gate[t] : 0.0, 1e-6);
        }
    }
  caml_model_free (model);
  g_rand_free (rng);
}

static void
test_references (void **state)
{
  (void) state;
  guint32 seed = 300;
  for (int score = 0; score < 3; score++)
    for (int query = 0; query < 2; query++)
      {
        for (int normalize = 0; normalize < 2; normalize++)
          check_against_reference ("ca_att", score, query, normalize, seed++);
        if (score != SCORE_LINEAR)
          check_against_reference ("attention", score, query, FALSE, seed++);
      }
}

/* ----------------------------------------------------- softmax weights */

/* With the valid steps one-hot (s_i = e_i), the output is the weights
 * themselves: they sum to 1 over the valid steps and are 0 elsewhere, even
 * though a padded step holds e_3 plus a large value. */
static void
test_softmax_weights (void **state)
{
  (void) state;
  enum { T = 5, D = 6, N = 3 };
  CamlShape in = caml_shape_sequence (T, D);
  for (int score = 0; score < 2; score++)
    for (int query = 0; query < 2; query++)
      {
        CamlLayerSpec spec = caml_test_spec ("attention", "score", (double) score,
                                             "query", (double) query, "query_dim", 3.0,
                                             "att_dim", 3.0, NULL);
        GRand *rng = g_rand_new_with_seed (400 + 2 * score + query);
        CamlModel *model = caml_model_new (&in, &spec, 1, rng, NULL);
        for (size_t i = 0; i < model->n_weights; i++)
          model->w[i] = (float) g_rand_double_range (rng, -2, 2);
        const int lengths[N] = { 3, 5, 1 };
        float x[N * T * D] = { 0 };
        for (int i = 0; i < N; i++)
          for (int t = 0; t < T; t++)
            x[(i * T + t) * D + t] = 1.0f + (t >= lengths[i] ? 99.0f : 0.0f);
        caml_model_set_sequence_lengths (model, lengths);
        const float *out = caml_model_forward (model, x, N);
        for (int i = 0; i < N; i++)
          {
            double sum = 0.0;
            for (int j = 0; j < D; j++)
              {
                float w = out[i * D + j];
                if (j < lengths[i])
                  assert_true (w > 0.0f);
                else
                  assert_float_equal (w, 0.0, 0.0);
                sum += w;
              }
            assert_float_equal (sum, 1.0, 1e-6);
          }
        /* A single valid step takes all the weight. */
        assert_float_equal (out[2 * D + 0], 1.0, 1e-6);
        caml_model_free (model);
        g_rand_free (rng);
      }
}

/* ------------------------------------------------------------- padding */

/* Garbage after each sample's length changes neither the output nor any
 * gradient, and the input gradient is zero there. A batch of only empty
 * samples gives zeros and zero gradients, never NaN. */
static void
check_padding (const CamlLayerSpec *spec, guint32 seed)
{
  enum { T = 6, D = 3, N = 4 };
  CamlShape in = caml_shape_sequence (T, D);
  GRand *rng = g_rand_new_with_seed (seed);
  CamlModel *model = caml_model_new (&in, spec, 1, rng, NULL);
  for (size_t i = 0; i < model->n_weights; i++)
    model->w[i] += (float) g_rand_double_range (rng, -0.3, 0.3);
  CamlLayer *layer = model->layers[0];
  const int lengths[N] = { 2, 0, 6, 4 };
  float clean[N * T * D], dirty[N * T * D], r[N * D];
  for (int i = 0; i < N; i++)
    for (int t = 0; t < T; t++)
      for (int j = 0; j < D; j++)
        {
          int k = (i * T + t) * D + j;
          clean[k] = t < lengths[i] ? (float) g_rand_double_range (rng, -1, 1) : 0.0f;
          dirty[k] = t < lengths[i] ? clean[k] : (j == 0 ? NAN : 1e30f);
        }
  for (int k = 0; k < N * D; k++)
    r[k] = (float) g_rand_double_range (rng, -1, 1);

  caml_model_set_sequence_lengths (model, lengths);
  float out[2][N * D], dx[2][N * T * D];
  float *dw[2];
  for (int pass = 0; pass < 2; pass++)
    {
      const float *x = pass == 0 ? clean : dirty;
      const float *o = caml_model_forward (model, x, N);
      memcpy (out[pass], o, sizeof out[pass]);
      caml_model_zero_grad (model);
      layer->ops->backward (layer, dx[pass], r, x, o, N);
      dw[pass] = g_memdup2 (model->dw, model->n_weights * sizeof (float));
    }
  assert_memory_equal (out[0], out[1], sizeof out[0]);
  assert_memory_equal (dx[0], dx[1], sizeof dx[0]);
  assert_memory_equal (dw[0], dw[1], model->n_weights * sizeof (float));
  for (int i = 0; i < N; i++)
    for (int t = lengths[i]; t < T; t++)
      for (int j = 0; j < D; j++)
        assert_float_equal (dx[0][(i * T + t) * D + j], 0.0, 0.0);
  for (int j = 0; j < D; j++)
    assert_float_equal (out[0][1 * D + j], 0.0, 0.0);   /* the empty sample */

  /* Only empty samples. */
  const int empty[2] = { 0, 0 };
  caml_model_set_sequence_lengths (model, empty);
  const float *o = caml_model_forward (model, dirty, 2);
  for (int k = 0; k < 2 * D; k++)
    assert_float_equal (o[k], 0.0, 0.0);
  caml_model_zero_grad (model);
  layer->ops->backward (layer, dx[0], r, dirty, o, 2);
  for (size_t i = 0; i < model->n_weights; i++)
    assert_float_equal (model->dw[i], 0.0, 0.0);
  for (int k = 0; k < 2 * T * D; k++)
    assert_float_equal (dx[0][k], 0.0, 0.0);

  g_free (dw[0]);
  g_free (dw[1]);
  caml_model_free (model);
  g_rand_free (rng);
}

static void
test_padding_changes_nothing (void **state)
{
  (void) state;
  guint32 seed = 500;
  for (int score = 0; score < 3; score++)
    for (int query = 0; query < 2; query++)
      {
        CamlLayerSpec ca = caml_test_spec ("ca_att", "score", (double) score,
                                           "query", (double) query, "query_dim", 2.0,
                                           "att_dim", 2.0, "normalize", (double) (score == 0),
                                           NULL);
        check_padding (&ca, seed++);
        if (score == SCORE_LINEAR)
          continue;
        CamlLayerSpec att = caml_test_spec ("attention", "score", (double) score,
                                            "query", (double) query, "query_dim", 2.0,
                                            "att_dim", 2.0, NULL);
        check_padding (&att, seed++);
      }
}

/* ------------------------------------------------ groups and baseline */

static CamlParamGroup
group_of (CamlLayer *layer, const char *name)
{
  for (int i = 0; i < layer->n_params; i++)
    if (g_str_equal (layer->params[i].name, name))
      return layer->params[i].group;
  fail_msg ("no parameter %s", name);
  return CAML_N_GROUPS;
}

static void
test_groups (void **state)
{
  (void) state;
  CamlShape in = caml_shape_sequence (4, 5);
  static const char *const gate[3][4] = {
    { "W1", "W2", "v", "b_g" }, { "W", "b_g", NULL }, { "w_g", "u_g", "b_g", NULL },
  };
  for (int score = 0; score < 3; score++)
    {
      CamlLayerSpec spec = caml_test_spec ("ca_att", "score", (double) score, NULL);
      CamlModel *model = caml_model_new (&in, &spec, 1, NULL, NULL);
      CamlLayer *layer = model->layers[0];
      for (int k = 0; k < 4 && gate[score][k] != NULL; k++)
        assert_int_equal (group_of (layer, gate[score][k]), CAML_GROUP_GATE);
      assert_int_equal (group_of (layer, "W_h"), CAML_GROUP_VALUE);
      assert_int_equal (group_of (layer, "b_h"), CAML_GROUP_VALUE);
      assert_int_equal (group_of (layer, "query"), CAML_GROUP_ALWAYS);
      assert_int_equal (layer->out.kind, CAML_SHAPE_DENSE);
      assert_int_equal (layer->out.dims[0], 5);
      caml_model_free (model);
    }
  /* The mean query has no parameter; the learned one has query_dim values. */
  CamlLayerSpec mean = caml_test_spec ("ca_att", "query", (double) QUERY_MEAN, NULL);
  CamlModel *model = caml_model_new (&in, &mean, 1, NULL, NULL);
  assert_false (has_param (model->layers[0], "query"));
  caml_model_free (model);
  CamlLayerSpec att = caml_test_spec ("attention", "query_dim", 7.0, NULL);
  model = caml_model_new (&in, &att, 1, NULL, NULL);
  for (int i = 0; i < model->layers[0]->n_params; i++)
    assert_int_equal (model->layers[0]->params[i].group, CAML_GROUP_ALWAYS);
  assert_false (has_param (model->layers[0], "b_g"));   /* softmax ignores a bias */
  assert_int_equal (model->layers[0]->params[0].count, 7);
  caml_model_free (model);
}

/* ca_att's baseline is attention with the same score (bahdanau, luong), the
 * same query and sizes; the linear score, which softmax attention does not
 * have, becomes bahdanau. */
static void
test_baseline (void **state)
{
  (void) state;
  static const char *const docs[] = {
    "{ \"data\": { \"builtin\": \"sst\" }, \"model\": ["
    "  { \"layer\": \"embedding\", \"dim\": 8 },"
    "  { \"layer\": \"ca_att\", \"score\": \"luong\", \"query\": \"mean\", \"query_dim\": 7 },"
    "  { \"layer\": \"dense\", \"units\": 1 } ] }",
    "{ \"data\": { \"builtin\": \"sst\" }, \"model\": ["
    "  { \"layer\": \"embedding\", \"dim\": 8 },"
    "  { \"layer\": \"ca_att\", \"att_dim\": 9, \"normalize\": true },"
    "  { \"layer\": \"dense\", \"units\": 1 } ] }",
  };
  static const char *const expect_score[] = { "luong", "bahdanau" };
  for (int k = 0; k < 2; k++)
    {
      GError *error = NULL;
      CamlExperiment *exp = caml_experiment_load_data (docs[k], -1, "att.json", &error);
      if (exp == NULL)
        fail_msg ("%s", error->message);
      CamlExperiment *base = caml_experiment_make_baseline (exp);
      const CamlLayerSpec *spec = &base->layers[1];
      assert_string_equal (spec->ops->name, "attention");
      const CamlOptionSpec *opts = spec->ops->options;
      int score = caml_layer_ops_option_index (spec->ops, "score");
      assert_string_equal (opts[score].choices[(int) spec->opt[score]], expect_score[k]);
      int query = caml_layer_ops_option_index (spec->ops, "query");
      assert_int_equal ((int) spec->opt[query], k == 0 ? QUERY_MEAN : QUERY_LEARNED);
      if (k == 0)
        assert_int_equal ((int) spec->opt[caml_layer_ops_option_index (spec->ops, "query_dim")], 7);
      else
        assert_int_equal ((int) spec->opt[caml_layer_ops_option_index (spec->ops, "att_dim")], 9);

      /* Both build on a token input and end in the embedding's width. */
      CamlShape in = caml_shape_tokens (10, 30);
      CamlModel *a = caml_experiment_build_model (exp, &in, &error);
      CamlModel *b = caml_experiment_build_model (base, &in, &error);
      assert_non_null (a);
      assert_non_null (b);
      assert_int_equal (a->layers[1]->out.dims[0], 8);
      assert_int_equal (b->layers[1]->out.dims[0], 8);
      caml_model_free (a);
      caml_model_free (b);
      caml_experiment_free (base);
      caml_experiment_free (exp);
    }
}

static void
test_shape_errors (void **state)
{
  (void) state;
  CamlShape tokens = caml_shape_tokens (10, 50);
  CamlShape flat = caml_shape_flat (6);
  const char *types[] = { "ca_att", "attention" };
  for (int k = 0; k < 2; k++)
    for (int s = 0; s < 2; s++)
      {
        CamlLayerSpec spec = caml_test_spec (types[k], NULL);
        GError *error = NULL;
        CamlModel *model = caml_model_new (s == 0 ? &tokens : &flat, &spec, 1, NULL, &error);
        assert_null (model);
        assert_non_null (strstr (error->message, "takes a sequence of vectors"));
        g_error_free (error);
      }
}

/* ------------------------------------------------------------ learning */

/* A keyword task: label 1 when token 0 occurs among 2–8 random tokens of 12.
 * Each layer and score learns it in 400 Adagrad steps: at most 2 errors on
 * a held-out batch of 32. */
static void
test_learns_keyword (void **state)
{
  (void) state;
  enum { T = 8, V = 12, N = 32, DIM = 6 };
  CamlShape in = caml_shape_tokens (T, V);
  GRand *data_rng = g_rand_new_with_seed (77);
  const int n_sets = 8;
  float x[8][N * T], y[8][N];
  for (int b = 0; b < n_sets; b++)
    for (int i = 0; i < N; i++)
      {
        int len = g_rand_int_range (data_rng, 2, T + 1);
        gboolean positive = g_rand_boolean (data_rng);
        for (int t = 0; t < T; t++)
          x[b][i * T + t] = t < len ? (float) g_rand_int_range (data_rng, 1, V)
                                    : (float) CAML_TOKEN_PAD;
        if (positive)
          x[b][i * T + g_rand_int_range (data_rng, 0, len)] = 0.0f;
        y[b][i] = positive;
      }
  struct { const char *type; int score; int query; } cases[] = {
    { "ca_att", SCORE_LINEAR, QUERY_LEARNED }, { "ca_att", SCORE_BAHDANAU, QUERY_MEAN },
    { "ca_att", SCORE_LUONG, QUERY_LEARNED }, { "attention", SCORE_BAHDANAU, QUERY_LEARNED },
    { "attention", SCORE_LUONG, QUERY_MEAN },
  };
  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      CamlLayerSpec specs[3] = {
        caml_test_spec ("embedding", "dim", (double) DIM, NULL),
        caml_test_spec (cases[k].type, "score", (double) cases[k].score,
                        "query", (double) cases[k].query, "query_dim", 4.0, "att_dim", 4.0, NULL),
        caml_test_spec ("dense", "units", 1.0, NULL),
      };
      GRand *rng = g_rand_new_with_seed (9);
      CamlModel *model = caml_model_new (&in, specs, 3, rng, NULL);
      CamlOptimizerConfig config;
      caml_optimizer_config_defaults (&config, CAML_OPTIM_ADAGRAD);
      config.lr = 0.3;
      CamlOptimizer *opt = caml_optimizer_new (&config, model->n_weights);
      float dpred[N];
      for (long step = 0; step < 400; step++)
        {
          int b = (int) (step % (n_sets - 1));   /* the last set is held out */
          const float *pred = caml_model_forward (model, x[b], N);
          float loss = caml_loss_compute (CAML_LOSS_SIGMOID_XENT, dpred, pred, y[b], N, 1);
          assert_true (isfinite (loss));
          caml_model_zero_grad (model);
          caml_model_backward (model, x[b], dpred, N);
          caml_optimizer_step (opt, model, step);
        }
      const float *pred = caml_model_forward (model, x[n_sets - 1], N);
      int correct = 0;
      for (int i = 0; i < N; i++)
        correct += (pred[i] > 0.0f) == (y[n_sets - 1][i] > 0.5f);
      print_message ("%s %s/%s: %d/%d held-out correct\n", cases[k].type,
                     score_names[cases[k].score], query_names[cases[k].query], correct, N);
      assert_true (correct >= N - 2);
      caml_optimizer_free (opt);
      caml_model_free (model);
      g_rand_free (rng);
    }
  g_rand_free (data_rng);
}

/* ------------------------------------------------------ reserved buffers */

/* The bytes of a layer's scratch for batches of n samples of T steps of
 * width D, what its reserve op counts: the memory for n·T rows (every
 * sample full length), its scores, queries and offsets, and the layer's
 * own buffers. */
static size_t
scratch_bytes (const char *type, int score, int query, int n, int T, int D, int query_dim,
               int att_dim)
{
  size_t rows = (size_t) n * T, N = n, d = D, a = att_dim;
  size_t q = query == QUERY_MEAN ? d : (size_t) query_dim;
  size_t floats = 2 * rows * d + 2 * rows + 2 * N * q;   /* S, dS; z, dz; C, dC */
  if (score == SCORE_BAHDANAU)                           /* H, dH; W1 c and its gradient */
    floats += 2 * rows * a + 2 * N * a;
  else if (score == SCORE_LUONG)                         /* Wᵀ c and its gradient */
    floats += 2 * N * d;
  if (g_str_equal (type, "attention"))                   /* α, dα */
    floats += 2 * rows;
  else                                                   /* χ, 1 − χ, χ per step; v(c), G; Σ χ */
    floats += 3 * rows + 2 * N * d + N;
  return floats * sizeof (float) + (N + 1) * sizeof (int);   /* and off */
}

/* After caml_model_reserve for n samples, a training pass over n samples of
 * full length (the most valid steps n samples have), then one over a
 * ragged batch of fewer, allocates nothing, for each layer, score and
 * query: the reserve op counted and allocated every buffer forward,
 * backward and χ use. */
static void
test_reserved_pass_allocates_nothing (void **state)
{
  (void) state;
  enum { N = 6, T = 5, D = 4, Q = 3, A = 2 };
  CamlShape in = caml_shape_sequence (T, D);
  const int full[N] = { T, T, T, T, T, T }, ragged[4] = { 2, 0, 5, 1 };
  GRand *rng = g_rand_new_with_seed (41);
  float x[N * T * D], dout[N * D];
  for (gsize i = 0; i < G_N_ELEMENTS (x); i++)
    x[i] = (float) g_rand_double_range (rng, -1, 1);
  for (gsize i = 0; i < G_N_ELEMENTS (dout); i++)
    dout[i] = (float) g_rand_double_range (rng, -1, 1);

  const char *types[] = { "ca_att", "attention" };
  for (int k = 0; k < 2; k++)
    for (int score = 0; score < (k == 0 ? 3 : 2); score++)
      for (int query = 0; query < 2; query++)
        {
          CamlLayerSpec spec = caml_test_spec (types[k], "score", (double) score,
                                               "query", (double) query, "query_dim", (double) Q,
                                               "att_dim", (double) A, NULL);
          GError *error = NULL;
          CamlModel *model = caml_model_new (&in, &spec, 1, rng, &error);
          assert_non_null (model);
          CamlLayer *layer = model->layers[0];
          if (layer->ops->reserve == NULL)
            fail_msg ("%s has no reserve op", types[k]);
          size_t bytes = 0;
          assert_true (layer->ops->reserve (layer, N, FALSE, &bytes));
          assert_int_equal (bytes, scratch_bytes (types[k], score, query, N, T, D, Q, A));
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
            fail_msg ("%s score=%s query=%s: %u allocations in reserved passes", types[k],
                      score_names[score], query_names[query], made);
          for (size_t i = 0; i < model->n_weights; i++)
            assert_true (isfinite (model->dw[i]));
          caml_model_free (model);
        }
  g_rand_free (rng);
}

/* A batch whose outputs fit but whose memory no machine holds is an error
 * from caml_model_reserve naming the layer and the size (the outputs, their
 * gradients and the layer's scratch), not an abort in the forward pass, and
 * the model still runs batches that fit. 2^25 samples of 2^21 steps of
 * width 1: 128 MB of outputs, and 2^48 bytes for the packed steps alone
 * (beyond a 47-bit address space: refused even where the kernel
 * overcommits without limit). Each layer with its default score. */
static void
test_reserve_too_large (void **state)
{
  (void) state;
  /* No limit from the machine's memory: what is tested is the allocation
   * failing (caml_memory_limit is tested in test-layers). */
  caml_set_memory_limit (SIZE_MAX);
  const int N = 1 << 25, T = 1 << 21, D = 1;
  CamlShape in = caml_shape_sequence (T, D);
  const int lengths[2] = { 3, 0 };
  float *x = g_new0 (float, (size_t) 2 * T * D), dout[2] = { 1, -1 };
  for (int k = 0; k < 3 * D; k++)
    x[k] = (float) (k + 1) / 4.0f;
  const char *types[] = { "ca_att", "attention" };
  const int scores[] = { SCORE_LINEAR, SCORE_BAHDANAU };
  for (int k = 0; k < 2; k++)
    {
      CamlLayerSpec spec = caml_test_spec (types[k], "query_dim", 1.0, "att_dim", 1.0, NULL);
      assert_float_equal (spec.opt[caml_layer_ops_option_index (spec.ops, "score")],
                          scores[k], 0);
      GRand *rng = g_rand_new_with_seed (6);
      GError *error = NULL;
      CamlModel *model = caml_model_new (&in, &spec, 1, rng, &error);
      g_rand_free (rng);
      assert_non_null (model);

      assert_false (caml_model_reserve (model, N, &error));
      size_t need = 2 * (size_t) N * D * sizeof (float)
                    + scratch_bytes (types[k], scores[k], QUERY_LEARNED, N, T, D, 1, 1);
      g_autofree char *size = g_format_size (need);
      g_autofree char *expected =
        g_strdup_printf ("layer 0 (%s): the buffers for a batch of %d samples need %s, "
                         "which cannot be allocated", types[k], N, size);
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
    cmocka_unit_test (test_ca_att_gradients),
    cmocka_unit_test (test_attention_gradients),
    cmocka_unit_test (test_text_model_gradients),
    cmocka_unit_test (test_references),
    cmocka_unit_test (test_softmax_weights),
    cmocka_unit_test (test_padding_changes_nothing),
    cmocka_unit_test (test_groups),
    cmocka_unit_test (test_baseline),
    cmocka_unit_test (test_shape_errors),
    cmocka_unit_test (test_learns_keyword),
    cmocka_unit_test (test_reserved_pass_allocates_nothing),
    cmocka_unit_test (test_reserve_too_large),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
