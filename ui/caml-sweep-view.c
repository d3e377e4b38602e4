/* caml-sweep-view.c — the Sweep page (caml-sweep-view.h). Built in code:
 * a header, a stack of "none yet" and the sweep (two plots over a table).
 * It follows the session's "sweep" and the sweep's "changed"; the plots
 * are made again only when a run has ended. */
#include <math.h>

#include "caml-sweep-view.h"

struct _CamlSweepView {
  GtkBox parent_instance;

  GtkLabel         *status;
  GtkProgressBar   *progress;
  GtkWidget        *cancel;
  GtkStack         *stack;
  CamlPlotView     *plot;
  CamlParallelView *parallel;
  GtkColumnView    *table;

  CamlSession      *session;
  CamlSweep        *sweep;
  int               ended_drawn;   /* runs ended when the plots were last made, -1: never */
  int              *row_results;   /* the parallel plot's rows → runs */
};

G_DEFINE_FINAL_TYPE (CamlSweepView, caml_sweep_view, GTK_TYPE_BOX)

enum { SIGNAL_OPEN_RUN, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ------------------------------------------------------------- the table */

typedef char *(*CellText) (CamlSweepView *self, CamlSweepRun *run);

static char *
figure (double value)
{
  return isfinite (value) ? g_strdup_printf ("%.4g", value) : g_strdup ("—");
}

static const char *
state_name (CamlSweepRun *run)
{
  switch (caml_sweep_run_get_state (run))
    {
    case CAML_SWEEP_RUN_QUEUED: return "queued";
    case CAML_SWEEP_RUN_TRAINING: return "training…";
    case CAML_SWEEP_RUN_SKIPPED: return "skipped";
    case CAML_SWEEP_RUN_FAILED: return "failed";
    case CAML_SWEEP_RUN_DONE:
      return caml_sweep_status_name (caml_sweep_run_get_result (run)->status);
    }
  return "";
}

static char *
text_axis0 (CamlSweepView *self, CamlSweepRun *run)
{
  int point[2];
  caml_sweep_run_get_point (run, point);
  return g_strdup (caml_sweep_get_plan (self->sweep)->axes[0].values[point[0]]);
}

static char *
text_axis1 (CamlSweepView *self, CamlSweepRun *run)
{
  int point[2];
  const CamlSweepPlan *plan = caml_sweep_get_plan (self->sweep);
  caml_sweep_run_get_point (run, point);
  return g_strdup (plan->n_axes > 1 ? plan->axes[1].values[point[1]] : "");
}

static char *
text_model (CamlSweepView *self, CamlSweepRun *run)
{
  return g_strdup (caml_sweep_run_is_baseline (run) ? "baseline"
                   : caml_sweep_plan_has_context_aware (caml_sweep_get_plan (self->sweep))
                   ? "context-aware" : "plain");
}

static char *
text_state (CamlSweepView *self, CamlSweepRun *run)
{
  return g_strdup (state_name (run));
}

static char *
text_metric (CamlSweepView *self, CamlSweepRun *run)
{
  const CamlSweepResult *r = caml_sweep_run_get_result (run);
  if (!isfinite (r->metric))
    return g_strdup ("—");
  return g_strdup_printf ("%s %.4g", r->classification ? "acc" : "MSE", r->metric);
}

static char *
text_loss (CamlSweepView *self, CamlSweepRun *run)
{
  return figure (caml_sweep_run_get_result (run)->test_loss);
}

static char *
text_auc (CamlSweepView *self, CamlSweepRun *run)
{
  return figure (caml_sweep_run_get_result (run)->sigma_auc);
}

static char *
text_speed (CamlSweepView *self, CamlSweepRun *run)
{
  double v = caml_sweep_run_get_result (run)->steps_per_second;
  return isfinite (v) ? g_strdup_printf ("%'.0f", v) : g_strdup ("—");
}

static char *
text_time (CamlSweepView *self, CamlSweepRun *run)
{
  double s = caml_sweep_run_get_result (run)->seconds;
  if (!isfinite (s))
    return g_strdup ("—");
  return s < 60 ? g_strdup_printf ("%.2g s", s)
                : g_strdup_printf ("%d min %02d s", (int) (s / 60), (int) fmod (s, 60));
}

static char *
text_error (CamlSweepView *self, CamlSweepRun *run)
{
  const char *error = caml_sweep_run_get_result (run)->error;
  return g_strdup (error != NULL ? error : "");
}

static void
setup_label (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  GtkWidget *label = gtk_label_new (NULL);
  gboolean left = data == text_error || data == text_state || data == text_model;
  gtk_label_set_xalign (GTK_LABEL (label), left ? 0.0f : 1.0f);
  if (data == text_error)
    gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  gtk_list_item_set_child (item, label);
}

static void
bind_label (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  GtkWidget *label = gtk_list_item_get_child (item);
  CamlSweepView *self = g_object_get_data (G_OBJECT (factory), "view");
  if (self->sweep == NULL)
    return;
  g_autofree char *text = ((CellText) data) (self, gtk_list_item_get_item (item));
  gtk_label_set_text (GTK_LABEL (label), text);
  gtk_widget_set_tooltip_text (label, data == text_error && *text ? text : NULL);
}

static GtkColumnViewColumn *
add_column (CamlSweepView *self, const char *title, CellText text)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  g_object_set_data (G_OBJECT (factory), "view", self);
  g_signal_connect (factory, "setup", G_CALLBACK (setup_label), text);
  g_signal_connect (factory, "bind", G_CALLBACK (bind_label), text);
  GtkColumnViewColumn *column = gtk_column_view_column_new (title, factory);
  gtk_column_view_column_set_resizable (column, TRUE);
  gtk_column_view_column_set_expand (column, text == text_error);
  gtk_column_view_append_column (self->table, column);
  g_object_unref (column);
  return column;
}

/* The settings' columns are named after the plan's keys. */
static void
name_columns (CamlSweepView *self)
{
  GListModel *columns = gtk_column_view_get_columns (self->table);
  const CamlSweepPlan *plan = self->sweep != NULL ? caml_sweep_get_plan (self->sweep) : NULL;
  for (int a = 0; a < 2; a++)
    {
      g_autoptr (GtkColumnViewColumn) column = g_list_model_get_item (columns, (guint) a);
      gboolean shown = plan != NULL && a < plan->n_axes;
      gtk_column_view_column_set_title (column, shown ? plan->axes[a].key : "");
      gtk_column_view_column_set_visible (column, shown);
    }
}

/* ------------------------------------------------------------ opening */

void
caml_sweep_view_open_run (CamlSweepView *self, int run)
{
  g_return_if_fail (CAML_IS_SWEEP_VIEW (self));
  if (self->sweep == NULL || run < 0)
    return;
  g_autoptr (CamlSweepRun) item = g_list_model_get_item (caml_sweep_get_runs (self->sweep),
                                                         (guint) run);
  if (item == NULL)
    return;
  CamlSweepRunState state = caml_sweep_run_get_state (item);
  if (state != CAML_SWEEP_RUN_DONE && state != CAML_SWEEP_RUN_FAILED)
    return;
  g_autofree char *weights = g_build_filename (caml_sweep_run_get_dir (item), "model.weights",
                                               NULL);
  if (!g_file_test (weights, G_FILE_TEST_EXISTS))
    return;   /* nothing was kept of it */
  g_signal_emit (self, signals[SIGNAL_OPEN_RUN], 0, caml_sweep_run_get_dir (item));
}

static void
on_table_activate (GtkColumnView *table, guint position, CamlSweepView *self)
{
  caml_sweep_view_open_run (self, (int) position);
}

static void
on_parallel_activated (CamlParallelView *view, int row, CamlSweepView *self)
{
  if (self->row_results != NULL && row >= 0)
    caml_sweep_view_open_run (self, self->row_results[row]);
}

/* The run whose point on the plot is nearest (x, y), within radius pixels
 * (scaled by px, py: pixels a unit of data spans); -1: none. */
static int
nearest_run (CamlSweepView *self, double x, double y, double px, double py, double radius)
{
  if (self->sweep == NULL)
    return -1;
  const CamlSweepPlan *plan = caml_sweep_get_plan (self->sweep);
  const CamlSweepAxis *axis = &plan->axes[0];
  g_autofree double *xs = g_new (double, axis->n_values);
  if (!caml_plot_parse_numbers ((const char *const *) axis->values, axis->n_values, xs))
    for (int i = 0; i < axis->n_values; i++)
      xs[i] = i;
  int n = 0, best = -1;
  double best_d = radius;
  const CamlSweepResult *results = caml_sweep_get_results (self->sweep, &n);
  for (int i = 0; i < n; i++)
    {
      if (!results[i].done || results[i].status != 0 || !isfinite (results[i].metric))
        continue;
      double dx = (xs[results[i].index[0]] - x) * px, dy = (results[i].metric - y) * py;
      double d = hypot (dx, dy);
      if (d <= best_d)
        {
          best_d = d;
          best = i;
        }
    }
  return best;
}

char *
caml_sweep_view_run_at (CamlSweepView *self, double x, double y)
{
  g_return_val_if_fail (CAML_IS_SWEEP_VIEW (self), NULL);
  int run = nearest_run (self, x, y, 1.0, 1.0, INFINITY);
  if (run < 0)
    return NULL;
  g_autoptr (CamlSweepRun) item = g_list_model_get_item (caml_sweep_get_runs (self->sweep),
                                                         (guint) run);
  return g_strdup (caml_sweep_run_get_dir (item));
}

static void
on_plot_released (GtkGestureClick *click, int n_press, double wx, double wy,
                  CamlSweepView *self)
{
  double x, y, px, py;
  if (!caml_plot_view_to_data (self->plot, wx, wy, &x, &y, &px, &py))
    return;
  caml_sweep_view_open_run (self, nearest_run (self, x, y, px, py, 12.0));
}

/* "kernel=5 depth=8: context-aware acc 0.9871 · baseline 0.986" at the
 * point nearest the pointer. */
static char *
hover_plot (CamlPlotView *view, double x, double y, gpointer user_data)
{
  CamlSweepView *self = user_data;
  int run = nearest_run (self, x, y, 1.0, 1.0, INFINITY);
  if (run < 0)
    return NULL;
  g_autoptr (CamlSweepRun) item = g_list_model_get_item (caml_sweep_get_runs (self->sweep),
                                                         (guint) run);
  const CamlSweepResult *r = caml_sweep_run_get_result (item);
  return g_strdup_printf ("%s: %s %.4g — click to open", caml_sweep_run_get_name (item),
                          r->classification ? "accuracy" : "MSE", r->metric);
}

/* -------------------------------------------------------------- updates */

static void
update_plots (CamlSweepView *self)
{
  int n = 0;
  const CamlSweepResult *results = caml_sweep_get_results (self->sweep, &n);
  const CamlSweepPlan *plan = caml_sweep_get_plan (self->sweep);
  caml_plot_view_set_line (self->plot, caml_sweep_plot_new (plan, results, n));
  g_clear_pointer (&self->row_results, g_free);
  caml_parallel_view_set_plot (self->parallel,
                               caml_sweep_parallel_new (plan, results, n, &self->row_results));
  self->ended_drawn = caml_sweep_get_n_ended (self->sweep);
}

static void
on_sweep_changed (CamlSweep *sweep, CamlSweepView *self)
{
  double fraction = 0.0;
  g_autofree char *status = caml_sweep_dup_status (sweep, &fraction);
  const char *problem = caml_sweep_get_problem (sweep);
  g_autofree char *text = g_strdup_printf ("Sweep of %s into %s: %s%s%s",
                                           caml_sweep_get_plan (sweep)->exp->name
                                           ? caml_sweep_get_plan (sweep)->exp->name
                                           : "the experiment",
                                           caml_sweep_get_out_dir (sweep), status,
                                           problem ? " — " : "", problem ? problem : "");
  gtk_label_set_text (self->status, text);
  gtk_progress_bar_set_fraction (self->progress, fraction);
  gtk_widget_set_visible (self->cancel, caml_sweep_is_running (sweep));
  if (caml_sweep_get_n_ended (sweep) != self->ended_drawn)
    update_plots (self);
}

static void
show_sweep (CamlSweepView *self, CamlSweep *sweep)
{
  if (self->sweep != NULL)
    g_signal_handlers_disconnect_by_data (self->sweep, self);
  g_set_object (&self->sweep, sweep);
  self->ended_drawn = -1;
  GtkSingleSelection *selection = NULL;
  if (sweep != NULL)
    {
      g_signal_connect (sweep, "changed", G_CALLBACK (on_sweep_changed), self);
      selection = gtk_single_selection_new (g_object_ref (caml_sweep_get_runs (sweep)));
      gtk_single_selection_set_autoselect (selection, FALSE);
      gtk_single_selection_set_can_unselect (selection, TRUE);
      gtk_single_selection_set_selected (selection, GTK_INVALID_LIST_POSITION);
    }
  name_columns (self);
  gtk_column_view_set_model (self->table, GTK_SELECTION_MODEL (selection));
  g_clear_object (&selection);
  gtk_stack_set_visible_child_name (self->stack, sweep != NULL ? "sweep" : "none");
  gtk_widget_set_visible (GTK_WIDGET (self->progress), sweep != NULL);
  if (sweep != NULL)
    on_sweep_changed (sweep, self);
  else
    {
      gtk_label_set_text (self->status, "");
      gtk_widget_set_visible (self->cancel, FALSE);
    }
}

static void
on_session_sweep (CamlSession *session, GParamSpec *pspec, CamlSweepView *self)
{
  show_sweep (self, caml_session_get_sweep (session));
}

void
caml_sweep_view_set_session (CamlSweepView *self, CamlSession *session)
{
  g_return_if_fail (CAML_IS_SWEEP_VIEW (self));
  if (self->session != NULL)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_set_object (&self->session, session);
  if (session != NULL)
    g_signal_connect (session, "notify::sweep", G_CALLBACK (on_session_sweep), self);
  show_sweep (self, session != NULL ? caml_session_get_sweep (session) : NULL);
}

static void
on_cancel (GtkButton *button, CamlSweepView *self)
{
  if (self->session != NULL)
    caml_session_cancel_sweep (self->session);
}

CamlPlotView *caml_sweep_view_get_plot (CamlSweepView *self) { return self->plot; }
CamlParallelView *caml_sweep_view_get_parallel (CamlSweepView *self) { return self->parallel; }
GtkColumnView *caml_sweep_view_get_table (CamlSweepView *self) { return self->table; }

const char *
caml_sweep_view_get_status (CamlSweepView *self)
{
  return gtk_label_get_text (self->status);
}

/* ---------------------------------------------------------------- class */

static void
caml_sweep_view_dispose (GObject *object)
{
  CamlSweepView *self = CAML_SWEEP_VIEW (object);
  if (self->table != NULL)
    caml_sweep_view_set_session (self, NULL);
  self->table = NULL;
  g_clear_pointer (&self->row_results, g_free);
  G_OBJECT_CLASS (caml_sweep_view_parent_class)->dispose (object);
}

static void
caml_sweep_view_class_init (CamlSweepViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = caml_sweep_view_dispose;
  signals[SIGNAL_OPEN_RUN] = g_signal_new ("open-run", G_TYPE_FROM_CLASS (klass),
                                           G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                           G_TYPE_NONE, 1, G_TYPE_STRING);
}

static GtkWidget *
button (const char *mnemonic, const char *action, const char *tooltip)
{
  GtkWidget *b = gtk_button_new_with_mnemonic (mnemonic);
  gtk_widget_set_valign (b, GTK_ALIGN_CENTER);
  if (action != NULL)
    gtk_actionable_set_action_name (GTK_ACTIONABLE (b), action);
  gtk_widget_set_tooltip_text (b, tooltip);
  return b;
}

static void
caml_sweep_view_init (CamlSweepView *self)
{
  gtk_orientable_set_orientation (GTK_ORIENTABLE (self), GTK_ORIENTATION_VERTICAL);
  gtk_box_set_spacing (GTK_BOX (self), 4);

  GtkWidget *header = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  self->status = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (self->status, TRUE);
  gtk_label_set_xalign (self->status, 0);
  gtk_widget_set_hexpand (GTK_WIDGET (self->status), TRUE);
  gtk_box_append (GTK_BOX (header), GTK_WIDGET (self->status));
  self->cancel = button ("_Cancel Sweep", NULL,
                         "Stop the run under way (its results are kept) and skip the rest");
  g_signal_connect (self->cancel, "clicked", G_CALLBACK (on_cancel), self);
  gtk_widget_set_visible (self->cancel, FALSE);
  gtk_box_append (GTK_BOX (header), self->cancel);
  gtk_box_append (GTK_BOX (header),
                  button ("N_ew Sweep…", "win.sweep",
                          "Train this experiment over a grid of one or two settings"));
  gtk_box_append (GTK_BOX (self), header);
  self->progress = GTK_PROGRESS_BAR (gtk_progress_bar_new ());
  gtk_widget_set_visible (GTK_WIDGET (self->progress), FALSE);
  gtk_box_append (GTK_BOX (self), GTK_WIDGET (self->progress));

  self->stack = GTK_STACK (gtk_stack_new ());
  gtk_widget_set_vexpand (GTK_WIDGET (self->stack), TRUE);
  GtkWidget *none = gtk_label_new ("No sweep yet. A sweep trains this experiment at every "
                                   "combination of the values of one or two settings — a "
                                   "layer's kernel and depth, the learning rate, em_steps, "
                                   "the seed — each point with its matched baseline, one run "
                                   "after another in the background. New Sweep… starts one; "
                                   "its runs fill a table, the metric against the first "
                                   "setting (the paper's Fig. 17) and parallel coordinates "
                                   "here as they end.");
  gtk_label_set_wrap (GTK_LABEL (none), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (none), 70);
  gtk_widget_add_css_class (none, "dim-label");
  gtk_stack_add_named (self->stack, none, "none");

  GtkWidget *plots = gtk_paned_new (GTK_ORIENTATION_HORIZONTAL);
  self->plot = CAML_PLOT_VIEW (caml_plot_view_new ());
  gtk_widget_set_size_request (GTK_WIDGET (self->plot), 240, 160);
  gtk_widget_set_hexpand (GTK_WIDGET (self->plot), TRUE);
  caml_plot_view_set_placeholder (self->plot, "The metric of each run, against the first "
                                  "setting, as the runs end");
  caml_plot_view_set_hover_func (self->plot, hover_plot, self);
  GtkGesture *click = gtk_gesture_click_new ();
  g_signal_connect (click, "released", G_CALLBACK (on_plot_released), self);
  gtk_widget_add_controller (GTK_WIDGET (self->plot), GTK_EVENT_CONTROLLER (click));
  self->parallel = g_object_new (CAML_TYPE_PARALLEL_VIEW, NULL);
  gtk_widget_set_size_request (GTK_WIDGET (self->parallel), 240, 160);
  gtk_widget_set_hexpand (GTK_WIDGET (self->parallel), TRUE);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->parallel), NULL);
  g_signal_connect (self->parallel, "row-activated", G_CALLBACK (on_parallel_activated), self);
  gtk_paned_set_start_child (GTK_PANED (plots), GTK_WIDGET (self->plot));
  gtk_paned_set_end_child (GTK_PANED (plots), GTK_WIDGET (self->parallel));
  gtk_paned_set_shrink_start_child (GTK_PANED (plots), FALSE);
  gtk_paned_set_shrink_end_child (GTK_PANED (plots), FALSE);

  self->table = GTK_COLUMN_VIEW (gtk_column_view_new (NULL));
  gtk_column_view_set_show_column_separators (self->table, TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->table), "data-table");
  g_signal_connect (self->table, "activate", G_CALLBACK (on_table_activate), self);
  add_column (self, "", text_axis0);
  add_column (self, "", text_axis1);
  add_column (self, "Model", text_model);
  add_column (self, "State", text_state);
  add_column (self, "Acc. / MSE", text_metric);
  add_column (self, "Test loss", text_loss);
  add_column (self, "σ-AUC", text_auc);
  add_column (self, "Steps/s", text_speed);
  add_column (self, "Time", text_time);
  add_column (self, "Error", text_error);
  GtkWidget *scroll = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroll), GTK_WIDGET (self->table));
  gtk_widget_set_size_request (scroll, -1, 90);
  gtk_widget_set_tooltip_text (scroll, "Every run of the sweep; double-click (or Enter on) an "
                                       "ended run to open it in a window of its own");

  GtkWidget *split = gtk_paned_new (GTK_ORIENTATION_VERTICAL);
  gtk_paned_set_start_child (GTK_PANED (split), plots);
  gtk_paned_set_end_child (GTK_PANED (split), scroll);
  gtk_paned_set_shrink_start_child (GTK_PANED (split), FALSE);
  gtk_paned_set_shrink_end_child (GTK_PANED (split), FALSE);
  gtk_paned_set_resize_end_child (GTK_PANED (split), FALSE);
  gtk_stack_add_named (self->stack, split, "sweep");
  gtk_box_append (GTK_BOX (self), GTK_WIDGET (self->stack));
  self->ended_drawn = -1;
  name_columns (self);
}
