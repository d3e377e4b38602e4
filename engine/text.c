/* text.c — the tokenizer and the vocabulary every text loader shares.
 *
 * The tokenizer (also documented in docs/text.md):
 *
 *   1. Lower-case (Unicode-aware) and read the text as UTF-8; invalid bytes
 *      separate tokens and are dropped.
 *   2. HTML line breaks ("<br />", "<br/>", "<br>") are spaces: IMDB reviews
 *      are full of them.
 *   3. A word is a run of letters and digits, with inner apostrophes, hyphens
 *      and (between digits) dots and commas kept: "well-known", "3.5",
 *      "10,000". The typographic apostrophe ’ counts as '.
 *   4. English clitics are split the way GloVe's and the Penn Treebank's
 *      tokens are: "don't" → "do" "n't", "it's" → "it" "'s", also 're, 've,
 *      'll, 'd, 'm. A clitic already separated ("it 's", as in SST) stays one
 *      token "'s".
 *   5. Every other character that is not a space is a token of its own; a run
 *      of the same punctuation character stays together ("...", "!!").
 *
 * SST and SICK are already tokenized this way, so they pass through
 * unchanged. */
#include <string.h>

#include "caml-private.h"
#define XXH_STATIC_LINKING_ONLY   /* XXH64_state_t on the stack */
#include <xxhash.h>

/* ------------------------------------------------------------- tokenizer */

static gboolean
is_word_char (gunichar c)
{
  return g_unichar_isalnum (c) || g_unichar_ismark (c);
}

static const char *const clitics[] = { "n't", "'s", "'re", "'ve", "'ll", "'d", "'m", NULL };

/* Emit word[0..len) with its clitic split off. */
static void
emit_word (const char *word, gsize len, CamlTokenFunc func, gpointer user_data)
{
  for (int k = 0; clitics[k] != NULL; k++)
    {
      gsize cl = strlen (clitics[k]);
      if (len > cl && memcmp (word + len - cl, clitics[k], cl) == 0)
        {
          func (word, len - cl, user_data);
          func (word + len - cl, cl, user_data);
          return;
        }
    }
  func (word, len, user_data);
}

void
caml_tokenize (const char *text, gssize length, CamlTokenFunc func, gpointer user_data)
{
  if (length < 0)
    length = (gssize) strlen (text);
  char *valid = g_utf8_make_valid (text, length);   /* invalid bytes → U+FFFD */
  char *lower = g_utf8_strdown (valid, -1);
  g_free (valid);
  GString *word = g_string_sized_new (32);
  const char *p = lower, *end = lower + strlen (lower);

  while (p < end)
    {
      gunichar c = g_utf8_get_char_validated (p, end - p);
      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          if (word->len > 0)
            emit_word (word->str, word->len, func, user_data);
          g_string_truncate (word, 0);
          p++;
          continue;
        }
      const char *next = g_utf8_next_char (p);
      if (c == 0x2019)   /* ’ */
        c = '\'';
      if (c == 0xFFFD)   /* an invalid byte: a separator */
        c = ' ';

      if (c == '<' && (g_str_has_prefix (p, "<br />") || g_str_has_prefix (p, "<br/>")
                       || g_str_has_prefix (p, "<br>")))
        {
          if (word->len > 0)
            emit_word (word->str, word->len, func, user_data);
          g_string_truncate (word, 0);
          p = strchr (p, '>') + 1;
          continue;
        }

      if (is_word_char (c))
        {
          g_string_append_unichar (word, c);
          p = next;
          continue;
        }

      /* Joiners inside a word: ' and - between word characters; . and ,
       * between digits. */
      if (word->len > 0 && next < end)
        {
          gunichar n = g_utf8_get_char_validated (next, end - next);
          gboolean joins = FALSE;
          if ((c == '\'' || c == '-') && n != (gunichar) -1 && n != (gunichar) -2
              && is_word_char (n))
            joins = TRUE;
          if ((c == '.' || c == ',') && g_ascii_isdigit (word->str[word->len - 1])
              && n < 128 && g_ascii_isdigit ((char) n))
            joins = TRUE;
          if (joins)
            {
              g_string_append_unichar (word, c);
              p = next;
              continue;
            }
        }

      if (word->len > 0)
        emit_word (word->str, word->len, func, user_data);
      g_string_truncate (word, 0);

      if (g_unichar_isspace (c))
        {
          p = next;
          continue;
        }

      /* A clitic standing alone: "'s" after a space (or "n't"). */
      if (c == '\'')
        {
          gboolean matched = FALSE;
          for (int k = 1; clitics[k] != NULL && !matched; k++)
            {
              gsize cl = strlen (clitics[k]);
              if ((gsize) (end - p) >= cl && memcmp (p, clitics[k], cl) == 0
                  && (p + cl == end || !is_word_char (g_utf8_get_char (p + cl))))
                {
                  func (p, cl, user_data);
                  p += cl;
                  matched = TRUE;
                }
            }
          if (matched)
            continue;
        }

      /* Punctuation: a run of the same character is one token. */
      const char *q = next;
      while (q < end && g_utf8_get_char_validated (q, end - q) == c)
        q = g_utf8_next_char (q);
      func (p, (gsize) (q - p), user_data);
      p = q;
    }
  if (word->len > 0)
    emit_word (word->str, word->len, func, user_data);

  g_string_free (word, TRUE);
  g_free (lower);
}

static void
collect_token (const char *token, gsize length, gpointer user_data)
{
  g_ptr_array_add (user_data, g_strndup (token, length));
}

char **
caml_tokenize_strv (const char *text, gssize length)
{
  GPtrArray *tokens = g_ptr_array_new ();
  caml_tokenize (text, length, collect_token, tokens);
  g_ptr_array_add (tokens, NULL);
  return (char **) g_ptr_array_free (tokens, FALSE);
}

/* ------------------------------------------------------------ vocabulary */

struct _CamlVocab {
  gint          ref_count;
  GStringChunk *chunk;   /* the words' bytes */
  GHashTable   *index;   /* word (in chunk) → id + 1 */
  GPtrArray    *words;   /* id → word (in chunk) */
  GArray       *counts;  /* id → gint64 occurrences */
};

CamlVocab *
caml_vocab_new (void)
{
  CamlVocab *v = g_new0 (CamlVocab, 1);
  v->ref_count = 1;
  v->chunk = g_string_chunk_new (1 << 16);
  v->index = g_hash_table_new (g_str_hash, g_str_equal);
  v->words = g_ptr_array_new ();
  v->counts = g_array_new (FALSE, TRUE, sizeof (gint64));
  return v;
}

CamlVocab *
caml_vocab_ref (CamlVocab *vocab)
{
  g_atomic_int_inc (&vocab->ref_count);
  return vocab;
}

void
caml_vocab_unref (CamlVocab *vocab)
{
  if (vocab == NULL || !g_atomic_int_dec_and_test (&vocab->ref_count))
    return;
  g_hash_table_unref (vocab->index);
  g_ptr_array_unref (vocab->words);
  g_array_unref (vocab->counts);
  g_string_chunk_free (vocab->chunk);
  g_free (vocab);
}

int
caml_vocab_size (const CamlVocab *vocab)
{
  return (int) vocab->words->len;
}

int
caml_vocab_lookup (const CamlVocab *vocab, const char *word)
{
  gpointer id = g_hash_table_lookup (vocab->index, word);
  return id != NULL ? GPOINTER_TO_INT (id) - 1 : -1;
}

int
caml_vocab_add_len (CamlVocab *vocab, const char *word, gsize length, gint64 count)
{
  char stack[256];
  char *key = length < sizeof stack ? stack : g_malloc (length + 1);
  memcpy (key, word, length);
  key[length] = '\0';

  int id = caml_vocab_lookup (vocab, key);
  if (id < 0)
    {
      char *stored = g_string_chunk_insert_len (vocab->chunk, key, (gssize) length);
      id = (int) vocab->words->len;
      g_ptr_array_add (vocab->words, stored);
      gint64 zero = 0;
      g_array_append_val (vocab->counts, zero);
      g_hash_table_insert (vocab->index, stored, GINT_TO_POINTER (id + 1));
    }
  g_array_index (vocab->counts, gint64, id) += count;
  if (key != stack)
    g_free (key);
  return id;
}

int
caml_vocab_add (CamlVocab *vocab, const char *word, gint64 count)
{
  return caml_vocab_add_len (vocab, word, strlen (word), count);
}

const char *
caml_vocab_word (const CamlVocab *vocab, int id)
{
  g_return_val_if_fail (id >= 0 && (guint) id < vocab->words->len, NULL);
  return g_ptr_array_index (vocab->words, id);
}

gint64
caml_vocab_count (const CamlVocab *vocab, int id)
{
  g_return_val_if_fail (id >= 0 && (guint) id < vocab->counts->len, 0);
  return g_array_index (vocab->counts, gint64, id);
}

guint64
caml_vocab_fingerprint (const CamlVocab *vocab)
{
  XXH64_state_t hash;
  XXH64_reset (&hash, 0);
  for (guint id = 0; id < vocab->words->len; id++)
    {
      const char *word = g_ptr_array_index (vocab->words, id);
      XXH64_update (&hash, word, strlen (word) + 1);   /* with its NUL: "ab" "c" ≠ "a" "bc" */
    }
  return XXH64_digest (&hash);
}
