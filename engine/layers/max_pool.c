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
   * go the fast way: 2×2 with stride 2 a row at a time by the vector
   * kernel (layers.h, CamlPool2Kernel), the others without bounds; windows
   * over the border are clipped. */
  const CamlConvKernels *ck = caml_conv_kernels ();
  int st = g->stride, k = g->k;
  /* the outputs whose windows lie inside the image's columns */
  int x_a = MIN ((g->pad_left + st - 1) / st, g->ow);
  int span = g->w - k + g->pad_left;   /* negative: the window is wider than the image */
  int x_b = span < 0 ? x_a : CLAMP (span / st + 1, x_a, g->ow);
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
          float *orow = o + oy * g->ow;
          int *arow = a + oy * g->ow;
          int fast_a = rows_inside ? x_a : g->ow, fast_b = rows_inside ? x_b : g->ow;
          if (rows_inside && k == 2 && st == 2)
            {
              int at0 = y0 * g->w + x_a * 2 - g->pad_left;
              ck->pool2 (orow + x_a, arow + x_a, img + at0, at0, g->w, x_b - x_a);
            }
          else if (rows_inside)
            for (int ox = x_a; ox < x_b; ox++)
              {
                int x0 = ox * st - g->pad_left, at = y0 * g->w + x0;
                float best = img[at];
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
                orow[ox] = best;
                arow[ox] = at;
              }
          /* the windows over the border */
          for (int ox = 0; ox < g->ow; ox++)
            if (ox < fast_a || ox >= fast_b)
              window_max (img, g->h, g->w, k, y0, ox * st - g->pad_left, &orow[ox], &arow[ox]);
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

/* Whether 2×2 windows with stride 2 cover the image exactly, each cell
 * once: backward then writes every cell (CamlUnpool2Kernel) without
 * zeroing first. */
static gboolean
tiles_exactly (const CamlConvGeom *g)
{
  return g->k == 2 && g->stride == 2 && g->pad_top == 0 && g->pad_left == 0
         && g->h == 2 * g->oh && g->w == 2 * g->ow;
}

static void
backward_part (int part, int parts, gpointer data)
{
  const Pass *pa = data;
  const CamlConvGeom *g = &pa->s->g;
  size_t lo, hi;
  plane_range (pa, part, parts, &lo, &hi);
  if (tiles_exactly (g))
    {
      const CamlConvKernels *ck = caml_conv_kernels ();
      for (size_t i = lo; i < hi; i++)
        for (int oy = 0; oy < g->oh; oy++)
          {
            size_t at = (size_t) oy * g->ow;
            int at0 = 2 * oy * g->w;
            ck->unpool2 (pa->dinp + i * g->h * g->w + at0, pa->dout + i * g->p + at,
                         pa->s->arg + i * g->p + at, at0, g->w, g->ow);
          }
      return;
    }
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
