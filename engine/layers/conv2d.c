/* conv2d.c — a 2-D convolution: out (N, depth, OH, OW) = act(W ⊛ inp + b),
 * W (depth, C, k, k), as im2col + cblas_sgemm (im2col.c). */
#include "layers.h"

enum { OPT_KERNEL, OPT_STRIDE, OPT_PADDING, OPT_DEPTH, OPT_ACTIVATION, OPT_BIAS };

static const CamlOptionSpec conv2d_options[] = {
  [OPT_KERNEL]     = { "kernel", CAML_OPT_INT, "k: the window is k×k", 1, 32, 5, NULL },
  [OPT_STRIDE]     = { "stride", CAML_OPT_INT, "step between windows", 1, 8, 1, NULL },
  [OPT_PADDING]    = { "padding", CAML_OPT_ENUM,
                       "same: zero border, ceil(H / stride) outputs; valid: no border",
                       0, 0, CAML_PADDING_SAME, caml_padding_names },
  [OPT_DEPTH]      = { "depth", CAML_OPT_INT, "output channels", 1, 1024, 8, NULL },
  [OPT_ACTIVATION] = { "activation", CAML_OPT_ENUM, "activation applied to the output",
                       0, 0, CAML_ACT_RELU, caml_activation_names },
  [OPT_BIAS]       = { "bias", CAML_OPT_BOOL, "add a trained bias per channel", 0, 1, 1, NULL },
};

typedef struct {
  CamlConvGeom    g;
  int             depth;
  CamlActivation  act;
  CamlParam      *W;     /* (depth, C, k, k) */
  CamlParam      *b;     /* (depth) or NULL */
  CamlConvScratch scratch;
} Conv2d;

static gboolean
conv2d_setup (CamlLayer *layer, GError **error)
{
  CamlConvGeom g;
  if (!caml_conv_geom_init (&g, &layer->in, (int) layer->opt[OPT_KERNEL],
                            (int) layer->opt[OPT_STRIDE],
                            (CamlPadding) layer->opt[OPT_PADDING], "conv2d", error))
    return FALSE;
  Conv2d *s = g_new0 (Conv2d, 1);
  s->g = g;
  s->depth = (int) layer->opt[OPT_DEPTH];
  s->act = (CamlActivation) layer->opt[OPT_ACTIVATION];
  int fan_out = s->depth * g.k * g.k;
  s->W = caml_layer_add_param (layer, "W", CAML_GROUP_ALWAYS,
                               s->act == CAML_ACT_RELU ? CAML_INIT_HE : CAML_INIT_GLOROT,
                               g.kk, fan_out, (size_t) s->depth * g.kk);
  if (layer->opt[OPT_BIAS] != 0.0)
    s->b = caml_layer_add_param (layer, "b", CAML_GROUP_ALWAYS, CAML_INIT_ZERO,
                                 g.kk, fan_out, s->depth);
  layer->out = caml_shape_image (s->depth, g.oh, g.ow);
  layer->state = s;
  return TRUE;
}

static void
conv2d_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  Conv2d *s = layer->state;
  caml_conv_plain_forward (&s->g, out, inp, s->W->w, s->b ? s->b->w : NULL, s->depth,
                           s->act, n, &s->scratch);
}

static void
conv2d_backward (CamlLayer *layer, float *dinp, const float *dout,
                 const float *inp, const float *out, int n)
{
  Conv2d *s = layer->state;
  caml_conv_plain_backward (&s->g, dinp, s->W->dw, s->b ? s->b->dw : NULL, dout, inp,
                            out, s->W->w, s->depth, s->act, n, &s->scratch);
}

static void
conv2d_flops (CamlLayer *layer, int n, double *forward, double *backward)
{
  Conv2d *s = layer->state;
  double gemm = 2.0 * s->depth * s->g.kk * (double) s->g.p * n;
  *forward = gemm;
  *backward = layer->index > 0 ? 2 * gemm : gemm;   /* dW, and dinp unless first */
}

static void
conv2d_free (CamlLayer *layer)
{
  Conv2d *s = layer->state;
  caml_conv_scratch_free (&s->scratch);
  g_free (s);
}

const CamlLayerOps caml_conv2d_ops = {
  .name = "conv2d",
  .title = "Conv2D",
  .description = "2-D convolution over (C, H, W): act(W ⊛ x + b), k×k windows",
  .options = conv2d_options,
  .n_options = G_N_ELEMENTS (conv2d_options),
  .setup = conv2d_setup,
  .forward = conv2d_forward,
  .backward = conv2d_backward,
  .free = conv2d_free,
  .flops = conv2d_flops,
};
