/* loss.c — losses: value and gradient with respect to the predictions. */
#include <math.h>

#include "caml-private.h"

const char *const caml_loss_names[] = {
  "mse", "softmax_cross_entropy", "sigmoid_cross_entropy", NULL
};

int
caml_loss_target_width (CamlLossKind kind, int d)
{
  return kind == CAML_LOSS_SOFTMAX_XENT ? 1 : d;
}

void
caml_loss_predict (CamlLossKind kind, float *values, size_t n)
{
  if (kind == CAML_LOSS_SIGMOID_XENT)
    for (size_t i = 0; i < n; i++)
      values[i] = caml_sigmoidf (values[i]);
}

double
caml_loss_compute_part (CamlLossKind kind, float *dpred, const float *pred,
                        const float *target, int n, int d, int batch)
{
  double total = 0.0;
  switch (kind)
    {
    case CAML_LOSS_MSE:
      {
        float scale = 2.0f / ((float) batch * d);
        for (size_t i = 0; i < (size_t) n * d; i++)
          {
            float e = pred[i] - target[i];
            total += (double) e * e;
            if (dpred)
              dpred[i] = scale * e;
          }
        return total / ((double) batch * d);
      }
    case CAML_LOSS_SOFTMAX_XENT:
      for (int i = 0; i < n; i++)
        {
          const float *z = pred + (size_t) i * d;
          int label = (int) target[i];
          float zmax = z[0];
          for (int j = 1; j < d; j++)
            zmax = fmaxf (zmax, z[j]);
          double sum = 0.0;
          for (int j = 0; j < d; j++)
            sum += exp ((double) (z[j] - zmax));
          double log_sum = log (sum) + zmax;
          total += log_sum - z[label];
          if (dpred)
            for (int j = 0; j < d; j++)
              {
                double p = exp ((double) z[j] - log_sum);
                dpred[(size_t) i * d + j] = (float) ((p - (j == label)) / batch);
              }
        }
      return total / batch;
    case CAML_LOSS_SIGMOID_XENT:
      {
        /* max(z, 0) − z·y + log(1 + e^−|z|), stable for any z. */
        float scale = 1.0f / ((float) batch * d);
        for (size_t i = 0; i < (size_t) n * d; i++)
          {
            float z = pred[i], y = target[i];
            total += fmax (z, 0.0) - (double) z * y + log1p (exp (-fabs ((double) z)));
            if (dpred)
              dpred[i] = scale * (caml_sigmoidf (z) - y);
          }
        return total / ((double) batch * d);
      }
    default:
      g_assert_not_reached ();
    }
}

/* pred (N, D); target (N, target_width); dpred (N, D) or NULL. */
float
caml_loss_compute (CamlLossKind kind, float *dpred, const float *pred,
                   const float *target, int n, int d)
{
  return (float) caml_loss_compute_part (kind, dpred, pred, target, n, d, n);
}
