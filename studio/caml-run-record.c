/* caml-run-record.c — one run the session kept (caml-run-record.h). */
#include <math.h>
#include <string.h>

#include "caml-run-record.h"
#include "caml-format.h"

struct _CamlRunRecord {
  GObject parent_instance;

  /* owned */
  int             number;
  gboolean        baseline;
  char           *name;
  gboolean        shown;
  char           *differs;
  double          difference;
  CamlExperiment *exp;
  CamlRunFigures  figures;
  double         *loss_steps;  /* (n_points) the last step of each point's steps */
  double         *losses;      /* (n_points) their mean loss */
  long            n_points;
  long            stride;
  CamlEvalRow    *rows;        /* (n_rows) */
  int             n_rows;
};

G_DEFINE_FINAL_TYPE (CamlRunRecord, caml_run_record, G_TYPE_OBJECT)

enum { PROP_0, PROP_NAME, PROP_SHOWN, PROP_DIFFERS, PROP_DIFFERENCE, N_PROPS };
static GParamSpec *properties[N_PROPS];

/* The curves, subsampled to CAML_RUN_RECORD_MAX_POINTS: a point is the
 * mean of `stride` steps (the last one may be shorter), at the last of
 * them; rows keep every k-th and the last. */
static void
take_curves (CamlRunRecord *self, const float *losses, long n_steps, const CamlEvalRow *rows,
             int n_rows)
{
  g_clear_pointer (&self->loss_steps, g_free);
  g_clear_pointer (&self->losses, g_free);
  g_clear_pointer (&self->rows, g_free);
  self->stride = MAX (1, (n_steps + CAML_RUN_RECORD_MAX_POINTS - 1) / CAML_RUN_RECORD_MAX_POINTS);
  self->n_points = (n_steps + self->stride - 1) / self->stride;
  self->loss_steps = g_new (double, MAX (self->n_points, 1));
  self->losses = g_new (double, MAX (self->n_points, 1));
  for (long p = 0; p < self->n_points; p++)
    {
      long from = p * self->stride, to = MIN (n_steps, from + self->stride);
      double sum = 0.0;
      for (long i = from; i < to; i++)
        sum += losses[i];
      self->loss_steps[p] = (double) to;
      self->losses[p] = sum / (double) (to - from);
    }
  int keep = MAX (1, (n_rows + CAML_RUN_RECORD_MAX_POINTS - 1) / CAML_RUN_RECORD_MAX_POINTS);
  self->rows = g_new (CamlEvalRow, MAX (n_rows, 1));
  self->n_rows = 0;
  for (int r = 0; r < n_rows; r++)
    if (r % keep == 0 || r == n_rows - 1)
      self->rows[self->n_rows++] = rows[r];
}

CamlRunRecord *
caml_run_record_new (int number, gboolean baseline, const CamlExperiment *exp,
                     const CamlRunFigures *figures, const float *losses, long n_steps,
                     const CamlEvalRow *rows, int n_rows)
{
  CamlRunRecord *self = g_object_new (CAML_TYPE_RUN_RECORD, NULL);
  self->number = number;
  self->baseline = baseline;
  self->name = baseline ? g_strdup_printf ("Run %d (baseline)", number)
                        : g_strdup_printf ("Run %d", number);
  caml_run_record_update (self, exp, figures, losses, n_steps, rows, n_rows);
  return self;
}

void
caml_run_record_update (CamlRunRecord *self, const CamlExperiment *exp,
                        const CamlRunFigures *figures, const float *losses, long n_steps,
                        const CamlEvalRow *rows, int n_rows)
{
  g_return_if_fail (CAML_IS_RUN_RECORD (self));
  caml_experiment_free (self->exp);
  self->exp = caml_experiment_copy (exp);
  self->figures = *figures;
  take_curves (self, losses, n_steps, rows, n_rows);
}

int
caml_run_record_get_number (CamlRunRecord *self)
{
  return self->number;
}

gboolean
caml_run_record_is_baseline (CamlRunRecord *self)
{
  return self->baseline;
}

const char *
caml_run_record_get_name (CamlRunRecord *self)
{
  return self->name;
}

void
caml_run_record_set_name (CamlRunRecord *self, const char *name)
{
  g_return_if_fail (CAML_IS_RUN_RECORD (self));
  if (name == NULL || *name == '\0' || g_strcmp0 (name, self->name) == 0)
    return;   /* a name is never empty */
  g_free (self->name);
  self->name = g_strdup (name);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_NAME]);
}

gboolean
caml_run_record_get_shown (CamlRunRecord *self)
{
  return self->shown;
}

void
caml_run_record_set_shown (CamlRunRecord *self, gboolean shown)
{
  g_return_if_fail (CAML_IS_RUN_RECORD (self));
  shown = !!shown;
  if (shown == self->shown)
    return;
  self->shown = shown;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SHOWN]);
}

const CamlExperiment *
caml_run_record_get_experiment (CamlRunRecord *self)
{
  return self->exp;
}

const CamlRunFigures *
caml_run_record_get_figures (CamlRunRecord *self)
{
  return &self->figures;
}

const char *
caml_run_record_get_differs (CamlRunRecord *self)
{
  return self->differs != NULL ? self->differs : "";
}

void
caml_run_record_set_differs (CamlRunRecord *self, const char *differs)
{
  if (g_strcmp0 (differs, self->differs) == 0)
    return;
  g_free (self->differs);
  self->differs = g_strdup (differs);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DIFFERS]);
}

double
caml_run_record_get_difference (CamlRunRecord *self)
{
  return self->difference;
}

void
caml_run_record_set_difference (CamlRunRecord *self, double difference)
{
  if (difference == self->difference || (isnan (difference) && isnan (self->difference)))
    return;
  self->difference = difference;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DIFFERENCE]);
}

const double *
caml_run_record_get_losses (CamlRunRecord *self, const double **steps, long *n, long *stride)
{
  *steps = self->loss_steps;
  *n = self->n_points;
  if (stride != NULL)
    *stride = self->stride;
  return self->losses;
}

const CamlEvalRow *
caml_run_record_get_rows (CamlRunRecord *self, int *n_rows)
{
  *n_rows = self->n_rows;
  return self->rows;
}

/* ------------------------------------------------------------- changes */

static void
add_number (GString *s, const char *what, double before, double now)
{
  if (before == now)
    return;
  g_autofree char *a = caml_format_positive (before);
  g_autofree char *b = caml_format_positive (now);
  g_string_append_printf (s, "%s%s %s → %s", s->len > 0 ? ", " : "", what, a, b);
}

static gboolean
layers_equal (const CamlExperiment *a, const CamlExperiment *b)
{
  if (a->n_layers != b->n_layers)
    return FALSE;
  for (int i = 0; i < a->n_layers; i++)
    {
      if (a->layers[i].ops != b->layers[i].ops)
        return FALSE;
      for (int k = 0; k < a->layers[i].ops->n_options; k++)
        if (a->layers[i].opt[k] != b->layers[i].opt[k])
          return FALSE;
    }
  return TRUE;
}

char *
caml_run_record_describe_changes (const CamlExperiment *before, const CamlExperiment *exp)
{
  GString *s = g_string_new (NULL);
  const CamlOptimizerConfig *a = &before->optimizer, *b = &exp->optimizer;

  if (!caml_data_config_equal (&before->data, &exp->data))
    g_string_append (s, "data");
  if (!layers_equal (before, exp))
    g_string_append_printf (s, "%slayers", s->len > 0 ? ", " : "");
  if (before->loss != exp->loss)
    g_string_append_printf (s, "%sloss %s", s->len > 0 ? ", " : "", caml_loss_names[exp->loss]);
  if (a->kind != b->kind)
    g_string_append_printf (s, "%s%s", s->len > 0 ? ", " : "", caml_optimizer_names[b->kind]);
  add_number (s, "lr", a->lr, b->lr);
  add_number (s, "em_steps", a->em_steps, b->em_steps);
  add_number (s, "weight decay", a->weight_decay, b->weight_decay);
  add_number (s, "steps", before->steps, exp->steps);
  add_number (s, "batch", before->batch_size, exp->batch_size);
  add_number (s, "eval every", before->eval_every, exp->eval_every);
  add_number (s, "average", before->average_decay, exp->average_decay);
  add_number (s, "seed", (double) before->seed, (double) exp->seed);
  if (s->len == 0)
    g_string_append (s, "same settings");
  return g_string_free (s, FALSE);
}

const char *
caml_run_record_state_name (CamlTrainerState state)
{
  switch (state)
    {
    case CAML_TRAINER_FINISHED: return "finished";
    case CAML_TRAINER_FAILED:   return "diverged";
    case CAML_TRAINER_STOPPED:  return "stopped";
    default:                    return "stopped";   /* dropped while it trained */
    }
}

/* ------------------------------------------------------------- GObject */

static void
caml_run_record_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  CamlRunRecord *self = CAML_RUN_RECORD (object);

  switch (id)
    {
    case PROP_NAME:       g_value_set_string (value, self->name); break;
    case PROP_SHOWN:      g_value_set_boolean (value, self->shown); break;
    case PROP_DIFFERS:    g_value_set_string (value, caml_run_record_get_differs (self)); break;
    case PROP_DIFFERENCE: g_value_set_double (value, self->difference); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
caml_run_record_set_property (GObject *object, guint id, const GValue *value,
                              GParamSpec *pspec)
{
  CamlRunRecord *self = CAML_RUN_RECORD (object);

  switch (id)
    {
    case PROP_NAME:  caml_run_record_set_name (self, g_value_get_string (value)); break;
    case PROP_SHOWN: caml_run_record_set_shown (self, g_value_get_boolean (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
caml_run_record_finalize (GObject *object)
{
  CamlRunRecord *self = CAML_RUN_RECORD (object);

  g_free (self->name);
  g_free (self->differs);
  caml_experiment_free (self->exp);
  g_free (self->loss_steps);
  g_free (self->losses);
  g_free (self->rows);
  G_OBJECT_CLASS (caml_run_record_parent_class)->finalize (object);
}

static void
caml_run_record_class_init (CamlRunRecordClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = caml_run_record_get_property;
  object_class->set_property = caml_run_record_set_property;
  object_class->finalize = caml_run_record_finalize;
  properties[PROP_NAME] = g_param_spec_string ("name", NULL, NULL, NULL,
                                               G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY
                                               | G_PARAM_STATIC_STRINGS);
  properties[PROP_SHOWN] = g_param_spec_boolean ("shown", NULL, NULL, FALSE,
                                                 G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY
                                                 | G_PARAM_STATIC_STRINGS);
  properties[PROP_DIFFERS] = g_param_spec_string ("differs", NULL, NULL, NULL,
                                                  G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_DIFFERENCE] = g_param_spec_double ("difference", NULL, NULL, -G_MAXDOUBLE,
                                                     G_MAXDOUBLE, 0.0,
                                                     G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
caml_run_record_init (CamlRunRecord *self)
{
  self->difference = NAN;
}
