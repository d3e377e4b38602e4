/* linear.c — the dense kernels every layer shares: one cblas_sgemm each way,
 * and the χ gate mix of the Embedding Decomposition Formula. */
#include <math.h>
#include <cblas.h>
#ifdef CAML_HAVE_DNNL
#include <dnnl.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#include "layers.h"
#include "blas.h"
#include "parallel.h"
#include "vectorize.h"

/* ------------------------------------------------------ parallel gemm */

/* FLOPs below which a product is not worth a part of its own (about 15 µs
 * of one core), and below which OpenBLAS's small-matrix kernels beat
 * oneDNN's (whose calls cost a few µs more). */
#define GEMM_GRAIN 2e6

void
caml_sgemm_serial (CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha,
                   const float *A, int lda, const float *B, int ldb, float beta, float *C,
                   int ldc)
{
#ifdef CAML_HAVE_DNNL
  if (2.0 * m * n * k >= GEMM_GRAIN)
    {
#ifdef _OPENMP
      /* oneDNN threads a call made outside a parallel region over
       * omp_get_max_threads (): this thread's parts are the threads. */
      if (!omp_in_parallel ())
        omp_set_num_threads (1);
#endif
      /* row-major, as cblas_sgemm with CblasRowMajor */
      dnnl_sgemm (ta == CblasNoTrans ? 'N' : 'T', tb == CblasNoTrans ? 'N' : 'T', m, n, k,
                  alpha, A, lda, B, ldb, beta, C, ldc);
      return;
    }
#endif
  caml_blas_init ();
  cblas_sgemm (CblasRowMajor, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* Row-major C (m, n) = alpha op(A) op(B) + beta C, cut into a grid of
 * pm × pn × pk tiles, one single-threaded cblas_sgemm per part; the pk
 * slices of the inner dimension are added in order afterwards. */
typedef struct {
  CBLAS_TRANSPOSE ta, tb;
  int             m, n, k;
  float           alpha, beta;
  const float    *A, *B;
  int             lda, ldb, ldc;
  float          *C;
  int             pm, pn, pk;
  float          *partial;   /* (pk − 1, m, n): slices 1 … pk − 1 */
} Gemm;

static void
gemm_part (int part, int parts, gpointer data)
{
  const Gemm *g = data;
  int im = part % g->pm, in = (part / g->pm) % g->pn, ik = part / (g->pm * g->pn);
  size_t m0, m1, n0, n1, k0, k1;
  caml_part_range (g->m, im, g->pm, (size_t) caml_parallel_grain (8), &m0, &m1);
  caml_part_range (g->n, in, g->pn, (size_t) caml_parallel_grain (16), &n0, &n1);
  caml_part_range (g->k, ik, g->pk, (size_t) caml_parallel_grain (16), &k0, &k1);
  if (m0 == m1 || n0 == n1)
    return;
  const float *A = g->ta == CblasNoTrans ? g->A + m0 * g->lda + k0 : g->A + k0 * g->lda + m0;
  const float *B = g->tb == CblasNoTrans ? g->B + k0 * g->ldb + n0 : g->B + n0 * g->ldb + k0;
  float *C = g->C + m0 * g->ldc + n0;
  int ldc = g->ldc;
  float beta = g->beta;
  if (ik > 0)
    {
      C = g->partial + (size_t) (ik - 1) * g->m * g->n + m0 * g->n + n0;
      ldc = g->n;
      beta = 0.0f;
    }
  if (k0 == k1)
    {
      /* an empty slice still owes its tile: beta·C, or zeros */
      for (size_t i = 0; i < m1 - m0; i++)
        for (size_t j = 0; j < n1 - n0; j++)
          C[i * ldc + j] = beta != 0.0f ? beta * C[i * ldc + j] : 0.0f;
      return;
    }
  caml_sgemm_serial (g->ta, g->tb, (int) (m1 - m0), (int) (n1 - n0), (int) (k1 - k0),
                     g->alpha, A, g->lda, B, g->ldb, beta, C, ldc);
}

/* C += the slices, rows cut into parts. */
static void
gemm_sum_part (int part, int parts, gpointer data)
{
  const Gemm *g = data;
  size_t r0, r1;
  caml_part_range (g->m, part, parts, 1, &r0, &r1);
  for (int s = 1; s < g->pk; s++)
    for (size_t i = r0; i < r1; i++)
      {
        const float *src = g->partial + ((size_t) (s - 1) * g->m + i) * g->n;
        float *dst = g->C + i * g->ldc;
        for (int j = 0; j < g->n; j++)
          dst[j] += src[j];
      }
}

/* The grid for `parts` parts with the least memory traffic per part (its
 * tiles of A, B and C, twice C when the inner dimension is cut), keeping
 * tiles no thinner than the kernels' blocks. */
static void
gemm_grid (int m, int n, int k, int parts, int *pm, int *pn, int *pk)
{
  double best = HUGE_VAL;
  /* the thinnest tiles worth it (any, when the tests ask for fine parts) */
  int min_m = (int) caml_parallel_grain (16), min_n = (int) caml_parallel_grain (32);
  int min_k = (int) caml_parallel_grain (128);
  *pm = 1, *pn = 1, *pk = 1;
  for (int a = 1; a <= parts; a++)
    for (int b = 1; a * b <= parts; b++)
      {
        if (parts % (a * b) != 0)
          continue;
        int c = parts / (a * b);
        if ((a > 1 && m / a < min_m) || (b > 1 && n / b < min_n) || (c > 1 && k / c < min_k))
          continue;
        double tm = (double) m / a, tn = (double) n / b, tk = (double) k / c;
        double cost = tm * tk + tk * tn + tm * tn * (c > 1 ? 2.0 : 1.0);
        if (cost < best * 0.999)
          best = cost, *pm = a, *pn = b, *pk = c;
      }
}

/* Scratch of the calling thread for the slices of the inner dimension. */
static float *
gemm_partial (size_t floats)
{
  static GPrivate buffer = G_PRIVATE_INIT (g_free);
  static GPrivate capacity;
  size_t cap = GPOINTER_TO_SIZE (g_private_get (&capacity));
  float *p = g_private_get (&buffer);
  if (floats > cap)
    {
      p = g_new (float, floats);
      g_private_replace (&buffer, p);
      g_private_set (&capacity, GSIZE_TO_POINTER (floats));
    }
  return p;
}

void
caml_sgemm (CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha,
            const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
  Gemm g = { ta, tb, m, n, k, alpha, beta, A, B, lda, ldb, ldc, C, 1, 1, 1, NULL };
  double flops = 2.0 * m * n * k;
  int parts = (int) MIN ((double) caml_parallel_threads (),
                         flops / caml_parallel_grain (GEMM_GRAIN));
  if (parts <= 1 || m <= 0 || n <= 0)
    {
      caml_sgemm_serial (ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
      return;
    }
  /* the most parts ≤ `parts` a grid fits */
  for (;; parts--)
    {
      gemm_grid (m, n, k, parts, &g.pm, &g.pn, &g.pk);
      if (g.pm * g.pn * g.pk == parts || parts == 1)
        break;
    }
  if (g.pk > 1)
    g.partial = gemm_partial ((size_t) (g.pk - 1) * m * n);
  caml_parallel_for (g.pm * g.pn * g.pk, gemm_part, &g);
  if (g.pk > 1)
    caml_parallel_for (MIN (parts, m), gemm_sum_part, &g);
}

double
caml_sgemm_peak (int threads, double seconds)
{
  /* 1024 and 2048: where OpenBLAS and oneDNN reach their peaks here */
  const int sizes[] = { 1024, 2048 };
  double best = 0.0;
  int before = caml_parallel_pinned ();
  caml_parallel_pin (threads);
  for (gsize s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      int n = sizes[s];
      size_t count = (size_t) n * n;
      float *a = g_try_new (float, count), *b = g_try_new (float, count);
      float *c = g_try_new0 (float, count);
      if (a == NULL || b == NULL || c == NULL)
        {
          g_free (a), g_free (b), g_free (c);
          continue;
        }
      for (size_t i = 0; i < count; i++)
        a[i] = b[i] = (float) ((i * 7919) % 1000) / 1000.0f - 0.5f;
      caml_sgemm (CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
      gint64 end = g_get_monotonic_time () + (gint64) (seconds / G_N_ELEMENTS (sizes) * 1e6);
      do
        {
          gint64 t = g_get_monotonic_time ();
          caml_sgemm (CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
          double dt = (g_get_monotonic_time () - t) / 1e6;
          if (dt > 0)
            best = MAX (best, 2.0 * n * n * (double) n / dt / 1e9);
        }
      while (g_get_monotonic_time () < end);
      g_free (a), g_free (b), g_free (c);
    }
  caml_parallel_pin (before);
  return best;
}

void
caml_linear_forward (float *y, const float *x, const float *W, const float *b,
                     int n, int d, int u)
{
  caml_sgemm (CblasNoTrans, CblasTrans, n, u, d, 1.0f, x, d, W, d, 0.0f, y, u);
  if (b != NULL)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < u; j++)
        y[(size_t) i * u + j] += b[j];
}

void
caml_linear_backward (float *dx, float *dW, float *db, const float *dy,
                      const float *x, const float *W, int n, int d, int u,
                      gboolean accumulate)
{
  caml_sgemm (CblasTrans, CblasNoTrans, u, d, n, 1.0f, dy, u, x, d, 1.0f, dW, d);
  if (db != NULL)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < u; j++)
        db[j] += dy[(size_t) i * u + j];
  if (dx != NULL)
    caml_sgemm (CblasNoTrans, CblasNoTrans, n, d, u, 1.0f, dy, u, W, d,
                accumulate ? 1.0f : 0.0f, dx, d);
}

void
caml_buffer_reserve (float **buf, size_t *capacity, size_t count)
{
  if (count <= *capacity)
    return;
  g_free (*buf);
  *buf = g_new (float, count);
  *capacity = count;
}

/* The scratch buffer *buf of a × b elements of `size` bytes (see layers.h). */
static void
scratch_grow (CamlScratch *sc, gpointer *buf, size_t *capacity, size_t a, size_t b,
              size_t size)
{
  size_t count = 0, bytes = 0;
  gboolean fits = g_size_checked_mul (&count, a, b)
                  && g_size_checked_mul (&bytes, MAX (count, 1), size);
  if (!fits || !g_size_checked_add (&sc->bytes, sc->bytes, bytes))
    sc->bytes = SIZE_MAX;
  if (!sc->allocate || sc->failed || (capacity != NULL && count <= *capacity))
    return;
  g_free (*buf);
  *buf = fits ? g_try_malloc (bytes) : NULL;
  if (capacity != NULL)
    *capacity = *buf != NULL ? count : 0;
  sc->failed = *buf == NULL;
}

void
caml_scratch_floats (CamlScratch *sc, float **buf, size_t *capacity, size_t a, size_t b)
{
  gpointer p = *buf;
  scratch_grow (sc, &p, capacity, a, b, sizeof (float));
  *buf = p;
}

void
caml_scratch_ints (CamlScratch *sc, int **buf, size_t *capacity, size_t a, size_t b)
{
  gpointer p = *buf;
  scratch_grow (sc, &p, capacity, a, b, sizeof (int));
  *buf = p;
}

size_t
caml_scratch_rows (int n, int t)
{
  size_t rows;
  return g_size_checked_mul (&rows, MAX (n, 0), MAX (t, 0)) ? rows : SIZE_MAX;
}

void
caml_scratch_require (CamlLayer *layer, int n)
{
  size_t bytes = 0;
  if (!layer->ops->reserve (layer, n, TRUE, &bytes))
    g_error ("layer %d (%s): its scratch buffers for %d samples need %zu bytes, which "
             "cannot be allocated (call caml_model_reserve first)",
             layer->index, layer->ops->name, n, bytes);
}

static CAML_VECTOR_LOOP void
gate_mix_forward_loops (float *out, const float *chi, const float *v,
                       const float *w0, int n, int u)
{
  for (int i = 0; i < n; i++)
    {
      float c = chi[i];
      const float *vi = v + (size_t) i * u;
      float *oi = out + (size_t) i * u;
      for (int j = 0; j < u; j++)
        oi[j] = c * vi[j] + (1.0f - c) * w0[j];
    }
}

/* The loops above, for the instruction set the CPU has (vectorize.h: a
 * public function calls a static clone, which every compiler links). */
void
caml_gate_mix_forward (float *out, const float *chi, const float *v,
                       const float *w0, int n, int u)
{
  gate_mix_forward_loops (out, chi, v, w0, n, u);
}

static CAML_VECTOR_LOOP void
gate_mix_backward_loops (float *dv, float *dchi, float *dw0, const float *dout,
                        const float *chi, const float *v, const float *w0,
                        int n, int u)
{
  for (int i = 0; i < n; i++)
    {
      float c = chi[i], s = 0.0f;
      const float *gi = dout + (size_t) i * u;
      const float *vi = v + (size_t) i * u;
      float *dvi = dv + (size_t) i * u;
      for (int j = 0; j < u; j++)
        {
          dvi[j] = c * gi[j];
          s += gi[j] * (vi[j] - w0[j]);
          dw0[j] += (1.0f - c) * gi[j];
        }
      dchi[i] = s;
    }
}

/* The loops above, for the instruction set the CPU has (vectorize.h: a
 * public function calls a static clone, which every compiler links). */
void
caml_gate_mix_backward (float *dv, float *dchi, float *dw0, const float *dout,
                        const float *chi, const float *v, const float *w0,
                        int n, int u)
{
  gate_mix_backward_loops (dv, dchi, dw0, dout, chi, v, w0, n, u);
}
