/* gru.c — the GRU cell exactly as Table 1 of the paper writes it:
 *
 *   r_t = σ(W_r x_t + U_r c_{t−1})                  reset gate
 *   z_t = σ(W_z x_t + U_z c_{t−1})                  update gate
 *   c̄_t = tanh(W x_t + U (r_t ⊙ c_{t−1}))
 *   c_t = z_t ⊙ c_{t−1} + (1 − z_t) ⊙ c̄_t
 *   y_t = h(W_y c_t + b_y)
 *
 * with c_0 = 0. As in the table (and in Cho et al. 2014), the gates and c̄_t
 * have no biases, and the recurrence runs through c_t alone; unlike the
 * textbook GRU, whose output is the state itself, y_t is a dense layer of
 * c_t, computed only at the steps that are output. A sample of length 0
 * outputs zeros (its initial state), not h(b_y).
 *
 * W (3U, D) stacks W_r, W_z, W, and U_rz (2U, U) stacks U_r, U_z; the input's
 * share of every step is one sgemm before the recurrence (rnn.c packs the
 * running samples of a step into one block of rows). */
#include "layers.h"

enum { OPT_UNITS, OPT_SEQUENCES, OPT_EMIT, OPT_H };

static const CamlOptionSpec gru_options[] = {
  [OPT_UNITS]     = { "units", CAML_OPT_INT, "width U of the cell state c_t and the output y_t",
                      1, 4096, 16, NULL },
  [OPT_SEQUENCES] = { "return_sequences", CAML_OPT_BOOL,
                      "output every step (T, U), zeros after each length, instead of the last",
                      0, 1, 0, NULL },
  [OPT_EMIT]      = { "emit", CAML_OPT_ENUM, "what the layer outputs: y_t (output) or c_t (cell)",
                      0, 0, CAML_RNN_EMIT_OUTPUT, caml_rnn_emit_names },
  [OPT_H]         = { "h", CAML_OPT_ENUM, "activation of the output y_t = h(W_y c_t + b_y)",
                      0, 0, CAML_ACT_TANH, caml_activation_names },
};

enum { BLOCK_R, BLOCK_Z, BLOCK_H };

typedef struct {
  int            t, d, u, g;    /* steps, input width D, units U, G = 3U */
  gboolean       sequences;
  int            emit;
  CamlActivation act_h;
  CamlParam     *W;             /* (3U, D): W_r, W_z, W */
  CamlParam     *U_rz;          /* (2U, U): U_r, U_z */
  CamlParam     *U;             /* (U, U) */
  CamlParam     *W_y, *b_y;     /* (U, U), (U) */
  CamlRnnPack    pack;
  size_t         cap;           /* samples the buffers hold (N·T rows) */
  float         *x;             /* (rows, D) packed input; dX in backward */
  float         *P;             /* (rows, 3U) pre-activations, then r, z, c̄ */
  float         *dP;            /* (rows, 3U) */
  float         *c, *cprev;     /* (rows, U) */
  float         *rc;            /* (rows, U) r_t ⊙ c_{t−1} */
  float         *dc;            /* (rows, U) */
  float         *scratch;       /* (rows, U) d(r ⊙ c_{t−1}); dy before h */
  float         *y;             /* (rows, U) outputs when return_sequences */
  float         *cy, *dy, *dcy; /* (N, U) the emitted c_t, dy before h and dc_t when not */
} Gru;

static gboolean
gru_setup (CamlLayer *layer, GError **error)
{
  if (!caml_rnn_check_input (layer, error))
    return FALSE;
  Gru *s = g_new0 (Gru, 1);
  s->t = layer->in.dims[0];
  s->d = layer->in.dims[1];
  s->u = (int) layer->opt[OPT_UNITS];
  s->g = 3 * s->u;
  s->sequences = layer->opt[OPT_SEQUENCES] != 0.0;
  s->emit = (int) layer->opt[OPT_EMIT];
  s->act_h = (CamlActivation) layer->opt[OPT_H];
  int d = s->d, u = s->u;
  s->W = caml_layer_add_param (layer, "W", CAML_GROUP_ALWAYS, CAML_INIT_GLOROT, d, u,
                               (size_t) 3 * u * d);
  s->U_rz = caml_layer_add_param (layer, "U_rz", CAML_GROUP_ALWAYS, CAML_INIT_GLOROT, u, u,
                                  (size_t) 2 * u * u);
  s->U = caml_layer_add_param (layer, "U", CAML_GROUP_ALWAYS, CAML_INIT_GLOROT, u, u,
                               (size_t) u * u);
  s->W_y = caml_layer_add_param (layer, "W_y", CAML_GROUP_ALWAYS, CAML_INIT_GLOROT, u, u,
                                 (size_t) u * u);
  s->b_y = caml_layer_add_param (layer, "b_y", CAML_GROUP_ALWAYS, CAML_INIT_ZERO, 1, u, u);
  layer->out = s->sequences ? caml_shape_sequence (s->t, u) : caml_shape_flat (u);
  layer->state = s;
  return TRUE;
}

static void
release_buffers (Gru *s)
{
  float **const units[] = { &s->c, &s->cprev, &s->rc, &s->dc, &s->scratch };
  caml_rnn_release (&s->pack, units, G_N_ELEMENTS (units), &s->x, &s->P, &s->dP);
  g_clear_pointer (&s->y, g_free);
  g_clear_pointer (&s->cy, g_free);
  g_clear_pointer (&s->dy, g_free);
  g_clear_pointer (&s->dcy, g_free);
  s->cap = 0;
}

/* The packed buffers, the pack and the output's buffers for batches of up
 * to n samples (at least one: an empty batch still reads the pack). */
static gboolean
gru_reserve (CamlLayer *layer, int n, gboolean allocate, size_t *bytes)
{
  Gru *s = layer->state;
  n = MAX (n, 1);
  CamlScratch sc = { .allocate = allocate && (size_t) n > s->cap, .bytes = *bytes };
  float **const units[] = { &s->c, &s->cprev, &s->rc, &s->dc, &s->scratch };
  caml_rnn_reserve (&sc, &s->pack, n, s->t, units, G_N_ELEMENTS (units), s->u, &s->x, s->d,
                    &s->P, &s->dP, s->g);
  if (s->emit == CAML_RNN_EMIT_OUTPUT && s->sequences)
    caml_scratch_floats (&sc, &s->y, NULL, caml_scratch_rows (n, s->t), s->u);
  else if (s->emit == CAML_RNN_EMIT_OUTPUT)
    {
      caml_scratch_floats (&sc, &s->cy, NULL, n, s->u);
      caml_scratch_floats (&sc, &s->dy, NULL, n, s->u);
      caml_scratch_floats (&sc, &s->dcy, NULL, n, s->u);
    }
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

static void
gru_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  Gru *s = layer->state;
  CamlRnnPack *p = &s->pack;
  int u = s->u, g = s->g;
  caml_scratch_require (layer, n);
  caml_rnn_pack_set (p, layer->lengths, n, s->t);

  if (p->rows > 0)
    {
      caml_rnn_gather (p, s->x, inp, s->d);
      caml_linear_forward (s->P, s->x, s->W->w, NULL, p->rows, s->d, g);
      memset (s->cprev, 0, (size_t) p->active[0] * u * sizeof (float));
    }
  for (int t = 0; t < p->steps; t++)
    {
      int m = p->active[t];
      size_t o = p->offset[t];
      float *P = s->P + o * g;
      const float *cprev = s->cprev + o * u;
      float *c = s->c + o * u, *rc = s->rc + o * u;
      if (t > 0)   /* r and z see c_{t−1} (c_0 = 0) */
        caml_sgemm (CblasNoTrans, CblasTrans, m, 2 * u, u, 1.0f, cprev, u, s->U_rz->w, u,
                    1.0f, P, g);
      for (int r = 0; r < m; r++)
        {
          float *row = P + (size_t) r * g;
          caml_activation_forward (CAML_ACT_SIGMOID, row, row, 2 * u);   /* r and z */
          for (int j = 0; j < u; j++)
            rc[(size_t) r * u + j] = row[BLOCK_R * u + j] * cprev[(size_t) r * u + j];
        }
      if (t > 0)
        caml_sgemm (CblasNoTrans, CblasTrans, m, u, u, 1.0f, rc, u, s->U->w, u, 1.0f,
                    P + BLOCK_H * u, g);
      for (int r = 0; r < m; r++)
        {
          float *row = P + (size_t) r * g;
          float *z = row + BLOCK_Z * u, *h = row + BLOCK_H * u;
          const float *cp = cprev + (size_t) r * u;
          float *cr = c + (size_t) r * u;
          caml_activation_forward (CAML_ACT_TANH, h, h, u);
          for (int j = 0; j < u; j++)
            cr[j] = z[j] * cp[j] + (1.0f - z[j]) * h[j];
        }
      caml_rnn_shift_prev (p, s->cprev, s->c, t, u);
    }

  if (s->emit == CAML_RNN_EMIT_CELL)
    {
      caml_rnn_emit (p, out, s->c, u, s->sequences);
      return;
    }
  /* y = h(W_y c + b_y) at the emitted steps only: every packed row, or each
   * sample's last (zeros for length 0, its initial state). */
  if (s->sequences)
    {
      if (p->rows > 0)
        {
          caml_linear_forward (s->y, s->c, s->W_y->w, s->b_y->w, p->rows, u, u);
          caml_activation_forward (s->act_h, s->y, s->y, (size_t) p->rows * u);
        }
      caml_rnn_scatter (p, out, s->y, u);
      return;
    }
  caml_rnn_gather_last (p, s->cy, s->c, u);
  caml_linear_forward (out, s->cy, s->W_y->w, s->b_y->w, n, u, u);
  caml_activation_forward (s->act_h, out, out, (size_t) n * u);
  for (int i = 0; i < n; i++)
    if (p->length[i] == 0)
      memset (out + (size_t) i * u, 0, u * sizeof (float));
}

/* From dout, the gradient reaching c at the emitted steps, into dc (rows, U). */
static void
output_backward (Gru *s, const float *dout, const float *out)
{
  const CamlRnnPack *p = &s->pack;
  int u = s->u, n = p->n;
  if (s->emit == CAML_RNN_EMIT_CELL)
    {
      caml_rnn_emit_backward (p, s->dc, dout, u, s->sequences);
      return;
    }
  if (s->sequences)
    {
      /* y was kept packed: dy before h, then dW_y, db_y and dc in one go */
      float *dy = s->scratch;
      caml_rnn_gather (p, dy, dout, u);
      caml_activation_backward (s->act_h, dy, dy, s->y, (size_t) p->rows * u, FALSE);
      caml_linear_backward (s->dc, s->W_y->dw, s->b_y->dw, dy, s->c, s->W_y->w, p->rows, u, u,
                            FALSE);
      return;
    }
  float *dy = s->dy, *dcy = s->dcy;
  caml_activation_backward (s->act_h, dy, dout, out, (size_t) n * u, FALSE);
  for (int i = 0; i < n; i++)
    if (p->length[i] == 0)   /* its output was the constant 0 */
      memset (dy + (size_t) i * u, 0, u * sizeof (float));
  caml_linear_backward (dcy, s->W_y->dw, s->b_y->dw, dy, s->cy, s->W_y->w, n, u, u, FALSE);
  memset (s->dc, 0, (size_t) p->rows * u * sizeof (float));
  caml_rnn_add_last (p, s->dc, dcy, u);
}

static void
gru_backward (CamlLayer *layer, float *dinp, const float *dout,
              const float *inp, const float *out, int n)
{
  (void) inp; (void) n;
  Gru *s = layer->state;
  const CamlRnnPack *p = &s->pack;
  int u = s->u, g = s->g, rows = p->rows;
  if (rows == 0)
    {
      if (dinp != NULL)
        memset (dinp, 0, (size_t) p->n * s->t * s->d * sizeof (float));
      return;
    }
  output_backward (s, dout, out);

  for (int t = p->steps - 1; t >= 0; t--)
    {
      int m = p->active[t];
      size_t o = p->offset[t];
      const float *P = s->P + o * g, *cprev = s->cprev + o * u;
      float *dP = s->dP + o * g, *dc = s->dc + o * u;
      for (int r = 0; r < m; r++)
        {
          const float *row = P + (size_t) r * g;
          const float *z = row + BLOCK_Z * u, *h = row + BLOCK_H * u;
          float *drow = dP + (size_t) r * g;
          const float *cp = cprev + (size_t) r * u, *dcr = dc + (size_t) r * u;
          for (int j = 0; j < u; j++)
            {
              drow[BLOCK_Z * u + j] = dcr[j] * (cp[j] - h[j]) * z[j] * (1.0f - z[j]);
              drow[BLOCK_H * u + j] = dcr[j] * (1.0f - z[j]) * (1.0f - h[j] * h[j]);
            }
        }
      if (t == 0)
        {
          /* c_0 = 0: nothing reaches r_1, U or U_rz */
          for (int r = 0; r < m; r++)
            memset (dP + (size_t) r * g + BLOCK_R * u, 0, u * sizeof (float));
          break;
        }
      /* d(r ⊙ c_{t−1}) = dc̄ U, then dr and what reaches c_{t−1} */
      float *drc = s->scratch + o * u;
      float *dcprev = s->dc + (size_t) p->offset[t - 1] * u;
      caml_sgemm (CblasNoTrans, CblasNoTrans, m, u, u, 1.0f, dP + BLOCK_H * u, g, s->U->w, u,
                  0.0f, drc, u);
      for (int r = 0; r < m; r++)
        {
          const float *row = P + (size_t) r * g;
          const float *rr = row + BLOCK_R * u, *z = row + BLOCK_Z * u;
          float *drow = dP + (size_t) r * g;
          const float *cp = cprev + (size_t) r * u, *dcr = dc + (size_t) r * u;
          const float *d = drc + (size_t) r * u;
          float *dcp = dcprev + (size_t) r * u;
          for (int j = 0; j < u; j++)
            {
              drow[BLOCK_R * u + j] = d[j] * cp[j] * rr[j] * (1.0f - rr[j]);
              dcp[j] += dcr[j] * z[j] + d[j] * rr[j];
            }
        }
      caml_sgemm (CblasNoTrans, CblasNoTrans, m, u, 2 * u, 1.0f, dP, g, s->U_rz->w, u, 1.0f,
                  dcprev, u);
    }

  /* dW += dPᵀ X, dU_rz += dP_rzᵀ C_{t−1}, dU += dP_c̄ᵀ (R ⊙ C_{t−1}) over
   * every step at once (the rows of step 0 read c_0 = 0). */
  caml_linear_backward (NULL, s->W->dw, NULL, s->dP, s->x, s->W->w, rows, s->d, g, FALSE);
  caml_sgemm (CblasTrans, CblasNoTrans, 2 * u, u, rows, 1.0f, s->dP, g, s->cprev, u, 1.0f,
              s->U_rz->dw, u);
  caml_sgemm (CblasTrans, CblasNoTrans, u, u, rows, 1.0f, s->dP + BLOCK_H * u, g, s->rc, u,
              1.0f, s->U->dw, u);
  if (dinp != NULL)
    {
      caml_sgemm (CblasNoTrans, CblasNoTrans, rows, s->d, g, 1.0f, s->dP, g, s->W->w, s->d,
                  0.0f, s->x, s->d);
      caml_rnn_scatter (p, dinp, s->x, s->d);
    }
}

static void
gru_free (CamlLayer *layer)
{
  Gru *s = layer->state;
  release_buffers (s);
  g_free (s);
}

const CamlLayerOps caml_gru_ops = {
  .name = "gru",
  .title = "GRU",
  .description = "GRU cell as in Table 1 of the paper, with an output layer y_t = h(W_y c_t + b_y)",
  .options = gru_options,
  .n_options = G_N_ELEMENTS (gru_options),
  .accepts = CAML_ACCEPTS (CAML_SHAPE_SEQUENCE),
  .reads_order = TRUE,
  .setup = gru_setup,
  .forward = gru_forward,
  .backward = gru_backward,
  .free = gru_free,
  .reserve = gru_reserve,
};
