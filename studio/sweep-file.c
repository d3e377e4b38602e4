/* sweep-file.c — a sweep's plan read from and written to a sweep file
 * (sweep.h, docs/sweeps.md). Read with the engine's strict JSON reader
 * (caml-json.h): every error says FILE:LINE:COL: PATH, an inline
 * experiment's included. */
#include <string.h>

#include <glib/gstdio.h>

#include "presets.h"
#include "sweep-private.h"

/* ------------------------------------------------------------ reading */

/* A value of "values" or "set" as the command line's text: a number in its
 * shortest form that reads back (an integer beyond 64 bits as written), a
 * string as it is, true or false. NULL with an error for anything else. */
static char *
value_text (const CamlJsonDoc *doc, JsonNode *node, const char *path, GError **error)
{
  GType type = JSON_NODE_HOLDS_VALUE (node) ? json_node_get_value_type (node) : G_TYPE_NONE;
  if (type == G_TYPE_STRING)
    return g_strdup (json_node_get_string (node));
  if (type == G_TYPE_BOOLEAN)
    return g_strdup (json_node_get_boolean (node) ? "true" : "false");
  if (type == G_TYPE_INT64)
    {
      const char *wide = caml_json_doc_wide_literal (doc, path);
      return wide != NULL ? g_strdup (wide)
                          : g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (node));
    }
  if (type == G_TYPE_DOUBLE)
    {
      GString *s = g_string_new (NULL);
      caml_experiment_append_double (s, json_node_get_double (node));
      return g_string_free (s, FALSE);
    }
  caml_json_doc_fail (doc, error, path, FALSE,
                      "expected a number, a string or true/false, found %s",
                      caml_json_describe (node));
  return NULL;
}

/* The experiment the file names, inline or by file, or its preset. */
static CamlExperiment *
read_experiment (const CamlJsonDoc *doc, JsonObject *root, const char *path, char **preset,
                 char **source, GError **error)
{
  JsonNode *given = json_object_get_member (root, "experiment");
  JsonNode *named = json_object_get_member (root, "preset");
  if (named != NULL)
    {
      if (!JSON_NODE_HOLDS_VALUE (named) || json_node_get_value_type (named) != G_TYPE_STRING)
        {
          caml_json_doc_fail (doc, error, "preset", FALSE, "expected a preset's name, found %s",
                              caml_json_describe (named));
          return NULL;
        }
      *preset = g_strdup (json_node_get_string (named));
      if (!caml_presets_exists (*preset))
        {
          g_autoptr (GError) local = NULL;
          caml_presets_load (*preset, &local);   /* the message lists the presets */
          caml_json_doc_fail (doc, error, "preset", FALSE, "%s", local->message);
          return NULL;
        }
    }
  g_autofree char *dir = g_path_get_dirname (path);
  if (given != NULL && JSON_NODE_HOLDS_OBJECT (given))
    {
      g_autofree char *name = caml_experiment_name_for_path (path);
      g_autofree char *base_dir = g_canonicalize_filename (dir, NULL);
      *source = g_strdup (path);
      return caml_experiment_load_json (doc, given, "experiment", name, base_dir, error);
    }
  if (given != NULL)
    {
      if (!JSON_NODE_HOLDS_VALUE (given) || json_node_get_value_type (given) != G_TYPE_STRING
          || *json_node_get_string (given) == '\0')
        {
          caml_json_doc_fail (doc, error, "experiment", FALSE,
                              "expected an experiment file's name or an experiment object, "
                              "found %s", JSON_NODE_HOLDS_VALUE (given)
                              && json_node_get_value_type (given) == G_TYPE_STRING
                              ? "an empty string" : caml_json_describe (given));
          return NULL;
        }
      const char *file = json_node_get_string (given);
      /* relative to the sweep file's folder */
      *source = g_path_is_absolute (file) || g_str_equal (dir, ".")
                ? g_strdup (file) : g_build_filename (dir, file, NULL);
      return caml_experiment_load_file (*source, error);
    }
  if (named == NULL)
    {
      caml_json_doc_fail (doc, error, "", FALSE,
                          "give the experiment: \"experiment\" (a file or an experiment "
                          "object) or \"preset\"");
      return NULL;
    }
  *source = g_strdup_printf ("preset %s", *preset);
  return caml_presets_load (*preset, error);
}

static gboolean
read_axis (const CamlJsonDoc *doc, CamlSweepPlan *plan, JsonNode *node, int a, GError **error)
{
  static const char *const keys[] = { "key", "values", NULL };
  g_autofree char *path = g_strdup_printf ("grid[%d]", a);
  g_autofree char *key_path = g_strdup_printf ("grid[%d].key", a);
  g_autofree char *values_path = g_strdup_printf ("grid[%d].values", a);
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return caml_json_doc_fail (doc, error, path, FALSE,
                               "expected an axis { \"key\": …, \"values\": […] }, found %s",
                               caml_json_describe (node));
  JsonObject *obj = json_node_get_object (node);
  if (!caml_json_doc_check_keys (doc, obj, path, keys, error))
    return FALSE;
  JsonNode *key = json_object_get_member (obj, "key");
  JsonNode *values = json_object_get_member (obj, "values");
  if (key == NULL)
    return caml_json_doc_fail (doc, error, key_path, FALSE,
                               "missing (the layer option or setting to vary)");
  if (!JSON_NODE_HOLDS_VALUE (key) || json_node_get_value_type (key) != G_TYPE_STRING
      || *json_node_get_string (key) == '\0')
    return caml_json_doc_fail (doc, error, key_path, FALSE,
                               "expected a key (\"kernel\", \"0.units\", \"optimizer.lr\"), "
                               "found %s", JSON_NODE_HOLDS_VALUE (key)
                               && json_node_get_value_type (key) == G_TYPE_STRING
                               ? "an empty string" : caml_json_describe (key));
  if (values == NULL)
    return caml_json_doc_fail (doc, error, values_path, FALSE, "missing (its values)");
  if (!JSON_NODE_HOLDS_ARRAY (values) || json_array_get_length (json_node_get_array (values)) == 0)
    return caml_json_doc_fail (doc, error, values_path, FALSE,
                               "expected an array of one or more values, found %s",
                               JSON_NODE_HOLDS_ARRAY (values) ? "an empty array"
                                                              : caml_json_describe (values));
  JsonArray *array = json_node_get_array (values);
  int n = (int) json_array_get_length (array);
  g_autoptr (GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  for (int v = 0; v < n; v++)
    {
      g_autofree char *where = g_strdup_printf ("grid[%d].values[%d]", a, v);
      char *text = value_text (doc, json_array_get_element (array, v), where, error);
      if (text == NULL)
        return FALSE;
      g_ptr_array_add (texts, text);
    }
  return caml_sweep_plan_add_axis (plan, json_node_get_string (key),
                                   (const char *const *) texts->pdata, n, error);
}

static gboolean
read_plan (const CamlJsonDoc *doc, CamlSweepPlan *plan, JsonObject *root, GError **error)
{
  JsonNode *grid = json_object_get_member (root, "grid");
  if (!JSON_NODE_HOLDS_ARRAY (grid))
    return caml_json_doc_fail (doc, error, "grid", FALSE,
                               "expected an array of one or two axes, found %s",
                               caml_json_describe (grid));
  JsonArray *axes = json_node_get_array (grid);
  guint n_axes = json_array_get_length (axes);
  if (n_axes < 1 || n_axes > CAML_SWEEP_MAX_AXES)
    return caml_json_doc_fail (doc, error, "grid", FALSE,
                               "expected one or two axes, found %u", n_axes);
  for (guint a = 0; a < n_axes; a++)
    if (!read_axis (doc, plan, json_array_get_element (axes, a), (int) a, error))
      return FALSE;

  JsonNode *set = json_object_get_member (root, "set");
  if (set != NULL && !JSON_NODE_HOLDS_OBJECT (set))
    return caml_json_doc_fail (doc, error, "set", FALSE,
                               "expected an object of settings { \"KEY\": VALUE, … }, found %s",
                               caml_json_describe (set));
  g_autoptr (GPtrArray) fixed = g_ptr_array_new_with_free_func (g_free);
  GList *members = set != NULL ? json_object_get_members (json_node_get_object (set)) : NULL;
  gboolean ok = TRUE;
  for (GList *l = members; l != NULL && ok; l = l->next)
    {
      const char *key = l->data;
      g_autofree char *where = g_strconcat ("set.", key, NULL);
      g_autofree char *text = value_text (doc, json_object_get_member (json_node_get_object (set),
                                                                        key), where, error);
      if (!(ok = text != NULL))
        break;
      g_ptr_array_add (fixed, g_strdup_printf ("%s=%s", key, text));
    }
  g_list_free (members);
  if (!ok)
    return FALSE;
  if (fixed->len > 0)
    {
      g_ptr_array_add (fixed, NULL);
      plan->fixed = (char **) g_ptr_array_steal (fixed, NULL);
    }

  JsonNode *baselines = json_object_get_member (root, "baselines");
  if (baselines != NULL)
    {
      if (!JSON_NODE_HOLDS_VALUE (baselines)
          || json_node_get_value_type (baselines) != G_TYPE_BOOLEAN)
        return caml_json_doc_fail (doc, error, "baselines", FALSE,
                                   "expected true or false, found %s",
                                   caml_json_describe (baselines));
      plan->baselines = json_node_get_boolean (baselines);
    }
  return caml_sweep_plan_check_in (plan, doc, error);
}

CamlSweepPlan *
caml_sweep_plan_load (const char *path, GError **error)
{
  static const char *const keys[] = { "experiment", "preset", "grid", "set", "baselines", NULL };
  g_autoptr (CamlJsonDoc) doc = caml_json_doc_new_from_file (path, error);
  if (doc == NULL)
    return NULL;
  JsonNode *root = caml_json_doc_root (doc);
  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      caml_json_doc_fail (doc, error, "", FALSE, "expected a sweep object at the top level, "
                          "found %s", caml_json_describe (root));
      return NULL;
    }
  JsonObject *obj = json_node_get_object (root);
  if (!caml_json_doc_check_keys (doc, obj, "", keys, error))
    return NULL;
  if (!json_object_has_member (obj, "grid"))
    {
      caml_json_doc_fail (doc, error, "grid", FALSE, "missing (the axes of the sweep)");
      return NULL;
    }
  g_autofree char *preset = NULL, *source = NULL;
  CamlExperiment *exp = read_experiment (doc, obj, path, &preset, &source, error);
  if (exp == NULL)
    return NULL;
  CamlSweepPlan *plan = caml_sweep_plan_new (exp, preset, source);
  if (!read_plan (doc, plan, obj, error))
    g_clear_pointer (&plan, caml_sweep_plan_free);
  return plan;
}

gboolean
caml_sweep_file_is (const char *path)
{
  /* never a pipe or a device, which reading would use up */
  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return FALSE;
  g_autoptr (CamlJsonDoc) doc = caml_json_doc_new_from_file (path, NULL);
  JsonNode *root = doc != NULL ? caml_json_doc_root (doc) : NULL;
  return root != NULL && JSON_NODE_HOLDS_OBJECT (root)
         && json_object_has_member (json_node_get_object (root), "grid");
}

/* ------------------------------------------------------------ writing */

static void
append_string (GString *s, const char *text)
{
  g_autoptr (JsonNode) node = json_node_init_string (json_node_alloc (), text);
  g_autofree char *quoted = json_to_string (node, FALSE);
  g_string_append (s, quoted);
}

/* text as the JSON value that reads back as it (value_text): a number or
 * true/false when it is written as such, else a string. */
static void
append_value (GString *s, const char *text)
{
  if (g_str_equal (text, "true") || g_str_equal (text, "false"))
    {
      g_string_append (s, text);
      return;
    }
  g_autoptr (CamlJsonDoc) doc = caml_json_doc_new (text, -1, "value", NULL);
  JsonNode *node = doc != NULL ? caml_json_doc_root (doc) : NULL;
  GType type = node != NULL && JSON_NODE_HOLDS_VALUE (node) ? json_node_get_value_type (node)
                                                            : G_TYPE_NONE;
  g_autofree char *back = type == G_TYPE_INT64 || type == G_TYPE_DOUBLE
                          ? value_text (doc, node, "", NULL) : NULL;
  if (back != NULL && g_str_equal (back, text))
    g_string_append (s, text);
  else
    append_string (s, text);
}

char *
caml_sweep_plan_to_json (const CamlSweepPlan *plan)
{
  GString *s = g_string_new ("{\n");
  if (plan->preset != NULL)
    {
      g_string_append (s, "  \"preset\": ");
      append_string (s, plan->preset);
      g_string_append (s, ",\n");
    }
  /* the experiment as its writer spells it, indented one level */
  g_autofree char *exp = caml_experiment_to_json (plan->exp);
  g_strchomp (exp);
  g_auto (GStrv) lines = g_strsplit (exp, "\n", -1);
  g_string_append (s, "  \"experiment\": ");
  for (int i = 0; lines[i] != NULL; i++)
    g_string_append_printf (s, "%s%s", i > 0 ? "\n  " : "", lines[i]);
  g_string_append (s, ",\n  \"grid\": [");
  for (int a = 0; a < plan->n_axes; a++)
    {
      g_string_append_printf (s, "%s\n    { \"key\": ", a > 0 ? "," : "");
      append_string (s, plan->axes[a].key);
      g_string_append (s, ", \"values\": [");
      for (int v = 0; v < plan->axes[a].n_values; v++)
        {
          if (v > 0)
            g_string_append (s, ", ");
          append_value (s, plan->axes[a].values[v]);
        }
      g_string_append (s, "] }");
    }
  g_string_append (s, "\n  ],\n");
  /* the fixed list, each key once (a key given twice had one value) */
  g_autoptr (GPtrArray) written = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; plan->fixed != NULL && plan->fixed[i] != NULL; i++)
    {
      char *key = caml_sweep_assignment_key (plan->fixed[i]);
      if (g_ptr_array_find_with_equal_func (written, key, g_str_equal, NULL))
        {
          g_free (key);
          continue;
        }
      g_string_append (s, written->len == 0 ? "  \"set\": { " : ", ");
      g_ptr_array_add (written, key);
      append_string (s, key);
      g_string_append (s, ": ");
      const char *eq = strchr (plan->fixed[i], '=');
      append_value (s, eq != NULL ? eq + 1 : "");
    }
  if (written->len > 0)
    g_string_append (s, " },\n");
  g_string_append_printf (s, "  \"baselines\": %s\n}\n", plan->baselines ? "true" : "false");
  return g_string_free (s, FALSE);
}

gboolean
caml_sweep_plan_save (const CamlSweepPlan *plan, const char *path, GError **error)
{
  g_autofree char *json = caml_sweep_plan_to_json (plan);
  return caml_file_replace (path, json, strlen (json), error);
}
