/* json-doc.c — JSON documents of an application's own, read as strictly as
 * experiment files and with their errors' wording and places (caml-json.h). */
#include <string.h>

#include "caml-private.h"
#include "experiment-private.h"
#include "json-check.h"
#include "json-position.h"

/* A sweep file nests an experiment (four levels) two levels down. */
#define MAX_NESTING 64

CamlJsonDoc *
caml_json_doc_new (const char *data, gssize length, const char *source, GError **error)
{
  g_return_val_if_fail (data != NULL && source != NULL, NULL);
  CamlJsonDoc *doc = g_new0 (CamlJsonDoc, 1);
  doc->source = g_strdup (source);
  doc->length = length >= 0 ? (gsize) length : strlen (data);
  doc->data = g_malloc (doc->length + 1);
  memcpy (doc->data, data, doc->length);
  doc->data[doc->length] = '\0';
  doc->wide = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  doc->spots = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  doc->root = caml_json_parse_full (doc->data, doc->length, doc->source, MAX_NESTING,
                                    doc->wide, doc->spots, error);
  if (doc->root == NULL)
    g_clear_pointer (&doc, caml_json_doc_free);
  return doc;
}

CamlJsonDoc *
caml_json_doc_new_from_file (const char *path, GError **error)
{
  g_autofree char *contents = NULL;
  gsize length = 0;
  if (!caml_file_get_contents (path, &contents, &length, error))
    return NULL;
  return caml_json_doc_new (contents, (gssize) length, path, error);
}

void
caml_json_doc_free (CamlJsonDoc *doc)
{
  if (doc == NULL)
    return;
  g_clear_pointer (&doc->root, json_node_unref);
  g_hash_table_unref (doc->wide);
  g_hash_table_unref (doc->spots);
  g_free (doc->data);
  g_free (doc->source);
  g_free (doc);
}

JsonNode *
caml_json_doc_root (const CamlJsonDoc *doc)
{
  return doc->root;
}

const char *
caml_json_doc_source (const CamlJsonDoc *doc)
{
  return doc->source;
}

const char *
caml_json_doc_wide_literal (const CamlJsonDoc *doc, const char *path)
{
  return g_hash_table_lookup (doc->wide, path);
}

/* The path of what holds path's value: "a.b[2]" → "a.b" → "a" → "". */
static gboolean
path_up (char *path)
{
  if (*path == '\0')
    return FALSE;
  char *dot = strrchr (path, '.');
  char *bracket = strrchr (path, '[');
  char *cut = dot == NULL ? bracket : bracket == NULL ? dot : MAX (dot, bracket);
  *(cut != NULL ? cut : path) = '\0';
  return TRUE;
}

char *
caml_json_doc_where (const CamlJsonDoc *doc, const char *path, gboolean at_key)
{
  g_autofree char *up = g_strdup (path != NULL ? path : "");
  const CamlJsonSpot *spot;
  gboolean exact = TRUE;
  while ((spot = g_hash_table_lookup (doc->spots, up)) == NULL && path_up (up))
    exact = FALSE;
  gsize at = spot == NULL ? 0 : at_key && exact ? spot->key : spot->value;
  return caml_json_where (doc->source, caml_json_locate (doc->data, doc->length, at), path);
}

gboolean
caml_json_doc_fail (const CamlJsonDoc *doc, GError **error, const char *path, gboolean at_key,
                    const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *problem = g_strdup_vprintf (format, args);
  va_end (args);
  CamlParser p = { .source = doc->source, .doc = doc, .error = error };
  return caml_parser_fail_text (&p, CAML_ERROR_INVALID, path, at_key, problem);
}

gboolean
caml_json_doc_check_keys (const CamlJsonDoc *doc, JsonObject *obj, const char *path,
                          const char *const *allowed, GError **error)
{
  CamlParser p = { .source = doc->source, .doc = doc, .error = error };
  return caml_parser_check_keys (&p, obj, path, allowed, (int) g_strv_length ((char **) allowed),
                                 NULL);
}
