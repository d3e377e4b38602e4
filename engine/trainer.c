/* trainer.c — the training loop, on its own thread.
 *
 * One GThread runs the loop. Everything the caller can see or change lives
 * behind `lock` (state, flags, the loss history, the evaluation rows, the
 * progress snapshot); `cond` wakes the thread when a command arrives and
 * wakes callers waiting for the thread. The model, the optimizer and the
 * batch buffers belong to the trainer thread while it runs: the lock is never
 * held during forward or backward, and caml_trainer_with_model hands its
 * closure to the thread, which runs it between two steps.
 *
 * Randomness: the trainer's own GRand, seeded from exp->seed, only orders the
 * batches (a Fisher–Yates permutation per epoch). The initial weights come
 * from the caller, so the same seed and the same weights give bit-identical
 * losses.
 *
 * Step numbers in error messages count from 1 ("step 1" is the first update);
 * CamlProgress.step and CamlEvalRow.step count the steps done.
 *
 * Divergence: every step checks the loss, the gradient block and the weights
 * after the update for NaN/Inf; trainer-diverge.c diagnoses a failure and
 * rolls the run back. Evaluation is in trainer-eval.c, the public API
 * (creation, start, pause, stop, accessors) in trainer-control.c.
 *
 * An update's weights are checked by the next step's loss. Weights that leave
 * the loop before a next step — the end of the run, a stop, a pause (after a
 * single step too), an evaluation, a caml_trainer_with_model closure from
 * another thread — have their latest update checked first by the loss they
 * give on its batch (caml_trainer_settle_locked): one more forward pass, so the
 * weights a stopped, paused or finished run holds passed the same check as
 * every other update's, and a diverged one is rolled back. The progress
 * function, called on the trainer thread after every step, is not given
 * the model (a check there would double the forward passes); a closure it
 * runs with caml_trainer_with_model gets the update checked first, like
 * every other closure, and an evaluation's row sees checked weights too.
 */
#include <math.h>
#include <string.h>

#include "parallel.h"
#include "trainer-private.h"

#define CAML_RATE_WINDOW  0.5   /* seconds of training per steps/s estimate */

/* ---------------------------------------------------------------- helpers */

/* Called with the lock held. */
double
caml_trainer_seconds_locked (CamlTrainer *trainer)
{
  double s = trainer->seconds_base;
  if (trainer->active_since != 0)
    s += (g_get_monotonic_time () - trainer->active_since) / 1e6;
  return s;
}

static void
trainer_set_active_locked (CamlTrainer *trainer, gboolean active)
{
  gint64 now = g_get_monotonic_time ();
  if (active && trainer->active_since == 0)
    trainer->active_since = now;
  else if (!active && trainer->active_since != 0)
    {
      trainer->seconds_base += (now - trainer->active_since) / 1e6;
      trainer->active_since = 0;
    }
}

void
caml_trainer_snapshot_locked (CamlTrainer *trainer, CamlProgress *p)
{
  memset (p, 0, sizeof *p);
  p->state = trainer->state;
  p->step = trainer->step;
  p->total_steps = trainer->total_steps;
  p->last_loss = trainer->last_loss;
  p->steps_per_second = trainer->steps_per_second;
  p->tokens = trainer->tokens;
  p->tokens_per_second = trainer->tokens_per_second;
  p->seconds = caml_trainer_seconds_locked (trainer);
  p->eval_seconds = trainer->eval_seconds;
  p->classification = trainer->train->n_classes > 0;
  p->n_rows = (int) trainer->rows->len;
  if (p->n_rows > 0)
    p->last_row = g_array_index (trainer->rows, CamlEvalRow, p->n_rows - 1);
}

/* Calls the progress function, if any, with a fresh snapshot. Called with
 * the lock held; releases it around the call so the function may use the
 * trainer's getters. */
static void
trainer_report_locked (CamlTrainer *trainer)
{
  CamlProgressFunc func = trainer->progress_func;
  gpointer data = trainer->progress_data;
  CamlProgress p;

  if (func == NULL)
    return;
  caml_trainer_snapshot_locked (trainer, &p);
  g_mutex_unlock (&trainer->lock);
  func (&p, data);
  g_mutex_lock (&trainer->lock);
}

/* Runs a pending with_model closure. Called with the lock held. */
static void
trainer_serve_model_locked (CamlTrainer *trainer)
{
  while (trainer->model_served < trainer->model_posted)
    {
      void (*func) (CamlModel *, gpointer) = trainer->model_func;
      gpointer data = trainer->model_data;
      g_mutex_unlock (&trainer->lock);
      if (trainer->average != NULL)
        caml_average_swap (trainer->average, trainer->model);
      func (trainer->model, data);
      if (trainer->average != NULL)
        caml_average_swap (trainer->average, trainer->model);
      g_mutex_lock (&trainer->lock);
      trainer->model_func = NULL;
      trainer->model_served++;
      g_cond_broadcast (&trainer->cond);
    }
}

/* Valid tokens of samples idx[0..n) of a text set, each at most T. */
static gint64
batch_tokens (const CamlDataset *set, const int *idx, int n)
{
  if (set->offsets == NULL)
    return 0;
  gint64 sum = 0;
  for (int i = 0; i < n; i++)
    sum += MIN (caml_dataset_length (set, idx[i]), set->x_shape.dims[0]);
  return sum;
}

/* Every batch is the whole training set, in its order: no shuffling. */
static gboolean
trainer_whole_set (const CamlTrainer *trainer)
{
  return trainer->batch >= trainer->train->n && trainer->train->x != NULL;
}

/* The next batch's place in the order: a new epoch when this one has too
 * few samples left, with a Fisher–Yates shuffle by the run's generator. */
static const int *
trainer_next_order (CamlTrainer *trainer)
{
  const CamlDataset *set = trainer->train;
  int b = trainer->batch;

  if (trainer->order_pos + b > set->n)
    {
      for (int i = set->n - 1; i > 0; i--)
        {
          int j = g_rand_int_range (trainer->rng, 0, i + 1);
          int t = trainer->order[i];
          trainer->order[i] = trainer->order[j];
          trainer->order[j] = t;
        }
      trainer->order_pos = 0;
    }
  const int *idx = trainer->order + trainer->order_pos;
  trainer->order_pos += b;
  return idx;
}

/* The batch order as at the start of the run. It has its own stream: the
 * seed plus a salt, so it does not replay the numbers that initialised the
 * weights. */
void
caml_trainer_reset_order (CamlTrainer *trainer)
{
  const CamlExperiment *exp = trainer->exp;
  guint32 seed[3] = { (guint32) exp->seed, (guint32) (exp->seed >> 32), 0x62617463 /* "batc" */ };

  g_rand_set_seed_array (trainer->rng, seed, 3);
  for (int i = 0; i < trainer->train->n; i++)
    trainer->order[i] = i;
  trainer->order_pos = trainer->train->n;  /* shuffle before the first batch */
}

void
caml_trainer_redraw (CamlTrainer *trainer, long steps)
{
  CamlModel *model = trainer->model;

  caml_trainer_reset_order (trainer);
  if (!trainer_whole_set (trainer))
    for (long s = 0; s < steps; s++)
      trainer_next_order (trainer);
  /* a replica's layers see its share of each batch */
  int per_step = trainer->ranks > 1 ? trainer->shard_n : trainer->batch;
  for (int i = 0; i < model->n_layers; i++)
    if (model->layers[i]->ops->advance != NULL)
      model->layers[i]->ops->advance (model->layers[i], (guint64) steps * per_step);
}

/* Next minibatch: pointers to (batch, ·) inputs and targets, and the
 * number of valid tokens in it (text data). */
static void
trainer_next_batch (CamlTrainer *trainer, const float **x, const float **y,
                    gint64 *tokens)
{
  const CamlDataset *set = trainer->train;
  int b = trainer->batch;

  *tokens = 0;
  if (trainer_whole_set (trainer))
    {
      *x = set->x;
      *y = set->y;
      return;
    }
  const int *idx = trainer_next_order (trainer);
  caml_dataset_gather (set, idx, b, trainer->bx, trainer->by);
  *tokens = batch_tokens (set, idx, b);
  *x = trainer->bx;
  *y = trainer->by;
}

/* One optimisation step `step` (0-based). On divergence the weights are the
 * last finite ones (caml_trainer_roll_back), trainer->divergence says where, and
 * the error names step + 1 and the culprit. */
/* The optimizer's step and the weight average's, alike for one process and
 * a replica: the optimizer keeps what undoes its step and checks the
 * weights it changes; a non-finite update rolls back and fails the step. */
static gboolean
trainer_update (CamlTrainer *trainer, long step, GError **error)
{
  CamlModel *model = trainer->model;
  CamlDivergence *d = &trainer->divergence;

  trainer->undo_step = step;
  trainer->undo_tokens = trainer->tokens;   /* written by this thread only */
  if (trainer->exp->average_decay > 0.0 && trainer->average == NULL)
    trainer->average = caml_average_new (model, trainer->exp->average_decay,
                                         caml_optimizer_is_sparse (trainer->opt));
  if (trainer->average != NULL)
    caml_average_prepare (trainer->average, model, step);
  if (!caml_optimizer_step (trainer->opt, model, step)
      && caml_trainer_find_bad_param (model, model->w, &d->layer, &d->param))
    {
      d->kind = CAML_DIVERGED_UPDATE;
      caml_trainer_roll_back (trainer, step, FALSE,
                              g_strdup_printf ("update of layer %d (%s) parameter %s is not finite",
                                               d->layer, model->layers[d->layer]->ops->name,
                                               d->param), error);
      return FALSE;
    }
  if (trainer->average != NULL)
    caml_average_update (trainer->average, model, step);
  return TRUE;
}

static gboolean
trainer_do_step (CamlTrainer *trainer, long step, float *loss_out, gint64 *tokens,
                 GError **error)
{
  CamlModel *model = trainer->model;
  CamlDivergence *d = &trainer->divergence;
  const float *x, *y, *pred;
  int b = trainer->batch;
  float loss;

  trainer->unchecked_x = trainer->unchecked_y = NULL;  /* this step's loss checks it */
  trainer_next_batch (trainer, &x, &y, tokens);
  caml_model_zero_grad (model);
  model->training = TRUE;     /* dropout on for this pass only */
  pred = caml_model_forward (model, x, b);
  model->training = FALSE;
  loss = caml_loss_compute (trainer->loss, trainer->dpred, pred, y, b,
                            (int) trainer->out_size);
  *loss_out = loss;
  *d = (CamlDivergence) { .layer = -1 };
  if (!isfinite (loss))
    {
      caml_trainer_roll_back (trainer, step, TRUE, caml_trainer_diagnose_loss (trainer, x, y,
                                                                               loss), error);
      return FALSE;
    }
  if (trainer->first_loss < 0.0f)
    trainer->first_loss = loss;
  else if (caml_trainer_loss_blew_up (trainer, loss))
    {
      d->kind = CAML_DIVERGED_LOSS;
      d->layer = model->n_layers - 1;
      caml_trainer_roll_back (trainer, step, TRUE,
                              g_strdup_printf ("the loss %.3g is over a million times the first "
                                               "step's (%.3g)", (double) loss,
                                               (double) trainer->first_loss), error);
      return FALSE;
    }
  caml_model_backward (model, x, trainer->dpred, b);
  if (!caml_trainer_block_finite (trainer, model->dw)
      && caml_trainer_find_bad_param (model, model->dw, &d->layer, &d->param))
    {
      d->kind = CAML_DIVERGED_GRADIENT;
      caml_trainer_roll_back (trainer, step, TRUE,
                              g_strdup_printf ("gradient of layer %d (%s) parameter %s is not "
                                               "finite", d->layer,
                                               model->layers[d->layer]->ops->name, d->param),
                              error);
      return FALSE;
    }

  if (!trainer_update (trainer, step, error))
    return FALSE;
  trainer->unchecked_x = x;
  trainer->unchecked_y = y;
  trainer->unchecked_loss = loss;
  return TRUE;
}

/* ------------------------------------------------------------ replicas */

/* Replicas: the sums of a loss part, tokens and stop wish over every
 * replica, and with `gradient` of the gradient block too (and the union of
 * the token rows reached, for sparse updates). FALSE when a replica is
 * gone. */
static gboolean
replica_reduce (CamlTrainer *trainer, gboolean gradient, double *loss, gint64 *tokens,
                gboolean *stop, GError **error)
{
  CamlModel *model = trainer->model;
  double sums[3] = { *loss, (double) *tokens, *stop ? 1.0 : 0.0 };
  gboolean marks = gradient && model->input.kind == CAML_SHAPE_TOKENS
                   && model->touched_mark != NULL;
  CamlReplicaSums r = {
    .grad = gradient ? model->dw : NULL, .n_grad = gradient ? model->n_weights : 0,
    .sums = sums, .n_sums = 3,
    .marks = marks ? model->touched_mark : NULL,
    .n_marks = marks ? (size_t) model->input.vocab : 0,
  };
  if (!trainer->reduce (&r, trainer->reduce_data, error))
    {
      g_prefix_error (error, "summing the replicas' step: ");
      return FALSE;
    }
  if (marks)
    {
      /* the rows any replica reached, which every replica now updates */
      model->n_touched = 0;
      for (int id = 0; id < model->input.vocab; id++)
        if (model->touched_mark[id])
          model->touched[model->n_touched++] = id;
    }
  *loss = sums[0];
  *tokens = (gint64) sums[1];
  *stop = sums[2] > 0.0;
  return TRUE;
}

/* trainer_do_step for a replica: its share of the batch forward and
 * backward, then every decision on the sums over the replicas, in the order
 * trainer_do_step takes them. */
static gboolean
trainer_do_step_replica (CamlTrainer *trainer, long step, float *loss_out, gint64 *tokens,
                         GError **error)
{
  CamlModel *model = trainer->model;
  CamlDivergence *d = &trainer->divergence;
  const CamlDataset *set = trainer->train;
  int n = trainer->shard_n;
  int *idx = g_newa (int, MAX (trainer->batch, 1));

  trainer->unchecked_x = trainer->unchecked_y = NULL;
  if (trainer_whole_set (trainer))
    for (int i = 0; i < trainer->batch; i++)
      idx[i] = i;
  else
    memcpy (idx, trainer_next_order (trainer), trainer->batch * sizeof (int));
  const int *mine = idx + trainer->shard_lo;
  caml_model_zero_grad (model);
  double part = 0.0;
  gint64 shard_tokens = 0;
  if (n > 0)
    {
      caml_dataset_gather (set, mine, n, trainer->bx, trainer->by);
      shard_tokens = batch_tokens (set, mine, n);
      model->training = TRUE;
      const float *pred = caml_model_forward (model, trainer->bx, n);
      model->training = FALSE;
      part = caml_loss_compute_part (trainer->loss, trainer->dpred, pred, trainer->by, n,
                                     (int) trainer->out_size, trainer->batch);
      caml_model_backward (model, trainer->bx, trainer->dpred, n);
    }
  gboolean stop;
  g_mutex_lock (&trainer->lock);
  stop = trainer->stop_requested;
  g_mutex_unlock (&trainer->lock);
  if (!replica_reduce (trainer, TRUE, &part, &shard_tokens, &stop, error))
    return FALSE;
  *tokens = shard_tokens;
  if (stop)
    {
      g_mutex_lock (&trainer->lock);
      trainer->stop_agreed = TRUE;
      g_mutex_unlock (&trainer->lock);
    }
  float loss = (float) part;
  *loss_out = loss;
  *d = (CamlDivergence) { .layer = -1 };
  if (!isfinite (loss))
    {
      /* the replica whose share went first says which layer */
      g_autofree char *what = n > 0 ? caml_trainer_diagnose_loss (trainer, trainer->bx,
                                                                  trainer->by, loss)
                                    : NULL;
      caml_trainer_roll_back (trainer, step, TRUE,
                              what != NULL ? g_steal_pointer (&what)
                                      : g_strdup_printf ("the loss is %g", (double) loss),
                              error);
      return FALSE;
    }
  if (trainer->first_loss < 0.0f)
    trainer->first_loss = loss;
  else if (caml_trainer_loss_blew_up (trainer, loss))
    {
      d->kind = CAML_DIVERGED_LOSS;
      d->layer = model->n_layers - 1;
      caml_trainer_roll_back (trainer, step, TRUE,
                              g_strdup_printf ("the loss %.3g is over a million times the first "
                                               "step's (%.3g)", (double) loss,
                                               (double) trainer->first_loss), error);
      return FALSE;
    }
  if (!caml_trainer_block_finite (trainer, model->dw)
      && caml_trainer_find_bad_param (model, model->dw, &d->layer, &d->param))
    {
      d->kind = CAML_DIVERGED_GRADIENT;
      caml_trainer_roll_back (trainer, step, TRUE,
                              g_strdup_printf ("gradient of layer %d (%s) parameter %s is not "
                                               "finite", d->layer,
                                               model->layers[d->layer]->ops->name, d->param),
                              error);
      return FALSE;
    }
  if (!trainer_update (trainer, step, error))
    return FALSE;
  trainer->unchecked_x = trainer->bx;
  trainer->unchecked_y = trainer->by;
  trainer->unchecked_loss = loss;
  return TRUE;
}

/* The loss after the latest update on the latest batch, summed over the
 * replicas (each forwards its share again). NAN when the sum failed. */
static float
replica_loss_after (CamlTrainer *trainer, GError **error)
{
  double part = 0.0;
  if (trainer->shard_n > 0)
    part = caml_loss_compute_part (trainer->loss, NULL,
                                   caml_model_forward (trainer->model, trainer->bx,
                                                       trainer->shard_n),
                                   trainer->by, trainer->shard_n, (int) trainer->out_size,
                                   trainer->batch);
  gint64 none = 0;
  gboolean no = FALSE;
  if (!replica_reduce (trainer, FALSE, &part, &none, &no, error))
    return NAN;
  return (float) part;
}

/* Checks the latest update, `step` (0-based), which no step's loss has
 * checked yet, by the loss its weights give on its batch — the check the
 * next step would make. On divergence the update is undone as in
 * trainer_do_step. */
static gboolean
trainer_check_update (CamlTrainer *trainer, long step, GError **error)
{
  CamlModel *model = trainer->model;
  const float *x = trainer->unchecked_x, *y = trainer->unchecked_y;
  int b = trainer->batch;

  if (x == NULL)
    return TRUE;
  trainer->unchecked_x = trainer->unchecked_y = NULL;
  float after;
  if (trainer->ranks > 1)
    {
      GError *reduce_error = NULL;
      after = replica_loss_after (trainer, &reduce_error);
      if (reduce_error != NULL)
        {
          g_propagate_error (error, reduce_error);
          return FALSE;
        }
      b = trainer->shard_n;
    }
  else
    after = caml_loss_compute (trainer->loss, NULL, caml_model_forward (model, x, b),
                               y, b, (int) trainer->out_size);
  if (isfinite (after) && !caml_trainer_loss_blew_up (trainer, after))
    return TRUE;
  trainer->divergence = (CamlDivergence) { .kind = CAML_DIVERGED_LOSS,
                                           .layer = model->n_layers - 1 };
  char *why;
  if (isfinite (after))
    why = g_strdup_printf ("after its update the loss is %.3g (%.3g before it)",
                           (double) after, (double) trainer->unchecked_loss);
  else
    {
      /* As a step's own loss would be: which layer's output went first. */
      g_autofree char *what = caml_trainer_diagnose_loss (trainer, x, y, after);
      why = g_strdup_printf ("after its update, %s", what);
    }
  caml_trainer_roll_back (trainer, step, FALSE, why, error);
  return FALSE;
}

static void
trainer_update_rate_locked (CamlTrainer *trainer)
{
  double now = caml_trainer_seconds_locked (trainer) - trainer->eval_seconds;
  double span = now - trainer->rate_seconds;

  if (span >= CAML_RATE_WINDOW)
    {
      trainer->steps_per_second = (trainer->step - trainer->rate_step) / span;
      trainer->tokens_per_second = (trainer->tokens - trainer->rate_tokens) / span;
      trainer->rate_seconds = now;
      trainer->rate_step = trainer->step;
      trainer->rate_tokens = trainer->tokens;
    }
  else if (trainer->rate_step == 0 && now > 0.0)
    {
      trainer->steps_per_second = trainer->step / now;  /* first window */
      trainer->tokens_per_second = trainer->tokens / now;
    }
}

/* Records the run's failure. After a divergence the step count, the losses
 * and the rows go back with the weights, and the weight average is dropped.
 * Called with the lock held. */
static void
trainer_fail_locked (CamlTrainer *trainer, GError *error)
{
  trainer->error = error;
  trainer->diverged = g_error_matches (error, CAML_ERROR, CAML_ERROR_DIVERGED);
  if (!trainer->diverged)
    return;
  long to = trainer->divergence.rolled_back_to;
  trainer->failure = trainer->divergence;
  trainer->step = to;
  trainer->tokens = trainer->rollback_tokens;
  /* The average took in the diverged updates before they were checked: a
   * run started again averages afresh from the weights rolled back to. */
  caml_average_free (g_steal_pointer (&trainer->average));
  g_array_set_size (trainer->losses, (guint) to);
  while (trainer->rows->len > 0
         && g_array_index (trainer->rows, CamlEvalRow, trainer->rows->len - 1).step > to)
    g_array_set_size (trainer->rows, trainer->rows->len - 1);
}

/* Before the weights leave the loop: checks the latest update if no step has
 * (trainer_check_update). FALSE when it diverged, the failure recorded.
 * Called with the lock held; releases it for the check. */
gboolean
caml_trainer_settle_locked (CamlTrainer *trainer)
{
  GError *error = NULL;

  if (trainer->unchecked_x == NULL)
    return TRUE;
  long step = trainer->step - 1;
  g_mutex_unlock (&trainer->lock);
  gboolean ok = trainer_check_update (trainer, step, &error);
  g_mutex_lock (&trainer->lock);
  if (!ok)
    trainer_fail_locked (trainer, error);
  return ok;
}

gpointer
caml_trainer_thread (gpointer data)
{
  CamlTrainer *trainer = data;
  CamlTrainerState end;

  caml_parallel_lower_priority ();
  caml_parallel_pin (trainer->threads);
  caml_parallel_keep_team (TRUE);
  g_mutex_lock (&trainer->lock);
  for (;;)
    {
      long step;
      gint64 tokens = 0;
      float loss = NAN;
      GError *error = NULL;
      gboolean ok, eval, report;

      /* The weights are about to leave the loop: to a closure, the end of
       * the run or a pause. Replicas settle only where all of them are:
       * the end, and a stop they agreed on. */
      gboolean replica = trainer->ranks > 1;
      gboolean stop = replica ? trainer->stop_agreed : trainer->stop_requested;
      gboolean leave = stop || trainer->step >= trainer->total_steps;
      if (!replica)
        leave = leave || trainer->model_served < trainer->model_posted
                || (trainer->state == CAML_TRAINER_PAUSED && trainer->step_budget == 0);
      if (leave && !caml_trainer_settle_locked (trainer))
        {
          end = CAML_TRAINER_FAILED;
          break;
        }
      trainer_serve_model_locked (trainer);
      if (stop)
        {
          end = CAML_TRAINER_STOPPED;
          break;
        }
      if (trainer->step >= trainer->total_steps)
        {
          end = CAML_TRAINER_FINISHED;
          break;
        }
      if (trainer->state == CAML_TRAINER_PAUSED)
        {
          if (trainer->step_budget == 0)
            {
              trainer_set_active_locked (trainer, FALSE);
              /* no idle team beside other trainers (caml_set_interactive) */
              caml_parallel_idle ();
              g_cond_wait (&trainer->cond, &trainer->lock);
              continue;
            }
          trainer->step_budget--;
        }
      trainer_set_active_locked (trainer, TRUE);

      if (trainer->lr_pending)
        caml_optimizer_set_lr (trainer->opt, trainer->lr);
      if (trainer->em_pending)
        caml_optimizer_set_em_steps (trainer->opt, trainer->em_steps);
      trainer->lr_pending = trainer->em_pending = FALSE;
      step = trainer->step;

      g_mutex_unlock (&trainer->lock);
      ok = trainer->ranks > 1 ? trainer_do_step_replica (trainer, step, &loss, &tokens, &error)
                              : trainer_do_step (trainer, step, &loss, &tokens, &error);
      g_mutex_lock (&trainer->lock);

      trainer->last_loss = loss;
      if (!ok)
        {
          trainer_fail_locked (trainer, error);
          end = CAML_TRAINER_FAILED;
          break;
        }
      g_array_append_val (trainer->losses, loss);
      trainer->step = step + 1;
      trainer->tokens += tokens;
      trainer_update_rate_locked (trainer);

      eval = trainer->step == trainer->total_steps
             || (trainer->eval_every > 0 && trainer->step % trainer->eval_every == 0);
      report = eval || (trainer->progress_every > 0
                        && trainer->step % trainer->progress_every == 0);
      if (eval && !caml_trainer_settle_locked (trainer))
        {
          end = CAML_TRAINER_FAILED;
          break;
        }
      if (eval && trainer->rank == 0)   /* replicas: the first evaluates */
        caml_trainer_evaluate_locked (trainer);
      if (report)
        trainer_report_locked (trainer);
      /* A closure of the progress function checked the update and found it
       * diverged: the failure is recorded, the weights rolled back. */
      if (trainer->closure_failed)
        {
          trainer->closure_failed = FALSE;
          end = CAML_TRAINER_FAILED;
          break;
        }
    }

  /* A run of zero steps still gets its one row. */
  if (end == CAML_TRAINER_FINISHED && trainer->rows->len == 0 && trainer->rank == 0)
    caml_trainer_evaluate_locked (trainer);
  /* A finished or stopped run leaves the averaged weights in the model; a
   * failed one its last good weights, from which it may be started again. */
  if (trainer->average != NULL && end != CAML_TRAINER_FAILED)
    {
      caml_average_install (trainer->average, trainer->model);
      caml_average_free (g_steal_pointer (&trainer->average));
    }
  trainer_serve_model_locked (trainer);
  trainer_set_active_locked (trainer, FALSE);
  trainer->state = end;
  trainer->done = TRUE;
  g_cond_broadcast (&trainer->cond);
  trainer_report_locked (trainer);
  g_mutex_unlock (&trainer->lock);
  return NULL;
}
