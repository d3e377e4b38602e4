/* test-words-page.c — the χ-for-words page: HTML escaping, the ranking of
 * words by χ̃ (count threshold, ties), a page that is self-contained,
 * escapes every word and lists the words in order, the page of a
 * per-position gate (one χ per word of a text), and how studio/report.c finds
 * and reads such a gate (CA-ATT over word vectors) and writes its page. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <glib/gstdio.h>

#include "caml-private.h"   /* tests the engine's internals */
#include "gradcheck.h"
#include "caml-plot.h"
#include "report.h"
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

/* Occurrences of needle in haystack. */
static int
count_of (const char *haystack, const char *needle)
{
  int n = 0;
  for (const char *p = strstr (haystack, needle); p != NULL; p = strstr (p + 1, needle))
    n++;
  return n;
}

/* Fewer than 2 × n_top ranked words: both lists showed all of them, so a
 * word was at once among the most and the least context-free. They are
 * split now; and with no word at all the page says so. */
static void
test_small_vocab_lists (void **state)
{
  (void) state;
  int f, s;
  caml_words_split (100, 50, &f, &s);
  assert_true (f == 50 && s == 50);
  caml_words_split (7, 50, &f, &s);
  assert_true (f == 4 && s == 3);
  caml_words_split (1, 50, &f, &s);
  assert_true (f == 1 && s == 0);
  caml_words_split (0, 50, &f, &s);
  assert_true (f == 0 && s == 0);

  CamlVocab *vocab = make_vocab ();   /* 6 words seen 20 times */
  CamlPlotBars *most_free = NULL, *most_sensitive = NULL;
  assert_int_equal (caml_report_word_bars (vocab, chi, FALSE, 20, 5, &most_free,
                                           &most_sensitive), 3);
  assert_int_equal (caml_plot_bars_get_n (most_free), 3);
  assert_int_equal (caml_plot_bars_get_n (most_sensitive), 3);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      assert_string_not_equal (caml_plot_bars_get_row (most_free, i, NULL),
                               caml_plot_bars_get_row (most_sensitive, j, NULL));
  caml_plot_bars_free (most_free);
  caml_plot_bars_free (most_sensitive);

  CamlWordsPage page = { .title = "t", .vocab = vocab, .chi = chi, .min_count = 20, .n_top = 5 };
  char *html = caml_words_page_html (&page);
  assert_non_null (strstr (html, "The 3 most context-free"));
  assert_non_null (strstr (html, "The 3 most context-sensitive"));
  static const char *const words[] = { "the", "great", "&lt;b&gt;", "awful", "a&amp;b", "film" };
  for (gsize i = 0; i < G_N_ELEMENTS (words); i++)
    {
      g_autofree char *row = g_strdup_printf (">%s</span></td>", words[i]);
      if (count_of (html, row) != 1)
        fail_msg ("%s is in %d lists", words[i], count_of (html, row));
    }
  g_free (html);

  page.min_count = 1000;
  html = caml_words_page_html (&page);
  assert_non_null (strstr (html, "No word is seen 1000 times in training"));
  assert_null (strstr (html, "most context-free ("));
  g_free (html);
  caml_vocab_unref (vocab);
}

/* A vocabulary with n-grams (data.ngrams) says so: its lists rank bigrams
 * with the words, and "words of the vocabulary" counted them as words. */
static void
test_ngram_vocab (void **state)
{
  (void) state;
  CamlVocab *vocab = make_vocab ();
  CamlWordsPage page = { .title = "t", .vocab = vocab, .chi = chi, .min_count = 20, .n_top = 5 };
  assert_false (caml_words_vocab_has_ngrams (vocab));
  char *html = caml_words_page_html (&page);
  assert_non_null (strstr (html, "<h2>Words seen at least 20 times in training</h2>"));
  assert_non_null (strstr (html, "6 of the 7 words of the vocabulary"));
  assert_null (strstr (html, "n-gram"));
  g_free (html);

  caml_vocab_add (vocab, "great film", 25);
  float chi8[8];
  memcpy (chi8, chi, sizeof chi);
  chi8[7] = 0.2f;
  page.chi = chi8;
  assert_true (caml_words_vocab_has_ngrams (vocab));
  html = caml_words_page_html (&page);
  assert_non_null (strstr (html, "<h2>Words and n-grams seen at least 20 times in training</h2>"));
  assert_non_null (strstr (html, "7 of the 8 words and n-grams of the vocabulary"));
  assert_non_null (strstr (html, "bigrams (and trigrams) too"));
  assert_non_null (strstr (html, ">great film</span></td>"));
  g_free (html);
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

/* A per-position gate: each word of a sample shaded by its own χ there (the
 * same word twice, two shades), words past the model's steps grey, samples
 * whose ids are not their words by the means, the lists by mean χ with
 * unmeasured (NaN) words left out. */
static void
test_page_per_position (void **state)
{
  (void) state;
  CamlVocab *vocab = make_vocab ();
  /*                          the   great <b>   awful rare  a&b   film */
  const float means[] = { 0.8f, 0.2f, NAN,  0.1f, NAN,  NAN,  0.5f };
  char *texts[] = { (char *) "great film great unseen", (char *) "the awful", NULL };
  const float token_chi[] = { 0.05f, 0.5f, 0.35f,   0.8f, 0.1f, 0.0f };   /* (2, 3) */
  CamlWordsPage page = {
    .title = "att", .layer = "layer 1 (CA-ATT)", .vocab = vocab, .chi = means,
    .min_count = 20, .n_top = 5, .texts = texts, .n_samples = 2,
    .per_position = TRUE, .chi_source = "its occurrences in the first 2 test texts",
    .token_chi = token_chi, .token_steps = 3,
  };
  char *html = caml_words_page_html (&page);
  assert_true (g_utf8_validate (html, -1, NULL));
  assert_non_null (strstr (html, "<title>χ for words: att</title>"));
  assert_non_null (strstr (html, "<span class=\"w g1\" title=\"χ = 0.050 here; 30× in training\">"
                                 "great</span> "
                                 "<span class=\"w g10\" title=\"χ = 0.500 here; 40× in training\">"
                                 "film</span> "
                                 "<span class=\"w g7\" title=\"χ = 0.350 here; 30× in training\">"
                                 "great</span> "
                                 "<span class=\"w cut oov\" title=\"past the model's input "
                                 "length: not read; unseen in training\">unseen</span>"));
  assert_non_null (strstr (html, "<span class=\"w g16\" title=\"χ = 0.800 here; 50× in "
                                 "training\">the</span>"));
  /* Lists: "<b>" and "a&b" were not measured, "rare" is below min_count. */
  assert_non_null (strstr (html, "<p>4 of the 7 words of the vocabulary; mean χ over its "
                                 "occurrences in the first 2 test texts.</p>"));
  /* 4 words for lists of 5: split, the top two in one, the rest (from
   * the bottom up) in the other. */
  gsize lists = position (html, "The 2 most context-free (mean χ highest)");
  position (html, "The 2 most context-sensitive (mean χ lowest)");
  const char *tail = html + lists;
  gsize the = position (tail, ">the</span></td><td class=\"n\">0.800</td>");
  gsize film = position (tail, ">film</span></td><td class=\"n\">0.500</td>");
  gsize great = position (tail, ">great</span></td><td class=\"n\">0.200</td>");
  gsize awful = position (tail, ">awful</span></td><td class=\"n\">0.100</td>");
  assert_true (the < film && film < awful && awful < great);
  assert_null (strstr (tail, ">a&amp;b<"));
  assert_non_null (strstr (html, "title=\"mean χ = 0.800, 50× in training\">the</span>"));
  g_free (html);

  /* A sample whose ids are not its words in order is shaded by the means,
   * words without one grey; the other sample keeps its own values. */
  const gboolean aligned[] = { FALSE, TRUE };
  page.token_aligned = aligned;
  char *texts2[] = { (char *) "great rare unseen", (char *) "the awful", NULL };
  page.texts = texts2;
  html = caml_words_page_html (&page);
  assert_non_null (strstr (html, "<span class=\"w g4\" title=\"mean χ = 0.200; 30× in training\">"
                                 "great</span> "
                                 "<span class=\"w cut\" title=\"χ not measured; 2× in training\">"
                                 "rare</span> "
                                 "<span class=\"w cut oov\" title=\"χ not measured; unseen in "
                                 "training\">unseen</span>"));
  assert_non_null (strstr (html, "<span class=\"w g16\" title=\"χ = 0.800 here; 50× in "
                                 "training\">the</span>"));
  g_free (html);
  /* No values per position at all: every sample by the means. */
  page.token_chi = NULL;
  page.token_aligned = NULL;
  html = caml_words_page_html (&page);
  assert_non_null (strstr (html, "<span class=\"w g16\" title=\"mean χ = 0.800; 50× in "
                                 "training\">the</span>"));
  g_free (html);
  caml_vocab_unref (vocab);
}

static CamlDataset *
text_set (CamlVocab *vocab, gboolean grow, const char *const *texts, int n)
{
  char **copy = g_new0 (char *, n + 1);
  float *labels = g_new (float, n);
  for (int i = 0; i < n; i++)
    {
      copy[i] = g_strdup (texts[i]);
      labels[i] = (float) (i % 2);
    }
  CamlDataset *set = caml_text_dataset_from_texts (copy, labels, n, 2, vocab, grow);
  g_free (labels);
  return set;
}

/* report.c finds CA-ATT's χ_i as a per-position gate, reads it for any number
 * of samples exactly as a forward of each sample alone gives it, averages it
 * per word, and tells whether a sample's ids are its text in order. */
static void
test_token_gates (void **state)
{
  (void) state;
  static const char *const train_texts[] = { "good movie", "bad movie", "the movie is good",
                                             "a bad bad film" };
  enum { N_TEST = 70 };   /* more than one batch of the reader */
  const char *test_texts[N_TEST];
  for (int i = 0; i < N_TEST; i++)
    test_texts[i] = i % 3 == 0 ? "good film good" : i % 3 == 1 ? "the bad unseen movie" : "bad";
  CamlVocab *vocab = caml_vocab_new ();
  CamlDataset *train = text_set (vocab, TRUE, train_texts, 4);
  CamlDataset *test = text_set (vocab, FALSE, test_texts, N_TEST);
  caml_text_datasets_finish (train, test, 0);
  int t = train->x_shape.dims[0];
  assert_int_equal (t, 4);

  CamlLayerSpec specs[] = {
    caml_test_spec ("embedding", "dim", 4.0, NULL),
    caml_test_spec ("ca_att", "query_dim", 3.0, NULL),
    caml_test_spec ("dense", "units", 1.0, NULL),
  };
  GRand *rng = g_rand_new_with_seed (3);
  g_autoptr (GError) error = NULL;
  CamlModel *model = caml_model_new (&train->x_shape, specs, 3, rng, &error);
  assert_non_null (model);
  assert_int_equal (caml_report_token_gate_layer (model, test), 1);
  assert_int_equal (caml_report_word_chi (model, train->vocab, (float[16]) { 0 }), -1);

  g_autofree float *chi = g_new (float, (size_t) N_TEST * t);
  caml_report_token_chi (model, 1, test, N_TEST, chi);
  float row[4];
  for (int i = 0; i < N_TEST; i++)
    {
      caml_model_forward (model, caml_dataset_rows (test, i, 1, row), 1);
      int per = 0;
      const float *alone = model->layers[1]->ops->chi (model->layers[1], &per);
      assert_int_equal (per, t);
      for (int k = 0; k < t; k++)
        {
          assert_true (isfinite (alone[k]));
          assert_true (chi[(size_t) i * t + k] == alone[k]);
        }
    }
  /* "bad" alone: one step, padding after it reads 0. */
  assert_true (chi[2 * t] > 0 && chi[2 * t] < 1);
  assert_true (chi[2 * t + 1] == 0);

  /* Means: "good" at steps 0 and 2 of every third text, "bad" at step 1 or
   * 0 of the others, "movie" at step 3 (whatever its χ there), "a" never in
   * the test texts. */
  int size = caml_vocab_size (vocab);
  g_autofree float *mean = g_new (float, size);
  caml_report_token_chi_means (test, N_TEST, t, chi, size, mean);
  int good = caml_vocab_lookup (vocab, "good"), bad = caml_vocab_lookup (vocab, "bad");
  double sum = 0;
  int count = 0;
  for (int i = 0; i < N_TEST; i += 3)
    {
      sum += chi[(size_t) i * t] + chi[(size_t) i * t + 2];
      count += 2;
    }
  assert_true (isfinite (mean[good]));
  assert_float_equal (mean[good], sum / count, 1e-6);
  double bad_sum = 0;
  int bad_count = 0;
  for (int i = 1; i < N_TEST; i += 3)
    bad_sum += chi[(size_t) i * t + 1], bad_count++;
  for (int i = 2; i < N_TEST; i += 3)
    bad_sum += chi[(size_t) i * t], bad_count++;
  assert_true (isfinite (mean[bad]));
  assert_float_equal (mean[bad], bad_sum / bad_count, 1e-6);
  assert_true (isnan (mean[caml_vocab_lookup (vocab, "a")]));
  assert_true (isfinite (mean[caml_vocab_lookup (vocab, "movie")]));

  /* The page: every sample word by word, the χ at each position. */
  g_autofree char *dir = g_dir_make_tmp ("caml-words-XXXXXX", NULL);
  g_autofree char *page = g_build_filename (dir, "words.html", NULL);
  g_autofree char *png = g_build_filename (dir, "words.png", NULL);
  gboolean written = FALSE;
  assert_true (caml_report_write_words (page, png, "att", model, CAML_LOSS_SIGMOID_XENT, train,
                                        test, 3, 1, 5, &written, &error));
  assert_true (written);
  assert_true (g_file_test (png, G_FILE_TEST_EXISTS));
  g_autofree char *html = NULL;
  assert_true (g_file_get_contents (page, &html, NULL, NULL));
  assert_non_null (strstr (html, "Gates of layer 1 (CA-ATT)."));
  assert_non_null (strstr (html, "mean χ over its occurrences in the first 70 test texts."));
  g_autofree char *want = g_strdup_printf ("title=\"χ = %.3f here; 2× in training\">good</span> "
                                           "<span class=\"w g%d\" title=\"χ = %.3f here; 1× in "
                                           "training\">film</span>", chi[0],
                                           caml_words_shade (chi[1]), chi[1]);
  assert_non_null (strstr (html, want));
  g_free (html);

  /* Ids and texts agree, unseen words included; as sets of words
   * (unique_tokens), a text with a repeated word no longer does, and the
   * page shades it by the words' means. */
  for (int i = 0; i < 3; i++)
    assert_true (caml_report_text_aligned (test, i));
  caml_text_dataset_unique (test);
  caml_text_datasets_finish (train, test, 0);
  assert_false (caml_report_text_aligned (test, 0));   /* good film good */
  assert_true (caml_report_text_aligned (test, 1));
  assert_false (caml_report_text_aligned (test, N_TEST));   /* out of range */
  assert_true (caml_report_write_words (page, NULL, "att", model, CAML_LOSS_SIGMOID_XENT, train,
                                        test, 3, 1, 5, &written, &error));
  assert_true (g_file_get_contents (page, &html, NULL, NULL));
  assert_non_null (strstr (html, "title=\"mean χ = "));
  assert_non_null (strstr (html, "here; 1× in training\">the</span>"));   /* text 1 */
  g_unlink (page);
  g_unlink (png);
  g_rmdir (dir);

  /* Softmax attention has no gate; CA-BSFE's per-word gate is found too
   * (the page reads it with word_chi first). */
  CamlLayerSpec soft[] = {
    caml_test_spec ("embedding", "dim", 4.0, NULL),
    caml_test_spec ("attention", NULL),
    caml_test_spec ("dense", "units", 1.0, NULL),
  };
  CamlModel *plain = caml_model_new (&train->x_shape, soft, 3, rng, &error);
  assert_non_null (plain);
  assert_int_equal (caml_report_token_gate_layer (plain, test), -1);
  caml_model_free (plain);
  CamlLayerSpec bsfe[] = { caml_test_spec ("ca_bsfe", NULL), caml_test_spec ("dense", "units", 1.0, NULL) };
  CamlModel *bag = caml_model_new (&train->x_shape, bsfe, 2, rng, &error);
  assert_non_null (bag);
  assert_int_equal (caml_report_token_gate_layer (bag, test), 0);
  caml_model_free (bag);

  caml_model_free (model);
  g_rand_free (rng);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_vocab_unref (vocab);
}

/* Which words a model reads under data.max_tokens: caml_words_read_next
 * checked against the engine's own cut of loaded data sets (plain, with
 * unique_tokens, with n-grams), and a page that greys the words past it. */
static void
read_flags (const CamlDataset *set, const char *text, const CamlDataConfig *data, gboolean *read,
            int *n)
{
  CamlWordsRead r;
  caml_words_read_init (&r, data->max_tokens, data->unique_tokens, data->ngrams);
  g_auto (GStrv) words = g_strsplit (text, " ", -1);
  for (*n = 0; words[*n] != NULL; (*n)++)
    read[*n] = caml_words_read_next (&r, caml_vocab_lookup (set->vocab, words[*n]));
  caml_words_read_clear (&r);
}

static void
test_words_read (void **state)
{
  (void) state;
  g_autofree char *dir = g_dir_make_tmp ("caml-words-read-XXXXXX", NULL);
  g_autofree char *train_path = g_build_filename (dir, "train.tsv", NULL);
  g_autofree char *test_path = g_build_filename (dir, "test.tsv", NULL);
  /* "zz" and "qq" are unseen in training (OOV in the test set). */
  static const char *const test_text = "a zz b a c zz d a e qq b f";
  assert_true (g_file_set_contents (train_path, "a b c d e f\t1\nb a\t0\n", -1, NULL));
  g_autofree char *test_line = g_strdup_printf ("%s\t1\n", test_text);
  assert_true (g_file_set_contents (test_path, test_line, -1, NULL));
  static const struct { int max_tokens; gboolean unique; int ngrams; const char *read; } cases[] = {
    /*                     a zz b a c zz d a e qq b f */
    { 0, FALSE, 1,        "111111111111" },
    { 5, FALSE, 1,        "111110000000" },
    { 5, TRUE, 1,         "111111010010" },   /* the set a zz b c zz …: a and b again read */
    { 8, TRUE, 1,         "111111111110" },   /* a zz b c zz d e qq, b again; f the 9th */
    { 5, TRUE, 2,         "111110000000" },   /* n-grams of the first 5 words, then the set */
    { 3, FALSE, 2,        "111000000000" },
  };
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *json = g_strdup_printf (
        "{\"data\": {\"text\": {\"train\": \"%s\", \"test\": \"%s\"}, \"max_tokens\": %d, "
        "\"unique_tokens\": %s, \"ngrams\": %d},"
        " \"model\": [{\"layer\": \"ca_bsfe\"}, {\"layer\": \"dense\", \"units\": 1}],"
        " \"loss\": \"sigmoid_cross_entropy\"}", train_path, test_path, cases[c].max_tokens,
        cases[c].unique ? "true" : "false", cases[c].ngrams);
      GError *error = NULL;
      CamlExperiment *exp = caml_experiment_load_data (json, -1, "t.json", &error);
      assert_null (error);
      CamlDataset *train = NULL, *test = NULL;
      assert_true (caml_experiment_load_datasets (exp, &train, &test, &error));
      gboolean read[16];
      int n = 0;
      read_flags (test, test_text, &exp->data, read, &n);
      char got[17] = { 0 };
      for (int k = 0; k < n; k++)
        got[k] = read[k] ? '1' : '0';
      assert_string_equal (got, cases[c].read);

      /* The engine's cut: the ids the model gets (the first T of the
       * sample's) hold every word read — each read word's id among them,
       * as many OOV ids as OOV words read — and a word left unread is in
       * them only when it is read at another place of the sample. */
      int T = test->x_shape.dims[0];
      gint64 start = test->offsets[0], len = MIN (test->offsets[1] - start, (gint64) T);
      g_auto (GStrv) words = g_strsplit (test_text, " ", -1);
      int oov_read = 0, oov_ids = 0;
      for (gint64 j = 0; j < len; j++)
        oov_ids += test->tokens[start + j] == CAML_TOKEN_OOV;
      for (int k = 0; k < n; k++)
        {
          int id = caml_vocab_lookup (test->vocab, words[k]);
          if (id < 0)
            {
              oov_read += read[k];
              continue;
            }
          gboolean in = FALSE;
          for (gint64 j = 0; j < len; j++)
            in |= test->tokens[start + j] == id;
          if (read[k])
            assert_true (in);
          else if (in)   /* unread here: then read at another place */
            {
              gboolean elsewhere = FALSE;
              for (int m = 0; m < n; m++)
                elsewhere |= read[m] && strcmp (words[m], words[k]) == 0;
              assert_true (elsewhere);
            }
        }
      assert_int_equal (oov_read, cases[c].ngrams > 1 ? MIN (oov_read, oov_ids) : oov_ids);

      if (c == 1)
        {
          /* The page: words past max_tokens grey, not shaded. */
          float chis[8];
          for (int k = 0; k < 8; k++)
            chis[k] = 0.25f;
          char *texts[] = { (char *) test_text, NULL };
          CamlWordsPage page = { .title = "t", .vocab = train->vocab, .chi = chis,
                                 .min_count = 1, .n_top = 3, .texts = texts, .n_samples = 1,
                                 .max_tokens = exp->data.max_tokens };
          g_autofree char *html = caml_words_page_html (&page);
          assert_non_null (strstr (html, "title=\"χ̃ = 0.250, 1× in training\">c</span> "
                                         "<span class=\"w cut oov\" title=\"past data.max_tokens"
                                         " (5): not read\">zz</span> <span class=\"w cut\" "
                                         "title=\"past data.max_tokens (5): not read\">d</span>"));
          page.max_tokens = 0;
          g_autofree char *all = caml_words_page_html (&page);
          assert_null (strstr (all, "not read"));
        }
      caml_dataset_free (train);
      caml_dataset_free (test);
      caml_experiment_free (exp);
    }
  g_unlink (train_path);
  g_unlink (test_path);
  g_rmdir (dir);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_escape),
    cmocka_unit_test (test_rank),
    cmocka_unit_test (test_page),
    cmocka_unit_test (test_small_vocab_lists),
    cmocka_unit_test (test_ngram_vocab),
    cmocka_unit_test (test_page_per_position),
    cmocka_unit_test (test_token_gates),
    cmocka_unit_test (test_words_read),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
