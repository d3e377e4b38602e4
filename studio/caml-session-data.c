/* caml-session-data.c — the session's data: what they are, loading them
 * (through jobs, caml-session-jobs.c), the data chosen in the picker while
 * they load, and what the model is checked against. */
#include <math.h>
#include <string.h>

#include "caml-session-private.h"
#include "caml-data-source.h"
#include "caml-format.h"
#include "figures.h"
#include "report.h"

/* ---------------------------------------------------------------- data */

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
 * and the data's description and shapes stay those of the last data of
 * the same kind, which are the same. Every data set is made or read on a
 * worker thread (JOB_DATA), never on the main thread. */
gboolean
kind_from_files (CamlDataKind kind)
{
  return kind != CAML_DATA_XOR && kind != CAML_DATA_SURFACE && kind != CAML_DATA_RNN_SANITY;
}

const char *
caml_session_evaluated_on (CamlSession *self)
{
  return caml_report_evaluated_on (self->exp);
}

static const char *
kind_title (CamlDataKind kind)
{
  return kind == CAML_DATA_IDX ? "IDX" : kind == CAML_DATA_TEXT ? "text"
         : caml_data_source_title (kind);
}

const char *
data_title (CamlSession *self)
{
  return kind_title (self->exp->data.kind);
}

/* What is said while data of a kind are loaded or made: "Loading MNIST…",
 * "Making the XOR (4 points) data…" (lower: for the progress line). */
static char *
kind_loading_text (CamlDataKind kind, gboolean lower)
{
  if (kind_from_files (kind))
    return g_strdup_printf ("%s %s…", lower ? "loading" : "Loading", kind_title (kind));
  return g_strdup_printf ("%s the %s data…", lower ? "making" : "Making", kind_title (kind));
}

/* … exp's data. */
char *
data_loading_text (CamlSession *self, gboolean lower)
{
  return kind_loading_text (self->exp->data.kind, lower);
}

/* … the data chosen (files_loading): "loading MNIST…", "loading the
 * chosen files…". */
char *
choice_loading_text (CamlSession *self)
{
  if (self->files_kind == CAML_DATA_IDX || self->files_kind == CAML_DATA_TEXT)
    return g_strdup ("loading the chosen files…");
  return kind_loading_text (self->files_kind, TRUE);
}

/* The data's description and the shapes the model is checked against. */
static void
set_data_text (CamlSession *self, const char *text, gboolean error, const CamlShape *shape,
               int want, const char *shape_error)
{
  g_free (self->data_text);
  self->data_text = g_strdup (text);
  self->data_text_error = error;
  self->has_data_shape = shape != NULL;
  if (shape != NULL)
    self->data_shape = *shape;
  self->data_want = want;
  g_free (self->data_shape_error);
  self->data_shape_error = g_strdup (shape_error);
  session_data_changed (self);
}

/* Describes self->data. */
static void
show_data (CamlSession *self)
{
  const CamlDataset *train = self->data->train, *test = self->data->test;
  g_autofree char *shape = caml_shape_to_string (&train->x_shape);
  int want = train->n_classes > 0 ? train->n_classes : train->y_width;
  g_autofree char *text =
    g_strdup_printf ("%d training and %d %s samples, input %s, %s with %d %s",
                     train->n, test != NULL ? test->n : 0, caml_session_evaluated_on (self), shape,
                     train->n_classes > 0 ? "classification" : "regression", want,
                     train->n_classes > 0 ? "classes" : want == 1 ? "output" : "outputs");
  const CamlDataConfig *data = &self->exp->data;
  g_autofree char *dir = data->kind == CAML_DATA_IDX && data->idx_paths[0] != NULL
                         ? g_path_get_dirname (data->idx_paths[0]) : NULL;
  g_autofree char *full =
    dir != NULL
    ? g_strdup_printf ("%s, from %s", text, dir)
    : data->kind == CAML_DATA_TEXT && data->text_paths[0] != NULL && data->text_paths[1] != NULL
    ? g_strdup_printf ("%s, from %s and %s", text, data->text_paths[0], data->text_paths[1])
    : g_strdup (text);
  self->shown_kind = (int) data->kind;
  set_data_text (self, full, FALSE, &train->x_shape, want, NULL);
}

/* exp's data are on their way (the model is checked against no shapes
 * meanwhile). */
void
show_data_loading (CamlSession *self)
{
  g_autofree char *text = data_loading_text (self, FALSE);
  self->shown_kind = -1;
  set_data_text (self, text, FALSE, NULL, 0, NULL);
}

const char *
caml_session_get_data_text (CamlSession *self, gboolean *error_shown)
{
  if (error_shown != NULL)
    *error_shown = self->data_text_error;
  return self->data_text;
}

const CamlShape *
caml_session_get_data_shape (CamlSession *self, int *want_outputs, const char **title,
                             const char **error)
{
  if (want_outputs != NULL)
    *want_outputs = self->data_want;
  if (title != NULL)
    *title = data_title (self);
  if (error != NULL)
    *error = self->data_shape_error;
  return self->has_data_shape ? &self->data_shape : NULL;
}

/* The width of the output of exp's model on input (0: it does not build). */
static int
model_outputs (CamlSession *self, const CamlShape *input)
{
  if (self->exp->n_layers == 0)
    return 0;
  CamlModel *model = caml_model_new_shapes (input, self->exp->layers, self->exp->n_layers, NULL);
  if (model == NULL)
    return 0;
  int outputs = (int) caml_shape_size (caml_model_output_shape (model));
  caml_model_free (model);
  return outputs;
}

gboolean
caml_session_model_fits (CamlSession *self)
{
  if (!self->has_data_shape)
    return FALSE;
  int outputs = model_outputs (self, &self->data_shape);
  /* Two classes also fit one output: a logit under the sigmoid loss. */
  return outputs > 0 && (self->data_want <= 0 || outputs == self->data_want
                         || (self->data_want == 2 && outputs == 1));
}

/* After the data changed through the picker or the file choosers: the
 * plot domain and the loss follow the new data. */
void
adapt_to_data (CamlSession *self)
{
  default_domain (self->exp->data.kind, self->data->train, self->exp->plot_domain);
  /* Classes: softmax over the outputs, or for two classes and one output
   * (every text preset) its sigmoid — a classification loss already chosen
   * that fits is kept. Values: squared error. */
  int classes = self->data->train->n_classes;
  int outputs = model_outputs (self, &self->data->train->x_shape);   /* 0: does not build */
  gboolean sigmoid = classes == 2
                     && (outputs == 1 || (outputs == 0 && self->exp->loss == CAML_LOSS_SIGMOID_XENT));
  CamlLossKind loss = classes == 0 ? CAML_LOSS_MSE
                      : sigmoid ? CAML_LOSS_SIGMOID_XENT : CAML_LOSS_SOFTMAX_XENT;
  if (loss != self->exp->loss)
    {
      self->exp->loss = loss;
      session_experiment_changed (self);
    }
}

void
install_data (CamlSession *self, CamlRunData *data)
{
  self->data = data;
  self->data_loading = FALSE;
  show_data (self);
}

void
set_data_error (CamlSession *self, const char *message)
{
  self->data_error = g_strdup (message);
  self->data_loading = FALSE;
  g_autofree char *text = g_strdup_printf ("Cannot read the %s data: %s", data_title (self),
                                           message);
  const char *shown = message != NULL && strstr (message, "not fetched") ? message : text;
  self->shown_kind = -1;
  set_data_text (self, shown, TRUE, NULL, 0, message);
  session_error (self, shown);
}

/* Makes sure exp's data sets are loaded or being loaded, on a worker
 * thread (JOB_DATA, which builds the run too): read from files, or made
 * for the built-in sets, quietly (start_build_quiet) unless weights are to
 * be loaded. A fetched set that is not on this computer is reported with
 * the command that fetches it, before any attempt to read it. */
void
request_data (CamlSession *self)
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

/* The previous run's curves go: Forget the Previous Run, or other data
 * (another kind, other IDX files), whose losses do not compare. */
void
forget_previous (CamlSession *self)
{
  g_clear_pointer (&self->prev_losses, g_free);
  g_clear_pointer (&self->prev_rows, g_free);
  g_clear_pointer (&self->prev_exp, caml_experiment_free);
  self->prev_n_steps = 0;
  self->prev_n_rows = 0;
}

/* …and go when the experiment's data are no longer those it trained on
 * (other files, grid, split, limits…). */
void
forget_previous_if_other_data (CamlSession *self)
{
  if (self->prev_exp != NULL && !caml_data_config_equal (&self->prev_exp->data, &self->exp->data))
    forget_previous (self);
}

/* The data sets no longer match exp: forget them (a load under way is
 * dropped when it ends). */
void
invalidate_data (CamlSession *self)
{
  g_clear_pointer (&self->data, caml_run_data_unref);
  g_clear_pointer (&self->data_error, g_free);
  self->data_loading = FALSE;
  self->data_serial++;
}

/* Whether exp's data follow its seed: the surface's split does, unless
 * data.split_seed fixes it. */
gboolean
data_follow_seed (const CamlExperiment *exp)
{
  return exp->data.kind == CAML_DATA_SURFACE && !exp->data.has_split_seed;
}

/* The data chosen that are being loaded no longer count: the job drops
 * them when it ends. */
void
drop_choice (CamlSession *self)
{
  self->files_serial++;
  self->files_loading = FALSE;
}

CamlDataKind
caml_session_get_data_choice (CamlSession *self)
{
  return self->files_loading ? self->files_kind
         : self->exp != NULL ? self->exp->data.kind : (CamlDataKind) 0;
}

/* The picker shows the data chosen while they load, else those in use. */
void
sync_data_choice (CamlSession *self)
{
  session_data_choice (self);
}

/* Data chosen that are not used (they did not load, or something came
 * first): the picker goes back to the data in use, and the banner says
 * why — "Cannot use the MNIST data: …", "Cannot use these text files: …". */
void
refuse_choice (CamlSession *self, CamlDataKind kind, const char *why)
{
  g_autofree char *text =
    kind == CAML_DATA_IDX || kind == CAML_DATA_TEXT
    ? g_strdup_printf ("Cannot use these %s files: %s", kind == CAML_DATA_IDX ? "IDX" : "text",
                       why)
    : g_strdup_printf ("Cannot use the %s data: %s", kind_title (kind), why);
  self->pending = PENDING_NONE;   /* Train pressed for them does not start */
  sync_data_choice (self);
  session_error (self, text);
}

void
caml_session_cancel_choice (CamlSession *self, const char *why)
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
  session_changed (self);
}

void
caml_session_use_data_kind (CamlSession *self, CamlDataKind kind)
{
  g_autofree char *missing = caml_data_source_missing (kind);
  if (missing != NULL || self->exp->data.kind == kind)
    {
      caml_session_cancel_choice (self, NULL);
      sync_data_choice (self);
      if (missing != NULL)
        session_error (self, missing);
      return;
    }
  session_clear_error (self);
  choose_data (self, kind, NULL, 0);
}

void
caml_session_choose_files (CamlSession *self, CamlDataKind kind, const char *const *files,
                           int n_files)
{
  session_clear_error (self);
  choose_data (self, kind, files, n_files);
}

/* Reads the data in use again (after `datasets/fetch`, or a file changed);
 * data chosen that are being read are not read a second time (job_done). */
void
caml_session_reload_data (CamlSession *self)
{
  session_clear_error (self);
  discard_run (self);
  invalidate_data (self);
  prepare_run (self);
}


/* ------------------------------------------------- the surface's controls */

void
caml_session_set_train_fraction (CamlSession *self, double train_fraction)
{
  if (self->exp->data.kind != CAML_DATA_SURFACE || !isfinite (train_fraction))
    return;
  train_fraction = CLAMP (train_fraction, 0.001, 0.999);
  if (train_fraction == self->exp->data.train_fraction)
    return;
  self->exp->data.train_fraction = train_fraction;
  invalidate_data (self);
  experiment_changed (self);
}

void
caml_session_set_noise (CamlSession *self, double noise)
{
  if (self->exp->data.kind != CAML_DATA_SURFACE || !isfinite (noise))
    return;
  noise = CLAMP (noise, 0.0, (double) CAML_MAX_NOISE);
  if (noise == self->exp->data.noise)
    return;
  self->exp->data.noise = noise;
  invalidate_data (self);
  experiment_changed (self);
}
