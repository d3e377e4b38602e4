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
 * The fixed-norm mode (caml_sem_configure) holds ‖v0‖ = b: the v0 step
 * maximises v0·g on that sphere, g = Xᵀ(n χ̃²) + u Σ n χ̃ (1 − χ̃) a (the
 * numerator above), so v0 = b g / ‖g‖; E is bounded below there and the fit
 * stops when an iteration lowers E by less than FIXED_NORM_TOLERANCE of it.
 * Word vectors may be centred (minus the mean occurrence, a sum over the
 * shards) and unit-normalised first; every word's vector, in the fit or in
 * a sentence, goes through the same transform.
 *
 * Shards (caml_sem_new_shard: `caml sem` under mpirun). Every sum of the
 * fit is a sum over words, so shard s of S holds only the words of index
 * [⌊s·V/S⌋, ⌊(s+1)·V/S⌋) and a sum function adds each shard's part: the
 * matrix Σ n w wᵀ and the mean word of the initial v0 once (D² + D values),
 * then per iteration one vector of D + 4: Xᵀ(n χ̃²), Σ n χ̃², Σ n χ̃ (1 − χ̃) a
 * and E at the new v0 (summed together: the least-squares sums of the next
 * iteration are computed with the energy of this one), and a stop wish, so
 * that every shard keeps, rejects and stops alike. The D × D work (the
 * power iteration) and the new v0 are computed again on every shard from
 * the same sums, so every shard holds the same v0.
 *
 * SIF. s = Σ_w a/(a + p(w)) w / |{tokens with a vector}|, then the first
 * principal component of the set's sentence vectors is removed (see
 * caml_remove_first_pc). */
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "caml-private.h"
#include "blas.h"

#define PC_MAX_ITERATIONS 20000
#define PC_TOLERANCE      1e-12
/* FIXED_NORM: an iteration that lowers E by less than this fraction counts
 * as not lowering it. At the fixed point E moves only in its last bits, and
 * where the fit stops must not hang on them (shards round otherwise than
 * one process). */
#define FIXED_NORM_TOLERANCE 1e-12

/* R: the rows of this shard (R = V with one shard). */
struct _CamlSem {
  const CamlEmbeddings *emb;     /* borrowed */
  int         V, D;              /* V: the corpus words with a vector, on every shard */
  int         R;
  double     *X;                 /* (R, D) the shard's corpus words' vectors */
  double     *n;                 /* (R) occurrences */
  double     *norm2;             /* (R) ‖w‖² */
  double      total;             /* Σ n over all V words */
  CamlSumFunc sum;               /* NULL: one shard */
  gpointer    sum_data;
  double     *v0;                /* (D) */
  /* the state at v0 */
  double     *u;                 /* (D) v0 / ‖v0‖ */
  double      b;                 /* ‖v0‖ */
  double     *a;                 /* (R) w·u */
  double     *chi;               /* (R) χ̃ */
  double      energy;
  double     *sums;              /* (SUMS) summed over the shards, at v0 */
  /* scratch for a candidate v0 */
  double     *v0_new, *u_new, *a_new, *chi_new, *sums_new, *g;
  GArray     *energies;          /* double */
  int         iterations;
  CamlSemStop stop;
  /* caml_sem_configure */
  gboolean    configured;
  CamlSemMode mode;
  CamlSemVectors vectors;
  double      fixed_b;           /* FIXED_NORM: ‖v0‖; 0 otherwise */
  double     *centre;            /* (D) CENTRED: the mean occurrence; NULL otherwise */
};

/* What an iteration sums over the words (and the shards), after Xᵀ(n χ̃²) (D). */
enum { SUM_DEN, SUM_H, SUM_ENERGY, SUM_STOP, N_SUMS };
#define SUMS(D) ((gsize) (D) + N_SUMS)

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
caml_sem_new_shard (const CamlEmbeddings *emb, const CamlVocab *corpus, int shard,
                    int n_shards, CamlSumFunc sum, gpointer user_data, GError **error)
{
  g_return_val_if_fail (emb != NULL && corpus != NULL, NULL);
  g_return_val_if_fail (n_shards >= 1 && shard >= 0 && shard < n_shards, NULL);
  g_return_val_if_fail (n_shards == 1 || sum != NULL, NULL);
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
  /* this shard's words: [first, last) of the V, in the corpus's order */
  int first = (int) ((gint64) shard * V / n_shards);
  int last = (int) ((gint64) (shard + 1) * V / n_shards);

  CamlSem *sem = g_new0 (CamlSem, 1);
  sem->emb = emb;
  sem->V = V;
  sem->D = D;
  sem->R = last - first;
  sem->sum = n_shards > 1 ? sum : NULL;   /* one shard has nothing to add */
  sem->sum_data = user_data;
  sem->X = g_new (double, (gsize) sem->R * D);
  sem->n = g_new (double, sem->R);
  sem->norm2 = g_new (double, sem->R);
  sem->v0 = g_new0 (double, D);
  sem->v0_new = g_new0 (double, D);
  sem->u = g_new0 (double, D);
  sem->u_new = g_new0 (double, D);
  sem->a = g_new0 (double, sem->R);
  sem->chi = g_new0 (double, sem->R);
  sem->a_new = g_new0 (double, sem->R);
  sem->chi_new = g_new0 (double, sem->R);
  sem->g = g_new0 (double, sem->R);
  sem->sums = g_new0 (double, SUMS (D));
  sem->sums_new = g_new0 (double, SUMS (D));
  sem->energies = g_array_new (FALSE, FALSE, sizeof (double));
  sem->stop = CAML_SEM_NOT_FITTED;

  for (int i = 0, word = 0; i < size; i++)
    {
      gint64 count = caml_vocab_count (corpus, i);
      const float *w = count > 0 ? caml_embeddings_lookup (emb, caml_vocab_word (corpus, i))
                                 : NULL;
      if (w == NULL)
        continue;
      sem->total += (double) count;   /* over every shard's words: the same on each */
      if (word >= first && word < last)
        {
          int row = word - first;
          double *x = sem->X + (gsize) row * D;
          for (int k = 0; k < D; k++)
            x[k] = w[k];
          sem->n[row] = (double) count;
          sem->norm2[row] = dot (x, x, D);
        }
      word++;
    }
  return sem;
}

CamlSem *
caml_sem_new (const CamlEmbeddings *emb, const CamlVocab *corpus, GError **error)
{
  return caml_sem_new_shard (emb, corpus, 0, 1, NULL, NULL, error);
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
  g_free (sem->u_new);
  g_free (sem->a);
  g_free (sem->chi);
  g_free (sem->a_new);
  g_free (sem->chi_new);
  g_free (sem->g);
  g_free (sem->sums);
  g_free (sem->sums_new);
  g_array_free (sem->energies, TRUE);
  g_free (sem->centre);
  g_free (sem);
}

/* Adds every shard's values (in place); nothing to add with one shard. */
static gboolean
sum_shards (const CamlSem *sem, double *values, gsize n, GError **error)
{
  return sem->sum == NULL || sem->sum (values, n, sem->sum_data, error);
}

/* x (D) as configured: minus the centre, then divided by its norm (a zero
 * vector stays zero). */
static void
transform (const CamlSem *sem, double *x)
{
  int D = sem->D;
  if (sem->centre != NULL)
    for (int k = 0; k < D; k++)
      x[k] -= sem->centre[k];
  if (sem->vectors & CAML_SEM_VECTORS_UNIT)
    {
      double norm = sqrt (dot (x, x, D));
      for (int k = 0; k < D && norm > 0; k++)
        x[k] /= norm;
    }
}

gboolean
caml_sem_configure (CamlSem *sem, CamlSemMode mode, CamlSemVectors vectors, GError **error)
{
  g_return_val_if_fail (sem != NULL && !sem->configured && sem->energies->len == 0, FALSE);
  g_return_val_if_fail (mode == CAML_SEM_LITERAL || mode == CAML_SEM_FIXED_NORM, FALSE);
  int R = sem->R, D = sem->D;
  sem->configured = TRUE;
  sem->mode = mode;
  sem->vectors = vectors & (CAML_SEM_VECTORS_CENTRED | CAML_SEM_VECTORS_UNIT);
  if (vectors & CAML_SEM_VECTORS_CENTRED)
    {
      /* the mean occurrence over every shard's words: D values summed */
      double *centre = g_new0 (double, D);
      for (int i = 0; i < R; i++)
        for (int k = 0; k < D; k++)
          centre[k] += sem->n[i] * sem->X[(gsize) i * D + k] / sem->total;
      if (!sum_shards (sem, centre, D, error))
        {
          g_free (centre);
          return FALSE;
        }
      sem->centre = centre;
    }
  for (int i = 0; i < R; i++)
    {
      double *x = sem->X + (gsize) i * D;
      transform (sem, x);
      sem->norm2[i] = dot (x, x, D);
    }
  if (mode == CAML_SEM_FIXED_NORM)
    {
      if (sem->vectors & CAML_SEM_VECTORS_UNIT)
        sem->fixed_b = 1.0;
      else
        {
          double b = 0;
          for (int i = 0; i < R; i++)
            b += sem->n[i] * sqrt (sem->norm2[i]) / sem->total;
          if (!sum_shards (sem, &b, 1, error))
            return FALSE;
          sem->fixed_b = b;
        }
      if (!(sem->fixed_b > 0))
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                       "every corpus word's vector is zero%s: v0 has no length to hold",
                       sem->centre != NULL ? " once centred" : "");
          return FALSE;
        }
    }
  return TRUE;
}

double
caml_sem_fixed_norm (const CamlSem *sem)
{
  return sem->fixed_b;
}

/* FIXED_NORM: v (D) scaled to ‖v‖ = b (left as it is when zero). */
static void
hold_norm (const CamlSem *sem, double *v)
{
  if (sem->mode != CAML_SEM_FIXED_NORM)
    return;
  double norm = sqrt (dot (v, v, sem->D));
  for (int k = 0; k < sem->D && norm > 0; k++)
    v[k] *= sem->fixed_b / norm;
}

/* χ̃ of a word with projection a on u and c² = ‖w'‖², for b = ‖v0‖. */
static inline double
closed_form_chi (double a, double c2, double b)
{
  double den = b * b + c2;
  double chi = den > 0 ? a * b / den : 1.0;
  return CLAMP (chi, 0.0, 1.0);
}

/* w' and χ̃ at v0 for the shard's words — a (R) and chi (R) are written —
 * and its part of the sums (SUMS) at that state: the least-squares sums
 * Xᵀ(n χ̃²), Σ n χ̃² and Σ n χ̃ (1 − χ̃) a that give the next v0, and E. */
static void
evaluate (CamlSem *sem, const double *v0, double *a, double *chi, double *sums)
{
  int R = sem->R, D = sem->D;
  double b = sqrt (dot (v0, v0, D));
  double *u = sem->u_new;
  for (int k = 0; k < D; k++)
    u[k] = b > 0 ? v0[k] / b : 0.0;
  if (R > 0)
    cblas_dgemv (CblasRowMajor, CblasNoTrans, R, D, 1.0, sem->X, D, u, 1, 0.0, a, 1);
  double energy = 0, den = 0, h = 0;
  for (int i = 0; i < R; i++)
    {
      double c2 = MAX (sem->norm2[i] - a[i] * a[i], 0.0);
      chi[i] = closed_form_chi (a[i], c2, b);
      double along = a[i] - chi[i] * b;
      energy += sem->n[i] * (along * along + chi[i] * chi[i] * c2);
      sem->g[i] = sem->n[i] * chi[i] * chi[i];
      den += sem->g[i];
      h += sem->n[i] * chi[i] * (1.0 - chi[i]) * a[i];
    }
  /* a BLAS returns at once for an empty matrix, leaving y as it was */
  memset (sums, 0, sizeof (double) * SUMS (D));
  if (R > 0)
    cblas_dgemv (CblasRowMajor, CblasTrans, R, D, 1.0, sem->X, D, sem->g, 1, 0.0, sums, 1);
  sums[D + SUM_DEN] = den;
  sums[D + SUM_H] = h;
  sums[D + SUM_ENERGY] = energy;
}

/* The least-squares v0 given w' (through the current u) and χ̃, from the
 * sums over every word at the current state:
 * v0 = (Xᵀ(n χ̃²) + u Σ n χ̃ (1 − χ̃) a) / Σ n χ̃². */
static gboolean
least_squares_v0 (CamlSem *sem, double *out, GError **error)
{
  int D = sem->D;
  double den = sem->sums[D + SUM_DEN], h = sem->sums[D + SUM_H], b = sem->b;
  if (sem->mode == CAML_SEM_FIXED_NORM && den > 0 && b > 0)
    {
      /* on the sphere ‖v0‖ = b: maximise v0·g, g the numerator below */
      for (int k = 0; k < D; k++)
        out[k] = sem->sums[k] + h * sem->v0[k] / b;
      double norm = sqrt (dot (out, out, D));
      if (!(norm > 0))
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_DIVERGED,
                       "v0 has no least-squares direction (Σ n χ̃ (w − (1 − χ̃) w') = 0)");
          return FALSE;
        }
      for (int k = 0; k < D; k++)
        out[k] *= sem->fixed_b / norm;
      return TRUE;
    }
  if (den <= 0 || b <= 0)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_DIVERGED, "%s: v0 has no least-squares "
                   "solution", b <= 0 ? "v0 is zero" : "every word's χ̃ is 0");
      return FALSE;
    }
  for (int k = 0; k < D; k++)
    out[k] = (sem->sums[k] + h * sem->v0[k] / b) / den;
  return TRUE;
}

/* Makes v0 current: its u, b, the words' a and χ̃, E and the sums. */
static gboolean
set_state (CamlSem *sem, GError **error)
{
  int D = sem->D;
  sem->b = sqrt (dot (sem->v0, sem->v0, D));
  for (int k = 0; k < D; k++)
    sem->u[k] = sem->b > 0 ? sem->v0[k] / sem->b : 0.0;
  evaluate (sem, sem->v0, sem->a, sem->chi, sem->sums);
  if (!sum_shards (sem, sem->sums, SUMS (D), error))
    return FALSE;
  sem->energy = sem->sums[D + SUM_ENERGY];
  g_array_set_size (sem->energies, 0);
  g_array_append_val (sem->energies, sem->energy);
  sem->iterations = 0;
  sem->stop = CAML_SEM_NOT_FITTED;
  return TRUE;
}

gboolean
caml_sem_set_v0 (CamlSem *sem, const double *v0, GError **error)
{
  memcpy (sem->v0, v0, sizeof (double) * sem->D);
  hold_norm (sem, sem->v0);
  return set_state (sem, error);
}

gboolean
caml_sem_init (CamlSem *sem, GError **error)
{
  int R = sem->R, D = sem->D;
  /* C = Σ n w wᵀ = Yᵀ Y with the rows of Y = sqrt(n) w, and the mean word:
   * one block (D² + D) that the shards sum. */
  double *Y = g_new (double, (gsize) R * D);
  double *C = g_new0 (double, (gsize) D * D + D);
  double *mean = C + (gsize) D * D;
  for (int i = 0; i < R; i++)
    {
      double s = sqrt (sem->n[i]);
      for (int k = 0; k < D; k++)
        {
          Y[(gsize) i * D + k] = s * sem->X[(gsize) i * D + k];
          mean[k] += sem->n[i] * sem->X[(gsize) i * D + k] / sem->total;
        }
    }
  if (R > 0)
    cblas_dsyrk (CblasRowMajor, CblasUpper, CblasTrans, D, R, 1.0, Y, D, 0.0, C, D);
  g_free (Y);
  if (!sum_shards (sem, C, (gsize) D * D + D, error))
    {
      g_free (C);
      return FALSE;
    }
  double *q = g_new (double, D);
  /* Centred vectors have a mean of 0 but for rounding, which differs from
   * shard to shard: their start and orientation come from the centre (the
   * mean before centring), their scale from the occurrences' root mean
   * square projection. */
  top_eigenvector (C, D, sem->centre != NULL ? sem->centre : mean, q);
  /* Orient and scale it by the occurrences' mean projection on it: the
   * least-squares multiple of q for the mean word (1 when that is 0). */
  double m = dot (mean, q, D);
  double scale = m != 0 ? fabs (m) : 1.0, sign = m < 0 ? -1.0 : 1.0;
  if (sem->centre != NULL)
    {
      double *Cq = g_new (double, D);
      cblas_dsymv (CblasRowMajor, CblasUpper, D, 1.0, C, D, q, 1, 0.0, Cq, 1);
      double lambda = dot (q, Cq, D);
      g_free (Cq);
      scale = lambda > 0 ? sqrt (lambda / sem->total) : 1.0;
      sign = dot (sem->centre, q, D) < 0 ? -1.0 : 1.0;
    }
  for (int k = 0; k < D; k++)
    sem->v0[k] = sign * scale * q[k];
  hold_norm (sem, sem->v0);
  g_free (C);
  g_free (q);
  return set_state (sem, error);
}

gboolean
caml_sem_iterate (CamlSem *sem, int max_iterations, CamlSemProgressFunc func,
                  gpointer user_data, GError **error)
{
  g_return_val_if_fail (sem != NULL && max_iterations >= 0, FALSE);
  int D = sem->D;
  if (!set_state (sem, error))
    return FALSE;
  gboolean go_on = func == NULL || func (0, sem->energy, user_data);
  gboolean agreed = sem->sum == NULL;   /* every shard knows whether any wished to stop */
  for (int k = 1; k <= max_iterations; k++)
    {
      /* One shard stops at once; several learn of a wish to stop with the
       * sums of the next iteration, which is then not kept. */
      if (!go_on && sem->sum == NULL)
        break;
      if (!least_squares_v0 (sem, sem->v0_new, error))
        return FALSE;
      evaluate (sem, sem->v0_new, sem->a_new, sem->chi_new, sem->sums_new);
      sem->sums_new[D + SUM_STOP] = !go_on;
      if (!sum_shards (sem, sem->sums_new, SUMS (D), error))
        return FALSE;
      if (sem->sums_new[D + SUM_STOP] > 0)
        {
          go_on = FALSE;
          agreed = TRUE;
          break;
        }
      double e = sem->sums_new[D + SUM_ENERGY];
      g_array_append_val (sem->energies, e);
      double below = sem->mode == CAML_SEM_FIXED_NORM
                     ? sem->energy - FIXED_NORM_TOLERANCE * fabs (sem->energy) : sem->energy;
      if (!(e < below))
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
      t = sem->sums, sem->sums = sem->sums_new, sem->sums_new = t;
      sem->b = sqrt (dot (sem->v0, sem->v0, D));
      for (int d = 0; d < D; d++)
        sem->u[d] = sem->v0[d] / sem->b;
      sem->energy = e;
      sem->iterations = k;
      go_on = func == NULL || func (k, e, user_data);
    }
  if (!agreed)   /* at the cap: whether a shard wished to stop after the last */
    {
      double stop = !go_on;
      if (!sum_shards (sem, &stop, 1, error))
        return FALSE;
      go_on = !(stop > 0);
    }
  sem->stop = go_on ? CAML_SEM_CAP : CAML_SEM_STOPPED;
  return TRUE;
}

gboolean
caml_sem_fit (CamlSem *sem, int max_iterations, CamlSemProgressFunc func,
              gpointer user_data, GError **error)
{
  return caml_sem_init (sem, error)
         && caml_sem_iterate (sem, max_iterations, func, user_data, error);
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

/* A word's vector as the fit sees it (transform) into x (D); FALSE without
 * a vector. */
static gboolean
word_vector (const CamlSem *sem, const char *word, double *x)
{
  const float *w = caml_embeddings_lookup (sem->emb, word);
  if (w == NULL)
    return FALSE;
  for (int k = 0; k < sem->D; k++)
    x[k] = w[k];
  transform (sem, x);
  return TRUE;
}

/* χ̃ of the vector x at the current v0, and a = x·u. */
static double
word_chi (const CamlSem *sem, const double *x, double *a_out)
{
  double a = 0, norm2 = 0;
  for (int k = 0; k < sem->D; k++)
    {
      a += x[k] * sem->u[k];
      norm2 += x[k] * x[k];
    }
  *a_out = a;
  return closed_form_chi (a, MAX (norm2 - a * a, 0.0), sem->b);
}

double
caml_sem_chi (const CamlSem *sem, const char *word)
{
  double *x = g_new (double, sem->D);
  double a, chi = word_vector (sem, word, x) ? word_chi (sem, x, &a) : 1.0;
  g_free (x);
  return chi;
}

gboolean
caml_sem_word_prime (const CamlSem *sem, const char *word, float *out)
{
  double *x = g_new (double, sem->D);
  gboolean found = word_vector (sem, word, x);
  if (found)
    {
      double a = dot (x, sem->u, sem->D);
      for (int k = 0; k < sem->D; k++)
        out[k] = (float) (x[k] - a * sem->u[k]);
    }
  g_free (x);
  return found;
}

void
caml_sem_embed (const CamlSem *sem, const char *const *tokens, int n_tokens,
                CamlSemForm form, float *out)
{
  int D = sem->D;
  double *s = g_new0 (double, 2 * D), *x = s + D;
  double chi_sum = 0;
  for (int t = 0; t < n_tokens; t++)
    {
      if (!word_vector (sem, tokens[t], x))
        {
          chi_sum += 1.0;   /* out of vocabulary: χ̃ = 1, all v0 */
          continue;
        }
      double a;
      double chi = word_chi (sem, x, &a);
      chi_sum += chi;
      for (int k = 0; k < D; k++)
        s[k] += (1.0 - chi) * (x[k] - a * sem->u[k]);
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
