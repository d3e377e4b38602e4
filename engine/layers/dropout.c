/* dropout.c — inverted dropout: while training, each value is kept with
 * probability 1 − rate and scaled by 1 / (1 − rate), else zeroed; outside
 * training it is the identity. The mask comes from the layer's own seeded
 * generator, so runs with the same seed are identical. */
#include "layers.h"

enum { OPT_RATE };

static const CamlOptionSpec dropout_options[] = {
  [OPT_RATE] = { "rate", CAML_OPT_FLOAT, "probability of zeroing a value while training",
                 0, 0.95, 0.5, NULL },
};

typedef struct {
  GRand  *rng;
  guint32 seed;      /* the generator's, to draw again from the start */
  float  *mask;      /* (N, ·) 0 or 1 / (1 − rate) of the last training pass */
  size_t  mask_cap;
  gboolean masked;   /* the last forward applied the mask */
} Dropout;

static gboolean
dropout_setup (CamlLayer *layer, GError **error)
{
  Dropout *s = g_new0 (Dropout, 1);
  s->seed = 0x64726f70;
  s->rng = g_rand_new_with_seed (s->seed);
  layer->out = layer->in;
  layer->state = s;
  return TRUE;
}

static void
dropout_seed (CamlLayer *layer, guint32 seed)
{
  Dropout *s = layer->state;
  s->seed = seed;
  g_rand_set_seed (s->rng, seed);
}

/* A training pass draws once per value (dropout_forward): samples × the
 * sample's size draws from the seed on, none at rate 0. */
static void
dropout_advance (CamlLayer *layer, guint64 samples)
{
  Dropout *s = layer->state;
  g_rand_set_seed (s->rng, s->seed);
  if (layer->opt[OPT_RATE] <= 0.0)
    return;
  guint64 draws = samples * caml_shape_size (&layer->in);
  for (guint64 i = 0; i < draws; i++)
    g_rand_int (s->rng);
}

/* The mask (N, ·) for training batches of up to n samples. */
static gboolean
dropout_reserve (CamlLayer *layer, int n, gboolean allocate, size_t *bytes)
{
  Dropout *s = layer->state;
  CamlScratch sc = { .allocate = allocate, .bytes = *bytes };
  caml_scratch_floats (&sc, &s->mask, &s->mask_cap, n, caml_shape_size (&layer->in));
  *bytes = sc.bytes;
  return !sc.failed;
}

static void
dropout_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  Dropout *s = layer->state;
  size_t count = (size_t) n * caml_shape_size (&layer->in);
  double rate = layer->opt[OPT_RATE];
  s->masked = layer->training && rate > 0.0;
  if (!s->masked)
    {
      memcpy (out, inp, count * sizeof (float));
      return;
    }
  caml_scratch_require (layer, n);
  float keep_scale = (float) (1.0 / (1.0 - rate));
  /* One 32-bit draw per value: the rate is exact to 2^-32. */
  guint32 threshold = (guint32) (rate * 4294967296.0);
  for (size_t i = 0; i < count; i++)
    s->mask[i] = g_rand_int (s->rng) >= threshold ? keep_scale : 0.0f;
  for (size_t i = 0; i < count; i++)
    out[i] = inp[i] * s->mask[i];
}

static void
dropout_backward (CamlLayer *layer, float *dinp, const float *dout,
                  const float *inp, const float *out, int n)
{
  Dropout *s = layer->state;
  if (dinp == NULL)
    return;
  size_t count = (size_t) n * caml_shape_size (&layer->in);
  if (!s->masked)
    memcpy (dinp, dout, count * sizeof (float));
  else
    for (size_t i = 0; i < count; i++)
      dinp[i] = dout[i] * s->mask[i];
}

static void
dropout_free (CamlLayer *layer)
{
  Dropout *s = layer->state;
  g_rand_free (s->rng);
  g_free (s->mask);
  g_free (s);
}

const CamlLayerOps caml_dropout_ops = {
  .name = "dropout",
  .title = "Dropout",
  .description = "Zeroes values at random while training (inverted dropout)",
  .options = dropout_options,
  .n_options = G_N_ELEMENTS (dropout_options),
  .setup = dropout_setup,
  .forward = dropout_forward,
  .backward = dropout_backward,
  .seed = dropout_seed,
  .advance = dropout_advance,
  .free = dropout_free,
  .reserve = dropout_reserve,
};
