/* cli-common.h — what the commands of `caml` share. */
#pragma once

#include "caml.h"

/* From --preset NAME or exactly one FILE.json in args. */
CamlExperiment *caml_cli_load_experiment (const char *command, const char *preset,
                                          char **args, GError **error);
gboolean caml_cli_ensure_dir (const char *dir, GError **error);

/* Applies KEY=VALUE assignments (and kernel/depth when > 0) to every layer
 * that has the option KEY; N.KEY=VALUE applies to layer N only. VALUE is a number, a choice name or true/false.
 * An assignment that no layer takes, or a bad value, is an error. */
gboolean caml_cli_apply_layer_options (CamlExperiment *exp, char **assignments,
                                       int kernel, int depth, GError **error);

/* Loads the data, builds the model, trains with progress and writes every
 * result into out_dir (see `caml train --help`). Returns an exit status. */
int caml_cli_run_experiment (CamlExperiment *exp, const char *preset, const char *out_dir,
                             const char *sigma_steps, gboolean quiet, gboolean plain);
