/* layers.h — private to the engine: the layer types and shared kernels. */
#pragma once

#include "caml.h"

extern const CamlLayerOps caml_dense_ops;
extern const CamlLayerOps caml_activation_layer_ops;
extern const CamlLayerOps caml_ca_nn_ops;
extern const CamlLayerOps caml_ca_res_ops;

/* y (N, U) = x (N, D) · Wᵀ + b, W (U, D), b (U) or NULL. */
void caml_linear_forward (float *y, const float *x, const float *W, const float *b,
                          int n, int d, int u);
/* dW (U, D) += dyᵀ x; db (U) += Σ_n dy (if non-NULL);
 * dx (N, D) = dy · W, or += when accumulate (if dx is non-NULL). */
void caml_linear_backward (float *dx, float *dW, float *db, const float *dy,
                           const float *x, const float *W, int n, int d, int u,
                           gboolean accumulate);

/* Grow *buf to hold at least `count` floats (contents not kept). */
void caml_buffer_reserve (float **buf, size_t *capacity, size_t count);

/* The element-wise gate mix used by every CA layer, for rows of width U:
 * out (N, U) = χ_n v + (1 − χ_n) w0. */
void caml_gate_mix_forward (float *out, const float *chi, const float *v,
                            const float *w0, int n, int u);
/* Given dout: dv (N, U) = χ dout (overwritten); dchi (N) = Σ_j dout (v − w0)
 * (overwritten); dw0 (U) += Σ_n (1 − χ) dout. */
void caml_gate_mix_backward (float *dv, float *dchi, float *dw0, const float *dout,
                             const float *chi, const float *v, const float *w0,
                             int n, int u);
