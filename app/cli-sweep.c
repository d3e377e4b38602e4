/* cli-sweep.c — `caml sweep`: its options into a plan (studio/sweep.h:
 * the plan, its checks, each run's experiment and folder, the tables and
 * Fig. 17), the runs handed to the ranks, each said as it ends, and the
 * tables moved into place all or nothing (studio/results-dir.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <glib/gstdio.h>

#include "caml.h"
#include "caml-json.h"
#include "cli.h"
#include "cli-common.h"
#include "cli-mpi.h"
#include "results-dir.h"
#include "sweep.h"

/* Most training steps of one run, as `caml train --steps`. */
#define MAX_STEPS 1000000000

/* A whole number option in min…max; text is what was given. */
static gboolean
parse_whole (const char *option, const char *text, gint64 min, gint64 max, gint64 *value,
             GError **error)
{
  if (g_ascii_string_to_signed (text, 10, min, max, value, NULL))
    return TRUE;
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
               "%s %s: expected a whole number in %" G_GINT64_FORMAT "…%" G_GINT64_FORMAT,
               option, text, min, max);
  return FALSE;
}

/* A run's summary.json from an earlier sweep into the same directory must
 * not pass for this run's. */
static gboolean
remove_old_summary (const char *dir, GError **error)
{
  g_autofree char *path = g_build_filename (dir, "summary.json", NULL);
  if (g_unlink (path) == 0 || errno == ENOENT)
    return TRUE;
  int saved = errno;
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
               "%s: cannot remove the summary of an earlier run: %s", path, g_strerror (saved));
  return FALSE;
}

/* The --seed and --steps given beside a key of the plan that sets the same
 * (-O seed=…, --grid training.steps=…, a sweep file's "set" or grid). */
static gboolean
refuse_twice (const CamlSweepPlan *plan, const char *seed_text, const char *steps_text,
              GError **error)
{
  g_autoptr (GArray) list = g_array_new (FALSE, FALSE, sizeof (CamlAssignment));
  g_autoptr (GPtrArray) owned = g_ptr_array_new_with_free_func (g_free);
  caml_assignments_add_options (list, plan->fixed);
  for (int a = 0; a < plan->n_axes; a++)
    {
      char *text = g_strconcat (plan->axes[a].key, "=", NULL);
      g_autofree char *values = g_strjoinv (",", plan->axes[a].values);
      char *given = g_strdup_printf ("--grid %s=%s", plan->axes[a].key, values);
      g_ptr_array_add (owned, text);
      g_ptr_array_add (owned, given);
      CamlAssignment axis = { text, given };
      g_array_append_val (list, axis);
    }
  g_autofree char *seed = g_strconcat ("--seed ", seed_text, NULL);
  g_autofree char *steps = g_strconcat ("--steps ", steps_text, NULL);
  return (seed_text == NULL
          || caml_cli_refuse_twice (seed, "seed", (CamlAssignment *) list->data,
                                    (int) list->len, error))
         && (steps_text == NULL
             || caml_cli_refuse_twice (steps, "training.steps", (CamlAssignment *) list->data,
                                       (int) list->len, error));
}

/* A sweep's runs (caml_sweep_plan_run_of: the first axis varying fastest,
 * each point's model then its baseline), shared by the ranks. */
typedef struct {
  const CamlSweepPlan *plan;
  const char *out_dir;
  int         n_points, per_point;   /* runs per point: 1, or 2 with the baseline */
  int         ranks;
  char       *hints[2];    /* caml_sweep_plan_hint of each axis */
  /* on the first rank, as the runs end (end_run) */
  CamlSweepResult *results;   /* one per run, in order */
  gboolean    classification, hinted;
  int         n_failed, status;
  GString    *failed;      /* the failed runs' labels */
} Sweep;

/* A run is handed out (to a rank). */
static void
begin_run (int item, int rank, gpointer data)
{
  Sweep *sw = data;
  CamlSweepResult r;
  caml_sweep_plan_result_init (sw->plan, item, &r);
  g_autofree char *label = caml_sweep_plan_label (sw->plan, r.index);
  if (sw->ranks > 1)
    g_print ("[%d/%d] %s %s … (rank %d)\n", item / sw->per_point + 1, sw->n_points, label,
             caml_sweep_result_model (&r), rank);
  else
    g_print ("[%d/%d] %s %s …\n", item / sw->per_point + 1, sw->n_points, label,
             caml_sweep_result_model (&r));
}

/* The figures of a run as they travel between ranks: status, metric,
 * test_loss, sigma_auc, seconds, steps_per_second, error or "", and
 * classification (−1: no summary). */
#define RESULT_TYPE "(idddddsi)"

/* Trains one run, on the rank it was handed to, into OUT/<label>/ca or
 * baseline. */
static GBytes *
train_run (int item, gpointer data)
{
  Sweep *sw = data;
  g_autoptr (GError) error = NULL;
  CamlSweepResult r;
  caml_sweep_plan_result_init (sw->plan, item, &r);
  CamlExperiment *exp = caml_sweep_plan_experiment (sw->plan, item, NULL);   /* checked */
  g_autofree char *dir = caml_sweep_plan_run_dir (sw->plan, sw->out_dir, item);
  if (remove_old_summary (dir, &error))
    {
      CamlCliRun how = { .preset = sw->plan->preset, .source = sw->plan->source,
                         .out_dir = dir, .sigma_steps = "last", .quiet = TRUE, .plain = TRUE,
                         .no_notes = TRUE, .alone = TRUE };
      r.status = caml_cli_run_experiment (exp, &how, &r.error);
      caml_sweep_result_read (&r, dir);
    }
  else
    {
      r.status = 1;
      r.error = g_strdup (error->message);
      g_printerr ("caml sweep: %s\n", error->message);
    }
  caml_experiment_free (exp);
  GVariant *v = g_variant_new (RESULT_TYPE, r.status, r.metric, r.test_loss, r.sigma_auc,
                               r.seconds, r.steps_per_second, r.error != NULL ? r.error : "",
                               r.summary ? r.classification : -1);
  caml_sweep_result_clear (&r);
  g_variant_ref_sink (v);
  GBytes *bytes = g_variant_get_data_as_bytes (v);
  g_variant_unref (v);
  return bytes;
}

/* A run's figures come in (on the first rank): said, counted and kept.
 * FALSE once interrupted: no more runs. */
static gboolean
end_run (int item, int rank, GBytes *bytes, gpointer data)
{
  Sweep *sw = data;
  CamlSweepResult *r = &sw->results[item];
  caml_sweep_plan_result_init (sw->plan, item, r);
  r->done = TRUE;
  const char *error = "";
  int classification = -1;
  g_autoptr (GVariant) v
    = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE (RESULT_TYPE), bytes, FALSE));
  g_variant_get (v, RESULT_TYPE, &r->status, &r->metric, &r->test_loss, &r->sigma_auc,
                 &r->seconds, &r->steps_per_second, NULL, &classification);
  g_variant_get_child (v, 6, "&s", &error);
  r->error = *error != '\0' ? g_strdup (error) : NULL;
  r->summary = classification >= 0;
  if (r->summary)
    sw->classification = r->classification = classification;
  g_autofree char *label = caml_sweep_plan_label (sw->plan, r->index);
  const char *model = caml_sweep_result_model (r);
  gboolean interrupted = caml_cli_interrupted (r->status);
  /* A run elsewhere could not say its error: its rank is silent. */
  if (rank > 0 && r->error != NULL)
    g_printerr ("caml sweep: %s %s (rank %d): %s\n", label, model, rank, r->error);
  if (r->status != 0 && !interrupted && r->error == NULL)
    r->error = g_strdup_printf ("exit status %d", r->status);
  for (int a = 0; a < sw->plan->n_axes && r->status != 0 && !interrupted; a++)
    if (sw->hints[a] != NULL)
      {
        if (!sw->hinted)
          g_printerr ("caml sweep: if that is why: %s\n", sw->hints[a]);
        char *with = g_strdup_printf ("%s (%s)", r->error, sw->hints[a]);
        g_free (r->error);
        r->error = with;
      }
  sw->hinted |= r->status != 0 && !interrupted && (sw->hints[0] || sw->hints[1]);
  /* The run's own error went to stderr, once. */
  g_autofree char *what = sw->ranks > 1 ? g_strdup_printf ("%s %s: ", label, model)
                                        : g_strdup ("");
  if (r->status == 0)
    {
      g_autofree char *metric = caml_sweep_format_figure (r->metric);
      g_print ("        %s%s %s\n", what, sw->classification ? "test_accuracy" : "test_mse",
               metric);
    }
  else
    g_print ("        %s%s\n", what, caml_sweep_status_name (r->status));
  if (r->status != 0 && !interrupted)
    {
      sw->n_failed++;
      g_string_append_printf (sw->failed, "%s%s %s", sw->failed->len ? ", " : "", label, model);
    }
  /* Ctrl+C stops the sweep, whatever the run it came in then did (it may
   * end failed: a divergence, a result it could not write) */
  if (interrupted || caml_cli_signal_heard () != 0)
    {
      if (sw->status == 0)
        sw->status = interrupted ? r->status : 128 + caml_cli_signal_heard ();
      return FALSE;
    }
  return TRUE;
}

/* The plan of the command line: a sweep file (*from_file, checked), or an
 * experiment (--preset or FILE.json) with --grid and -O (not checked yet).
 * NULL with an error: a usage error (G_OPTION_ERROR: exit status 2) or not. */
static CamlSweepPlan *
make_plan (const char *preset, char **args, char **grids, char **layer_options,
           gboolean *from_file, GError **error)
{
  int n_args = args ? (int) g_strv_length (args) : 0;
  *from_file = n_args == 1 && caml_sweep_file_is (args[0]);
  if (*from_file)
    {
      const char *other = preset != NULL ? "--preset" : grids != NULL ? "--grid"
                          : layer_options != NULL ? "-O" : NULL;
      if (other != NULL)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                       "%s and the sweep file %s: the file holds the experiment, its grid and "
                       "its fixed settings (\"set\"); give one or the other", other, args[0]);
          return NULL;
        }
      return caml_sweep_plan_load (args[0], error);
    }
  int n_axes = grids ? (int) g_strv_length (grids) : 0;
  /* a file meant as a sweep file that is no JSON: its own error */
  if (n_axes == 0 && n_args == 1 && preset == NULL
      && g_file_test (args[0], G_FILE_TEST_IS_REGULAR))
    {
      g_autoptr (CamlJsonDoc) doc = caml_json_doc_new_from_file (args[0], error);
      if (doc == NULL)
        return NULL;
    }
  if (n_axes < 1 || n_axes > CAML_SWEEP_MAX_AXES)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                   "give one or two --grid KEY=V1,V2,…, or a sweep file");
      return NULL;
    }
  g_autofree char *source = NULL;
  CamlExperiment *exp = caml_cli_load_experiment ("sweep", preset, args, &source, error);
  if (exp == NULL)
    return NULL;
  g_autoptr (CamlSweepPlan) plan = caml_sweep_plan_new (exp, preset, source);
  plan->fixed = g_strdupv (layer_options);
  for (int a = 0; a < n_axes; a++)
    {
      g_autoptr (GError) local = NULL;
      if (!caml_sweep_plan_parse_axis (plan, grids[a], &local))
        {
          g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, local->message);
          return NULL;
        }
    }
  return g_steal_pointer (&plan);
}

int
caml_cli_sweep (int argc, char **argv)
{
  g_autofree char *preset = NULL, *out_dir = NULL, *seed_text = NULL, *steps_text = NULL;
  g_autofree char *write_sweep = NULL;
  g_auto (GStrv) grids = NULL, layer_options = NULL, args = NULL;
  gint64 seed = -1, steps = -1;   /* -1: the experiment's */
  gboolean no_baseline = FALSE;
  g_autoptr (CamlResultsDir) written = NULL;   /* the tables and sweep.json */
  const GOptionEntry entries[] = {
    { "preset", 'p', 0, G_OPTION_ARG_STRING, &preset, "Sweep the built-in experiment NAME", "NAME" },
    { "grid", 'g', 0, G_OPTION_ARG_STRING_ARRAY, &grids,
      "A layer option or a setting and its values, e.g. --grid kernel=3,5,8, --grid "
      "0.units=2,5 or --grid optimizer.lr=0.001,0.01 (one or two)", "[N.]KEY=V1,V2,…" },
    { "layer-option", 'O', 0, G_OPTION_ARG_STRING_ARRAY, &layer_options,
      "Fixed layer option or setting for every run, as in `caml train`", "KEY=VALUE" },
    /* strings, checked below: an INT64 option cannot tell -1 from "not given" */
    { "seed", 's', 0, G_OPTION_ARG_STRING, &seed_text,
      "Seed of every run, 0…9223372036854775807 (default: the file's)", "N" },
    { "steps", 'n', 0, G_OPTION_ARG_STRING, &steps_text,
      "Training steps of every run, 1…1000000000 (default: the file's)", "N" },
    { "no-baseline", 0, 0, G_OPTION_ARG_NONE, &no_baseline,
      "Do not train the matched baselines", NULL },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "Directory for the results (default: runs/sweep-NAME)", "DIR" },
    { "write-sweep", 0, 0, G_OPTION_ARG_FILENAME, &write_sweep,
      "Write the sweep as a sweep file (docs/sweeps.md) and train nothing", "FILE" },
    /* no arg_description: the context's parameter string names FILE.json */
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args, NULL, NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("(--preset NAME | FILE.json) --grid KEY=V1,V2,… | SWEEP.json - train a grid of layer options or settings");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Trains the experiment once for every combination of the grid's values,\n"
    "and — unless --no-baseline — its matched baseline, where each\n"
    "context-aware layer is replaced by its plain counterpart (CA-CNN →\n"
    "conv2d, CA-NN → dense) with the same options, seed and data order (a\n"
    "model without a context-aware layer has none; its rows say \"plain\"). Each\n"
    "run's full results go into DIR/<combination>/ca and\n"
    "DIR/<combination>/baseline; DIR/sweep.csv and DIR/sweep.md tabulate test\n"
    "metric, loss, σ-AUC, time and speed, and DIR/sweep.png plots the metric\n"
    "against the first grid key (one line per value of the second; baseline\n"
    "dashed), like the paper's Fig. 17 — words such as score=bahdanau,luong as\n"
    "evenly spaced categories. DIR/sweep.json is the sweep as run, its\n"
    "experiment written out: `caml sweep DIR/sweep.json` runs it again. A run\n"
    "that fails is marked in the status and error columns of sweep.csv (and in\n"
    "sweep.md), left out of the plot (which says so when no run succeeded, with\n"
    "the first error) and counted at the end; the sweep then exits with status\n"
    "1. Each run's error is printed once, on stderr.\n"
    "\n"
    "A KEY sets the option on every layer that has it — units=2,5 the\n"
    "readout's too —, N.KEY on layer N only (N counts the experiment's\n"
    "\"model\" list from 0): --grid 0.units=2,5. A key may also be a setting:\n"
    "optimizer.lr, optimizer.em_steps, optimizer.weight_decay, training.steps,\n"
    "training.batch_size or seed. Give each option in one --grid:\n"
    "\n"
    "  caml sweep --preset mnist-ca-cnn --grid kernel=3,5,8 --grid depth=8,16,32\n"
    "  caml sweep --preset fashion-ca-res --grid sublayers=1,2,3 --grid n_v=1,2\n"
    "  caml sweep --preset xor-ca-nn --grid optimizer.lr=0.001,0.01,0.1\n"
    "\n"
    "A sweep file (a JSON object with a \"grid\": docs/sweeps.md) holds the\n"
    "experiment, the grid and the fixed settings in one place, and takes\n"
    "--steps, --seed, --no-baseline and --out beside it:\n"
    "\n"
    "  caml sweep kernels.json --steps 200");
  g_autoptr (GError) error = NULL;
  if (!caml_cli_parse_options (ctx, entries, &argc, &argv, &error))
    {
      g_printerr ("caml sweep: %s\n", error->message);
      return 2;
    }
  /* The ranges of `caml train --seed/--steps`. */
  if ((seed_text && !parse_whole ("--seed", seed_text, 0, G_MAXINT64, &seed, &error))
      || (steps_text && !parse_whole ("--steps", steps_text, 1, MAX_STEPS, &steps, &error)))
    {
      g_printerr ("caml sweep: %s\n", error->message);
      return 2;
    }
  /* A problem with the command line, the grid or -O (a usage error, exit
   * status 2), or with a file (1): said before anything trains. */
  gboolean from_file = FALSE, usage = TRUE;
  int status = 0;
  g_autoptr (CamlSweepPlan) plan = make_plan (preset, args, grids, layer_options, &from_file,
                                              &error);
  if (plan == NULL)
    usage = caml_cli_is_usage_error (error);
  else if (refuse_twice (plan, seed_text, steps_text, &error))
    {
      if (seed >= 0)
        plan->exp->seed = (guint64) seed;
      if (steps > 0)
        plan->exp->steps = (int) steps;
      plan->baselines &= !no_baseline;
      /* every key and value (a sweep file's were) */
      if (!from_file && !caml_sweep_plan_check (plan, &error))
        g_clear_pointer (&plan, caml_sweep_plan_free);
    }
  else
    g_clear_pointer (&plan, caml_sweep_plan_free);
  if (plan == NULL)
    {
      g_printerr ("caml sweep: %s\n", error->message);
      /* several ranks: the others wait to hear that this one cannot start */
      if (caml_cli_mpi_size () > 1)
        caml_cli_mpi_ready (error->message);
      return usage ? 2 : 1;
    }
  if (write_sweep != NULL)
    {
      if (caml_cli_mpi_rank () == 0 && !caml_sweep_plan_save (plan, write_sweep, &error))
        {
          g_printerr ("caml sweep: %s\n", error->message);
          return 1;
        }
      if (caml_cli_mpi_rank () == 0)
        g_print ("sweep written to %s (%d runs)\n", write_sweep, caml_sweep_plan_n_runs (plan));
      return 0;
    }
  if (out_dir == NULL)
    {
      g_autofree char *name = caml_cli_safe_name (plan->exp->name);
      out_dir = g_strdup_printf ("runs/sweep-%s", name);
    }
  /* The tables go there even when every run fails before writing anything
   * (every rank writes its runs there: a shared file system). */
  if (!caml_cli_ensure_dir (out_dir, &error))
    g_printerr ("caml sweep: %s\n", error->message);
  /* every rank sweeps, or none */
  if (!caml_cli_mpi_ready (error != NULL ? error->message : NULL))
    return 1;

  /* Without a context-aware layer the baseline is the same model: training
   * it again would only repeat the run. */
  if (!caml_sweep_plan_has_context_aware (plan) && plan->baselines)
    g_print ("%s has no context-aware layer: no baseline runs\n",
             plan->exp->name ? plan->exp->name : "the experiment");
  int n_runs = caml_sweep_plan_n_runs (plan);
  Sweep sw = {
    .plan = plan, .out_dir = out_dir, .n_points = caml_sweep_plan_n_points (plan),
    .per_point = n_runs / caml_sweep_plan_n_points (plan),
    .classification = plan->exp->loss == CAML_LOSS_SOFTMAX_XENT,
    .ranks = caml_cli_mpi_size (),
    .results = g_new0 (CamlSweepResult, n_runs),
    .failed = g_string_new (NULL),
  };
  /* Said once, with the first run that fails, and kept with every failed
   * run's error in the tables. */
  for (int a = 0; a < plan->n_axes; a++)
    sw.hints[a] = caml_sweep_plan_hint (plan, a);
  /* The runs go to the ranks as they become free (one rank: in turn). */
  caml_cli_mpi_share (n_runs, begin_run, train_run, end_run, &sw);
  if (sw.status != 0)
    status = sw.status;
  /* the first rank has every run's figures, and writes the tables — all or
   * nothing: an earlier sweep's stay as they were if one fails */
  if (caml_cli_mpi_rank () == 0)
    {
      written = caml_results_dir_new (out_dir, &error);
      if (written == NULL
          || !caml_sweep_write_tables (plan, sw.results, n_runs, written->dir, &error)
          || !caml_results_dir_commit (written, caml_sweep_is_table_name, &error))
        {
          g_printerr ("caml sweep: %s\n", error->message);
          if (written != NULL)
            g_printerr ("caml sweep: sweep.csv, sweep.md, sweep.png and sweep.json not "
                        "written: %s/ keeps what it held\n", out_dir);
          status = 1;
        }
      else
        g_print ("results in %s/ (sweep.csv, sweep.md, sweep.png, sweep.json, and one "
                 "directory per run)\n", out_dir);
      if (sw.n_failed > 0)
        {
          int n_done = 0;
          for (int i = 0; i < n_runs; i++)
            n_done += sw.results[i].done;
          g_printerr ("caml sweep: %d of %d runs failed (%s): see the status and error "
                      "columns of %s/sweep.csv\n", sw.n_failed, n_done, sw.failed->str,
                      out_dir);
          if (status == 0)
            status = 1;
        }
    }
  for (int i = 0; i < n_runs; i++)
    caml_sweep_result_clear (&sw.results[i]);
  g_free (sw.results);
  g_free (sw.hints[0]);
  g_free (sw.hints[1]);
  g_string_free (sw.failed, TRUE);
  return status;
}
