/* experiment-build.c — what an experiment describes: its data sets (built-in,
 * IDX, IMDB, labelled text, with a validation part held out), its model, and
 * the word vectors of its pretrained embedding layers. */
#include <string.h>

#include "caml-private.h"
#include "experiment-private.h"

/* ------------------------------------------------------------- building */

/* The canonical IDX file names, in the order of CamlDataConfig.idx_paths. */
static const char *const idx_file_names[4] = {
  "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
  "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte",
};

/* The four files of a fetched data set: NAME or NAME.gz in <data dir>/<set>.
 * A missing one is an error that says how to fetch it. */
static gboolean
builtin_idx_paths (CamlDataKind kind, char *paths[4], GError **error)
{
  const char *set = kind == CAML_DATA_MNIST ? "mnist" : "fashion-mnist";
  char *dir = g_build_filename (caml_data_dir (), set, NULL);
  gboolean ok = TRUE;
  for (int i = 0; i < 4; i++)
    paths[i] = NULL;
  for (int i = 0; i < 4 && ok; i++)
    {
      char *raw = g_build_filename (dir, idx_file_names[i], NULL);
      char *gz = g_strconcat (raw, ".gz", NULL);
      if (g_file_test (raw, G_FILE_TEST_EXISTS))
        paths[i] = g_steal_pointer (&raw);
      else if (g_file_test (gz, G_FILE_TEST_EXISTS))
        paths[i] = g_steal_pointer (&gz);
      else
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_IO,
                       "%s: no such file (nor %s.gz): %s is not fetched — run "
                       "`datasets/fetch %s` in the source tree, or set CAML_DATA_DIR "
                       "to the directory that holds %s/",
                       raw, idx_file_names[i], kind == CAML_DATA_MNIST ? "MNIST"
                       : "Fashion-MNIST", set, set);
          ok = FALSE;
        }
      g_free (raw);
      g_free (gz);
    }
  if (!ok)
    for (int i = 0; i < 4; i++)
      g_clear_pointer (&paths[i], g_free);
  g_free (dir);
  return ok;
}

/* A data file the experiment names: one that cannot be opened (not there,
 * a directory or a device, not readable) is a fault of the experiment,
 * named by its key — "data.text.train: /d/a.tsv: no such file" — before a
 * loader (which names only the path) reads it. CAML_ERROR_INVALID, like
 * every fault of the experiment, so that the CLI names the experiment too
 * (caml_cli_name_experiment). */
static gboolean
check_named_file (const char *group, const char *key, const char *path, GError **error)
{
  GError *local = NULL;
  if (caml_file_check_readable (path, &local))
    return TRUE;
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "%s%s%s: %s", group,
               key != NULL ? "." : "", key != NULL ? key : "", local->message);
  g_error_free (local);
  return FALSE;
}

static gboolean
load_image_datasets (const CamlDataConfig *data, CamlDataset **train,
                     CamlDataset **test, GError **error)
{
  char *paths[4] = { NULL };
  if (data->kind == CAML_DATA_IDX)
    {
      for (int i = 0; i < 4; i++)
        {
          if (data->idx_paths[i] == NULL)
            {
              g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                           "idx data: the path of %s is not set", caml_idx_keys[i]);
              return FALSE;
            }
          if (!check_named_file ("data.idx", caml_idx_keys[i], data->idx_paths[i], error))
            {
              for (int j = 0; j < i; j++)
                g_free (paths[j]);
              return FALSE;
            }
          paths[i] = g_strdup (data->idx_paths[i]);
        }
    }
  else if (!builtin_idx_paths (data->kind, paths, error))
    return FALSE;

  gboolean ok = FALSE;
  if ((*train = caml_idx_load (paths[0], paths[1], data->train_limit, error)) != NULL
      && (*test = caml_idx_load (paths[2], paths[3], data->test_limit, error)) != NULL)
    {
      if (!caml_shape_equal (&(*train)->x_shape, &(*test)->x_shape))
        {
          char *a = caml_shape_to_string (&(*train)->x_shape);
          char *b = caml_shape_to_string (&(*test)->x_shape);
          g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                       "training images %s are %s but test images %s are %s",
                       paths[0], a, paths[2], b);
          g_free (a);
          g_free (b);
        }
      else
        {
          /* One class count for both, whichever set shows the larger label. */
          int n_classes = MAX ((*train)->n_classes, (*test)->n_classes);
          (*train)->n_classes = (*test)->n_classes = n_classes;
          ok = TRUE;
        }
    }
  if (!ok)
    {
      g_clear_pointer (train, caml_dataset_free);
      g_clear_pointer (test, caml_dataset_free);
    }
  for (int i = 0; i < 4; i++)
    g_free (paths[i]);
  return ok;
}

/* IMDB from <data dir>/imdb/reviews.json; a missing file says how to fetch it. */
static gboolean
load_imdb_datasets (const CamlDataConfig *data, CamlDataset **train, CamlDataset **test,
                    GError **error)
{
  g_autofree char *path = g_build_filename (caml_data_dir (), "imdb", "reviews.json", NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_IO,
                   "%s: no such file: IMDB is not fetched — run `datasets/fetch imdb` in "
                   "the source tree, or set CAML_DATA_DIR to the directory that holds imdb/",
                   path);
      return FALSE;
    }
  if (!caml_imdb_load (path, data->split, data->has_split_seed ? data->split_seed : 0,
                       data->train_limit, data->test_limit, train, test, error))
    return FALSE;
  caml_text_datasets_finish (*train, *test, data->max_tokens);
  return TRUE;
}

static gboolean
load_text_datasets (const CamlDataConfig *data, CamlDataset **train, CamlDataset **test,
                    GError **error)
{
  char *paths[2] = { NULL };
  if (data->kind == CAML_DATA_SST)
    {
      paths[0] = g_build_filename (caml_shared_datasets_dir (), "sst", "sentiment-train", NULL);
      paths[1] = g_build_filename (caml_shared_datasets_dir (), "sst", "sentiment-dev", NULL);
      for (int i = 0; i < 2; i++)
        if (!g_file_test (paths[i], G_FILE_TEST_EXISTS))
          {
            g_set_error (error, CAML_ERROR, CAML_ERROR_IO,
                         "%s: no such file: SST is read from the shared data sets — set "
                         "CAML_SHARED_DATASETS to the directory that holds sst/", paths[i]);
            g_free (paths[0]);
            g_free (paths[1]);
            return FALSE;
          }
    }
  else
    for (int i = 0; i < 2; i++)
      {
        if (data->text_paths[i] == NULL)
          {
            g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                         "text data: the path of %s is not set", caml_text_keys[i]);
            g_free (paths[0]);
            return FALSE;
          }
        if (!check_named_file ("data.text", caml_text_keys[i], data->text_paths[i], error))
          {
            g_free (paths[0]);
            return FALSE;
          }
        paths[i] = g_strdup (data->text_paths[i]);
      }

  CamlVocab *vocab = caml_vocab_new ();
  gboolean ok = (*train = caml_text_load_tsv (paths[0], vocab, TRUE, data->train_limit,
                                              error)) != NULL
             && (*test = caml_text_load_tsv (paths[1], vocab, FALSE, data->test_limit,
                                             error)) != NULL;
  /* A class that only the test file has would make the task one the
   * training file cannot teach (and the model's width wrong); it is named
   * where it is, not found later as a model that does not fit. */
  for (int i = 0; ok && (*test)->n_classes > (*train)->n_classes && i < (*test)->n; i++)
    if ((*test)->y[i] >= (float) (*train)->n_classes)
      {
        g_autofree char *place = caml_dataset_sample_place (*test, i, "test set");
        g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE,
                     "%s: the label %g is not a class of the training file %s (its classes "
                     "are 0…%d): a model cannot learn a class it is never shown", place,
                     (double) (*test)->y[i], paths[0], (*train)->n_classes - 1);
        ok = FALSE;
      }
  if (ok)
    caml_text_datasets_finish (*train, *test, data->max_tokens);
  else
    {
      g_clear_pointer (train, caml_dataset_free);
      g_clear_pointer (test, caml_dataset_free);
    }
  caml_vocab_unref (vocab);
  g_free (paths[0]);
  g_free (paths[1]);
  return ok;
}

static gboolean load_datasets (const CamlExperiment *exp, CamlDataset **train,
                               CamlDataset **test, GError **error);

/* data.validation_fraction: the held-out part of the training set takes the
 * test set's place. */
static gboolean
hold_out_validation (const CamlDataConfig *data, CamlDataset **train, CamlDataset **test,
                     GError **error)
{
  CamlDataset *rest, *validation;
  GError *local = NULL;
  gboolean ok = caml_dataset_hold_out (*train, data->validation_fraction,
                                       data->has_split_seed ? data->split_seed : 0,
                                       &rest, &validation, &local);
  g_clear_pointer (train, caml_dataset_free);
  g_clear_pointer (test, caml_dataset_free);
  if (!ok)
    {
      g_set_error (error, CAML_ERROR, local->code, "data.validation_fraction: %s",
                   local->message);
      g_error_free (local);
      return FALSE;
    }
  if (caml_data_kind_is_text (data->kind))
    caml_text_datasets_finish (rest, validation, data->max_tokens);
  *train = rest;
  *test = validation;
  return TRUE;
}

gboolean
caml_experiment_load_datasets (const CamlExperiment *exp, CamlDataset **train,
                               CamlDataset **test, GError **error)
{
  *train = *test = NULL;
  if (exp->data.validation_fraction > 0
      && !(caml_data_kind_is_image (exp->data.kind) || caml_data_kind_is_text (exp->data.kind)))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "data.validation_fraction: %s data has no validation split (only image "
                   "and text data sets do)", caml_data_kind_names[exp->data.kind]);
      return FALSE;
    }
  if (!load_datasets (exp, train, test, error))
    return FALSE;
  if (exp->data.validation_fraction > 0
      && (caml_data_kind_is_image (exp->data.kind) || caml_data_kind_is_text (exp->data.kind))
      && !hold_out_validation (&exp->data, train, test, error))
    return FALSE;
  if (!caml_data_kind_is_text (exp->data.kind))
    return TRUE;
  /* With n-grams, max_tokens limits the words read: the n-grams are formed
   * from the first max_tokens words and T holds them all (words + n-grams),
   * so that truncating a batch never drops the n-grams, which come after the
   * words. */
  int max_tokens = exp->data.max_tokens;
  if (exp->data.ngrams > 1)
    {
      caml_text_dataset_truncate (*train, max_tokens);
      caml_text_dataset_truncate (*test, max_tokens);
      caml_text_dataset_add_ngrams (*train, exp->data.ngrams, TRUE);
      caml_text_dataset_add_ngrams (*test, exp->data.ngrams, FALSE);
      max_tokens = 0;
    }
  if (exp->data.unique_tokens)
    {
      caml_text_dataset_unique (*train);
      caml_text_dataset_unique (*test);
    }
  if (exp->data.ngrams > 1 || exp->data.unique_tokens)
    caml_text_datasets_finish (*train, *test, max_tokens);
  return TRUE;
}

static gboolean
load_datasets (const CamlExperiment *exp, CamlDataset **train, CamlDataset **test,
               GError **error)
{
  switch (exp->data.kind)
    {
    case CAML_DATA_SST:
    case CAML_DATA_TEXT:
      return load_text_datasets (&exp->data, train, test, error);
    case CAML_DATA_IMDB:
      return load_imdb_datasets (&exp->data, train, test, error);
    case CAML_DATA_RNN_SANITY:
      caml_data_rnn_sanity (train, test);
      return TRUE;
    case CAML_DATA_MNIST:
    case CAML_DATA_FASHION_MNIST:
    case CAML_DATA_IDX:
      return load_image_datasets (&exp->data, train, test, error);
    case CAML_DATA_XOR:
      caml_data_xor (train, test);
      return TRUE;
    case CAML_DATA_SURFACE:
      if (exp->data.grid < 2 || exp->data.grid > CAML_MAX_GRID
          || !(exp->data.train_fraction > 0 && exp->data.train_fraction < 1))
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                       "surface data: grid %d or train fraction %g out of range",
                       exp->data.grid, exp->data.train_fraction);
          return FALSE;
        }
      if (!(exp->data.noise >= 0 && exp->data.noise <= CAML_MAX_NOISE))
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                       "data.noise: %g out of range (0 to %g)", exp->data.noise,
                       (double) CAML_MAX_NOISE);
          return FALSE;
        }
      {
        guint64 seed = exp->data.has_split_seed ? exp->data.split_seed : exp->seed;
        caml_data_surface (exp->data.grid, exp->data.train_fraction, seed, train, test);
        caml_data_add_noise (*train, exp->data.noise, seed);
      }
      return TRUE;
    case CAML_N_DATA_KINDS:
      break;
    }
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "unknown data kind %d",
               (int) exp->data.kind);
  return FALSE;
}

CamlModel *
caml_experiment_build_model (const CamlExperiment *exp, const CamlShape *input,
                             GError **error)
{
  /* A model too big to train here is refused before its weights are
   * allocated and initialised (a minute for 1.6 G of them): with their
   * gradients and the optimizer's state with what undoes a step (1 to 5
   * floats, the copy of the weights among them) they take 3 to 7 floats a
   * parameter (caml_trainer_start checks the whole run). */
  CamlModel *shapes = caml_model_new_shapes (input, exp->layers, exp->n_layers, error);
  if (shapes == NULL)
    return NULL;
  size_t n_weights = shapes->n_weights, need;
  caml_model_free (shapes);
  size_t per = 2 + (size_t) caml_optimizer_state_floats (&exp->optimizer);
  gboolean overflow = !g_size_checked_mul (&need, MAX (n_weights, 1), per * sizeof (float));
  if (overflow || need > caml_memory_limit ())
    {
      g_autofree char *size = overflow ? g_strdup ("more than can be addressed")
                                       : g_format_size ((guint64) need);
      g_autofree char *limit = caml_memory_limit_text ();
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "training this model needs at least %s for its %zu parameters (the "
                   "weights, their gradients, the optimizer's state and the copy kept to "
                   "roll back a divergence: %zu floats each), more than %s", size,
                   n_weights, per, limit);
      return NULL;
    }

  guint32 seed[2] = { (guint32) (exp->seed & 0xffffffffu), (guint32) (exp->seed >> 32) };
  GRand *rng = g_rand_new_with_seed_array (seed, G_N_ELEMENTS (seed));
  CamlModel *model = caml_model_new (input, exp->layers, exp->n_layers, rng, error);
  g_rand_free (rng);
  if (model != NULL && caml_model_output_shape (model)->kind != CAML_SHAPE_DENSE)
    {
      g_autofree char *out = caml_shape_to_string (caml_model_output_shape (model));
      g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                   "the model ends with %s: end it with layers that give one vector per "
                   "sample (mean_pool, an RNN or attention, then dense)", out);
      g_clear_pointer (&model, caml_model_free);
    }
  /* The n-grams follow the words as further tokens: a layer that reads the
   * tokens in order would take them for more steps of the text. */
  for (int i = 0; model != NULL && caml_data_kind_is_text (exp->data.kind) && exp->data.ngrams > 1
                  && i < model->n_layers; i++)
    if (model->layers[i]->ops->reads_order)
      {
        g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                     "data.ngrams %d adds word %s as further tokens after the words: only "
                     "bag-of-words layers (ca_bsfe, average, embedding + mean_pool) can read "
                     "them; layer %d (%s) reads the tokens in order", exp->data.ngrams,
                     exp->data.ngrams == 2 ? "pairs" : "pairs and triples", i,
                     model->layers[i]->ops->name);
        g_clear_pointer (&model, caml_model_free);
      }
  return model;
}

/* Layers that take pre-trained word vectors: an option "pretrained" that is
 * on, and a table "E" (V, D). */
static CamlParam *
pretrained_table (CamlLayer *layer)
{
  int k = caml_layer_ops_option_index (layer->ops, "pretrained");
  if (k < 0 || layer->opt[k] == 0.0)
    return NULL;
  for (int j = 0; j < layer->n_params; j++)
    if (g_str_equal (layer->params[j].name, "E"))
      return &layer->params[j];
  return NULL;
}

/* Copies emb's vector of each word of vocab into row id of every pretrained
 * embedding table; *n_found (if non-NULL) gets how many words had one. An
 * error when the widths differ; the model is then unchanged. */
static gboolean
set_word_vectors (CamlModel *model, const CamlVocab *vocab, const CamlEmbeddings *emb,
                  int *n_found, GError **error)
{
  int found = 0, v = caml_vocab_size (vocab);
  for (int i = 0; i < model->n_layers; i++)   /* check all before changing any */
    {
      CamlLayer *layer = model->layers[i];
      CamlParam *E = pretrained_table (layer);
      size_t d = E != NULL ? E->count / (size_t) MAX (layer->in.vocab, 1) : 0;
      if (E != NULL && (int) d != emb->dim)
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                       "layer %d (%s): pretrained vectors are %d wide but the layer's are "
                       "%zu (set its dim to %d)", i, layer->ops->name, emb->dim, d, emb->dim);
          return FALSE;
        }
      if (E != NULL && layer->in.vocab != v)
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                       "layer %d (%s): the model's vocabulary has %d words, the data's %d",
                       i, layer->ops->name, layer->in.vocab, v);
          return FALSE;
        }
    }
  for (int i = 0; i < model->n_layers; i++)
    {
      CamlLayer *layer = model->layers[i];
      CamlParam *E = pretrained_table (layer);
      if (E == NULL)
        continue;
      size_t d = (size_t) emb->dim;
      found = 0;
      for (int id = 0; id < v; id++)
        {
          const float *vec = caml_embeddings_lookup (emb, caml_vocab_word (vocab, id));
          if (vec == NULL)
            continue;
          memcpy (E->w + (size_t) id * d, vec, d * sizeof (float));
          found++;
        }
    }
  if (n_found != NULL)
    *n_found = found;
  return TRUE;
}

CamlModel *
caml_experiment_build_model_for (const CamlExperiment *exp, const CamlDataset *train,
                                 GError **error)
{
  CamlModel *model = caml_experiment_build_model (exp, &train->x_shape, error);
  if (model == NULL)
    return NULL;
  caml_model_set_vocab (model, train->vocab);

  gboolean wants = FALSE;
  for (int i = 0; i < model->n_layers; i++)
    wants |= pretrained_table (model->layers[i]) != NULL;
  if (!wants)
    return model;

  if (train->vocab == NULL || exp->data.embeddings == NULL)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "an embedding layer is pretrained but %s",
                   train->vocab == NULL ? "the data is not text"
                   : "data.embeddings is not set (a path to word vectors, or \"wink\")");
      caml_model_free (model);
      return NULL;
    }
  gboolean wink = g_str_equal (exp->data.embeddings, "wink");
  g_autofree char *path = wink ? caml_embeddings_wink_path () : g_strdup (exp->data.embeddings);
  if (wink && !g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_IO,
                   "%s: no such file: the wink word vectors are not fetched — run "
                   "`datasets/fetch embeddings` in the source tree, or set CAML_DATA_DIR "
                   "to the directory that holds embeddings/", path);
      caml_model_free (model);
      return NULL;
    }
  if (!wink && !check_named_file ("data.embeddings", NULL, path, error))
    {
      caml_model_free (model);
      return NULL;
    }
  CamlEmbeddings *emb = caml_embeddings_load (path, error);
  int found = 0;
  if (emb == NULL
      || !set_word_vectors (model, train->vocab, emb, &found, error))
    g_clear_pointer (&model, caml_model_free);
  else if (found == 0)
    {
      int v = caml_vocab_size (train->vocab);
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "%s: none of the %d words of the training vocabulary has a vector "
                   "in this file — the tokenizer lower-cases every word (docs/text.md): "
                   "are the file's words cased, or of another language?", path, v);
      g_clear_pointer (&model, caml_model_free);
    }
  else
    model->n_word_vectors = found;
  caml_embeddings_free (emb);
  return model;
}
