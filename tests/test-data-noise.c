/* test-data-noise.c — the surface data's `noise` option: 0 gives the old
 * data bit for bit; a value changes only the training targets, seeded; it
 * survives a round trip; bad values are refused naming the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "caml.h"
#include "caml-private.h"   /* caml_data_surface */

static CamlExperiment *
load (const char *data_json, GError **error)
{
  g_autofree char *json = g_strdup_printf (
    "{ \"name\": \"n\", \"seed\": 3, \"data\": { %s },"
    "  \"model\": [ { \"layer\": \"dense\", \"units\": 1 } ], \"loss\": \"mse\" }", data_json);
  return caml_experiment_load_data (json, -1, "test", error);
}

static gboolean
same_set (const CamlDataset *a, const CamlDataset *b, gboolean targets)
{
  return a->n == b->n && memcmp (a->x, b->x, sizeof (float) * a->n * 2) == 0
         && (!targets || memcmp (a->y, b->y, sizeof (float) * a->n) == 0);
}

static void
test_noise_zero_is_old_data (void **state)
{
  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = load ("\"builtin\": \"surface\", \"grid\": 41, \"train_fraction\": 0.1",
                              &error);
  assert_non_null (exp);
  assert_true (exp->data.noise == 0.0);
  CamlDataset *train = NULL, *test = NULL, *old_train = NULL, *old_test = NULL;
  assert_true (caml_experiment_load_datasets (exp, &train, &test, &error));
  caml_data_surface (41, 0.1, 3, &old_train, &old_test);
  assert_true (same_set (train, old_train, TRUE));
  assert_true (same_set (test, old_test, TRUE));
  /* Written without the key: old files stay as they were. */
  g_autofree char *json = caml_experiment_to_json (exp);
  assert_null (strstr (json, "noise"));

  /* With noise: the same split and test set, other training targets. */
  CamlExperiment *noisy = load ("\"builtin\": \"surface\", \"grid\": 41, "
                                "\"train_fraction\": 0.1, \"noise\": 0.2", &error);
  assert_non_null (noisy);
  CamlDataset *ntrain = NULL, *ntest = NULL, *again_train = NULL, *again_test = NULL;
  assert_true (caml_experiment_load_datasets (noisy, &ntrain, &ntest, &error));
  assert_true (same_set (ntrain, old_train, FALSE));
  assert_true (same_set (ntest, old_test, TRUE));
  int changed = 0;
  double sum2 = 0;
  for (int i = 0; i < ntrain->n; i++)
    {
      double d = ntrain->y[i] - old_train->y[i];
      changed += d != 0;
      sum2 += d * d;
    }
  assert_int_equal (changed, ntrain->n);
  double sd = sqrt (sum2 / ntrain->n);   /* 168 draws of σ = 0.2 */
  assert_true (sd > 0.15 && sd < 0.25);
  /* Seeded: the same experiment gives the same noise. */
  assert_true (caml_experiment_load_datasets (noisy, &again_train, &again_test, &error));
  assert_true (same_set (again_train, ntrain, TRUE));

  /* Round trip. */
  g_autofree char *noisy_json = caml_experiment_to_json (noisy);
  assert_non_null (strstr (noisy_json, "\"noise\": 0.2"));
  CamlExperiment *back = caml_experiment_load_data (noisy_json, -1, "again", &error);
  assert_non_null (back);
  assert_true (back->data.noise == 0.2);
  assert_true (caml_experiment_equal (back, noisy));
  assert_false (caml_data_config_equal (&back->data, &exp->data));

  caml_experiment_free (back);
  for (CamlDataset **s = (CamlDataset *[]) { train, test, old_train, old_test, ntrain, ntest,
                                             again_train, again_test, NULL }; *s; s++)
    caml_dataset_free (*s);
  caml_experiment_free (noisy);
  caml_experiment_free (exp);
}

static void
test_noise_bad_values (void **state)
{
  const char *bad[] = { "-0.1", "11", "\"high\"", "null" };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *data = g_strdup_printf ("\"builtin\": \"surface\", \"noise\": %s", bad[i]);
      CamlExperiment *exp = load (data, &error);
      assert_null (exp);
      assert_non_null (error);
      assert_non_null (strstr (error->message, "data.noise"));
    }
  /* Not an option of XOR, which has no grid to add it to. */
  g_autoptr (GError) error = NULL;
  assert_null (load ("\"builtin\": \"xor\", \"noise\": 0.1", &error));
  assert_non_null (strstr (error->message, "noise"));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_noise_zero_is_old_data),
    cmocka_unit_test (test_noise_bad_values),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
