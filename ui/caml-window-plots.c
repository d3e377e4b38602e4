/* caml-window-plots.c — how the window lays out its plot pages: the loss
 * card above, below it the surface page (a model of two inputs), the
 * accuracy and the σ-map page (an image model), or the CA-NN parts and
 * the words page; what they say while there is no run; the accuracy card,
 * the loss figure's second plot; and Export Plot. Each page builds its
 * figures itself (studio/figures.c) when the session says they changed. */
#include <math.h>

#include "caml-window-private.h"
#include "figures.h"

/* The accuracy plot before the run's first evaluation: when it comes, or
 * why it will not (a run stopped or diverged before it: a stopped run is
 * not evaluated). */
static void
clear_accuracy (CamlWindow *self)
{
  CamlRun *run = caml_session_peek_run (self->session);
  caml_plot_view_clear (self->accuracy_view);
  if (run == NULL)
    return;
  /* The first evaluation: every eval_every steps, or after the last. */
  const CamlExperiment *exp = caml_run_get_experiment (run);
  int first = exp->eval_every > 0 ? MIN (exp->eval_every, exp->steps) : exp->steps;
  CamlTrainerState state = caml_session_get_state (self->session);
  g_autofree char *when =
    state == CAML_TRAINER_STOPPED
    ? g_strdup_printf ("stopped at step %ld, before the first evaluation (step %d)",
                       caml_session_get_progress (self->session)->step, first)
    : state == CAML_TRAINER_FAILED
    ? g_strdup_printf ("diverged before the first evaluation (step %d)", first)
    : g_strdup_printf ("%s accuracy appears at step %d",
                       caml_session_evaluated_on (self->session), first);
  caml_plot_view_set_placeholder (self->accuracy_view, when);
}

/* The loss card's figure was built again: its second plot is the accuracy
 * (from the run's first evaluation, or the previous run's), and the σ-map
 * AUC spans its steps. */
static void
on_loss_rebuilt (CamlLossCard *card, CamlPlotFigure *figure, CamlWindow *self)
{
  CamlSession *session = self->session;
  long prev_n = 0;
  int r = 0, prev_r = 0;
  const CamlEvalRow *prev_rows = NULL;
  gboolean prev_classification = FALSE;
  double first, last;

  caml_session_get_rows (session, &r);
  caml_session_get_previous_losses (session, &prev_n, &prev_rows, &prev_r, &prev_classification);
  gboolean prev_acc = (prev_classification && prev_r > 0)
                      || caml_loss_card_overlays_accuracy (card);   /* a kept run ticked */
  if (figure != NULL && caml_plot_figure_get_n_plots (figure) > 1
      && ((caml_session_get_progress (session)->classification && r > 0)
          || (prev_acc && r == 0)))
    caml_plot_view_set_figure (self->accuracy_view, figure, 1, 1);
  /* Nothing to show yet: when it comes, or why not. */
  if (r == 0 && !prev_acc)
    clear_accuracy (self);
  caml_loss_card_get_span (card, &first, &last);
  caml_sigma_page_set_span (self->sigma_page, first, last);
  caml_window_update_actions (self);
}

/* The evaluation nearest the pointer on the accuracy plot: its step, the
 * run's accuracy and the baseline's at that step, if any. */
static char *
hover_accuracy (CamlPlotView *view, double x, double y, gpointer user_data)
{
  CamlWindow *self = user_data;
  int n_rows = 0, n_base = 0;
  const CamlEvalRow *rows = caml_session_get_rows (self->session, &n_rows);
  const CamlEvalRow *base = caml_session_get_baseline_rows (self->session, &n_base);
  if (n_rows == 0 || caml_plot_view_get_line (view) == NULL)
    return NULL;
  int nearest = 0;
  for (int r = 1; r < n_rows; r++)
    if (fabs (rows[r].step - x) < fabs (rows[nearest].step - x))
      nearest = r;
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "step %ld  %s accuracy %.4g", rows[nearest].step,
                          caml_session_evaluated_on (self->session),
                          rows[nearest].test_metric);
  for (int r = 0; r < n_base; r++)
    if (base[r].step == rows[nearest].step)
      g_string_append_printf (s, "  baseline %.4g", base[r].test_metric);
  return g_string_free (s, FALSE);
}

/* Image models show the test accuracy beside the σ-maps, under their AUC;
 * the others across the plot area's width. */
static void
place_accuracy (CamlWindow *self, gboolean beside_sigma)
{
  GtkWidget *acc = GTK_WIDGET (self->accuracy_view);
  GtkBox *side = caml_sigma_page_get_side (self->sigma_page);
  GtkWidget *parent = gtk_widget_get_parent (acc);

  if ((parent == GTK_WIDGET (side)) == beside_sigma)
    return;
  g_object_ref (acc);
  if (beside_sigma)
    {
      gtk_grid_remove (self->bottom_grid, acc);
      gtk_widget_set_size_request (acc, -1, 100);
      gtk_widget_set_hexpand (acc, FALSE);   /* the σ-maps take the width */
      gtk_box_append (side, acc);
    }
  else
    {
      gtk_box_remove (side, acc);
      gtk_widget_set_size_request (acc, -1, 190);
      gtk_widget_set_hexpand (acc, TRUE);
      gtk_grid_attach (self->bottom_grid, acc, 0, 1, 3, 1);
    }
  g_object_unref (acc);
}

/* Offers the parts page when there are parts to show and the words page
 * when the run has word gates; leaves a page that is not offered (once
 * the run is known). */
static void
update_plots_switcher (CamlWindow *self)
{
  CamlRun *run = caml_session_peek_run (self->session);
  gboolean words = run != NULL && caml_run_get_words_layer (run) >= 0;
  gboolean parts = caml_session_has_parts (self->session);
  const char *page = gtk_stack_get_visible_child_name (self->plots_stack);

  gtk_widget_set_visible (GTK_WIDGET (self->parts_toggle), parts);
  gtk_widget_set_visible (GTK_WIDGET (self->words_toggle), words);
  /* A per-word gate (CA-BSFE) or one per position (CA-ATT, CA-RNN). */
  if (words)
    gtk_widget_set_tooltip_text (GTK_WIDGET (self->words_toggle),
                                 caml_run_words_per_position (run)
                                 ? "Texts shaded by the gate χ at each word, and the words "
                                   "ranked by their mean χ (light: χ → 1, context-free)"
                                 : "The most and least context-free words by their gate χ̃ "
                                   "(light: χ̃ → 1, the word is replaced by the shared v0)");
  gtk_widget_set_visible (GTK_WIDGET (self->plots_switcher), TRUE);   /* Runs is always there */
  /* The page the user chose comes back when a later run offers it again
   * (an edit undone, another preset of the same kind). */
  const char *want = g_str_equal (self->chosen_page, "parts") && parts ? "parts"
                     : g_str_equal (self->chosen_page, "words") && words ? "words" : NULL;
  if (want == NULL
      && ((g_str_equal (page, "parts") && !parts)
          || (g_str_equal (page, "words") && !words
              && (run != NULL || !caml_session_is_loading (self->session)))))   /* kept while built */
    want = "main";
  if (want != NULL && !g_str_equal (page, want))
    {
      const char *chosen = self->chosen_page;
      g_action_group_activate_action (G_ACTION_GROUP (self), "plots-page",
                                      g_variant_new_string (want));
      self->chosen_page = chosen;   /* the user's choice stays */
    }
}

/* What the plots say while there is no run, in the layout the run will
 * have: the surface and χ for the plane's data sets, else the accuracy
 * across (it showed the surface panels for text, and a reloaded run's
 * accuracy curve beside the waiting loss plot). */
static void
show_waiting (CamlWindow *self, const char *why)
{
  const CamlExperiment *exp = caml_session_get_experiment (self->session);
  gboolean surface = exp->data.kind == CAML_DATA_XOR || exp->data.kind == CAML_DATA_SURFACE;
  gtk_widget_set_visible (GTK_WIDGET (self->surface_page), surface);
  gtk_widget_set_visible (GTK_WIDGET (self->accuracy_view), !surface);
  gtk_widget_set_visible (GTK_WIDGET (self->sigma_page), FALSE);
  place_accuracy (self, FALSE);
  caml_surface_page_show_placeholder (self->surface_page, why);
  update_plots_switcher (self);
  caml_plot_view_clear (self->accuracy_view);
  caml_plot_view_set_placeholder (self->accuracy_view, why);
  CamlPlotView *loss = caml_loss_card_get_view (self->loss_card);
  caml_plot_view_clear (loss);
  caml_plot_view_set_placeholder (loss, why);
}

static void
on_waiting (CamlSession *session, int wait, const char *why, CamlWindow *self)
{
  gtk_widget_set_visible (GTK_WIDGET (self->sigma_page), FALSE);   /* until a run has σ-maps */
  if (wait != CAML_SESSION_WAIT_BAD_MODEL)
    {
      show_waiting (self, why);
      return;
    }
  /* Train pressed while the data loaded: there is nothing to train. */
  CamlPlotView *loss = caml_loss_card_get_view (self->loss_card);
  caml_surface_page_show_placeholder (self->surface_page, "fix the model to see its surface");
  update_plots_switcher (self);
  caml_plot_view_clear (loss);
  caml_plot_view_set_placeholder (loss, why);
  caml_plot_view_clear (self->accuracy_view);   /* no curves of a run left */
  caml_plot_view_set_placeholder (self->accuracy_view, why);
}

/* A new run: the pages take its layout. */
static void
on_progress (CamlSession *session, guint what, CamlWindow *self)
{
  if (!(what & CAML_SESSION_NEW_RUN))
    return;
  CamlRun *run = caml_session_peek_run (session);
  gboolean surface = caml_run_has_surface (run);
  /* The first page's name says what it shows for this model and data. */
  gtk_button_set_label (GTK_BUTTON (self->main_toggle),
                        surface ? "Surface and χ"
                        : caml_run_has_sigma (run) ? "σ-Maps and Accuracy"
                        : "Test Accuracy");
  gtk_widget_set_visible (GTK_WIDGET (self->surface_page), surface);
  gtk_widget_set_visible (GTK_WIDGET (self->accuracy_view), !surface);
  gtk_widget_set_visible (GTK_WIDGET (self->sigma_page), caml_run_has_sigma (run));
  place_accuracy (self, caml_run_has_sigma (run));
  update_plots_switcher (self);
}

/* Shows a plots page ("main", "parts" or "words"), prepared before it
 * shows: a text view filled once it is on screen lays its text out while
 * the frame is drawn, which GTK reports as a window drawn "without a
 * current allocation". */
void
caml_window_show_page (CamlWindow *self, const char *page)
{
  gboolean parts = g_str_equal (page, "parts"), words = g_str_equal (page, "words");

  self->chosen_page = g_intern_string (page);
  caml_surface_page_set_parts_shown (self->surface_page, parts);
  caml_words_view_set_shown (self->words_page, words);
  if (parts && caml_session_peek_run (self->session) != NULL
      && caml_session_get_surface (self->session, NULL, NULL, NULL) != NULL)
    caml_surface_page_rebuild_parts (self->surface_page);
  if (words)
    caml_words_view_rebuild (self->words_page);
  gtk_stack_set_visible_child_name (self->plots_stack, page);
  /* a sweep's page has plots of its own, not the window's run's: it takes
   * the loss card's room too */
  gtk_widget_set_visible (GTK_WIDGET (self->loss_card), !g_str_equal (page, "sweep"));
}

/* ---------------------------------------------------------------- export */

gboolean
caml_window_export_plot (CamlWindow *self, const char *what, const char *path, GError **error)
{
  CamlPlotView *view = caml_window_get_plot_view (self, what);
  int first = 0, n = 0;
  const CamlPlotFigure *shown = view != NULL ? caml_plot_view_get_figure (view, &first, &n)
                                             : NULL;

  if (shown == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "there is no plot to export yet");
      return FALSE;
    }
  /* The accuracy alone, as the card shows it. */
  if (g_str_equal (what, "accuracy"))
    return caml_plot_view_write (view, path, 2 * CAML_FIGURE_CELL_WIDTH,
                                 CAML_FIGURE_CELL_HEIGHT, error);
  /* The loss figure as a file: every step, smoothed as caml train's
   * loss.png (with the accuracy beside it for a classifier). */
  if (g_str_equal (what, "loss"))
    {
      g_autoptr (CamlPlotFigure) figure = caml_loss_card_build_figure (self->loss_card,
                                                                       CAML_FIGURE_FILE);
      return caml_plot_figure_write (figure, path, error);
    }
  /* The whole figure the card shows part of (the surface beside its ground
   * truth), as caml train writes it. */
  return caml_plot_figure_write (shown, path, error);
}

static void
export_plot_to (CamlWindow *self, const char *path, gpointer data)
{
  g_autoptr (GError) error = NULL;

  if (!caml_window_export_plot (self, data, path, &error))
    caml_window_show_error (self, error->message);
  else
    caml_window_show_done (self, "Exported the plot to", path);
}

/* Before Export Plot asks where: the pages prepared only while shown. */
void
caml_window_ask_export_plot (CamlWindow *self, const char *what)
{
  CamlPlotView *view = caml_window_get_plot_view (self, what);
  const CamlExperiment *exp = caml_session_get_experiment (self->session);
  g_autofree char *name = g_strdup_printf ("%s-%s.png", exp->name ? exp->name : "experiment",
                                           what);
  if (g_str_equal (what, "parts") && caml_session_peek_run (self->session) != NULL
      && caml_session_get_surface (self->session, NULL, NULL, NULL) != NULL)
    caml_surface_page_rebuild_parts (self->surface_page);
  if (g_str_equal (what, "words"))
    caml_words_view_rebuild (self->words_page);
  if (view == NULL || !caml_plot_view_has_plot (view))
    {
      caml_window_show_error (self, "There is no such plot to export yet: train first.");
      return;
    }
  caml_window_ask_save_path (self, "Export Plot (.png or .svg)", name, export_plot_to, what);
}

CamlPlotView *
caml_window_get_plot_view (CamlWindow *self, const char *name)
{
  if (g_str_equal (name, "loss"))
    return caml_loss_card_get_view (self->loss_card);
  if (g_str_equal (name, "surface"))
    return caml_surface_page_get_surface_view (self->surface_page);
  if (g_str_equal (name, "chi"))
    return caml_surface_page_get_chi_view (self->surface_page);
  if (g_str_equal (name, "parts"))
    return self->parts_view;
  if (g_str_equal (name, "words"))
    return caml_words_view_get_bars (self->words_page);
  if (g_str_equal (name, "accuracy"))
    return self->accuracy_view;
  if (g_str_equal (name, "sigma"))
    return caml_sigma_page_get_view (self->sigma_page);
  if (g_str_equal (name, "chi-histogram"))
    return caml_inspect_page_get_histogram (self->inspect_page);
  if (g_str_equal (name, "sigma-auc"))
    return caml_sigma_page_get_auc_view (self->sigma_page);
  return NULL;
}

/* --------------------------------------------------------------- lifecycle */

/* The loss takes under a third of the window's height (never less than its
 * own minimum), the maps below it the rest: at 1024×700 the surface and χ,
 * or the four CA-NN parts in two rows, stay readable. A divider moved by
 * hand stays where it was put — unless GTK holds it at its max-position in
 * a window too low for it, which is fitted again. */
#define LOSS_SHARE      0.28
#define LOSS_MIN_HEIGHT 170
#define LOSS_MAX_HEIGHT 340

static void
fit_loss_height (CamlWindow *self)
{
  int width = 0, height = 0;   /* GTK 4.8 takes no NULL for either */
  gtk_window_get_default_size (GTK_WINDOW (self), &width, &height);
  int position = gtk_paned_get_position (self->plots_paned), max_position = 0;
  g_object_get (self->plots_paned, "max-position", &max_position, NULL);
  gboolean clamped = position < self->loss_height && position >= max_position;
  if (height <= 0 || (self->loss_height > 0 && position != self->loss_height && !clamped))
    return;
  self->loss_height = CLAMP ((int) (LOSS_SHARE * height), LOSS_MIN_HEIGHT, LOSS_MAX_HEIGHT);
  gtk_paned_set_position (self->plots_paned, self->loss_height);
}

static void
on_default_height (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  fit_loss_height (CAML_WINDOW (object));
}

void
caml_window_plots_init (CamlWindow *self)
{
  caml_surface_page_set_parts_view (self->surface_page, self->parts_view);
  caml_plot_view_set_hover_func (self->accuracy_view, hover_accuracy, self);
  g_signal_connect (self->loss_card, "rebuilt", G_CALLBACK (on_loss_rebuilt), self);
  fit_loss_height (self);
  g_signal_connect (self, "notify::default-height", G_CALLBACK (on_default_height), NULL);
}

/* The pages follow the session (NULL: the window goes). */
void
caml_window_plots_set_session (CamlWindow *self, CamlSession *session)
{
  if (session != NULL)
    {
      g_signal_connect (session, "progress", G_CALLBACK (on_progress), self);
      g_signal_connect (session, "waiting", G_CALLBACK (on_waiting), self);
      /* Export Runs follows the runs kept. */
      g_signal_connect_object (caml_session_get_runs (session), "items-changed",
                               G_CALLBACK (caml_window_update_actions), self,
                               G_CONNECT_SWAPPED);
    }
  caml_loss_card_set_session (self->loss_card, session);
  caml_surface_page_set_session (self->surface_page, session);
  caml_sigma_page_set_session (self->sigma_page, session);
  caml_words_view_set_session (self->words_page, session);
  caml_runs_view_set_session (self->runs_page, session);
  caml_sweep_view_set_session (self->sweep_page, session);
  caml_inspect_page_set_session (self->inspect_page, session);
}
