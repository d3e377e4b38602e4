/* cli-rnn-sanity.c — `caml rnn-sanity`: the paper's CA-RNN sanity test
 * (Sec. 4.4.1, Fig. 13). CA-RNN, LSTM and GRU learn {I am happy} → 1 and
 * {You are very angry} → 0, then classify {I am very happy} and {You look
 * angry} ("look" is unseen: an out-of-vocabulary zero vector), over several
 * seeds with the same embedding, sizes, optimizer and data; a table of the
 * mean ± std of final training loss, test loss and test error, side by
 * side, a CSV of it and of every run, and the curves averaged over runs. */
#include <math.h>
#include <stdio.h>
#include <gio/gio.h>

#include "caml.h"
#include "caml-plot.h"
#include "cli.h"
#include "cli-common.h"
#include "results-dir.h"
#include "presets.h"

static const struct {
  const char *preset, *title;
} cells[] = {
  { "rnn-sanity-ca-rnn", "CA-RNN" },
  { "rnn-sanity-lstm", "LSTM" },
  { "rnn-sanity-gru", "GRU" },
};
#define N_CELLS G_N_ELEMENTS (cells)

/* One run's final figures. */
typedef struct {
  double train_loss, test_loss, test_error;
  double p_test[2];     /* the model's probability of label 1 for each test sentence */
} RunResult;

/* One cell over every run: results, and the per-step curves summed. */
typedef struct {
  RunResult *runs;
  int        n_runs;
  double    *train_curve;   /* (steps) Σ over runs of the step's training loss */
  double    *test_curve;    /* (steps) Σ over runs of the test loss after the step */
  double    *error_curve;   /* (steps) Σ over runs of the test error after the step */
} CellResult;

static void
mean_std (const RunResult *runs, int n, gsize field, double *mean, double *std)
{
  double s = 0, ss = 0;
  for (int i = 0; i < n; i++)
    s += G_STRUCT_MEMBER (double, &runs[i], field);
  *mean = s / n;
  for (int i = 0; i < n; i++)
    {
      double d = G_STRUCT_MEMBER (double, &runs[i], field) - *mean;
      ss += d * d;
    }
  /* sample standard deviation: undefined (NAN) for one run */
  *std = n > 1 ? sqrt (ss / (n - 1)) : NAN;
}

/* After a finished run: the curves into cell, the final figures into r. */
static void
collect (CamlTrainer *trainer, CamlModel *model, const CamlExperiment *exp,
         const CamlDataset *train, const CamlDataset *test, RunResult *r, CellResult *cell)
{
  int n_rows = 0;
  long n_steps = 0;
  g_autofree CamlEvalRow *rows = caml_trainer_copy_rows (trainer, &n_rows);
  g_autofree float *losses = caml_trainer_copy_losses (trainer, &n_steps);
  for (long s = 0; s < n_steps && s < exp->steps; s++)
    cell->train_curve[s] += losses[s];
  for (int i = 0; i < n_rows; i++)
    if (rows[i].step >= 1 && rows[i].step <= exp->steps)
      {
        cell->test_curve[rows[i].step - 1] += rows[i].test_loss;
        cell->error_curve[rows[i].step - 1] += 1.0 - rows[i].test_metric;
      }

  double accuracy;
  caml_evaluate (model, exp->loss, train, &r->train_loss, &accuracy);
  caml_evaluate (model, exp->loss, test, &r->test_loss, &accuracy);
  r->test_error = 1.0 - accuracy;
  g_autofree float *buf = g_new (float, (size_t) test->n * caml_shape_size (&test->x_shape));
  const float *logits = caml_model_forward (model, caml_dataset_rows (test, 0, test->n, buf),
                                            test->n);
  for (int i = 0; i < 2 && i < test->n; i++)
    r->p_test[i] = caml_sigmoidf (logits[i]);
}

/* Trains exp (its seed set) and fills r and the curves. */
static gboolean
run_one (const CamlExperiment *exp, RunResult *r, CellResult *cell, GError **error)
{
  CamlDataset *train = NULL, *test = NULL;
  CamlModel *model = NULL;
  CamlTrainer *trainer = NULL;
  gboolean ok = FALSE;
  if (caml_experiment_load_datasets (exp, &train, &test, error)
      && (model = caml_experiment_build_model_for (exp, train, error)) != NULL)
    {
      trainer = caml_trainer_new (exp, model, train, test);
      if (caml_trainer_start (trainer, FALSE, error))
        {
          if (caml_trainer_join (trainer) == CAML_TRAINER_FINISHED)
            {
              collect (trainer, model, exp, train, test, r, cell);
              ok = TRUE;
            }
          else
            {
              GError *run_error = caml_trainer_get_error (trainer);
              if (run_error != NULL)
                g_propagate_error (error, run_error);
              else
                g_set_error (error, CAML_ERROR, CAML_ERROR_CANCELLED, "the run did not finish");
            }
        }
    }
  caml_trainer_free (trainer);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  return ok;
}

static gboolean
write_tables (const char *dir, const CellResult *results, int n_cells, GError **error)
{
  GString *summary = g_string_new ("cell,runs,train_loss_mean,train_loss_std,test_loss_mean,"
                                   "test_loss_std,test_error_mean,test_error_std\n");
  GString *runs = g_string_new ("cell,seed,train_loss,test_loss,test_error,"
                                "p_i_am_very_happy,p_you_look_angry\n");
  for (int c = 0; c < n_cells; c++)
    {
      const CellResult *cell = &results[c];
      double m[3], s[3];
      mean_std (cell->runs, cell->n_runs, G_STRUCT_OFFSET (RunResult, train_loss), &m[0], &s[0]);
      mean_std (cell->runs, cell->n_runs, G_STRUCT_OFFSET (RunResult, test_loss), &m[1], &s[1]);
      mean_std (cell->runs, cell->n_runs, G_STRUCT_OFFSET (RunResult, test_error), &m[2], &s[2]);
      g_string_append_printf (summary, "%s,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", cells[c].title,
                              cell->n_runs, m[0], s[0], m[1], s[1], m[2], s[2]);
      for (int i = 0; i < cell->n_runs; i++)
        {
          const RunResult *r = &cell->runs[i];
          g_string_append_printf (runs, "%s,%d,%.6g,%.6g,%.6g,%.6g,%.6g\n", cells[c].title, i,
                                  r->train_loss, r->test_loss, r->test_error, r->p_test[0],
                                  r->p_test[1]);
        }
    }
  g_autofree char *summary_path = g_build_filename (dir, "rnn-sanity.csv", NULL);
  g_autofree char *runs_path = g_build_filename (dir, "rnn-sanity-runs.csv", NULL);
  gboolean ok = g_file_set_contents_full (summary_path, summary->str, (gssize) summary->len,
                                          G_FILE_SET_CONTENTS_CONSISTENT, 0644, error)
                && g_file_set_contents_full (runs_path, runs->str, (gssize) runs->len,
                                             G_FILE_SET_CONTENTS_CONSISTENT, 0644, error);
  g_string_free (summary, TRUE);
  g_string_free (runs, TRUE);
  return ok;
}

/* The files a run writes, which replace an earlier run's. */
static gboolean
is_rnn_sanity_result (const char *name)
{
  static const char *const names[] = {
    "rnn-sanity.csv", "rnn-sanity-runs.csv", "rnn-sanity.png", NULL
  };
  return g_strv_contains (names, name);
}

/* rnn-sanity.png: the mean training and test loss per step (left) and the
 * mean test error (right) — the paper's Fig. 13. One colour per cell in
 * both panels; train solid, test dashed (same_hue: not a baseline's hue). */
static gboolean
write_plot (const char *dir, CellResult *results, int n_cells, int steps, GError **error)
{
  g_autofree double *x = g_new (double, steps);
  for (int s = 0; s < steps; s++)
    x[s] = s + 1;
  CamlPlotSeries loss[2 * N_CELLS], err[N_CELLS];
  char *labels[2 * N_CELLS];
  for (int c = 0; c < n_cells; c++)
    {
      CellResult *cell = &results[c];
      for (int s = 0; s < steps; s++)
        {
          cell->train_curve[s] /= cell->n_runs;
          cell->test_curve[s] /= cell->n_runs;
          cell->error_curve[s] /= cell->n_runs;
        }
      labels[2 * c] = g_strdup_printf ("%s train", cells[c].title);
      labels[2 * c + 1] = g_strdup_printf ("%s test", cells[c].title);
      loss[2 * c] = (CamlPlotSeries) { x, cell->train_curve, steps, labels[2 * c], c, FALSE };
      loss[2 * c + 1] = (CamlPlotSeries) { x, cell->test_curve, steps, labels[2 * c + 1], c,
                                           TRUE, TRUE };
      err[c] = (CamlPlotSeries) { x, cell->error_curve, steps, labels[2 * c + 1], c, TRUE, TRUE };
    }
  CamlPlotLineOptions loss_opts = {
    .title = "mean loss over runs (train solid, test dashed)", .x_label = "step",
    .y_label = "loss",
    .log_y = TRUE, .legend = TRUE, .grid = TRUE,
  };
  CamlPlotLineOptions err_opts = {
    .title = "mean test error over runs", .x_label = "step",
    .y_label = "test error",
    .legend = TRUE, .grid = TRUE,
  };
  g_autoptr (CamlPlotLine) loss_plot = caml_plot_line_new (&loss_opts, loss, 2 * n_cells,
                                                           NULL, 0);
  g_autoptr (CamlPlotLine) err_plot = caml_plot_line_new (&err_opts, err, n_cells, NULL, 0);
  for (int i = 0; i < 2 * n_cells; i++)
    g_free (labels[i]);
  CamlPlotPanelCell panel_cells[] = {
    { caml_plot_line_draw_cb, loss_plot },
    { caml_plot_line_draw_cb, err_plot },
  };
  CamlPlotPanel panel = { "RNN sanity test (Fig. 13)", panel_cells, 2, 2 };
  g_autofree char *path = g_build_filename (dir, "rnn-sanity.png", NULL);
  return caml_plot_write_png (path, 1120, 500, caml_plot_panel_draw_cb, &panel, error);
}

/* "KEY=VALUE" without a layer index "N." (or without "="). */
static gboolean
plain_key (const char *assignment)
{
  size_t key = strcspn (assignment, "=");
  const char *dot = memchr (assignment, '.', key);
  return dot == NULL;
}

/* Whether some layer of exp has the option an -O assignment sets; an
 * assignment with a layer index, or without "=", counts as known (applying
 * it reports what is wrong). */
static gboolean
layer_option_known (const CamlExperiment *exp, const char *assignment)
{
  if (!plain_key (assignment) || strchr (assignment, '=') == NULL)
    return TRUE;
  g_autofree char *key = g_strndup (assignment, strcspn (assignment, "="));
  for (int i = 0; i < exp->n_layers; i++)
    if (caml_layer_ops_option_index (exp->layers[i].ops, key) >= 0)
      return TRUE;
  return FALSE;
}

int
caml_cli_rnn_sanity (int argc, char **argv)
{
  g_autofree char *out_dir = NULL;
  g_autofree char *optimizer = NULL;
  g_auto (GStrv) layer_options = NULL;
  int runs = 10, steps = 100, units = G_MININT;   /* G_MININT: the presets' */
  g_autofree char *lr_text = NULL;   /* unset: the presets' */
  const GOptionEntry entries[] = {
    { "runs", 'r', 0, G_OPTION_ARG_INT, &runs, "Runs per cell, seeds 0 … N − 1 (default 10)",
      "N" },
    { "steps", 'n', 0, G_OPTION_ARG_INT, &steps, "Full-batch training steps (default 100)",
      "N" },
    { "units", 'u', 0, G_OPTION_ARG_INT, &units,
      "Width of every cell (default: the presets', 8)", "N" },
    { "optimizer", 0, 0, G_OPTION_ARG_STRING, &optimizer,
      "sgd, adagrad or adam, with its default settings (default: the presets', adam)",
      "NAME" },
    { "lr", 0, 0, G_OPTION_ARG_STRING, &lr_text, "Learning rate (default: the presets', 0.01)",
      "RATE" },
    { "layer-option", 'O', 0, G_OPTION_ARG_STRING_ARRAY, &layer_options,
      "Set a layer option in all three models, as in `caml train` (e.g. -O emit=output, "
      "-O dim=16), or in those of the three that have it (-O peephole_init=0: CA-RNN's); "
      "repeatable", "[N.]KEY=VALUE" },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "Directory for the results (default: runs/rnn-sanity)", "DIR" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- the paper's CA-RNN sanity test (Fig. 13)");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Trains the presets rnn-sanity-ca-rnn, rnn-sanity-lstm and rnn-sanity-gru —\n"
    "token ids → embedding → the cell → its last cell state → logistic\n"
    "regression, as the paper describes — on {I am happy} → 1 and {You are very\n"
    "angry} → 0, full batch, once per seed 0 … N − 1 with the same embedding\n"
    "width, units, optimizer and steps for the three. Then it tests on\n"
    "{I am very happy} → 1 and {You look angry} → 0 (\"look\" is out of the\n"
    "vocabulary; the prediction is 1 when the logistic output exceeds 0.5).\n"
    "\n"
    "Prints, per cell, the mean ± sample standard deviation over the runs of the\n"
    "final training loss, test loss and test error (the fraction of the two test\n"
    "sentences misclassified; one run has no deviation: –, nan in the CSV), and\n"
    "writes into DIR:\n"
    "  rnn-sanity.csv       that table\n"
    "  rnn-sanity-runs.csv  every run: losses, error and the probability given\n"
    "                       to each test sentence\n"
    "  rnn-sanity.png       mean training/test loss and test error per step");
  g_autoptr (GError) error = NULL;
  if (!caml_cli_parse_options (ctx, entries, &argc, &argv, &error))
    {
      g_printerr ("caml rnn-sanity: %s\n", error->message);
      return 2;
    }
  double lr = NAN;
  if (lr_text != NULL)
    {
      char *end = NULL;
      lr = g_ascii_strtod (lr_text, &end);
      if (end == lr_text || *end != '\0' || !isfinite (lr))
        lr = -1;   /* refused below */
    }
  int optimizer_kind = -1;
  for (int k = 0; optimizer != NULL && caml_optimizer_names[k] != NULL; k++)
    if (g_str_equal (optimizer, caml_optimizer_names[k]))
      optimizer_kind = k;
  /* Each bad option says what it is and what it takes. */
  g_autofree char *usage = NULL;
  if (argc > 1)
    usage = g_strdup_printf ("unexpected argument \"%s\" (rnn-sanity takes options only)",
                             argv[1]);
  else if (runs < 1 || runs > 10000)
    usage = g_strdup_printf ("--runs %d: expected a whole number in 1…10000", runs);
  else if (steps < 1 || steps > 1000000)
    usage = g_strdup_printf ("--steps %d: expected a whole number in 1…1000000", steps);
  else if (units != G_MININT && (units < 1 || units > 4096))
    usage = g_strdup_printf ("--units %d: expected a whole number in 1…4096", units);
  else if (!(isnan (lr) || (lr > 0 && lr < 1e3)))
    usage = g_strdup_printf ("--lr %s: expected a number in (0, 1000)", lr_text);
  else if (optimizer != NULL && optimizer_kind < 0)
    usage = g_strdup_printf ("--optimizer %s: expected sgd, adagrad or adam", optimizer);
  if (usage != NULL)
    {
      g_printerr ("caml rnn-sanity: %s\n", usage);
      return 2;
    }

  /* Every cell's experiment, checked before anything trains. */
  CamlExperiment *exps[N_CELLS] = { NULL };
  g_autofree gboolean *taken = g_new0 (gboolean, layer_options != NULL
                                                    ? g_strv_length (layer_options) + 1 : 1);
  int status = 0;
  for (gsize c = 0; c < N_CELLS && status == 0; c++)
    {
      exps[c] = caml_presets_load (cells[c].preset, &error);
      if (exps[c] == NULL)
        status = 1;
      else
        {
          exps[c]->steps = steps;
          exps[c]->eval_every = 1;
          if (optimizer_kind >= 0)
            {
              double keep_lr = exps[c]->optimizer.lr;
              caml_optimizer_config_defaults (&exps[c]->optimizer, optimizer_kind);
              exps[c]->optimizer.lr = keep_lr;
            }
          if (!isnan (lr))
            exps[c]->optimizer.lr = lr;
          g_autoptr (GArray) list = g_array_new (FALSE, FALSE, sizeof (CamlAssignment));
          caml_assignments_add_options (list, layer_options);
          /* A plain KEY that only some cells have (peephole_init is the
           * CA-RNN's) goes to those; one that none has is an error below. */
          for (guint i = list->len; i-- > 0;)
            {
              const char *text = g_array_index (list, CamlAssignment, i).assignment;
              if (layer_option_known (exps[c], text))
                taken[i] = TRUE;
              else if (plain_key (text))
                g_array_remove_index (list, i);
            }
          g_autofree char *width = g_strdup_printf ("1.units=%d", units);
          g_autofree char *given = g_strdup_printf ("--units %d", units);
          CamlAssignment a = { width, given };
          if (units != G_MININT)
            g_array_append_val (list, a);
          if (!caml_experiment_assign (exps[c], (CamlAssignment *) list->data, (int) list->len,
                                       &error))
            status = 2;
        }
    }
  for (int i = 0; status == 0 && layer_options != NULL && layer_options[i] != NULL; i++)
    if (!taken[i])
      {
        g_autofree char *key = g_strndup (layer_options[i], strcspn (layer_options[i], "="));
        g_set_error (&error, CAML_ERROR, CAML_ERROR_INVALID,
                     "-O %s: none of CA-RNN, LSTM and GRU has a layer option \"%s\"",
                     layer_options[i], key);
        status = 2;
      }
  if (status != 0)
    {
      g_printerr ("caml rnn-sanity: %s\n", error->message);
      for (gsize c = 0; c < N_CELLS; c++)
        caml_experiment_free (exps[c]);
      return status;
    }
  /* Made only once the options are known to be good. */
  if (out_dir == NULL)
    out_dir = g_strdup ("runs/rnn-sanity");
  /* made for out_dir: removed again if nothing is written */
  g_autoptr (GPtrArray) made_dirs = caml_cli_make_dirs (out_dir);
  if (!caml_cli_ensure_dir (out_dir, &error))
    {
      g_printerr ("caml rnn-sanity: %s\n", error->message);
      caml_cli_remove_made_dirs (made_dirs);
      for (gsize c = 0; c < N_CELLS; c++)
        caml_experiment_free (exps[c]);
      return 1;
    }

  const CamlExperiment *first = exps[0];
  int emit = caml_layer_ops_option_index (first->layers[1].ops, "emit");
  g_print ("%d run%s per cell, %d full-batch step%s, %s lr %g; embedding %g → cell %g "
           "(emit %s) → dense 1 → sigmoid cross-entropy\n", runs, runs == 1 ? "" : "s",
           steps, steps == 1 ? "" : "s",
           caml_optimizer_names[first->optimizer.kind], first->optimizer.lr,
           first->layers[0].opt[0], first->layers[1].opt[0],
           first->layers[1].ops->options[emit].choices[(int) first->layers[1].opt[emit]]);

  CellResult results[N_CELLS] = { { 0 } };
  for (gsize c = 0; c < N_CELLS && status == 0; c++)
    {
      CellResult *cell = &results[c];
      cell->runs = g_new0 (RunResult, runs);
      cell->train_curve = g_new0 (double, steps);
      cell->test_curve = g_new0 (double, steps);
      cell->error_curve = g_new0 (double, steps);
      for (int seed = 0; seed < runs; seed++)
        {
          exps[c]->seed = (guint64) seed;
          if (!run_one (exps[c], &cell->runs[seed], cell, &error))
            {
              g_printerr ("caml rnn-sanity: %s, seed %d: %s\n", cells[c].title, seed,
                          error->message);
              status = 1;
              break;
            }
          cell->n_runs++;
        }
    }

  if (status == 0)
    {
      g_print ("\n%-8s %5s  %-21s  %-21s  %-17s  %s\n", "cell", "runs", "train loss",
               "test loss", "test error", "right: very happy / look angry");
      for (gsize c = 0; c < N_CELLS; c++)
        {
          const CellResult *cell = &results[c];
          double m[3], s[3];
          mean_std (cell->runs, cell->n_runs, G_STRUCT_OFFSET (RunResult, train_loss), &m[0],
                    &s[0]);
          mean_std (cell->runs, cell->n_runs, G_STRUCT_OFFSET (RunResult, test_loss), &m[1],
                    &s[1]);
          mean_std (cell->runs, cell->n_runs, G_STRUCT_OFFSET (RunResult, test_error), &m[2],
                    &s[2]);
          int right[2] = { 0, 0 };
          for (int i = 0; i < cell->n_runs; i++)
            {
              right[0] += cell->runs[i].p_test[0] > 0.5;
              right[1] += cell->runs[i].p_test[1] <= 0.5;
            }
          /* one run has no spread: a dash (one column of three bytes) */
          char sd[3][32];
          static const int width[3] = { 9, 9, 6 };
          for (int k = 0; k < 3; k++)
            if (isnan (s[k]))
              g_snprintf (sd[k], sizeof sd[k], "%-*s", width[k] + 2, "–");
            else
              g_snprintf (sd[k], sizeof sd[k], k < 2 ? "%-*.3g" : "%-*.3f", width[k], s[k]);
          g_print ("%-8s %5d  %9.4g ± %s  %9.4g ± %s  %6.3f ± %s  %d/%d  %d/%d\n",
                   cells[c].title, cell->n_runs, m[0], sd[0], m[1], sd[1], m[2], sd[2],
                   right[0], cell->n_runs, right[1], cell->n_runs);
        }
      /* all or nothing: an earlier run's files stay as they were if one fails */
      g_autoptr (CamlResultsDir) written = caml_results_dir_new (out_dir, &error);
      if (written == NULL || !write_tables (written->dir, results, N_CELLS, &error)
          || !write_plot (written->dir, results, N_CELLS, steps, &error)
          || !caml_results_dir_commit (written, is_rnn_sanity_result, &error))
        {
          g_printerr ("caml rnn-sanity: %s\n", error->message);
          if (written != NULL)
            g_printerr ("caml rnn-sanity: nothing written: %s/ keeps what it held\n", out_dir);
          status = 1;
        }
      else
        g_print ("\nresults in %s/ (rnn-sanity.csv, rnn-sanity-runs.csv, rnn-sanity.png)\n",
                 out_dir);
    }

  for (gsize c = 0; c < N_CELLS; c++)
    {
      g_free (results[c].runs);
      g_free (results[c].train_curve);
      g_free (results[c].test_curve);
      g_free (results[c].error_curve);
      caml_experiment_free (exps[c]);
    }
  if (status != 0)
    caml_cli_remove_made_dirs (made_dirs);
  return status;
}
