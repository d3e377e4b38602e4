/* report.h — the plots and tables a run leaves behind, drawn with the same
 * Cairo code the workbench shows live. */
#pragma once

#include "caml.h"
#include <json-glib/json-glib.h>

typedef struct _CamlPlotBars CamlPlotBars;   /* caml-plot.h */
typedef struct _CamlPlotLine CamlPlotLine;   /* caml-plot.h */

/* What a run of exp evaluates on: "validation" when data.validation_fraction
 * holds part of the training set out (caml_experiment_load_datasets then
 * returns that part as the "test" set, and every test_* figure is its),
 * else "test". The labels of plots, pages and printed figures. */
const char *caml_report_evaluated_on (const CamlExperiment *exp);

/* loss.png: the loss figure of a run (caml_figure_loss, figures.h) as
 * caml train writes it; losses[i] is step i + 1's, evaluated_on "test" or
 * "validation" (caml_report_evaluated_on), divergence may be NULL. */
gboolean caml_report_write_loss (const char *path, const CamlEvalRow *rows, int n_rows,
                                 const float *losses, long n_steps,
                                 const CamlDivergence *divergence,
                                 gboolean classification, const char *evaluated_on,
                                 const char *title, GError **error);
/* For models with 2 inputs and 1 output: surface.png, chi.png (χ of every
 * gated layer) and, when a layer is a CA-NN, parts.png (the last CA-NN's),
 * over exp->plot_domain, as figures.h draws them. Writes nothing and
 * returns TRUE for other models. Appends ", NAME" to written (may be NULL)
 * for each file written. */
gboolean caml_report_write_surfaces (const char *dir, const CamlExperiment *exp,
                                     CamlModel *model, const CamlDataset *train,
                                     GString *written, GError **error);

/* The CA-NN layer whose parts are drawn: `preferred` when it is one (a layer
 * whose gate can be held, see caml_model_sample_grid_parts), else the last
 * one, else -1. */
int caml_report_parts_layer (const CamlModel *model, int preferred);

/* The shares of the two parts in the fit, over n grid values: the
 * context-free part free_share = χ·f₁ and the context-sensitive part
 * sensitive_share = (1 − χ)·f₀, where f₁ (free_part) and f₀
 * (sensitive_part) are the outputs with the gate held at 1 and at 0
 * (outputs may alias inputs). Returns the largest
 * |fit − (free_share + sensitive_share)|: zero up to rounding when the layers
 * after the gate are affine, so the two maps add up to the fitted surface. */
double caml_report_parts_shares (const float *chi, const float *sensitive_part,
                                 const float *free_part, const float *fit, size_t n,
                                 float *sensitive_share, float *free_share);

/* Whether the shares add up to the fit (the residual above is below a
 * thousandth of the fit's range, or 1e-5). */
gboolean caml_report_parts_add_up (double residual, const float *fit, size_t n);

/* σ-maps of some test images at one step of a run. */
typedef struct {
  long   step;
  int    count;        /* images */
  int    height, width;
  int    map_h, map_w;
  float *images;       /* (count, height, width) */
  float *maps;         /* (count, map_h, map_w) */
} CamlSigmaSnapshot;

/* Takes the σ-maps of test images [0, count) from layer `layer` of model. */
CamlSigmaSnapshot *caml_sigma_snapshot_new (CamlModel *model, int layer, const CamlDataset *set,
                                            int count, long step, GError **error);
void caml_sigma_snapshot_free (CamlSigmaSnapshot *snap);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CamlSigmaSnapshot, caml_sigma_snapshot_free)

/* The first layer with a σ-map (a convolutional CA layer), or -1. */
int caml_report_sigma_layer (const CamlModel *model);

/* Which σ-map a layer gives: layer index and type, and for a block of gated
 * sublayers (a layer with a "sublayers" option: ca_res_conv) the sublayer
 * whose gate it is — the last, the one that decides the block's output
 * (its CamlLayerOps.chi); sublayer and n_sublayers are 0 otherwise. */
typedef struct {
  int         layer;
  const char *type;         /* the layer's registry name, static */
  int         sublayer;     /* 1 … n_sublayers */
  int         n_sublayers;
} CamlSigmaSource;

void caml_report_sigma_source (const CamlModel *model, int layer, CamlSigmaSource *source);

/* "layer 0 (ca_cnn)", "layer 1 (ca_res_conv), sublayer 2 of 2". */
char *caml_report_sigma_source_text (const CamlSigmaSource *source);

/* The grey scale of σ-maps: χ = lo black, χ = hi white. */
typedef struct {
  double lo, hi;
  gboolean stretched;  /* lo, hi from the maps shown, not 0 and 1 */
} CamlSigmaScale;

/* Tiles of the snapshot's first `count` images, each followed by its σ-map
 * resized to the image's (each image pixel takes the map pixel that covers
 * it): (2·count, height, width), values in [0, 1] for the grey colormap.
 * Without stretch χ is shown as it is (0 black, 1 white). With stretch the
 * grey scale spans the maps' own range, from the 1st to the 99th
 * percentile of their values (at least 0.001 wide), clamped beyond it, so
 * that maps whose χ stays near 0.5 still show their structure; `scale`
 * says what was used, for the title. */
float *caml_sigma_tiles (const CamlSigmaSnapshot *snap, int count, gboolean stretch,
                         CamlSigmaScale *scale);

/* "χ black 0 … white 1", or for a stretched scale "χ black 0.412 … white
 * 0.803, stretched". */
char *caml_sigma_scale_text (const CamlSigmaScale *scale);

/* The title of a σ-map grid: "NAME, step N: σ-maps of SOURCE (SCALE)",
 * SOURCE as caml_report_sigma_source_text; without the step when it is
 * negative (saved weights). The step comes first: a card too narrow for
 * the whole title cuts its end. */
char *caml_report_sigma_grid_title (const char *name, const CamlSigmaSource *source,
                                    const CamlSigmaScale *scale, long step);

/* The σ-map grid of the snapshot (caml_figure_sigma_grid) as a PNG. */
gboolean caml_report_write_sigma_grid (const char *path, const CamlSigmaSnapshot *snap,
                                       gboolean stretch, const char *name,
                                       const CamlSigmaSource *source, GError **error);

/* The test images a run's (and `caml eval`'s) sigma_auc is measured over,
 * at most. */
#define CAML_REPORT_SIGMA_AUC_IMAGES 1000

/* For `caml eval`: when the model has σ-maps (caml_report_sigma_layer), sets
 * *auc and *high_on_foreground from the first CAML_REPORT_SIGMA_AUC_IMAGES images of set
 * (caml_sigma_auc), and when dir is not NULL writes sigma.png there (the
 * first 64 beside their σ-maps, no step in the title) and appends
 * ", sigma.png" to written. *auc is NaN when the model has no σ-maps. */
gboolean caml_report_write_sigma_eval (const char *dir, const char *name, CamlModel *model,
                                       const CamlDataset *set, gboolean stretch,
                                       GString *written, double *auc,
                                       gboolean *high_on_foreground, GError **error);

/* key: value in a JSON object being built; JSON has no inf or nan, so a
 * figure that is not finite (not measured) is null. */
void caml_report_json_add_number (JsonBuilder *b, const char *key, double value);
/* The document b has built, pretty-printed with a final newline, written
 * with caml_file_replace. */
gboolean caml_report_json_write (JsonBuilder *b, const char *path, GError **error);

/* metrics.csv: step, train_loss, test_loss, test_mse or test_accuracy, seconds. */
gboolean caml_report_write_metrics (const char *path, const CamlEvalRow *rows, int n_rows,
                                    gboolean classification, GError **error);

/* energy.png: CA-SEM's energy per word occurrence (E / Σ n_w) by iteration
 * (0 = the initial v0), log scale; an iteration after the kept ones (the
 * one that stopped the fit) is marked as not kept. Beside it, when
 * pearson_full is not NULL, Pearson r × 100 of both sentence forms by
 * iteration (n values each, NaN where none) with the average's and SIF's as
 * flat dashed lines. */
gboolean caml_report_write_sem_curves (const char *path, const double *energies, int n,
                                       int kept, double occurrences, const double *pearson_full,
                                       const double *pearson_context, double average,
                                       double sif, const char *title, GError **error);

/* P(class 1) of samples [0, n) of set under the model (g_free it), or NULL
 * when the output is not one logit (sigmoid) or two classes (softmax). */
float *caml_report_class1_probabilities (CamlModel *model, CamlLossKind loss,
                                         const CamlDataset *set, int n);

/* χ̃ of every word of vocab (chi: caml_vocab_size of them) from the first
 * layer whose word_chi gives one; returns that layer, or -1 (no such layer,
 * no vocabulary, or the model does not read tokens). */
int caml_report_word_chi (CamlModel *model, const CamlVocab *vocab, float *chi);

/* A per-position gate: the first layer reading the token input step by step
 * (tokens or a (T, D) sequence of the model's T) whose CamlLayerOps.chi
 * gives one value per step — CA-ATT's χ_i, CA-RNN's f_t (and CA-BSFE's χ̃,
 * which caml_report_word_chi reads directly). Such a gate may depend on the
 * word's context (CA-RNN; CA-ATT with the mean of the words as its query or
 * after a recurrent layer) or on the word alone (CA-ATT with a learned
 * query over word vectors). Finds it by forwarding the first sample of set.
 * -1 when there is none, or the model does not read set's tokens. */
int caml_report_token_gate_layer (CamlModel *model, const CamlDataset *set);
/* That layer's gates on samples [0, n) of set, forwarded in small batches:
 * chi (n, T), T the model's steps; 0 past a sample's end. */
void caml_report_token_chi (CamlModel *model, int layer, const CamlDataset *set, int n,
                            float *chi);
/* Each word's mean gate over its occurrences (within the first t tokens) in
 * samples [0, n) of set, from chi (n, t): mean (vocab), NaN for a word that
 * does not occur there. */
void caml_report_token_chi_means (const CamlDataset *set, int n, int t, const float *chi,
                                  int vocab, float *mean);
/* Whether the words of sample i's text, split by caml_tokenize, are the
 * first of its token ids, in order — then the gate at position k is that of
 * the text's k-th word. Holds with ngrams (their ids follow the words), not
 * with unique_tokens when a word repeats. */
gboolean caml_report_text_aligned (const CamlDataset *set, int i);

/* The two lists words.png draws, built with caml_words_rank: the n_top most
 * context-free words (χ̃ highest) and the n_top most context-sensitive
 * (lowest) among those seen min_count times, as bars on [0, 1] with light =
 * context-free; `per_position`: chi are the mean gates of a per-position gate
 * (the titles say so). Fewer than 2 × n_top words are split between the
 * lists (caml_words_split), so no word is in both. Returns the length of the
 * first, the longer (0: empty plots). */
int caml_report_word_bars (const CamlVocab *vocab, const float *chi, gboolean per_position,
                           int min_count, int n_top, CamlPlotBars **most_free,
                           CamlPlotBars **most_sensitive);

/* words.html (words-page.h) for a model with a per-word gate (the first
 * layer whose word_chi gives one) or else a per-position gate
 * (caml_report_token_gate_layer): n_samples test texts shaded by χ̃ — or
 * word by word by the gate at each position — with the model's P(class 1),
 * and the n_top most and least context-free words among those seen
 * min_count times in training (for a per-position gate by their mean χ over
 * the first 2,000 test texts); and, if png_path is not NULL, the two lists
 * drawn as bars (words.png). The texts are called test texts. Sets *written to whether the model has such a
 * layer (and the data a vocabulary); writes nothing if not. */
gboolean caml_report_write_words (const char *path, const char *png_path, const char *title,
                                  CamlModel *model,
                                  CamlLossKind loss, const CamlDataset *train,
                                  const CamlDataset *test, int n_samples, int min_count,
                                  int n_top, gboolean *written, GError **error);
/* The same for a run of exp: test is the held-out set exp evaluates on
 * (caml_report_evaluated_on), which the page and words.png name, and words
 * past exp's data.max_tokens, which the model did not read, are grey. */
gboolean caml_report_write_words_on (const char *path, const char *png_path,
                                     const char *title, CamlModel *model,
                                     const CamlExperiment *exp, const CamlDataset *train,
                                     const CamlDataset *test, int n_samples, int min_count,
                                     int n_top, gboolean *written, GError **error);
