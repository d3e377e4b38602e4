/* embeddings-cache.c — the engine's binary cache of word vectors.
 *
 * Binary cache (little-endian), written beside the source as <path>.cache:
 *
 *   8 bytes   magic "CAMLEMB1"
 *   u32       version (1)
 *   u32       D
 *   u32       N words
 *   u32       source format (CamlEmbeddingsFormat)
 *   u64       source size in bytes      } the cache is stale when the
 *   i64       source mtime, µs (Unix)   } source no longer has these
 *   N times:  u32 byte length, the word's UTF-8 bytes (no NUL)
 *   N × D     floats, IEEE-754 binary32, row i the vector of word i
 *   u64       XXH64 (seed 0) of every byte before it
 *
 * It is written to a temporary file in the same directory, fsync'ed and
 * renamed over the target, so a reader sees the old cache or the new one,
 * never half of one. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "embeddings-private.h"

#define CACHE_VERSION  1
#define CACHE_HEADER   (8 + 4 * 4 + 8 * 2)

G_STATIC_ASSERT (sizeof (float) == sizeof (guint32));

/* ------------------------------------------------------------------ cache */

G_GNUC_PRINTF (3, 4) static gboolean
cache_fail (const CamlEmbReader *r, GError **error, const char *format, ...)
{
  if (r->io_error != NULL)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: cannot read: %s", r->source,
                   r->io_error->message);
      return FALSE;
    }
  va_list args;
  va_start (args, format);
  char *raw = g_strdup_vprintf (format, args);
  char *message = g_utf8_make_valid (raw, -1);   /* quoted input may not be UTF-8 */
  g_free (raw);
  va_end (args);
  g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE, "%s: %s", r->source, message);
  g_free (message);
  return FALSE;
}

static guint32
le32 (const guint8 *p)
{
  guint32 v;
  memcpy (&v, p, sizeof v);
  return GUINT32_FROM_LE (v);
}

static guint64
le64 (const guint8 *p)
{
  guint64 v;
  memcpy (&v, p, sizeof v);
  return GUINT64_FROM_LE (v);
}

/* Reads a cache. With `expect`, a cache written for another version of the
 * source is refused with *stale set. */
CamlEmbeddings *
caml_emb_parse_cache (CamlEmbReader *r, const CamlEmbStamp *expect, gboolean *stale,
                      GError **error)
{
  XXH64_state_t hash;
  XXH64_reset (&hash, 0);
  r->hash = &hash;
  guint8 head[CACHE_HEADER];
  CamlEmbTable t = { 0 };
  guint8 *word = NULL;

  gsize got = caml_emb_reader_read (r, head, sizeof head);
  if (got < 8 || memcmp (head, CAML_EMB_CACHE_MAGIC, 8) != 0)
    {
      cache_fail (r, error, "not an embeddings cache (no magic " CAML_EMB_CACHE_MAGIC ")");
      goto fail;
    }
  if (got < sizeof head)
    {
      cache_fail (r, error, "truncated: %" G_GSIZE_FORMAT " bytes, shorter than the %d-byte "
                  "header", got, CACHE_HEADER);
      goto fail;
    }
  guint32 version = le32 (head + 8), dim = le32 (head + 12), n_words = le32 (head + 16);
  CamlEmbStamp stamp = { le64 (head + 24), (gint64) le64 (head + 32) };
  if (version != CACHE_VERSION)
    {
      cache_fail (r, error, "version %u, this build reads version %d", version, CACHE_VERSION);
      goto fail;
    }
  if (expect != NULL && (stamp.size != expect->size || stamp.mtime_us != expect->mtime_us))
    {
      *stale = TRUE;
      cache_fail (r, error, "stale: written for a source of %" G_GUINT64_FORMAT " bytes "
                  "modified at %" G_GINT64_FORMAT " µs, the source now has %" G_GUINT64_FORMAT
                  " bytes modified at %" G_GINT64_FORMAT " µs", stamp.size, stamp.mtime_us,
                  expect->size, expect->mtime_us);
      goto fail;
    }
  if (dim < 1 || dim > CAML_EMB_MAX_DIM || n_words < 1 || n_words > G_MAXINT)
    {
      cache_fail (r, error, "corrupt header: %u words of %u dimensions", n_words, dim);
      goto fail;
    }
  /* The vectors alone need this many bytes: check before allocating. */
  guint64 vector_bytes = (guint64) n_words * dim * sizeof (float);
  if (r->size >= 0 && (guint64) r->size < CACHE_HEADER + vector_bytes + 8)
    {
      cache_fail (r, error, "truncated: %u words of %u dimensions need more than the %"
                  G_GINT64_FORMAT " bytes the file holds", n_words, dim, r->size);
      goto fail;
    }

  caml_emb_table_init (&t, (int) dim);
  word = g_malloc (256);
  gsize word_capacity = 256;
  for (guint32 i = 0; i < n_words; i++)
    {
      guint8 len_bytes[4];
      if (caml_emb_reader_read (r, len_bytes, 4) < 4)
        {
          cache_fail (r, error, "truncated in word %u of %u", i + 1, n_words);
          goto fail;
        }
      guint32 len = le32 (len_bytes);
      if (len < 1 || len > CAML_EMB_MAX_WORD_BYTES)
        {
          cache_fail (r, error, "corrupt: word %u has length %u", i + 1, len);
          goto fail;
        }
      if (len > word_capacity)
        word = g_realloc (word, word_capacity = len);
      if (caml_emb_reader_read (r, word, len) < len)
        {
          cache_fail (r, error, "truncated in word %u of %u", i + 1, n_words);
          goto fail;
        }
      if (memchr (word, '\0', len) != NULL || !g_utf8_validate ((const char *) word, len, NULL)
          || caml_emb_table_add_word (&t, (const char *) word, len) < 0)
        {
          cache_fail (r, error, "corrupt: word %u is not valid UTF-8 or repeats one", i + 1);
          goto fail;
        }
    }
  caml_emb_table_reserve (&t, n_words);
  if (caml_emb_reader_read (r, t.vectors, vector_bytes) < vector_bytes)
    {
      cache_fail (r, error, "truncated in the vectors");
      goto fail;
    }
#if G_BYTE_ORDER != G_LITTLE_ENDIAN
  for (guint64 i = 0; i < (guint64) n_words * dim; i++)
    {
      guint32 bits;
      memcpy (&bits, &t.vectors[i], sizeof bits);
      bits = GUINT32_FROM_LE (bits);
      memcpy (&t.vectors[i], &bits, sizeof bits);
    }
#endif
  guint64 computed = XXH64_digest (&hash);
  r->hash = NULL;
  guint8 digest[8], extra;
  if (caml_emb_reader_read (r, digest, 8) < 8)
    {
      cache_fail (r, error, "truncated: the checksum is missing");
      goto fail;
    }
  if (caml_emb_reader_read (r, &extra, 1) == 1)
    {
      cache_fail (r, error, "unexpected bytes after the checksum");
      goto fail;
    }
  if (le64 (digest) != computed)
    {
      cache_fail (r, error, "checksum mismatch: the file is damaged");
      goto fail;
    }
  for (guint64 i = 0; i < (guint64) n_words * dim; i++)
    if (!isfinite (t.vectors[i]))
      {
        cache_fail (r, error, "corrupt: a value is not finite");
        goto fail;
      }
  g_free (word);
  return caml_emb_table_finish (&t);

fail:
  r->hash = NULL;
  g_free (word);
  caml_emb_table_clear (&t);
  return NULL;
}

/* A buffered writer to a file descriptor that hashes what it writes. */
typedef struct {
  int       fd;
  guint8   *buf;
  gsize     len;
  XXH64_state_t hash;
  int       errsv;     /* errno of the first failed write, 0 if none */
} Writer;

static void
writer_flush (Writer *w)
{
  gsize done = 0;
  while (w->errsv == 0 && done < w->len)
    {
      ssize_t n = write (w->fd, w->buf + done, w->len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        w->errsv = errno;
      else
        done += (gsize) n;
    }
  w->len = 0;
}

static void
writer_put (Writer *w, const void *data, gsize n, gboolean hash)
{
  const guint8 *p = data;
  if (hash)
    XXH64_update (&w->hash, p, n);
  while (n > 0)
    {
      gsize take = MIN (n, CAML_EMB_CHUNK - w->len);
      memcpy (w->buf + w->len, p, take);
      w->len += take;
      p += take;
      n -= take;
      if (w->len == CAML_EMB_CHUNK)
        writer_flush (w);
    }
}

static void
writer_u32 (Writer *w, guint32 v)
{
  v = GUINT32_TO_LE (v);
  writer_put (w, &v, sizeof v, TRUE);
}

static void
writer_u64 (Writer *w, guint64 v)
{
  v = GUINT64_TO_LE (v);
  writer_put (w, &v, sizeof v, TRUE);
}

gboolean
caml_emb_cache_write (const CamlEmbeddings *emb, CamlEmbeddingsFormat source_format,
                      const CamlEmbStamp *stamp, const char *path, GError **error)
{
  char *tmp = g_strconcat (path, ".XXXXXX", NULL);
  int fd = g_mkstemp_full (tmp, O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      int errsv = errno;
      g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: cannot create a temporary file: %s",
                   path, g_strerror (errsv));
      g_free (tmp);
      return FALSE;
    }
  Writer w = { .fd = fd, .buf = g_malloc (CAML_EMB_CHUNK) };
  XXH64_reset (&w.hash, 0);
  int n = caml_vocab_size (emb->vocab);

  writer_put (&w, CAML_EMB_CACHE_MAGIC, 8, TRUE);
  writer_u32 (&w, CACHE_VERSION);
  writer_u32 (&w, (guint32) emb->dim);
  writer_u32 (&w, (guint32) n);
  writer_u32 (&w, source_format);
  writer_u64 (&w, stamp->size);
  writer_u64 (&w, (guint64) stamp->mtime_us);
  for (int i = 0; i < n; i++)
    {
      const char *word = caml_vocab_word (emb->vocab, i);
      gsize len = strlen (word);
      writer_u32 (&w, (guint32) len);
      writer_put (&w, word, len, TRUE);
    }
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  writer_put (&w, emb->vectors, (gsize) n * emb->dim * sizeof (float), TRUE);
#else
  for (gsize i = 0; i < (gsize) n * emb->dim; i++)
    {
      guint32 bits;
      memcpy (&bits, &emb->vectors[i], sizeof bits);
      writer_u32 (&w, bits);
    }
#endif
  guint64 digest = GUINT64_TO_LE (XXH64_digest (&w.hash));
  writer_put (&w, &digest, sizeof digest, FALSE);
  writer_flush (&w);
  g_free (w.buf);

  int errsv = w.errsv;
  if (errsv == 0 && fsync (fd) != 0)
    errsv = errno;
  if (close (fd) != 0 && errsv == 0)
    errsv = errno;
  if (errsv == 0 && g_rename (tmp, path) != 0)
    errsv = errno;
  if (errsv != 0)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: cannot write: %s", path,
                   g_strerror (errsv));
      g_unlink (tmp);
    }
  g_free (tmp);
  return errsv == 0;
}
