/* activation.c — element-wise activations, forward and backward. */
#include <math.h>

#include "caml-private.h"
#include "vectorize.h"

const char *const caml_activation_names[] = {
  "identity", "tanh", "relu", "sigmoid", NULL
};

float
caml_sigmoidf (float x)
{
  /* Two branches keep exp() from overflowing for large |x|. */
  if (x >= 0.0f)
    return 1.0f / (1.0f + expf (-x));
  float e = expf (x);
  return e / (1.0f + e);
}

/* e^x for x ≤ 0 in plain float arithmetic (vectorisable): x = n·ln 2 + r,
 * |r| ≤ ln 2 / 2, e^r by its degree-6 Taylor polynomial (relative error
 * below 2e-7), 2^n from the exponent bits. Underflows to 0 below −87. */
static inline float
expf_poly (float x)
{
  x = x < -87.0f ? -87.0f : x;
  float t = x * 1.44269504f;                       /* x / ln 2 */
  float n = (t + 12582912.0f) - 12582912.0f;       /* round to nearest */
  float r = (x - n * 0.693145752f) - n * 1.42860677e-6f;   /* ln 2 in two parts */
  float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.6666667e-1f + r * (4.1666668e-2f
            + r * (8.3333338e-3f + r * 1.3888889e-3f)))));
  union { guint32 i; float f; } scale = { .i = (guint32) ((int32_t) n + 127) << 23 };
  return p * scale.f;
}

/* tanh in plain float arithmetic (vectorisable; libm's tanhf is not, and
 * was most of a recurrent layer's time): Eigen's rational approximation
 * (generic_fast_tanh_float), a degree-13 odd polynomial over a degree-6 even
 * one on x clamped to ±7.9053 (where tanh rounds to ±1 in float), and x
 * itself below 4e-4. Relative error below 4e-7 over the whole line
 * (tests/test-layers.c checks it against tanh in double). */
static inline float
tanhf_rational (float x)
{
  const float clamp = 7.90531110763549805f;
  float xc = x > clamp ? clamp : (x < -clamp ? -clamp : x);
  float x2 = xc * xc;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 - 8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  float r = xc * p / q;
  return fabsf (x) < 4e-4f ? x : r;
}

static CAML_VECTOR_LOOP void
activation_forward_loops (CamlActivation act, float *y, const float *x, size_t n)
{
  switch (act)
    {
    case CAML_ACT_IDENTITY:
      if (y != x)
        memcpy (y, x, n * sizeof *y);
      break;
    case CAML_ACT_TANH:
#pragma GCC ivdep
      for (size_t i = 0; i < n; i++)
        y[i] = tanhf_rational (x[i]);
      break;
    case CAML_ACT_RELU:
      /* in place (y == x) is fine: ivdep keeps the loop vectorised */
#pragma GCC ivdep
      for (size_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
      break;
    case CAML_ACT_SIGMOID:
      /* σ(x) = 1 / (1 + e^−x) with e^−|x| from expf_poly, which vectorises
       * (libm's expf does not); for x < 0, σ(x) = e^x / (1 + e^x). */
#pragma GCC ivdep
      for (size_t i = 0; i < n; i++)
        {
          float e = expf_poly (-fabsf (x[i]));
          float r = 1.0f / (1.0f + e);
          y[i] = x[i] >= 0.0f ? r : e * r;
        }
      break;
    default:
      g_assert_not_reached ();
    }
}

/* The loops above, for the instruction set the CPU has (vectorize.h: a
 * public function calls a static clone, which every compiler links). */
void
caml_activation_forward (CamlActivation act, float *y, const float *x, size_t n)
{
  activation_forward_loops (act, y, x, n);
}

/* One loop per case and mode, so that each one vectorises. Every i reads
 * only index i, so in place (dx == dy) is fine: ivdep says so to the
 * vectoriser, which would otherwise fall back to scalar code on the overlap.
 * (dx may hold garbage when not accumulating: it is never read then.) */
#define ACT_BACKWARD_LOOP(expr)                       \
  do {                                                \
    if (accumulate)                                   \
      _Pragma ("GCC ivdep")                           \
      for (size_t i = 0; i < n; i++)                  \
        dx[i] += (expr);                              \
    else                                              \
      _Pragma ("GCC ivdep")                           \
      for (size_t i = 0; i < n; i++)                  \
        dx[i] = (expr);                               \
  } while (0)

static inline float
relu_pass (float g, float y)
{
  return y > 0.0f ? g : 0.0f;
}

static CAML_VECTOR_LOOP void
activation_backward_loops (CamlActivation act, float *dx, const float *dy,
                          const float *y, size_t n, gboolean accumulate)
{
  switch (act)
    {
    case CAML_ACT_IDENTITY:
      ACT_BACKWARD_LOOP (dy[i]);
      break;
    case CAML_ACT_TANH:
      ACT_BACKWARD_LOOP (dy[i] * (1.0f - y[i] * y[i]));
      break;
    case CAML_ACT_RELU:
      /* relu_pass reads dy[i] whatever y[i] is, so the select vectorises (a
       * load under the condition kept it a scalar loop with a branch that
       * the signs of a relu layer make unpredictable: 5× slower) */
      ACT_BACKWARD_LOOP (relu_pass (dy[i], y[i]));
      break;
    case CAML_ACT_SIGMOID:
      ACT_BACKWARD_LOOP (dy[i] * y[i] * (1.0f - y[i]));
      break;
    default:
      g_assert_not_reached ();
    }
}

/* The loops above, for the instruction set the CPU has (vectorize.h: a
 * public function calls a static clone, which every compiler links). */
void
caml_activation_backward (CamlActivation act, float *dx, const float *dy,
                          const float *y, size_t n, gboolean accumulate)
{
  activation_backward_loops (act, dx, dy, y, n, accumulate);
}
