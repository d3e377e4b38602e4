/* test-file.c — whole-file reads (caml_file_get_contents: regular files
 * and pipes only, so /dev/zero is an error instead of an endless read or a
 * hang) and crash-safe saves (caml_file_replace and everything written
 * through it): contents replaced whole, stale temporaries of interrupted
 * saves removed by the next save (but never a live writer's), errors that
 * name the file, and a child process killed with SIGKILL while it saves a
 * weights file and an experiment over and over — half the time stopped
 * inside a save first, half at random: every time, the files on disk load
 * and equal one of the two versions being written. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <glib/gstdio.h>

#include "caml-private.h"   /* tests the engine's internals */

#define KILL_RUNS 100

typedef struct {
  char *dir;   /* a fresh temporary directory per test */
} Fixture;

static int
setup (void **state)
{
  Fixture *f = g_new0 (Fixture, 1);
  f->dir = g_dir_make_tmp ("caml-file-XXXXXX", NULL);
  assert_non_null (f->dir);
  *state = f;
  return 0;
}

static int
teardown (void **state)
{
  Fixture *f = *state;
  GDir *dir = g_dir_open (f->dir, 0, NULL);
  const char *name;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      char *path = g_build_filename (f->dir, name, NULL);
      g_unlink (path);
      g_free (path);
    }
  if (dir != NULL)
    g_dir_close (dir);
  g_rmdir (f->dir);
  g_free (f->dir);
  g_free (f);
  return 0;
}

/* Names in dir that start with '.' (the temporaries), sorted. */
static GPtrArray *
hidden_files (const char *dir_path)
{
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  GDir *dir = g_dir_open (dir_path, 0, NULL);
  assert_non_null (dir);
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    if (name[0] == '.')
      g_ptr_array_add (names, g_strdup (name));
  g_dir_close (dir);
  return names;
}

static int
count_entries (const char *dir_path)
{
  int n = 0;
  GDir *dir = g_dir_open (dir_path, 0, NULL);
  assert_non_null (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;
  g_dir_close (dir);
  return n;
}

static void
assert_file_equals (const char *path, const char *expected)
{
  char *contents;
  gsize length;
  assert_true (g_file_get_contents (path, &contents, &length, NULL));
  assert_int_equal (length, strlen (expected));
  assert_memory_equal (contents, expected, length);
  g_free (contents);
}

/* ------------------------------------------------------------------ read */

/* path must fail with exactly `expected`, and leave *contents alone. */
static void
assert_read_fails (const char *path, const char *expected)
{
  char *contents = NULL;
  gsize length = 7;
  GError *error = NULL;
  assert_false (caml_file_get_contents (path, &contents, &length, &error));
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_IO));
  assert_string_equal (error->message, expected);
  assert_null (contents);
  assert_int_equal (length, 7);
  g_clear_error (&error);
}

static void
test_get_contents (void **state)
{
  Fixture *f = *state;
  char *path = g_build_filename (f->dir, "data.bin", NULL);
  GError *error = NULL;
  char *contents = NULL;
  gsize length = 0;

  /* A regular file comes back whole, NUL bytes included, NUL-terminated. */
  static const char bytes[] = "line 1\n\0line 2\r\n\xef\xbb\xbf";
  assert_true (g_file_set_contents (path, bytes, sizeof bytes - 1, NULL));
  assert_true (caml_file_get_contents (path, &contents, &length, &error));
  assert_null (error);
  assert_int_equal (length, sizeof bytes - 1);
  assert_memory_equal (contents, bytes, sizeof bytes);   /* and the NUL after */
  g_free (contents);

  /* An empty file is an empty string; the length may be left out. */
  assert_true (g_file_set_contents (path, "", 0, NULL));
  assert_true (caml_file_get_contents (path, &contents, NULL, &error));
  assert_string_equal (contents, "");
  g_free (contents);

  /* Not there. */
  char *missing = g_build_filename (f->dir, "nope", NULL);
  char *expected = g_strdup_printf ("%s: no such file", missing);
  assert_read_fails (missing, expected);
  g_free (expected);

  /* Not regular files: refused before a byte is read. /dev/zero would be
   * read until an allocation of gigabytes fails. */
  expected = g_strdup_printf ("%s: not a regular file (a directory)", f->dir);
  assert_read_fails (f->dir, expected);
  g_free (expected);
  assert_read_fails ("/dev/zero", "/dev/zero: not a regular file (a character device)");

  /* A pipe is read to its end (`caml train <(…)`): here one whose writer
   * wrote and closed, opened again through /proc as a shell's <(…) is. */
  int fds[2];
  assert_int_equal (pipe (fds), 0);
  assert_int_equal (write (fds[1], "piped\n", 6), 6);
  close (fds[1]);
  char *through = g_strdup_printf ("/proc/self/fd/%d", fds[0]);
  assert_true (caml_file_get_contents (through, &contents, &length, &error));
  assert_int_equal (length, 6);
  assert_string_equal (contents, "piped\n");
  g_free (contents);
  g_free (through);
  close (fds[0]);
  /* A FIFO nobody writes to ends at once, without blocking. */
  char *fifo = g_build_filename (f->dir, "fifo", NULL);
  assert_int_equal (mkfifo (fifo, 0600), 0);
  assert_true (caml_file_get_contents (fifo, &contents, &length, &error));
  assert_int_equal (length, 0);
  g_free (contents);
  /* With a pipe wait (the caml command's), a writer that opens it after the
   * read began is waited for: without, this read ended empty at once. A
   * bounded wait that no writer meets reads it empty. */
  caml_file_set_pipe_wait (-1);
  pid_t writer = fork ();
  assert_true (writer >= 0);
  if (writer == 0)
    {
      /* late; and never blocked on a reader that is gone (a failed test) */
      g_usleep (200000);
      int wfd = -1;
      for (int i = 0; i < 500 && wfd < 0; i++)
        if ((wfd = open (fifo, O_WRONLY | O_NONBLOCK)) < 0)
          g_usleep (10000);
      _exit (wfd >= 0 && write (wfd, "late\n", 5) == 5 ? 0 : 1);
    }
  assert_true (caml_file_get_contents (fifo, &contents, &length, &error));
  assert_null (error);
  assert_int_equal (length, 5);
  assert_string_equal (contents, "late\n");
  g_free (contents);
  int status = 0;
  assert_int_equal (waitpid (writer, &status, 0), writer);
  assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  caml_file_set_pipe_wait (50);
  assert_true (caml_file_get_contents (fifo, &contents, &length, &error));
  assert_int_equal (length, 0);
  g_free (contents);
  caml_file_set_pipe_wait (0);

  /* No permission (root reads anything: nothing to check then). */
  assert_true (g_file_set_contents (path, "secret", -1, NULL));
  assert_int_equal (g_chmod (path, 0), 0);
  if (access (path, R_OK) != 0)
    {
      expected = g_strdup_printf ("%s: cannot open: %s", path, g_strerror (EACCES));
      assert_read_fails (path, expected);
      g_free (expected);
    }
  g_free (fifo);
  g_free (missing);
  g_free (path);
}

/* caml_file_check_readable says what caml_file_get_contents would, in its
 * words, without reading: the experiment names a data file's key with it
 * before a loader reads the file. */
static void
assert_check_fails (const char *path, const char *expected)
{
  GError *error = NULL;
  assert_false (caml_file_check_readable (path, &error));
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_IO));
  assert_string_equal (error->message, expected);
  g_clear_error (&error);
}

static void
test_check_readable (void **state)
{
  Fixture *f = *state;
  char *path = g_build_filename (f->dir, "data.txt", NULL);
  GError *error = NULL;
  assert_true (g_file_set_contents (path, "text", -1, NULL));
  assert_true (caml_file_check_readable (path, &error));
  assert_null (error);

  char *missing = g_build_filename (f->dir, "nope", NULL);
  char *expected = g_strdup_printf ("%s: no such file", missing);
  assert_check_fails (missing, expected);
  g_free (expected);
  expected = g_strdup_printf ("%s: not a regular file (a directory)", f->dir);
  assert_check_fails (f->dir, expected);
  g_free (expected);
  assert_check_fails ("/dev/zero", "/dev/zero: not a regular file (a character device)");

  /* A FIFO is taken without being opened (no writer: no block either). */
  char *fifo = g_build_filename (f->dir, "fifo", NULL);
  assert_int_equal (mkfifo (fifo, 0600), 0);
  assert_true (caml_file_check_readable (fifo, &error));

  assert_int_equal (g_chmod (path, 0), 0);
  if (access (path, R_OK) != 0)   /* root reads anything */
    {
      expected = g_strdup_printf ("%s: cannot open: %s", path, g_strerror (EACCES));
      assert_check_fails (path, expected);
      g_free (expected);
    }
  g_free (fifo);
  g_free (missing);
  g_free (path);
}

/* --------------------------------------------------------------- replace */

static void
test_replace (void **state)
{
  Fixture *f = *state;
  char *path = g_build_filename (f->dir, "notes.txt", NULL);
  GError *error = NULL;

  assert_true (caml_file_replace (path, "first", 5, &error));
  assert_file_equals (path, "first");
  assert_true (caml_file_replace (path, "the second", 10, &error));
  assert_file_equals (path, "the second");
  assert_true (caml_file_replace (path, "", 0, &error));
  assert_file_equals (path, "");
  assert_null (error);
  /* Nothing else is left in the directory. */
  assert_int_equal (count_entries (f->dir), 1);

  /* A directory that does not exist: an IO error naming the file. */
  char *bad = g_build_filename (f->dir, "no", "such", "notes.txt", NULL);
  assert_false (caml_file_replace (bad, "x", 1, &error));
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_IO));
  assert_non_null (strstr (error->message, bad));
  g_clear_error (&error);

  /* A target that is a directory: refused, no temporary is left. */
  char *sub = g_build_filename (f->dir, "sub", NULL);
  assert_int_equal (g_mkdir (sub, 0755), 0);
  assert_false (caml_file_replace (sub, "x", 1, &error));
  assert_true (g_error_matches (error, CAML_ERROR, CAML_ERROR_IO));
  assert_non_null (strstr (error->message, sub));
  g_clear_error (&error);
  GPtrArray *hidden = hidden_files (f->dir);
  assert_int_equal (hidden->len, 0);
  g_ptr_array_unref (hidden);
  g_rmdir (sub);

  /* A directory that takes no new files (/proc, even for root): the error
   * names the file asked for, not the temporary beside it. */
  if (g_file_test ("/proc/self", G_FILE_TEST_IS_DIR))
    {
      assert_false (caml_file_replace ("/proc/caml-test.csv", "x", 1, &error));
      assert_true (g_str_has_prefix (error->message, "/proc/caml-test.csv: cannot create a "
                                                     "temporary file beside it: "));
      g_clear_error (&error);
    }

  /* A link, a named pipe, a device: refused by kind, left as they were
   * (rename would put the file in their place, not in the link's target). */
  char *link = g_build_filename (f->dir, "link.txt", NULL);
  assert_int_equal (symlink (path, link), 0);
  assert_false (caml_file_replace (link, "x", 1, &error));
  g_autofree char *real = realpath (path, NULL);
  g_autofree char *expected_real = g_strdup_printf ("%s: is not a file (a symbolic link), "
                                                    "which a save would replace: save to the "
                                                    "file it points to, %s; nothing was "
                                                    "written", link, real);
  assert_string_equal (error->message, expected_real);
  g_clear_error (&error);
  assert_true (g_file_test (link, G_FILE_TEST_IS_SYMLINK));
  assert_file_equals (path, "");
  char *fifo = g_build_filename (f->dir, "fifo", NULL);
  assert_int_equal (mkfifo (fifo, 0600), 0);
  assert_false (caml_file_replace (fifo, "x", 1, &error));
  assert_non_null (strstr (error->message, "is not a file (a named pipe)"));
  g_clear_error (&error);
  assert_false (caml_file_replace ("/dev/null", "x", 1, &error));
  assert_string_equal (error->message, "/dev/null: is not a file (a device), which a save "
                                        "would replace; nothing was written");
  g_clear_error (&error);
  assert_true (caml_file_check_replaceable (path, &error));
  assert_true (caml_file_check_replaceable (bad, &error));   /* absent */
  hidden = hidden_files (f->dir);
  assert_int_equal (hidden->len, 0);
  g_ptr_array_unref (hidden);
  g_unlink (fifo);
  g_unlink (link);
  g_free (fifo);
  g_free (link);

  g_free (sub);
  g_free (bad);
  g_free (path);
}

/* Temporaries of interrupted saves go with the next save of the same target;
 * a temporary whose writer still holds its lock, the temporaries of other
 * targets and look-alike names stay. */
static void
test_stale_temporaries (void **state)
{
  Fixture *f = *state;
  char *path = g_build_filename (f->dir, "model.weights", NULL);
  const char *stale[] = { ".model.weights.a1B2c3.tmp", ".model.weights.ZZZZZZ.tmp" };
  const char *kept[] = {
    ".model.weights.live00.tmp",   /* locked below: a writer at work */
    ".other.weights.a1B2c3.tmp",   /* another target's */
    ".model.weights.a1B2c.tmp",    /* five random characters: not ours */
    ".model.weights.a1B2c3.tmpx",
    "model.weights.a1B2c3",        /* GLib's naming, not ours */
  };
  GError *error = NULL;

  for (gsize i = 0; i < G_N_ELEMENTS (stale); i++)
    {
      char *p = g_build_filename (f->dir, stale[i], NULL);
      assert_true (g_file_set_contents (p, "partial", -1, NULL));
      g_free (p);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (kept); i++)
    {
      char *p = g_build_filename (f->dir, kept[i], NULL);
      assert_true (g_file_set_contents (p, "keep", -1, NULL));
      g_free (p);
    }
  char *live = g_build_filename (f->dir, kept[0], NULL);
  int live_fd = open (live, O_RDONLY | O_CLOEXEC);
  assert_true (live_fd >= 0);
  assert_int_equal (flock (live_fd, LOCK_EX), 0);

  assert_true (caml_file_replace (path, "whole", 5, &error));
  assert_null (error);
  assert_file_equals (path, "whole");
  for (gsize i = 0; i < G_N_ELEMENTS (stale); i++)
    {
      char *p = g_build_filename (f->dir, stale[i], NULL);
      assert_false (g_file_test (p, G_FILE_TEST_EXISTS));
      g_free (p);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (kept); i++)
    {
      char *p = g_build_filename (f->dir, kept[i], NULL);
      assert_true (g_file_test (p, G_FILE_TEST_EXISTS));
      g_free (p);
    }

  /* Once its writer is gone, the next save removes it too. */
  close (live_fd);
  assert_true (caml_file_replace (path, "again", 5, &error));
  assert_false (g_file_test (live, G_FILE_TEST_EXISTS));
  assert_int_equal (count_entries (f->dir), 1 + (int) G_N_ELEMENTS (kept) - 1);

  g_free (live);
  g_free (path);
}

/* ----------------------------------------------------- kill during save */

/* Two versions of each file the child alternates between. */
typedef struct {
  char           *weights_path;
  char           *exp_path;
  CamlModel      *model[2];
  CamlExperiment *exp[2];
} Versions;

static const char *big_model =
  "{ \"name\": \"kill-test\","
  "  \"model\": [ { \"layer\": \"dense\", \"units\": 512, \"activation\": \"tanh\" },"
  "               { \"layer\": \"ca_nn\", \"units\": 512 },"
  "               { \"layer\": \"dense\", \"units\": 1 } ] }";

static void
versions_init (Versions *v, const char *dir)
{
  GError *error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (big_model, -1, "kill-test", &error);
  if (exp == NULL)
    fail_msg ("%s", error->message);
  CamlShape input = caml_shape_flat (2);
  for (int k = 0; k < 2; k++)
    {
      v->exp[k] = caml_experiment_copy (exp);
      v->exp[k]->seed = (guint64) k + 1;
      v->exp[k]->steps = 1000 + k;
      v->model[k] = caml_experiment_build_model (v->exp[k], &input, &error);
      if (v->model[k] == NULL)
        fail_msg ("%s", error->message);
    }
  caml_experiment_free (exp);
  assert_memory_not_equal (v->model[0]->w, v->model[1]->w,
                           v->model[0]->n_weights * sizeof (float));
  assert_false (caml_experiment_equal (v->exp[0], v->exp[1]));
  v->weights_path = g_build_filename (dir, "model.weights", NULL);
  v->exp_path = g_build_filename (dir, "experiment.json", NULL);
}

static void
versions_clear (Versions *v)
{
  for (int k = 0; k < 2; k++)
    {
      caml_model_free (v->model[k]);
      caml_experiment_free (v->exp[k]);
    }
  g_free (v->weights_path);
  g_free (v->exp_path);
}

static void
save_version (const Versions *v, int k)
{
  GError *error = NULL;
  if (!caml_weights_save (v->model[k], v->weights_path, &error)
      || !caml_experiment_save_file (v->exp[k], v->exp_path, &error))
    fail_msg ("%s", error->message);
}

/* Where the child is in caml_file_replace, marked by the wrappers below in
 * memory the parent shares: the parent reads it after each kill. */
enum { AT_IDLE, AT_WRITING, AT_RENAMING };

typedef struct {
  volatile int at;        /* AT_*: IN a temporary's life, or out of it */
  volatile int temps;     /* temporaries the child has made so far */
} Mark;

static Mark *mark;        /* shared (MAP_SHARED), or NULL: no marking */
static int stop_at_temp;  /* the child waits to be killed inside this temporary (1…), or 0 */
static int stop_before_rename;   /* … there: before its rename, else before its fsync */
static int stop_fd = -1;  /* where the child says it waits */

/* The linker sends the engine's calls here (-Wl,--wrap, tests/meson.build);
 * only a marking child does more than pass them on. */
int __real_g_mkstemp_full (char *tmpl, int flags, int mode);
int __wrap_g_mkstemp_full (char *tmpl, int flags, int mode);
int __real_fsync (int fd);
int __wrap_fsync (int fd);
int __real_rename (const char *from, const char *to);
int __wrap_rename (const char *from, const char *to);

/* Never returns: the parent kills the child here, mid-write. */
G_GNUC_NORETURN static void
wait_for_kill (void)
{
  char byte = 1;
  if (write (stop_fd, &byte, 1) != 1)
    _exit (3);
  for (;;)
    pause ();
}

int
__wrap_g_mkstemp_full (char *tmpl, int flags, int mode)
{
  int fd = __real_g_mkstemp_full (tmpl, flags, mode);
  if (mark != NULL && fd >= 0)
    {
      mark->temps++;
      mark->at = AT_WRITING;
    }
  return fd;
}

int
__wrap_fsync (int fd)
{
  struct stat st;
  if (mark != NULL && mark->at == AT_WRITING && mark->temps == stop_at_temp
      && !stop_before_rename && fstat (fd, &st) == 0 && S_ISREG (st.st_mode))
    wait_for_kill ();   /* written, not yet on disk */
  return __real_fsync (fd);
}

int
__wrap_rename (const char *from, const char *to)
{
  if (mark == NULL)
    return __real_rename (from, to);
  if (mark->temps == stop_at_temp && stop_before_rename)
    wait_for_kill ();   /* on disk under its temporary name */
  mark->at = AT_RENAMING;
  int r = __real_rename (from, to);
  mark->at = AT_IDLE;
  return r;
}

/* The child: announce the start, then save the two versions in turn until
 * killed, marking where it is. Never returns. */
G_GNUC_NORETURN static void
child_main (const Versions *v, int ready_fd, int first)
{
  char byte = 1;
  stop_fd = ready_fd;
  if (write (ready_fd, &byte, 1) != 1)
    _exit (3);
  for (int k = first;; k ^= 1)
    {
      if (!caml_weights_save (v->model[k], v->weights_path, NULL)
          || !caml_experiment_save_file (v->exp[k], v->exp_path, NULL))
        _exit (2);
    }
}

/* Which version the files on disk are: 0 or 1; fails the test otherwise.
 * `scratch` is a model of the same layout to load into. */
static int
check_files (const Versions *v, CamlModel *scratch)
{
  GError *error = NULL;
  size_t bytes = scratch->n_weights * sizeof (float);

  memset (scratch->w, 0, bytes);
  if (!caml_weights_load (scratch, v->weights_path, &error))
    fail_msg ("the weights file does not load after a kill: %s", error->message);
  int wk = memcmp (scratch->w, v->model[0]->w, bytes) == 0 ? 0
           : memcmp (scratch->w, v->model[1]->w, bytes) == 0 ? 1 : -1;
  if (wk < 0)
    fail_msg ("the weights file loads but holds neither version");

  CamlExperiment *exp = caml_experiment_load_file (v->exp_path, &error);
  if (exp == NULL)
    fail_msg ("the experiment does not load after a kill: %s", error->message);
  int ek = caml_experiment_equal (exp, v->exp[0]) ? 0
           : caml_experiment_equal (exp, v->exp[1]) ? 1 : -1;
  caml_experiment_free (exp);
  if (ek < 0)
    fail_msg ("the experiment loads but is neither version");
  return wk;
}

/* Every other child is stopped inside a save (a temporary written but not
 * yet synced, or synced but not yet renamed, in the first few saves) and
 * killed there; the others are killed at a random time. Each kill's
 * landing is read from the child's mark, so the test counts the kills that
 * arrived mid-write instead of hoping some did. */
static void
test_kill_during_save (void **state)
{
  Fixture *f = *state;
  Versions v = { 0 };
  versions_init (&v, f->dir);

  /* How long one round of saves takes here: kills land within a few. */
  save_version (&v, 0);
  gint64 t0 = g_get_monotonic_time ();
  save_version (&v, 1);
  save_version (&v, 0);
  gint64 round_us = MAX ((g_get_monotonic_time () - t0) / 2, 1000);

  /* A model of the same layout to load into. */
  GError *error = NULL;
  CamlShape input = caml_shape_flat (2);
  CamlModel *into = caml_experiment_build_model (v.exp[0], &input, &error);
  assert_non_null (into);

  Mark *shared = mmap (NULL, sizeof (Mark), PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true (shared != MAP_FAILED);

  GRand *rng = g_rand_new_with_seed (20240611);
  int intact = 0, mid_write = 0, stopped = 0, random_mid_write = 0, changes = 0;
  int last = check_files (&v, into);
  for (int run = 0; run < KILL_RUNS; run++)
    {
      gboolean stop = run % 2 == 0;
      *shared = (Mark) { AT_IDLE, 0 };
      /* Inside the 1st…4th temporary: each file of each version. */
      stop_at_temp = stop ? 1 + (run / 2) % 4 : 0;
      stop_before_rename = (run / 8) % 2;
      int pipe_fd[2];
      assert_int_equal (pipe (pipe_fd), 0);
      pid_t pid = fork ();
      assert_true (pid >= 0);
      if (pid == 0)
        {
          close (pipe_fd[0]);
          mark = shared;
          child_main (&v, pipe_fd[1], last ^ 1);
        }
      close (pipe_fd[1]);
      char byte;
      assert_int_equal (read (pipe_fd[0], &byte, 1), 1);
      if (stop)
        {
          /* The child says it waits inside the save. */
          assert_int_equal (read (pipe_fd[0], &byte, 1), 1);
          stopped++;
        }
      else
        /* Anywhere in the first three rounds: before, inside or between writes. */
        g_usleep ((gulong) g_rand_int_range (rng, 0, (gint32) MIN (3 * round_us, G_MAXINT32)));
      assert_int_equal (kill (pid, SIGKILL), 0);
      close (pipe_fd[0]);
      int status;
      assert_int_equal (waitpid (pid, &status, 0), pid);
      if (!(WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL))
        fail_msg ("the child ended by itself (status %d): a save failed", status);

      /* Killed while writing: its temporary is still there. At most one
       * per target — the next save removes the previous one. */
      gboolean in_write = shared->at == AT_WRITING;
      GPtrArray *hidden = hidden_files (f->dir);
      assert_true (hidden->len <= 2);
      if (in_write)
        assert_true (hidden->len >= 1);
      g_ptr_array_unref (hidden);
      if (stop)
        {
          assert_true (in_write);
          assert_int_equal (shared->temps, stop_at_temp);
        }
      mid_write += in_write;
      random_mid_write += in_write && !stop;

      int now = check_files (&v, into);
      changes += now != last;
      last = now;
      intact++;
    }
  print_message ("kill during save: %d of %d runs left both files intact "
                 "(%d killed mid-write: %d stopped there, %d at random; %d saw a new version)\n",
                 intact, KILL_RUNS, mid_write, stopped, random_mid_write, changes);
  assert_int_equal (intact, KILL_RUNS);
  assert_int_equal (stopped, KILL_RUNS / 2);
  assert_true (mid_write >= stopped);
  /* A stop in a later temporary comes after earlier saves were renamed. */
  assert_true (changes > 0);

  /* One more save of each: the leftovers are gone. */
  save_version (&v, 0);
  assert_int_equal (count_entries (f->dir), 2);

  munmap (shared, sizeof (Mark));
  g_rand_free (rng);
  caml_model_free (into);
  versions_clear (&v);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_get_contents, setup, teardown),
    cmocka_unit_test_setup_teardown (test_check_readable, setup, teardown),
    cmocka_unit_test_setup_teardown (test_replace, setup, teardown),
    cmocka_unit_test_setup_teardown (test_stale_temporaries, setup, teardown),
    cmocka_unit_test_setup_teardown (test_kill_during_save, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
