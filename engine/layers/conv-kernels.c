/* conv-kernels.c — the engine's direct convolution kernels, one set per
 * instruction set (conv-kernels-body.h), and the choice among them by what
 * the CPU can do (caml_conv_kernels). */
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "layers.h"

#if defined(__x86_64__) && !defined(CAML_KERNELS_GENERIC_ONLY)
#define CAML_KERNELS_X86 1
#endif

/* STORE_FIRST (p, v, n): the first n (< VL) lanes of v to p, nothing past;
 * LOAD_FIRST (x, p, n): the first n lanes of x from p (the others zero),
 * nothing read past; the same of ints: STORE_FIRST_INT, LOAD_FIRST_INT.
 * EVENS, ODDS: the lanes of two vectors (__builtin_shufflevector, which
 * GCC ≥ 12 and clang share) that are even (odd); LOW_HALVES, HIGH_HALVES:
 * the lanes interleaving their lower (upper) halves. MAX0 (x): x where x > 0, else 0 (NaN too), as
 * activation.c's relu; RECIP (d): 1 / d within an ulp or so (d ≥ 1). */

#if CAML_KERNELS_X86

/* 1 / d: 14 bits, then a Newton step; cheaper than a division, which
 * takes the port of one of the two FMA units for a dozen cycles */
typedef float recip_vec __attribute__ ((vector_size (64)));
static inline __attribute__ ((always_inline, target ("avx512f,fma"))) recip_vec
recip_avx512 (recip_vec d)
{
  recip_vec r = (recip_vec) _mm512_rcp14_ps ((__m512) d);
  return r * (2.0f - d * r);
}

#define ISA avx512
#define ISA_NAME "AVX-512"
#define TARGET __attribute__ ((target ("avx512f,fma")))
#define VL 16
#define FWD_MB 12
#define REGS 32
#define DW_KB 8
#define STORE_FIRST(p, v, n) _mm512_mask_storeu_ps ((p), (__mmask16) ((1u << (n)) - 1), (__m512) (v))
#define LOAD_FIRST(x, p, n) ((x) = (vec_avx512) _mm512_maskz_loadu_ps ((__mmask16) ((1u << (n)) - 1), (p)))
#define STORE_FIRST_INT(p, v, n) \
  _mm512_mask_storeu_epi32 ((p), (__mmask16) ((1u << (n)) - 1), (__m512i) (v))
#define LOAD_FIRST_INT(x, p, n) \
  ((x) = (ivec_avx512) _mm512_maskz_loadu_epi32 ((__mmask16) ((1u << (n)) - 1), (p)))
#define EVENS 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define ODDS 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#define LOW_HALVES 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23
#define HIGH_HALVES 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31
/* maxps returns its second operand when either is NaN */
#define MAX0(x) ((vec_avx512) _mm512_max_ps ((__m512) (x), _mm512_setzero_ps ()))
#define RECIP(d) recip_avx512 (d)
#include "conv-kernels-body.h"

#define ISA avx2
#define ISA_NAME "AVX2"
#define TARGET __attribute__ ((target ("avx2,fma")))
#define VL 8
#define FWD_MB 6
#define REGS 16
#define DW_KB 4
static const int avx2_first[16] = { -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0 };
#define STORE_FIRST(p, v, n) \
  _mm256_maskstore_ps ((p), _mm256_loadu_si256 ((const __m256i *) (avx2_first + 8 - (n))), (__m256) (v))
#define LOAD_FIRST(x, p, n) \
  ((x) = (vec_avx2) _mm256_maskload_ps ((p), _mm256_loadu_si256 ((const __m256i *) (avx2_first + 8 - (n)))))
#define STORE_FIRST_INT(p, v, n) \
  _mm256_maskstore_epi32 ((p), _mm256_loadu_si256 ((const __m256i *) (avx2_first + 8 - (n))), (__m256i) (v))
#define LOAD_FIRST_INT(x, p, n) \
  ((x) = (ivec_avx2) _mm256_maskload_epi32 ((p), _mm256_loadu_si256 ((const __m256i *) (avx2_first + 8 - (n)))))
#define EVENS 0, 2, 4, 6, 8, 10, 12, 14
#define ODDS 1, 3, 5, 7, 9, 11, 13, 15
#define LOW_HALVES 0, 8, 1, 9, 2, 10, 3, 11
#define HIGH_HALVES 4, 12, 5, 13, 6, 14, 7, 15
#define MAX0(x) ((vec_avx2) _mm256_max_ps ((__m256) (x), _mm256_setzero_ps ()))
#define RECIP(d) (1.0f / (d))
#include "conv-kernels-body.h"

#endif

/* What every compiler for every CPU can build: 4-float vectors (SSE2 on
 * x86-64, NEON or scalar code elsewhere). */
#define ISA base
#if defined(__x86_64__)
#define ISA_NAME "SSE2"
#else
#define ISA_NAME "generic"
#endif
#define TARGET
#define VL 4
#define FWD_MB 6
#define REGS 16
#define DW_KB 4
#define STORE_FIRST(p, v, n) do { for (int l_ = 0; l_ < (n); l_++) (p)[l_] = (v)[l_]; } while (0)
#define LOAD_FIRST(x, p, n) do { for (int l_ = 0; l_ < (n); l_++) (x)[l_] = (p)[l_]; } while (0)
#define STORE_FIRST_INT STORE_FIRST
#define LOAD_FIRST_INT LOAD_FIRST
#define EVENS 0, 2, 4, 6
#define ODDS 1, 3, 5, 7
#define LOW_HALVES 0, 4, 1, 5
#define HIGH_HALVES 2, 6, 3, 7
#define MAX0(x) ((VEC) ((IVEC) (x) & ((x) > (VEC) { 0 })))
#define RECIP(d) (1.0f / (d))
#include "conv-kernels-body.h"

static const CamlConvKernels *
best (void)
{
#if CAML_KERNELS_X86
  __builtin_cpu_init ();
  if (__builtin_cpu_supports ("avx512f"))
    return &kernels_avx512;
  if (__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma"))
    return &kernels_avx2;
#endif
  return &kernels_base;
}

static const CamlConvKernels *forced;   /* atomic pointer: caml_conv_kernels_force */

const CamlConvKernels *
caml_conv_kernels (void)
{
  const CamlConvKernels *k = g_atomic_pointer_get (&forced);
  return k != NULL ? k : best ();
}

gboolean
caml_conv_kernels_force (const char *isa)
{
  const CamlConvKernels *sets[] = {
#if CAML_KERNELS_X86
    &kernels_avx512, &kernels_avx2,
#endif
    &kernels_base,
  };
  if (isa == NULL)
    {
      g_atomic_pointer_set (&forced, NULL);
      return TRUE;
    }
  /* A set can run where it is the best or anything better is. */
  gboolean runs = FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (sets); i++)
    {
      runs = runs || sets[i] == best ();
      if (g_strcmp0 (sets[i]->isa, isa) == 0)
        {
          if (!runs)
            return FALSE;
          g_atomic_pointer_set (&forced, sets[i]);
          return TRUE;
        }
    }
  return FALSE;
}

const char *
caml_kernels_isa (void)
{
  return caml_conv_kernels ()->isa;
}
