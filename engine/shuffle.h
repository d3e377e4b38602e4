/* shuffle.h — private to the engine: the seeded permutations data splits
 * use. splitmix64 (Steele, Lea and Flood 2014) is a few lines that any
 * language can replay, so a split can be reproduced outside the engine:
 * shuffling m items draws, for i = m − 1 down to 1, j = next () mod (i + 1)
 * and swaps items i and j. */
#pragma once

#include <glib.h>

static inline guint64
caml_splitmix64 (guint64 *state)
{
  guint64 z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static inline void
caml_shuffle_ints (int *v, int n, guint64 *state)
{
  for (int i = n - 1; i > 0; i--)
    {
      int j = (int) (caml_splitmix64 (state) % (guint64) (i + 1));
      int t = v[i];
      v[i] = v[j];
      v[j] = t;
    }
}
