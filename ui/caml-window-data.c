/* caml-window-data.c — the side bar's controls of the built-in surface
 * data: the share of the grid trained on and the noise added to the
 * training targets (data.train_fraction, data.noise), shown only for that
 * data. Each change is an edit through the session (dirty, autosave, the
 * data made again on a worker); typed values out of range are clamped with
 * the "kept at" notices of every other field. */
#include "caml-window-private.h"

static void
report (const char *message, gpointer user_data)
{
  caml_window_show_notice (CAML_WINDOW (user_data), message, TRUE);
}

static void
on_fraction_changed (GtkSpinButton *spin, CamlWindow *self)
{
  if (!self->syncing)
    caml_session_set_train_fraction (self->session, gtk_spin_button_get_value (spin));
}

static void
on_noise_changed (GtkSpinButton *spin, CamlWindow *self)
{
  if (!self->syncing)
    caml_session_set_noise (self->session, gtk_spin_button_get_value (spin));
}

void
caml_window_data_init (CamlWindow *self)
{
  gtk_spin_button_set_range (self->noise_spin, 0.0, CAML_MAX_NOISE);
  caml_spin_button_check_range (self->fraction_spin, "train fraction", report, self);
  caml_spin_button_check_range (self->noise_spin, "noise", report, self);
  g_signal_connect (self->fraction_spin, "value-changed", G_CALLBACK (on_fraction_changed), self);
  g_signal_connect (self->noise_spin, "value-changed", G_CALLBACK (on_noise_changed), self);
}

static void
on_data_changed (CamlWindow *self)
{
  gboolean was_syncing = self->syncing;
  self->syncing = TRUE;
  caml_window_data_sync (self, caml_session_get_experiment (self->session));
  self->syncing = was_syncing;
}

/* Other data chosen, or made again: the fields follow. */
void
caml_window_data_set_session (CamlWindow *self, CamlSession *session)
{
  g_signal_connect_swapped (session, "notify::data-choice", G_CALLBACK (on_data_changed), self);
  g_signal_connect_swapped (session, "data-changed", G_CALLBACK (on_data_changed), self);
}

/* With self->syncing set: the fields from the experiment. */
void
caml_window_data_sync (CamlWindow *self, const CamlExperiment *exp)
{
  gboolean surface = exp->data.kind == CAML_DATA_SURFACE;
  gtk_widget_set_visible (GTK_WIDGET (self->surface_data_grid), surface);
  if (!surface)
    return;
  gtk_spin_button_set_value (self->fraction_spin, exp->data.train_fraction);
  gtk_spin_button_set_value (self->noise_spin, exp->data.noise);
}
