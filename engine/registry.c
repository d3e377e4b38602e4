/* registry.c — the one table of layer types, and option helpers.
 *
 * The experiment parser, the GUI palette, the docs and the tests all read
 * this table: adding a layer type means adding one line here. */
#include <math.h>

#include "caml-private.h"
#include "layers/layers.h"

static const CamlLayerOps *const registry[] = {
  &caml_dense_ops,
  &caml_activation_layer_ops,
  &caml_conv2d_ops,
  &caml_max_pool_ops,
  &caml_flatten_ops,
  &caml_dropout_ops,
  &caml_ca_nn_ops,
  &caml_ca_res_ops,
  &caml_ca_cnn_ops,
  &caml_ca_res_conv_ops,
  &caml_embedding_ops,
  &caml_mean_pool_ops,
  &caml_average_ops,
  &caml_ca_bsfe_ops,
  &caml_ca_rnn_ops,
  &caml_lstm_ops,
  &caml_gru_ops,
  &caml_attention_ops,
  &caml_ca_att_ops,
};

const CamlLayerOps *const *
caml_layer_registry (int *n_types)
{
  *n_types = G_N_ELEMENTS (registry);
  return registry;
}

const CamlLayerOps *
caml_layer_lookup (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (registry); i++)
    if (g_str_equal (registry[i]->name, name))
      return registry[i];
  return NULL;
}

int
caml_layer_ops_option_index (const CamlLayerOps *ops, const char *key)
{
  for (int i = 0; i < ops->n_options; i++)
    if (g_str_equal (ops->options[i].key, key))
      return i;
  return -1;
}

void
caml_layer_ops_default_options (const CamlLayerOps *ops, double *opt)
{
  for (int i = 0; i < CAML_MAX_OPTIONS; i++)
    opt[i] = i < ops->n_options ? ops->options[i].default_value : 0.0;
}

gboolean
caml_option_check (const CamlOptionSpec *spec, double value,
                   const char *where, GError **error)
{
  switch (spec->type)
    {
    case CAML_OPT_BOOL:
      if (value != 0.0 && value != 1.0)
        goto bad;
      return TRUE;
    case CAML_OPT_ENUM:
      {
        int n = 0;
        while (spec->choices[n] != NULL)
          n++;
        if (value != floor (value) || value < 0 || value >= n)
          goto bad;
        return TRUE;
      }
    case CAML_OPT_INT:
      if (value != floor (value))
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                       "%s: %g is not an integer", where, value);
          return FALSE;
        }
      /* fall through */
    case CAML_OPT_FLOAT:
      if (!isfinite (value) || value < spec->min || value > spec->max)
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                       "%s: %g is out of range %g…%g", where, value,
                       spec->min, spec->max);
          return FALSE;
        }
      return TRUE;
    }
bad:
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
               "%s: %g is not a valid value", where, value);
  return FALSE;
}

CamlParam *
caml_layer_add_param (CamlLayer *layer, const char *name, CamlParamGroup group,
                      CamlInit init, int fan_in, int fan_out, size_t count)
{
  g_assert (layer->n_params < CAML_MAX_PARAMS);
  CamlParam *p = &layer->params[layer->n_params++];
  *p = (CamlParam) {
    .name = name, .group = group, .init = init,
    .fan_in = fan_in, .fan_out = fan_out, .count = count,
  };
  return p;
}
