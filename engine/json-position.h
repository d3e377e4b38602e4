/* json-position.h — private to the engine: where a JSON reader's error is,
 * and the one wording of a JSON syntax error, shared by the experiment
 * reader (json-check.c), the IMDB reviews (imdb.c) and the wink word vectors
 * (embeddings-wink.c):
 *
 *   SOURCE:LINE:COLUMN: PATH: PROBLEM
 *
 * LINE and COLUMN from 1, the column counted in characters (UTF-8 bytes
 * that do not continue a character); lines end in \r\n, \n or a lone \r, as
 * in lines.c. PATH ("model[1].units", "reviews[3]") is left out where
 * there is none. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  guint64 line;     /* from 1 */
  guint64 column;   /* from 1, in characters */
} CamlJsonPos;

/* Counts lines and columns over bytes fed in order, for a reader that
 * streams its input and cannot look back. */
typedef struct {
  CamlJsonPos at;         /* of the next byte */
  gboolean    after_cr;   /* the last byte was \r: a \n now ends no line */
} CamlJsonCounter;

#define CAML_JSON_COUNTER_INIT { { 1, 1 }, FALSE }

void caml_json_counter_feed (CamlJsonCounter *counter, const guint8 *bytes, gsize n);

/* The position of byte pos of data (pos ≤ length). */
CamlJsonPos caml_json_locate (const char *data, gsize length, gsize pos);

/* pos moved back n characters on its line (the caller knows that those
 * characters hold no line end: a number, an escape, a word). */
CamlJsonPos caml_json_pos_back (CamlJsonPos pos, guint64 n);

/* "SOURCE:LINE:COLUMN: PATH" (or without ": PATH"), the start of every
 * such message; g_free it. */
char *caml_json_where (const char *source, CamlJsonPos pos, const char *path);

/* Sets *error (CAML_ERROR, CAML_ERROR_PARSE) to "SOURCE:LINE:COLUMN: PATH:
 * PROBLEM" — without "PATH: " when path is NULL or empty — made valid
 * UTF-8 (a message quotes input, and a source is a file name). */
G_GNUC_PRINTF (5, 6)
void caml_json_error (GError **error, const char *source, CamlJsonPos pos, const char *path,
                      const char *format, ...);
void caml_json_error_valist (GError **error, const char *source, CamlJsonPos pos,
                             const char *path, const char *format, va_list args)
  G_GNUC_PRINTF (5, 0);

G_END_DECLS
