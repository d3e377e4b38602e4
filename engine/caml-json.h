/* caml-json.h — for applications that read JSON documents of their own (a
 * sweep file) the way the engine reads experiment files: strict JSON
 * (json-check.c), every error worded as the engine's JSON errors are,
 *
 *   FILE:LINE:COLUMN: PATH: problem
 *
 * and an experiment written inside such a document read by the experiment
 * parser, its errors pointing into the document. */
#pragma once

#include <json-glib/json-glib.h>

#include "caml.h"

G_BEGIN_DECLS

typedef struct _CamlJsonDoc CamlJsonDoc;

/* length bytes of data (-1: NUL-terminated) as one strict JSON document;
 * source names it in errors. NULL with a CAML_ERROR_PARSE at the place of
 * the first syntax error. */
CamlJsonDoc *caml_json_doc_new (const char *data, gssize length, const char *source,
                                GError **error);
/* The same from a file (caml_file_get_contents' errors), named by path. */
CamlJsonDoc *caml_json_doc_new_from_file (const char *path, GError **error);
void         caml_json_doc_free (CamlJsonDoc *doc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CamlJsonDoc, caml_json_doc_free)

JsonNode    *caml_json_doc_root (const CamlJsonDoc *doc);
const char  *caml_json_doc_source (const CamlJsonDoc *doc);

/* Paths as the engine's errors spell them: "grid[1].values[0]", keys as
 * decoded, "" for the document. */

/* Sets *error (CAML_ERROR_INVALID) to "SOURCE:LINE:COL: PATH: problem" at
 * the value at path (at its key with at_key: a member that should not be
 * there), or at the nearest value above it that the document has. FALSE. */
G_GNUC_PRINTF (5, 6)
gboolean caml_json_doc_fail (const CamlJsonDoc *doc, GError **error, const char *path,
                             gboolean at_key, const char *format, ...);
/* Every member of obj (the object at path) is one of allowed
 * (NULL-terminated); else the experiment files' error at the first other:
 * "PATH.KEY: unknown key (expected one of …)". */
gboolean caml_json_doc_check_keys (const CamlJsonDoc *doc, JsonObject *obj, const char *path,
                                   const char *const *allowed, GError **error);
/* "an object", "an array", "a string", "an integer", "a number", "a
 * boolean", "null": what a node is, for "expected …, found …". */
const char *caml_json_describe (JsonNode *node);
/* The literal of the integer at path when it lies outside gint64 (the
 * node holds it clamped), else NULL. */
const char *caml_json_doc_wide_literal (const CamlJsonDoc *doc, const char *path);

/* The experiment object node, the value at path of doc, read as an
 * experiment file is (caml_experiment_load_file), its errors at their place
 * in doc ("sweep.json:3:30: experiment.model[0].units: 0 is out of range
 * 1…65536"). Without "name" it is named default_name (NULL: the default);
 * relative data paths in it are read from base_dir (NULL: kept as they are,
 * from the current directory). */
CamlExperiment *caml_experiment_load_json (const CamlJsonDoc *doc, JsonNode *node,
                                           const char *path, const char *default_name,
                                           const char *base_dir, GError **error);

G_END_DECLS
