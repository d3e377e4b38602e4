/* test-idx.c — the IDX loader: values, raw and gzipped files, and every way a
 * file can be wrong (truncated anywhere, wrong magic, wrong dimension count,
 * sizes that disagree with the header, images and labels that disagree, a
 * missing file). Every error must name the file. The in-memory loader the
 * fuzz target uses (caml_idx_load_bytes) must agree with caml_idx_load on
 * every file here: the same data, or the same message. */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#include "caml-private.h"   /* tests the engine's internals */
#include "idx-private.h"

/* The synthetic set: N images of H×W with labels. */
#define N 3
#define H 4
#define W 5

typedef struct {
  char *dir;   /* a fresh temporary directory per test */
} Fixture;

static int
setup (void **state)
{
  Fixture *f = g_new0 (Fixture, 1);
  f->dir = g_dir_make_tmp ("caml-idx-XXXXXX", NULL);
  assert_non_null (f->dir);
  *state = f;
  return 0;
}

static int
teardown (void **state)
{
  Fixture *f = *state;
  GDir *dir = g_dir_open (f->dir, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      char *path = g_build_filename (f->dir, name, NULL);
      g_unlink (path);
      g_free (path);
    }
  g_dir_close (dir);
  g_rmdir (f->dir);
  g_free (f->dir);
  g_free (f);
  return 0;
}

/* ---------------------------------------------------------------- helpers */

static void
append_be32 (GByteArray *b, guint32 v)
{
  guint32 be = GUINT32_TO_BE (v);
  g_byte_array_append (b, (const guint8 *) &be, 4);
}

/* An IDX file: magic, sizes, payload. */
static GByteArray *
make_idx (guint32 magic, const guint32 *dims, int ndims, const guint8 *payload, gsize n)
{
  GByteArray *b = g_byte_array_new ();
  append_be32 (b, magic);
  for (int i = 0; i < ndims; i++)
    append_be32 (b, dims[i]);
  g_byte_array_append (b, payload, n);
  return b;
}

static guint8
pixel (int i)
{
  return (guint8) ((i * 37 + 11) % 256);
}

static const guint8 labels_payload[N] = { 7, 0, 9 };

static GByteArray *
make_images (void)
{
  guint8 px[N * H * W];
  for (int i = 0; i < N * H * W; i++)
    px[i] = pixel (i);
  const guint32 dims[] = { N, H, W };
  return make_idx (0x00000803, dims, 3, px, sizeof px);
}

static GByteArray *
make_labels (void)
{
  const guint32 dims[] = { N };
  return make_idx (0x00000801, dims, 1, labels_payload, N);
}

/* Gzip through GIO's own compressor. */
static GBytes *
gzip (const guint8 *data, gsize n)
{
  GZlibCompressor *z = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, 6);
  GOutputStream *mem = g_memory_output_stream_new_resizable ();
  GOutputStream *out = g_converter_output_stream_new (mem, G_CONVERTER (z));
  gsize written;
  assert_true (g_output_stream_write_all (out, data, n, &written, NULL, NULL));
  assert_true (g_output_stream_close (out, NULL, NULL));
  GBytes *bytes = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (mem));
  g_object_unref (out);
  g_object_unref (mem);
  g_object_unref (z);
  return bytes;
}

/* Write data (gzipped when gz) to dir/name; returns the path. */
static char *
put (const Fixture *f, const char *name, const guint8 *data, gsize n, gboolean gz)
{
  char *path = g_build_filename (f->dir, name, NULL);
  if (gz)
    {
      GBytes *z = gzip (data, n);
      gsize zn;
      const char *zd = g_bytes_get_data (z, &zn);
      assert_true (g_file_set_contents (path, zd, zn, NULL));
      g_bytes_unref (z);
    }
  else
    assert_true (g_file_set_contents (path, (const char *) data, n, NULL));
  return path;
}

static char *
put_array (const Fixture *f, const char *name, GByteArray *b, gboolean gz)
{
  char *path = put (f, name, b->data, b->len, gz);
  g_byte_array_unref (b);
  return path;
}

/* Both files in memory, when both are regular files (else NULL). */
static CamlDataset *
load_bytes (const char *images, const char *labels, int limit, GError **error,
            gboolean *tried)
{
  char *img = NULL, *lab = NULL;
  gsize img_n, lab_n;
  *tried = g_file_get_contents (images, &img, &img_n, NULL)
           && g_file_get_contents (labels, &lab, &lab_n, NULL);
  CamlDataset *set = NULL;
  if (*tried)
    {
      GBytes *ib = g_bytes_new_take (img, img_n), *lb = g_bytes_new_take (lab, lab_n);
      img = lab = NULL;
      set = caml_idx_load_bytes (ib, images, lb, labels, limit, error);
      g_bytes_unref (ib);
      g_bytes_unref (lb);
    }
  g_free (img);
  g_free (lab);
  return set;
}

/* caml_idx_load_bytes gives the same data set as caml_idx_load. */
static void
check_same_from_memory (const CamlDataset *set, const char *images, const char *labels,
                        int limit)
{
  GError *error = NULL;
  gboolean tried;
  CamlDataset *mem = load_bytes (images, labels, limit, &error, &tried);
  assert_true (tried);
  if (mem == NULL)
    fail_msg ("from memory: %s", error->message);
  assert_int_equal (mem->n, set->n);
  assert_true (caml_shape_equal (&mem->x_shape, &set->x_shape));
  assert_int_equal (mem->n_classes, set->n_classes);
  assert_null (mem->x);
  assert_memory_equal (mem->pixels, set->pixels,
                       (size_t) set->n * caml_shape_size (&set->x_shape));
  assert_memory_equal (mem->y, set->y, (size_t) set->n * sizeof (float));
  caml_dataset_free (mem);
}

/* The load must fail with a CAML_ERROR whose message holds every needle
 * (NULL-terminated) and, always, the base name of `file` — from the paths,
 * and with the same message from memory. */
static void
expect_failure (const char *images, const char *labels, int limit, const char *file,
                ...)
{
  GError *error = NULL;
  CamlDataset *set = caml_idx_load (images, labels, limit, &error);
  if (set != NULL)
    fail_msg ("loaded %s + %s, expected an error", images, labels);
  assert_non_null (error);
  GError *mem_error = NULL;
  gboolean tried;
  CamlDataset *mem = load_bytes (images, labels, limit, &mem_error, &tried);
  if (tried)
    {
      if (mem != NULL)
        fail_msg ("loaded %s + %s from memory, expected an error", images, labels);
      assert_true (g_error_matches (mem_error, error->domain, error->code));
      assert_string_equal (mem_error->message, error->message);
      g_error_free (mem_error);
    }
  assert_true (error->domain == CAML_ERROR);
  char *base = g_path_get_basename (file);
  if (strstr (error->message, base) == NULL)
    fail_msg ("\"%s\" does not name %s", error->message, base);
  g_free (base);

  va_list args;
  va_start (args, file);
  const char *needle;
  while ((needle = va_arg (args, const char *)) != NULL)
    if (strstr (error->message, needle) == NULL)
      fail_msg ("\"%s\" lacks \"%s\"", error->message, needle);
  va_end (args);
  g_error_free (error);
}

static void
check_values (const CamlDataset *set, int n)
{
  assert_int_equal (set->n, n);
  CamlShape img = caml_shape_image (1, H, W);
  assert_true (caml_shape_equal (&set->x_shape, &img));
  assert_int_equal (set->y_width, 1);
  assert_int_equal (set->n_classes, 10);
  /* kept as the bytes they are; given as byte / 255 */
  assert_null (set->x);
  g_autofree float *x = caml_dataset_copy_rows (set, 0, n);
  for (int i = 0; i < n * H * W; i++)
    {
      if (set->pixels[i] != pixel (i))
        fail_msg ("pixel %d: byte %d, expected %d", i, set->pixels[i], pixel (i));
      if (x[i] != (float) pixel (i) / 255.0f)
        fail_msg ("pixel %d: %g, expected %d/255", i, x[i], pixel (i));
    }
  for (int i = 0; i < n; i++)
    assert_true (set->y[i] == (float) labels_payload[i]);
  /* a gathered batch gives the same values */
  int idx[2] = { n - 1, 0 };
  g_autofree float *bx = g_new (float, 2 * H * W), *by = g_new (float, 2);
  caml_dataset_gather (set, idx, 2, bx, by);
  for (int k = 0; k < 2; k++)
    {
      assert_memory_equal (bx + k * H * W, x + idx[k] * H * W, H * W * sizeof (float));
      assert_true (by[k] == set->y[idx[k]]);
    }
}

/* ------------------------------------------------------------------ tests */

static void
test_data_dir (void **state)
{
  char *old = g_strdup (g_getenv ("CAML_DATA_DIR"));
  g_setenv ("CAML_DATA_DIR", "/some/where", TRUE);
  assert_string_equal (caml_data_dir (), "/some/where");
  g_setenv ("CAML_DATA_DIR", "", TRUE);   /* empty: as if unset */
  assert_true (g_str_has_suffix (caml_data_dir (), "datasets/data"));
  g_unsetenv ("CAML_DATA_DIR");
  assert_true (g_str_has_suffix (caml_data_dir (), "datasets/data"));
  assert_true (g_path_is_absolute (caml_data_dir ()));
  if (old != NULL)
    g_setenv ("CAML_DATA_DIR", old, TRUE);
  g_free (old);
}

static void
test_round_trip (void **state)
{
  Fixture *f = *state;
  /* Every combination of raw and gzipped files, including names that do not
   * say which: the content decides. */
  static const struct { const char *img, *lab; gboolean img_gz, lab_gz; } cases[] = {
    { "img", "lab", FALSE, FALSE },
    { "img.gz", "lab.gz", TRUE, TRUE },
    { "img.gz", "lab", TRUE, FALSE },
    { "img-z", "lab-z", TRUE, TRUE },        /* gzipped without .gz */
    { "raw.gz", "rawlab.gz", FALSE, FALSE }, /* raw named .gz */
  };
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      char *images = put_array (f, cases[c].img, make_images (), cases[c].img_gz);
      char *labels = put_array (f, cases[c].lab, make_labels (), cases[c].lab_gz);
      GError *error = NULL;
      CamlDataset *set = caml_idx_load (images, labels, 0, &error);
      if (set == NULL)
        fail_msg ("case %zu: %s", c, error->message);
      check_values (set, N);
      check_same_from_memory (set, images, labels, 0);
      caml_dataset_free (set);

      /* limit keeps the first items; a limit beyond N keeps N. */
      set = caml_idx_load (images, labels, 2, &error);
      assert_non_null (set);
      check_values (set, 2);
      check_same_from_memory (set, images, labels, 2);
      caml_dataset_free (set);
      set = caml_idx_load (images, labels, 1000, &error);
      assert_non_null (set);
      check_values (set, N);
      caml_dataset_free (set);
      g_free (images);
      g_free (labels);
    }
}

static void
test_many_classes (void **state)
{
  Fixture *f = *state;
  const guint8 labs[N] = { 3, 255, 0 };
  const guint32 dims[] = { N };
  char *images = put_array (f, "img", make_images (), FALSE);
  char *labels = put_array (f, "lab", make_idx (0x801, dims, 1, labs, N), FALSE);
  GError *error = NULL;
  CamlDataset *set = caml_idx_load (images, labels, 0, &error);
  assert_non_null (set);
  assert_int_equal (set->n_classes, 256);
  assert_true (set->y[1] == 255.0f);
  caml_dataset_free (set);
  g_free (images);
  g_free (labels);
}

/* A larger image file than one read chunk, gzipped: exercises the growth of
 * the buffer and the streaming decompression. */
static void
test_large (void **state)
{
  Fixture *f = *state;
  const int n = 300, h = 28, w = 28;
  gsize bytes = (gsize) n * h * w;
  guint8 *px = g_malloc (bytes);
  guint8 *labs = g_malloc (n);
  for (gsize i = 0; i < bytes; i++)
    px[i] = (guint8) (i * 7 % 251);
  for (int i = 0; i < n; i++)
    labs[i] = (guint8) (i % 10);
  const guint32 idims[] = { n, h, w }, ldims[] = { n };
  for (int gz = 0; gz < 2; gz++)
    {
      char *images = put_array (f, "big", make_idx (0x803, idims, 3, px, bytes), gz);
      char *labels = put_array (f, "bigl", make_idx (0x801, ldims, 1, labs, n), gz);
      GError *error = NULL;
      CamlDataset *set = caml_idx_load (images, labels, 0, &error);
      if (set == NULL)
        fail_msg ("%s", error->message);
      assert_int_equal (set->n, n);
      for (gsize i = 0; i < bytes; i++)
        if (set->pixels[i] != px[i])
          fail_msg ("pixel %zu", i);
      assert_true (set->y[n - 1] == (float) ((n - 1) % 10));
      caml_dataset_free (set);

      set = caml_idx_load (images, labels, 123, &error);
      assert_non_null (set);
      assert_int_equal (set->n, 123);
      g_autofree float *last = caml_dataset_copy_rows (set, 122, 1);
      assert_true (last[h * w - 1] == (float) px[123 * h * w - 1] / 255.0f);
      caml_dataset_free (set);
      g_free (images);
      g_free (labels);
    }
  g_free (px);
  g_free (labs);
}

/* Every proper prefix of a valid file is an error naming the file — raw or
 * gzipped, images or labels, and gzip streams cut anywhere. */
static void
test_truncated_everywhere (void **state)
{
  Fixture *f = *state;
  GByteArray *images = make_images ();
  GByteArray *labels = make_labels ();
  char *good_images = put (f, "good-img", images->data, images->len, FALSE);
  char *good_labels = put (f, "good-lab", labels->data, labels->len, FALSE);

  for (int which = 0; which < 2; which++)
    {
      GByteArray *b = which == 0 ? images : labels;
      for (int gz = 0; gz < 2; gz++)
        for (guint len = 0; len < b->len; len++)
          {
            char *cut = put (f, "cut", b->data, len, gz);
            if (which == 0)
              expect_failure (cut, good_labels, 0, cut, NULL);
            else
              expect_failure (good_images, cut, 0, cut, NULL);
            g_free (cut);
          }

      /* The compressed stream itself cut short. */
      GBytes *z = gzip (b->data, b->len);
      gsize zn;
      const guint8 *zd = g_bytes_get_data (z, &zn);
      for (gsize len = 0; len < zn; len++)
        {
          char *cut = put (f, "cut.gz", zd, len, FALSE);
          if (which == 0)
            expect_failure (cut, good_labels, 0, cut, NULL);
          else
            expect_failure (good_images, cut, 0, cut, NULL);
          g_free (cut);
        }
      g_bytes_unref (z);
    }

  /* The messages say what is missing. */
  char *p = put (f, "empty", images->data, 0, FALSE);
  expect_failure (p, good_labels, 0, p, "empty", NULL);
  g_free (p);
  p = put (f, "short", images->data, 3, FALSE);
  expect_failure (p, good_labels, 0, p, "too short", NULL);
  g_free (p);
  p = put (f, "half-header", images->data, 10, FALSE);
  expect_failure (p, good_labels, 0, p, "truncated header", "10 bytes", "16", NULL);
  g_free (p);
  p = put (f, "short-payload", images->data, 70, FALSE);
  expect_failure (p, good_labels, 0, p,
                  "truncated: header says 3 images of 4×5 (76 bytes) but the file "
                  "holds 70 bytes", NULL);
  g_free (p);
  p = put (f, "short-payload.gz", images->data, 70, TRUE);
  expect_failure (p, good_labels, 0, p, "truncated", "(76 bytes)", "70 bytes (decompressed)",
                  NULL);
  g_free (p);
  p = put (f, "short-labels", labels->data, 10, FALSE);
  expect_failure (good_images, p, 0, p, "truncated", "3 labels", NULL);
  g_free (p);
  /* A limit does not excuse a truncated file. */
  p = put (f, "short-payload", images->data, 70, FALSE);
  expect_failure (p, good_labels, 1, p, "truncated", NULL);
  g_free (p);

  g_byte_array_unref (images);
  g_byte_array_unref (labels);
  g_free (good_images);
  g_free (good_labels);
}

static void
test_wrong_magic (void **state)
{
  Fixture *f = *state;
  char *labels = put_array (f, "lab", make_labels (), FALSE);
  char *images = put_array (f, "img", make_images (), FALSE);

  /* An HTML error page saved under the data set's name. */
  const char *html = "<html><body>404 Not Found</body></html>";
  char *p = put (f, "train-images-idx3-ubyte", (const guint8 *) html, strlen (html), FALSE);
  expect_failure (p, labels, 0, p, "expected magic 0x00000803, found 0x3c68746d",
                  "HTML page", NULL);
  g_free (p);
  /* … and gzipped. */
  p = put (f, "page.gz", (const guint8 *) html, strlen (html), TRUE);
  expect_failure (p, labels, 0, p, "0x3c68746d", NULL);
  g_free (p);

  /* The two files swapped. */
  expect_failure (labels, images, 0, labels, "expected magic 0x00000803, found 0x00000801",
                  "labels file", NULL);

  /* Not unsigned bytes: 32-bit integers. */
  guint8 zero[N * H * W * 4] = { 0 };
  const guint32 dims[] = { N, H, W };
  p = put_array (f, "ints", make_idx (0x00000c03, dims, 3, zero, sizeof zero), FALSE);
  expect_failure (p, labels, 0, p, "found 0x00000c03", "32-bit integers", NULL);
  g_free (p);

  /* Random bytes. */
  const guint8 junk[] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
  p = put (f, "junk", junk, sizeof junk, FALSE);
  expect_failure (p, labels, 0, p, "0xdeadbeef", "not an IDX file", NULL);
  g_free (p);

  g_free (labels);
  g_free (images);
}

/* The dimension count is the magic's last byte: 2 or 4 dimensions for images,
 * 2 for labels, are errors. */
static void
test_wrong_dimension_count (void **state)
{
  Fixture *f = *state;
  char *labels = put_array (f, "lab", make_labels (), FALSE);
  char *images = put_array (f, "img", make_images (), FALSE);
  guint8 px[N * H * W] = { 0 };

  const guint32 dims2[] = { N, H * W };
  char *p = put_array (f, "img2d", make_idx (0x802, dims2, 2, px, sizeof px), FALSE);
  expect_failure (p, labels, 0, p, "expected magic 0x00000803, found 0x00000802",
                  "2 dimensions", NULL);
  g_free (p);
  const guint32 dims4[] = { N, 1, H, W };
  p = put_array (f, "img4d", make_idx (0x804, dims4, 4, px, sizeof px), FALSE);
  expect_failure (p, labels, 0, p, "found 0x00000804", "4 dimensions", NULL);
  g_free (p);
  const guint32 ldims2[] = { N, 1 };
  p = put_array (f, "lab2d", make_idx (0x802, ldims2, 2, labels_payload, N), FALSE);
  expect_failure (images, p, 0, p, "expected magic 0x00000801, found 0x00000802", NULL);
  g_free (p);
  g_free (labels);
  g_free (images);
}

/* Sizes out of range: no items, a zero or huge side. A header that claims a
 * vast payload fails on the file size without allocating it. */
static void
test_bad_sizes (void **state)
{
  Fixture *f = *state;
  guint8 px[16] = { 0 };
  static const struct { guint32 dims[3]; const char *needle; } cases[] = {
    { { 0, H, W }, "no images" },
    { { N, 0, W }, "height 0 is out of range 1…4096" },
    { { N, H, 5000 }, "width 5000 is out of range" },
    { { 0x80000000u, H, W }, "more than" },
    { { 2000000000u, 4096, 4096 }, "truncated: header says 2000000000 images of 4096×4096" },
  };
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    for (int gz = 0; gz < 2; gz++)
      {
        /* Labels that agree on the count, so the images are what is wrong. */
        char *l = put_array (f, "lab", make_idx (0x801, cases[c].dims, 1, labels_payload, N),
                             FALSE);
        char *p = put_array (f, "bad", make_idx (0x803, cases[c].dims, 3, px, sizeof px), gz);
        expect_failure (p, l, 0, p, cases[c].needle, NULL);
        g_free (p);
        g_free (l);
      }
}

/* The file size disagrees with the header: trailing bytes (raw and gzipped,
 * images and labels), and a gzip file with a second member appended. */
static void
test_trailing_data (void **state)
{
  Fixture *f = *state;
  char *good_images = put_array (f, "img", make_images (), FALSE);
  char *good_labels = put_array (f, "lab", make_labels (), FALSE);
  for (int gz = 0; gz < 2; gz++)
    {
      GByteArray *b = make_images ();
      g_byte_array_append (b, (const guint8 *) "0123456789abcdef", 16);
      char *p = put_array (f, gz ? "long.gz" : "long", b, gz);
      expect_failure (p, good_labels, 0, p,
                      "16 bytes of trailing data after 3 images of 4×5", NULL);
      /* A limit does not excuse it either. */
      expect_failure (p, good_labels, 1, p, "trailing", NULL);
      g_free (p);

      b = make_labels ();
      g_byte_array_append (b, (const guint8 *) "x", 1);
      p = put_array (f, gz ? "longlab.gz" : "longlab", b, gz);
      expect_failure (good_images, p, 0, p, "1 byte of trailing data after 3 labels", NULL);
      g_free (p);
    }
  g_free (good_images);
  g_free (good_labels);
}

static void
test_count_mismatch (void **state)
{
  Fixture *f = *state;
  char *images = put_array (f, "img", make_images (), TRUE);
  const guint32 dims[] = { N - 1 };
  char *labels = put_array (f, "lab-short", make_idx (0x801, dims, 1, labels_payload, N - 1),
                            FALSE);
  expect_failure (images, labels, 0, images,
                  "images and labels disagree: 3 images in", "2 labels in", "lab-short", NULL);
  g_free (images);
  g_free (labels);
}

static void
test_missing_file (void **state)
{
  Fixture *f = *state;
  char *images = put_array (f, "img", make_images (), FALSE);
  char *labels = put_array (f, "lab", make_labels (), FALSE);
  char *nowhere = g_build_filename (f->dir, "t10k-images-idx3-ubyte", NULL);
  GError *error = NULL;

  assert_null (caml_idx_load (nowhere, labels, 0, &error));
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_IO));
  assert_non_null (strstr (error->message, nowhere));
  assert_non_null (strstr (error->message, "no such file"));
  g_clear_error (&error);

  expect_failure (images, nowhere, 0, nowhere, "no such file", NULL);
  /* A directory is not a file either. */
  expect_failure (f->dir, labels, 0, f->dir, NULL);
  g_free (nowhere);
  g_free (images);
  g_free (labels);
}

/* The real files, when `datasets/fetch` has been run: sizes and the class
 * histograms every copy of MNIST and Fashion-MNIST has. */
static void
test_fetched_sets (void **state)
{
  static const struct {
    const char *set, *suffix;
    int train[10], test[10];
  } sets[] = {
    { "mnist", "",
      { 5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949 },
      { 980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009 } },
    { "fashion-mnist", ".gz",
      { 6000, 6000, 6000, 6000, 6000, 6000, 6000, 6000, 6000, 6000 },
      { 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000 } },
  };
  int checked = 0;
  for (gsize s = 0; s < G_N_ELEMENTS (sets); s++)
    {
      char *dir = g_build_filename (caml_data_dir (), sets[s].set, NULL);
      char *names[4];
      const char *base[4] = { "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                              "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte" };
      gboolean present = TRUE;
      for (int i = 0; i < 4; i++)
        {
          char *file = g_strconcat (base[i], sets[s].suffix, NULL);
          names[i] = g_build_filename (dir, file, NULL);
          present = present && g_file_test (names[i], G_FILE_TEST_IS_REGULAR);
          g_free (file);
        }
      if (!present)
        print_message ("%s is not in %s: run `datasets/fetch %s` to test it\n",
                       sets[s].set, dir, sets[s].set);
      for (int part = 0; present && part < 2; part++)
        {
          GError *error = NULL;
          CamlDataset *set = caml_idx_load (names[2 * part], names[2 * part + 1], 0, &error);
          if (set == NULL)
            fail_msg ("%s", error->message);
          const int *want = part == 0 ? sets[s].train : sets[s].test;
          int total = 0, hist[10] = { 0 };
          for (int i = 0; i < 10; i++)
            total += want[i];
          assert_int_equal (set->n, total);
          CamlShape img = caml_shape_image (1, 28, 28);
          assert_true (caml_shape_equal (&set->x_shape, &img));
          assert_int_equal (set->n_classes, 10);
          for (int i = 0; i < set->n; i++)
            hist[(int) set->y[i]]++;
          assert_memory_equal (hist, want, sizeof hist);
          int lo = 255, hi = 0;
          for (gsize i = 0; i < (gsize) set->n * 784; i++)
            {
              lo = MIN (lo, set->pixels[i]);
              hi = MAX (hi, set->pixels[i]);
            }
          assert_true (lo == 0 && hi == 255);
          caml_dataset_free (set);
          checked++;
        }
      for (int i = 0; i < 4; i++)
        g_free (names[i]);
      g_free (dir);
    }
  if (checked == 0)
    skip ();
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_data_dir),
    cmocka_unit_test_setup_teardown (test_round_trip, setup, teardown),
    cmocka_unit_test_setup_teardown (test_many_classes, setup, teardown),
    cmocka_unit_test_setup_teardown (test_large, setup, teardown),
    cmocka_unit_test_setup_teardown (test_truncated_everywhere, setup, teardown),
    cmocka_unit_test_setup_teardown (test_wrong_magic, setup, teardown),
    cmocka_unit_test_setup_teardown (test_wrong_dimension_count, setup, teardown),
    cmocka_unit_test_setup_teardown (test_bad_sizes, setup, teardown),
    cmocka_unit_test_setup_teardown (test_trailing_data, setup, teardown),
    cmocka_unit_test_setup_teardown (test_count_mismatch, setup, teardown),
    cmocka_unit_test_setup_teardown (test_missing_file, setup, teardown),
    cmocka_unit_test (test_fetched_sets),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
