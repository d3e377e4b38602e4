/* caml-layer-row.c — one layer of the model stack. */
#include "caml-layer-row.h"

struct _CamlLayerRow {
  GtkListBoxRow parent_instance;

  /* template widgets */
  GtkLabel *index_label;
  GtkLabel *title_label;
  GtkLabel *options_label;
  GtkLabel *shape_label;
  GtkLabel *error_label;
};

G_DEFINE_FINAL_TYPE (CamlLayerRow, caml_layer_row, GTK_TYPE_LIST_BOX_ROW)

static void
caml_layer_row_class_init (CamlLayerRowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/caml/Workbench/ui/caml-layer-row.ui");
  gtk_widget_class_bind_template_child (widget_class, CamlLayerRow, index_label);
  gtk_widget_class_bind_template_child (widget_class, CamlLayerRow, title_label);
  gtk_widget_class_bind_template_child (widget_class, CamlLayerRow, options_label);
  gtk_widget_class_bind_template_child (widget_class, CamlLayerRow, shape_label);
  gtk_widget_class_bind_template_child (widget_class, CamlLayerRow, error_label);
}

static void
caml_layer_row_init (CamlLayerRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

GtkWidget *
caml_layer_row_new (void)
{
  return g_object_new (CAML_TYPE_LAYER_ROW, NULL);
}

void
caml_layer_row_update (CamlLayerRow *self, int index, const char *title,
                       const char *options, const char *shape, const char *error)
{
  g_autofree char *number = g_strdup_printf ("%d", index);

  g_return_if_fail (CAML_IS_LAYER_ROW (self));
  gtk_label_set_text (self->index_label, number);
  gtk_label_set_text (self->title_label, title);
  gtk_label_set_text (self->options_label, options != NULL ? options : "");
  gtk_label_set_text (self->shape_label, shape != NULL ? shape : "—");
  gtk_label_set_text (self->error_label, error != NULL ? error : "");
  gtk_widget_set_visible (GTK_WIDGET (self->error_label), error != NULL);
  if (error != NULL)
    gtk_widget_add_css_class (GTK_WIDGET (self), "invalid");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self), "invalid");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self), error);
}
