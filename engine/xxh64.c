/* xxh64.c — XXH64, following the reference description of xxHash
 * (https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md): four
 * lanes over 32-byte stripes, then the tail in 8-, 4- and 1-byte steps, then
 * the avalanche. Input words are read little-endian on any host. */
#include <string.h>

#include "xxh64.h"

#define P1 G_GUINT64_CONSTANT (11400714785074694791)
#define P2 G_GUINT64_CONSTANT (14029467366897019727)
#define P3 G_GUINT64_CONSTANT (1609587929392839161)
#define P4 G_GUINT64_CONSTANT (9650029242287828579)
#define P5 G_GUINT64_CONSTANT (2870177450012600261)

static inline guint64
rotl (guint64 x, int r)
{
  return (x << r) | (x >> (64 - r));
}

static inline guint64
read64 (const guint8 *p)
{
  guint64 v;
  memcpy (&v, p, sizeof v);
  return GUINT64_FROM_LE (v);
}

static inline guint32
read32 (const guint8 *p)
{
  guint32 v;
  memcpy (&v, p, sizeof v);
  return GUINT32_FROM_LE (v);
}

static inline guint64
round64 (guint64 acc, guint64 input)
{
  acc += input * P2;
  acc = rotl (acc, 31);
  return acc * P1;
}

static inline guint64
merge_round (guint64 acc, guint64 val)
{
  acc ^= round64 (0, val);
  return acc * P1 + P4;
}

void
caml_xxh64_init (CamlXxh64 *s, guint64 seed)
{
  memset (s, 0, sizeof *s);
  s->seed = seed;
  s->v[0] = seed + P1 + P2;
  s->v[1] = seed + P2;
  s->v[2] = seed;
  s->v[3] = seed - P1;
}

static inline void
stripe (guint64 v[4], const guint8 *p)
{
  v[0] = round64 (v[0], read64 (p));
  v[1] = round64 (v[1], read64 (p + 8));
  v[2] = round64 (v[2], read64 (p + 16));
  v[3] = round64 (v[3], read64 (p + 24));
}

void
caml_xxh64_update (CamlXxh64 *s, const void *data, gsize length)
{
  const guint8 *p = data, *end = p + length;
  s->total += length;

  if (s->mem_size + length < 32)
    {
      if (length > 0)
        memcpy (s->mem + s->mem_size, p, length);
      s->mem_size += (guint32) length;
      return;
    }
  if (s->mem_size > 0)
    {
      gsize fill = 32 - s->mem_size;
      memcpy (s->mem + s->mem_size, p, fill);
      stripe (s->v, s->mem);
      p += fill;
      s->mem_size = 0;
    }
  guint64 v[4] = { s->v[0], s->v[1], s->v[2], s->v[3] };
  while (end - p >= 32)
    {
      stripe (v, p);
      p += 32;
    }
  memcpy (s->v, v, sizeof v);
  if (p < end)
    {
      memcpy (s->mem, p, (gsize) (end - p));
      s->mem_size = (guint32) (end - p);
    }
}

guint64
caml_xxh64_digest (const CamlXxh64 *s)
{
  guint64 h;
  if (s->total >= 32)
    {
      h = rotl (s->v[0], 1) + rotl (s->v[1], 7) + rotl (s->v[2], 12) + rotl (s->v[3], 18);
      for (int i = 0; i < 4; i++)
        h = merge_round (h, s->v[i]);
    }
  else
    h = s->seed + P5;
  h += s->total;

  const guint8 *p = s->mem, *end = s->mem + s->mem_size;
  for (; end - p >= 8; p += 8)
    {
      h ^= round64 (0, read64 (p));
      h = rotl (h, 27) * P1 + P4;
    }
  if (end - p >= 4)
    {
      h ^= (guint64) read32 (p) * P1;
      h = rotl (h, 23) * P2 + P3;
      p += 4;
    }
  for (; p < end; p++)
    {
      h ^= *p * P5;
      h = rotl (h, 11) * P1;
    }
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

guint64
caml_xxh64 (const void *data, gsize length, guint64 seed)
{
  CamlXxh64 s;
  caml_xxh64_init (&s, seed);
  caml_xxh64_update (&s, data, length);
  return caml_xxh64_digest (&s);
}
