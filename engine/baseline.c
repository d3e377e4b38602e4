/* baseline.c — the matched baseline of an experiment: every context-aware
 * layer replaced by its plain counterpart of the same output shape. */
#include "caml-private.h"

static CamlLayerSpec
plain_counterpart (const CamlLayerSpec *spec)
{
  const CamlLayerOps *from = spec->ops;
  const CamlLayerOps *to = from->baseline ? caml_layer_lookup (from->baseline) : NULL;
  if (to == NULL)
    return *spec;

  CamlLayerSpec plain = { .ops = to };
  caml_layer_ops_default_options (to, plain.opt);
  for (int i = 0; i < to->n_options; i++)
    {
      int j = caml_layer_ops_option_index (from, to->options[i].key);
      if (j >= 0 && caml_option_check (&to->options[i], spec->opt[j], "", NULL))
        plain.opt[i] = spec->opt[j];
    }
  /* CA layers call their width "units" or "depth"; a baseline may use the
   * other word for the same thing. */
  int units = caml_layer_ops_option_index (to, "units");
  int depth = caml_layer_ops_option_index (from, "depth");
  if (units >= 0 && depth >= 0 && caml_layer_ops_option_index (from, "units") < 0)
    plain.opt[units] = spec->opt[depth];
  return plain;
}

CamlExperiment *
caml_experiment_make_baseline (const CamlExperiment *exp)
{
  CamlExperiment *base = caml_experiment_copy (exp);
  for (int i = 0; i < base->n_layers; i++)
    base->layers[i] = plain_counterpart (&exp->layers[i]);
  g_free (base->name);
  base->name = g_strconcat (exp->name ? exp->name : "experiment", "-baseline", NULL);
  return base;
}
