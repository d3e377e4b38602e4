/* cli-common.c — what the commands of `caml` share. */
#include <errno.h>
#include <signal.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <gio/gio.h>
#include <glib/gstdio.h>

#include "cli-common.h"
#include "presets.h"
#include "report.h"

CamlExperiment *
caml_cli_load_experiment (const char *command, const char *preset, char **args,
                          char **source, GError **error)
{
  int n_args = args ? (int) g_strv_length (args) : 0;
  if ((preset != NULL) == (n_args == 1) || n_args > 1)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                   "give either --preset NAME or one experiment FILE.json "
                   "(see `caml %s --help`)", command);
      return NULL;
    }
  /* A name that is not a preset is a usage error (exit status 2), like an
   * unknown option; a preset that does not load would be a bug. */
  if (preset != NULL && !caml_presets_exists (preset))
    {
      g_autoptr (GError) local = NULL;
      caml_presets_load (preset, &local);   /* the message lists the presets */
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, local->message);
      return NULL;
    }
  CamlExperiment *exp = preset ? caml_presets_load (preset, error)
                                : caml_experiment_load_file (args[0], error);
  if (exp != NULL && source != NULL)
    *source = preset ? g_strdup_printf ("preset %s", preset) : g_strdup (args[0]);
  return exp;
}

void
caml_cli_name_experiment (GError **error, const char *source)
{
  if (error == NULL || *error == NULL || (*error)->domain != CAML_ERROR
      || !((*error)->code == CAML_ERROR_INVALID || (*error)->code == CAML_ERROR_SHAPE))
    return;
  g_prefix_error (error, "%s: ", source);
}

typedef struct {
  const GOptionEntry *entries;
  char              **first;  /* per entry: the value it was first given, "" for a flag */
  gboolean            refused;   /* an option given twice, or a number not in decimal */
} OptionCount;

static gboolean
is_array (GOptionArg arg)
{
  return arg == G_OPTION_ARG_STRING_ARRAY || arg == G_OPTION_ARG_FILENAME_ARRAY;
}

static gboolean
is_number (GOptionArg arg)
{
  return arg == G_OPTION_ARG_INT || arg == G_OPTION_ARG_INT64 || arg == G_OPTION_ARG_DOUBLE;
}

/* Whether a and b are the same number as GOption reads an option of type
 * arg: whole numbers (decimal, is_decimal) as such, others as doubles. What
 * GOption would refuse is the real parse's to say. */
static gboolean
same_number (GOptionArg arg, const char *a, const char *b)
{
  char *end_a = NULL, *end_b = NULL;
  if (arg == G_OPTION_ARG_DOUBLE)
    {
      double x = g_ascii_strtod (a, &end_a), y = g_ascii_strtod (b, &end_b);
      return end_a != a && *end_a == '\0' && end_b != b && *end_b == '\0' && x == y;
    }
  errno = 0;
  gint64 x = g_ascii_strtoll (a, &end_a, 10);
  gint64 y = g_ascii_strtoll (b, &end_b, 10);
  return errno == 0 && end_a != a && *end_a == '\0' && end_b != b && *end_b == '\0' && x == y;
}

/* A whole number as every option and key of caml takes it: decimal digits
 * with an optional sign, no leading zero. GOption reads its whole numbers
 * in base 0 — 010 as 8, 0x20 as 32 — where -O and the experiment files
 * read 010 as 10: refused rather than read two ways. */
static gboolean
is_decimal (const char *value)
{
  const char *c = value;
  if (*c == '+' || *c == '-')
    c++;
  if (!g_ascii_isdigit (*c) || (c[0] == '0' && c[1] != '\0'))
    return FALSE;
  while (g_ascii_isdigit (*c))
    c++;
  return *c == '\0';
}

static gboolean
count_option (const char *option_name, const char *value, gpointer data, GError **error)
{
  OptionCount *count = data;
  if (option_name[0] != '-')   /* G_OPTION_REMAINING */
    return TRUE;
  for (int i = 0; count->entries[i].long_name != NULL; i++)
    {
      const GOptionEntry *e = &count->entries[i];
      gboolean named = option_name[1] == '-' ? strcmp (option_name + 2, e->long_name) == 0
                                             : option_name[1] == e->short_name;
      if (!named || *e->long_name == '\0')
        continue;
      if ((e->arg == G_OPTION_ARG_INT || e->arg == G_OPTION_ARG_INT64) && value != NULL
          && !is_decimal (value)
          && (g_ascii_isdigit (value[0]) || value[0] == '+' || value[0] == '-'))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--%s \"%s\": write a whole number in decimal digits, without "
                       "leading zeros", e->long_name, value);
          count->refused = TRUE;
          return FALSE;
        }
      if (is_array (e->arg))
        continue;
      /* a flag again, or the same value again (1 and +1, 0.5 and .5),
       * changes nothing */
      if (count->first[i] == NULL)
        count->first[i] = g_strdup (value != NULL ? value : "");
      if (g_strcmp0 (count->first[i], value != NULL ? value : "") == 0
          || (is_number (e->arg) && same_number (e->arg, count->first[i], value)))
        return TRUE;
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--%s is given twice, as \"%s\" and as \"%s\": give it once",
                   e->long_name, count->first[i], value);
      count->refused = TRUE;
      return FALSE;
    }
  return TRUE;
}

/* --threads N, which every command takes (but bench, whose --threads is a
 * list): the engine's thread count (caml_set_threads). */
static char *threads_text;

static const GOptionEntry threads_entry = {
  "threads", 0, 0, G_OPTION_ARG_STRING, &threads_text,
  "Threads to compute on (default: $CAML_THREADS, else every core)", "N"
};

/* The values are collected by a first pass over a copy of argv with the same
 * options turned into callbacks, so that GOption itself decides what is an
 * option and what is its value (`--out --steps` names a folder "--steps"). */
gboolean
caml_cli_parse_options (GOptionContext *ctx, const GOptionEntry *given,
                        int *argc, char ***argv, GError **error)
{
  int n = 0;
  gboolean own_threads = FALSE;
  for (; given[n].long_name != NULL; n++)
    own_threads = own_threads || strcmp (given[n].long_name, "threads") == 0;
  /* the command's entries, and --threads unless it has its own */
  g_autofree GOptionEntry *entries = g_new0 (GOptionEntry, n + 2);
  memcpy (entries, given, n * sizeof (GOptionEntry));
  if (!own_threads)
    {
      entries[n++] = threads_entry;
      GOptionEntry added[] = { threads_entry, { NULL } };
      g_option_context_add_main_entries (ctx, added, NULL);
    }
  /* --help shows the help whatever else is given */
  for (int i = 1; i < *argc; i++)
    if (strcmp ((*argv)[i], "--") == 0)
      break;
    else if (strcmp ((*argv)[i], "-h") == 0 || strcmp ((*argv)[i], "-?") == 0
             || g_str_has_prefix ((*argv)[i], "--help"))
      return g_option_context_parse (ctx, argc, argv, error);
  OptionCount count = { entries, g_new0 (char *, n) };
  GOptionEntry *counting = g_new0 (GOptionEntry, n + 1);
  for (int i = 0; i < n; i++)
    {
      counting[i] = entries[i];
      counting[i].arg = G_OPTION_ARG_CALLBACK;
      counting[i].arg_data = (gpointer) count_option;
      counting[i].flags &= G_OPTION_FLAG_HIDDEN | G_OPTION_FLAG_IN_MAIN
                           | G_OPTION_FLAG_OPTIONAL_ARG | G_OPTION_FLAG_NOALIAS
                           | (entries[i].arg == G_OPTION_ARG_CALLBACK ? G_OPTION_FLAG_NO_ARG
                                                                      : 0);
      if (entries[i].arg == G_OPTION_ARG_NONE)
        counting[i].flags |= G_OPTION_FLAG_NO_ARG;
      else if (entries[i].arg == G_OPTION_ARG_FILENAME
               || entries[i].arg == G_OPTION_ARG_FILENAME_ARRAY)
        counting[i].flags |= G_OPTION_FLAG_FILENAME;
    }
  GOptionContext *first = g_option_context_new (NULL);
  g_option_context_set_help_enabled (first, FALSE);
  GOptionGroup *group = g_option_group_new ("main", "", "", &count, NULL);
  g_option_group_add_entries (group, counting);
  g_option_context_set_main_group (first, group);
  int copy_argc = *argc;
  char **copy = g_memdup2 (*argv, sizeof (char *) * (size_t) (*argc + 1));
  g_autoptr (GError) repeat = NULL;
  g_option_context_parse (first, &copy_argc, &copy, &repeat);
  g_option_context_free (first);
  g_free (copy);
  g_free (counting);
  for (int i = 0; i < n; i++)
    g_free (count.first[i]);
  g_free (count.first);
  /* Any other problem (an unknown option, --help) is the real parse's. */
  if (count.refused)
    {
      g_propagate_error (error, g_steal_pointer (&repeat));
      return FALSE;
    }
  g_clear_pointer (&threads_text, g_free);
  if (!g_option_context_parse (ctx, argc, argv, error))
    return FALSE;
  if (threads_text != NULL)
    {
      int threads;
      g_autoptr (GError) local = NULL;
      gboolean ok = caml_threads_parse (threads_text, &threads, &local);
      g_clear_pointer (&threads_text, g_free);
      if (!ok)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--threads %s",
                       local->message);
          return FALSE;
        }
      caml_set_threads (threads);
    }
  return TRUE;
}

static int heard_signal;

void
caml_cli_heard_signal (int sig)
{
  if (heard_signal == 0)
    heard_signal = sig;
}

int
caml_cli_signal_heard (void)
{
  return heard_signal;
}

void
caml_cli_end_by_signal (int sig)
{
  signal (sig, SIG_DFL);
  raise (sig);
  _exit (128 + sig);   /* a signal that is blocked */
}

gboolean
caml_cli_is_usage_error (const GError *error)
{
  return error != NULL && error->domain == G_OPTION_ERROR;
}

/* Makes dir and the directories of its path that are missing, one by one,
 * and returns those this call made, outermost first (the others existed, or
 * caml_cli_ensure_dir says why they cannot be made). The path is taken as
 * written: "new/../runs/x" makes "new" only, which is all there is to take
 * away again. */
GPtrArray *
caml_cli_make_dirs (const char *dir)
{
  GPtrArray *made = g_ptr_array_new_with_free_func (g_free);
  size_t n = strlen (dir);
  for (size_t i = 1; i <= n; i++)
    if ((i == n || dir[i] == '/') && dir[i - 1] != '/')
      {
        char *prefix = g_strndup (dir, i);
        if (g_mkdir (prefix, 0755) == 0)
          g_ptr_array_add (made, prefix);
        else
          g_free (prefix);
      }
  return made;
}

void
caml_cli_remove_made_dirs (GPtrArray *made)
{
  for (guint i = made != NULL ? made->len : 0; i > 0; i--)
    if (g_rmdir (g_ptr_array_index (made, i - 1)) != 0)
      break;
}

/* Creates dir and makes sure a file can be created in it, so that a run
 * whose results could not be written fails before it trains, not after. */
gboolean
caml_cli_ensure_dir (const char *dir, GError **error)
{
  if (*dir == '\0')
    {
      g_set_error_literal (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                           "the output directory's name is empty");
      return FALSE;
    }
  GStatBuf st;
  if (g_file_test (dir, G_FILE_TEST_EXISTS) && !g_file_test (dir, G_FILE_TEST_IS_DIR)
      && g_stat (dir, &st) == 0)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOTDIR,
                   "%s: cannot be the output directory: it is %s", dir,
                   S_ISREG (st.st_mode) ? "a file" : S_ISCHR (st.st_mode) ? "a character device"
                   : S_ISBLK (st.st_mode) ? "a block device" : S_ISFIFO (st.st_mode)
                   ? "a FIFO" : S_ISSOCK (st.st_mode) ? "a socket" : "not a directory");
      return FALSE;
    }
  if (g_lstat (dir, &st) == 0 && S_ISLNK (st.st_mode) && !g_file_test (dir, G_FILE_TEST_EXISTS))
    {
      g_autofree char *target = g_file_read_link (dir, NULL);
      gboolean loop = g_stat (dir, &st) != 0 && errno == ELOOP;
      g_set_error (error, G_FILE_ERROR, loop ? G_FILE_ERROR_LOOP : G_FILE_ERROR_NOENT,
                   "%s: cannot be the output directory: it is a symbolic link to %s, %s", dir,
                   target != NULL ? target : "a missing file",
                   loop ? "which leads round in a loop" : "which does not exist");
      return FALSE;
    }
  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "%s: cannot create the output directory: %s", dir, g_strerror (saved));
      return FALSE;
    }
  g_autofree char *probe = g_build_filename (dir, ".caml-write-test-XXXXXX", NULL);
  int fd = g_mkstemp (probe);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "%s: cannot write the results there: %s", dir, g_strerror (saved));
      return FALSE;
    }
  close (fd);
  g_unlink (probe);
  return TRUE;
}

gboolean
caml_cli_check_output_file (const char *path, GError **error)
{
  if (!caml_file_check_replaceable (path, error))
    return FALSE;
  /* caml_file_replace writes a temporary beside path, then renames it */
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *probe = g_build_filename (dir, ".caml-write-test-XXXXXX", NULL);
  int fd = g_mkstemp (probe);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "%s: cannot save into %s: %s", path, dir, g_strerror (saved));
      return FALSE;
    }
  close (fd);
  g_unlink (probe);
  return TRUE;
}

/* A default output path from an experiment's name: one path component, so
 * a name like "../x" or "/tmp/x" cannot place results outside runs/. */
#define SAFE_NAME_BYTES 100

char *
caml_cli_safe_name (const char *name)
{
  if (name == NULL || *name == '\0')
    return g_strdup ("experiment");
  /* At most SAFE_NAME_BYTES, cut at a character's start: with "-seed0" and
   * the like after it, well within a file name's 255 bytes. */
  size_t length = strlen (name);
  if (length > SAFE_NAME_BYTES)
    {
      length = SAFE_NAME_BYTES;
      while (length > 0 && ((guchar) name[length] & 0xC0) == 0x80)
        length--;
    }
  char *safe = g_strndup (name, length);
  for (char *c = safe; *c != '\0'; c++)
    if (*c == '/' || *c == '\\' || g_ascii_iscntrl (*c))
      *c = '_';
  if (safe[0] == '.')
    safe[0] = '_';
  return safe;
}

gboolean
caml_cli_apply_layer_options (CamlExperiment *exp, char **assignments, int kernel,
                              int depth, GError **error)
{
  g_autoptr (GArray) list = g_array_new (FALSE, FALSE, sizeof (CamlAssignment));
  caml_assignments_add_options (list, assignments);
  char text[2][48], given[2][48];
  const char *names[] = { "kernel", "depth" };
  int values[] = { kernel, depth };
  for (int i = 0; i < 2; i++)
    if (values[i] != CAML_CLI_NOT_GIVEN)
      {
        g_snprintf (text[i], sizeof text[i], "%s=%d", names[i], values[i]);
        g_snprintf (given[i], sizeof given[i], "--%s %d", names[i], values[i]);
        CamlAssignment a = { text[i], given[i] };
        g_array_append_val (list, a);
      }
  return caml_experiment_assign (exp, (CamlAssignment *) list->data, (int) list->len, error);
}

gboolean
caml_cli_refuse_twice (const char *option, const char *path, const CamlAssignment *list,
                       int n, GError **error)
{
  for (int i = 0; i < n; i++)
    if (g_str_has_prefix (list[i].assignment, path)
        && list[i].assignment[strlen (path)] == '=')
      {
        g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                     "%s and %s both set %s: give it once", option, list[i].given_as, path);
        return FALSE;
      }
  return TRUE;
}

gboolean
caml_cli_json_write (JsonBuilder *b, const char *path, GError **error)
{
  return caml_report_json_write (b, path, error);
}

void
caml_cli_json_add_number (JsonBuilder *b, const char *key, double value)
{
  caml_report_json_add_number (b, key, value);
}
