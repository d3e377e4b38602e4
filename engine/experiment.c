/* experiment.c — experiment files: parse, validate, write, and build from.
 *
 * An experiment is one JSON object (docs/experiment-files.md). Every object's
 * keys are checked against what it may hold, so a typo is an error that names
 * the key and its path ("surface.json: model[1].unitz: unknown key …"). Layer
 * options are never spelled out here: they come from the registry's
 * CamlOptionSpec tables at run time, so a new layer type needs no parser
 * change. Writing is canonical (every field, fixed order; the fields added
 * later — unique_tokens, ngrams, validation_fraction, split_seed,
 * weight_decay, average_decay — only when not at their default, so that
 * files that do not use them stay as they were), so load (to_json (e)) == e. */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "average.h"
#include "caml.h"
#include "json-check.h"

const char *const caml_data_kind_names[] = {
  "xor", "surface", "mnist", "fashion_mnist", "sst", "imdb", "rnn_sanity", "idx", "text", NULL
};
G_STATIC_ASSERT (G_N_ELEMENTS (caml_data_kind_names) == CAML_N_DATA_KINDS + 1);

/* The values of data.builtin: every kind but idx and text, which are chosen
 * by the "idx" and "text" keys instead. Indexed like CamlDataKind. */
static const char *const builtin_names[] = {
  "xor", "surface", "mnist", "fashion_mnist", "sst", "imdb", "rnn_sanity", NULL
};
G_STATIC_ASSERT (G_N_ELEMENTS (builtin_names) == CAML_DATA_IDX + 1);

/* The keys of data.idx, in the order of CamlDataConfig.idx_paths. */
static const char *const idx_keys[4] = {
  "train_images", "train_labels", "test_images", "test_labels"
};

/* The keys of data.text, in the order of CamlDataConfig.text_paths. */
static const char *const text_keys[2] = { "train", "test" };

static gboolean
is_image_kind (CamlDataKind kind)
{
  return kind == CAML_DATA_MNIST || kind == CAML_DATA_FASHION_MNIST
      || kind == CAML_DATA_IDX;
}

static gboolean
is_text_kind (CamlDataKind kind)
{
  return kind == CAML_DATA_SST || kind == CAML_DATA_IMDB || kind == CAML_DATA_RNN_SANITY
      || kind == CAML_DATA_TEXT;
}

gboolean
caml_data_kind_has_validation (CamlDataKind kind)
{
  return is_image_kind (kind) || is_text_kind (kind);
}

/* Ranges of the fields that are not layer options. */
#define MAX_STEPS     1000000000
#define MAX_GRID      1024
#define DEFAULT_LR    0.01

/* ------------------------------------------------------------- lifecycle */

static void
default_plot_domain (CamlDataKind kind, double *domain)
{
  /* XOR as in the paper's Fig. 15; the surface a little beyond its [−2, 2]²
   * grid, to show how the fit extrapolates. Image data has no 2-D input
   * domain: it takes the surface's, which nothing draws. */
  double lo = kind == CAML_DATA_XOR ? -0.5 : -3.0;
  double hi = kind == CAML_DATA_XOR ? 1.5 : 3.0;
  domain[0] = lo; domain[1] = hi; domain[2] = lo; domain[3] = hi;
}

static void
set_option (CamlLayerSpec *spec, const char *key, double value)
{
  int i = caml_layer_ops_option_index (spec->ops, key);
  if (i >= 0)
    spec->opt[i] = value;
}

CamlExperiment *
caml_experiment_new_default (void)
{
  CamlExperiment *exp = g_new0 (CamlExperiment, 1);

  exp->name = g_strdup ("untitled");
  exp->description = g_strdup ("");
  exp->paper = NULL;
  exp->data = (CamlDataConfig) {
    .kind = CAML_DATA_XOR, .grid = 81, .train_fraction = 0.01, .ngrams = 1,
  };

  /* The smallest model that fits the default data: one CA-NN of width 1. */
  const CamlLayerOps *ops = caml_layer_lookup ("ca_nn");
  if (ops != NULL)
    {
      exp->n_layers = 1;
      exp->layers = g_new0 (CamlLayerSpec, 1);
      exp->layers[0].ops = ops;
      caml_layer_ops_default_options (ops, exp->layers[0].opt);
      set_option (&exp->layers[0], "units", 1);
      set_option (&exp->layers[0], "activation", CAML_ACT_TANH);
    }

  exp->loss = CAML_LOSS_MSE;
  caml_optimizer_config_defaults (&exp->optimizer, CAML_OPTIM_ADAM);
  exp->optimizer.lr = DEFAULT_LR;
  exp->steps = 1000;
  exp->batch_size = 0;
  exp->eval_every = 50;
  exp->seed = 0;
  default_plot_domain (exp->data.kind, exp->plot_domain);
  return exp;
}

void
caml_experiment_free (CamlExperiment *exp)
{
  if (exp == NULL)
    return;
  g_free (exp->name);
  g_free (exp->description);
  g_free (exp->paper);
  for (int i = 0; i < 4; i++)
    g_free (exp->data.idx_paths[i]);
  for (int i = 0; i < 2; i++)
    g_free (exp->data.text_paths[i]);
  g_free (exp->data.embeddings);
  g_free (exp->layers);
  g_free (exp);
}

CamlExperiment *
caml_experiment_copy (const CamlExperiment *exp)
{
  CamlExperiment *copy = g_memdup2 (exp, sizeof *exp);
  copy->name = g_strdup (exp->name);
  copy->description = g_strdup (exp->description);
  copy->paper = g_strdup (exp->paper);
  for (int i = 0; i < 4; i++)
    copy->data.idx_paths[i] = g_strdup (exp->data.idx_paths[i]);
  for (int i = 0; i < 2; i++)
    copy->data.text_paths[i] = g_strdup (exp->data.text_paths[i]);
  copy->data.embeddings = g_strdup (exp->data.embeddings);
  copy->layers = g_memdup2 (exp->layers, sizeof *exp->layers * exp->n_layers);
  return copy;
}

static gboolean
optimizer_equal (const CamlOptimizerConfig *a, const CamlOptimizerConfig *b)
{
  return a->kind == b->kind && a->lr == b->lr && a->momentum == b->momentum
      && a->beta1 == b->beta1 && a->beta2 == b->beta2 && a->eps == b->eps
      && a->initial_accumulator == b->initial_accumulator
      && a->weight_decay == b->weight_decay
      && a->em_steps == b->em_steps;
}

gboolean
caml_data_config_equal (const CamlDataConfig *a, const CamlDataConfig *b)
{
  if (a->kind != b->kind || a->grid != b->grid
      || a->train_fraction != b->train_fraction
      || a->has_split_seed != b->has_split_seed
      || (a->has_split_seed && a->split_seed != b->split_seed)
      || a->train_limit != b->train_limit
      || a->test_limit != b->test_limit
      || a->max_tokens != b->max_tokens
      || a->split != b->split
      || a->unique_tokens != b->unique_tokens
      || a->ngrams != b->ngrams
      || a->validation_fraction != b->validation_fraction
      || g_strcmp0 (a->embeddings, b->embeddings) != 0)
    return FALSE;
  for (int i = 0; i < 2; i++)
    if (g_strcmp0 (a->text_paths[i], b->text_paths[i]) != 0)
      return FALSE;
  for (int i = 0; i < 4; i++)
    if (g_strcmp0 (a->idx_paths[i], b->idx_paths[i]) != 0)
      return FALSE;
  return TRUE;
}

gboolean
caml_experiment_equal (const CamlExperiment *a, const CamlExperiment *b)
{
  if (g_strcmp0 (a->name, b->name) != 0
      || g_strcmp0 (a->description, b->description) != 0
      || g_strcmp0 (a->paper, b->paper) != 0)
    return FALSE;
  if (!caml_data_config_equal (&a->data, &b->data))
    return FALSE;
  if (a->n_layers != b->n_layers)
    return FALSE;
  for (int i = 0; i < a->n_layers; i++)
    {
      const CamlLayerSpec *la = &a->layers[i], *lb = &b->layers[i];
      if (la->ops != lb->ops)
        return FALSE;
      for (int k = 0; k < la->ops->n_options; k++)
        if (la->opt[k] != lb->opt[k])
          return FALSE;
    }
  if (a->loss != b->loss || !optimizer_equal (&a->optimizer, &b->optimizer))
    return FALSE;
  if (a->steps != b->steps || a->batch_size != b->batch_size
      || a->eval_every != b->eval_every || a->seed != b->seed
      || a->average_decay != b->average_decay)
    return FALSE;
  for (int i = 0; i < 4; i++)
    if (a->plot_domain[i] != b->plot_domain[i])
      return FALSE;
  return TRUE;
}

/* --------------------------------------------------------------- parsing */

typedef struct {
  const char *source;    /* names the document in errors */
  const char *base_dir;  /* relative IDX paths are resolved against it; NULL: keep */
  GHashTable *wide;      /* path → literal of each integer outside gint64 */
  GError    **error;
} Parser;

static void append_double (GString *s, double v);

G_GNUC_PRINTF (4, 5) static gboolean
fail (Parser *p, CamlErrorCode code, const char *path, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  char *message = g_strdup_vprintf (format, args);
  va_end (args);
  char *full = path != NULL && *path != '\0'
               ? g_strdup_printf ("%s: %s: %s", p->source, path, message)
               : g_strdup_printf ("%s: %s", p->source, message);
  /* Messages are UTF-8 (a GUI shows them); json-glib's quote the document's
   * bytes, which need not be. */
  char *valid = g_utf8_make_valid (full, -1);
  g_set_error_literal (p->error, CAML_ERROR, code, valid);
  g_free (valid);
  g_free (full);
  g_free (message);
  return FALSE;
}

static const char *
describe_node (JsonNode *node)
{
  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_OBJECT: return "an object";
    case JSON_NODE_ARRAY:  return "an array";
    case JSON_NODE_NULL:   return "null";
    case JSON_NODE_VALUE:
      switch (json_node_get_value_type (node))
        {
        case G_TYPE_INT64:   return "an integer";
        case G_TYPE_DOUBLE:  return "a number";
        case G_TYPE_BOOLEAN: return "a boolean";
        case G_TYPE_STRING:  return "a string";
        default:             return "a value";
        }
    }
  return "something else";
}

static char *
child_path (const char *path, const char *key)
{
  return path == NULL || *path == '\0' ? g_strdup (key)
                                       : g_strdup_printf ("%s.%s", path, key);
}

static char *
join_names (const char *const *names, int n)
{
  GString *s = g_string_new (NULL);
  for (int i = 0; n < 0 ? names[i] != NULL : i < n; i++)
    g_string_append_printf (s, "%s%s", i > 0 ? ", " : "", names[i]);
  return g_string_free (s, FALSE);
}

/* Every member of obj must be one of `allowed` (n names). */
static gboolean
check_keys (Parser *p, JsonObject *obj, const char *path,
            const char *const *allowed, int n, const char *const *listed)
{
  GList *members = json_object_get_members (obj);
  gboolean ok = TRUE;
  for (GList *l = members; l != NULL && ok; l = l->next)
    {
      const char *key = l->data;
      gboolean known = FALSE;
      for (int i = 0; i < n && !known; i++)
        known = g_str_equal (key, allowed[i]);
      if (!known)
        {
          char *shown = g_utf8_make_valid (key, -1);   /* messages are UTF-8 */
          char *where = child_path (path, shown);
          char *expected = listed != NULL ? join_names (listed, -1)
                                          : join_names (allowed, n);
          ok = fail (p, CAML_ERROR_INVALID, where,
                     "unknown key (expected one of %s)", expected);
          g_free (expected);
          g_free (where);
          g_free (shown);
        }
    }
  g_list_free (members);
  return ok;
}

static gboolean
expect_object (Parser *p, JsonNode *node, const char *path, JsonObject **out)
{
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return fail (p, CAML_ERROR_INVALID, path, "expected an object, found %s",
                 describe_node (node));
  *out = json_node_get_object (node);
  return TRUE;
}

/* --- integers beyond 64 bits
 *
 * json-glib 1.6 reads an integer literal with g_ascii_strtoull into a gint64
 * and negates it for a '-': 18446744073709551615 arrives as -1,
 * 9223372036854775808 as G_MININT64 and -18446744073709551615 as 1 — a wrong
 * number in a message, or a wrong value taken without a word. Only the text
 * holds the real number. So before the tree is read, the document (already
 * strict JSON: json-check.c) is walked once and every integer literal outside
 * gint64 is kept under its path, spelled as errors spell it ("seed",
 * "model[0].units", keys decoded); the number readers look there first. A
 * key can still repeat spelled two ways ("steps", "st\u0065ps": json-check.c
 * compares keys as written); then its last value counts, as in json-glib. */

typedef struct {
  const char *data;
  gsize       length, pos;
  GHashTable *wide;
} Literals;

static char
literals_peek (const Literals *l)
{
  return l->pos < l->length ? l->data[l->pos] : '\0';
}

static void
literals_space (Literals *l)
{
  char c;
  while ((c = literals_peek (l)) == ' ' || c == '\t' || c == '\n' || c == '\r')
    l->pos++;
}

static gunichar
literals_hex4 (Literals *l)
{
  gunichar u = 0;
  for (int i = 0; i < 4; i++)
    {
      u = u * 16 + (gunichar) MAX (g_ascii_xdigit_value (literals_peek (l)), 0);
      l->pos++;
    }
  return u;
}

/* The string starting at l->pos (its quote), decoded; l->pos goes past it. */
static char *
literals_string (Literals *l)
{
  GString *s = g_string_new (NULL);
  char c;
  l->pos++;
  while ((c = literals_peek (l)) != '"' && c != '\0')
    {
      l->pos++;
      if (c != '\\')
        {
          g_string_append_c (s, c);
          continue;
        }
      c = literals_peek (l);
      l->pos++;
      switch (c)
        {
        case 'b': g_string_append_c (s, '\b'); break;
        case 'f': g_string_append_c (s, '\f'); break;
        case 'n': g_string_append_c (s, '\n'); break;
        case 'r': g_string_append_c (s, '\r'); break;
        case 't': g_string_append_c (s, '\t'); break;
        case 'u':
          {
            gunichar u = literals_hex4 (l);
            if (u >= 0xd800 && u < 0xdc00 && literals_peek (l) == '\\')
              {
                l->pos += 2;   /* the low half: json-check.c allows no other */
                u = 0x10000 + ((u - 0xd800) << 10) + (literals_hex4 (l) - 0xdc00);
              }
            g_string_append_unichar (s, u);
          }
          break;
        default:   /* " \ / */
          g_string_append_c (s, c);
        }
    }
  l->pos++;
  return g_string_free (s, FALSE);
}

/* A number: kept when it is an integer outside gint64. */
static void
literals_number (Literals *l, const char *path)
{
  gsize start = l->pos;
  gboolean negative = literals_peek (l) == '-';
  l->pos += negative;
  gsize digits = l->pos;
  while (g_ascii_isdigit (literals_peek (l)))
    l->pos++;
  gsize n = l->pos - digits;
  char c = literals_peek (l);
  if (c == '.' || c == 'e' || c == 'E')   /* json-glib reads those as doubles */
    {
      while ((c = literals_peek (l)) != '\0' && strchr ("0123456789.eE+-", c) != NULL)
        l->pos++;
      return;
    }
  /* JSON has no leading zeros: more digits is larger. */
  const char *limit = negative ? "9223372036854775808" : "9223372036854775807";
  if (n > 19 || (n == 19 && memcmp (l->data + digits, limit, 19) > 0))
    g_hash_table_insert (l->wide, g_strdup (path),
                         g_strndup (l->data + start, l->pos - start));
}

static void
literals_value (Literals *l, const char *path)
{
  g_hash_table_remove (l->wide, path);   /* a repeated key: the last value counts */
  char c = literals_peek (l);
  if (c == '{' || c == '[')
    {
      char close = c == '{' ? '}' : ']';
      l->pos++;
      literals_space (l);
      for (int i = 0; (c = literals_peek (l)) != close && c != '\0'; i++)
        {
          gsize at = l->pos;
          char *child;
          if (close == '}')
            {
              char *key = literals_string (l);
              child = child_path (path, key);
              g_free (key);
              literals_space (l);
              l->pos++;   /* ':' */
              literals_space (l);
            }
          else
            child = g_strdup_printf ("%s[%d]", path, i);
          literals_value (l, child);
          g_free (child);
          literals_space (l);
          if (literals_peek (l) == ',')
            l->pos++;
          literals_space (l);
          if (l->pos == at)   /* not JSON after all (json-check.c said it was) */
            break;
        }
      l->pos++;
    }
  else if (c == '"')
    g_free (literals_string (l));
  else if (c == '-' || g_ascii_isdigit (c))
    literals_number (l, path);
  else
    while (g_ascii_isalpha (literals_peek (l)))   /* true, false, null */
      l->pos++;
}

/* path → literal for every integer of the document outside gint64. */
static GHashTable *
wide_integers (const char *data, gsize length)
{
  Literals l = { .data = data, .length = length,
                 .wide = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free) };
  if (length >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0)
    l.pos = 3;
  literals_space (&l);
  literals_value (&l, "");
  return l.wide;
}

/* The literal of the integer at path if it is outside gint64 (json-glib's
 * value is then wrapped), else NULL. */
static const char *
wide_literal (Parser *p, JsonNode *node, const char *path)
{
  if (p->wide == NULL || json_node_get_value_type (node) != G_TYPE_INT64)
    return NULL;
  return g_hash_table_lookup (p->wide, path);
}

/* A literal for a message: a very long one cut short. Free with g_free. */
static char *
shown_literal (const char *literal)
{
  gsize n = strlen (literal);
  return n <= 40 ? g_strdup (literal)
                 : g_strdup_printf ("%.20s… (%" G_GSIZE_FORMAT " digits)", literal,
                                    n - (literal[0] == '-'));
}

static gboolean
is_number (JsonNode *node)
{
  if (!JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  GType t = json_node_get_value_type (node);
  return t == G_TYPE_INT64 || t == G_TYPE_DOUBLE;
}

static gboolean
get_number (Parser *p, JsonNode *node, const char *path, double *out)
{
  if (!is_number (node))
    return fail (p, CAML_ERROR_INVALID, path, "expected a number, found %s",
                 describe_node (node));
  const char *wide = wide_literal (p, node, path);
  if (wide != NULL)
    *out = g_ascii_strtod (wide, NULL);   /* the real value, not json-glib's */
  else
    *out = json_node_get_value_type (node) == G_TYPE_INT64
             ? (double) json_node_get_int (node) : json_node_get_double (node);
  if (!isfinite (*out))
    {
      g_autofree char *shown = wide != NULL ? shown_literal (wide)
                                            : g_strdup_printf ("%g", *out);
      return fail (p, CAML_ERROR_INVALID, path, "%s is not a finite number", shown);
    }
  return TRUE;
}

/* An integer in [min, max]. Integral numbers written with a fraction or an
 * exponent (1e3) are accepted; 2.5 is not. One beyond 64 bits is named as
 * written ("seed: 18446744073709551615 is out of range 0…N"). */
static gboolean
get_int (Parser *p, JsonNode *node, const char *path, gint64 min, gint64 max,
         gint64 *out)
{
  if (!is_number (node))
    return fail (p, CAML_ERROR_INVALID, path, "expected an integer, found %s",
                 describe_node (node));
  gint64 v;
  const char *wide = wide_literal (p, node, path);
  if (wide != NULL)
    {
      g_autofree char *shown = shown_literal (wide);
      return fail (p, CAML_ERROR_INVALID, path,
                   "%s is out of range %" G_GINT64_FORMAT "…%" G_GINT64_FORMAT,
                   shown, min, max);
    }
  if (json_node_get_value_type (node) == G_TYPE_INT64)
    v = json_node_get_int (node);
  else
    {
      double d = json_node_get_double (node);
      if (!isfinite (d) || d != floor (d))
        return fail (p, CAML_ERROR_INVALID, path, "%g is not an integer", d);
      if (d < (double) min || d > (double) max)
        return fail (p, CAML_ERROR_INVALID, path,
                     "%g is out of range %" G_GINT64_FORMAT "…%" G_GINT64_FORMAT,
                     d, min, max);
      v = (gint64) d;
    }
  if (v < min || v > max)
    return fail (p, CAML_ERROR_INVALID, path,
                 "%" G_GINT64_FORMAT " is out of range %" G_GINT64_FORMAT "…%"
                 G_GINT64_FORMAT, v, min, max);
  *out = v;
  return TRUE;
}

static gboolean
get_int32 (Parser *p, JsonNode *node, const char *path, int min, int max, int *out)
{
  gint64 v;
  if (!get_int (p, node, path, min, max, &v))
    return FALSE;
  *out = (int) v;
  return TRUE;
}

/* Strings must be valid UTF-8. JSON text is, but json-glib 1.6 turns some
 * escapes into bytes that are not ("\777" into 0xff, a lone "\udc00" into a
 * surrogate): such a string could not be written back as JSON, nor shown. */
static gboolean
get_string (Parser *p, JsonNode *node, const char *path, const char **out)
{
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return fail (p, CAML_ERROR_INVALID, path, "expected a string, found %s",
                 describe_node (node));
  const char *s = json_node_get_string (node);
  const char *bad = NULL;
  if (!g_utf8_validate (s, -1, &bad))
    return fail (p, CAML_ERROR_INVALID, path,
                 "not valid UTF-8 text (byte 0x%02x at offset %d of the string; an "
                 "escape such as \\777 or a lone \\udc00?)",
                 (guint8) *bad, (int) (bad - s));
  *out = s;
  return TRUE;
}

static gboolean
get_bool (Parser *p, JsonNode *node, const char *path, gboolean *out)
{
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    return fail (p, CAML_ERROR_INVALID, path, "expected true or false, found %s",
                 describe_node (node));
  *out = json_node_get_boolean (node);
  return TRUE;
}

/* A string that must be one of the NULL-terminated `names`. */
static gboolean
get_enum (Parser *p, JsonNode *node, const char *path, const char *const *names,
          int *out)
{
  const char *s = NULL;
  if (!get_string (p, node, path, &s))
    return FALSE;
  for (int i = 0; names[i] != NULL; i++)
    if (g_str_equal (names[i], s))
      {
        *out = i;
        return TRUE;
      }
  char *choices = join_names (names, -1);
  fail (p, CAML_ERROR_INVALID, path, "\"%s\" is not one of %s", s, choices);
  g_free (choices);
  return FALSE;
}

/* A real number checked against (lo, hi) with open or closed ends. */
static gboolean
get_ranged (Parser *p, JsonNode *node, const char *path, double lo, gboolean lo_open,
            double hi, gboolean hi_open, const char *range, double *out)
{
  double v = 0.0;
  if (!get_number (p, node, path, &v))
    return FALSE;
  if ((lo_open ? v <= lo : v < lo) || (hi_open ? v >= hi : v > hi))
    return fail (p, CAML_ERROR_INVALID, path, "%g is out of range (must be %s)",
                 v, range);
  *out = v;
  return TRUE;
}

/* --- data */

/* data.idx: four paths, all required. Relative paths are resolved against
 * the experiment file's directory (p->base_dir) when there is one. */
static gboolean
parse_idx (Parser *p, JsonNode *node, CamlDataConfig *data)
{
  JsonObject *obj = NULL;
  if (!expect_object (p, node, "data.idx", &obj)
      || !check_keys (p, obj, "data.idx", idx_keys, G_N_ELEMENTS (idx_keys), NULL))
    return FALSE;
  char *paths[4] = { NULL };
  gboolean ok = TRUE;
  for (int i = 0; i < 4 && ok; i++)
    {
      char *where = child_path ("data.idx", idx_keys[i]);
      JsonNode *m = json_object_get_member (obj, idx_keys[i]);
      const char *s = NULL;
      if (m == NULL)
        ok = fail (p, CAML_ERROR_INVALID, where, "missing (the path of an IDX file)");
      else if ((ok = get_string (p, m, where, &s)) && *s == '\0')
        ok = fail (p, CAML_ERROR_INVALID, where, "the path is empty");
      else if (ok)
        paths[i] = p->base_dir != NULL && !g_path_is_absolute (s)
                     ? g_canonicalize_filename (s, p->base_dir) : g_strdup (s);
      g_free (where);
    }
  for (int i = 0; i < 4; i++)
    {
      if (ok)
        {
          g_free (data->idx_paths[i]);
          data->idx_paths[i] = paths[i];
        }
      else
        g_free (paths[i]);
    }
  return ok;
}

/* data.text: the train and test files, both required; relative paths as
 * for data.idx. */
static gboolean
parse_text_paths (Parser *p, JsonNode *node, CamlDataConfig *data)
{
  JsonObject *obj = NULL;
  if (!expect_object (p, node, "data.text", &obj)
      || !check_keys (p, obj, "data.text", text_keys, G_N_ELEMENTS (text_keys), NULL))
    return FALSE;
  char *paths[2] = { NULL };
  gboolean ok = TRUE;
  for (int i = 0; i < 2 && ok; i++)
    {
      char *where = child_path ("data.text", text_keys[i]);
      JsonNode *m = json_object_get_member (obj, text_keys[i]);
      const char *s = NULL;
      if (m == NULL)
        ok = fail (p, CAML_ERROR_INVALID, where, "missing (the path of a text<TAB>label file)");
      else if ((ok = get_string (p, m, where, &s)) && *s == '\0')
        ok = fail (p, CAML_ERROR_INVALID, where, "the path is empty");
      else if (ok)
        paths[i] = p->base_dir != NULL && !g_path_is_absolute (s)
                     ? g_canonicalize_filename (s, p->base_dir) : g_strdup (s);
      g_free (where);
    }
  for (int i = 0; i < 2; i++)
    {
      if (ok)
        {
          g_free (data->text_paths[i]);
          data->text_paths[i] = paths[i];
        }
      else
        g_free (paths[i]);
    }
  return ok;
}

/* The keys every text kind takes. */
static gboolean
parse_text_options (Parser *p, JsonObject *obj, CamlDataConfig *data)
{
  JsonNode *m;
  if ((m = json_object_get_member (obj, "train_limit")) != NULL
      && !get_int32 (p, m, "data.train_limit", 0, G_MAXINT, &data->train_limit))
    return FALSE;
  if ((m = json_object_get_member (obj, "test_limit")) != NULL
      && !get_int32 (p, m, "data.test_limit", 0, G_MAXINT, &data->test_limit))
    return FALSE;
  if ((m = json_object_get_member (obj, "max_tokens")) != NULL
      && !get_int32 (p, m, "data.max_tokens", 0, 1000000, &data->max_tokens))
    return FALSE;
  if ((m = json_object_get_member (obj, "unique_tokens")) != NULL
      && !get_bool (p, m, "data.unique_tokens", &data->unique_tokens))
    return FALSE;
  if ((m = json_object_get_member (obj, "ngrams")) != NULL
      && !get_int32 (p, m, "data.ngrams", 1, 3, &data->ngrams))
    return FALSE;
  if ((m = json_object_get_member (obj, "embeddings")) != NULL)
    {
      const char *s = NULL;
      if (JSON_NODE_HOLDS_NULL (m))
        g_clear_pointer (&data->embeddings, g_free);
      else if (!get_string (p, m, "data.embeddings", &s))
        return FALSE;
      else if (*s == '\0')
        return fail (p, CAML_ERROR_INVALID, "data.embeddings",
                     "empty (a path, \"wink\", or null)");
      else
        {
          g_free (data->embeddings);
          data->embeddings = g_str_equal (s, "wink") || p->base_dir == NULL
                             || g_path_is_absolute (s)
                             ? g_strdup (s) : g_canonicalize_filename (s, p->base_dir);
        }
    }
  return TRUE;
}

static gboolean
parse_split_seed (Parser *p, JsonObject *obj, CamlDataConfig *data)
{
  JsonNode *m = json_object_get_member (obj, "split_seed");
  if (m != NULL)
    {
      gint64 seed = 0;
      if (!get_int (p, m, "data.split_seed", 0, G_MAXINT64, &seed))
        return FALSE;
      data->has_split_seed = TRUE;
      data->split_seed = (guint64) seed;
    }
  return TRUE;
}

static gboolean
parse_data (Parser *p, JsonNode *node, CamlDataConfig *data)
{
  static const char *const text_data_keys[] = {
    "builtin", "text", "train_limit", "test_limit", "max_tokens", "embeddings",
    "validation_fraction", "split_seed", "unique_tokens", "ngrams"
  };
  static const char *const imdb_keys[] = {
    "builtin", "train_limit", "test_limit", "max_tokens", "embeddings", "split", "split_seed",
    "validation_fraction", "unique_tokens", "ngrams"
  };
  static const char *const surface_keys[] = { "builtin", "grid", "train_fraction", "split_seed" };
  static const char *const xor_keys[] = { "builtin" };
  static const char *const image_keys[] = {
    "builtin", "train_limit", "test_limit", "validation_fraction", "split_seed"
  };
  static const char *const idx_data_keys[] = {
    "idx", "train_limit", "test_limit", "validation_fraction", "split_seed"
  };
  JsonObject *obj = NULL;
  JsonNode *m;

  if (!expect_object (p, node, "data", &obj))
    return FALSE;
  gboolean has_builtin = json_object_has_member (obj, "builtin");
  gboolean has_idx = json_object_has_member (obj, "idx");
  gboolean has_text = json_object_has_member (obj, "text");
  if (has_builtin + has_idx + has_text > 1)
    return fail (p, CAML_ERROR_INVALID, "data",
                 "give one of \"builtin\", \"idx\" and \"text\", not several");
  if (!has_builtin && !has_idx && !has_text)
    {
      char *kinds = join_names (builtin_names, -1);
      fail (p, CAML_ERROR_INVALID, "data.builtin",
            "missing (the built-in data set: one of %s; or \"idx\" with the paths "
            "of four IDX files; or \"text\" with the paths of two text<TAB>label files)",
            kinds);
      g_free (kinds);
      return FALSE;
    }
  if ((m = json_object_get_member (obj, "validation_fraction")) != NULL
      && !get_ranged (p, m, "data.validation_fraction", 0, FALSE, 1, TRUE, "in [0, 1)",
                      &data->validation_fraction))
    return FALSE;
  if (has_idx)
    {
      if (!check_keys (p, obj, "data", idx_data_keys, G_N_ELEMENTS (idx_data_keys), NULL)
          || !parse_idx (p, json_object_get_member (obj, "idx"), data))
        return FALSE;
      data->kind = CAML_DATA_IDX;
    }
  else if (has_text)
    {
      if (!parse_text_paths (p, json_object_get_member (obj, "text"), data))
        return FALSE;
      data->kind = CAML_DATA_TEXT;
    }
  else
    {
      int kind;
      if (!get_enum (p, json_object_get_member (obj, "builtin"), "data.builtin",
                     builtin_names, &kind))
        return FALSE;
      data->kind = kind;
    }

  switch (data->kind)
    {
    case CAML_DATA_XOR:
      return check_keys (p, obj, "data", xor_keys, G_N_ELEMENTS (xor_keys), NULL);
    case CAML_DATA_MNIST:
    case CAML_DATA_FASHION_MNIST:
      if (!check_keys (p, obj, "data", image_keys, G_N_ELEMENTS (image_keys), NULL))
        return FALSE;
      G_GNUC_FALLTHROUGH;
    case CAML_DATA_IDX:
      if ((m = json_object_get_member (obj, "train_limit")) != NULL
          && !get_int32 (p, m, "data.train_limit", 0, G_MAXINT, &data->train_limit))
        return FALSE;
      if ((m = json_object_get_member (obj, "test_limit")) != NULL
          && !get_int32 (p, m, "data.test_limit", 0, G_MAXINT, &data->test_limit))
        return FALSE;
      return parse_split_seed (p, obj, data);
    case CAML_DATA_SST:
    case CAML_DATA_RNN_SANITY:
    case CAML_DATA_TEXT:
      return check_keys (p, obj, "data", text_data_keys, G_N_ELEMENTS (text_data_keys), NULL)
          && parse_text_options (p, obj, data) && parse_split_seed (p, obj, data);
    case CAML_DATA_IMDB:
      if (!check_keys (p, obj, "data", imdb_keys, G_N_ELEMENTS (imdb_keys), NULL)
          || !parse_text_options (p, obj, data))
        return FALSE;
      if ((m = json_object_get_member (obj, "split")) != NULL)
        {
          int split;
          if (!get_enum (p, m, "data.split", caml_data_split_names, &split))
            return FALSE;
          data->split = split;
        }
      return parse_split_seed (p, obj, data);
    case CAML_DATA_SURFACE:
    case CAML_N_DATA_KINDS:
      break;
    }

  if (!check_keys (p, obj, "data", surface_keys, G_N_ELEMENTS (surface_keys), NULL))
    return FALSE;
  if ((m = json_object_get_member (obj, "grid")) != NULL
      && !get_int32 (p, m, "data.grid", 2, MAX_GRID, &data->grid))
    return FALSE;
  if ((m = json_object_get_member (obj, "train_fraction")) != NULL
      && !get_ranged (p, m, "data.train_fraction", 0, TRUE, 1, TRUE,
                      "in (0, 1)", &data->train_fraction))
    return FALSE;
  return parse_split_seed (p, obj, data);
}

/* --- model */

static gboolean
parse_layer_option (Parser *p, const CamlOptionSpec *spec, JsonNode *node,
                    const char *path, double *out)
{
  char *where = g_strdup_printf ("%s: %s", p->source, path);
  gboolean ok = FALSE;

  switch (spec->type)
    {
    case CAML_OPT_INT:
      if (!is_number (node))
        fail (p, CAML_ERROR_INVALID, path, "expected an integer, found %s",
              describe_node (node));
      else if (wide_literal (p, node, path) != NULL)   /* every range is narrower */
        {
          g_autofree char *shown = shown_literal (wide_literal (p, node, path));
          fail (p, CAML_ERROR_INVALID, path, "%s is out of range %g…%g", shown, spec->min,
                spec->max);
        }
      else if (get_number (p, node, path, out))
        ok = caml_option_check (spec, *out, where, p->error);
      break;
    case CAML_OPT_FLOAT:
      if (get_number (p, node, path, out))
        ok = caml_option_check (spec, *out, where, p->error);
      break;
    case CAML_OPT_BOOL:
      {
        gboolean b = FALSE;
        if ((ok = get_bool (p, node, path, &b)))
          *out = b ? 1.0 : 0.0;
      }
      break;
    case CAML_OPT_ENUM:
      {
        int i;
        if ((ok = get_enum (p, node, path, spec->choices, &i)))
          *out = i;
      }
      break;
    }
  g_free (where);
  return ok;
}

static gboolean
parse_layer (Parser *p, JsonNode *node, const char *path, CamlLayerSpec *spec)
{
  JsonObject *obj = NULL;
  if (!expect_object (p, node, path, &obj))
    return FALSE;

  char *type_path = child_path (path, "layer");
  JsonNode *type_node = json_object_get_member (obj, "layer");
  const char *type = NULL;
  gboolean ok;

  if (type_node == NULL)
    ok = fail (p, CAML_ERROR_INVALID, type_path, "missing (the layer type)");
  else
    ok = get_string (p, type_node, type_path, &type);
  if (ok && (spec->ops = caml_layer_lookup (type)) == NULL)
    {
      int n_types;
      const CamlLayerOps *const *types = caml_layer_registry (&n_types);
      GString *names = g_string_new (NULL);
      for (int i = 0; i < n_types; i++)
        g_string_append_printf (names, "%s%s", i > 0 ? ", " : "", types[i]->name);
      ok = fail (p, CAML_ERROR_INVALID, type_path,
                 "unknown layer \"%s\" (expected one of %s)", type, names->str);
      g_string_free (names, TRUE);
    }
  g_free (type_path);
  if (!ok)
    return FALSE;

  const CamlLayerOps *ops = spec->ops;
  g_assert (ops->n_options <= CAML_MAX_OPTIONS);
  caml_layer_ops_default_options (ops, spec->opt);

  /* Allowed keys: "layer" and the registry's option keys. Errors list the
   * options only — the type is already known. */
  const char *allowed[CAML_MAX_OPTIONS + 1];
  const char *listed[CAML_MAX_OPTIONS + 2];
  allowed[0] = "layer";
  for (int i = 0; i < ops->n_options; i++)
    allowed[i + 1] = listed[i] = ops->options[i].key;
  listed[ops->n_options] = ops->n_options == 0 ? "layer (no options)" : NULL;
  listed[ops->n_options + 1] = NULL;
  if (!check_keys (p, obj, path, allowed, ops->n_options + 1, listed))
    return FALSE;

  for (int i = 0; i < ops->n_options; i++)
    {
      JsonNode *m = json_object_get_member (obj, ops->options[i].key);
      if (m == NULL)
        continue;
      char *where = child_path (path, ops->options[i].key);
      ok = parse_layer_option (p, &ops->options[i], m, where, &spec->opt[i]);
      g_free (where);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

static gboolean
parse_model (Parser *p, JsonNode *node, CamlExperiment *exp)
{
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return fail (p, CAML_ERROR_INVALID, "model",
                 "expected an array of layers, found %s", describe_node (node));
  JsonArray *array = json_node_get_array (node);
  int n = json_array_get_length (array);
  /* An empty model reads (the workbench saves one being assembled); it
   * cannot be built (caml_experiment_build_model says so). */
  CamlLayerSpec *layers = g_new0 (CamlLayerSpec, MAX (n, 1));
  for (int i = 0; i < n; i++)
    {
      char *path = g_strdup_printf ("model[%d]", i);
      gboolean ok = parse_layer (p, json_array_get_element (array, i), path, &layers[i]);
      g_free (path);
      if (!ok)
        {
          g_free (layers);
          return FALSE;
        }
    }
  g_free (exp->layers);
  exp->layers = layers;
  exp->n_layers = n;
  return TRUE;
}

/* --- optimizer */

typedef enum {
  OPT_LR, OPT_EM_STEPS, OPT_MOMENTUM, OPT_BETA1, OPT_BETA2, OPT_EPS,
  OPT_INITIAL_ACCUMULATOR, OPT_WEIGHT_DECAY, N_OPT_FIELDS
} OptimizerField;

static const char *const optimizer_field_keys[N_OPT_FIELDS] = {
  "lr", "em_steps", "momentum", "beta1", "beta2", "eps", "initial_accumulator",
  "weight_decay",
};

/* Which fields each optimizer reads, in the order they are written
 * (weight_decay only when it is not 0: files without it read as before). */
static const OptimizerField optimizer_fields[CAML_N_OPTIMS][N_OPT_FIELDS + 1] = {
  [CAML_OPTIM_SGD]     = { OPT_LR, OPT_MOMENTUM, OPT_EM_STEPS, OPT_WEIGHT_DECAY,
                           N_OPT_FIELDS },
  [CAML_OPTIM_ADAGRAD] = { OPT_LR, OPT_EPS, OPT_INITIAL_ACCUMULATOR, OPT_EM_STEPS,
                           OPT_WEIGHT_DECAY, N_OPT_FIELDS },
  [CAML_OPTIM_ADAM]    = { OPT_LR, OPT_BETA1, OPT_BETA2, OPT_EPS, OPT_EM_STEPS,
                           OPT_WEIGHT_DECAY, N_OPT_FIELDS },
};

static gboolean
parse_optimizer_field (Parser *p, OptimizerField f, JsonNode *m, const char *path,
                       CamlOptimizerConfig *config)
{
  switch (f)
    {
    case OPT_LR:
      return get_ranged (p, m, path, 0, TRUE, INFINITY, FALSE, "> 0", &config->lr);
    case OPT_EM_STEPS:
      return get_int32 (p, m, path, 0, G_MAXINT, &config->em_steps);
    case OPT_MOMENTUM:
      return get_ranged (p, m, path, 0, FALSE, 1, TRUE, "in [0, 1)", &config->momentum);
    case OPT_BETA1:
      return get_ranged (p, m, path, 0, FALSE, 1, TRUE, "in [0, 1)", &config->beta1);
    case OPT_BETA2:
      return get_ranged (p, m, path, 0, FALSE, 1, TRUE, "in [0, 1)", &config->beta2);
    case OPT_EPS:
      return get_ranged (p, m, path, 0, TRUE, INFINITY, FALSE, "> 0", &config->eps);
    case OPT_INITIAL_ACCUMULATOR:
      return get_ranged (p, m, path, 0, FALSE, INFINITY, FALSE, ">= 0",
                         &config->initial_accumulator);
    case OPT_WEIGHT_DECAY:
      if (!get_ranged (p, m, path, 0, FALSE, INFINITY, FALSE, ">= 0", &config->weight_decay))
        return FALSE;
      config->weight_decay += 0.0;   /* -0 reads as 0 (and shows as "0") */
      return TRUE;
    case N_OPT_FIELDS:
      break;
    }
  g_assert_not_reached ();
}

static gboolean
parse_optimizer (Parser *p, JsonNode *node, CamlOptimizerConfig *config)
{
  JsonObject *obj = NULL;
  if (!expect_object (p, node, "optimizer", &obj))
    return FALSE;

  int kind = CAML_OPTIM_ADAM;
  JsonNode *m = json_object_get_member (obj, "type");
  if (m != NULL && !get_enum (p, m, "optimizer.type", caml_optimizer_names, &kind))
    return FALSE;
  caml_optimizer_config_defaults (config, kind);
  config->lr = DEFAULT_LR;

  const OptimizerField *fields = optimizer_fields[kind];
  const char *allowed[N_OPT_FIELDS + 2] = { "type" };
  int n = 1;
  for (; fields[n - 1] != N_OPT_FIELDS; n++)
    allowed[n] = optimizer_field_keys[fields[n - 1]];
  allowed[n] = NULL;
  if (!check_keys (p, obj, "optimizer", allowed, n, NULL))
    return FALSE;

  for (int i = 0; fields[i] != N_OPT_FIELDS; i++)
    {
      const char *key = optimizer_field_keys[fields[i]];
      if ((m = json_object_get_member (obj, key)) == NULL)
        continue;
      char *path = child_path ("optimizer", key);
      gboolean ok = parse_optimizer_field (p, fields[i], m, path, config);
      g_free (path);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

/* --- training, plot */

static gboolean
parse_training (Parser *p, JsonNode *node, CamlExperiment *exp)
{
  static const char *const keys[] = { "steps", "batch_size", "eval_every", "average_decay" };
  JsonObject *obj = NULL;
  JsonNode *m;
  if (!expect_object (p, node, "training", &obj)
      || !check_keys (p, obj, "training", keys, G_N_ELEMENTS (keys), NULL))
    return FALSE;
  if ((m = json_object_get_member (obj, "steps")) != NULL
      && !get_int32 (p, m, "training.steps", 1, MAX_STEPS, &exp->steps))
    return FALSE;
  if ((m = json_object_get_member (obj, "batch_size")) != NULL
      && !get_int32 (p, m, "training.batch_size", 0, G_MAXINT, &exp->batch_size))
    return FALSE;
  if ((m = json_object_get_member (obj, "eval_every")) != NULL
      && !get_int32 (p, m, "training.eval_every", 1, MAX_STEPS, &exp->eval_every))
    return FALSE;
  if ((m = json_object_get_member (obj, "average_decay")) != NULL
      && !get_ranged (p, m, "training.average_decay", 0, FALSE, 1, TRUE, "in [0, 1)",
                      &exp->average_decay))
    return FALSE;
  /* The average's decay ramps up as (1 + t) / (10 + t): one it reaches
   * only after more steps than a run can have would never apply. */
  if (exp->average_decay > 0 && caml_average_ramp_end (exp->average_decay) > MAX_STEPS)
    {
      GString *v = g_string_new (NULL);
      append_double (v, exp->average_decay);
      fail (p, CAML_ERROR_INVALID, "training.average_decay",
            "%s is too close to 1: the average reaches its decay only after "
            "(10 d − 1) / (1 − d) steps, more than the %d a run can have, so it would "
            "never apply (must be at most 0.999999991)", v->str, MAX_STEPS);
      g_string_free (v, TRUE);
      return FALSE;
    }
  return TRUE;
}

/* The narrowest side of plot.domain. */
#define PLOT_DOMAIN_MIN_SPAN 1e-150

static gboolean
parse_plot (Parser *p, JsonNode *node, double *domain)
{
  static const char *const keys[] = { "domain" };
  JsonObject *obj = NULL;
  if (!expect_object (p, node, "plot", &obj)
      || !check_keys (p, obj, "plot", keys, G_N_ELEMENTS (keys), NULL))
    return FALSE;
  JsonNode *m = json_object_get_member (obj, "domain");
  if (m == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (m))
    return fail (p, CAML_ERROR_INVALID, "plot.domain",
                 "expected an array [x0, x1, y0, y1], found %s", describe_node (m));
  guint length = json_array_get_length (json_node_get_array (m));
  if (length != 4)
    return fail (p, CAML_ERROR_INVALID, "plot.domain",
                 "expected 4 numbers [x0, x1, y0, y1], found %u", length);
  JsonArray *array = json_node_get_array (m);
  double d[4];
  for (int i = 0; i < 4; i++)
    {
      char *path = g_strdup_printf ("plot.domain[%d]", i);
      gboolean ok = get_number (p, json_array_get_element (array, i), path, &d[i]);
      g_free (path);
      if (!ok)
        return FALSE;
    }
  if (!(d[0] < d[1]) || !(d[2] < d[3]))
    return fail (p, CAML_ERROR_INVALID, "plot.domain",
                 "[%g, %g, %g, %g] is empty (need x0 < x1 and y0 < y1)",
                 d[0], d[1], d[2], d[3]);
  /* a plot needs its width and height as numbers too */
  if (!isfinite (d[1] - d[0]) || !isfinite (d[3] - d[2]))
    return fail (p, CAML_ERROR_INVALID, "plot.domain",
                 "[%g, %g, %g, %g] is too wide: x1 − x0 and y1 − y0 must be finite "
                 "(below %g)", d[0], d[1], d[2], d[3], G_MAXDOUBLE);
  /* … and one that a plot's scale (pixels per unit) and its grid of
   * distinct points can be drawn from: a width of 1e-310 trained, then
   * could not be drawn, which threw the run away */
  for (int axis = 0; axis < 2; axis++)
    {
      double lo = d[2 * axis], hi = d[2 * axis + 1];
      if (hi - lo < PLOT_DOMAIN_MIN_SPAN || hi - lo < 1e-9 * MAX (fabs (lo), fabs (hi)))
        return fail (p, CAML_ERROR_INVALID, "plot.domain",
                     "[%g, %g, %g, %g] is too narrow: %s must be at least %g and a "
                     "billionth of the larger of |%s|, |%s|", d[0], d[1], d[2], d[3],
                     axis == 0 ? "x1 − x0" : "y1 − y0", PLOT_DOMAIN_MIN_SPAN,
                     axis == 0 ? "x0" : "y0", axis == 0 ? "x1" : "y1");
    }
  memcpy (domain, d, sizeof d);
  return TRUE;
}

/* --- the document */

static gboolean
parse_string_member (Parser *p, JsonObject *root, const char *key, gboolean nullable,
                     char **out)
{
  JsonNode *m = json_object_get_member (root, key);
  const char *s = NULL;
  if (m == NULL)
    return TRUE;
  if (nullable && JSON_NODE_HOLDS_NULL (m))
    {
      g_clear_pointer (out, g_free);
      return TRUE;
    }
  if (!get_string (p, m, key, &s))
    return FALSE;
  g_free (*out);
  *out = g_strdup (s);
  return TRUE;
}

static gboolean
parse_root (Parser *p, JsonNode *node, CamlExperiment *exp)
{
  static const char *const keys[] = {
    "name", "description", "paper", "seed", "data", "model", "loss",
    "optimizer", "training", "plot",
  };
  JsonObject *root;
  JsonNode *m;

  if (node == NULL)
    return fail (p, CAML_ERROR_PARSE, NULL, "the document is empty");
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return fail (p, CAML_ERROR_PARSE, NULL,
                 "expected an experiment object at the top level, found %s",
                 describe_node (node));
  root = json_node_get_object (node);
  if (!check_keys (p, root, NULL, keys, G_N_ELEMENTS (keys), NULL))
    return FALSE;

  if (!parse_string_member (p, root, "name", FALSE, &exp->name)
      || !parse_string_member (p, root, "description", FALSE, &exp->description)
      || !parse_string_member (p, root, "paper", TRUE, &exp->paper))
    return FALSE;
  if ((m = json_object_get_member (root, "seed")) != NULL)
    {
      gint64 seed;
      if (!get_int (p, m, "seed", 0, G_MAXINT64, &seed))
        return FALSE;
      exp->seed = (guint64) seed;
    }
  if ((m = json_object_get_member (root, "data")) != NULL
      && !parse_data (p, m, &exp->data))
    return FALSE;
  default_plot_domain (exp->data.kind, exp->plot_domain);
  if ((m = json_object_get_member (root, "model")) != NULL
      && !parse_model (p, m, exp))
    return FALSE;
  if ((m = json_object_get_member (root, "loss")) != NULL)
    {
      int loss;
      if (!get_enum (p, m, "loss", caml_loss_names, &loss))
        return FALSE;
      exp->loss = loss;
    }
  if ((m = json_object_get_member (root, "optimizer")) != NULL
      && !parse_optimizer (p, m, &exp->optimizer))
    return FALSE;
  if ((m = json_object_get_member (root, "training")) != NULL
      && !parse_training (p, m, exp))
    return FALSE;
  if ((m = json_object_get_member (root, "plot")) != NULL
      && !parse_plot (p, m, exp->plot_domain))
    return FALSE;
  return TRUE;
}

/* Experiment files nest four levels; json-check.c explains the limit. */
#define MAX_NESTING 64

static CamlExperiment *
load_data (const char *data, gssize length, const char *source,
           const char *default_name, const char *base_dir, GError **error)
{
  g_return_val_if_fail (data != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  Parser p = { .source = source != NULL ? source : "<experiment>",
               .base_dir = base_dir, .error = error };
  /* json-glib only ever sees well-formed JSON (json-check.c). */
  char *problem = NULL;
  if (!caml_json_check (data, length >= 0 ? (gsize) length : strlen (data), MAX_NESTING,
                        &problem))
    {
      fail (&p, CAML_ERROR_PARSE, NULL, "%s", problem);
      g_free (problem);
      return NULL;
    }

  p.wide = wide_integers (data, length >= 0 ? (gsize) length : strlen (data));
  JsonParser *parser = json_parser_new_immutable ();
  GError *json_error = NULL;

  if (!json_parser_load_from_data (parser, data, length, &json_error))
    {
      /* json-glib's message carries the line and column after a "<data>:"
       * stand-in for the source, which we name ourselves. */
      const char *message = json_error->message;
      if (g_str_has_prefix (message, "<data>:"))
        fail (&p, CAML_ERROR_PARSE, NULL, "line %s", message + strlen ("<data>:"));
      else
        fail (&p, CAML_ERROR_PARSE, NULL, "%s", message);
      g_error_free (json_error);
      g_object_unref (parser);
      g_hash_table_unref (p.wide);
      return NULL;
    }

  CamlExperiment *exp = caml_experiment_new_default ();
  if (default_name != NULL)
    {
      g_free (exp->name);
      exp->name = g_strdup (default_name);
    }
  if (!parse_root (&p, json_parser_get_root (parser), exp))
    g_clear_pointer (&exp, caml_experiment_free);
  g_object_unref (parser);
  g_hash_table_unref (p.wide);
  return exp;
}

CamlExperiment *
caml_experiment_load_data (const char *data, gssize length, const char *source,
                           GError **error)
{
  return load_data (data, length, source, NULL, NULL, error);
}

/* A name of an open file rather than of a file: /dev/stdin (…out, …err),
 * /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N, /proc/PID/fd/N — a
 * regular file redirected there has no directory of its own here. */
static gboolean
is_stream_name (const char *path)
{
  if (g_str_equal (path, "/dev/stdin") || g_str_equal (path, "/dev/stdout")
      || g_str_equal (path, "/dev/stderr") || g_str_has_prefix (path, "/dev/fd/"))
    return TRUE;
  if (!g_str_has_prefix (path, "/proc/"))
    return FALSE;
  const char *p = path + strlen ("/proc/");
  if (g_str_has_prefix (p, "self/"))
    p += strlen ("self/");
  else if (g_str_has_prefix (p, "thread-self/"))
    p += strlen ("thread-self/");
  else
    {
      const char *digits = p;
      while (g_ascii_isdigit (*p))
        p++;
      if (p == digits || *p++ != '/')
        return FALSE;
    }
  return g_str_has_prefix (p, "fd/");
}

char *
caml_experiment_name_for_path (const char *path)
{
  char *base = g_filename_display_basename (path);
  if (g_str_has_suffix (base, ".json"))
    base[strlen (base) - strlen (".json")] = '\0';
  return base;
}

CamlExperiment *
caml_experiment_load_file (const char *path, GError **error)
{
  char *contents = NULL;
  gsize length = 0;

  if (!caml_file_get_contents (path, &contents, &length, error))
    return NULL;
  /* A document without a name takes the file's, as valid UTF-8 (a byte
   * that is not becomes U+FFFD): the name goes into JSON files and plot
   * titles, which take nothing else. */
  /* Relative data paths in it are relative to its directory — when it has
   * one: a pipe (`caml train <(cat exp.json)` reads /dev/fd/63), a FIFO, a
   * device or a file reached by the name of an open file (`caml train
   * /dev/stdin <exp.json`) is not where its data live, so they are relative to the
   * current directory, as in a document loaded from memory; nor is its
   * name ("63") the experiment's. */
  struct stat st;
  gboolean regular = g_stat (path, &st) == 0 && S_ISREG (st.st_mode)
                     && !is_stream_name (path);   /* /dev/stdin <exp.json */
  char *base = regular ? caml_experiment_name_for_path (path) : NULL;
  char *dir = regular ? g_path_get_dirname (path) : g_strdup (".");
  char *base_dir = g_canonicalize_filename (dir, NULL);
  CamlExperiment *exp = load_data (contents, length, path, base, base_dir, error);
  g_free (base_dir);
  g_free (dir);
  g_free (base);
  g_free (contents);
  return exp;
}

/* --------------------------------------------------------------- writing */

static void
append_string (GString *s, const char *str)
{
  g_string_append_c (s, '"');
  for (const unsigned char *c = (const unsigned char *) str; *c != '\0'; c++)
    {
      switch (*c)
        {
        case '"':  g_string_append (s, "\\\""); break;
        case '\\': g_string_append (s, "\\\\"); break;
        case '\n': g_string_append (s, "\\n"); break;
        case '\t': g_string_append (s, "\\t"); break;
        case '\r': g_string_append (s, "\\r"); break;
        default:
          if (*c < 0x20)
            g_string_append_printf (s, "\\u%04x", *c);
          else
            g_string_append_c (s, (char) *c);
        }
    }
  g_string_append_c (s, '"');
}

/* The shortest decimal that reads back as exactly v ("0.1", not
 * "0.10000000000000001"), without an exponent where %g would give one to a
 * whole number of at most 17 digits ("30", not "3e+01"; "1000000", not
 * "1e+06"); small numbers keep %g's form ("1e-07"). v is finite: everything
 * loaded was checked. */
static void
append_double (GString *s, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  for (int precision = 1; precision <= 17; precision++)
    {
      char format[8];
      g_snprintf (format, sizeof format, "%%.%dg", precision);
      g_ascii_formatd (buf, sizeof buf, format, v);
      if (g_ascii_strtod (buf, NULL) == v)
        break;
    }
  /* An exponent of +X from the shortest %.Pg means X ≥ P: every digit is
   * before the point, v is a whole number of X + 1 digits, which %.0f
   * writes exactly. */
  const char *e = strchr (buf, 'e');
  if (e != NULL && e[1] == '+' && g_ascii_strtoll (e + 2, NULL, 10) + 1 <= 17)
    g_ascii_formatd (buf, sizeof buf, "%.0f", v);
  g_string_append (s, buf);
}

static void
append_option (GString *s, const CamlOptionSpec *spec, double value)
{
  append_string (s, spec->key);
  g_string_append (s, ": ");
  switch (spec->type)
    {
    case CAML_OPT_INT:
      g_string_append_printf (s, "%.0f", value);
      break;
    case CAML_OPT_FLOAT:
      append_double (s, value);
      break;
    case CAML_OPT_BOOL:
      g_string_append (s, value != 0.0 ? "true" : "false");
      break;
    case CAML_OPT_ENUM:
      append_string (s, spec->choices[(int) value]);
      break;
    }
}

static double
optimizer_field_value (const CamlOptimizerConfig *c, OptimizerField f)
{
  switch (f)
    {
    case OPT_LR:                  return c->lr;
    case OPT_EM_STEPS:            return c->em_steps;
    case OPT_MOMENTUM:            return c->momentum;
    case OPT_BETA1:               return c->beta1;
    case OPT_BETA2:               return c->beta2;
    case OPT_EPS:                 return c->eps;
    case OPT_INITIAL_ACCUMULATOR: return c->initial_accumulator;
    case OPT_WEIGHT_DECAY:        return c->weight_decay;
    case N_OPT_FIELDS:            break;
    }
  g_assert_not_reached ();
}

char *
caml_experiment_to_json (const CamlExperiment *exp)
{
  GString *s = g_string_new ("{\n  \"name\": ");
  append_string (s, exp->name != NULL ? exp->name : "untitled");
  g_string_append (s, ",\n  \"description\": ");
  append_string (s, exp->description != NULL ? exp->description : "");
  g_string_append (s, ",\n  \"paper\": ");
  if (exp->paper != NULL)
    append_string (s, exp->paper);
  else
    g_string_append (s, "null");
  g_string_append_printf (s, ",\n  \"seed\": %" G_GUINT64_FORMAT ",\n", exp->seed);

  g_string_append (s, "  \"data\": {\n    ");
  if (exp->data.kind == CAML_DATA_IDX)
    {
      g_string_append (s, "\"idx\": {");
      for (int i = 0; i < 4; i++)
        {
          g_string_append_printf (s, "%s\n      \"%s\": ", i > 0 ? "," : "", idx_keys[i]);
          append_string (s, exp->data.idx_paths[i] != NULL ? exp->data.idx_paths[i] : "");
        }
      g_string_append (s, "\n    }");
    }
  else if (exp->data.kind == CAML_DATA_TEXT)
    {
      g_string_append (s, "\"text\": {");
      for (int i = 0; i < 2; i++)
        {
          g_string_append_printf (s, "%s\n      \"%s\": ", i > 0 ? "," : "", text_keys[i]);
          append_string (s, exp->data.text_paths[i] != NULL ? exp->data.text_paths[i] : "");
        }
      g_string_append (s, "\n    }");
    }
  else
    {
      g_string_append (s, "\"builtin\": ");
      append_string (s, builtin_names[exp->data.kind]);
    }
  if (is_image_kind (exp->data.kind) || is_text_kind (exp->data.kind))
    g_string_append_printf (s, ",\n    \"train_limit\": %d,\n    \"test_limit\": %d",
                            exp->data.train_limit, exp->data.test_limit);
  if (is_text_kind (exp->data.kind))
    {
      g_string_append_printf (s, ",\n    \"max_tokens\": %d,\n    \"embeddings\": ",
                              exp->data.max_tokens);
      if (exp->data.embeddings != NULL)
        append_string (s, exp->data.embeddings);
      else
        g_string_append (s, "null");
    }
  if (is_text_kind (exp->data.kind) && exp->data.unique_tokens)
    g_string_append (s, ",\n    \"unique_tokens\": true");
  if (is_text_kind (exp->data.kind) && exp->data.ngrams > 1)
    g_string_append_printf (s, ",\n    \"ngrams\": %d", exp->data.ngrams);
  if (exp->data.kind == CAML_DATA_IMDB)
    {
      g_string_append (s, ",\n    \"split\": ");
      append_string (s, caml_data_split_names[exp->data.split]);
    }
  if ((is_image_kind (exp->data.kind) || is_text_kind (exp->data.kind))
      && exp->data.validation_fraction > 0)
    {
      g_string_append (s, ",\n    \"validation_fraction\": ");
      append_double (s, exp->data.validation_fraction);
    }
  if ((is_image_kind (exp->data.kind) || is_text_kind (exp->data.kind))
      && exp->data.has_split_seed)
    g_string_append_printf (s, ",\n    \"split_seed\": %" G_GUINT64_FORMAT,
                            exp->data.split_seed);
  if (exp->data.kind == CAML_DATA_SURFACE)
    {
      g_string_append_printf (s, ",\n    \"grid\": %d,\n    \"train_fraction\": ",
                              exp->data.grid);
      append_double (s, exp->data.train_fraction);
      if (exp->data.has_split_seed)
        g_string_append_printf (s, ",\n    \"split_seed\": %" G_GUINT64_FORMAT,
                                exp->data.split_seed);
    }
  g_string_append (s, "\n  },\n  \"model\": [\n");

  for (int i = 0; i < exp->n_layers; i++)
    {
      const CamlLayerSpec *layer = &exp->layers[i];
      g_string_append (s, "    { \"layer\": ");
      append_string (s, layer->ops->name);
      for (int k = 0; k < layer->ops->n_options; k++)
        {
          g_string_append (s, ", ");
          append_option (s, &layer->ops->options[k], layer->opt[k]);
        }
      g_string_append (s, i + 1 < exp->n_layers ? " },\n" : " }\n");
    }

  g_string_append (s, "  ],\n  \"loss\": ");
  append_string (s, caml_loss_names[exp->loss]);
  g_string_append (s, ",\n  \"optimizer\": {\n    \"type\": ");
  append_string (s, caml_optimizer_names[exp->optimizer.kind]);
  const OptimizerField *fields = optimizer_fields[exp->optimizer.kind];
  for (int i = 0; fields[i] != N_OPT_FIELDS; i++)
    {
      if (fields[i] == OPT_WEIGHT_DECAY && exp->optimizer.weight_decay == 0)
        continue;
      g_string_append_printf (s, ",\n    \"%s\": ", optimizer_field_keys[fields[i]]);
      if (fields[i] == OPT_EM_STEPS)
        g_string_append_printf (s, "%d", exp->optimizer.em_steps);
      else
        append_double (s, optimizer_field_value (&exp->optimizer, fields[i]));
    }

  g_string_append_printf (s,
                          "\n  },\n  \"training\": {\n"
                          "    \"steps\": %d,\n    \"batch_size\": %d,\n"
                          "    \"eval_every\": %d",
                          exp->steps, exp->batch_size, exp->eval_every);
  if (exp->average_decay > 0)
    {
      g_string_append (s, ",\n    \"average_decay\": ");
      append_double (s, exp->average_decay);
    }
  g_string_append (s, "\n  },\n  \"plot\": {\n    \"domain\": [");
  for (int i = 0; i < 4; i++)
    {
      if (i > 0)
        g_string_append (s, ", ");
      append_double (s, exp->plot_domain[i]);
    }
  g_string_append (s, "]\n  }\n}\n");
  return g_string_free (s, FALSE);
}

gboolean
caml_experiment_save_file (const CamlExperiment *exp, const char *path, GError **error)
{
  char *json = caml_experiment_to_json (exp);
  gboolean ok = caml_file_replace (path, json, strlen (json), error);
  g_free (json);
  return ok;
}

/* ------------------------------------------------------------- building */

/* The canonical IDX file names, in the order of CamlDataConfig.idx_paths. */
static const char *const idx_file_names[4] = {
  "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
  "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte",
};

/* The four files of a fetched data set: NAME or NAME.gz in <data dir>/<set>.
 * A missing one is an error that says how to fetch it. */
static gboolean
builtin_idx_paths (CamlDataKind kind, char *paths[4], GError **error)
{
  const char *set = kind == CAML_DATA_MNIST ? "mnist" : "fashion-mnist";
  char *dir = g_build_filename (caml_data_dir (), set, NULL);
  gboolean ok = TRUE;
  for (int i = 0; i < 4; i++)
    paths[i] = NULL;
  for (int i = 0; i < 4 && ok; i++)
    {
      char *raw = g_build_filename (dir, idx_file_names[i], NULL);
      char *gz = g_strconcat (raw, ".gz", NULL);
      if (g_file_test (raw, G_FILE_TEST_EXISTS))
        paths[i] = g_steal_pointer (&raw);
      else if (g_file_test (gz, G_FILE_TEST_EXISTS))
        paths[i] = g_steal_pointer (&gz);
      else
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_IO,
                       "%s: no such file (nor %s.gz): %s is not fetched — run "
                       "`datasets/fetch %s` in the source tree, or set CAML_DATA_DIR "
                       "to the directory that holds %s/",
                       raw, idx_file_names[i], kind == CAML_DATA_MNIST ? "MNIST"
                       : "Fashion-MNIST", set, set);
          ok = FALSE;
        }
      g_free (raw);
      g_free (gz);
    }
  if (!ok)
    for (int i = 0; i < 4; i++)
      g_clear_pointer (&paths[i], g_free);
  g_free (dir);
  return ok;
}

/* A data file the experiment names: one that cannot be opened (not there,
 * a directory or a device, not readable) is a fault of the experiment,
 * named by its key — "data.text.train: /d/a.tsv: no such file" — before a
 * loader (which names only the path) reads it. CAML_ERROR_INVALID, like
 * every fault of the experiment, so that the CLI names the experiment too
 * (caml_cli_name_experiment). */
static gboolean
check_named_file (const char *group, const char *key, const char *path, GError **error)
{
  GError *local = NULL;
  if (caml_file_check_readable (path, &local))
    return TRUE;
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "%s%s%s: %s", group,
               key != NULL ? "." : "", key != NULL ? key : "", local->message);
  g_error_free (local);
  return FALSE;
}

static gboolean
load_image_datasets (const CamlDataConfig *data, CamlDataset **train,
                     CamlDataset **test, GError **error)
{
  char *paths[4] = { NULL };
  if (data->kind == CAML_DATA_IDX)
    {
      for (int i = 0; i < 4; i++)
        {
          if (data->idx_paths[i] == NULL)
            {
              g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                           "idx data: the path of %s is not set", idx_keys[i]);
              return FALSE;
            }
          if (!check_named_file ("data.idx", idx_keys[i], data->idx_paths[i], error))
            {
              for (int j = 0; j < i; j++)
                g_free (paths[j]);
              return FALSE;
            }
          paths[i] = g_strdup (data->idx_paths[i]);
        }
    }
  else if (!builtin_idx_paths (data->kind, paths, error))
    return FALSE;

  gboolean ok = FALSE;
  if ((*train = caml_idx_load (paths[0], paths[1], data->train_limit, error)) != NULL
      && (*test = caml_idx_load (paths[2], paths[3], data->test_limit, error)) != NULL)
    {
      if (!caml_shape_equal (&(*train)->x_shape, &(*test)->x_shape))
        {
          char *a = caml_shape_to_string (&(*train)->x_shape);
          char *b = caml_shape_to_string (&(*test)->x_shape);
          g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                       "training images %s are %s but test images %s are %s",
                       paths[0], a, paths[2], b);
          g_free (a);
          g_free (b);
        }
      else
        {
          /* One class count for both, whichever set shows the larger label. */
          int n_classes = MAX ((*train)->n_classes, (*test)->n_classes);
          (*train)->n_classes = (*test)->n_classes = n_classes;
          ok = TRUE;
        }
    }
  if (!ok)
    {
      g_clear_pointer (train, caml_dataset_free);
      g_clear_pointer (test, caml_dataset_free);
    }
  for (int i = 0; i < 4; i++)
    g_free (paths[i]);
  return ok;
}

/* IMDB from <data dir>/imdb/reviews.json; a missing file says how to fetch it. */
static gboolean
load_imdb_datasets (const CamlDataConfig *data, CamlDataset **train, CamlDataset **test,
                    GError **error)
{
  g_autofree char *path = g_build_filename (caml_data_dir (), "imdb", "reviews.json", NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_IO,
                   "%s: no such file: IMDB is not fetched — run `datasets/fetch imdb` in "
                   "the source tree, or set CAML_DATA_DIR to the directory that holds imdb/",
                   path);
      return FALSE;
    }
  if (!caml_imdb_load (path, data->split, data->has_split_seed ? data->split_seed : 0,
                       data->train_limit, data->test_limit, train, test, error))
    return FALSE;
  caml_text_datasets_finish (*train, *test, data->max_tokens);
  return TRUE;
}

static gboolean
load_text_datasets (const CamlDataConfig *data, CamlDataset **train, CamlDataset **test,
                    GError **error)
{
  char *paths[2] = { NULL };
  if (data->kind == CAML_DATA_SST)
    {
      paths[0] = g_build_filename (caml_shared_datasets_dir (), "sst", "sentiment-train", NULL);
      paths[1] = g_build_filename (caml_shared_datasets_dir (), "sst", "sentiment-dev", NULL);
      for (int i = 0; i < 2; i++)
        if (!g_file_test (paths[i], G_FILE_TEST_EXISTS))
          {
            g_set_error (error, CAML_ERROR, CAML_ERROR_IO,
                         "%s: no such file: SST is read from the shared data sets — set "
                         "CAML_SHARED_DATASETS to the directory that holds sst/", paths[i]);
            g_free (paths[0]);
            g_free (paths[1]);
            return FALSE;
          }
    }
  else
    for (int i = 0; i < 2; i++)
      {
        if (data->text_paths[i] == NULL)
          {
            g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                         "text data: the path of %s is not set", text_keys[i]);
            g_free (paths[0]);
            return FALSE;
          }
        if (!check_named_file ("data.text", text_keys[i], data->text_paths[i], error))
          {
            g_free (paths[0]);
            return FALSE;
          }
        paths[i] = g_strdup (data->text_paths[i]);
      }

  CamlVocab *vocab = caml_vocab_new ();
  gboolean ok = (*train = caml_text_load_tsv (paths[0], vocab, TRUE, data->train_limit,
                                              error)) != NULL
             && (*test = caml_text_load_tsv (paths[1], vocab, FALSE, data->test_limit,
                                             error)) != NULL;
  /* A class that only the test file has would make the task one the
   * training file cannot teach (and the model's width wrong); it is named
   * where it is, not found later as a model that does not fit. */
  for (int i = 0; ok && (*test)->n_classes > (*train)->n_classes && i < (*test)->n; i++)
    if ((*test)->y[i] >= (float) (*train)->n_classes)
      {
        g_autofree char *place = caml_dataset_sample_place (*test, i, "test set");
        g_set_error (error, CAML_ERROR, CAML_ERROR_PARSE,
                     "%s: the label %g is not a class of the training file %s (its classes "
                     "are 0…%d): a model cannot learn a class it is never shown", place,
                     (double) (*test)->y[i], paths[0], (*train)->n_classes - 1);
        ok = FALSE;
      }
  if (ok)
    caml_text_datasets_finish (*train, *test, data->max_tokens);
  else
    {
      g_clear_pointer (train, caml_dataset_free);
      g_clear_pointer (test, caml_dataset_free);
    }
  caml_vocab_unref (vocab);
  g_free (paths[0]);
  g_free (paths[1]);
  return ok;
}

static gboolean load_datasets (const CamlExperiment *exp, CamlDataset **train,
                               CamlDataset **test, GError **error);

/* data.validation_fraction: the held-out part of the training set takes the
 * test set's place. */
static gboolean
hold_out_validation (const CamlDataConfig *data, CamlDataset **train, CamlDataset **test,
                     GError **error)
{
  CamlDataset *rest, *validation;
  GError *local = NULL;
  gboolean ok = caml_dataset_hold_out (*train, data->validation_fraction,
                                       data->has_split_seed ? data->split_seed : 0,
                                       &rest, &validation, &local);
  g_clear_pointer (train, caml_dataset_free);
  g_clear_pointer (test, caml_dataset_free);
  if (!ok)
    {
      g_set_error (error, CAML_ERROR, local->code, "data.validation_fraction: %s",
                   local->message);
      g_error_free (local);
      return FALSE;
    }
  if (is_text_kind (data->kind))
    caml_text_datasets_finish (rest, validation, data->max_tokens);
  *train = rest;
  *test = validation;
  return TRUE;
}

gboolean
caml_experiment_load_datasets (const CamlExperiment *exp, CamlDataset **train,
                               CamlDataset **test, GError **error)
{
  *train = *test = NULL;
  if (exp->data.validation_fraction > 0
      && !(is_image_kind (exp->data.kind) || is_text_kind (exp->data.kind)))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "data.validation_fraction: %s data has no validation split (only image "
                   "and text data sets do)", caml_data_kind_names[exp->data.kind]);
      return FALSE;
    }
  if (!load_datasets (exp, train, test, error))
    return FALSE;
  if (exp->data.validation_fraction > 0
      && (is_image_kind (exp->data.kind) || is_text_kind (exp->data.kind))
      && !hold_out_validation (&exp->data, train, test, error))
    return FALSE;
  if (!is_text_kind (exp->data.kind))
    return TRUE;
  /* With n-grams, max_tokens limits the words read: the n-grams are formed
   * from the first max_tokens words and T holds them all (words + n-grams),
   * so that truncating a batch never drops the n-grams, which come after the
   * words. */
  int max_tokens = exp->data.max_tokens;
  if (exp->data.ngrams > 1)
    {
      caml_text_dataset_truncate (*train, max_tokens);
      caml_text_dataset_truncate (*test, max_tokens);
      caml_text_dataset_add_ngrams (*train, exp->data.ngrams, TRUE);
      caml_text_dataset_add_ngrams (*test, exp->data.ngrams, FALSE);
      max_tokens = 0;
    }
  if (exp->data.unique_tokens)
    {
      caml_text_dataset_unique (*train);
      caml_text_dataset_unique (*test);
    }
  if (exp->data.ngrams > 1 || exp->data.unique_tokens)
    caml_text_datasets_finish (*train, *test, max_tokens);
  return TRUE;
}

static gboolean
load_datasets (const CamlExperiment *exp, CamlDataset **train, CamlDataset **test,
               GError **error)
{
  switch (exp->data.kind)
    {
    case CAML_DATA_SST:
    case CAML_DATA_TEXT:
      return load_text_datasets (&exp->data, train, test, error);
    case CAML_DATA_IMDB:
      return load_imdb_datasets (&exp->data, train, test, error);
    case CAML_DATA_RNN_SANITY:
      caml_data_rnn_sanity (train, test);
      return TRUE;
    case CAML_DATA_MNIST:
    case CAML_DATA_FASHION_MNIST:
    case CAML_DATA_IDX:
      return load_image_datasets (&exp->data, train, test, error);
    case CAML_DATA_XOR:
      caml_data_xor (train, test);
      return TRUE;
    case CAML_DATA_SURFACE:
      if (exp->data.grid < 2 || exp->data.grid > MAX_GRID
          || !(exp->data.train_fraction > 0 && exp->data.train_fraction < 1))
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                       "surface data: grid %d or train fraction %g out of range",
                       exp->data.grid, exp->data.train_fraction);
          return FALSE;
        }
      caml_data_surface (exp->data.grid, exp->data.train_fraction,
                         exp->data.has_split_seed ? exp->data.split_seed : exp->seed,
                         train, test);
      return TRUE;
    case CAML_N_DATA_KINDS:
      break;
    }
  g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "unknown data kind %d",
               (int) exp->data.kind);
  return FALSE;
}

CamlModel *
caml_experiment_build_model (const CamlExperiment *exp, const CamlShape *input,
                             GError **error)
{
  /* A model too big to train here is refused before its weights are
   * allocated and initialised (a minute for 1.6 G of them): with their
   * gradients and the optimizer's state with what undoes a step (1 to 5
   * floats, the copy of the weights among them) they take 3 to 7 floats a
   * parameter (caml_trainer_start checks the whole run). */
  CamlModel *shapes = caml_model_new_shapes (input, exp->layers, exp->n_layers, error);
  if (shapes == NULL)
    return NULL;
  size_t n_weights = shapes->n_weights, need;
  caml_model_free (shapes);
  size_t per = 2 + (size_t) caml_optimizer_state_floats (&exp->optimizer);
  gboolean overflow = !g_size_checked_mul (&need, MAX (n_weights, 1), per * sizeof (float));
  if (overflow || need > caml_memory_limit ())
    {
      g_autofree char *size = overflow ? g_strdup ("more than can be addressed")
                                       : g_format_size ((guint64) need);
      g_autofree char *limit = caml_memory_limit_text ();
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "training this model needs at least %s for its %zu parameters (the "
                   "weights, their gradients, the optimizer's state and the copy kept to "
                   "roll back a divergence: %zu floats each), more than %s", size,
                   n_weights, per, limit);
      return NULL;
    }

  guint32 seed[2] = { (guint32) (exp->seed & 0xffffffffu), (guint32) (exp->seed >> 32) };
  GRand *rng = g_rand_new_with_seed_array (seed, G_N_ELEMENTS (seed));
  CamlModel *model = caml_model_new (input, exp->layers, exp->n_layers, rng, error);
  g_rand_free (rng);
  if (model != NULL && caml_model_output_shape (model)->kind != CAML_SHAPE_DENSE)
    {
      g_autofree char *out = caml_shape_to_string (caml_model_output_shape (model));
      g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                   "the model ends with %s: end it with layers that give one vector per "
                   "sample (mean_pool, an RNN or attention, then dense)", out);
      g_clear_pointer (&model, caml_model_free);
    }
  /* The n-grams follow the words as further tokens: a layer that reads the
   * tokens in order would take them for more steps of the text. */
  for (int i = 0; model != NULL && is_text_kind (exp->data.kind) && exp->data.ngrams > 1
                  && i < model->n_layers; i++)
    if (model->layers[i]->ops->reads_order)
      {
        g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                     "data.ngrams %d adds word %s as further tokens after the words: only "
                     "bag-of-words layers (ca_bsfe, average, embedding + mean_pool) can read "
                     "them; layer %d (%s) reads the tokens in order", exp->data.ngrams,
                     exp->data.ngrams == 2 ? "pairs" : "pairs and triples", i,
                     model->layers[i]->ops->name);
        g_clear_pointer (&model, caml_model_free);
      }
  return model;
}

/* Layers that take pre-trained word vectors: an option "pretrained" that is
 * on, and a table "E" (V, D). */
static CamlParam *
pretrained_table (CamlLayer *layer)
{
  int k = caml_layer_ops_option_index (layer->ops, "pretrained");
  if (k < 0 || layer->opt[k] == 0.0)
    return NULL;
  for (int j = 0; j < layer->n_params; j++)
    if (g_str_equal (layer->params[j].name, "E"))
      return &layer->params[j];
  return NULL;
}

gboolean
caml_model_set_word_vectors (CamlModel *model, const CamlVocab *vocab,
                             const CamlEmbeddings *emb, int *n_found, GError **error)
{
  int found = 0, v = caml_vocab_size (vocab);
  for (int i = 0; i < model->n_layers; i++)   /* check all before changing any */
    {
      CamlLayer *layer = model->layers[i];
      CamlParam *E = pretrained_table (layer);
      size_t d = E != NULL ? E->count / (size_t) MAX (layer->in.vocab, 1) : 0;
      if (E != NULL && (int) d != emb->dim)
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                       "layer %d (%s): pretrained vectors are %d wide but the layer's are "
                       "%zu (set its dim to %d)", i, layer->ops->name, emb->dim, d, emb->dim);
          return FALSE;
        }
      if (E != NULL && layer->in.vocab != v)
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_SHAPE,
                       "layer %d (%s): the model's vocabulary has %d words, the data's %d",
                       i, layer->ops->name, layer->in.vocab, v);
          return FALSE;
        }
    }
  for (int i = 0; i < model->n_layers; i++)
    {
      CamlLayer *layer = model->layers[i];
      CamlParam *E = pretrained_table (layer);
      if (E == NULL)
        continue;
      size_t d = (size_t) emb->dim;
      found = 0;
      for (int id = 0; id < v; id++)
        {
          const float *vec = caml_embeddings_lookup (emb, caml_vocab_word (vocab, id));
          if (vec == NULL)
            continue;
          memcpy (E->w + (size_t) id * d, vec, d * sizeof (float));
          found++;
        }
    }
  if (n_found != NULL)
    *n_found = found;
  return TRUE;
}

CamlModel *
caml_experiment_build_model_for (const CamlExperiment *exp, const CamlDataset *train,
                                 GError **error)
{
  CamlModel *model = caml_experiment_build_model (exp, &train->x_shape, error);
  if (model == NULL)
    return NULL;
  caml_model_set_vocab (model, train->vocab);

  gboolean wants = FALSE;
  for (int i = 0; i < model->n_layers; i++)
    wants |= pretrained_table (model->layers[i]) != NULL;
  if (!wants)
    return model;

  if (train->vocab == NULL || exp->data.embeddings == NULL)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "an embedding layer is pretrained but %s",
                   train->vocab == NULL ? "the data is not text"
                   : "data.embeddings is not set (a path to word vectors, or \"wink\")");
      caml_model_free (model);
      return NULL;
    }
  gboolean wink = g_str_equal (exp->data.embeddings, "wink");
  g_autofree char *path = wink ? caml_embeddings_wink_path () : g_strdup (exp->data.embeddings);
  if (wink && !g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_IO,
                   "%s: no such file: the wink word vectors are not fetched — run "
                   "`datasets/fetch embeddings` in the source tree, or set CAML_DATA_DIR "
                   "to the directory that holds embeddings/", path);
      caml_model_free (model);
      return NULL;
    }
  if (!wink && !check_named_file ("data.embeddings", NULL, path, error))
    {
      caml_model_free (model);
      return NULL;
    }
  CamlEmbeddings *emb = caml_embeddings_load (path, error);
  int found = 0;
  if (emb == NULL
      || !caml_model_set_word_vectors (model, train->vocab, emb, &found, error))
    g_clear_pointer (&model, caml_model_free);
  else if (found == 0)
    {
      int v = caml_vocab_size (train->vocab);
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "%s: none of the %d words of the training vocabulary has a vector "
                   "in this file — the tokenizer lower-cases every word (docs/text.md): "
                   "are the file's words cased, or of another language?", path, v);
      g_clear_pointer (&model, caml_model_free);
    }
  else
    model->n_word_vectors = found;
  caml_embeddings_free (emb);
  return model;
}
