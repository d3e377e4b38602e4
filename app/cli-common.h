/* cli-common.h — what the commands of `caml` share. */
#pragma once

#include <signal.h>
#include <json-glib/json-glib.h>

#include "caml.h"
#include "assign.h"

/* From --preset NAME or exactly one FILE.json in args. Neither or both is a
 * usage error: G_OPTION_ERROR (exit status 2). *source (if source is not
 * NULL; free it) gets what names the experiment in messages, as its parse
 * errors name it: the file's path or "preset NAME". */
CamlExperiment *caml_cli_load_experiment (const char *command, const char *preset,
                                          char **args, char **source, GError **error);
/* Names the experiment (source, from caml_cli_load_experiment) in an error
 * about what it describes — building its data sets and its model, starting
 * its run: a layer that does not fit ("exp.json: layer 1 (conv2d), input
 * shape (4): …"; the index is the one in the file's "model" array), a data
 * setting, targets its loss cannot take (CAML_ERROR_INVALID and
 * CAML_ERROR_SHAPE). Errors about a file the experiment names — a data set,
 * word vectors (CAML_ERROR_IO, CAML_ERROR_PARSE) — start with that file
 * already and are left as they are, as is any other error. */
void caml_cli_name_experiment (GError **error, const char *source);
/* g_option_context_parse, with the main entries of ctx (entries, the table
 * given to g_option_context_add_main_entries), except that an option given
 * two different values is an error unless it is repeatable (an array):
 * GOption would keep the last value silently, and `--steps 10 … --steps 20`
 * is more likely a mistake than a choice. The error is a usage error. */
gboolean caml_cli_parse_options (GOptionContext *ctx, const GOptionEntry *entries,
                                 int *argc, char ***argv, GError **error);
/* A command that stops on SIGINT or SIGTERM says which it heard; main then
 * ends the process by it (caml_cli_end_by_signal) once the command has
 * returned, rather than exiting 128 + its number: a shell running caml in
 * a loop then stops as well (bash goes on after a child that exited). */
void caml_cli_heard_signal (int sig);
int  caml_cli_signal_heard (void);   /* 0: none */
/* Ends the process by signal now (its default action), without flushing. */
G_NORETURN void caml_cli_end_by_signal (int sig);
/* error is a usage error (exit status 2) rather than a failure (1). */
gboolean caml_cli_is_usage_error (const GError *error);
/* Creates dir (and its parents) and checks that files can be created in it. */
gboolean caml_cli_ensure_dir (const char *dir, GError **error);
/* The directories of dir's path that this call made (none existed), outermost
 * first; caml_cli_ensure_dir then checks dir. A command that fails before it
 * writes anything removes them again with caml_cli_remove_made_dirs, which
 * stops at the first that is not empty: no empty directory is left behind,
 * and no directory the command did not make goes. */
GPtrArray *caml_cli_make_dirs (const char *dir);
void       caml_cli_remove_made_dirs (GPtrArray *made);
/* Checks, before any work, that caml_file_replace can write the file path
 * later: its folder exists and takes files, and path is no folder. */
gboolean caml_cli_check_output_file (const char *path, GError **error);
/* name as one safe path component ("experiment" when empty; its first 100
 * bytes when longer, whole characters); free with g_free. */
char *caml_cli_safe_name (const char *name);

/* The value of -k and -d when they are not given. */
#define CAML_CLI_NOT_GIVEN G_MININT

/* The -O list (caml_experiment_assign, assign.h: KEY=VALUE on every layer
 * with the option KEY, N.KEY=VALUE on layer N only, a setting by its path),
 * then kernel and depth (-k, -d) unless CAML_CLI_NOT_GIVEN, as kernel=K and
 * depth=D given as "--kernel K", "--depth D". */
gboolean caml_cli_apply_layer_options (CamlExperiment *exp, char **assignments,
                                       int kernel, int depth, GError **error);
/* An option that sets a setting (option "--steps 20", path
 * "training.steps") given beside an assignment of the same path (-O
 * training.steps=…, a grid key) is a usage error naming both: which should
 * win is a guess. */
gboolean caml_cli_refuse_twice (const char *option, const char *path,
                                const CamlAssignment *list, int n, GError **error);

/* How caml_cli_run_experiment runs and reports. */
typedef struct {
  const char *preset;        /* the preset's name, or NULL (summary.json) */
  const char *source;        /* where the experiment came from, for messages */
  const char *out_dir;
  const char *sigma_steps;   /* "--sigma-steps" list ("1000,last") */
  const char *init_weights;  /* start from this weights file, or NULL: the seed's */
  const char *resume_dir;    /* go on with the run saved in this directory (its
                              * model.weights and trainer.state), or NULL */
  const char *started_from;  /* when resuming: the weights the saved run started
                              * from (its summary.json's init_weights), or NULL */
  gboolean    sigma_stretch;
  const char *sigma_given;   /* the σ-map options given on the command line
                              * ("--sigma-steps", …), or NULL: a model without
                              * σ-maps gets a note that they do nothing */
  gboolean    quiet;
  gboolean    no_notes;      /* no notes on settings that do nothing (caml sweep:
                              * its matched baselines keep em_steps) */
  gboolean    plain;         /* no progress bar, even on a terminal */
  gboolean    alone;         /* this process trains the whole run and writes it,
                              * however many ranks there are (a sweep's runs);
                              * else on several ranks each trains its share */
} CamlCliRun;

/* Loads the data, builds the model (with run->init_weights, loads them into
 * it; with run->resume_dir, loads its weights and trainer.state and goes on
 * from the step saved), trains with progress and writes every result into run->out_dir, all
 * or nothing (see `caml train --help`). A first Ctrl+C (SIGINT or SIGTERM)
 * stops the run, which is saved; a second ends the process at once with
 * status 128 + the first signal's number (130, 143), out_dir as it was.
 * One during the data load ends the run when the load returns, with that
 * status and nothing written; a second ends the process at once. Returns an exit status; problems go to
 * stderr (those of building and starting named by run->source,
 * caml_cli_name_experiment), and when the status is not 0 and failure is
 * not NULL, *failure (free it) is the first of them (NULL when there was
 * none, as for an interrupted run). */
int caml_cli_run_experiment (CamlExperiment *exp, const CamlCliRun *run, char **failure);

/* Whether an exit status of caml_cli_run_experiment is that of a run
 * interrupted by SIGINT (130) or SIGTERM (143). */
static inline gboolean
caml_cli_interrupted (int status)
{
  return status == 128 + SIGINT || status == 128 + SIGTERM;
}

/* key: value in a JSON object being built; JSON has no inf or nan, so a
 * figure that is not finite (not measured) is null. (report.h's
 * caml_report_json_add_number and caml_report_json_write, which write a
 * run's summary.json, under the names the other commands use.) */
void caml_cli_json_add_number (JsonBuilder *b, const char *key, double value);
/* The document b has built, pretty-printed with a final newline, written
 * with caml_file_replace. */
gboolean caml_cli_json_write (JsonBuilder *b, const char *path, GError **error);
