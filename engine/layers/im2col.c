/* im2col.c — the convolution kernels every convolutional layer shares:
 * geometry (stride, same/valid padding), im2col / col2im, and a driver that
 * runs a convolution as cblas_sgemm over bounded sub-batches.
 *
 * Layouts (per sample (C, H, W) row-major; P = OH·OW output positions;
 * K = C·k·k patch values; a sub-batch holds nb samples):
 *   col  (K, nb·P)   row (c·k + ki)·k + kj, column i·P + oy·OW + ox
 *   Wm   (M, K)      one row per output channel (a filter (C, k, k) flattened)
 *   y    (M, nb·P)   = Wm · col: channel-major, so a sample's channel j is the
 *                    contiguous run y[j·nb·P + i·P …] of P values
 * The epilogue turns y into the layer's (N, M', OH, OW) output (bias,
 * activation, gate mix) in one pass; the prologue of backward builds dy in
 * the same layout. Memory is bounded by the sub-batch, not by N. */
#include <cblas.h>

#include "layers.h"
#include "parallel.h"

const char *const caml_padding_names[] = { "same", "valid", NULL };

/* Floats of col per sub-batch: 100 Ki floats = 400 KiB stays in L2 while
 * the gemm reads it back (measured: 1–2 MNIST images per block run the
 * gemms 2× faster than 5 or more). */
#define COL_BUDGET ((size_t) 100 * 1024)

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

void
caml_conv_scratch_free (CamlConvScratch *scratch)
{
  for (int w = 0; w < CAML_CONV_WORKERS; w++)
    {
      CamlConvWork *k = &scratch->work[w];
      g_clear_pointer (&k->col, g_free);
      g_clear_pointer (&k->y, g_free);
      g_clear_pointer (&k->plane, g_free);
      g_clear_pointer (&k->dW, g_free);
      k->col_cap = k->y_cap = k->plane_cap = k->dW_cap = 0;
    }
}

/* One worker's share of a forward or backward pass: sub-batches
 * worker, worker + workers, … */
typedef struct {
  const CamlConvGeom *g;
  const float        *Wm;
  int                 m;
  const float        *inp;
  int                 n;
  CamlConvWork       *work;
  int                 worker, workers;
  /* forward */
  CamlConvEpilogue    epilogue;
  /* backward */
  CamlConvPrologue    prologue;
  float              *dWm;    /* (M, K) this worker accumulates into */
  float              *dinp;
  gpointer            ctx;
} Job;

static void
reserve_work (CamlConvWork *k, const CamlConvGeom *g, int m, size_t cols)
{
  caml_buffer_reserve (&k->col, &k->col_cap, (size_t) g->kk * cols);
  caml_buffer_reserve (&k->y, &k->y_cap, (size_t) m * cols);
  caml_buffer_reserve (&k->plane, &k->plane_cap, caml_conv_plane_size (g));
}

static gpointer
forward_job (gpointer data)
{
  const Job *j = data;
  const CamlConvGeom *g = j->g;
  const size_t in_size = (size_t) g->c * g->h * g->w;
  for (int n0 = j->worker * g->sub_batch; n0 < j->n; n0 += j->workers * g->sub_batch)
    {
      int nb = MIN (g->sub_batch, j->n - n0);
      size_t cols = (size_t) nb * g->p;
      reserve_work (j->work, g, j->m, cols);
      caml_im2col (j->work->col, j->work->plane, j->inp + n0 * in_size, g, nb);
      cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, j->m, (int) cols, g->kk,
                   1.0f, j->Wm, g->kk, j->work->col, (int) cols, 0.0f, j->work->y,
                   (int) cols);
      j->epilogue (j->ctx, j->work->y, n0, nb);
    }
  return NULL;
}

static gpointer
backward_job (gpointer data)
{
  const Job *j = data;
  const CamlConvGeom *g = j->g;
  const size_t in_size = (size_t) g->c * g->h * g->w;
  for (int n0 = j->worker * g->sub_batch; n0 < j->n; n0 += j->workers * g->sub_batch)
    {
      int nb = MIN (g->sub_batch, j->n - n0);
      size_t cols = (size_t) nb * g->p;
      CamlConvWork *k = j->work;
      reserve_work (k, g, j->m, cols);
      j->prologue (j->ctx, k->y, n0, nb, j->worker);
      /* The patches are taken again rather than kept from forward: the
       * sub-batch stays in L2 both times, where keeping all N of them
       * (20 MB for MNIST k8) went through memory and ran slower. */
      caml_im2col (k->col, k->plane, j->inp + n0 * in_size, g, nb);
      cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, j->m, g->kk, (int) cols,
                   1.0f, k->y, (int) cols, k->col, (int) cols, 1.0f, j->dWm, g->kk);
      if (j->dinp != NULL)
        {
          cblas_sgemm (CblasRowMajor, CblasTrans, CblasNoTrans, g->kk, (int) cols, j->m,
                       1.0f, j->Wm, g->kk, k->y, (int) cols, 0.0f, k->col, (int) cols);
          caml_col2im_add (j->dinp + n0 * in_size, k->plane, k->col, g, nb);
        }
    }
  return NULL;
}

typedef struct {
  Job         *jobs;
  GThreadFunc  func;
} JobSet;

static void
job_part (int part, gpointer data)
{
  JobSet *set = data;
  set->func (&set->jobs[part]);
}

/* Runs the workers' shares, one per core (parallel.c). The gemms are small,
 * so splitting the batch between workers that each run a single-threaded
 * gemm beats threading inside each gemm. */
static void
run_jobs (Job *jobs, int workers, GThreadFunc func)
{
  if (workers == 1)
    {
      func (&jobs[0]);
      return;
    }
  G_STATIC_ASSERT (CAML_CONV_WORKERS == 2);
  JobSet set = { jobs, func };
  caml_parallel_run (job_part, &set);
}

int
caml_conv_workers (const CamlConvGeom *g, int n)
{
  int subs = (n + g->sub_batch - 1) / g->sub_batch;
  return MAX (1, MIN (MIN (caml_parallel_parts (), CAML_CONV_WORKERS), subs));
}

void
caml_conv_forward (const CamlConvGeom *g, const float *Wm, int m, const float *inp,
                   int n, CamlConvScratch *scratch, CamlConvEpilogue epilogue,
                   gpointer ctx)
{
  int workers = caml_conv_workers (g, n);
  Job jobs[CAML_CONV_WORKERS];
  for (int w = 0; w < workers; w++)
    jobs[w] = (Job) { .g = g, .Wm = Wm, .m = m, .inp = inp, .n = n,
                      .work = &scratch->work[w], .worker = w, .workers = workers,
                      .epilogue = epilogue, .ctx = ctx };
  run_jobs (jobs, workers, forward_job);
}

void
caml_conv_backward (const CamlConvGeom *g, float *dWm, float *dinp, const float *Wm,
                    int m, const float *inp, int n, CamlConvScratch *scratch,
                    CamlConvPrologue prologue, gpointer ctx)
{
  const size_t in_size = (size_t) g->c * g->h * g->w, wsize = (size_t) m * g->kk;
  if (dinp != NULL)
    memset (dinp, 0, (size_t) n * in_size * sizeof (float));
  int workers = caml_conv_workers (g, n);
  Job jobs[CAML_CONV_WORKERS];
  for (int w = 0; w < workers; w++)
    {
      CamlConvWork *k = &scratch->work[w];
      float *acc = dWm;
      if (w > 0)
        {
          caml_buffer_reserve (&k->dW, &k->dW_cap, wsize);
          memset (k->dW, 0, wsize * sizeof (float));
          acc = k->dW;
        }
      jobs[w] = (Job) { .g = g, .Wm = Wm, .m = m, .inp = inp, .n = n, .work = k,
                        .worker = w, .workers = workers, .prologue = prologue,
                        .dWm = acc, .dinp = dinp, .ctx = ctx };
    }
  run_jobs (jobs, workers, backward_job);
  for (int w = 1; w < workers; w++)
    for (size_t i = 0; i < wsize; i++)
      dWm[i] += scratch->work[w].dW[i];
}

/* ------------------------------------------------ plain convolution units */

typedef struct {
  const CamlConvGeom *g;
  int                 m;
  CamlActivation      act;
  const float        *b;
  float              *db[CAML_CONV_WORKERS];   /* one accumulator per worker */
  float              *out;
  const float        *dout;
} Plain;

static void
plain_epilogue (gpointer data, const float *y, int n0, int nb)
{
  const Plain *c = data;
  const int P = c->g->p;
  const size_t ld = (size_t) nb * P;
  for (int i = 0; i < nb; i++)
    for (int j = 0; j < c->m; j++)
      {
        const float *src = y + j * ld + (size_t) i * P;
        float *dst = c->out + ((size_t) (n0 + i) * c->m + j) * P;
        float bj = c->b != NULL ? c->b[j] : 0.0f;
        for (int p = 0; p < P; p++)
          dst[p] = src[p] + bj;
        caml_activation_forward (c->act, dst, dst, P);
      }
}

static void
plain_prologue (gpointer data, float *dy, int n0, int nb, int worker)
{
  const Plain *c = data;
  const int P = c->g->p;
  const size_t ld = (size_t) nb * P;
  for (int i = 0; i < nb; i++)
    for (int j = 0; j < c->m; j++)
      {
        size_t at = ((size_t) (n0 + i) * c->m + j) * P;
        float *dst = dy + j * ld + (size_t) i * P;
        caml_activation_backward (c->act, dst, c->dout + at, c->out + at, P, FALSE);
        if (c->db[worker] != NULL)
          {
            float s = 0.0f;
#pragma omp simd reduction(+:s)
            for (int p = 0; p < P; p++)
              s += dst[p];
            c->db[worker][j] += s;
          }
      }
}

void
caml_conv_plain_forward (const CamlConvGeom *g, float *out, const float *inp,
                         const float *W, const float *b, int m, CamlActivation act,
                         int n, CamlConvScratch *scratch)
{
  Plain c = { .g = g, .m = m, .act = act, .b = b, .out = out };
  caml_conv_forward (g, W, m, inp, n, scratch, plain_epilogue, &c);
}

void
caml_conv_plain_backward (const CamlConvGeom *g, float *dinp, float *dW, float *db,
                          const float *dout, const float *inp, const float *out,
                          const float *W, int m, CamlActivation act, int n,
                          CamlConvScratch *scratch)
{
  Plain c = { .g = g, .m = m, .act = act, .out = (float *) out, .dout = dout };
  float acc[CAML_CONV_WORKERS - 1][m];   /* m is a layer's depth: small */
  c.db[0] = db;
  for (int w = 1; w < CAML_CONV_WORKERS; w++)
    {
      c.db[w] = db != NULL ? acc[w - 1] : NULL;
      if (db != NULL)
        memset (acc[w - 1], 0, m * sizeof (float));
    }
  caml_conv_backward (g, dW, dinp, W, m, inp, n, scratch, plain_prologue, &c);
  for (int w = 1; w < CAML_CONV_WORKERS && db != NULL; w++)
    for (int j = 0; j < m; j++)
      db[j] += acc[w - 1][j];
}

/* ------------------------------------------------- per-position gate mix */

void
caml_gate_mix_maps_forward (float *out, const float *chi, const float *v,
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

void
caml_gate_mix_maps_backward (float *dv, float *dchi, float *dw0, const float *dout,
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
