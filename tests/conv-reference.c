/* conv-reference.c — a naive direct convolution, the test reference for the
 * engine's im2col + sgemm kernels. Loops only; nothing shared with the engine. */
#include <math.h>
#include <string.h>

#include "conv-reference.h"

void
caml_ref_conv_init (CamlRefConv *r, int n, int c, int h, int w, int m, int k,
                    int stride, gboolean same)
{
  *r = (CamlRefConv) { .n = n, .c = c, .h = h, .w = w, .m = m, .k = k, .stride = stride };
  if (same)
    {
      r->oh = (int) ceil ((double) h / stride);
      r->ow = (int) ceil ((double) w / stride);
      int th = (r->oh - 1) * stride + k - h, tw = (r->ow - 1) * stride + k - w;
      r->pad_top = th > 0 ? th / 2 : 0;
      r->pad_left = tw > 0 ? tw / 2 : 0;
    }
  else
    {
      r->oh = (h - k) / stride + 1;
      r->ow = (w - k) / stride + 1;
    }
}

size_t
caml_ref_conv_out_size (const CamlRefConv *r)
{
  return (size_t) r->n * r->m * r->oh * r->ow;
}

size_t
caml_ref_conv_in_size (const CamlRefConv *r)
{
  return (size_t) r->n * r->c * r->h * r->w;
}

#define IN(i, c, y, x)  ((((size_t) (i) * r->c + (c)) * r->h + (y)) * r->w + (x))
#define OUT(i, j, y, x) ((((size_t) (i) * r->m + (j)) * r->oh + (y)) * r->ow + (x))
#define WT(j, c, a, b)  ((((size_t) (j) * r->c + (c)) * r->k + (a)) * r->k + (b))

void
caml_ref_conv_forward (const CamlRefConv *r, double *y, const float *inp, const float *W)
{
  for (int i = 0; i < r->n; i++)
    for (int j = 0; j < r->m; j++)
      for (int oy = 0; oy < r->oh; oy++)
        for (int ox = 0; ox < r->ow; ox++)
          {
            double s = 0.0;
            for (int c = 0; c < r->c; c++)
              for (int a = 0; a < r->k; a++)
                for (int b = 0; b < r->k; b++)
                  {
                    int iy = oy * r->stride + a - r->pad_top;
                    int ix = ox * r->stride + b - r->pad_left;
                    if (iy >= 0 && iy < r->h && ix >= 0 && ix < r->w)
                      s += (double) W[WT (j, c, a, b)] * inp[IN (i, c, iy, ix)];
                  }
            y[OUT (i, j, oy, ox)] = s;
          }
}

void
caml_ref_conv_backward (const CamlRefConv *r, double *dinp, double *dW,
                        const double *dy, const float *inp, const float *W)
{
  for (int i = 0; i < r->n; i++)
    for (int j = 0; j < r->m; j++)
      for (int oy = 0; oy < r->oh; oy++)
        for (int ox = 0; ox < r->ow; ox++)
          {
            double g = dy[OUT (i, j, oy, ox)];
            for (int c = 0; c < r->c; c++)
              for (int a = 0; a < r->k; a++)
                for (int b = 0; b < r->k; b++)
                  {
                    int iy = oy * r->stride + a - r->pad_top;
                    int ix = ox * r->stride + b - r->pad_left;
                    if (iy < 0 || iy >= r->h || ix < 0 || ix >= r->w)
                      continue;
                    if (dW != NULL)
                      dW[WT (j, c, a, b)] += g * inp[IN (i, c, iy, ix)];
                    if (dinp != NULL)
                      dinp[IN (i, c, iy, ix)] += g * W[WT (j, c, a, b)];
                  }
          }
}

double
caml_ref_act (CamlActivation act, double x)
{
  switch (act)
    {
    case CAML_ACT_TANH:    return tanh (x);
    case CAML_ACT_RELU:    return x > 0 ? x : 0;
    case CAML_ACT_SIGMOID: return 1.0 / (1.0 + exp (-x));
    default:               return x;
    }
}

double
caml_ref_act_grad (CamlActivation act, double y)
{
  switch (act)
    {
    case CAML_ACT_TANH:    return 1.0 - y * y;
    case CAML_ACT_RELU:    return y > 0 ? 1.0 : 0.0;
    case CAML_ACT_SIGMOID: return y * (1.0 - y);
    default:               return 1.0;
    }
}

/* The gate as a one-channel convolution with filter u. */
static CamlRefConv
gate_conv (const CamlRefConv *r)
{
  CamlRefConv g = *r;
  g.m = 1;
  return g;
}

void
caml_ref_ca_cnn_forward (const CamlRefConv *r, CamlActivation act,
                         const CamlRefCaCnnParams *p, double *out, double *chi,
                         const float *inp)
{
  CamlRefConv g = gate_conv (r);
  size_t P = (size_t) r->oh * r->ow;
  double *y = g_new (double, caml_ref_conv_out_size (r));
  caml_ref_conv_forward (r, y, inp, p->W);
  caml_ref_conv_forward (&g, chi, inp, p->u);
  for (int i = 0; i < r->n; i++)
    for (size_t q = 0; q < P; q++)
      {
        double x = 1.0 / (1.0 + exp (-(chi[i * P + q] + p->b_chi[0])));
        chi[i * P + q] = x;
        for (int j = 0; j < r->m; j++)
          {
            size_t at = ((size_t) i * r->m + j) * P + q;
            double v = caml_ref_act (act, y[at] + p->b[j]);
            out[at] = x * v + (1.0 - x) * p->w0[j];
          }
      }
  g_free (y);
}

void
caml_ref_ca_cnn_backward (const CamlRefConv *r, CamlActivation act,
                          const CamlRefCaCnnParams *p, const double *dout,
                          const float *inp, double *dinp, double *dW, double *du,
                          double *db, double *db_chi, double *dw0)
{
  CamlRefConv g = gate_conv (r);
  size_t P = (size_t) r->oh * r->ow, K = (size_t) r->c * r->k * r->k;
  size_t n_out = caml_ref_conv_out_size (r);
  double *y = g_new (double, n_out), *z = g_new (double, (size_t) r->n * P);
  double *dy = g_new (double, n_out), *dz = g_new (double, (size_t) r->n * P);
  caml_ref_conv_forward (r, y, inp, p->W);
  caml_ref_conv_forward (&g, z, inp, p->u);
  memset (dinp, 0, caml_ref_conv_in_size (r) * sizeof (double));
  memset (dW, 0, (size_t) r->m * K * sizeof (double));
  memset (du, 0, K * sizeof (double));
  memset (db, 0, r->m * sizeof (double));
  memset (dw0, 0, r->m * sizeof (double));
  db_chi[0] = 0.0;
  for (int i = 0; i < r->n; i++)
    for (size_t q = 0; q < P; q++)
      {
        double x = 1.0 / (1.0 + exp (-(z[i * P + q] + p->b_chi[0])));
        double dx = 0.0;
        for (int j = 0; j < r->m; j++)
          {
            size_t at = ((size_t) i * r->m + j) * P + q;
            double v = caml_ref_act (act, y[at] + p->b[j]);
            dx += dout[at] * (v - p->w0[j]);
            dw0[j] += (1.0 - x) * dout[at];
            dy[at] = x * dout[at] * caml_ref_act_grad (act, v);
            db[j] += dy[at];
          }
        dz[i * P + q] = dx * x * (1.0 - x);
        db_chi[0] += dz[i * P + q];
      }
  caml_ref_conv_backward (r, dinp, dW, dy, inp, p->W);
  caml_ref_conv_backward (&g, dinp, du, dz, inp, p->u);
  g_free (y);
  g_free (z);
  g_free (dy);
  g_free (dz);
}
