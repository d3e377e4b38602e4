/* shape.c — per-sample shapes. */
#include "caml-private.h"

CamlShape
caml_shape_flat (int d)
{
  CamlShape s = { 1, { d, 0, 0 } };
  return s;
}

CamlShape
caml_shape_image (int c, int h, int w)
{
  CamlShape s = { 3, { c, h, w } };
  return s;
}

CamlShape
caml_shape_tokens (int t, int vocab)
{
  CamlShape s = { 1, { t, 0, 0 }, CAML_SHAPE_TOKENS, vocab };
  return s;
}

CamlShape
caml_shape_sequence (int t, int d)
{
  CamlShape s = { 2, { t, d, 0 }, CAML_SHAPE_SEQUENCE, 0 };
  return s;
}

size_t
caml_shape_size (const CamlShape *shape)
{
  size_t n = 1;
  for (int i = 0; i < shape->ndim; i++)
    n *= (size_t) shape->dims[i];
  return shape->ndim > 0 ? n : 0;
}

gboolean
caml_shape_is_plane (const CamlShape *shape)
{
  return shape->kind == CAML_SHAPE_DENSE && caml_shape_size (shape) == 2;
}

gboolean
caml_shape_equal (const CamlShape *a, const CamlShape *b)
{
  if (a->ndim != b->ndim || a->kind != b->kind || a->vocab != b->vocab)
    return FALSE;
  for (int i = 0; i < a->ndim; i++)
    if (a->dims[i] != b->dims[i])
      return FALSE;
  return TRUE;
}

char *
caml_shape_to_string (const CamlShape *shape)
{
  if (shape->kind == CAML_SHAPE_TOKENS)
    return g_strdup_printf ("(%d tokens)", shape->dims[0]);
  if (shape->kind == CAML_SHAPE_SEQUENCE)
    return g_strdup_printf ("(%d steps, %d)", shape->dims[0], shape->dims[1]);
  GString *s = g_string_new ("(");
  for (int i = 0; i < shape->ndim; i++)
    g_string_append_printf (s, i ? ", %d" : "%d", shape->dims[i]);
  g_string_append_c (s, ')');
  return g_string_free (s, FALSE);
}
