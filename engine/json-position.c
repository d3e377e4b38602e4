/* json-position.c — line and column of a JSON reader's error, and the one
 * wording of its message (json-position.h). */
#include "json-position.h"
#include "caml-private.h"

/* Counted a whole buffer at a time, in loops without branches the compiler
 * can vectorize: a streaming reader counts every byte of a 300 MB file. */
void
caml_json_counter_feed (CamlJsonCounter *counter, const guint8 *bytes, gsize n)
{
  if (n == 0)
    return;
  gsize lf = 0, cr = 0, crlf = 0;
  for (gsize i = 0; i < n; i++)
    {
      lf += bytes[i] == '\n';
      cr += bytes[i] == '\r';
    }
  if (cr > 0)
    for (gsize i = 0; i + 1 < n; i++)
      crlf += bytes[i] == '\r' && bytes[i + 1] == '\n';
  crlf += counter->after_cr && bytes[0] == '\n';   /* a \r\n split between two feeds */
  /* The line starts after the last line end, if there is one here. */
  gsize from = 0;
  if (lf + cr > 0)
    {
      from = n;
      while (bytes[from - 1] != '\n' && bytes[from - 1] != '\r')
        from--;
      counter->at.line += lf + cr - crlf;
      counter->at.column = 1;
    }
  guint64 characters = 0;   /* bytes that do not continue a UTF-8 sequence */
  for (gsize i = from; i < n; i++)
    characters += (bytes[i] & 0xc0) != 0x80;
  counter->at.column += characters;
  counter->after_cr = bytes[n - 1] == '\r';
}

CamlJsonPos
caml_json_locate (const char *data, gsize length, gsize pos)
{
  CamlJsonCounter counter = CAML_JSON_COUNTER_INIT;
  caml_json_counter_feed (&counter, (const guint8 *) data, MIN (pos, length));
  return counter.at;
}

CamlJsonPos
caml_json_pos_back (CamlJsonPos pos, guint64 n)
{
  pos.column = pos.column > n ? pos.column - n : 1;
  return pos;
}

char *
caml_json_where (const char *source, CamlJsonPos pos, const char *path)
{
  return path != NULL && *path != '\0'
         ? g_strdup_printf ("%s:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT ": %s",
                            source, pos.line, pos.column, path)
         : g_strdup_printf ("%s:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT,
                            source, pos.line, pos.column);
}

void
caml_json_error_valist (GError **error, const char *source, CamlJsonPos pos, const char *path,
                        const char *format, va_list args)
{
  char *problem = g_strdup_vprintf (format, args);
  char *where = caml_json_where (source, pos, path);
  char *full = g_strconcat (where, ": ", problem, NULL);
  char *valid = g_utf8_make_valid (full, -1);
  g_set_error_literal (error, CAML_ERROR, CAML_ERROR_PARSE, valid);
  g_free (valid);
  g_free (full);
  g_free (where);
  g_free (problem);
}

void
caml_json_error (GError **error, const char *source, CamlJsonPos pos, const char *path,
                 const char *format, ...)
{
  va_list args;
  va_start (args, format);
  caml_json_error_valist (error, source, pos, path, format, args);
  va_end (args);
}
