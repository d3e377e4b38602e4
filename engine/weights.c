/* weights.c — the binary weights file.
 *
 * Little-endian throughout:
 *
 *   8 bytes   magic CAML_WEIGHTS_MAGIC ("CAMLWGT1")
 *   u32       version (CAML_WEIGHTS_VERSION, 2)
 *   u32       vocabulary word count V (0: the model has no vocabulary)
 *   u64       caml_vocab_fingerprint of that vocabulary (0 when V is 0)
 *   u32       layer count L
 *   L times:  u16 name length, the name (ops->name, no NUL),
 *             u64 parameter count of the layer (sum over its params)
 *   u64       float count F (model->n_weights)
 *   F floats  the parameter block model->w, IEEE-754 binary32
 *   32 bytes  SHA-256 of every byte before it
 *
 * Version 1 is the same without the two vocabulary fields; it still loads,
 * unchecked against the model's vocabulary.
 *
 * Writing builds the whole file in memory and replaces the target atomically
 * (caml_file_replace: temporary file, fsync, rename). Reading checks everything — the magic, the
 * version, every length against the bytes left, the checksum, the vocabulary
 * and the layer table against the model, and that every value is finite —
 * before one memcpy into model->w, so a file that fails leaves the model as
 * it was. A word table's rows are indexed by token id, so weights trained on
 * another vocabulary of the same size would fit every layer and load; the
 * fingerprint is what tells. */
#include <string.h>

#include "bin-io.h"

#define MAGIC_LEN    8

G_STATIC_ASSERT (sizeof CAML_WEIGHTS_MAGIC - 1 == MAGIC_LEN);

/* ---------------------------------------------------------------- writing */

static size_t
layer_param_count (const CamlLayer *layer)
{
  size_t count = 0;
  for (int k = 0; k < layer->n_params; k++)
    count += layer->params[k].count;
  return count;
}

GBytes *
caml_weights_to_bytes (const CamlModel *model)
{
  GByteArray *b = g_byte_array_sized_new (64 + model->n_weights * sizeof (float));

  g_byte_array_append (b, (const guint8 *) CAML_WEIGHTS_MAGIC, MAGIC_LEN);
  caml_bin_put_u32 (b, CAML_WEIGHTS_VERSION);
  caml_bin_put_u32 (b, model->vocab != NULL ? (guint32) caml_vocab_size (model->vocab) : 0);
  caml_bin_put_u64 (b, model->vocab != NULL ? caml_vocab_fingerprint (model->vocab) : 0);
  caml_bin_put_u32 (b, (guint32) model->n_layers);
  for (int i = 0; i < model->n_layers; i++)
    {
      const CamlLayer *layer = model->layers[i];
      size_t len = strlen (layer->ops->name);
      g_assert (len <= G_MAXUINT16);
      caml_bin_put_u16 (b, (guint16) len);
      g_byte_array_append (b, (const guint8 *) layer->ops->name, len);
      caml_bin_put_u64 (b, layer_param_count (layer));
    }
  caml_bin_put_u64 (b, model->n_weights);
  caml_bin_put_floats (b, model->w, model->n_weights);
  caml_bin_put_digest (b);
  return g_byte_array_free_to_bytes (b);
}

gboolean
caml_weights_save (const CamlModel *model, const char *path, GError **error)
{
  g_autoptr (GBytes) bytes = caml_weights_to_bytes (model);
  gsize length = 0;
  const void *data = g_bytes_get_data (bytes, &length);
  return caml_file_replace (path, data, length, error);
}

/* ---------------------------------------------------------------- reading */

typedef struct {
  CamlBinReader bin;
  /* from the header */
  guint32       version;
  gsize         vocab_at;      /* where the vocabulary fields start (version 2) */
  guint32       vocab_words;   /* 0: none recorded (or a version-1 file) */
  guint64       vocab_fingerprint;
} Reader;

/* Magic, version and (from version 2) the vocabulary's fingerprint. */
static gboolean
read_header (Reader *r)
{
  if (!caml_bin_take_magic (&r->bin, CAML_WEIGHTS_MAGIC, MAGIC_LEN, "CAML weights file"))
    return FALSE;

  gsize at = r->bin.pos;
  if (!caml_bin_take_u32 (&r->bin, "the version", &r->version))
    return FALSE;
  if (r->version < 1 || r->version > CAML_WEIGHTS_VERSION)
    {
      g_set_error (r->bin.error, CAML_ERROR, CAML_ERROR_PARSE,
                   "%s: byte %" G_GSIZE_FORMAT ": weights file version %u is not "
                   "supported (this build reads versions 1…%d)", r->bin.source, at,
                   r->version, CAML_WEIGHTS_VERSION);
      return FALSE;
    }
  r->vocab_at = r->bin.pos;
  r->vocab_words = 0;
  r->vocab_fingerprint = 0;
  if (r->version >= 2
      && (!caml_bin_take_u32 (&r->bin, "the vocabulary's word count", &r->vocab_words)
          || !caml_bin_take_u64 (&r->bin, "the vocabulary's fingerprint", &r->vocab_fingerprint)))
    return FALSE;
  return TRUE;
}

/* n with thousands separators: "91,897". */
static char *
group_digits (guint64 n)
{
  char digits[24];
  int len = g_snprintf (digits, sizeof digits, "%" G_GUINT64_FORMAT, n);
  GString *s = g_string_new (NULL);
  for (int i = 0; i < len; i++)
    {
      if (i > 0 && (len - i) % 3 == 0)
        g_string_append_c (s, ',');
      g_string_append_c (s, digits[i]);
    }
  return g_string_free (s, FALSE);
}

/* The file's vocabulary is the model's, when both have one: the same words
 * in the same order, so row i of every word table still belongs to word i. */
static gboolean
check_vocab (Reader *r, const CamlModel *model)
{
  if (r->vocab_words == 0 || model->vocab == NULL)
    return TRUE;
  guint64 words = (guint64) caml_vocab_size (model->vocab);
  guint64 fingerprint = caml_vocab_fingerprint (model->vocab);
  if (words == r->vocab_words && fingerprint == r->vocab_fingerprint)
    return TRUE;

  g_autofree char *was = group_digits (r->vocab_words);
  g_autofree char *now = group_digits (words);
  g_autofree char *how = words == r->vocab_words
                         ? g_strdup_printf (" with a different fingerprint (%016"
                                            G_GINT64_MODIFIER "x)", fingerprint)
                         : g_strdup ("");
  g_set_error (r->bin.error, CAML_ERROR, CAML_ERROR_INVALID,
               "%s: byte %" G_GSIZE_FORMAT ": these weights were trained on a vocabulary "
               "of %s words with fingerprint %016" G_GINT64_MODIFIER "x; the data now "
               "gives %s words%s — the training text or the data settings changed, and "
               "the rows of the word tables would belong to other words",
               r->bin.source, r->vocab_at, was, r->vocab_fingerprint, now, how);
  return FALSE;
}

/* The layer table and the float count. With a model, each entry is compared
 * with it; without, only the structure is checked. On success *floats points
 * at the parameter block. */
static gboolean
read_body (Reader *r, const CamlModel *model, const guint8 **floats, guint64 *n_floats)
{
  guint32 n_layers;
  gsize at = r->bin.pos;
  if (!caml_bin_take_u32 (&r->bin, "the layer count", &n_layers))
    return FALSE;
  if (model != NULL && n_layers != (guint32) model->n_layers)
    {
      g_set_error (r->bin.error, CAML_ERROR, CAML_ERROR_INVALID,
                   "%s: byte %" G_GSIZE_FORMAT ": the file has %u layer%s but the model "
                   "has %d", r->bin.source, at, n_layers, n_layers == 1 ? "" : "s",
                   model->n_layers);
      return FALSE;
    }

  for (guint32 i = 0; i < n_layers; i++)
    {
      char what[64];
      guint16 name_len;
      guint64 count;

      g_snprintf (what, sizeof what, "the name length of layer %u", i);
      if (!caml_bin_take_u16 (&r->bin, what, &name_len))
        return FALSE;
      g_snprintf (what, sizeof what, "the name of layer %u", i);
      gsize name_at = r->bin.pos;
      const guint8 *name = caml_bin_take (&r->bin, name_len, what);
      if (name == NULL)
        return FALSE;
      g_snprintf (what, sizeof what, "the parameter count of layer %u", i);
      gsize count_at = r->bin.pos;
      if (!caml_bin_take_u64 (&r->bin, what, &count))
        return FALSE;

      if (model == NULL)
        continue;
      const CamlLayer *layer = model->layers[i];
      const char *expected = layer->ops->name;
      if (name_len != strlen (expected) || memcmp (name, expected, name_len) != 0)
        {
          char *found = caml_bin_escape (name, name_len);
          g_set_error (r->bin.error, CAML_ERROR, CAML_ERROR_INVALID,
                       "%s: byte %" G_GSIZE_FORMAT ": layer %u is %s in the file but %s "
                       "in the model", r->bin.source, name_at, i, found, expected);
          g_free (found);
          return FALSE;
        }
      if (count != layer_param_count (layer))
        {
          g_set_error (r->bin.error, CAML_ERROR, CAML_ERROR_INVALID,
                       "%s: byte %" G_GSIZE_FORMAT ": layer %u (%s) has %" G_GUINT64_FORMAT
                       " parameters in the file but %" G_GSIZE_FORMAT " in the model "
                       "(other options?)", r->bin.source, count_at, i, expected, count,
                       layer_param_count (layer));
          return FALSE;
        }
    }

  at = r->bin.pos;
  if (!caml_bin_take_u64 (&r->bin, "the float count", n_floats))
    return FALSE;
  if (model != NULL && *n_floats != model->n_weights)
    {
      g_set_error (r->bin.error, CAML_ERROR, CAML_ERROR_INVALID,
                   "%s: byte %" G_GSIZE_FORMAT ": the file holds %" G_GUINT64_FORMAT
                   " floats but the model has %" G_GSIZE_FORMAT, r->bin.source, at, *n_floats,
                   model->n_weights);
      return FALSE;
    }
  if (*n_floats > (r->bin.length - r->bin.pos) / sizeof (float))
    {
      g_set_error (r->bin.error, CAML_ERROR, CAML_ERROR_PARSE,
                   "%s: truncated at byte %" G_GSIZE_FORMAT ": expected %"
                   G_GUINT64_FORMAT " floats (%" G_GUINT64_FORMAT " bytes) for the "
                   "parameters, found %" G_GSIZE_FORMAT " bytes",
                   r->bin.source, r->bin.pos, *n_floats, *n_floats * sizeof (float),
                   r->bin.length - r->bin.pos);
      return FALSE;
    }
  *floats = caml_bin_take (&r->bin, *n_floats * sizeof (float), "the parameters");
  return *floats != NULL;
}

/* Every value of the parameter block (at floats, laid out as the model's)
 * is finite. A NaN or an infinity — from a run that diverged, or written by
 * another tool — would load silently and make every loss NaN; the error
 * names the value by layer, parameter and index (the embeddings cache, too,
 * rejects "a value is not finite"). */
static gboolean
check_finite (Reader *r, const CamlModel *model, const guint8 *floats)
{
  for (int i = 0; i < model->n_layers; i++)
    {
      const CamlLayer *layer = model->layers[i];
      for (int j = 0; j < layer->n_params; j++)
        {
          const CamlParam *p = &layer->params[j];
          const guint8 *values = floats + p->offset * sizeof (float);
          for (size_t k = 0; k < p->count; k++)
            {
              guint32 bits = caml_bin_float_bits (values + k * sizeof (float));
              if ((bits & 0x7f800000u) != 0x7f800000u)
                continue;
              const char *what = (bits & 0x007fffffu) != 0 ? "nan"
                                 : (bits & 0x80000000u) != 0 ? "-inf" : "inf";
              g_set_error (r->bin.error, CAML_ERROR, CAML_ERROR_PARSE,
                           "%s: byte %" G_GSIZE_FORMAT ": a value is not finite: layer %d "
                           "(%s) parameter %s[%zu] is %s", r->bin.source,
                           (gsize) (values - r->bin.data) + k * sizeof (float), i,
                           layer->ops->name, p->name, k, what);
              return FALSE;
            }
        }
    }
  return TRUE;
}

gboolean
caml_weights_load_data (CamlModel *model, const guint8 *data, gsize length,
                        const char *source, GError **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  Reader r = {
    .bin = { .data = data, .length = length, .pos = 0,
             .source = source != NULL ? source : "<weights>", .error = error },
  };
  const guint8 *floats;
  guint64 n_floats;

  /* 1. the structure alone, so a damaged file reads as damaged, 2. then
   * the checksum … */
  if (!read_header (&r) || !read_body (&r, NULL, &floats, &n_floats)
      || !caml_bin_take_digest (&r.bin))
    return FALSE;

  /* 3. … and only then whether it fits this model: the vocabulary first
   * (another one of another size would read as a layer of another size),
   * the layers, the values. */
  r.bin.pos = 0;
  if (!read_header (&r) || !check_vocab (&r, model)
      || !read_body (&r, model, &floats, &n_floats)
      || !check_finite (&r, model, floats))
    return FALSE;

#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  memcpy (model->w, floats, n_floats * sizeof (float));
#else
  for (guint64 i = 0; i < n_floats; i++)
    {
      guint32 bits = caml_bin_float_bits (floats + i * sizeof bits);
      memcpy (&model->w[i], &bits, sizeof bits);
    }
#endif
  return TRUE;
}

gboolean
caml_weights_load (CamlModel *model, const char *path, GError **error)
{
  char *contents = NULL;
  gsize length = 0;

  if (!caml_file_get_contents (path, &contents, &length, error))
    return FALSE;
  gboolean ok = caml_weights_load_data (model, (const guint8 *) contents, length,
                                        path, error);
  g_free (contents);
  return ok;
}
