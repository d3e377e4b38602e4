/* lines.c — the one line splitter of the line-based loaders
 * (lines-private.h). */
#include <string.h>

#include "lines-private.h"
#include "caml-private.h"

gsize
caml_line_split (const char *data, gsize length, gsize *next)
{
  /* One pass to whichever of \r and \n comes first: a memchr for \n first
   * would cost a CR-only file the rest of it at every line (quadratic). */
  gsize stop = 0;
  while (stop < length && data[stop] != '\n' && data[stop] != '\r')
    stop++;
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
  /* the \r is the last byte: a whole \r\n there ended the line already */
  return next == length && line_length + 1 == length && data[line_length] == '\r';
}

int
caml_line_locate (const char *data, gsize length, gsize pos, gsize *line_start)
{
  int line = 1;
  gsize start = 0;
  while (start < length)
    {
      gsize next;
      gsize len = caml_line_split (data + start, length - start, &next);
      if (next == len || start + next > pos)   /* the last line, or pos's */
        break;
      start += next;
      line++;
    }
  *line_start = start;
  return line;
}

gboolean
caml_line_is_blank (const char *line, gsize length)
{
  for (gsize i = 0; i < length; i++)
    if (line[i] != ' ' && line[i] != '\t')
      return FALSE;
  return TRUE;
}

gboolean
caml_line_check_text (const char *line, gsize length, const char *source, int line_no,
                      GError **error)
{
  const char *bad = NULL;
  if (g_utf8_validate_len (line, length, &bad))
    return TRUE;
  gsize at = (gsize) (bad - line);
  if (line[at] == '\0')
    g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE,
                 "%s:%d:%" G_GSIZE_FORMAT ": a NUL byte: this is not a text file", source,
                 line_no, at + 1);
  else
    g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE,
                 "%s:%d:%" G_GSIZE_FORMAT ": byte 0x%02x is not UTF-8 text", source, line_no,
                 at + 1, (guint8) line[at]);
  return FALSE;
}
