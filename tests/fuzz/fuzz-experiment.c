/* fuzz-experiment.c — experiment JSON (caml_experiment_load_data).
 *
 * Input: the document. Whatever loads must survive a round trip: written
 * with caml_experiment_to_json and loaded again, it is equal field by field.
 * Whatever does not load fails with a CAML_ERROR naming the document. */
#include "fuzz-common.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_init ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data ((const char *) data, (gssize) size,
                                                   "fuzz.json", &error);
  if (exp == NULL)
    {
      fuzz_check_error (error, "fuzz.json");
      return 0;
    }
  FUZZ_CHECK (error == NULL, "loaded with an error set");

  char *json = caml_experiment_to_json (exp);
  CamlExperiment *again = caml_experiment_load_data (json, -1, "again.json", &error);
  FUZZ_CHECK (again != NULL, "its own JSON does not load: %s\n%s",
              error ? error->message : "?", json);
  FUZZ_CHECK (caml_experiment_equal (exp, again), "the round trip changed it:\n%s", json);

  /* Copies are equal too. */
  CamlExperiment *copy = caml_experiment_copy (exp);
  FUZZ_CHECK (caml_experiment_equal (exp, copy), "the copy differs");

  caml_experiment_free (copy);
  caml_experiment_free (again);
  g_free (json);
  caml_experiment_free (exp);
  return 0;
}
