/* cli-common.h — what the commands of `caml` share. */
#pragma once

#include <json-glib/json-glib.h>

#include "caml.h"

/* From --preset NAME or exactly one FILE.json in args. Neither or both is a
 * usage error: G_OPTION_ERROR (exit status 2). */
CamlExperiment *caml_cli_load_experiment (const char *command, const char *preset,
                                          char **args, GError **error);
/* error is a usage error (exit status 2) rather than a failure (1). */
gboolean caml_cli_is_usage_error (const GError *error);
/* Creates dir (and its parents) and checks that files can be created in it. */
gboolean caml_cli_ensure_dir (const char *dir, GError **error);
/* name as one safe path component ("experiment" when empty); free with g_free. */
char *caml_cli_safe_name (const char *name);

/* Applies KEY=VALUE assignments (and kernel/depth when > 0; < 0 is an error) to every layer
 * that has the option KEY; N.KEY=VALUE applies to layer N only. VALUE is a number, a choice name or true/false.
 * An assignment that no layer takes, or a bad value, is an error. */
gboolean caml_cli_apply_layer_options (CamlExperiment *exp, char **assignments,
                                       int kernel, int depth, GError **error);

/* Loads the data, builds the model, trains with progress and writes every
 * result into out_dir (see `caml train --help`). Returns an exit status;
 * problems go to stderr, and when the status is not 0 and failure is not
 * NULL, *failure (free it) is the first of them (NULL when there was none,
 * as for an interrupted run). */
int caml_cli_run_experiment (CamlExperiment *exp, const char *preset, const char *out_dir,
                             const char *sigma_steps, gboolean quiet, gboolean plain,
                             char **failure);

/* key: value in a JSON object being built; JSON has no inf or nan, so a
 * figure that is not finite (not measured) is null. */
void caml_cli_json_add_number (JsonBuilder *b, const char *key, double value);
