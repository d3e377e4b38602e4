/* sem_data.c — the text files `caml sem` reads.
 *
 *   sentence pairs   `sentence<TAB>sentence<TAB>score` per line (SICK's
 *                    relatedness files): exactly three fields, the score a
 *                    finite number.
 *   text columns     any tab-separated file: every field that is not a
 *                    number is a sentence (SICK's two sentences, SST's
 *                    sentence without its label).
 *   word counts      `word count` per line (enwiki_vocab_min200.txt, SIF's
 *                    word frequencies), separated by a space or a tab.
 *
 * In all three, lines end with \r\n, \n or a lone \r (caml_line_split),
 * blank lines (empty, or only spaces and tabs) are skipped, text must be
 * UTF-8 (a byte-order mark at the start is skipped), and errors name the
 * file and the line ("sickdev:12: …"), and the column where it matters.
 * The files are small (a few MB): each is read whole, then split. */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "caml-private.h"
#include "lines-private.h"

/* ---------------------------------------------------------------- lines */

typedef struct {
  const char *source;
  const char *p, *end;
  int         line_no;
  char       *line;      /* the current line, owned, without its line end */
  gsize       line_len;  /* its length in bytes (NUL bytes included) */
} Lines;

static void
lines_init (Lines *l, const char *data, gsize length, const char *source)
{
  *l = (Lines) { .source = source, .p = data, .end = data + length };
  /* A UTF-8 byte-order mark starts the file, not its first field (the JSON,
   * GloVe and IMDB readers skip it too). */
  if (length >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0)
    l->p += 3;
}

/* The next line that is not blank; FALSE at the end. */
static gboolean
lines_next (Lines *l)
{
  while (l->p < l->end)
    {
      gsize next;
      gsize len = caml_line_split (l->p, (gsize) (l->end - l->p), &next);
      g_free (l->line);
      l->line = g_malloc (len + 1);
      memcpy (l->line, l->p, len);
      l->line[len] = '\0';
      l->line_len = len;
      l->p += next;
      l->line_no++;
      if (!caml_line_is_blank (l->line, len))
        return TRUE;
    }
  g_clear_pointer (&l->line, g_free);
  return FALSE;
}

static void
lines_clear (Lines *l)
{
  g_clear_pointer (&l->line, g_free);
}

/* "source:line: message". */
G_GNUC_PRINTF (3, 0) static void
lines_fail_valist (const Lines *l, GError **error, const char *format, va_list args)
{
  char *raw = g_strdup_vprintf (format, args);
  char *message = g_utf8_make_valid (raw, -1);   /* quoted input may not be UTF-8 */
  g_free (raw);
  g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE, "%s:%d: %s", l->source, l->line_no,
               message);
  g_free (message);
}

G_GNUC_PRINTF (3, 4) static void
lines_fail (const Lines *l, GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  lines_fail_valist (l, error, format, args);
  va_end (args);
}

/* The current line is UTF-8 without NUL bytes (caml_line_check_text). */
static gboolean
lines_check_text (const Lines *l, GError **error)
{
  return caml_line_check_text (l->line, l->line_len, l->source, l->line_no, error);
}

/* text for a message: control characters, quotes and backslashes escaped,
 * UTF-8 kept as it is. Free with g_free. */
static char *
shown (const char *text)
{
  char high[129];   /* the bytes 0x80…0xff: not escaped */
  for (int i = 0; i < 128; i++)
    high[i] = (char) (0x80 + i);
  high[128] = '\0';
  return g_strescape (text, high);
}

typedef enum {
  NUMBER_OK,
  NUMBER_NONE,       /* not a number */
  NUMBER_NOT_FINITE, /* a number, but NaN or beyond the double range */
} NumberParse;

/* A number filling the whole field (surrounding spaces allowed); only a
 * finite one is stored in *out. */
static NumberParse
parse_number (const char *field, double *out)
{
  while (*field == ' ')
    field++;
  if (*field == '\0')
    return NUMBER_NONE;
  char *end = NULL;
  double v = g_ascii_strtod (field, &end);
  if (end == field)
    return NUMBER_NONE;
  while (*end == ' ')
    end++;
  if (*end != '\0')
    return NUMBER_NONE;
  if (!isfinite (v))
    return NUMBER_NOT_FINITE;
  *out = v;
  return NUMBER_OK;
}

/* A sentence field: surrounding spaces dropped. */
static char *
sentence_field (const char *field)
{
  return g_strstrip (g_strdup (field));
}

/* -------------------------------------------------------- sentence pairs */

void
caml_sentence_pairs_free (CamlSentencePairs *pairs)
{
  if (pairs == NULL)
    return;
  g_strfreev (pairs->a);
  g_strfreev (pairs->b);
  g_free (pairs->score);
  g_free (pairs);
}

CamlSentencePairs *
caml_sentence_pairs_load_data (const char *data, gsize length, const char *source,
                               GError **error)
{
  g_return_val_if_fail (data != NULL || length == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  source = source != NULL ? source : "<pairs>";
  Lines l;
  lines_init (&l, data, length, source);
  GPtrArray *a = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *b = g_ptr_array_new_with_free_func (g_free);
  GArray *score = g_array_new (FALSE, FALSE, sizeof (double));
  gboolean ok = TRUE;

  while (ok && lines_next (&l))
    {
      if (!(ok = lines_check_text (&l, error)))
        break;
      char **fields = g_strsplit (l.line, "\t", -1);
      guint n = g_strv_length (fields);
      double v;
      NumberParse number;
      if (n != 3)
        {
          lines_fail (&l, error, "expected 3 tab-separated fields (sentence, sentence, "
                      "score), found %u", n);
          ok = FALSE;
        }
      else if ((number = parse_number (fields[2], &v)) != NUMBER_OK)
        {
          g_autofree char *text = shown (g_strstrip (fields[2]));
          lines_fail (&l, error, "the score \"%s\" is not a %snumber", text,
                      number == NUMBER_NOT_FINITE ? "finite " : "");
          ok = FALSE;
        }
      else
        {
          char *first = sentence_field (fields[0]), *second = sentence_field (fields[1]);
          if (*first == '\0' || *second == '\0')
            {
              lines_fail (&l, error, "the %s sentence is empty", *first == '\0' ? "first"
                                                                               : "second");
              ok = FALSE;
              g_free (first);
              g_free (second);
            }
          else
            {
              g_ptr_array_add (a, first);
              g_ptr_array_add (b, second);
              g_array_append_val (score, v);
            }
        }
      g_strfreev (fields);
    }
  if (ok && score->len == 0)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE, "%s: no sentence pairs", source);
      ok = FALSE;
    }
  lines_clear (&l);
  if (!ok)
    {
      g_ptr_array_free (a, TRUE);
      g_ptr_array_free (b, TRUE);
      g_array_free (score, TRUE);
      return NULL;
    }
  CamlSentencePairs *pairs = g_new0 (CamlSentencePairs, 1);
  pairs->n = (int) score->len;
  g_ptr_array_add (a, NULL);
  g_ptr_array_add (b, NULL);
  g_ptr_array_set_free_func (a, NULL);
  g_ptr_array_set_free_func (b, NULL);
  pairs->a = (char **) g_ptr_array_free (a, FALSE);
  pairs->b = (char **) g_ptr_array_free (b, FALSE);
  pairs->score = (double *) g_array_free (score, FALSE);
  return pairs;
}

CamlSentencePairs *
caml_sentence_pairs_load (const char *path, GError **error)
{
  char *contents = NULL;
  gsize length = 0;
  if (!caml_file_get_contents (path, &contents, &length, error))
    return NULL;
  CamlSentencePairs *pairs = caml_sentence_pairs_load_data (contents, length, path, error);
  g_free (contents);
  return pairs;
}

/* ---------------------------------------------------------- text columns */

char **
caml_text_columns_load_data (const char *data, gsize length, const char *source,
                             GError **error)
{
  g_return_val_if_fail (data != NULL || length == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  source = source != NULL ? source : "<text>";
  Lines l;
  lines_init (&l, data, length, source);
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  gboolean ok = TRUE;

  while (ok && lines_next (&l))
    {
      if (!(ok = lines_check_text (&l, error)))
        break;
      char **fields = g_strsplit (l.line, "\t", -1);
      for (int i = 0; fields[i] != NULL; i++)
        {
          double v;
          char *text = sentence_field (fields[i]);
          if (*text == '\0' || parse_number (text, &v) == NUMBER_OK)
            g_free (text);
          else
            g_ptr_array_add (out, text);
        }
      g_strfreev (fields);
    }
  lines_clear (&l);
  if (ok && out->len == 0)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE, "%s: no text (every field is empty "
                   "or a number)", source);
      ok = FALSE;
    }
  if (!ok)
    {
      g_ptr_array_free (out, TRUE);
      return NULL;
    }
  g_ptr_array_add (out, NULL);
  g_ptr_array_set_free_func (out, NULL);
  return (char **) g_ptr_array_free (out, FALSE);
}

char **
caml_text_columns_load (const char *path, GError **error)
{
  char *contents = NULL;
  gsize length = 0;
  if (!caml_file_get_contents (path, &contents, &length, error))
    return NULL;
  char **texts = caml_text_columns_load_data (contents, length, path, error);
  g_free (contents);
  return texts;
}

/* ----------------------------------------------------------- word counts */

CamlVocab *
caml_word_counts_load_data (const char *data, gsize length, const char *source,
                            GError **error)
{
  g_return_val_if_fail (data != NULL || length == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  source = source != NULL ? source : "<word counts>";
  Lines l;
  lines_init (&l, data, length, source);
  CamlVocab *vocab = caml_vocab_new ();
  GArray *first_line = g_array_new (FALSE, FALSE, sizeof (int));   /* id → line */
  gboolean ok = TRUE;

  while (ok && lines_next (&l))
    {
      if (!(ok = lines_check_text (&l, error)))
        break;
      char **fields = g_strsplit_set (g_strstrip (l.line), " \t", -1);
      /* Runs of separators give empty fields: drop them. */
      int n = 0;
      for (int i = 0; fields[i] != NULL; i++)
        if (*fields[i] != '\0')
          fields[n++] = fields[i];
        else
          g_free (fields[i]);
      fields[n] = NULL;
      guint64 count = 0;
      if (n != 2)
        {
          lines_fail (&l, error, "expected a word and its count, found %d field%s", n,
                      n == 1 ? "" : "s");
          ok = FALSE;
        }
      else if (!g_ascii_string_to_unsigned (fields[1], 10, 0, G_MAXINT64, &count, NULL))
        {
          g_autofree char *text = shown (fields[1]);
          lines_fail (&l, error, "the count \"%s\" is not a whole number ≥ 0", text);
          ok = FALSE;
        }
      else
        {
          int before = caml_vocab_size (vocab);
          int id = caml_vocab_add (vocab, fields[0], (gint64) count);
          if (id < before)
            {
              g_autofree char *text = shown (fields[0]);
              lines_fail (&l, error, "the word \"%s\" appears again (first on line %d)", text,
                          g_array_index (first_line, int, id));
              ok = FALSE;
            }
          else
            g_array_append_val (first_line, l.line_no);
        }
      g_strfreev (fields);
    }
  lines_clear (&l);
  g_array_free (first_line, TRUE);
  if (ok && caml_vocab_size (vocab) == 0)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE, "%s: no words", source);
      ok = FALSE;
    }
  if (!ok)
    {
      caml_vocab_unref (vocab);
      return NULL;
    }
  return vocab;
}

CamlVocab *
caml_word_counts_load (const char *path, GError **error)
{
  char *contents = NULL;
  gsize length = 0;
  if (!caml_file_get_contents (path, &contents, &length, error))
    return NULL;
  CamlVocab *vocab = caml_word_counts_load_data (contents, length, path, error);
  g_free (contents);
  return vocab;
}
