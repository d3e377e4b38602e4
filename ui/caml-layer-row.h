/* caml-layer-row.h — one layer of the model stack: type, options, output
 * shape, or the plain-language error that stops the model from building. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define CAML_TYPE_LAYER_ROW (caml_layer_row_get_type ())
G_DECLARE_FINAL_TYPE (CamlLayerRow, caml_layer_row, CAML, LAYER_ROW, GtkListBoxRow)

GtkWidget *caml_layer_row_new (void);
/* shape: "(5)", or NULL when unknown; error: NULL when the layer is fine. */
void       caml_layer_row_update (CamlLayerRow *self, int index, const char *title,
                                  const char *options, const char *shape, const char *error);

G_END_DECLS
