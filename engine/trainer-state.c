/* trainer-state.c — a run's state in a file, so that another process can
 * resume it exactly: with the weights file beside it, a run stopped (or
 * finished) at step S and resumed to T is the run asked for T steps from
 * the start, bit for bit (tests/test-trainer.c, tests/cli-resume.sh).
 *
 * What the weights do not hold: the optimizer's state, the step count and
 * what the run measured (losses, evaluation rows, tokens, seconds). The
 * batch order and dropout's masks are not stored: both come from generators
 * seeded by the experiment and moved on by the step count alone, so loading
 * draws them again (caml_trainer_redraw, CamlLayerOps.advance) — a
 * shuffle per epoch and a draw per dropped-out value, ~10⁸ a second.
 *
 * Little-endian throughout:
 *
 *   8 bytes   magic CAML_TRAINER_STATE_MAGIC ("CAMLTST1")
 *   u32       version (CAML_TRAINER_STATE_VERSION, 1)
 *   u64       the experiment's seed
 *   u64       weight count W (model->n_weights)
 *   u32       training samples, u32 batch size (as the trainer uses it)
 *   u32       optimizer kind (CamlOptimizerKind), u32 state blocks K
 *   32 bytes  SHA-256 of the weights (W binary32) the state belongs with
 *   i64       steps done S, i64 tokens trained on
 *   u32       the first step's loss (binary32; -1 before any step)
 *   f64 × 4   seconds, of them evaluating, steps/s, tokens/s
 *   u32       group count G (CAML_N_GROUPS); G × i64 updates per group
 *   S × f32   the loss of every step
 *   u32       evaluation rows R; R × (i64 step, f64 train_loss, test_loss,
 *             test_metric, seconds, eval_seconds, i64 tokens)
 *   K × W f32 the optimizer's state (caml_optimizer_state)
 *   32 bytes  SHA-256 of every byte before it
 *
 * Reading checks everything — structure, checksum, then the run it is
 * loaded into (seed, weights, data, batch, optimizer), then every value —
 * before the trainer changes: a state that fails leaves it as it was. */
#include <math.h>
#include <string.h>

#include "bin-io.h"
#include "trainer-private.h"

#define MAGIC_LEN 8
#define ROW_BYTES (2 * 8 + 5 * 8)

G_STATIC_ASSERT (sizeof CAML_TRAINER_STATE_MAGIC - 1 == MAGIC_LEN);

/* What a state file holds, read from a trainer (borrowed, under its lock)
 * or copied out of it (CamlTrainerStateCopy owns these). */
typedef struct {
  guint64            seed;
  size_t             n_weights;
  guint32            train_n, batch, kind;
  int                blocks;
  const float       *w;           /* (n_weights) */
  long               step;
  gint64             tokens;
  float              first_loss;
  double             seconds, eval_seconds, steps_per_second, tokens_per_second;
  long               updates[CAML_N_GROUPS];
  const float       *losses;      /* (n_losses) */
  guint              n_losses;
  const CamlEvalRow *rows;        /* (n_rows) */
  guint              n_rows;
  const float       *opt_state;   /* (blocks, n_weights) */
} Source;

struct _CamlTrainerStateCopy {
  Source src;   /* every pointer owned */
};

/* The SHA-256 of the weights as the weights file stores them. */
static void
weights_digest (const float *w, size_t n, guint8 digest[CAML_BIN_DIGEST_LEN])
{
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  caml_bin_digest (w, n * sizeof (float), digest);
#else
  GByteArray *b = g_byte_array_new ();
  caml_bin_put_floats (b, w, n);
  caml_bin_digest (b->data, b->len, digest);
  g_byte_array_unref (b);
#endif
}

/* ---------------------------------------------------------------- writing */

/* The file's length, its fixed fields rounded up. */
static guint64
source_size (const Source *src)
{
  return 256 + (guint64) src->blocks * src->n_weights * sizeof (float)
         + (guint64) src->n_losses * sizeof (float) + (guint64) src->n_rows * ROW_BYTES;
}

/* Under the trainer's lock: refuses a run whose state is not to be kept,
 * else points src at the trainer's own arrays. A run that diverged has been
 * put back, optimizer and batch order too, to the step it rolled back to:
 * its state is that step's, and a run resumed from it goes on from there.
 * A trainer loaded from a state and not started has that state. From a
 * progress function (the loop's own thread, between two steps) the
 * state is the one the run would keep if it stopped here: the latest update
 * is checked first (a diverged one fails the run, as a closure's check
 * does), and with weight averaging the averaged weights are swapped in —
 * source_done_locked swaps them out again. */
static gboolean
source_from_locked (CamlTrainer *trainer, Source *src, gboolean *swapped, GError **error)
{
  CamlTrainerState state = trainer->state;
  gboolean in_loop = !trainer->done && trainer->loop_thread != NULL
                     && g_thread_self () == trainer->loop_thread;
  /* loaded from a state and not started: that state */
  gboolean loaded = state == CAML_TRAINER_IDLE && trainer->thread == NULL
                    && trainer->opt != NULL;
  const char *refused = state == CAML_TRAINER_FAILED && !trainer->diverged
                        ? "the run failed: it has no state to keep"
                        : in_loop || loaded ? NULL
                        : !trainer->done || trainer->opt == NULL
                        ? (state == CAML_TRAINER_IDLE ? "the run has not started: it has "
                                                        "no state to keep"
                                                      : "the run is under way: stop it, "
                                                        "or let it finish, first")
                        : NULL;
  *swapped = FALSE;
  if (refused != NULL)
    {
      g_set_error_literal (error, CAML_ERROR, CAML_ERROR_INVALID, refused);
      return FALSE;
    }
  if (in_loop && !caml_trainer_settle_locked (trainer))
    {
      trainer->closure_failed = TRUE;
      g_set_error (error, CAML_ERROR, CAML_ERROR_DIVERGED, "the latest update diverged: %s",
                   trainer->error->message);
      return FALSE;
    }

  const CamlModel *model = trainer->model;
  *src = (Source) {
    .seed = trainer->exp->seed, .n_weights = model->n_weights,
    .train_n = (guint32) trainer->train->n, .batch = (guint32) trainer->batch,
    .kind = (guint32) trainer->exp->optimizer.kind, .w = model->w,
    .step = trainer->step, .tokens = trainer->tokens, .first_loss = trainer->first_loss,
    .seconds = caml_trainer_seconds_locked (trainer), .eval_seconds = trainer->eval_seconds,
    .steps_per_second = trainer->steps_per_second,
    .tokens_per_second = trainer->tokens_per_second,
    .losses = (const float *) trainer->losses->data, .n_losses = trainer->losses->len,
    .rows = (const CamlEvalRow *) trainer->rows->data, .n_rows = trainer->rows->len,
  };
  src->opt_state = caml_optimizer_state (trainer->opt, &src->blocks);
  const long *updates = caml_optimizer_updates (trainer->opt);
  memcpy (src->updates, updates, sizeof src->updates);

  /* as a run stopped here would hold them (a finished one has them installed) */
  if (in_loop && trainer->average != NULL)
    {
      caml_average_swap (trainer->average, trainer->model);
      *swapped = TRUE;
    }
  return TRUE;
}

/* Whether the state fits in a file: a GByteArray holds up to 4 GiB. */
static gboolean
source_fits (const Source *src, GError **error)
{
  guint64 size = source_size (src);
  if (size <= G_MAXUINT)
    return TRUE;
  g_autofree char *need = g_format_size (size);
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
               "the run's state (%zu weights' optimizer state and %u losses) takes %s, more "
               "than a state file holds (4 GiB)", src->n_weights, src->n_losses, need);
  return FALSE;
}

/* Undoes what source_from_locked swapped in. */
static void
source_done_locked (CamlTrainer *trainer, gboolean swapped)
{
  if (swapped)
    caml_average_swap (trainer->average, trainer->model);
}

static GBytes *
source_to_bytes (const Source *src)
{
  GByteArray *b = g_byte_array_sized_new ((guint) source_size (src));
  guint8 digest[CAML_BIN_DIGEST_LEN];

  g_byte_array_append (b, (const guint8 *) CAML_TRAINER_STATE_MAGIC, MAGIC_LEN);
  caml_bin_put_u32 (b, CAML_TRAINER_STATE_VERSION);
  caml_bin_put_u64 (b, src->seed);
  caml_bin_put_u64 (b, src->n_weights);
  caml_bin_put_u32 (b, src->train_n);
  caml_bin_put_u32 (b, src->batch);
  caml_bin_put_u32 (b, src->kind);
  caml_bin_put_u32 (b, (guint32) src->blocks);
  weights_digest (src->w, src->n_weights, digest);
  g_byte_array_append (b, digest, sizeof digest);
  caml_bin_put_u64 (b, (guint64) src->step);
  caml_bin_put_u64 (b, (guint64) src->tokens);
  caml_bin_put_floats (b, &src->first_loss, 1);
  caml_bin_put_f64 (b, src->seconds);
  caml_bin_put_f64 (b, src->eval_seconds);
  caml_bin_put_f64 (b, src->steps_per_second);
  caml_bin_put_f64 (b, src->tokens_per_second);
  caml_bin_put_u32 (b, CAML_N_GROUPS);
  for (int g = 0; g < CAML_N_GROUPS; g++)
    caml_bin_put_u64 (b, (guint64) src->updates[g]);
  caml_bin_put_floats (b, src->losses, src->n_losses);
  caml_bin_put_u32 (b, src->n_rows);
  for (guint i = 0; i < src->n_rows; i++)
    {
      const CamlEvalRow *row = &src->rows[i];
      caml_bin_put_u64 (b, (guint64) row->step);
      caml_bin_put_f64 (b, row->train_loss);
      caml_bin_put_f64 (b, row->test_loss);
      caml_bin_put_f64 (b, row->test_metric);
      caml_bin_put_f64 (b, row->seconds);
      caml_bin_put_f64 (b, row->eval_seconds);
      caml_bin_put_u64 (b, (guint64) row->tokens);
    }
  caml_bin_put_floats (b, src->opt_state, (size_t) src->blocks * src->n_weights);
  caml_bin_put_digest (b);
  return g_byte_array_free_to_bytes (b);
}

GBytes *
caml_trainer_state_to_bytes (CamlTrainer *trainer, GError **error)
{
  Source src;
  gboolean swapped;
  g_mutex_lock (&trainer->lock);
  /* held throughout: nothing extends the run while its arrays are read */
  GBytes *bytes = NULL;
  if (source_from_locked (trainer, &src, &swapped, error) && source_fits (&src, error))
    bytes = source_to_bytes (&src);
  source_done_locked (trainer, swapped);
  g_mutex_unlock (&trainer->lock);
  return bytes;
}

/* The trainer's state into copy's arrays, grown as needed and never
 * shrunk (a new copy's: all NULL): when one cannot grow, copy holds what it
 * held, some of it in blocks grown since. */
static gboolean
state_copy_into (CamlTrainer *trainer, CamlTrainerStateCopy *copy, GError **error)
{
  Source src;
  gboolean swapped;
  g_mutex_lock (&trainer->lock);
  if (!source_from_locked (trainer, &src, &swapped, error))
    {
      g_mutex_unlock (&trainer->lock);
      return FALSE;
    }
  /* A copy that cannot be allocated is an error, not an abort: a GUI
   * taking copies as a run goes keeps its older one. */
  size_t sizes[4] = {
    src.n_weights * sizeof (float), src.n_losses * sizeof (float),
    src.n_rows * sizeof (CamlEvalRow), (size_t) src.blocks * src.n_weights * sizeof (float),
  };
  const Source *old = &copy->src;
  size_t had[4] = {
    old->n_weights * sizeof (float), old->n_losses * sizeof (float),
    old->n_rows * sizeof (CamlEvalRow), (size_t) old->blocks * old->n_weights * sizeof (float),
  };
  void *to[4] = { (void *) old->w, (void *) old->losses, (void *) old->rows,
                  (void *) old->opt_state };
  const void *from[4] = { src.w, src.losses, src.rows, src.opt_state };
  size_t total = 0;
  gboolean ok = TRUE;
  for (int i = 0; i < 4 && ok; i++)
    {
      total += sizes[i];
      if (to[i] == NULL || sizes[i] > had[i])
        {
          /* g_try_realloc keeps the old block, and what it holds, when it fails */
          void *grown = g_try_realloc (to[i], MAX (sizes[i], 1));
          ok = grown != NULL;
          if (ok)
            to[i] = grown;
        }
    }
  if (ok)
    for (int i = 0; i < 4; i++)
      if (sizes[i] > 0)   /* an empty array's data may be NULL */
        memcpy (to[i], from[i], sizes[i]);
  source_done_locked (trainer, swapped);
  g_mutex_unlock (&trainer->lock);
  if (!ok)
    {
      /* the old copy, in blocks that may have grown */
      copy->src.w = to[0];
      copy->src.losses = to[1];
      copy->src.rows = to[2];
      copy->src.opt_state = to[3];
      g_autofree char *need = g_format_size (total);
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "a copy of the run's state (the "
                   "weights, the optimizer's state and the history) needs %s, which cannot be "
                   "allocated", need);
      return FALSE;
    }
  copy->src = src;
  copy->src.w = to[0];
  copy->src.losses = to[1];
  copy->src.rows = to[2];
  copy->src.opt_state = to[3];
  return TRUE;
}

CamlTrainerStateCopy *
caml_trainer_state_copy (CamlTrainer *trainer, GError **error)
{
  CamlTrainerStateCopy *copy = g_new0 (CamlTrainerStateCopy, 1);
  if (!state_copy_into (trainer, copy, error))
    {
      caml_trainer_state_copy_free (copy);
      return NULL;
    }
  return copy;
}

gboolean
caml_trainer_state_copy_over (CamlTrainer *trainer, CamlTrainerStateCopy *copy, GError **error)
{
  return state_copy_into (trainer, copy, error);
}

GBytes *
caml_trainer_state_copy_to_bytes (const CamlTrainerStateCopy *copy, GError **error)
{
  return source_fits (&copy->src, error) ? source_to_bytes (&copy->src) : NULL;
}

const float *
caml_trainer_state_copy_get_weights (const CamlTrainerStateCopy *copy, size_t *n_weights)
{
  *n_weights = copy->src.n_weights;
  return copy->src.w;
}

long
caml_trainer_state_copy_get_step (const CamlTrainerStateCopy *copy)
{
  return copy->src.step;
}

void
caml_trainer_state_copy_free (CamlTrainerStateCopy *copy)
{
  if (copy == NULL)
    return;
  g_free ((float *) copy->src.w);
  g_free ((float *) copy->src.losses);
  g_free ((CamlEvalRow *) copy->src.rows);
  g_free ((float *) copy->src.opt_state);
  g_free (copy);
}

/* ---------------------------------------------------------------- loading */

/* Whether nothing has run on the trainer: a state goes only into such. */
static gboolean
trainer_fresh (CamlTrainer *trainer)
{
  g_mutex_lock (&trainer->lock);
  gboolean fresh = trainer->state == CAML_TRAINER_IDLE && trainer->thread == NULL
                   && trainer->step == 0 && trainer->losses->len == 0;
  g_mutex_unlock (&trainer->lock);
  return fresh;
}

/* The optimizer's update counts from a state, after its state blocks. */
static void
set_updates (CamlTrainer *trainer, const long updates[CAML_N_GROUPS])
{
  long *to = caml_optimizer_updates (trainer->opt);
  memcpy (to, updates, CAML_N_GROUPS * sizeof *to);
  caml_optimizer_state_written (trainer->opt);
}

/* A state's step, tokens and timings. With the lock held. */
static void
set_counters_locked (CamlTrainer *trainer, const Source *src)
{
  trainer->step = src->step;
  trainer->tokens = src->tokens;
  trainer->first_loss = src->first_loss;
  trainer->seconds_base = src->seconds;
  trainer->eval_seconds = src->eval_seconds;
  trainer->steps_per_second = src->steps_per_second;
  trainer->tokens_per_second = src->tokens_per_second;
  trainer->rate_seconds = src->seconds - src->eval_seconds;   /* the next window starts here */
  trainer->rate_step = trainer->step;
  trainer->rate_tokens = trainer->tokens;
}

/* Whether src is a state of the trainer's run: its seed, weights, data,
 * batch and optimizer. */
static gboolean
source_of_run (CamlTrainer *trainer, const Source *src, GError **error)
{
  const CamlExperiment *exp = trainer->exp;
  int blocks = caml_optimizer_state_blocks (&exp->optimizer);
  if (src->seed != exp->seed || src->n_weights != trainer->model->n_weights
      || src->train_n != (guint32) trainer->train->n || src->batch != (guint32) trainer->batch
      || src->kind != (guint32) exp->optimizer.kind || src->blocks != blocks)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "the state is of another run (seed %" G_GUINT64_FORMAT ", %zu weights, "
                   "%u training samples, batches of %u, %s with %d state blocks), not of "
                   "this one (seed %" G_GUINT64_FORMAT ", %zu, %d, %d, %s with %d)",
                   src->seed, src->n_weights, src->train_n, src->batch,
                   src->kind <= CAML_OPTIM_ADAM ? caml_optimizer_names[src->kind] : "?",
                   src->blocks, exp->seed, trainer->model->n_weights, trainer->train->n,
                   trainer->batch, caml_optimizer_names[exp->optimizer.kind], blocks);
      return FALSE;
    }
  return TRUE;
}

gboolean
caml_trainer_state_restore (CamlTrainer *trainer, const CamlTrainerStateCopy *copy,
                            GError **error)
{
  const Source *src = &copy->src;

  if (!trainer_fresh (trainer))
    {
      g_set_error_literal (error, CAML_ERROR, CAML_ERROR_INVALID,
                           "a state loads only into a trainer that has not run");
      return FALSE;
    }
  if (!source_of_run (trainer, src, error))
    return FALSE;
  if (!caml_trainer_prepare (trainer, error))
    return FALSE;   /* the last thing that can fail */

  memcpy (trainer->model->w, src->w, src->n_weights * sizeof (float));
  int blocks;
  float *opt_state = caml_optimizer_state (trainer->opt, &blocks);
  memcpy (opt_state, src->opt_state, (size_t) blocks * src->n_weights * sizeof (float));
  set_updates (trainer, src->updates);
  caml_trainer_redraw (trainer, src->step);

  g_mutex_lock (&trainer->lock);
  set_counters_locked (trainer, src);
  g_array_set_size (trainer->losses, 0);
  g_array_append_vals (trainer->losses, src->losses, src->n_losses);
  trainer->last_loss = src->n_losses > 0 ? src->losses[src->n_losses - 1] : NAN;
  g_array_set_size (trainer->rows, 0);
  g_array_append_vals (trainer->rows, src->rows, src->n_rows);
  g_mutex_unlock (&trainer->lock);
  return TRUE;
}

gboolean
caml_trainer_roll_back_further (CamlTrainer *trainer, const CamlTrainerStateCopy *copy,
                                const float *initial, const char *why, GError **error)
{
  g_mutex_lock (&trainer->lock);
  gboolean failed = trainer->state == CAML_TRAINER_FAILED && trainer->diverged
                    && trainer->done && trainer->thread == NULL;
  long now = trainer->step;
  g_mutex_unlock (&trainer->lock);
  if (!failed)
    {
      g_set_error_literal (error, CAML_ERROR, CAML_ERROR_INVALID,
                           "only a run that diverged, and has ended, goes back further");
      return FALSE;
    }
  long to = copy != NULL ? copy->src.step : 0;
  if (to > now)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "the state is of step %ld, after step %ld, where the run stands", to, now);
      return FALSE;
    }
  if (to == now)
    return TRUE;
  if (copy != NULL && !source_of_run (trainer, &copy->src, error))
    return FALSE;

  int blocks;
  float *opt_state = caml_optimizer_state (trainer->opt, &blocks);
  size_t n = trainer->model->n_weights;
  if (copy != NULL)
    {
      memcpy (trainer->model->w, copy->src.w, n * sizeof (float));
      memcpy (opt_state, copy->src.opt_state, (size_t) blocks * n * sizeof (float));
      set_updates (trainer, copy->src.updates);
    }
  else
    {
      /* The optimizer's state as a new one has it (Adagrad's sums start at
       * its initial accumulator). */
      CamlOptimizer *fresh = caml_optimizer_try_new (caml_optimizer_get_config (trainer->opt),
                                                     n, error);
      if (fresh == NULL)
        return FALSE;
      memcpy (trainer->model->w, initial, n * sizeof (float));
      memcpy (opt_state, caml_optimizer_state (fresh, &blocks),
              (size_t) blocks * n * sizeof (float));
      caml_optimizer_free (fresh);
      const long none[CAML_N_GROUPS] = { 0 };
      set_updates (trainer, none);
    }
  caml_trainer_redraw (trainer, to);

  g_mutex_lock (&trainer->lock);
  trainer->step = to;
  trainer->tokens = copy != NULL ? copy->src.tokens : 0;
  trainer->first_loss = copy != NULL ? copy->src.first_loss : -1.0f;
  g_array_set_size (trainer->losses, (guint) to);
  trainer->last_loss = to > 0 ? g_array_index (trainer->losses, float, to - 1) : NAN;
  g_array_set_size (trainer->rows, 0);
  if (copy != NULL)
    g_array_append_vals (trainer->rows, copy->src.rows, copy->src.n_rows);
  trainer->failure.rolled_back_to = trainer->divergence.rolled_back_to = to;
  /* "step 4: …; weights rolled back to step 2" → "…to step 0 (why)" */
  GError *old = trainer->error;
  const char *cut = g_strrstr (old->message, "; weights rolled back to step ");
  g_autofree char *head = g_strndup (old->message, cut != NULL ? (gsize) (cut - old->message)
                                                               : strlen (old->message));
  trainer->error = g_error_new (old->domain, old->code, "%s; weights rolled back to step %ld%s%s%s",
                                head, to, why != NULL ? " (" : "", why != NULL ? why : "",
                                why != NULL ? ")" : "");
  g_error_free (old);
  g_mutex_unlock (&trainer->lock);
  return TRUE;
}

/* ---------------------------------------------------------------- reading */

/* The file's fields, read before any is used. */
typedef struct {
  CamlBinReader bin;
  guint64       seed, n_weights;
  guint32       train_n, batch, kind, blocks;
  gsize         seed_at, n_at, data_at, kind_at, digest_at, step_at, groups_at,
                losses_at, rows_at, opt_at;
  const guint8 *weights_digest;
  guint64       step, tokens;
  float         first_loss;
  double        seconds, eval_seconds, steps_per_second, tokens_per_second;
  guint64       updates[CAML_N_GROUPS];
  const guint8 *losses;     /* (step) binary32 */
  guint32       n_rows;
  const guint8 *rows;       /* (n_rows) ROW_BYTES each */
  const guint8 *opt_state;  /* (blocks, n_weights) binary32 */
} State;

static gboolean
fail_at (State *s, gsize at, const char *format, ...) G_GNUC_PRINTF (3, 4);

/* "SOURCE: byte AT: …" — always FALSE. */
static gboolean
fail_at (State *s, gsize at, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *what = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (s->bin.error, CAML_ERROR, CAML_ERROR_PARSE, "%s: byte %" G_GSIZE_FORMAT ": %s",
               s->bin.source, at, what);
  return FALSE;
}

/* count binary32 values of `what` at the reader's place. */
static const guint8 *
take_floats (State *s, guint64 count, const char *what)
{
  if (count > (s->bin.length - s->bin.pos) / sizeof (float))
    {
      g_set_error (s->bin.error, CAML_ERROR, CAML_ERROR_PARSE,
                   "%s: truncated at byte %" G_GSIZE_FORMAT ": expected %" G_GUINT64_FORMAT
                   " floats for %s, found %" G_GSIZE_FORMAT " bytes", s->bin.source,
                   s->bin.pos, count, what, s->bin.length - s->bin.pos);
      return NULL;
    }
  return caml_bin_take (&s->bin, count * sizeof (float), what);
}

/* The structure: every field, every length against the bytes left, and the
 * checksum. */
static gboolean
read_structure (State *s)
{
  CamlBinReader *r = &s->bin;
  guint32 version, groups, first_loss_bits;
  gsize at;

  if (!caml_bin_take_magic (r, CAML_TRAINER_STATE_MAGIC, MAGIC_LEN, "CAML trainer state file"))
    return FALSE;
  at = r->pos;
  if (!caml_bin_take_u32 (r, "the version", &version))
    return FALSE;
  if (version != CAML_TRAINER_STATE_VERSION)
    return fail_at (s, at, "trainer state version %u is not supported (this build reads "
                    "version %d)", version, CAML_TRAINER_STATE_VERSION);
  s->seed_at = r->pos;
  if (!caml_bin_take_u64 (r, "the seed", &s->seed))
    return FALSE;
  s->n_at = r->pos;
  if (!caml_bin_take_u64 (r, "the weight count", &s->n_weights))
    return FALSE;
  s->data_at = r->pos;
  if (!caml_bin_take_u32 (r, "the training set's size", &s->train_n)
      || !caml_bin_take_u32 (r, "the batch size", &s->batch))
    return FALSE;
  s->kind_at = r->pos;
  if (!caml_bin_take_u32 (r, "the optimizer", &s->kind)
      || !caml_bin_take_u32 (r, "the optimizer's state blocks", &s->blocks))
    return FALSE;
  s->digest_at = r->pos;
  if ((s->weights_digest = caml_bin_take (r, CAML_BIN_DIGEST_LEN, "the weights' SHA-256")) == NULL)
    return FALSE;
  s->step_at = r->pos;
  const guint8 *first;
  if (!caml_bin_take_u64 (r, "the step count", &s->step)
      || !caml_bin_take_u64 (r, "the token count", &s->tokens)
      || (first = caml_bin_take (r, sizeof first_loss_bits, "the first step's loss")) == NULL
      || !caml_bin_take_f64 (r, "the seconds", &s->seconds)
      || !caml_bin_take_f64 (r, "the seconds evaluating", &s->eval_seconds)
      || !caml_bin_take_f64 (r, "the steps per second", &s->steps_per_second)
      || !caml_bin_take_f64 (r, "the tokens per second", &s->tokens_per_second))
    return FALSE;
  s->first_loss = caml_bin_float (first);
  s->groups_at = r->pos;
  if (!caml_bin_take_u32 (r, "the group count", &groups))
    return FALSE;
  if (groups != CAML_N_GROUPS)
    return fail_at (s, s->groups_at, "%u parameter groups, expected %d", groups, CAML_N_GROUPS);
  for (int g = 0; g < CAML_N_GROUPS; g++)
    if (!caml_bin_take_u64 (r, "the updates per group", &s->updates[g]))
      return FALSE;
  s->losses_at = r->pos;
  if ((s->losses = take_floats (s, s->step, "the losses")) == NULL)
    return FALSE;
  s->rows_at = r->pos;
  if (!caml_bin_take_u32 (r, "the row count", &s->n_rows))
    return FALSE;
  if (s->n_rows > (r->length - r->pos) / ROW_BYTES)
    return fail_at (s, s->rows_at, "%u evaluation rows (%u bytes each) do not fit in the "
                    "%" G_GSIZE_FORMAT " bytes left", s->n_rows, ROW_BYTES,
                    r->length - r->pos);
  s->rows = caml_bin_take (r, (gsize) s->n_rows * ROW_BYTES, "the evaluation rows");
  s->opt_at = r->pos;
  if (s->blocks > 2)
    return fail_at (s, s->kind_at + 4, "%u blocks of optimizer state, at most 2", s->blocks);
  if (s->n_weights > G_MAXUINT64 / 2
      || (s->opt_state = take_floats (s, s->blocks * s->n_weights,
                                      "the optimizer's state")) == NULL)
    return s->n_weights > G_MAXUINT64 / 2
           ? fail_at (s, s->n_at, "%" G_GUINT64_FORMAT " weights", s->n_weights) : FALSE;
  return caml_bin_take_digest (r);
}

static gboolean
all_finite (const guint8 *p, guint64 count, gboolean non_negative, guint64 *bad)
{
  for (guint64 i = 0; i < count; i++)
    {
      float v = caml_bin_float (p + i * sizeof (float));
      if (!isfinite (v) || (non_negative && v < 0.0f))
        {
          *bad = i;
          return FALSE;
        }
    }
  return TRUE;
}

/* The state is this run's: the experiment's seed, data and batch, the
 * model's weights as they are now, the optimizer; and every value is one a
 * run could have reached. */
static gboolean
check_against (State *s, CamlTrainer *trainer)
{
  const CamlExperiment *exp = trainer->exp;
  const CamlModel *model = trainer->model;
  guint64 bad;

  if (s->seed != exp->seed)
    return fail_at (s, s->seed_at, "the state is of a run with seed %" G_GUINT64_FORMAT
                    ", but the experiment has seed %" G_GUINT64_FORMAT, s->seed, exp->seed);
  if (s->n_weights != model->n_weights)
    return fail_at (s, s->n_at, "the state is of a model with %" G_GUINT64_FORMAT
                    " weights, but this one has %zu", s->n_weights, model->n_weights);
  if (s->train_n != (guint32) trainer->train->n)
    return fail_at (s, s->data_at, "the state is of a run on %u training samples, but the "
                    "data now give %d", s->train_n, trainer->train->n);
  if (s->batch != (guint32) trainer->batch)
    return fail_at (s, s->data_at + 4, "the state is of a run with batches of %u, but the "
                    "experiment's are %d", s->batch, trainer->batch);
  const CamlOptimizerConfig *config = &exp->optimizer;
  if (s->kind != (guint32) config->kind)
    return fail_at (s, s->kind_at, "the state is of a run with optimizer %u (%s), but the "
                    "experiment has %s", s->kind,
                    s->kind <= CAML_OPTIM_ADAM ? caml_optimizer_names[s->kind] : "unknown",
                    caml_optimizer_names[config->kind]);
  int blocks = caml_optimizer_state_blocks (config);
  if (s->blocks != (guint32) blocks)
    return fail_at (s, s->kind_at + 4, "%u blocks of optimizer state, but %s%s keeps %d",
                    s->blocks, caml_optimizer_names[config->kind],
                    config->kind != CAML_OPTIM_SGD ? ""
                    : config->momentum != 0.0 ? " with momentum" : " without momentum",
                    blocks);
  guint8 digest[CAML_BIN_DIGEST_LEN];
  weights_digest (model->w, model->n_weights, digest);
  if (memcmp (digest, s->weights_digest, sizeof digest) != 0)
    return fail_at (s, s->digest_at, "these are not the weights the state was saved with "
                    "(the weights file beside it was replaced or changed)");

  if (s->step > (guint64) MIN (G_MAXLONG, G_MAXUINT) || s->tokens > (guint64) G_MAXINT64)
    return fail_at (s, s->step_at, "%" G_GUINT64_FORMAT " steps, %" G_GUINT64_FORMAT
                    " tokens: out of range", s->step, s->tokens);
  if (!(s->first_loss >= 0.0f && isfinite (s->first_loss))
      && !(s->step == 0 && s->first_loss == -1.0f))
    return fail_at (s, s->step_at + 16, "the first step's loss is %g", (double) s->first_loss);
  if (!(s->seconds >= 0 && s->eval_seconds >= 0 && s->eval_seconds <= s->seconds
        && isfinite (s->seconds) && s->steps_per_second >= 0 && s->tokens_per_second >= 0
        && isfinite (s->steps_per_second) && isfinite (s->tokens_per_second)))
    return fail_at (s, s->step_at + 20, "the timings (%g s, %g s evaluating, %g steps/s, "
                    "%g tokens/s) are not a run's", s->seconds, s->eval_seconds,
                    s->steps_per_second, s->tokens_per_second);
  for (int g = 0; g < CAML_N_GROUPS; g++)
    if (s->updates[g] > s->step)
      return fail_at (s, s->groups_at + 4 + 8 * (gsize) g, "%" G_GUINT64_FORMAT " updates "
                      "of parameter group %d in %" G_GUINT64_FORMAT " steps", s->updates[g],
                      g, s->step);
  if (!all_finite (s->losses, s->step, TRUE, &bad))
    return fail_at (s, s->losses_at + bad * 4, "the loss of step %" G_GUINT64_FORMAT
                    " is %g", bad + 1, (double) caml_bin_float (s->losses + bad * 4));
  guint64 last = 0;
  for (guint32 i = 0; i < s->n_rows; i++)
    {
      const guint8 *p = s->rows + (gsize) i * ROW_BYTES;
      guint64 step;
      memcpy (&step, p, sizeof step);
      step = GUINT64_FROM_LE (step);
      if (step > s->step || (i > 0 && step <= last))
        return fail_at (s, s->rows_at + 4 + (gsize) i * ROW_BYTES, "evaluation row %u is at "
                        "step %" G_GUINT64_FORMAT ", after step %" G_GUINT64_FORMAT
                        " and at most %" G_GUINT64_FORMAT, i + 1, step, last, s->step);
      last = step;
    }
  /* Adagrad's accumulators and Adam's second moments are sums of squares. */
  for (guint32 k = 0; k < s->blocks; k++)
    {
      gboolean squares = config->kind == CAML_OPTIM_ADAGRAD
                         || (config->kind == CAML_OPTIM_ADAM && k == 1);
      const guint8 *block = s->opt_state + (gsize) k * s->n_weights * sizeof (float);
      if (!all_finite (block, s->n_weights, squares, &bad))
        return fail_at (s, s->opt_at + ((gsize) k * s->n_weights + bad) * sizeof (float),
                        "the optimizer's state block %u value %" G_GUINT64_FORMAT " is %g",
                        k, bad, (double) caml_bin_float (block + bad * sizeof (float)));
    }
  return TRUE;
}

static double
row_f64 (const guint8 *p)
{
  guint64 bits;
  double v;
  memcpy (&bits, p, sizeof bits);
  bits = GUINT64_FROM_LE (bits);
  memcpy (&v, &bits, sizeof v);
  return v;
}

static gint64
row_i64 (const guint8 *p)
{
  guint64 v;
  memcpy (&v, p, sizeof v);
  return (gint64) GUINT64_FROM_LE (v);
}

gboolean
caml_trainer_state_load_data (CamlTrainer *trainer, const guint8 *data, gsize length,
                              const char *source, GError **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  State s = {
    .bin = { .data = data, .length = length, .pos = 0,
             .source = source != NULL ? source : "<trainer state>", .error = error },
  };

  if (!trainer_fresh (trainer))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "%s: a state loads only into a trainer that has not run", s.bin.source);
      return FALSE;
    }
  if (!read_structure (&s) || !check_against (&s, trainer))
    return FALSE;
  /* what the run needs, the optimizer among it: the last thing that can fail */
  if (!caml_trainer_prepare (trainer, error))
    return FALSE;

  int blocks;
  float *opt_state = caml_optimizer_state (trainer->opt, &blocks);
  for (guint64 i = 0; i < (guint64) blocks * s.n_weights; i++)
    opt_state[i] = caml_bin_float (s.opt_state + i * sizeof (float));
  long updates[CAML_N_GROUPS];
  for (int g = 0; g < CAML_N_GROUPS; g++)
    updates[g] = (long) s.updates[g];
  set_updates (trainer, updates);

  /* the batch order and dropout's masks, drawn again as far as the run went */
  caml_trainer_redraw (trainer, (long) s.step);

  Source counters = {
    .step = (long) s.step, .tokens = (gint64) s.tokens, .first_loss = s.first_loss,
    .seconds = s.seconds, .eval_seconds = s.eval_seconds,
    .steps_per_second = s.steps_per_second, .tokens_per_second = s.tokens_per_second,
  };
  g_mutex_lock (&trainer->lock);
  set_counters_locked (trainer, &counters);
  g_array_set_size (trainer->losses, (guint) s.step);
  for (guint64 i = 0; i < s.step; i++)
    g_array_index (trainer->losses, float, i) = caml_bin_float (s.losses + i * sizeof (float));
  trainer->last_loss = s.step > 0 ? g_array_index (trainer->losses, float, s.step - 1) : NAN;
  for (guint32 i = 0; i < s.n_rows; i++)
    {
      const guint8 *p = s.rows + (gsize) i * ROW_BYTES;
      CamlEvalRow row = {
        .step = (long) row_i64 (p), .train_loss = row_f64 (p + 8),
        .test_loss = row_f64 (p + 16), .test_metric = row_f64 (p + 24),
        .seconds = row_f64 (p + 32), .eval_seconds = row_f64 (p + 40),
        .tokens = row_i64 (p + 48),
      };
      g_array_append_val (trainer->rows, row);
    }
  g_mutex_unlock (&trainer->lock);
  return TRUE;
}

gboolean
caml_trainer_state_load (CamlTrainer *trainer, const char *path, GError **error)
{
  char *contents = NULL;
  gsize length = 0;

  if (!caml_file_get_contents (path, &contents, &length, error))
    return FALSE;
  gboolean ok = caml_trainer_state_load_data (trainer, (const guint8 *) contents, length,
                                              path, error);
  g_free (contents);
  return ok;
}
