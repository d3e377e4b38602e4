/* fuzz-weights.c — weights files (caml_weights_load_data) into a fixed
 * model (CA-NN, CA-RES, dense) with a fixed vocabulary (good film bad, the
 * words of corpus/weights/sealed-vocab), so a file's vocabulary fields are
 * checked against it too.
 *
 * Input: one mode byte, then the file. With the mode's low bit set the file
 * gets a valid SHA-256 appended, so the fuzzer also reaches what lies behind
 * the checksum (the layer table against the model); otherwise the bytes are
 * the whole file. A rejected file must leave the weights bit for bit as they
 * were, with a CAML_ERROR naming the file. */
#include "fuzz-common.h"

static CamlModel *model;
static float     *pristine;   /* (n_weights) the model's weights before each input */

static const char *model_doc =
  "{ \"model\": [ { \"layer\": \"ca_nn\", \"units\": 3 },"
  "               { \"layer\": \"ca_res\", \"units\": 3, \"sublayers\": 1 },"
  "               { \"layer\": \"dense\", \"units\": 1 } ] }";

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_init ();
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (model_doc, -1, "model", &error);
  FUZZ_CHECK (exp != NULL, "%s", error->message);
  CamlShape input = caml_shape_flat (2);
  model = caml_experiment_build_model (exp, &input, &error);
  FUZZ_CHECK (model != NULL, "%s", error->message);
  caml_experiment_free (exp);
  CamlVocab *vocab = caml_vocab_new ();
  caml_vocab_add (vocab, "good", 1);
  caml_vocab_add (vocab, "film", 2);
  caml_vocab_add (vocab, "bad", 1);
  caml_model_set_vocab (model, vocab);
  caml_vocab_unref (vocab);
  pristine = g_memdup2 (model->w, model->n_weights * sizeof (float));
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  gsize length;
  guint8 *file = fuzz_sealed_file (data, size, &length);

  size_t bytes = model->n_weights * sizeof (float);
  GError *error = NULL;
  if (caml_weights_load_data (model, file, length, "fuzz.weights", &error))
    {
      FUZZ_CHECK (error == NULL, "loaded with an error set");
      memcpy (model->w, pristine, bytes);
    }
  else
    {
      fuzz_check_error (error, "fuzz.weights");
      FUZZ_CHECK (memcmp (model->w, pristine, bytes) == 0,
                  "a rejected file changed the weights");
    }
  g_free (file);
  return 0;
}
