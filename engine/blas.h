/* blas.h — private to the engine: the BLAS the engine runs on. */
#pragma once

#include <glib.h>

/* Once per process, before the first product: OpenBLAS on one thread (the
 * engine's parts run it, parallel.c), and its kernels chosen by what the CPU
 * can do when the library fell back to generic ones (caml_blas_upgrade).
 * Cheap after the first call. */
void caml_blas_init (void);

/* Where OpenBLAS (a DYNAMIC_ARCH build) runs generic kernels on a CPU whose
 * features allow better ones — 0.3.21 takes CPUs newer than itself for a
 * Prescott — it is started again on the best core type those features
 * allow (OPENBLAS_CORETYPE, read by its own initialisation). Nothing
 * happens when the user set OPENBLAS_CORETYPE. Returns the core type it
 * changed to, or NULL when it left the library as it was. Sets the
 * environment: call it before other threads start (caml_blas_init does,
 * once). */
const char *caml_blas_upgrade (void);
