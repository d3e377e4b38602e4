/* words-page.c — the χ-for-words page (see words-page.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "words-page.h"

/* Shades: one CSS class each (the page stays small however many words it
 * shows; the exact value is in each word's title). */
#define N_SHADES CAML_WORDS_N_SHADES

void
caml_html_escape (GString *out, const char *s, gssize length)
{
  const char *end = length < 0 ? s + strlen (s) : s + length;
  for (const char *c = s; c < end; c++)
    switch (*c)
      {
      case '&':  g_string_append (out, "&amp;"); break;
      case '<':  g_string_append (out, "&lt;"); break;
      case '>':  g_string_append (out, "&gt;"); break;
      case '"':  g_string_append (out, "&quot;"); break;
      case '\'': g_string_append (out, "&#39;"); break;
      default:   g_string_append_c (out, *c);
      }
}

/* ----------------------------------------------------------------- ranking */

static int
compare_gates (const void *pa, const void *pb)
{
  const CamlWordGate *a = pa, *b = pb;
  if (a->chi != b->chi)
    return a->chi > b->chi ? -1 : 1;
  if (a->count != b->count)
    return a->count > b->count ? -1 : 1;
  return strcmp (a->word, b->word);
}

gboolean
caml_words_vocab_has_ngrams (const CamlVocab *vocab)
{
  /* the n-grams come after the words: look from the end */
  for (int id = caml_vocab_size (vocab) - 1; id >= 0; id--)
    if (strchr (caml_vocab_word (vocab, id), ' ') != NULL)
      return TRUE;
  return FALSE;
}

CamlWordGate *
caml_words_rank (const CamlVocab *vocab, const float *chi, int min_count, int *n)
{
  int size = caml_vocab_size (vocab);
  CamlWordGate *gates = g_new (CamlWordGate, MAX (size, 1));
  int k = 0;
  for (int id = 0; id < size; id++)
    {
      gint64 count = caml_vocab_count (vocab, id);
      if (count < min_count || !isfinite (chi[id]))
        continue;
      gates[k++] = (CamlWordGate) { caml_vocab_word (vocab, id), chi[id], count };
    }
  qsort (gates, k, sizeof *gates, compare_gates);
  *n = k;
  return gates;
}

void
caml_words_split (int n, int n_top, int *n_free, int *n_sensitive)
{
  n = MAX (n, 0);
  n_top = MAX (n_top, 0);
  if (n >= 2 * n_top)
    *n_free = *n_sensitive = n_top;
  else
    {
      *n_free = (n + 1) / 2;
      *n_sensitive = n - *n_free;
    }
}

/* -------------------------------------------------------------------- page */

/* Darkness 1 − χ̃ mixes white into a deep blue. */
void
caml_words_shade_colour (int shade, int *r, int *g, int *b, gboolean *white_text)
{
  double t = 1.0 - (double) CLAMP (shade, 0, N_SHADES - 1) / (N_SHADES - 1);
  *r = (int) lround (255 + t * (8 - 255));
  *g = (int) lround (255 + t * (48 - 255));
  *b = (int) lround (255 + t * (107 - 255));
  if (white_text != NULL)
    *white_text = t > 0.55;
}

int
caml_words_shade (float chi)
{
  double c = CLAMP (isfinite (chi) ? chi : 1.0f, 0.0f, 1.0f);
  return (int) lround (c * (N_SHADES - 1));
}

static void
append_style (GString *html)
{
  g_string_append (html,
    "<style>\n"
    "body{font-family:sans-serif;max-width:70em;margin:1em auto;padding:0 1em;"
    "color:#111;line-height:1.45}\n"
    "h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}\n"
    ".w{padding:0 .12em;border-radius:.2em}\n"
    ".oov{border-bottom:1px dotted #888}\n"
    ".cut{color:#999}\n"
    ".sample{border:1px solid #ddd;border-radius:.3em;padding:.5em .7em;margin:.6em 0}\n"
    ".meta{font-size:.85em;color:#555;margin-bottom:.3em}\n"
    ".lists{display:flex;gap:2em;flex-wrap:wrap}\n"
    "table{border-collapse:collapse;font-size:.9em}\n"
    "td,th{padding:.1em .5em;text-align:left}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}\n"
    ".bar{background:#08306b;height:.8em;display:inline-block}\n"
    ".legend span{display:inline-block;width:1.6em;text-align:center;font-size:.75em}\n");
  for (int s = 0; s < N_SHADES; s++)
    {
      int r, g, b;
      gboolean white;
      caml_words_shade_colour (s, &r, &g, &b, &white);
      g_string_append_printf (html, ".g%d{background:#%02x%02x%02x;color:%s}\n", s, r, g, b,
                              white ? "#fff" : "#111");
    }
  g_string_append (html, "</style>\n");
}

/* One shaded word: its text, χ̃ (and count) in the title. */
static void
append_word (GString *html, const char *symbol, const char *word, gsize length, float chi,
             gint64 count, gboolean oov)
{
  g_string_append_printf (html, "<span class=\"w g%d%s\" title=\"", caml_words_shade (chi),
                          oov ? " oov" : "");
  if (oov)
    g_string_append (html, "unseen in training: χ̃ = 1 (v0)");
  else
    g_string_append_printf (html, "%s = %.3f, %" G_GINT64_FORMAT "× in training", symbol, chi,
                            count);
  g_string_append (html, "\">");
  caml_html_escape (html, word, (gssize) length);
  g_string_append (html, "</span>");
}

/* A word of a sample under a per-position gate: its own χ there
 * (token_chi, when the sample's ids are its words in order), else its mean
 * χ; grey when the model did not read it or there is no value. */
static void
append_position_word (GString *html, const CamlWordsPage *page, int sample, int k,
                      const char *word, gsize length, int id)
{
  gboolean oov = id < 0;
  gboolean own = page->token_chi != NULL
                 && (page->token_aligned == NULL || page->token_aligned[sample]);
  float chi = NAN;
  const char *why = "χ not measured";
  if (own && k >= page->token_steps)
    why = "past the model's input length: not read";
  else if (own)
    chi = page->token_chi[(size_t) sample * page->token_steps + k];
  else if (!oov)
    chi = page->chi[id];
  if (isfinite (chi))
    g_string_append_printf (html, "<span class=\"w g%d%s\" title=\"", caml_words_shade (chi),
                            oov ? " oov" : "");
  else
    g_string_append_printf (html, "<span class=\"w cut%s\" title=\"", oov ? " oov" : "");
  if (!isfinite (chi))
    g_string_append (html, why);
  else
    g_string_append_printf (html, own ? "χ = %.3f here" : "mean χ = %.3f", chi);
  if (oov)
    g_string_append (html, "; unseen in training");
  else
    g_string_append_printf (html, "; %" G_GINT64_FORMAT "× in training",
                            caml_vocab_count (page->vocab, id));
  g_string_append (html, "\">");
  caml_html_escape (html, word, (gssize) length);
  g_string_append (html, "</span>");
}

void
caml_words_read_init (CamlWordsRead *r, int max_tokens, gboolean unique_tokens, int ngrams)
{
  *r = (CamlWordsRead) { .max_tokens = max_tokens, .unique = unique_tokens && ngrams <= 1 };
}

gboolean
caml_words_read_next (CamlWordsRead *r, int id)
{
  if (r->max_tokens <= 0)
    return TRUE;
  if (!r->unique || id < 0)
    return r->kept++ < r->max_tokens;
  if (r->first_read == NULL)
    r->first_read = g_hash_table_new (NULL, NULL);
  gpointer read;
  if (g_hash_table_lookup_extended (r->first_read, GINT_TO_POINTER (id), NULL, &read))
    return GPOINTER_TO_INT (read);
  gboolean now = r->kept++ < r->max_tokens;
  g_hash_table_insert (r->first_read, GINT_TO_POINTER (id), GINT_TO_POINTER (now));
  return now;
}

void
caml_words_read_clear (CamlWordsRead *r)
{
  g_clear_pointer (&r->first_read, g_hash_table_unref);
}

typedef struct {
  const CamlWordsPage *page;
  GString             *html;
  int                  sample;
  int                  shown;
  int                  total;
  CamlWordsRead        read;
} SampleWriter;

static void
append_token (const char *token, gsize length, gpointer user_data)
{
  SampleWriter *w = user_data;
  int k = w->total++;
  if (w->page->max_words > 0 && w->shown >= w->page->max_words)
    return;
  char *word = g_strndup (token, length);
  int id = caml_vocab_lookup (w->page->vocab, word);
  g_free (word);
  gboolean read = caml_words_read_next (&w->read, id);
  if (w->shown++ > 0)
    g_string_append_c (w->html, ' ');
  if (w->page->per_position)
    append_position_word (w->html, w->page, w->sample, k, token, length, id);
  else if (!read)
    {
      g_string_append_printf (w->html, "<span class=\"w cut%s\" title=\"past data.max_tokens "
                              "(%d): not read\">", id < 0 ? " oov" : "", w->page->max_tokens);
      caml_html_escape (w->html, token, (gssize) length);
      g_string_append (w->html, "</span>");
    }
  else if (id >= 0)
    append_word (w->html, "χ̃", token, length, w->page->chi[id],
                 caml_vocab_count (w->page->vocab, id), FALSE);
  else
    append_word (w->html, "χ̃", token, length, 1.0f, 0, TRUE);
}

static void
append_samples (GString *html, const CamlWordsPage *page)
{
  if (page->n_samples <= 0)
    return;
  g_string_append_printf (html, "<h2>%d ", page->n_samples);
  caml_html_escape (html, page->samples_from != NULL ? page->samples_from : "test", -1);
  g_string_append (html, " samples</h2>\n");
  for (int i = 0; i < page->n_samples; i++)
    {
      g_string_append_printf (html, "<div class=\"sample\"><div class=\"meta\">sample %d", i);
      if (page->labels != NULL)
        g_string_append_printf (html, " · label %d", (int) page->labels[i]);
      if (page->probabilities != NULL)
        g_string_append_printf (html, " · model: P(1) = %.3f", page->probabilities[i]);
      g_string_append (html, "</div>\n");
      SampleWriter w = { page, html, i, 0, 0 };
      caml_words_read_init (&w.read, page->max_tokens, page->unique_tokens, page->ngrams);
      caml_tokenize (page->texts[i], -1, append_token, &w);
      caml_words_read_clear (&w.read);
      if (w.total > w.shown)
        g_string_append_printf (html, " <span class=\"meta\">… (%d more words)</span>",
                                w.total - w.shown);
      g_string_append (html, "</div>\n");
    }
}

static void
append_list (GString *html, const char *heading, const char *symbol, const CamlWordGate *gates,
             int n, gboolean from_end, int count)
{
  g_string_append (html, "<div><h2>");
  caml_html_escape (html, heading, -1);
  g_string_append_printf (html, "</h2>\n<table><tr><th>#</th><th>word</th><th>%s</th>"
                          "<th>count</th></tr>\n", symbol);
  for (int k = 0; k < count; k++)
    {
      const CamlWordGate *g = &gates[from_end ? n - 1 - k : k];
      g_string_append_printf (html, "<tr><td class=\"n\">%d</td><td>", k + 1);
      append_word (html, symbol, g->word, strlen (g->word), g->chi, g->count, FALSE);
      g_string_append_printf (html, "</td><td class=\"n\">%.3f</td><td class=\"n\">%"
                              G_GINT64_FORMAT "</td></tr>\n", g->chi, g->count);
    }
  g_string_append (html, "</table></div>\n");
}

/* Ten bins of χ̃ over the ranked words. */
static void
append_histogram (GString *html, const CamlWordGate *gates, int n)
{
  int bins[10] = { 0 }, most = 1;
  for (int k = 0; k < n; k++)
    bins[CLAMP ((int) (gates[k].chi * 10), 0, 9)]++;
  for (int b = 0; b < 10; b++)
    most = MAX (most, bins[b]);
  g_string_append (html, "<table>\n");
  for (int b = 9; b >= 0; b--)
    g_string_append_printf (html, "<tr><td>%.1f – %.1f</td><td class=\"n\">%d</td>"
                            "<td><span class=\"bar\" style=\"width:%.1fem\"></span></td></tr>\n",
                            b / 10.0, (b + 1) / 10.0, bins[b], 20.0 * bins[b] / most);
  g_string_append (html, "</table>\n");
}

char *
caml_words_page_html (const CamlWordsPage *page)
{
  GString *html = g_string_new ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                                "<meta charset=\"utf-8\">\n<title>");
  g_autofree char *title = g_strdup_printf ("%s for words: %s", page->per_position ? "χ" : "χ̃",
                                            page->title ? page->title : "");
  caml_html_escape (html, title, -1);
  g_string_append (html, "</title>\n");
  append_style (html);
  g_string_append (html, "</head>\n<body>\n<h1>");
  caml_html_escape (html, title, -1);
  g_string_append (html, "</h1>\n<p>");
  if (page->layer != NULL)
    {
      g_string_append (html, "Gates of ");
      caml_html_escape (html, page->layer, -1);
      g_string_append (html, ". ");
    }
  if (page->per_position)
    g_string_append (html,
      "This gate is read at every position of a text: each word gets its own χ ∈ [0, 1] "
      "there (CA-ATT: χ<sub><i>i</i></sub>, Eq. 23, 26, the weight of the context vector "
      "<i>v</i>(<i>c</i>) against the word's own <i>s</i><sub><i>i</i></sub> — it depends "
      "on the word's context when the query <i>c</i> is the mean of the words or the "
      "memory comes from a recurrent layer, on the word alone with a learned query over "
      "word vectors; CA-RNN: <i>f</i><sub><i>t</i></sub>, Eq. 34, the weight of "
      "<i>v</i><sub><i>t</i></sub>, which carries the cell state, against the word's new "
      "input). <b>Light</b> words (χ → 1) are replaced by the context there: "
      "<b>context-free</b> in the paper's sense (Sec. 2.2). <b>Dark</b> words (χ → 0) pass "
      "their own content: <b>context-sensitive</b>, the words the model reads. Hover a word "
      "for its χ in that text and how often training saw it; words never seen in training "
      "are underlined with dots; words past the model's input length, or without a value, "
      "are grey. The lists rank words by their mean χ.</p>\n"
      "<p class=\"legend\">χ ");
  else
    g_string_append (html,
      "Each word <i>w</i> of the training vocabulary has a gate χ̃(<i>w</i>) ∈ [0, 1] "
      "(Eq. 19–20): its vector is χ̃·<i>v</i><sub>0</sub> + (1 − χ̃)·<i>w</i>′. "
      "<b>Light</b> words (χ̃ → 1) are replaced by the shared vector <i>v</i><sub>0</sub>, "
      "as a word never seen in training is: they are <b>context-free</b> in the paper's "
      "sense (Sec. 2.2, “is”, “the”) and carry nothing of their own. <b>Dark</b> words "
      "(χ̃ → 0) keep their own vector <i>w</i>′: they are <b>context-sensitive</b>, the "
      "words the model reads. Hover a word for its χ̃ and how often training saw it; words "
      "never seen in training are underlined with dots (χ̃ = 1 by definition).</p>\n"
      "<p class=\"legend\">χ̃ ");
  for (int s = 0; s < N_SHADES; s += 2)
    g_string_append_printf (html, "<span class=\"g%d\">%.1f</span>", s,
                            (double) s / (N_SHADES - 1));
  g_string_append (html, "</p>\n");

  append_samples (html, page);

  int n = 0;
  g_autofree CamlWordGate *gates = caml_words_rank (page->vocab, page->chi, page->min_count,
                                                    &n);
  const char *symbol = page->per_position ? "mean χ" : "χ̃";
  gboolean ngrams = caml_words_vocab_has_ngrams (page->vocab);
  g_string_append_printf (html, "<h2>%s seen at least %d times in training</h2>\n"
                          "<p>%d of the %d %s of the vocabulary",
                          ngrams ? "Words and n-grams" : "Words", page->min_count, n,
                          caml_vocab_size (page->vocab), ngrams ? "words and n-grams" : "words");
  if (page->chi_source != NULL)
    {
      g_string_append_printf (html, "; %s over ", symbol);
      caml_html_escape (html, page->chi_source, -1);
    }
  g_string_append (html, ".</p>\n");
  if (ngrams)
    g_string_append (html, "<p>The model reads each text's word bigrams (and trigrams) "
                     "too, each with a gate of its own: they are ranked here with the words, "
                     "while the samples above shade single words only.</p>\n");
  if (n == 0)
    {
      g_string_append_printf (html, "<p>No word is seen %d times in training: there is "
                              "nothing to rank.</p>\n</body>\n</html>\n", page->min_count);
      return g_string_free (html, FALSE);
    }
  append_histogram (html, gates, n);
  int n_free, n_sensitive;
  caml_words_split (n, page->n_top, &n_free, &n_sensitive);
  if (n < 2 * page->n_top)
    g_string_append_printf (html, "<p>Fewer than %d words: the more context-free half "
                            "in one list, the rest in the other.</p>\n", 2 * page->n_top);
  g_string_append (html, "<div class=\"lists\">\n");
  g_autofree char *free_heading = g_strdup_printf ("The %d most context-free (%s highest)",
                                                   n_free, symbol);
  g_autofree char *sensitive_heading = g_strdup_printf ("The %d most context-sensitive "
                                                        "(%s lowest)", n_sensitive, symbol);
  append_list (html, free_heading, symbol, gates, n, FALSE, n_free);
  if (n_sensitive > 0)
    append_list (html, sensitive_heading, symbol, gates, n, TRUE, n_sensitive);
  g_string_append (html, "</div>\n</body>\n</html>\n");
  return g_string_free (html, FALSE);
}
