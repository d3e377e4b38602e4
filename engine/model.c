/* model.c — a sequential stack of layers with one parameter block.
 *
 * Building a model infers every shape, lets each layer declare its
 * parameters, then lays them out in one block (w) with a gradient block (dw)
 * of the same layout, so optimizers are flat loops and checkpoints are one
 * write.
 *
 * The sizes of those blocks and of the per-batch buffers come from the
 * user (layer options, data, batch size): in-range options can still ask
 * for hundreds of gigabytes. They are computed with overflow checks and
 * allocated with g_try_malloc, so too much is an error that says how much
 * ("layer 0 (ca_nn): the buffers for a batch of 10486 samples need 5.5 GB,
 * which cannot be allocated"), not an abort inside g_malloc. */
#include <math.h>

#include "caml-private.h"
#include "parallel.h"

static void
init_param (CamlParam *p, GRand *rng)
{
  switch (p->init)
    {
    case CAML_INIT_ZERO:
      memset (p->w, 0, p->count * sizeof (float));
      break;
    case CAML_INIT_GLOROT:
      {
        double a = sqrt (6.0 / (double) MAX (1, p->fan_in + p->fan_out));
        for (size_t i = 0; i < p->count; i++)
          p->w[i] = (float) g_rand_double_range (rng, -a, a);
        break;
      }
    case CAML_INIT_HE:
      {
        double sd = sqrt (2.0 / (double) MAX (1, p->fan_in));
        for (size_t i = 0; i < p->count; i += 2)
          {
            /* Box–Muller: two normals per pair of uniforms. */
            double u1 = 1.0 - g_rand_double (rng), u2 = g_rand_double (rng);
            double r = sqrt (-2.0 * log (u1));
            p->w[i] = (float) (sd * r * cos (2 * G_PI * u2));
            if (i + 1 < p->count)
              p->w[i + 1] = (float) (sd * r * sin (2 * G_PI * u2));
          }
        break;
      }
    case CAML_INIT_SMALL:
      for (size_t i = 0; i < p->count; i++)
        p->w[i] = (float) g_rand_double_range (rng, -0.1, 0.1);
      break;
    }
  if (p->init_centre != 0.0f)
    for (size_t i = 0; i < p->count; i++)
      p->w[i] += p->init_centre;
}

/* Re-initialise every parameter from rng. */
static void
init_params (CamlModel *model, GRand *rng)
{
  for (int i = 0; i < model->n_layers; i++)
    {
      CamlLayer *layer = model->layers[i];
      for (int j = 0; j < layer->n_params; j++)
        init_param (&layer->params[j], rng);
      if (layer->ops->seed != NULL)
        layer->ops->seed (layer, g_rand_int (rng));
    }
}

/* "5.5 GB", or a phrase for a size beyond size_t. Free with g_free. */
static char *
format_bytes (gboolean overflow, size_t bytes)
{
  return overflow ? g_strdup ("more memory than can be addressed")
                  : g_format_size ((guint64) bytes);
}

/* Lays the parameters out in one block, and allocates it and its gradient
 * block (zeroed). */
/* Each parameter's offset in the one block; the total in model->n_weights.
 * FALSE when the total overflows size_t. */
static gboolean
layout_params (CamlModel *model, size_t *biggest, int *biggest_layer)
{
  size_t total = 0;
  gboolean overflow = FALSE;
  *biggest = 0;
  *biggest_layer = 0;
  for (int i = 0; i < model->n_layers; i++)
    {
      size_t layer_total = 0;
      for (int j = 0; j < model->layers[i]->n_params; j++)
        {
          CamlParam *p = &model->layers[i]->params[j];
          p->offset = total;
          overflow |= !g_size_checked_add (&total, total, p->count);
          overflow |= !g_size_checked_add (&layer_total, layer_total, p->count);
        }
      if (layer_total > *biggest)
        {
          *biggest = layer_total;
          *biggest_layer = i;
        }
    }
  model->n_weights = total;
  return !overflow;
}

static gboolean
alloc_weights (CamlModel *model, GError **error)
{
  size_t biggest = 0;
  int biggest_layer = 0;
  gboolean overflow = !layout_params (model, &biggest, &biggest_layer);
  size_t total = model->n_weights;

  size_t bytes = 0, both = 0;   /* one block; both blocks */
  overflow = overflow || !g_size_checked_mul (&bytes, MAX (total, 1), sizeof (float))
                      || !g_size_checked_mul (&both, bytes, 2);
  if (!overflow && both > caml_memory_limit ())
    {
      g_autofree char *need = g_format_size ((guint64) both);
      g_autofree char *limit = caml_memory_limit_text ();
      const CamlLayer *layer = model->layers[biggest_layer];
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "the weights need %s (%zu parameters and their gradients; layer %d (%s) "
                   "holds %zu of them), more than %s", need, total, biggest_layer,
                   layer->ops->name, biggest, limit);
      return FALSE;
    }
  if (!overflow)
    {
      model->w = g_try_malloc0 (bytes);
      model->dw = model->w != NULL ? g_try_malloc0 (bytes) : NULL;
      if (model->dw != NULL)
        return TRUE;
      g_clear_pointer (&model->w, g_free);
    }
  g_autofree char *need = format_bytes (overflow, both);
  const CamlLayer *layer = model->layers[biggest_layer];
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
               "the weights need %s (%zu parameters and their gradients; layer %d (%s) "
               "holds %zu of them), which cannot be allocated", need, total,
               biggest_layer, layer->ops->name, biggest);
  return FALSE;
}

/* The layers, their options checked and shapes inferred, without weights
 * or buffers. */
static CamlModel *
build_layers (const CamlShape *input, const CamlLayerSpec *specs, int n_specs, GError **error)
{
  if (n_specs <= 0)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "the model has no layers");
      return NULL;
    }

  CamlModel *model = g_new0 (CamlModel, 1);
  model->input = *input;
  model->layers = g_new0 (CamlLayer *, n_specs);
  CamlShape shape = *input;
  for (int i = 0; i < n_specs; i++)
    {
      const CamlLayerOps *ops = specs[i].ops;
      CamlLayer *layer = g_new0 (CamlLayer, 1);
      layer->ops = ops;
      layer->index = i;
      layer->in = shape;
      memcpy (layer->opt, specs[i].opt, sizeof layer->opt);

      for (int o = 0; o < ops->n_options; o++)
        {
          g_autofree char *where = g_strdup_printf ("layer %d (%s): %s", i, ops->name,
                                                    ops->options[o].key);
          if (!caml_option_check (&ops->options[o], layer->opt[o], where, error))
            {
              g_free (layer);
              goto fail;
            }
        }

      guint accepts = ops->accepts != 0 ? ops->accepts : CAML_ACCEPTS_DENSE;
      if (!(accepts & CAML_ACCEPTS (shape.kind)))
        {
          g_autofree char *in = caml_shape_to_string (&shape);
          g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                       "layer %d (%s) takes %s, but its input is %s%s", i, ops->name,
                       (accepts & CAML_ACCEPTS (CAML_SHAPE_TOKENS)) ? "token ids"
                       : (accepts & CAML_ACCEPTS (CAML_SHAPE_SEQUENCE)) ? "a sequence of vectors"
                       : "vectors or images", in,
                       shape.kind == CAML_SHAPE_TOKENS
                       ? ": start a text model with embedding, average or ca_bsfe"
                       : shape.kind == CAML_SHAPE_SEQUENCE
                       ? ": reduce the sequence first (mean_pool, an RNN or attention)" : "");
          g_free (layer);
          goto fail;
        }

      GError *local = NULL;
      if (!ops->setup (layer, &local))
        {
          g_autofree char *in = caml_shape_to_string (&shape);
          g_set_error (error, CAML_ERROR, local->code,
                       "layer %d (%s), input shape %s: %s", i, ops->name, in,
                       local->message);
          g_error_free (local);
          g_free (layer);
          goto fail;
        }
      model->layers[model->n_layers++] = layer;
      shape = layer->out;
    }

  return model;

fail:
  caml_model_free (model);
  return NULL;
}

CamlModel *
caml_model_new_shapes (const CamlShape *input, const CamlLayerSpec *specs, int n_specs,
                       GError **error)
{
  CamlModel *model = build_layers (input, specs, n_specs, error);
  size_t biggest;
  int biggest_layer;

  if (model != NULL && !layout_params (model, &biggest, &biggest_layer))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "the model has more parameters than can be addressed (layer %d (%s) "
                   "holds the most)", biggest_layer, model->layers[biggest_layer]->ops->name);
      g_clear_pointer (&model, caml_model_free);
    }
  return model;
}

CamlModel *
caml_model_new (const CamlShape *input, const CamlLayerSpec *specs, int n_specs,
                GRand *rng, GError **error)
{
  CamlModel *model = build_layers (input, specs, n_specs, error);
  if (model == NULL)
    return NULL;

  if (!alloc_weights (model, error))
    goto fail;
  for (int i = 0; i < model->n_layers; i++)
    for (int j = 0; j < model->layers[i]->n_params; j++)
      {
        CamlParam *p = &model->layers[i]->params[j];
        p->w = model->w + p->offset;
        p->dw = model->dw + p->offset;
      }
  model->acts = g_new0 (float *, model->n_layers);
  model->dacts = g_new0 (float *, model->n_layers);
  /* One sample's buffers now: a model whose activations cannot be held even
   * for one sample fails here, with the layer named. */
  if (!caml_model_reserve (model, 1, error))
    goto fail;
  if (rng != NULL)
    init_params (model, rng);
  return model;

fail:
  caml_model_free (model);
  return NULL;
}

void
caml_model_free (CamlModel *model)
{
  if (model == NULL)
    return;
  for (int i = 0; i < model->n_layers; i++)
    {
      CamlLayer *layer = model->layers[i];
      layer->ops->free (layer);
      g_free (layer);
      if (model->acts)
        g_free (model->acts[i]);
      if (model->dacts)
        g_free (model->dacts[i]);
    }
  g_free (model->layers);
  g_free (model->acts);
  g_free (model->dacts);
  g_free (model->lengths);
  g_free (model->touched);
  g_free (model->touched_mark);
  g_free (model->w);
  g_free (model->dw);
  caml_vocab_unref (model->vocab);
  g_free (model);
}

void
caml_model_set_vocab (CamlModel *model, CamlVocab *vocab)
{
  if (vocab != NULL)
    caml_vocab_ref (vocab);
  caml_vocab_unref (model->vocab);
  model->vocab = vocab;
}

const CamlShape *
caml_model_output_shape (const CamlModel *model)
{
  return &model->layers[model->n_layers - 1]->out;
}

static void
release_batch_buffers (CamlModel *model)
{
  for (int i = 0; i < model->n_layers; i++)
    {
      g_clear_pointer (&model->acts[i], g_free);
      g_clear_pointer (&model->dacts[i], g_free);
    }
  g_clear_pointer (&model->lengths, g_free);
  model->capacity = 0;
  model->buffer_bytes = 0;
}

gboolean
caml_model_reserve (CamlModel *model, int n, GError **error)
{
  g_return_val_if_fail (model != NULL && n >= 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (n <= model->capacity)
    return TRUE;
  release_batch_buffers (model);

  /* The whole need first, against the memory there is: each layer's output,
   * its gradient and its own scratch. (An overflow is reported below, by the
   * layer where it happens.) */
  size_t total = 0, most = 0;
  int most_layer = 0;
  gboolean too_big = FALSE;
  for (int i = 0; i < model->n_layers && !too_big; i++)
    {
      CamlLayer *layer = model->layers[i];
      size_t count = 0, both = 0, scratch = 0;
      too_big = !g_size_checked_mul (&count, (size_t) n, MAX (caml_shape_size (&layer->out), 1))
                 || !g_size_checked_mul (&both, count, 2 * sizeof (float));
      if (!too_big && layer->ops->reserve != NULL)
        layer->ops->reserve (layer, n, FALSE, &scratch);
      too_big = too_big || scratch == SIZE_MAX || !g_size_checked_add (&both, both, scratch)
                 || !g_size_checked_add (&total, total, both);
      if (both > most)
        {
          most = both;
          most_layer = i;
        }
    }
  size_t weights = 2 * sizeof (float) * MAX (model->n_weights, 1);
  if (!too_big && (total > caml_memory_limit () || caml_memory_limit () - total < weights))
    {
      g_autofree char *need = g_format_size ((guint64) total);
      g_autofree char *need_most = g_format_size ((guint64) most);
      g_autofree char *need_weights = g_format_size ((guint64) weights);
      g_autofree char *limit = caml_memory_limit_text ();
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "the buffers for a batch of %d sample%s need %s (layer %d (%s) the most, "
                   "%s); with the weights and their gradients (%s) that is more than %s",
                   n, n == 1 ? "" : "s", need, most_layer,
                   model->layers[most_layer]->ops->name, need_most, need_weights, limit);
      return FALSE;
    }

  for (int i = 0; i < model->n_layers; i++)
    {
      CamlLayer *layer = model->layers[i];
      size_t count = 0, bytes = 0, both = 0;   /* one buffer; it and its gradient */
      size_t scratch = 0;                      /* the layer's own (ops->reserve) */
      gboolean overflow = !g_size_checked_mul (&count, (size_t) n,
                                               MAX (caml_shape_size (&layer->out), 1))
                          || !g_size_checked_mul (&bytes, count, sizeof (float))
                          || !g_size_checked_mul (&both, bytes, 2);
      gboolean ok = !overflow
                    && (model->acts[i] = g_try_malloc (bytes)) != NULL
                    && (model->dacts[i] = g_try_malloc (bytes)) != NULL;
      gboolean counted = FALSE;
      if (ok && layer->ops->reserve != NULL)
        {
          ok = layer->ops->reserve (layer, n, TRUE, &scratch);
          counted = TRUE;
        }
      if (ok)
        continue;
      /* The whole need: the output, its gradient and the layer's scratch. */
      if (!counted && layer->ops->reserve != NULL)
        layer->ops->reserve (layer, n, FALSE, &scratch);
      overflow = overflow || scratch == SIZE_MAX || !g_size_checked_add (&both, both, scratch);
      g_autofree char *need = format_bytes (overflow, both);
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "layer %d (%s): the buffers for a batch of %d sample%s need %s, which "
                   "cannot be allocated", i, layer->ops->name, n, n == 1 ? "" : "s", need);
      release_batch_buffers (model);
      return FALSE;
    }
  if (model->input.kind == CAML_SHAPE_TOKENS
      && (model->lengths = g_try_new0 (int, n)) == NULL)
    {
      g_autofree char *need = g_format_size ((guint64) n * sizeof (int));
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "the token lengths of a batch of %d samples need %s, which cannot be "
                   "allocated", n, need);
      release_batch_buffers (model);
      return FALSE;
    }
  model->capacity = n;
  model->buffer_bytes = total;
  return TRUE;
}

/* Token input: a sample's length is the position of its first padding id. */
static const int *
input_lengths (CamlModel *model, const float *x, int n)
{
  if (model->input.kind == CAML_SHAPE_SEQUENCE)
    return model->seq_lengths;
  if (model->input.kind != CAML_SHAPE_TOKENS)
    return NULL;
  int t_max = model->input.dims[0];
  for (int i = 0; i < n; i++)
    {
      const float *row = x + (size_t) i * t_max;
      int t = 0;
      while (t < t_max && row[t] != (float) CAML_TOKEN_PAD)
        t++;
      model->lengths[i] = t;
    }
  return model->lengths;
}

const float *
caml_model_forward (CamlModel *model, const float *x, int n)
{
  return caml_model_forward_to (model, x, n, model->n_layers - 1);
}

const float *
caml_model_forward_to (CamlModel *model, const float *x, int n, int last)
{
  g_return_val_if_fail (last >= -1 && last < model->n_layers, NULL);
  GError *error = NULL;
  if (!caml_model_reserve (model, n, &error))
    /* The caller's bug: a batch size that comes from the user goes through
     * caml_model_reserve first, where the error can be returned. */
    g_error ("caml_model_forward: %s (call caml_model_reserve first)", error->message);
  const int *lengths = input_lengths (model, x, n);
  const float *inp = x;
  for (int i = 0; i <= last; i++)
    {
      CamlLayer *layer = model->layers[i];
      layer->training = model->training;
      layer->lengths = lengths;
      layer->ops->forward (layer, model->acts[i], inp, n);
      inp = model->acts[i];
    }
  return inp;
}

void
caml_model_record_touched (CamlModel *model, const float *x, const int *lengths, int n)
{
  int vocab = model->input.vocab, t_max = model->input.dims[0];
  if (vocab <= 0)
    return;
  if (model->touched_mark == NULL)
    {
      model->touched_mark = g_new0 (guint8, vocab);
      model->touched = g_new (int, vocab);
    }
  for (int i = 0; i < n; i++)
    {
      const float *row = x + (size_t) i * t_max;
      for (int t = 0; t < lengths[i]; t++)
        {
          int id = (int) row[t];
          if (id >= 0 && id < vocab && !model->touched_mark[id])
            {
              model->touched_mark[id] = 1;
              model->touched[model->n_touched++] = id;
            }
        }
    }
}

void
caml_model_backward (CamlModel *model, const float *x, const float *dout, int n)
{
  const float *d = dout;
  if (model->input.kind == CAML_SHAPE_TOKENS)
    caml_model_record_touched (model, x, model->lengths, n);
  for (int i = model->n_layers - 1; i >= 0; i--)
    {
      CamlLayer *layer = model->layers[i];
      const float *inp = i > 0 ? model->acts[i - 1] : x;
      float *dinp = i > 0 ? model->dacts[i - 1] : NULL;
      layer->ops->backward (layer, dinp, d, inp, model->acts[i], n);
      d = dinp;
    }
}

void
caml_model_set_sequence_lengths (CamlModel *model, const int *lengths)
{
  model->seq_lengths = lengths;
}

static void
zero_range (size_t offset, size_t count, gpointer user_data)
{
  CamlModel *model = user_data;
  caml_parallel_zero (model->dw + offset, count);
}

void
caml_model_zero_grad (CamlModel *model)
{
  caml_model_foreach_grad_range (model, zero_range, model);
  for (int k = 0; k < model->n_touched; k++)
    model->touched_mark[model->touched[k]] = 0;
  model->n_touched = 0;
}

void
caml_model_foreach_grad_range (const CamlModel *model, CamlRangeFunc func,
                               gpointer user_data)
{
  if (!model->sparse_grads || model->input.kind != CAML_SHAPE_TOKENS)
    {
      func (0, model->n_weights, user_data);
      return;
    }
  /* Dense parameters merge into runs; token tables give their rows. */
  size_t run_start = 0, run_count = 0;
  for (int i = 0; i < model->n_layers; i++)
    for (int j = 0; j < model->layers[i]->n_params; j++)
      {
        const CamlParam *p = &model->layers[i]->params[j];
        if (p->token_rows <= 0)
          {
            if (run_count == 0)
              run_start = p->offset;
            run_count += p->count;
            continue;
          }
        if (run_count > 0)
          func (run_start, run_count, user_data);
        run_count = 0;
        size_t rows = p->count / (size_t) p->token_rows;
        for (int k = 0; k < model->n_touched; k++)
          if ((size_t) model->touched[k] < rows)
            func (p->offset + (size_t) model->touched[k] * p->token_rows,
                  (size_t) p->token_rows, user_data);
      }
  if (run_count > 0)
    func (run_start, run_count, user_data);
}

int
caml_model_find_chi_layer (const CamlModel *model, int from)
{
  for (int i = MAX (from, 0); i < model->n_layers; i++)
    if (model->layers[i]->ops->chi != NULL)
      return i;
  return -1;
}
