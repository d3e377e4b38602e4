/* caml-sweep-dialog.h — the question Sweep… asks: which one or two
 * settings of the experiment to vary, over which values, with or without
 * the matched baselines, and into which folder. The plan is checked as it
 * is typed (sweep.h: caml_sweep_plan_check), and Start is offered only for
 * a plan that checks. */
#pragma once

#include <gtk/gtk.h>

#include "caml-session.h"

G_BEGIN_DECLS

/* plan is the callee's; out_dir is the folder chosen. */
typedef void (*CamlSweepDialogFunc) (CamlSweepPlan *plan, const char *out_dir,
                                     gpointer user_data);

/* The session's experiment is copied, and each plan typed is checked
 * against its data (caml_session_check_sweep); default_dir is where the
 * sweep goes unless another folder is chosen. */
GtkWindow *caml_sweep_dialog_present (GtkWindow *parent, CamlSession *session,
                                      const char *preset, const char *default_dir,
                                      CamlSweepDialogFunc func, gpointer user_data);

/* For tests: the dialog's parts. */
GtkDropDown *caml_sweep_dialog_get_key (GtkWindow *dialog, int axis);
GtkEditable *caml_sweep_dialog_get_values (GtkWindow *dialog, int axis);
GtkCheckButton *caml_sweep_dialog_get_second (GtkWindow *dialog);
GtkCheckButton *caml_sweep_dialog_get_baselines (GtkWindow *dialog);
/* What the dialog says of the plan now: "18 runs: …" or the check's error. */
const char *caml_sweep_dialog_get_summary (GtkWindow *dialog);
GtkButton  *caml_sweep_dialog_get_start (GtkWindow *dialog);

G_END_DECLS
