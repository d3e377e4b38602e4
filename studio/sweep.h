/* sweep.h — a sweep: one experiment trained at every point of a grid of one
 * or two settings, each point's model with its matched baseline. Its plan
 * (read from and written to a sweep file, checked whole before anything
 * trains), the experiment and folder of each of its runs, the figures read
 * back from a run's summary.json, and its tables and figures: sweep.csv,
 * sweep.md, sweep.png (Fig. 17: the metric against the first key, one line
 * per value of the second, baselines dashed) and sweep-parallel.png (every
 * run as a line across its settings and results).
 *
 * `caml sweep` and the workbench's Sweep page run the same plan and write
 * the same folder: DIR/sweep.json (the plan as run), DIR/LABEL/ca and
 * DIR/LABEL/baseline (each a run's results folder, as `caml train`'s), and
 * the tables. Plain GLib on the engine and the plots: no GTK, nothing
 * printed; errors are values. */
#pragma once

#include "caml.h"
#include "caml-plot.h"

G_BEGIN_DECLS

/* What a sweep may vary, a key:
 *   KEY      a layer option, on every layer that has it ("kernel");
 *   N.KEY    a layer option of layer N only, counting the experiment's
 *            "model" list from 0 ("0.units");
 *   PATH     one of the experiment's settings by its path in the file:
 *            "optimizer.lr", "optimizer.em_steps", "optimizer.weight_decay",
 *            "training.steps", "training.batch_size", "seed".
 * Values are given as text ("3", "0.01", "bahdanau") and read as the key's
 * type, with its range. */
typedef struct {
  char  *key;
  char **values;      /* NULL-terminated */
  int    n_values;
} CamlSweepAxis;

#define CAML_SWEEP_MAX_AXES 2

typedef struct {
  CamlExperiment *exp;        /* the experiment as given: the base of every run */
  char           *preset;     /* the preset it is, or NULL */
  char           *source;     /* the file it came from (for error messages), or NULL */
  char          **fixed;      /* "KEY=VALUE" set on every run (-O), or NULL */
  CamlSweepAxis   axes[CAML_SWEEP_MAX_AXES];
  int             n_axes;     /* 1 or 2 once checked */
  gboolean        baselines;  /* train each point's matched baseline too (ignored,
                               * FALSE in effect, when exp has no context-aware layer) */
} CamlSweepPlan;

/* Takes exp. baselines on, no axes. */
CamlSweepPlan *caml_sweep_plan_new (CamlExperiment *exp, const char *preset, const char *source);
void           caml_sweep_plan_free (CamlSweepPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CamlSweepPlan, caml_sweep_plan_free)

/* Adds an axis: key and its values (n of them, n ≥ 1). FALSE with an
 * error when there are two already. Nothing is checked here. */
gboolean caml_sweep_plan_add_axis (CamlSweepPlan *plan, const char *key,
                                   const char *const *values, int n, GError **error);
/* The same from "KEY=V1,V2,…" (`caml sweep --grid`). */
gboolean caml_sweep_plan_parse_axis (CamlSweepPlan *plan, const char *text, GError **error);

/* The whole plan, before anything trains: one or two axes; every key known
 * to the experiment; no value given twice; two axes that reach the same
 * option of the same layer; the fixed list and every value applied to the
 * experiment (as the runs will), and no two values of an axis that are one
 * setting written two ways (1 and 01, 0.1 and 1e-1). The error names the
 * key and the value. */
gboolean caml_sweep_plan_check (const CamlSweepPlan *plan, GError **error);

/* The experiment has a context-aware layer (else there is no baseline to
 * train: its runs are "plain"). */
gboolean caml_sweep_plan_has_context_aware (const CamlSweepPlan *plan);
/* Points of the grid, and runs: a point's model, then its baseline when
 * the plan trains baselines. The first axis varies fastest. */
int      caml_sweep_plan_n_points (const CamlSweepPlan *plan);
int      caml_sweep_plan_n_runs (const CamlSweepPlan *plan);
/* Run i's point (index[a]: a value index of axis a; index[1] is 0 with
 * one axis) and whether it is the baseline. */
void     caml_sweep_plan_run_of (const CamlSweepPlan *plan, int run, int index[2],
                                 gboolean *baseline);
/* "kernel=3-depth=8" (new): the point's folder name. */
char    *caml_sweep_plan_label (const CamlSweepPlan *plan, const int index[2]);
/* out_dir/LABEL/ca or out_dir/LABEL/baseline (new). */
char    *caml_sweep_plan_run_dir (const CamlSweepPlan *plan, const char *out_dir, int run);
/* Run i's experiment (new): a copy of the plan's with the fixed list and
 * its point applied, made the matched baseline when it is one; named
 * "NAME kernel=3 depth=8" (", baseline"). NULL with an error only for a
 * plan that was not checked. */
CamlExperiment *caml_sweep_plan_experiment (const CamlSweepPlan *plan, int run, GError **error);
/* For an axis whose key names no layer but reaches several ("units" sets
 * the readout's too): a hint for its runs that fail, in the words of the
 * command line ("--grid units sets units on layers 0 (ca_nn) and 1 (dense)
 * alike; to vary one layer's, give its index: --grid 0.units=2,3"); else
 * NULL. g_free it. */
char    *caml_sweep_plan_hint (const CamlSweepPlan *plan, int axis);

/* ------------------------------------------------------------ the sweep file */

/* A sweep file (docs/sweeps.md):
 *   { "experiment": "FILE.json" | { …an experiment… },   or  "preset": "NAME",
 *     "grid": [ { "key": "kernel", "values": [3, 5, 8] },
 *               { "key": "depth", "values": [8, 16, 32] } ],
 *     "set": { "KEY": VALUE, … },          (optional: the fixed list)
 *     "baselines": true }                  (optional, default true)
 * A relative experiment path is read from the sweep file's folder. With
 * both "experiment" and "preset", the experiment is the one given and
 * "preset" says which built-in one it came from (summary.json's preset).
 * Values are numbers, strings or booleans, taken as the command line's
 * text (numbers in their shortest form that reads back: 0.01). Unknown
 * members are errors. Errors say FILE:LINE:COL: PATH: problem
 * (caml-json.h), an inline experiment's included; an error in the
 * experiment file it names is that file's. The plan is checked (as
 * caml_sweep_plan_check does, each error at its place in the file) before
 * it is returned. */
CamlSweepPlan *caml_sweep_plan_load (const char *path, GError **error);
/* Whether path holds a sweep file rather than an experiment: a JSON object
 * with a "grid" (anything unreadable is not). */
gboolean       caml_sweep_file_is (const char *path);
/* The plan as a sweep file, the experiment inline (new). */
char          *caml_sweep_plan_to_json (const CamlSweepPlan *plan);
/* Written atomically (caml_file_replace). */
gboolean       caml_sweep_plan_save (const CamlSweepPlan *plan, const char *path,
                                     GError **error);

/* ------------------------------------------------------------ keys */

/* The keys a sweep of exp may vary, as a picker offers them: each layer's
 * options as "N.KEY", then, for an option two or more layers have, "KEY",
 * then the settings above that exp's optimizer has; titles[i] in words
 * ("layer 0 (CA-CNN): kernel", "learning rate (optimizer.lr)"); current[i]
 * the experiment's value as text ("5", "0.01"; "" for a KEY whose layers
 * differ). titles and current may be NULL. NULL-terminated, free each with
 * g_strfreev. */
char **caml_sweep_keys (const CamlExperiment *exp, char ***titles, char ***current);

/* ------------------------------------------------------------ results */

typedef struct {
  int      index[2];
  gboolean baseline;
  gboolean plain;          /* no context-aware layer, no baseline */
  gboolean done;           /* trained or tried (a row of the tables) */
  int      status;         /* 0 finished; 130/143 interrupted; else failed */
  gboolean summary;        /* its summary.json was read */
  gboolean classification; /* metric is test accuracy (else test MSE) */
  double   metric, test_loss, sigma_auc, seconds;   /* NaN: none */
  double   steps_per_second;
  char    *error;          /* owned: why it failed, or NULL */
} CamlSweepResult;

/* Run i's result before it is trained: its point, baseline and plain, the
 * figures NaN, status 0, not done, classification as the plan's loss
 * suggests (a summary says for sure). Clear it with caml_sweep_result_clear. */
void     caml_sweep_plan_result_init (const CamlSweepPlan *plan, int run, CamlSweepResult *r);
/* Reads a run's figures from dir/summary.json into r (NaN where absent; the
 * error it recorded, if any, unless r has one) and sets r->summary. FALSE
 * when there is no readable summary (r's figures NaN). */
gboolean caml_sweep_result_read (CamlSweepResult *r, const char *dir);
void     caml_sweep_result_clear (CamlSweepResult *r);
/* "ok", "interrupted", "failed". */
const char *caml_sweep_status_name (int status);
/* A row's model: "context-aware", "baseline" or "plain". */
const char *caml_sweep_result_model (const CamlSweepResult *r);
/* A figure as sweep.md and the console give it: 4 significant digits
 * (0.000124, not 0.0001), "–" for NaN. g_free it. */
char       *caml_sweep_format_figure (double v);

/* The figures of a sweep, as files and as the workbench draws them. Each
 * takes the results done so far (any order; those not done are left out). */
CamlPlotLine     *caml_sweep_plot_new (const CamlSweepPlan *plan,
                                       const CamlSweepResult *results, int n);
/* … row_results (may be NULL) gets which result each of its rows is (new). */
CamlPlotParallel *caml_sweep_parallel_new (const CamlSweepPlan *plan,
                                           const CamlSweepResult *results, int n,
                                           int **row_results);
/* sweep-parallel.png's drawing (1200 × 600) at path. */
gboolean caml_sweep_write_parallel (const CamlSweepPlan *plan, const CamlSweepResult *results,
                                    int n, const char *path, GError **error);
/* sweep.csv, sweep.md, sweep.png, sweep-parallel.png and sweep.json (the
 * plan as run) into dir (the caller's staging directory: results-dir.h). */
gboolean caml_sweep_write_tables (const CamlSweepPlan *plan, const CamlSweepResult *results,
                                  int n, const char *dir, GError **error);
/* Whether a file name in a sweep's folder is one of its tables (a new set
 * replaces them). */
gboolean caml_sweep_is_table_name (const char *name);

G_END_DECLS
