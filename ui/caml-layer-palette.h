/* caml-layer-palette.h — every layer type of the engine's registry, in
 * groups, with a search entry: typing filters the list, Enter adds the
 * first layer shown that fits. A layer the model's end cannot take is
 * greyed, its tooltip saying why (the engine's own shape check).
 *
 * Rows carry "caml-layer" (the type's name) as object data and drag
 * "new:NAME". Activating a row or pressing Enter in the search emits
 * "layer-activated" (const char *name). */
#pragma once

#include <gtk/gtk.h>

#include "caml.h"

G_BEGIN_DECLS

/* The palette's groups, in the order shown. */
typedef enum {
  CAML_LAYER_GROUP_DENSE,
  CAML_LAYER_GROUP_CONVOLUTION,
  CAML_LAYER_GROUP_CONTEXT_AWARE,
  CAML_LAYER_GROUP_TEXT,
  CAML_LAYER_GROUP_SEQUENCE,
  CAML_N_LAYER_GROUPS
} CamlLayerGroup;

/* A layer type's group, read from the registry and the engine's shape
 * inference (no table of names): token input → Text, sequence input →
 * Sequence, other context-aware layers → Context-aware, layers that need an
 * image (or turn one into a vector without weights: Flatten) →
 * Convolution, the rest → Dense. */
CamlLayerGroup caml_layer_group_of (const CamlLayerOps *ops);
const char    *caml_layer_group_title (CamlLayerGroup group);

#define CAML_TYPE_LAYER_PALETTE (caml_layer_palette_get_type ())
G_DECLARE_FINAL_TYPE (CamlLayerPalette, caml_layer_palette, CAML, LAYER_PALETTE, GtkBox)

GtkWidget *caml_layer_palette_new (void);

/* The shape a new layer would take (the model's output), or NULL when it
 * is not known (data loading, a model that does not build): then nothing
 * is greyed. */
void  caml_layer_palette_set_input (CamlLayerPalette *self, const CamlShape *input);
/* The row of layer type name, or NULL. */
GtkWidget  *caml_layer_palette_get_row (CamlLayerPalette *self, const char *name);
/* Why the layer cannot come next (its row's tooltip), or NULL when it can. */
const char *caml_layer_palette_get_reason (CamlLayerPalette *self, const char *name);
/* The layer Enter would add: the first one the search shows that fits, or NULL. */
const char *caml_layer_palette_get_first_match (CamlLayerPalette *self);
GtkWidget  *caml_layer_palette_get_search (CamlLayerPalette *self);
GtkListBox *caml_layer_palette_get_list (CamlLayerPalette *self);

G_END_DECLS
