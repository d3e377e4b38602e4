/* caml-window-private.h — the window's fields and the functions its files
 * share: caml-window.c (the shell: template, session, fields, forwarding),
 * caml-window-actions.c (win.* actions), caml-window-files.c (file
 * dialogs, the close question) and caml-window-plots.c (the layout of the
 * plot pages, the accuracy card, Export Plot). */
#pragma once

#include "caml-window.h"
#include "caml-application.h"
#include "caml-model-editor.h"
#include "caml-info-bar.h"
#include "caml-status-line.h"
#include "caml-loss-card.h"
#include "caml-surface-page.h"
#include "caml-sigma-page.h"
#include "caml-words-view.h"
#include "caml-runs-view.h"
#include "caml-sweep-view.h"
#include "caml-sweep-dialog.h"
#include "caml-inspect-page.h"
#include "caml-start-view.h"
#include "caml-session.h"

struct _CamlWindow {
  GtkApplicationWindow parent_instance;

  /* template widgets */
  GtkLabel        *title_label;
  GtkLabel        *subtitle_label;
  GtkMenuButton   *presets_button;
  GtkButton       *train_button;
  GtkLabel        *train_label;
  GtkMenuButton   *speed_button;  /* how fast: win.speed, win.continuous */
  GMenu           *recent_submenu;
  GMenu           *threads_submenu;
  CamlInfoBar     *info_bar;
  CamlModelEditor *model_editor;
  GtkDropDown     *data_drop;
  GtkLabel        *data_label;
  GtkDropDown     *loss_drop;
  GtkDropDown     *optimizer_drop;
  GtkSpinButton   *lr_spin;
  GtkSpinButton   *em_spin;
  GtkSpinButton   *weight_decay_spin;
  GtkSpinButton   *batch_spin;
  GtkSpinButton   *steps_spin;
  GtkSpinButton   *eval_spin;
  GtkSpinButton   *average_spin;
  GtkSpinButton   *seed_spin;
  GtkScale        *smoothing_scale;
  CamlLossCard    *loss_card;
  CamlSurfacePage *surface_page;
  CamlPlotView    *accuracy_view;
  CamlSigmaPage   *sigma_page;
  CamlPlotView    *parts_view;
  CamlWordsView   *words_page;
  CamlRunsView    *runs_page;
  CamlSweepView   *sweep_page;
  CamlInspectPage *inspect_page;
  GtkGrid         *surface_data_grid;
  GtkSpinButton   *fraction_spin;
  GtkSpinButton   *noise_spin;
  GtkGrid         *bottom_grid;
  GtkStack        *plots_stack;
  GtkBox          *plots_switcher;
  GtkToggleButton *main_toggle;
  GtkToggleButton *parts_toggle;
  GtkToggleButton *words_toggle;
  CamlStatusLine  *status_line;
  GtkStack        *content_stack;  /* "start" (start_view) over "editor" */
  CamlStartView   *start_view;
  GtkPaned        *main_paned;    /* the side bar | the plots */
  GtkPaned        *plots_paned;   /* the loss | the pages of plots */

  /* owned */
  CamlSession    *session;        /* the experiment, its data and runs */
  const char     *chosen_page;    /* interned: the plots page the user last chose */
  int             sidebar_width;  /* the side bar's width fit_sidebar set last */
  int             loss_height;    /* the loss pane's height fit_loss_height set last */
  gboolean        syncing;        /* widgets are being set from the experiment */
  gboolean        close_confirmed; /* close without asking (answered, or app.quit's answer) */
  gboolean        asking_for_quit; /* the close question is app.quit's: answer, do not close */
  GtkWidget      *close_dialog;   /* the close question while it is up, or NULL */
  guint           focus_source;   /* a pending focus_rescue idle (holds a ref) */

  /* borrowed */
  GSettings      *settings;       /* the application's, may be NULL */
};

/* caml-window.c */
/* "Saved the weights to surface.weights": what, and the file's name. */
void caml_window_show_done (CamlWindow *self, const char *what, const char *path);
void caml_window_end_news (CamlWindow *self);
void caml_window_update_title (CamlWindow *self);
void caml_window_add_recent (CamlWindow *self, const char *path);
void caml_window_commit_pending_edit (CamlWindow *self);
void caml_window_sync_data_choice (CamlWindow *self);
void caml_window_refresh_data_titles (CamlWindow *self);
void caml_window_set_strings (GtkDropDown *drop, const char *const *strings);
void caml_window_set_action_enabled (CamlWindow *self, const char *name, gboolean enabled);
void caml_window_close_answered (CamlWindow *self, gboolean may_close);
void caml_window_ask_close_for_quit (CamlWindow *self);
gboolean caml_window_has_something_to_lose (CamlWindow *self);

/* caml-window-actions.c */
void caml_window_actions_init (CamlWindow *self);
/* The stateful actions follow the session's settings (compare, speed…). */
void caml_window_actions_set_session (CamlWindow *self, CamlSession *session);
void caml_window_update_actions (CamlWindow *self);

/* caml-window-files.c */
typedef void (*CamlWindowPathFunc) (CamlWindow *self, const char *path, gpointer data);
void caml_window_ask_save_path (CamlWindow *self, const char *title, const char *suggested,
                                CamlWindowPathFunc func, const char *what);
void caml_window_ask_open_path (CamlWindow *self, const char *title, const char *filter_name,
                                const char *pattern, CamlWindowPathFunc func);
void caml_window_ask_text_files (CamlWindow *self);
void caml_window_ask_idx_files (CamlWindow *self);
void caml_window_ask_export_plot (CamlWindow *self, const char *what);
void caml_window_ask_close (CamlWindow *self);
void caml_window_save_window_size (CamlWindow *self);

/* caml-window-data.c */
void caml_window_data_init (CamlWindow *self);
void caml_window_data_sync (CamlWindow *self, const CamlExperiment *exp);
void caml_window_data_set_session (CamlWindow *self, CamlSession *session);

/* caml-window-plots.c */
void caml_window_plots_init (CamlWindow *self);
void caml_window_plots_set_session (CamlWindow *self, CamlSession *session);
void caml_window_show_page (CamlWindow *self, const char *page);
