/* caml-run.c — a training run and its surface snapshot.
 *
 * The trainer calls run_progress on its own thread after every step. For
 * 2-D regression that function samples the fitted surface and the χ maps of
 * every per-sample gate (through caml_trainer_with_model, which runs at once
 * on the trainer thread) into private buffers, then copies them under `lock`
 * into the snapshot the window reads. Sampling is throttled so it costs at
 * most ~2 % of the training time: at most 10 times a second, and never more
 * often than every 50× the time the last sample taken while training took
 * (with weight averaging, the time to swap the averaged weights in and out
 * included; the samples of the untrained model, on cold caches, do not
 * count). Reports while paused (single steps) and the final report always
 * sample.
 *
 * For image models with a convolutional CA layer it instead keeps σ-map
 * snapshots (sample_sigma): at most two a second, one while training takes
 * every core (and, like surfaces, at most ~2 % of the time), each with its
 * step and the foreground/background AUC, a bounded history the window
 * scrubs through.
 *
 * For text models with a per-word gate (CA-BSFE on data with a vocabulary)
 * it samples χ̃ of every word (sample_words), at most twice a second, with
 * the model's P(class 1) for the first test texts, tokenized once when the
 * run is made. With a per-position gate instead (CA-ATT, CA-RNN: one χ per
 * word of a text) it forwards the first WORDS_MEAN test texts, keeps the χ
 * of the words shown and each word's mean χ. */
#include "caml-run.h"
#include "caml-run-inspect.h"
#include "words-page.h"
#include "report.h"
#include "figures.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define MAX_CHI        4
#define MIN_GAP_US     100000   /* ≤ 10 samples per second */
#define COST_FACTOR    50       /* ≤ 2 % of the time */
#define SIGMA_GAP_US   500000   /* ≤ 2 σ-map snapshots per second … */
#define SIGMA_GAP_BUSY_US 1000000   /* … or 1 while training takes every core */
#define SIGMA_AUC_N    100      /* test images the AUC is measured on */
#define SIGMA_KEEP     200      /* snapshots kept; every other is dropped when full */
#define WORDS_GAP_US   500000   /* ≤ 2 word χ̃ samples per second */
#define WORDS_SAMPLES  12       /* test texts shown word by word */
#define WORDS_SHOWN    CAML_RUN_WORDS_SHOWN
#define WORDS_MEAN     500      /* test texts a per-position gate is averaged over */

struct _CamlRun {
  /* owned */
  CamlExperiment *exp;
  CamlRunData    *data;
  CamlModel      *model;
  CamlTrainer    *trainer;     /* runs exp (which it borrows) */
  CamlRunInspect *inspect;     /* the layer table and χ statistics */

  /* main thread: the live optimizer settings */
  double   lr;
  int      em_steps;

  /* Where Continue goes back to after a divergence: the run's state at its
   * last healthy evaluation (or the state it was loaded with), else the
   * weights it started from. Trainer thread while it runs, main thread
   * once it has ended. */
  CamlCheckpoint *checkpoint;
  gboolean no_checkpoints;      /* a baseline's: it is never continued */

  /* fixed at creation */
  gboolean surface;
  int      grid;
  int      n_chi;
  int      chi_layers[MAX_CHI];
  CamlRunNotify notify;
  gpointer      notify_data;

  int      sigma_layer;         /* layer with σ-maps, or -1 */
  CamlSigmaSource sigma_source; /* … its type and, in a block, sublayer */
  gint     parts_layer;         /* atomic: CA-NN whose parts are sampled, or -1 */
  const CamlDataset *sigma_set; /* test set, else train set (borrowed from data) */
  int      words_layer;         /* layer with a gate over words (text data), or -1 */
  gboolean words_per_position;  /* … a gate per position of a text (CA-ATT, CA-RNN) */
  int      words_steps;         /* the model's steps (T) */
  int      n_words_mean;        /* test texts its mean is taken over */
  int      n_words;             /* vocabulary size */
  int      word_vectors;        /* words whose pre-trained vector the initial weights
                                 * hold; 0 once caml_run_load_weights replaced them */

  /* trainer thread only (or the creating thread before the start) */
  gint64   last_sigma_us;
  gint64   sigma_cost_us;
  float   *auc_maps;            /* (SIGMA_AUC_N, map_h, map_w) */
  float   *auc_images;          /* (SIGMA_AUC_N, H, W) their images' values */
  float   *sigma_images;        /* the snapshots' images, the same in each: kept once */
  float   *work_fit;            /* (grid, grid) */
  float   *work_chi;            /* (n_chi, grid, grid) */
  float   *scratch;             /* (grid, grid) */
  float   *work_sensitive_part; /* (grid, grid) output with the parts layer's χ ≡ 0 */
  float   *work_free_part;      /* (grid, grid) … with χ ≡ 1 */
  int      work_parts_layer;
  gint64   last_sample_us;
  gint64   last_words_us;
  gint64   words_cost_us;
  float   *work_words;          /* (n_words) */
  float   *work_token_chi;      /* (n_words_mean, words_steps) */
  CamlWordSample *word_samples; /* (n_word_samples), fixed for the run's life */
  int      n_word_samples;
  gint64   sample_cost_us;
  gint64   sample_total_us;

  /* Held while sampling: after the trainer thread marks itself done it
   * still samples for its final report, and caml_trainer_with_model then
   * runs a closure on the calling thread too. */
  GMutex   sample_lock;

  /* protected by lock */
  GMutex   lock;
  float   *fit;                 /* (grid, grid) */
  float   *chi;                 /* (n_chi, grid, grid) */
  float   *sensitive_part;      /* (grid, grid) */
  float   *free_part;           /* (grid, grid) */
  int      sampled_parts_layer; /* the layer the parts belong to, or -1 */
  guint64  version;
  double   sample_seconds;
  GPtrArray *sigma;             /* CamlSigmaSnapshot, oldest first */
  GArray    *sigma_auc;         /* double, one per snapshot */
  guint64    sigma_version;
  long       surface_step;      /* the step of the weights fit was sampled from */
  long       copied_surface_step; /* surface_step when caml_run_copy_surface last copied */
  float     *words;             /* (n_words) χ̃ per word */
  float     *word_probs;        /* (n_word_samples) P(class 1), NaN: none */
  float     *token_chi;         /* (n_word_samples, WORDS_SHOWN) per-position χ per word shown */
  long       words_step;
  guint64    words_version;
};

/* ------------------------------------------------------------------ data */

static void
run_data_clear (gpointer p)
{
  CamlRunData *data = p;
  caml_dataset_free (data->train);
  caml_dataset_free (data->test);
}

/* Per thread: data sets loaded or made on it (caml_run_data_get_loads_here);
 * on all threads (caml_run_data_get_loads). */
static GPrivate loads_here;
static gint  loads;

CamlRunData *
caml_run_data_load (const CamlExperiment *exp, GError **error)
{
  CamlDataset *train = NULL, *test = NULL;

  g_private_set (&loads_here, GUINT_TO_POINTER (GPOINTER_TO_UINT (g_private_get (&loads_here))
                                                + 1));
  g_atomic_int_inc (&loads);
  if (!caml_experiment_load_datasets (exp, &train, &test, error))
    return NULL;
  CamlRunData *data = g_atomic_rc_box_new0 (CamlRunData);   /* shared with worker threads */
  data->train = train;
  data->test = test;
  return data;
}

guint
caml_run_data_get_loads_here (void)
{
  return GPOINTER_TO_UINT (g_private_get (&loads_here));
}

guint
caml_run_data_get_loads (void)
{
  return (guint) g_atomic_int_get (&loads);
}

CamlRunData *
caml_run_data_ref (CamlRunData *data)
{
  return g_atomic_rc_box_acquire (data);
}

void
caml_run_data_unref (CamlRunData *data)
{
  if (data != NULL)
    g_atomic_rc_box_release_full (data, run_data_clear);
}

/* -------------------------------------------------------------- sampling */

static long closure_step (CamlRun *run);

static void
sample_model (CamlModel *model, gpointer user_data)
{
  CamlRun *run = user_data;
  g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&run->sample_lock);
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
  run->work_parts_layer = g_atomic_int_get (&run->parts_layer);
  if (ok && run->work_parts_layer >= 0)
    ok = caml_model_sample_grid_parts (model, run->exp->plot_domain, run->grid, run->grid,
                                       run->work_parts_layer, run->work_sensitive_part,
                                       run->work_free_part, NULL);
  gint64 end = g_get_monotonic_time ();
  run->sample_total_us += end - start;
  run->last_sample_us = end;
  if (!ok)
    return;

  g_mutex_lock (&run->lock);
  memcpy (run->fit, run->work_fit, cells * sizeof (float));
  memcpy (run->chi, run->work_chi, run->n_chi * cells * sizeof (float));
  if (run->work_parts_layer >= 0)
    {
      memcpy (run->sensitive_part, run->work_sensitive_part, cells * sizeof (float));
      memcpy (run->free_part, run->work_free_part, cells * sizeof (float));
    }
  run->sampled_parts_layer = run->work_parts_layer;
  run->surface_step = closure_step (run);
  run->version++;
  run->sample_seconds = run->sample_total_us / 1e6;
  g_mutex_unlock (&run->lock);
}

/* In a caml_trainer_with_model closure: the step of the weights it sees.
 * Not the step the progress function was told of: the closure's check of
 * the latest update may have rolled it back. */
static long
closure_step (CamlRun *run)
{
  CamlProgress p;
  caml_trainer_get_progress (run->trainer, &p);
  return p.step;
}

/* Trainer thread: σ-maps of the first test images and the foreground /
 * background AUC on a larger sample. */
static void
sample_sigma (CamlModel *model, gpointer user_data)
{
  CamlRun *run = user_data;
  g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&run->sample_lock);
  const CamlDataset *set = run->sigma_set;
  gint64 start = g_get_monotonic_time ();
  CamlSigmaSnapshot *snap = caml_sigma_snapshot_new (model, run->sigma_layer, set,
                                                     CAML_FIGURE_SIGMA_IMAGES,
                                                     closure_step (run), NULL);
  if (snap == NULL)
    return;
  /* The images are the same at every step: the history keeps the maps. */
  if (run->sigma_images == NULL)
    run->sigma_images = g_steal_pointer (&snap->images);
  g_clear_pointer (&snap->images, g_free);
  int n_auc = MIN (SIGMA_AUC_N, set->n);
  int map_h = snap->map_h, map_w = snap->map_w;
  double auc = NAN;
  if (run->auc_maps == NULL)
    run->auc_maps = g_new (float, (size_t) n_auc * map_h * map_w);
  if (run->auc_images == NULL)
    run->auc_images = caml_dataset_copy_rows (set, 0, n_auc);
  if (caml_model_sigma_maps (model, run->sigma_layer, set, 0, n_auc, run->auc_maps,
                             &map_h, &map_w, NULL))
    auc = caml_sigma_auc (run->auc_images, snap->height, snap->width, run->auc_maps, map_h,
                          map_w, n_auc, NULL);
  gint64 end = g_get_monotonic_time ();
  run->last_sigma_us = end;
  g_debug ("σ-maps at step %ld: %.1f ms (AUC %.3f)", snap->step, (end - start) / 1e3, auc);
  run->sample_total_us += end - start;

  g_mutex_lock (&run->lock);
  if (run->sigma->len > 0
      && ((CamlSigmaSnapshot *) g_ptr_array_index (run->sigma, run->sigma->len - 1))->step
         == snap->step)
    {
      /* Same step again (a final report after the last step): replace. */
      g_ptr_array_remove_index (run->sigma, run->sigma->len - 1);
      g_array_remove_index (run->sigma_auc, run->sigma_auc->len - 1);
    }
  if (run->sigma->len >= SIGMA_KEEP)
    {
      /* Keep every other one (the oldest stays): the history thins evenly. */
      for (guint i = 1; i < run->sigma->len; i++)
        {
          g_ptr_array_remove_index (run->sigma, i);
          g_array_remove_index (run->sigma_auc, i);
        }
    }
  g_ptr_array_add (run->sigma, snap);
  g_array_append_val (run->sigma_auc, auc);
  run->sigma_version++;
  run->sample_seconds = run->sample_total_us / 1e6;
  g_mutex_unlock (&run->lock);
}

/* Trainer thread: a per-position gate at every word of the first test texts,
 * and each word's mean over them. */
static void
sample_token_chi (CamlRun *run, CamlModel *model)
{
  const CamlDataset *test = run->data->test;
  int t = run->words_steps;
  caml_report_token_chi (model, run->words_layer, test, run->n_words_mean, run->work_token_chi);
  caml_report_token_chi_means (test, run->n_words_mean, t, run->work_token_chi, run->n_words,
                               run->work_words);
}

/* The value shown at word k of word sample i: its own χ (NaN past the
 * model's steps), or its mean χ (NaN: not measured) when the sample's ids
 * are not its words in order (unique_tokens). */
static float
shown_token_chi (CamlRun *run, int i, int k)
{
  const CamlWordSample *s = &run->word_samples[i];
  if (!s->aligned)
    return s->ids[k] >= 0 ? run->work_words[s->ids[k]] : NAN;
  return k < run->words_steps ? run->work_token_chi[(size_t) i * run->words_steps + k] : NAN;
}

/* Trainer thread: χ̃ of every word. */
static void
sample_words (CamlModel *model, gpointer user_data)
{
  CamlRun *run = user_data;
  g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&run->sample_lock);
  long step = closure_step (run);
  CamlLayer *layer = model->layers[run->words_layer];
  gboolean ok = TRUE;
  if (run->words_per_position)
    sample_token_chi (run, model);
  else
    ok = layer->ops->word_chi (layer, run->work_words, run->n_words);
  g_autofree float *probs = NULL;
  if (ok && run->n_word_samples > 0)
    probs = caml_report_class1_probabilities (model, run->exp->loss, run->data->test,
                                              run->n_word_samples);
  run->last_words_us = g_get_monotonic_time ();
  if (!ok)
    return;
  g_mutex_lock (&run->lock);
  memcpy (run->words, run->work_words, (size_t) run->n_words * sizeof (float));
  for (int i = 0; i < run->n_word_samples; i++)
    {
      run->word_probs[i] = probs != NULL ? probs[i] : NAN;
      if (run->words_per_position)
        for (int k = 0; k < run->word_samples[i].n_words; k++)
          run->token_chi[(size_t) i * WORDS_SHOWN + k] = shown_token_chi (run, i, k);
    }
  run->words_step = step;
  run->words_version++;
  g_mutex_unlock (&run->lock);
}

/* The least time between σ-map snapshots. Each is a large new image for
 * the window to draw and paint (a frame of 5–15 ms in software on two
 * cores), so while training takes every core there is one a second, as the
 * session updates the window less often then. */
static gint64
sigma_gap (CamlRun *run)
{
  return caml_trainer_get_threads (run->trainer) >= caml_get_cores () ? SIGMA_GAP_BUSY_US
                                                                      : SIGMA_GAP_US;
}

static void
run_progress (const CamlProgress *progress, gpointer user_data)
{
  CamlRun *run = user_data;

  /* A copy of the whole state at each healthy evaluation. */
  if (!run->no_checkpoints)
    caml_checkpoint_progress (run->checkpoint, run->trainer, progress);

  if (run->sigma_layer >= 0)
    {
      gint64 now = g_get_monotonic_time ();
      gint64 gap = MAX (sigma_gap (run), COST_FACTOR * run->sigma_cost_us);
      if (progress->state != CAML_TRAINER_RUNNING || now - run->last_sigma_us >= gap)
        {
          caml_trainer_with_model (run->trainer, sample_sigma, run);
          run->sigma_cost_us = g_get_monotonic_time () - now;  /* with the averaged weights' swap */
        }
    }

  if (run->words_layer >= 0)
    {
      gint64 now = g_get_monotonic_time ();
      gint64 gap = MAX (WORDS_GAP_US, COST_FACTOR * run->words_cost_us);
      if (progress->state != CAML_TRAINER_RUNNING || now - run->last_words_us >= gap)
        {
          caml_trainer_with_model (run->trainer, sample_words, run);
          run->words_cost_us = g_get_monotonic_time () - now;
        }
    }

  if (run->surface)
    {
      gint64 now = g_get_monotonic_time ();
      gint64 gap = MAX (MIN_GAP_US, COST_FACTOR * run->sample_cost_us);
      if (progress->state != CAML_TRAINER_RUNNING || now - run->last_sample_us >= gap
          || caml_run_parts_pending (run))
        {
          caml_trainer_with_model (run->trainer, sample_model, run);
          run->sample_cost_us = g_get_monotonic_time () - now;
        }
    }
  caml_run_inspect_progress (run->inspect, run->trainer, progress);
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

typedef struct {
  const CamlVocab *vocab;
  GPtrArray       *words;
  GArray          *ids;
  GArray          *read;
  CamlWordsRead    reader;
  int              total;
} SampleTokens;

static void
add_sample_token (const char *token, gsize length, gpointer user_data)
{
  SampleTokens *t = user_data;
  if (t->total++ >= WORDS_SHOWN)
    return;
  char *word = g_strndup (token, length);
  int id = caml_vocab_lookup (t->vocab, word);
  gboolean read = caml_words_read_next (&t->reader, id);
  g_ptr_array_add (t->words, word);
  g_array_append_val (t->ids, id);
  g_array_append_val (t->read, read);
}

/* The first test texts, tokenized as the data sets are, for the words page. */
static void
make_word_samples (CamlRun *run)
{
  const CamlDataset *test = run->data->test;
  if (test == NULL || test->texts == NULL)
    return;
  run->n_word_samples = MIN (test->n, WORDS_SAMPLES);
  run->word_samples = g_new0 (CamlWordSample, MAX (run->n_word_samples, 1));
  run->word_probs = g_new (float, MAX (run->n_word_samples, 1));
  run->token_chi = g_new (float, (size_t) MAX (run->n_word_samples, 1) * WORDS_SHOWN);
  for (size_t k = 0; k < (size_t) MAX (run->n_word_samples, 1) * WORDS_SHOWN; k++)
    run->token_chi[k] = NAN;
  for (int i = 0; i < run->n_word_samples; i++)
    {
      SampleTokens t = { run->data->train->vocab, g_ptr_array_new (),
                         g_array_new (FALSE, FALSE, sizeof (int)),
                         g_array_new (FALSE, FALSE, sizeof (gboolean)) };
      caml_words_read_init (&t.reader, run->exp->data.max_tokens, run->exp->data.unique_tokens,
                            run->exp->data.ngrams);
      caml_tokenize (test->texts[i], -1, add_sample_token, &t);
      caml_words_read_clear (&t.reader);
      CamlWordSample *s = &run->word_samples[i];
      s->n_words = (int) t.words->len;
      g_ptr_array_add (t.words, NULL);
      s->words = (char **) g_ptr_array_free (t.words, FALSE);
      s->ids = (int *) g_array_free (t.ids, FALSE);
      s->read = (gboolean *) g_array_free (t.read, FALSE);
      s->more = t.total - s->n_words;
      s->label = test->n_classes > 0 ? (int) test->y[i] : -1;
      s->aligned = caml_report_text_aligned (test, i);
      run->word_probs[i] = NAN;
    }
}

static CamlRun *run_new (const CamlExperiment *exp, CamlRunData *data, int grid,
                         int parts_preferred, CamlRunNotify notify, gpointer notify_data,
                         CamlModel *model, GError **error);

CamlRun *
caml_run_new (const CamlExperiment *exp, CamlRunData *data, int grid, int parts_preferred,
              CamlRunNotify notify, gpointer notify_data, GError **error)
{
  CamlModel *model = caml_experiment_build_model_for (exp, data->train, error);
  if (model == NULL)
    return NULL;
  return run_new (exp, data, grid, parts_preferred, notify, notify_data, model, error);
}

CamlRun *
caml_run_new_for_weights (const CamlExperiment *exp, CamlRunData *data, int grid,
                          int parts_preferred, CamlRunNotify notify, gpointer notify_data,
                          GError **error)
{
  CamlModel *model = caml_experiment_build_model (exp, &data->train->x_shape, error);
  if (model == NULL)
    return NULL;
  caml_model_set_vocab (model, data->train->vocab);
  return run_new (exp, data, grid, parts_preferred, notify, notify_data, model, error);
}

static CamlRun *
run_new (const CamlExperiment *exp, CamlRunData *data, int grid, int parts_preferred,
         CamlRunNotify notify, gpointer notify_data, CamlModel *model, GError **error)
{
  CamlCheckpoint *checkpoint = caml_checkpoint_new (model, error);
  if (checkpoint == NULL)
    {
      caml_model_free (model);
      return NULL;
    }

  CamlRun *run = g_new0 (CamlRun, 1);
  run->exp = caml_experiment_copy (exp);
  run->data = caml_run_data_ref (data);
  run->model = model;
  run->word_vectors = model->n_word_vectors;
  run->grid = MAX (grid, 2);
  run->notify = notify;
  run->notify_data = notify_data;
  g_mutex_init (&run->lock);
  g_mutex_init (&run->sample_lock);
  run->trainer = caml_trainer_new (run->exp, model, data->train, data->test);
  caml_trainer_set_progress_func (run->trainer, run_progress, run, 1);
  run->lr = exp->optimizer.lr;
  run->em_steps = exp->optimizer.em_steps;
  run->checkpoint = checkpoint;
  run->sigma = g_ptr_array_new_with_free_func ((GDestroyNotify) caml_sigma_snapshot_free);
  run->sigma_auc = g_array_new (FALSE, FALSE, sizeof (double));
  run->parts_layer = -1;
  run->sampled_parts_layer = -1;
  run->sigma_set = data->test != NULL && data->test->n > 0 ? data->test : data->train;
  run->sigma_layer = data->train->x_shape.ndim == 3 && data->train->x_shape.dims[0] == 1
                     ? caml_report_sigma_layer (model) : -1;
  if (run->sigma_layer >= 0)
    caml_report_sigma_source (model, run->sigma_layer, &run->sigma_source);
  if (run->sigma_layer >= 0)
    caml_trainer_with_model (run->trainer, sample_sigma, run);   /* the untrained maps */
  run->inspect = caml_run_inspect_new (model, run->sigma_set);
  caml_run_inspect_sample (run->inspect, run->trainer);   /* the untrained gates */

  run->n_words = data->train->vocab != NULL ? caml_vocab_size (data->train->vocab) : 0;
  run->words = g_new0 (float, MAX (run->n_words, 1));
  run->work_words = g_new0 (float, MAX (run->n_words, 1));
  run->words_layer = caml_report_word_chi (model, data->train->vocab, run->words);
  if (run->words_layer < 0 && data->test != NULL && data->test->texts != NULL
      && (run->words_layer = caml_report_token_gate_layer (model, data->test)) >= 0)
    {
      run->words_per_position = TRUE;
      run->words_steps = model->input.dims[0];
      run->n_words_mean = MIN (data->test->n, WORDS_MEAN);
      run->work_token_chi = g_new (float, (size_t) run->n_words_mean * run->words_steps);
    }
  if (run->words_layer >= 0)
    {
      make_word_samples (run);
      sample_words (model, run);   /* the untrained gates, and the samples' P(1) */
    }

  run->surface = caml_shape_is_plane (&model->input)
                 && caml_shape_size (caml_model_output_shape (model)) == 1
                 && data->train->n_classes == 0;
  if (run->surface)
    {
      size_t cells = (size_t) run->grid * run->grid;
      find_chi_layers (run);
      run->parts_layer = caml_report_parts_layer (model, parts_preferred);
      run->work_fit = g_new0 (float, cells);
      run->scratch = g_new0 (float, cells);
      run->work_chi = g_new0 (float, MAX (run->n_chi, 1) * cells);
      run->fit = g_new0 (float, cells);
      run->chi = g_new0 (float, MAX (run->n_chi, 1) * cells);
      run->work_sensitive_part = g_new0 (float, cells);
      run->work_free_part = g_new0 (float, cells);
      run->sensitive_part = g_new0 (float, cells);
      run->free_part = g_new0 (float, cells);
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
  caml_run_inspect_free (run->inspect);
  caml_checkpoint_free (run->checkpoint);
  caml_model_free (run->model);
  caml_run_data_unref (run->data);
  caml_experiment_free (run->exp);
  g_free (run->work_fit);
  g_free (run->work_chi);
  g_free (run->scratch);
  g_free (run->fit);
  g_free (run->chi);
  g_free (run->work_sensitive_part);
  g_free (run->work_free_part);
  g_free (run->sensitive_part);
  g_free (run->free_part);
  g_free (run->auc_maps);
  g_free (run->auc_images);
  g_free (run->sigma_images);
  g_free (run->words);
  g_free (run->work_words);
  g_free (run->work_token_chi);
  g_free (run->token_chi);
  for (int i = 0; i < run->n_word_samples; i++)
    {
      g_strfreev (run->word_samples[i].words);
      g_free (run->word_samples[i].ids);
      g_free (run->word_samples[i].read);
    }
  g_free (run->word_samples);
  g_free (run->word_probs);
  g_ptr_array_unref (run->sigma);
  g_array_unref (run->sigma_auc);
  g_mutex_clear (&run->lock);
  g_mutex_clear (&run->sample_lock);
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

void
caml_run_set_name (CamlRun *run, const char *name)
{
  char *old = run->exp->name;
  run->exp->name = g_strdup (name);
  g_free (old);
}

const CamlDataset *
caml_run_get_train (CamlRun *run)
{
  return run->data->train;
}

CamlRunData *
caml_run_get_data (CamlRun *run)
{
  return run->data;
}

static void
copy_weights_cb (CamlModel *model, gpointer user_data)
{
  float **copy = user_data;
  *copy = g_memdup2 (model->w, MAX (model->n_weights, 1) * sizeof (float));
}

float *
caml_run_copy_weights (CamlRun *run)
{
  float *copy = NULL;
  caml_trainer_with_model (run->trainer, copy_weights_cb, &copy);
  return copy;
}

size_t
caml_run_get_n_weights (CamlRun *run)
{
  return run->model->n_weights;
}

int
caml_run_get_word_vectors (CamlRun *run, int *n_words)
{
  const CamlVocab *vocab = run->data->train->vocab;

  if (n_words != NULL)
    *n_words = vocab != NULL ? caml_vocab_size (vocab) : 0;
  return run->word_vectors;
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

long
caml_run_get_surface_step (CamlRun *run)
{
  return run->copied_surface_step;
}

gboolean
caml_run_copy_surface (CamlRun *run, guint64 *version, float *fit, float *chi,
                       float *sensitive_part, float *free_part, int *parts_layer)
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
      if (sensitive_part != NULL && run->sampled_parts_layer >= 0)
        memcpy (sensitive_part, run->sensitive_part, cells * sizeof (float));
      if (free_part != NULL && run->sampled_parts_layer >= 0)
        memcpy (free_part, run->free_part, cells * sizeof (float));
      if (parts_layer != NULL)
        *parts_layer = run->sampled_parts_layer;
      *version = run->version;
      run->copied_surface_step = run->surface_step;
    }
  g_mutex_unlock (&run->lock);
  return fresh;
}

int
caml_run_set_parts_layer (CamlRun *run, int preferred)
{
  if (!run->surface)
    return -1;
  /* Layer types are fixed once the model is built: reading them here, on
   * the main thread, races with nothing. */
  int layer = caml_report_parts_layer (run->model, preferred);
  g_atomic_int_set (&run->parts_layer, layer);
  return layer;
}

gboolean
caml_run_parts_pending (CamlRun *run)
{
  g_mutex_lock (&run->lock);
  gboolean pending = run->surface
                     && run->sampled_parts_layer != g_atomic_int_get (&run->parts_layer);
  g_mutex_unlock (&run->lock);
  return pending;
}

gboolean
caml_run_put_parts (CamlRun *run, int layer, const float *sensitive_part,
                    const float *free_part)
{
  size_t cells = (size_t) run->grid * run->grid;

  g_mutex_lock (&run->lock);
  gboolean taken = run->surface && layer >= 0 && layer == g_atomic_int_get (&run->parts_layer)
                   && run->sampled_parts_layer != layer;
  if (taken)
    {
      memcpy (run->sensitive_part, sensitive_part, cells * sizeof (float));
      memcpy (run->free_part, free_part, cells * sizeof (float));
      run->sampled_parts_layer = layer;
      run->version++;
    }
  g_mutex_unlock (&run->lock);
  return taken;
}

int
caml_run_get_parts_layer (CamlRun *run)
{
  return g_atomic_int_get (&run->parts_layer);
}

gboolean
caml_run_has_sigma (CamlRun *run)
{
  return run->sigma_layer >= 0;
}

const CamlSigmaSource *
caml_run_get_sigma_source (CamlRun *run)
{
  return run->sigma_layer >= 0 ? &run->sigma_source : NULL;
}

int
caml_run_get_sigma_count (CamlRun *run, guint64 *version)
{
  g_mutex_lock (&run->lock);
  int n = (int) run->sigma->len;
  if (version != NULL)
    *version = run->sigma_version;
  g_mutex_unlock (&run->lock);
  return n;
}

/* A snapshot of the history with its images (run->lock held). */
static CamlSigmaSnapshot *
sigma_copy (CamlRun *run, const CamlSigmaSnapshot *src)
{
  CamlSigmaSnapshot *snap = g_memdup2 (src, sizeof *src);
  snap->images = g_memdup2 (run->sigma_images,
                            (size_t) src->count * src->height * src->width * sizeof (float));
  snap->maps = g_memdup2 (src->maps, (size_t) src->count * src->map_h * src->map_w * sizeof (float));
  return snap;
}

CamlSigmaSnapshot *
caml_run_copy_sigma (CamlRun *run, int index)
{
  CamlSigmaSnapshot *snap = NULL;

  g_mutex_lock (&run->lock);
  if (index >= 0 && (guint) index < run->sigma->len)
    snap = sigma_copy (run, g_ptr_array_index (run->sigma, index));
  g_mutex_unlock (&run->lock);
  return snap;
}

int
caml_run_copy_sigma_auc (CamlRun *run, double **steps, double **auc)
{
  g_mutex_lock (&run->lock);
  int n = (int) run->sigma->len;
  *steps = g_new (double, MAX (n, 1));
  *auc = g_new (double, MAX (n, 1));
  for (int i = 0; i < n; i++)
    {
      (*steps)[i] = ((CamlSigmaSnapshot *) g_ptr_array_index (run->sigma, i))->step;
      (*auc)[i] = g_array_index (run->sigma_auc, double, i);
    }
  g_mutex_unlock (&run->lock);
  return n;
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
  if (io.ok)
    {
      caml_checkpoint_set_start (run->checkpoint, run->model);
      run->word_vectors = 0;   /* the file's rows, not the vectors */
    }
  if (io.ok && run->surface)
    caml_trainer_with_model (run->trainer, sample_model, run);
  if (io.ok && run->sigma_layer >= 0)
    caml_trainer_with_model (run->trainer, sample_sigma, run);
  if (io.ok && run->words_layer >= 0)
    caml_trainer_with_model (run->trainer, sample_words, run);
  if (io.ok)
    caml_run_inspect_sample (run->inspect, run->trainer);
  return io.ok;
}

gboolean
caml_run_load_state (CamlRun *run, const char *path, GError **error)
{
  if (!caml_trainer_state_load (run->trainer, path, error))
    return FALSE;   /* the trainer is as it was */
  /* Where a divergence before the next healthy evaluation goes back to
   * (the saved evaluations count towards the best loss). A copy that
   * cannot be made leaves the run as built: a new trainer. */
  if (!caml_checkpoint_take (run->checkpoint, run->trainer, error))
    {
      caml_trainer_free (run->trainer);
      run->trainer = caml_trainer_new (run->exp, run->model, run->data->train, run->data->test);
      caml_trainer_set_progress_func (run->trainer, run_progress, run, 1);
      return FALSE;
    }

  /* The surface, the σ-maps and the words' gates sampled so far (by
   * caml_run_new and caml_run_load_weights) are of these weights but at
   * step 0: taken again at the saved step. */
  if (run->surface)
    caml_trainer_with_model (run->trainer, sample_model, run);
  if (run->sigma_layer >= 0)
    {
      g_mutex_lock (&run->lock);
      g_ptr_array_set_size (run->sigma, 0);
      g_array_set_size (run->sigma_auc, 0);
      g_mutex_unlock (&run->lock);
      caml_trainer_with_model (run->trainer, sample_sigma, run);
    }
  if (run->words_layer >= 0)
    caml_trainer_with_model (run->trainer, sample_words, run);
  return TRUE;
}

const char *const caml_run_resumable_files[] = {
  "experiment.json", "model.weights", "trainer.state", NULL
};

struct _CamlRunResumable {
  CamlExperiment       *exp;     /* as saved */
  CamlRunData          *data;    /* the vocabulary and input shape of the weights file */
  CamlTrainerStateCopy *state;   /* with the weights it goes with */
};

char *
caml_run_why_not_resumable (CamlRun *run)
{
  CamlProgress p;
  caml_run_get_progress (run, &p);
  switch (p.state)
    {
    case CAML_TRAINER_FINISHED:
    case CAML_TRAINER_STOPPED:
      return p.step > 0 ? NULL : g_strdup ("the run stopped before its first step");
    case CAML_TRAINER_FAILED:
      /* rolled back, optimizer and batch order too: saved at that step */
      return p.step > 0 ? NULL : g_strdup ("the run diverged at once: it has no step to keep");
    case CAML_TRAINER_IDLE:
      return g_strdup ("the run has not trained in this window yet");
    default:
      return g_strdup ("the run is under way: stop it first");
    }
}

CamlRunResumable *
caml_run_take_resumable (CamlRun *run, GError **error)
{
  g_autofree char *why = caml_run_why_not_resumable (run);
  if (why != NULL)
    {
      g_set_error_literal (error, CAML_ERROR, CAML_ERROR_INVALID, why);
      return NULL;
    }
  /* Copies only: the weights (the averaged ones, when averaging: a run that
   * ended has them installed), the optimizer's state, losses and rows. */
  CamlTrainerStateCopy *state = caml_trainer_state_copy (run->trainer, error);
  if (state == NULL)
    return NULL;
  CamlRunResumable *saved = g_new0 (CamlRunResumable, 1);
  saved->state = state;
  saved->data = caml_run_data_ref (run->data);
  saved->exp = caml_experiment_copy (run->exp);
  saved->exp->optimizer.lr = run->lr;                 /* as the run has them now */
  saved->exp->optimizer.em_steps = run->em_steps;
  CamlProgress p;
  caml_run_get_progress (run, &p);
  saved->exp->steps = (int) MIN (p.total_steps, G_MAXINT);
  return saved;
}

long
caml_run_resumable_get_step (const CamlRunResumable *saved)
{
  return caml_trainer_state_copy_get_step (saved->state);
}

void
caml_run_resumable_free (CamlRunResumable *saved)
{
  if (saved == NULL)
    return;
  caml_experiment_free (saved->exp);
  caml_run_data_unref (saved->data);
  caml_trainer_state_copy_free (saved->state);
  g_free (saved);
}

/* The dir's names other than a saved run's (hidden ones aside: a save's
 * temporary is one), as an error. */
static gboolean
check_run_dir (const char *dir, GError **error)
{
  if (g_mkdir_with_parents (dir, 0777) != 0)
    {
      int code = errno;
      g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: cannot make the folder: %s", dir,
                   g_strerror (code));
      return FALSE;
    }
  g_autoptr (GError) dir_error = NULL;
  g_autoptr (GDir) d = g_dir_open (dir, 0, &dir_error);
  if (d == NULL)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s", dir_error->message);
      return FALSE;
    }
  g_autoptr (GString) others = g_string_new (NULL);
  int n_others = 0;
  for (const char *name; (name = g_dir_read_name (d)) != NULL;)
    if (name[0] != '.' && !g_strv_contains (caml_run_resumable_files, name) && n_others++ < 3)
      g_string_append_printf (others, "%s%s", others->len > 0 ? ", " : "", name);
  if (n_others > 0)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "%s holds other files than a saved run's (%s%s): choose an empty or new "
                   "folder — a run is saved as experiment.json, model.weights and trainer.state",
                   dir, others->str, n_others > 3 ? ", …" : "");
      return FALSE;
    }
  return TRUE;
}

gboolean
caml_run_resumable_write (const CamlRunResumable *saved, const char *dir, GError **error)
{
  if (!check_run_dir (dir, error))
    return FALSE;

  return caml_trainer_state_copy_write (saved->state, saved->exp, saved->data->train, dir,
                                        error);
}

gboolean
caml_run_save_resumable (CamlRun *run, const char *dir, GError **error)
{
  g_autoptr (CamlRunResumable) saved = caml_run_take_resumable (run, error);
  return saved != NULL && caml_run_resumable_write (saved, dir, error);
}

int
caml_run_get_words_layer (CamlRun *run)
{
  return run->words_layer;
}

const CamlWordSample *
caml_run_get_word_samples (CamlRun *run, int *n)
{
  *n = run->n_word_samples;
  return run->word_samples;
}

char *
caml_run_describe_words (CamlRun *run, char **texts_read)
{
  *texts_read = NULL;
  if (run->words_layer < 0)
    return NULL;
  if (caml_run_words_per_position (run))
    *texts_read = run->n_words_mean == 1
                  ? g_strdup_printf ("the first %s text", caml_report_evaluated_on (run->exp))
                  : g_strdup_printf ("the first %d %s texts", run->n_words_mean,
                                     caml_report_evaluated_on (run->exp));
  return g_strdup_printf ("layer %d (%s)", run->words_layer,
                          run->model->layers[run->words_layer]->ops->title);
}

gboolean
caml_run_words_per_position (CamlRun *run)
{
  return run->words_per_position;
}

gboolean
caml_run_copy_words (CamlRun *run, guint64 *version, float *chi, long *step,
                     float *probabilities, float *token_chi)
{
  g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&run->lock);
  if (run->words_layer < 0 || run->words_version == *version)
    return FALSE;
  memcpy (chi, run->words, (size_t) run->n_words * sizeof (float));
  if (probabilities != NULL && run->n_word_samples > 0)
    memcpy (probabilities, run->word_probs, (size_t) run->n_word_samples * sizeof (float));
  if (token_chi != NULL && run->n_word_samples > 0)
    memcpy (token_chi, run->token_chi, (size_t) run->n_word_samples * WORDS_SHOWN * sizeof (float));
  if (step != NULL)
    *step = run->words_step;
  *version = run->words_version;
  return TRUE;
}

CamlLayerStats *
caml_run_copy_layer_stats (CamlRun *run, guint64 *version)
{
  return caml_run_inspect_copy (run->inspect, version);
}

double
caml_run_get_sample_seconds (CamlRun *run)
{
  g_mutex_lock (&run->lock);
  double s = run->sample_seconds;
  g_mutex_unlock (&run->lock);
  return s;
}

/* ------------------------------------------------- live settings, history */

void
caml_run_set_lr (CamlRun *run, double lr)
{
  run->lr = lr;
  caml_trainer_set_lr (run->trainer, lr);
}

void
caml_run_set_em_steps (CamlRun *run, int em_steps)
{
  run->em_steps = em_steps;
  caml_trainer_set_em_steps (run->trainer, em_steps);
}

double
caml_run_get_lr (CamlRun *run)
{
  return run->lr;
}

int
caml_run_get_em_steps (CamlRun *run)
{
  return run->em_steps;
}

void
caml_run_get_progress (CamlRun *run, CamlProgress *p)
{
  caml_trainer_get_progress (run->trainer, p);
}

float *
caml_run_copy_losses (CamlRun *run, long *n_steps)
{
  return caml_trainer_copy_losses (run->trainer, n_steps);
}

CamlEvalRow *
caml_run_copy_rows (CamlRun *run, int *n_rows)
{
  return caml_trainer_copy_rows (run->trainer, n_rows);
}

GError *
caml_run_get_error (CamlRun *run)
{
  return caml_trainer_get_error (run->trainer);
}

gboolean
caml_run_get_divergence (CamlRun *run, CamlDivergence *divergence)
{
  return caml_trainer_get_divergence (run->trainer, divergence);
}

gboolean
caml_run_extend (CamlRun *run, int steps, GError **error)
{
  if (!caml_trainer_extend (run->trainer, steps, TRUE, error))
    return FALSE;
  run->exp->steps = steps;
  return TRUE;
}

long
caml_run_get_checkpoint_step (CamlRun *run)
{
  /* a divergence rolled back to before it: Continue goes on from there */
  return caml_checkpoint_get_step (run->checkpoint, run->trainer);
}

void
caml_run_set_keep_checkpoints (CamlRun *run, gboolean keep)
{
  run->no_checkpoints = !keep;
}

gboolean
caml_run_continue (CamlRun *run, double lr, GError **error)
{
  CamlProgress p;

  caml_trainer_get_progress (run->trainer, &p);
  if (p.state != CAML_TRAINER_FAILED)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "only a run that diverged can be continued");
      return FALSE;
    }
  if (!(lr > 0))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "the learning rate must be positive");
      return FALSE;
    }
  caml_trainer_join (run->trainer);   /* ended already: no more reports */

  /* Rolled back to the checkpoint or before it (the loss of the step right
   * after the checkpoint failed: the checkpoint would fail again, whatever
   * the rate): the trainer itself goes on from where it rolled back to, in
   * that step's state, which becomes the checkpoint. */
  CamlDivergence d;
  if (caml_trainer_get_divergence (run->trainer, &d)
      && d.rolled_back_to <= caml_checkpoint_get_step (run->checkpoint, NULL))
    {
      int old_rows = caml_checkpoint_get_rows_seen (run->checkpoint);
      /* the trainer's state either way; its rows are those seen by the
       * reports of the thread started next */
      if (!caml_checkpoint_take (run->checkpoint, run->trainer, error))
        return FALSE;
      double old_lr = run->lr;
      caml_run_set_lr (run, lr);
      run->last_sample_us = 0;
      if (!caml_trainer_start (run->trainer, FALSE, error))
        {
          caml_run_set_lr (run, old_lr);   /* still failed, as it was */
          caml_checkpoint_set_rows_seen (run->checkpoint, old_rows);
          return FALSE;
        }
      run->exp->optimizer.lr = lr;
      return TRUE;
    }

  /* A new trainer at the new rate, in the state of the checkpoint: the
   * weights, the optimizer's moments or sums, the em_steps phase, the batch
   * order, the history up to there — as the run stopped at that step and
   * resumed would be. The steps after it are redone. */
  size_t weight_bytes = run->model->n_weights * sizeof (float);
  g_autofree float *failed_w = g_try_malloc (MAX (weight_bytes, 1));
  if (failed_w == NULL)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "no memory for a copy of the weights (%zu bytes)", weight_bytes);
      return FALSE;
    }
  memcpy (failed_w, run->model->w, weight_bytes);
  double old_lr = run->exp->optimizer.lr;
  int old_em_steps = run->exp->optimizer.em_steps;
  run->exp->optimizer.lr = lr;
  run->exp->optimizer.em_steps = run->em_steps;
  const CamlRunData *data = run->data;
  CamlTrainer *trainer = caml_trainer_new (run->exp, run->model, data->train, data->test);
  gboolean ok = caml_checkpoint_restore (run->checkpoint, trainer, error);
  /* The new trainer's reports read run->trainer and the rows seen: both
   * are set before its thread starts. The failed trainer's has ended. */
  CamlTrainer *failed = run->trainer;
  int failed_rows = caml_checkpoint_get_rows_seen (run->checkpoint);
  double failed_lr = run->lr;
  if (ok)
    {
      run->trainer = trainer;
      run->lr = lr;
      int n_rows = 0;
      g_free (caml_trainer_copy_rows (trainer, &n_rows));
      caml_checkpoint_set_rows_seen (run->checkpoint, n_rows);
      caml_trainer_set_progress_func (trainer, run_progress, run, 1);
      /* The surface of the weights it goes on from is sampled by the
       * trainer's thread at its first report (a forward over the grid is
       * no work for the caller's, the main, thread). */
      run->last_sample_us = 0;
      ok = caml_trainer_start (trainer, FALSE, error);
    }
  if (!ok)
    {
      /* The failed run stays as it was, with the weights it rolled back to. */
      run->trainer = failed;
      caml_checkpoint_set_rows_seen (run->checkpoint, failed_rows);
      run->lr = failed_lr;
      caml_trainer_free (trainer);
      memcpy (run->model->w, failed_w, weight_bytes);
      run->exp->optimizer.lr = old_lr;
      run->exp->optimizer.em_steps = old_em_steps;
      return FALSE;
    }
  caml_trainer_free (failed);
  return TRUE;
}
