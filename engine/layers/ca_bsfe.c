/* ca_bsfe.c — CA-BSFE (Eq. 19–20, Fig. 2): a bag of tokens to one vector.
 *
 * Every token id owns w' (N_V = dim) and w_σ (M = gate_dim); θ (M) and v0
 * (dim) are global:
 *
 *   χ̃(w) = sigmoid(θ · w_σ)
 *   s    = v0 · Σ_w χ̃(w)  +  Σ_w (1 − χ̃(w)) · w'
 *
 * An id outside the vocabulary (a word never seen in training) has χ̃ = 1: it
 * adds v0. With `scale` "mean" or "sqrt" the sum is divided by the bag size
 * or by its square root (options beyond the paper, which sums). With
 * `gate_bias` the gate has a bias: χ̃(w) = sigmoid(θ · w_σ + b_σ), b_σ
 * starting at 0. "mean" with a gate bias is the reading of Google's own
 * CA-BSFE code (neural-structured-learning, research/carls/models/caml:
 * sigma_bias, and the bag's sum divided by its non-empty keys). The gate
 * group is {w_σ, θ, b_σ}, the value group {w', v0}, for the em_steps
 * schedule.
 *
 * `average` (the paper's baseline) is in the same file: s = Σ_w E[w] / |bag|
 * over the tokens of the vocabulary, zeros for a bag without any. */
#include <math.h>

#include "layers.h"

/* ----------------------------------------------------------------- CA-BSFE */

enum { OPT_DIM, OPT_GATE_DIM, OPT_SCALE, OPT_GATE_BIAS };

/* How the bag's terms are combined (bag_scale_names): the paper's sum, or
 * the sum divided by the bag size or by its square root. */
enum { BAG_SUM, BAG_MEAN, BAG_SQRT };
static const char *const bag_scale_names[] = { "sum", "mean", "sqrt", NULL };

static const CamlOptionSpec ca_bsfe_options[] = {
  [OPT_DIM]      = { "dim", CAML_OPT_INT, "width of w' and v0 (the output)", 1, 4096, 5, NULL },
  [OPT_GATE_DIM] = { "gate_dim", CAML_OPT_INT, "width of w_σ and θ", 1, 4096, 5, NULL },
  [OPT_SCALE]    = { "scale", CAML_OPT_ENUM,
                      "sum: Eq. 20 as the paper writes it; mean: divided by the bag size; "
                      "sqrt: divided by the square root of the bag size",
                      0, 0, BAG_SUM, bag_scale_names },
  [OPT_GATE_BIAS] = { "gate_bias", CAML_OPT_BOOL,
                      "a bias b_σ in the gate, χ̃ = sigmoid(θ·w_σ + b_σ), as in Google's "
                      "CA-BSFE code (Eq. 19 has none)",
                      0, 1, 0, NULL },
};

typedef struct {
  int        t, v, d, m;
  int        scale;   /* BAG_* */
  CamlParam *wp;      /* (V, D)  w' */
  CamlParam *ws;      /* (V, M)  w_σ */
  CamlParam *theta;   /* (M) */
  CamlParam *v0;      /* (D) */
  CamlParam *bias;    /* (1) b_σ, or NULL without gate_bias */
  float     *chi;     /* (N, T) χ̃ of the last forward */
  size_t     chi_cap;
} CaBsfe;

static gboolean
ca_bsfe_setup (CamlLayer *layer, GError **error)
{
  (void) error;
  CaBsfe *s = g_new0 (CaBsfe, 1);
  s->t = layer->in.dims[0];
  s->v = MAX (layer->in.vocab, 1);
  s->d = (int) layer->opt[OPT_DIM];
  s->m = (int) layer->opt[OPT_GATE_DIM];
  s->scale = (int) layer->opt[OPT_SCALE];
  s->wp = caml_layer_add_param (layer, "w_prime", CAML_GROUP_VALUE, CAML_INIT_SMALL, 1, s->d,
                                (size_t) s->v * s->d);
  s->ws = caml_layer_add_param (layer, "w_sigma", CAML_GROUP_GATE, CAML_INIT_SMALL, 1, s->m,
                                (size_t) s->v * s->m);
  s->theta = caml_layer_add_param (layer, "theta", CAML_GROUP_GATE, CAML_INIT_SMALL,
                                   s->m, 1, s->m);
  s->v0 = caml_layer_add_param (layer, "v0", CAML_GROUP_VALUE, CAML_INIT_SMALL, 1, s->d, s->d);
  if (layer->opt[OPT_GATE_BIAS] != 0.0)   /* declared last: without it, the layout is as before */
    s->bias = caml_layer_add_param (layer, "b_sigma", CAML_GROUP_GATE, CAML_INIT_ZERO, 1, 1, 1);
  s->wp->token_rows = s->d;
  s->ws->token_rows = s->m;
  layer->out = caml_shape_flat (s->d);
  layer->state = s;
  return TRUE;
}

static inline float
word_gate (const CaBsfe *s, int id)
{
  const float *ws = s->ws->w + (size_t) id * s->m;
  float z = s->bias != NULL ? s->bias->w[0] : 0.0f;
  for (int k = 0; k < s->m; k++)
    z += s->theta->w[k] * ws[k];
  return caml_sigmoidf (z);
}

static inline float
bag_scale (const CaBsfe *s, int len)
{
  if (len <= 0)
    return 1.0f;
  switch (s->scale)
    {
    case BAG_MEAN:
      return 1.0f / (float) len;
    case BAG_SQRT:
      return 1.0f / sqrtf ((float) len);
    default:
      return 1.0f;
    }
}

/* chi (N, T) for batches of up to n samples. */
static gboolean
ca_bsfe_reserve (CamlLayer *layer, int n, gboolean allocate, size_t *bytes)
{
  CaBsfe *s = layer->state;
  CamlScratch sc = { .allocate = allocate, .bytes = *bytes };
  caml_scratch_floats (&sc, &s->chi, &s->chi_cap, n, s->t);
  *bytes = sc.bytes;
  return !sc.failed;
}

static void
ca_bsfe_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  CaBsfe *s = layer->state;
  caml_scratch_require (layer, n);
  for (int i = 0; i < n; i++)
    {
      const float *ids = inp + (size_t) i * s->t;   /* (T) */
      float *chi = s->chi + (size_t) i * s->t;      /* (T) */
      float *o = out + (size_t) i * s->d;           /* (D) */
      int len = layer->lengths[i];
      float chi_sum = 0.0f;
      memset (o, 0, s->d * sizeof (float));
      for (int t = 0; t < len; t++)
        {
          int id = (int) ids[t];
          if (id < 0 || id >= s->v)
            {
              chi[t] = 1.0f;
              chi_sum += 1.0f;
              continue;
            }
          chi[t] = word_gate (s, id);
          chi_sum += chi[t];
          const float *wp = s->wp->w + (size_t) id * s->d;
          float a = 1.0f - chi[t];
          for (int j = 0; j < s->d; j++)
            o[j] += a * wp[j];
        }
      float scale = bag_scale (s, len);
      for (int j = 0; j < s->d; j++)
        o[j] = scale * (o[j] + chi_sum * s->v0->w[j]);
    }
}

static void
ca_bsfe_backward (CamlLayer *layer, float *dinp, const float *dout,
                  const float *inp, const float *out, int n)
{
  (void) dinp; (void) out;   /* ids have no gradient */
  CaBsfe *s = layer->state;
  for (int i = 0; i < n; i++)
    {
      const float *ids = inp + (size_t) i * s->t;
      const float *chi = s->chi + (size_t) i * s->t;
      int len = layer->lengths[i];
      float scale = bag_scale (s, len);
      float g[4096];   /* (D) scaled dout; D ≤ 4096 by the option's range */
      for (int j = 0; j < s->d; j++)
        g[j] = scale * dout[(size_t) i * s->d + j];

      float chi_sum = 0.0f;
      for (int t = 0; t < len; t++)
        {
          chi_sum += chi[t];
          int id = (int) ids[t];
          if (id < 0 || id >= s->v)
            continue;
          const float *wp = s->wp->w + (size_t) id * s->d;
          float *dwp = s->wp->dw + (size_t) id * s->d;
          float a = 1.0f - chi[t], dchi = 0.0f;
          for (int j = 0; j < s->d; j++)
            {
              dwp[j] += a * g[j];
              dchi += g[j] * (s->v0->w[j] - wp[j]);
            }
          float dz = dchi * chi[t] * (1.0f - chi[t]);
          const float *ws = s->ws->w + (size_t) id * s->m;
          float *dws = s->ws->dw + (size_t) id * s->m;
          for (int k = 0; k < s->m; k++)
            {
              s->theta->dw[k] += dz * ws[k];
              dws[k] += dz * s->theta->w[k];
            }
          if (s->bias != NULL)
            s->bias->dw[0] += dz;
        }
      for (int j = 0; j < s->d; j++)
        s->v0->dw[j] += chi_sum * g[j];
    }
}

static gboolean
ca_bsfe_word_chi (CamlLayer *layer, float *chi, int vocab)
{
  CaBsfe *s = layer->state;
  for (int id = 0; id < vocab; id++)
    chi[id] = id < s->v ? word_gate (s, id) : 1.0f;
  return TRUE;
}

static const float *
ca_bsfe_chi (CamlLayer *layer, int *chi_per_sample)
{
  CaBsfe *s = layer->state;
  *chi_per_sample = s->t;
  return s->chi;
}

static void
ca_bsfe_free (CamlLayer *layer)
{
  CaBsfe *s = layer->state;
  g_free (s->chi);
  g_free (s);
}

const CamlLayerOps caml_ca_bsfe_ops = {
  .name = "ca_bsfe",
  .title = "CA-BSFE",
  .description = "Bag of tokens to a vector, each token gated between v0 and its w'",
  .context_aware = TRUE,
  .baseline = "average",
  .options = ca_bsfe_options,
  .n_options = G_N_ELEMENTS (ca_bsfe_options),
  .accepts = CAML_ACCEPTS (CAML_SHAPE_TOKENS),
  .setup = ca_bsfe_setup,
  .forward = ca_bsfe_forward,
  .backward = ca_bsfe_backward,
  .chi = ca_bsfe_chi,
  .word_chi = ca_bsfe_word_chi,
  .free = ca_bsfe_free,
  .reserve = ca_bsfe_reserve,
};

/* ----------------------------------------------------------------- average */

static const CamlOptionSpec average_options[] = {
  { "dim", CAML_OPT_INT, "vector width (the output)", 1, 4096, 5, NULL },
};

typedef struct {
  int        t, v, d;
  CamlParam *E;   /* (V, D) */
} Average;

static gboolean
average_setup (CamlLayer *layer, GError **error)
{
  (void) error;
  Average *s = g_new0 (Average, 1);
  s->t = layer->in.dims[0];
  s->v = MAX (layer->in.vocab, 1);
  s->d = (int) layer->opt[0];
  s->E = caml_layer_add_param (layer, "E", CAML_GROUP_ALWAYS, CAML_INIT_SMALL, 1, s->d,
                               (size_t) s->v * s->d);
  s->E->token_rows = s->d;
  layer->out = caml_shape_flat (s->d);
  layer->state = s;
  return TRUE;
}

/* Tokens of the vocabulary in sample i. */
static int
known_count (const Average *s, const float *ids, int len)
{
  int k = 0;
  for (int t = 0; t < len; t++)
    k += ids[t] >= 0 && ids[t] < s->v;
  return k;
}

static void
average_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  Average *s = layer->state;
  for (int i = 0; i < n; i++)
    {
      const float *ids = inp + (size_t) i * s->t;
      float *o = out + (size_t) i * s->d;
      int len = layer->lengths[i], known = known_count (s, ids, len);
      memset (o, 0, s->d * sizeof (float));
      for (int t = 0; t < len; t++)
        {
          int id = (int) ids[t];
          if (id < 0 || id >= s->v)
            continue;
          const float *e = s->E->w + (size_t) id * s->d;
          for (int j = 0; j < s->d; j++)
            o[j] += e[j];
        }
      float scale = known > 0 ? 1.0f / (float) known : 0.0f;
      for (int j = 0; j < s->d; j++)
        o[j] *= scale;
    }
}

static void
average_backward (CamlLayer *layer, float *dinp, const float *dout,
                  const float *inp, const float *out, int n)
{
  (void) dinp; (void) out;
  Average *s = layer->state;
  for (int i = 0; i < n; i++)
    {
      const float *ids = inp + (size_t) i * s->t;
      const float *g = dout + (size_t) i * s->d;
      int len = layer->lengths[i], known = known_count (s, ids, len);
      if (known == 0)
        continue;
      float scale = 1.0f / (float) known;
      for (int t = 0; t < len; t++)
        {
          int id = (int) ids[t];
          if (id < 0 || id >= s->v)
            continue;
          float *de = s->E->dw + (size_t) id * s->d;
          for (int j = 0; j < s->d; j++)
            de[j] += scale * g[j];
        }
    }
}

static void
average_free (CamlLayer *layer)
{
  g_free (layer->state);
}

const CamlLayerOps caml_average_ops = {
  .name = "average",
  .title = "Average",
  .description = "Bag of tokens to the mean of their trained vectors (CA-BSFE's baseline)",
  .options = average_options,
  .n_options = G_N_ELEMENTS (average_options),
  .accepts = CAML_ACCEPTS (CAML_SHAPE_TOKENS),
  .setup = average_setup,
  .forward = average_forward,
  .backward = average_backward,
  .free = average_free,
};
