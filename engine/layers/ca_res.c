/* ca_res.c — the multi-layer context-aware block, CA-RES (Eq. 42, Sec. 4.7.1),
 * configured by (l, n_v, n_σ, b). For sublayers k = 1..l (0-based here):
 *
 *   w_k = χ_k · v_k + (1 − χ_k) · w_k0
 *   v_k = act(W_k · [c, w_{k−1}, …, w_{k−n_v}] + b_k)    form "dense"
 *   v_k = c + w_{k−1} + … + w_{k−n_v}                     form "sum" (k ≥ 2)
 *   χ_k = sigmoid(u_k · [c, w_{k−1}, …, w_{k−n_σ}] + b_χk), or 1 when b = 1
 *
 * v_1 is always dense. Only the sublayers that exist are used: sublayer k sees
 * min(n_v, k−1) previous outputs. The block output is w_l. With (2, 1, –, 1)
 * and the sum form this is exactly a ResNet block: c + act(W c + b). */
#include "layers.h"

enum {
  OPT_UNITS, OPT_SUBLAYERS, OPT_N_V, OPT_N_SIGMA, OPT_ALWAYS_ON, OPT_V_FORM,
  OPT_ACTIVATION
};

static const char *const v_form_names[] = { "dense", "sum", NULL };
enum { V_DENSE, V_SUM };

#define MAX_SUBLAYERS 12

static const CamlOptionSpec ca_res_options[] = {
  [OPT_UNITS]     = { "units", CAML_OPT_INT, "width of every sublayer output", 1, 65536, 5, NULL },
  [OPT_SUBLAYERS] = { "sublayers", CAML_OPT_INT, "l: number of CA-NN sublayers",
                      1, MAX_SUBLAYERS, 2, NULL },
  [OPT_N_V]       = { "n_v", CAML_OPT_INT, "previous outputs feeding each value v_k",
                      1, MAX_SUBLAYERS, 1, NULL },
  [OPT_N_SIGMA]   = { "n_sigma", CAML_OPT_INT, "previous outputs feeding each gate χ_k",
                      1, MAX_SUBLAYERS, 1, NULL },
  [OPT_ALWAYS_ON] = { "always_on", CAML_OPT_BOOL, "b: gates fixed at χ = 1 (no w0)",
                      0, 1, 0, NULL },
  [OPT_V_FORM]    = { "v_form", CAML_OPT_ENUM, "how v_k (k ≥ 2) combines its inputs",
                      0, 0, V_DENSE, v_form_names },
  [OPT_ACTIVATION]= { "activation", CAML_OPT_ENUM, "activation of the dense values",
                      0, 0, CAML_ACT_TANH, caml_activation_names },
};

typedef struct {
  int        nv, ns;     /* previous outputs actually used by v and χ */
  int        dv, dc;     /* widths of the v and χ inputs */
  gboolean   dense;      /* v is dense (else sum) */
  CamlParam *W, *b;      /* (U, dv), (U) when dense */
  CamlParam *u, *b_chi;  /* (1, dc), (1) when gated */
  CamlParam *w0;         /* (U) when gated */
  float     *cat_v;      /* (N, dv) when dense */
  float     *cat_c;      /* (N, dc) when gated */
  float     *v;          /* (N, U) */
  float     *chi;        /* (N) when gated */
  float     *w;          /* (N, U) output of this sublayer (the last one writes out) */
  float     *dw;         /* (N, U) gradient reaching w_k */
} Sub;

typedef struct {
  int            d, u, l;
  gboolean       gated;
  CamlActivation act;
  Sub            sub[MAX_SUBLAYERS];
  size_t         cap;
  float         *dc;     /* (N, D) gradient reaching c */
  float         *dcat;   /* (N, max(dv, dc)) scratch */
  float         *g;      /* (N, U) scratch */
  float         *dz;     /* (N) scratch */
} CaRes;

static gboolean
ca_res_setup (CamlLayer *layer, GError **error)
{
  int d = (int) caml_shape_size (&layer->in);
  int u = (int) layer->opt[OPT_UNITS];
  int form = (int) layer->opt[OPT_V_FORM];
  int l = (int) layer->opt[OPT_SUBLAYERS];

  if (form == V_SUM && l > 1 && d != u)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                   "v_form \"sum\" adds the input to the sublayer outputs, so the input "
                   "width %d must equal units %d", d, u);
      return FALSE;
    }

  CaRes *s = g_new0 (CaRes, 1);
  s->d = d;
  s->u = u;
  s->l = l;
  s->gated = layer->opt[OPT_ALWAYS_ON] == 0.0;
  s->act = (CamlActivation) layer->opt[OPT_ACTIVATION];
  for (int k = 0; k < l; k++)
    {
      Sub *sb = &s->sub[k];
      sb->nv = MIN ((int) layer->opt[OPT_N_V], k);
      sb->ns = MIN ((int) layer->opt[OPT_N_SIGMA], k);
      sb->dense = k == 0 || form == V_DENSE;
      sb->dv = d + sb->nv * u;
      sb->dc = d + sb->ns * u;
      if (sb->dense)
        {
          sb->W = caml_layer_add_param (layer, "W", CAML_GROUP_VALUE,
                                        s->act == CAML_ACT_RELU ? CAML_INIT_HE : CAML_INIT_GLOROT,
                                        sb->dv, u, (size_t) u * sb->dv);
          sb->b = caml_layer_add_param (layer, "b", CAML_GROUP_VALUE, CAML_INIT_ZERO,
                                        sb->dv, u, u);
        }
      if (s->gated)
        {
          sb->u = caml_layer_add_param (layer, "u", CAML_GROUP_GATE, CAML_INIT_GLOROT,
                                        sb->dc, 1, sb->dc);
          sb->b_chi = caml_layer_add_param (layer, "b_chi", CAML_GROUP_GATE,
                                            CAML_INIT_ZERO, sb->dc, 1, 1);
          sb->w0 = caml_layer_add_param (layer, "w0", CAML_GROUP_VALUE, CAML_INIT_SMALL,
                                         sb->dc, u, u);
        }
    }
  layer->out = caml_shape_flat (u);
  layer->state = s;
  return TRUE;
}

static void
ca_res_free_buffers (CaRes *s)
{
  for (int k = 0; k < s->l; k++)
    {
      Sub *sb = &s->sub[k];
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
 * n samples. */
static gboolean
ca_res_reserve (CamlLayer *layer, int n, gboolean allocate, size_t *bytes)
{
  CaRes *s = layer->state;
  CamlScratch sc = { .allocate = allocate && (size_t) n > s->cap, .bytes = *bytes };
  size_t N = n, U = s->u;
  int widest = s->d;
  if (sc.allocate)
    ca_res_free_buffers (s);
  for (int k = 0; k < s->l; k++)
    {
      Sub *sb = &s->sub[k];
      if (sb->dense)
        caml_scratch_floats (&sc, &sb->cat_v, NULL, N, sb->dv);
      if (s->gated)
        {
          caml_scratch_floats (&sc, &sb->cat_c, NULL, N, sb->dc);
          caml_scratch_floats (&sc, &sb->chi, NULL, N, 1);
        }
      caml_scratch_floats (&sc, &sb->v, NULL, N, U);
      caml_scratch_floats (&sc, &sb->w, NULL, N, U);
      caml_scratch_floats (&sc, &sb->dw, NULL, N, U);
      widest = MAX (widest, MAX (sb->dv, sb->dc));
    }
  caml_scratch_floats (&sc, &s->dc, NULL, N, s->d);
  caml_scratch_floats (&sc, &s->dcat, NULL, N, widest);
  caml_scratch_floats (&sc, &s->g, NULL, N, U);
  caml_scratch_floats (&sc, &s->dz, NULL, N, 1);
  *bytes = sc.bytes;
  if (sc.failed)
    {
      ca_res_free_buffers (s);
      s->cap = 0;
      return FALSE;
    }
  if (sc.allocate)
    s->cap = n;
  return TRUE;
}

/* cat (N, d + m·U) = [c, w_{k−1}, …, w_{k−m}] */
static void
concat_inputs (const CaRes *s, int k, int m, float *cat, const float *c, int n)
{
  int width = s->d + m * s->u;
  for (int i = 0; i < n; i++)
    {
      float *row = cat + (size_t) i * width;
      memcpy (row, c + (size_t) i * s->d, s->d * sizeof (float));
      for (int j = 1; j <= m; j++)
        memcpy (row + s->d + (j - 1) * s->u, s->sub[k - j].w + (size_t) i * s->u,
                s->u * sizeof (float));
    }
}

/* The inverse of concat_inputs for gradients: dc += dcat[:, :d], dw_{k−j} += … */
static void
scatter_grads (CaRes *s, int k, int m, const float *dcat, int n)
{
  int width = s->d + m * s->u;
  for (int i = 0; i < n; i++)
    {
      const float *row = dcat + (size_t) i * width;
      float *dci = s->dc + (size_t) i * s->d;
      for (int a = 0; a < s->d; a++)
        dci[a] += row[a];
      for (int j = 1; j <= m; j++)
        {
          float *dwi = s->sub[k - j].dw + (size_t) i * s->u;
          const float *src = row + s->d + (j - 1) * s->u;
          for (int a = 0; a < s->u; a++)
            dwi[a] += src[a];
        }
    }
}

static void
ca_res_forward (CamlLayer *layer, float *out, const float *inp, int n)
{
  CaRes *s = layer->state;
  size_t NU = (size_t) n * s->u;
  caml_scratch_require (layer, n);

  for (int k = 0; k < s->l; k++)
    {
      Sub *sb = &s->sub[k];
      if (sb->dense)
        {
          concat_inputs (s, k, sb->nv, sb->cat_v, inp, n);
          caml_linear_forward (sb->v, sb->cat_v, sb->W->w, sb->b->w, n, sb->dv, s->u);
          caml_activation_forward (s->act, sb->v, sb->v, NU);
        }
      else
        {
          memcpy (sb->v, inp, NU * sizeof (float));   /* d == u here */
          for (int j = 1; j <= sb->nv; j++)
            for (size_t a = 0; a < NU; a++)
              sb->v[a] += s->sub[k - j].w[a];
        }
      if (s->gated)
        {
          concat_inputs (s, k, sb->ns, sb->cat_c, inp, n);
          caml_linear_forward (sb->chi, sb->cat_c, sb->u->w, sb->b_chi->w, n, sb->dc, 1);
          caml_activation_forward (CAML_ACT_SIGMOID, sb->chi, sb->chi, n);
          caml_gate_mix_forward (sb->w, sb->chi, sb->v, sb->w0->w, n, s->u);
        }
      else
        memcpy (sb->w, sb->v, NU * sizeof (float));
    }
  memcpy (out, s->sub[s->l - 1].w, NU * sizeof (float));
}

static void
ca_res_backward (CamlLayer *layer, float *dinp, const float *dout,
                 const float *inp, const float *out, int n)
{
  CaRes *s = layer->state;
  size_t NU = (size_t) n * s->u;

  memset (s->dc, 0, (size_t) n * s->d * sizeof (float));
  for (int k = 0; k < s->l - 1; k++)
    memset (s->sub[k].dw, 0, NU * sizeof (float));
  memcpy (s->sub[s->l - 1].dw, dout, NU * sizeof (float));

  for (int k = s->l - 1; k >= 0; k--)
    {
      Sub *sb = &s->sub[k];
      float *dv = s->g;   /* gradient reaching v_k */
      if (s->gated)
        {
          caml_gate_mix_backward (dv, s->dz, sb->w0->dw, sb->dw, sb->chi, sb->v,
                                  sb->w0->w, n, s->u);
          caml_activation_backward (CAML_ACT_SIGMOID, s->dz, s->dz, sb->chi, n, FALSE);
          caml_linear_backward (s->dcat, sb->u->dw, sb->b_chi->dw, s->dz, sb->cat_c,
                                sb->u->w, n, sb->dc, 1, FALSE);
          scatter_grads (s, k, sb->ns, s->dcat, n);
        }
      else
        memcpy (dv, sb->dw, NU * sizeof (float));

      if (sb->dense)
        {
          caml_activation_backward (s->act, dv, dv, sb->v, NU, FALSE);
          caml_linear_backward (s->dcat, sb->W->dw, sb->b->dw, dv, sb->cat_v, sb->W->w,
                                n, sb->dv, s->u, FALSE);
          scatter_grads (s, k, sb->nv, s->dcat, n);
        }
      else
        {
          for (size_t a = 0; a < NU; a++)
            s->dc[a] += dv[a];
          for (int j = 1; j <= sb->nv; j++)
            for (size_t a = 0; a < NU; a++)
              s->sub[k - j].dw[a] += dv[a];
        }
    }
  if (dinp != NULL)
    memcpy (dinp, s->dc, (size_t) n * s->d * sizeof (float));
}

static const float *
ca_res_chi (CamlLayer *layer, int *chi_per_sample)
{
  CaRes *s = layer->state;
  *chi_per_sample = 1;
  /* The gate of the last sublayer: the one that decides the block output. */
  return s->gated ? s->sub[s->l - 1].chi : NULL;
}

static void
ca_res_free (CamlLayer *layer)
{
  CaRes *s = layer->state;
  ca_res_free_buffers (s);
  g_free (s);
}

const CamlLayerOps caml_ca_res_ops = {
  .name = "ca_res",
  .title = "CA-RES",
  .description = "Block of l CA-NN sublayers fed by c and earlier outputs, (l, n_v, n_σ, b)",
  .context_aware = TRUE,
  .baseline = "dense",
  .options = ca_res_options,
  .n_options = G_N_ELEMENTS (ca_res_options),
  .setup = ca_res_setup,
  .forward = ca_res_forward,
  .backward = ca_res_backward,
  .chi = ca_res_chi,
  .free = ca_res_free,
  .reserve = ca_res_reserve,
};
