/* caml-run-inspect.c — a run's layer statistics (caml-run-inspect.h). */
#include "caml-run-inspect.h"

#define INSPECT_GAP_US  500000   /* ≤ 2 measurements per second */
#define INSPECT_COST    50       /* ≤ 2 % of the time */

struct _CamlRunInspect {
  /* borrowed */
  const CamlDataset *set;
  /* the measuring thread's, under work_lock (a final report may measure on
   * the calling thread while the trainer's last one ends) */
  GMutex          work_lock;
  CamlLayerStats *work;
  CamlTrainer    *trainer;       /* of the measurement under way */
  gint64          last_us;
  gint64          cost_us;
  /* protected by lock */
  GMutex          lock;
  CamlLayerStats *shown;
  guint64         version;
};

CamlRunInspect *
caml_run_inspect_new (const CamlModel *model, const CamlDataset *set)
{
  CamlRunInspect *inspect = g_new0 (CamlRunInspect, 1);
  inspect->set = set;
  inspect->work = caml_layer_stats_new (model);
  inspect->shown = caml_layer_stats_copy (inspect->work);
  g_mutex_init (&inspect->work_lock);
  g_mutex_init (&inspect->lock);
  return inspect;
}

void
caml_run_inspect_free (CamlRunInspect *inspect)
{
  if (inspect == NULL)
    return;
  caml_layer_stats_free (inspect->work);
  caml_layer_stats_free (inspect->shown);
  g_mutex_clear (&inspect->work_lock);
  g_mutex_clear (&inspect->lock);
  g_free (inspect);
}

/* In a caml_trainer_with_model closure. */
static void
measure (CamlModel *model, gpointer user_data)
{
  CamlRunInspect *inspect = user_data;
  CamlProgress p;
  caml_trainer_get_progress (inspect->trainer, &p);
  caml_layer_stats_measure (inspect->work, model, inspect->set, CAML_STATS_MAX, p.step);
  CamlLayerStats *copy = caml_layer_stats_copy (inspect->work);
  g_mutex_lock (&inspect->lock);
  caml_layer_stats_free (inspect->shown);
  inspect->shown = copy;
  inspect->version++;
  g_mutex_unlock (&inspect->lock);
}

void
caml_run_inspect_sample (CamlRunInspect *inspect, CamlTrainer *trainer)
{
  g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&inspect->work_lock);
  inspect->trainer = trainer;
  caml_trainer_with_model (trainer, measure, inspect);
  inspect->last_us = g_get_monotonic_time ();
}

void
caml_run_inspect_progress (CamlRunInspect *inspect, CamlTrainer *trainer,
                           const CamlProgress *progress)
{
  gint64 now = g_get_monotonic_time ();
  gint64 gap = MAX (INSPECT_GAP_US, INSPECT_COST * inspect->cost_us);
  if (progress->state != CAML_TRAINER_RUNNING || now - inspect->last_us >= gap)
    {
      caml_run_inspect_sample (inspect, trainer);
      /* Only what training pays for sets the pace: a measurement before it
       * (the untrained gates, on cold caches and code) cost several times
       * as much, and kept the table still for its first seconds. */
      inspect->cost_us = inspect->last_us - now;
    }
}

CamlLayerStats *
caml_run_inspect_copy (CamlRunInspect *inspect, guint64 *version)
{
  g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&inspect->lock);
  if (inspect->version == *version)
    return NULL;
  *version = inspect->version;
  return caml_layer_stats_copy (inspect->shown);
}
