/* trainer-private.h — private to the engine: the trainer's fields, shared
 * by the loop (trainer.c), its public API (trainer-control.c), evaluation
 * (trainer-eval.c), divergence (trainer-diverge.c) and the state file that
 * resumes a run (trainer-state.c). */
#pragma once

#include "average.h"
#include "caml-private.h"

G_BEGIN_DECLS

struct _CamlTrainer {
  /* borrowed */
  const CamlExperiment *exp;
  CamlModel            *model;
  const CamlDataset    *train;
  const CamlDataset    *test;

  int           threads;      /* the thread count of the run (caml_get_threads at its start) */

  /* data-parallel replica (caml_trainer_set_replica); ranks 1: alone */
  int               rank, ranks;
  int               shard_lo, shard_n;   /* this replica's samples of a batch */
  CamlReplicaReduce reduce;
  gpointer          reduce_data;
  gboolean          stop_agreed;         /* every replica stops after this step */

  /* copied from exp at creation */
  long          total_steps;
  int           batch;        /* samples per step, 1..train->n */
  int           eval_every;   /* 0: only after the last step */
  CamlLossKind  loss;

  /* owned, used by the trainer thread only while it runs; opt, bx, by,
   * dpred and ebuf are allocated by the first start (trainer_alloc) */
  CamlOptimizer *opt;
  GRand         *rng;
  int           *order;       /* (train->n) this epoch's sample order */
  int            order_pos;   /* next unused position in order */
  float         *bx;          /* (batch, x_shape) */
  float         *by;          /* (batch, y_width) */
  float         *dpred;       /* (batch, out) */
  float         *ebuf;        /* (chunk, x_shape) evaluation rows of a text set, or NULL */
  long           undo_step;   /* the step caml_optimizer_undo undoes; -1: none */
  gint64         undo_tokens; /* tokens trained on before it */
  gint64         rollback_tokens; /* tokens trained on at the step rolled back to */
  size_t         out_size;    /* D of the model output */
  CamlAverage   *average;     /* training.average_decay > 0: from the first step */
  CamlDivergence divergence;  /* of the step that failed (trainer thread) */
  float          first_loss;  /* of the first step trained; < 0 before it */
  /* the latest update until something checks its weights (trainer thread) */
  const float   *unchecked_x;    /* (batch, x_shape) its batch; NULL: checked */
  const float   *unchecked_y;    /* (batch, y_width) */
  float          unchecked_loss; /* the batch's loss before the update */
  gboolean       closure_failed; /* a progress function's closure found it diverged */

  GThread *thread;            /* to join; cleared by the joiner */
  GThread *loop_thread;       /* the same, never cleared: who runs the loop */
  GMutex   lock;
  GCond    cond;

  /* protected by lock */
  CamlTrainerState state;
  gboolean  done;             /* the thread no longer touches the model */
  gboolean  stop_requested;
  int       step_budget;      /* single steps asked for while paused */
  gboolean  lr_pending;
  double    lr;
  gboolean  em_pending;
  int       em_steps;
  long      step;             /* steps done */
  double    last_loss;
  GArray   *losses;           /* float, one per step */
  GArray   *rows;             /* CamlEvalRow */
  GError   *error;
  gboolean  diverged;         /* error is CAML_ERROR_DIVERGED; failure says where */
  CamlDivergence failure;
  double    seconds_base;     /* active time before active_since */
  gint64    active_since;     /* monotonic µs, 0 while waiting */
  double    eval_seconds;     /* of the active time, spent evaluating */
  double    rate_seconds;     /* window start for steps_per_second (training
                               * time: evaluations excluded) */
  long      rate_step;
  double    steps_per_second;
  gint64    tokens;           /* valid tokens of the text batches trained on */
  gint64    rate_tokens;      /* tokens at the window start */
  double    tokens_per_second;
  CamlProgressFunc progress_func;
  gpointer  progress_data;
  int       progress_every;
  /* one pending caml_trainer_with_model closure */
  void    (*model_func) (CamlModel *model, gpointer user_data);
  gpointer  model_data;
  guint64   model_posted;     /* serial numbers of posted and served closures */
  guint64   model_served;
};

/* Draws the batch order and dropout's masks again from the seed, as far as
 * `steps` training steps take them (shuffling at each new epoch), without
 * gathering a batch: where a run loaded or rolled back to that step goes
 * on. Only while no thread runs the loop, or on the loop's own thread. */
void     caml_trainer_redraw (CamlTrainer *trainer, long steps);
/* The active seconds so far. With the lock held. */
double   caml_trainer_seconds_locked (CamlTrainer *trainer);
/* Checks the latest update, if no step has yet, before the weights leave
 * the loop; FALSE when it diverged, the failure recorded (the weights, the
 * optimizer and the history rolled back). With the lock held, on the loop's
 * thread; it releases the lock for the check. */
gboolean caml_trainer_settle_locked (CamlTrainer *trainer);

/* After a divergence, once the run has ended: puts the trainer further back
 * than its own rollback went, in the state of copy (of this run, at or
 * before the step it stands at), or with copy NULL at step 0 with the
 * weights `initial` and the optimizer's state of a new run — as a run
 * stopped at that step would stand. The losses and rows go back with it;
 * its divergence and error name the step rolled back to (`why` in
 * parentheses after it, when not NULL); the seconds spent stay counted.
 * FALSE with an error and the trainer unchanged when it has not so failed
 * or the state is not one of its run's. */
gboolean caml_trainer_roll_back_further (CamlTrainer *trainer, const CamlTrainerStateCopy *copy,
                                         const float *initial, const char *why,
                                         GError **error);

/* --- between the trainer's files */

/* The loop, on the trainer's thread (trainer.c). */
gpointer caml_trainer_thread (gpointer data);
/* The batch order as at the start of the run (trainer.c). */
void     caml_trainer_reset_order (CamlTrainer *trainer);
/* Copies the progress snapshot into p. With the lock held (trainer.c). */
void     caml_trainer_snapshot_locked (CamlTrainer *trainer, CamlProgress *p);

/* Samples of a set evaluated at once (trainer-eval.c). */
int      caml_trainer_eval_chunk (const CamlModel *model, const CamlShape *x_shape);
/* The mean loss and metric of set, with buf as caml_trainer_eval_chunk rows
 * of inputs (NULL for a dense set) (trainer-eval.c). */
void     caml_trainer_evaluate_with (CamlModel *model, CamlLossKind loss,
                                     const CamlDataset *set, float *buf,
                                     double *mean_loss, double *metric);
/* Appends an evaluation row for the current step. With the lock held; it
 * releases it while the model runs (trainer-eval.c). */
void     caml_trainer_evaluate_locked (CamlTrainer *trainer);

/* The divergence checks and the rollback (trainer-diverge.c). */
gboolean caml_trainer_find_bad_param (const CamlModel *model, const float *block,
                                      int *layer, const char **param);
char    *caml_trainer_diagnose_loss (CamlTrainer *trainer, const float *x, const float *y,
                                     float loss);
gboolean caml_trainer_block_finite (CamlTrainer *trainer, const float *v);
gboolean caml_trainer_loss_blew_up (const CamlTrainer *trainer, float loss);
void     caml_trainer_roll_back (CamlTrainer *trainer, long step, gboolean before_update,
                                 char *why, GError **error);

G_END_DECLS
