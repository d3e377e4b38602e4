/* results-dir.h — all or nothing: a command's result files are written
 * into a staging directory inside its output directory and moved into
 * place, replacing an earlier run's, only once every one was written. A
 * failure leaves the output directory as it was.
 *
 * The staging directory (".caml-new-XXXXXX"), and the one a commit moves
 * the earlier results aside into (".caml-old-XXXXXX"), are held with an
 * exclusive flock(2) while in use; the kernel drops the lock when the
 * process dies, however it dies, so the next command into the directory
 * finds one nobody holds (what a run killed outright left) and, with a
 * note on stderr, removes a staging directory or renames an aside one to
 * earlier-results-XXXXXX (it may hold the only copy of earlier results). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Whether a file name in the output directory is one of the command's
 * results, which a new set replaces (an earlier run's of another kind
 * included); other files are left alone. */
typedef gboolean (*CamlResultName) (const char *name);

typedef struct {
  char     *out_dir;
  char     *dir;        /* the staging directory: write the results here */
  int       lock_fd;
  gboolean  committed;
} CamlResultsDir;

/* Removes stale staging directories in out_dir, then makes this command's
 * (out_dir must exist). */
CamlResultsDir *caml_results_dir_new (const char *out_dir, GError **error);
/* Moves every file of the staging directory into out_dir in place of the
 * files there that is_result names, and removes the staging directory.
 * The earlier files are moved aside first, so that when a move fails (a
 * result name taken by a directory, say) every move is undone and out_dir
 * is as it was (should a move back fail too, the error names the folder
 * that keeps what could not be put back). Commits into one directory take
 * turns (a flock on it). */
gboolean        caml_results_dir_commit (CamlResultsDir *r, CamlResultName is_result,
                                         GError **error);
/* Removes the staging directory unless committed, unlocks it, frees r. */
void            caml_results_dir_free (CamlResultsDir *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CamlResultsDir, caml_results_dir_free)

/* Removes a directory of files (no subdirectories). Files may still be
 * appearing in it (a save thread writing while Ctrl+C aborts): it tries
 * again until it is empty. Whether it is gone. */
gboolean        caml_remove_flat_dir (const char *path);

G_END_DECLS
