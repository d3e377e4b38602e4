/* caml-loss-card.c — the loss card (caml-loss-card.h). */
#include <math.h>

#include "caml-loss-card.h"

struct _CamlLossCard {
  GtkBox parent_instance;

  /* template widgets */
  CamlPlotView *loss_view;

  /* owned */
  CamlSession  *session;
  double        smoothing;
  gboolean      log_scale;
  double       *smooth;         /* (steps) the trend the hover read-out gives */
};

G_DEFINE_FINAL_TYPE (CamlLossCard, caml_loss_card, GTK_TYPE_BOX)

enum { SIGNAL_REBUILT, N_SIGNALS };
static guint signals[N_SIGNALS];

/* The kept runs ticked in the Runs list, as overlays (appended to
 * overlays; the records stay in the session's list meanwhile). */
static void
shown_runs (CamlSession *session, GArray *overlays)
{
  GListModel *runs = caml_session_get_runs (session);
  guint n = runs != NULL ? g_list_model_get_n_items (runs) : 0;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr (CamlRunRecord) r = g_list_model_get_item (runs, i);
      if (!caml_run_record_get_shown (r))
        continue;
      CamlFigureOverlay o = {
        .name = caml_run_record_get_name (r),
        .classification = caml_run_record_get_figures (r)->classification,
      };
      o.losses = caml_run_record_get_losses (r, &o.steps, &o.n_points, &o.stride);
      o.rows = caml_run_record_get_rows (r, &o.n_rows);
      g_array_append_val (overlays, o);
    }
}

/* The loss figure of what the session holds: the run's curves with the
 * previous run's, the baseline's (previous and baseline are filled in
 * when there are any) and the kept runs ticked (appended to overlays),
 * the events recorded (appended to events) and the smoothing and axis. A file smooths as caml train does, so that a run's
 * export is its loss.png. *title is new. */
static void
describe (CamlLossCard *self, CamlFigureDetail detail, CamlFigureLoss *loss,
          CamlFigureCurves *previous, CamlFigureCurves *baseline, GArray *events,
          GArray *overlays, char **title)
{
  CamlSession *session = self->session;
  const CamlProgress *progress = caml_session_get_progress (session);
  guint n_events = 0;
  const CamlSessionEvent *marks = caml_session_get_events (session, &n_events);

  previous->losses = caml_session_get_previous_losses (session, &previous->n_steps,
                                                       &previous->rows, &previous->n_rows,
                                                       &previous->classification);
  baseline->losses = caml_session_get_baseline_losses (session, &baseline->n_steps);
  baseline->rows = caml_session_get_baseline_rows (session, &baseline->n_rows);
  baseline->classification = progress->classification;
  for (guint i = 0; i < n_events; i++)
    {
      CamlPlotEvent pe = { (double) marks[i].step, marks[i].text };
      g_array_append_val (events, pe);
    }
  /* The step looked at elsewhere (the σ-map scrubber), on the live card
   * only: an export is the run's loss.png. */
  long marked = caml_session_get_marked_step (session);
  if (detail == CAML_FIGURE_LIVE && marked >= 0)
    {
      CamlPlotEvent pe = { (double) marked, "shown" };
      g_array_append_val (events, pe);
    }
  shown_runs (session, overlays);
  *title = caml_session_dup_run_title (session);
  *loss = (CamlFigureLoss) {
    .run = { .classification = progress->classification },
    .overlays = (CamlFigureOverlay *) overlays->data, .n_overlays = overlays->len,
    .previous = previous->n_steps > 0 ? previous : NULL,
    .baseline = caml_session_peek_baseline (session) != NULL ? baseline : NULL,
    .events = (CamlPlotEvent *) events->data, .n_events = events->len,
    .title = *title, .evaluated_on = caml_session_evaluated_on (session),
    .smoothing = detail == CAML_FIGURE_FILE ? -1 : self->smoothing,
    .linear = !self->log_scale,
    .detail = detail,
  };
  loss->run.losses = caml_session_get_losses (session, &loss->run.n_steps);
  loss->run.rows = caml_session_get_rows (session, &loss->run.n_rows);
}

CamlPlotFigure *
caml_loss_card_build_figure (CamlLossCard *self, CamlFigureDetail detail)
{
  CamlFigureLoss loss;
  CamlFigureCurves previous, baseline;
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (CamlPlotEvent));
  g_autoptr (GArray) overlays = g_array_new (FALSE, FALSE, sizeof (CamlFigureOverlay));
  g_autofree char *title = NULL;

  describe (self, detail, &loss, &previous, &baseline, events, overlays, &title);
  return caml_figure_loss (&loss);
}

void
caml_loss_card_get_span (CamlLossCard *self, double *first, double *last)
{
  CamlFigureLoss loss;
  CamlFigureCurves previous, baseline;
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (CamlPlotEvent));
  g_autoptr (GArray) overlays = g_array_new (FALSE, FALSE, sizeof (CamlFigureOverlay));
  g_autofree char *title = NULL;

  describe (self, CAML_FIGURE_LIVE, &loss, &previous, &baseline, events, overlays, &title);
  caml_figure_loss_span (&loss, first, last);
}

/* What the card says while there is no curve: why, by the run's state. */
static char *
why_empty (CamlLossCard *self)
{
  CamlTrainerState state = caml_session_get_state (self->session);
  CamlRun *run = caml_session_peek_run (self->session);
  CamlDivergence d;

  if (state == CAML_TRAINER_FAILED && caml_run_get_divergence (run, &d))
    return g_strdup_printf ("Diverged at step %ld; the weights are back at step %ld, before any "
                            "loss was kept", d.step, d.rolled_back_to);
  return g_strdup (state == CAML_TRAINER_RUNNING
                   ? "Training: the loss appears after the first step"
                   : state == CAML_TRAINER_PAUSED
                   ? "Paused before the first step: Step (F7) or Resume (F5)"
                   : state == CAML_TRAINER_STOPPED ? "Stopped before the first step"
                   : "Press Train (F5) to start");
}

void
caml_loss_card_rebuild (CamlLossCard *self)
{
  long n = 0, prev_n = 0;
  int r = 0, prev_r = 0;
  const CamlEvalRow *prev_rows = NULL;
  gboolean prev_classification = FALSE;

  if (self->session == NULL)
    return;
  const float *losses = caml_session_get_losses (self->session, &n);
  caml_session_get_rows (self->session, &r);
  caml_session_get_previous_losses (self->session, &prev_n, &prev_rows, &prev_r,
                                    &prev_classification);
  g_autoptr (GArray) overlays = g_array_new (FALSE, FALSE, sizeof (CamlFigureOverlay));
  shown_runs (self->session, overlays);
  if (n == 0 && r == 0 && prev_n == 0 && overlays->len == 0)
    {
      g_autofree char *why = why_empty (self);
      caml_plot_view_clear (self->loss_view);
      caml_plot_view_set_placeholder (self->loss_view, why);
      g_signal_emit (self, signals[SIGNAL_REBUILT], 0, NULL);
      return;
    }
  g_autoptr (CamlPlotFigure) figure = caml_loss_card_build_figure (self, CAML_FIGURE_LIVE);
  g_free (self->smooth);
  self->smooth = g_new (double, MAX (n, 1));
  caml_figure_loss_trend (losses, n, self->smoothing, !self->log_scale, self->smooth);
  caml_plot_view_set_figure (self->loss_view, figure, 0, 1);
  g_signal_emit (self, signals[SIGNAL_REBUILT], 0, figure);
}

/* The step under the pointer: its loss and trend, and the evaluation
 * nearest it. */
static char *
hover (CamlPlotView *view, double x, double y, gpointer user_data)
{
  CamlLossCard *self = user_data;
  long n_steps = 0;
  int n_rows = 0;

  if (self->session == NULL)
    return NULL;
  const float *losses = caml_session_get_losses (self->session, &n_steps);
  const CamlEvalRow *rows = caml_session_get_rows (self->session, &n_rows);
  if (n_steps <= 0 || caml_plot_view_get_line (view) == NULL)
    return NULL;
  long i = CLAMP (lround (x), 1, n_steps) - 1;
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "step %ld  train %.4g", i + 1, (double) losses[i]);
  if (self->smooth != NULL && self->smoothing > 0)
    g_string_append_printf (s, " (smoothed %.4g)", self->smooth[i]);
  /* the evaluation nearest the pointer (the earlier one of two as near) */
  int nearest = -1;
  long step = i + 1;
  for (int r = 0; r < n_rows; r++)
    if (nearest < 0 || labs (rows[r].step - step) < labs (rows[nearest].step - step))
      nearest = r;
  if (nearest >= 0)
    g_string_append_printf (s, "  %s %.4g at step %ld",
                            caml_session_evaluated_on (self->session),
                            rows[nearest].test_loss, rows[nearest].step);
  return g_string_free (s, FALSE);
}

static void
on_progress (CamlSession *session, guint what, CamlLossCard *self)
{
  if (what & CAML_SESSION_CURVES)
    caml_loss_card_rebuild (self);
}

void
caml_loss_card_set_session (CamlLossCard *self, CamlSession *session)
{
  g_return_if_fail (CAML_IS_LOSS_CARD (self));
  if (self->session != NULL)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_set_object (&self->session, session);
  if (session != NULL)
    {
      g_signal_connect (session, "progress", G_CALLBACK (on_progress), self);
      g_signal_connect_swapped (session, "notify::marked-step",
                                G_CALLBACK (caml_loss_card_rebuild), self);
    }
}

void
caml_loss_card_set_smoothing (CamlLossCard *self, double smoothing)
{
  self->smoothing = smoothing;
  caml_loss_card_rebuild (self);
}

void
caml_loss_card_set_log_scale (CamlLossCard *self, gboolean log_scale)
{
  self->log_scale = log_scale;
  caml_loss_card_rebuild (self);
}

gboolean
caml_loss_card_overlays_accuracy (CamlLossCard *self)
{
  g_autoptr (GArray) overlays = g_array_new (FALSE, FALSE, sizeof (CamlFigureOverlay));
  if (self->session == NULL)
    return FALSE;
  shown_runs (self->session, overlays);
  for (guint i = 0; i < overlays->len; i++)
    if (g_array_index (overlays, CamlFigureOverlay, i).classification
        && g_array_index (overlays, CamlFigureOverlay, i).n_rows > 0)
      return TRUE;
  return FALSE;
}

CamlPlotView *
caml_loss_card_get_view (CamlLossCard *self)
{
  return self->loss_view;
}

static void
caml_loss_card_dispose (GObject *object)
{
  CamlLossCard *self = CAML_LOSS_CARD (object);

  caml_loss_card_set_session (self, NULL);
  g_clear_pointer (&self->smooth, g_free);
  gtk_widget_dispose_template (GTK_WIDGET (self), CAML_TYPE_LOSS_CARD);
  G_OBJECT_CLASS (caml_loss_card_parent_class)->dispose (object);
}

static void
caml_loss_card_class_init (CamlLossCardClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = caml_loss_card_dispose;
  /* The card's figure was built again (NULL: there is no curve to show):
   * its second plot is the accuracy, and the plots by step beside it
   * follow its span. */
  signals[SIGNAL_REBUILT] =
    g_signal_new ("rebuilt", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
  g_type_ensure (CAML_TYPE_PLOT_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/caml/Workbench/ui/caml-loss-card.ui");
  gtk_widget_class_bind_template_child (widget_class, CamlLossCard, loss_view);
}

static void
caml_loss_card_init (CamlLossCard *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->log_scale = TRUE;
  self->smoothing = 0.9;
  caml_plot_view_set_hover_func (self->loss_view, hover, self);
  /* In the card's corner, where it fits whole (the toolbar above the
   * plots cut it to "H…" at 1024 px beside the page switcher). */
  caml_plot_view_set_hint (self->loss_view, "hover to read values");
}
