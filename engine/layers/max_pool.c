/* max_pool.c — max over size×size windows of each channel. Forward keeps the
 * index of each window's maximum; backward routes the gradient there. With
 * padding "same" the border is ignored (as if −∞), like TensorFlow. */
#include <float.h>

#include "layers.h"

enum { OPT_SIZE, OPT_STRIDE, OPT_PADDING };

static const CamlOptionSpec max_pool_options[] = {
  [OPT_SIZE]    = { "size", CAML_OPT_INT, "the window is size×size", 1, 8, 2, NULL },
  [OPT_STRIDE]  = { "stride", CAML_OPT_INT, "step between windows (0: the size)", 0, 8, 0, NULL,
                    "size" },
  [OPT_PADDING] = { "padding", CAML_OPT_ENUM,
                    "valid: whole windows only; same: ceil(H / stride) outputs",
                    0, 0, CAML_PADDING_VALID, caml_padding_names },
};

typedef struct {
  CamlConvGeom g;      /* c = channels; k = size */
  int         *arg;    /* (N, C, OH, OW) index into the sample's (C, H, W) */
  size_t       arg_cap;
} MaxPool;

static gboolean
max_pool_setup (CamlLayer *layer, GError **error)
{
  int size = (int) layer->opt[OPT_SIZE];
  int stride = (int) layer->opt[OPT_STRIDE];
  CamlConvGeom g;
  if (!caml_conv_geom_init (&g, &layer->in, size, stride > 0 ? stride : size,
                            (CamlPadding) layer->opt[OPT_PADDING], "max_pool", error))
    return FALSE;
  MaxPool *s = g_new0 (MaxPool, 1);
  s->g = g;
  layer->out = caml_shape_image (g.c, g.oh, g.ow);
  layer->state = s;
  return TRUE;
}

/* arg (N, C, OH, OW) for batches of up to n samples. */
static gboolean
max_pool_reserve (CamlLayer *layer, int n, gboolean allocate, size_t *bytes)
{
  MaxPool *s = layer->state;
  CamlScratch sc = { .allocate = allocate, .bytes = *bytes };
  caml_scratch_ints (&sc, &s->arg, &s->arg_cap, n, (size_t) s->g.c * s->g.p);
  *bytes = sc.bytes;
  return !sc.failed;
}

static void
max_pool_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  MaxPool *s = layer->state;
  const CamlConvGeom *g = &s->g;
  caml_scratch_require (layer, n);
  for (int i = 0; i < n * g->c; i++)
    {
      const float *img = inp + (size_t) i * g->h * g->w;
      float *o = out + (size_t) i * g->p;
      int *a = s->arg + (size_t) i * g->p;
      for (int oy = 0; oy < g->oh; oy++)
        for (int ox = 0; ox < g->ow; ox++)
          {
            int y0 = oy * g->stride - g->pad_top, x0 = ox * g->stride - g->pad_left;
            float best = -FLT_MAX;
            int at = -1;
            for (int y = MAX (y0, 0); y < MIN (y0 + g->k, g->h); y++)
              for (int x = MAX (x0, 0); x < MIN (x0 + g->k, g->w); x++)
                if (at < 0 || img[y * g->w + x] > best)
                  {
                    best = img[y * g->w + x];
                    at = y * g->w + x;
                  }
            o[oy * g->ow + ox] = best;
            a[oy * g->ow + ox] = at;
          }
    }
}

static void
max_pool_backward (CamlLayer *layer, float *dinp, const float *dout,
                   const float *inp, const float *out, int n)
{
  MaxPool *s = layer->state;
  const CamlConvGeom *g = &s->g;
  if (dinp == NULL)
    return;
  memset (dinp, 0, (size_t) n * g->c * g->h * g->w * sizeof (float));
  for (int i = 0; i < n * g->c; i++)
    {
      float *d = dinp + (size_t) i * g->h * g->w;
      const float *go = dout + (size_t) i * g->p;
      const int *a = s->arg + (size_t) i * g->p;
      for (int q = 0; q < g->p; q++)
        d[a[q]] += go[q];
    }
}

static void
max_pool_free (CamlLayer *layer)
{
  MaxPool *s = layer->state;
  g_free (s->arg);
  g_free (s);
}

const CamlLayerOps caml_max_pool_ops = {
  .name = "max_pool",
  .title = "Max pool",
  .description = "Maximum over size×size windows of each channel",
  .options = max_pool_options,
  .n_options = G_N_ELEMENTS (max_pool_options),
  .setup = max_pool_setup,
  .forward = max_pool_forward,
  .backward = max_pool_backward,
  .free = max_pool_free,
  .reserve = max_pool_reserve,
};
