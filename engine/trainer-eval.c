/* trainer-eval.c — evaluation: a model's mean loss and metric over a data
 * set, in chunks of samples, and the trainer's evaluation rows. */
#include <math.h>

#include "trainer-private.h"

#define CAML_EVAL_CHUNK   1024

static int
argmax (const float *v, size_t n)
{
  size_t best = 0;
  for (size_t i = 1; i < n; i++)
    if (v[i] > v[best])
      best = i;
  return (int) best;
}

/* Samples per forward pass of caml_evaluate: chunks small enough that the
 * layers' outputs stay within ~16 MB (a text model's (T, D) sequences are
 * large per sample; a layer's own caches add as much again), yet large
 * enough to give every thread its share. */
int
caml_trainer_eval_chunk (const CamlModel *model, const CamlShape *x_shape)
{
  size_t per_sample = caml_shape_size (x_shape);
  for (int i = 0; i < model->n_layers; i++)
    per_sample += caml_shape_size (&model->layers[i]->out);
  return (int) CLAMP ((4u << 20) / MAX (per_sample, 1), 1, CAML_EVAL_CHUNK);
}

/* caml_evaluate with `buf` for the rows of a chunk of a set that holds no x
 * (text): at least MIN (caml_trainer_eval_chunk, set->n) × x_size floats. */
void
caml_trainer_evaluate_with (CamlModel *model, CamlLossKind loss, const CamlDataset *set,
                            float *buf,
                            double *mean_loss, double *metric)
{
  double loss_sum = 0.0, metric_sum = 0.0;
  size_t d = caml_shape_size (caml_model_output_shape (model));
  int yw = set->y_width;
  gboolean classification = set->n_classes > 0;

  if (set->n <= 0 || d == 0)
    {
      if (mean_loss)
        *mean_loss = NAN;
      if (metric)
        *metric = NAN;
      return;
    }

  int chunk = caml_trainer_eval_chunk (model, &set->x_shape);
  g_assert (set->x != NULL || buf != NULL);

  for (int start = 0; start < set->n; start += chunk)
    {
      int n = MIN (chunk, set->n - start);
      const float *x = caml_dataset_rows (set, start, n, buf);  /* (n, x_shape) */
      const float *y = set->y + (size_t) start * yw;      /* (n, yw) */
      const float *pred = caml_model_forward (model, x, n); /* (n, d) */

      loss_sum += (double) caml_loss_compute (loss, NULL, pred, y, n, (int) d) * n;

      for (int i = 0; i < n; i++)
        {
          const float *p = pred + (size_t) i * d;
          const float *t = y + (size_t) i * yw;
          if (!classification)
            {
              /* Of the predictions: probabilities under sigmoid
               * cross-entropy, not its logits. */
              double se = 0.0;
              for (size_t j = 0; j < d && j < (size_t) yw; j++)
                {
                  float q = p[j];
                  caml_loss_predict (loss, &q, 1);
                  se += ((double) q - t[j]) * ((double) q - t[j]);
                }
              metric_sum += se / (double) d;
            }
          else
            {
              int label, guess;
              if (yw == 1)
                label = (int) t[0];
              else
                label = argmax (t, (size_t) yw);
              if (d == 1)  /* one output: a logit, or a probability under MSE */
                guess = p[0] > (loss == CAML_LOSS_MSE ? 0.5f : 0.0f);
              else
                guess = argmax (p, d);
              metric_sum += guess == label;
            }
        }
    }

  if (mean_loss)
    *mean_loss = loss_sum / set->n;
  if (metric)
    *metric = metric_sum / set->n;
}

void
caml_evaluate (CamlModel *model, CamlLossKind loss, const CamlDataset *set,
               double *mean_loss, double *metric)
{
  /* At most 4 Mi floats (caml_trainer_eval_chunk) unless one sample is larger. */
  size_t rows = (size_t) MIN (caml_trainer_eval_chunk (model, &set->x_shape), MAX (set->n, 1));
  float *buf = set->x == NULL ? g_new (float, rows * caml_shape_size (&set->x_shape)) : NULL;
  caml_trainer_evaluate_with (model, loss, set, buf, mean_loss, metric);
  g_free (buf);
}

/* Appends an evaluation row for the current step. Called with the lock held;
 * releases it while the model runs. */
void
caml_trainer_evaluate_locked (CamlTrainer *trainer)
{
  CamlEvalRow row = { 0 };
  long from = 0;
  double sum = 0.0;

  if (trainer->rows->len > 0)
    from = g_array_index (trainer->rows, CamlEvalRow, trainer->rows->len - 1).step;
  for (long i = from; i < (long) trainer->losses->len; i++)
    sum += g_array_index (trainer->losses, float, i);
  row.step = trainer->step;
  row.tokens = trainer->tokens;
  row.train_loss = (long) trainer->losses->len > from
                   ? sum / ((long) trainer->losses->len - from) : NAN;

  g_mutex_unlock (&trainer->lock);
  gint64 start = g_get_monotonic_time ();
  if (isnan (row.train_loss))  /* no step since the last row: measure it */
    caml_trainer_evaluate_with (trainer->model, trainer->loss, trainer->train, trainer->ebuf,
                                &row.train_loss, NULL);
  if (trainer->test != NULL)
    {
      /* The test figures are of the averaged weights, when averaging. */
      if (trainer->average != NULL)
        caml_average_swap (trainer->average, trainer->model);
      caml_trainer_evaluate_with (trainer->model, trainer->loss, trainer->test, trainer->ebuf,
                                  &row.test_loss, &row.test_metric);
      if (trainer->average != NULL)
        caml_average_swap (trainer->average, trainer->model);
    }
  else
    row.test_loss = row.test_metric = NAN;
  double spent = (g_get_monotonic_time () - start) / 1e6;
  g_mutex_lock (&trainer->lock);

  trainer->eval_seconds += spent;
  row.seconds = caml_trainer_seconds_locked (trainer);
  row.eval_seconds = trainer->eval_seconds;
  g_array_append_val (trainer->rows, row);
}
