/* experiment.c — an experiment's lifecycle: the default, copy, free and
 * equality, and the tables of names its reader and writer share.
 *
 * An experiment is one JSON object (docs/experiment-files.md): read by
 * experiment-read.c (on the value readers of experiment-json.c), written by
 * experiment-write.c, and turned into data sets and a model by
 * experiment-build.c. */
#include <string.h>

#include "caml-private.h"
#include "experiment-private.h"

const char *const caml_data_kind_names[] = {
  "xor", "surface", "mnist", "fashion_mnist", "sst", "imdb", "rnn_sanity", "idx", "text", NULL
};
G_STATIC_ASSERT (G_N_ELEMENTS (caml_data_kind_names) == CAML_N_DATA_KINDS + 1);

/* The values of data.builtin: every kind but idx and text, which are chosen
 * by the "idx" and "text" keys instead. Indexed like CamlDataKind. */
const char *const caml_builtin_names[] = {
  "xor", "surface", "mnist", "fashion_mnist", "sst", "imdb", "rnn_sanity", NULL
};
G_STATIC_ASSERT (G_N_ELEMENTS (caml_builtin_names) == CAML_DATA_IDX + 1);

const char *const caml_idx_keys[4] = {
  "train_images", "train_labels", "test_images", "test_labels"
};

const char *const caml_text_keys[2] = { "train", "test" };

gboolean
caml_data_kind_has_validation (CamlDataKind kind)
{
  return caml_data_kind_is_image (kind) || caml_data_kind_is_text (kind);
}

const char *const caml_optimizer_field_keys[CAML_N_OPTIM_FIELDS] = {
  "lr", "em_steps", "momentum", "beta1", "beta2", "eps", "initial_accumulator",
  "weight_decay",
};

const char *const caml_experiment_settings[] = {
  "optimizer.lr", "optimizer.em_steps", "optimizer.weight_decay",
  "training.steps", "training.batch_size", "seed", NULL
};

const CamlOptimizerField caml_optimizer_fields[CAML_N_OPTIMS][CAML_N_OPTIM_FIELDS + 1] = {
  [CAML_OPTIM_SGD]     = { CAML_FIELD_LR, CAML_FIELD_MOMENTUM, CAML_FIELD_EM_STEPS,
                           CAML_FIELD_WEIGHT_DECAY, CAML_N_OPTIM_FIELDS },
  [CAML_OPTIM_ADAGRAD] = { CAML_FIELD_LR, CAML_FIELD_EPS, CAML_FIELD_INITIAL_ACCUMULATOR,
                           CAML_FIELD_EM_STEPS, CAML_FIELD_WEIGHT_DECAY, CAML_N_OPTIM_FIELDS },
  [CAML_OPTIM_ADAM]    = { CAML_FIELD_LR, CAML_FIELD_BETA1, CAML_FIELD_BETA2, CAML_FIELD_EPS,
                           CAML_FIELD_EM_STEPS, CAML_FIELD_WEIGHT_DECAY, CAML_N_OPTIM_FIELDS },
};

int
caml_experiment_optimizer_field (const CamlExperiment *exp, const char *path)
{
  if (!g_str_has_prefix (path, "optimizer.")
      || !g_strv_contains (caml_experiment_settings, path))
    return -1;
  const CamlOptimizerField *fields = caml_optimizer_fields[exp->optimizer.kind];
  for (int i = 0; fields[i] != CAML_N_OPTIM_FIELDS; i++)
    if (g_str_equal (caml_optimizer_field_keys[fields[i]], path + strlen ("optimizer.")))
      return fields[i];
  return -1;
}

/* ------------------------------------------------------------- lifecycle */

void
caml_experiment_default_plot_domain (CamlDataKind kind, double *domain)
{
  /* XOR as in the paper's Fig. 15; the surface a little beyond its [−2, 2]²
   * grid, to show how the fit extrapolates. Image data has no 2-D input
   * domain: it takes the surface's, which nothing draws. */
  double lo = kind == CAML_DATA_XOR ? -0.5 : -3.0;
  double hi = kind == CAML_DATA_XOR ? 1.5 : 3.0;
  domain[0] = lo; domain[1] = hi; domain[2] = lo; domain[3] = hi;
}

static void
set_option (CamlLayerSpec *spec, const char *key, double value)
{
  int i = caml_layer_ops_option_index (spec->ops, key);
  if (i >= 0)
    spec->opt[i] = value;
}

CamlExperiment *
caml_experiment_new_default (void)
{
  CamlExperiment *exp = g_new0 (CamlExperiment, 1);

  exp->name = g_strdup ("untitled");
  exp->description = g_strdup ("");
  exp->paper = NULL;
  exp->data = (CamlDataConfig) {
    .kind = CAML_DATA_XOR, .grid = 81, .train_fraction = 0.01, .ngrams = 1,
  };

  /* The smallest model that fits the default data: one CA-NN of width 1. */
  const CamlLayerOps *ops = caml_layer_lookup ("ca_nn");
  if (ops != NULL)
    {
      exp->n_layers = 1;
      exp->layers = g_new0 (CamlLayerSpec, 1);
      exp->layers[0].ops = ops;
      caml_layer_ops_default_options (ops, exp->layers[0].opt);
      set_option (&exp->layers[0], "units", 1);
      set_option (&exp->layers[0], "activation", CAML_ACT_TANH);
    }

  exp->loss = CAML_LOSS_MSE;
  caml_optimizer_config_defaults (&exp->optimizer, CAML_OPTIM_ADAM);
  exp->optimizer.lr = CAML_DEFAULT_LR;
  exp->steps = 1000;
  exp->batch_size = 0;
  exp->eval_every = 50;
  exp->seed = 0;
  caml_experiment_default_plot_domain (exp->data.kind, exp->plot_domain);
  return exp;
}

void
caml_experiment_free (CamlExperiment *exp)
{
  if (exp == NULL)
    return;
  g_free (exp->name);
  g_free (exp->description);
  g_free (exp->paper);
  for (int i = 0; i < 4; i++)
    g_free (exp->data.idx_paths[i]);
  for (int i = 0; i < 2; i++)
    g_free (exp->data.text_paths[i]);
  g_free (exp->data.embeddings);
  g_free (exp->layers);
  g_free (exp);
}

CamlExperiment *
caml_experiment_copy (const CamlExperiment *exp)
{
  CamlExperiment *copy = g_memdup2 (exp, sizeof *exp);
  copy->name = g_strdup (exp->name);
  copy->description = g_strdup (exp->description);
  copy->paper = g_strdup (exp->paper);
  for (int i = 0; i < 4; i++)
    copy->data.idx_paths[i] = g_strdup (exp->data.idx_paths[i]);
  for (int i = 0; i < 2; i++)
    copy->data.text_paths[i] = g_strdup (exp->data.text_paths[i]);
  copy->data.embeddings = g_strdup (exp->data.embeddings);
  copy->layers = g_memdup2 (exp->layers, sizeof *exp->layers * exp->n_layers);
  return copy;
}

static gboolean
optimizer_equal (const CamlOptimizerConfig *a, const CamlOptimizerConfig *b)
{
  return a->kind == b->kind && a->lr == b->lr && a->momentum == b->momentum
      && a->beta1 == b->beta1 && a->beta2 == b->beta2 && a->eps == b->eps
      && a->initial_accumulator == b->initial_accumulator
      && a->weight_decay == b->weight_decay
      && a->em_steps == b->em_steps;
}

gboolean
caml_data_config_equal (const CamlDataConfig *a, const CamlDataConfig *b)
{
  if (a->kind != b->kind || a->grid != b->grid
      || a->train_fraction != b->train_fraction
      || a->noise != b->noise
      || a->has_split_seed != b->has_split_seed
      || (a->has_split_seed && a->split_seed != b->split_seed)
      || a->train_limit != b->train_limit
      || a->test_limit != b->test_limit
      || a->max_tokens != b->max_tokens
      || a->split != b->split
      || a->unique_tokens != b->unique_tokens
      || a->ngrams != b->ngrams
      || a->validation_fraction != b->validation_fraction
      || g_strcmp0 (a->embeddings, b->embeddings) != 0)
    return FALSE;
  for (int i = 0; i < 2; i++)
    if (g_strcmp0 (a->text_paths[i], b->text_paths[i]) != 0)
      return FALSE;
  for (int i = 0; i < 4; i++)
    if (g_strcmp0 (a->idx_paths[i], b->idx_paths[i]) != 0)
      return FALSE;
  return TRUE;
}

gboolean
caml_experiment_equal (const CamlExperiment *a, const CamlExperiment *b)
{
  if (g_strcmp0 (a->name, b->name) != 0
      || g_strcmp0 (a->description, b->description) != 0
      || g_strcmp0 (a->paper, b->paper) != 0)
    return FALSE;
  if (!caml_data_config_equal (&a->data, &b->data))
    return FALSE;
  if (a->n_layers != b->n_layers)
    return FALSE;
  for (int i = 0; i < a->n_layers; i++)
    {
      const CamlLayerSpec *la = &a->layers[i], *lb = &b->layers[i];
      if (la->ops != lb->ops)
        return FALSE;
      for (int k = 0; k < la->ops->n_options; k++)
        if (la->opt[k] != lb->opt[k])
          return FALSE;
    }
  if (a->loss != b->loss || !optimizer_equal (&a->optimizer, &b->optimizer))
    return FALSE;
  if (a->steps != b->steps || a->batch_size != b->batch_size
      || a->eval_every != b->eval_every || a->seed != b->seed
      || a->average_decay != b->average_decay)
    return FALSE;
  for (int i = 0; i < 4; i++)
    if (a->plot_domain[i] != b->plot_domain[i])
      return FALSE;
  return TRUE;
}
