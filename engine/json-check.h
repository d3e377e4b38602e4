/* json-check.h — private to the engine: strict JSON validation, run before
 * json-glib parses a document from outside (json-check.c says why). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Whether data (length bytes, not necessarily NUL-terminated) is exactly one
 * well-formed JSON value (RFC 8259; optional byte-order mark and white space
 * around it), UTF-8, nested at most max_depth arrays/objects deep, with no
 * "\u0000", no unpaired surrogate escapes and no key twice in one object (as
 * written: escapes are not decoded for the comparison). Otherwise *message (free it)
 * says "line L:C: <problem>" ("the document is empty" for nothing at all).
 * In the same pass, when wide is not NULL (a table of strings to strings),
 * every integer literal outside gint64 — which json-glib reads wrapped — is
 * put in it under its path ("seed", "model[0].units", keys decoded). */
gboolean caml_json_check (const char *data, gsize length, int max_depth, GHashTable *wide,
                          char **message);

G_END_DECLS
