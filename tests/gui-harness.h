/* gui-harness.h — what the window tests under Xvfb share (test-gui-*.c):
 * the application they open windows of, the window's actions and template
 * children, the conditions they wait for. Beside harness.h (the main loop,
 * jobs, the files they make), which the headless session tests share too. */
#pragma once

#include <gtk/gtk.h>

#include "caml-application.h"
#include "caml-window.h"
#include "harness.h"

extern CamlApplication *app;
extern char *autosave_dir;   /* $CAML_AUTOSAVE_DIR for the whole run */

/* Sets up the application (CAML_GUI_TEST_FILTER picks tests by name) and
 * an autosave folder; returns FALSE (having said why) if it cannot. */
gboolean gui_harness_init (const char *program);
/* Frees the application and the autosave folder; returns failed. */
int gui_harness_finish (int failed);

gboolean is_mapped (gpointer data);

gboolean not_loading (gpointer data);

gboolean run_ended (gpointer data);

void activate (CamlWindow *win, const char *action, GVariant *param);

gboolean enabled (CamlWindow *win, const char *action);

/* The model editor's own actions (editor.*). */
GActionGroup *editor_actions (CamlWindow *win);

void activate_editor (CamlWindow *win, const char *action, GVariant *param);

gboolean editor_enabled (CamlWindow *win, const char *action);

void save_screenshot (GtkWidget *widget, const char *path);

gboolean autosave_written (gpointer data);

/* The widget's first controller of type `type` (a gesture, a drop
 * target…), or NULL: tests emit its signals as input would. */
gpointer controller_of (GtkWidget *widget, GType type);

/* A widget of a template by its id, below widget (or widget itself). */
GtkWidget *find_by_id (GtkWidget *widget, const char *name);

/* A widget of the window's template, or of the templates inside it (the
 * info bar's, the status line's, the pages'), by its id. */
GtkWidget *template_child (CamlWindow *win, const char *name);

/* Types into a field (the text only: no Enter, no focus-out), keeping the
 * keyboard focus there, as a user does before pressing F5. */
void type_into (CamlWindow *win, GtkSpinButton *spin, const char *text);

const char * status_text (CamlWindow *win);

/* The labels of the loss plot's series, joined by "|". */
char *loss_labels (CamlWindow *win);

gboolean can_train (gpointer data);

gboolean is_enabled_save_run (gpointer data);

/* A window on the experiment file at path, once its run can train. */
CamlWindow *open_window_on (const char *path);

gboolean notice_has (CamlWindow *win, const char *text);

gboolean has_error_with (CamlWindow *win, const char *text);

gboolean run_failed_or_finished (gpointer data);

const char * placeholder_of (CamlWindow *win, const char *view);

/* The dialog of a type shown for win (the close question, the file
 * chooser), or NULL. */
GtkWindow *dialog_of (CamlWindow *win, GType type);
