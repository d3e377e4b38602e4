/* bin-io.h — private to the engine: the little-endian fields and the
 * SHA-256 trailer of its binary files (the weights file, weights.c; the
 * trainer's state, trainer-state.c). Writing appends to a GByteArray;
 * reading takes fields from bytes in memory, each length checked against
 * the bytes left, with errors that name the file, the byte and the field. */
#pragma once

#include "caml-private.h"

G_BEGIN_DECLS

#define CAML_BIN_DIGEST_LEN 32   /* SHA-256 */

void caml_bin_put_u16 (GByteArray *b, guint16 v);
void caml_bin_put_u32 (GByteArray *b, guint32 v);
void caml_bin_put_u64 (GByteArray *b, guint64 v);
void caml_bin_put_f64 (GByteArray *b, double v);
/* count floats as IEEE-754 binary32, little-endian */
void caml_bin_put_floats (GByteArray *b, const float *v, size_t count);
/* Appends the SHA-256 of every byte of b so far. */
void caml_bin_put_digest (GByteArray *b);
/* The SHA-256 of length bytes at data into digest. */
void caml_bin_digest (const void *data, gsize length, guint8 digest[CAML_BIN_DIGEST_LEN]);

typedef struct {
  const guint8 *data;
  gsize         length;
  gsize         pos;      /* the next byte to take */
  const char   *source;   /* the file, in errors */
  GError      **error;
} CamlBinReader;

/* The next n bytes, or NULL with an error: "SOURCE: truncated at byte P:
 * expected N more bytes for WHAT, found M". */
const guint8 *caml_bin_take (CamlBinReader *r, gsize n, const char *what);
gboolean      caml_bin_take_u16 (CamlBinReader *r, const char *what, guint16 *out);
gboolean      caml_bin_take_u32 (CamlBinReader *r, const char *what, guint32 *out);
gboolean      caml_bin_take_u64 (CamlBinReader *r, const char *what, guint64 *out);
gboolean      caml_bin_take_f64 (CamlBinReader *r, const char *what, double *out);
/* The binary32 stored (little-endian) at p, as bits and as a float. */
guint32       caml_bin_float_bits (const guint8 *p);
float         caml_bin_float (const guint8 *p);
/* The bytes magic (magic_len of them) start the data, else an error: "SOURCE:
 * not a KIND (magic "…", expected "…")"; then takes them. */
gboolean      caml_bin_take_magic (CamlBinReader *r, const char *magic, gsize magic_len,
                                   const char *kind);
/* The checksum at r->pos: the SHA-256 of every byte before it, and the
 * last bytes of the data. Errors: truncated, "N unexpected bytes after the
 * checksum at byte P", "byte P: checksum mismatch: … the file is damaged". */
gboolean      caml_bin_take_digest (CamlBinReader *r);
/* Bytes as text for a message: printable ASCII kept, the rest \xNN. */
char         *caml_bin_escape (const guint8 *p, gsize n);

G_END_DECLS
