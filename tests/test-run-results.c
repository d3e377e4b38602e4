/* test-run-results.c — the results folder of a run (studio/run-results.c)
 * without the `caml` command: its names, a short XOR run taken from its
 * trainer and written (every file, summary.json's keys, nothing reported),
 * the report of a run that kept nothing, and the reading side that
 * `caml train --resume` uses (the saved summary, the experiment held to
 * the one trained). The command's own behaviour is tests/cli-*.sh's. */
#include <math.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "run-results.h"

static const char xor_json[] =
  "{ \"name\": \"xor-nn\", \"seed\": 0, \"data\": { \"builtin\": \"xor\" },"
  "  \"model\": [ { \"layer\": \"dense\", \"units\": 2, \"activation\": \"tanh\" },"
  "             { \"layer\": \"dense\", \"units\": 1, \"activation\": \"identity\" } ],"
  "  \"loss\": \"mse\", \"optimizer\": { \"type\": \"adam\", \"lr\": 0.1 },"
  "  \"training\": { \"steps\": 30, \"batch_size\": 0, \"eval_every\": 20 } }";

/* What the report callback heard. */
typedef struct {
  int problems, notes;
} Heard;

static void
on_say (CamlRunResultsSay kind, const char *message, gpointer user_data)
{
  Heard *heard = user_data;
  g_test_message ("%s: %s", kind == CAML_RUN_RESULTS_NOTE ? "note" : "problem", message);
  if (kind == CAML_RUN_RESULTS_NOTE)
    heard->notes++;
  else
    heard->problems++;
}

static JsonObject *
load_object (JsonParser *parser, const char *path)
{
  assert_true (json_parser_load_from_file (parser, path, NULL));
  JsonNode *root = json_parser_get_root (parser);
  assert_true (JSON_NODE_HOLDS_OBJECT (root));
  return json_node_get_object (root);
}

static void
test_names (void **state)
{
  (void) state;
  assert_true (caml_run_results_is_name ("summary.json"));
  assert_true (caml_run_results_is_name ("failed-loss.png"));
  assert_true (caml_run_results_is_name ("sigma-step12.png"));
  assert_false (caml_run_results_is_name ("notes.txt"));
  assert_false (caml_run_results_is_name ("sigma.png"));

  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (xor_json, -1, "xor.json", &error);
  assert_non_null (exp);
  CamlDataset *train = NULL, *test = NULL;
  assert_true (caml_experiment_load_datasets (exp, &train, &test, &error));
  CamlModel *model = caml_experiment_build_model_for (exp, train, &error);
  assert_non_null (model);
  long steps[] = { 10, 30 };
  g_autoptr (GPtrArray) names = caml_run_results_planned_names (model, train, steps, 2);
  /* a 2-D → 1-D model draws its surface; no σ-maps, no words */
  gboolean surface = FALSE;
  for (guint i = 0; i < names->len; i++)
    {
      assert_true (caml_run_results_is_name (names->pdata[i]));
      surface |= g_str_equal (names->pdata[i], "surface.png");
      assert_false (g_str_has_prefix (names->pdata[i], "sigma-step"));
      assert_false (g_str_has_prefix (names->pdata[i], "words"));
    }
  assert_true (surface);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_experiment_free (exp);
}

static void
on_progress (const CamlProgress *p, gpointer user_data)
{
  caml_run_recorder_progress (user_data, p);
}

static void
test_write_run (void **state)
{
  (void) state;
  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (xor_json, -1, "xor.json", &error);
  assert_non_null (exp);
  CamlDataset *train = NULL, *test = NULL;
  assert_true (caml_experiment_load_datasets (exp, &train, &test, &error));
  CamlModel *model = caml_experiment_build_model_for (exp, train, &error);
  assert_non_null (model);
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  CamlCheckpoint *checkpoint = caml_checkpoint_new (model, &error);
  assert_non_null (checkpoint);
  CamlRunRecorder *rec = caml_run_recorder_new (trainer, model, test, NULL, 0);
  caml_trainer_set_progress_func (trainer, on_progress, rec, 1);
  assert_true (caml_trainer_start (trainer, FALSE, &error));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);

  CamlRunOrigin origin = { .preset = "xor-nn", .ranks = 1 };
  CamlRunResults r = {
    .exp = exp, .origin = &origin, .model = model, .train = train, .test = test, .rec = rec,
  };
  caml_run_results_take (&r, trainer, checkpoint, &error);
  assert_null (error);
  caml_trainer_free (trainer);
  assert_int_equal (r.p.step, 30);
  assert_int_equal (r.n_steps, 30);
  assert_false (r.diverged);
  assert_non_null (r.state);

  g_autofree char *dir = g_dir_make_tmp ("caml-run-results.XXXXXX", &error);
  assert_non_null (dir);
  Heard heard = { 0 };
  assert_true (caml_run_results_write (&r, dir, on_say, &heard));
  assert_int_equal (heard.problems, 0);
  assert_int_equal (heard.notes, 0);
  /* a finished run was evaluated at its last step: no row added */
  assert_false (r.final_row);
  assert_int_equal (r.rows[r.n_rows - 1].step, 30);
  assert_true (isfinite (r.train_loss));
  assert_true (isnan (r.sigma_auc));
  /* no gated layer: the surface alone */
  assert_string_equal (r.drawn->str, ", surface.png");

  static const char *const files[] = {
    "metrics.csv", "summary.json", "model.weights", "trainer.state", "experiment.json",
    "loss.png", "surface.png", NULL
  };
  for (int i = 0; files[i] != NULL; i++)
    {
      g_autofree char *path = g_build_filename (dir, files[i], NULL);
      assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
    }
  g_autofree char *summary = g_build_filename (dir, "summary.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o = load_object (parser, summary);
  assert_string_equal (json_object_get_string_member (o, "preset"), "xor-nn");
  assert_int_equal (json_object_get_int_member (o, "steps"), 30);
  assert_string_equal (json_object_get_string_member (o, "state"), "finished");
  assert_string_equal (json_object_get_string_member (o, "evaluated_on"), "test");
  assert_true (json_object_has_member (o, "train_mse"));
  assert_true (json_object_has_member (o, "test_mse"));
  assert_false (json_object_has_member (o, "ranks"));
  assert_false (json_object_has_member (o, "sigma_auc"));
  assert_false (json_object_has_member (o, "error"));
  assert_true (JSON_NODE_HOLDS_NULL (json_object_get_member (o, "resumed_from")));

  /* the reading side: what --resume takes from the folder */
  g_autofree char *preset = NULL, *init_weights = NULL, *as_trained = NULL;
  caml_run_results_read_summary (dir, &preset, &init_weights, &as_trained);
  assert_string_equal (preset, "xor-nn");
  assert_null (init_weights);
  assert_non_null (as_trained);
  /* the live settings may change; the model may not */
  exp->optimizer.lr = 0.01;
  exp->steps = 60;
  assert_true (caml_run_results_check_resumed (exp, as_trained, "xor.json", &error));
  exp->loss = CAML_LOSS_SIGMOID_XENT;
  assert_false (caml_run_results_check_resumed (exp, as_trained, "xor.json", &error));
  assert_non_null (strstr (error->message, "xor.json has"));
  g_clear_error (&error);

  for (int i = 0; files[i] != NULL; i++)
    {
      g_autofree char *path = g_build_filename (dir, files[i], NULL);
      g_unlink (path);
    }
  assert_int_equal (g_rmdir (dir), 0);
  caml_run_results_clear (&r);
  caml_run_recorder_free (rec);
  caml_checkpoint_free (checkpoint);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_experiment_free (exp);
}

/* A run that failed back at step 0 keeps nothing but its report: no
 * figures of weights nobody asked for. */
static void
test_write_failure (void **state)
{
  (void) state;
  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (xor_json, -1, "xor.json", &error);
  assert_non_null (exp);
  CamlDataset *train = NULL, *test = NULL;
  assert_true (caml_experiment_load_datasets (exp, &train, &test, &error));
  CamlRunOrigin origin = { .ranks = 1 };
  float losses[3] = { 0.5f, 0.4f, INFINITY };
  CamlRunResults r = {
    .exp = exp, .origin = &origin, .train = train, .test = test,
    .p = { .state = CAML_TRAINER_FAILED, .step = 0 },
    .losses = g_memdup2 (losses, sizeof losses), .n_steps = 3, .n_plotted = 3,
    .diverged = TRUE, .divergence = { .step = 3, .rolled_back_to = 0 },
  };
  g_set_error (&r.run_error, CAML_ERROR, CAML_ERROR_DIVERGED, "diverged at step 3");
  g_autofree char *dir = g_dir_make_tmp ("caml-run-failed.XXXXXX", &error);
  assert_non_null (dir);
  Heard heard = { 0 };
  assert_true (caml_run_results_write_failure (&r, dir, on_say, &heard));
  assert_int_equal (heard.problems, 0);
  g_autofree char *summary = g_build_filename (dir, "failed-summary.json", NULL);
  g_autofree char *loss = g_build_filename (dir, "failed-loss.png", NULL);
  assert_true (g_file_test (loss, G_FILE_TEST_IS_REGULAR));
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o = load_object (parser, summary);
  assert_string_equal (json_object_get_string_member (o, "state"), "failed");
  assert_string_equal (json_object_get_string_member (o, "error"), "diverged at step 3");
  assert_int_equal (json_object_get_int_member (o, "diverged_at_step"), 3);
  assert_int_equal (json_object_get_int_member (o, "rolled_back_to"), 0);
  assert_true (JSON_NODE_HOLDS_NULL (json_object_get_member (o, "train_loss")));
  assert_true (JSON_NODE_HOLDS_NULL (json_object_get_member (o, "test_loss")));
  g_unlink (summary);
  g_unlink (loss);
  assert_int_equal (g_rmdir (dir), 0);
  caml_run_results_clear (&r);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_experiment_free (exp);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_names),
    cmocka_unit_test (test_write_run),
    cmocka_unit_test (test_write_failure),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
