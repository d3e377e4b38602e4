/* caml-format.c — numbers as the workbench writes them (caml-format.h). */
#include <math.h>
#include <string.h>

#include "caml-format.h"

char *
caml_format_positive (double value)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE + 8];
  int digits = 1;

  if (!(value > 0) || !isfinite (value))
    return g_strdup_printf ("%g", value);
  /* The fewest significant digits that read back as the value… */
  for (; digits < 17; digits++)
    {
      g_snprintf (buf, sizeof buf, "%.*g", digits, value);
      if (g_strtod (buf, NULL) == value)
        break;
    }
  if (digits == 17)
    g_snprintf (buf, sizeof buf, "%.17g", value);
  /* …written out up to 10¹⁶ (1000, not 1e+03), and a short exponent
   * beyond (1e-7, 2.5e20). */
  int exponent = (int) floor (log10 (value));
  if (exponent >= digits && exponent < 16)
    g_snprintf (buf, sizeof buf, "%.*g", exponent + 1, value);
  const char *e = strchr (buf, 'e');
  if (e == NULL)
    return g_strdup (buf);
  GString *out = g_string_new (NULL);
  g_string_append_len (out, buf, e - buf + 1);
  e++;
  if (*e == '-')
    g_string_append_c (out, *e++);
  else if (*e == '+')
    e++;
  while (*e == '0' && e[1] != '\0')
    e++;
  g_string_append (out, e);
  return g_string_free (out, FALSE);
}

char *
caml_format_sentence (const char *text)
{
  if (text == NULL)
    return NULL;
  char *s = g_strdup (text);
  /* ASCII only: every message starts with an English word or a number. */
  if (g_ascii_islower (s[0]))
    s[0] = g_ascii_toupper (s[0]);
  return s;
}
