/* presets.c — the built-in experiments, read from the GResource bundle. */
#include <gio/gio.h>

#include "presets.h"

#define PRESETS_PATH "/org/caml/Workbench/presets/"

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(char *const *) a, *(char *const *) b);
}

char **
caml_presets_list (void)
{
  g_auto (GStrv) files = g_resources_enumerate_children (PRESETS_PATH,
                                                         G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
  GPtrArray *names = g_ptr_array_new ();
  for (int i = 0; files != NULL && files[i] != NULL; i++)
    if (g_str_has_suffix (files[i], ".json"))
      g_ptr_array_add (names, g_strndup (files[i], strlen (files[i]) - 5));
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (names, FALSE);
}

gboolean
caml_presets_exists (const char *name)
{
  g_autofree char *path = g_strconcat (PRESETS_PATH, name, ".json", NULL);
  return g_resources_get_info (path, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL, NULL, NULL);
}

CamlExperiment *
caml_presets_load (const char *name, GError **error)
{
  g_autofree char *path = g_strconcat (PRESETS_PATH, name, ".json", NULL);
  g_autoptr (GBytes) bytes = g_resources_lookup_data (path, G_RESOURCE_LOOKUP_FLAGS_NONE,
                                                      NULL);
  if (bytes == NULL)
    {
      g_auto (GStrv) names = caml_presets_list ();
      g_autofree char *list = g_strjoinv (", ", names);
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "no preset named \"%s\" (presets: %s)", name, list);
      return NULL;
    }
  g_autofree char *source = g_strdup_printf ("preset %s", name);
  gsize size = 0;
  const char *data = g_bytes_get_data (bytes, &size);
  return caml_experiment_load_data (data, (gssize) size, source, error);
}

/* The data a blank experiment can start on (File → New): every kind that
 * needs no files chosen first. */
const CamlDataKind caml_presets_blank_kinds[] = {
  CAML_DATA_SURFACE, CAML_DATA_XOR, CAML_DATA_MNIST, CAML_DATA_FASHION_MNIST,
  CAML_DATA_SST, CAML_DATA_IMDB,
};
const int caml_presets_n_blank_kinds = G_N_ELEMENTS (caml_presets_blank_kinds);

CamlExperiment *
caml_presets_new_blank (CamlDataKind kind)
{
  /* The engine's defaults for the data (the plot domain among them) come
   * from reading a document that names only the data. */
  g_autofree char *json = g_strdup_printf ("{ \"name\": \"untitled\", \"data\": "
                                           "{ \"builtin\": \"%s\" } }",
                                           caml_data_kind_names[kind]);
  CamlExperiment *exp = caml_experiment_load_data (json, -1, "new experiment", NULL);
  if (exp == NULL)
    exp = caml_experiment_new_default ();
  g_clear_pointer (&exp->layers, g_free);
  exp->n_layers = 0;
  gboolean images = kind == CAML_DATA_MNIST || kind == CAML_DATA_FASHION_MNIST;
  gboolean texts = kind == CAML_DATA_SST || kind == CAML_DATA_IMDB;
  exp->loss = images ? CAML_LOSS_SOFTMAX_XENT : texts ? CAML_LOSS_SIGMOID_XENT : CAML_LOSS_MSE;
  if (images || texts)
    {
      /* A full batch of 60,000 images would be one slow step. */
      exp->batch_size = images ? 100 : 16;
      exp->eval_every = 100;
    }
  return exp;
}

/* The preset whose description and paper figure exp carries, or NULL. */
static CamlExperiment *
find_source_preset (const CamlExperiment *exp, char **name)
{
  if (exp->description == NULL)
    return NULL;
  g_auto (GStrv) names = caml_presets_list ();
  for (int i = 0; names[i] != NULL; i++)
    {
      CamlExperiment *preset = caml_presets_load (names[i], NULL);
      if (preset != NULL && g_strcmp0 (preset->description, exp->description) == 0
          && g_strcmp0 (preset->paper, exp->paper) == 0)
        {
          *name = g_strdup (names[i]);
          return preset;
        }
      g_clear_pointer (&preset, caml_experiment_free);
    }
  return NULL;
}

gboolean
caml_presets_mark_edited (CamlExperiment *exp)
{
  g_autofree char *name = NULL;
  CamlExperiment *preset = find_source_preset (exp, &name);
  if (preset == NULL)
    return FALSE;
  /* The name follows the file it is saved to: not an edit. */
  CamlExperiment *same = caml_experiment_copy (exp);
  g_free (same->name);
  same->name = g_strdup (preset->name);
  gboolean edited = !caml_experiment_equal (same, preset);
  caml_experiment_free (same);
  if (edited)
    {
      char *description = preset->paper != NULL
        ? g_strdup_printf ("edited from preset %s: %s (the paper's %s was for the preset "
                           "as built in)", name, preset->description, preset->paper)
        : g_strdup_printf ("edited from preset %s: %s", name, preset->description);
      g_free (exp->description);
      exp->description = description;
      g_clear_pointer (&exp->paper, g_free);
    }
  caml_experiment_free (preset);
  return edited;
}
