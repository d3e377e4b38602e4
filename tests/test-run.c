/* test-run.c — the hand-off between the trainer thread and the main loop,
 * without a display: the workbench's CamlRun (studio/caml-run.c, plain C) with a
 * stand-in for the window that does what CamlWindow does — the notify
 * function (trainer thread) schedules at most one idle, the idle (main
 * thread) copies the progress, rows, losses and the surface/σ-map snapshots.
 * Meanwhile the main thread pauses, single-steps, resumes and saves the
 * weights through caml_trainer_with_model. Runs in every build, and in the
 * ThreadSanitizer build (suite "threads"). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <glib/gstdio.h>

#include "caml-run.h"

/* What the window holds. */
typedef struct {
  GMainContext *context;
  GSource      *wake;           /* dispatches on_idle when its ready time is set */
  CamlRun      *run;
  gint          pending;        /* atomic: on_idle is scheduled */
  /* main thread only */
  int           idles;
  long          last_step;
  guint64       surface_version;
  int           surfaces;
  guint64       sigma_version;
  int           sigma_seen;
  float        *fit, *chi;
  guint64       words_version;
  int           words_seen;
  float        *words, *word_probs, *token_chi;   /* the last word sample */
  const char   *final_weights;   /* if set: where the final weights are saved */
  gboolean      ended;
  CamlTrainerState end_state;
} Window;

static gboolean
all_finite (const float *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (!isfinite (v[i]))
      return FALSE;
  return TRUE;
}

/* Main thread: copy everything the window shows. */
static gboolean
on_idle (gpointer user_data)
{
  Window *w = user_data;
  CamlTrainer *trainer = caml_run_get_trainer (w->run);
  CamlProgress p;

  g_atomic_int_set (&w->pending, 0);   /* before reading: a later notify schedules anew */
  caml_trainer_get_progress (trainer, &p);
  assert_true (p.step >= w->last_step);
  w->last_step = p.step;

  int n_rows;
  CamlEvalRow *rows = caml_trainer_copy_rows (trainer, &n_rows);
  for (int i = 1; i < n_rows; i++)
    assert_true (rows[i].step > rows[i - 1].step);
  g_free (rows);
  long n_losses;
  float *losses = caml_trainer_copy_losses (trainer, &n_losses);
  assert_true (n_losses >= p.step);
  assert_true (all_finite (losses, (size_t) n_losses));
  g_free (losses);

  if (caml_run_has_surface (w->run))
    {
      int grid = caml_run_get_grid (w->run);
      if (caml_run_copy_surface (w->run, &w->surface_version, w->fit, w->chi, NULL, NULL, NULL))
        {
          w->surfaces++;
          assert_true (all_finite (w->fit, (size_t) grid * grid));
          assert_true (all_finite (w->chi, (size_t) caml_run_get_n_chi (w->run) * grid * grid));
        }
    }
  if (caml_run_has_sigma (w->run))
    {
      guint64 version;
      int n = caml_run_get_sigma_count (w->run, &version);
      if (version != w->sigma_version && n > 0)
        {
          w->sigma_version = version;
          w->sigma_seen++;
          CamlSigmaSnapshot *snap = caml_run_copy_sigma (w->run, n - 1);
          assert_non_null (snap);
          assert_true (all_finite (snap->maps, (size_t) snap->count * snap->map_h * snap->map_w));
          caml_sigma_snapshot_free (snap);
          double *steps, *auc;
          int m = caml_run_copy_sigma_auc (w->run, &steps, &auc);
          for (int i = 1; i < m; i++)
            assert_true (steps[i] >= steps[i - 1]);
          for (int i = 0; i < m; i++)
            assert_true (auc[i] >= 0.5 && auc[i] <= 1.0);
          g_free (steps);
          g_free (auc);
        }
    }

  if (caml_run_get_words_layer (w->run) >= 0)
    {
      int n_samples = 0, vocab = caml_vocab_size (caml_run_get_train (w->run)->vocab);
      caml_run_get_word_samples (w->run, &n_samples);
      if (w->words == NULL)
        {
          w->words = g_new (float, vocab);
          w->word_probs = g_new (float, MAX (n_samples, 1));
          w->token_chi = g_new (float, (size_t) MAX (n_samples, 1) * CAML_RUN_WORDS_SHOWN);
        }
      if (caml_run_copy_words (w->run, &w->words_version, w->words, NULL, w->word_probs,
                               caml_run_words_per_position (w->run) ? w->token_chi : NULL))
        w->words_seen++;
    }

  w->idles++;
  if (p.state == CAML_TRAINER_FINISHED || p.state == CAML_TRAINER_STOPPED
      || p.state == CAML_TRAINER_FAILED)
    {
      w->ended = TRUE;
      w->end_state = p.state;
    }
  return G_SOURCE_CONTINUE;
}

static gboolean
wake_dispatch (GSource *source, GSourceFunc callback, gpointer user_data)
{
  g_source_set_ready_time (source, -1);   /* until the next notify */
  return callback (user_data);
}

static GSourceFuncs wake_funcs = { .dispatch = wake_dispatch };

/* Main thread: the stand-in's loop and the source the trainer wakes. */
static void
window_open (Window *w)
{
  w->context = g_main_context_new ();
  w->wake = g_source_new (&wake_funcs, sizeof (GSource));
  g_source_set_ready_time (w->wake, -1);
  g_source_set_callback (w->wake, on_idle, w, NULL);
  g_source_attach (w->wake, w->context);
}

static void
window_close (Window *w)
{
  g_source_destroy (w->wake);
  g_source_unref (w->wake);
  g_main_context_unref (w->context);
}

/* Trainer thread: hand the news to the main loop, at most one on_idle
 * pending. Nothing is allocated here: a GSource made on this thread and
 * freed by the main one after dispatch is ordered only by GMainContext's
 * lock, inside libglib, which ThreadSanitizer does not see (tsan-glib.c
 * covers the calls from our code only) — it reported that as a race. */
static void
notify (gpointer user_data)
{
  Window *w = user_data;
  if (g_atomic_int_compare_and_exchange (&w->pending, 0, 1))
    g_source_set_ready_time (w->wake, 0);
}

static void
iterate_until_step (Window *w, long step)
{
  while (w->last_step < step && !w->ended)
    g_main_context_iteration (w->context, TRUE);
}

/* Runs exp through a CamlRun with the window stand-in; returns it ended. */
static void
run_with_window (const CamlExperiment *exp, Window *w, const char *dir)
{
  GError *error = NULL;
  CamlRunData *data = caml_run_data_load (exp, &error);
  if (data == NULL)
    fail_msg ("%s", error->message);
  window_open (w);
  w->run = caml_run_new (exp, data, 24, -1, notify, w, &error);
  if (w->run == NULL)
    fail_msg ("%s", error->message);
  caml_run_data_unref (data);
  w->fit = g_new0 (float, 24 * 24);
  w->chi = g_new0 (float, 4 * 24 * 24);
  CamlTrainer *trainer = caml_run_get_trainer (w->run);

  /* Paused start, three single steps, then run. */
  assert_true (caml_trainer_start (trainer, TRUE, &error));
  for (int i = 0; i < 3; i++)
    caml_trainer_step (trainer);
  iterate_until_step (w, 3);
  assert_int_equal (w->last_step, 3);
  caml_trainer_resume (trainer);

  /* Save the weights while it trains: handed to the trainer thread. */
  iterate_until_step (w, 20);
  char *path = g_build_filename (dir, "mid-run.weights", NULL);
  if (!caml_run_save_weights (w->run, path, &error))
    fail_msg ("%s", error->message);
  g_unlink (path);
  g_free (path);

  while (!w->ended)
    g_main_context_iteration (w->context, TRUE);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  assert_int_equal (w->end_state, CAML_TRAINER_FINISHED);
  assert_int_equal (w->last_step, exp->steps);
  assert_true (w->idles >= 2);

  /* The thread is joined: no more notifications. Let a pending idle run
   * before the run goes (the window holds a reference for this). */
  while (g_atomic_int_get (&w->pending))
    g_main_context_iteration (w->context, TRUE);
  if (w->final_weights != NULL && !caml_run_save_weights (w->run, w->final_weights, &error))
    fail_msg ("%s", error->message);
  caml_run_free (w->run);
  window_close (w);
  g_free (w->fit);
  g_free (w->chi);
}

static void
window_clear_words (Window *w)
{
  g_free (w->words);
  g_free (w->word_probs);
  g_free (w->token_chi);
}

static void
test_surface_run (void **state)
{
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (
    "{ \"data\": { \"builtin\": \"surface\", \"grid\": 21, \"train_fraction\": 0.2 },"
    "  \"model\": [ { \"layer\": \"ca_nn\", \"units\": 5 }, { \"layer\": \"dense\", \"units\": 1 } ],"
    "  \"optimizer\": { \"type\": \"adam\", \"lr\": 0.05 },"
    "  \"training\": { \"steps\": 300, \"eval_every\": 50 } }", -1, "surface", &error);
  assert_non_null (exp);
  char *dir = g_dir_make_tmp ("caml-run-XXXXXX", NULL);
  Window w = { 0 };
  run_with_window (exp, &w, dir);
  assert_true (w.surfaces >= 1);
  g_rmdir (dir);
  g_free (dir);
  caml_experiment_free (exp);
}

/* An IDX file of n items (3 dims for images of 8×8, 1 for labels). */
static char *
write_idx (const char *dir, const char *name, int n, gboolean images)
{
  GByteArray *b = g_byte_array_new ();
  guint32 header[4] = { GUINT32_TO_BE (images ? 0x803 : 0x801), GUINT32_TO_BE (n),
                        GUINT32_TO_BE (8), GUINT32_TO_BE (8) };
  g_byte_array_append (b, (const guint8 *) header, images ? 16 : 8);
  for (int i = 0; i < n; i++)
    if (images)
      for (int p = 0; p < 64; p++)
        {
          /* a bright square whose place depends on the label */
          int r = p / 8, c = p % 8, k = i % 10;
          guint8 v = (r >= k % 4 && r < k % 4 + 4 && c >= k / 4 && c < k / 4 + 4) ? 255 : 0;
          g_byte_array_append (b, &v, 1);
        }
    else
      {
        guint8 label = (guint8) (i % 10);
        g_byte_array_append (b, &label, 1);
      }
  char *path = g_build_filename (dir, name, NULL);
  assert_true (g_file_set_contents (path, (const char *) b->data, b->len, NULL));
  g_byte_array_unref (b);
  return path;
}

/* A CA-CNN experiment on n synthetic IDX images (train and test) written
 * into dir, with the optimizer given as JSON; paths[4] receive the files. */
static CamlExperiment *
sigma_experiment (const char *dir, int n, const char *optimizer, char *paths[4])
{
  paths[0] = write_idx (dir, "train-images", n, TRUE);
  paths[1] = write_idx (dir, "train-labels", n, FALSE);
  paths[2] = write_idx (dir, "test-images", n, TRUE);
  paths[3] = write_idx (dir, "test-labels", n, FALSE);
  g_autofree char *doc = g_strdup_printf (
    "{ \"data\": { \"idx\": { \"train_images\": \"%s\", \"train_labels\": \"%s\","
    "                         \"test_images\": \"%s\", \"test_labels\": \"%s\" } },"
    "  \"model\": [ { \"layer\": \"ca_cnn\", \"kernel\": 3, \"depth\": 2 },"
    "               { \"layer\": \"flatten\" }, { \"layer\": \"dense\", \"units\": 10 } ],"
    "  \"loss\": \"softmax_cross_entropy\", \"optimizer\": %s,"
    "  \"training\": { \"steps\": 100, \"batch_size\": 16, \"eval_every\": 50 } }",
    paths[0], paths[1], paths[2], paths[3], optimizer);
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (doc, -1, "sigma", &error);
  if (exp == NULL)
    fail_msg ("%s", error->message);
  return exp;
}

static void
remove_files (char *dir, char *paths[4])
{
  for (int i = 0; i < 4; i++)
    {
      g_unlink (paths[i]);
      g_free (paths[i]);
    }
  g_rmdir (dir);
  g_free (dir);
}

static void
test_sigma_run (void **state)
{
  char *dir = g_dir_make_tmp ("caml-run-XXXXXX", NULL);
  char *paths[4];
  CamlExperiment *exp = sigma_experiment (dir, 128, "{ \"type\": \"adagrad\", \"lr\": 0.05 }",
                                          paths);
  Window w = { 0 };
  run_with_window (exp, &w, dir);
  assert_true (w.sigma_seen >= 1);
  remove_files (dir, paths);
  caml_experiment_free (exp);
}

/* A run whose first update blows the loss up: the σ-maps the progress
 * function takes after that step check the update first, find the
 * divergence and see the weights rolled back to step 0 — and are labelled
 * step 0, not the step reported (they were labelled 1). */
static void
test_sigma_divergence (void **state)
{
  char *dir = g_dir_make_tmp ("caml-run-XXXXXX", NULL);
  char *paths[4];
  CamlExperiment *exp = sigma_experiment (dir, 64, "{ \"type\": \"sgd\", \"lr\": 1e12 }",
                                          paths);
  GError *error = NULL;
  CamlRunData *data = caml_run_data_load (exp, &error);
  if (data == NULL)
    fail_msg ("%s", error->message);
  Window w = { 0 };
  window_open (&w);
  w.run = caml_run_new (exp, data, 24, -1, notify, &w, &error);
  if (w.run == NULL)
    fail_msg ("%s", error->message);
  caml_run_data_unref (data);
  /* Past the σ-maps' minimum gap (1 s while training takes every core):
   * the report after step 1 takes them. */
  g_usleep (1200000);
  CamlTrainer *trainer = caml_run_get_trainer (w.run);
  assert_true (caml_trainer_start (trainer, FALSE, &error));
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FAILED);
  CamlDivergence d;
  assert_true (caml_trainer_get_divergence (trainer, &d));
  CamlProgress p;
  caml_trainer_get_progress (trainer, &p);
  print_message ("diverged at step %ld, rolled back to %ld; now at step %ld\n", d.step,
                 d.rolled_back_to, p.step);
  assert_int_equal (p.step, d.rolled_back_to);
  int n = caml_run_get_sigma_count (w.run, NULL);
  assert_true (n >= 1);
  for (int i = 0; i < n; i++)
    {
      CamlSigmaSnapshot *snap = caml_run_copy_sigma (w.run, i);
      print_message ("σ-maps %d: step %ld\n", i, snap->step);
      assert_true (snap->step <= p.step);
      caml_sigma_snapshot_free (snap);
    }

  while (g_main_context_iteration (w.context, FALSE))
    ;
  caml_run_free (w.run);
  window_close (&w);
  remove_files (dir, paths);
  caml_experiment_free (exp);
}

/* A per-position gate (CA-ATT whose query is the mean of the words, so that a
 * word's χ depends on its text): the run samples χ at every shown word of
 * the first test texts and each word's mean over the test texts; the last
 * sample is exactly what the final weights give. */
static void
test_words_run (void **state)
{
  (void) state;
  char *dir = g_dir_make_tmp ("caml-run-XXXXXX", NULL);
  char *train = g_build_filename (dir, "train.tsv", NULL);
  char *test = g_build_filename (dir, "test.tsv", NULL);
  char *weights = g_build_filename (dir, "final.weights", NULL);
  for (int f = 0; f < 2; f++)
    {
      GString *text = g_string_new (NULL);
      for (int i = 0; i < (f == 0 ? 200 : 30); i++)
        g_string_append_printf (text, "the movie is %s w%d w%d\t%d\n", i % 2 ? "good" : "bad",
                                (i * 7 + f) % 20, (i * 3) % 25, i % 2);
      /* a text longer than max_tokens: words past the model's steps */
      if (f == 1)
        g_string_prepend (text, "the movie is good good good w1 w2 w3\t1\n");
      assert_true (g_file_set_contents (f == 0 ? train : test, text->str, -1, NULL));
      g_string_free (text, TRUE);
    }
  char *doc = g_strdup_printf (
    "{ \"data\": { \"text\": { \"train\": \"%s\", \"test\": \"%s\" }, \"max_tokens\": 7 },"
    "  \"model\": [ { \"layer\": \"embedding\", \"dim\": 6 },"
    "               { \"layer\": \"ca_att\", \"query\": \"mean\" },"
    "               { \"layer\": \"dense\", \"units\": 1 } ],"
    "  \"loss\": \"sigmoid_cross_entropy\","
    "  \"optimizer\": { \"type\": \"adagrad\", \"lr\": 0.1 },"
    "  \"training\": { \"steps\": 150, \"batch_size\": 16, \"eval_every\": 50 } }",
    train, test);
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (doc, -1, "words", &error);
  if (exp == NULL)
    fail_msg ("%s", error->message);

  Window w = { .final_weights = weights };
  run_with_window (exp, &w, dir);
  assert_true (w.words_seen >= 1);

  /* The final weights in a model of its own: the same χ, word by word. */
  CamlRunData *data = caml_run_data_load (exp, &error);
  assert_non_null (data);
  CamlModel *model = caml_experiment_build_model_for (exp, data->train, &error);
  assert_non_null (model);
  assert_true (caml_weights_load (model, weights, &error));
  assert_int_equal (caml_report_token_gate_layer (model, data->test), 1);
  int t = model->input.dims[0], n = data->test->n;
  assert_int_equal (t, 7);
  float *chi = g_new (float, (size_t) n * t);
  caml_report_token_chi (model, 1, data->test, n, chi);
  int vocab = caml_vocab_size (data->train->vocab);
  float *mean = g_new (float, vocab);
  caml_report_token_chi_means (data->test, n, t, chi, vocab, mean);
  for (int id = 0; id < vocab; id++)
    if (isnan (mean[id]))
      assert_true (isnan (w.words[id]));
    else
      {
        assert_true (isfinite (w.words[id]));
        assert_float_equal (w.words[id], mean[id], 1e-6);
      }
  double lo = 1, hi = 0;
  for (int i = 0; i < 12; i++)
    for (int k = 0; k < 9; k++)
      {
        float shown = w.token_chi[(size_t) i * CAML_RUN_WORDS_SHOWN + k];
        if (i > 0 && k >= 6)
          break;   /* the other texts have 6 words */
        if (k >= t)
          assert_true (isnan (shown));   /* the long text's last two words */
        else
          {
            assert_true (isfinite (shown));
            assert_float_equal (shown, chi[(size_t) i * t + k], 1e-6);
            lo = MIN (lo, shown);
            hi = MAX (hi, shown);
          }
      }
  print_message ("shown χ from %g to %g\n", lo, hi);
  assert_true (lo >= 0 && hi <= 1 && hi > lo);

  g_free (chi);
  g_free (mean);
  caml_model_free (model);
  caml_run_data_unref (data);
  window_clear_words (&w);
  g_unlink (train);
  g_unlink (test);
  g_unlink (weights);
  g_rmdir (dir);
  g_free (train);
  g_free (test);
  g_free (weights);
  g_free (dir);
  g_free (doc);
  caml_experiment_free (exp);
}

/* ------------------------------------------------------- resumable runs */

#define RESUME_EXP(steps)                                                                    \
  "{ \"name\": \"resume-run\", \"seed\": 3,"                                                 \
  "  \"data\": { \"builtin\": \"surface\", \"grid\": 31, \"train_fraction\": 0.2 },"        \
  "  \"model\": [ { \"layer\": \"dense\", \"units\": 10, \"activation\": \"tanh\" },"        \
  "               { \"layer\": \"dropout\", \"rate\": 0.2 },"                                 \
  "               { \"layer\": \"ca_nn\", \"units\": 4, \"activation\": \"tanh\" },"         \
  "               { \"layer\": \"dense\", \"units\": 1 } ],"                                 \
  "  \"optimizer\": { \"type\": \"adam\", \"lr\": 0.02, \"em_steps\": 9 },"                 \
  "  \"training\": { \"steps\": " #steps ", \"batch_size\": 16, \"eval_every\": 25 } }"

/* A run of exp built, given weights and a state when named, and, unless
 * `start` is FALSE, trained to its end. */
static CamlRun *
resume_run (const CamlExperiment *exp, const char *weights, const char *state, gboolean start)
{
  GError *error = NULL;
  CamlRunData *data = caml_run_data_load (exp, &error);
  if (data == NULL)
    fail_msg ("%s", error->message);
  CamlRun *run = caml_run_new (exp, data, 8, -1, NULL, NULL, &error);
  caml_run_data_unref (data);
  if (run == NULL)
    fail_msg ("%s", error->message);
  if (weights != NULL && !caml_run_load_weights (run, weights, &error))
    fail_msg ("%s", error->message);
  if (state != NULL && !caml_run_load_state (run, state, &error))
    fail_msg ("%s", error->message);
  if (start)
    {
      if (!caml_trainer_start (caml_run_get_trainer (run), FALSE, &error))
        fail_msg ("%s", error->message);
      assert_int_equal (caml_trainer_join (caml_run_get_trainer (run)), CAML_TRAINER_FINISHED);
    }
  return run;
}

/* dir and everything in it. */
static void
remove_tree (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  for (const char *name; d != NULL && (name = g_dir_read_name (d)) != NULL;)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        remove_tree (path);
      else
        g_unlink (path);
    }
  if (d != NULL)
    g_dir_close (d);
  g_rmdir (dir);
}

static GBytes *
run_weights (CamlRun *run)
{
  size_t n = caml_run_get_n_weights (run);
  float *w = caml_run_copy_weights (run);
  return g_bytes_new_take (w, n * sizeof (float));
}

static GBytes *
file_bytes (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  char *contents = NULL;
  gsize length = 0;
  if (!g_file_get_contents (path, &contents, &length, NULL))
    return NULL;
  return g_bytes_new_take (contents, length);
}

/* The same losses and evaluations (seconds apart). */
static void
assert_same_history (CamlRun *a, CamlRun *b)
{
  long na = 0, nb = 0;
  int ra = 0, rb = 0;
  g_autofree float *la = caml_run_copy_losses (a, &na);
  g_autofree float *lb = caml_run_copy_losses (b, &nb);
  g_autofree CamlEvalRow *rows_a = caml_run_copy_rows (a, &ra);
  g_autofree CamlEvalRow *rows_b = caml_run_copy_rows (b, &rb);
  assert_int_equal (na, nb);
  assert_memory_equal (la, lb, (size_t) na * sizeof (float));
  assert_int_equal (ra, rb);
  for (int i = 0; i < ra; i++)
    {
      assert_int_equal (rows_a[i].step, rows_b[i].step);
      assert_true (rows_a[i].test_loss == rows_b[i].test_loss);
      assert_true (rows_a[i].train_loss == rows_b[i].train_loss);
    }
}

static char *
run_cli (const char *caml, const char *const *args)
{
  GError *error = NULL;
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (char *) caml);
  g_ptr_array_add (argv, (char *) "train");
  for (int i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) args[i]);
  g_ptr_array_add (argv, (char *) "-q");
  g_ptr_array_add (argv, NULL);
  char *out = NULL, *err = NULL;
  int status = 0;
  if (!g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                     &status, &error))
    fail_msg ("%s", error->message);
  g_ptr_array_free (argv, TRUE);
  if (!g_spawn_check_wait_status (status, NULL))
    fail_msg ("caml train %s failed:\n%s%s", args[0], out, err);
  g_free (err);
  return out;
}

/* A workbench run saved with caml_run_save_resumable goes on, loaded into
 * another run, exactly as one run of the total: the same weights, losses
 * and evaluations bit for bit, through dropout, minibatches, Adam and
 * em_steps — also when it was saved after a divergence, from the step it
 * rolled back to. With the CLI at hand (CAML_CLI) the files cross over both
 * ways: `caml train --resume` goes on with the workbench's run, and the
 * workbench with the CLI's, each equal to the CLI's run of the total. */
static void
test_resumable_run (void **state)
{
  GError *error = NULL;
  CamlExperiment *part = caml_experiment_load_data (RESUME_EXP (60), -1, "r60",
                                                               &error);
  CamlExperiment *whole = caml_experiment_load_data (RESUME_EXP (140), -1, "r140",
                                                                &error);
  assert_non_null (part);
  assert_non_null (whole);
  g_autofree char *dir = g_dir_make_tmp ("caml-resumable-XXXXXX", NULL);
  g_autofree char *saved = g_build_filename (dir, "saved", NULL);
  g_autofree char *weights = g_build_filename (saved, "model.weights", NULL);
  g_autofree char *state_path = g_build_filename (saved, "trainer.state", NULL);

  /* Not trained yet: nothing to save, and no folder is made. */
  CamlRun *a = resume_run (part, NULL, NULL, FALSE);
  assert_false (caml_run_save_resumable (a, saved, &error));
  assert_non_null (strstr (error->message, "has not trained"));
  g_clear_error (&error);
  assert_false (g_file_test (saved, G_FILE_TEST_EXISTS));
  caml_run_free (a);

  a = resume_run (part, NULL, NULL, TRUE);
  caml_run_set_lr (a, 0.01);    /* a live change: saved with the run */
  if (!caml_run_save_resumable (a, saved, &error))
    fail_msg ("%s", error->message);
  CamlExperiment *saved_exp = NULL;
  {
    g_autofree char *path = g_build_filename (saved, "experiment.json", NULL);
    saved_exp = caml_experiment_load_file (path, &error);
    assert_non_null (saved_exp);
    assert_int_equal (saved_exp->steps, 60);
    assert_true (saved_exp->optimizer.lr == 0.01);
    caml_experiment_free (saved_exp);
  }
  caml_run_free (a);

  /* Loaded: it stands at step 60 with the saved history. */
  CamlExperiment *resumed_exp = caml_experiment_copy (whole);
  resumed_exp->optimizer.lr = 0.01;
  CamlRun *b = resume_run (resumed_exp, weights, state_path, FALSE);
  CamlProgress p;
  caml_run_get_progress (b, &p);
  assert_int_equal (p.step, 60);
  assert_int_equal (p.state, CAML_TRAINER_IDLE);
  assert_int_equal (p.n_rows, 3);   /* steps 25, 50, 60 */
  assert_int_equal (caml_run_get_checkpoint_step (b), 60);
  /* … and a state loads only once, into a run that has not trained */
  assert_false (caml_run_load_state (b, state_path, &error));
  g_clear_error (&error);
  if (!caml_trainer_start (caml_run_get_trainer (b), FALSE, &error))
    fail_msg ("%s", error->message);
  assert_int_equal (caml_trainer_join (caml_run_get_trainer (b)), CAML_TRAINER_FINISHED);
  caml_experiment_free (resumed_exp);

  /* One run of the total, the rate changed at the same step. */
  CamlRun *c = resume_run (part, NULL, NULL, TRUE);
  caml_run_set_lr (c, 0.01);
  assert_true (caml_run_extend (c, 140, &error));
  caml_trainer_resume (caml_run_get_trainer (c));
  assert_int_equal (caml_trainer_join (caml_run_get_trainer (c)), CAML_TRAINER_FINISHED);
  g_autoptr (GBytes) wb = run_weights (b);
  g_autoptr (GBytes) wc = run_weights (c);
  assert_true (g_bytes_equal (wb, wc));
  assert_same_history (b, c);
  caml_run_free (b);
  caml_run_free (c);


  /* A run that diverged is saved at the step it rolled back to, and goes on
   * from there as the run saved at that step does. */
  g_autofree char *saved3 = g_build_filename (dir, "diverged", NULL);
  g_autofree char *weights3 = g_build_filename (saved3, "model.weights", NULL);
  g_autofree char *state3 = g_build_filename (saved3, "trainer.state", NULL);
  a = resume_run (part, NULL, NULL, TRUE);
  caml_run_set_lr (a, 1e30);
  assert_true (caml_run_extend (a, 140, &error));
  caml_trainer_resume (caml_run_get_trainer (a));
  assert_int_equal (caml_trainer_join (caml_run_get_trainer (a)), CAML_TRAINER_FAILED);
  CamlDivergence where;
  assert_true (caml_run_get_divergence (a, &where));
  assert_int_equal (where.rolled_back_to, 60);
  if (!caml_run_save_resumable (a, saved3, &error))
    fail_msg ("%s", error->message);
  caml_run_free (a);
  resumed_exp = caml_experiment_copy (whole);
  resumed_exp->optimizer.lr = 0.01;
  CamlRun *e = resume_run (resumed_exp, weights3, state3, TRUE);
  caml_experiment_free (resumed_exp);
  g_autoptr (GBytes) we = run_weights (e);
  assert_true (g_bytes_equal (we, wc));
  caml_run_free (e);

  /* Weights that are not the state's: refused, the run unchanged. */
  CamlRun *d = resume_run (whole, NULL, NULL, FALSE);
  assert_false (caml_run_load_state (d, state_path, &error));
  assert_non_null (strstr (error->message, "trainer.state"));
  g_clear_error (&error);
  caml_run_get_progress (d, &p);
  assert_int_equal (p.step, 0);
  assert_int_equal (p.n_rows, 0);
  caml_run_free (d);

  /* A folder with other files is refused before anything is written. */
  g_autofree char *busy = g_build_filename (dir, "busy", NULL);
  g_autofree char *summary = g_build_filename (busy, "summary.json", NULL);
  g_mkdir (busy, 0700);
  assert_true (g_file_set_contents (summary, "{}", -1, NULL));
  a = resume_run (part, NULL, NULL, TRUE);
  assert_false (caml_run_save_resumable (a, busy, &error));
  assert_non_null (strstr (error->message, "summary.json"));
  g_clear_error (&error);
  {
    g_autofree char *w2 = g_build_filename (busy, "model.weights", NULL);
    assert_false (g_file_test (w2, G_FILE_TEST_EXISTS));
  }
  /* … and a folder saved before is saved over */
  if (!caml_run_save_resumable (a, saved, &error))
    fail_msg ("%s", error->message);
  caml_run_free (a);

  const char *caml = g_getenv ("CAML_CLI");
  if (caml == NULL)
    print_message ("CAML_CLI is not set: the crossing to and from `caml train` is skipped\n");
  else
    {
      /* the CLI's run of the total, and of the part */
      g_autofree char *exp_path = g_build_filename (dir, "whole.json", NULL);
      g_autofree char *cli_whole = g_build_filename (dir, "cli-whole", NULL);
      g_autofree char *cli_part = g_build_filename (dir, "cli-part", NULL);
      g_autofree char *cli_resumed = g_build_filename (dir, "cli-resumed", NULL);
      assert_true (caml_experiment_save_file (whole, exp_path, &error));
      g_free (run_cli (caml, (const char *[]) { exp_path, "-o", cli_whole, NULL }));
      g_free (run_cli (caml, (const char *[]) { exp_path, "-n", "60", "-o", cli_part, NULL }));
      g_autoptr (GBytes) expected = file_bytes (cli_whole, "model.weights");
      assert_non_null (expected);

      /* workbench → CLI (the rate as saved: the workbench's run used 0.02) */
      a = resume_run (part, NULL, NULL, TRUE);
      g_autofree char *saved2 = g_build_filename (dir, "saved2", NULL);
      if (!caml_run_save_resumable (a, saved2, &error))
        fail_msg ("%s", error->message);
      caml_run_free (a);
      g_free (run_cli (caml, (const char *[]) { "--resume", saved2, "-n", "140", "-o",
                                                cli_resumed, NULL }));
      g_autoptr (GBytes) crossed = file_bytes (cli_resumed, "model.weights");
      assert_non_null (crossed);
      assert_true (g_bytes_equal (crossed, expected));

      /* CLI → workbench */
      g_autofree char *cli_weights = g_build_filename (cli_part, "model.weights", NULL);
      g_autofree char *cli_state = g_build_filename (cli_part, "trainer.state", NULL);
      b = resume_run (whole, cli_weights, cli_state, TRUE);
      GBytes *wfile = NULL;
      {
        g_autofree char *path = g_build_filename (dir, "b.weights", NULL);
        if (!caml_run_save_weights (b, path, &error))
          fail_msg ("%s", error->message);
        wfile = file_bytes (dir, "b.weights");
        g_unlink (path);
      }
      assert_true (g_bytes_equal (wfile, expected));
      g_bytes_unref (wfile);
      caml_run_free (b);

    }

  remove_tree (dir);
  caml_experiment_free (part);
  caml_experiment_free (whole);
}

/* Raises the learning rate of a run's trainer once, at step `at`. */
typedef struct {
  CamlRun *run;
  long     at;
  gboolean done;
} LrBump;

static void
lr_bump_notify (gpointer user_data)
{
  LrBump *bump = user_data;
  CamlProgress p;
  caml_run_get_progress (bump->run, &p);
  if (!bump->done && p.step == bump->at)
    {
      caml_trainer_set_lr (caml_run_get_trainer (bump->run), 1e30);
      bump->done = TRUE;
    }
}

/* Continue after a divergence goes back to the last healthy evaluation in
 * that evaluation's whole state: the run is then the one stopped there and
 * resumed at the lower rate — the same weights, losses and evaluations bit
 * for bit, through Adam's moments, em_steps, dropout and, with
 * average_decay, the averaged weights a stopped run installs — and it can
 * be saved to go on like any other. The rate is raised to 1e30 at bump_at:
 * at 80 the divergence rolls back to 79 or 80 and Continue goes back to the
 * evaluation at 75 with a new trainer; at 75 (just after that evaluation)
 * the blown-up update is undone back to 75 itself, and the trainer goes on
 * from there — the same run either way. With `reopened`, the run blown up
 * is the reference's state at 75 saved and opened again (Open Run): its
 * checkpoint is the state it was opened with. */
static void
check_continue (double average_decay, long bump_at, gboolean reopened)
{
  GError *error = NULL;
  CamlExperiment *at75 = caml_experiment_load_data (RESUME_EXP (75), -1, "r75", &error);
  CamlExperiment *whole = caml_experiment_load_data (RESUME_EXP (140), -1, "r140", &error);
  assert_non_null (at75);
  assert_non_null (whole);
  at75->average_decay = whole->average_decay = average_decay;

  /* the reference: to step 75 at lr 0.02, then on at 0.01 */
  CamlRun *ref = resume_run (at75, NULL, NULL, TRUE);
  g_autofree char *dir = g_dir_make_tmp ("caml-continue-XXXXXX", NULL);
  g_autofree char *saved75 = g_build_filename (dir, "at75", NULL);
  g_autofree char *weights75 = g_build_filename (saved75, "model.weights", NULL);
  g_autofree char *state75 = g_build_filename (saved75, "trainer.state", NULL);
  if (reopened && !caml_run_save_resumable (ref, saved75, &error))
    fail_msg ("%s", error->message);
  caml_run_set_lr (ref, 0.01);
  assert_true (caml_run_extend (ref, 140, &error));
  caml_trainer_resume (caml_run_get_trainer (ref));
  assert_int_equal (caml_trainer_join (caml_run_get_trainer (ref)), CAML_TRAINER_FINISHED);

  /* evaluated at 25, 50 and 75, then blown up */
  CamlRunData *data = caml_run_data_load (whole, &error);
  assert_non_null (data);
  LrBump bump = { NULL, bump_at, FALSE };
  CamlRun *run = caml_run_new (whole, data, 8, -1, lr_bump_notify, &bump, &error);
  caml_run_data_unref (data);
  assert_non_null (run);
  bump.run = run;
  if (reopened && !(caml_run_load_weights (run, weights75, &error)
                    && caml_run_load_state (run, state75, &error)))
    fail_msg ("%s", error->message);
  assert_true (caml_trainer_start (caml_run_get_trainer (run), FALSE, &error));
  assert_int_equal (caml_trainer_join (caml_run_get_trainer (run)), CAML_TRAINER_FAILED);
  CamlDivergence where;
  assert_true (caml_run_get_divergence (run, &where));
  assert_true (where.rolled_back_to >= bump_at - 1 && where.rolled_back_to <= bump_at);
  assert_int_equal (caml_run_get_checkpoint_step (run), 75);
  g_autofree char *why = caml_run_why_not_resumable (run);
  assert_null (why);

  assert_true (caml_run_continue (run, 0.01, &error));
  assert_null (error);
  assert_int_equal (caml_trainer_join (caml_run_get_trainer (run)), CAML_TRAINER_FINISHED);
  g_autoptr (GBytes) w_ref = run_weights (ref);
  g_autoptr (GBytes) w_run = run_weights (run);
  assert_true (g_bytes_equal (w_ref, w_run));
  assert_same_history (ref, run);

  /* … and it is saved as any run is */
  g_autofree char *saved_run = g_build_filename (dir, "continued", NULL);
  if (!caml_run_save_resumable (run, saved_run, &error))
    fail_msg ("%s", error->message);
  g_autofree char *saved = g_build_filename (saved_run, "experiment.json", NULL);
  CamlExperiment *back = caml_experiment_load_file (saved, &error);
  assert_non_null (back);
  assert_true (back->optimizer.lr == 0.01);
  assert_int_equal (back->steps, 140);
  caml_experiment_free (back);

  remove_tree (dir);
  caml_run_free (run);
  caml_run_free (ref);
  caml_experiment_free (at75);
  caml_experiment_free (whole);
}

static void
test_continue_run (void **state)
{
  (void) state;
  check_continue (0, 80, FALSE);
  check_continue (0, 75, FALSE);
  check_continue (0.9, 80, FALSE);
  check_continue (0, 78, TRUE);
}

/* A text run saved to go on: its weights file, made from a model of the
 * layers alone, records the training vocabulary, so weights and state load
 * into a new run (a weights file without it, or of another vocabulary,
 * would not) and it goes on to the same weights as one run of the total. */
static void
test_resumable_text (void **state)
{
  (void) state;
  GError *error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("caml-resumable-text-XXXXXX", NULL);
  g_autofree char *train = g_build_filename (dir, "train.tsv", NULL);
  g_autofree char *test = g_build_filename (dir, "test.tsv", NULL);
  g_autofree char *saved = g_build_filename (dir, "saved", NULL);
  g_autofree char *weights = g_build_filename (saved, "model.weights", NULL);
  g_autofree char *state_path = g_build_filename (saved, "trainer.state", NULL);
  for (int f = 0; f < 2; f++)
    {
      g_autoptr (GString) text = g_string_new (NULL);
      for (int i = 0; i < (f == 0 ? 120 : 20); i++)
        g_string_append_printf (text, "a film so %s w%d w%d\t%d\n", i % 2 ? "fine" : "dull",
                                (i * 5 + f) % 17, (i * 3) % 11, i % 2);
      assert_true (g_file_set_contents (f == 0 ? train : test, text->str, -1, NULL));
    }
  CamlExperiment *exp[2];
  for (int k = 0; k < 2; k++)
    {
      g_autofree char *doc = g_strdup_printf (
        "{ \"seed\": 4, \"data\": { \"text\": { \"train\": \"%s\", \"test\": \"%s\" } },"
        "  \"model\": [ { \"layer\": \"ca_bsfe\", \"dim\": 3, \"gate_dim\": 3 },"
        "               { \"layer\": \"dense\", \"units\": 1 } ],"
        "  \"loss\": \"sigmoid_cross_entropy\","
        "  \"optimizer\": { \"type\": \"adagrad\", \"lr\": 0.1, \"em_steps\": 4 },"
        "  \"training\": { \"steps\": %d, \"batch_size\": 8, \"eval_every\": 10 } }",
        train, test, k == 0 ? 30 : 70);
      exp[k] = caml_experiment_load_data (doc, -1, "text", &error);
      if (exp[k] == NULL)
        fail_msg ("%s", error->message);
    }
  CamlRun *a = resume_run (exp[0], NULL, NULL, TRUE);
  if (!caml_run_save_resumable (a, saved, &error))
    fail_msg ("%s", error->message);
  caml_run_free (a);
  {
    /* the vocabulary's word count, after the magic and the version */
    g_autofree char *bytes = NULL;
    gsize length = 0;
    assert_true (g_file_get_contents (weights, &bytes, &length, NULL));
    assert_true (length > 16);
    guint32 n_words;
    memcpy (&n_words, bytes + 12, 4);
    assert_true (GUINT32_FROM_LE (n_words) >= 19);   /* "a film so fine dull" and w0… */
  }
  {
    /* Opened at step 30: the words' gates are of step 30 (they said 0). */
    CamlRun *opened = resume_run (exp[1], weights, state_path, FALSE);
    guint64 version = 0;
    long step = -1;
    g_autofree float *chi = g_new (float, caml_vocab_size (caml_run_get_train (opened)->vocab));
    assert_true (caml_run_copy_words (opened, &version, chi, &step, NULL, NULL));
    assert_int_equal (step, 30);
    caml_run_free (opened);
  }
  CamlRun *b = resume_run (exp[1], weights, state_path, TRUE);
  CamlRun *c = resume_run (exp[1], NULL, NULL, TRUE);
  g_autoptr (GBytes) wb = run_weights (b);
  g_autoptr (GBytes) wc = run_weights (c);
  assert_true (g_bytes_equal (wb, wc));
  assert_same_history (b, c);
  caml_run_free (b);
  caml_run_free (c);


  remove_tree (dir);
  caml_experiment_free (exp[0]);
  caml_experiment_free (exp[1]);
}

/* A run opened from a saved state shows its σ-maps (and their AUC) at the
 * saved step, not at step 0 (the maps taken by caml_run_new and
 * caml_run_load_weights before the state loaded). */
static void
test_resumable_sigma (void **state)
{
  (void) state;
  GError *error = NULL;
  char *dir = g_dir_make_tmp ("caml-run-XXXXXX", NULL);
  char *paths[4];
  CamlExperiment *exp = sigma_experiment (dir, 48, "{ \"type\": \"adagrad\", \"lr\": 0.05 }",
                                          paths);
  g_autofree char *saved = g_build_filename (dir, "saved", NULL);
  g_autofree char *weights = g_build_filename (saved, "model.weights", NULL);
  g_autofree char *state_path = g_build_filename (saved, "trainer.state", NULL);
  CamlRun *a = resume_run (exp, NULL, NULL, TRUE);
  if (!caml_run_save_resumable (a, saved, &error))
    fail_msg ("%s", error->message);
  caml_run_free (a);

  CamlRun *opened = resume_run (exp, weights, state_path, FALSE);
  assert_int_equal (caml_run_get_sigma_count (opened, NULL), 1);
  CamlSigmaSnapshot *snap = caml_run_copy_sigma (opened, 0);
  assert_int_equal (snap->step, 100);
  caml_sigma_snapshot_free (snap);
  double *steps = NULL, *auc = NULL;
  assert_int_equal (caml_run_copy_sigma_auc (opened, &steps, &auc), 1);
  assert_true (steps[0] == 100 && isfinite (auc[0]));
  g_free (steps);
  g_free (auc);
  caml_run_free (opened);

  remove_tree (saved);
  remove_files (dir, paths);
  caml_experiment_free (exp);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_surface_run),
    cmocka_unit_test (test_sigma_run),
    cmocka_unit_test (test_sigma_divergence),
    cmocka_unit_test (test_resumable_sigma),
    cmocka_unit_test (test_words_run),
    cmocka_unit_test (test_resumable_run),
    cmocka_unit_test (test_continue_run),
    cmocka_unit_test (test_resumable_text),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
