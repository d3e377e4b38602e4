/* assign.h — KEY=VALUE assignments on an experiment, as `caml train -O`,
 * `caml sweep` (its -O list, grid points and sweep files) and `caml
 * rnn-sanity` give them, and as the workbench's Sweep page will: one
 * reading of keys and values, one set of messages. Plain GLib on the
 * engine. */
#pragma once

#include "caml.h"

G_BEGIN_DECLS

/* One KEY=VALUE assignment, and how the user gave it ("-O dim=4",
 * "--units 8", "--grid kernel=3,5") for messages. */
typedef struct {
  const char *assignment;
  const char *given_as;
} CamlAssignment;

/* Applies n assignments to exp in turn. A KEY sets a layer option on every
 * layer that has it, N.KEY on layer N only (N counts the "model" list from
 * 0), a setting's path ("optimizer.lr", caml_experiment_settings) that
 * setting. VALUE is a number, a choice name or true/false. An assignment
 * that nothing takes, or a bad value (0 and negative sizes included), is an
 * error; so are two that give one option of a layer, or one setting,
 * different values (`-O dim=3 -O 0.dim=4`, `-k 3 -O kernel=5`: which
 * should win is a guess) — except N.KEY over a bare KEY, which wins in
 * either order (-O units=64 -O 2.units=1: the readout's width). Errors
 * name given_as, and a conflict both (G_OPTION_ERROR_BAD_VALUE); the
 * others are CAML_ERROR_INVALID. exp may be changed in part on an error. */
gboolean caml_experiment_assign (CamlExperiment *exp, const CamlAssignment *list, int n,
                                 GError **error);
/* Whether exp has what key names — a layer option, N.KEY, a setting —
 * with the words of caml_experiment_assign's errors about a key (without
 * given_as): "no layer of this experiment has an option \"kernel\"". */
gboolean caml_experiment_check_key (const CamlExperiment *exp, const char *key,
                                    GError **error);
/* The -O list (NULL-terminated KEY=VALUE) appended to list (of
 * CamlAssignment), each given as "-O KEY=VALUE" (interned strings). */
void     caml_assignments_add_options (GArray *list, char **assignments);

G_END_DECLS
