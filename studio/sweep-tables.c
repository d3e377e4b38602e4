/* sweep-tables.c — a sweep's results read back from its runs, and its
 * tables and figures: sweep.csv, sweep.md, sweep.png (Fig. 17),
 * sweep-parallel.png (sweep-parallel.c) and sweep.json (sweep.h). */
#include <math.h>
#include <signal.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "sweep-private.h"

/* ------------------------------------------------------------ results */

void
caml_sweep_plan_result_init (const CamlSweepPlan *plan, int run, CamlSweepResult *r)
{
  memset (r, 0, sizeof *r);
  caml_sweep_plan_run_of (plan, run, r->index, &r->baseline);
  r->plain = !caml_sweep_plan_has_context_aware (plan);
  r->metric = r->test_loss = r->sigma_auc = r->seconds = r->steps_per_second = NAN;
  r->classification = plan->exp->loss == CAML_LOSS_SOFTMAX_XENT;
}

static double
member_double (JsonObject *obj, const char *key)
{
  if (!json_object_has_member (obj, key))
    return NAN;
  JsonNode *node = json_object_get_member (obj, key);
  return JSON_NODE_HOLDS_VALUE (node) ? json_node_get_double (node) : NAN;
}

/* A run on a classification data set (softmax or sigmoid loss) wrote
 * test_accuracy, any other test_mse: r->classification says which it found.
 * A run that failed while training wrote its error there too. */
gboolean
caml_sweep_result_read (CamlSweepResult *r, const char *dir)
{
  g_autofree char *path = g_build_filename (dir, "summary.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  r->metric = r->test_loss = r->sigma_auc = r->seconds = r->steps_per_second = NAN;
  r->summary = json_parser_load_from_file (parser, path, NULL)
               && JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser));
  if (!r->summary)
    return FALSE;
  JsonObject *obj = json_node_get_object (json_parser_get_root (parser));
  r->classification = json_object_has_member (obj, "test_accuracy");
  r->metric = member_double (obj, r->classification ? "test_accuracy" : "test_mse");
  r->test_loss = member_double (obj, "test_loss");
  r->sigma_auc = member_double (obj, "sigma_auc");
  r->seconds = member_double (obj, "seconds");
  r->steps_per_second = member_double (obj, "steps_per_second");
  JsonNode *error = json_object_get_member (obj, "error");
  if (r->error == NULL && error != NULL && JSON_NODE_HOLDS_VALUE (error)
      && json_node_get_value_type (error) == G_TYPE_STRING)
    r->error = g_strdup (json_node_get_string (error));
  return TRUE;
}

void
caml_sweep_result_clear (CamlSweepResult *r)
{
  g_clear_pointer (&r->error, g_free);
}

const char *
caml_sweep_status_name (int status)
{
  return status == 0 ? "ok"
         : status == 128 + SIGINT || status == 128 + SIGTERM ? "interrupted" : "failed";
}

const char *
caml_sweep_result_model (const CamlSweepResult *r)
{
  return r->baseline ? "baseline" : r->plain ? "plain" : "context-aware";
}

/* 4 significant digits, as small metrics differ in them (0.000124 and
 * 0.000205 were both 0.0001 with %.4f, an XOR's MSE 0.0000). */
char *
caml_sweep_format_figure (double v)
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

/* What the metric is: what the runs' summaries said (the last one read),
 * else what the plan's loss suggests. */
static gboolean
is_classification (const CamlSweepPlan *plan, const CamlSweepResult *results, int n)
{
  gboolean classification = plan->exp->loss == CAML_LOSS_SOFTMAX_XENT;
  for (int i = 0; i < n; i++)
    if (results[i].done && results[i].summary)
      classification = results[i].classification;
  return classification;
}

/* ------------------------------------------------------------ the figure */

/* The metric against the first axis' values, one colour per value of the
 * second axis, context-aware solid, baseline dashed; runs that did not
 * finish are left out. Numbers go on a numeric axis; any other values
 * (score=bahdanau,luong) are categories, evenly spaced in the order given
 * and labelled with themselves. */
CamlPlotLine *
caml_sweep_plot_new (const CamlSweepPlan *plan, const CamlSweepResult *results, int n)
{
  const CamlSweepAxis *x_axis = &plan->axes[0];
  int n_axes = plan->n_axes;
  const char *metric = is_classification (plan, results, n) ? "test_accuracy" : "test_mse";
  int n_lines = n_axes > 1 ? plan->axes[1].n_values : 1;
  gboolean plain = !caml_sweep_plan_has_context_aware (plan);
  g_autofree double *xs = g_new (double, x_axis->n_values);
  gboolean numeric = caml_plot_parse_numbers ((const char *const *) x_axis->values,
                                              x_axis->n_values, xs);
  if (!numeric)
    for (int i = 0; i < x_axis->n_values; i++)
      xs[i] = i;
  g_autoptr (GPtrArray) owned = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) series = g_array_new (FALSE, TRUE, sizeof (CamlPlotSeries));
  for (int line = 0; line < n_lines; line++)
    for (int base = 0; base <= 1; base++)
      {
        double *ys = g_new (double, x_axis->n_values);
        gboolean any = FALSE;
        for (int i = 0; i < x_axis->n_values; i++)
          {
            ys[i] = NAN;
            for (int r = 0; r < n; r++)
              if (results[r].done && results[r].index[0] == i && results[r].baseline == base
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
        char *label = n_axes > 1
                      ? g_strdup_printf ("%s %s=%s", base ? "baseline" : plain ? "plain" : "CA",
                                         plan->axes[1].key, plan->axes[1].values[line])
                      : g_strdup (base ? "baseline" : plain ? "plain" : "context-aware");
        g_ptr_array_add (owned, ys);
        g_ptr_array_add (owned, label);
        CamlPlotSeries s = { xs, ys, x_axis->n_values, label, line, base };
        g_array_append_val (series, s);
      }
  g_autofree char *title = g_strdup_printf ("%s: %s by %s",
                                            plan->exp->name ? plan->exp->name : "experiment",
                                            metric, x_axis->key);
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
      for (int r = 0; r < n && first == NULL; r++)
        first = results[r].done ? results[r].error : NULL;
      note = first != NULL ? g_strdup_printf ("no run succeeded; the first error: %s", first)
                           : g_strdup ("no run finished");
    }
  /* errors that span decades (a rate too high beside good ones) on a log
   * axis, else the good ones lie flat at the bottom */
  double low = INFINITY, high = 0.0;
  for (int r = 0; r < n; r++)
    if (results[r].done && results[r].status == 0 && isfinite (results[r].metric))
      {
        low = MIN (low, results[r].metric);
        high = MAX (high, results[r].metric);
      }
  gboolean log_y = g_str_equal (metric, "test_mse") && low > 0 && high > 20 * low;
  CamlPlotLineOptions opts = {
    .title = title, .x_label = x_axis->key, .y_label = metric, .log_y = log_y,
    .legend = TRUE, .grid = TRUE,
    .x_categories = numeric ? NULL : (const char *const *) x_axis->values,
    .n_x_categories = numeric ? 0 : x_axis->n_values,
    .x_min = numeric ? lo : 0, .x_max = numeric ? hi : 0, .integer_x = whole,
    .note = note,
  };
  return caml_plot_line_new (&opts, (CamlPlotSeries *) series->data, series->len, NULL, 0);
}

/* ------------------------------------------------------------ the tables */

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

gboolean
caml_sweep_write_tables (const CamlSweepPlan *plan, const CamlSweepResult *results, int n,
                         const char *dir, GError **error)
{
  const char *metric = is_classification (plan, results, n) ? "test_accuracy" : "test_mse";
  /* steps_per_second when a run's summary gave it */
  gboolean speed = FALSE;
  for (int i = 0; i < n; i++)
    speed |= results[i].done && !isnan (results[i].steps_per_second);
  GString *csv = g_string_new (NULL);
  GString *md = g_string_new (NULL);
  for (int a = 0; a < plan->n_axes; a++)
    {
      g_string_append_printf (csv, "%s,", plan->axes[a].key);
      g_string_append_printf (md, "| %s ", plan->axes[a].key);
    }
  g_string_append_printf (csv, "model,%s,test_loss,sigma_auc,seconds,%sstatus,error\n", metric,
                          speed ? "steps_per_second," : "");
  g_string_append_printf (md, "| model | %s | test_loss | sigma_auc | seconds |%s status |\n",
                          metric, speed ? " steps_per_second |" : "");
  for (int a = 0; a < plan->n_axes + 6 + speed; a++)
    g_string_append (md, "|---");
  g_string_append (md, "|\n");
  for (int i = 0; i < n; i++)
    {
      const CamlSweepResult *r = &results[i];
      if (!r->done)
        continue;
      for (int a = 0; a < plan->n_axes; a++)
        {
          g_string_append_printf (csv, "%s,", plan->axes[a].values[r->index[a]]);
          g_string_append_printf (md, "| %s ", plan->axes[a].values[r->index[a]]);
        }
      const char *model = caml_sweep_result_model (r);
      const char *status = caml_sweep_status_name (r->status);
      g_string_append_printf (csv, "%s,%.6g,%.6g,%.6g,%.6g,", model, r->metric, r->test_loss,
                              r->sigma_auc, r->seconds);
      if (speed)
        g_string_append_printf (csv, "%.6g,", r->steps_per_second);
      g_string_append_printf (csv, "%s,", status);
      append_csv_field (csv, r->error ? r->error : "");
      g_string_append_c (csv, '\n');
      g_autofree char *metric_text = caml_sweep_format_figure (r->metric);
      g_autofree char *loss_text = caml_sweep_format_figure (r->test_loss);
      g_autofree char *auc = caml_sweep_format_figure (r->sigma_auc);
      g_autofree char *seconds = format_seconds (r->seconds);
      g_autofree char *rate = speed ? caml_sweep_format_figure (r->steps_per_second) : NULL;
      g_string_append_printf (md, "| %s | %s | %s | %s | %s |%s%s%s %s", model, metric_text,
                              loss_text, auc, seconds, speed ? " " : "", speed ? rate : "",
                              speed ? " |" : "", status);
      if (r->error)
        {
          g_string_append (md, ": ");
          append_md_cell (md, r->error);
        }
      g_string_append (md, " |\n");
    }
  g_autofree char *csv_path = g_build_filename (dir, "sweep.csv", NULL);
  g_autofree char *md_path = g_build_filename (dir, "sweep.md", NULL);
  g_autofree char *json_path = g_build_filename (dir, "sweep.json", NULL);
  gboolean ok = caml_file_replace (csv_path, csv->str, csv->len, error)
                && caml_file_replace (md_path, md->str, md->len, error)
                && caml_sweep_plan_save (plan, json_path, error);
  g_string_free (csv, TRUE);
  g_string_free (md, TRUE);
  if (!ok)
    return FALSE;
  g_autoptr (CamlPlotLine) plot = caml_sweep_plot_new (plan, results, n);
  g_autofree char *png = g_build_filename (dir, "sweep.png", NULL);
  g_autofree char *parallel = g_build_filename (dir, "sweep-parallel.png", NULL);
  return caml_plot_write_png (png, 900, 560, caml_plot_line_draw_cb, plot, error)
         && caml_sweep_write_parallel (plan, results, n, parallel, error);
}

gboolean
caml_sweep_is_table_name (const char *name)
{
  static const char *const names[] = { "sweep.csv", "sweep.md", "sweep.png",
                                       "sweep-parallel.png", "sweep.json", NULL };
  return g_strv_contains (names, name);
}
