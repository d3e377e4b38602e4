/* trainer-diverge.c — a diverged step: the finite checks, the diagnosis and
 * the rollback.
 *
 * Every step checks the loss, the gradient block and the weights
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
 * rate) from there, or its state saved and resumed. */
#include <math.h>
#include <string.h>

#include "parallel.h"
#include "trainer-private.h"

/* A finite loss this many times the first step's (or the floor, when that
 * was smaller) is a divergence too: weights that blow up slowly stay finite
 * for hundreds of steps. No sound run grows its loss a million-fold. */
#define CAML_LOSS_BLOWUP  1e6
#define CAML_LOSS_FLOOR   1e-3

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
gboolean
caml_trainer_find_bad_param (const CamlModel *model, const float *block, int *layer,
                             const char **param)
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
char *
caml_trainer_diagnose_loss (CamlTrainer *trainer, const float *x, const float *y, float loss)
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
gboolean
caml_trainer_block_finite (CamlTrainer *trainer, const float *v)
{
  const CamlModel *model = trainer->model;
  if (!caml_optimizer_is_sparse (trainer->opt))
    return caml_parallel_all_finite (v, model->n_weights);
  RangeCheck check = { v, TRUE };
  caml_model_foreach_grad_range (model, check_range, &check);
  return check.finite;
}

/* A finite loss grown past the bound (CAML_LOSS_BLOWUP) since the first step. */
gboolean
caml_trainer_loss_blew_up (const CamlTrainer *trainer, float loss)
{
  return trainer->first_loss >= 0.0f
         && loss > CAML_LOSS_BLOWUP * MAX (trainer->first_loss, CAML_LOSS_FLOOR);
}

/* Puts the run back after a failure at `step` (0-based) and finishes the
 * error: `before_update` when the loss or the gradient failed (the weights
 * are those the previous update produced: undo it too, when the optimizer
 * can), else the update itself failed (undo it). The weights, the
 * optimizer's state, the tokens, the batch order and dropout's masks all go
 * back to the step rolled back to, so a run started again from there — or
 * resumed from its state file — goes on as a run that had stopped there.
 * (The trainer's step count, losses and rows go back in trainer_fail_locked.) */
void
caml_trainer_roll_back (CamlTrainer *trainer, long step, gboolean before_update,
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
