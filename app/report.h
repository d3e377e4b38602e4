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

/* metrics.csv: step, train_loss, test_loss, test_mse or test_accuracy, seconds. */
gboolean caml_report_write_metrics (const char *path, const CamlEvalRow *rows, int n_rows,
                                    gboolean classification, GError **error);
