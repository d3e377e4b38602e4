/* caml-window-actions.c — the window's actions (win.train, win.data,
 * win.export-loss…), which hand what the user asked for to the session or
 * a dialog, and what enables them. */
#include <string.h>

#include "caml-window-private.h"
#include "caml-data-source.h"

static void
action_train (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;

  caml_window_commit_pending_edit (self);
  caml_window_end_news (self);
  caml_session_train (self->session);
}

static void
action_pause (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_session_pause (CAML_WINDOW (user_data)->session);
}

static void
action_step (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;

  caml_window_commit_pending_edit (self);
  caml_window_end_news (self);
  caml_session_step (self->session);
}

static void
action_stop (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;

  caml_window_end_news (self);
  caml_session_stop (self->session);
}

static void
action_reset (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_session_reset (CAML_WINDOW (user_data)->session);
}

/* The dashed curves of the previous run go. */
static void
action_forget_previous (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_session_forget_previous (CAML_WINDOW (user_data)->session);
}

/* Compare with Baseline, a setting of the session: on, each run Train
 * starts gets its baseline (a run that has ended gets its own, trained
 * alone to its step); off stops and drops the baseline and its curves.
 * The action's state follows the session (on_compare_changed). */
static void
action_compare_baseline (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  gboolean compare = !caml_session_get_compare (self->session);

  if (compare)
    caml_window_commit_pending_edit (self);
  caml_session_set_compare (self->session, compare);
}

static void
on_compare_changed (CamlSession *session, GParamSpec *pspec, CamlWindow *self)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), "compare-baseline");
  g_simple_action_set_state (G_SIMPLE_ACTION (action),
                             g_variant_new_boolean (caml_session_get_compare (session)));
}

/* After a divergence: on from the last evaluation at a tenth of the
 * learning rate, keeping the loss history up to there. */
static void
action_continue_diverged (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_session_continue (CAML_WINDOW (user_data)->session);
}

/* Picks a data set: it is used once its data load. "idx" opens the file
 * chooser for four IDX files, and "text" the choosers of two text files
 * (the data change once they load too). A fetched set that is not there
 * changes nothing: the banner says which command fetches it. */
static void
action_data (GSimpleAction *action, GVariant *value, gpointer user_data)
{
  CamlWindow *self = user_data;
  const char *name = g_variant_get_string (value, NULL);
  int kind = -1;

  for (int i = 0; caml_data_kind_names[i] != NULL; i++)
    if (g_str_equal (caml_data_kind_names[i], name))
      kind = i;
  if (kind < 0)
    {
      g_autofree char *text = g_strdup_printf ("no built-in data set named \"%s\"", name);
      caml_window_show_error (self, text);
      caml_window_sync_data_choice (self);
      return;
    }
  if (kind == CAML_DATA_IDX || kind == CAML_DATA_TEXT)
    {
      /* Which files: asked for every time (the files in use stay until
       * others load; "Files…" asks again). */
      caml_session_cancel_choice (self->session, NULL);
      caml_window_sync_data_choice (self);
      if (kind == CAML_DATA_IDX)
        g_action_group_activate_action (G_ACTION_GROUP (self), "choose-idx", NULL);
      else
        caml_window_ask_text_files (self);
      return;
    }
  caml_session_use_data_kind (self->session, (CamlDataKind) kind);
}

/* "Files…" beside the data: other files of the kind in use (IDX, text). */
static void
action_choose_data_files (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  if (caml_session_get_experiment (self->session)->data.kind == CAML_DATA_TEXT)
    {
      caml_session_cancel_choice (self->session, NULL);
      caml_window_ask_text_files (self);
    }
  else
    g_action_group_activate_action (G_ACTION_GROUP (self), "choose-idx", NULL);
}

static void
action_choose_idx (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_window_ask_idx_files (CAML_WINDOW (user_data));
}

/* Reads the data in use again (after `datasets/fetch`, or a file changed). */
static void
action_reload_data (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;

  caml_window_refresh_data_titles (self);
  caml_session_reload_data (self->session);
}

static void
action_set_lr (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  double lr = g_variant_get_double (param);

  if (!(lr > 0))
    return;
  if (!self->syncing && gtk_spin_button_get_value (self->lr_spin) != lr)
    {
      self->syncing = TRUE;
      caml_spin_button_set_positive (self->lr_spin, lr);
      self->syncing = FALSE;
    }
  caml_session_set_lr (self->session, lr);
}

static void
action_set_em_steps (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  int em = g_variant_get_int32 (param);

  if (em < 0)
    return;
  if (!self->syncing && gtk_spin_button_get_value_as_int (self->em_spin) != em)
    {
      self->syncing = TRUE;
      gtk_spin_button_set_value (self->em_spin, em);
      self->syncing = FALSE;
    }
  caml_session_set_em_steps (self->session, em);
}

static void
action_log_scale (GSimpleAction *action, GVariant *value, gpointer user_data)
{
  CamlWindow *self = user_data;

  gboolean log_scale = g_variant_get_boolean (value);

  g_simple_action_set_state (action, value);
  if (self->settings != NULL)
    g_settings_set_boolean (self->settings, "log-scale", log_scale);
  caml_loss_card_set_log_scale (self->loss_card, log_scale);
}

static void
action_sigma_stretch (GSimpleAction *action, GVariant *value, gpointer user_data)
{
  CamlWindow *self = user_data;
  gboolean stretch = g_variant_get_boolean (value);

  g_simple_action_set_state (action, value);
  if (self->settings != NULL)
    g_settings_set_boolean (self->settings, "sigma-stretch", stretch);
  caml_sigma_page_set_stretch (self->sigma_page, stretch);
}

static void
action_plots_page (GSimpleAction *action, GVariant *value, gpointer user_data)
{
  CamlWindow *self = user_data;
  const char *page = g_variant_get_string (value, NULL);

  if (!g_str_equal (page, "main") && !g_str_equal (page, "parts") && !g_str_equal (page, "words")
      && !g_str_equal (page, "runs") && !g_str_equal (page, "inspect")
      && !g_str_equal (page, "sweep"))
    return;
  g_simple_action_set_state (action, value);
  caml_window_show_page (self, page);
}

/* Sweep…: the dialog, then the sweep on the session, shown on its page. */
static void
on_sweep_chosen (CamlSweepPlan *plan, const char *out_dir, gpointer user_data)
{
  CamlWindow *self = user_data;
  g_autoptr (GError) error = NULL;
  if (!caml_session_start_sweep (self->session, plan, out_dir, &error))
    {
      caml_window_show_error (self, error->message);
      return;
    }
  g_action_group_activate_action (G_ACTION_GROUP (self), "plots-page",
                                  g_variant_new_string ("sweep"));
}

static void
action_sweep (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  const CamlExperiment *exp = caml_session_get_experiment (self->session);
  const char *origin = caml_session_get_origin (self->session);
  /* "preset NAME" names the preset an unedited experiment is */
  const char *preset = origin != NULL && g_str_has_prefix (origin, "preset ")
                       && !caml_session_is_modified (self->session) ? origin + 7 : NULL;
  g_autofree char *dir = caml_session_dup_sweep_dir (self->session);
  if (exp == NULL || exp->n_layers == 0)
    {
      caml_window_show_error (self, "Sweep: the model has no layers yet: add some first");
      return;
    }
  caml_sweep_dialog_present (GTK_WINDOW (self), self->session, preset, dir, on_sweep_chosen,
                             self);
}

static void
action_dismiss_banner (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  if (caml_info_bar_is_set_aside (self->info_bar))
    g_action_group_activate_action (G_ACTION_GROUP (self), "drop-set-aside", NULL);
  else
    caml_session_clear_error (self->session);
}

static void
action_drop_set_aside (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_session_drop_set_aside (CAML_WINDOW (user_data)->session);
}

static void
action_export_plot (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_window_ask_export_plot (CAML_WINDOW (user_data), g_variant_get_string (param, NULL));
}

/* win.export-loss, win.export-surface…: the menu's items, one action per
 * plot so that each is enabled only where the model has the plot. */
static void
action_export_named (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  const char *what = g_action_get_name (G_ACTION (action)) + strlen ("export-");
  caml_window_ask_export_plot (CAML_WINDOW (user_data), what);
}

static void
action_ask_close (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_window_ask_close_for_quit (CAML_WINDOW (user_data));
}

/* The dialogs' actions (caml-window-files.c). */
void caml_window_action_save (GSimpleAction *action, GVariant *param, gpointer user_data);
void caml_window_action_save_as (GSimpleAction *action, GVariant *param, gpointer user_data);
void caml_window_action_save_weights (GSimpleAction *action, GVariant *param, gpointer user_data);
void caml_window_action_save_run (GSimpleAction *action, GVariant *param, gpointer user_data);
void caml_window_action_save_set_aside (GSimpleAction *action, GVariant *param,
                                        gpointer user_data);
void caml_window_action_load_weights (GSimpleAction *action, GVariant *param, gpointer user_data);
void caml_window_action_export_runs (GSimpleAction *action, GVariant *param,
                                     gpointer user_data);
void caml_window_action_export_metrics (GSimpleAction *action, GVariant *param,
                                        gpointer user_data);
void caml_window_action_export_words_page (GSimpleAction *action, GVariant *param,
                                           gpointer user_data);

static void action_speed (GSimpleAction *action, GVariant *value, gpointer user_data);
static void action_continuous (GSimpleAction *action, GVariant *param, gpointer user_data);

/* ☰ → Start Page, and back from it (its button, Escape). */
static void
action_start (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_window_show_start (CAML_WINDOW (user_data), TRUE);
}

static void
action_hide_start (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_window_show_start (CAML_WINDOW (user_data), FALSE);
}

static const GActionEntry win_entries[] = {
  { "save-weights", caml_window_action_save_weights },
  { "save-run", caml_window_action_save_run },
  { "save-set-aside", caml_window_action_save_set_aside },
  { "drop-set-aside", action_drop_set_aside },
  { "load-weights", caml_window_action_load_weights },
  { "train", action_train },
  { "pause", action_pause },
  { "step", action_step },
  { "stop", action_stop },
  { "reset", action_reset },
  { "forget-previous", action_forget_previous },
  { "compare-baseline", action_compare_baseline, NULL, "false" },
  { "speed", NULL, "i", "0", action_speed },
  { "continuous", action_continuous, NULL, "false" },
  { "save", caml_window_action_save },
  { "save-as", caml_window_action_save_as },
  { "data", NULL, "s", "'xor'", action_data },
  { "choose-idx", action_choose_idx },
  { "choose-data-files", action_choose_data_files },
  { "reload-data", action_reload_data },
  { "set-lr", action_set_lr, "d" },
  { "set-em-steps", action_set_em_steps, "i" },
  { "log-scale", NULL, NULL, "true", action_log_scale },
  { "sigma-stretch", NULL, NULL, "false", action_sigma_stretch },
  { "export-plot", action_export_plot, "s" },
  { "export-loss", action_export_named },
  { "export-accuracy", action_export_named },
  { "export-sigma-auc", action_export_named },
  { "export-surface", action_export_named },
  { "export-chi", action_export_named },
  { "export-parts", action_export_named },
  { "export-words", action_export_named },
  { "export-sigma", action_export_named },
  { "export-metrics", caml_window_action_export_metrics },
  { "export-runs", caml_window_action_export_runs },
  { "export-words-page", caml_window_action_export_words_page },
  { "dismiss-banner", action_dismiss_banner },
  { "plots-page", NULL, "s", "'main'", action_plots_page },
  { "continue-diverged", action_continue_diverged },
  { "ask-close", action_ask_close },
  { "start", action_start },
  { "hide-start", action_hide_start },
  { "sweep", action_sweep },
};

void
caml_window_actions_init (CamlWindow *self)
{
  g_action_map_add_action_entries (G_ACTION_MAP (self), win_entries,
                                   G_N_ELEMENTS (win_entries), self);
  caml_window_show_start (self, FALSE);   /* hide-start: enabled while it shows */
}

/* How fast: the session's speed (steps a tick, 0: full) and whether it
 * trains until stopped; the actions' states and the header bar's button
 * follow them (on_pace_changed). */
static void
action_speed (GSimpleAction *action, GVariant *value, gpointer user_data)
{
  caml_session_set_speed (CAML_WINDOW (user_data)->session, g_variant_get_int32 (value));
}

static void
action_continuous (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  caml_session_set_continuous (self->session, !caml_session_get_continuous (self->session));
}

static void
on_pace_changed (CamlSession *session, GParamSpec *pspec, CamlWindow *self)
{
  int speed = caml_session_get_speed (session);
  gboolean continuous = caml_session_get_continuous (session);
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), "speed");
  g_simple_action_set_state (G_SIMPLE_ACTION (action), g_variant_new_int32 (speed));
  action = g_action_map_lookup_action (G_ACTION_MAP (self), "continuous");
  g_simple_action_set_state (G_SIMPLE_ACTION (action), g_variant_new_boolean (continuous));
  g_autofree char *name = speed == 0 ? g_strdup ("Full speed")
                          : speed == 1 ? g_strdup ("Slow motion")
                          : speed == 5 ? g_strdup ("Slow")
                          : speed == 25 ? g_strdup ("Medium")
                          : g_strdup_printf ("%d steps a frame", speed);
  g_autofree char *label = continuous ? g_strdup_printf ("%s · until stopped", name)
                                      : g_strdup (name);
  gtk_menu_button_set_label (self->speed_button, label);
}

void
caml_window_actions_set_session (CamlWindow *self, CamlSession *session)
{
  g_signal_connect_object (session, "notify::compare", G_CALLBACK (on_compare_changed), self, 0);
  on_compare_changed (session, NULL, self);
  g_signal_connect_object (session, "notify::speed", G_CALLBACK (on_pace_changed), self, 0);
  g_signal_connect_object (session, "notify::continuous", G_CALLBACK (on_pace_changed), self, 0);
  on_pace_changed (session, NULL, self);
}

/* What the session's state allows: the actions, and the fields that a run
 * under way locks. */
void
caml_window_update_actions (CamlWindow *self)
{
  CamlSession *session = self->session;
  const CamlExperiment *exp = caml_session_get_experiment (session);
  CamlRun *run = caml_session_peek_run (session);
  gboolean valid = caml_session_model_builds (session);
  gboolean can_train = caml_session_can_train (session);
  gboolean started = caml_session_has_run (session);
  CamlTrainerState state = caml_session_get_state (session);
  gboolean active = caml_session_is_active (session);
  int n_rows = 0;
  long prev_steps = 0;
  const CamlEvalRow *prev_rows = NULL;
  int prev_n_rows = 0;
  gboolean prev_classification = FALSE;

  caml_session_get_rows (session, &n_rows);
  caml_session_get_previous_losses (session, &prev_steps, &prev_rows, &prev_n_rows,
                                    &prev_classification);
  caml_window_set_action_enabled (self, "train", can_train && state != CAML_TRAINER_RUNNING);
  caml_window_set_action_enabled (self, "pause", state == CAML_TRAINER_RUNNING);
  gtk_label_set_text_with_mnemonic (self->train_label, state == CAML_TRAINER_PAUSED
                                                       ? "_Resume" : "_Train");
  caml_window_set_action_enabled (self, "step", can_train && state != CAML_TRAINER_RUNNING);
  caml_window_set_action_enabled (self, "stop", active
                                  || (started && caml_session_baseline_active (session)));
  caml_window_set_action_enabled (self, "reset", started && !active);
  caml_window_set_action_enabled (self, "forget-previous", prev_steps > 0);
  caml_window_set_action_enabled (self, "continue-diverged",
                                  started && state == CAML_TRAINER_FAILED);
  /* On: a baseline beside each run (one that has ended gets its own, to
   * its steps). Off again at any time. */
  caml_window_set_action_enabled (self, "compare-baseline",
                                  can_train || caml_session_get_compare (session));
  caml_window_set_action_enabled (self, "sweep", exp != NULL && exp->n_layers > 0
                                  && caml_session_model_builds (session)
                                  && !caml_session_is_sweeping (session));

  /* The model (editor.*, which locking disables) and the data stay as
   * they are while a run is under way; the learning rate and em_steps can
   * change live. */
  caml_window_set_action_enabled (self, "data", !active);
  caml_window_set_action_enabled (self, "choose-idx", !active);
  caml_window_set_action_enabled (self, "choose-data-files", !active
                                  && (exp->data.kind == CAML_DATA_IDX
                                      || exp->data.kind == CAML_DATA_TEXT));
  caml_window_set_action_enabled (self, "reload-data", !active);
  caml_window_set_action_enabled (self, "export-metrics", n_rows > 0);
  caml_window_set_action_enabled (self, "export-runs",
                                  g_list_model_get_n_items (caml_session_get_runs (session)) > 0);
  /* Each plot's export where the model and data have that plot. */
  gboolean surface = run != NULL && caml_run_has_surface (run);
  /* Whatever the loss plot shows: a previous run's curves after Reset too. */
  caml_window_set_action_enabled (self, "export-loss",
                                  caml_plot_view_has_plot (caml_window_get_plot_view (self, "loss")));
  caml_window_set_action_enabled (self, "export-surface", surface);
  caml_window_set_action_enabled (self, "export-chi", surface && caml_run_get_n_chi (run) > 0);
  caml_window_set_action_enabled (self, "export-parts", surface
                                  && caml_session_has_parts (session));
  caml_window_set_action_enabled (self, "export-words",
                                  run != NULL && caml_run_get_words_layer (run) >= 0);
  caml_window_set_action_enabled (self, "export-sigma", run != NULL && caml_run_has_sigma (run));
  caml_window_set_action_enabled (self, "export-accuracy",
                                  caml_plot_view_has_plot (self->accuracy_view));
  caml_window_set_action_enabled (self, "export-sigma-auc",
                                  caml_plot_view_has_plot (caml_window_get_plot_view (self,
                                                                                      "sigma-auc")));
  caml_window_set_action_enabled (self, "save-weights", run != NULL);
  g_autofree char *not_resumable = started ? caml_session_why_not_resumable (session) : NULL;
  caml_window_set_action_enabled (self, "save-run", run != NULL && started
                                  && not_resumable == NULL);
  caml_window_set_action_enabled (self, "save-set-aside",
                                  caml_session_has_set_aside (session, NULL, NULL));
  caml_window_set_action_enabled (self, "export-words-page",
                                  run != NULL && caml_run_get_words_layer (run) >= 0);
  caml_window_set_action_enabled (self, "load-weights", valid && !active);
  /* A focused field that turns insensitive keeps the focus without a
   * focus-out (GTK warns: "GtkText - did not receive a focus-out event"),
   * and the keyboard goes nowhere: the window takes the focus first. */
  GtkWidget *locked[] = {
    GTK_WIDGET (self->data_drop),
    GTK_WIDGET (self->loss_drop), GTK_WIDGET (self->optimizer_drop),
    GTK_WIDGET (self->weight_decay_spin),
    GTK_WIDGET (self->batch_spin), GTK_WIDGET (self->steps_spin),
    GTK_WIDGET (self->eval_spin), GTK_WIDGET (self->average_spin),
    GTK_WIDGET (self->seed_spin),
  };
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (self));
  gboolean take = active && focus != NULL
                  && caml_model_editor_locks (self->model_editor, focus);
  for (guint i = 0; active && focus != NULL && i < G_N_ELEMENTS (locked); i++)
    take |= focus == locked[i] || gtk_widget_is_ancestor (focus, locked[i]);
  if (take)
    gtk_window_set_focus (GTK_WINDOW (self), NULL);
  caml_model_editor_set_locked (self->model_editor, active);
  for (guint i = 0; i < G_N_ELEMENTS (locked); i++)
    gtk_widget_set_sensitive (locked[i], !active);
}
