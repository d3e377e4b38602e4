/* fuzz-sem-data.c — the files `caml sem` reads, from memory: the first byte
 * chooses sentence pairs (SICK), text columns (any TSV) or word counts (the
 * SIF frequencies); the rest is the file. A rejected file must give a
 * CAML_ERROR naming it. */
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
  if (size < 1)
    return 0;
  const char *text = (const char *) data + 1;
  gsize length = size - 1;
  GError *error = NULL;
  switch (data[0] % 3)
    {
    case 0:
      {
        CamlSentencePairs *pairs = caml_sentence_pairs_load_data (text, length, "fuzz.pairs",
                                                                  &error);
        if (pairs == NULL)
          fuzz_check_error (error, "fuzz.pairs");
        else
          {
            for (int i = 0; i < pairs->n; i++)
              FUZZ_CHECK (pairs->a[i] != NULL && pairs->b[i] != NULL, "pair %d", i);
            caml_sentence_pairs_free (pairs);
          }
        break;
      }
    case 1:
      {
        char **columns = caml_text_columns_load_data (text, length, "fuzz.tsv", &error);
        if (columns == NULL)
          fuzz_check_error (error, "fuzz.tsv");
        else
          g_strfreev (columns);
        break;
      }
    default:
      {
        CamlVocab *counts = caml_word_counts_load_data (text, length, "fuzz.counts", &error);
        if (counts == NULL)
          fuzz_check_error (error, "fuzz.counts");
        else
          caml_vocab_unref (counts);
        break;
      }
    }
  return 0;
}
