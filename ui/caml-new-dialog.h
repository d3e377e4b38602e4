/* caml-new-dialog.h — File → New (Ctrl+N): a small window that asks which
 * data set a blank experiment starts on. */
#pragma once

#include <gtk/gtk.h>

#include "caml.h"

G_BEGIN_DECLS

typedef void (*CamlNewDialogFunc) (CamlDataKind kind, gpointer user_data);

/* A modal window over parent (may be NULL): a data picker (surface first),
 * Cancel and Create; Create calls func with the kind picked, then the
 * window goes. Returned presented; it destroys itself. */
GtkWindow *caml_new_dialog_present (GtkWindow *parent, CamlNewDialogFunc func,
                                    gpointer user_data);
/* The dialog's picker and Create button (tests). */
GtkDropDown *caml_new_dialog_get_picker (GtkWindow *dialog);
GtkButton   *caml_new_dialog_get_create (GtkWindow *dialog);

G_END_DECLS
