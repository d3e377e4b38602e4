/* test-sweep.c — a sweep's core (studio/sweep*.c) without training: the
 * plan (keys of each kind, its checks and their words, the order of its
 * runs, their labels, folders and experiments, baselines and plain
 * models), the sweep file (a round trip, errors at their line and column),
 * the keys a picker offers, and the tables written and read back. The
 * command, training included, is tests/cli-sweep.sh's. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <glib/gstdio.h>

#include "assign.h"
#include "presets.h"
#include "results-dir.h"
#include "sweep.h"

static CamlSweepPlan *
preset_plan (const char *preset)
{
  GError *error = NULL;
  CamlExperiment *exp = caml_presets_load (preset, &error);
  if (exp == NULL)
    fail_msg ("%s", error->message);
  g_autofree char *source = g_strdup_printf ("preset %s", preset);
  return caml_sweep_plan_new (exp, preset, source);
}

/* A plan of preset with the grids ("KEY=V1,V2") and -O list given. */
static CamlSweepPlan *
plan_of (const char *preset, const char *const *grids, const char *const *fixed)
{
  CamlSweepPlan *plan = preset_plan (preset);
  GError *error = NULL;
  for (int i = 0; grids[i] != NULL; i++)
    if (!caml_sweep_plan_parse_axis (plan, grids[i], &error))
      fail_msg ("%s", error->message);
  plan->fixed = fixed != NULL ? g_strdupv ((char **) fixed) : NULL;
  return plan;
}

static void
check_says (const char *preset, const char *const *grids, const char *const *fixed,
            const char *message)
{
  g_autoptr (CamlSweepPlan) plan = plan_of (preset, grids, fixed);
  GError *error = NULL;
  gboolean ok = caml_sweep_plan_check (plan, &error);
  if (message == NULL)
    {
      if (!ok)
        fail_msg ("%s: %s", grids[0], error->message);
      return;
    }
  if (ok)
    fail_msg ("%s: passed the check, expected \"%s\"", grids[0], message);
  assert_string_equal (error->message, message);
  g_error_free (error);
}

/* Keys of each kind, and what the check says of each problem: the key and
 * the value named, as on the command line. */
static void
test_plan_check (void **state)
{
  (void) state;
  const char *const none[] = { NULL };
  /* a layer option on every layer, on one, a setting */
  check_says ("surface-ca-nn-2", (const char *[]) { "activation=tanh,relu", NULL }, NULL,
              NULL);
  check_says ("surface-ca-nn-2", (const char *[]) { "1.units=2,3", "0.units=4", NULL }, NULL,
                NULL);
  check_says ("xor-ca-nn", (const char *[]) { "optimizer.lr=0.001,0.01", "seed=1,2", NULL },
                NULL, NULL);
  check_says ("xor-ca-nn", (const char *[]) { "optimizer.em_steps=0,5",
                                                "optimizer.weight_decay=0,0.001", NULL },
                NULL, NULL);
  check_says ("xor-ca-nn", (const char *[]) { "training.steps=10,20",
                                                "training.batch_size=0,2", NULL },
                NULL, NULL);
  /* none; an unknown key; a bad value; a setting out of range or no number */
  check_says ("xor-ca-nn", none, NULL, "give one or two --grid KEY=V1,V2,…");
  check_says ("xor-ca-nn", (const char *[]) { "kernl=3,5", NULL }, NULL,
                "--grid kernl=3,5: no layer of this experiment has an option \"kernl\"");
  check_says ("xor-ca-nn", (const char *[]) { "3.units=1", NULL }, NULL,
                "--grid 3.units=1: 3.units: \"3\" is not a layer index 0…0");
  check_says ("xor-ca-nn", (const char *[]) { "optimizer.lrr=1", NULL }, NULL,
                "--grid optimizer.lrr=1: optimizer.lrr: not a setting (one of optimizer.lr, "
                "optimizer.em_steps, optimizer.weight_decay, training.steps, "
                "training.batch_size, seed)");
  check_says ("xor-ca-nn", (const char *[]) { "units=2,0", NULL }, NULL,
                "--grid units=2,0: layer 0 (ca_nn): units: 0 is out of range 1…65536");
  check_says ("xor-ca-nn", (const char *[]) { "activation=tanh,cosh", NULL }, NULL,
                "--grid activation=tanh,cosh: layer 0 (ca_nn): activation: \"cosh\" is not "
                "one of identity, tanh, relu, sigmoid");
  check_says ("xor-ca-nn", (const char *[]) { "optimizer.lr=0.1,0", NULL }, NULL,
                "--grid optimizer.lr=0.1,0: optimizer.lr: 0 is out of range (must be > 0)");
  check_says ("xor-ca-nn", (const char *[]) { "optimizer.em_steps=fast", NULL }, NULL,
                "--grid optimizer.em_steps=fast: optimizer.em_steps: \"fast\" is not a number");
  check_says ("xor-ca-nn", (const char *[]) { "training.steps=10,2.5", NULL }, NULL,
                "--grid training.steps=10,2.5: training.steps: 2.5 is not an integer");
  check_says ("xor-ca-nn", (const char *[]) { "seed=-1", NULL }, NULL,
                "--grid seed=-1: seed: -1 is out of range 0…9223372036854775807");
  /* a value twice, or written two ways; two axes on one option */
  check_says ("xor-ca-nn", (const char *[]) { "units=2,3,2", NULL }, NULL,
                "--grid units=2,3,2: the value 2 is given twice");
  check_says ("xor-ca-nn", (const char *[]) { "optimizer.lr=0.1,1e-1", NULL }, NULL,
                "--grid optimizer.lr=0.1,1e-1: the values 0.1 and 1e-1 are the same setting");
  check_says ("surface-ca-nn-2", (const char *[]) { "units=1,2", "1.units=3", NULL }, NULL,
                "--grid units=1,2 and --grid 1.units=3 both set units of layer 1: give each "
                "option once, with all its values in one --grid KEY=V1,V2,…");
  check_says ("xor-ca-nn", (const char *[]) { "seed=1,2", "seed=3", NULL }, NULL,
                "--grid seed=1,2 and --grid seed=3 both set seed: give each option once, with "
                "all its values in one --grid KEY=V1,V2,…");
  /* the fixed list: its own errors, and one that a value contradicts */
  check_says ("xor-ca-nn", (const char *[]) { "units=1,2", NULL },
                (const char *[]) { "optimizer.lr=-1", NULL },
                "optimizer.lr: -1 is out of range (must be > 0)");
  check_says ("xor-nn", (const char *[]) { "0.units=2,3", NULL },
                (const char *[]) { "0.units=4", NULL },
                "-O 0.units=4 and --grid 0.units=2,3 both set units of layer 0 (dense), to "
                "different values: give it once");
  check_says ("xor-ca-nn", (const char *[]) { "optimizer.lr=0.1,0.2", NULL },
                (const char *[]) { "optimizer.lr=0.3", NULL },
                "-O optimizer.lr=0.3 and --grid optimizer.lr=0.1,0.2 both set optimizer.lr, to "
                "different values: give it once");
  /* a third axis */
  g_autoptr (CamlSweepPlan) plan = plan_of ("xor-ca-nn", (const char *[]) { "units=1", "seed=1",
                                                                          NULL }, NULL);
  GError *error = NULL;
  assert_false (caml_sweep_plan_parse_axis (plan, "activation=tanh", &error));
  assert_string_equal (error->message, "activation: a sweep has at most 2 keys");
  g_clear_error (&error);
  assert_false (caml_sweep_plan_parse_axis (plan, "units", &error));
  assert_string_equal (error->message, "--grid units: expected KEY=V1,V2,…");
  g_clear_error (&error);
}

/* The runs of a plan: the first axis fastest, each point's model and then
 * its baseline; their labels, folders and experiments. */
static void
test_plan_runs (void **state)
{
  (void) state;
  g_autoptr (CamlSweepPlan) plan = plan_of ("surface-ca-nn-2",
                                            (const char *[]) { "1.units=2,3,4",
                                                               "optimizer.lr=0.1,0.01", NULL },
                                            (const char *[]) { "training.steps=5", NULL });
  GError *error = NULL;
  if (!caml_sweep_plan_check (plan, &error))
    fail_msg ("%s", error->message);
  assert_true (caml_sweep_plan_has_context_aware (plan));
  assert_int_equal (caml_sweep_plan_n_points (plan), 6);
  assert_int_equal (caml_sweep_plan_n_runs (plan), 12);
  static const struct { int i0, i1; gboolean baseline; const char *dir, *name; } runs[] = {
    { 0, 0, FALSE, "out/1.units=2-optimizer.lr=0.1/ca",
      "surface-ca-nn-2 1.units=2 optimizer.lr=0.1" },
    { 0, 0, TRUE, "out/1.units=2-optimizer.lr=0.1/baseline",
      "surface-ca-nn-2 1.units=2 optimizer.lr=0.1, baseline" },
    { 1, 0, FALSE, "out/1.units=3-optimizer.lr=0.1/ca", NULL },
    { 1, 0, TRUE, "out/1.units=3-optimizer.lr=0.1/baseline", NULL },
    { 2, 0, FALSE, "out/1.units=4-optimizer.lr=0.1/ca", NULL },
    { 2, 0, TRUE, "out/1.units=4-optimizer.lr=0.1/baseline", NULL },
    { 0, 1, FALSE, "out/1.units=2-optimizer.lr=0.01/ca", NULL },
    { 0, 1, TRUE, "out/1.units=2-optimizer.lr=0.01/baseline", NULL },
    { 1, 1, FALSE, "out/1.units=3-optimizer.lr=0.01/ca", NULL },
    { 1, 1, TRUE, "out/1.units=3-optimizer.lr=0.01/baseline", NULL },
    { 2, 1, FALSE, "out/1.units=4-optimizer.lr=0.01/ca",
      "surface-ca-nn-2 1.units=4 optimizer.lr=0.01" },
    { 2, 1, TRUE, "out/1.units=4-optimizer.lr=0.01/baseline", NULL },
  };
  for (int run = 0; run < 12; run++)
    {
      int index[2];
      gboolean baseline;
      caml_sweep_plan_run_of (plan, run, index, &baseline);
      assert_int_equal (index[0], runs[run].i0);
      assert_int_equal (index[1], runs[run].i1);
      assert_int_equal (baseline, runs[run].baseline);
      g_autofree char *dir = caml_sweep_plan_run_dir (plan, "out", run);
      assert_string_equal (dir, runs[run].dir);
      CamlExperiment *exp = caml_sweep_plan_experiment (plan, run, &error);
      if (exp == NULL)
        fail_msg ("%s", error->message);
      if (runs[run].name != NULL)
        assert_string_equal (exp->name, runs[run].name);
      /* the point and the fixed list applied; the baseline's layers plain */
      assert_int_equal ((int) exp->layers[1].opt[caml_layer_ops_option_index (exp->layers[1].ops,
                                                                              "units")],
                        runs[run].i0 + 2);
      assert_true (exp->optimizer.lr == (runs[run].i1 == 0 ? 0.1 : 0.01));
      assert_int_equal (exp->steps, 5);
      assert_string_equal (exp->layers[0].ops->name, baseline ? "dense" : "ca_nn");
      caml_experiment_free (exp);
    }
  /* the given experiment itself is left as it was */
  assert_int_equal (plan->exp->steps, 1000);
  int index[2] = { 1, 0 };
  g_autofree char *label = caml_sweep_plan_label (plan, index);
  assert_string_equal (label, "1.units=3-optimizer.lr=0.1");

  /* without baselines: one run a point */
  plan->baselines = FALSE;
  assert_int_equal (caml_sweep_plan_n_runs (plan), 6);
  gboolean baseline;
  caml_sweep_plan_run_of (plan, 4, index, &baseline);
  assert_int_equal (index[0], 1);
  assert_int_equal (index[1], 1);
  assert_false (baseline);
}

/* A model without a context-aware layer has no baseline to train: one run
 * a point, named as the point, whatever baselines says. */
static void
test_plan_plain (void **state)
{
  (void) state;
  g_autoptr (CamlSweepPlan) plan = plan_of ("xor-nn", (const char *[]) { "0.units=2,3", NULL },
                                            NULL);
  assert_true (plan->baselines);
  assert_false (caml_sweep_plan_has_context_aware (plan));
  assert_int_equal (caml_sweep_plan_n_runs (plan), 2);
  GError *error = NULL;
  CamlExperiment *exp = caml_sweep_plan_experiment (plan, 1, &error);
  assert_non_null (exp);
  assert_string_equal (exp->name, "xor-nn 0.units=3");
  caml_experiment_free (exp);
  g_autofree char *dir = caml_sweep_plan_run_dir (plan, "out", 1);
  assert_string_equal (dir, "out/0.units=3/ca");
  CamlSweepResult r;
  caml_sweep_plan_result_init (plan, 1, &r);
  assert_true (r.plain);
  assert_false (r.baseline);
  assert_string_equal (caml_sweep_result_model (&r), "plain");
  assert_true (isnan (r.metric) && isnan (r.steps_per_second));
  caml_sweep_result_clear (&r);
  /* the hint for a key that reaches several layers */
  g_autoptr (CamlSweepPlan) every = plan_of ("xor-nn", (const char *[]) { "units=2,3", NULL },
                                             NULL);
  g_autofree char *hint = caml_sweep_plan_hint (every, 0);
  assert_string_equal (hint, "--grid units sets units on layers 0 (dense) and 1 (dense) alike; "
                       "to vary one layer's, give its index: --grid 0.units=2,3");
  assert_null (caml_sweep_plan_hint (plan, 0));
}

/* A temporary folder for files; removed with caml_remove_flat_dir. */
static char *
temp_dir (void)
{
  GError *error = NULL;
  char *dir = g_dir_make_tmp ("caml-test-sweep-XXXXXX", &error);
  if (dir == NULL)
    fail_msg ("%s", error->message);
  return dir;
}

static void
write_file (const char *path, const char *text)
{
  GError *error = NULL;
  if (!g_file_set_contents (path, text, -1, &error))
    fail_msg ("%s", error->message);
}

static void
assert_plans_equal (const CamlSweepPlan *a, const CamlSweepPlan *b)
{
  assert_true (caml_experiment_equal (a->exp, b->exp));
  assert_string_equal (a->exp->name, b->exp->name);
  assert_string_equal (a->preset, b->preset);
  assert_int_equal (a->n_axes, b->n_axes);
  for (int i = 0; i < a->n_axes; i++)
    {
      assert_string_equal (a->axes[i].key, b->axes[i].key);
      assert_int_equal (a->axes[i].n_values, b->axes[i].n_values);
      for (int v = 0; v < a->axes[i].n_values; v++)
        assert_string_equal (a->axes[i].values[v], b->axes[i].values[v]);
    }
  assert_int_equal (a->fixed ? g_strv_length (a->fixed) : 0,
                    b->fixed ? g_strv_length (b->fixed) : 0);
  for (int i = 0; a->fixed != NULL && a->fixed[i] != NULL; i++)
    assert_string_equal (a->fixed[i], b->fixed[i]);
  assert_int_equal (a->baselines, b->baselines);
}

/* to_json, then load: the same plan — values that are numbers written as
 * numbers, others (1e-1, 02, words) as strings that read back as given. */
static void
test_file_round_trip (void **state)
{
  (void) state;
  g_autofree char *dir = temp_dir ();
  g_autofree char *path = g_build_filename (dir, "plan.json", NULL);
  GError *error = NULL;
  g_autoptr (CamlSweepPlan) plan = plan_of ("surface-ca-nn-2",
                                            (const char *[]) { "optimizer.lr=0.01,2e-1,0.5",
                                                               "activation=tanh,relu", NULL },
                                            (const char *[]) { "1.units=03", "training.steps=7",
                                                               "bias=true", NULL });
  plan->baselines = FALSE;
  if (!caml_sweep_plan_check (plan, &error) || !caml_sweep_plan_save (plan, path, &error))
    fail_msg ("%s", error->message);
  g_autofree char *json = caml_sweep_plan_to_json (plan);
  assert_non_null (strstr (json, "{ \"key\": \"optimizer.lr\", \"values\": [0.01, \"2e-1\", "
                                 "0.5] }"));
  assert_non_null (strstr (json, "\"set\": { \"1.units\": \"03\", \"training.steps\": 7, "
                                 "\"bias\": true }"));
  assert_true (caml_sweep_file_is (path));
  g_autoptr (CamlSweepPlan) back = caml_sweep_plan_load (path, &error);
  if (back == NULL)
    fail_msg ("%s", error->message);
  assert_plans_equal (plan, back);
  assert_string_equal (back->source, path);   /* the experiment is inline */
  g_autofree char *again = caml_sweep_plan_to_json (back);
  assert_string_equal (json, again);

  /* numbers in a file become the command line's text */
  g_autofree char *numbers = g_build_filename (dir, "numbers.json", NULL);
  write_file (numbers, "{ \"preset\": \"xor-ca-nn\",\n"
                       "  \"grid\": [ { \"key\": \"optimizer.lr\", \"values\": [1e-2, 0.10, 1] },\n"
                       "            { \"key\": \"activation\", \"values\": [\"tanh\"] } ] }");
  g_autoptr (CamlSweepPlan) read = caml_sweep_plan_load (numbers, &error);
  if (read == NULL)
    fail_msg ("%s", error->message);
  assert_string_equal (read->axes[0].values[0], "0.01");
  assert_string_equal (read->axes[0].values[1], "0.1");
  assert_string_equal (read->axes[0].values[2], "1");
  assert_string_equal (read->source, "preset xor-ca-nn");
  assert_true (read->baselines);
  /* an experiment file beside it */
  g_autofree char *exp_path = g_build_filename (dir, "exp.json", NULL);
  g_autofree char *named = g_build_filename (dir, "named.json", NULL);
  assert_true (caml_experiment_save_file (read->exp, exp_path, &error));
  write_file (named, "{ \"experiment\": \"exp.json\", \"grid\": [ { \"key\": \"units\", "
                     "\"values\": [1] } ] }");
  g_autoptr (CamlSweepPlan) beside = caml_sweep_plan_load (named, &error);
  if (beside == NULL)
    fail_msg ("%s", error->message);
  assert_true (caml_experiment_equal (beside->exp, read->exp));
  assert_string_equal (beside->source, exp_path);
  assert_null (beside->preset);
  /* an experiment file is no sweep file */
  assert_false (caml_sweep_file_is (exp_path));
  assert_false (caml_sweep_file_is (dir));
  assert_true (caml_remove_flat_dir (dir));
}

/* Errors in a sweep file: FILE:LINE:COL: PATH: problem, at the key, the
 * value, the member, inside the inline experiment. */
static void
test_file_errors (void **state)
{
  (void) state;
  static const struct { const char *text, *message; } cases[] = {
    { "{ \"preset\": \"xor-ca-nn\",\n"
      "  \"grid\": [ { \"key\": \"kernl\", \"values\": [3, 5] } ] }",
      "F:2:22: grid[0].key: no layer of this experiment has an option \"kernl\"" },
    { "{ \"preset\": \"xor-ca-nn\",\n"
      "  \"grid\": [ { \"key\": \"units\",\n"
      "              \"values\": [1, 0] } ] }",
      "F:3:29: grid[0].values[1]: layer 0 (ca_nn): units: 0 is out of range 1…65536" },
    { "{ \"preset\": \"xor-ca-nn\",\n"
      "  \"grid\": [ { \"key\": \"units\", \"values\": [1], \"value\": 2 } ] }",
      "F:2:46: grid[0].value: unknown key (expected one of key, values)" },
    { "{ \"preset\": \"xor-ca-nn\", \"baseline\": false,\n"
      "  \"grid\": [ { \"key\": \"units\", \"values\": [1] } ] }",
      "F:1:26: baseline: unknown key (expected one of experiment, preset, grid, set, "
      "baselines)" },
    { "{ \"experiment\": { \"model\": [ { \"layer\": \"ca_nn\",\n"
      "                                 \"unit\": 3 } ] },\n"
      "  \"grid\": [ { \"key\": \"units\", \"values\": [1] } ] }",
      "F:2:34: experiment.model[0].unit: unknown key (expected one of units, activation)" },
    { "{ \"experiment\": { \"optimizer\": { \"lr\": -1 } },\n"
      "  \"grid\": [ { \"key\": \"units\", \"values\": [1] } ] }",
      "F:1:40: experiment.optimizer.lr: -1 is out of range (must be > 0)" },
    { "{ \"preset\": \"xor-ca-nn\",\n"
      "  \"grid\": [ { \"key\": \"units\", \"values\": [1, [2]] } ] }",
      "F:2:45: grid[0].values[1]: expected a number, a string or true/false, found an array" },
    { "{ \"preset\": \"xor-ca-nn\",\n"
      "  \"set\": { \"optimizer.lr\": 0 },\n"
      "  \"grid\": [ { \"key\": \"units\", \"values\": [1, 2] } ] }",
      "F:2:28: set.optimizer.lr: optimizer.lr: 0 is out of range (must be > 0)" },
    { "{ \"preset\": \"xor-ca-nn\",\n"
      "  \"grid\": [ { \"key\": \"units\", \"values\": [1, \"01\"] } ] }",
      "F:2:45: grid[0].values[1]: the values 1 and 01 are the same setting" },
    { "{ \"preset\": \"xor-ca-nn\",\n"
      "  \"grid\": [ { \"key\": \"seed\", \"values\": [1] },\n"
      "            { \"key\": \"seed\", \"values\": [2] } ] }",
      "F:3:22: grid[1].key: grid[0] and grid[1] both set seed: give each option once, with "
      "all its values in one axis" },
    { "{ \"preset\": \"xor-ca-nn\", \"grid\": [] }",
      "F:1:34: grid: expected one or two axes, found 0" },
    { "{ \"preset\": \"xor-ca-nn\" }", "F:1:1: grid: missing (the axes of the sweep)" },
    { "{ \"grid\": [ { \"key\": \"units\",\n \"values\": [1,] } ] }",
      "F:2:15: grid[0].values[1]: expected a value, found ']'" },
  };
  g_autofree char *dir = temp_dir ();
  g_autofree char *path = g_build_filename (dir, "F", NULL);
  g_autofree char *cwd = g_get_current_dir ();
  assert_int_equal (g_chdir (dir), 0);   /* errors name the file as given: "F" */
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      write_file ("F", cases[i].text);
      GError *error = NULL;
      CamlSweepPlan *plan = caml_sweep_plan_load ("F", &error);
      if (plan != NULL)
        fail_msg ("case %zu loaded; expected \"%s\"", i, cases[i].message);
      assert_string_equal (error->message, cases[i].message);
      g_error_free (error);
    }
  assert_int_equal (g_chdir (cwd), 0);
  assert_true (caml_remove_flat_dir (dir));
}

/* The keys a picker offers for a preset: each layer's options, the shared
 * ones, the settings; in words, with their values. */
static void
test_keys (void **state)
{
  (void) state;
  g_autoptr (CamlSweepPlan) plan = preset_plan ("surface-ca-nn-2");
  g_auto (GStrv) titles = NULL, current = NULL;
  g_auto (GStrv) keys = caml_sweep_keys (plan->exp, &titles, &current);
  static const struct { const char *key, *title, *value; } want[] = {
    { "0.units", "layer 0 (CA-NN): units", "5" },
    { "0.activation", "layer 0 (CA-NN): activation", "tanh" },
    { "1.units", "layer 1 (CA-NN): units", "5" },
    { "2.units", "layer 2 (Dense): units", "1" },
    { "2.activation", "layer 2 (Dense): activation", "identity" },
    { "units", "units of every layer that has it (0, 1, 2)", "" },
    { "activation", "activation of every layer that has it (0, 1, 2)", "" },
    { "optimizer.lr", "learning rate (optimizer.lr)", "0.1" },
    { "optimizer.em_steps", NULL, "0" },
    { "training.steps", "training steps (training.steps)", "1000" },
    { "seed", "seed (seed)", "0" },
  };
  guint n = g_strv_length (keys);
  assert_int_equal (g_strv_length (titles), n);
  assert_int_equal (g_strv_length (current), n);
  for (size_t w = 0; w < G_N_ELEMENTS (want); w++)
    {
      guint i = 0;
      while (i < n && !g_str_equal (keys[i], want[w].key))
        i++;
      if (i == n)
        fail_msg ("no key %s", want[w].key);
      if (want[w].title != NULL)
        assert_string_equal (titles[i], want[w].title);
      assert_string_equal (current[i], want[w].value);
    }
  /* layers first, then the shared keys, then the settings; every key one
   * a sweep takes */
  assert_string_equal (keys[0], "0.units");
  assert_string_equal (keys[n - 1], "seed");
  for (guint i = 0; i < n; i++)
    {
      GError *error = NULL;
      if (!caml_experiment_check_key (plan->exp, keys[i], &error))
        fail_msg ("%s: %s", keys[i], error->message);
    }
  g_auto (GStrv) bare = caml_sweep_keys (plan->exp, NULL, NULL);
  assert_int_equal (g_strv_length (bare), n);
}

/* A run's summary read back; the tables of results written into a folder,
 * and read: sweep.csv's columns and rows, sweep.md, sweep.png, and
 * sweep.json the plan again. */
static void
test_tables (void **state)
{
  (void) state;
  g_autofree char *dir = temp_dir ();
  GError *error = NULL;
  g_autoptr (CamlSweepPlan) plan = plan_of ("xor-ca-nn", (const char *[]) { "units=1,2", NULL },
                                            NULL);
  assert_true (caml_sweep_plan_check (plan, &error));
  int n = caml_sweep_plan_n_runs (plan);
  assert_int_equal (n, 4);
  CamlSweepResult results[4];
  for (int i = 0; i < n; i++)
    caml_sweep_plan_result_init (plan, i, &results[i]);
  /* run 0 from a summary; run 1 failed with an error; run 2 not done */
  g_autofree char *summary = g_build_filename (dir, "summary.json", NULL);
  write_file (summary, "{ \"test_mse\": 0.000125, \"test_loss\": 0.25, \"seconds\": 1.5,\n"
                       "  \"steps_per_second\": 2000, \"sigma_auc\": null }");
  assert_true (caml_sweep_result_read (&results[0], dir));
  assert_true (results[0].summary && !results[0].classification);
  assert_true (results[0].metric == 0.000125 && results[0].steps_per_second == 2000);
  assert_true (isnan (results[0].sigma_auc));
  assert_int_equal (g_unlink (summary), 0);
  results[0].done = TRUE;
  assert_false (caml_sweep_result_read (&results[1], dir));
  assert_false (results[1].summary);
  results[1].done = TRUE;
  results[1].status = 1;
  results[1].error = g_strdup ("bad, \"very\" | bad");
  results[3].done = TRUE;
  results[3].status = 130;
  assert_string_equal (caml_sweep_status_name (0), "ok");
  assert_string_equal (caml_sweep_status_name (130), "interrupted");
  assert_string_equal (caml_sweep_status_name (143), "interrupted");
  assert_string_equal (caml_sweep_status_name (1), "failed");
  g_autofree char *figure = caml_sweep_format_figure (0.000125);
  assert_string_equal (figure, "0.000125");

  if (!caml_sweep_write_tables (plan, results, n, dir, &error))
    fail_msg ("%s", error->message);
  g_autofree char *csv = NULL, *md = NULL;
  g_autofree char *csv_path = g_build_filename (dir, "sweep.csv", NULL);
  g_autofree char *md_path = g_build_filename (dir, "sweep.md", NULL);
  assert_true (g_file_get_contents (csv_path, &csv, NULL, NULL));
  assert_string_equal (csv,
    "units,model,test_mse,test_loss,sigma_auc,seconds,steps_per_second,status,error\n"
    "1,context-aware,0.000125,0.25,nan,1.5,2000,ok,\n"
    "1,baseline,nan,nan,nan,nan,nan,failed,\"bad, \"\"very\"\" | bad\"\n"
    "2,baseline,nan,nan,nan,nan,nan,interrupted,\n");
  assert_true (g_file_get_contents (md_path, &md, NULL, NULL));
  assert_string_equal (md,
    "| units | model | test_mse | test_loss | sigma_auc | seconds | steps_per_second | status |\n"
    "|---|---|---|---|---|---|---|---|\n"
    "| 1 | context-aware | 0.000125 | 0.25 | – | 1.5 | 2000 | ok |\n"
    "| 1 | baseline | – | – | – | – | – | failed: bad, \"very\" \\| bad |\n"
    "| 2 | baseline | – | – | – | – | – | interrupted |\n");
  g_autofree char *png_path = g_build_filename (dir, "sweep.png", NULL);
  g_autofree char *png = NULL;
  gsize length = 0;
  assert_true (g_file_get_contents (png_path, &png, &length, NULL));
  assert_true (length > 8 && memcmp (png, "\x89PNG", 4) == 0);
  g_autofree char *json_path = g_build_filename (dir, "sweep.json", NULL);
  g_autoptr (CamlSweepPlan) back = caml_sweep_plan_load (json_path, &error);
  if (back == NULL)
    fail_msg ("%s", error->message);
  assert_plans_equal (plan, back);
  /* no run gave a speed: no such column */
  results[0].steps_per_second = NAN;
  assert_true (caml_sweep_write_tables (plan, results, n, dir, &error));
  g_clear_pointer (&csv, g_free);
  assert_true (g_file_get_contents (csv_path, &csv, NULL, NULL));
  assert_true (g_str_has_prefix (csv, "units,model,test_mse,test_loss,sigma_auc,seconds,status,"
                                      "error\n"));
  /* the plot leaves out what did not finish */
  g_autoptr (CamlPlotLine) plot = caml_sweep_plot_new (plan, results, n);
  assert_non_null (plot);
  assert_false (caml_plot_line_get_y_axis (plot)->log);
  /* errors over decades go on a log axis */
  results[2].done = TRUE;
  results[2].metric = 0.05;
  g_autoptr (CamlPlotLine) spread = caml_sweep_plot_new (plan, results, n);
  assert_true (caml_plot_line_get_y_axis (spread)->log);
  /* the parallel coordinates: a line per run that ended, each its result */
  g_autofree int *rows = NULL;
  g_autoptr (CamlPlotParallel) parallel = caml_sweep_parallel_new (plan, results, n, &rows);
  assert_int_equal (caml_plot_parallel_get_n_rows (parallel), 4);
  for (int r = 0; r < 4; r++)
    assert_int_equal (rows[r], r);
  assert_string_equal (caml_plot_parallel_get_axis_name (parallel, 0), "units");
  assert_string_equal (caml_plot_parallel_get_axis_name (parallel, 1), "model");
  assert_string_equal (caml_plot_parallel_get_axis_name (parallel, 2), "test_mse");
  g_autofree char *row0 = caml_plot_parallel_describe_row (parallel, 0);
  print_message ("row 0: %s\n", row0);
  assert_non_null (strstr (row0, "units=1"));
  assert_non_null (strstr (row0, "test_mse 0.000125"));
  g_autofree char *parallel_path = g_build_filename (dir, "sweep-parallel.png", NULL);
  assert_true (g_file_test (parallel_path, G_FILE_TEST_IS_REGULAR));
  for (const char *const *name = (const char *const[]) { "sweep.csv", "sweep.md", "sweep.png",
                                                          "sweep-parallel.png", "sweep.json",
                                                          NULL };
       *name != NULL; name++)
    assert_true (caml_sweep_is_table_name (*name));
  assert_false (caml_sweep_is_table_name ("summary.json"));
  for (int i = 0; i < n; i++)
    caml_sweep_result_clear (&results[i]);
  assert_true (caml_remove_flat_dir (dir));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_plan_check),
    cmocka_unit_test (test_plan_runs),
    cmocka_unit_test (test_plan_plain),
    cmocka_unit_test (test_file_round_trip),
    cmocka_unit_test (test_file_errors),
    cmocka_unit_test (test_keys),
    cmocka_unit_test (test_tables),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
