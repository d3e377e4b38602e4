/* caml-inspect-page.h — the Inspect page: the run's layers as a table
 * (index, type, output shape, parameters and, for a layer with a gate, the
 * mean and standard deviation of χ over the first test samples) and the χ
 * histogram of the layer selected, both following the session's layer
 * statistics (caml_session_get_layer_stats): the untrained model before
 * Train, then live while it trains. */
#pragma once

#include <gtk/gtk.h>

#include "caml-plot-view.h"
#include "caml-session.h"

G_BEGIN_DECLS

#define CAML_TYPE_INSPECT_PAGE (caml_inspect_page_get_type ())
G_DECLARE_FINAL_TYPE (CamlInspectPage, caml_inspect_page, CAML, INSPECT_PAGE, GtkBox)

/* Follows session (a reference is kept; NULL: none). */
void           caml_inspect_page_set_session (CamlInspectPage *self, CamlSession *session);
GtkColumnView *caml_inspect_page_get_table (CamlInspectPage *self);
CamlPlotView  *caml_inspect_page_get_histogram (CamlInspectPage *self);
/* The layer whose histogram is shown, or -1. */
int            caml_inspect_page_get_layer (CamlInspectPage *self);
void           caml_inspect_page_select_layer (CamlInspectPage *self, int layer);

G_END_DECLS
