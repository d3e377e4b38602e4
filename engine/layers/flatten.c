/* flatten.c — (C, H, W) → (C·H·W). The data do not move: NCHW rows are
 * already flat, so forward and backward are copies. */
#include "layers.h"

static gboolean
flatten_setup (CamlLayer *layer, GError **error)
{
  layer->out = caml_shape_flat ((int) caml_shape_size (&layer->in));
  return TRUE;
}

static void
flatten_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  memcpy (out, inp, (size_t) n * caml_shape_size (&layer->in) * sizeof (float));
}

static void
flatten_backward (CamlLayer *layer, float *dinp, const float *dout,
                  const float *inp, const float *out, int n)
{
  if (dinp != NULL)
    memcpy (dinp, dout, (size_t) n * caml_shape_size (&layer->in) * sizeof (float));
}

static void
flatten_free (CamlLayer *layer)
{
}

const CamlLayerOps caml_flatten_ops = {
  .name = "flatten",
  .title = "Flatten",
  .description = "Reshape (C, H, W) to a flat (C·H·W) vector",
  .options = NULL,
  .n_options = 0,
  .setup = flatten_setup,
  .forward = flatten_forward,
  .backward = flatten_backward,
  .free = flatten_free,
};
