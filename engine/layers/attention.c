/* attention.c — softmax attention over a sequence (Eq. 24, 43), the
 * baseline of CA-ATT, and the memory, query and score code both share.
 *
 * Memory s_1 … s_L (the sample's valid steps of a (T, D) input), query c:
 *
 *   α_i = exp f(s_i, c) / Σ_j exp f(s_j, c)      over the valid steps only
 *   out = Σ_i α_i s_i                             (D); zeros when L = 0
 *
 *   f(s_i, c) = vᵀ tanh(W1 c + W2 s_i)            score bahdanau
 *             = cᵀ W s_i                          score luong
 *
 * A sentence classifier has no decoder state to query with, so the query is
 * an option: `learned`, one trained vector c of width query_dim for every
 * sample (like the context vector of hierarchical attention networks), or
 * `mean`, the mean of the sample's valid steps (Q = D, no parameters; its
 * gradient flows back into the steps). Every parameter is in
 * CAML_GROUP_ALWAYS: this is a plain layer.
 *
 * The valid steps of a batch are packed into one (M, D) block so that the
 * score is one sgemm over real steps, never over padding. */
#include <math.h>

#include "layers.h"

const char *const caml_att_query_names[] = { "learned", "mean", NULL };

/* --------------------------------------------------------- shared memory */

void
caml_att_memory_setup (CamlAttMemory *mem, CamlLayer *layer, CamlAttScore score,
                       CamlAttQuery query, int query_dim, int att_dim,
                       CamlParamGroup group, gboolean bias)
{
  mem->t = layer->in.dims[0];
  mem->d = layer->in.dims[1];
  mem->score = score;
  mem->query = query;
  mem->q = query == CAML_ATT_QUERY_MEAN ? mem->d : query_dim;
  mem->a = att_dim;
  int d = mem->d, q = mem->q, a = mem->a;
  if (query == CAML_ATT_QUERY_LEARNED)
    mem->c = caml_layer_add_param (layer, "query", CAML_GROUP_ALWAYS, CAML_INIT_GLOROT,
                                   1, q, q);
  switch (score)
    {
    case CAML_ATT_SCORE_BAHDANAU:
      mem->W1 = caml_layer_add_param (layer, "W1", group, CAML_INIT_GLOROT, q, a,
                                      (size_t) a * q);
      mem->W2 = caml_layer_add_param (layer, "W2", group, CAML_INIT_GLOROT, d, a,
                                      (size_t) a * d);
      mem->v = caml_layer_add_param (layer, "v", group, CAML_INIT_GLOROT, a, 1, a);
      break;
    case CAML_ATT_SCORE_LUONG:
      mem->W = caml_layer_add_param (layer, "W", group, CAML_INIT_GLOROT, d, q,
                                     (size_t) q * d);
      break;
    case CAML_ATT_SCORE_LINEAR:
      mem->w_g = caml_layer_add_param (layer, "w_g", group, CAML_INIT_GLOROT, d, 1, d);
      mem->u_g = caml_layer_add_param (layer, "u_g", group, CAML_INIT_GLOROT, q, 1, q);
      break;
    }
  if (bias)
    mem->b = caml_layer_add_param (layer, "b_g", group, CAML_INIT_ZERO, d, 1, 1);
}

void
caml_att_memory_clear (CamlAttMemory *mem)
{
  g_clear_pointer (&mem->off, g_free);
  g_clear_pointer (&mem->S, g_free);
  g_clear_pointer (&mem->C, g_free);
  g_clear_pointer (&mem->z, g_free);
  g_clear_pointer (&mem->P, g_free);
  g_clear_pointer (&mem->H, g_free);
  g_clear_pointer (&mem->K, g_free);
  g_clear_pointer (&mem->dS, g_free);
  g_clear_pointer (&mem->dC, g_free);
  g_clear_pointer (&mem->dz, g_free);
  g_clear_pointer (&mem->dH, g_free);
  g_clear_pointer (&mem->dP, g_free);
  mem->off_cap = mem->S_cap = mem->C_cap = mem->z_cap = mem->P_cap = mem->H_cap = 0;
  mem->K_cap = mem->dS_cap = mem->dC_cap = mem->dz_cap = mem->dH_cap = mem->dP_cap = 0;
}

void
caml_att_memory_reserve (CamlAttMemory *mem, CamlScratch *sc, int n)
{
  /* M = Σ lengths: a batch of full-length samples fills N·T rows. */
  size_t rows = caml_scratch_rows (n, mem->t);
  caml_scratch_floats (sc, &mem->S, &mem->S_cap, rows, mem->d);
  caml_scratch_floats (sc, &mem->dS, &mem->dS_cap, rows, mem->d);
  if (mem->score == CAML_ATT_SCORE_BAHDANAU)
    {
      caml_scratch_floats (sc, &mem->H, &mem->H_cap, rows, mem->a);
      caml_scratch_floats (sc, &mem->dH, &mem->dH_cap, rows, mem->a);
      caml_scratch_floats (sc, &mem->P, &mem->P_cap, n, mem->a);
      caml_scratch_floats (sc, &mem->dP, &mem->dP_cap, n, mem->a);
    }
  if (mem->score == CAML_ATT_SCORE_LUONG)
    {
      caml_scratch_floats (sc, &mem->K, &mem->K_cap, n, mem->d);
      caml_scratch_floats (sc, &mem->dP, &mem->dP_cap, n, mem->d);
    }
  caml_scratch_floats (sc, &mem->z, &mem->z_cap, rows, 1);
  caml_scratch_floats (sc, &mem->dz, &mem->dz_cap, rows, 1);
  caml_scratch_floats (sc, &mem->C, &mem->C_cap, n, mem->q);
  caml_scratch_floats (sc, &mem->dC, &mem->dC_cap, n, mem->q);
  caml_scratch_ints (sc, &mem->off, &mem->off_cap, (size_t) n + 1, 1);
}

static void
query_forward (CamlAttMemory *mem)
{
  int q = mem->q;
  for (int i = 0; i < mem->n; i++)
    {
      float *c = mem->C + (size_t) i * q;   /* (Q) */
      if (mem->query == CAML_ATT_QUERY_LEARNED)
        {
          memcpy (c, mem->c->w, q * sizeof (float));
          continue;
        }
      int len = mem->off[i + 1] - mem->off[i];
      memset (c, 0, q * sizeof (float));
      for (int r = mem->off[i]; r < mem->off[i + 1]; r++)
        {
          const float *s = mem->S + (size_t) r * mem->d;
          for (int j = 0; j < q; j++)
            c[j] += s[j];
        }
      float scale = len > 0 ? 1.0f / (float) len : 0.0f;
      for (int j = 0; j < q; j++)
        c[j] *= scale;
    }
}

static void
query_backward (CamlAttMemory *mem)
{
  int q = mem->q;
  for (int i = 0; i < mem->n; i++)
    {
      const float *dc = mem->dC + (size_t) i * q;
      if (mem->query == CAML_ATT_QUERY_LEARNED)
        {
          for (int j = 0; j < q; j++)
            mem->c->dw[j] += dc[j];
          continue;
        }
      int len = mem->off[i + 1] - mem->off[i];
      float scale = len > 0 ? 1.0f / (float) len : 0.0f;
      for (int r = mem->off[i]; r < mem->off[i + 1]; r++)
        {
          float *ds = mem->dS + (size_t) r * mem->d;
          for (int j = 0; j < q; j++)
            ds[j] += scale * dc[j];
        }
    }
}

static void
score_forward (CamlAttMemory *mem)
{
  int n = mem->n, m = mem->m, d = mem->d, q = mem->q, a = mem->a;
  const int *off = mem->off;
  switch (mem->score)
    {
    case CAML_ATT_SCORE_BAHDANAU:
      /* H = tanh(S W2ᵀ + (C W1ᵀ)[sample]), z = H v */
      caml_linear_forward (mem->P, mem->C, mem->W1->w, NULL, n, q, a);
      if (m > 0)
        caml_linear_forward (mem->H, mem->S, mem->W2->w, NULL, m, d, a);
      for (int i = 0; i < n; i++)
        {
          const float *p = mem->P + (size_t) i * a;
          for (int r = off[i]; r < off[i + 1]; r++)
            {
              float *h = mem->H + (size_t) r * a;
              for (int k = 0; k < a; k++)
                h[k] += p[k];
            }
        }
      caml_activation_forward (CAML_ACT_TANH, mem->H, mem->H, (size_t) m * a);
      if (m > 0)
        cblas_sgemv (CblasRowMajor, CblasNoTrans, m, a, 1.0f, mem->H, a, mem->v->w, 1,
                     0.0f, mem->z, 1);
      break;
    case CAML_ATT_SCORE_LUONG:
      /* K = C W (the query carried into memory space), z_i = K · s_i */
      caml_sgemm (CblasNoTrans, CblasNoTrans, n, d, q, 1.0f, mem->C, q, mem->W->w, d,
                  0.0f, mem->K, d);
      for (int i = 0; i < n; i++)
        if (off[i + 1] > off[i])
          cblas_sgemv (CblasRowMajor, CblasNoTrans, off[i + 1] - off[i], d, 1.0f,
                       mem->S + (size_t) off[i] * d, d, mem->K + (size_t) i * d, 1,
                       0.0f, mem->z + off[i], 1);
      break;
    case CAML_ATT_SCORE_LINEAR:
      /* z_i = w_g · s_i + u_g · c */
      if (m > 0)
        cblas_sgemv (CblasRowMajor, CblasNoTrans, m, d, 1.0f, mem->S, d, mem->w_g->w, 1,
                     0.0f, mem->z, 1);
      for (int i = 0; i < n; i++)
        {
          float uc = cblas_sdot (q, mem->u_g->w, 1, mem->C + (size_t) i * q, 1);
          for (int r = off[i]; r < off[i + 1]; r++)
            mem->z[r] += uc;
        }
      break;
    }
  if (mem->b != NULL)
    for (int r = 0; r < m; r++)
      mem->z[r] += mem->b->w[0];
}

static void
score_backward (CamlAttMemory *mem)
{
  int n = mem->n, m = mem->m, d = mem->d, q = mem->q, a = mem->a;
  const int *off = mem->off;
  const float *dz = mem->dz;
  switch (mem->score)
    {
    case CAML_ATT_SCORE_BAHDANAU:
      if (m == 0)
        break;
      /* dv += Hᵀ dz; dH = dz v ⊙ (1 − H²); dP[sample] = Σ dH */
      cblas_sgemv (CblasRowMajor, CblasTrans, m, a, 1.0f, mem->H, a, dz, 1, 1.0f,
                   mem->v->dw, 1);
      for (int r = 0; r < m; r++)
        {
          const float *h = mem->H + (size_t) r * a;
          float *dh = mem->dH + (size_t) r * a;
          for (int k = 0; k < a; k++)
            dh[k] = dz[r] * mem->v->w[k] * (1.0f - h[k] * h[k]);
        }
      for (int i = 0; i < n; i++)
        {
          float *dp = mem->dP + (size_t) i * a;
          memset (dp, 0, a * sizeof (float));
          for (int r = off[i]; r < off[i + 1]; r++)
            {
              const float *dh = mem->dH + (size_t) r * a;
              for (int k = 0; k < a; k++)
                dp[k] += dh[k];
            }
        }
      caml_linear_backward (mem->dS, mem->W2->dw, NULL, mem->dH, mem->S, mem->W2->w,
                            m, d, a, TRUE);
      caml_linear_backward (mem->dC, mem->W1->dw, NULL, mem->dP, mem->C, mem->W1->w,
                            n, q, a, TRUE);
      break;
    case CAML_ATT_SCORE_LUONG:
      {
        float *dK = mem->dP;   /* (N, D) */
        for (int i = 0; i < n; i++)
          {
            int len = off[i + 1] - off[i];
            float *dk = dK + (size_t) i * d;
            if (len == 0)
              {
                memset (dk, 0, d * sizeof (float));
                continue;
              }
            const float *s = mem->S + (size_t) off[i] * d;
            /* dK = Sᵀ dz; dS += dz Kᵀ */
            cblas_sgemv (CblasRowMajor, CblasTrans, len, d, 1.0f, s, d, dz + off[i], 1,
                         0.0f, dk, 1);
            cblas_sger (CblasRowMajor, len, d, 1.0f, dz + off[i], 1,
                        mem->K + (size_t) i * d, 1, mem->dS + (size_t) off[i] * d, d);
          }
        /* K = C W: dW += Cᵀ dK, dC += dK Wᵀ */
        caml_sgemm (CblasTrans, CblasNoTrans, q, d, n, 1.0f, mem->C, q, dK, d, 1.0f,
                    mem->W->dw, d);
        caml_sgemm (CblasNoTrans, CblasTrans, n, q, d, 1.0f, dK, d, mem->W->w, d, 1.0f,
                    mem->dC, q);
        break;
      }
    case CAML_ATT_SCORE_LINEAR:
      if (m > 0)
        {
          cblas_sgemv (CblasRowMajor, CblasTrans, m, d, 1.0f, mem->S, d, dz, 1, 1.0f,
                       mem->w_g->dw, 1);
          cblas_sger (CblasRowMajor, m, d, 1.0f, dz, 1, mem->w_g->w, 1, mem->dS, d);
        }
      for (int i = 0; i < n; i++)
        {
          float g = 0.0f;
          for (int r = off[i]; r < off[i + 1]; r++)
            g += dz[r];
          const float *c = mem->C + (size_t) i * q;
          float *dc = mem->dC + (size_t) i * q;
          for (int j = 0; j < q; j++)
            {
              mem->u_g->dw[j] += g * c[j];
              dc[j] += g * mem->u_g->w[j];
            }
        }
      break;
    }
  if (mem->b != NULL)
    for (int r = 0; r < m; r++)
      mem->b->dw[0] += dz[r];
}

void
caml_att_memory_forward (CamlAttMemory *mem, const float *inp, const int *lengths, int n)
{
  mem->n = n;
  mem->off[0] = 0;
  for (int i = 0; i < n; i++)
    {
      int len = lengths ? CLAMP (lengths[i], 0, mem->t) : mem->t;
      mem->off[i + 1] = mem->off[i] + len;
      memcpy (mem->S + (size_t) mem->off[i] * mem->d, inp + (size_t) i * mem->t * mem->d,
              (size_t) len * mem->d * sizeof (float));
    }
  mem->m = mem->off[n];
  query_forward (mem);
  score_forward (mem);
}

void
caml_att_memory_backward (CamlAttMemory *mem, float *dinp)
{
  score_backward (mem);
  query_backward (mem);
  if (dinp == NULL)
    return;
  size_t row = (size_t) mem->t * mem->d;
  for (int i = 0; i < mem->n; i++)
    {
      size_t valid = (size_t) (mem->off[i + 1] - mem->off[i]) * mem->d;
      float *dx = dinp + (size_t) i * row;   /* (T, D) */
      memcpy (dx, mem->dS + (size_t) mem->off[i] * mem->d, valid * sizeof (float));
      memset (dx + valid, 0, (row - valid) * sizeof (float));
    }
}

/* ------------------------------------------------------- softmax attention */

enum { OPT_SCORE, OPT_QUERY, OPT_QUERY_DIM, OPT_ATT_DIM };

static const char *const attention_score_names[] = { "bahdanau", "luong", NULL };

static const CamlOptionSpec attention_options[] = {
  [OPT_SCORE]     = { "score", CAML_OPT_ENUM,
                      "f(s_i, c): bahdanau vᵀ tanh(W1 c + W2 s_i), luong cᵀ W s_i",
                      0, 0, CAML_ATT_SCORE_BAHDANAU, attention_score_names },
  [OPT_QUERY]     = { "query", CAML_OPT_ENUM,
                      "the query c: a learned vector, or the mean of the valid steps",
                      0, 0, CAML_ATT_QUERY_LEARNED, caml_att_query_names },
  [OPT_QUERY_DIM] = { "query_dim", CAML_OPT_INT, "width of the learned query (mean: D)",
                      1, 4096, 50, NULL },
  [OPT_ATT_DIM]   = { "att_dim", CAML_OPT_INT, "hidden width A of the bahdanau score",
                      1, 4096, 50, NULL },
};

typedef struct {
  CamlAttMemory mem;
  float        *alpha;   /* (M) weights of the last forward */
  size_t        alpha_cap;
  float        *dalpha;  /* (M) scratch */
  size_t        dalpha_cap;
} Attention;

static void
attention_release (Attention *s)
{
  caml_att_memory_clear (&s->mem);
  g_clear_pointer (&s->alpha, g_free);
  g_clear_pointer (&s->dalpha, g_free);
  s->alpha_cap = s->dalpha_cap = 0;
}

/* The memory's buffers, α and dα (M) for batches of up to n samples (at
 * least one: an empty batch still writes off[0]). */
static gboolean
attention_reserve (CamlLayer *layer, int n, gboolean allocate, size_t *bytes)
{
  Attention *s = layer->state;
  n = MAX (n, 1);
  CamlScratch sc = { .allocate = allocate, .bytes = *bytes };
  caml_att_memory_reserve (&s->mem, &sc, n);
  caml_scratch_floats (&sc, &s->alpha, &s->alpha_cap, n, s->mem.t);
  caml_scratch_floats (&sc, &s->dalpha, &s->dalpha_cap, n, s->mem.t);
  *bytes = sc.bytes;
  if (sc.failed)
    {
      attention_release (s);
      return FALSE;
    }
  return TRUE;
}

static gboolean
attention_setup (CamlLayer *layer, GError **error)
{
  (void) error;
  Attention *s = g_new0 (Attention, 1);
  caml_att_memory_setup (&s->mem, layer, (CamlAttScore) layer->opt[OPT_SCORE],
                         (CamlAttQuery) layer->opt[OPT_QUERY], (int) layer->opt[OPT_QUERY_DIM],
                         (int) layer->opt[OPT_ATT_DIM], CAML_GROUP_ALWAYS, FALSE);
  layer->out = caml_shape_flat (s->mem.d);
  layer->state = s;
  return TRUE;
}

static void
attention_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  Attention *s = layer->state;
  CamlAttMemory *mem = &s->mem;
  caml_scratch_require (layer, n);
  caml_att_memory_forward (mem, inp, layer->lengths, n);
  int d = mem->d;
  for (int i = 0; i < n; i++)
    {
      int r0 = mem->off[i], len = mem->off[i + 1] - r0;
      float *o = out + (size_t) i * d;   /* (D) */
      if (len == 0)
        {
          memset (o, 0, d * sizeof (float));
          continue;
        }
      const float *z = mem->z + r0;
      float *alpha = s->alpha + r0;
      float zmax = z[0], sum = 0.0f;
      for (int r = 1; r < len; r++)
        zmax = fmaxf (zmax, z[r]);
      for (int r = 0; r < len; r++)
        {
          alpha[r] = expf (z[r] - zmax);
          sum += alpha[r];
        }
      for (int r = 0; r < len; r++)
        alpha[r] /= sum;
      /* out = Sᵀ α */
      cblas_sgemv (CblasRowMajor, CblasTrans, len, d, 1.0f, mem->S + (size_t) r0 * d, d,
                   alpha, 1, 0.0f, o, 1);
    }
}

static void
attention_backward (CamlLayer *layer, float *dinp, const float *dout,
                    const float *inp, const float *out, int n)
{
  (void) inp; (void) out;
  Attention *s = layer->state;
  CamlAttMemory *mem = &s->mem;
  int d = mem->d;
  memset (mem->dC, 0, (size_t) n * mem->q * sizeof (float));
  for (int i = 0; i < n; i++)
    {
      int r0 = mem->off[i], len = mem->off[i + 1] - r0;
      if (len == 0)
        continue;
      const float *g = dout + (size_t) i * d;       /* (D) */
      const float *S = mem->S + (size_t) r0 * d;    /* (L, D) */
      const float *alpha = s->alpha + r0;
      float *dalpha = s->dalpha + r0;
      float *dS = mem->dS + (size_t) r0 * d;
      /* dS_r = α_r g; dα = S g; dz = α ⊙ (dα − αᵀ dα) */
      for (int r = 0; r < len; r++)
        for (int j = 0; j < d; j++)
          dS[(size_t) r * d + j] = alpha[r] * g[j];
      cblas_sgemv (CblasRowMajor, CblasNoTrans, len, d, 1.0f, S, d, g, 1, 0.0f, dalpha, 1);
      float mean = 0.0f;
      for (int r = 0; r < len; r++)
        mean += alpha[r] * dalpha[r];
      for (int r = 0; r < len; r++)
        mem->dz[r0 + r] = alpha[r] * (dalpha[r] - mean);
    }
  caml_att_memory_backward (mem, dinp);
}

static void
attention_free (CamlLayer *layer)
{
  Attention *s = layer->state;
  attention_release (s);
  g_free (s);
}

const CamlLayerOps caml_attention_ops = {
  .name = "attention",
  .title = "Attention",
  .description = "Softmax attention over a sequence: Σ α_i s_i, α = softmax of a "
                 "Bahdanau or Luong score (CA-ATT's baseline)",
  .options = attention_options,
  .n_options = G_N_ELEMENTS (attention_options),
  .accepts = CAML_ACCEPTS (CAML_SHAPE_SEQUENCE),
  .reads_order = TRUE,
  .setup = attention_setup,
  .forward = attention_forward,
  .backward = attention_backward,
  .free = attention_free,
  .reserve = attention_reserve,
};
