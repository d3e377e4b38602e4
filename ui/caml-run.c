/* caml-run.c — a training run and its surface snapshot.
 *
 * The trainer calls run_progress on its own thread after every step. For
 * 2-D regression that function samples the fitted surface and the χ maps of
 * every per-sample gate (through caml_trainer_with_model, which runs at once
 * on the trainer thread) into private buffers, then copies them under `lock`
 * into the snapshot the window reads. Sampling is throttled so it costs at
 * most ~2 % of the training time: at most 10 times a second, and never more
 * often than every 50× the time the last sample took. Reports while paused
 * (single steps) and the final report always sample. */
#include "caml-run.h"

#include <string.h>

#define MAX_CHI        4
#define MIN_GAP_US     100000   /* ≤ 10 samples per second */
#define COST_FACTOR    50       /* ≤ 2 % of the time */

struct _CamlRun {
  /* owned */
  CamlExperiment *exp;
  CamlRunData    *data;
  CamlModel      *model;
  CamlTrainer    *trainer;

  /* fixed at creation */
  gboolean surface;
  int      grid;
  int      n_chi;
  int      chi_layers[MAX_CHI];
  CamlRunNotify notify;
  gpointer      notify_data;

  /* trainer thread only (or the creating thread before the start) */
  float   *work_fit;            /* (grid, grid) */
  float   *work_chi;            /* (n_chi, grid, grid) */
  float   *scratch;             /* (grid, grid) */
  gint64   last_sample_us;
  gint64   sample_cost_us;
  gint64   sample_total_us;

  /* protected by lock */
  GMutex   lock;
  float   *fit;                 /* (grid, grid) */
  float   *chi;                 /* (n_chi, grid, grid) */
  guint64  version;
  double   sample_seconds;
};

/* ------------------------------------------------------------------ data */

static void
run_data_clear (gpointer p)
{
  CamlRunData *data = p;
  caml_dataset_free (data->train);
  caml_dataset_free (data->test);
}

CamlRunData *
caml_run_data_load (const CamlExperiment *exp, GError **error)
{
  CamlDataset *train = NULL, *test = NULL;

  if (!caml_experiment_load_datasets (exp, &train, &test, error))
    return NULL;
  CamlRunData *data = g_rc_box_new0 (CamlRunData);
  data->train = train;
  data->test = test;
  return data;
}

CamlRunData *
caml_run_data_ref (CamlRunData *data)
{
  return g_rc_box_acquire (data);
}

void
caml_run_data_unref (CamlRunData *data)
{
  if (data != NULL)
    g_rc_box_release_full (data, run_data_clear);
}

/* -------------------------------------------------------------- sampling */

static void
sample_model (CamlModel *model, gpointer user_data)
{
  CamlRun *run = user_data;
  size_t cells = (size_t) run->grid * run->grid;
  gint64 start = g_get_monotonic_time ();
  gboolean ok;

  if (run->n_chi == 0)
    ok = caml_model_sample_grid (model, run->exp->plot_domain, run->grid, run->grid,
                                 run->work_fit, -1, NULL, NULL);
  else
    {
      ok = caml_model_sample_grid (model, run->exp->plot_domain, run->grid, run->grid,
                                   run->work_fit, run->chi_layers[0], run->work_chi, NULL);
      for (int k = 1; ok && k < run->n_chi; k++)
        ok = caml_model_sample_grid (model, run->exp->plot_domain, run->grid, run->grid,
                                     run->scratch, run->chi_layers[k],
                                     run->work_chi + k * cells, NULL);
    }
  gint64 end = g_get_monotonic_time ();
  run->sample_cost_us = end - start;
  run->sample_total_us += end - start;
  run->last_sample_us = end;
  if (!ok)
    return;

  g_mutex_lock (&run->lock);
  memcpy (run->fit, run->work_fit, cells * sizeof (float));
  memcpy (run->chi, run->work_chi, run->n_chi * cells * sizeof (float));
  run->version++;
  run->sample_seconds = run->sample_total_us / 1e6;
  g_mutex_unlock (&run->lock);
}

static void
run_progress (const CamlProgress *progress, gpointer user_data)
{
  CamlRun *run = user_data;

  if (run->surface)
    {
      gint64 now = g_get_monotonic_time ();
      gint64 gap = MAX (MIN_GAP_US, COST_FACTOR * run->sample_cost_us);
      if (progress->state != CAML_TRAINER_RUNNING || now - run->last_sample_us >= gap)
        caml_trainer_with_model (run->trainer, sample_model, run);
    }
  if (run->notify != NULL)
    run->notify (run->notify_data);
}

/* Which layers have one gate per sample (CA-NN; not CA-RES's always-on
 * gates): try each on a 2×2 grid. */
static void
find_chi_layers (CamlRun *run)
{
  float out[4], chi[4];

  run->n_chi = 0;
  for (int l = caml_model_find_chi_layer (run->model, 0); l >= 0 && run->n_chi < MAX_CHI;
       l = caml_model_find_chi_layer (run->model, l + 1))
    if (caml_model_sample_grid (run->model, run->exp->plot_domain, 2, 2, out, l, chi, NULL))
      run->chi_layers[run->n_chi++] = l;
}

/* ------------------------------------------------------------------- run */

CamlRun *
caml_run_new (const CamlExperiment *exp, CamlRunData *data, int grid,
              CamlRunNotify notify, gpointer notify_data, GError **error)
{
  CamlModel *model = caml_experiment_build_model (exp, &data->train->x_shape, error);
  if (model == NULL)
    return NULL;

  CamlRun *run = g_new0 (CamlRun, 1);
  run->exp = caml_experiment_copy (exp);
  run->data = caml_run_data_ref (data);
  run->model = model;
  run->grid = MAX (grid, 2);
  run->notify = notify;
  run->notify_data = notify_data;
  g_mutex_init (&run->lock);
  run->trainer = caml_trainer_new (run->exp, model, data->train, data->test);
  caml_trainer_set_progress_func (run->trainer, run_progress, run, 1);

  run->surface = caml_shape_size (&model->input) == 2
                 && caml_shape_size (caml_model_output_shape (model)) == 1
                 && data->train->n_classes == 0;
  if (run->surface)
    {
      size_t cells = (size_t) run->grid * run->grid;
      find_chi_layers (run);
      run->work_fit = g_new0 (float, cells);
      run->scratch = g_new0 (float, cells);
      run->work_chi = g_new0 (float, MAX (run->n_chi, 1) * cells);
      run->fit = g_new0 (float, cells);
      run->chi = g_new0 (float, MAX (run->n_chi, 1) * cells);
      /* The untrained surface: the thread has not started, so this runs here. */
      caml_trainer_with_model (run->trainer, sample_model, run);
    }
  return run;
}

void
caml_run_free (CamlRun *run)
{
  if (run == NULL)
    return;
  caml_trainer_free (run->trainer);   /* stops and joins */
  caml_model_free (run->model);
  caml_run_data_unref (run->data);
  caml_experiment_free (run->exp);
  g_free (run->work_fit);
  g_free (run->work_chi);
  g_free (run->scratch);
  g_free (run->fit);
  g_free (run->chi);
  g_mutex_clear (&run->lock);
  g_free (run);
}

CamlTrainer *
caml_run_get_trainer (CamlRun *run)
{
  return run->trainer;
}

const CamlExperiment *
caml_run_get_experiment (CamlRun *run)
{
  return run->exp;
}

const CamlDataset *
caml_run_get_train (CamlRun *run)
{
  return run->data->train;
}

size_t
caml_run_get_n_weights (CamlRun *run)
{
  return run->model->n_weights;
}

gboolean
caml_run_has_surface (CamlRun *run)
{
  return run->surface;
}

int
caml_run_get_grid (CamlRun *run)
{
  return run->grid;
}

int
caml_run_get_n_chi (CamlRun *run)
{
  return run->n_chi;
}

int
caml_run_get_chi_layer (CamlRun *run, int k, const char **title)
{
  g_return_val_if_fail (k >= 0 && k < run->n_chi, -1);
  if (title != NULL)
    *title = run->model->layers[run->chi_layers[k]]->ops->title;
  return run->chi_layers[k];
}

gboolean
caml_run_copy_surface (CamlRun *run, guint64 *version, float *fit, float *chi)
{
  size_t cells = (size_t) run->grid * run->grid;
  gboolean fresh;

  if (!run->surface)
    return FALSE;
  g_mutex_lock (&run->lock);
  fresh = run->version != *version;
  if (fresh)
    {
      memcpy (fit, run->fit, cells * sizeof (float));
      if (chi != NULL)
        memcpy (chi, run->chi, run->n_chi * cells * sizeof (float));
      *version = run->version;
    }
  g_mutex_unlock (&run->lock);
  return fresh;
}

typedef struct {
  const char *path;
  GError    **error;
  gboolean    ok;
} WeightsIO;

static void
save_weights_cb (CamlModel *model, gpointer user_data)
{
  WeightsIO *io = user_data;
  io->ok = caml_weights_save (model, io->path, io->error);
}

static void
load_weights_cb (CamlModel *model, gpointer user_data)
{
  WeightsIO *io = user_data;
  io->ok = caml_weights_load (model, io->path, io->error);
}

gboolean
caml_run_save_weights (CamlRun *run, const char *path, GError **error)
{
  WeightsIO io = { path, error, FALSE };
  caml_trainer_with_model (run->trainer, save_weights_cb, &io);
  return io.ok;
}

gboolean
caml_run_load_weights (CamlRun *run, const char *path, GError **error)
{
  WeightsIO io = { path, error, FALSE };
  CamlProgress p;

  caml_trainer_get_progress (run->trainer, &p);
  if (p.state != CAML_TRAINER_IDLE)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "weights can only be loaded before training starts (Reset first)");
      return FALSE;
    }
  caml_trainer_with_model (run->trainer, load_weights_cb, &io);
  if (io.ok && run->surface)
    caml_trainer_with_model (run->trainer, sample_model, run);
  return io.ok;
}

double
caml_run_get_sample_seconds (CamlRun *run)
{
  g_mutex_lock (&run->lock);
  double s = run->sample_seconds;
  g_mutex_unlock (&run->lock);
  return s;
}
