/* optimizer.c — SGD with momentum, Adagrad and Adam over the model's flat
 * parameter block, with the paper's block-coordinate em_steps schedule
 * (Sec. 4.2.1): with em_steps = E > 0, gate parameters are updated only while
 * ⌊step / E⌋ is even and value parameters only while it is odd; parameters of
 * plain layers are always updated. */
#include <math.h>

#include "caml.h"
#include "parallel.h"

const char *const caml_optimizer_names[] = { "sgd", "adagrad", "adam", NULL };

struct _CamlOptimizer {
  CamlOptimizerConfig config;
  size_t n;
  float *state;          /* (2, n): m (or velocity, or accumulator), then v */
  long   updates[CAML_N_GROUPS];     /* updates applied per CamlParamGroup (Adam bias correction) */
};

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
    .em_steps = 0,
  };
}

CamlOptimizer *
caml_optimizer_try_new (const CamlOptimizerConfig *config, size_t n_weights, GError **error)
{
  /* The state is as large as the weights and their gradients together:
   * a size the user chose, allocated where failing is an error. */
  size_t count = 0, bytes = 0;
  gboolean overflow = !g_size_checked_mul (&count, 2, MAX (n_weights, 1))
                      || !g_size_checked_mul (&bytes, count, sizeof (float));
  float *state = overflow ? NULL : g_try_malloc0 (bytes);
  if (state == NULL)
    {
      g_autofree char *need = overflow ? g_strdup ("more memory than can be addressed")
                                       : g_format_size ((guint64) bytes);
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "the optimizer's state needs %s (%s keeps 2 values for each of %zu "
                   "parameters), which cannot be allocated", need,
                   caml_optimizer_names[config->kind], n_weights);
      return NULL;
    }
  CamlOptimizer *opt = g_new0 (CamlOptimizer, 1);
  opt->config = *config;
  opt->n = n_weights;
  opt->state = state;
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

static void
update (CamlOptimizer *opt, float *w, const float *g, float *m, float *v,
        size_t count, long t)
{
  const CamlOptimizerConfig *c = &opt->config;
  float lr = (float) c->lr;
  switch (c->kind)
    {
    case CAML_OPTIM_SGD:
      {
        float mu = (float) c->momentum;
        for (size_t i = 0; i < count; i++)
          {
            m[i] = mu * m[i] + g[i];
            w[i] -= lr * m[i];
          }
        break;
      }
    case CAML_OPTIM_ADAGRAD:
      {
        float eps = (float) c->eps;
        for (size_t i = 0; i < count; i++)
          {
            m[i] += g[i] * g[i];
            w[i] -= lr * g[i] / (sqrtf (m[i]) + eps);
          }
        break;
      }
    case CAML_OPTIM_ADAM:
      {
        float b1 = (float) c->beta1, b2 = (float) c->beta2, eps = (float) c->eps;
        /* Fold both bias corrections into the step size. */
        double c1 = 1.0 - pow (c->beta1, (double) t);
        double c2 = 1.0 - pow (c->beta2, (double) t);
        float step = (float) (c->lr * sqrt (c2) / c1);
        float eps_hat = (float) (eps * sqrt (c2));
        for (size_t i = 0; i < count; i++)
          {
            m[i] = b1 * m[i] + (1.0f - b1) * g[i];
            v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
            w[i] -= step * m[i] / (sqrtf (v[i]) + eps_hat);
          }
        break;
      }
    default:
      g_assert_not_reached ();
    }
}

typedef struct {
  CamlOptimizer *opt;
  float         *w, *m, *v;
  const float   *g;
  size_t         count;
  long           t;
} Update;

static void
update_part (int part, gpointer data)
{
  const Update *u = data;
  size_t half = (u->count / 2 + 15) & ~(size_t) 15;
  size_t lo = part == 0 ? 0 : half, hi = part == 0 ? half : u->count;
  update (u->opt, u->w + lo, u->g + lo, u->m + lo, u->v + lo, hi - lo, u->t);
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

float *
caml_optimizer_state (CamlOptimizer *opt, int *blocks)
{
  *blocks = caml_optimizer_state_blocks (&opt->config);
  return opt->state;
}

long *
caml_optimizer_updates (CamlOptimizer *opt)
{
  return opt->updates;
}

gboolean
caml_optimizer_is_sparse (const CamlOptimizer *opt)
{
  return opt->config.kind == CAML_OPTIM_ADAGRAD
      || (opt->config.kind == CAML_OPTIM_SGD && opt->config.momentum == 0.0);
}

void
caml_optimizer_step (CamlOptimizer *opt, CamlModel *model, long step)
{
  g_assert (model->n_weights == opt->n);
  gboolean sparse = model->sparse_grads && model->input.kind == CAML_SHAPE_TOKENS
                    && caml_optimizer_is_sparse (opt);
  gboolean active[CAML_N_GROUPS];
  for (int g = 0; g < CAML_N_GROUPS; g++)
    {
      active[g] = caml_em_group_active (opt->config.em_steps, (CamlParamGroup) g, step);
      if (active[g])
        opt->updates[g]++;
    }
  for (int i = 0; i < model->n_layers; i++)
    {
      CamlLayer *layer = model->layers[i];
      for (int j = 0; j < layer->n_params; j++)
        {
          CamlParam *p = &layer->params[j];
          if (!active[p->group])
            continue;
          Update u = { opt, p->w, opt->state + p->offset, opt->state + opt->n + p->offset,
                       p->dw, p->count, opt->updates[p->group] };
          if (p->token_rows > 0 && sparse)
            {
              /* Only the rows of the batch's tokens have gradients; the
               * others would not move. */
              size_t rows = p->count / (size_t) p->token_rows, r = (size_t) p->token_rows;
              for (int k = 0; k < model->n_touched; k++)
                {
                  size_t off = (size_t) model->touched[k] * r;
                  if (off / r < rows)
                    update (opt, u.w + off, u.g + off, u.m + off, u.v + off, r, u.t);
                }
              continue;
            }
          /* Large blocks are memory-bound: both cores' bandwidth helps. */
          if (p->count >= 65536)
            caml_parallel_run (update_part, &u);
          else
            update (opt, u.w, u.g, u.m, u.v, u.count, u.t);
        }
    }
}
