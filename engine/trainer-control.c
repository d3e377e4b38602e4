/* trainer-control.c — the trainer's public API: creation, the checks and
 * allocations before a start, start, extend, pause, step, stop, join, and
 * what callers read or change while it runs (trainer.c runs the loop). */
#include <math.h>

#include "parallel.h"
#include "trainer-private.h"

/* Frees what trainer_alloc allocates. */
static void
trainer_release (CamlTrainer *trainer)
{
  g_clear_pointer (&trainer->opt, caml_optimizer_free);
  g_clear_pointer (&trainer->bx, g_free);
  g_clear_pointer (&trainer->by, g_free);
  g_clear_pointer (&trainer->dpred, g_free);
  g_clear_pointer (&trainer->ebuf, g_free);
}

CamlTrainer *
caml_trainer_new (const CamlExperiment *exp, CamlModel *model,
                  const CamlDataset *train, const CamlDataset *test)
{
  CamlTrainer *trainer;

  g_return_val_if_fail (exp != NULL && model != NULL && train != NULL, NULL);

  trainer = g_new0 (CamlTrainer, 1);
  trainer->exp = exp;
  trainer->model = model;
  trainer->train = train;
  trainer->test = test;

  trainer->total_steps = MAX (exp->steps, 0);
  trainer->batch = (exp->batch_size <= 0 || exp->batch_size >= train->n)
                   ? train->n : exp->batch_size;
  trainer->eval_every = MAX (exp->eval_every, 0);
  trainer->loss = exp->loss;

  trainer->rng = g_rand_new_with_seed (0);   /* seeded from the experiment below */
  trainer->order = g_new (int, MAX (train->n, 1));
  caml_trainer_reset_order (trainer);

  /* The trainer is the model's only user while it runs, and all its
   * gradients come from caml_model_backward: token tables can be handled
   * row by row. */
  model->sparse_grads = TRUE;
  trainer->out_size = caml_shape_size (caml_model_output_shape (model));
  trainer->undo_step = -1;
  trainer->first_loss = -1.0f;

  g_mutex_init (&trainer->lock);
  g_cond_init (&trainer->cond);
  trainer->state = CAML_TRAINER_IDLE;
  trainer->last_loss = NAN;
  trainer->losses = g_array_new (FALSE, FALSE, sizeof (float));
  trainer->rows = g_array_new (FALSE, FALSE, sizeof (CamlEvalRow));
  trainer->progress_every = 1;
  return trainer;
}

void
caml_trainer_free (CamlTrainer *trainer)
{
  if (trainer == NULL)
    return;
  caml_trainer_stop (trainer);
  caml_trainer_join (trainer);

  trainer_release (trainer);
  caml_average_free (trainer->average);
  g_rand_free (trainer->rng);
  g_free (trainer->order);
  g_array_unref (trainer->losses);
  g_array_unref (trainer->rows);
  g_clear_error (&trainer->error);
  g_mutex_clear (&trainer->lock);
  g_cond_clear (&trainer->cond);
  g_free (trainer);
}

void
caml_trainer_set_progress_func (CamlTrainer *trainer, CamlProgressFunc func,
                                gpointer user_data, int every)
{
  g_mutex_lock (&trainer->lock);
  trainer->progress_func = func;
  trainer->progress_data = user_data;
  trainer->progress_every = MAX (every, 0);
  g_mutex_unlock (&trainer->lock);
}

/* The data must fit the model before a thread starts on it. */
/* The targets suit the loss: class indices 0 … D − 1 under softmax
 * cross-entropy (which reads z[label]; XOR's 0/1 targets qualify, the
 * surface's real values do not), values in [0, 1] under sigmoid
 * cross-entropy, finite numbers under mse. */
static gboolean
targets_check (const CamlDataset *set, const char *name, CamlLossKind loss, size_t d,
               GError **error)
{
  size_t count = (size_t) set->n * set->y_width;
  for (size_t k = 0; k < count; k++)
    {
      float y = set->y[k];
      const char *problem = NULL;
      switch (loss)
        {
        case CAML_LOSS_SOFTMAX_XENT:
          if (!(y >= 0.0f && y < (float) d && y == floorf (y)))
            problem = "is not a class of the model's outputs";
          break;
        case CAML_LOSS_SIGMOID_XENT:
          if (!(y >= 0.0f && y <= 1.0f))
            problem = "is outside [0, 1]";
          break;
        default:
          if (!isfinite (y))
            problem = "is not finite";
        }
      if (problem != NULL)
        {
          g_autofree char *classes = loss == CAML_LOSS_SOFTMAX_XENT
                                     ? g_strdup_printf (", classes 0…%zu", d - 1)
                                     : g_strdup ("");
          g_autofree char *place = caml_dataset_sample_place (set, (int) (k / set->y_width),
                                                              name);
          g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                       "%s%s the target %g, which %s (the model has %zu output%s%s; loss %s)",
                       place, set->source != NULL && set->lines != NULL ? ": the sample has"
                       : " has", (double) y, problem, d, d == 1 ? "" : "s", classes,
                       caml_loss_names[loss]);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
trainer_check (CamlTrainer *trainer, GError **error)
{
  const CamlModel *model = trainer->model;
  const CamlDataset *sets[2] = { trainer->train, trainer->test };
  const char *names[2] = { "training set", "test set" };
  int want_y = caml_loss_target_width (trainer->loss, (int) trainer->out_size);

  if (trainer->train->n <= 0)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "the training set is empty");
      return FALSE;
    }
  for (int i = 0; i < 2; i++)
    {
      if (sets[i] == NULL)
        continue;
      if (!caml_shape_equal (&sets[i]->x_shape, &model->input))
        {
          g_autofree char *a = caml_shape_to_string (&sets[i]->x_shape);
          g_autofree char *b = caml_shape_to_string (&model->input);
          g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                       "the %s has inputs of shape %s but the model takes %s",
                       names[i], a, b);
          return FALSE;
        }
      if (sets[i]->y_width != want_y)
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                       "the %s has targets of width %d but the model's %zu outputs "
                       "under the %s loss need %d",
                       names[i], sets[i]->y_width, trainer->out_size,
                       caml_loss_names[trainer->loss], want_y);
          return FALSE;
        }
      if (!targets_check (sets[i], names[i], trainer->loss, trainer->out_size, error))
        return FALSE;
    }
  return TRUE;
}

/* The batch buffers of the largest forward the run makes (a training batch
 * or an evaluation chunk), allocated before the thread starts, where a size
 * no memory holds is an error rather than an abort on the trainer thread.
 * Only while nothing else uses the model (not running). */
static gboolean
trainer_reserve (CamlTrainer *trainer, GError **error)
{
  int largest = MAX (trainer->train->n, trainer->test != NULL ? trainer->test->n : 0);
  int chunk = MIN (caml_trainer_eval_chunk (trainer->model, &trainer->train->x_shape), largest);
  return caml_model_reserve (trainer->model, MAX (trainer->batch, chunk), error);
}

/* *bytes = a × b floats (each at least 1); FALSE when that overflows. */
static gboolean
floats_bytes (size_t a, size_t b, size_t *bytes)
{
  size_t count = 0;
  return g_size_checked_mul (&count, MAX (a, 1), MAX (b, 1))
         && g_size_checked_mul (bytes, count, sizeof (float));
}

/* "<what> <size><detail>, which cannot be allocated"; size 0: overflow. */
static void
set_alloc_error (GError **error, size_t bytes, const char *what, const char *detail)
{
  g_autofree char *need = bytes == 0 ? g_strdup ("more memory than can be addressed")
                                     : g_format_size ((guint64) bytes);
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
               "%s %s%s, which cannot be allocated", what, need, detail);
}

/* What the run needs besides the model's batch buffers, all sized by the
 * batch or the model — the batch copied out of the training set with its
 * targets and the loss gradient, the optimizer's state (caml_optimizer_state_floats
 * a weight), the weights before the latest update, a text set's evaluation
 * rows —
 * allocated by the first start, where a size no memory holds is an error
 * rather than an abort. Only while nothing else uses them (not running). */
static gboolean
trainer_alloc (CamlTrainer *trainer, GError **error)
{
  const CamlModel *model = trainer->model;
  const CamlDataset *train = trainer->train, *test = trainer->test;
  size_t b = (size_t) trainer->batch, x_size = caml_shape_size (&train->x_shape);
  size_t bx = 0, by = 0, dpred = 0, batch = 0, ebuf = 0;

  if (trainer->opt != NULL)   /* a restart: allocated already */
    return TRUE;

  /* Image and text sets hold no x: an evaluation gives a chunk's rows
   * (pixel values, padded ids) in ebuf. */
  int rows_n = MAX (train->x == NULL ? train->n : 0,
                    test != NULL && test->x == NULL ? test->n : 0);
  size_t rows = (size_t) MIN (caml_trainer_eval_chunk (model, &train->x_shape), rows_n);
  gboolean fits = floats_bytes (b, x_size, &bx) && floats_bytes (b, train->y_width, &by)
                  && floats_bytes (b, trainer->out_size, &dpred)
                  && g_size_checked_add (&batch, bx, by)
                  && g_size_checked_add (&batch, batch, dpred);

  /* The whole run against the memory there is, before any of it is
   * allocated: the model's weights, gradients and batch buffers (allocated
   * already), the optimizer's state with what undoes a step (the weights'
   * copy among it), the batch and the evaluation rows. */
  size_t weights = 0, state = 0, total = 0;
  size_t state_floats = (size_t) caml_optimizer_state_floats (&trainer->exp->optimizer);
  gboolean counted = fits && floats_bytes (model->n_weights, 2, &weights)
                     && floats_bytes (model->n_weights, state_floats, &state)
                     && (rows_n == 0 || floats_bytes (rows, x_size, &ebuf))
                     && g_size_checked_add (&total, weights, model->buffer_bytes)
                     && g_size_checked_add (&total, total, state)
                     && g_size_checked_add (&total, total, batch)
                     && g_size_checked_add (&total, total, ebuf);
  if (counted && total > caml_memory_limit ())
    {
      g_autofree char *need = g_format_size ((guint64) total);
      g_autofree char *need_weights = g_format_size ((guint64) weights);
      g_autofree char *need_buffers = g_format_size ((guint64) model->buffer_bytes);
      g_autofree char *need_state = g_format_size ((guint64) state);
      g_autofree char *need_batch = g_format_size ((guint64) batch + ebuf);
      g_autofree char *limit = caml_memory_limit_text ();
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "the run needs %s in all (the weights and their gradients %s, the "
                   "layers' buffers for a batch %s, the optimizer's state with the copy "
                   "kept to roll back a divergence %s, the batch %s), more than %s", need,
                   need_weights, need_buffers, need_state, need_batch, limit);
      return FALSE;
    }

  if (!fits || (trainer->bx = g_try_malloc (bx)) == NULL
      || (trainer->by = g_try_malloc (by)) == NULL
      || (trainer->dpred = g_try_malloc (dpred)) == NULL)
    {
      g_autofree char *what = g_strdup_printf ("the trainer's buffers for a batch of %zu "
                                               "sample%s need", b, b == 1 ? "" : "s");
      set_alloc_error (error, fits ? batch : 0, what, "");
      trainer_release (trainer);
      return FALSE;
    }

  trainer->opt = caml_optimizer_try_new (&trainer->exp->optimizer, model->n_weights, error);
  if (trainer->opt == NULL)
    {
      trainer_release (trainer);
      return FALSE;
    }

  fits = floats_bytes (rows, x_size, &ebuf);
  if (rows_n > 0 && (!fits || (trainer->ebuf = g_try_malloc (ebuf)) == NULL))
    {
      g_autofree char *what = g_strdup_printf ("the rows of an evaluation chunk of %zu "
                                               "sample%s need", rows, rows == 1 ? "" : "s");
      set_alloc_error (error, fits ? ebuf : 0, what, "");
      trainer_release (trainer);
      return FALSE;
    }
  return TRUE;
}

gboolean
caml_trainer_prepare (CamlTrainer *trainer, GError **error)
{
  return trainer_check (trainer, error) && trainer_reserve (trainer, error)
         && trainer_alloc (trainer, error);
}

/* A run that diverged, whose thread is done and that nobody stopped, may be
 * started again. */
static gboolean
trainer_can_restart_locked (CamlTrainer *trainer)
{
  return trainer->state == CAML_TRAINER_FAILED && trainer->done
         && !trainer->stop_requested;
}

/* Starts the thread on a trainer no thread uses (never started, or its
 * thread joined), allocating what the run needs first. Called with the lock
 * held; on failure the trainer is as it was. */
static gboolean
trainer_launch_locked (CamlTrainer *trainer, gboolean start_paused, GError **error)
{
  if (!trainer_reserve (trainer, error) || !trainer_alloc (trainer, error))
    return FALSE;
  CamlTrainerState before = trainer->state;
  gboolean was_done = trainer->done;
  trainer->done = FALSE;
  trainer->step_budget = 0;
  trainer->state = start_paused ? CAML_TRAINER_PAUSED : CAML_TRAINER_RUNNING;
  if (trainer->threads == 0)
    trainer->threads = caml_get_threads ();
  GThread *thread = g_thread_try_new ("caml-trainer", caml_trainer_thread, trainer, error);
  if (thread == NULL)
    {
      trainer->state = before;
      trainer->done = was_done;
      return FALSE;
    }
  trainer->thread = thread;
  trainer->loop_thread = thread;
  return TRUE;
}

gboolean
caml_trainer_start (CamlTrainer *trainer, gboolean start_paused, GError **error)
{
  if (!trainer_check (trainer, error))
    return FALSE;

  g_mutex_lock (&trainer->lock);
  gboolean again = trainer_can_restart_locked (trainer);
  if (again && trainer->thread != NULL)
    {
      /* The failed run's thread has ended: join it first. */
      GThread *old = g_steal_pointer (&trainer->thread);
      g_mutex_unlock (&trainer->lock);
      g_thread_join (old);
      g_mutex_lock (&trainer->lock);
      again = trainer_can_restart_locked (trainer);  /* unless another caller was quicker */
    }
  again = again && trainer->thread == NULL;
  if (!again && (trainer->state != CAML_TRAINER_IDLE || trainer->thread != NULL))
    {
      g_mutex_unlock (&trainer->lock);
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   trainer->state == CAML_TRAINER_FAILED
                   ? "the trainer was stopped after it failed; create a new one"
                   : "the trainer has already run; create a new one");
      return FALSE;
    }
  gboolean ok = trainer_launch_locked (trainer, start_paused, error);
  if (ok && again)
    {
      g_clear_error (&trainer->error);
      trainer->diverged = FALSE;
    }
  g_mutex_unlock (&trainer->lock);
  return ok;
}

gboolean
caml_trainer_extend (CamlTrainer *trainer, long total_steps, gboolean start_paused,
                     GError **error)
{
  if (!trainer_check (trainer, error))
    return FALSE;

  g_mutex_lock (&trainer->lock);
  const char *refused = trainer->state == CAML_TRAINER_FAILED
                        ? "the run diverged: started again, it goes on from its last good "
                          "weights"
                        : trainer->stop_requested && !trainer->done ? "the run is stopping"
                        : NULL;
  if (refused != NULL || total_steps <= trainer->step)
    {
      if (refused != NULL)
        g_set_error_literal (error, CAML_ERROR, CAML_ERROR_INVALID, refused);
      else
        g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                     "the run has done %ld step%s already: %ld in all would add none",
                     trainer->step, trainer->step == 1 ? "" : "s", total_steps);
      g_mutex_unlock (&trainer->lock);
      return FALSE;
    }
  if (!trainer->done)
    {
      /* Not started, or under way or paused: the loop reads the end at
       * every step. */
      trainer->total_steps = total_steps;
      g_mutex_unlock (&trainer->lock);
      return TRUE;
    }
  /* Finished or stopped: the thread has ended or is in its last progress
   * report — join it first, so that its report and the new thread's do not
   * overlap. (A caml_trainer_join on another thread that took the handle
   * already would let them; the callers extend and join on one thread.) */
  GThread *old = g_steal_pointer (&trainer->thread);
  if (old != NULL)
    {
      g_mutex_unlock (&trainer->lock);
      g_thread_join (old);
      g_mutex_lock (&trainer->lock);
    }
  if (trainer->thread != NULL || !trainer->done || trainer->state == CAML_TRAINER_FAILED)
    {
      /* another caller extended or started it meanwhile */
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "the run was started again meanwhile");
      g_mutex_unlock (&trainer->lock);
      return FALSE;
    }
  long before = trainer->total_steps;
  gboolean stopped = trainer->stop_requested;
  trainer->total_steps = total_steps;
  trainer->stop_requested = FALSE;
  gboolean ok = trainer_launch_locked (trainer, start_paused, error);
  if (!ok)
    {
      trainer->total_steps = before;
      trainer->stop_requested = stopped;
    }
  g_mutex_unlock (&trainer->lock);
  return ok;
}

void
caml_trainer_pause (CamlTrainer *trainer)
{
  g_mutex_lock (&trainer->lock);
  if (trainer->state == CAML_TRAINER_RUNNING)
    trainer->state = CAML_TRAINER_PAUSED;
  g_mutex_unlock (&trainer->lock);
}

void
caml_trainer_resume (CamlTrainer *trainer)
{
  g_mutex_lock (&trainer->lock);
  if (trainer->state == CAML_TRAINER_PAUSED)
    {
      trainer->state = CAML_TRAINER_RUNNING;
      trainer->step_budget = 0;
      g_cond_broadcast (&trainer->cond);
    }
  g_mutex_unlock (&trainer->lock);
}

void
caml_trainer_step (CamlTrainer *trainer)
{
  g_mutex_lock (&trainer->lock);
  if (trainer->state == CAML_TRAINER_PAUSED)
    {
      trainer->step_budget++;
      g_cond_broadcast (&trainer->cond);
    }
  g_mutex_unlock (&trainer->lock);
}

void
caml_trainer_stop (CamlTrainer *trainer)
{
  g_mutex_lock (&trainer->lock);
  trainer->stop_requested = TRUE;
  if (trainer->state == CAML_TRAINER_IDLE)
    {
      trainer->state = CAML_TRAINER_STOPPED;
      trainer->done = TRUE;
    }
  g_cond_broadcast (&trainer->cond);
  g_mutex_unlock (&trainer->lock);
}

CamlTrainerState
caml_trainer_join (CamlTrainer *trainer)
{
  GThread *thread;
  CamlTrainerState state;

  g_mutex_lock (&trainer->lock);
  thread = trainer->thread;
  trainer->thread = NULL;
  if (thread == NULL)  /* another caller joins it, or it never started */
    while (!trainer->done && trainer->state != CAML_TRAINER_IDLE)
      g_cond_wait (&trainer->cond, &trainer->lock);
  g_mutex_unlock (&trainer->lock);

  if (thread != NULL)
    g_thread_join (thread);

  g_mutex_lock (&trainer->lock);
  state = trainer->state;
  g_mutex_unlock (&trainer->lock);
  return state;
}

void
caml_trainer_get_progress (CamlTrainer *trainer, CamlProgress *progress)
{
  g_mutex_lock (&trainer->lock);
  caml_trainer_snapshot_locked (trainer, progress);
  g_mutex_unlock (&trainer->lock);
}

CamlEvalRow *
caml_trainer_copy_rows (CamlTrainer *trainer, int *n_rows)
{
  CamlEvalRow *rows;

  g_mutex_lock (&trainer->lock);
  *n_rows = (int) trainer->rows->len;
  rows = g_memdup2 (trainer->rows->data, trainer->rows->len * sizeof (CamlEvalRow));
  g_mutex_unlock (&trainer->lock);
  return rows;
}

float *
caml_trainer_copy_losses (CamlTrainer *trainer, long *n_steps)
{
  float *losses;

  g_mutex_lock (&trainer->lock);
  *n_steps = (long) trainer->losses->len;
  losses = g_memdup2 (trainer->losses->data, trainer->losses->len * sizeof (float));
  g_mutex_unlock (&trainer->lock);
  return losses;
}

void
caml_trainer_set_replica (CamlTrainer *trainer, int rank, int ranks,
                          CamlReplicaReduce reduce, gpointer user_data)
{
  g_return_if_fail (trainer->thread == NULL && rank >= 0 && rank < MAX (ranks, 1));
  if (ranks <= 1)
    return;
  g_return_if_fail (reduce != NULL);
  trainer->rank = rank;
  trainer->ranks = ranks;
  trainer->reduce = reduce;
  trainer->reduce_data = user_data;
  trainer->shard_lo = (int) ((gint64) rank * trainer->batch / ranks);
  trainer->shard_n = (int) ((gint64) (rank + 1) * trainer->batch / ranks) - trainer->shard_lo;
  /* Dropout: each replica's own stream, from the seed, the layer and the
   * replica, so a run with the same rank count draws the same masks. */
  CamlModel *model = trainer->model;
  for (int i = 0; i < model->n_layers; i++)
    if (model->layers[i]->ops->seed != NULL)
      {
        guint64 mix = trainer->exp->seed * 0x9E3779B97F4A7C15ull + (guint64) i * 0xBF58476D1CE4E5B9ull
                      + (guint64) rank * 0x94D049BB133111EBull;
        model->layers[i]->ops->seed (model->layers[i], (guint32) (mix ^ (mix >> 32)));
      }
  /* a loaded state's place in the batches and masks, for this share */
  caml_trainer_redraw (trainer, trainer->step);
}

int
caml_trainer_get_threads (CamlTrainer *trainer)
{
  g_mutex_lock (&trainer->lock);
  int threads = trainer->threads > 0 ? trainer->threads : caml_get_threads ();
  g_mutex_unlock (&trainer->lock);
  return threads;
}

void
caml_trainer_set_lr (CamlTrainer *trainer, double lr)
{
  g_mutex_lock (&trainer->lock);
  trainer->lr = lr;
  trainer->lr_pending = TRUE;
  g_mutex_unlock (&trainer->lock);
}

void
caml_trainer_set_em_steps (CamlTrainer *trainer, int em_steps)
{
  g_mutex_lock (&trainer->lock);
  trainer->em_steps = em_steps;
  trainer->em_pending = TRUE;
  g_mutex_unlock (&trainer->lock);
}

gboolean
caml_trainer_get_divergence (CamlTrainer *trainer, CamlDivergence *divergence)
{
  g_mutex_lock (&trainer->lock);
  gboolean diverged = trainer->state == CAML_TRAINER_FAILED && trainer->diverged;
  if (diverged)
    *divergence = trainer->failure;
  g_mutex_unlock (&trainer->lock);
  return diverged;
}

GError *
caml_trainer_get_error (CamlTrainer *trainer)
{
  GError *error;

  g_mutex_lock (&trainer->lock);
  error = trainer->error ? g_error_copy (trainer->error) : NULL;
  g_mutex_unlock (&trainer->lock);
  return error;
}

void
caml_trainer_with_model (CamlTrainer *trainer,
                         void (*func) (CamlModel *model, gpointer user_data),
                         gpointer user_data)
{
  guint64 serial;

  g_mutex_lock (&trainer->lock);
  /* Not running, or called from the trainer thread (a progress function):
   * the model is free. A closure run while the trainer is not running may
   * change the weights (load a file before a restart): the next rollback
   * then cannot go back past them. From a progress function the latest
   * update is checked first, as for a posted closure: a diverged one is
   * rolled back, the closure sees the weights before it, and the run ends
   * FAILED after the progress function returns. */
  if (trainer->loop_thread == NULL || trainer->done
      || g_thread_self () == trainer->loop_thread)
    {
      gboolean idle = trainer->loop_thread == NULL || trainer->done;
      if (idle)
        trainer->undo_step = -1;
      else if (!caml_trainer_settle_locked (trainer))
        trainer->closure_failed = TRUE;
      g_mutex_unlock (&trainer->lock);
      /* From the trainer thread while it runs: the averaged weights, as a
       * posted closure gets them (a finished run has them installed). */
      gboolean swap = !idle && trainer->average != NULL;
      if (swap)
        caml_average_swap (trainer->average, trainer->model);
      func (trainer->model, user_data);
      if (swap)
        caml_average_swap (trainer->average, trainer->model);
      return;
    }

  /* One slot: wait for it, post, wake the thread (it may be paused). */
  while (trainer->model_func != NULL && !trainer->done)
    g_cond_wait (&trainer->cond, &trainer->lock);
  if (trainer->done)
    {
      trainer->undo_step = -1;
      g_mutex_unlock (&trainer->lock);
      func (trainer->model, user_data);
      return;
    }
  trainer->model_func = func;
  trainer->model_data = user_data;
  serial = ++trainer->model_posted;
  g_cond_broadcast (&trainer->cond);
  while (trainer->model_served < serial)
    g_cond_wait (&trainer->cond, &trainer->lock);
  g_mutex_unlock (&trainer->lock);
}
