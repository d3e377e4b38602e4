/* caml-data-source.c — titles, availability and IDX file roles for the
 * workbench's data picker. */
#include "caml-data-source.h"

#include <gio/gio.h>
#include <string.h>

#define IDX_IMAGES_MAGIC 0x00000803u   /* unsigned bytes, 3 dimensions */
#define IDX_LABELS_MAGIC 0x00000801u   /* unsigned bytes, 1 dimension */

/* The canonical file names of a fetched set, as the engine looks for them. */
static const char *const idx_file_names[4] = {
  "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
  "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte",
};

const char *
caml_data_source_title (CamlDataKind kind)
{
  switch (kind)
    {
    case CAML_DATA_XOR:           return "XOR (4 points)";
    case CAML_DATA_SURFACE:       return "Surface x·exp(−x²−y²)";
    case CAML_DATA_MNIST:         return "MNIST";
    case CAML_DATA_FASHION_MNIST: return "Fashion-MNIST";
    case CAML_DATA_SST:           return "SST binary sentiment";
    case CAML_DATA_IMDB:          return "IMDB reviews";
    case CAML_DATA_RNN_SANITY:    return "Sanity sentences (Fig. 13)";
    case CAML_DATA_IDX:           return "IDX files…";
    case CAML_DATA_TEXT:          return "Text files (text<TAB>label)…";
    default:                      return "?";
    }
}

const char *
caml_data_source_fetch_name (CamlDataKind kind)
{
  return kind == CAML_DATA_MNIST ? "mnist"
         : kind == CAML_DATA_FASHION_MNIST ? "fashion-mnist" : NULL;
}

char *
caml_data_source_missing (CamlDataKind kind)
{
  const char *set = caml_data_source_fetch_name (kind);
  if (set == NULL)
    return NULL;
  g_autofree char *dir = g_build_filename (caml_data_dir (), set, NULL);
  for (int i = 0; i < 4; i++)
    {
      g_autofree char *raw = g_build_filename (dir, idx_file_names[i], NULL);
      g_autofree char *gz = g_strconcat (raw, ".gz", NULL);
      if (g_file_test (raw, G_FILE_TEST_EXISTS) || g_file_test (gz, G_FILE_TEST_EXISTS))
        continue;

      /* Name the script by its path when this is the source tree's data
       * directory; CAML_DATA_DIR points the script elsewhere too. */
      g_autofree char *fetch = NULL;
#ifdef CAML_FETCH_SCRIPT
      if (g_file_test (CAML_FETCH_SCRIPT, G_FILE_TEST_IS_EXECUTABLE))
        fetch = g_strdup (CAML_FETCH_SCRIPT);
#endif
      if (fetch == NULL)
        fetch = g_strdup ("datasets/fetch");
      const char *env = g_getenv ("CAML_DATA_DIR");
      g_autofree char *where = env != NULL && *env != '\0'
                               ? g_strdup_printf (" (it fetches into CAML_DATA_DIR, %s)", env)
                               : g_strdup ("");
      return g_strdup_printf ("%s is not fetched: %s has no %s. Get it with `%s %s`%s.",
                              caml_data_source_title (kind), dir, idx_file_names[i], fetch,
                              set, where);
    }
  return NULL;
}

/* ------------------------------------------------------------ IDX roles */

typedef struct {
  const char *path;
  gboolean    images;
  guint32     count;
} IdxHead;

/* The magic number and item count of an IDX file, raw or gzipped. */
static gboolean
read_head (const char *path, IdxHead *head, GError **error)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GError) local = NULL;
  guint8 bytes[8];
  gsize got = 0;

  g_autoptr (GFileInputStream) raw = g_file_read (file, NULL, &local);
  if (raw == NULL)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: %s", path, local->message);
      return FALSE;
    }
  if (!g_input_stream_read_all (G_INPUT_STREAM (raw), bytes, 2, &got, NULL, &local))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: %s", path, local->message);
      return FALSE;
    }
  g_autoptr (GInputStream) in = NULL;
  if (got == 2 && bytes[0] == 0x1f && bytes[1] == 0x8b)
    {
      /* gzip: start again through a decompressor. */
      g_clear_object (&raw);
      raw = g_file_read (file, NULL, &local);
      if (raw == NULL)
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: %s", path, local->message);
          return FALSE;
        }
      g_autoptr (GZlibDecompressor) gunzip =
        g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP);
      in = g_converter_input_stream_new (G_INPUT_STREAM (raw), G_CONVERTER (gunzip));
      got = 0;
    }
  else
    in = g_object_ref (G_INPUT_STREAM (raw));
  gsize more = 0;
  if (!g_input_stream_read_all (in, bytes + got, sizeof bytes - got, &more, NULL, &local))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE, "%s: %s", path, local->message);
      return FALSE;
    }
  if (got + more < sizeof bytes)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE,
                   "%s: only %zu bytes, too short for an IDX header", path, got + more);
      return FALSE;
    }
  guint32 magic = (guint32) bytes[0] << 24 | (guint32) bytes[1] << 16
                  | (guint32) bytes[2] << 8 | bytes[3];
  if (magic != IDX_IMAGES_MAGIC && magic != IDX_LABELS_MAGIC)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE,
                   "%s: magic number 0x%08x is neither IDX images (0x%08x) nor IDX "
                   "labels (0x%08x)", path, magic, IDX_IMAGES_MAGIC, IDX_LABELS_MAGIC);
      return FALSE;
    }
  head->path = path;
  head->images = magic == IDX_IMAGES_MAGIC;
  head->count = (guint32) bytes[4] << 24 | (guint32) bytes[5] << 16
                | (guint32) bytes[6] << 8 | bytes[7];
  return TRUE;
}

/* 1: the name says training, 0: test, -1: neither. */
static int
name_says_train (const char *path)
{
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *lower = g_ascii_strdown (base, -1);
  gboolean train = strstr (lower, "train") != NULL;
  gboolean test = strstr (lower, "t10k") != NULL || strstr (lower, "test") != NULL;
  return train == test ? -1 : train;
}

/* Orders a pair of heads (two images, or two labels) as train, test. */
static gboolean
order_pair (const IdxHead *a, const IdxHead *b, const IdxHead **train, const IdxHead **test,
            const char *what, GError **error)
{
  if (a->count != b->count)
    {
      *train = a->count > b->count ? a : b;
      *test = a->count > b->count ? b : a;
      return TRUE;
    }
  int ta = name_says_train (a->path), tb = name_says_train (b->path);
  if (ta < 0 || tb < 0 || ta == tb)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "both %s files hold %u items, and their names do not say which is for "
                   "training: name them train-… and t10k-… (or test-…)", what, a->count);
      return FALSE;
    }
  *train = ta ? a : b;
  *test = ta ? b : a;
  return TRUE;
}

gboolean
caml_data_source_order_idx (const char *const *paths, int n, char *ordered[4], GError **error)
{
  IdxHead heads[4];
  const IdxHead *images[2], *labels[2];
  int n_images = 0, n_labels = 0;

  if (n != 4)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "choose four IDX files — training images and labels, test images and "
                   "labels — not %d", n);
      return FALSE;
    }
  for (int i = 0; i < 4; i++)
    {
      if (!read_head (paths[i], &heads[i], error))
        return FALSE;
      if (heads[i].images && n_images < 2)
        images[n_images++] = &heads[i];
      else if (!heads[i].images && n_labels < 2)
        labels[n_labels++] = &heads[i];
      else
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                       "three of the four files hold %s: choose two image files and two "
                       "label files", heads[i].images ? "images" : "labels");
          return FALSE;
        }
    }

  const IdxHead *train_images, *test_images, *train_labels, *test_labels;
  if (!order_pair (images[0], images[1], &train_images, &test_images, "image", error)
      || !order_pair (labels[0], labels[1], &train_labels, &test_labels, "label", error))
    return FALSE;
  if (train_images->count != train_labels->count || test_images->count != test_labels->count)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "the images and labels do not pair up: the image files hold %u and %u "
                   "items, the label files %u and %u", train_images->count,
                   test_images->count, train_labels->count, test_labels->count);
      return FALSE;
    }
  ordered[0] = g_strdup (train_images->path);
  ordered[1] = g_strdup (train_labels->path);
  ordered[2] = g_strdup (test_images->path);
  ordered[3] = g_strdup (test_labels->path);
  return TRUE;
}
