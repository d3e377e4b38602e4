/* test-loss.c — losses: known values and central-difference gradients. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "caml.h"

static void
check_loss_gradient (CamlLossKind kind, const float *target, int n, int d)
{
  GRand *rng = g_rand_new_with_seed (kind + 1);
  float *pred = g_new (float, n * d), *dpred = g_new (float, n * d);
  for (int i = 0; i < n * d; i++)
    pred[i] = (float) g_rand_double_range (rng, -2, 2);
  caml_loss_compute (kind, dpred, pred, target, n, d);
  for (int i = 0; i < n * d; i++)
    {
      const double eps = 1e-2;
      float saved = pred[i];
      pred[i] = saved + eps;
      double lp = caml_loss_compute (kind, NULL, pred, target, n, d);
      pred[i] = saved - eps;
      double lm = caml_loss_compute (kind, NULL, pred, target, n, d);
      pred[i] = saved;
      double numeric = (lp - lm) / (2 * eps);
      if (fabs (numeric - dpred[i]) > 1e-3 + 1e-2 * fabs (numeric))
        fail_msg ("%s: dpred[%d] = %g, numeric %g", caml_loss_names[kind], i,
                  dpred[i], numeric);
    }
  g_free (pred);
  g_free (dpred);
  g_rand_free (rng);
}

static void
test_mse (void **state)
{
  const float pred[] = { 1, 2, 3, 4 }, target[] = { 1, 0, 3, 2 };
  /* (0 + 4 + 0 + 4) / 4 */
  assert_float_equal (caml_loss_compute (CAML_LOSS_MSE, NULL, pred, target, 2, 2), 2.0, 1e-6);
  const float t2[] = { 0.5f, -1, 0, 2, 1, 0.3f };
  check_loss_gradient (CAML_LOSS_MSE, t2, 3, 2);
}

static void
test_softmax_cross_entropy (void **state)
{
  /* Equal logits over 4 classes: loss log 4 whatever the label. */
  const float pred[] = { 0, 0, 0, 0, 5, 5, 5, 5 }, labels[] = { 2, 0 };
  assert_float_equal (caml_loss_compute (CAML_LOSS_SOFTMAX_XENT, NULL, pred, labels, 2, 4),
                      log (4.0), 1e-6);
  /* Huge logits stay finite. */
  const float big[] = { 1000, -1000, 0 }, label0[] = { 1 };
  float loss = caml_loss_compute (CAML_LOSS_SOFTMAX_XENT, NULL, big, label0, 1, 3);
  assert_true (isfinite (loss));
  assert_float_equal (loss, 2000.0, 1e-2);
  const float t[] = { 0, 3, 1 };
  check_loss_gradient (CAML_LOSS_SOFTMAX_XENT, t, 3, 4);
}

static void
test_sigmoid_cross_entropy (void **state)
{
  const float zero[] = { 0 }, half[] = { 1 };
  assert_float_equal (caml_loss_compute (CAML_LOSS_SIGMOID_XENT, NULL, zero, half, 1, 1),
                      log (2.0), 1e-6);
  const float big[] = { -500 }, one[] = { 1 };
  assert_float_equal (caml_loss_compute (CAML_LOSS_SIGMOID_XENT, NULL, big, one, 1, 1),
                      500.0, 1e-3);
  const float t[] = { 1, 0, 0.3f, 1, 0, 1 };
  check_loss_gradient (CAML_LOSS_SIGMOID_XENT, t, 2, 3);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_mse),
    cmocka_unit_test (test_softmax_cross_entropy),
    cmocka_unit_test (test_sigmoid_cross_entropy),
  };
  return cmocka_run_group_tests_name ("loss", tests, NULL, NULL);
}
