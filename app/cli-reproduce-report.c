/* cli-reproduce-report.c — `caml reproduce`'s statistics (mean, sd, the
 * paired t-test), verdicts, and report.md / report.html, built from the
 * experiments' results.json files. */
#include <math.h>
#include <string.h>
#include <glib.h>

#include "caml.h"
#include "caml-plot.h"
#include "cli-reproduce.h"

/* ------------------------------------------------------------ statistics */

void
caml_repro_mean_sd (const double *v, int n, double *mean, double *sd, int *count)
{
  double s = 0, ss = 0;
  int k = 0;
  for (int i = 0; i < n; i++)
    if (isfinite (v[i]))
      {
        s += v[i];
        k++;
      }
  *mean = k > 0 ? s / k : NAN;
  for (int i = 0; i < n; i++)
    if (isfinite (v[i]))
      ss += (v[i] - *mean) * (v[i] - *mean);
  *sd = k > 1 ? sqrt (ss / (k - 1)) : NAN;
  *count = k;
}

/* The continued fraction of the regularized incomplete beta function
 * (modified Lentz), for x < (a + 1) / (a + b + 2). */
static double
beta_fraction (double a, double b, double x)
{
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = fabs (d) < tiny ? tiny : d;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; m++)
    {
      double aa = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
      d = 1 + aa * d;
      d = fabs (d) < tiny ? tiny : d;
      c = 1 + aa / c;
      c = fabs (c) < tiny ? tiny : c;
      d = 1 / d;
      h *= d * c;
      aa = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
      d = 1 + aa * d;
      d = fabs (d) < tiny ? tiny : d;
      c = 1 + aa / c;
      c = fabs (c) < tiny ? tiny : c;
      d = 1 / d;
      double del = d * c;
      h *= del;
      if (fabs (del - 1) < 1e-14)
        break;
    }
  return h;
}

/* I_x(a, b) */
static double
incomplete_beta (double a, double b, double x)
{
  if (x <= 0)
    return 0;
  if (x >= 1)
    return 1;
  double front = exp (lgamma (a + b) - lgamma (a) - lgamma (b) + a * log (x) + b * log1p (-x));
  if (x < (a + 1) / (a + b + 2))
    return front * beta_fraction (a, b, x) / a;
  return 1 - front * beta_fraction (b, a, 1 - x) / b;
}

double
caml_repro_t_two_sided (double t, double df)
{
  if (isnan (t) || df <= 0)
    return NAN;
  if (isinf (t))
    return 0;
  return incomplete_beta (df / 2, 0.5, df / (df + t * t));
}

double
caml_repro_paired_p (const double *d, int n, int *pairs)
{
  double mean, sd;
  caml_repro_mean_sd (d, n, &mean, &sd, pairs);
  if (*pairs < 2)
    return NAN;
  if (sd == 0)
    return mean != 0 ? 0 : 1;
  return caml_repro_t_two_sided (mean / (sd / sqrt (*pairs)), *pairs - 1);
}

/* -------------------------------------------------------------- verdicts */

static gboolean
holds (const CamlReproCondition *c)
{
  if (g_str_equal (c->op, "<"))
    return c->value < c->threshold;
  if (g_str_equal (c->op, "<="))
    return c->value <= c->threshold;
  if (g_str_equal (c->op, ">"))
    return c->value > c->threshold;
  g_assert (g_str_equal (c->op, ">="));
  return c->value >= c->threshold;
}

const char *
caml_repro_verdict (const CamlReproRow *row)
{
  if (row->why != NULL || row->n_conds == 0)
    return CAML_REPRO_NOT_TESTABLE;
  for (int i = 0; i < row->n_conds; i++)
    if (!isfinite (row->conds[i].value))
      return CAML_REPRO_NOT_TESTABLE;
  for (int i = 0; i < row->n_conds; i++)
    if (!holds (&row->conds[i]))
      return CAML_REPRO_NOT_REPRODUCED;
  return CAML_REPRO_REPRODUCED;
}

const char *
caml_repro_op_text (const char *op)
{
  return g_str_equal (op, "<=") ? "≤" : g_str_equal (op, ">=") ? "≥" : op;
}

void
caml_repro_row_clear (CamlReproRow *row)
{
  g_free (row->claim);
  g_free (row->ours);
  g_free (row->rule);
  g_free (row->why);
  for (int i = 0; i < row->n_conds; i++)
    g_free (row->conds[i].what);
  memset (row, 0, sizeof *row);
}

/* ------------------------------------------------------------------ plot */

gboolean
caml_repro_plot_values (const char *path, const char *title, const char *y_label,
                        const char *const *labels, int n_arms, const double *values,
                        int n_seeds, GError **error)
{
  if (n_seeds == 1)
    {
      /* one number a model (a deterministic fit): bars from 0, not a line
       * joining unrelated methods */
      double top = 0;
      for (int a = 0; a < n_arms; a++)
        if (isfinite (values[a]))
          top = MAX (top, values[a]);
      g_autofree char *bars_title = g_strdup_printf ("%s (%s)", title, y_label);
      CamlPlotBarsOptions bars_opts = { bars_title, CAML_PLOT_COLORMAP_VIRIDIS, 0,
                                        top > 0 ? top : 1 };
      g_autoptr (CamlPlotBars) bars = caml_plot_bars_new (&bars_opts, labels, values, n_arms);
      return caml_plot_write_png (path, 760, 70 + 36 * n_arms, caml_plot_bars_draw_cb, bars,
                                  error);
    }
  /* one dotted series a seed (a marker per model), and the means */
  g_autofree double *means = g_new (double, n_arms);
  g_autofree double *xs = g_new (double, n_arms);
  GArray *series = g_array_new (FALSE, TRUE, sizeof (CamlPlotSeries));
  for (int a = 0; a < n_arms; a++)
    {
      double sd;
      int k;
      xs[a] = a;
      caml_repro_mean_sd (&values[a * n_seeds], n_seeds, &means[a], &sd, &k);
    }
  g_autofree double *per_seed = g_new (double, (gsize) n_arms * n_seeds);
  for (int s = 0; s < n_seeds && n_seeds > 1; s++)
    {
      for (int a = 0; a < n_arms; a++)
        per_seed[s * n_arms + a] = values[a * n_seeds + s];
      CamlPlotSeries one = { xs, &per_seed[s * n_arms], n_arms, s == 0 ? "each seed" : NULL,
                             1, TRUE, TRUE };
      g_array_append_val (series, one);
    }
  CamlPlotSeries mean = { xs, means, n_arms, "mean", 0, FALSE, FALSE };
  g_array_append_val (series, mean);
  CamlPlotLineOptions opts = {
    .title = title, .x_label = NULL, .y_label = y_label, .legend = TRUE, .grid = TRUE,
    .x_categories = labels, .n_x_categories = n_arms,
  };
  g_autoptr (CamlPlotLine) plot = caml_plot_line_new (&opts, (CamlPlotSeries *) series->data,
                                                      series->len, NULL, 0);
  g_array_free (series, TRUE);
  int width = MAX (560, 110 * n_arms);
  return caml_plot_write_png (path, width, 380, caml_plot_line_draw_cb, plot, error);
}

/* ---------------------------------------------------------------- report */

static const char *
member_string (JsonObject *o, const char *key, const char *fallback)
{
  JsonNode *n = o != NULL ? json_object_get_member (o, key) : NULL;
  return n != NULL && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
         ? json_node_get_string (n) : fallback;
}

static double
member_number (JsonObject *o, const char *key)
{
  JsonNode *n = o != NULL ? json_object_get_member (o, key) : NULL;
  return n != NULL && JSON_NODE_HOLDS_VALUE (n) ? json_node_get_double (n) : NAN;
}

static JsonArray *
member_array (JsonObject *o, const char *key)
{
  JsonNode *n = o != NULL ? json_object_get_member (o, key) : NULL;
  return n != NULL && JSON_NODE_HOLDS_ARRAY (n) ? json_node_get_array (n) : NULL;
}

/* text in a Markdown table cell */
static void
md_cell (GString *s, const char *text)
{
  g_string_append (s, " ");
  for (const char *c = text; *c; c++)
    if (*c == '|')
      g_string_append (s, "\\|");
    else if (*c == '\n')
      g_string_append_c (s, ' ');
    else
      g_string_append_c (s, *c);
  g_string_append (s, " |");
}

static void
html_text (GString *s, const char *text)
{
  g_autofree char *escaped = g_markup_escape_text (text, -1);
  g_string_append (s, escaped);
}

static const char *
verdict_class (const char *verdict)
{
  return g_str_equal (verdict, CAML_REPRO_REPRODUCED) ? "yes"
         : g_str_equal (verdict, CAML_REPRO_NOT_REPRODUCED) ? "no" : "na";
}

gboolean
caml_repro_write_report (const char *out_dir, const char *const *names, int n,
                         const char *header, GError **error)
{
  GPtrArray *parsers = g_ptr_array_new_with_free_func (g_object_unref);
  g_autofree JsonObject **docs = g_new0 (JsonObject *, n);
  for (int i = 0; i < n; i++)
    {
      g_autofree char *path = g_build_filename (out_dir, names[i], "results.json", NULL);
      JsonParser *parser = json_parser_new ();
      g_ptr_array_add (parsers, parser);
      if (json_parser_load_from_file (parser, path, NULL)
          && JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        docs[i] = json_node_get_object (json_parser_get_root (parser));
    }

  GString *md = g_string_new ("# Reproducing “Context Aware Machine Learning” (Zeng)\n\n");
  GString *html = g_string_new ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
                                "<title>caml reproduce</title>\n<style>\n"
                                "body{font-family:sans-serif;max-width:1100px;margin:2em auto}\n"
                                "table{border-collapse:collapse}td,th{border:1px solid #bbb;"
                                "padding:4px 8px;vertical-align:top}\n"
                                ".yes{background:#d8f0d8}.no{background:#f6d6d6}"
                                ".na{background:#eee}img{max-width:100%}\n"
                                "</style></head><body>\n"
                                "<h1>Reproducing “Context Aware Machine Learning” (Zeng)</h1>\n");
  g_string_append_printf (md, "%s\n\n", header);
  g_autofree char *header_html = g_markup_escape_text (header, -1);
  g_string_append_printf (html, "<p>%s</p>\n", header_html);

  /* the summary table: one row per claim */
  g_string_append (md, "| experiment | the paper | ours (mean ± sd) | verdict | rule |\n"
                       "|---|---|---|---|---|\n");
  g_string_append (html, "<table><tr><th>experiment</th><th>the paper</th>"
                         "<th>ours (mean ± sd)</th><th>verdict</th><th>rule</th></tr>\n");
  for (int i = 0; i < n; i++)
    {
      JsonArray *rows = member_array (docs[i], "rows");
      if (rows == NULL || json_array_get_length (rows) == 0)
        {
          g_string_append_printf (md, "| %s | – | – | %s | results.json missing or unreadable |\n",
                                  names[i], CAML_REPRO_NOT_TESTABLE);
          g_string_append_printf (html, "<tr class=\"na\"><td>%s</td><td></td><td></td>"
                                  "<td>%s</td><td>results.json missing</td></tr>\n",
                                  names[i], CAML_REPRO_NOT_TESTABLE);
          continue;
        }
      for (guint r = 0; r < json_array_get_length (rows); r++)
        {
          JsonObject *row = json_array_get_object_element (rows, r);
          const char *verdict = member_string (row, "verdict", CAML_REPRO_NOT_TESTABLE);
          const char *why = member_string (row, "why", NULL);
          g_autofree char *rule = why != NULL
                                  ? g_strdup_printf ("%s — %s", member_string (row, "rule", ""), why)
                                  : g_strdup (member_string (row, "rule", ""));
          g_string_append (md, "|");
          md_cell (md, names[i]);
          md_cell (md, member_string (row, "claim", ""));
          md_cell (md, member_string (row, "ours", "–"));
          md_cell (md, verdict);
          md_cell (md, rule);
          g_string_append_c (md, '\n');
          g_string_append_printf (html, "<tr class=\"%s\"><td><a href=\"#%s\">%s</a></td><td>",
                                  verdict_class (verdict), names[i], names[i]);
          html_text (html, member_string (row, "claim", ""));
          g_string_append (html, "</td><td>");
          html_text (html, member_string (row, "ours", "–"));
          g_string_append_printf (html, "</td><td>%s</td><td>", verdict);
          html_text (html, rule);
          g_string_append (html, "</td></tr>\n");
        }
    }
  g_string_append (html, "</table>\n");
  g_string_append (md, "\nEach verdict follows from the numbers by the rule beside it; "
                       "a figure that is not measured (data missing, a run failed) makes "
                       "the row “not testable here”. The paired tests are two-sided "
                       "paired t-tests over seeds (and grid cells), at p < 0.05.\n");

  /* a section per experiment: its models' figures and its plots */
  for (int i = 0; i < n; i++)
    {
      JsonObject *doc = docs[i];
      g_string_append_printf (md, "\n## %s — %s\n\n", names[i],
                              member_string (doc, "figure", ""));
      g_string_append_printf (html, "<h2 id=\"%s\">%s — ", names[i], names[i]);
      html_text (html, member_string (doc, "figure", ""));
      g_string_append (html, "</h2>\n<p>");
      const char *setup = member_string (doc, "setup", "");
      g_string_append_printf (md, "%s\n\n", setup);
      html_text (html, setup);
      g_string_append (html, "</p>\n");
      const char *why = member_string (doc, "why", NULL);
      if (why != NULL)
        {
          g_string_append_printf (md, "**Not testable here:** %s\n\n", why);
          g_string_append (html, "<p><b>Not testable here:</b> ");
          html_text (html, why);
          g_string_append (html, "</p>\n");
        }
      JsonArray *arms = member_array (doc, "models");
      if (arms != NULL && json_array_get_length (arms) > 0 && why == NULL)
        {
          const char *metric = member_string (doc, "metric", "value");
          g_string_append_printf (md, "| model | %s: mean | sd | runs |\n|---|---|---|---|\n",
                                  metric);
          g_string_append_printf (html, "<table><tr><th>model</th><th>%s: mean</th><th>sd</th>"
                                  "<th>runs</th></tr>\n", metric);
          for (guint a = 0; a < json_array_get_length (arms); a++)
            {
              JsonObject *arm = json_array_get_object_element (arms, a);
              double m = member_number (arm, "mean"), sd = member_number (arm, "sd");
              g_autofree char *mt = isfinite (m) ? g_strdup_printf ("%.4g", m) : g_strdup ("–");
              g_autofree char *st = isfinite (sd) ? g_strdup_printf ("%.2g", sd) : g_strdup ("–");
              int runs = (int) member_number (arm, "runs");
              g_string_append (md, "|");
              md_cell (md, member_string (arm, "label", ""));
              g_string_append_printf (md, " %s | %s | %d |\n", mt, st, runs);
              g_string_append (html, "<tr><td>");
              html_text (html, member_string (arm, "label", ""));
              g_string_append_printf (html, "</td><td>%s</td><td>%s</td><td>%d</td></tr>\n",
                                      mt, st, runs);
            }
          g_string_append (html, "</table>\n");
          g_string_append_c (md, '\n');
        }
      JsonArray *figures = member_array (doc, "figures");
      for (guint f = 0; figures != NULL && f < json_array_get_length (figures); f++)
        {
          const char *fig = json_array_get_string_element (figures, f);
          g_string_append_printf (md, "![%s](%s)\n\n", fig, fig);
          g_string_append_printf (html, "<p><img src=\"%s\" alt=\"%s\"></p>\n", fig, fig);
        }
    }
  g_string_append (html, "</body></html>\n");

  g_autofree char *md_path = g_build_filename (out_dir, "report.md", NULL);
  g_autofree char *html_path = g_build_filename (out_dir, "report.html", NULL);
  gboolean ok = caml_file_replace (md_path, md->str, md->len, error)
                && caml_file_replace (html_path, html->str, html->len, error);
  g_string_free (md, TRUE);
  g_string_free (html, TRUE);
  g_ptr_array_free (parsers, TRUE);
  return ok;
}
