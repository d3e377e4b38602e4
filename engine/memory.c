/* The memory a model or a run may plan for.
 *
 * g_try_malloc only fails for sizes no address space holds: Linux
 * overcommits, so a block of 17 GB on a 24 GB machine is granted and the
 * process is killed, or the machine swaps to a halt, once the pages are
 * touched. The sizes a user chooses (units, batch, vocabulary) are checked
 * against the machine's physical memory first, so a model that cannot fit
 * is an error naming its size rather than a machine brought down. */
#include <unistd.h>

#include "caml-private.h"

static size_t memory_limit;   /* 0: the machine's physical memory */

size_t
caml_memory_limit (void)
{
  if (memory_limit > 0)
    return memory_limit;
  long pages = sysconf (_SC_PHYS_PAGES), page_size = sysconf (_SC_PAGESIZE);
  size_t total;
  if (pages <= 0 || page_size <= 0
      || !g_size_checked_mul (&total, (size_t) pages, (size_t) page_size))
    return SIZE_MAX;   /* unknown: only what cannot be allocated fails */
  return total;
}

void
caml_set_memory_limit (size_t bytes)
{
  memory_limit = bytes;
}

char *
caml_memory_limit_text (void)
{
  size_t limit = caml_memory_limit ();
  g_autofree char *size = g_format_size ((guint64) limit);
  return memory_limit > 0 ? g_strdup_printf ("the memory limit (%s)", size)
                          : g_strdup_printf ("this machine's memory (%s)", size);
}
