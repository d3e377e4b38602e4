/* assign.c — KEY=VALUE assignments on an experiment (assign.h). */
#include <string.h>

#include "assign.h"

/* Parses VALUE for one option spec: a number, a choice name, true/false. */
static gboolean
parse_option_value (const CamlOptionSpec *spec, const char *text, double *value,
                    GError **error)
{
  if (spec->type == CAML_OPT_ENUM)
    {
      for (int i = 0; spec->choices[i] != NULL; i++)
        if (g_str_equal (spec->choices[i], text))
          {
            *value = i;
            return TRUE;
          }
      g_autofree char *list = g_strjoinv (", ", (char **) spec->choices);
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "%s: \"%s\" is not one of %s", spec->key, text, list);
      return FALSE;
    }
  if (spec->type == CAML_OPT_BOOL)
    {
      if (g_str_equal (text, "true") || g_str_equal (text, "1"))
        *value = 1;
      else if (g_str_equal (text, "false") || g_str_equal (text, "0"))
        *value = 0;
      else
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                       "%s: \"%s\" is not true or false", spec->key, text);
          return FALSE;
        }
      return TRUE;
    }
  char *end = NULL;
  *value = g_ascii_strtod (text, &end);
  /* Decimal only: strtod would also take "0x10", "inf" and "nan". */
  if (end == text || *end != '\0' || strpbrk (text, "xXnN") != NULL)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "%s: \"%s\" is not a number", spec->key, text);
      return FALSE;
    }
  return caml_option_check (spec, *value, spec->key, error);
}

/* What an assignment set: layer, option, value, the assignment, and
 * whether it named the layer (N.KEY) or reached every layer with KEY; or,
 * layer −1, a setting (option: its index in caml_experiment_settings) and
 * its value as the file writes it. */
typedef struct {
  int         layer, option;
  double      value;
  char       *setting;   /* owned */
  const char *given_as;
  gboolean    one_layer;
} Assigned;

static void
assigned_clear (gpointer data)
{
  g_free (((Assigned *) data)->setting);
}

/* A key with a dot that is no setting: N.KEY when it starts with a digit;
 * anything else is taken for a setting misspelt ("optimizer.lrr"). */
static gboolean
names_setting (const char *key)
{
  const char *dot = strchr (key, '.');
  return g_strv_contains (caml_experiment_settings, key)
         || (dot != NULL && !g_ascii_isdigit (key[0]));
}

/* The layers key reaches: *only = N for N.KEY, −1 for every layer that has
 * the option; *option the option's key. */
static gboolean
resolve_layer_key (const CamlExperiment *exp, const char *key, int *only, const char **option,
                   GError **error)
{
  const char *dot = strchr (key, '.');
  *only = -1;
  *option = key;
  if (exp->n_layers <= 0)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "%s: the model has no layers to set it on", key);
      return FALSE;
    }
  if (dot != NULL)
    {
      g_autofree char *index = g_strndup (key, dot - key);
      guint64 value;
      if (!g_ascii_string_to_unsigned (index, 10, 0, (guint64) exp->n_layers - 1, &value, NULL))
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                       "%s: \"%s\" is not a layer index 0…%d", key, index, exp->n_layers - 1);
          return FALSE;
        }
      *only = (int) value;
      *option = dot + 1;
    }
  for (int i = 0; i < exp->n_layers; i++)
    if ((*only < 0 || i == *only) && caml_layer_ops_option_index (exp->layers[i].ops, *option) >= 0)
      return TRUE;
  if (*only >= 0)
    g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "layer %d (%s) has no option \"%s\"",
                 *only, exp->layers[*only].ops->name, *option);
  else
    g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                 "no layer of this experiment has an option \"%s\"", *option);
  return FALSE;
}

gboolean
caml_experiment_check_key (const CamlExperiment *exp, const char *key, GError **error)
{
  int only;
  const char *option;
  return names_setting (key) ? caml_experiment_check_setting (exp, key, error)
                             : resolve_layer_key (exp, key, &only, &option, error);
}

/* A setting: two that differ are refused, as for layer options. */
static gboolean
apply_setting (CamlExperiment *exp, const char *key, const char *text, const char *given_as,
               GArray *done, GError **error)
{
  if (!caml_experiment_set_setting (exp, key, text, error))
    return FALSE;
  int option = 0;
  while (!g_str_equal (caml_experiment_settings[option], key))
    option++;
  Assigned now = { -1, option, 0, caml_experiment_get_setting (exp, key), given_as, FALSE };
  for (guint j = 0; j < done->len; j++)
    {
      const Assigned *before = &g_array_index (done, Assigned, j);
      if (before->layer == -1 && before->option == option
          && !g_str_equal (before->setting, now.setting))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "%s and %s both set %s, to different values: give it once",
                       before->given_as, given_as, key);
          g_free (now.setting);
          return FALSE;
        }
    }
  g_array_append_val (done, now);
  return TRUE;
}

/* key is "KEY" (every layer with that option), "N.KEY" (layer N only) or
 * a setting's path. done holds what the assignments before this one set. */
static gboolean
apply_one (CamlExperiment *exp, const char *key, const char *text, const char *given_as,
           GArray *done, GError **error)
{
  if (names_setting (key))
    return apply_setting (exp, key, text, given_as, done, error);
  int only;
  if (!resolve_layer_key (exp, key, &only, &key, error))
    return FALSE;
  for (int i = 0; i < exp->n_layers; i++)
    {
      if (only >= 0 && i != only)
        continue;
      CamlLayerSpec *spec = &exp->layers[i];
      int idx = caml_layer_ops_option_index (spec->ops, key);
      if (idx < 0)
        continue;
      double value;
      if (!parse_option_value (&spec->ops->options[idx], text, &value, error))
        {
          g_prefix_error (error, "layer %d (%s): ", i, spec->ops->name);
          return FALSE;
        }
      /* Two of a kind (KEY and KEY, N.KEY and N.KEY) that differ are
       * refused; N.KEY wins over KEY, in either order (-O units=64
       * -O 2.units=1: the readout's width). Every assignment is kept, so a
       * later one is compared with all of its kind. */
      gboolean named = FALSE;   /* an N.KEY holds this layer's option */
      for (guint j = 0; j < done->len; j++)
        {
          const Assigned *before = &g_array_index (done, Assigned, j);
          if (before->layer != i || before->option != idx)
            continue;
          named |= before->one_layer;
          if (before->one_layer == (only >= 0) && before->value != value)
            {
              g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "%s and %s both set %s of layer %d (%s), to different values: "
                           "give it once", before->given_as, given_as, key, i,
                           spec->ops->name);
              return FALSE;
            }
        }
      Assigned now = { i, idx, value, NULL, given_as, only >= 0 };
      g_array_append_val (done, now);
      if (only >= 0 || !named)
        spec->opt[idx] = value;
    }
  return TRUE;
}

gboolean
caml_experiment_assign (CamlExperiment *exp, const CamlAssignment *list, int n, GError **error)
{
  g_autoptr (GArray) done = g_array_new (FALSE, FALSE, sizeof (Assigned));
  g_array_set_clear_func (done, assigned_clear);
  for (int i = 0; i < n; i++)
    {
      const char *text = list[i].assignment;
      const char *eq = strchr (text, '=');
      if (eq == NULL || eq == text)
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                       "%s: expected KEY=VALUE", list[i].given_as);
          return FALSE;
        }
      g_autofree char *key = g_strndup (text, eq - text);
      g_autoptr (GError) local = NULL;
      if (!apply_one (exp, key, eq + 1, list[i].given_as, done, &local))
        {
          /* "-O units=nan: …" reads as "units: …" did; a conflict names both */
          if (g_error_matches (local, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE)
              || g_str_has_prefix (list[i].given_as, "-O "))
            g_propagate_error (error, g_steal_pointer (&local));
          else
            g_propagate_prefixed_error (error, g_steal_pointer (&local), "%s: ",
                                        list[i].given_as);
          return FALSE;
        }
    }
  return TRUE;
}

void
caml_assignments_add_options (GArray *list, char **assignments)
{
  for (int i = 0; assignments != NULL && assignments[i] != NULL; i++)
    {
      g_autofree char *given_as = g_strconcat ("-O ", assignments[i], NULL);
      CamlAssignment a = { assignments[i], g_intern_string (given_as) };
      g_array_append_val (list, a);
    }
}
