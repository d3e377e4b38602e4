/* caml-window-files.c — the window's file dialogs (save and open the
 * experiment, weights, runs, exports, the data's files) and the question
 * asked before closing with unsaved changes. GtkFileDialog and
 * GtkAlertDialog are GTK 4.10; on 4.8 these are the native file chooser
 * and the message dialog. The work itself is the session's. */
#include "caml-window-private.h"

typedef struct {
  CamlWindow        *self;
  CamlWindowPathFunc func;
  char              *what;
  void             (*cancelled) (CamlWindow *self);   /* or NULL */
} PathRequest;

static void
on_path_response (GtkNativeDialog *dialog, int response, gpointer user_data)
{
  PathRequest *req = user_data;
  g_autoptr (GFile) file = response == GTK_RESPONSE_ACCEPT
                           ? gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog)) : NULL;
  g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;

  if (path != NULL)
    req->func (req->self, path, req->what);
  else if (req->cancelled != NULL)
    req->cancelled (req->self);
  g_object_unref (req->self);
  g_free (req->what);
  g_free (req);
  g_object_unref (dialog);
}

static void
ask_save_path_full (CamlWindow *self, const char *title, const char *suggested,
                    CamlWindowPathFunc func, const char *what,
                    void (*cancelled) (CamlWindow *self))
{
  GtkFileChooserNative *dialog =
    gtk_file_chooser_native_new (title, GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_SAVE,
                                 "_Save", "_Cancel");
  PathRequest *req = g_new0 (PathRequest, 1);

  req->self = g_object_ref (self);
  req->func = func;
  req->what = g_strdup (what);
  req->cancelled = cancelled;
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), suggested);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  g_signal_connect (dialog, "response", G_CALLBACK (on_path_response), req);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

void
caml_window_ask_save_path (CamlWindow *self, const char *title, const char *suggested,
                           CamlWindowPathFunc func, const char *what)
{
  ask_save_path_full (self, title, suggested, func, what, NULL);
}

/* filter_name and pattern: the files offered first ("Weights (*.weights)",
 * "*.weights"); all files are the other choice. what is handed to func;
 * beside, if not NULL, a file whose folder the chooser opens in. */
static void
ask_open_path_in (CamlWindow *self, const char *title, const char *filter_name,
                  const char *pattern, CamlWindowPathFunc func, const char *what,
                  const char *beside)
{
  GtkFileChooserNative *dialog =
    gtk_file_chooser_native_new (title, GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_OPEN,
                                 "_Open", "_Cancel");
  if (beside != NULL)   /* opens in the folder of this file */
    {
      g_autoptr (GFile) file = g_file_new_for_path (beside);
      g_autoptr (GFile) folder = g_file_get_parent (file);
      if (folder != NULL)
        gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (dialog), folder, NULL);
    }
  PathRequest *req = g_new0 (PathRequest, 1);
  g_autoptr (GtkFileFilter) some = gtk_file_filter_new ();
  g_autoptr (GtkFileFilter) all = gtk_file_filter_new ();

  gtk_file_filter_set_name (some, filter_name);
  gtk_file_filter_add_pattern (some, pattern);
  gtk_file_filter_set_name (all, "All files");
  gtk_file_filter_add_pattern (all, "*");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), some);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), all);

  req->self = g_object_ref (self);
  req->func = func;
  req->what = g_strdup (what);   /* handed to func */
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  g_signal_connect (dialog, "response", G_CALLBACK (on_path_response), req);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

void
caml_window_ask_open_path (CamlWindow *self, const char *title, const char *filter_name,
                           const char *pattern, CamlWindowPathFunc func)
{
  ask_open_path_in (self, title, filter_name, pattern, func, NULL, NULL);
}

/* "NAME.EXT" after the experiment (or fallback when it has no name). */
static char *
suggested_name (CamlWindow *self, const char *fallback, const char *suffix)
{
  const CamlExperiment *exp = caml_session_get_experiment (self->session);
  return g_strdup_printf ("%s%s", exp->name ? exp->name : fallback, suffix);
}

/* ------------------------------------------------------------ experiment */

static void
save_experiment_to (CamlWindow *self, const char *path, gpointer unused)
{
  g_autoptr (GError) error = NULL;

  caml_window_commit_pending_edit (self);
  if (!caml_window_save_to_path (self, path, &error))
    caml_window_show_error (self, error->message);
}

void
caml_window_action_save_as (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  g_autofree char *name = suggested_name (self, "experiment", ".json");
  caml_window_ask_save_path (self, "Save Experiment", name, save_experiment_to, NULL);
}

void
caml_window_action_save (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  const char *path = caml_session_get_path (self->session);

  if (path != NULL)
    save_experiment_to (self, path, NULL);
  else
    caml_window_action_save_as (action, param, user_data);
}

/* ------------------------------------------------------- weights and runs */

static void
save_weights_to (CamlWindow *self, const char *path, gpointer unused)
{
  caml_session_save_weights (self->session, path);
}

void
caml_window_action_save_weights (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  g_autofree char *name = suggested_name (self, "model", ".weights");
  caml_window_ask_save_path (self, "Save Weights", name, save_weights_to, NULL);
}

static void
save_run_to (CamlWindow *self, const char *path, gpointer unused)
{
  caml_session_save_run (self->session, path);
}

/* A folder of the name given, made for the run's files. */
void
caml_window_action_save_run (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  CamlRun *run = caml_session_peek_run (self->session);
  CamlProgress p;
  if (run == NULL)
    return;
  caml_run_get_progress (run, &p);
  g_autofree char *step = g_strdup_printf ("-step%ld", p.step);
  g_autofree char *name = suggested_name (self, "run", step);
  caml_window_ask_save_path (self, "Save Run (a Folder for Its Files)", name, save_run_to, NULL);
}

static void
save_set_aside_to (CamlWindow *self, const char *path, gpointer unused)
{
  caml_session_save_set_aside (self->session, path);
}

void
caml_window_action_save_set_aside (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  long step = 0;
  const char *name = NULL;
  if (!caml_session_has_set_aside (self->session, &step, &name))
    return;
  g_autofree char *file = g_strdup_printf ("%s-step%ld.weights", name ? name : "model", step);
  caml_window_ask_save_path (self, "Save the Set-Aside Weights", file, save_set_aside_to, NULL);
}

static void
load_weights_from (CamlWindow *self, const char *path, gpointer unused)
{
  caml_session_load_weights (self->session, path);
}

void
caml_window_action_load_weights (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_window_ask_open_path (CAML_WINDOW (user_data), "Load Weights", "Weights (*.weights)",
                             "*.weights", load_weights_from);
}

/* --------------------------------------------------------------- exports */

static void
export_words_page_to (CamlWindow *self, const char *path, gpointer unused)
{
  caml_session_export_words_page (self->session, path);
}

void
caml_window_action_export_words_page (GSimpleAction *action, GVariant *param,
                                      gpointer user_data)
{
  CamlWindow *self = user_data;
  g_autofree char *name = suggested_name (self, "experiment", "-words.html");
  caml_window_ask_save_path (self, "Export Words Page", name, export_words_page_to, NULL);
}

static void
export_metrics_to (CamlWindow *self, const char *path, gpointer unused)
{
  g_autoptr (GError) error = NULL;

  if (!caml_session_write_metrics (self->session, path, &error))
    caml_window_show_error (self, error->message);
  else
    caml_window_show_done (self, "Exported the metrics to", path);
}

void
caml_window_action_export_metrics (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  g_autofree char *name = suggested_name (self, "experiment", "-metrics.csv");
  caml_window_ask_save_path (self, "Export Metrics", name, export_metrics_to, NULL);
}

/* The kept runs' table as CSV, written by the session on a worker thread
 * (its notice or banner says how it went). */
static void
export_runs_to (CamlWindow *self, const char *path, gpointer unused)
{
  caml_session_export_runs (self->session, path);
}

void
caml_window_action_export_runs (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  g_autofree char *name = suggested_name (self, "experiment", "-runs.csv");
  caml_window_ask_save_path (self, "Export Runs (CSV)", name, export_runs_to, NULL);
}

/* ------------------------------------------------------------ data files */

/* Text files (text<TAB>label): the training file, then the test file;
 * the data change only when both are chosen and load. */
static void
text_test_chosen (CamlWindow *self, const char *path, gpointer train)
{
  caml_window_use_text_files (self, train, path);
}

static void
text_train_chosen (CamlWindow *self, const char *path, gpointer unused)
{
  /* the test file is usually beside the training file: its folder first */
  ask_open_path_in (self, "Test Texts (text<TAB>label)", "Tab-separated text (*.tsv)", "*.tsv",
                    text_test_chosen, path, path);
}

void
caml_window_ask_text_files (CamlWindow *self)
{
  /* in the folder of the text files in use, if any */
  ask_open_path_in (self, "Training Texts (text<TAB>label)", "Tab-separated text (*.tsv)",
                    "*.tsv", text_train_chosen, NULL,
                    caml_session_get_experiment (self->session)->data.text_paths[0]);
}

static void
on_idx_chosen (GtkNativeDialog *dialog, int response, gpointer user_data)
{
  CamlWindow *self = user_data;

  if (response == GTK_RESPONSE_ACCEPT && self->session != NULL)
    {
      g_autoptr (GListModel) files = gtk_file_chooser_get_files (GTK_FILE_CHOOSER (dialog));
      g_autoptr (GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
      for (guint i = 0; i < g_list_model_get_n_items (files); i++)
        {
          g_autoptr (GFile) file = g_list_model_get_item (files, i);
          char *path = g_file_get_path (file);
          if (path != NULL)
            g_ptr_array_add (paths, path);
        }
      caml_window_use_idx_files (self, (const char *const *) paths->pdata, (int) paths->len);
    }
  g_object_unref (dialog);
  g_object_unref (self);
}

void
caml_window_ask_idx_files (CamlWindow *self)
{
  GtkFileChooserNative *dialog =
    gtk_file_chooser_native_new ("Choose Four IDX Files: Training and Test Images and Labels",
                                 GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_OPEN, "_Use",
                                 "_Cancel");
  GtkFileFilter *idx = gtk_file_filter_new ();
  GtkFileFilter *all = gtk_file_filter_new ();

  gtk_file_filter_set_name (idx, "IDX files (*-ubyte, *.idx, and gzipped)");
  gtk_file_filter_add_pattern (idx, "*-ubyte");
  gtk_file_filter_add_pattern (idx, "*-ubyte.gz");
  gtk_file_filter_add_pattern (idx, "*.idx*");
  gtk_file_filter_set_name (all, "All files");
  gtk_file_filter_add_pattern (all, "*");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), idx);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), all);
  g_object_unref (idx);
  g_object_unref (all);
  gtk_file_chooser_set_select_multiple (GTK_FILE_CHOOSER (dialog), TRUE);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  g_signal_connect (dialog, "response", G_CALLBACK (on_idx_chosen), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* ------------------------------------------------------------------ close */

enum { RESPONSE_DISCARD = 1, RESPONSE_SAVE = 2, RESPONSE_SAVE_WEIGHTS = 3 };

static void
save_then_close (CamlWindow *self, const char *path, gpointer unused)
{
  g_autoptr (GError) error = NULL;
  gboolean saved = caml_window_save_to_path (self, path, &error);

  if (!saved)
    caml_window_show_error (self, error->message);
  caml_window_close_answered (self, saved);
}

static void
save_cancelled (CamlWindow *self)
{
  caml_window_close_answered (self, FALSE);
}

static void
on_close_response (GtkDialog *dialog, int response, CamlWindow *self)
{
  const char *path = caml_session_get_path (self->session);

  /* Not transient for the window any longer: the window may be destroyed
   * before the dialog is finalised (it is while the response is emitted),
   * and a dialog that outlives its parent disconnects from it then. */
  gtk_window_set_transient_for (GTK_WINDOW (dialog), NULL);
  gtk_window_destroy (GTK_WINDOW (dialog));
  self->close_dialog = NULL;
  if (response == RESPONSE_SAVE_WEIGHTS)
    {
      /* Closing stops here: the weights are written on a worker thread,
       * and the window closes when asked again. */
      caml_window_close_answered (self, FALSE);
      g_action_group_activate_action (G_ACTION_GROUP (self), "save-set-aside", NULL);
    }
  else if (response == RESPONSE_SAVE && path != NULL)
    save_then_close (self, path, NULL);
  else if (response == RESPONSE_SAVE)
    {
      /* Choose a file first: closing (or quitting) goes on once it is
       * written, and stops when the chooser is cancelled. */
      g_autofree char *name = suggested_name (self, "experiment", ".json");
      ask_save_path_full (self, "Save Experiment", name, save_then_close, NULL,
                          save_cancelled);
    }
  else
    caml_window_close_answered (self, response == RESPONSE_DISCARD);
}

/* Asks whether to save the unsaved changes (Save, Discard or Cancel), or,
 * with none, whether to let the set-aside weights of a replaced run go
 * (Save Them…, Let Them Go or Cancel), or, with neither, whether to stop
 * the sweep under way (Stop and Close or Cancel). */
void
caml_window_ask_close (CamlWindow *self)
{
  g_autofree char *name = caml_session_dup_display_name (self->session);
  long step = 0;
  gboolean set_aside = caml_session_has_set_aside (self->session, &step, NULL);
  gboolean modified = caml_session_is_modified (self->session);
  gboolean sweeping = caml_session_is_sweeping (self->session);

  if (self->close_dialog != NULL)
    {
      gtk_window_present (GTK_WINDOW (self->close_dialog));
      return;
    }
  GtkWidget *dialog;
  if (modified)
    {
      dialog = gtk_message_dialog_new (GTK_WINDOW (self),
                                       GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
                                       GTK_MESSAGE_QUESTION, GTK_BUTTONS_NONE,
                                       "Save the changes to “%s” before closing?", name);
      if (set_aside)
        gtk_message_dialog_format_secondary_text (GTK_MESSAGE_DIALOG (dialog),
                                                  "Unsaved changes to the experiment are lost "
                                                  "otherwise, and so are the set-aside weights "
                                                  "of the run trained to step %ld (Cancel, then "
                                                  "Save Them… in the banner, keeps them).", step);
      else
        gtk_message_dialog_format_secondary_text (GTK_MESSAGE_DIALOG (dialog),
                                                  "Unsaved changes to the experiment are lost "
                                                  "otherwise.%s", sweeping
                                                  ? " The sweep under way stops: its run is "
                                                    "kept, the runs not started are skipped."
                                                  : "");
      gtk_dialog_add_buttons (GTK_DIALOG (dialog), "_Cancel", GTK_RESPONSE_CANCEL,
                              "_Discard", RESPONSE_DISCARD, "_Save", RESPONSE_SAVE, NULL);
      gtk_dialog_set_default_response (GTK_DIALOG (dialog), RESPONSE_SAVE);
    }
  else if (!set_aside)
    {
      dialog = gtk_message_dialog_new (GTK_WINDOW (self),
                                       GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
                                       GTK_MESSAGE_QUESTION, GTK_BUTTONS_NONE,
                                       "Stop the sweep of “%s” and close?", name);
      gtk_message_dialog_format_secondary_text (GTK_MESSAGE_DIALOG (dialog),
                                                "The run under way stops and is kept in the "
                                                "sweep's folder with those that ended; the "
                                                "runs not started are skipped.");
      gtk_dialog_add_buttons (GTK_DIALOG (dialog), "_Cancel", GTK_RESPONSE_CANCEL,
                              "_Stop and Close", RESPONSE_DISCARD, NULL);
      gtk_dialog_set_default_response (GTK_DIALOG (dialog), GTK_RESPONSE_CANCEL);
    }
  else
    {
      dialog = gtk_message_dialog_new (GTK_WINDOW (self),
                                       GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
                                       GTK_MESSAGE_QUESTION, GTK_BUTTONS_NONE,
                                       "Close “%s” without the set-aside weights?", name);
      gtk_message_dialog_format_secondary_text (GTK_MESSAGE_DIALOG (dialog),
                                                "The weights of the run trained to step %ld "
                                                "were set aside and never saved; closing "
                                                "lets them go.", step);
      gtk_dialog_add_buttons (GTK_DIALOG (dialog), "_Cancel", GTK_RESPONSE_CANCEL,
                              "_Let Them Go", RESPONSE_DISCARD,
                              "_Save Them…", RESPONSE_SAVE_WEIGHTS, NULL);
      gtk_dialog_set_default_response (GTK_DIALOG (dialog), RESPONSE_SAVE_WEIGHTS);
    }
  g_signal_connect (dialog, "response", G_CALLBACK (on_close_response), self);
  self->close_dialog = dialog;
  gtk_window_present (GTK_WINDOW (self));
  gtk_window_present (GTK_WINDOW (dialog));
}
