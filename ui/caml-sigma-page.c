/* caml-sigma-page.c — the σ-map page (caml-sigma-page.h). */
#include <math.h>

#include "caml-sigma-page.h"
#include "figures.h"

struct _CamlSigmaPage {
  GtkBox parent_instance;

  /* template widgets */
  CamlPlotView *sigma_view;
  GtkScale     *sigma_scale;
  GtkBox       *sigma_side;
  CamlPlotView *sigma_auc_view;

  /* owned */
  CamlSession  *session;
  gboolean      stretch;
  double        first, last;   /* the steps the AUC spans */
  int           shown;         /* index of the snapshot in the grid, -1 none */
  gboolean      follow;        /* the scrubber sits at the latest snapshot */
  gboolean      syncing;       /* the scrubber is being set */
};

G_DEFINE_FINAL_TYPE (CamlSigmaPage, caml_sigma_page, GTK_TYPE_BOX)

/* The σ-map AUC by step, spanning the run as the loss does. */
/* The σ-map snapshot nearest the pointer: its step and AUC. */
static char *
hover_auc (CamlPlotView *view, double x, double y, gpointer user_data)
{
  CamlSigmaPage *self = user_data;
  CamlRun *run = self->session != NULL ? caml_session_peek_run (self->session) : NULL;
  if (run == NULL || !caml_run_has_sigma (run) || caml_plot_view_get_line (view) == NULL)
    return NULL;
  g_autofree double *steps = NULL, *auc = NULL;
  int m = caml_run_copy_sigma_auc (run, &steps, &auc);
  int nearest = -1;
  for (int i = 0; i < m; i++)
    if (nearest < 0 || fabs (steps[i] - x) < fabs (steps[nearest] - x))
      nearest = i;
  return nearest < 0 ? NULL : g_strdup_printf ("step %.0f  σ-map AUC %.4f", steps[nearest],
                                               auc[nearest]);
}

static void
rebuild_auc (CamlSigmaPage *self)
{
  g_autofree double *steps = NULL, *auc = NULL;
  int m = caml_run_copy_sigma_auc (caml_session_peek_run (self->session), &steps, &auc);
  g_autoptr (CamlPlotFigure) figure =
    caml_figure_sigma_auc (steps, auc, m, self->first, self->last,
                           caml_session_get_marked_step (self->session));
  caml_plot_view_set_figure (self->sigma_auc_view, figure, 0, 1);
}

/* The scrubber spans the snapshots kept; at its right end it follows the
 * latest. Builds the grid of the selected snapshot and the AUC curve. */
static void
rebuild (CamlSigmaPage *self, gboolean new_data)
{
  GtkAdjustment *adj = gtk_range_get_adjustment (GTK_RANGE (self->sigma_scale));
  CamlRun *run = caml_session_peek_run (self->session);
  int n = caml_session_get_sigma_count (self->session);

  self->syncing = TRUE;
  gtk_adjustment_set_upper (adj, MAX (n - 1, 0));
  if (self->follow || n == 0)
    gtk_adjustment_set_value (adj, MAX (n - 1, 0));
  self->syncing = FALSE;
  gtk_widget_set_sensitive (GTK_WIDGET (self->sigma_scale), n > 1);
  if (n == 0)
    {
      caml_plot_view_clear (self->sigma_view);
      caml_plot_view_set_placeholder (self->sigma_view, "σ-maps appear while training");
      return;
    }
  int index = CLAMP ((int) lround (gtk_adjustment_get_value (adj)), 0, n - 1);

  if (new_data || index != self->shown)
    {
      g_autoptr (CamlSigmaSnapshot) snap = caml_run_copy_sigma (run, index);
      if (snap != NULL)
        {
          const CamlExperiment *exp = caml_run_get_experiment (run);
          g_autoptr (CamlPlotFigure) grid =
            caml_figure_sigma_grid (snap, self->stretch, exp->name ? exp->name : "experiment",
                                    caml_run_get_sigma_source (run));
          caml_plot_view_set_figure (self->sigma_view, grid, 0, 1);
          self->shown = index;
          /* The step looked at, marked on the plots by step (the loss
           * card's too, through the session); none while following. */
          caml_session_set_marked_step (self->session, self->follow ? -1 : snap->step);
          rebuild_auc (self);
          return;
        }
    }
  if (new_data)
    rebuild_auc (self);
}

static gboolean
has_snapshots (CamlSigmaPage *self)
{
  CamlRun *run = self->session != NULL ? caml_session_peek_run (self->session) : NULL;
  return run != NULL && caml_run_has_sigma (run) && caml_session_get_sigma_count (self->session) > 0;
}

static void
on_scrubbed (GtkRange *range, CamlSigmaPage *self)
{
  CamlRun *run = self->session != NULL ? caml_session_peek_run (self->session) : NULL;
  if (self->syncing || run == NULL || !caml_run_has_sigma (run))
    return;
  GtkAdjustment *adj = gtk_range_get_adjustment (range);
  self->follow = gtk_adjustment_get_value (adj) >= gtk_adjustment_get_upper (adj) - 0.5;
  rebuild (self, FALSE);
}

static void
on_progress (CamlSession *session, guint what, CamlSigmaPage *self)
{
  if (what & CAML_SESSION_NEW_RUN)
    {
      caml_plot_view_clear (self->sigma_auc_view);
      caml_plot_view_set_placeholder (self->sigma_auc_view, "AUC of χ: digit vs background");
      self->shown = -1;
      self->follow = TRUE;
      caml_session_set_marked_step (session, -1);
    }
  if (what & CAML_SESSION_SIGMA)
    rebuild (self, TRUE);
}

void
caml_sigma_page_set_session (CamlSigmaPage *self, CamlSession *session)
{
  g_return_if_fail (CAML_IS_SIGMA_PAGE (self));
  if (self->session != NULL)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_set_object (&self->session, session);
  if (session != NULL)
    g_signal_connect (session, "progress", G_CALLBACK (on_progress), self);
}

void
caml_sigma_page_set_stretch (CamlSigmaPage *self, gboolean stretch)
{
  self->stretch = stretch;
  if (has_snapshots (self))
    rebuild (self, TRUE);
}

void
caml_sigma_page_set_span (CamlSigmaPage *self, double first, double last)
{
  self->first = first;
  self->last = last;
  if (has_snapshots (self))
    rebuild_auc (self);
}

GtkBox *
caml_sigma_page_get_side (CamlSigmaPage *self)
{
  return self->sigma_side;
}

CamlPlotView *
caml_sigma_page_get_view (CamlSigmaPage *self)
{
  return self->sigma_view;
}

CamlPlotView *
caml_sigma_page_get_auc_view (CamlSigmaPage *self)
{
  return self->sigma_auc_view;
}

GtkRange *
caml_sigma_page_get_scrubber (CamlSigmaPage *self)
{
  return GTK_RANGE (self->sigma_scale);
}

static void
caml_sigma_page_dispose (GObject *object)
{
  CamlSigmaPage *self = CAML_SIGMA_PAGE (object);

  caml_sigma_page_set_session (self, NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), CAML_TYPE_SIGMA_PAGE);
  G_OBJECT_CLASS (caml_sigma_page_parent_class)->dispose (object);
}

static void
caml_sigma_page_class_init (CamlSigmaPageClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = caml_sigma_page_dispose;
  g_type_ensure (CAML_TYPE_PLOT_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/caml/Workbench/ui/caml-sigma-page.ui");
  gtk_widget_class_bind_template_child (widget_class, CamlSigmaPage, sigma_view);
  gtk_widget_class_bind_template_child (widget_class, CamlSigmaPage, sigma_scale);
  gtk_widget_class_bind_template_child (widget_class, CamlSigmaPage, sigma_side);
  gtk_widget_class_bind_template_child (widget_class, CamlSigmaPage, sigma_auc_view);
}

static void
caml_sigma_page_init (CamlSigmaPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->shown = -1;
  caml_plot_view_set_hover_func (self->sigma_auc_view, hover_auc, self);
  self->follow = TRUE;
  self->last = 1;
  g_signal_connect (self->sigma_scale, "value-changed", G_CALLBACK (on_scrubbed), self);
}
