/* embeddings-glove.c — word vectors from GloVe text.
 *
 * GloVe text: one "word v1 … vD" per line, fields separated by spaces or
 * tabs. D is the first line's field count minus one; an optional word2vec
 * header "N D" (two integers) may come first. Blank lines are skipped; every
 * other line must hold exactly D numbers after its word. A word may hold
 * spaces (a few lines of GloVe's 840B set): the last D fields are the values,
 * the ones before the word, joined by single spaces — when the field just
 * before the values is not itself a number. A word appears once. */
#include <stdarg.h>
#include <string.h>

#include "embeddings-private.h"
#include "lines-private.h"

/* -------------------------------------------------------------- GloVe text */

G_GNUC_PRINTF (4, 5) static gboolean
line_fail (const CamlEmbReader *r, GError **error, guint64 line, const char *format, ...)
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
read_line (CamlEmbReader *r, GString *line)
{
  g_string_truncate (line, 0);
  if (!caml_emb_reader_fill (r))
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
          if (cr_at_end && caml_emb_reader_peek (r) == '\n')
            r->pos++;
          break;
        }
      if (!caml_emb_reader_fill (r))
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

CamlEmbeddings *
caml_emb_parse_glove (CamlEmbReader *r, GError **error)
{
  GString *line = g_string_sized_new (2048);
  GString *joined = g_string_new (NULL);   /* a word of several fields */
  GPtrArray *fields = g_ptr_array_new ();
  GArray *word_lines = g_array_new (FALSE, FALSE, sizeof (guint64));   /* id → line */
  CamlEmbTable t = { 0 };
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
              && is_count (f[1], CAML_EMB_MAX_DIM, &dim) && dim >= 1)
            {
              /* a word2vec header: "N D" */
              header = TRUE;
              header_words = n_words;
              caml_emb_table_init (&t, (int) dim);
              have_table = TRUE;
              continue;
            }
          if (n_fields < 2)
            {
              ok = line_fail (r, error, line_no, "expected a word and its vector, found "
                              "one field: is this a GloVe text file?");
              break;
            }
          if (n_fields - 1 > CAML_EMB_MAX_DIM)
            {
              ok = line_fail (r, error, line_no, "%d values: more than %d dimensions",
                              n_fields - 1, CAML_EMB_MAX_DIM);
              break;
            }
          caml_emb_table_init (&t, n_fields - 1);
          have_table = TRUE;
        }
      /* A word may hold spaces (GloVe's 840B set has ". . ." and "at
       * name@domain.com"): with more than D + 1 fields, the last D are the
       * values and the others the word, joined by single spaces — unless the
       * field before the values is a number: then the line has too many. */
      int word_fields = n_fields - t.dim;
      double unused;
      if (word_fields < 1
          || (word_fields > 1 && caml_emb_parse_decimal (f[word_fields - 1],
                                                         strlen (f[word_fields - 1]),
                                                         FALSE, &unused)))
        {
          g_autofree char *w = caml_emb_quote_word (f[0], strlen (f[0]));
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
      int id = caml_emb_table_add_word (&t, word, word_len);
      if (id < 0)
        {
          g_autofree char *w = caml_emb_quote_word (word, word_len);
          int first = caml_vocab_lookup (t.vocab, word);
          ok = line_fail (r, error, line_no, "the word %s appears again (first on line %"
                          G_GUINT64_FORMAT ")", w, g_array_index (word_lines, guint64, first));
          break;
        }
      g_array_append_val (word_lines, line_no);
      float *row = caml_emb_table_row (&t, (gsize) id);
      for (int k = 0; k < t.dim; k++)
        {
          double v;
          const char *s = f[word_fields + k];
          if (!caml_emb_parse_decimal (s, strlen (s), FALSE, &v))
            {
              g_autofree char *bad = caml_emb_quote_word (s, strlen (s));
              ok = line_fail (r, error, line_no, "value %d, %s, is not a number", k + 1, bad);
              break;
            }
          if (!caml_emb_fits_float (v))
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
      caml_emb_table_clear (&t);
      return NULL;
    }
  return caml_emb_table_finish (&t);
}
