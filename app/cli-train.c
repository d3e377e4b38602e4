/* cli-train.c — `caml train` and `caml eval`: their options and help;
 * a run itself is caml_cli_run_experiment's (cli-run.c). */
#include <math.h>
#include <string.h>
#include <gio/gio.h>
#include <glib/gstdio.h>

#include "caml.h"
#include "cli.h"
#include "cli-common.h"
#include "report.h"
#include "run-results.h"

/* An integer option not given on the command line. */
#define UNSET G_MININT64

/* ---------------------------------------------------------------- train */

int
caml_cli_train (int argc, char **argv)
{
  g_autofree char *preset = NULL, *out_dir = NULL, *sigma_steps = NULL;
  g_auto (GStrv) layer_options = NULL;
  gint64 seed = UNSET, steps = UNSET;
  int kernel = CAML_CLI_NOT_GIVEN, depth = CAML_CLI_NOT_GIVEN;
  double validation = -1;
  g_autofree char *init_weights = NULL, *resume = NULL;
  gboolean quiet = FALSE, plain = FALSE, sigma_stretch = FALSE;
  g_auto (GStrv) args = NULL;
  const GOptionEntry entries[] = {
    { "preset", 'p', 0, G_OPTION_ARG_STRING, &preset,
      "Train the built-in experiment NAME (see `caml presets`)", "NAME" },
    { "resume", 'r', 0, G_OPTION_ARG_FILENAME, &resume,
      "Go on with the run whose results are in DIR, exactly where it stopped or finished "
      "(its experiment.json, model.weights and trainer.state), to --steps N in all "
      "(default: its own total); the results go to DIR unless --out says otherwise",
      "DIR" },
    { "init-weights", 'w', 0, G_OPTION_ARG_FILENAME, &init_weights,
      "Start from these weights (a model.weights of the same model and data) instead "
      "of the seed's", "FILE" },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &seed,
      "Seed for initial weights, data split and batch order (default: the file's)", "N" },
    { "steps", 'n', 0, G_OPTION_ARG_INT64, &steps,
      "Number of training steps (default: the file's)", "N" },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "Directory for the results (default: runs/NAME-seedN)", "DIR" },
    { "kernel", 'k', 0, G_OPTION_ARG_INT, &kernel,
      "Kernel size of every convolutional layer (same as -O kernel=K)", "K" },
    { "depth", 'd', 0, G_OPTION_ARG_INT, &depth,
      "Depth of every convolutional layer (same as -O depth=D)", "D" },
    { "layer-option", 'O', 0, G_OPTION_ARG_STRING_ARRAY, &layer_options,
      "Set a layer option on every layer that has it (KEY=VALUE) or on layer N only "
      "(N.KEY=VALUE), e.g. -O 0.units=8 -O 0.activation=relu (a bare KEY reaches the output "
      "layer too), or a setting: optimizer.lr, optimizer.em_steps, optimizer.weight_decay, "
      "training.steps, training.batch_size, seed (-O optimizer.lr=0.001); repeatable",
      "[N.]KEY=VALUE" },
    { "validation", 'V', 0, G_OPTION_ARG_DOUBLE, &validation,
      "Hold this fraction of the training set out and evaluate on it instead of the "
      "test set (data.validation_fraction), e.g. 0.1 to choose a step count", "F" },
    { "sigma-steps", 0, 0, G_OPTION_ARG_STRING, &sigma_steps,
      "Steps at which to draw σ-maps, e.g. 1000,5000,last (default: 1000,last)", "LIST" },
    { "sigma-stretch", 0, 0, G_OPTION_ARG_NONE, &sigma_stretch,
      "Draw σ-maps with their grey scale stretched over the maps' own χ range (1st to 99th "
      "percentile, in the title) instead of 0 to 1", NULL },
    { "plain", 0, 0, G_OPTION_ARG_NONE, &plain,
      "Print a line per evaluation instead of a progress bar", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Print only the summary", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args, NULL, NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("(--preset NAME | FILE.json) - train an experiment");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Trains in a background thread with a progress bar on a terminal (a line per\n"
    "evaluation otherwise); Ctrl+C (or SIGTERM) stops early, says so at once,\n"
    "and still evaluates and writes the results; a second Ctrl+C aborts that\n"
    "and leaves DIR as it was. Ctrl+C while the data load stops the run as\n"
    "soon as they are read, writing nothing (a second: at once). The output\n"
    "directory must take files, and no name of a result this run writes may\n"
    "be taken there by a directory (or anything but a file): both are checked\n"
    "before training.\n"
    "\n"
    "Writes into DIR, all or nothing: the results are written into a hidden\n"
    "directory inside DIR first and moved into place, replacing every result\n"
    "file an earlier run left there (so DIR holds one run's results), only\n"
    "when all were written; when one cannot be, DIR keeps what it held and the\n"
    "failure names the file:\n"
    "  metrics.csv      a row per evaluation: step, train_loss (the mean over\n"
    "                   the batches since the evaluation before), test_loss,\n"
    "                   test_mse or test_accuracy, seconds; a run stopped (or\n"
    "                   rolled back by a divergence) between evaluations gets\n"
    "                   a last row at its final step, evaluated after the run\n"
    "                   with the weights it saves\n"
    "  summary.json     preset, seed, steps, evaluated_on (\"test\", or\n"
    "                   \"validation\" with --validation: then the test_* figures\n"
    "                   here and in metrics.csv are the held-out part's),\n"
    "                   train_loss and train_accuracy or train_mse (the final\n"
    "                   weights on the whole training set, as `caml eval`\n"
    "                   gives them), test_loss, test_mse or\n"
    "                   test_accuracy (of the saved weights, metrics.csv's\n"
    "                   last row), seconds, eval_seconds (of them spent\n"
    "                   evaluating), steps_per_second over the rest; for text\n"
    "                   data also tokens (valid tokens trained on) and\n"
    "                   tokens_per_second; after a divergence the error,\n"
    "                   diverged_at_step and rolled_back_to\n"
    "  model.weights    the trained weights (load with `caml eval --weights`)\n"
    "  trainer.state    what `--resume DIR` needs besides them: the optimizer's\n"
    "                   state, the step count, the losses and the evaluations\n"
    "                   (of a run that diverged: at the step it went back to)\n"
    "  experiment.json  the experiment as run (with the seed and steps used)\n"
    "  loss.png         training and test (or validation) loss per step, and a\n"
    "                   marker where a run diverged\n"
    "  surface.png      for 2-D → 1-D regression: ground truth and fitted surface\n"
    "                   with the training points, over the experiment's plot domain\n"
    "  chi.png          the χ surface of every context-aware layer\n"
    "  parts.png        with a CA-NN layer: its χ, the context-free part χ·f₁\n"
    "                   (of v(c), Eq. 37) and the context-sensitive part\n"
    "                   (1 − χ)·f₀ (of the default value w₀; f₁, f₀: the output\n"
    "                   with the gate held at 1 and at 0) beside the fit\n"
    "  sigma-stepN.png  for convolutional CA layers: 64 test images, each beside\n"
    "                   its σ-map (χ per pixel: black 0, white 1, or the\n"
    "                   title's range with --sigma-stretch), at the\n"
    "                   --sigma-steps; and\n"
    "                   summary.json gains sigma_auc (ROC AUC of χ between digit\n"
    "                   pixels > 0.5 and background pixels = 0, first 1000 test\n"
    "                   images), sigma_high_on (foreground or background), and\n"
    "                   whose σ-maps these are (also in the title): the first\n"
    "                   convolutional CA layer, sigma_layer (its index) and\n"
    "                   sigma_layer_type; for a ca_res_conv block the gate of\n"
    "                   its last sublayer, sigma_sublayer of sigma_sublayers\n"
    "  words.html       for text models with a per-word or per-position gate\n"
    "                   (CA-BSFE, CA-ATT, CA-RNN): 20 test samples with every\n"
    "                   word shaded by its χ̃ (light: context-free, χ̃ → 1;\n"
    "                   dark: context-sensitive, χ̃ → 0), and the 50\n"
    "                   most and least context-free words seen ≥ 20 times in\n"
    "                   training (docs/text-classification.md)\n"
    "  words.png        the same two lists as bars\n"
    "\n"
    "--init-weights FILE starts from saved weights (a run's model.weights,\n"
    "or the workbench's) instead of the seed's: the model and, for text, the\n"
    "vocabulary must be those they were trained with, else nothing runs. The\n"
    "optimizer's state (Adagrad's accumulators, Adam's moments, the em_steps\n"
    "phase) and the step count start afresh; the seed still orders the\n"
    "batches; summary.json names the file.\n"
    "\n"
    "--resume DIR goes on with the run whose results are in DIR, from where it\n"
    "finished or was stopped (Ctrl+C), as if it had never ended: its\n"
    "experiment.json, model.weights and trainer.state give the model, the\n"
    "weights, the optimizer's state, the batch order (drawn again from the\n"
    "seed), the step count and the losses; without weight averaging the result\n"
    "is bit for bit that of one run of the total. --steps N sets the total\n"
    "(default: the saved run's own, for a stopped run); the results replace\n"
    "DIR's unless --out names another directory; summary.json gains\n"
    "resumed_from (the directory and step). Nothing that would change the run\n"
    "may be given with it (a preset or file, --seed, --init-weights, layer\n"
    "options, --validation). Edit DIR/experiment.json to change, say, the\n"
    "learning rate: the run then goes on with it. A state that does not\n"
    "match — another run's, or weights changed since it was saved — is\n"
    "refused before anything is written.\n"
    "\n"
    "A run that diverges goes back to its last healthy evaluation (a loss\n"
    "finite and within twice the lowest so far; else to the step it resumed\n"
    "from, or step 0), as the workbench's Continue does — the last finite\n"
    "weights, a step or two before, have often blown up already — and keeps\n"
    "its weights as above, with the trainer.state of that step: lower the\n"
    "learning rate in DIR/experiment.json, and --resume DIR goes on from\n"
    "there as a run stopped at that step would. To go back, the run holds a\n"
    "copy of the weights and the optimizer's state at its latest healthy\n"
    "evaluation, and one of its starting weights. One back at step 0 has\n"
    "nothing to keep and leaves DIR as it was (an earlier run's results too),\n"
    "writing only failed-summary.json and failed-loss.png (the losses up to\n"
    "the failure).\n"
    "A run stopped before its first step, or aborted, writes nothing.\n"
    "\n"
    "Exit status: 0 when the run finished, 1 when it failed (diverged), could\n"
    "not start or could not write a result (then nothing of it is kept), 2 for\n"
    "bad command-line options; interrupted by Ctrl+C (SIGINT) or SIGTERM, the\n"
    "process ends by that signal once it has stopped (a shell reports 130 or\n"
    "143), so a shell loop around it stops too.");
  g_autoptr (GError) error = NULL;
  if (!caml_cli_parse_options (ctx, entries, &argc, &argv, &error))
    {
      g_printerr ("caml train: %s\n", error->message);
      return 2;
    }
  /* Each names its own option and value, as `caml sweep` does. */
  if (seed != UNSET && seed < 0)
    {
      g_printerr ("caml train: --seed %" G_GINT64_FORMAT ": expected a whole number in "
                  "0…%" G_GINT64_FORMAT "\n", seed, G_MAXINT64);
      return 2;
    }
  if (steps != UNSET && (steps < 1 || steps > 1000000000))
    {
      g_printerr ("caml train: --steps %" G_GINT64_FORMAT ": expected a whole number in "
                  "1…1000000000\n", steps);
      return 2;
    }
  if (validation != -1 && !(validation >= 0 && validation < 1))
    {
      g_printerr ("caml train: --validation must be in [0, 1)\n");
      return 2;
    }

  if (resume != NULL)
    {
      /* the run goes on as it was set up: nothing that would change it */
      const char *other = preset ? "--preset" : args && args[0] ? args[0]
                          : seed != UNSET ? "--seed" : init_weights ? "--init-weights"
                          : kernel != CAML_CLI_NOT_GIVEN ? "--kernel"
                          : depth != CAML_CLI_NOT_GIVEN ? "--depth"
                          : layer_options ? "--layer-option" : validation != -1 ? "--validation"
                          : NULL;
      if (other != NULL)
        {
          g_printerr ("caml train: --resume goes on with the experiment saved in %s/: %s "
                      "cannot be given with it\n", resume, other);
          return 2;
        }
      args = g_new0 (char *, 2);
      args[0] = g_build_filename (resume, "experiment.json", NULL);
    }

  g_autofree char *source = NULL;
  CamlExperiment *exp = caml_cli_load_experiment ("train", preset, args, &source, &error);
  if (exp == NULL)
    {
      if (resume != NULL)
        g_prefix_error (&error, "--resume: ");
      g_printerr ("caml train: %s\n", error->message);
      return caml_cli_is_usage_error (error) ? 2 : 1;
    }
  /* a resumed run's summary keeps the saved one's preset and origin */
  g_autofree char *saved_preset = NULL, *started_from = NULL, *as_trained = NULL;
  if (resume != NULL)
    caml_run_results_read_summary (resume, &saved_preset, &started_from, &as_trained);
  if (as_trained != NULL && !caml_run_results_check_resumed (exp, as_trained, source, &error))
    {
      g_printerr ("caml train: --resume: %s\n", error->message);
      caml_experiment_free (exp);
      return 1;
    }
  /* -O seed=… or -O training.steps=… beside --seed or --steps */
  g_autoptr (GArray) given = g_array_new (FALSE, FALSE, sizeof (CamlAssignment));
  caml_assignments_add_options (given, layer_options);
  g_autofree char *seed_given = g_strdup_printf ("--seed %" G_GINT64_FORMAT, seed);
  g_autofree char *steps_given = g_strdup_printf ("--steps %" G_GINT64_FORMAT, steps);
  if ((seed != UNSET && !caml_cli_refuse_twice (seed_given, "seed", (CamlAssignment *) given->data,
                                                (int) given->len, &error))
      || (steps != UNSET
          && !caml_cli_refuse_twice (steps_given, "training.steps", (CamlAssignment *) given->data,
                                     (int) given->len, &error)))
    {
      g_printerr ("caml train: %s\n", error->message);
      caml_experiment_free (exp);
      return 2;
    }
  if (seed != UNSET)
    exp->seed = (guint64) seed;
  if (steps != UNSET)
    exp->steps = (int) steps;
  if (validation > 0 && !caml_data_kind_has_validation (exp->data.kind))
    {
      g_printerr ("caml train: --validation %g: %s data has no validation split (only image "
                  "and text data sets do)\n", validation, caml_data_kind_names[exp->data.kind]);
      caml_experiment_free (exp);
      return 2;
    }
  if (validation >= 0)
    exp->data.validation_fraction = validation;
  if (!caml_cli_apply_layer_options (exp, layer_options, kernel, depth, &error))
    {
      g_printerr ("caml train: %s\n", error->message);
      caml_experiment_free (exp);
      return 2;
    }
  if (out_dir == NULL && resume != NULL)
    out_dir = g_strdup (resume);
  if (out_dir == NULL)
    {
      g_autofree char *name = caml_cli_safe_name (exp->name);
      out_dir = g_strdup_printf ("runs/%s-seed%" G_GUINT64_FORMAT, name, exp->seed);
    }

  CamlCliRun how = {
    .preset = resume ? saved_preset : preset, .source = source, .out_dir = out_dir,
    .sigma_steps = sigma_steps ? sigma_steps : "1000,last", .init_weights = init_weights,
    .resume_dir = resume, .started_from = started_from,
    .sigma_stretch = sigma_stretch, .quiet = quiet, .plain = plain,
    .sigma_given = sigma_steps && sigma_stretch ? "--sigma-steps and --sigma-stretch"
                   : sigma_steps ? "--sigma-steps" : sigma_stretch ? "--sigma-stretch" : NULL,
  };
  int status = caml_cli_run_experiment (exp, &how, NULL);
  caml_experiment_free (exp);
  return status;
}

/* ----------------------------------------------------------------- eval */

int
caml_cli_eval (int argc, char **argv)
{
  g_autofree char *preset = NULL, *weights = NULL, *out_dir = NULL;
  gint64 seed = UNSET;
  gboolean sigma_stretch = FALSE;
  g_auto (GStrv) args = NULL;
  const GOptionEntry entries[] = {
    { "preset", 'p', 0, G_OPTION_ARG_STRING, &preset,
      "Evaluate on the built-in experiment NAME", "NAME" },
    { "weights", 'w', 0, G_OPTION_ARG_FILENAME, &weights,
      "Weights written by `caml train` (required)", "FILE" },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &seed,
      "Seed of the data split (default: the file's; use the training run's)", "N" },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "Also draw the model into DIR: surface.png, chi.png and parts.png, for a "
      "convolutional CA layer sigma.png, or for a text model with word gates words.html "
      "and words.png", "DIR" },
    { "sigma-stretch", 0, 0, G_OPTION_ARG_NONE, &sigma_stretch,
      "Draw sigma.png with its grey scale stretched over the maps' own χ range", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args, NULL, NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("(--preset NAME | FILE.json) --weights FILE - evaluate saved weights");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Builds the experiment's model, loads the weights (which must match its\n"
    "layers), and prints the loss and the metric (MSE or accuracy) on the\n"
    "training and test sets. The experiment.json a training run writes beside\n"
    "its weights reproduces that run's data split. With --out, writes what\n"
    "`caml train` draws from a trained model, and says which files it wrote:\n"
    "for 2-D → 1-D regression surface.png, chi.png (with a gated layer) and\n"
    "parts.png (with a CA-NN layer); for a convolutional CA layer sigma.png\n"
    "(64 test images beside their σ-maps); for a text model with word gates\n"
    "words.html and words.png. A model with none of these gets none. A model\n"
    "with σ-maps also gets sigma_auc: the ROC AUC of χ between digit and\n"
    "background pixels of the first 1000 test images, as `caml train` gives it.");
  g_autoptr (GError) error = NULL;
  if (!caml_cli_parse_options (ctx, entries, &argc, &argv, &error))
    {
      g_printerr ("caml eval: %s\n", error->message);
      return 2;
    }
  if (weights == NULL)
    {
      g_printerr ("caml eval: --weights FILE is required\n");
      return 2;
    }
  if (seed != UNSET && seed < 0)
    {
      g_printerr ("caml eval: --seed %" G_GINT64_FORMAT ": expected a whole number in "
                  "0…%" G_GINT64_FORMAT "\n", seed, G_MAXINT64);
      return 2;
    }
  g_autofree char *source = NULL;
  CamlExperiment *exp = caml_cli_load_experiment ("eval", preset, args, &source, &error);
  if (exp == NULL)
    {
      g_printerr ("caml eval: %s\n", error->message);
      return caml_cli_is_usage_error (error) ? 2 : 1;
    }
  if (seed != UNSET)
    exp->seed = (guint64) seed;

  CamlDataset *train = NULL, *test = NULL;
  CamlModel *model = NULL;
  int status = 1;
  gboolean words = FALSE;
  g_autoptr (GString) drawn = g_string_new (NULL);   /* ", NAME" per file drawn */
  g_autofree char *words_path = out_dir ? g_build_filename (out_dir, "words.html", NULL) : NULL;
  g_autofree char *words_png = out_dir ? g_build_filename (out_dir, "words.png", NULL) : NULL;
  g_autofree char *title = caml_run_results_title (exp);
  if (!caml_experiment_load_datasets (exp, &train, &test, &error)
      /* the layers only: every weight comes from the file (no word vectors to read) */
      || !(model = caml_experiment_build_model (exp, &train->x_shape, &error)))
    {
      caml_cli_name_experiment (&error, source);
      g_printerr ("caml eval: %s\n", error->message);
      goto out;
    }
  /* … with the vocabulary, so weights trained on other words are refused */
  caml_model_set_vocab (model, train->vocab);
  if (!caml_weights_load (model, weights, &error))
    {
      g_printerr ("caml eval: %s\n", error->message);
      goto out;
    }
  /* The output directory is checked before the work (and removed again
   * when it was made for nothing). */
  gboolean out_existed = out_dir != NULL && g_file_test (out_dir, G_FILE_TEST_EXISTS);
  if (out_dir && !caml_cli_ensure_dir (out_dir, &error))
    {
      g_printerr ("caml eval: %s\n", error->message);
      goto out;
    }
  gboolean classification = train->n_classes > 0;
  const char *metric = classification ? "accuracy" : "mse";
  const char *evaluated_on = caml_report_evaluated_on (exp);
  int width = (int) MAX (strlen ("train"), strlen (evaluated_on));
  double loss, value;
  caml_evaluate (model, exp->loss, train, &loss, &value);
  g_print ("%-*s  loss %.6g  %s %.6g  (%d sample%s)\n", width, "train", loss, metric, value,
           train->n, train->n == 1 ? "" : "s");
  caml_evaluate (model, exp->loss, test, &loss, &value);
  g_print ("%-*s  loss %.6g  %s %.6g  (%d sample%s)\n", width, evaluated_on, loss, metric,
           value, test->n, test->n == 1 ? "" : "s");
  double sigma_auc;
  gboolean high_on_fg;
  if (!caml_report_write_sigma_eval (out_dir, exp->name ? exp->name : "experiment", model,
                                        test, sigma_stretch, drawn, &sigma_auc, &high_on_fg,
                                        &error))
    {
      g_printerr ("caml eval: %s\n", error->message);
      goto out;
    }
  if (!isnan (sigma_auc))
    g_print ("sigma_auc %.4f (χ higher on the %s)\n", sigma_auc,
             high_on_fg ? "foreground" : "background");
  if (out_dir && (!caml_report_write_surfaces (out_dir, exp, model, train, drawn, &error)
                  || !caml_report_write_words_on (words_path, words_png, title, model,
                                                  exp, train, test, CAML_RUN_WORDS_SAMPLES,
                                                  CAML_RUN_WORDS_MIN_COUNT, CAML_RUN_WORDS_TOP, &words, &error)))
    {
      g_printerr ("caml eval: %s\n", error->message);
      goto out;
    }
  if (words)
    g_string_append (drawn, ", words.html, words.png");
  /* As `caml train` says where its results went; the names after ", ". */
  if (out_dir && drawn->len > 0)
    g_print ("results in %s/ (%s)\n", out_dir, drawn->str + 2);
  else if (out_dir)
    {
      if (!out_existed)
        g_rmdir (out_dir);
      g_print ("nothing drawn into %s/: the model is no 2-D → 1-D surface and has no "
               "σ-maps or word gates\n", out_dir);
    }
  status = 0;

out:
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_experiment_free (exp);
  return status;
}
