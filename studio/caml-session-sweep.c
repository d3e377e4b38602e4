/* caml-session-sweep.c — a session's sweep (caml-session.h, "sweeps"):
 * started on the session's data, its runs kept in the runs list as they
 * end, cancelled when the window goes. The sweep itself is caml-sweep.c. */
#include <glib/gstdio.h>

#include "caml-session-private.h"

static void
on_sweep_run_ended (CamlSweep *sweep, CamlSweepRun *run, CamlSession *self)
{
  runs_keep_sweep_run (self, sweep, run);
}

static void
on_sweep_running (CamlSweep *sweep, GParamSpec *pspec, CamlSession *self)
{
  if (caml_sweep_is_running (sweep))
    return;
  g_autofree char *status = caml_sweep_dup_status (sweep, NULL);
  g_autofree char *text = g_strdup_printf ("Sweep ended: %s — results in %s", status,
                                           caml_sweep_get_out_dir (sweep));
  session_notice (self, text, caml_sweep_get_problem (sweep) != NULL);
  session_changed (self);
}

/* Its news no longer reaches the session. */
static void
let_go (CamlSession *self)
{
  if (self->sweep != NULL)
    g_signal_handlers_disconnect_by_data (self->sweep, self);
}

void
sweep_close (CamlSession *self)
{
  if (self->sweep == NULL)
    return;
  caml_sweep_cancel (self->sweep);
  let_go (self);
}

gboolean
caml_session_check_sweep (CamlSession *self, const CamlSweepPlan *plan, GError **error)
{
  g_return_val_if_fail (CAML_IS_SESSION (self) && plan != NULL, FALSE);
  if (!caml_sweep_plan_check (plan, error))
    return FALSE;
  int want = 0;
  const CamlShape *input = caml_session_get_data_shape (self, &want, NULL, NULL);
  if (input == NULL)
    return TRUE;   /* the data are not there yet: each run finds out */
  /* each point's model on the data's shapes (a baseline has its model's) */
  for (int i = 0; i < caml_sweep_plan_n_runs (plan); i++)
    {
      int index[2];
      gboolean baseline;
      caml_sweep_plan_run_of (plan, i, index, &baseline);
      if (baseline)
        continue;
      g_autoptr (GError) local = NULL;
      CamlExperiment *exp = caml_sweep_plan_experiment (plan, i, &local);
      CamlModel *model = exp != NULL && exp->n_layers > 0
                         ? caml_model_new_shapes (input, exp->layers, exp->n_layers, &local)
                         : NULL;
      int outputs = model != NULL ? (int) caml_shape_size (caml_model_output_shape (model)) : 0;
      g_clear_pointer (&model, caml_model_free);
      g_clear_pointer (&exp, caml_experiment_free);
      gboolean fits = outputs > 0 && (want <= 0 || outputs == want
                                      || (want == 2 && outputs == 1));
      if (fits)
        continue;
      g_autofree char *label = caml_sweep_plan_label (plan, index);
      if (local != NULL)
        g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "%s: %s", label, local->message);
      else
        g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                     "%s: the model's output has width %d, the data need %d", label, outputs,
                     want);
      return FALSE;
    }
  return TRUE;
}

gboolean
caml_session_start_sweep (CamlSession *self, CamlSweepPlan *plan, const char *out_dir,
                          GError **error)
{
  g_return_val_if_fail (CAML_IS_SESSION (self) && plan != NULL && out_dir != NULL, FALSE);
  g_autoptr (CamlSweepPlan) owned = plan;
  if (caml_session_is_sweeping (self))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "a sweep is under way: cancel it before starting another");
      return FALSE;
    }
  if (self->cancellable == NULL)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "the window is closing");
      return FALSE;
    }
  if (!caml_session_check_sweep (self, plan, error))
    return FALSE;
  /* the session's data serve the runs when they are those of the plan's
   * experiment (it is a copy of the session's): else each run loads its own */
  CamlRunData *data = NULL;
  if (self->data != NULL && self->exp != NULL && !self->data_loading && !self->files_loading
      && caml_data_config_equal (&self->exp->data, &plan->exp->data)
      && self->exp->seed == plan->exp->seed)
    data = self->data;
  else if (self->data_loading || self->files_loading)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "the data are still loading: start the sweep once they are there");
      return FALSE;
    }
  let_go (self);
  g_clear_object (&self->sweep);
  self->sweep = caml_sweep_new (g_steal_pointer (&owned), data, out_dir);
  g_signal_connect (self->sweep, "run-ended", G_CALLBACK (on_sweep_run_ended), self);
  g_signal_connect (self->sweep, "notify::running", G_CALLBACK (on_sweep_running), self);
  session_notify_sweep (self);
  session_changed (self);
  return TRUE;
}

void
caml_session_cancel_sweep (CamlSession *self)
{
  g_return_if_fail (CAML_IS_SESSION (self));
  if (self->sweep != NULL)
    caml_sweep_cancel (self->sweep);
}

CamlSweep *
caml_session_get_sweep (CamlSession *self)
{
  g_return_val_if_fail (CAML_IS_SESSION (self), NULL);
  return self->sweep;
}

gboolean
caml_session_is_sweeping (CamlSession *self)
{
  g_return_val_if_fail (CAML_IS_SESSION (self), FALSE);
  return self->sweep != NULL && caml_sweep_is_running (self->sweep);
}

char *
caml_session_dup_sweep_dir (CamlSession *self)
{
  g_return_val_if_fail (CAML_IS_SESSION (self), NULL);
  g_autofree char *name = caml_session_dup_display_name (self);
  /* a folder name: letters, digits, '-', '_' and '.' */
  for (char *c = name; *c != '\0'; c++)
    if (!g_ascii_isalnum (*c) && *c != '-' && *c != '_' && *c != '.')
      *c = '-';
  g_autoptr (GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");
  g_autofree char *leaf = g_strdup_printf ("%s-%s", *name ? name : "experiment", stamp);
  return g_build_filename (g_get_user_data_dir (), "caml-workbench", "sweeps", leaf, NULL);
}
