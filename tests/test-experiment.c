/* test-experiment.c — experiment files: presets, round trips, and malformed
 * documents that must give errors naming the offending key. */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <glib/gstdio.h>

#include "caml.h"

static const char *const preset_names[] = {
  "xor-ca-nn", "xor-nn", "xor-nn2", "surface-ca-nn-1", "surface-ca-nn-2",
  "surface-nn", "ca-res-surface", "resnet-surface",
};

static char *
preset_path (const char *name)
{
  const char *root = g_getenv ("CAML_SOURCE_ROOT");
  assert_non_null (root);
  char *file = g_strconcat (name, ".json", NULL);
  char *path = g_build_filename (root, "resources", "presets", file, NULL);
  g_free (file);
  return path;
}

static CamlExperiment *
load_preset (const char *name)
{
  char *path = preset_path (name);
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_file (path, &error);
  if (exp == NULL)
    fail_msg ("%s: %s", path, error->message);
  g_free (path);
  return exp;
}

/* ---------------------------------------------------------------- presets */

static void
test_presets_round_trip (void **state)
{
  for (gsize i = 0; i < G_N_ELEMENTS (preset_names); i++)
    {
      CamlExperiment *exp = load_preset (preset_names[i]);
      assert_string_equal (exp->name, preset_names[i]);
      assert_true (exp->description != NULL && exp->description[0] != '\0');
      assert_non_null (exp->paper);

      char *json = caml_experiment_to_json (exp);
      GError *error = NULL;
      CamlExperiment *again = caml_experiment_load_data (json, -1, "round trip", &error);
      if (again == NULL)
        fail_msg ("%s: %s\n%s", preset_names[i], error->message, json);
      assert_true (caml_experiment_equal (exp, again));

      /* Canonical: writing twice gives the same text. */
      char *json2 = caml_experiment_to_json (again);
      assert_string_equal (json, json2);

      CamlExperiment *copy = caml_experiment_copy (exp);
      assert_true (caml_experiment_equal (exp, copy));

      g_free (json2);
      g_free (json);
      caml_experiment_free (copy);
      caml_experiment_free (again);
      caml_experiment_free (exp);
    }
}

static void
test_presets_content (void **state)
{
  for (gsize i = 0; i < G_N_ELEMENTS (preset_names); i++)
    {
      CamlExperiment *exp = load_preset (preset_names[i]);
      gboolean xor = g_str_has_prefix (preset_names[i], "xor");
      assert_int_equal (exp->data.kind, xor ? CAML_DATA_XOR : CAML_DATA_SURFACE);
      assert_int_equal (exp->steps, 1000);
      assert_int_equal (exp->batch_size, 0);
      assert_int_equal (exp->eval_every, 50);
      assert_int_equal (exp->loss, CAML_LOSS_MSE);
      assert_int_equal (exp->optimizer.kind, CAML_OPTIM_ADAM);
      assert_true (exp->optimizer.lr == 0.1);
      assert_true (exp->plot_domain[0] == (xor ? -0.5 : -3.0));
      assert_true (exp->plot_domain[3] == (xor ? 1.5 : 3.0));
      if (!xor)
        {
          assert_int_equal (exp->data.grid, 81);
          assert_true (exp->data.train_fraction == 0.01);
        }

      /* Each preset builds and its output fits the targets. */
      CamlDataset *train, *test;
      GError *error = NULL;
      assert_true (caml_experiment_load_datasets (exp, &train, &test, &error));
      CamlModel *model = caml_experiment_build_model (exp, &train->x_shape, &error);
      if (model == NULL)
        fail_msg ("%s: %s", preset_names[i], error->message);
      assert_int_equal (caml_shape_size (caml_model_output_shape (model)), train->y_width);

      /* The same seed builds the same weights. */
      CamlModel *again = caml_experiment_build_model (exp, &train->x_shape, &error);
      assert_non_null (again);
      assert_int_equal (model->n_weights, again->n_weights);
      assert_memory_equal (model->w, again->w, model->n_weights * sizeof (float));

      caml_model_free (again);
      caml_model_free (model);
      caml_dataset_free (train);
      caml_dataset_free (test);
      caml_experiment_free (exp);
    }
}

/* Every registered layer type appears in some preset. */
static void
test_presets_cover_registry (void **state)
{
  int n_types;
  const CamlLayerOps *const *types = caml_layer_registry (&n_types);
  GHashTable *seen = g_hash_table_new (NULL, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (preset_names); i++)
    {
      CamlExperiment *exp = load_preset (preset_names[i]);
      for (int k = 0; k < exp->n_layers; k++)
        g_hash_table_add (seen, (gpointer) exp->layers[k].ops);
      caml_experiment_free (exp);
    }
  for (int t = 0; t < n_types; t++)
    {
      /* The activation layer is covered by the docs' examples; every layer
       * with parameters must be exercised by a preset. */
      if (g_str_equal (types[t]->name, "activation"))
        continue;
      if (!g_hash_table_contains (seen, types[t]))
        fail_msg ("layer type %s is in no preset", types[t]->name);
    }
  g_hash_table_destroy (seen);
}

/* --------------------------------------------------------------- defaults */

static void
test_defaults (void **state)
{
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data ("{}", -1, "empty.json", &error);
  assert_non_null (exp);
  CamlExperiment *def = caml_experiment_new_default ();
  assert_true (caml_experiment_equal (exp, def));
  assert_int_equal (def->data.kind, CAML_DATA_XOR);
  assert_int_equal (def->loss, CAML_LOSS_MSE);
  assert_int_equal (def->optimizer.kind, CAML_OPTIM_ADAM);
  assert_true (def->optimizer.lr == 0.01);
  assert_int_equal (def->steps, 1000);
  assert_int_equal (def->batch_size, 0);
  assert_int_equal (def->eval_every, 50);
  assert_true (def->plot_domain[0] == -0.5 && def->plot_domain[1] == 1.5);
  assert_true (def->n_layers >= 1);
  caml_experiment_free (exp);

  /* The plot domain follows the data kind when not given. */
  exp = caml_experiment_load_data ("{\"data\": {\"builtin\": \"surface\"}}", -1,
                                   "s.json", &error);
  assert_non_null (exp);
  assert_true (exp->plot_domain[0] == -3.0 && exp->plot_domain[3] == 3.0);
  assert_int_equal (exp->data.grid, 81);
  assert_false (exp->data.has_split_seed);
  caml_experiment_free (exp);

  /* Default experiment round-trips too. */
  char *json = caml_experiment_to_json (def);
  exp = caml_experiment_load_data (json, -1, "default", &error);
  assert_non_null (exp);
  assert_true (caml_experiment_equal (exp, def));
  caml_experiment_free (exp);
  g_free (json);
  caml_experiment_free (def);
}

/* Every field set away from its default survives to_json → load. */
static void
test_round_trip_all_fields (void **state)
{
  const char *doc =
    "{ \"name\": \"x \\\"quoted\\\" \\\\ \\u00e9\", \"description\": \"tab\\there\","
    "  \"paper\": null, \"seed\": 9007199254740993,"
    "  \"data\": { \"builtin\": \"surface\", \"grid\": 17, \"train_fraction\": 0.123456789,"
    "            \"split_seed\": 42 },"
    "  \"model\": [ { \"layer\": \"dense\", \"units\": 3, \"activation\": \"relu\", \"bias\": false },"
    "             { \"layer\": \"activation\", \"function\": \"sigmoid\" },"
    "             { \"layer\": \"ca_res\", \"units\": 3, \"sublayers\": 4, \"n_v\": 2,"
    "               \"n_sigma\": 3, \"always_on\": true, \"v_form\": \"sum\","
    "               \"activation\": \"identity\" },"
    "             { \"layer\": \"ca_nn\", \"units\": 1e0, \"activation\": \"sigmoid\" } ],"
    "  \"loss\": \"sigmoid_cross_entropy\","
    "  \"optimizer\": { \"type\": \"adagrad\", \"lr\": 0.3, \"eps\": 1e-10,"
    "                 \"initial_accumulator\": 0, \"em_steps\": 100 },"
    "  \"training\": { \"steps\": 7, \"batch_size\": 3, \"eval_every\": 2 },"
    "  \"plot\": { \"domain\": [-1.25, 2, 0.1, 0.7] } }";
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (doc, -1, "all.json", &error);
  if (exp == NULL)
    fail_msg ("%s", error->message);
  assert_int_equal (exp->seed, G_GUINT64_CONSTANT (9007199254740993));
  assert_true (exp->data.has_split_seed);
  assert_int_equal (exp->data.split_seed, 42);
  assert_int_equal (exp->n_layers, 4);
  assert_int_equal (exp->optimizer.kind, CAML_OPTIM_ADAGRAD);
  assert_int_equal (exp->optimizer.em_steps, 100);
  assert_null (exp->paper);
  assert_int_equal (exp->loss, CAML_LOSS_SIGMOID_XENT);

  char *json = caml_experiment_to_json (exp);
  CamlExperiment *again = caml_experiment_load_data (json, -1, "again", &error);
  if (again == NULL)
    fail_msg ("%s\n%s", error->message, json);
  assert_true (caml_experiment_equal (exp, again));
  assert_non_null (strstr (json, "0.123456789"));  /* shortest form */
  assert_non_null (strstr (json, "\"lr\": 0.3"));

  /* Save and load a file. */
  char *dir = g_dir_make_tmp ("caml-exp-XXXXXX", &error);
  assert_non_null (dir);
  char *path = g_build_filename (dir, "all.json", NULL);
  assert_true (caml_experiment_save_file (exp, path, &error));
  CamlExperiment *loaded = caml_experiment_load_file (path, &error);
  if (loaded == NULL)
    fail_msg ("%s", error->message);
  assert_true (caml_experiment_equal (exp, loaded));

  /* equal does see a difference. */
  loaded->layers[2].opt[1] += 1;
  assert_false (caml_experiment_equal (exp, loaded));

  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
  caml_experiment_free (loaded);
  caml_experiment_free (again);
  caml_experiment_free (exp);
  g_free (json);
}

static void
test_file_name_default (void **state)
{
  GError *error = NULL;
  char *dir = g_dir_make_tmp ("caml-exp-XXXXXX", &error);
  char *path = g_build_filename (dir, "my-run.json", NULL);
  assert_true (g_file_set_contents (path, "{\"seed\": 3}", -1, &error));
  CamlExperiment *exp = caml_experiment_load_file (path, &error);
  assert_non_null (exp);
  assert_string_equal (exp->name, "my-run");
  assert_int_equal (exp->seed, 3);
  caml_experiment_free (exp);

  /* A missing file is an IO error naming it. */
  g_unlink (path);
  assert_null (caml_experiment_load_file (path, &error));
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_IO));
  assert_non_null (strstr (error->message, "my-run.json"));
  g_clear_error (&error);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
}

/* -------------------------------------------------------------- malformed */

typedef struct {
  const char *doc;
  const char *needles[3];  /* each must appear in the message */
} Bad;

static const Bad bad_documents[] = {
  /* syntax: json-glib's line:column */
  { "{\n  \"seed\": 1,\n  \"loss\" \"mse\"\n}", { "bad.json: line 3:", "Parse error" } },
  { "", { "bad.json" } },
  { "{ \"seed\": 1 ", { "bad.json" } },
  /* top level */
  { "[1, 2]", { "bad.json", "top level", "an array" } },
  { "42", { "bad.json", "top level" } },
  { "{ \"stepz\": 10 }", { "bad.json: stepz: unknown key", "training" } },
  /* layers */
  { "{ \"model\": [ { \"layer\": \"conv9\" } ] }",
    { "model[0].layer", "conv9", "ca_nn" } },
  { "{ \"model\": [ { \"units\": 3 } ] }", { "model[0].layer", "missing" } },
  { "{ \"model\": [ { \"layer\": 3 } ] }", { "model[0].layer", "expected a string" } },
  { "{ \"model\": [ { \"layer\": \"ca_nn\", \"units\": 5 },"
    "               { \"layer\": \"dense\", \"unitz\": 1 } ] }",
    { "bad.json: model[1].unitz: unknown key", "units", "bias" } },
  { "{ \"model\": [ { \"layer\": \"dense\", \"units\": 0 } ] }",
    { "bad.json: model[0].units", "out of range" } },
  { "{ \"model\": [ { \"layer\": \"dense\", \"units\": 1000000000 } ] }",
    { "model[0].units", "out of range" } },
  { "{ \"model\": [ { \"layer\": \"dense\", \"units\": \"five\" } ] }",
    { "model[0].units: expected an integer, found a string" } },
  { "{ \"model\": [ { \"layer\": \"dense\", \"units\": 2.5 } ] }",
    { "model[0].units", "not an integer" } },
  { "{ \"model\": [ { \"layer\": \"dense\", \"bias\": 1 } ] }",
    { "model[0].bias", "true or false" } },
  { "{ \"model\": [ { \"layer\": \"dense\", \"activation\": \"swish\" } ] }",
    { "model[0].activation", "swish", "tanh" } },
  { "{ \"model\": [ { \"layer\": \"ca_res\", \"v_form\": \"product\" } ] }",
    { "model[0].v_form", "dense, sum" } },
  { "{ \"model\": [] }", { "model", "no layers" } },
  { "{ \"model\": { \"layer\": \"dense\" } }", { "model", "expected an array" } },
  { "{ \"model\": [ 3 ] }", { "model[0]", "expected an object" } },
  /* optimizer */
  { "{ \"optimizer\": { \"lr\": -0.1 } }", { "optimizer.lr", "-0.1", "> 0" } },
  { "{ \"optimizer\": { \"lr\": 0 } }", { "optimizer.lr" } },
  { "{ \"optimizer\": { \"lr\": \"fast\" } }", { "optimizer.lr", "expected a number" } },
  { "{ \"optimizer\": { \"type\": \"lbfgs\" } }", { "optimizer.type", "lbfgs", "adam" } },
  { "{ \"optimizer\": { \"type\": \"sgd\", \"beta1\": 0.9 } }",
    { "optimizer.beta1: unknown key", "momentum" } },
  { "{ \"optimizer\": { \"beta1\": 1 } }", { "optimizer.beta1", "[0, 1)" } },
  { "{ \"optimizer\": { \"eps\": 0 } }", { "optimizer.eps" } },
  { "{ \"optimizer\": { \"type\": \"sgd\", \"momentum\": 1.5 } }", { "optimizer.momentum" } },
  { "{ \"optimizer\": { \"em_steps\": -1 } }", { "optimizer.em_steps", "out of range" } },
  { "{ \"optimizer\": { \"em_steps\": 1.5 } }", { "optimizer.em_steps", "not an integer" } },
  /* training */
  { "{ \"training\": { \"steps\": 0 } }", { "training.steps", "out of range" } },
  { "{ \"training\": { \"steps\": 10000000000 } }", { "training.steps", "out of range" } },
  { "{ \"training\": { \"batch_size\": -1 } }", { "training.batch_size" } },
  { "{ \"training\": { \"eval_every\": 0 } }", { "training.eval_every" } },
  { "{ \"training\": { \"steps\": true } }", { "training.steps", "found a boolean" } },
  { "{ \"training\": { \"epochs\": 3 } }", { "training.epochs: unknown key", "steps" } },
  { "{ \"training\": [] }", { "training", "expected an object" } },
  /* data */
  { "{ \"data\": { \"builtin\": \"mnist\" } }", { "data.builtin", "mnist", "xor, surface" } },
  { "{ \"data\": { \"grid\": 81 } }", { "data.builtin", "missing" } },
  { "{ \"data\": { \"builtin\": \"xor\", \"grid\": 81 } }", { "data.grid: unknown key" } },
  { "{ \"data\": { \"builtin\": \"surface\", \"grid\": 1 } }", { "data.grid", "out of range" } },
  { "{ \"data\": { \"builtin\": \"surface\", \"grid\": 2000 } }", { "data.grid" } },
  { "{ \"data\": { \"builtin\": \"surface\", \"train_fraction\": 1 } }",
    { "data.train_fraction", "(0, 1)" } },
  { "{ \"data\": { \"builtin\": \"surface\", \"train_fraction\": 0 } }",
    { "data.train_fraction" } },
  { "{ \"data\": { \"builtin\": \"surface\", \"split_seed\": -4 } }", { "data.split_seed" } },
  /* the rest */
  { "{ \"seed\": -1 }", { "seed", "out of range" } },
  { "{ \"seed\": \"0\" }", { "seed", "expected an integer" } },
  { "{ \"loss\": \"l1\" }", { "loss", "l1", "mse" } },
  { "{ \"name\": 7 }", { "name", "expected a string" } },
  { "{ \"plot\": { \"domain\": [0, 1, 2] } }", { "plot.domain" } },
  { "{ \"plot\": { \"domain\": [1, 0, 0, 1] } }", { "plot.domain", "x0 < x1" } },
  { "{ \"plot\": { \"domain\": [0, 1, 0, \"a\"] } }", { "plot.domain[3]" } },
  { "{ \"plot\": { \"range\": 1 } }", { "plot.range: unknown key" } },
};

static void
test_malformed (void **state)
{
  for (gsize i = 0; i < G_N_ELEMENTS (bad_documents); i++)
    {
      const Bad *bad = &bad_documents[i];
      GError *error = NULL;
      CamlExperiment *exp = caml_experiment_load_data (bad->doc, -1, "bad.json", &error);
      if (exp != NULL)
        fail_msg ("accepted: %s", bad->doc);
      assert_non_null (error);
      assert_true (error->domain == CAML_ERROR);
      for (int k = 0; k < 3 && bad->needles[k] != NULL; k++)
        if (strstr (error->message, bad->needles[k]) == NULL)
          fail_msg ("document %s\nmessage \"%s\" lacks \"%s\"", bad->doc,
                    error->message, bad->needles[k]);
      g_error_free (error);
    }
}

/* Every prefix of a valid document is rejected without a crash (or, where it
 * happens to be valid JSON, accepted). */
static void
test_truncated_documents (void **state)
{
  char *path = preset_path ("ca-res-surface");
  char *contents;
  gsize length;
  assert_true (g_file_get_contents (path, &contents, &length, NULL));
  for (gsize n = 0; n < length; n++)
    {
      GError *error = NULL;
      CamlExperiment *exp = caml_experiment_load_data (contents, n, "cut.json", &error);
      if (exp == NULL)
        {
          assert_non_null (error);
          assert_non_null (strstr (error->message, "cut.json"));
          g_error_free (error);
        }
      caml_experiment_free (exp);
    }
  g_free (contents);
  g_free (path);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_presets_round_trip),
    cmocka_unit_test (test_presets_content),
    cmocka_unit_test (test_presets_cover_registry),
    cmocka_unit_test (test_defaults),
    cmocka_unit_test (test_round_trip_all_fields),
    cmocka_unit_test (test_file_name_default),
    cmocka_unit_test (test_malformed),
    cmocka_unit_test (test_truncated_documents),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
