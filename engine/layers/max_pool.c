/* max_pool.c — max over size×size windows of each channel. Forward keeps the
 * index of each window's maximum; backward routes the gradient there. With
 * padding "same" the border is ignored (as if −∞), like TensorFlow. */
#include <float.h>

#include "layers.h"
#include "parallel.h"

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

/* The maximum of the window at (y0, x0), clipped to the image; ties and
 * NaN keep the first value in row-major order. */
static inline void
window_max (const float *img, int h, int w, int k, int y0, int x0, float *best_out, int *at_out)
{
  int ya = MAX (y0, 0), yb = MIN (y0 + k, h), xa = MAX (x0, 0), xb = MIN (x0 + k, w);
  int at = ya * w + xa;
  float best = img[at];
  for (int y = ya; y < yb; y++)
    for (int x = xa; x < xb; x++)
      if (img[y * w + x] > best)
        {
          best = img[y * w + x];
          at = y * w + x;
        }
  *best_out = best;
  *at_out = at;
}

typedef struct {
  MaxPool     *s;
  float       *out, *dinp;
  const float *inp, *dout;
  int          n;
} Pass;

/* The planes (sample, channel) of part `part`. */
static void
plane_range (const Pass *a, int part, int parts, size_t *lo, size_t *hi)
{
  caml_part_range ((size_t) a->n * a->s->g.c, part, parts, 1, lo, hi);
}

static void
forward_part (int part, int parts, gpointer data)
{
  const Pass *pa = data;
  const CamlConvGeom *g = &pa->s->g;
  /* The windows wholly inside the image (all of them with valid padding)
   * go the fast way: 2×2 without a branch (selects: the maxima of random
   * activations are a coin toss for the branch predictor), the others
   * without bounds. */
  int st = g->stride, k = g->k;
  size_t lo, hi;
  plane_range (pa, part, parts, &lo, &hi);
  for (size_t i = lo; i < hi; i++)
    {
      const float *img = pa->inp + i * g->h * g->w;
      float *o = pa->out + i * g->p;
      int *a = pa->s->arg + i * g->p;
      for (int oy = 0; oy < g->oh; oy++)
        {
          int y0 = oy * st - g->pad_top;
          gboolean rows_inside = y0 >= 0 && y0 + k <= g->h;
          for (int ox = 0; ox < g->ow; ox++)
            {
              int x0 = ox * st - g->pad_left;
              float best;
              int at;
              if (!rows_inside || x0 < 0 || x0 + k > g->w)
                window_max (img, g->h, g->w, k, y0, x0, &best, &at);
              else if (k == 2)
                {
                  int p = y0 * g->w + x0, q = p + g->w;
                  float v1 = img[p + 1], v2 = img[q], v3 = img[q + 1];
                  /* each step: a compare, a max and arithmetic on the index */
                  int c;
                  best = img[p];
                  at = p;
                  c = v1 > best;
                  at += c * (p + 1 - at);
                  best = c ? v1 : best;
                  c = v2 > best;
                  at += c * (q - at);
                  best = c ? v2 : best;
                  c = v3 > best;
                  at += c * (q + 1 - at);
                  best = c ? v3 : best;
                }
              else
                {
                  at = y0 * g->w + x0;
                  best = img[at];
                  for (int y = y0; y < y0 + k; y++)
                    {
                      const float *row = img + (size_t) y * g->w;
                      for (int x = x0; x < x0 + k; x++)
                        if (row[x] > best)
                          {
                            best = row[x];
                            at = y * g->w + x;
                          }
                    }
                }
              o[oy * g->ow + ox] = best;
              a[oy * g->ow + ox] = at;
            }
        }
    }
}

static void
max_pool_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  MaxPool *s = layer->state;
  caml_scratch_require (layer, n);
  Pass a = { .s = s, .out = out, .inp = inp, .n = n };
  caml_parallel_for (caml_parallel_chunks (n, 1), forward_part, &a);
}

static void
backward_part (int part, int parts, gpointer data)
{
  const Pass *pa = data;
  const CamlConvGeom *g = &pa->s->g;
  size_t lo, hi;
  plane_range (pa, part, parts, &lo, &hi);
  memset (pa->dinp + lo * g->h * g->w, 0, (hi - lo) * g->h * g->w * sizeof (float));
  for (size_t i = lo; i < hi; i++)
    {
      float *d = pa->dinp + i * g->h * g->w;
      const float *go = pa->dout + i * g->p;
      const int *a = pa->s->arg + i * g->p;
      for (int q = 0; q < g->p; q++)
        d[a[q]] += go[q];
    }
}

static void
max_pool_backward (CamlLayer *layer, float *dinp, const float *dout,
                   const float *inp, const float *out, int n)
{
  MaxPool *s = layer->state;
  if (dinp == NULL)
    return;
  Pass a = { .s = s, .dinp = dinp, .dout = dout, .n = n };
  caml_parallel_for (caml_parallel_chunks (n, 1), backward_part, &a);
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
