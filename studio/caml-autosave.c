/* caml-autosave.c — see caml-autosave.h. Runs on the main thread only: the
 * window writes from a timeout, never from a worker thread. */
#include "caml-autosave.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <string.h>
#include <glib/gstdio.h>

#define SUFFIX ".json"

char *
caml_autosave_dir (void)
{
  const char *dir = g_getenv ("CAML_AUTOSAVE_DIR");
  if (dir != NULL && *dir != '\0')
    return g_strdup (dir);
  return g_build_filename (g_get_user_state_dir (), "caml-workbench", "autosave", NULL);
}

char *
caml_autosave_new_id (void)
{
  g_autofree char *uuid = g_uuid_string_random ();
  return g_strdup_printf ("%ld-%s", (long) getpid (), uuid);
}

char *
caml_autosave_path (const char *id)
{
  g_autofree char *dir = caml_autosave_dir ();
  g_autofree char *name = g_strconcat (id, SUFFIX, NULL);
  return g_build_filename (dir, name, NULL);
}

gboolean
caml_autosave_write (const char *id, const CamlExperiment *exp, GError **error)
{
  g_autofree char *dir = caml_autosave_dir ();
  g_autofree char *path = caml_autosave_path (id);

  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "%s: cannot create the autosave folder: %s", dir, g_strerror (saved));
      return FALSE;
    }
  g_autofree char *json = caml_experiment_to_json (exp);
  return caml_file_replace (path, json, strlen (json), error);
}

void
caml_autosave_remove (const char *id)
{
  g_autofree char *path = caml_autosave_path (id);
  g_unlink (path);
}

GPid
caml_autosave_pid_of (const char *basename)
{
  char *end = NULL;

  if (basename[0] < '1' || basename[0] > '9' || !g_str_has_suffix (basename, SUFFIX))
    return 0;
  errno = 0;
  gint64 pid = g_ascii_strtoll (basename, &end, 10);
  if (errno != 0 || *end != '-' || pid <= 0 || pid > G_MAXINT)
    return 0;
  return (GPid) pid;
}

/* The name and state of a process from /proc/PID/stat: "PID (NAME) S …",
 * where NAME (at most 15 bytes) may itself hold spaces and parentheses.
 * FALSE when there is no such file (no /proc, or no such process). */
static gboolean
read_proc_stat (const char *pid_dir, char **name, char *state)
{
  g_autofree char *path = g_build_filename ("/proc", pid_dir, "stat", NULL);
  g_autofree char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  const char *open = strchr (text, '(');
  const char *close = strrchr (text, ')');
  if (open == NULL || close == NULL || close < open || close[1] != ' ' || close[2] == '\0')
    return FALSE;
  *name = g_strndup (open + 1, (gsize) (close - open - 1));
  *state = close[2];
  return TRUE;
}

gboolean
caml_autosave_pid_alive (GPid pid)
{
  if (pid <= 0)
    return FALSE;
  /* Signal 0 only checks: EPERM means the process exists (another user's). */
  if (kill (pid, 0) != 0 && errno != EPERM)
    return FALSE;
  /* It exists — as a zombie too (exited, not yet reaped by its parent), or
   * as another program that was given a recycled pid. Where /proc tells
   * (Linux), a zombie or dead process has ended, and only a process that
   * runs this program (the same name) is a workbench whose files are its
   * own. Without /proc, existing is all that can be known. */
  g_autofree char *pid_dir = g_strdup_printf ("%ld", (long) pid);
  g_autofree char *name = NULL, *own = NULL;
  char state = 0, own_state = 0;
  if (!read_proc_stat (pid_dir, &name, &state))
    return !g_file_test ("/proc/self/stat", G_FILE_TEST_EXISTS);   /* gone meanwhile */
  if (state == 'Z' || state == 'X' || state == 'x')
    return FALSE;
  if (!read_proc_stat ("self", &own, &own_state))
    return TRUE;
  return g_str_equal (name, own);
}

static int
compare_paths (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

GPtrArray *
caml_autosave_list_leftovers (void)
{
  GPtrArray *paths = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *dir_path = caml_autosave_dir ();
  g_autoptr (GDir) dir = g_dir_open (dir_path, 0, NULL);
  const char *name;

  if (dir == NULL)
    return paths;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      GPid pid = caml_autosave_pid_of (name);
      if (pid != 0 && !caml_autosave_pid_alive (pid))
        g_ptr_array_add (paths, g_build_filename (dir_path, name, NULL));
    }
  g_ptr_array_sort (paths, compare_paths);
  return paths;
}
