/* cli-layers.c — `caml layers`: the layer registry as text or Markdown.
 * docs/layers.md is this command's Markdown output (a test keeps it so). */
#include <math.h>
#include <stdio.h>

#include "caml.h"
#include "cli.h"
#include "cli-common.h"

static const char *
type_name (const CamlOptionSpec *spec)
{
  switch (spec->type)
    {
    case CAML_OPT_INT: return "integer";
    case CAML_OPT_FLOAT: return "number";
    case CAML_OPT_BOOL: return "boolean";
    case CAML_OPT_ENUM: return "string";
    }
  return "?";
}

/* The default of an option as it is written in an experiment file. */
static char *
default_text (const CamlOptionSpec *spec)
{
  switch (spec->type)
    {
    case CAML_OPT_BOOL:
      return g_strdup (spec->default_value != 0.0 ? "true" : "false");
    case CAML_OPT_ENUM:
      return g_strdup_printf ("\"%s\"", spec->choices[(int) spec->default_value]);
    default:
      return g_strdup_printf ("%g", spec->default_value);
    }
}

static char *
range_text (const CamlOptionSpec *spec)
{
  switch (spec->type)
    {
    case CAML_OPT_BOOL:
      return g_strdup ("true, false");
    case CAML_OPT_ENUM:
      {
        GString *s = g_string_new (NULL);
        for (int i = 0; spec->choices[i] != NULL; i++)
          g_string_append_printf (s, "%s`%s`", i ? ", " : "", spec->choices[i]);
        return g_string_free (s, FALSE);
      }
    default:
      return g_strdup_printf ("%g … %g", spec->min, spec->max);
    }
}

/* The whole registry in Markdown. */
char *
caml_layers_markdown (void)
{
  int n = 0;
  const CamlLayerOps *const *types = caml_layer_registry (&n);
  GString *md = g_string_new (
    "# Layers\n"
    "\n"
    "Generated from the engine's layer registry by `caml layers --markdown`\n"
    "(a test checks this file against it). Every layer is an object in an\n"
    "experiment's `\"model\"` array with `\"layer\": NAME` and any of its options;\n"
    "an option left out takes its default. See `experiment-files.md` for the\n"
    "rest of the format and the paper notes beside the repository\n"
    "(`../../shared/paper/NOTES.md` from here) for the equations.\n");
  for (int t = 0; t < n; t++)
    {
      const CamlLayerOps *ops = types[t];
      g_string_append_printf (md, "\n## `%s` — %s\n\n%s.", ops->name, ops->title,
                              ops->description);
      if (ops->context_aware)
        g_string_append (md, " Context-aware: its gate parameters and value parameters "
                             "form the two blocks of the `em_steps` schedule.");
      if (ops->baseline)
        g_string_append_printf (md, " Matched baseline: `%s`.", ops->baseline);
      g_string_append (md, "\n\n");
      if (ops->n_options > 0)
        {
          g_string_append (md, "| option | type | range / choices | default | meaning |\n"
                               "|---|---|---|---|---|\n");
          for (int o = 0; o < ops->n_options; o++)
            {
              const CamlOptionSpec *spec = &ops->options[o];
              g_autofree char *range = range_text (spec);
              g_autofree char *def = default_text (spec);
              g_string_append_printf (md, "| `%s` | %s | %s | %s | %s |\n", spec->key,
                                      type_name (spec), range, def, spec->help);
            }
          g_string_append (md, "\n");
        }
      g_string_append_printf (md, "```json\n{ \"layer\": \"%s\"", ops->name);
      for (int o = 0; o < ops->n_options; o++)
        {
          g_autofree char *def = default_text (&ops->options[o]);
          g_string_append_printf (md, ", \"%s\": %s", ops->options[o].key, def);
        }
      g_string_append (md, " }\n```\n");
    }
  return g_string_free (md, FALSE);
}

int
caml_cli_layers (int argc, char **argv)
{
  gboolean markdown = FALSE;
  const GOptionEntry entries[] = {
    { "markdown", 'm', 0, G_OPTION_ARG_NONE, &markdown,
      "Print docs/layers.md: every layer with its options and an example", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- list the layer types");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (ctx,
    "Lists every layer an experiment file may use, one line each, from the\n"
    "engine's registry (the same table the workbench's palette shows).");
  g_autoptr (GError) error = NULL;
  if (!caml_cli_parse_options (ctx, entries, &argc, &argv, &error))
    {
      g_printerr ("caml layers: %s\n", error->message);
      return 2;
    }
  if (argc > 1)
    {
      g_printerr ("caml layers: unexpected argument \"%s\" (see `caml layers --help`)\n",
                  argv[1]);
      return 2;
    }
  if (markdown)
    {
      g_autofree char *md = caml_layers_markdown ();
      g_print ("%s", md);
      return 0;
    }
  int n = 0;
  const CamlLayerOps *const *types = caml_layer_registry (&n);
  for (int t = 0; t < n; t++)
    {
      GString *keys = g_string_new (NULL);
      for (int o = 0; o < types[t]->n_options; o++)
        g_string_append_printf (keys, "%s%s", o ? ", " : "", types[t]->options[o].key);
      g_print ("%-12s %s  [%s]\n", types[t]->name, types[t]->description, keys->str);
      g_string_free (keys, TRUE);
    }
  return 0;
}
