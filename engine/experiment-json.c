/* experiment-json.c — the value readers of the experiment parser: errors that
 * name the document and the path, key checks, numbers (with the integers
 * json-glib cannot hold), strings, booleans, enums and layer options. */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "caml-private.h"
#include "experiment-private.h"

/* path below p->prefix: the path in the whole document. */
static char *
full_path (const CamlParser *p, const char *path)
{
  if (p->prefix == NULL || *p->prefix == '\0')
    return g_strdup (path != NULL ? path : "");
  return path != NULL && *path != '\0' ? caml_parser_child_path (p->prefix, path)
                                        : g_strdup (p->prefix);
}

char *
caml_parser_where (const CamlParser *p, const char *path, gboolean at_key)
{
  if (p->doc != NULL)
    {
      g_autofree char *full = full_path (p, path);
      return caml_json_doc_where (p->doc, full, at_key);
    }
  if (p->source == NULL)
    return g_strdup (path != NULL ? path : "");
  return path != NULL && *path != '\0' ? g_strdup_printf ("%s: %s", p->source, path)
                                        : g_strdup (p->source);
}

gboolean
caml_parser_fail_text (CamlParser *p, CamlErrorCode code, const char *path, gboolean at_key,
                       const char *message)
{
  char *where = caml_parser_where (p, path, at_key);
  char *full = *where != '\0' ? g_strconcat (where, ": ", message, NULL) : g_strdup (message);
  /* Messages are UTF-8 (a GUI shows them); json-glib's quote the document's
   * bytes, which need not be. */
  char *valid = g_utf8_make_valid (full, -1);
  g_set_error_literal (p->error, CAML_ERROR, code, valid);
  g_free (valid);
  g_free (full);
  g_free (where);
  return FALSE;
}

gboolean
caml_parser_fail (CamlParser *p, CamlErrorCode code, const char *path, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  char *message = g_strdup_vprintf (format, args);
  va_end (args);
  caml_parser_fail_text (p, code, path, FALSE, message);
  g_free (message);
  return FALSE;
}

const char *
caml_json_describe (JsonNode *node)
{
  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_OBJECT: return "an object";
    case JSON_NODE_ARRAY:  return "an array";
    case JSON_NODE_NULL:   return "null";
    case JSON_NODE_VALUE:
      switch (json_node_get_value_type (node))
        {
        case G_TYPE_INT64:   return "an integer";
        case G_TYPE_DOUBLE:  return "a number";
        case G_TYPE_BOOLEAN: return "a boolean";
        case G_TYPE_STRING:  return "a string";
        default:             return "a value";
        }
    }
  return "something else";
}

char *
caml_parser_child_path (const char *path, const char *key)
{
  return path == NULL || *path == '\0' ? g_strdup (key)
                                       : g_strdup_printf ("%s.%s", path, key);
}

char *
caml_parser_join_names (const char *const *names, int n)
{
  GString *s = g_string_new (NULL);
  for (int i = 0; n < 0 ? names[i] != NULL : i < n; i++)
    g_string_append_printf (s, "%s%s", i > 0 ? ", " : "", names[i]);
  return g_string_free (s, FALSE);
}

/* Every member of obj must be one of `allowed` (n names). */
gboolean
caml_parser_check_keys (CamlParser *p, JsonObject *obj, const char *path,
                        const char *const *allowed, int n, const char *const *listed)
{
  GList *members = json_object_get_members (obj);
  gboolean ok = TRUE;
  for (GList *l = members; l != NULL && ok; l = l->next)
    {
      const char *key = l->data;
      gboolean known = FALSE;
      for (int i = 0; i < n && !known; i++)
        known = g_str_equal (key, allowed[i]);
      if (!known)
        {
          char *shown = g_utf8_make_valid (key, -1);   /* messages are UTF-8 */
          char *where = caml_parser_child_path (path, shown);
          char *expected = listed != NULL ? caml_parser_join_names (listed, -1)
                                          : caml_parser_join_names (allowed, n);
          char *message = g_strdup_printf ("unknown key (expected one of %s)", expected);
          ok = caml_parser_fail_text (p, CAML_ERROR_INVALID, where, TRUE /* at the key */,
                                      message);
          g_free (message);
          g_free (expected);
          g_free (where);
          g_free (shown);
        }
    }
  g_list_free (members);
  return ok;
}

gboolean
caml_parser_expect_object (CamlParser *p, JsonNode *node, const char *path, JsonObject **out)
{
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return caml_parser_fail (p, CAML_ERROR_INVALID, path, "expected an object, found %s",
                             caml_json_describe (node));
  *out = json_node_get_object (node);
  return TRUE;
}

/* --- integers beyond 64 bits: json-check.c keeps each integer literal
 * outside gint64 under its path (json-glib reads those wrapped); the number
 * readers look there first. */

/* The literal of the integer at path if it is outside gint64 (json-glib's
 * value is then wrapped), else NULL. */
static const char *
wide_literal (CamlParser *p, JsonNode *node, const char *path)
{
  if (p->wide == NULL || json_node_get_value_type (node) != G_TYPE_INT64)
    return NULL;
  if (p->prefix == NULL)
    return g_hash_table_lookup (p->wide, path);
  g_autofree char *full = full_path (p, path);
  return g_hash_table_lookup (p->wide, full);
}

/* A literal for a message: a very long one cut short. Free with g_free. */
static char *
shown_literal (const char *literal)
{
  gsize n = strlen (literal);
  return n <= 40 ? g_strdup (literal)
                 : g_strdup_printf ("%.20s… (%" G_GSIZE_FORMAT " digits)", literal,
                                    n - (literal[0] == '-'));
}

static gboolean
is_number (JsonNode *node)
{
  if (!JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  GType t = json_node_get_value_type (node);
  return t == G_TYPE_INT64 || t == G_TYPE_DOUBLE;
}

gboolean
caml_parser_get_number (CamlParser *p, JsonNode *node, const char *path, double *out)
{
  if (!is_number (node))
    return caml_parser_fail (p, CAML_ERROR_INVALID, path, "expected a number, found %s",
                             caml_json_describe (node));
  const char *wide = wide_literal (p, node, path);
  if (wide != NULL)
    *out = g_ascii_strtod (wide, NULL);   /* the real value, not json-glib's */
  else
    *out = json_node_get_value_type (node) == G_TYPE_INT64
             ? (double) json_node_get_int (node) : json_node_get_double (node);
  if (!isfinite (*out))
    {
      g_autofree char *shown = wide != NULL ? shown_literal (wide)
                                            : g_strdup_printf ("%g", *out);
      return caml_parser_fail (p, CAML_ERROR_INVALID, path, "%s is not a finite number", shown);
    }
  return TRUE;
}

/* An integer in [min, max]. Integral numbers written with a fraction or an
 * exponent (1e3) are accepted; 2.5 is not. One beyond 64 bits is named as
 * written ("seed: 18446744073709551615 is out of range 0…N"). */
gboolean
caml_parser_get_int (CamlParser *p, JsonNode *node, const char *path, gint64 min, gint64 max,
                     gint64 *out)
{
  if (!is_number (node))
    return caml_parser_fail (p, CAML_ERROR_INVALID, path, "expected an integer, found %s",
                             caml_json_describe (node));
  gint64 v;
  const char *wide = wide_literal (p, node, path);
  if (wide != NULL)
    {
      g_autofree char *shown = shown_literal (wide);
      return caml_parser_fail (p, CAML_ERROR_INVALID, path,
                               "%s is out of range %" G_GINT64_FORMAT "…%" G_GINT64_FORMAT,
                               shown, min, max);
    }
  if (json_node_get_value_type (node) == G_TYPE_INT64)
    v = json_node_get_int (node);
  else
    {
      double d = json_node_get_double (node);
      if (!isfinite (d) || d != floor (d))
        return caml_parser_fail (p, CAML_ERROR_INVALID, path, "%g is not an integer", d);
      if (d < (double) min || d > (double) max)
        return caml_parser_fail (p, CAML_ERROR_INVALID, path,
                                 "%g is out of range %" G_GINT64_FORMAT "…%" G_GINT64_FORMAT,
                                 d, min, max);
      v = (gint64) d;
    }
  if (v < min || v > max)
    return caml_parser_fail (p, CAML_ERROR_INVALID, path,
                             "%" G_GINT64_FORMAT " is out of range %" G_GINT64_FORMAT "…%"
                             G_GINT64_FORMAT, v, min, max);
  *out = v;
  return TRUE;
}

gboolean
caml_parser_get_int32 (CamlParser *p, JsonNode *node, const char *path, int min, int max,
                       int *out)
{
  gint64 v;
  if (!caml_parser_get_int (p, node, path, min, max, &v))
    return FALSE;
  *out = (int) v;
  return TRUE;
}

/* Strings must be valid UTF-8. JSON text is, but json-glib 1.6 turns some
 * escapes into bytes that are not ("\777" into 0xff, a lone "\udc00" into a
 * surrogate): such a string could not be written back as JSON, nor shown. */
gboolean
caml_parser_get_string (CamlParser *p, JsonNode *node, const char *path, const char **out)
{
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return caml_parser_fail (p, CAML_ERROR_INVALID, path, "expected a string, found %s",
                             caml_json_describe (node));
  const char *s = json_node_get_string (node);
  const char *bad = NULL;
  if (!g_utf8_validate (s, -1, &bad))
    return caml_parser_fail (p, CAML_ERROR_INVALID, path,
                             "not valid UTF-8 text (byte 0x%02x at offset %d of the string; an "
                             "escape such as \\777 or a lone \\udc00?)",
                             (guint8) *bad, (int) (bad - s));
  *out = s;
  return TRUE;
}

gboolean
caml_parser_get_bool (CamlParser *p, JsonNode *node, const char *path, gboolean *out)
{
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    return caml_parser_fail (p, CAML_ERROR_INVALID, path, "expected true or false, found %s",
                             caml_json_describe (node));
  *out = json_node_get_boolean (node);
  return TRUE;
}

/* A string that must be one of the NULL-terminated `names`. */
gboolean
caml_parser_get_enum (CamlParser *p, JsonNode *node, const char *path, const char *const *names,
                      int *out)
{
  const char *s = NULL;
  if (!caml_parser_get_string (p, node, path, &s))
    return FALSE;
  for (int i = 0; names[i] != NULL; i++)
    if (g_str_equal (names[i], s))
      {
        *out = i;
        return TRUE;
      }
  char *choices = caml_parser_join_names (names, -1);
  caml_parser_fail (p, CAML_ERROR_INVALID, path, "\"%s\" is not one of %s", s, choices);
  g_free (choices);
  return FALSE;
}

/* A real number checked against (lo, hi) with open or closed ends. */
gboolean
caml_parser_get_ranged (CamlParser *p, JsonNode *node, const char *path, double lo,
                        gboolean lo_open,
                        double hi, gboolean hi_open, const char *range, double *out)
{
  double v = 0.0;
  if (!caml_parser_get_number (p, node, path, &v))
    return FALSE;
  if ((lo_open ? v <= lo : v < lo) || (hi_open ? v >= hi : v > hi))
    return caml_parser_fail (p, CAML_ERROR_INVALID, path, "%g is out of range (must be %s)",
                             v, range);
  *out = v;
  return TRUE;
}

/* A layer option. */
gboolean
caml_parser_get_option (CamlParser *p, const CamlOptionSpec *spec, JsonNode *node,
                        const char *path, double *out)
{
  char *where = caml_parser_where (p, path, FALSE);
  gboolean ok = FALSE;

  switch (spec->type)
    {
    case CAML_OPT_INT:
      if (!is_number (node))
        caml_parser_fail (p, CAML_ERROR_INVALID, path, "expected an integer, found %s",
                          caml_json_describe (node));
      else if (wide_literal (p, node, path) != NULL)   /* every range is narrower */
        {
          g_autofree char *shown = shown_literal (wide_literal (p, node, path));
          caml_parser_fail (p, CAML_ERROR_INVALID, path, "%s is out of range %g…%g", shown,
                            spec->min,
                            spec->max);
        }
      else if (caml_parser_get_number (p, node, path, out))
        ok = caml_option_check (spec, *out, where, p->error);
      break;
    case CAML_OPT_FLOAT:
      if (caml_parser_get_number (p, node, path, out))
        ok = caml_option_check (spec, *out, where, p->error);
      break;
    case CAML_OPT_BOOL:
      {
        gboolean b = FALSE;
        if ((ok = caml_parser_get_bool (p, node, path, &b)))
          *out = b ? 1.0 : 0.0;
      }
      break;
    case CAML_OPT_ENUM:
      {
        int i;
        if ((ok = caml_parser_get_enum (p, node, path, spec->choices, &i)))
          *out = i;
      }
      break;
    }
  g_free (where);
  return ok;
}
