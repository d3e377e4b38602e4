/* test-trainer.c — the training thread: a run to completion, pause and single
 * steps, prompt stop, free while running, determinism, extension, divergence, live
 * learning-rate changes, progress callbacks, caml_trainer_with_model and
 * caml_evaluate. Experiments are built in code so that this file depends on
 * the engine's model, loss, optimizer and data only. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#ifdef __linux__
#include <sys/resource.h>
#include <unistd.h>
#endif

#include "average.h"
#include "caml-private.h"   /* tests the engine's internals */

/* ---------------------------------------------------------------- helpers */

#define assert_near(a, b, tol)                                                \
  do {                                                                        \
    double a_ = (a), b_ = (b);                                                \
    if (!(fabs (a_ - b_) <= (tol)))                                           \
      {                                                                       \
        print_error ("%.17g != %.17g (tolerance %g)\n", a_, b_, (double) (tol)); \
        fail ();                                                              \
      }                                                                       \
  } while (0)

#define assert_error(err, domain, ecode)                                      \
  do {                                                                        \
    assert_non_null (err);                                                    \
    if (!g_error_matches ((err), (domain), (ecode)))                          \
      {                                                                       \
        print_error ("unexpected error %d: %s\n", (err)->code, (err)->message); \
        fail ();                                                              \
      }                                                                       \
  } while (0)

/* A bare experiment: only the fields the trainer reads. */
static CamlExperiment *
make_experiment (CamlOptimizerKind kind, double lr, int steps, int batch_size,
                 int eval_every, guint64 seed)
{
  CamlExperiment *exp = g_new0 (CamlExperiment, 1);
  exp->loss = CAML_LOSS_MSE;
  caml_optimizer_config_defaults (&exp->optimizer, kind);
  exp->optimizer.lr = lr;
  exp->steps = steps;
  exp->batch_size = batch_size;
  exp->eval_every = eval_every;
  exp->seed = seed;
  return exp;
}

static void
set_option (CamlLayerSpec *spec, const char *key, double value)
{
  int i = caml_layer_ops_option_index (spec->ops, key);
  assert_true (i >= 0);
  spec->opt[i] = value;
}

static void
dense_spec (CamlLayerSpec *spec, int units, CamlActivation act)
{
  spec->ops = caml_layer_lookup ("dense");
  assert_non_null (spec->ops);
  caml_layer_ops_default_options (spec->ops, spec->opt);
  set_option (spec, "units", units);
  set_option (spec, "activation", act);
}

/* 2 → hidden (tanh) → 1, weights from `init_seed`. */
static CamlModel *
make_mlp (int hidden, guint32 init_seed)
{
  CamlLayerSpec specs[2];
  CamlShape input = caml_shape_flat (2);
  GRand *rng = g_rand_new_with_seed (init_seed);
  GError *error = NULL;
  CamlModel *model;

  dense_spec (&specs[0], hidden, CAML_ACT_TANH);
  dense_spec (&specs[1], 1, CAML_ACT_IDENTITY);
  model = caml_model_new (&input, specs, 2, rng, &error);
  g_rand_free (rng);
  assert_null (error);
  assert_non_null (model);
  return model;
}

static gboolean
all_finite (const float *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (!isfinite (v[i]))
      return FALSE;
  return TRUE;
}

static long
current_step (CamlTrainer *trainer, CamlTrainerState *state)
{
  CamlProgress p;
  caml_trainer_get_progress (trainer, &p);
  if (state)
    *state = p.state;
  return p.step;
}

/* Polls until the trainer has done `step` steps; a hang fails after 2 min. */
static void
wait_for_step (CamlTrainer *trainer, long step)
{
  gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  while (current_step (trainer, NULL) < step)
    {
      assert_true (g_get_monotonic_time () < deadline);
      g_usleep (1000);
    }
}

static void
copy_weights_cb (CamlModel *model, gpointer user_data)
{
  float *dst = user_data;
  memcpy (dst, model->w, model->n_weights * sizeof *dst);
}

/* ------------------------------------------------------------------ tests */

static void
test_run_to_completion (void **state)
{
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAM, 0.05, 400, 0, 100, 3);
  CamlModel *model = make_mlp (4, 11);
  GError *error = NULL;
  CamlTrainer *trainer;
  CamlEvalRow *rows;
  float *losses;
  long n_losses;
  int n_rows;
  CamlProgress p;
  double loss, mse;

  caml_data_xor (&train, &test);
  trainer = caml_trainer_new (exp, model, train, test);
  caml_trainer_get_progress (trainer, &p);
  assert_int_equal (p.state, CAML_TRAINER_IDLE);
  assert_int_equal (p.total_steps, 400);

  assert_true (caml_trainer_start (trainer, FALSE, &error));
  assert_null (error);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  assert_null (caml_trainer_get_error (trainer));

  losses = caml_trainer_copy_losses (trainer, &n_losses);
  assert_int_equal (n_losses, 400);
  assert_true (all_finite (losses, (size_t) n_losses));
  assert_true (losses[n_losses - 1] < 0.5f * losses[0]);

  rows = caml_trainer_copy_rows (trainer, &n_rows);
  assert_int_equal (n_rows, 4);
  for (int i = 0; i < n_rows; i++)
    {
      double mean = 0.0;
      assert_int_equal (rows[i].step, 100 * (i + 1));
      for (int k = 100 * i; k < 100 * (i + 1); k++)
        mean += losses[k];
      assert_near (rows[i].train_loss, mean / 100, 1e-6);
      assert_true (rows[i].seconds > 0.0);
      assert_true (rows[i].eval_seconds >= 0.0 && rows[i].eval_seconds <= rows[i].seconds);
      if (i > 0)
        assert_true (rows[i].seconds >= rows[i - 1].seconds
                     && rows[i].eval_seconds >= rows[i - 1].eval_seconds);
    }

  /* The last row is an evaluation of the final weights. */
  caml_evaluate (model, CAML_LOSS_MSE, test, &loss, &mse);
  assert_near (rows[3].test_loss, loss, 1e-9);
  assert_near (rows[3].test_metric, mse, 1e-9);
  assert_true (mse < 0.25);

  caml_trainer_get_progress (trainer, &p);
  assert_int_equal (p.state, CAML_TRAINER_FINISHED);
  assert_int_equal (p.step, 400);
  assert_int_equal (p.n_rows, 4);
  assert_int_equal (p.last_row.step, 400);
  assert_false (p.classification);
  assert_near (p.last_loss, losses[399], 0.0);
  assert_true (p.steps_per_second > 0.0);
  assert_true (p.eval_seconds == rows[3].eval_seconds && p.eval_seconds <= p.seconds);
  assert_int_equal (p.tokens, 0);   /* not text */
  assert_true (p.tokens_per_second == 0.0);

  /* A finished trainer does not start again. */
  assert_false (caml_trainer_start (trainer, FALSE, &error));
  assert_error (error, CAML_ERROR, CAML_ERROR_INVALID);
  g_clear_error (&error);

  g_free (rows);
  g_free (losses);
  caml_trainer_free (trainer);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

static void
test_pause_and_step (void **state)
{
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_SGD, 0.01, 10000000, 0, 0, 1);
  CamlModel *model = make_mlp (3, 5);
  CamlTrainer *trainer;
  CamlTrainerState st;
  long s, n_losses;
  float *losses;

  caml_data_xor (&train, &test);
  trainer = caml_trainer_new (exp, model, train, test);

  /* Started paused: nothing happens until asked. */
  assert_true (caml_trainer_start (trainer, TRUE, NULL));
  g_usleep (50000);
  assert_int_equal (current_step (trainer, &st), 0);
  assert_int_equal (st, CAML_TRAINER_PAUSED);

  caml_trainer_step (trainer);
  caml_trainer_step (trainer);
  wait_for_step (trainer, 2);
  g_usleep (100000);
  assert_int_equal (current_step (trainer, &st), 2);
  assert_int_equal (st, CAML_TRAINER_PAUSED);
  losses = caml_trainer_copy_losses (trainer, &n_losses);
  assert_int_equal (n_losses, 2);
  g_free (losses);

  /* Running, then paused mid-run: the count holds still, and two single
   * steps advance it by exactly two. */
  caml_trainer_resume (trainer);
  wait_for_step (trainer, 100);
  assert_int_equal ((current_step (trainer, &st), st), CAML_TRAINER_RUNNING);
  caml_trainer_pause (trainer);
  g_usleep (50000);
  s = current_step (trainer, &st);
  assert_int_equal (st, CAML_TRAINER_PAUSED);
  g_usleep (50000);
  assert_int_equal (current_step (trainer, NULL), s);

  caml_trainer_step (trainer);
  caml_trainer_step (trainer);
  wait_for_step (trainer, s + 2);
  g_usleep (100000);
  assert_int_equal (current_step (trainer, NULL), s + 2);

  /* step is ignored while running. */
  caml_trainer_resume (trainer);
  caml_trainer_step (trainer);
  caml_trainer_stop (trainer);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_STOPPED);
  assert_null (caml_trainer_get_error (trainer));

  caml_trainer_free (trainer);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

static void
test_stop_is_prompt (void **state)
{
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_SGD, 0.01, 10000000, 16, 1000, 1);
  CamlModel *model = make_mlp (8, 5);
  CamlTrainer *trainer;
  CamlProgress p;

  caml_data_surface (81, 0.05, 7, &train, &test);
  trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  wait_for_step (trainer, 10);
  g_usleep (100000);

  caml_trainer_stop (trainer);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_STOPPED);

  caml_trainer_get_progress (trainer, &p);
  assert_int_equal (p.state, CAML_TRAINER_STOPPED);
  assert_true (p.step > 0 && p.step < 10000000);
  assert_true (p.seconds > 0.0);
  assert_true (all_finite (model->w, model->n_weights));

  /* Stopping a paused run is prompt too. */
  caml_trainer_free (trainer);
  trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, TRUE, NULL));
  g_usleep (20000);
  caml_trainer_stop (trainer);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_STOPPED);
  assert_int_equal (current_step (trainer, NULL), 0);

  caml_trainer_free (trainer);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

static void
test_free_while_running (void **state)
{
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAM, 0.001, 10000000, 0, 50, 1);
  CamlModel *model = make_mlp (4, 5);
  CamlTrainer *trainer;

  caml_data_xor (&train, &test);

  /* Running. */
  trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  wait_for_step (trainer, 10);
  caml_trainer_free (trainer);

  /* Paused. */
  trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, TRUE, NULL));
  caml_trainer_free (trainer);

  /* Never started; stop and join on it are harmless. */
  trainer = caml_trainer_new (exp, model, train, test);
  caml_trainer_stop (trainer);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_STOPPED);
  caml_trainer_free (trainer);
  trainer = caml_trainer_new (exp, model, train, test);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_IDLE);
  caml_trainer_free (trainer);

  assert_true (all_finite (model->w, model->n_weights));
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

/* Trains `model` from `w0` for exp and returns the per-step losses and the
 * final weights (in `w_out`). */
static float *
run_from (CamlExperiment *exp, CamlModel *model, const float *w0,
          const CamlDataset *train, const CamlDataset *test,
          float *w_out, long *n_losses)
{
  CamlTrainer *trainer;
  float *losses;

  memcpy (model->w, w0, model->n_weights * sizeof *w0);
  trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  losses = caml_trainer_copy_losses (trainer, n_losses);
  memcpy (w_out, model->w, model->n_weights * sizeof *w_out);
  caml_trainer_free (trainer);
  return losses;
}

static void
count_progress_cb (const CamlProgress *progress, gpointer user_data)
{
  g_atomic_int_inc ((gint *) user_data);
}

/* 100 trainers created, started, stopped, joined and freed on one model:
 * no thread, buffer or error may leak (LeakSanitizer in the ASan build,
 * ThreadSanitizer in the TSan build). Some start paused, some stop before
 * their first step, some after a few, one with a with_model closure in
 * flight; each ends STOPPED and the weights stay finite. */
static void
test_start_stop_cycles (void **state)
{
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAM, 0.01, 1000000, 2, 0, 5);
  CamlModel *model = make_mlp (4, 6);
  float *w = g_new (float, model->n_weights);
  gint reports = 0;

  caml_data_xor (&train, &test);
  for (int cycle = 0; cycle < 100; cycle++)
    {
      CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
      GError *error = NULL;
      gboolean paused = cycle % 3 == 1;
      caml_trainer_set_progress_func (trainer, count_progress_cb, &reports, 1);
      assert_true (caml_trainer_start (trainer, paused, &error));
      assert_null (error);
      if (paused)
        caml_trainer_step (trainer);
      if (cycle % 4 == 2)
        wait_for_step (trainer, 1);
      if (cycle % 10 == 5)
        caml_trainer_with_model (trainer, copy_weights_cb, w);
      caml_trainer_stop (trainer);
      assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_STOPPED);
      assert_null (caml_trainer_get_error (trainer));
      caml_trainer_free (trainer);
    }
  assert_true (g_atomic_int_get (&reports) >= 100);   /* every run reports its end */
  assert_true (all_finite (model->w, model->n_weights));

  g_free (w);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

static void
test_determinism (void **state)
{
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_SGD, 0.1, 300, 8, 100, 42);
  CamlModel *model = make_mlp (5, 9);
  size_t nw = model->n_weights, bytes = nw * sizeof (float);
  float *w0 = g_memdup2 (model->w, bytes);
  float *wa = g_new (float, nw), *wb = g_new (float, nw), *wc = g_new (float, nw);
  float *a, *b, *c;
  long na, nb, nc;

  caml_data_surface (81, 0.01, 1, &train, &test);
  assert_true (train->n > 8);
  exp->optimizer.momentum = 0.9;

  a = run_from (exp, model, w0, train, test, wa, &na);
  b = run_from (exp, model, w0, train, test, wb, &nb);
  assert_int_equal (na, 300);
  assert_int_equal (nb, 300);
  assert_memory_equal (a, b, 300 * sizeof (float));
  assert_memory_equal (wa, wb, bytes);
  assert_memory_not_equal (wa, w0, bytes);

  /* Another seed orders the minibatches differently. */
  exp->seed = 43;
  c = run_from (exp, model, w0, train, test, wc, &nc);
  assert_int_equal (nc, 300);
  assert_memory_not_equal (a, c, 300 * sizeof (float));

  /* Full batch: samples in order, so the seed does not matter. */
  g_free (a);
  g_free (c);
  exp->batch_size = 0;
  exp->seed = 1;
  a = run_from (exp, model, w0, train, test, wa, &na);
  exp->seed = 2;
  c = run_from (exp, model, w0, train, test, wc, &nc);
  assert_memory_equal (a, c, 300 * sizeof (float));

  g_free (a);
  g_free (b);
  g_free (c);
  g_free (w0);
  g_free (wa);
  g_free (wb);
  g_free (wc);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

/* Runs to failure and checks the error; returns the message (free it) and
 * where the run diverged. */
static char *
run_to_failure (CamlExperiment *exp, CamlModel *model, const CamlDataset *train,
                const CamlDataset *test, long *steps_done, CamlDivergence *where)
{
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  GError *error;
  CamlProgress p;
  char *message;

  assert_false (caml_trainer_get_divergence (trainer, where));
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FAILED);
  error = caml_trainer_get_error (trainer);
  assert_non_null (error);
  assert_error (error, CAML_ERROR, CAML_ERROR_DIVERGED);
  caml_trainer_get_progress (trainer, &p);
  assert_int_equal (p.state, CAML_TRAINER_FAILED);
  *steps_done = p.step;
  assert_true (caml_trainer_get_divergence (trainer, where));
  assert_int_equal (where->rolled_back_to, p.step);
  message = g_strdup (error->message);
  g_error_free (error);
  caml_trainer_free (trainer);
  assert_true (all_finite (model->w, model->n_weights));
  return message;
}

/* A run whose progress function (called on the trainer thread after every
 * step) logs the weights: history holds (steps done + 1, n_weights). */
typedef struct {
  CamlTrainer     *trainer;
  const CamlModel *model;
  size_t           n_weights;
  GArray          *history;   /* float */
} LoggedRun;

static void
logged_progress_cb (const CamlProgress *progress, gpointer user_data)
{
  LoggedRun *run = user_data;
  if (progress->state != CAML_TRAINER_RUNNING)
    return;
  assert_int_equal (run->history->len, (guint) (progress->step * run->n_weights));
  /* Read directly (the trainer thread holds the model now), not through
   * caml_trainer_with_model: its check of the latest update would catch a
   * divergence a step early, and this test follows the steps' own checks. */
  g_array_append_vals (run->history, run->model->w, (guint) run->n_weights);
}

static void
assert_message_ends (const char *message, long rolled_back_to)
{
  char *end = g_strdup_printf ("; weights rolled back to step %ld", rolled_back_to);
  if (!g_str_has_suffix (message, end))
    fail_msg ("\"%s\" does not end in \"%s\"", message, end);
  g_free (end);
}

/* A learning rate of 1e30 blows the surface model up within a few steps.
 * The error names the step and the layer, the weights are the last ones
 * whose loss and gradient were finite (logged after every step), and after
 * caml_trainer_set_lr with a sane rate the same trainer trains on from
 * there to the end. */
static void
test_divergence_and_resume (void **state)
{
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_SGD, 1e30, 300, 0, 10, 1);
  CamlModel *model = make_mlp (5, 3);
  size_t nw = model->n_weights, bytes = nw * sizeof (float);
  LoggedRun run = { .model = model, .n_weights = nw };
  CamlDivergence where;
  CamlProgress p;

  caml_data_surface (81, 0.01, 1, &train, &test);
  run.history = g_array_new (FALSE, FALSE, sizeof (float));
  g_array_append_vals (run.history, model->w, (guint) nw);   /* step 0 */
  run.trainer = caml_trainer_new (exp, model, train, test);
  caml_trainer_set_progress_func (run.trainer, logged_progress_cb, &run, 1);

  assert_true (caml_trainer_start (run.trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (run.trainer), CAML_TRAINER_FAILED);
  GError *error = caml_trainer_get_error (run.trainer);
  assert_error (error, CAML_ERROR, CAML_ERROR_DIVERGED);
  assert_true (caml_trainer_get_divergence (run.trainer, &where));
  caml_trainer_get_progress (run.trainer, &p);
  print_message ("diverged: %s\n", error->message);

  /* The message: the step, a layer, the step rolled back to. */
  char *prefix = g_strdup_printf ("step %ld: ", where.step);
  assert_true (g_str_has_prefix (error->message, prefix));
  g_free (prefix);
  assert_true (where.layer >= 0 && where.layer < model->n_layers);
  char *layer = g_strdup_printf ("layer %d (%s)", where.layer,
                                 model->layers[where.layer]->ops->name);
  assert_non_null (strstr (error->message, layer));
  g_free (layer);
  assert_message_ends (error->message, where.rolled_back_to);
  g_clear_error (&error);

  /* The loss or an output went first here: the update that led to it is
   * undone too. Step count, losses and rows agree with the weights. */
  assert_true (where.kind == CAML_DIVERGED_OUTPUT || where.kind == CAML_DIVERGED_LOSS);
  assert_true (where.step >= 2);
  assert_int_equal (where.rolled_back_to, where.step - 2);
  assert_int_equal (p.step, where.rolled_back_to);
  assert_true (run.history->len >= (where.rolled_back_to + 1) * nw);
  assert_memory_equal (model->w, &g_array_index (run.history, float,
                                                 where.rolled_back_to * nw), bytes);
  long n_losses;
  float *losses = caml_trainer_copy_losses (run.trainer, &n_losses);
  assert_int_equal (n_losses, where.rolled_back_to);
  assert_true (all_finite (losses, (size_t) n_losses));
  g_free (losses);
  int n_rows;
  CamlEvalRow *rows = caml_trainer_copy_rows (run.trainer, &n_rows);
  for (int i = 0; i < n_rows; i++)
    assert_true (rows[i].step <= where.rolled_back_to);
  g_free (rows);

  /* A lower rate, and the same trainer runs to the end from there. */
  caml_trainer_set_progress_func (run.trainer, NULL, NULL, 0);
  caml_trainer_set_lr (run.trainer, 0.01);
  assert_true (caml_trainer_start (run.trainer, FALSE, &error));
  assert_null (error);
  assert_int_equal (caml_trainer_join (run.trainer), CAML_TRAINER_FINISHED);
  assert_null (caml_trainer_get_error (run.trainer));
  assert_false (caml_trainer_get_divergence (run.trainer, &where));
  caml_trainer_get_progress (run.trainer, &p);
  assert_int_equal (p.step, 300);
  losses = caml_trainer_copy_losses (run.trainer, &n_losses);
  assert_int_equal (n_losses, 300);
  assert_true (all_finite (losses, 300));
  assert_true (losses[299] < losses[where.rolled_back_to]);
  g_free (losses);
  rows = caml_trainer_copy_rows (run.trainer, &n_rows);
  assert_true (n_rows > 0);
  assert_int_equal (rows[n_rows - 1].step, 300);
  for (int i = 1; i < n_rows; i++)
    assert_true (rows[i].step > rows[i - 1].step);
  g_free (rows);
  assert_true (all_finite (model->w, nw));

  /* Finished now: no third start. */
  assert_false (caml_trainer_start (run.trainer, FALSE, &error));
  assert_error (error, CAML_ERROR, CAML_ERROR_INVALID);
  g_clear_error (&error);

  caml_trainer_free (run.trainer);
  g_array_unref (run.history);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

/* With weight averaging, a divergence takes the average back too: the
 * diverged weights went into it before the check, and a trainer started
 * again at a sane rate ended with that average installed (not finite). */
static void
test_divergence_average_resume (void **state)
{
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_SGD, 1e30, 300, 0, 10, 1);
  exp->average_decay = 0.9;
  CamlModel *model = make_mlp (5, 3);
  GError *error = NULL;

  caml_data_surface (81, 0.01, 1, &train, &test);
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FAILED);
  assert_true (all_finite (model->w, model->n_weights));   /* the last good weights */

  caml_trainer_set_lr (trainer, 0.01);
  assert_true (caml_trainer_start (trainer, FALSE, &error));
  assert_null (error);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  assert_true (all_finite (model->w, model->n_weights));   /* the average, installed */
  int n_rows;
  CamlEvalRow *rows = caml_trainer_copy_rows (trainer, &n_rows);
  assert_true (n_rows > 0);
  for (int i = 0; i < n_rows; i++)
    assert_true (isfinite (rows[i].test_loss));
  g_free (rows);

  caml_trainer_free (trainer);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

/* A loss that grows a million-fold while staying finite is a divergence
 * (SGD at lr 1e6 on the surface blows up over a few steps); the weights go
 * back to those before the step that produced it. */
static void
test_divergence_finite_blowup (void **state)
{
  (void) state;
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_SGD, 1e6, 300, 0, 100, 1);
  CamlModel *model = make_mlp (5, 3);
  CamlDivergence where;
  long done;
  caml_data_surface (81, 0.01, 1, &train, &test);
  char *message = run_to_failure (exp, model, train, test, &done, &where);
  assert_true (g_str_has_prefix (message, "step "));
  assert_non_null (strstr (message, "is over a million times the first step's"));
  assert_int_equal (where.kind, CAML_DIVERGED_LOSS);
  assert_int_equal (where.layer, model->n_layers - 1);
  assert_true (where.step >= 2);
  assert_int_equal (done, where.rolled_back_to);
  assert_true (done < where.step);
  for (size_t k = 0; k < model->n_weights; k++)
    assert_true (isfinite (model->w[k]));
  /* The weights kept give a loss within the bound (batch 0: every step sees
   * the whole training set, so the first step's loss is the initial one). */
  CamlModel *fresh = make_mlp (5, 3);
  double loss_first = 0.0, loss_kept = 0.0;
  caml_evaluate (fresh, exp->loss, train, &loss_first, NULL);
  caml_evaluate (model, exp->loss, train, &loss_kept, NULL);
  assert_true (loss_kept <= 1e6 * MAX (loss_first, 1e-3));
  g_free (message);

  /* The run's last update is checked too, though no step follows it: one
   * step at lr 1e19 leaves weights whose loss is not finite. */
  CamlModel *one = make_mlp (5, 3);
  float *w_before = g_memdup2 (one->w, one->n_weights * sizeof (float));
  exp->optimizer.lr = 1e19;
  exp->steps = 1;
  message = run_to_failure (exp, one, train, test, &done, &where);
  assert_true (g_str_has_prefix (message, "step 1: after its update, the loss is inf: "
                                          "the outputs of layer 1 (dense) reach "));
  assert_int_equal (where.kind, CAML_DIVERGED_LOSS);
  assert_int_equal (done, 0);
  assert_memory_equal (one->w, w_before, one->n_weights * sizeof (float));
  g_free (message);
  g_free (w_before);
  caml_model_free (one);
  exp->steps = 300;

  /* At a sound rate the same run finishes. */
  exp->optimizer.lr = 0.1;
  CamlTrainer *trainer = caml_trainer_new (exp, fresh, train, test);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  caml_trainer_free (trainer);
  caml_model_free (fresh);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

/* What ends a run right after the update of step `good` + 1. */
typedef enum { END_BY_STOP, END_BY_PAUSE, END_BY_EVALUATION, END_BY_CLOSURE } EndBy;

/* A run whose progress function (after every step) sets the learning rate
 * to `lr` after step `good`, then stops or pauses the run after the next
 * step (END_BY_EVALUATION: the run evaluates there; END_BY_CLOSURE: the
 * progress function reads the weights with caml_trainer_with_model). */
typedef struct {
  CamlTrainer *trainer;
  long         good;
  double       lr;
  EndBy        end;
  float       *w_good;      /* (n_weights) the weights after step `good` */
  float       *w_seen;      /* (n_weights) END_BY_CLOSURE: what the closure saw */
  int          rows_seen;   /* evaluation rows reported while running */
} StopRun;

static void
stop_after_blowup_cb (const CamlProgress *progress, gpointer user_data)
{
  StopRun *run = user_data;
  if (progress->state != CAML_TRAINER_RUNNING)
    return;
  run->rows_seen = MAX (run->rows_seen, progress->n_rows);
  if (progress->step == run->good)
    {
      caml_trainer_with_model (run->trainer, copy_weights_cb, run->w_good);
      caml_trainer_set_lr (run->trainer, run->lr);
    }
  else if (progress->step == run->good + 1 && run->end == END_BY_STOP)
    caml_trainer_stop (run->trainer);
  else if (progress->step == run->good + 1 && run->end == END_BY_PAUSE)
    caml_trainer_pause (run->trainer);
  else if (progress->step == run->good + 1 && run->end == END_BY_CLOSURE)
    caml_trainer_with_model (run->trainer, copy_weights_cb, run->w_seen);
}

/* Polls until the trainer is in `state`; a hang fails after 2 min. */
static void
wait_for_state (CamlTrainer *trainer, CamlTrainerState state)
{
  gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  CamlTrainerState now;
  while ((current_step (trainer, &now), now) != state)
    {
      assert_true (g_get_monotonic_time () < deadline);
      g_usleep (1000);
    }
}

/* The update just before a stop, a pause, an evaluation or a closure run by
 * the progress function is checked as the last step's is: a step at lr
 * 1e19 right before it is a divergence, and the weights kept are those
 * before it, not what a stop would save, an evaluation report or the
 * closure read. */
static void
test_divergence_before_stop (void **state)
{
  (void) state;
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_SGD, 0.1, 1000, 0, 0, 1);
  CamlModel *model = make_mlp (5, 3);
  size_t bytes = model->n_weights * sizeof (float);
  float *w0 = g_memdup2 (model->w, bytes);
  StopRun run = { .good = 3, .lr = 1e19, .w_good = g_malloc (bytes),
                  .w_seen = g_malloc (bytes) };
  CamlDivergence where;
  caml_data_surface (81, 0.01, 1, &train, &test);

  for (EndBy end = END_BY_STOP; end <= END_BY_CLOSURE; end++)
    {
      run.end = end;
      run.rows_seen = 0;
      /* Else no evaluation before the end: nothing else checks step 4. */
      exp->eval_every = end == END_BY_EVALUATION ? 4 : 0;
      memcpy (model->w, w0, bytes);
      run.trainer = caml_trainer_new (exp, model, train, test);
      caml_trainer_set_progress_func (run.trainer, stop_after_blowup_cb, &run, 1);
      assert_true (caml_trainer_start (run.trainer, FALSE, NULL));
      /* Paused, nothing else would end the run: it fails by itself. */
      if (end == END_BY_PAUSE)
        wait_for_state (run.trainer, CAML_TRAINER_FAILED);
      assert_int_equal (caml_trainer_join (run.trainer), CAML_TRAINER_FAILED);

      GError *error = caml_trainer_get_error (run.trainer);
      assert_error (error, CAML_ERROR, CAML_ERROR_DIVERGED);
      assert_true (g_str_has_prefix (error->message, "step 4: after its update the loss is "));
      assert_message_ends (error->message, 3);
      g_clear_error (&error);
      assert_true (caml_trainer_get_divergence (run.trainer, &where));
      assert_int_equal (where.kind, CAML_DIVERGED_LOSS);
      assert_int_equal (where.step, 4);
      assert_int_equal (where.rolled_back_to, 3);
      assert_int_equal (current_step (run.trainer, NULL), 3);
      long n_losses;
      g_free (caml_trainer_copy_losses (run.trainer, &n_losses));
      assert_int_equal (n_losses, 3);
      assert_int_equal (run.rows_seen, 0);   /* no row of the diverged weights */
      assert_memory_equal (model->w, run.w_good, bytes);
      if (end == END_BY_CLOSURE)
        assert_memory_equal (run.w_seen, run.w_good, bytes);
      caml_trainer_free (run.trainer);
    }

  /* At a sound rate the same stop ends STOPPED after step 4. */
  run.lr = 0.1;
  run.end = END_BY_STOP;
  exp->eval_every = 0;
  memcpy (model->w, w0, bytes);
  run.trainer = caml_trainer_new (exp, model, train, test);
  caml_trainer_set_progress_func (run.trainer, stop_after_blowup_cb, &run, 1);
  assert_true (caml_trainer_start (run.trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (run.trainer), CAML_TRAINER_STOPPED);
  assert_null (caml_trainer_get_error (run.trainer));
  assert_int_equal (current_step (run.trainer, NULL), 4);
  assert_memory_not_equal (model->w, run.w_good, bytes);
  assert_true (all_finite (model->w, model->n_weights));
  caml_trainer_free (run.trainer);

  g_free (run.w_good);
  g_free (run.w_seen);
  g_free (w0);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

/* Targets the loss cannot take are refused before the run, naming the set,
 * the sample and the value: a class beyond the outputs (softmax reads
 * z[label]), a fraction as a class (labelled or regression data), a target
 * outside [0, 1] under sigmoid, a non-finite target under mse. */
static void
test_start_checks_targets (void **state)
{
  (void) state;
  CamlShape in = caml_shape_flat (2);
  CamlLayerSpec spec;
  dense_spec (&spec, 3, CAML_ACT_IDENTITY);
  CamlModel *model = caml_model_new (&in, &spec, 1, NULL, NULL);
  assert_non_null (model);
  CamlExperiment *exp = make_experiment (CAML_OPTIM_SGD, 0.1, 10, 0, 10, 1);
  CamlDataset *set = caml_dataset_new (4, &in, 1, 3);
  for (int i = 0; i < 8; i++)
    set->x[i] = 0.5f;
  const struct {
    CamlLossKind loss;
    int          n_classes;
    float        bad;
    const char  *message;
  } cases[] = {
    { CAML_LOSS_SOFTMAX_XENT, 3, 3.0f,
      "the test set's sample 2 has the target 3, which is not a class of the model's "
      "outputs (the model has 3 outputs, classes 0…2; loss softmax_cross_entropy)" },
    { CAML_LOSS_SOFTMAX_XENT, 3, 1.5f,
      "the test set's sample 2 has the target 1.5, which is not a class of the model's "
      "outputs (the model has 3 outputs, classes 0…2; loss softmax_cross_entropy)" },
    { CAML_LOSS_SOFTMAX_XENT, 0, 0.375f,
      "the test set's sample 2 has the target 0.375, which is not a class of the model's "
      "outputs (the model has 3 outputs, classes 0…2; loss softmax_cross_entropy)" },
  };
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      set->n_classes = cases[c].n_classes;
      for (int i = 0; i < 4; i++)
        set->y[i] = i == 2 ? cases[c].bad : (float) (i % 3);
      /* the training set is sound in the first two cases: the test set is checked */
      CamlDataset *good = caml_dataset_new (4, &in, 1, cases[c].n_classes);
      memcpy (good->x, set->x, 8 * sizeof (float));
      for (int i = 0; i < 4; i++)
        good->y[i] = (float) (i % 3);
      exp->loss = cases[c].loss;
      CamlTrainer *trainer = caml_trainer_new (exp, model, good, set);
      GError *error = NULL;
      assert_false (caml_trainer_start (trainer, FALSE, &error));
      assert_error (error, CAML_ERROR, CAML_ERROR_SHAPE);
      assert_string_equal (error->message, cases[c].message);
      g_clear_error (&error);
      caml_trainer_free (trainer);
      caml_dataset_free (good);
    }

  /* Whole-number targets of a set without classes (XOR's 0/1) are classes
   * to softmax. */
  set->n_classes = 0;
  for (int i = 0; i < 4; i++)
    set->y[i] = (float) (i % 3);
  exp->loss = CAML_LOSS_SOFTMAX_XENT;
  CamlTrainer *xor_like = caml_trainer_new (exp, model, set, set);
  assert_true (caml_trainer_start (xor_like, FALSE, NULL));
  assert_int_equal (caml_trainer_join (xor_like), CAML_TRAINER_FINISHED);
  caml_trainer_free (xor_like);

  /* Sigmoid and mse, on a one-output model. */
  CamlLayerSpec one;
  dense_spec (&one, 1, CAML_ACT_IDENTITY);
  CamlModel *single = caml_model_new (&in, &one, 1, NULL, NULL);
  set->n_classes = 2;
  for (int i = 0; i < 4; i++)
    set->y[i] = i == 1 ? 2.0f : 0.25f;   /* soft targets in [0, 1] are fine */
  exp->loss = CAML_LOSS_SIGMOID_XENT;
  CamlTrainer *trainer = caml_trainer_new (exp, single, set, set);
  GError *error = NULL;
  assert_false (caml_trainer_start (trainer, FALSE, &error));
  assert_string_equal (error->message, "the training set's sample 1 has the target 2, which "
                                       "is outside [0, 1] (the model has 1 output; loss "
                                       "sigmoid_cross_entropy)");
  g_clear_error (&error);
  caml_trainer_free (trainer);
  set->n_classes = 0;
  set->y[1] = NAN;
  exp->loss = CAML_LOSS_MSE;
  trainer = caml_trainer_new (exp, single, set, set);
  assert_false (caml_trainer_start (trainer, FALSE, &error));
  assert_string_equal (error->message, "the training set's sample 1 has the target nan, which "
                                       "is not finite (the model has 1 output; loss mse)");
  g_clear_error (&error);
  caml_trainer_free (trainer);
  set->y[1] = 0.25f;
  exp->loss = CAML_LOSS_SIGMOID_XENT;
  trainer = caml_trainer_new (exp, single, set, set);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  caml_trainer_free (trainer);

  caml_model_free (single);
  caml_model_free (model);
  caml_dataset_free (set);
  g_free (exp);
}

/* The batch buffers are reserved when the run starts, where a size that
 * cannot be allocated is an error (caml_model_reserve), not on the trainer
 * thread: a paused run has them before its first step. */
static void
test_start_reserves_batch (void **state)
{
  (void) state;
  CamlDataset *train, *test;
  caml_data_surface (81, 0.05, 1, &train, &test);
  CamlExperiment *exp = make_experiment (CAML_OPTIM_SGD, 0.1, 10, 32, 10, 1);
  CamlModel *model = make_mlp (5, 3);
  assert_true (model->capacity < 32);
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, TRUE, NULL));
  /* the larger of a batch and an evaluation chunk of the test set */
  assert_int_equal (model->capacity, MIN (1024, test->n));
  caml_trainer_stop (trainer);
  caml_trainer_join (trainer);
  caml_trainer_free (trainer);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

/* The optimizer's state and the trainer's own buffers are allocated when
 * the run starts, where a size no memory holds is an error, not an abort.
 * No model whose weights fit lacks room for its optimizer on every machine
 * (the state is as large as the weights and their gradients), so this one
 * claims 2^46 parameters: 512 TB of state, beyond a 47-bit address space,
 * refused even where the kernel overcommits without limit, before anything
 * reads the weights. */
static void
test_start_reports_allocation (void **state)
{
  (void) state;
  /* No limit from the machine's memory: what is tested is the allocation
   * failing (caml_memory_limit is tested in test-layers). */
  caml_set_memory_limit (SIZE_MAX);
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAM, 0.05, 10, 0, 0, 1);
  CamlModel *model = make_mlp (4, 1);
  size_t n_weights = model->n_weights, claimed = (size_t) 1 << 46;
  GError *error = NULL;
  CamlTrainerState st;

  caml_data_xor (&train, &test);
  model->n_weights = claimed;
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  assert_false (caml_trainer_start (trainer, FALSE, &error));
  g_autofree char *need = g_format_size ((guint64) claimed * 5 * sizeof (float));
  g_autofree char *expected = g_strdup_printf (
    "the optimizer's state needs %s (adam keeps 5 values for each of %zu parameters: its "
    "state, and what undoes its latest update), which cannot be allocated", need, claimed);
  assert_error (error, CAML_ERROR, CAML_ERROR_INVALID);
  assert_string_equal (error->message, expected);
  g_clear_error (&error);
  assert_int_equal (current_step (trainer, &st), 0);
  assert_int_equal (st, CAML_TRAINER_IDLE);

  /* Nothing changed: with the model as it is, the same trainer runs. */
  model->n_weights = n_weights;
  assert_true (caml_trainer_start (trainer, FALSE, &error));
  assert_null (error);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  assert_int_equal (current_step (trainer, NULL), 10);
  caml_trainer_free (trainer);

  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
  caml_set_memory_limit (0);
}

/* A run whose whole need — the model's weights, gradients and buffers, the
 * optimizer's state with the copy of the weights, the batch — is more than the
 * memory there is is refused at the start, naming each part, and nothing
 * is allocated or changed: within the limit the same trainer runs. */
static void
test_start_checks_memory (void **state)
{
  (void) state;
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAM, 0.05, 10, 0, 0, 1);
  CamlModel *model = make_mlp (4, 1);
  GError *error = NULL;
  CamlTrainerState st;

  caml_data_xor (&train, &test);
  /* The buffers the trainer reserves (a batch of the whole set at most). */
  assert_true (caml_model_reserve (model, 1024, &error));
  size_t nw = model->n_weights, weights = 2 * nw * sizeof (float);
  size_t state_bytes = 5 * nw * sizeof (float);   /* Adam: m, v, their copy, the weights' */
  size_t batch = (size_t) train->n * (2 + 1 + 1) * sizeof (float);   /* x, y, dloss */
  size_t total = weights + model->buffer_bytes + state_bytes + batch;
  caml_set_memory_limit (total - 1);

  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  assert_false (caml_trainer_start (trainer, FALSE, &error));
  g_autofree char *all = g_format_size (total), *w = g_format_size (weights);
  g_autofree char *buffers = g_format_size (model->buffer_bytes);
  g_autofree char *opt = g_format_size (state_bytes);
  g_autofree char *b = g_format_size (batch), *limit = g_format_size (total - 1);
  g_autofree char *expected = g_strdup_printf (
    "the run needs %s in all (the weights and their gradients %s, the layers' buffers for "
    "a batch %s, the optimizer's state with the copy kept to roll back a divergence %s, "
    "the batch %s), more than the memory limit (%s)", all, w, buffers, opt, b, limit);
  assert_error (error, CAML_ERROR, CAML_ERROR_INVALID);
  assert_string_equal (error->message, expected);
  g_clear_error (&error);
  assert_int_equal (current_step (trainer, &st), 0);
  assert_int_equal (st, CAML_TRAINER_IDLE);

  caml_set_memory_limit (total);
  assert_true (caml_trainer_start (trainer, FALSE, &error));
  assert_null (error);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  caml_trainer_free (trainer);
  caml_set_memory_limit (0);

  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

/* Each kind of divergence, with the exact message. */
static void
test_divergence_kinds (void **state)
{
  CamlDataset *train, *test, *bad;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_SGD, 0.1, 1000, 0, 100, 1);
  CamlModel *model = make_mlp (5, 3);
  size_t bytes = model->n_weights * sizeof (float);
  float *w0 = g_memdup2 (model->w, bytes);
  CamlDivergence where;
  char *message;
  long done;

  caml_data_surface (81, 0.01, 1, &train, &test);

  /* NaN in the data: the data is named, not a layer; nothing to undo. */
  bad = caml_dataset_new (train->n, &train->x_shape, train->y_width, 0);
  memcpy (bad->x, train->x, (size_t) train->n * 2 * sizeof (float));
  memcpy (bad->y, train->y, (size_t) train->n * sizeof (float));
  bad->x[3] = NAN;   /* sample 1, second input */
  message = run_to_failure (exp, model, bad, test, &done, &where);
  assert_string_equal (message, "step 1: the training set holds a non-finite input "
                                "(sample 1); weights rolled back to step 0");
  assert_int_equal (where.kind, CAML_DIVERGED_DATA);
  assert_int_equal (where.layer, -1);
  assert_int_equal (done, 0);
  assert_memory_equal (model->w, w0, bytes);
  g_free (message);

  /* Finite loss and gradients, but the update overflows: the weights are
   * put back. Backward order: the output layer is named first. */
  memcpy (bad->x, train->x, (size_t) train->n * 2 * sizeof (float));
  for (int i = 0; i < bad->n; i++)
    bad->y[i] = 1e6f;
  exp->optimizer.lr = 1e38;
  message = run_to_failure (exp, model, bad, test, &done, &where);
  assert_int_equal (where.kind, CAML_DIVERGED_UPDATE);
  assert_int_equal (where.layer, 1);
  char *expected = g_strdup_printf ("step 1: update of layer 1 (dense) parameter %s is not "
                                    "finite; weights rolled back to step 0", where.param);
  assert_string_equal (message, expected);
  g_free (expected);
  assert_int_equal (done, 0);
  assert_memory_equal (model->w, w0, bytes);
  g_free (message);
  caml_dataset_free (bad);

  /* A finite loss whose gradient overflows: one linear layer with tiny
   * weights on huge inputs (loss ≈ 1e30, dW ≈ 2e40). */
  CamlLayerSpec spec;
  CamlShape input = caml_shape_flat (2);
  dense_spec (&spec, 1, CAML_ACT_IDENTITY);
  CamlModel *linear = caml_model_new (&input, &spec, 1, NULL, NULL);
  assert_non_null (linear);
  CamlParam *w = &linear->layers[0]->params[0];
  assert_string_equal (w->name, "W");
  for (size_t k = 0; k < linear->n_weights; k++)
    linear->w[k] = 0.0f;
  for (size_t k = 0; k < w->count; k++)
    w->w[k] = 1e-10f;
  float *lw0 = g_memdup2 (linear->w, linear->n_weights * sizeof (float));
  bad = caml_dataset_new (4, &input, 1, 0);
  for (int i = 0; i < 8; i++)
    bad->x[i] = 1e25f;
  for (int i = 0; i < 4; i++)
    bad->y[i] = 0.0f;
  exp->optimizer.lr = 0.1;
  message = run_to_failure (exp, linear, bad, bad, &done, &where);
  assert_string_equal (message, "step 1: gradient of layer 0 (dense) parameter W is not "
                                "finite; weights rolled back to step 0");
  assert_int_equal (where.kind, CAML_DIVERGED_GRADIENT);
  assert_int_equal (where.layer, 0);
  assert_string_equal (where.param, "W");
  assert_memory_equal (linear->w, lw0, linear->n_weights * sizeof (float));
  g_free (message);
  g_free (lw0);
  caml_dataset_free (bad);
  caml_model_free (linear);

  /* A trainer stopped after its failure stays failed. */
  bad = caml_dataset_new (train->n, &train->x_shape, train->y_width, 0);
  memcpy (bad->x, train->x, (size_t) train->n * 2 * sizeof (float));
  memcpy (bad->y, train->y, (size_t) train->n * sizeof (float));
  bad->x[0] = NAN;
  CamlTrainer *trainer = caml_trainer_new (exp, model, bad, test);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FAILED);
  GError *error = caml_trainer_get_error (trainer);
  assert_string_equal (error->message, "step 1: the training set holds a non-finite input "
                                       "(sample 0); weights rolled back to step 0");
  g_clear_error (&error);
  caml_trainer_stop (trainer);
  assert_false (caml_trainer_start (trainer, FALSE, &error));
  assert_error (error, CAML_ERROR, CAML_ERROR_INVALID);
  g_clear_error (&error);
  caml_trainer_free (trainer);
  caml_dataset_free (bad);

  g_free (w0);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

static void
test_set_lr_live (void **state)
{
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_SGD, 0.1, 1000000, 0, 0, 1);
  CamlModel *model = make_mlp (4, 2);
  size_t nw = model->n_weights, bytes = nw * sizeof (float);
  float *before = g_new (float, nw), *after = g_new (float, nw);
  CamlTrainer *trainer;
  long s;

  exp->optimizer.momentum = 0.9;
  caml_data_xor (&train, &test);
  trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, TRUE, NULL));
  for (int i = 0; i < 5; i++)  /* build up some momentum */
    caml_trainer_step (trainer);
  wait_for_step (trainer, 5);

  /* lr 0: three more steps leave the weights (momentum included) alone. */
  caml_trainer_set_lr (trainer, 0.0);
  s = current_step (trainer, NULL);
  caml_trainer_with_model (trainer, copy_weights_cb, before);
  for (int i = 0; i < 3; i++)
    caml_trainer_step (trainer);
  wait_for_step (trainer, s + 3);
  caml_trainer_with_model (trainer, copy_weights_cb, after);
  assert_memory_equal (before, after, bytes);

  /* Back to 0.1: they move again. */
  caml_trainer_set_lr (trainer, 0.1);
  caml_trainer_step (trainer);
  wait_for_step (trainer, s + 4);
  caml_trainer_with_model (trainer, copy_weights_cb, after);
  assert_memory_not_equal (before, after, bytes);

  /* em_steps is accepted live (plain layers are always updated). */
  caml_trainer_set_em_steps (trainer, 5);
  caml_trainer_step (trainer);
  wait_for_step (trainer, s + 5);

  /* While running: lr 0 holds the weights, a new rate moves them. */
  caml_trainer_set_lr (trainer, 0.0);
  caml_trainer_with_model (trainer, copy_weights_cb, before);
  caml_trainer_resume (trainer);
  wait_for_step (trainer, s + 105);
  caml_trainer_with_model (trainer, copy_weights_cb, after);
  assert_memory_equal (before, after, bytes);
  caml_trainer_set_lr (trainer, 0.01);
  s = current_step (trainer, NULL);
  wait_for_step (trainer, s + 10);
  caml_trainer_with_model (trainer, copy_weights_cb, after);
  assert_memory_not_equal (before, after, bytes);

  caml_trainer_free (trainer);
  g_free (before);
  g_free (after);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

typedef struct {
  CamlTrainer *trainer;
  GArray      *steps;   /* long */
  GArray      *states;  /* CamlTrainerState */
  int          rows_seen;
  gboolean     snapshot_ok;
  float       *weights;
} ProgressLog;

static void
progress_cb (const CamlProgress *progress, gpointer user_data)
{
  ProgressLog *log = user_data;
  CamlProgress again;

  g_array_append_val (log->steps, progress->step);
  g_array_append_val (log->states, progress->state);
  log->rows_seen = progress->n_rows;
  /* The getters and with_model work from inside the callback. */
  caml_trainer_get_progress (log->trainer, &again);
  if (again.step != progress->step)
    log->snapshot_ok = FALSE;
  caml_trainer_with_model (log->trainer, copy_weights_cb, log->weights);
}

static void
test_progress_callback (void **state)
{
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAM, 0.01, 200, 2, 50, 1);
  CamlModel *model = make_mlp (3, 2);
  ProgressLog log = { 0 };
  long *steps;
  CamlTrainerState *states;
  guint n;

  caml_data_xor (&train, &test);
  log.trainer = caml_trainer_new (exp, model, train, test);
  log.steps = g_array_new (FALSE, FALSE, sizeof (long));
  log.states = g_array_new (FALSE, FALSE, sizeof (CamlTrainerState));
  log.snapshot_ok = TRUE;
  log.weights = g_new (float, model->n_weights);
  caml_trainer_set_progress_func (log.trainer, progress_cb, &log, 10);
  assert_true (caml_trainer_start (log.trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (log.trainer), CAML_TRAINER_FINISHED);

  /* Every 10 steps (evaluations at 50, 100, … fall on the same steps), then
   * once more when the run ends. */
  n = log.steps->len;
  steps = (long *) log.steps->data;
  states = (CamlTrainerState *) log.states->data;
  assert_int_equal (n, 21);
  for (guint i = 0; i + 1 < n; i++)
    {
      assert_int_equal (steps[i], 10 * (long) (i + 1));
      assert_int_equal (states[i], CAML_TRAINER_RUNNING);
    }
  assert_int_equal (steps[n - 1], 200);
  assert_int_equal (states[n - 1], CAML_TRAINER_FINISHED);
  assert_int_equal (log.rows_seen, 4);
  assert_true (log.snapshot_ok);
  assert_memory_equal (log.weights, model->w, model->n_weights * sizeof (float));

  caml_trainer_free (log.trainer);

  /* every = 0: only after evaluations and at the end. */
  g_array_set_size (log.steps, 0);
  g_array_set_size (log.states, 0);
  exp->eval_every = 70;
  log.trainer = caml_trainer_new (exp, model, train, test);
  caml_trainer_set_progress_func (log.trainer, progress_cb, &log, 0);
  assert_true (caml_trainer_start (log.trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (log.trainer), CAML_TRAINER_FINISHED);
  steps = (long *) log.steps->data;
  assert_int_equal (log.steps->len, 4);
  assert_int_equal (steps[0], 70);
  assert_int_equal (steps[1], 140);
  assert_int_equal (steps[2], 200);
  assert_int_equal (steps[3], 200);
  assert_int_equal (log.rows_seen, 3);
  caml_trainer_free (log.trainer);

  g_array_unref (log.steps);
  g_array_unref (log.states);
  g_free (log.weights);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

static void
test_with_model_while_running (void **state)
{
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_SGD, 0.01, 10000000, 0, 1000, 1);
  CamlModel *model = make_mlp (4, 2);
  float *w = g_new (float, model->n_weights);
  CamlTrainer *trainer;

  caml_data_xor (&train, &test);
  trainer = caml_trainer_new (exp, model, train, test);
  caml_trainer_with_model (trainer, copy_weights_cb, w);  /* not started */
  assert_memory_equal (w, model->w, model->n_weights * sizeof (float));
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  for (int i = 0; i < 50; i++)
    {
      long s0 = current_step (trainer, NULL), s1;
      caml_trainer_with_model (trainer, copy_weights_cb, w);
      s1 = current_step (trainer, NULL);
      assert_true (all_finite (w, model->n_weights));
      assert_true (s1 >= s0);
    }
  caml_trainer_stop (trainer);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_STOPPED);
  caml_trainer_with_model (trainer, copy_weights_cb, w);  /* ended */
  assert_memory_equal (w, model->w, model->n_weights * sizeof (float));

  caml_trainer_free (trainer);
  g_free (w);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

static void
test_start_checks_shapes (void **state)
{
  CamlDataset *train, *test, *wide;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_SGD, 0.1, 10, 0, 0, 1);
  CamlModel *model = make_mlp (4, 2);
  CamlShape three = caml_shape_flat (3);
  CamlTrainer *trainer;
  GError *error = NULL;

  caml_data_xor (&train, &test);
  wide = caml_dataset_new (4, &three, 1, 0);
  trainer = caml_trainer_new (exp, model, wide, test);
  assert_false (caml_trainer_start (trainer, FALSE, &error));
  assert_error (error, CAML_ERROR, CAML_ERROR_SHAPE);
  assert_non_null (strstr (error->message, "(3)"));
  assert_non_null (strstr (error->message, "(2)"));
  g_clear_error (&error);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_IDLE);
  caml_trainer_free (trainer);

  /* Zero steps: finished at once, with one evaluation row. */
  exp->steps = 0;
  trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  {
    int n_rows;
    CamlEvalRow *rows = caml_trainer_copy_rows (trainer, &n_rows);
    assert_int_equal (n_rows, 1);
    assert_int_equal (rows[0].step, 0);
    assert_true (isfinite (rows[0].train_loss));
    g_free (rows);
  }
  caml_trainer_free (trainer);

  caml_dataset_free (wide);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
}

/* caml_evaluate on a parameter-free model (an identity activation) so the
 * answers are known: accuracy by argmax over chunks larger than 1024. */
static void
test_evaluate (void **state)
{
  const int n = 2500;
  CamlShape two = caml_shape_flat (2);
  CamlLayerSpec spec;
  CamlModel *model;
  CamlDataset *set;
  GError *error = NULL;
  GRand *rng;
  double loss, metric, want_mse = 0.0;
  int correct = 0;

  spec.ops = caml_layer_lookup ("activation");
  assert_non_null (spec.ops);
  caml_layer_ops_default_options (spec.ops, spec.opt);
  set_option (&spec, "function", CAML_ACT_IDENTITY);
  rng = g_rand_new_with_seed (1);
  model = caml_model_new (&two, &spec, 1, rng, &error);
  g_rand_free (rng);
  assert_null (error);
  assert_non_null (model);

  /* Classification: the logits are the inputs; every third label is wrong. */
  set = caml_dataset_new (n, &two, 1, 2);
  for (int i = 0; i < n; i++)
    {
      int label = i % 2;
      set->x[2 * i + label] = 1.0f;
      set->x[2 * i + 1 - label] = -1.0f;
      set->y[i] = (float) (i % 3 == 0 ? 1 - label : label);
      correct += i % 3 != 0;
    }
  caml_evaluate (model, CAML_LOSS_SOFTMAX_XENT, set, &loss, &metric);
  assert_near (metric, (double) correct / n, 1e-12);
  assert_true (isfinite (loss) && loss > 0.0);
  caml_dataset_free (set);

  /* Regression: MSE over samples and outputs. */
  set = caml_dataset_new (n, &two, 2, 0);
  for (int i = 0; i < 2 * n; i++)
    {
      set->x[i] = (float) (i % 7) * 0.25f;
      set->y[i] = (float) (i % 5) * 0.5f;
      want_mse += ((double) set->x[i] - set->y[i]) * ((double) set->x[i] - set->y[i]);
    }
  want_mse /= 2.0 * n;
  caml_evaluate (model, CAML_LOSS_MSE, set, &loss, &metric);
  assert_near (metric, want_mse, 1e-6);
  assert_near (loss, want_mse, 1e-4);

  /* Under sigmoid cross-entropy the outputs are logits: the MSE is of their
   * sigmoid, the predicted probabilities, against targets in [0, 1]. */
  double want_prob_mse = 0.0, want_xent = 0.0;
  for (int i = 0; i < 2 * n; i++)
    {
      set->y[i] = (float) (i % 5) * 0.25f;
      double z = set->x[i], q = 1.0 / (1.0 + exp (-z)), y = set->y[i];
      want_prob_mse += (q - y) * (q - y);
      want_xent += -(y * log (q) + (1 - y) * log (1 - q));
    }
  want_prob_mse /= 2.0 * n;
  want_xent /= 2.0 * n;
  caml_evaluate (model, CAML_LOSS_SIGMOID_XENT, set, &loss, &metric);
  assert_near (metric, want_prob_mse, 1e-6);
  assert_near (loss, want_xent, 1e-4);
  caml_dataset_free (set);

  caml_model_free (model);
}

/* Text data: the valid tokens of every batch are counted (each sample's
 * length, at most T), in the progress and in each evaluation row. */
static void
test_token_counts (void **state)
{
  (void) state;
  for (int max_tokens = 0; max_tokens <= 3; max_tokens += 3)
    {
      CamlDataset *train, *test;
      caml_data_rnn_sanity (&train, &test);   /* 3 and 4 tokens */
      if (max_tokens > 0)
        caml_text_datasets_finish (train, test, max_tokens);
      gint64 per_epoch = max_tokens > 0 ? 3 + 3 : 3 + 4;

      CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAGRAD, 0.1, 10, 1, 4, 5);
      exp->loss = CAML_LOSS_SIGMOID_XENT;
      CamlLayerSpec specs[2];
      specs[0].ops = caml_layer_lookup ("average");
      caml_layer_ops_default_options (specs[0].ops, specs[0].opt);
      dense_spec (&specs[1], 1, CAML_ACT_IDENTITY);
      GRand *rng = g_rand_new_with_seed (2);
      CamlModel *model = caml_model_new (&train->x_shape, specs, 2, rng, NULL);
      g_rand_free (rng);
      assert_non_null (model);

      CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
      assert_true (caml_trainer_start (trainer, FALSE, NULL));
      assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
      CamlProgress p;
      caml_trainer_get_progress (trainer, &p);
      /* Batches of one: every two steps are one epoch, both samples. */
      assert_int_equal (p.tokens, 5 * per_epoch);
      assert_true (p.tokens_per_second > 0.0);
      int n_rows = 0;
      CamlEvalRow *rows = caml_trainer_copy_rows (trainer, &n_rows);
      assert_int_equal (n_rows, 3);
      assert_int_equal (rows[0].tokens, 2 * per_epoch);   /* step 4 */
      assert_int_equal (rows[1].tokens, 4 * per_epoch);   /* step 8 */
      assert_int_equal (rows[2].tokens, 5 * per_epoch);   /* step 10 */
      g_free (rows);
      caml_trainer_free (trainer);
      caml_model_free (model);
      caml_dataset_free (train);
      caml_dataset_free (test);
      g_free (exp);
    }
}

static void
record_nice_cb (const CamlProgress *progress, gpointer user_data)
{
#ifdef __linux__
  g_atomic_int_set ((gint *) user_data, getpriority (PRIO_PROCESS, (id_t) gettid ()));
#endif
}

/* After caml_set_background_priority a trainer's thread runs at nice 10
 * (Linux); before it, at the process's own priority. Last in the file:
 * the helper thread cannot be raised again. */
static void
test_background_priority (void **state)
{
#ifndef __linux__
  skip ();
#else
  CamlDataset *train, *test;
  CamlExperiment *exp = make_experiment (CAML_OPTIM_SGD, 0.1, 5, 2, 0, 5);
  CamlModel *model = make_mlp (4, 6);
  int own = getpriority (PRIO_PROCESS, 0);
  caml_data_xor (&train, &test);
  for (int background = 0; background <= 1; background++)
    {
      gint nice = -100;
      if (background)
        caml_set_background_priority ();
      assert_int_equal (caml_get_background_priority (), background);
      CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
      caml_trainer_set_progress_func (trainer, record_nice_cb, &nice, 1);
      assert_true (caml_trainer_start (trainer, FALSE, NULL));
      assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
      caml_trainer_free (trainer);
      assert_int_equal (g_atomic_int_get (&nice), background ? MAX (own, 10) : own);
    }
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (exp);
#endif
}

/* --------------------------------------------------------- weight average */

/* CA-BSFE on the {I, am, happy} / {You, are, very, angry} pair, one sample a
 * step: the two samples share no token, so every step leaves some rows of
 * the word tables alone and the lazy average has rows to catch up. */
static CamlModel *
make_bsfe_model (const CamlDataset *train)
{
  CamlLayerSpec specs[2];
  specs[0].ops = caml_layer_lookup ("ca_bsfe");
  caml_layer_ops_default_options (specs[0].ops, specs[0].opt);
  set_option (&specs[0], "dim", 3);
  set_option (&specs[0], "gate_dim", 2);
  dense_spec (&specs[1], 1, CAML_ACT_IDENTITY);
  GRand *rng = g_rand_new_with_seed (4);
  CamlModel *model = caml_model_new (&train->x_shape, specs, 2, rng, NULL);
  g_rand_free (rng);
  assert_non_null (model);
  model->sparse_grads = TRUE;
  return model;
}

/* The average against its definition, e_t = d_t e_{t−1} + (1 − d_t) w_t with
 * d_t = min (d, (1 + t) / (10 + t)), kept in double beside the training: for
 * a sparse optimizer (Adagrad: rows caught up lazily) and a dense one (Adam),
 * with em_steps freezing groups now and then. */
static void
test_average_matches_definition (void **state)
{
  (void) state;
  const double decay = 0.9;   /* the ramp ends at step 80 */
  for (int k = 0; k < 2; k++)
    {
      CamlOptimizerKind kind = k == 0 ? CAML_OPTIM_ADAGRAD : CAML_OPTIM_ADAM;
      CamlDataset *train, *test;
      caml_data_rnn_sanity (&train, &test);
      CamlModel *model = make_bsfe_model (train);
      CamlOptimizerConfig config;
      caml_optimizer_config_defaults (&config, kind);
      config.lr = 0.1;
      config.em_steps = 3;
      CamlOptimizer *opt = caml_optimizer_new (&config, model->n_weights);
      CamlAverage *avg = caml_average_new (model, decay, caml_optimizer_is_sparse (opt));
      size_t n = model->n_weights;
      double *ref = g_new (double, n);
      float *raw = g_new (float, n);
      for (size_t i = 0; i < n; i++)
        ref[i] = model->w[i];
      size_t x_size = caml_shape_size (&train->x_shape);
      float *x = g_new (float, x_size), y[1], dpred[1];

      for (long step = 0; step < 120; step++)
        {
          int idx = (int) (step % 2);
          caml_dataset_gather (train, &idx, 1, x, y);
          caml_model_zero_grad (model);
          const float *pred = caml_model_forward (model, x, 1);
          caml_loss_compute (CAML_LOSS_SIGMOID_XENT, dpred, pred, y, 1, 1);
          caml_model_backward (model, x, dpred, 1);
          caml_average_prepare (avg, model, step);
          caml_optimizer_step (opt, model, step);
          caml_average_update (avg, model, step);

          long t = step + 1;
          double d = MIN (decay, (1.0 + t) / (10.0 + t));
          assert_near (caml_average_decay_at (avg, t), d, 1e-15);
          for (size_t i = 0; i < n; i++)
            ref[i] = d * ref[i] + (1.0 - d) * model->w[i];

          if (t == 7 || t == 80 || t == 81 || t == 120)
            {
              memcpy (raw, model->w, n * sizeof *raw);
              caml_average_swap (avg, model);
              for (size_t i = 0; i < n; i++)
                assert_near (model->w[i], ref[i], 1e-5 * (1.0 + fabs (ref[i])));
              caml_average_swap (avg, model);
              assert_memory_equal (model->w, raw, n * sizeof *raw);
            }
        }
      caml_average_install (avg, model);
      for (size_t i = 0; i < n; i++)
        assert_near (model->w[i], ref[i], 1e-5 * (1.0 + fabs (ref[i])));

      g_free (x);
      g_free (raw);
      g_free (ref);
      caml_average_free (avg);
      caml_optimizer_free (opt);
      caml_model_free (model);
      caml_dataset_free (train);
      caml_dataset_free (test);
    }
}

/* The ramp of the average's decay ends at the first t where
 * (1 + t) / (10 + t) ≥ decay, for every decay in (0, 1): for the decays in
 * use it is the t a scan from 1 finds, and a decay within 2^-53 of 1 (whose
 * ramp end, stepped to one at a time past 2^53, was never found: the
 * trainer hung at its first step) gets the last t the bisection looks at.
 * caml_average_new runs on a thread of its own, so that a hang fails the
 * test at once rather than at meson's timeout. */
typedef struct {
  GMutex       lock;
  GCond        cond;
  const CamlModel *model;
  double       decay;
  CamlAverage *avg;
  gboolean     done;
} AverageNew;

static gpointer
average_new_thread (gpointer data)
{
  AverageNew *job = data;
  CamlAverage *avg = caml_average_new (job->model, job->decay, FALSE);
  g_mutex_lock (&job->lock);
  job->avg = avg;
  job->done = TRUE;
  g_cond_signal (&job->cond);
  g_mutex_unlock (&job->lock);
  return NULL;
}

static double
ramp_ratio (long t)
{
  return (1.0 + t) / (10.0 + t);
}

static void
test_average_ramp_end (void **state)
{
  (void) state;
  /* Up to the largest decay an experiment may have, and past it. */
  const double near_one[] = { 0.99999999, 0.999999991, 0.9999999910000001, 0.9999999999,
                              1.0 - 1e-13, 1.0 - 1e-15, 0.9999999999999999 };

  /* caml_average_new returns (on a thread of its own, first: a hang fails
   * here rather than at meson's timeout), and its decays follow the end. */
  CamlModel *model = make_mlp (4, 1);
  for (size_t i = 0; i < G_N_ELEMENTS (near_one); i++)
    {
      AverageNew job = { .model = model, .decay = near_one[i] };
      g_mutex_init (&job.lock);
      g_cond_init (&job.cond);
      GThread *thread = g_thread_new ("average-new", average_new_thread, &job);
      gint64 deadline = g_get_monotonic_time () + 20 * G_TIME_SPAN_SECOND;
      g_mutex_lock (&job.lock);
      while (!job.done)
        if (!g_cond_wait_until (&job.cond, &job.lock, deadline))
          break;
      gboolean done = job.done;
      g_mutex_unlock (&job.lock);
      if (!done)
        {
          print_error ("caml_average_new (decay %.17g) did not return in 20 s\n", near_one[i]);
          fail ();    /* the thread spins on: the process ends with the failure */
        }
      g_thread_join (thread);
      g_mutex_clear (&job.lock);
      g_cond_clear (&job.cond);
      assert_non_null (job.avg);
      long end = caml_average_ramp_end (near_one[i]);
      assert_true (caml_average_decay_at (job.avg, end - 1) == ramp_ratio (end - 1));
      assert_true (caml_average_decay_at (job.avg, end) == near_one[i]);
      caml_average_free (job.avg);
    }
  caml_model_free (model);

  /* Their ends, as defined. */
  for (size_t i = 0; i < G_N_ELEMENTS (near_one); i++)
    {
      double d = near_one[i];
      long end = caml_average_ramp_end (d);
      assert_true (end >= 1 && end <= CAML_AVERAGE_RAMP_MAX);
      if (end < CAML_AVERAGE_RAMP_MAX)
        assert_true (ramp_ratio (end) >= d);
      else
        assert_true (ramp_ratio (end) < d);
      assert_true (ramp_ratio (end - 1) < d);
    }
  assert_true (caml_average_ramp_end (0.9999999910000001) <= 1000000000);
  assert_true (caml_average_ramp_end (0.9999999910000002) > 1000000000);

  /* The decays of the presets and tests, and others around them: where a
   * scan from 1 finds their end (as the loop before the bisection did). */
  const double in_use[] = { 0.05, 0.1, 0.5, 0.9, 0.95, 0.99, 0.998, 0.999, 0.9999,
                            0.123456789, 0.99951 };
  for (size_t i = 0; i < G_N_ELEMENTS (in_use); i++)
    {
      long scan = 1;
      while (ramp_ratio (scan) < in_use[i])
        scan++;
      assert_int_equal (caml_average_ramp_end (in_use[i]), scan);
    }
}

/* Trains exp->steps steps from w0 as one run and as a run of `first` steps
 * extended (caml_trainer_extend, paused, then resumed) to the same end: the
 * losses and the weights are the same bit for bit, and so are the
 * evaluations both made. */
static void
check_extension (CamlExperiment *exp, CamlModel *model, const float *w0,
                 const CamlDataset *train, const CamlDataset *test, int first)
{
  size_t bytes = model->n_weights * sizeof (float);
  float *w_ref = g_new (float, model->n_weights), *w_ext = g_new (float, model->n_weights);
  int total = exp->steps, n_ref_rows = 0, n_rows = 0;
  long n_ref = 0, n = 0;
  GError *error = NULL;
  CamlTrainerState state;

  memcpy (model->w, w0, bytes);
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  float *ref = caml_trainer_copy_losses (trainer, &n_ref);
  CamlEvalRow *ref_rows = caml_trainer_copy_rows (trainer, &n_ref_rows);
  memcpy (w_ref, model->w, bytes);
  caml_trainer_free (trainer);

  memcpy (model->w, w0, bytes);
  exp->steps = first;
  trainer = caml_trainer_new (exp, model, train, test);   /* copies the steps */
  exp->steps = total;
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);

  /* no steps added: refused, and the run stays as it was */
  assert_false (caml_trainer_extend (trainer, first, FALSE, &error));
  assert_error (error, CAML_ERROR, CAML_ERROR_INVALID);
  char *want = g_strdup_printf ("the run has done %d steps already: %d in all would add none",
                                first, first);
  assert_string_equal (error->message, want);
  g_free (want);
  g_clear_error (&error);
  assert_int_equal (current_step (trainer, &state), first);
  assert_int_equal (state, CAML_TRAINER_FINISHED);

  assert_true (caml_trainer_extend (trainer, total, TRUE, &error));
  assert_null (error);
  assert_int_equal (current_step (trainer, &state), first);
  assert_int_equal (state, CAML_TRAINER_PAUSED);
  caml_trainer_resume (trainer);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  CamlProgress p;
  caml_trainer_get_progress (trainer, &p);
  assert_int_equal (p.step, total);
  assert_int_equal (p.total_steps, total);

  float *ext = caml_trainer_copy_losses (trainer, &n);
  assert_int_equal (n, n_ref);
  assert_memory_equal (ext, ref, (size_t) n * sizeof (float));
  caml_trainer_with_model (trainer, copy_weights_cb, w_ext);
  assert_memory_equal (w_ext, w_ref, bytes);

  /* every evaluation of the single run, at the same step with the same
   * figures; the extended run has one more, at its old end */
  CamlEvalRow *rows = caml_trainer_copy_rows (trainer, &n_rows);
  int matched = 0;
  for (int i = 0; i < n_ref_rows; i++)
    for (int j = 0; j < n_rows; j++)
      if (rows[j].step == ref_rows[i].step)
        {
          assert_true (rows[j].test_loss == ref_rows[i].test_loss);
          assert_true (rows[j].test_metric == ref_rows[i].test_metric
                       || (isnan (rows[j].test_metric) && isnan (ref_rows[i].test_metric)));
          matched++;
        }
  assert_int_equal (matched, n_ref_rows);
  gboolean at_first = FALSE;
  for (int j = 0; j < n_rows; j++)
    at_first |= rows[j].step == first;
  assert_true (at_first);

  g_free (rows);
  g_free (ref_rows);
  g_free (ext);
  g_free (ref);
  g_free (w_ref);
  g_free (w_ext);
  caml_trainer_free (trainer);
}

/* caml_trainer_extend: a finished run goes on as the longer run would have
 * (Adam's moments on an MLP; Adagrad's sparse rows and the em_steps phase on
 * CA-BSFE); a stopped one goes on too; a paused or idle one simply ends
 * later; a failed one is refused. */
static void
test_extend (void **state)
{
  (void) state;
  CamlDataset *train, *test;
  GError *error = NULL;
  CamlTrainerState end;

  /* Adam, minibatches of 8 in a shuffled order, an evaluation every 100 */
  CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAM, 0.01, 500, 8, 100, 7);
  caml_data_surface (81, 0.01, 1, &train, &test);
  CamlModel *model = make_mlp (5, 3);
  float *w0 = g_memdup2 (model->w, model->n_weights * sizeof (float));
  check_extension (exp, model, w0, train, test, 170);
  check_extension (exp, model, w0, train, test, 200);

  /* stopped part way: goes on from the step it stopped at */
  exp->steps = 1000000;
  memcpy (model->w, w0, model->n_weights * sizeof (float));
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  wait_for_step (trainer, 20);
  caml_trainer_stop (trainer);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_STOPPED);
  long stopped_at = current_step (trainer, NULL);
  assert_true (caml_trainer_extend (trainer, stopped_at + 30, FALSE, &error));
  assert_null (error);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  assert_int_equal (current_step (trainer, NULL), stopped_at + 30);
  caml_trainer_free (trainer);

  /* paused at its start, and never started: the end moves */
  exp->steps = 10;
  trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_extend (trainer, 15, FALSE, NULL));
  assert_true (caml_trainer_start (trainer, TRUE, NULL));
  assert_true (caml_trainer_extend (trainer, 40, FALSE, NULL));
  caml_trainer_resume (trainer);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  assert_int_equal (current_step (trainer, NULL), 40);
  caml_trainer_free (trainer);

  /* diverged: refused (started again, it goes on from its last good weights) */
  exp->optimizer.lr = 1e30;
  exp->optimizer.kind = CAML_OPTIM_SGD;
  trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FAILED);
  long failed_at = current_step (trainer, &end);
  assert_false (caml_trainer_extend (trainer, 1000, FALSE, &error));
  assert_error (error, CAML_ERROR, CAML_ERROR_INVALID);
  assert_non_null (strstr (error->message, "diverged"));
  g_clear_error (&error);
  assert_int_equal (current_step (trainer, &end), failed_at);
  assert_int_equal (end, CAML_TRAINER_FAILED);
  caml_trainer_free (trainer);

  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (w0);
  g_free (exp);

  /* Adagrad on CA-BSFE, one text a step, em_steps 3: the sparse rows'
   * accumulators and the phase of the block-coordinate schedule go on */
  caml_data_rnn_sanity (&train, &test);
  exp = make_experiment (CAML_OPTIM_ADAGRAD, 0.1, 60, 1, 7, 11);
  exp->loss = CAML_LOSS_SIGMOID_XENT;
  exp->optimizer.em_steps = 3;
  model = make_bsfe_model (train);
  w0 = g_memdup2 (model->w, model->n_weights * sizeof (float));
  check_extension (exp, model, w0, train, test, 22);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  g_free (w0);
  g_free (exp);
}

/* dense 6 tanh → dropout 0.3 → dense 1, initialised from init_seed (which
 * seeds the dropout mask too) */
static CamlModel *
make_dropout_mlp (guint32 init_seed)
{
  CamlLayerSpec specs[3];
  CamlShape input = caml_shape_flat (2);
  dense_spec (&specs[0], 6, CAML_ACT_TANH);
  specs[1].ops = caml_layer_lookup ("dropout");
  caml_layer_ops_default_options (specs[1].ops, specs[1].opt);
  set_option (&specs[1], "rate", 0.3);
  dense_spec (&specs[2], 1, CAML_ACT_IDENTITY);
  GRand *rng = g_rand_new_with_seed (init_seed);
  CamlModel *model = caml_model_new (&input, specs, 3, rng, NULL);
  g_rand_free (rng);
  assert_non_null (model);
  return model;
}

typedef CamlModel *(*ModelMaker) (const CamlDataset *train);

static CamlModel *
dropout_maker (const CamlDataset *train)
{
  (void) train;
  return make_dropout_mlp (9);
}

static CamlModel *
bsfe_maker (const CamlDataset *train)
{
  return make_bsfe_model (train);
}

/* A run of exp->steps against one of `first` steps whose state and weights
 * go into a new trainer and model (as another process would build them)
 * and on to exp->steps: the same losses, weights and evaluations, bit for
 * bit. */
static void
check_resume (CamlExperiment *exp, ModelMaker make, const CamlDataset *train,
              const CamlDataset *test, int first)
{
  int total = exp->steps, n_ref_rows = 0, n_rows = 0;
  long n_ref = 0, n = 0;
  GError *error = NULL;

  CamlModel *model = make (train);
  size_t bytes = model->n_weights * sizeof (float);
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  float *ref = caml_trainer_copy_losses (trainer, &n_ref);
  CamlEvalRow *ref_rows = caml_trainer_copy_rows (trainer, &n_ref_rows);
  float *w_ref = g_memdup2 (model->w, bytes);
  caml_trainer_free (trainer);
  caml_model_free (model);

  model = make (train);
  exp->steps = first;
  trainer = caml_trainer_new (exp, model, train, test);
  exp->steps = total;
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  GBytes *state = caml_trainer_state_to_bytes (trainer, &error);
  assert_null (error);
  assert_non_null (state);
  float *w_first = g_memdup2 (model->w, bytes);
  caml_trainer_free (trainer);
  caml_model_free (model);

  model = make (train);
  memcpy (model->w, w_first, bytes);
  trainer = caml_trainer_new (exp, model, train, test);
  gsize length;
  const guint8 *data = g_bytes_get_data (state, &length);
  assert_true (caml_trainer_state_load_data (trainer, data, length, "s.state", &error));
  assert_null (error);
  CamlProgress p;
  caml_trainer_get_progress (trainer, &p);
  assert_int_equal (p.step, first);
  assert_int_equal (p.state, CAML_TRAINER_IDLE);
  /* not started, it has the state it was given */
  GBytes *again = caml_trainer_state_to_bytes (trainer, &error);
  assert_null (error);
  assert_true (g_bytes_equal (again, state));
  g_bytes_unref (again);
  assert_true (caml_trainer_start (trainer, FALSE, &error));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);

  float *losses = caml_trainer_copy_losses (trainer, &n);
  assert_int_equal (n, n_ref);
  assert_memory_equal (losses, ref, (size_t) n * sizeof (float));
  assert_memory_equal (model->w, w_ref, bytes);
  /* every evaluation of the single run; the resumed one has one more, at
   * the end of its first part */
  CamlEvalRow *rows = caml_trainer_copy_rows (trainer, &n_rows);
  assert_int_equal (n_rows, n_ref_rows + (first % exp->eval_every != 0));
  for (int i = 0, j = 0; i < n_ref_rows; i++, j++)
    {
      if (rows[j].step == first && ref_rows[i].step != first)
        j++;
      assert_int_equal (rows[j].step, ref_rows[i].step);
      assert_true (rows[j].train_loss == ref_rows[i].train_loss || rows[j].step == first
                   || (j > 0 && rows[j - 1].step == first));
      assert_true (rows[j].test_loss == ref_rows[i].test_loss);
      assert_true (rows[j].tokens == ref_rows[i].tokens);
    }

  g_free (rows);
  g_free (losses);
  g_free (ref_rows);
  g_free (ref);
  g_free (w_ref);
  g_free (w_first);
  g_bytes_unref (state);
  caml_trainer_free (trainer);
  caml_model_free (model);
}

/* caml_trainer_state_to_bytes / _load_data: a run resumed in a new trainer
 * (and model) is the uninterrupted run — Adam through dropout (the masks
 * drawn again), SGD with momentum, Adagrad's sparse rows on CA-BSFE with
 * em_steps; Adam and Adagrad under weight decay too (the state file does
 * not hold it: the experiment does). */
static void
test_state_resume (void **state)
{
  (void) state;
  CamlDataset *train, *test;

  caml_data_surface (81, 0.01, 1, &train, &test);
  CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAM, 0.01, 300, 8, 100, 7);
  check_resume (exp, dropout_maker, train, test, 130);
  check_resume (exp, dropout_maker, train, test, 200);
  exp->optimizer.kind = CAML_OPTIM_SGD;
  exp->optimizer.momentum = 0.9;
  check_resume (exp, dropout_maker, train, test, 77);
  caml_optimizer_config_defaults (&exp->optimizer, CAML_OPTIM_ADAM);
  exp->optimizer.lr = 0.01;
  exp->optimizer.weight_decay = 0.05;
  check_resume (exp, dropout_maker, train, test, 130);
  g_free (exp);
  caml_dataset_free (train);
  caml_dataset_free (test);

  caml_data_rnn_sanity (&train, &test);
  exp = make_experiment (CAML_OPTIM_ADAGRAD, 0.1, 60, 1, 7, 11);
  exp->loss = CAML_LOSS_SIGMOID_XENT;
  exp->optimizer.em_steps = 3;
  check_resume (exp, bsfe_maker, train, test, 22);
  exp->optimizer.weight_decay = 0.05;
  check_resume (exp, bsfe_maker, train, test, 22);
  g_free (exp);
  caml_dataset_free (train);
  caml_dataset_free (test);
}

/* Weight decay does what it is for: the same MLP trained on the surface
 * with a large weight_decay ends with a much smaller weight norm than
 * without, for every optimizer, and so do the word tables of CA-BSFE
 * trained a text at a time under Adagrad (the trainer's sparse rows). */
static double
norm2 (const float *v, size_t n)
{
  double sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += (double) v[i] * v[i];
  return sqrt (sum);
}

static void
test_weight_decay_shrinks (void **state)
{
  (void) state;
  CamlDataset *train, *test;
  const double lrs[CAML_N_OPTIMS] = { 0.1, 0.1, 0.01 };

  caml_data_surface (41, 0.1, 2, &train, &test);
  for (int kind = 0; kind < CAML_N_OPTIMS; kind++)
    {
      CamlExperiment *exp = make_experiment ((CamlOptimizerKind) kind, lrs[kind], 400, 0, 0, 3);
      CamlModel *model = make_mlp (8, 5);
      size_t nw = model->n_weights;
      float *w0 = g_memdup2 (model->w, nw * sizeof (float));
      float *plain = g_new (float, nw), *decayed = g_new (float, nw);
      long n_losses;
      g_free (run_from (exp, model, w0, train, test, plain, &n_losses));
      exp->optimizer.weight_decay = 0.5;
      float *losses = run_from (exp, model, w0, train, test, decayed, &n_losses);
      assert_true (all_finite (losses, (size_t) n_losses));
      double without = norm2 (plain, nw), with = norm2 (decayed, nw);
      if (!(with < 0.5 * without))
        fail_msg ("%s: weight norm %g with weight_decay 0.5, %g without",
                  caml_optimizer_names[kind], with, without);
      g_free (losses);
      g_free (w0);
      g_free (plain);
      g_free (decayed);
      caml_model_free (model);
      g_free (exp);
    }
  caml_dataset_free (train);
  caml_dataset_free (test);

  caml_data_rnn_sanity (&train, &test);
  CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAGRAD, 0.1, 200, 1, 0, 11);
  exp->loss = CAML_LOSS_SIGMOID_XENT;
  CamlModel *model = make_bsfe_model (train);
  size_t nw = model->n_weights;
  float *w0 = g_memdup2 (model->w, nw * sizeof (float));
  float *plain = g_new (float, nw), *decayed = g_new (float, nw);
  long n_losses;
  g_free (run_from (exp, model, w0, train, test, plain, &n_losses));
  exp->optimizer.weight_decay = 0.5;
  g_free (run_from (exp, model, w0, train, test, decayed, &n_losses));
  int tables = 0;
  for (int j = 0; j < model->layers[0]->n_params; j++)
    {
      const CamlParam *p = &model->layers[0]->params[j];
      if (p->token_rows <= 0)
        continue;
      tables++;
      double without = norm2 (plain + p->offset, p->count);
      double with = norm2 (decayed + p->offset, p->count);
      if (!(with < 0.5 * without))
        fail_msg ("ca_bsfe %s: weight norm %g with weight_decay 0.5, %g without", p->name,
                  with, without);
    }
  assert_int_equal (tables, 2);
  g_free (w0);
  g_free (plain);
  g_free (decayed);
  caml_model_free (model);
  g_free (exp);
  caml_dataset_free (train);
  caml_dataset_free (test);
}

/* Raises the learning rate once, after `at` steps: the next update blows
 * the weights up. */
typedef struct {
  CamlTrainer *trainer;
  long         at;
  double       lr;
  gboolean     done;
} LrBump;

static void
lr_bump_cb (const CamlProgress *p, gpointer user_data)
{
  LrBump *bump = user_data;
  if (!bump->done && p->step == bump->at)
    {
      caml_trainer_set_lr (bump->trainer, bump->lr);
      bump->done = TRUE;
    }
}

/* A run that diverges is put back whole to the step it rolled back to: the
 * trainer restarted at exp's rate, and a new trainer resumed from the state
 * saved after the failure, both end bit for bit as a run that stopped at that
 * step and went on — the weights, the optimizer's state and update counts,
 * the batch order, dropout's masks, the tokens. (Without the optimizer's
 * state in the backup and the redrawn order, the restart drifts away.) */
static void
check_divergence_state (CamlExperiment *exp, ModelMaker make, const CamlDataset *train,
                        const CamlDataset *test, long bump_at, double bump_lr)
{
  int total = exp->steps;
  GError *error = NULL;
  CamlDivergence where;
  CamlProgress p;

  /* diverges just after bump_at */
  CamlModel *model = make (train);
  size_t bytes = model->n_weights * sizeof (float);
  float *w0 = g_memdup2 (model->w, bytes);
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  LrBump bump = { trainer, bump_at, bump_lr, FALSE };
  caml_trainer_set_progress_func (trainer, lr_bump_cb, &bump, 1);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FAILED);
  assert_true (caml_trainer_get_divergence (trainer, &where));
  long to = where.rolled_back_to;
  assert_true (to >= bump_at - 1 && to <= bump_at);
  caml_trainer_get_progress (trainer, &p);
  assert_int_equal (p.step, to);
  gint64 tokens_then = p.tokens;
  GBytes *state = caml_trainer_state_to_bytes (trainer, &error);
  assert_null (error);
  assert_non_null (state);
  float *w_to = g_memdup2 (model->w, bytes);

  /* started again at the sane rate */
  caml_trainer_set_progress_func (trainer, NULL, NULL, 0);
  caml_trainer_set_lr (trainer, exp->optimizer.lr);
  assert_true (caml_trainer_start (trainer, FALSE, &error));
  assert_null (error);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  long n_restarted = 0;
  float *restarted = caml_trainer_copy_losses (trainer, &n_restarted);
  float *w_restarted = g_memdup2 (model->w, bytes);
  caml_trainer_get_progress (trainer, &p);
  gint64 tokens_restarted = p.tokens;
  caml_trainer_free (trainer);
  caml_model_free (model);

  /* the reference: stopped at `to` (finished there), then extended */
  model = make (train);
  assert_memory_equal (model->w, w0, bytes);
  exp->steps = (int) to;
  trainer = caml_trainer_new (exp, model, train, test);
  exp->steps = total;
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  assert_memory_equal (model->w, w_to, bytes);
  caml_trainer_get_progress (trainer, &p);
  assert_int_equal (p.tokens, tokens_then);
  assert_true (caml_trainer_extend (trainer, total, FALSE, &error));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  long n_ref = 0;
  float *ref = caml_trainer_copy_losses (trainer, &n_ref);
  caml_trainer_get_progress (trainer, &p);
  assert_int_equal (p.tokens, tokens_restarted);
  assert_int_equal (n_restarted, total);
  assert_int_equal (n_ref, total);
  assert_memory_equal (restarted, ref, (size_t) total * sizeof (float));
  assert_memory_equal (w_restarted, model->w, bytes);
  caml_trainer_free (trainer);
  caml_model_free (model);

  /* resumed in a new trainer from the state saved after the failure */
  model = make (train);
  memcpy (model->w, w_to, bytes);
  trainer = caml_trainer_new (exp, model, train, test);
  gsize length;
  const guint8 *data = g_bytes_get_data (state, &length);
  assert_true (caml_trainer_state_load_data (trainer, data, length, "d.state", &error));
  assert_null (error);
  caml_trainer_get_progress (trainer, &p);
  assert_int_equal (p.step, to);
  assert_true (caml_trainer_start (trainer, FALSE, &error));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  long n_resumed = 0;
  float *resumed = caml_trainer_copy_losses (trainer, &n_resumed);
  assert_int_equal (n_resumed, total);
  assert_memory_equal (resumed, ref, (size_t) total * sizeof (float));
  assert_memory_equal (model->w, w_restarted, bytes);
  caml_trainer_free (trainer);
  caml_model_free (model);

  g_bytes_unref (state);
  g_free (resumed);
  g_free (ref);
  g_free (restarted);
  g_free (w_restarted);
  g_free (w_to);
  g_free (w0);
}

/* Adam through dropout on minibatches (the loss overflows: the update
 * before it is undone too), SGD with momentum, and Adagrad's sparse rows on
 * CA-BSFE with em_steps, with and without weight decay. */
static void
test_divergence_state (void **state)
{
  (void) state;
  CamlDataset *train, *test;

  caml_data_surface (81, 0.01, 1, &train, &test);
  CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAM, 0.01, 120, 8, 50, 7);
  check_divergence_state (exp, dropout_maker, train, test, 45, 1e30);
  exp->optimizer.kind = CAML_OPTIM_SGD;
  exp->optimizer.momentum = 0.9;
  check_divergence_state (exp, dropout_maker, train, test, 33, 1e30);
  g_free (exp);
  caml_dataset_free (train);
  caml_dataset_free (test);

  caml_data_rnn_sanity (&train, &test);
  exp = make_experiment (CAML_OPTIM_ADAGRAD, 0.1, 60, 1, 7, 11);
  exp->loss = CAML_LOSS_SIGMOID_XENT;
  exp->optimizer.em_steps = 3;
  check_divergence_state (exp, bsfe_maker, train, test, 22, 1e30);
  exp->optimizer.weight_decay = 0.05;   /* decayed steps are undone as exactly */
  check_divergence_state (exp, bsfe_maker, train, test, 22, 1e30);
  g_free (exp);
  caml_dataset_free (train);
  caml_dataset_free (test);
}

/* Loads `data` into a new trainer of exp over model: FALSE with *error set,
 * and then the trainer must be untouched (step 0, no losses). */
static gboolean
load_into_new (CamlExperiment *exp, CamlModel *model, const CamlDataset *train,
               const CamlDataset *test, const guint8 *data, gsize length, GError **error)
{
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  gboolean ok = caml_trainer_state_load_data (trainer, data, length, "s.state", error);
  if (!ok)
    {
      long n = -1;
      g_free (caml_trainer_copy_losses (trainer, &n));
      assert_int_equal (n, 0);
      assert_int_equal (current_step (trainer, NULL), 0);
    }
  caml_trainer_free (trainer);
  return ok;
}

static void
assert_message_has (GError **error, const char *part)
{
  assert_non_null (*error);
  if (strstr ((*error)->message, part) == NULL)
    fail_msg ("\"%s\" not in \"%s\"", part, (*error)->message);
  g_clear_error (error);
}

/* A progress function that copies the run's state once, after `at` steps
 * (and takes its bytes too), and then (bump_lr > 0) raises the learning
 * rate. */
typedef struct {
  CamlTrainer          *trainer;
  long                  at;
  double                bump_lr;
  CamlTrainerStateCopy *copy;
  GError               *error;
  GBytes               *bytes;
} Snapshot;

static void
snapshot_cb (const CamlProgress *p, gpointer user_data)
{
  Snapshot *snap = user_data;
  if (p->step == snap->at && snap->copy == NULL && snap->error == NULL)
    {
      snap->copy = caml_trainer_state_copy (snap->trainer, &snap->error);
      if (snap->copy != NULL)
        snap->bytes = caml_trainer_state_to_bytes (snap->trainer, &snap->error);
      if (snap->bump_lr > 0)
        caml_trainer_set_lr (snap->trainer, snap->bump_lr);
    }
  else if (snap->bump_lr > 0 && p->step == snap->at + 1 && snap->error == NULL)
    {
      /* the update at the raised rate is checked before the copy */
      CamlTrainerStateCopy *late = caml_trainer_state_copy (snap->trainer, &snap->error);
      caml_trainer_state_copy_free (late);
    }
}

/* caml_trainer_state_copy_over: a copy taken into an older one's memory
 * is the copy a new caml_trainer_state_copy takes (the same weights and
 * size; the bytes differ only in the seconds), restored and run on it ends
 * where the run did, bit for bit, and the blocks that need not grow (the
 * weights, the optimizer's state) are the older copy's own. */
typedef struct {
  CamlTrainer          *trainer;
  CamlTrainerStateCopy *older, *fresh;
  const float          *older_w;
  gboolean              over;
} CopyOver;

static void
copy_over_cb (const CamlProgress *p, gpointer user_data)
{
  CopyOver *c = user_data;
  size_t n;
  if (p->step == 20)
    {
      c->older = caml_trainer_state_copy (c->trainer, NULL);
      c->older_w = caml_trainer_state_copy_get_weights (c->older, &n);
    }
  else if (p->step == 55)
    {
      c->over = caml_trainer_state_copy_over (c->trainer, c->older, NULL);
      c->fresh = caml_trainer_state_copy (c->trainer, NULL);
    }
}

static void
test_state_copy_over (void **state)
{
  (void) state;
  CamlDataset *train, *test;
  caml_data_surface (81, 0.01, 1, &train, &test);
  /* no weight averaging: a run restored from a copy then ends as the run did */
  CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAM, 0.01, 60, 8, 10, 7);
  CamlModel *model = make_dropout_mlp (9);
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  CopyOver c = { trainer };
  caml_trainer_set_progress_func (trainer, copy_over_cb, &c, 1);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  assert_true (c.over);
  assert_non_null (c.fresh);
  assert_int_equal (caml_trainer_state_copy_get_step (c.older), 55);
  size_t n;
  assert_ptr_equal (caml_trainer_state_copy_get_weights (c.older, &n), c.older_w);
  size_t m;
  const float *w_older = caml_trainer_state_copy_get_weights (c.older, &n);
  const float *w_fresh = caml_trainer_state_copy_get_weights (c.fresh, &m);
  assert_int_equal (n, m);
  assert_memory_equal (w_older, w_fresh, n * sizeof (float));
  g_autoptr (GBytes) a = caml_trainer_state_copy_to_bytes (c.older, NULL);
  g_autoptr (GBytes) b = caml_trainer_state_copy_to_bytes (c.fresh, NULL);
  assert_non_null (a);
  assert_int_equal (g_bytes_get_size (a), g_bytes_get_size (b));

  CamlModel *again = make_dropout_mlp (9);
  CamlTrainer *resumed = caml_trainer_new (exp, again, train, test);
  assert_true (caml_trainer_state_restore (resumed, c.older, NULL));
  assert_true (caml_trainer_start (resumed, FALSE, NULL));
  assert_int_equal (caml_trainer_join (resumed), CAML_TRAINER_FINISHED);
  assert_memory_equal (again->w, model->w, model->n_weights * sizeof (float));
  caml_trainer_free (resumed);
  caml_model_free (again);
  caml_trainer_state_copy_free (c.older);
  caml_trainer_state_copy_free (c.fresh);
  caml_trainer_free (trainer);
  caml_model_free (model);
  caml_experiment_free (exp);
  caml_dataset_free (train);
  caml_dataset_free (test);
}

/* A state copied while the run goes on (from its progress function), put
 * into a new trainer and model with caml_trainer_state_restore and run on,
 * is the run stopped at that step and extended — bit for bit, through Adam,
 * dropout and weight averaging (the copy holds the averaged weights, which
 * a stopped run installs); so are its bytes, loaded; and the run that took
 * them goes on as if it had not. A copy whose latest update diverged is refused
 * and ends the run FAILED, rolled back; restoring into a trainer that has
 * run, or of another experiment, is refused and changes nothing. */
static void
test_state_snapshot (void **state)
{
  (void) state;
  CamlDataset *train, *test;
  GError *error = NULL;

  caml_data_surface (81, 0.01, 1, &train, &test);
  CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAM, 0.01, 90, 8, 20, 7);
  exp->average_decay = 0.9;
  const long at = 37;

  /* the reference: stopped (finished) at `at`, then extended */
  CamlModel *model = make_dropout_mlp (9);
  size_t bytes = model->n_weights * sizeof (float);
  exp->steps = (int) at;
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  exp->steps = 90;
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  float *w_at = g_memdup2 (model->w, bytes);
  assert_true (caml_trainer_extend (trainer, 90, FALSE, &error));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  long n_ref = 0;
  float *ref = caml_trainer_copy_losses (trainer, &n_ref);
  float *w_ref = g_memdup2 (model->w, bytes);
  caml_trainer_free (trainer);
  caml_model_free (model);

  /* the run straight through */
  model = make_dropout_mlp (9);
  trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  long n_straight = 0;
  float *straight = caml_trainer_copy_losses (trainer, &n_straight);
  float *w_straight = g_memdup2 (model->w, bytes);
  caml_trainer_free (trainer);
  caml_model_free (model);

  /* the copy, taken on the way: the run goes on untouched */
  model = make_dropout_mlp (9);
  trainer = caml_trainer_new (exp, model, train, test);
  Snapshot snap = { trainer, at, 0, NULL, NULL, NULL };
  caml_trainer_set_progress_func (trainer, snapshot_cb, &snap, 1);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  assert_null (snap.error);
  assert_non_null (snap.copy);
  assert_non_null (snap.bytes);
  long n_taken = 0;
  float *taken = caml_trainer_copy_losses (trainer, &n_taken);
  assert_int_equal (n_taken, n_straight);
  assert_memory_equal (taken, straight, (size_t) n_taken * sizeof (float));
  assert_memory_equal (model->w, w_straight, bytes);
  g_free (taken);
  assert_int_equal (caml_trainer_state_copy_get_step (snap.copy), at);
  size_t n = 0;
  assert_memory_equal (caml_trainer_state_copy_get_weights (snap.copy, &n), w_at, bytes);
  /* … not into a trainer that has run */
  assert_false (caml_trainer_state_restore (trainer, snap.copy, &error));
  assert_message_has (&error, "a state loads only into a trainer that has not run");
  caml_trainer_free (trainer);
  caml_model_free (model);

  /* … nor into another experiment's */
  model = make_dropout_mlp (9);
  float *w_other = g_memdup2 (model->w, bytes);
  exp->seed = 8;
  trainer = caml_trainer_new (exp, model, train, test);
  assert_false (caml_trainer_state_restore (trainer, snap.copy, &error));
  assert_message_has (&error, "the state is of another run (seed 7,");
  assert_int_equal (current_step (trainer, NULL), 0);
  assert_memory_equal (model->w, w_other, bytes);
  caml_trainer_free (trainer);
  exp->seed = 7;

  /* its bytes, loaded over its weights */
  memcpy (model->w, w_at, bytes);
  trainer = caml_trainer_new (exp, model, train, test);
  gsize length;
  const guint8 *data = g_bytes_get_data (snap.bytes, &length);
  assert_true (caml_trainer_state_load_data (trainer, data, length, "s.state", &error));
  assert_true (caml_trainer_start (trainer, FALSE, &error));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  assert_memory_equal (model->w, w_ref, bytes);
  caml_trainer_free (trainer);
  memcpy (model->w, w_other, bytes);

  /* restored into a new trainer over a model of other weights */
  trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_state_restore (trainer, snap.copy, &error));
  assert_null (error);
  assert_memory_equal (model->w, w_at, bytes);
  CamlProgress p;
  caml_trainer_get_progress (trainer, &p);
  assert_int_equal (p.step, at);
  assert_int_equal (p.n_rows, 1);   /* the evaluation at step 20 */
  assert_true (caml_trainer_start (trainer, FALSE, &error));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  long n_losses = 0;
  float *losses = caml_trainer_copy_losses (trainer, &n_losses);
  assert_int_equal (n_losses, n_ref);
  assert_memory_equal (losses, ref, (size_t) n_ref * sizeof (float));
  assert_memory_equal (model->w, w_ref, bytes);
  caml_trainer_free (trainer);
  caml_model_free (model);
  caml_trainer_state_copy_free (snap.copy);
  g_bytes_unref (snap.bytes);

  /* the rate raised after the copy: the next copy finds the update
   * diverged, and the run ends rolled back to the step before it */
  model = make_dropout_mlp (9);
  exp->average_decay = 0;
  trainer = caml_trainer_new (exp, model, train, test);
  snap = (Snapshot) { trainer, at, 1e30, NULL, NULL, NULL };
  caml_trainer_set_progress_func (trainer, snapshot_cb, &snap, 1);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FAILED);
  assert_non_null (snap.copy);
  assert_non_null (snap.error);
  assert_true (g_error_matches (snap.error, CAML_ERROR, CAML_ERROR_DIVERGED));
  assert_message_has (&snap.error, "the latest update diverged: step 38: ");
  CamlDivergence where;
  assert_true (caml_trainer_get_divergence (trainer, &where));
  assert_int_equal (where.rolled_back_to, at);
  caml_trainer_state_copy_free (snap.copy);
  g_bytes_unref (snap.bytes);
  caml_trainer_free (trainer);
  caml_model_free (model);

  g_free (straight);
  g_free (w_straight);
  g_free (losses);
  g_free (ref);
  g_free (w_ref);
  g_free (w_at);
  g_free (w_other);
  g_free (exp);
  caml_dataset_free (train);
  caml_dataset_free (test);
}

/* A checkpoint kept by the progress function (caml_checkpoint_progress),
 * and the learning rate raised to 1e30 at step raise_at. */
typedef struct {
  CamlTrainer    *trainer;
  CamlCheckpoint *checkpoint;
  long            raise_at;
} Raiser;

static void
raiser_cb (const CamlProgress *p, gpointer user_data)
{
  Raiser *r = user_data;
  caml_checkpoint_progress (r->checkpoint, r->trainer, p);
  if (p->step == r->raise_at && p->state == CAML_TRAINER_RUNNING)
    caml_trainer_set_lr (r->trainer, 1e30);
}

/* A run that blows up goes back further than its own rollback (one step),
 * to its checkpoint: the state of its last healthy evaluation — there it
 * stands as a run stopped at that step, and started again at the old rate
 * it ends as the run that never blew up, bit for bit — or, when it blew up
 * before any evaluation, the start. */
static void
test_checkpoint_roll_back (void **state)
{
  (void) state;
  CamlDataset *train, *test;
  GError *error = NULL;
  const long at = 30;

  caml_data_surface (81, 0.01, 1, &train, &test);
  CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAM, 0.01, 90, 8, 10, 7);

  /* the references: stopped at `at`, then extended; and straight through */
  CamlModel *model = make_dropout_mlp (9);
  size_t bytes = model->n_weights * sizeof (float);
  float *w0 = g_memdup2 (model->w, bytes);
  exp->steps = (int) at;
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  exp->steps = 90;
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  float *w_at = g_memdup2 (model->w, bytes);
  long n_at = 0;
  float *losses_at = caml_trainer_copy_losses (trainer, &n_at);
  assert_true (caml_trainer_extend (trainer, 90, FALSE, &error));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  float *w_ref = g_memdup2 (model->w, bytes);
  caml_trainer_free (trainer);
  caml_model_free (model);

  /* (a model of its own for each run: dropout's generator is the layer's) */
  for (int early = 0; early < 2; early++)
    {
      model = make_dropout_mlp (9);
      trainer = caml_trainer_new (exp, model, train, test);
      Raiser r = { trainer, caml_checkpoint_new (model, NULL), early ? 5 : at + 5 };
      caml_trainer_set_progress_func (trainer, raiser_cb, &r, 1);
      assert_true (caml_trainer_start (trainer, FALSE, NULL));
      assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FAILED);
      CamlDivergence d;
      assert_true (caml_trainer_get_divergence (trainer, &d));
      long to = early ? 0 : at;
      assert_true (d.rolled_back_to > to);   /* its own rollback, one step */
      assert_int_equal (caml_checkpoint_get_step (r.checkpoint, trainer), to);

      assert_true (caml_checkpoint_roll_back (r.checkpoint, trainer, &error));
      assert_null (error);
      CamlDivergence back;
      assert_true (caml_trainer_get_divergence (trainer, &back));
      assert_int_equal (back.step, d.step);
      assert_int_equal (back.rolled_back_to, to);
      CamlProgress p;
      caml_trainer_get_progress (trainer, &p);
      assert_int_equal (p.state, CAML_TRAINER_FAILED);
      assert_int_equal (p.step, to);
      assert_int_equal (p.n_rows, early ? 0 : 3);
      error = caml_trainer_get_error (trainer);
      assert_message_has (&error, early ? "; weights rolled back to step 0 (where the run "
                                          "started: no evaluation before the divergence was "
                                          "healthy)"
                                        : "; weights rolled back to step 30 (the last healthy "
                                          "evaluation)");
      assert_memory_equal (model->w, early ? w0 : w_at, bytes);
      long n = 0;
      float *losses = caml_trainer_copy_losses (trainer, &n);
      assert_int_equal (n, to);
      if (!early)
        assert_memory_equal (losses, losses_at, (size_t) n * sizeof (float));
      g_free (losses);
      /* nothing further to go back to */
      assert_true (caml_checkpoint_roll_back (r.checkpoint, trainer, &error));
      caml_trainer_get_progress (trainer, &p);
      assert_int_equal (p.step, to);

      /* started again at the old rate: the run that never blew up */
      caml_trainer_set_progress_func (trainer, NULL, NULL, 1);
      caml_trainer_set_lr (trainer, 0.01);
      assert_true (caml_trainer_start (trainer, FALSE, &error));
      assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
      assert_memory_equal (model->w, w_ref, bytes);
      caml_trainer_free (trainer);
      caml_checkpoint_free (r.checkpoint);
      caml_model_free (model);
    }

  g_free (w0);
  g_free (w_at);
  g_free (losses_at);
  g_free (w_ref);
  g_free (exp);
  caml_dataset_free (train);
  caml_dataset_free (test);
}

/* What is refused: saving a run that has not started, loading
 * into a trainer that has run, another run's state, other weights, and any
 * damaged or truncated file — each with a message naming the file and the
 * byte, the trainer left as it was. */
static void
test_state_errors (void **state)
{
  (void) state;
  CamlDataset *train, *test;
  GError *error = NULL;

  caml_data_surface (81, 0.01, 1, &train, &test);
  CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAM, 0.01, 40, 8, 20, 7);
  CamlModel *model = make_dropout_mlp (9);
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  assert_null (caml_trainer_state_to_bytes (trainer, &error));
  assert_message_has (&error, "has not started");
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  GBytes *bytes = caml_trainer_state_to_bytes (trainer, &error);
  assert_null (error);
  gsize length;
  const guint8 *data = g_bytes_get_data (bytes, &length);
  assert_false (caml_trainer_state_load_data (trainer, data, length, "s.state", &error));
  assert_message_has (&error, "s.state: a state loads only into a trainer that has not run");
  /* copied out, it gives the same bytes — also once the run has gone on */
  CamlTrainerStateCopy *state_copy = caml_trainer_state_copy (trainer, &error);
  assert_non_null (state_copy);
  size_t n_copied = 0;
  assert_memory_equal (caml_trainer_state_copy_get_weights (state_copy, &n_copied), model->w,
                       model->n_weights * sizeof (float));
  assert_int_equal (n_copied, model->n_weights);
  assert_int_equal (caml_trainer_state_copy_get_step (state_copy), 40);
  float *w40 = g_memdup2 (model->w, model->n_weights * sizeof (float));
  assert_true (caml_trainer_extend (trainer, 60, FALSE, &error));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  assert_true (memcmp (w40, model->w, model->n_weights * sizeof (float)) != 0);
  GBytes *copied = caml_trainer_state_copy_to_bytes (state_copy, NULL);
  assert_true (g_bytes_equal (copied, bytes));
  g_bytes_unref (copied);
  caml_trainer_state_copy_free (state_copy);
  caml_trainer_free (trainer);
  memcpy (model->w, w40, model->n_weights * sizeof (float));   /* the state's weights */
  g_free (w40);

  /* the weights it was saved with, and nothing else */
  assert_true (load_into_new (exp, model, train, test, data, length, &error));
  float w0 = model->w[0];
  model->w[0] += 1e-6f;
  assert_false (load_into_new (exp, model, train, test, data, length, &error));
  assert_message_has (&error, "these are not the weights the state was saved with");
  model->w[0] = w0;

  /* another experiment */
  exp->seed = 8;
  assert_false (load_into_new (exp, model, train, test, data, length, &error));
  assert_message_has (&error, "s.state: byte 12: the state is of a run with seed 7, but the "
                              "experiment has seed 8");
  exp->seed = 7;
  exp->batch_size = 9;
  assert_false (load_into_new (exp, model, train, test, data, length, &error));
  assert_message_has (&error, "batches of 8, but the experiment's are 9");
  exp->batch_size = 8;
  exp->optimizer.kind = CAML_OPTIM_ADAGRAD;
  assert_false (load_into_new (exp, model, train, test, data, length, &error));
  assert_message_has (&error, "optimizer 2 (adam), but the experiment has adagrad");
  exp->optimizer.kind = CAML_OPTIM_ADAM;

  /* damaged: every byte flipped, every length cut short, a byte more */
  guint8 *copy = g_memdup2 (data, length + 1);
  for (gsize i = 0; i < length; i += (i < 200 ? 1 : 97))
    {
      copy[i] ^= 0x10;
      assert_false (load_into_new (exp, model, train, test, copy, length, &error));
      assert_non_null (error);
      assert_true (g_str_has_prefix (error->message, "s.state: "));
      g_clear_error (&error);
      copy[i] ^= 0x10;
      assert_false (load_into_new (exp, model, train, test, copy, i, &error));
      assert_non_null (error);
      assert_true (g_str_has_prefix (error->message, "s.state: "));
      g_clear_error (&error);
    }
  assert_false (load_into_new (exp, model, train, test, copy, length + 1, &error));
  assert_message_has (&error, "1 unexpected bytes after the checksum");
  g_free (copy);
  assert_true (load_into_new (exp, model, train, test, data, length, &error));
  g_bytes_unref (bytes);

  caml_model_free (model);
  g_free (exp);
  caml_dataset_free (train);
  caml_dataset_free (test);
}

typedef struct {
  CamlTrainer       *trainer;
  const CamlDataset *test;
  CamlLossKind       loss;
  double             served_loss;   /* of the model with_model gave at step 20 */
} ServedCheck;

static void
served_loss_cb (CamlModel *model, gpointer user_data)
{
  ServedCheck *check = user_data;
  caml_evaluate (model, check->loss, check->test, &check->served_loss, NULL);
}

/* Trainer thread, right after the evaluation of step 20. */
static void
served_progress_cb (const CamlProgress *progress, gpointer user_data)
{
  if (progress->step == 20 && progress->n_rows == 2)
    caml_trainer_with_model (((ServedCheck *) user_data)->trainer, served_loss_cb, user_data);
}

/* With training.average_decay the evaluations are of the averaged weights,
 * so is the model caml_trainer_with_model gives a progress function, and a
 * finished run leaves them in the model. */
static void
test_trainer_average (void **state)
{
  (void) state;
  CamlDataset *train, *test;
  caml_data_rnn_sanity (&train, &test);
  float *w[2];
  for (int averaged = 0; averaged <= 1; averaged++)
    {
      CamlExperiment *exp = make_experiment (CAML_OPTIM_ADAGRAD, 0.1, 40, 1, 10, 5);
      exp->loss = CAML_LOSS_SIGMOID_XENT;
      exp->average_decay = averaged ? 0.95 : 0.0;
      CamlModel *model = make_bsfe_model (train);
      CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
      ServedCheck check = { trainer, test, exp->loss, NAN };
      caml_trainer_set_progress_func (trainer, served_progress_cb, &check, 1);
      assert_true (caml_trainer_start (trainer, FALSE, NULL));
      assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
      int n_rows = 0;
      CamlEvalRow *rows = caml_trainer_copy_rows (trainer, &n_rows);
      assert_int_equal (n_rows, 4);
      assert_int_equal (rows[1].step, 20);
      assert_near (check.served_loss, rows[1].test_loss, 1e-12);
      double loss, metric;
      caml_evaluate (model, exp->loss, test, &loss, &metric);
      assert_near (rows[n_rows - 1].test_loss, loss, 1e-12);
      w[averaged] = g_memdup2 (model->w, model->n_weights * sizeof (float));
      g_free (rows);
      caml_trainer_free (trainer);
      caml_model_free (model);
      g_free (exp);
    }
  /* Same steps, same batches: only the averaging differs. */
  CamlModel *model = make_bsfe_model (train);
  size_t n = model->n_weights;
  caml_model_free (model);
  assert_true (memcmp (w[0], w[1], n * sizeof (float)) != 0);
  g_free (w[0]);
  g_free (w[1]);
  caml_dataset_free (train);
  caml_dataset_free (test);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_run_to_completion),
    cmocka_unit_test (test_pause_and_step),
    cmocka_unit_test (test_stop_is_prompt),
    cmocka_unit_test (test_free_while_running),
    cmocka_unit_test (test_start_stop_cycles),
    cmocka_unit_test (test_determinism),
    cmocka_unit_test (test_extend),
    cmocka_unit_test (test_state_resume),
    cmocka_unit_test (test_weight_decay_shrinks),
    cmocka_unit_test (test_state_errors),
    cmocka_unit_test (test_divergence_and_resume),
    cmocka_unit_test (test_divergence_average_resume),
    cmocka_unit_test (test_divergence_kinds),
    cmocka_unit_test (test_divergence_finite_blowup),
    cmocka_unit_test (test_divergence_state),
    cmocka_unit_test (test_state_snapshot),
    cmocka_unit_test (test_state_copy_over),
    cmocka_unit_test (test_checkpoint_roll_back),
    cmocka_unit_test (test_divergence_before_stop),
    cmocka_unit_test (test_start_checks_targets),
    cmocka_unit_test (test_start_reserves_batch),
    cmocka_unit_test (test_start_reports_allocation),
    cmocka_unit_test (test_start_checks_memory),
    cmocka_unit_test (test_set_lr_live),
    cmocka_unit_test (test_progress_callback),
    cmocka_unit_test (test_with_model_while_running),
    cmocka_unit_test (test_start_checks_shapes),
    cmocka_unit_test (test_evaluate),
    cmocka_unit_test (test_token_counts),
    cmocka_unit_test (test_average_matches_definition),
    cmocka_unit_test (test_average_ramp_end),
    cmocka_unit_test (test_trainer_average),
    cmocka_unit_test (test_background_priority),   /* last: it cannot be undone */
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
