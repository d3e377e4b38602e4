/* test-sem-data.c — the files `caml sem` reads: sentence pairs, text
 * columns, word counts; exact error messages; the shared files when there. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "caml-private.h"   /* tests the engine's internals */

static void
expect_pairs_error (const char *text, const char *expected)
{
  GError *error = NULL;
  CamlSentencePairs *pairs = caml_sentence_pairs_load_data (text, strlen (text), "p.tsv",
                                                            &error);
  assert_null (pairs);
  if (strcmp (error->message, expected) != 0)
    print_error ("got      \"%s\"\nexpected \"%s\"\n", error->message, expected);
  assert_string_equal (error->message, expected);
  assert_int_equal (error->code, CAML_ERROR_PARSE);
  g_error_free (error);
}

static void
test_pairs (void **state)
{
  (void) state;
  const char text[] = "a man is walking \ta person walks \t4.5\r\n"
                      "\n"
                      "two dogs\tno cat\t1\n"
                      "x\ty\t -2.5e-1 ";   /* no final newline */
  GError *error = NULL;
  CamlSentencePairs *pairs = caml_sentence_pairs_load_data (text, sizeof text - 1, "p.tsv",
                                                            &error);
  assert_non_null (pairs);
  assert_int_equal (pairs->n, 3);
  assert_string_equal (pairs->a[0], "a man is walking");
  assert_string_equal (pairs->b[0], "a person walks");
  assert_string_equal (pairs->a[1], "two dogs");
  assert_string_equal (pairs->b[2], "y");
  assert_null (pairs->a[3]);
  assert_float_equal (pairs->score[0], 4.5, 0);
  assert_float_equal (pairs->score[1], 1, 0);
  assert_float_equal (pairs->score[2], -0.25, 0);
  caml_sentence_pairs_free (pairs);

  expect_pairs_error ("a\tb\t1\na\tb\n", "p.tsv:2: expected 3 tab-separated fields "
                      "(sentence, sentence, score), found 2");
  expect_pairs_error ("a\tb\t1\t2\n", "p.tsv:1: expected 3 tab-separated fields "
                      "(sentence, sentence, score), found 4");
  expect_pairs_error ("a\tb\t1\n\nc\td\thigh\n", "p.tsv:3: the score \"high\" is not a number");
  expect_pairs_error ("a\tb\tnan\n", "p.tsv:1: the score \"nan\" is not a finite number");
  expect_pairs_error ("a\tb\t1e999\n", "p.tsv:1: the score \"1e999\" is not a finite number");
  expect_pairs_error ("a\tb\t-inf\n", "p.tsv:1: the score \"-inf\" is not a finite number");
  expect_pairs_error ("a\tb\t\n", "p.tsv:1: the score \"\" is not a number");
  expect_pairs_error (" \tb\t3\n", "p.tsv:1: the first sentence is empty");
  expect_pairs_error ("a\t\t3\n", "p.tsv:1: the second sentence is empty");
  /* The column is the byte within the line, from 1. */
  expect_pairs_error ("caf\xe9\tb\t3\n", "p.tsv:1:4: byte 0xe9 is not UTF-8 text");
  expect_pairs_error ("a\tb\t1\r\ncafé\tna\xefve\t3\n",
                      "p.tsv:2:9: byte 0xef is not UTF-8 text");
  expect_pairs_error ("\n\n", "p.tsv: no sentence pairs");

  /* A NUL byte is not text. */
  const char nul[] = "a\0b\tc\t1\n";
  assert_null (caml_sentence_pairs_load_data (nul, sizeof nul - 1, "p.tsv", &error));
  assert_string_equal (error->message, "p.tsv:1:2: a NUL byte: this is not a text file");
  g_clear_error (&error);

  /* Files: the name in errors, and a missing file. */
  assert_null (caml_sentence_pairs_load ("/nonexistent/sick", &error));
  assert_string_equal (error->message, "/nonexistent/sick: no such file");
  assert_int_equal (error->code, CAML_ERROR_IO);
  g_clear_error (&error);
}

/* A UTF-8 byte-order mark at the start of a file is not part of its first
 * field, in all three formats; line numbers still start at 1. */
static void
test_bom (void **state)
{
  (void) state;
  GError *error = NULL;
  const char pairs_text[] = "\xef\xbb\xbf" "a man\ta dog\t3\n";
  CamlSentencePairs *pairs = caml_sentence_pairs_load_data (pairs_text, sizeof pairs_text - 1,
                                                            "p.tsv", &error);
  assert_non_null (pairs);
  assert_string_equal (pairs->a[0], "a man");
  caml_sentence_pairs_free (pairs);
  expect_pairs_error ("\xef\xbb\xbf" "a\tb\n", "p.tsv:1: expected 3 tab-separated fields "
                      "(sentence, sentence, score), found 2");
  expect_pairs_error ("\xef\xbb\xbf", "p.tsv: no sentence pairs");

  /* A first field that is a number stays a number (not "\ufeff3"). */
  const char columns_text[] = "\xef\xbb\xbf" "3\tgreat movie\n";
  char **texts = caml_text_columns_load_data (columns_text, sizeof columns_text - 1, "t.tsv",
                                              &error);
  assert_non_null (texts);
  assert_int_equal (g_strv_length (texts), 1);
  assert_string_equal (texts[0], "great movie");
  g_strfreev (texts);

  const char counts_text[] = "\xef\xbb\xbf" "the 100\nof 50\n";
  CamlVocab *v = caml_word_counts_load_data (counts_text, sizeof counts_text - 1, "f.txt",
                                             &error);
  assert_non_null (v);
  assert_int_equal (caml_vocab_size (v), 2);
  assert_int_equal (caml_vocab_lookup (v, "the"), 0);
  assert_int_equal (caml_vocab_count (v, 0), 100);
  caml_vocab_unref (v);

  /* Only at the start: further on it is text like any other. */
  const char later[] = "a\n\xef\xbb\xbf" "b\n";
  texts = caml_text_columns_load_data (later, sizeof later - 1, "t.tsv", &error);
  assert_non_null (texts);
  assert_string_equal (texts[1], "\xef\xbb\xbf" "b");
  g_strfreev (texts);
}

/* Lines end in \r\n, \n or a lone \r in all three formats, and the line
 * numbers of errors count them so. */
static void
test_line_ends (void **state)
{
  (void) state;
  GError *error = NULL;
  const char pairs_text[] = "a man\ta dog\t3\rtwo cats\tone cat\t4.5\r\r\nx\ty\t1\r";
  CamlSentencePairs *pairs = caml_sentence_pairs_load_data (pairs_text, sizeof pairs_text - 1,
                                                            "p.tsv", &error);
  assert_non_null (pairs);
  assert_int_equal (pairs->n, 3);
  assert_string_equal (pairs->b[1], "one cat");
  assert_float_equal (pairs->score[1], 4.5, 0);
  assert_string_equal (pairs->a[2], "x");
  caml_sentence_pairs_free (pairs);
  expect_pairs_error ("a\tb\t1\r\r\n\rc\td\n", "p.tsv:4: expected 3 tab-separated fields "
                      "(sentence, sentence, score), found 2");

  const char columns_text[] = "great movie\t1\rbad plot\t0\r";
  char **texts = caml_text_columns_load_data (columns_text, sizeof columns_text - 1, "t.tsv",
                                              &error);
  assert_non_null (texts);
  assert_int_equal (g_strv_length (texts), 2);
  assert_string_equal (texts[1], "bad plot");
  g_strfreev (texts);

  const char counts_text[] = "the 100\rof 50\r \t\rthe 3\r";
  assert_null (caml_word_counts_load_data (counts_text, sizeof counts_text - 1, "f.txt",
                                           &error));
  assert_string_equal (error->message, "f.txt:4: the word \"the\" appears again (first on "
                       "line 1)");
  g_clear_error (&error);
}

/* A device is refused before a byte is read: /dev/zero would be read until
 * memory runs out. */
static void
test_not_regular_files (void **state)
{
  (void) state;
  const char *expected = "/dev/zero: not a regular file (a character device)";
  GError *error = NULL;
  assert_null (caml_sentence_pairs_load ("/dev/zero", &error));
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_IO));
  assert_string_equal (error->message, expected);
  g_clear_error (&error);
  assert_null (caml_text_columns_load ("/dev/zero", &error));
  assert_string_equal (error->message, expected);
  g_clear_error (&error);
  assert_null (caml_word_counts_load ("/dev/zero", &error));
  assert_string_equal (error->message, expected);
  g_clear_error (&error);
}

static void
test_text_columns (void **state)
{
  (void) state;
  const char text[] = "a man is walking \ta person walks \t4.5\n"
                      "great movie !\t1\n"
                      "\t\n"
                      "3\t 7 \n"
                      "one\ttwo\tthree\n";
  GError *error = NULL;
  char **texts = caml_text_columns_load_data (text, sizeof text - 1, "t.tsv", &error);
  assert_non_null (texts);
  const char *want[] = { "a man is walking", "a person walks", "great movie !", "one", "two",
                         "three" };
  assert_int_equal (g_strv_length (texts), G_N_ELEMENTS (want));
  for (gsize i = 0; i < G_N_ELEMENTS (want); i++)
    assert_string_equal (texts[i], want[i]);
  g_strfreev (texts);

  assert_null (caml_text_columns_load_data ("1\t2\n3\n", 6, "t.tsv", &error));
  assert_string_equal (error->message, "t.tsv: no text (every field is empty or a number)");
  g_clear_error (&error);
  assert_null (caml_text_columns_load_data ("ok\n\xff\n", 5, "t.tsv", &error));
  assert_string_equal (error->message, "t.tsv:2:1: byte 0xff is not UTF-8 text");
  g_clear_error (&error);
}

static void
test_word_counts (void **state)
{
  (void) state;
  const char text[] = "the 100\nof\t50\r\n\n  cat   7  \nzero 0\n";
  GError *error = NULL;
  CamlVocab *v = caml_word_counts_load_data (text, sizeof text - 1, "f.txt", &error);
  assert_non_null (v);
  assert_int_equal (caml_vocab_size (v), 4);
  assert_int_equal (caml_vocab_count (v, caml_vocab_lookup (v, "the")), 100);
  assert_int_equal (caml_vocab_count (v, caml_vocab_lookup (v, "of")), 50);
  assert_int_equal (caml_vocab_count (v, caml_vocab_lookup (v, "cat")), 7);
  assert_int_equal (caml_vocab_count (v, caml_vocab_lookup (v, "zero")), 0);
  caml_vocab_unref (v);

  struct { const char *text, *message; } bad[] = {
    { "the 1\nof\n", "f.txt:2: expected a word and its count, found 1 field" },
    { "the 1 2\n", "f.txt:1: expected a word and its count, found 3 fields" },
    { "the x\n", "f.txt:1: the count \"x\" is not a whole number ≥ 0" },
    { "the -3\n", "f.txt:1: the count \"-3\" is not a whole number ≥ 0" },
    { "the 1\nof 2\nthe 3\n", "f.txt:3: the word \"the\" appears again (first on line 1)" },
    { "", "f.txt: no words" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      assert_null (caml_word_counts_load_data (bad[i].text, strlen (bad[i].text), "f.txt",
                                               &error));
      if (strcmp (error->message, bad[i].message) != 0)
        print_error ("got      \"%s\"\nexpected \"%s\"\n", error->message, bad[i].message);
      assert_string_equal (error->message, bad[i].message);
      g_clear_error (&error);
    }
}

/* The shared files, when they are there. */
static char *
shared_path (const char *name)
{
  const char *env = g_getenv ("CAML_SHARED_DATASETS");
  if (env != NULL && *env != '\0')
    return g_build_filename (env, name, NULL);
  const char *root = g_getenv ("CAML_SOURCE_ROOT");
  return g_build_filename (root != NULL ? root : ".", "..", "shared", "datasets", name, NULL);
}

static void
test_shared_files (void **state)
{
  (void) state;
  char *sick = shared_path ("sick/sicktrain");
  char *sst = shared_path ("sst/sentiment-dev");
  char *freq = shared_path ("enwiki_vocab_min200.txt");
  if (!g_file_test (sick, G_FILE_TEST_IS_REGULAR) || !g_file_test (sst, G_FILE_TEST_IS_REGULAR)
      || !g_file_test (freq, G_FILE_TEST_IS_REGULAR))
    {
      print_message ("skipped: the shared data sets are absent (%s)\n", sick);
      g_free (sick);
      g_free (sst);
      g_free (freq);
      skip ();
    }
  GError *error = NULL;
  CamlSentencePairs *pairs = caml_sentence_pairs_load (sick, &error);
  assert_non_null (pairs);
  assert_int_equal (pairs->n, 4500);
  assert_true (pairs->score[0] >= 1 && pairs->score[0] <= 5);
  caml_sentence_pairs_free (pairs);
  char **texts = caml_text_columns_load (sick, &error);
  assert_int_equal (g_strv_length (texts), 9000);
  g_strfreev (texts);
  texts = caml_text_columns_load (sst, &error);
  assert_int_equal (g_strv_length (texts), 872);
  g_strfreev (texts);
  CamlVocab *v = caml_word_counts_load (freq, &error);
  assert_non_null (v);
  assert_int_equal (caml_vocab_size (v), 188033);
  assert_string_equal (caml_vocab_word (v, 0), "the");
  caml_vocab_unref (v);
  g_free (sick);
  g_free (sst);
  g_free (freq);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_pairs),
    cmocka_unit_test (test_not_regular_files),
    cmocka_unit_test (test_bom),
    cmocka_unit_test (test_line_ends),
    cmocka_unit_test (test_text_columns),
    cmocka_unit_test (test_word_counts),
    cmocka_unit_test (test_shared_files),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
