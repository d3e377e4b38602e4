/* dense.c — a fully connected layer: out = act(x · Wᵀ + b).
 * The input is flattened: (N, D) whatever its per-sample shape. */
#include "layers.h"

enum { OPT_UNITS, OPT_ACTIVATION, OPT_BIAS };

static const CamlOptionSpec dense_options[] = {
  [OPT_UNITS]      = { "units", CAML_OPT_INT, "output width", 1, 65536, 8, NULL },
  [OPT_ACTIVATION] = { "activation", CAML_OPT_ENUM, "activation applied to the output",
                       0, 0, CAML_ACT_IDENTITY, caml_activation_names },
  [OPT_BIAS]       = { "bias", CAML_OPT_BOOL, "add a trained bias", 0, 1, 1, NULL },
};

typedef struct {
  int            d, u;
  CamlActivation act;
  CamlParam     *W;     /* (U, D) */
  CamlParam     *b;     /* (U) or NULL */
  float         *dpre;  /* (N, U) scratch for backward */
  size_t         dpre_cap;
} Dense;

static gboolean
dense_setup (CamlLayer *layer, GError **error)
{
  Dense *s = g_new0 (Dense, 1);
  s->d = (int) caml_shape_size (&layer->in);
  s->u = (int) layer->opt[OPT_UNITS];
  s->act = (CamlActivation) layer->opt[OPT_ACTIVATION];
  s->W = caml_layer_add_param (layer, "W", CAML_GROUP_ALWAYS,
                               s->act == CAML_ACT_RELU ? CAML_INIT_HE : CAML_INIT_GLOROT,
                               s->d, s->u, (size_t) s->u * s->d);
  if (layer->opt[OPT_BIAS] != 0.0)
    s->b = caml_layer_add_param (layer, "b", CAML_GROUP_ALWAYS, CAML_INIT_ZERO,
                                 s->d, s->u, s->u);
  layer->out = caml_shape_flat (s->u);
  layer->state = s;
  return TRUE;
}

static void
dense_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  Dense *s = layer->state;
  caml_linear_forward (out, inp, s->W->w, s->b ? s->b->w : NULL, n, s->d, s->u);
  caml_activation_forward (s->act, out, out, (size_t) n * s->u);
}

/* dpre (N, U) for batches of up to n samples. */
static gboolean
dense_reserve (CamlLayer *layer, int n, gboolean allocate, size_t *bytes)
{
  Dense *s = layer->state;
  CamlScratch sc = { .allocate = allocate, .bytes = *bytes };
  caml_scratch_floats (&sc, &s->dpre, &s->dpre_cap, n, s->u);
  *bytes = sc.bytes;
  return !sc.failed;
}

static void
dense_backward (CamlLayer *layer, float *dinp, const float *dout,
                const float *inp, const float *out, int n)
{
  Dense *s = layer->state;
  caml_scratch_require (layer, n);
  caml_activation_backward (s->act, s->dpre, dout, out, (size_t) n * s->u, FALSE);
  caml_linear_backward (dinp, s->W->dw, s->b ? s->b->dw : NULL, s->dpre, inp,
                        s->W->w, n, s->d, s->u, FALSE);
}

static void
dense_flops (CamlLayer *layer, int n, double *forward, double *backward)
{
  Dense *s = layer->state;
  double gemm = 2.0 * n * s->d * (double) s->u;
  *forward = gemm;
  *backward = layer->index > 0 ? 2 * gemm : gemm;   /* dW, and dinp unless first */
}

static void
dense_free (CamlLayer *layer)
{
  Dense *s = layer->state;
  g_free (s->dpre);
  g_free (s);
}

const CamlLayerOps caml_dense_ops = {
  .name = "dense",
  .title = "Dense",
  .description = "Fully connected layer: act(W·x + b)",
  .options = dense_options,
  .n_options = G_N_ELEMENTS (dense_options),
  .setup = dense_setup,
  .forward = dense_forward,
  .backward = dense_backward,
  .free = dense_free,
  .flops = dense_flops,
  .reserve = dense_reserve,
};
