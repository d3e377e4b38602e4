/* experiment-private.h — what the experiment files share inside the engine:
 * experiment.c (lifecycle and the name tables), experiment-json.c (the value
 * readers), experiment-read.c (the parser), experiment-write.c (the writer)
 * and experiment-build.c (data sets, model, word vectors). */
#pragma once

#include <json-glib/json-glib.h>

#include "caml-private.h"
#include "json-check.h"

/* Ranges of the fields that are not layer options. */
#define CAML_MAX_STEPS  1000000000
#define CAML_MAX_GRID   1024
#define CAML_DEFAULT_LR 0.01

/* The values of data.builtin, indexed like CamlDataKind, NULL-terminated. */
extern const char *const caml_builtin_names[];
/* The keys of data.idx, in the order of CamlDataConfig.idx_paths. */
extern const char *const caml_idx_keys[4];
/* The keys of data.text, in the order of CamlDataConfig.text_paths. */
extern const char *const caml_text_keys[2];

static inline gboolean
caml_data_kind_is_image (CamlDataKind kind)
{
  return kind == CAML_DATA_MNIST || kind == CAML_DATA_FASHION_MNIST
      || kind == CAML_DATA_IDX;
}

static inline gboolean
caml_data_kind_is_text (CamlDataKind kind)
{
  return kind == CAML_DATA_SST || kind == CAML_DATA_IMDB || kind == CAML_DATA_RNN_SANITY
      || kind == CAML_DATA_TEXT;
}

/* The plot domain a kind of data starts with: domain = {x0, x1, y0, y1}. */
void caml_experiment_default_plot_domain (CamlDataKind kind, double *domain);

/* The optimizer's fields in a file. */
typedef enum {
  CAML_FIELD_LR, CAML_FIELD_EM_STEPS, CAML_FIELD_MOMENTUM, CAML_FIELD_BETA1,
  CAML_FIELD_BETA2, CAML_FIELD_EPS, CAML_FIELD_INITIAL_ACCUMULATOR,
  CAML_FIELD_WEIGHT_DECAY, CAML_N_OPTIM_FIELDS
} CamlOptimizerField;

extern const char *const caml_optimizer_field_keys[CAML_N_OPTIM_FIELDS];
/* Which fields each optimizer reads, in the order they are written, ended
 * by CAML_N_OPTIM_FIELDS (weight_decay only when it is not 0: files
 * without it read as before). */
extern const CamlOptimizerField caml_optimizer_fields[CAML_N_OPTIMS][CAML_N_OPTIM_FIELDS + 1];

/* The optimizer field a setting's path names ("optimizer.lr") when exp's
 * optimizer has it, else -1 (caml_experiment_settings). */
int caml_experiment_optimizer_field (const CamlExperiment *exp, const char *path);

/* --- the parser's value readers (experiment-json.c)
 *
 * Each returns FALSE after setting *p->error to a CAML_ERROR that names the
 * document and the path ("surface.json: model[1].units: …"). */

typedef struct {
  const char *source;    /* names the document in errors; NULL: only the path */
  const char *base_dir;  /* relative IDX paths are resolved against it; NULL: keep */
  GHashTable *wide;      /* path → literal of each integer outside gint64 (json-check.c) */
  GError    **error;
  /* An experiment inside another document (caml_experiment_load_json):
   * errors say where in doc, and paths start with prefix. */
  const CamlJsonDoc *doc;
  const char        *prefix;
} CamlParser;

G_GNUC_PRINTF (4, 5)
gboolean caml_parser_fail (CamlParser *p, CamlErrorCode code, const char *path,
                           const char *format, ...);
/* The same with the message made, about the member's key with at_key (one
 * that should not be there). */
gboolean caml_parser_fail_text (CamlParser *p, CamlErrorCode code, const char *path,
                                gboolean at_key, const char *message);
/* What an error about path starts with: "SOURCE: PATH", or in a document
 * with positions "SOURCE:LINE:COL: PREFIX.PATH" (at the member's key with
 * at_key). g_free it. */
char *caml_parser_where (const CamlParser *p, const char *path, gboolean at_key);
char *caml_parser_child_path (const char *path, const char *key);
char *caml_parser_join_names (const char *const *names, int n);
gboolean caml_parser_check_keys (CamlParser *p, JsonObject *obj, const char *path,
                                 const char *const *allowed, int n,
                                 const char *const *listed);
gboolean caml_parser_expect_object (CamlParser *p, JsonNode *node, const char *path,
                                    JsonObject **out);
gboolean caml_parser_get_number (CamlParser *p, JsonNode *node, const char *path,
                                 double *out);
gboolean caml_parser_get_int (CamlParser *p, JsonNode *node, const char *path,
                              gint64 min, gint64 max, gint64 *out);
gboolean caml_parser_get_int32 (CamlParser *p, JsonNode *node, const char *path,
                                int min, int max, int *out);
gboolean caml_parser_get_string (CamlParser *p, JsonNode *node, const char *path,
                                 const char **out);
gboolean caml_parser_get_bool (CamlParser *p, JsonNode *node, const char *path,
                               gboolean *out);
gboolean caml_parser_get_enum (CamlParser *p, JsonNode *node, const char *path,
                               const char *const *names, int *out);
gboolean caml_parser_get_ranged (CamlParser *p, JsonNode *node, const char *path,
                                 double lo, gboolean lo_open, double hi, gboolean hi_open,
                                 const char *range, double *out);
/* A layer option's value, checked against its CamlOptionSpec. */
gboolean caml_parser_get_option (CamlParser *p, const CamlOptionSpec *spec, JsonNode *node,
                                 const char *path, double *out);
