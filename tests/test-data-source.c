/* test-data-source.c — the data picker's plain-C side, without a display:
 * the titles, the message for a set that is not fetched, and telling four
 * chosen IDX files apart. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#include "caml-data-source.h"

static char *
make_dir (void)
{
  char *dir = g_dir_make_tmp ("caml-data-source-XXXXXX", NULL);
  assert_non_null (dir);
  return dir;
}

static void
remove_tree (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        remove_tree (path);
      else
        g_unlink (path);
    }
  g_rmdir (dir);
}

static void
test_missing_names_the_fetch_command (void **state)
{
  g_autofree char *dir = make_dir ();
  g_setenv ("CAML_DATA_DIR", dir, TRUE);

  g_autofree char *mnist = caml_data_source_missing (CAML_DATA_MNIST);
  g_autofree char *fashion = caml_data_source_missing (CAML_DATA_FASHION_MNIST);
  assert_non_null (mnist);
  assert_non_null (fashion);
  print_message ("%s\n", mnist);
  assert_non_null (strstr (mnist, "fetch mnist`"));
  assert_non_null (strstr (mnist, "train-images-idx3-ubyte"));
  assert_non_null (strstr (mnist, dir));
  assert_non_null (strstr (fashion, "fetch fashion-mnist`"));
  assert_null (caml_data_source_missing (CAML_DATA_XOR));
  assert_null (caml_data_source_missing (CAML_DATA_SURFACE));
  assert_null (caml_data_source_missing (CAML_DATA_IDX));

  /* Three of four files (raw or gzipped) still miss the fourth. */
  g_autofree char *set = g_build_filename (dir, "mnist", NULL);
  g_mkdir (set, 0755);
  const char *names[] = { "train-images-idx3-ubyte", "train-labels-idx1-ubyte.gz",
                          "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte" };
  for (int i = 0; i < 3; i++)
    {
      g_autofree char *path = g_build_filename (set, names[i], NULL);
      assert_true (g_file_set_contents (path, "", 0, NULL));
    }
  g_autofree char *three = caml_data_source_missing (CAML_DATA_MNIST);
  assert_non_null (three);
  assert_non_null (strstr (three, "t10k-labels-idx1-ubyte"));
  g_autofree char *last = g_build_filename (set, names[3], NULL);
  assert_true (g_file_set_contents (last, "", 0, NULL));
  assert_null (caml_data_source_missing (CAML_DATA_MNIST));

  g_unsetenv ("CAML_DATA_DIR");
  remove_tree (dir);
}

/* An IDX header (and nothing else: only the header is read). */
static char *
write_head (const char *dir, const char *name, guint32 magic, guint32 count, gboolean gz)
{
  guint8 bytes[16] = { 0 };
  for (int i = 0; i < 4; i++)
    {
      bytes[i] = (guint8) (magic >> (24 - 8 * i));
      bytes[4 + i] = (guint8) (count >> (24 - 8 * i));
    }
  gsize len = magic == 0x803 ? 16 : 8;
  bytes[11] = bytes[15] = 28;
  char *path = g_build_filename (dir, name, NULL);
  if (!gz)
    {
      assert_true (g_file_set_contents (path, (const char *) bytes, (gssize) len, NULL));
      return path;
    }
  g_autoptr (GZlibCompressor) zip = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, -1);
  guint8 out[256];
  gsize read = 0, written = 0;
  assert_int_equal (g_converter_convert (G_CONVERTER (zip), bytes, len, out, sizeof out,
                                         G_CONVERTER_INPUT_AT_END, &read, &written, NULL),
                    G_CONVERTER_FINISHED);
  assert_true (g_file_set_contents (path, (const char *) out, (gssize) written, NULL));
  return path;
}

static void
assert_order (char *ordered[4], const char *a, const char *b, const char *c, const char *d)
{
  const char *want[] = { a, b, c, d };
  for (int i = 0; i < 4; i++)
    {
      assert_string_equal (ordered[i], want[i]);
      g_free (ordered[i]);
    }
}

static void
test_order_idx (void **state)
{
  g_autofree char *dir = make_dir ();
  g_autofree char *ti = write_head (dir, "a.idx", 0x803, 60, FALSE);
  g_autofree char *tl = write_head (dir, "b.idx.gz", 0x801, 60, TRUE);
  g_autofree char *vi = write_head (dir, "c.idx.gz", 0x803, 10, TRUE);
  g_autofree char *vl = write_head (dir, "d.idx", 0x801, 10, FALSE);
  char *ordered[4] = { NULL };

  /* Any order in: by magic (images or labels) and count (train is larger). */
  const char *shuffled[] = { vl, ti, vi, tl };
  assert_true (caml_data_source_order_idx (shuffled, 4, ordered, NULL));
  assert_order (ordered, ti, tl, vi, vl);

  /* As many test items as training items: the names decide. */
  g_autofree char *ti2 = write_head (dir, "my-train-images", 0x803, 10, FALSE);
  g_autofree char *tl2 = write_head (dir, "my-train-labels", 0x801, 10, FALSE);
  g_autofree char *vi2 = write_head (dir, "my-t10k-images", 0x803, 10, FALSE);
  g_autofree char *vl2 = write_head (dir, "my-test-labels", 0x801, 10, FALSE);
  const char *by_name[] = { vi2, tl2, vl2, ti2 };
  assert_true (caml_data_source_order_idx (by_name, 4, ordered, NULL));
  assert_order (ordered, ti2, tl2, vi2, vl2);

  GError *error = NULL;
  /* Same counts, names that say nothing. */
  const char *unnamed[] = { vi, vl, write_head (dir, "e", 0x803, 10, FALSE),
                            write_head (dir, "f", 0x801, 10, FALSE) };
  assert_false (caml_data_source_order_idx (unnamed, 4, ordered, &error));
  assert_non_null (strstr (error->message, "train-"));
  g_clear_error (&error);
  g_free ((char *) unnamed[2]);
  g_free ((char *) unnamed[3]);

  /* Three image files. */
  const char *three[] = { ti, vi, ti2, tl };
  assert_false (caml_data_source_order_idx (three, 4, ordered, &error));
  assert_non_null (strstr (error->message, "three of the four files hold images"));
  g_clear_error (&error);

  /* Images and labels whose counts do not pair up. */
  g_autofree char *odd = write_head (dir, "g", 0x801, 61, FALSE);
  const char *unpaired[] = { ti, vi, odd, vl };
  assert_false (caml_data_source_order_idx (unpaired, 4, ordered, &error));
  assert_non_null (strstr (error->message, "do not pair up"));
  g_clear_error (&error);

  /* Not an IDX file: its name and magic number. */
  g_autofree char *html = g_build_filename (dir, "page.html", NULL);
  assert_true (g_file_set_contents (html, "<html><body>", -1, NULL));
  const char *with_html[] = { ti, tl, vi, html };
  assert_false (caml_data_source_order_idx (with_html, 4, ordered, &error));
  print_message ("%s\n", error->message);
  assert_non_null (strstr (error->message, "page.html: magic number 0x3c68746d"));
  g_clear_error (&error);

  /* A missing file, and a wrong count of files. */
  g_autofree char *gone = g_build_filename (dir, "gone", NULL);
  const char *with_gone[] = { ti, tl, vi, gone };
  assert_false (caml_data_source_order_idx (with_gone, 4, ordered, &error));
  assert_non_null (strstr (error->message, "gone"));
  g_clear_error (&error);
  assert_false (caml_data_source_order_idx (with_gone, 3, ordered, &error));
  assert_non_null (strstr (error->message, "not 3"));
  g_clear_error (&error);

  remove_tree (dir);
}

/* Every kind of data has a title of its own in the drop-down. */
static void
test_titles (void **state)
{
  (void) state;
  for (int k = 0; k < CAML_N_DATA_KINDS; k++)
    {
      const char *title = caml_data_source_title ((CamlDataKind) k);
      assert_true (g_utf8_validate (title, -1, NULL));
      assert_string_not_equal (title, "?");
      for (int j = 0; j < k; j++)
        assert_string_not_equal (title, caml_data_source_title ((CamlDataKind) j));
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_titles),
    cmocka_unit_test (test_missing_names_the_fetch_command),
    cmocka_unit_test (test_order_idx),
  };
  return cmocka_run_group_tests_name ("data-source", tests, NULL, NULL);
}
