/* figures.c — every figure of a run, from the run's data (figures.h). */
#include <math.h>
#include <string.h>

#include "figures.h"
#include "words-page.h"

#define MAX_PLOT_POINTS     1000   /* a live curve's points */
#define PREVIOUS_COLOR      7      /* grey: the previous run's curves (palette index) */
#define PREVIOUS_TEST_COLOR 8      /* olive */
/* The kept runs ticked: colours no other loss series has, in turn. */
static const int overlay_colors[] = { 3, 4, 5, 6, 9 };
#define N_CONTOURS          10

/* ------------------------------------------------------------------ loss */

double
caml_figure_loss_factor (double smoothing, long n_steps)
{
  if (smoothing >= 0)
    return smoothing;
  /* ~1 % of the run, so that the trend reads at any length; short runs
   * are drawn as they are */
  return n_steps > 50 ? 1.0 - 1.0 / (0.01 * n_steps + 1.0) : 0.0;
}

void
caml_figure_loss_trend (const float *losses, long n, double factor, gboolean linear,
                        double *out)
{
  for (long i = 0; i < n; i++)
    out[i] = losses[i];
  /* On a log axis the average of log(loss): a linear average of a loss
   * falling by decades sits far above it there. */
  if (linear)
    caml_plot_ema (out, out, n, factor);
  else
    caml_plot_ema_log (out, out, n, factor);
}

void
caml_figure_loss_span (const CamlFigureLoss *loss, double *first, double *last)
{
  const CamlFigureCurves *curves[] = { &loss->run, loss->previous, loss->baseline };
  double lo = 0.0, hi = 1.0;
  for (guint c = 0; c < G_N_ELEMENTS (curves); c++)
    {
      if (curves[c] == NULL)
        continue;
      hi = MAX (hi, (double) curves[c]->n_steps);
      for (int i = 0; i < curves[c]->n_rows; i++)
        {
          lo = MIN (lo, (double) curves[c]->rows[i].step);
          hi = MAX (hi, (double) curves[c]->rows[i].step);
        }
    }
  for (size_t k = 0; k < loss->n_overlays; k++)
    {
      const CamlFigureOverlay *o = &loss->overlays[k];
      if (o->n_points > 0)
        hi = MAX (hi, o->steps[o->n_points - 1]);
      for (int i = 0; i < o->n_rows; i++)
        hi = MAX (hi, (double) o->rows[i].step);
    }
  /* room after a divergence's marker, which would vanish in the frame's edge */
  if (loss->divergence != NULL && loss->divergence->step > 0)
    {
      double step = (double) loss->divergence->step;
      hi = MAX (hi, step + MAX (1.0, ceil (0.03 * step)));
    }
  *first = lo;
  *last = MAX (hi, lo + 1.0);
}

/* A train loss curve: the trend (or, at factor 0 in a live card, the raw
 * loss) by step; every step in a file, at most MAX_PLOT_POINTS of them in a
 * live card (and the last). Returns the points; x and y are new. */
static long
loss_curve (const CamlFigureLoss *loss, const float *losses, long n, double factor,
            gboolean raw, double **x, double **y)
{
  g_autofree double *values = g_new (double, MAX (n, 1));
  if (raw)
    for (long i = 0; i < n; i++)
      values[i] = losses[i];
  else
    caml_figure_loss_trend (losses, n, factor, loss->linear, values);
  long stride = loss->detail == CAML_FIGURE_LIVE && n > MAX_PLOT_POINTS
                ? (n + MAX_PLOT_POINTS - 1) / MAX_PLOT_POINTS : 1;
  long m = 0;
  *x = g_new (double, MAX (n / stride + 2, 1));
  *y = g_new (double, MAX (n / stride + 2, 1));
  for (long i = 0; i < n; i += stride, m++)
    {
      (*x)[m] = (double) (i + 1);
      (*y)[m] = values[i];
    }
  if (m > 0 && (*x)[m - 1] != (double) n)
    {
      (*x)[m] = (double) n;
      (*y)[m++] = values[n - 1];
    }
  return m;
}

/* The step, evaluated loss and metric of a run's evaluations, as columns. */
typedef struct {
  double *step, *loss, *metric;
} Columns;

static void
columns_init (Columns *c, const CamlFigureCurves *curves)
{
  int n = curves != NULL ? curves->n_rows : 0;
  c->step = g_new (double, MAX (n, 1));
  c->loss = g_new (double, MAX (n, 1));
  c->metric = g_new (double, MAX (n, 1));
  for (int i = 0; i < n; i++)
    {
      c->step[i] = (double) curves->rows[i].step;
      c->loss[i] = curves->rows[i].test_loss;
      c->metric[i] = curves->rows[i].test_metric;
    }
}

static void
columns_clear (Columns *c)
{
  g_free (c->step);
  g_free (c->loss);
  g_free (c->metric);
}

CamlPlotFigure *
caml_figure_loss (const CamlFigureLoss *loss)
{
  const CamlFigureCurves *run = &loss->run;
  const CamlFigureCurves *prev = loss->previous != NULL && loss->previous->n_steps > 0
                                 ? loss->previous : NULL;
  const CamlFigureCurves *base = loss->baseline;
  gboolean live = loss->detail == CAML_FIGURE_LIVE;
  const char *set = loss->evaluated_on;
  double factor = caml_figure_loss_factor (loss->smoothing, run->n_steps);
  double first, last;
  caml_figure_loss_span (loss, &first, &last);

  /* The run's train loss: in a file the raw loss, faint and dashed, under
   * its trend; in a live card one curve (drawing the raw zig-zag under the
   * trend costs Cairo ~4× the rest of the plot). */
  g_autofree double *raw_x = NULL, *raw_y = NULL, *run_x = NULL, *run_y = NULL;
  long raw_m = live ? 0 : loss_curve (loss, run->losses, run->n_steps, 0, TRUE, &raw_x, &raw_y);
  long run_m = loss_curve (loss, run->losses, run->n_steps, factor, live && factor <= 0,
                           &run_x, &run_y);
  g_autofree double *prev_x = NULL, *prev_y = NULL, *base_x = NULL, *base_y = NULL;
  long prev_m = prev != NULL ? loss_curve (loss, prev->losses, prev->n_steps, factor,
                                           live && factor <= 0, &prev_x, &prev_y) : 0;
  long base_m = base != NULL ? loss_curve (loss, base->losses, base->n_steps, factor,
                                           live && factor <= 0, &base_x, &base_y) : 0;
  /* The kept runs ticked: their train-loss trend (the EMA of their points,
   * each `stride` steps, at the factor those steps would have) and their
   * evaluations, dashed in a colour each. */
  size_t n_over = loss->n_overlays;
  g_autofree double **over_y = g_new0 (double *, MAX (n_over, 1));
  g_autofree Columns *over_c = g_new0 (Columns, MAX (n_over, 1));
  g_autoptr (GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  for (size_t k = 0; k < n_over; k++)
    {
      const CamlFigureOverlay *o = &loss->overlays[k];
      double f = caml_figure_loss_factor (loss->smoothing, o->n_points * MAX (o->stride, 1));
      over_y[k] = g_new (double, MAX (o->n_points, 1));
      memcpy (over_y[k], o->losses, o->n_points * sizeof (double));
      if (f > 0)
        {
          f = pow (f, (double) MAX (o->stride, 1));
          if (loss->linear)
            caml_plot_ema (over_y[k], over_y[k], o->n_points, f);
          else
            caml_plot_ema_log (over_y[k], over_y[k], o->n_points, f);
        }
      CamlFigureCurves c = { .rows = o->rows, .n_rows = o->n_rows };
      columns_init (&over_c[k], &c);
    }
  Columns run_c, prev_c, base_c;
  columns_init (&run_c, run);
  columns_init (&prev_c, prev);
  columns_init (&base_c, base);
  int prev_r = prev != NULL ? prev->n_rows : 0, base_r = base != NULL ? base->n_rows : 0;

  g_autofree char *test_loss = g_strdup_printf ("%s loss", set);
  g_autofree char *prev_test_loss = g_strdup_printf ("previous run: %s loss", set);
  g_autofree char *base_test_loss = g_strdup_printf ("baseline %s loss", set);
  g_autofree CamlPlotSeries *series = g_new0 (CamlPlotSeries, 7 + 2 * n_over);
  size_t n_series = 0;
  if (!live)
    series[n_series++] = (CamlPlotSeries) { raw_x, raw_y, raw_m, NULL, 0, TRUE };
  series[n_series++] = (CamlPlotSeries) {
    run_x, run_y, run_m, factor > 0 ? "train loss (smoothed)" : "train loss", 0, FALSE };
  /* A live card keeps its legend while the first evaluation is awaited. */
  series[n_series++] = (CamlPlotSeries) { run_c.step, run_c.loss, run->n_rows,
                                          live || run->n_rows > 0 ? test_loss : NULL, 1,
                                          FALSE };
  /* The previous run, dashed in grey (train) and olive (test), under the
   * baselines, which draw last. */
  if (prev != NULL)
    {
      series[n_series++] = (CamlPlotSeries) { prev_x, prev_y, prev_m, "previous run: train loss",
                                              PREVIOUS_COLOR, TRUE };
      series[n_series++] = (CamlPlotSeries) { prev_c.step, prev_c.loss, prev_r, prev_test_loss,
                                              PREVIOUS_TEST_COLOR, TRUE };
    }
  for (size_t k = 0; k < n_over; k++)
    {
      const CamlFigureOverlay *o = &loss->overlays[k];
      int color = overlay_colors[k % G_N_ELEMENTS (overlay_colors)];
      char *train = g_strdup_printf ("%s: train loss", o->name);
      char *test = g_strdup_printf ("%s: %s loss", o->name, set);
      g_ptr_array_add (labels, train);
      g_ptr_array_add (labels, test);
      series[n_series++] = (CamlPlotSeries) { o->steps, over_y[k], o->n_points, train, color,
                                              TRUE };
      series[n_series++] = (CamlPlotSeries) { over_c[k].step, over_c[k].loss, o->n_rows,
                                              o->n_rows > 0 ? test : NULL, color, TRUE, TRUE };
    }
  if (base != NULL)
    {
      series[n_series++] = (CamlPlotSeries) { base_x, base_y, base_m, "baseline train loss", 0,
                                              TRUE };
      series[n_series++] = (CamlPlotSeries) { base_c.step, base_c.loss, base_r,
                                              base_test_loss, 1, TRUE };
    }

  g_autofree CamlPlotEvent *events = g_new0 (CamlPlotEvent, loss->n_events + 1);
  size_t n_events = loss->n_events;
  if (n_events > 0)
    memcpy (events, loss->events, n_events * sizeof *events);
  g_autofree char *diverged = NULL;
  if (loss->divergence != NULL && loss->divergence->step > 0)
    {
      diverged = g_strdup_printf ("diverged at step %ld; rolled back to step %ld",
                                  loss->divergence->step, loss->divergence->rolled_back_to);
      events[n_events++] = (CamlPlotEvent) { (double) loss->divergence->step, diverged };
    }

  CamlPlotLineOptions opts = {
    .title = loss->title, .x_label = "step", .y_label = "loss",
    .log_y = !loss->linear, .legend = TRUE, .grid = TRUE,
    .x_min = first, .x_max = last, .integer_x = TRUE,
    .note = run->n_steps == 0 && run->n_rows == 0 && prev == NULL && base == NULL
            && n_over == 0 ? "no step trained" : NULL,
  };
  CamlPlotFigure *figure = caml_plot_figure_new (NULL, 2 * CAML_FIGURE_CELL_WIDTH,
                                                 CAML_FIGURE_CELL_HEIGHT);
  caml_plot_figure_add_line (figure, caml_plot_line_new (&opts, series, n_series, events,
                                                         n_events));

  gboolean prev_acc = prev != NULL && prev->classification && prev_r > 0;
  gboolean over_acc = FALSE;
  for (size_t k = 0; k < n_over; k++)
    over_acc |= loss->overlays[k].classification && loss->overlays[k].n_rows > 0;
  if (run->classification || prev_acc || over_acc)
    {
      g_autofree char *test_acc = g_strdup_printf ("%s accuracy", set);
      g_autofree char *prev_test_acc = g_strdup_printf ("previous run: %s accuracy", set);
      g_autofree char *base_test_acc = g_strdup_printf ("baseline %s accuracy", set);
      g_autofree CamlPlotSeries *acc = g_new0 (CamlPlotSeries, 3 + n_over);
      acc[0] = (CamlPlotSeries) { run_c.step, run_c.metric, run->n_rows, test_acc, 2, FALSE };
      size_t n_acc = 1;
      for (size_t k = 0; k < n_over; k++)
        if (loss->overlays[k].classification && loss->overlays[k].n_rows > 0)
          {
            char *label = g_strdup_printf ("%s: %s accuracy", loss->overlays[k].name, set);
            g_ptr_array_add (labels, label);
            acc[n_acc++] = (CamlPlotSeries) {
              over_c[k].step, over_c[k].metric, loss->overlays[k].n_rows, label,
              overlay_colors[k % G_N_ELEMENTS (overlay_colors)], TRUE };
          }
      if (prev_acc)
        acc[n_acc++] = (CamlPlotSeries) { prev_c.step, prev_c.metric, prev_r, prev_test_acc,
                                          PREVIOUS_COLOR, TRUE };
      if (base != NULL)
        acc[n_acc++] = (CamlPlotSeries) { base_c.step, base_c.metric, base_r, base_test_acc, 2,
                                          TRUE };
      CamlPlotLineOptions acc_opts = {
        .title = test_acc, .x_label = "step", .y_label = "accuracy",
        .legend = TRUE, .grid = TRUE,
        .x_min = first, .x_max = last, .integer_x = TRUE,
        .note = run->n_rows == 0 && !prev_acc && !over_acc ? "no evaluation" : NULL,
      };
      caml_plot_figure_add_line (figure, caml_plot_line_new (&acc_opts, acc, n_acc, events,
                                                             n_events));
    }
  columns_clear (&run_c);
  columns_clear (&prev_c);
  columns_clear (&base_c);
  for (size_t k = 0; k < n_over; k++)
    {
      columns_clear (&over_c[k]);
      g_free (over_y[k]);
    }
  return figure;
}

/* ---------------------------------------------------- surfaces of a plane */

static CamlPlotHeatmap *
plane_heatmap (const CamlFigurePlane *plane, const char *title, const char *value_label,
               const float *values, gboolean fixed, double vmin, double vmax,
               gboolean points, gboolean point_values)
{
  const CamlDataset *train = plane->train;
  const double *domain = plane->exp->plot_domain;
  int grid = plane->grid;
  size_t n = points ? (size_t) train->n : 0;
  g_autofree double *v = caml_plot_doubles_from_floats (values, (size_t) grid * grid);
  g_autofree double *px = g_new (double, MAX (n, 1));
  g_autofree double *py = g_new (double, MAX (n, 1));
  g_autofree double *pv = g_new (double, MAX (n, 1));
  for (size_t i = 0; i < n; i++)
    {
      px[i] = train->x[2 * i];
      py[i] = train->x[2 * i + 1];
      pv[i] = train->y[i * train->y_width];
    }
  CamlPlotHeatmapOptions opts = {
    .title = title, .x_label = "x", .y_label = "y", .value_label = value_label,
    .colormap = CAML_PLOT_COLORMAP_VIRIDIS, .fixed_range = fixed, .vmin = vmin, .vmax = vmax,
    .n_contours = N_CONTOURS, .colorbar = TRUE, .smooth = TRUE, .equal_aspect = TRUE,
    .marker = CAML_PLOT_MARKER_DOT,
  };
  return caml_plot_heatmap_new (&opts, v, grid, grid, domain[0], domain[1], domain[2],
                                domain[3], n > 0 ? px : NULL, n > 0 ? py : NULL,
                                point_values ? pv : NULL, n);
}

/* Widens [*lo, *hi] to the finite values of v (n). */
static void
widen (double *lo, double *hi, const float *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (isfinite (v[i]))
      {
        *lo = fmin (*lo, v[i]);
        *hi = fmax (*hi, v[i]);
      }
}

/* … and to the training targets. */
static void
widen_to_targets (double *lo, double *hi, const CamlDataset *train)
{
  for (int i = 0; i < train->n; i++)
    {
      *lo = fmin (*lo, train->y[i * train->y_width]);
      *hi = fmax (*hi, train->y[i * train->y_width]);
    }
}

/* A range that spans something: ±0.5 around a single value (0 for none). */
static void
nonempty_range (double *lo, double *hi)
{
  if (!(*hi > *lo))
    {
      double mid = isfinite (*lo) ? *lo : 0.0;
      *lo = mid - 0.5;
      *hi = mid + 0.5;
    }
}

/* n heatmaps side by side, at least CAML_FIGURE_MIN_WIDTH wide: fewer are
 * scaled up as a whole (one map: 1200 × 1000), not spread out. */
static CamlPlotFigure *
maps_figure (int n)
{
  int width = CAML_FIGURE_CELL_WIDTH * MAX (n, 1);
  double grow = MAX (1.0, (double) CAML_FIGURE_MIN_WIDTH / width);
  return caml_plot_figure_new (NULL, (int) ceil (grow * width),
                               (int) ceil (grow * CAML_FIGURE_CELL_HEIGHT));
}

CamlPlotFigure *
caml_figure_surface (const CamlFigurePlane *plane, const float *fit)
{
  const CamlExperiment *exp = plane->exp;
  const double *domain = exp->plot_domain;
  int grid = plane->grid;
  size_t cells = (size_t) grid * grid;
  /* the predictions, not logits */
  g_autofree float *predicted = g_memdup2 (fit, cells * sizeof (float));
  caml_loss_predict (exp->loss, predicted, cells);

  /* One colour scale over the truth (or, without one, the targets the
   * points show) and the fit, widened to the fit where it goes beyond
   * them: a diverged model's fit is not clipped to look in range, and
   * colours keep one meaning while a run trains. */
  double vmin = INFINITY, vmax = -INFINITY;
  g_autofree float *truth = NULL;
  if (exp->data.kind == CAML_DATA_SURFACE)
    {
      truth = g_new (float, cells);
      for (int j = 0; j < grid; j++)
        for (int i = 0; i < grid; i++)
          {
            double x = domain[0] + (domain[1] - domain[0]) * i / (grid - 1);
            double y = domain[2] + (domain[3] - domain[2]) * j / (grid - 1);
            truth[j * grid + i] = (float) caml_surface_function (x, y);
          }
      widen (&vmin, &vmax, truth, cells);
    }
  else
    widen_to_targets (&vmin, &vmax, plane->train);
  widen (&vmin, &vmax, predicted, cells);
  nonempty_range (&vmin, &vmax);

  CamlPlotFigure *figure = maps_figure (truth != NULL ? 2 : 1);
  if (truth != NULL)
    caml_plot_figure_add_heatmap (figure, plane_heatmap (plane, "ground truth  x·exp(−x²−y²)",
                                                         "z", truth, TRUE, vmin, vmax, FALSE,
                                                         FALSE));
  const char *name = exp->name ? exp->name : "model";
  g_autofree char *title = g_strdup_printf ("%s: fitted surface, %d training points", name,
                                            plane->train->n);
  const char *label = exp->loss == CAML_LOSS_SIGMOID_XENT ? "sigmoid(output)" : "output";
  caml_plot_figure_add_heatmap (figure, plane_heatmap (plane, title, label, predicted, TRUE,
                                                       vmin, vmax, TRUE, TRUE));
  return figure;
}

CamlPlotFigure *
caml_figure_chi (const CamlFigurePlane *plane, int n, const int *layers,
                 const char *const *titles, const float *chi)
{
  size_t cells = (size_t) plane->grid * plane->grid;
  CamlPlotFigure *figure = maps_figure (n);
  for (int k = 0; k < n; k++)
    {
      g_autofree char *title = g_strdup_printf ("χ of layer %d (%s)", layers[k], titles[k]);
      /* The training points are marked (without values) to show where the
       * data sits relative to the gate's modes. */
      caml_plot_figure_add_heatmap (figure, plane_heatmap (plane, title, "χ", chi + k * cells,
                                                           TRUE, 0.0, 1.0, TRUE, FALSE));
    }
  return figure;
}

CamlPlotFigure *
caml_figure_parts (const CamlFigurePlane *plane, int layer, const float *fit, const float *chi,
                   const float *sensitive_part, const float *free_part)
{
  size_t cells = (size_t) plane->grid * plane->grid;
  g_autofree float *sensitive_share = g_new (float, cells);
  g_autofree float *free_share = g_new (float, cells);
  double residual = caml_report_parts_shares (chi, sensitive_part, free_part, fit, cells,
                                              sensitive_share, free_share);
  gboolean add_up = caml_report_parts_add_up (residual, fit, cells);
  /* Under sigmoid cross-entropy the outputs are logits: the parts add up
   * to the logit (whose sigmoid the surface shows), and the targets, 0 and
   * 1, are not on its scale, so the points are not coloured. */
  gboolean logits = plane->exp->loss == CAML_LOSS_SIGMOID_XENT;
  /* The context-free part and the fit on one colour scale (the targets'
   * too where the points show them); the context-sensitive part, often a
   * small constant times 1 − χ, on its own. */
  double vmin = INFINITY, vmax = -INFINITY;
  widen (&vmin, &vmax, fit, cells);
  widen (&vmin, &vmax, free_share, cells);
  if (!logits)
    widen_to_targets (&vmin, &vmax, plane->train);
  nonempty_range (&vmin, &vmax);

  g_autofree char *chi_title = g_strdup_printf ("χ of layer %d (CA-NN)", layer);
  g_autofree char *f_label = g_strdup_printf ("f₀ = %.3g", sensitive_part[0]);
  /* The paper's names (Eq. 12, 37): v(c) gives the context-free part of
   * the output, w₀ (the default value for an irrelevant input) the
   * context-sensitive part. */
  CamlPlotFigure *figure = maps_figure (4);
  caml_plot_figure_add_heatmap (figure, plane_heatmap (plane, chi_title, "χ", chi, TRUE, 0.0,
                                                       1.0, TRUE, FALSE));
  caml_plot_figure_add_heatmap (figure, plane_heatmap (plane, "χ·f₁: v(c), context-free part",
                                                       "output", free_share, TRUE, vmin,
                                                       vmax, TRUE, FALSE));
  caml_plot_figure_add_heatmap (figure, plane_heatmap (plane, "(1 − χ)·f₀: w₀, context-sensitive part",
                                                       f_label, sensitive_share, FALSE, 0, 0,
                                                       TRUE, FALSE));
  /* Said plainly: what the panel shows, then why it is not the sum. */
  const char *fit_title = !add_up ? "the model's fit (not the sum: non-linear layers follow)"
                          : logits ? "logit = the sum of the parts"
                          : "fit = the sum of the parts";
  caml_plot_figure_add_heatmap (figure, plane_heatmap (plane, fit_title,
                                                       logits ? "logit" : "output", fit, TRUE,
                                                       vmin, vmax, TRUE, !logits));
  return figure;
}

/* ---------------------------------------------------------------- σ-maps */

CamlPlotFigure *
caml_figure_sigma_grid (const CamlSigmaSnapshot *snap, gboolean stretch, const char *name,
                        const CamlSigmaSource *source)
{
  const int pairs_per_row = 8;
  int n = MIN (snap->count, CAML_FIGURE_SIGMA_IMAGES);
  CamlSigmaScale scale;
  g_autofree float *tiles = caml_sigma_tiles (snap, n, stretch, &scale);
  g_autofree char *title = caml_report_sigma_grid_title (name, source, &scale, snap->step);
  /* The grey scale's legend always: 0 … 1, or the stretched range. */
  CamlPlotTilesOptions opts = {
    .title = title, .colormap = CAML_PLOT_COLORMAP_GREY,
    .n_cols = 2 * pairs_per_row, .group = 2,
    .legend = "χ", .legend_lo = scale.lo, .legend_hi = scale.hi,
  };
  CamlPlotTiles *plot = caml_plot_tiles_new (&opts, tiles, 2 * n, snap->height, snap->width);
  int gw, gh;
  caml_plot_tiles_get_size (plot, &gw, &gh);
  /* Three screen pixels per value (more for small images); the height that
   * width fills, title and legend included. */
  CamlPlotFigure *figure = caml_plot_figure_new (NULL, MAX (3 * gw + 12, CAML_FIGURE_MIN_WIDTH),
                                                 0);
  caml_plot_figure_add_tiles (figure, plot);
  return figure;
}

CamlPlotFigure *
caml_figure_sigma_auc (const double *steps, const double *auc, int n, double first,
                       double last, long marked)
{
  CamlPlotEvent shown = { (double) marked, "shown" };
  CamlPlotSeries series[] = { { steps, auc, n, "foreground / background AUC", 3, FALSE } };
  CamlPlotLineOptions opts = {
    .title = "σ-map AUC", .x_label = "step", .y_label = "AUC", .legend = TRUE, .grid = TRUE,
    .x_min = first, .x_max = last, .integer_x = TRUE,
  };
  CamlPlotFigure *figure = caml_plot_figure_new (NULL, 2 * CAML_FIGURE_CELL_WIDTH,
                                                 CAML_FIGURE_CELL_HEIGHT);
  caml_plot_figure_add_line (figure, caml_plot_line_new (&opts, series, 1, &shown,
                                                         marked >= 0 ? 1 : 0));
  return figure;
}

/* ------------------------------------------------------------- χ histogram */

int
caml_figure_chi_histogram_points (const CamlLayerStat *stat, double *x, double *y)
{
  int k = 0;
  x[k] = 0.0;
  y[k++] = 0.0;
  for (int b = 0; b < CAML_CHI_BINS; b++)
    {
      double share = stat->count > 0 ? (double) stat->bins[b] / (double) stat->count : NAN;
      x[k] = (double) b / CAML_CHI_BINS;
      y[k++] = share;
      x[k] = (double) (b + 1) / CAML_CHI_BINS;
      y[k++] = share;
    }
  x[k] = 1.0;
  y[k++] = 0.0;
  return k;
}

CamlPlotFigure *
caml_figure_chi_histogram (const CamlLayerStat *stat, long step)
{
  double x[2 * CAML_CHI_BINS + 2], y[2 * CAML_CHI_BINS + 2];
  int n = caml_figure_chi_histogram_points (stat, x, y);
  g_autofree char *title =
    g_strdup_printf ("χ of layer %d (%s), step %ld", stat->index, stat->title,
                     MAX (step, 0));
  g_autofree char *label = g_strdup_printf ("mean %.3f, sd %.3f", caml_layer_stat_mean (stat),
                                            caml_layer_stat_sd (stat));
  CamlPlotSeries series[] = { { x, y, n, label, 0, FALSE } };
  CamlPlotLineOptions opts = {
    .title = title, .x_label = "χ", .y_label = "share of values", .legend = TRUE,
    .grid = TRUE, .x_min = 0.0, .x_max = 1.0,
    .note = stat->count == 0 ? "no χ measured yet" : NULL,
  };
  CamlPlotFigure *figure = caml_plot_figure_new (NULL, 2 * CAML_FIGURE_CELL_WIDTH,
                                                 CAML_FIGURE_CELL_HEIGHT);
  caml_plot_figure_add_line (figure, caml_plot_line_new (&opts, series, 1, NULL, 0));
  return figure;
}

/* ----------------------------------------------------------------- words */

CamlPlotFigure *
caml_figure_words (const CamlFigureWords *words, int *shown)
{
  CamlPlotBars *most_free = NULL, *most_sensitive = NULL;
  int n = caml_report_word_bars (words->vocab, words->chi, words->per_position,
                                 words->min_count, words->n_top, &most_free, &most_sensitive);
  if (shown != NULL)
    *shown = n;
  g_autofree char *title = g_strdup_printf ("%s: %s of %s%s%s, %s seen ≥ %d× in training",
                                            words->title ? words->title : "",
                                            words->per_position ? "mean χ" : "χ̃", words->layer,
                                            words->per_position ? " over " : "",
                                            words->per_position ? words->texts_read : "",
                                            caml_words_vocab_has_ngrams (words->vocab)
                                            ? "words and n-grams" : "words",
                                            words->min_count);
  if (n == 0)
    {
      caml_plot_bars_free (most_free);
      caml_plot_bars_free (most_sensitive);
      /* no lists: a note in their place, not two empty columns */
      g_autofree char *note = g_strdup_printf ("No word is seen %d times in training: "
                                               "there is nothing to rank.", words->min_count);
      CamlPlotBarsOptions note_opts = { note, CAML_PLOT_COLORMAP_BLUES, 0.0, 1.0 };
      CamlPlotFigure *figure = caml_plot_figure_new (title, 2 * CAML_FIGURE_CELL_WIDTH, 80);
      caml_plot_figure_add_bars (figure, caml_plot_bars_new (&note_opts, NULL, NULL, 0));
      return figure;
    }
  CamlPlotFigure *figure = caml_plot_figure_new (title, 2 * CAML_FIGURE_CELL_WIDTH,
                                                 40 + 22 * MAX (n, 10));
  caml_plot_figure_add_bars (figure, most_free);
  caml_plot_figure_add_bars (figure, most_sensitive);
  return figure;
}
