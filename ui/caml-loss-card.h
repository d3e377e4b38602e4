/* caml-loss-card.h — the loss card: the session's run's loss by step, with
 * the previous run's and the baseline's curves and the live changes marked
 * (caml_figure_loss), rebuilt when the session's curves change; a hover
 * read-out of the step under the pointer. Its figure's second plot, the
 * accuracy, is shown by whoever listens to "rebuilt". */
#pragma once

#include <gtk/gtk.h>

#include "caml-plot-view.h"
#include "caml-session.h"
#include "figures.h"

G_BEGIN_DECLS

#define CAML_TYPE_LOSS_CARD (caml_loss_card_get_type ())
G_DECLARE_FINAL_TYPE (CamlLossCard, caml_loss_card, CAML, LOSS_CARD, GtkBox)

/* Follows session (a reference is kept; NULL: none). */
void          caml_loss_card_set_session (CamlLossCard *self, CamlSession *session);
/* The trend's smoothing (the live card's EMA factor) and the axis. */
void          caml_loss_card_set_smoothing (CamlLossCard *self, double smoothing);
void          caml_loss_card_set_log_scale (CamlLossCard *self, gboolean log_scale);
/* A kept run ticked in the Runs list has an accuracy curve to overlay. */
gboolean        caml_loss_card_overlays_accuracy (CamlLossCard *self);
CamlPlotView *caml_loss_card_get_view (CamlLossCard *self);
/* Builds the loss figure again now (and says so: "rebuilt"). */
void          caml_loss_card_rebuild (CamlLossCard *self);
/* The figure of the session's curves: live as the card shows it, or as a
 * file (every step, smoothed as caml train's loss.png). */
CamlPlotFigure *caml_loss_card_build_figure (CamlLossCard *self, CamlFigureDetail detail);
/* The steps the card spans (what the plots beside it line up with). */
void          caml_loss_card_get_span (CamlLossCard *self, double *first, double *last);

G_END_DECLS
