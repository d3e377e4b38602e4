/* probe.c — looking inside a trained model: outputs and gates on a grid. */
#include "caml-private.h"

gboolean
caml_model_sample_grid (CamlModel *model, const double domain[4], int nx, int ny,
                        float *out, int chi_layer, float *chi, GError **error)
{
  if (!caml_shape_is_plane (&model->input))
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

gboolean
caml_model_sample_grid_parts (CamlModel *model, const double domain[4], int nx, int ny,
                              int layer_index, float *sensitive_part, float *free_part,
                              GError **error)
{
  if (layer_index < 0 || layer_index >= model->n_layers)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "layer %d: the model has layers 0…%d", layer_index, model->n_layers - 1);
      return FALSE;
    }
  if (model->layers[layer_index]->ops->force_chi == NULL)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "layer %d (%s) has no gate that can be held at 0 or 1 (CA-NN layers do)",
                   layer_index, model->layers[layer_index]->ops->name);
      return FALSE;
    }
  CamlLayer *layer = model->layers[layer_index];
  gboolean ok = TRUE;
  /* The gate is released again whatever happens: later forward passes
   * (training, plots) must see the real χ. */
  if (sensitive_part != NULL)
    {
      layer->ops->force_chi (layer, 0.0f);
      ok = caml_model_sample_grid (model, domain, nx, ny, sensitive_part, -1, NULL, error);
    }
  if (ok && free_part != NULL)
    {
      layer->ops->force_chi (layer, 1.0f);
      ok = caml_model_sample_grid (model, domain, nx, ny, free_part, -1, NULL, error);
    }
  layer->ops->force_chi (layer, -1.0f);
  return ok;
}

gboolean
caml_model_sigma_maps (CamlModel *model, int layer_index, const CamlDataset *set,
                       int first, int count, float *maps, int *map_h, int *map_w,
                       GError **error)
{
  if (layer_index < 0 || layer_index >= model->n_layers
      || model->layers[layer_index]->ops->chi == NULL
      || model->layers[layer_index]->out.ndim != 3)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "layer %d is not a convolutional context-aware layer: it has no σ-map",
                   layer_index);
      return FALSE;
    }
  if (first < 0 || count < 0 || first + count > set->n)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "images %d…%d are outside the data set of %d", first,
                   first + count - 1, set->n);
      return FALSE;
    }
  CamlLayer *layer = model->layers[layer_index];
  *map_h = layer->out.dims[1];
  *map_w = layer->out.dims[2];
  if (maps == NULL)
    return TRUE;

  size_t per_image = caml_shape_size (&set->x_shape);
  size_t per_map = (size_t) *map_h * *map_w;
  const int chunk = 100;
  /* image sets keep bytes: their values go through buf */
  g_autofree float *buf = set->x == NULL ? g_new (float, (size_t) MIN (chunk, count) * per_image)
                                         : NULL;
  for (int start = 0; start < count; start += chunk)
    {
      int n = MIN (chunk, count - start);
      caml_model_forward (model, caml_dataset_rows (set, first + start, n, buf), n);
      int per = 0;
      const float *chi = layer->ops->chi (layer, &per);
      if (chi == NULL || (size_t) per != per_map)
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                       "layer %d (%s) has no gate map (its gates are always on)",
                       layer_index, layer->ops->name);
          return FALSE;
        }
      memcpy (maps + (size_t) start * per_map, chi, (size_t) n * per_map * sizeof (float));
    }
  return TRUE;
}

typedef struct {
  float    value;
  gboolean foreground;
} Scored;

static int
compare_scored (const void *a, const void *b)
{
  float x = ((const Scored *) a)->value, y = ((const Scored *) b)->value;
  return (x > y) - (x < y);
}

double
caml_sigma_auc (const float *images, int height, int width, const float *maps,
                int map_h, int map_w, int count, gboolean *high_on_foreground)
{
  GArray *scored = g_array_new (FALSE, FALSE, sizeof (Scored));
  for (int n = 0; n < count; n++)
    {
      const float *img = images + (size_t) n * height * width;
      const float *map = maps + (size_t) n * map_h * map_w;
      for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
          {
            float v = img[y * width + x];
            if (!(v > 0.5f || v == 0.0f))
              continue;   /* the digit's soft edge is neither */
            /* The map pixel whose receptive field is centred nearest (y, x). */
            int my = MIN ((int) ((y + 0.5) * map_h / height), map_h - 1);
            int mx = MIN ((int) ((x + 0.5) * map_w / width), map_w - 1);
            Scored s = { map[my * map_w + mx], v > 0.5f };
            g_array_append_val (scored, s);
          }
    }

  /* Mann–Whitney U with ties counted half: AUC = P(χ_fg > χ_bg). */
  g_array_sort (scored, compare_scored);
  const Scored *s = (const Scored *) scored->data;
  double n_fg = 0, n_bg = 0, rank_sum_fg = 0;
  for (guint i = 0; i < scored->len;)
    {
      guint j = i;
      while (j < scored->len && s[j].value == s[i].value)
        j++;
      double mid_rank = 0.5 * (i + 1 + j);   /* ranks i+1 … j share their mean */
      for (guint k = i; k < j; k++)
        {
          if (s[k].foreground)
            {
              n_fg++;
              rank_sum_fg += mid_rank;
            }
          else
            n_bg++;
        }
      i = j;
    }
  g_array_free (scored, TRUE);

  double auc = n_fg > 0 && n_bg > 0
               ? (rank_sum_fg - n_fg * (n_fg + 1) / 2) / (n_fg * n_bg) : 0.5;
  if (high_on_foreground)
    *high_on_foreground = auc >= 0.5;
  return auc >= 0.5 ? auc : 1.0 - auc;
}
