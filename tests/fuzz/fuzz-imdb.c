/* fuzz-imdb.c — the IMDB reviews JSON (caml_imdb_load_data), with both
 * splits (byte 0's low bit). An accepted document gives a training and a
 * test set over one vocabulary, ids in range; a rejected one a CAML_ERROR
 * naming it and no data sets. */
#include "fuzz-common.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_init ();
  return 0;
}

static void
check_set (const CamlDataset *set, int vocab)
{
  for (int i = 0; i < set->n; i++)
    FUZZ_CHECK (set->offsets[i + 1] >= set->offsets[i], "offsets go back at %d", i);
  for (gint64 k = 0; k < set->offsets[set->n]; k++)
    FUZZ_CHECK (set->tokens[k] == CAML_TOKEN_OOV || (set->tokens[k] >= 0 && set->tokens[k] < vocab),
                "token id %d", set->tokens[k]);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  CamlDataSplit split = (data[0] & 1) ? CAML_SPLIT_RANDOM : CAML_SPLIT_ORIGINAL;
  CamlDataset *train = NULL, *test = NULL;
  GError *error = NULL;
  if (!caml_imdb_load_data ((const char *) data + 1, size - 1, "fuzz.json", split, 7, 0, 0,
                            &train, &test, &error))
    {
      fuzz_check_error (error, "fuzz.json");
      FUZZ_CHECK (train == NULL && test == NULL, "a rejected document left data sets");
      return 0;
    }
  FUZZ_CHECK (train != NULL && test != NULL, "accepted without data sets");
  int vocab = caml_vocab_size (train->vocab);
  check_set (train, vocab);
  check_set (test, vocab);
  caml_dataset_free (train);
  caml_dataset_free (test);
  return 0;
}
