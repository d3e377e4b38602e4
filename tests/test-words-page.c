/* test-words-page.c — the χ-for-words page: HTML escaping, the ranking of
 * words by χ̃ (count threshold, ties), and a page that is self-contained,
 * escapes every word and lists the words in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "caml.h"
#include "words-page.h"

static void
test_escape (void **state)
{
  (void) state;
  GString *s = g_string_new (NULL);
  caml_html_escape (s, "<a href=\"x\">Tom & 'Jerry'</a> café", -1);
  assert_string_equal (s->str, "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;"
                               " café");
  g_string_truncate (s, 0);
  caml_html_escape (s, "a<b", 2);   /* a length: only "a<" */
  assert_string_equal (s->str, "a&lt;");
  g_string_free (s, TRUE);
}

/* Words with counts: id order is the order of addition. */
static CamlVocab *
make_vocab (void)
{
  static const struct { const char *word; int count; } words[] = {
    { "the", 50 }, { "great", 30 }, { "<b>", 25 }, { "awful", 30 }, { "rare", 2 },
    { "a&b", 40 }, { "film", 40 },
  };
  CamlVocab *vocab = caml_vocab_new ();
  for (gsize i = 0; i < G_N_ELEMENTS (words); i++)
    caml_vocab_add (vocab, words[i].word, words[i].count);
  return vocab;
}

/*                            the   great <b>   awful rare  a&b   film */
static const float chi[] = { 0.9f, 0.1f, 0.5f, 0.1f, 0.99f, 0.5f, 0.5f };

static void
test_rank (void **state)
{
  (void) state;
  CamlVocab *vocab = make_vocab ();
  int n = 0;
  CamlWordGate *gates = caml_words_rank (vocab, chi, 20, &n);
  /* "rare" (2×) is below the threshold; χ̃ descending; equal χ̃ by count
   * descending, then by word. */
  static const char *const want[] = { "the", "a&b", "film", "<b>", "awful", "great" };
  assert_int_equal (n, (int) G_N_ELEMENTS (want));
  for (int i = 0; i < n; i++)
    assert_string_equal (gates[i].word, want[i]);
  assert_true (gates[0].chi == 0.9f);
  assert_int_equal (gates[0].count, 50);
  assert_int_equal (gates[3].count, 25);
  g_free (gates);

  gates = caml_words_rank (vocab, chi, 1, &n);
  assert_int_equal (n, 7);
  assert_string_equal (gates[0].word, "rare");
  g_free (gates);
  gates = caml_words_rank (vocab, chi, 1000, &n);
  assert_int_equal (n, 0);
  g_free (gates);
  caml_vocab_unref (vocab);
}

/* Position of needle in haystack, failing when absent. */
static gsize
position (const char *haystack, const char *needle)
{
  const char *p = strstr (haystack, needle);
  if (p == NULL)
    fail_msg ("\"%s\" is not in the page", needle);
  return (gsize) (p - haystack);
}

static void
test_page (void **state)
{
  (void) state;
  CamlVocab *vocab = make_vocab ();
  char *texts[] = { (char *) "The <b> film, great & awful!", (char *) "the the the the", NULL };
  const float labels[] = { 1, 0 };
  const float probabilities[] = { 0.75f, 0.125f };
  CamlWordsPage page = {
    .title = "run <1>", .layer = "layer 0 (CA-BSFE)", .vocab = vocab, .chi = chi,
    .min_count = 20, .n_top = 3, .texts = texts, .labels = labels,
    .probabilities = probabilities, .n_samples = 2, .max_words = 3,
  };
  char *html = caml_words_page_html (&page);

  /* Self-contained: no external resource, no script. */
  static const char *const forbidden[] = { "http:", "https:", "src=", "<link", "<script",
                                           "url(", "<img" };
  for (gsize i = 0; i < G_N_ELEMENTS (forbidden); i++)
    if (strstr (html, forbidden[i]) != NULL)
      fail_msg ("the page contains %s", forbidden[i]);
  assert_true (g_str_has_prefix (html, "<!DOCTYPE html>"));
  assert_non_null (strstr (html, "<meta charset=\"utf-8\">"));
  assert_true (g_utf8_validate (html, -1, NULL));

  /* Words and titles escaped: no raw "<b>" or "<1>" from the data. */
  assert_null (strstr (html, "><b></span>"));
  assert_null (strstr (html, ">a&b<"));
  assert_non_null (strstr (html, ">&lt;</span>"));   /* the sample's "<" */
  assert_null (strstr (html, "<1>"));
  assert_non_null (strstr (html, "run &lt;1&gt;"));
  assert_non_null (strstr (html, ">&lt;b&gt;</span>"));
  assert_non_null (strstr (html, ">a&amp;b</span>"));

  /* Samples: tokens shaded by χ̃ (the: 0.9 → class g18), the first three
   * words only, then how many more; label and P(1). */
  assert_non_null (strstr (html, "sample 0 · label 1 · model: P(1) = 0.750"));
  assert_non_null (strstr (html, "sample 1 · label 0 · model: P(1) = 0.125"));
  assert_non_null (strstr (html, "<span class=\"w g18\" title=\"χ̃ = 0.900, 50× in training\">"
                                 "the</span>"));
  /* the < b | > film , great & awful ! */
  assert_non_null (strstr (html, "… (7 more words)"));
  assert_non_null (strstr (html, "… (1 more words)"));

  /* An unseen word: χ̃ = 1, marked. */
  CamlWordsPage oov_page = page;
  char *oov_texts[] = { (char *) "unseen film", NULL };
  oov_page.texts = oov_texts;
  oov_page.n_samples = 1;
  oov_page.labels = NULL;
  oov_page.probabilities = NULL;
  char *oov_html = caml_words_page_html (&oov_page);
  assert_non_null (strstr (oov_html, "<span class=\"w g20 oov\" title=\"unseen in training: "
                                     "χ̃ = 1 (v0)\">unseen</span>"));
  assert_non_null (strstr (oov_html, "<div class=\"meta\">sample 0</div>"));
  g_free (oov_html);

  /* Lists: the three most context-free in order, then the three least
   * (lowest first); "rare" is below min_count. */
  gsize lists = position (html, "The 3 most context-free");
  gsize sensitive = position (html, "The 3 most context-sensitive");
  const char *tail = html + lists;
  gsize the = position (tail, ">the</span></td><td class=\"n\">0.900</td><td class=\"n\">50<");
  gsize ab = position (tail, ">a&amp;b</span></td><td class=\"n\">0.500</td><td class=\"n\">40<");
  gsize film = position (tail, ">film</span></td>");
  assert_true (the < ab && ab < film && lists + film < sensitive);
  const char *tail2 = html + sensitive;
  gsize great = position (tail2, ">great</span></td>");
  gsize awful = position (tail2, ">awful</span></td>");
  gsize b = position (tail2, ">&lt;b&gt;</span></td>");
  assert_true (great < awful && awful < b);
  assert_null (strstr (tail, ">rare<"));
  assert_non_null (strstr (html, "<p>6 of the 7 words of the vocabulary.</p>"));
  g_free (html);
  caml_vocab_unref (vocab);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_escape),
    cmocka_unit_test (test_rank),
    cmocka_unit_test (test_page),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
