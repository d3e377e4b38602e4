/* cli-train.c — `caml train` and `caml eval`. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <glib-unix.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "caml.h"
#include "cli.h"
#include "cli-common.h"
#include "cli-mpi.h"
#include "cli-progress.h"
#include "cli-results.h"
#include "presets.h"
#include "report.h"

/* An integer option not given on the command line. */
#define UNSET G_MININT64

/* ---------------------------------------------------------------- train */

typedef struct {
  CamlTrainer *trainer;        /* NULL while loading, and once the run has ended */
  GMainLoop   *loop;           /* waits for the load, the trainer, then the save */
  guint        sigint, sigterm;  /* the signal sources, 0 once removed */
  gboolean     loading;        /* the data and the model are being loaded */
  gboolean     tty;
  gboolean     quiet;
  int          rows_printed;
  int          signal;         /* the first SIGINT or SIGTERM heard, or 0 */
  const char  *evaluated_on;   /* "test" or "validation" (caml_report_evaluated_on) */
  const char  *staging;        /* the results being written, or NULL */
  const char  *out_dir;
  GPtrArray   *made_dirs;      /* the directories of out_dir's path this run made (caml_cli_make_dirs) */
  gboolean     ended;          /* nothing left to stop or abort: a signal now only ends the process */
  gboolean     kept;           /* once ended: the results are in place */
  gboolean     replica;        /* a rank past the first: trains silently */
  const char  *checkpoint_dir; /* on several ranks: the first's checkpoints */
} Run;

static const char *
state_name (CamlTrainerState state)
{
  switch (state)
    {
    case CAML_TRAINER_IDLE: return "idle";
    case CAML_TRAINER_RUNNING: return "running";
    case CAML_TRAINER_PAUSED: return "paused";
    case CAML_TRAINER_FINISHED: return "finished";
    case CAML_TRAINER_STOPPED: return "stopped";
    case CAML_TRAINER_FAILED: return "failed";
    }
  return "?";
}

/* The bar redrawn in place, within the terminal's width (read each time:
 * the window may be resized), the rest of the old line erased. */
static void
print_bar (const CamlProgress *p, const char *evaluated_on)
{
  g_autofree char *line = caml_cli_progress_line (p, evaluated_on,
                                                  caml_cli_terminal_columns (STDERR_FILENO));
  g_printerr ("\r%s\033[K", line);
}

/* A line of --plain output: one evaluation. */
static void
print_row (const CamlEvalRow *row, gboolean classification, const char *evaluated_on)
{
  g_print ("step %ld  train_loss %.6g  %s_loss %.6g  %s_%s %.6g  %.1fs", row->step,
           row->train_loss, evaluated_on, row->test_loss, evaluated_on,
           classification ? "accuracy" : "mse", row->test_metric, row->seconds);
  /* Text: the mean rate so far, over the time spent training. */
  double training = row->seconds - row->eval_seconds;
  if (row->tokens > 0 && training > 0)
    g_print ("  %.0f tokens/s", row->tokens / training);
  g_print ("\n");
}

static gboolean
on_tick (gpointer user_data)
{
  Run *run = user_data;
  CamlProgress p;
  caml_trainer_get_progress (run->trainer, &p);
  gboolean done = p.state == CAML_TRAINER_FINISHED || p.state == CAML_TRAINER_STOPPED
                  || p.state == CAML_TRAINER_FAILED;

  if (!run->quiet && run->tty)
    print_bar (&p, run->evaluated_on);
  else if (!run->quiet && p.n_rows > run->rows_printed)
    {
      int n = 0;
      g_autofree CamlEvalRow *rows = caml_trainer_copy_rows (run->trainer, &n);
      for (int i = run->rows_printed; i < n; i++)
        print_row (&rows[i], p.classification, run->evaluated_on);
      run->rows_printed = n;
    }
  if (done)
    {
      if (!run->quiet && run->tty)
        g_printerr ("\n");
      g_main_loop_quit (run->loop);
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_CONTINUE;
}

/* The first Ctrl+C (or SIGTERM) stops the run, which then evaluates and
 * saves what it trained, saying so at once (that takes a while on large
 * data); a second aborts: the results being written are removed, and the
 * output directory keeps what it held. The save runs on a thread of its
 * own, so the main loop is here to hear the second. While the data load
 * (on a thread too: IMDB takes seconds) the first says that nothing will
 * be written, and the run ends when the load returns; a second ends it at
 * once. The process then ends by the first signal (caml_cli_end_by_signal),
 * so that a shell loop around it stops too. */
static gboolean
on_interrupt (Run *run, int signal)
{
  if (run->signal == 0)
    caml_cli_heard_signal (signal);
  if (run->ended)
    {
      if (run->signal == 0)
        {
          run->signal = signal;
          g_printerr ("%s: interrupted after the run had ended%s\n", g_get_prgname (),
                      run->kept ? ": its results are in place" : "");
        }
      return G_SOURCE_CONTINUE;
    }
  if (run->loading)
    {
      if (run->signal == 0)
        {
          run->signal = signal;
          g_printerr ("%s: interrupted while loading the data: stopping; nothing written\n",
                      g_get_prgname ());
          return G_SOURCE_CONTINUE;
        }
      /* nothing of the run's is being written: the load is abandoned */
      g_printerr ("%s: aborted while loading the data; nothing written\n", g_get_prgname ());
      fflush (stdout);
      caml_cli_end_by_signal (run->signal);
    }
  if (run->replica)
    {
      /* the first rank says what happens; a second signal ends this one */
      if (run->signal != 0)
        caml_cli_end_by_signal (run->signal);
      run->signal = signal;
      caml_trainer_stop (run->trainer);
      return G_SOURCE_CONTINUE;
    }
  if (run->signal == 0)
    {
      run->signal = signal;
      if (run->trainer != NULL)
        caml_trainer_stop (run->trainer);
      /* once the trainer has ended, the results are being written */
      g_printerr ("%s%s: %s (Ctrl-C again to abort)\n",
                  run->tty && !run->quiet ? "\r\033[K" : "", g_get_prgname (),
                  run->trainer != NULL ? "stopping: evaluating and saving the results"
                                       : "interrupted while saving the results: saving them");
      if (run->trainer != NULL && run->checkpoint_dir != NULL)
        {
          /* mpirun ends the other ranks when one goes: they may not finish */
          CamlProgress p;
          caml_trainer_get_progress (run->trainer, &p);
          g_printerr ("%s: at step %ld of %ld; should the job end first, `caml train "
                      "--resume %s --out %s` goes on from the last checkpoint\n",
                      g_get_prgname (), p.step, p.total_steps, run->checkpoint_dir,
                      run->out_dir);
        }
      return G_SOURCE_CONTINUE;
    }
  if (run->staging != NULL)
    caml_cli_remove_flat_dir (run->staging);
  caml_cli_remove_made_dirs (run->made_dirs);
  g_printerr ("%s%s: aborted: nothing of this run was kept\n",
              run->tty && !run->quiet ? "\r\033[K" : "", g_get_prgname ());
  fflush (stdout);
  /* The trainer or the save thread may be mid-way: nothing to join. */
  caml_cli_end_by_signal (run->signal);
}

static gboolean
on_sigint (gpointer user_data)
{
  return on_interrupt (user_data, SIGINT);
}

static gboolean
on_sigterm (gpointer user_data)
{
  return on_interrupt (user_data, SIGTERM);
}

/* GLib's signal handler only wakes its worker thread, which marks the
 * signal source ready a little later: a signal that came just before
 * stop_listening could go with the sources, unheard (a Ctrl+C as the
 * results were moved into place, then exit 0). So the handler GLib
 * installs is wrapped to note the signal at once (raw_signal), and
 * run_and_report reads the note before the sources go. */
static volatile sig_atomic_t raw_signal;
static struct sigaction glib_actions[2];   /* GLib's, for SIGINT and SIGTERM */

static void
note_signal (int sig, siginfo_t *info, void *context)
{
  if (raw_signal == 0)
    raw_signal = sig;
  const struct sigaction *glib = &glib_actions[sig == SIGTERM];
  if (glib->sa_flags & SA_SIGINFO)
    glib->sa_sigaction (sig, info, context);
  else if (glib->sa_handler != SIG_DFL && glib->sa_handler != SIG_IGN)
    glib->sa_handler (sig);
}

static void
wrap_glib_handler (int sig)
{
  struct sigaction now;
  if (sigaction (sig, NULL, &now) != 0 || ((now.sa_flags & SA_SIGINFO)
                                           && now.sa_sigaction == note_signal))
    return;   /* wrapped already (GLib keeps one handler while any source lives) */
  glib_actions[sig == SIGTERM] = now;
  struct sigaction wrapped = now;
  wrapped.sa_sigaction = note_signal;
  wrapped.sa_flags |= SA_SIGINFO;
  sigaction (sig, &wrapped, NULL);
}

/* From before the data load to the run's end, Ctrl+C is the run's. */
static void
start_listening (Run *run)
{
  raw_signal = 0;
  run->sigint = g_unix_signal_add (SIGINT, on_sigint, run);
  run->sigterm = g_unix_signal_add (SIGTERM, on_sigterm, run);
  wrap_glib_handler (SIGINT);
  wrap_glib_handler (SIGTERM);
}

/* The run's end: Ctrl+C is no longer this run's to handle. */
static void
stop_listening (Run *run)
{
  g_clear_handle_id (&run->sigint, g_source_remove);
  g_clear_handle_id (&run->sigterm, g_source_remove);
}

/* The ranks that train this run together: every rank of the job, or this
 * process alone. */
static int
run_ranks (const CamlCliRun *how)
{
  return how->alone ? 1 : caml_cli_mpi_size ();
}

static gboolean
write_summary (const char *path, const char *preset, const CamlExperiment *exp,
               const CamlCliRun *how, long resumed_step, const CamlProgress *p, const CamlEvalRow *last, double train_loss,
               double train_metric,
               gboolean classification, double sigma_auc, gboolean sigma_high_on_fg,
               const CamlSigmaSource *sigma_source, const char *error_message, const CamlDivergence *divergence, GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "preset");
  if (preset)
    json_builder_add_string_value (b, preset);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "experiment");
  json_builder_add_string_value (b, exp->name ? exp->name : "");
  json_builder_set_member_name (b, "seed");
  json_builder_add_int_value (b, (gint64) exp->seed);
  /* the weights file the run started from (`caml train --init-weights`;
   * after --resume, the one the resumed run started from) */
  const char *init_weights = how->resume_dir ? how->started_from : how->init_weights;
  json_builder_set_member_name (b, "init_weights");
  if (init_weights)
    json_builder_add_string_value (b, init_weights);
  else
    json_builder_add_null_value (b);
  /* the saved run this one went on with (`caml train --resume`) */
  json_builder_set_member_name (b, "resumed_from");
  if (how->resume_dir)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "dir");
      json_builder_add_string_value (b, how->resume_dir);
      json_builder_set_member_name (b, "step");
      json_builder_add_int_value (b, resumed_step);
      json_builder_end_object (b);
    }
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "steps");
  json_builder_add_int_value (b, p->step);
  /* the experiment as trained, which --resume holds experiment.json to: as
   * its text (json-glib would write 1e-08 back as "1e-08.0", not JSON) */
  g_autofree char *as_trained = caml_experiment_to_json (exp);
  json_builder_set_member_name (b, "as_trained");
  json_builder_add_string_value (b, as_trained);
  json_builder_set_member_name (b, "state");
  json_builder_add_string_value (b, state_name (p->state));
  /* What the test_* figures are of: the test set, or the validation part
   * held out of the training set (data.validation_fraction). */
  json_builder_set_member_name (b, "evaluated_on");
  json_builder_add_string_value (b, caml_report_evaluated_on (exp));
  /* train_loss and train_accuracy/train_mse: the final weights over the
   * whole training set (metrics.csv's train_loss is a mean over the batches
   * since the evaluation before). */
  caml_cli_json_add_number (b, "train_loss", train_loss);
  caml_cli_json_add_number (b, "test_loss", last ? last->test_loss : NAN);
  caml_cli_json_add_number (b, classification ? "train_accuracy" : "train_mse", train_metric);
  caml_cli_json_add_number (b, classification ? "test_accuracy" : "test_mse",
              last ? last->test_metric : NAN);
  caml_cli_json_add_number (b, "seconds", p->seconds);
  /* Rates over the time spent training, evaluations excluded. */
  double training = p->seconds - p->eval_seconds;
  caml_cli_json_add_number (b, "eval_seconds", p->eval_seconds);
  caml_cli_json_add_number (b, "steps_per_second", training > 0 ? p->step / training : NAN);
  /* several ranks: the gradient sums, as the first rank saw them */
  if (run_ranks (how) > 1)
    {
      long calls;
      double bytes, seconds;
      caml_cli_mpi_reduced (&calls, &bytes, &seconds);
      json_builder_set_member_name (b, "ranks");
      json_builder_add_int_value (b, run_ranks (how));
      json_builder_set_member_name (b, "allreduce");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "calls");
      json_builder_add_int_value (b, calls);
      caml_cli_json_add_number (b, "bytes_per_call", calls > 0 ? bytes / calls : NAN);
      caml_cli_json_add_number (b, "seconds", seconds);
      caml_cli_json_add_number (b, "fraction_of_training", training > 0 ? seconds / training : NAN);
      json_builder_end_object (b);
    }
  if (p->tokens > 0)
    {
      json_builder_set_member_name (b, "tokens");
      json_builder_add_int_value (b, p->tokens);
      caml_cli_json_add_number (b, "tokens_per_second", training > 0 ? p->tokens / training : NAN);
    }
  if (!isnan (sigma_auc))
    {
      caml_cli_json_add_number (b, "sigma_auc", sigma_auc);
      json_builder_set_member_name (b, "sigma_high_on");
      json_builder_add_string_value (b, sigma_high_on_fg ? "foreground" : "background");
      /* whose σ-maps: a model may have several CA conv layers, and a
       * ca_res_conv block a gate per sublayer */
      json_builder_set_member_name (b, "sigma_layer");
      json_builder_add_int_value (b, sigma_source->layer);
      json_builder_set_member_name (b, "sigma_layer_type");
      json_builder_add_string_value (b, sigma_source->type);
      if (sigma_source->n_sublayers > 0)
        {
          json_builder_set_member_name (b, "sigma_sublayer");
          json_builder_add_int_value (b, sigma_source->sublayer);
          json_builder_set_member_name (b, "sigma_sublayers");
          json_builder_add_int_value (b, sigma_source->n_sublayers);
        }
    }
  if (error_message)
    {
      json_builder_set_member_name (b, "error");
      json_builder_add_string_value (b, error_message);
    }
  if (divergence)
    {
      json_builder_set_member_name (b, "diverged_at_step");
      json_builder_add_int_value (b, divergence->step);
      json_builder_set_member_name (b, "rolled_back_to");
      json_builder_add_int_value (b, divergence->rolled_back_to);
    }
  json_builder_end_object (b);

  return caml_cli_json_write (b, path, error);
}

/* The losses of the last steps, with their steps: a divergence takes the
 * trainer's losses back to the step rolled back to (one or two steps
 * before the failed one), but loss.png shows what the run went through. */
#define LOSS_TAIL 8

/* What the progress function records on the trainer thread: the loss
 * tail at every step and σ-map snapshots between two steps. */
typedef struct {
  long               tail_step[LOSS_TAIL];  /* 0: empty */
  float              tail_loss[LOSS_TAIL];
  CamlTrainer       *trainer;
  const CamlDataset *test;
  int                layer;      /* of the σ-maps, or -1 */
  long              *steps;      /* wanted steps, ascending; the last run step is added */
  int                n_steps;
  GPtrArray         *snapshots;  /* CamlSigmaSnapshot, in step order */
  long               last_taken;
  long               taking;     /* the step of the snapshot being taken */
  CamlSigmaSnapshot *taken;      /* by take_snapshot, until kept */
  GError            *error;
  CamlCheckpoint    *checkpoint; /* where a divergence goes back to */
  /* on several ranks: each checkpoint written to this folder too, for
   * --resume after a rank is lost */
  const CamlExperiment *exp;
  const CamlDataset    *train;
  char                 *checkpoint_dir;
  gboolean              checkpoint_said;   /* a failed write was said */
  GSource              *tick;    /* on_tick's, woken when the run ends */
} Recorder;

/* words.html: test samples shown, and the lists of the most and least
 * context-free words among those seen at least WORDS_MIN_COUNT times. */
#define WORDS_SAMPLES   20
#define WORDS_MIN_COUNT 20
#define WORDS_TOP       50

#define SIGMA_GRID_IMAGES 64
#define SIGMA_AUC_IMAGES  1000

/* The forward passes of a snapshot do not touch the weights. */
static void
take_snapshot (CamlModel *model, gpointer user_data)
{
  Recorder *rec = user_data;
  rec->taken = caml_sigma_snapshot_new (model, rec->layer, rec->test, SIGMA_GRID_IMAGES,
                                        rec->taking, &rec->error);
}

static void
on_trainer_progress (const CamlProgress *p, gpointer user_data)
{
  Recorder *rec = user_data;
  /* the main loop hears of the end now, not at its next tick */
  if (p->state == CAML_TRAINER_FINISHED || p->state == CAML_TRAINER_STOPPED
      || p->state == CAML_TRAINER_FAILED)
    g_source_set_ready_time (rec->tick, 0);
  /* a copy of the whole state at each healthy evaluation */
  if (caml_checkpoint_progress (rec->checkpoint, rec->trainer, p)
      && rec->checkpoint_dir != NULL)
    {
      g_autoptr (GError) error = NULL;
      if (!caml_checkpoint_write (rec->checkpoint, rec->exp, rec->train, rec->checkpoint_dir,
                                  &error) && !rec->checkpoint_said)
        {
          g_printerr ("%s: note: the checkpoint at step %ld was not written: %s\n",
                      g_get_prgname (), p->step, error->message);
          rec->checkpoint_said = TRUE;
        }
    }
  /* every step's report, while running (the last report of a failed run
   * has the step rolled back to with the failed step's loss) */
  if (p->state == CAML_TRAINER_RUNNING && p->step > 0)
    {
      rec->tail_step[p->step % LOSS_TAIL] = p->step;
      rec->tail_loss[p->step % LOSS_TAIL] = (float) p->last_loss;
    }
  if (rec->layer < 0)
    return;
  gboolean wanted = FALSE;
  for (int i = 0; i < rec->n_steps; i++)
    wanted |= rec->steps[i] == p->step;
  if (!wanted || p->step == rec->last_taken || rec->error != NULL)
    return;
  /* At once, on this thread, but after the latest update is checked: one
   * that diverged is rolled back and the run fails, so its snapshot, of the
   * weights before that step, is not kept. */
  rec->taking = p->step;
  caml_trainer_with_model (rec->trainer, take_snapshot, rec);
  g_autoptr (GError) failed = caml_trainer_get_error (rec->trainer);
  CamlSigmaSnapshot *snap = g_steal_pointer (&rec->taken);
  if (snap != NULL && failed == NULL)
    g_ptr_array_add (rec->snapshots, snap);
  else if (snap != NULL)
    caml_sigma_snapshot_free (snap);
  rec->last_taken = p->step;
}

/* "1000,5000,last" → ascending steps; "last" is the run's final step. */
static gboolean
parse_steps_list (const char *text, long total, long **steps, int *n_steps, GError **error)
{
  g_autofree char *trimmed = g_strstrip (g_strdup (text));
  if (*trimmed == '\0')
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "--sigma-steps: the list is empty (give steps such as 1000,last)");
      return FALSE;
    }
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (long));
  for (int i = 0; parts[i] != NULL; i++)
    {
      const char *part = g_strstrip (parts[i]);
      long step;
      if (g_str_equal (part, "last"))
        step = total;
      else
        {
          guint64 value;
          if (!g_ascii_string_to_unsigned (part, 10, 1, G_MAXINT32, &value, NULL))
            {
              g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                           "--sigma-steps: \"%s\" is not a step number or \"last\"", part);
              g_array_free (out, TRUE);
              return FALSE;
            }
          step = (long) value;
        }
      if (step <= total)
        g_array_append_val (out, step);
    }
  *n_steps = (int) out->len;
  *steps = (long *) g_array_free (out, FALSE);
  return TRUE;
}

/* The names caml train writes into its output directory: a run that keeps
 * its results replaces every one an earlier run left there (so the
 * directory holds one run's results, not an earlier run's plots of another
 * kind of model or data, nor the report of a run that kept nothing). Other
 * files are not touched. */
static gboolean
is_result_name (const char *name)
{
  static const char *const names[] = {
    "metrics.csv", "summary.json", "model.weights", "trainer.state", "experiment.json",
    "loss.png",
    "surface.png", "chi.png", "parts.png", "words.html", "words.png",
    "failed-summary.json", "failed-loss.png", NULL
  };
  return g_strv_contains (names, name)
         || (g_str_has_prefix (name, "sigma-step") && g_str_has_suffix (name, ".png"));
}

/* The result names a run of this model may write into out_dir: those of
 * every run, the report of a run that fails (failed-summary.json,
 * failed-loss.png), the plots of its kind of model, and sigma-stepN.png at
 * the σ-map steps (`steps`, the last among them). */
static GPtrArray *
planned_result_names (const CamlModel *model, const CamlDataset *train, const long *steps,
                      int n_steps)
{
  static const char *const always[] = {
    "metrics.csv", "summary.json", "model.weights", "trainer.state", "experiment.json",
    "loss.png", "failed-summary.json", "failed-loss.png", NULL
  };
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; always[i] != NULL; i++)
    g_ptr_array_add (names, g_strdup (always[i]));
  if (caml_shape_is_plane (&model->input)
      && caml_shape_size (caml_model_output_shape (model)) == 1)
    {
      g_ptr_array_add (names, g_strdup ("surface.png"));
      g_ptr_array_add (names, g_strdup ("chi.png"));
      g_ptr_array_add (names, g_strdup ("parts.png"));
    }
  if (train->vocab != NULL && model->input.kind == CAML_SHAPE_TOKENS)
    {
      g_ptr_array_add (names, g_strdup ("words.html"));
      g_ptr_array_add (names, g_strdup ("words.png"));
    }
  if (caml_report_sigma_layer (model) >= 0)
    for (int i = 0; i < n_steps; i++)
      g_ptr_array_add (names, g_strdup_printf ("sigma-step%ld.png", steps[i]));
  return names;
}

/* Before training: a result name taken in out_dir by something other than
 * a file (a directory, a link) would make the run keep nothing at its end
 * (commit_results refuses to replace it). */
static gboolean
check_result_names (const char *out_dir, const GPtrArray *names, GError **error)
{
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      g_autofree char *path = g_build_filename (out_dir, name, NULL);
      GStatBuf st;
      if (g_lstat (path, &st) != 0 || S_ISREG (st.st_mode))
        continue;
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
                   "%s: is not a file (%s), so this run's %s could not replace it: move it "
                   "away or give another --out; nothing was trained", path,
                   S_ISDIR (st.st_mode) ? "a directory" : S_ISLNK (st.st_mode)
                   ? "a symbolic link" : "not a regular file", name);
      return FALSE;
    }
  return TRUE;
}

/* Prints a run's problems, prefixed with the command, and keeps the first
 * for a caller that records it (caml sweep). */
typedef struct {
  char *first;
} Problems;

static void
problem (Problems *problems, const char *message)
{
  g_printerr ("%s: %s\n", g_get_prgname (), message);
  if (problems->first == NULL)
    problems->first = g_strdup (message);
}

/* Reports a result file that could not be written; returns ok. */
static gboolean
kept (Problems *problems, gboolean ok, GError **error)
{
  if (!ok)
    {
      problem (problems, (*error)->message);
      g_clear_error (error);
    }
  return ok;
}

/* 16282 → "16,282". */
static char *
digits_grouped (int n)
{
  g_autofree char *plain = g_strdup_printf ("%d", n);
  GString *s = g_string_new (NULL);
  int len = (int) strlen (plain);
  for (int i = 0; i < len; i++)
    {
      if (i > 0 && plain[i - 1] != '-' && (len - i) % 3 == 0)
        g_string_append_c (s, ',');
      g_string_append_c (s, plain[i]);
    }
  return g_string_free (s, FALSE);
}

/* The losses loss.png draws for a run that diverged: those kept (steps
 * 1 … rolled_back_to) and those the rollback dropped, up to the failed
 * step's (its loss, last_loss, may be the one that blew up); a step whose
 * loss the tail lost is NaN, not drawn. g_free the result. */
static float *
losses_through_divergence (const float *kept, long n_kept, const Recorder *rec,
                           const CamlDivergence *d, double last_loss, long *n)
{
  long total = MAX (d->step, n_kept);
  float *out = g_new (float, MAX (total, 1));
  for (long i = 0; i < total; i++)
    {
      long step = i + 1;
      if (i < n_kept)
        out[i] = kept[i];
      else if (step == d->step)
        out[i] = (float) last_loss;
      else
        out[i] = rec->tail_step[step % LOSS_TAIL] == step ? rec->tail_loss[step % LOSS_TAIL]
                                                           : NAN;
    }
  *n = total;
  return out;
}

/* rows has room for one more: a row at p's step, of the final weights on
 * the test set as `caml eval` measures them, for a run whose last
 * evaluation was at an earlier step (stopped, or rolled back between two
 * evaluations), so that summary.json, metrics.csv and loss.png describe
 * the weights saved. Its train_loss is the mean over the steps since the
 * row before, as the trainer's rows have; its time counts as evaluating,
 * and p's seconds grow by it. */
static void
add_final_row (CamlModel *model, CamlLossKind loss, const CamlDataset *test, const float *losses,
               long n_steps, CamlEvalRow *rows, int n_rows, CamlProgress *p)
{
  CamlEvalRow *row = &rows[n_rows];
  long from = n_rows > 0 ? rows[n_rows - 1].step : 0;
  double sum = 0;
  for (long i = from; i < MIN (p->step, n_steps); i++)
    sum += losses[i];
  *row = (CamlEvalRow) { .step = p->step, .tokens = p->tokens };
  row->train_loss = p->step > from ? sum / (double) (MIN (p->step, n_steps) - from) : NAN;
  gint64 start = g_get_monotonic_time ();
  caml_evaluate (model, loss, test, &row->test_loss, &row->test_metric);
  double spent = (g_get_monotonic_time () - start) / 1e6;
  p->seconds += spent;
  p->eval_seconds += spent;
  row->seconds = p->seconds;
  row->eval_seconds = p->eval_seconds;
}

/* "stopped after 385 steps in 12.0s (…)" */
static void
print_ended (const CamlProgress *p, const CamlCliRun *how)
{
  double training = p->seconds - p->eval_seconds;
  g_print ("%s after %ld step%s in %.1fs (%.1fs of them evaluating; %.0f steps/s",
           state_name (p->state), p->step, p->step == 1 ? "" : "s", p->seconds, p->eval_seconds,
           training > 0 ? p->step / training : 0.0);
  if (p->tokens > 0)
    g_print (", %.0f tokens/s", training > 0 ? p->tokens / training : 0.0);
  g_print (" while training)\n");
  if (run_ranks (how) > 1)
    {
      long calls;
      double bytes, seconds;
      caml_cli_mpi_reduced (&calls, &bytes, &seconds);
      if (calls > 0)
        g_print ("on %d ranks: %ld gradient sums (MPI_Allreduce) of %.0f kB, %.3f ms each: "
                 "%.0f %% of the training time, waiting for the slowest rank included\n",
                 run_ranks (how), calls, bytes / calls / 1e3, seconds / calls * 1e3,
                 training > 0 ? 100 * seconds / training : 0.0);
    }
}

/* A run that failed with nothing to keep (its weights went back to the
 * untrained ones): what an earlier run left in out_dir stays, and this
 * run's summary and loss plot go beside it as failed-summary.json and
 * failed-loss.png. */
static void
report_nothing_kept (const char *out_dir, const char *preset, const CamlExperiment *exp,
                     const CamlCliRun *how, long resumed_step, const CamlProgress *p, const GError *run_error,
                     const CamlDivergence *divergence, const float *losses, long n_losses,
                     gboolean classification, const char *evaluated_on, const char *title,
                     Problems *problems)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *summary_path = g_build_filename (out_dir, "failed-summary.json", NULL);
  g_autofree char *loss_path = g_build_filename (out_dir, "failed-loss.png", NULL);
  g_autofree char *loss_title = g_strdup_printf ("%s: failed", title);
  /* no figures: the untrained weights are not what anyone asked for */
  gboolean ok = kept (problems, write_summary (summary_path, preset, exp, how, resumed_step, p, NULL, NAN, NAN,
                                               classification, NAN, FALSE, NULL,
                                               run_error ? run_error->message : NULL,
                                               divergence, &error), &error);
  ok &= kept (problems, caml_report_write_loss (loss_path, NULL, 0, losses, n_losses, divergence,
                                                classification, evaluated_on, loss_title,
                                                &error), &error);
  if (run_error)
    problem (problems, run_error->message);
  print_ended (p, how);
  if (ok)
    g_print ("nothing kept: the run failed before a step worth keeping, so %s/ keeps what it "
             "held; this run's failure is in failed-summary.json and failed-loss.png there\n",
             out_dir);
  else
    g_print ("nothing kept: the run failed before a step worth keeping, so %s/ keeps what it "
             "held; its failure report could not be written there (above)\n", out_dir);
}

/* What a run that keeps its results writes, and what it finds on the way:
 * done on a thread of its own (save_results) while the main loop waits for
 * it, or for a second Ctrl+C. */
typedef struct {
  /* in */
  const CamlExperiment *exp;
  const char           *preset;
  CamlModel            *model;
  const CamlDataset    *train, *test;
  Recorder             *rec;
  const float          *losses;    /* kept, (n_steps) */
  long                  n_steps;
  const float          *plotted;   /* loss.png's, (n_plotted) */
  long                  n_plotted;
  const CamlDivergence *divergence;  /* or NULL */
  const GError         *run_error;   /* or NULL */
  gboolean              classification;
  const char           *evaluated_on;
  const char           *title;
  gboolean              sigma_stretch;
  const CamlCliRun     *how;
  long                  resumed_step;  /* the step a resumed run went on from */
  GBytes               *state;     /* trainer.state, or NULL: none */
  const GError         *state_error;  /* why there is none when there should be */
  const char           *dir;       /* the staging directory */
  const char           *out_dir;   /* where its files go */
  Problems             *problems;
  GMainLoop            *loop;
  /* in and out */
  CamlProgress          p;         /* seconds grow by a final evaluation */
  CamlEvalRow          *rows;      /* room for one more */
  int                   n_rows;
  /* out */
  gboolean              final_row; /* rows[n_rows - 1] was added here */
  double                train_loss, train_metric;
  double                sigma_auc;
  gboolean              sigma_high_on_fg;
  CamlSigmaSource       sigma_source;  /* whose σ-maps (when rec->layer >= 0) */
  GString              *drawn;     /* ", NAME" per file after loss.png */
  gboolean              written_all;
} Save;

static gboolean
quit_loop (gpointer user_data)
{
  g_main_loop_quit (user_data);
  return G_SOURCE_REMOVE;
}

/* kept() for a file written into the staging directory: the message names
 * it where it was to go, in out_dir. */
static gboolean
written (Save *s, gboolean ok, GError **error)
{
  if (!ok && *error != NULL)
    {
      GString *message = g_string_new ((*error)->message);
      g_autofree char *from = g_strconcat (s->dir, G_DIR_SEPARATOR_S, NULL);
      g_autofree char *to = g_strconcat (s->out_dir, G_DIR_SEPARATOR_S, NULL);
      g_string_replace (message, from, to, 0);
      g_free ((*error)->message);
      (*error)->message = g_string_free (message, FALSE);
    }
  return kept (s->problems, ok, error);
}

/* The step of a σ-map's file name, "sigma-stepN.png"; -1 for any other name. */
static long
sigma_file_step (const char *name)
{
  const char *digits = name + strlen ("sigma-step");
  if (!g_str_has_prefix (name, "sigma-step") || !g_str_has_suffix (name, ".png")
      || !g_ascii_isdigit (*digits))
    return -1;
  guint64 step;
  g_autofree char *number = g_strndup (digits, strlen (digits) - strlen (".png"));
  if (!g_ascii_string_to_unsigned (number, 10, 0, G_MAXLONG, &step, NULL))
    return -1;
  return (long) step;
}

static int
compare_longs (gconstpointer a, gconstpointer b)
{
  long x = *(const long *) a, y = *(const long *) b;
  return (x > y) - (x < y);
}

/* A resumed run cannot draw the σ-maps of the steps before it went on: the
 * ones the run it goes on with left in its directory, at those steps, are
 * copied beside the new results (which replace that directory's, or go to
 * --out). Appends their names to `names`. */
static gboolean
keep_earlier_sigma_maps (Save *s, GString *names, GError **error)
{
  const char *from = s->how->resume_dir;
  g_autoptr (GDir) dir = from != NULL ? g_dir_open (from, 0, NULL) : NULL;
  if (dir == NULL)
    return TRUE;
  g_autoptr (GArray) steps = g_array_new (FALSE, FALSE, sizeof (long));
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      long step = sigma_file_step (name);
      g_autofree char *target = g_build_filename (s->dir, name, NULL);
      if (step >= 0 && step <= s->resumed_step && !g_file_test (target, G_FILE_TEST_EXISTS))
        g_array_append_val (steps, step);
    }
  g_array_sort (steps, compare_longs);
  for (guint i = 0; i < steps->len; i++)
    {
      g_autofree char *file = g_strdup_printf ("sigma-step%ld.png",
                                               g_array_index (steps, long, i));
      g_autoptr (GFile) source = g_file_new_build_filename (from, file, NULL);
      g_autoptr (GFile) target = g_file_new_build_filename (s->dir, file, NULL);
      if (!g_file_copy (source, target, G_FILE_COPY_NONE, NULL, NULL, NULL, error))
        return FALSE;
      g_string_append_printf (names, ", %s", file);
    }
  return TRUE;
}

static gpointer
save_results (gpointer user_data)
{
  Save *s = user_data;
  const CamlExperiment *exp = s->exp;
  Recorder *rec = s->rec;
  g_autoptr (GError) error = NULL;

  /* The final weights on the whole training set, as `caml eval` measures
   * them: summary.json's and the last line's train figures. */
  s->train_loss = s->train_metric = NAN;
  caml_evaluate (s->model, exp->loss, s->train, &s->train_loss, &s->train_metric);
  /* … and on the test set, when the last evaluation was at an earlier step
   * (a stopped run, or one rolled back to a step between evaluations). */
  if (s->n_rows == 0 || s->rows[s->n_rows - 1].step != s->p.step)
    {
      add_final_row (s->model, exp->loss, s->test, s->losses, s->n_steps, s->rows, s->n_rows,
                     &s->p);
      s->n_rows++;
      s->final_row = TRUE;
    }
  const CamlEvalRow *last = s->n_rows > 0 ? &s->rows[s->n_rows - 1] : NULL;

  /* σ-maps: a grid at every snapshot (and at the end, whatever step that
   * is), and the AUC over the first test images. */
  s->sigma_auc = NAN;
  s->sigma_high_on_fg = FALSE;
  s->written_all = TRUE;
  g_autoptr (GString) sigma_written = g_string_new (NULL);
  if (rec->layer >= 0 && rec->error == NULL && rec->last_taken != s->p.step)
    {
      CamlSigmaSnapshot *snap = caml_sigma_snapshot_new (s->model, rec->layer, s->test,
                                                         SIGMA_GRID_IMAGES, s->p.step,
                                                         &rec->error);
      if (snap)
        g_ptr_array_add (rec->snapshots, snap);
    }
  if (rec->layer >= 0 && rec->error == NULL)
    {
      g_autoptr (CamlSigmaSnapshot) all = caml_sigma_snapshot_new (s->model, rec->layer, s->test,
                                                                   SIGMA_AUC_IMAGES, s->p.step,
                                                                   &rec->error);
      if (all)
        s->sigma_auc = caml_sigma_auc (all->images, all->height, all->width, all->maps,
                                       all->map_h, all->map_w, all->count,
                                       &s->sigma_high_on_fg);
    }
  if (rec->error)
    {
      problem (s->problems, rec->error->message);
      g_clear_error (&rec->error);
    }
  CamlSigmaSource *source = &s->sigma_source;
  if (rec->layer >= 0)
    caml_report_sigma_source (s->model, rec->layer, source);
  for (guint i = 0; i < rec->snapshots->len; i++)
    {
      const CamlSigmaSnapshot *snap = rec->snapshots->pdata[i];
      g_autofree char *name = g_strdup_printf ("sigma-step%ld.png", snap->step);
      g_autofree char *path = g_build_filename (s->dir, name, NULL);
      if (written (s, caml_report_write_sigma_grid (path, snap, s->sigma_stretch,
                                                    exp->name ? exp->name : "experiment",
                                                    source, &error), &error))
        g_string_append_printf (sigma_written, ", %s", name);
      else
        s->written_all = FALSE;
    }

  g_autoptr (GString) sigma_kept = g_string_new (NULL);
  if (!written (s, keep_earlier_sigma_maps (s, sigma_kept, &error), &error))
    s->written_all = FALSE;
  g_string_prepend (sigma_written, sigma_kept->str);

  g_autofree char *metrics_path = g_build_filename (s->dir, "metrics.csv", NULL);
  g_autofree char *summary_path = g_build_filename (s->dir, "summary.json", NULL);
  g_autofree char *weights_path = g_build_filename (s->dir, "model.weights", NULL);
  g_autofree char *exp_path = g_build_filename (s->dir, "experiment.json", NULL);
  g_autofree char *loss_path = g_build_filename (s->dir, "loss.png", NULL);
  g_autofree char *words_path = g_build_filename (s->dir, "words.html", NULL);
  g_autofree char *words_png = g_build_filename (s->dir, "words.png", NULL);
  gboolean words = FALSE;
  /* Every file tried even when one fails: each failure is reported. */
  gboolean ok = TRUE;
  ok &= written (s, caml_weights_save (s->model, weights_path, &error), &error);
  if (s->state != NULL)
    {
      g_autofree char *state_path = g_build_filename (s->dir, "trainer.state", NULL);
      gsize length;
      const guint8 *data = g_bytes_get_data (s->state, &length);
      ok &= written (s, caml_file_replace (state_path, data, length, &error), &error);
    }
  else if (s->state_error != NULL)   /* too large for a state file: the rest is kept */
    g_printerr ("%s: note: no trainer.state, so --resume cannot go on with this run: %s\n",
                g_get_prgname (), s->state_error->message);
  ok &= written (s, caml_experiment_save_file (exp, exp_path, &error), &error);
  ok &= written (s, caml_report_write_metrics (metrics_path, s->rows, s->n_rows,
                                               s->classification, &error), &error);
  ok &= written (s, write_summary (summary_path, s->preset, exp, s->how, s->resumed_step, &s->p, last,
                                   s->train_loss, s->train_metric, s->classification,
                                   s->sigma_auc, s->sigma_high_on_fg, source,
                                   s->run_error ? s->run_error->message : NULL,
                                   s->divergence, &error), &error);
  ok &= written (s, caml_report_write_loss (loss_path, s->rows, s->n_rows, s->plotted,
                                            s->n_plotted, s->divergence,
                                            s->classification, s->evaluated_on,
                                            s->title, &error), &error);
  /* the plots of a model, before the σ-maps: ", surface.png, chi.png" … */
  ok &= written (s, caml_report_write_surfaces (s->dir, exp, s->model, s->train,
                                                s->drawn, &error), &error);
  ok &= written (s, caml_report_write_words_on (words_path, words_png, s->title,
                                                s->model, exp, s->train, s->test,
                                                WORDS_SAMPLES,
                                                WORDS_MIN_COUNT, WORDS_TOP, &words,
                                                &error), &error);
  if (words)
    g_string_append (s->drawn, ", words.html, words.png");
  g_string_append (s->drawn, sigma_written->str);
  s->written_all &= ok;
  g_idle_add (quit_loop, s->loop);
  return NULL;
}

/* Trains model in a background thread (trainer's, which it frees; a
 * resumed run's from resumed_step on) while the main loop draws progress,
 * then writes every result file into out_dir. A divergence goes back to
 * the checkpoint (the last healthy evaluation, or the start). */
/* The three files of a checkpoint folder (caml_checkpoint_write), and the
 * folder when nothing else is in it. */
static void
remove_checkpoint (const char *dir)
{
  static const char *const names[] = { "model.weights", "trainer.state", "experiment.json" };
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *path = g_build_filename (dir, names[i], NULL);
      g_unlink (path);
    }
  g_rmdir (dir);
}

static int
run_and_report (CamlExperiment *exp, const CamlCliRun *how, CamlModel *model,
                const CamlDataset *train, const CamlDataset *test, CamlTrainer *trainer,
                CamlCheckpoint *checkpoint, long resumed_step, long *sigma_steps,
                int n_sigma_steps, Run *run, Problems *problems)
{
  const char *preset = how->preset, *source = how->source, *out_dir = how->out_dir;
  gboolean quiet = how->quiet;
  g_autoptr (GError) error = NULL;
  Recorder rec = {
    .trainer = trainer, .test = test, .layer = caml_report_sigma_layer (model),
    .snapshots = g_ptr_array_new_with_free_func ((GDestroyNotify) caml_sigma_snapshot_free),
    .last_taken = -1, .steps = sigma_steps, .n_steps = n_sigma_steps,
    .checkpoint = checkpoint, .exp = exp, .train = train,
    .checkpoint_dir = run_ranks (how) > 1 ? g_build_filename (out_dir, "checkpoint", NULL)
                                              : NULL,
    .tick = g_timeout_source_new (100),
  };
  run->checkpoint_dir = rec.checkpoint_dir;

  caml_trainer_set_progress_func (trainer, on_trainer_progress, &rec, 1);
  run->trainer = trainer;
  run->evaluated_on = caml_report_evaluated_on (exp);
  /* a resumed run's rows so far were printed by the run it goes on with */
  CamlProgress before;
  caml_trainer_get_progress (trainer, &before);
  run->rows_printed = before.n_rows;
  if (!quiet)
    {
      g_autofree char *in = caml_shape_to_string (&train->x_shape);
      g_print ("training %s (seed %" G_GUINT64_FORMAT ", %d step%s, %zu weights, input %s, "
               "%d train / %d %s)\n", exp->name ? exp->name : "experiment",
               exp->seed, exp->steps, exp->steps == 1 ? "" : "s", model->n_weights, in,
               train->n, test->n,
               exp->data.validation_fraction > 0
               ? "validation samples held out of the training set" : "test samples");
      if (rec.checkpoint_dir != NULL)
        g_print ("on %d ranks of %d thread%s each, each batch of %d shared among them; a "
                 "checkpoint at every evaluation in %s/\n", run_ranks (how),
                 caml_trainer_get_threads (trainer),
                 caml_trainer_get_threads (trainer) == 1 ? "" : "s",
                 exp->batch_size, rec.checkpoint_dir);
      if (how->resume_dir != NULL)
        g_print ("going on from step %ld in %s/ (the weights, the optimizer's state, the "
                 "batch order and the losses as they were)\n", resumed_step, how->resume_dir);
      else if (how->init_weights != NULL)
        g_print ("starting from the weights in %s (the optimizer's state starts afresh)\n",
                 how->init_weights);
      else if (model->n_word_vectors > 0)
        {
          g_autofree char *path = g_str_equal (exp->data.embeddings, "wink")
                                  ? caml_embeddings_wink_path ()
                                  : g_strdup (exp->data.embeddings);
          g_autofree char *found = digits_grouped (model->n_word_vectors);
          g_autofree char *words = digits_grouped (caml_vocab_size (train->vocab));
          g_print ("word vectors: %s of %s training words found in %s\n", found, words,
                   path);
        }
    }
  if (!caml_trainer_start (trainer, FALSE, &error))
    {
      caml_cli_name_experiment (&error, source);
      problem (problems, error->message);
      caml_trainer_free (trainer);
      run->trainer = NULL;
      g_ptr_array_free (rec.snapshots, TRUE);
      g_source_unref (rec.tick);
      return 1;
    }
  /* removes itself when the run ends */
  g_source_set_callback (rec.tick, on_tick, run, NULL);
  g_source_attach (rec.tick, NULL);
  g_main_loop_run (run->loop);
  caml_trainer_join (trainer);
  g_clear_pointer (&rec.tick, g_source_unref);

  CamlProgress p;
  caml_trainer_get_progress (trainer, &p);
  int n_rows = 0;
  long n_steps = 0;
  CamlDivergence divergence;
  gboolean diverged = caml_trainer_get_divergence (trainer, &divergence);
  /* loss.png: the losses up to the failed step, not only those kept */
  g_autofree float *losses = caml_trainer_copy_losses (trainer, &n_steps);
  long n_plotted = n_steps;
  g_autofree float *plotted = diverged ? losses_through_divergence (losses, n_steps, &rec,
                                                                    &divergence, p.last_loss,
                                                                    &n_plotted)
                                       : NULL;
  /* The trainer rolled back to the last weights whose loss was finite and
   * in bounds, one or two steps back, which may have blown up already: the
   * run goes back to its last healthy evaluation, as the workbench's
   * Continue does, so that a lower rate resumed from there trains. */
  if (diverged && caml_checkpoint_get_step (checkpoint, trainer) < divergence.rolled_back_to)
    {
      if (caml_checkpoint_roll_back (checkpoint, trainer, &error))
        {
          caml_trainer_get_divergence (trainer, &divergence);
          caml_trainer_get_progress (trainer, &p);
          g_free (losses);
          losses = caml_trainer_copy_losses (trainer, &n_steps);
          /* no σ-maps of the weights gone back from */
          for (guint i = rec.snapshots->len; i-- > 0;)
            if (((CamlSigmaSnapshot *) rec.snapshots->pdata[i])->step > p.step)
              g_ptr_array_remove_index (rec.snapshots, i);
          /* the latest kept is the latest taken: one at the step gone back
           * to is not taken again when the results are saved */
          if (rec.last_taken > p.step)
            rec.last_taken = rec.snapshots->len > 0
                             ? ((CamlSigmaSnapshot *) rec.snapshots->pdata[rec.snapshots->len - 1])->step
                             : -1;
        }
      else   /* it keeps the step it rolled back to itself */
        {
          g_prefix_error (&error, "going back to step %ld after the divergence: ",
                          caml_checkpoint_get_step (checkpoint, trainer));
          problem (problems, error->message);
          g_clear_error (&error);
        }
    }
  g_autofree CamlEvalRow *trainer_rows = caml_trainer_copy_rows (trainer, &n_rows);
  g_autoptr (GError) run_error = caml_trainer_get_error (trainer);
  /* what `caml train --resume` goes on from: a diverged run's is that of
   * the step it rolled back to */
  g_autoptr (GError) state_error = NULL;
  g_autoptr (GBytes) state = p.step > 0 ? caml_trainer_state_to_bytes (trainer, &state_error)
                                        : NULL;
  caml_trainer_free (trainer);
  run->trainer = NULL;
  gboolean classification = train->n_classes > 0;
  g_autofree char *title = g_strdup_printf ("%s, seed %" G_GUINT64_FORMAT,
                                            exp->name ? exp->name : "experiment", exp->seed);

  if (p.state == CAML_TRAINER_FAILED && p.step == 0)
    {
      /* Nothing of this run is worth keeping: the directory keeps what it
       * held (an earlier run's results), and this one's failure goes
       * beside them under names of its own. */
      g_ptr_array_free (rec.snapshots, TRUE);
      g_clear_error (&rec.error);
      stop_listening (run);
      report_nothing_kept (out_dir, preset, exp, how, resumed_step, &p, run_error, diverged ? &divergence : NULL,
                           plotted ? plotted : losses, n_plotted, classification,
                           run->evaluated_on, title, problems);
      return 1;
    }
  if (p.state == CAML_TRAINER_STOPPED && p.step == 0)
    {
      /* Stopped before its first step: untrained weights are nothing to
       * keep, and an earlier run's results stay. */
      g_ptr_array_free (rec.snapshots, TRUE);
      g_clear_error (&rec.error);
      stop_listening (run);
      print_ended (&p, how);
      g_print ("nothing kept: stopped before the first step, so %s/ keeps what it held\n",
               out_dir);
      return run->signal != 0 ? 128 + run->signal : 1;
    }
  /* What this run keeps is written into a staging directory inside
   * out_dir (the same file system) and moved into place only when every
   * file was written: a failure, or a second Ctrl+C, leaves out_dir as it
   * was. */
  g_autoptr (CamlCliResults) results = caml_cli_results_new (out_dir, &error);
  if (results == NULL)
    {
      problem (problems, error->message);
      g_ptr_array_free (rec.snapshots, TRUE);
      g_clear_error (&rec.error);
      stop_listening (run);
      return 1;
    }
  Save save = {
    .exp = exp, .preset = preset, .model = model, .train = train, .test = test, .rec = &rec,
    .losses = losses, .n_steps = n_steps,
    .plotted = plotted ? plotted : losses, .n_plotted = n_plotted,
    .divergence = diverged ? &divergence : NULL, .run_error = run_error,
    .classification = classification, .evaluated_on = run->evaluated_on, .title = title,
    .sigma_stretch = how->sigma_stretch, .how = how, .resumed_step = resumed_step,
    .state = state, .state_error = state_error,
    .dir = results->dir, .out_dir = out_dir, .problems = problems, .loop = run->loop,
    .p = p, .rows = g_renew (CamlEvalRow, g_steal_pointer (&trainer_rows), n_rows + 1),
    .n_rows = n_rows, .drawn = g_string_new (NULL),
  };
  run->staging = results->dir;
  GThread *thread = g_thread_new ("caml-save", save_results, &save);
  g_main_loop_run (run->loop);
  g_thread_join (thread);
  g_ptr_array_free (rec.snapshots, TRUE);
  gboolean committed = save.written_all
                       && kept (problems, caml_cli_results_commit (results, is_result_name,
                                                                   &error), &error);
  /* the run's own results replace its checkpoints, and those of the run
   * it went on from (--resume OUT/checkpoint --out OUT) */
  g_autofree char *own_dir = g_build_filename (out_dir, "checkpoint", NULL);
  g_autofree char *own = g_canonicalize_filename (own_dir, NULL);
  g_autofree char *from = how->resume_dir != NULL
                          ? g_canonicalize_filename (how->resume_dir, NULL) : NULL;
  if (committed && (rec.checkpoint_dir != NULL || g_strcmp0 (own, from) == 0))
    remove_checkpoint (own);
  run->checkpoint_dir = NULL;
  g_clear_pointer (&rec.checkpoint_dir, g_free);
  /* The moves are done (or undone), and abort nothing now. A Ctrl+C that
   * came during them is pending on the main context, or only noted
   * (raw_signal): hear it before the signal sources go, so that the run
   * still ends by it (the trainer and the save thread have ended; only the
   * signal sources are left). */
  run->staging = NULL;
  run->ended = TRUE;
  run->kept = committed;
  while (g_main_context_iteration (NULL, FALSE))
    ;
  /* Sources gone first: a signal after this takes its default action (GLib
   * restores it with the last source), one before it was noted. */
  stop_listening (run);
  if (raw_signal != 0 && run->signal == 0)   /* not yet dispatched by GLib */
    on_interrupt (run, raw_signal);
  g_clear_pointer (&results, caml_cli_results_free);   /* removes what was not committed */
  p = save.p;

  const CamlEvalRow *last = save.n_rows > 0 ? &save.rows[save.n_rows - 1] : NULL;
  if (save.final_row && !quiet && !run->tty)
    print_row (last, classification, run->evaluated_on);
  if (run_error)
    problem (problems, run_error->message);
  print_ended (&p, how);
  if (last)
    g_print ("train_loss %.6g  %s_loss %.6g  train_%s %.6g  %s_%s %.6g\n",
             save.train_loss, run->evaluated_on, last->test_loss,
             classification ? "accuracy" : "mse", save.train_metric,
             run->evaluated_on, classification ? "accuracy" : "mse", last->test_metric);
  if (!isnan (save.sigma_auc))
    {
      g_autofree char *of = caml_report_sigma_source_text (&save.sigma_source);
      g_print ("sigma_auc %.4f (χ higher on the %s; σ-maps of %s)\n", save.sigma_auc,
               save.sigma_high_on_fg ? "foreground" : "background", of);
    }
  if (committed)
    g_print ("results in %s/ (metrics.csv, summary.json, model.weights%s, experiment.json, "
             "loss.png%s)\n", out_dir, state != NULL ? ", trainer.state" : "",
             save.drawn->str);
  else
    g_print ("nothing kept: some results could not be written (above), so %s/ keeps what "
             "it held\n", out_dir);
  if (committed && diverged && state != NULL)
    g_print ("to go on from step %ld: lower optimizer.lr in %s/experiment.json, then "
             "`caml train --resume %s`\n", p.step, out_dir, out_dir);
  g_string_free (save.drawn, TRUE);
  g_free (save.rows);
  if (!committed || p.state == CAML_TRAINER_FAILED)
    return 1;
  return run->signal != 0 ? 128 + run->signal : 0;
}

/* The run's trainer; resuming, with the weights and state of how->resume_dir
 * loaded (*resumed_step: the step it saved), and more steps to go. */
static CamlTrainer *
new_trainer (const CamlExperiment *exp, const CamlCliRun *how, CamlModel *model,
             const CamlDataset *train, const CamlDataset *test, long *resumed_step,
             GError **error)
{
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  *resumed_step = 0;
  if (how->resume_dir == NULL)
    return trainer;
  g_autofree char *weights = g_build_filename (how->resume_dir, "model.weights", NULL);
  g_autofree char *state = g_build_filename (how->resume_dir, "trainer.state", NULL);
  if (!g_file_test (state, G_FILE_TEST_EXISTS))
    g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                 "%s: no such file: the run kept no state (earlier versions kept none "
                 "for a run that diverged, and at first none at all); --init-weights %s "
                 "starts afresh from its weights", state, weights);
  else if (caml_weights_load (model, weights, error)
           && caml_trainer_state_load (trainer, state, error))
    {
      CamlProgress p;
      caml_trainer_get_progress (trainer, &p);
      *resumed_step = p.step;
      if (p.step < exp->steps)
        return trainer;
      /* --steps is the total, not the steps to add */
      if (p.step == exp->steps)
        g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                     "the run in %s has done all its %ld steps: give --steps N above %ld "
                     "(the total) to train further", how->resume_dir, p.step, p.step);
      else
        g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                     "%d steps in all is fewer than the %ld the run in %s has done: "
                     "--steps is the total, so give one above %ld to train further",
                     exp->steps, p.step, how->resume_dir, p.step);
    }
  g_prefix_error (error, "--resume: ");
  caml_trainer_free (trainer);
  return NULL;
}

/* Settings that would do nothing for this model get a note (not an error:
 * the run is what was asked for, without them). */
static void
note_idle_settings (const CamlExperiment *exp, const CamlCliRun *how, const CamlModel *model)
{
  if (how->no_notes)
    return;
  gboolean gates = FALSE;
  for (int l = 0; l < model->n_layers; l++)
    for (int i = 0; i < model->layers[l]->n_params; i++)
      gates |= model->layers[l]->params[i].group == CAML_GROUP_GATE;
  if (exp->optimizer.em_steps > 0 && !gates)
    g_printerr ("%s: note: optimizer.em_steps = %d does nothing here: the model has no "
                "context-aware layer (no gate parameters), so every parameter moves at "
                "every step\n", g_get_prgname (), exp->optimizer.em_steps);
  if (how->sigma_given != NULL && caml_report_sigma_layer (model) < 0)
    g_printerr ("%s: note: %s %s nothing here: the model has no σ-maps (no convolutional "
                "context-aware layer)\n", g_get_prgname (), how->sigma_given,
                strstr (how->sigma_given, " and ") ? "do" : "does");
  else if (how->sigma_given != NULL && strstr (how->sigma_given, "--sigma-steps") != NULL)
    {
      /* steps the run never reaches (parse_steps_list leaves them out) */
      g_autoptr (GString) past = g_string_new (NULL);
      g_auto (GStrv) parts = g_strsplit (how->sigma_steps, ",", -1);
      for (int i = 0; parts[i] != NULL; i++)
        {
          guint64 step;
          if (g_ascii_string_to_unsigned (g_strstrip (parts[i]), 10, 1, G_MAXINT32, &step, NULL)
              && (long) step > exp->steps)
            g_string_append_printf (past, "%s%s", past->len > 0 ? ", " : "", parts[i]);
        }
      if (past->len > 0)
        g_printerr ("%s: note: --sigma-steps %s: past the run's last step (%d), so not "
                    "drawn\n", g_get_prgname (), past->str, exp->steps);
    }
}

/* What a run needs before it trains, read on a thread of its own, so that
 * the main loop hears Ctrl+C meanwhile (IMDB loads for seconds). */
typedef struct {
  CamlExperiment   *exp;
  const CamlCliRun *how;
  GMainLoop        *loop;
  /* out */
  CamlDataset      *train, *test;
  CamlModel        *model;
  CamlTrainer      *trainer;       /* NULL when error is set */
  CamlCheckpoint   *checkpoint;    /* with trainer */
  long              resumed_step;
  GError           *error;
} Load;

/* Weights from a file (--resume, --init-weights) replace every one the
 * model starts with: its layers and the training vocabulary only then, and
 * no word vectors to read (their file may be gone), as caml eval builds it. */
static CamlModel *
build_model (const CamlExperiment *exp, const CamlCliRun *how, const CamlDataset *train,
             GError **error)
{
  if (how->resume_dir == NULL && how->init_weights == NULL)
    return caml_experiment_build_model_for (exp, train, error);
  CamlModel *model = caml_experiment_build_model (exp, &train->x_shape, error);
  if (model != NULL)
    caml_model_set_vocab (model, train->vocab);
  return model;
}

static gpointer
load_run (gpointer user_data)
{
  Load *l = user_data;
  const CamlCliRun *how = l->how;
  if (!caml_experiment_load_datasets (l->exp, &l->train, &l->test, &l->error)
      || !(l->model = build_model (l->exp, how, l->train, &l->error)))
    caml_cli_name_experiment (&l->error, how->source);
  /* the file's weights in place of the seed's (and of pre-trained word
   * vectors): the model and the vocabulary must be the ones they were
   * trained with, which the file records */
  else if (how->init_weights != NULL
           && !caml_weights_load (l->model, how->init_weights, &l->error))
    g_prefix_error (&l->error, "--init-weights: ");
  else if ((l->trainer = new_trainer (l->exp, how, l->model, l->train, l->test,
                                      &l->resumed_step, &l->error)) == NULL)
    ;
  /* the start, and a resumed run's state: where a divergence before a
   * healthy evaluation goes back to */
  else if (!(l->checkpoint = caml_checkpoint_new (l->model, &l->error))
           || (how->resume_dir != NULL
               && !caml_checkpoint_take (l->checkpoint, l->trainer, &l->error)))
    {
      g_clear_pointer (&l->checkpoint, caml_checkpoint_free);
      g_clear_pointer (&l->trainer, caml_trainer_free);
    }
  else if (!caml_trainer_prepare (l->trainer, &l->error))  /* targets the loss refuses, memory */
    {
      caml_cli_name_experiment (&l->error, how->source);
      g_clear_pointer (&l->checkpoint, caml_checkpoint_free);
      g_clear_pointer (&l->trainer, caml_trainer_free);
    }
  g_idle_add (quit_loop, l->loop);
  return NULL;
}

/* Checks now and then whether a replica's run has ended (its main loop
 * hears the signals meanwhile). */
static gboolean
replica_tick (gpointer user_data)
{
  Run *run = user_data;
  CamlProgress p;
  caml_trainer_get_progress (run->trainer, &p);
  if (p.state == CAML_TRAINER_RUNNING || p.state == CAML_TRAINER_PAUSED)
    return G_SOURCE_CONTINUE;
  g_main_loop_quit (run->loop);
  return G_SOURCE_REMOVE;
}

/* A rank past the first: trains its share silently, its trainer summing
 * with the others' (a Ctrl+C or SIGTERM here stops all of them after the
 * same step); the first rank reports and writes the results. */
static int
run_replica (CamlTrainer *trainer, Run *run)
{
  g_autoptr (GError) error = NULL;
  run->trainer = trainer;
  run->quiet = TRUE;
  run->replica = TRUE;
  if (!caml_trainer_start (trainer, FALSE, &error))
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      caml_cli_mpi_abort (1);
    }
  g_timeout_add (100, replica_tick, run);
  g_main_loop_run (run->loop);
  CamlTrainerState end = caml_trainer_join (trainer);
  g_autoptr (GError) run_error = caml_trainer_get_error (trainer);
  run->trainer = NULL;
  caml_trainer_free (trainer);
  /* a divergence the first rank reports; a failure to sum is this rank's */
  if (run_error != NULL && !g_error_matches (run_error, CAML_ERROR, CAML_ERROR_DIVERGED))
    {
      caml_cli_mpi_speak (TRUE);
      g_printerr ("%s: %s\n", g_get_prgname (), run_error->message);
    }
  if (end == CAML_TRAINER_FAILED)
    return 1;
  return run->signal != 0 ? 128 + run->signal : 0;
}

int
caml_cli_run_experiment (CamlExperiment *exp, const CamlCliRun *how, char **failure)
{
  g_autoptr (GError) error = NULL;
  Problems problems = { NULL };
  g_autoptr (GPtrArray) made_dirs = NULL;   /* made for out_dir, removed again if left empty */
  g_autofree long *steps = NULL;
  int n_steps = 0;
  g_autoptr (GPtrArray) names = NULL;
  /* Everything that can be refused is, before the output directory is made. */
  if (!parse_steps_list (how->sigma_steps, exp->steps, &steps, &n_steps, &error))
    {
      g_printerr ("%s: %s\n", g_get_prgname (), error->message);
      if (failure != NULL)
        *failure = g_strdup (error->message);
      return 2;
    }
  Run run = {
    .loop = g_main_loop_new (NULL, FALSE),
    .loading = TRUE,
    .tty = isatty (STDERR_FILENO) && !how->plain,
    .quiet = how->quiet,
    .out_dir = how->out_dir,
  };
  start_listening (&run);
  Load load = { .exp = exp, .how = how, .loop = run.loop };
  GThread *thread = g_thread_new ("caml-load", load_run, &load);
  g_main_loop_run (run.loop);
  g_thread_join (thread);
  run.loading = FALSE;

  /* Several ranks (mpirun): every rank loads the same run; the first
   * alone writes the results and speaks. */
  int rank = how->alone ? 0 : caml_cli_mpi_rank (), ranks = run_ranks (how);
  if (run.signal == 0 && load.error == NULL && rank == 0)
    note_idle_settings (exp, how, load.model);
  int status = 1;
  gboolean ready = FALSE;
  if (run.signal != 0)   /* said when it came */
    status = 128 + run.signal;
  else if (load.error != NULL)
    problem (&problems, load.error->message);
  else if (rank > 0)
    ready = TRUE;
  else if (!check_result_names (how->out_dir, (names = planned_result_names (load.model,
                                                                             load.train,
                                                                             steps, n_steps)),
                                &error))
    problem (&problems, error->message);
  else if (!(made_dirs = caml_cli_make_dirs (how->out_dir), caml_cli_ensure_dir (how->out_dir, &error)))
    problem (&problems, error->message);
  else
    ready = TRUE;
  /* every rank trains, or none (a rank that cannot says why) */
  if (ranks > 1 && !caml_cli_mpi_ready (ready ? NULL : problems.first != NULL ? problems.first
                                                                          : "interrupted"))
    {
      if (ready)
        status = 1;   /* another rank said why */
      ready = FALSE;
    }
  if (ready && ranks > 1)
    caml_trainer_set_replica (load.trainer, rank, ranks, caml_cli_mpi_reduce, NULL);
  if (ready && rank > 0)
    status = run_replica (g_steal_pointer (&load.trainer), &run);
  else if (ready)
    {
      run.made_dirs = made_dirs;
      status = run_and_report (exp, how, load.model, load.train, load.test,
                               g_steal_pointer (&load.trainer), load.checkpoint, load.resumed_step, steps,
                               n_steps, &run, &problems);
    }
  stop_listening (&run);
  g_main_loop_unref (run.loop);
  caml_cli_remove_made_dirs (made_dirs);
  if (failure != NULL && status != 0)
    *failure = g_steal_pointer (&problems.first);
  g_free (problems.first);
  g_clear_error (&load.error);
  caml_trainer_free (load.trainer);
  caml_checkpoint_free (load.checkpoint);
  caml_model_free (load.model);
  caml_dataset_free (load.train);
  caml_dataset_free (load.test);
  return status;
}

/* The preset, init_weights and as_trained (the experiment, as JSON) of the
 * summary.json in dir, when it has them; NULL otherwise. A summary that
 * cannot be read only loses them: the run itself comes from
 * experiment.json and trainer.state. */
static void
read_saved_summary (const char *dir, char **preset, char **init_weights, char **as_trained)
{
  g_autofree char *path = g_build_filename (dir, "summary.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  *preset = *init_weights = *as_trained = NULL;
  if (!json_parser_load_from_file (parser, path, NULL))
    return;
  JsonNode *root = json_parser_get_root (parser);
  JsonObject *o = root && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  JsonNode *node;
  if (o && (node = json_object_get_member (o, "preset")) && JSON_NODE_HOLDS_VALUE (node)
      && json_node_get_value_type (node) == G_TYPE_STRING)
    *preset = json_node_dup_string (node);
  if (o && (node = json_object_get_member (o, "init_weights")) && JSON_NODE_HOLDS_VALUE (node)
      && json_node_get_value_type (node) == G_TYPE_STRING)
    *init_weights = json_node_dup_string (node);
  if (o && (node = json_object_get_member (o, "as_trained")) && JSON_NODE_HOLDS_VALUE (node)
      && json_node_get_value_type (node) == G_TYPE_STRING)
    *as_trained = json_node_dup_string (node);
}

/* What of a saved run's experiment.json --resume lets change: the live
 * settings (the trainer takes them at any step), the names, the plots'
 * domain, and where the data files are (moved or renamed since: a text
 * set's vocabulary is checked against the weights' all the same). */
static void
copy_live_settings (CamlExperiment *to, const CamlExperiment *from)
{
  for (int i = 0; i < 4; i++)
    {
      g_free (to->data.idx_paths[i]);
      to->data.idx_paths[i] = g_strdup (from->data.idx_paths[i]);
      to->plot_domain[i] = from->plot_domain[i];
    }
  for (int i = 0; i < 2; i++)
    {
      g_free (to->data.text_paths[i]);
      to->data.text_paths[i] = g_strdup (from->data.text_paths[i]);
    }
  g_free (to->data.embeddings);
  to->data.embeddings = g_strdup (from->data.embeddings);
  to->optimizer.lr = from->optimizer.lr;
  to->optimizer.em_steps = from->optimizer.em_steps;
  to->optimizer.weight_decay = from->optimizer.weight_decay;
  to->steps = from->steps;
  to->eval_every = from->eval_every;
  g_free (to->name);
  to->name = g_strdup (from->name);
  g_free (to->description);
  to->description = g_strdup (from->description);
  g_free (to->paper);
  to->paper = g_strdup (from->paper);
}

/* A resumed run is the saved one going on: its experiment.json (exp, as
 * loaded) may differ from the experiment it was trained with (as_trained,
 * from summary.json) in the live settings only. Another loss, data
 * setting or layer option would still load the state and go on silently
 * as a different run. */
static gboolean
check_resumed_experiment (const CamlExperiment *exp, const char *as_trained,
                          const char *source, GError **error)
{
  CamlExperiment *then = caml_experiment_load_data (as_trained, -1, "summary.json", NULL);
  if (then == NULL)   /* an older or damaged summary: nothing to hold it to */
    return TRUE;
  copy_live_settings (then, exp);
  g_autofree char *was = caml_experiment_to_json (then);
  g_autofree char *now = caml_experiment_to_json (exp);
  caml_experiment_free (then);
  if (g_str_equal (was, now))
    return TRUE;
  g_auto (GStrv) was_lines = g_strsplit (was, "\n", -1);
  g_auto (GStrv) now_lines = g_strsplit (now, "\n", -1);
  int i = 0;
  while (was_lines[i] != NULL && now_lines[i] != NULL && g_str_equal (was_lines[i], now_lines[i]))
    i++;
  char *lines[2] = { was_lines[i], now_lines[i] };
  for (int k = 0; k < 2; k++)
    {
      lines[k] = g_strstrip (g_strdup (lines[k] != NULL ? lines[k] : ""));
      if (g_str_has_suffix (lines[k], ","))
        lines[k][strlen (lines[k]) - 1] = '\0';
    }
  g_autofree char *was_line = lines[0], *now_line = lines[1];
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
               "%s has %s where the run was trained with %s: a resumed run may change only "
               "optimizer.lr, em_steps and weight_decay, training.steps and eval_every, the "
               "data files' paths and plot.domain (to train the weights on otherwise, use "
               "--init-weights)", source, now_line,
               was_line);
  return FALSE;
}

int
caml_cli_train (int argc, char **argv)
{
  g_autofree char *preset = NULL, *out_dir = NULL, *sigma_steps = NULL;
  g_auto (GStrv) layer_options = NULL;
  gint64 seed = UNSET, steps = UNSET;
  int kernel = CAML_CLI_NOT_GIVEN, depth = CAML_CLI_NOT_GIVEN;
  double validation = -1;
  g_autofree char *init_weights = NULL, *resume = NULL;
  gboolean quiet = FALSE, plain = FALSE, sigma_stretch = FALSE;
  g_auto (GStrv) args = NULL;
  const GOptionEntry entries[] = {
    { "preset", 'p', 0, G_OPTION_ARG_STRING, &preset,
      "Train the built-in experiment NAME (see `caml presets`)", "NAME" },
    { "resume", 'r', 0, G_OPTION_ARG_FILENAME, &resume,
      "Go on with the run whose results are in DIR, exactly where it stopped or finished "
      "(its experiment.json, model.weights and trainer.state), to --steps N in all "
      "(default: its own total); the results go to DIR unless --out says otherwise",
      "DIR" },
    { "init-weights", 'w', 0, G_OPTION_ARG_FILENAME, &init_weights,
      "Start from these weights (a model.weights of the same model and data) instead "
      "of the seed's", "FILE" },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &seed,
      "Seed for initial weights, data split and batch order (default: the file's)", "N" },
    { "steps", 'n', 0, G_OPTION_ARG_INT64, &steps,
      "Number of training steps (default: the file's)", "N" },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "Directory for the results (default: runs/NAME-seedN)", "DIR" },
    { "kernel", 'k', 0, G_OPTION_ARG_INT, &kernel,
      "Kernel size of every convolutional layer (same as -O kernel=K)", "K" },
    { "depth", 'd', 0, G_OPTION_ARG_INT, &depth,
      "Depth of every convolutional layer (same as -O depth=D)", "D" },
    { "layer-option", 'O', 0, G_OPTION_ARG_STRING_ARRAY, &layer_options,
      "Set a layer option on every layer that has it (KEY=VALUE) or on layer N only "
      "(N.KEY=VALUE), e.g. -O 0.units=8 -O 0.activation=relu (a bare KEY reaches the output "
      "layer too); repeatable", "[N.]KEY=VALUE" },
    { "validation", 'V', 0, G_OPTION_ARG_DOUBLE, &validation,
      "Hold this fraction of the training set out and evaluate on it instead of the "
      "test set (data.validation_fraction), e.g. 0.1 to choose a step count", "F" },
    { "sigma-steps", 0, 0, G_OPTION_ARG_STRING, &sigma_steps,
      "Steps at which to draw σ-maps, e.g. 1000,5000,last (default: 1000,last)", "LIST" },
    { "sigma-stretch", 0, 0, G_OPTION_ARG_NONE, &sigma_stretch,
      "Draw σ-maps with their grey scale stretched over the maps' own χ range (1st to 99th "
      "percentile, in the title) instead of 0 to 1", NULL },
    { "plain", 0, 0, G_OPTION_ARG_NONE, &plain,
      "Print a line per evaluation instead of a progress bar", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Print only the summary", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args, NULL, NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("(--preset NAME | FILE.json) - train an experiment");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Trains in a background thread with a progress bar on a terminal (a line per\n"
    "evaluation otherwise); Ctrl+C (or SIGTERM) stops early, says so at once,\n"
    "and still evaluates and writes the results; a second Ctrl+C aborts that\n"
    "and leaves DIR as it was. Ctrl+C while the data load stops the run as\n"
    "soon as they are read, writing nothing (a second: at once). The output\n"
    "directory must take files, and no name of a result this run writes may\n"
    "be taken there by a directory (or anything but a file): both are checked\n"
    "before training.\n"
    "\n"
    "Writes into DIR, all or nothing: the results are written into a hidden\n"
    "directory inside DIR first and moved into place, replacing every result\n"
    "file an earlier run left there (so DIR holds one run's results), only\n"
    "when all were written; when one cannot be, DIR keeps what it held and the\n"
    "failure names the file:\n"
    "  metrics.csv      a row per evaluation: step, train_loss (the mean over\n"
    "                   the batches since the evaluation before), test_loss,\n"
    "                   test_mse or test_accuracy, seconds; a run stopped (or\n"
    "                   rolled back by a divergence) between evaluations gets\n"
    "                   a last row at its final step, evaluated after the run\n"
    "                   with the weights it saves\n"
    "  summary.json     preset, seed, steps, evaluated_on (\"test\", or\n"
    "                   \"validation\" with --validation: then the test_* figures\n"
    "                   here and in metrics.csv are the held-out part's),\n"
    "                   train_loss and train_accuracy or train_mse (the final\n"
    "                   weights on the whole training set, as `caml eval`\n"
    "                   gives them), test_loss, test_mse or\n"
    "                   test_accuracy (of the saved weights, metrics.csv's\n"
    "                   last row), seconds, eval_seconds (of them spent\n"
    "                   evaluating), steps_per_second over the rest; for text\n"
    "                   data also tokens (valid tokens trained on) and\n"
    "                   tokens_per_second; after a divergence the error,\n"
    "                   diverged_at_step and rolled_back_to\n"
    "  model.weights    the trained weights (load with `caml eval --weights`)\n"
    "  trainer.state    what `--resume DIR` needs besides them: the optimizer's\n"
    "                   state, the step count, the losses and the evaluations\n"
    "                   (of a run that diverged: at the step it went back to)\n"
    "  experiment.json  the experiment as run (with the seed and steps used)\n"
    "  loss.png         training and test (or validation) loss per step, and a\n"
    "                   marker where a run diverged\n"
    "  surface.png      for 2-D → 1-D regression: ground truth and fitted surface\n"
    "                   with the training points, over the experiment's plot domain\n"
    "  chi.png          the χ surface of every context-aware layer\n"
    "  parts.png        with a CA-NN layer: its χ, the context-free part χ·f₁\n"
    "                   (of v(c), Eq. 37) and the context-sensitive part\n"
    "                   (1 − χ)·f₀ (of the default value w₀; f₁, f₀: the output\n"
    "                   with the gate held at 1 and at 0) beside the fit\n"
    "  sigma-stepN.png  for convolutional CA layers: 64 test images, each beside\n"
    "                   its σ-map (χ per pixel: black 0, white 1, or the\n"
    "                   title's range with --sigma-stretch), at the\n"
    "                   --sigma-steps; and\n"
    "                   summary.json gains sigma_auc (ROC AUC of χ between digit\n"
    "                   pixels > 0.5 and background pixels = 0, first 1000 test\n"
    "                   images), sigma_high_on (foreground or background), and\n"
    "                   whose σ-maps these are (also in the title): the first\n"
    "                   convolutional CA layer, sigma_layer (its index) and\n"
    "                   sigma_layer_type; for a ca_res_conv block the gate of\n"
    "                   its last sublayer, sigma_sublayer of sigma_sublayers\n"
    "  words.html       for text models with a per-word or per-position gate\n"
    "                   (CA-BSFE, CA-ATT, CA-RNN): 20 test samples with every\n"
    "                   word shaded by its χ̃ (light: context-free, χ̃ → 1;\n"
    "                   dark: context-sensitive, χ̃ → 0), and the 50\n"
    "                   most and least context-free words seen ≥ 20 times in\n"
    "                   training (docs/text-classification.md)\n"
    "  words.png        the same two lists as bars\n"
    "\n"
    "--init-weights FILE starts from saved weights (a run's model.weights,\n"
    "or the workbench's) instead of the seed's: the model and, for text, the\n"
    "vocabulary must be those they were trained with, else nothing runs. The\n"
    "optimizer's state (Adagrad's accumulators, Adam's moments, the em_steps\n"
    "phase) and the step count start afresh; the seed still orders the\n"
    "batches; summary.json names the file.\n"
    "\n"
    "--resume DIR goes on with the run whose results are in DIR, from where it\n"
    "finished or was stopped (Ctrl+C), as if it had never ended: its\n"
    "experiment.json, model.weights and trainer.state give the model, the\n"
    "weights, the optimizer's state, the batch order (drawn again from the\n"
    "seed), the step count and the losses; without weight averaging the result\n"
    "is bit for bit that of one run of the total. --steps N sets the total\n"
    "(default: the saved run's own, for a stopped run); the results replace\n"
    "DIR's unless --out names another directory; summary.json gains\n"
    "resumed_from (the directory and step). Nothing that would change the run\n"
    "may be given with it (a preset or file, --seed, --init-weights, layer\n"
    "options, --validation). Edit DIR/experiment.json to change, say, the\n"
    "learning rate: the run then goes on with it. A state that does not\n"
    "match — another run's, or weights changed since it was saved — is\n"
    "refused before anything is written.\n"
    "\n"
    "A run that diverges goes back to its last healthy evaluation (a loss\n"
    "finite and within twice the lowest so far; else to the step it resumed\n"
    "from, or step 0), as the workbench's Continue does — the last finite\n"
    "weights, a step or two before, have often blown up already — and keeps\n"
    "its weights as above, with the trainer.state of that step: lower the\n"
    "learning rate in DIR/experiment.json, and --resume DIR goes on from\n"
    "there as a run stopped at that step would. To go back, the run holds a\n"
    "copy of the weights and the optimizer's state at its latest healthy\n"
    "evaluation, and one of its starting weights. One back at step 0 has\n"
    "nothing to keep and leaves DIR as it was (an earlier run's results too),\n"
    "writing only failed-summary.json and failed-loss.png (the losses up to\n"
    "the failure).\n"
    "A run stopped before its first step, or aborted, writes nothing.\n"
    "\n"
    "Exit status: 0 when the run finished, 1 when it failed (diverged), could\n"
    "not start or could not write a result (then nothing of it is kept), 2 for\n"
    "bad command-line options; interrupted by Ctrl+C (SIGINT) or SIGTERM, the\n"
    "process ends by that signal once it has stopped (a shell reports 130 or\n"
    "143), so a shell loop around it stops too.");
  g_autoptr (GError) error = NULL;
  if (!caml_cli_parse_options (ctx, entries, &argc, &argv, &error))
    {
      g_printerr ("caml train: %s\n", error->message);
      return 2;
    }
  /* Each names its own option and value, as `caml sweep` does. */
  if (seed != UNSET && seed < 0)
    {
      g_printerr ("caml train: --seed %" G_GINT64_FORMAT ": expected a whole number in "
                  "0…%" G_GINT64_FORMAT "\n", seed, G_MAXINT64);
      return 2;
    }
  if (steps != UNSET && (steps < 1 || steps > 1000000000))
    {
      g_printerr ("caml train: --steps %" G_GINT64_FORMAT ": expected a whole number in "
                  "1…1000000000\n", steps);
      return 2;
    }
  if (validation != -1 && !(validation >= 0 && validation < 1))
    {
      g_printerr ("caml train: --validation must be in [0, 1)\n");
      return 2;
    }

  if (resume != NULL)
    {
      /* the run goes on as it was set up: nothing that would change it */
      const char *other = preset ? "--preset" : args && args[0] ? args[0]
                          : seed != UNSET ? "--seed" : init_weights ? "--init-weights"
                          : kernel != CAML_CLI_NOT_GIVEN ? "--kernel"
                          : depth != CAML_CLI_NOT_GIVEN ? "--depth"
                          : layer_options ? "--layer-option" : validation != -1 ? "--validation"
                          : NULL;
      if (other != NULL)
        {
          g_printerr ("caml train: --resume goes on with the experiment saved in %s/: %s "
                      "cannot be given with it\n", resume, other);
          return 2;
        }
      args = g_new0 (char *, 2);
      args[0] = g_build_filename (resume, "experiment.json", NULL);
    }

  g_autofree char *source = NULL;
  CamlExperiment *exp = caml_cli_load_experiment ("train", preset, args, &source, &error);
  if (exp == NULL)
    {
      if (resume != NULL)
        g_prefix_error (&error, "--resume: ");
      g_printerr ("caml train: %s\n", error->message);
      return caml_cli_is_usage_error (error) ? 2 : 1;
    }
  /* a resumed run's summary keeps the saved one's preset and origin */
  g_autofree char *saved_preset = NULL, *started_from = NULL, *as_trained = NULL;
  if (resume != NULL)
    read_saved_summary (resume, &saved_preset, &started_from, &as_trained);
  if (as_trained != NULL && !check_resumed_experiment (exp, as_trained, source, &error))
    {
      g_printerr ("caml train: --resume: %s\n", error->message);
      caml_experiment_free (exp);
      return 1;
    }
  if (seed != UNSET)
    exp->seed = (guint64) seed;
  if (steps != UNSET)
    exp->steps = (int) steps;
  if (validation > 0 && !caml_data_kind_has_validation (exp->data.kind))
    {
      g_printerr ("caml train: --validation %g: %s data has no validation split (only image "
                  "and text data sets do)\n", validation, caml_data_kind_names[exp->data.kind]);
      caml_experiment_free (exp);
      return 2;
    }
  if (validation >= 0)
    exp->data.validation_fraction = validation;
  if (!caml_cli_apply_layer_options (exp, layer_options, kernel, depth, &error))
    {
      g_printerr ("caml train: %s\n", error->message);
      caml_experiment_free (exp);
      return 2;
    }
  if (out_dir == NULL && resume != NULL)
    out_dir = g_strdup (resume);
  if (out_dir == NULL)
    {
      g_autofree char *name = caml_cli_safe_name (exp->name);
      out_dir = g_strdup_printf ("runs/%s-seed%" G_GUINT64_FORMAT, name, exp->seed);
    }

  CamlCliRun how = {
    .preset = resume ? saved_preset : preset, .source = source, .out_dir = out_dir,
    .sigma_steps = sigma_steps ? sigma_steps : "1000,last", .init_weights = init_weights,
    .resume_dir = resume, .started_from = started_from,
    .sigma_stretch = sigma_stretch, .quiet = quiet, .plain = plain,
    .sigma_given = sigma_steps && sigma_stretch ? "--sigma-steps and --sigma-stretch"
                   : sigma_steps ? "--sigma-steps" : sigma_stretch ? "--sigma-stretch" : NULL,
  };
  int status = caml_cli_run_experiment (exp, &how, NULL);
  caml_experiment_free (exp);
  return status;
}

/* ----------------------------------------------------------------- eval */

int
caml_cli_eval (int argc, char **argv)
{
  g_autofree char *preset = NULL, *weights = NULL, *out_dir = NULL;
  gint64 seed = UNSET;
  gboolean sigma_stretch = FALSE;
  g_auto (GStrv) args = NULL;
  const GOptionEntry entries[] = {
    { "preset", 'p', 0, G_OPTION_ARG_STRING, &preset,
      "Evaluate on the built-in experiment NAME", "NAME" },
    { "weights", 'w', 0, G_OPTION_ARG_FILENAME, &weights,
      "Weights written by `caml train` (required)", "FILE" },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &seed,
      "Seed of the data split (default: the file's; use the training run's)", "N" },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "Also draw the model into DIR: surface.png, chi.png and parts.png, for a "
      "convolutional CA layer sigma.png, or for a text model with word gates words.html "
      "and words.png", "DIR" },
    { "sigma-stretch", 0, 0, G_OPTION_ARG_NONE, &sigma_stretch,
      "Draw sigma.png with its grey scale stretched over the maps' own χ range", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args, NULL, NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("(--preset NAME | FILE.json) --weights FILE - evaluate saved weights");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Builds the experiment's model, loads the weights (which must match its\n"
    "layers), and prints the loss and the metric (MSE or accuracy) on the\n"
    "training and test sets. The experiment.json a training run writes beside\n"
    "its weights reproduces that run's data split. With --out, writes what\n"
    "`caml train` draws from a trained model, and says which files it wrote:\n"
    "for 2-D → 1-D regression surface.png, chi.png (with a gated layer) and\n"
    "parts.png (with a CA-NN layer); for a convolutional CA layer sigma.png\n"
    "(64 test images beside their σ-maps); for a text model with word gates\n"
    "words.html and words.png. A model with none of these gets none. A model\n"
    "with σ-maps also gets sigma_auc: the ROC AUC of χ between digit and\n"
    "background pixels of the first 1000 test images, as `caml train` gives it.");
  g_autoptr (GError) error = NULL;
  if (!caml_cli_parse_options (ctx, entries, &argc, &argv, &error))
    {
      g_printerr ("caml eval: %s\n", error->message);
      return 2;
    }
  if (weights == NULL)
    {
      g_printerr ("caml eval: --weights FILE is required\n");
      return 2;
    }
  if (seed != UNSET && seed < 0)
    {
      g_printerr ("caml eval: --seed %" G_GINT64_FORMAT ": expected a whole number in "
                  "0…%" G_GINT64_FORMAT "\n", seed, G_MAXINT64);
      return 2;
    }
  g_autofree char *source = NULL;
  CamlExperiment *exp = caml_cli_load_experiment ("eval", preset, args, &source, &error);
  if (exp == NULL)
    {
      g_printerr ("caml eval: %s\n", error->message);
      return caml_cli_is_usage_error (error) ? 2 : 1;
    }
  if (seed != UNSET)
    exp->seed = (guint64) seed;

  CamlDataset *train = NULL, *test = NULL;
  CamlModel *model = NULL;
  int status = 1;
  gboolean words = FALSE;
  g_autoptr (GString) drawn = g_string_new (NULL);   /* ", NAME" per file drawn */
  g_autofree char *words_path = out_dir ? g_build_filename (out_dir, "words.html", NULL) : NULL;
  g_autofree char *words_png = out_dir ? g_build_filename (out_dir, "words.png", NULL) : NULL;
  g_autofree char *title = g_strdup_printf ("%s, seed %" G_GUINT64_FORMAT,
                                            exp->name ? exp->name : "experiment", exp->seed);
  if (!caml_experiment_load_datasets (exp, &train, &test, &error)
      /* the layers only: every weight comes from the file (no word vectors to read) */
      || !(model = caml_experiment_build_model (exp, &train->x_shape, &error)))
    {
      caml_cli_name_experiment (&error, source);
      g_printerr ("caml eval: %s\n", error->message);
      goto out;
    }
  /* … with the vocabulary, so weights trained on other words are refused */
  caml_model_set_vocab (model, train->vocab);
  if (!caml_weights_load (model, weights, &error))
    {
      g_printerr ("caml eval: %s\n", error->message);
      goto out;
    }
  /* The output directory is checked before the work (and removed again
   * when it was made for nothing). */
  gboolean out_existed = out_dir != NULL && g_file_test (out_dir, G_FILE_TEST_EXISTS);
  if (out_dir && !caml_cli_ensure_dir (out_dir, &error))
    {
      g_printerr ("caml eval: %s\n", error->message);
      goto out;
    }
  gboolean classification = train->n_classes > 0;
  const char *metric = classification ? "accuracy" : "mse";
  const char *evaluated_on = caml_report_evaluated_on (exp);
  int width = (int) MAX (strlen ("train"), strlen (evaluated_on));
  double loss, value;
  caml_evaluate (model, exp->loss, train, &loss, &value);
  g_print ("%-*s  loss %.6g  %s %.6g  (%d sample%s)\n", width, "train", loss, metric, value,
           train->n, train->n == 1 ? "" : "s");
  caml_evaluate (model, exp->loss, test, &loss, &value);
  g_print ("%-*s  loss %.6g  %s %.6g  (%d sample%s)\n", width, evaluated_on, loss, metric,
           value, test->n, test->n == 1 ? "" : "s");
  double sigma_auc;
  gboolean high_on_fg;
  if (!caml_report_write_sigma_eval (out_dir, exp->name ? exp->name : "experiment", model,
                                        test, sigma_stretch, drawn, &sigma_auc, &high_on_fg,
                                        &error))
    {
      g_printerr ("caml eval: %s\n", error->message);
      goto out;
    }
  if (!isnan (sigma_auc))
    g_print ("sigma_auc %.4f (χ higher on the %s)\n", sigma_auc,
             high_on_fg ? "foreground" : "background");
  if (out_dir && (!caml_report_write_surfaces (out_dir, exp, model, train, drawn, &error)
                  || !caml_report_write_words_on (words_path, words_png, title, model,
                                                  exp, train, test, WORDS_SAMPLES,
                                                  WORDS_MIN_COUNT, WORDS_TOP, &words, &error)))
    {
      g_printerr ("caml eval: %s\n", error->message);
      goto out;
    }
  if (words)
    g_string_append (drawn, ", words.html, words.png");
  /* As `caml train` says where its results went; the names after ", ". */
  if (out_dir && drawn->len > 0)
    g_print ("results in %s/ (%s)\n", out_dir, drawn->str + 2);
  else if (out_dir)
    {
      if (!out_existed)
        g_rmdir (out_dir);
      g_print ("nothing drawn into %s/: the model is no 2-D → 1-D surface and has no "
               "σ-maps or word gates\n", out_dir);
    }
  status = 0;

out:
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_experiment_free (exp);
  return status;
}
