/* report.h — the plots and tables a run leaves behind, drawn with the same
 * Cairo code the workbench shows live. */
#pragma once

#include "caml.h"

/* loss.png: per-step training loss (smoothed) and the evaluated test loss
 * (and test accuracy on a second plot for classification). */
gboolean caml_report_write_loss (const char *path, const CamlEvalRow *rows, int n_rows,
                                 const float *losses, long n_steps,
                                 gboolean classification, const char *title,
                                 GError **error);

/* For models with 2 inputs and 1 output: surface.png (ground truth when the
 * data has one, the fitted surface with the training points) and chi.png
 * (χ of every gated layer), over exp->plot_domain. Writes nothing and
 * returns TRUE for other models. */
gboolean caml_report_write_surfaces (const char *dir, const CamlExperiment *exp,
                                     CamlModel *model, const CamlDataset *train,
                                     GError **error);

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

/* A grid of the snapshot's images, each beside its σ-map (grey: χ = 0 black,
 * χ = 1 white), 8 pairs a row. */
gboolean caml_report_write_sigma_grid (const char *path, const CamlSigmaSnapshot *snap,
                                       const char *title, GError **error);

/* metrics.csv: step, train_loss, test_loss, test_mse or test_accuracy, seconds. */
gboolean caml_report_write_metrics (const char *path, const CamlEvalRow *rows, int n_rows,
                                    gboolean classification, GError **error);

/* words.html (words-page.h) for a model with a per-word gate (the first
 * layer whose word_chi gives one): n_samples test texts shaded by χ̃ with
 * the model's P(class 1), and the n_top most and least context-free words
 * among those seen min_count times in training; and, if png_path is not
 * NULL, the two lists drawn as bars (words.png). Sets *written to whether
 * the model has such a layer (and the data a vocabulary); writes nothing if
 * not. */
gboolean caml_report_write_words (const char *path, const char *png_path, const char *title,
                                  CamlModel *model,
                                  CamlLossKind loss, const CamlDataset *train,
                                  const CamlDataset *test, int n_samples, int min_count,
                                  int n_top, gboolean *written, GError **error);
