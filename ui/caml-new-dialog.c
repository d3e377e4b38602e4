/* caml-new-dialog.c — the question File → New asks: which data set. Built
 * in code rather than from a template: a label, a drop-down and two
 * buttons, with no state of its own beyond the callback. */
#include "caml-new-dialog.h"
#include "caml-data-source.h"
#include "presets.h"

typedef struct {
  CamlNewDialogFunc func;
  gpointer          user_data;
  GtkDropDown      *picker;
} NewDialog;

static void
on_create (GtkButton *button, GtkWindow *dialog)
{
  NewDialog *d = g_object_get_data (G_OBJECT (dialog), "caml-new-dialog");
  guint i = gtk_drop_down_get_selected (d->picker);

  if (i < (guint) caml_presets_n_blank_kinds)
    d->func (caml_presets_blank_kinds[i], d->user_data);
  gtk_window_destroy (dialog);
}

GtkWindow *
caml_new_dialog_present (GtkWindow *parent, CamlNewDialogFunc func, gpointer user_data)
{
  GtkWindow *dialog = GTK_WINDOW (gtk_window_new ());
  gtk_window_set_title (dialog, "New Experiment");
  gtk_window_set_modal (dialog, TRUE);
  gtk_window_set_resizable (dialog, FALSE);
  gtk_window_set_destroy_with_parent (dialog, TRUE);
  if (parent != NULL)
    gtk_window_set_transient_for (dialog, parent);

  NewDialog *d = g_new0 (NewDialog, 1);
  d->func = func;
  d->user_data = user_data;
  g_object_set_data_full (G_OBJECT (dialog), "caml-new-dialog", d, g_free);

  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  gtk_widget_set_margin_top (box, 18);
  gtk_widget_set_margin_bottom (box, 18);
  gtk_widget_set_margin_start (box, 18);
  gtk_widget_set_margin_end (box, 18);
  GtkWidget *text = gtk_label_new ("A blank experiment — no layers yet — on the data set you "
                                   "pick. Add layers from the Model tab's palette, then Train.");
  gtk_label_set_wrap (GTK_LABEL (text), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (text), 44);
  gtk_label_set_xalign (GTK_LABEL (text), 0);
  gtk_box_append (GTK_BOX (box), text);

  const char **titles = g_new0 (const char *, caml_presets_n_blank_kinds + 1);
  for (int i = 0; i < caml_presets_n_blank_kinds; i++)
    titles[i] = caml_data_source_title (caml_presets_blank_kinds[i]);
  GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *label = gtk_label_new_with_mnemonic ("_Data");
  d->picker = GTK_DROP_DOWN (gtk_drop_down_new_from_strings (titles));
  g_free (titles);
  gtk_widget_set_hexpand (GTK_WIDGET (d->picker), TRUE);
  gtk_label_set_mnemonic_widget (GTK_LABEL (label), GTK_WIDGET (d->picker));
  gtk_box_append (GTK_BOX (row), label);
  gtk_box_append (GTK_BOX (row), GTK_WIDGET (d->picker));
  gtk_box_append (GTK_BOX (box), row);

  GtkWidget *buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_halign (buttons, GTK_ALIGN_END);
  GtkWidget *cancel = gtk_button_new_with_mnemonic ("_Cancel");
  GtkWidget *create = gtk_button_new_with_mnemonic ("C_reate");
  gtk_widget_add_css_class (create, "suggested-action");
  g_signal_connect_swapped (cancel, "clicked", G_CALLBACK (gtk_window_destroy), dialog);
  g_signal_connect (create, "clicked", G_CALLBACK (on_create), dialog);
  g_object_set_data (G_OBJECT (dialog), "caml-new-create", create);
  gtk_box_append (GTK_BOX (buttons), cancel);
  gtk_box_append (GTK_BOX (buttons), create);
  gtk_box_append (GTK_BOX (box), buttons);

  gtk_window_set_child (dialog, box);
  gtk_window_set_default_widget (dialog, create);
  gtk_window_present (dialog);
  gtk_widget_grab_focus (GTK_WIDGET (d->picker));
  return dialog;
}

GtkDropDown *
caml_new_dialog_get_picker (GtkWindow *dialog)
{
  NewDialog *d = g_object_get_data (G_OBJECT (dialog), "caml-new-dialog");
  return d != NULL ? d->picker : NULL;
}

GtkButton *
caml_new_dialog_get_create (GtkWindow *dialog)
{
  return g_object_get_data (G_OBJECT (dialog), "caml-new-create");
}
