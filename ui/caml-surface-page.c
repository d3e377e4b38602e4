/* caml-surface-page.c — the surface page (caml-surface-page.h). */
#include "caml-surface-page.h"
#include "figures.h"

struct _CamlSurfacePage {
  GtkBox parent_instance;

  /* template widgets */
  GtkGrid      *grid;
  CamlPlotView *surface_view;
  CamlPlotView *chi_view;

  /* owned */
  CamlSession  *session;
  gboolean      parts_shown;

  /* borrowed */
  CamlPlotView *parts_view;
};

G_DEFINE_FINAL_TYPE (CamlSurfacePage, caml_surface_page, GTK_TYPE_BOX)

/* The plane the run's surface, χ and parts maps cover. */
static CamlFigurePlane
run_plane (CamlSurfacePage *self)
{
  CamlRun *run = caml_session_peek_run (self->session);
  return (CamlFigurePlane) { caml_run_get_experiment (run), caml_run_get_train (run),
                             CAML_FIGURE_GRID };
}

void
caml_surface_page_rebuild_parts (CamlSurfacePage *self)
{
  if (self->parts_view == NULL || self->session == NULL)
    return;
  CamlRun *run = caml_session_peek_run (self->session);
  const float *chi = NULL, *sensitive_part = NULL, *free_part = NULL;
  const float *fit = caml_session_get_surface (self->session, &chi, &sensitive_part,
                                               &free_part);
  int layer = caml_session_get_parts_layer (self->session);
  size_t cells = (size_t) CAML_FIGURE_GRID * CAML_FIGURE_GRID;
  const float *parts_chi = NULL;

  int n_chi = run != NULL && fit != NULL ? caml_run_get_n_chi (run) : 0;
  for (int k = 0; k < n_chi && k < 4; k++)
    if (caml_run_get_chi_layer (run, k, NULL) == layer)
      parts_chi = chi + k * cells;
  if (parts_chi == NULL)
    {
      caml_plot_view_clear (self->parts_view);
      caml_plot_view_set_placeholder (self->parts_view, "this model has no CA-NN layer");
      return;
    }
  CamlFigurePlane plane = run_plane (self);
  g_autoptr (CamlPlotFigure) parts = caml_figure_parts (&plane, layer, fit, parts_chi,
                                                        sensitive_part, free_part);
  caml_plot_view_set_figure (self->parts_view, parts, 0, 4);
}

/* The surface and χ from the session's copies of the grids. */
static void
rebuild (CamlSurfacePage *self)
{
  CamlRun *run = caml_session_peek_run (self->session);
  const float *chi_maps = NULL;
  const float *fit = caml_session_get_surface (self->session, &chi_maps, NULL, NULL);
  if (run == NULL || fit == NULL)
    return;
  CamlFigurePlane plane = run_plane (self);
  int n_chi = MIN (caml_run_get_n_chi (run), 4);

  /* The card shows the fitted surface, the figure's last map (an export
   * writes the ground truth beside it, as caml train's surface.png). */
  g_autoptr (CamlPlotFigure) surface = caml_figure_surface (&plane, fit);
  caml_plot_view_set_figure (self->surface_view, surface,
                             caml_plot_figure_get_n_plots (surface) - 1, 1);
  if (n_chi == 0)
    {
      caml_plot_view_clear (self->chi_view);
      caml_plot_view_set_placeholder (self->chi_view, "this model has no per-sample gate χ");
    }
  else
    {
      int layers[4];
      const char *titles[4];
      for (int k = 0; k < n_chi; k++)
        layers[k] = caml_run_get_chi_layer (run, k, &titles[k]);
      g_autoptr (CamlPlotFigure) chi = caml_figure_chi (&plane, n_chi, layers, titles, chi_maps);
      caml_plot_view_set_figure (self->chi_view, chi, 0, n_chi);
    }
  if (self->parts_shown)
    caml_surface_page_rebuild_parts (self);
}

/* Every map gets the same width: the χ view spans one column per gate. */
static void
set_chi_columns (CamlSurfacePage *self, int n)
{
  g_object_ref (self->chi_view);
  gtk_grid_remove (self->grid, GTK_WIDGET (self->chi_view));
  gtk_grid_attach (self->grid, GTK_WIDGET (self->chi_view), 1, 0, MAX (n, 1), 1);
  g_object_unref (self->chi_view);
}

void
caml_surface_page_show_placeholder (CamlSurfacePage *self, const char *why)
{
  set_chi_columns (self, 1);
  caml_plot_view_clear (self->surface_view);
  caml_plot_view_clear (self->chi_view);
  caml_plot_view_set_placeholder (self->surface_view, why);
  caml_plot_view_set_placeholder (self->chi_view, why);
}

static void
on_progress (CamlSession *session, guint what, CamlSurfacePage *self)
{
  CamlRun *run = caml_session_peek_run (session);

  if ((what & CAML_SESSION_NEW_RUN) && !caml_run_has_surface (run))
    caml_surface_page_show_placeholder (self, "surfaces are drawn for 2-D → 1-D regression");
  else if (what & CAML_SESSION_NEW_RUN)
    set_chi_columns (self, caml_run_get_n_chi (run));
  if (what & CAML_SESSION_SURFACE)
    rebuild (self);
}

void
caml_surface_page_set_session (CamlSurfacePage *self, CamlSession *session)
{
  g_return_if_fail (CAML_IS_SURFACE_PAGE (self));
  if (self->session != NULL)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_set_object (&self->session, session);
  if (session != NULL)
    g_signal_connect (session, "progress", G_CALLBACK (on_progress), self);
}

void
caml_surface_page_set_parts_view (CamlSurfacePage *self, CamlPlotView *view)
{
  self->parts_view = view;
}

void
caml_surface_page_set_parts_shown (CamlSurfacePage *self, gboolean shown)
{
  self->parts_shown = shown;
}

CamlPlotView *
caml_surface_page_get_surface_view (CamlSurfacePage *self)
{
  return self->surface_view;
}

CamlPlotView *
caml_surface_page_get_chi_view (CamlSurfacePage *self)
{
  return self->chi_view;
}

static void
caml_surface_page_dispose (GObject *object)
{
  CamlSurfacePage *self = CAML_SURFACE_PAGE (object);

  caml_surface_page_set_session (self, NULL);
  self->parts_view = NULL;
  gtk_widget_dispose_template (GTK_WIDGET (self), CAML_TYPE_SURFACE_PAGE);
  G_OBJECT_CLASS (caml_surface_page_parent_class)->dispose (object);
}

static void
caml_surface_page_class_init (CamlSurfacePageClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = caml_surface_page_dispose;
  g_type_ensure (CAML_TYPE_PLOT_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/caml/Workbench/ui/caml-surface-page.ui");
  gtk_widget_class_bind_template_child (widget_class, CamlSurfacePage, grid);
  gtk_widget_class_bind_template_child (widget_class, CamlSurfacePage, surface_view);
  gtk_widget_class_bind_template_child (widget_class, CamlSurfacePage, chi_view);
}

static void
caml_surface_page_init (CamlSurfacePage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}
