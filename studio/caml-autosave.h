/* caml-autosave.h — crash recovery files for the workbench, in plain C (no
 * GTK): each window with unsaved changes keeps its experiment in
 * <dir>/<pid>-<uuid>.json, written with caml_file_replace. A file whose pid
 * no longer runs is a leftover of a session that ended unexpectedly; a file
 * whose pid runs belongs to a live workbench and is never offered.
 *
 * <dir> is $CAML_AUTOSAVE_DIR when set (the tests), otherwise
 * g_get_user_state_dir()/caml-workbench/autosave. */
#pragma once

#include <glib.h>

#include "caml.h"

G_BEGIN_DECLS

/* The autosave directory (not created); free with g_free. */
char      *caml_autosave_dir (void);
/* A new id for one window: "<this pid>-<random uuid>". */
char      *caml_autosave_new_id (void);
/* <dir>/<id>.json; free with g_free. */
char      *caml_autosave_path (const char *id);
/* Creates the directory and replaces the id's file with exp's JSON. */
gboolean   caml_autosave_write (const char *id, const CamlExperiment *exp, GError **error);
/* Removes the id's file; a missing file is not an error. */
void       caml_autosave_remove (const char *id);
/* The pid an autosave file name starts with, or 0 when the name is not an
 * autosave's ("<pid>-….json", not hidden). */
GPid       caml_autosave_pid_of (const char *basename);
/* The process runs (or exists but belongs to another user) and, where
 * /proc tells (Linux), is not a zombie and runs a program of this one's
 * name (caml-workbench), so that a pid recycled by another program does
 * not keep a crashed session's files from being offered. */
gboolean   caml_autosave_pid_alive (GPid pid);
/* Full paths of the autosaves in the directory whose process is gone,
 * sorted; an empty array when there are none or no directory. */
GPtrArray *caml_autosave_list_leftovers (void);

G_END_DECLS
