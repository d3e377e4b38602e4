/* caml.c — the command-line tool: list presets, train, evaluate.
 *
 *   caml presets
 *   caml train (--preset NAME | FILE.json) [--seed N] [--steps N] [--out DIR]
 *   caml eval  (--preset NAME | FILE.json) --weights FILE [--out DIR]
 *   caml sweep (--preset NAME | FILE.json) --grid KEY=V1,V2,… [--grid …]
 *   caml bench [--preset NAME | FILE.json] [--kernel K] [--depth D]
 *   caml rnn-sanity [--runs N] [--steps N] [--units N] [--out DIR]
 *   caml sem   --pairs FILE [--corpus FILE…] [--embeddings FILE] [--iterations N]
 *   caml reproduce [--quick] [--only NAME…] [--out DIR]
 *   caml --version
 */
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <gio/gio.h>

#include "caml.h"
#include "cli.h"
#include "cli-common.h"
#include "cli-mpi.h"
#include "cli-reproduce.h"
#include "presets.h"

static const char *const usage =
  "Usage: caml COMMAND [OPTIONS]\n"
  "\n"
  "Train and evaluate context-aware neural networks (Zeng, \"Context Aware\n"
  "Machine Learning\") from experiment files or built-in presets.\n"
  "\n"
  "Commands:\n"
  "  presets    list the built-in experiments, one line each\n"
  "  layers     list the layer types and their options\n"
  "  train      train an experiment and write metrics, weights and plots\n"
  "  eval       evaluate saved weights on an experiment's test set\n"
  "  sweep      train a grid of layer options, each with its matched baseline\n"
  "  bench      time training of a preset, layer by layer\n"
  "  rnn-sanity the paper's CA-RNN sanity test (Fig. 13): CA-RNN, LSTM, GRU\n"
  "  sem        CA-SEM sentence embeddings vs. average and SIF on sentence pairs\n"
  "  reproduce  run the paper's experiments and judge each claim: report.md/.html\n"
  "  help       show this help, or `caml help COMMAND` for a command's\n"
  "  version    print the version (also --version)\n"
  "\n"
  "Run `caml COMMAND --help` for the options of a command. Experiment files\n"
  "are documented in docs/experiment-files.md.\n";

static int
cmd_presets (int argc, char **argv)
{
  gboolean names_only = FALSE;
  const GOptionEntry entries[] = {
    { "names", 0, 0, G_OPTION_ARG_NONE, &names_only, "Print the names only", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- list the built-in experiments");
  g_option_context_set_description (ctx,
    "Each line gives the preset's name, what it trains, and the paper's figure\n"
    "it should reach. Train one with `caml train --preset NAME`.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!caml_cli_parse_options (ctx, entries, &argc, &argv, &error))
    {
      g_printerr ("caml presets: %s\n", error->message);
      return 2;
    }
  if (argc > 1)
    {
      g_printerr ("caml presets: unexpected argument \"%s\" (see `caml presets --help`)\n",
                  argv[1]);
      return 2;
    }

  g_auto (GStrv) names = caml_presets_list ();
  /* the descriptions line up after the longest name */
  int width = 0;
  for (int i = 0; names[i] != NULL; i++)
    width = MAX (width, (int) g_utf8_strlen (names[i], -1));
  for (int i = 0; names[i] != NULL; i++)
    {
      if (names_only)
        {
          g_print ("%s\n", names[i]);
          continue;
        }
      g_autoptr (GError) local = NULL;
      CamlExperiment *exp = caml_presets_load (names[i], &local);
      if (exp == NULL)
        {
          g_printerr ("caml presets: %s\n", local->message);
          return 1;
        }
      g_print ("%s%*s %s", names[i], width - (int) g_utf8_strlen (names[i], -1), "",
               exp->description ? exp->description : "");
      if (exp->paper != NULL)
        g_print ("  [paper: %s]", exp->paper);
      g_print ("\n");
      caml_experiment_free (exp);
    }
  return 0;
}

static int
run_command (const char *verb, int argc, char **argv)
{
  /* Each command parses its own options: argv[0] is its name. */
  if (g_str_equal (verb, "presets"))
    return cmd_presets (argc, argv);
  if (g_str_equal (verb, "train"))
    return caml_cli_train (argc, argv);
  if (g_str_equal (verb, "eval"))
    return caml_cli_eval (argc, argv);
  if (g_str_equal (verb, "layers"))
    return caml_cli_layers (argc, argv);
  if (g_str_equal (verb, "sweep"))
    return caml_cli_sweep (argc, argv);
  if (g_str_equal (verb, "bench"))
    return caml_cli_bench (argc, argv);
  if (g_str_equal (verb, "rnn-sanity"))
    return caml_cli_rnn_sanity (argc, argv);
  if (g_str_equal (verb, "sem"))
    return caml_cli_sem (argc, argv);
  if (g_str_equal (verb, "reproduce"))
    return caml_cli_reproduce (argc, argv);

  g_printerr ("caml: unknown command \"%s\"\n\n%s", verb, usage);
  return 2;
}

/* The first error writing to standard output (0: none). A reader that
 * went away (`caml train … | head -3`: EPIPE) ends only the output, not
 * the command: what follows is lost, and the run still saves its results.
 * Any other error (a full disk) makes the command fail, at its end. */
static int stdout_errno;

static void
print_to_stdout (const char *string)
{
  /* of several ranks, the first speaks for all */
  if (stdout_errno != 0 || caml_cli_mpi_rank () > 0)
    return;
  errno = 0;
  if (fputs (string, stdout) != EOF && fflush (stdout) == 0)
    return;
  stdout_errno = errno != 0 ? errno : EIO;
  if (stdout_errno == EPIPE)
    g_printerr ("%s: note: standard output was closed; the rest of what this command "
                "prints is lost, but it goes on\n", g_get_prgname ());
}

/* The commands that run on several ranks (mpirun -np N caml …). */
static gboolean
runs_distributed (const char *verb)
{
  static const char *const verbs[] = {
    "train", "sweep", "sem",
    "--version", "version", "--help", "-h", "help",   /* said by the first rank */
    NULL
  };
  return g_strv_contains (verbs, verb);
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  /* Several ranks: MPI starts first, before any thread. */
  g_autoptr (GError) mpi_error = NULL;
  if (!caml_cli_mpi_init (&argc, &argv, &mpi_error))
    {
      g_printerr ("caml: %s\n", mpi_error->message);
      caml_cli_mpi_abort (2);
    }
  /* A closed pipe is an error from write(), not a signal that kills the
   * process mid-run, losing what it trained (for every command). */
  signal (SIGPIPE, SIG_IGN);
  /* A named pipe given for a file is read as `cat` reads it: once a program
   * opens it to write (the workbench does not wait). */
  caml_file_set_pipe_wait (-1);
  g_set_print_handler (print_to_stdout);
  if (argc < 2)
    {
      g_printerr ("%s", usage);
      caml_cli_mpi_finalize (2);
      return 2;
    }
  const char *verb = argv[1];
  /* Before any option parsing, which would name the program after the bare
   * command ("train") in usage lines and GLib's messages. Set once. */
  int ranks = caml_cli_mpi_size (), rank = caml_cli_mpi_rank ();
  /* past the first rank, messages say which rank speaks */
  g_autofree char *rank_text = rank > 0 ? g_strdup_printf (" (rank %d)", rank) : g_strdup ("");
  g_autofree char *prgname = g_strdup_printf ("caml %s%s",
                                              g_str_equal (verb, "help") && argc >= 3
                                              ? argv[2] : verb, rank_text);
  g_set_prgname (prgname);
  if (ranks > 1)
    {
      if (!runs_distributed (verb))
        {
          if (rank == 0)
            g_printerr ("caml %s: runs on one rank only: start it without mpirun "
                        "(caml train, sweep and sem run on several, %d here)\n", verb, ranks);
          caml_cli_mpi_finalize (2);
          return 2;
        }
      /* the cores of this machine, shared by its ranks (unless chosen) */
      if (g_getenv ("CAML_THREADS") == NULL)
        caml_set_threads (MAX (1, caml_get_cores () / caml_cli_mpi_local_size ()));
    }
  int status;
  g_autoptr (GError) env_error = NULL;
  if (!caml_threads_check_env (&env_error))
    {
      g_printerr ("caml: %s\n", env_error->message);
      return 2;
    }
  if (g_str_equal (verb, "--version") || g_str_equal (verb, "version"))
    {
      g_autofree char *kernels = caml_describe_kernels ();
      g_autofree char *mpi = caml_cli_mpi_library ();
      g_print ("caml %s\n%s\nthreads %d (cores %d)\n%s%s\n", CAML_VERSION, kernels,
               caml_get_threads (), caml_get_cores (),
               mpi != NULL ? "several ranks under mpirun: " : "one rank: built without MPI",
               mpi != NULL ? mpi : "");
      status = 0;
    }
  else if (g_str_equal (verb, "--help") || g_str_equal (verb, "-h")
      || (g_str_equal (verb, "help")
          && (argc < 3 || g_str_equal (argv[2], "help") || g_str_equal (argv[2], "--help")
              || g_str_equal (argv[2], "-h"))))
    {
      g_print ("%s", usage);
      status = 0;
    }
  else if (g_str_equal (verb, "help"))
    {
      char *help_argv[] = { argv[2], (char *) "--help", NULL };
      status = run_command (argv[2], 2, help_argv);
    }
  else
    status = run_command (verb, argc - 1, argv + 1);

  /* Output that could not be written (a full disk) is a failure, not a
   * success with nothing printed; a reader that stopped reading (a closed
   * pipe) wanted no more of it. */
  errno = 0;
  if (stdout_errno == 0 && (fflush (stdout) != 0 || ferror (stdout)))
    stdout_errno = errno != 0 ? errno : EIO;
  if (stdout_errno != 0 && stdout_errno != EPIPE)
    {
      g_printerr ("caml: cannot write the output: %s\n", g_strerror (stdout_errno));
      if (status == 0)
        status = 1;
    }
  caml_cli_mpi_finalize (status);
  if (caml_cli_signal_heard () != 0)
    caml_cli_end_by_signal (caml_cli_signal_heard ());
  return status;
}
