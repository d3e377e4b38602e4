/* gradcheck.c — central-difference gradient checks shared by the tests. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gradcheck.h"
#include "parallel.h"

#define EPS 1e-2
#define TOLERANCE 2e-2

CamlLayerSpec
caml_test_spec (const char *name, ...)
{
  CamlLayerSpec spec = { 0 };
  spec.ops = caml_layer_lookup (name);
  assert_non_null (spec.ops);
  caml_layer_ops_default_options (spec.ops, spec.opt);
  va_list ap;
  va_start (ap, name);
  const char *key;
  while ((key = va_arg (ap, const char *)) != NULL)
    {
      double value = va_arg (ap, double);
      int idx = caml_layer_ops_option_index (spec.ops, key);
      assert_true (idx >= 0);
      spec.opt[idx] = value;
    }
  va_end (ap);
  return spec;
}

static double
relative_error (double analytic, double numeric)
{
  return fabs (analytic - numeric) / fmax (fabs (analytic) + fabs (numeric), 1e-2);
}

static void
check_close (double analytic, double numeric, const char *what, size_t index)
{
  double err = relative_error (analytic, numeric);
  if (err > TOLERANCE)
    fail_msg ("%s[%zu]: analytic %.6g vs numeric %.6g (relative error %.3g)",
              what, index, analytic, numeric, err);
}

static double
weighted_sum (const float *out, const float *r, size_t count)
{
  double s = 0.0;
  for (size_t i = 0; i < count; i++)
    s += (double) out[i] * r[i];
  return s;
}

static double
numeric_derivative (CamlModel *model, float *value, double eps, const float *x,
                    const float *r, int n, size_t out_size)
{
  float saved = *value;
  *value = (float) (saved + eps);
  double lp = weighted_sum (caml_model_forward (model, x, n), r, out_size);
  *value = (float) (saved - eps);
  double lm = weighted_sum (caml_model_forward (model, x, n), r, out_size);
  *value = saved;
  return (lp - lm) / (2 * eps);
}

/* A difference step that straddles a ReLU kink gives a wrong numeric
 * derivative; a smaller step almost never does, so a mismatch must persist
 * at every step to fail. The smallest is for a kink inside a recurrence,
 * where a pre-activation can sit within 10⁻³ of it; below ~3·10⁻⁴ the
 * float forward's rounding would dominate. */
static void
check_one (CamlModel *model, float *value, double analytic, const float *x,
           const float *r, int n, size_t out_size, const char *what, size_t index)
{
  static const double steps[] = { EPS, EPS / 10, EPS / 30 };
  double numeric = 0.0;
  for (size_t k = 0; k < G_N_ELEMENTS (steps); k++)
    {
      numeric = numeric_derivative (model, value, steps[k], x, r, n, out_size);
      if (relative_error (analytic, numeric) <= TOLERANCE)
        return;
    }
  check_close (analytic, numeric, what, index);
}

/* The analytic gradients (and the output) on `threads` threads, every
 * piece of work split; the central differences on one thread, which also
 * gives the output to compare with. */
static void
gradcheck_layer_once (const CamlLayerSpec *spec, const CamlShape *shape, int n,
                      guint32 seed, int threads)
{
  GRand *rng = g_rand_new_with_seed (seed);
  GError *error = NULL;
  CamlModel *model = caml_model_new (shape, spec, 1, rng, &error);
  if (model == NULL)
    fail_msg ("building %s: %s", spec->ops->name, error->message);
  /* Non-zero everywhere, so zero-initialised biases and defaults are probed too. */
  for (size_t i = 0; i < model->n_weights; i++)
    model->w[i] += (float) g_rand_double_range (rng, -0.3, 0.3);

  CamlLayer *layer = model->layers[0];
  size_t in_size = (size_t) n * caml_shape_size (shape);
  size_t out_size = (size_t) n * caml_shape_size (&layer->out);
  float *x = g_new (float, in_size);
  float *r = g_new (float, out_size);
  float *dx = g_new0 (float, in_size);
  for (size_t i = 0; i < in_size; i++)
    x[i] = (float) g_rand_double_range (rng, -1, 1);

  /* Sequences: random lengths (one of them 0 when n > 2, one full), padded
   * steps zero. Tokens: ids of the vocabulary, some out of it, then padding. */
  int *lengths = NULL;
  if (shape->kind != CAML_SHAPE_DENSE)
    {
      int t_max = shape->dims[0];
      size_t step = shape->kind == CAML_SHAPE_SEQUENCE ? (size_t) shape->dims[1] : 1;
      lengths = g_new (int, n);
      for (int i = 0; i < n; i++)
        {
          lengths[i] = i == 0 ? t_max : (i == 2 ? 0 : g_rand_int_range (rng, 1, t_max + 1));
          for (int t = 0; t < t_max; t++)
            for (size_t j = 0; j < step; j++)
              {
                float *v = &x[((size_t) i * t_max + t) * step + j];
                if (t >= lengths[i])
                  *v = shape->kind == CAML_SHAPE_TOKENS ? (float) CAML_TOKEN_PAD : 0.0f;
                else if (shape->kind == CAML_SHAPE_TOKENS)
                  *v = g_rand_int_range (rng, 0, 8) == 0
                       ? (float) CAML_TOKEN_OOV
                       : (float) g_rand_int_range (rng, 0, shape->vocab);
              }
        }
      if (shape->kind == CAML_SHAPE_SEQUENCE)
        caml_model_set_sequence_lengths (model, lengths);
    }
  for (size_t i = 0; i < out_size; i++)
    r[i] = (float) g_rand_double_range (rng, -1, 1);

  caml_set_threads (threads);
  caml_parallel_set_fine (threads > 1);
  const float *out = caml_model_forward (model, x, n);
  float *split_out = g_memdup2 (out, out_size * sizeof (float));
  caml_model_zero_grad (model);
  layer->ops->backward (layer, dx, r, x, out, n);
  float *dw = g_memdup2 (model->dw, model->n_weights * sizeof (float));
  caml_parallel_set_fine (FALSE);
  caml_set_threads (1);
  out = caml_model_forward (model, x, n);
  for (size_t i = 0; i < out_size; i++)
    if (fabs (out[i] - split_out[i]) > 1e-5 * fmax (1.0, fabs (out[i])))
      fail_msg ("%s: output[%zu] on %d threads %.8g, on one %.8g", spec->ops->name, i,
                threads, split_out[i], out[i]);

  for (size_t i = 0; i < model->n_weights; i++)
    check_one (model, &model->w[i], dw[i], x, r, n, out_size, "d(weight)", i);
  if (shape->kind != CAML_SHAPE_TOKENS)   /* ids have no gradient */
    for (size_t i = 0; i < in_size; i++)
      check_one (model, &x[i], dx[i], x, r, n, out_size, "d(input)", i);

  g_free (lengths);
  g_free (split_out);
  g_free (dw);
  g_free (x);
  g_free (r);
  g_free (dx);
  caml_model_free (model);
  g_rand_free (rng);
}

void
caml_gradcheck_layer (const CamlLayerSpec *spec, const CamlShape *shape, int n,
                      guint32 seed)
{
  /* On 1, 2 and 3 threads (an odd split), every piece of work split however
   * small it is, so the parts' boundaries and sums are checked too. */
  for (int threads = 1; threads <= 3; threads++)
    gradcheck_layer_once (spec, shape, n, seed, threads);
  caml_set_threads (0);
}

void
caml_gradcheck_model (CamlModel *model, CamlLossKind loss, const float *x,
                      const float *target, int n)
{
  int d = (int) caml_shape_size (caml_model_output_shape (model));
  float *dpred = g_new (float, (size_t) n * d);
  const float *pred = caml_model_forward (model, x, n);
  caml_loss_compute (loss, dpred, pred, target, n, d);
  caml_model_zero_grad (model);
  caml_model_backward (model, x, dpred, n);
  float *dw = g_memdup2 (model->dw, model->n_weights * sizeof (float));

  for (size_t i = 0; i < model->n_weights; i++)
    {
      float saved = model->w[i];
      model->w[i] = saved + EPS;
      double lp = caml_loss_compute (loss, NULL, caml_model_forward (model, x, n), target, n, d);
      model->w[i] = saved - EPS;
      double lm = caml_loss_compute (loss, NULL, caml_model_forward (model, x, n), target, n, d);
      model->w[i] = saved;
      check_close (dw[i], (lp - lm) / (2 * EPS), "d(loss)/d(weight)", i);
    }
  g_free (dw);
  g_free (dpred);
}
