/* embeddings-private.h — what the word-vector files share inside the engine:
 * embeddings.c (the byte reader, numbers, the table being filled, the
 * loaders), embeddings-glove.c, embeddings-wink.c and embeddings-cache.c
 * (one reader per format). */
#pragma once

#include <gio/gio.h>

#include "caml-private.h"
#include "json-position.h"

/* XXH64 from libxxhash: 10× faster than SHA-256 over a 140 MB cache. */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#define CAML_EMB_CHUNK          (1 << 16)
#define CAML_EMB_MAX_DIM        100000
#define CAML_EMB_MAX_WORD_BYTES (1 << 20)
#define CAML_EMB_CACHE_MAGIC    "CAMLEMB1"

/* Bytes from a stream (through a 64 KiB buffer) or from memory. */
typedef struct {
  const char   *source;    /* names the input in errors */
  GInputStream *in;        /* NULL: everything is in buf */
  guint8       *chunk;     /* owned: the stream's buffer */
  const guint8 *buf;
  gsize         len, pos;
  guint64       base;      /* input offset of buf[0] */
  gint64        size;      /* total input bytes, −1 when unknown */
  GError       *io_error;  /* a failed read: reported instead of "the end" */
  XXH64_state_t *hash;      /* when set, caml_emb_reader_read hashes what it copies */
  gboolean      count_lines;   /* keep lines: the bytes read so far are counted */
  CamlJsonCounter lines;       /* …up to buf[counted] */
  gsize         counted;
} CamlEmbReader;

/* Vectors as they are read, before they become a CamlEmbeddings. */
typedef struct {
  CamlVocab *vocab;
  int        dim;
  float     *vectors;   /* (capacity, dim) */
  gsize      capacity;  /* rows */
} CamlEmbTable;

/* What a cache remembers of its source. */
typedef struct {
  guint64 size;
  gint64  mtime_us;
} CamlEmbStamp;

/* --- the byte reader, numbers and the table (embeddings.c) */

void caml_emb_reader_init_memory (CamlEmbReader *r, const guint8 *data, gsize length,
                                  const char *source);
void caml_emb_reader_init_stream (CamlEmbReader *r, GInputStream *in, gint64 size,
                                  const char *source);
void caml_emb_reader_clear (CamlEmbReader *r);
/* Refill when the buffer is used up; FALSE at the end (or on a read error). */
gboolean caml_emb_reader_fill (CamlEmbReader *r);
/* The next byte, not consumed; -1 at the end. */
static inline int
caml_emb_reader_peek (CamlEmbReader *r)
{
  if (G_LIKELY (r->pos < r->len) || caml_emb_reader_fill (r))
    return r->buf[r->pos];
  return -1;
}

static inline guint64
caml_emb_reader_offset (const CamlEmbReader *r)
{
  return r->base + r->pos;
}

gsize caml_emb_reader_read (CamlEmbReader *r, void *dst, gsize n);
/* From now on the reader counts lines (before its first byte is consumed),
 * so that caml_emb_reader_position can say where it is: it cannot look
 * back once a buffer is refilled. */
void caml_emb_reader_count_lines (CamlEmbReader *r);
/* The line and column of the next byte (caml_emb_reader_count_lines). */
CamlJsonPos caml_emb_reader_position (CamlEmbReader *r);
char *caml_emb_describe_byte (int c);
char *caml_emb_quote_word (const char *word, gsize length);
gboolean caml_emb_parse_decimal (const char *text, gsize n, gboolean json, double *out);
gboolean caml_emb_fits_float (double v);
void caml_emb_table_init (CamlEmbTable *t, int dim);
void caml_emb_table_clear (CamlEmbTable *t);
float *caml_emb_table_row (CamlEmbTable *t, gsize row);
void caml_emb_table_reserve (CamlEmbTable *t, gsize rows);
CamlEmbeddings *caml_emb_table_finish (CamlEmbTable *t);
int caml_emb_table_add_word (CamlEmbTable *t, const char *word, gsize length);

/* --- GloVe text (embeddings-glove.c) */

CamlEmbeddings *caml_emb_parse_glove (CamlEmbReader *r, GError **error);

/* --- the wink JSON (embeddings-wink.c) */

CamlEmbeddings *caml_emb_parse_wink (CamlEmbReader *r, GError **error);

/* --- the binary cache (embeddings-cache.c) */

CamlEmbeddings *caml_emb_parse_cache (CamlEmbReader *r, const CamlEmbStamp *expect,
                                      gboolean *stale, GError **error);
gboolean caml_emb_cache_write (const CamlEmbeddings *emb,
                               CamlEmbeddingsFormat source_format,
                               const CamlEmbStamp *stamp, const char *path,
                               GError **error);
