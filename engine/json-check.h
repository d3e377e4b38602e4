/* json-check.h — private to the engine: the experiment reader's one pass
 * over strict JSON into a json-glib tree (json-check.c says why). */
#pragma once

#include <json-glib/json-glib.h>

#include "caml-json.h"

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

/* Where a value is in the document: the byte its key starts at (a member)
 * or, for an element or the document, the value's own, and the value's. */
typedef struct {
  gsize key;
  gsize value;
} CamlJsonSpot;

/* The same, and when spots is not NULL (a table of strings to CamlJsonSpot,
 * both freed with g_free) every value is put in it under its path, as the
 * wide integers are ("" for the document itself). */
JsonNode *caml_json_parse_full (const char *data, gsize length, const char *source,
                                int max_depth, GHashTable *wide, GHashTable *spots,
                                GError **error);

/* A document read by caml_json_parse_full, kept with its text, its wide
 * integers and its spots (caml-json.h: what applications see of it). */
struct _CamlJsonDoc {
  char       *source;
  char       *data;
  gsize       length;
  JsonNode   *root;
  GHashTable *wide;    /* path → literal */
  GHashTable *spots;   /* path → CamlJsonSpot */
};

/* "SOURCE:LINE:COL: PATH" for the value at path (its key with at_key), or
 * the nearest above it that doc has (json-doc.c). g_free it. */
char *caml_json_doc_where (const CamlJsonDoc *doc, const char *path, gboolean at_key);

G_END_DECLS
