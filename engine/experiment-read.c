/* experiment-read.c — parse and validate an experiment file.
 *
 * Every object's keys are checked against what it may hold, so a typo is an
 * error that names the key and its path ("surface.json: model[1].unitz:
 * unknown key …"). Layer options are never spelled out here: they come from
 * the registry's CamlOptionSpec tables at run time, so a new layer type needs
 * no parser change. */
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "average.h"
#include "caml-private.h"
#include "experiment-private.h"
#include "json-check.h"

/* --- data */

/* The required paths of a data section (data.idx: four IDX files,
 * data.text: the train and test text<TAB>label files), all or nothing into
 * dst. Relative paths are resolved against the experiment file's directory
 * (p->base_dir) when there is one. */
static gboolean
parse_paths (CamlParser *p, JsonNode *node, const char *section, const char *const *keys,
             int n, const char *what, char **dst)
{
  JsonObject *obj = NULL;
  if (!caml_parser_expect_object (p, node, section, &obj)
      || !caml_parser_check_keys (p, obj, section, keys, n, NULL))
    return FALSE;
  char *paths[4] = { NULL };
  g_assert (n <= (int) G_N_ELEMENTS (paths));
  gboolean ok = TRUE;
  for (int i = 0; i < n && ok; i++)
    {
      char *where = caml_parser_child_path (section, keys[i]);
      JsonNode *m = json_object_get_member (obj, keys[i]);
      const char *s = NULL;
      if (m == NULL)
        ok = caml_parser_fail (p, CAML_ERROR_INVALID, where, "missing (%s)", what);
      else if ((ok = caml_parser_get_string (p, m, where, &s)) && *s == '\0')
        ok = caml_parser_fail (p, CAML_ERROR_INVALID, where, "the path is empty");
      else if (ok)
        paths[i] = p->base_dir != NULL && !g_path_is_absolute (s)
                     ? g_canonicalize_filename (s, p->base_dir) : g_strdup (s);
      g_free (where);
    }
  for (int i = 0; i < n; i++)
    {
      if (ok)
        {
          g_free (dst[i]);
          dst[i] = paths[i];
        }
      else
        g_free (paths[i]);
    }
  return ok;
}

static gboolean
parse_idx (CamlParser *p, JsonNode *node, CamlDataConfig *data)
{
  return parse_paths (p, node, "data.idx", caml_idx_keys, G_N_ELEMENTS (caml_idx_keys),
                      "the path of an IDX file", data->idx_paths);
}

static gboolean
parse_text_paths (CamlParser *p, JsonNode *node, CamlDataConfig *data)
{
  return parse_paths (p, node, "data.text", caml_text_keys, G_N_ELEMENTS (caml_text_keys),
                      "the path of a text<TAB>label file", data->text_paths);
}

/* The keys every text kind takes. */
static gboolean
parse_text_options (CamlParser *p, JsonObject *obj, CamlDataConfig *data)
{
  JsonNode *m;
  if ((m = json_object_get_member (obj, "train_limit")) != NULL
      && !caml_parser_get_int32 (p, m, "data.train_limit", 0, G_MAXINT, &data->train_limit))
    return FALSE;
  if ((m = json_object_get_member (obj, "test_limit")) != NULL
      && !caml_parser_get_int32 (p, m, "data.test_limit", 0, G_MAXINT, &data->test_limit))
    return FALSE;
  if ((m = json_object_get_member (obj, "max_tokens")) != NULL
      && !caml_parser_get_int32 (p, m, "data.max_tokens", 0, 1000000, &data->max_tokens))
    return FALSE;
  if ((m = json_object_get_member (obj, "unique_tokens")) != NULL
      && !caml_parser_get_bool (p, m, "data.unique_tokens", &data->unique_tokens))
    return FALSE;
  if ((m = json_object_get_member (obj, "ngrams")) != NULL
      && !caml_parser_get_int32 (p, m, "data.ngrams", 1, 3, &data->ngrams))
    return FALSE;
  if ((m = json_object_get_member (obj, "embeddings")) != NULL)
    {
      const char *s = NULL;
      if (JSON_NODE_HOLDS_NULL (m))
        g_clear_pointer (&data->embeddings, g_free);
      else if (!caml_parser_get_string (p, m, "data.embeddings", &s))
        return FALSE;
      else if (*s == '\0')
        return caml_parser_fail (p, CAML_ERROR_INVALID, "data.embeddings",
                                 "empty (a path, \"wink\", or null)");
      else
        {
          g_free (data->embeddings);
          data->embeddings = g_str_equal (s, "wink") || p->base_dir == NULL
                             || g_path_is_absolute (s)
                             ? g_strdup (s) : g_canonicalize_filename (s, p->base_dir);
        }
    }
  return TRUE;
}

static gboolean
parse_split_seed (CamlParser *p, JsonObject *obj, CamlDataConfig *data)
{
  JsonNode *m = json_object_get_member (obj, "split_seed");
  if (m != NULL)
    {
      gint64 seed = 0;
      if (!caml_parser_get_int (p, m, "data.split_seed", 0, G_MAXINT64, &seed))
        return FALSE;
      data->has_split_seed = TRUE;
      data->split_seed = (guint64) seed;
    }
  return TRUE;
}

static gboolean
parse_data (CamlParser *p, JsonNode *node, CamlDataConfig *data)
{
  static const char *const text_data_keys[] = {
    "builtin", "text", "train_limit", "test_limit", "max_tokens", "embeddings",
    "validation_fraction", "split_seed", "unique_tokens", "ngrams"
  };
  static const char *const imdb_keys[] = {
    "builtin", "train_limit", "test_limit", "max_tokens", "embeddings", "split", "split_seed",
    "validation_fraction", "unique_tokens", "ngrams"
  };
  static const char *const surface_keys[] = { "builtin", "grid", "train_fraction", "noise",
                                              "split_seed" };
  static const char *const xor_keys[] = { "builtin" };
  static const char *const image_keys[] = {
    "builtin", "train_limit", "test_limit", "validation_fraction", "split_seed"
  };
  static const char *const idx_data_keys[] = {
    "idx", "train_limit", "test_limit", "validation_fraction", "split_seed"
  };
  JsonObject *obj = NULL;
  JsonNode *m;

  if (!caml_parser_expect_object (p, node, "data", &obj))
    return FALSE;
  gboolean has_builtin = json_object_has_member (obj, "builtin");
  gboolean has_idx = json_object_has_member (obj, "idx");
  gboolean has_text = json_object_has_member (obj, "text");
  if (has_builtin + has_idx + has_text > 1)
    return caml_parser_fail (p, CAML_ERROR_INVALID, "data",
                             "give one of \"builtin\", \"idx\" and \"text\", not several");
  if (!has_builtin && !has_idx && !has_text)
    {
      char *kinds = caml_parser_join_names (caml_builtin_names, -1);
      caml_parser_fail (p, CAML_ERROR_INVALID, "data.builtin",
                        "missing (the built-in data set: one of %s; or \"idx\" with the "
                        "paths of four IDX files; or \"text\" with the paths of two "
                        "text<TAB>label files)",
                        kinds);
      g_free (kinds);
      return FALSE;
    }
  if ((m = json_object_get_member (obj, "validation_fraction")) != NULL
      && !caml_parser_get_ranged (p, m, "data.validation_fraction", 0, FALSE, 1, TRUE,
                                  "in [0, 1)",
                                  &data->validation_fraction))
    return FALSE;
  if (has_idx)
    {
      if (!caml_parser_check_keys (p, obj, "data", idx_data_keys, G_N_ELEMENTS (idx_data_keys),
                                   NULL)
          || !parse_idx (p, json_object_get_member (obj, "idx"), data))
        return FALSE;
      data->kind = CAML_DATA_IDX;
    }
  else if (has_text)
    {
      if (!parse_text_paths (p, json_object_get_member (obj, "text"), data))
        return FALSE;
      data->kind = CAML_DATA_TEXT;
    }
  else
    {
      int kind;
      if (!caml_parser_get_enum (p, json_object_get_member (obj, "builtin"), "data.builtin",
                                 caml_builtin_names, &kind))
        return FALSE;
      data->kind = kind;
    }

  switch (data->kind)
    {
    case CAML_DATA_XOR:
      return caml_parser_check_keys (p, obj, "data", xor_keys, G_N_ELEMENTS (xor_keys), NULL);
    case CAML_DATA_MNIST:
    case CAML_DATA_FASHION_MNIST:
      if (!caml_parser_check_keys (p, obj, "data", image_keys, G_N_ELEMENTS (image_keys), NULL))
        return FALSE;
      G_GNUC_FALLTHROUGH;
    case CAML_DATA_IDX:
      if ((m = json_object_get_member (obj, "train_limit")) != NULL
          && !caml_parser_get_int32 (p, m, "data.train_limit", 0, G_MAXINT, &data->train_limit))
        return FALSE;
      if ((m = json_object_get_member (obj, "test_limit")) != NULL
          && !caml_parser_get_int32 (p, m, "data.test_limit", 0, G_MAXINT, &data->test_limit))
        return FALSE;
      return parse_split_seed (p, obj, data);
    case CAML_DATA_SST:
    case CAML_DATA_RNN_SANITY:
    case CAML_DATA_TEXT:
      return caml_parser_check_keys (p, obj, "data", text_data_keys,
                                     G_N_ELEMENTS (text_data_keys), NULL)
          && parse_text_options (p, obj, data) && parse_split_seed (p, obj, data);
    case CAML_DATA_IMDB:
      if (!caml_parser_check_keys (p, obj, "data", imdb_keys, G_N_ELEMENTS (imdb_keys), NULL)
          || !parse_text_options (p, obj, data))
        return FALSE;
      if ((m = json_object_get_member (obj, "split")) != NULL)
        {
          int split;
          if (!caml_parser_get_enum (p, m, "data.split", caml_data_split_names, &split))
            return FALSE;
          data->split = split;
        }
      return parse_split_seed (p, obj, data);
    case CAML_DATA_SURFACE:
    case CAML_N_DATA_KINDS:
      break;
    }

  if (!caml_parser_check_keys (p, obj, "data", surface_keys, G_N_ELEMENTS (surface_keys), NULL))
    return FALSE;
  if ((m = json_object_get_member (obj, "grid")) != NULL
      && !caml_parser_get_int32 (p, m, "data.grid", 2, CAML_MAX_GRID, &data->grid))
    return FALSE;
  if ((m = json_object_get_member (obj, "train_fraction")) != NULL
      && !caml_parser_get_ranged (p, m, "data.train_fraction", 0, TRUE, 1, TRUE,
                                  "in (0, 1)", &data->train_fraction))
    return FALSE;
  if ((m = json_object_get_member (obj, "noise")) != NULL
      && !caml_parser_get_ranged (p, m, "data.noise", 0, FALSE, CAML_MAX_NOISE, FALSE,
                                  "in [0, " G_STRINGIFY (CAML_MAX_NOISE) "]", &data->noise))
    return FALSE;
  return parse_split_seed (p, obj, data);
}

/* --- model */

static gboolean
parse_layer (CamlParser *p, JsonNode *node, const char *path, CamlLayerSpec *spec)
{
  JsonObject *obj = NULL;
  if (!caml_parser_expect_object (p, node, path, &obj))
    return FALSE;

  char *type_path = caml_parser_child_path (path, "layer");
  JsonNode *type_node = json_object_get_member (obj, "layer");
  const char *type = NULL;
  gboolean ok;

  if (type_node == NULL)
    ok = caml_parser_fail (p, CAML_ERROR_INVALID, type_path, "missing (the layer type)");
  else
    ok = caml_parser_get_string (p, type_node, type_path, &type);
  if (ok && (spec->ops = caml_layer_lookup (type)) == NULL)
    {
      int n_types;
      const CamlLayerOps *const *types = caml_layer_registry (&n_types);
      GString *names = g_string_new (NULL);
      for (int i = 0; i < n_types; i++)
        g_string_append_printf (names, "%s%s", i > 0 ? ", " : "", types[i]->name);
      ok = caml_parser_fail (p, CAML_ERROR_INVALID, type_path,
                             "unknown layer \"%s\" (expected one of %s)", type, names->str);
      g_string_free (names, TRUE);
    }
  g_free (type_path);
  if (!ok)
    return FALSE;

  const CamlLayerOps *ops = spec->ops;
  g_assert (ops->n_options <= CAML_MAX_OPTIONS);
  caml_layer_ops_default_options (ops, spec->opt);

  /* Allowed keys: "layer" and the registry's option keys. Errors list the
   * options only — the type is already known. */
  const char *allowed[CAML_MAX_OPTIONS + 1];
  const char *listed[CAML_MAX_OPTIONS + 2];
  allowed[0] = "layer";
  for (int i = 0; i < ops->n_options; i++)
    allowed[i + 1] = listed[i] = ops->options[i].key;
  listed[ops->n_options] = ops->n_options == 0 ? "layer (no options)" : NULL;
  listed[ops->n_options + 1] = NULL;
  if (!caml_parser_check_keys (p, obj, path, allowed, ops->n_options + 1, listed))
    return FALSE;

  for (int i = 0; i < ops->n_options; i++)
    {
      JsonNode *m = json_object_get_member (obj, ops->options[i].key);
      if (m == NULL)
        continue;
      char *where = caml_parser_child_path (path, ops->options[i].key);
      ok = caml_parser_get_option (p, &ops->options[i], m, where, &spec->opt[i]);
      g_free (where);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

static gboolean
parse_model (CamlParser *p, JsonNode *node, CamlExperiment *exp)
{
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return caml_parser_fail (p, CAML_ERROR_INVALID, "model",
                             "expected an array of layers, found %s",
                             caml_json_describe (node));
  JsonArray *array = json_node_get_array (node);
  int n = json_array_get_length (array);
  /* An empty model reads (the workbench saves one being assembled); it
   * cannot be built (caml_experiment_build_model says so). */
  CamlLayerSpec *layers = g_new0 (CamlLayerSpec, MAX (n, 1));
  for (int i = 0; i < n; i++)
    {
      char *path = g_strdup_printf ("model[%d]", i);
      gboolean ok = parse_layer (p, json_array_get_element (array, i), path, &layers[i]);
      g_free (path);
      if (!ok)
        {
          g_free (layers);
          return FALSE;
        }
    }
  g_free (exp->layers);
  exp->layers = layers;
  exp->n_layers = n;
  return TRUE;
}

/* --- optimizer */

static gboolean
parse_optimizer_field (CamlParser *p, CamlOptimizerField f, JsonNode *m, const char *path,
                       CamlOptimizerConfig *config)
{
  switch (f)
    {
    case CAML_FIELD_LR:
      return caml_parser_get_ranged (p, m, path, 0, TRUE, INFINITY, FALSE, "> 0", &config->lr);
    case CAML_FIELD_EM_STEPS:
      return caml_parser_get_int32 (p, m, path, 0, G_MAXINT, &config->em_steps);
    case CAML_FIELD_MOMENTUM:
      return caml_parser_get_ranged (p, m, path, 0, FALSE, 1, TRUE, "in [0, 1)",
                                     &config->momentum);
    case CAML_FIELD_BETA1:
      return caml_parser_get_ranged (p, m, path, 0, FALSE, 1, TRUE, "in [0, 1)", &config->beta1);
    case CAML_FIELD_BETA2:
      return caml_parser_get_ranged (p, m, path, 0, FALSE, 1, TRUE, "in [0, 1)", &config->beta2);
    case CAML_FIELD_EPS:
      return caml_parser_get_ranged (p, m, path, 0, TRUE, INFINITY, FALSE, "> 0", &config->eps);
    case CAML_FIELD_INITIAL_ACCUMULATOR:
      return caml_parser_get_ranged (p, m, path, 0, FALSE, INFINITY, FALSE, ">= 0",
                                     &config->initial_accumulator);
    case CAML_FIELD_WEIGHT_DECAY:
      if (!caml_parser_get_ranged (p, m, path, 0, FALSE, INFINITY, FALSE, ">= 0",
                                   &config->weight_decay))
        return FALSE;
      config->weight_decay += 0.0;   /* -0 reads as 0 (and shows as "0") */
      return TRUE;
    case CAML_N_OPTIM_FIELDS:
      break;
    }
  g_assert_not_reached ();
}

static gboolean
parse_optimizer (CamlParser *p, JsonNode *node, CamlOptimizerConfig *config)
{
  JsonObject *obj = NULL;
  if (!caml_parser_expect_object (p, node, "optimizer", &obj))
    return FALSE;

  int kind = CAML_OPTIM_ADAM;
  JsonNode *m = json_object_get_member (obj, "type");
  if (m != NULL && !caml_parser_get_enum (p, m, "optimizer.type", caml_optimizer_names, &kind))
    return FALSE;
  caml_optimizer_config_defaults (config, kind);
  config->lr = CAML_DEFAULT_LR;

  const CamlOptimizerField *fields = caml_optimizer_fields[kind];
  const char *allowed[CAML_N_OPTIM_FIELDS + 2] = { "type" };
  int n = 1;
  for (; fields[n - 1] != CAML_N_OPTIM_FIELDS; n++)
    allowed[n] = caml_optimizer_field_keys[fields[n - 1]];
  allowed[n] = NULL;
  if (!caml_parser_check_keys (p, obj, "optimizer", allowed, n, NULL))
    return FALSE;

  for (int i = 0; fields[i] != CAML_N_OPTIM_FIELDS; i++)
    {
      const char *key = caml_optimizer_field_keys[fields[i]];
      if ((m = json_object_get_member (obj, key)) == NULL)
        continue;
      char *path = caml_parser_child_path ("optimizer", key);
      gboolean ok = parse_optimizer_field (p, fields[i], m, path, config);
      g_free (path);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

/* --- one setting, from a command line (caml_experiment_set_setting) */

/* training.steps, training.batch_size or seed (path) from m, each with its
 * one range, for the file and the command line alike; exp is changed only
 * when it reads. */
static gboolean
parse_whole_setting (CamlParser *p, JsonNode *m, const char *path, CamlExperiment *exp)
{
  if (g_str_equal (path, "training.steps"))
    return caml_parser_get_int32 (p, m, path, 1, CAML_MAX_STEPS, &exp->steps);
  if (g_str_equal (path, "training.batch_size"))
    return caml_parser_get_int32 (p, m, path, 0, G_MAXINT, &exp->batch_size);
  g_assert (g_str_equal (path, "seed"));
  gint64 seed;
  if (!caml_parser_get_int (p, m, path, 0, G_MAXINT64, &seed))
    return FALSE;
  exp->seed = (guint64) seed;
  return TRUE;
}

/* text as the JSON value a file would hold: a whole number in decimal, any
 * other decimal number, or NULL (strtod would also take "0x10", "inf" and
 * "nan"). */
static JsonNode *
setting_node (const char *text)
{
  gint64 whole;
  if (g_ascii_string_to_signed (text, 10, G_MININT64, G_MAXINT64, &whole, NULL))
    return json_node_init_int (json_node_alloc (), whole);
  char *end = NULL;
  double v = g_ascii_strtod (text, &end);
  if (end == text || *end != '\0' || strpbrk (text, "xXnN") != NULL
      || g_ascii_isspace (*text))
    return NULL;
  return json_node_init_double (json_node_alloc (), v);
}

gboolean
caml_experiment_check_setting (const CamlExperiment *exp, const char *path, GError **error)
{
  CamlParser p = { .source = NULL, .error = error };   /* "PATH: problem" */
  if (!g_strv_contains (caml_experiment_settings, path))
    {
      g_autofree char *names = caml_parser_join_names (caml_experiment_settings, -1);
      return caml_parser_fail (&p, CAML_ERROR_INVALID, path, "not a setting (one of %s)", names);
    }
  int field = caml_experiment_optimizer_field (exp, path);
  if (g_str_has_prefix (path, "optimizer.") && field < 0)
    {
      GString *has = g_string_new ("type");
      const CamlOptimizerField *fields = caml_optimizer_fields[exp->optimizer.kind];
      for (int i = 0; fields[i] != CAML_N_OPTIM_FIELDS; i++)
        g_string_append_printf (has, ", %s", caml_optimizer_field_keys[fields[i]]);
      caml_parser_fail (&p, CAML_ERROR_INVALID, path, "the %s optimizer has no %s (it has %s)",
                        caml_optimizer_names[exp->optimizer.kind],
                        path + strlen ("optimizer."), has->str);
      g_string_free (has, TRUE);
      return FALSE;
    }
  return TRUE;
}

gboolean
caml_experiment_set_setting (CamlExperiment *exp, const char *path, const char *text,
                             GError **error)
{
  CamlParser p = { .source = NULL, .error = error };   /* "PATH: problem" */
  if (!caml_experiment_check_setting (exp, path, error))
    return FALSE;
  int field = caml_experiment_optimizer_field (exp, path);
  JsonNode *node = setting_node (text);
  if (node == NULL)
    return caml_parser_fail (&p, CAML_ERROR_INVALID, path, "\"%s\" is not a number", text);
  gboolean ok;
  if (field >= 0)
    {
      CamlOptimizerConfig config = exp->optimizer;
      if ((ok = parse_optimizer_field (&p, field, node, path, &config)))
        exp->optimizer = config;
    }
  else
    ok = parse_whole_setting (&p, node, path, exp);
  json_node_unref (node);
  return ok;
}

/* --- training, plot */

static gboolean
parse_training (CamlParser *p, JsonNode *node, CamlExperiment *exp)
{
  static const char *const keys[] = { "steps", "batch_size", "eval_every", "average_decay" };
  JsonObject *obj = NULL;
  JsonNode *m;
  if (!caml_parser_expect_object (p, node, "training", &obj)
      || !caml_parser_check_keys (p, obj, "training", keys, G_N_ELEMENTS (keys), NULL))
    return FALSE;
  if ((m = json_object_get_member (obj, "steps")) != NULL
      && !parse_whole_setting (p, m, "training.steps", exp))
    return FALSE;
  if ((m = json_object_get_member (obj, "batch_size")) != NULL
      && !parse_whole_setting (p, m, "training.batch_size", exp))
    return FALSE;
  if ((m = json_object_get_member (obj, "eval_every")) != NULL
      && !caml_parser_get_int32 (p, m, "training.eval_every", 1, CAML_MAX_STEPS,
                                 &exp->eval_every))
    return FALSE;
  if ((m = json_object_get_member (obj, "average_decay")) != NULL
      && !caml_parser_get_ranged (p, m, "training.average_decay", 0, FALSE, 1, TRUE, "in [0, 1)",
                                  &exp->average_decay))
    return FALSE;
  /* The average's decay ramps up as (1 + t) / (10 + t): one it reaches
   * only after more steps than a run can have would never apply. */
  if (exp->average_decay > 0 && caml_average_ramp_end (exp->average_decay) > CAML_MAX_STEPS)
    {
      GString *v = g_string_new (NULL);
      caml_experiment_append_double (v, exp->average_decay);
      caml_parser_fail (p, CAML_ERROR_INVALID, "training.average_decay",
                        "%s is too close to 1: the average reaches its decay only after "
                        "(10 d − 1) / (1 − d) steps, more than the %d a run can have, so it would "
                        "never apply (must be at most 0.999999991)", v->str, CAML_MAX_STEPS);
      g_string_free (v, TRUE);
      return FALSE;
    }
  return TRUE;
}

/* The narrowest side of plot.domain. */
#define PLOT_DOMAIN_MIN_SPAN 1e-150

static gboolean
parse_plot (CamlParser *p, JsonNode *node, double *domain)
{
  static const char *const keys[] = { "domain" };
  JsonObject *obj = NULL;
  if (!caml_parser_expect_object (p, node, "plot", &obj)
      || !caml_parser_check_keys (p, obj, "plot", keys, G_N_ELEMENTS (keys), NULL))
    return FALSE;
  JsonNode *m = json_object_get_member (obj, "domain");
  if (m == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (m))
    return caml_parser_fail (p, CAML_ERROR_INVALID, "plot.domain",
                             "expected an array [x0, x1, y0, y1], found %s",
                             caml_json_describe (m));
  guint length = json_array_get_length (json_node_get_array (m));
  if (length != 4)
    return caml_parser_fail (p, CAML_ERROR_INVALID, "plot.domain",
                             "expected 4 numbers [x0, x1, y0, y1], found %u", length);
  JsonArray *array = json_node_get_array (m);
  double d[4];
  for (int i = 0; i < 4; i++)
    {
      char *path = g_strdup_printf ("plot.domain[%d]", i);
      gboolean ok = caml_parser_get_number (p, json_array_get_element (array, i), path, &d[i]);
      g_free (path);
      if (!ok)
        return FALSE;
    }
  if (!(d[0] < d[1]) || !(d[2] < d[3]))
    return caml_parser_fail (p, CAML_ERROR_INVALID, "plot.domain",
                             "[%g, %g, %g, %g] is empty (need x0 < x1 and y0 < y1)",
                             d[0], d[1], d[2], d[3]);
  /* a plot needs its width and height as numbers too */
  if (!isfinite (d[1] - d[0]) || !isfinite (d[3] - d[2]))
    return caml_parser_fail (p, CAML_ERROR_INVALID, "plot.domain",
                             "[%g, %g, %g, %g] is too wide: x1 − x0 and y1 − y0 must be "
                             "finite (below %g)", d[0], d[1], d[2], d[3], G_MAXDOUBLE);
  /* … and one that a plot's scale (pixels per unit) and its grid of
   * distinct points can be drawn from: a width of 1e-310 trained, then
   * could not be drawn, which threw the run away */
  for (int axis = 0; axis < 2; axis++)
    {
      double lo = d[2 * axis], hi = d[2 * axis + 1];
      if (hi - lo < PLOT_DOMAIN_MIN_SPAN || hi - lo < 1e-9 * MAX (fabs (lo), fabs (hi)))
        return caml_parser_fail (p, CAML_ERROR_INVALID, "plot.domain",
                                 "[%g, %g, %g, %g] is too narrow: %s must be at least %g and a "
                                 "billionth of the larger of |%s|, |%s|", d[0], d[1], d[2], d[3],
                                 axis == 0 ? "x1 − x0" : "y1 − y0", PLOT_DOMAIN_MIN_SPAN,
                                 axis == 0 ? "x0" : "y0", axis == 0 ? "x1" : "y1");
    }
  memcpy (domain, d, sizeof d);
  return TRUE;
}

/* --- the document */

static gboolean
parse_string_member (CamlParser *p, JsonObject *root, const char *key, gboolean nullable,
                     char **out)
{
  JsonNode *m = json_object_get_member (root, key);
  const char *s = NULL;
  if (m == NULL)
    return TRUE;
  if (nullable && JSON_NODE_HOLDS_NULL (m))
    {
      g_clear_pointer (out, g_free);
      return TRUE;
    }
  if (!caml_parser_get_string (p, m, key, &s))
    return FALSE;
  g_free (*out);
  *out = g_strdup (s);
  return TRUE;
}

static gboolean
parse_root (CamlParser *p, JsonNode *node, CamlExperiment *exp)
{
  static const char *const keys[] = {
    "name", "description", "paper", "seed", "data", "model", "loss",
    "optimizer", "training", "plot",
  };
  JsonObject *root;
  JsonNode *m;

  if (node == NULL)
    return caml_parser_fail (p, CAML_ERROR_PARSE, NULL, "the document is empty");
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return caml_parser_fail (p, CAML_ERROR_PARSE, NULL,
                             "expected an experiment object at the top level, found %s",
                             caml_json_describe (node));
  root = json_node_get_object (node);
  if (!caml_parser_check_keys (p, root, NULL, keys, G_N_ELEMENTS (keys), NULL))
    return FALSE;

  if (!parse_string_member (p, root, "name", FALSE, &exp->name)
      || !parse_string_member (p, root, "description", FALSE, &exp->description)
      || !parse_string_member (p, root, "paper", TRUE, &exp->paper))
    return FALSE;
  if ((m = json_object_get_member (root, "seed")) != NULL
      && !parse_whole_setting (p, m, "seed", exp))
    return FALSE;
  if ((m = json_object_get_member (root, "data")) != NULL
      && !parse_data (p, m, &exp->data))
    return FALSE;
  caml_experiment_default_plot_domain (exp->data.kind, exp->plot_domain);
  if ((m = json_object_get_member (root, "model")) != NULL
      && !parse_model (p, m, exp))
    return FALSE;
  if ((m = json_object_get_member (root, "loss")) != NULL)
    {
      int loss;
      if (!caml_parser_get_enum (p, m, "loss", caml_loss_names, &loss))
        return FALSE;
      exp->loss = loss;
    }
  if ((m = json_object_get_member (root, "optimizer")) != NULL
      && !parse_optimizer (p, m, &exp->optimizer))
    return FALSE;
  if ((m = json_object_get_member (root, "training")) != NULL
      && !parse_training (p, m, exp))
    return FALSE;
  if ((m = json_object_get_member (root, "plot")) != NULL
      && !parse_plot (p, m, exp->plot_domain))
    return FALSE;
  return TRUE;
}

/* The experiment at node, or NULL after p's error. */
static CamlExperiment *
read_root (CamlParser *p, JsonNode *node, const char *default_name)
{
  CamlExperiment *exp = caml_experiment_new_default ();
  if (default_name != NULL)
    {
      g_free (exp->name);
      exp->name = g_strdup (default_name);
    }
  if (!parse_root (p, node, exp))
    g_clear_pointer (&exp, caml_experiment_free);
  return exp;
}

/* Experiment files nest four levels; json-check.c explains the limit. */
#define MAX_NESTING 64

static CamlExperiment *
load_data (const char *data, gssize length, const char *source,
           const char *default_name, const char *base_dir, GError **error)
{
  g_return_val_if_fail (data != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  CamlParser p = { .source = source != NULL ? source : "<experiment>",
                   .base_dir = base_dir, .error = error,
                   .wide = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free) };
  /* One pass over strict JSON into json-glib's tree (json-check.c); the same
   * pass keeps the integers a gint64 cannot hold. */
  JsonNode *root = caml_json_parse (data, length >= 0 ? (gsize) length : strlen (data),
                                    p.source, MAX_NESTING, p.wide, error);
  if (root == NULL)
    {
      g_hash_table_unref (p.wide);
      return NULL;
    }

  CamlExperiment *exp = read_root (&p, root, default_name);
  json_node_unref (root);
  g_hash_table_unref (p.wide);
  return exp;
}

CamlExperiment *
caml_experiment_load_json (const CamlJsonDoc *doc, JsonNode *node, const char *path,
                           const char *default_name, const char *base_dir, GError **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  CamlParser p = { .source = doc->source, .base_dir = base_dir, .wide = doc->wide,
                   .error = error, .doc = doc, .prefix = path };
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      caml_parser_fail (&p, CAML_ERROR_INVALID, NULL, "expected an experiment object, found %s",
                        caml_json_describe (node));
      return NULL;
    }
  return read_root (&p, node, default_name);
}

CamlExperiment *
caml_experiment_load_data (const char *data, gssize length, const char *source,
                           GError **error)
{
  return load_data (data, length, source, NULL, NULL, error);
}

/* A name of an open file rather than of a file: /dev/stdin (…out, …err),
 * /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N, /proc/PID/fd/N — a
 * regular file redirected there has no directory of its own here. */
static gboolean
is_stream_name (const char *path)
{
  if (g_str_equal (path, "/dev/stdin") || g_str_equal (path, "/dev/stdout")
      || g_str_equal (path, "/dev/stderr") || g_str_has_prefix (path, "/dev/fd/"))
    return TRUE;
  if (!g_str_has_prefix (path, "/proc/"))
    return FALSE;
  const char *p = path + strlen ("/proc/");
  if (g_str_has_prefix (p, "self/"))
    p += strlen ("self/");
  else if (g_str_has_prefix (p, "thread-self/"))
    p += strlen ("thread-self/");
  else
    {
      const char *digits = p;
      while (g_ascii_isdigit (*p))
        p++;
      if (p == digits || *p++ != '/')
        return FALSE;
    }
  return g_str_has_prefix (p, "fd/");
}

char *
caml_experiment_name_for_path (const char *path)
{
  char *base = g_filename_display_basename (path);
  if (g_str_has_suffix (base, ".json"))
    base[strlen (base) - strlen (".json")] = '\0';
  return base;
}

CamlExperiment *
caml_experiment_load_file (const char *path, GError **error)
{
  char *contents = NULL;
  gsize length = 0;

  if (!caml_file_get_contents (path, &contents, &length, error))
    return NULL;
  /* A document without a name takes the file's, as valid UTF-8 (a byte
   * that is not becomes U+FFFD): the name goes into JSON files and plot
   * titles, which take nothing else. */
  /* Relative data paths in it are relative to its directory — when it has
   * one: a pipe (`caml train <(cat exp.json)` reads /dev/fd/63), a FIFO, a
   * device or a file reached by the name of an open file (`caml train
   * /dev/stdin <exp.json`) is not where its data live, so they are relative to the
   * current directory, as in a document loaded from memory; nor is its
   * name ("63") the experiment's. */
  struct stat st;
  gboolean regular = g_stat (path, &st) == 0 && S_ISREG (st.st_mode)
                     && !is_stream_name (path);   /* /dev/stdin <exp.json */
  char *base = regular ? caml_experiment_name_for_path (path) : NULL;
  char *dir = regular ? g_path_get_dirname (path) : g_strdup (".");
  char *base_dir = g_canonicalize_filename (dir, NULL);
  CamlExperiment *exp = load_data (contents, length, path, base, base_dir, error);
  g_free (base_dir);
  g_free (dir);
  g_free (base);
  g_free (contents);
  return exp;
}
