/* caml-surface-page.h — the surface page of a model of two inputs and one
 * output: the fitted surface and χ of each gate (caml_figure_surface,
 * caml_figure_chi), and, in the parts view it is given, the parts of the
 * CA-NN layer chosen (caml_figure_parts): rebuilt when the session's
 * surface changes. */
#pragma once

#include <gtk/gtk.h>

#include "caml-plot-view.h"
#include "caml-session.h"

G_BEGIN_DECLS

#define CAML_TYPE_SURFACE_PAGE (caml_surface_page_get_type ())
G_DECLARE_FINAL_TYPE (CamlSurfacePage, caml_surface_page, CAML, SURFACE_PAGE, GtkBox)

/* Follows session (a reference is kept; NULL: none). */
void          caml_surface_page_set_session (CamlSurfacePage *self, CamlSession *session);
/* The view the parts are drawn into (borrowed: it lives on another page
 * of the plots), and whether that page is shown: the parts are prepared
 * with every surface only then (four more maps each update). */
void          caml_surface_page_set_parts_view (CamlSurfacePage *self, CamlPlotView *view);
void          caml_surface_page_set_parts_shown (CamlSurfacePage *self, gboolean shown);
/* Prepares the parts now (the page is shown, or they are exported). */
void          caml_surface_page_rebuild_parts (CamlSurfacePage *self);
/* No surface: why, in place of both maps. */
void          caml_surface_page_show_placeholder (CamlSurfacePage *self, const char *why);
CamlPlotView *caml_surface_page_get_surface_view (CamlSurfacePage *self);
CamlPlotView *caml_surface_page_get_chi_view (CamlSurfacePage *self);

G_END_DECLS
