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
      for (size_t i = 0; i < n; i++)
        y[i] = tanhf (x[i]);
      break;
    case CAML_ACT_RELU:
      for (size_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
      break;
    case CAML_ACT_SIGMOID:
      for (size_t i = 0; i < n; i++)
        y[i] = caml_sigmoidf (x[i]);
      break;
    default:
      g_assert_not_reached ();
    }
}

void
caml_activation_backward (CamlActivation act, float *dx, const float *dy,
                          const float *y, size_t n, gboolean accumulate)
{
  for (size_t i = 0; i < n; i++)
    {
      float d;
      switch (act)
        {
        case CAML_ACT_IDENTITY: d = dy[i]; break;
        case CAML_ACT_TANH:     d = dy[i] * (1.0f - y[i] * y[i]); break;
        case CAML_ACT_RELU:     d = y[i] > 0.0f ? dy[i] : 0.0f; break;
        case CAML_ACT_SIGMOID:  d = dy[i] * y[i] * (1.0f - y[i]); break;
        default: g_assert_not_reached ();
        }
      dx[i] = accumulate ? dx[i] + d : d;
    }
}
