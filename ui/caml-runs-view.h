/* caml-runs-view.h — the Runs page: the session's kept runs (its "runs"
 * list model of CamlRunRecord) as a table — a tick to overlay a run's
 * curves on the loss plot, its name (editable), what differs from the run
 * before, its final figures and CA − baseline — with a delete button per
 * row, Delete All and Export Runs… (win.export-runs). */
#pragma once

#include <gtk/gtk.h>

#include "caml-session.h"

G_BEGIN_DECLS

#define CAML_TYPE_RUNS_VIEW (caml_runs_view_get_type ())
G_DECLARE_FINAL_TYPE (CamlRunsView, caml_runs_view, CAML, RUNS_VIEW, GtkBox)

/* Follows session's runs (a reference is kept; NULL: none). */
void           caml_runs_view_set_session (CamlRunsView *self, CamlSession *session);
GtkColumnView *caml_runs_view_get_table (CamlRunsView *self);

G_END_DECLS
