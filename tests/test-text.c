/* test-text.c — the tokenizer and the vocabulary. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "caml-private.h"   /* tests the engine's internals */

static void
expect_tokens (const char *text, const char *expected)
{
  char **tokens = caml_tokenize_strv (text, -1);
  char *joined = g_strjoinv ("|", tokens);
  if (strcmp (joined, expected) != 0)
    print_error ("tokenize(\"%s\") = \"%s\", expected \"%s\"\n", text, joined, expected);
  assert_string_equal (joined, expected);
  g_free (joined);
  g_strfreev (tokens);
}

static void
test_tokenize_rules (void **state)
{
  (void) state;
  expect_tokens ("Hello, World!", "hello|,|world|!");
  expect_tokens ("I don't like it's color", "i|do|n't|like|it|'s|color");
  expect_tokens ("we're they've I'll he'd I'm", "we|'re|they|'ve|i|'ll|he|'d|i|'m");
  expect_tokens ("it 's a well-known film , is n't it", "it|'s|a|well-known|film|,|is|n't|it");
  expect_tokens ("Great movie.<br /><br />Terrible ending...", "great|movie|.|terrible|ending|...");
  expect_tokens ("costs 3.5 dollars, or 10,000 yen.", "costs|3.5|dollars|,|or|10,000|yen|.");
  expect_tokens ("Don\xe2\x80\x99t", "do|n't");
  expect_tokens ("CAFÉ Über", "café|über");
  expect_tokens ("a\xff" "b", "a|b");   /* an invalid byte separates */
  expect_tokens ("  \t\n", "");
  expect_tokens ("'quoted' -dash- end-", "'|quoted|'|-|dash|-|end|-");
  expect_tokens ("wow!!! (really)", "wow|!!!|(|really|)");
}

static void
test_tokenize_length (void **state)
{
  (void) state;
  char **tokens = caml_tokenize_strv ("one two three", 7);
  assert_int_equal (g_strv_length (tokens), 2);
  assert_string_equal (tokens[1], "two");
  g_strfreev (tokens);
}

static void
test_vocab (void **state)
{
  (void) state;
  CamlVocab *v = caml_vocab_new ();
  assert_int_equal (caml_vocab_add (v, "the", 1), 0);
  assert_int_equal (caml_vocab_add (v, "cat", 2), 1);
  assert_int_equal (caml_vocab_add (v, "the", 5), 0);
  assert_int_equal (caml_vocab_add_len (v, "catalog", 3, 1), 1);
  assert_int_equal (caml_vocab_size (v), 2);
  assert_int_equal (caml_vocab_lookup (v, "cat"), 1);
  assert_int_equal (caml_vocab_lookup (v, "dog"), -1);
  assert_string_equal (caml_vocab_word (v, 0), "the");
  assert_int_equal (caml_vocab_count (v, 0), 6);
  assert_int_equal (caml_vocab_count (v, 1), 3);

  /* Many words: ids stay dense and stable. */
  for (int i = 0; i < 10000; i++)
    {
      char w[32];
      g_snprintf (w, sizeof w, "w%d", i);
      assert_int_equal (caml_vocab_add (v, w, 1), i + 2);
    }
  assert_int_equal (caml_vocab_lookup (v, "w9999"), 10001);
  CamlVocab *r = caml_vocab_ref (v);
  caml_vocab_unref (v);
  assert_string_equal (caml_vocab_word (r, 1), "cat");
  caml_vocab_unref (r);
}

/* The fingerprint weights files record: XXH64 of the words in id order,
 * each with its NUL — a fixed value (files on disk depend on it), the order
 * and the word boundaries count, the occurrence counts do not. */
static void
test_vocab_fingerprint (void **state)
{
  (void) state;
  CamlVocab *v = caml_vocab_new ();
  assert_true (caml_vocab_fingerprint (v) == G_GUINT64_CONSTANT (0xef46db3751d8e999));
  caml_vocab_add (v, "the", 1);
  caml_vocab_add (v, "cat", 1);
  guint64 the_cat = caml_vocab_fingerprint (v);
  assert_true (the_cat == G_GUINT64_CONSTANT (0xa941260216648e57));   /* "the\0cat\0" */
  caml_vocab_add (v, "the", 40);
  assert_true (caml_vocab_fingerprint (v) == the_cat);

  CamlVocab *swapped = caml_vocab_new ();
  caml_vocab_add (swapped, "cat", 1);
  caml_vocab_add (swapped, "the", 1);
  assert_true (caml_vocab_fingerprint (swapped) != the_cat);

  CamlVocab *a = caml_vocab_new (), *b = caml_vocab_new ();
  caml_vocab_add (a, "ab", 1);
  caml_vocab_add (a, "c", 1);
  caml_vocab_add (b, "a", 1);
  caml_vocab_add (b, "bc", 1);
  assert_true (caml_vocab_fingerprint (a) != caml_vocab_fingerprint (b));

  caml_vocab_unref (v);
  caml_vocab_unref (swapped);
  caml_vocab_unref (a);
  caml_vocab_unref (b);
}

/* ----------------------------------------------------- labelled text files */

static CamlDataset *
load_tsv (const char *text, CamlVocab *vocab, gboolean grow, GError **error)
{
  return caml_text_load_tsv_data (text, strlen (text), "t.tsv", vocab, grow, 0, error);
}

static void
test_tsv (void **state)
{
  (void) state;
  CamlVocab *vocab = caml_vocab_new ();
  GError *error = NULL;
  CamlDataset *train = load_tsv ("a good film \t1\r\n\nit 's bad\t0\n", vocab, TRUE, &error);
  assert_non_null (train);
  assert_int_equal (train->n, 2);
  assert_int_equal (train->n_classes, 2);
  assert_int_equal (caml_vocab_size (vocab), 6);   /* a good film it 's bad */
  assert_int_equal (caml_dataset_length (train, 0), 3);
  assert_int_equal (caml_dataset_length (train, 1), 3);
  assert_float_equal (train->y[0], 1.0, 0);
  assert_string_equal (train->texts[1], "it 's bad");
  /* each sample's line, blank lines counted, for errors about it */
  assert_int_equal (train->lines[0], 1);
  assert_int_equal (train->lines[1], 3);
  char *place = caml_dataset_sample_place (train, 1, "training set");
  assert_string_equal (place, "t.tsv:3");
  g_free (place);

  /* The test set maps unseen words to OOV and does not grow the vocabulary. */
  CamlDataset *test = load_tsv ("a terrible film ! extra words\t0\n", vocab, FALSE, &error);
  assert_non_null (test);
  assert_int_equal (caml_vocab_size (vocab), 6);
  caml_text_datasets_finish (train, test, 4);
  assert_int_equal (train->x_shape.dims[0], 4);          /* capped by max_tokens */
  assert_int_equal (train->x_shape.vocab, 6);
  float row[2 * 4];
  const float *x = caml_dataset_rows (test, 0, 1, row);
  const float expect[] = { 0, CAML_TOKEN_OOV, 2, CAML_TOKEN_OOV };
  assert_memory_equal (x, expect, sizeof expect);          /* truncated to T */
  int idx[] = { 1 };
  float y;
  caml_dataset_gather (train, idx, 1, row, &y);
  const float expect1[] = { 3, 4, 5, CAML_TOKEN_PAD };
  assert_memory_equal (row, expect1, sizeof expect1);
  caml_dataset_free (test);
  caml_dataset_free (train);
  caml_vocab_unref (vocab);
}

static void
test_tsv_errors (void **state)
{
  (void) state;
  static const struct { const char *text, *message; } bad[] = {
    { "good\t1\nno tab here\n", "t.tsv:2: expected text<TAB>label, found no tab" },
    { "good\tyes\n", "t.tsv:1: the label \"yes\" is not a class index 0…999" },
    { "good\t-1\n", "t.tsv:1: the label \"-1\" is not a class index" },
    { "good\t1000\n", "t.tsv:1: the label \"1000\" is not a class index" },
    { "", "t.tsv: no samples (the file is empty)" },
    /* Blank lines: empty, or only spaces and tabs, are skipped — a file of
     * them holds no samples but is not empty. */
    { "\n\n", "t.tsv: no samples (only blank lines)" },
    { " \r\n\t \r  \n", "t.tsv: no samples (only blank lines)" },
    /* Line numbers count every line end: \r\n, \n and a lone \r. */
    { "good\t1\r\r\nbad\t0\rno tab\n", "t.tsv:4: expected text<TAB>label, found no tab" },
    /* A column too many was read as text "bad movie<TAB>0" labelled 1. */
    { "good\t1\nbad movie\t0\t1\n",
      "t.tsv:2: expected text<TAB>label, found 2 tabs (3 fields)" },
    { "good\t1\t\n", "t.tsv:1: expected text<TAB>label, found 2 tabs (3 fields)" },
    { "good\t1\n\t0\n", "t.tsv:2: the text is empty" },
    { "good\t1\n  \t0\n", "t.tsv:2: the text is empty" },
    /* Text is UTF-8 (a byte that is not split "b\xe9d" into "b" and "d"). */
    { "good\t1\nb\xe9" "d movie\t0\n", "t.tsv:2:2: byte 0xe9 is not UTF-8 text" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      CamlVocab *vocab = caml_vocab_new ();
      GError *error = NULL;
      assert_null (load_tsv (bad[i].text, vocab, TRUE, &error));
      assert_non_null (error);
      if (strstr (error->message, bad[i].message) == NULL)
        fail_msg ("\"%s\" lacks \"%s\"", error->message, bad[i].message);
      assert_int_equal (caml_vocab_size (vocab), 0);   /* a failed load adds no word */
      g_error_free (error);
      caml_vocab_unref (vocab);
    }
  CamlVocab *vocab = caml_vocab_new ();
  GError *error = NULL;
  assert_null (caml_text_load_tsv_data ("a\t1\n\0b\t0\n", 10, "t.tsv", vocab, TRUE, 0, &error));
  assert_string_equal (error->message, "t.tsv:2:1: a NUL byte: this is not a text file");
  g_clear_error (&error);
  assert_null (caml_text_load_tsv ("/nonexistent/t.tsv", vocab, TRUE, 0, &error));
  assert_string_equal (error->message, "/nonexistent/t.tsv: no such file");
  g_clear_error (&error);
  /* Not a regular file: refused at once, not read until memory runs out. */
  assert_null (caml_text_load_tsv ("/dev/zero", vocab, TRUE, 0, &error));
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_IO));
  assert_string_equal (error->message, "/dev/zero: not a regular file (a character device)");
  g_error_free (error);
  assert_int_equal (caml_vocab_size (vocab), 0);
  caml_vocab_unref (vocab);
}

/* Lines end in \r\n, \n or a lone \r (classic Mac OS, some spreadsheet
 * exports): a file with CR-only line ends is as many samples as lines, not
 * one sample whose text holds the other lines' tabs and labels. A line of
 * spaces is blank, not a line without a tab. */
static void
test_tsv_line_ends (void **state)
{
  (void) state;
  static const char *const texts[] = {
    "a good film\t1\rbad movie\t0\r\rso so\t2\r",
    "a good film\t1\nbad movie\t0\n\nso so\t2\n",
    "a good film\t1\r\nbad movie\t0\r\n   \r\nso so\t2",
    "a good film\t1\rbad movie\t0\n \t\r\nso so\t2\r\n",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      CamlVocab *vocab = caml_vocab_new ();
      GError *error = NULL;
      CamlDataset *set = load_tsv (texts[i], vocab, TRUE, &error);
      assert_null (error);
      assert_int_equal (set->n, 3);
      assert_string_equal (set->texts[0], "a good film");
      assert_string_equal (set->texts[1], "bad movie");
      assert_string_equal (set->texts[2], "so so");
      assert_float_equal (set->y[1], 0.0, 0);
      assert_float_equal (set->y[2], 2.0, 0);
      assert_int_equal (caml_vocab_size (vocab), 6);
      caml_dataset_free (set);
      caml_vocab_unref (vocab);
    }
}

/* A UTF-8 byte-order mark (an editor's "UTF-8 with BOM") starts the file,
 * not the first sentence: no word "\ufeff" or "\ufeffgood". Only the
 * first line's: one later on is text. */
static void
test_tsv_bom (void **state)
{
  (void) state;
  CamlVocab *vocab = caml_vocab_new ();
  GError *error = NULL;
  CamlDataset *set = load_tsv ("\xef\xbb\xbfgood film\t1\nbad\t0\n", vocab, TRUE, &error);
  assert_non_null (set);
  assert_int_equal (set->n, 2);
  assert_string_equal (set->texts[0], "good film");
  assert_int_equal (caml_vocab_size (vocab), 3);   /* good film bad */
  assert_int_equal (caml_vocab_lookup (vocab, "good"), 0);
  assert_int_equal (caml_dataset_length (set, 0), 2);
  caml_dataset_free (set);

  /* A file that is nothing but the mark is empty; errors still count the
   * first line as line 1. */
  assert_null (load_tsv ("\xef\xbb\xbf", vocab, TRUE, &error));
  assert_string_equal (error->message, "t.tsv: no samples (the file is empty)");
  g_clear_error (&error);
  assert_null (load_tsv ("\xef\xbb\xbfno tab\n", vocab, TRUE, &error));
  assert_string_equal (error->message, "t.tsv:1: expected text<TAB>label, found no tab");
  g_clear_error (&error);
  caml_vocab_unref (vocab);
}

/* The paper's sanity sentences: "look" is not in the training vocabulary. */
static void
test_rnn_sanity_data (void **state)
{
  (void) state;
  CamlDataset *train, *test;
  caml_data_rnn_sanity (&train, &test);
  assert_int_equal (train->n, 2);
  assert_int_equal (test->x_shape.dims[0], 4);
  int look = (int) test->tokens[test->offsets[1] + 1];
  assert_int_equal (look, CAML_TOKEN_OOV);
  assert_int_equal (caml_vocab_lookup (train->vocab, "very"), 5);
  caml_dataset_free (train);
  caml_dataset_free (test);
}

/* caml_text_dataset_unique: a set of words per sample, first occurrences in
 * order; OOV tokens are all kept; T becomes the longest set. */
static void
test_unique_tokens (void **state)
{
  (void) state;
  static const char *const train_texts[] = { "a b a c b a", "d d d", "", NULL };
  static const char *const test_texts[] = { "a x a y x", NULL };
  static const float labels[] = { 0, 1, 0 };
  CamlVocab *vocab = caml_vocab_new ();
  CamlDataset *train = caml_text_dataset_from_texts (g_strdupv ((char **) train_texts),
                                                     labels, 3, 2, vocab, TRUE);
  CamlDataset *test = caml_text_dataset_from_texts (g_strdupv ((char **) test_texts),
                                                    labels, 1, 2, vocab, FALSE);
  caml_text_datasets_finish (train, test, 0);
  assert_int_equal (train->x_shape.dims[0], 6);
  caml_text_dataset_unique (train);
  caml_text_dataset_unique (test);
  caml_text_datasets_finish (train, test, 0);
  int a = caml_vocab_lookup (vocab, "a"), b = caml_vocab_lookup (vocab, "b");
  int c = caml_vocab_lookup (vocab, "c"), d = caml_vocab_lookup (vocab, "d");
  assert_int_equal (caml_dataset_length (train, 0), 3);
  assert_int_equal (caml_dataset_length (train, 1), 1);
  assert_int_equal (caml_dataset_length (train, 2), 0);
  assert_int_equal (caml_dataset_length (test, 0), 4);
  const gint32 want_train[] = { a, b, c, d };
  assert_memory_equal (train->tokens, want_train, sizeof want_train);
  const gint32 want_test[] = { a, CAML_TOKEN_OOV, CAML_TOKEN_OOV, CAML_TOKEN_OOV };
  assert_memory_equal (test->tokens, want_test, sizeof want_test);
  assert_int_equal (train->x_shape.dims[0], 4);   /* the longest set: the test sample */
  float row[4];
  int idx = 0;
  caml_dataset_gather (train, &idx, 1, row, (float[1]) { 0 });
  assert_true (row[0] == a && row[1] == b && row[2] == c && row[3] == CAML_TOKEN_PAD);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_vocab_unref (vocab);
}

/* caml_text_dataset_add_ngrams (2): "w1 w2" after the words; new bigrams only
 * from the training set; with an OOV word or unseen, a bigram is OOV. */
static void
test_bigrams (void **state)
{
  (void) state;
  static const char *const train_texts[] = { "a b a", "c", NULL };
  static const char *const test_texts[] = { "a b c x b a", NULL };
  static const float labels[] = { 0, 1 };
  CamlVocab *vocab = caml_vocab_new ();
  CamlDataset *train = caml_text_dataset_from_texts (g_strdupv ((char **) train_texts),
                                                     labels, 2, 2, vocab, TRUE);
  CamlDataset *test = caml_text_dataset_from_texts (g_strdupv ((char **) test_texts),
                                                    labels, 1, 2, vocab, FALSE);
  caml_text_dataset_add_ngrams (train, 2, TRUE);
  caml_text_dataset_add_ngrams (test, 2, FALSE);
  caml_text_datasets_finish (train, test, 0);
  int a = caml_vocab_lookup (vocab, "a"), b = caml_vocab_lookup (vocab, "b");
  int c = caml_vocab_lookup (vocab, "c");
  int ab = caml_vocab_lookup (vocab, "a b"), ba = caml_vocab_lookup (vocab, "b a");
  assert_true (ab >= 0 && ba >= 0);
  assert_int_equal (caml_vocab_lookup (vocab, "b c"), -1);
  assert_int_equal (caml_vocab_size (vocab), 5);
  assert_int_equal (caml_vocab_count (vocab, ab), 1);
  assert_int_equal (caml_dataset_length (train, 0), 5);
  assert_int_equal (caml_dataset_length (train, 1), 1);
  const gint32 want_train[] = { a, b, a, ab, ba, c };
  assert_memory_equal (train->tokens, want_train, sizeof want_train);
  const gint32 oov = CAML_TOKEN_OOV;
  const gint32 want_test[] = { a, b, c, oov, b, a, ab, oov, oov, oov, ba };
  assert_memory_equal (test->tokens, want_test, sizeof want_test);
  assert_int_equal (train->x_shape.dims[0], 11);
  assert_int_equal (train->x_shape.vocab, 5);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_vocab_unref (vocab);
}

/* caml_text_dataset_add_ngrams (3): the words, then every bigram, then every
 * trigram, each in text order; a trigram with an unknown word is OOV. */
static void
test_trigrams (void **state)
{
  (void) state;
  static const char *const train_texts[] = { "a b c d", "b", NULL };
  static const char *const test_texts[] = { "a b c x", "a b", NULL };
  static const float labels[] = { 0, 1 };
  CamlVocab *vocab = caml_vocab_new ();
  CamlDataset *train = caml_text_dataset_from_texts (g_strdupv ((char **) train_texts),
                                                     labels, 2, 2, vocab, TRUE);
  CamlDataset *test = caml_text_dataset_from_texts (g_strdupv ((char **) test_texts),
                                                    labels, 2, 2, vocab, FALSE);
  caml_text_dataset_add_ngrams (train, 3, TRUE);
  caml_text_dataset_add_ngrams (test, 3, FALSE);
  caml_text_datasets_finish (train, test, 0);
  int a = caml_vocab_lookup (vocab, "a"), b = caml_vocab_lookup (vocab, "b");
  int c = caml_vocab_lookup (vocab, "c"), d = caml_vocab_lookup (vocab, "d");
  int ab = caml_vocab_lookup (vocab, "a b"), bc = caml_vocab_lookup (vocab, "b c");
  int cd = caml_vocab_lookup (vocab, "c d");
  int abc = caml_vocab_lookup (vocab, "a b c"), bcd = caml_vocab_lookup (vocab, "b c d");
  assert_true (ab >= 0 && bc >= 0 && cd >= 0 && abc >= 0 && bcd >= 0);
  assert_int_equal (caml_vocab_size (vocab), 9);
  const gint32 want_train[] = { a, b, c, d, ab, bc, cd, abc, bcd, b };
  assert_memory_equal (train->tokens, want_train, sizeof want_train);
  assert_int_equal (caml_dataset_length (train, 0), 9);
  const gint32 oov = CAML_TOKEN_OOV;
  const gint32 want_test[] = { a, b, c, oov, ab, bc, oov, abc, oov, a, b, ab };
  assert_memory_equal (test->tokens, want_test, sizeof want_test);
  assert_int_equal (caml_dataset_length (test, 1), 3);
  assert_int_equal (train->x_shape.dims[0], 9);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_vocab_unref (vocab);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_tokenize_rules),
    cmocka_unit_test (test_tokenize_length),
    cmocka_unit_test (test_vocab),
    cmocka_unit_test (test_vocab_fingerprint),
    cmocka_unit_test (test_tsv),
    cmocka_unit_test (test_tsv_errors),
    cmocka_unit_test (test_tsv_line_ends),
    cmocka_unit_test (test_tsv_bom),
    cmocka_unit_test (test_rnn_sanity_data),
    cmocka_unit_test (test_unique_tokens),
    cmocka_unit_test (test_bigrams),
    cmocka_unit_test (test_trigrams),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
