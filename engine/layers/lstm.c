/* lstm.c — the LSTM cell exactly as Table 1 of the paper writes it (the
 * "vanilla" LSTM of Greff et al. 2016, with peepholes):
 *
 *   z_t = g(W_z x_t + R_z y_{t−1} + b_z)                     block input
 *   i_t = σ(W_i x_t + R_i y_{t−1} + p_i ⊙ c_{t−1} + b_i)     input gate
 *   f_t = σ(W_f x_t + R_f y_{t−1} + p_f ⊙ c_{t−1} + b_f)     forget gate
 *   c_t = z_t ⊙ i_t + c_{t−1} ⊙ f_t
 *   o_t = σ(W_o x_t + R_o y_{t−1} + p_o ⊙ c_t + b_o)         output gate
 *   y_t = h(c_t) ⊙ o_t
 *
 * with c_0 = y_0 = 0. Unlike the textbook form without peepholes, the gates
 * see the cell state through the vectors p_i, p_f (c_{t−1}) and p_o (c_t).
 * W (4U, D), R (4U, U) and b (4U) stack the blocks z, i, f, o; the input's
 * share of every step is one sgemm before the recurrence, then each step is
 * one sgemm over the running samples (rnn.c packs them). The baseline of
 * ca_rnn: the same keys units, return_sequences and emit. */
#include "layers.h"

enum { OPT_UNITS, OPT_SEQUENCES, OPT_EMIT, OPT_G, OPT_H };

static const CamlOptionSpec lstm_options[] = {
  [OPT_UNITS]     = { "units", CAML_OPT_INT, "width U of the cell state c_t and the output y_t",
                      1, 4096, 16, NULL },
  [OPT_SEQUENCES] = { "return_sequences", CAML_OPT_BOOL,
                      "output every step (T, U), zeros after each length, instead of the last",
                      0, 1, 0, NULL },
  [OPT_EMIT]      = { "emit", CAML_OPT_ENUM, "what the layer outputs: y_t (output) or c_t (cell)",
                      0, 0, CAML_RNN_EMIT_OUTPUT, caml_rnn_emit_names },
  [OPT_G]         = { "g", CAML_OPT_ENUM, "activation of the block input z_t",
                      0, 0, CAML_ACT_TANH, caml_activation_names },
  [OPT_H]         = { "h", CAML_OPT_ENUM, "activation of the cell state in y_t = h(c_t) ⊙ o_t",
                      0, 0, CAML_ACT_TANH, caml_activation_names },
};

enum { BLOCK_Z, BLOCK_I, BLOCK_F, BLOCK_O };

typedef struct {
  int            t, d, u, g;    /* steps, input width D, units U, G = 4U */
  gboolean       sequences;
  int            emit;
  CamlActivation act_g, act_h;
  CamlParam     *W, *R, *b;     /* (4U, D), (4U, U), (4U): blocks z, i, f, o */
  CamlParam     *p_i, *p_f, *p_o; /* (U) peepholes */
  CamlRnnPack    pack;
  size_t         cap;           /* samples the buffers hold (N·T rows) */
  float         *x;             /* (rows, D) packed input; dX in backward */
  float         *P;             /* (rows, 4U) pre-activations, then z, i, f, o */
  float         *dP;            /* (rows, 4U) */
  float         *c, *cprev;     /* (rows, U) */
  float         *hc;            /* (rows, U) h(c_t) */
  float         *y, *yprev;     /* (rows, U) */
  float         *dc, *dy;       /* (rows, U) */
} Lstm;

static gboolean
lstm_setup (CamlLayer *layer, GError **error)
{
  if (!caml_rnn_check_input (layer, error))
    return FALSE;
  Lstm *s = g_new0 (Lstm, 1);
  s->t = layer->in.dims[0];
  s->d = layer->in.dims[1];
  s->u = (int) layer->opt[OPT_UNITS];
  s->g = 4 * s->u;
  s->sequences = layer->opt[OPT_SEQUENCES] != 0.0;
  s->emit = (int) layer->opt[OPT_EMIT];
  s->act_g = (CamlActivation) layer->opt[OPT_G];
  s->act_h = (CamlActivation) layer->opt[OPT_H];
  int d = s->d, u = s->u, g = s->g;
  s->W = caml_layer_add_param (layer, "W", CAML_GROUP_ALWAYS, CAML_INIT_GLOROT, d, u,
                               (size_t) g * d);
  s->R = caml_layer_add_param (layer, "R", CAML_GROUP_ALWAYS, CAML_INIT_GLOROT, u, u,
                               (size_t) g * u);
  s->b = caml_layer_add_param (layer, "b", CAML_GROUP_ALWAYS, CAML_INIT_ZERO, 1, u, g);
  s->p_i = caml_layer_add_param (layer, "p_i", CAML_GROUP_ALWAYS, CAML_INIT_SMALL, u, u, u);
  s->p_f = caml_layer_add_param (layer, "p_f", CAML_GROUP_ALWAYS, CAML_INIT_SMALL, u, u, u);
  s->p_o = caml_layer_add_param (layer, "p_o", CAML_GROUP_ALWAYS, CAML_INIT_SMALL, u, u, u);
  layer->out = s->sequences ? caml_shape_sequence (s->t, u) : caml_shape_flat (u);
  layer->state = s;
  return TRUE;
}

static void
release_buffers (Lstm *s)
{
  float **const units[] = { &s->c, &s->cprev, &s->hc, &s->y, &s->yprev, &s->dc, &s->dy };
  caml_rnn_release (&s->pack, units, G_N_ELEMENTS (units), &s->x, &s->P, &s->dP);
  s->cap = 0;
}

/* The packed buffers and the pack for batches of up to n samples (at least
 * one: an empty batch still reads the pack). */
static gboolean
lstm_reserve (CamlLayer *layer, int n, gboolean allocate, size_t *bytes)
{
  Lstm *s = layer->state;
  n = MAX (n, 1);
  CamlScratch sc = { .allocate = allocate && (size_t) n > s->cap, .bytes = *bytes };
  float **const units[] = { &s->c, &s->cprev, &s->hc, &s->y, &s->yprev, &s->dc, &s->dy };
  caml_rnn_reserve (&sc, &s->pack, n, s->t, units, G_N_ELEMENTS (units), s->u, &s->x, s->d,
                    &s->P, &s->dP, s->g);
  *bytes = sc.bytes;
  if (sc.failed)
    {
      release_buffers (s);
      return FALSE;
    }
  if (sc.allocate)
    s->cap = n;
  return TRUE;
}

/* Rows of one step: the gates and c_t, h(c_t), y_t from the pre-activations. */
static void
step_forward (const Lstm *s, float *P, float *c, float *hc, float *y, const float *cprev, int m)
{
  int u = s->u, g = s->g;
  const float *pi = s->p_i->w, *pf = s->p_f->w, *po = s->p_o->w;
  for (int r = 0; r < m; r++)
    {
      float *row = P + (size_t) r * g;
      float *z = row + BLOCK_Z * u, *in = row + BLOCK_I * u;
      float *f = row + BLOCK_F * u, *o = row + BLOCK_O * u;
      const float *cp = cprev + (size_t) r * u;
      float *cr = c + (size_t) r * u, *hr = hc + (size_t) r * u, *yr = y + (size_t) r * u;
      for (int j = 0; j < u; j++)
        {
          in[j] += pi[j] * cp[j];
          f[j] += pf[j] * cp[j];
        }
      caml_activation_forward (s->act_g, z, z, u);
      caml_activation_forward (CAML_ACT_SIGMOID, in, in, 2 * u);   /* i and f */
      for (int j = 0; j < u; j++)
        {
          cr[j] = z[j] * in[j] + cp[j] * f[j];
          o[j] += po[j] * cr[j];
        }
      caml_activation_forward (CAML_ACT_SIGMOID, o, o, u);
      caml_activation_forward (s->act_h, hr, cr, u);
      for (int j = 0; j < u; j++)
        yr[j] = hr[j] * o[j];
    }
}

static void
lstm_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  Lstm *s = layer->state;
  CamlRnnPack *p = &s->pack;
  int u = s->u, g = s->g;
  caml_scratch_require (layer, n);
  caml_rnn_pack_set (p, layer->lengths, n, s->t);

  if (p->rows > 0)
    {
      caml_rnn_gather (p, s->x, inp, s->d);
      caml_linear_forward (s->P, s->x, s->W->w, s->b->w, p->rows, s->d, g);
      memset (s->yprev, 0, (size_t) p->active[0] * u * sizeof (float));
      memset (s->cprev, 0, (size_t) p->active[0] * u * sizeof (float));
    }
  for (int t = 0; t < p->steps; t++)
    {
      int m = p->active[t];
      size_t o = p->offset[t];
      float *P = s->P + o * g;
      if (t > 0)   /* y_0 = 0 */
        caml_sgemm (CblasNoTrans, CblasTrans, m, g, u, 1.0f, s->yprev + o * u, u, s->R->w, u,
                    1.0f, P, g);
      step_forward (s, P, s->c + o * u, s->hc + o * u, s->y + o * u, s->cprev + o * u, m);
      caml_rnn_shift_prev (p, s->yprev, s->y, t, u);
      caml_rnn_shift_prev (p, s->cprev, s->c, t, u);
    }
  caml_rnn_emit (p, out, s->emit == CAML_RNN_EMIT_CELL ? s->c : s->y, u, s->sequences);
}

/* Rows of one step, from dy and dc (dc is completed here with what flows
 * through y_t and o_t): dP, the peepholes' gradients, and dc_{t−1} += … when
 * dcprev is non-NULL. */
static void
step_backward (const Lstm *s, float *dP, const float *P, const float *dy, float *dc,
               const float *c, const float *hc, const float *cprev, float *dcprev, int m)
{
  int u = s->u, g = s->g;
  const float *pi = s->p_i->w, *pf = s->p_f->w, *po = s->p_o->w;
  float *dpi = s->p_i->dw, *dpf = s->p_f->dw, *dpo = s->p_o->dw;
  for (int r = 0; r < m; r++)
    {
      const float *row = P + (size_t) r * g;
      const float *z = row + BLOCK_Z * u, *in = row + BLOCK_I * u;
      const float *f = row + BLOCK_F * u, *o = row + BLOCK_O * u;
      float *drow = dP + (size_t) r * g;
      float *dz = drow + BLOCK_Z * u, *din = drow + BLOCK_I * u;
      float *df = drow + BLOCK_F * u, *dout = drow + BLOCK_O * u;
      size_t k = (size_t) r * u;
      const float *dyr = dy + k, *cr = c + k, *hr = hc + k, *cp = cprev + k;
      float *dcr = dc + k;

      /* y = h(c) ⊙ o */
      for (int j = 0; j < u; j++)
        {
          dout[j] = dyr[j] * hr[j];
          dz[j] = dyr[j] * o[j];       /* scratch: d h(c) */
        }
      caml_activation_backward (CAML_ACT_SIGMOID, dout, dout, o, u, FALSE);
      caml_activation_backward (s->act_h, dcr, dz, hr, u, TRUE);
      /* c = z ⊙ i + c_{t−1} ⊙ f, and o saw c through p_o */
      for (int j = 0; j < u; j++)
        {
          float d = dcr[j] += dout[j] * po[j];
          dpo[j] += dout[j] * cr[j];
          dz[j] = d * in[j];
          din[j] = d * z[j];
          df[j] = d * cp[j];
        }
      caml_activation_backward (s->act_g, dz, dz, z, u, FALSE);
      caml_activation_backward (CAML_ACT_SIGMOID, din, din, in, 2 * u, FALSE);  /* i and f */
      for (int j = 0; j < u; j++)
        {
          dpi[j] += din[j] * cp[j];
          dpf[j] += df[j] * cp[j];
        }
      if (dcprev != NULL)
        {
          float *dcp = dcprev + k;
          for (int j = 0; j < u; j++)
            dcp[j] += dcr[j] * f[j] + din[j] * pi[j] + df[j] * pf[j];
        }
    }
}

static void
lstm_backward (CamlLayer *layer, float *dinp, const float *dout,
               const float *inp, const float *out, int n)
{
  (void) inp; (void) out; (void) n;
  Lstm *s = layer->state;
  const CamlRnnPack *p = &s->pack;
  int u = s->u, g = s->g, rows = p->rows;
  if (rows == 0)
    {
      if (dinp != NULL)
        memset (dinp, 0, (size_t) p->n * s->t * s->d * sizeof (float));
      return;
    }
  size_t state_size = (size_t) rows * u * sizeof (float);
  if (s->emit == CAML_RNN_EMIT_CELL)
    {
      caml_rnn_emit_backward (p, s->dc, dout, u, s->sequences);
      memset (s->dy, 0, state_size);
    }
  else
    {
      caml_rnn_emit_backward (p, s->dy, dout, u, s->sequences);
      memset (s->dc, 0, state_size);
    }

  for (int t = p->steps - 1; t >= 0; t--)
    {
      int m = p->active[t];
      size_t o = p->offset[t];
      float *dP = s->dP + o * g;
      float *dcprev = t > 0 ? s->dc + (size_t) p->offset[t - 1] * u : NULL;
      step_backward (s, dP, s->P + o * g, s->dy + o * u, s->dc + o * u, s->c + o * u,
                     s->hc + o * u, s->cprev + o * u, dcprev, m);
      if (t > 0)   /* dy_{t−1} += dP R */
        caml_sgemm (CblasNoTrans, CblasNoTrans, m, u, g, 1.0f, dP, g, s->R->w, u, 1.0f,
                    s->dy + (size_t) p->offset[t - 1] * u, u);
    }

  /* dW += dPᵀ X, dR += dPᵀ Y_{t−1}, db += Σ dP over every step at once. */
  caml_linear_backward (NULL, s->W->dw, s->b->dw, s->dP, s->x, s->W->w, rows, s->d, g, FALSE);
  caml_sgemm (CblasTrans, CblasNoTrans, g, u, rows, 1.0f, s->dP, g, s->yprev, u, 1.0f,
              s->R->dw, u);
  if (dinp != NULL)
    {
      caml_sgemm (CblasNoTrans, CblasNoTrans, rows, s->d, g, 1.0f, s->dP, g, s->W->w, s->d,
                  0.0f, s->x, s->d);
      caml_rnn_scatter (p, dinp, s->x, s->d);
    }
}

static void
lstm_free (CamlLayer *layer)
{
  Lstm *s = layer->state;
  release_buffers (s);
  g_free (s);
}

const CamlLayerOps caml_lstm_ops = {
  .name = "lstm",
  .title = "LSTM",
  .description = "LSTM cell with peepholes as in Table 1 of the paper (CA-RNN's baseline)",
  .options = lstm_options,
  .n_options = G_N_ELEMENTS (lstm_options),
  .accepts = CAML_ACCEPTS (CAML_SHAPE_SEQUENCE),
  .reads_order = TRUE,
  .setup = lstm_setup,
  .forward = lstm_forward,
  .backward = lstm_backward,
  .free = lstm_free,
  .reserve = lstm_reserve,
};
