/* average.h — private to the engine: an exponential moving average of a
 * model's weights, kept by the trainer for `training.average_decay`.
 *
 * After t updates the average is e_t = d_t e_{t−1} + (1 − d_t) w_t, e_0 = w_0,
 * with d_t = min (d, (1 + t) / (10 + t)) — TensorFlow's
 * ExponentialMovingAverage with num_updates: early on the average spans the
 * steps so far instead of leaning on the initial weights.
 *
 * With a sparse optimizer on token input (caml_optimizer_is_sparse), a token
 * table's rows change only in the steps whose batch holds the token, so their
 * average is brought up to date lazily: a row untouched since step s has
 * w_t = w_s and therefore e_t = w_s + (Π_{k=s+1..t} d_k)(e_s − w_s). The
 * result equals the dense average up to rounding (a test checks it). */
#pragma once

#include "caml-private.h"

typedef struct _CamlAverage CamlAverage;

/* decay in (0, 1); the average starts at the model's current weights. sparse:
 * the optimizer changes only the rows with gradients (see above). */
CamlAverage *caml_average_new (const CamlModel *model, double decay, gboolean sparse);
void         caml_average_free (CamlAverage *avg);
/* The first t with d_t = decay: d_t = (1 + t) / (10 + t) before it. At most
 * CAML_AVERAGE_RAMP_MAX, which a decay closer to 1 than 2e-15 gets. */
#define CAML_AVERAGE_RAMP_MAX (G_GINT64_CONSTANT (1) << 52)
long         caml_average_ramp_end (double decay);
/* d_t of the t-th update (t ≥ 1). */
double       caml_average_decay_at (const CamlAverage *avg, long t);
/* Around the update of step `step` (0-based; `step` updates done before it),
 * after the backward pass: _prepare before the optimizer changes the weights,
 * _update after an update that is kept. */
void         caml_average_prepare (CamlAverage *avg, const CamlModel *model, long step);
void         caml_average_update (CamlAverage *avg, const CamlModel *model, long step);
/* Exchanges the model's weights and the average (brought up to date first):
 * call twice around a use of the averaged model. */
void         caml_average_swap (CamlAverage *avg, CamlModel *model);
/* Writes the average into the model's weights. */
void         caml_average_install (CamlAverage *avg, CamlModel *model);
