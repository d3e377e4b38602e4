/* ca_att.c — CA-ATT, the context-aware attention of Eq. 23, 25, 26.
 *
 * Memory s_1 … s_L (the sample's valid steps of a (T, D) input), query c:
 *
 *   χ_i  = sigmoid(f(s_i, c) + b_g)       one gate per step, no normalisation
 *   v(c) = tanh(W_h c + b_h)              (D)
 *   out  = v(c) Σ_i χ_i + Σ_i (1 − χ_i) s_i
 *
 *   f(s_i, c) = w_g · s_i + u_g · c       score linear (Eq. 26, the default)
 *             = vᵀ tanh(W1 c + W2 s_i)    score bahdanau (Eq. 43 inside the sigmoid)
 *             = cᵀ W s_i                  score luong
 *
 * (With the linear score b_g is Eq. 26's own bias.) With `normalize` the
 * output is divided by L (an option beyond the paper, whose sums grow with
 * the length). A sample of length 0 gives zeros and no gradient.
 *
 * The query is `learned` or the `mean` of the valid steps, as for the
 * softmax `attention` baseline (attention.c, which shares the memory, query
 * and score code). Groups for em_steps: the score's parameters and b_g are
 * the gate, W_h and b_h the value; a learned query stands for the context
 * input the paper's c is (a decoder state), feeds both halves, and so is
 * updated every step (CAML_GROUP_ALWAYS), like the embeddings below it. */
#include <math.h>

#include "layers.h"

enum { OPT_SCORE, OPT_QUERY, OPT_QUERY_DIM, OPT_ATT_DIM, OPT_NORMALIZE };

/* Same order as CamlAttScore: bahdanau and luong carry over to `attention`. */
static const char *const ca_att_score_names[] = { "bahdanau", "luong", "linear", NULL };

static const CamlOptionSpec ca_att_options[] = {
  [OPT_SCORE]     = { "score", CAML_OPT_ENUM,
                      "f(s_i, c) inside the sigmoid: linear w_g·s_i + u_g·c (Eq. 26), "
                      "bahdanau vᵀ tanh(W1 c + W2 s_i), luong cᵀ W s_i",
                      0, 0, CAML_ATT_SCORE_LINEAR, ca_att_score_names },
  [OPT_QUERY]     = { "query", CAML_OPT_ENUM,
                      "the query c: a learned vector, or the mean of the valid steps",
                      0, 0, CAML_ATT_QUERY_LEARNED, caml_att_query_names },
  [OPT_QUERY_DIM] = { "query_dim", CAML_OPT_INT, "width of the learned query (mean: D)",
                      1, 4096, 50, NULL },
  [OPT_ATT_DIM]   = { "att_dim", CAML_OPT_INT, "hidden width A of the bahdanau score",
                      1, 4096, 50, NULL },
  [OPT_NORMALIZE] = { "normalize", CAML_OPT_BOOL, "divide the sums by the sample's length",
                      0, 1, 0, NULL },
};

typedef struct {
  CamlAttMemory mem;
  gboolean      normalize;
  CamlParam    *W_h, *b_h;   /* (D, Q), (D) */
  float        *chi;         /* (M) χ of the last forward, packed */
  size_t        chi_cap;
  float        *work;        /* (M) 1 − χ in forward, dχ in backward */
  size_t        work_cap;
  float        *chi_steps;   /* (N, T) χ per step, 0 at padding (ops->chi) */
  size_t        chi_steps_cap;
  float        *V;           /* (N, D) v(c); dA in backward */
  size_t        V_cap;
  float        *G;           /* (N, D) dout scaled by the length, scratch */
  size_t        G_cap;
  float        *X;           /* (N) Σ χ */
  size_t        X_cap;
} CaAtt;

static gboolean
ca_att_setup (CamlLayer *layer, GError **error)
{
  (void) error;
  CaAtt *s = g_new0 (CaAtt, 1);
  CamlAttMemory *mem = &s->mem;
  caml_att_memory_setup (mem, layer, (CamlAttScore) layer->opt[OPT_SCORE],
                         (CamlAttQuery) layer->opt[OPT_QUERY], (int) layer->opt[OPT_QUERY_DIM],
                         (int) layer->opt[OPT_ATT_DIM], CAML_GROUP_GATE, TRUE);
  s->normalize = layer->opt[OPT_NORMALIZE] != 0.0;
  s->W_h = caml_layer_add_param (layer, "W_h", CAML_GROUP_VALUE, CAML_INIT_GLOROT,
                                 mem->q, mem->d, (size_t) mem->d * mem->q);
  s->b_h = caml_layer_add_param (layer, "b_h", CAML_GROUP_VALUE, CAML_INIT_ZERO,
                                 mem->q, mem->d, mem->d);
  layer->out = caml_shape_flat (mem->d);
  layer->state = s;
  return TRUE;
}

static void
ca_att_release (CaAtt *s)
{
  caml_att_memory_clear (&s->mem);
  g_clear_pointer (&s->chi, g_free);
  g_clear_pointer (&s->work, g_free);
  g_clear_pointer (&s->chi_steps, g_free);
  g_clear_pointer (&s->V, g_free);
  g_clear_pointer (&s->G, g_free);
  g_clear_pointer (&s->X, g_free);
  s->chi_cap = s->work_cap = s->chi_steps_cap = s->V_cap = s->G_cap = s->X_cap = 0;
}

/* The memory's buffers and the layer's own for batches of up to n samples
 * (at least one: an empty batch still writes off[0]). */
static gboolean
ca_att_reserve (CamlLayer *layer, int n, gboolean allocate, size_t *bytes)
{
  CaAtt *s = layer->state;
  n = MAX (n, 1);
  CamlScratch sc = { .allocate = allocate, .bytes = *bytes };
  int t = s->mem.t, d = s->mem.d;
  caml_att_memory_reserve (&s->mem, &sc, n);
  caml_scratch_floats (&sc, &s->chi, &s->chi_cap, n, t);
  caml_scratch_floats (&sc, &s->work, &s->work_cap, n, t);
  caml_scratch_floats (&sc, &s->chi_steps, &s->chi_steps_cap, n, t);
  caml_scratch_floats (&sc, &s->V, &s->V_cap, n, d);
  caml_scratch_floats (&sc, &s->G, &s->G_cap, n, d);
  caml_scratch_floats (&sc, &s->X, &s->X_cap, n, 1);
  *bytes = sc.bytes;
  if (sc.failed)
    {
      ca_att_release (s);
      return FALSE;
    }
  return TRUE;
}

static float
length_scale (const CaAtt *s, int len)
{
  return s->normalize && len > 0 ? 1.0f / (float) len : 1.0f;
}

static void
ca_att_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  CaAtt *s = layer->state;
  CamlAttMemory *mem = &s->mem;
  caml_scratch_require (layer, n);
  caml_att_memory_forward (mem, inp, layer->lengths, n);
  int d = mem->d, t = mem->t, m = mem->m;

  caml_activation_forward (CAML_ACT_SIGMOID, s->chi, mem->z, m);
  for (int r = 0; r < m; r++)
    s->work[r] = 1.0f - s->chi[r];
  /* v(c) = tanh(W_h c + b_h) */
  caml_linear_forward (s->V, mem->C, s->W_h->w, s->b_h->w, n, mem->q, d);
  caml_activation_forward (CAML_ACT_TANH, s->V, s->V, (size_t) n * d);

  for (int i = 0; i < n; i++)
    {
      int r0 = mem->off[i], len = mem->off[i + 1] - r0;
      const float *chi = s->chi + r0;       /* (L) */
      float *steps = s->chi_steps + (size_t) i * t;
      float *o = out + (size_t) i * d;      /* (D) */
      float x = 0.0f;
      for (int r = 0; r < len; r++)
        x += chi[r];
      s->X[i] = x;
      memcpy (steps, chi, len * sizeof (float));
      memset (steps + len, 0, (t - len) * sizeof (float));
      if (len == 0)
        {
          memset (o, 0, d * sizeof (float));
          continue;
        }
      /* out = scale (v(c) Σ χ + Sᵀ (1 − χ)) */
      float scale = length_scale (s, len);
      const float *v = s->V + (size_t) i * d;
      for (int j = 0; j < d; j++)
        o[j] = scale * x * v[j];
      cblas_sgemv (CblasRowMajor, CblasTrans, len, d, scale, mem->S + (size_t) r0 * d, d,
                   s->work + r0, 1, 1.0f, o, 1);
    }
}

static void
ca_att_backward (CamlLayer *layer, float *dinp, const float *dout,
                 const float *inp, const float *out, int n)
{
  (void) inp; (void) out;
  CaAtt *s = layer->state;
  CamlAttMemory *mem = &s->mem;
  int d = mem->d;

  for (int i = 0; i < n; i++)
    {
      int r0 = mem->off[i], len = mem->off[i + 1] - r0;
      float scale = length_scale (s, len);
      float *G = s->G + (size_t) i * d;     /* (D) */
      for (int j = 0; j < d; j++)
        G[j] = scale * dout[(size_t) i * d + j];
      if (len == 0)
        continue;
      const float *v = s->V + (size_t) i * d;
      const float *chi = s->chi + r0;
      float *dchi = s->work + r0;
      float *dS = mem->dS + (size_t) r0 * d;   /* (L, D) */
      /* dS_r = (1 − χ_r) G;  dχ_r = G · v − G · s_r;  dz_r = dχ_r χ_r (1 − χ_r) */
      for (int r = 0; r < len; r++)
        for (int j = 0; j < d; j++)
          dS[(size_t) r * d + j] = (1.0f - chi[r]) * G[j];
      float gv = 0.0f;
      for (int j = 0; j < d; j++)
        gv += G[j] * v[j];
      cblas_sgemv (CblasRowMajor, CblasNoTrans, len, d, -1.0f, mem->S + (size_t) r0 * d, d,
                   G, 1, 0.0f, dchi, 1);
      for (int r = 0; r < len; r++)
        mem->dz[r0 + r] = (dchi[r] + gv) * chi[r] * (1.0f - chi[r]);
    }

  /* Through v(c): dA = (Σ χ) G ⊙ (1 − V²) in place of V, then
   * dW_h += dAᵀ C, db_h += Σ dA, dC = dA W_h. */
  for (int i = 0; i < n; i++)
    {
      float x = s->X[i];
      const float *G = s->G + (size_t) i * d;
      float *va = s->V + (size_t) i * d;
      for (int j = 0; j < d; j++)
        va[j] = x * G[j] * (1.0f - va[j] * va[j]);
    }
  caml_linear_backward (mem->dC, s->W_h->dw, s->b_h->dw, s->V, mem->C, s->W_h->w,
                        n, mem->q, d, FALSE);
  caml_att_memory_backward (mem, dinp);
}

static const float *
ca_att_chi (CamlLayer *layer, int *chi_per_sample)
{
  CaAtt *s = layer->state;
  *chi_per_sample = s->mem.t;
  return s->chi_steps;
}

static void
ca_att_free (CamlLayer *layer)
{
  CaAtt *s = layer->state;
  ca_att_release (s);
  g_free (s);
}

const CamlLayerOps caml_ca_att_ops = {
  .name = "ca_att",
  .title = "CA-ATT",
  .description = "Context-aware attention over a sequence: v(c) Σ χ_i + Σ (1 − χ_i) s_i, "
                 "χ_i = sigmoid(f(s_i, c) + b_g)",
  .context_aware = TRUE,
  .baseline = "attention",
  .options = ca_att_options,
  .n_options = G_N_ELEMENTS (ca_att_options),
  .accepts = CAML_ACCEPTS (CAML_SHAPE_SEQUENCE),
  .reads_order = TRUE,
  .setup = ca_att_setup,
  .forward = ca_att_forward,
  .backward = ca_att_backward,
  .chi = ca_att_chi,
  .free = ca_att_free,
  .reserve = ca_att_reserve,
};
