/* caml-info-bar.c — the banner (caml-info-bar.h). */
#include "caml-info-bar.h"

struct _CamlInfoBar {
  GtkBox parent_instance;

  /* template widgets */
  GtkRevealer *banner_revealer;
  GtkImage    *banner_icon;
  GtkLabel    *banner_label;
  GtkButton   *banner_button;
  GtkButton   *banner_discard_button;

  /* owned */
  char        *message;
  gboolean     set_aside;
};

G_DEFINE_FINAL_TYPE (CamlInfoBar, caml_info_bar, GTK_TYPE_BOX)

void
caml_info_bar_show_error (CamlInfoBar *self, const char *message)
{
  g_return_if_fail (CAML_IS_INFO_BAR (self));
  /* The buttons belong to the other kinds of message only. */
  self->set_aside = FALSE;
  gtk_widget_set_visible (GTK_WIDGET (self->banner_button), FALSE);
  gtk_widget_set_visible (GTK_WIDGET (self->banner_discard_button), FALSE);
  gtk_widget_remove_css_class (GTK_WIDGET (self->banner_revealer), "diverged");
  gtk_widget_remove_css_class (GTK_WIDGET (self->banner_revealer), "info");
  gtk_image_set_from_icon_name (self->banner_icon, "dialog-error-symbolic");
  g_free (self->message);
  self->message = g_strdup (message);
  gtk_label_set_text (self->banner_label, message);
  gtk_revealer_set_reveal_child (self->banner_revealer, message != NULL);
}

void
caml_info_bar_show_divergence (CamlInfoBar *self, const char *message,
                               const char *continue_label)
{
  caml_info_bar_show_error (self, message);
  gtk_button_set_label (self->banner_button, continue_label);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->banner_button), "win.continue-diverged");
  gtk_widget_add_css_class (GTK_WIDGET (self->banner_button), "suggested-action");
  gtk_widget_set_visible (GTK_WIDGET (self->banner_button), TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->banner_revealer), "diverged");
}

/* An offer rather than an error. */
static void
show_info (CamlInfoBar *self)
{
  gtk_widget_add_css_class (GTK_WIDGET (self->banner_revealer), "info");
  gtk_image_set_from_icon_name (self->banner_icon, "dialog-information-symbolic");
}

void
caml_info_bar_show_set_aside (CamlInfoBar *self, const char *message)
{
  caml_info_bar_show_error (self, message);
  gtk_button_set_label (self->banner_button, "_Save Them…");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->banner_button), "win.save-set-aside");
  gtk_widget_set_visible (GTK_WIDGET (self->banner_button), TRUE);
  gtk_button_set_label (self->banner_discard_button, "_Let Them Go");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->banner_discard_button),
                                  "win.drop-set-aside");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->banner_discard_button),
                               "Forget the set-aside weights (closing the window asks first)");
  /* Information, not an alarm: neither button is drawn as a warning. */
  gtk_widget_remove_css_class (GTK_WIDGET (self->banner_discard_button), "destructive-action");
  gtk_widget_remove_css_class (GTK_WIDGET (self->banner_button), "suggested-action");
  gtk_widget_set_visible (GTK_WIDGET (self->banner_discard_button), TRUE);
  show_info (self);
  self->set_aside = TRUE;
}

void
caml_info_bar_show_recovery (CamlInfoBar *self, const char *message, gboolean can_recover)
{
  caml_info_bar_show_error (self, message);
  gtk_button_set_label (self->banner_button, "_Recover");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->banner_button),
                                  "app.recover-autosaves");
  gtk_button_set_label (self->banner_discard_button, "_Discard");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->banner_discard_button),
                                  "app.discard-autosaves");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->banner_discard_button),
                               "Delete the unsaved experiments left by the session that ended");
  gtk_widget_add_css_class (GTK_WIDGET (self->banner_discard_button), "destructive-action");
  gtk_widget_add_css_class (GTK_WIDGET (self->banner_button), "suggested-action");
  gtk_widget_set_visible (GTK_WIDGET (self->banner_button), can_recover);
  gtk_widget_set_visible (GTK_WIDGET (self->banner_discard_button), TRUE);
  show_info (self);
}

const char *
caml_info_bar_get_message (CamlInfoBar *self)
{
  return self->message;
}

gboolean
caml_info_bar_is_set_aside (CamlInfoBar *self)
{
  return self->set_aside;
}

static void
caml_info_bar_dispose (GObject *object)
{
  CamlInfoBar *self = CAML_INFO_BAR (object);

  g_clear_pointer (&self->message, g_free);
  gtk_widget_dispose_template (GTK_WIDGET (self), CAML_TYPE_INFO_BAR);
  G_OBJECT_CLASS (caml_info_bar_parent_class)->dispose (object);
}

static void
caml_info_bar_class_init (CamlInfoBarClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = caml_info_bar_dispose;
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/caml/Workbench/ui/caml-info-bar.ui");
  gtk_widget_class_bind_template_child (widget_class, CamlInfoBar, banner_revealer);
  gtk_widget_class_bind_template_child (widget_class, CamlInfoBar, banner_icon);
  gtk_widget_class_bind_template_child (widget_class, CamlInfoBar, banner_label);
  gtk_widget_class_bind_template_child (widget_class, CamlInfoBar, banner_button);
  gtk_widget_class_bind_template_child (widget_class, CamlInfoBar, banner_discard_button);
}

static void
caml_info_bar_init (CamlInfoBar *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  /* The text can be selected with the mouse (to copy a command) but never
   * takes the keyboard focus: a focused selectable label selects all of
   * its text. (GtkLabel:selectable turns focusable on.) */
  gtk_widget_set_focusable (GTK_WIDGET (self->banner_label), FALSE);
}
