/* alloc-count.c — see alloc-count.h. The linker resolves the engine's and
 * the test's calls to g_malloc … as calls to __wrap_g_malloc …, and
 * __real_g_malloc … to GLib's own. */
#include "alloc-count.h"

static gint allocations;   /* atomic */

guint
caml_test_allocations (void)
{
  return (guint) g_atomic_int_get (&allocations);
}

#define COUNTED(ret, name, params, args)     \
  ret __real_##name params;                  \
  ret __wrap_##name params;                  \
  ret                                        \
  __wrap_##name params                       \
  {                                          \
    g_atomic_int_inc (&allocations);         \
    return __real_##name args;               \
  }

COUNTED (gpointer, g_malloc, (gsize n), (n))
COUNTED (gpointer, g_malloc0, (gsize n), (n))
COUNTED (gpointer, g_malloc_n, (gsize blocks, gsize size), (blocks, size))
COUNTED (gpointer, g_malloc0_n, (gsize blocks, gsize size), (blocks, size))
COUNTED (gpointer, g_try_malloc, (gsize n), (n))
COUNTED (gpointer, g_try_malloc0, (gsize n), (n))
COUNTED (gpointer, g_try_malloc_n, (gsize blocks, gsize size), (blocks, size))
COUNTED (gpointer, g_try_malloc0_n, (gsize blocks, gsize size), (blocks, size))
COUNTED (gpointer, g_realloc, (gpointer mem, gsize n), (mem, n))
COUNTED (gpointer, g_realloc_n, (gpointer mem, gsize blocks, gsize size), (mem, blocks, size))
COUNTED (gpointer, g_try_realloc, (gpointer mem, gsize n), (mem, n))
COUNTED (gpointer, g_memdup2, (gconstpointer mem, gsize n), (mem, n))
