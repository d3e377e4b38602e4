/* average.c — the exponential moving average of a model's weights (see
 * average.h for the definition and the lazy rows of token tables). */
#include <math.h>
#include <string.h>

#include "average.h"

struct _CamlAverage {
  double  decay;
  long    ramp_end;     /* d_t = (1 + t) / (10 + t) for t < ramp_end, then decay */
  size_t  n;            /* weights */
  float  *e;            /* (n) the average */
  gboolean lazy;        /* token tables' rows are brought up to date lazily */
  int     rows;         /* token ids covered by stamp */
  gint32 *stamp;        /* (rows) updates the id's rows of e are up to date with */
  double *ramp_log;     /* (n_ramp_log) L(m) for m < n_ramp_log, computed once */
  long    n_ramp_log;
  long    t;            /* updates done */
};

/* L(t) = Σ_{k=1..t} log d_k. Over the ramp the product telescopes:
 * Π_{k=1..m} (1 + k) / (10 + k) = Γ(m + 2) Γ(11) / (Γ(2) Γ(m + 11)). */
static double
log_decay_sum (const CamlAverage *avg, long t)
{
  long m = MIN (t, avg->ramp_end - 1);
  double sum;
  if (m < avg->n_ramp_log)
    sum = avg->ramp_log[MAX (m, 0)];
  else
    sum = lgamma (m + 2.0) - lgamma (m + 11.0) + lgamma (11.0);
  if (t > m)
    sum += (double) (t - MAX (m, 0)) * log (avg->decay);
  return sum;
}

/* The first k ≥ 1 with (1 + k) / (10 + k) ≥ decay, the ratio computed in
 * double as caml_average_decay_at does. Up to 2^52 both k + 1 and k + 10 are
 * exact, so the computed ratio never decreases with k and the first such k
 * is found by bisection, in at most 52 halvings for any decay. (Stepping k
 * by one from the estimate (10 decay − 1) / (1 − decay) never ended past
 * 2^53, where k − 1 rounds back to k: decay 0.9999999999999999 hung.) A
 * decay the ratio has not reached by 2^52 — within 2e-15 of 1 — ends the
 * ramp there, longer than any run. */
long
caml_average_ramp_end (double decay)
{
  long lo = 1, hi = CAML_AVERAGE_RAMP_MAX;
  while (lo < hi)
    {
      long k = lo + (hi - lo) / 2;
      if ((1.0 + k) / (10.0 + k) >= decay)
        hi = k;
      else
        lo = k + 1;
    }
  return lo;
}

double
caml_average_decay_at (const CamlAverage *avg, long t)
{
  return t < avg->ramp_end ? (1.0 + t) / (10.0 + t) : avg->decay;
}

CamlAverage *
caml_average_new (const CamlModel *model, double decay, gboolean sparse)
{
  g_return_val_if_fail (decay > 0.0 && decay < 1.0, NULL);
  CamlAverage *avg = g_new0 (CamlAverage, 1);
  avg->decay = decay;
  avg->ramp_end = caml_average_ramp_end (decay);
  /* A table of L over the ramp (its first 2^20 steps at most): catching up
   * every row of a large vocabulary then costs one exp per row. */
  avg->n_ramp_log = MIN (avg->ramp_end, 1L << 20);
  avg->ramp_log = g_new (double, avg->n_ramp_log);
  avg->ramp_log[0] = 0.0;
  for (long m = 1; m < avg->n_ramp_log; m++)
    avg->ramp_log[m] = avg->ramp_log[m - 1] + log ((1.0 + m) / (10.0 + m));
  avg->n = model->n_weights;
  avg->e = g_memdup2 (model->w, MAX (avg->n, 1) * sizeof (float));
  avg->lazy = sparse && model->sparse_grads && model->input.kind == CAML_SHAPE_TOKENS;
  if (avg->lazy)
    {
      for (int i = 0; i < model->n_layers; i++)
        for (int j = 0; j < model->layers[i]->n_params; j++)
          {
            const CamlParam *p = &model->layers[i]->params[j];
            if (p->token_rows > 0)
              avg->rows = MAX (avg->rows, (int) (p->count / (size_t) p->token_rows));
          }
      avg->stamp = g_new0 (gint32, MAX (avg->rows, 1));
    }
  return avg;
}

void
caml_average_free (CamlAverage *avg)
{
  if (avg == NULL)
    return;
  g_free (avg->e);
  g_free (avg->stamp);
  g_free (avg->ramp_log);
  g_free (avg);
}

/* Token id `id`'s rows of e, up to date with s updates, brought to t while
 * the weights did not change: e = w + (Π_{k=s+1..t} d_k)(e − w). lt is
 * L(t); *memo caches L(s) for the s of the previous call. */
typedef struct { long s; double ls; } Memo;

static void
catch_up (CamlAverage *avg, const CamlModel *model, int id, long t, double lt, Memo *memo)
{
  long s = avg->stamp[id];
  if (s >= t)
    return;
  if (memo->s != s)
    *memo = (Memo) { s, log_decay_sum (avg, s) };
  float f = (float) exp (lt - memo->ls);
  for (int i = 0; i < model->n_layers; i++)
    for (int j = 0; j < model->layers[i]->n_params; j++)
      {
        const CamlParam *p = &model->layers[i]->params[j];
        if (p->token_rows <= 0 || (size_t) id >= p->count / (size_t) p->token_rows)
          continue;
        size_t at = p->offset + (size_t) id * p->token_rows;
        for (int k = 0; k < p->token_rows; k++)
          avg->e[at + k] = model->w[at + k] + f * (avg->e[at + k] - model->w[at + k]);
      }
  avg->stamp[id] = (gint32) t;
}

static void
blend (float *e, const float *w, size_t n, float d)
{
  for (size_t i = 0; i < n; i++)
    e[i] = d * e[i] + (1.0f - d) * w[i];
}

void
caml_average_prepare (CamlAverage *avg, const CamlModel *model, long step)
{
  if (!avg->lazy)
    return;
  double lt = log_decay_sum (avg, step);
  Memo memo = { -1, 0.0 };
  for (int k = 0; k < model->n_touched; k++)
    if (model->touched[k] < avg->rows)
      catch_up (avg, model, model->touched[k], step, lt, &memo);
}

void
caml_average_update (CamlAverage *avg, const CamlModel *model, long step)
{
  long t = step + 1;
  float d = (float) caml_average_decay_at (avg, t);
  avg->t = t;
  if (!avg->lazy)
    {
      blend (avg->e, model->w, avg->n, d);
      return;
    }
  for (int i = 0; i < model->n_layers; i++)
    for (int j = 0; j < model->layers[i]->n_params; j++)
      {
        const CamlParam *p = &model->layers[i]->params[j];
        if (p->token_rows <= 0)
          {
            blend (avg->e + p->offset, model->w + p->offset, p->count, d);
            continue;
          }
        size_t rows = p->count / (size_t) p->token_rows;
        for (int k = 0; k < model->n_touched; k++)
          if ((size_t) model->touched[k] < rows)
            {
              size_t at = p->offset + (size_t) model->touched[k] * p->token_rows;
              blend (avg->e + at, model->w + at, (size_t) p->token_rows, d);
            }
      }
  for (int k = 0; k < model->n_touched; k++)
    if (model->touched[k] < avg->rows)
      avg->stamp[model->touched[k]] = (gint32) t;
}

/* Every row up to date with the updates done. */
static void
bring_up_to_date (CamlAverage *avg, const CamlModel *model)
{
  if (!avg->lazy)
    return;
  double lt = log_decay_sum (avg, avg->t);
  Memo memo = { -1, 0.0 };
  for (int id = 0; id < avg->rows; id++)
    catch_up (avg, model, id, avg->t, lt, &memo);
}

void
caml_average_swap (CamlAverage *avg, CamlModel *model)
{
  g_assert (model->n_weights == avg->n);
  bring_up_to_date (avg, model);
  for (size_t i = 0; i < avg->n; i++)
    {
      float w = model->w[i];
      model->w[i] = avg->e[i];
      avg->e[i] = w;
    }
}

void
caml_average_install (CamlAverage *avg, CamlModel *model)
{
  g_assert (model->n_weights == avg->n);
  bring_up_to_date (avg, model);
  memcpy (model->w, avg->e, avg->n * sizeof (float));
}
