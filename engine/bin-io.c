/* bin-io.c — little-endian fields and the SHA-256 trailer of the engine's
 * binary files (bin-io.h). */
#include <string.h>

#include "bin-io.h"

G_STATIC_ASSERT (sizeof (float) == sizeof (guint32));
G_STATIC_ASSERT (sizeof (double) == sizeof (guint64));

/* ---------------------------------------------------------------- writing */

void
caml_bin_put_u16 (GByteArray *b, guint16 v)
{
  guint16 le = GUINT16_TO_LE (v);
  g_byte_array_append (b, (const guint8 *) &le, sizeof le);
}

void
caml_bin_put_u32 (GByteArray *b, guint32 v)
{
  guint32 le = GUINT32_TO_LE (v);
  g_byte_array_append (b, (const guint8 *) &le, sizeof le);
}

void
caml_bin_put_u64 (GByteArray *b, guint64 v)
{
  guint64 le = GUINT64_TO_LE (v);
  g_byte_array_append (b, (const guint8 *) &le, sizeof le);
}

void
caml_bin_put_f64 (GByteArray *b, double v)
{
  guint64 bits;
  memcpy (&bits, &v, sizeof bits);
  caml_bin_put_u64 (b, bits);
}

void
caml_bin_put_floats (GByteArray *b, const float *v, size_t count)
{
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  g_byte_array_append (b, (const guint8 *) v, (guint) (count * sizeof *v));
#else
  for (size_t i = 0; i < count; i++)
    {
      guint32 bits;
      memcpy (&bits, &v[i], sizeof bits);
      caml_bin_put_u32 (b, bits);
    }
#endif
}

void
caml_bin_digest (const void *data, gsize length, guint8 digest[CAML_BIN_DIGEST_LEN])
{
  gsize digest_len = CAML_BIN_DIGEST_LEN;
  GChecksum *sha = g_checksum_new (G_CHECKSUM_SHA256);
  g_checksum_update (sha, data, (gssize) length);
  g_checksum_get_digest (sha, digest, &digest_len);
  g_checksum_free (sha);
}

void
caml_bin_put_digest (GByteArray *b)
{
  guint8 digest[CAML_BIN_DIGEST_LEN];
  caml_bin_digest (b->data, b->len, digest);
  g_byte_array_append (b, digest, sizeof digest);
}

/* ---------------------------------------------------------------- reading */

const guint8 *
caml_bin_take (CamlBinReader *r, gsize n, const char *what)
{
  if (r->length == 0 && n > 0)
    {
      g_set_error (r->error, CAML_ERROR, CAML_ERROR_PARSE, "%s: the file is empty (0 bytes)",
                   r->source);
      return NULL;
    }
  if (n > r->length - r->pos)
    {
      g_set_error (r->error, CAML_ERROR, CAML_ERROR_PARSE,
                   "%s: truncated at byte %" G_GSIZE_FORMAT ": expected %"
                   G_GSIZE_FORMAT " more bytes for %s, found %" G_GSIZE_FORMAT,
                   r->source, r->pos, n, what, r->length - r->pos);
      return NULL;
    }
  const guint8 *p = r->data + r->pos;
  r->pos += n;
  return p;
}

gboolean
caml_bin_take_u16 (CamlBinReader *r, const char *what, guint16 *out)
{
  const guint8 *p = caml_bin_take (r, sizeof *out, what);
  if (p == NULL)
    return FALSE;
  memcpy (out, p, sizeof *out);
  *out = GUINT16_FROM_LE (*out);
  return TRUE;
}

gboolean
caml_bin_take_u32 (CamlBinReader *r, const char *what, guint32 *out)
{
  const guint8 *p = caml_bin_take (r, sizeof *out, what);
  if (p == NULL)
    return FALSE;
  memcpy (out, p, sizeof *out);
  *out = GUINT32_FROM_LE (*out);
  return TRUE;
}

gboolean
caml_bin_take_u64 (CamlBinReader *r, const char *what, guint64 *out)
{
  const guint8 *p = caml_bin_take (r, sizeof *out, what);
  if (p == NULL)
    return FALSE;
  memcpy (out, p, sizeof *out);
  *out = GUINT64_FROM_LE (*out);
  return TRUE;
}

gboolean
caml_bin_take_f64 (CamlBinReader *r, const char *what, double *out)
{
  guint64 bits;
  if (!caml_bin_take_u64 (r, what, &bits))
    return FALSE;
  memcpy (out, &bits, sizeof bits);
  return TRUE;
}

guint32
caml_bin_float_bits (const guint8 *p)
{
  guint32 bits;
  memcpy (&bits, p, sizeof bits);
  return GUINT32_FROM_LE (bits);
}

float
caml_bin_float (const guint8 *p)
{
  guint32 bits = caml_bin_float_bits (p);
  float v;
  memcpy (&v, &bits, sizeof v);
  return v;
}

char *
caml_bin_escape (const guint8 *p, gsize n)
{
  GString *s = g_string_new (NULL);
  for (gsize i = 0; i < n; i++)
    {
      if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\')
        g_string_append_c (s, (char) p[i]);
      else
        g_string_append_printf (s, "\\x%02x", p[i]);
    }
  return g_string_free (s, FALSE);
}

gboolean
caml_bin_take_magic (CamlBinReader *r, const char *magic, gsize magic_len, const char *kind)
{
  gsize avail = MIN (r->length - r->pos, magic_len);
  if (avail > 0 && memcmp (r->data + r->pos, magic, avail) != 0)
    {
      g_autofree char *found = caml_bin_escape (r->data + r->pos, avail);
      g_set_error (r->error, CAML_ERROR, CAML_ERROR_PARSE,
                   "%s: not a %s (magic \"%s\", expected \"%s\")",
                   r->source, kind, found, magic);
      return FALSE;
    }
  return caml_bin_take (r, magic_len, "the magic number") != NULL;
}

gboolean
caml_bin_take_digest (CamlBinReader *r)
{
  gsize body_end = r->pos;
  const guint8 *digest = caml_bin_take (r, CAML_BIN_DIGEST_LEN, "the SHA-256 checksum");
  if (digest == NULL)
    return FALSE;
  if (r->pos != r->length)
    {
      g_set_error (r->error, CAML_ERROR, CAML_ERROR_PARSE,
                   "%s: %" G_GSIZE_FORMAT " unexpected bytes after the checksum "
                   "at byte %" G_GSIZE_FORMAT, r->source, r->length - r->pos, r->pos);
      return FALSE;
    }
  guint8 computed[CAML_BIN_DIGEST_LEN];
  caml_bin_digest (r->data, body_end, computed);
  if (memcmp (computed, digest, CAML_BIN_DIGEST_LEN) != 0)
    {
      g_set_error (r->error, CAML_ERROR, CAML_ERROR_PARSE,
                   "%s: byte %" G_GSIZE_FORMAT ": checksum mismatch: the SHA-256 of "
                   "the %" G_GSIZE_FORMAT " bytes before it differs, the file is damaged",
                   r->source, body_end, body_end);
      return FALSE;
    }
  return TRUE;
}
