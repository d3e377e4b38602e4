/* presets.h — the built-in experiments, compiled into the binary as a
 * GResource from resources/presets/NAME.json. */
#pragma once

#include "caml.h"

/* Sorted preset names; free with g_strfreev. */
char          **caml_presets_list (void);
/* Whether a preset of that name is built in. */
gboolean        caml_presets_exists (const char *name);
/* NULL with an error naming the preset and listing the valid ones. */
CamlExperiment *caml_presets_load (const char *name, GError **error);
