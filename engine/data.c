/* data.c — data sets in memory, and the paper's built-in data. */
#include <math.h>

#include "caml-private.h"
#include "parallel.h"
#include "shuffle.h"
#include "vectorize.h"

CamlDataset *
caml_dataset_new (int n, const CamlShape *x_shape, int y_width, int n_classes)
{
  CamlDataset *set = g_new0 (CamlDataset, 1);
  set->n = n;
  set->x_shape = *x_shape;
  set->y_width = y_width;
  set->n_classes = n_classes;
  if (x_shape->kind != CAML_SHAPE_TOKENS)   /* text sets fill tokens, offsets */
    set->x = g_new0 (float, MAX ((size_t) n * caml_shape_size (x_shape), 1));
  set->y = g_new0 (float, MAX ((size_t) n * y_width, 1));
  return set;
}

CamlDataset *
caml_dataset_new_images (int n, const CamlShape *x_shape, int y_width, int n_classes)
{
  CamlDataset *set = g_new0 (CamlDataset, 1);
  set->n = n;
  set->x_shape = *x_shape;
  set->y_width = y_width;
  set->n_classes = n_classes;
  set->pixels = g_new0 (guint8, MAX ((size_t) n * caml_shape_size (x_shape), 1));
  set->y = g_new0 (float, MAX ((size_t) n * y_width, 1));
  return set;
}

void
caml_dataset_free (CamlDataset *set)
{
  if (set == NULL)
    return;
  g_free (set->x);
  g_free (set->pixels);
  g_free (set->y);
  g_free (set->tokens);
  g_free (set->offsets);
  g_clear_pointer (&set->vocab, caml_vocab_unref);
  if (set->texts != NULL)
    g_strfreev (set->texts);
  g_free (set->source);
  g_free (set->lines);
  g_free (set);
}

char *
caml_dataset_sample_place (const CamlDataset *set, int i, const char *name)
{
  if (set->source != NULL && set->lines != NULL && i >= 0 && i < set->n)
    return g_strdup_printf ("%s:%d", set->source, (int) set->lines[i]);
  return g_strdup_printf ("the %s's sample %d", name, i);
}

int
caml_dataset_length (const CamlDataset *set, int i)
{
  if (set->offsets == NULL)
    return set->x_shape.kind == CAML_SHAPE_SEQUENCE ? set->x_shape.dims[0] : 1;
  return (int) (set->offsets[i + 1] - set->offsets[i]);
}

/* Sample i's ids into row (T), padded or truncated. */
static void
pad_tokens (const CamlDataset *set, int i, float *row)
{
  int t_max = set->x_shape.dims[0];
  const gint32 *tok = set->tokens + set->offsets[i];
  int len = MIN (caml_dataset_length (set, i), t_max);
  for (int t = 0; t < len; t++)
    row[t] = (float) tok[t];
  for (int t = len; t < t_max; t++)
    row[t] = (float) CAML_TOKEN_PAD;
}

/* Bytes as pixel values, byte / 255: a division, as the IDX loader always
 * gave them (the same floats as before images kept bytes), vectorised. */
static CAML_VECTOR_LOOP void
byte_values (const guint8 *restrict src, float *restrict dst, size_t n)
{
  for (size_t k = 0; k < n; k++)
    dst[k] = (float) src[k] / 255.0f;
}

/* Sample i's pixels as their values. */
static void
pixel_values (const CamlDataset *set, int i, float *row)
{
  size_t dx = caml_shape_size (&set->x_shape);
  byte_values (set->pixels + (size_t) i * dx, row, dx);
}

/* Floats of a batch below which gathering stays on one thread. */
#define GATHER_GRAIN 16384

typedef struct {
  const CamlDataset *set;
  const int         *idx;
  int                n;
  float             *x, *y;
} Gather;

static void
gather_part (int part, int parts, gpointer data)
{
  const Gather *g = data;
  const CamlDataset *set = g->set;
  size_t dx = caml_shape_size (&set->x_shape), dy = set->y_width;
  size_t lo, hi;
  caml_part_range (g->n, part, parts, 1, &lo, &hi);
  for (size_t i = lo; i < hi; i++)
    {
      if (set->x != NULL)
        memcpy (g->x + i * dx, set->x + (size_t) g->idx[i] * dx, dx * sizeof (float));
      else if (set->pixels != NULL)
        pixel_values (set, g->idx[i], g->x + i * dx);
      else
        pad_tokens (set, g->idx[i], g->x + i * dx);
      memcpy (g->y + i * dy, set->y + (size_t) g->idx[i] * dy, dy * sizeof (float));
    }
}

/* Samples go to parts whole: a batch's rows are copied (or converted from
 * bytes) on every thread at once. */
void
caml_dataset_gather (const CamlDataset *set, const int *idx, int n, float *x, float *y)
{
  Gather g = { set, idx, n, x, y };
  size_t floats = (size_t) MAX (n, 0) * caml_shape_size (&set->x_shape);
  caml_parallel_for (MIN (caml_parallel_chunks (floats, GATHER_GRAIN), MAX (n, 1)), gather_part,
                     &g);
}

const float *
caml_dataset_rows (const CamlDataset *set, int start, int n, float *buf)
{
  size_t dx = caml_shape_size (&set->x_shape);
  if (set->x != NULL)
    return set->x + (size_t) start * dx;
  for (int i = 0; i < n; i++)
    if (set->pixels != NULL)
      pixel_values (set, start + i, buf + i * dx);
    else
      pad_tokens (set, start + i, buf + i * dx);
  return buf;
}

float *
caml_dataset_copy_rows (const CamlDataset *set, int start, int n)
{
  size_t count = (size_t) MAX (n, 0) * caml_shape_size (&set->x_shape);
  float *rows = g_new (float, MAX (count, 1));
  const float *got = caml_dataset_rows (set, start, n, rows);
  if (got != rows)
    memcpy (rows, got, count * sizeof (float));
  return rows;
}

/* Samples idx[0..n) of a text set as a new one over vocab (tokenized again
 * from the texts). */
static CamlDataset *
text_subset (const CamlDataset *set, const int *idx, int n, CamlVocab *vocab, gboolean grow)
{
  char **texts = g_new (char *, n + 1);
  float *y = g_new (float, MAX (n, 1));
  for (int i = 0; i < n; i++)
    {
      texts[i] = g_strdup (set->texts[idx[i]]);
      y[i] = set->y[idx[i]];
    }
  texts[n] = NULL;
  CamlDataset *sub = caml_text_dataset_from_texts (texts, y, n, set->n_classes, vocab, grow);
  g_free (y);
  if (set->source != NULL && set->lines != NULL)
    {
      sub->source = g_strdup (set->source);
      sub->lines = g_new (gint32, MAX (n, 1));
      for (int i = 0; i < n; i++)
        sub->lines[i] = set->lines[idx[i]];
    }
  return sub;
}

gboolean
caml_dataset_hold_out (const CamlDataset *set, double fraction, guint64 seed,
                       CamlDataset **rest, CamlDataset **held_out, GError **error)
{
  *rest = *held_out = NULL;
  if (!(fraction > 0.0 && fraction < 1.0))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "a held-out fraction of %g is not in (0, 1)", fraction);
      return FALSE;
    }
  if (set->n < 2)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "%d sample%s: too few to hold some out", set->n, set->n == 1 ? "" : "s");
      return FALSE;
    }
  gboolean text = set->x_shape.kind == CAML_SHAPE_TOKENS;
  if (text && set->texts == NULL)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "this text data set does not keep its texts: it cannot be split again");
      return FALSE;
    }

  int n_out = CLAMP ((int) ceil (fraction * set->n), 1, set->n - 1);
  int n_rest = set->n - n_out;
  int *order = g_new (int, set->n);
  for (int i = 0; i < set->n; i++)
    order[i] = i;
  guint64 state = seed;
  caml_shuffle_ints (order, set->n, &state);

  if (text)
    {
      CamlVocab *vocab = caml_vocab_new ();
      *rest = text_subset (set, order, n_rest, vocab, TRUE);
      *held_out = text_subset (set, order + n_rest, n_out, vocab, FALSE);
      caml_vocab_unref (vocab);
    }
  else
    {
      CamlDataset **parts[2] = { rest, held_out };
      const int counts[2] = { n_rest, n_out }, starts[2] = { 0, n_rest };
      size_t dx = caml_shape_size (&set->x_shape);
      for (int k = 0; k < 2; k++)
        {
          if (set->pixels == NULL)
            {
              *parts[k] = caml_dataset_new (counts[k], &set->x_shape, set->y_width,
                                            set->n_classes);
              caml_dataset_gather (set, order + starts[k], counts[k], (*parts[k])->x,
                                   (*parts[k])->y);
              continue;
            }
          /* images keep their bytes */
          CamlDataset *part = caml_dataset_new_images (counts[k], &set->x_shape,
                                                       set->y_width, set->n_classes);
          for (int i = 0; i < counts[k]; i++)
            {
              int from = order[starts[k] + i];
              memcpy (part->pixels + (size_t) i * dx, set->pixels + (size_t) from * dx, dx);
              memcpy (part->y + (size_t) i * set->y_width,
                      set->y + (size_t) from * set->y_width, set->y_width * sizeof (float));
            }
          *parts[k] = part;
        }
    }
  g_free (order);
  return TRUE;
}

void
caml_data_xor (CamlDataset **train, CamlDataset **test)
{
  static const float x[] = { 1, 0,  0, 1,  0, 0,  1, 1 };
  static const float y[] = { 1, 1, 0, 0 };
  CamlShape shape = caml_shape_flat (2);
  for (int k = 0; k < 2; k++)
    {
      CamlDataset *set = caml_dataset_new (4, &shape, 1, 0);
      memcpy (set->x, x, sizeof x);
      memcpy (set->y, y, sizeof y);
      *(k == 0 ? train : test) = set;
    }
}

double
caml_surface_function (double x, double y)
{
  return x * exp (-x * x - y * y);
}

void
caml_data_add_noise (CamlDataset *set, double sigma, guint64 seed)
{
  if (!(sigma > 0))
    return;
  /* 0x6e6f697365: "noise", so the stream differs from the split's. */
  guint32 seed_words[3] = { (guint32) seed, (guint32) (seed >> 32), 0x6f697365u };
  GRand *rng = g_rand_new_with_seed_array (seed_words, 3);
  size_t n = (size_t) set->n * set->y_width;
  for (size_t i = 0; i < n; i++)
    {
      /* Box–Muller: u1 in (0, 1], so the log is finite. */
      double u1 = 1.0 - g_rand_double (rng), u2 = g_rand_double (rng);
      set->y[i] += (float) (sigma * sqrt (-2.0 * log (u1)) * cos (2.0 * G_PI * u2));
    }
  g_rand_free (rng);
}

void
caml_data_surface (int grid, double train_fraction, guint64 seed,
                   CamlDataset **train, CamlDataset **test)
{
  int total = grid * grid;
  int n_train = CLAMP ((int) lround (train_fraction * total), 1, total - 1);

  /* A seeded permutation of the grid points: the first n_train train. */
  guint32 seed_words[2] = { (guint32) seed, (guint32) (seed >> 32) };
  GRand *rng = g_rand_new_with_seed_array (seed_words, 2);
  int *perm = g_new (int, total);
  for (int i = 0; i < total; i++)
    perm[i] = i;
  for (int i = total - 1; i > 0; i--)
    {
      int j = g_rand_int_range (rng, 0, i + 1);
      int t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
  g_rand_free (rng);

  CamlShape shape = caml_shape_flat (2);
  *train = caml_dataset_new (n_train, &shape, 1, 0);
  *test = caml_dataset_new (total - n_train, &shape, 1, 0);
  for (int i = 0; i < total; i++)
    {
      int p = perm[i];
      double x = -2.0 + 4.0 * (p % grid) / (grid - 1);
      double y = -2.0 + 4.0 * (p / grid) / (grid - 1);
      CamlDataset *set = i < n_train ? *train : *test;
      int row = i < n_train ? i : i - n_train;
      set->x[2 * row] = (float) x;
      set->x[2 * row + 1] = (float) y;
      set->y[row] = (float) caml_surface_function (x, y);
    }
  g_free (perm);
}
