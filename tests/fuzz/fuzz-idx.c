/* fuzz-idx.c — IDX image and label files (caml_idx_load_bytes, the in-memory
 * form of caml_idx_load: raw or gzipped, the same checks).
 *
 * Input: byte 0 is the limit (its low three bits; 0 = all), bytes 1–2 the
 * labels file's length n (little-endian, cut to what is there), then n bytes
 * of labels file, then the images file. A data set that loads must be
 * consistent (sizes, pixels in [0, 1], labels below n_classes); a rejection
 * is a CAML_ERROR naming one of the two files. */
#include "fuzz-common.h"
#include "idx-private.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_init ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 3)
    return 0;
  int limit = data[0] & 7;
  size_t labels_len = MIN ((size_t) (data[1] | data[2] << 8), size - 3);
  GBytes *labels = g_bytes_new_static (data + 3, labels_len);
  GBytes *images = g_bytes_new_static (data + 3 + labels_len, size - 3 - labels_len);

  GError *error = NULL;
  CamlDataset *set = caml_idx_load_bytes (images, "images.idx", labels, "labels.idx",
                                          limit, &error);
  if (set == NULL)
    {
      FUZZ_CHECK (error != NULL && error->domain == CAML_ERROR, "bad error");
      FUZZ_CHECK (strstr (error->message, "images.idx") != NULL
                  || strstr (error->message, "labels.idx") != NULL,
                  "the message names neither file: %s", error->message);
      FUZZ_CHECK (g_utf8_validate (error->message, -1, NULL),
                  "the message is not UTF-8: %s", error->message);
      g_error_free (error);
    }
  else
    {
      FUZZ_CHECK (error == NULL, "loaded with an error set");
      FUZZ_CHECK (set->n >= 1 && (limit == 0 || set->n <= limit), "n = %d", set->n);
      FUZZ_CHECK (set->x_shape.ndim == 3 && set->x_shape.dims[0] == 1, "x_shape");
      FUZZ_CHECK (set->y_width == 1 && set->n_classes >= 10, "targets");
      /* kept as bytes, given as byte / 255 */
      FUZZ_CHECK (set->x == NULL && set->pixels != NULL, "the images are not bytes");
      size_t pixels = (size_t) set->n * caml_shape_size (&set->x_shape);
      float *x = caml_dataset_copy_rows (set, 0, set->n);
      for (size_t i = 0; i < pixels; i++)
        FUZZ_CHECK (x[i] >= 0.0f && x[i] <= 1.0f && x[i] == set->pixels[i] / 255.0f,
                    "pixel %zu = %g", i, x[i]);
      g_free (x);
      for (int i = 0; i < set->n; i++)
        FUZZ_CHECK (set->y[i] >= 0.0f && set->y[i] < (float) set->n_classes,
                    "label %d = %g", i, set->y[i]);
      caml_dataset_free (set);
    }
  g_bytes_unref (images);
  g_bytes_unref (labels);
  return 0;
}
