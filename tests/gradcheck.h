/* gradcheck.h — central-difference gradient checks shared by the tests. */
#pragma once

#include "caml-private.h"   /* tests the engine's internals */

/* Builds a one-layer model from `spec` on input `shape`, draws a batch of n
 * inputs, and checks the analytic gradients of L = Σ r ⊙ out (r random) with
 * respect to every parameter and every input value against central
 * differences, the analytic ones on 1, 2 and 3 threads with every piece of
 * work split (so that the parts' boundaries and sums are checked; their
 * outputs must agree too). Fails the current cmocka test on a mismatch. */
void caml_gradcheck_layer (const CamlLayerSpec *spec, const CamlShape *shape, int n,
                           guint32 seed);

/* Checks the gradients of a whole model under a loss (parameters only). */
void caml_gradcheck_model (CamlModel *model, CamlLossKind loss, const float *x,
                           const float *target, int n);

/* A layer spec with the registry defaults of `name`, then pairs of
 * (key, value) terminated by NULL: spec_of ("dense", "units", 3.0, NULL). */
CamlLayerSpec caml_test_spec (const char *name, ...);
