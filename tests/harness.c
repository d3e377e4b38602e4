/* harness.c — see harness.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <glib/gstdio.h>

#include "harness.h"
#include "caml-session.h"

/* Every session and window test: the leak suppressions of lsan-gui.supp
 * (GObject's class-lifetime blocks, GLib's quark table) need the whole
 * stack of the allocation, and GLib is built without frame pointers, so
 * the fast unwinder stops at g_malloc. Which test crosses GLib's 2048
 * quarks (the table's old block is kept on purpose) depends on what it
 * happened to do: gui-runs did once, under load, after the Sweep page
 * came. */
#if defined(__SANITIZE_ADDRESS__)
const char *__asan_default_options (void);
const char *
__asan_default_options (void)
{
  return "fast_unwind_on_malloc=0";
}
#endif

static gboolean
wake (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

gboolean
iterate_until (Condition cond, gpointer data, double timeout)
{
  gint64 end = g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);
  guint tick = g_timeout_add (20, wake, NULL);
  gboolean ok;

  while (!(ok = cond (data)) && g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (tick);
  return ok;
}

gboolean
always_false (gpointer data)
{
  return FALSE;
}

gboolean
no_jobs (gpointer data)
{
  return caml_session_get_jobs_in_flight () == 0;
}

gboolean
on_stall_tick (gpointer data)
{
  Stall *st = data;
  gint64 now = g_get_monotonic_time ();
  if (st->last != 0)
    {
      gint64 gap = now - st->last;
      st->max_gap = MAX (st->max_gap, gap);
      g_array_append_val (st->gaps, gap);
    }
  st->last = now;
  return G_SOURCE_CONTINUE;
}

void
write_be32 (GByteArray *b, guint32 v)
{
  guint32 be = GUINT32_TO_BE (v);
  g_byte_array_append (b, (const guint8 *) &be, 4);
}

void
write_idx_pair (const char *images_path, const char *labels_path, int n, guint seed)
{
  GByteArray *img = g_byte_array_new (), *lab = g_byte_array_new ();
  GRand *rand = g_rand_new_with_seed (seed);

  write_be32 (img, 0x00000803);
  write_be32 (img, n);
  write_be32 (img, 28);
  write_be32 (img, 28);
  write_be32 (lab, 0x00000801);
  write_be32 (lab, n);
  for (int i = 0; i < n; i++)
    {
      guint8 label = (guint8) g_rand_int_range (rand, 0, 10);
      guint8 px[28 * 28] = { 0 };
      int x0 = 2 + 2 * label, y0 = 4 + g_rand_int_range (rand, 0, 6);
      for (int y = y0; y < y0 + 14; y++)
        for (int x = x0; x < x0 + 6; x++)
          px[y * 28 + x] = 255;
      g_byte_array_append (img, px, sizeof px);
      g_byte_array_append (lab, &label, 1);
    }
  assert_true (g_file_set_contents (images_path, (const char *) img->data, img->len, NULL));
  assert_true (g_file_set_contents (labels_path, (const char *) lab->data, lab->len, NULL));
  g_byte_array_unref (img);
  g_byte_array_unref (lab);
  g_rand_free (rand);
}

void
write_text_tsv (const char *path, int n)
{
  g_autoptr (GString) text = g_string_new (NULL);
  for (int i = 0; i < n; i++)
    g_string_append_printf (text, "the movie is %s w%d w%d w%d\t%d\n", i % 2 ? "good" : "bad",
                            i % 40, (i * 7 + 3) % 40, (i * 13 + 5) % 40, i % 2);
  assert_true (g_file_set_contents (path, text->str, -1, NULL));
}

char *
write_words_experiment (const char *dir, const char *data_extra, const char *layers, int steps)
{
  g_autofree char *train = g_build_filename (dir, "train.tsv", NULL);
  g_autofree char *test = g_build_filename (dir, "test.tsv", NULL);
  char *path = g_build_filename (dir, "words.json", NULL);
  write_text_tsv (train, 400);
  write_text_tsv (test, 40);
  g_autofree char *json = g_strdup_printf (
    "{ \"name\": \"words\", \"seed\": 0,"
    "  \"data\": { \"text\": { \"train\": \"%s\", \"test\": \"%s\" }%s },"
    "  \"model\": [ %s,"
    "               { \"layer\": \"dense\", \"units\": 1, \"activation\": \"identity\" } ],"
    "  \"loss\": \"sigmoid_cross_entropy\","
    "  \"optimizer\": { \"type\": \"adagrad\", \"lr\": 0.1 },"
    "  \"training\": { \"steps\": %d, \"batch_size\": 16, \"eval_every\": 100 } }",
    train, test, data_extra, layers, steps);
  assert_true (g_file_set_contents (path, json, -1, NULL));
  return path;
}

void
remove_words_experiment (const char *dir)
{
  static const char *const files[] = { "train.tsv", "test.tsv", "words.json" };
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *f = g_build_filename (dir, files[i], NULL);
      g_unlink (f);
    }
  g_rmdir (dir);
}

char *
write_fake_mnist (const char *dir, char *idx[4])
{
  static const char *const names[] = { "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                       "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte" };
  g_autofree char *mnist = g_build_filename (dir, "mnist", NULL);
  assert_int_equal (g_mkdir (mnist, 0700), 0);
  for (int i = 0; i < 4; i++)
    idx[i] = g_build_filename (mnist, names[i], NULL);
  write_idx_pair (idx[0], idx[1], 200, 1);
  write_idx_pair (idx[2], idx[3], 100, 2);
  char *saved = g_strdup (g_getenv ("CAML_DATA_DIR"));
  g_setenv ("CAML_DATA_DIR", dir, TRUE);   /* set while no job of the test reads it */
  return saved;
}

void
remove_fake_mnist (const char *dir, char *idx[4], char *saved_dir)
{
  if (saved_dir != NULL)
    g_setenv ("CAML_DATA_DIR", saved_dir, TRUE);
  else
    g_unsetenv ("CAML_DATA_DIR");
  g_free (saved_dir);
  for (int i = 0; i < 4; i++)
    {
      g_unlink (idx[i]);
      g_free (idx[i]);
    }
  g_autofree char *mnist = g_build_filename (dir, "mnist", NULL);
  g_rmdir (mnist);
  g_rmdir (dir);
}

void
remove_tree (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  for (const char *name; d != NULL && (name = g_dir_read_name (d)) != NULL;)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        remove_tree (path);
      else
        g_unlink (path);
    }
  if (d != NULL)
    g_dir_close (d);
  g_rmdir (dir);
}
