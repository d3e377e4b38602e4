/* caml-run-inspect.h — the layer table and χ statistics of a workbench run
 * (layer-stats.h), measured on the trainer thread at most twice a second
 * (and at most ~2 % of the training time) over the first CAML_STATS_MAX
 * test samples, and published for the main thread. Used by caml-run.c. */
#pragma once

#include "layer-stats.h"

G_BEGIN_DECLS

typedef struct _CamlRunInspect CamlRunInspect;

/* set (borrowed: the run's data keep it) is what χ is measured on. */
CamlRunInspect *caml_run_inspect_new (const CamlModel *model, const CamlDataset *set);
void            caml_run_inspect_free (CamlRunInspect *inspect);
/* Measures now, through caml_trainer_with_model (the untrained model,
 * loaded weights). */
void            caml_run_inspect_sample (CamlRunInspect *inspect, CamlTrainer *trainer);
/* The trainer's progress function: measures when due (always while not
 * running: single steps, the final report). */
void            caml_run_inspect_progress (CamlRunInspect *inspect, CamlTrainer *trainer,
                                           const CamlProgress *progress);
/* A copy of the newest statistics when newer than *version (then updated),
 * else NULL. */
CamlLayerStats *caml_run_inspect_copy (CamlRunInspect *inspect, guint64 *version);

G_END_DECLS
