/* caml-status-line.c — the line under the plots (caml-status-line.h). */
#include "caml-status-line.h"
#include "caml-format.h"

#define NOTICE_MS 6000   /* a notice stays in the status label */

struct _CamlStatusLine {
  GtkBox parent_instance;

  /* template widgets */
  GtkSpinner     *load_spinner;
  GtkProgressBar *progress_bar;
  GtkLabel       *status_label;

  /* owned */
  CamlSession    *session;
  char           *status;         /* the status when no notice covers it */
  char           *notice;         /* shown instead, or NULL */
  guint           notice_source;  /* the timeout that ends it (holds a ref) */
  char           *last_notice;
};

G_DEFINE_FINAL_TYPE (CamlStatusLine, caml_status_line, GTK_TYPE_BOX)

/* The status label: the run's status, or for a while a notice. */
static void
set_status (CamlStatusLine *self, const char *text)
{
  if (text != self->status)   /* its own text: keep it (a quiet build) */
    {
      g_free (self->status);
      self->status = g_strdup (text != NULL ? text : "");
    }
  const char *shown = self->notice != NULL ? self->notice
                      : self->status != NULL ? self->status : "";
  gtk_label_set_text (self->status_label, shown);
  /* All of it, when the label is too narrow for it. */
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->status_label), *shown != '\0' ? shown : NULL);
}

/* The spinner, the progress line and the status, as the session says. */
static void
update (CamlStatusLine *self)
{
  double fraction = 0;
  g_autofree char *text = NULL, *status = NULL;
  gboolean busy = self->session != NULL && caml_session_is_busy (self->session);

  gtk_widget_set_visible (GTK_WIDGET (self->load_spinner), busy);
  gtk_spinner_set_spinning (self->load_spinner, busy);
  if (self->session == NULL
      || !caml_session_describe_progress (self->session, &fraction, &text, &status))
    {
      /* A quiet build: the line and status stay as they were; a notice
       * still shows. */
      set_status (self, self->status);
      return;
    }
  gtk_progress_bar_set_fraction (self->progress_bar, fraction);
  gtk_progress_bar_set_text (self->progress_bar, text);
  set_status (self, status);
}

static gboolean
end_notice (gpointer data)
{
  CamlStatusLine *self = data;

  self->notice_source = 0;
  g_clear_pointer (&self->notice, g_free);
  gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), "warning");
  update (self);
  return G_SOURCE_REMOVE;
}

void
caml_status_line_show_notice (CamlStatusLine *self, const char *message, gboolean warning)
{
  g_return_if_fail (CAML_IS_STATUS_LINE (self));
  /* A warning still showing is not replaced by news. */
  if (!warning && self->notice != NULL
      && gtk_widget_has_css_class (GTK_WIDGET (self->status_label), "warning"))
    return;
  g_free (self->notice);
  self->notice = caml_format_sentence (message);   /* the line's one style */
  g_free (self->last_notice);
  self->last_notice = g_strdup (self->notice);
  if (warning)
    gtk_widget_add_css_class (GTK_WIDGET (self->status_label), "warning");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), "warning");
  g_clear_handle_id (&self->notice_source, g_source_remove);
  self->notice_source = g_timeout_add_full (G_PRIORITY_DEFAULT, NOTICE_MS, end_notice,
                                            g_object_ref (self), g_object_unref);
  update (self);
}

void
caml_status_line_end_news (CamlStatusLine *self)
{
  if (self->notice != NULL
      && !gtk_widget_has_css_class (GTK_WIDGET (self->status_label), "warning"))
    {
      g_clear_handle_id (&self->notice_source, g_source_remove);
      g_clear_pointer (&self->notice, g_free);
      update (self);
    }
}

const char *
caml_status_line_get_last_notice (CamlStatusLine *self)
{
  return self->last_notice;
}

static void
on_state (CamlSession *session, GParamSpec *pspec, CamlStatusLine *self)
{
  update (self);
}

static void
on_notice (CamlSession *session, const char *message, gboolean warning, CamlStatusLine *self)
{
  caml_status_line_show_notice (self, message, warning);
}

void
caml_status_line_set_session (CamlStatusLine *self, CamlSession *session)
{
  g_return_if_fail (CAML_IS_STATUS_LINE (self));
  if (self->session != NULL)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_set_object (&self->session, session);
  if (session == NULL)   /* the window goes: no notice keeps the line alive */
    g_clear_handle_id (&self->notice_source, g_source_remove);
  if (session != NULL)
    {
      g_signal_connect (session, "notify::state", G_CALLBACK (on_state), self);
      g_signal_connect (session, "notice", G_CALLBACK (on_notice), self);
    }
  update (self);
}

static void
caml_status_line_dispose (GObject *object)
{
  CamlStatusLine *self = CAML_STATUS_LINE (object);

  caml_status_line_set_session (self, NULL);
  g_clear_handle_id (&self->notice_source, g_source_remove);
  g_clear_pointer (&self->notice, g_free);
  g_clear_pointer (&self->status, g_free);
  g_clear_pointer (&self->last_notice, g_free);
  gtk_widget_dispose_template (GTK_WIDGET (self), CAML_TYPE_STATUS_LINE);
  G_OBJECT_CLASS (caml_status_line_parent_class)->dispose (object);
}

static void
caml_status_line_class_init (CamlStatusLineClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = caml_status_line_dispose;
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/caml/Workbench/ui/caml-status-line.ui");
  gtk_widget_class_bind_template_child (widget_class, CamlStatusLine, load_spinner);
  gtk_widget_class_bind_template_child (widget_class, CamlStatusLine, progress_bar);
  gtk_widget_class_bind_template_child (widget_class, CamlStatusLine, status_label);
}

static void
caml_status_line_init (CamlStatusLine *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}
