/* caml-inspect-page.c — the Inspect page (caml-inspect-page.h). */
#include <math.h>

#include "caml-inspect-page.h"
#include "figures.h"
#include "layer-stats.h"

typedef enum {
  COLUMN_INDEX,
  COLUMN_TYPE,
  COLUMN_SHAPE,
  COLUMN_PARAMS,
  COLUMN_MEAN,
  COLUMN_SD,
  N_COLUMNS
} Column;

static const char *const column_titles[N_COLUMNS] = {
  "#", "Layer", "Output", "Params", "Mean χ", "SD χ",
};

struct _CamlInspectPage {
  GtkBox parent_instance;

  /* template widgets */
  GtkLabel       *summary_label;
  GtkColumnView  *table;
  CamlPlotView   *histogram_view;

  /* owned */
  CamlSession     *session;
  GtkStringList   *rows;        /* one item per layer: its index */
  GtkSingleSelection *selection;
  int              layer;       /* the layer chosen, -1: the first gated one */
  gboolean         filling;     /* the rows are being replaced */
};

G_DEFINE_FINAL_TYPE (CamlInspectPage, caml_inspect_page, GTK_TYPE_BOX)

static const CamlLayerStat *
row_stat (CamlInspectPage *self, GtkListItem *item)
{
  const CamlLayerStats *stats = self->session != NULL
                                ? caml_session_get_layer_stats (self->session) : NULL;
  GtkStringObject *row = gtk_list_item_get_item (item);
  int i = row != NULL ? atoi (gtk_string_object_get_string (row)) : -1;
  return stats != NULL && i >= 0 && i < stats->n_layers ? &stats->layers[i] : NULL;
}

static void
setup_cell (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
  Column column = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (factory), "column"));
  GtkWidget *label = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (label), column == COLUMN_TYPE ? 0.0f : 1.0f);
  if (column != COLUMN_TYPE)
    gtk_widget_add_css_class (label, "numeric");
  gtk_list_item_set_child (item, label);
}

static void
bind_cell (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
  CamlInspectPage *self = user_data;
  Column column = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (factory), "column"));
  const CamlLayerStat *s = row_stat (self, item);
  g_autofree char *text = NULL;
  if (s == NULL)
    text = g_strdup ("");
  else
    switch (column)
      {
      case COLUMN_INDEX:  text = g_strdup_printf ("%d", s->index); break;
      case COLUMN_TYPE:   text = g_strdup (s->title); break;
      case COLUMN_SHAPE:  text = g_strdup (s->shape); break;
      case COLUMN_PARAMS: text = g_strdup_printf ("%zu", s->n_params); break;
      case COLUMN_MEAN:
      case COLUMN_SD:
        {
          double v = column == COLUMN_MEAN ? caml_layer_stat_mean (s) : caml_layer_stat_sd (s);
          text = !s->gated ? g_strdup ("") : isfinite (v) ? g_strdup_printf ("%.3f", v)
                                                          : g_strdup ("—");
        }
        break;
      default:
        g_assert_not_reached ();
      }
  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)), text);
}

static int
first_gated (const CamlLayerStats *stats)
{
  for (int i = 0; i < stats->n_layers; i++)
    if (stats->layers[i].gated)
      return i;
  return -1;
}

/* The bin under the pointer: "χ 0.40–0.45: 12.3 % of 3,136 values". */
static char *
hover_histogram (CamlPlotView *view, double x, double y, gpointer user_data)
{
  CamlInspectPage *self = user_data;
  const CamlLayerStats *stats = self->session != NULL
                                ? caml_session_get_layer_stats (self->session) : NULL;
  guint selected = gtk_single_selection_get_selected (self->selection);
  if (stats == NULL || selected >= (guint) stats->n_layers || x < 0 || x > 1)
    return NULL;
  const CamlLayerStat *s = &stats->layers[selected];
  if (!s->gated || s->count == 0)
    return NULL;
  int b = CLAMP ((int) floor (x * CAML_CHI_BINS), 0, CAML_CHI_BINS - 1);
  return g_strdup_printf ("χ %.2f–%.2f: %.1f %% of %'ld values", (double) b / CAML_CHI_BINS,
                          (double) (b + 1) / CAML_CHI_BINS,
                          100.0 * (double) s->bins[b] / (double) s->count, (long) s->count);
}

/* The histogram of the layer selected, or why there is none. */
static void
rebuild_histogram (CamlInspectPage *self)
{
  const CamlLayerStats *stats = self->session != NULL
                                ? caml_session_get_layer_stats (self->session) : NULL;
  guint selected = gtk_single_selection_get_selected (self->selection);
  const CamlLayerStat *s = stats != NULL && selected < (guint) stats->n_layers
                           ? &stats->layers[selected] : NULL;
  if (s == NULL || !s->gated)
    {
      caml_plot_view_clear (self->histogram_view);
      caml_plot_view_set_placeholder (self->histogram_view,
                                      stats == NULL ? "the model is being built"
                                      : first_gated (stats) < 0 ? "this model has no gate χ"
                                      : "select a CA layer to see its χ histogram");
      return;
    }
  g_autoptr (CamlPlotFigure) figure = caml_figure_chi_histogram (s, stats->step);
  caml_plot_view_set_figure (self->histogram_view, figure, 0, 1);
}

static void
on_selected (GtkSingleSelection *selection, GParamSpec *pspec, CamlInspectPage *self)
{
  if (self->filling)
    return;
  self->layer = (int) gtk_single_selection_get_selected (selection);
  rebuild_histogram (self);
}

/* New statistics: the rows are bound again (the same items, so the
 * selection stays), and the histogram follows. */
static void
rebuild (CamlInspectPage *self)
{
  const CamlLayerStats *stats = caml_session_get_layer_stats (self->session);
  int n = stats != NULL ? stats->n_layers : 0;
  g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; i < n; i++)
    g_ptr_array_add (items, g_strdup_printf ("%d", i));
  g_ptr_array_add (items, NULL);

  self->filling = TRUE;
  gtk_string_list_splice (self->rows, 0, g_list_model_get_n_items (G_LIST_MODEL (self->rows)),
                          (const char *const *) items->pdata);
  int want = self->layer >= 0 && self->layer < n ? self->layer
             : stats != NULL ? first_gated (stats) : -1;
  gtk_single_selection_set_selected (self->selection,
                                     want >= 0 ? (guint) want : GTK_INVALID_LIST_POSITION);
  self->filling = FALSE;

  if (stats == NULL)
    gtk_label_set_text (self->summary_label, "The model's layers appear here once it is built.");
  else
    {
      g_autofree char *text =
        stats->n_samples > 0
        ? g_strdup_printf ("%d layers. χ over the first %d %s samples at step %ld: per sample "
                           "(CA-NN), per position (convolutional CA layers), per word (text).",
                           n, stats->n_samples,
                           caml_run_get_data (caml_session_peek_run (self->session))->test != NULL
                           ? "test" : "training", MAX (stats->step, 0))
        : g_strdup_printf ("%d layers; there is no data to measure χ on.", n);
      gtk_label_set_text (self->summary_label, text);
    }
  rebuild_histogram (self);
}

static void
on_progress (CamlSession *session, guint what, CamlInspectPage *self)
{
  if (what & CAML_SESSION_NEW_RUN)
    self->layer = -1;   /* another model: its first gated layer */
  if (what & (CAML_SESSION_LAYERS | CAML_SESSION_NEW_RUN))
    rebuild (self);
}

void
caml_inspect_page_set_session (CamlInspectPage *self, CamlSession *session)
{
  g_return_if_fail (CAML_IS_INSPECT_PAGE (self));
  if (self->session != NULL)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_set_object (&self->session, session);
  if (session != NULL)
    {
      g_signal_connect (session, "progress", G_CALLBACK (on_progress), self);
      rebuild (self);
    }
}

GtkColumnView *
caml_inspect_page_get_table (CamlInspectPage *self)
{
  return self->table;
}

CamlPlotView *
caml_inspect_page_get_histogram (CamlInspectPage *self)
{
  return self->histogram_view;
}

int
caml_inspect_page_get_layer (CamlInspectPage *self)
{
  guint selected = gtk_single_selection_get_selected (self->selection);
  return selected == GTK_INVALID_LIST_POSITION ? -1 : (int) selected;
}

void
caml_inspect_page_select_layer (CamlInspectPage *self, int layer)
{
  gtk_single_selection_set_selected (self->selection, (guint) layer);
}

static void
caml_inspect_page_dispose (GObject *object)
{
  CamlInspectPage *self = CAML_INSPECT_PAGE (object);

  caml_inspect_page_set_session (self, NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), CAML_TYPE_INSPECT_PAGE);
  g_clear_object (&self->selection);
  G_OBJECT_CLASS (caml_inspect_page_parent_class)->dispose (object);
}

static void
caml_inspect_page_class_init (CamlInspectPageClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = caml_inspect_page_dispose;
  g_type_ensure (CAML_TYPE_PLOT_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/caml/Workbench/ui/caml-inspect-page.ui");
  gtk_widget_class_bind_template_child (widget_class, CamlInspectPage, summary_label);
  gtk_widget_class_bind_template_child (widget_class, CamlInspectPage, table);
  gtk_widget_class_bind_template_child (widget_class, CamlInspectPage, histogram_view);
}

static void
caml_inspect_page_init (CamlInspectPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->layer = -1;
  self->rows = gtk_string_list_new (NULL);
  self->selection = gtk_single_selection_new (G_LIST_MODEL (self->rows));   /* takes rows */
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  g_signal_connect (self->selection, "notify::selected", G_CALLBACK (on_selected), self);
  gtk_column_view_set_model (self->table, GTK_SELECTION_MODEL (self->selection));
  for (int c = 0; c < N_COLUMNS; c++)
    {
      GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
      g_object_set_data (G_OBJECT (factory), "column", GINT_TO_POINTER (c));
      g_signal_connect (factory, "setup", G_CALLBACK (setup_cell), self);
      g_signal_connect (factory, "bind", G_CALLBACK (bind_cell), self);
      GtkColumnViewColumn *column = gtk_column_view_column_new (column_titles[c], factory);
      gtk_column_view_column_set_expand (column, c == COLUMN_TYPE);
      gtk_column_view_append_column (self->table, column);
      g_object_unref (column);
    }
  caml_plot_view_set_placeholder (self->histogram_view, "the model is being built");
  caml_plot_view_set_hover_func (self->histogram_view, hover_histogram, self);
}
