/* test-autosave.c — crash recovery files without a display: a window's
 * autosave round-trips through caml_experiment_load_file, files of running
 * processes (this one) are never leftovers, files of processes that are gone
 * (a pid that cannot exist, a child that exited, a zombie, a pid another
 * program runs) are, a corrupt leftover is
 * listed and fails to load with the engine's message, removal is quiet. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <glib/gstdio.h>

#include "caml-autosave.h"

typedef struct {
  char *dir;
} Fixture;

static int
setup (void **state)
{
  Fixture *f = g_new0 (Fixture, 1);
  g_autofree char *tmp = g_dir_make_tmp ("caml-autosave-XXXXXX", NULL);
  assert_non_null (tmp);
  /* A folder that does not exist yet: the first write creates it. */
  f->dir = g_build_filename (tmp, "state", "autosave", NULL);
  g_setenv ("CAML_AUTOSAVE_DIR", f->dir, TRUE);
  *state = f;
  return 0;
}

static void
remove_tree (const char *path)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  if (dir != NULL)
    {
      const char *name;
      while ((name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          remove_tree (child);
        }
      g_dir_close (dir);
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

static int
teardown (void **state)
{
  Fixture *f = *state;
  g_autofree char *top = g_path_get_dirname (f->dir);
  g_autofree char *tmp = g_path_get_dirname (top);
  remove_tree (tmp);
  g_unsetenv ("CAML_AUTOSAVE_DIR");
  g_free (f->dir);
  g_free (f);
  return 0;
}

/* The pid of a child that has exited and been reaped. */
static GPid
dead_child_pid (void)
{
  const char *argv[] = { "true", NULL };
  GPid pid = 0;
  int status = 0;
  g_autoptr (GError) error = NULL;

  assert_true (g_spawn_async (NULL, (char **) argv, NULL,
                              G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                              &pid, &error));
  assert_int_equal (waitpid (pid, &status, 0), pid);
  g_spawn_close_pid (pid);
  return pid;
}

static char *
plant (const Fixture *f, GPid pid, const char *tag, const char *contents)
{
  g_autofree char *name = g_strdup_printf ("%ld-%s.json", (long) pid, tag);
  char *path = g_build_filename (f->dir, name, NULL);
  assert_int_equal (g_mkdir_with_parents (f->dir, 0700), 0);
  assert_true (g_file_set_contents (path, contents, -1, NULL));
  return path;
}

static void
test_write_and_remove (void **state)
{
  Fixture *f = *state;
  g_autofree char *id = caml_autosave_new_id ();
  g_autofree char *path = caml_autosave_path (id);
  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = caml_experiment_new_default ();

  assert_true (g_str_has_prefix (path, f->dir));
  assert_int_equal (caml_autosave_pid_of (strrchr (path, '/') + 1), getpid ());
  exp->steps = 1234;
  assert_true (caml_autosave_write (id, exp, &error));
  assert_null (error);
  CamlExperiment *back = caml_experiment_load_file (path, &error);
  assert_non_null (back);
  assert_true (caml_experiment_equal (exp, back));
  caml_experiment_free (back);

  /* Replaced, not appended. */
  exp->steps = 99;
  assert_true (caml_autosave_write (id, exp, &error));
  back = caml_experiment_load_file (path, &error);
  assert_int_equal (back->steps, 99);
  caml_experiment_free (back);

  /* This process runs: its own file is no leftover. */
  g_autoptr (GPtrArray) none = caml_autosave_list_leftovers ();
  assert_int_equal (none->len, 0);

  caml_autosave_remove (id);
  assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  caml_autosave_remove (id);      /* already gone: quiet */
  caml_experiment_free (exp);
}

static void
test_names (void **state)
{
  assert_int_equal (caml_autosave_pid_of ("123-abc.json"), 123);
  assert_int_equal (caml_autosave_pid_of ("123-abc.json.tmp"), 0);
  assert_int_equal (caml_autosave_pid_of (".123-abc.json.XXXXXX.tmp"), 0);
  assert_int_equal (caml_autosave_pid_of ("0-abc.json"), 0);
  assert_int_equal (caml_autosave_pid_of ("-5-abc.json"), 0);
  assert_int_equal (caml_autosave_pid_of ("12x-abc.json"), 0);
  assert_int_equal (caml_autosave_pid_of ("99999999999-abc.json"), 0);
  assert_int_equal (caml_autosave_pid_of ("notes.json"), 0);
  assert_true (caml_autosave_pid_alive (getpid ()));
  assert_false (caml_autosave_pid_alive (G_MAXINT));
  assert_false (caml_autosave_pid_alive (0));
}

/* A process that exists is not always a live workbench: a child that has
 * exited and is not reaped yet (a zombie: kill(pid, 0) still succeeds) has
 * ended, and so, for its files, has a pid now run by another program. A
 * child that runs this program (a fork) is alive. */
static void
test_pid_alive (void **state)
{
  if (!g_file_test ("/proc/self/stat", G_FILE_TEST_EXISTS))
    {
      print_message ("no /proc: only kill(pid, 0) can be asked\n");
      skip ();
    }
  int status = 0;

  /* Runs this program: alive until it exits; a zombie then, dead. */
  int to_child[2];
  assert_int_equal (pipe (to_child), 0);
  pid_t same = fork ();
  assert_true (same >= 0);
  if (same == 0)
    {
      char c;
      close (to_child[1]);
      while (read (to_child[0], &c, 1) < 0)   /* until the parent says so */
        ;
      _exit (0);
    }
  close (to_child[0]);
  assert_true (caml_autosave_pid_alive (same));
  assert_int_equal (write (to_child[1], "x", 1), 1);
  close (to_child[1]);
  /* Not reaped: wait until it is a zombie without reaping it. */
  siginfo_t info;
  memset (&info, 0, sizeof info);
  assert_int_equal (waitid (P_PID, (id_t) same, &info, WEXITED | WNOWAIT), 0);
  assert_int_equal (kill (same, 0), 0);               /* still there… */
  assert_false (caml_autosave_pid_alive (same));      /* …but it has ended */
  assert_int_equal (waitpid (same, &status, 0), same);

  /* Another program with a live pid: not a workbench. */
  const char *argv[] = { "sleep", "30", NULL };
  GPid other = 0;
  g_autoptr (GError) error = NULL;
  assert_true (g_spawn_async (NULL, (char **) argv, NULL,
                              G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                              &other, &error));
  /* (Until it has exec'd sleep it is still a copy of this program.) */
  for (int i = 0; i < 500 && caml_autosave_pid_alive (other); i++)
    g_usleep (10000);
  assert_int_equal (kill (other, 0), 0);
  assert_false (caml_autosave_pid_alive (other));
  kill (other, SIGKILL);
  assert_int_equal (waitpid (other, &status, 0), other);
  g_spawn_close_pid (other);
}

static void
test_leftovers (void **state)
{
  Fixture *f = *state;
  g_autoptr (GPtrArray) empty = caml_autosave_list_leftovers ();   /* no folder yet */
  assert_int_equal (empty->len, 0);

  CamlExperiment *exp = caml_experiment_new_default ();
  g_autofree char *json = caml_experiment_to_json (exp);
  GPid dead = dead_child_pid ();
  g_autofree char *impossible = plant (f, G_MAXINT, "impossible", json);
  g_autofree char *exited = plant (f, dead, "exited", json);
  g_autofree char *corrupt_path = plant (f, dead, "corrupt", "{ \"model\": [ ");
  g_autofree char *live = plant (f, getpid (), "live", json);
  g_autofree char *other = g_build_filename (f->dir, "README", NULL);
  assert_true (g_file_set_contents (other, "not an autosave", -1, NULL));

  g_autoptr (GPtrArray) left = caml_autosave_list_leftovers ();
  assert_int_equal (left->len, 3);
  gboolean saw_impossible = FALSE, saw_exited = FALSE, saw_corrupt = FALSE;
  for (guint i = 0; i < left->len; i++)
    {
      const char *p = left->pdata[i];
      assert_string_not_equal (p, live);
      saw_impossible |= g_str_equal (p, impossible);
      saw_exited |= g_str_equal (p, exited);
      saw_corrupt |= g_str_equal (p, corrupt_path);
      g_autoptr (GError) error = NULL;
      CamlExperiment *back = caml_experiment_load_file (p, &error);
      if (g_str_equal (p, corrupt_path))
        {
          assert_null (back);
          assert_non_null (error);
          /* the engine's message names the file */
          assert_non_null (strstr (error->message, "corrupt.json"));
          print_message ("corrupt leftover: %s\n", error->message);
        }
      else
        {
          assert_non_null (back);
          assert_true (caml_experiment_equal (exp, back));
          caml_experiment_free (back);
        }
    }
  assert_true (saw_impossible && saw_exited && saw_corrupt);

  for (guint i = 0; i < left->len; i++)
    g_unlink (left->pdata[i]);
  g_autoptr (GPtrArray) after = caml_autosave_list_leftovers ();
  assert_int_equal (after->len, 0);
  assert_true (g_file_test (live, G_FILE_TEST_EXISTS));   /* a live workbench's: kept */
  caml_experiment_free (exp);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_names),
    cmocka_unit_test (test_pid_alive),
    cmocka_unit_test_setup_teardown (test_write_and_remove, setup, teardown),
    cmocka_unit_test_setup_teardown (test_leftovers, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
