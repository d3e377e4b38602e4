/* fuzz-trainer-state.c — trainer state files (caml_trainer_state_load_data)
 * into a new trainer of a fixed run: XOR, dense 3 → dropout → dense 1, Adam,
 * batches of 2, seed 1, its weights those of 3 steps (as the seeds of
 * corpus/trainer-state were written by `caml train` for the same
 * experiment, tests/fuzz/make-corpus.py).
 *
 * Input: one mode byte, then the file; with the mode's low bit set a valid
 * SHA-256 is appended, so the fuzzer reaches the checks behind the
 * checksum. A rejected file must leave the trainer as it was (no step, no
 * loss) and the weights bit for bit, with a CAML_ERROR naming the file; an
 * accepted one gives the trainer the step count it stores. */
#include "fuzz-common.h"

static CamlExperiment *exp;
static CamlDataset    *train, *test;
static CamlModel      *model;
static float          *trained;   /* (n_weights) after 3 steps */

static const char *exp_doc =
  "{\"seed\": 1, \"data\": {\"builtin\": \"xor\"},"
  " \"model\": [{\"layer\": \"dense\", \"units\": 3, \"activation\": \"tanh\"},"
  "            {\"layer\": \"dropout\", \"rate\": 0.3}, {\"layer\": \"dense\", \"units\": 1}],"
  " \"optimizer\": {\"type\": \"adam\", \"lr\": 0.05},"
  " \"training\": {\"steps\": 3, \"batch_size\": 2, \"eval_every\": 2}}";

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_init ();
  GError *error = NULL;
  exp = caml_experiment_load_data (exp_doc, -1, "experiment", &error);
  FUZZ_CHECK (exp != NULL, "%s", error->message);
  FUZZ_CHECK (caml_experiment_load_datasets (exp, &train, &test, &error), "%s", error->message);
  model = caml_experiment_build_model_for (exp, train, &error);
  FUZZ_CHECK (model != NULL, "%s", error->message);
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  FUZZ_CHECK (caml_trainer_start (trainer, FALSE, &error), "%s", error->message);
  FUZZ_CHECK (caml_trainer_join (trainer) == CAML_TRAINER_FINISHED, "the run did not finish");
  caml_trainer_free (trainer);
  trained = g_memdup2 (model->w, model->n_weights * sizeof (float));
  return 0;
}

static long
steps_of (CamlTrainer *trainer, long *n_losses)
{
  CamlProgress p;
  caml_trainer_get_progress (trainer, &p);
  g_free (caml_trainer_copy_losses (trainer, n_losses));
  return p.step;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  gsize length;
  guint8 *file = fuzz_sealed_file (data, size, &length);

  size_t bytes = model->n_weights * sizeof (float);
  memcpy (model->w, trained, bytes);
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  GError *error = NULL;
  long n_losses = -1;
  if (caml_trainer_state_load_data (trainer, file, length, "fuzz.state", &error))
    {
      FUZZ_CHECK (error == NULL, "loaded with an error set");
      long step = steps_of (trainer, &n_losses);
      FUZZ_CHECK (step >= 0 && n_losses == step, "%ld steps but %ld losses", step, n_losses);
    }
  else
    {
      fuzz_check_error (error, "fuzz.state");
      FUZZ_CHECK (steps_of (trainer, &n_losses) == 0 && n_losses == 0,
                  "a rejected file changed the trainer");
    }
  FUZZ_CHECK (memcmp (model->w, trained, bytes) == 0, "loading a state changed the weights");
  caml_trainer_free (trainer);
  g_free (file);
  return 0;
}
