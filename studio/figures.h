/* figures.h — every figure of a run, built by one function from the run's
 * data: `caml train`'s and `caml eval`'s PNGs, the workbench's live cards
 * and its exports all come from here, so a figure written by either tool
 * of the same run is the same file. Plain C (no display): a figure is a
 * CamlPlotFigure (caml-plot.h), prepared here and only drawn after. */
#pragma once

#include "caml.h"
#include "caml-plot.h"
#include "report.h"
#include "layer-stats.h"

/* Samples a side of the surface, χ and parts maps. */
#define CAML_FIGURE_GRID 121
/* Test images (each beside its σ-map) of a σ-map grid. */
#define CAML_FIGURE_SIGMA_IMAGES 64
/* A file's plot: a heatmap is this wide, a line plot twice this. */
#define CAML_FIGURE_CELL_WIDTH  600
#define CAML_FIGURE_CELL_HEIGHT 500
/* No figure is written narrower: one heatmap alone is drawn twice as big,
 * a σ-map grid of small images wider. */
#define CAML_FIGURE_MIN_WIDTH   1200

/* ------------------------------------------------------------------ loss */

/* One run's curves. */
typedef struct {
  const float       *losses;          /* (n_steps): losses[i] is step i + 1's */
  long               n_steps;
  const CamlEvalRow *rows;            /* (n_rows) */
  int                n_rows;
  gboolean           classification;  /* the rows' test_metric is an accuracy */
} CamlFigureCurves;

typedef enum {
  CAML_FIGURE_FILE,  /* every step, the raw loss faint under its trend */
  CAML_FIGURE_LIVE,  /* a live card: the trend alone (the raw loss without
                      * smoothing), at most 1000 points a curve, so that a long
                      * run costs what a short one does to prepare and draw */
} CamlFigureDetail;

/* A kept run ticked in the Runs list (CamlRunRecord), drawn dashed in a
 * colour of its own and named in the legend. */
typedef struct {
  const char        *name;            /* "Run 2" */
  const double      *steps;           /* (n_points) the last step of each point */
  const double      *losses;          /* (n_points) the mean train loss of its steps */
  long               n_points;
  long               stride;          /* steps a point averages */
  const CamlEvalRow *rows;            /* (n_rows) */
  int                n_rows;
  gboolean           classification;  /* the rows' test_metric is an accuracy */
} CamlFigureOverlay;

typedef struct {
  CamlFigureCurves        run;
  const CamlFigureOverlay *overlays;    /* (n_overlays) kept runs ticked; or NULL */
  size_t                  n_overlays;
  const CamlFigureCurves *previous;     /* an earlier run, dashed grey and olive; or NULL */
  const CamlFigureCurves *baseline;     /* the matched baseline, dashed; or NULL */
  const CamlPlotEvent    *events;       /* markers by step (n_events): the live changes */
  size_t                  n_events;
  const CamlDivergence   *divergence;   /* marked at its failed step; or NULL */
  const char             *title;
  const char             *evaluated_on; /* "test" or "validation" (caml_report_evaluated_on) */
  double                  smoothing;    /* the trend's EMA factor; < 0: over ~1 % of the run */
  gboolean                linear;       /* a linear loss axis, not a log one */
  CamlFigureDetail        detail;
} CamlFigureLoss;

/* loss.png: the train loss by step (its trend smoothed in log space on the
 * log axis) with the evaluated loss and, for a classification (of the run
 * or the previous run), the accuracy beside it as the figure's second
 * plot; both span the same steps (caml_figure_loss_span) on whole-number
 * ticks. A divergence is marked at the failed step ("diverged at step N;
 * rolled back to step M"); the losses may run past the step rolled back
 * to. With no step and no evaluation the plot says "no step trained". */
CamlPlotFigure *caml_figure_loss (const CamlFigureLoss *loss);
/* The steps the loss figure spans (and the plots lined up with it): from 0,
 * the untrained model (where the σ-maps' AUC starts), to the last step. */
void   caml_figure_loss_span (const CamlFigureLoss *loss, double *first, double *last);
/* The EMA factor of a trend: smoothing, or for smoothing < 0 the one over
 * ~1 % of a run of n_steps (0, none, up to 50 steps). */
double caml_figure_loss_factor (double smoothing, long n_steps);
/* The trend of losses (n) as the figure draws it, into out (n). */
void   caml_figure_loss_trend (const float *losses, long n, double factor, gboolean linear,
                               double *out);

/* ---------------------------------------------------- surfaces of a plane */

/* A model of two inputs and one output over exp's plot domain. */
typedef struct {
  const CamlExperiment *exp;     /* the domain, loss, data kind and name */
  const CamlDataset    *train;   /* the training points drawn */
  int                   grid;    /* samples a side (CAML_FIGURE_GRID) */
} CamlFigurePlane;

/* surface.png: the ground truth (surface data), then the fitted surface —
 * the predictions (sigmoid(output) under sigmoid cross-entropy) with the
 * training points coloured by their targets — on one colour scale: the
 * truth's (else the targets') widened to the fit where it goes beyond.
 * fit: the model's outputs (grid, grid), row 0 at the domain's bottom. */
CamlPlotFigure *caml_figure_surface (const CamlFigurePlane *plane, const float *fit);

/* chi.png: χ of n gated layers side by side — layers[k] (its type's title
 * titles[k]), chi (n, grid, grid) — on 0 … 1, the points unvalued. */
CamlPlotFigure *caml_figure_chi (const CamlFigurePlane *plane, int n, const int *layers,
                                 const char *const *titles, const float *chi);

/* parts.png: a CA-NN layer's χ, its context-free part χ·f₁ (of v(c)) and
 * its context-sensitive part (1 − χ)·f₀ (of the default value w₀;
 * caml_report_parts_shares), and the fit they add up to (the logit under
 * sigmoid cross-entropy); the context-free part and the fit on one colour
 * scale. fit, chi, sensitive_part, free_part: (grid, grid), the outputs
 * with the gate as it is, held at 0 and at 1. */
CamlPlotFigure *caml_figure_parts (const CamlFigurePlane *plane, int layer, const float *fit,
                                   const float *chi, const float *sensitive_part,
                                   const float *free_part);

/* ---------------------------------------------------------------- σ-maps */

/* sigma-stepN.png (sigma.png for saved weights): the snapshot's first
 * CAML_FIGURE_SIGMA_IMAGES images, each beside its σ-map (grey, as
 * caml_sigma_tiles), 8 pairs a row, titled as caml_report_sigma_grid_title
 * says; as wide as three pixels a value, and as tall as that needs. */
CamlPlotFigure *caml_figure_sigma_grid (const CamlSigmaSnapshot *snap, gboolean stretch,
                                        const char *name, const CamlSigmaSource *source);

/* The foreground/background AUC of the σ-maps by step (n), over the steps
 * [first, last] of the loss figure beside it; the step of the σ-maps shown
 * marked by a vertical line (marked ≥ 0; -1: none). */
/* The χ histogram of a gated layer (layer-stats.h) as a step line: x the
 * bins' edges on [0, 1], y the share of χ values in each bin. Its points:
 * caml_figure_chi_histogram_points fills x and y (2 · CAML_CHI_BINS + 2
 * each) and returns how many; shares are NaN without any value. */
int             caml_figure_chi_histogram_points (const CamlLayerStat *stat, double *x,
                                                  double *y);
CamlPlotFigure *caml_figure_chi_histogram (const CamlLayerStat *stat, long step);
CamlPlotFigure *caml_figure_sigma_auc (const double *steps, const double *auc, int n,
                                       double first, double last, long marked);

/* ----------------------------------------------------------------- words */

typedef struct {
  const CamlVocab *vocab;
  const float     *chi;          /* (vocabulary size): χ̃, or a per-position gate's means */
  gboolean         per_position; /* chi are the means of a per-position gate … */
  const char      *texts_read;   /* … over these texts ("the first 2000 test texts") */
  const char      *layer;        /* "layer 1 (CA-BSFE)" */
  const char      *title;        /* the run's, or NULL */
  int              min_count;    /* words seen this often in training */
  int              n_top;        /* bars in each list */
} CamlFigureWords;

/* words.png: the n_top most context-free and most context-sensitive words
 * (caml_report_word_bars) as bars on [0, 1]; with no word to rank, a
 * note instead. *shown (may be NULL): the first list's length. */
CamlPlotFigure *caml_figure_words (const CamlFigureWords *words, int *shown);
