/* json-check.h — private to the engine: the experiment reader's one pass
 * over strict JSON into a json-glib tree (json-check.c says why). */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The tree of data (length bytes, not necessarily NUL-terminated) when it is
 * exactly one well-formed JSON value (RFC 8259; optional byte-order mark and
 * white space around it), UTF-8, nested at most max_depth arrays/objects
 * deep, with no "\u0000", no unpaired surrogate escapes and no key twice in
 * one object (as written: escapes are not decoded for the comparison; a key
 * spelled two ways keeps its last value, as in json-glib). Otherwise NULL,
 * and *error (CAML_ERROR_PARSE) says "SOURCE:LINE:COLUMN: PATH: PROBLEM"
 * (json-position.h; "SOURCE: the document is empty" for nothing at all).
 * When wide is not NULL (a table of strings to strings), every integer
 * literal outside gint64 is put in it under its path ("seed",
 * "model[0].units", keys decoded): the tree holds such a number clamped to
 * gint64, the literal is the real one. Free the tree with json_node_unref. */
JsonNode *caml_json_parse (const char *data, gsize length, const char *source, int max_depth,
                           GHashTable *wide, GError **error);

G_END_DECLS
