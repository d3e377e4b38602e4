/* vectorize.h — private to the engine: the element-wise loops training
 * spends its time in are built for several instruction sets, and the CPU
 * picks one when the program loads (GCC's and clang's target_clones, an
 * ifunc). The rest of the engine is built for any x86-64 (SSE2). */
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
#define CAML_VECTOR_LOOP __attribute__ ((target_clones ("avx512f", "avx2", "default")))
#else
#define CAML_VECTOR_LOOP
#endif
