/* optimizer.c — SGD with momentum, Adagrad and Adam over the model's flat
 * parameter block, with the paper's block-coordinate em_steps schedule
 * (Sec. 4.2.1): with em_steps = E > 0, gate parameters are updated only while
 * ⌊step / E⌋ is even and value parameters only while it is odd; parameters of
 * plain layers are always updated.
 *
 * A step can be undone (caml_optimizer_undo), so that a run rolled back by a
 * divergence goes on exactly as one stopped before the step. The pass that
 * updates a weight also saves it and checks the new value, so neither the
 * copy nor the check costs a pass of its own over memory. A dense optimizer
 * (Adam; SGD with momentum) rewrites all of its state at every step: it
 * keeps two copies, writes each step's state into the one that does not hold
 * the current state, and undoing is choosing the other copy again. A sparse
 * one (Adagrad; SGD) updates in place, often only the rows of a batch's
 * tokens: it saves the state of what it updates, as it does the weights.
 *
 * Weight decay (optimizer.weight_decay = λ > 0) is the coupled L2 of
 * PyTorch's weight_decay for SGD, Adagrad and Adam: before the rule, the
 * gradient g of each weight w that the step updates becomes g + λ·w — the
 * gradient of the loss plus λ/2 ‖w‖² — and momentum, Adagrad's accumulator
 * and Adam's moments are all made of that sum (not AdamW's decoupled decay).
 * Only weights that have a gradient this step are decayed:
 *  - the groups em_steps leaves alone at this step (and frozen tables) are
 *    neither updated nor decayed;
 *  - every other parameter is decayed whole, biases included (as PyTorch
 *    does by default), whether its gradient happens to be 0 or not;
 *  - a token table (CamlParam.token_rows) has a gradient only in the rows
 *    of the ids caml_model_backward saw since the last caml_model_zero_grad
 *    (CamlModel.touched): only those rows are decayed — a lazy L2 on the
 *    rows looked up, as TensorFlow's regularizer on an embedding lookup —
 *    whatever the optimizer and on both paths: the sparse one, which visits
 *    only those rows, and the dense one (sparse_grads off, or Adam and SGD
 *    with momentum, which move every row), so that the two stay bit for bit
 *    the same and a row whose word is absent from the batch is left as it
 *    is by Adagrad and plain SGD.
 * λ = 0 leaves every update bit for bit as it was without the option (the
 * gradient is used as it is, not as g + 0·w, which turns −0 into +0). The
 * step saves each weight and state value before it changes it whether or
 * not it decays it, so an undo restores a decayed step exactly. */
#include <math.h>
#include <string.h>

#include "caml-private.h"
#include "parallel.h"
#include "vectorize.h"

const char *const caml_optimizer_names[] = { "sgd", "adagrad", "adam", NULL };

struct _CamlOptimizer {
  CamlOptimizerConfig config;
  size_t n;
  int    blocks;         /* of n floats: caml_optimizer_state_blocks */
  gboolean twin;         /* two copies of the state (a dense optimizer) */
  float *state;          /* (copies, blocks, n): m (or velocity, or accumulator), then v */
  int    cur;            /* the copy that holds the state (twin) */
  long   updates[CAML_N_GROUPS];     /* updates applied per CamlParamGroup (Adam bias correction) */
  /* the latest step, to undo it */
  gboolean can_undo;
  long     undo_updates[CAML_N_GROUPS];
  float   *saved_w;      /* (n) the weights the step changed, before it … */
  float   *saved_state;  /* (blocks, n) in place: their state, before it … */
  GArray  *saved_ranges; /* … at these gsize (offset, count) pairs */
};

static gboolean
config_is_sparse (const CamlOptimizerConfig *config)
{
  return config->kind == CAML_OPTIM_ADAGRAD
      || (config->kind == CAML_OPTIM_SGD && config->momentum == 0.0);
}

int
caml_optimizer_state_floats (const CamlOptimizerConfig *config)
{
  /* the state; its second copy, or the saved state of what a step updates;
   * the saved weights */
  return 2 * caml_optimizer_state_blocks (config) + 1;
}

void
caml_optimizer_config_defaults (CamlOptimizerConfig *config, CamlOptimizerKind kind)
{
  *config = (CamlOptimizerConfig) {
    .kind = kind,
    .lr = kind == CAML_OPTIM_ADAM ? 0.001 : 0.01,
    .momentum = 0.0,
    .beta1 = 0.9,
    .beta2 = 0.999,
    .eps = kind == CAML_OPTIM_ADAM ? 1e-8 : 1e-7,
    .initial_accumulator = 0.1,
    .weight_decay = 0.0,
    .em_steps = 0,
  };
}

CamlOptimizer *
caml_optimizer_try_new (const CamlOptimizerConfig *config, size_t n_weights, GError **error)
{
  /* The state is as large as the weights and their gradients together:
   * a size the user chose, allocated where failing is an error. */
  int floats = caml_optimizer_state_floats (config);
  size_t count = 0, bytes = 0;
  gboolean overflow = !g_size_checked_mul (&count, (size_t) floats, MAX (n_weights, 1))
                      || !g_size_checked_mul (&bytes, count, sizeof (float));
  float *state = overflow ? NULL : g_try_malloc0 (bytes);
  if (state == NULL)
    {
      g_autofree char *need = overflow ? g_strdup ("more memory than can be addressed")
                                       : g_format_size ((guint64) bytes);
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "the optimizer's state needs %s (%s keeps %d values for each of %zu "
                   "parameters: its state, and what undoes its latest update), which "
                   "cannot be allocated", need, caml_optimizer_names[config->kind], floats,
                   n_weights);
      return NULL;
    }
  CamlOptimizer *opt = g_new0 (CamlOptimizer, 1);
  opt->config = *config;
  opt->n = n_weights;
  opt->blocks = caml_optimizer_state_blocks (config);
  opt->twin = !config_is_sparse (config);
  opt->state = state;
  /* after the state (and its second copy, or room to save it) */
  opt->saved_state = opt->twin ? NULL : state + (size_t) opt->blocks * n_weights;
  opt->saved_w = state + (size_t) 2 * opt->blocks * n_weights;
  opt->saved_ranges = g_array_new (FALSE, FALSE, sizeof (gsize));
  if (config->kind == CAML_OPTIM_ADAGRAD)
    for (size_t i = 0; i < n_weights; i++)
      opt->state[i] = (float) config->initial_accumulator;
  return opt;
}

CamlOptimizer *
caml_optimizer_new (const CamlOptimizerConfig *config, size_t n_weights)
{
  GError *error = NULL;
  CamlOptimizer *opt = caml_optimizer_try_new (config, n_weights, &error);
  if (opt == NULL)
    g_error ("caml_optimizer_new: %s (use caml_optimizer_try_new)", error->message);
  return opt;
}

void
caml_optimizer_free (CamlOptimizer *opt)
{
  if (opt == NULL)
    return;
  g_free (opt->state);
  g_array_unref (opt->saved_ranges);
  g_free (opt);
}

void
caml_optimizer_set_lr (CamlOptimizer *opt, double lr)
{
  opt->config.lr = lr;
}

void
caml_optimizer_set_em_steps (CamlOptimizer *opt, int em_steps)
{
  opt->config.em_steps = MAX (em_steps, 0);
}

const CamlOptimizerConfig *
caml_optimizer_get_config (const CamlOptimizer *opt)
{
  return &opt->config;
}

gboolean
caml_em_group_active (int em_steps, CamlParamGroup group, long step)
{
  if (group == CAML_GROUP_FROZEN)
    return FALSE;
  if (em_steps <= 0 || group == CAML_GROUP_ALWAYS)
    return TRUE;
  gboolean gate_phase = (step / em_steps) % 2 == 0;
  return group == CAML_GROUP_GATE ? gate_phase : !gate_phase;
}

/* The gradient an update rule sees: g + λ·w under weight decay (wd = λ > 0),
 * g as it is otherwise. */
static inline float
decayed (float g, float w, float wd)
{
  return wd != 0.0f ? g + wd * w : g;
}

/* 1 when x is Inf or NaN: one load, no branch. */
static inline guint32
not_finite (float x)
{
  guint32 bits;
  memcpy (&bits, &x, sizeof bits);
  return (guint32) ((bits & 0x7f800000u) == 0x7f800000u);
}

/* The updates of count weights w, each saved to w_saved first, from their
 * gradients g decayed by wd (0: not decayed); each returns nonzero when a
 * new weight is not finite. The pointers do not alias (restrict), so that
 * the loops vectorize without run-time checks. */
static CAML_VECTOR_LOOP guint32
sgd (float *restrict w, float *restrict w_saved, const float *restrict g, float lr,
     float wd, size_t count)
{
  guint32 bad = 0;
  for (size_t i = 0; i < count; i++)
    {
      float gi = decayed (g[i], w[i], wd);
      w_saved[i] = w[i];
      w[i] -= lr * gi;
      bad |= not_finite (w[i]);
    }
  return bad;
}

/* The velocity read from m, the new one written to m_out. */
static CAML_VECTOR_LOOP guint32
sgd_momentum (float *restrict w, float *restrict w_saved, const float *restrict g,
              const float *restrict m, float *restrict m_out, float lr, float mu, float wd,
              size_t count)
{
  guint32 bad = 0;
  for (size_t i = 0; i < count; i++)
    {
      float gi = decayed (g[i], w[i], wd);
      w_saved[i] = w[i];
      m_out[i] = mu * m[i] + gi;
      w[i] -= lr * m_out[i];
      bad |= not_finite (w[i]);
    }
  return bad;
}

/* The accumulators m updated in place, each saved to m_saved first. */
static CAML_VECTOR_LOOP guint32
adagrad (float *restrict w, float *restrict w_saved, const float *restrict g,
         float *restrict m, float *restrict m_saved, float lr, float eps, float wd,
         size_t count)
{
  guint32 bad = 0;
  for (size_t i = 0; i < count; i++)
    {
      float gi = decayed (g[i], w[i], wd);
      w_saved[i] = w[i];
      m_saved[i] = m[i];
      m[i] += gi * gi;
      w[i] -= lr * gi / (sqrtf (m[i]) + eps);
      bad |= not_finite (w[i]);
    }
  return bad;
}

/* The moments read from m, v, the new ones written to m_out, v_out. */
static CAML_VECTOR_LOOP guint32
adam (float *restrict w, float *restrict w_saved, const float *restrict g,
      const float *restrict m, const float *restrict v, float *restrict m_out,
      float *restrict v_out, float step, float b1, float b2, float eps_hat, float wd,
      size_t count)
{
  guint32 bad = 0;
  for (size_t i = 0; i < count; i++)
    {
      float gi = decayed (g[i], w[i], wd);
      w_saved[i] = w[i];
      m_out[i] = b1 * m[i] + (1.0f - b1) * gi;
      v_out[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
      w[i] -= step * m_out[i] / (sqrtf (v_out[i]) + eps_hat);
      bad |= not_finite (w[i]);
    }
  return bad;
}

/* One update of count weights w (each saved to w_saved first), their
 * gradients decayed by wd (0: not decayed). The state is read from m and
 * written to m_out, each block `stride` floats after the one before (Adam's
 * v after m): a dense optimizer's other copy; a sparse one updates in place
 * (m_out = m), saving the old value to m_saved. Returns nonzero when a new
 * weight is not finite. */
static guint32
update (const CamlOptimizer *opt, float *w, float *w_saved, const float *g, const float *m,
        float *m_out, float *m_saved, size_t stride, size_t count, long t, float wd)
{
  const CamlOptimizerConfig *c = &opt->config;
  float lr = (float) c->lr;
  switch (c->kind)
    {
    case CAML_OPTIM_SGD:
      return m == NULL ? sgd (w, w_saved, g, lr, wd, count)
                       : sgd_momentum (w, w_saved, g, m, m_out, lr, (float) c->momentum, wd,
                                       count);
    case CAML_OPTIM_ADAGRAD:
      return adagrad (w, w_saved, g, m_out, m_saved, lr, (float) c->eps, wd, count);
    case CAML_OPTIM_ADAM:
      {
        /* Fold both bias corrections into the step size. */
        double c1 = 1.0 - pow (c->beta1, (double) t);
        double c2 = 1.0 - pow (c->beta2, (double) t);
        return adam (w, w_saved, g, m, m + stride, m_out, m_out + stride,
                     (float) (c->lr * sqrt (c2) / c1), (float) c->beta1, (float) c->beta2,
                     (float) (c->eps * sqrt (c2)), wd, count);
      }
    default:
      g_assert_not_reached ();
    }
  return 1;
}

/* Weights [offset, offset + count) of the block and their state. */
typedef struct {
  CamlOptimizer *opt;
  float         *w;
  const float   *g;
  const float   *from;   /* the state read, (blocks, n); NULL without state */
  float         *to;     /* the state written */
  size_t         offset, count;
  long           t;
  float          wd;     /* the weight decay of these weights: λ, or 0 */
  guint32       *bad;    /* (parts) what each part found */
} Update;

/* Updates u's weights [lo, lo + count) of its range; nonzero: not finite. */
static guint32
update_range (const Update *u, size_t lo, size_t count)
{
  CamlOptimizer *opt = u->opt;
  size_t at = u->offset + lo;
  gboolean stateful = u->from != NULL;
  return update (opt, u->w + at, opt->saved_w + at, u->g + at, stateful ? u->from + at : NULL,
                 stateful ? u->to + at : NULL,
                 opt->saved_state != NULL ? opt->saved_state + at : NULL, opt->n, count, u->t,
                 u->wd);
}

static void
update_part (int part, int parts, gpointer data)
{
  Update *u = data;
  size_t lo, hi;
  caml_part_range (u->count, part, parts, 16, &lo, &hi);
  u->bad[part] = update_range (u, lo, hi - lo);
}

/* Weights per part below which a block is updated by one thread. */
#define UPDATE_GRAIN 16384

/* Updates all of u's weights; nonzero: not finite. */
static guint32
update_all (Update *u)
{
  /* Large blocks are memory-bound: every core's bandwidth helps. */
  int parts = caml_parallel_chunks (u->count, UPDATE_GRAIN);
  if (parts <= 1)
    return update_range (u, 0, u->count);
  guint32 bad[4 * CAML_MAX_THREADS] = { 0 };
  u->bad = bad;
  caml_parallel_for (parts, update_part, u);
  guint32 any = 0;
  for (int i = 0; i < parts; i++)
    any |= bad[i];
  return any;
}

/* Updates every row of the token table p (u: all of it) under weight decay:
 * the rows of the batch's tokens decayed, the others not (they have no
 * gradient: see the top of the file), a run of rows alike at a time.
 * Nonzero: not finite. */
static guint32
update_table (const Update *u, const CamlModel *model, const CamlParam *p)
{
  size_t r = (size_t) p->token_rows, rows = p->count / r;
  size_t marked = model->touched_mark != NULL ? MIN (rows, (size_t) model->input.vocab) : 0;
  guint32 bad = 0;
  for (size_t lo = 0; lo < rows;)
    {
      gboolean seen = lo < marked && model->touched_mark[lo];
      size_t hi = lo + 1;
      while (hi < rows && (hi < marked && model->touched_mark[hi]) == seen)
        hi++;
      Update run = *u;
      run.offset = u->offset + lo * r;
      run.count = (hi - lo) * r;
      run.wd = seen ? u->wd : 0.0f;
      bad |= update_all (&run);
      lo = hi;
    }
  return bad;
}

/* Records a range the step changes, for caml_optimizer_undo. */
static void
record_range (CamlOptimizer *opt, size_t offset, size_t count)
{
  gsize range[2] = { offset, count };
  g_array_append_vals (opt->saved_ranges, range, 2);
}

int
caml_optimizer_state_blocks (const CamlOptimizerConfig *config)
{
  switch (config->kind)
    {
    case CAML_OPTIM_ADAM:
      return 2;
    case CAML_OPTIM_ADAGRAD:
      return 1;
    default:
      /* without momentum the velocity is each step's gradient: nothing to keep */
      return config->momentum != 0.0 ? 1 : 0;
    }
}

/* The copy that holds the state (the other one, of a dense optimizer, is
 * the state before the latest step). */
static float *
current_state (CamlOptimizer *opt)
{
  return opt->state + (opt->twin ? (size_t) opt->cur * opt->blocks * opt->n : 0);
}

float *
caml_optimizer_state (CamlOptimizer *opt, int *blocks)
{
  *blocks = opt->blocks;
  return current_state (opt);
}

void
caml_optimizer_state_written (CamlOptimizer *opt)
{
  /* A dense optimizer's copies must agree where a step does not write: the
   * frozen parameters. */
  if (opt->twin)
    {
      size_t size = (size_t) opt->blocks * opt->n;
      memcpy (opt->state + (size_t) (1 - opt->cur) * size, current_state (opt),
              size * sizeof (float));
    }
  opt->can_undo = FALSE;
}

gboolean
caml_optimizer_undo (CamlOptimizer *opt, CamlModel *model)
{
  g_assert (model->n_weights == opt->n);
  if (!opt->can_undo)
    return FALSE;
  if (opt->twin)
    opt->cur = 1 - opt->cur;
  const gsize *r = (const gsize *) opt->saved_ranges->data;
  for (guint i = 0; i + 1 < opt->saved_ranges->len; i += 2)
    {
      memcpy (model->w + r[i], opt->saved_w + r[i], r[i + 1] * sizeof (float));
      if (!opt->twin)
        for (int k = 0; k < opt->blocks; k++)
          memcpy (opt->state + (size_t) k * opt->n + r[i],
                  opt->saved_state + (size_t) k * opt->n + r[i], r[i + 1] * sizeof (float));
    }
  memcpy (opt->updates, opt->undo_updates, sizeof opt->updates);
  opt->can_undo = FALSE;
  return TRUE;
}

long *
caml_optimizer_updates (CamlOptimizer *opt)
{
  return opt->updates;
}

gboolean
caml_optimizer_is_sparse (const CamlOptimizer *opt)
{
  return config_is_sparse (&opt->config);
}

gboolean
caml_optimizer_step (CamlOptimizer *opt, CamlModel *model, long step)
{
  g_assert (model->n_weights == opt->n);
  gboolean sparse = model->sparse_grads && model->input.kind == CAML_SHAPE_TOKENS
                    && caml_optimizer_is_sparse (opt);
  gboolean active[CAML_N_GROUPS];
  guint32 bad = 0;

  memcpy (opt->undo_updates, opt->updates, sizeof opt->updates);
  opt->can_undo = TRUE;
  g_array_set_size (opt->saved_ranges, 0);
  for (int g = 0; g < CAML_N_GROUPS; g++)
    {
      active[g] = caml_em_group_active (opt->config.em_steps, (CamlParamGroup) g, step);
      if (active[g])
        opt->updates[g]++;
    }
  size_t n = opt->n;
  float wd = (float) opt->config.weight_decay;
  float *from = current_state (opt);
  float *to = opt->twin ? opt->state + (size_t) (1 - opt->cur) * opt->blocks * n : opt->state;
  for (int i = 0; i < model->n_layers; i++)
    {
      CamlLayer *layer = model->layers[i];
      for (int j = 0; j < layer->n_params; j++)
        {
          CamlParam *p = &layer->params[j];
          size_t off = p->offset;
          if (!active[p->group])
            {
              /* Unchanged: a dense optimizer's next copy needs it too (a
               * frozen parameter's state never changes in either). */
              if (opt->twin && p->group != CAML_GROUP_FROZEN)
                for (int k = 0; k < opt->blocks; k++)
                  memcpy (to + k * n + off, from + k * n + off, p->count * sizeof (float));
              continue;
            }
          Update u = { opt, model->w, model->dw, opt->blocks > 0 ? from : NULL,
                       opt->blocks > 0 ? to : NULL, off, p->count,
                       opt->updates[p->group], wd, NULL };
          if (p->token_rows > 0 && sparse)
            {
              /* Only the rows of the batch's tokens have gradients; the
               * others would not move (nor be decayed). */
              size_t rows = p->count / (size_t) p->token_rows, r = (size_t) p->token_rows;
              for (int k = 0; k < model->n_touched; k++)
                {
                  size_t row = (size_t) model->touched[k] * r;
                  if (row / r < rows)
                    {
                      record_range (opt, off + row, r);
                      bad |= update_range (&u, row, r);
                    }
                }
              continue;
            }
          record_range (opt, off, p->count);
          if (p->token_rows > 0 && wd != 0.0f)
            bad |= update_table (&u, model, p);
          else
            bad |= update_all (&u);
        }
    }
  if (opt->twin)
    opt->cur = 1 - opt->cur;
  return bad == 0;
}
