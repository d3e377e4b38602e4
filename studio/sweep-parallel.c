/* sweep-parallel.c — a sweep's parallel coordinates (sweep.h,
 * caml_sweep_parallel_new): an axis per key of the plan, the model (with
 * baselines) and each result the runs have — the metric, which colours the
 * lines, the test loss, the σ-AUC, the steps a second and the time — and a
 * line per run that ended. The Sweep page draws it; sweep-parallel.png is
 * the same drawing. */
#include <math.h>

#include "sweep.h"

/* Values of a key as numbers, or NULL when one is not a number (words such
 * as "bahdanau": categories). */
static double *
key_numbers (const CamlSweepAxis *axis)
{
  double *xs = g_new (double, axis->n_values);
  if (caml_plot_parse_numbers ((const char *const *) axis->values, axis->n_values, xs))
    return xs;
  g_free (xs);
  return NULL;
}

/* Whether the values (n) spread over decades: positive, the largest over
 * 20 times the smallest (learning rates). */
static gboolean
spans_decades (const double *v, int n)
{
  double lo = INFINITY, hi = 0;
  for (int i = 0; i < n; i++)
    {
      if (!(v[i] > 0))
        return FALSE;
      lo = MIN (lo, v[i]);
      hi = MAX (hi, v[i]);
    }
  return n > 1 && hi > 20 * lo;
}

static gboolean
all_whole (const double *v, int n)
{
  for (int i = 0; i < n; i++)
    if (v[i] != floor (v[i]))
      return FALSE;
  return TRUE;
}

static gboolean
any_finite (const double *v, int n)
{
  for (int i = 0; i < n; i++)
    if (isfinite (v[i]))
      return TRUE;
  return FALSE;
}

CamlPlotParallel *
caml_sweep_parallel_new (const CamlSweepPlan *plan, const CamlSweepResult *results, int n,
                         int **row_results)
{
  g_return_val_if_fail (plan != NULL && (results != NULL || n == 0), NULL);
  /* the rows: the runs that ended, in run order */
  int *rows = g_new (int, MAX (n, 1));
  int n_rows = 0;
  gboolean classification = TRUE, any_baseline = FALSE;
  for (int i = 0; i < n; i++)
    if (results[i].done)
      {
        rows[n_rows++] = i;
        classification = results[i].classification;
        any_baseline |= results[i].baseline;
      }
  GPtrArray *owned = g_ptr_array_new_with_free_func (g_free);
  GArray *axes = g_array_new (FALSE, TRUE, sizeof (CamlPlotParallelAxis));
  for (int a = 0; a < plan->n_axes; a++)
    {
      const CamlSweepAxis *key = &plan->axes[a];
      double *numbers = key_numbers (key);
      double *v = g_new (double, MAX (n_rows, 1));
      for (int r = 0; r < n_rows; r++)
        {
          int k = results[rows[r]].index[a];
          v[r] = numbers != NULL ? numbers[k] : k;
        }
      CamlPlotParallelAxis axis = {
        .name = key->key, .values = v,
        .categories = numbers == NULL ? (const char *const *) key->values : NULL,
        .n_categories = numbers == NULL ? key->n_values : 0,
        .log_scale = numbers != NULL && spans_decades (numbers, key->n_values),
        .integer = numbers != NULL && all_whole (numbers, key->n_values),
      };
      g_ptr_array_add (owned, v);
      g_free (numbers);
      g_array_append_val (axes, axis);
    }
  static const char *const models[] = { "CA", "baseline" };
  if (any_baseline)
    {
      double *v = g_new (double, MAX (n_rows, 1));
      for (int r = 0; r < n_rows; r++)
        v[r] = results[rows[r]].baseline;
      CamlPlotParallelAxis axis = { .name = "model", .values = v, .categories = models,
                                    .n_categories = 2 };
      g_ptr_array_add (owned, v);
      g_array_append_val (axes, axis);
    }
  /* the results, each when some run has it */
  int color = -1;
  const char *names[] = { classification ? "test_accuracy" : "test_mse", "test_loss",
                          "sigma_auc", "steps_per_second", "seconds" };
  for (int f = 0; f < (int) G_N_ELEMENTS (names); f++)
    {
      double *v = g_new (double, MAX (n_rows, 1));
      for (int r = 0; r < n_rows; r++)
        {
          const CamlSweepResult *res = &results[rows[r]];
          v[r] = f == 0 ? res->metric : f == 1 ? res->test_loss : f == 2 ? res->sigma_auc
                 : f == 3 ? res->steps_per_second : res->seconds;
        }
      g_ptr_array_add (owned, v);
      if (f > 0 && !any_finite (v, n_rows))
        continue;
      if (f == 0)
        color = (int) axes->len;
      CamlPlotParallelAxis axis = { .name = names[f], .values = v };
      g_array_append_val (axes, axis);
    }
  gboolean *dashed = g_new0 (gboolean, MAX (n_rows, 1));
  char **row_names = g_new0 (char *, n_rows + 1);
  for (int r = 0; r < n_rows; r++)
    {
      const CamlSweepResult *res = &results[rows[r]];
      dashed[r] = res->baseline;
      g_autofree char *label = caml_sweep_plan_label (plan, res->index);
      row_names[r] = g_strdup_printf ("%s%s", label, res->baseline ? " (baseline)" : "");
    }
  g_autofree char *title = g_strdup_printf ("%s: every run, settings against results",
                                            plan->exp->name ? plan->exp->name : "sweep");
  CamlPlotParallelOptions opts = {
    .title = title, .note = n_rows == 0 ? "no run has ended yet" : NULL,
    .color_axis = n_rows > 0 ? color : -1, .dashed = dashed,
    .row_names = (const char *const *) row_names,
  };
  CamlPlotParallel *p = caml_plot_parallel_new (&opts, (CamlPlotParallelAxis *) axes->data,
                                                (int) axes->len, n_rows);
  g_array_free (axes, TRUE);
  g_ptr_array_free (owned, TRUE);
  g_free (dashed);
  g_strfreev (row_names);
  if (row_results != NULL)
    *row_results = rows;
  else
    g_free (rows);
  return p;
}

gboolean
caml_sweep_write_parallel (const CamlSweepPlan *plan, const CamlSweepResult *results, int n,
                           const char *path, GError **error)
{
  g_autoptr (CamlPlotParallel) p = caml_sweep_parallel_new (plan, results, n, NULL);
  return caml_plot_write_png (path, 1200, 600, caml_plot_parallel_draw_cb, p, error);
}
