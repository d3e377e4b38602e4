/* words-page.h — the χ-for-words page: how context-free each word is.
 *
 * A layer with a per-word gate (CamlLayerOps.word_chi, e.g. CA-BSFE) gives
 * every word of the vocabulary a χ̃ ∈ [0, 1]. χ̃ → 1: the word is replaced by
 * the shared vector v0, as an unseen word is — it is context-free in the
 * paper's sense (Sec. 2.2: "is", "the"), carrying nothing of its own.
 * χ̃ → 0: the word keeps its own vector w' — it is context-sensitive. The
 * page shades words accordingly: light for context-free, dark for
 * context-sensitive.
 *
 * A layer with a gate per position of a text (CA-ATT, CA-RNN) gives a χ for
 * every word of a text instead, which may depend on the word's context; the
 * page shades each word of the samples by its own χ, and ranks the words by
 * their mean χ.
 *
 * Plain C without a display: `caml train` writes the page, and the GUI can
 * build the same HTML. */
#pragma once

#include "caml.h"

/* A word and its gate. */
typedef struct {
  const char *word;    /* borrowed from the vocabulary */
  float       chi;
  gint64      count;   /* occurrences in the training set */
} CamlWordGate;

/* The words seen at least min_count times, from the most context-free (χ̃
 * highest) to the least; equal χ̃ by count (higher first), then by word.
 * chi holds one value per word of vocab. Returns *n entries; g_free it. */
CamlWordGate *caml_words_rank (const CamlVocab *vocab, const float *chi, int min_count,
                               int *n);

/* Whether vocab holds n-grams (data.ngrams ≥ 2: "w1 w2" entries beside
 * the words; a word itself never holds a space). */
gboolean caml_words_vocab_has_ngrams (const CamlVocab *vocab);

/* How many of n ranked words each list shows: n_top each when there are
 * 2 × n_top or more, else the top half (rounded up) as the most
 * context-free and the rest as the most context-sensitive, so that no word
 * is in both lists. */
void caml_words_split (int n, int n_top, int *n_free, int *n_sensitive);

/* Everything the page shows. */
typedef struct {
  const char      *title;          /* e.g. the experiment's name */
  const char      *layer;          /* e.g. "layer 0 (CA-BSFE)" */
  const CamlVocab *vocab;          /* the training vocabulary */
  const float     *chi;            /* (caml_vocab_size (vocab)) χ̃ per word */
  int              min_count;      /* words in the lists: seen this often */
  int              n_top;          /* length of each list */
  /* sample texts, shaded word by word */
  const char      *samples_from;   /* what they are: "test" (NULL too) or "validation" */
  char *const     *texts;          /* (n_samples) */
  const float     *labels;         /* (n_samples) class indices, or NULL */
  const float     *probabilities;  /* (n_samples) the model's P(class 1), or NULL */
  int              n_samples;
  int              max_words;      /* words shown per sample, 0 = all */
  /* The data's max_tokens, unique_tokens and ngrams (experiment data.*):
   * under a gate per word, the words the model did not read are grey
   * (caml_words_read_next). */
  int              max_tokens;
  gboolean         unique_tokens;
  int              ngrams;
  /* A per-position gate (per_position: CA-ATT's χ_i, CA-RNN's f_t) rather
   * than one per word: chi then holds each word's mean gate (NaN: not
   * measured) over what chi_source says, e.g. "its occurrences in the first
   * 872 test texts"; token_chi, if not NULL, the gate at each of a sample's
   * first token_steps words, (n_samples, token_steps), by which the samples
   * with token_aligned[i] (NULL: all) are shaded word by word. Other samples
   * are shaded by the means. Words past token_steps, which the model did not
   * read, and words without a value are grey. */
  const float     *token_chi;
  const gboolean  *token_aligned;
  int              token_steps;
  gboolean         per_position;
  const char      *chi_source;
} CamlWordsPage;

/* Which words of a text, taken in order, a model reads when its data set
 * was cut to data.max_tokens tokens per sample (0: no cut): the first
 * max_tokens words — or, with data.unique_tokens (and no n-grams, which are
 * formed from the first max_tokens words before the sample becomes a set),
 * every word whose first occurrence is among the first max_tokens distinct
 * words, each out-of-vocabulary word counting as one (they share an id and
 * are all kept). Feed the words' vocabulary ids (−1: unseen) one by one. */
typedef struct {
  int         max_tokens;
  gboolean    unique;
  int         kept;         /* tokens of the sample so far */
  GHashTable *first_read;   /* unique: id → whether its first occurrence was read */
} CamlWordsRead;

void     caml_words_read_init (CamlWordsRead *r, int max_tokens, gboolean unique_tokens,
                               int ngrams);
gboolean caml_words_read_next (CamlWordsRead *r, int id);
void     caml_words_read_clear (CamlWordsRead *r);

/* A self-contained HTML document (inline CSS, no scripts, no external
 * assets); every word and text HTML-escaped. g_free it. */
char *caml_words_page_html (const CamlWordsPage *page);

/* The shades of the page and the workbench: χ̃ rounded to a 20th. */
#define CAML_WORDS_N_SHADES 21
/* χ̃'s shade: 0 (χ̃ = 0, darkest) … CAML_WORDS_N_SHADES − 1 (χ̃ = 1, white);
 * a value that is not finite counts as 1. */
int   caml_words_shade (float chi);
/* A shade's background, 0…255 per channel, and whether text on it is white
 * (may be NULL). */
void  caml_words_shade_colour (int shade, int *r, int *g, int *b, gboolean *white_text);

/* Appends s with &, <, >, " and ' escaped. */
void  caml_html_escape (GString *out, const char *s, gssize length);
