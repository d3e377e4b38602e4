/* caml-model-editor.h — the model builder: a palette of every layer type in
 * the engine's registry, the model stack with live shape inference, an
 * inspector generated from each type's option table, and undo/redo.
 *
 * Behaviour is reached through the editor's own actions, editor.add-layer
 * (s), editor.remove-layer, editor.move-layer-up/down, editor.select-layer
 * (i), editor.layer-option ((sd)), editor.clear-model, editor.undo and
 * editor.redo, which call the functions below and are enabled as the
 * model, the selection, the undo history and the lock allow. */
#pragma once

#include <gtk/gtk.h>

#include "caml.h"
#include "caml-format.h"

G_BEGIN_DECLS

#define CAML_TYPE_MODEL_EDITOR (caml_model_editor_get_type ())
G_DECLARE_FINAL_TYPE (CamlModelEditor, caml_model_editor, CAML, MODEL_EDITOR, GtkBox)

GtkWidget *caml_model_editor_new (void);

/* Replaces the model and forgets the undo history. */
void  caml_model_editor_set_layers (CamlModelEditor *self, const CamlLayerSpec *specs, int n);
const CamlLayerSpec *caml_model_editor_get_layers (CamlModelEditor *self, int *n);
/* What the model is checked against: the data's per-sample input shape and
 * the number of outputs its targets need (0: unknown). input NULL with
 * data_error set: the data could not be read; with data_error NULL: the
 * data is still loading. */
void  caml_model_editor_set_data (CamlModelEditor *self, const CamlShape *input,
                                  int want_outputs, const char *data_name,
                                  const char *data_error);

/* Edits (each one undoable). index -1 appends. */
void  caml_model_editor_insert_layer (CamlModelEditor *self, const CamlLayerOps *ops, int index);
void  caml_model_editor_remove_selected (CamlModelEditor *self);
void  caml_model_editor_move_layer (CamlModelEditor *self, int from, int to);
void  caml_model_editor_move_selected (CamlModelEditor *self, int delta);
void  caml_model_editor_clear (CamlModelEditor *self);
/* Sets option key of the selected layer; FALSE with an error for an unknown
 * key or a value outside the option's range. */
gboolean caml_model_editor_set_option (CamlModelEditor *self, const char *key, double value,
                                       GError **error);
void  caml_model_editor_undo (CamlModelEditor *self);
void  caml_model_editor_redo (CamlModelEditor *self);

void  caml_model_editor_select (CamlModelEditor *self, int index);
/* While a run trains the model cannot change: locked, the palette and the
 * inspector are insensitive and nothing is dropped or dragged, but a layer
 * can still be selected (the parts page follows it). */
void  caml_model_editor_set_locked (CamlModelEditor *self, gboolean locked);
/* Whether widget is (in) a part of the editor that locking makes insensitive. */
gboolean caml_model_editor_locks (CamlModelEditor *self, GtkWidget *widget);
int   caml_model_editor_get_selected (CamlModelEditor *self);
/* TRUE when every layer's shape fits (the model can be built and trained). */
gboolean caml_model_editor_is_valid (CamlModelEditor *self);
/* The first error, or NULL; and the index of its layer (-1: not a layer's). */
const char *caml_model_editor_get_error (CamlModelEditor *self, int *layer);

/* The editor.* actions (a window inserts them too, for its shortcuts). */
GActionGroup *caml_model_editor_get_actions (CamlModelEditor *self);

/* Signals: "model-changed", "selection-changed", "value-corrected"
 * (const char *message) when a value typed into an option was not taken
 * as typed (caml_spin_button_check_range), and "error" (const char
 * *message) when an action was refused (an unknown layer type, an option
 * out of range). */

/* Makes spin say when what is typed into it is not taken as typed (GTK
 * does it silently): text that is not a number keeps the value, a number
 * out of range is clamped. Either way spin shows the "error" style for a
 * moment and report gets a message that says first what was set or kept,
 * then the range: "units set to 65536: must be 1…65536". name: what the
 * field sets. */
typedef void (*CamlSpinReport) (const char *message, gpointer user_data);
/* Whether spin's text is not the display of its value: something typed and
 * not yet taken. gtk_spin_button_update would otherwise re-read a rounded
 * display (0.000015 shown "0.00002") and change the value. */
gboolean caml_spin_button_is_edited (GtkSpinButton *spin);
void  caml_spin_button_check_range (GtkSpinButton *spin, const char *name,
                                    CamlSpinReport report, gpointer user_data);
/* Makes spin a field for any finite number > 0 — what an experiment file
 * takes for the learning rate — instead of its adjustment's range: shown
 * in its shortest exact form, %g-style ("0.01", "1000", "1e-7"), typed in
 * any form g_strtod reads; "+" and "−" step by a tenth of the value's
 * decade. Text that is not a number, or a number ≤ 0, keeps the value, and
 * spin flashes and reports it as caml_spin_button_check_range does. Call
 * it before connecting spin's "value-changed". */
void  caml_spin_button_make_positive (GtkSpinButton *spin, const char *name,
                                      CamlSpinReport report, gpointer user_data);
/* The same for any finite number ≥ 0 (a weight decay, 0 being off): 0 is
 * shown "0", "-0" is taken as 0, and a field made at 0 steps by its
 * adjustment's increments until it has a value > 0. */
void  caml_spin_button_make_nonnegative (GtkSpinButton *spin, const char *name,
                                         CamlSpinReport report, gpointer user_data);
/* Sets such a field to exactly value (gtk_spin_button_set_value ignores a
 * change under 1e-10). */
void  caml_spin_button_set_positive (GtkSpinButton *spin, double value);

/* A layer's options as its row shows them: "units 5, tanh", "size 2,
 * stride = size, valid". */
char       *caml_model_editor_options_text (const CamlLayerSpec *spec);

G_END_DECLS
