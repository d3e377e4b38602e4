/* fuzz-common.h — what the fuzz targets share: GLib warnings and criticals
 * made fatal (a g_return_if_fail hit by outside input is a bug), and checks
 * of the engine's error contract that abort, so libFuzzer reports them as
 * crashes with the input that broke them. */
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caml-private.h"   /* the loaders' in-memory entry points are internal */

#define FUZZ_CHECK(cond, ...)                                                 \
  do {                                                                        \
    if (!(cond))                                                              \
      {                                                                       \
        fprintf (stderr, "fuzz check failed: %s: ", #cond);                   \
        fprintf (stderr, __VA_ARGS__);                                        \
        fputc ('\n', stderr);                                                 \
        abort ();                                                             \
      }                                                                       \
  } while (0)

static inline void
fuzz_init (void)
{
  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
}

/* A rejected input: a CAML_ERROR whose message names `source` (the name the
 * target gave the input) and is valid UTF-8. Frees the error. */
static inline void
fuzz_check_error (GError *error, const char *source)
{
  FUZZ_CHECK (error != NULL, "rejected without an error");
  FUZZ_CHECK (error->domain == CAML_ERROR, "error outside CAML_ERROR: %s", error->message);
  FUZZ_CHECK (strstr (error->message, source) != NULL,
              "the message does not name %s: %s", source, error->message);
  FUZZ_CHECK (g_utf8_validate (error->message, -1, NULL),
              "the message is not UTF-8 (a GUI shows it): %s", error->message);
  g_error_free (error);
}

/* The file of an input whose first byte is a mode: the bytes after it, and
 * with the mode's low bit set a valid SHA-256 appended (so the fuzzer gets
 * past a file's checksum), in a heap copy of exactly the file's size, so
 * reads past it are caught. Free the result with g_free. */
static inline guint8 *
fuzz_sealed_file (const uint8_t *data, size_t size, gsize *length)
{
  *length = size - 1;
  gboolean seal = data[0] & 1;
  guint8 *file = g_malloc (MAX (*length + (seal ? 32 : 0), 1));   /* not NULL when empty */
  if (*length > 0)
    memcpy (file, data + 1, *length);
  if (seal)
    {
      gsize digest_len = 32;
      GChecksum *sha = g_checksum_new (G_CHECKSUM_SHA256);
      g_checksum_update (sha, file, *length);
      g_checksum_get_digest (sha, file + *length, &digest_len);
      g_checksum_free (sha);
      *length += 32;
    }
  return file;
}
