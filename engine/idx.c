/* idx.c — IDX image and label files (MNIST's format), raw or gzipped.
 *
 * An IDX file is a big-endian header, then the payload:
 *
 *   u32         magic 0x000008DD: 0x08 = unsigned bytes, DD = dimension count
 *   DD × u32    the sizes, outermost first
 *   payload     the product of the sizes, in bytes
 *
 * Images are IDX3 (N, H, W), labels IDX1 (N). Everything is checked: the
 * magic, every size (N ≥ 1, 1 ≤ H, W ≤ 4096), that exactly the payload
 * follows the header (no short read, no trailing byte) and that both files
 * hold the same number of items. Errors name the file and what was wrong.
 *
 * Files are read through GIO (caml_idx_load_bytes, for the fuzz targets and
 * tests, reads the same way from memory); one that starts with the gzip magic (1f 8b) is
 * read through a GZlibDecompressor. The decision is made on the content, not
 * the name, so a raw file named .gz (or an HTML error page saved as one)
 * still gets the precise message. Pixels are converted to floats as they are
 * read, into a buffer that grows with the data actually present: a header
 * that claims a huge payload never allocates it before the bytes arrive. */
#include <stdarg.h>
#include <string.h>

#include <gio/gio.h>

#include "caml-private.h"
#include "idx-private.h"

#ifndef CAML_DEFAULT_DATA_DIR
#define CAML_DEFAULT_DATA_DIR "datasets/data"
#endif

#define IDX_MAGIC_IMAGES 0x00000803u
#define IDX_MAGIC_LABELS 0x00000801u
#define MAX_SIDE         4096
#define CHUNK            65536
#define MIN_N_CLASSES    10

const char *
caml_data_dir (void)
{
  const char *env = g_getenv ("CAML_DATA_DIR");
  return env != NULL && *env != '\0' ? env : CAML_DEFAULT_DATA_DIR;
}

/* One open IDX file. */
typedef struct {
  const char   *path;       /* borrowed: names the file in errors */
  GInputStream *in;         /* owned: the file, or a decompressor over it */
  gboolean      gz;
  gint64        file_size;  /* raw files: bytes on disk; gz: -1 */
  int           ndims;
  guint32       dims[3];
  gsize         header_len;
} IdxFile;

static void
idx_close (IdxFile *f)
{
  g_clear_object (&f->in);
}

G_GNUC_PRINTF (3, 4) static gboolean
idx_fail (const IdxFile *f, GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE, "%s: %s", f->path, message);
  g_free (message);
  return FALSE;
}

/* Read up to n bytes; fewer only at the end of the data. */
static gboolean
idx_read (IdxFile *f, void *buf, gsize n, gsize *got, GError **error)
{
  GError *io_error = NULL;
  if (g_input_stream_read_all (f->in, buf, n, got, NULL, &io_error))
    return TRUE;
  if (f->gz)
    g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE,
                 "%s: corrupt or truncated gzip data (%s)", f->path, io_error->message);
  else
    g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: cannot read: %s",
                 f->path, io_error->message);
  g_error_free (io_error);
  return FALSE;
}

/* Takes over `in` (seekable), of `size` bytes or -1 when unknown: peeks at
 * the first two bytes and, behind the gzip magic, reads through a
 * decompressor instead. */
static gboolean
idx_init (IdxFile *f, GInputStream *in, gint64 size, const char *path, GError **error)
{
  GError *io_error = NULL;
  guint8 head[2] = { 0, 0 };
  gsize got = 0;

  *f = (IdxFile) { .path = path, .in = in, .file_size = -1 };
  if (!idx_read (f, head, sizeof head, &got, error))
    {
      idx_close (f);
      return FALSE;
    }
  if (!g_seekable_seek (G_SEEKABLE (in), 0, G_SEEK_SET, NULL, &io_error))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: cannot seek: %s", path,
                   io_error->message);
      g_error_free (io_error);
      idx_close (f);
      return FALSE;
    }
  if (got == 2 && head[0] == 0x1f && head[1] == 0x8b)
    {
      GZlibDecompressor *z = g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP);
      f->in = g_converter_input_stream_new (in, G_CONVERTER (z));
      f->gz = TRUE;
      g_object_unref (z);
      g_object_unref (in);
    }
  else
    f->file_size = size;
  return TRUE;
}

static gboolean
idx_open (IdxFile *f, const char *path, GError **error)
{
  GError *io_error = NULL;
  GFile *file = g_file_new_for_path (path);
  GFileInputStream *fin = g_file_read (file, NULL, &io_error);
  g_object_unref (file);

  *f = (IdxFile) { .path = path, .file_size = -1 };
  if (fin == NULL)
    {
      if (g_error_matches (io_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: no such file", path);
      else
        g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: cannot open: %s", path,
                     io_error->message);
      g_error_free (io_error);
      return FALSE;
    }

  GFileInfo *info = g_file_input_stream_query_info (fin, G_FILE_ATTRIBUTE_STANDARD_SIZE,
                                                    NULL, NULL);
  gint64 size = info != NULL ? g_file_info_get_size (info) : -1;
  g_clear_object (&info);
  return idx_init (f, G_INPUT_STREAM (fin), size, path, error);
}

static gboolean
idx_open_bytes (IdxFile *f, GBytes *bytes, const char *name, GError **error)
{
  GInputStream *in = g_memory_input_stream_new_from_bytes (bytes);
  return idx_init (f, in, (gint64) g_bytes_get_size (bytes), name, error);
}

static guint32
read_be32 (const guint8 *p)
{
  return (guint32) p[0] << 24 | (guint32) p[1] << 16 | (guint32) p[2] << 8 | p[3];
}

/* What a magic number that is not the one wanted looks like. */
static char *
describe_magic (guint32 magic, const guint8 *b)
{
  static const struct { guint8 code; const char *name; } types[] = {
    { 0x08, "unsigned bytes" }, { 0x09, "signed bytes" }, { 0x0b, "16-bit integers" },
    { 0x0c, "32-bit integers" }, { 0x0d, "floats" }, { 0x0e, "doubles" },
  };
  if (b[0] == '<')
    return g_strdup (" — is this an HTML page?");
  if (b[0] == '{' || b[0] == '[')
    return g_strdup (" — is this a JSON document?");
  if (b[0] == 0 && b[1] == 0)
    for (gsize i = 0; i < G_N_ELEMENTS (types); i++)
      if (b[2] == types[i].code)
        {
          if (magic == IDX_MAGIC_IMAGES)
            return g_strdup (" — is this an images file given as labels?");
          if (magic == IDX_MAGIC_LABELS)
            return g_strdup (" — is this a labels file given as images?");
          return g_strdup_printf (" (an IDX file of %s with %d dimensions)",
                                  types[i].name, b[3]);
        }
  return g_strdup (" — not an IDX file");
}

/* Read and check the header: magic `want` (with ndims dimensions). */
static gboolean
idx_read_header (IdxFile *f, guint32 want, GError **error)
{
  guint8 b[4 + 4 * 3];
  gsize got = 0;
  int ndims = (int) (want & 0xff);
  gsize len = 4 + 4 * (gsize) ndims;

  if (!idx_read (f, b, 4, &got, error))
    return FALSE;
  if (got == 0)
    return idx_fail (f, error, "the file is empty");
  if (got < 4)
    return idx_fail (f, error, "truncated: %zu bytes, too short for an IDX header", got);
  guint32 magic = read_be32 (b);
  if (magic != want)
    {
      char *hint = describe_magic (magic, b);
      idx_fail (f, error, "expected magic 0x%08x, found 0x%08x%s", want, magic, hint);
      g_free (hint);
      return FALSE;
    }
  if (!idx_read (f, b + 4, len - 4, &got, error))
    return FALSE;
  if (got < len - 4)
    return idx_fail (f, error,
                     "truncated header: %zu bytes, an IDX file with %d dimensions "
                     "needs %zu", 4 + got, ndims, len);

  f->ndims = ndims;
  f->header_len = len;
  for (int i = 0; i < ndims; i++)
    f->dims[i] = read_be32 (b + 4 + 4 * i);
  if (f->dims[0] < 1)
    return idx_fail (f, error, "the header says it holds no %s",
                     ndims == 3 ? "images" : "labels");
  if (f->dims[0] > G_MAXINT)
    return idx_fail (f, error, "the header says %u items, more than %d",
                     f->dims[0], G_MAXINT);
  for (int i = 1; i < ndims; i++)
    if (f->dims[i] < 1 || f->dims[i] > MAX_SIDE)
      return idx_fail (f, error, "image %s %u is out of range 1…%d",
                       i == 1 ? "height" : "width", f->dims[i], MAX_SIDE);
  return TRUE;
}

static char *
describe_items (const IdxFile *f)
{
  if (f->ndims == 3)
    return g_strdup_printf ("%u images of %u×%u", f->dims[0], f->dims[1], f->dims[2]);
  return g_strdup_printf ("%u labels", f->dims[0]);
}

/* Read the payload after the header, exactly: the first `keep` of its bytes
 * into a buffer returned in *out; *max_byte is the largest byte kept. */
static gboolean
idx_read_payload (IdxFile *f, gsize keep, guint8 **out, int *max_byte, GError **error)
{
  guint64 expected = f->dims[0];
  for (int i = 1; i < f->ndims; i++)
    expected *= f->dims[i];
  guint64 want_total = f->header_len + expected;

  /* On disk the size is known before reading: fail at once. */
  if (f->file_size >= 0 && (guint64) f->file_size != want_total)
    {
      char *items = describe_items (f);
      if ((guint64) f->file_size < want_total)
        idx_fail (f, error,
                  "truncated: header says %s (%" G_GUINT64_FORMAT " bytes) but the "
                  "file holds %" G_GINT64_FORMAT " bytes", items, want_total, f->file_size);
      else
        {
          guint64 extra = (guint64) f->file_size - want_total;
          idx_fail (f, error, "%" G_GUINT64_FORMAT " byte%s of trailing data after %s",
                    extra, extra == 1 ? "" : "s", items);
        }
      g_free (items);
      return FALSE;
    }

  guint8 *chunk = g_malloc (CHUNK);
  guint8 *x = NULL;
  gsize capacity = 0;
  guint64 done = 0, trailing = 0;
  int max = 0;
  gboolean ok = TRUE;

  for (;;)
    {
      gsize got = 0;
      if (!(ok = idx_read (f, chunk, CHUNK, &got, error)))
        break;
      /* Bytes of this chunk that are payload (the rest is trailing). */
      gsize payload = (gsize) MIN ((guint64) got, expected - done);
      if (done < keep && payload > 0)
        {
          gsize take = (gsize) MIN ((guint64) payload, keep - done);
          if (done + take > capacity)
            {
              /* Grow geometrically, never beyond what is kept. */
              capacity = MIN (MAX (2 * capacity, done + take), keep);
              x = g_realloc_n (x, capacity, sizeof *x);
            }
          memcpy (x + done, chunk, take);
          for (gsize i = 0; i < take; i++)
            max = MAX (max, chunk[i]);
        }
      done += payload;
      trailing += got - payload;
      if (got < CHUNK)
        break;
    }
  g_free (chunk);

  if (ok && done < expected)
    {
      char *items = describe_items (f);
      ok = idx_fail (f, error,
                     "truncated: header says %s (%" G_GUINT64_FORMAT " bytes) but the "
                     "file holds %" G_GUINT64_FORMAT " bytes%s", items, want_total,
                     f->header_len + done, f->gz ? " (decompressed)" : "");
      g_free (items);
    }
  else if (ok && trailing > 0)
    {
      char *items = describe_items (f);
      ok = idx_fail (f, error, "%" G_GUINT64_FORMAT " byte%s of trailing data after %s",
                     trailing, trailing == 1 ? "" : "s", items);
      g_free (items);
    }
  if (!ok)
    {
      g_free (x);
      return FALSE;
    }
  *out = x;
  *max_byte = max;
  return TRUE;
}

/* Where the two files come from: paths, or bytes in memory. */
typedef struct {
  const char *images_name, *labels_name;  /* paths, or names for errors */
  GBytes     *images_bytes, *labels_bytes; /* NULL: read the paths */
} IdxSource;

static gboolean
idx_open_source (IdxFile *f, const char *name, GBytes *bytes, GError **error)
{
  return bytes != NULL ? idx_open_bytes (f, bytes, name, error)
                       : idx_open (f, name, error);
}

static CamlDataset *
idx_load (const IdxSource *src, int limit, GError **error)
{
  const char *images_path = src->images_name, *labels_path = src->labels_name;
  IdxFile images = { 0 }, labels = { 0 };
  guint8 *x = NULL, *y = NULL;
  int max_pixel, max_label;
  CamlDataset *set = NULL;

  /* Both headers first, so a mismatch is found before any payload is read. */
  if (!idx_open_source (&images, images_path, src->images_bytes, error)
      || !idx_read_header (&images, IDX_MAGIC_IMAGES, error)
      || !idx_open_source (&labels, labels_path, src->labels_bytes, error)
      || !idx_read_header (&labels, IDX_MAGIC_LABELS, error))
    goto out;
  if (images.dims[0] != labels.dims[0])
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE,
                   "images and labels disagree: %u images in %s, %u labels in %s",
                   images.dims[0], images_path, labels.dims[0], labels_path);
      goto out;
    }

  int n = (int) images.dims[0];
  int keep = limit > 0 ? MIN (limit, n) : n;
  gsize pixels = (gsize) images.dims[1] * images.dims[2];
  if (!idx_read_payload (&images, (gsize) keep * pixels, &x, &max_pixel, error)
      || !idx_read_payload (&labels, keep, &y, &max_label, error))
    goto out;

  /* The images stay bytes (CamlDataset.pixels: a value is byte / 255); a
   * label is the byte itself. */
  set = g_new0 (CamlDataset, 1);
  set->n = keep;
  set->x_shape = caml_shape_image (1, (int) images.dims[1], (int) images.dims[2]);
  set->y_width = 1;
  set->pixels = g_steal_pointer (&x);   /* (N, 1, H, W) */
  set->y = g_new (float, MAX (keep, 1));   /* (N) class indices */
  for (int i = 0; i < keep; i++)
    set->y[i] = (float) y[i];
  set->n_classes = MAX (MIN_N_CLASSES, max_label + 1);

out:
  g_free (x);
  g_free (y);
  idx_close (&images);
  idx_close (&labels);
  return set;
}

CamlDataset *
caml_idx_load (const char *images_path, const char *labels_path, int limit,
               GError **error)
{
  g_return_val_if_fail (images_path != NULL && labels_path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  IdxSource src = { .images_name = images_path, .labels_name = labels_path };
  return idx_load (&src, limit, error);
}

CamlDataset *
caml_idx_load_bytes (GBytes *images, const char *images_name, GBytes *labels,
                     const char *labels_name, int limit, GError **error)
{
  g_return_val_if_fail (images != NULL && labels != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  IdxSource src = {
    .images_name = images_name != NULL ? images_name : "<images>",
    .labels_name = labels_name != NULL ? labels_name : "<labels>",
    .images_bytes = images, .labels_bytes = labels,
  };
  return idx_load (&src, limit, error);
}
