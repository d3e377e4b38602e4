/* preset-guide.h — what the start view and the Presets menu say of the
 * presets: the paper's section each belongs to (derived from its data and
 * layers), and what this build measured of it (resources/
 * presets-measured.json, written by tools/publish-reproduction from a run
 * of caml reproduce and compiled into the presets GResource). No GTK. */
#pragma once

#include "caml.h"

typedef enum {
  CAML_PRESET_SECTION_SURFACES,   /* surface and XOR data */
  CAML_PRESET_SECTION_IMAGES,     /* MNIST, Fashion-MNIST, IDX files */
  CAML_PRESET_SECTION_TEXT,       /* bags of words: CA-BSFE, averaging */
  CAML_PRESET_SECTION_SEQUENCES,  /* recurrent and attention layers, the RNN sanity test */
  CAML_PRESET_SECTION_OTHER,
  CAML_PRESET_N_SECTIONS
} CamlPresetSection;

/* "Surfaces and XOR (Fig. 15–16, Sec. 4.7.1)", … */
const char       *caml_preset_section_title (CamlPresetSection section);
CamlPresetSection caml_preset_section_of (const CamlExperiment *exp);
/* The built-in presets of a section, sorted (g_strfreev); a preset that
 * does not load is in Other. */
char            **caml_presets_in_section (CamlPresetSection section);

/* One figure this build measured of a preset. */
typedef struct {
  char   *metric;      /* a results.json metric: "test_accuracy", "test_mse", … */
  double  value;       /* the mean over runs */
  double  sd;
  int     runs;
  int     steps;       /* what each run trained (0: not stated) */
  char   *experiment;  /* caml reproduce's experiment: "mnist", "sigma", … */
  char   *command;     /* "caml reproduce --quick" */
  char   *date;        /* "2026-11-29" */
} CamlPresetMeasure;

void caml_preset_measure_free (CamlPresetMeasure *m);

/* The measured figures by preset name (a GPtrArray of CamlPresetMeasure
 * each), from a measured.json document; source names it in errors, which
 * say where the document is wrong ("measured.json: presets.xor-nn[0].value:
 * not a number"). NULL with the error set. */
GHashTable *caml_preset_measures_parse (const char *data, gssize length, const char *source,
                                        GError **error);
/* The build's own (the GResource), read once; an empty table if there is
 * none. NULL with the error set if it is malformed. Owned by the caller. */
GHashTable *caml_preset_measures_load (GError **error);
/* "test accuracy", "test MSE", "σ-map AUC", … */
const char *caml_preset_metric_label (const char *metric);
/* One line per figure: "measured: 0.9882 test accuracy (caml reproduce
 * --quick, 200 steps, 2 runs, 2026-11-29)", joined by "\n"; or "not measured
 * yet" when measures (may be NULL) holds nothing for name. */
char *caml_preset_measured_text (GHashTable *measures, const char *name);
