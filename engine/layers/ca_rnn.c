/* ca_rnn.c — the CA-RNN cell (Eq. 34 cell state, Eq. 36 output).
 *
 * Input x_t (D) at each step of a sequence (T, D); cell state c_t and output
 * y_t (U); c_0 = y_0 = 0. With f_t and o_t scalars (one per sample and step)
 * and p_v a vector (a peephole, element-wise):
 *
 *   f_t  = σ(v_f·c_{t−1} + w_f·x_t + u_f·y_{t−1} + b_f)
 *   v_t  = h_v(W_v x_t + U_v y_{t−1} + p_v ⊙ c_{t−1} + b_v)
 *   c'_t = h_c(W_c x_t + U_c y_{t−1} + b_c)
 *   c_t  = f_t v_t + (1 − f_t) c'_t
 *   o_t  = σ(z_o·c_t + v_o·c_{t−1} + w_o·x_t + u_o·y_{t−1} + b_o)
 *   vo_t = h_ov(Z_ov c_t + V_ov c_{t−1} + W_ov x_t + U_ov y_{t−1} + b_ov)
 *   co_t = h_oc(V_oc c_{t−1} + W_oc x_t + U_oc y_{t−1} + b_oc)
 *   y_t  = o_t vo_t + (1 − o_t) co_t
 *
 * Everything feeding f_t and o_t is the gate group of em_steps, the rest the
 * value group. The output is y (or c, with emit = cell) at each sample's last
 * step, or the whole sequence with return_sequences.
 *
 * The computation: the batch is packed time-major, longest first (rnn.c), so
 * a step is one block of rows. Every pre-activation of a step is one row of
 * P (rows, G), G = 2 + 4U, in the column order
 *
 *   F (1) | O (1) | VO (U) | CO (U) | V (U) | C' (U)
 *
 * so that each input multiplies one stacked matrix: x_t all G columns (one
 * sgemm over every step at once, before the recurrence), y_{t−1} all G,
 * c_{t−1} the first 2 + 2U (F … CO), c_t the 1 + U from O (O, VO). The
 * parameters are copied into those stacked matrices at each forward, and
 * their gradients, computed stacked, are added back. */
#include "layers.h"

enum { OPT_UNITS, OPT_SEQUENCES, OPT_EMIT, OPT_H_V, OPT_H_C, OPT_H_OV, OPT_H_OC,
       OPT_PEEPHOLE_INIT };

static const CamlOptionSpec ca_rnn_options[] = {
  [OPT_UNITS]     = { "units", CAML_OPT_INT, "width U of the cell state c_t and the output y_t",
                      1, 4096, 16, NULL },
  [OPT_SEQUENCES] = { "return_sequences", CAML_OPT_BOOL,
                      "output every step (T, U), zeros after each length, instead of the last",
                      0, 1, 0, NULL },
  [OPT_EMIT]      = { "emit", CAML_OPT_ENUM, "what the layer outputs: y_t (output) or c_t (cell)",
                      0, 0, CAML_RNN_EMIT_OUTPUT, caml_rnn_emit_names },
  [OPT_H_V]       = { "h_v", CAML_OPT_ENUM, "activation of v_t, the context-free cell value",
                      0, 0, CAML_ACT_TANH, caml_activation_names },
  [OPT_H_C]       = { "h_c", CAML_OPT_ENUM, "activation of c'_t, the context-sensitive cell value",
                      0, 0, CAML_ACT_TANH, caml_activation_names },
  [OPT_H_OV]      = { "h_ov", CAML_OPT_ENUM, "activation of vo_t, the context-free output",
                      0, 0, CAML_ACT_TANH, caml_activation_names },
  [OPT_H_OC]      = { "h_oc", CAML_OPT_ENUM, "activation of co_t, the context-sensitive output",
                      0, 0, CAML_ACT_TANH, caml_activation_names },
  /* Eq. 32 pairs v_t with c_{t−1}: the context-free value carries the cell
   * state on. p_v near 1 starts it doing so; near 0 (the old ±0.1) the
   * sanity test fails (docs/rnn.md). */
  [OPT_PEEPHOLE_INIT] = { "peephole_init", CAML_OPT_FLOAT,
                          "centre of p_v's initial values (uniform ±0.1 around it); 1 starts "
                          "v_t carrying c_{t−1} (Eq. 32), 0 is the old ±0.1",
                          -10, 10, 1, NULL },
};

/* The stacked matrices, each (rows, cols) row-major. */
enum { M_X, M_Y, M_CPREV, M_CCUR, M_BIAS, N_MATS };

/* Where a parameter sits: matrix, first row. Its rows are as wide as the
 * matrix. */
typedef struct {
  CamlParam *param;
  int        mat, row;
} Slot;

#define N_SLOTS 24

typedef struct {
  int            t, d, u, g;    /* steps, input width D, units U, G = 2 + 4U */
  int            col_f, col_o, col_vo, col_co, col_v, col_cp;
  gboolean       sequences;
  int            emit;
  CamlActivation h_v, h_c, h_ov, h_oc;
  CamlParam     *p_v;           /* (U), not stacked: an element-wise product */
  Slot           slots[N_SLOTS];
  int            n_slots;
  int            mat_rows[N_MATS], mat_cols[N_MATS];
  float         *mat[N_MATS];   /* stacked weights, one block */
  float         *dmat[N_MATS];  /* their gradients, same layout */
  CamlRnnPack    pack;
  size_t         cap;           /* samples the buffers hold (N·T rows) */
  float         *x;             /* (rows, D) packed input; dX in backward */
  float         *P;             /* (rows, G) pre-activations, then f, o and the values */
  float         *dP;            /* (rows, G) */
  float         *c, *cprev;     /* (rows, U) c_t and c_{t−1} of each packed row */
  float         *y, *yprev;     /* (rows, U) */
  float         *dc, *dy;       /* (rows, U) */
  float         *chi;           /* (N, T) f_t, filled on request */
} CaRnn;

static CamlParam *
add (CamlLayer *layer, CaRnn *s, const char *name, CamlParamGroup group, CamlInit init,
     int fan_in, int rows, int mat, int row)
{
  CamlParam *p = caml_layer_add_param (layer, name, group, init, fan_in, rows > 1 ? s->u : 1,
                                       (size_t) rows * s->mat_cols[mat]);
  s->slots[s->n_slots++] = (Slot) { p, mat, row };
  return p;
}

static gboolean
ca_rnn_setup (CamlLayer *layer, GError **error)
{
  if (!caml_rnn_check_input (layer, error))
    return FALSE;
  CaRnn *s = g_new0 (CaRnn, 1);
  int t = s->t = layer->in.dims[0];
  int d = s->d = layer->in.dims[1];
  int u = s->u = (int) layer->opt[OPT_UNITS];
  int g = s->g = 2 + 4 * u;
  s->sequences = layer->opt[OPT_SEQUENCES] != 0.0;
  s->emit = (int) layer->opt[OPT_EMIT];
  s->h_v = (CamlActivation) layer->opt[OPT_H_V];
  s->h_c = (CamlActivation) layer->opt[OPT_H_C];
  s->h_ov = (CamlActivation) layer->opt[OPT_H_OV];
  s->h_oc = (CamlActivation) layer->opt[OPT_H_OC];
  s->col_f = 0;
  s->col_o = 1;
  s->col_vo = 2;
  s->col_co = 2 + u;
  s->col_v = 2 + 2 * u;
  s->col_cp = 2 + 3 * u;

  int rows[N_MATS] = { [M_X] = g, [M_Y] = g, [M_CPREV] = 2 + 2 * u, [M_CCUR] = 1 + u,
                       [M_BIAS] = g };
  int cols[N_MATS] = { [M_X] = d, [M_Y] = u, [M_CPREV] = u, [M_CCUR] = u, [M_BIAS] = 1 };
  size_t total = 0;
  for (int m = 0; m < N_MATS; m++)
    {
      s->mat_rows[m] = rows[m];
      s->mat_cols[m] = cols[m];
      total += (size_t) rows[m] * cols[m];
    }
  s->mat[0] = g_new0 (float, total);
  s->dmat[0] = g_new0 (float, total);
  for (int m = 1; m < N_MATS; m++)
    {
      size_t prev = (size_t) rows[m - 1] * cols[m - 1];
      s->mat[m] = s->mat[m - 1] + prev;
      s->dmat[m] = s->dmat[m - 1] + prev;
    }

  const CamlParamGroup G = CAML_GROUP_GATE, V = CAML_GROUP_VALUE;
  const CamlInit GL = CAML_INIT_GLOROT, Z = CAML_INIT_ZERO;
  /* f_t: the cell-state gate */
  add (layer, s, "v_f", G, GL, u, 1, M_CPREV, s->col_f);
  add (layer, s, "w_f", G, GL, d, 1, M_X, s->col_f);
  add (layer, s, "u_f", G, GL, u, 1, M_Y, s->col_f);
  add (layer, s, "b_f", G, Z, 1, 1, M_BIAS, s->col_f);
  /* v_t: the context-free cell value */
  add (layer, s, "W_v", V, GL, d, u, M_X, s->col_v);
  add (layer, s, "U_v", V, GL, u, u, M_Y, s->col_v);
  s->p_v = caml_layer_add_param (layer, "p_v", V, CAML_INIT_SMALL, u, u, u);
  s->p_v->init_centre = (float) layer->opt[OPT_PEEPHOLE_INIT];
  add (layer, s, "b_v", V, Z, 1, u, M_BIAS, s->col_v);
  /* c'_t: the context-sensitive cell value */
  add (layer, s, "W_c", V, GL, d, u, M_X, s->col_cp);
  add (layer, s, "U_c", V, GL, u, u, M_Y, s->col_cp);
  add (layer, s, "b_c", V, Z, 1, u, M_BIAS, s->col_cp);
  /* o_t: the output gate */
  add (layer, s, "z_o", G, GL, u, 1, M_CCUR, 0);
  add (layer, s, "v_o", G, GL, u, 1, M_CPREV, s->col_o);
  add (layer, s, "w_o", G, GL, d, 1, M_X, s->col_o);
  add (layer, s, "u_o", G, GL, u, 1, M_Y, s->col_o);
  add (layer, s, "b_o", G, Z, 1, 1, M_BIAS, s->col_o);
  /* vo_t: the context-free output */
  add (layer, s, "Z_ov", V, GL, u, u, M_CCUR, 1);
  add (layer, s, "V_ov", V, GL, u, u, M_CPREV, s->col_vo);
  add (layer, s, "W_ov", V, GL, d, u, M_X, s->col_vo);
  add (layer, s, "U_ov", V, GL, u, u, M_Y, s->col_vo);
  add (layer, s, "b_ov", V, Z, 1, u, M_BIAS, s->col_vo);
  /* co_t: the context-sensitive output */
  add (layer, s, "V_oc", V, GL, u, u, M_CPREV, s->col_co);
  add (layer, s, "W_oc", V, GL, d, u, M_X, s->col_co);
  add (layer, s, "U_oc", V, GL, u, u, M_Y, s->col_co);
  add (layer, s, "b_oc", V, Z, 1, u, M_BIAS, s->col_co);
  g_assert (s->n_slots <= N_SLOTS);

  layer->out = s->sequences ? caml_shape_sequence (t, u) : caml_shape_flat (u);
  layer->state = s;
  return TRUE;
}

static void
pack_weights (CaRnn *s)
{
  for (int i = 0; i < s->n_slots; i++)
    {
      const Slot *slot = &s->slots[i];
      memcpy (s->mat[slot->mat] + (size_t) slot->row * s->mat_cols[slot->mat], slot->param->w,
              slot->param->count * sizeof (float));
    }
}

static void
unpack_gradients (CaRnn *s)
{
  for (int i = 0; i < s->n_slots; i++)
    {
      const Slot *slot = &s->slots[i];
      const float *g = s->dmat[slot->mat] + (size_t) slot->row * s->mat_cols[slot->mat];
      float *dw = slot->param->dw;
      for (size_t j = 0; j < slot->param->count; j++)
        dw[j] += g[j];
    }
}

static void
release_buffers (CaRnn *s)
{
  float **const units[] = { &s->c, &s->cprev, &s->y, &s->yprev, &s->dc, &s->dy };
  caml_rnn_release (&s->pack, units, G_N_ELEMENTS (units), &s->x, &s->P, &s->dP);
  g_clear_pointer (&s->chi, g_free);
  s->cap = 0;
}

/* The packed buffers, the pack and χ for batches of up to n samples (at
 * least one: an empty batch still reads the pack). */
static gboolean
ca_rnn_reserve (CamlLayer *layer, int n, gboolean allocate, size_t *bytes)
{
  CaRnn *s = layer->state;
  n = MAX (n, 1);
  CamlScratch sc = { .allocate = allocate && (size_t) n > s->cap, .bytes = *bytes };
  float **const units[] = { &s->c, &s->cprev, &s->y, &s->yprev, &s->dc, &s->dy };
  caml_rnn_reserve (&sc, &s->pack, n, s->t, units, G_N_ELEMENTS (units), s->u, &s->x, s->d,
                    &s->P, &s->dP, s->g);
  caml_scratch_floats (&sc, &s->chi, NULL, n, s->t);
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

/* C (m, n) += A (m, k) · B (n, k)ᵀ, with leading dimensions. */
static inline void
gemm_nt (int m, int n, int k, const float *A, int lda, const float *B, int ldb, float *C,
         int ldc)
{
  caml_sgemm (CblasNoTrans, CblasTrans, m, n, k, 1.0f, A, lda, B, ldb, 1.0f, C, ldc);
}

/* C (m, n) += A (m, k) · B (k, n). */
static inline void
gemm_nn (int m, int n, int k, const float *A, int lda, const float *B, int ldb, float *C,
         int ldc)
{
  caml_sgemm (CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, A, lda, B, ldb, 1.0f, C, ldc);
}

/* C (m, n) = A (rows, m)ᵀ · B (rows, n): a weight gradient over every step. */
static inline void
gemm_tn (int m, int n, int rows, const float *A, int lda, const float *B, int ldb, float *C,
         int ldc)
{
  caml_sgemm (CblasTrans, CblasNoTrans, m, n, rows, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
}

/* Rows of one step: f_t, v_t, c'_t from their pre-activations in P, then c_t. */
static void
cell_forward (const CaRnn *s, float *P, float *c, const float *cprev, int m)
{
  int u = s->u, g = s->g;
  const float *pv = s->p_v->w;
  for (int r = 0; r < m; r++)
    {
      float *row = P + (size_t) r * g;
      const float *cp = cprev + (size_t) r * u;
      float *cr = c + (size_t) r * u;
      float *v = row + s->col_v, *vc = row + s->col_cp;
      float f = row[s->col_f] = caml_sigmoidf (row[s->col_f]);
      for (int j = 0; j < u; j++)
        v[j] += pv[j] * cp[j];
      caml_activation_forward (s->h_v, v, v, u);
      caml_activation_forward (s->h_c, vc, vc, u);
      for (int j = 0; j < u; j++)
        cr[j] = f * v[j] + (1.0f - f) * vc[j];
    }
}

/* Rows of one step: o_t, vo_t, co_t from their pre-activations, then y_t. */
static void
output_forward (const CaRnn *s, float *P, float *y, int m)
{
  int u = s->u, g = s->g;
  for (int r = 0; r < m; r++)
    {
      float *row = P + (size_t) r * g;
      float *yr = y + (size_t) r * u;
      float *vo = row + s->col_vo, *co = row + s->col_co;
      float o = row[s->col_o] = caml_sigmoidf (row[s->col_o]);
      caml_activation_forward (s->h_ov, vo, vo, u);
      caml_activation_forward (s->h_oc, co, co, u);
      for (int j = 0; j < u; j++)
        yr[j] = o * vo[j] + (1.0f - o) * co[j];
    }
}

static void
ca_rnn_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  CaRnn *s = layer->state;
  CamlRnnPack *p = &s->pack;
  int u = s->u, g = s->g;
  caml_scratch_require (layer, n);
  caml_rnn_pack_set (p, layer->lengths, n, s->t);
  pack_weights (s);

  if (p->rows > 0)
    {
      caml_rnn_gather (p, s->x, inp, s->d);
      /* x_t's share of every pre-activation, all steps at once, and the biases */
      caml_linear_forward (s->P, s->x, s->mat[M_X], s->mat[M_BIAS], p->rows, s->d, g);
      memset (s->yprev, 0, (size_t) p->active[0] * u * sizeof (float));
      memset (s->cprev, 0, (size_t) p->active[0] * u * sizeof (float));
    }
  for (int t = 0; t < p->steps; t++)
    {
      int m = p->active[t];
      size_t o = p->offset[t];
      float *P = s->P + o * g;
      const float *yprev = s->yprev + o * u, *cprev = s->cprev + o * u;
      float *c = s->c + o * u, *y = s->y + o * u;
      if (t > 0)   /* c_0 = y_0 = 0 */
        {
          gemm_nt (m, g, u, yprev, u, s->mat[M_Y], u, P, g);
          gemm_nt (m, 2 + 2 * u, u, cprev, u, s->mat[M_CPREV], u, P, g);
        }
      cell_forward (s, P, c, cprev, m);
      gemm_nt (m, 1 + u, u, c, u, s->mat[M_CCUR], u, P + s->col_o, g);
      output_forward (s, P, y, m);
      caml_rnn_shift_prev (p, s->yprev, s->y, t, u);
      caml_rnn_shift_prev (p, s->cprev, s->c, t, u);
    }
  caml_rnn_emit (p, out, s->emit == CAML_RNN_EMIT_CELL ? s->c : s->y, u, s->sequences);
}

/* Rows of one step, from dy: the gradients of o_t, vo_t, co_t's
 * pre-activations into dP. */
static void
output_backward (const CaRnn *s, float *dP, const float *P, const float *dy, int m)
{
  int u = s->u, g = s->g;
  for (int r = 0; r < m; r++)
    {
      const float *row = P + (size_t) r * g;
      float *drow = dP + (size_t) r * g;
      const float *dyr = dy + (size_t) r * u;
      const float *vo = row + s->col_vo, *co = row + s->col_co;
      float *dvo = drow + s->col_vo, *dco = drow + s->col_co;
      float o = row[s->col_o], dout = 0.0f;
      for (int j = 0; j < u; j++)
        {
          dout += dyr[j] * (vo[j] - co[j]);
          dvo[j] = o * dyr[j];
          dco[j] = (1.0f - o) * dyr[j];
        }
      drow[s->col_o] = dout * o * (1.0f - o);
      caml_activation_backward (s->h_ov, dvo, dvo, vo, u, FALSE);
      caml_activation_backward (s->h_oc, dco, dco, co, u, FALSE);
    }
}

/* Rows of one step, from dc: the gradients of f_t, v_t, c'_t's
 * pre-activations into dP, and of the peephole p_v. */
static void
cell_backward (const CaRnn *s, float *dP, const float *P, const float *dc,
               const float *cprev, int m)
{
  int u = s->u, g = s->g;
  float *dpv = s->p_v->dw;
  for (int r = 0; r < m; r++)
    {
      const float *row = P + (size_t) r * g;
      float *drow = dP + (size_t) r * g;
      const float *dcr = dc + (size_t) r * u, *cp = cprev + (size_t) r * u;
      const float *v = row + s->col_v, *vc = row + s->col_cp;
      float *dv = drow + s->col_v, *dvc = drow + s->col_cp;
      float f = row[s->col_f], df = 0.0f;
      for (int j = 0; j < u; j++)
        {
          df += dcr[j] * (v[j] - vc[j]);
          dv[j] = f * dcr[j];
          dvc[j] = (1.0f - f) * dcr[j];
        }
      drow[s->col_f] = df * f * (1.0f - f);
      caml_activation_backward (s->h_v, dv, dv, v, u, FALSE);
      caml_activation_backward (s->h_c, dvc, dvc, vc, u, FALSE);
      for (int j = 0; j < u; j++)
        dpv[j] += dv[j] * cp[j];
    }
}

static void
ca_rnn_backward (CamlLayer *layer, float *dinp, const float *dout,
                 const float *inp, const float *out, int n)
{
  (void) inp; (void) out; (void) n;
  CaRnn *s = layer->state;
  const CamlRnnPack *p = &s->pack;
  int u = s->u, g = s->g;
  size_t state_size = (size_t) p->rows * u * sizeof (float);
  if (p->rows == 0)
    {
      if (dinp != NULL)
        memset (dinp, 0, (size_t) p->n * s->t * s->d * sizeof (float));
      return;
    }

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

  /* Backpropagation through time: dy and dc of step t are complete once
   * step t + 1 has added what flows back from it. */
  for (int t = p->steps - 1; t >= 0; t--)
    {
      int m = p->active[t];
      size_t o = p->offset[t];
      const float *P = s->P + o * g, *cprev = s->cprev + o * u;
      float *dP = s->dP + o * g, *dy = s->dy + o * u, *dc = s->dc + o * u;
      output_backward (s, dP, P, dy, m);
      gemm_nn (m, u, 1 + u, dP + s->col_o, g, s->mat[M_CCUR], u, dc, u);
      cell_backward (s, dP, P, dc, cprev, m);
      if (t == 0)
        break;
      size_t prev = p->offset[t - 1];
      float *dyprev = s->dy + prev * u, *dcprev = s->dc + prev * u;
      gemm_nn (m, u, g, dP, g, s->mat[M_Y], u, dyprev, u);
      gemm_nn (m, u, 2 + 2 * u, dP, g, s->mat[M_CPREV], u, dcprev, u);
      const float *pv = s->p_v->w;
      for (int r = 0; r < m; r++)
        for (int j = 0; j < u; j++)
          dcprev[(size_t) r * u + j] += dP[(size_t) r * g + s->col_v + j] * pv[j];
    }

  /* The weights' gradients over every step at once. */
  int rows = p->rows;
  gemm_tn (g, s->d, rows, s->dP, g, s->x, s->d, s->dmat[M_X], s->d);
  gemm_tn (g, u, rows, s->dP, g, s->yprev, u, s->dmat[M_Y], u);
  gemm_tn (2 + 2 * u, u, rows, s->dP, g, s->cprev, u, s->dmat[M_CPREV], u);
  gemm_tn (1 + u, u, rows, s->dP + s->col_o, g, s->c, u, s->dmat[M_CCUR], u);
  float *db = s->dmat[M_BIAS];
  memset (db, 0, g * sizeof (float));
  for (int r = 0; r < rows; r++)
    for (int j = 0; j < g; j++)
      db[j] += s->dP[(size_t) r * g + j];
  unpack_gradients (s);

  if (dinp != NULL)
    {
      caml_sgemm (CblasNoTrans, CblasNoTrans, rows, s->d, g, 1.0f, s->dP, g, s->mat[M_X],
                  s->d, 0.0f, s->x, s->d);
      caml_rnn_scatter (p, dinp, s->x, s->d);
    }
}

static const float *
ca_rnn_chi (CamlLayer *layer, int *chi_per_sample)
{
  CaRnn *s = layer->state;
  caml_scratch_require (layer, s->pack.n);   /* only before the first forward */
  caml_rnn_chi (&s->pack, s->chi, s->P + s->col_f, s->g);
  *chi_per_sample = s->t;
  return s->chi;
}

static void
ca_rnn_free (CamlLayer *layer)
{
  CaRnn *s = layer->state;
  release_buffers (s);
  g_free (s->mat[0]);
  g_free (s->dmat[0]);
  g_free (s);
}

const CamlLayerOps caml_ca_rnn_ops = {
  .name = "ca_rnn",
  .title = "CA-RNN",
  .description = "Context-aware recurrent cell (Eq. 34, 36): scalar gates f_t and o_t mix "
                 "context-free and context-sensitive values",
  .context_aware = TRUE,
  .baseline = "lstm",
  .options = ca_rnn_options,
  .n_options = G_N_ELEMENTS (ca_rnn_options),
  .accepts = CAML_ACCEPTS (CAML_SHAPE_SEQUENCE),
  .reads_order = TRUE,
  .setup = ca_rnn_setup,
  .forward = ca_rnn_forward,
  .backward = ca_rnn_backward,
  .chi = ca_rnn_chi,
  .free = ca_rnn_free,
  .reserve = ca_rnn_reserve,
};
