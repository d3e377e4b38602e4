/* lines-private.h — private to the engine and its tests: the one line
 * splitter of the line-based loaders (text<TAB>label files, the files of
 * `caml sem`, GloVe text). Not part of the public API in caml.h. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The line that starts at data: returns its length, without its line end,
 * and sets *next to the offset of the next line (length when there is none).
 * "\r\n", "\n" and a lone "\r" each end a line, so files from Windows, Unix
 * and classic Mac OS split alike. A line that ends in "\r" at the very end of
 * data is complete; a streaming reader whose buffer ends there skips a "\n"
 * that starts its next buffer (caml_line_ended_in_cr says when). data may
 * hold NUL bytes. */
gsize caml_line_split (const char *data, gsize length, gsize *next);

/* Whether the line found by caml_line_split (its length and next) ended with
 * a lone "\r" at the end of data — where the "\n" of a "\r\n" may follow in
 * the next buffer of a stream. */
gboolean caml_line_ended_in_cr (const char *data, gsize length, gsize line_length,
                                gsize next);

/* The line of byte pos of data (from 1), with the line ends of
 * caml_line_split, and the offset its line starts at — for errors that give
 * a line and column. */
int   caml_line_locate (const char *data, gsize length, gsize pos, gsize *line_start);

/* A blank line: empty, or only spaces and tabs. The loaders skip them. */
gboolean caml_line_is_blank (const char *line, gsize length);

/* Whether the line (length bytes, NUL bytes included) is UTF-8 without NUL
 * bytes; if not, the error gives "source:line:column:" — the byte within
 * the line, from 1 — and what is wrong there. */
gboolean caml_line_check_text (const char *line, gsize length, const char *source,
                               int line_no, GError **error);

G_END_DECLS
