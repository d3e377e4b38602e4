/* json-position.c — line and column of a JSON reader's error, and the one
 * wording of its message (json-position.h). */
#include "json-position.h"
#include "caml-private.h"

void
caml_json_counter_feed (CamlJsonCounter *counter, const guint8 *bytes, gsize n)
{
  guint64 line = counter->at.line, column = counter->at.column;
  gboolean after_cr = counter->after_cr;
  for (gsize i = 0; i < n; i++)
    {
      guint8 b = bytes[i];
      if (G_UNLIKELY (b == '\n' || b == '\r'))
        {
          if (!(b == '\n' && after_cr))   /* the \n of a \r\n ended no line */
            {
              line++;
              column = 1;
            }
          after_cr = b == '\r';
          continue;
        }
      after_cr = FALSE;
      column += (b & 0xc0) != 0x80;
    }
  counter->at = (CamlJsonPos) { line, column };
  counter->after_cr = after_cr;
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

void
caml_json_error_valist (GError **error, const char *source, CamlJsonPos pos, const char *path,
                        const char *format, va_list args)
{
  char *problem = g_strdup_vprintf (format, args);
  char *full = path != NULL && *path != '\0'
               ? g_strdup_printf ("%s:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT ": %s: %s",
                                  source, pos.line, pos.column, path, problem)
               : g_strdup_printf ("%s:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT ": %s",
                                  source, pos.line, pos.column, problem);
  char *valid = g_utf8_make_valid (full, -1);
  g_set_error_literal (error, CAML_ERROR, CAML_ERROR_PARSE, valid);
  g_free (valid);
  g_free (full);
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
