/* conv-kernels-body.h — the direct convolution kernels of one instruction
 * set, included by conv-kernels.c once per set with:
 *   ISA      the name's suffix (avx512, avx2, sse2)
 *   ISA_NAME what caml --version calls it
 *   TARGET   the function attribute target (…) or nothing
 *   VL       floats per vector
 *   FWD_MB   most output channels per forward call (2·FWD_MB accumulators)
 *   REGS     vector registers (accumulators and operands must fit)
 *   DW_KB    most kernel columns per weight-gradient call
 * and the helpers conv-kernels.c's first comment names (STORE_FIRST …
 * RECIP); it undefines all of them at its end. Vectors are GCC's vector
 * extension; the file is compiled with -ffp-contract=fast so that
 * `acc += x * w` is one FMA. */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_ (a, b)
#define NAME(f) CAT (f, ISA)

typedef float NAME (vec) __attribute__ ((vector_size (VL * sizeof (float))));
/* The same, at any address. */
typedef float NAME (uvec) __attribute__ ((vector_size (VL * sizeof (float)), aligned (4)));

#define VEC NAME (vec)
#define LOAD(p) (*(const NAME (uvec) *) (p))
#define STORE(p, v) (*(NAME (uvec) *) (p) = (v))

typedef int NAME (ivec) __attribute__ ((vector_size (VL * sizeof (float))));
#define IVEC NAME (ivec)

/* a where mask, else b (mask: all ones or all zeros per lane) */
static inline __attribute__ ((always_inline)) TARGET VEC
NAME (select) (IVEC mask, VEC a, VEC b)
{
  return (VEC) (((IVEC) a & mask) | ((IVEC) b & ~mask));
}

/* e^x for x ≤ 0, as activation.c's expf_poly: x = n·ln 2 + r, a degree-6
 * polynomial of r, 2^n from the exponent bits. */
static inline __attribute__ ((always_inline)) TARGET VEC
NAME (exp_neg) (VEC x)
{
  const VEC lo = (VEC) { 0 } - 87.0f;
  x = NAME (select) (x < lo, lo, x);
  VEC t = x * 1.44269504f;
  VEC n = (t + 12582912.0f) - 12582912.0f;
  VEC r = (x - n * 0.693145752f) - n * 1.42860677e-6f;
  VEC p = 1.0f + r * (1.0f + r * (0.5f + r * (1.6666667e-1f + r * (4.1666668e-2f
          + r * (8.3333338e-3f + r * 1.3888889e-3f)))));
  IVEC e = (__builtin_convertvector (n, IVEC) + 127) << 23;
  return p * (VEC) e;
}

/* The activations of activation.c, on vectors. */
static inline __attribute__ ((always_inline)) TARGET VEC
NAME (activate) (CamlActivation act, VEC x)
{
  const VEC zero = { 0 };
  switch (act)
    {
    case CAML_ACT_RELU:
      return MAX0 (x);
    case CAML_ACT_SIGMOID:
      {
        VEC ax = (VEC) ((IVEC) x & 0x7fffffff);
        VEC e = NAME (exp_neg) (zero - ax);
        VEC r = RECIP (1.0f + e);
        return NAME (select) (x >= zero, r, e * r);
      }
    case CAML_ACT_TANH:
      {
        const float clamp = 7.90531110763549805f;
        VEC xc = NAME (select) (x > clamp, zero + clamp,
                                NAME (select) (x < -clamp, zero - clamp, x));
        VEC x2 = xc * xc;
        VEC p = zero - 2.76076847742355e-16f;
        p = p * x2 + 2.00018790482477e-13f;
        p = p * x2 - 8.60467152213735e-11f;
        p = p * x2 + 5.12229709037114e-08f;
        p = p * x2 + 1.48572235717979e-05f;
        p = p * x2 + 6.37261928875436e-04f;
        p = p * x2 + 4.89352455891786e-03f;
        VEC q = zero + 1.19825839466702e-06f;
        q = q * x2 + 1.18534705686654e-04f;
        q = q * x2 + 2.26843463243900e-03f;
        q = q * x2 + 4.89352518554385e-03f;
        VEC ax = (VEC) ((IVEC) x & 0x7fffffff);
        return NAME (select) (ax < 4e-4f, x, xc * p / q);
      }
    default:
      return x;
    }
}

/* Vector v (the v-th of a row block) into row p of `width` outputs. */
static inline __attribute__ ((always_inline)) TARGET void
NAME (put) (float *p, int v, VEC x, int width)
{
  int n = width - v * VL;
  if (n >= VL)
    STORE (p + v * VL, x);
  else if (n > 0)
    STORE_FIRST (p + v * VL, x, n);
}

/* Vector v of row p of `width` values, zeros past it. */
static inline __attribute__ ((always_inline)) TARGET VEC
NAME (get) (const float *p, int v, int width)
{
  int n = width - v * VL;
  if (n >= VL)
    return LOAD (p + v * VL);
  VEC x = { 0 };
  if (n > 0)
    LOAD_FIRST (x, p + v * VL, n);
  return x;
}

/* One row block of the output, x < width ≤ nv·VL, of mb channels:
 *   y[m][x] = Σ_c Σ_ki Σ_kj w[m·ws + (c·k + ki)·k + kj] · plane[c·ps + ki·wp + kj + x]
 * (reading plane up to x = nv·VL − 1), stored as t says (layers.h). */
static inline __attribute__ ((always_inline)) TARGET void
NAME (fwd_body) (const CamlConvTile *t, int width, const float *plane, int wp, size_t ps,
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

  const size_t os = t->os;
  int values = mb;
  VEC chi[2] = { { 0 }, { 0 } };
  switch (t->store)
    {
    case CAML_CONV_STORE_RAW:
#pragma GCC unroll 16
      for (int m = 0; m < mb; m++)
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++)
          NAME (put) (t->out + m * os, v, acc[m][v], width);
      return;
    case CAML_CONV_STORE_ACT:
#pragma GCC unroll 16
      for (int m = 0; m < mb; m++)
        {
          float b = t->b != NULL ? t->b[m] : 0.0f;
#pragma GCC unroll 2
          for (int v = 0; v < nv; v++)
            NAME (put) (t->out + m * os, v, NAME (activate) (t->act, acc[m][v] + b), width);
        }
      return;
    case CAML_CONV_STORE_GATE:
#pragma GCC unroll 2
      for (int v = 0; v < nv; v++)
        NAME (put) (t->chi, v, NAME (activate) (CAML_ACT_SIGMOID, acc[0][v] + t->b_chi),
                    width);
      return;
    case CAML_CONV_STORE_MIX:
#pragma GCC unroll 2
      for (int v = 0; v < nv; v++)
        chi[v] = NAME (get) (t->chi, v, width);
      break;
    case CAML_CONV_STORE_GATED:
      values = mb - 1;
#pragma GCC unroll 2
      for (int v = 0; v < nv; v++)
        {
          chi[v] = NAME (activate) (CAML_ACT_SIGMOID, acc[mb - 1][v] + t->b_chi);
          NAME (put) (t->chi, v, chi[v], width);
        }
      break;
    }
  /* the values and their mix with w0 */
#pragma GCC unroll 16
  for (int m = 0; m < values; m++)
    {
      float b = t->b[m], w0 = t->w0[m];
#pragma GCC unroll 2
      for (int v = 0; v < nv; v++)
        {
          VEC val = NAME (activate) (t->act, acc[m][v] + b);
          NAME (put) (t->v + m * os, v, val, width);
          NAME (put) (t->out + m * os, v, chi[v] * (val - w0) + w0, width);
        }
    }
}

/* Every row block of `rows` rows of `cols` outputs: the tile's pointers at
 * the first, each row cols floats after the one before, the planes' rows wp
 * apart. */
#define FWD(MB, NV)                                                                     \
  static TARGET void                                                                    \
  NAME (fwd_##MB##_##NV) (const CamlConvTile *tile, int rows, int cols,                 \
                          const float *plane, int wp, size_t ps, int channels, int k,   \
                          const float *w, size_t ws)                                    \
  {                                                                                     \
    for (int y = 0; y < rows; y++)                                                      \
      for (int x0 = 0; x0 < cols; x0 += NV * VL)                                        \
        {                                                                               \
          size_t at = (size_t) y * cols + x0;                                           \
          CamlConvTile t = *tile;                                                       \
          t.out += at;                                                                  \
          if (t.v != NULL)                                                              \
            t.v += at;                                                                  \
          if (t.chi != NULL)                                                            \
            t.chi += at;                                                                \
          NAME (fwd_body) (&t, MIN (NV * VL, cols - x0), plane + (size_t) y * wp + x0,  \
                           wp, ps, channels, k, w, ws, MB, NV);                         \
        }                                                                               \
  }
#define FWD_BOTH(MB) FWD (MB, 1) FWD (MB, 2)

/* The weight-gradient kernel (layers.h, CamlConvDwKernel): mb channels ×
 * kb columns of accumulators; per step each channel's dy vector (at any
 * address: shifted by ki·OW) and each column's input vector (whole and
 * aligned) is loaded once. */
static inline __attribute__ ((always_inline)) TARGET void
NAME (dw_body) (float *acc, size_t ams, const float *dy, size_t dms, const float *xs,
                size_t ks, int steps, const int mb, const int kb)
{
  VEC a[REGS];
#pragma GCC unroll 24
  for (int m = 0; m < mb; m++)
#pragma GCC unroll 8
    for (int kj = 0; kj < kb; kj++)
      a[m * kb + kj] = LOAD (acc + (size_t) m * ams + (size_t) kj * VL);
  for (int s = 0; s < steps; s++, dy += VL, xs += VL)
    {
      VEC g[REGS];
#pragma GCC unroll 24
      for (int m = 0; m < mb; m++)
        g[m] = LOAD (dy + m * dms);
#pragma GCC unroll 8
      for (int kj = 0; kj < kb; kj++)
        {
          VEC x = *(const VEC *) (xs + kj * ks);
          /* one load for all mb products: folded into each FMA, the load
           * would be repeated mb times */
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

/* layers.h, CamlConvPackRows: whole vectors of each row, the last one's
 * overrun covered by the next row or the zeros after. */
static TARGET void
NAME (pack_rows) (float *xs, size_t ks, const float *plane, int rows, int wp, int ow, int k)
{
  for (int kj = 0; kj < k; kj++)
    {
      float *dst = xs + (size_t) kj * ks;
      for (int r = 0; r < rows; r++)
        {
          const float *src = plane + (size_t) r * wp + kj;
          float *d = dst + (size_t) r * ow;
          for (int x = 0; x < ow; x += VL)
            STORE (d + x, LOAD (src + x));
        }
      for (size_t q = (size_t) rows * ow; q < ks; q++)
        dst[q] = 0.0f;
    }
}

/* Int vectors at any address, for the max pool's indices. */
typedef int NAME (uivec) __attribute__ ((vector_size (VL * sizeof (int)), aligned (4)));

/* The first n lanes of x to p (all of them when n ≥ VL), nothing past. */
static inline __attribute__ ((always_inline)) TARGET void
NAME (put_int) (int *p, IVEC x, int n)
{
  if (n >= VL)
    *(NAME (uivec) *) p = x;
  else if (n > 0)
    STORE_FIRST_INT (p, x, n);
}

/* The first n lanes from p (zeros past), nothing read past. */
static inline __attribute__ ((always_inline)) TARGET IVEC
NAME (get_int) (const int *p, int n)
{
  if (n >= VL)
    return *(const NAME (uivec) *) p;
  IVEC x = { 0 };
  if (n > 0)
    LOAD_FIRST_INT (x, p, n);
  return x;
}

/* layers.h, CamlPool2Kernel: even and odd columns of the two rows by
 * shuffles, the maximum and its index by selects (ties go to the first in
 * the window's row-major order, as the scalar loop's strict >). */
static TARGET void
NAME (pool2) (float *o, int *a, const float *r0, int at0, int w, int n)
{
  const IVEC evens = { EVENS };
  const float *r1 = r0 + w;
  for (int x = 0; x < n; x += VL)
    {
      int cols = 2 * MIN (VL, n - x);
      const float *p0 = r0 + 2 * x, *p1 = r1 + 2 * x;
      VEC a0 = NAME (get) (p0, 0, cols), a1 = NAME (get) (p0, 1, cols);
      VEC b0 = NAME (get) (p1, 0, cols), b1 = NAME (get) (p1, 1, cols);
      VEC v1 = __builtin_shufflevector (a0, a1, ODDS);
      VEC v2 = __builtin_shufflevector (b0, b1, EVENS), v3 = __builtin_shufflevector (b0, b1, ODDS);
      VEC best = __builtin_shufflevector (a0, a1, EVENS);
      IVEC base = evens + (at0 + 2 * x), at = base, c;
      c = v1 > best;
      at = (c & (base + 1)) | (~c & at);
      best = NAME (select) (c, v1, best);
      c = v2 > best;
      at = (c & (base + w)) | (~c & at);
      best = NAME (select) (c, v2, best);
      c = v3 > best;
      at = (c & (base + w + 1)) | (~c & at);
      best = NAME (select) (c, v3, best);
      NAME (put) (o + x, 0, best, n - x);
      NAME (put_int) (a + x, at, n - x);
    }
}

/* layers.h, CamlUnpool2Kernel: each window's four cells, the gradient
 * where the index points and zero elsewhere, interleaved back into the
 * rows. */
static TARGET void
NAME (unpool2) (float *d0, const float *g, const int *a, int at0, int w, int n)
{
  const IVEC evens = { EVENS };
  const VEC zero = { 0 };
  float *d1 = d0 + w;
  for (int x = 0; x < n; x += VL)
    {
      int m = MIN (VL, n - x);
      VEC gv = NAME (get) (g + x, 0, m);
      IVEC at = NAME (get_int) (a + x, m), base = evens + (at0 + 2 * x);
      VEC v0 = NAME (select) (at == base, gv, zero), v1 = NAME (select) (at == base + 1, gv, zero);
      VEC v2 = NAME (select) (at == base + w, gv, zero);
      VEC v3 = NAME (select) (at == base + w + 1, gv, zero);
      NAME (put) (d0 + 2 * x, 0, __builtin_shufflevector (v0, v1, LOW_HALVES), 2 * m);
      NAME (put) (d0 + 2 * x, 1, __builtin_shufflevector (v0, v1, HIGH_HALVES), 2 * m);
      NAME (put) (d1 + 2 * x, 0, __builtin_shufflevector (v2, v3, LOW_HALVES), 2 * m);
      NAME (put) (d1 + 2 * x, 1, __builtin_shufflevector (v2, v3, HIGH_HALVES), 2 * m);
    }
}

/* Output channels per weight-gradient call of KB columns: KB + 1 vectors
 * each (accumulators and its gradient) and one for the input. */
#define DW_MB(KB) ((REGS - 1) / ((KB) + 1))

#define DW(KB, MB)                                                                      \
  static TARGET void                                                                    \
  NAME (dw_##KB##_##MB) (float *acc, size_t ams, const float *dy, size_t dms,           \
                         const float *xs, size_t ks, int steps)                         \
  {                                                                                     \
    NAME (dw_body) (acc, ams, dy, dms, xs, ks, steps, MB, KB);                          \
  }

FWD_BOTH (1) FWD_BOTH (2) FWD_BOTH (3) FWD_BOTH (4) FWD_BOTH (5) FWD_BOTH (6)
#if FWD_MB > 6
FWD_BOTH (7) FWD_BOTH (8) FWD_BOTH (9) FWD_BOTH (10) FWD_BOTH (11) FWD_BOTH (12)
#endif
/* every kernel width KB with every channel count up to DW_MB (KB) */
#if REGS == 32 && DW_KB == 8
DW (1, 1) DW (1, 2) DW (1, 3) DW (1, 4) DW (1, 5) DW (1, 6) DW (1, 7) DW (1, 8) DW (1, 9) DW (1, 10) DW (1, 11) DW (1, 12) DW (1, 13) DW (1, 14) DW (1, 15)
DW (2, 1) DW (2, 2) DW (2, 3) DW (2, 4) DW (2, 5) DW (2, 6) DW (2, 7) DW (2, 8) DW (2, 9) DW (2, 10)
DW (3, 1) DW (3, 2) DW (3, 3) DW (3, 4) DW (3, 5) DW (3, 6) DW (3, 7)
DW (4, 1) DW (4, 2) DW (4, 3) DW (4, 4) DW (4, 5) DW (4, 6)
DW (5, 1) DW (5, 2) DW (5, 3) DW (5, 4) DW (5, 5)
DW (6, 1) DW (6, 2) DW (6, 3) DW (6, 4)
DW (7, 1) DW (7, 2) DW (7, 3)
DW (8, 1) DW (8, 2) DW (8, 3)
#elif REGS == 16 && DW_KB == 4
DW (1, 1) DW (1, 2) DW (1, 3) DW (1, 4) DW (1, 5) DW (1, 6) DW (1, 7)
DW (2, 1) DW (2, 2) DW (2, 3) DW (2, 4) DW (2, 5)
DW (3, 1) DW (3, 2) DW (3, 3)
DW (4, 1) DW (4, 2) DW (4, 3)
#else
#error "list the weight-gradient kernels of this register count"
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
#if REGS == 32
  .dw_mb = { 0, DW_MB (1), DW_MB (2), DW_MB (3), DW_MB (4), DW_MB (5), DW_MB (6), DW_MB (7),
             DW_MB (8) },
  .dw = {
    { NULL },
    { NULL, NAME (dw_1_1), NAME (dw_1_2), NAME (dw_1_3), NAME (dw_1_4), NAME (dw_1_5), NAME (dw_1_6), NAME (dw_1_7), NAME (dw_1_8), NAME (dw_1_9), NAME (dw_1_10), NAME (dw_1_11), NAME (dw_1_12), NAME (dw_1_13), NAME (dw_1_14), NAME (dw_1_15) },
    { NULL, NAME (dw_2_1), NAME (dw_2_2), NAME (dw_2_3), NAME (dw_2_4), NAME (dw_2_5), NAME (dw_2_6), NAME (dw_2_7), NAME (dw_2_8), NAME (dw_2_9), NAME (dw_2_10) },
    { NULL, NAME (dw_3_1), NAME (dw_3_2), NAME (dw_3_3), NAME (dw_3_4), NAME (dw_3_5), NAME (dw_3_6), NAME (dw_3_7) },
    { NULL, NAME (dw_4_1), NAME (dw_4_2), NAME (dw_4_3), NAME (dw_4_4), NAME (dw_4_5), NAME (dw_4_6) },
    { NULL, NAME (dw_5_1), NAME (dw_5_2), NAME (dw_5_3), NAME (dw_5_4), NAME (dw_5_5) },
    { NULL, NAME (dw_6_1), NAME (dw_6_2), NAME (dw_6_3), NAME (dw_6_4) },
    { NULL, NAME (dw_7_1), NAME (dw_7_2), NAME (dw_7_3) },
    { NULL, NAME (dw_8_1), NAME (dw_8_2), NAME (dw_8_3) },
  },
#else
  .dw_mb = { 0, DW_MB (1), DW_MB (2), DW_MB (3), DW_MB (4) },
  .dw = {
    { NULL },
    { NULL, NAME (dw_1_1), NAME (dw_1_2), NAME (dw_1_3), NAME (dw_1_4), NAME (dw_1_5), NAME (dw_1_6), NAME (dw_1_7) },
    { NULL, NAME (dw_2_1), NAME (dw_2_2), NAME (dw_2_3), NAME (dw_2_4), NAME (dw_2_5) },
    { NULL, NAME (dw_3_1), NAME (dw_3_2), NAME (dw_3_3) },
    { NULL, NAME (dw_4_1), NAME (dw_4_2), NAME (dw_4_3) },
  },
#endif
  .pack_rows = NAME (pack_rows),
  .pool2 = NAME (pool2),
  .unpool2 = NAME (unpool2),
};

#undef VEC
#undef IVEC
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
/* the includer's parameters */
#undef ISA
#undef ISA_NAME
#undef TARGET
#undef VL
#undef FWD_MB
#undef REGS
#undef DW_KB
#undef STORE_FIRST
#undef LOAD_FIRST
#undef STORE_FIRST_INT
#undef LOAD_FIRST_INT
#undef EVENS
#undef ODDS
#undef LOW_HALVES
#undef HIGH_HALVES
#undef MAX0
#undef RECIP
