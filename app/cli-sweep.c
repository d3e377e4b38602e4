/* cli-sweep.c — `caml sweep`: train a grid of layer-option values, each
 * with its matched baseline, and tabulate and plot the results (Fig. 17). */
#include <math.h>
#include <stdio.h>
#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "caml.h"
#include "caml-plot.h"
#include "cli.h"
#include "cli-common.h"
#include "cli-mpi.h"
#include "results-dir.h"

typedef struct {
  char  *key;
  char **values;
  int    n_values;
} Axis;

typedef struct {
  int    index[2];      /* value index along each axis */
  gboolean baseline;
  gboolean plain;       /* the model has no context-aware layer (and no baseline) */
  double metric;        /* test accuracy or test MSE */
  double test_loss;
  double sigma_auc;     /* NAN when the model has no σ-map */
  double seconds;
  int    status;        /* the run's exit status: 0 finished, 130 or 143 interrupted
                         * (SIGINT, SIGTERM: caml_cli_interrupted) */
  char  *error;         /* owned: why a run failed, or NULL */
  int    classification; /* what its summary.json had: 1 test_accuracy, 0
                          * test_mse, -1 none */
  gboolean done;        /* trained, or tried (a row of the tables) */
} Result;

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

static gboolean
parse_axis (const char *text, Axis *axis, GError **error)
{
  const char *eq = strchr (text, '=');
  if (eq == NULL || eq == text || eq[1] == '\0')
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "--grid %s: expected KEY=V1,V2,…", text);
      return FALSE;
    }
  axis->key = g_strndup (text, eq - text);
  axis->values = g_strsplit (eq + 1, ",", -1);
  axis->n_values = (int) g_strv_length (axis->values);
  return TRUE;
}

/* The option of an axis key and its layer: "N.KEY" → N, "KEY" → -1 (every
 * layer that has it). A prefix that is no index stays in *option, for
 * caml_cli_apply_layer_options to reject. */
static void
split_key (const char *key, int *layer, const char **option)
{
  const char *dot = strchr (key, '.');
  guint64 index;
  *layer = -1;
  *option = key;
  if (dot == NULL)
    return;
  g_autofree char *prefix = g_strndup (key, dot - key);
  if (g_ascii_string_to_unsigned (prefix, 10, 0, G_MAXINT, &index, NULL))
    {
      *layer = (int) index;
      *option = dot + 1;
    }
}

/* The -O list and a grid point (assign[a] = "KEY=VALUE" for axis a, given
 * as --grid grids[a]) on exp, together. */
static gboolean
apply_point (CamlExperiment *exp, char **layer_options, char **assign, char **grids,
             int n_axes, GError **error)
{
  g_autoptr (GArray) list = g_array_new (FALSE, FALSE, sizeof (CamlAssignment));
  caml_assignments_add_options (list, layer_options);
  char *given[2] = { NULL, NULL };
  for (int a = 0; a < n_axes; a++)
    {
      given[a] = g_strconcat ("--grid ", grids[a], NULL);
      CamlAssignment point = { assign[a], given[a] };
      g_array_append_val (list, point);
    }
  gboolean ok = caml_experiment_assign (exp, (CamlAssignment *) list->data, (int) list->len,
                                        error);
  for (int a = 0; a < n_axes; a++)
    g_free (given[a]);
  return ok;
}

/* Every run sets each axis' value in turn, so two axes that reach the same
 * option of the same layer would leave the last one's value while the runs
 * are labelled with both; and a value given twice would train the same run
 * twice into one directory. */
static gboolean
check_axes (char **grids, const Axis *axes, int n_axes, GError **error)
{
  for (int a = 0; a < n_axes; a++)
    for (int v = 0; v < axes[a].n_values; v++)
      for (int w = 0; w < v; w++)
        if (g_str_equal (axes[a].values[v], axes[a].values[w]))
          {
            g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                         "--grid %s: the value %s is given twice", grids[a], axes[a].values[v]);
            return FALSE;
          }
  if (n_axes < 2)
    return TRUE;
  int layer[2];
  const char *option[2];
  for (int a = 0; a < 2; a++)
    split_key (axes[a].key, &layer[a], &option[a]);
  if (!g_str_equal (option[0], option[1])
      || (layer[0] >= 0 && layer[1] >= 0 && layer[0] != layer[1]))
    return TRUE;
  g_autofree char *which = layer[0] < 0 && layer[1] < 0
                           ? g_strdup (option[0])
                           : g_strdup_printf ("%s of layer %d", option[0], MAX (layer[0], layer[1]));
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
               "--grid %s and --grid %s both set %s: give each option once, with all its "
               "values in one --grid KEY=V1,V2,…", grids[0], grids[1], which);
  return FALSE;
}

/* For an axis whose key names no layer and reaches several ("units" sets
 * the readout's too): a hint for the runs that fail, else NULL. g_free it. */
static char *
every_layer_hint (const CamlExperiment *exp, const Axis *axis)
{
  int layer;
  const char *option;
  split_key (axis->key, &layer, &option);
  if (layer >= 0)
    return NULL;
  GString *layers = g_string_new (NULL);
  int n = 0, first = -1;
  for (int i = 0; i < exp->n_layers; i++)
    if (caml_layer_ops_option_index (exp->layers[i].ops, option) >= 0)
      {
        g_string_append_printf (layers, "%s%d (%s)", n == 0 ? "" : " and ", i,
                                exp->layers[i].ops->name);
        first = n++ == 0 ? i : first;
      }
  g_autofree char *values = g_strjoinv (",", axis->values);
  char *hint = n < 2 ? NULL
               : g_strdup_printf ("--grid %s sets %s on layers %s alike; to vary one "
                                  "layer's, give its index: --grid %d.%s=%s",
                                  axis->key, option, layers->str, first, option, values);
  g_string_free (layers, TRUE);
  return hint;
}

static double
member_double (JsonObject *obj, const char *key)
{
  if (!json_object_has_member (obj, key))
    return NAN;
  JsonNode *node = json_object_get_member (obj, key);
  return JSON_NODE_HOLDS_VALUE (node) ? json_node_get_double (node) : NAN;
}

/* Reads the figures of one run back from its summary.json. A run on a
 * classification data set (softmax or sigmoid loss) wrote test_accuracy,
 * any other test_mse: *classification says which it found. A run that
 * failed while training wrote its error there too. */
static void
read_summary (const char *dir, Result *r)
{
  g_autofree char *path = g_build_filename (dir, "summary.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  r->metric = r->test_loss = r->sigma_auc = r->seconds = NAN;
  r->classification = -1;
  if (!json_parser_load_from_file (parser, path, NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return;
  JsonObject *obj = json_node_get_object (json_parser_get_root (parser));
  r->classification = json_object_has_member (obj, "test_accuracy");
  r->metric = member_double (obj, r->classification ? "test_accuracy" : "test_mse");
  r->test_loss = member_double (obj, "test_loss");
  r->sigma_auc = member_double (obj, "sigma_auc");
  r->seconds = member_double (obj, "seconds");
  JsonNode *error = json_object_get_member (obj, "error");
  if (r->error == NULL && error != NULL && JSON_NODE_HOLDS_VALUE (error)
      && json_node_get_value_type (error) == G_TYPE_STRING)
    r->error = g_strdup (json_node_get_string (error));
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

static const char *
status_name (int status)
{
  return status == 0 ? "ok" : caml_cli_interrupted (status) ? "interrupted" : "failed";
}

/* text as one CSV field: quoted when it holds a comma, a quote or a line
 * break, quotes doubled. */
static void
append_csv_field (GString *csv, const char *text)
{
  if (strpbrk (text, ",\"\r\n") == NULL)
    {
      g_string_append (csv, text);
      return;
    }
  g_string_append_c (csv, '"');
  for (const char *c = text; *c; c++)
    {
      if (*c == '"')
        g_string_append_c (csv, '"');
      g_string_append_c (csv, *c);
    }
  g_string_append_c (csv, '"');
}

/* text in a Markdown table cell: pipes escaped, line breaks as spaces. */
static void
append_md_cell (GString *md, const char *text)
{
  for (const char *c = text; *c; c++)
    {
      if (*c == '|')
        g_string_append (md, "\\|");
      else if (*c == '\n' || *c == '\r')
        g_string_append_c (md, ' ');
      else
        g_string_append_c (md, *c);
    }
}

/* What a row's model column says. */
static const char *
model_name (const Result *r)
{
  return r->baseline ? "baseline" : r->plain ? "plain" : "context-aware";
}

static gboolean
has_context_aware (const CamlExperiment *exp)
{
  for (int i = 0; i < exp->n_layers; i++)
    if (exp->layers[i].ops->context_aware)
      return TRUE;
  return FALSE;
}

/* A figure in sweep.md or on the console: 4 significant digits, as small
 * metrics differ in them (0.000124 and 0.000205 were both 0.0001 with
 * %.4f, an XOR's MSE 0.0000). */
static char *
format_figure (double v)
{
  return isnan (v) ? g_strdup ("–") : g_strdup_printf ("%.4g", v);
}

/* Seconds: 0.2 s was "0" with %.0f; whole seconds from 100 s on. */
static char *
format_seconds (double s)
{
  return isnan (s) ? g_strdup ("–") : s >= 100 ? g_strdup_printf ("%.0f", s)
                                               : g_strdup_printf ("%.3g", s);
}

static char *
run_label (const Axis *axes, int n_axes, const int *index)
{
  GString *s = g_string_new (NULL);
  for (int a = 0; a < n_axes; a++)
    g_string_append_printf (s, "%s%s=%s", a ? "-" : "", axes[a].key,
                            axes[a].values[index[a]]);
  return g_string_free (s, FALSE);
}

static gboolean
write_outputs (const char *out_dir, const Axis *axes, int n_axes, const Result *results,
               int n_results, gboolean classification, const char *name, GError **error)
{
  const char *metric = classification ? "test_accuracy" : "test_mse";
  GString *csv = g_string_new (NULL);
  GString *md = g_string_new (NULL);
  for (int a = 0; a < n_axes; a++)
    {
      g_string_append_printf (csv, "%s,", axes[a].key);
      g_string_append_printf (md, "| %s ", axes[a].key);
    }
  g_string_append_printf (csv, "model,%s,test_loss,sigma_auc,seconds,status,error\n", metric);
  g_string_append_printf (md, "| model | %s | test_loss | sigma_auc | seconds | status |\n",
                          metric);
  for (int a = 0; a < n_axes + 6; a++)
    g_string_append (md, "|---");
  g_string_append (md, "|\n");
  for (int i = 0; i < n_results; i++)
    {
      const Result *r = &results[i];
      for (int a = 0; a < n_axes; a++)
        {
          g_string_append_printf (csv, "%s,", axes[a].values[r->index[a]]);
          g_string_append_printf (md, "| %s ", axes[a].values[r->index[a]]);
        }
      const char *model = model_name (r);
      g_string_append_printf (csv, "%s,%.6g,%.6g,%.6g,%.6g,%s,", model, r->metric, r->test_loss,
                              r->sigma_auc, r->seconds, status_name (r->status));
      append_csv_field (csv, r->error ? r->error : "");
      g_string_append_c (csv, '\n');
      g_autofree char *metric_text = format_figure (r->metric);
      g_autofree char *loss_text = format_figure (r->test_loss);
      g_autofree char *auc = format_figure (r->sigma_auc);
      g_autofree char *seconds = format_seconds (r->seconds);
      g_string_append_printf (md, "| %s | %s | %s | %s | %s | %s", model, metric_text,
                              loss_text, auc, seconds, status_name (r->status));
      if (r->error)
        {
          g_string_append (md, ": ");
          append_md_cell (md, r->error);
        }
      g_string_append (md, " |\n");
    }
  g_autofree char *csv_path = g_build_filename (out_dir, "sweep.csv", NULL);
  g_autofree char *md_path = g_build_filename (out_dir, "sweep.md", NULL);
  gboolean ok = caml_file_replace (csv_path, csv->str, csv->len, error)
                && caml_file_replace (md_path, md->str, md->len, error);
  g_string_free (csv, TRUE);
  g_string_free (md, TRUE);
  if (!ok)
    return FALSE;

  /* Plot: metric against the first axis' values, one colour per value of
   * the second axis, context-aware solid, baseline dashed; runs that did
   * not finish are left out. Numbers go on a numeric axis; any other values
   * (score=bahdanau,luong) are categories, evenly spaced in the order
   * given and labelled with themselves. */
  const Axis *x_axis = &axes[0];
  int n_lines = n_axes > 1 ? axes[1].n_values : 1;
  g_autofree double *xs = g_new (double, x_axis->n_values);
  gboolean numeric = caml_plot_parse_numbers ((const char *const *) x_axis->values,
                                              x_axis->n_values, xs);
  if (!numeric)
    for (int i = 0; i < x_axis->n_values; i++)
      xs[i] = i;
  GPtrArray *owned = g_ptr_array_new_with_free_func (g_free);
  GArray *series = g_array_new (FALSE, TRUE, sizeof (CamlPlotSeries));
  for (int line = 0; line < n_lines; line++)
    for (int base = 0; base <= 1; base++)
      {
        double *ys = g_new (double, x_axis->n_values);
        gboolean any = FALSE;
        for (int i = 0; i < x_axis->n_values; i++)
          {
            ys[i] = NAN;
            for (int r = 0; r < n_results; r++)
              if (results[r].index[0] == i && results[r].baseline == base
                  && (n_axes < 2 || results[r].index[1] == line) && results[r].status == 0)
                {
                  ys[i] = results[r].metric;
                  any = TRUE;
                }
          }
        if (!any)
          {
            g_free (ys);
            continue;
          }
        gboolean plain = n_results > 0 && results[0].plain;
        char *label = n_axes > 1
                      ? g_strdup_printf ("%s %s=%s", base ? "baseline" : plain ? "plain" : "CA",
                                         axes[1].key, axes[1].values[line])
                      : g_strdup (base ? "baseline" : plain ? "plain" : "context-aware");
        g_ptr_array_add (owned, ys);
        g_ptr_array_add (owned, label);
        CamlPlotSeries s = { xs, ys, x_axis->n_values, label, line, base };
        g_array_append_val (series, s);
      }
  g_autofree char *title = g_strdup_printf ("%s: %s by %s", name, metric, x_axis->key);
  /* The axis spans the grid's values, drawn or not (they are whole
   * numbers when every value is). */
  double lo = INFINITY, hi = -INFINITY;
  gboolean whole = numeric;
  for (int i = 0; numeric && i < x_axis->n_values; i++)
    {
      lo = MIN (lo, xs[i]);
      hi = MAX (hi, xs[i]);
      whole &= xs[i] == floor (xs[i]);
    }
  /* Nothing to draw: say why on the empty chart. */
  g_autofree char *note = NULL;
  if (series->len == 0)
    {
      const char *first = NULL;
      for (int r = 0; r < n_results && first == NULL; r++)
        first = results[r].error;
      note = first != NULL ? g_strdup_printf ("no run succeeded; the first error: %s", first)
                           : g_strdup ("no run finished");
    }
  CamlPlotLineOptions opts = {
    .title = title, .x_label = x_axis->key, .y_label = metric,
    .legend = TRUE, .grid = TRUE,
    .x_categories = numeric ? NULL : (const char *const *) x_axis->values,
    .n_x_categories = numeric ? 0 : x_axis->n_values,
    .x_min = numeric ? lo : 0, .x_max = numeric ? hi : 0, .integer_x = whole,
    .note = note,
  };
  g_autoptr (CamlPlotLine) plot = caml_plot_line_new (&opts, (CamlPlotSeries *) series->data,
                                                      series->len, NULL, 0);
  g_autofree char *png = g_build_filename (out_dir, "sweep.png", NULL);
  ok = caml_plot_write_png (png, 900, 560, caml_plot_line_draw_cb, plot, error);
  g_array_free (series, TRUE);
  g_ptr_array_free (owned, TRUE);
  return ok;
}

/* The files a sweep writes beside its runs' directories, which replace an
 * earlier sweep's. */
static gboolean
is_sweep_result (const char *name)
{
  static const char *const names[] = { "sweep.csv", "sweep.md", "sweep.png", NULL };
  return g_strv_contains (names, name);
}

/* A sweep's runs: for each combination of the grid's values (the first
 * axis varying fastest), the context-aware model and then its baseline. */
typedef struct {
  CamlExperiment *given;   /* the experiment as given, before -O */
  char      **layer_options, **grids;
  const Axis *axes;
  int         n_axes;
  const char *out_dir, *preset, *source;
  gboolean    plain;       /* no context-aware layer: no baselines */
  int         per_combo;   /* runs per combination: 1, or 2 with the baseline */
  int         n_combos;
  int         ranks;
  char       *hints[2];    /* every_layer_hint of each axis */
  /* on the first rank, as the runs end (end_run) */
  Result     *results;     /* one per run, in order */
  gboolean    classification, hinted;
  int         n_failed, status;
  GString    *failed;      /* the failed runs' labels */
} Sweep;

static void
run_of (const Sweep *sw, int item, int index[2], gboolean *baseline)
{
  int c = item / sw->per_combo;
  index[0] = c % sw->axes[0].n_values;
  index[1] = sw->n_axes > 1 ? c / sw->axes[0].n_values : 0;
  *baseline = item % sw->per_combo == 1;
}

/* A run is handed out (to a rank). */
static void
begin_run (int item, int rank, gpointer data)
{
  Sweep *sw = data;
  Result r = { .plain = sw->plain };
  run_of (sw, item, r.index, &r.baseline);
  g_autofree char *label = run_label (sw->axes, sw->n_axes, r.index);
  if (sw->ranks > 1)
    g_print ("[%d/%d] %s %s … (rank %d)\n", item / sw->per_combo + 1, sw->n_combos, label,
             model_name (&r), rank);
  else
    g_print ("[%d/%d] %s %s …\n", item / sw->per_combo + 1, sw->n_combos, label,
             model_name (&r));
}

/* Trains one run, on the rank it was handed to, into OUT/<label>/ca or
 * baseline; its figures as (status, metric, test_loss, sigma_auc, seconds,
 * error or "", classification). */
static GBytes *
train_run (int item, gpointer data)
{
  Sweep *sw = data;
  g_autoptr (GError) error = NULL;
  Result r = { .plain = sw->plain };
  run_of (sw, item, r.index, &r.baseline);
  CamlExperiment *run = caml_experiment_copy (sw->given);
  char *assign[2] = { NULL, NULL };
  for (int a = 0; a < sw->n_axes; a++)
    assign[a] = g_strdup_printf ("%s=%s", sw->axes[a].key, sw->axes[a].values[r.index[a]]);
  apply_point (run, sw->layer_options, assign, sw->grids, sw->n_axes, NULL);   /* checked */
  for (int a = 0; a < sw->n_axes; a++)
    g_free (assign[a]);
  CamlExperiment *which = r.baseline ? caml_experiment_make_baseline (run) : run;
  g_autofree char *label = run_label (sw->axes, sw->n_axes, r.index);
  g_autofree char *dir = g_build_filename (sw->out_dir, label, r.baseline ? "baseline" : "ca",
                                           NULL);
  r.classification = -1;
  if (remove_old_summary (dir, &error))
    {
      CamlCliRun how = { .preset = sw->preset, .source = sw->source, .out_dir = dir,
                         .sigma_steps = "last", .quiet = TRUE, .plain = TRUE,
                         .no_notes = TRUE, .alone = TRUE };
      r.status = caml_cli_run_experiment (which, &how, &r.error);
      read_summary (dir, &r);
    }
  else
    {
      r.metric = r.test_loss = r.sigma_auc = r.seconds = NAN;
      r.status = 1;
      r.error = g_strdup (error->message);
      g_printerr ("caml sweep: %s\n", error->message);
    }
  if (r.baseline)
    caml_experiment_free (which);
  caml_experiment_free (run);
  GVariant *v = g_variant_new ("(iddddsi)", r.status, r.metric, r.test_loss, r.sigma_auc,
                               r.seconds, r.error != NULL ? r.error : "", r.classification);
  g_free (r.error);
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
  Result *r = &sw->results[item];
  run_of (sw, item, r->index, &r->baseline);
  r->plain = sw->plain;
  r->done = TRUE;
  const char *error = "";
  g_autoptr (GVariant) v = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE ("(iddddsi)"),
                                                                      bytes, FALSE));
  g_variant_get (v, "(iddddsi)", &r->status, &r->metric, &r->test_loss, &r->sigma_auc,
                 &r->seconds, NULL, &r->classification);
  g_variant_get_child (v, 5, "&s", &error);
  r->error = *error != '\0' ? g_strdup (error) : NULL;
  if (r->classification >= 0)
    sw->classification = r->classification;
  g_autofree char *label = run_label (sw->axes, sw->n_axes, r->index);
  gboolean interrupted = caml_cli_interrupted (r->status);
  /* A run elsewhere could not say its error: its rank is silent. */
  if (rank > 0 && r->error != NULL)
    g_printerr ("caml sweep: %s %s (rank %d): %s\n", label, model_name (r), rank, r->error);
  if (r->status != 0 && !interrupted && r->error == NULL)
    r->error = g_strdup_printf ("exit status %d", r->status);
  for (int a = 0; a < sw->n_axes && r->status != 0 && !interrupted; a++)
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
  g_autofree char *what = sw->ranks > 1 ? g_strdup_printf ("%s %s: ", label, model_name (r))
                                        : g_strdup ("");
  if (r->status == 0)
    {
      g_autofree char *metric = format_figure (r->metric);
      g_print ("        %s%s %s\n", what, sw->classification ? "test_accuracy" : "test_mse",
               metric);
    }
  else
    g_print ("        %s%s\n", what, status_name (r->status));
  if (r->status != 0 && !interrupted)
    {
      sw->n_failed++;
      g_string_append_printf (sw->failed, "%s%s %s", sw->failed->len ? ", " : "", label,
                              model_name (r));
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

int
caml_cli_sweep (int argc, char **argv)
{
  g_autofree char *preset = NULL, *out_dir = NULL, *seed_text = NULL, *steps_text = NULL;
  g_auto (GStrv) grids = NULL, layer_options = NULL, args = NULL;
  gint64 seed = -1, steps = -1;   /* -1: the experiment's */
  gboolean no_baseline = FALSE;
  g_autoptr (CamlResultsDir) written = NULL;   /* sweep.csv, sweep.md, sweep.png */
  const GOptionEntry entries[] = {
    { "preset", 'p', 0, G_OPTION_ARG_STRING, &preset, "Sweep the built-in experiment NAME", "NAME" },
    { "grid", 'g', 0, G_OPTION_ARG_STRING_ARRAY, &grids,
      "A layer option and its values, e.g. --grid kernel=3,5,8 or --grid 0.units=2,5 "
      "(one or two)", "[N.]KEY=V1,V2,…" },
    { "layer-option", 'O', 0, G_OPTION_ARG_STRING_ARRAY, &layer_options,
      "Fixed layer option for every run, as in `caml train`", "KEY=VALUE" },
    /* strings, checked below: an INT64 option cannot tell -1 from "not given" */
    { "seed", 's', 0, G_OPTION_ARG_STRING, &seed_text,
      "Seed of every run, 0…9223372036854775807 (default: the file's)", "N" },
    { "steps", 'n', 0, G_OPTION_ARG_STRING, &steps_text,
      "Training steps of every run, 1…1000000000 (default: the file's)", "N" },
    { "no-baseline", 0, 0, G_OPTION_ARG_NONE, &no_baseline,
      "Do not train the matched baselines", NULL },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "Directory for the results (default: runs/sweep-NAME)", "DIR" },
    /* no arg_description: the context's parameter string names FILE.json */
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args, NULL, NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("(--preset NAME | FILE.json) --grid KEY=V1,V2,… - train a grid of layer options");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Trains the experiment once for every combination of the grid's values,\n"
    "and — unless --no-baseline — its matched baseline, where each\n"
    "context-aware layer is replaced by its plain counterpart (CA-CNN →\n"
    "conv2d, CA-NN → dense) with the same options, seed and data order (a\n"
    "model without a context-aware layer has none; its rows say \"plain\"). Each\n"
    "run's full results go into DIR/<combination>/ca and\n"
    "DIR/<combination>/baseline; DIR/sweep.csv and DIR/sweep.md tabulate test\n"
    "metric, loss, σ-AUC and time, and DIR/sweep.png plots the metric against\n"
    "the first grid key (one line per value of the second; baseline dashed),\n"
    "like the paper's Fig. 17 — words such as score=bahdanau,luong as evenly\n"
    "spaced categories. A run that fails is marked in the status and error\n"
    "columns of sweep.csv (and in sweep.md), left out of the plot (which says\n"
    "so when no run succeeded, with the first error) and counted at the end;\n"
    "the sweep then exits with status 1. Each run's error is printed once, on\n"
    "stderr.\n"
    "\n"
    "A KEY sets the option on every layer that has it — units=2,5 the\n"
    "readout's too —, N.KEY on layer N only (N counts the experiment's\n"
    "\"model\" list from 0): --grid 0.units=2,5. Give each option in one --grid:\n"
    "\n"
    "  caml sweep --preset mnist-ca-cnn --grid kernel=3,5,8 --grid depth=8,16,32\n"
    "  caml sweep --preset fashion-ca-res --grid sublayers=1,2,3 --grid n_v=1,2");
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
  int n_axes = grids ? (int) g_strv_length (grids) : 0;
  if (n_axes < 1 || n_axes > 2)
    {
      g_printerr ("caml sweep: give one or two --grid KEY=V1,V2,…\n");
      return 2;
    }
  g_autofree char *source = NULL;
  CamlExperiment *exp = caml_cli_load_experiment ("sweep", preset, args, &source, &error);
  if (exp == NULL)
    {
      g_printerr ("caml sweep: %s\n", error->message);
      /* several ranks: the others wait to hear that this one cannot start */
      if (caml_cli_mpi_size () > 1)
        caml_cli_mpi_ready (error->message);
      return caml_cli_is_usage_error (error) ? 2 : 1;
    }
  if (seed >= 0)
    exp->seed = (guint64) seed;
  if (steps > 0)
    exp->steps = (int) steps;
  /* Each run applies the -O list and its grid point to the experiment as
   * given, together: a grid option that -O sets too is refused. */
  CamlExperiment *given = caml_experiment_copy (exp);
  if (!caml_cli_apply_layer_options (exp, layer_options,
                                     CAML_CLI_NOT_GIVEN, CAML_CLI_NOT_GIVEN, &error))
    {
      g_printerr ("caml sweep: %s\n", error->message);
      caml_experiment_free (exp);
      caml_experiment_free (given);
      return 2;
    }

  Axis axes[2] = { 0 };
  int status = 0;
  for (int a = 0; a < n_axes; a++)
    if (!parse_axis (grids[a], &axes[a], &error))
      {
        g_printerr ("caml sweep: %s\n", error->message);
        status = 2;
        goto out;
      }
  if (!check_axes (grids, axes, n_axes, &error))
    {
      g_printerr ("caml sweep: %s\n", error->message);
      status = 2;
      goto out;
    }
  /* Check every value before training anything — and that no two values
   * of an axis are one setting written two ways (1 and 01, 0.1 and 1e-1,
   * true and 1), which would train one run twice into one directory. */
  for (int a = 0; a < n_axes; a++)
    {
      g_autoptr (GPtrArray) probes = g_ptr_array_new_with_free_func ((GDestroyNotify) caml_experiment_free);
      for (int v = 0; v < axes[a].n_values; v++)
        {
          CamlExperiment *probe = caml_experiment_copy (given);
          g_ptr_array_add (probes, probe);
          g_autofree char *assign = g_strdup_printf ("%s=%s", axes[a].key, axes[a].values[v]);
          gboolean ok = apply_point (probe, layer_options, &assign, &grids[a], 1, &error);
          for (int w = 0; ok && w < v; w++)
            if (caml_experiment_equal (probe, probes->pdata[w]))
              {
                g_set_error (&error, CAML_ERROR, CAML_ERROR_INVALID,
                             "--grid %s: the values %s and %s are the same setting",
                             grids[a], axes[a].values[w], axes[a].values[v]);
                ok = FALSE;
              }
          if (!ok)
            {
              g_printerr ("caml sweep: %s\n", error->message);
              status = 2;
              goto out;
            }
        }
    }
  if (out_dir == NULL)
    {
      g_autofree char *name = caml_cli_safe_name (exp->name);
      out_dir = g_strdup_printf ("runs/sweep-%s", name);
    }
  /* The tables go there even when every run fails before writing anything
   * (every rank writes its runs there: a shared file system). */
  if (!caml_cli_ensure_dir (out_dir, &error))
    g_printerr ("caml sweep: %s\n", error->message);
  /* every rank sweeps, or none */
  if (!caml_cli_mpi_ready (error != NULL ? error->message : NULL))
    {
      status = 1;
      goto out;
    }

  /* Without a context-aware layer the baseline is the same model: training
   * it again would only repeat the run. */
  gboolean plain = !has_context_aware (exp);
  if (plain && !no_baseline)
    g_print ("%s has no context-aware layer: no baseline runs\n",
             exp->name ? exp->name : "the experiment");
  if (plain)
    no_baseline = TRUE;
  Sweep sw = {
    .given = given, .layer_options = layer_options, .grids = grids, .axes = axes,
    .n_axes = n_axes, .out_dir = out_dir, .preset = preset, .source = source,
    .plain = plain, .per_combo = no_baseline ? 1 : 2,
    .n_combos = axes[0].n_values * (n_axes > 1 ? axes[1].n_values : 1),
    .classification = exp->loss == CAML_LOSS_SOFTMAX_XENT,
    .ranks = caml_cli_mpi_size (),
    .failed = g_string_new (NULL),
  };
  int n_runs = sw.n_combos * sw.per_combo;
  sw.results = g_new0 (Result, n_runs);
  /* Said once, with the first run that fails, and kept with every failed
   * run's error in the tables. */
  for (int a = 0; a < n_axes; a++)
    sw.hints[a] = every_layer_hint (exp, &axes[a]);
  /* The runs go to the ranks as they become free (one rank: in turn). */
  caml_cli_mpi_share (n_runs, begin_run, train_run, end_run, &sw);
  if (sw.status != 0)
    status = sw.status;
  /* the first rank has every run's figures, and writes the tables */
  if (caml_cli_mpi_rank () > 0)
    {
      g_free (sw.results);
      g_string_free (sw.failed, TRUE);
      g_free (sw.hints[0]);
      g_free (sw.hints[1]);
      goto out;
    }
  GArray *results = g_array_new (FALSE, TRUE, sizeof (Result));
  for (int i = 0; i < n_runs; i++)
    if (sw.results[i].done)
      g_array_append_val (results, sw.results[i]);
  gboolean classification = sw.classification;
  int n_failed = sw.n_failed;
  GString *failed = sw.failed;
  g_free (sw.results);

  /* all or nothing: an earlier sweep's tables stay as they were if one fails */
  written = caml_results_dir_new (out_dir, &error);
  if (written == NULL
      || !write_outputs (written->dir, axes, n_axes, (Result *) results->data, results->len,
                         classification, exp->name ? exp->name : "experiment", &error)
      || !caml_results_dir_commit (written, is_sweep_result, &error))
    {
      g_printerr ("caml sweep: %s\n", error->message);
      if (written != NULL)
        g_printerr ("caml sweep: sweep.csv, sweep.md and sweep.png not written: %s/ keeps "
                    "what it held\n", out_dir);
      status = 1;
    }
  else
    g_print ("results in %s/ (sweep.csv, sweep.md, sweep.png, and one directory per run)\n",
             out_dir);
  if (n_failed > 0)
    {
      g_printerr ("caml sweep: %d of %u runs failed (%s): see the status and error columns "
                  "of %s/sweep.csv\n", n_failed, results->len, failed->str, out_dir);
      if (status == 0)
        status = 1;
    }
  for (guint i = 0; i < results->len; i++)
    g_free (g_array_index (results, Result, i).error);
  g_free (sw.hints[0]);
  g_free (sw.hints[1]);
  g_array_free (results, TRUE);
  g_string_free (failed, TRUE);

out:
  for (int a = 0; a < 2; a++)
    {
      g_free (axes[a].key);
      g_strfreev (axes[a].values);
    }
  caml_experiment_free (exp);
  caml_experiment_free (given);
  return status;
}
