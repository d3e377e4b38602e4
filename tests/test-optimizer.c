/* test-optimizer.c — one update of each optimizer against the formula, and
 * the em_steps schedule. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "caml.h"
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

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_sgd_momentum),
    cmocka_unit_test (test_adagrad),
    cmocka_unit_test (test_adam),
    cmocka_unit_test (test_em_schedule),
    cmocka_unit_test (test_optimizers_train),
  };
  return cmocka_run_group_tests_name ("optimizer", tests, NULL, NULL);
}
