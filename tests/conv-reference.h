/* conv-reference.h — a naive direct convolution (plain loops, double
 * accumulators): the test reference for the im2col + sgemm kernels. */
#pragma once

#include "caml.h"

/* One k×k convolution of (N, C, H, W) into (N, M, OH, OW). The geometry is
 * computed here independently of the engine: "same" gives ceil(H / stride)
 * outputs with the border split like TensorFlow, "valid" no border. */
typedef struct {
  int n, c, h, w, m, k, stride;
  int oh, ow, pad_top, pad_left;
} CamlRefConv;

void caml_ref_conv_init (CamlRefConv *r, int n, int c, int h, int w, int m, int k,
                         int stride, gboolean same);
size_t caml_ref_conv_out_size (const CamlRefConv *r);   /* N·M·OH·OW */
size_t caml_ref_conv_in_size (const CamlRefConv *r);    /* N·C·H·W */

/* y (N, M, OH, OW) = W (M, C, k, k) ⊛ inp, no bias, no activation. */
void caml_ref_conv_forward (const CamlRefConv *r, double *y, const float *inp,
                            const float *W);
/* Given dy (N, M, OH, OW): dW (M, C, k, k) += Σ dy ⊗ patch; dinp (N, C, H, W) += Wᵀ dy. */
void caml_ref_conv_backward (const CamlRefConv *r, double *dinp, double *dW,
                             const double *dy, const float *inp, const float *W);

double caml_ref_act (CamlActivation act, double x);
/* d act / dx expressed through y = act(x). */
double caml_ref_act_grad (CamlActivation act, double y);

/* CA-CNN from the reference convolution: out (N, D, OH, OW) and χ (N, OH, OW).
 * Parameters as the engine lays them out: W (D, C, k, k), u (C, k, k), b (D),
 * b_χ (1), w0 (D); r->m must be D. */
typedef struct {
  const float *W, *u, *b, *b_chi, *w0;
} CamlRefCaCnnParams;

void caml_ref_ca_cnn_forward (const CamlRefConv *r, CamlActivation act,
                              const CamlRefCaCnnParams *p, double *out, double *chi,
                              const float *inp);
/* Gradients of L = Σ dout ⊙ out: each d* (same shapes as the parameters and
 * the input) is overwritten. */
void caml_ref_ca_cnn_backward (const CamlRefConv *r, CamlActivation act,
                               const CamlRefCaCnnParams *p, const double *dout,
                               const float *inp, double *dinp, double *dW, double *du,
                               double *db, double *db_chi, double *dw0);
