/* bench-conv.c — the direct convolution kernels alone, on the CA-CNN shape
 * of `caml bench`'s default model (k 8, depth 8, one 28×28 channel, batch
 * 100): the gated forward, and the weight-gradient pass with a prologue that
 * copies a dy already in cache (so it times the kernels and the driver, not
 * the layer's reads of dout and v). Not a test: a benchmark for a machine
 * shared with other builds, so it reports the fastest of many repetitions,
 * which interference only ever slows.
 *
 *   build/tests/bench-conv [threads [reps]]    (default 1 thread, 40 reps) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caml.h"
#include "layers/layers.h"
#include "parallel.h"

enum { N = 100, DEPTH = 8, M = DEPTH + 1, SIDE = 28, K = 8, BLOCK = 16 };

typedef struct {
  const float *dy;   /* (M, BLOCK, P): the rows every block copies */
  int          p;
} CopyPrologue;

static void
copy_prologue (gpointer data, float *dy, size_t ld, size_t ps, int n0, int nb, float *sums)
{
  const CopyPrologue *c = data;
  for (int j = 0; j < M; j++)
    for (int i = 0; i < nb; i++)
      memcpy (dy + j * ld + i * ps, c->dy + ((size_t) j * BLOCK + i % BLOCK) * c->p,
              (size_t) c->p * sizeof (float));
}

int
main (int argc, char **argv)
{
  int threads = argc > 1 ? atoi (argv[1]) : 1, reps = argc > 2 ? atoi (argv[2]) : 40;
  if (threads < 1 || reps < 1)
    {
      fprintf (stderr, "usage: bench-conv [threads [reps]]\n");
      return 2;
    }
  caml_parallel_pin (threads);
  CamlShape in = caml_shape_image (1, SIDE, SIDE);
  CamlConvGeom g;
  if (!caml_conv_geom_init (&g, &in, K, 1, CAML_PADDING_SAME, "bench-conv", NULL))
    return 1;
  const size_t P = g.p;
  float *x = g_new (float, (size_t) N * SIDE * SIDE);            /* (N, 1, 28, 28) */
  float *W = g_new (float, (size_t) M * g.kk);                   /* (M, K) */
  float *dW = g_new0 (float, (size_t) M * g.kk);                 /* (M, K) */
  float *out = g_new (float, (size_t) N * DEPTH * P);            /* (N, D, P) */
  float *v = g_new (float, (size_t) N * DEPTH * P);              /* (N, D, P) */
  float *chi = g_new (float, (size_t) N * P);                    /* (N, 1, P) */
  float *dy = g_new (float, (size_t) M * BLOCK * P);             /* (M, BLOCK, P) */
  float b[DEPTH] = { 0 }, w0[DEPTH] = { 0 };
  for (size_t i = 0; i < (size_t) N * SIDE * SIDE; i++)
    x[i] = (float) (i % 7) * 0.1f;
  for (size_t i = 0; i < (size_t) M * g.kk; i++)
    W[i] = (float) (i % 5) * 0.01f;
  for (size_t i = 0; i < (size_t) M * BLOCK * P; i++)
    dy[i] = (float) (i % 3) * 0.1f - 0.1f;
  CopyPrologue cp = { .dy = dy, .p = (int) P };
  CamlConvScratch scratch = { 0 };
  CamlConvOutput o = { .m = M, .gated = TRUE, .act = CAML_ACT_RELU, .b = b, .w0 = w0,
                       .out = out, .v = v, .chi = chi };
  double best_fwd = G_MAXDOUBLE, best_bwd = G_MAXDOUBLE;
  for (int r = 0; r < reps; r++)
    {
      gint64 t0 = g_get_monotonic_time ();
      caml_conv_forward (&g, W, x, N, &scratch, &o);
      gint64 t1 = g_get_monotonic_time ();
      caml_conv_backward (&g, dW, NULL, W, M, x, N, &scratch, copy_prologue, &cp, NULL, 0);
      gint64 t2 = g_get_monotonic_time ();
      best_fwd = MIN (best_fwd, (t1 - t0) * 1e-6);
      best_bwd = MIN (best_bwd, (t2 - t1) * 1e-6);
    }
  double flops = 2.0 * M * g.kk * (double) P * N;
  printf ("%s kernels, %d thread%s, fastest of %d: forward %.3f ms %.1f GFLOP/s, "
          "weight gradient %.3f ms %.1f GFLOP/s\n", caml_kernels_isa (), threads,
          threads == 1 ? "" : "s", reps, best_fwd * 1e3, flops / best_fwd * 1e-9,
          best_bwd * 1e3, flops / best_bwd * 1e-9);
  caml_conv_scratch_free (&scratch);
  g_free (x); g_free (W); g_free (dW); g_free (out); g_free (v); g_free (chi); g_free (dy);
  return 0;
}
