/* rnn.c — what the recurrent layers (ca_rnn.c, lstm.c, gru.c) share: a batch
 * of ragged sequences packed time-major, longest first.
 *
 * With the samples ranked by length (longest first), the samples still
 * running at step t are ranks 0 … active[t] − 1, a prefix. Their rows at step
 * t are packed rows offset[t] … offset[t] + active[t] − 1, in rank order, so
 * one step is one block of rows, its previous step's first active[t] rows are
 * the same samples in the same order, and a cell's products over the N
 * samples of a step are one sgemm over that block. Rows after a sample's
 * length are never stored: padding cannot reach the output. */
#include "layers.h"

void
caml_rnn_pack_set (CamlRnnPack *p, const int *lengths, int n, int t_max)
{
  p->n = n;
  p->t_max = t_max;

  /* A counting sort on length, longest first, stable on sample index. */
  memset (p->active, 0, (t_max + 1) * sizeof (int));
  for (int i = 0; i < n; i++)
    {
      int len = lengths != NULL ? CLAMP (lengths[i], 0, t_max) : t_max;
      p->length[i] = len;
      p->active[len]++;            /* for now: how many samples have this length */
    }
  int next = 0;
  for (int len = t_max; len >= 0; len--)
    {
      int count = p->active[len];
      p->active[len] = next;       /* first rank of this length */
      next += count;
    }
  for (int i = 0; i < n; i++)
    {
      int k = p->active[p->length[i]]++;
      p->order[k] = i;
      p->rank[i] = k;
    }
  /* active[t] = samples longer than t; offset[t] = rows of steps before t. */
  p->steps = 0;
  for (int t = 0, k = n; t < t_max; t++)
    {
      while (k > 0 && p->length[p->order[k - 1]] <= t)
        k--;
      p->active[t] = k;
      if (k > 0)
        p->steps = t + 1;
    }
  p->offset[0] = 0;
  for (int t = 0; t < t_max; t++)
    p->offset[t + 1] = p->offset[t] + p->active[t];
  p->rows = p->offset[p->steps];
}

void
caml_rnn_reserve (CamlScratch *sc, CamlRnnPack *p, int n, int t_max,
                  float **const units[], gsize n_units, int u,
                  float **x, int d, float **P, float **dP, int g)
{
  /* The packed rows are Σ lengths: a batch of full-length samples fills
   * n·t_max of them. */
  size_t rows = caml_scratch_rows (n, t_max);
  caml_scratch_floats (sc, x, NULL, rows, d);
  caml_scratch_floats (sc, P, NULL, rows, g);
  caml_scratch_floats (sc, dP, NULL, rows, g);
  for (gsize i = 0; i < n_units; i++)
    caml_scratch_floats (sc, units[i], NULL, rows, u);
  caml_scratch_ints (sc, &p->order, NULL, n, 1);
  caml_scratch_ints (sc, &p->rank, NULL, n, 1);
  caml_scratch_ints (sc, &p->length, NULL, n, 1);
  caml_scratch_ints (sc, &p->active, NULL, (size_t) t_max + 1, 1);
  caml_scratch_ints (sc, &p->offset, NULL, (size_t) t_max + 1, 1);
}

void
caml_rnn_release (CamlRnnPack *p, float **const units[], gsize n_units,
                  float **x, float **P, float **dP)
{
  g_clear_pointer (x, g_free);
  g_clear_pointer (P, g_free);
  g_clear_pointer (dP, g_free);
  for (gsize i = 0; i < n_units; i++)
    g_clear_pointer (units[i], g_free);
  g_free (p->order);
  g_free (p->rank);
  g_free (p->length);
  g_free (p->active);
  g_free (p->offset);
  memset (p, 0, sizeof *p);
}

void
caml_rnn_gather (const CamlRnnPack *p, float *packed, const float *seq, int d)
{
  for (int t = 0; t < p->steps; t++)
    for (int k = 0; k < p->active[t]; k++)
      memcpy (packed + (size_t) (p->offset[t] + k) * d,
              seq + ((size_t) p->order[k] * p->t_max + t) * d, d * sizeof (float));
}

void
caml_rnn_scatter (const CamlRnnPack *p, float *seq, const float *packed, int d)
{
  for (int i = 0; i < p->n; i++)
    {
      float *row = seq + (size_t) i * p->t_max * d;   /* (T, d) */
      int len = p->length[i], k = p->rank[i];
      for (int t = 0; t < len; t++)
        memcpy (row + (size_t) t * d, packed + (size_t) (p->offset[t] + k) * d,
                d * sizeof (float));
      memset (row + (size_t) len * d, 0, (size_t) (p->t_max - len) * d * sizeof (float));
    }
}

void
caml_rnn_gather_last (const CamlRnnPack *p, float *out, const float *packed, int d)
{
  for (int i = 0; i < p->n; i++)
    {
      int len = p->length[i];
      if (len == 0)
        memset (out + (size_t) i * d, 0, d * sizeof (float));
      else
        memcpy (out + (size_t) i * d,
                packed + (size_t) (p->offset[len - 1] + p->rank[i]) * d, d * sizeof (float));
    }
}

void
caml_rnn_add_last (const CamlRnnPack *p, float *dpacked, const float *dout, int d)
{
  for (int i = 0; i < p->n; i++)
    {
      int len = p->length[i];
      if (len == 0)
        continue;
      float *row = dpacked + (size_t) (p->offset[len - 1] + p->rank[i]) * d;
      const float *g = dout + (size_t) i * d;
      for (int j = 0; j < d; j++)
        row[j] += g[j];
    }
}

void
caml_rnn_emit (const CamlRnnPack *p, float *out, const float *packed, int d,
               gboolean sequences)
{
  if (sequences)
    caml_rnn_scatter (p, out, packed, d);
  else
    caml_rnn_gather_last (p, out, packed, d);
}

void
caml_rnn_emit_backward (const CamlRnnPack *p, float *dpacked, const float *dout, int d,
                        gboolean sequences)
{
  if (sequences)
    caml_rnn_gather (p, dpacked, dout, d);
  else
    {
      memset (dpacked, 0, (size_t) p->rows * d * sizeof (float));
      caml_rnn_add_last (p, dpacked, dout, d);
    }
}

void
caml_rnn_chi (const CamlRnnPack *p, float *chi, const float *packed, int stride)
{
  for (int i = 0; i < p->n; i++)
    for (int t = 0; t < p->t_max; t++)
      chi[(size_t) i * p->t_max + t] =
        t < p->length[i] ? packed[(size_t) (p->offset[t] + p->rank[i]) * stride] : 0.0f;
}

void
caml_rnn_shift_prev (const CamlRnnPack *p, float *prev, const float *cur, int t, int d)
{
  if (t + 1 < p->steps)
    memcpy (prev + (size_t) p->offset[t + 1] * d, cur + (size_t) p->offset[t] * d,
            (size_t) p->active[t + 1] * d * sizeof (float));
}

gboolean
caml_rnn_check_input (const CamlLayer *layer, GError **error)
{
  if (layer->in.kind != CAML_SHAPE_SEQUENCE || layer->in.ndim != 2)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                   "a recurrent layer takes a sequence (T, D), from an embedding layer");
      return FALSE;
    }
  return TRUE;
}

const char *const caml_rnn_emit_names[] = { "output", "cell", NULL };
