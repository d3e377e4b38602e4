/* mean_pool.c — the mean of a sequence's valid steps: (T, D) → (D).
 * A sample of length 0 gives zeros. */
#include "layers.h"

typedef struct {
  int t, d;
} MeanPool;

static gboolean
mean_pool_setup (CamlLayer *layer, GError **error)
{
  (void) error;
  MeanPool *s = g_new0 (MeanPool, 1);
  s->t = layer->in.dims[0];
  s->d = layer->in.dims[1];
  layer->out = caml_shape_flat (s->d);
  layer->state = s;
  return TRUE;
}

static void
mean_pool_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  MeanPool *s = layer->state;
  for (int i = 0; i < n; i++)
    {
      const float *x = inp + (size_t) i * s->t * s->d;   /* (T, D) */
      float *o = out + (size_t) i * s->d;                /* (D) */
      int len = layer->lengths ? layer->lengths[i] : s->t;
      memset (o, 0, s->d * sizeof (float));
      for (int t = 0; t < len; t++)
        for (int j = 0; j < s->d; j++)
          o[j] += x[(size_t) t * s->d + j];
      float scale = len > 0 ? 1.0f / (float) len : 0.0f;
      for (int j = 0; j < s->d; j++)
        o[j] *= scale;
    }
}

static void
mean_pool_backward (CamlLayer *layer, float *dinp, const float *dout,
                    const float *inp, const float *out, int n)
{
  (void) inp; (void) out;
  MeanPool *s = layer->state;
  if (dinp == NULL)
    return;
  for (int i = 0; i < n; i++)
    {
      float *dx = dinp + (size_t) i * s->t * s->d;
      const float *g = dout + (size_t) i * s->d;
      int len = layer->lengths ? layer->lengths[i] : s->t;
      float scale = len > 0 ? 1.0f / (float) len : 0.0f;
      for (int t = 0; t < s->t; t++)
        for (int j = 0; j < s->d; j++)
          dx[(size_t) t * s->d + j] = t < len ? g[j] * scale : 0.0f;
    }
}

static void
mean_pool_free (CamlLayer *layer)
{
  g_free (layer->state);
}

const CamlLayerOps caml_mean_pool_ops = {
  .name = "mean_pool",
  .title = "Mean pool",
  .description = "Mean over the steps of a sequence: (T, D) → (D)",
  .accepts = CAML_ACCEPTS (CAML_SHAPE_SEQUENCE),
  .setup = mean_pool_setup,
  .forward = mean_pool_forward,
  .backward = mean_pool_backward,
  .free = mean_pool_free,
};
