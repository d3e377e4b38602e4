/* fuzz-text.c — labelled text files (caml_text_load_tsv_data), as a
 * training set (growing a vocabulary) then as a test set over it.
 *
 * A rejected file must leave the vocabulary as it was, with a CAML_ERROR
 * naming the file; an accepted one must give offsets that stay within the
 * token array and ids that stay within the vocabulary (or are OOV). */
#include "fuzz-common.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_init ();
  return 0;
}

static void
check_set (const CamlDataset *set, const CamlVocab *vocab)
{
  FUZZ_CHECK (set->n > 0, "an accepted file with no samples");
  FUZZ_CHECK (set->offsets[0] == 0, "offsets start at %" G_GINT64_FORMAT, set->offsets[0]);
  for (int i = 0; i < set->n; i++)
    {
      FUZZ_CHECK (set->offsets[i + 1] >= set->offsets[i], "offsets go back at %d", i);
      FUZZ_CHECK (set->y[i] >= 0 && set->y[i] < set->n_classes, "label %g", set->y[i]);
    }
  for (gint64 k = 0; k < set->offsets[set->n]; k++)
    FUZZ_CHECK (set->tokens[k] == CAML_TOKEN_OOV
                || (set->tokens[k] >= 0 && set->tokens[k] < caml_vocab_size (vocab)),
                "token id %d", set->tokens[k]);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  CamlVocab *vocab = caml_vocab_new ();
  GError *error = NULL;
  CamlDataset *train = caml_text_load_tsv_data ((const char *) data, size, "fuzz.tsv", vocab,
                                                TRUE, 0, &error);
  if (train == NULL)
    {
      fuzz_check_error (error, "fuzz.tsv");
      FUZZ_CHECK (caml_vocab_size (vocab) == 0, "a rejected file added words");
    }
  else
    {
      check_set (train, vocab);
      int words = caml_vocab_size (vocab);
      CamlDataset *test = caml_text_load_tsv_data ((const char *) data, size, "fuzz.tsv",
                                                   vocab, FALSE, 0, &error);
      FUZZ_CHECK (test != NULL, "accepted once, rejected the second time");
      FUZZ_CHECK (caml_vocab_size (vocab) == words, "a test set grew the vocabulary");
      check_set (test, vocab);
      caml_text_datasets_finish (train, test, 8);
      float *rows = g_new (float, (size_t) train->n * train->x_shape.dims[0]);
      caml_dataset_rows (train, 0, train->n, rows);
      g_free (rows);
      caml_dataset_free (test);
      caml_dataset_free (train);
    }
  caml_vocab_unref (vocab);
  return 0;
}
