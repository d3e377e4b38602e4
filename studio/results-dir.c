/* results-dir.c — all-or-nothing results of a command (results-dir.h). */
#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

#include "results-dir.h"

gboolean
caml_remove_flat_dir (const char *path)
{
  for (int tries = 0; tries < 100; tries++)
    {
      g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
      const char *name;
      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *file = g_build_filename (path, name, NULL);
          g_unlink (file);
        }
      if (g_rmdir (path) == 0 || errno == ENOENT)
        return TRUE;
    }
  return FALSE;
}

/* A new empty directory in out_dir (the same file system, so its files
 * can be renamed into out_dir), named from template ("….XXXXXX"). */
static char *
make_hidden_dir (const char *out_dir, const char *template, GError **error)
{
  char *path = g_build_filename (out_dir, template, NULL);
  if (g_mkdtemp (path) == NULL)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "%s: cannot write the results there: %s", out_dir, g_strerror (saved));
      g_free (path);
      return NULL;
    }
  return path;
}

/* Whether path still leads to the directory open on fd. */
static gboolean
names_it (int fd, const char *path)
{
  struct stat held, named;
  return fstat (fd, &held) == 0 && lstat (path, &named) == 0 && held.st_dev == named.st_dev
         && held.st_ino == named.st_ino;
}

/* Where the earlier results in the aside directory named name
 * (".caml-old-XXXXXX") are kept when they stay: out_dir/earlier-results-XXXXXX. */
static char *
earlier_results_path (const char *out_dir, const char *name)
{
  g_autofree char *base = g_strconcat ("earlier-results-", name + strlen (".caml-old-"), NULL);
  return g_build_filename (out_dir, base, NULL);
}

/* The staging directory of a run (".caml-new-XXXXXX" in out_dir), and the
 * directory a commit moves the earlier results aside into
 * (".caml-old-XXXXXX"), are held with an exclusive flock(2) for as long as
 * they are in use: the kernel drops the lock when the process dies, however
 * it dies. So one that nobody holds is what a run killed outright (SIGKILL,
 * a power cut) left, and the next run into out_dir removes it
 * (remove_stale_dirs) — as engine/file.c does for the temporaries of single
 * files, and with the same race closed: the maker checks, once it holds the
 * lock, that the name still leads to its directory. Returns the path and
 * sets *lock_fd (close it when the directory is gone). */
static char *
make_locked_dir (const char *out_dir, const char *template, int *lock_fd, GError **error)
{
  for (int attempt = 0; attempt < 16; attempt++)
    {
      char *path = make_hidden_dir (out_dir, template, error);
      if (path == NULL)
        return NULL;
      int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0 && flock (fd, LOCK_EX | LOCK_NB) != 0 && errno != EWOULDBLOCK)
        {
          /* a file system without locks: nobody cleans up here */
          *lock_fd = fd;
          return path;
        }
      if (fd >= 0 && names_it (fd, path) && flock (fd, LOCK_EX | LOCK_NB) == 0)
        {
          *lock_fd = fd;
          return path;
        }
      /* a cleaner took it between the mkdir and the lock: another name */
      if (fd >= 0)
        close (fd);
      g_rmdir (path);
      g_free (path);
    }
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_AGAIN,
               "%s: cannot make a staging directory there (removed as soon as made)", out_dir);
  return NULL;
}

/* The staging and aside directories in out_dir that no live run holds
 * (make_locked_dir): a staging directory (partial results of a killed run)
 * is removed; an aside directory (the earlier results a run killed while
 * moving its own into place had set aside — the only copy of them) is
 * renamed to earlier-results-XXXXXX, never removed. Each said. */
static void
remove_stale_dirs (const char *out_dir)
{
  g_autoptr (GDir) dir = g_dir_open (out_dir, 0, NULL);
  const char *name;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      gboolean staging = g_str_has_prefix (name, ".caml-new-");
      if (!staging && !g_str_has_prefix (name, ".caml-old-"))
        continue;
      g_autofree char *path = g_build_filename (out_dir, name, NULL);
      int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        continue;
      if (flock (fd, LOCK_EX | LOCK_NB) == 0 && names_it (fd, path))
        {
          g_autofree char *kept = earlier_results_path (out_dir, name);
          if (staging && caml_remove_flat_dir (path))
            g_printerr ("%s: note: removed %s/, the partial results of a run into %s/ that "
                        "was killed while saving\n", g_get_prgname (), path, out_dir);
          else if (!staging && g_rename (path, kept) == 0)
            g_printerr ("%s: note: %s/ holds earlier results that a run killed while "
                        "replacing them had set aside (it was %s/)\n", g_get_prgname (), kept,
                        path);
        }
      close (fd);
    }
}

static gboolean
move_file (const char *from_dir, const char *to_dir, const char *name, GError **error)
{
  g_autofree char *from = g_build_filename (from_dir, name, NULL);
  g_autofree char *to = g_build_filename (to_dir, name, NULL);
  if (g_rename (from, to) == 0)
    return TRUE;
  int saved = errno;
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
               "%s: cannot move it into place: %s", to, g_strerror (saved));
  return FALSE;
}

/* Moves every file of staging (a complete set of results) into out_dir in
 * place of the result files an earlier run left there, and removes
 * staging. The earlier files are first moved aside into a directory of
 * their own, so that when a move fails (a result name taken by a
 * directory, say) every move is undone and out_dir is as it was; staging
 * is then left for the caller to remove. Should a move back fail too, the
 * earlier files that could not be put back stay in a folder named in the
 * error, never removed.
 *
 * Two runs into one directory commit one after the other: each holds an
 * exclusive flock on out_dir itself for its moves (else one run's files
 * could be moved aside by the other, and the directory end with some of
 * each). */
static gboolean
commit_results (const char *out_dir, const char *staging, CamlResultName is_result_name,
                GError **error)
{
  g_autoptr (GPtrArray) new_names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) moved = g_ptr_array_new_with_free_func (g_free);   /* aside */
  g_autoptr (GPtrArray) placed = g_ptr_array_new_with_free_func (g_free);  /* new */
  g_autoptr (GDir) dir = g_dir_open (staging, 0, error);
  if (dir == NULL)
    return FALSE;
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    g_ptr_array_add (new_names, g_strdup (name));
  g_clear_pointer (&dir, g_dir_close);

  /* One commit at a time (no lock where the file system has none). While
   * another holds it, the default main context is iterated, so that a
   * command's signal sources are heard (caml train: a second Ctrl+C
   * aborts); a blocking flock would not return for a signal. */
  int dir_lock = open (out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  gboolean said = FALSE;
  while (dir_lock >= 0 && flock (dir_lock, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK)
    {
      if (!said)
        g_printerr ("%s: waiting for another command to finish moving its results into %s/\n",
                    g_get_prgname (), out_dir);
      said = TRUE;
      while (g_main_context_iteration (NULL, FALSE))
        ;
      g_usleep (20000);
    }
  int aside_lock = -1;
  g_autofree char *aside = make_locked_dir (out_dir, ".caml-old-XXXXXX", &aside_lock, error);
  gboolean ok = aside != NULL;
  /* A name of this run's taken by something other than a file is not
   * replaced. */
  for (guint i = 0; ok && i < new_names->len; i++)
    {
      g_autofree char *target = g_build_filename (out_dir, new_names->pdata[i], NULL);
      GStatBuf st;
      if (g_lstat (target, &st) == 0 && !S_ISREG (st.st_mode))
        {
          g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
                       "%s: is not a file, so this run's %s could not replace it",
                       target, (const char *) new_names->pdata[i]);
          ok = FALSE;
        }
    }
  dir = ok ? g_dir_open (out_dir, 0, error) : NULL;
  ok &= dir != NULL;
  while (ok && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (out_dir, name, NULL);
      GStatBuf st;
      if (!is_result_name (name) || g_lstat (path, &st) != 0 || !S_ISREG (st.st_mode))
        continue;
      if (!(ok = move_file (out_dir, aside, name, error)))
        break;
      g_ptr_array_add (moved, g_strdup (name));
    }
  for (guint i = 0; ok && i < new_names->len; i++)
    {
      if (!(ok = move_file (staging, out_dir, new_names->pdata[i], error)))
        break;
      g_ptr_array_add (placed, g_strdup (new_names->pdata[i]));
    }
  gboolean restored = TRUE;
  if (!ok)
    {
      /* Undone in reverse: this run's files back to staging, the earlier
       * run's back into place. */
      for (guint i = 0; i < placed->len; i++)
        move_file (out_dir, staging, placed->pdata[i], NULL);
      for (guint i = 0; i < moved->len; i++)
        restored &= move_file (aside, out_dir, moved->pdata[i], NULL);
    }
  if (aside != NULL && !restored)
    {
      /* what could not go back keeps a visible name of its own */
      g_autofree char *base = g_path_get_basename (aside);
      g_autofree char *named = earlier_results_path (out_dir, base);
      g_prefix_error (error, "(the earlier results that could not be put back are in %s/) ",
                      g_rename (aside, named) == 0 ? named : aside);
    }
  else if (aside != NULL)
    caml_remove_flat_dir (aside);
  if (aside_lock >= 0)
    close (aside_lock);
  if (ok)
    {
      g_rmdir (staging);
      /* the renames reach the disk with the directory */
      if (dir_lock >= 0)
        fsync (dir_lock);
    }
  if (dir_lock >= 0)
    close (dir_lock);   /* and the next commit may go */
  return ok;
}

CamlResultsDir *
caml_results_dir_new (const char *out_dir, GError **error)
{
  remove_stale_dirs (out_dir);
  int lock_fd = -1;
  char *dir = make_locked_dir (out_dir, ".caml-new-XXXXXX", &lock_fd, error);
  if (dir == NULL)
    return NULL;
  CamlResultsDir *r = g_new0 (CamlResultsDir, 1);
  r->out_dir = g_strdup (out_dir);
  r->dir = dir;
  r->lock_fd = lock_fd;
  return r;
}

gboolean
caml_results_dir_commit (CamlResultsDir *r, CamlResultName is_result, GError **error)
{
  if (!commit_results (r->out_dir, r->dir, is_result, error))
    return FALSE;
  r->committed = TRUE;
  return TRUE;
}

void
caml_results_dir_free (CamlResultsDir *r)
{
  if (r == NULL)
    return;
  if (!r->committed)
    caml_remove_flat_dir (r->dir);
  if (r->lock_fd >= 0)
    close (r->lock_fd);
  g_free (r->out_dir);
  g_free (r->dir);
  g_free (r);
}
