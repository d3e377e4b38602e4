/* text_data.c — labelled text as token-id data sets.
 *
 * A labelled file has one sample per line, `text<TAB>label` (SST's form),
 * the label a class index 0…999. The text is split with caml_tokenize; the
 * training set grows the vocabulary (every word seen in training gets an
 * id: the models are dictionary-free), other sets map words outside it to
 * CAML_TOKEN_OOV. A UTF-8 byte-order mark at the start is skipped; lines
 * end in \r\n, \n or a lone \r (caml_line_split), and blank lines (empty,
 * or only spaces and tabs) are skipped. Errors name the file and the line. */
#include <string.h>

#include "caml-private.h"
#include "lines-private.h"

#ifndef CAML_DEFAULT_SHARED_DIR
#define CAML_DEFAULT_SHARED_DIR "../shared/datasets"
#endif

#define MAX_LABEL 999

const char *
caml_shared_datasets_dir (void)
{
  const char *env = g_getenv ("CAML_SHARED_DATASETS");
  return env != NULL && *env != '\0' ? env : CAML_DEFAULT_SHARED_DIR;
}

/* Collects one sample's ids. */
typedef struct {
  CamlVocab *vocab;
  gboolean   grow;
  GArray    *ids;   /* gint32, every sample back to back */
} TokenSink;

static void
add_token (const char *token, gsize length, gpointer user_data)
{
  TokenSink *sink = user_data;
  gint32 id;
  if (sink->grow)
    id = caml_vocab_add_len (sink->vocab, token, length, 1);
  else
    {
      char stack[256];
      char *key = length < sizeof stack ? stack : g_malloc (length + 1);
      memcpy (key, token, length);
      key[length] = '\0';
      id = caml_vocab_lookup (sink->vocab, key);
      if (id < 0)
        id = CAML_TOKEN_OOV;
      if (key != stack)
        g_free (key);
    }
  g_array_append_val (sink->ids, id);
}

CamlDataset *
caml_text_dataset_from_texts (char **texts, const float *labels, int n, int n_classes,
                              CamlVocab *vocab, gboolean grow)
{
  TokenSink sink = { vocab, grow, g_array_sized_new (FALSE, FALSE, sizeof (gint32), 16 * n) };
  gint64 *offsets = g_new (gint64, n + 1);
  int t_max = 1;
  for (int i = 0; i < n; i++)
    {
      offsets[i] = sink.ids->len;
      caml_tokenize (texts[i], -1, add_token, &sink);
      t_max = MAX (t_max, (int) (sink.ids->len - offsets[i]));
    }
  offsets[n] = sink.ids->len;

  CamlShape shape = caml_shape_tokens (t_max, caml_vocab_size (vocab));
  CamlDataset *set = caml_dataset_new (n, &shape, 1, n_classes);
  memcpy (set->y, labels, (size_t) n * sizeof (float));
  set->offsets = offsets;
  set->tokens = (gint32 *) g_array_free (sink.ids, FALSE);
  set->vocab = caml_vocab_ref (vocab);
  set->texts = texts;
  return set;
}

/* Splits "text<TAB>label" at its one tab. */
static gboolean
parse_labelled_line (char *line, const char *path, int lineno, char **text, int *label,
                     GError **error)
{
  char *tab = strchr (line, '\t');
  if (tab == NULL)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE,
                   "%s:%d: expected text<TAB>label, found no tab", path, lineno);
      return FALSE;
    }
  int tabs = 0;
  for (const char *c = tab; *c != '\0'; c++)
    tabs += *c == '\t';
  if (tabs > 1)
    {
      /* Text<TAB>label<TAB>more was read as the text "text<TAB>label" with
       * the label of the last field: a column too many is an error. */
      g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE,
                   "%s:%d: expected text<TAB>label, found %d tabs (%d fields)", path, lineno,
                   tabs, tabs + 1);
      return FALSE;
    }
  *tab = '\0';
  if (caml_line_is_blank (line, (gsize) (tab - line)))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE, "%s:%d: the text is empty", path,
                   lineno);
      return FALSE;
    }
  char *value = g_strstrip (tab + 1);
  guint64 v;
  if (!g_ascii_string_to_unsigned (value, 10, 0, MAX_LABEL, &v, NULL))
    {
      g_autofree char *shown = g_utf8_make_valid (value, MIN (strlen (value), 40));
      g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE,
                   "%s:%d: the label \"%s\" is not a class index 0…%d", path, lineno,
                   shown, MAX_LABEL);
      return FALSE;
    }
  *text = line;
  *label = (int) v;
  return TRUE;
}

CamlDataset *
caml_text_load_tsv (const char *path, CamlVocab *vocab, gboolean grow, int limit,
                    GError **error)
{
  char *contents = NULL;
  gsize length = 0;
  if (!caml_file_get_contents (path, &contents, &length, error))
    return NULL;
  CamlDataset *set = caml_text_load_tsv_data (contents, length, path, vocab, grow, limit,
                                              error);
  g_free (contents);
  return set;
}

CamlDataset *
caml_text_load_tsv_data (const char *data, gsize length, const char *path, CamlVocab *vocab,
                         gboolean grow, int limit, GError **error)
{
  /* A UTF-8 byte-order mark starts the file, not the first sentence (the
   * JSON, GloVe and IMDB readers skip it too). */
  gsize bom = length >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
  data += bom;
  length -= bom;
  /* A copy that keeps NUL bytes, for the lines' check to find. */
  char *contents = g_malloc (length + 1);
  memcpy (contents, data, length);
  contents[length] = '\0';

  GPtrArray *texts = g_ptr_array_new_with_free_func (g_free);
  GArray *labels = g_array_new (FALSE, FALSE, sizeof (float));
  GArray *lines = g_array_new (FALSE, FALSE, sizeof (gint32));
  int max_label = 1, lineno = 0;
  gboolean ok = TRUE;
  gsize pos = 0;
  while (pos < length && ok && (limit <= 0 || (int) texts->len < limit))
    {
      char *line = contents + pos;
      gsize next;
      gsize len = caml_line_split (line, length - pos, &next);
      line[len] = '\0';
      pos += next;
      lineno++;
      if (caml_line_is_blank (line, len))   /* blank lines are skipped */
        continue;
      char *text;
      int label;
      ok = caml_line_check_text (line, len, path, lineno, error)
           && parse_labelled_line (line, path, lineno, &text, &label, error);
      if (ok)
        {
          float y = (float) label;
          gint32 at = lineno;
          g_ptr_array_add (texts, g_strdup (text));
          g_array_append_val (labels, y);
          g_array_append_val (lines, at);
          max_label = MAX (max_label, label);
        }
    }
  g_free (contents);
  if (ok && texts->len == 0)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE, "%s: no samples (%s)", path,
                   length == 0 ? "the file is empty" : "only blank lines");
      ok = FALSE;
    }

  CamlDataset *set = NULL;
  if (ok)
    {
      int n = (int) texts->len;
      g_ptr_array_add (texts, NULL);
      g_ptr_array_set_free_func (texts, NULL);
      set = caml_text_dataset_from_texts ((char **) g_ptr_array_free (texts, FALSE),
                                          (const float *) labels->data, n, max_label + 1,
                                          vocab, grow);
      set->source = g_strdup (path);
      set->lines = (gint32 *) g_array_free (g_steal_pointer (&lines), FALSE);
    }
  else
    g_ptr_array_free (texts, TRUE);
  g_array_free (labels, TRUE);
  if (lines != NULL)
    g_array_free (lines, TRUE);
  return set;
}

void
caml_text_dataset_truncate (CamlDataset *set, int max_tokens)
{
  if (max_tokens <= 0)
    return;
  gint64 out = 0;
  int t_max = 1;
  for (int i = 0; i < set->n; i++)
    {
      gint64 start = set->offsets[i], end = set->offsets[i + 1];
      gint64 len = MIN (end - start, (gint64) max_tokens);
      memmove (set->tokens + out, set->tokens + start, (gsize) len * sizeof (gint32));
      set->offsets[i] = out;
      out += len;
      t_max = MAX (t_max, (int) len);
    }
  set->offsets[set->n] = out;
  set->x_shape.dims[0] = t_max;
}

void
caml_text_dataset_add_ngrams (CamlDataset *set, int n, gboolean grow)
{
  if (n < 2)
    return;
  GArray *ids = g_array_sized_new (FALSE, FALSE, sizeof (gint32),
                                   (guint) (n * set->offsets[set->n]));
  GString *key = g_string_new (NULL);
  int t_max = 1;
  for (int i = 0; i < set->n; i++)
    {
      gint64 start = set->offsets[i], end = set->offsets[i + 1];
      gint64 first = ids->len;
      g_array_append_vals (ids, set->tokens + start, (guint) (end - start));
      for (int k = 2; k <= n; k++)          /* the bigrams, then the trigrams, … */
        for (gint64 j = start; j + k <= end; j++)
          {
            gint32 id = CAML_TOKEN_OOV;
            gboolean known = TRUE;
            g_string_truncate (key, 0);
            for (int q = 0; q < k && known; q++)
              {
                gint32 w = set->tokens[j + q];
                known = w >= 0;
                if (known)
                  {
                    if (q > 0)
                      g_string_append_c (key, ' ');
                    g_string_append (key, caml_vocab_word (set->vocab, w));
                  }
              }
            if (known)
              {
                id = grow ? caml_vocab_add (set->vocab, key->str, 1)
                          : caml_vocab_lookup (set->vocab, key->str);
                if (id < 0)
                  id = CAML_TOKEN_OOV;
              }
            g_array_append_val (ids, id);
          }
      set->offsets[i] = first;
      t_max = MAX (t_max, (int) (ids->len - first));
    }
  set->offsets[set->n] = ids->len;
  g_free (set->tokens);
  set->tokens = (gint32 *) g_array_free (ids, FALSE);
  set->x_shape = caml_shape_tokens (t_max, caml_vocab_size (set->vocab));
  g_string_free (key, TRUE);
}

void
caml_text_dataset_unique (CamlDataset *set)
{
  int vocab = MAX (caml_vocab_size (set->vocab), 1);
  guint8 *seen = g_new0 (guint8, vocab);
  gint64 out = 0;
  int t_max = 1;
  for (int i = 0; i < set->n; i++)
    {
      gint64 start = set->offsets[i], end = set->offsets[i + 1], first = out;
      for (gint64 k = start; k < end; k++)
        {
          gint32 id = set->tokens[k];
          if (id >= 0 && id < vocab)
            {
              if (seen[id])
                continue;
              seen[id] = 1;
            }
          set->tokens[out++] = id;
        }
      for (gint64 k = first; k < out; k++)   /* clear this sample's marks */
        if (set->tokens[k] >= 0 && set->tokens[k] < vocab)
          seen[set->tokens[k]] = 0;
      set->offsets[i] = first;
      t_max = MAX (t_max, (int) (out - first));
    }
  set->offsets[set->n] = out;
  set->x_shape.dims[0] = t_max;
  g_free (seen);
}

void
caml_text_datasets_finish (CamlDataset *train, CamlDataset *test, int max_tokens)
{
  int t_max = MAX (train->x_shape.dims[0], test->x_shape.dims[0]);
  if (max_tokens > 0)
    t_max = MIN (t_max, max_tokens);
  int vocab = caml_vocab_size (train->vocab);
  int n_classes = MAX (train->n_classes, test->n_classes);
  train->x_shape = test->x_shape = caml_shape_tokens (t_max, vocab);
  train->n_classes = test->n_classes = n_classes;
}

void
caml_data_rnn_sanity (CamlDataset **train, CamlDataset **test)
{
  static const char *const train_texts[] = { "I am happy", "You are very angry", NULL };
  static const char *const test_texts[] = { "I am very happy", "You look angry", NULL };
  static const float labels[] = { 1, 0 };
  CamlVocab *vocab = caml_vocab_new ();
  *train = caml_text_dataset_from_texts (g_strdupv ((char **) train_texts), labels, 2, 2,
                                         vocab, TRUE);
  *test = caml_text_dataset_from_texts (g_strdupv ((char **) test_texts), labels, 2, 2,
                                        vocab, FALSE);
  caml_text_datasets_finish (*train, *test, 0);
  caml_vocab_unref (vocab);
}
