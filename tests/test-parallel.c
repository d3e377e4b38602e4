/* test-parallel.c — the engine's threads: the thread count and its
 * parsing, parts and their ranges, matrix products cut into tiles against a
 * reference in double, the BLAS started again on better kernels, and
 * training that gives the same numbers run after run for a thread count
 * (and nearly the same for another count). */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <cblas.h>

#include "caml-private.h"   /* tests the engine's internals */
#include "blas.h"
#include "parallel.h"
#include "layers/layers.h"

static void
test_threads_parse (void **state)
{
  int n = 0;
  assert_true (caml_threads_parse ("1", &n, NULL));
  assert_int_equal (n, 1);
  assert_true (caml_threads_parse ("256", &n, NULL));
  assert_int_equal (n, 256);
  const char *bad[] = { "0", "257", "-1", "+2", "010", "0x4", "2.5", "", " 3", "3 ", "x" };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      GError *error = NULL;
      n = -7;
      assert_false (caml_threads_parse (bad[i], &n, &error));
      assert_int_equal (n, -7);   /* untouched */
      assert_non_null (strstr (error->message, "expected a number of threads from 1 to 256"));
      g_error_free (error);
    }
  /* the default: every core, and back to it with 0 */
  caml_set_threads (5);
  assert_int_equal (caml_get_threads (), 5);
  caml_set_threads (0);
  assert_true (caml_get_threads () >= 1);
  assert_true (caml_get_cores () >= 1);
}

static void
test_part_range (void **state)
{
  for (size_t n = 0; n < 100; n += 7)
    for (int parts = 1; parts <= 9; parts++)
      for (size_t align = 1; align <= 16; align *= 4)
        {
          size_t next = 0;
          for (int p = 0; p < parts; p++)
            {
              size_t lo, hi;
              caml_part_range (n, p, parts, align, &lo, &hi);
              assert_int_equal (lo, next);   /* back to back, in order */
              assert_true (hi >= lo);
              assert_true (lo % align == 0 || lo == n);
              next = hi;
            }
          assert_int_equal (next, n);        /* and all of them */
        }
}

typedef struct {
  gint      seen[64];
  gint      concurrent, most;
  gboolean  nested_ok;
} Count;

static void
inner_part (int part, int parts, gpointer data)
{
  gint *seen = data;
  g_atomic_int_inc (&seen[part]);
}

static void
count_part (int part, int parts, gpointer data)
{
  Count *c = data;
  int now = g_atomic_int_add (&c->concurrent, 1) + 1;
  int most;
  while ((most = g_atomic_int_get (&c->most)) < now
         && !g_atomic_int_compare_and_exchange (&c->most, most, now))
    ;
  g_atomic_int_inc (&c->seen[part]);
  /* a nested loop runs all of its parts too */
  gint inner[5] = { 0 };
  caml_parallel_for (5, inner_part, inner);
  for (int i = 0; i < 5; i++)
    if (inner[i] != 1)
      c->nested_ok = FALSE;
  g_usleep (2000);
  g_atomic_int_add (&c->concurrent, -1);
}

/* Every part runs once, parts beyond the cores too, on at most as many
 * threads as there are cores. */
static void
test_parallel_for (void **state)
{
  for (int parts = 1; parts <= 37; parts += 6)
    {
      Count c = { .nested_ok = TRUE };
      caml_parallel_for (parts, count_part, &c);
      for (int i = 0; i < parts; i++)
        assert_int_equal (c.seen[i], 1);
      for (int i = parts; i < 64; i++)
        assert_int_equal (c.seen[i], 0);
      assert_true (c.nested_ok);
      assert_true (c.most >= 1 && c.most <= MIN (parts, caml_get_cores ()));
    }
}

/* A row-major reference of op(A) op(B) in double. */
static double
ref_element (CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, const float *A, int lda,
             const float *B, int ldb, int i, int j, int k)
{
  double s = 0.0;
  for (int p = 0; p < k; p++)
    {
      double a = ta == CblasNoTrans ? A[(size_t) i * lda + p] : A[(size_t) p * lda + i];
      double b = tb == CblasNoTrans ? B[(size_t) p * ldb + j] : B[(size_t) j * ldb + p];
      s += a * b;
    }
  return s;
}

/* caml_sgemm against the reference on shapes thin, wide and deep, both
 * transposes, alpha and beta, on 1 … 7 threads with every product cut (so
 * rows, columns and the inner dimension are all split somewhere); the same
 * count twice gives the same bits. */
static void
test_sgemm_tiles (void **state)
{
  const int shapes[][3] = {
    { 1, 1, 1 }, { 3, 5, 7 }, { 100, 128, 700 }, { 128, 700, 100 }, { 100, 700, 128 },
    { 9, 1568, 64 }, { 33, 17, 1025 }, { 257, 3, 40 }, { 2, 300, 2 },
  };
  GRand *rng = g_rand_new_with_seed (5);
  caml_parallel_set_fine (TRUE);
  for (gsize s = 0; s < G_N_ELEMENTS (shapes); s++)
    for (int t = 0; t < 4; t++)
      {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        CBLAS_TRANSPOSE ta = t & 1 ? CblasTrans : CblasNoTrans;
        CBLAS_TRANSPOSE tb = t & 2 ? CblasTrans : CblasNoTrans;
        int lda = (ta == CblasNoTrans ? k : m) + 1, ldb = (tb == CblasNoTrans ? n : k) + 2;
        int ldc = n + 3;
        size_t a_size = (size_t) (ta == CblasNoTrans ? m : k) * lda;
        size_t b_size = (size_t) (tb == CblasNoTrans ? k : n) * ldb;
        float *A = g_new (float, a_size), *B = g_new (float, b_size);
        float *C0 = g_new (float, (size_t) m * ldc), *C = g_new (float, (size_t) m * ldc);
        float *C2 = g_new (float, (size_t) m * ldc);
        for (size_t i = 0; i < a_size; i++)
          A[i] = (float) g_rand_double_range (rng, -1, 1);
        for (size_t i = 0; i < b_size; i++)
          B[i] = (float) g_rand_double_range (rng, -1, 1);
        for (size_t i = 0; i < (size_t) m * ldc; i++)
          C0[i] = (float) g_rand_double_range (rng, -1, 1);
        float alpha = t == 3 ? 0.5f : 1.0f, beta = t % 2 == 0 ? 0.0f : 1.0f;
        for (int threads = 1; threads <= 7; threads++)
          {
            caml_set_threads (threads);
            memcpy (C, C0, (size_t) m * ldc * sizeof (float));
            caml_sgemm (ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
            memcpy (C2, C0, (size_t) m * ldc * sizeof (float));
            caml_sgemm (ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C2, ldc);
            assert_memory_equal (C, C2, (size_t) m * ldc * sizeof (float));
            for (int i = 0; i < m; i++)
              {
                for (int j = 0; j < n; j++)
                  {
                    double want = alpha * ref_element (ta, tb, A, lda, B, ldb, i, j, k)
                                  + beta * C0[(size_t) i * ldc + j];
                    double got = C[(size_t) i * ldc + j];
                    if (fabs (got - want) > 1e-4 * (sqrt ((double) k) + fabs (want)))
                      fail_msg ("%dx%dx%d (%d%d) on %d threads: C[%d][%d] %.7g, reference %.7g",
                                m, n, k, t & 1, t >> 1, threads, i, j, got, want);
                  }
                /* the padding between rows is left alone */
                for (int j = n; j < ldc; j++)
                  assert_true (C[(size_t) i * ldc + j] == C0[(size_t) i * ldc + j]);
              }
          }
        g_free (A); g_free (B); g_free (C0); g_free (C); g_free (C2);
      }
  caml_parallel_set_fine (FALSE);
  caml_set_threads (0);
  g_rand_free (rng);
}

extern void gotoblas_dynamic_init (void) __attribute__ ((weak));
extern void gotoblas_dynamic_quit (void) __attribute__ ((weak));

/* OpenBLAS taken for a Prescott (as 0.3.21 takes CPUs newer than itself)
 * is started again on the kernels the CPU's features allow, and still
 * multiplies correctly. */
static void
test_blas_upgrade (void **state)
{
  if (gotoblas_dynamic_init == NULL || g_getenv ("OPENBLAS_CORETYPE") != NULL)
    {
      print_message ("skipped: OpenBLAS is not a DYNAMIC_ARCH build, or OPENBLAS_CORETYPE is set\n");
      return;
    }
  __builtin_cpu_init ();
  if (!__builtin_cpu_supports ("avx2"))
    {
      print_message ("skipped: this CPU has no AVX2, Prescott may be its best\n");
      return;
    }
  caml_blas_init ();
  g_autofree char *before = g_strdup (openblas_get_corename ());
  g_setenv ("OPENBLAS_CORETYPE", "Prescott", TRUE);
  gotoblas_dynamic_quit ();
  gotoblas_dynamic_init ();
  g_unsetenv ("OPENBLAS_CORETYPE");
  assert_string_equal (openblas_get_corename (), "Prescott");
  const char *chosen = caml_blas_upgrade ();
  assert_non_null (chosen);
  assert_string_not_equal (chosen, "Prescott");
  assert_string_equal (chosen, openblas_get_corename ());
  g_autofree char *described = caml_describe_kernels ();
  assert_non_null (strstr (described, "the library took this CPU for Prescott"));
  /* a second call changes nothing: the kernels are the best already */
  assert_null (caml_blas_upgrade ());
  const float A[6] = { 1, 2, 3, 4, 5, 6 }, B[6] = { 7, 8, 9, 10, 11, 12 };
  float C[4] = { 0 };
  cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 1.0f, A, 3, B, 2, 0.0f,
               C, 2);
  const float want[4] = { 58, 64, 139, 154 };
  assert_memory_equal (C, want, sizeof want);
  print_message ("OpenBLAS chose %s itself; from Prescott it went to %s\n", before, chosen);
}

/* Losses of a short run of a small CA-CNN + dense model on fixed images. */
static float *
train_losses (int threads, int steps)
{
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (
    "{\"name\": \"t\", \"seed\": 3, \"data\": {\"builtin\": \"xor\"},"
    " \"model\": [{\"layer\": \"ca_cnn\", \"kernel\": 5, \"depth\": 6},"
    "            {\"layer\": \"dense\", \"units\": 40, \"activation\": \"relu\"},"
    "            {\"layer\": \"dense\", \"units\": 10}],"
    " \"loss\": \"softmax_cross_entropy\","
    " \"optimizer\": {\"type\": \"adam\", \"lr\": 0.003},"
    " \"training\": {\"steps\": 1, \"batch_size\": 40, \"eval_every\": 1000}}", -1, "test", &error);
  if (exp == NULL)
    fail_msg ("%s", error->message);
  exp->steps = steps;
  CamlShape shape = caml_shape_image (1, 20, 20);
  CamlDataset *train = caml_dataset_new_images (200, &shape, 1, 10);
  GRand *rng = g_rand_new_with_seed (11);
  for (size_t i = 0; i < (size_t) 200 * 400; i++)
    train->pixels[i] = g_rand_int_range (rng, 0, 5) == 0 ? (guint8) g_rand_int_range (rng, 0, 256) : 0;
  for (int i = 0; i < 200; i++)
    train->y[i] = (float) (i % 10);
  g_rand_free (rng);
  caml_set_threads (threads);
  CamlModel *model = caml_experiment_build_model_for (exp, train, &error);
  if (model == NULL)
    fail_msg ("%s", error->message);
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, train);
  if (!caml_trainer_start (trainer, FALSE, &error))
    fail_msg ("%s", error->message);
  assert_int_equal (caml_trainer_join (trainer), CAML_TRAINER_FINISHED);
  assert_int_equal (caml_trainer_get_threads (trainer), threads);
  long n = 0;
  float *losses = caml_trainer_copy_losses (trainer, &n);
  assert_int_equal (n, steps);
  caml_trainer_free (trainer);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_experiment_free (exp);
  caml_set_threads (0);
  return losses;
}

/* The same thread count gives the same losses bit for bit; another count
 * cuts the work elsewhere and gives losses within rounding. */
static void
test_training_reproducible (void **state)
{
  const int steps = 30;
  g_autofree float *two_a = train_losses (2, steps);
  g_autofree float *two_b = train_losses (2, steps);
  assert_memory_equal (two_a, two_b, steps * sizeof (float));
  g_autofree float *one = train_losses (1, steps);
  g_autofree float *three = train_losses (3, steps);
  for (int i = 0; i < steps; i++)
    {
      assert_true (isfinite (one[i]));
      if (fabsf (one[i] - two_a[i]) > 1e-3f * fmaxf (1.0f, fabsf (one[i]))
          || fabsf (one[i] - three[i]) > 1e-3f * fmaxf (1.0f, fabsf (one[i])))
        fail_msg ("step %d: loss %.7g on 1 thread, %.7g on 2, %.7g on 3", i + 1, one[i],
                  two_a[i], three[i]);
    }
  /* the run learned something: the losses are not all one value */
  assert_true (one[steps - 1] < one[0]);
}

/* ---------------------------------------------------- replicas in-process */

/* An allreduce between trainers on threads, standing in for MPI: every
 * replica's values are kept and summed in replica order once all arrived
 * (so the sums are the same for every replica and every run). */
typedef struct {
  GMutex   lock;
  GCond    cond;
  int      ranks, arrived, left;
  guint64  round;
  float   *grad[4];
  double   sums[4][8];
  guint8  *marks[4];
  size_t   n_grad, n_marks;
  int      n_sums;
} Reducer;

typedef struct {
  Reducer *r;
  int      rank;
} Replica;

static gboolean
local_reduce (CamlReplicaSums *s, gpointer data, GError **error)
{
  Replica *me = data;
  Reducer *r = me->r;
  g_mutex_lock (&r->lock);
  while (r->left > 0)   /* the round before is still being read */
    g_cond_wait (&r->cond, &r->lock);
  r->grad[me->rank] = s->grad;
  r->marks[me->rank] = s->marks;
  memcpy (r->sums[me->rank], s->sums, s->n_sums * sizeof (double));
  r->n_grad = s->n_grad;
  r->n_marks = s->n_marks;
  r->n_sums = s->n_sums;
  guint64 round = r->round;
  if (++r->arrived == r->ranks)
    {
      /* every replica's values, in rank order, into replica 0's buffers
       * first, then copied out by each replica itself */
      for (size_t i = 0; i < r->n_grad; i++)
        {
          float sum = 0.0f;
          for (int k = 0; k < r->ranks; k++)
            sum += r->grad[k][i];
          r->grad[0][i] = sum;
        }
      for (int j = 0; j < r->n_sums; j++)
        for (int k = 1; k < r->ranks; k++)
          r->sums[0][j] += r->sums[k][j];
      for (size_t i = 0; r->marks[0] != NULL && i < r->n_marks; i++)
        for (int k = 1; k < r->ranks; k++)
          r->marks[0][i] |= r->marks[k][i];
      r->arrived = 0;
      r->left = r->ranks;
      r->round++;
      g_cond_broadcast (&r->cond);
    }
  else
    while (r->round == round)
      g_cond_wait (&r->cond, &r->lock);
  if (me->rank != 0)
    {
      if (r->n_grad > 0)
        memcpy (s->grad, r->grad[0], r->n_grad * sizeof (float));
      if (s->marks != NULL)
        memcpy (s->marks, r->marks[0], r->n_marks);
    }
  memcpy (s->sums, r->sums[0], s->n_sums * sizeof (double));
  /* replica 0's buffers hold the sums: it leaves last, after every copy */
  if (--r->left == 0)
    g_cond_broadcast (&r->cond);
  while (me->rank == 0 && r->left > 0)
    g_cond_wait (&r->cond, &r->lock);
  g_mutex_unlock (&r->lock);
  return TRUE;
}

/* The three kinds of model of the distributed equality tests: dense layers
 * on 2-D inputs, a CA-CNN on images, CA-BSFE on texts (sparse updates of a
 * word table). */
static const char *const replica_models[] = {
  "{\"name\": \"d\", \"seed\": 5, \"data\": {\"builtin\": \"xor\"},"
  " \"model\": [{\"layer\": \"ca_nn\", \"units\": 12}, {\"layer\": \"dense\", \"units\": 1}],"
  " \"loss\": \"mse\", \"optimizer\": {\"type\": \"adam\", \"lr\": 0.01},"
  " \"training\": {\"steps\": 1, \"batch_size\": 30, \"eval_every\": 1000}}",
  "{\"name\": \"c\", \"seed\": 6, \"data\": {\"builtin\": \"xor\"},"
  " \"model\": [{\"layer\": \"ca_cnn\", \"kernel\": 3, \"depth\": 4},"
  "            {\"layer\": \"dense\", \"units\": 10}],"
  " \"loss\": \"softmax_cross_entropy\", \"optimizer\": {\"type\": \"adagrad\", \"lr\": 0.05},"
  " \"training\": {\"steps\": 1, \"batch_size\": 31, \"eval_every\": 1000}}",
  "{\"name\": \"t\", \"seed\": 7, \"data\": {\"builtin\": \"xor\"},"
  " \"model\": [{\"layer\": \"ca_bsfe\", \"dim\": 6, \"gate_dim\": 3},"
  "            {\"layer\": \"dense\", \"units\": 1}],"
  " \"loss\": \"sigmoid_cross_entropy\","
  " \"optimizer\": {\"type\": \"adagrad\", \"lr\": 0.2, \"weight_decay\": 0.001},"
  " \"training\": {\"steps\": 1, \"batch_size\": 16, \"eval_every\": 1000}}",
};

static CamlDataset *
replica_data (int kind)
{
  GRand *rng = g_rand_new_with_seed (100 + kind);
  CamlDataset *set = NULL;
  if (kind == 0)
    {
      CamlShape shape = caml_shape_flat (3);
      set = caml_dataset_new (150, &shape, 1, 0);
      for (int i = 0; i < 150; i++)
        {
          for (int j = 0; j < 3; j++)
            set->x[i * 3 + j] = (float) g_rand_double_range (rng, -1, 1);
          set->y[i] = set->x[i * 3] * set->x[i * 3 + 1] - 0.5f * set->x[i * 3 + 2];
        }
    }
  else if (kind == 1)
    {
      CamlShape shape = caml_shape_image (1, 10, 10);
      set = caml_dataset_new_images (120, &shape, 1, 10);
      for (int i = 0; i < 120 * 100; i++)
        set->pixels[i] = g_rand_int_range (rng, 0, 3) == 0 ? (guint8) g_rand_int_range (rng, 0, 256) : 0;
      for (int i = 0; i < 120; i++)
        set->y[i] = (float) (i % 10);
    }
  else
    {
      static const char *const words[] = { "good", "bad", "fine", "awful", "great", "dull",
                                           "the", "a", "film", "plot", "acting", "was" };
      char **texts = g_new0 (char *, 81);
      float labels[80];
      for (int i = 0; i < 80; i++)
        {
          GString *t = g_string_new (NULL);
          int len = g_rand_int_range (rng, 2, 8);
          for (int w = 0; w < len; w++)
            g_string_append_printf (t, "%s%s", w ? " " : "",
                                    words[g_rand_int_range (rng, 0, G_N_ELEMENTS (words))]);
          texts[i] = g_string_free (t, FALSE);
          labels[i] = (float) (i % 2);
        }
      CamlVocab *vocab = caml_vocab_new ();
      set = caml_text_dataset_from_texts (texts, labels, 80, 2, vocab, TRUE);
      caml_vocab_unref (vocab);
      caml_text_datasets_finish (set, set, 0);
    }
  g_rand_free (rng);
  return set;
}

typedef struct {
  CamlTrainer *trainer;
  CamlModel   *model;
} Member;

/* The losses of `steps` steps of model `kind` trained by `ranks` replicas
 * (1: one trainer alone); *weights: replica 0's final weights, and each
 * replica's must be the same. */
static float *
replica_losses (int kind, int ranks, int steps, float **weights, size_t *n_weights)
{
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (replica_models[kind], -1, "replicas", &error);
  if (exp == NULL)
    fail_msg ("%s", error->message);
  exp->steps = steps;
  CamlDataset *train = replica_data (kind);
  Reducer r = { .ranks = ranks };
  g_mutex_init (&r.lock);
  g_cond_init (&r.cond);
  Replica who[4];
  Member m[4];
  caml_set_threads (1);
  for (int k = 0; k < ranks; k++)
    {
      m[k].model = caml_experiment_build_model_for (exp, train, &error);
      if (m[k].model == NULL)
        fail_msg ("%s", error->message);
      m[k].trainer = caml_trainer_new (exp, m[k].model, train, train);
      who[k] = (Replica) { &r, k };
      caml_trainer_set_replica (m[k].trainer, k, ranks, local_reduce, &who[k]);
    }
  for (int k = 0; k < ranks; k++)
    if (!caml_trainer_start (m[k].trainer, FALSE, &error))
      fail_msg ("%s", error->message);
  for (int k = 0; k < ranks; k++)
    assert_int_equal (caml_trainer_join (m[k].trainer), CAML_TRAINER_FINISHED);
  long n = 0;
  float *losses = caml_trainer_copy_losses (m[0].trainer, &n);
  assert_int_equal (n, steps);
  /* only replica 0 evaluates */
  int rows = 0;
  g_free (caml_trainer_copy_rows (m[0].trainer, &rows));
  assert_int_equal (rows, 1);
  for (int k = 1; k < ranks; k++)
    {
      g_free (caml_trainer_copy_rows (m[k].trainer, &rows));
      assert_int_equal (rows, 0);
      g_autofree float *other = caml_trainer_copy_losses (m[k].trainer, &n);
      assert_memory_equal (other, losses, steps * sizeof (float));
      assert_memory_equal (m[k].model->w, m[0].model->w, m[0].model->n_weights * sizeof (float));
    }
  *n_weights = m[0].model->n_weights;
  *weights = g_memdup2 (m[0].model->w, *n_weights * sizeof (float));
  for (int k = 0; k < ranks; k++)
    {
      caml_trainer_free (m[k].trainer);
      caml_model_free (m[k].model);
    }
  g_mutex_clear (&r.lock);
  g_cond_clear (&r.cond);
  caml_set_threads (0);
  caml_dataset_free (train);
  caml_experiment_free (exp);
  return losses;
}

/* Two and three replicas (shares of 15/15, 10/10/10 and uneven 16/15,
 * 10/10/11, 8/8, 5/5/6 samples) train what one trainer trains, within the
 * rounding of their sums, for dense, convolutional and text models; the
 * replicas stay identical to the bit. */
static void
test_replicas_train_as_one (void **state)
{
  const int steps = 40;
  for (int kind = 0; kind < 3; kind++)
    {
      g_autofree float *w1 = NULL;
      size_t n = 0;
      g_autofree float *one = replica_losses (kind, 1, steps, &w1, &n);
      for (int ranks = 2; ranks <= 3; ranks++)
        {
          g_autofree float *wr = NULL;
          g_autofree float *many = replica_losses (kind, ranks, steps, &wr, &n);
          for (int i = 0; i < steps; i++)
            if (fabsf (many[i] - one[i]) > 1e-4f * fmaxf (1.0f, fabsf (one[i])))
              fail_msg ("model %d, %d replicas, step %d: loss %.7g, alone %.7g", kind, ranks,
                        i + 1, many[i], one[i]);
          for (size_t i = 0; i < n; i++)
            if (fabsf (wr[i] - w1[i]) > 1e-3f * fmaxf (1.0f, fabsf (w1[i])))
              fail_msg ("model %d, %d replicas: weight %zu %.7g, alone %.7g", kind, ranks, i,
                        wr[i], w1[i]);
        }
      assert_true (one[steps - 1] < one[0]);
    }
}

#ifdef __linux__
#include <sys/resource.h>
#include <unistd.h>
#endif

typedef struct {
  GThread *caller;
  gint     caller_nice, other_nice;
} Nice;

static void
nice_part (int part, int parts, gpointer data)
{
#ifdef __linux__
  Nice *n = data;
  int nice = getpriority (PRIO_PROCESS, (id_t) gettid ());
  if (g_thread_self () == n->caller)
    g_atomic_int_set (&n->caller_nice, nice);
  else
    g_atomic_int_set (&n->other_nice, nice);
  g_usleep (20000);   /* long enough for the other threads to take parts */
#endif
}

/* After caml_set_background_priority the threads that join a team run at
 * nice 10, and the thread that asked keeps its own (a window's main thread
 * asking for a probe). Last: a priority lowered cannot be raised again. */
static void
test_background_priority (void **state)
{
#ifndef __linux__
  skip ();
#else
#ifndef _OPENMP
  skip ();   /* the parts run in turn on the caller */
#endif
  if (caml_get_cores () < 2)
    skip ();
  int own = getpriority (PRIO_PROCESS, 0);
  caml_set_background_priority ();
  caml_set_threads (2);
  Nice n = { .caller = g_thread_self (), .caller_nice = -100, .other_nice = -100 };
  caml_parallel_for (8, nice_part, &n);
  caml_set_threads (0);
  assert_int_equal (n.caller_nice, own);
  assert_int_equal (n.other_nice, MAX (own, 10));
#endif
}

/* Threads of this process now (Linux: /proc/self/task), −1 elsewhere. */
static int
count_threads (void)
{
  g_autoptr (GDir) dir = g_dir_open ("/proc/self/task", 0, NULL);
  if (dir == NULL)
    return -1;
  int n = 0;
  while (g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

static void
busy_part (int part, int parts, gpointer data)
{
  g_usleep (2000);
}

typedef struct {
  gboolean keep;
  int      during, after;   /* threads right after a pass, and after a wait */
} TeamRun;

/* A thread that runs one pass on two threads (keeping its team or not),
 * counts the process's threads after it, then waits as a paused trainer
 * does (caml_parallel_idle) and counts again. */
static gpointer
team_thread (gpointer data)
{
  TeamRun *r = data;
  caml_parallel_pin (2);
  caml_parallel_keep_team (r->keep);
  caml_parallel_for (4, busy_part, NULL);
  r->during = count_threads ();
  caml_parallel_idle ();
  r->after = count_threads ();
  return NULL;
}

/* After caml_set_interactive only a thread that keeps its team (a
 * trainer's) still has it after a pass, until it waits: libgomp counts
 * idle teams against the cores and, with more threads than cores, makes
 * every barrier sleep instead of spin. Last: interactive is for good. */
static void
test_interactive_teams (void **state)
{
  if (count_threads () < 0 || caml_get_cores () < 2)
    skip ();
  caml_set_interactive ();
  int before = count_threads ();
  TeamRun kept = { .keep = TRUE }, given = { .keep = FALSE };
  g_thread_join (g_thread_new ("kept", team_thread, &kept));
  g_thread_join (g_thread_new ("given", team_thread, &given));
  print_message ("threads: %d before; a kept team: %d after its pass, %d after it waited; "
                 "a team given back: %d after its pass\n", before, kept.during, kept.after,
                 given.during);
  /* the thread, and its team's worker unless the parts ran in turn (no
   * OpenMP: the ThreadSanitizer build) */
  if (kept.during != before + 2)
    {
      assert_int_equal (kept.during, before + 1);
      print_message ("no OpenMP teams in this build\n");
    }
  /* the thread itself, never a worker left idle */
  assert_int_equal (given.during, before + 1);
  assert_int_equal (given.after, before + 1);
  assert_int_equal (kept.after, before + 1);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_threads_parse),
    cmocka_unit_test (test_part_range),
    cmocka_unit_test (test_parallel_for),
    cmocka_unit_test (test_sgemm_tiles),
    cmocka_unit_test (test_blas_upgrade),
    cmocka_unit_test (test_training_reproducible),
    cmocka_unit_test (test_replicas_train_as_one),
    cmocka_unit_test (test_background_priority),
    cmocka_unit_test (test_interactive_teams),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
