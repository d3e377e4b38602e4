/* test-report-sigma.c — σ-map grids say whose maps they show: the layer's
 * index and type, and for a ca_res_conv block which sublayer's gate
 * (studio/report.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "caml.h"
#include "report.h"

/* A model of two CA conv layers, the second a block of 3 gated sublayers. */
static const char model_json[] =
  "{\"data\": {\"builtin\": \"xor\"},"
  " \"model\": [{\"layer\": \"ca_cnn\", \"kernel\": 3, \"depth\": 2},"
  "            {\"layer\": \"ca_res_conv\", \"kernel\": 3, \"depth\": 2, \"sublayers\": 3},"
  "            {\"layer\": \"flatten\"}, {\"layer\": \"dense\", \"units\": 1}]}";

static void
test_sigma_source (void **state)
{
  (void) state;
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (model_json, -1, "test", &error);
  assert_null (error);
  CamlShape in = caml_shape_image (1, 6, 6);
  CamlModel *model = caml_experiment_build_model (exp, &in, &error);
  assert_null (error);

  CamlSigmaSource source;
  caml_report_sigma_source (model, 0, &source);
  assert_int_equal (source.layer, 0);
  assert_string_equal (source.type, "ca_cnn");
  assert_int_equal (source.n_sublayers, 0);
  char *text = caml_report_sigma_source_text (&source);
  assert_string_equal (text, "layer 0 (ca_cnn)");
  g_free (text);

  caml_report_sigma_source (model, 1, &source);
  assert_string_equal (source.type, "ca_res_conv");
  assert_int_equal (source.sublayer, 3);
  assert_int_equal (source.n_sublayers, 3);
  CamlSigmaScale scale = { .lo = 0, .hi = 1 };
  char *title = caml_report_sigma_grid_title ("two", &source, &scale, 20);
  assert_string_equal (title, "two, step 20: σ-maps of layer 1 (ca_res_conv), "
                              "sublayer 3 of 3 (χ black 0 … white 1)");
  g_free (title);

  caml_model_free (model);
  caml_experiment_free (exp);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_sigma_source),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
