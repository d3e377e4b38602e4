/* checkpoint.c — where a run that diverged goes back to: a copy of the
 * trainer's whole state at its last healthy evaluation, else the weights it
 * started from. The one place of that policy: the workbench's Continue and
 * `caml train`'s rollback both go back to it. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "trainer-private.h"

struct _CamlCheckpoint {
  float                *initial;    /* (n_weights) the weights at step 0, until there is a state */
  size_t                n_weights;
  CamlTrainerStateCopy *state;      /* or NULL: step 0, initial */
  long                  step;       /* the state's, or 0 */
  gboolean              evaluated;  /* state was taken at a healthy evaluation */
  double                best_loss;  /* lowest evaluated loss so far */
  int                   seen_rows;  /* rows of the current trainer seen so far */
};

CamlCheckpoint *
caml_checkpoint_new (const CamlModel *model, GError **error)
{
  size_t bytes = MAX (model->n_weights, 1) * sizeof (float);
  float *initial = g_try_malloc (bytes);
  if (initial == NULL)
    {
      g_autofree char *need = g_format_size (bytes);
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "the copy of the starting weights "
                   "that a divergence goes back to needs %s, which cannot be allocated", need);
      return NULL;
    }
  memcpy (initial, model->w, model->n_weights * sizeof (float));
  CamlCheckpoint *cp = g_new0 (CamlCheckpoint, 1);
  cp->n_weights = model->n_weights;
  cp->initial = initial;
  cp->best_loss = INFINITY;
  return cp;
}

void
caml_checkpoint_free (CamlCheckpoint *cp)
{
  if (cp == NULL)
    return;
  caml_trainer_state_copy_free (cp->state);
  g_free (cp->initial);
  g_free (cp);
}

void
caml_checkpoint_set_start (CamlCheckpoint *cp, const CamlModel *model)
{
  g_return_if_fail (model->n_weights == cp->n_weights);
  if (cp->initial != NULL)   /* with a state, the start is never gone back to */
    memcpy (cp->initial, model->w, cp->n_weights * sizeof (float));
}

/* From the first state on, the run goes back to a state, never to its
 * start: the copy of the starting weights goes. */
static void
replace_state (CamlCheckpoint *cp, CamlTrainerStateCopy *state, gboolean evaluated)
{
  if (state != cp->state)
    caml_trainer_state_copy_free (cp->state);
  cp->state = state;
  cp->step = caml_trainer_state_copy_get_step (state);
  cp->evaluated = evaluated;
  g_clear_pointer (&cp->initial, g_free);
}

/* A healthy evaluation: its loss (test, else train) is finite and within
 * twice the best so far. A run blowing up leaves the rows before it. The
 * whole state is kept — the optimizer's too — so that a run going on from
 * it is the run stopped there and resumed. (A copy that fails keeps the
 * older one: the latest update diverged — the run then ends, rolled back —
 * or there is no memory for it.) */
gboolean
caml_checkpoint_progress (CamlCheckpoint *cp, CamlTrainer *trainer,
                          const CamlProgress *progress)
{
  if (progress->n_rows <= cp->seen_rows || progress->state == CAML_TRAINER_FAILED)
    return FALSE;
  cp->seen_rows = progress->n_rows;
  double loss = isfinite (progress->last_row.test_loss) ? progress->last_row.test_loss
                                                        : progress->last_row.train_loss;
  if (!isfinite (loss))
    return FALSE;
  cp->best_loss = fmin (cp->best_loss, loss);
  if (loss > 2 * cp->best_loss)
    return FALSE;
  /* into the older copy's memory: no third copy of the weights meanwhile */
  CamlTrainerStateCopy *state = cp->state;
  if (state != NULL ? !caml_trainer_state_copy_over (trainer, state, NULL)
                    : (state = caml_trainer_state_copy (trainer, NULL)) == NULL)
    return FALSE;
  replace_state (cp, state, TRUE);
  return TRUE;
}

gboolean
caml_checkpoint_take (CamlCheckpoint *cp, CamlTrainer *trainer, GError **error)
{
  CamlTrainerStateCopy *state = caml_trainer_state_copy (trainer, error);
  if (state == NULL)
    return FALSE;
  replace_state (cp, state, FALSE);
  /* The evaluations so far count towards the best loss. */
  int n_rows = 0;
  g_autofree CamlEvalRow *rows = caml_trainer_copy_rows (trainer, &n_rows);
  for (int i = 0; i < n_rows; i++)
    {
      double loss = isfinite (rows[i].test_loss) ? rows[i].test_loss : rows[i].train_loss;
      if (isfinite (loss))
        cp->best_loss = fmin (cp->best_loss, loss);
    }
  cp->seen_rows = n_rows;
  return TRUE;
}

int
caml_checkpoint_get_rows_seen (const CamlCheckpoint *cp)
{
  return cp->seen_rows;
}

void
caml_checkpoint_set_rows_seen (CamlCheckpoint *cp, int n_rows)
{
  cp->seen_rows = n_rows;
}

long
caml_checkpoint_get_step (const CamlCheckpoint *cp, CamlTrainer *trainer)
{
  CamlDivergence d;
  /* a divergence rolled back to before it: a run goes on from there */
  if (trainer != NULL && caml_trainer_get_divergence (trainer, &d)
      && d.rolled_back_to <= cp->step)
    return d.rolled_back_to;
  return cp->step;
}

gboolean
caml_checkpoint_restore (const CamlCheckpoint *cp, CamlTrainer *trainer, GError **error)
{
  if (cp->state != NULL)
    return caml_trainer_state_restore (trainer, cp->state, error);
  g_return_val_if_fail (trainer->model->n_weights == cp->n_weights, FALSE);
  memcpy (trainer->model->w, cp->initial, cp->n_weights * sizeof (float));
  return TRUE;
}

gboolean
caml_checkpoint_roll_back (const CamlCheckpoint *cp, CamlTrainer *trainer, GError **error)
{
  CamlDivergence d;
  if (!caml_trainer_get_divergence (trainer, &d) || d.rolled_back_to <= cp->step)
    return TRUE;
  const char *why = cp->state == NULL ? "where the run started: no evaluation before the "
                                        "divergence was healthy"
                  : cp->evaluated ? "the last healthy evaluation"
                  : "where the run went on from: no evaluation since was healthy";
  return caml_trainer_roll_back_further (trainer, cp->state, cp->initial, why, error);
}

gboolean
caml_checkpoint_write (const CamlCheckpoint *cp, const CamlExperiment *exp,
                       const CamlDataset *train, const char *dir, GError **error)
{
  if (cp->state == NULL)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "no state to write yet: the run has not reached a healthy evaluation");
      return FALSE;
    }
  if (g_mkdir_with_parents (dir, 0777) != 0)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s: %s", dir,
                   g_strerror (e));
      return FALSE;
    }
  return caml_trainer_state_copy_write (cp->state, exp, train, dir, error);
}

gboolean
caml_trainer_state_copy_write (const CamlTrainerStateCopy *copy, const CamlExperiment *exp,
                               const CamlDataset *train, const char *dir, GError **error)
{
  /* The weights file needs the model's layer table and vocabulary: the
   * layers alone, with the copy's weights. */
  CamlModel *model = caml_experiment_build_model (exp, &train->x_shape, error);
  if (model == NULL)
    return FALSE;
  caml_model_set_vocab (model, train->vocab);
  size_t n = 0;
  const float *w = caml_trainer_state_copy_get_weights (copy, &n);
  if (model->n_weights != n)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "%s: the model has %zu weights, "
                   "the run %zu", dir, model->n_weights, n);
      caml_model_free (model);
      return FALSE;
    }
  memcpy (model->w, w, n * sizeof (float));
  GBytes *files[3] = { caml_weights_to_bytes (model), NULL, NULL };
  caml_model_free (model);
  files[1] = caml_trainer_state_copy_to_bytes (copy, error);
  if (files[1] == NULL)
    {
      g_bytes_unref (files[0]);
      return FALSE;
    }
  char *json = caml_experiment_to_json (exp);
  files[2] = g_bytes_new_take (json, strlen (json));
  static const char *const names[3] = { "model.weights", "trainer.state", "experiment.json" };
  gboolean ok = TRUE;
  for (int i = 0; i < 3 && ok; i++)
    {
      g_autofree char *path = g_build_filename (dir, names[i], NULL);
      gsize length = 0;
      const void *data = g_bytes_get_data (files[i], &length);
      ok = caml_file_replace (path, data, length, error);
    }
  for (int i = 0; i < 3; i++)
    g_bytes_unref (files[i]);
  return ok;
}
