/* vectorize.h — private to the engine: the element-wise loops training
 * spends its time in are built for several instruction sets, and the CPU
 * picks one when the program loads (GCC's and clang's target_clones, an
 * ifunc). The rest of the engine is built for any x86-64 (SSE2). Only
 * static functions get the attribute: clang links a multiversioned function
 * only where every declaration has it, so a public one calls a static
 * clone. */
#pragma once

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CAML_NO_CLONES
#endif
#endif

/* Not under ThreadSanitizer, whose instrumented ifunc resolvers run before
 * its runtime is ready, at load, and crash. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) \
    && !defined(__SANITIZE_THREAD__) && !defined(CAML_NO_CLONES)
#define CAML_VECTOR_LOOP __attribute__ ((target_clones ("avx512f", "avx2", "default")))
#else
#define CAML_VECTOR_LOOP
#endif
