/* parallel.c — the engine's own two-way parallelism.
 *
 * The engine's matrix products are small (a batch of 100 against a layer of
 * a few thousand), where OpenBLAS's threading costs more than it gains and
 * its idle workers spin against ours. So OpenBLAS runs single-threaded and
 * the engine splits each large product (and the optimizer's loops) in two:
 * one half on the calling thread, the other on one persistent helper thread
 * woken through a condition variable. Callers that find the helper busy (two
 * trainers at once) run both halves themselves. */
#include <cblas.h>
#ifdef __linux__
#include <sys/resource.h>
#include <unistd.h>
#endif

#include "caml.h"
#include "parallel.h"

#define BACKGROUND_NICE 10

static gint background;       /* atomic: caml_set_background_priority was called */
static GPrivate lowered;      /* this thread's priority is lowered already */

static GMutex   users;        /* one caller at a time owns the helper */
static GMutex   lock;         /* guards the fields below */
static GCond    cond;
static guint64  posted, done; /* job generations */
static CamlPartFunc job_func;
static gpointer job_data;

static gpointer
helper_main (gpointer unused)
{
  guint64 seen = 0;
  for (;;)
    {
      g_mutex_lock (&lock);
      while (posted == seen)
        g_cond_wait (&cond, &lock);
      seen = posted;
      caml_parallel_lower_priority ();
      CamlPartFunc func = job_func;
      gpointer data = job_data;
      g_mutex_unlock (&lock);

      func (1, data);

      g_mutex_lock (&lock);
      done = seen;
      g_cond_broadcast (&cond);
      g_mutex_unlock (&lock);
    }
  return NULL;
}

int
caml_parallel_parts (void)
{
  static gsize parts = 0;
  if (g_once_init_enter (&parts))
    {
      int cpus = g_get_num_processors ();
      /* Once, before any product runs: our threads, not OpenBLAS's. */
      openblas_set_num_threads (1);
      if (cpus >= 2)
        g_thread_unref (g_thread_new ("caml-helper", helper_main, NULL));
      g_once_init_leave (&parts, cpus >= 2 ? 2 : 1);
    }
  return (int) parts;
}

void
caml_parallel_run (CamlPartFunc func, gpointer data)
{
  if (caml_parallel_parts () < 2 || !g_mutex_trylock (&users))
    {
      func (0, data);
      func (1, data);
      return;
    }
  g_mutex_lock (&lock);
  job_func = func;
  job_data = data;
  posted++;
  g_cond_broadcast (&cond);
  g_mutex_unlock (&lock);

  func (0, data);

  g_mutex_lock (&lock);
  while (done != posted)
    g_cond_wait (&cond, &lock);
  g_mutex_unlock (&lock);
  g_mutex_unlock (&users);
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
