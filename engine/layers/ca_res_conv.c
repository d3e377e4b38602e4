/* ca_res_conv.c — the convolutional CA-RES block: CA-RES (ca_res.c) whose
 * sublayers are CA-CNNs. Inputs and outputs are images; sublayer k sees the
 * channel concatenation of the block input c and the previous sublayer
 * outputs (per position, exactly as CA-RES concatenates vectors):
 *
 *   v_k = act(W_k ⊛ [c, w_{k−1}, …, w_{k−n_v}] + b_k)       form "dense"
 *   v_k = c + w_{k−1} + … + w_{k−n_v}                        form "sum" (k ≥ 2)
 *   χ_k = sigmoid(u_k ⊛ [c, w_{k−1}, …, w_{k−n_σ}] + b_χk)   one gate per position,
 *         or 1 when always_on (b = 1)
 *   w_k = χ_k v_k + (1 − χ_k) w_k0
 *
 * Stride is 1 and padding "same" so every sublayer keeps the H×W grid (the
 * only padding offered). v_1 is always a convolution; the sum form needs
 * C_in == depth. The block output is w_l; chi returns the last sublayer's
 * σ-map. With (2, 1, –, 1) and the sum form it is a ResNet block,
 * c + act(W ⊛ c + b). */
#include "layers.h"

enum {
  OPT_KERNEL, OPT_PADDING, OPT_DEPTH, OPT_SUBLAYERS, OPT_N_V, OPT_N_SIGMA,
  OPT_ALWAYS_ON, OPT_V_FORM, OPT_ACTIVATION
};

static const char *const v_form_names[] = { "dense", "sum", NULL };
enum { V_DENSE, V_SUM };
static const char *const same_only[] = { "same", NULL };

#define MAX_SUBLAYERS 12

static const CamlOptionSpec ca_res_conv_options[] = {
  [OPT_KERNEL]    = { "kernel", CAML_OPT_INT, "k: every sublayer's patch is k×k", 1, 32, 3, NULL },
  [OPT_PADDING]   = { "padding", CAML_OPT_ENUM,
                      "same (the only choice: sublayers keep the H×W grid)",
                      0, 0, CAML_PADDING_SAME, same_only },
  [OPT_DEPTH]     = { "depth", CAML_OPT_INT, "channels of every sublayer output", 1, 1024, 8, NULL },
  [OPT_SUBLAYERS] = { "sublayers", CAML_OPT_INT, "l: number of CA-CNN sublayers",
                      1, MAX_SUBLAYERS, 2, NULL },
  [OPT_N_V]       = { "n_v", CAML_OPT_INT, "previous outputs feeding each value v_k",
                      1, MAX_SUBLAYERS, 1, NULL },
  [OPT_N_SIGMA]   = { "n_sigma", CAML_OPT_INT, "previous outputs feeding each gate χ_k",
                      1, MAX_SUBLAYERS, 1, NULL },
  [OPT_ALWAYS_ON] = { "always_on", CAML_OPT_BOOL, "b: gates fixed at χ = 1 (no w0)",
                      0, 1, 0, NULL },
  [OPT_V_FORM]    = { "v_form", CAML_OPT_ENUM, "how v_k (k ≥ 2) combines its inputs",
                      0, 0, V_DENSE, v_form_names },
  [OPT_ACTIVATION]= { "activation", CAML_OPT_ENUM, "activation of the convolutional values",
                      0, 0, CAML_ACT_RELU, caml_activation_names },
};

typedef struct {
  int          nv, ns;       /* previous outputs actually used by v and χ */
  gboolean     dense;
  CamlConvGeom gv, gc;       /* over the v input and the χ input */
  CamlParam   *W, *b;        /* (D, Cv, k, k), (D) when dense */
  CamlParam   *u, *b_chi;    /* (1, Cc, k, k), (1) when gated */
  CamlParam   *w0;           /* (D) when gated */
  float       *cat_v;        /* (N, Cv, H, W) when dense and nv > 0 */
  float       *cat_c;        /* (N, Cc, H, W) when gated and ns > 0 */
  float       *v;            /* (N, D, H, W) */
  float       *chi;          /* (N, 1, H, W) when gated */
  float       *w;            /* (N, D, H, W) output of this sublayer */
  float       *dw;           /* (N, D, H, W) gradient reaching w_k */
} Sub;

typedef struct {
  int             cin, depth, l, p;   /* p = H·W */
  gboolean        gated;
  CamlActivation  act;
  Sub             sub[MAX_SUBLAYERS];
  size_t          cap;
  float          *dc;        /* (N, C, H, W) gradient reaching c */
  float          *dcat;      /* (N, max channels, H, W) scratch */
  float          *g;         /* (N, D, H, W) scratch */
  float          *dz;        /* (N, 1, H, W) scratch */
  CamlConvScratch scratch;
} CaResConv;

static gboolean
ca_res_conv_setup (CamlLayer *layer, GError **error)
{
  int k = (int) layer->opt[OPT_KERNEL];
  int depth = (int) layer->opt[OPT_DEPTH];
  int l = (int) layer->opt[OPT_SUBLAYERS];
  int form = (int) layer->opt[OPT_V_FORM];
  CamlConvGeom g0;
  if (!caml_conv_geom_init (&g0, &layer->in, k, 1, CAML_PADDING_SAME, "ca_res_conv", error))
    return FALSE;
  if (form == V_SUM && l > 1 && g0.c != depth)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                   "v_form \"sum\" adds the input to the sublayer outputs, so the input "
                   "channels %d must equal depth %d", g0.c, depth);
      return FALSE;
    }

  CaResConv *s = g_new0 (CaResConv, 1);
  s->cin = g0.c;
  s->depth = depth;
  s->l = l;
  s->p = g0.p;
  s->gated = layer->opt[OPT_ALWAYS_ON] == 0.0;
  s->act = (CamlActivation) layer->opt[OPT_ACTIVATION];
  for (int j = 0; j < l; j++)
    {
      Sub *sb = &s->sub[j];
      sb->nv = MIN ((int) layer->opt[OPT_N_V], j);
      sb->ns = MIN ((int) layer->opt[OPT_N_SIGMA], j);
      sb->dense = j == 0 || form == V_DENSE;
      CamlShape sv = caml_shape_image (s->cin + sb->nv * depth, g0.h, g0.w);
      CamlShape sc = caml_shape_image (s->cin + sb->ns * depth, g0.h, g0.w);
      caml_conv_geom_init (&sb->gv, &sv, k, 1, CAML_PADDING_SAME, "ca_res_conv", NULL);
      caml_conv_geom_init (&sb->gc, &sc, k, 1, CAML_PADDING_SAME, "ca_res_conv", NULL);
      int fan_out = depth * k * k;
      if (sb->dense)
        {
          sb->W = caml_layer_add_param (layer, "W", CAML_GROUP_VALUE,
                                        s->act == CAML_ACT_RELU ? CAML_INIT_HE : CAML_INIT_GLOROT,
                                        sb->gv.kk, fan_out, (size_t) depth * sb->gv.kk);
          sb->b = caml_layer_add_param (layer, "b", CAML_GROUP_VALUE, CAML_INIT_ZERO,
                                        sb->gv.kk, fan_out, depth);
        }
      if (s->gated)
        {
          sb->u = caml_layer_add_param (layer, "u", CAML_GROUP_GATE, CAML_INIT_GLOROT,
                                        sb->gc.kk, 1, sb->gc.kk);
          sb->b_chi = caml_layer_add_param (layer, "b_chi", CAML_GROUP_GATE,
                                            CAML_INIT_ZERO, sb->gc.kk, 1, 1);
          sb->w0 = caml_layer_add_param (layer, "w0", CAML_GROUP_VALUE, CAML_INIT_SMALL,
                                         sb->gc.kk, depth, depth);
        }
    }
  layer->out = caml_shape_image (depth, g0.h, g0.w);
  layer->state = s;
  return TRUE;
}

static void
ca_res_conv_free_buffers (CaResConv *s)
{
  for (int j = 0; j < s->l; j++)
    {
      Sub *sb = &s->sub[j];
      g_clear_pointer (&sb->cat_v, g_free);
      g_clear_pointer (&sb->cat_c, g_free);
      g_clear_pointer (&sb->v, g_free);
      g_clear_pointer (&sb->chi, g_free);
      g_clear_pointer (&sb->w, g_free);
      g_clear_pointer (&sb->dw, g_free);
    }
  g_clear_pointer (&s->dc, g_free);
  g_clear_pointer (&s->dcat, g_free);
  g_clear_pointer (&s->g, g_free);
  g_clear_pointer (&s->dz, g_free);
}

/* Every sublayer's caches and the gradient scratch, for batches of up to
 * n samples (P positions each). */
static gboolean
ca_res_conv_reserve (CamlLayer *layer, int n, gboolean allocate, size_t *bytes)
{
  CaResConv *s = layer->state;
  CamlScratch sc = { .allocate = allocate && (size_t) n > s->cap, .bytes = *bytes };
  size_t N = n, P = s->p, DP = (size_t) s->depth * s->p;
  int widest = s->cin;
  if (sc.allocate)
    ca_res_conv_free_buffers (s);
  for (int j = 0; j < s->l; j++)
    {
      Sub *sb = &s->sub[j];
      if (sb->dense && sb->nv > 0)
        caml_scratch_floats (&sc, &sb->cat_v, NULL, N, P * sb->gv.c);
      if (s->gated)
        {
          if (sb->ns > 0)
            caml_scratch_floats (&sc, &sb->cat_c, NULL, N, P * sb->gc.c);
          caml_scratch_floats (&sc, &sb->chi, NULL, N, P);
        }
      caml_scratch_floats (&sc, &sb->v, NULL, N, DP);
      caml_scratch_floats (&sc, &sb->w, NULL, N, DP);
      caml_scratch_floats (&sc, &sb->dw, NULL, N, DP);
      widest = MAX (widest, MAX (sb->gv.c, sb->gc.c));
    }
  caml_scratch_floats (&sc, &s->dc, NULL, N, P * s->cin);
  caml_scratch_floats (&sc, &s->dcat, NULL, N, P * widest);
  caml_scratch_floats (&sc, &s->g, NULL, N, DP);
  caml_scratch_floats (&sc, &s->dz, NULL, N, P);
  *bytes = sc.bytes;
  if (sc.failed)
    {
      ca_res_conv_free_buffers (s);
      s->cap = 0;
      return FALSE;
    }
  if (sc.allocate)
    s->cap = n;
  return TRUE;
}

/* The input of sublayer j over m previous outputs: c itself when m = 0,
 * else cat (N, C + m·D, H, W) = [c, w_{j−1}, …, w_{j−m}] per sample. */
static const float *
concat_inputs (const CaResConv *s, int j, int m, float *cat, const float *c, int n)
{
  if (m == 0)
    return c;
  size_t dc = (size_t) s->cin * s->p, du = (size_t) s->depth * s->p;
  size_t width = dc + m * du;
  for (int i = 0; i < n; i++)
    {
      float *row = cat + i * width;
      memcpy (row, c + i * dc, dc * sizeof (float));
      for (int t = 1; t <= m; t++)
        memcpy (row + dc + (t - 1) * du, s->sub[j - t].w + i * du, du * sizeof (float));
    }
  return cat;
}

/* The inverse for gradients: dc += dcat's c part, dw_{j−t} += the rest. */
static void
scatter_grads (CaResConv *s, int j, int m, const float *dcat, int n)
{
  size_t dc = (size_t) s->cin * s->p, du = (size_t) s->depth * s->p;
  size_t width = dc + m * du;
  for (int i = 0; i < n; i++)
    {
      const float *row = dcat + i * width;
      float *dci = s->dc + i * dc;
      for (size_t a = 0; a < dc; a++)
        dci[a] += row[a];
      for (int t = 1; t <= m; t++)
        {
          float *dwi = s->sub[j - t].dw + i * du;
          const float *src = row + dc + (t - 1) * du;
          for (size_t a = 0; a < du; a++)
            dwi[a] += src[a];
        }
    }
}

static void
ca_res_conv_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  CaResConv *s = layer->state;
  size_t ND = (size_t) n * s->depth * s->p;
  caml_scratch_require (layer, n);

  for (int j = 0; j < s->l; j++)
    {
      Sub *sb = &s->sub[j];
      if (sb->dense)
        {
          const float *x = concat_inputs (s, j, sb->nv, sb->cat_v, inp, n);
          caml_conv_plain_forward (&sb->gv, sb->v, x, sb->W->w, sb->b->w, s->depth,
                                   s->act, n, &s->scratch);
        }
      else
        {
          memcpy (sb->v, inp, ND * sizeof (float));   /* C == depth here */
          for (int t = 1; t <= sb->nv; t++)
            for (size_t a = 0; a < ND; a++)
              sb->v[a] += s->sub[j - t].w[a];
        }
      if (s->gated)
        {
          const float *x = concat_inputs (s, j, sb->ns, sb->cat_c, inp, n);
          caml_conv_plain_forward (&sb->gc, sb->chi, x, sb->u->w, sb->b_chi->w, 1,
                                   CAML_ACT_SIGMOID, n, &s->scratch);
          caml_gate_mix_maps_forward (sb->w, sb->chi, sb->v, sb->w0->w, n, s->depth, s->p);
        }
      else
        memcpy (sb->w, sb->v, ND * sizeof (float));
    }
  memcpy (out, s->sub[s->l - 1].w, ND * sizeof (float));
}

static void
ca_res_conv_backward (CamlLayer *layer, float *dinp, const float *dout,
                      const float *inp, const float *out, int n)
{
  CaResConv *s = layer->state;
  size_t ND = (size_t) n * s->depth * s->p;

  memset (s->dc, 0, (size_t) n * s->cin * s->p * sizeof (float));
  for (int j = 0; j < s->l - 1; j++)
    memset (s->sub[j].dw, 0, ND * sizeof (float));
  memcpy (s->sub[s->l - 1].dw, dout, ND * sizeof (float));

  for (int j = s->l - 1; j >= 0; j--)
    {
      Sub *sb = &s->sub[j];
      float *dv = s->g;   /* gradient reaching v_j */
      if (s->gated)
        {
          caml_gate_mix_maps_backward (dv, s->dz, sb->w0->dw, sb->dw, sb->chi, sb->v,
                                       sb->w0->w, n, s->depth, s->p);
          const float *x = sb->ns > 0 ? sb->cat_c : inp;
          caml_conv_plain_backward (&sb->gc, s->dcat, sb->u->dw, sb->b_chi->dw, s->dz, x,
                                    sb->chi, sb->u->w, 1, CAML_ACT_SIGMOID, n, &s->scratch);
          scatter_grads (s, j, sb->ns, s->dcat, n);
        }
      else
        memcpy (dv, sb->dw, ND * sizeof (float));

      if (sb->dense)
        {
          const float *x = sb->nv > 0 ? sb->cat_v : inp;
          caml_conv_plain_backward (&sb->gv, s->dcat, sb->W->dw, sb->b->dw, dv, x, sb->v,
                                    sb->W->w, s->depth, s->act, n, &s->scratch);
          scatter_grads (s, j, sb->nv, s->dcat, n);
        }
      else
        {
          for (size_t a = 0; a < ND; a++)
            s->dc[a] += dv[a];
          for (int t = 1; t <= sb->nv; t++)
            for (size_t a = 0; a < ND; a++)
              s->sub[j - t].dw[a] += dv[a];
        }
    }
  if (dinp != NULL)
    memcpy (dinp, s->dc, (size_t) n * s->cin * s->p * sizeof (float));
}

static const float *
ca_res_conv_chi (CamlLayer *layer, int *chi_per_sample)
{
  CaResConv *s = layer->state;
  *chi_per_sample = s->p;
  /* The σ-map of the last sublayer: the one that decides the block output. */
  return s->gated ? s->sub[s->l - 1].chi : NULL;
}

static void
ca_res_conv_flops (CamlLayer *layer, int n, double *forward, double *backward)
{
  CaResConv *s = layer->state;
  double f = 0.0;
  for (int j = 0; j < s->l; j++)
    {
      const Sub *sb = &s->sub[j];
      if (sb->dense)
        f += 2.0 * s->depth * sb->gv.kk * (double) s->p * n;
      if (s->gated)
        f += 2.0 * sb->gc.kk * (double) s->p * n;
    }
  *forward = f;
  *backward = 2 * f;
}

static void
ca_res_conv_free (CamlLayer *layer)
{
  CaResConv *s = layer->state;
  ca_res_conv_free_buffers (s);
  caml_conv_scratch_free (&s->scratch);
  g_free (s);
}

const CamlLayerOps caml_ca_res_conv_ops = {
  .name = "ca_res_conv",
  .title = "Conv CA-RES",
  .description = "Block of l CA-CNN sublayers fed by c and earlier outputs, (l, n_v, n_σ, b)",
  .context_aware = TRUE,
  .baseline = "conv2d",
  .options = ca_res_conv_options,
  .n_options = G_N_ELEMENTS (ca_res_conv_options),
  .setup = ca_res_conv_setup,
  .forward = ca_res_conv_forward,
  .backward = ca_res_conv_backward,
  .chi = ca_res_conv_chi,
  .free = ca_res_conv_free,
  .flops = ca_res_conv_flops,
  .reserve = ca_res_conv_reserve,
};
