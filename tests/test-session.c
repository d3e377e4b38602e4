/* test-session.c — the workbench's CamlSession without a display: the
 * experiment, its data, its runs, its jobs on worker threads and the files
 * they read and write, driven through the calls the window makes when the
 * user acts (caml-window-actions.c hands each action to one of them). What
 * the window shows of it is tested by test-gui-*.c (gui-harness.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include <glib/gstdio.h>

#include "caml-private.h"   /* caml_data_surface, an engine internal */
#include "caml-session.h"
#include "harness.h"
#include "presets.h"

/* A session and what it said: its banner and its latest notice. */
typedef struct {
  CamlSession *session;
  char        *error;    /* the banner's message, NULL: none */
  int          banner;   /* its CamlSessionBanner */
  char        *notice;   /* the latest notice, NULL: none yet */
} Watch;

static void
on_error (CamlSession *session, int kind, const char *message, Watch *w)
{
  g_free (w->error);
  w->error = g_strdup (message);
  w->banner = kind;
}

static void
on_notice (CamlSession *session, const char *message, gboolean warning, Watch *w)
{
  g_free (w->notice);
  w->notice = g_strdup (message);
}

static Watch *
watch_new (void)
{
  Watch *w = g_new0 (Watch, 1);
  w->session = caml_session_new ();
  g_signal_connect (w->session, "error", G_CALLBACK (on_error), w);
  g_signal_connect (w->session, "notice", G_CALLBACK (on_notice), w);
  return w;
}

static void
watch_free (Watch *w)
{
  g_signal_handlers_disconnect_by_data (w->session, w);
  caml_session_close (w->session);
  g_object_unref (w->session);
  g_free (w->error);
  g_free (w->notice);
  g_free (w);
}

static gboolean
not_loading (gpointer data)
{
  return !caml_session_is_loading (((Watch *) data)->session);
}

/* Train would start now (the window's win.train is enabled). */
static gboolean
can_train (gpointer data)
{
  CamlSession *s = ((Watch *) data)->session;
  return !caml_session_is_loading (s) && caml_session_can_train (s)
         && caml_session_get_state (s) != CAML_TRAINER_RUNNING;
}

static gboolean
run_ended (gpointer data)
{
  CamlTrainerState s = caml_session_get_state (((Watch *) data)->session);
  return s == CAML_TRAINER_FINISHED || s == CAML_TRAINER_STOPPED || s == CAML_TRAINER_FAILED;
}

/* A preset, as the Presets menu opens it. */
static Watch *
watch_preset (const char *name)
{
  g_autoptr (GError) error = NULL;
  Watch *w = watch_new ();
  CamlExperiment *exp = caml_presets_load (name, &error);
  assert_non_null (exp);
  g_autofree char *origin = g_strdup_printf ("preset %s", name);
  caml_session_set_experiment (w->session, exp, NULL, origin, NULL);
  assert_true (iterate_until (not_loading, w, 30));
  return w;
}

/* An experiment file, as Open opens it. */
static Watch *
watch_file (const char *path)
{
  g_autoptr (GError) error = NULL;
  Watch *w = watch_new ();
  CamlExperiment *exp = caml_experiment_load_file (path, &error);
  assert_non_null (exp);
  caml_session_set_experiment (w->session, exp, path, NULL, NULL);
  assert_true (iterate_until (can_train, w, 30));
  return w;
}

/* The model's layer i with option key set, as the model editor hands it. */
static void
set_layer_option (Watch *w, int layer, const char *key, double value)
{
  const CamlExperiment *exp = caml_session_get_experiment (w->session);
  g_autofree CamlLayerSpec *specs = g_memdup2 (exp->layers,
                                               sizeof *specs * MAX (exp->n_layers, 1));
  int o = caml_layer_ops_option_index (specs[layer].ops, key);
  assert_true (o >= 0);
  specs[layer].opt[o] = value;
  caml_session_set_layers (w->session, specs, exp->n_layers);
}

static gboolean
data_text_has (gpointer data)
{
  Watch *w = ((gpointer *) data)[0];
  const char *text = caml_session_get_data_text (w->session, NULL);
  return text != NULL && strstr (text, ((gpointer *) data)[1]) != NULL;
}

/* ---------------------------------------------------------------- runs */

/* A model is built on a worker thread even on built-in data: a big one
 * (its untrained surface is a forward pass over the grid) took seconds on
 * the main thread, with the window frozen. The parts of the CA-NN layer
 * chosen are sampled by the build, not afterwards on the main thread. */
static void
test_build_off_main_thread (void **state)
{
  Watch *w = watch_preset ("surface-ca-nn-2");
  caml_session_set_parts_layer (w->session, 0);
  set_layer_option (w, 0, "units", 20000.0);
  assert_true (caml_session_is_loading (w->session));   /* returned at once; a job builds it */
  Stall stall = { 0, 0, g_array_new (FALSE, FALSE, sizeof (gint64)) };
  guint tick = g_timeout_add (5, on_stall_tick, &stall);
  assert_true (iterate_until (not_loading, w, 60));
  g_source_remove (tick);
  print_message ("20,000 units built while the main loop ran %u times; longest gap %.1f ms\n",
                 stall.gaps->len, stall.max_gap / 1000.0);
  assert_null (w->error);
  assert_non_null (caml_session_get_surface (w->session, NULL, NULL, NULL));
  assert_int_equal (caml_session_get_parts_layer (w->session), 0);
  assert_int_equal (caml_session_get_jobs_in_flight (), 0);   /* nothing sampled after */
  assert_true (can_train (w));
  g_array_unref (stall.gaps);
  watch_free (w);
}

/* A model the editor accepts but the build refuses (a pretrained embedding
 * without word vectors) is reported once and not built again and again;
 * a change builds again. */
static void
test_failed_build_settles (void **state)
{
  Watch *w = watch_preset ("rnn-sanity-gru");
  set_layer_option (w, 0, "pretrained", 1.0);
  assert_true (iterate_until (not_loading, w, 10));
  assert_non_null (w->error);
  assert_non_null (strstr (w->error, "embeddings"));
  assert_false (caml_session_can_train (w->session));
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (caml_session_get_jobs_in_flight (), 0);   /* no build after build */
  set_layer_option (w, 0, "pretrained", 0.0);
  assert_true (iterate_until (not_loading, w, 10));
  assert_true (caml_session_can_train (w->session));
  watch_free (w);
}

static gboolean
trained_some (gpointer data)
{
  long n = 0;
  caml_session_get_losses (((Watch *) data)->session, &n);
  return n >= 50;
}

static gboolean
another_run_trains (gpointer data)
{
  Watch *w = ((gpointer *) data)[0];
  return caml_session_peek_run (w->session) != ((gpointer *) data)[1]
         && caml_session_get_state (w->session) == CAML_TRAINER_RUNNING;
}

/* A stopped run whose steps are still ahead goes on when Step or Train is
 * pressed (the same run, one curve), unless weights chosen meanwhile are
 * loading: then Train waits for the run they make. */
static void
test_continue_stopped_run (void **state)
{
  Watch *w = watch_preset ("xor-ca-nn");
  caml_session_set_steps (w->session, 5000000);
  assert_true (iterate_until (can_train, w, 30));
  caml_session_train (w->session);
  assert_true (iterate_until (trained_some, w, 30));
  caml_session_stop (w->session);
  assert_true (iterate_until (run_ended, w, 30));
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_STOPPED);
  CamlRun *run = caml_session_peek_run (w->session);
  CamlProgress p;
  caml_run_get_progress (run, &p);
  long stopped = p.step;
  assert_true (stopped > 0 && stopped < 5000000);

  caml_session_step (w->session);   /* F7: one step on, paused */
  assert_non_null (strstr (w->notice, "stopped run goes on from step"));
  assert_ptr_equal (caml_session_peek_run (w->session), run);
  iterate_until (always_false, NULL, 0.3);
  caml_run_get_progress (run, &p);
  assert_int_equal (p.step, stopped + 1);
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_PAUSED);

  caml_session_stop (w->session);
  assert_true (iterate_until (run_ended, w, 30));
  caml_run_get_progress (run, &p);
  stopped = p.step;
  caml_session_train (w->session);   /* F5: trains on */
  assert_ptr_equal (caml_session_peek_run (w->session), run);
  iterate_until (always_false, NULL, 0.3);
  caml_run_get_progress (run, &p);
  assert_true (p.step > stopped);
  caml_session_stop (w->session);
  assert_true (iterate_until (run_ended, w, 30));
  long n = 0;
  caml_session_get_losses (w->session, &n);
  caml_run_get_progress (run, &p);
  assert_int_equal (n, p.step);   /* one curve, no restart */

  /* Weights chosen and loading when Train is pressed: Train waits for them
   * (the stopped run went on, then the loaded one replaced it, idle). */
  g_autofree char *dir = g_dir_make_tmp ("caml-session-go-on-XXXXXX", NULL);
  g_autofree char *weights = g_build_filename (dir, "w.weights", NULL);
  caml_session_save_weights (w->session, weights);
  assert_true (iterate_until (no_jobs, NULL, 30));
  caml_session_load_weights (w->session, weights);
  caml_session_train (w->session);
  gpointer other[] = { w, run };
  assert_true (iterate_until (another_run_trains, other, 60));   /* the weights' run */
  caml_session_stop (w->session);
  assert_true (iterate_until (run_ended, w, 30));

  watch_free (w);
  g_unlink (weights);
  g_rmdir (dir);
}

/* A trained run replaced by a new one (an edit, Train after it finished)
 * leaves its weights set aside with a banner, unless they were saved at
 * that step: Save Them writes the trained weights, not the new run's
 * untrained ones (which Save Weights wrote, saying it saved "the weights",
 * after an edit of the step count had dropped the trained run). */
static void
test_set_aside_weights (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-session-aside-XXXXXX", NULL);
  g_autofree char *saved = g_build_filename (dir, "saved.weights", NULL);
  g_autofree char *aside = g_build_filename (dir, "aside.weights", NULL);
  g_autofree char *fresh = g_build_filename (dir, "fresh.weights", NULL);
  Watch *w = watch_preset ("xor-ca-nn");
  assert_false (caml_session_has_set_aside (w->session, NULL, NULL));

  /* Trained and saved at its last step: nothing to set aside. (Fewer
   * steps: more would make the run go on, test_extend_finished_run.) */
  caml_session_set_steps (w->session, 60);
  assert_true (iterate_until (not_loading, w, 10));
  caml_session_train (w->session);
  assert_true (iterate_until (run_ended, w, 60));
  caml_session_save_weights (w->session, saved);
  assert_true (iterate_until (no_jobs, NULL, 30));
  caml_session_set_steps (w->session, 50);
  assert_true (iterate_until (not_loading, w, 10));
  assert_false (caml_session_has_set_aside (w->session, NULL, NULL));

  /* Trained, not saved, then the step count changes: set aside. */
  caml_session_train (w->session);
  assert_true (iterate_until (run_ended, w, 60));
  caml_session_set_steps (w->session, 40);
  assert_true (iterate_until (not_loading, w, 10));
  long step = 0;
  assert_true (caml_session_has_set_aside (w->session, &step, NULL));
  assert_int_equal (step, 50);
  assert_non_null (w->error);
  assert_int_equal (w->banner, CAML_SESSION_BANNER_SET_ASIDE);
  assert_non_null (strstr (w->error, "trained to step 50"));

  /* Saved: the trained weights, not the new run's. */
  caml_session_save_set_aside (w->session, aside);
  caml_session_save_weights (w->session, fresh);
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_false (caml_session_has_set_aside (w->session, NULL, NULL));
  assert_null (w->error);
  struct stat sa, sf;
  assert_int_equal (g_stat (aside, &sa), 0);
  assert_int_equal (g_stat (fresh, &sf), 0);
  assert_int_equal (sa.st_size, sf.st_size);
  g_autofree gchar *a_all = NULL, *f_all = NULL;
  gsize na = 0, nf = 0;
  assert_true (g_file_get_contents (aside, &a_all, &na, NULL));
  assert_true (g_file_get_contents (fresh, &f_all, &nf, NULL));
  assert_true (na == nf && memcmp (a_all, f_all, na) != 0);

  /* Train after a finished run starts afresh: set aside too; Dismiss lets
   * them go. */
  caml_session_train (w->session);
  assert_true (iterate_until (run_ended, w, 60));
  caml_session_train (w->session);
  assert_true (caml_session_has_set_aside (w->session, &step, NULL));
  assert_int_equal (step, 40);
  assert_true (iterate_until (run_ended, w, 60));
  caml_session_drop_set_aside (w->session);
  assert_false (caml_session_has_set_aside (w->session, NULL, NULL));

  g_unlink (saved);
  g_unlink (aside);
  g_unlink (fresh);
  g_rmdir (dir);
  watch_free (w);
}

/* ---------------------------------------------------------------- data */

/* The built-in data are made on a worker thread too: the largest surface
 * grid (1024²) took 93 ms on the main thread. Not once on this thread —
 * opening the experiment, a seed the split follows, another kind through
 * the picker and back; and Train pressed while they are made trains once
 * they are there. */
static void
test_data_off_main_thread (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-session-grid-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "grid.json", NULL);
  static const char json[] =
    "{ \"name\": \"big-grid\", \"seed\": 0,"
    "  \"data\": { \"builtin\": \"surface\", \"grid\": 1024 },"
    "  \"model\": [ { \"layer\": \"ca_nn\", \"units\": 4, \"activation\": \"tanh\" },"
    "               { \"layer\": \"dense\", \"units\": 1, \"activation\": \"identity\" } ],"
    "  \"loss\": \"mse\", \"optimizer\": { \"type\": \"adam\", \"lr\": 0.01 },"
    "  \"training\": { \"steps\": 20, \"batch_size\": 32, \"eval_every\": 10 } }";
  assert_true (g_file_set_contents (path, json, -1, NULL));
  guint loads = caml_run_data_get_loads_here ();
  g_autoptr (GError) error = NULL;

  Watch *w = watch_preset ("surface-ca-nn-1");
  CamlExperiment *exp = caml_experiment_load_file (path, &error);
  assert_non_null (exp);
  caml_session_set_experiment (w->session, exp, path, NULL, NULL);
  assert_true (caml_session_is_loading (w->session));   /* returned at once; a job makes them */
  assert_true (caml_session_can_train (w->session));   /* Train and Compare wait for them */
  Stall stall = { 0, 0, g_array_new (FALSE, FALSE, sizeof (gint64)) };
  guint tick = g_timeout_add (5, on_stall_tick, &stall);
  assert_true (iterate_until (not_loading, w, 60));
  g_source_remove (tick);
  print_message ("1024² surface made while the main loop ran %u times; longest gap %.1f ms\n",
                 stall.gaps->len, stall.max_gap / 1000.0);
  g_array_unref (stall.gaps);
  assert_null (w->error);
  /* 1% of 1024² for training: the new grid's data are there. */
  const char *text = caml_session_get_data_text (w->session, NULL);
  print_message ("data: %s\n", text);
  assert_non_null (strstr (text, "10486 training"));
  assert_non_null (caml_session_get_surface (w->session, NULL, NULL, NULL));
  assert_true (can_train (w));
  assert_int_equal (caml_run_data_get_loads_here (), loads);

  /* The surface split follows the seed: made again, elsewhere. */
  caml_session_set_seed (w->session, 7);
  assert_true (caml_session_is_loading (w->session));
  assert_true (iterate_until (not_loading, w, 60));
  /* Another kind and back, through the picker. */
  caml_session_use_data_kind (w->session, CAML_DATA_XOR);
  gpointer xor_shown[] = { w, "4 training" };
  assert_true (iterate_until (data_text_has, xor_shown, 10));
  assert_true (iterate_until (not_loading, w, 10));
  caml_session_use_data_kind (w->session, CAML_DATA_SURFACE);
  gpointer surface_shown[] = { w, "10486 training" };
  assert_true (iterate_until (data_text_has, surface_shown, 60));
  assert_true (iterate_until (not_loading, w, 60));
  assert_null (w->error);

  /* Train pressed while the data are made trains once they are there. */
  caml_session_set_seed (w->session, 8);
  assert_true (caml_session_is_loading (w->session));
  caml_session_train (w->session);
  assert_true (iterate_until (run_ended, w, 60));
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_FINISHED);

  assert_int_equal (caml_run_data_get_loads_here (), loads);   /* none on this thread */
  watch_free (w);
  g_unlink (path);
  g_rmdir (dir);
}

/* Reads of data sets since reads, once every job has ended. */
static guint
reads_since (Watch *w, guint reads)
{
  assert_true (iterate_until (not_loading, w, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  return caml_run_data_get_loads () - reads;
}

/* Data chosen are read once: Reload Data while they load reads the data
 * in use again, not them, and so does a new seed that the data in use
 * follow; picked again while they load, they are not read again either.
 * Reload Data once they are used reads them again, and a choice that
 * replaces them while they load is read and used. */
static void
test_data_choice_read_once (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-session-once-XXXXXX", NULL);
  char *idx[4];
  char *saved_dir = write_fake_mnist (dir, idx);
  Watch *w = watch_preset ("surface-ca-nn-1");
  assert_true (iterate_until (can_train, w, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  guint reads = caml_run_data_get_loads ();

  /* XOR, and at once another seed: the surface in use and XOR, once each. */
  caml_session_use_data_kind (w->session, CAML_DATA_XOR);
  caml_session_set_seed (w->session, 7);
  assert_int_equal (reads_since (w, reads), 2);
  assert_int_equal (caml_session_get_experiment (w->session)->data.kind, CAML_DATA_XOR);

  /* MNIST, and at once Reload Data: XOR and MNIST, once each. */
  reads = caml_run_data_get_loads ();
  caml_session_use_data_kind (w->session, CAML_DATA_MNIST);
  caml_session_reload_data (w->session);
  assert_int_equal (reads_since (w, reads), 2);
  assert_null (w->error);
  assert_int_equal (caml_session_get_experiment (w->session)->data.kind, CAML_DATA_MNIST);

  /* Reload Data once MNIST is used: read again. */
  reads = caml_run_data_get_loads ();
  caml_session_reload_data (w->session);
  assert_int_equal (reads_since (w, reads), 1);

  /* The surface, picked again while it is made: made once. */
  reads = caml_run_data_get_loads ();
  caml_session_use_data_kind (w->session, CAML_DATA_SURFACE);
  caml_session_use_data_kind (w->session, CAML_DATA_SURFACE);
  assert_int_equal (reads_since (w, reads), 1);
  assert_int_equal (caml_session_get_experiment (w->session)->data.kind, CAML_DATA_SURFACE);

  /* MNIST, Reload Data, then XOR at once: XOR is read and used, MNIST's
   * read is dropped. */
  reads = caml_run_data_get_loads ();
  caml_session_use_data_kind (w->session, CAML_DATA_MNIST);
  caml_session_reload_data (w->session);
  caml_session_use_data_kind (w->session, CAML_DATA_XOR);
  assert_int_equal (reads_since (w, reads), 3);
  assert_null (w->error);
  assert_int_equal (caml_session_get_experiment (w->session)->data.kind, CAML_DATA_XOR);
  assert_int_equal (caml_session_get_data_choice (w->session), CAML_DATA_XOR);

  watch_free (w);
  assert_true (iterate_until (no_jobs, NULL, 60));
  remove_fake_mnist (dir, idx, saved_dir);
}

/* Another experiment on other text files: the previous run's curves go
 * (its losses are on other data); the same files opened again keep them. */
static void
test_previous_other_data (void **state)
{
  g_autofree char *dir_a = g_dir_make_tmp ("caml-session-prev-a-XXXXXX", NULL);
  g_autofree char *dir_b = g_dir_make_tmp ("caml-session-prev-b-XXXXXX", NULL);
  const char *layers = "{ \"layer\": \"embedding\", \"dim\": 4 }, { \"layer\": \"mean_pool\" }";
  g_autofree char *a = write_words_experiment (dir_a, "", layers, 20);
  g_autofree char *b = write_words_experiment (dir_b, "", layers, 20);
  Watch *w = watch_file (a);
  long n = 0;
  const CamlEvalRow *rows = NULL;
  int n_rows = 0;
  gboolean classification = FALSE;
  caml_session_train (w->session);
  assert_true (iterate_until (run_ended, w, 60));
  caml_session_train (w->session);   /* again: the first is the previous run */
  assert_true (iterate_until (run_ended, w, 60));
  assert_non_null (caml_session_get_previous_losses (w->session, &n, &rows, &n_rows,
                                                     &classification));
  g_autoptr (GError) error = NULL;
  CamlExperiment *same = caml_experiment_load_file (a, &error);
  caml_session_set_experiment (w->session, same, a, NULL, NULL);   /* the same data: kept */
  assert_true (iterate_until (can_train, w, 30));
  assert_non_null (caml_session_get_previous_losses (w->session, &n, &rows, &n_rows,
                                                     &classification));
  CamlExperiment *other = caml_experiment_load_file (b, &error);
  caml_session_set_experiment (w->session, other, b, NULL, NULL);
  assert_true (iterate_until (can_train, w, 30));
  assert_null (caml_session_get_previous_losses (w->session, &n, &rows, &n_rows,
                                                 &classification));
  assert_int_equal (n, 0);
  watch_free (w);
  remove_words_experiment (dir_a);
  remove_words_experiment (dir_b);
}

/* ------------------------------------------------------------ weights */

/* Whether the run's weights, saved on a worker thread, are file's bytes. */
static gboolean
weights_equal (Watch *w, const char *dir, const char *file)
{
  g_autofree char *out = g_build_filename (dir, "out.weights", NULL);
  caml_session_save_weights (w->session, out);   /* written on a worker thread */
  assert_true (iterate_until (no_jobs, NULL, 30));
  g_autofree char *a = NULL, *b = NULL;
  gsize na = 0, nb = 0;
  assert_true (g_file_get_contents (file, &a, &na, NULL));
  assert_true (g_file_get_contents (out, &b, &nb, NULL));
  g_unlink (out);
  return na == nb && memcmp (a, b, na) == 0;
}

/* Load Weights builds a fresh run with them on a worker thread: saved back,
 * they are the same bytes, and a change before Train keeps them. A second
 * load at once wins over the first; another experiment opened meanwhile
 * drops the request. A file that is not weights leaves an error that names
 * it, and the run — trained — as it was, not started by a Train pressed
 * meanwhile. */
static void
test_load_weights (void **state)
{
  (void) state;
  g_autofree char *dir = g_dir_make_tmp ("caml-session-weights-XXXXXX", NULL);
  g_autofree char *exp_path = g_build_filename (dir, "xor.json", NULL);
  g_autofree char *exp2_path = g_build_filename (dir, "xor2.json", NULL);
  g_autofree char *wa = g_build_filename (dir, "a.weights", NULL);
  g_autofree char *wb = g_build_filename (dir, "b.weights", NULL);
  g_autofree char *trained = g_build_filename (dir, "trained.weights", NULL);
  g_autofree char *bad = g_build_filename (dir, "bad.weights", NULL);
  static const char json[] =
    "{ \"name\": \"xor\", \"seed\": 0, \"data\": { \"builtin\": \"xor\" },"
    "  \"model\": [ { \"layer\": \"ca_nn\", \"units\": 1, \"activation\": \"tanh\" } ],"
    "  \"loss\": \"mse\", \"optimizer\": { \"type\": \"adam\", \"lr\": 0.1 },"
    "  \"training\": { \"steps\": 20, \"batch_size\": 0, \"eval_every\": 10 } }";
  assert_true (g_file_set_contents (exp_path, json, -1, NULL));
  g_autofree char *json2 = g_strdup (json);
  memcpy (strstr (json2, "\"seed\": 0"), "\"seed\": 7", 9);
  assert_true (g_file_set_contents (exp2_path, json2, -1, NULL));
  assert_true (g_file_set_contents (bad, "not weights", -1, NULL));

  /* Two sets of weights of the same model, none of them its initial value. */
  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (json, -1, "xor", &error);
  assert_non_null (exp);
  CamlDataset *train = NULL, *test = NULL;
  assert_true (caml_experiment_load_datasets (exp, &train, &test, &error));
  CamlModel *model = caml_experiment_build_model_for (exp, train, &error);
  assert_non_null (model);
  for (size_t i = 0; i < model->n_weights; i++)
    model->w[i] = 0.25f + 0.125f * (float) i;
  assert_true (caml_weights_save (model, wa, &error));
  for (size_t i = 0; i < model->n_weights; i++)
    model->w[i] = -0.5f + 0.0625f * (float) i;
  assert_true (caml_weights_save (model, wb, &error));

  Watch *w = watch_file (exp_path);

  caml_session_load_weights (w->session, wa);
  assert_true (caml_session_is_loading (w->session));   /* built on a worker thread */
  assert_true (caml_session_get_jobs_in_flight () > 0);
  assert_true (iterate_until (can_train, w, 30));
  assert_null (w->error);
  assert_string_equal (w->notice, "Loaded the weights from a.weights");
  assert_true (weights_equal (w, dir, wa));
  assert_string_equal (w->notice, "Saved the weights to out.weights");
  caml_session_set_lr (w->session, (0.05));   /* rebuilds the run */
  assert_true (iterate_until (can_train, w, 30));
  assert_true (weights_equal (w, dir, wa));

  /* A second file at once wins, whichever job ends first. */
  caml_session_load_weights (w->session, wa);
  caml_session_load_weights (w->session, wb);
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_true (iterate_until (can_train, w, 30));
  assert_true (weights_equal (w, dir, wb));
  caml_session_set_lr (w->session, (0.1));
  assert_true (iterate_until (can_train, w, 30));
  assert_true (weights_equal (w, dir, wb));

  /* Trains on from them. */
  caml_session_train (w->session);
  assert_true (iterate_until (run_ended, w, 60));
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_FINISHED);
  caml_session_save_weights (w->session, trained);
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_false (weights_equal (w, dir, wb));

  /* A bad file: the trained run stays, Train pressed meanwhile waits and is
   * then dropped. */
  caml_session_load_weights (w->session, bad);
  caml_session_train (w->session);
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_true (iterate_until (can_train, w, 30));
  assert_non_null (w->error);
  assert_non_null (strstr (w->error, "bad.weights"));
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_FINISHED);
  assert_true (weights_equal (w, dir, trained));

  /* Another data set after a load: the next rebuild does not bring the
   * file back. */
  caml_session_load_weights (w->session, wa);
  assert_true (iterate_until (can_train, w, 30));
  assert_true (weights_equal (w, dir, wa));
  /* … and the bad file's error goes with a load that worked (it stayed up
   * beside "Loaded the weights from a.weights"). */
  assert_null (w->error);
  caml_session_use_data_kind (w->session, CAML_DATA_SURFACE);
  assert_true (iterate_until (can_train, w, 30));
  assert_false (weights_equal (w, dir, wa));
  caml_session_set_lr (w->session, (0.02));
  assert_true (iterate_until (can_train, w, 30));
  assert_false (weights_equal (w, dir, wa));

  /* Another experiment opened while weights load: they are not applied to
   * it, now or when it is rebuilt, and Train pressed there trains it. */
  caml_session_load_weights (w->session, wa);
  caml_session_set_experiment (w->session, caml_experiment_load_file (exp2_path, &error),
                               exp2_path, NULL, NULL);
  caml_session_train (w->session);
  assert_true (iterate_until (run_ended, w, 60));
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_FINISHED);
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_false (weights_equal (w, dir, wa));
  caml_session_set_lr (w->session, (0.05));
  assert_true (iterate_until (can_train, w, 30));
  assert_false (weights_equal (w, dir, wa));

  watch_free (w);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_experiment_free (exp);
  g_unlink (exp_path);
  g_unlink (exp2_path);
  g_unlink (wa);
  g_unlink (wb);
  g_unlink (trained);
  g_unlink (bad);
  g_rmdir (dir);
}

/* Save Run is there (the window's win.save-run is enabled). */
static gboolean
can_save_run (gpointer data)
{
  CamlSession *s = ((Watch *) data)->session;
  g_autofree char *why = caml_session_why_not_resumable (s);
  return caml_session_has_run (s) && why == NULL;
}

/* Saved to another file, a name that follows its file follows it — a
 * preset's, then the file's base name — and the title shows it; a name set
 * apart from the file, a run folder's experiment.json and a failed save
 * keep the name. */
static void
test_save_as_name (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-session-name-XXXXXX", NULL);
  g_autofree char *mine = g_build_filename (dir, "mine.json", NULL);
  g_autofree char *other = g_build_filename (dir, "other.json", NULL);
  g_autofree char *run = g_build_filename (dir, "experiment.json", NULL);
  g_autofree char *missing = g_build_filename (dir, "none", "x.json", NULL);
  g_autofree char *custom = g_build_filename (dir, "custom.json", NULL);
  g_autofree char *copy = g_build_filename (dir, "copy.json", NULL);
  g_autoptr (GError) error = NULL;

  g_autofree char *run_dir = g_build_filename (dir, "run", NULL);
  Watch *w = watch_preset ("xor-ca-nn");
  assert_string_equal (caml_session_get_experiment (w->session)->name, "xor-ca-nn");
  assert_true (iterate_until (can_train, w, 30));
  caml_session_train (w->session);
  assert_true (iterate_until (run_ended, w, 60));
  assert_false (caml_session_save (w->session, missing, &error));
  g_clear_error (&error);
  assert_string_equal (caml_session_get_experiment (w->session)->name, "xor-ca-nn");
  assert_true (caml_session_save (w->session, mine, &error));
  assert_string_equal (caml_session_get_experiment (w->session)->name, "mine");
  assert_false (caml_session_is_modified (w->session));
  CamlExperiment *back = caml_experiment_load_file (mine, &error);
  assert_non_null (back);
  assert_string_equal (back->name, "mine");
  assert_true (caml_experiment_equal (back, caml_session_get_experiment (w->session)));
  caml_experiment_free (back);
  assert_true (caml_session_save (w->session, mine, &error));   /* Save: the same file */
  assert_string_equal (caml_session_get_experiment (w->session)->name, "mine");
  assert_true (caml_session_save (w->session, other, &error));
  assert_string_equal (caml_session_get_experiment (w->session)->name, "other");
  assert_true (caml_session_save (w->session, run, &error));
  assert_string_equal (caml_session_get_experiment (w->session)->name, "other");
  assert_true (caml_session_save (w->session, copy, &error));   /* from experiment.json */
  assert_string_equal (caml_session_get_experiment (w->session)->name, "other");
  /* The trained run carries the name: Save Run wrote the preset's. */
  assert_true (iterate_until (can_save_run, w, 10));
  caml_session_save_run (w->session, run_dir);
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_null (w->error);
  g_autofree char *run_exp = g_build_filename (run_dir, "experiment.json", NULL);
  back = caml_experiment_load_file (run_exp, &error);
  assert_non_null (back);
  assert_string_equal (back->name, "other");
  caml_experiment_free (back);
  watch_free (w);

  static const char json[] = "{ \"name\": \"kept\", \"data\": { \"builtin\": \"xor\" } }";
  assert_true (g_file_set_contents (custom, json, -1, NULL));
  w = watch_file (custom);
  assert_true (caml_session_save (w->session, copy, &error));
  assert_string_equal (caml_session_get_experiment (w->session)->name, "kept");
  back = caml_experiment_load_file (copy, &error);
  assert_non_null (back);
  assert_string_equal (back->name, "kept");
  caml_experiment_free (back);
  watch_free (w);

  const char *const files[] = { mine, other, run, custom, copy };
  for (size_t i = 0; i < G_N_ELEMENTS (files); i++)
    g_unlink (files[i]);
  for (int i = 0; caml_run_resumable_files[i] != NULL; i++)
    {
      g_autofree char *file = g_build_filename (run_dir, caml_run_resumable_files[i], NULL);
      g_unlink (file);
    }
  remove_tree (run_dir);
  g_rmdir (dir);
}

/* A preset saved as it is keeps its description and paper figure; saved
 * after an edit it is no longer the preset: the description says it was
 * edited from it and the paper's figure — the preset's claim — goes,
 * named in the description. A name that follows the file is no edit. */
static void
test_save_edited_preset (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-session-edited-XXXXXX", NULL);
  g_autofree char *same = g_build_filename (dir, "same.json", NULL);
  g_autofree char *edited = g_build_filename (dir, "edited.json", NULL);
  g_autoptr (GError) error = NULL;
  CamlExperiment *preset = caml_presets_load ("surface-ca-nn-1", &error);
  assert_non_null (preset);
  assert_non_null (preset->paper);

  Watch *w = watch_preset ("surface-ca-nn-1");
  assert_true (caml_session_save (w->session, same, &error));
  CamlExperiment *back = caml_experiment_load_file (same, &error);
  assert_non_null (back);
  assert_string_equal (back->description, preset->description);
  assert_string_equal (back->paper, preset->paper);
  caml_experiment_free (back);

  caml_session_set_steps (w->session, preset->steps * 2);
  assert_true (caml_session_save (w->session, edited, &error));
  back = caml_experiment_load_file (edited, &error);
  assert_non_null (back);
  assert_null (back->paper);
  assert_true (g_str_has_prefix (back->description, "edited from preset surface-ca-nn-1: "));
  assert_non_null (strstr (back->description, preset->description));
  assert_non_null (strstr (back->description, preset->paper));
  caml_experiment_free (back);
  /* saved again, it is marked once */
  g_autofree char *first = g_strdup (caml_session_get_experiment (w->session)->description);
  assert_true (caml_session_save (w->session, edited, &error));
  assert_string_equal (caml_session_get_experiment (w->session)->description, first);
  watch_free (w);
  caml_experiment_free (preset);

  g_unlink (same);
  g_unlink (edited);
  g_rmdir (dir);
}

/* ---------------------------------------------------------- comparison */

static gboolean
baseline_done (gpointer data)
{
  CamlSession *s = ((Watch *) data)->session;
  long n = 0;
  return caml_session_baseline_ended (s) && caml_session_get_baseline_losses (s, &n) != NULL
         && !caml_session_is_loading (s);
}

/* The previous run's curves, if any. */
static gboolean
has_previous (Watch *w)
{
  long n = 0;
  const CamlEvalRow *rows = NULL;
  int n_rows = 0;
  gboolean classification = FALSE;
  return caml_session_get_previous_losses (w->session, &n, &rows, &n_rows, &classification)
         != NULL;
}

static void
on_compare_notify (CamlSession *session, GParamSpec *pspec, int *count)
{
  (*count)++;
}

/* Compare with Baseline is a setting: turned on before any run, nothing
 * trains (the drive that found it: model and baseline trained to the end
 * by themselves, and Train then trained both again). Train starts the
 * pair; turned on after a run has ended, only the baseline trains, to the
 * run's step, and the run stays as it was. */
static void
test_compare_is_a_setting (void **state)
{
  Watch *w = watch_preset ("xor-ca-nn");
  int notified = 0;
  g_signal_connect (w->session, "notify::compare", G_CALLBACK (on_compare_notify), &notified);

  caml_session_set_compare (w->session, TRUE);
  assert_int_equal (notified, 1);
  gboolean on = FALSE;
  g_object_get (w->session, "compare", &on, NULL);
  assert_true (on);
  iterate_until (always_false, NULL, 0.3);
  assert_true (iterate_until (no_jobs, NULL, 10));
  assert_false (caml_session_has_run (w->session));
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_IDLE);
  assert_null (caml_session_peek_baseline (w->session));
  long n = -1;
  caml_session_get_losses (w->session, &n);
  assert_int_equal (n, 0);
  assert_false (has_previous (w));

  /* Train: the model and its baseline, side by side. */
  caml_session_train (w->session);
  assert_true (iterate_until (run_ended, w, 60));
  assert_true (iterate_until (baseline_done, w, 60));
  long steps = caml_session_get_experiment (w->session)->steps;
  caml_session_get_losses (w->session, &n);
  assert_int_equal (n, steps);
  caml_session_get_baseline_losses (w->session, &n);
  assert_int_equal (n, steps);
  /* Nothing ran before Train: no previous run under the curves. */
  assert_false (has_previous (w));

  /* Off, then on after the run ended: the baseline alone, to its step. */
  g_object_set (w->session, "compare", FALSE, NULL);
  assert_int_equal (notified, 2);
  assert_null (caml_session_get_baseline_losses (w->session, &n));
  g_autofree float *before = g_memdup2 (caml_session_get_losses (w->session, &n),
                                        sizeof (float) * steps);
  caml_session_set_compare (w->session, TRUE);
  assert_true (iterate_until (baseline_done, w, 60));
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_FINISHED);
  const float *after = caml_session_get_losses (w->session, &n);
  assert_int_equal (n, steps);
  assert_memory_equal (after, before, sizeof (float) * steps);   /* not trained again */
  caml_session_get_baseline_losses (w->session, &n);
  assert_int_equal (n, steps);
  assert_false (has_previous (w));
  watch_free (w);
}

/* ---------------------------------------------------------------- speed */

typedef struct {
  CamlSession *session;
  long         last_step;
  long         max_delta;     /* most steps between two updates */
  int          step_updates;  /* updates that showed new steps */
  int          surfaces;      /* updates with a new surface */
  gboolean     seen_running;  /* shown RUNNING while the trainer waits between grants */
  char        *line;          /* a progress line while it ran */
} Pace;

static void
on_pace_progress (CamlSession *session, guint what, Pace *pace)
{
  long n = 0;
  caml_session_get_losses (session, &n);
  if (n != pace->last_step)
    {
      pace->max_delta = MAX (pace->max_delta, n - pace->last_step);
      pace->last_step = n;
      pace->step_updates++;
    }
  if (what & CAML_SESSION_SURFACE)
    pace->surfaces++;
  if (caml_session_get_state (session) == CAML_TRAINER_RUNNING)
    {
      pace->seen_running = TRUE;
      double fraction;
      char *text = NULL, *status = NULL;
      if (pace->line == NULL && caml_session_describe_progress (session, &fraction, &text, &status))
        pace->line = g_strdup_printf ("%s | %s", text, status);
      g_free (text);
      g_free (status);
    }
}

/* Slow motion: the trainer stays on its thread, paused, and the session's
 * tick grants `speed` steps at a time, each grant shown (every plot: the
 * surface is sampled after every step) before the next. Counted in steps
 * and grants, not seconds. */
static void
test_speed_slow_motion (void **state)
{
  Watch *w = watch_preset ("surface-ca-nn-1");
  caml_session_set_steps (w->session, 60);
  assert_true (iterate_until (can_train, w, 30));
  g_object_set (w->session, "speed", 3, NULL);
  assert_int_equal (caml_session_get_speed (w->session), 3);
  Pace pace = { w->session };
  g_signal_connect (w->session, "progress", G_CALLBACK (on_pace_progress), &pace);

  caml_session_train (w->session);
  assert_true (iterate_until (run_ended, w, 120));
  iterate_until (always_false, NULL, 0.2);
  print_message ("60 steps at 3 a tick: %u grants, %d updates with new steps (at most %ld "
                 "apart), %d surfaces; \"%s\"\n", caml_session_get_pace_ticks (w->session),
                 pace.step_updates, pace.max_delta, pace.surfaces, pace.line);
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_FINISHED);
  long n = 0;
  caml_session_get_losses (w->session, &n);
  assert_int_equal (n, 60);
  assert_true (pace.max_delta <= 3);
  assert_true (pace.step_updates >= 20);
  assert_true (caml_session_get_pace_ticks (w->session) >= 20);
  assert_true (pace.surfaces >= 20);
  assert_true (pace.seen_running);

  /* Full speed, then slowed while it trains: at once, still off the main
   * thread; back to full speed, it runs to the end. */
  caml_session_set_speed (w->session, 0);
  caml_session_set_steps (w->session, 2000000);
  assert_true (iterate_until (can_train, w, 30));
  caml_session_train (w->session);
  assert_true (iterate_until (not_loading, w, 10));
  caml_session_set_speed (w->session, 2);
  guint ticks = caml_session_get_pace_ticks (w->session);
  pace.max_delta = 0;
  caml_session_get_losses (w->session, &pace.last_step);
  iterate_until (always_false, NULL, 0.5);
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_RUNNING);
  assert_true (caml_session_get_pace_ticks (w->session) > ticks);
  assert_true (pace.max_delta <= 2 + 1);   /* a step under way when it slowed */
  caml_session_pause (w->session);
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_PAUSED);
  caml_session_stop (w->session);
  assert_true (iterate_until (run_ended, w, 30));
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_STOPPED);
  g_signal_handlers_disconnect_by_data (w->session, &pace);
  g_free (pace.line);
  watch_free (w);
}

static gboolean
trained_past (gpointer data)
{
  Watch *w = ((gpointer *) data)[0];
  long n = 0;
  caml_session_get_losses (w->session, &n);
  return n > GPOINTER_TO_INT (((gpointer *) data)[1]);
}

/* Train until stopped: the run goes past its Steps, with its baseline,
 * until Stop, and keeps what it trained. */
static void
test_train_until_stopped (void **state)
{
  Watch *w = watch_preset ("xor-ca-nn");
  caml_session_set_steps (w->session, 200);
  caml_session_set_compare (w->session, TRUE);
  assert_true (iterate_until (can_train, w, 30));
  g_object_set (w->session, "continuous", TRUE, NULL);
  assert_true (caml_session_get_continuous (w->session));
  Pace pace = { w->session };
  g_signal_connect (w->session, "progress", G_CALLBACK (on_pace_progress), &pace);
  caml_session_train (w->session);
  gpointer past[] = { w, GINT_TO_POINTER (5000) };
  assert_true (iterate_until (trained_past, past, 120));
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_RUNNING);
  caml_session_stop (w->session);
  assert_true (iterate_until (run_ended, w, 30));
  iterate_until (always_false, NULL, 0.2);
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_STOPPED);
  long n = 0;
  caml_session_get_losses (w->session, &n);
  assert_true (n > 5000);
  CamlProgress p;
  caml_run_get_progress (caml_session_peek_run (w->session), &p);
  assert_int_equal (p.step, n);   /* the run and its weights stay, at that step */
  assert_non_null (pace.line);
  assert_non_null (strstr (pace.line, "until stopped"));
  assert_int_equal (caml_session_get_experiment (w->session)->steps, 200);
  g_signal_handlers_disconnect_by_data (w->session, &pace);
  g_free (pace.line);
  watch_free (w);
}

/* After Compare the numbers compare too: the status gives the baseline's
 * test figure beside the model's and their difference, and the σ-maps'
 * last AUC; the metrics export (Ctrl+E) has the baseline's columns and
 * sigma_auc. */
static void
test_comparison_numbers (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-session-compare-XXXXXX", NULL);
  const char *names[] = { "train-images", "train-labels", "test-images", "test-labels" };
  char *paths[4];
  for (int i = 0; i < 4; i++)
    paths[i] = g_build_filename (dir, names[i], NULL);
  write_idx_pair (paths[0], paths[1], 200, 1);
  write_idx_pair (paths[2], paths[3], 120, 2);
  g_autofree char *json = g_strdup_printf (
    "{ \"name\": \"idx-ca-cnn\", \"seed\": 0,"
    "  \"data\": { \"idx\": { \"train_images\": \"%s\", \"train_labels\": \"%s\","
    "                        \"test_images\": \"%s\", \"test_labels\": \"%s\" } },"
    "  \"model\": [ { \"layer\": \"ca_cnn\", \"kernel\": 3, \"depth\": 2 },"
    "               { \"layer\": \"flatten\" },"
    "               { \"layer\": \"dense\", \"units\": 10, \"activation\": \"identity\" } ],"
    "  \"loss\": \"softmax_cross_entropy\","
    "  \"optimizer\": { \"type\": \"adagrad\", \"lr\": 0.01 },"
    "  \"training\": { \"steps\": 30, \"batch_size\": 20, \"eval_every\": 10 } }",
    paths[0], paths[1], paths[2], paths[3]);
  g_autofree char *exp_path = g_build_filename (dir, "idx.json", NULL);
  g_autofree char *csv_path = g_build_filename (dir, "metrics.csv", NULL);
  assert_true (g_file_set_contents (exp_path, json, -1, NULL));

  Watch *w = watch_file (exp_path);
  double model, baseline, auc;
  caml_session_get_comparison (w->session, &model, &baseline, &auc);
  assert_true (isnan (baseline));   /* no baseline yet */
  caml_session_set_compare (w->session, TRUE);
  caml_session_train (w->session);
  assert_true (iterate_until (run_ended, w, 120));
  assert_true (iterate_until (baseline_done, w, 120));
  iterate_until (always_false, NULL, 0.3);

  assert_true (caml_session_get_comparison (w->session, &model, &baseline, &auc));
  assert_true (isfinite (model) && isfinite (baseline) && isfinite (auc));
  int n_rows = 0;
  const CamlEvalRow *rows = caml_session_get_rows (w->session, &n_rows);
  assert_true (model == rows[n_rows - 1].test_metric);
  double fraction;
  g_autofree char *text = NULL, *status = NULL;
  assert_true (caml_session_describe_progress (w->session, &fraction, &text, &status));
  print_message ("%s | %s\n", text, status);
  assert_non_null (strstr (status, "accuracy"));
  /* one style for the line: each a sentence */
  assert_true (g_ascii_isupper (text[0]));
  assert_true (g_ascii_isupper (status[0]));
  assert_non_null (strstr (status, "baseline"));
  assert_non_null (strstr (status, "difference"));
  assert_non_null (strstr (status, "σ-AUC"));

  g_autoptr (GError) error = NULL;
  assert_true (caml_session_write_metrics (w->session, csv_path, &error));
  g_autofree char *csv = NULL;
  assert_true (g_file_get_contents (csv_path, &csv, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (csv, "\n", -1);
  print_message ("%s\n%s\n", lines[0], lines[n_rows]);
  assert_string_equal (lines[0], "step,train_loss,test_loss,test_accuracy,seconds,"
                       "baseline_train_loss,baseline_test_loss,baseline_test_accuracy,"
                       "sigma_auc");
  g_auto (GStrv) last = g_strsplit (lines[n_rows], ",", -1);
  assert_int_equal (g_strv_length (last), 9);
  assert_true (g_ascii_strtod (last[7], NULL) == baseline);
  assert_true (*last[8] != '\0');
  watch_free (w);
  for (int i = 0; i < 4; i++)
    {
      g_unlink (paths[i]);
      g_free (paths[i]);
    }
  g_unlink (exp_path);
  g_unlink (csv_path);
  g_rmdir (dir);
}

/* ---------------------------------------------------------- moved from
 * the window tests: what they asserted of the session, headless */

/* Compare with Baseline, then Stop before the baseline is built: no
 * baseline trains on behind the stopped run. */
static void
test_baseline_after_stop (void **state)
{
  Watch *w = watch_preset ("surface-ca-nn-1");
  caml_session_set_steps (w->session, 1000000);
  assert_true (iterate_until (can_train, w, 10));
  caml_session_train (w->session);
  assert_true (iterate_until (not_loading, w, 10));
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_RUNNING);
  caml_session_set_compare (w->session, TRUE);   /* win.compare-baseline */
  caml_session_stop (w->session);
  assert_true (iterate_until (no_jobs, NULL, 10));
  assert_true (iterate_until (run_ended, w, 10));
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_STOPPED);
  assert_null (caml_session_peek_baseline (w->session));
  assert_false (caml_session_is_loading (w->session));
  watch_free (w);
}

static gboolean
run_failed_or_finished (gpointer data)
{
  CamlTrainerState s = caml_session_get_state (((Watch *) data)->session);
  return s == CAML_TRAINER_FAILED || s == CAML_TRAINER_FINISHED;
}

/* Plain SGD at lr 10 on a linear readout overflows within a few steps. The
 * banner names the step and offers to continue from the last evaluation at
 * a tenth of the rate; the loss history up to there is kept. (The window's
 * Continue button: test-gui-runs.c, test_divergence_feedback.) */
static void
test_divergence (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-session-div-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "div.json", NULL);
  const char *json =
    "{ \"name\": \"diverges\", \"seed\": 0, \"data\": { \"builtin\": \"surface\" },"
    "  \"model\": [ { \"layer\": \"ca_nn\", \"units\": 5 },"
    "               { \"layer\": \"dense\", \"units\": 1, \"activation\": \"identity\" } ],"
    "  \"loss\": \"mse\", \"optimizer\": { \"type\": \"sgd\", \"lr\": 10 },"
    "  \"training\": { \"steps\": 400, \"eval_every\": 2 } }";
  assert_true (g_file_set_contents (path, json, -1, NULL));
  Watch *w = watch_file (path);

  caml_session_train (w->session);
  assert_true (iterate_until (run_failed_or_finished, w, 60));
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_FAILED);
  const char *msg = w->error;
  assert_non_null (msg);
  print_message ("banner: %s\n", msg);
  assert_int_equal (w->banner, CAML_SESSION_BANNER_DIVERGED);
  assert_non_null (strstr (msg, "diverged"));
  assert_non_null (strstr (msg, "step "));
  /* One story: Continue goes on from where the weights are, or says it
   * goes back further than the step they were rolled back to. */
  CamlDivergence d;
  assert_true (caml_run_get_divergence (caml_session_peek_run (w->session), &d));
  long from = caml_run_get_checkpoint_step (caml_session_peek_run (w->session));
  g_autofree char *further = g_strdup_printf ("Continue goes back further, to step %ld", from);
  assert_non_null (strstr (msg, from != d.rolled_back_to ? further : "Continue from there"));

  /* Continue, a tenth of the rate each time, until a run gets through. */
  int tries = 0;
  double lr = 10;
  while (caml_session_get_state (w->session) == CAML_TRAINER_FAILED && tries < 6)
    {
      long n_before = 0;
      const float *before = caml_session_get_losses (w->session, &n_before);
      g_autofree float *kept = g_memdup2 (before, MAX (n_before, 1) * sizeof (float));
      long from = caml_session_get_resume_step (w->session);
      assert_true (from >= 0 && from <= n_before);
      caml_session_continue (w->session);   /* win.continue-diverged */
      lr /= 10;
      tries++;
      /* The banner goes — or is back already, for a continued run that
       * diverged before Continue returned. */
      assert_true (w->error == NULL
                   || caml_session_get_state (w->session) == CAML_TRAINER_FAILED);
      assert_true (fabs (caml_session_get_experiment (w->session)->optimizer.lr - lr)
                   < 1e-12 * lr);
      assert_true (iterate_until (run_failed_or_finished, w, 60));
      iterate_until (always_false, NULL, 0.2);
      /* The steps up to the checkpoint are kept as they were. */
      long n_after = 0;
      const float *after = caml_session_get_losses (w->session, &n_after);
      print_message ("continued from step %ld at lr %g: %ld steps, %s\n", from, lr, n_after,
                     caml_session_get_state (w->session) == CAML_TRAINER_FAILED ? "failed"
                                                                               : "finished");
      assert_true (n_after >= from);
      for (long i = 0; i < from; i++)
        assert_true (after[i] == kept[i]);
    }
  print_message ("finished after %d continuation(s), at lr %g\n", tries, lr);
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_FINISHED);
  long n_steps = 0;
  const float *losses = caml_session_get_losses (w->session, &n_steps);
  assert_int_equal (n_steps, 400);
  assert_true (isfinite (losses[n_steps - 1]));
  assert_true (caml_session_is_modified (w->session));   /* the experiment keeps the new rate */
  watch_free (w);
  g_unlink (path);
  g_rmdir (dir);
}

/* What a failed choice of data files must leave as it was. */
typedef struct {
  CamlExperiment  *exp;
  CamlRun         *run;
  CamlTrainerState state;
  long             n_steps;
  float           *losses;         /* (n_steps) a copy */
  gboolean         modified;
  gboolean         previous;
  CamlDataKind     data_choice;    /* what the drop-down and the menu show */
  char            *data_text;
} SessionSnapshot;

static void
take_snapshot (Watch *w, SessionSnapshot *snap)
{
  snap->exp = caml_experiment_copy (caml_session_get_experiment (w->session));
  snap->run = caml_session_peek_run (w->session);
  snap->state = caml_session_get_state (w->session);
  const float *losses = caml_session_get_losses (w->session, &snap->n_steps);
  snap->losses = g_memdup2 (losses, snap->n_steps * sizeof (float));
  snap->modified = caml_session_is_modified (w->session);
  snap->previous = has_previous (w);
  snap->data_choice = caml_session_get_data_choice (w->session);
  snap->data_text = g_strdup (caml_session_get_data_text (w->session, NULL));
}

static void
assert_unchanged (Watch *w, SessionSnapshot *snap)
{
  long n_steps = 0;
  assert_true (caml_experiment_equal (snap->exp, caml_session_get_experiment (w->session)));
  assert_ptr_equal (caml_session_peek_run (w->session), snap->run);
  assert_int_equal (caml_session_get_state (w->session), snap->state);
  const float *losses = caml_session_get_losses (w->session, &n_steps);
  assert_int_equal (n_steps, snap->n_steps);
  assert_true (n_steps == 0 || memcmp (losses, snap->losses, n_steps * sizeof (float)) == 0);
  assert_int_equal (caml_session_is_modified (w->session), snap->modified);
  assert_int_equal (has_previous (w), snap->previous);
  assert_int_equal (caml_session_get_data_choice (w->session), snap->data_choice);
  assert_string_equal (caml_session_get_data_text (w->session, NULL), snap->data_text);
}

static void
free_snapshot (SessionSnapshot *snap)
{
  caml_experiment_free (snap->exp);
  g_free (snap->losses);
  g_free (snap->data_text);
}

/* The banner shows no error: nothing, or the weights of a trained run
 * that new data replaced, set aside. */
static void
assert_no_error (Watch *w)
{
  if (w->error != NULL)
    {
      assert_true (caml_session_has_set_aside (w->session, NULL, NULL));
      assert_non_null (strstr (w->error, "set aside"));
    }
}

/* Trains twice, so there is a finished run and a previous one. */
static void
train_twice (Watch *w)
{
  for (int i = 0; i < 2; i++)
    {
      caml_session_train (w->session);
      assert_true (iterate_until (run_ended, w, 60));
    }
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_FINISHED);
  assert_true (has_previous (w));
}

/* Text files chosen, as the window's two file choosers hand them over. */
static void
use_text_files (Watch *w, const char *train, const char *test)
{
  const char *files[] = { train, test };
  caml_session_choose_files (w->session, CAML_DATA_TEXT, files, 2);
}

/* Chosen text files are loaded on a worker thread from a copy of the
 * experiment, and used only when both load: a malformed one changes
 * nothing — experiment, data, run, previous run, modified flag, data
 * choice — and the banner names the file and the line. Of two choices made
 * one after the other, the later one counts, whichever loads first. */
static void
test_text_files_failed_load (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-session-text-bad-XXXXXX", NULL);
  g_autofree char *train = g_build_filename (dir, "train.tsv", NULL);
  g_autofree char *test = g_build_filename (dir, "test.tsv", NULL);
  g_autofree char *other = g_build_filename (dir, "other-train.tsv", NULL);
  g_autofree char *no_tab = g_build_filename (dir, "no-tab.tsv", NULL);
  g_autofree char *bad_label = g_build_filename (dir, "bad-label.tsv", NULL);
  write_text_tsv (train, 400);
  write_text_tsv (test, 40);
  write_text_tsv (other, 200);
  assert_true (g_file_set_contents (no_tab, "a fine film\t1\nno label on this line\n"
                                            "the end\t0\n", -1, NULL));
  assert_true (g_file_set_contents (bad_label, "a fine film\t1\nthe end\tbad\n", -1, NULL));

  Watch *w = watch_preset ("rnn-sanity-gru");
  caml_session_set_steps (w->session, 20);
  assert_true (iterate_until (can_train, w, 30));
  train_twice (w);

  /* Built-in data, a trained run: a malformed training file. */
  SessionSnapshot snap;
  take_snapshot (w, &snap);
  use_text_files (w, no_tab, test);
  assert_true (caml_session_is_loading (w->session));
  assert_true (caml_experiment_equal (snap.exp, caml_session_get_experiment (w->session)));
  assert_true (iterate_until (not_loading, w, 30));
  assert_non_null (w->error);
  print_message ("%s\n", w->error);
  g_autofree char *where = g_strdup_printf ("%s:2:", no_tab);
  assert_non_null (strstr (w->error, where));
  assert_non_null (strstr (w->error, "no tab"));
  assert_unchanged (w, &snap);
  free_snapshot (&snap);

  /* Files that load: the data change (and the data choice with them). */
  use_text_files (w, train, test);
  assert_true (iterate_until (not_loading, w, 30));
  assert_no_error (w);
  const CamlExperiment *exp = caml_session_get_experiment (w->session);
  assert_int_equal (exp->data.kind, CAML_DATA_TEXT);
  assert_string_equal (exp->data.text_paths[0], train);
  assert_string_equal (exp->data.text_paths[1], test);
  assert_int_equal (caml_session_get_data_choice (w->session), CAML_DATA_TEXT);
  assert_non_null (strstr (caml_session_get_data_text (w->session, NULL),
                           "400 training and 40 test"));
  assert_false (has_previous (w));   /* other data */
  assert_true (iterate_until (can_train, w, 30));
  train_twice (w);

  /* Text data, a trained run: a test file with a label that is no class. */
  take_snapshot (w, &snap);
  use_text_files (w, other, bad_label);
  assert_true (iterate_until (not_loading, w, 30));
  assert_non_null (w->error);
  print_message ("%s\n", w->error);
  g_autofree char *where_label = g_strdup_printf ("%s:2:", bad_label);
  assert_non_null (strstr (w->error, where_label));
  assert_non_null (strstr (w->error, "\"bad\""));
  assert_unchanged (w, &snap);

  /* Good files, then at once bad ones: the bad choice counts. */
  use_text_files (w, other, test);
  use_text_files (w, no_tab, test);
  assert_true (iterate_until (not_loading, w, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_non_null (w->error);
  assert_non_null (strstr (w->error, where));
  assert_unchanged (w, &snap);
  free_snapshot (&snap);

  /* Bad files, then at once good ones: the good choice counts. */
  use_text_files (w, no_tab, test);
  use_text_files (w, other, test);
  assert_true (iterate_until (not_loading, w, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_no_error (w);
  assert_string_equal (caml_session_get_experiment (w->session)->data.text_paths[0], other);
  assert_non_null (strstr (caml_session_get_data_text (w->session, NULL),
                           "200 training and 40 test"));
  assert_true (iterate_until (can_train, w, 30));

  /* A session closed while its files load: the job drops what it loaded. */
  use_text_files (w, train, test);
  watch_free (w);
  assert_true (iterate_until (no_jobs, NULL, 60));

  static const char *const files[] = { "train.tsv", "test.tsv", "other-train.tsv",
                                       "no-tab.tsv", "bad-label.tsv" };
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *f = g_build_filename (dir, files[i], NULL);
      g_unlink (f);
    }
  g_rmdir (dir);
}

/* Whether the run's training set is the surface split made with seed. */
static gboolean
surface_split_of (Watch *w, guint64 seed)
{
  const CamlExperiment *exp = caml_session_get_experiment (w->session);
  CamlRun *run = caml_session_peek_run (w->session);
  CamlDataset *train = NULL, *test = NULL;

  assert_non_null (run);
  caml_data_surface (exp->data.grid, exp->data.train_fraction, seed, &train, &test);
  const CamlDataset *used = caml_run_get_data (run)->train;
  gboolean same = used->n == train->n
                  && memcmp (used->x, train->x,
                             (size_t) train->n * caml_shape_size (&train->x_shape)
                             * sizeof (float)) == 0;
  caml_dataset_free (train);
  caml_dataset_free (test);
  return same;
}

/* Data picked are used even when the data in use are read again while
 * they load — Reload Data, a seed that the surface's split follows — and
 * data that follow the seed themselves are made with the seed as it is
 * when they are used: the choice is loaded again. A run that goes on
 * while they load is not discarded for them. */
static void
test_data_choice_kept (void **state)
{
  Watch *w = watch_preset ("surface-ca-nn-1");
  assert_true (iterate_until (can_train, w, 30));
  assert_int_equal (caml_session_get_experiment (w->session)->data.kind, CAML_DATA_SURFACE);
  assert_false (caml_session_get_experiment (w->session)->data.has_split_seed);

  /* XOR, and at once another seed: the surface in use is made again, XOR is
   * still used. */
  caml_session_use_data_kind (w->session, CAML_DATA_XOR);
  caml_session_set_seed (w->session, 7);
  assert_true (iterate_until (not_loading, w, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_null (w->error);
  assert_int_equal (caml_session_get_experiment (w->session)->data.kind, CAML_DATA_XOR);
  assert_int_equal (caml_session_get_data_choice (w->session), CAML_DATA_XOR);
  assert_int_equal (caml_session_get_experiment (w->session)->seed, 7);
  assert_non_null (strstr (caml_session_get_data_text (w->session, NULL), "4 training"));

  /* The surface, and at once another seed: made with that seed. */
  caml_session_use_data_kind (w->session, CAML_DATA_SURFACE);
  caml_session_set_seed (w->session, 9);
  assert_true (iterate_until (can_train, w, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_int_equal (caml_session_get_experiment (w->session)->data.kind, CAML_DATA_SURFACE);
  assert_true (surface_split_of (w, 9));

  /* XOR, and at once Reload Data: XOR is still used. */
  caml_session_use_data_kind (w->session, CAML_DATA_XOR);
  caml_session_reload_data (w->session);
  assert_true (iterate_until (not_loading, w, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_null (w->error);
  assert_int_equal (caml_session_get_experiment (w->session)->data.kind, CAML_DATA_XOR);
  assert_int_equal (caml_session_get_data_choice (w->session), CAML_DATA_XOR);

  /* A finished run; the surface, and at once more steps: the run goes on
   * (paused, ready to resume) and is not discarded under it — the surface
   * is not used, and the banner says why. */
  caml_session_set_steps (w->session, 20);
  assert_true (iterate_until (can_train, w, 30));
  caml_session_train (w->session);
  assert_true (iterate_until (run_ended, w, 60));
  CamlRun *run = caml_session_peek_run (w->session);
  caml_session_use_data_kind (w->session, CAML_DATA_SURFACE);
  caml_session_set_steps (w->session, 40);
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_PAUSED);
  /* At once, not when the load ends: the run may end before it does. */
  const char *msg = w->error;
  assert_non_null (msg);
  print_message ("%s\n", msg);
  assert_non_null (strstr (msg, "the run went on"));
  assert_int_equal (caml_session_get_data_choice (w->session), CAML_DATA_XOR);
  assert_true (iterate_until (not_loading, w, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_int_equal (caml_session_get_experiment (w->session)->data.kind, CAML_DATA_XOR);
  assert_int_equal (caml_session_get_data_choice (w->session), CAML_DATA_XOR);
  assert_ptr_equal (caml_session_peek_run (w->session), run);
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_PAUSED);

  /* Resumed to its end, the run stays (the surface was dropped already). */
  caml_session_train (w->session);
  assert_true (iterate_until (run_ended, w, 60));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_ptr_equal (caml_session_peek_run (w->session), run);
  assert_int_equal (caml_session_get_state (w->session), CAML_TRAINER_FINISHED);
  assert_int_equal (caml_session_get_experiment (w->session)->data.kind, CAML_DATA_XOR);

  /* The surface, and at once weights loaded: they are loaded into a run on
   * the data in use, which the surface would replace — it is dropped. */
  g_autofree char *dir = g_dir_make_tmp ("caml-session-kept-XXXXXX", NULL);
  g_autofree char *weights = g_build_filename (dir, "xor.weights", NULL);
  caml_session_save_weights (w->session, weights);
  assert_true (iterate_until (no_jobs, NULL, 30));
  caml_session_use_data_kind (w->session, CAML_DATA_SURFACE);
  caml_session_load_weights (w->session, weights);
  msg = w->error;
  assert_non_null (msg);
  assert_non_null (strstr (msg, "weights were loaded meanwhile"));
  assert_int_equal (caml_session_get_data_choice (w->session), CAML_DATA_XOR);
  assert_true (iterate_until (not_loading, w, 30));
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_int_equal (caml_session_get_experiment (w->session)->data.kind, CAML_DATA_XOR);
  assert_non_null (caml_session_peek_run (w->session));
  g_unlink (weights);
  g_rmdir (dir);
  watch_free (w);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_build_off_main_thread),
    cmocka_unit_test (test_failed_build_settles),
    cmocka_unit_test (test_continue_stopped_run),
    cmocka_unit_test (test_set_aside_weights),
    cmocka_unit_test (test_data_off_main_thread),
    cmocka_unit_test (test_data_choice_read_once),
    cmocka_unit_test (test_previous_other_data),
    cmocka_unit_test (test_load_weights),
    cmocka_unit_test (test_save_as_name),
    cmocka_unit_test (test_save_edited_preset),
    cmocka_unit_test (test_compare_is_a_setting),
    cmocka_unit_test (test_speed_slow_motion),
    cmocka_unit_test (test_train_until_stopped),
    cmocka_unit_test (test_comparison_numbers),
    cmocka_unit_test (test_baseline_after_stop),
    cmocka_unit_test (test_divergence),
    cmocka_unit_test (test_text_files_failed_load),
    cmocka_unit_test (test_data_choice_kept),
  };
  /* No autosave of these sessions outlives the test. */
  g_autofree char *autosave_dir = g_dir_make_tmp ("caml-session-autosave-XXXXXX", NULL);
  g_setenv ("CAML_AUTOSAVE_DIR", autosave_dir, TRUE);
  int failed = cmocka_run_group_tests (tests, NULL, NULL);
  remove_tree (autosave_dir);
  return failed;
}
