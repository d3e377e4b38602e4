/* fuzz-embeddings.c — word vectors from memory (caml_embeddings_load_data):
 * GloVe text, the wink JSON layout, or the binary cache, told by content.
 * An accepted file must give a vocabulary and vectors of the sizes it
 * claims, every word findable; a rejected one a CAML_ERROR naming it. */
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
  CamlEmbeddings *emb = caml_embeddings_load_data (data, size, "fuzz.vec", &error);
  if (emb == NULL)
    {
      fuzz_check_error (error, "fuzz.vec");
      return 0;
    }
  int n = caml_vocab_size (emb->vocab);
  FUZZ_CHECK (emb->dim > 0, "dim %d", emb->dim);
  for (int i = 0; i < n; i++)
    {
      const float *v = caml_embeddings_lookup (emb, caml_vocab_word (emb->vocab, i));
      FUZZ_CHECK (v == emb->vectors + (size_t) i * emb->dim, "word %d is not where it says", i);
    }
  caml_embeddings_free (emb);
  return 0;
}
