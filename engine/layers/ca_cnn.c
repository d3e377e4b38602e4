/* ca_cnn.c — the convolutional context-aware layer, CA-CNN (Eq. 40): CA-NN
 * applied to every k×k patch c_p, like a convolution. Per output position p:
 *
 *   v_p   = act(W c_p + b) ∈ R^depth
 *   χ_p   = sigmoid(u · c_p + b_χ)          one gate per position: the σ-map
 *   out_p = χ_p v_p + (1 − χ_p) w0          w0 ∈ R^depth trained
 *
 * u is declared right after W, so [W; u] is one (depth + 1, K) matrix in the
 * parameter block and a single sgemm over the im2col patches gives both the
 * values and the gate logits; the epilogue applies bias, activation, sigmoid
 * and the mix in one pass. Gate parameters: u, b_χ. Value parameters: W, b, w0. */
#include "layers.h"
#include "vectorize.h"

enum { OPT_KERNEL, OPT_STRIDE, OPT_PADDING, OPT_DEPTH, OPT_ACTIVATION };

/* The keys are conv2d's (minus bias: b is always there), so swapping in the
 * baseline maps options by key. */
static const CamlOptionSpec ca_cnn_options[] = {
  [OPT_KERNEL]     = { "kernel", CAML_OPT_INT, "k: the patch is k×k", 1, 32, 5, NULL },
  [OPT_STRIDE]     = { "stride", CAML_OPT_INT, "step between patches", 1, 8, 1, NULL },
  [OPT_PADDING]    = { "padding", CAML_OPT_ENUM,
                       "same: zero border, ceil(H / stride) outputs; valid: no border",
                       0, 0, CAML_PADDING_SAME, caml_padding_names },
  [OPT_DEPTH]      = { "depth", CAML_OPT_INT, "output channels, dim(w0)", 1, 1024, 8, NULL },
  [OPT_ACTIVATION] = { "activation", CAML_OPT_ENUM, "activation of the value v",
                       0, 0, CAML_ACT_RELU, caml_activation_names },
};

typedef struct {
  CamlConvGeom    g;
  int             depth;
  CamlActivation  act;
  CamlParam      *W, *u;        /* (depth, C, k, k), (C, k, k): adjacent, [W; u] */
  CamlParam      *b, *b_chi;    /* (depth), (1) */
  CamlParam      *w0;           /* (depth) */
  size_t          cap;          /* samples the caches hold */
  float          *v;            /* (N, depth, OH, OW) values after act */
  float          *chi;          /* (N, 1, OH, OW) the σ-map */
  CamlConvScratch scratch;
  float          *sums;         /* (2·depth + 1): db, dw0, db_χ of a backward pass */
  /* per call */
  const float    *dout;
} CaCnn;

static gboolean
ca_cnn_setup (CamlLayer *layer, GError **error)
{
  CamlConvGeom g;
  if (!caml_conv_geom_init (&g, &layer->in, (int) layer->opt[OPT_KERNEL],
                            (int) layer->opt[OPT_STRIDE],
                            (CamlPadding) layer->opt[OPT_PADDING], "ca_cnn", error))
    return FALSE;
  CaCnn *s = g_new0 (CaCnn, 1);
  s->g = g;
  s->depth = (int) layer->opt[OPT_DEPTH];
  s->act = (CamlActivation) layer->opt[OPT_ACTIVATION];
  int fan_out = s->depth * g.k * g.k;
  s->W = caml_layer_add_param (layer, "W", CAML_GROUP_VALUE,
                               s->act == CAML_ACT_RELU ? CAML_INIT_HE : CAML_INIT_GLOROT,
                               g.kk, fan_out, (size_t) s->depth * g.kk);
  /* The gate starts near χ = 0.5 everywhere (u small, not Glorot): with a
   * k·k·C-wide patch a Glorot u gives sharp random gates early that the
   * σ-maps keep (MNIST k5 d16 + pool, Adagrad: σ-AUC 0.967 vs 0.991). */
  s->u = caml_layer_add_param (layer, "u", CAML_GROUP_GATE, CAML_INIT_SMALL,
                               g.kk, 1, g.kk);
  s->b = caml_layer_add_param (layer, "b", CAML_GROUP_VALUE, CAML_INIT_ZERO,
                               g.kk, fan_out, s->depth);
  s->b_chi = caml_layer_add_param (layer, "b_chi", CAML_GROUP_GATE, CAML_INIT_ZERO,
                                   g.kk, 1, 1);
  s->w0 = caml_layer_add_param (layer, "w0", CAML_GROUP_VALUE, CAML_INIT_SMALL,
                                g.kk, s->depth, s->depth);
  s->sums = g_new0 (float, 2 * s->depth + 1);
  layer->out = caml_shape_image (s->depth, g.oh, g.ow);
  layer->state = s;
  return TRUE;
}

/* v (N, depth, OH, OW) and chi (N, 1, OH, OW) for batches of up to n
 * samples. */
static gboolean
ca_cnn_reserve (CamlLayer *layer, int n, gboolean allocate, size_t *bytes)
{
  CaCnn *s = layer->state;
  CamlScratch sc = { .allocate = allocate && (size_t) n > s->cap, .bytes = *bytes };
  caml_scratch_floats (&sc, &s->v, NULL, n, (size_t) s->depth * s->g.p);
  caml_scratch_floats (&sc, &s->chi, NULL, n, s->g.p);
  *bytes = sc.bytes;
  if (sc.failed)
    {
      g_clear_pointer (&s->v, g_free);
      g_clear_pointer (&s->chi, g_free);
      s->cap = 0;
      return FALSE;
    }
  if (sc.allocate)
    s->cap = n;
  return TRUE;
}

static void
ca_cnn_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  CaCnn *s = layer->state;
  caml_scratch_require (layer, n);
  g_assert (s->u->w == s->W->w + (size_t) s->depth * s->g.kk);
  CamlConvOutput o = { .m = s->depth + 1, .gated = TRUE, .act = s->act, .b = s->b->w,
                       .b_chi = s->b_chi->w[0], .w0 = s->w0->w, .out = out, .v = s->v,
                       .chi = s->chi };
  caml_conv_forward (&s->g, s->W->w, inp, n, &s->scratch, &o);
}

/* dy (layers.h, CamlConvPrologue) from dout: channels 0…depth−1
 * dL/d(W c + b), channel depth dL/d(u c + b_χ). */
static CAML_VECTOR_LOOP void
ca_cnn_prologue (gpointer data, float *dy, size_t ld, size_t ps, int n0, int nb, float *sums)
{
  CaCnn *s = data;
  const int P = s->g.p, D = s->depth;
  const float *w0 = s->w0->w;
  const gboolean relu = s->act == CAML_ACT_RELU;
  float *db = sums, *dw0 = sums + D, *db_chi = sums + 2 * D;
  for (int i = 0; i < nb; i++)
    {
      const float *restrict chi = s->chi + (size_t) (n0 + i) * P;
      float *restrict dz = dy + D * ld + i * ps;
      memset (dz, 0, P * sizeof (float));
      for (int j = 0; j < D; j++)
        {
          size_t at = ((size_t) (n0 + i) * D + j) * P;
          const float *restrict g = s->dout + at, *restrict v = s->v + at;
          float *restrict dv = dy + j * ld + i * ps;
          const float wj = w0[j];
          /* Sums over positions: vectorised reductions (-fopenmp-simd),
           * which reorder the additions. */
          float sw = 0.0f, sb = 0.0f;
          if (relu)
#pragma omp simd reduction(+:sw, sb)
            for (int p = 0; p < P; p++)
              {
                float gp = g[p], vp = v[p], c = chi[p];
                dz[p] += gp * (vp - wj);
                sw += gp - c * gp;
                float d = c * gp;
                d = vp > 0.0f ? d : 0.0f;
                dv[p] = d;
                sb += d;
              }
          else
            {
#pragma omp simd reduction(+:sw)
              for (int p = 0; p < P; p++)
                {
                  dz[p] += g[p] * (v[p] - wj);
                  sw += g[p] - chi[p] * g[p];
                  dv[p] = chi[p] * g[p];
                }
              caml_activation_backward (s->act, dv, dv, v, P, FALSE);
#pragma omp simd reduction(+:sb)
              for (int p = 0; p < P; p++)
                sb += dv[p];
            }
          dw0[j] += sw;
          db[j] += sb;
        }
      float sz = 0.0f;
#pragma omp simd reduction(+:sz)
      for (int p = 0; p < P; p++)
        {
          dz[p] *= chi[p] * (1.0f - chi[p]);
          sz += dz[p];
        }
      db_chi[0] += sz;
    }
}

static void
ca_cnn_backward (CamlLayer *layer, float *dinp, const float *dout,
                 const float *inp, const float *out, int n)
{
  CaCnn *s = layer->state;
  const int D = s->depth, width = 2 * D + 1;
  s->dout = dout;
  memset (s->sums, 0, width * sizeof (float));
  /* [dW; du] accumulate together: they are adjacent like [W; u]. */
  caml_conv_backward (&s->g, s->W->dw, dinp, s->W->w, D + 1, inp, n,
                      &s->scratch, ca_cnn_prologue, s, s->sums, width);
  for (int j = 0; j < D; j++)
    {
      s->b->dw[j] += s->sums[j];
      s->w0->dw[j] += s->sums[D + j];
    }
  s->b_chi->dw[0] += s->sums[2 * D];
}

static const float *
ca_cnn_chi (CamlLayer *layer, int *chi_per_sample)
{
  CaCnn *s = layer->state;
  *chi_per_sample = s->g.p;
  return s->chi;
}

static void
ca_cnn_flops (CamlLayer *layer, int n, double *forward, double *backward)
{
  CaCnn *s = layer->state;
  double gemm = 2.0 * (s->depth + 1) * s->g.kk * (double) s->g.p * n;
  *forward = gemm;
  /* [dW; du], and dinp unless the layer is the model's first */
  *backward = layer->index > 0 ? 2 * gemm : gemm;
}

static void
ca_cnn_free (CamlLayer *layer)
{
  CaCnn *s = layer->state;
  caml_conv_scratch_free (&s->scratch);
  g_free (s->sums);
  g_free (s->v);
  g_free (s->chi);
  g_free (s);
}

const CamlLayerOps caml_ca_cnn_ops = {
  .name = "ca_cnn",
  .title = "CA-CNN",
  .description = "Context-aware convolution: per patch χ_p·act(W·c_p + b) + (1 − χ_p)·w0",
  .context_aware = TRUE,
  .baseline = "conv2d",
  .options = ca_cnn_options,
  .n_options = G_N_ELEMENTS (ca_cnn_options),
  .setup = ca_cnn_setup,
  .forward = ca_cnn_forward,
  .backward = ca_cnn_backward,
  .chi = ca_cnn_chi,
  .free = ca_cnn_free,
  .flops = ca_cnn_flops,
  .reserve = ca_cnn_reserve,
};
