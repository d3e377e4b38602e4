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
 * after the update for NaN/Inf (branch-free passes over the blocks). On a
 * failure the diagnosis looks for the culprit — the batch's data, the first
 * layer whose output is not finite (forward order), or the first parameter
 * block whose gradient or update is not finite (backward order: the layer
 * where backpropagation met it first) — and the weights go back to the last
 * ones whose loss and gradient were finite: the weights before the step when
 * the update overflowed, the weights before the previous step's update when
 * the loss or the gradient did (those weights are what the previous update
 * produced). The optimizer undoes its latest step for this, weights and
 * state (caml_optimizer_undo); the tokens, step count, losses and rows are
 * cut back with them, and the batch order and dropout's masks drawn again to
 * that step (caml_trainer_redraw), so the trainer stands exactly where a run
 * stopped at that step would: it can be started again (with a lower learning
 * rate) from there, or its state saved and resumed.
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

#define CAML_EVAL_CHUNK   1024
/* A finite loss this many times the first step's (or the floor, when that
 * was smaller) is a divergence too: weights that blow up slowly stay finite
 * for hundreds of steps. No sound run grows its loss a million-fold. */
#define CAML_LOSS_BLOWUP  1e6
#define CAML_LOSS_FLOOR   1e-3
#define CAML_RATE_WINDOW  0.5   /* seconds of training per steps/s estimate */


/* ------------------------------------------------------------- evaluation */

static int
argmax (const float *v, size_t n)
{
  size_t best = 0;
  for (size_t i = 1; i < n; i++)
    if (v[i] > v[best])
      best = i;
  return (int) best;
}

/* Samples per forward pass of caml_evaluate: chunks small enough that the
 * layers' outputs stay within ~16 MB (a text model's (T, D) sequences are
 * large per sample; a layer's own caches add as much again), yet large
 * enough to give every thread its share. */
static int
evaluate_chunk (const CamlModel *model, const CamlShape *x_shape)
{
  size_t per_sample = caml_shape_size (x_shape);
  for (int i = 0; i < model->n_layers; i++)
    per_sample += caml_shape_size (&model->layers[i]->out);
  return (int) CLAMP ((4u << 20) / MAX (per_sample, 1), 1, CAML_EVAL_CHUNK);
}

/* caml_evaluate with `buf` for the rows of a chunk of a set that holds no x
 * (text): at least MIN (evaluate_chunk, set->n) × x_size floats. */
static void
evaluate_with (CamlModel *model, CamlLossKind loss, const CamlDataset *set, float *buf,
               double *mean_loss, double *metric)
{
  double loss_sum = 0.0, metric_sum = 0.0;
  size_t d = caml_shape_size (caml_model_output_shape (model));
  int yw = set->y_width;
  gboolean classification = set->n_classes > 0;

  if (set->n <= 0 || d == 0)
    {
      if (mean_loss)
        *mean_loss = NAN;
      if (metric)
        *metric = NAN;
      return;
    }

  int chunk = evaluate_chunk (model, &set->x_shape);
  g_assert (set->x != NULL || buf != NULL);

  for (int start = 0; start < set->n; start += chunk)
    {
      int n = MIN (chunk, set->n - start);
      const float *x = caml_dataset_rows (set, start, n, buf);  /* (n, x_shape) */
      const float *y = set->y + (size_t) start * yw;      /* (n, yw) */
      const float *pred = caml_model_forward (model, x, n); /* (n, d) */

      loss_sum += (double) caml_loss_compute (loss, NULL, pred, y, n, (int) d) * n;

      for (int i = 0; i < n; i++)
        {
          const float *p = pred + (size_t) i * d;
          const float *t = y + (size_t) i * yw;
          if (!classification)
            {
              /* Of the predictions: probabilities under sigmoid
               * cross-entropy, not its logits. */
              double se = 0.0;
              for (size_t j = 0; j < d && j < (size_t) yw; j++)
                {
                  float q = p[j];
                  caml_loss_predict (loss, &q, 1);
                  se += ((double) q - t[j]) * ((double) q - t[j]);
                }
              metric_sum += se / (double) d;
            }
          else
            {
              int label, guess;
              if (yw == 1)
                label = (int) t[0];
              else
                label = argmax (t, (size_t) yw);
              if (d == 1)  /* one output: a logit, or a probability under MSE */
                guess = p[0] > (loss == CAML_LOSS_MSE ? 0.5f : 0.0f);
              else
                guess = argmax (p, d);
              metric_sum += guess == label;
            }
        }
    }

  if (mean_loss)
    *mean_loss = loss_sum / set->n;
  if (metric)
    *metric = metric_sum / set->n;
}

void
caml_evaluate (CamlModel *model, CamlLossKind loss, const CamlDataset *set,
               double *mean_loss, double *metric)
{
  /* At most 4 Mi floats (evaluate_chunk) unless one sample is larger. */
  size_t rows = (size_t) MIN (evaluate_chunk (model, &set->x_shape), MAX (set->n, 1));
  float *buf = set->x == NULL ? g_new (float, rows * caml_shape_size (&set->x_shape)) : NULL;
  evaluate_with (model, loss, set, buf, mean_loss, metric);
  g_free (buf);
}

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

static void
trainer_snapshot_locked (CamlTrainer *trainer, CamlProgress *p)
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
  trainer_snapshot_locked (trainer, &p);
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

/* Whether every value is finite: an exponent of all ones is Inf or NaN.
 * Branch-free over the bits, so it vectorises (this runs twice a step over
 * every weight). */
static gboolean
all_finite (const float *v, size_t n)
{
  guint32 bad = 0;
  for (size_t k = 0; k < n; k++)
    {
      guint32 bits;
      memcpy (&bits, &v[k], sizeof bits);   /* no aliasing games: one load */
      bad |= (guint32) ((bits & 0x7f800000u) == 0x7f800000u);
    }
  return bad == 0;
}

/* The first parameter block, layers in backward order, holding a non-finite
 * value of `block` (model->w or model->dw). FALSE when there is none. */
static gboolean
find_bad_param (const CamlModel *model, const float *block, int *layer, const char **param)
{
  for (int i = model->n_layers - 1; i >= 0; i--)
    {
      const CamlLayer *l = model->layers[i];
      for (int j = 0; j < l->n_params; j++)
        if (!all_finite (block + l->params[j].offset, l->params[j].count))
          {
            *layer = i;
            *param = l->params[j].name;
            return TRUE;
          }
    }
  return FALSE;
}

static const char *
describe_float (float v)
{
  return isnan (v) ? "nan" : v > 0 ? "inf" : "-inf";
}

/* The row of the first non-finite value among n rows of width w, or -1. */
static int
first_bad_row (const float *v, int n, size_t w)
{
  for (int i = 0; i < n; i++)
    if (!all_finite (v + (size_t) i * w, w))
      return i;
  return -1;
}

/* Why the loss of the batch (x, y) is not finite: the data, the first layer
 * whose output is not, or outputs too large for the loss. Fills
 * trainer->divergence and returns the explanation (without the step). */
static char *
diagnose_loss (CamlTrainer *trainer, const float *x, const float *y, float loss)
{
  const CamlModel *model = trainer->model;
  const CamlDataset *set = trainer->train;
  CamlDivergence *d = &trainer->divergence;
  /* a replica's rows are its share of the batch */
  int b = trainer->ranks > 1 ? trainer->shard_n : trainer->batch;
  int lo = trainer->ranks > 1 ? trainer->shard_lo : 0;
  int bad_x = first_bad_row (x, b, caml_shape_size (&set->x_shape));
  int bad_y = bad_x < 0 ? first_bad_row (y, b, (size_t) set->y_width) : -1;

  if (bad_x >= 0 || bad_y >= 0)
    {
      int row = bad_x >= 0 ? bad_x : bad_y;
      /* Which sample of the training set that batch row is. */
      int sample = trainer->batch >= set->n
                   ? lo + row : trainer->order[trainer->order_pos - trainer->batch + lo + row];
      d->kind = CAML_DIVERGED_DATA;
      return g_strdup_printf ("the training set holds a non-finite %s (sample %d)",
                              bad_x >= 0 ? "input" : "target", sample);
    }
  for (int i = 0; i < model->n_layers; i++)
    {
      const CamlLayer *l = model->layers[i];
      if (!all_finite (model->acts[i], (size_t) b * caml_shape_size (&l->out)))
        {
          d->kind = CAML_DIVERGED_OUTPUT;
          d->layer = i;
          return g_strdup_printf ("output of layer %d (%s) is not finite (the loss is %s)",
                                  i, l->ops->name, describe_float (loss));
        }
    }
  /* Every output finite: too large for the loss (a square that overflows). */
  int last = model->n_layers - 1;
  const float *out = model->acts[last];
  size_t n_out = (size_t) b * trainer->out_size;
  float largest = 0.0f;
  for (size_t k = 0; k < n_out; k++)
    largest = MAX (largest, fabsf (out[k]));
  d->kind = CAML_DIVERGED_LOSS;
  d->layer = last;
  return g_strdup_printf ("the loss is %s: the outputs of layer %d (%s) reach %.3g",
                          describe_float (loss), last, model->layers[last]->ops->name,
                          (double) largest);
}

/* Checks ranges of the parameter block (caml_model_foreach_grad_range). */
typedef struct {
  const float *v;
  gboolean     finite;
} RangeCheck;

static void
check_range (size_t offset, size_t count, gpointer user_data)
{
  RangeCheck *check = user_data;
  if (check->finite)
    check->finite = caml_parallel_all_finite (check->v + offset, count);
}

/* Whether v (a block laid out like the weights) is finite: the whole block
 * for a dense optimizer, else only where gradients reached (the rest did not
 * change since it was last checked). */
static gboolean
block_finite (CamlTrainer *trainer, const float *v)
{
  const CamlModel *model = trainer->model;
  if (!caml_optimizer_is_sparse (trainer->opt))
    return caml_parallel_all_finite (v, model->n_weights);
  RangeCheck check = { v, TRUE };
  caml_model_foreach_grad_range (model, check_range, &check);
  return check.finite;
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
static void
trainer_reset_order (CamlTrainer *trainer)
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

  trainer_reset_order (trainer);
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

/* Puts the run back after a failure at `step` (0-based) and finishes the
 * error: `before_update` when the loss or the gradient failed (the weights
 * are those the previous update produced: undo it too, when the optimizer
 * can), else the update itself failed (undo it). The weights, the
 * optimizer's state, the tokens, the batch order and dropout's masks all go
 * back to the step rolled back to, so a run started again from there — or
 * resumed from its state file — goes on as a run that had stopped there.
 * (The trainer's step count, losses and rows go back in trainer_fail_locked.) */
static void
trainer_roll_back (CamlTrainer *trainer, long step, gboolean before_update,
                   char *why, GError **error)
{
  long to = step;

  trainer->rollback_tokens = trainer->tokens;   /* this step's are not added yet */
  if (!before_update || (step > 0 && trainer->undo_step == step - 1))
    {
      caml_optimizer_undo (trainer->opt, trainer->model);
      to = trainer->undo_step;
      trainer->rollback_tokens = trainer->undo_tokens;
    }
  trainer->undo_step = -1;
  caml_trainer_redraw (trainer, to);
  trainer->divergence.step = step + 1;
  trainer->divergence.rolled_back_to = to;
  g_set_error (error, CAML_ERROR, CAML_ERROR_DIVERGED,
               "step %ld: %s; weights rolled back to step %ld", step + 1, why, to);
  g_free (why);
}

/* A finite loss grown past the bound (CAML_LOSS_BLOWUP) since the first step. */
static gboolean
loss_blew_up (const CamlTrainer *trainer, float loss)
{
  return trainer->first_loss >= 0.0f
         && loss > CAML_LOSS_BLOWUP * MAX (trainer->first_loss, CAML_LOSS_FLOOR);
}

/* One optimisation step `step` (0-based). On divergence the weights are the
 * last finite ones (trainer_roll_back), trainer->divergence says where, and
 * the error names step + 1 and the culprit. */
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
      trainer_roll_back (trainer, step, TRUE, diagnose_loss (trainer, x, y, loss), error);
      return FALSE;
    }
  if (trainer->first_loss < 0.0f)
    trainer->first_loss = loss;
  else if (loss_blew_up (trainer, loss))
    {
      d->kind = CAML_DIVERGED_LOSS;
      d->layer = model->n_layers - 1;
      trainer_roll_back (trainer, step, TRUE,
                         g_strdup_printf ("the loss %.3g is over a million times the first "
                                          "step's (%.3g)", (double) loss,
                                          (double) trainer->first_loss), error);
      return FALSE;
    }
  caml_model_backward (model, x, trainer->dpred, b);
  if (!block_finite (trainer, model->dw)
      && find_bad_param (model, model->dw, &d->layer, &d->param))
    {
      d->kind = CAML_DIVERGED_GRADIENT;
      trainer_roll_back (trainer, step, TRUE,
                         g_strdup_printf ("gradient of layer %d (%s) parameter %s is not finite",
                                          d->layer, model->layers[d->layer]->ops->name,
                                          d->param), error);
      return FALSE;
    }

  /* The optimizer keeps what undoes its step and checks the weights it
   * changes. */
  trainer->undo_step = step;
  trainer->undo_tokens = trainer->tokens;   /* written by this thread only */
  if (trainer->exp->average_decay > 0.0 && trainer->average == NULL)
    trainer->average = caml_average_new (model, trainer->exp->average_decay,
                                         caml_optimizer_is_sparse (trainer->opt));
  if (trainer->average != NULL)
    caml_average_prepare (trainer->average, model, step);
  if (!caml_optimizer_step (trainer->opt, model, step)
      && find_bad_param (model, model->w, &d->layer, &d->param))
    {
      d->kind = CAML_DIVERGED_UPDATE;
      trainer_roll_back (trainer, step, FALSE,
                         g_strdup_printf ("update of layer %d (%s) parameter %s is not finite",
                                          d->layer, model->layers[d->layer]->ops->name,
                                          d->param), error);
      return FALSE;
    }
  if (trainer->average != NULL)
    caml_average_update (trainer->average, model, step);
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
      g_autofree char *what = n > 0 ? diagnose_loss (trainer, trainer->bx, trainer->by, loss)
                                    : NULL;
      trainer_roll_back (trainer, step, TRUE,
                         what != NULL ? g_steal_pointer (&what)
                                      : g_strdup_printf ("the loss is %g", (double) loss),
                         error);
      return FALSE;
    }
  if (trainer->first_loss < 0.0f)
    trainer->first_loss = loss;
  else if (loss_blew_up (trainer, loss))
    {
      d->kind = CAML_DIVERGED_LOSS;
      d->layer = model->n_layers - 1;
      trainer_roll_back (trainer, step, TRUE,
                         g_strdup_printf ("the loss %.3g is over a million times the first "
                                          "step's (%.3g)", (double) loss,
                                          (double) trainer->first_loss), error);
      return FALSE;
    }
  if (!block_finite (trainer, model->dw)
      && find_bad_param (model, model->dw, &d->layer, &d->param))
    {
      d->kind = CAML_DIVERGED_GRADIENT;
      trainer_roll_back (trainer, step, TRUE,
                         g_strdup_printf ("gradient of layer %d (%s) parameter %s is not finite",
                                          d->layer, model->layers[d->layer]->ops->name,
                                          d->param), error);
      return FALSE;
    }
  trainer->undo_step = step;
  trainer->undo_tokens = trainer->tokens;
  if (trainer->exp->average_decay > 0.0 && trainer->average == NULL)
    trainer->average = caml_average_new (model, trainer->exp->average_decay,
                                         caml_optimizer_is_sparse (trainer->opt));
  if (trainer->average != NULL)
    caml_average_prepare (trainer->average, model, step);
  if (!caml_optimizer_step (trainer->opt, model, step)
      && find_bad_param (model, model->w, &d->layer, &d->param))
    {
      d->kind = CAML_DIVERGED_UPDATE;
      trainer_roll_back (trainer, step, FALSE,
                         g_strdup_printf ("update of layer %d (%s) parameter %s is not finite",
                                          d->layer, model->layers[d->layer]->ops->name,
                                          d->param), error);
      return FALSE;
    }
  if (trainer->average != NULL)
    caml_average_update (trainer->average, model, step);
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
  if (isfinite (after) && !loss_blew_up (trainer, after))
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
      g_autofree char *what = diagnose_loss (trainer, x, y, after);
      why = g_strdup_printf ("after its update, %s", what);
    }
  trainer_roll_back (trainer, step, FALSE, why, error);
  return FALSE;
}

/* Appends an evaluation row for the current step. Called with the lock held;
 * releases it while the model runs. */
static void
trainer_evaluate_locked (CamlTrainer *trainer)
{
  CamlEvalRow row = { 0 };
  long from = 0;
  double sum = 0.0;

  if (trainer->rows->len > 0)
    from = g_array_index (trainer->rows, CamlEvalRow, trainer->rows->len - 1).step;
  for (long i = from; i < (long) trainer->losses->len; i++)
    sum += g_array_index (trainer->losses, float, i);
  row.step = trainer->step;
  row.tokens = trainer->tokens;
  row.train_loss = (long) trainer->losses->len > from
                   ? sum / ((long) trainer->losses->len - from) : NAN;

  g_mutex_unlock (&trainer->lock);
  gint64 start = g_get_monotonic_time ();
  if (isnan (row.train_loss))  /* no step since the last row: measure it */
    evaluate_with (trainer->model, trainer->loss, trainer->train, trainer->ebuf,
                   &row.train_loss, NULL);
  if (trainer->test != NULL)
    {
      /* The test figures are of the averaged weights, when averaging. */
      if (trainer->average != NULL)
        caml_average_swap (trainer->average, trainer->model);
      evaluate_with (trainer->model, trainer->loss, trainer->test, trainer->ebuf,
                     &row.test_loss, &row.test_metric);
      if (trainer->average != NULL)
        caml_average_swap (trainer->average, trainer->model);
    }
  else
    row.test_loss = row.test_metric = NAN;
  double spent = (g_get_monotonic_time () - start) / 1e6;
  g_mutex_lock (&trainer->lock);

  trainer->eval_seconds += spent;
  row.seconds = caml_trainer_seconds_locked (trainer);
  row.eval_seconds = trainer->eval_seconds;
  g_array_append_val (trainer->rows, row);
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

static gpointer
trainer_thread (gpointer data)
{
  CamlTrainer *trainer = data;
  CamlTrainerState end;

  caml_parallel_lower_priority ();
  caml_parallel_pin (trainer->threads);
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
        trainer_evaluate_locked (trainer);
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
    trainer_evaluate_locked (trainer);
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

/* ------------------------------------------------------------- public API */

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
  trainer_reset_order (trainer);

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
  int chunk = MIN (evaluate_chunk (trainer->model, &trainer->train->x_shape), largest);
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
  size_t rows = (size_t) MIN (evaluate_chunk (model, &train->x_shape), rows_n);
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
  GThread *thread = g_thread_try_new ("caml-trainer", trainer_thread, trainer, error);
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
  trainer_snapshot_locked (trainer, progress);
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
