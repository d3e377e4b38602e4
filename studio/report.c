/* report.c — the plots and tables a run leaves behind. */
#include <math.h>
#include <string.h>

#include <gio/gio.h>

#include "report.h"
#include "figures.h"
#include "words-page.h"
#include "caml-plot.h"

#define CELL_WIDTH   CAML_FIGURE_CELL_WIDTH
#define CELL_HEIGHT  CAML_FIGURE_CELL_HEIGHT

const char *
caml_report_evaluated_on (const CamlExperiment *exp)
{
  return exp->data.validation_fraction > 0 ? "validation" : "test";
}

gboolean
caml_report_write_loss (const char *path, const CamlEvalRow *rows, int n_rows,
                        const float *losses, long n_steps, const CamlDivergence *divergence,
                        gboolean classification, const char *evaluated_on, const char *title,
                        GError **error)
{
  CamlFigureLoss loss = {
    .run = { losses, n_steps, rows, n_rows, classification },
    .divergence = divergence, .title = title, .evaluated_on = evaluated_on,
    .smoothing = -1, .detail = CAML_FIGURE_FILE,
  };
  g_autoptr (CamlPlotFigure) figure = caml_figure_loss (&loss);
  return caml_plot_figure_write (figure, path, error);
}

int
caml_report_parts_layer (const CamlModel *model, int preferred)
{
  if (preferred >= 0 && preferred < model->n_layers
      && model->layers[preferred]->ops->force_chi != NULL)
    return preferred;
  for (int l = model->n_layers - 1; l >= 0; l--)
    if (model->layers[l]->ops->force_chi != NULL)
      return l;
  return -1;
}

double
caml_report_parts_shares (const float *chi, const float *sensitive_part,
                          const float *free_part, const float *fit, size_t n,
                          float *sensitive_share, float *free_share)
{
  double residual = 0;
  for (size_t i = 0; i < n; i++)
    {
      float s = chi[i] * free_part[i];
      float f = (1.0f - chi[i]) * sensitive_part[i];
      residual = fmax (residual, fabs ((double) fit[i] - ((double) s + f)));
      free_share[i] = s;
      sensitive_share[i] = f;
    }
  return residual;
}

gboolean
caml_report_parts_add_up (double residual, const float *fit, size_t n)
{
  float lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; i++)
    {
      lo = fminf (lo, fit[i]);
      hi = fmaxf (hi, fit[i]);
    }
  return residual <= fmax (1e-3 * (hi - lo), 1e-5);
}

/* Writes figure as dir/name and appends ", name" to written (may be NULL). */
static gboolean
write_figure (CamlPlotFigure *figure, const char *dir, const char *name, GString *written,
              GError **error)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  gboolean ok = caml_plot_figure_write (figure, path, error);
  caml_plot_figure_unref (figure);
  if (ok && written != NULL)
    g_string_append_printf (written, ", %s", name);
  return ok;
}

gboolean
caml_report_write_surfaces (const char *dir, const CamlExperiment *exp, CamlModel *model,
                            const CamlDataset *train, GString *written, GError **error)
{
  if (!caml_shape_is_plane (&model->input)
      || caml_shape_size (caml_model_output_shape (model)) != 1)
    return TRUE;

  const CamlFigurePlane plane = { exp, train, CAML_FIGURE_GRID };
  const double *domain = exp->plot_domain;
  const int grid = CAML_FIGURE_GRID;
  const size_t cells = (size_t) grid * grid;
  g_autofree float *fit = g_new (float, cells);
  if (!caml_model_sample_grid (model, domain, grid, grid, fit, -1, NULL, error)
      || !write_figure (caml_figure_surface (&plane, fit), dir, "surface.png", written, error))
    return FALSE;

  /* χ of every layer with a per-sample gate, side by side. */
  GArray *layers = g_array_new (FALSE, FALSE, sizeof (int));
  GPtrArray *titles = g_ptr_array_new ();
  GArray *chi = g_array_new (FALSE, FALSE, sizeof (float));
  g_autofree float *one = g_new (float, cells);
  for (int l = caml_model_find_chi_layer (model, 0); l >= 0;
       l = caml_model_find_chi_layer (model, l + 1))
    {
      GError *local = NULL;
      if (!caml_model_sample_grid (model, domain, grid, grid, fit, l, one, &local))
        {
          g_clear_error (&local);   /* e.g. CA-RES with always-on gates */
          continue;
        }
      g_array_append_val (layers, l);
      g_ptr_array_add (titles, (gpointer) model->layers[l]->ops->title);
      g_array_append_vals (chi, one, cells);
    }
  gboolean ok = TRUE;
  if (layers->len > 0)
    ok = write_figure (caml_figure_chi (&plane, (int) layers->len, (int *) layers->data,
                                        (const char *const *) titles->pdata,
                                        (float *) chi->data),
                       dir, "chi.png", written, error);
  g_array_unref (layers);
  g_ptr_array_unref (titles);
  g_array_unref (chi);
  if (!ok)
    return FALSE;

  /* parts.png: the last CA-NN's χ, its two shares and the fit they add up to */
  int layer = caml_report_parts_layer (model, -1);
  if (layer < 0)
    return TRUE;
  g_autofree float *sensitive_part = g_new (float, cells);
  g_autofree float *free_part = g_new (float, cells);
  return caml_model_sample_grid (model, domain, grid, grid, fit, layer, one, error)
         && caml_model_sample_grid_parts (model, domain, grid, grid, layer, sensitive_part,
                                          free_part, error)
         && write_figure (caml_figure_parts (&plane, layer, fit, one, sensitive_part,
                                             free_part), dir,
                          "parts.png", written, error);
}

void
caml_report_json_add_number (JsonBuilder *b, const char *key, double value)
{
  json_builder_set_member_name (b, key);
  if (isfinite (value))
    json_builder_add_double_value (b, value);
  else
    json_builder_add_null_value (b);
}

gboolean
caml_report_json_write (JsonBuilder *b, const char *path, GError **error)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  gsize length = 0;
  g_autofree char *text = json_generator_to_data (gen, &length);
  g_autofree char *line = g_strconcat (text, "\n", NULL);
  return caml_file_replace (path, line, length + 1, error);
}

gboolean
caml_report_write_metrics (const char *path, const CamlEvalRow *rows, int n_rows,
                           gboolean classification, GError **error)
{
  GString *csv = g_string_new (NULL);
  g_string_append_printf (csv, "step,train_loss,test_loss,%s,seconds\n",
                          classification ? "test_accuracy" : "test_mse");
  for (int i = 0; i < n_rows; i++)
    g_string_append_printf (csv, "%ld,%.9g,%.9g,%.9g,%.3f\n", rows[i].step,
                            rows[i].train_loss, rows[i].test_loss, rows[i].test_metric,
                            rows[i].seconds);
  gboolean ok = caml_file_replace (path, csv->str, csv->len, error);
  g_string_free (csv, TRUE);
  return ok;
}

CamlSigmaSnapshot *
caml_sigma_snapshot_new (CamlModel *model, int layer, const CamlDataset *set, int count,
                         long step, GError **error)
{
  count = MIN (count, set->n);
  int map_h, map_w;
  if (set->x_shape.ndim != 3 || set->x_shape.dims[0] != 1)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE, "σ-maps need one-channel images");
      return NULL;
    }
  if (!caml_model_sigma_maps (model, layer, set, 0, count, NULL, &map_h, &map_w, error))
    return NULL;
  CamlSigmaSnapshot *snap = g_new0 (CamlSigmaSnapshot, 1);
  snap->step = step;
  snap->count = count;
  snap->height = set->x_shape.dims[1];
  snap->width = set->x_shape.dims[2];
  snap->map_h = map_h;
  snap->map_w = map_w;
  snap->images = caml_dataset_copy_rows (set, 0, count);
  snap->maps = g_new (float, (size_t) count * map_h * map_w);
  if (!caml_model_sigma_maps (model, layer, set, 0, count, snap->maps, &map_h, &map_w, error))
    {
      caml_sigma_snapshot_free (snap);
      return NULL;
    }
  return snap;
}

void
caml_sigma_snapshot_free (CamlSigmaSnapshot *snap)
{
  if (snap == NULL)
    return;
  g_free (snap->images);
  g_free (snap->maps);
  g_free (snap);
}

int
caml_report_sigma_layer (const CamlModel *model)
{
  for (int l = caml_model_find_chi_layer (model, 0); l >= 0;
       l = caml_model_find_chi_layer (model, l + 1))
    if (model->layers[l]->out.ndim == 3)
      return l;
  return -1;
}

void
caml_report_sigma_source (const CamlModel *model, int layer, CamlSigmaSource *source)
{
  const CamlLayer *l = model->layers[layer];
  *source = (CamlSigmaSource) { .layer = layer, .type = l->ops->name };
  int sublayers = caml_layer_ops_option_index (l->ops, "sublayers");
  if (sublayers >= 0)
    source->sublayer = source->n_sublayers = (int) l->opt[sublayers];
}

char *
caml_report_sigma_source_text (const CamlSigmaSource *source)
{
  if (source->n_sublayers > 0)
    return g_strdup_printf ("layer %d (%s), sublayer %d of %d", source->layer, source->type,
                            source->sublayer, source->n_sublayers);
  return g_strdup_printf ("layer %d (%s)", source->layer, source->type);
}

static int
compare_float (gconstpointer a, gconstpointer b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return (x > y) - (x < y);
}

float *
caml_sigma_tiles (const CamlSigmaSnapshot *snap, int count, gboolean stretch,
                  CamlSigmaScale *scale)
{
  int h = snap->height, w = snap->width;
  size_t plane = (size_t) h * w;
  float *tiles = g_new (float, 2 * (size_t) MAX (count, 1) * plane);

  *scale = (CamlSigmaScale) { .lo = 0.0, .hi = 1.0 };
  if (stretch && count > 0)
    {
      /* Percentiles of the maps' own values: a few border pixels do not
       * decide the scale. */
      size_t n = (size_t) count * snap->map_h * snap->map_w, k = 0;
      g_autofree float *sorted = g_new (float, n);
      for (size_t i = 0; i < n; i++)
        if (isfinite (snap->maps[i]))
          sorted[k++] = snap->maps[i];
      if (k > 0)
        {
          qsort (sorted, k, sizeof (float), compare_float);
          double lo = sorted[(size_t) floor (0.01 * (k - 1))];
          double hi = sorted[(size_t) ceil (0.99 * (k - 1))];
          if (hi - lo < 1e-3)
            {
              double mid = 0.5 * (lo + hi);
              lo = CLAMP (mid - 5e-4, 0.0, 1.0 - 1e-3);
              hi = lo + 1e-3;
            }
          *scale = (CamlSigmaScale) { .lo = lo, .hi = hi, .stretched = TRUE };
        }
    }
  double span = scale->hi - scale->lo;
  for (int i = 0; i < count; i++)
    {
      float *img = tiles + (size_t) (2 * i) * plane;
      float *map = img + plane;
      const float *src = snap->maps + (size_t) i * snap->map_h * snap->map_w;
      memcpy (img, snap->images + (size_t) i * plane, plane * sizeof (float));
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          {
            int my = MIN ((int) ((y + 0.5) * snap->map_h / h), snap->map_h - 1);
            int mx = MIN ((int) ((x + 0.5) * snap->map_w / w), snap->map_w - 1);
            double v = (src[my * snap->map_w + mx] - scale->lo) / span;
            map[y * w + x] = (float) CLAMP (v, 0.0, 1.0);
          }
    }
  return tiles;
}

char *
caml_sigma_scale_text (const CamlSigmaScale *scale)
{
  if (!scale->stretched)
    return g_strdup ("χ black 0 … white 1");
  /* Enough digits to give the span itself to two. */
  double span = MAX (scale->hi - scale->lo, 1e-9);
  double top = MAX (fabs (scale->lo), fabs (scale->hi));
  int digits = CLAMP ((int) ceil (log10 (MAX (top / span, 1.0))) + 2, 3, 9);
  return g_strdup_printf ("χ black %.*g … white %.*g, stretched", digits, scale->lo,
                          digits, scale->hi);
}

char *
caml_report_sigma_grid_title (const char *name, const CamlSigmaSource *source,
                              const CamlSigmaScale *scale, long step)
{
  g_autofree char *source_text = caml_report_sigma_source_text (source);
  g_autofree char *scale_text = caml_sigma_scale_text (scale);
  if (step < 0)   /* saved weights, step unknown (caml eval) */
    return g_strdup_printf ("%s: σ-maps of %s (%s)", name, source_text, scale_text);
  return g_strdup_printf ("%s, step %ld: σ-maps of %s (%s)", name, step, source_text,
                          scale_text);
}

gboolean
caml_report_write_sigma_grid (const char *path, const CamlSigmaSnapshot *snap,
                              gboolean stretch, const char *name,
                              const CamlSigmaSource *source, GError **error)
{
  g_autoptr (CamlPlotFigure) figure = caml_figure_sigma_grid (snap, stretch, name, source);
  return caml_plot_figure_write (figure, path, error);
}

gboolean
caml_report_write_sigma_eval (const char *dir, const char *name, CamlModel *model,
                              const CamlDataset *set, gboolean stretch, GString *written,
                              double *auc, gboolean *high_on_foreground, GError **error)
{
  *auc = NAN;
  *high_on_foreground = FALSE;
  int layer = caml_report_sigma_layer (model);
  if (layer < 0)
    return TRUE;
  g_autoptr (CamlSigmaSnapshot) all = caml_sigma_snapshot_new (model, layer, set,
                                                               CAML_REPORT_SIGMA_AUC_IMAGES,
                                                               -1, error);
  if (all == NULL)
    return FALSE;
  *auc = caml_sigma_auc (all->images, all->height, all->width, all->maps, all->map_h,
                         all->map_w, all->count, high_on_foreground);
  if (dir == NULL)
    return TRUE;
  g_autofree char *path = g_build_filename (dir, "sigma.png", NULL);
  CamlSigmaSource source;
  caml_report_sigma_source (model, layer, &source);
  if (!caml_report_write_sigma_grid (path, all, stretch, name, &source, error))
    return FALSE;
  g_string_append (written, ", sigma.png");
  return TRUE;
}

gboolean
caml_report_write_sem_curves (const char *path, const double *energies, int n, int kept,
                              double occurrences, const double *pearson_full,
                              const double *pearson_context, double average, double sif,
                              const char *title, GError **error)
{
  g_autofree double *x = g_new (double, MAX (n, 1));
  g_autofree double *y = g_new (double, MAX (n, 1));
  g_autofree double *flat_average = g_new (double, MAX (n, 1));
  g_autofree double *flat_sif = g_new (double, MAX (n, 1));
  for (int i = 0; i < n; i++)
    {
      x[i] = i;
      y[i] = energies[i] / occurrences;
      flat_average[i] = average;
      flat_sif[i] = sif;
    }
  CamlPlotSeries energy_series[] = { { x, y, (size_t) n, "E / occurrences", 0, FALSE } };
  CamlPlotLineOptions energy_opts = {
    .title = title, .x_label = "iteration", .y_label = "energy per word occurrence",
    .log_y = TRUE, .legend = TRUE, .grid = TRUE,
  };
  /* The fit stops at an iteration whose energy did not fall, and does not
   * keep it: marked, not drawn as if it were the result. */
  g_autofree char *rejected_text = g_strdup_printf ("iteration %d: E not lower, not kept", n - 1);
  CamlPlotEvent rejected = { n - 1, rejected_text };
  g_autoptr (CamlPlotLine) energy_plot = caml_plot_line_new (&energy_opts, energy_series, 1,
                                                             &rejected, n - 1 > kept ? 1 : 0);
  if (pearson_full == NULL)
    return caml_plot_write_png (path, CELL_WIDTH + 160, CELL_HEIGHT, caml_plot_line_draw_cb,
                                energy_plot, error);

  CamlPlotSeries pearson_series[] = {
    { x, pearson_full, (size_t) n, "CA-SEM", 1, FALSE },
    { x, pearson_context, (size_t) n, "CA-SEM context", 2, FALSE },
    { x, flat_sif, (size_t) n, "SIF", 3, TRUE },
    { x, flat_average, (size_t) n, "average", 4, TRUE },
  };
  gboolean any = FALSE;   /* Pearson's r is undefined when every cosine is the same */
  for (int i = 0; i < n && !any; i++)
    any = !isnan (pearson_full[i]) || !isnan (pearson_context[i]);
  any |= !isnan (average) || !isnan (sif);
  CamlPlotLineOptions pearson_opts = {
    .title = "sentence similarity", .x_label = "iteration", .y_label = "Pearson r × 100",
    .legend = TRUE, .grid = TRUE,
    .note = any ? NULL : "Pearson's r is undefined: every pair got the same cosine similarity",
  };
  g_autoptr (CamlPlotLine) pearson_plot = caml_plot_line_new (&pearson_opts, pearson_series,
                                                              4, NULL, 0);
  CamlPlotPanelCell cells[] = {
    { caml_plot_line_draw_cb, energy_plot },
    { caml_plot_line_draw_cb, pearson_plot },
  };
  CamlPlotPanel panel = { NULL, cells, 2, 2 };
  return caml_plot_write_png (path, 2 * CELL_WIDTH, CELL_HEIGHT, caml_plot_panel_draw_cb,
                              &panel, error);
}

float *
caml_report_class1_probabilities (CamlModel *model, CamlLossKind loss, const CamlDataset *set, int n)
{
  int d = (int) caml_shape_size (caml_model_output_shape (model));
  if (!((d == 1 && loss == CAML_LOSS_SIGMOID_XENT) || (d == 2 && loss == CAML_LOSS_SOFTMAX_XENT)))
    return NULL;
  g_autofree float *buf = g_new (float, (size_t) MAX (n, 1) * caml_shape_size (&set->x_shape));
  const float *out = caml_model_forward (model, caml_dataset_rows (set, 0, n, buf), n);
  float *p = g_new (float, MAX (n, 1));
  for (int i = 0; i < n; i++)
    p[i] = d == 1 ? caml_sigmoidf (out[i])
                  : 1.0f / (1.0f + expf (out[2 * i] - out[2 * i + 1]));
  return p;
}

int
caml_report_word_chi (CamlModel *model, const CamlVocab *vocab, float *chi)
{
  if (vocab == NULL || model->input.kind != CAML_SHAPE_TOKENS)
    return -1;
  int n = caml_vocab_size (vocab);
  for (int l = 0; l < model->n_layers; l++)
    if (model->layers[l]->ops->word_chi != NULL
        && model->layers[l]->ops->word_chi (model->layers[l], chi, n))
      return l;
  return -1;
}

/* --------------------------------------------------------- per-token gates */

#define TOKEN_BATCH 64
#define WORDS_MEAN_TEXTS 2000   /* test texts a per-position gate is averaged over */

int
caml_report_token_gate_layer (CamlModel *model, const CamlDataset *set)
{
  if (set == NULL || set->n <= 0 || set->tokens == NULL
      || model->input.kind != CAML_SHAPE_TOKENS
      || caml_shape_size (&set->x_shape) != caml_shape_size (&model->input))
    return -1;
  int t = model->input.dims[0];
  g_autofree float *row = g_new (float, caml_shape_size (&set->x_shape));
  caml_model_forward (model, caml_dataset_rows (set, 0, 1, row), 1);
  for (int l = 0; l < model->n_layers; l++)
    {
      CamlLayer *layer = model->layers[l];
      int per = 0;
      if (layer->ops->chi == NULL
          || (layer->in.kind != CAML_SHAPE_TOKENS && layer->in.kind != CAML_SHAPE_SEQUENCE)
          || layer->in.dims[0] != t)
        continue;
      if (layer->ops->chi (layer, &per) != NULL && per == t)
        return l;
    }
  return -1;
}

void
caml_report_token_chi (CamlModel *model, int layer, const CamlDataset *set, int n, float *chi)
{
  int t = model->input.dims[0];
  g_autofree float *buf = g_new (float, caml_shape_size (&set->x_shape) * TOKEN_BATCH);
  for (int start = 0; start < n; start += TOKEN_BATCH)
    {
      int m = MIN (TOKEN_BATCH, n - start);
      caml_model_forward (model, caml_dataset_rows (set, start, m, buf), m);
      int per = 0;
      const float *c = model->layers[layer]->ops->chi (model->layers[layer], &per);
      g_assert (c != NULL && per == t);
      memcpy (chi + (size_t) start * t, c, (size_t) m * t * sizeof (float));
    }
}

void
caml_report_token_chi_means (const CamlDataset *set, int n, int t, const float *chi,
                             int vocab, float *mean)
{
  g_autofree double *sum = g_new0 (double, MAX (vocab, 1));
  g_autofree gint64 *count = g_new0 (gint64, MAX (vocab, 1));
  for (int i = 0; i < n; i++)
    {
      gint64 off = set->offsets[i];
      int len = (int) MIN (set->offsets[i + 1] - off, (gint64) t);
      for (int k = 0; k < len; k++)
        {
          gint32 id = set->tokens[off + k];
          if (id >= 0 && id < vocab)
            {
              sum[id] += chi[(size_t) i * t + k];
              count[id]++;
            }
        }
    }
  for (int id = 0; id < vocab; id++)
    mean[id] = count[id] > 0 ? (float) (sum[id] / (double) count[id]) : NAN;
}

typedef struct {
  const CamlDataset *set;
  gint64             next;   /* index into set->tokens */
  gint64             end;
  gboolean           aligned;
} AlignCheck;

static void
check_token (const char *token, gsize length, gpointer user_data)
{
  AlignCheck *c = user_data;
  if (!c->aligned)
    return;
  if (c->next >= c->end)   /* more words than ids */
    {
      c->aligned = FALSE;
      return;
    }
  g_autofree char *word = g_strndup (token, length);
  int id = caml_vocab_lookup (c->set->vocab, word);
  gint32 have = c->set->tokens[c->next++];
  if (have != (id >= 0 ? id : CAML_TOKEN_OOV))
    c->aligned = FALSE;
}

gboolean
caml_report_text_aligned (const CamlDataset *set, int i)
{
  if (set->texts == NULL || set->tokens == NULL || set->vocab == NULL || i < 0 || i >= set->n)
    return FALSE;
  AlignCheck c = { set, set->offsets[i], set->offsets[i + 1], TRUE };
  caml_tokenize (set->texts[i], -1, check_token, &c);
  return c.aligned;
}

int
caml_report_word_bars (const CamlVocab *vocab, const float *chi, gboolean per_position,
                       int min_count, int n_top, CamlPlotBars **most_free,
                       CamlPlotBars **most_sensitive)
{
  int n = 0;
  g_autofree CamlWordGate *gates = caml_words_rank (vocab, chi, min_count, &n);
  int n_free, n_sensitive;
  caml_words_split (n, n_top, &n_free, &n_sensitive);
  g_autofree const char **labels = g_new (const char *, MAX (n_free + n_sensitive, 1));
  g_autofree double *values = g_new (double, MAX (n_free + n_sensitive, 1));
  for (int k = 0; k < n_free; k++)
    {
      labels[k] = gates[k].word;
      values[k] = gates[k].chi;
    }
  for (int k = 0; k < n_sensitive; k++)
    {
      labels[n_free + k] = gates[n - 1 - k].word;
      values[n_free + k] = gates[n - 1 - k].chi;
    }
  CamlPlotBarsOptions free_opts = { per_position ? "most context-free (mean χ high)"
                                               : "most context-free (χ̃ high)",
                                    CAML_PLOT_COLORMAP_BLUES, 0.0, 1.0 };
  CamlPlotBarsOptions sensitive_opts = { per_position ? "most context-sensitive (mean χ low)"
                                                    : "most context-sensitive (χ̃ low)",
                                         CAML_PLOT_COLORMAP_BLUES, 0.0, 1.0 };
  *most_free = caml_plot_bars_new (&free_opts, labels, values, n_free);
  *most_sensitive = caml_plot_bars_new (&sensitive_opts, labels + n_free, values + n_free,
                                        n_sensitive);
  return n_free;
}

static gboolean write_words (const char *path, const char *png_path, const char *title,
                             CamlModel *model, CamlLossKind loss, const CamlDataset *train,
                             const CamlDataset *test, const char *evaluated_on,
                             const CamlDataConfig *data, int n_samples, int min_count, int n_top,
                             gboolean *written, GError **error);

gboolean
caml_report_write_words (const char *path, const char *png_path, const char *title,
                         CamlModel *model,
                         CamlLossKind loss, const CamlDataset *train,
                         const CamlDataset *test, int n_samples, int min_count, int n_top,
                         gboolean *written, GError **error)
{
  return write_words (path, png_path, title, model, loss, train, test, "test", NULL,
                      n_samples, min_count, n_top, written, error);
}

gboolean
caml_report_write_words_on (const char *path, const char *png_path, const char *title,
                            CamlModel *model, const CamlExperiment *exp,
                            const CamlDataset *train, const CamlDataset *test, int n_samples,
                            int min_count, int n_top, gboolean *written, GError **error)
{
  return write_words (path, png_path, title, model, exp->loss, train, test,
                      caml_report_evaluated_on (exp), &exp->data, n_samples, min_count, n_top,
                      written, error);
}

static gboolean
write_words (const char *path, const char *png_path, const char *title, CamlModel *model,
             CamlLossKind loss, const CamlDataset *train, const CamlDataset *test,
             const char *evaluated_on, const CamlDataConfig *data, int n_samples, int min_count,
             int n_top, gboolean *written, GError **error)
{
  *written = FALSE;
  if (train->vocab == NULL || model->input.kind != CAML_SHAPE_TOKENS)
    return TRUE;
  int vocab = caml_vocab_size (train->vocab);
  g_autofree float *chi = g_new (float, MAX (vocab, 1));
  int layer = caml_report_word_chi (model, train->vocab, chi);
  g_autofree float *token_chi = NULL;
  g_autofree char *chi_source = NULL;
  g_autofree char *texts_read = NULL;   /* per-position gates: what the means are over */
  int steps = model->input.dims[0];
  n_samples = test->texts != NULL ? MIN (n_samples, test->n) : 0;
  g_autofree gboolean *aligned = g_new0 (gboolean, MAX (n_samples, 1));
  if (layer < 0)
    {
      /* A per-position gate: its value at every word of the first test texts
       * (n_mean ≥ n_samples), and each word's mean over them. */
      if ((layer = caml_report_token_gate_layer (model, test)) < 0)
        return TRUE;
      int n_mean = MIN (test->n, WORDS_MEAN_TEXTS);
      token_chi = g_new (float, (size_t) MAX (n_mean, 1) * steps);
      caml_report_token_chi (model, layer, test, n_mean, token_chi);
      caml_report_token_chi_means (test, n_mean, steps, token_chi, vocab, chi);
      texts_read = n_mean == 1 ? g_strdup_printf ("the first %s text", evaluated_on)
                   : g_strdup_printf ("the first %d %s texts", n_mean, evaluated_on);
      chi_source = g_strdup_printf ("its occurrences in %s", texts_read);
      for (int i = 0; i < n_samples; i++)
        aligned[i] = caml_report_text_aligned (test, i);
    }

  g_autofree float *probabilities = caml_report_class1_probabilities (model, loss, test,
                                                                       n_samples);
  g_autofree char *layer_name = g_strdup_printf ("layer %d (%s)", layer,
                                                 model->layers[layer]->ops->title);
  CamlWordsPage page = {
    .title = title, .layer = layer_name, .vocab = train->vocab, .chi = chi,
    .min_count = min_count, .n_top = n_top, .samples_from = evaluated_on,
    .texts = test->texts, .labels = test->n_classes > 0 ? test->y : NULL,
    .probabilities = probabilities, .n_samples = n_samples, .max_words = 200,
    .per_position = token_chi != NULL, .chi_source = chi_source,
    .token_chi = token_chi, .token_aligned = aligned, .token_steps = steps,
    .max_tokens = data != NULL ? data->max_tokens : 0,
    .unique_tokens = data != NULL && data->unique_tokens, .ngrams = data != NULL ? data->ngrams : 0,
  };
  g_autofree char *html = caml_words_page_html (&page);
  if (!g_file_set_contents_full (path, html, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644, error))
    return FALSE;
  *written = TRUE;
  if (png_path == NULL)
    return TRUE;

  /* The two lists as bars, χ̃ on [0, 1] in the page's colours. */
  CamlFigureWords bars = {
    .vocab = train->vocab, .chi = chi, .per_position = page.per_position,
    .texts_read = texts_read, .layer = layer_name, .title = title,
    .min_count = min_count, .n_top = n_top,
  };
  g_autoptr (CamlPlotFigure) figure = caml_figure_words (&bars, NULL);
  return caml_plot_figure_write (figure, png_path, error);
}
