/* sem.c — CA-SEM (the paper's Sec. 3.1, Eq. 16–18, Algorithm 1) and its
 * baselines: the average of word vectors and SIF.
 *
 * Letters: V corpus words that have a vector, D their dimension.
 *
 * CA-SEM. Every word w of the corpus, seen n_w times, is decomposed as
 *
 *     w ≈ χ̃(w) v0 + (1 − χ̃(w)) w',   v0 ⊥ w',  χ̃(w) ∈ [0, 1]
 *
 * minimising E = Σ_w n_w ‖w − χ̃(w) v0 − (1 − χ̃(w)) w'‖² (Eq. 17). With
 * b = ‖v0‖, u = v0 / b, a_w = w·u and c²_w = ‖w‖² − a_w²:
 *
 *   given v0:  w' = w − a_w u                          (the projection, Eq. 16's constraint)
 *              χ̃(w) = clamp(a_w b / (b² + c²_w), 0, 1)  (closest point of the segment
 *                                                       [w', v0] to w)
 *              residual r_w = (a_w − χ̃ b) u + χ̃ w', so ‖r_w‖² = (a_w − χ̃ b)² + χ̃² c²_w
 *   given w', χ̃:  v0 = Σ n χ̃ (w − (1 − χ̃) w') / Σ n χ̃²   (linear least squares)
 *                   = (Xᵀ (n χ̃²) + u Σ n χ̃ (1 − χ̃) a) / Σ n χ̃²
 *
 * so an iteration is two matrix–vector products over X (V, D) (OpenBLAS
 * dgemv) and O(V) arithmetic. E(v0) is the energy with w' and χ̃ given by
 * v0 — the state the constraints hold in and the sentence embeddings use.
 * v0 starts as the first principal component of all word occurrences (the
 * top eigenvector of Σ n w wᵀ, not mean-centred), oriented so that the
 * occurrences' mean projection on it is positive and scaled to that mean
 * projection. Iterations stop when E(v0) does not decrease — that v0 is not
 * kept — or at the cap.
 *
 * Note: given v0 and χ̃, w' = projection is the paper's definition, not the
 * minimiser of E over w' (that would be w_⊥ / (1 − χ̃), which makes every
 * residual along w' vanish and the decomposition trivial); so E(v0) is not
 * guaranteed to fall at every iteration, which is why the stopping rule
 * keeps the last v0 that lowered it. The χ̃ step and the v0 step are exact
 * minimisers of E given the other variables (tests/test-sem.c checks both).
 * And E(v0) has no minimiser at finite ‖v0‖: a word with a > 0 contributes
 * n a² c² / (b² + c²) → 0 as b grows, so in practice E keeps falling while
 * ‖v0‖ grows and every χ̃ shrinks; the iteration cap ends the fit
 * (docs/sem.md, "CA-SEM").
 *
 * SIF. s = Σ_w a/(a + p(w)) w / |{tokens with a vector}|, then the first
 * principal component of the set's sentence vectors is removed (see
 * caml_remove_first_pc). */
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "caml.h"
#include "blas.h"

#define PC_MAX_ITERATIONS 20000
#define PC_TOLERANCE      1e-12

struct _CamlSem {
  const CamlEmbeddings *emb;     /* borrowed */
  int         V, D;
  double     *X;                 /* (V, D) the corpus words' vectors */
  double     *n;                 /* (V) occurrences */
  double     *norm2;             /* (V) ‖w‖² */
  double      total;             /* Σ n */
  double     *v0;                /* (D) */
  /* the state at v0 */
  double     *u;                 /* (D) v0 / ‖v0‖ */
  double      b;                 /* ‖v0‖ */
  double     *a;                 /* (V) w·u */
  double     *chi;               /* (V) χ̃ */
  double      energy;
  /* scratch for a candidate v0 */
  double     *v0_new, *a_new, *chi_new, *g;
  GArray     *energies;          /* double */
  int         iterations;
  CamlSemStop stop;
};

/* --------------------------------------------------------------- helpers */

static double
dot (const double *x, const double *y, int n)
{
  double s = 0;
  for (int i = 0; i < n; i++)
    s += x[i] * y[i];
  return s;
}

/* The top eigenvector of the symmetric positive semi-definite (D, D) matrix
 * C (upper triangle) by power iteration from `start`, into q (unit). It
 * stops when ‖C q − λ q‖ ≤ PC_TOLERANCE · λ, λ = qᵀ C q, or at the cap. */
static void
top_eigenvector (const double *C, int d, const double *start, double *q)
{
  double *next = g_new (double, d);
  double norm = sqrt (dot (start, start, d));
  for (int k = 0; k < d; k++)
    q[k] = norm > 0 ? start[k] / norm : (k == 0);
  for (int it = 0; it < PC_MAX_ITERATIONS; it++)
    {
      cblas_dsymv (CblasRowMajor, CblasUpper, d, 1.0, C, d, q, 1, 0.0, next, 1);
      double lambda = dot (q, next, d), residual = 0;
      for (int k = 0; k < d; k++)
        residual += (next[k] - lambda * q[k]) * (next[k] - lambda * q[k]);
      double len = sqrt (dot (next, next, d));
      if (len == 0)
        break;
      for (int k = 0; k < d; k++)
        q[k] = next[k] / len;
      if (sqrt (residual) <= PC_TOLERANCE * lambda)
        break;
    }
  g_free (next);
}

/* --------------------------------------------------------------- CA-SEM */

CamlSem *
caml_sem_new (const CamlEmbeddings *emb, const CamlVocab *corpus, GError **error)
{
  g_return_val_if_fail (emb != NULL && corpus != NULL, NULL);
  caml_blas_init ();
  int size = caml_vocab_size (corpus), V = 0, D = emb->dim;
  for (int i = 0; i < size; i++)
    if (caml_vocab_count (corpus, i) > 0
        && caml_embeddings_lookup (emb, caml_vocab_word (corpus, i)) != NULL)
      V++;
  if (V == 0)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "none of the corpus's %d words has a vector in the embeddings", size);
      return NULL;
    }

  CamlSem *sem = g_new0 (CamlSem, 1);
  sem->emb = emb;
  sem->V = V;
  sem->D = D;
  sem->X = g_new (double, (gsize) V * D);
  sem->n = g_new (double, V);
  sem->norm2 = g_new (double, V);
  sem->v0 = g_new0 (double, D);
  sem->v0_new = g_new0 (double, D);
  sem->u = g_new0 (double, D);
  sem->a = g_new0 (double, V);
  sem->chi = g_new0 (double, V);
  sem->a_new = g_new0 (double, V);
  sem->chi_new = g_new0 (double, V);
  sem->g = g_new0 (double, V);
  sem->energies = g_array_new (FALSE, FALSE, sizeof (double));
  sem->stop = CAML_SEM_NOT_FITTED;

  for (int i = 0, row = 0; i < size; i++)
    {
      gint64 count = caml_vocab_count (corpus, i);
      const float *w = count > 0 ? caml_embeddings_lookup (emb, caml_vocab_word (corpus, i))
                                 : NULL;
      if (w == NULL)
        continue;
      double *x = sem->X + (gsize) row * D;
      for (int k = 0; k < D; k++)
        x[k] = w[k];
      sem->n[row] = (double) count;
      sem->norm2[row] = dot (x, x, D);
      sem->total += (double) count;
      row++;
    }
  return sem;
}

void
caml_sem_free (CamlSem *sem)
{
  if (sem == NULL)
    return;
  g_free (sem->X);
  g_free (sem->n);
  g_free (sem->norm2);
  g_free (sem->v0);
  g_free (sem->v0_new);
  g_free (sem->u);
  g_free (sem->a);
  g_free (sem->chi);
  g_free (sem->a_new);
  g_free (sem->chi_new);
  g_free (sem->g);
  g_array_free (sem->energies, TRUE);
  g_free (sem);
}

/* χ̃ of a word with projection a on u and c² = ‖w'‖², for b = ‖v0‖. */
static inline double
closed_form_chi (double a, double c2, double b)
{
  double den = b * b + c2;
  double chi = den > 0 ? a * b / den : 1.0;
  return CLAMP (chi, 0.0, 1.0);
}

/* w', χ̃ and E at v0: a (V) and chi (V) are written; returns E. */
static double
evaluate (const CamlSem *sem, const double *v0, double *a, double *chi)
{
  int V = sem->V, D = sem->D;
  double b = sqrt (dot (v0, v0, D));
  double *u = g_new (double, D);
  for (int k = 0; k < D; k++)
    u[k] = b > 0 ? v0[k] / b : 0.0;
  cblas_dgemv (CblasRowMajor, CblasNoTrans, V, D, 1.0, sem->X, D, u, 1, 0.0, a, 1);
  g_free (u);
  double energy = 0;
  for (int i = 0; i < V; i++)
    {
      double c2 = MAX (sem->norm2[i] - a[i] * a[i], 0.0);
      chi[i] = closed_form_chi (a[i], c2, b);
      double along = a[i] - chi[i] * b;
      energy += sem->n[i] * (along * along + chi[i] * chi[i] * c2);
    }
  return energy;
}

/* The least-squares v0 given w' (through a and the current u) and χ̃. */
static gboolean
least_squares_v0 (CamlSem *sem, const double *v0, const double *a, const double *chi,
                  double *out, GError **error)
{
  int V = sem->V, D = sem->D;
  double den = 0, h = 0;
  for (int i = 0; i < V; i++)
    {
      sem->g[i] = sem->n[i] * chi[i] * chi[i];
      den += sem->g[i];
      h += sem->n[i] * chi[i] * (1.0 - chi[i]) * a[i];
    }
  double b = sqrt (dot (v0, v0, D));
  if (den <= 0 || b <= 0)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_DIVERGED, "%s: v0 has no least-squares "
                   "solution", b <= 0 ? "v0 is zero" : "every word's χ̃ is 0");
      return FALSE;
    }
  cblas_dgemv (CblasRowMajor, CblasTrans, V, D, 1.0, sem->X, D, sem->g, 1, 0.0, out, 1);
  for (int k = 0; k < D; k++)
    out[k] = (out[k] + h * v0[k] / b) / den;
  return TRUE;
}

/* Makes v0 current: its u, b, the words' a and χ̃, and E. */
static void
set_state (CamlSem *sem)
{
  int D = sem->D;
  sem->b = sqrt (dot (sem->v0, sem->v0, D));
  for (int k = 0; k < D; k++)
    sem->u[k] = sem->b > 0 ? sem->v0[k] / sem->b : 0.0;
  sem->energy = evaluate (sem, sem->v0, sem->a, sem->chi);
  g_array_set_size (sem->energies, 0);
  g_array_append_val (sem->energies, sem->energy);
  sem->iterations = 0;
  sem->stop = CAML_SEM_NOT_FITTED;
}

void
caml_sem_set_v0 (CamlSem *sem, const double *v0)
{
  memcpy (sem->v0, v0, sizeof (double) * sem->D);
  set_state (sem);
}

void
caml_sem_init (CamlSem *sem)
{
  int V = sem->V, D = sem->D;
  /* C = Σ n w wᵀ = Yᵀ Y with the rows of Y = sqrt(n) w. */
  double *Y = g_new (double, (gsize) V * D);
  double *mean = g_new0 (double, D);
  for (int i = 0; i < V; i++)
    {
      double s = sqrt (sem->n[i]);
      for (int k = 0; k < D; k++)
        {
          Y[(gsize) i * D + k] = s * sem->X[(gsize) i * D + k];
          mean[k] += sem->n[i] * sem->X[(gsize) i * D + k] / sem->total;
        }
    }
  double *C = g_new0 (double, (gsize) D * D);
  cblas_dsyrk (CblasRowMajor, CblasUpper, CblasTrans, D, V, 1.0, Y, D, 0.0, C, D);
  double *q = g_new (double, D);
  top_eigenvector (C, D, mean, q);
  /* Orient and scale it by the occurrences' mean projection on it: the
   * least-squares multiple of q for the mean word (1 when that is 0). */
  double m = dot (mean, q, D);
  double scale = m != 0 ? fabs (m) : 1.0, sign = m < 0 ? -1.0 : 1.0;
  for (int k = 0; k < D; k++)
    sem->v0[k] = sign * scale * q[k];
  g_free (Y);
  g_free (mean);
  g_free (C);
  g_free (q);
  set_state (sem);
}

gboolean
caml_sem_iterate (CamlSem *sem, int max_iterations, CamlSemProgressFunc func,
                  gpointer user_data, GError **error)
{
  g_return_val_if_fail (sem != NULL && max_iterations >= 0, FALSE);
  set_state (sem);
  gboolean go_on = func == NULL || func (0, sem->energy, user_data);
  for (int k = 1; k <= max_iterations && go_on; k++)
    {
      if (!least_squares_v0 (sem, sem->v0, sem->a, sem->chi, sem->v0_new, error))
        return FALSE;
      double e = evaluate (sem, sem->v0_new, sem->a_new, sem->chi_new);
      g_array_append_val (sem->energies, e);
      if (!(e < sem->energy))
        {
          sem->stop = CAML_SEM_CONVERGED;
          if (func != NULL)
            func (k, e, user_data);
          return TRUE;
        }
      double *t;
      t = sem->v0, sem->v0 = sem->v0_new, sem->v0_new = t;
      t = sem->a, sem->a = sem->a_new, sem->a_new = t;
      t = sem->chi, sem->chi = sem->chi_new, sem->chi_new = t;
      sem->b = sqrt (dot (sem->v0, sem->v0, sem->D));
      for (int d = 0; d < sem->D; d++)
        sem->u[d] = sem->v0[d] / sem->b;
      sem->energy = e;
      sem->iterations = k;
      go_on = func == NULL || func (k, e, user_data);
    }
  sem->stop = go_on ? CAML_SEM_CAP : CAML_SEM_STOPPED;
  return TRUE;
}

gboolean
caml_sem_fit (CamlSem *sem, int max_iterations, CamlSemProgressFunc func,
              gpointer user_data, GError **error)
{
  caml_sem_init (sem);
  return caml_sem_iterate (sem, max_iterations, func, user_data, error);
}

int
caml_sem_dim (const CamlSem *sem)
{
  return sem->D;
}

int
caml_sem_n_words (const CamlSem *sem)
{
  return sem->V;
}

double
caml_sem_occurrences (const CamlSem *sem)
{
  return sem->total;
}

const double *
caml_sem_v0 (const CamlSem *sem)
{
  return sem->v0;
}

int
caml_sem_iterations (const CamlSem *sem)
{
  return sem->iterations;
}

CamlSemStop
caml_sem_stop_reason (const CamlSem *sem)
{
  return sem->stop;
}

const double *
caml_sem_energies (const CamlSem *sem, int *n)
{
  *n = (int) sem->energies->len;
  return (const double *) sem->energies->data;
}

double
caml_sem_energy (const CamlSem *sem)
{
  return sem->energy;
}

/* χ̃ of the vector w at the current v0, and a = w·u. */
static double
word_chi (const CamlSem *sem, const float *w, double *a_out)
{
  double a = 0, norm2 = 0;
  for (int k = 0; k < sem->D; k++)
    {
      a += w[k] * sem->u[k];
      norm2 += (double) w[k] * w[k];
    }
  *a_out = a;
  return closed_form_chi (a, MAX (norm2 - a * a, 0.0), sem->b);
}

double
caml_sem_chi (const CamlSem *sem, const char *word)
{
  const float *w = caml_embeddings_lookup (sem->emb, word);
  double a;
  return w != NULL ? word_chi (sem, w, &a) : 1.0;
}

gboolean
caml_sem_word_prime (const CamlSem *sem, const char *word, float *out)
{
  const float *w = caml_embeddings_lookup (sem->emb, word);
  if (w == NULL)
    return FALSE;
  double a = 0;
  for (int k = 0; k < sem->D; k++)
    a += w[k] * sem->u[k];
  for (int k = 0; k < sem->D; k++)
    out[k] = (float) (w[k] - a * sem->u[k]);
  return TRUE;
}

void
caml_sem_embed (const CamlSem *sem, const char *const *tokens, int n_tokens,
                CamlSemForm form, float *out)
{
  int D = sem->D;
  double *s = g_new0 (double, D);
  double chi_sum = 0;
  for (int t = 0; t < n_tokens; t++)
    {
      const float *w = caml_embeddings_lookup (sem->emb, tokens[t]);
      if (w == NULL)
        {
          chi_sum += 1.0;   /* out of vocabulary: χ̃ = 1, all v0 */
          continue;
        }
      double a;
      double chi = word_chi (sem, w, &a);
      chi_sum += chi;
      for (int k = 0; k < D; k++)
        s[k] += (1.0 - chi) * (w[k] - a * sem->u[k]);
    }
  for (int k = 0; k < D; k++)
    out[k] = (float) (form == CAML_SEM_FULL ? s[k] + chi_sum * sem->v0[k] : s[k]);
  g_free (s);
}

/* ------------------------------------------------------------- baselines */

int
caml_embeddings_average (const CamlEmbeddings *emb, const char *const *tokens, int n_tokens,
                         float *out)
{
  int D = emb->dim, found = 0;
  double *s = g_new0 (double, D);
  for (int t = 0; t < n_tokens; t++)
    {
      const float *w = caml_embeddings_lookup (emb, tokens[t]);
      if (w == NULL)
        continue;
      found++;
      for (int k = 0; k < D; k++)
        s[k] += w[k];
    }
  for (int k = 0; k < D; k++)
    out[k] = found > 0 ? (float) (s[k] / found) : 0.0f;
  g_free (s);
  return found;
}

struct _CamlSif {
  const CamlEmbeddings *emb;          /* borrowed */
  const CamlVocab      *frequencies;  /* borrowed */
  double                total;        /* Σ counts */
  double                a;
};

CamlSif *
caml_sif_new (const CamlEmbeddings *emb, const CamlVocab *frequencies, double a)
{
  g_return_val_if_fail (emb != NULL && frequencies != NULL && a > 0, NULL);
  CamlSif *sif = g_new0 (CamlSif, 1);
  sif->emb = emb;
  sif->frequencies = frequencies;
  sif->a = a;
  for (int i = 0; i < caml_vocab_size (frequencies); i++)
    sif->total += (double) caml_vocab_count (frequencies, i);
  return sif;
}

void
caml_sif_free (CamlSif *sif)
{
  g_free (sif);
}

double
caml_sif_weight (const CamlSif *sif, const char *word)
{
  int id = caml_vocab_lookup (sif->frequencies, word);
  double p = id >= 0 && sif->total > 0
             ? (double) caml_vocab_count (sif->frequencies, id) / sif->total : 0.0;
  return sif->a / (sif->a + p);
}

int
caml_sif_embed (const CamlSif *sif, const char *const *tokens, int n_tokens, float *out)
{
  int D = sif->emb->dim, found = 0;
  double *s = g_new0 (double, D);
  for (int t = 0; t < n_tokens; t++)
    {
      const float *w = caml_embeddings_lookup (sif->emb, tokens[t]);
      if (w == NULL)
        continue;
      found++;
      double weight = caml_sif_weight (sif, tokens[t]);
      for (int k = 0; k < D; k++)
        s[k] += weight * w[k];
    }
  for (int k = 0; k < D; k++)
    out[k] = found > 0 ? (float) (s[k] / found) : 0.0f;
  g_free (s);
  return found;
}

void
caml_remove_first_pc (float *x, int n, int d, float *pc)
{
  /* The top right singular vector of x = the top eigenvector of xᵀx. */
  caml_blas_init ();
  double *Y = g_new (double, (gsize) n * d);
  double *mean = g_new0 (double, d);
  for (gsize i = 0; i < (gsize) n * d; i++)
    Y[i] = x[i];
  for (int i = 0; i < n; i++)
    for (int k = 0; k < d; k++)
      mean[k] += Y[(gsize) i * d + k];
  double *C = g_new0 (double, (gsize) d * d);
  cblas_dsyrk (CblasRowMajor, CblasUpper, CblasTrans, d, n, 1.0, Y, d, 0.0, C, d);
  double *q = g_new (double, d);
  /* Start from the rows' sum: near the top component for data with a
   * common direction, and never orthogonal to it unless the sum is 0. */
  top_eigenvector (C, d, mean, q);
  for (int i = 0; i < n; i++)
    {
      double p = dot (Y + (gsize) i * d, q, d);
      for (int k = 0; k < d; k++)
        x[(gsize) i * d + k] = (float) (Y[(gsize) i * d + k] - p * q[k]);
    }
  if (pc != NULL)
    for (int k = 0; k < d; k++)
      pc[k] = (float) q[k];
  g_free (Y);
  g_free (mean);
  g_free (C);
  g_free (q);
}

/* ------------------------------------------------------------ evaluation */

double
caml_cosine (const float *a, const float *b, int d)
{
  double ab = 0, aa = 0, bb = 0;
  for (int k = 0; k < d; k++)
    {
      ab += (double) a[k] * b[k];
      aa += (double) a[k] * a[k];
      bb += (double) b[k] * b[k];
    }
  return aa > 0 && bb > 0 ? ab / sqrt (aa * bb) : 0.0;
}

/* The mean of v and the largest distance from it (0: constant; NaN or
 * infinite when v holds a value that is not finite). */
static void
centre_scale (const double *v, int n, double *mean, double *scale)
{
  double m = 0;
  for (int i = 0; i < n; i++)
    m += v[i] / n;   /* no overflow for values near DBL_MAX */
  double s = 0;
  for (int i = 0; i < n; i++)
    s = isnan (v[i]) ? v[i] : fmax (s, fabs (v[i] - m));
  *mean = m;
  *scale = s;
}

double
caml_pearson (const double *x, const double *y, int n)
{
  if (n < 2)
    return NAN;
  /* On the deviations divided by the largest: r does not depend on the
   * scale, and squares of values beyond 1e154 overflowed (r read 0). */
  double mx, my, kx, ky;
  centre_scale (x, n, &mx, &kx);
  centre_scale (y, n, &my, &ky);
  if (!(kx > 0 && ky > 0 && isfinite (kx) && isfinite (ky)))
    return NAN;
  double sxy = 0, sxx = 0, syy = 0;
  for (int i = 0; i < n; i++)
    {
      double u = (x[i] - mx) / kx, v = (y[i] - my) / ky;
      sxy += u * v;
      sxx += u * u;
      syy += v * v;
    }
  return sxy / sqrt (sxx * syy);
}
