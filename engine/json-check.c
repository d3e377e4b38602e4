/* json-check.c — strict JSON (RFC 8259) validation before json-glib parses.
 *
 * json-glib 1.6 is lenient and, on some malformed documents, unsafe: it
 * parses recursively (a few hundred thousand brackets overflow the stack),
 * accepts what JSON does not ("{}{}", ".14", octal escapes such as "\777"
 * that decode to bytes which are not UTF-8, lone surrogates), and leaks what
 * it has built on several error paths (found by fuzz-experiment with
 * G_SLICE=always-malloc). Everything json-glib is given has passed this
 * check first, so it only ever sees well-formed JSON, and the user gets one
 * kind of message: "line L:C: <problem>", columns counted in characters.
 *
 * The checker is a recursive descent over the grammar, bounded by max_depth,
 * and stricter than JSON in two ways that keep strings safe to use as C
 * strings and UTF-8: no "\u0000", no unpaired UTF-16 surrogates.
 *
 * The same pass keeps what json-glib 1.6 would get wrong: it reads an
 * integer literal with g_ascii_strtoull into a gint64 and negates it for a
 * '-', so 18446744073709551615 arrives as -1, 9223372036854775808 as
 * G_MININT64 and -18446744073709551615 as 1 — a wrong number in a message,
 * or a wrong value taken without a word. Only the text holds the real
 * number, so every integer literal outside gint64 is kept under its path,
 * spelled as the experiment parser's errors spell it ("seed",
 * "model[0].units", keys decoded). A key can repeat spelled two ways
 * ("steps", "st\u0065ps": keys are compared as written); then its last value
 * counts, as in json-glib. */
#include <string.h>

#include "json-check.h"
#include "lines-private.h"

typedef struct {
  const char *data;
  gsize       length;
  gsize       pos;
  int         max_depth;
  char       *message;   /* the first error */
  GHashTable *wide;      /* path → literal of each integer outside gint64, or NULL */
  GString    *path;      /* of the value being checked, while wide is kept */
} Checker;

/* The line and column (in characters, from 1) of byte pos; lines end in
 * \r\n, \n or a lone \r (lines.c). */
static void
locate (const Checker *c, gsize pos, int *line, glong *column)
{
  gsize line_start;
  pos = MIN (pos, c->length);
  *line = caml_line_locate (c->data, c->length, pos, &line_start);
  /* The document is valid UTF-8 up to here (checked first). */
  *column = g_utf8_strlen (c->data + line_start, (gssize) (pos - line_start)) + 1;
}

G_GNUC_PRINTF (3, 4) static gboolean
error_at (Checker *c, gsize pos, const char *format, ...)
{
  int line;
  glong column;
  locate (c, pos, &line, &column);
  va_list args;
  va_start (args, format);
  char *what = g_strdup_vprintf (format, args);
  va_end (args);
  c->message = g_strdup_printf ("line %d:%ld: %s", line, column, what);
  g_free (what);
  return FALSE;
}

/* What is at pos, for messages: "'x'", "byte 0x01" or "the end". */
static char *
describe_at (const Checker *c, gsize pos)
{
  if (pos >= c->length)
    return g_strdup ("the end of the document");
  guchar b = (guchar) c->data[pos];
  if (b == '<')
    return g_strdup ("'<' — is this an HTML page?");
  if (g_ascii_isprint (b))
    return g_strdup_printf ("'%c'", b);
  if (b >= 0x80)
    {
      gunichar u = g_utf8_get_char (c->data + pos);
      char buf[8] = { 0 };
      g_unichar_to_utf8 (u, buf);
      return g_strdup_printf ("'%s'", buf);
    }
  return g_strdup_printf ("byte 0x%02x", b);
}

G_GNUC_PRINTF (2, 3) static gboolean
expected (Checker *c, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  char *want = g_strdup_vprintf (format, args);
  va_end (args);
  char *found = describe_at (c, c->pos);
  error_at (c, c->pos, "expected %s, found %s", want, found);
  g_free (found);
  g_free (want);
  return FALSE;
}

static void
skip_space (Checker *c)
{
  while (c->pos < c->length)
    {
      char ch = c->data[c->pos];
      if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
        return;
      c->pos++;
    }
}

static gboolean
at (const Checker *c, char ch)
{
  return c->pos < c->length && c->data[c->pos] == ch;
}

static int
hex_value (char ch)
{
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if (ch >= 'a' && ch <= 'f')
    return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F')
    return ch - 'A' + 10;
  return -1;
}

/* \uXXXX at pos (pointing at the backslash): its code unit, or -1. */
static int
read_u_escape (const Checker *c, gsize pos)
{
  if (pos + 6 > c->length || c->data[pos] != '\\' || c->data[pos + 1] != 'u')
    return -1;
  int v = 0;
  for (int k = 0; k < 4; k++)
    {
      int h = hex_value (c->data[pos + 2 + k]);
      if (h < 0)
        return -1;
      v = v * 16 + h;
    }
  return v;
}

static gboolean
check_string (Checker *c)
{
  gsize start = c->pos;
  c->pos++;   /* the opening quote */
  for (;;)
    {
      if (c->pos >= c->length)
        return error_at (c, start, "a string that does not end");
      guchar ch = (guchar) c->data[c->pos];
      if (ch == '"')
        {
          c->pos++;
          return TRUE;
        }
      if (ch < 0x20)
        return error_at (c, c->pos, "control character 0x%02x in a string (write it "
                         "as an escape such as \\n)", ch);
      if (ch != '\\')
        {
          c->pos++;
          continue;
        }
      if (c->pos + 1 >= c->length)
        return error_at (c, start, "a string that does not end");
      char e = c->data[c->pos + 1];
      if (strchr ("\"\\/bfnrt", e) != NULL && e != '\0')
        {
          c->pos += 2;
          continue;
        }
      if (e != 'u')
        {
          char *found = g_ascii_isprint (e) ? g_strdup_printf ("\\%c", e)
                                            : g_strdup_printf ("\\ before byte 0x%02x",
                                                               (guchar) e);
          error_at (c, c->pos, "invalid escape %s in a string (JSON has \\\" \\\\ \\/ "
                    "\\b \\f \\n \\r \\t \\uXXXX)", found);
          g_free (found);
          return FALSE;
        }
      int unit = read_u_escape (c, c->pos);
      if (unit < 0)
        return error_at (c, c->pos, "\\u must be followed by four hexadecimal digits");
      if (unit == 0)
        return error_at (c, c->pos, "\\u0000 (a NUL character) is not allowed in strings");
      if (unit >= 0xdc00 && unit <= 0xdfff)
        return error_at (c, c->pos, "\\u%04x is half of a UTF-16 surrogate pair without "
                         "its first half", unit);
      if (unit >= 0xd800 && unit <= 0xdbff)
        {
          int low = read_u_escape (c, c->pos + 6);
          if (low < 0xdc00 || low > 0xdfff)
            return error_at (c, c->pos, "\\u%04x is half of a UTF-16 surrogate pair "
                             "without its second half", unit);
          c->pos += 6;
        }
      c->pos += 6;
    }
}

/* Keeps the integer literal data[start, c->pos) under the current path when
 * it is outside gint64 (JSON has no leading zeros: more digits is larger). */
static void
keep_wide (Checker *c, gsize start)
{
  gboolean negative = c->data[start] == '-';
  const char *digits = c->data + start + negative;
  gsize n = c->pos - start - negative;
  const char *limit = negative ? "9223372036854775808" : "9223372036854775807";
  if (n > 19 || (n == 19 && memcmp (digits, limit, 19) > 0))
    g_hash_table_insert (c->wide, g_strdup (c->path->str),
                         g_strndup (c->data + start, c->pos - start));
}

static gboolean
check_number (Checker *c)
{
  gsize start = c->pos;
  gboolean integer = TRUE;   /* json-glib reads a '.' or an exponent as a double */
  if (at (c, '-'))
    c->pos++;
  if (at (c, '0'))
    c->pos++;
  else if (c->pos < c->length && c->data[c->pos] >= '1' && c->data[c->pos] <= '9')
    while (c->pos < c->length && g_ascii_isdigit (c->data[c->pos]))
      c->pos++;
  else
    return error_at (c, start, "a malformed number");
  if (at (c, '.'))
    {
      integer = FALSE;
      c->pos++;
      if (!(c->pos < c->length && g_ascii_isdigit (c->data[c->pos])))
        return error_at (c, start, "a malformed number (digits must follow '.')");
      while (c->pos < c->length && g_ascii_isdigit (c->data[c->pos]))
        c->pos++;
    }
  if (at (c, 'e') || at (c, 'E'))
    {
      integer = FALSE;
      c->pos++;
      if (at (c, '+') || at (c, '-'))
        c->pos++;
      if (!(c->pos < c->length && g_ascii_isdigit (c->data[c->pos])))
        return error_at (c, start, "a malformed number (digits must follow the exponent)");
      while (c->pos < c->length && g_ascii_isdigit (c->data[c->pos]))
        c->pos++;
    }
  if (integer && c->wide != NULL)
    keep_wide (c, start);
  return TRUE;
}

static gboolean
check_literal (Checker *c, const char *word)
{
  gsize n = strlen (word);
  if (c->length - c->pos < n || memcmp (c->data + c->pos, word, n) != 0)
    return expected (c, "a value");
  c->pos += n;
  return TRUE;
}

/* The checked string data[start, end) (quotes included), decoded. */
static char *
decode_string (const Checker *c, gsize start, gsize end)
{
  GString *s = g_string_new (NULL);
  for (gsize i = start + 1; i < end - 1; i++)
    {
      char ch = c->data[i];
      if (ch != '\\')
        {
          g_string_append_c (s, ch);
          continue;
        }
      char e = c->data[++i];
      switch (e)
        {
        case 'b': g_string_append_c (s, '\b'); break;
        case 'f': g_string_append_c (s, '\f'); break;
        case 'n': g_string_append_c (s, '\n'); break;
        case 'r': g_string_append_c (s, '\r'); break;
        case 't': g_string_append_c (s, '\t'); break;
        case 'u':
          {
            gunichar u = (gunichar) read_u_escape (c, i - 1);
            i += 4;
            if (u >= 0xd800 && u < 0xdc00)   /* the low half follows: checked */
              {
                gunichar low = (gunichar) read_u_escape (c, i + 1);
                u = 0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00);
                i += 6;
              }
            g_string_append_unichar (s, u);
          }
          break;
        default:   /* " \ / */
          g_string_append_c (s, e);
        }
    }
  return g_string_free (s, FALSE);
}

static gboolean check_value (Checker *c, int depth);

static gboolean
check_container (Checker *c, int depth)
{
  gboolean object = c->data[c->pos] == '{';
  char close = object ? '}' : ']';
  if (depth >= c->max_depth)
    return error_at (c, c->pos, "nested deeper than %d levels", c->max_depth);
  c->pos++;
  skip_space (c);
  if (at (c, close))
    {
      c->pos++;
      return TRUE;
    }
  /* An object's keys as written (raw bytes between the quotes) → the
   * position of the first: json-glib would keep the last of two silently. */
  g_autoptr (GHashTable) keys = object ? g_hash_table_new_full (g_str_hash, g_str_equal,
                                                                 g_free, NULL)
                                       : NULL;
  gsize parent = c->wide != NULL ? c->path->len : 0;   /* the path without the child */
  for (int i = 0;; i++)
    {
      if (object)
        {
          if (!at (c, '"'))
            return expected (c, "a key in quotes");
          gsize key_pos = c->pos;
          if (!check_string (c))
            return FALSE;
          char *key = g_strndup (c->data + key_pos + 1, c->pos - key_pos - 2);
          gpointer first;
          if (g_hash_table_lookup_extended (keys, key, NULL, &first))
            {
              int line;
              glong column;
              locate (c, GPOINTER_TO_SIZE (first), &line, &column);
              error_at (c, key_pos, "the key \"%s\" appears twice in this object (first at "
                        "line %d:%ld)", key, line, column);
              g_free (key);
              return FALSE;
            }
          g_hash_table_insert (keys, key, GSIZE_TO_POINTER (key_pos));
          if (c->wide != NULL)
            {
              g_autofree char *name = decode_string (c, key_pos, c->pos);
              g_string_append_printf (c->path, "%s%s", parent > 0 ? "." : "", name);
            }
          skip_space (c);
          if (!at (c, ':'))
            return expected (c, "':' after the key");
          c->pos++;
          skip_space (c);
        }
      if (c->wide != NULL && !object)
        g_string_append_printf (c->path, "[%d]", i);
      if (!check_value (c, depth + 1))
        return FALSE;
      if (c->wide != NULL)
        g_string_truncate (c->path, parent);
      skip_space (c);
      if (at (c, close))
        {
          c->pos++;
          return TRUE;
        }
      if (!at (c, ','))
        return expected (c, object ? "',' or '}' in an object" : "',' or ']' in an array");
      c->pos++;
      skip_space (c);
    }
}

static gboolean
check_value (Checker *c, int depth)
{
  if (c->wide != NULL)
    g_hash_table_remove (c->wide, c->path->str);   /* a repeated key: the last value counts */
  if (c->pos >= c->length)
    return expected (c, "a value");
  switch (c->data[c->pos])
    {
    case '{':
    case '[':
      return check_container (c, depth);
    case '"':
      return check_string (c);
    case 't':
      return check_literal (c, "true");
    case 'f':
      return check_literal (c, "false");
    case 'n':
      return check_literal (c, "null");
    default:
      if (c->data[c->pos] == '-' || g_ascii_isdigit (c->data[c->pos]))
        return check_number (c);
      return expected (c, "a value");
    }
}

gboolean
caml_json_check (const char *data, gsize length, int max_depth, GHashTable *wide,
                 char **message)
{
  g_autoptr (GString) path = g_string_new (NULL);
  Checker c = { .data = data, .length = length, .max_depth = max_depth, .wide = wide,
                .path = path };
  const char *bad = NULL;

  if (!g_utf8_validate (data, (gssize) length, &bad))
    {
      /* Position of the first bad byte; what precedes it is UTF-8. */
      c.length = (gsize) (bad - data);
      if (*bad == '\0')
        error_at (&c, c.length, "a NUL byte in the document");
      else
        error_at (&c, c.length, "byte 0x%02x is not UTF-8 text", (guchar) *bad);
      *message = c.message;
      return FALSE;
    }
  if (length >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0)
    c.pos = 3;   /* a byte-order mark, which json-glib skips too */
  skip_space (&c);
  if (c.pos >= c.length)
    {
      *message = g_strdup ("the document is empty");
      return FALSE;
    }
  gboolean ok = check_value (&c, 0);
  if (ok)
    {
      skip_space (&c);
      if (c.pos < c.length)
        {
          char *found = describe_at (&c, c.pos);
          ok = error_at (&c, c.pos, "%s after the end of the document", found);
          g_free (found);
        }
    }
  *message = c.message;
  return ok;
}
