/* layer-stats.h — looking inside a model: a table of its layers (type,
 * output shape, parameters) and, for every layer with a gate, the mean,
 * spread and histogram of χ over a sample of a data set — one value per
 * sample (CA-NN), per position (CA-CNN, CA-RES conv) or per word (CA-BSFE,
 * CA-ATT, CA-RNN: the valid words only, not the padding).
 *
 * Plain C on the engine: no GTK. The workbench's run computes it on the
 * trainer thread (caml-run-inspect.c); tests call it directly. */
#pragma once

#include "caml.h"

G_BEGIN_DECLS

#define CAML_CHI_BINS  20     /* the histogram's bins on [0, 1] */
#define CAML_STATS_MAX 1000   /* samples of the test set χ is measured on */

typedef struct {
  int         index;                /* position in the model */
  const char *title;                /* the type's title, "CA-NN" (static) */
  char       *shape;                /* the output shape, "(32)" */
  size_t      n_params;             /* parameters it holds */
  gboolean    gated;                /* the layer has a gate whose χ is measured */
  double      sum, sum2;            /* of χ (the accumulators) */
  guint64     count;                /* χ values seen */
  guint64     bins[CAML_CHI_BINS];  /* bin k: [k/20, (k+1)/20), the last one closed */
} CamlLayerStat;

typedef struct {
  CamlLayerStat *layers;            /* (n_layers) */
  int            n_layers;
  int            n_samples;         /* samples χ was measured on (0: none yet) */
  long           step;              /* the step of the weights measured */
} CamlLayerStats;

/* The table of model's layers, with no χ measured yet. */
CamlLayerStats *caml_layer_stats_new (const CamlModel *model);
CamlLayerStats *caml_layer_stats_copy (const CamlLayerStats *stats);
void            caml_layer_stats_free (CamlLayerStats *stats);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CamlLayerStats, caml_layer_stats_free)

/* Adds n values of χ to a layer's mean, spread and histogram (values
 * outside [0, 1] go to the end bins; non-finite ones are skipped). */
void   caml_layer_stat_add (CamlLayerStat *stat, const float *chi, size_t n);
/* Mean and standard deviation (population) of the χ added; NaN without any. */
double caml_layer_stat_mean (const CamlLayerStat *stat);
double caml_layer_stat_sd (const CamlLayerStat *stat);

/* Forwards the first min (n_max, set->n) samples of set through model in
 * batches (the model's buffers grow to the batch) and measures the χ of
 * every gated layer, replacing what stats held. stats must be the model's
 * (caml_layer_stats_new). */
void   caml_layer_stats_measure (CamlLayerStats *stats, CamlModel *model,
                                 const CamlDataset *set, int n_max, long step);

G_END_DECLS
