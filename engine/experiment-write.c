/* experiment-write.c — an experiment as canonical JSON.
 *
 * Writing is canonical (every field, fixed order; the fields added later —
 * unique_tokens, ngrams, validation_fraction, split_seed, weight_decay,
 * average_decay — only when not at their default, so that files that do not
 * use them stay as they were), so load (to_json (e)) == e. */
#include <string.h>

#include "caml-private.h"
#include "experiment-private.h"

/* --------------------------------------------------------------- writing */

static void
append_string (GString *s, const char *str)
{
  g_string_append_c (s, '"');
  for (const unsigned char *c = (const unsigned char *) str; *c != '\0'; c++)
    {
      switch (*c)
        {
        case '"':  g_string_append (s, "\\\""); break;
        case '\\': g_string_append (s, "\\\\"); break;
        case '\n': g_string_append (s, "\\n"); break;
        case '\t': g_string_append (s, "\\t"); break;
        case '\r': g_string_append (s, "\\r"); break;
        default:
          if (*c < 0x20)
            g_string_append_printf (s, "\\u%04x", *c);
          else
            g_string_append_c (s, (char) *c);
        }
    }
  g_string_append_c (s, '"');
}

/* The shortest decimal that reads back as exactly v ("0.1", not
 * "0.10000000000000001"), without an exponent where %g would give one to a
 * whole number of at most 17 digits ("30", not "3e+01"; "1000000", not
 * "1e+06"); small numbers keep %g's form ("1e-07"). v is finite: everything
 * loaded was checked. */
void
caml_experiment_append_double (GString *s, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  for (int precision = 1; precision <= 17; precision++)
    {
      char format[8];
      g_snprintf (format, sizeof format, "%%.%dg", precision);
      g_ascii_formatd (buf, sizeof buf, format, v);
      if (g_ascii_strtod (buf, NULL) == v)
        break;
    }
  /* An exponent of +X from the shortest %.Pg means X ≥ P: every digit is
   * before the point, v is a whole number of X + 1 digits, which %.0f
   * writes exactly. */
  const char *e = strchr (buf, 'e');
  if (e != NULL && e[1] == '+' && g_ascii_strtoll (e + 2, NULL, 10) + 1 <= 17)
    g_ascii_formatd (buf, sizeof buf, "%.0f", v);
  g_string_append (s, buf);
}

void
caml_option_append_text (GString *s, const CamlOptionSpec *spec, double value)
{
  switch (spec->type)
    {
    case CAML_OPT_INT:
      g_string_append_printf (s, "%.0f", value);
      break;
    case CAML_OPT_FLOAT:
      caml_experiment_append_double (s, value);
      break;
    case CAML_OPT_BOOL:
      g_string_append (s, value != 0.0 ? "true" : "false");
      break;
    case CAML_OPT_ENUM:
      g_string_append (s, spec->choices[(int) value]);
      break;
    }
}

static void
append_option (GString *s, const CamlOptionSpec *spec, double value)
{
  append_string (s, spec->key);
  g_string_append (s, ": ");
  if (spec->type == CAML_OPT_ENUM)
    append_string (s, spec->choices[(int) value]);   /* a JSON string */
  else
    caml_option_append_text (s, spec, value);
}

static double
optimizer_field_value (const CamlOptimizerConfig *c, CamlOptimizerField f)
{
  switch (f)
    {
    case CAML_FIELD_LR:                  return c->lr;
    case CAML_FIELD_EM_STEPS:            return c->em_steps;
    case CAML_FIELD_MOMENTUM:            return c->momentum;
    case CAML_FIELD_BETA1:               return c->beta1;
    case CAML_FIELD_BETA2:               return c->beta2;
    case CAML_FIELD_EPS:                 return c->eps;
    case CAML_FIELD_INITIAL_ACCUMULATOR: return c->initial_accumulator;
    case CAML_FIELD_WEIGHT_DECAY:        return c->weight_decay;
    case CAML_N_OPTIM_FIELDS:            break;
    }
  g_assert_not_reached ();
}

char *
caml_experiment_get_setting (const CamlExperiment *exp, const char *path)
{
  GString *s = g_string_new (NULL);
  if (g_str_equal (path, "training.steps"))
    g_string_append_printf (s, "%d", exp->steps);
  else if (g_str_equal (path, "training.batch_size"))
    g_string_append_printf (s, "%d", exp->batch_size);
  else if (g_str_equal (path, "seed"))
    g_string_append_printf (s, "%" G_GUINT64_FORMAT, exp->seed);
  else
    {
      int f = caml_experiment_optimizer_field (exp, path);
      if (f == CAML_FIELD_EM_STEPS)
        g_string_append_printf (s, "%d", exp->optimizer.em_steps);
      else if (f >= 0)
        caml_experiment_append_double (s, optimizer_field_value (&exp->optimizer, f));
      else
        return g_string_free (s, TRUE), NULL;
    }
  return g_string_free (s, FALSE);
}

char *
caml_experiment_to_json (const CamlExperiment *exp)
{
  GString *s = g_string_new ("{\n  \"name\": ");
  append_string (s, exp->name != NULL ? exp->name : "untitled");
  g_string_append (s, ",\n  \"description\": ");
  append_string (s, exp->description != NULL ? exp->description : "");
  g_string_append (s, ",\n  \"paper\": ");
  if (exp->paper != NULL)
    append_string (s, exp->paper);
  else
    g_string_append (s, "null");
  g_string_append_printf (s, ",\n  \"seed\": %" G_GUINT64_FORMAT ",\n", exp->seed);

  g_string_append (s, "  \"data\": {\n    ");
  if (exp->data.kind == CAML_DATA_IDX)
    {
      g_string_append (s, "\"idx\": {");
      for (int i = 0; i < 4; i++)
        {
          g_string_append_printf (s, "%s\n      \"%s\": ", i > 0 ? "," : "", caml_idx_keys[i]);
          append_string (s, exp->data.idx_paths[i] != NULL ? exp->data.idx_paths[i] : "");
        }
      g_string_append (s, "\n    }");
    }
  else if (exp->data.kind == CAML_DATA_TEXT)
    {
      g_string_append (s, "\"text\": {");
      for (int i = 0; i < 2; i++)
        {
          g_string_append_printf (s, "%s\n      \"%s\": ", i > 0 ? "," : "", caml_text_keys[i]);
          append_string (s, exp->data.text_paths[i] != NULL ? exp->data.text_paths[i] : "");
        }
      g_string_append (s, "\n    }");
    }
  else
    {
      g_string_append (s, "\"builtin\": ");
      append_string (s, caml_builtin_names[exp->data.kind]);
    }
  if (caml_data_kind_is_image (exp->data.kind) || caml_data_kind_is_text (exp->data.kind))
    g_string_append_printf (s, ",\n    \"train_limit\": %d,\n    \"test_limit\": %d",
                            exp->data.train_limit, exp->data.test_limit);
  if (caml_data_kind_is_text (exp->data.kind))
    {
      g_string_append_printf (s, ",\n    \"max_tokens\": %d,\n    \"embeddings\": ",
                              exp->data.max_tokens);
      if (exp->data.embeddings != NULL)
        append_string (s, exp->data.embeddings);
      else
        g_string_append (s, "null");
    }
  if (caml_data_kind_is_text (exp->data.kind) && exp->data.unique_tokens)
    g_string_append (s, ",\n    \"unique_tokens\": true");
  if (caml_data_kind_is_text (exp->data.kind) && exp->data.ngrams > 1)
    g_string_append_printf (s, ",\n    \"ngrams\": %d", exp->data.ngrams);
  if (exp->data.kind == CAML_DATA_IMDB)
    {
      g_string_append (s, ",\n    \"split\": ");
      append_string (s, caml_data_split_names[exp->data.split]);
    }
  if ((caml_data_kind_is_image (exp->data.kind) || caml_data_kind_is_text (exp->data.kind))
      && exp->data.validation_fraction > 0)
    {
      g_string_append (s, ",\n    \"validation_fraction\": ");
      caml_experiment_append_double (s, exp->data.validation_fraction);
    }
  if ((caml_data_kind_is_image (exp->data.kind) || caml_data_kind_is_text (exp->data.kind))
      && exp->data.has_split_seed)
    g_string_append_printf (s, ",\n    \"split_seed\": %" G_GUINT64_FORMAT,
                            exp->data.split_seed);
  if (exp->data.kind == CAML_DATA_SURFACE)
    {
      g_string_append_printf (s, ",\n    \"grid\": %d,\n    \"train_fraction\": ",
                              exp->data.grid);
      caml_experiment_append_double (s, exp->data.train_fraction);
      if (exp->data.noise != 0)
        {
          g_string_append (s, ",\n    \"noise\": ");
          caml_experiment_append_double (s, exp->data.noise);
        }
      if (exp->data.has_split_seed)
        g_string_append_printf (s, ",\n    \"split_seed\": %" G_GUINT64_FORMAT,
                                exp->data.split_seed);
    }
  g_string_append (s, "\n  },\n  \"model\": [\n");

  for (int i = 0; i < exp->n_layers; i++)
    {
      const CamlLayerSpec *layer = &exp->layers[i];
      g_string_append (s, "    { \"layer\": ");
      append_string (s, layer->ops->name);
      for (int k = 0; k < layer->ops->n_options; k++)
        {
          g_string_append (s, ", ");
          append_option (s, &layer->ops->options[k], layer->opt[k]);
        }
      g_string_append (s, i + 1 < exp->n_layers ? " },\n" : " }\n");
    }

  g_string_append (s, "  ],\n  \"loss\": ");
  append_string (s, caml_loss_names[exp->loss]);
  g_string_append (s, ",\n  \"optimizer\": {\n    \"type\": ");
  append_string (s, caml_optimizer_names[exp->optimizer.kind]);
  const CamlOptimizerField *fields = caml_optimizer_fields[exp->optimizer.kind];
  for (int i = 0; fields[i] != CAML_N_OPTIM_FIELDS; i++)
    {
      if (fields[i] == CAML_FIELD_WEIGHT_DECAY && exp->optimizer.weight_decay == 0)
        continue;
      g_string_append_printf (s, ",\n    \"%s\": ", caml_optimizer_field_keys[fields[i]]);
      if (fields[i] == CAML_FIELD_EM_STEPS)
        g_string_append_printf (s, "%d", exp->optimizer.em_steps);
      else
        caml_experiment_append_double (s, optimizer_field_value (&exp->optimizer, fields[i]));
    }

  g_string_append_printf (s,
                          "\n  },\n  \"training\": {\n"
                          "    \"steps\": %d,\n    \"batch_size\": %d,\n"
                          "    \"eval_every\": %d",
                          exp->steps, exp->batch_size, exp->eval_every);
  if (exp->average_decay > 0)
    {
      g_string_append (s, ",\n    \"average_decay\": ");
      caml_experiment_append_double (s, exp->average_decay);
    }
  g_string_append (s, "\n  },\n  \"plot\": {\n    \"domain\": [");
  for (int i = 0; i < 4; i++)
    {
      if (i > 0)
        g_string_append (s, ", ");
      caml_experiment_append_double (s, exp->plot_domain[i]);
    }
  g_string_append (s, "]\n  }\n}\n");
  return g_string_free (s, FALSE);
}

gboolean
caml_experiment_save_file (const CamlExperiment *exp, const char *path, GError **error)
{
  char *json = caml_experiment_to_json (exp);
  gboolean ok = caml_file_replace (path, json, strlen (json), error);
  g_free (json);
  return ok;
}
