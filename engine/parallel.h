/* parallel.h — private to the engine: splitting work over threads.
 *
 * Work is cut into `parts`, a number that depends only on the thread count
 * the caller runs with (caml_parallel_threads), never on how many threads
 * are free at that moment: parts run on as many OpenMP threads as there are
 * cores to spare, and anything summed over parts is summed in part order, so
 * a run's numbers depend on its thread count alone. */
#pragma once

#include <stddef.h>
#include <glib.h>

/* Called once for each part in [0, parts), possibly concurrently. */
typedef void (*CamlPartFunc) (int part, int parts, gpointer data);

/* The thread count kernels split their work for on the calling thread: the
 * count pinned to this thread (caml_parallel_pin), else the engine's
 * (caml_get_threads). */
int  caml_parallel_threads (void);
/* Pins this thread's count (≤ 0: unpin), for a trainer whose whole run must
 * use one count whatever caml_set_threads says meanwhile. */
void caml_parallel_pin (int threads);
/* This thread's pinned count, 0 when none. */
int  caml_parallel_pinned (void);
/* Runs func for every part and returns when all are done. Called from
 * inside another parallel region, or with one part, it runs them in turn
 * on the calling thread. */
void caml_parallel_for (int parts, CamlPartFunc func, gpointer data);

/* Parts for `items` of work whose results do not depend on how it is cut
 * (nothing summed across items): four a thread, each at least `grain`
 * items (1 … 4·threads), so that a thread the scheduler holds back leaves
 * its share to the others. */
int      caml_parallel_chunks (size_t items, double grain);

/* For tests: split every piece of work, however small, into as many parts
 * as the thread count allows (normally work under a grain stays whole). */
void     caml_parallel_set_fine (gboolean fine);
/* `grain` (the least work worth a part of its own), or 1 when fine. */
double   caml_parallel_grain (double grain);

/* Part `part` of `parts` of the items [0, n): [*lo, *hi), boundaries on
 * multiples of `align` (≥ 1) except n itself. */
static inline void
caml_part_range (size_t n, int part, int parts, size_t align, size_t *lo, size_t *hi)
{
  size_t blocks = (n + align - 1) / align;
  size_t b0 = blocks * (size_t) part / (size_t) parts;
  size_t b1 = blocks * (size_t) (part + 1) / (size_t) parts;
  *lo = MIN (b0 * align, n);
  *hi = MIN (b1 * align, n);
}

/* p[0 … n) = 0, large blocks split over parts. */
void     caml_parallel_zero (float *p, size_t n);
/* Whether every value of p[0 … n) is finite (no Inf, no NaN), large
 * blocks split over parts. */
gboolean caml_parallel_all_finite (const float *p, size_t n);

/* Whether the calling thread keeps its OpenMP team between passes when
 * caml_set_interactive was called (a trainer's thread does); others give
 * theirs back after each pass. */
void caml_parallel_keep_team (gboolean keep);
/* The calling thread is about to wait for a while (a paused trainer): its
 * team goes back when caml_set_interactive was called, kept or not. */
void caml_parallel_idle (void);

/* Lowers the calling thread to background priority when
 * caml_set_background_priority was called (once per thread; cheap after). */
void caml_parallel_lower_priority (void);
