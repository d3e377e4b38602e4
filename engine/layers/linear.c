/* linear.c — the dense kernels every layer shares: one cblas_sgemm each way,
 * and the χ gate mix of the Embedding Decomposition Formula. */
#include <cblas.h>

#include "layers.h"
#include "parallel.h"

/* ------------------------------------------------------ two-way gemm */

typedef struct {
  CBLAS_TRANSPOSE ta, tb;
  int             m, n, k;
  float           alpha, beta;
  const float    *A, *B;
  int             lda, ldb, ldc;
  float          *C;
} Gemm;

static void
gemm_run (const Gemm *g)
{
  cblas_sgemm (CblasRowMajor, g->ta, g->tb, g->m, g->n, g->k, g->alpha, g->A, g->lda,
               g->B, g->ldb, g->beta, g->C, g->ldc);
}

static void
gemm_part (int part, gpointer data)
{
  gemm_run ((const Gemm *) data + part);
}

/* Row-major C (m, n) = alpha op(A) op(B) + beta C. Large products are split
 * into two column halves, one per core (parallel.c). */
void
caml_sgemm (CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha,
            const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
  Gemm halves[2] = { { ta, tb, m, n, k, alpha, beta, A, B, lda, ldb, ldc, C } };
  if (caml_parallel_parts () < 2 || n < 32 || (double) m * n * k < 4e6)
    {
      gemm_run (&halves[0]);
      return;
    }
  int half = (n / 2 + 15) & ~15;
  halves[1] = halves[0];
  halves[0].n = half;
  halves[1].n = n - half;
  halves[1].B = tb == CblasNoTrans ? B + half : B + (size_t) half * ldb;
  halves[1].C = C + half;
  caml_parallel_run (gemm_part, halves);
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

void
caml_gate_mix_forward (float *out, const float *chi, const float *v,
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

void
caml_gate_mix_backward (float *dv, float *dchi, float *dw0, const float *dout,
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
