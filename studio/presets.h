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
/* A blank experiment (no layers: the model is the user's to build) on
 * built-in data of this kind, with the loss the data take and the
 * engine's defaults for the rest; named "untitled". */
CamlExperiment *caml_presets_new_blank (CamlDataKind kind);
/* The kinds it takes, in the order New offers them (surface first). */
extern const CamlDataKind caml_presets_blank_kinds[];
extern const int          caml_presets_n_blank_kinds;
/* A preset's description and paper figure describe the preset as built in.
 * When exp carries them (both equal to a preset's) but differs from that
 * preset in anything else but its name, they no longer do: the description
 * becomes "edited from preset NAME: …" and the paper's figure is dropped,
 * named in the description. Returns whether exp changed. */
gboolean        caml_presets_mark_edited (CamlExperiment *exp);
