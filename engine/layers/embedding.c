/* embedding.c — token ids to vectors: out[t] = E[id_t].
 *
 * Input (T) token ids with the vocabulary size in the shape, output (T, D).
 * Out-of-vocabulary ids give a zero vector, and steps after a sample's length
 * are zero. With `pretrained` the experiment copies its word vectors into E
 * after initialisation; with `trainable` off E is never updated. */
#include "layers.h"

enum { OPT_DIM, OPT_PRETRAINED, OPT_TRAINABLE };

static const CamlOptionSpec embedding_options[] = {
  [OPT_DIM]        = { "dim", CAML_OPT_INT, "vector width D", 1, 4096, 50, NULL },
  [OPT_PRETRAINED] = { "pretrained", CAML_OPT_BOOL,
                       "start from the experiment's word vectors (data.embeddings)",
                       0, 1, 0, NULL },
  [OPT_TRAINABLE]  = { "trainable", CAML_OPT_BOOL, "update the vectors while training",
                       0, 1, 1, NULL },
};

typedef struct {
  int        t, v, d;
  CamlParam *E;   /* (V, D) */
} Embedding;

static gboolean
embedding_setup (CamlLayer *layer, GError **error)
{
  (void) error;
  Embedding *s = g_new0 (Embedding, 1);
  s->t = layer->in.dims[0];
  s->v = MAX (layer->in.vocab, 1);
  s->d = (int) layer->opt[OPT_DIM];
  s->E = caml_layer_add_param (layer, "E",
                               layer->opt[OPT_TRAINABLE] != 0.0 ? CAML_GROUP_ALWAYS
                                                                : CAML_GROUP_FROZEN,
                               CAML_INIT_SMALL, 1, s->d, (size_t) s->v * s->d);
  s->E->token_rows = s->d;
  layer->out = caml_shape_sequence (s->t, s->d);
  layer->state = s;
  return TRUE;
}

void
caml_embedding_forward (float *out, const float *ids, const float *E, const int *lengths,
                        int n, int t_max, int v, int d)
{
  for (int i = 0; i < n; i++)
    {
      const float *row = ids + (size_t) i * t_max;        /* (T) */
      float *o = out + (size_t) i * t_max * d;            /* (T, D) */
      int len = lengths[i];
      for (int t = 0; t < len; t++)
        {
          int id = (int) row[t];
          if (id >= 0 && id < v)
            memcpy (o + (size_t) t * d, E + (size_t) id * d, d * sizeof (float));
          else
            memset (o + (size_t) t * d, 0, d * sizeof (float));
        }
      memset (o + (size_t) len * d, 0, (size_t) (t_max - len) * d * sizeof (float));
    }
}

void
caml_embedding_backward (float *dE, const float *dout, const float *ids, const int *lengths,
                         int n, int t_max, int v, int d)
{
  for (int i = 0; i < n; i++)
    {
      const float *row = ids + (size_t) i * t_max;
      const float *g = dout + (size_t) i * t_max * d;
      for (int t = 0; t < lengths[i]; t++)
        {
          int id = (int) row[t];
          if (id < 0 || id >= v)
            continue;
          float *de = dE + (size_t) id * d;
          for (int j = 0; j < d; j++)
            de[j] += g[(size_t) t * d + j];
        }
    }
}

static void
embedding_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  Embedding *s = layer->state;
  caml_embedding_forward (out, inp, s->E->w, layer->lengths, n, s->t, s->v, s->d);
}

static void
embedding_backward (CamlLayer *layer, float *dinp, const float *dout,
                    const float *inp, const float *out, int n)
{
  (void) dinp; (void) out;   /* ids have no gradient */
  Embedding *s = layer->state;
  if (s->E->group != CAML_GROUP_FROZEN)
    caml_embedding_backward (s->E->dw, dout, inp, layer->lengths, n, s->t, s->v, s->d);
}

static void
embedding_free (CamlLayer *layer)
{
  g_free (layer->state);
}

const CamlLayerOps caml_embedding_ops = {
  .name = "embedding",
  .title = "Embedding",
  .description = "Token ids to trained (or pre-trained) vectors, one per step",
  .options = embedding_options,
  .n_options = G_N_ELEMENTS (embedding_options),
  .accepts = CAML_ACCEPTS (CAML_SHAPE_TOKENS),
  .setup = embedding_setup,
  .forward = embedding_forward,
  .backward = embedding_backward,
  .free = embedding_free,
};
