/* blas.c — which BLAS kernels run, and choosing better ones where the
 * library could not tell the CPU.
 *
 * Debian 12's OpenBLAS 0.3.21 is built for every x86-64 core type at once
 * (DYNAMIC_ARCH) and picks one at load by the CPU's model number; a model
 * newer than the library gets the SSE3 kernels of a Prescott, a third of
 * the speed of its AVX-512 ones. The library's own remedy is the variable
 * OPENBLAS_CORETYPE, read when it initialises: the engine sets it from the
 * CPU's features and initialises the library again through the entry points
 * the DYNAMIC_ARCH build exports for this. */
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
#ifdef CAML_HAVE_DNNL
#include <dnnl.h>
#endif

#include "caml-private.h"
#include "blas.h"

/* In DYNAMIC_ARCH builds only: weak, so that any other OpenBLAS links. */
extern void gotoblas_dynamic_init (void) __attribute__ ((weak));
extern void gotoblas_dynamic_quit (void) __attribute__ ((weak));

/* OpenBLAS's x86-64 core types by the widest vectors their sgemm uses:
 * 0 SSE, 1 AVX, 2 AVX2 + FMA, 3 AVX-512. */
static const struct { const char *name; int level; } core_levels[] = {
  { "Prescott", 0 }, { "Core2", 0 }, { "Penryn", 0 }, { "Dunnington", 0 },
  { "Nehalem", 0 }, { "Atom", 0 }, { "Nano", 0 }, { "Opteron", 0 },
  { "Opteron(SSE3)", 0 }, { "Barcelona", 0 }, { "Bobcat", 0 }, { "Katmai", 0 },
  { "Coppermine", 0 }, { "Northwood", 0 }, { "Banias", 0 }, { "Athlon", 0 },
  { "Sandybridge", 1 }, { "Bulldozer", 1 }, { "Piledriver", 1 }, { "Steamroller", 1 },
  { "Excavator", 1 },
  { "Haswell", 2 }, { "Zen", 2 },
  { "SkylakeX", 3 }, { "Cooperlake", 3 }, { "SapphireRapids", 3 },
};

static int
core_level (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (core_levels); i++)
    if (g_ascii_strcasecmp (name, core_levels[i].name) == 0)
      return core_levels[i].level;
  return -1;
}

/* The best core type this CPU's features allow, or NULL. */
static const char *
best_core (void)
{
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init ();
  if (__builtin_cpu_supports ("avx512f") && __builtin_cpu_supports ("avx512bw")
      && __builtin_cpu_supports ("avx512vl") && __builtin_cpu_supports ("avx512dq")
      && __builtin_cpu_supports ("avx512cd"))
    return "SkylakeX";
  if (__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma"))
    return "Haswell";
  if (__builtin_cpu_supports ("avx"))
    return "Sandybridge";
#endif
  return NULL;
}

static char *detected;   /* the core type OpenBLAS chose itself, when replaced */

const char *
caml_blas_upgrade (void)
{
  if (gotoblas_dynamic_init == NULL || gotoblas_dynamic_quit == NULL
      || g_getenv ("OPENBLAS_CORETYPE") != NULL)
    return NULL;
  const char *current = openblas_get_corename ();
  const char *best = best_core ();
  int have = current ? core_level (current) : -1;
  if (best == NULL || have < 0 || have >= core_level (best))
    return NULL;
  g_free (detected);
  detected = g_strdup (current);
  g_setenv ("OPENBLAS_CORETYPE", best, TRUE);
  gotoblas_dynamic_quit ();
  gotoblas_dynamic_init ();
  g_unsetenv ("OPENBLAS_CORETYPE");
  return openblas_get_corename ();
}

void
caml_blas_init (void)
{
  static gsize done = 0;
  if (g_once_init_enter (&done))
    {
      caml_blas_upgrade ();
      /* Our parts are the threads: products inside them run on one. */
      openblas_set_num_threads (1);
      g_once_init_leave (&done, 1);
    }
}

/* The ISA the engine's own kernels were dispatched to (kernels.c). */
const char *caml_kernels_isa (void);

char *
caml_describe_kernels (void)
{
  caml_blas_init ();
  g_autofree char *config = g_strdup (openblas_get_config ());
  /* "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH …": the name and version */
  char **words = g_strsplit (config, " ", 3);
  g_autofree char *library = words[0] && words[1] ? g_strdup_printf ("%s %s", words[0], words[1])
                                                  : g_strdup (config);
  g_strfreev (words);
  const char *core = openblas_get_corename ();
  GString *s = g_string_new (NULL);
#ifdef CAML_HAVE_DNNL
  const dnnl_version_t *v = dnnl_version ();
  g_string_append_printf (s, "products: oneDNN %d.%d.%d sgemm (kernels by CPU features), "
                          "small ones on ", v->major, v->minor, v->patch);
#else
  g_string_append (s, "products: ");
#endif
  g_string_append_printf (s, "%s %s kernels", library, core);
  if (detected != NULL)
    g_string_append_printf (s, " (chosen by CPU features; the library took this CPU for %s)",
                            detected);
  else if (g_getenv ("OPENBLAS_CORETYPE") != NULL)
    g_string_append (s, " (OPENBLAS_CORETYPE)");
  g_string_append_printf (s, "; convolutions: the engine's %s kernels", caml_kernels_isa ());
  return g_string_free (s, FALSE);
}
