/* activation.c — element-wise activations, forward and backward. */
#include <math.h>

#include "caml.h"

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

void
caml_activation_forward (CamlActivation act, float *y, const float *x, size_t n)
{
  switch (act)
    {
    case CAML_ACT_IDENTITY:
      if (y != x)
        memcpy (y, x, n * sizeof *y);
      break;
    case CAML_ACT_TANH:
      /* tanh |x| = (1 − e^−2|x|) / (1 + e^−2|x|) with e^−2|x| from expf_poly,
       * which vectorises (libm's tanhf does not); below |x| = 0.25, where
       * 1 − e^−2|x| would cancel, the odd Taylor polynomial to x⁹ (its
       * relative error there is below 1e-8). */
#pragma GCC ivdep
      for (size_t i = 0; i < n; i++)
        {
          float a = fabsf (x[i]), a2 = a * a;
          float e = expf_poly (-2.0f * a);
          float large = (1.0f - e) / (1.0f + e);
          float small = a * (1.0f + a2 * (-1.0f / 3.0f + a2 * (2.0f / 15.0f
                        + a2 * (-17.0f / 315.0f + a2 * (62.0f / 2835.0f)))));
          y[i] = copysignf (a < 0.25f ? small : large, x[i]);
        }
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

void
caml_activation_backward (CamlActivation act, float *dx, const float *dy,
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
      ACT_BACKWARD_LOOP (y[i] > 0.0f ? dy[i] : 0.0f);
      break;
    case CAML_ACT_SIGMOID:
      ACT_BACKWARD_LOOP (dy[i] * y[i] * (1.0f - y[i]));
      break;
    default:
      g_assert_not_reached ();
    }
}
