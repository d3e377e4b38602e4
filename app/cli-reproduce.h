/* cli-reproduce.h — what `caml reproduce`'s runner (cli-reproduce.c) and
 * its statistics and report writer (cli-reproduce-report.c) share.
 *
 * Each experiment's figures go into OUT/NAME/results.json, written
 * atomically; the report (OUT/report.md, OUT/report.html) is built from
 * those files alone, so an experiment finished by an earlier run reads the
 * same as one just trained. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* `caml reproduce` (cli-reproduce.c); an exit status. */
int caml_cli_reproduce (int argc, char **argv);

#define CAML_REPRO_REPRODUCED     "reproduced"
#define CAML_REPRO_NOT_REPRODUCED "not reproduced"
#define CAML_REPRO_NOT_TESTABLE   "not testable here"

/* The level of the paired tests' verdicts. */
#define CAML_REPRO_ALPHA 0.05

/* One condition of a verdict rule: value OP threshold, OP one of "<",
 * "<=", ">", ">=". A value that is not finite (not measured) makes the
 * row not testable. */
typedef struct {
  char  *what;        /* "mean test MSE of CA-NN, 1 layer" */
  double value;
  const char *op;
  double threshold;
} CamlReproCondition;

/* One row of the report's table: a claim of the paper and our figures. */
typedef struct {
  char  *claim;       /* the paper's figure and claim */
  char  *ours;        /* "0.0061 ± 0.0012 (10 seeds)" — mean and sd as printed */
  double mean, spread;
  int    n;           /* values behind mean and spread */
  char  *rule;        /* the rule in words */
  CamlReproCondition conds[3];
  int    n_conds;
  char  *why;         /* a reason the row cannot be judged (set: not testable), or NULL */
} CamlReproRow;

/* sample mean and standard deviation of the finite values of v (n); *count
 * gets how many there were (sd is NAN for fewer than two). */
void   caml_repro_mean_sd (const double *v, int n, double *mean, double *sd, int *count);
/* The two-sided p-value of a paired t-test on the differences d (n), the
 * pairs where either value is not finite left out (*pairs gets how many
 * were used; NAN for fewer than two). All differences equal: 0 when they
 * are not 0, else 1. */
double caml_repro_paired_p (const double *d, int n, int *pairs);
/* Student's t distribution: P(|T| > t) with df degrees of freedom. */
double caml_repro_t_two_sided (double t, double df);

/* The verdict of a row, computed from its conditions. */
const char *caml_repro_verdict (const CamlReproRow *row);
/* "<=" → "≤" for the report. */
const char *caml_repro_op_text (const char *op);

void caml_repro_row_clear (CamlReproRow *row);

/* The report from the results.json of each experiment named (in order),
 * in out_dir: report.md and report.html, atomically. header: the command
 * and mode, as Markdown. */
gboolean caml_repro_write_report (const char *out_dir, const char *const *names, int n,
                                  const char *header, GError **error);

/* A figure: the figures' numbers as a dot per seed and the mean per
 * model, categories labels (n_arms); values (n_arms, n_seeds). */
gboolean caml_repro_plot_values (const char *path, const char *title, const char *y_label,
                                 const char *const *labels, int n_arms, const double *values,
                                 int n_seeds, GError **error);

G_END_DECLS
