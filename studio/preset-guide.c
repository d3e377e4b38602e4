/* preset-guide.c — the presets' sections and measured figures. */
#include <json-glib/json-glib.h>

#include "preset-guide.h"
#include "presets.h"

#define MEASURED_PATH "/org/caml/Workbench/measured/measured.json"

static const char *const section_titles[CAML_PRESET_N_SECTIONS] = {
  [CAML_PRESET_SECTION_SURFACES] = "Surfaces and XOR (Fig. 15–16, Sec. 4.7.1)",
  [CAML_PRESET_SECTION_IMAGES] = "Images: CA-CNN, σ-maps, CA-RES (Fig. 17–20)",
  [CAML_PRESET_SECTION_TEXT] = "Text: CA-BSFE (Fig. 9–10)",
  [CAML_PRESET_SECTION_SEQUENCES] = "Sequences and attention (Fig. 12–13, Sec. 4.3–4.4)",
  [CAML_PRESET_SECTION_OTHER] = "Other",
};

const char *
caml_preset_section_title (CamlPresetSection section)
{
  g_return_val_if_fail (section < CAML_PRESET_N_SECTIONS, "Other");
  return section_titles[section];
}

/* The layers that read a sequence in order (or attend over it). */
static gboolean
is_sequence_layer (const char *name)
{
  static const char *const names[] = { "ca_rnn", "lstm", "gru", "attention", "ca_att" };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_strcmp0 (name, names[i]) == 0)
      return TRUE;
  return FALSE;
}

CamlPresetSection
caml_preset_section_of (const CamlExperiment *exp)
{
  for (int i = 0; i < exp->n_layers; i++)
    if (exp->layers[i].ops != NULL && is_sequence_layer (exp->layers[i].ops->name))
      return CAML_PRESET_SECTION_SEQUENCES;
  switch (exp->data.kind)
    {
    case CAML_DATA_SURFACE:
    case CAML_DATA_XOR:
      return CAML_PRESET_SECTION_SURFACES;
    case CAML_DATA_MNIST:
    case CAML_DATA_FASHION_MNIST:
    case CAML_DATA_IDX:
      return CAML_PRESET_SECTION_IMAGES;
    case CAML_DATA_SST:
    case CAML_DATA_IMDB:
    case CAML_DATA_TEXT:
      return CAML_PRESET_SECTION_TEXT;
    case CAML_DATA_RNN_SANITY:
      return CAML_PRESET_SECTION_SEQUENCES;
    default:
      return CAML_PRESET_SECTION_OTHER;
    }
}

char **
caml_presets_in_section (CamlPresetSection section)
{
  g_auto (GStrv) names = caml_presets_list ();
  g_autoptr (GStrvBuilder) out = g_strv_builder_new ();
  for (int i = 0; names[i] != NULL; i++)
    {
      CamlExperiment *exp = caml_presets_load (names[i], NULL);
      CamlPresetSection s = exp != NULL ? caml_preset_section_of (exp) : CAML_PRESET_SECTION_OTHER;
      if (s == section)
        g_strv_builder_add (out, names[i]);
      g_clear_pointer (&exp, caml_experiment_free);
    }
  return g_strv_builder_end (out);
}

void
caml_preset_measure_free (CamlPresetMeasure *m)
{
  if (m == NULL)
    return;
  g_free (m->metric);
  g_free (m->experiment);
  g_free (m->command);
  g_free (m->date);
  g_free (m);
}

static gboolean
fail (GError **error, const char *source, const char *where, const char *what)
{
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "%s: %s: %s", source, where, what);
  return FALSE;
}

/* A member of o: a string (required) or a number. */
static gboolean
get_string (JsonObject *o, const char *key, char **out, const char *source,
            const char *where, GError **error)
{
  JsonNode *n = json_object_get_member (o, key);
  g_autofree char *place = g_strdup_printf ("%s.%s", where, key);
  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
    return fail (error, source, place, n == NULL ? "missing" : "not a string");
  *out = json_node_dup_string (n);
  return TRUE;
}

static gboolean
get_number (JsonObject *o, const char *key, gboolean required, double *out,
            const char *source, const char *where, GError **error)
{
  JsonNode *n = json_object_get_member (o, key);
  g_autofree char *place = g_strdup_printf ("%s.%s", where, key);
  if (n == NULL || JSON_NODE_HOLDS_NULL (n))
    {
      *out = 0;
      return required ? fail (error, source, place, "missing") : TRUE;
    }
  GType type = JSON_NODE_HOLDS_VALUE (n) ? json_node_get_value_type (n) : G_TYPE_INVALID;
  if (type != G_TYPE_DOUBLE && type != G_TYPE_INT64)
    return fail (error, source, place, "not a number");
  *out = json_node_get_double (n);
  return TRUE;
}

static CamlPresetMeasure *
parse_measure (JsonNode *node, const char *source, const char *where, GError **error)
{
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      fail (error, source, where, "not an object");
      return NULL;
    }
  JsonObject *o = json_node_get_object (node);
  CamlPresetMeasure *m = g_new0 (CamlPresetMeasure, 1);
  double runs = 0, steps = 0;
  if (!get_string (o, "metric", &m->metric, source, where, error)
      || !get_number (o, "value", TRUE, &m->value, source, where, error)
      || !get_number (o, "sd", FALSE, &m->sd, source, where, error)
      || !get_number (o, "runs", FALSE, &runs, source, where, error)
      || !get_number (o, "steps", FALSE, &steps, source, where, error)
      || !get_string (o, "experiment", &m->experiment, source, where, error)
      || !get_string (o, "command", &m->command, source, where, error)
      || !get_string (o, "date", &m->date, source, where, error))
    {
      caml_preset_measure_free (m);
      return NULL;
    }
  m->runs = (int) runs;
  m->steps = (int) steps;
  return m;
}

GHashTable *
caml_preset_measures_parse (const char *data, gssize length, const char *source,
                            GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) local = NULL;
  if (!json_parser_load_from_data (parser, data, length, &local))
    {
      /* json-glib's message already says the line and column */
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "%s: %s", source, local->message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  JsonNode *presets = root != NULL && JSON_NODE_HOLDS_OBJECT (root)
                      ? json_object_get_member (json_node_get_object (root), "presets") : NULL;
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      fail (error, source, "the document", "not an object");
      return NULL;
    }
  if (presets == NULL || !JSON_NODE_HOLDS_OBJECT (presets))
    {
      fail (error, source, "presets", presets == NULL ? "missing" : "not an object");
      return NULL;
    }
  g_autoptr (GHashTable) table = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                        (GDestroyNotify) g_ptr_array_unref);
  JsonObject *o = json_node_get_object (presets);
  g_autoptr (GList) names = json_object_get_members (o);
  for (GList *l = names; l != NULL; l = l->next)
    {
      const char *name = l->data;
      JsonNode *list = json_object_get_member (o, name);
      g_autofree char *where = g_strdup_printf ("presets.%s", name);
      if (!JSON_NODE_HOLDS_ARRAY (list))
        {
          fail (error, source, where, "not a list");
          return NULL;
        }
      JsonArray *a = json_node_get_array (list);
      GPtrArray *measures = g_ptr_array_new_with_free_func ((GDestroyNotify) caml_preset_measure_free);
      g_hash_table_insert (table, g_strdup (name), measures);
      for (guint i = 0; i < json_array_get_length (a); i++)
        {
          g_autofree char *at = g_strdup_printf ("%s[%u]", where, i);
          CamlPresetMeasure *m = parse_measure (json_array_get_element (a, i), source, at, error);
          if (m == NULL)
            return NULL;
          g_ptr_array_add (measures, m);
        }
    }
  return g_steal_pointer (&table);
}

GHashTable *
caml_preset_measures_load (GError **error)
{
  g_autoptr (GBytes) bytes = g_resources_lookup_data (MEASURED_PATH,
                                                      G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
  if (bytes == NULL)
    return g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                  (GDestroyNotify) g_ptr_array_unref);
  gsize size = 0;
  const char *data = g_bytes_get_data (bytes, &size);
  return caml_preset_measures_parse (data, (gssize) size, "resources/presets-measured.json",
                                     error);
}

const char *
caml_preset_metric_label (const char *metric)
{
  static const struct { const char *metric, *label; } labels[] = {
    { "test_accuracy", "test accuracy" },
    { "test_mse", "test MSE" },
    { "train_mse", "training MSE" },
    { "test_loss", "test loss" },
    { "sigma_auc", "σ-map AUC" },
    { "pearson_x100", "Pearson r × 100" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (labels); i++)
    if (g_strcmp0 (metric, labels[i].metric) == 0)
      return labels[i].label;
  return metric;
}

char *
caml_preset_measured_text (GHashTable *measures, const char *name)
{
  GPtrArray *list = measures != NULL ? g_hash_table_lookup (measures, name) : NULL;
  if (list == NULL || list->len == 0)
    return g_strdup ("not measured yet");
  GString *text = g_string_new (NULL);
  for (guint i = 0; i < list->len; i++)
    {
      const CamlPresetMeasure *m = list->pdata[i];
      if (i > 0)
        g_string_append_c (text, '\n');
      /* Four significant figures: the tables of docs/reproduction.md. */
      g_string_append_printf (text, "measured: %.4g %s (%s", m->value,
                              caml_preset_metric_label (m->metric), m->command);
      if (m->steps > 0)
        g_string_append_printf (text, ", %d steps", m->steps);
      if (m->runs > 1)
        g_string_append_printf (text, ", mean of %d runs", m->runs);
      g_string_append_printf (text, ", %s)", m->date);
    }
  return g_string_free (text, FALSE);
}
