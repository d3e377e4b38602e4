/* layers.h — private to the engine: the layer types, and the kernels that
 * families of layers share (recurrent packing, attention memory,
 * convolution). What any layer uses is in caml-layer.h. */
#pragma once

#include "caml-layer.h"

extern const CamlLayerOps caml_dense_ops;
extern const CamlLayerOps caml_activation_layer_ops;
extern const CamlLayerOps caml_ca_nn_ops;
extern const CamlLayerOps caml_ca_res_ops;
extern const CamlLayerOps caml_conv2d_ops;
extern const CamlLayerOps caml_max_pool_ops;
extern const CamlLayerOps caml_dropout_ops;
extern const CamlLayerOps caml_flatten_ops;
extern const CamlLayerOps caml_ca_cnn_ops;
extern const CamlLayerOps caml_ca_res_conv_ops;
extern const CamlLayerOps caml_embedding_ops;
extern const CamlLayerOps caml_mean_pool_ops;
extern const CamlLayerOps caml_average_ops;
extern const CamlLayerOps caml_ca_bsfe_ops;
extern const CamlLayerOps caml_ca_rnn_ops;
extern const CamlLayerOps caml_lstm_ops;
extern const CamlLayerOps caml_gru_ops;

extern const CamlLayerOps caml_attention_ops;
extern const CamlLayerOps caml_ca_att_ops;

/* Token ids (N, T) to vectors (N, T, D) from E (V, D); OOV ids and steps at
 * or after lengths[n] give zeros. */
void caml_embedding_forward (float *out, const float *ids, const float *E, const int *lengths,
                             int n, int t_max, int v, int d);
/* dE (V, D) += the rows of dout (N, T, D) at each valid id. */
void caml_embedding_backward (float *dE, const float *dout, const float *ids,
                              const int *lengths, int n, int t_max, int v, int d);

/* ------------------------------------------------ recurrent layers (rnn.c) */

/* A batch of N ragged sequences packed time-major, longest first: the
 * samples running at step t are ranks 0 … active[t] − 1, their rows packed
 * rows offset[t] + rank. Its arrays are allocated by caml_rnn_reserve and
 * freed by caml_rnn_release. */
typedef struct {
  int  n, t_max;
  int  steps;      /* the longest length in the batch */
  int  rows;       /* Σ lengths: the packed rows */
  int *order;      /* (N) sample of each rank, longest first (stable) */
  int *rank;       /* (N) rank of each sample */
  int *length;     /* (N) length of each sample, clamped to 0 … T */
  int *active;     /* (T + 1) samples longer than t */
  int *offset;     /* (T + 1) first packed row of step t */
} CamlRnnPack;

/* lengths (N) or NULL for all T; the arrays reserved for at least n samples
 * of t_max steps. */
void caml_rnn_pack_set (CamlRnnPack *p, const int *lengths, int n, int t_max);
/* packed (rows, d) from the valid steps of seq (N, T, d). */
void caml_rnn_gather (const CamlRnnPack *p, float *packed, const float *seq, int d);
/* seq (N, T, d) from packed (rows, d), zeros at and after each length. */
void caml_rnn_scatter (const CamlRnnPack *p, float *seq, const float *packed, int d);
/* out (N, d): each sample's row at its last step; zeros for length 0. */
void caml_rnn_gather_last (const CamlRnnPack *p, float *out, const float *packed, int d);
/* dpacked (rows, d): each sample's row at its last step += dout (N, d). */
void caml_rnn_add_last (const CamlRnnPack *p, float *dpacked, const float *dout, int d);
/* The layer output from packed (rows, d): the whole sequence (N, T, d) or
 * the last steps (N, d); and its gradient back to dpacked (overwritten). */
void caml_rnn_emit (const CamlRnnPack *p, float *out, const float *packed, int d,
                    gboolean sequences);
void caml_rnn_emit_backward (const CamlRnnPack *p, float *dpacked, const float *dout, int d,
                             gboolean sequences);
/* chi (N, T) from column 0 of packed rows `stride` floats apart; 0 after
 * each length. */
void caml_rnn_chi (const CamlRnnPack *p, float *chi, const float *packed, int stride);
/* For a cell's reserve op: a cell's per-row buffers for batches of up to n
 * samples of t_max steps, whose packed rows are at most n·t_max (every
 * sample full length) — x rows × d (the packed input), P and dP rows × g
 * (the pre-activations and their gradient), each of the n_units buffers
 * rows × u — and the pack's arrays. They are counted into sc and, with
 * sc->allocate, replaced (contents not kept): the cell sets sc->allocate
 * only when they hold fewer than n samples, and on failure frees them all
 * with caml_rnn_release. */
void caml_rnn_reserve (CamlScratch *sc, CamlRnnPack *p, int n, int t_max,
                       float **const units[], gsize n_units, int u,
                       float **x, int d, float **P, float **dP, int g);
/* Frees those buffers and the pack's arrays, leaving NULLs. */
void caml_rnn_release (CamlRnnPack *p, float **const units[], gsize n_units,
                       float **x, float **P, float **dP);
/* prev (rows, d) at step t + 1 = the first active[t + 1] rows of cur (rows,
 * d) at step t: the previous state each running sample reads. */
void caml_rnn_shift_prev (const CamlRnnPack *p, float *prev, const float *cur, int t, int d);
/* Setup: the input must be a SEQUENCE (T, D). */
gboolean caml_rnn_check_input (const CamlLayer *layer, GError **error);
/* The `emit` option: "output" (y_t) or "cell" (c_t). NULL-terminated. */
extern const char *const caml_rnn_emit_names[];
enum { CAML_RNN_EMIT_OUTPUT, CAML_RNN_EMIT_CELL };

/* ------------------------------------------- attention memory (attention.c) */

/* The score f(s_i, c) of a memory step s_i under the query c. The order is
 * the order of the `score` option's choices in both attention layers, so a
 * matched baseline (options carried over by key and index) keeps it. */
typedef enum {
  CAML_ATT_SCORE_BAHDANAU,   /* vᵀ tanh(W1 c + W2 s_i)       (Eq. 43) */
  CAML_ATT_SCORE_LUONG,      /* cᵀ W s_i                     (Eq. 43) */
  CAML_ATT_SCORE_LINEAR,     /* w_g · s_i + u_g · c          (Eq. 26, CA-ATT only) */
} CamlAttScore;

/* Where the query c comes from: a sentence classifier has no decoder state. */
typedef enum {
  CAML_ATT_QUERY_LEARNED,    /* a trained vector of width query_dim, the same for
                              * every sample (the context vector of hierarchical
                              * attention networks) */
  CAML_ATT_QUERY_MEAN,       /* the mean of the sample's valid steps (Q = D) */
} CamlAttQuery;

extern const char *const caml_att_query_names[]; /* "learned", "mean"; NULL-terminated */

/* What the two attention layers share: the memory of the last forward packed
 * to its valid steps, the queries, the scores and their backward. Letters: M
 * the valid steps of the whole batch (Σ lengths), Q the query width, A the
 * Bahdanau hidden width. Sample n owns the packed rows off[n] … off[n + 1).
 * The buffers are allocated by caml_att_memory_reserve for N·T rows, the
 * most M can be. */
typedef struct {
  int           t, d, q, a;
  CamlAttScore  score;
  CamlAttQuery  query;
  CamlParam    *c;            /* (Q) learned query, or NULL */
  CamlParam    *W1, *W2, *v;  /* Bahdanau: (A, Q), (A, D), (A) */
  CamlParam    *W;            /* Luong: (Q, D) */
  CamlParam    *w_g, *u_g;    /* linear: (D), (Q) */
  CamlParam    *b;            /* (1) added to every score, or NULL */

  int           n, m;         /* the last forward's batch and its valid steps */
  int          *off;          /* (N + 1) */
  size_t        off_cap;
  float        *S;    size_t S_cap;    /* (M, D) the valid steps */
  float        *C;    size_t C_cap;    /* (N, Q) queries */
  float        *z;    size_t z_cap;    /* (M) scores */
  float        *P;    size_t P_cap;    /* (N, A) Bahdanau: W1 c */
  float        *H;    size_t H_cap;    /* (M, A) Bahdanau: tanh(W1 c + W2 s_i) */
  float        *K;    size_t K_cap;    /* (N, D) Luong: Wᵀ c */
  /* backward: the layer fills dS and dC with the gradients that reach S and
   * C directly, and dz with the gradient of the scores */
  float        *dS;   size_t dS_cap;   /* (M, D) */
  float        *dC;   size_t dC_cap;   /* (N, Q) */
  float        *dz;   size_t dz_cap;   /* (M) */
  float        *dH;   size_t dH_cap;   /* (M, A) scratch */
  float        *dP;   size_t dP_cap;   /* (N, A) or (N, D) scratch */
} CamlAttMemory;

/* Declares the parameters of the score in `group` (with `bias`, a scalar b
 * added to every score) and a learned query in CAML_GROUP_ALWAYS. */
void caml_att_memory_setup (CamlAttMemory *mem, CamlLayer *layer, CamlAttScore score,
                            CamlAttQuery query, int query_dim, int att_dim,
                            CamlParamGroup group, gboolean bias);
/* For the layer's reserve op: the buffers for batches of up to n samples,
 * counted into sc and, with sc->allocate, grown (contents not kept). On
 * failure the layer frees them with caml_att_memory_clear. */
void caml_att_memory_reserve (CamlAttMemory *mem, CamlScratch *sc, int n);
/* Frees the buffers, leaving NULLs and capacities 0. */
void caml_att_memory_clear (CamlAttMemory *mem);
/* Packs the valid steps of inp (N, T, D) (lengths NULL: all T) and computes
 * the queries C and the scores z, in buffers reserved for at least n
 * samples. */
void caml_att_memory_forward (CamlAttMemory *mem, const float *inp, const int *lengths, int n);
/* With dS, dC and dz filled by the layer: adds what flows back through the
 * scores and the query, accumulates the parameter gradients, and writes
 * dinp (N, T, D) (zeros at padding) when it is non-NULL. */
void caml_att_memory_backward (CamlAttMemory *mem, float *dinp);

/* -------------------------------------------------------- convolution (conv.c) */

typedef enum { CAML_PADDING_SAME, CAML_PADDING_VALID } CamlPadding;
extern const char *const caml_padding_names[]; /* "same", "valid"; NULL-terminated */

/* A k×k convolution over (C, H, W) inputs. "same": OH = ceil(H / stride) and
 * the zero border is split like TensorFlow's (the smaller half before);
 * "valid": no border. */
typedef struct {
  int c, h, w;           /* input */
  int k, stride;
  int pad_top, pad_left;
  int oh, ow;            /* output positions */
  int p;                 /* OH·OW */
  int kk;                /* K = C·k·k, one patch */
  int sub_batch;         /* samples per block of work (bounds the scratch) */
  /* the direct kernels (stride 1; conv-kernels.c) */
  gboolean direct;
  int nv, nv_in;         /* vectors per row block of the output, of the input */
  int owp, wp, hp;       /* output rows padded to whole blocks; the input planes */
  int iwp, wq, hq;       /* input rows padded so; the planes of the output gradient */
} CamlConvGeom;

/* Errors (CAML_ERROR_SHAPE) name `what` and the shapes: a flat input, or a
 * "valid" window larger than the input. */
gboolean caml_conv_geom_init (CamlConvGeom *g, const CamlShape *in, int k, int stride,
                              CamlPadding padding, const char *what, GError **error);
/* Floats of the zero-bordered plane of one channel, scratch for the two below. */
size_t caml_conv_plane_size (const CamlConvGeom *g);
/* col (K, nb·P) from inp (nb, C, H, W). */
void caml_im2col (float *col, float *plane, const float *inp, const CamlConvGeom *g, int nb);
/* dinp (nb, C, H, W) += the patches of col (K, nb·P) put back in place. */
void caml_col2im_add (float *dinp, float *plane, const float *col, const CamlConvGeom *g,
                      int nb);

/* One part's scratch, grown on demand and bounded by sub_batch; 64-byte
 * aligned (g_aligned_alloc), so that rows of whole vectors load whole. */
typedef struct {
  float  *y;       size_t y_cap;        /* (M, nb·P) products, or their gradient */
  float  *planes;  size_t planes_cap;   /* direct: (nb, C, Hp, Wp) input planes */
  float  *dyp;     size_t dyp_cap;      /* direct: the gradient reaching y, as the
                                         * prologue writes it (caml_conv_backward) */
  float  *xs;      size_t xs_cap;       /* direct: (C, k, ks) one sample's input rows,
                                         * packed (CamlConvPackRows) */
  float  *dplanes; size_t dplanes_cap;  /* direct: (nb, M, Hq, Wq) gradient planes */
  float  *dW;      size_t dW_cap;       /* this part's weight gradient (lanes, or (M, K)) */
  float  *sums;    size_t sums_cap;     /* this part's sums of the prologue */
  float  *col;     size_t col_cap;      /* im2col: (K, nb·P) */
  float  *plane;   size_t plane_cap;    /* im2col: (Hp, Wp) one zero-bordered channel */
} CamlConvWork;

typedef struct {
  CamlConvWork *work;     /* one per part */
  int           n_work;
  float        *wt;       /* (C, M·k·k) flipped weights for the input gradient */
  size_t        wt_cap;
} CamlConvScratch;

void caml_conv_scratch_free (CamlConvScratch *scratch);

/* What a forward pass makes of y = Wm · patches (M rows, values first). */
typedef struct {
  int            m;       /* rows of Wm */
  gboolean       gated;   /* the last row is a gate (CA-CNN): χ = σ(y + b_chi), and the
                           * values v = act(y + b) are mixed, χ·(v − w0) + w0 */
  CamlActivation act;
  const float   *b;       /* (values) or NULL */
  float          b_chi;
  const float   *w0;      /* (values), gated */
  float         *out;     /* (N, values, OH, OW): act(y + b), or the mix */
  float         *v;       /* gated: (N, values, OH, OW) */
  float         *chi;     /* gated: (N, 1, OH, OW) */
} CamlConvOutput;

/* Must write dy, the gradient reaching Wm · patches, for samples
 * [n0, n0 + nb): sample i's channel j is the run of P values at
 * dy + j·ld + i·ps (ps ≥ P; what lies between the runs is the driver's).
 * Blocks run concurrently in different parts: anything summed over samples
 * (bias gradients) goes into `sums`, this part's n_sums floats (zeroed
 * before its first block), which the driver adds to the caller's in part
 * order. */
typedef void (*CamlConvPrologue) (gpointer ctx, float *dy, size_t ld, size_t ps, int n0,
                                  int nb, float *sums);

/* The outputs o says, from Wm (o->m, K) over inp (N, C, H, W). */
void caml_conv_forward (const CamlConvGeom *g, const float *Wm, const float *inp, int n,
                        CamlConvScratch *scratch, const CamlConvOutput *o);
/* dWm (M, K) += Σ dy · patchesᵀ; dinp (N, C, H, W) = the gradient of the
 * input, overwritten (skipped when NULL); sums (n_sums) += the prologue's. */
void caml_conv_backward (const CamlConvGeom *g, float *dWm, float *dinp, const float *Wm,
                         int m, const float *inp, int n, CamlConvScratch *scratch,
                         CamlConvPrologue prologue, gpointer ctx, float *sums, int n_sums);

/* out (N, M, OH, OW) = act(W (M, K) ⊛ inp + b), b (M) or NULL. */
void caml_conv_plain_forward (const CamlConvGeom *g, float *out, const float *inp,
                              const float *W, const float *b, int m, CamlActivation act,
                              int n, CamlConvScratch *scratch);
/* dW += …, db += … (if non-NULL), dinp = … (overwritten, if non-NULL). */
void caml_conv_plain_backward (const CamlConvGeom *g, float *dinp, float *dW, float *db,
                               const float *dout, const float *inp, const float *out,
                               const float *W, int m, CamlActivation act, int n,
                               CamlConvScratch *scratch);

/* What a forward kernel call does with its block of products y (mb
 * channels of one row block of one sample), storing outputs x < width. */
typedef enum {
  CAML_CONV_STORE_RAW,    /* out[m] = y[m] */
  CAML_CONV_STORE_ACT,    /* out[m] = act(y[m] + b[m]), b NULL: no bias */
  CAML_CONV_STORE_GATE,   /* mb = 1: chi = σ(y[0] + b_chi) */
  CAML_CONV_STORE_MIX,    /* v[m] = act(y[m] + b[m]); out[m] = chi·(v[m] − w0[m]) + w0[m],
                           * chi read from its row */
  CAML_CONV_STORE_GATED,  /* GATE from the last row, then MIX for the others */
} CamlConvStore;

typedef struct {
  CamlConvStore  store;
  CamlActivation act;
  float         *out;    /* channel m of the block at out + m·os */
  size_t         os;
  float         *v;      /* MIX, GATED: the values, as out */
  float         *chi;    /* GATE, MIX, GATED: the gate's row */
  const float   *b;      /* the bias of the block's first channel, or NULL */
  const float   *w0;     /* MIX, GATED: w0 of the block's first channel */
  float          b_chi;
} CamlConvTile;

/* The direct kernels of one instruction set (conv-kernels.c). A forward
 * call computes rows × cols outputs for mb channels, in row blocks of nv·vl:
 *   y[m][r][x] = Σ_c Σ_ki Σ_kj w[m·ws + (c·k + ki)·k + kj] · plane[c·ps + (r + ki)·wp + kj + x]
 * and stores them as the tile says (its pointers at row 0, rows cols apart);
 * a weight-gradient call adds, lane by lane, for mb ≤ dw_mb[kb] channels
 * and kb kernel columns, a product over positions laid end to end
 * (CamlConvDwKernel), so that no lane idles at the end of a row. */
#define CAML_CONV_FWD_MB_MAX 12
#define CAML_CONV_DW_KB_MAX 8
#define CAML_CONV_DW_MB_MAX 15
typedef void (*CamlConvFwdKernel) (const CamlConvTile *t, int rows, int cols,
                                   const float *plane, int wp, size_t ps, int channels, int k,
                                   const float *w, size_t ws);
/* The weight gradient reads an input channel as k arrays xs[kj] of its
 * rows laid end to end, each shifted by its column kj (CamlConvPackRows),
 * so that a vector of positions runs on from one row into the next and no
 * lane idles at the end of a row: output position p = r·ow + x and tap
 * (ki, kj) meet at xs[kj][p + ki·ow]. A call adds
 *   acc[m·ams + kj·VL + lane] += Σ_s dy[m·dms + s·VL + lane] · xs[kj·ks + s·VL + lane]
 * over `steps` vectors s (mb ≤ dw_mb[KB] channels, KB columns; dy at any
 * address, xs whole and aligned): with xs at position q0 = s0·VL and dy
 * shifted back by ki·ow, that is Σ_p dy[p] · xs[kj][p + ki·ow], lane by
 * lane. */
typedef void (*CamlConvDwKernel) (float *acc, size_t ams, const float *dy, size_t dms,
                                  const float *xs, size_t ks, int steps);
/* xs[kj·ks + r·ow + x] = plane[r·wp + kj + x] for kj < k, r < rows, x < ow;
 * zeros from rows·ow to ks (ks ≥ rows·ow + vl). Reads whole vectors:
 * wp ≥ ow rounded up to vl, plus k − 1. */
typedef void (*CamlConvPackRows) (float *xs, size_t ks, const float *plane, int rows, int wp,
                                  int ow, int k);
/* The max pool's 2×2 windows with stride 2 that lie inside the image, n of
 * one row of outputs: o[x] = the largest of r0[2x], r0[2x + 1], r1[2x],
 * r1[2x + 1] (r1 = r0 + w: the next row), a[x] its index, counting from
 * at0 (r0[0]'s), the first of equals; the backward pass writes every cell
 * of those windows: d[i] = g[x] where a[x] = i, else 0. */
typedef void (*CamlPool2Kernel) (float *o, int *a, const float *r0, int at0, int w, int n);
typedef void (*CamlUnpool2Kernel) (float *d0, const float *g, const int *a, int at0, int w,
                                   int n);
typedef struct {
  const char        *isa;
  int                vl;
  int                fwd_mb;
  CamlConvFwdKernel  fwd[2][CAML_CONV_FWD_MB_MAX + 1];   /* [nv − 1][mb] */
  int                dw_kb;
  int                dw_mb[CAML_CONV_DW_KB_MAX + 1];        /* the most channels */
  CamlConvDwKernel   dw[CAML_CONV_DW_KB_MAX + 1][CAML_CONV_DW_MB_MAX + 1];   /* [kb][mb] */
  CamlConvPackRows   pack_rows;
  CamlPool2Kernel    pool2;
  CamlUnpool2Kernel  unpool2;
} CamlConvKernels;

/* The best set this CPU runs (AVX-512, AVX2, else SSE2 or generic). */
const CamlConvKernels *caml_conv_kernels (void);
/* For tests: use the set named isa ("AVX-512", "AVX2", "SSE2" or
 * "generic") from now on; FALSE when this CPU cannot run it. NULL goes back
 * to the best. Geometries made before keep their blocks: set it first. */
gboolean caml_conv_kernels_force (const char *isa);
/* The name of the set in use. */
const char *caml_kernels_isa (void);

/* The gate mix with one gate per position: out (N, U, P) = χ (N, P) v + (1 − χ) w0. */
void caml_gate_mix_maps_forward (float *out, const float *chi, const float *v,
                                 const float *w0, int n, int u, int p);
/* dv (N, U, P) = χ dout; dchi (N, P) = Σ_j dout (v − w0) (both overwritten);
 * dw0 (U) += Σ (1 − χ) dout. */
void caml_gate_mix_maps_backward (float *dv, float *dchi, float *dw0, const float *dout,
                                  const float *chi, const float *v, const float *w0,
                                  int n, int u, int p);
