/* conv.c — the convolution every convolutional layer runs: geometry
 * (stride, same/valid padding), and a driver that hands blocks of samples to
 * parts (parallel.h) and computes them
 *  - with stride 1, by the direct kernels (conv-kernels.c): each input
 *    channel is laid once into a zero-bordered plane, and the kernels read
 *    the k×k windows from it where they lie, with no matrix of patches;
 *  - with a larger stride, as im2col + cblas_sgemm over blocks of samples
 *    small enough to stay in cache.
 *
 * Layouts (per sample (C, H, W) row-major; P = OH·OW output positions;
 * K = C·k·k patch values; a block holds nb samples):
 *   Wm   (M, K)      one row per output channel (a filter (C, k, k) flattened)
 *   y    (M, nb·P)   = Wm · patches: channel-major, so a sample's channel j
 *                    is the contiguous run y[j·nb·P + i·P …] of P values
 * The direct kernels turn y into the layer's outputs (bias, activation,
 * gate mix: CamlConvOutput) while it is still in registers; the im2col path
 * does the same from y. The prologue of backward builds dy in y's layout. Memory is bounded by the block, not by N. Sums over
 * samples (weight and bias gradients) are kept per part and added in part
 * order, so the results depend on the thread count, not on timing. */
#include <cblas.h>

#include "layers.h"
#include "parallel.h"
#include "vectorize.h"

const char *const caml_padding_names[] = { "same", "valid", NULL };

/* Floats of col per sub-batch: 100 Ki floats = 400 KiB stays in L2 while
 * the gemm reads it back (measured: 1–2 MNIST images per block run the
 * gemms 2× faster than 5 or more). */
#define COL_BUDGET ((size_t) 100 * 1024)

static int
round_up (int x, int to)
{
  return (x + to - 1) / to * to;
}

/* Vectors per row block for rows of `width` outputs: two, unless one
 * wastes fewer lanes. */
static int
row_vectors (int width, int vl)
{
  if (width <= vl)
    return 1;
  return round_up (width, 2 * vl) <= round_up (width, vl) ? 2 : 1;
}

gboolean
caml_conv_geom_init (CamlConvGeom *g, const CamlShape *in, int k, int stride,
                     CamlPadding padding, const char *what, GError **error)
{
  if (in->ndim != 3)
    {
      g_autofree char *s = caml_shape_to_string (in);
      g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                   "%s needs an image input (C, H, W), got the flat shape %s; "
                   "put it before any flatten or dense layer, or give the data "
                   "an image shape", what, s);
      return FALSE;
    }
  *g = (CamlConvGeom) { .c = in->dims[0], .h = in->dims[1], .w = in->dims[2],
                        .k = k, .stride = stride };
  if (padding == CAML_PADDING_VALID)
    {
      if (k > g->h || k > g->w)
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                       "%s: the %d×%d window is larger than the %d×%d input "
                       "(padding \"valid\" adds no border; use \"same\" or a "
                       "smaller kernel)", what, k, k, g->h, g->w);
          return FALSE;
        }
      g->oh = (g->h - k) / stride + 1;
      g->ow = (g->w - k) / stride + 1;
    }
  else
    {
      /* Like TensorFlow: out = ceil(in / stride), the zero border split with
       * the smaller half before ((k − 1)/2 before for stride 1). */
      g->oh = (g->h + stride - 1) / stride;
      g->ow = (g->w + stride - 1) / stride;
      g->pad_top = MAX ((g->oh - 1) * stride + k - g->h, 0) / 2;
      g->pad_left = MAX ((g->ow - 1) * stride + k - g->w, 0) / 2;
    }
  g->p = g->oh * g->ow;
  g->kk = g->c * k * k;
  g->sub_batch = (int) MAX ((size_t) 1, COL_BUDGET / ((size_t) g->kk * g->p));
  g->direct = stride == 1;
  if (g->direct)
    {
      int vl = caml_conv_kernels ()->vl;
      g->nv = row_vectors (g->ow, vl);
      g->nv_in = row_vectors (g->w, vl);
      g->owp = round_up (g->ow, g->nv * vl);
      g->wp = g->owp + k - 1;
      g->hp = g->oh + k - 1;
      g->iwp = round_up (g->w, g->nv_in * vl);
      g->wq = g->iwp + k - 1;
      g->hq = g->h + k - 1;
    }
  return TRUE;
}

/* The zero-bordered plane every window of one channel reads from:
 * Hp = (OH − 1)·s + k rows, Wp = (OW − 1)·s + k columns. */
static int plane_h (const CamlConvGeom *g) { return (g->oh - 1) * g->stride + g->k; }
static int plane_w (const CamlConvGeom *g) { return (g->ow - 1) * g->stride + g->k; }

size_t
caml_conv_plane_size (const CamlConvGeom *g)
{
  return (size_t) plane_h (g) * plane_w (g);
}

/* plane (Hp, Wp) = the channel img (H, W) inside its zero border. */
static void
fill_plane (float *plane, const float *img, const CamlConvGeom *g)
{
  const int hp = plane_h (g), wp = plane_w (g);
  const int x1 = MIN (g->w, wp - g->pad_left);   /* input columns that land inside */
  memset (plane, 0, (size_t) hp * wp * sizeof (float));
  for (int y = 0; y < hp; y++)
    {
      int iy = y - g->pad_top;
      if (iy < 0 || iy >= g->h)
        continue;
      memcpy (plane + (size_t) y * wp + g->pad_left, img + (size_t) iy * g->w,
              x1 * sizeof (float));
    }
}

void
caml_im2col (float *col, float *plane, const float *inp, const CamlConvGeom *g, int nb)
{
  const int k = g->k, s = g->stride, oh = g->oh, ow = g->ow, P = g->p;
  const int wp = plane_w (g);
  const size_t ld = (size_t) nb * P;
  for (int i = 0; i < nb; i++)
    for (int c = 0; c < g->c; c++)
      {
        fill_plane (plane, inp + ((size_t) i * g->c + c) * g->h * g->w, g);
        for (int ki = 0; ki < k; ki++)
          for (int kj = 0; kj < k; kj++)
            {
              float *dst = col + ((size_t) (c * k + ki) * k + kj) * ld + (size_t) i * P;
              const float *src = plane + (size_t) ki * wp + kj;
              if (s == 1)
                for (int oy = 0; oy < oh; oy++, dst += ow, src += wp)
                  for (int ox = 0; ox < ow; ox++)
                    dst[ox] = src[ox];
              else
                for (int oy = 0; oy < oh; oy++, dst += ow, src += (size_t) s * wp)
                  for (int ox = 0; ox < ow; ox++)
                    dst[ox] = src[ox * s];
            }
      }
}

void
caml_col2im_add (float *dinp, float *plane, const float *col, const CamlConvGeom *g, int nb)
{
  const int k = g->k, s = g->stride, oh = g->oh, ow = g->ow, P = g->p;
  const int hp = plane_h (g), wp = plane_w (g);
  const int x1 = MIN (g->w, wp - g->pad_left);
  const size_t ld = (size_t) nb * P;
  for (int i = 0; i < nb; i++)
    for (int c = 0; c < g->c; c++)
      {
        memset (plane, 0, (size_t) hp * wp * sizeof (float));
        for (int ki = 0; ki < k; ki++)
          for (int kj = 0; kj < k; kj++)
            {
              const float *src = col + ((size_t) (c * k + ki) * k + kj) * ld + (size_t) i * P;
              float *dst = plane + (size_t) ki * wp + kj;
              if (s == 1)
                for (int oy = 0; oy < oh; oy++, src += ow, dst += wp)
                  for (int ox = 0; ox < ow; ox++)
                    dst[ox] += src[ox];
              else
                for (int oy = 0; oy < oh; oy++, src += ow, dst += (size_t) s * wp)
                  for (int ox = 0; ox < ow; ox++)
                    dst[ox * s] += src[ox];
            }
        float *img = dinp + ((size_t) i * g->c + c) * g->h * g->w;
        for (int iy = 0; iy < g->h; iy++)
          {
            int y = iy + g->pad_top;
            if (y >= hp)
              break;
            const float *row = plane + (size_t) y * wp + g->pad_left;
            float *out = img + (size_t) iy * g->w;
            for (int x = 0; x < x1; x++)
              out[x] += row[x];
          }
      }
}

/* *buf (64-byte aligned) holds at least count floats; contents not kept. */
static void
reserve (float **buf, size_t *capacity, size_t count)
{
  if (count <= *capacity)
    return;
  g_aligned_free (*buf);
  *buf = g_aligned_alloc (count, sizeof (float), 64);
  *capacity = count;
}

void
caml_conv_scratch_free (CamlConvScratch *scratch)
{
  for (int i = 0; i < scratch->n_work; i++)
    {
      CamlConvWork *w = &scratch->work[i];
      g_aligned_free (w->y);
      g_aligned_free (w->planes);
      g_aligned_free (w->dyp);
      g_aligned_free (w->xs);
      g_aligned_free (w->dplanes);
      g_aligned_free (w->dW);
      g_aligned_free (w->sums);
      g_aligned_free (w->col);
      g_aligned_free (w->plane);
    }
  g_clear_pointer (&scratch->work, g_free);
  scratch->n_work = 0;
  g_clear_pointer (&scratch->wt, g_free);
  scratch->wt_cap = 0;
}

/* One scratch per part, before the parts start. */
static void
reserve_parts (CamlConvScratch *scratch, int parts)
{
  if (parts <= scratch->n_work)
    return;
  scratch->work = g_renew (CamlConvWork, scratch->work, parts);
  memset (scratch->work + scratch->n_work, 0,
          (size_t) (parts - scratch->n_work) * sizeof (CamlConvWork));
  scratch->n_work = parts;
}

/* The parts a backward pass over n samples is cut into (each sums its
 * gradient): the thread count, at most one per sample. Forward, whose
 * samples are independent, is cut finer (caml_parallel_chunks). */
static int
conv_parts (int n)
{
  return MAX (1, MIN (caml_parallel_threads (), n));
}

/* Floats of scratch per block of the direct kernels: the blocks stay in
 * a core's L2 cache. */
#define DIRECT_BUDGET ((size_t) 64 * 1024)

/* Samples per block of a direct backward pass for M outputs: their
 * planes, dy with its gaps, and the input gradient's planes when dinp (the
 * weight gradient packs one sample at a time). */
static int
direct_block (const CamlConvGeom *g, int m, gboolean dinp)
{
  size_t per = (size_t) g->c * g->hp * g->wp + (size_t) m * (g->p + g->owp);
  if (dinp)
    per += (size_t) (m + CAML_CONV_FWD_MB_MAX) * g->oh * g->owp + (size_t) m * g->hq * g->wq;
  return (int) CLAMP (DIRECT_BUDGET / per, 1, 16);
}

/* dst[0 … n) = src[0 … n) for the short rows of images: inline, where a
 * call to memcpy per row of 28 floats cost more than the copy. */
typedef float Floats4 __attribute__ ((vector_size (16), aligned (4)));

static inline void
copy_row (float *restrict dst, const float *restrict src, int n)
{
  int i = 0;
  for (; i + 4 <= n; i += 4)
    *(Floats4 *) (dst + i) = *(const Floats4 *) (src + i);
  for (; i < n; i++)
    dst[i] = src[i];
}

/* planes (nb, C, Hp, Wp) of inp (nb, C, H, W): each channel inside its zero
 * border (pad_top, pad_left), zeros to the right up to Wp. */
static void
fill_planes (float *planes, const float *inp, const CamlConvGeom *g, int nb)
{
  const int hp = g->hp, wp = g->wp;
  const size_t plane = (size_t) hp * wp;
  for (int i = 0; i < nb; i++)
    for (int c = 0; c < g->c; c++)
      {
        float *dst = planes + ((size_t) i * g->c + c) * plane;
        const float *img = inp + ((size_t) i * g->c + c) * g->h * g->w;
        memset (dst, 0, plane * sizeof (float));
        for (int iy = 0; iy < g->h; iy++)
          {
            int y = iy + g->pad_top;
            if (y >= hp)
              break;
            copy_row (dst + (size_t) y * wp + g->pad_left, img + (size_t) iy * g->w,
                      MIN (g->w, wp - g->pad_left));
          }
      }
}

/* Splits m channels into balanced blocks of at most `most`: block b covers
 * [m0, m0 + mb). */
static void
channel_block (int m, int most, int b, int *m0, int *mb)
{
  int blocks = (m + most - 1) / most;
  *m0 = m * b / blocks;
  *mb = m * (b + 1) / blocks - *m0;
}

/* The pass's arguments, shared by its parts. */
typedef struct {
  const CamlConvGeom    *g;
  const CamlConvKernels *ck;
  const float           *Wm;
  int                    m;
  const float           *inp;
  int                    n;
  CamlConvScratch       *scratch;
  int                    parts;
  int                    nb;       /* samples per block */
  /* forward */
  const CamlConvOutput  *o;
  /* backward */
  CamlConvPrologue       prologue;
  float                 *dinp;
  int                    n_sums;
  size_t                 ps, ld;   /* dy's sample and channel strides (direct) */
  size_t                 lanes;    /* floats of a part's lane sums (direct) */
  gpointer               ctx;
} Pass;

/* The direct kernel over one sample's planes (ph, pw, `channels` of them):
 * channels m0 … m0 + mb − 1 of rows × cols outputs, stored as `tile` says,
 * its pointers at the sample's first output. */
static void
direct_rows (const CamlConvKernels *ck, CamlConvTile tile, int rows, int cols, int nv,
             const float *planes, int ph, int pw, int channels, int k, const float *w,
             int m0, int mb)
{
  const size_t ws = (size_t) channels * k * k;
  ck->fwd[nv - 1][mb] (&tile, rows, cols, planes, pw, (size_t) ph * pw, channels, k,
                       w + (size_t) m0 * ws, ws);
}

/* The forward outputs of sample n from its planes: every channel block,
 * the gate's first — with the last values (Wm's rows before the gate's),
 * its χ stored for the blocks after it to mix with. */
static void
direct_sample (const Pass *a, const float *planes, int n)
{
  const CamlConvGeom *g = a->g;
  const CamlConvOutput *o = a->o;
  const CamlConvKernels *ck = a->ck;
  const size_t P = g->p;
  const int values = o->gated ? a->m - 1 : a->m;
  const int blocks = (a->m + ck->fwd_mb - 1) / ck->fwd_mb;
  CamlConvTile tile = { .act = o->act, .os = P, .b_chi = o->b_chi };
  for (int i = 0; i < blocks; i++)
    {
      /* gated: the last block (which holds the gate) first */
      int b = o->gated ? (i + blocks - 1) % blocks : i;
      int m0, mb;
      channel_block (a->m, ck->fwd_mb, b, &m0, &mb);
      gboolean gate = o->gated && m0 + mb == a->m;
      int vb = gate ? mb - 1 : mb;   /* the block's values */
      size_t at = ((size_t) n * values + m0) * P;
      tile.store = gate ? (vb > 0 ? CAML_CONV_STORE_GATED : CAML_CONV_STORE_GATE)
                        : o->gated ? CAML_CONV_STORE_MIX : CAML_CONV_STORE_ACT;
      tile.out = gate && vb == 0 ? o->chi + (size_t) n * P : o->out + at;
      tile.v = o->gated ? o->v + at : NULL;
      tile.chi = o->gated ? o->chi + (size_t) n * P : NULL;
      tile.b = o->b != NULL ? o->b + m0 : NULL;
      tile.w0 = o->gated ? o->w0 + m0 : NULL;
      direct_rows (ck, tile, g->oh, g->ow, g->nv, planes, g->hp, g->wp, g->c, g->k, a->Wm,
                   m0, mb);
    }
}

static void
direct_forward_part (int part, int parts, gpointer data)
{
  const Pass *a = data;
  const CamlConvGeom *g = a->g;
  CamlConvWork *w = &a->scratch->work[part];
  const size_t in_size = (size_t) g->c * g->h * g->w, plane = (size_t) g->c * g->hp * g->wp;
  size_t lo, hi;
  caml_part_range (a->n, part, parts, 1, &lo, &hi);
  reserve (&w->planes, &w->planes_cap, plane);
  for (size_t i = lo; i < hi; i++)
    {
      fill_planes (w->planes, a->inp + i * in_size, g, 1);
      direct_sample (a, w->planes, (int) i);
    }
}

/* The outputs of samples [n0, n0 + nb) from their products y (M, nb·P),
 * as the direct kernels store them (the im2col path). */
static CAML_VECTOR_LOOP void
store_outputs (const CamlConvOutput *o, int m, const float *y, int n0, int nb, int P)
{
  const size_t ld = (size_t) nb * P;
  const int values = o->gated ? m - 1 : m;
  for (int i = 0; i < nb; i++)
    {
      float *chi = o->gated ? o->chi + (size_t) (n0 + i) * P : NULL;
      if (o->gated)
        {
          const float *z = y + (size_t) values * ld + (size_t) i * P;
          for (int p = 0; p < P; p++)
            chi[p] = z[p] + o->b_chi;
          caml_activation_forward (CAML_ACT_SIGMOID, chi, chi, P);
        }
      for (int j = 0; j < values; j++)
        {
          const float *src = y + j * ld + (size_t) i * P;
          size_t at = ((size_t) (n0 + i) * values + j) * P;
          float *val = o->gated ? o->v + at : o->out + at;
          float bj = o->b != NULL ? o->b[j] : 0.0f;
          for (int p = 0; p < P; p++)
            val[p] = src[p] + bj;
          caml_activation_forward (o->act, val, val, P);
          if (o->gated)
            {
              float *out = o->out + at, w0 = o->w0[j];
              for (int p = 0; p < P; p++)
                out[p] = chi[p] * (val[p] - w0) + w0;
            }
        }
    }
}

/* Floats per packed array of `rows` rows of `ow` (CamlConvPackRows): room
 * for a vector read past the last position, and an odd number of vectors,
 * so that the k arrays a kernel reads side by side do not fall on the same
 * cache sets. */
static size_t
packed_stride (int rows, int ow, int vl)
{
  size_t ks = (size_t) round_up (rows * ow, vl) + vl;
  return ks / vl % 2 == 0 ? ks + vl : ks;
}

/* The weight gradient's lane sums of one block: acc (M, K, vl) += dy ·
 * patches, the kernels reading one sample's packed rows (whole and
 * aligned) and dy where the prologue wrote it, shifted back by ki·OW. A
 * sample's operands stay in L1 while its calls run. */
static void
direct_weight_grad (const Pass *a, CamlConvWork *w, const float *dy, int nb)
{
  const CamlConvGeom *g = a->g;
  const CamlConvKernels *ck = a->ck;
  const int k = g->k, vl = ck->vl, ow = g->ow, P = g->p;
  const size_t ams = (size_t) g->kk * vl, ks = packed_stride (g->hp, ow, vl);
  reserve (&w->xs, &w->xs_cap, (size_t) g->c * k * ks);
  for (int i = 0; i < nb; i++)
    {
      for (int c = 0; c < g->c; c++)
        ck->pack_rows (w->xs + (size_t) c * k * ks, ks,
                       w->planes + ((size_t) i * g->c + c) * g->hp * g->wp, g->hp, g->wp, ow,
                       k);
      /* each column block's channels in balanced blocks of at most the
       * kernels' width */
      for (int kj0 = 0; kj0 < k; kj0 += ck->dw_kb)
        {
          int kb = MIN (ck->dw_kb, k - kj0);
          int blocks = (a->m + ck->dw_mb[kb] - 1) / ck->dw_mb[kb];
          for (int b = 0; b < blocks; b++)
            {
              int m0, mb;
              channel_block (a->m, ck->dw_mb[kb], b, &m0, &mb);
              CamlConvDwKernel f = ck->dw[kb][mb];
              for (int c = 0; c < g->c; c++)
                for (int ki = 0; ki < k; ki++)
                  {
                    /* positions q = p + ki·OW of the packed rows, in whole
                     * vectors; dy is zero outside [0, P) */
                    const int q0 = ki * ow, s0 = q0 / vl, s1 = (q0 + P + vl - 1) / vl;
                    f (w->dW + (size_t) m0 * ams + ((size_t) (c * k + ki) * k + kj0) * vl, ams,
                       dy + (size_t) m0 * a->ld + (size_t) i * a->ps
                         + ((ptrdiff_t) s0 * vl - q0),
                       a->ld, w->xs + ((size_t) c * k + kj0) * ks + (size_t) s0 * vl, ks,
                       s1 - s0);
                  }
            }
        }
    }
}

static void
direct_backward_part (int part, int parts, gpointer data)
{
  const Pass *a = data;
  const CamlConvGeom *g = a->g;
  CamlConvWork *w = &a->scratch->work[part];
  const size_t in_size = (size_t) g->c * g->h * g->w;
  const int M = a->m, vl = a->ck->vl;
  size_t lo, hi;
  caml_part_range (a->n, part, parts, 1, &lo, &hi);
  reserve (&w->dW, &w->dW_cap, a->lanes);
  memset (w->dW, 0, a->lanes * sizeof (float));
  reserve (&w->sums, &w->sums_cap, MAX (a->n_sums, 1));
  memset (w->sums, 0, MAX (a->n_sums, 1) * sizeof (float));
  for (int n0 = (int) lo; n0 < (int) hi; n0 += a->nb)
    {
      int nb = MIN (a->nb, (int) hi - n0);
      const size_t P = g->p, ps = a->ps;
      Pass b = *a;
      b.ld = (size_t) nb * ps;
      reserve (&w->planes, &w->planes_cap, (size_t) nb * g->c * g->hp * g->wp);
      /* dy: a zero margin of vl, then channel j of sample i at j·ld + i·ps,
       * zeros between the runs */
      reserve (&w->dyp, &w->dyp_cap, vl + (size_t) M * b.ld);
      float *dy = w->dyp + vl;
      memset (w->dyp, 0, vl * sizeof (float));
      for (int j = 0; j < M; j++)
        for (int i = 0; i < nb; i++)
          memset (dy + j * b.ld + i * ps + P, 0, (ps - P) * sizeof (float));
      a->prologue (a->ctx, dy, b.ld, ps, n0, nb, w->sums);
      fill_planes (w->planes, a->inp + n0 * in_size, g, nb);
      direct_weight_grad (&b, w, dy, nb);

      if (a->dinp == NULL)
        continue;
      /* dinp = the forward kernel over dy's planes (bordered by k − 1 − pad)
       * with the flipped weights */
      const int bt = g->k - 1 - g->pad_top, bl = g->k - 1 - g->pad_left;
      const size_t dplane = (size_t) g->hq * g->wq;
      reserve (&w->dplanes, &w->dplanes_cap, (size_t) nb * M * dplane);
      for (int i = 0; i < nb; i++)
        for (int j = 0; j < M; j++)
          {
            float *dst = w->dplanes + ((size_t) i * M + j) * dplane;
            memset (dst, 0, dplane * sizeof (float));
            for (int oy = 0; oy < g->oh && oy + bt < g->hq; oy++)
              copy_row (dst + (size_t) (oy + bt) * g->wq + bl,
                        dy + j * b.ld + i * ps + (size_t) oy * g->ow,
                        MIN (g->ow, g->wq - bl));
          }
      for (int i = 0; i < nb; i++)
        {
          CamlConvTile raw = { .store = CAML_CONV_STORE_RAW,
                               .out = a->dinp + (n0 + i) * in_size, .os = (size_t) g->h * g->w };
          int blocks = (g->c + a->ck->fwd_mb - 1) / a->ck->fwd_mb;
          for (int b = 0; b < blocks; b++)
            {
              int c0, cb;
              channel_block (g->c, a->ck->fwd_mb, b, &c0, &cb);
              CamlConvTile t = raw;
              t.out = raw.out + (size_t) c0 * g->h * g->w;
              direct_rows (a->ck, t, g->h, g->w, g->nv_in, w->dplanes + (size_t) i * M * dplane,
                           g->hq, g->wq, M, g->k, a->scratch->wt, c0, cb);
            }
        }
    }
}

/* One part of the im2col path: blocks of sub_batch samples. */
static void
im2col_forward_part (int part, int parts, gpointer data)
{
  const Pass *a = data;
  const CamlConvGeom *g = a->g;
  CamlConvWork *w = &a->scratch->work[part];
  const size_t in_size = (size_t) g->c * g->h * g->w;
  size_t lo, hi;
  caml_part_range (a->n, part, parts, 1, &lo, &hi);
  for (int n0 = (int) lo; n0 < (int) hi; n0 += g->sub_batch)
    {
      int nb = MIN (g->sub_batch, (int) hi - n0);
      size_t cols = (size_t) nb * g->p;
      reserve (&w->col, &w->col_cap, (size_t) g->kk * cols);
      reserve (&w->y, &w->y_cap, (size_t) a->m * cols);
      reserve (&w->plane, &w->plane_cap, caml_conv_plane_size (g));
      caml_im2col (w->col, w->plane, a->inp + n0 * in_size, g, nb);
      caml_sgemm_serial (CblasNoTrans, CblasNoTrans, a->m, (int) cols, g->kk,
                         1.0f, a->Wm, g->kk, w->col, (int) cols, 0.0f, w->y, (int) cols);
      store_outputs (a->o, a->m, w->y, n0, nb, g->p);
    }
}

static void
im2col_backward_part (int part, int parts, gpointer data)
{
  const Pass *a = data;
  const CamlConvGeom *g = a->g;
  CamlConvWork *w = &a->scratch->work[part];
  const size_t in_size = (size_t) g->c * g->h * g->w, wsize = (size_t) a->m * g->kk;
  size_t lo, hi;
  caml_part_range (a->n, part, parts, 1, &lo, &hi);
  reserve (&w->dW, &w->dW_cap, wsize);
  memset (w->dW, 0, wsize * sizeof (float));
  reserve (&w->sums, &w->sums_cap, MAX (a->n_sums, 1));
  memset (w->sums, 0, MAX (a->n_sums, 1) * sizeof (float));
  for (int n0 = (int) lo; n0 < (int) hi; n0 += g->sub_batch)
    {
      int nb = MIN (g->sub_batch, (int) hi - n0);
      size_t cols = (size_t) nb * g->p;
      reserve (&w->col, &w->col_cap, (size_t) g->kk * cols);
      reserve (&w->y, &w->y_cap, (size_t) a->m * cols);
      reserve (&w->plane, &w->plane_cap, caml_conv_plane_size (g));
      a->prologue (a->ctx, w->y, cols, g->p, n0, nb, w->sums);
      /* The patches are taken again rather than kept from forward: the
       * block stays in L2 both times. */
      caml_im2col (w->col, w->plane, a->inp + n0 * in_size, g, nb);
      caml_sgemm_serial (CblasNoTrans, CblasTrans, a->m, g->kk, (int) cols,
                         1.0f, w->y, (int) cols, w->col, (int) cols, 1.0f, w->dW, g->kk);
      if (a->dinp != NULL)
        {
          caml_sgemm_serial (CblasTrans, CblasNoTrans, g->kk, (int) cols, a->m,
                             1.0f, a->Wm, g->kk, w->y, (int) cols, 0.0f, w->col, (int) cols);
          memset (a->dinp + n0 * in_size, 0, nb * in_size * sizeof (float));
          caml_col2im_add (a->dinp + n0 * in_size, w->plane, w->col, g, nb);
        }
    }
}

void
caml_conv_forward (const CamlConvGeom *g, const float *Wm, const float *inp, int n,
                   CamlConvScratch *scratch, const CamlConvOutput *o)
{
  if (n <= 0)
    return;
  Pass a = { .g = g, .ck = caml_conv_kernels (), .Wm = Wm, .m = o->m, .inp = inp, .n = n,
             .scratch = scratch, .parts = caml_parallel_chunks (n, 1), .o = o };
  reserve_parts (scratch, a.parts);
  caml_parallel_for (a.parts, g->direct ? direct_forward_part : im2col_forward_part, &a);
}

/* Floats of lane sums below which the weight gradient is summed on one
 * thread. */
#define LANE_SUM_GRAIN 32768.0

typedef struct {
  const CamlConvScratch *scratch;
  int                    parts, vl;
  float                 *dWm;
  size_t                 n;          /* weights */
} LaneSums;

/* dWm[o] += each part's lanes of weight o summed, part by part in order,
 * for the weights o of this range. */
static void
lane_sum_part (int part, int parts, gpointer data)
{
  const LaneSums *ls = data;
  const int vl = ls->vl;
  size_t lo, hi;
  caml_part_range (ls->n, part, parts, 1, &lo, &hi);
  for (int p = 0; p < ls->parts; p++)
    {
      const float *acc = ls->scratch->work[p].dW;
      for (size_t o = lo; o < hi; o++)
        {
          const float *l = acc + o * vl;
          float s = 0.0f;
          for (int q = 0; q < vl; q++)
            s += l[q];
          ls->dWm[o] += s;
        }
    }
}

void
caml_conv_backward (const CamlConvGeom *g, float *dWm, float *dinp, const float *Wm,
                    int m, const float *inp, int n, CamlConvScratch *scratch,
                    CamlConvPrologue prologue, gpointer ctx, float *sums, int n_sums)
{
  if (n <= 0)
    return;
  Pass a = { .g = g, .ck = caml_conv_kernels (), .Wm = Wm, .m = m, .inp = inp, .n = n,
             .scratch = scratch, .parts = conv_parts (n), .prologue = prologue,
             .dinp = dinp, .n_sums = n_sums, .ctx = ctx };
  reserve_parts (scratch, a.parts);
  const int vl = a.ck->vl, K = g->kk;
  if (g->direct)
    {
      a.lanes = (size_t) m * K * vl;
      /* a sample's run of dy, then at least vl zeros */
      a.ps = (size_t) round_up (g->p, vl) + vl;
      a.nb = direct_block (g, m, dinp != NULL);
      if (dinp != NULL)
        {
          /* wt (C, M, k, k): wt[c][j][ki][kj] = Wm[j][c][k−1−ki][k−1−kj] */
          const int k = g->k, kk = k * k;
          caml_buffer_reserve (&scratch->wt, &scratch->wt_cap, (size_t) g->c * m * kk);
          for (int c = 0; c < g->c; c++)
            for (int j = 0; j < m; j++)
              for (int t = 0; t < kk; t++)
                scratch->wt[((size_t) c * m + j) * kk + t]
                  = Wm[(size_t) j * K + (size_t) c * kk + (kk - 1 - t)];
        }
      caml_parallel_for (a.parts, direct_backward_part, &a);
      /* Σ over parts, then lanes, in order, the weights split over the
       * threads when the parts' lane sums are many (every core's parts:
       * 150,000 floats on 16) */
      LaneSums ls = { .scratch = scratch, .parts = a.parts, .vl = vl, .dWm = dWm,
                      .n = (size_t) m * K };
      caml_parallel_for (caml_parallel_chunks (ls.n, LANE_SUM_GRAIN / ((double) a.parts * vl)),
                         lane_sum_part, &ls);
    }
  else
    {
      caml_parallel_for (a.parts, im2col_backward_part, &a);
      const size_t wsize = (size_t) m * K;
      for (int p = 0; p < a.parts; p++)
        for (size_t i = 0; i < wsize; i++)
          dWm[i] += scratch->work[p].dW[i];
    }
  for (int p = 0; p < a.parts && sums != NULL; p++)
    for (int i = 0; i < n_sums; i++)
      sums[i] += scratch->work[p].sums[i];
}

/* ------------------------------------------------ plain convolution units */

typedef struct {
  const CamlConvGeom *g;
  int                 m;
  CamlActivation      act;
  gboolean            bias_grad;
  const float        *out;
  const float        *dout;
} Plain;

static CAML_VECTOR_LOOP void
plain_prologue (gpointer data, float *dy, size_t ld, size_t ps, int n0, int nb, float *db)
{
  const Plain *c = data;
  const int P = c->g->p;
  for (int i = 0; i < nb; i++)
    for (int j = 0; j < c->m; j++)
      {
        size_t at = ((size_t) (n0 + i) * c->m + j) * P;
        float *dst = dy + j * ld + i * ps;
        caml_activation_backward (c->act, dst, c->dout + at, c->out + at, P, FALSE);
        if (c->bias_grad)
          {
            float s = 0.0f;
#pragma omp simd reduction(+:s)
            for (int p = 0; p < P; p++)
              s += dst[p];
            db[j] += s;
          }
      }
}

void
caml_conv_plain_forward (const CamlConvGeom *g, float *out, const float *inp,
                         const float *W, const float *b, int m, CamlActivation act,
                         int n, CamlConvScratch *scratch)
{
  CamlConvOutput o = { .m = m, .act = act, .b = b, .out = out };
  caml_conv_forward (g, W, inp, n, scratch, &o);
}

void
caml_conv_plain_backward (const CamlConvGeom *g, float *dinp, float *dW, float *db,
                          const float *dout, const float *inp, const float *out,
                          const float *W, int m, CamlActivation act, int n,
                          CamlConvScratch *scratch)
{
  Plain c = { .g = g, .m = m, .act = act, .out = out, .dout = dout, .bias_grad = db != NULL };
  caml_conv_backward (g, dW, dinp, W, m, inp, n, scratch, plain_prologue, &c, db,
                      db != NULL ? m : 0);
}

/* ------------------------------------------------- per-position gate mix */

static CAML_VECTOR_LOOP void
gate_mix_maps_forward_loops (float *out, const float *chi, const float *v,
                            const float *w0, int n, int u, int p)
{
  for (int i = 0; i < n; i++)
    {
      const float *ci = chi + (size_t) i * p;
      for (int j = 0; j < u; j++)
        {
          size_t at = ((size_t) i * u + j) * p;
          for (int q = 0; q < p; q++)
            out[at + q] = ci[q] * v[at + q] + (1.0f - ci[q]) * w0[j];
        }
    }
}

/* The loops above, for the instruction set the CPU has (vectorize.h: a
 * public function calls a static clone, which every compiler links). */
void
caml_gate_mix_maps_forward (float *out, const float *chi, const float *v,
                            const float *w0, int n, int u, int p)
{
  gate_mix_maps_forward_loops (out, chi, v, w0, n, u, p);
}

static CAML_VECTOR_LOOP void
gate_mix_maps_backward_loops (float *dv, float *dchi, float *dw0, const float *dout,
                             const float *chi, const float *v, const float *w0,
                             int n, int u, int p)
{
  memset (dchi, 0, (size_t) n * p * sizeof (float));
  for (int i = 0; i < n; i++)
    {
      const float *ci = chi + (size_t) i * p;
      float *dci = dchi + (size_t) i * p;
      for (int j = 0; j < u; j++)
        {
          size_t at = ((size_t) i * u + j) * p;
          float s = 0.0f;
#pragma omp simd reduction(+:s)
          for (int q = 0; q < p; q++)
            {
              float gq = dout[at + q];
              dv[at + q] = ci[q] * gq;
              dci[q] += gq * (v[at + q] - w0[j]);
              s += (1.0f - ci[q]) * gq;
            }
          dw0[j] += s;
        }
    }
}

/* The loops above, for the instruction set the CPU has (vectorize.h: a
 * public function calls a static clone, which every compiler links). */
void
caml_gate_mix_maps_backward (float *dv, float *dchi, float *dw0, const float *dout,
                             const float *chi, const float *v, const float *w0,
                             int n, int u, int p)
{
  gate_mix_maps_backward_loops (dv, dchi, dw0, dout, chi, v, w0, n, u, p);
}
