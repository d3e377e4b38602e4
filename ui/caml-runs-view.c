/* caml-runs-view.c — the Runs page (caml-runs-view.h). */
#include <math.h>

#include "caml-runs-view.h"

struct _CamlRunsView {
  GtkBox parent_instance;

  /* template widgets */
  GtkColumnView *table;
  GtkStack      *runs_stack;

  /* owned */
  CamlSession   *session;
  GListModel    *runs;        /* the session's, while there is one */
};

G_DEFINE_FINAL_TYPE (CamlRunsView, caml_runs_view, GTK_TYPE_BOX)

/* A figure as the table gives it: prefix and 4 significant digits, "—"
 * for none (NaN). */
static char *
figure (double value, const char *prefix)
{
  if (!isfinite (value))
    return g_strdup ("—");
  return g_strdup_printf ("%s%.4g", prefix, value);
}

/* ------------------------------------------------------------- columns */

typedef char *(*CellText) (CamlRunRecord *record);

static char *
text_state (CamlRunRecord *r)
{
  const CamlRunFigures *f = caml_run_record_get_figures (r);
  return g_strdup_printf ("%s %'ld", caml_run_record_state_name (f->state), f->step);
}

static char *
text_train (CamlRunRecord *r)
{
  return figure (caml_run_record_get_figures (r)->train_loss, "");
}

static char *
text_test (CamlRunRecord *r)
{
  return figure (caml_run_record_get_figures (r)->test_loss, "");
}

static char *
text_metric (CamlRunRecord *r)
{
  const CamlRunFigures *f = caml_run_record_get_figures (r);
  return figure (f->test_metric, f->classification ? "acc " : "MSE ");
}

static char *
text_auc (CamlRunRecord *r)
{
  double auc = caml_run_record_get_figures (r)->sigma_auc;
  return isfinite (auc) ? g_strdup_printf ("%.4f", auc) : g_strdup ("—");
}

static char *
text_params (CamlRunRecord *r)
{
  return g_strdup_printf ("%'zu", caml_run_record_get_figures (r)->n_params);
}

static char *
text_speed (CamlRunRecord *r)
{
  double speed = caml_run_record_get_figures (r)->steps_per_second;
  return isfinite (speed) ? g_strdup_printf ("%'.0f", speed) : g_strdup ("—");
}

static char *
text_time (CamlRunRecord *r)
{
  double s = caml_run_record_get_figures (r)->seconds;
  if (!isfinite (s))
    return g_strdup ("—");
  if (s < 60)
    return g_strdup_printf ("%.2g s", s);
  return g_strdup_printf ("%d min %02d s", (int) (s / 60), (int) fmod (s, 60));
}

static char *
text_difference (CamlRunRecord *r)
{
  double d = caml_run_record_get_difference (r);
  return isfinite (d) ? g_strdup_printf ("%+.4g", d) : g_strdup ("—");
}

static char *
text_differs (CamlRunRecord *r)
{
  return g_strdup (caml_run_record_get_differs (r));
}

static void
setup_label (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  GtkWidget *label = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (label), data == text_differs ? 0.0f : 1.0f);
  if (data == text_differs)
    {
      gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
      gtk_label_set_width_chars (GTK_LABEL (label), 12);
    }
  gtk_list_item_set_child (item, label);
}

static void
bind_label (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  CamlRunRecord *r = gtk_list_item_get_item (item);
  GtkWidget *label = gtk_list_item_get_child (item);
  g_autofree char *text = ((CellText) data) (r);
  gtk_label_set_text (GTK_LABEL (label), text);
  gtk_widget_set_tooltip_text (label, data == text_differs ? text : NULL);
}

/* The tick and the name follow their record both ways. */
static void
setup_tick (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  GtkWidget *check = gtk_check_button_new ();
  gtk_widget_set_tooltip_text (check, "Overlay this run's curves on the loss plot");
  gtk_list_item_set_child (item, check);
}

static void
setup_name (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  GtkWidget *name = gtk_editable_label_new ("");
  gtk_widget_set_tooltip_text (name, "Double-click to rename");
  gtk_editable_set_width_chars (GTK_EDITABLE (name), 10);
  gtk_list_item_set_child (item, name);
}

static void
bind_property (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  CamlRunRecord *r = gtk_list_item_get_item (item);
  GtkWidget *child = gtk_list_item_get_child (item);
  const char *target = GTK_IS_CHECK_BUTTON (child) ? "active" : "text";
  GBinding *binding = g_object_bind_property (r, data, child, target,
                                              G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_set_data (G_OBJECT (child), "binding", binding);
}

static void
unbind_property (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  GtkWidget *child = gtk_list_item_get_child (item);
  GBinding *binding = g_object_get_data (G_OBJECT (child), "binding");
  if (binding != NULL)
    g_binding_unbind (binding);
  g_object_set_data (G_OBJECT (child), "binding", NULL);
}

/* The bin button: deletes its row's run. */
static void
on_delete_clicked (GtkButton *button, CamlRunsView *self)
{
  CamlRunRecord *r = g_object_get_data (G_OBJECT (button), "record");
  if (r != NULL && self->session != NULL)
    caml_session_delete_run (self->session, r);
}

static void
setup_delete (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  GtkWidget *button = gtk_button_new_from_icon_name ("user-trash-symbolic");
  gtk_button_set_has_frame (GTK_BUTTON (button), FALSE);
  gtk_widget_set_tooltip_text (button, "Delete this run (its curves and figures)");
  g_signal_connect (button, "clicked", G_CALLBACK (on_delete_clicked), data);
  gtk_list_item_set_child (item, button);
}

static void
bind_delete (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  g_object_set_data (G_OBJECT (gtk_list_item_get_child (item)), "record",
                     gtk_list_item_get_item (item));   /* the list holds it meanwhile */
}

static void
unbind_delete (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  g_object_set_data (G_OBJECT (gtk_list_item_get_child (item)), "record", NULL);
}

static void
add_column (CamlRunsView *self, const char *title, const char *tooltip, GCallback setup,
            GCallback bind, GCallback unbind, gpointer data, gboolean expand)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  g_signal_connect (factory, "setup", setup, data);
  g_signal_connect (factory, "bind", bind, data);
  if (unbind != NULL)
    g_signal_connect (factory, "unbind", unbind, data);
  GtkColumnViewColumn *column = gtk_column_view_column_new (title, factory);
  gtk_column_view_column_set_expand (column, expand);
  gtk_column_view_column_set_resizable (column, TRUE);
  gtk_column_view_append_column (self->table, column);
  /* The header's tooltip: no API in GTK 4.8, so the title says enough. */
  (void) tooltip;
  g_object_unref (column);
}

static void
add_text_column (CamlRunsView *self, const char *title, CellText text)
{
  add_column (self, title, NULL, G_CALLBACK (setup_label), G_CALLBACK (bind_label), NULL,
              text, text == text_differs);
}

/* -------------------------------------------------------------- session */

static void
on_items_changed (GListModel *runs, guint position, guint removed, guint added,
                  CamlRunsView *self)
{
  guint n = g_list_model_get_n_items (runs);
  gtk_stack_set_visible_child_name (self->runs_stack, n > 0 ? "table" : "empty");
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "runs.delete-all", n > 0);
}

void
caml_runs_view_set_session (CamlRunsView *self, CamlSession *session)
{
  g_return_if_fail (CAML_IS_RUNS_VIEW (self));
  if (self->runs != NULL)
    g_signal_handlers_disconnect_by_data (self->runs, self);
  g_clear_object (&self->runs);
  g_set_object (&self->session, session);
  GtkNoSelection *selection = NULL;
  if (session != NULL)
    {
      self->runs = g_object_ref (caml_session_get_runs (session));
      g_signal_connect (self->runs, "items-changed", G_CALLBACK (on_items_changed), self);
      selection = gtk_no_selection_new (g_object_ref (self->runs));
      on_items_changed (self->runs, 0, 0, 0, self);
    }
  gtk_column_view_set_model (self->table, GTK_SELECTION_MODEL (selection));
  g_clear_object (&selection);
}

GtkColumnView *
caml_runs_view_get_table (CamlRunsView *self)
{
  return self->table;
}

static void
delete_all (GtkWidget *widget, const char *action, GVariant *param)
{
  CamlRunsView *self = CAML_RUNS_VIEW (widget);
  if (self->session != NULL)
    caml_session_delete_all_runs (self->session);
}

static void
caml_runs_view_dispose (GObject *object)
{
  CamlRunsView *self = CAML_RUNS_VIEW (object);

  if (self->table != NULL)
    caml_runs_view_set_session (self, NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), CAML_TYPE_RUNS_VIEW);
  G_OBJECT_CLASS (caml_runs_view_parent_class)->dispose (object);
}

static void
caml_runs_view_class_init (CamlRunsViewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = caml_runs_view_dispose;
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/caml/Workbench/ui/caml-runs-view.ui");
  gtk_widget_class_bind_template_child (widget_class, CamlRunsView, table);
  gtk_widget_class_bind_template_child (widget_class, CamlRunsView, runs_stack);
  gtk_widget_class_install_action (widget_class, "runs.delete-all", NULL, delete_all);
}

static void
caml_runs_view_init (CamlRunsView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  add_column (self, "", NULL, G_CALLBACK (setup_tick), G_CALLBACK (bind_property),
              G_CALLBACK (unbind_property), "shown", FALSE);
  add_column (self, "Run", NULL, G_CALLBACK (setup_name), G_CALLBACK (bind_property),
              G_CALLBACK (unbind_property), "name", FALSE);
  /* The bin early: in reach without scrolling at 1024 px. */
  add_column (self, "", NULL, G_CALLBACK (setup_delete), G_CALLBACK (bind_delete),
              G_CALLBACK (unbind_delete), self, FALSE);
  add_text_column (self, "Ended at", text_state);
  add_text_column (self, "Train loss", text_train);
  add_text_column (self, "Test loss", text_test);
  add_text_column (self, "Acc. / MSE", text_metric);
  add_text_column (self, "σ-AUC", text_auc);
  add_text_column (self, "Params", text_params);
  add_text_column (self, "Steps/s", text_speed);
  add_text_column (self, "Time", text_time);
  add_text_column (self, "CA − base", text_difference);
  add_text_column (self, "Differs", text_differs);   /* last: it takes the width left */
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "runs.delete-all", FALSE);
}
