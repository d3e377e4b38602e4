/* json-check.c — strict JSON (RFC 8259) into a json-glib tree, in one pass.
 *
 * json-glib 1.6's parser is lenient and, on some malformed documents,
 * unsafe: it parses recursively (a few hundred thousand brackets overflow
 * the stack), accepts what JSON does not ("{}{}", ".14", octal escapes such
 * as "\777" that decode to bytes which are not UTF-8, lone surrogates), and
 * leaks what it has built on several error paths (found by fuzz-experiment
 * with G_SLICE=always-malloc). So experiment files never go through it: this
 * reader checks the grammar and builds the JsonNode tree the experiment
 * parser reads (json-glib's types, through its public API) in the same pass,
 * and a user gets one kind of message, json-position.h's "FILE:L:C: PATH:
 * PROBLEM".
 *
 * It is a recursive descent bounded by max_depth, and stricter than JSON in
 * two ways that keep strings safe to use as C strings and UTF-8: no
 * "\u0000", no unpaired UTF-16 surrogates. The tree is what json-glib 1.6
 * would build from the same text: an integer literal (no '.', no exponent)
 * is a gint64 node, any other number a double from g_ascii_strtod, members
 * in the order written, a key spelled two ways ("steps", "st\u0065ps") keeps
 * its first place and its last value (json_object_set_member).
 *
 * An integer literal outside gint64 cannot be held by a node: the node holds
 * it clamped and the literal is kept under its path, spelled as the
 * experiment parser's errors spell it ("seed", "model[0].units", keys
 * decoded), for the number readers of experiment-json.c. Where each value
 * is can be kept the same way (a sweep file's errors, json-doc.c). */
#include <string.h>

#include "caml-private.h"
#include "json-check.h"
#include "json-position.h"

/* The value being read, for paths: a member (key_pos is where its key
 * starts) or an element (index). Built only for messages and wide integers. */
typedef struct Frame Frame;
struct Frame {
  const Frame *parent;   /* NULL for the document */
  gsize        key_pos;  /* G_MAXSIZE for an element */
  int          index;
};

typedef struct {
  const char *data;
  gsize       length;
  gsize       pos;
  int         max_depth;
  const char *source;
  GError    **error;
  GHashTable *wide;      /* path → literal of each integer outside gint64, or NULL */
  GHashTable *spots;     /* path → CamlJsonSpot of each value, or NULL */
  GString    *buf;       /* the string being decoded */
  GArray     *keys;      /* gsize: where the keys of the open objects start */
} Reader;

static char *decode_key (const Reader *r, gsize pos);

/* "model[0].units": the path of frame, keys decoded. */
static char *
frame_path (const Reader *r, const Frame *frame)
{
  GPtrArray *parts = g_ptr_array_new_with_free_func (g_free);
  for (const Frame *f = frame; f != NULL && f->parent != NULL; f = f->parent)
    g_ptr_array_add (parts, f->key_pos == G_MAXSIZE ? g_strdup_printf ("[%d]", f->index)
                                                    : decode_key (r, f->key_pos));
  GString *path = g_string_new (NULL);
  for (guint i = parts->len; i-- > 0;)
    {
      const char *part = parts->pdata[i];
      if (path->len > 0 && part[0] != '[')
        g_string_append_c (path, '.');
      g_string_append (path, part);
    }
  g_ptr_array_free (parts, TRUE);
  return g_string_free (path, FALSE);
}

G_GNUC_PRINTF (4, 5) static gboolean
error_at (Reader *r, gsize pos, const Frame *frame, const char *format, ...)
{
  if (r->error != NULL && *r->error != NULL)
    return FALSE;   /* the first error stands */
  char *path = frame != NULL ? frame_path (r, frame) : NULL;
  va_list args;
  va_start (args, format);
  caml_json_error_valist (r->error, r->source, caml_json_locate (r->data, r->length, pos),
                          path, format, args);
  va_end (args);
  g_free (path);
  return FALSE;
}

/* What is at pos, for messages: "'x'", "byte 0x01" or "the end". */
static char *
describe_at (const Reader *r, gsize pos)
{
  if (pos >= r->length)
    return g_strdup ("the end of the document");
  guchar b = (guchar) r->data[pos];
  if (b == '<')
    return g_strdup ("'<' — is this an HTML page?");
  if (g_ascii_isprint (b))
    return g_strdup_printf ("'%c'", b);
  if (b >= 0x80)
    {
      gunichar u = g_utf8_get_char (r->data + pos);
      char buf[8] = { 0 };
      g_unichar_to_utf8 (u, buf);
      return g_strdup_printf ("'%s'", buf);
    }
  return g_strdup_printf ("byte 0x%02x", b);
}

G_GNUC_PRINTF (3, 4) static gboolean
expected (Reader *r, const Frame *frame, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  char *want = g_strdup_vprintf (format, args);
  va_end (args);
  char *found = describe_at (r, r->pos);
  error_at (r, r->pos, frame, "expected %s, found %s", want, found);
  g_free (found);
  g_free (want);
  return FALSE;
}

static void
skip_space (Reader *r)
{
  while (r->pos < r->length)
    {
      char ch = r->data[r->pos];
      if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
        return;
      r->pos++;
    }
}

static gboolean
at (const Reader *r, char ch)
{
  return r->pos < r->length && r->data[r->pos] == ch;
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
read_u_escape (const Reader *r, gsize pos)
{
  if (pos + 6 > r->length || r->data[pos] != '\\' || r->data[pos + 1] != 'u')
    return -1;
  int v = 0;
  for (int k = 0; k < 4; k++)
    {
      int h = hex_value (r->data[pos + 2 + k]);
      if (h < 0)
        return -1;
      v = v * 16 + h;
    }
  return v;
}

/* The string at r->pos (its opening quote), checked and decoded into
 * r->buf (the document is UTF-8: checked first). */
static gboolean
read_string (Reader *r, const Frame *frame)
{
  gsize start = r->pos;
  g_string_truncate (r->buf, 0);
  r->pos++;   /* the opening quote */
  for (;;)
    {
      gsize run = r->pos;
      while (run < r->length)
        {
          guchar ch = (guchar) r->data[run];
          if (ch == '"' || ch == '\\' || ch < 0x20)
            break;
          run++;
        }
      g_string_append_len (r->buf, r->data + r->pos, (gssize) (run - r->pos));
      r->pos = run;
      if (r->pos >= r->length)
        return error_at (r, start, frame, "a string that does not end");
      guchar ch = (guchar) r->data[r->pos];
      if (ch == '"')
        {
          r->pos++;
          return TRUE;
        }
      if (ch < 0x20)
        return error_at (r, r->pos, frame, "control character 0x%02x in a string (write it "
                         "as an escape such as \\n)", ch);
      if (r->pos + 1 >= r->length)
        return error_at (r, start, frame, "a string that does not end");
      char e = r->data[r->pos + 1], plain;
      switch (e)
        {
        case '"': case '\\': case '/': plain = e; break;
        case 'b': plain = '\b'; break;
        case 'f': plain = '\f'; break;
        case 'n': plain = '\n'; break;
        case 'r': plain = '\r'; break;
        case 't': plain = '\t'; break;
        default: plain = '\0';
        }
      if (plain != '\0')
        {
          g_string_append_c (r->buf, plain);
          r->pos += 2;
          continue;
        }
      if (e != 'u')
        {
          char *found = g_ascii_isprint (e) ? g_strdup_printf ("\\%c", e)
                                            : g_strdup_printf ("\\ before byte 0x%02x",
                                                               (guchar) e);
          error_at (r, r->pos, frame, "invalid escape %s in a string (JSON has \\\" \\\\ \\/ "
                    "\\b \\f \\n \\r \\t \\uXXXX)", found);
          g_free (found);
          return FALSE;
        }
      int unit = read_u_escape (r, r->pos);
      if (unit < 0)
        return error_at (r, r->pos, frame, "\\u must be followed by four hexadecimal digits");
      if (unit == 0)
        return error_at (r, r->pos, frame, "\\u0000 (a NUL character) is not allowed in "
                         "strings");
      if (unit >= 0xdc00 && unit <= 0xdfff)
        return error_at (r, r->pos, frame, "\\u%04x is half of a UTF-16 surrogate pair "
                         "without its first half", unit);
      gunichar u = (gunichar) unit;
      if (unit >= 0xd800 && unit <= 0xdbff)
        {
          int low = read_u_escape (r, r->pos + 6);
          if (low < 0xdc00 || low > 0xdfff)
            return error_at (r, r->pos, frame, "\\u%04x is half of a UTF-16 surrogate pair "
                             "without its second half", unit);
          u = 0x10000 + (((gunichar) unit - 0xd800) << 10) + ((gunichar) low - 0xdc00);
          r->pos += 6;
        }
      g_string_append_unichar (r->buf, u);
      r->pos += 6;
    }
}

/* The key at pos, decoded (it was checked when it was read). */
static char *
decode_key (const Reader *r, gsize pos)
{
  Reader again = { .data = r->data, .length = r->length, .pos = pos,
                   .buf = g_string_new (NULL) };
  read_string (&again, NULL);
  return g_string_free (again.buf, FALSE);
}

/* An integer literal (data[start, end), digits with an optional '-') as
 * json-glib reads it when it fits a gint64; otherwise the literal is kept
 * under the path and the value clamped. */
static gint64
read_integer (Reader *r, gsize start, gsize end, const Frame *frame)
{
  gboolean negative = r->data[start] == '-';
  guint64 v = 0;
  gboolean wide = FALSE;
  for (gsize i = start + negative; i < end && !wide; i++)
    {
      guint d = (guint) (r->data[i] - '0');
      if (v > (G_MAXUINT64 - d) / 10)
        wide = TRUE;
      else
        v = v * 10 + d;
    }
  guint64 limit = negative ? (guint64) G_MAXINT64 + 1 : (guint64) G_MAXINT64;
  if (!wide && v <= limit)
    return negative ? (gint64) (0 - v) : (gint64) v;   /* 0 − 2^63 is G_MININT64 */
  if (r->wide != NULL)
    g_hash_table_insert (r->wide, frame_path (r, frame),
                         g_strndup (r->data + start, end - start));
  return negative ? G_MININT64 : G_MAXINT64;
}

static JsonNode *
read_number (Reader *r, const Frame *frame)
{
  gsize start = r->pos;
  gboolean integer = TRUE;   /* json-glib reads a '.' or an exponent as a double */
  if (at (r, '-'))
    r->pos++;
  if (at (r, '0'))
    r->pos++;
  else if (r->pos < r->length && r->data[r->pos] >= '1' && r->data[r->pos] <= '9')
    while (r->pos < r->length && g_ascii_isdigit (r->data[r->pos]))
      r->pos++;
  else
    return error_at (r, start, frame, "a malformed number"), NULL;
  if (at (r, '.'))
    {
      integer = FALSE;
      r->pos++;
      if (!(r->pos < r->length && g_ascii_isdigit (r->data[r->pos])))
        return error_at (r, start, frame, "a malformed number (digits must follow '.')"), NULL;
      while (r->pos < r->length && g_ascii_isdigit (r->data[r->pos]))
        r->pos++;
    }
  if (at (r, 'e') || at (r, 'E'))
    {
      integer = FALSE;
      r->pos++;
      if (at (r, '+') || at (r, '-'))
        r->pos++;
      if (!(r->pos < r->length && g_ascii_isdigit (r->data[r->pos])))
        return error_at (r, start, frame, "a malformed number (digits must follow the "
                         "exponent)"), NULL;
      while (r->pos < r->length && g_ascii_isdigit (r->data[r->pos]))
        r->pos++;
    }
  JsonNode *node = json_node_alloc ();
  if (integer)
    return json_node_init_int (node, read_integer (r, start, r->pos, frame));
  /* g_ascii_strtod wants a NUL after the number: data need not have one. */
  gsize n = r->pos - start;
  char small[64];
  char *text = n < sizeof small ? small : g_malloc (n + 1);
  memcpy (text, r->data + start, n);
  text[n] = '\0';
  json_node_init_double (node, g_ascii_strtod (text, NULL));
  if (text != small)
    g_free (text);
  return node;
}

static JsonNode *
read_literal (Reader *r, const Frame *frame, const char *word)
{
  gsize n = strlen (word);
  if (r->length - r->pos < n || memcmp (r->data + r->pos, word, n) != 0)
    return expected (r, frame, "a value"), NULL;
  r->pos += n;
  JsonNode *node = json_node_alloc ();
  if (word[0] == 'n')
    return json_node_init_null (node);
  return json_node_init_boolean (node, word[0] == 't');
}

/* The end of the string whose opening quote is at pos (checked already). */
static gsize
string_end (const Reader *r, gsize pos)
{
  for (gsize i = pos + 1;; i++)
    {
      if (r->data[i] == '\\')
        i++;
      else if (r->data[i] == '"')
        return i + 1;
    }
}

/* Where a key written exactly as data[pos, end) (quotes included) first
 * appears among the keys of the open object (from first on), or G_MAXSIZE. */
static gsize
same_key (const Reader *r, guint first, gsize pos, gsize end)
{
  for (guint k = first; k < r->keys->len; k++)
    {
      gsize other = g_array_index (r->keys, gsize, k);
      if (string_end (r, other) - other == end - pos
          && memcmp (r->data + other, r->data + pos, end - pos) == 0)
        return other;
    }
  return G_MAXSIZE;
}

/* Forgets what table holds at path and under it: a key spelled again. */
static void
forget_path (GHashTable *table, const char *path)
{
  gsize n = strlen (path);
  GHashTableIter iter;
  gpointer key;
  g_hash_table_iter_init (&iter, table);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      const char *p = key;
      if (strncmp (p, path, n) == 0 && (p[n] == '\0' || p[n] == '.' || p[n] == '['))
        g_hash_table_iter_remove (&iter);
    }
}

static JsonNode *read_value (Reader *r, int depth, const Frame *frame);

static JsonNode *
read_object (Reader *r, int depth, const Frame *frame)
{
  JsonObject *object = json_object_new ();
  JsonNode *node = json_node_init_object (json_node_alloc (), object);
  json_object_unref (object);
  guint first_key = r->keys->len;
  gboolean ok = TRUE;
  r->pos++;
  skip_space (r);
  if (at (r, '}'))
    r->pos++;
  else
    for (int i = 0; ok; i++)
      {
        if (!at (r, '"'))
          {
            ok = expected (r, frame, "a key in quotes");
            break;
          }
        gsize key_pos = r->pos;
        if (!(ok = read_string (r, frame)))
          break;
        char *key = g_strndup (r->buf->str, r->buf->len);
        Frame child = { .parent = frame, .key_pos = key_pos, .index = i };
        if (json_object_has_member (object, key))
          {
            gsize first = same_key (r, first_key, key_pos, r->pos);
            if (first != G_MAXSIZE)
              {
                CamlJsonPos where = caml_json_locate (r->data, r->length, first);
                char *written = g_strndup (r->data + key_pos + 1, r->pos - key_pos - 2);
                ok = error_at (r, key_pos, frame, "the key \"%s\" appears twice in this "
                               "object (first at %" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT
                               ")", written, where.line, where.column);
                g_free (written);
                g_free (key);
                break;
              }
            if (r->wide != NULL || r->spots != NULL)   /* spelled another way: */
              {                                          /* its last value counts */
                char *path = frame_path (r, &child);
                if (r->wide != NULL)
                  forget_path (r->wide, path);
                if (r->spots != NULL)
                  forget_path (r->spots, path);
                g_free (path);
              }
          }
        g_array_append_val (r->keys, key_pos);
        skip_space (r);
        if (!at (r, ':'))
          {
            ok = expected (r, frame, "':' after the key");
            g_free (key);
            break;
          }
        r->pos++;
        skip_space (r);
        JsonNode *member = read_value (r, depth + 1, &child);
        if (member == NULL)
          {
            g_free (key);
            ok = FALSE;
            break;
          }
        json_object_set_member (object, key, member);
        g_free (key);
        skip_space (r);
        if (at (r, '}'))
          {
            r->pos++;
            break;
          }
        if (!at (r, ','))
          {
            ok = expected (r, frame, "',' or '}' in an object");
            break;
          }
        r->pos++;
        skip_space (r);
      }
  g_array_set_size (r->keys, first_key);
  if (!ok)
    g_clear_pointer (&node, json_node_unref);
  return node;
}

static JsonNode *
read_array (Reader *r, int depth, const Frame *frame)
{
  JsonArray *array = json_array_new ();
  JsonNode *node = json_node_init_array (json_node_alloc (), array);
  json_array_unref (array);
  r->pos++;
  skip_space (r);
  if (at (r, ']'))
    {
      r->pos++;
      return node;
    }
  for (int i = 0;; i++)
    {
      Frame child = { .parent = frame, .key_pos = G_MAXSIZE, .index = i };
      JsonNode *element = read_value (r, depth + 1, &child);
      if (element == NULL)
        break;
      json_array_add_element (array, element);
      skip_space (r);
      if (at (r, ']'))
        {
          r->pos++;
          return node;
        }
      if (!at (r, ','))
        {
          expected (r, frame, "',' or ']' in an array");
          break;
        }
      r->pos++;
      skip_space (r);
    }
  json_node_unref (node);
  return NULL;
}

static JsonNode *
read_value (Reader *r, int depth, const Frame *frame)
{
  if (r->pos >= r->length)
    return expected (r, frame, "a value"), NULL;
  if (r->spots != NULL)
    {
      CamlJsonSpot *spot = g_new (CamlJsonSpot, 1);
      spot->value = r->pos;
      spot->key = frame->key_pos != G_MAXSIZE && frame->parent != NULL ? frame->key_pos
                                                                        : r->pos;
      g_hash_table_insert (r->spots, frame_path (r, frame), spot);
    }
  switch (r->data[r->pos])
    {
    case '{':
    case '[':
      if (depth >= r->max_depth)
        return error_at (r, r->pos, NULL, "nested deeper than %d levels",   /* no path: */
                         r->max_depth), NULL;                               /* [0][0]… */
      return r->data[r->pos] == '{' ? read_object (r, depth, frame)
                                    : read_array (r, depth, frame);
    case '"':
      if (!read_string (r, frame))
        return NULL;
      return json_node_init_string (json_node_alloc (), r->buf->str);
    case 't':
      return read_literal (r, frame, "true");
    case 'f':
      return read_literal (r, frame, "false");
    case 'n':
      return read_literal (r, frame, "null");
    default:
      if (r->data[r->pos] == '-' || g_ascii_isdigit (r->data[r->pos]))
        return read_number (r, frame);
      return expected (r, frame, "a value"), NULL;
    }
}

JsonNode *
caml_json_parse (const char *data, gsize length, const char *source, int max_depth,
                 GHashTable *wide, GError **error)
{
  return caml_json_parse_full (data, length, source, max_depth, wide, NULL, error);
}

JsonNode *
caml_json_parse_full (const char *data, gsize length, const char *source, int max_depth,
                      GHashTable *wide, GHashTable *spots, GError **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  GError *local = NULL;   /* error_at keeps the first error: it needs somewhere to look */
  Reader r = { .data = data, .length = length, .max_depth = max_depth, .source = source,
               .error = &local, .wide = wide, .spots = spots };
  const char *bad = NULL;

  if (!g_utf8_validate (data, (gssize) length, &bad))
    {
      /* Position of the first bad byte; what precedes it is UTF-8. */
      gsize pos = (gsize) (bad - data);
      if (*bad == '\0')
        error_at (&r, pos, NULL, "a NUL byte in the document");
      else
        error_at (&r, pos, NULL, "byte 0x%02x is not UTF-8 text", (guchar) *bad);
      g_propagate_error (error, local);
      return NULL;
    }
  if (length >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0)
    r.pos = 3;   /* a byte-order mark, which json-glib skips too */
  skip_space (&r);
  if (r.pos >= r.length)
    {
      g_autofree char *valid = g_utf8_make_valid (source, -1);
      g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE, "%s: the document is empty", valid);
      return NULL;
    }
  r.buf = g_string_new (NULL);
  r.keys = g_array_new (FALSE, FALSE, sizeof (gsize));
  Frame root = { 0 };
  JsonNode *node = read_value (&r, 0, &root);
  if (node != NULL)
    {
      skip_space (&r);
      if (r.pos < r.length)
        {
          char *found = describe_at (&r, r.pos);
          error_at (&r, r.pos, NULL, "%s after the end of the document", found);
          g_free (found);
          g_clear_pointer (&node, json_node_unref);
        }
    }
  g_string_free (r.buf, TRUE);
  g_array_free (r.keys, TRUE);
  if (node == NULL)
    g_propagate_error (error, local);
  return node;
}
