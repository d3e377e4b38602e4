/* cli-bench.c — `caml bench`: training throughput of a convolutional
 * preset, where the time goes, and peak memory. Not a test: numbers depend
 * on the machine and what else runs on it. */
#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <cblas.h>
#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "caml.h"
#include "cli.h"
#include "cli-common.h"

/* Most training steps of one run, as `caml train --steps`. */
#define MAX_STEPS 1000000000

typedef struct {
  long   warmup;
  gint64 t_start;     /* when step `warmup` was done */
  gint64 t_end;
  long   end_step;
} Clock;

static void
on_progress (const CamlProgress *p, gpointer user_data)
{
  Clock *clock = user_data;
  gint64 now = g_get_monotonic_time ();
  if (p->step == clock->warmup && clock->t_start == 0)
    clock->t_start = now;
  if (p->step > clock->end_step)
    {
      clock->end_step = p->step;
      clock->t_end = now;
    }
}

/* Random images with MNIST's sparsity (about 80 % zeros) and random labels:
 * the arithmetic is the same whatever the pixels are. */
static CamlDataset *
synthetic_images (int n, guint32 seed)
{
  CamlShape shape = caml_shape_image (1, 28, 28);
  CamlDataset *set = caml_dataset_new (n, &shape, 1, 10);
  GRand *rng = g_rand_new_with_seed (seed);
  for (size_t i = 0; i < (size_t) n * 784; i++)
    set->x[i] = g_rand_double (rng) < 0.8 ? 0.0f : (float) g_rand_double (rng);
  for (int i = 0; i < n; i++)
    set->y[i] = (float) g_rand_int_range (rng, 0, 10);
  g_rand_free (rng);
  return set;
}

typedef struct {
  double forward_s, backward_s, forward_flops, backward_flops;
  int    forward_threads, backward_threads;   /* the most a pass ran on */
} LayerTime;

/* Whether --synthetic's 28×28 images can stand in for the experiment's
 * data: image data only. */
static gboolean
takes_synthetic (const CamlDataConfig *data)
{
  return data->kind == CAML_DATA_MNIST || data->kind == CAML_DATA_FASHION_MNIST
         || data->kind == CAML_DATA_IDX;
}

/* Names the data a run trains on: the builtin set, or the files an
 * experiment names (training images and labels, or training texts). */
static char *
data_description (const CamlDataConfig *data)
{
  switch (data->kind)
    {
    case CAML_DATA_IDX:
      return g_strdup_printf ("idx %s, %s", data->idx_paths[0], data->idx_paths[1]);
    case CAML_DATA_TEXT:
      return g_strdup_printf ("text %s", data->text_paths[0]);
    default:
      return g_strdup (caml_data_kind_names[data->kind]);
    }
}

/* What the tables show for a figure that could not be measured. */
#define DASH "–"

/* amount per second; NAN when no time was measured (a step or a layer
 * faster than the microsecond clock). */
static double
per_second (double amount, double seconds)
{
  return seconds > 0 ? amount / seconds : NAN;
}

/* GFLOP/s of a layer; NAN when it has no FLOP count or ran faster than the
 * clock could tell. */
static double
gflops (double flops, double seconds)
{
  return flops > 0 ? per_second (flops, seconds) / 1e9 : NAN;
}

/* value with `decimals` decimals, right-aligned in `width` columns after a
 * space, or a dash when it is not finite. */
static void
print_cell (int width, int decimals, double value)
{
  if (isfinite (value))
    g_print (" %*.*f", width, decimals, value);
  else  /* the dash is one column of three bytes */
    g_print (" %*s", width + (int) strlen (DASH) - 1, DASH);
}

/* The values the experiment's layers have for an option, in layer order
 * without repeats ("5", "8/3"); NULL when no layer has it. */
static char *
option_values (const CamlExperiment *exp, const char *key)
{
  GString *out = NULL;
  double seen[64];
  int n_seen = 0;
  for (int i = 0; i < exp->n_layers; i++)
    {
      int k = caml_layer_ops_option_index (exp->layers[i].ops, key);
      if (k < 0)
        continue;
      double v = exp->layers[i].opt[k];
      gboolean repeat = FALSE;
      for (int j = 0; j < n_seen; j++)
        repeat = repeat || seen[j] == v;
      if (repeat)
        continue;
      if (n_seen < (int) G_N_ELEMENTS (seen))
        seen[n_seen++] = v;
      if (out == NULL)
        out = g_string_new (NULL);
      g_string_append_printf (out, "%s%g", out->len > 0 ? "/" : "", v);
    }
  return out != NULL ? g_string_free (out, FALSE) : NULL;
}

/* The kernel and depth the model was built with, for the report's first
 * line: ", kernel 5, depth 16" (empty for a model without them). */
static char *
kernel_depth (const CamlExperiment *exp)
{
  g_autofree char *kernel = option_values (exp, "kernel");
  g_autofree char *depth = option_values (exp, "depth");
  return g_strdup_printf ("%s%s%s%s", kernel ? ", kernel " : "", kernel ? kernel : "",
                          depth ? ", depth " : "", depth ? depth : "");
}

/* A step count given on the command line: 1…MAX_STEPS. */
static gboolean
check_steps (const char *option, int value, GError **error)
{
  if (value >= 1 && value <= MAX_STEPS)
    return TRUE;
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
               "%s %d: expected a number of steps in 1…%d", option, value, MAX_STEPS);
  return FALSE;
}

/* Valid steps of each sample of a token batch x (n, T): the position of
 * its first padding id, as caml_model_forward finds them. */
static void
token_lengths (int *lengths, const float *x, int n, int t_max)
{
  for (int i = 0; i < n; i++)
    {
      const float *row = x + (size_t) i * t_max;
      int t = 0;
      while (t < t_max && row[t] != (float) CAML_TOKEN_PAD)
        t++;
      lengths[i] = t;
    }
}

/* Runs `steps` training steps of `batch` samples layer by layer with a
 * clock around each call, as the trainer runs them: dropout on, token
 * batches padded from the ragged text sets with their lengths, sequence
 * inputs with the model's lengths (all T unless set). */
static gboolean
profile_steps (CamlModel *model, const CamlExperiment *exp, const CamlDataset *train,
               int batch, int steps, LayerTime *times, double *loss_s, double *optim_s,
               GError **error)
{
  int n = batch;
  size_t in = caml_shape_size (&train->x_shape);
  int d = (int) caml_shape_size (caml_model_output_shape (model));
  gboolean tokens = model->input.kind == CAML_SHAPE_TOKENS;
  g_autofree float *dpred = g_new (float, (size_t) n * d);
  /* text sets hold no x: their rows are padded into xbuf */
  g_autofree float *xbuf = train->x == NULL ? g_new (float, (size_t) n * in) : NULL;
  g_autofree int *lengths = tokens ? g_new (int, n) : NULL;
  /* A second optimizer state beside the timed run's: it may not fit. */
  CamlOptimizer *opt = caml_optimizer_try_new (&exp->optimizer, model->n_weights, error);
  if (opt == NULL)
    return FALSE;
  caml_model_forward (model, caml_dataset_rows (train, 0, n, xbuf), n); /* sizes every buffer */

  for (int s = 0; s < steps; s++)
    {
      int start = (int) ((gint64) s * n % MAX (1, train->n - n));
      const float *x = caml_dataset_rows (train, start, n, xbuf);      /* (n, in) */
      const float *y = train->y + (size_t) start * train->y_width;     /* (n, y_width) */
      if (tokens)
        token_lengths (lengths, x, n, model->input.dims[0]);
      caml_model_zero_grad (model);
      const float *inp = x;
      for (int i = 0; i < model->n_layers; i++)
        {
          CamlLayer *layer = model->layers[i];
          layer->training = TRUE;
          layer->lengths = tokens ? lengths : model->seq_lengths;
          caml_parallel_watch_reset ();
          gint64 t = g_get_monotonic_time ();
          layer->ops->forward (layer, model->acts[i], inp, n);
          times[i].forward_s += (g_get_monotonic_time () - t) / 1e6;
          /* the calling thread alone when no pass split the work */
          times[i].forward_threads = MAX (times[i].forward_threads,
                                          MAX (1, caml_parallel_watch_most ()));
          inp = model->acts[i];
        }
      gint64 t = g_get_monotonic_time ();
      caml_loss_compute (exp->loss, dpred, inp, y, n, d);
      *loss_s += (g_get_monotonic_time () - t) / 1e6;
      /* as the trainer leaves sparse_grads on: zeroing and the optimizer
       * handle the rows of token tables the batch reached, and only those */
      if (tokens && model->sparse_grads)
        caml_model_record_touched (model, x, lengths, n);
      const float *dout = dpred;
      for (int i = model->n_layers - 1; i >= 0; i--)
        {
          CamlLayer *layer = model->layers[i];
          float *dinp = i > 0 ? model->dacts[i - 1] : NULL;
          caml_parallel_watch_reset ();
          t = g_get_monotonic_time ();
          layer->ops->backward (layer, dinp, dout, i > 0 ? model->acts[i - 1] : x,
                                model->acts[i], n);
          times[i].backward_s += (g_get_monotonic_time () - t) / 1e6;
          times[i].backward_threads = MAX (times[i].backward_threads,
                                           MAX (1, caml_parallel_watch_most ()));
          dout = dinp;
        }
      t = g_get_monotonic_time ();
      caml_optimizer_step (opt, model, s);
      *optim_s += (g_get_monotonic_time () - t) / 1e6;
    }
  for (int i = 0; i < model->n_layers; i++)
    {
      model->layers[i]->training = FALSE;
      if (model->layers[i]->ops->flops)
        {
          double f, b;
          model->layers[i]->ops->flops (model->layers[i], n, &f, &b);
          times[i].forward_flops = f * steps;
          times[i].backward_flops = b * steps;
        }
    }
  caml_optimizer_free (opt);
  return TRUE;
}

/* The most thread counts one bench compares. */
#define MAX_COUNTS 16

/* What `caml bench --json` writes; times is NULL before the profile. */
typedef struct {
  const char      *experiment, *data, *kernels;
  int              batch;
  int              n_counts;
  int              counts[MAX_COUNTS];        /* thread counts, as given */
  double           steps_per_s[MAX_COUNTS];   /* the timed run at each */
  double           peak_gflops[MAX_COUNTS];   /* --roofline: sgemm at each, else 0 */
  double           peak_at[CAML_MAX_THREADS + 1];   /* the same by thread count, and at
                                                     * the counts layers ran on */
  double           peak_mb;
  const CamlModel *model;
  const LayerTime *times;     /* (model->n_layers), at the last count */
  int              profile;   /* steps the times are summed over */
} Figures;

/* The share of the roofline at the threads it ran on that the profile's
 * layer reached: NAN without one. */
static double
of_peak (const Figures *f, double gflops, int threads)
{
  double peak = threads >= 1 && threads <= CAML_MAX_THREADS ? f->peak_at[threads] : 0;
  return peak > 0 ? gflops / peak : NAN;
}

static gboolean
write_json (const char *path, const Figures *f, GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "experiment");
  json_builder_add_string_value (b, f->experiment);
  json_builder_set_member_name (b, "data");
  json_builder_add_string_value (b, f->data);
  json_builder_set_member_name (b, "batch");
  json_builder_add_int_value (b, f->batch);
  json_builder_set_member_name (b, "kernels");
  json_builder_add_string_value (b, f->kernels);
  json_builder_set_member_name (b, "cores");
  json_builder_add_int_value (b, caml_get_cores ());
  /* the last count's figures at the top, as before there was a list */
  int last = f->n_counts - 1;
  json_builder_set_member_name (b, "threads");
  json_builder_add_int_value (b, f->counts[last]);
  caml_cli_json_add_number (b, "steps_per_second", f->steps_per_s[last]);
  caml_cli_json_add_number (b, "images_per_second", f->steps_per_s[last] * f->batch);
  caml_cli_json_add_number (b, "peak_memory_mb", f->peak_mb);
  json_builder_set_member_name (b, "scaling");
  json_builder_begin_array (b);
  for (int i = 0; i < f->n_counts; i++)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "threads");
      json_builder_add_int_value (b, f->counts[i]);
      caml_cli_json_add_number (b, "steps_per_second", f->steps_per_s[i]);
      caml_cli_json_add_number (b, "images_per_second", f->steps_per_s[i] * f->batch);
      caml_cli_json_add_number (b, "speedup", f->steps_per_s[i] / f->steps_per_s[0]);
      if (f->peak_gflops[i] > 0)
        caml_cli_json_add_number (b, "sgemm_peak_gflops", f->peak_gflops[i]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  if (f->times != NULL)
    {
      json_builder_set_member_name (b, "layers");
      json_builder_begin_array (b);
      for (int i = 0; i < f->model->n_layers; i++)
        {
          const LayerTime *t = &f->times[i];
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "layer");
          json_builder_add_string_value (b, f->model->layers[i]->ops->name);
          caml_cli_json_add_number (b, "forward_ms", 1e3 * t->forward_s / f->profile);
          caml_cli_json_add_number (b, "backward_ms", 1e3 * t->backward_s / f->profile);
          if (t->forward_flops > 0)
            {
              double fg = gflops (t->forward_flops, t->forward_s);
              double bg = gflops (t->backward_flops, t->backward_s);
              caml_cli_json_add_number (b, "forward_gflops", fg);
              caml_cli_json_add_number (b, "backward_gflops", bg);
              json_builder_set_member_name (b, "forward_threads");
              json_builder_add_int_value (b, t->forward_threads);
              json_builder_set_member_name (b, "backward_threads");
              json_builder_add_int_value (b, t->backward_threads);
              if (f->peak_gflops[last] > 0)
                {
                  caml_cli_json_add_number (b, "forward_of_peak",
                                            of_peak (f, fg, t->forward_threads));
                  caml_cli_json_add_number (b, "backward_of_peak",
                                            of_peak (f, bg, t->backward_threads));
                }
            }
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
  return caml_cli_json_write (b, path, error);
}

/* --threads LIST into figures->counts: whole counts, each once; the
 * engine's count when NULL. */
static gboolean
parse_counts (const char *text, Figures *figures, GError **error)
{
  if (text == NULL)
    {
      figures->counts[0] = caml_get_threads ();
      figures->n_counts = 1;
      return TRUE;
    }
  g_auto (GStrv) items = g_strsplit (text, ",", -1);
  for (int i = 0; items[i] != NULL; i++)
    {
      int n;
      g_autoptr (GError) local = NULL;
      if (!caml_threads_parse (g_strstrip (items[i]), &n, &local))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--threads %s: %s",
                       text, local->message);
          return FALSE;
        }
      for (int j = 0; j < figures->n_counts; j++)
        if (figures->counts[j] == n)
          {
            g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                         "--threads %s: %d is given twice", text, n);
            return FALSE;
          }
      if (figures->n_counts == MAX_COUNTS)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--threads %s: at most %d counts", text, MAX_COUNTS);
          return FALSE;
        }
      figures->counts[figures->n_counts++] = n;
    }
  return TRUE;
}

int
caml_cli_bench (int argc, char **argv)
{
  g_autofree char *preset = NULL, *out_path = NULL;
  g_auto (GStrv) args = NULL, layer_options = NULL;
  int kernel = CAML_CLI_NOT_GIVEN, depth = CAML_CLI_NOT_GIVEN;
  int warmup = 50, steps = 500, profile = 100;
  gboolean synthetic = FALSE, roofline = FALSE;
  g_autofree char *threads_text = NULL;
  const GOptionEntry entries[] = {
    { "preset", 'p', 0, G_OPTION_ARG_STRING, &preset,
      "The experiment to time (default: mnist-ca-cnn-nopool)", "NAME" },
    { "kernel", 'k', 0, G_OPTION_ARG_INT, &kernel,
      "Kernel size (default: the experiment's; 8 without --preset or a file)", "K" },
    { "depth", 'd', 0, G_OPTION_ARG_INT, &depth,
      "Depth (default: the experiment's; 8 without --preset or a file)", "D" },
    { "layer-option", 'O', 0, G_OPTION_ARG_STRING_ARRAY, &layer_options,
      "Any other layer option, as in `caml train`", "KEY=VALUE" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &warmup, "Untimed steps first (default 50)", "N" },
    { "steps", 'n', 0, G_OPTION_ARG_INT, &steps, "Timed training steps (default 500)", "N" },
    { "profile-steps", 0, 0, G_OPTION_ARG_INT, &profile,
      "Steps of the per-layer breakdown (default 100)", "N" },
    { "synthetic", 0, 0, G_OPTION_ARG_NONE, &synthetic,
      "Random 28×28 images instead of the experiment's image data (same arithmetic)", NULL },
    { "threads", 0, 0, G_OPTION_ARG_STRING, &threads_text,
      "Thread counts to time, e.g. 1,2,4,8 (default: $CAML_THREADS, else every core); a scaling table compares them", "LIST" },
    { "roofline", 0, 0, G_OPTION_ARG_NONE, &roofline,
      "Also measure this machine's matrix-product peak at each thread count, and each layer's share of it", NULL },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &out_path, "Also write the figures as JSON", "FILE" },
    /* no arg_description: the context's parameter string names FILE.json */
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args, NULL, NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[--preset NAME | FILE.json] - time training");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Trains the experiment (default: mnist-ca-cnn-nopool with kernel 8, depth 8 —\n"
    "one CA-CNN layer + dense 128 + softmax 10, batch 100, the paper's recipe and\n"
    "bench/torch_reference.py's model; a --preset or FILE.json keeps its own\n"
    "kernel and depth unless -k or -d is given) through the real trainer\n"
    "thread and reports steps/s and images/s (texts/s, samples/s) over --steps after --warmup, then\n"
    "times each layer's forward and backward separately and reports GFLOP/s of\n"
    "the convolution and dense kernels, and the process's peak memory.\n"
    "The first line of the report names the experiment's data and the kernel\n"
    "and depth it was built with; MNIST\n"
    "and Fashion-MNIST presets fall back to --synthetic images when\n"
    "`datasets/fetch` has not been run. --json FILE is checked before the run.\n"
    "Threads: the engine cuts each product, convolution and optimizer pass\n"
    "into as many parts as the thread count and runs them on OpenMP threads\n"
    "(at most one per core); --threads 1,2,4 times each count in turn, from\n"
    "the same starting weights, and prints steps/s and the speed-up over the\n"
    "first. The profile runs at the last count. --roofline times the engine's\n"
    "matrix product on 1024² and 2048² matrices at each count (the machine's\n"
    "peak, about 2 s each) and gives each layer's GFLOP/s as a share of the\n"
    "peak at the threads its passes ran on (its last column, forward /\n"
    "backward: a product too small to split runs on one thread).\n"
    "The first lines name the kernels that run (`caml --version`).\n"
    "bench/torch_reference.py --threads 1,2,4 times the same model in PyTorch.");
  g_autoptr (GError) error = NULL;
  if (!caml_cli_parse_options (ctx, entries, &argc, &argv, &error))
    {
      g_printerr ("caml bench: %s\n", error->message);
      return 2;
    }
  if (!check_steps ("--warmup", warmup, &error) || !check_steps ("--steps", steps, &error)
      || !check_steps ("--profile-steps", profile, &error))
    {
      g_printerr ("caml bench: %s\n", error->message);
      return 2;
    }
  Figures figures = { .n_counts = 0 };
  if (!parse_counts (threads_text, &figures, &error))
    {
      g_printerr ("caml bench: %s\n", error->message);
      return 2;
    }
  /* The trainer runs both: their sum is the run's step count. */
  if ((gint64) warmup + steps > MAX_STEPS)
    {
      g_printerr ("caml bench: --warmup %d + --steps %d: at most %d steps in all\n",
                  warmup, steps, MAX_STEPS);
      return 2;
    }
  g_autofree char *source = NULL;
  CamlExperiment *exp = caml_cli_load_experiment ("bench", args ? preset : preset ? preset
                                                  : "mnist-ca-cnn-nopool", args, &source,
                                                  &error);
  if (exp == NULL)
    {
      g_printerr ("caml bench: %s\n", error->message);
      return caml_cli_is_usage_error (error) ? 2 : 1;
    }
  exp->steps = warmup + steps;
  exp->eval_every = exp->steps;
  int status = 1;
  CamlDataset *train = NULL, *test = NULL;
  CamlModel *model = NULL;
  CamlTrainer *trainer = NULL;
  LayerTime *times = NULL;
  char *data_name = NULL;
  char *sizes = NULL;   /* ", kernel K, depth D" */
  char *kernels = NULL;
  float *start = NULL;  /* the weights every thread count starts from */
  /* The default experiment is timed with kernel 8, depth 8 (as
   * bench/torch_reference.py); one that was named keeps its own unless -k or
   * -d says otherwise. */
  gboolean named = preset != NULL || args != NULL;
  if (kernel == CAML_CLI_NOT_GIVEN && !named)
    kernel = 8;
  if (depth == CAML_CLI_NOT_GIVEN && !named)
    depth = 8;
  if (!caml_cli_apply_layer_options (exp, layer_options, kernel, depth, &error))
    {
      g_printerr ("caml bench: %s\n", error->message);
      status = 2;
      goto out;
    }
  /* The JSON is written after a run that may take minutes. */
  if (out_path && !caml_cli_check_output_file (out_path, &error))
    {
      g_printerr ("caml bench: --json %s\n", error->message);
      goto out;
    }
  if (synthetic && !takes_synthetic (&exp->data))
    {
      g_printerr ("caml bench: --synthetic: makes 28×28 images, but %s trains on %s data\n",
                  exp->name ? exp->name : "the experiment", caml_data_kind_names[exp->data.kind]);
      status = 2;
      goto out;
    }
  data_name = synthetic ? g_strdup ("synthetic") : data_description (&exp->data);
  if (!synthetic)
    {
      exp->data.test_limit = 100;   /* the end-of-run evaluation is not what we time */
      if (!caml_experiment_load_datasets (exp, &train, &test, &error))
        {
          /* Only the builtin image sets may not have been fetched yet. */
          if (exp->data.kind != CAML_DATA_MNIST && exp->data.kind != CAML_DATA_FASHION_MNIST)
            {
              caml_cli_name_experiment (&error, source);
              g_printerr ("caml bench: %s\n", error->message);
              goto out;
            }
          g_printerr ("caml bench: %s\ncaml bench: using --synthetic images instead\n",
                      error->message);
          g_clear_error (&error);
          synthetic = TRUE;
          g_free (data_name);
          data_name = g_strdup ("synthetic");
        }
    }
  if (synthetic)
    {
      train = synthetic_images (10000, 1);
      test = synthetic_images (100, 2);
    }
  model = caml_experiment_build_model_for (exp, train, &error);
  if (model == NULL)
    {
      caml_cli_name_experiment (&error, source);
      g_printerr ("caml bench: %s\n", error->message);
      goto out;
    }

  int batch = MIN (exp->batch_size > 0 ? exp->batch_size : train->n, train->n); /* as the trainer */
  kernels = caml_describe_kernels ();
  sizes = kernel_depth (exp);
  g_print ("%s%s, data: %s (%d training samples), batch %d, %zu weights\n", exp->name, sizes,
           data_name, train->n, batch, model->n_weights);
  g_print ("%s; %d cores\n", kernels, caml_get_cores ());
  fflush (stdout);
  figures.experiment = exp->name;
  figures.data = data_name;
  figures.kernels = kernels;
  figures.batch = batch;
  figures.model = model;
  figures.profile = profile;
  /* Every count starts from the same weights and batches. */
  start = g_memdup2 (model->w, model->n_weights * sizeof (float));
  long timed = 0;
  double seconds = 0;
  for (int c = 0; c < figures.n_counts; c++)
    {
      memcpy (model->w, start, model->n_weights * sizeof (float));
      caml_set_threads (figures.counts[c]);
      Clock clock = { .warmup = warmup };
      trainer = caml_trainer_new (exp, model, train, test);
      caml_trainer_set_progress_func (trainer, on_progress, &clock, 1);
      if (!caml_trainer_start (trainer, FALSE, &error))
        {
          caml_cli_name_experiment (&error, source);
          g_printerr ("caml bench: %s\n", error->message);
          goto out;
        }
      CamlTrainerState state = caml_trainer_join (trainer);
      if (state != CAML_TRAINER_FINISHED)
        {
          g_autoptr (GError) run_error = caml_trainer_get_error (trainer);
          g_printerr ("caml bench: the run did not finish: %s\n",
                      run_error ? run_error->message : "stopped");
          goto out;
        }
      g_clear_pointer (&trainer, caml_trainer_free);
      seconds = (clock.t_end - clock.t_start) / 1e6;
      timed = clock.end_step - warmup;
      figures.steps_per_s[c] = clock.t_start > 0 ? per_second (timed, seconds) : NAN;
    }
  struct rusage usage;
  getrusage (RUSAGE_SELF, &usage);   /* the peak of the timed runs, before the profile's */
  figures.peak_mb = usage.ru_maxrss / 1024.0;
  const char *unit = train->x_shape.ndim == 3 ? "images" : train->texts != NULL
                     || train->tokens != NULL ? "texts" : "samples";
  int last = figures.n_counts - 1;
  if (figures.n_counts == 1)
    {
      g_print ("training:");
      print_cell (0, 1, figures.steps_per_s[0]);
      g_print (" steps/s,");
      print_cell (0, 0, figures.steps_per_s[0] * batch);
      g_print (" %s/s (%ld steps in %.2f s after %d warm-up) on %d threads\n", unit, timed,
               seconds, warmup, figures.counts[0]);
    }
  else
    {
      g_print ("training, %d steps after %d warm-up at each thread count:\n", steps, warmup);
      g_autofree char *per_s = g_strdup_printf ("%s/s", unit);
  g_print ("  %7s %10s %10s %9s\n", "threads", "steps/s", per_s, "speed-up");
      for (int c = 0; c < figures.n_counts; c++)
        {
          g_print ("  %7d", figures.counts[c]);
          print_cell (10, 1, figures.steps_per_s[c]);
          print_cell (10, 0, figures.steps_per_s[c] * batch);
          print_cell (8, 2, figures.steps_per_s[c] / figures.steps_per_s[0]);
          g_print ("×\n");
        }
    }
  g_print ("peak memory (max RSS): %.0f MB\n\n", figures.peak_mb);
  fflush (stdout);
  if (out_path && !write_json (out_path, &figures, &error))
    {
      g_printerr ("caml bench: %s\n", error->message);
      goto out;
    }

  caml_set_threads (figures.counts[last]);
  times = g_new0 (LayerTime, model->n_layers);
  double loss_s = 0, optim_s = 0;
  if (!profile_steps (model, exp, train, batch, profile, times, &loss_s, &optim_s, &error))
    {
      g_printerr ("caml bench: the profile: %s\n", error->message);
      goto out;
    }

  if (roofline)
    {
      g_print ("roofline: the engine's matrix product (1024² and 2048²), GFLOP/s\n");
      g_print ("  %7s %10s\n", "threads", "GFLOP/s");
      for (int c = 0; c < figures.n_counts; c++)
        {
          figures.peak_gflops[c] = caml_sgemm_peak (figures.counts[c], 2.0);
          figures.peak_at[figures.counts[c]] = figures.peak_gflops[c];
          g_print ("  %7d", figures.counts[c]);
          print_cell (10, 1, figures.peak_gflops[c] > 0 ? figures.peak_gflops[c] : NAN);
          g_print ("\n");
          fflush (stdout);
        }
      /* and at any other count a layer's passes ran on (a product too
       * small to split runs on one thread) */
      for (int i = 0; i < model->n_layers; i++)
        for (int pass = 0; pass < 2 && times[i].forward_flops > 0; pass++)
          {
            int used = pass == 0 ? times[i].forward_threads : times[i].backward_threads;
            if (used < 1 || used > CAML_MAX_THREADS || figures.peak_at[used] != 0)
              continue;
            figures.peak_at[used] = caml_sgemm_peak (used, 2.0);
            if (figures.peak_at[used] <= 0)
              figures.peak_at[used] = -1;   /* tried */
            g_print ("  %7d", used);
            print_cell (10, 1, figures.peak_at[used] > 0 ? figures.peak_at[used] : NAN);
            g_print ("   (a layer's threads)\n");
            fflush (stdout);
          }
      g_print ("\n");
    }

  gboolean shares = figures.peak_gflops[last] > 0;
  g_print ("per step over %d profiled steps on %d threads:\n", profile, figures.counts[last]);
  g_print ("  %-3s %-12s %10s %10s %12s %12s", "", "layer", "fwd ms", "bwd ms",
           "fwd GFLOP/s", "bwd GFLOP/s");
  if (shares)
    g_print (" %9s %9s %8s", "fwd peak", "bwd peak", "threads");
  g_print ("\n");
  double total_ms = 0;
  for (int i = 0; i < model->n_layers; i++)
    {
      LayerTime *t = &times[i];
      double f_ms = 1e3 * t->forward_s / profile, b_ms = 1e3 * t->backward_s / profile;
      total_ms += f_ms + b_ms;
      g_print ("  %-3d %-12s %10.3f %10.3f", i, model->layers[i]->ops->name, f_ms, b_ms);
      double fg = gflops (t->forward_flops, t->forward_s);
      double bg = gflops (t->backward_flops, t->backward_s);
      print_cell (12, 1, fg);
      print_cell (12, 1, bg);
      if (shares)
        {
          double fp = of_peak (&figures, fg, t->forward_threads);
          double bp = of_peak (&figures, bg, t->backward_threads);
          print_cell (8, 0, 100 * fp);
          g_print (isfinite (fp) ? "%%" : " ");
          print_cell (8, 0, 100 * bp);
          g_print (isfinite (bp) ? "%%" : " ");
          if (isfinite (fg))
            g_print (" %4d / %d", t->forward_threads, t->backward_threads);
        }
      g_print ("\n");
    }
  total_ms += 1e3 * (loss_s + optim_s) / profile;
  g_print ("  loss %.3f ms, optimizer %.3f ms, total %.3f ms per step\n",
           1e3 * loss_s / profile, 1e3 * optim_s / profile, total_ms);

  figures.times = times;
  if (out_path && !write_json (out_path, &figures, &error))
    {
      g_printerr ("caml bench: %s\n", error->message);
      goto out;
    }
  status = 0;

out:
  g_free (start);
  g_free (kernels);
  g_free (sizes);
  g_free (data_name);
  g_free (times);
  caml_trainer_free (trainer);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_experiment_free (exp);
  return status;
}
