/* test-weights.c — the binary weights file: round trip, and every way a file
 * can be wrong leaves the model untouched with an error that says why;
 * weights trained on another vocabulary are refused; version-1 files load. */
#include <math.h>
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <glib/gstdio.h>

#include "caml-private.h"   /* tests the engine's internals */

typedef struct {
  char      *dir;
  char      *path;
  CamlModel *model;
} Fixture;

/* Where the layer table starts: magic, version, the vocabulary's word count
 * and fingerprint, the layer count. */
#define TABLE_AT (8 + 4 + 4 + 8 + 4)

static CamlModel *
build (const char *doc, guint64 seed)
{
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (doc, -1, "test", &error);
  if (exp == NULL)
    fail_msg ("%s", error->message);
  exp->seed = seed;
  CamlShape input = caml_shape_flat (2);
  CamlModel *model = caml_experiment_build_model (exp, &input, &error);
  if (model == NULL)
    fail_msg ("%s", error->message);
  caml_experiment_free (exp);
  return model;
}

static const char *ca_model =
  "{ \"model\": [ { \"layer\": \"ca_nn\", \"units\": 5 },"
  "               { \"layer\": \"ca_res\", \"units\": 5, \"sublayers\": 2 },"
  "               { \"layer\": \"dense\", \"units\": 1 } ] }";

static int
setup (void **state)
{
  Fixture *f = g_new0 (Fixture, 1);
  f->dir = g_dir_make_tmp ("caml-weights-XXXXXX", NULL);
  assert_non_null (f->dir);
  f->path = g_build_filename (f->dir, "model.weights", NULL);
  f->model = build (ca_model, 1);
  GError *error = NULL;
  if (!caml_weights_save (f->model, f->path, &error))
    fail_msg ("%s", error->message);
  *state = f;
  return 0;
}

static int
teardown (void **state)
{
  Fixture *f = *state;
  g_unlink (f->path);
  g_rmdir (f->dir);
  g_free (f->path);
  g_free (f->dir);
  caml_model_free (f->model);
  g_free (f);
  return 0;
}

static guint8 *
read_file (const char *path, gsize *length)
{
  char *contents;
  assert_true (g_file_get_contents (path, &contents, length, NULL));
  return (guint8 *) contents;
}

/* Loads `data` into a copy of the model's weights and checks that it fails
 * with `needle` in the message and leaves the weights as they were. */
static void
expect_rejected (CamlModel *model, const guint8 *data, gsize length, const char *needle)
{
  float *before = g_memdup2 (model->w, model->n_weights * sizeof (float));
  GError *error = NULL;
  if (caml_weights_load_data (model, data, length, "model.weights", &error))
    fail_msg ("accepted a bad file of %zu bytes (expected \"%s\")", (size_t) length, needle);
  assert_non_null (error);
  assert_true (error->domain == CAML_ERROR);
  assert_non_null (strstr (error->message, "model.weights"));
  if (needle != NULL && strstr (error->message, needle) == NULL)
    fail_msg ("message \"%s\" lacks \"%s\"", error->message, needle);
  assert_memory_equal (before, model->w, model->n_weights * sizeof (float));
  g_error_free (error);
  g_free (before);
}

static void
test_round_trip (void **state)
{
  Fixture *f = *state;
  float *saved = g_memdup2 (f->model->w, f->model->n_weights * sizeof (float));

  /* Perturb, then load: the saved weights come back bit for bit. */
  for (size_t i = 0; i < f->model->n_weights; i++)
    f->model->w[i] = (float) i * 0.5f - 3.0f;
  GError *error = NULL;
  if (!caml_weights_load (f->model, f->path, &error))
    fail_msg ("%s", error->message);
  assert_memory_equal (saved, f->model->w, f->model->n_weights * sizeof (float));

  /* The layout is what the format says: header, table, floats, digest. */
  gsize length;
  guint8 *data = read_file (f->path, &length);
  assert_memory_equal (data, CAML_WEIGHTS_MAGIC, 8);
  guint32 version;
  memcpy (&version, data + 8, 4);
  assert_int_equal (GUINT32_FROM_LE (version), CAML_WEIGHTS_VERSION);
  gsize table = 0;
  for (int i = 0; i < f->model->n_layers; i++)
    table += 2 + strlen (f->model->layers[i]->ops->name) + 8;
  assert_int_equal (length, TABLE_AT + table + 8 + f->model->n_weights * 4 + 32);
  /* No vocabulary: 0 words, fingerprint 0. */
  guint8 zeros[12] = { 0 };
  assert_memory_equal (data + 12, zeros, sizeof zeros);
  g_free (data);

  /* Saving again over the file works (atomic replace). */
  assert_true (caml_weights_save (f->model, f->path, &error));
  g_free (saved);
}

static void
test_into_fresh_model (void **state)
{
  Fixture *f = *state;
  CamlModel *other = build (ca_model, 77);
  assert_int_equal (other->n_weights, f->model->n_weights);
  assert_memory_not_equal (other->w, f->model->w, other->n_weights * sizeof (float));
  GError *error = NULL;
  assert_true (caml_weights_load (other, f->path, &error));
  assert_memory_equal (other->w, f->model->w, other->n_weights * sizeof (float));
  caml_model_free (other);
}

static void
test_truncated (void **state)
{
  Fixture *f = *state;
  gsize length;
  guint8 *data = read_file (f->path, &length);
  for (gsize n = 0; n < length; n++)
    {
      /* A fresh heap copy of exactly n bytes, so reading past it is caught by
       * the sanitizers. */
      guint8 *cut = g_memdup2 (data, n);
      expect_rejected (f->model, cut, n, n == 0 ? "the file is empty (0 bytes)" : "truncated");
      g_free (cut);
    }
  /* A byte too many is wrong as well. */
  guint8 *longer = g_malloc (length + 1);
  memcpy (longer, data, length);
  longer[length] = 0;
  expect_rejected (f->model, longer, length + 1, "unexpected bytes");
  g_free (longer);
  g_free (data);
}

static void
test_wrong_magic (void **state)
{
  Fixture *f = *state;
  const char *html = "<!DOCTYPE html><html></html>";
  expect_rejected (f->model, (const guint8 *) html, strlen (html),
                   "not a CAML weights file (magic \"<!DOCTYP\"");

  gsize length;
  guint8 *data = read_file (f->path, &length);
  data[0] = 0x00;
  data[1] = 0xff;
  expect_rejected (f->model, data, length, "\\x00\\xff");
  expect_rejected (f->model, (const guint8 *) "XY", 2, "not a CAML weights file");
  g_free (data);
}

static void
test_version (void **state)
{
  Fixture *f = *state;
  gsize length;
  guint8 *data = read_file (f->path, &length);
  guint32 v = GUINT32_TO_LE (CAML_WEIGHTS_VERSION + 1);
  memcpy (data + 8, &v, 4);
  expect_rejected (f->model, data, length, "byte 8: weights file version 3 is not supported "
                   "(this build reads versions 1…2)");
  v = 0;
  memcpy (data + 8, &v, 4);
  expect_rejected (f->model, data, length, "byte 8: weights file version 0 is not supported");
  g_free (data);
}

static void
test_checksum (void **state)
{
  Fixture *f = *state;
  gsize length;
  guint8 *data = read_file (f->path, &length);
  /* Flip one bit in the float block, then one in the digest itself. */
  gsize positions[] = { length - 32 - 5, length - 1 };
  for (gsize i = 0; i < G_N_ELEMENTS (positions); i++)
    {
      data[positions[i]] ^= 0x10;
      expect_rejected (f->model, data, length, "checksum");
      data[positions[i]] ^= 0x10;
    }
  /* Restored, it loads again. */
  GError *error = NULL;
  assert_true (caml_weights_load_data (f->model, data, length, "model.weights", &error));
  g_free (data);
}

/* A file whose checksum is right but which holds a NaN or an infinity (saved
 * from a run that diverged, or by another tool) is rejected: loaded, every
 * loss would be NaN. The error names the value: layer, parameter, index and
 * the byte it starts at; the model keeps its weights. */
static void
test_not_finite (void **state)
{
  Fixture *f = *state;
  CamlModel *bad = build (ca_model, 2);
  gsize table = 0;
  for (int i = 0; i < bad->n_layers; i++)
    table += 2 + strlen (bad->layers[i]->ops->name) + 8;
  gsize floats_at = TABLE_AT + table + 8;

  struct { int layer, param; size_t index; float value; const char *shown; } cases[] = {
    { 0, 1, 3, NAN, "nan" },
    { 1, 0, 0, INFINITY, "inf" },
    { 2, -1, 0, -INFINITY, "-inf" },   /* -1: the layer's last parameter, last value */
  };
  char *path = g_build_filename (f->dir, "nan.weights", NULL);
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      CamlLayer *layer = bad->layers[cases[c].layer];
      CamlParam *p = &layer->params[cases[c].param >= 0 ? cases[c].param
                                                         : layer->n_params - 1];
      size_t index = cases[c].param >= 0 ? cases[c].index : p->count - 1;
      float saved = p->w[index];
      p->w[index] = cases[c].value;
      GError *error = NULL;
      if (!caml_weights_save (bad, path, &error))   /* a valid checksum */
        fail_msg ("%s", error->message);
      p->w[index] = saved;

      gsize length;
      guint8 *data = read_file (path, &length);
      char *expected = g_strdup_printf ("model.weights: byte %zu: a value is not finite: "
                                        "layer %d (%s) parameter %s[%zu] is %s",
                                        floats_at + (p->offset + index) * sizeof (float),
                                        cases[c].layer, layer->ops->name, p->name, index,
                                        cases[c].shown);
      expect_rejected (f->model, data, length, expected);
      g_free (expected);
      g_free (data);

      /* From disk the same, named by its path. */
      float *before = g_memdup2 (f->model->w, f->model->n_weights * sizeof (float));
      assert_false (caml_weights_load (f->model, path, &error));
      assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_PARSE));
      assert_true (g_str_has_prefix (error->message, path));
      assert_non_null (strstr (error->message, "a value is not finite"));
      assert_memory_equal (before, f->model->w, f->model->n_weights * sizeof (float));
      g_clear_error (&error);
      g_free (before);
    }
  /* With every value finite again, the same model's file loads. */
  GError *error = NULL;
  assert_true (caml_weights_save (bad, path, &error));
  assert_true (caml_weights_load (f->model, path, &error));
  assert_memory_equal (bad->w, f->model->w, bad->n_weights * sizeof (float));
  g_unlink (path);
  g_free (path);
  caml_model_free (bad);
}

static void
test_wrong_layers (void **state)
{
  Fixture *f = *state;

  /* Same size, different types: dense first instead of ca_nn. */
  CamlModel *swapped = build (
    "{ \"model\": [ { \"layer\": \"dense\", \"units\": 5 },"
    "               { \"layer\": \"ca_res\", \"units\": 5, \"sublayers\": 2 },"
    "               { \"layer\": \"dense\", \"units\": 1 } ] }", 1);
  GError *error = NULL;
  float *before = g_memdup2 (swapped->w, swapped->n_weights * sizeof (float));
  assert_false (caml_weights_load (swapped, f->path, &error));
  assert_non_null (strstr (error->message,
                           "byte 30: layer 0 is ca_nn in the file but dense in the model"));
  assert_memory_equal (before, swapped->w, swapped->n_weights * sizeof (float));
  g_clear_error (&error);
  g_free (before);
  caml_model_free (swapped);

  /* Same types, other widths. */
  CamlModel *wider = build (
    "{ \"model\": [ { \"layer\": \"ca_nn\", \"units\": 6 },"
    "               { \"layer\": \"ca_res\", \"units\": 5, \"sublayers\": 2 },"
    "               { \"layer\": \"dense\", \"units\": 1 } ] }", 1);
  assert_false (caml_weights_load (wider, f->path, &error));
  assert_non_null (strstr (error->message, "byte 35: layer 0 (ca_nn) has"));
  g_clear_error (&error);
  caml_model_free (wider);

  /* Fewer layers. */
  CamlModel *shorter = build (
    "{ \"model\": [ { \"layer\": \"ca_nn\", \"units\": 5 },"
    "               { \"layer\": \"dense\", \"units\": 1 } ] }", 1);
  assert_false (caml_weights_load (shorter, f->path, &error));
  assert_non_null (strstr (error->message, "byte 24: the file has 3 layers but the model has 2"));
  g_clear_error (&error);
  caml_model_free (shorter);
}

/* caml_weights_load from disk: every damaged file fails with a message that
 * names the file, the byte and the problem, and leaves every weight of the
 * model bit for bit as it was (no half-applied load). */
static void
test_failed_load_from_disk (void **state)
{
  Fixture *f = *state;
  CamlModel *model = f->model;
  size_t bytes = model->n_weights * sizeof (float);
  gsize length;
  guint8 *good = read_file (f->path, &length);

  /* The model holds other weights than the file: any partial copy shows. */
  for (size_t i = 0; i < model->n_weights; i++)
    model->w[i] = -1.0f - (float) i;
  float *before = g_memdup2 (model->w, bytes);

  gsize table = 0;
  for (int i = 0; i < model->n_layers; i++)
    table += 2 + strlen (model->layers[i]->ops->name) + 8;
  gsize floats_at = TABLE_AT + table + 8;
  gsize digest_at = length - 32;

  typedef struct {
    const char *name;
    gsize       cut;        /* keep this many bytes (G_MAXSIZE: all) */
    gsize       flip;       /* xor 0x40 into this byte (G_MAXSIZE: none) */
    gboolean    extra;      /* append a byte */
    char       *needles[2];
  } Damage;
  Damage damages[] = {
    { "empty", 0, G_MAXSIZE, FALSE, { g_strdup ("the file is empty (0 bytes)"), NULL } },
    { "in the vocabulary", 16, G_MAXSIZE, FALSE,
      { g_strdup ("truncated at byte 16"), g_strdup ("the vocabulary's fingerprint") } },
    { "in the table", TABLE_AT + 4, G_MAXSIZE, FALSE,
      { g_strdup_printf ("truncated at byte %d", TABLE_AT + 2),
        g_strdup ("the name of layer 0") } },
    { "in the floats", length - 100, G_MAXSIZE, FALSE,
      { g_strdup_printf ("truncated at byte %zu", floats_at), g_strdup ("parameters") } },
    { "in the checksum", length - 1, G_MAXSIZE, FALSE,
      { g_strdup_printf ("truncated at byte %zu", digest_at), g_strdup ("SHA-256") } },
    { "a flipped bit", G_MAXSIZE, floats_at + 7, FALSE,
      { g_strdup_printf ("byte %zu: checksum mismatch", digest_at), g_strdup ("damaged") } },
    { "the version", G_MAXSIZE, 8, FALSE,
      { g_strdup ("byte 8: weights file version 66 is not supported"), NULL } },
    { "the magic", G_MAXSIZE, 0, FALSE,
      { g_strdup ("not a CAML weights file (magic \"\\x03AMLWGT1\""), NULL } },
    { "a byte too many", G_MAXSIZE, G_MAXSIZE, TRUE,
      { g_strdup_printf ("1 unexpected bytes after the checksum at byte %zu", length),
        NULL } },
  };

  for (gsize k = 0; k < G_N_ELEMENTS (damages); k++)
    {
      Damage *d = &damages[k];
      gsize n = MIN (d->cut, length);
      guint8 *data = g_malloc (length + 1);
      memcpy (data, good, length);
      if (d->flip != G_MAXSIZE)
        data[d->flip] ^= 0x40;
      if (d->extra)
        data[n++] = 0;
      char *path = g_build_filename (f->dir, "damaged.weights", NULL);
      assert_true (g_file_set_contents (path, (const char *) data, (gssize) n, NULL));

      GError *error = NULL;
      if (caml_weights_load (model, path, &error))
        fail_msg ("%s: loaded a damaged file", d->name);
      assert_true (error->domain == CAML_ERROR);
      if (!g_str_has_prefix (error->message, path))
        fail_msg ("%s: \"%s\" does not start with the file", d->name, error->message);
      for (int i = 0; i < 2 && d->needles[i] != NULL; i++)
        if (strstr (error->message, d->needles[i]) == NULL)
          fail_msg ("%s: \"%s\" lacks \"%s\"", d->name, error->message, d->needles[i]);
      assert_memory_equal (before, model->w, bytes);

      g_clear_error (&error);
      g_unlink (path);
      g_free (path);
      g_free (data);
      g_free (d->needles[0]);
      g_free (d->needles[1]);
    }

  /* Not a file at all: a directory, a missing file. */
  GError *error = NULL;
  assert_false (caml_weights_load (model, f->dir, &error));
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_IO));
  assert_non_null (strstr (error->message, f->dir));
  g_clear_error (&error);
  assert_memory_equal (before, model->w, bytes);

  /* A device: refused before a byte is read (/dev/zero never ends). */
  assert_false (caml_weights_load (model, "/dev/zero", &error));
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_IO));
  assert_string_equal (error->message, "/dev/zero: not a regular file (a character device)");
  g_clear_error (&error);
  assert_memory_equal (before, model->w, bytes);

  /* And the good file still loads over them. */
  assert_true (caml_weights_load (model, f->path, &error));
  assert_memory_not_equal (before, model->w, bytes);
  g_free (before);
  g_free (good);
}

static void
test_missing_file (void **state)
{
  Fixture *f = *state;
  char *path = g_build_filename (f->dir, "nope.weights", NULL);
  GError *error = NULL;
  assert_false (caml_weights_load (f->model, path, &error));
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_IO));
  assert_non_null (strstr (error->message, "nope.weights"));
  g_clear_error (&error);

  /* Saving into a directory that does not exist is an error, not a crash. */
  char *bad = g_build_filename (f->dir, "no", "such", "dir", "m.weights", NULL);
  assert_false (caml_weights_save (f->model, bad, &error));
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_IO));
  g_clear_error (&error);
  g_free (bad);
  g_free (path);
}

/* ------------------------------------------------------ the vocabulary */

/* A text experiment's data and model (average dim 3 → dense 2), the
 * training file holding `train_text`: built as `caml train` and the
 * workbench build them, so the model has the training set's vocabulary. */
static CamlModel *
text_model (const char *dir, const char *train_text, guint64 seed)
{
  char *tsv = g_build_filename (dir, "train.tsv", NULL);
  assert_true (g_file_set_contents (tsv, train_text, -1, NULL));
  char *doc = g_strdup_printf (
    "{ \"data\": { \"text\": { \"train\": \"%s\", \"test\": \"%s\" } },"
    "  \"model\": [ { \"layer\": \"average\", \"dim\": 3 },"
    "               { \"layer\": \"dense\", \"units\": 2 } ],"
    "  \"loss\": \"softmax_cross_entropy\" }", tsv, tsv);
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (doc, -1, "text", &error);
  if (exp == NULL)
    fail_msg ("%s", error->message);
  exp->seed = seed;
  CamlDataset *train, *test;
  if (!caml_experiment_load_datasets (exp, &train, &test, &error))
    fail_msg ("%s", error->message);
  CamlModel *model = caml_experiment_build_model_for (exp, train, &error);
  if (model == NULL)
    fail_msg ("%s", error->message);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_experiment_free (exp);
  g_unlink (tsv);
  g_free (tsv);
  g_free (doc);
  return model;
}

/* The file as version 1 wrote it: no vocabulary fields, its own checksum. */
static guint8 *
as_version_1 (const guint8 *data, gsize length, gsize *length_1)
{
  gsize body = length - 32 - 12;
  guint8 *v1 = g_malloc (body + 32);
  guint32 one = GUINT32_TO_LE (1);
  memcpy (v1, data, 8);
  memcpy (v1 + 8, &one, 4);
  memcpy (v1 + 12, data + 24, body - 12);
  gsize digest_len = 32;
  GChecksum *sha = g_checksum_new (G_CHECKSUM_SHA256);
  g_checksum_update (sha, v1, body);
  g_checksum_get_digest (sha, v1 + body, &digest_len);
  g_checksum_free (sha);
  *length_1 = body + 32;
  return v1;
}

/* A model built for a text set records the set's vocabulary, a weights file
 * its word count and fingerprint, and the weights load back into a model
 * built for the same text. */
static void
test_vocab_round_trip (void **state)
{
  Fixture *f = *state;
  CamlModel *a = text_model (f->dir, "good film\t1\nbad film\t0\n", 1);
  assert_non_null (a->vocab);
  assert_int_equal (caml_vocab_size (a->vocab), 3);   /* good film bad */
  char *path = g_build_filename (f->dir, "text.weights", NULL);
  GError *error = NULL;
  assert_true (caml_weights_save (a, path, &error));

  gsize length;
  guint8 *data = read_file (path, &length);
  guint32 words;
  guint64 fingerprint;
  memcpy (&words, data + 12, 4);
  memcpy (&fingerprint, data + 16, 8);
  assert_int_equal (GUINT32_FROM_LE (words), 3);
  assert_true (GUINT64_FROM_LE (fingerprint) == caml_vocab_fingerprint (a->vocab));
  g_free (data);

  CamlModel *b = text_model (f->dir, "good film\t1\nbad film\t0\n", 2);
  assert_memory_not_equal (a->w, b->w, a->n_weights * sizeof (float));
  if (!caml_weights_load (b, path, &error))
    fail_msg ("%s", error->message);
  assert_memory_equal (a->w, b->w, a->n_weights * sizeof (float));

  caml_model_free (a);
  caml_model_free (b);
  g_unlink (path);
  g_free (path);
}

/* Weights trained on other words are refused, the model untouched, with a
 * message that names the file and says the vocabulary differs: another
 * vocabulary of the same size (the case only the fingerprint catches, as
 * every layer has the same size), the same words in another order, and one
 * of another size (told before the layer table would differ). */
static void
test_vocab_mismatch (void **state)
{
  Fixture *f = *state;
  CamlModel *a = text_model (f->dir, "good film\t1\nbad film\t0\n", 1);
  char *path = g_build_filename (f->dir, "text.weights", NULL);
  GError *error = NULL;
  assert_true (caml_weights_save (a, path, &error));
  gsize length;
  guint8 *data = read_file (path, &length);

  const char *texts[] = {
    "fine film\t1\nbad film\t0\n",               /* 3 words, one other */
    "bad film\t0\ngood film\t1\n",               /* the same 3, another order */
    "good film\t1\nbad film\t0\nawful\t0\n",     /* 4 words */
  };
  for (gsize k = 0; k < G_N_ELEMENTS (texts); k++)
    {
      CamlModel *other = text_model (f->dir, texts[k], 1);
      int n = caml_vocab_size (other->vocab);
      char *how = n == 3 ? g_strdup_printf (" with a different fingerprint (%016"
                                            G_GINT64_MODIFIER "x)",
                                            caml_vocab_fingerprint (other->vocab))
                         : g_strdup ("");
      char *expected = g_strdup_printf (
        "model.weights: byte 12: these weights were trained on a vocabulary of 3 words "
        "with fingerprint %016" G_GINT64_MODIFIER "x; the data now gives %d words%s — "
        "the training text or the data settings changed",
        caml_vocab_fingerprint (a->vocab), n, how);
      expect_rejected (other, data, length, expected);

      /* From disk, named by its path. */
      assert_false (caml_weights_load (other, path, &error));
      assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_INVALID));
      assert_true (g_str_has_prefix (error->message, path));
      assert_non_null (strstr (error->message, "these weights were trained on a vocabulary"));
      g_clear_error (&error);
      g_free (expected);
      g_free (how);
      caml_model_free (other);
    }
  g_free (data);
  caml_model_free (a);
  g_unlink (path);
  g_free (path);
}

/* Word counts in the message have thousands separators. */
static void
test_vocab_mismatch_large (void **state)
{
  (void) state;
  const char *doc = "{ \"model\": [ { \"layer\": \"average\", \"dim\": 2 },"
                    "               { \"layer\": \"dense\", \"units\": 1 } ] }";
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (doc, -1, "test", &error);
  assert_non_null (exp);
  CamlShape input = caml_shape_tokens (4, 1234567);
  CamlModel *models[2];
  for (int m = 0; m < 2; m++)
    {
      CamlVocab *vocab = caml_vocab_new ();
      for (int i = 0; i < 1234567; i++)
        {
          char word[32];
          g_snprintf (word, sizeof word, "%c%d", m == 0 ? 'w' : 'v', i);
          caml_vocab_add (vocab, word, 1);
        }
      models[m] = caml_experiment_build_model (exp, &input, &error);
      assert_non_null (models[m]);
      caml_model_set_vocab (models[m], vocab);
      caml_vocab_unref (vocab);   /* the model holds a reference */
    }
  char *dir = g_dir_make_tmp ("caml-weights-XXXXXX", NULL);
  char *path = g_build_filename (dir, "model.weights", NULL);
  assert_true (caml_weights_save (models[0], path, &error));
  gsize length;
  guint8 *data = read_file (path, &length);
  expect_rejected (models[1], data, length,
                   "a vocabulary of 1,234,567 words with fingerprint");
  expect_rejected (models[1], data, length,
                   "the data now gives 1,234,567 words with a different fingerprint");
  g_free (data);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
  caml_model_free (models[0]);
  caml_model_free (models[1]);
  caml_experiment_free (exp);
}

/* Version 1 recorded no vocabulary: such files still load, unchecked, into
 * a model with any vocabulary (and into one without). */
static void
test_version_1 (void **state)
{
  Fixture *f = *state;
  CamlModel *a = text_model (f->dir, "good film\t1\nbad film\t0\n", 1);
  char *path = g_build_filename (f->dir, "text.weights", NULL);
  GError *error = NULL;
  assert_true (caml_weights_save (a, path, &error));
  gsize length, length_1;
  guint8 *data = read_file (path, &length);
  guint8 *v1 = as_version_1 (data, length, &length_1);

  CamlModel *other = text_model (f->dir, "fine film\t1\nbad film\t0\n", 2);
  expect_rejected (other, data, length, "these weights were trained on a vocabulary");
  if (!caml_weights_load_data (other, v1, length_1, "model.weights", &error))
    fail_msg ("%s", error->message);
  assert_memory_equal (a->w, other->w, a->n_weights * sizeof (float));

  /* The fixture's model (no vocabulary), saved and made version 1, too. */
  g_free (data);
  g_free (v1);
  data = read_file (f->path, &length);
  v1 = as_version_1 (data, length, &length_1);
  CamlModel *fresh = build (ca_model, 9);
  assert_true (caml_weights_load_data (fresh, v1, length_1, "model.weights", &error));
  assert_memory_equal (f->model->w, fresh->w, fresh->n_weights * sizeof (float));
  /* … and a damaged version-1 file is still told from a good one. */
  v1[length_1 - 40] ^= 1;
  expect_rejected (fresh, v1, length_1, "checksum mismatch");

  caml_model_free (fresh);
  caml_model_free (other);
  caml_model_free (a);
  g_free (data);
  g_free (v1);
  g_unlink (path);
  g_free (path);
}

/* The check needs both sides: weights saved from a model without a
 * vocabulary load into one with a vocabulary, and the other way round (a
 * model built without its training set cannot tell). */
static void
test_vocab_one_side (void **state)
{
  Fixture *f = *state;
  CamlModel *a = text_model (f->dir, "good film\t1\nbad film\t0\n", 1);
  CamlModel *b = text_model (f->dir, "fine film\t1\nbad film\t0\n", 2);
  char *path = g_build_filename (f->dir, "text.weights", NULL);
  GError *error = NULL;

  caml_model_set_vocab (a, NULL);
  assert_null (a->vocab);
  assert_true (caml_weights_save (a, path, &error));
  assert_true (caml_weights_load (b, path, &error));
  assert_memory_equal (a->w, b->w, a->n_weights * sizeof (float));

  CamlVocab *vocab = caml_vocab_ref (b->vocab);
  for (size_t i = 0; i < b->n_weights; i++)
    b->w[i] = (float) i;
  assert_true (caml_weights_save (b, path, &error));
  assert_true (caml_weights_load (a, path, &error));
  assert_memory_equal (a->w, b->w, a->n_weights * sizeof (float));

  /* Given the vocabulary back, the same model refuses a file of other words. */
  caml_model_set_vocab (a, vocab);
  caml_vocab_unref (vocab);
  CamlModel *c = text_model (f->dir, "good film\t1\nbad film\t0\n", 3);
  assert_true (caml_weights_save (c, path, &error));
  assert_false (caml_weights_load (a, path, &error));
  assert_non_null (strstr (error->message, "these weights were trained on a vocabulary"));
  g_clear_error (&error);

  caml_model_free (a);
  caml_model_free (b);
  caml_model_free (c);
  g_unlink (path);
  g_free (path);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_round_trip, setup, teardown),
    cmocka_unit_test_setup_teardown (test_into_fresh_model, setup, teardown),
    cmocka_unit_test_setup_teardown (test_truncated, setup, teardown),
    cmocka_unit_test_setup_teardown (test_wrong_magic, setup, teardown),
    cmocka_unit_test_setup_teardown (test_version, setup, teardown),
    cmocka_unit_test_setup_teardown (test_checksum, setup, teardown),
    cmocka_unit_test_setup_teardown (test_not_finite, setup, teardown),
    cmocka_unit_test_setup_teardown (test_wrong_layers, setup, teardown),
    cmocka_unit_test_setup_teardown (test_failed_load_from_disk, setup, teardown),
    cmocka_unit_test_setup_teardown (test_missing_file, setup, teardown),
    cmocka_unit_test_setup_teardown (test_vocab_round_trip, setup, teardown),
    cmocka_unit_test_setup_teardown (test_vocab_mismatch, setup, teardown),
    cmocka_unit_test (test_vocab_mismatch_large),
    cmocka_unit_test_setup_teardown (test_version_1, setup, teardown),
    cmocka_unit_test_setup_teardown (test_vocab_one_side, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
