/* cli-reproduce.c — `caml reproduce`: run every experiment of the paper
 * the data here allow, judge each of its claims by a stated rule, and write
 * report.md and report.html (the report writer: cli-reproduce-report.c).
 *
 * The experiments are a table: each names its models (presets, with layer
 * options, em_steps or the matched baseline), its seeds (full and --quick),
 * its steps under --quick, the metric read from each run's summary.json,
 * and a judge that turns the numbers into rows of the report. Training runs
 * go in-process through caml_cli_run_experiment (as `caml sweep`'s do);
 * `caml sem` and `caml rnn-sanity` run as child processes of this same
 * binary — their verbs parse options, print tables and keep state of their
 * own, and a child gives a clean exit status and log; their figures are
 * read back from the files they write (summary.json, rnn-sanity-runs.csv).
 *
 * Resumable: a run whose summary.json says it finished the steps asked is
 * not trained again, and an experiment whose results.json is complete for
 * the same settings is not run again. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gio/gio.h>
#include <glib/gstdio.h>

#include "caml.h"
#include "caml-plot.h"
#include "cli.h"
#include "cli-common.h"
#include "cli-reproduce.h"
#include "presets.h"
#include "sweep.h"

/* ------------------------------------------------------------ the table */

typedef enum { KIND_TRAIN, KIND_SEM, KIND_SANITY } Kind;

/* One model of an experiment. */
typedef struct {
  const char *key;       /* its runs' directory names: KEY-seedS */
  const char *label;
  const char *preset;    /* KIND_TRAIN */
  const char *options;   /* layer options, ";"-separated KEY=VALUE, or NULL */
  int         em_steps;  /* -1: the preset's */
  gboolean    baseline;  /* the matched baseline of the model (CA-CNN → conv2d) */
  gboolean    quick;     /* trained under --quick too */
  gboolean    not_plotted;  /* a number beside the models (an iteration count) */
} Arm;

typedef struct Outcome Outcome;
typedef struct Spec Spec;
typedef void (*JudgeFunc) (Outcome *o);

struct Spec {
  const char *name;
  const char *figure;      /* the paper's figure and what it shows */
  const char *setup;       /* what we run, in a sentence */
  const char *needs[3];    /* data sets: "mnist", "fashion", "imdb", "sst", "sick", "embeddings" */
  Kind        kind;
  const Arm  *arms;
  int         n_arms;
  int         seeds, seeds_quick;
  int         steps_quick; /* 0: the presets' */
  const char *sigma_steps, *sigma_steps_quick;  /* NULL: none */
  const char *metric;      /* summary.json key (KIND_TRAIN) */
  JudgeFunc   judge;
  const char *copy[3];     /* "ARM:FILE": figures copied from the arm's first seed's run */
};

struct Outcome {
  const Spec *spec;
  int      n_arms;         /* the arms run (under --quick: the quick ones) */
  const Arm **arms;
  int      n_seeds;
  int      steps;          /* 0: the presets' */
  double  *values;         /* (n_arms, n_seeds) the metric; NAN: not measured */
  double  *values2;        /* (n_arms, n_seeds) a second figure (rnn-sanity: test error) */
  char    *why;            /* data missing, or runs failed: the rows are not testable */
  GArray  *rows;           /* CamlReproRow */
  GPtrArray *figures;      /* paths relative to the output directory */
  int      trained, kept, failed;
};

/* ------------------------------------------------------------ judges */

static int
arm_index (const Outcome *o, const char *key)
{
  for (int a = 0; a < o->n_arms; a++)
    if (g_str_equal (o->arms[a]->key, key))
      return a;
  return -1;
}

/* The values of an arm (n_seeds), or NULL when it did not run. */
static const double *
arm_values (const Outcome *o, const char *key)
{
  int a = arm_index (o, key);
  return a < 0 ? NULL : &o->values[a * o->n_seeds];
}

static const char *
arm_label (const Outcome *o, const char *key)
{
  int a = arm_index (o, key);
  return a < 0 ? key : o->arms[a]->label;
}

static CamlReproRow *
add_row (Outcome *o, const char *claim)
{
  CamlReproRow row = { .claim = g_strdup (claim), .mean = NAN, .spread = NAN };
  g_array_append_val (o->rows, row);
  return &g_array_index (o->rows, CamlReproRow, o->rows->len - 1);
}

static void
add_cond (CamlReproRow *row, char *what, double value, const char *op, double threshold)
{
  g_assert (row->n_conds < (int) G_N_ELEMENTS (row->conds));
  row->conds[row->n_conds++] = (CamlReproCondition) { what, value, op, threshold };
}

static void
set_ours (CamlReproRow *row, double mean, double sd, int n, const char *unit, const char *extra)
{
  row->mean = mean;
  row->spread = sd;
  row->n = n;
  if (!isfinite (mean))
    row->ours = g_strdup ("–");
  else if (isfinite (sd))
    row->ours = g_strdup_printf ("%.4g ± %.2g (%d %s)%s", mean, sd, n, unit, extra ? extra : "");
  else
    row->ours = g_strdup_printf ("%.4g (%d %s)%s", mean, n, unit, extra ? extra : "");
}

/* A row: the mean of an arm's metric OP threshold. */
static void
row_threshold (Outcome *o, const char *claim, const char *key, const char *op, double threshold)
{
  CamlReproRow *row = add_row (o, claim);
  const double *v = arm_values (o, key);
  double mean = NAN, sd = NAN;
  int n = 0;
  if (v != NULL)
    caml_repro_mean_sd (v, o->n_seeds, &mean, &sd, &n);
  set_ours (row, mean, sd, n, n == 1 ? "seed" : "seeds", NULL);
  add_cond (row, g_strdup_printf ("mean %s of %s", o->spec->metric, arm_label (o, key)),
            mean, op, threshold);
  row->rule = g_strdup_printf ("mean %s of %s %s %.4g", o->spec->metric, arm_label (o, key),
                               caml_repro_op_text (op), threshold);
}

/* A row: a ahead of b, paired over seeds (and over the pairs given: keys
 * a[i] against b[i]), by a two-sided paired t-test at CAML_REPRO_ALPHA.
 * "Ahead" is higher for higher_better, else lower. */
static void
row_paired (Outcome *o, const char *claim, const char *const *a, const char *const *b,
            int n_pairs, gboolean higher_better, const char *a_name, const char *b_name)
{
  CamlReproRow *row = add_row (o, claim);
  GArray *d = g_array_new (FALSE, FALSE, sizeof (double));
  for (int i = 0; i < n_pairs; i++)
    {
      const double *va = arm_values (o, a[i]), *vb = arm_values (o, b[i]);
      for (int s = 0; va != NULL && vb != NULL && s < o->n_seeds; s++)
        {
          double x = higher_better ? va[s] - vb[s] : vb[s] - va[s];
          g_array_append_val (d, x);
        }
    }
  double mean = NAN, sd = NAN;
  int n = 0, pairs = 0;
  caml_repro_mean_sd ((double *) d->data, (int) d->len, &mean, &sd, &n);
  double p = caml_repro_paired_p ((double *) d->data, (int) d->len, &pairs);
  g_array_free (d, TRUE);
  g_autofree char *extra = g_strdup_printf ("; p = %.3g", p);
  set_ours (row, mean, sd, n, "pairs", extra);
  const char *better = higher_better ? "higher" : "lower";
  add_cond (row, g_strdup_printf ("mean amount by which %s's %s is %s than %s's", a_name,
                                  o->spec->metric, better, b_name), mean, ">", 0);
  add_cond (row, g_strdup ("paired t-test p"), p, "<", CAML_REPRO_ALPHA);
  row->rule = g_strdup_printf ("%s %s for %s than for %s (ours: the mean difference in that "
                               "direction > 0), paired t-test p < %.2g", o->spec->metric, better,
                               a_name, b_name, CAML_REPRO_ALPHA);
}

/* A row: mean(a) − mean(b) OP threshold. */
static void
row_difference (Outcome *o, const char *claim, const char *a, const char *b, const char *op,
                double threshold)
{
  CamlReproRow *row = add_row (o, claim);
  const double *va = arm_values (o, a), *vb = arm_values (o, b);
  double ma = NAN, mb = NAN, sd = NAN;
  int n = 0, nb = 0;
  if (va != NULL && vb != NULL)
    {
      caml_repro_mean_sd (va, o->n_seeds, &ma, &sd, &n);
      caml_repro_mean_sd (vb, o->n_seeds, &mb, &sd, &nb);
    }
  g_autofree char *extra = g_strdup_printf ("; %s %.4g", arm_label (o, b), mb);
  CamlReproRow tmp = { 0 };
  set_ours (&tmp, ma, NAN, n, n == 1 ? "seed" : "seeds", extra);
  row->ours = tmp.ours;
  row->mean = ma;
  row->n = n;
  add_cond (row, g_strdup_printf ("mean %s of %s − of %s", o->spec->metric, arm_label (o, a),
                                  arm_label (o, b)), ma - mb, op, threshold);
  row->rule = g_strdup_printf ("mean %s of %s − that of %s %s %.4g", o->spec->metric,
                               arm_label (o, a), arm_label (o, b), caml_repro_op_text (op),
                               threshold);
}

static void
judge_xor (Outcome *o)
{
  row_threshold (o, "Fig. 15: a CA-NN of width 1 fits XOR (training MSE ≈ 0)", "ca", "<=", 0.01);
  row_difference (o, "Fig. 15: the CA-NN, with fewer parameters, fits XOR about as closely as "
                  "an NN with one hidden layer", "ca", "nn", "<=", 0.001);
}

static void
judge_surface (Outcome *o)
{
  /* the paper's test errors, and the factor we allow above them */
  row_threshold (o, "Fig. 16: test error 0.0063 with one CA-NN layer (≤ 1.5 × the paper's)",
                 "ca1", "<=", 1.5 * 0.0063);
  row_threshold (o, "Fig. 16: test error 0.0029 with two stacked CA-NN layers (≤ 1.5 × the "
                 "paper's)", "ca2", "<=", 1.5 * 0.0029);
  const char *a[] = { "ca2" }, *b[] = { "ca1" };
  row_paired (o, "Fig. 16: two stacked CA-NN layers beat one", a, b, 1, FALSE,
              "two layers", "one layer");
}

/* The MNIST grid: CA-CNN and CNN at each (k, d). */
#define MNIST_ARM(k, d, q) \
  { "ca-k" #k "-d" #d, "CA-CNN k=" #k " d=" #d, "mnist-ca-cnn", "kernel=" #k ";depth=" #d, -1, FALSE, q }, \
  { "cnn-k" #k "-d" #d, "CNN k=" #k " d=" #d, "mnist-ca-cnn", "kernel=" #k ";depth=" #d, -1, TRUE, q }

static const Arm mnist_arms[] = {
  MNIST_ARM (3, 8, TRUE), MNIST_ARM (5, 8, TRUE), MNIST_ARM (8, 8, FALSE),
  MNIST_ARM (3, 16, FALSE), MNIST_ARM (5, 16, FALSE), MNIST_ARM (8, 16, FALSE),
  MNIST_ARM (3, 32, FALSE), MNIST_ARM (5, 32, FALSE), MNIST_ARM (8, 32, FALSE),
};

static void
judge_mnist (Outcome *o)
{
  /* the best CA-CNN cell's mean accuracy */
  CamlReproRow *row = add_row (o, "Fig. 17: > 99% test accuracy (the best (k, d) of CA-CNN)");
  double best = NAN, best_sd = NAN;
  int best_n = 0;
  const char *best_label = "CA-CNN";
  for (int a = 0; a < o->n_arms; a++)
    if (!o->arms[a]->baseline)
      {
        double m, sd;
        int n;
        caml_repro_mean_sd (&o->values[a * o->n_seeds], o->n_seeds, &m, &sd, &n);
        if (isfinite (m) && !(m <= best))
          {
            best = m;
            best_sd = sd;
            best_n = n;
            best_label = o->arms[a]->label;
          }
      }
  g_autofree char *which = g_strdup_printf (", %s", best_label);
  set_ours (row, best, best_sd, best_n, best_n == 1 ? "seed" : "seeds", which);
  add_cond (row, g_strdup ("mean test_accuracy of the best CA-CNN cell"), best, ">", 0.99);
  row->rule = g_strdup ("mean test_accuracy of the best CA-CNN (k, d) > 0.99");

  /* CA-CNN against CNN at every (k, d) run */
  GPtrArray *ca = g_ptr_array_new (), *cnn = g_ptr_array_new ();
  for (int a = 0; a + 1 < o->n_arms; a++)
    if (!o->arms[a]->baseline && o->arms[a + 1]->baseline)
      {
        g_ptr_array_add (ca, (gpointer) o->arms[a]->key);
        g_ptr_array_add (cnn, (gpointer) o->arms[a + 1]->key);
      }
  row_paired (o, "Fig. 17: CA-CNN beats CNN at the same (k, d)", (const char **) ca->pdata,
              (const char **) cnn->pdata, (int) ca->len, TRUE, "CA-CNN", "CNN");

  /* the largest kernel against the smallest, CA-CNN, at each depth run */
  GPtrArray *large = g_ptr_array_new (), *small = g_ptr_array_new ();
  static const int depths[] = { 8, 16, 32 };
  for (guint i = 0; i < G_N_ELEMENTS (depths); i++)
    {
      const char *lo = NULL, *hi = NULL;
      int klo = G_MAXINT, khi = 0;
      for (int a = 0; a < o->n_arms; a++)
        {
          int k, d;
          if (o->arms[a]->baseline || sscanf (o->arms[a]->key, "ca-k%d-d%d", &k, &d) != 2
              || d != depths[i])
            continue;
          if (k < klo)
            klo = k, lo = o->arms[a]->key;
          if (k > khi)
            khi = k, hi = o->arms[a]->key;
        }
      if (lo != NULL && hi != NULL && lo != hi)
        {
          g_ptr_array_add (large, (gpointer) hi);
          g_ptr_array_add (small, (gpointer) lo);
        }
    }
  row_paired (o, "Fig. 17: a larger kernel k helps CA-CNN", (const char **) large->pdata,
              (const char **) small->pdata, (int) large->len, TRUE, "the largest k",
              "the smallest k");
  g_ptr_array_free (ca, TRUE);
  g_ptr_array_free (cnn, TRUE);
  g_ptr_array_free (large, TRUE);
  g_ptr_array_free (small, TRUE);
}

static void
judge_sigma (Outcome *o)
{
  /* sigma_auc: ROC AUC of χ between digit and background pixels; a map
   * that separates them either way round scores max(AUC, 1 − AUC) */
  CamlReproRow *row = add_row (o, "Fig. 18: σ-maps separate the digit from the background");
  const double *v = arm_values (o, "ca");
  g_autofree double *sep = g_new (double, o->n_seeds);
  for (int s = 0; s < o->n_seeds; s++)
    sep[s] = v != NULL && isfinite (v[s]) ? MAX (v[s], 1 - v[s]) : NAN;
  double mean, sd;
  int n;
  caml_repro_mean_sd (sep, o->n_seeds, &mean, &sd, &n);
  set_ours (row, mean, sd, n, n == 1 ? "seed" : "seeds", NULL);
  add_cond (row, g_strdup ("mean max(σ-AUC, 1 − σ-AUC) at the last step"), mean, ">=", 0.8);
  row->rule = g_strdup ("mean max(AUC, 1 − AUC) of χ between digit and background pixels "
                        "at the last step ≥ 0.8");
}

static void
judge_fashion (Outcome *o)
{
  const char *a[] = { "ca" }, *b[] = { "plain" };
  row_paired (o, "Figs. 19–20 (CIFAR-10; Fashion-MNIST here): the convolutional CA-RES "
              "beats its plain counterpart", a, b, 1, TRUE, "CA-RES", "its baseline");
}

static void
judge_text (Outcome *o, const char *data, double paper)
{
  g_autofree char *claim = g_strdup_printf ("Fig. %s: CA-BSFE with em_steps = 100 reaches "
                                            "test accuracy > %.2f", g_str_equal (data, "IMDB")
                                            ? "9 (IMDB)" : "10 (SST)", paper);
  row_threshold (o, claim, "em", ">", paper);
  const char *a[] = { "em" }, *b[] = { "avg" };
  g_autofree char *c2 = g_strdup_printf ("%s: CA-BSFE (em_steps = 100) beats averaging", data);
  row_paired (o, c2, a, b, 1, TRUE, "CA-BSFE", "averaging");
  const char *a2[] = { "em" }, *b2[] = { "noem" };
  g_autofree char *c3 = g_strdup_printf ("%s: em_steps = 100 helps CA-BSFE (against 0)", data);
  row_paired (o, c3, a2, b2, 1, TRUE, "em_steps = 100", "em_steps = 0");
}

static void
judge_imdb (Outcome *o)
{
  judge_text (o, "IMDB", 0.91);
}

static void
judge_sst (Outcome *o)
{
  judge_text (o, "SST", 0.82);
}

static double
first_value (Outcome *o, const char *key)
{
  const double *v = arm_values (o, key);
  return v != NULL ? v[0] : NAN;
}

static void
judge_sem (Outcome *o)
{
  /* deterministic fits: the Pearson r × 100 of each method */
  double sif = first_value (o, "sif"), avg = first_value (o, "average");
  double c = first_value (o, "ca_sem");
  CamlReproRow *row = add_row (o, "Table 3: on SICK, CA-SEM 71.1 > SIF 64.7 > average 62.4");
  g_autofree char *extra = g_strdup_printf ("; SIF %.4g, average %.4g; context part %.4g", sif,
                                            avg, first_value (o, "ca_sem_context"));
  set_ours (row, c, NAN, 1, "fit", extra);
  add_cond (row, g_strdup ("CA-SEM − SIF (Pearson × 100)"), c - sif, ">", 0);
  add_cond (row, g_strdup ("CA-SEM − average (Pearson × 100)"), c - avg, ">", 0);
  row->rule = g_strdup ("the literal algorithm (Eq. 18's embedding): CA-SEM's Pearson × 100 "
                        "above SIF's and above the average's");

  /* The paper's energy has no finite minimiser; the fixed-norm reading has. */
  double f = first_value (o, "fixed_ca_sem_context");
  double iterations = first_value (o, "fixed_iterations");
  row = add_row (o, "Table 3, read with ‖v0‖ fixed (docs/sem.md): the fit converges and CA-SEM "
                    "is at least level with SIF");
  g_autofree char *extra2 = g_strdup_printf ("; SIF %.4g; Eq. 18's embedding %.4g; %.0f "
                                             "iterations", sif, first_value (o, "fixed_ca_sem"),
                                             iterations);
  set_ours (row, f, NAN, 1, "fit", extra2);
  add_cond (row, g_strdup ("iterations of the fixed-norm fit"), iterations, "<", 100);
  add_cond (row, g_strdup ("fixed-norm CA-SEM's context part − SIF (Pearson × 100)"), f - sif,
            ">=", -1);
  row->rule = g_strdup ("the fixed-norm fit stops before its cap of 100 iterations, and its "
                        "context-part embedding Σ(1 − χ̃)w′ scores within 1 point of SIF or above");
}

static void
judge_sanity (Outcome *o)
{
  const double *ca = arm_values (o, "ca"), *lstm = arm_values (o, "lstm");
  const double *gru = arm_values (o, "gru");
  double m[3], sd[3];
  int n[3];
  const double *v[3] = { ca, lstm, gru };
  for (int i = 0; i < 3; i++)
    caml_repro_mean_sd (v[i], o->n_seeds, &m[i], &sd[i], &n[i]);
  CamlReproRow *row = add_row (o, "Fig. 13: CA-RNN ends with a lower test loss than LSTM and GRU");
  g_autofree char *extra = g_strdup_printf ("; LSTM %.4g, GRU %.4g", m[1], m[2]);
  set_ours (row, m[0], sd[0], n[0], "runs", extra);
  add_cond (row, g_strdup ("LSTM's mean test loss − CA-RNN's"), m[1] - m[0], ">", 0);
  add_cond (row, g_strdup ("GRU's mean test loss − CA-RNN's"), m[2] - m[0], ">", 0);
  row->rule = g_strdup ("CA-RNN's mean test loss below LSTM's and below GRU's");

  for (int i = 0; i < 3; i++)
    {
      int a = i == 0 ? arm_index (o, "ca") : i == 1 ? arm_index (o, "lstm") : arm_index (o, "gru");
      caml_repro_mean_sd (&o->values2[a * o->n_seeds], o->n_seeds, &m[i], &sd[i], &n[i]);
    }
  row = add_row (o, "Fig. 13: CA-RNN's test error no higher than LSTM's and GRU's");
  g_autofree char *extra2 = g_strdup_printf ("; LSTM %.4g, GRU %.4g", m[1], m[2]);
  set_ours (row, m[0], sd[0], n[0], "runs", extra2);
  add_cond (row, g_strdup ("LSTM's mean test error − CA-RNN's"), m[1] - m[0], ">=", 0);
  add_cond (row, g_strdup ("GRU's mean test error − CA-RNN's"), m[2] - m[0], ">=", 0);
  row->rule = g_strdup ("CA-RNN's mean test error ≤ LSTM's and ≤ GRU's");
}

static void
judge_sst_rnn (Outcome *o)
{
  const char *a[] = { "ca" }, *b[] = { "lstm" }, *c[] = { "gru" };
  row_paired (o, "Sec. 4.4 (WMT'16; SST here): CA-RNN beats LSTM", a, b, 1, TRUE, "CA-RNN", "LSTM");
  row_paired (o, "Sec. 4.4 (WMT'16; SST here): CA-RNN beats GRU", a, c, 1, TRUE, "CA-RNN", "GRU");
}

static void
judge_attention (Outcome *o)
{
  /* "comparable": CA-ATT's mean within 0.01 of the better softmax attention's, or above */
  const double *ca = arm_values (o, "ca"), *bah = arm_values (o, "bahdanau");
  const double *luong = arm_values (o, "luong");
  double m[3] = { NAN, NAN, NAN }, sd[3];
  int n[3];
  const double *v[3] = { ca, bah, luong };
  for (int i = 0; i < 3; i++)
    if (v[i] != NULL)
      caml_repro_mean_sd (v[i], o->n_seeds, &m[i], &sd[i], &n[i]);
  CamlReproRow *row = add_row (o, "Sec. 4.3 (WMT'16; SST here): CA-ATT comparable to Bahdanau "
                               "and Luong attention");
  g_autofree char *extra = g_strdup_printf ("; Bahdanau %.4g, Luong %.4g", m[1], m[2]);
  set_ours (row, m[0], sd[0], n[0], "seeds", extra);
  add_cond (row, g_strdup ("CA-ATT's mean test accuracy − the better softmax attention's"),
            m[0] - MAX (m[1], m[2]), ">=", -0.01);
  row->rule = g_strdup ("CA-ATT's mean test accuracy ≥ the better of Bahdanau's and Luong's "
                        "− 0.01");
}

static const Arm xor_arms[] = {
  { "ca", "CA-NN (width 1)", "xor-ca-nn", NULL, -1, FALSE, TRUE },
  { "nn", "NN (1 hidden layer)", "xor-nn", NULL, -1, FALSE, TRUE },
  { "nn2", "NN (2 hidden layers)", "xor-nn2", NULL, -1, FALSE, TRUE },
};
static const Arm surface_arms[] = {
  { "ca1", "CA-NN, 1 layer", "surface-ca-nn-1", NULL, -1, FALSE, TRUE },
  { "ca2", "CA-NN, 2 layers", "surface-ca-nn-2", NULL, -1, FALSE, TRUE },
  { "nn", "NN", "surface-nn", NULL, -1, FALSE, TRUE },
};
static const Arm sigma_arms[] = {
  { "ca", "CA-CNN k=5 d=16", "mnist-ca-cnn", NULL, -1, FALSE, TRUE },
};
static const Arm fashion_arms[] = {
  { "ca", "conv CA-RES", "fashion-ca-res", NULL, -1, FALSE, TRUE },
  { "plain", "its baseline", "fashion-ca-res", NULL, -1, TRUE, TRUE },
};
static const Arm imdb_arms[] = {
  { "em", "CA-BSFE, em_steps 100", "imdb-ca-bsfe", NULL, 100, FALSE, TRUE },
  { "noem", "CA-BSFE, em_steps 0", "imdb-ca-bsfe", NULL, 0, FALSE, TRUE },
  { "avg", "averaging", "imdb-average", NULL, -1, FALSE, TRUE },
};
static const Arm sst_arms[] = {
  { "em", "CA-BSFE, em_steps 100", "sst-ca-bsfe", NULL, 100, FALSE, TRUE },
  { "noem", "CA-BSFE, em_steps 0", "sst-ca-bsfe", NULL, 0, FALSE, TRUE },
  { "avg", "averaging", "sst-average", NULL, -1, FALSE, TRUE },
};
/* The literal algorithm, then the fixed-norm reading (‖v0‖ held, iterated
 * to convergence: docs/sem.md); "fixed_iterations" is that fit's length. */
static const Arm sem_arms[] = {
  { "ca_sem", "CA-SEM", NULL, NULL, -1, FALSE, TRUE },
  { "ca_sem_context", "CA-SEM, context part", NULL, NULL, -1, FALSE, TRUE },
  { "sif", "SIF", NULL, NULL, -1, FALSE, TRUE },
  { "average", "average", NULL, NULL, -1, FALSE, TRUE },
  { "fixed_ca_sem", "CA-SEM, fixed norm", NULL, NULL, -1, FALSE, TRUE },
  { "fixed_ca_sem_context", "CA-SEM, fixed norm, context part", NULL, NULL, -1, FALSE, TRUE },
  { "fixed_iterations", "fixed-norm fit: iterations (cap 100)", NULL, NULL, -1, FALSE, TRUE,
    TRUE },
};
static const Arm sanity_arms[] = {
  { "ca", "CA-RNN", NULL, NULL, -1, FALSE, TRUE },
  { "lstm", "LSTM", NULL, NULL, -1, FALSE, TRUE },
  { "gru", "GRU", NULL, NULL, -1, FALSE, TRUE },
};
static const Arm sst_rnn_arms[] = {
  { "ca", "CA-RNN", "sst-rnn-ca-rnn", NULL, -1, FALSE, TRUE },
  { "lstm", "LSTM", "sst-rnn-lstm", NULL, -1, FALSE, TRUE },
  { "gru", "GRU", "sst-rnn-gru", NULL, -1, FALSE, TRUE },
};
static const Arm attention_arms[] = {
  { "ca", "CA-ATT", "sst-attention-ca-att", NULL, -1, FALSE, TRUE },
  { "bahdanau", "Bahdanau", "sst-attention-bahdanau", NULL, -1, FALSE, TRUE },
  { "luong", "Luong", "sst-attention-luong", NULL, -1, FALSE, TRUE },
};

#define ARMS(a) a, G_N_ELEMENTS (a)

static const Spec specs[] = {
  { "xor", "Fig. 15: XOR", "XOR's four points, L2 loss: a CA-NN of width 1 (v = tanh(linear)) "
    "against NNs of 1 and 2 hidden layers; training MSE", { NULL }, KIND_TRAIN, ARMS (xor_arms),
    5, 3, 0, NULL, NULL, "train_mse", judge_xor, { "ca:surface.png", "ca:chi.png" } },
  { "surface", "Fig. 16: the smooth surface", "z = x·exp(−x²−y²) from 1 % of an 81×81 grid; "
    "one and two CA-NN layers of width 5 and an NN; test MSE over 10 seeds", { NULL },
    KIND_TRAIN, ARMS (surface_arms), 10, 10, 0, NULL, NULL, "test_mse", judge_surface,
    { "ca2:surface.png" } },
  { "mnist", "Fig. 17: MNIST, CA-CNN against CNN over (k, d)",
    "one (CA-)conv layer of kernel k and depth d + max-pool + dense 128 + softmax, Adagrad "
    "0.01, batch 100; the CNN is the matched baseline (same options, seed and data order)",
    { "mnist" }, KIND_TRAIN, ARMS (mnist_arms), 3, 2, 200, NULL, NULL, "test_accuracy",
    judge_mnist, { NULL } },
  { "sigma", "Fig. 18: σ-maps on MNIST", "the mnist-ca-cnn preset (k = 5, d = 16) with "
    "σ-maps at steps 1,000 and 10,000 (quick: 100 and the last); ROC AUC of χ between digit "
    "and background pixels", { "mnist" }, KIND_TRAIN, ARMS (sigma_arms), 1, 1, 500,
    "1000,10000", "100,last", "sigma_auc", judge_sigma, { NULL } },
  { "fashion", "Figs. 19–20: convolutional CA-RES (Fashion-MNIST for CIFAR-10)",
    "the fashion-ca-res preset against its matched baseline; test accuracy",
    { "fashion" }, KIND_TRAIN, ARMS (fashion_arms), 3, 2, 300, NULL, NULL, "test_accuracy",
    judge_fashion, { NULL } },
  { "imdb", "Fig. 9: IMDB CA-BSFE", "bag of words → CA-BSFE (dim 5 + 5) → sigmoid, em_steps "
    "100 and 0, against averaging; test accuracy", { "imdb" }, KIND_TRAIN, ARMS (imdb_arms),
    5, 2, 2000, NULL, NULL, "test_accuracy", judge_imdb, { NULL } },
  { "sst", "Fig. 10: SST CA-BSFE", "binary SST: CA-BSFE (dim 5 + 5) → sigmoid, em_steps 100 "
    "and 0, against averaging; test accuracy", { "sst" }, KIND_TRAIN, ARMS (sst_arms),
    5, 3, 0, NULL, NULL, "test_accuracy", judge_sst, { NULL } },
  { "sem", "Table 3: SICK, CA-SEM against SIF and the average",
    "caml sem --corpus sicktrain sickdev --pairs sickdev --iterations 100 (wink 100-d "
    "vectors, not the paper's GloVe 200-d); Pearson r × 100", { "sick", "embeddings" },
    KIND_SEM, ARMS (sem_arms), 1, 1, 0, NULL, NULL, "pearson_x100", judge_sem,
    { "energy.png" } },
  { "sanity", "Fig. 13: the CA-RNN sanity test", "caml rnn-sanity: {I, am, happy} → 1, "
    "{You, are, very, angry} → 0 for 100 iterations, tested on {I, am, very, happy} and "
    "{You, look, angry}; test loss over runs", { NULL }, KIND_SANITY, ARMS (sanity_arms),
    10, 10, 0, NULL, NULL, "test_loss", judge_sanity, { "rnn-sanity.png" } },
  { "sst-rnn", "Sec. 4.4: CA-RNN as an encoder (SST for WMT'16)", "pre-trained wink vectors "
    "→ CA-RNN / LSTM / GRU 64 → sigmoid on binary SST; test accuracy", { "sst", "embeddings" },
    KIND_TRAIN, ARMS (sst_rnn_arms), 3, 2, 300, NULL, NULL, "test_accuracy", judge_sst_rnn,
    { NULL } },
  { "attention", "Sec. 4.3: CA-ATT (SST for WMT'16)", "trained 100-d word vectors → CA-ATT / "
    "Bahdanau / Luong attention → sigmoid on binary SST; test accuracy", { "sst" },
    KIND_TRAIN, ARMS (attention_arms), 3, 2, 3000, NULL, NULL, "test_accuracy",
    judge_attention, { NULL } },
};

static const Spec *
find_spec (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (specs); i++)
    if (g_str_equal (specs[i].name, name))
      return &specs[i];
  return NULL;
}

static char *
spec_names (void)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < G_N_ELEMENTS (specs); i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "", specs[i].name);
  return g_string_free (s, FALSE);
}

/* ------------------------------------------------------------ data */

/* What of the data spec needs is missing, with how to get it; NULL: all here. */
static char *
missing_data (const Spec *spec)
{
  for (int i = 0; i < 3 && spec->needs[i] != NULL; i++)
    {
      const char *need = spec->needs[i];
      g_autofree char *path = NULL;
      const char *how;
      if (g_str_equal (need, "mnist") || g_str_equal (need, "fashion"))
        {
          gboolean mnist = g_str_equal (need, "mnist");
          path = g_build_filename (caml_data_dir (), mnist ? "mnist" : "fashion-mnist",
                                   "train-images-idx3-ubyte", NULL);
          how = mnist ? "datasets/fetch mnist" : "datasets/fetch fashion-mnist";
          g_autofree char *gz = g_strconcat (path, ".gz", NULL);
          if (g_file_test (gz, G_FILE_TEST_EXISTS))
            continue;
        }
      else if (g_str_equal (need, "imdb"))
        {
          path = g_build_filename (caml_data_dir (), "imdb", "reviews.json", NULL);
          how = "datasets/fetch imdb";
        }
      else if (g_str_equal (need, "embeddings"))
        {
          path = caml_embeddings_wink_path ();
          how = "datasets/fetch embeddings";
        }
      else
        {
          path = g_build_filename (caml_shared_datasets_dir (), need,
                                   g_str_equal (need, "sst") ? "sentiment-train" : "sickdev",
                                   NULL);
          how = "the shared data sets: set CAML_SHARED_DATASETS to the folder that holds "
                "sst/ and sick/";
        }
      if (!g_file_test (path, G_FILE_TEST_EXISTS))
        return g_strdup_printf ("data missing: %s is not here (%s)", path, how);
    }
  return NULL;
}

/* ------------------------------------------------------------ runs */

typedef struct {
  const char *out_dir;
  gboolean    quick;
  int         seeds;       /* > 0: --seeds */
  int         steps;       /* > 0: --steps */
  const char *self;        /* this binary, for caml sem and caml rnn-sanity */
  int         run_index;   /* runs so far, for the progress lines */
  int         n_runs;      /* runs in all */
  gint64      started;
} Context;

static double
summary_number (JsonObject *o, const char *key)
{
  JsonNode *n = o != NULL ? json_object_get_member (o, key) : NULL;
  return n != NULL && JSON_NODE_HOLDS_VALUE (n) ? json_node_get_double (n) : NAN;
}

static const char *
summary_string (JsonObject *o, const char *key)
{
  JsonNode *n = o != NULL ? json_object_get_member (o, key) : NULL;
  return n != NULL && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
         ? json_node_get_string (n) : NULL;
}

/* A run's summary.json, if it finished `steps` steps: the metric. */
static gboolean
finished_run (const char *dir, const char *metric, long steps, double *value)
{
  g_autofree char *path = g_build_filename (dir, "summary.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, path, NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return FALSE;
  JsonObject *o = json_node_get_object (json_parser_get_root (parser));
  const char *state = summary_string (o, "state");
  if (state == NULL || !g_str_equal (state, "finished") || summary_number (o, "steps") != steps)
    return FALSE;
  *value = summary_number (o, metric);
  return TRUE;
}

static void
progress (Context *ctx, const char *name, const char *what, const char *result)
{
  double elapsed = (g_get_monotonic_time () - ctx->started) / 1e6;
  g_printerr ("[%d/%d %4.0f s] %s: %s … %s\n", ctx->run_index, ctx->n_runs, elapsed, name,
              what, result);
}

/* The experiment of an arm at a seed, with its layer options, em_steps,
 * steps and baseline applied. */
static CamlExperiment *
arm_experiment (const Arm *arm, guint64 seed, int steps, GError **error)
{
  CamlExperiment *exp = caml_presets_load (arm->preset, error);
  if (exp == NULL)
    return NULL;
  g_auto (GStrv) options = arm->options ? g_strsplit (arm->options, ";", -1) : NULL;
  if (options != NULL
      && !caml_cli_apply_layer_options (exp, options, CAML_CLI_NOT_GIVEN, CAML_CLI_NOT_GIVEN,
                                        error))
    {
      caml_experiment_free (exp);
      return NULL;
    }
  exp->seed = seed;
  if (steps > 0)
    exp->steps = steps;
  if (arm->em_steps >= 0)
    exp->optimizer.em_steps = arm->em_steps;
  if (arm->baseline)
    {
      CamlExperiment *base = caml_experiment_make_baseline (exp);
      caml_experiment_free (exp);
      exp = base;
    }
  return exp;
}

static void
discard_print (const char *string)
{
  (void) string;
}

static void
train_arm (Context *ctx, Outcome *o, int a, int s, const char *dir)
{
  const Spec *spec = o->spec;
  const Arm *arm = o->arms[a];
  double *value = &o->values[a * o->n_seeds + s];
  g_autofree char *what = g_strdup_printf ("%s seed %d", arm->label, s);
  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = arm_experiment (arm, (guint64) s, o->steps, &error);
  ctx->run_index++;
  if (exp == NULL)
    {
      progress (ctx, spec->name, what, error->message);
      o->failed++;
      return;
    }
  if (finished_run (dir, spec->metric, exp->steps, value))
    {
      progress (ctx, spec->name, what, "kept from an earlier run");
      o->kept++;
      caml_experiment_free (exp);
      return;
    }
  /* caml train's default for models without σ-maps (it draws none) */
  const char *sigma = ctx->quick || o->steps > 0 ? spec->sigma_steps_quick : spec->sigma_steps;
  sigma = sigma != NULL ? sigma : "last";
  g_autofree char *source = g_strdup_printf ("preset %s", arm->preset);
  CamlCliRun how = { .preset = arm->preset, .source = source, .out_dir = dir,
                     .sigma_steps = sigma, .quiet = TRUE, .plain = TRUE, .no_notes = TRUE,
                     .alone = TRUE };
  g_autofree char *failure = NULL;
  /* the run's own summary lines would bury the progress lines: its
   * figures are in its summary.json, its errors still go to stderr */
  GPrintFunc print = g_set_print_handler (discard_print);
  int status = caml_cli_run_experiment (exp, &how, &failure);
  g_set_print_handler (print);
  caml_experiment_free (exp);
  o->trained++;
  /* the figure the run wrote (a run stopped early by its own rule counts) */
  g_autofree char *path = g_build_filename (dir, "summary.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  *value = NAN;
  if (status == 0 && json_parser_load_from_file (parser, path, NULL)
      && JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    *value = summary_number (json_node_get_object (json_parser_get_root (parser)),
                             spec->metric);
  if (status != 0)
    {
      o->failed++;
      progress (ctx, spec->name, what, failure ? failure : "failed");
      if (caml_cli_interrupted (status))
        caml_cli_heard_signal (status - 128);
      return;
    }
  g_autofree char *result = g_strdup_printf ("%s %.4g", spec->metric, *value);
  progress (ctx, spec->name, what, result);
}

/* Runs this binary with argv (NULL-terminated, without the program), its
 * output into log. Whether it exited 0; *message: why not. */
static gboolean
run_self (Context *ctx, const char *const *args, const char *log, char **message)
{
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) ctx->self);
  for (int i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_autofree char *out = NULL, *err = NULL;
  int wait_status = 0;
  g_autoptr (GError) error = NULL;
  gboolean ok = g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                              &out, &err, &wait_status, &error);
  g_ptr_array_free (argv, TRUE);
  if (!ok)
    {
      *message = g_strdup (error->message);
      return FALSE;
    }
  g_autofree char *both = g_strconcat (out, err, NULL);
  caml_file_replace (log, both, strlen (both), NULL);
  if (!g_spawn_check_wait_status (wait_status, &error))
    {
      g_autofree char *tail = g_strdup (err && *err ? err : out);
      g_strstrip (tail);
      *message = g_strdup_printf ("%s (%s)", error->message, tail);
      return FALSE;
    }
  return TRUE;
}

static void
run_sem (Context *ctx, Outcome *o, const char *dir)
{
  g_autofree char *summary = g_build_filename (dir, "summary.json", NULL);
  g_autofree char *log = g_build_filename (dir, "caml.log", NULL);
  g_autofree char *sick = g_build_filename (caml_shared_datasets_dir (), "sick", NULL);
  g_autofree char *train = g_build_filename (sick, "sicktrain", NULL);
  g_autofree char *dev = g_build_filename (sick, "sickdev", NULL);
  g_autofree char *fixed_dir = g_build_filename (dir, "fixed-norm", NULL);
  g_autofree char *fixed_summary = g_build_filename (fixed_dir, "summary.json", NULL);
  g_autofree char *fixed_log = g_build_filename (fixed_dir, "caml.log", NULL);
  /* the literal algorithm into DIR, the fixed-norm reading into DIR/fixed-norm */
  const char *modes[2] = { "literal", "fixed-norm" };
  const char *dirs[2] = { dir, fixed_dir }, *logs[2] = { log, fixed_log };
  const char *summaries[2] = { summary, fixed_summary };
  for (int m = 0; m < 2; m++)
    {
      const char *args[] = { "sem", "--corpus", train, "--corpus", dev, "--pairs", dev,
                             "--iterations", "100", "--mode", modes[m], "--plain",
                             "--out", dirs[m], NULL };
      g_autofree char *message = NULL;
      g_autofree char *what = g_strdup_printf ("caml sem --mode %s", modes[m]);
      ctx->run_index++;
      gboolean kept = g_file_test (summaries[m], G_FILE_TEST_EXISTS);
      if (!kept && (g_mkdir_with_parents (dirs[m], 0755) != 0
                    || !run_self (ctx, args, logs[m], &message)))
        {
          o->failed++;
          progress (ctx, o->spec->name, what, message ? message : g_strerror (errno));
          return;
        }
      o->kept += kept;
      o->trained += !kept;
      g_autoptr (JsonParser) parser = json_parser_new ();
      if (!json_parser_load_from_file (parser, summaries[m], NULL)
          || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        continue;
      JsonObject *root = json_node_get_object (json_parser_get_root (parser));
      JsonNode *p = json_object_get_member (root, "pearson_x100");
      JsonObject *pearson = p != NULL && JSON_NODE_HOLDS_OBJECT (p) ? json_node_get_object (p) : NULL;
      for (int a = 0; a < o->n_arms; a++)
        {
          const char *key = o->arms[a]->key;
          if (m == 0 && !g_str_has_prefix (key, "fixed_"))
            o->values[a] = summary_number (pearson, key);
          else if (m == 1 && g_str_equal (key, "fixed_iterations"))
            o->values[a] = summary_number (root, "iterations");
          else if (m == 1 && g_str_has_prefix (key, "fixed_"))
            o->values[a] = summary_number (pearson, key + strlen ("fixed_"));
        }
      progress (ctx, o->spec->name, what, kept ? "kept from an earlier run" : "done");
    }
}

static void
run_sanity (Context *ctx, Outcome *o, const char *dir)
{
  g_autofree char *csv = g_build_filename (dir, "rnn-sanity-runs.csv", NULL);
  g_autofree char *log = g_build_filename (dir, "caml.log", NULL);
  g_autofree char *runs = g_strdup_printf ("%d", o->n_seeds);
  const char *args[] = { "rnn-sanity", "--runs", runs, "--out", dir, NULL };
  g_autofree char *message = NULL;
  ctx->run_index++;
  if (!run_self (ctx, args, log, &message))
    {
      o->failed++;
      progress (ctx, o->spec->name, "caml rnn-sanity", message);
      return;
    }
  o->trained++;
  /* cell,seed,train_loss,test_loss,test_error,… */
  g_autofree char *text = NULL;
  if (g_file_get_contents (csv, &text, NULL, NULL))
    {
      g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
      for (int i = 1; lines[i] != NULL; i++)
        {
          g_auto (GStrv) f = g_strsplit (lines[i], ",", -1);
          if (g_strv_length (f) < 5)
            continue;
          const char *key = g_str_equal (f[0], "CA-RNN") ? "ca" : g_str_equal (f[0], "LSTM")
                            ? "lstm" : g_str_equal (f[0], "GRU") ? "gru" : NULL;
          int a = key ? arm_index (o, key) : -1;
          int s = atoi (f[1]);
          if (a < 0 || s < 0 || s >= o->n_seeds)
            continue;
          o->values[a * o->n_seeds + s] = g_ascii_strtod (f[3], NULL);
          o->values2[a * o->n_seeds + s] = g_ascii_strtod (f[4], NULL);
        }
    }
  progress (ctx, o->spec->name, "caml rnn-sanity", "done");
}

/* ------------------------------------------------------------ results.json */

static void
add_string (JsonBuilder *b, const char *key, const char *value)
{
  json_builder_set_member_name (b, key);
  if (value != NULL)
    json_builder_add_string_value (b, value);
  else
    json_builder_add_null_value (b);
}

static void
add_int (JsonBuilder *b, const char *key, gint64 value)
{
  json_builder_set_member_name (b, key);
  json_builder_add_int_value (b, value);
}

static char *
settings_text (const Context *ctx, const Outcome *o)
{
  g_autofree char *steps = o->steps > 0 ? g_strdup_printf ("%d steps", o->steps)
                                         : g_strdup ("the presets' steps");
  return g_strdup_printf ("%s mode, %d seed%s, %s", ctx->quick ? "quick" : "full", o->n_seeds,
                          o->n_seeds == 1 ? "" : "s", steps);
}

static gboolean
write_results (const Context *ctx, Outcome *o, const char *dir, GError **error)
{
  const Spec *spec = o->spec;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  add_string (b, "experiment", spec->name);
  add_string (b, "figure", spec->figure);
  g_autofree char *settings = settings_text (ctx, o);
  g_autofree char *setup = g_strdup_printf ("%s. Ours: %s.", spec->setup, settings);
  add_string (b, "setup", setup);
  add_string (b, "metric", spec->metric);
  json_builder_set_member_name (b, "settings");
  json_builder_begin_object (b);
  add_string (b, "mode", ctx->quick ? "quick" : "full");
  add_int (b, "seeds", o->n_seeds);
  add_int (b, "steps", o->steps);
  json_builder_end_object (b);
  add_string (b, "why", o->why);
  /* complete: every run measured; an experiment not testable here is
   * looked at again next time (its data may have come) */
  json_builder_set_member_name (b, "complete");
  json_builder_add_boolean_value (b, o->why == NULL && o->failed == 0);

  json_builder_set_member_name (b, "models");
  json_builder_begin_array (b);
  for (int a = 0; a < o->n_arms; a++)
    {
      const double *v = &o->values[a * o->n_seeds];
      double mean, sd;
      int n;
      caml_repro_mean_sd (v, o->n_seeds, &mean, &sd, &n);
      json_builder_begin_object (b);
      add_string (b, "key", o->arms[a]->key);
      add_string (b, "label", o->arms[a]->label);
      caml_cli_json_add_number (b, "mean", mean);
      caml_cli_json_add_number (b, "sd", sd);
      add_int (b, "runs", n);
      json_builder_set_member_name (b, "values");
      json_builder_begin_array (b);
      for (int s = 0; s < o->n_seeds; s++)
        if (isfinite (v[s]))
          json_builder_add_double_value (b, v[s]);
        else
          json_builder_add_null_value (b);
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "rows");
  json_builder_begin_array (b);
  for (guint r = 0; r < o->rows->len; r++)
    {
      const CamlReproRow *row = &g_array_index (o->rows, CamlReproRow, r);
      json_builder_begin_object (b);
      add_string (b, "claim", row->claim);
      add_string (b, "ours", row->ours);
      caml_cli_json_add_number (b, "mean", row->mean);
      caml_cli_json_add_number (b, "spread", row->spread);
      add_int (b, "n", row->n);
      add_string (b, "rule", row->rule);
      json_builder_set_member_name (b, "conditions");
      json_builder_begin_array (b);
      for (int c = 0; c < row->n_conds; c++)
        {
          json_builder_begin_object (b);
          add_string (b, "what", row->conds[c].what);
          caml_cli_json_add_number (b, "value", row->conds[c].value);
          add_string (b, "op", row->conds[c].op);
          caml_cli_json_add_number (b, "threshold", row->conds[c].threshold);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      add_string (b, "verdict", caml_repro_verdict (row));
      add_string (b, "why", row->why);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "figures");
  json_builder_begin_array (b);
  for (guint f = 0; f < o->figures->len; f++)
    json_builder_add_string_value (b, o->figures->pdata[f]);
  json_builder_end_array (b);
  add_int (b, "runs_trained", o->trained);
  add_int (b, "runs_kept", o->kept);
  add_int (b, "runs_failed", o->failed);
  json_builder_end_object (b);
  g_autofree char *path = g_build_filename (dir, "results.json", NULL);
  return caml_cli_json_write (b, path, error);
}

/* Whether dir/results.json is complete for these settings. */
static gboolean
already_done (const Context *ctx, const Outcome *o, const char *dir)
{
  g_autofree char *path = g_build_filename (dir, "results.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, path, NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return FALSE;
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonNode *complete = json_object_get_member (root, "complete");
  JsonNode *settings = json_object_get_member (root, "settings");
  if (complete == NULL || !JSON_NODE_HOLDS_VALUE (complete)
      || !json_node_get_boolean (complete) || settings == NULL
      || !JSON_NODE_HOLDS_OBJECT (settings))
    return FALSE;
  JsonObject *s = json_node_get_object (settings);
  const char *mode = summary_string (s, "mode");
  return mode != NULL && g_str_equal (mode, ctx->quick ? "quick" : "full")
         && summary_number (s, "seeds") == o->n_seeds && summary_number (s, "steps") == o->steps;
}

/* ------------------------------------------------------------ one experiment */

static void
outcome_init (Outcome *o, const Spec *spec, const Context *ctx)
{
  memset (o, 0, sizeof *o);
  o->spec = spec;
  o->arms = g_new (const Arm *, spec->n_arms);
  for (int a = 0; a < spec->n_arms; a++)
    if (!ctx->quick || spec->arms[a].quick)
      o->arms[o->n_arms++] = &spec->arms[a];
  o->n_seeds = ctx->seeds > 0 ? ctx->seeds : ctx->quick ? spec->seeds_quick : spec->seeds;
  if (spec->kind == KIND_SEM)
    o->n_seeds = 1;   /* deterministic */
  o->steps = spec->kind != KIND_TRAIN ? 0 : ctx->steps > 0 ? ctx->steps
             : ctx->quick ? spec->steps_quick : 0;
  o->values = g_new (double, (gsize) o->n_arms * o->n_seeds);
  o->values2 = g_new (double, (gsize) o->n_arms * o->n_seeds);
  for (int i = 0; i < o->n_arms * o->n_seeds; i++)
    o->values[i] = o->values2[i] = NAN;
  o->rows = g_array_new (FALSE, TRUE, sizeof (CamlReproRow));
  o->figures = g_ptr_array_new_with_free_func (g_free);
}

static void
outcome_clear (Outcome *o)
{
  for (guint r = 0; r < o->rows->len; r++)
    caml_repro_row_clear (&g_array_index (o->rows, CamlReproRow, r));
  g_array_free (o->rows, TRUE);
  g_ptr_array_free (o->figures, TRUE);
  g_free (o->values);
  g_free (o->values2);
  g_free (o->arms);
  g_free (o->why);
}

static int
runs_of (const Outcome *o)
{
  if (o->spec->kind == KIND_SEM)
    return 2;   /* the literal fit and the fixed-norm one */
  if (o->spec->kind != KIND_TRAIN)
    return 1;
  return o->n_arms * o->n_seeds;
}

/* The paper's Fig. 17 for an experiment whose arms are a grid of two layer
 * options, each cell with its baseline ("kernel=K;depth=D"): the mean
 * metric against the first option, a line per value of the second,
 * baselines dashed — the figure `caml sweep` and the workbench's Sweep
 * page draw (caml_sweep_plot_new), from the cells measured. FALSE, with
 * nothing written and no error, for other arms. */
static gboolean
plot_grid (const Outcome *o, const char *png, GError **error)
{
  GPtrArray *values[2] = { g_ptr_array_new_with_free_func (g_free),
                           g_ptr_array_new_with_free_func (g_free) };
  char *keys[2] = { NULL, NULL };
  gboolean grid = o->n_arms > 0;
  for (int a = 0; a < o->n_arms && grid; a++)
    {
      g_auto (GStrv) parts = o->arms[a]->options != NULL
                             ? g_strsplit (o->arms[a]->options, ";", -1) : NULL;
      grid = parts != NULL && g_strv_length (parts) == 2;
      for (int k = 0; grid && k < 2; k++)
        {
          const char *eq = strchr (parts[k], '=');
          g_autofree char *key = eq != NULL ? g_strndup (parts[k], eq - parts[k]) : NULL;
          grid = key != NULL && (keys[k] == NULL || g_str_equal (keys[k], key));
          if (grid && keys[k] == NULL)
            keys[k] = g_strdup (key);
          gboolean seen = FALSE;
          for (guint v = 0; grid && v < values[k]->len; v++)
            seen |= g_str_equal (values[k]->pdata[v], eq + 1);
          if (grid && !seen)
            g_ptr_array_add (values[k], g_strdup (eq + 1));
        }
    }
  gboolean ok = !grid;
  CamlExperiment *exp = grid ? caml_presets_load (o->arms[0]->preset, error) : NULL;
  if (exp != NULL)
    {
      g_autoptr (CamlSweepPlan) plan = caml_sweep_plan_new (exp, o->arms[0]->preset, NULL);
      for (int k = 0; k < 2; k++)
        caml_sweep_plan_add_axis (plan, keys[k], (const char *const *) values[k]->pdata,
                                  (int) values[k]->len, NULL);
      int n = caml_sweep_plan_n_runs (plan);
      CamlSweepResult *results = g_new0 (CamlSweepResult, n);
      for (int i = 0; i < n; i++)
        {
          caml_sweep_plan_result_init (plan, i, &results[i]);
          g_autofree char *options = g_strdup_printf ("%s=%s;%s=%s", keys[0],
                                                      (char *) values[0]->pdata[results[i].index[0]],
                                                      keys[1],
                                                      (char *) values[1]->pdata[results[i].index[1]]);
          for (int a = 0; a < o->n_arms; a++)
            if (g_str_equal (o->arms[a]->options, options)
                && o->arms[a]->baseline == results[i].baseline)
              {
                double mean, sd;
                int measured;
                caml_repro_mean_sd (&o->values[a * o->n_seeds], o->n_seeds, &mean, &sd,
                                    &measured);
                results[i].done = measured > 0;
                results[i].metric = mean;
                results[i].classification = g_str_equal (o->spec->metric, "test_accuracy");
              }
        }
      g_autoptr (CamlPlotLine) plot = caml_sweep_plot_new (plan, results, n);
      ok = caml_plot_write_png (png, 900, 560, caml_plot_line_draw_cb, plot, error);
      for (int i = 0; i < n; i++)
        caml_sweep_result_clear (&results[i]);
      g_free (results);
    }
  for (int k = 0; k < 2; k++)
    {
      g_free (keys[k]);
      g_ptr_array_free (values[k], TRUE);
    }
  return ok && grid;
}

/* Copies a run's figure into the experiment's folder as NAME-FILE. */
static void
copy_figure (Outcome *o, const char *out_dir, const char *from, const char *file)
{
  g_autofree char *src = g_build_filename (from, file, NULL);
  g_autofree char *name = g_strdup_printf ("%s-%s", o->spec->name, file);
  g_autofree char *dst = g_build_filename (out_dir, o->spec->name, name, NULL);
  g_autofree char *data = NULL;
  gsize length;
  if (g_file_get_contents (src, &data, &length, NULL)
      && caml_file_replace (dst, data, length, NULL))
    g_ptr_array_add (o->figures, g_build_filename (o->spec->name, name, NULL));
}

/* Runs (or reads back) one experiment and writes its results.json.
 * Returns FALSE when a run failed or the results could not be written. */
static gboolean
run_spec (Context *ctx, const Spec *spec, gboolean *interrupted)
{
  Outcome o;
  outcome_init (&o, spec, ctx);
  g_autofree char *dir = g_build_filename (ctx->out_dir, spec->name, NULL);
  g_autoptr (GError) error = NULL;
  gboolean ok = TRUE;
  if (already_done (ctx, &o, dir))
    {
      ctx->run_index += runs_of (&o);
      g_printerr ("[%d/%d] %s: complete in %s/results.json, not run again\n", ctx->run_index,
                  ctx->n_runs, spec->name, dir);
      outcome_clear (&o);
      return TRUE;
    }
  if (!caml_cli_ensure_dir (dir, &error))
    {
      g_printerr ("caml reproduce: %s\n", error->message);
      outcome_clear (&o);
      return FALSE;
    }
  o.why = missing_data (spec);
  if (o.why != NULL)
    {
      ctx->run_index += runs_of (&o);
      g_printerr ("[%d/%d] %s: not testable here — %s\n", ctx->run_index, ctx->n_runs,
                  spec->name, o.why);
    }
  else if (spec->kind == KIND_SEM)
    run_sem (ctx, &o, dir);
  else if (spec->kind == KIND_SANITY)
    run_sanity (ctx, &o, dir);
  else
    for (int a = 0; a < o.n_arms && !*interrupted; a++)
      for (int s = 0; s < o.n_seeds && !*interrupted; s++)
        {
          g_autofree char *name = g_strdup_printf ("%s-seed%d", o.arms[a]->key, s);
          g_autofree char *run_dir = g_build_filename (dir, "runs", name, NULL);
          train_arm (ctx, &o, a, s, run_dir);
          *interrupted = caml_cli_signal_heard () != 0;
        }
  if (*interrupted)
    {
      outcome_clear (&o);
      return FALSE;
    }
  if (o.why == NULL && o.failed > 0)
    o.why = g_strdup_printf ("%d run%s failed (see the progress lines and the runs' "
                             "summary.json): its rows are not judged", o.failed,
                             o.failed == 1 ? "" : "s");
  spec->judge (&o);
  for (guint r = 0; r < o.rows->len; r++)
    {
      CamlReproRow *row = &g_array_index (o.rows, CamlReproRow, r);
      if (o.why != NULL && row->why == NULL)
        row->why = g_strdup (o.why);
    }
  /* the figures: the numbers of every model, and the runs' own */
  if (o.why == NULL)
    {
      g_autofree const char **labels = g_new (const char *, o.n_arms);
      g_autofree double *values = g_new (double, (gsize) o.n_arms * o.n_seeds);
      int n_plotted = 0;
      for (int a = 0; a < o.n_arms; a++)
        if (!o.arms[a]->not_plotted)
          {
            memcpy (&values[n_plotted * o.n_seeds], &o.values[a * o.n_seeds],
                    sizeof (double) * o.n_seeds);
            labels[n_plotted++] = o.arms[a]->label;
          }
      g_autofree char *file = g_strdup_printf ("%s.png", spec->name);
      g_autofree char *png = g_build_filename (dir, file, NULL);
      g_autofree char *title = g_strdup_printf ("%s: %s", spec->name, spec->figure);
      if (caml_repro_plot_values (png, title, spec->metric, labels, n_plotted, values,
                                  o.n_seeds, &error))
        g_ptr_array_add (o.figures, g_build_filename (spec->name, file, NULL));
      else
        {
          g_printerr ("caml reproduce: %s\n", error->message);
          g_clear_error (&error);
        }
      /* a grid of options: also as the paper draws it */
      g_autofree char *grid_file = g_strdup_printf ("%s-grid.png", spec->name);
      g_autofree char *grid_png = g_build_filename (dir, grid_file, NULL);
      if (plot_grid (&o, grid_png, &error))
        g_ptr_array_add (o.figures, g_build_filename (spec->name, grid_file, NULL));
      else if (error != NULL)
        {
          g_printerr ("caml reproduce: %s\n", error->message);
          g_clear_error (&error);
        }
      for (int c = 0; c < 3 && spec->copy[c] != NULL; c++)
        {
          const char *colon = strchr (spec->copy[c], ':');
          if (colon == NULL)
            copy_figure (&o, ctx->out_dir, dir, spec->copy[c]);
          else
            {
              g_autofree char *key = g_strndup (spec->copy[c], colon - spec->copy[c]);
              g_autofree char *name = g_strdup_printf ("%s-seed0", key);
              g_autofree char *run_dir = g_build_filename (dir, "runs", name, NULL);
              copy_figure (&o, ctx->out_dir, run_dir, colon + 1);
            }
        }
      if (spec->sigma_steps != NULL)
        {
          /* the σ-maps of the first seed, at each step drawn */
          g_autofree char *run_dir = g_build_filename (dir, "runs", "ca-seed0", NULL);
          g_autoptr (GDir) d = g_dir_open (run_dir, 0, NULL);
          GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
          const char *entry;
          while (d != NULL && (entry = g_dir_read_name (d)) != NULL)
            if (g_str_has_prefix (entry, "sigma-step") && g_str_has_suffix (entry, ".png"))
              g_ptr_array_add (names, g_strdup (entry));
          for (guint i = 0; i < names->len; i++)
            copy_figure (&o, ctx->out_dir, run_dir, names->pdata[i]);
          g_ptr_array_free (names, TRUE);
        }
    }
  if (!write_results (ctx, &o, dir, &error))
    {
      g_printerr ("caml reproduce: %s\n", error->message);
      ok = FALSE;
    }
  ok = ok && o.failed == 0;
  outcome_clear (&o);
  return ok;
}

/* ------------------------------------------------------------ the verb */

static gboolean
parse_count (const char *option, const char *text, int max, int *value, GError **error)
{
  gint64 v;
  if (text == NULL)
    return TRUE;
  if (!g_ascii_string_to_signed (text, 10, 1, max, &v, NULL))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "%s %s: expected a whole number in 1…%d", option, text, max);
      return FALSE;
    }
  *value = (int) v;
  return TRUE;
}

int
caml_cli_reproduce (int argc, char **argv)
{
  gboolean quick = FALSE, list = FALSE;
  g_auto (GStrv) only = NULL, rest = NULL;
  g_autofree char *out_dir = NULL, *seeds_text = NULL, *steps_text = NULL;
  const GOptionEntry entries[] = {
    { "quick", 0, 0, G_OPTION_ARG_NONE, &quick,
      "Fewer seeds, steps and grid cells (≤ 15 minutes on 2 cores); marked in the report", NULL },
    { "only", 0, 0, G_OPTION_ARG_STRING_ARRAY, &only,
      "Run only these experiments (names may follow: --only xor surface)", "NAME" },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "Directory for the results and the report (default: runs/reproduce)", "DIR" },
    { "seeds", 0, 0, G_OPTION_ARG_STRING, &seeds_text,
      "Seeds (runs) of every experiment, in place of its own; marked in the report", "N" },
    { "steps", 0, 0, G_OPTION_ARG_STRING, &steps_text,
      "Training steps of every trained model, in place of the presets'; marked", "N" },
    { "list", 0, 0, G_OPTION_ARG_NONE, &list, "List the experiments and exit", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &rest, NULL, NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) octx = g_option_context_new ("- the paper's experiments, judged");
  g_option_context_add_main_entries (octx, entries, NULL);
  g_autofree char *names_text = spec_names ();
  g_autofree char *description = g_strdup_printf (
    "Runs every experiment of the paper that the data here allow, judges each\n"
    "claim by the rule the report states beside it, and writes DIR/report.md\n"
    "and DIR/report.html (every figure and a table: experiment, the paper's\n"
    "claim, ours as mean ± sd over seeds, the verdict — reproduced, not\n"
    "reproduced, or not testable here and why). Each experiment's numbers go\n"
    "to DIR/NAME/results.json, its runs to DIR/NAME/runs/.\n"
    "\n"
    "Resumable: a finished run (its summary.json) is not trained again, and\n"
    "an experiment whose results.json is complete for the same mode, seeds\n"
    "and steps is not run again. Missing data make an experiment \"not\n"
    "testable here\", with the command that fetches them; never an error.\n"
    "\n"
    "Experiments: %s", names_text);
  g_option_context_set_description (octx, description);
  g_autoptr (GError) error = NULL;
  if (!caml_cli_parse_options (octx, entries, &argc, &argv, &error))
    {
      g_printerr ("caml reproduce: %s\n", error->message);
      return 2;
    }
  Context ctx = { .quick = quick, .started = g_get_monotonic_time () };
  if (!parse_count ("--seeds", seeds_text, 1000, &ctx.seeds, &error)
      || !parse_count ("--steps", steps_text, 1000000000, &ctx.steps, &error))
    {
      g_printerr ("caml reproduce: %s\n", error->message);
      return 2;
    }
  if (list)
    {
      for (guint i = 0; i < G_N_ELEMENTS (specs); i++)
        g_print ("%-10s %s\n", specs[i].name, specs[i].figure);
      return 0;
    }
  if (rest != NULL && only == NULL)
    {
      g_printerr ("caml reproduce: unexpected argument \"%s\" (experiments are chosen with "
                  "--only NAME…)\n", rest[0]);
      return 2;
    }
  /* the experiments chosen, in the table's order */
  GPtrArray *chosen = g_ptr_array_new ();
  g_autoptr (GStrvBuilder) asked = g_strv_builder_new ();
  if (only != NULL)
    g_strv_builder_addv (asked, (const char **) only);
  if (rest != NULL)
    g_strv_builder_addv (asked, (const char **) rest);
  g_auto (GStrv) names = g_strv_builder_end (asked);
  for (int i = 0; names[i] != NULL; i++)
    if (find_spec (names[i]) == NULL)
      {
        g_printerr ("caml reproduce: no experiment named \"%s\" (experiments: %s)\n",
                    names[i], names_text);
        g_ptr_array_free (chosen, TRUE);
        return 2;
      }
  for (guint i = 0; i < G_N_ELEMENTS (specs); i++)
    if (only == NULL || g_strv_contains ((const char *const *) names, specs[i].name))
      g_ptr_array_add (chosen, (gpointer) &specs[i]);

  if (out_dir == NULL)
    out_dir = g_strdup ("runs/reproduce");
  if (!caml_cli_ensure_dir (out_dir, &error))
    {
      g_printerr ("caml reproduce: %s\n", error->message);
      g_ptr_array_free (chosen, TRUE);
      return 1;
    }
  ctx.out_dir = out_dir;
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  ctx.self = self != NULL ? self : "caml";
  for (guint i = 0; i < chosen->len; i++)
    {
      Outcome o;
      outcome_init (&o, chosen->pdata[i], &ctx);
      ctx.n_runs += runs_of (&o);
      outcome_clear (&o);
    }

  int status = 0;
  gboolean interrupted = FALSE;
  GPtrArray *done = g_ptr_array_new ();
  for (guint i = 0; i < chosen->len && !interrupted; i++)
    {
      const Spec *spec = chosen->pdata[i];
      if (!run_spec (&ctx, spec, &interrupted) && !interrupted)
        status = 1;
      if (!interrupted)
        g_ptr_array_add (done, (gpointer) spec->name);
    }
  double seconds = (g_get_monotonic_time () - ctx.started) / 1e6;
  GString *header = g_string_new (NULL);
  g_string_append (header, "Produced by `caml reproduce");
  if (quick)
    g_string_append (header, " --quick");
  if (ctx.seeds > 0)
    g_string_append_printf (header, " --seeds %d", ctx.seeds);
  if (ctx.steps > 0)
    g_string_append_printf (header, " --steps %d", ctx.steps);
  if (only != NULL)
    {
      g_string_append (header, " --only");
      for (guint i = 0; i < done->len; i++)
        g_string_append_printf (header, " %s", (char *) done->pdata[i]);
    }
  g_string_append_printf (header, "` (caml %s), mode: **%s**%s%s. ", CAML_VERSION,
                          quick ? "quick" : "full",
                          quick ? " — fewer seeds, steps and (k, d) cells than the paper's; "
                                  "every experiment's section says what it ran" : "",
                          ctx.seeds > 0 || ctx.steps > 0
                          ? "; seeds or steps set on the command line, not the experiments' own"
                          : "");
  g_string_append_printf (header, "This invocation took %.0f s (experiments complete from an "
                          "earlier one were read back, not run).", seconds);
  if (!caml_repro_write_report (out_dir, (const char *const *) done->pdata, (int) done->len,
                                header->str, &error))
    {
      g_printerr ("caml reproduce: %s\n", error->message);
      status = 1;
    }
  else
    g_print ("report in %s/report.md and %s/report.html (%.0f s)\n", out_dir, out_dir, seconds);
  g_string_free (header, TRUE);
  g_ptr_array_free (done, TRUE);
  g_ptr_array_free (chosen, TRUE);
  if (interrupted)
    return 128 + caml_cli_signal_heard ();
  return status;
}
