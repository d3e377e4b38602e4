/* conv-kernels-body.h — the direct convolution kernels of one instruction
 * set, included by conv-kernels.c once per set with:
 *   ISA      the name's suffix (avx512, avx2, sse2)
 *   ISA_NAME what caml --version calls it
 *   TARGET   the function attribute target (…) or nothing
 *   VL       floats per vector
 *   FWD_MB   most output channels per forward call (2·FWD_MB accumulators)
 *   REGS     vector registers (accumulators and operands must fit)
 *   DW_KB    most kernel columns per weight-gradient call
 * Vectors are GCC's vector extension; the file is compiled with
 * -ffp-contract=fast so that `acc += x * w` is one FMA. */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_ (a, b)
#define NAME(f) CAT (f, ISA)

typedef float NAME (vec) __attribute__ ((vector_size (VL * sizeof (float))));
/* The same, at any address. */
typedef float NAME (uvec) __attribute__ ((vector_size (VL * sizeof (float)), aligned (4)));

#define VEC NAME (vec)
#define LOAD(p) (*(const NAME (uvec) *) (p))
#define STORE(p, v) (*(NAME (uvec) *) (p) = (v))

/* out[m·os + x] = Σ_c Σ_ki Σ_kj w[m·ws + (c·k + ki)·k + kj] · plane[c·ps + ki·wp + kj + x]
 * for m < mb and x < width ≤ nv·VL; reads plane up to x = nv·VL − 1. */
static inline __attribute__ ((always_inline)) TARGET void
NAME (fwd_body) (float *out, size_t os, int width, const float *plane, int wp, size_t ps,
                 int channels, int k, const float *w, size_t ws, const int mb, const int nv)
{
  VEC acc[FWD_MB][2];
#pragma GCC unroll 16
  for (int m = 0; m < mb; m++)
    acc[m][0] = acc[m][1] = (VEC) { 0 };
  for (int c = 0; c < channels; c++)
    for (int ki = 0; ki < k; ki++)
      {
        const float *src = plane + (size_t) c * ps + (size_t) ki * wp;
        const float *wk = w + (size_t) (c * k + ki) * k;
        for (int kj = 0; kj < k; kj++)
          {
            VEC x[2];
#pragma GCC unroll 2
            for (int v = 0; v < nv; v++)
              x[v] = LOAD (src + kj + v * VL);
#pragma GCC unroll 16
            for (int m = 0; m < mb; m++)
              {
                float wm = wk[(size_t) m * ws + kj];
#pragma GCC unroll 2
                for (int v = 0; v < nv; v++)
                  acc[m][v] += x[v] * wm;
              }
          }
      }
  if (width == nv * VL)
    {
#pragma GCC unroll 16
      for (int m = 0; m < mb; m++)
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++)
          STORE (out + (size_t) m * os + v * VL, acc[m][v]);
      return;
    }
  int full = width / VL, rest = width % VL;
#pragma GCC unroll 16
  for (int m = 0; m < mb; m++)
    {
      float *o = out + (size_t) m * os;
      for (int v = 0; v < full; v++)
        STORE (o + v * VL, acc[m][v]);
      if (rest > 0)
        STORE_FIRST (o + full * VL, acc[m][full], rest);
    }
}

#define FWD(MB, NV)                                                                     \
  static TARGET void                                         \
  NAME (fwd_##MB##_##NV) (float *out, size_t os, int width, const float *plane, int wp, \
                          size_t ps, int channels, int k, const float *w, size_t ws)    \
  {                                                                                     \
    NAME (fwd_body) (out, os, width, plane, wp, ps, channels, k, w, ws, MB, NV);        \
  }
#define FWD_BOTH(MB) FWD (MB, 1) FWD (MB, 2)

/* acc[(m·ams) + kj·VL + lane] += Σ_r Σ_xb dy[m·dms + r·owp + xb + lane] · plane[r·wp + xb + kj + lane]
 * for m < mb, kj < kb, r < rows, xb = 0, VL, … < owp: the partial sums,
 * lane by lane, of the gradient of kernel columns kj. */
static inline __attribute__ ((always_inline)) TARGET void
NAME (dw_body) (float *acc, size_t ams, const float *dy, size_t dms, int owp, int rows,
                const float *plane, int wp, const int mb, const int kb)
{
  VEC a[REGS];
#pragma GCC unroll 24
  for (int m = 0; m < mb; m++)
#pragma GCC unroll 8
    for (int kj = 0; kj < kb; kj++)
      a[m * kb + kj] = LOAD (acc + (size_t) m * ams + (size_t) kj * VL);
  for (int r = 0; r < rows; r++)
    for (int xb = 0; xb < owp; xb += VL)
      {
        const float *src = plane + (size_t) r * wp + xb;
        const float *d = dy + (size_t) r * owp + xb;
        VEC g[REGS];
#pragma GCC unroll 24
        for (int m = 0; m < mb; m++)
          g[m] = LOAD (d + (size_t) m * dms);
#pragma GCC unroll 8
        for (int kj = 0; kj < kb; kj++)
          {
            VEC x = LOAD (src + kj);
            /* one load for all mb products: folded into each FMA, the load
             * would be repeated mb times, mostly across cache lines */
            __asm__ ("" : "+v" (x));
#pragma GCC unroll 24
            for (int m = 0; m < mb; m++)
              a[m * kb + kj] += g[m] * x;
          }
      }
#pragma GCC unroll 24
  for (int m = 0; m < mb; m++)
#pragma GCC unroll 8
    for (int kj = 0; kj < kb; kj++)
      STORE (acc + (size_t) m * ams + (size_t) kj * VL, a[m * kb + kj]);
}

/* Output channels per weight-gradient call of KB columns: KB + 1 vectors
 * each (accumulators and its gradient) and one for the input. */
#define DW_MB(KB) ((REGS - 1) / ((KB) + 1))

#define DW(KB)                                                                          \
  static TARGET void                                         \
  NAME (dw_##KB) (float *acc, size_t ams, const float *dy, size_t dms, int owp,         \
                  int rows, const float *plane, int wp)                                 \
  {                                                                                     \
    NAME (dw_body) (acc, ams, dy, dms, owp, rows, plane, wp, DW_MB (KB), KB);        \
  }

FWD_BOTH (1) FWD_BOTH (2) FWD_BOTH (3) FWD_BOTH (4) FWD_BOTH (5) FWD_BOTH (6)
#if FWD_MB > 6
FWD_BOTH (7) FWD_BOTH (8) FWD_BOTH (9) FWD_BOTH (10) FWD_BOTH (11) FWD_BOTH (12)
#endif
DW (1) DW (2) DW (3) DW (4)
#if DW_KB > 4
DW (5) DW (6) DW (7) DW (8)
#endif

#define FWD_ROW(NV) NULL, NAME (fwd_1_##NV), NAME (fwd_2_##NV), NAME (fwd_3_##NV),     \
  NAME (fwd_4_##NV), NAME (fwd_5_##NV), NAME (fwd_6_##NV)
#define FWD_ROW_WIDE(NV) NAME (fwd_7_##NV), NAME (fwd_8_##NV), NAME (fwd_9_##NV),       \
  NAME (fwd_10_##NV), NAME (fwd_11_##NV), NAME (fwd_12_##NV)

static const CamlConvKernels NAME (kernels) = {
  .isa = ISA_NAME,
  .vl = VL,
  .fwd_mb = FWD_MB,
#if FWD_MB > 6
  .fwd = { { FWD_ROW (1), FWD_ROW_WIDE (1) }, { FWD_ROW (2), FWD_ROW_WIDE (2) } },
#else
  .fwd = { { FWD_ROW (1) }, { FWD_ROW (2) } },
#endif
  .dw_kb = DW_KB,
#if DW_KB > 4
  .dw_mb = { 0, DW_MB (1), DW_MB (2), DW_MB (3), DW_MB (4), DW_MB (5), DW_MB (6), DW_MB (7),
             DW_MB (8) },
  .dw = { NULL, NAME (dw_1), NAME (dw_2), NAME (dw_3), NAME (dw_4), NAME (dw_5), NAME (dw_6),
          NAME (dw_7), NAME (dw_8) },
#else
  .dw_mb = { 0, DW_MB (1), DW_MB (2), DW_MB (3), DW_MB (4) },
  .dw = { NULL, NAME (dw_1), NAME (dw_2), NAME (dw_3), NAME (dw_4) },
#endif
};

#undef VEC
#undef LOAD
#undef STORE
#undef FWD
#undef FWD_BOTH
#undef FWD_ROW
#undef FWD_ROW_WIDE
#undef DW
#undef DW_MB
#undef CAT_
#undef CAT
#undef NAME
