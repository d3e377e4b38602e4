/* layer-stats.c — the layer table and χ statistics (layer-stats.h). */
#include "layer-stats.h"

#include <math.h>
#include <string.h>

#define STATS_BATCH 100   /* samples forwarded at once */

CamlLayerStats *
caml_layer_stats_new (const CamlModel *model)
{
  CamlLayerStats *stats = g_new0 (CamlLayerStats, 1);
  stats->n_layers = model->n_layers;
  stats->layers = g_new0 (CamlLayerStat, MAX (model->n_layers, 1));
  stats->step = -1;
  for (int i = 0; i < model->n_layers; i++)
    {
      CamlLayer *layer = model->layers[i];
      CamlLayerStat *s = &stats->layers[i];
      s->index = i;
      s->title = layer->ops->title;
      s->shape = caml_shape_to_string (&layer->out);
      for (int p = 0; p < layer->n_params; p++)
        s->n_params += layer->params[p].count;
      s->gated = layer->ops->chi != NULL;
    }
  return stats;
}

CamlLayerStats *
caml_layer_stats_copy (const CamlLayerStats *stats)
{
  CamlLayerStats *copy = g_memdup2 (stats, sizeof *stats);
  copy->layers = g_memdup2 (stats->layers, sizeof (CamlLayerStat) * MAX (stats->n_layers, 1));
  for (int i = 0; i < stats->n_layers; i++)
    copy->layers[i].shape = g_strdup (stats->layers[i].shape);
  return copy;
}

void
caml_layer_stats_free (CamlLayerStats *stats)
{
  if (stats == NULL)
    return;
  for (int i = 0; i < stats->n_layers; i++)
    g_free (stats->layers[i].shape);
  g_free (stats->layers);
  g_free (stats);
}

void
caml_layer_stat_add (CamlLayerStat *stat, const float *chi, size_t n)
{
  /* Four of each running total, taken in turn: a smooth map's neighbours
   * fall in one bin, and each increment would wait for the one before. */
  double sum[4] = { 0 }, sum2[4] = { 0 };
  guint64 count[4] = { 0 }, bins[4][CAML_CHI_BINS] = { { 0 } };
  for (size_t i = 0; i < n; i++)
    {
      double v = chi[i];
      if (!isfinite (v))
        continue;
      int lane = (int) (i & 3);
      sum[lane] += v;
      sum2[lane] += v * v;
      count[lane]++;
      /* floor (t) clamped to the bins, without a call to floor */
      double t = v * CAML_CHI_BINS;
      int bin = t <= 0.0 ? 0 : t >= CAML_CHI_BINS - 1 ? CAML_CHI_BINS - 1 : (int) t;
      bins[lane][bin]++;
    }
  for (int lane = 0; lane < 4; lane++)
    {
      stat->sum += sum[lane];
      stat->sum2 += sum2[lane];
      stat->count += count[lane];
      for (int b = 0; b < CAML_CHI_BINS; b++)
        stat->bins[b] += bins[lane][b];
    }
}

double
caml_layer_stat_mean (const CamlLayerStat *stat)
{
  return stat->count > 0 ? stat->sum / (double) stat->count : NAN;
}

double
caml_layer_stat_sd (const CamlLayerStat *stat)
{
  if (stat->count == 0)
    return NAN;
  double mean = stat->sum / (double) stat->count;
  return sqrt (MAX (stat->sum2 / (double) stat->count - mean * mean, 0.0));
}

static void
stat_clear (CamlLayerStat *s)
{
  s->sum = s->sum2 = 0.0;
  s->count = 0;
  memset (s->bins, 0, sizeof s->bins);
}

void
caml_layer_stats_measure (CamlLayerStats *stats, CamlModel *model, const CamlDataset *set,
                          int n_max, long step)
{
  g_return_if_fail (stats->n_layers == model->n_layers);
  int n = set != NULL ? MIN (n_max, set->n) : 0;
  size_t row = set != NULL ? caml_shape_size (&set->x_shape) : 0;
  g_autofree float *buf = n > 0 ? g_new (float, row * MIN (n, STATS_BATCH)) : NULL;

  /* the layers after the last gate's change no χ */
  int last = -1;
  for (int i = 0; i < stats->n_layers; i++)
    {
      stat_clear (&stats->layers[i]);
      if (stats->layers[i].gated)
        last = i;
    }
  for (int start = 0; last >= 0 && start < n; start += STATS_BATCH)
    {
      int m = MIN (STATS_BATCH, n - start);
      caml_model_forward_to (model, caml_dataset_rows (set, start, m, buf), m, last);
      for (int i = 0; i <= last; i++)
        {
          CamlLayer *layer = model->layers[i];
          int per = 0;
          const float *chi = stats->layers[i].gated ? layer->ops->chi (layer, &per) : NULL;
          if (chi == NULL || per <= 0)
            continue;
          /* Text: one χ per step, of which the first lengths[k] are words. */
          gboolean words = layer->lengths != NULL && layer->in.kind != CAML_SHAPE_DENSE;
          for (int k = 0; k < m; k++)
            caml_layer_stat_add (&stats->layers[i], chi + (size_t) k * per,
                                 words ? (size_t) CLAMP (layer->lengths[k], 0, per)
                                       : (size_t) per);
        }
    }
  stats->n_samples = n;
  stats->step = step;
}
