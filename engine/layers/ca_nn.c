/* ca_nn.c — the generic context-aware layer, CA-NN (Eq. 38–39):
 *
 *   χ(c) = sigmoid(u·c + b_χ)          one scalar per sample
 *   v(c) = act(W c + b)
 *   out  = χ(c) v(c) + (1 − χ(c)) w0   w0 a trained default value
 *
 * Gate parameters: u, b_χ. Value parameters: W, b, w0. */
#include "layers.h"

enum { OPT_UNITS, OPT_ACTIVATION };

static const CamlOptionSpec ca_nn_options[] = {
  [OPT_UNITS]      = { "units", CAML_OPT_INT, "output width, dim(w0)", 1, 65536, 5, NULL },
  [OPT_ACTIVATION] = { "activation", CAML_OPT_ENUM, "activation of the value v(c)",
                       0, 0, CAML_ACT_TANH, caml_activation_names },
};

typedef struct {
  int            d, u;
  CamlActivation act;
  CamlParam     *W, *b;       /* (U, D), (U) */
  CamlParam     *u_chi, *b_chi; /* (1, D), (1) */
  CamlParam     *w0;          /* (U) */
  size_t         cap;         /* samples the buffers hold */
  float         *v;           /* (N, U) */
  float         *chi;         /* (N) */
  float         *dv;          /* (N, U) scratch */
  float         *dz;          /* (N) scratch */
  float          forced_chi;  /* probes: χ held at this value when ≥ 0 */
} CaNn;

static gboolean
ca_nn_setup (CamlLayer *layer, GError **error)
{
  CaNn *s = g_new0 (CaNn, 1);
  s->d = (int) caml_shape_size (&layer->in);
  s->u = (int) layer->opt[OPT_UNITS];
  s->act = (CamlActivation) layer->opt[OPT_ACTIVATION];
  s->forced_chi = -1.0f;
  s->W = caml_layer_add_param (layer, "W", CAML_GROUP_VALUE,
                               s->act == CAML_ACT_RELU ? CAML_INIT_HE : CAML_INIT_GLOROT,
                               s->d, s->u, (size_t) s->u * s->d);
  s->b = caml_layer_add_param (layer, "b", CAML_GROUP_VALUE, CAML_INIT_ZERO,
                               s->d, s->u, s->u);
  s->u_chi = caml_layer_add_param (layer, "u", CAML_GROUP_GATE, CAML_INIT_GLOROT,
                                   s->d, 1, s->d);
  s->b_chi = caml_layer_add_param (layer, "b_chi", CAML_GROUP_GATE, CAML_INIT_ZERO,
                                   s->d, 1, 1);
  s->w0 = caml_layer_add_param (layer, "w0", CAML_GROUP_VALUE, CAML_INIT_SMALL,
                                s->d, s->u, s->u);
  layer->out = caml_shape_flat (s->u);
  layer->state = s;
  return TRUE;
}

/* v, dv (N, U), chi, dz (N) for batches of up to n samples. */
static gboolean
ca_nn_reserve (CamlLayer *layer, int n, gboolean allocate, size_t *bytes)
{
  CaNn *s = layer->state;
  CamlScratch sc = { .allocate = allocate && (size_t) n > s->cap, .bytes = *bytes };
  caml_scratch_floats (&sc, &s->v, NULL, n, s->u);
  caml_scratch_floats (&sc, &s->dv, NULL, n, s->u);
  caml_scratch_floats (&sc, &s->chi, NULL, n, 1);
  caml_scratch_floats (&sc, &s->dz, NULL, n, 1);
  *bytes = sc.bytes;
  if (sc.failed)
    {
      g_clear_pointer (&s->v, g_free);
      g_clear_pointer (&s->dv, g_free);
      g_clear_pointer (&s->chi, g_free);
      g_clear_pointer (&s->dz, g_free);
      s->cap = 0;
      return FALSE;
    }
  if (sc.allocate)
    s->cap = n;
  return TRUE;
}

static void
ca_nn_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  CaNn *s = layer->state;
  caml_scratch_require (layer, n);
  caml_linear_forward (s->v, inp, s->W->w, s->b->w, n, s->d, s->u);
  caml_activation_forward (s->act, s->v, s->v, (size_t) n * s->u);
  if (s->forced_chi >= 0.0f)
    for (int i = 0; i < n; i++)
      s->chi[i] = s->forced_chi;
  else
    {
      caml_linear_forward (s->chi, inp, s->u_chi->w, s->b_chi->w, n, s->d, 1);
      caml_activation_forward (CAML_ACT_SIGMOID, s->chi, s->chi, n);
    }
  caml_gate_mix_forward (out, s->chi, s->v, s->w0->w, n, s->u);
}

static void
ca_nn_backward (CamlLayer *layer, float *dinp, const float *dout,
                const float *inp, const float *out, int n)
{
  CaNn *s = layer->state;
  /* dv = χ dout, dz = Σ dout (v − w0), dw0 += Σ (1 − χ) dout */
  caml_gate_mix_backward (s->dv, s->dz, s->w0->dw, dout, s->chi, s->v, s->w0->w,
                          n, s->u);
  caml_activation_backward (s->act, s->dv, s->dv, s->v, (size_t) n * s->u, FALSE);
  caml_activation_backward (CAML_ACT_SIGMOID, s->dz, s->dz, s->chi, n, FALSE);
  caml_linear_backward (dinp, s->W->dw, s->b->dw, s->dv, inp, s->W->w,
                        n, s->d, s->u, FALSE);
  caml_linear_backward (dinp, s->u_chi->dw, s->b_chi->dw, s->dz, inp, s->u_chi->w,
                        n, s->d, 1, TRUE);
}

static const float *
ca_nn_chi (CamlLayer *layer, int *chi_per_sample)
{
  CaNn *s = layer->state;
  *chi_per_sample = 1;
  return s->chi;
}

static void
ca_nn_force_chi (CamlLayer *layer, float value)
{
  CaNn *s = layer->state;
  s->forced_chi = value >= 0.0f ? MIN (value, 1.0f) : -1.0f;
}

static void
ca_nn_flops (CamlLayer *layer, int n, double *forward, double *backward)
{
  CaNn *s = layer->state;
  double gemm = 2.0 * n * s->d * (double) (s->u + 1);   /* W and u */
  *forward = gemm;
  *backward = layer->index > 0 ? 2 * gemm : gemm;   /* [dW; du], and dinp unless first */
}

static void
ca_nn_free (CamlLayer *layer)
{
  CaNn *s = layer->state;
  g_free (s->v); g_free (s->chi); g_free (s->dv); g_free (s->dz);
  g_free (s);
}

const CamlLayerOps caml_ca_nn_ops = {
  .name = "ca_nn",
  .title = "CA-NN",
  .description = "Context-aware layer: χ(c)·act(W·c + b) + (1 − χ(c))·w0",
  .context_aware = TRUE,
  .baseline = "dense",
  .options = ca_nn_options,
  .n_options = G_N_ELEMENTS (ca_nn_options),
  .setup = ca_nn_setup,
  .forward = ca_nn_forward,
  .backward = ca_nn_backward,
  .chi = ca_nn_chi,
  .free = ca_nn_free,
  .flops = ca_nn_flops,
  .force_chi = ca_nn_force_chi,
  .reserve = ca_nn_reserve,
};
