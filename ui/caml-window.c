/* caml-window.c — the workbench window: a shell around a CamlSession. It
 * builds its template, lays out the side bar and the plots, shows what the
 * session announces (its state, the banner and the status line, the data,
 * the title) and hands the session what the user does in the fields. The
 * actions are in caml-window-actions.c, the file dialogs and the close
 * question in caml-window-files.c, the plot pages in caml-window-plots.c. */
#include <math.h>
#include <string.h>

#include "caml-window-private.h"
#include "caml-data-source.h"
#include "caml-format.h"

G_DEFINE_FINAL_TYPE (CamlWindow, caml_window, GTK_TYPE_APPLICATION_WINDOW)

enum { PROP_0, PROP_CLOSE_CONFIRMED, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_CLOSE_ANSWERED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* --------------------------------------------------------------- helpers */

void
caml_window_set_action_enabled (CamlWindow *self, const char *name, gboolean enabled)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), name);
  if (action != NULL)
    g_simple_action_set_enabled (G_SIMPLE_ACTION (action), enabled);
}

void
caml_window_set_strings (GtkDropDown *drop, const char *const *strings)
{
  GtkStringList *list = gtk_string_list_new (strings);
  gtk_drop_down_set_model (drop, G_LIST_MODEL (list));
  g_object_unref (list);
}

void
caml_window_update_title (CamlWindow *self)
{
  const char *path = caml_session_get_path (self->session);
  const char *origin = caml_session_get_origin (self->session);
  g_autofree char *name = caml_session_dup_display_name (self->session);
  g_autofree char *title = g_strdup_printf ("%s%s", caml_session_is_modified (self->session)
                                                    ? "• " : "", name);
  g_autofree char *base = path != NULL ? g_filename_display_basename (path) : NULL;
  if (base != NULL && g_str_equal (base, "experiment.json"))
    {
      /* a run's folder (caml train's, Save Run's) names it, not the file */
      g_autofree char *dir = g_path_get_dirname (path);
      g_autofree char *folder = g_filename_display_basename (dir);
      g_free (base);
      base = g_strdup_printf ("%s/experiment.json", folder);
    }

  gtk_label_set_text (self->title_label, title);
  gtk_label_set_text (self->subtitle_label,
                      base != NULL ? base : origin != NULL ? origin : "not saved");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->subtitle_label), path);
  gtk_window_set_title (GTK_WINDOW (self), title);
}

void
caml_window_add_recent (CamlWindow *self, const char *path)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  if (CAML_IS_APPLICATION (app))
    caml_application_note_recent (CAML_APPLICATION (app), path);
}

/* ---------------------------------------------------------------- banner */

void
caml_window_show_error (CamlWindow *self, const char *message)
{
  caml_info_bar_show_error (self->info_bar, message);
}

const char *
caml_window_get_error (CamlWindow *self)
{
  return caml_info_bar_get_message (self->info_bar);
}

void
caml_window_show_recovery (CamlWindow *self, const char *message, gboolean can_recover)
{
  caml_info_bar_show_recovery (self->info_bar, message, can_recover);
}

static void
on_session_error (CamlSession *session, int kind, const char *message, CamlWindow *self)
{
  if (kind == CAML_SESSION_BANNER_DIVERGED)
    {
      /* Continue goes on from the last evaluation at a tenth of the rate. */
      CamlRun *run = caml_session_peek_run (session);
      g_autofree char *shown = caml_format_positive (caml_run_get_lr (run) / 10);
      g_autofree char *label = g_strdup_printf ("_Continue at lr %s", shown);
      caml_info_bar_show_divergence (self->info_bar, message, label);
    }
  else if (kind == CAML_SESSION_BANNER_SET_ASIDE)
    caml_info_bar_show_set_aside (self->info_bar, message);
  else
    caml_info_bar_show_error (self->info_bar, message);
}

/* ----------------------------------------------------------- status line */

void
caml_window_show_notice (CamlWindow *self, const char *message, gboolean warning)
{
  caml_status_line_show_notice (self->status_line, message, warning);
}

void
caml_window_show_done (CamlWindow *self, const char *what, const char *path)
{
  g_autofree char *name = g_filename_display_basename (path);
  g_autofree char *text = g_strdup_printf ("%s %s", what, name);
  caml_window_show_notice (self, text, FALSE);
}

void
caml_window_end_news (CamlWindow *self)
{
  caml_status_line_end_news (self->status_line);
}

const char *
caml_window_get_last_notice (CamlWindow *self)
{
  return caml_status_line_get_last_notice (self->status_line);
}

static void
on_value_corrected (const char *message, gpointer user_data)
{
  caml_window_show_notice (CAML_WINDOW (user_data), message, TRUE);
}

static void
on_option_corrected (CamlModelEditor *editor, const char *message, CamlWindow *self)
{
  caml_window_show_notice (self, message, TRUE);
}

static void
on_editor_error (CamlModelEditor *editor, const char *message, CamlWindow *self)
{
  caml_window_show_error (self, message);
}

/* What can be done. */
static void
on_session_state (CamlSession *session, GParamSpec *pspec, CamlWindow *self)
{
  caml_window_update_actions (self);
}

/* ------------------------------------------------------------------ data */

/* The Data section's label and the shapes the model editor checks. */
static void
on_data_changed (CamlSession *session, CamlWindow *self)
{
  gboolean error = FALSE;
  const char *text = caml_session_get_data_text (session, &error);
  int want = 0;
  const char *title = NULL, *why = NULL;
  const CamlShape *shape = caml_session_get_data_shape (session, &want, &title, &why);

  gtk_label_set_text (self->data_label, text != NULL ? text : "");
  if (error)
    gtk_widget_add_css_class (GTK_WIDGET (self->data_label), "error");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->data_label), "error");
  caml_model_editor_set_data (self->model_editor, shape, want, title, why);
}

/* The data drop-down and the data action's state (the menu's radio items)
 * show the same data: those chosen while they load — they are what comes —
 * else those in use. Every change of either goes through here. */
void
caml_window_sync_data_choice (CamlWindow *self)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), "data");
  CamlDataKind kind = self->session != NULL ? caml_session_get_data_choice (self->session)
                                            : (CamlDataKind) 0;
  gboolean was_syncing = self->syncing;

  self->syncing = TRUE;
  gtk_drop_down_set_selected (self->data_drop, kind);
  g_simple_action_set_state (G_SIMPLE_ACTION (action),
                             g_variant_new_string (caml_data_kind_names[kind]));
  self->syncing = was_syncing;
}

static void
on_data_choice (CamlSession *session, GParamSpec *pspec, CamlWindow *self)
{
  caml_window_sync_data_choice (self);
}

/* The drop-down's titles, each fetched set marked when it is not there. */
void
caml_window_refresh_data_titles (CamlWindow *self)
{
  const char *titles[CAML_N_DATA_KINDS + 1];
  char *owned[CAML_N_DATA_KINDS] = { NULL };

  for (int k = 0; k < CAML_N_DATA_KINDS; k++)
    {
      g_autofree char *missing = caml_data_source_missing ((CamlDataKind) k);
      titles[k] = missing == NULL ? caml_data_source_title ((CamlDataKind) k)
                  : (owned[k] = g_strdup_printf ("%s — not fetched",
                                                 caml_data_source_title ((CamlDataKind) k)));
    }
  titles[CAML_N_DATA_KINDS] = NULL;
  gboolean was_syncing = self->syncing;
  self->syncing = TRUE;
  caml_window_set_strings (self->data_drop, titles);
  self->syncing = was_syncing;
  caml_window_sync_data_choice (self);   /* a new list has no selection */
  for (int k = 0; k < CAML_N_DATA_KINDS; k++)
    g_free (owned[k]);
}

/* ---------------------------------------------------------------- fields */

/* Sets every field from the experiment. */
static void
sync_widgets (CamlWindow *self)
{
  const CamlExperiment *exp = caml_session_get_experiment (self->session);
  caml_window_sync_data_choice (self);
  self->syncing = TRUE;
  gtk_drop_down_set_selected (self->loss_drop, exp->loss);
  gtk_drop_down_set_selected (self->optimizer_drop, exp->optimizer.kind);
  caml_spin_button_set_positive (self->lr_spin, exp->optimizer.lr);
  gtk_spin_button_set_value (self->em_spin, exp->optimizer.em_steps);
  caml_spin_button_set_positive (self->weight_decay_spin, exp->optimizer.weight_decay);
  gtk_spin_button_set_value (self->batch_spin, exp->batch_size);
  gtk_spin_button_set_value (self->steps_spin, exp->steps);
  gtk_spin_button_set_value (self->eval_spin, exp->eval_every);
  gtk_spin_button_set_value (self->average_spin, exp->average_decay);
  gtk_spin_button_set_value (self->seed_spin, (double) exp->seed);
  caml_window_data_sync (self, exp);
  self->syncing = FALSE;
}

static void
on_experiment_changed (CamlSession *session, CamlWindow *self)
{
  sync_widgets (self);
}

/* A value typed into a spin button counts once the field is left or Enter
 * is pressed. Train, Step, Compare and Save pressed while the text is still
 * being typed (F5 straight after typing, keyboard focus still in the field)
 * take it too: the spin button parses it now, and its value-changed handler
 * updates the experiment (and discards the run built from the old value)
 * before the run is started or the file written. The only editables in
 * the window are spin buttons: the settings' here, the layer options' in
 * the model editor. */
void
caml_window_commit_pending_edit (CamlWindow *self)
{
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (self));
  GtkWidget *spin = focus != NULL ? gtk_widget_get_ancestor (focus, GTK_TYPE_SPIN_BUTTON)
                                  : NULL;

  if (spin != NULL && gtk_widget_is_sensitive (spin)
      && caml_spin_button_is_edited (GTK_SPIN_BUTTON (spin)))
    gtk_spin_button_update (GTK_SPIN_BUTTON (spin));
}

static void
on_model_changed (CamlModelEditor *editor, CamlWindow *self)
{
  int n = 0;
  const CamlLayerSpec *specs = caml_model_editor_get_layers (editor, &n);

  if (self->syncing)
    return;
  caml_session_set_layers (self->session, specs, n);
}

static void
on_selection_changed (CamlModelEditor *editor, CamlWindow *self)
{
  caml_window_update_actions (self);
  /* The parts shown follow the selected CA-NN layer. */
  caml_session_set_parts_layer (self->session, caml_model_editor_get_selected (editor));
}

static void
on_data_selected (GtkDropDown *drop, GParamSpec *pspec, CamlWindow *self)
{
  guint i = gtk_drop_down_get_selected (drop);
  if (self->syncing || i == GTK_INVALID_LIST_POSITION)
    return;
  self->syncing = TRUE;   /* the action need not set the drop-down back */
  g_action_group_activate_action (G_ACTION_GROUP (self), "data",
                                  g_variant_new_string (caml_data_kind_names[i]));
  self->syncing = FALSE;
}

static void
on_loss_selected (GtkDropDown *drop, GParamSpec *pspec, CamlWindow *self)
{
  guint i = gtk_drop_down_get_selected (drop);
  if (self->syncing || i == GTK_INVALID_LIST_POSITION)
    return;
  caml_session_set_loss (self->session, (CamlLossKind) i);
}

static void
on_optimizer_selected (GtkDropDown *drop, GParamSpec *pspec, CamlWindow *self)
{
  guint i = gtk_drop_down_get_selected (drop);
  if (self->syncing || i == GTK_INVALID_LIST_POSITION)
    return;
  caml_session_set_optimizer (self->session, (CamlOptimizerKind) i);
}

static void
on_lr_changed (GtkSpinButton *spin, CamlWindow *self)
{
  if (!self->syncing)
    g_action_group_activate_action (G_ACTION_GROUP (self), "set-lr",
                                    g_variant_new_double (gtk_spin_button_get_value (spin)));
}

static void
on_em_changed (GtkSpinButton *spin, CamlWindow *self)
{
  if (!self->syncing)
    g_action_group_activate_action (G_ACTION_GROUP (self), "set-em-steps",
                                    g_variant_new_int32 (gtk_spin_button_get_value_as_int (spin)));
}

static void
on_training_spin_changed (GtkSpinButton *spin, CamlWindow *self)
{
  int v = gtk_spin_button_get_value_as_int (spin);

  if (self->syncing)
    return;
  if (spin == self->batch_spin)
    caml_session_set_batch_size (self->session, v);
  else if (spin == self->steps_spin)
    caml_session_set_steps (self->session, v);
  else if (spin == self->eval_spin)
    caml_session_set_eval_every (self->session, v);
  else if (spin == self->seed_spin)
    caml_session_set_seed (self->session, (guint64) v);
}

static void
on_average_spin_changed (GtkSpinButton *spin, CamlWindow *self)
{
  if (!self->syncing)
    caml_session_set_average_decay (self->session, gtk_spin_button_get_value (spin));
}

static void
on_weight_decay_changed (GtkSpinButton *spin, CamlWindow *self)
{
  if (!self->syncing)
    caml_session_set_weight_decay (self->session, gtk_spin_button_get_value (spin));
}

static void
on_smoothing_changed (GtkRange *range, CamlWindow *self)
{
  double smoothing = gtk_range_get_value (range);
  if (self->settings != NULL)
    g_settings_set_double (self->settings, "smoothing", smoothing);
  caml_loss_card_set_smoothing (self->loss_card, smoothing);
}

/* ---------------------------------------------------------------- public */

void
caml_window_set_experiment (CamlWindow *self, CamlExperiment *exp, const char *path,
                            const char *origin)
{
  g_return_if_fail (CAML_IS_WINDOW (self) && exp != NULL);
  if (path != NULL)
    caml_window_add_recent (self, path);
  caml_session_set_experiment (self->session, exp, path, origin, NULL);
  caml_window_show_start (self, FALSE);   /* what the start page was for */
  self->syncing = TRUE;
  caml_model_editor_set_layers (self->model_editor, exp->layers, exp->n_layers);
  self->syncing = FALSE;
  caml_window_update_title (self);
  caml_window_update_actions (self);
}

void
caml_window_show_start (CamlWindow *self, gboolean show)
{
  g_return_if_fail (CAML_IS_WINDOW (self));
  gtk_stack_set_visible_child_name (self->content_stack, show ? "start" : "editor");
  /* The focus inside the page, so its keys (Escape) work at once. */
  if (show)
    gtk_widget_child_focus (GTK_WIDGET (self->start_view), GTK_DIR_TAB_FORWARD);
  GAction *hide = g_action_map_lookup_action (G_ACTION_MAP (self), "hide-start");
  if (hide != NULL)
    g_simple_action_set_enabled (G_SIMPLE_ACTION (hide), show);
}

gboolean
caml_window_is_start_shown (CamlWindow *self)
{
  g_return_val_if_fail (CAML_IS_WINDOW (self), FALSE);
  return g_strcmp0 (gtk_stack_get_visible_child_name (self->content_stack), "start") == 0;
}

/* A sweep's run opens as Open Run opens a folder: by the one rule
 * (caml_window_why_kept) — a window with a sweep keeps it, so in a new one. */
static void
on_sweep_open_run (CamlSweepView *view, const char *dir, CamlWindow *self)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  g_autoptr (GFile) file = g_file_new_for_path (dir);
  if (app != NULL)
    g_application_open (G_APPLICATION (app), &file, 1, "");
}

CamlExperiment *
caml_window_read_run (const char *dir, GError **error)
{
  return caml_session_read_run (dir, error);
}

void
caml_window_set_run (CamlWindow *self, CamlExperiment *exp, const char *dir)
{
  g_return_if_fail (CAML_IS_WINDOW (self) && exp != NULL && dir != NULL);
  g_autofree char *exp_path = g_build_filename (dir, "experiment.json", NULL);
  caml_window_add_recent (self, dir);   /* a run goes in as its folder, to open again as a run */
  caml_session_set_experiment (self->session, exp, exp_path, NULL, dir);
  caml_window_show_start (self, FALSE);
  self->syncing = TRUE;
  caml_model_editor_set_layers (self->model_editor, exp->layers, exp->n_layers);
  self->syncing = FALSE;
  caml_window_update_title (self);
  caml_window_update_actions (self);
}

gboolean
caml_window_open_run (CamlWindow *self, const char *dir, GError **error)
{
  CamlExperiment *exp = caml_session_read_run (dir, error);
  if (exp == NULL)
    return FALSE;
  caml_window_set_run (self, exp, dir);
  return TRUE;
}

gboolean
caml_window_load_file (CamlWindow *self, const char *path, GError **error)
{
  CamlExperiment *exp = caml_experiment_load_file (path, error);
  if (exp == NULL)
    return FALSE;
  caml_window_set_experiment (self, exp, path, NULL);
  return TRUE;
}

gboolean
caml_window_save_to_path (CamlWindow *self, const char *path, GError **error)
{
  if (!caml_session_save (self->session, path, error))
    return FALSE;
  caml_window_add_recent (self, path);
  caml_window_update_title (self);
  return TRUE;
}

char *
caml_window_why_kept (CamlWindow *self)
{
  g_autofree char *name = caml_session_dup_display_name (self->session);
  CamlTrainerState state = caml_session_get_state (self->session);
  long step = 0;

  if (caml_session_is_modified (self->session))
    return g_strdup_printf ("“%s” has unsaved changes", name);
  if (state == CAML_TRAINER_RUNNING || state == CAML_TRAINER_PAUSED)
    return g_strdup_printf ("“%s” has a run under way", name);
  if (caml_session_is_sweeping (self->session))
    return g_strdup_printf ("“%s” has a sweep under way", name);
  if (caml_session_get_sweep (self->session) != NULL)
    return g_strdup_printf ("“%s” shows a sweep on its Sweep page", name);
  if (caml_session_has_set_aside (self->session, &step, NULL))
    return g_strdup_printf ("“%s” keeps the unsaved weights of a run trained to step %ld",
                            name, step);
  return NULL;
}

gboolean
caml_window_is_modified (CamlWindow *self)
{
  return caml_session_is_modified (self->session);
}

gboolean
caml_window_autosave_now (CamlWindow *self, GError **error)
{
  return caml_session_autosave_now (self->session, error);
}

char *
caml_window_get_autosave_path (CamlWindow *self)
{
  return caml_session_get_autosave_path (self->session);
}

void
caml_window_mark_recovered (CamlWindow *self)
{
  caml_session_mark_recovered (self->session);
  caml_window_update_title (self);
}

gboolean
caml_window_is_recovered (CamlWindow *self)
{
  return caml_session_is_recovered (self->session);
}

CamlSession *
caml_window_get_session (CamlWindow *self)
{
  return self->session;
}

const CamlExperiment *
caml_window_get_experiment (CamlWindow *self)
{
  return caml_session_get_experiment (self->session);
}

CamlTrainerState
caml_window_get_state (CamlWindow *self)
{
  return caml_session_get_state (self->session);
}

gboolean
caml_window_has_run (CamlWindow *self)
{
  return caml_session_has_run (self->session);
}

gboolean
caml_window_is_loading (CamlWindow *self)
{
  return caml_session_is_loading (self->session);
}

int
caml_window_get_jobs_in_flight (void)
{
  return caml_session_get_jobs_in_flight ();
}

const float *
caml_window_get_losses (CamlWindow *self, long *n_steps)
{
  return caml_session_get_losses (self->session, n_steps);
}

const CamlEvalRow *
caml_window_get_rows (CamlWindow *self, int *n_rows)
{
  return caml_session_get_rows (self->session, n_rows);
}

guint
caml_window_get_n_events (CamlWindow *self)
{
  guint n = 0;
  caml_session_get_events (self->session, &n);
  return n;
}

const char *
caml_window_get_data_text (CamlWindow *self)
{
  return gtk_label_get_text (self->data_label);
}

int
caml_window_get_parts_layer (CamlWindow *self)
{
  return caml_session_get_parts_layer (self->session);
}

GtkTextView *
caml_window_get_words_text (CamlWindow *self)
{
  return caml_words_view_get_text (self->words_page);
}

int
caml_window_get_sigma_snapshots (CamlWindow *self, double *scrub_upper)
{
  if (scrub_upper != NULL)
    *scrub_upper = gtk_adjustment_get_upper (gtk_range_get_adjustment (
                     caml_sigma_page_get_scrubber (self->sigma_page)));
  return caml_session_get_sigma_count (self->session);
}

GtkRange *
caml_window_get_sigma_scrubber (CamlWindow *self)
{
  return caml_sigma_page_get_scrubber (self->sigma_page);
}

const float *
caml_window_get_baseline_losses (CamlWindow *self, long *n_steps)
{
  return caml_session_get_baseline_losses (self->session, n_steps);
}

long
caml_window_get_resume_step (CamlWindow *self)
{
  return caml_session_get_resume_step (self->session);
}

gboolean
caml_window_get_baseline_optimizer (CamlWindow *self, double *lr, int *em_steps)
{
  CamlRun *baseline = caml_session_peek_baseline (self->session);
  if (baseline == NULL)
    return FALSE;
  *lr = caml_run_get_lr (baseline);
  *em_steps = caml_run_get_em_steps (baseline);
  return TRUE;
}

gboolean
caml_window_baseline_ended (CamlWindow *self)
{
  return caml_session_baseline_ended (self->session);
}

CamlRun *
caml_window_peek_run (CamlWindow *self)
{
  return caml_session_peek_run (self->session);
}

CamlRun *
caml_window_peek_baseline (CamlWindow *self)
{
  return caml_session_peek_baseline (self->session);
}

void
caml_window_get_run_timing (CamlWindow *self, double *steps_per_second, double *sample_seconds)
{
  const CamlProgress *p = caml_session_get_progress (self->session);
  CamlRun *run = caml_session_peek_run (self->session);
  *steps_per_second = p->seconds > 0 ? p->step / p->seconds : 0;
  *sample_seconds = run != NULL ? caml_run_get_sample_seconds (run) : 0;
}

void
caml_window_use_idx_files (CamlWindow *self, const char *const *paths, int n_paths)
{
  g_return_if_fail (CAML_IS_WINDOW (self));
  caml_session_choose_files (self->session, CAML_DATA_IDX, paths, n_paths);
}

void
caml_window_use_text_files (CamlWindow *self, const char *train, const char *test)
{
  g_return_if_fail (CAML_IS_WINDOW (self));
  const char *files[] = { train, test };
  caml_session_choose_files (self->session, CAML_DATA_TEXT, files, 2);
}

void
caml_window_save_weights (CamlWindow *self, const char *path)
{
  caml_session_save_weights (self->session, path);
}

void
caml_window_save_run (CamlWindow *self, const char *dir)
{
  caml_session_save_run (self->session, dir);
}

gboolean
caml_window_has_set_aside_weights (CamlWindow *self, long *step)
{
  return caml_session_has_set_aside (self->session, step, NULL);
}

void
caml_window_export_words_page (CamlWindow *self, const char *path)
{
  caml_session_export_words_page (self->session, path);
}

void
caml_window_load_weights (CamlWindow *self, const char *path)
{
  caml_session_load_weights (self->session, path);
}

/* ------------------------------------------------------------- lifecycle */

/* The side bar's width: 420 px, less in a window narrower than about
 * 1240 px — a third of it, down to 325, at which everything on both of its
 * pages still fits — so that the plots keep their room. A width the user
 * has dragged the divider to is kept (one GTK clamped is not). */
#define SIDEBAR_WIDTH     420
#define SIDEBAR_MIN_WIDTH 325

static void
fit_sidebar (CamlWindow *self)
{
  int width = 0, height = 0;   /* GTK 4.8 takes no NULL for either */
  gtk_window_get_default_size (GTK_WINDOW (self), &width, &height);
  /* Moved from where it was set: by the user — or by GTK, which holds the
   * divider at its max-position in a window narrower than the content
   * needs; that one is fitted again. */
  int position = gtk_paned_get_position (self->main_paned), max_position = 0;
  g_object_get (self->main_paned, "max-position", &max_position, NULL);
  gboolean clamped = position < self->sidebar_width && position >= max_position;
  if (width <= 0 || (position != self->sidebar_width && !clamped))
    return;
  self->sidebar_width = CLAMP (width / 3, SIDEBAR_MIN_WIDTH, SIDEBAR_WIDTH);
  gtk_paned_set_position (self->main_paned, self->sidebar_width);
}

static void
on_default_width (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  fit_sidebar (CAML_WINDOW (object));
}

void
caml_window_save_window_size (CamlWindow *self)
{
  int width = 0, height = 0;

  if (self->settings == NULL)
    return;
  gtk_window_get_default_size (GTK_WINDOW (self), &width, &height);
  g_settings_set_int (self->settings, "window-width", width);
  g_settings_set_int (self->settings, "window-height", height);
  g_settings_set_boolean (self->settings, "window-maximized",
                          gtk_window_is_maximized (GTK_WINDOW (self)));
}

/* Closing would lose unsaved changes or the set-aside weights of a run. */
gboolean
caml_window_has_something_to_lose (CamlWindow *self)
{
  return caml_session_is_modified (self->session)
         || caml_session_has_set_aside (self->session, NULL, NULL)
         || caml_session_is_sweeping (self->session);
}

/* A sweep cancelled as its window closes still ends its run and writes
 * it: the application stays until it has. */
static void
on_closed_sweep_running (CamlSweep *sweep, GParamSpec *pspec, GApplication *app)
{
  if (caml_sweep_is_running (sweep))
    return;
  g_signal_handlers_disconnect_by_func (sweep, on_closed_sweep_running, app);
  g_application_release (app);
  g_object_unref (app);
}

/* The close question has been answered (may_close: saved or discarded).
 * For app.quit the window only reports the answer ("close-answered"): the
 * application closes every window once all have answered, and none if one
 * was cancelled. Otherwise it closes now. */
void
caml_window_close_answered (CamlWindow *self, gboolean may_close)
{
  if (self->asking_for_quit)
    {
      self->asking_for_quit = FALSE;
      g_signal_emit (self, signals[SIGNAL_CLOSE_ANSWERED], 0, may_close);
      return;
    }
  if (!may_close)
    return;
  self->close_confirmed = TRUE;
  gtk_window_close (GTK_WINDOW (self));
}

/* win.ask-close, for app.quit: asks about unsaved changes (at once
 * answering yes when there are none) and reports the answer with
 * "close-answered", without closing. */
void
caml_window_ask_close_for_quit (CamlWindow *self)
{
  caml_window_commit_pending_edit (self);
  if (!caml_window_has_something_to_lose (self) || self->close_confirmed)
    {
      g_signal_emit (self, signals[SIGNAL_CLOSE_ANSWERED], 0, TRUE);
      return;
    }
  self->asking_for_quit = TRUE;
  caml_window_ask_close (self);
}

static gboolean
caml_window_close_request (GtkWindow *window)
{
  CamlWindow *self = CAML_WINDOW (window);

  caml_window_commit_pending_edit (self);
  if (caml_window_has_something_to_lose (self) && !self->close_confirmed)
    {
      caml_window_ask_close (self);
      return TRUE;
    }
  caml_window_save_window_size (self);
  caml_session_drop_autosave (self->session);   /* saved, discarded or unchanged */
  GtkApplication *app = gtk_window_get_application (window);
  if (caml_session_is_sweeping (self->session) && app != NULL)
    {
      g_application_hold (G_APPLICATION (app));
      g_signal_connect (caml_session_get_sweep (self->session), "notify::running",
                        G_CALLBACK (on_closed_sweep_running), g_object_ref (app));
      caml_session_cancel_sweep (self->session);
    }
  /* Sources that hold a reference would keep the closed window alive
   * until they fire. */
  g_clear_handle_id (&self->focus_source, g_source_remove);
  caml_status_line_set_session (self->status_line, NULL);
  return GTK_WINDOW_CLASS (caml_window_parent_class)->close_request (window);
}

static void
caml_window_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  CamlWindow *self = CAML_WINDOW (object);

  switch (prop_id)
    {
    case PROP_CLOSE_CONFIRMED:
      g_value_set_boolean (value, self->close_confirmed);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
caml_window_set_property (GObject *object, guint prop_id, const GValue *value,
                          GParamSpec *pspec)
{
  CamlWindow *self = CAML_WINDOW (object);

  switch (prop_id)
    {
    case PROP_CLOSE_CONFIRMED:
      self->close_confirmed = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
caml_window_dispose (GObject *object)
{
  CamlWindow *self = CAML_WINDOW (object);

  /* The focus leaves while the window is whole: a spin button that has it
   * re-reads its text on leaving (GTK does) and may change a setting, whose
   * handler needs the session that goes below. */
  gtk_window_set_focus (GTK_WINDOW (self), NULL);
  if (self->session != NULL)
    {
      caml_status_line_set_session (self->status_line, NULL);
      caml_window_plots_set_session (self, NULL);
      /* Jobs still under way end without touching it; the run is joined. */
      g_signal_handlers_disconnect_by_data (self->session, self);
      caml_session_close (self->session);
      g_clear_object (&self->session);
    }
  g_clear_handle_id (&self->focus_source, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (self), CAML_TYPE_WINDOW);
  G_OBJECT_CLASS (caml_window_parent_class)->dispose (object);
}

static void
caml_window_class_init (CamlWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = caml_window_dispose;
  object_class->get_property = caml_window_get_property;
  object_class->set_property = caml_window_set_property;
  GTK_WINDOW_CLASS (klass)->close_request = caml_window_close_request;

  /* Closing goes through without asking about unsaved changes (app.quit
   * sets it on the windows whose changes were discarded). */
  properties[PROP_CLOSE_CONFIRMED] =
    g_param_spec_boolean ("close-confirmed", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  /* The answer to win.ask-close: TRUE when the changes were saved or
   * discarded (or there were none), FALSE when cancelled. */
  signals[SIGNAL_CLOSE_ANSWERED] =
    g_signal_new ("close-answered", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                  NULL, NULL, G_TYPE_NONE, 1, G_TYPE_BOOLEAN);

  g_type_ensure (CAML_TYPE_MODEL_EDITOR);
  g_type_ensure (CAML_TYPE_PLOT_VIEW);
  g_type_ensure (CAML_TYPE_INFO_BAR);
  g_type_ensure (CAML_TYPE_STATUS_LINE);
  g_type_ensure (CAML_TYPE_LOSS_CARD);
  g_type_ensure (CAML_TYPE_SURFACE_PAGE);
  g_type_ensure (CAML_TYPE_SIGMA_PAGE);
  g_type_ensure (CAML_TYPE_WORDS_VIEW);
  g_type_ensure (CAML_TYPE_RUNS_VIEW);
  g_type_ensure (CAML_TYPE_SWEEP_VIEW);
  g_type_ensure (CAML_TYPE_INSPECT_PAGE);
  g_type_ensure (CAML_TYPE_START_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/caml/Workbench/ui/caml-window.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, CamlWindow, name)
  BIND (title_label);
  BIND (subtitle_label);
  BIND (presets_button);
  BIND (train_button);
  BIND (train_label);
  BIND (speed_button);
  BIND (recent_submenu);
  BIND (threads_submenu);
  BIND (info_bar);
  BIND (model_editor);
  BIND (data_drop);
  BIND (data_label);
  BIND (loss_drop);
  BIND (optimizer_drop);
  BIND (lr_spin);
  BIND (em_spin);
  BIND (weight_decay_spin);
  BIND (batch_spin);
  BIND (steps_spin);
  BIND (eval_spin);
  BIND (average_spin);
  BIND (seed_spin);
  BIND (smoothing_scale);
  BIND (loss_card);
  BIND (surface_page);
  BIND (accuracy_view);
  BIND (sigma_page);
  BIND (parts_view);
  BIND (words_page);
  BIND (runs_page);
  BIND (sweep_page);
  BIND (inspect_page);
  BIND (surface_data_grid);
  BIND (fraction_spin);
  BIND (noise_spin);
  BIND (bottom_grid);
  BIND (plots_stack);
  BIND (content_stack);
  BIND (start_view);
  BIND (plots_switcher);
  BIND (main_toggle);
  BIND (parts_toggle);
  BIND (words_toggle);
  BIND (status_line);
  BIND (main_paned);
  BIND (plots_paned);
#undef BIND
  /* Only looked up by the tests (whether the window needs to scroll). */
  gtk_widget_class_bind_template_child_full (widget_class, "sidebar_scroller", FALSE, 0);
  gtk_widget_class_bind_template_child_full (widget_class, "plots_scroller", FALSE, 0);
}

/* GTK 4.8 leaves the keyboard focus in a popover menu that has closed when
 * the item chosen was in a submenu (☰ → Style → Dark): on a widget no
 * longer mapped, where key presses reach nothing, not even the window's
 * shortcuts (F5, Ctrl+R, Ctrl+?), until a click puts it somewhere. Once the
 * close has settled, the focus goes back to the nearest mapped ancestor that
 * takes it (the menu button, as after a top-level item), or to none. */
static gboolean
focus_rescue (gpointer data)
{
  CamlWindow *self = data;
  GtkWidget *focus = gtk_window_get_focus (GTK_WINDOW (self));

  self->focus_source = 0;
  if (focus == NULL || gtk_widget_get_mapped (focus))
    return G_SOURCE_REMOVE;
  for (GtkWidget *w = gtk_widget_get_parent (focus); w != NULL && w != GTK_WIDGET (self);
       w = gtk_widget_get_parent (w))
    if (gtk_widget_get_mapped (w) && gtk_widget_grab_focus (w))
      return G_SOURCE_REMOVE;
  gtk_window_set_focus (GTK_WINDOW (self), NULL);
  return G_SOURCE_REMOVE;
}

static void
on_focus_widget (CamlWindow *self, GParamSpec *pspec, gpointer unused)
{
  GtkWidget *focus = gtk_window_get_focus (GTK_WINDOW (self));

  if (focus != NULL && !gtk_widget_get_mapped (focus) && self->focus_source == 0)
    self->focus_source = g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, focus_rescue,
                                          g_object_ref (self), g_object_unref);
}

static void
on_session_document (CamlSession *session, GParamSpec *pspec, CamlWindow *self)
{
  caml_window_update_title (self);
}

static void
caml_window_init (CamlWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  g_signal_connect (self->sweep_page, "open-run", G_CALLBACK (on_sweep_open_run), self);

  self->chosen_page = g_intern_static_string ("main");
  caml_loss_card_set_smoothing (self->loss_card,
                                gtk_range_get_value (GTK_RANGE (self->smoothing_scale)));
  caml_window_actions_init (self);

  /* Every choice comes from the engine's own tables. */
  caml_window_refresh_data_titles (self);
  caml_window_set_strings (self->loss_drop, caml_loss_names);
  caml_window_set_strings (self->optimizer_drop, caml_optimizer_names);

  caml_window_plots_init (self);
  caml_window_data_init (self);
  g_signal_connect (self->model_editor, "model-changed", G_CALLBACK (on_model_changed), self);
  g_signal_connect (self->model_editor, "selection-changed",
                    G_CALLBACK (on_selection_changed), self);
  self->sidebar_width = gtk_paned_get_position (self->main_paned);
  g_signal_connect (self, "notify::default-width", G_CALLBACK (on_default_width), NULL);
  g_signal_connect (self->data_drop, "notify::selected", G_CALLBACK (on_data_selected), self);
  g_signal_connect (self->loss_drop, "notify::selected", G_CALLBACK (on_loss_selected), self);
  g_signal_connect (self->optimizer_drop, "notify::selected",
                    G_CALLBACK (on_optimizer_selected), self);
  /* Any rate an experiment file takes (> 0), shown as the file has it:
   * before its value-changed handler, which sees the rounded step. */
  caml_spin_button_make_positive (self->lr_spin, "learning rate", on_value_corrected, self);
  g_signal_connect (self->lr_spin, "value-changed", G_CALLBACK (on_lr_changed), self);
  g_signal_connect (self->em_spin, "value-changed", G_CALLBACK (on_em_changed), self);
  caml_spin_button_make_nonnegative (self->weight_decay_spin, "weight decay",
                                     on_value_corrected, self);
  g_signal_connect (self->weight_decay_spin, "value-changed",
                    G_CALLBACK (on_weight_decay_changed), self);
  g_signal_connect (self->batch_spin, "value-changed", G_CALLBACK (on_training_spin_changed), self);
  g_signal_connect (self->steps_spin, "value-changed", G_CALLBACK (on_training_spin_changed), self);
  g_signal_connect (self->eval_spin, "value-changed", G_CALLBACK (on_training_spin_changed), self);
  g_signal_connect (self->average_spin, "value-changed", G_CALLBACK (on_average_spin_changed), self);
  g_signal_connect (self->seed_spin, "value-changed", G_CALLBACK (on_training_spin_changed), self);
  g_signal_connect (self->model_editor, "value-corrected", G_CALLBACK (on_option_corrected),
                    self);
  g_signal_connect (self->model_editor, "error", G_CALLBACK (on_editor_error), self);
  /* The editor's actions reach the window's shortcuts (Ctrl+Z) too. */
  gtk_widget_insert_action_group (GTK_WIDGET (self), "editor",
                                  caml_model_editor_get_actions (self->model_editor));
  {
    struct { GtkSpinButton *spin; const char *name; } checked[] = {
      { self->em_spin, "em_steps" },
      { self->batch_spin, "batch size" }, { self->steps_spin, "steps" },
      { self->eval_spin, "evaluate every" }, { self->average_spin, "weight average" },
      { self->seed_spin, "seed" },
    };
    for (guint i = 0; i < G_N_ELEMENTS (checked); i++)
      caml_spin_button_check_range (checked[i].spin, checked[i].name, on_value_corrected, self);
  }
  g_signal_connect (self->smoothing_scale, "value-changed", G_CALLBACK (on_smoothing_changed),
                    self);

  /* The session: what it announces, the window shows. */
  self->session = caml_session_new ();
  g_signal_connect (self->session, "notify::state", G_CALLBACK (on_session_state), self);
  g_signal_connect (self->session, "notify::modified", G_CALLBACK (on_session_document), self);
  g_signal_connect (self->session, "notify::path", G_CALLBACK (on_session_document), self);
  g_signal_connect (self->session, "notify::data-choice", G_CALLBACK (on_data_choice), self);
  caml_window_plots_set_session (self, self->session);
  caml_window_data_set_session (self, self->session);
  caml_window_actions_set_session (self, self->session);
  caml_status_line_set_session (self->status_line, self->session);
  g_signal_connect (self->session, "error", G_CALLBACK (on_session_error), self);
  g_signal_connect (self->session, "data-changed", G_CALLBACK (on_data_changed), self);
  g_signal_connect (self->session, "experiment-changed", G_CALLBACK (on_experiment_changed),
                    self);
  g_signal_connect (self, "notify::focus-widget", G_CALLBACK (on_focus_widget), NULL);
}

CamlWindow *
caml_window_new (GtkApplication *app)
{
  CamlWindow *self = g_object_new (CAML_TYPE_WINDOW, "application", app, NULL);

  if (CAML_IS_APPLICATION (app))
    {
      self->settings = caml_application_get_settings (CAML_APPLICATION (app));
      gtk_menu_button_set_menu_model (self->presets_button,
                                      caml_application_get_presets_menu (CAML_APPLICATION (app)));
      g_menu_append_section (self->recent_submenu, NULL,
                             caml_application_get_recent_menu (CAML_APPLICATION (app)));
      caml_start_view_set_recent (self->start_view,
                                  caml_application_get_recent_menu (CAML_APPLICATION (app)));
      g_menu_append_section (self->threads_submenu, NULL,
                             caml_application_get_threads_menu (CAML_APPLICATION (app)));
    }
  if (self->settings != NULL)
    {
      GAction *log_action = g_action_map_lookup_action (G_ACTION_MAP (self), "log-scale");
      gtk_window_set_default_size (GTK_WINDOW (self),
                                   g_settings_get_int (self->settings, "window-width"),
                                   g_settings_get_int (self->settings, "window-height"));
      if (g_settings_get_boolean (self->settings, "window-maximized"))
        gtk_window_maximize (GTK_WINDOW (self));
      gboolean log_scale = g_settings_get_boolean (self->settings, "log-scale");
      gboolean stretch = g_settings_get_boolean (self->settings, "sigma-stretch");
      g_simple_action_set_state (G_SIMPLE_ACTION (log_action), g_variant_new_boolean (log_scale));
      caml_loss_card_set_log_scale (self->loss_card, log_scale);
      g_simple_action_set_state (G_SIMPLE_ACTION (g_action_map_lookup_action (
                                   G_ACTION_MAP (self), "sigma-stretch")),
                                 g_variant_new_boolean (stretch));
      caml_sigma_page_set_stretch (self->sigma_page, stretch);
      gtk_range_set_value (GTK_RANGE (self->smoothing_scale),
                           g_settings_get_double (self->settings, "smoothing"));
    }
  caml_window_set_experiment (self, caml_experiment_copy (caml_session_get_experiment (self->session)),
                              NULL, "new experiment");
  /* Train has the focus at first: Enter trains. */
  gtk_window_set_focus (GTK_WINDOW (self), GTK_WIDGET (self->train_button));
  return self;
}
