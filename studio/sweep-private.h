/* sweep-private.h — what sweep.c, sweep-file.c and sweep-tables.c share. */
#pragma once

#include "caml-json.h"
#include "sweep.h"

/* caml_sweep_plan_check, its errors worded for a command line (doc NULL:
 * "--grid kernel=3,5: …", "-O units=4 …") or placed in the sweep file the
 * plan was read from ("sweep.json:4:20: grid[0].values[1]: …"). */
gboolean caml_sweep_plan_check_in (const CamlSweepPlan *plan, const CamlJsonDoc *doc,
                                   GError **error);

/* "KEY=VALUE" → its key (g_free). */
char *caml_sweep_assignment_key (const char *assignment);
