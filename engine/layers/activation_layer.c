/* activation_layer.c — an element-wise activation as a layer of its own. */
#include "layers.h"

enum { OPT_FUNCTION };

static const CamlOptionSpec activation_options[] = {
  [OPT_FUNCTION] = { "function", CAML_OPT_ENUM, "the element-wise function",
                     0, 0, CAML_ACT_TANH, caml_activation_names },
};

static gboolean
activation_setup (CamlLayer *layer, GError **error)
{
  layer->out = layer->in;
  return TRUE;
}

static void
activation_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  caml_activation_forward ((CamlActivation) layer->opt[OPT_FUNCTION], out, inp,
                           (size_t) n * caml_shape_size (&layer->in));
}

static void
activation_backward (CamlLayer *layer, float *dinp, const float *dout,
                     const float *inp, const float *out, int n)
{
  if (dinp != NULL)
    caml_activation_backward ((CamlActivation) layer->opt[OPT_FUNCTION], dinp, dout,
                              out, (size_t) n * caml_shape_size (&layer->in), FALSE);
}

static void
activation_free (CamlLayer *layer)
{
}

const CamlLayerOps caml_activation_layer_ops = {
  .name = "activation",
  .title = "Activation",
  .description = "Element-wise identity, tanh, relu or sigmoid",
  .options = activation_options,
  .n_options = G_N_ELEMENTS (activation_options),
  .setup = activation_setup,
  .forward = activation_forward,
  .backward = activation_backward,
  .free = activation_free,
};
