/* caml-sweep-view.h — the Sweep page: the session's sweep as it goes — a
 * progress line with Cancel, the metric against the first setting (Fig. 17,
 * the figure sweep.png is), parallel coordinates of settings against
 * results with brushable axes, and a table of every run, queued, training
 * or ended. A point, a line or a row activated opens that run's folder
 * ("open-run", the folder). Before any sweep: what a sweep is, and New
 * Sweep. */
#pragma once

#include <gtk/gtk.h>

#include "caml-session.h"
#include "caml-plot-view.h"
#include "caml-parallel-view.h"

G_BEGIN_DECLS

#define CAML_TYPE_SWEEP_VIEW (caml_sweep_view_get_type ())
G_DECLARE_FINAL_TYPE (CamlSweepView, caml_sweep_view, CAML, SWEEP_VIEW, GtkBox)

void              caml_sweep_view_set_session (CamlSweepView *self, CamlSession *session);
/* For tests. */
CamlPlotView     *caml_sweep_view_get_plot (CamlSweepView *self);
CamlParallelView *caml_sweep_view_get_parallel (CamlSweepView *self);
GtkColumnView    *caml_sweep_view_get_table (CamlSweepView *self);
const char       *caml_sweep_view_get_status (CamlSweepView *self);
/* The folder of the run nearest data point (x, y) of the plot shown
 * (new), or NULL; what a click there opens. */
char             *caml_sweep_view_run_at (CamlSweepView *self, double x, double y);
/* Opens run i's folder, as a click on its point, line or row does. */
void              caml_sweep_view_open_run (CamlSweepView *self, int run);

G_END_DECLS
