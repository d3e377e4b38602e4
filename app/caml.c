/* caml.c — the command-line tool: list presets, train, evaluate.
 *
 *   caml presets
 *   caml train (--preset NAME | FILE.json) [--seed N] [--steps N] [--out DIR]
 *   caml eval  (--preset NAME | FILE.json) --weights FILE [--out DIR]
 *   caml sweep (--preset NAME | FILE.json) --grid KEY=V1,V2,… [--grid …]
 *   caml bench [--preset NAME | FILE.json] [--kernel K] [--depth D]
 *   caml rnn-sanity [--runs N] [--steps N] [--units N] [--out DIR]
 *   caml sem   --pairs FILE [--corpus FILE…] [--embeddings FILE] [--iterations N]
 */
#include <locale.h>
#include <stdio.h>
#include <unistd.h>
#include <gio/gio.h>

#include "caml.h"
#include "cli.h"
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
  "  bench      time training of a convolutional preset, layer by layer\n"
  "  rnn-sanity the paper's CA-RNN sanity test (Fig. 13): CA-RNN, LSTM, GRU\n"
  "  sem        CA-SEM sentence embeddings vs. average and SIF on sentence pairs\n"
  "  help       show this help, or `caml help COMMAND` for a command's\n"
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
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      g_printerr ("caml presets: %s\n", error->message);
      return 2;
    }

  g_auto (GStrv) names = caml_presets_list ();
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
      g_print ("%-20s %s", names[i], exp->description ? exp->description : "");
      if (exp->paper != NULL)
        g_print ("  [paper: %s]", exp->paper);
      g_print ("\n");
      caml_experiment_free (exp);
    }
  return 0;
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  if (argc < 2)
    {
      g_printerr ("%s", usage);
      return 2;
    }
  const char *verb = argv[1];
  if (g_str_equal (verb, "--help") || g_str_equal (verb, "-h"))
    {
      g_print ("%s", usage);
      return 0;
    }
  if (g_str_equal (verb, "help"))
    {
      if (argc < 3)
        {
          g_print ("%s", usage);
          return 0;
        }
      static char *help_argv[4];
      help_argv[0] = argv[0];
      help_argv[1] = argv[2];
      help_argv[2] = (char *) "--help";
      argc = 3;
      argv = help_argv;
      verb = argv[1];
    }
  /* Each command parses its own options: argv[1] becomes its program name. */
  if (g_str_equal (verb, "presets"))
    return cmd_presets (argc - 1, argv + 1);
  if (g_str_equal (verb, "train"))
    return caml_cli_train (argc - 1, argv + 1);
  if (g_str_equal (verb, "eval"))
    return caml_cli_eval (argc - 1, argv + 1);
  if (g_str_equal (verb, "layers"))
    return caml_cli_layers (argc - 1, argv + 1);
  if (g_str_equal (verb, "sweep"))
    return caml_cli_sweep (argc - 1, argv + 1);
  if (g_str_equal (verb, "bench"))
    return caml_cli_bench (argc - 1, argv + 1);
  if (g_str_equal (verb, "rnn-sanity"))
    return caml_cli_rnn_sanity (argc - 1, argv + 1);
  if (g_str_equal (verb, "sem"))
    return caml_cli_sem (argc - 1, argv + 1);

  g_printerr ("caml: unknown command \"%s\"\n\n%s", verb, usage);
  return 2;
}
