/* caml-sigma-page.h — the σ-map page of an image model with a
 * convolutional CA layer: the grid of a snapshot (caml_figure_sigma_grid),
 * a scrubber through the snapshots the run keeps — at its right end the
 * grid follows training — and the snapshots' AUC by step
 * (caml_figure_sigma_auc) over the steps the loss card spans. */
#pragma once

#include <gtk/gtk.h>

#include "caml-plot-view.h"
#include "caml-session.h"

G_BEGIN_DECLS

#define CAML_TYPE_SIGMA_PAGE (caml_sigma_page_get_type ())
G_DECLARE_FINAL_TYPE (CamlSigmaPage, caml_sigma_page, CAML, SIGMA_PAGE, GtkBox)

/* Follows session (a reference is kept; NULL: none). */
void          caml_sigma_page_set_session (CamlSigmaPage *self, CamlSession *session);
/* The grey scale over the maps' own range (caml_sigma_tiles). */
void          caml_sigma_page_set_stretch (CamlSigmaPage *self, gboolean stretch);
/* The steps the AUC spans, those of the loss beside it. */
void          caml_sigma_page_set_span (CamlSigmaPage *self, double first, double last);
/* Beside the grid, under the AUC: where a card can go (the accuracy). */
GtkBox       *caml_sigma_page_get_side (CamlSigmaPage *self);
CamlPlotView *caml_sigma_page_get_view (CamlSigmaPage *self);
CamlPlotView *caml_sigma_page_get_auc_view (CamlSigmaPage *self);
GtkRange     *caml_sigma_page_get_scrubber (CamlSigmaPage *self);

G_END_DECLS
