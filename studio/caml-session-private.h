/* caml-session-private.h — the session's fields and the functions its
 * files share: caml-session.c (the object, its news, the document, edits
 * and getters), caml-session-data.c (the data), caml-session-run.c (the
 * run's life), caml-session-jobs.c (the worker jobs and writers) and
 * caml-session-runs.c (the runs kept). */
#pragma once

#include "caml-session.h"
#include "run-results.h"
#include "caml-run-record.h"
#include "caml-sweep.h"

#define UPDATE_INTERVAL_US  100000   /* ≤ 10 copies of a run per second … */
#define UPDATE_BUSY_US      250000   /* … or 4 while training takes every core */
#define PACE_TICK_MS        50       /* the speed's tick: 20 grants a second */
#define AUTOSAVE_DELAY_MS   1000     /* after the first unsaved change */
#define BUILD_QUIET_MS      300      /* a build on built-in data says nothing until then */

/* Work done on a worker thread (GTask). */
typedef enum {
  JOB_DATA,   /* load exp's data sets, then build the run when the model fits */
  JOB_RUN,    /* build the run (model, trainer, untrained snapshot) from loaded data */
  JOB_FILES,  /* load the data chosen — a kind picked, four IDX files in any order, or
               * two labelled text files — on a copy of exp; commit only when they load */
  JOB_WEIGHTS, /* build a run beside the current one and load weights into it */
  JOB_BASELINE, /* build the matched baseline of the current run */
  JOB_PARTS,  /* sample the chosen CA-NN layer's parts, on a copy of the run's model */
} JobKind;

/* What to do once the run being built is there. */
typedef enum {
  PENDING_NONE,
  PENDING_TRAIN,
  PENDING_STEP,
} Pending;

/* The weights of a trained run that a new one replaced, until they are
 * saved, dismissed or replaced in turn: an edit (the steps, the seed…),
 * Train after a finished run or another preset starts a new run, and the
 * weights trained are not lost with the old one. */
typedef struct {
  CamlExperiment *exp;
  CamlRunData    *data;
  float          *w;
  size_t          n_weights;
  long            step;
  guint           serial;
} SetAside;

struct _CamlSession {
  GObject parent_instance;

  /* the document */
  CamlExperiment *exp;
  CamlExperiment *clean_exp;     /* exp as opened or last saved */
  char           *path;
  char           *origin;
  gboolean        dirty;         /* exp is not clean_exp, or was recovered */
  gboolean        recovered;     /* exp came from a crashed session's autosave */
  char           *autosave_id;   /* NULL until the first autosave */
  guint           autosave_source; /* a pending autosave timeout (holds a ref) */

  /* the data */
  CamlRunData    *data;          /* data sets of exp, NULL until loaded */
  char           *data_error;
  gboolean        data_loading;  /* a JOB_DATA for data_serial is under way */
  guint           data_serial;   /* changes whenever exp's data config does */
  gboolean        files_loading; /* a JOB_FILES for files_serial is under way */
  guint           files_serial;  /* changes at each choice of data: the latest one counts */
  CamlDataKind    files_kind;    /* the kind of that choice (what the status says) */
  GStrv           files_chosen;  /* and its files (none: those exp names) */
  int             shown_kind;    /* the data kind whose shapes data_text and data_shape
                                  * say, -1: none (loading, or an error) */
  char           *data_text;     /* the data's description, or why there are none */
  gboolean        data_text_error;
  gboolean        has_data_shape;
  CamlShape       data_shape;    /* the shapes the model is checked against … */
  int             data_want;     /* … the outputs they need */
  char           *data_shape_error;

  /* the run */
  CamlRun        *run;           /* NULL, or built from exp */
  gboolean        run_started;
  gboolean        run_building;  /* a job builds the run for run_serial */
  guint           build_source;  /* says "Building the model…" if a quick build is not quick */
  char           *build_error;   /* the build for run_serial failed: no other until it changes */
  guint           run_serial;    /* changes whenever the run is discarded */
  gboolean        failure_shown; /* the current trainer's failure is in the banner */
  Pending         pending;       /* what to do when the run being built arrives */
  int             parts_preferred; /* the CA-NN layer chosen for the parts */
  char           *pending_weights; /* weights file asked for, not yet in an installed run */
  char           *pending_state;   /* with pending_weights: a trainer.state to go on from */
  guint           weights_serial;  /* changes whenever pending_weights does */
  gboolean        weights_loading; /* a JOB_WEIGHTS for the current request is under way */
  char           *loaded_weights;  /* the file the untrained run was loaded from, or NULL */
  char           *loaded_state;    /* … and the one the untrained run stands on, or NULL */
  char           *opening_run;     /* the run folder being opened (announce_loaded), or NULL */
  gboolean        announce_load;   /* say so when the weights asked for are loaded */
  guint           vectors_told_serial; /* the word-vector coverage last announced: its */
  int             vectors_told;        /* data_serial and words with a vector (0: none) */
  guint           saved_serial;  /* the run (run_serial) whose weights were saved … */
  long            saved_step;    /* … at this step, or -1 */
  SetAside       *set_aside;     /* the trained weights of the run a new one replaced */
  guint           set_aside_serial; /* counts them: a save compares serials, not pointers */
  GCancellable   *cancellable;   /* cancelled when the session closes */

  /* the baseline and the previous run */
  CamlRun        *baseline;      /* NULL, or the matched baseline trained alongside */
  gboolean        baseline_building; /* a JOB_BASELINE for run_serial is under way */
  gboolean        compare;       /* Compare with Baseline is on: each run gets its baseline */
  CamlTrainerState base_state;   /* its state at the last update */
  int             parts_sampling;  /* JOB_PARTS under way */

  /* how fast (caml-session-pace.c) */
  int             speed;         /* steps a tick, 0: full speed */
  long            marked_step;   /* the step looked at (σ-map scrubber), -1: none */
  gboolean        continuous;    /* train until stopped */
  gboolean        playing;       /* the tick steps the paused trainer: shown RUNNING */
  guint           pace_source;   /* the tick, while playing (holds a ref) */
  long            pace_granted;  /* the run may train up to this step … */
  long            base_granted;  /* … and its baseline up to this one */
  guint           pace_ticks;    /* grants made (tests count them) */

  /* the main thread's copies of the run, the baseline and the previous run */
  CamlProgress    progress;      /* last copy */
  CamlEvalRow    *rows;
  int             n_rows;
  float          *losses;
  long            n_steps;
  GArray         *events;        /* CamlSessionEvent */
  guint64         surface_version;
  float          *fit;           /* (grid, grid) */
  float          *chi;           /* (n_chi, grid, grid) */
  float          *sensitive_part; /* (grid, grid) output with the parts layer's χ ≡ 0 */
  float          *free_part;      /* (grid, grid) … with χ ≡ 1 */
  int             parts_layer;   /* the layer they belong to, or -1 */
  gboolean        has_parts;     /* the run has a CA-NN layer to show the parts of */
  guint64         words_version;
  float          *word_chi;      /* (vocabulary) χ̃ per word, NULL until a sample */
  float          *word_probs;    /* (word samples) P(class 1), NaN: none */
  float          *token_chi;     /* (word samples, CAML_RUN_WORDS_SHOWN) per-position χ, or NULL */
  guint64         sigma_version;
  guint64         layers_version;
  CamlLayerStats *layer_stats;   /* the layer table with χ statistics, NULL before one */
  int             n_sigma;
  float          *base_losses;
  long            base_n_steps;
  CamlEvalRow    *base_rows;
  int             base_n_rows;
  float          *prev_losses;   /* the last run discarded after it trained: its curves */
  long            prev_n_steps;  /* stay in the plots, dashed, until the data change */
  CamlEvalRow    *prev_rows;
  int             prev_n_rows;
  gboolean        prev_classification;
  CamlExperiment *prev_exp;      /* what it trained (its data decide whether it compares) */
  gint64          last_update_us;
  gint            update_pending; /* atomic: one idle/timeout is queued */

  /* the runs kept (caml-session-runs.c) */
  GListStore     *runs;          /* CamlRunRecord, oldest first, until deleted */
  int             runs_counted;  /* the last run's number ("Run 3") */
  int             run_number;    /* the current run's, 0: not recorded yet */
  CamlRunRecord  *run_record;    /* borrowed from runs: the current run's, or NULL */
  CamlRunRecord  *base_record;   /* … and its baseline's */
  gboolean        run_deleted;   /* the user deleted the current run's record: */
  gboolean        base_deleted;  /* … or its baseline's: not kept again */

  /* the sweep (caml-session-sweep.c) */
  CamlSweep      *sweep;         /* the last one started, NULL before */
};

/* caml-session.c */
void session_changed (CamlSession *self);
void session_banner (CamlSession *self, CamlSessionBanner kind, const char *message);
void session_error (CamlSession *self, const char *message);
void session_data_changed (CamlSession *self);
void session_data_choice (CamlSession *self);
void session_notify_compare (CamlSession *self);
void session_notify_sweep (CamlSession *self);
void session_notify_pace (CamlSession *self, gboolean continuous);
void session_experiment_changed (CamlSession *self);
void session_clear_error (CamlSession *self);
void session_notice (CamlSession *self, const char *message, gboolean warning);
void session_done (CamlSession *self, const char *what, const char *path);
void session_waiting (CamlSession *self, CamlSessionWait wait, const char *why);
void session_progress (CamlSession *self, CamlSessionChange what);
void session_on_run_notify (gpointer user_data);
void mark_dirty (CamlSession *self);
gboolean run_active (CamlSession *self);
gboolean kind_from_files (CamlDataKind kind);
gboolean data_follow_seed (const CamlExperiment *exp);
void install_data (CamlSession *self, CamlRunData *data);
void set_data_error (CamlSession *self, const char *message);
void show_data_loading (CamlSession *self);
void adapt_to_data (CamlSession *self);
void forget_previous (CamlSession *self);
void invalidate_data (CamlSession *self);
void sync_data_choice (CamlSession *self);
void refuse_choice (CamlSession *self, CamlDataKind kind, const char *why);
void set_pending_load (CamlSession *self, const char *path, const char *state);
void set_aside_free (SetAside *s);
void discard_run (CamlSession *self);
void update_from_run (CamlSession *self);
void install_run (CamlSession *self, CamlRun *run);
void announce_loaded (CamlSession *self, const char *weights, const char *state,
                      const char *state_error);
void prepare_run (CamlSession *self);
void start_build_quiet (CamlSession *self);
void start_baseline_if_wanted (CamlSession *self);

void show_set_aside (CamlSession *self);

/* caml-session-data.c */
void request_data (CamlSession *self);
void forget_previous_if_other_data (CamlSession *self);
void drop_choice (CamlSession *self);
const char *data_title (CamlSession *self);
char *data_loading_text (CamlSession *self, gboolean lower);
char *choice_loading_text (CamlSession *self);

/* caml-session-run.c */
void experiment_changed (CamlSession *self);
gboolean extend_run (CamlSession *self, int steps, gboolean pressed);
void record_event (CamlSession *self, char *text);
char *word_vector_coverage (CamlSession *self);
gboolean start_run (CamlSession *self, gboolean paused, Pending then);

/* caml-session-pace.c */
void pace_stop (CamlSession *self);
void pace_run_started (CamlSession *self);
void pace_resume (CamlSession *self);
void pace_keep_ahead (CamlSession *self);
CamlTrainerState pace_shown_state (CamlSession *self, CamlTrainerState state);

/* caml-session-jobs.c */
typedef struct _Job Job;
void start_job (CamlSession *self, JobKind kind);
void choose_data (CamlSession *self, CamlDataKind kind, const char *const *files, int n_files);
void sample_parts (CamlSession *self);
void install_baseline (CamlSession *self, Job *job);
void start_write (CamlSession *self, int kind, const char *path, SetAside *set_aside);
enum { WRITE_WEIGHTS, WRITE_WORDS, WRITE_RUN };
void session_jobs_begin (void);
void session_jobs_end (void);

/* caml-session-runs.c */
void runs_init (CamlSession *self);
void runs_clear (CamlSession *self);
/* The run (or its baseline) ended, or goes while it has trained: its
 * record is made or brought up to date. */
void runs_record_run (CamlSession *self);
void runs_record_baseline (CamlSession *self);
/* The run (or only its baseline) goes: the next gets records of its own. */
void runs_forget_current (CamlSession *self, gboolean baseline_only);
void runs_keep_sweep_run (CamlSession *self, CamlSweep *sweep, CamlSweepRun *run);

/* caml-session-sweep.c */
void sweep_close (CamlSession *self);
