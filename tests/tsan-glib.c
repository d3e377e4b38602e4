/* tsan-glib.c — tells ThreadSanitizer what GLib's mutexes and condition
 * variables do. Linked into the test programs of the ThreadSanitizer build
 * only (tests/meson.build, b_sanitize=thread).
 *
 * On Linux GLib builds GMutex and GCond on futexes, not on pthread mutexes:
 * TSan learns happens-before from the pthread calls it intercepts, so it does
 * not see these locks and reports every access a GMutex guards as a data
 * race (the trainer's whole snapshot, for a start). These definitions
 * interpose the GLib functions (the program's own definition wins over
 * libglib's for every caller that goes through the dynamic linker), call
 * GLib's through dlsym (RTLD_NEXT), and annotate: __tsan_acquire on the
 * mutex after it is taken, __tsan_release before it is given up — the
 * edges a pthread mutex gives. Threads need nothing: g_thread_new and
 * g_thread_join end in pthread_create and pthread_join, which TSan sees.
 * What is not covered: lock-order checking (TSan's deadlock detector) for
 * GMutex, and code inside libglib itself, which is not instrumented. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <glib.h>

void __tsan_acquire (void *addr);
void __tsan_release (void *addr);

static void     (*real_mutex_lock) (GMutex *mutex);
static gboolean (*real_mutex_trylock) (GMutex *mutex);
static void     (*real_mutex_unlock) (GMutex *mutex);
static void     (*real_rec_mutex_lock) (GRecMutex *mutex);
static gboolean (*real_rec_mutex_trylock) (GRecMutex *mutex);
static void     (*real_rec_mutex_unlock) (GRecMutex *mutex);
static void     (*real_cond_wait) (GCond *cond, GMutex *mutex);
static gboolean (*real_cond_wait_until) (GCond *cond, GMutex *mutex, gint64 end_time);

static void *
lookup (const char *name)
{
  void *p = dlsym (RTLD_NEXT, name);
  if (p == NULL)
    {
      fprintf (stderr, "tsan-glib: %s not found in GLib\n", name);
      abort ();
    }
  return p;
}

/* On the first call — during GLib's own start-up or before main at the
 * latest (the constructor), while one thread exists. */
__attribute__ ((constructor)) static void
tsan_glib_init (void)
{
  if (real_cond_wait_until != NULL)
    return;
  real_mutex_lock = lookup ("g_mutex_lock");
  real_mutex_trylock = lookup ("g_mutex_trylock");
  real_mutex_unlock = lookup ("g_mutex_unlock");
  real_rec_mutex_lock = lookup ("g_rec_mutex_lock");
  real_rec_mutex_trylock = lookup ("g_rec_mutex_trylock");
  real_rec_mutex_unlock = lookup ("g_rec_mutex_unlock");
  real_cond_wait = lookup ("g_cond_wait");
  real_cond_wait_until = lookup ("g_cond_wait_until");
}

void
g_mutex_lock (GMutex *mutex)
{
  tsan_glib_init ();
  real_mutex_lock (mutex);
  __tsan_acquire (mutex);
}

gboolean
g_mutex_trylock (GMutex *mutex)
{
  tsan_glib_init ();
  if (!real_mutex_trylock (mutex))
    return FALSE;
  __tsan_acquire (mutex);
  return TRUE;
}

void
g_mutex_unlock (GMutex *mutex)
{
  tsan_glib_init ();
  __tsan_release (mutex);
  real_mutex_unlock (mutex);
}

void
g_rec_mutex_lock (GRecMutex *mutex)
{
  tsan_glib_init ();
  real_rec_mutex_lock (mutex);
  __tsan_acquire (mutex);
}

gboolean
g_rec_mutex_trylock (GRecMutex *mutex)
{
  tsan_glib_init ();
  if (!real_rec_mutex_trylock (mutex))
    return FALSE;
  __tsan_acquire (mutex);
  return TRUE;
}

void
g_rec_mutex_unlock (GRecMutex *mutex)
{
  tsan_glib_init ();
  __tsan_release (mutex);
  real_rec_mutex_unlock (mutex);
}

void
g_cond_wait (GCond *cond, GMutex *mutex)
{
  tsan_glib_init ();
  __tsan_release (mutex);
  real_cond_wait (cond, mutex);
  __tsan_acquire (mutex);
}

gboolean
g_cond_wait_until (GCond *cond, GMutex *mutex, gint64 end_time)
{
  tsan_glib_init ();
  __tsan_release (mutex);
  gboolean signalled = real_cond_wait_until (cond, mutex, end_time);
  __tsan_acquire (mutex);
  return signalled;
}
