/* test-optimizer.c — one update of each optimizer against the formula, and
 * the em_steps schedule. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "caml-private.h"   /* tests the engine's internals */
#include "gradcheck.h"

/* A model with one dense layer 1 → 1 (W, b): two weights. */
static CamlModel *
tiny_model (void)
{
  CamlShape in = caml_shape_flat (1);
  CamlLayerSpec spec = caml_test_spec ("dense", "units", 1.0, NULL);
  CamlModel *model = caml_model_new (&in, &spec, 1, NULL, NULL);
  assert_non_null (model);
  assert_int_equal (model->n_weights, 2);
  return model;
}

static void
run_steps (CamlOptimizerKind kind, double lr, const float *grads, int steps,
           double *w_out)
{
  CamlModel *model = tiny_model ();
  model->w[0] = 1.0f;
  model->w[1] = -0.5f;
  CamlOptimizerConfig config;
  caml_optimizer_config_defaults (&config, kind);
  config.lr = lr;
  config.momentum = 0.9;
  CamlOptimizer *opt = caml_optimizer_new (&config, model->n_weights);
  for (int t = 0; t < steps; t++)
    {
      model->dw[0] = grads[2 * t];
      model->dw[1] = grads[2 * t + 1];
      caml_optimizer_step (opt, model, t);
    }
  w_out[0] = model->w[0];
  w_out[1] = model->w[1];
  caml_optimizer_free (opt);
  caml_model_free (model);
}

static void
test_sgd_momentum (void **state)
{
  const float g[] = { 0.5f, -1.0f, 0.25f, 2.0f };
  double w[2];
  run_steps (CAML_OPTIM_SGD, 0.1, g, 2, w);
  /* v1 = g1; v2 = 0.9 v1 + g2; w = w0 − lr (v1 + v2) */
  double v1a = 0.5, v2a = 0.9 * 0.5 + 0.25;
  double v1b = -1.0, v2b = 0.9 * -1.0 + 2.0;
  assert_float_equal (w[0], 1.0 - 0.1 * (v1a + v2a), 1e-6);
  assert_float_equal (w[1], -0.5 - 0.1 * (v1b + v2b), 1e-6);
}

static void
test_adagrad (void **state)
{
  const float g[] = { 0.5f, -1.0f, 0.25f, 2.0f };
  double w[2];
  run_steps (CAML_OPTIM_ADAGRAD, 0.01, g, 2, w);
  double acc = 0.1, x = 1.0;
  acc += 0.25; x -= 0.01 * 0.5 / (sqrt (acc) + 1e-7);
  acc += 0.0625; x -= 0.01 * 0.25 / (sqrt (acc) + 1e-7);
  assert_float_equal (w[0], x, 1e-6);
}

static void
test_adam (void **state)
{
  const float g[] = { 0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 0.0f };
  double w[2];
  run_steps (CAML_OPTIM_ADAM, 0.01, g, 3, w);
  double m = 0, v = 0, x = 1.0;
  for (int t = 1; t <= 3; t++)
    {
      double gt = g[2 * (t - 1)];
      m = 0.9 * m + 0.1 * gt;
      v = 0.999 * v + 0.001 * gt * gt;
      double mh = m / (1 - pow (0.9, t)), vh = v / (1 - pow (0.999, t));
      x -= 0.01 * mh / (sqrt (vh) + 1e-8);
    }
  assert_float_equal (w[0], x, 1e-5);
}

static void
test_em_schedule (void **state)
{
  /* E = 0: everything, every step. */
  for (long s = 0; s < 10; s++)
    for (int g = 0; g < 3; g++)
      assert_true (caml_em_group_active (0, (CamlParamGroup) g, s));
  /* E = 100: gate in [0, 100), value in [100, 200), gate again from 200. */
  assert_true (caml_em_group_active (100, CAML_GROUP_GATE, 0));
  assert_true (caml_em_group_active (100, CAML_GROUP_GATE, 99));
  assert_false (caml_em_group_active (100, CAML_GROUP_GATE, 100));
  assert_true (caml_em_group_active (100, CAML_GROUP_VALUE, 100));
  assert_false (caml_em_group_active (100, CAML_GROUP_VALUE, 99));
  assert_true (caml_em_group_active (100, CAML_GROUP_GATE, 200));
  assert_true (caml_em_group_active (100, CAML_GROUP_ALWAYS, 150));
}

/* Training the surface with every optimizer lowers the loss. */
static void
test_optimizers_train (void **state)
{
  CamlDataset *train, *test;
  caml_data_surface (41, 0.1, 2, &train, &test);
  CamlShape in = caml_shape_flat (2);
  CamlLayerSpec specs[] = {
    caml_test_spec ("ca_nn", "units", 5.0, NULL),
    caml_test_spec ("dense", "units", 1.0, NULL),
  };
  const double lrs[] = { 0.1, 0.1, 0.02 };
  for (int kind = 0; kind < CAML_N_OPTIMS; kind++)
    {
      GRand *rng = g_rand_new_with_seed (3);
      CamlModel *model = caml_model_new (&in, specs, 2, rng, NULL);
      CamlOptimizerConfig config;
      caml_optimizer_config_defaults (&config, (CamlOptimizerKind) kind);
      config.lr = lrs[kind];
      config.em_steps = kind == CAML_OPTIM_ADAGRAD ? 10 : 0;
      CamlOptimizer *opt = caml_optimizer_new (&config, model->n_weights);
      float *dpred = g_new (float, train->n);
      float first = 0, last = 0;
      for (long step = 0; step < 300; step++)
        {
          caml_model_zero_grad (model);
          const float *pred = caml_model_forward (model, train->x, train->n);
          last = caml_loss_compute (CAML_LOSS_MSE, dpred, pred, train->y, train->n, 1);
          if (step == 0)
            first = last;
          caml_model_backward (model, train->x, dpred, train->n);
          caml_optimizer_step (opt, model, step);
        }
      if (!(last < 0.5f * first))
        fail_msg ("%s: loss %g → %g", caml_optimizer_names[kind], first, last);
      g_free (dpred);
      caml_optimizer_free (opt);
      caml_model_free (model);
      g_rand_free (rng);
    }
  caml_dataset_free (train);
  caml_dataset_free (test);
}

/* ---- added by review: every hyperparameter against the formulas on every
 * weight, Adam's bias correction under em_steps, frozen tables, and the
 * parameter groups of every CA layer by name ---- */

/* One optimizer, `steps` updates of a 2-weight model from fixed gradients,
 * against the update rules written out in double (weight decay: the rule
 * sees g + λ·w). */
static void
check_against_formula (const CamlOptimizerConfig *config, int steps)
{
  CamlModel *model = tiny_model ();
  const double w_init[2] = { 1.0, -0.5 };
  model->w[0] = (float) w_init[0];
  model->w[1] = (float) w_init[1];
  CamlOptimizer *opt = caml_optimizer_new (config, model->n_weights);
  double w[2] = { w_init[0], w_init[1] }, m[2] = { 0, 0 }, v[2] = { 0, 0 };
  if (config->kind == CAML_OPTIM_ADAGRAD)
    m[0] = m[1] = config->initial_accumulator;
  GRand *rng = g_rand_new_with_seed (3);
  for (int t = 1; t <= steps; t++)
    {
      for (int i = 0; i < 2; i++)
        {
          float g_loss = (float) g_rand_double_range (rng, -2, 2);
          model->dw[i] = g_loss;
          double g = g_loss + config->weight_decay * w[i];
          switch (config->kind)
            {
            case CAML_OPTIM_SGD:
              m[i] = config->momentum * m[i] + g;
              w[i] -= config->lr * m[i];
              break;
            case CAML_OPTIM_ADAGRAD:
              m[i] += g * g;
              w[i] -= config->lr * g / (sqrt (m[i]) + config->eps);
              break;
            default:
              m[i] = config->beta1 * m[i] + (1 - config->beta1) * g;
              v[i] = config->beta2 * v[i] + (1 - config->beta2) * g * g;
              w[i] -= config->lr * (m[i] / (1 - pow (config->beta1, t)))
                      / (sqrt (v[i] / (1 - pow (config->beta2, t))) + config->eps);
            }
        }
      caml_optimizer_step (opt, model, t - 1);
      for (int i = 0; i < 2; i++)
        if (fabs (model->w[i] - w[i]) > 1e-5 * fmax (1.0, fabs (w[i])))
          fail_msg ("%s step %d weight %d: %.7g, formula %.7g", caml_optimizer_names[config->kind],
                    t, i, model->w[i], w[i]);
    }
  g_rand_free (rng);
  caml_optimizer_free (opt);
  caml_model_free (model);
}

static void
test_hyperparameters (void **state)
{
  (void) state;
  CamlOptimizerConfig c;
  caml_optimizer_config_defaults (&c, CAML_OPTIM_SGD);       /* plain SGD */
  c.lr = 0.1;
  check_against_formula (&c, 5);
  c.momentum = 0.5;
  check_against_formula (&c, 5);
  caml_optimizer_config_defaults (&c, CAML_OPTIM_ADAGRAD);
  c.lr = 0.05;
  check_against_formula (&c, 5);                              /* defaults */
  c.initial_accumulator = 0.0;
  check_against_formula (&c, 5);
  c.initial_accumulator = 2.5;
  c.eps = 0.3;
  check_against_formula (&c, 5);
  caml_optimizer_config_defaults (&c, CAML_OPTIM_ADAM);
  c.lr = 0.02;
  check_against_formula (&c, 6);                              /* defaults */
  c.beta1 = 0.5;
  c.beta2 = 0.8;
  c.eps = 0.1;
  check_against_formula (&c, 6);
  c.beta1 = 0.0;
  check_against_formula (&c, 6);
  /* weight decay, with each rule's options away from their defaults too */
  caml_optimizer_config_defaults (&c, CAML_OPTIM_SGD);
  c.lr = 0.1;
  c.weight_decay = 0.3;
  check_against_formula (&c, 5);
  c.momentum = 0.5;
  check_against_formula (&c, 5);
  caml_optimizer_config_defaults (&c, CAML_OPTIM_ADAGRAD);
  c.lr = 0.05;
  c.weight_decay = 0.3;
  check_against_formula (&c, 5);
  c.initial_accumulator = 0.0;
  c.weight_decay = 2.0;
  check_against_formula (&c, 5);
  caml_optimizer_config_defaults (&c, CAML_OPTIM_ADAM);
  c.lr = 0.02;
  c.weight_decay = 0.3;
  check_against_formula (&c, 6);
  c.beta1 = 0.5;
  c.beta2 = 0.8;
  c.weight_decay = 5.0;
  check_against_formula (&c, 6);
}

/* One step under weight decay λ from w = (1, −0.5) and g = (−0.05, 0.02),
 * written out by hand: the rules see g + λ·w = (0.05, −0.03), whose signs
 * are not g's (so Adam's first step, ≈ lr·sign, moves the other way than
 * it would without decay). */
static void
test_weight_decay_step (void **state)
{
  (void) state;
  const double w0[2] = { 1.0, -0.5 }, g[2] = { -0.05, 0.02 }, lambda = 0.1, lr = 0.1;
  const double gd[2] = { -0.05 + 0.1 * 1.0, 0.02 + 0.1 * -0.5 };   /* 0.05, −0.03 */
  double want[4][2];
  /* SGD: w − lr (g + λw) */
  for (int i = 0; i < 2; i++)
    want[0][i] = w0[i] - lr * gd[i];
  /* SGD with momentum 0.9, first step: the velocity is g + λw */
  for (int i = 0; i < 2; i++)
    want[1][i] = w0[i] - lr * gd[i];
  /* Adagrad, accumulator 0.1 + (g + λw)², eps 1e-7 */
  for (int i = 0; i < 2; i++)
    want[2][i] = w0[i] - lr * gd[i] / (sqrt (0.1 + gd[i] * gd[i]) + 1e-7);
  /* Adam, first step: m̂ = g + λw, v̂ = (g + λw)², eps 1e-8 */
  for (int i = 0; i < 2; i++)
    want[3][i] = w0[i] - lr * gd[i] / (sqrt (gd[i] * gd[i]) + 1e-8);
  assert_true (want[3][0] < w0[0] && want[3][1] > w0[1]);   /* not g's way */

  const CamlOptimizerKind kinds[4] = { CAML_OPTIM_SGD, CAML_OPTIM_SGD, CAML_OPTIM_ADAGRAD,
                                       CAML_OPTIM_ADAM };
  for (int k = 0; k < 4; k++)
    {
      CamlModel *model = tiny_model ();
      CamlOptimizerConfig config;
      caml_optimizer_config_defaults (&config, kinds[k]);
      config.lr = lr;
      config.momentum = k == 1 ? 0.9 : 0.0;
      config.weight_decay = lambda;
      CamlOptimizer *opt = caml_optimizer_new (&config, model->n_weights);
      for (int i = 0; i < 2; i++)
        {
          model->w[i] = (float) w0[i];
          model->dw[i] = (float) g[i];
        }
      assert_true (caml_optimizer_step (opt, model, 0));
      for (int i = 0; i < 2; i++)
        if (fabs (model->w[i] - want[k][i]) > 1e-6)
          fail_msg ("%s%s weight %d: %.9g, by hand %.9g", caml_optimizer_names[kinds[k]],
                    k == 1 ? " with momentum" : "", i, model->w[i], want[k][i]);
      caml_optimizer_free (opt);
      caml_model_free (model);
    }
}

/* Under em_steps = E, Adam corrects each group's moments by the number of
 * updates that group has had (optimizer.c: "updates applied per
 * CamlParamGroup"), so the value group's first update, at step E, is a full
 * Adam first step (≈ lr), not one damped by a global t. */
static void
test_adam_em_steps (void **state)
{
  (void) state;
  enum { E = 3, STEPS = 14 };
  CamlShape in = caml_shape_flat (2);
  CamlLayerSpec specs[] = { caml_test_spec ("ca_nn", "units", 2.0, NULL),
                            caml_test_spec ("dense", "units", 1.0, NULL) };
  CamlModel *model = caml_model_new (&in, specs, 2, NULL, NULL);
  assert_non_null (model);
  size_t nw = model->n_weights;
  CamlOptimizerConfig config;
  caml_optimizer_config_defaults (&config, CAML_OPTIM_ADAM);
  config.lr = 0.01;
  config.em_steps = E;
  CamlOptimizer *opt = caml_optimizer_new (&config, nw);
  double *w = g_new (double, nw), *m = g_new0 (double, nw), *v = g_new0 (double, nw);
  int *group = g_new (int, nw);
  for (int i = 0; i < model->n_layers; i++)
    for (int j = 0; j < model->layers[i]->n_params; j++)
      {
        CamlParam *p = &model->layers[i]->params[j];
        for (size_t a = 0; a < p->count; a++)
          group[p->offset + a] = p->group;
      }
  for (size_t a = 0; a < nw; a++)
    w[a] = model->w[a];
  long updates[CAML_N_GROUPS] = { 0 };
  GRand *rng = g_rand_new_with_seed (5);
  for (long step = 0; step < STEPS; step++)
    {
      for (int g = 0; g < CAML_N_GROUPS; g++)
        updates[g] += caml_em_group_active (E, (CamlParamGroup) g, step);
      for (size_t a = 0; a < nw; a++)
        {
          float g = (float) g_rand_double_range (rng, -1, 1);
          model->dw[a] = g;
          if (!caml_em_group_active (E, (CamlParamGroup) group[a], step))
            continue;
          long t = updates[group[a]];
          m[a] = 0.9 * m[a] + 0.1 * g;
          v[a] = 0.999 * v[a] + 0.001 * g * g;
          w[a] -= 0.01 * (m[a] / (1 - pow (0.9, t))) / (sqrt (v[a] / (1 - pow (0.999, t))) + 1e-8);
        }
      caml_optimizer_step (opt, model, step);
      for (size_t a = 0; a < nw; a++)
        if (fabs (model->w[a] - w[a]) > 1e-5)
          fail_msg ("step %ld weight %zu (group %d): %.7g, formula %.7g", step, a, group[a],
                    model->w[a], w[a]);
    }
  g_rand_free (rng);
  g_free (w); g_free (m); g_free (v); g_free (group);
  caml_optimizer_free (opt);
  caml_model_free (model);
}

/* Under em_steps the group a step leaves alone is not decayed either: with
 * zero gradients, a step of the gate phase shrinks the gate parameters (and
 * the plain layer's, biases included) by the decay alone and leaves the
 * value parameters bit for bit; the value phase the other way round. For
 * every optimizer; plain SGD against w − lr·λ·w. */
static void
test_weight_decay_em_steps (void **state)
{
  (void) state;
  enum { E = 2 };
  const double lr = 0.1, lambda = 0.5;
  CamlShape in = caml_shape_flat (2);
  CamlLayerSpec specs[] = { caml_test_spec ("ca_nn", "units", 2.0, NULL),
                            caml_test_spec ("dense", "units", 1.0, NULL) };
  for (int kind = 0; kind < CAML_N_OPTIMS; kind++)
    {
      CamlModel *model = caml_model_new (&in, specs, 2, NULL, NULL);
      assert_non_null (model);
      size_t nw = model->n_weights;
      for (size_t a = 0; a < nw; a++)
        model->w[a] = 0.5f + 0.01f * (float) a;   /* no weight is 0: each would shrink */
      memset (model->dw, 0, nw * sizeof (float));
      CamlOptimizerConfig config;
      caml_optimizer_config_defaults (&config, (CamlOptimizerKind) kind);
      config.lr = lr;
      config.weight_decay = lambda;
      config.em_steps = E;
      CamlOptimizer *opt = caml_optimizer_new (&config, nw);
      gboolean seen_bias = FALSE;
      for (long step = 0; step < 2 * E; step++)
        {
          float *before = g_memdup2 (model->w, nw * sizeof (float));
          assert_true (caml_optimizer_step (opt, model, step));
          for (int i = 0; i < model->n_layers; i++)
            for (int j = 0; j < model->layers[i]->n_params; j++)
              {
                const CamlParam *p = &model->layers[i]->params[j];
                gboolean active = caml_em_group_active (E, p->group, step);
                for (size_t a = p->offset; a < p->offset + p->count; a++)
                  if (!active && memcmp (&model->w[a], &before[a], sizeof (float)) != 0)
                    fail_msg ("%s step %ld: %s[%zu] of layer %d (group %d, left alone) moved "
                              "from %.9g to %.9g", caml_optimizer_names[kind], step, p->name,
                              a - p->offset, i, p->group, before[a], model->w[a]);
                  else if (active && !(fabsf (model->w[a]) < fabsf (before[a])))
                    fail_msg ("%s step %ld: %s[%zu] of layer %d (group %d) was not decayed: "
                              "%.9g to %.9g", caml_optimizer_names[kind], step, p->name,
                              a - p->offset, i, p->group, before[a], model->w[a]);
                  else if (active && kind == CAML_OPTIM_SGD
                           && fabs (model->w[a] - (before[a] - lr * lambda * before[a])) > 1e-6)
                    fail_msg ("sgd step %ld: %s[%zu]: %.9g, w − lr λ w = %.9g", step, p->name,
                              a - p->offset, model->w[a], before[a] - lr * lambda * before[a]);
                seen_bias |= active && i == 1 && g_str_equal (p->name, "b");
              }
          g_free (before);
        }
      assert_true (seen_bias);
      caml_optimizer_free (opt);
      caml_model_free (model);
    }
}

/* `trainable: false`: the table is in the frozen group and no optimizer,
 * sparse or dense path, with or without em_steps, with or without weight
 * decay, moves it; the rest trains. */
static void
test_frozen_embedding (void **state)
{
  (void) state;
  enum { N = 3, T = 4, V = 6 };
  CamlShape in = caml_shape_tokens (T, V);
  CamlLayerSpec specs[] = {
    caml_test_spec ("embedding", "dim", 3.0, "trainable", 0.0, NULL),
    caml_test_spec ("ca_att", "query", 1.0, NULL),
    caml_test_spec ("dense", "units", 1.0, NULL),
  };
  const float x[N * T] = { 1, 2, 3, CAML_TOKEN_PAD, 0, CAML_TOKEN_OOV, 5, 4,
                           2, CAML_TOKEN_PAD, CAML_TOKEN_PAD, CAML_TOKEN_PAD };
  const float y[N] = { 1, 0, 1 };
  for (int decay = 0; decay <= 1; decay++)
    for (int kind = 0; kind < CAML_N_OPTIMS; kind++)
      for (int sparse = 0; sparse <= 1; sparse++)
        {
          GRand *rng = g_rand_new_with_seed (2);
          CamlModel *model = caml_model_new (&in, specs, 3, rng, NULL);
          g_rand_free (rng);
          assert_non_null (model);
          model->sparse_grads = sparse;
          CamlParam *E = &model->layers[0]->params[0];
          assert_int_equal (E->group, CAML_GROUP_FROZEN);
          float *E0 = g_memdup2 (E->w, E->count * sizeof (float));
          float *w0 = g_memdup2 (model->w, model->n_weights * sizeof (float));
          CamlOptimizerConfig config;
          caml_optimizer_config_defaults (&config, (CamlOptimizerKind) kind);
          config.lr = 0.1;
          config.momentum = kind == CAML_OPTIM_SGD && sparse ? 0.0 : 0.5;
          config.em_steps = 2;
          config.weight_decay = decay ? 0.5 : 0.0;
          CamlOptimizer *opt = caml_optimizer_new (&config, model->n_weights);
          float dpred[N];
          for (long step = 0; step < 8; step++)
            {
              caml_model_zero_grad (model);
              const float *pred = caml_model_forward (model, x, N);
              caml_loss_compute (CAML_LOSS_SIGMOID_XENT, dpred, pred, y, N, 1);
              caml_model_backward (model, x, dpred, N);
              caml_optimizer_step (opt, model, step);
            }
          assert_memory_equal (E->w, E0, E->count * sizeof (float));
          assert_memory_not_equal (model->w + E->count, w0 + E->count,
                                   (model->n_weights - E->count) * sizeof (float));
          g_free (E0);
          g_free (w0);
          caml_optimizer_free (opt);
          caml_model_free (model);
        }
}

/* The optimizer's state as it stands: (blocks, n) floats, and the counts. */
static float *
state_copy (CamlOptimizer *opt, size_t n, size_t *bytes, long updates[CAML_N_GROUPS])
{
  int blocks;
  float *st = caml_optimizer_state (opt, &blocks);
  *bytes = (size_t) blocks * n * sizeof (float);
  memcpy (updates, caml_optimizer_updates (opt), CAML_N_GROUPS * sizeof (long));
  return g_memdup2 (st, MAX (*bytes, 1));
}

/* caml_optimizer_undo takes the weights, the state and the update counts
 * back to before the latest step, for every optimizer, on the sparse rows of a token table
 * and on dense blocks, through em_steps phases (parameters left alone) and
 * a frozen table, with and without weight decay (a decayed step is undone
 * as exactly); the same step taken again then gives the same state and
 * weights bit for bit. A second undo does nothing. A state written in
 * (caml_optimizer_state_written) is the state from then on, frozen rows too.
 * A step whose weights are not finite returns FALSE. */
static void
test_undo (void **state)
{
  (void) state;
  enum { N = 3, T = 4, V = 6 };
  CamlShape in = caml_shape_tokens (T, V);
  const float x[N * T] = { 1, 2, 3, CAML_TOKEN_PAD, 0, CAML_TOKEN_OOV, 5, 4,
                           2, CAML_TOKEN_PAD, CAML_TOKEN_PAD, CAML_TOKEN_PAD };
  const float y[N] = { 1, 0, 1 };
  for (int decay = 0; decay <= 1; decay++)
    for (int trainable = 0; trainable <= 1; trainable++)
      for (int kind = 0; kind < CAML_N_OPTIMS; kind++)
        for (int sparse = 0; sparse <= 1; sparse++)
          {
            CamlLayerSpec specs[] = {
              caml_test_spec ("embedding", "dim", 3.0, "trainable", (double) trainable, NULL),
              caml_test_spec ("ca_att", "query", 1.0, NULL),
              caml_test_spec ("dense", "units", 1.0, NULL),
            };
            GRand *rng = g_rand_new_with_seed (2);
            CamlModel *model = caml_model_new (&in, specs, 3, rng, NULL);
            g_rand_free (rng);
            assert_non_null (model);
            model->sparse_grads = sparse;
            size_t nw = model->n_weights, wbytes = nw * sizeof (float), sbytes;
            CamlOptimizerConfig config;
            caml_optimizer_config_defaults (&config, (CamlOptimizerKind) kind);
            config.lr = 0.1;
            config.momentum = kind == CAML_OPTIM_SGD && sparse ? 0.0 : 0.5;
            config.em_steps = 2;
            config.weight_decay = decay ? 0.5 : 0.0;
            CamlOptimizer *opt = caml_optimizer_new (&config, nw);
            assert_false (caml_optimizer_undo (opt, model));   /* no step yet */
            float dpred[N];
            long u_before[CAML_N_GROUPS], u_after[CAML_N_GROUPS], u[CAML_N_GROUPS];
            for (long step = 0; step < 9; step++)
              {
                caml_model_zero_grad (model);
                const float *pred = caml_model_forward (model, x, N);
                caml_loss_compute (CAML_LOSS_SIGMOID_XENT, dpred, pred, y, N, 1);
                caml_model_backward (model, x, dpred, N);
                float *w_before = g_memdup2 (model->w, wbytes);
                float *before = state_copy (opt, nw, &sbytes, u_before);
                assert_true (caml_optimizer_step (opt, model, step));
                float *w_after = g_memdup2 (model->w, wbytes);
                float *after = state_copy (opt, nw, &sbytes, u_after);
                /* what the step left alone keeps its state */
                for (int i = 0; i < model->n_layers; i++)
                  for (int j = 0; j < model->layers[i]->n_params; j++)
                    {
                      CamlParam *p = &model->layers[i]->params[j];
                      if (caml_em_group_active (2, p->group, step))
                        continue;
                      for (size_t k = 0; k < sbytes / wbytes; k++)
                        assert_memory_equal (after + k * nw + p->offset,
                                             before + k * nw + p->offset,
                                             p->count * sizeof (float));
                    }

                assert_true (caml_optimizer_undo (opt, model));
                float *undone = state_copy (opt, nw, &sbytes, u);
                assert_memory_equal (undone, before, sbytes);
                assert_memory_equal (u, u_before, sizeof u);
                assert_memory_equal (model->w, w_before, wbytes);
                assert_false (caml_optimizer_undo (opt, model));
                g_free (undone);
                undone = state_copy (opt, nw, &sbytes, u);
                assert_memory_equal (undone, before, sbytes);
                assert_memory_equal (model->w, w_before, wbytes);

                caml_optimizer_step (opt, model, step);
                float *again = state_copy (opt, nw, &sbytes, u);
                assert_memory_equal (again, after, sbytes);
                assert_memory_equal (u, u_after, sizeof u);
                assert_memory_equal (model->w, w_after, wbytes);
                g_free (w_before); g_free (before); g_free (w_after); g_free (after);
                g_free (undone); g_free (again);
              }

            /* a state written in: every value, kept through steps and undos */
            int blocks;
            float *st = caml_optimizer_state (opt, &blocks);
            for (size_t i = 0; i < (size_t) blocks * nw; i++)
              st[i] = 0.25f + (float) (i % 7) / 8.0f;
            caml_optimizer_state_written (opt);
            assert_false (caml_optimizer_undo (opt, model));
            float *written = state_copy (opt, nw, &sbytes, u);
            float *w_written = g_memdup2 (model->w, wbytes);
            caml_optimizer_step (opt, model, 9);
            CamlParam *E = &model->layers[0]->params[0];
            st = caml_optimizer_state (opt, &blocks);
            for (int k = 0; k < blocks; k++)
              if (E->group == CAML_GROUP_FROZEN)   /* never updated: as written */
                assert_memory_equal (st + k * nw + E->offset, written + k * nw + E->offset,
                                     E->count * sizeof (float));
            assert_true (caml_optimizer_undo (opt, model));
            float *undone = state_copy (opt, nw, &sbytes, u);
            assert_memory_equal (undone, written, sbytes);
            assert_memory_equal (model->w, w_written, wbytes);
            g_free (undone);

            /* a step to weights that are not finite says so, and is undone */
            caml_optimizer_set_lr (opt, 1e300);   /* Inf as a float, at any step */
            assert_false (caml_optimizer_step (opt, model, 10));
            assert_true (caml_optimizer_undo (opt, model));
            assert_memory_equal (model->w, w_written, wbytes);
            undone = state_copy (opt, nw, &sbytes, u);
            assert_memory_equal (undone, written, sbytes);
            g_free (undone);
            g_free (w_written);
            g_free (written);
            caml_optimizer_free (opt);
            caml_model_free (model);
          }
}

/* The two blocks of the em_steps schedule, by parameter name, for every CA
 * layer that test-rnn.c and test-attention.c do not already check; plain
 * layers are always updated. */
static void
expect_groups (const char *type, const CamlShape *in, const char *const *gate,
               const char *const *value, double always_on)
{
  CamlLayerSpec spec = caml_test_spec (type, NULL);
  int k = caml_layer_ops_option_index (spec.ops, "always_on");
  if (k >= 0)
    spec.opt[k] = always_on;
  CamlModel *model = caml_model_new (in, &spec, 1, NULL, NULL);
  assert_non_null (model);
  CamlLayer *layer = model->layers[0];
  int n_gate = 0;
  for (int j = 0; j < layer->n_params; j++)
    {
      const CamlParam *p = &layer->params[j];
      CamlParamGroup want;
      if (gate != NULL && g_strv_contains (gate, p->name))
        want = CAML_GROUP_GATE, n_gate++;
      else if (value != NULL && g_strv_contains (value, p->name))
        want = CAML_GROUP_VALUE;
      else
        want = CAML_GROUP_ALWAYS;
      if (p->group != want)
        fail_msg ("%s: parameter %s is in group %d, expected %d", type, p->name, p->group, want);
    }
  if (gate != NULL && always_on == 0.0)
    assert_true (n_gate > 0);
  caml_model_free (model);
}

static void
test_parameter_groups (void **state)
{
  (void) state;
  static const char *const gate_u[] = { "u", "b_chi", NULL };
  static const char *const value_w[] = { "W", "b", "w0", NULL };
  static const char *const gate_bsfe[] = { "w_sigma", "theta", NULL };
  static const char *const value_bsfe[] = { "w_prime", "v0", NULL };
  CamlShape flat = caml_shape_flat (3), image = caml_shape_image (1, 6, 6);
  CamlShape tokens = caml_shape_tokens (5, 9);
  expect_groups ("ca_nn", &flat, gate_u, value_w, 0);
  expect_groups ("ca_res", &flat, gate_u, value_w, 0);
  expect_groups ("ca_res", &flat, gate_u, value_w, 1);   /* b = 1: values only */
  expect_groups ("ca_cnn", &image, gate_u, value_w, 0);
  expect_groups ("ca_res_conv", &image, gate_u, value_w, 0);
  expect_groups ("ca_res_conv", &image, gate_u, value_w, 1);
  expect_groups ("ca_bsfe", &tokens, gate_bsfe, value_bsfe, 0);
  expect_groups ("dense", &flat, NULL, NULL, 0);
  expect_groups ("conv2d", &image, NULL, NULL, 0);
  expect_groups ("average", &tokens, NULL, NULL, 0);
  expect_groups ("embedding", &tokens, NULL, NULL, 0);
}

/* The state is as large as the weights and their gradients together, a
 * size the user chose: one no machine holds is an error saying how much,
 * not an abort. 2^46 parameters need 1.4 PB of Adam state, beyond a 47-bit
 * address space, so it fails even where the kernel overcommits without
 * limit; nothing is allocated. */
static void
test_state_too_large (void **state)
{
  (void) state;
  CamlOptimizerConfig config;
  GError *error = NULL;
  size_t n = (size_t) 1 << 46;

  caml_optimizer_config_defaults (&config, CAML_OPTIM_ADAM);
  assert_null (caml_optimizer_try_new (&config, n, &error));
  g_autofree char *need = g_format_size ((guint64) n * 5 * sizeof (float));
  g_autofree char *expected = g_strdup_printf (
    "the optimizer's state needs %s (adam keeps 5 values for each of %zu parameters: its "
    "state, and what undoes its latest update), which cannot be allocated", need, n);
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_INVALID));
  assert_string_equal (error->message, expected);
  g_clear_error (&error);

  /* Bytes beyond what size_t counts. */
  n = SIZE_MAX / 4;
  caml_optimizer_config_defaults (&config, CAML_OPTIM_ADAGRAD);
  assert_null (caml_optimizer_try_new (&config, n, &error));
  g_free (expected);
  expected = g_strdup_printf ("the optimizer's state needs more memory than can be "
                              "addressed (adagrad keeps 3 values for each of %zu "
                              "parameters: its state, and what undoes its latest update), "
                              "which cannot be allocated", n);
  assert_string_equal (error->message, expected);
  g_clear_error (&error);

  /* A size that fits: Adagrad's accumulators start at initial_accumulator. */
  CamlModel *model = tiny_model ();
  CamlOptimizer *opt = caml_optimizer_try_new (&config, model->n_weights, &error);
  assert_non_null (opt);
  assert_null (error);
  model->w[0] = 1.0f;
  model->dw[0] = 1.0f;
  model->dw[1] = 0.0f;
  float w1 = model->w[1];
  caml_optimizer_step (opt, model, 0);
  /* w −= lr g / (sqrt (acc + g²) + eps) */
  double acc = config.initial_accumulator + 1.0;
  assert_float_equal (model->w[0], 1.0 - config.lr / (sqrt (acc) + config.eps), 1e-6);
  assert_float_equal (model->w[1], w1, 0.0);
  caml_optimizer_free (opt);
  caml_model_free (model);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_sgd_momentum),
    cmocka_unit_test (test_adagrad),
    cmocka_unit_test (test_adam),
    cmocka_unit_test (test_em_schedule),
    cmocka_unit_test (test_optimizers_train),
    cmocka_unit_test (test_hyperparameters),
    cmocka_unit_test (test_weight_decay_step),
    cmocka_unit_test (test_weight_decay_em_steps),
    cmocka_unit_test (test_adam_em_steps),
    cmocka_unit_test (test_frozen_embedding),
    cmocka_unit_test (test_undo),
    cmocka_unit_test (test_parameter_groups),
    cmocka_unit_test (test_state_too_large),
  };
  return cmocka_run_group_tests_name ("optimizer", tests, NULL, NULL);
}
