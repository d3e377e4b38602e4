/* file.c — whole files in and out.
 *
 * caml_file_get_contents reads a regular file whole and refuses anything
 * else before reading a byte: /dev/zero or /dev/urandom never end (the read
 * grows until an allocation of gigabytes fails), a FIFO or a terminal blocks
 * until someone writes. It opens without blocking (O_NONBLOCK, so a FIFO
 * without a writer does not hang the open), then asks the open file what it
 * is; a regular file is read as g_file_get_contents would.
 *
 * caml_file_replace writes the new contents to a temporary file in the
 * target's directory, fsyncs it, renames it over the target and fsyncs the
 * directory. rename(2) is atomic, so a reader — or the next start after a
 * crash, a power cut or a SIGKILL — finds the old file or the new one, never
 * a mix or a prefix.
 *
 * A writer killed before its rename leaves its temporary behind. Temporaries
 * are named ".<name>.XXXXXX.tmp" after their target, and a writer holds an
 * exclusive flock(2) on its temporary until the rename; the kernel drops the
 * lock when the writer dies. So every save first removes the temporaries of
 * the same target that nobody holds: at most one stale temporary per target
 * exists at any time, whatever the number of interrupted saves. (On a file
 * system without flock nobody can lock, and temporaries are left alone.)
 *
 * The race between a writer creating its temporary and locking it, and a
 * cleaner removing it in between, is closed on the writer's side: after
 * taking the lock it checks that the name still leads to its file, and
 * starts over with a new name if not. A cleaner only removes a file it has
 * locked itself and that the name still leads to. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/file.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "caml-private.h"

#define TEMP_SUFFIX      ".tmp"
#define TEMP_RANDOM      6      /* the XXXXXX of g_mkstemp */
#define TEMP_MAX_BASE    200    /* bytes of the target's name kept in the prefix */
#define TEMP_ATTEMPTS    16

G_GNUC_PRINTF (4, 5) static gboolean
fail_errno (GError **error, int saved_errno, const char *path, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  char *what = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: %s: %s", path, what,
               g_strerror (saved_errno));
  g_free (what);
  return FALSE;
}

/* ".<base>." with base cut to TEMP_MAX_BASE bytes (names have a length limit). */
static char *
temp_prefix (const char *base)
{
  return g_strdup_printf (".%.*s.", (int) MIN (strlen (base), TEMP_MAX_BASE), base);
}

static gboolean
is_temp_name (const char *name, const char *prefix)
{
  size_t np = strlen (prefix);
  if (strlen (name) != np + TEMP_RANDOM + strlen (TEMP_SUFFIX)
      || strncmp (name, prefix, np) != 0
      || strcmp (name + np + TEMP_RANDOM, TEMP_SUFFIX) != 0)
    return FALSE;
  for (size_t i = 0; i < TEMP_RANDOM; i++)
    if (!g_ascii_isalnum (name[np + i]))
      return FALSE;
  return TRUE;
}

static gboolean
same_file (const struct stat *a, const struct stat *b)
{
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Removes the temporaries of earlier saves of the same target whose writers
 * are gone (their lock is free). Best effort: errors are ignored. */
static void
remove_stale_temps (int dir_fd, const char *prefix)
{
  int list_fd = dup (dir_fd);
  if (list_fd < 0)
    return;
  DIR *dir = fdopendir (list_fd);
  if (dir == NULL)
    {
      close (list_fd);
      return;
    }
  struct dirent *entry;
  while ((entry = readdir (dir)) != NULL)
    {
      if (!is_temp_name (entry->d_name, prefix))
        continue;
      int fd = openat (dir_fd, entry->d_name,
                       O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
      if (fd < 0)
        continue;
      struct stat held, named;
      if (flock (fd, LOCK_EX | LOCK_NB) == 0
          && fstat (fd, &held) == 0
          && fstatat (dir_fd, entry->d_name, &named, AT_SYMLINK_NOFOLLOW) == 0
          && same_file (&held, &named))
        unlinkat (dir_fd, entry->d_name, 0);
      close (fd);   /* drops the lock */
    }
  closedir (dir);
}

/* Creates and locks a fresh temporary; returns its descriptor or -1. */
/* A temporary file in dir_path for `target`, which errors name: the user
 * chose it, not the temporary name. */
static int
create_temp (const char *target, const char *dir_path, const char *prefix, char **temp_path,
             GError **error)
{
  for (int attempt = 0; attempt < TEMP_ATTEMPTS; attempt++)
    {
      char *name = g_strconcat (prefix, "XXXXXX", TEMP_SUFFIX, NULL);
      char *path = g_build_filename (dir_path, name, NULL);
      g_free (name);
      int fd = g_mkstemp_full (path, O_WRONLY | O_CLOEXEC, 0644);
      if (fd < 0)
        {
          int saved = errno;
          fail_errno (error, saved, target, "cannot create a temporary file beside it");
          g_free (path);
          return -1;
        }
      /* Where the file system has no flock (some network file systems) the
       * temporary stays unlocked; cleaners there cannot lock it either, so
       * they leave it alone. */
      int locked;
      do
        locked = flock (fd, LOCK_EX);
      while (locked != 0 && errno == EINTR);
      struct stat held, named;
      if (fstat (fd, &held) == 0 && lstat (path, &named) == 0 && same_file (&held, &named))
        {
          *temp_path = path;
          return fd;
        }
      /* A cleaner took it between creation and lock: try another name. */
      close (fd);
      g_free (path);
    }
  g_set_error (error, CAML_ERROR, CAML_ERROR_IO,
               "%s: cannot create a temporary file that stays put", dir_path);
  return -1;
}

/* ------------------------------------------------------------ reading */

/* What a file that is not a regular file is, for messages. */
static const char *
file_kind (mode_t mode)
{
  if (S_ISDIR (mode))
    return "a directory";
  if (S_ISCHR (mode))
    return "a character device";
  if (S_ISBLK (mode))
    return "a block device";
  if (S_ISFIFO (mode))
    return "a FIFO";
  if (S_ISSOCK (mode))
    return "a socket";
  return "not a file";
}

static gboolean
fail_not_regular (GError **error, const char *path, mode_t mode)
{
  g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: not a regular file (%s)", path,
               file_kind (mode));
  return FALSE;
}

/* A pipe (`<(…)`, `/dev/stdin` fed by one) has no size: read it to its end,
 * up to CAML_PIPE_MAX bytes. Closes fd. */
#define CAML_PIPE_MAX ((gsize) 1 << 30)

static int pipe_wait_ms;   /* caml_file_set_pipe_wait */

void
caml_file_set_pipe_wait (int milliseconds)
{
  g_atomic_int_set (&pipe_wait_ms, milliseconds < 0 ? -1 : milliseconds);
}

static gboolean
read_pipe (int fd, const char *path, char **contents, gsize *length, GError **error)
{
  /* Opened without blocking so that a FIFO without a writer cannot hang the
   * open; from here on, wait for the writer's data. A read of a FIFO that
   * no writer has opened yet ends at once (end of file): with a pipe wait
   * (caml_file_set_pipe_wait), first wait for one — poll reports nothing
   * until a writer opens and writes, or opens and closes
   * (`producer > fifo & caml train fifo` races the producer's open). */
  int flags = fcntl (fd, F_GETFL);
  if (flags >= 0)
    fcntl (fd, F_SETFL, flags & ~O_NONBLOCK);
  int wait_ms = g_atomic_int_get (&pipe_wait_ms);
  if (wait_ms != 0)
    {
      struct pollfd wait_for = { .fd = fd, .events = POLLIN };
      gint64 until = g_get_monotonic_time () + (gint64) wait_ms * 1000;
      for (;;)
        {
          gint64 left_ms = wait_ms < 0 ? -1 : (until - g_get_monotonic_time () + 999) / 1000;
          if (left_ms == 0 || (left_ms < 0 && wait_ms > 0))
            break;
          if (poll (&wait_for, 1, (int) MIN (left_ms, G_MAXINT)) >= 0 || errno != EINTR)
            break;
        }
    }
  GByteArray *data = g_byte_array_new ();
  guint8 chunk[65536];
  for (;;)
    {
      ssize_t n = read (fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          g_byte_array_unref (data);
          close (fd);
          return fail_errno (error, saved, path, "cannot read");
        }
      if (n == 0)
        break;
      if (data->len + (gsize) n > CAML_PIPE_MAX)
        {
          g_autofree char *most = g_format_size (CAML_PIPE_MAX);
          g_byte_array_unref (data);
          close (fd);
          g_set_error (error, CAML_ERROR, CAML_ERROR_IO,
                       "%s: a pipe that gives more than %s (write it to a file)", path, most);
          return FALSE;
        }
      g_byte_array_append (data, chunk, (guint) n);
    }
  close (fd);
  guint8 nul = 0;
  g_byte_array_append (data, &nul, 1);
  if (length != NULL)
    *length = data->len - 1;
  *contents = (char *) g_byte_array_free (data, FALSE);
  return TRUE;
}

/* Opens path for reading without blocking and fstats it: the fd, or −1 with
 * the error set ("no such file", "not a regular file (…)", "cannot open: …").
 * What the file is (regular, FIFO, other) is left to the caller. */
static int
open_for_reading (const char *path, struct stat *st, GError **error)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    {
      int saved = errno;
      if (saved == ENOENT)
        g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: no such file", path);
      else if (stat (path, st) == 0 && !S_ISREG (st->st_mode))   /* a socket: ENXIO */
        fail_not_regular (error, path, st->st_mode);
      else
        fail_errno (error, saved, path, "cannot open");
      return -1;
    }
  if (fstat (fd, st) != 0)
    {
      int saved = errno;
      close (fd);
      fail_errno (error, saved, path, "cannot read");
      return -1;
    }
  return fd;
}

gboolean
caml_file_check_readable (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* A FIFO is not opened: closing a read end that a writer already feeds
   * could leave it without a reader between this check and the load. */
  struct stat st;
  if (stat (path, &st) == 0 && S_ISFIFO (st.st_mode))
    return TRUE;
  int fd = open_for_reading (path, &st, error);
  if (fd < 0)
    return FALSE;
  close (fd);
  if (!S_ISREG (st.st_mode) && !S_ISFIFO (st.st_mode))
    return fail_not_regular (error, path, st.st_mode);
  return TRUE;
}

gboolean
caml_file_get_contents (const char *path, char **contents, gsize *length, GError **error)
{
  g_return_val_if_fail (path != NULL && contents != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  struct stat st;
  int fd = open_for_reading (path, &st, error);
  if (fd < 0)
    return FALSE;
  if (S_ISFIFO (st.st_mode))
    return read_pipe (fd, path, contents, length, error);
  if (!S_ISREG (st.st_mode))
    {
      close (fd);
      return fail_not_regular (error, path, st.st_mode);
    }

  /* The size the file has now; one that grows meanwhile is read that far. */
  gsize size = (gsize) st.st_size;
  char *buf = (guint64) st.st_size < G_MAXSIZE ? g_try_malloc (size + 1) : NULL;
  if (buf == NULL)
    {
      g_autofree char *shown = g_format_size ((guint64) st.st_size);
      close (fd);
      g_set_error (error, CAML_ERROR, CAML_ERROR_IO,
                   "%s: the file's %s do not fit in memory", path, shown);
      return FALSE;
    }
  gsize got = 0;
  while (got < size)
    {
      ssize_t n = read (fd, buf + got, MIN (size - got, (gsize) G_MAXSSIZE));
      if (n < 0)
        {
          int saved = errno;
          if (saved == EINTR)
            continue;
          g_free (buf);
          close (fd);
          return fail_errno (error, saved, path, "cannot read");
        }
      if (n == 0)   /* shorter than it said: it shrank meanwhile */
        break;
      got += (gsize) n;
    }
  close (fd);
  buf[got] = '\0';
  *contents = buf;
  if (length != NULL)
    *length = got;
  return TRUE;
}

/* ------------------------------------------------------------ writing */

static gboolean
write_all (int fd, const guint8 *data, gsize length)
{
  while (length > 0)
    {
      ssize_t n = write (fd, data, MIN (length, (gsize) G_MAXSSIZE));
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return FALSE;
        }
      data += n;
      length -= (gsize) n;
    }
  return TRUE;
}

gboolean
caml_file_check_replaceable (const char *path, GError **error)
{
  GStatBuf st;
  if (g_lstat (path, &st) != 0 || S_ISREG (st.st_mode))
    return TRUE;
  const char *kind = S_ISDIR (st.st_mode) ? "a directory"
                     : S_ISLNK (st.st_mode) ? "a symbolic link"
                     : S_ISFIFO (st.st_mode) ? "a named pipe"
                     : S_ISCHR (st.st_mode) || S_ISBLK (st.st_mode) ? "a device"
                     : S_ISSOCK (st.st_mode) ? "a socket" : "not a regular file";
  g_autofree char *target = S_ISLNK (st.st_mode) ? realpath (path, NULL) : NULL;
  g_set_error (error, CAML_ERROR, CAML_ERROR_IO,
               "%s: is not a file (%s), which a save would replace%s%s; nothing was "
               "written", path, kind, target != NULL ? ": save to the file it points to, " : "",
               target != NULL ? target : "");
  return FALSE;
}

gboolean
caml_file_replace (const char *path, const void *data, gsize length, GError **error)
{
  g_return_val_if_fail (path != NULL && (data != NULL || length == 0), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* rename() would put the file in place of a device, a pipe or a link
   * (not of what the link points to) */
  if (!caml_file_check_replaceable (path, error))
    return FALSE;

  char *dir_path = g_path_get_dirname (path);
  char *base = g_path_get_basename (path);
  char *prefix = temp_prefix (base);
  char *temp_path = NULL;
  gboolean ok = FALSE;
  int fd = -1;

  int dir_fd = open (dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0)
    {
      int saved = errno;
      fail_errno (error, saved, path, "cannot save into %s", dir_path);
      goto out;
    }
  remove_stale_temps (dir_fd, prefix);

  fd = create_temp (path, dir_path, prefix, &temp_path, error);
  if (fd < 0)
    goto out;
  if (!write_all (fd, data, length))
    {
      int saved = errno;
      fail_errno (error, saved, path, "cannot write");
      goto out;
    }
  if (fsync (fd) != 0)
    {
      int saved = errno;
      fail_errno (error, saved, path, "cannot flush to disk");
      goto out;
    }
  if (rename (temp_path, path) != 0)
    {
      int saved = errno;
      fail_errno (error, saved, path, "cannot replace");
      goto out;
    }
  g_clear_pointer (&temp_path, g_free);   /* it is the target now */
  /* The rename itself reaches the disk with the directory. Some file systems
   * cannot fsync a directory (EINVAL): the data is safe, the name may lag. */
  if (fsync (dir_fd) != 0 && errno != EINVAL && errno != EROFS)
    {
      int saved = errno;
      fail_errno (error, saved, path, "cannot flush the directory %s", dir_path);
      goto out;
    }
  ok = TRUE;

out:
  if (temp_path != NULL)
    g_unlink (temp_path);
  if (fd >= 0)
    close (fd);   /* drops the lock */
  if (dir_fd >= 0)
    close (dir_fd);
  g_free (temp_path);
  g_free (prefix);
  g_free (base);
  g_free (dir_path);
  return ok;
}
