/* parallel.c — the engine's threads: OpenMP (GCC's libgomp) parallel
 * regions, the thread count, and background priority.
 *
 * Kernels cut their work into as many parts as the thread count says
 * (parallel.h) and hand them to caml_parallel_for, which runs them on an
 * OpenMP team. The team is as large as the parts, but never larger than
 * the cores left over by other regions running at the same moment (two
 * trainers at once, a probe beside a trainer): a team that finds the cores
 * taken runs its parts on fewer threads, with the same results. BLAS calls
 * run inside the parts, single-threaded (blas.c). In an interactive
 * process (caml_set_interactive) only trainers' threads keep their teams
 * between passes: libgomp counts idle teams against the cores. */
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef __linux__
#include <sys/resource.h>
#include <unistd.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "caml-private.h"
#include "blas.h"
#include "parallel.h"

#define BACKGROUND_NICE 10

static gint background;       /* atomic: caml_set_background_priority was called */
static GPrivate lowered;      /* this thread's priority is lowered already */

static gint threads_set;      /* atomic: caml_set_threads's count, 0 for the default */
static gint busy;             /* atomic: threads working in parallel regions now */
static __thread int pinned;   /* this thread's count (caml_parallel_pin), 0: none */
static gint fine;             /* atomic: caml_parallel_set_fine */
static gint interactive;      /* atomic: caml_set_interactive was called */
static gint watch_most;       /* atomic: caml_parallel_watch_most */
static __thread gboolean keeps_team;   /* caml_parallel_keep_team */

/* The cores this process may run on (its affinity mask). */
static int
cores (void)
{
  static gsize n = 0;
  if (g_once_init_enter (&n))
    g_once_init_leave (&n, (gsize) MAX (1, (int) g_get_num_processors ()));
  return (int) n;
}

gboolean
caml_threads_parse (const char *text, int *threads, GError **error)
{
  guint64 v = 0;
  g_autoptr (GError) parse_error = NULL;
  if (text == NULL
      || !g_ascii_string_to_unsigned (text, 10, 1, CAML_MAX_THREADS, &v, &parse_error)
      || text[0] == '0' || text[0] == '+')
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "\"%s\": expected a number of threads from 1 to %d, written in "
                   "decimal digits", text ? text : "", CAML_MAX_THREADS);
      return FALSE;
    }
  *threads = (int) v;
  return TRUE;
}

gboolean
caml_threads_check_env (GError **error)
{
  const char *env = g_getenv ("CAML_THREADS");
  int threads;
  if (env == NULL || caml_threads_parse (env, &threads, error))
    return TRUE;
  g_prefix_error (error, "CAML_THREADS=");
  return FALSE;
}

/* The count when nobody set one: $CAML_THREADS when it is valid, else
 * every core. */
static int
default_threads (void)
{
  static gsize n = 0;
  if (g_once_init_enter (&n))
    {
      int threads = cores ();
      const char *env = g_getenv ("CAML_THREADS");
      if (env != NULL && !caml_threads_parse (env, &threads, NULL))
        threads = cores ();
      g_once_init_leave (&n, (gsize) threads);
    }
  return (int) n;
}

void
caml_set_threads (int threads)
{
  g_atomic_int_set (&threads_set, CLAMP (threads, 0, CAML_MAX_THREADS));
}

int
caml_get_threads (void)
{
  int n = g_atomic_int_get (&threads_set);
  return n > 0 ? n : default_threads ();
}

int
caml_get_cores (void)
{
  return cores ();
}

void
caml_parallel_pin (int threads)
{
  pinned = CLAMP (threads, 0, CAML_MAX_THREADS);
}

void
caml_parallel_set_fine (gboolean on)
{
  g_atomic_int_set (&fine, on ? 1 : 0);
}

double
caml_parallel_grain (double grain)
{
  return g_atomic_int_get (&fine) ? 1.0 : grain;
}

int
caml_parallel_chunks (size_t items, double grain)
{
  double most = (double) items / caml_parallel_grain (grain);
  return (int) CLAMP (most, 1.0, 4.0 * caml_parallel_threads ());
}

int
caml_parallel_pinned (void)
{
  return pinned;
}

int
caml_parallel_threads (void)
{
  caml_blas_init ();
  return pinned > 0 ? pinned : caml_get_threads ();
}

/* The calling thread's OpenMP team, if it has one, goes back (its threads
 * end) when caml_set_interactive was called; the next pass starts another. */
static void
release_team (void)
{
#ifdef CAML_HAVE_OMP_PAUSE
  if (g_atomic_int_get (&interactive) && !omp_in_parallel ())
    (void) omp_pause_resource_all (omp_pause_soft);
#endif
}

#ifdef _OPENMP
/* After a pass: the team goes back unless the thread keeps it. */
static void
give_back_team (void)
{
  if (!keeps_team)
    release_team ();
}
#endif

void
caml_set_interactive (void)
{
  g_atomic_int_set (&interactive, 1);
}

void
caml_parallel_keep_team (gboolean keep)
{
  keeps_team = keep;
}

void
caml_parallel_idle (void)
{
  release_team ();
}

/* watch_most = MAX (watch_most, threads) */
static void
watch (int threads)
{
  int seen = g_atomic_int_get (&watch_most);
  while (threads > seen && !g_atomic_int_compare_and_exchange (&watch_most, seen, threads))
    seen = g_atomic_int_get (&watch_most);
}

void
caml_parallel_watch_reset (void)
{
  g_atomic_int_set (&watch_most, 0);
}

int
caml_parallel_watch_most (void)
{
  return g_atomic_int_get (&watch_most);
}

void
caml_parallel_for (int parts, CamlPartFunc func, gpointer data)
{
  caml_blas_init ();
#ifdef _OPENMP
  if (parts > 1 && caml_parallel_threads () > 1 && !omp_in_parallel ())
    {
      /* Claim threads for the team, at most the thread count (parts may
       * be more: caml_parallel_chunks) and the cores; what others hold now
       * is not ours. */
      int want = MIN (parts, MIN (cores (), caml_parallel_threads ()));
      int held = g_atomic_int_add (&busy, want);
      int team = CLAMP (cores () - held, 1, want);
      if (team > 1)
        {
          /* Parts go to whichever thread is free next: a thread the
           * scheduler holds back (a window's thread ran) leaves its parts
           * to the others. */
          gint next = 0;
          watch (team);
#pragma omp parallel num_threads (team)
          {
            /* The team's own threads, never the caller (a window's main
             * thread asking for a probe keeps its priority). */
            if (omp_get_thread_num () > 0)
              caml_parallel_lower_priority ();
            int part;
            while ((part = g_atomic_int_add (&next, 1)) < parts)
              func (part, parts, data);
          }
          g_atomic_int_add (&busy, -want);
          give_back_team ();
          return;
        }
      g_atomic_int_add (&busy, -want);
    }
#endif
  if (parts > 0)
    watch (1);
  for (int part = 0; part < parts; part++)
    func (part, parts, data);
}

/* Floats per part below which a pass over memory stays on one thread. */
#define STREAM_GRAIN 32768

typedef struct {
  float       *p;
  const float *c;
  size_t       n;
  guint32      bad[4 * CAML_MAX_THREADS];
} Stream;

static void
zero_part (int part, int parts, gpointer data)
{
  Stream *s = data;
  size_t lo, hi;
  caml_part_range (s->n, part, parts, 16, &lo, &hi);
  memset (s->p + lo, 0, (hi - lo) * sizeof (float));
}

void
caml_parallel_zero (float *p, size_t n)
{
  Stream s = { .p = p, .n = n };
  caml_parallel_for (caml_parallel_chunks (n, STREAM_GRAIN), zero_part, &s);
}

/* 1 when x is Inf or NaN: branch-free over the bits, so the loop
 * vectorises. */
static guint32
count_not_finite (const float *v, size_t n)
{
  guint32 bad = 0;
  for (size_t k = 0; k < n; k++)
    {
      guint32 bits;
      memcpy (&bits, &v[k], sizeof bits);
      bad |= (guint32) ((bits & 0x7f800000u) == 0x7f800000u);
    }
  return bad;
}

static void
finite_part (int part, int parts, gpointer data)
{
  Stream *s = data;
  size_t lo, hi;
  caml_part_range (s->n, part, parts, 16, &lo, &hi);
  s->bad[part] = count_not_finite (s->c + lo, hi - lo);
}

gboolean
caml_parallel_all_finite (const float *p, size_t n)
{
  int parts = caml_parallel_chunks (n, STREAM_GRAIN);
  if (parts == 1)
    return count_not_finite (p, n) == 0;
  Stream s = { .c = p, .n = n };
  caml_parallel_for (parts, finite_part, &s);
  guint32 bad = 0;
  for (int i = 0; i < parts; i++)
    bad |= s.bad[i];
  return bad == 0;
}

void
caml_set_background_priority (void)
{
  g_atomic_int_set (&background, 1);
}

gboolean
caml_get_background_priority (void)
{
  return g_atomic_int_get (&background) != 0;
}

void
caml_parallel_lower_priority (void)
{
  if (!g_atomic_int_get (&background) || g_private_get (&lowered) != NULL)
    return;
  g_private_set (&lowered, GINT_TO_POINTER (1));
#ifdef __linux__
  /* On Linux a thread id names one thread to setpriority (not POSIX: there
   * it would be the whole process). Failure leaves the priority as it was. */
  if (getpriority (PRIO_PROCESS, (id_t) gettid ()) < BACKGROUND_NICE)
    (void) setpriority (PRIO_PROCESS, (id_t) gettid (), BACKGROUND_NICE);
#endif
}
