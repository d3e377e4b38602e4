/* probe.c — looking inside a trained model: outputs and gates on a grid. */
#include "caml.h"

gboolean
caml_model_sample_grid (CamlModel *model, const double domain[4], int nx, int ny,
                        float *out, int chi_layer, float *chi, GError **error)
{
  if (caml_shape_size (&model->input) != 2)
    {
      g_autofree char *shape = caml_shape_to_string (&model->input);
      g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                   "surface plots need a model with 2 inputs, this one takes %s", shape);
      return FALSE;
    }
  if (chi != NULL && (chi_layer < 0 || chi_layer >= model->n_layers
                      || model->layers[chi_layer]->ops->chi == NULL))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "layer %d has no gate to plot", chi_layer);
      return FALSE;
    }

  size_t n_out = caml_shape_size (caml_model_output_shape (model));
  float *xy = g_new (float, 2 * (size_t) nx);
  for (int j = 0; j < ny; j++)
    {
      double y = domain[2] + (domain[3] - domain[2]) * j / (ny - 1);
      for (int i = 0; i < nx; i++)
        {
          xy[2 * i] = (float) (domain[0] + (domain[1] - domain[0]) * i / (nx - 1));
          xy[2 * i + 1] = (float) y;
        }
      const float *pred = caml_model_forward (model, xy, nx);
      for (int i = 0; i < nx; i++)
        out[(size_t) j * nx + i] = pred[(size_t) i * n_out];
      if (chi != NULL)
        {
          CamlLayer *layer = model->layers[chi_layer];
          int per = 0;
          const float *gates = layer->ops->chi (layer, &per);
          if (gates == NULL || per != 1)
            {
              g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                           "layer %d (%s) has no per-sample gate", chi_layer,
                           layer->ops->name);
              g_free (xy);
              return FALSE;
            }
          memcpy (chi + (size_t) j * nx, gates, nx * sizeof (float));
        }
    }
  g_free (xy);
  return TRUE;
}
