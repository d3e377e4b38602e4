/* lines.c — the one line splitter of the line-based loaders
 * (lines-private.h). */
#include <string.h>

#include "lines-private.h"

gsize
caml_line_split (const char *data, gsize length, gsize *next)
{
  const char *nl = memchr (data, '\n', length);
  gsize stop = nl != NULL ? (gsize) (nl - data) : length;
  const char *cr = memchr (data, '\r', stop);   /* a \r before the first \n */
  if (cr != NULL)
    stop = (gsize) (cr - data);
  if (stop == length)
    *next = length;
  else if (data[stop] == '\r' && stop + 1 < length && data[stop + 1] == '\n')
    *next = stop + 2;
  else
    *next = stop + 1;
  return stop;
}

gboolean
caml_line_ended_in_cr (const char *data, gsize length, gsize line_length, gsize next)
{
  return next == length && line_length < length && data[line_length] == '\r';
}

gboolean
caml_line_is_blank (const char *line, gsize length)
{
  for (gsize i = 0; i < length; i++)
    if (line[i] != ' ' && line[i] != '\t')
      return FALSE;
  return TRUE;
}
