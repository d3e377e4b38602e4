/* sweep.c — a sweep's plan: its axes, checks, runs and their experiments,
 * and the keys a sweep may vary (sweep.h). The sweep file is sweep-file.c,
 * results, tables and figures sweep-tables.c. */
#include <string.h>

#include "assign.h"
#include "sweep-private.h"

CamlSweepPlan *
caml_sweep_plan_new (CamlExperiment *exp, const char *preset, const char *source)
{
  CamlSweepPlan *plan = g_new0 (CamlSweepPlan, 1);
  plan->exp = exp;
  plan->preset = g_strdup (preset);
  plan->source = g_strdup (source);
  plan->baselines = TRUE;
  return plan;
}

void
caml_sweep_plan_free (CamlSweepPlan *plan)
{
  if (plan == NULL)
    return;
  caml_experiment_free (plan->exp);
  g_free (plan->preset);
  g_free (plan->source);
  g_strfreev (plan->fixed);
  for (int a = 0; a < plan->n_axes; a++)
    {
      g_free (plan->axes[a].key);
      g_strfreev (plan->axes[a].values);
    }
  g_free (plan);
}

gboolean
caml_sweep_plan_add_axis (CamlSweepPlan *plan, const char *key, const char *const *values,
                          int n, GError **error)
{
  g_return_val_if_fail (key != NULL && n >= 1, FALSE);
  if (plan->n_axes >= CAML_SWEEP_MAX_AXES)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "%s: a sweep has at most %d keys", key, CAML_SWEEP_MAX_AXES);
      return FALSE;
    }
  CamlSweepAxis *axis = &plan->axes[plan->n_axes++];
  axis->key = g_strdup (key);
  axis->values = g_new0 (char *, n + 1);
  for (int i = 0; i < n; i++)
    axis->values[i] = g_strdup (values[i]);
  axis->n_values = n;
  return TRUE;
}

gboolean
caml_sweep_plan_parse_axis (CamlSweepPlan *plan, const char *text, GError **error)
{
  const char *eq = strchr (text, '=');
  if (eq == NULL || eq == text || eq[1] == '\0')
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "--grid %s: expected KEY=V1,V2,…", text);
      return FALSE;
    }
  g_autofree char *key = g_strndup (text, eq - text);
  g_auto (GStrv) values = g_strsplit (eq + 1, ",", -1);
  return caml_sweep_plan_add_axis (plan, key, (const char *const *) values,
                                   (int) g_strv_length (values), error);
}

char *
caml_sweep_assignment_key (const char *assignment)
{
  return g_strndup (assignment, strcspn (assignment, "="));
}

/* ------------------------------------------------------------ checks */

/* The option of an axis key and its layer: "N.KEY" → N, "KEY" → -1 (every
 * layer that has it). A prefix that is no index (a setting's path) stays
 * in *option. */
static void
split_key (const char *key, int *layer, const char **option)
{
  const char *dot = strchr (key, '.');
  guint64 index;
  *layer = -1;
  *option = key;
  if (dot == NULL)
    return;
  g_autofree char *prefix = g_strndup (key, dot - key);
  if (g_ascii_string_to_unsigned (prefix, 10, 0, G_MAXINT, &index, NULL))
    {
      *layer = (int) index;
      *option = dot + 1;
    }
}

/* How the parts of a plan were given, for messages: on a command line
 * ("--grid kernel=3,5", "-O units=4") or in a sweep file ("grid[0]",
 * "grid[0].values[1]", "set.units"). */
typedef struct {
  const CamlSweepPlan *plan;
  const CamlJsonDoc   *doc;
  GPtrArray           *owned;   /* the strings below */
} Names;

static const char *
keep (Names *names, char *text)
{
  g_ptr_array_add (names->owned, text);
  return text;
}

/* An axis as a whole ("--grid kernel=3,5"); where its key is in a file. */
static const char *
axis_given (Names *names, int a)
{
  const CamlSweepAxis *axis = &names->plan->axes[a];
  if (names->doc != NULL)
    return keep (names, g_strdup_printf ("grid[%d].key", a));
  g_autofree char *values = g_strjoinv (",", axis->values);
  return keep (names, g_strdup_printf ("--grid %s=%s", axis->key, values));
}

/* One value of an axis: in a file its own place; on a command line the
 * whole --grid. */
static const char *
value_given (Names *names, int a, int v)
{
  return names->doc != NULL ? keep (names, g_strdup_printf ("grid[%d].values[%d]", a, v))
                            : axis_given (names, a);
}

static const char *
fixed_given (Names *names, int i)
{
  const char *text = names->plan->fixed[i];
  if (names->doc == NULL)
    return keep (names, g_strconcat ("-O ", text, NULL));
  g_autofree char *key = caml_sweep_assignment_key (text);
  return keep (names, g_strconcat ("set.", key, NULL));
}

/* Sets *error to problem about what was given as given: in a file at its
 * place ("FILE:L:C: grid[0].key: problem"), on a command line after it
 * ("--grid kernel=3,5: problem"). */
G_GNUC_PRINTF (4, 5) static gboolean
fail (const Names *names, GError **error, const char *given, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *problem = g_strdup_vprintf (format, args);
  va_end (args);
  if (names->doc != NULL)
    return caml_json_doc_fail (names->doc, error, given, FALSE, "%s", problem);
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "%s: %s", given, problem);
  return FALSE;
}

/* An error of caml_experiment_assign, which names what it was given as
 * (the paths, in a file): placed at place there, as it is elsewhere. */
static gboolean
fail_assign (const Names *names, GError **error, GError *local, const char *place)
{
  if (names->doc == NULL)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  const char *message = local->message;
  if (g_str_has_prefix (message, place) && g_str_has_prefix (message + strlen (place), ": "))
    message += strlen (place) + 2;
  caml_json_doc_fail (names->doc, error, place, FALSE, "%s", message);
  g_error_free (local);
  return FALSE;
}

/* The fixed list and, unless axis is −1, value v of axis, on exp. */
static gboolean
apply_with (Names *names, CamlExperiment *exp, int axis, int v, GError **error)
{
  const CamlSweepPlan *plan = names->plan;
  g_autoptr (GArray) list = g_array_new (FALSE, FALSE, sizeof (CamlAssignment));
  for (int i = 0; plan->fixed != NULL && plan->fixed[i] != NULL; i++)
    {
      CamlAssignment a = { plan->fixed[i], fixed_given (names, i) };
      g_array_append_val (list, a);
    }
  if (axis >= 0)
    {
      const CamlSweepAxis *ax = &plan->axes[axis];
      CamlAssignment a = { keep (names, g_strdup_printf ("%s=%s", ax->key, ax->values[v])),
                           value_given (names, axis, v) };
      g_array_append_val (list, a);
    }
  GError *local = NULL;
  if (caml_experiment_assign (exp, (CamlAssignment *) list->data, (int) list->len, &local))
    return TRUE;
  /* in a file: at the value, or at the fixed setting that failed alone */
  const char *place = axis >= 0 ? value_given (names, axis, v) : NULL;
  for (int i = 0; place == NULL && plan->fixed != NULL && plan->fixed[i] != NULL; i++)
    {
      const char *given = fixed_given (names, i);
      if (g_str_has_prefix (local->message, given))
        place = given;
    }
  return fail_assign (names, error, local, place != NULL ? place : "set");
}

/* Every run sets each axis' value in turn, so two axes that reach the same
 * option of the same layer would leave the last one's value while the runs
 * are labelled with both; and a value given twice would train the same run
 * twice into one directory. */
static gboolean
check_axes (Names *names, GError **error)
{
  const CamlSweepPlan *plan = names->plan;
  const CamlSweepAxis *axes = plan->axes;
  for (int a = 0; a < plan->n_axes; a++)
    for (int v = 0; v < axes[a].n_values; v++)
      for (int w = 0; w < v; w++)
        if (g_str_equal (axes[a].values[v], axes[a].values[w]))
          return fail (names, error, value_given (names, a, v), "the value %s is given twice",
                       axes[a].values[v]);
  if (plan->n_axes < 2)
    return TRUE;
  int layer[2];
  const char *option[2];
  for (int a = 0; a < 2; a++)
    split_key (axes[a].key, &layer[a], &option[a]);
  if (!g_str_equal (option[0], option[1])
      || (layer[0] >= 0 && layer[1] >= 0 && layer[0] != layer[1]))
    return TRUE;
  g_autofree char *which = layer[0] < 0 && layer[1] < 0
                           ? g_strdup (option[0])
                           : g_strdup_printf ("%s of layer %d", option[0], MAX (layer[0], layer[1]));
  if (names->doc != NULL)
    return caml_json_doc_fail (names->doc, error, "grid[1].key", FALSE,
                               "grid[0] and grid[1] both set %s: give each option once, with "
                               "all its values in one axis", which);
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
               "%s and %s both set %s: give each option once, with all its values in one "
               "--grid KEY=V1,V2,…", axis_given (names, 0), axis_given (names, 1), which);
  return FALSE;
}

gboolean
caml_sweep_plan_check_in (const CamlSweepPlan *plan, const CamlJsonDoc *doc, GError **error)
{
  Names names = { plan, doc, g_ptr_array_new_with_free_func (g_free) };
  gboolean ok = FALSE;
  if (plan->n_axes < 1)
    {
      if (doc != NULL)
        caml_json_doc_fail (doc, error, "grid", FALSE, "give one or two axes");
      else
        g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "give one or two --grid KEY=V1,V2,…");
      goto out;
    }
  /* The fixed list alone first: its errors are its own. */
  CamlExperiment *probe = caml_experiment_copy (plan->exp);
  ok = apply_with (&names, probe, -1, 0, error);
  caml_experiment_free (probe);
  if (!ok || !(ok = check_axes (&names, error)))
    goto out;
  /* Every value before anything trains — and no two values of an axis
   * that are one setting written two ways (1 and 01, 0.1 and 1e-1, true and
   * 1), which would train one run twice into one directory. */
  for (int a = 0; a < plan->n_axes && ok; a++)
    {
      const CamlSweepAxis *axis = &plan->axes[a];
      GError *local = NULL;
      if (!caml_experiment_check_key (plan->exp, axis->key, &local))
        {
          ok = fail (&names, error, axis_given (&names, a), "%s", local->message);
          g_error_free (local);
          break;
        }
      g_autoptr (GPtrArray) probes
        = g_ptr_array_new_with_free_func ((GDestroyNotify) caml_experiment_free);
      for (int v = 0; v < axis->n_values && ok; v++)
        {
          probe = caml_experiment_copy (plan->exp);
          g_ptr_array_add (probes, probe);
          ok = apply_with (&names, probe, a, v, error);
          for (int w = 0; ok && w < v; w++)
            if (caml_experiment_equal (probe, probes->pdata[w]))
              ok = fail (&names, error, value_given (&names, a, v),
                         "the values %s and %s are the same setting", axis->values[w],
                         axis->values[v]);
        }
    }
out:
  g_ptr_array_free (names.owned, TRUE);
  return ok;
}

gboolean
caml_sweep_plan_check (const CamlSweepPlan *plan, GError **error)
{
  return caml_sweep_plan_check_in (plan, NULL, error);
}

/* ------------------------------------------------------------ runs */

gboolean
caml_sweep_plan_has_context_aware (const CamlSweepPlan *plan)
{
  for (int i = 0; i < plan->exp->n_layers; i++)
    if (plan->exp->layers[i].ops->context_aware)
      return TRUE;
  return FALSE;
}

/* Runs per point: the model, and its baseline when there is one to train. */
static int
per_point (const CamlSweepPlan *plan)
{
  return plan->baselines && caml_sweep_plan_has_context_aware (plan) ? 2 : 1;
}

int
caml_sweep_plan_n_points (const CamlSweepPlan *plan)
{
  int n = 1;
  for (int a = 0; a < plan->n_axes; a++)
    n *= plan->axes[a].n_values;
  return n;
}

int
caml_sweep_plan_n_runs (const CamlSweepPlan *plan)
{
  return caml_sweep_plan_n_points (plan) * per_point (plan);
}

void
caml_sweep_plan_run_of (const CamlSweepPlan *plan, int run, int index[2], gboolean *baseline)
{
  int per = per_point (plan);
  int point = run / per;
  index[0] = plan->n_axes > 0 ? point % plan->axes[0].n_values : 0;
  index[1] = plan->n_axes > 1 ? point / plan->axes[0].n_values : 0;
  *baseline = run % per == 1;
}

/* The point as "kernel=3" joined by sep. */
static char *
point_text (const CamlSweepPlan *plan, const int index[2], const char *sep)
{
  GString *s = g_string_new (NULL);
  for (int a = 0; a < plan->n_axes; a++)
    g_string_append_printf (s, "%s%s=%s", a ? sep : "", plan->axes[a].key,
                            plan->axes[a].values[index[a]]);
  return g_string_free (s, FALSE);
}

char *
caml_sweep_plan_label (const CamlSweepPlan *plan, const int index[2])
{
  return point_text (plan, index, "-");
}

char *
caml_sweep_plan_run_dir (const CamlSweepPlan *plan, const char *out_dir, int run)
{
  int index[2];
  gboolean baseline;
  caml_sweep_plan_run_of (plan, run, index, &baseline);
  g_autofree char *label = caml_sweep_plan_label (plan, index);
  return g_build_filename (out_dir, label, baseline ? "baseline" : "ca", NULL);
}

CamlExperiment *
caml_sweep_plan_experiment (const CamlSweepPlan *plan, int run, GError **error)
{
  int index[2];
  gboolean baseline;
  caml_sweep_plan_run_of (plan, run, index, &baseline);
  Names names = { plan, NULL, g_ptr_array_new_with_free_func (g_free) };
  g_autoptr (GArray) list = g_array_new (FALSE, FALSE, sizeof (CamlAssignment));
  for (int i = 0; plan->fixed != NULL && plan->fixed[i] != NULL; i++)
    {
      CamlAssignment a = { plan->fixed[i], fixed_given (&names, i) };
      g_array_append_val (list, a);
    }
  for (int a = 0; a < plan->n_axes; a++)
    {
      const CamlSweepAxis *axis = &plan->axes[a];
      CamlAssignment point = {
        keep (&names, g_strdup_printf ("%s=%s", axis->key, axis->values[index[a]])),
        axis_given (&names, a)
      };
      g_array_append_val (list, point);
    }
  CamlExperiment *exp = caml_experiment_copy (plan->exp);
  gboolean ok = caml_experiment_assign (exp, (CamlAssignment *) list->data, (int) list->len,
                                        error);
  g_ptr_array_free (names.owned, TRUE);
  if (!ok)
    {
      caml_experiment_free (exp);
      return NULL;
    }
  if (baseline)
    {
      CamlExperiment *base = caml_experiment_make_baseline (exp);
      caml_experiment_free (exp);
      exp = base;
    }
  g_autofree char *point = point_text (plan, index, " ");
  g_free (exp->name);
  exp->name = g_strdup_printf ("%s %s%s", plan->exp->name ? plan->exp->name : "experiment",
                               point, baseline ? ", baseline" : "");
  return exp;
}

char *
caml_sweep_plan_hint (const CamlSweepPlan *plan, int axis)
{
  const CamlExperiment *exp = plan->exp;
  const CamlSweepAxis *ax = &plan->axes[axis];
  int layer;
  const char *option;
  split_key (ax->key, &layer, &option);
  if (layer >= 0)
    return NULL;
  GString *layers = g_string_new (NULL);
  int n = 0, first = -1;
  for (int i = 0; i < exp->n_layers; i++)
    if (caml_layer_ops_option_index (exp->layers[i].ops, option) >= 0)
      {
        g_string_append_printf (layers, "%s%d (%s)", n == 0 ? "" : " and ", i,
                                exp->layers[i].ops->name);
        first = n++ == 0 ? i : first;
      }
  g_autofree char *values = g_strjoinv (",", ax->values);
  char *hint = n < 2 ? NULL
               : g_strdup_printf ("--grid %s sets %s on layers %s alike; to vary one "
                                  "layer's, give its index: --grid %d.%s=%s",
                                  ax->key, option, layers->str, first, option, values);
  g_string_free (layers, TRUE);
  return hint;
}

/* ------------------------------------------------------------ keys */

/* A layer option's value as the experiment file writes it. */
static char *
option_text (const CamlOptionSpec *spec, double value)
{
  GString *s = g_string_new (NULL);
  caml_option_append_text (s, spec, value);
  return g_string_free (s, FALSE);
}

/* A setting in words ("learning rate (optimizer.lr)"). */
static char *
setting_title (const char *path)
{
  static const struct { const char *path, *words; } titles[] = {
    { "optimizer.lr", "learning rate" },
    { "optimizer.em_steps", "em_steps: the gate and value groups alternate every E steps" },
    { "optimizer.weight_decay", "weight decay" },
    { "training.steps", "training steps" },
    { "training.batch_size", "batch size (0: the whole set)" },
    { "seed", "seed" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (titles); i++)
    if (g_str_equal (titles[i].path, path))
      return g_strdup_printf ("%s (%s)", titles[i].words, path);
  return g_strdup (path);
}

char **
caml_sweep_keys (const CamlExperiment *exp, char ***titles, char ***current)
{
  GPtrArray *keys = g_ptr_array_new (), *words = g_ptr_array_new (),
            *values = g_ptr_array_new ();
  g_autoptr (GPtrArray) shared = g_ptr_array_new ();   /* options of two or more layers */
  for (int i = 0; i < exp->n_layers; i++)
    {
      const CamlLayerSpec *spec = &exp->layers[i];
      for (int o = 0; o < spec->ops->n_options; o++)
        {
          const CamlOptionSpec *opt = &spec->ops->options[o];
          g_ptr_array_add (keys, g_strdup_printf ("%d.%s", i, opt->key));
          g_ptr_array_add (words, g_strdup_printf ("layer %d (%s): %s", i, spec->ops->title,
                                                   opt->key));
          g_ptr_array_add (values, option_text (opt, spec->opt[o]));
          for (int j = 0; j < i; j++)
            if (caml_layer_ops_option_index (exp->layers[j].ops, opt->key) >= 0)
              {
                if (!g_ptr_array_find_with_equal_func (shared, opt->key, g_str_equal, NULL))
                  g_ptr_array_add (shared, (gpointer) opt->key);
                break;
              }
        }
    }
  /* KEY: on every layer that has it; its value when they agree */
  for (guint k = 0; k < shared->len; k++)
    {
      const char *key = shared->pdata[k];
      GString *which = g_string_new (NULL);
      char *value = NULL;
      gboolean agree = TRUE;
      for (int i = 0; i < exp->n_layers; i++)
        {
          int o = caml_layer_ops_option_index (exp->layers[i].ops, key);
          if (o < 0)
            continue;
          g_string_append_printf (which, "%s%d", which->len ? ", " : "", i);
          char *text = option_text (&exp->layers[i].ops->options[o], exp->layers[i].opt[o]);
          if (value == NULL)
            value = text;
          else
            {
              agree &= g_str_equal (value, text);
              g_free (text);
            }
        }
      g_ptr_array_add (keys, g_strdup (key));
      g_ptr_array_add (words, g_strdup_printf ("%s of every layer that has it (%s)", key,
                                               which->str));
      g_ptr_array_add (values, agree ? value : g_strdup (""));
      if (!agree)
        g_free (value);
      g_string_free (which, TRUE);
    }
  for (int s = 0; caml_experiment_settings[s] != NULL; s++)
    {
      char *value = caml_experiment_get_setting (exp, caml_experiment_settings[s]);
      if (value == NULL)   /* a field its optimizer lacks */
        continue;
      g_ptr_array_add (keys, g_strdup (caml_experiment_settings[s]));
      g_ptr_array_add (words, setting_title (caml_experiment_settings[s]));
      g_ptr_array_add (values, value);
    }
  g_ptr_array_add (keys, NULL);
  g_ptr_array_add (words, NULL);
  g_ptr_array_add (values, NULL);
  if (titles != NULL)
    *titles = (char **) g_ptr_array_free (words, FALSE);
  else
    g_strfreev ((char **) g_ptr_array_free (words, FALSE));
  if (current != NULL)
    *current = (char **) g_ptr_array_free (values, FALSE);
  else
    g_strfreev ((char **) g_ptr_array_free (values, FALSE));
  return (char **) g_ptr_array_free (keys, FALSE);
}
