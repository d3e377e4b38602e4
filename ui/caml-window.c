/* caml-window.c — the workbench window.
 *
 * The window owns the experiment being edited (exp) and at most one run
 * (CamlRun: model, trainer, surface snapshot). Training happens on the
 * trainer's thread; its progress function (caml-run.c) samples surfaces
 * there and then calls on_run_notify, still on that thread, which only
 * schedules one idle callback (an atomic flag keeps it to one, and the idle
 * holds a reference on the window). The idle copies the snapshot — progress,
 * evaluation rows, per-step losses, surface and χ grids — builds the plot
 * objects (all arithmetic) and queues redraws; the plot views' draw
 * functions only draw. The idle runs at most every UPDATE_INTERVAL_US: a
 * sooner one re-arms itself as a timeout, still the one pending source.
 *
 * For image models the run keeps σ-map snapshots instead of surfaces; the
 * idle builds the tile grid of the one the scrubber selects (the latest
 * while it sits at the right end) and the AUC curve. "Compare with baseline"
 * adds a second run (the matched baseline) trained alongside, whose loss
 * curves are overlaid dashed on the loss plot.
 */
#include "caml-window.h"
#include "caml-application.h"
#include "caml-autosave.h"
#include "caml-model-editor.h"
#include "caml-run.h"
#include "caml-data-source.h"
#include "figures.h"
#include "report.h"
#include "words-page.h"

#include <math.h>

#define UPDATE_INTERVAL_US  100000   /* ≤ 10 plot updates per second */
#define WORDS_MIN_COUNT     20       /* words page: words seen this often in training */
#define WORDS_PAGE_SAMPLES  20       /* exported words page: test texts shown, as caml train */
#define WORDS_PAGE_TOP      50       /* … and words in each list */
#define WORDS_TOP           25       /* … this many most and least context-free */
#define AUTOSAVE_DELAY_MS   1000     /* after the first unsaved change */
#define NOTICE_MS           6000     /* a notice stays in the status label */
#define BUILD_QUIET_MS      300      /* a build on built-in data shows nothing until then */

typedef struct {
  long  step;
  char *text;
} Event;

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

struct _CamlWindow {
  GtkApplicationWindow parent_instance;

  /* template widgets */
  GtkLabel        *title_label;
  GtkLabel        *subtitle_label;
  GtkMenuButton   *presets_button;
  GtkButton       *train_button;
  GtkLabel        *train_label;
  GMenu           *recent_submenu;
  GMenu           *threads_submenu;
  GtkRevealer     *banner_revealer;
  GtkImage        *banner_icon;
  GtkLabel        *banner_label;
  GtkButton       *banner_button;
  GtkButton       *banner_discard_button;
  CamlModelEditor *model_editor;
  GtkDropDown     *data_drop;
  GtkLabel        *data_label;
  GtkDropDown     *loss_drop;
  GtkDropDown     *optimizer_drop;
  GtkSpinButton   *lr_spin;
  GtkSpinButton   *em_spin;
  GtkSpinButton   *weight_decay_spin;
  GtkSpinButton   *batch_spin;
  GtkSpinButton   *steps_spin;
  GtkSpinButton   *eval_spin;
  GtkSpinButton   *average_spin;
  GtkSpinButton   *seed_spin;
  GtkScale        *smoothing_scale;
  CamlPlotView    *loss_view;
  CamlPlotView    *surface_view;
  CamlPlotView    *chi_view;
  CamlPlotView    *parts_view;
  CamlPlotView    *words_view;
  GtkTextView     *words_text;
  CamlPlotView    *accuracy_view;
  GtkBox          *sigma_box;
  GtkBox          *sigma_side;
  CamlPlotView    *sigma_view;
  GtkScale        *sigma_scale;
  CamlPlotView    *sigma_auc_view;
  GtkGrid         *bottom_grid;
  GtkStack        *plots_stack;
  GtkBox          *plots_switcher;
  GtkToggleButton *main_toggle;
  GtkToggleButton *parts_toggle;
  GtkToggleButton *words_toggle;
  const char      *chosen_page;   /* interned: the plots page the user last chose */
  GtkProgressBar  *progress_bar;
  GtkLabel        *status_label;
  GtkSpinner      *load_spinner;

  /* owned */
  CamlExperiment *exp;
  char           *path;
  char           *origin;
  gboolean        dirty;         /* exp is not clean_exp, or was recovered */
  CamlExperiment *clean_exp;     /* exp as opened or last saved */
  CamlRunData    *data;          /* data sets of exp, NULL until loaded */
  char           *data_error;
  gboolean        data_loading;  /* a JOB_DATA for data_serial is under way */
  guint           data_serial;   /* changes whenever exp's data config does */
  GtkPaned       *main_paned;    /* the side bar | the plots */
  int             sidebar_width; /* the side bar's width fit_sidebar set last */
  gboolean        files_loading; /* a JOB_FILES for files_serial is under way */
  guint           files_serial;  /* changes at each choice of data: the latest one counts */
  CamlDataKind    files_kind;    /* the kind of that choice (what the status says) */
  GStrv           files_chosen;  /* and its files (none: those exp names) */
  gboolean        run_building;  /* a job builds the run for run_serial */
  guint           build_source;  /* shows "Building the model…" if a quick build is not quick */
  char           *build_error;   /* the build for run_serial failed: no other until it changes */
  int             shown_kind;    /* the data kind whose shapes the data label and the model
                                  * editor show, -1: none (loading, or an error) */
  char           *status;        /* the status line's text when no notice covers it */
  char           *last_notice;   /* the latest notice, kept after it goes (tests) */
  guint           run_serial;    /* changes whenever the run is discarded */
  guint           saved_serial;  /* the run (run_serial) whose weights were saved … */
  long            saved_step;    /* … at this step, or -1 */
  struct SetAside *set_aside;    /* the trained weights of the run a new one replaced */
  guint           set_aside_serial; /* counts them: a save compares serials, not pointers */
  gboolean        set_aside_shown; /* the banner is about them */
  Pending         pending;       /* what to do when the run being built arrives */
  char           *pending_weights; /* weights file asked for, not yet in an installed run */
  guint           weights_serial;  /* changes whenever pending_weights does */
  gboolean        weights_loading; /* a JOB_WEIGHTS for the current request is under way */
  gboolean        baseline_building; /* a JOB_BASELINE for run_serial is under way */
  gboolean        compare;       /* Compare with Baseline is on: each run gets its baseline */
  int             parts_sampling;  /* JOB_PARTS under way */
  char           *loaded_weights;  /* the file the untrained run was loaded from, or NULL */
  char           *pending_state;   /* with pending_weights: a trainer.state to go on from */
  char           *loaded_state;    /* … and the one the untrained run stands on, or NULL */
  char           *opening_run;     /* the run folder being opened (announce_loaded), or NULL */
  gboolean        announce_load;   /* say so when the weights asked for are loaded */
  guint           vectors_told_serial; /* the word-vector coverage last announced: its */
  int             vectors_told;        /* data_serial and words with a vector (0: none) */
  GCancellable   *cancellable;   /* cancelled when the window goes away */
  CamlRun        *run;           /* NULL, or built from exp */
  gboolean        run_started;
  gboolean        failure_shown; /* the current trainer's failure is in the banner */
  CamlProgress    progress;      /* last copy */
  CamlEvalRow    *rows;
  int             n_rows;
  float          *losses;
  long            n_steps;
  double         *smooth;        /* (n_steps) the smoothed losses */
  GArray         *events;        /* Event */
  guint64         surface_version;
  float          *fit;           /* (grid, grid) */
  float          *chi;           /* (n_chi, grid, grid) */
  float          *default_part;     /* (grid, grid) output with the parts layer's χ ≡ 0 */
  float          *value_part;/* (grid, grid) … with χ ≡ 1 */
  int             parts_layer;   /* the layer they belong to, or -1 */
  gboolean        has_parts;     /* the parts page is offered */
  guint64         words_version;
  float          *word_chi;      /* (vocabulary) χ̃ per word, NULL until a sample */
  float          *word_probs;    /* (word samples) P(class 1), NaN: none */
  float          *token_chi;     /* (word samples, CAML_RUN_WORDS_SHOWN) per-position χ, or NULL */
  GArray         *word_spans;    /* WordSpan: where each shown word is in words_text */
  guint64         sigma_version;
  int             n_sigma;       /* snapshots the scrubber spans */
  int             sigma_shown;   /* index of the snapshot in the grid, -1 none */
  gboolean        sigma_follow;  /* the scrubber sits at the latest snapshot */
  CamlRun        *baseline;      /* NULL, or the matched baseline trained alongside */
  CamlTrainerState base_state;   /* its state at the last update */
  float          *base_losses;
  long            base_n_steps;
  CamlEvalRow    *base_rows;
  int             base_n_rows;
  float          *prev_losses;   /* the last run discarded after it trained: its curves */
  long            prev_n_steps;  /* stay in the plots, dashed, until the data changes */
  CamlEvalRow    *prev_rows;
  int             prev_n_rows;
  gboolean        prev_classification;
  CamlExperiment *prev_exp;      /* what it trained (its data decide whether it compares) */
  gboolean        log_scale;
  gboolean        sigma_stretch; /* σ-maps' grey scale over their own range */
  double          smoothing;
  gboolean        syncing;       /* widgets are being set from exp */
  char           *error_text;
  gint64          last_update_us;
  gint            update_pending; /* atomic: one idle/timeout is queued */
  gboolean        close_confirmed; /* close without asking (answered, or app.quit's answer) */
  gboolean        asking_for_quit; /* the close question is app.quit's: answer, do not close */
  GtkWidget      *close_dialog;    /* the close question while it is up, or NULL */
  char           *autosave_id;   /* NULL until the first autosave */
  guint           autosave_source; /* a pending autosave timeout (holds a ref) */
  guint           focus_source;  /* a pending focus_rescue idle (holds a ref) */
  char           *notice;        /* shown in the status label instead, or NULL */
  guint           notice_source; /* the timeout that ends it (holds a ref) */
  gboolean        recovered;     /* exp came from a crashed session's autosave */

  /* borrowed */
  GSettings      *settings;      /* the application's, may be NULL */
};

G_DEFINE_FINAL_TYPE (CamlWindow, caml_window, GTK_TYPE_APPLICATION_WINDOW)

enum { PROP_0, PROP_CLOSE_CONFIRMED, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_CLOSE_ANSWERED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void update_actions (CamlWindow *self);
static void set_strings (GtkDropDown *drop, const char *const *strings);
static void update_from_run (CamlWindow *self);
static void prepare_run (CamlWindow *self);
static void rebuild_loss_plot (CamlWindow *self);
static void schedule_autosave (CamlWindow *self);
static void rebuild_words_plots (CamlWindow *self);
static void drop_autosave (CamlWindow *self);
static void action_ask_close (GSimpleAction *action, GVariant *param, gpointer user_data);

/* --------------------------------------------------------------- helpers */

static void
set_action_enabled (CamlWindow *self, const char *name, gboolean enabled)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), name);
  if (action != NULL)
    g_simple_action_set_enabled (G_SIMPLE_ACTION (action), enabled);
}

static gboolean
baseline_active (CamlWindow *self)
{
  if (self->baseline == NULL)
    return FALSE;
  CamlProgress p;
  caml_trainer_get_progress (caml_run_get_trainer (self->baseline), &p);
  return p.state == CAML_TRAINER_RUNNING || p.state == CAML_TRAINER_PAUSED
         || p.state == CAML_TRAINER_IDLE;
}

static gboolean
run_active (CamlWindow *self)
{
  return self->run != NULL && self->run_started
         && (self->progress.state == CAML_TRAINER_RUNNING
             || self->progress.state == CAML_TRAINER_PAUSED);
}

/* The experiment's name as the title shows it (free with g_free). */
static char *
display_name (CamlWindow *self)
{
  return g_strdup_printf ("%s%s", self->exp->name != NULL ? self->exp->name : "untitled",
                          self->recovered ? " (recovered)" : "");
}

static void
update_title (CamlWindow *self)
{
  g_autofree char *name = display_name (self);
  g_autofree char *title = g_strdup_printf ("%s%s", self->dirty ? "• " : "", name);
  g_autofree char *base = self->path != NULL ? g_filename_display_basename (self->path) : NULL;
  if (base != NULL && g_str_equal (base, "experiment.json"))
    {
      /* a run's folder (caml train's, Save Run's) names it, not the file */
      g_autofree char *dir = g_path_get_dirname (self->path);
      g_autofree char *folder = g_filename_display_basename (dir);
      g_free (base);
      base = g_strdup_printf ("%s/experiment.json", folder);
    }

  gtk_label_set_text (self->title_label, title);
  gtk_label_set_text (self->subtitle_label,
                      base != NULL ? base : self->origin != NULL ? self->origin : "not saved");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->subtitle_label), self->path);
  gtk_window_set_title (GTK_WINDOW (self), title);
}

static void
add_recent (CamlWindow *self, const char *path)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  if (CAML_IS_APPLICATION (app))
    caml_application_note_recent (CAML_APPLICATION (app), path);
}

static void drop_autosave (CamlWindow *self);

/* After an edit: the experiment is modified when it differs from the file
 * or preset as opened or last saved — an edit undone, or a value set back,
 * is no change — or when it was recovered from an autosave, which no file
 * holds. A modified one is autosaved soon; one back to clean needs none. */
static void
mark_dirty (CamlWindow *self)
{
  gboolean dirty = self->recovered || self->clean_exp == NULL
                   || !caml_experiment_equal (self->exp, self->clean_exp);
  if (dirty != self->dirty)
    {
      self->dirty = dirty;
      update_title (self);
    }
  if (dirty)
    schedule_autosave (self);
  else
    drop_autosave (self);
}

/* exp is what the file or preset holds now (opened or saved). */
static void
mark_clean (CamlWindow *self)
{
  caml_experiment_free (self->clean_exp);
  self->clean_exp = caml_experiment_copy (self->exp);
  self->dirty = FALSE;
  self->recovered = FALSE;
  drop_autosave (self);
}

void
caml_window_show_error (CamlWindow *self, const char *message)
{
  /* The Continue button belongs to a divergence message only. */
  self->set_aside_shown = FALSE;
  gtk_widget_set_visible (GTK_WIDGET (self->banner_button), FALSE);
  gtk_widget_set_visible (GTK_WIDGET (self->banner_discard_button), FALSE);
  gtk_widget_remove_css_class (GTK_WIDGET (self->banner_revealer), "diverged");
  gtk_widget_remove_css_class (GTK_WIDGET (self->banner_revealer), "info");
  gtk_image_set_from_icon_name (self->banner_icon, "dialog-error-symbolic");
  g_free (self->error_text);
  self->error_text = g_strdup (message);
  gtk_label_set_text (self->banner_label, message);
  gtk_revealer_set_reveal_child (self->banner_revealer, message != NULL);
}

const char *
caml_window_get_error (CamlWindow *self)
{
  return self->error_text;
}

static void show_set_aside (CamlWindow *self);

/* With the error gone, the banner is back to the set-aside weights, when
 * there are any: a new message hides their banner only while it stays. */
static void
clear_error (CamlWindow *self)
{
  if (self->set_aside != NULL)
    show_set_aside (self);
  else
    caml_window_show_error (self, NULL);
}

/* ------------------------------------------------------------------ data */

/* The plot domain for a data kind: the engine's default for it (what an
 * experiment file without "plot" gets), else the training inputs' range
 * widened by a quarter on each side. */
static void
default_domain (CamlDataKind kind, const CamlDataset *set, double domain[4])
{
  g_autofree char *json = g_strdup_printf ("{ \"data\": { \"builtin\": \"%s\" } }",
                                           caml_data_kind_names[kind]);
  CamlExperiment *probe = caml_experiment_load_data (json, -1, "defaults", NULL);

  if (probe != NULL)
    {
      memcpy (domain, probe->plot_domain, sizeof probe->plot_domain);
      caml_experiment_free (probe);
      return;
    }
  if (!caml_shape_is_plane (&set->x_shape) || set->n <= 0)
    return;
  for (int d = 0; d < 2; d++)
    {
      double lo = INFINITY, hi = -INFINITY;
      for (int i = 0; i < set->n; i++)
        {
          lo = fmin (lo, set->x[2 * i + d]);
          hi = fmax (hi, set->x[2 * i + d]);
        }
      /* inputs all but equal: a margin that keeps the domain one the
       * experiment file takes (plot.domain: not too narrow) */
      double size = MAX (1.0, MAX (fabs (lo), fabs (hi)));
      double margin = hi - lo > 1e-6 * size ? 0.25 * (hi - lo) : 0.25 * size;
      domain[2 * d] = lo - margin;
      domain[2 * d + 1] = hi + margin;
    }
}

/* Whether a data kind is read from files (images, texts, IMDB's 66 MB of
 * JSON, word vectors), which takes seconds and says so ("Loading MNIST…").
 * The computed sets — XOR, the surface, the four sanity sentences — are
 * made on a worker thread too (the largest surface grid, 1024², takes
 * 93 ms), but quietly: a build on them keeps the plots for BUILD_QUIET_MS,
 * and the data label and model editor keep the shapes of the last data of
 * the same kind, which are the same. Every data set is made or read on a
 * worker thread (JOB_DATA), never on the main thread. */
static gboolean
kind_from_files (CamlDataKind kind)
{
  return kind != CAML_DATA_XOR && kind != CAML_DATA_SURFACE && kind != CAML_DATA_RNN_SANITY;
}

/* What the evaluations are on: "validation" when data.validation_fraction
 * holds part of the training set out (the test set is then not used). */
static const char *
held_out (CamlWindow *self)
{
  return caml_report_evaluated_on (self->exp);
}

static const char *
kind_title (CamlDataKind kind)
{
  return kind == CAML_DATA_IDX ? "IDX" : kind == CAML_DATA_TEXT ? "text"
         : caml_data_source_title (kind);
}

static const char *
data_title (CamlWindow *self)
{
  return kind_title (self->exp->data.kind);
}

/* What the window says while data of a kind are loaded or made: "Loading
 * MNIST…", "Making the XOR (4 points) data…" (lower: for the progress bar). */
static char *
kind_loading_text (CamlDataKind kind, gboolean lower)
{
  if (kind_from_files (kind))
    return g_strdup_printf ("%s %s…", lower ? "loading" : "Loading", kind_title (kind));
  return g_strdup_printf ("%s the %s data…", lower ? "making" : "Making", kind_title (kind));
}

/* … exp's data. */
static char *
data_loading_text (CamlWindow *self, gboolean lower)
{
  return kind_loading_text (self->exp->data.kind, lower);
}

/* … the data chosen (files_loading): "loading MNIST…", "loading the
 * chosen files…". */
static char *
choice_loading_text (CamlWindow *self)
{
  if (self->files_kind == CAML_DATA_IDX || self->files_kind == CAML_DATA_TEXT)
    return g_strdup ("loading the chosen files…");
  return kind_loading_text (self->files_kind, TRUE);
}

/* Tells the data label and the model editor about self->data. */
static void
show_data (CamlWindow *self)
{
  const CamlDataset *train = self->data->train, *test = self->data->test;
  g_autofree char *shape = caml_shape_to_string (&train->x_shape);
  int want = train->n_classes > 0 ? train->n_classes : train->y_width;
  g_autofree char *text =
    g_strdup_printf ("%d training and %d %s samples, input %s, %s with %d %s",
                     train->n, test != NULL ? test->n : 0, held_out (self), shape,
                     train->n_classes > 0 ? "classification" : "regression", want,
                     train->n_classes > 0 ? "classes" : want == 1 ? "output" : "outputs");
  if (self->exp->data.kind == CAML_DATA_IDX && self->exp->data.idx_paths[0] != NULL)
    {
      g_autofree char *dir = g_path_get_dirname (self->exp->data.idx_paths[0]);
      g_autofree char *with_dir = g_strdup_printf ("%s, from %s", text, dir);
      gtk_label_set_text (self->data_label, with_dir);
    }
  else if (self->exp->data.kind == CAML_DATA_TEXT && self->exp->data.text_paths[0] != NULL
           && self->exp->data.text_paths[1] != NULL)
    {
      g_autofree char *with_files = g_strdup_printf ("%s, from %s and %s", text,
                                                     self->exp->data.text_paths[0],
                                                     self->exp->data.text_paths[1]);
      gtk_label_set_text (self->data_label, with_files);
    }
  else
    gtk_label_set_text (self->data_label, text);
  gtk_widget_remove_css_class (GTK_WIDGET (self->data_label), "error");
  caml_model_editor_set_data (self->model_editor, &train->x_shape, want, data_title (self),
                              NULL);
  self->shown_kind = (int) self->exp->data.kind;
}

/* Tells the data label and the model editor that exp's data are on their
 * way (the editor checks no shapes meanwhile). */
static void
show_data_loading (CamlWindow *self)
{
  g_autofree char *text = data_loading_text (self, FALSE);
  gtk_label_set_text (self->data_label, text);
  gtk_widget_remove_css_class (GTK_WIDGET (self->data_label), "error");
  caml_model_editor_set_data (self->model_editor, NULL, 0, data_title (self), NULL);
  self->shown_kind = -1;
}

/* After the data changed through the picker or the file choosers: the
 * plot domain and the loss follow the new data. */
static void
adapt_to_data (CamlWindow *self)
{
  default_domain (self->exp->data.kind, self->data->train, self->exp->plot_domain);
  /* Classes: softmax over the outputs, or for two classes and one output
   * (every text preset) its sigmoid — a classification loss already chosen
   * that fits is kept. Values: squared error. */
  int classes = self->data->train->n_classes;
  int outputs = caml_model_editor_get_outputs (self->model_editor);   /* 0: does not build */
  gboolean sigmoid = classes == 2
                     && (outputs == 1 || (outputs == 0 && self->exp->loss == CAML_LOSS_SIGMOID_XENT));
  CamlLossKind loss = classes == 0 ? CAML_LOSS_MSE
                      : sigmoid ? CAML_LOSS_SIGMOID_XENT : CAML_LOSS_SOFTMAX_XENT;
  if (loss != self->exp->loss)
    {
      self->exp->loss = loss;
      gboolean was_syncing = self->syncing;
      self->syncing = TRUE;
      gtk_drop_down_set_selected (self->loss_drop, loss);
      self->syncing = was_syncing;
    }
}

static void
install_data (CamlWindow *self, CamlRunData *data)
{
  self->data = data;
  self->data_loading = FALSE;
  show_data (self);
}

static void
set_data_error (CamlWindow *self, const char *message)
{
  self->data_error = g_strdup (message);
  self->data_loading = FALSE;
  g_autofree char *text = g_strdup_printf ("Cannot read the %s data: %s", data_title (self),
                                           message);
  gtk_label_set_text (self->data_label, message != NULL && strstr (message, "not fetched")
                                        ? message : text);
  gtk_widget_add_css_class (GTK_WIDGET (self->data_label), "error");
  caml_model_editor_set_data (self->model_editor, NULL, 0, data_title (self), message);
  self->shown_kind = -1;
  caml_window_show_error (self, gtk_label_get_text (self->data_label));
}

static void start_job (CamlWindow *self, JobKind kind);
static void start_build_quiet (CamlWindow *self);

/* Makes sure exp's data sets are loaded or being loaded, on a worker
 * thread (JOB_DATA, which builds the run too): read from files, or made
 * for the built-in sets, quietly (start_build_quiet) unless weights are to
 * be loaded. A fetched set that is not on this computer is reported with
 * the command that fetches it, before any attempt to read it. */
static void
request_data (CamlWindow *self)
{
  CamlDataKind kind = self->exp->data.kind;

  if (self->data != NULL || self->data_error != NULL || self->data_loading)
    return;
  g_autofree char *missing = caml_data_source_missing (kind);
  if (missing != NULL)
    {
      set_data_error (self, missing);
      return;
    }
  if (!kind_from_files (kind) && self->pending_weights == NULL)
    start_build_quiet (self);
  start_job (self, JOB_DATA);
}

/* The data sets no longer match exp: forget them (a load under way is
 * dropped when it ends). */
/* The previous run's curves go: Forget the Previous Run, or other data
 * (another kind, other IDX files), whose losses do not compare. */
static void
forget_previous (CamlWindow *self)
{
  g_clear_pointer (&self->prev_losses, g_free);
  g_clear_pointer (&self->prev_rows, g_free);
  g_clear_pointer (&self->prev_exp, caml_experiment_free);
  self->prev_n_steps = 0;
  self->prev_n_rows = 0;
}

/* …and go when the experiment's data are no longer those it trained on
 * (other files, grid, split, limits…). */
static void
forget_previous_if_other_data (CamlWindow *self)
{
  if (self->prev_exp != NULL && !caml_data_config_equal (&self->prev_exp->data, &self->exp->data))
    forget_previous (self);
}

static void
invalidate_data (CamlWindow *self)
{
  g_clear_pointer (&self->data, caml_run_data_unref);
  g_clear_pointer (&self->data_error, g_free);
  self->data_loading = FALSE;
  self->data_serial++;
}

/* Whether exp's data follow its seed: the surface's split does, unless
 * data.split_seed fixes it. */
static gboolean
data_follow_seed (const CamlExperiment *exp)
{
  return exp->data.kind == CAML_DATA_SURFACE && !exp->data.has_split_seed;
}

/* The data chosen that are being loaded no longer count: the job drops
 * them when it ends. */
static void
drop_choice (CamlWindow *self)
{
  self->files_serial++;
  self->files_loading = FALSE;
}

static void sync_data_choice (CamlWindow *self);
static void update_progress_widgets (CamlWindow *self);

/* Data chosen that are not used (they did not load, or something came
 * first): the drop-down and the menu go back to the data in use, and the
 * banner says why — "Cannot use the MNIST data: …", "Cannot use these text
 * files: …". */
static void
refuse_choice (CamlWindow *self, CamlDataKind kind, const char *why)
{
  g_autofree char *text =
    kind == CAML_DATA_IDX || kind == CAML_DATA_TEXT
    ? g_strdup_printf ("Cannot use these %s files: %s", kind == CAML_DATA_IDX ? "IDX" : "text",
                       why)
    : g_strdup_printf ("Cannot use the %s data: %s", kind_title (kind), why);
  self->pending = PENDING_NONE;   /* Train pressed for them does not start */
  sync_data_choice (self);
  caml_window_show_error (self, text);
}

/* A later action of the user's wins over data chosen that are still
 * loading: they will not be used, Train pressed for them does not wait
 * any more, and the drop-down and the menu go back to the data in use.
 * why, when not NULL, says in the banner why they were not used. */
static void
cancel_choice (CamlWindow *self, const char *why)
{
  if (!self->files_loading)
    return;
  drop_choice (self);
  if (why != NULL)
    refuse_choice (self, self->files_kind, why);
  else
    {
      self->pending = PENDING_NONE;
      sync_data_choice (self);
    }
  update_progress_widgets (self);
  update_actions (self);
}

/* ------------------------------------------------------------------- run */

static void
clear_history (CamlWindow *self)
{
  g_clear_pointer (&self->rows, g_free);
  g_clear_pointer (&self->losses, g_free);
  g_clear_pointer (&self->smooth, g_free);
  g_clear_pointer (&self->base_losses, g_free);
  g_clear_pointer (&self->base_rows, g_free);
  self->base_n_steps = 0;
  self->base_n_rows = 0;
  self->n_rows = 0;
  self->n_steps = 0;
  if (self->events != NULL)      /* NULL after dispose */
    g_array_set_size (self->events, 0);
  memset (&self->progress, 0, sizeof self->progress);
  self->progress.state = CAML_TRAINER_IDLE;
  self->failure_shown = FALSE;
}

/* The weights file the next installed run is to have (NULL: none). Jobs
 * take a copy with the serial; only a job with the current serial uses the
 * request up. */
static void
set_pending_load (CamlWindow *self, const char *path, const char *state)
{
  g_free (self->pending_weights);
  self->pending_weights = g_strdup (path);
  g_free (self->pending_state);
  self->pending_state = path != NULL ? g_strdup (state) : NULL;
  self->weights_serial++;
  self->weights_loading = FALSE;   /* a JOB_WEIGHTS under way is stale now */
}

/* The weights of a trained run that a new one replaced, until they are
 * saved, dismissed or replaced in turn: an edit (the steps, the seed…),
 * Train after a finished run or another preset starts a new run, and the
 * weights trained are not lost with the old one. */
typedef struct SetAside {
  CamlExperiment *exp;
  CamlRunData    *data;
  float          *w;
  size_t          n_weights;
  long            step;
  guint           serial;
} SetAside;

static void
set_aside_free (SetAside *s)
{
  if (s == NULL)
    return;
  caml_experiment_free (s->exp);
  caml_run_data_unref (s->data);
  g_free (s->w);
  g_free (s);
}

/* Before a run that trained is dropped: its weights are set aside unless
 * they were saved at the step they are at — in this window, or they are
 * those of an opened run that has not trained here (on disk with its state). */
static void
set_aside_run (CamlWindow *self)
{
  CamlProgress p;
  caml_run_get_progress (self->run, &p);
  if (p.step <= 0 || (self->saved_serial == self->run_serial && self->saved_step == p.step)
      || (!self->run_started && self->loaded_state != NULL))
    return;
  float *w = caml_run_copy_weights (self->run);
  if (w == NULL)
    return;
  set_aside_free (self->set_aside);
  self->set_aside = g_new0 (SetAside, 1);
  self->set_aside->exp = caml_experiment_copy (caml_run_get_experiment (self->run));
  self->set_aside->data = caml_run_data_ref (caml_run_get_data (self->run));
  self->set_aside->w = w;
  self->set_aside->n_weights = caml_run_get_n_weights (self->run);
  self->set_aside->step = p.step;
  self->set_aside->serial = ++self->set_aside_serial;
  show_set_aside (self);
}

static void
discard_run (CamlWindow *self)
{
  if (self->run != NULL && self->cancellable != NULL)   /* not when the window goes */
    set_aside_run (self);
  /* An opened run rebuilt on its own state (an edit before Train) comes
   * back with the same curves: they are not another run to compare with. */
  gboolean reloading = !self->run_started && self->pending_state != NULL
                       && g_strcmp0 (self->pending_state, self->loaded_state) == 0;
  if (self->n_steps > 0 && self->run != NULL && !reloading)
    {
      /* A run that trained: its curves stay for comparison with the next. */
      forget_previous (self);
      self->prev_losses = g_steal_pointer (&self->losses);
      self->prev_n_steps = self->n_steps;
      self->prev_rows = g_steal_pointer (&self->rows);
      self->prev_n_rows = self->n_rows;
      self->prev_classification = self->progress.classification;
      self->prev_exp = caml_experiment_copy (caml_run_get_experiment (self->run));
    }
  g_clear_pointer (&self->baseline, caml_run_free);
  g_clear_pointer (&self->run, caml_run_free);   /* stops and joins the thread */
  self->run_started = FALSE;
  self->run_building = FALSE;   /* a run being built is dropped when it arrives */
  self->baseline_building = FALSE;   /* … and so is its baseline */
  g_clear_pointer (&self->build_error, g_free);   /* the next model may build */
  g_clear_handle_id (&self->build_source, g_source_remove);
  self->weights_loading = FALSE;   /* … and one built beside it */
  g_clear_pointer (&self->loaded_weights, g_free);   /* experiment_changed reads it first */
  g_clear_pointer (&self->loaded_state, g_free);
  self->run_serial++;
  self->sigma_version = 0;
  self->n_sigma = 0;
  self->sigma_shown = -1;
  self->sigma_follow = TRUE;
  self->surface_version = 0;
  g_clear_pointer (&self->fit, g_free);
  g_clear_pointer (&self->chi, g_free);
  g_clear_pointer (&self->default_part, g_free);
  g_clear_pointer (&self->value_part, g_free);
  self->parts_layer = -1;
  self->words_version = 0;
  g_clear_pointer (&self->word_chi, g_free);
  g_clear_pointer (&self->word_probs, g_free);
  g_clear_pointer (&self->token_chi, g_free);
  clear_history (self);
  /* The words page shows no texts, P(1) or bars of a run that is gone
   * (word_spans is NULL once disposed). */
  if (self->word_spans != NULL)
    rebuild_words_plots (self);
}

/* Trainer thread: hand the news to the main loop, at most one source at a
 * time, holding a reference on the window. */
static gboolean on_update (gpointer data);

static void
on_run_notify (gpointer user_data)
{
  CamlWindow *self = user_data;

  if (g_atomic_int_compare_and_exchange (&self->update_pending, 0, 1))
    g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, on_update, g_object_ref (self), g_object_unref);
}

static void rebuild_parts_plots (CamlWindow *self);
static void clear_accuracy (CamlWindow *self);
static void start_baseline_if_wanted (CamlWindow *self);

/* The plane the run's surface, χ and parts maps cover. */
static CamlFigurePlane
run_plane (CamlWindow *self)
{
  return (CamlFigurePlane) { caml_run_get_experiment (self->run), caml_run_get_train (self->run),
                             CAML_FIGURE_GRID };
}

/* Builds the surface and χ figures from the copied grids. */
static void
rebuild_surface_plots (CamlWindow *self)
{
  CamlFigurePlane plane = run_plane (self);
  int n_chi = MIN (caml_run_get_n_chi (self->run), 4);

  /* The card shows the fitted surface, the figure's last map (an export
   * writes the ground truth beside it, as caml train's surface.png). */
  g_autoptr (CamlPlotFigure) surface = caml_figure_surface (&plane, self->fit);
  caml_plot_view_set_figure (self->surface_view, surface,
                             caml_plot_figure_get_n_plots (surface) - 1, 1);
  if (n_chi == 0)
    {
      caml_plot_view_clear (self->chi_view);
      caml_plot_view_set_placeholder (self->chi_view, "this model has no per-sample gate χ");
      return;
    }
  int layers[4];
  const char *titles[4];
  for (int k = 0; k < n_chi; k++)
    layers[k] = caml_run_get_chi_layer (self->run, k, &titles[k]);
  g_autoptr (CamlPlotFigure) chi = caml_figure_chi (&plane, n_chi, layers, titles, self->chi);
  caml_plot_view_set_figure (self->chi_view, chi, 0, n_chi);
  /* The parts page is prepared only while it is shown (four more maps
   * each update): switching to it, or exporting it, prepares it. */
  if (g_str_equal (gtk_stack_get_visible_child_name (self->plots_stack), "parts"))
    rebuild_parts_plots (self);
}

static void
rebuild_parts_plots (CamlWindow *self)
{
  int n_chi = caml_run_get_n_chi (self->run);
  size_t cells = (size_t) CAML_FIGURE_GRID * CAML_FIGURE_GRID;
  const float *parts_chi = NULL;

  for (int k = 0; k < n_chi && k < 4; k++)
    if (caml_run_get_chi_layer (self->run, k, NULL) == self->parts_layer)
      parts_chi = self->chi + k * cells;
  if (parts_chi == NULL)
    {
      caml_plot_view_clear (self->parts_view);
      caml_plot_view_set_placeholder (self->parts_view, "this model has no CA-NN layer");
      return;
    }
  CamlFigurePlane plane = run_plane (self);
  g_autoptr (CamlPlotFigure) parts = caml_figure_parts (&plane, self->parts_layer, self->fit,
                                                        parts_chi, self->default_part,
                                                        self->value_part);
  caml_plot_view_set_figure (self->parts_view, parts, 0, 4);
}

static char *run_title (CamlWindow *self);
static void describe_loss (CamlWindow *self, CamlFigureDetail detail, CamlFigureLoss *loss,
                           CamlFigureCurves *previous, CamlFigureCurves *baseline,
                           GArray *events, char **title);

/* The σ-map AUC by step, spanning the run as the loss plot does: built
 * with each new snapshot and each loss plot. */
static void
rebuild_sigma_auc (CamlWindow *self)
{
  g_autofree double *steps = NULL, *auc = NULL;
  int m = caml_run_copy_sigma_auc (self->run, &steps, &auc);
  CamlFigureLoss loss;
  CamlFigureCurves previous, baseline;
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (CamlPlotEvent));
  g_autofree char *title = NULL;
  double first, last;
  describe_loss (self, CAML_FIGURE_LIVE, &loss, &previous, &baseline, events, &title);
  caml_figure_loss_span (&loss, &first, &last);
  g_autoptr (CamlPlotFigure) figure = caml_figure_sigma_auc (steps, auc, m, first, last);
  caml_plot_view_set_figure (self->sigma_auc_view, figure, 0, 1);
  set_action_enabled (self, "export-sigma-auc", TRUE);
}

/* The scrubber spans the snapshots kept; at its right end it follows the
 * latest. Builds the grid of the selected snapshot and the AUC curve. */
static void
rebuild_sigma_plots (CamlWindow *self, gboolean new_data)
{
  GtkAdjustment *adj = gtk_range_get_adjustment (GTK_RANGE (self->sigma_scale));
  int n = self->n_sigma;

  gboolean was_syncing = self->syncing;
  self->syncing = TRUE;
  gtk_adjustment_set_upper (adj, MAX (n - 1, 0));
  if (self->sigma_follow || n == 0)
    gtk_adjustment_set_value (adj, MAX (n - 1, 0));
  self->syncing = was_syncing;
  gtk_widget_set_sensitive (GTK_WIDGET (self->sigma_scale), n > 1);
  if (n == 0)
    {
      caml_plot_view_clear (self->sigma_view);
      caml_plot_view_set_placeholder (self->sigma_view, "σ-maps appear while training");
      return;
    }
  int index = CLAMP ((int) lround (gtk_adjustment_get_value (adj)), 0, n - 1);

  if (new_data || index != self->sigma_shown)
    {
      g_autoptr (CamlSigmaSnapshot) snap = caml_run_copy_sigma (self->run, index);
      if (snap != NULL)
        {
          const CamlExperiment *exp = caml_run_get_experiment (self->run);
          g_autoptr (CamlPlotFigure) grid =
            caml_figure_sigma_grid (snap, self->sigma_stretch,
                                    exp->name ? exp->name : "experiment",
                                    caml_run_get_sigma_source (self->run));
          caml_plot_view_set_figure (self->sigma_view, grid, 0, 1);
          self->sigma_shown = index;
        }
    }

  if (new_data)
    rebuild_sigma_auc (self);
}

static void
on_sigma_scrubbed (GtkRange *range, CamlWindow *self)
{
  if (self->syncing || self->run == NULL || !caml_run_has_sigma (self->run))
    return;
  GtkAdjustment *adj = gtk_range_get_adjustment (range);
  self->sigma_follow = gtk_adjustment_get_value (adj) >= gtk_adjustment_get_upper (adj) - 0.5;
  rebuild_sigma_plots (self, FALSE);
}

/* Image models show the test accuracy beside the σ-maps, under their AUC;
 * the others across the plot area's width. */
static void
place_accuracy (CamlWindow *self, gboolean beside_sigma)
{
  GtkWidget *acc = GTK_WIDGET (self->accuracy_view);
  GtkWidget *parent = gtk_widget_get_parent (acc);

  if ((parent == GTK_WIDGET (self->sigma_side)) == beside_sigma)
    return;
  g_object_ref (acc);
  if (beside_sigma)
    {
      gtk_grid_remove (self->bottom_grid, acc);
      gtk_widget_set_size_request (acc, -1, 100);
      gtk_widget_set_hexpand (acc, FALSE);   /* the σ-maps take the width */
      gtk_box_append (self->sigma_side, acc);
    }
  else
    {
      gtk_box_remove (self->sigma_side, acc);
      gtk_widget_set_size_request (acc, -1, 190);
      gtk_widget_set_hexpand (acc, TRUE);
      gtk_grid_attach (self->bottom_grid, acc, 0, 1, 3, 1);
    }
  g_object_unref (acc);
}

/* A shown word of the sample texts: its characters in words_text's buffer,
 * its vocabulary id (−1: unseen in training) and its place in token_chi. */
typedef struct {
  int start, end, id, token;
} WordSpan;

/* One tag per shade of words.html (background and text colour), plus the
 * sample headers, the dotted underline of unseen words and the grey of
 * words the model did not read. */
static void
make_words_tags (CamlWindow *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->words_text);
  for (int shade = 0; shade < CAML_WORDS_N_SHADES; shade++)
    {
      int r, g, b;
      gboolean white;
      caml_words_shade_colour (shade, &r, &g, &b, &white);
      g_autofree char *name = g_strdup_printf ("g%d", shade);
      GdkRGBA bg = { r / 255.0f, g / 255.0f, b / 255.0f, 1.0f };
      GdkRGBA fg = white ? (GdkRGBA) { 1, 1, 1, 1 } : (GdkRGBA) { 0.07f, 0.07f, 0.07f, 1 };
      gtk_text_buffer_create_tag (buffer, name, "background-rgba", &bg,
                                  "foreground-rgba", &fg, NULL);
    }
  GdkRGBA grey = { 0.4f, 0.4f, 0.4f, 1 };
  gtk_text_buffer_create_tag (buffer, "meta", "scale", 0.85, "foreground-rgba", &grey,
                              "pixels-above-lines", 8, NULL);
  gtk_text_buffer_create_tag (buffer, "oov", "underline", PANGO_UNDERLINE_SINGLE,
                              "underline-rgba", &grey, NULL);
  GdkRGBA light = { 0.6f, 0.6f, 0.6f, 1 };
  gtk_text_buffer_create_tag (buffer, "cut", "foreground-rgba", &light, NULL);
  self->word_spans = g_array_new (FALSE, FALSE, sizeof (WordSpan));
}

/* A tagged stretch of the words text, in characters. */
typedef struct {
  int         start, end;
  const char *tags[2];   /* interned; tags[1] may be NULL */
} TagRun;

static void
append_run (GString *text, int *chars, GArray *runs, const char *piece, const char *tag,
            const char *tag2)
{
  int n = (int) g_utf8_strlen (piece, -1);
  if (tag != NULL)
    {
      TagRun run = { *chars, *chars + n, { g_intern_string (tag),
                                           tag2 != NULL ? g_intern_string (tag2) : NULL } };
      g_array_append_val (runs, run);
    }
  g_string_append (text, piece);
  *chars += n;
}

/* Puts text with its tags into buffer. When the buffer holds a text of the
 * same length (the same samples at the next evaluation: only P(1)'s digits
 * and the shades change) only the characters that differ are replaced and
 * the tags laid anew: the view keeps its layout. A buffer set anew while it
 * is shown lays its text out while the frame is drawn, which GTK reports as
 * "Trying to snapshot GtkBox … without a current allocation". */
static void
fill_words_buffer (GtkTextBuffer *buffer, const char *text, GArray *runs)
{
  GtkTextIter a, b;
  gtk_text_buffer_get_bounds (buffer, &a, &b);
  g_autofree char *old = gtk_text_buffer_get_text (buffer, &a, &b, TRUE);
  if (g_utf8_strlen (old, -1) != g_utf8_strlen (text, -1))
    gtk_text_buffer_set_text (buffer, text, -1);
  else
    {
      const char *o = old, *t = text;
      for (int at = 0; *t != '\0';)
        {
          if (g_utf8_get_char (o) == g_utf8_get_char (t))
            {
              o = g_utf8_next_char (o);
              t = g_utf8_next_char (t);
              at++;
              continue;
            }
          const char *from = t;
          int n = 0;
          while (*t != '\0' && g_utf8_get_char (o) != g_utf8_get_char (t))
            {
              o = g_utf8_next_char (o);
              t = g_utf8_next_char (t);
              n++;
            }
          gtk_text_buffer_get_iter_at_offset (buffer, &a, at);
          gtk_text_buffer_get_iter_at_offset (buffer, &b, at + n);
          gtk_text_buffer_delete (buffer, &a, &b);
          gtk_text_buffer_insert (buffer, &a, from, (int) (t - from));
          at += n;
        }
      gtk_text_buffer_get_bounds (buffer, &a, &b);
      gtk_text_buffer_remove_all_tags (buffer, &a, &b);
    }
  for (guint i = 0; i < runs->len; i++)
    {
      const TagRun *run = &g_array_index (runs, TagRun, i);
      gtk_text_buffer_get_iter_at_offset (buffer, &a, run->start);
      gtk_text_buffer_get_iter_at_offset (buffer, &b, run->end);
      for (int k = 0; k < 2 && run->tags[k] != NULL; k++)
        gtk_text_buffer_apply_tag_by_name (buffer, run->tags[k], &a, &b);
    }
}

/* The first test texts, each word shaded by its χ̃ — or by a per-position
 * gate's χ there — as in words.html, with the label and the model's
 * P(class 1). */
static void
rebuild_words_text (CamlWindow *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->words_text);
  g_autoptr (GString) text = g_string_new (NULL);
  g_autoptr (GArray) runs = g_array_new (FALSE, FALSE, sizeof (TagRun));
  int chars = 0;
  int n = 0;
  const CamlWordSample *samples = self->run != NULL && self->word_chi != NULL
                                  && caml_run_get_words_layer (self->run) >= 0
                                  ? caml_run_get_word_samples (self->run, &n) : NULL;
  g_array_set_size (self->word_spans, 0);
  if (samples == NULL || n == 0)
    {
      g_autofree char *none = g_strdup_printf (samples == NULL
                                               ? "The %s texts appear here, each word shaded "
                                                 "by its gate χ̃."
                                               : "The %s set keeps no texts to show.",
                                               held_out (self));
      append_run (text, &chars, runs, none, "meta", NULL);
      fill_words_buffer (buffer, text->str, runs);
      return;
    }
  for (int i = 0; i < n; i++)
    {
      const CamlWordSample *sample = &samples[i];
      g_autoptr (GString) meta = g_string_new (NULL);
      g_string_append_printf (meta, "%s%s text %d", i > 0 ? "\n" : "", held_out (self), i);
      if (sample->label >= 0)
        g_string_append_printf (meta, " · label %d", sample->label);
      if (self->word_probs != NULL && isfinite (self->word_probs[i]))
        g_string_append_printf (meta, " · model: P(1) = %.3f", self->word_probs[i]);
      g_string_append_c (meta, '\n');
      append_run (text, &chars, runs, meta->str, "meta", NULL);
      for (int k = 0; k < sample->n_words; k++)
        {
          int id = sample->ids[k];
          int token = i * CAML_RUN_WORDS_SHOWN + k;
          float chi = self->token_chi != NULL ? self->token_chi[token]
                      : !sample->read[k] ? NAN : id >= 0 ? self->word_chi[id] : 1.0f;
          char tag[8];
          if (isfinite (chi))
            g_snprintf (tag, sizeof tag, "g%d", caml_words_shade (chi));
          else   /* not read by the model, or not measured */
            g_strlcpy (tag, "cut", sizeof tag);
          WordSpan span = { chars, 0, id, token };
          append_run (text, &chars, runs, sample->words[k], tag, id < 0 ? "oov" : NULL);
          span.end = chars;
          g_array_append_val (self->word_spans, span);
          append_run (text, &chars, runs, " ", NULL, NULL);
        }
      if (sample->more > 0)
        {
          g_autofree char *more = g_strdup_printf ("… (%d more words)", sample->more);
          append_run (text, &chars, runs, more, "meta", NULL);
        }
      append_run (text, &chars, runs, "\n", NULL, NULL);
    }
  fill_words_buffer (buffer, text->str, runs);
}

/* A word's χ̃ and training count under the pointer. */
static gboolean
on_words_text_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard,
                       GtkTooltip *tooltip, CamlWindow *self)
{
  GtkTextView *view = GTK_TEXT_VIEW (widget);
  GtkTextIter iter;
  int bx, by;
  if (keyboard || self->run == NULL || self->word_chi == NULL || self->word_spans == NULL)
    return FALSE;
  gtk_text_view_window_to_buffer_coords (view, GTK_TEXT_WINDOW_WIDGET, x, y, &bx, &by);
  if (!gtk_text_view_get_iter_at_location (view, &iter, bx, by))
    return FALSE;
  int offset = gtk_text_iter_get_offset (&iter);
  const WordSpan *spans = (const WordSpan *) self->word_spans->data;
  int lo = 0, hi = (int) self->word_spans->len;
  while (lo < hi)    /* the first span that ends after offset */
    {
      int mid = (lo + hi) / 2;
      if (spans[mid].end <= offset)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (lo >= (int) self->word_spans->len || spans[lo].start > offset)
    return FALSE;
  const CamlVocab *vocab = caml_run_get_train (self->run)->vocab;
  const WordSpan *span = &spans[lo];
  g_autoptr (GString) text = g_string_new (NULL);
  if (self->token_chi == NULL)
    {
      int n = 0;
      const CamlWordSample *samples = caml_run_get_word_samples (self->run, &n);
      if (!samples[span->token / CAML_RUN_WORDS_SHOWN].read[span->token % CAML_RUN_WORDS_SHOWN])
        g_string_append_printf (text, "past data.max_tokens (%d): not read; ",
                                caml_run_get_experiment (self->run)->data.max_tokens);
      if (span->id < 0)
        g_string_append (text, "unseen in training: χ̃ = 1 (v0)");
      else
        g_string_append_printf (text, "χ̃ = %.3f, %" G_GINT64_FORMAT "× in training",
                                self->word_chi[span->id], caml_vocab_count (vocab, span->id));
    }
  else
    {
      int n = 0;
      const CamlWordSample *samples = caml_run_get_word_samples (self->run, &n);
      gboolean own = samples[span->token / CAML_RUN_WORDS_SHOWN].aligned;
      float chi = self->token_chi[span->token];
      if (isfinite (chi))
        g_string_append_printf (text, own ? "χ = %.3f here" : "mean χ = %.3f", chi);
      else
        g_string_append (text, own ? "past the model's input length: not read"
                                   : "χ not measured");
      if (own && span->id >= 0 && isfinite (self->word_chi[span->id]))
        g_string_append_printf (text, ", mean χ %.3f", self->word_chi[span->id]);
      if (span->id < 0)
        g_string_append (text, "; unseen in training");
      else
        g_string_append_printf (text, "; %" G_GINT64_FORMAT "× in training",
                                caml_vocab_count (vocab, span->id));
    }
  gtk_tooltip_set_text (tooltip, text->str);
  return TRUE;
}

/* The words page: the first test texts shaded word by word, and the
 * WORDS_TOP most and least context-free words among those seen
 * WORDS_MIN_COUNT times in training, as `caml train`'s words.png ranks them.
 * Prepared only while shown, like the parts page. */
static void
rebuild_words_plots (CamlWindow *self)
{
  rebuild_words_text (self);
  if (self->run == NULL || caml_run_get_words_layer (self->run) < 0 || self->word_chi == NULL)
    {
      caml_plot_view_clear (self->words_view);
      caml_plot_view_set_placeholder (self->words_view, self->run == NULL ? "no model yet"
                                      : "words are shown for text data and a gate over "
                                        "words (CA-BSFE, CA-ATT, CA-RNN)");
      return;
    }
  g_autofree char *texts_read = NULL;
  g_autofree char *layer = caml_run_describe_words (self->run, &texts_read);
  g_autofree char *title = run_title (self);
  CamlFigureWords words = {
    .vocab = caml_run_get_train (self->run)->vocab, .chi = self->word_chi,
    .per_position = caml_run_words_per_position (self->run), .texts_read = texts_read,
    .layer = layer, .title = title, .min_count = WORDS_MIN_COUNT, .n_top = WORDS_TOP,
  };
  int shown = 0;
  g_autoptr (CamlPlotFigure) figure = caml_figure_words (&words, &shown);
  if (shown == 0)
    {
      caml_plot_view_clear (self->words_view);
      caml_plot_view_set_placeholder (self->words_view, "no word is seen "
                                      G_STRINGIFY (WORDS_MIN_COUNT) " times in training");
      return;
    }
  caml_plot_view_set_figure (self->words_view, figure, 0, 2);
}

/* Offers the parts page when there are parts to show and the words page
 * when the run has word gates; leaves a page that is not offered (once
 * the run is known). */
static void
update_plots_switcher (CamlWindow *self)
{
  gboolean words = self->run != NULL && caml_run_get_words_layer (self->run) >= 0;
  const char *page = gtk_stack_get_visible_child_name (self->plots_stack);

  gtk_widget_set_visible (GTK_WIDGET (self->parts_toggle), self->has_parts);
  gtk_widget_set_visible (GTK_WIDGET (self->words_toggle), words);
  /* A per-word gate (CA-BSFE) or one per position (CA-ATT, CA-RNN). */
  if (words)
    gtk_widget_set_tooltip_text (GTK_WIDGET (self->words_toggle),
                                 caml_run_words_per_position (self->run)
                                 ? "Texts shaded by the gate χ at each word, and the words "
                                   "ranked by their mean χ (light: χ → 1, context-free)"
                                 : "The most and least context-free words by their gate χ̃ "
                                   "(light: χ̃ → 1, the word is replaced by the shared v0)");
  gtk_widget_set_visible (GTK_WIDGET (self->plots_switcher), self->has_parts || words);
  /* The page the user chose comes back when a later run offers it again
   * (an edit undone, another preset of the same kind). */
  const char *want = g_str_equal (self->chosen_page, "parts") && self->has_parts ? "parts"
                     : g_str_equal (self->chosen_page, "words") && words ? "words" : NULL;
  if (want == NULL
      && ((g_str_equal (page, "parts") && !self->has_parts)
          || (g_str_equal (page, "words") && !words
              && (self->run != NULL || !caml_window_is_loading (self)))))   /* kept while built */
    want = "main";
  if (want != NULL && !g_str_equal (page, want))
    {
      const char *chosen = self->chosen_page;
      g_action_group_activate_action (G_ACTION_GROUP (self), "plots-page",
                                      g_variant_new_string (want));
      self->chosen_page = chosen;   /* the user's choice stays */
    }
}

/* Every map gets the same width: the χ view spans one grid column per gate.
 * The CA-NN parts page is offered only when there are parts to show. */
static void
set_chi_columns (CamlWindow *self, int n, gboolean parts)
{
  g_object_ref (self->chi_view);
  gtk_grid_remove (self->bottom_grid, GTK_WIDGET (self->chi_view));
  gtk_grid_attach (self->bottom_grid, GTK_WIDGET (self->chi_view), 1, 0, MAX (n, 1), 1);
  g_object_unref (self->chi_view);
  self->has_parts = parts;
  update_plots_switcher (self);
}

static void
show_surface_placeholders (CamlWindow *self, const char *why)
{
  set_chi_columns (self, 1, FALSE);
  caml_plot_view_clear (self->surface_view);
  caml_plot_view_clear (self->chi_view);
  caml_plot_view_set_placeholder (self->surface_view, why);
  caml_plot_view_set_placeholder (self->chi_view, why);
}

/* "vectors for 12,345 of 16,000 words (77 %)": the words of the training
 * vocabulary whose pre-trained vector the run's embedding tables start
 * from (what `caml train` prints), digits grouped as the weight count is;
 * NULL when there are none (or a weights file replaced them). */
static char *
word_vector_coverage (CamlWindow *self)
{
  int words = 0;
  int found = self->run != NULL ? caml_run_get_word_vectors (self->run, &words) : 0;

  if (found <= 0 || words <= 0)
    return NULL;
  /* Whole percents: never 100 when a word has none. */
  int percent = CLAMP ((int) lround (100.0 * found / words), 1, found < words ? 99 : 100);
  return g_strdup_printf ("vectors for %'d of %'d words (%d %%)", found, words, percent);
}

static char *
format_duration (double s)
{
  if (!isfinite (s) || s < 0)
    return g_strdup ("—");
  if (s < 0.1)
    return g_strdup_printf ("%.0f ms", 1000 * s);   /* not "0.0 s" for a short run */
  if (s < 10)
    return g_strdup_printf ("%.1f s", s);
  if (s < 3600)
    return g_strdup_printf ("%d:%02d", (int) s / 60, (int) s % 60);
  return g_strdup_printf ("%d:%02d:%02d", (int) s / 3600, ((int) s / 60) % 60, (int) s % 60);
}

/* The status label: the run's state, or for a while a notice. */
static void
set_status (CamlWindow *self, const char *text)
{
  if (text != self->status)   /* its own text: keep it (a quiet build) */
    {
      g_free (self->status);
      self->status = g_strdup (text != NULL ? text : "");
    }
  const char *shown = self->notice != NULL ? self->notice
                      : self->status != NULL ? self->status : "";
  gtk_label_set_text (self->status_label, shown);
  /* All of it, when the label is too narrow for it. */
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->status_label), *shown != '\0' ? shown : NULL);
}

static void
update_progress_widgets (CamlWindow *self)
{
  const CamlProgress *p = &self->progress;
  static const char *const state_names[] = {
    "ready", "training", "paused", "finished", "stopped", "failed",
  };

  /* No spinner for a build that is still quiet (see prepare_run), nor for
   * the parts of another layer (a moment, usually). */
  gboolean loading = (self->data_loading || self->run_building || self->files_loading
                      || self->weights_loading || self->baseline_building)
                     && self->build_source == 0;
  gtk_widget_set_visible (GTK_WIDGET (self->load_spinner), loading);
  gtk_spinner_set_spinning (self->load_spinner, loading);
  if (self->run == NULL && self->build_source != 0)
    {
      /* A quiet build (prepare_run): the bar and status stay as they were;
       * a notice still shows. */
      set_status (self, self->status);
      return;
    }
  if (self->run == NULL)
    {
      g_autofree char *text = self->files_loading ? choice_loading_text (self)
                              : self->data_loading ? data_loading_text (self, TRUE)
                              : self->run_building ? g_strdup ("building the model…")
                              : g_strdup ("no model to train");
      gtk_progress_bar_set_fraction (self->progress_bar, 0);
      gtk_progress_bar_set_text (self->progress_bar, text);
      set_status (self, self->pending != PENDING_NONE ? "starts when the model is built" : "");
      return;
    }
  long total = p->total_steps > 0 ? p->total_steps : self->exp->steps;
  CamlDivergence d;
  /* A divergence says where it happened, not only where the weights are
   * now ("failed — step 0" read as if nothing had run). */
  g_autofree char *text = self->run_started && p->state == CAML_TRAINER_FAILED
                          && caml_run_get_divergence (self->run, &d)
                          ? g_strdup_printf ("diverged at step %ld — back at step %ld of %ld",
                                             d.step, p->step, total)
                          : g_strdup_printf ("%s — step %ld of %ld", state_names[p->state],
                                             p->step, total);
  gtk_progress_bar_set_fraction (self->progress_bar, total > 0 ? (double) p->step / total : 0);
  gtk_progress_bar_set_text (self->progress_bar, text);

  g_autofree char *elapsed = format_duration (p->seconds);
  g_autofree char *left = format_duration (p->steps_per_second > 0
                                           ? (total - p->step) / p->steps_per_second
                                           : NAN);
  g_autofree char *status = NULL;
  if (p->state == CAML_TRAINER_RUNNING)
    status = g_strdup_printf ("%.0f steps/s · %s left · loss %.4g", p->steps_per_second,
                              left, p->last_loss);
  else if (p->n_rows > 0)
    {
      /* the last evaluation's figure, and its step when the run is past it */
      g_autofree char *at = p->last_row.step != p->step
                            ? g_strdup_printf (" at step %ld", p->last_row.step)
                            : g_strdup ("");
      status = g_strdup_printf ("%s %s %.4g%s · %s, %.0f steps/s", held_out (self),
                                p->classification ? "accuracy" : "MSE",
                                p->last_row.test_metric, at, elapsed,
                                p->seconds > 0 ? p->step / p->seconds : 0.0);
    }
  else
    {
      g_autofree char *vectors = word_vector_coverage (self);
      status = g_strdup_printf ("%'zu weights%s%s", caml_run_get_n_weights (self->run),
                                vectors != NULL ? " · " : "", vectors != NULL ? vectors : "");
    }
  if (self->files_loading || self->weights_loading)
    {
      /* The run shown stays until what it waits for is there. */
      g_autofree char *what = self->files_loading ? choice_loading_text (self)
                                                  : g_strdup ("loading weights…");
      g_free (status);
      status = self->pending != PENDING_NONE ? g_strdup_printf ("%s then training", what)
                                             : g_steal_pointer (&what);
    }
  else if (self->run_started && !run_active (self) && baseline_active (self))
    {
      /* The run has ended; its baseline trains on, alone, to its step. */
      CamlProgress bp;
      caml_run_get_progress (self->baseline, &bp);
      g_autofree char *base_text = g_strdup_printf ("baseline — step %ld of %ld", bp.step,
                                                    bp.total_steps);
      g_autofree char *base_left = format_duration (bp.steps_per_second > 0
                                                    ? (bp.total_steps - bp.step)
                                                      / bp.steps_per_second : NAN);
      gtk_progress_bar_set_fraction (self->progress_bar, bp.total_steps > 0
                                                         ? (double) bp.step / bp.total_steps : 0);
      gtk_progress_bar_set_text (self->progress_bar, base_text);
      g_free (status);
      status = g_strdup_printf ("training the baseline: %.0f steps/s · %s left",
                                bp.steps_per_second, base_left);
    }
  set_status (self, status);
}

static gboolean
end_notice (gpointer data)
{
  CamlWindow *self = data;

  self->notice_source = 0;
  g_clear_pointer (&self->notice, g_free);
  gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), "warning");
  update_progress_widgets (self);
  return G_SOURCE_REMOVE;
}

/* Says something in the status label for NOTICE_MS: as a warning, what
 * the window did with what was typed ("units set to 65536: must be
 * 1…65536"); plainly, that a file was written or read. */
static void
show_notice_full (CamlWindow *self, const char *message, gboolean warning)
{
  /* A warning still showing is not replaced by news. */
  if (!warning && self->notice != NULL
      && gtk_widget_has_css_class (GTK_WIDGET (self->status_label), "warning"))
    return;
  g_free (self->notice);
  self->notice = g_strdup (message);
  g_free (self->last_notice);
  self->last_notice = g_strdup (message);
  if (warning)
    gtk_widget_add_css_class (GTK_WIDGET (self->status_label), "warning");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), "warning");
  g_clear_handle_id (&self->notice_source, g_source_remove);
  self->notice_source = g_timeout_add_full (G_PRIORITY_DEFAULT, NOTICE_MS, end_notice,
                                            g_object_ref (self), g_object_unref);
  update_progress_widgets (self);
}

/* News in the status label is old once the user acts on the run (it said
 * "Resume (F5)", say, and Resume was pressed); a warning stays its time. */
static void
end_news (CamlWindow *self)
{
  if (self->notice != NULL
      && !gtk_widget_has_css_class (GTK_WIDGET (self->status_label), "warning"))
    {
      g_clear_handle_id (&self->notice_source, g_source_remove);
      g_clear_pointer (&self->notice, g_free);
      update_progress_widgets (self);
    }
}

static void
show_notice (CamlWindow *self, const char *message)
{
  show_notice_full (self, message, TRUE);
}

/* "Saved the weights to surface.weights": what, and the file's name. */
static void
show_done (CamlWindow *self, const char *what, const char *path)
{
  g_autofree char *name = g_filename_display_basename (path);
  g_autofree char *text = g_strdup_printf ("%s %s", what, name);
  show_notice_full (self, text, FALSE);
}

/* Once per Load Weights or Open Run (the run is installed). A state that
 * did not load is said whenever it happens: the run starts afresh. */
static void
announce_loaded (CamlWindow *self, const char *weights, const char *state,
                 const char *state_error)
{
  g_autofree char *run_dir = g_steal_pointer (&self->opening_run);
  g_autofree char *dir_name = run_dir != NULL ? g_filename_display_basename (run_dir) : NULL;
  CamlProgress p;

  /* A load that worked: the error of one that failed before is old news. */
  if (state_error == NULL && self->announce_load)
    clear_error (self);
  if (state_error != NULL)
    {
      g_autofree char *text = g_strdup_printf ("The run's state was not loaded, so training "
                                               "starts at step 0 from its weights: %s",
                                               state_error);
      caml_window_show_error (self, text);
    }
  else if (self->announce_load && state != NULL && self->run != NULL)
    {
      caml_run_get_progress (self->run, &p);
      g_autofree char *text =
        p.step < p.total_steps
        ? g_strdup_printf ("Opened run %s at step %ld: Train goes on to %ld",
                           dir_name != NULL ? dir_name : "", p.step, p.total_steps)
        : g_strdup_printf ("Opened run %s at step %ld, its last: raise Steps to go on",
                           dir_name != NULL ? dir_name : "", p.step);
      show_notice_full (self, text, FALSE);
    }
  else if (self->announce_load && run_dir != NULL)
    {
      g_autofree char *text =
        g_strdup_printf ("Opened the weights of %s: it has no trainer.state (earlier "
                         "versions kept none for a run that diverged), so training starts "
                         "at step 0", dir_name);
      show_notice_full (self, text, FALSE);
    }
  else if (self->announce_load)
    show_done (self, "Loaded the weights from", weights);
  self->announce_load = FALSE;
}

static void
on_value_corrected (const char *message, gpointer user_data)
{
  show_notice (CAML_WINDOW (user_data), message);
}

static void
on_option_corrected (CamlModelEditor *editor, const char *message, CamlWindow *self)
{
  show_notice (self, message);
}

/* The run diverged: the banner says where (the engine's message names the
 * step, and the layer when a gradient or weight overflowed) and offers to
 * go on from the last evaluation at a tenth of the learning rate. */
static void
show_divergence (CamlWindow *self)
{
  g_autoptr (GError) error = caml_run_get_error (self->run);
  double lr = caml_run_get_lr (self->run) / 10;
  long from = caml_run_get_checkpoint_step (self->run);
  CamlDivergence d;
  gboolean further = caml_run_get_divergence (self->run, &d) && d.rolled_back_to != from;
  /* Two steps can be named: where the weights are (the last finite ones)
   * and where Continue goes on from (the last evaluation in bounds). */
  g_autofree char *text =
    further
    ? g_strdup_printf ("Training diverged: %s. Continue goes back further, to step %ld — the "
                       "last evaluation whose loss was in bounds — with the learning rate ÷ 10; "
                       "or change the model or the optimizer and Train again.",
                       error != NULL ? error->message : "unknown error", from)
    : g_strdup_printf ("Training diverged: %s. Continue from there with the learning rate ÷ 10, "
                       "or change the model or the optimizer and Train again.",
                       error != NULL ? error->message : "unknown error");
  g_autofree char *shown = caml_format_positive (lr);   /* as the field shows it */
  g_autofree char *label = g_strdup_printf ("_Continue at lr %s", shown);

  caml_window_show_error (self, text);
  gtk_button_set_label (self->banner_button, label);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->banner_button), "win.continue-diverged");
  gtk_widget_set_visible (GTK_WIDGET (self->banner_button), TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->banner_revealer), "diverged");
}

/* Main thread: copy the snapshot and rebuild what changed. */
static void
update_from_run (CamlWindow *self)
{
  CamlProgress p;
  CamlTrainerState old_state = self->progress.state;

  if (self->run == NULL)
    return;
  caml_run_get_progress (self->run, &p);
  if (!self->run_started)
    p.state = CAML_TRAINER_IDLE;

  if (p.step != self->n_steps || p.n_rows != self->n_rows || self->losses == NULL)
    {
      g_free (self->rows);
      g_free (self->losses);
      self->rows = caml_run_copy_rows (self->run, &self->n_rows);
      self->losses = caml_run_copy_losses (self->run, &self->n_steps);
      self->progress = p;
      rebuild_loss_plot (self);
    }
  self->progress = p;

  if (self->baseline != NULL)
    {
      CamlProgress bp;
      caml_run_get_progress (self->baseline, &bp);
      if (bp.step != self->base_n_steps || bp.n_rows != self->base_n_rows)
        {
          g_free (self->base_rows);
          g_free (self->base_losses);
          self->base_rows = caml_run_copy_rows (self->baseline, &self->base_n_rows);
          self->base_losses = caml_run_copy_losses (self->baseline, &self->base_n_steps);
          rebuild_loss_plot (self);
        }
      if (bp.state == CAML_TRAINER_FAILED && self->base_state != CAML_TRAINER_FAILED)
        {
          g_autoptr (GError) error = caml_run_get_error (self->baseline);
          g_autofree char *text = g_strdup_printf ("The baseline diverged: %s",
                                                   error != NULL ? error->message : "?");
          caml_window_show_error (self, text);
        }
      gboolean base_changed = bp.state != self->base_state;
      self->base_state = bp.state;
      if (base_changed)
        update_actions (self);   /* Stop for a baseline training alone */
    }

  if (caml_run_has_sigma (self->run))
    {
      guint64 version;
      int n = caml_run_get_sigma_count (self->run, &version);
      if (version != self->sigma_version)
        {
          self->sigma_version = version;
          self->n_sigma = n;
          rebuild_sigma_plots (self, TRUE);
        }
    }

  if (caml_run_get_words_layer (self->run) >= 0)
    {
      if (self->word_chi == NULL)
        self->word_chi = g_new0 (float, MAX (caml_vocab_size (caml_run_get_train (self->run)->vocab),
                                             1));
      int n_samples = 0;
      caml_run_get_word_samples (self->run, &n_samples);
      if (self->word_probs == NULL)
        self->word_probs = g_new (float, MAX (n_samples, 1));
      if (self->token_chi == NULL && caml_run_words_per_position (self->run))
        self->token_chi = g_new (float, (size_t) MAX (n_samples, 1) * CAML_RUN_WORDS_SHOWN);
      if (caml_run_copy_words (self->run, &self->words_version, self->word_chi, NULL,
                               self->word_probs, self->token_chi)
          && g_str_equal (gtk_stack_get_visible_child_name (self->plots_stack), "words"))
        rebuild_words_plots (self);
    }

  if (caml_run_has_surface (self->run))
    {
      size_t cells = (size_t) CAML_FIGURE_GRID * CAML_FIGURE_GRID;
      if (self->fit == NULL)
        {
          self->fit = g_new0 (float, cells);
          self->chi = g_new0 (float, MAX (caml_run_get_n_chi (self->run), 1) * cells);
          self->default_part = g_new0 (float, cells);
          self->value_part = g_new0 (float, cells);
        }
      if (caml_run_copy_surface (self->run, &self->surface_version, self->fit, self->chi,
                                 self->default_part, self->value_part, &self->parts_layer))
        rebuild_surface_plots (self);
    }

  /* Each failure once, a continued run's too (which may have failed again
   * before the window's first look at it). */
  if (p.state == CAML_TRAINER_FAILED && !self->failure_shown)
    {
      self->failure_shown = TRUE;
      show_divergence (self);
    }
  if (p.state != old_state)
    {
      /* What the empty plots say follows the state: "diverged at step 2",
       * "stopped before the first evaluation". */
      if (self->n_steps == 0)
        rebuild_loss_plot (self);
      if (self->n_rows == 0 && !(self->prev_classification && self->prev_n_rows > 0))
        clear_accuracy (self);
    }
  update_progress_widgets (self);
  if (p.state != old_state)
    update_actions (self);
}

static gboolean
on_update (gpointer data)
{
  CamlWindow *self = data;
  gint64 now = g_get_monotonic_time ();

  gboolean busy = self->progress.state == CAML_TRAINER_RUNNING
                  || (self->baseline != NULL && !caml_window_baseline_ended (self));
  if (self->run != NULL && busy && now - self->last_update_us < UPDATE_INTERVAL_US)
    {
      /* Too soon after the last update: come back later, still the one
       * pending source. */
      guint delay = (guint) ((UPDATE_INTERVAL_US - (now - self->last_update_us)) / 1000) + 1;
      g_timeout_add_full (G_PRIORITY_DEFAULT_IDLE, delay, on_update, g_object_ref (self),
                          g_object_unref);
      return G_SOURCE_REMOVE;
    }
  /* Clear first: a report arriving while we copy schedules the next update. */
  g_atomic_int_set (&self->update_pending, 0);
  self->last_update_us = now;
  update_from_run (self);
  return G_SOURCE_REMOVE;
}

/* What the plots say while there is no run. */
static void
show_waiting (CamlWindow *self, const char *why)
{
  /* In the layout the run will have: the surface and χ for the plane's data
   * sets, else the accuracy across (it showed the surface panels for text,
   * and a reloaded run's accuracy curve beside the waiting loss plot). */
  gboolean surface = self->exp->data.kind == CAML_DATA_XOR
                     || self->exp->data.kind == CAML_DATA_SURFACE;
  gtk_widget_set_visible (GTK_WIDGET (self->surface_view), surface);
  gtk_widget_set_visible (GTK_WIDGET (self->chi_view), surface);
  gtk_widget_set_visible (GTK_WIDGET (self->accuracy_view), !surface);
  gtk_widget_set_visible (GTK_WIDGET (self->sigma_box), FALSE);
  place_accuracy (self, FALSE);
  show_surface_placeholders (self, why);
  caml_plot_view_clear (self->accuracy_view);
  caml_plot_view_set_placeholder (self->accuracy_view, why);
  caml_plot_view_clear (self->loss_view);
  caml_plot_view_set_placeholder (self->loss_view, why);
}

static void do_pending (CamlWindow *self);

/* The parts of the CA-NN layer chosen, when they are not the ones sampled:
 * a training run's thread samples them at its next report; otherwise a
 * worker does, on a copy of the weights (for a big model, seconds). */
static void
sample_parts (CamlWindow *self)
{
  if (self->run == NULL || !caml_run_parts_pending (self->run))
    return;
  CamlProgress p;
  caml_run_get_progress (self->run, &p);
  if (self->run_started && p.state == CAML_TRAINER_RUNNING)
    return;
  start_job (self, JOB_PARTS);
}

/* The accuracy plot before the run's first evaluation: when it comes, or
 * why it will not (a run stopped or diverged before it: a stopped run is
 * not evaluated). */
static void
clear_accuracy (CamlWindow *self)
{
  caml_plot_view_clear (self->accuracy_view);
  if (self->run == NULL)
    return;
  /* The first evaluation: every eval_every steps, or after the last. */
  const CamlExperiment *exp = caml_run_get_experiment (self->run);
  int first = exp->eval_every > 0 ? MIN (exp->eval_every, exp->steps) : exp->steps;
  CamlTrainerState state = self->run_started ? self->progress.state : CAML_TRAINER_IDLE;
  g_autofree char *when =
    state == CAML_TRAINER_STOPPED
    ? g_strdup_printf ("stopped at step %ld, before the first evaluation (step %d)",
                       self->progress.step, first)
    : state == CAML_TRAINER_FAILED
    ? g_strdup_printf ("diverged before the first evaluation (step %d)", first)
    : g_strdup_printf ("%s accuracy appears at step %d", held_out (self), first);
  caml_plot_view_set_placeholder (self->accuracy_view, when);
}

/* A run whose embedding tables start from word vectors says how many
 * words had one, as `caml train` does: in the status line while it is
 * ready (word_vector_coverage), and in a notice once per data and count,
 * which a rebuild after each edit does not repeat and a Train pressed
 * during the build does not cover at once. */
static void
announce_word_vectors (CamlWindow *self)
{
  g_autofree char *coverage = word_vector_coverage (self);
  int found = caml_run_get_word_vectors (self->run, NULL);

  if (coverage == NULL
      || (found == self->vectors_told && self->data_serial == self->vectors_told_serial))
    return;
  self->vectors_told = found;
  self->vectors_told_serial = self->data_serial;
  g_autofree char *text = g_strdup_printf ("Pre-trained %s", coverage);
  show_notice_full (self, text, FALSE);
}

/* Takes ownership of run and shows its untrained surface or σ-maps. */
static void
install_run (CamlWindow *self, CamlRun *run)
{
  self->run = run;
  self->run_building = FALSE;
  g_clear_handle_id (&self->build_source, g_source_remove);
  clear_history (self);
  clear_accuracy (self);
  rebuild_loss_plot (self);   /* "Press Train", or the previous run's curves */
  gboolean surface = caml_run_has_surface (self->run);
  /* The first page's name says what it shows for this model and data. */
  gtk_button_set_label (GTK_BUTTON (self->main_toggle),
                        surface ? "Surface and χ"
                        : caml_run_has_sigma (self->run) ? "σ-Maps and Accuracy"
                        : "Test Accuracy");
  gtk_widget_set_visible (GTK_WIDGET (self->surface_view), surface);
  gtk_widget_set_visible (GTK_WIDGET (self->chi_view), surface);
  gtk_widget_set_visible (GTK_WIDGET (self->accuracy_view), !surface);
  gtk_widget_set_visible (GTK_WIDGET (self->sigma_box), caml_run_has_sigma (self->run));
  place_accuracy (self, caml_run_has_sigma (self->run));
  caml_plot_view_clear (self->sigma_auc_view);
  caml_plot_view_set_placeholder (self->sigma_auc_view, "AUC of χ: digit vs background");
  self->sigma_version = 0;
  self->n_sigma = 0;
  self->sigma_shown = -1;
  self->sigma_follow = TRUE;
  if (!surface)
    show_surface_placeholders (self, "surfaces are drawn for 2-D → 1-D regression");
  else
    {
      int parts = caml_run_set_parts_layer (self->run,
                                            caml_model_editor_get_selected (self->model_editor));
      set_chi_columns (self, caml_run_get_n_chi (self->run), parts >= 0);
      sample_parts (self);   /* when another layer was chosen during the build */
    }
  self->last_update_us = 0;
  update_from_run (self);
  update_actions (self);
  announce_word_vectors (self);
  do_pending (self);
}

/* A build on built-in data that has taken BUILD_QUIET_MS: say so. */
static gboolean
end_build_quiet (gpointer data)
{
  CamlWindow *self = data;

  self->build_source = 0;
  if (self->run == NULL && self->data_loading)
    {
      g_autofree char *text = data_loading_text (self, FALSE);
      show_data_loading (self);
      show_waiting (self, text);
      update_progress_widgets (self);
      update_actions (self);
    }
  else if (self->run == NULL && self->run_building)
    {
      show_waiting (self, "Building the model…");
      update_progress_widgets (self);
    }
  else if (self->files_loading)
    update_progress_widgets (self);   /* the spinner: data chosen are still being made */
  return G_SOURCE_REMOVE;
}

/* A build on built-in data begins (or built-in data chosen are made):
 * nothing changes in the plots, progress bar and status for BUILD_QUIET_MS
 * (from the start of the data or the model, whichever came first). */
static void
start_build_quiet (CamlWindow *self)
{
  if (self->build_source == 0)
    self->build_source = g_timeout_add_full (G_PRIORITY_DEFAULT, BUILD_QUIET_MS, end_build_quiet,
                                             g_object_ref (self), g_object_unref);
}

/* Builds a run from exp, when the model and data allow it, on a worker
 * thread; the run arrives later (install_run shows its untrained surface). */
static void
prepare_run (CamlWindow *self)
{
  if (self->run != NULL)
    return;
  gtk_widget_set_visible (GTK_WIDGET (self->sigma_box), FALSE);   /* until a run has σ-maps */
  /* Built, and given the weights asked for, on a worker thread: even on
   * built-in data a big model takes seconds (its untrained surface is a
   * forward pass over the grid), and the largest surface grid takes 93 ms
   * to make. A build on built-in data that is usually done within a frame
   * or two keeps the plots shown until then, so that editing does not
   * flash "Building the model…" at every change. */
  gboolean quiet = !kind_from_files (self->exp->data.kind) && self->pending_weights == NULL;
  request_data (self);
  if (self->data_loading || self->run_building)
    {
      if (!quiet)   /* weights asked for: the build says so at once */
        g_clear_handle_id (&self->build_source, g_source_remove);
      if (self->build_source == 0)   /* a quiet build keeps the plots */
        {
          g_autofree char *text = self->data_loading ? data_loading_text (self, FALSE)
                                                     : g_strdup ("Building the model…");
          show_waiting (self, text);
        }
      update_progress_widgets (self);
      update_actions (self);
      return;
    }
  if (self->data == NULL)
    {
      const char *fetch = caml_data_source_fetch_name (self->exp->data.kind);
      g_autofree char *why = self->data_error != NULL && fetch != NULL
                             && strstr (self->data_error, "not fetched") != NULL
                             ? g_strdup_printf ("%s is not fetched: datasets/fetch %s gets it",
                                                data_title (self), fetch)
                             : g_strdup ("the data could not be read (see above)");
      show_waiting (self, why);
      update_progress_widgets (self);
      update_actions (self);
      return;
    }
  if (!caml_model_editor_is_valid (self->model_editor))
    {
      /* Train pressed while the data loaded: there is nothing to train
       * (weights to load stay pending until the model fits). */
      self->pending = PENDING_NONE;
      show_surface_placeholders (self, "fix the model to see its surface");
      caml_plot_view_clear (self->loss_view);
      caml_plot_view_set_placeholder (self->loss_view, "the model does not fit the data yet");
      caml_plot_view_clear (self->accuracy_view);   /* no curves of a run left */
      caml_plot_view_set_placeholder (self->accuracy_view, "the model does not fit the data yet");
      update_progress_widgets (self);
      update_actions (self);
      return;
    }
  if (self->build_error != NULL)
    {
      show_waiting (self, "the model cannot be built (see above)");
      update_progress_widgets (self);
      update_actions (self);
      return;
    }
  if (quiet)
    start_build_quiet (self);
  else
    g_clear_handle_id (&self->build_source, g_source_remove);
  start_job (self, JOB_RUN);
  if (!quiet)
    show_waiting (self, "Building the model…");
  update_progress_widgets (self);
  update_actions (self);
}

/* ------------------------------------------------------------------ jobs */

/* Jobs under way in every window (tests wait for them). */
static gint jobs_in_flight;

typedef struct {
  JobKind         kind;
  CamlWindow     *window;       /* the run's notify data; never touched on the worker */
  CamlExperiment *exp;          /* a copy: what to load and build */
  char           *files[4];     /* JOB_FILES: the files chosen (IDX: in any order; text: */
  int             n_files;      /* training, test), or none: those exp names */
  gboolean        alone;        /* JOB_BASELINE: for a run that has ended, to its steps */
  char           *weights;      /* a weights file to load into the run built (a copy) */
  char           *state;        /* … and a trainer.state to go on from, or NULL */
  guint           weights_serial;
  guint           data_serial;
  guint           files_serial;   /* JOB_FILES: which choice of files */
  guint           run_serial;
  GApplication   *app;          /* held while the job runs, so the process waits for it */
  /* results */
  CamlRunData    *data;         /* JOB_RUN: given; others: loaded */
  CamlRun        *run;
  char           *data_error;
  char           *run_error;
  char           *weights_error;  /* the run is built, its weights could not be loaded */
  char           *state_error;    /* … its weights loaded, its state not: it starts afresh */
  int             parts_layer;    /* JOB_RUN…: the CA-NN whose parts to sample; JOB_PARTS: */
  float          *w;              /* the weights of the run (a copy) */
  size_t          n_weights;
  int             grid;
  float          *parts_default;     /* results: (grid × grid) each */
  float          *parts_value;
} Job;

/* Main thread, when the job's results have been used (or dropped): the
 * task itself may be finalised on the worker thread, so nothing that
 * belongs to the main thread waits for job_free. */
static void
job_release (Job *job)
{
  g_clear_pointer (&job->run, caml_run_free);   /* a run never installed: not started */
  g_clear_pointer (&job->data, caml_run_data_unref);
  if (job->app != NULL)
    {
      g_application_release (job->app);
      g_clear_object (&job->app);
    }
}

static void
job_free (gpointer p)
{
  Job *job = p;
  job_release (job);   /* nothing left when the job was done */
  caml_experiment_free (job->exp);
  for (int i = 0; i < 4; i++)
    g_free (job->files[i]);
  g_free (job->data_error);
  g_free (job->run_error);
  g_free (job->weights);
  g_free (job->weights_error);
  g_free (job->state);
  g_free (job->state_error);
  g_free (job->w);
  g_free (job->parts_default);
  g_free (job->parts_value);
  g_free (job);
}

/* Worker thread: engine calls only, on the job's own copies. The run is
 * built with the window as its notify data; nothing notifies before its
 * trainer starts, which happens on the main thread. */
static void
job_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Job *job = task_data;
  g_autoptr (GError) error = NULL;

  if (job->kind == JOB_FILES && job->exp->data.kind == CAML_DATA_IDX)
    {
      char *ordered[4];
      if (!caml_data_source_order_idx ((const char *const *) job->files, job->n_files, ordered,
                                       &error))
        {
          job->data_error = g_strdup (error->message);
          g_task_return_boolean (task, TRUE);
          return;
        }
      for (int i = 0; i < 4; i++)
        {
          g_free (job->exp->data.idx_paths[i]);
          job->exp->data.idx_paths[i] = ordered[i];
        }
    }
  if (job->kind == JOB_PARTS)
    {
      /* The layers only, with the run's weights: a model of the job's own. */
      CamlModel *model = caml_experiment_build_model (job->exp, &job->data->train->x_shape,
                                                      &error);
      if (model != NULL && model->n_weights == job->n_weights)
        {
          size_t cells = (size_t) job->grid * job->grid;
          memcpy (model->w, job->w, job->n_weights * sizeof (float));
          job->parts_default = g_new (float, cells);
          job->parts_value = g_new (float, cells);
          if (!caml_model_sample_grid_parts (model, job->exp->plot_domain, job->grid, job->grid,
                                             job->parts_layer, job->parts_default,
                                             job->parts_value, NULL))
            g_clear_pointer (&job->parts_default, g_free);
        }
      caml_model_free (model);
      g_task_return_boolean (task, TRUE);
      return;
    }
  if (job->kind != JOB_RUN && job->kind != JOB_WEIGHTS && job->kind != JOB_BASELINE)
    {
      gint64 start = g_get_monotonic_time ();
      job->data = caml_run_data_load (job->exp, &error);
      g_debug ("loaded the %s data in %.2f s", caml_data_kind_names[job->exp->data.kind],
               (g_get_monotonic_time () - start) / 1e6);
      if (job->data == NULL)
        {
          job->data_error = g_strdup (error->message);
          g_task_return_boolean (task, TRUE);
          return;
        }
    }
  /* Every job but JOB_FILES (and JOB_PARTS, above) builds a run. */
  if (job->kind != JOB_FILES && !g_cancellable_is_cancelled (cancellable))
    {
      /* The baseline's surface is never shown: the smallest grid. */
      int grid = job->kind == JOB_BASELINE ? 2 : CAML_FIGURE_GRID;
      gboolean weights = job->weights != NULL && job->kind != JOB_BASELINE;
      /* Weights from a file replace the word vectors: they are read only
       * if the weights cannot be loaded and the run stays as built. */
      job->run = (weights ? caml_run_new_for_weights : caml_run_new)
        (job->exp, job->data, grid, job->parts_layer, on_run_notify, job->window, &error);
      if (job->run == NULL)
        job->run_error = g_strdup (error->message);
      else if (job->kind == JOB_BASELINE)
        caml_run_set_keep_checkpoints (job->run, FALSE);   /* never continued */
      /* Its trainer has not started: the weights load on this thread. */
      else if (weights && !caml_run_load_weights (job->run, job->weights, &error))
        {
          job->weights_error = g_strdup (error->message);
          g_clear_error (&error);
          g_clear_pointer (&job->run, caml_run_free);
          /* JOB_WEIGHTS: the current run stays, nothing to build */
          if (job->kind != JOB_WEIGHTS && !g_cancellable_is_cancelled (cancellable)
              && !(job->run = caml_run_new (job->exp, job->data, grid, job->parts_layer,
                                            on_run_notify, job->window, &error)))
            job->run_error = g_strdup (error->message);
        }
      else if (job->weights != NULL && job->state != NULL
               && !caml_run_load_state (job->run, job->state, &error))
        job->state_error = g_strdup (error->message);   /* the run is as built */
    }
  g_task_return_boolean (task, TRUE);
}

static void choose_data (CamlWindow *self, CamlDataKind kind, const char *const *files,
                         int n_files);

/* Data chosen that loaded: they become the data (their kind and the paths
 * of chosen files, from the job's copy), and only now does the run go —
 * with the previous run, whose losses were on other data. */
static void
commit_files (CamlWindow *self, Job *job)
{
  CamlDataConfig *data = &self->exp->data;
  const CamlDataConfig *chosen = &job->exp->data;

  if (chosen->kind == CAML_DATA_IDX)
    for (int i = 0; i < 4; i++)
      {
        g_free (data->idx_paths[i]);
        data->idx_paths[i] = g_strdup (chosen->idx_paths[i]);
      }
  else if (chosen->kind == CAML_DATA_TEXT)
    for (int i = 0; i < 2; i++)
      {
        g_free (data->text_paths[i]);
        data->text_paths[i] = g_strdup (chosen->text_paths[i]);
      }
  data->kind = chosen->kind;
  discard_run (self);
  forget_previous (self);
  invalidate_data (self);
  install_data (self, g_steal_pointer (&job->data));
  adapt_to_data (self);
  sync_data_choice (self);
  clear_error (self);
  mark_dirty (self);
  prepare_run (self);
}

static void job_done (CamlWindow *self, Job *job);
static void install_baseline (CamlWindow *self, Job *job);

/* Main thread, when a job has ended. Results for a data config or a run that
 * has changed since are dropped. */
static void
on_job_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (CamlWindow) self = user_data;   /* the task's reference (start_job) */
  Job *job = g_task_get_task_data (G_TASK (result));

  g_atomic_int_add (&jobs_in_flight, -1);
  if (self->cancellable != NULL && !g_cancellable_is_cancelled (self->cancellable))
    job_done (self, job);   /* else the window is gone */
  job_release (job);
}

static void
job_done (CamlWindow *self, Job *job)
{
  if (job->kind == JOB_FILES)
    {
      /* Other data were chosen meanwhile, or those in use again. */
      if (job->files_serial != self->files_serial)
        return;
      self->files_loading = FALSE;
      /* Reload Data pressed meanwhile, or a new seed that the data in use
       * follow, read the data in use again, not these: this read was under
       * way and counts (a second one of a slow set such as IMDB would
       * double the wait). A new seed that these data follow makes them
       * again, from the experiment as it is now (Train pressed meanwhile
       * still waits). */
      if (data_follow_seed (job->exp) && job->exp->seed != self->exp->seed)
        {
          choose_data (self, job->exp->data.kind, (const char *const *) job->files,
                       job->n_files);
          return;
        }
      /* Nothing changes when they did not load — and Train pressed
       * meanwhile does not start on the data in use; the engine's message
       * says why. Nor when the run went on meanwhile (Resume after Steps
       * were raised, Continue after a divergence): the data stay as they
       * are while a run trains or is paused. */
      const char *why = job->data == NULL ? job->data_error
                        : run_active (self) ? "the run went on while they loaded (choose them "
                                              "again once it has ended)"
                        : NULL;
      if (why != NULL)
        refuse_choice (self, job->exp->data.kind, why);
      else
        commit_files (self, job);
      update_progress_widgets (self);
      update_actions (self);
      return;
    }

  if (job->kind == JOB_PARTS)
    {
      self->parts_sampling--;
      if (job->run_serial == self->run_serial && self->run != NULL && job->parts_default != NULL
          && caml_run_put_parts (self->run, job->parts_layer, job->parts_default,
                                 job->parts_value))
        update_from_run (self);
      update_progress_widgets (self);
      return;
    }

  if (job->kind == JOB_BASELINE)
    {
      if (job->run_serial == self->run_serial && self->baseline_building)
        install_baseline (self, job);
      update_progress_widgets (self);
      update_actions (self);
      return;
    }

  /* Its weights are still the ones asked for: this job uses the request up. */
  gboolean weights_current = job->weights != NULL && job->weights_serial == self->weights_serial;

  if (job->kind == JOB_WEIGHTS)
    {
      if (job->run_serial == self->run_serial && self->run != NULL && weights_current)
        {
          if (job->weights_error != NULL || job->run == NULL)
            {
              /* A failed load changes nothing: the current run stays, and
               * Train pressed meanwhile is not started from other weights. */
              set_pending_load (self, NULL, NULL);
              self->pending = PENDING_NONE;
              self->announce_load = FALSE;
              g_clear_pointer (&self->opening_run, g_free);
              caml_window_show_error (self, job->weights_error != NULL ? job->weights_error
                                      : job->run_error != NULL ? job->run_error
                                      : "the model could not be built");
            }
          else
            {
              set_pending_load (self, NULL, NULL);
              discard_run (self);
              g_free (self->loaded_weights);
              self->loaded_weights = g_strdup (job->weights);
              self->loaded_state = job->state_error == NULL ? g_strdup (job->state) : NULL;
              install_run (self, g_steal_pointer (&job->run));
              announce_loaded (self, job->weights, job->state, job->state_error);
            }
        }
      /* else: the run or the weights asked for changed meanwhile (and
       * weights_loading was cleared then); what is pending is, or will be,
       * built by another job. */
      update_progress_widgets (self);
      update_actions (self);
      return;
    }

  if (job->kind == JOB_DATA)
    {
      if (job->data_serial != self->data_serial)
        return;
      if (job->data == NULL)
        {
          set_data_error (self, job->data_error);
          self->run_building = FALSE;
          g_clear_handle_id (&self->build_source, g_source_remove);   /* nothing to be quiet for */
          if (!self->files_loading)   /* else Train waits for the data chosen */
            self->pending = PENDING_NONE;
          show_waiting (self, "the data could not be read");
          update_progress_widgets (self);
          update_actions (self);
          return;
        }
      install_data (self, g_steal_pointer (&job->data));
    }

  if (job->run_serial != self->run_serial || self->run != NULL)
    {
      /* The model changed while this one was built: build the current one
       * (weights asked for stay pending in the window). */
      if (self->run == NULL && !self->run_building)
        prepare_run (self);
      return;
    }
  self->run_building = FALSE;
  if (job->run != NULL && caml_model_editor_is_valid (self->model_editor))
    {
      if (weights_current)
        {
          set_pending_load (self, NULL, NULL);
          g_free (self->loaded_weights);
          self->loaded_weights = job->weights_error == NULL ? g_strdup (job->weights) : NULL;
          g_free (self->loaded_state);
          self->loaded_state = job->weights_error == NULL && job->state_error == NULL
                               ? g_strdup (job->state) : NULL;
          if (job->weights_error != NULL || job->state_error != NULL)
            self->pending = PENDING_NONE;   /* not started from weights not asked for */
        }
      install_run (self, g_steal_pointer (&job->run));
      if (weights_current && job->weights_error != NULL)
        {
          self->announce_load = FALSE;
          g_clear_pointer (&self->opening_run, g_free);
          caml_window_show_error (self, job->weights_error);
        }
      else if (weights_current)
        announce_loaded (self, job->weights, job->state, job->state_error);
    }
  else if (job->run == NULL && job->run_error == NULL)
    prepare_run (self);   /* not built yet (the data came first): build it now */
  else
    {
      /* weights that failed to load, then a build without them that failed
       * too: both are said, the weights first */
      g_autofree char *both = weights_current && job->weights_error != NULL
                              && job->run_error != NULL
                              ? g_strdup_printf ("%s; and without them: %s", job->weights_error,
                                                 job->run_error)
                              : NULL;
      if (weights_current && job->weights_error != NULL)
        {
          self->announce_load = FALSE;
          g_clear_pointer (&self->opening_run, g_free);
        }
      if (job->run_error != NULL && caml_model_editor_is_valid (self->model_editor))
        caml_window_show_error (self, both != NULL ? both : job->run_error);
      /* Not built again (it would fail again) until the experiment changes. */
      g_free (self->build_error);
      self->build_error = g_strdup (job->run_error != NULL ? job->run_error
                                                           : "the model could not be built");
      g_clear_handle_id (&self->build_source, g_source_remove);   /* nothing to be quiet for */
      if (!self->files_loading)   /* else Train waits for the data chosen */
        self->pending = PENDING_NONE;
      set_pending_load (self, NULL, NULL);
      prepare_run (self);   /* shows why there is no run */
    }
  update_progress_widgets (self);
}

/* A job on a copy of exp, as things stand now. */
static Job *
job_new (CamlWindow *self, JobKind kind)
{
  Job *job = g_new0 (Job, 1);
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));

  job->kind = kind;
  job->window = self;
  job->exp = caml_experiment_copy (self->exp);
  job->data_serial = self->data_serial;
  job->run_serial = self->run_serial;
  job->weights = g_strdup (self->pending_weights);
  job->state = g_strdup (self->pending_state);
  job->weights_serial = self->weights_serial;
  job->parts_layer = caml_model_editor_get_selected (self->model_editor);
  if (app != NULL)
    {
      job->app = G_APPLICATION (g_object_ref (app));
      g_application_hold (job->app);
    }
  return job;
}

static void
job_run (CamlWindow *self, Job *job)
{
  g_atomic_int_add (&jobs_in_flight, 1);
  /* The window is the callback's data, released there on the main thread:
   * as the task's source object it would be released with the task's last
   * reference, which the worker may hold — finalizing a closed window on
   * the worker (a crash seen in the GUI tests). */
  GTask *task = g_task_new (NULL, self->cancellable, on_job_done, g_object_ref (self));
  g_task_set_name (task, "caml-window-job");
  g_task_set_task_data (task, job, job_free);
  g_task_run_in_thread (task, job_thread);
  g_object_unref (task);
  update_progress_widgets (self);
}

/* Every job but JOB_FILES (choose_data). */
static void
start_job (CamlWindow *self, JobKind kind)
{
  Job *job = job_new (self, kind);

  switch (kind)
    {
    case JOB_DATA:
      self->data_loading = TRUE;
      self->run_building = TRUE;   /* the run is built too */
      /* Built-in data of the kind shown have the shapes shown: the label
       * and the editor stay as they are (quietly, see prepare_run). */
      if (kind_from_files (self->exp->data.kind) || self->shown_kind != (int) self->exp->data.kind)
        show_data_loading (self);
      break;
    case JOB_RUN:
      job->data = caml_run_data_ref (self->data);
      self->run_building = TRUE;
      break;
    case JOB_WEIGHTS:
      job->data = caml_run_data_ref (self->data);
      self->weights_loading = TRUE;
      break;
    case JOB_BASELINE:
      /* Every CA layer replaced by its plain counterpart, at the learning
       * rate and em_steps the run has now, not those it started with. */
      caml_experiment_free (job->exp);
      job->exp = caml_experiment_make_baseline (caml_run_get_experiment (self->run));
      job->exp->optimizer.lr = caml_run_get_lr (self->run);
      job->exp->optimizer.em_steps = caml_run_get_em_steps (self->run);
      {
        /* A run that has ended: its baseline trains alone, as many steps. */
        CamlProgress p;
        caml_run_get_progress (self->run, &p);
        job->alone = self->run_started && (p.state == CAML_TRAINER_FINISHED
                                           || p.state == CAML_TRAINER_STOPPED);
        if (job->alone)
          job->exp->steps = (int) CLAMP (p.step, 1, G_MAXINT);
      }
      job->data = caml_run_data_ref (self->data);
      g_clear_pointer (&job->weights, g_free);   /* the run's file is not the baseline's */
      g_clear_pointer (&job->state, g_free);
      job->parts_layer = -1;
      self->baseline_building = TRUE;
      break;
    case JOB_PARTS:
      caml_experiment_free (job->exp);
      job->exp = caml_experiment_copy (caml_run_get_experiment (self->run));
      job->data = caml_run_data_ref (caml_run_get_data (self->run));
      g_clear_pointer (&job->weights, g_free);
      g_clear_pointer (&job->state, g_free);
      job->parts_layer = caml_run_get_parts_layer (self->run);
      job->w = caml_run_copy_weights (self->run);
      job->n_weights = caml_run_get_n_weights (self->run);
      job->grid = caml_run_get_grid (self->run);
      self->parts_sampling++;
      break;
    case JOB_FILES:
      g_assert_not_reached ();
    }
  job_run (self, job);
}

/* Whether the data chosen that are loading are kind from files. */
static gboolean
choice_under_way (CamlWindow *self, CamlDataKind kind, const char *const *files, int n_files)
{
  if (!self->files_loading || self->files_kind != kind
      || g_strv_length (self->files_chosen) != (guint) n_files)
    return FALSE;
  for (int i = 0; i < n_files; i++)
    if (g_strcmp0 (self->files_chosen[i], files[i]) != 0)
      return FALSE;
  return TRUE;
}

/* Loads the data chosen — of kind, from files (IDX: four in any order;
 * text: the training and the test file) or, with none, from those exp
 * names — on a worker thread, from a copy of exp; they become the data
 * only if they load (commit_files). A choice made meanwhile replaces this
 * one; the same choice again (its menu item pressed again) changes
 * nothing: they are read once. Train and Step pressed meanwhile wait for
 * it (start_run); a change of the seed they follow loads it again
 * (job_done), Reload Data does not. */
static void
choose_data (CamlWindow *self, CamlDataKind kind, const char *const *files, int n_files)
{
  if (choice_under_way (self, kind, files, n_files))
    return;

  Job *job = job_new (self, JOB_FILES);
  CamlDataConfig *data = &job->exp->data;

  data->kind = kind;   /* IDX: the paths once the worker has ordered the files */
  for (int i = 0; i < n_files && i < 4; i++)
    job->files[i] = g_strdup (files[i]);
  job->n_files = n_files;
  if (kind == CAML_DATA_TEXT && n_files == 2)
    for (int i = 0; i < 2; i++)
      {
        g_free (data->text_paths[i]);
        data->text_paths[i] = g_strdup (files[i]);
      }
  job->files_serial = ++self->files_serial;
  self->files_loading = TRUE;
  self->files_kind = kind;
  g_strfreev (self->files_chosen);
  self->files_chosen = g_new0 (char *, n_files + 1);
  for (int i = 0; i < n_files; i++)
    self->files_chosen[i] = g_strdup (files[i]);
  sync_data_choice (self);   /* the drop-down and the menu show them while they load */
  /* Built-in data are made in a moment: no spinner for them (see
   * prepare_run). */
  if (!kind_from_files (kind))
    start_build_quiet (self);
  job_run (self, job);
  update_actions (self);
}

CamlRun *
caml_window_peek_run (CamlWindow *self)
{
  return self->run;
}

struct _CamlRun *
caml_window_peek_baseline (CamlWindow *self)
{
  return self->baseline;
}

const char *
caml_window_get_last_notice (CamlWindow *self)
{
  return self->last_notice;
}

int
caml_window_get_jobs_in_flight (void)
{
  return g_atomic_int_get (&jobs_in_flight);
}

gboolean
caml_window_is_loading (CamlWindow *self)
{
  return self->data_loading || self->run_building || self->files_loading
         || self->weights_loading || self->baseline_building || self->parts_sampling > 0;
}

/* The experiment changed in a way the run depends on. */
static void
experiment_changed (CamlWindow *self)
{
  if (self->syncing)
    return;
  mark_dirty (self);
  /* An untrained run loaded from a file: the rebuilt one loads it too (an
   * error says so if it no longer fits). */
  if (self->loaded_weights != NULL && !self->run_started && self->pending_weights == NULL)
    set_pending_load (self, self->loaded_weights, self->loaded_state);
  discard_run (self);   /* drops loaded_weights */
  forget_previous_if_other_data (self);
  prepare_run (self);
}

/* ------------------------------------------------------------ loss plots */

/* "NAME, seed S": the title of the run's loss and words figures, as
 * caml train's. */
static char *
run_title (CamlWindow *self)
{
  const CamlExperiment *exp = self->run != NULL ? caml_run_get_experiment (self->run) : self->exp;
  return g_strdup_printf ("%s, seed %" G_GUINT64_FORMAT, exp->name ? exp->name : "experiment",
                          exp->seed);
}

/* The loss figure of what the window holds: the run's curves with the
 * previous run's and the baseline's (previous and baseline are filled in
 * when there are any), the events recorded (appended to events, whose
 * texts the window keeps) and the Smoothing and Log scale settings. A file
 * (an export) smooths as caml train does, so that a run's export is its
 * loss.png. *title is new. */
static void
describe_loss (CamlWindow *self, CamlFigureDetail detail, CamlFigureLoss *loss,
               CamlFigureCurves *previous, CamlFigureCurves *baseline, GArray *events,
               char **title)
{
  *previous = (CamlFigureCurves) { self->prev_losses, self->prev_n_steps, self->prev_rows,
                                   self->prev_n_rows, self->prev_classification };
  *baseline = (CamlFigureCurves) { self->base_losses, self->base_n_steps, self->base_rows,
                                   self->base_n_rows, self->progress.classification };
  for (guint i = 0; i < self->events->len; i++)
    {
      Event *e = &g_array_index (self->events, Event, i);
      CamlPlotEvent pe = { (double) e->step, e->text };
      g_array_append_val (events, pe);
    }
  *title = run_title (self);
  *loss = (CamlFigureLoss) {
    .run = { self->losses, self->n_steps, self->rows, self->n_rows,
             self->progress.classification },
    .previous = self->prev_n_steps > 0 ? previous : NULL,
    .baseline = self->baseline != NULL ? baseline : NULL,
    .events = (CamlPlotEvent *) events->data, .n_events = events->len,
    .title = *title, .evaluated_on = held_out (self),
    .smoothing = detail == CAML_FIGURE_FILE ? -1 : self->smoothing,
    .linear = !self->log_scale,
    .detail = detail,
  };
}

static void
rebuild_loss_plot (CamlWindow *self)
{
  long n = self->n_steps;
  int r = self->n_rows;

  if (n == 0 && r == 0 && self->prev_n_steps == 0)
    {
      CamlTrainerState state = self->run != NULL && self->run_started ? self->progress.state
                                                                      : CAML_TRAINER_IDLE;
      CamlDivergence d;
      g_autofree char *why =
        state == CAML_TRAINER_FAILED && caml_run_get_divergence (self->run, &d)
        ? g_strdup_printf ("Diverged at step %ld; the weights are back at step %ld, before any "
                           "loss was kept", d.step, d.rolled_back_to)
        : state == CAML_TRAINER_RUNNING ? g_strdup ("Training: the loss appears after the first step")
        : state == CAML_TRAINER_PAUSED ? g_strdup ("Paused before the first step: Step (F7) "
                                                   "or Resume (F5)")
        : state == CAML_TRAINER_STOPPED ? g_strdup ("Stopped before the first step")
        : g_strdup ("Press Train (F5) to start");
      caml_plot_view_clear (self->loss_view);
      caml_plot_view_set_placeholder (self->loss_view, why);
      set_action_enabled (self, "export-loss", FALSE);
      return;
    }
  CamlFigureLoss loss;
  CamlFigureCurves previous, baseline;
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (CamlPlotEvent));
  g_autofree char *title = NULL;
  describe_loss (self, CAML_FIGURE_LIVE, &loss, &previous, &baseline, events, &title);
  g_autoptr (CamlPlotFigure) figure = caml_figure_loss (&loss);
  /* the trend the hover read-out gives */
  g_free (self->smooth);
  self->smooth = g_new (double, MAX (n, 1));
  caml_figure_loss_trend (self->losses, n, self->smoothing, !self->log_scale, self->smooth);
  caml_plot_view_set_figure (self->loss_view, figure, 0, 1);
  set_action_enabled (self, "export-loss", TRUE);
  /* the AUC's span follows the loss plot's, not only its snapshots */
  if (self->run != NULL && caml_run_has_sigma (self->run) && self->n_sigma > 0)
    rebuild_sigma_auc (self);

  /* The accuracy, from the run's first evaluation (or the previous run's) */
  gboolean prev_acc = self->prev_classification && self->prev_n_rows > 0;
  if (caml_plot_figure_get_n_plots (figure) > 1
      && ((self->progress.classification && r > 0) || (prev_acc && r == 0)))
    {
      caml_plot_view_set_figure (self->accuracy_view, figure, 1, 1);
      set_action_enabled (self, "export-accuracy", TRUE);
    }
}

static char *
loss_hover (CamlPlotView *view, double x, double y, gpointer user_data)
{
  CamlWindow *self = user_data;

  if (self->n_steps <= 0 || caml_plot_view_get_line (view) == NULL)
    return NULL;
  long i = CLAMP (lround (x), 1, self->n_steps) - 1;
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "step %ld  train %.4g", i + 1, (double) self->losses[i]);
  if (self->smooth != NULL && self->smoothing > 0)
    g_string_append_printf (s, " (smoothed %.4g)", self->smooth[i]);
  /* the evaluation nearest the pointer (the earlier one of two as near) */
  int nearest = -1;
  long step = i + 1;
  for (int r = 0; r < self->n_rows; r++)
    if (nearest < 0 || labs (self->rows[r].step - step) < labs (self->rows[nearest].step - step))
      nearest = r;
  if (nearest >= 0)
    g_string_append_printf (s, "  %s %.4g at step %ld", held_out (self),
                            self->rows[nearest].test_loss, self->rows[nearest].step);
  return g_string_free (s, FALSE);
}

/* --------------------------------------------------------------- actions */

static void
update_actions (CamlWindow *self)
{
  gboolean valid = caml_model_editor_is_valid (self->model_editor) && self->data != NULL
                   && self->build_error == NULL;
  /* Train and Step pressed while the data loads or the model is built act
   * once it is there (start_run keeps them pending). */
  gboolean waiting = self->run == NULL && (self->data_loading || self->run_building
                                           || self->files_loading);
  CamlTrainerState state = self->run_started ? self->progress.state : CAML_TRAINER_IDLE;
  gboolean active = run_active (self);
  int selected = caml_model_editor_get_selected (self->model_editor);
  int n_layers = 0;

  caml_model_editor_get_layers (self->model_editor, &n_layers);
  set_action_enabled (self, "train", (valid || waiting) && state != CAML_TRAINER_RUNNING);
  set_action_enabled (self, "pause", state == CAML_TRAINER_RUNNING);
  gtk_label_set_text_with_mnemonic (self->train_label, state == CAML_TRAINER_PAUSED
                                                       ? "_Resume" : "_Train");
  set_action_enabled (self, "step", (valid || waiting) && state != CAML_TRAINER_RUNNING);
  set_action_enabled (self, "stop", active || (self->run_started && baseline_active (self)));
  set_action_enabled (self, "reset", self->run_started && !active);
  set_action_enabled (self, "forget-previous", self->prev_n_steps > 0);
  set_action_enabled (self, "continue-diverged", self->run_started
                                                 && state == CAML_TRAINER_FAILED);
  /* On: a baseline beside each run (one that has ended gets its own, to
   * its steps). Off again at any time. */
  set_action_enabled (self, "compare-baseline", valid || waiting || self->compare);

  /* The model and the data stay as they are while a run is under way; the
   * learning rate and em_steps can change live. */
  set_action_enabled (self, "add-layer", !active);
  set_action_enabled (self, "clear-model", !active && n_layers > 0);
  set_action_enabled (self, "remove-layer", !active && selected >= 0);
  set_action_enabled (self, "move-layer-up", !active && selected > 0);
  set_action_enabled (self, "move-layer-down", !active && selected >= 0
                                                && selected < n_layers - 1);
  set_action_enabled (self, "layer-option", !active && selected >= 0);
  set_action_enabled (self, "select-layer", TRUE);   /* not an edit: the parts follow it */
  set_action_enabled (self, "undo", !active && caml_model_editor_can_undo (self->model_editor));
  set_action_enabled (self, "redo", !active && caml_model_editor_can_redo (self->model_editor));
  set_action_enabled (self, "data", !active);
  set_action_enabled (self, "choose-idx", !active);
  set_action_enabled (self, "choose-data-files", !active
                      && (self->exp->data.kind == CAML_DATA_IDX
                          || self->exp->data.kind == CAML_DATA_TEXT));
  set_action_enabled (self, "reload-data", !active);
  set_action_enabled (self, "export-metrics", self->n_rows > 0);
  /* Each plot's export where the model and data have that plot. */
  gboolean surface = self->run != NULL && caml_run_has_surface (self->run);
  /* Whatever the loss plot shows: a previous run's curves after Reset too. */
  set_action_enabled (self, "export-loss", caml_plot_view_has_plot (self->loss_view));
  set_action_enabled (self, "export-surface", surface);
  set_action_enabled (self, "export-chi", surface && caml_run_get_n_chi (self->run) > 0);
  set_action_enabled (self, "export-parts", surface && self->has_parts);
  set_action_enabled (self, "export-words",
                      self->run != NULL && caml_run_get_words_layer (self->run) >= 0);
  set_action_enabled (self, "export-sigma", self->run != NULL && caml_run_has_sigma (self->run));
  set_action_enabled (self, "export-accuracy", caml_plot_view_has_plot (self->accuracy_view));
  set_action_enabled (self, "export-sigma-auc", caml_plot_view_has_plot (self->sigma_auc_view));
  set_action_enabled (self, "save-weights", self->run != NULL);
  g_autofree char *not_resumable = self->run != NULL && self->run_started
                                   ? caml_run_why_not_resumable (self->run) : NULL;
  set_action_enabled (self, "save-run", self->run != NULL && self->run_started
                                        && not_resumable == NULL);
  set_action_enabled (self, "save-set-aside", self->set_aside != NULL);
  set_action_enabled (self, "export-words-page",
                      self->run != NULL && caml_run_get_words_layer (self->run) >= 0);
  set_action_enabled (self, "load-weights", valid && !active);
  /* A focused field that turns insensitive keeps the focus without a
   * focus-out (GTK warns: "GtkText - did not receive a focus-out event"),
   * and the keyboard goes nowhere: the window takes the focus first. */
  GtkWidget *locked[] = {
    GTK_WIDGET (self->data_drop),
    GTK_WIDGET (self->loss_drop), GTK_WIDGET (self->optimizer_drop),
    GTK_WIDGET (self->weight_decay_spin),
    GTK_WIDGET (self->batch_spin), GTK_WIDGET (self->steps_spin),
    GTK_WIDGET (self->eval_spin), GTK_WIDGET (self->average_spin),
    GTK_WIDGET (self->seed_spin),
  };
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (self));
  gboolean take = active && focus != NULL
                  && caml_model_editor_locks (self->model_editor, focus);
  for (guint i = 0; active && focus != NULL && i < G_N_ELEMENTS (locked); i++)
    take |= focus == locked[i] || gtk_widget_is_ancestor (focus, locked[i]);
  if (take)
    gtk_window_set_focus (GTK_WINDOW (self), NULL);
  caml_model_editor_set_locked (self->model_editor, active);
  gtk_widget_set_sensitive (GTK_WIDGET (self->data_drop), !active);
  gtk_widget_set_sensitive (GTK_WIDGET (self->loss_drop), !active);
  gtk_widget_set_sensitive (GTK_WIDGET (self->optimizer_drop), !active);
  gtk_widget_set_sensitive (GTK_WIDGET (self->weight_decay_spin), !active);
  gtk_widget_set_sensitive (GTK_WIDGET (self->batch_spin), !active);
  gtk_widget_set_sensitive (GTK_WIDGET (self->steps_spin), !active);
  gtk_widget_set_sensitive (GTK_WIDGET (self->eval_spin), !active);
  gtk_widget_set_sensitive (GTK_WIDGET (self->average_spin), !active);
  gtk_widget_set_sensitive (GTK_WIDGET (self->seed_spin), !active);
}

/* Starts a fresh run. When the run is still being built, `then` says what
 * to do once it is there, and this returns FALSE. */
static gboolean
start_run (CamlWindow *self, gboolean paused, Pending then)
{
  g_autoptr (GError) error = NULL;

  if (self->files_loading || self->weights_loading)
    {
      /* Starts on the data chosen, or from the weights, being loaded. */
      self->pending = then;
      update_progress_widgets (self);
      return FALSE;
    }
  if (self->run != NULL && self->run_started)
    discard_run (self);     /* finished, stopped or failed: start afresh */
  prepare_run (self);
  if (self->run == NULL)
    {
      if (self->run_building || self->data_loading)
        {
          self->pending = then;
          update_progress_widgets (self);
        }
      return FALSE;
    }
  CamlProgress p;
  caml_run_get_progress (self->run, &p);
  if (p.step > 0 && p.step >= p.total_steps)
    {
      /* An opened run that has done all its steps: nothing to train. */
      g_autofree char *text = g_strdup_printf ("The run has done all its %ld steps: raise "
                                               "Steps to go on", p.step);
      show_notice_full (self, text, FALSE);
      return FALSE;
    }
  if (!caml_trainer_start (caml_run_get_trainer (self->run), paused, &error))
    {
      caml_window_show_error (self, error->message);
      return FALSE;
    }
  clear_error (self);
  self->run_started = TRUE;
  g_clear_pointer (&self->loaded_weights, g_free);   /* the run's weights are its own now */
  g_clear_pointer (&self->loaded_state, g_free);
  self->progress.state = paused ? CAML_TRAINER_PAUSED : CAML_TRAINER_RUNNING;
  start_baseline_if_wanted (self);   /* Compare with Baseline is on */
  update_actions (self);
  update_progress_widgets (self);
  return TRUE;
}

/* A value typed into a spin button counts once the field is left or Enter
 * is pressed. Train, Step, Compare and Save pressed while the text is still
 * being typed (F5 straight after typing, keyboard focus still in the field)
 * take it too: the spin button parses it now, and its value-changed handler
 * updates the experiment (and discards the run built from the old value)
 * before the run is started or the file written. The only editables in
 * the window are spin buttons: the settings' here, the layer options' in
 * the model editor. */
static void
commit_pending_edit (CamlWindow *self)
{
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (self));
  GtkWidget *spin = focus != NULL ? gtk_widget_get_ancestor (focus, GTK_TYPE_SPIN_BUTTON)
                                  : NULL;

  if (spin != NULL && gtk_widget_is_sensitive (spin)
      && caml_spin_button_is_edited (GTK_SPIN_BUTTON (spin)))
    gtk_spin_button_update (GTK_SPIN_BUTTON (spin));
}

static gboolean extend_run_full (CamlWindow *self, int steps, gboolean pressed);

/* A stopped run whose Steps are still ahead of it goes on (paused) when
 * Train or Step is pressed, as it does when Steps are raised past it;
 * Reset starts afresh. */
static void
go_on_if_stopped (CamlWindow *self)
{
  /* Data or weights chosen and loading, or a new model being built: Train
   * waits for those (start_run), which replace the stopped run. */
  if (self->files_loading || self->weights_loading || self->data_loading
      || self->run_building)
    return;
  if (self->run != NULL && self->run_started && self->progress.state == CAML_TRAINER_STOPPED
      && self->exp->steps > self->progress.step)
    extend_run_full (self, self->exp->steps, TRUE);
}

static void
action_train (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;

  commit_pending_edit (self);
  end_news (self);
  go_on_if_stopped (self);
  if (self->run != NULL && self->run_started && self->progress.state == CAML_TRAINER_PAUSED)
    {
      caml_trainer_resume (caml_run_get_trainer (self->run));
      if (self->baseline != NULL)
        caml_trainer_resume (caml_run_get_trainer (self->baseline));
      update_from_run (self);
      return;
    }
  start_run (self, FALSE, PENDING_TRAIN);
}

static void
action_pause (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;

  if (self->run == NULL || !self->run_started)
    return;
  caml_trainer_pause (caml_run_get_trainer (self->run));
  if (self->baseline != NULL)
    caml_trainer_pause (caml_run_get_trainer (self->baseline));
  update_from_run (self);
}

static void
action_step (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;

  commit_pending_edit (self);
  end_news (self);
  go_on_if_stopped (self);
  if (!(self->run != NULL && self->run_started && self->progress.state == CAML_TRAINER_PAUSED)
      && !start_run (self, TRUE, PENDING_STEP))
    return;
  caml_trainer_step (caml_run_get_trainer (self->run));
  if (self->baseline != NULL)
    caml_trainer_step (caml_run_get_trainer (self->baseline));
}

static void
action_stop (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;

  end_news (self);
  if (self->run != NULL && self->run_started)
    caml_trainer_stop (caml_run_get_trainer (self->run));
  if (self->baseline != NULL)
    caml_trainer_stop (caml_run_get_trainer (self->baseline));
  self->baseline_building = FALSE;   /* a baseline still being built is dropped */
}

/* With Compare with Baseline on, the current run gets its matched baseline
 * (every CA layer replaced by its plain counterpart; same data, seed and
 * schedule), built on a worker thread (install_baseline): trained alongside
 * a run that is under way, or alone, to the same step, beside one that has
 * finished or was stopped. A run that diverged gets none (it waits to be
 * continued); the next fresh run does. */
static void
start_baseline_if_wanted (CamlWindow *self)
{
  if (!self->compare || self->baseline != NULL || self->baseline_building
      || self->run == NULL || !self->run_started)
    return;
  CamlProgress p;
  caml_run_get_progress (self->run, &p);
  if (p.state == CAML_TRAINER_FAILED || p.state == CAML_TRAINER_IDLE
      || (p.state != CAML_TRAINER_RUNNING && p.state != CAML_TRAINER_PAUSED && p.step == 0))
    return;
  start_job (self, JOB_BASELINE);
}

/* Turns Compare with Baseline on — starting the run when it has not
 * started, and its baseline — or off, which stops and drops the baseline
 * and its curves. */
static void
action_compare_baseline (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;

  self->compare = !self->compare;
  g_simple_action_set_state (action, g_variant_new_boolean (self->compare));
  if (!self->compare)
    {
      g_clear_pointer (&self->baseline, caml_run_free);   /* stops and joins it */
      self->baseline_building = FALSE;   /* one being built is dropped */
      g_clear_pointer (&self->base_losses, g_free);
      g_clear_pointer (&self->base_rows, g_free);
      self->base_n_steps = 0;
      self->base_n_rows = 0;
      rebuild_loss_plot (self);
      update_progress_widgets (self);
      update_actions (self);
      return;
    }
  commit_pending_edit (self);
  if (self->run != NULL && self->run_started)
    {
      start_baseline_if_wanted (self);
      if (!self->baseline_building && self->progress.state == CAML_TRAINER_FAILED)
        show_notice_full (self, "The baseline trains beside the next run (this one diverged)",
                          FALSE);
    }
  else
    start_run (self, FALSE, PENDING_TRAIN);   /* then its baseline (start_run) */
  update_actions (self);
}

/* Main thread: the baseline built for the current run is there. It starts
 * as the run is now (paused or training, at its learning rate and
 * em_steps), or alone when the run has ended since (finished, or stopped
 * before the baseline was asked for). */
static void
install_baseline (CamlWindow *self, Job *job)
{
  g_autoptr (GError) error = NULL;

  self->baseline_building = FALSE;
  if (job->run == NULL)
    {
      g_autofree char *text = g_strdup_printf ("Cannot build the baseline: %s", job->run_error);
      caml_window_show_error (self, text);
      return;
    }
  /* The run's state now, not at the window's last update (which may be
   * before a Stop or a Pause). */
  CamlProgress p;
  caml_run_get_progress (self->run, &p);
  gboolean alongside = p.state == CAML_TRAINER_RUNNING || p.state == CAML_TRAINER_PAUSED;
  gboolean after = p.state == CAML_TRAINER_FINISHED
                   || (job->alone && p.state == CAML_TRAINER_STOPPED);
  if (!self->run_started || !self->compare || !(alongside || after))
    {
      if (self->compare && self->run_started)
        show_notice (self, "The run ended before its baseline was built: no baseline trained");
      return;   /* job_release frees it */
    }
  self->baseline = g_steal_pointer (&job->run);
  caml_run_set_lr (self->baseline, caml_run_get_lr (self->run));
  caml_run_set_em_steps (self->baseline, caml_run_get_em_steps (self->run));
  self->base_state = CAML_TRAINER_IDLE;
  if (!caml_trainer_start (caml_run_get_trainer (self->baseline),
                           p.state == CAML_TRAINER_PAUSED, &error))
    {
      caml_window_show_error (self, error->message);
      g_clear_pointer (&self->baseline, caml_run_free);
    }
  else if (after)
    {
      g_autofree char *text = g_strdup_printf ("Training the baseline to step %ld", p.step);
      show_notice_full (self, text, FALSE);
    }
}


/* The run that was being built is there: do what was asked meanwhile. */
static void
do_pending (CamlWindow *self)
{
  Pending what = self->pending;

  if (self->files_loading)
    return;   /* what was pressed waits for the data chosen (start_run) */
  if (self->pending_weights != NULL)
    {
      /* Weights asked for after this run's build began: build it again with
       * them, on a worker thread; what was pressed waits for that run. */
      discard_run (self);
      prepare_run (self);
      return;
    }
  self->pending = PENDING_NONE;
  switch (what)
    {
    case PENDING_TRAIN:
      start_run (self, FALSE, PENDING_NONE);
      break;
    case PENDING_STEP:
      if (start_run (self, TRUE, PENDING_NONE))
        caml_trainer_step (caml_run_get_trainer (self->run));
      break;
    case PENDING_NONE:
      break;
    }
}

/* The dashed curves of the previous run go. */
static void
action_forget_previous (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;

  forget_previous (self);
  if (self->n_rows == 0)
    clear_accuracy (self);
  rebuild_loss_plot (self);
  update_actions (self);
}

static void
action_reset (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;

  discard_run (self);
  clear_error (self);
  prepare_run (self);
}

static void
action_add_layer (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  const char *name = g_variant_get_string (param, NULL);
  const CamlLayerOps *ops = caml_layer_lookup (name);

  if (ops == NULL)
    {
      g_autofree char *text = g_strdup_printf ("no layer type named \"%s\"", name);
      caml_window_show_error (self, text);
      return;
    }
  caml_model_editor_insert_layer (self->model_editor, ops, -1);
}

static void
action_remove_layer (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_model_editor_remove_selected (CAML_WINDOW (user_data)->model_editor);
}

static void
action_move_layer_up (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_model_editor_move_selected (CAML_WINDOW (user_data)->model_editor, -1);
}

static void
action_move_layer_down (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_model_editor_move_selected (CAML_WINDOW (user_data)->model_editor, +1);
}

static void
action_select_layer (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_model_editor_select (CAML_WINDOW (user_data)->model_editor, g_variant_get_int32 (param));
}

static void
action_layer_option (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  g_autoptr (GError) error = NULL;
  const char *key = NULL;
  double value = 0;

  g_variant_get (param, "(&sd)", &key, &value);
  if (!caml_model_editor_set_option (self->model_editor, key, value, &error))
    caml_window_show_error (self, error->message);
}

static void
action_clear_model (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_model_editor_clear (CAML_WINDOW (user_data)->model_editor);
}

static void
action_undo (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_model_editor_undo (CAML_WINDOW (user_data)->model_editor);
}

static void
action_redo (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_model_editor_redo (CAML_WINDOW (user_data)->model_editor);
}

/* The data drop-down and the data action's state (the menu's radio items)
 * show the same data: those chosen while they load — they are what comes —
 * else those in use. Every change of either goes through here. */
static void
sync_data_choice (CamlWindow *self)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), "data");
  CamlDataKind kind = self->files_loading ? self->files_kind
                      : self->exp != NULL ? self->exp->data.kind
                      : (CamlDataKind) 0;
  gboolean was_syncing = self->syncing;

  self->syncing = TRUE;
  gtk_drop_down_set_selected (self->data_drop, kind);
  g_simple_action_set_state (G_SIMPLE_ACTION (action),
                             g_variant_new_string (caml_data_kind_names[kind]));
  self->syncing = was_syncing;
}

/* The drop-down's titles, each fetched set marked when it is not there. */
static void
refresh_data_titles (CamlWindow *self)
{
  const char *titles[CAML_N_DATA_KINDS + 1];
  char *owned[CAML_N_DATA_KINDS] = { NULL };

  for (int k = 0; k < CAML_N_DATA_KINDS; k++)
    {
      g_autofree char *missing = caml_data_source_missing ((CamlDataKind) k);
      titles[k] = missing == NULL ? caml_data_source_title ((CamlDataKind) k)
                  : (owned[k] = g_strdup_printf ("%s — not fetched",
                                                 caml_data_source_title ((CamlDataKind) k)));
    }
  titles[CAML_N_DATA_KINDS] = NULL;
  gboolean was_syncing = self->syncing;
  self->syncing = TRUE;
  set_strings (self->data_drop, titles);
  self->syncing = was_syncing;
  sync_data_choice (self);   /* a new list has no selection */
  for (int k = 0; k < CAML_N_DATA_KINDS; k++)
    g_free (owned[k]);
}

/* Picks a data set: it is used once its data load (use_data_kind). "idx"
 * opens the file chooser for four IDX files, and "text" without files the
 * choosers of two text files (the data change once they load too). A
 * fetched set that is not there changes nothing: the banner says which
 * command fetches it. */
static void ask_text_files (CamlWindow *self);
static void use_data_kind (CamlWindow *self, CamlDataKind kind);

static void
action_data (GSimpleAction *action, GVariant *value, gpointer user_data)
{
  CamlWindow *self = user_data;
  const char *name = g_variant_get_string (value, NULL);
  int kind = -1;

  for (int i = 0; caml_data_kind_names[i] != NULL; i++)
    if (g_str_equal (caml_data_kind_names[i], name))
      kind = i;
  if (kind < 0)
    {
      g_autofree char *text = g_strdup_printf ("no built-in data set named \"%s\"", name);
      caml_window_show_error (self, text);
      sync_data_choice (self);
      return;
    }
  if (kind == CAML_DATA_IDX)
    {
      cancel_choice (self, NULL);   /* files are chosen instead */
      sync_data_choice (self);
      g_action_group_activate_action (G_ACTION_GROUP (self), "choose-idx", NULL);
      return;
    }
  if (kind == CAML_DATA_TEXT)
    {
      /* Which files: asked for every time, as for IDX (the files in use
       * stay until two others load; "Files…" asks again). */
      cancel_choice (self, NULL);
      sync_data_choice (self);
      ask_text_files (self);
      return;
    }
  use_data_kind (self, (CamlDataKind) kind);
}

/* The data picked become those of kind (its files, if any, already
 * named) once they load (choose_data). Picking the data in use, or a set
 * that is not fetched, drops data chosen before that are still loading. */
static void
use_data_kind (CamlWindow *self, CamlDataKind kind)
{
  g_autofree char *missing = caml_data_source_missing (kind);
  if (missing != NULL || self->exp->data.kind == kind)
    {
      cancel_choice (self, NULL);
      sync_data_choice (self);
      if (missing != NULL)
        caml_window_show_error (self, missing);
      return;
    }
  clear_error (self);
  choose_data (self, kind, NULL, 0);
}

static void
on_idx_chosen (GtkNativeDialog *dialog, int response, gpointer user_data)
{
  CamlWindow *self = user_data;

  if (response == GTK_RESPONSE_ACCEPT && self->cancellable != NULL)
    {
      g_autoptr (GListModel) files = gtk_file_chooser_get_files (GTK_FILE_CHOOSER (dialog));
      g_autoptr (GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
      for (guint i = 0; i < g_list_model_get_n_items (files); i++)
        {
          g_autoptr (GFile) file = g_list_model_get_item (files, i);
          char *path = g_file_get_path (file);
          if (path != NULL)
            g_ptr_array_add (paths, path);
        }
      caml_window_use_idx_files (self, (const char *const *) paths->pdata, (int) paths->len);
    }
  g_object_unref (dialog);
  g_object_unref (self);
}

/* GtkFileDialog is GTK 4.10; on 4.8 this is the native file chooser, as
 * for Open and the weights. */
/* "Files…" beside the data: other files of the kind in use (IDX, text). */
static void
action_choose_data_files (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  if (self->exp->data.kind == CAML_DATA_TEXT)
    {
      cancel_choice (self, NULL);
      ask_text_files (self);
    }
  else
    g_action_group_activate_action (G_ACTION_GROUP (self), "choose-idx", NULL);
}

static void
action_choose_idx (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  GtkFileChooserNative *dialog =
    gtk_file_chooser_native_new ("Choose Four IDX Files: Training and Test Images and Labels",
                                 GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_OPEN, "_Use",
                                 "_Cancel");
  GtkFileFilter *idx = gtk_file_filter_new ();
  GtkFileFilter *all = gtk_file_filter_new ();

  gtk_file_filter_set_name (idx, "IDX files (*-ubyte, *.idx, and gzipped)");
  gtk_file_filter_add_pattern (idx, "*-ubyte");
  gtk_file_filter_add_pattern (idx, "*-ubyte.gz");
  gtk_file_filter_add_pattern (idx, "*.idx*");
  gtk_file_filter_set_name (all, "All files");
  gtk_file_filter_add_pattern (all, "*");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), idx);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), all);
  g_object_unref (idx);
  g_object_unref (all);
  gtk_file_chooser_set_select_multiple (GTK_FILE_CHOOSER (dialog), TRUE);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  g_signal_connect (dialog, "response", G_CALLBACK (on_idx_chosen), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

void
caml_window_use_idx_files (CamlWindow *self, const char *const *paths, int n_paths)
{
  g_return_if_fail (CAML_IS_WINDOW (self));
  clear_error (self);
  choose_data (self, CAML_DATA_IDX, paths, n_paths);
}

void
caml_window_use_text_files (CamlWindow *self, const char *train, const char *test)
{
  g_return_if_fail (CAML_IS_WINDOW (self));
  const char *files[] = { train, test };
  clear_error (self);
  choose_data (self, CAML_DATA_TEXT, files, 2);
}

/* Reads the data in use again (after `datasets/fetch`, or a file changed);
 * data chosen that are being read are not read a second time (job_done). */
static void
action_reload_data (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;

  refresh_data_titles (self);
  clear_error (self);
  discard_run (self);
  invalidate_data (self);
  prepare_run (self);
}

static void
record_event (CamlWindow *self, char *text)
{
  Event e = { self->progress.step, text };
  g_array_append_val (self->events, e);
  rebuild_loss_plot (self);
}

static void
action_set_lr (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  double lr = g_variant_get_double (param);

  if (!(lr > 0) || lr == self->exp->optimizer.lr)
    return;
  self->exp->optimizer.lr = lr;
  if (!self->syncing && gtk_spin_button_get_value (self->lr_spin) != lr)
    caml_spin_button_set_positive (self->lr_spin, lr);
  gboolean live = run_active (self), base_live = baseline_active (self);
  if (live)
    caml_run_set_lr (self->run, lr);
  if (base_live)
    caml_run_set_lr (self->baseline, lr);   /* the comparison stays like for like */
  if (live || base_live)
    {
      g_autofree char *shown = caml_format_positive (lr);
      record_event (self, g_strdup_printf ("lr %s", shown));
      mark_dirty (self);
    }
  else
    experiment_changed (self);
}

static void
action_set_em_steps (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  int em = g_variant_get_int32 (param);

  if (em < 0 || em == self->exp->optimizer.em_steps)
    return;
  self->exp->optimizer.em_steps = em;
  if (!self->syncing && gtk_spin_button_get_value_as_int (self->em_spin) != em)
    gtk_spin_button_set_value (self->em_spin, em);
  gboolean live = run_active (self), base_live = baseline_active (self);
  if (live)
    caml_run_set_em_steps (self->run, em);
  if (base_live)
    caml_run_set_em_steps (self->baseline, em);
  if (live || base_live)
    {
      record_event (self, g_strdup_printf ("em %d", em));
      mark_dirty (self);
    }
  else
    experiment_changed (self);
}

static void
action_log_scale (GSimpleAction *action, GVariant *value, gpointer user_data)
{
  CamlWindow *self = user_data;

  g_simple_action_set_state (action, value);
  self->log_scale = g_variant_get_boolean (value);
  if (self->settings != NULL)
    g_settings_set_boolean (self->settings, "log-scale", self->log_scale);
  rebuild_loss_plot (self);
}

static void
action_sigma_stretch (GSimpleAction *action, GVariant *value, gpointer user_data)
{
  CamlWindow *self = user_data;

  g_simple_action_set_state (action, value);
  self->sigma_stretch = g_variant_get_boolean (value);
  if (self->settings != NULL)
    g_settings_set_boolean (self->settings, "sigma-stretch", self->sigma_stretch);
  if (self->run != NULL && caml_run_has_sigma (self->run) && self->n_sigma > 0)
    rebuild_sigma_plots (self, TRUE);
}

/* After a divergence: on from the last evaluation at a tenth of the
 * learning rate, keeping the loss history up to there. */
static void
action_continue_diverged (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  g_autoptr (GError) error = NULL;

  if (self->run == NULL || !self->run_started || self->progress.state != CAML_TRAINER_FAILED)
    return;
  double lr = caml_run_get_lr (self->run) / 10;
  long from = caml_run_get_checkpoint_step (self->run);
  if (!caml_run_continue (self->run, lr, &error))
    {
      caml_window_show_error (self, error->message);
      return;
    }
  /* Data chosen meanwhile would replace the run that goes on. */
  cancel_choice (self, "the run went on (choose them again once it has ended)");
  self->failure_shown = FALSE;   /* the new trainer's failure, if it comes, is news */
  if (baseline_active (self))
    caml_run_set_lr (self->baseline, lr);
  /* The experiment keeps the learning rate it goes on with. */
  self->exp->optimizer.lr = lr;
  gboolean was_syncing = self->syncing;
  self->syncing = TRUE;
  caml_spin_button_set_positive (self->lr_spin, lr);
  self->syncing = was_syncing;
  mark_dirty (self);
  clear_error (self);
  /* Marks on the steps that were dropped go with them. */
  for (guint i = self->events->len; i-- > 0;)
    if (g_array_index (self->events, Event, i).step > from)
      g_array_remove_index (self->events, i);
  update_from_run (self);
  g_autofree char *shown = caml_format_positive (lr);
  record_event (self, g_strdup_printf ("lr %s after divergence", shown));
  update_actions (self);
  /* Feedback at once, before the first report of the new trainer (unless
   * it has failed already: the banner is back). */
  g_autofree char *text = g_strdup_printf ("Continuing from step %ld at lr %s", from, shown);
  if (!self->failure_shown)
    show_notice_full (self, text, FALSE);
}

static void
action_plots_page (GSimpleAction *action, GVariant *value, gpointer user_data)
{
  CamlWindow *self = user_data;
  const char *page = g_variant_get_string (value, NULL);

  if (!g_str_equal (page, "main") && !g_str_equal (page, "parts") && !g_str_equal (page, "words"))
    return;
  g_simple_action_set_state (action, value);
  self->chosen_page = g_intern_string (page);
  /* Prepared only while shown, and before the page shows: a text view
   * filled once it is on screen lays its text out while the frame is drawn,
   * which GTK reports as a window drawn "without a current allocation". */
  if (g_str_equal (page, "parts") && self->run != NULL && self->fit != NULL
      && self->surface_version != 0)
    rebuild_parts_plots (self);
  if (g_str_equal (page, "words"))
    rebuild_words_plots (self);
  gtk_stack_set_visible_child_name (self->plots_stack, page);
}

static void
action_dismiss_banner (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  if (self->set_aside_shown)
    g_action_group_activate_action (G_ACTION_GROUP (self), "drop-set-aside", NULL);
  else
    clear_error (self);
}

/* -------------------------------------------------------- file dialogs */

typedef void (*PathFunc) (CamlWindow *self, const char *path, gpointer data);

typedef struct {
  CamlWindow *self;
  PathFunc    func;
  char       *what;
  void      (*cancelled) (CamlWindow *self);   /* or NULL */
} SaveRequest;

static void
on_save_response (GtkNativeDialog *dialog, int response, gpointer user_data)
{
  SaveRequest *req = user_data;
  g_autoptr (GFile) file = response == GTK_RESPONSE_ACCEPT
                           ? gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog)) : NULL;
  g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;

  if (path != NULL)
    req->func (req->self, path, req->what);
  else if (req->cancelled != NULL)
    req->cancelled (req->self);
  g_object_unref (req->self);
  g_free (req->what);
  g_free (req);
  g_object_unref (dialog);
}

static void
ask_save_path_full (CamlWindow *self, const char *title, const char *suggested, PathFunc func,
                    const char *what, void (*cancelled) (CamlWindow *self))
{
  GtkFileChooserNative *dialog =
    gtk_file_chooser_native_new (title, GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_SAVE,
                                 "_Save", "_Cancel");
  SaveRequest *req = g_new0 (SaveRequest, 1);

  req->self = g_object_ref (self);
  req->func = func;
  req->what = g_strdup (what);
  req->cancelled = cancelled;
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), suggested);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  g_signal_connect (dialog, "response", G_CALLBACK (on_save_response), req);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
ask_save_path (CamlWindow *self, const char *title, const char *suggested, PathFunc func,
               const char *what)
{
  ask_save_path_full (self, title, suggested, func, what, NULL);
}

static void
save_experiment_to (CamlWindow *self, const char *path, gpointer unused)
{
  g_autoptr (GError) error = NULL;

  commit_pending_edit (self);
  if (!caml_window_save_to_path (self, path, &error))
    caml_window_show_error (self, error->message);
}

static void
action_save_as (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  g_autofree char *name = g_strdup_printf ("%s.json", self->exp->name ? self->exp->name
                                                                      : "experiment");
  ask_save_path (self, "Save Experiment", name, save_experiment_to, NULL);
}

static void
action_save (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;

  if (self->path != NULL)
    save_experiment_to (self, self->path, NULL);
  else
    action_save_as (action, param, user_data);
}

gboolean
caml_window_export_plot (CamlWindow *self, const char *what, const char *path, GError **error)
{
  CamlPlotView *view = caml_window_get_plot_view (self, what);
  int first = 0, n = 0;
  const CamlPlotFigure *shown = view != NULL ? caml_plot_view_get_figure (view, &first, &n)
                                             : NULL;

  if (shown == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "there is no plot to export yet");
      return FALSE;
    }
  /* The accuracy alone, as the card shows it. */
  if (g_str_equal (what, "accuracy"))
    return caml_plot_view_write (view, path, 2 * CAML_FIGURE_CELL_WIDTH,
                                 CAML_FIGURE_CELL_HEIGHT, error);
  /* The loss figure as a file: every step, smoothed as caml train's
   * loss.png (with the accuracy beside it for a classifier). */
  if (g_str_equal (what, "loss"))
    {
      CamlFigureLoss loss;
      CamlFigureCurves previous, baseline;
      g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (CamlPlotEvent));
      g_autofree char *title = NULL;
      describe_loss (self, CAML_FIGURE_FILE, &loss, &previous, &baseline, events, &title);
      g_autoptr (CamlPlotFigure) figure = caml_figure_loss (&loss);
      return caml_plot_figure_write (figure, path, error);
    }
  /* The whole figure the card shows part of (the surface beside its ground
   * truth), as caml train writes it. */
  return caml_plot_figure_write (shown, path, error);
}

static void
export_plot_to (CamlWindow *self, const char *path, gpointer data)
{
  g_autoptr (GError) error = NULL;

  if (!caml_window_export_plot (self, data, path, &error))
    caml_window_show_error (self, error->message);
  else
    show_done (self, "Exported the plot to", path);
}

static void
action_export_plot (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  const char *what = g_variant_get_string (param, NULL);
  CamlPlotView *view = caml_window_get_plot_view (self, what);
  g_autofree char *name = g_strdup_printf ("%s-%s.png", self->exp->name ? self->exp->name
                                                                        : "experiment", what);
  if (g_str_equal (what, "parts") && self->run != NULL && self->fit != NULL
      && self->surface_version != 0)
    {
      rebuild_parts_plots (self);   /* prepared only while shown */
    }
  if (g_str_equal (what, "words"))
    rebuild_words_plots (self);
  if (view == NULL || !caml_plot_view_has_plot (view))
    {
      caml_window_show_error (self, "There is no such plot to export yet: train first.");
      return;
    }
  ask_save_path (self, "Export Plot (.png or .svg)", name, export_plot_to, what);
}

/* win.export-loss, win.export-surface…: the menu's items, one action per
 * plot so that each is enabled only where the model has the plot. */
static void
action_export_named (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  const char *what = g_action_get_name (G_ACTION (action)) + strlen ("export-");
  g_autoptr (GVariant) target = g_variant_ref_sink (g_variant_new_string (what));

  action_export_plot (action, target, user_data);
}

static void
export_metrics_to (CamlWindow *self, const char *path, gpointer unused)
{
  g_autoptr (GError) error = NULL;

  if (!caml_report_write_metrics (path, self->rows, self->n_rows,
                                  self->progress.classification, &error))
    caml_window_show_error (self, error->message);
  else
    show_done (self, "Exported the metrics to", path);
}

static void
action_export_metrics (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  g_autofree char *name = g_strdup_printf ("%s-metrics.csv", self->exp->name ? self->exp->name
                                                                              : "experiment");
  ask_save_path (self, "Export Metrics", name, export_metrics_to, NULL);
}

static void
on_open_response (GtkNativeDialog *dialog, int response, gpointer user_data)
{
  on_save_response (dialog, response, user_data);
}

/* filter_name and pattern: the files offered first ("Weights (*.weights)",
 * "*.weights"); all files are the other choice. what is handed to func;
 * beside, if not NULL, a file whose folder the chooser opens in. */
static void
ask_open_path_in (CamlWindow *self, const char *title, const char *filter_name,
                  const char *pattern, PathFunc func, const char *what, const char *beside)
{
  GtkFileChooserNative *dialog =
    gtk_file_chooser_native_new (title, GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_OPEN,
                                 "_Open", "_Cancel");
  if (beside != NULL)   /* opens in the folder of this file */
    {
      g_autoptr (GFile) file = g_file_new_for_path (beside);
      g_autoptr (GFile) folder = g_file_get_parent (file);
      if (folder != NULL)
        gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (dialog), folder, NULL);
    }
  SaveRequest *req = g_new0 (SaveRequest, 1);
  g_autoptr (GtkFileFilter) some = gtk_file_filter_new ();
  g_autoptr (GtkFileFilter) all = gtk_file_filter_new ();

  gtk_file_filter_set_name (some, filter_name);
  gtk_file_filter_add_pattern (some, pattern);
  gtk_file_filter_set_name (all, "All files");
  gtk_file_filter_add_pattern (all, "*");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), some);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), all);

  req->self = g_object_ref (self);
  req->func = func;
  req->what = g_strdup (what);   /* handed to func */
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  g_signal_connect (dialog, "response", G_CALLBACK (on_open_response), req);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
ask_open_path (CamlWindow *self, const char *title, const char *filter_name,
               const char *pattern, PathFunc func)
{
  ask_open_path_in (self, title, filter_name, pattern, func, NULL, NULL);
}

/* Text files (text<TAB>label): the training file, then the test file;
 * the data change only when both are chosen and load. */
static void
text_test_chosen (CamlWindow *self, const char *path, gpointer train)
{
  caml_window_use_text_files (self, train, path);
}

static void
text_train_chosen (CamlWindow *self, const char *path, gpointer unused)
{
  /* the test file is usually beside the training file: its folder first */
  ask_open_path_in (self, "Test Texts (text<TAB>label)", "Tab-separated text (*.tsv)", "*.tsv",
                    text_test_chosen, path, path);
}

static void
ask_text_files (CamlWindow *self)
{
  /* in the folder of the text files in use, if any */
  ask_open_path_in (self, "Training Texts (text<TAB>label)", "Tab-separated text (*.tsv)",
                    "*.tsv", text_train_chosen, NULL, self->exp->data.text_paths[0]);
}

/* Writing what a run's weights give — the weights file, the words page — on
 * a worker thread from copies: the run's experiment and data (referenced)
 * and its weights as an evaluation sees them when asked, in a model of the
 * job's own. The run may train on, change or go meanwhile. */
typedef enum { WRITE_WEIGHTS, WRITE_WORDS, WRITE_RUN } WriteKind;

typedef struct {
  WriteKind       kind;
  CamlExperiment *exp;
  CamlRunData    *data;
  float          *w;
  size_t          n_weights;
  guint           run_serial;  /* the run whose weights these are … */
  long            step;        /* … at this step */
  guint           set_aside;   /* or the set-aside weights with this serial (0: not) */
  char           *path;
  CamlRunResumable *resumable;  /* WRITE_RUN: what is written (no model is built) */
  GApplication   *app;       /* held while the job runs */
  char           *error;
} WriteJob;

static void
write_job_free (gpointer p)
{
  WriteJob *job = p;
  caml_experiment_free (job->exp);
  caml_run_resumable_free (job->resumable);
  g_free (job->w);
  g_free (job->path);
  g_free (job->error);
  g_free (job);
}

/* Worker thread: engine calls on the job's copies only. */
static void
write_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  WriteJob *job = task_data;
  g_autoptr (GError) error = NULL;
  if (job->kind == WRITE_RUN)
    {
      if (!caml_run_resumable_write (job->resumable, job->path, &error))
        job->error = g_strdup (error->message);
      g_task_return_boolean (task, TRUE);
      return;
    }
  /* The layers only: the weights are the run's (no word vectors to read). */
  CamlModel *model = caml_experiment_build_model (job->exp, &job->data->train->x_shape, &error);
  gboolean ok = model != NULL;
  if (ok)
    caml_model_set_vocab (model, job->data->train->vocab);   /* recorded in the weights file */
  if (ok && model->n_weights != job->n_weights)
    {
      g_set_error (&error, CAML_ERROR, CAML_ERROR_INVALID,
                   "%s: the model has %zu weights, the run %zu", job->path, model->n_weights,
                   job->n_weights);
      ok = FALSE;
    }
  if (ok)
    {
      memcpy (model->w, job->w, job->n_weights * sizeof (float));
      if (job->kind == WRITE_WEIGHTS)
        ok = caml_weights_save (model, job->path, &error);
      else
        {
          g_autofree char *title = g_strdup_printf ("%s, seed %" G_GUINT64_FORMAT,
                                                    job->exp->name ? job->exp->name
                                                                   : "experiment",
                                                    job->exp->seed);
          gboolean written = FALSE;
          ok = caml_report_write_words_on (job->path, NULL, title, model, job->exp,
                                           job->data->train, job->data->test,
                                           WORDS_PAGE_SAMPLES, WORDS_MIN_COUNT, WORDS_PAGE_TOP,
                                           &written, &error);
          if (ok && !written)
            {
              g_set_error (&error, CAML_ERROR, CAML_ERROR_INVALID,
                           "this model has no gate over words to show");
              ok = FALSE;
            }
        }
    }
  if (!ok)
    job->error = g_strdup (error->message);
  caml_model_free (model);
  g_task_return_boolean (task, TRUE);
}

/* Main thread: report a failure; release what belongs to the main thread. */
static void
on_write_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (CamlWindow) self = user_data;   /* the task's reference (start_write) */
  WriteJob *job = g_task_get_task_data (G_TASK (result));

  g_atomic_int_add (&jobs_in_flight, -1);
  if (self->cancellable != NULL && !g_cancellable_is_cancelled (self->cancellable))
    {
      if (job->error != NULL)
        caml_window_show_error (self, job->error);
      else
        {
          if ((job->kind == WRITE_WEIGHTS || job->kind == WRITE_RUN) && job->set_aside == 0)
            {
              self->saved_serial = job->run_serial;
              self->saved_step = job->step;
            }
          else if (job->kind == WRITE_WEIGHTS && self->set_aside != NULL
                   && job->set_aside == self->set_aside->serial)
            {
              /* Saved: they need no keeping, and the banner goes. */
              g_clear_pointer (&self->set_aside, set_aside_free);
              set_action_enabled (self, "save-set-aside", FALSE);
              clear_error (self);
            }
          show_done (self, job->kind == WRITE_WEIGHTS ? "Saved the weights to"
                           : job->kind == WRITE_RUN ? "Saved the run (caml train --resume "
                                                      "goes on with it) to"
                           : "Wrote the words page to", job->path);
        }
    }
  g_clear_pointer (&job->data, caml_run_data_unref);
  if (job->app != NULL)
    {
      g_application_release (job->app);
      g_clear_object (&job->app);
    }
}

/* Writes the run's weights (or words page), or with set_aside those
 * weights, on a worker thread. */
static void
start_write_from (CamlWindow *self, WriteKind kind, const char *path, SetAside *set_aside)
{
  if (self->run == NULL && set_aside == NULL)
    {
      caml_window_show_error (self, "There is no model to save yet.");
      return;
    }
  WriteJob *job = g_new0 (WriteJob, 1);
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  job->kind = kind;
  if (kind == WRITE_RUN)
    {
      /* Taken here, between the run's steps: the weights, the optimizer's
       * state and the experiment as they are now. */
      g_autoptr (GError) error = NULL;
      job->resumable = caml_run_take_resumable (self->run, &error);
      if (job->resumable == NULL)
        {
          g_autofree char *text = g_strdup_printf ("Cannot save the run: %s", error->message);
          caml_window_show_error (self, text);
          write_job_free (job);
          return;
        }
      job->run_serial = self->run_serial;
      job->step = caml_run_resumable_get_step (job->resumable);
    }
  else if (set_aside != NULL)
    {
      job->exp = caml_experiment_copy (set_aside->exp);
      job->data = caml_run_data_ref (set_aside->data);
      job->w = g_memdup2 (set_aside->w, set_aside->n_weights * sizeof (float));
      job->n_weights = set_aside->n_weights;
      job->set_aside = set_aside->serial;
    }
  else
    {
      CamlProgress p;
      caml_run_get_progress (self->run, &p);
      job->exp = caml_experiment_copy (caml_run_get_experiment (self->run));
      job->data = caml_run_data_ref (caml_run_get_data (self->run));
      job->w = caml_run_copy_weights (self->run);
      job->n_weights = caml_run_get_n_weights (self->run);
      job->run_serial = self->run_serial;
      job->step = p.step;
    }
  job->path = g_strdup (path);
  if (app != NULL)
    {
      job->app = G_APPLICATION (g_object_ref (app));
      g_application_hold (job->app);
    }
  g_atomic_int_add (&jobs_in_flight, 1);
  /* The window is the callback's data, not the source object (start_job). */
  GTask *task = g_task_new (NULL, self->cancellable, on_write_done, g_object_ref (self));
  g_task_set_name (task, "caml-window-write");
  g_task_set_task_data (task, job, write_job_free);
  g_task_run_in_thread (task, write_thread);
  g_object_unref (task);
}

void
caml_window_save_weights (CamlWindow *self, const char *path)
{
  start_write_from (self, WRITE_WEIGHTS, path, NULL);
}

void
caml_window_save_run (CamlWindow *self, const char *dir)
{
  start_write_from (self, WRITE_RUN, dir, NULL);
}

void
caml_window_save_set_aside_weights (CamlWindow *self, const char *path)
{
  if (self->set_aside == NULL)
    {
      caml_window_show_error (self, "There are no set-aside weights to save.");
      return;
    }
  start_write_from (self, WRITE_WEIGHTS, path, self->set_aside);
}

gboolean
caml_window_has_set_aside_weights (CamlWindow *self, long *step)
{
  if (self->set_aside != NULL && step != NULL)
    *step = self->set_aside->step;
  return self->set_aside != NULL;
}

void
caml_window_export_words_page (CamlWindow *self, const char *path)
{
  start_write_from (self, WRITE_WORDS, path, NULL);
}

static void
save_set_aside_to (CamlWindow *self, const char *path, gpointer unused)
{
  caml_window_save_set_aside_weights (self, path);
}

static void
action_save_set_aside (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  if (self->set_aside == NULL)
    return;
  const CamlExperiment *exp = self->set_aside->exp;
  g_autofree char *name = g_strdup_printf ("%s-step%ld.weights", exp->name ? exp->name : "model",
                                           self->set_aside->step);
  ask_save_path (self, "Save the Set-Aside Weights", name, save_set_aside_to, NULL);
}

static void
action_drop_set_aside (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  g_clear_pointer (&self->set_aside, set_aside_free);
  set_action_enabled (self, "save-set-aside", FALSE);
  clear_error (self);
}

/* The banner that says the trained weights of the replaced run are kept. */
static void
show_set_aside (CamlWindow *self)
{
  g_autofree char *text =
    g_strdup_printf ("A new run replaced the one trained to step %ld. Its weights are set "
                     "aside: save them, or dismiss this to let them go.", self->set_aside->step);
  caml_window_show_error (self, text);
  gtk_button_set_label (self->banner_button, "_Save Them…");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->banner_button), "win.save-set-aside");
  gtk_widget_set_visible (GTK_WIDGET (self->banner_button), TRUE);
  gtk_button_set_label (self->banner_discard_button, "_Dismiss");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->banner_discard_button),
                                  "win.drop-set-aside");
  gtk_widget_set_visible (GTK_WIDGET (self->banner_discard_button), TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->banner_revealer), "info");
  gtk_image_set_from_icon_name (self->banner_icon, "dialog-information-symbolic");
  set_action_enabled (self, "save-set-aside", TRUE);
  self->set_aside_shown = TRUE;
}

static void
save_weights_to (CamlWindow *self, const char *path, gpointer unused)
{
  caml_window_save_weights (self, path);
}

static void
export_words_page_to (CamlWindow *self, const char *path, gpointer unused)
{
  caml_window_export_words_page (self, path);
}

static void
action_export_words_page (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  g_autofree char *name = g_strdup_printf ("%s-words.html", self->exp->name ? self->exp->name
                                                                              : "experiment");
  ask_save_path (self, "Export Words Page", name, export_words_page_to, NULL);
}

static void
save_run_to (CamlWindow *self, const char *path, gpointer unused)
{
  caml_window_save_run (self, path);
}

/* A folder of the name given, made for the run's files. */
static void
action_save_run (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  CamlProgress p;
  if (self->run == NULL)
    return;
  caml_run_get_progress (self->run, &p);
  g_autofree char *name = g_strdup_printf ("%s-step%ld", self->exp->name ? self->exp->name
                                                                         : "run", p.step);
  ask_save_path (self, "Save Run (a Folder for Its Files)", name, save_run_to, NULL);
}

static void
action_save_weights (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;
  g_autofree char *name = g_strdup_printf ("%s.weights", self->exp->name ? self->exp->name
                                                                         : "model");
  ask_save_path (self, "Save Weights", name, save_weights_to, NULL);
}

static void
load_weights_from (CamlWindow *self, const char *path, gpointer unused)
{
  /* Loaded into a fresh run built on a worker thread: Train continues from
   * these weights. With a run there, the fresh one is built beside it and
   * replaces it only when the file loads (a failed load changes nothing);
   * without one, the run being built (or the next) takes them. */
  /* The weights go into a run on the data in use: data chosen meanwhile
   * would replace it. */
  cancel_choice (self, "weights were loaded meanwhile (choose them again)");
  set_pending_load (self, path, NULL);
  self->announce_load = TRUE;   /* not when a change reloads them into a rebuilt run */
  if (self->run != NULL && self->data != NULL)
    {
      start_job (self, JOB_WEIGHTS);
      update_actions (self);
    }
  else
    prepare_run (self);
}

void
caml_window_load_weights (CamlWindow *self, const char *path)
{
  load_weights_from (self, path, NULL);
}

static void
action_load_weights (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  ask_open_path (CAML_WINDOW (user_data), "Load Weights", "Weights (*.weights)", "*.weights",
                 load_weights_from);
}

static const GActionEntry win_entries[] = {
  { "save-weights", action_save_weights },
  { "save-run", action_save_run },
  { "save-set-aside", action_save_set_aside },
  { "drop-set-aside", action_drop_set_aside },
  { "load-weights", action_load_weights },
  { "train", action_train },
  { "pause", action_pause },
  { "step", action_step },
  { "stop", action_stop },
  { "reset", action_reset },
  { "forget-previous", action_forget_previous },
  { "compare-baseline", action_compare_baseline, NULL, "false" },
  { "save", action_save },
  { "save-as", action_save_as },
  { "add-layer", action_add_layer, "s" },
  { "remove-layer", action_remove_layer },
  { "move-layer-up", action_move_layer_up },
  { "move-layer-down", action_move_layer_down },
  { "select-layer", action_select_layer, "i" },
  { "layer-option", action_layer_option, "(sd)" },
  { "clear-model", action_clear_model },
  { "undo", action_undo },
  { "redo", action_redo },
  { "data", NULL, "s", "'xor'", action_data },
  { "choose-idx", action_choose_idx },
  { "choose-data-files", action_choose_data_files },
  { "reload-data", action_reload_data },
  { "set-lr", action_set_lr, "d" },
  { "set-em-steps", action_set_em_steps, "i" },
  { "log-scale", NULL, NULL, "true", action_log_scale },
  { "sigma-stretch", NULL, NULL, "false", action_sigma_stretch },
  { "export-plot", action_export_plot, "s" },
  { "export-loss", action_export_named },
  { "export-accuracy", action_export_named },
  { "export-sigma-auc", action_export_named },
  { "export-surface", action_export_named },
  { "export-chi", action_export_named },
  { "export-parts", action_export_named },
  { "export-words", action_export_named },
  { "export-sigma", action_export_named },
  { "export-metrics", action_export_metrics },
  { "export-words-page", action_export_words_page },
  { "dismiss-banner", action_dismiss_banner },
  { "plots-page", NULL, "s", "'main'", action_plots_page },
  { "continue-diverged", action_continue_diverged },
  { "ask-close", action_ask_close },
};

/* --------------------------------------------------------- widget events */

static void
on_model_changed (CamlModelEditor *editor, CamlWindow *self)
{
  int n = 0;
  const CamlLayerSpec *specs = caml_model_editor_get_layers (editor, &n);

  if (self->syncing)
    return;
  g_free (self->exp->layers);
  self->exp->layers = g_memdup2 (specs, sizeof *specs * MAX (n, 1));
  self->exp->n_layers = n;
  experiment_changed (self);
  update_actions (self);
}

static void
on_selection_changed (CamlModelEditor *editor, CamlWindow *self)
{
  update_actions (self);
  /* The parts shown follow the selected CA-NN layer. */
  if (self->run != NULL && caml_run_has_surface (self->run))
    {
      caml_run_set_parts_layer (self->run, caml_model_editor_get_selected (editor));
      sample_parts (self);
    }
}

static void
on_data_selected (GtkDropDown *drop, GParamSpec *pspec, CamlWindow *self)
{
  guint i = gtk_drop_down_get_selected (drop);
  if (self->syncing || i == GTK_INVALID_LIST_POSITION)
    return;
  self->syncing = TRUE;   /* the action need not set the drop-down back */
  g_action_group_activate_action (G_ACTION_GROUP (self), "data",
                                  g_variant_new_string (caml_data_kind_names[i]));
  self->syncing = FALSE;
}

static void
on_loss_selected (GtkDropDown *drop, GParamSpec *pspec, CamlWindow *self)
{
  guint i = gtk_drop_down_get_selected (drop);
  if (self->syncing || i == GTK_INVALID_LIST_POSITION || (int) i == (int) self->exp->loss)
    return;
  self->exp->loss = (CamlLossKind) i;
  experiment_changed (self);
}

static void
on_optimizer_selected (GtkDropDown *drop, GParamSpec *pspec, CamlWindow *self)
{
  guint i = gtk_drop_down_get_selected (drop);
  if (self->syncing || i == GTK_INVALID_LIST_POSITION || (int) i == (int) self->exp->optimizer.kind)
    return;
  /* What every optimizer reads stays; the rest are the new one's defaults. */
  double lr = self->exp->optimizer.lr, weight_decay = self->exp->optimizer.weight_decay;
  int em = self->exp->optimizer.em_steps;
  caml_optimizer_config_defaults (&self->exp->optimizer, (CamlOptimizerKind) i);
  self->exp->optimizer.lr = lr;
  self->exp->optimizer.em_steps = em;
  self->exp->optimizer.weight_decay = weight_decay;
  experiment_changed (self);
}

static void
on_lr_changed (GtkSpinButton *spin, CamlWindow *self)
{
  if (!self->syncing)
    g_action_group_activate_action (G_ACTION_GROUP (self), "set-lr",
                                    g_variant_new_double (gtk_spin_button_get_value (spin)));
}

static void
on_em_changed (GtkSpinButton *spin, CamlWindow *self)
{
  if (!self->syncing)
    g_action_group_activate_action (G_ACTION_GROUP (self), "set-em-steps",
                                    g_variant_new_int32 (gtk_spin_button_get_value_as_int (spin)));
}

/* Steps raised past where a finished or stopped run ended: the run goes on
 * from there — paused, Train resumes it — with its optimizer's state, its
 * curves, σ-maps and baseline, instead of starting afresh (Reset does that).
 * FALSE when there is no such run (or it cannot go on): the caller starts
 * a new one. */
static gboolean
extend_run_full (CamlWindow *self, int steps, gboolean pressed);

static gboolean
extend_run (CamlWindow *self, int steps)
{
  return extend_run_full (self, steps, FALSE);
}

/* pressed: Train or Step goes on with it at once (the notice says so, not
 * "Resume"). */
static gboolean
extend_run_full (CamlWindow *self, int steps, gboolean pressed)
{
  CamlProgress p;

  if (self->run == NULL || !self->run_started)
    return FALSE;
  caml_run_get_progress (self->run, &p);
  if ((p.state != CAML_TRAINER_FINISHED && p.state != CAML_TRAINER_STOPPED) || steps <= p.step
      || !caml_run_extend (self->run, steps, NULL))
    return FALSE;
  /* Its baseline goes on beside it (one that diverged stays where it ended). */
  if (self->baseline != NULL)
    caml_run_extend (self->baseline, steps, NULL);
  /* Data chosen meanwhile would replace the run that goes on. */
  cancel_choice (self, "the run went on (choose them again once it has ended)");
  mark_dirty (self);
  update_from_run (self);
  g_autofree char *message = pressed
                             ? g_strdup_printf ("The stopped run goes on from step %ld "
                                                "(Reset starts afresh)", p.step)
                             : g_strdup_printf ("The run goes on from step %ld: Resume (F5)",
                                                p.step);
  show_notice_full (self, message, FALSE);
  return TRUE;
}

static void
on_training_spin_changed (GtkSpinButton *spin, CamlWindow *self)
{
  int v = gtk_spin_button_get_value_as_int (spin);

  if (self->syncing)
    return;
  if (spin == self->batch_spin)
    self->exp->batch_size = v;
  else if (spin == self->steps_spin)
    {
      self->exp->steps = v;
      if (extend_run (self, v))
        return;
    }
  else if (spin == self->eval_spin)
    self->exp->eval_every = v;
  else if (spin == self->seed_spin)
    {
      self->exp->seed = (guint64) v;
      if (data_follow_seed (self->exp))
        invalidate_data (self);
    }
  experiment_changed (self);
}

static void
on_average_spin_changed (GtkSpinButton *spin, CamlWindow *self)
{
  if (self->syncing)
    return;
  self->exp->average_decay = gtk_spin_button_get_value (spin);
  experiment_changed (self);
}

static void
on_weight_decay_changed (GtkSpinButton *spin, CamlWindow *self)
{
  double weight_decay = gtk_spin_button_get_value (spin);

  if (self->syncing || weight_decay == self->exp->optimizer.weight_decay)
    return;
  self->exp->optimizer.weight_decay = weight_decay;
  experiment_changed (self);
}

static void
on_smoothing_changed (GtkRange *range, CamlWindow *self)
{
  self->smoothing = gtk_range_get_value (range);
  if (self->settings != NULL)
    g_settings_set_double (self->settings, "smoothing", self->smoothing);
  rebuild_loss_plot (self);
}

/* Sets every widget from exp. */
static void
sync_widgets (CamlWindow *self)
{
  const CamlExperiment *exp = self->exp;
  sync_data_choice (self);
  self->syncing = TRUE;
  gtk_drop_down_set_selected (self->loss_drop, exp->loss);
  gtk_drop_down_set_selected (self->optimizer_drop, exp->optimizer.kind);
  caml_spin_button_set_positive (self->lr_spin, exp->optimizer.lr);
  gtk_spin_button_set_value (self->em_spin, exp->optimizer.em_steps);
  caml_spin_button_set_positive (self->weight_decay_spin, exp->optimizer.weight_decay);
  gtk_spin_button_set_value (self->batch_spin, exp->batch_size);
  gtk_spin_button_set_value (self->steps_spin, exp->steps);
  gtk_spin_button_set_value (self->eval_spin, exp->eval_every);
  gtk_spin_button_set_value (self->average_spin, exp->average_decay);
  gtk_spin_button_set_value (self->seed_spin, (double) exp->seed);
  self->syncing = FALSE;
}

/* ---------------------------------------------------------------- public */

static void set_experiment (CamlWindow *self, CamlExperiment *exp, const char *path,
                            const char *origin, const char *run_dir);

void
caml_window_set_experiment (CamlWindow *self, CamlExperiment *exp, const char *path,
                            const char *origin)
{
  g_return_if_fail (CAML_IS_WINDOW (self) && exp != NULL);
  set_experiment (self, exp, path, origin, NULL);
}

/* The files of a saved run (`caml train`'s results, or Save Run's). */
CamlExperiment *
caml_window_read_run (const char *dir, GError **error)
{
  g_autofree char *exp_path = g_build_filename (dir, "experiment.json", NULL);
  g_autofree char *weights = g_build_filename (dir, "model.weights", NULL);

  if (!g_file_test (exp_path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                   "%s is not a saved run: it has no experiment.json (a run folder holds "
                   "experiment.json, model.weights and trainer.state)", dir);
      return NULL;
    }
  CamlExperiment *exp = caml_experiment_load_file (exp_path, error);
  if (exp != NULL && !g_file_test (weights, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                   "%s is not a saved run: it has no model.weights (a run that stopped "
                   "before its first step keeps none)", dir);
      g_clear_pointer (&exp, caml_experiment_free);
    }
  return exp;
}

void
caml_window_set_run (CamlWindow *self, CamlExperiment *exp, const char *dir)
{
  g_return_if_fail (CAML_IS_WINDOW (self) && exp != NULL && dir != NULL);
  g_autofree char *exp_path = g_build_filename (dir, "experiment.json", NULL);
  set_experiment (self, exp, exp_path, NULL, dir);
}

gboolean
caml_window_open_run (CamlWindow *self, const char *dir, GError **error)
{
  CamlExperiment *exp = caml_window_read_run (dir, error);
  if (exp == NULL)
    return FALSE;
  caml_window_set_run (self, exp, dir);
  return TRUE;
}

/* run_dir: also load its model.weights and, when it is there, its
 * trainer.state into the run. */
static void
set_experiment (CamlWindow *self, CamlExperiment *exp, const char *path, const char *origin,
                const char *run_dir)
{
  discard_run (self);
  clear_error (self);
  g_clear_pointer (&self->exp, caml_experiment_free);
  self->exp = exp;
  forget_previous_if_other_data (self);
  g_free (self->path);
  self->path = g_strdup (path);
  if (path != NULL)   /* a run goes in as its folder, to open again as a run */
    add_recent (self, run_dir != NULL ? run_dir : path);
  g_free (self->origin);
  self->origin = g_strdup (origin);
  mark_clean (self);
  invalidate_data (self);
  drop_choice (self);   /* data chosen for the experiment that goes */
  self->pending = PENDING_NONE;
  set_pending_load (self, NULL, NULL);
  g_clear_pointer (&self->loaded_weights, g_free);
  g_clear_pointer (&self->loaded_state, g_free);
  g_clear_pointer (&self->opening_run, g_free);
  if (run_dir != NULL)
    {
      g_autofree char *weights = g_build_filename (run_dir, "model.weights", NULL);
      g_autofree char *state = g_build_filename (run_dir, "trainer.state", NULL);
      set_pending_load (self, weights, g_file_test (state, G_FILE_TEST_EXISTS) ? state : NULL);
      self->announce_load = TRUE;
      self->opening_run = g_strdup (run_dir);
    }

  sync_widgets (self);
  request_data (self);
  self->syncing = TRUE;
  caml_model_editor_set_layers (self->model_editor, exp->layers, exp->n_layers);
  self->syncing = FALSE;
  update_title (self);
  prepare_run (self);
  update_actions (self);
}

gboolean
caml_window_load_file (CamlWindow *self, const char *path, GError **error)
{
  CamlExperiment *exp = caml_experiment_load_file (path, error);
  if (exp == NULL)
    return FALSE;
  caml_window_set_experiment (self, exp, path, NULL);
  return TRUE;
}


/* The name the experiment takes when saved to path (NULL: it keeps its own).
 * A name that follows its file — a preset's or "untitled" while no file
 * holds the experiment, or the base name of the file that holds it —
 * follows it to another file: `caml train` names its run folder
 * after it (runs/NAME-seedN), so a preset changed and saved as mine.json
 * no longer trains into the preset's folder. A name set apart from the file
 * stays, and so does the name in a run folder's experiment.json. */
static char *
name_for_new_path (CamlWindow *self, const char *path)
{
  if (g_strcmp0 (self->path, path) == 0)
    return NULL;
  g_autofree char *name = caml_experiment_name_for_path (path);
  if (g_str_equal (name, "experiment") || g_str_equal (name, "")
      || g_strcmp0 (name, self->exp->name) == 0)
    return NULL;
  if (self->path != NULL)
    {
      g_autofree char *current = caml_experiment_name_for_path (self->path);
      if (g_str_equal (current, "experiment") || g_strcmp0 (current, self->exp->name) != 0)
        return NULL;
    }
  else if (!g_str_equal (self->exp->name != NULL ? self->exp->name : "untitled", "untitled")
           && !(self->origin != NULL && g_str_has_prefix (self->origin, "preset ")
                && g_str_equal (self->origin + strlen ("preset "), self->exp->name)))
    return NULL;   /* recovered: its name may be one set apart from its file */
  return g_steal_pointer (&name);
}

gboolean
caml_window_save_to_path (CamlWindow *self, const char *path, GError **error)
{
  g_autofree char *renamed = name_for_new_path (self, path);
  char *name = self->exp->name;
  if (renamed != NULL)
    self->exp->name = renamed;
  gboolean saved = caml_experiment_save_file (self->exp, path, error);
  self->exp->name = name;
  if (!saved)
    return FALSE;
  if (renamed != NULL)
    {
      self->exp->name = g_steal_pointer (&renamed);
      g_free (name);
      /* what Save Run and the exports write carry it too */
      if (self->run != NULL)
        caml_run_set_name (self->run, self->exp->name);
      if (self->baseline != NULL)
        {
          g_autofree char *base = g_strconcat (self->exp->name, "-baseline", NULL);
          caml_run_set_name (self->baseline, base);
        }
    }
  if (g_strcmp0 (self->path, path) != 0)
    {
      g_free (self->path);
      self->path = g_strdup (path);
    }
  mark_clean (self);
  add_recent (self, path);
  update_title (self);
  return TRUE;
}

gboolean
caml_window_is_pristine (CamlWindow *self)
{
  return !self->dirty && !self->run_started;
}

gboolean
caml_window_is_modified (CamlWindow *self)
{
  return self->dirty;
}

const CamlExperiment *
caml_window_get_experiment (CamlWindow *self)
{
  return self->exp;
}

CamlTrainerState
caml_window_get_state (CamlWindow *self)
{
  return self->run_started ? self->progress.state : CAML_TRAINER_IDLE;
}

gboolean
caml_window_has_run (CamlWindow *self)
{
  return self->run_started;
}

const float *
caml_window_get_losses (CamlWindow *self, long *n_steps)
{
  *n_steps = self->n_steps;
  return self->losses;
}

const CamlEvalRow *
caml_window_get_rows (CamlWindow *self, int *n_rows)
{
  *n_rows = self->n_rows;
  return self->rows;
}

guint
caml_window_get_n_events (CamlWindow *self)
{
  return self->events->len;
}

const char *
caml_window_get_data_text (CamlWindow *self)
{
  return gtk_label_get_text (self->data_label);
}

int
caml_window_get_parts_layer (CamlWindow *self)
{
  return self->run != NULL ? self->parts_layer : -1;
}

GtkTextView *
caml_window_get_words_text (CamlWindow *self)
{
  return self->words_text;
}

CamlPlotView *
caml_window_get_plot_view (CamlWindow *self, const char *name)
{
  if (g_str_equal (name, "loss"))
    return self->loss_view;
  if (g_str_equal (name, "surface"))
    return self->surface_view;
  if (g_str_equal (name, "chi"))
    return self->chi_view;
  if (g_str_equal (name, "parts"))
    return self->parts_view;
  if (g_str_equal (name, "words"))
    return self->words_view;
  if (g_str_equal (name, "accuracy"))
    return self->accuracy_view;
  if (g_str_equal (name, "sigma"))
    return self->sigma_view;
  if (g_str_equal (name, "sigma-auc"))
    return self->sigma_auc_view;
  return NULL;
}

int
caml_window_get_sigma_snapshots (CamlWindow *self, double *scrub_upper)
{
  if (scrub_upper != NULL)
    *scrub_upper = gtk_adjustment_get_upper (gtk_range_get_adjustment (GTK_RANGE (self->sigma_scale)));
  return self->n_sigma;
}

GtkRange *
caml_window_get_sigma_scrubber (CamlWindow *self)
{
  return GTK_RANGE (self->sigma_scale);
}

const float *
caml_window_get_baseline_losses (CamlWindow *self, long *n_steps)
{
  *n_steps = self->base_n_steps;
  return self->base_losses;
}

long
caml_window_get_resume_step (CamlWindow *self)
{
  return self->run != NULL ? caml_run_get_checkpoint_step (self->run) : -1;
}

gboolean
caml_window_get_baseline_optimizer (CamlWindow *self, double *lr, int *em_steps)
{
  if (self->baseline == NULL)
    return FALSE;
  *lr = caml_run_get_lr (self->baseline);
  *em_steps = caml_run_get_em_steps (self->baseline);
  return TRUE;
}

gboolean
caml_window_baseline_ended (CamlWindow *self)
{
  if (self->baseline == NULL)
    return FALSE;
  CamlProgress p;
  caml_trainer_get_progress (caml_run_get_trainer (self->baseline), &p);
  return p.state == CAML_TRAINER_FINISHED || p.state == CAML_TRAINER_STOPPED
         || p.state == CAML_TRAINER_FAILED;
}

void
caml_window_get_run_timing (CamlWindow *self, double *steps_per_second, double *sample_seconds)
{
  *steps_per_second = self->progress.seconds > 0
                      ? self->progress.step / self->progress.seconds : 0;
  *sample_seconds = self->run != NULL ? caml_run_get_sample_seconds (self->run) : 0;
}

/* -------------------------------------------------------------- autosave */

/* Every change (mark_dirty) makes sure one timeout is pending: it writes
 * the experiment AUTOSAVE_DELAY_MS after the first unsaved change, on the
 * main thread (caml-autosave.c). Saving, replacing the experiment or closing
 * the window removes the file: only a session that ends without closing its
 * windows leaves one behind. */
static gboolean
autosave_timeout (gpointer data)
{
  CamlWindow *self = data;
  g_autoptr (GError) error = NULL;

  self->autosave_source = 0;
  if (self->exp != NULL && self->dirty && !caml_window_autosave_now (self, &error))
    g_warning ("autosave: %s", error->message);
  return G_SOURCE_REMOVE;
}

static void
schedule_autosave (CamlWindow *self)
{
  if (self->autosave_source == 0)
    self->autosave_source = g_timeout_add_full (G_PRIORITY_DEFAULT, AUTOSAVE_DELAY_MS,
                                                autosave_timeout, g_object_ref (self),
                                                g_object_unref);
}

static void
drop_autosave (CamlWindow *self)
{
  g_clear_handle_id (&self->autosave_source, g_source_remove);
  if (self->autosave_id != NULL)
    caml_autosave_remove (self->autosave_id);
}

gboolean
caml_window_autosave_now (CamlWindow *self, GError **error)
{
  if (self->autosave_id == NULL)
    self->autosave_id = caml_autosave_new_id ();
  return caml_autosave_write (self->autosave_id, self->exp, error);
}

char *
caml_window_get_autosave_path (CamlWindow *self)
{
  return self->autosave_id != NULL ? caml_autosave_path (self->autosave_id) : NULL;
}

void
caml_window_mark_recovered (CamlWindow *self)
{
  self->recovered = TRUE;
  g_free (self->origin);
  self->origin = g_strdup ("recovered, not saved");
  self->dirty = FALSE;   /* mark_dirty retitles */
  mark_dirty (self);
}

gboolean
caml_window_is_recovered (CamlWindow *self)
{
  return self->recovered;
}

void
caml_window_show_recovery (CamlWindow *self, const char *message, gboolean can_recover)
{
  caml_window_show_error (self, message);
  gtk_button_set_label (self->banner_button, "_Recover");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->banner_button),
                                  "app.recover-autosaves");
  gtk_button_set_label (self->banner_discard_button, "_Discard");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->banner_discard_button),
                                  "app.discard-autosaves");
  gtk_widget_set_visible (GTK_WIDGET (self->banner_button), can_recover);
  gtk_widget_set_visible (GTK_WIDGET (self->banner_discard_button), TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->banner_revealer), "info");
  gtk_image_set_from_icon_name (self->banner_icon, "dialog-information-symbolic");
}

/* ------------------------------------------------------------- lifecycle */

/* The side bar's width: 420 px, less in a window narrower than about
 * 1240 px — a third of it, down to 325, at which everything on both of its
 * pages still fits — so that the plots keep their room. A width the user
 * has dragged the divider to is kept (one GTK clamped is not). */
#define SIDEBAR_WIDTH     420
#define SIDEBAR_MIN_WIDTH 325

static void
fit_sidebar (CamlWindow *self)
{
  int width = 0, height = 0;   /* GTK 4.8 takes no NULL for either */
  gtk_window_get_default_size (GTK_WINDOW (self), &width, &height);
  /* Moved from where it was set: by the user — or by GTK, which holds the
   * divider at its max-position in a window narrower than the content
   * needs; that one is fitted again. */
  int position = gtk_paned_get_position (self->main_paned), max_position = 0;
  g_object_get (self->main_paned, "max-position", &max_position, NULL);
  gboolean clamped = position < self->sidebar_width && position >= max_position;
  if (width <= 0 || (position != self->sidebar_width && !clamped))
    return;
  self->sidebar_width = CLAMP (width / 3, SIDEBAR_MIN_WIDTH, SIDEBAR_WIDTH);
  gtk_paned_set_position (self->main_paned, self->sidebar_width);
}

static void
on_default_width (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  fit_sidebar (CAML_WINDOW (object));
}

static void
save_window_size (CamlWindow *self)
{
  int width = 0, height = 0;

  if (self->settings == NULL)
    return;
  gtk_window_get_default_size (GTK_WINDOW (self), &width, &height);
  g_settings_set_int (self->settings, "window-width", width);
  g_settings_set_int (self->settings, "window-height", height);
  g_settings_set_boolean (self->settings, "window-maximized",
                          gtk_window_is_maximized (GTK_WINDOW (self)));
}

enum { RESPONSE_DISCARD = 1, RESPONSE_SAVE = 2 };

/* The close question has been answered (may_close: saved or discarded).
 * For app.quit the window only reports the answer ("close-answered"): the
 * application closes every window once all have answered, and none if one
 * was cancelled. Otherwise it closes now. */
static void
close_answered (CamlWindow *self, gboolean may_close)
{
  if (self->asking_for_quit)
    {
      self->asking_for_quit = FALSE;
      g_signal_emit (self, signals[SIGNAL_CLOSE_ANSWERED], 0, may_close);
      return;
    }
  if (!may_close)
    return;
  self->close_confirmed = TRUE;
  gtk_window_close (GTK_WINDOW (self));
}

static void
save_then_close (CamlWindow *self, const char *path, gpointer unused)
{
  g_autoptr (GError) error = NULL;
  gboolean saved = caml_window_save_to_path (self, path, &error);

  if (!saved)
    caml_window_show_error (self, error->message);
  close_answered (self, saved);
}

static void
save_cancelled (CamlWindow *self)
{
  close_answered (self, FALSE);
}

static void
on_close_response (GtkDialog *dialog, int response, CamlWindow *self)
{
  /* Not transient for the window any longer: the window may be destroyed
   * before the dialog is finalised (it is while the response is emitted),
   * and a dialog that outlives its parent disconnects from it then. */
  gtk_window_set_transient_for (GTK_WINDOW (dialog), NULL);
  gtk_window_destroy (GTK_WINDOW (dialog));
  self->close_dialog = NULL;
  if (response == RESPONSE_SAVE && self->path != NULL)
    save_then_close (self, self->path, NULL);
  else if (response == RESPONSE_SAVE)
    {
      /* Choose a file first: closing (or quitting) goes on once it is
       * written, and stops when the chooser is cancelled. */
      g_autofree char *name = g_strdup_printf ("%s.json", self->exp->name ? self->exp->name
                                                                          : "experiment");
      ask_save_path_full (self, "Save Experiment", name, save_then_close, NULL,
                          save_cancelled);
    }
  else
    close_answered (self, response == RESPONSE_DISCARD);
}

/* Asks whether to save the unsaved changes (Save, Discard or Cancel). */
static void
ask_close (CamlWindow *self)
{
  g_autofree char *name = display_name (self);

  if (self->close_dialog != NULL)
    {
      gtk_window_present (GTK_WINDOW (self->close_dialog));
      return;
    }
  /* GtkAlertDialog is GTK 4.10; on 4.8 this is the message dialog. */
  GtkWidget *dialog =
    gtk_message_dialog_new (GTK_WINDOW (self), GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
                            GTK_MESSAGE_QUESTION, GTK_BUTTONS_NONE,
                            "Save the changes to “%s” before closing?", name);
  gtk_message_dialog_format_secondary_text (GTK_MESSAGE_DIALOG (dialog),
                                            "Unsaved changes to the experiment are lost "
                                            "otherwise.");
  gtk_dialog_add_buttons (GTK_DIALOG (dialog), "_Cancel", GTK_RESPONSE_CANCEL,
                          "_Discard", RESPONSE_DISCARD, "_Save", RESPONSE_SAVE, NULL);
  gtk_dialog_set_default_response (GTK_DIALOG (dialog), RESPONSE_SAVE);
  g_signal_connect (dialog, "response", G_CALLBACK (on_close_response), self);
  self->close_dialog = dialog;
  gtk_window_present (GTK_WINDOW (self));
  gtk_window_present (GTK_WINDOW (dialog));
}

/* win.ask-close, for app.quit: asks about unsaved changes (at once
 * answering yes when there are none) and reports the answer with
 * "close-answered", without closing. */
static void
action_ask_close (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlWindow *self = user_data;

  commit_pending_edit (self);
  if (!self->dirty || self->close_confirmed)
    {
      g_signal_emit (self, signals[SIGNAL_CLOSE_ANSWERED], 0, TRUE);
      return;
    }
  self->asking_for_quit = TRUE;
  ask_close (self);
}

static gboolean
caml_window_close_request (GtkWindow *window)
{
  CamlWindow *self = CAML_WINDOW (window);

  commit_pending_edit (self);
  if (self->dirty && !self->close_confirmed)
    {
      ask_close (self);
      return TRUE;
    }
  save_window_size (self);
  drop_autosave (self);   /* saved, discarded or unchanged: nothing to recover */
  /* Sources that hold a reference would keep the closed window (and its
   * trainer) alive until they fire. */
  g_clear_handle_id (&self->focus_source, g_source_remove);
  g_clear_handle_id (&self->notice_source, g_source_remove);
  g_clear_handle_id (&self->build_source, g_source_remove);
  return GTK_WINDOW_CLASS (caml_window_parent_class)->close_request (window);
}

static void
caml_window_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  CamlWindow *self = CAML_WINDOW (object);

  switch (prop_id)
    {
    case PROP_CLOSE_CONFIRMED:
      g_value_set_boolean (value, self->close_confirmed);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
caml_window_set_property (GObject *object, guint prop_id, const GValue *value,
                          GParamSpec *pspec)
{
  CamlWindow *self = CAML_WINDOW (object);

  switch (prop_id)
    {
    case PROP_CLOSE_CONFIRMED:
      self->close_confirmed = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
caml_window_dispose (GObject *object)
{
  CamlWindow *self = CAML_WINDOW (object);

  /* The focus leaves while the window is whole: a spin button that has it
   * re-reads its text on leaving (GTK does) and may change a setting, whose
   * handler needs the experiment that is freed below. */
  gtk_window_set_focus (GTK_WINDOW (self), NULL);
  /* Jobs still under way end without touching the window. */
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->word_spans, g_array_unref);   /* discard_run: disposing */
  discard_run (self);   /* joins the trainer thread: no more notifications */
  forget_previous (self);
  g_clear_pointer (&self->set_aside, set_aside_free);
  invalidate_data (self);
  g_clear_pointer (&self->pending_weights, g_free);
  g_clear_pointer (&self->loaded_weights, g_free);
  g_clear_pointer (&self->pending_state, g_free);
  g_clear_pointer (&self->loaded_state, g_free);
  g_clear_pointer (&self->opening_run, g_free);
  g_clear_pointer (&self->files_chosen, g_strfreev);
  g_clear_pointer (&self->clean_exp, caml_experiment_free);
  g_clear_pointer (&self->exp, caml_experiment_free);
  g_clear_pointer (&self->path, g_free);
  g_clear_pointer (&self->origin, g_free);
  g_clear_pointer (&self->error_text, g_free);
  g_clear_pointer (&self->events, g_array_unref);
  /* A window destroyed without closing keeps its autosave file. */
  g_clear_handle_id (&self->autosave_source, g_source_remove);
  g_clear_handle_id (&self->focus_source, g_source_remove);
  g_clear_handle_id (&self->notice_source, g_source_remove);
  g_clear_handle_id (&self->build_source, g_source_remove);
  g_clear_pointer (&self->notice, g_free);
  g_clear_pointer (&self->status, g_free);
  g_clear_pointer (&self->last_notice, g_free);
  g_clear_pointer (&self->autosave_id, g_free);
  gtk_widget_dispose_template (GTK_WIDGET (self), CAML_TYPE_WINDOW);
  G_OBJECT_CLASS (caml_window_parent_class)->dispose (object);
}

static void
clear_event (gpointer p)
{
  g_free (((Event *) p)->text);
}

static void
caml_window_class_init (CamlWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = caml_window_dispose;
  object_class->get_property = caml_window_get_property;
  object_class->set_property = caml_window_set_property;
  GTK_WINDOW_CLASS (klass)->close_request = caml_window_close_request;

  /* Closing goes through without asking about unsaved changes (app.quit
   * sets it on the windows whose changes were discarded). */
  properties[PROP_CLOSE_CONFIRMED] =
    g_param_spec_boolean ("close-confirmed", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  /* The answer to win.ask-close: TRUE when the changes were saved or
   * discarded (or there were none), FALSE when cancelled. */
  signals[SIGNAL_CLOSE_ANSWERED] =
    g_signal_new ("close-answered", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                  NULL, NULL, G_TYPE_NONE, 1, G_TYPE_BOOLEAN);

  g_type_ensure (CAML_TYPE_MODEL_EDITOR);
  g_type_ensure (CAML_TYPE_PLOT_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/caml/Workbench/ui/caml-window.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, CamlWindow, name)
  BIND (title_label);
  BIND (subtitle_label);
  BIND (presets_button);
  BIND (train_button);
  BIND (train_label);
  BIND (recent_submenu);
  BIND (threads_submenu);
  BIND (banner_revealer);
  BIND (banner_icon);
  BIND (banner_label);
  BIND (banner_button);
  BIND (banner_discard_button);
  BIND (model_editor);
  BIND (data_drop);
  BIND (data_label);
  BIND (loss_drop);
  BIND (optimizer_drop);
  BIND (lr_spin);
  BIND (em_spin);
  BIND (weight_decay_spin);
  BIND (batch_spin);
  BIND (steps_spin);
  BIND (eval_spin);
  BIND (average_spin);
  BIND (seed_spin);
  BIND (smoothing_scale);
  BIND (loss_view);
  BIND (surface_view);
  BIND (chi_view);
  BIND (parts_view);
  BIND (words_view);
  BIND (words_text);
  BIND (accuracy_view);
  BIND (sigma_box);
  BIND (sigma_side);
  BIND (sigma_view);
  BIND (sigma_scale);
  BIND (sigma_auc_view);
  BIND (bottom_grid);
  BIND (plots_stack);
  BIND (plots_switcher);
  BIND (main_toggle);
  BIND (parts_toggle);
  BIND (words_toggle);
  BIND (progress_bar);
  BIND (status_label);
  BIND (load_spinner);
  BIND (main_paned);
#undef BIND
  /* Only looked up by the tests (whether the window needs to scroll). */
  gtk_widget_class_bind_template_child_full (widget_class, "sidebar_scroller", FALSE, 0);
  gtk_widget_class_bind_template_child_full (widget_class, "plots_scroller", FALSE, 0);
}

static void
set_strings (GtkDropDown *drop, const char *const *strings)
{
  GtkStringList *list = gtk_string_list_new (strings);
  gtk_drop_down_set_model (drop, G_LIST_MODEL (list));
  g_object_unref (list);
}

/* GTK 4.8 leaves the keyboard focus in a popover menu that has closed when
 * the item chosen was in a submenu (☰ → Style → Dark): on a widget no
 * longer mapped, where key presses reach nothing, not even the window's
 * shortcuts (F5, Ctrl+R, Ctrl+?), until a click puts it somewhere. Once the
 * close has settled, the focus goes back to the nearest mapped ancestor that
 * takes it (the menu button, as after a top-level item), or to none. */
static gboolean
focus_rescue (gpointer data)
{
  CamlWindow *self = data;
  GtkWidget *focus = gtk_window_get_focus (GTK_WINDOW (self));

  self->focus_source = 0;
  if (focus == NULL || gtk_widget_get_mapped (focus))
    return G_SOURCE_REMOVE;
  for (GtkWidget *w = gtk_widget_get_parent (focus); w != NULL && w != GTK_WIDGET (self);
       w = gtk_widget_get_parent (w))
    if (gtk_widget_get_mapped (w) && gtk_widget_grab_focus (w))
      return G_SOURCE_REMOVE;
  gtk_window_set_focus (GTK_WINDOW (self), NULL);
  return G_SOURCE_REMOVE;
}

static void
on_focus_widget (CamlWindow *self, GParamSpec *pspec, gpointer unused)
{
  GtkWidget *focus = gtk_window_get_focus (GTK_WINDOW (self));

  if (focus != NULL && !gtk_widget_get_mapped (focus) && self->focus_source == 0)
    self->focus_source = g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, focus_rescue,
                                          g_object_ref (self), g_object_unref);
}

static void
caml_window_init (CamlWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  /* The banner's text can be selected with the mouse (to copy a command)
   * but never takes the keyboard focus: a focused selectable label selects
   * all of its text. (GtkLabel:selectable turns focusable on.) */
  gtk_widget_set_focusable (GTK_WIDGET (self->banner_label), FALSE);

  self->events = g_array_new (FALSE, TRUE, sizeof (Event));
  g_array_set_clear_func (self->events, clear_event);
  self->log_scale = TRUE;
  self->chosen_page = g_intern_static_string ("main");
  self->saved_step = -1;
  self->smoothing = gtk_range_get_value (GTK_RANGE (self->smoothing_scale));
  self->progress.state = CAML_TRAINER_IDLE;
  g_action_map_add_action_entries (G_ACTION_MAP (self), win_entries,
                                   G_N_ELEMENTS (win_entries), self);

  /* Every choice comes from the engine's own tables. */
  self->cancellable = g_cancellable_new ();
  refresh_data_titles (self);
  set_strings (self->loss_drop, caml_loss_names);
  set_strings (self->optimizer_drop, caml_optimizer_names);

  make_words_tags (self);
  g_signal_connect (self->words_text, "query-tooltip", G_CALLBACK (on_words_text_tooltip), self);
  g_signal_connect (self->model_editor, "model-changed", G_CALLBACK (on_model_changed), self);
  g_signal_connect (self->model_editor, "selection-changed",
                    G_CALLBACK (on_selection_changed), self);
  self->sidebar_width = gtk_paned_get_position (self->main_paned);
  g_signal_connect (self, "notify::default-width", G_CALLBACK (on_default_width), NULL);
  g_signal_connect (self->data_drop, "notify::selected", G_CALLBACK (on_data_selected), self);
  g_signal_connect (self->loss_drop, "notify::selected", G_CALLBACK (on_loss_selected), self);
  g_signal_connect (self->optimizer_drop, "notify::selected",
                    G_CALLBACK (on_optimizer_selected), self);
  /* Any rate an experiment file takes (> 0), shown as the file has it:
   * before its value-changed handler, which sees the rounded step. */
  caml_spin_button_make_positive (self->lr_spin, "learning rate", on_value_corrected, self);
  g_signal_connect (self->lr_spin, "value-changed", G_CALLBACK (on_lr_changed), self);
  g_signal_connect (self->em_spin, "value-changed", G_CALLBACK (on_em_changed), self);
  caml_spin_button_make_nonnegative (self->weight_decay_spin, "weight decay",
                                     on_value_corrected, self);
  g_signal_connect (self->weight_decay_spin, "value-changed",
                    G_CALLBACK (on_weight_decay_changed), self);
  g_signal_connect (self->batch_spin, "value-changed", G_CALLBACK (on_training_spin_changed), self);
  g_signal_connect (self->steps_spin, "value-changed", G_CALLBACK (on_training_spin_changed), self);
  g_signal_connect (self->eval_spin, "value-changed", G_CALLBACK (on_training_spin_changed), self);
  g_signal_connect (self->average_spin, "value-changed", G_CALLBACK (on_average_spin_changed), self);
  g_signal_connect (self->seed_spin, "value-changed", G_CALLBACK (on_training_spin_changed), self);
  g_signal_connect (self->model_editor, "value-corrected", G_CALLBACK (on_option_corrected),
                    self);
  {
    struct { GtkSpinButton *spin; const char *name; } checked[] = {
      { self->em_spin, "em_steps" },
      { self->batch_spin, "batch size" }, { self->steps_spin, "steps" },
      { self->eval_spin, "evaluate every" }, { self->average_spin, "weight average" },
      { self->seed_spin, "seed" },
    };
    for (guint i = 0; i < G_N_ELEMENTS (checked); i++)
      caml_spin_button_check_range (checked[i].spin, checked[i].name, on_value_corrected, self);
  }
  g_signal_connect (self->smoothing_scale, "value-changed", G_CALLBACK (on_smoothing_changed),
                    self);
  caml_plot_view_set_hover_func (self->loss_view, loss_hover, self);
  /* In the loss card's corner, where it fits whole (the toolbar above the
   * plots cut it to "H…" at 1024 px beside the page switcher). */
  caml_plot_view_set_hint (self->loss_view, "hover to read values");
  g_signal_connect (self->sigma_scale, "value-changed", G_CALLBACK (on_sigma_scrubbed), self);
  self->sigma_shown = -1;
  self->sigma_follow = TRUE;
  self->parts_layer = -1;
  self->shown_kind = -1;
  caml_plot_view_set_placeholder (self->words_view, "words are shown for text data and a "
                                  "gate over words (CA-BSFE, CA-ATT, CA-RNN)");

  self->exp = caml_experiment_new_default ();
  g_signal_connect (self, "notify::focus-widget", G_CALLBACK (on_focus_widget), NULL);
}

CamlWindow *
caml_window_new (GtkApplication *app)
{
  CamlWindow *self = g_object_new (CAML_TYPE_WINDOW, "application", app, NULL);

  if (CAML_IS_APPLICATION (app))
    {
      self->settings = caml_application_get_settings (CAML_APPLICATION (app));
      gtk_menu_button_set_menu_model (self->presets_button,
                                      caml_application_get_presets_menu (CAML_APPLICATION (app)));
      g_menu_append_section (self->recent_submenu, NULL,
                             caml_application_get_recent_menu (CAML_APPLICATION (app)));
      g_menu_append_section (self->threads_submenu, NULL,
                             caml_application_get_threads_menu (CAML_APPLICATION (app)));
    }
  if (self->settings != NULL)
    {
      GAction *log_action = g_action_map_lookup_action (G_ACTION_MAP (self), "log-scale");
      gtk_window_set_default_size (GTK_WINDOW (self),
                                   g_settings_get_int (self->settings, "window-width"),
                                   g_settings_get_int (self->settings, "window-height"));
      if (g_settings_get_boolean (self->settings, "window-maximized"))
        gtk_window_maximize (GTK_WINDOW (self));
      self->log_scale = g_settings_get_boolean (self->settings, "log-scale");
      g_simple_action_set_state (G_SIMPLE_ACTION (log_action),
                                 g_variant_new_boolean (self->log_scale));
      self->sigma_stretch = g_settings_get_boolean (self->settings, "sigma-stretch");
      g_simple_action_set_state (G_SIMPLE_ACTION (g_action_map_lookup_action (
                                   G_ACTION_MAP (self), "sigma-stretch")),
                                 g_variant_new_boolean (self->sigma_stretch));
      gtk_range_set_value (GTK_RANGE (self->smoothing_scale),
                           g_settings_get_double (self->settings, "smoothing"));
    }
  caml_window_set_experiment (self, caml_experiment_copy (self->exp), NULL, "new experiment");
  /* Train has the focus at first: Enter trains. */
  gtk_window_set_focus (GTK_WINDOW (self), GTK_WIDGET (self->train_button));
  return self;
}
