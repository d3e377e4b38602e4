/* cli-run.c — one run of `caml train` (and of each run of `caml sweep`):
 * caml_cli_run_experiment loads the data and the model on a thread while
 * the main loop hears Ctrl+C, trains with a progress bar or lines, writes
 * the results folder (studio/run-results.c) into a staging directory and
 * moves it into place; a first Ctrl+C stops and saves, a second aborts.
 * On several ranks (mpirun) the first trains, reports and writes, the
 * others train their share silently (run_replica). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <glib-unix.h>
#include <gio/gio.h>
#include <glib/gstdio.h>

#include "caml.h"
#include "cli-common.h"
#include "cli-mpi.h"
#include "cli-progress.h"
#include "results-dir.h"
#include "caml-run.h"
#include "report.h"
#include "run-results.h"

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
    caml_remove_flat_dir (run->staging);
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

/* What the trainer's progress function does besides recording for the
 * results (caml_run_recorder_progress): wake the main loop at the end, and
 * keep the checkpoint a divergence goes back to. */
typedef struct {
  CamlTrainer     *trainer;
  CamlRunRecorder *rec;
  CamlCheckpoint  *checkpoint;   /* where a divergence goes back to */
  /* on several ranks: each checkpoint written to this folder too, for
   * --resume after a rank is lost */
  const CamlExperiment *exp;
  const CamlDataset    *train;
  char                 *checkpoint_dir;
  gboolean              checkpoint_said;   /* a failed write was said */
  GSource              *tick;    /* on_tick's, woken when the run ends */
} Watch;

static void
on_trainer_progress (const CamlProgress *p, gpointer user_data)
{
  Watch *watch = user_data;
  /* the main loop hears of the end now, not at its next tick */
  if (p->state == CAML_TRAINER_FINISHED || p->state == CAML_TRAINER_STOPPED
      || p->state == CAML_TRAINER_FAILED)
    g_source_set_ready_time (watch->tick, 0);
  /* a copy of the whole state at each healthy evaluation */
  if (caml_checkpoint_progress (watch->checkpoint, watch->trainer, p)
      && watch->checkpoint_dir != NULL)
    {
      g_autoptr (GError) error = NULL;
      if (!caml_checkpoint_write (watch->checkpoint, watch->exp, watch->train,
                                  watch->checkpoint_dir, &error) && !watch->checkpoint_said)
        {
          g_printerr ("%s: note: the checkpoint at step %ld was not written: %s\n",
                      g_get_prgname (), p->step, error->message);
          watch->checkpoint_said = TRUE;
        }
    }
  caml_run_recorder_progress (watch->rec, p);
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

/* "stopped after 385 steps in 12.0s (…)" */
static void
print_ended (const CamlProgress *p, const CamlCliRun *how)
{
  double training = p->seconds - p->eval_seconds;
  g_print ("%s after %ld step%s in %.1fs (%.1fs of them evaluating; %.0f steps/s",
           caml_run_state_name (p->state), p->step, p->step == 1 ? "" : "s", p->seconds, p->eval_seconds,
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

/* Where caml_run_results_write's problems go: printed, the first kept
 * (Problems); a file written into the staging directory `dir` is named
 * where it was to go, in out_dir. */
typedef struct {
  Problems   *problems;
  const char *dir, *out_dir;   /* NULL: the files were written in place */
} Said;

static void
on_results_say (CamlRunResultsSay kind, const char *message, gpointer user_data)
{
  Said *said = user_data;
  if (kind == CAML_RUN_RESULTS_NOTE)
    {
      g_printerr ("%s: note: %s\n", g_get_prgname (), message);
      return;
    }
  g_autoptr (GString) text = g_string_new (message);
  if (said->dir != NULL)
    {
      g_autofree char *from = g_strconcat (said->dir, G_DIR_SEPARATOR_S, NULL);
      g_autofree char *to = g_strconcat (said->out_dir, G_DIR_SEPARATOR_S, NULL);
      g_string_replace (text, from, to, 0);
    }
  problem (said->problems, text->str);
}

/* A run that failed with nothing to keep (its weights went back to the
 * untrained ones): what an earlier run left in out_dir stays, and this
 * run's summary and loss plot go beside it as failed-summary.json and
 * failed-loss.png. */
static void
report_nothing_kept (const char *out_dir, const CamlRunResults *r, const CamlCliRun *how,
                     Problems *problems)
{
  Said said = { .problems = problems };
  gboolean ok = caml_run_results_write_failure (r, out_dir, on_results_say, &said);
  if (r->run_error)
    problem (problems, r->run_error->message);
  print_ended (&r->p, how);
  if (ok)
    g_print ("nothing kept: the run failed before a step worth keeping, so %s/ keeps what it "
             "held; this run's failure is in failed-summary.json and failed-loss.png there\n",
             out_dir);
  else
    g_print ("nothing kept: the run failed before a step worth keeping, so %s/ keeps what it "
             "held; its failure report could not be written there (above)\n", out_dir);
}

/* The results being written on a thread of their own (save_results) while
 * the main loop waits for them, or for a second Ctrl+C. */
typedef struct {
  CamlRunResults *results;
  const char     *dir;         /* the staging directory */
  Said            said;
  GMainLoop      *loop;
  gboolean        written_all; /* out */
} Save;

static gboolean
quit_loop (gpointer user_data)
{
  g_main_loop_quit (user_data);
  return G_SOURCE_REMOVE;
}

static gpointer
save_results (gpointer user_data)
{
  Save *s = user_data;
  s->written_all = caml_run_results_write (s->results, s->dir, on_results_say, &s->said);
  g_idle_add (quit_loop, s->loop);
  return NULL;
}

/* The three files of a checkpoint folder (caml_checkpoint_write: those of
 * the workbench's Save Run), and the folder when nothing else is in it. */
static void
remove_checkpoint (const char *dir)
{
  for (int i = 0; caml_run_resumable_files[i] != NULL; i++)
    {
      g_autofree char *path = g_build_filename (dir, caml_run_resumable_files[i], NULL);
      g_unlink (path);
    }
  g_rmdir (dir);
}

/* Writes the results of a run that made steps into a staging directory
 * inside out_dir, on a thread while the main loop hears a second Ctrl+C,
 * moves them into place, and says what the run did; `checkpoints`: the
 * run wrote checkpoints in out_dir/checkpoint/ (several ranks). Returns the
 * exit status. */
static int
keep_results (CamlRunResults *r, const CamlCliRun *how, gboolean checkpoints, Run *run,
              Problems *problems)
{
  const char *out_dir = how->out_dir;
  gboolean classification = r->train->n_classes > 0;
  g_autoptr (GError) error = NULL;
  /* What this run keeps is written into a staging directory inside
   * out_dir (the same file system) and moved into place only when every
   * file was written: a failure, or a second Ctrl+C, leaves out_dir as it
   * was. */
  g_autoptr (CamlResultsDir) results = caml_results_dir_new (out_dir, &error);
  if (results == NULL)
    {
      problem (problems, error->message);
      stop_listening (run);
      return 1;
    }
  Save save = {
    .results = r, .dir = results->dir, .loop = run->loop,
    .said = { .problems = problems, .dir = results->dir, .out_dir = out_dir },
  };
  run->staging = results->dir;
  GThread *thread = g_thread_new ("caml-save", save_results, &save);
  g_main_loop_run (run->loop);
  g_thread_join (thread);
  gboolean committed = save.written_all
                       && kept (problems, caml_results_dir_commit (results,
                                                                   caml_run_results_is_name,
                                                                   &error), &error);
  /* the run's own results replace its checkpoints, and those of the run
   * it went on from (--resume OUT/checkpoint --out OUT) */
  g_autofree char *own_dir = g_build_filename (out_dir, "checkpoint", NULL);
  g_autofree char *own = g_canonicalize_filename (own_dir, NULL);
  g_autofree char *from = how->resume_dir != NULL
                          ? g_canonicalize_filename (how->resume_dir, NULL) : NULL;
  if (committed && (checkpoints || g_strcmp0 (own, from) == 0))
    remove_checkpoint (own);
  run->checkpoint_dir = NULL;
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
  g_clear_pointer (&results, caml_results_dir_free);   /* removes what was not committed */

  const CamlEvalRow *last = r->n_rows > 0 ? &r->rows[r->n_rows - 1] : NULL;
  if (r->final_row && !how->quiet && !run->tty)
    print_row (last, classification, run->evaluated_on);
  if (r->run_error)
    problem (problems, r->run_error->message);
  print_ended (&r->p, how);
  if (last)
    g_print ("train_loss %.6g  %s_loss %.6g  train_%s %.6g  %s_%s %.6g\n",
             r->train_loss, run->evaluated_on, last->test_loss,
             classification ? "accuracy" : "mse", r->train_metric,
             run->evaluated_on, classification ? "accuracy" : "mse", last->test_metric);
  if (!isnan (r->sigma_auc))
    {
      g_autofree char *of = caml_report_sigma_source_text (&r->sigma_source);
      g_print ("sigma_auc %.4f (χ higher on the %s; σ-maps of %s)\n", r->sigma_auc,
               r->sigma_high_on_fg ? "foreground" : "background", of);
    }
  if (committed)
    g_print ("results in %s/ (metrics.csv, summary.json, model.weights%s, experiment.json, "
             "loss.png%s)\n", out_dir, r->state != NULL ? ", trainer.state" : "",
             r->drawn->str);
  else
    g_print ("nothing kept: some results could not be written (above), so %s/ keeps what "
             "it held\n", out_dir);
  if (committed && r->diverged && r->state != NULL)
    g_print ("to go on from step %ld: lower optimizer.lr in %s/experiment.json, then "
             "`caml train --resume %s`\n", r->p.step, out_dir, out_dir);
  if (!committed || r->p.state == CAML_TRAINER_FAILED)
    return 1;
  return run->signal != 0 ? 128 + run->signal : 0;
}

/* Trains model in a background thread (trainer's, which it frees; a
 * resumed run's from resumed_step on) while the main loop draws progress,
 * then writes every result file into out_dir. A divergence goes back to
 * the checkpoint (the last healthy evaluation, or the start). */
static int
run_and_report (CamlExperiment *exp, const CamlCliRun *how, CamlModel *model,
                const CamlDataset *train, const CamlDataset *test, CamlTrainer *trainer,
                CamlCheckpoint *checkpoint, long resumed_step, long *sigma_steps,
                int n_sigma_steps, Run *run, Problems *problems)
{
  const char *source = how->source, *out_dir = how->out_dir;
  gboolean quiet = how->quiet;
  g_autoptr (GError) error = NULL;
  g_autoptr (CamlRunRecorder) rec = caml_run_recorder_new (trainer, model, test, sigma_steps,
                                                           n_sigma_steps);
  Watch watch = {
    .trainer = trainer, .rec = rec, .checkpoint = checkpoint, .exp = exp, .train = train,
    .checkpoint_dir = run_ranks (how) > 1 ? g_build_filename (out_dir, "checkpoint", NULL)
                                          : NULL,
    .tick = g_timeout_source_new (100),
  };
  run->checkpoint_dir = watch.checkpoint_dir;

  caml_trainer_set_progress_func (trainer, on_trainer_progress, &watch, 1);
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
      if (watch.checkpoint_dir != NULL)
        g_print ("on %d ranks of %d thread%s each, each batch of %d shared among them; a "
                 "checkpoint at every evaluation in %s/\n", run_ranks (how),
                 caml_trainer_get_threads (trainer),
                 caml_trainer_get_threads (trainer) == 1 ? "" : "s",
                 exp->batch_size, watch.checkpoint_dir);
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
      run->checkpoint_dir = NULL;
      g_free (watch.checkpoint_dir);
      g_source_unref (watch.tick);
      return 1;
    }
  /* removes itself when the run ends */
  g_source_set_callback (watch.tick, on_tick, run, NULL);
  g_source_attach (watch.tick, NULL);
  g_main_loop_run (run->loop);
  caml_trainer_join (trainer);
  g_clear_pointer (&watch.tick, g_source_unref);

  /* summary.json's origin; on several ranks the gradient sums as this
   * (the first) rank saw them */
  CamlRunOrigin origin = {
    .preset = how->preset, .resumed_from = how->resume_dir, .resumed_step = resumed_step,
    .init_weights = how->resume_dir ? how->started_from : how->init_weights,
    .ranks = run_ranks (how),
  };
  if (origin.ranks > 1)
    caml_cli_mpi_reduced (&origin.allreduce_calls, &origin.allreduce_bytes,
                          &origin.allreduce_seconds);
  CamlRunResults r = {
    .exp = exp, .origin = &origin, .model = model, .train = train, .test = test, .rec = rec,
    .sigma_stretch = how->sigma_stretch,
  };
  caml_run_results_take (&r, trainer, checkpoint, &error);
  if (error != NULL)
    {
      problem (problems, error->message);
      g_clear_error (&error);
    }
  caml_trainer_free (trainer);
  run->trainer = NULL;

  int status = 1;
  if (r.p.state == CAML_TRAINER_FAILED && r.p.step == 0)
    {
      /* Nothing of this run is worth keeping: the directory keeps what it
       * held (an earlier run's results), and this one's failure goes
       * beside them under names of its own. */
      stop_listening (run);
      report_nothing_kept (out_dir, &r, how, problems);
    }
  else if (r.p.state == CAML_TRAINER_STOPPED && r.p.step == 0)
    {
      /* Stopped before its first step: untrained weights are nothing to
       * keep, and an earlier run's results stay. */
      stop_listening (run);
      print_ended (&r.p, how);
      g_print ("nothing kept: stopped before the first step, so %s/ keeps what it held\n",
               out_dir);
      status = run->signal != 0 ? 128 + run->signal : 1;
    }
  else
    status = keep_results (&r, how, watch.checkpoint_dir != NULL, run, problems);
  run->checkpoint_dir = NULL;
  g_free (watch.checkpoint_dir);
  caml_run_results_clear (&r);
  return status;
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
  else if (!check_result_names (how->out_dir, (names = caml_run_results_planned_names (load.model,
                                                                                       load.train,
                                                                                       steps,
                                                                                       n_steps)),
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
