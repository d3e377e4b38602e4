/* caml-layer.h — a layer author's header: what the files of engine/layers/ use to
 * implement a layer type. A layer type is a CamlLayerOps table (declared in
 * caml.h with CamlLayer and CamlParam, since applications read the registry
 * through them) plus a private state struct; it builds its parameters with
 * caml_layer_add_param, and may use the activations, the batch scratch and
 * the shared kernels below: caml_sgemm, the dense product and the χ gate
 * mix. Applications include caml.h only. */
#pragma once

#include <cblas.h>

#include "caml.h"

G_BEGIN_DECLS

/* ------------------------------------------------------------------ shapes */

CamlShape caml_shape_sequence (int t, int d);

/* ------------------------------------------------------------- activations */

/* y = act(x) over n values, in place allowed. */
void  caml_activation_forward (CamlActivation act, float *y, const float *x, size_t n);

/* dx += dy * act'(x) expressed through y = act(x). dx may alias dy only when
 * accumulate is FALSE; with accumulate FALSE dx is overwritten. */
void  caml_activation_backward (CamlActivation act, float *dx, const float *dy,
                                const float *y, size_t n, gboolean accumulate);

/* ----------------------------------------------------------------- layers */

/* For setup functions. Returns the new parameter. */
CamlParam *caml_layer_add_param (CamlLayer *layer, const char *name,
                                 CamlParamGroup group, CamlInit init,
                                 int fan_in, int fan_out, size_t count);

/* ---------------------------------------------- batch scratch (linear.c) */

/* A layer's scratch buffers sized by the batch, for its reserve op
 * (CamlLayerOps.reserve, called by caml_model_reserve): each call adds the
 * bytes of one buffer of a × b elements to sc->bytes (SIZE_MAX once that
 * overflows) and, while sc->allocate is set and nothing failed, replaces
 * *buf (contents not kept) by a block allocated with g_try_malloc — unless
 * capacity is given and already holds a × b. A buffer that cannot be
 * allocated sets sc->failed and leaves *buf NULL (capacity 0); later calls
 * only count. */
typedef struct {
  gboolean allocate;
  gboolean failed;
  size_t   bytes;
} CamlScratch;

void caml_scratch_floats (CamlScratch *sc, float **buf, size_t *capacity, size_t a, size_t b);
void caml_scratch_ints (CamlScratch *sc, int **buf, size_t *capacity, size_t a, size_t b);
/* For forward and backward, which grow the scratch themselves when a layer
 * runs without caml_model_reserve (tests): the layer's reserve op for n
 * samples, aborting as g_new does when the buffers cannot be allocated. */
void caml_scratch_require (CamlLayer *layer, int n);
/* The rows of n samples of up to t steps each packed together, n·t: what a
 * recurrent or attention layer reserves for. SIZE_MAX when that overflows
 * size_t, so that the sizes caml_scratch_* computes from it overflow too. */
size_t caml_scratch_rows (int n, int t);

/* ---------------------------------------------- kernels (linear.c) */

/* Row-major C (m, n) = alpha op(A) op(B) + beta C, as cblas_sgemm. A large
 * product is cut into tiles, one per part (parallel.h). */
void caml_sgemm (CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha,
                 const float *A, int lda, const float *B, int ldb, float beta, float *C,
                 int ldc);

/* The same on the calling thread: oneDNN for products of 2 MFLOP and more,
 * OpenBLAS below. */
void caml_sgemm_serial (CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
                        float alpha, const float *A, int lda, const float *B, int ldb,
                        float beta, float *C, int ldc);

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

G_END_DECLS
