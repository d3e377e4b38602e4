/* test-text.c — the tokenizer and the vocabulary. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "caml.h"

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

/* caml_text_dataset_add_bigrams: "w1 w2" after the words; new bigrams only
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
  caml_text_dataset_add_bigrams (train, TRUE);
  caml_text_dataset_add_bigrams (test, FALSE);
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

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_tokenize_rules),
    cmocka_unit_test (test_tokenize_length),
    cmocka_unit_test (test_vocab),
    cmocka_unit_test (test_unique_tokens),
    cmocka_unit_test (test_bigrams),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
