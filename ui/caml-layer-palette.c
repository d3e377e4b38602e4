/* caml-layer-palette.c — the layer types in groups, searchable, greyed where
 * the model's end cannot take them. */
#include "caml-layer-palette.h"
#include "caml-row-drag.h"

#define ROW_OPS   "caml-ops"     /* object data of a row: its CamlLayerOps */
#define ROW_NAME  "caml-layer"   /* … its type's name (tests find rows by it) */

struct _CamlLayerPalette {
  GtkBox parent_instance;

  /* template widgets */
  GtkSearchEntry *search;
  GtkListBox     *list;

  /* owned */
  char     **words;      /* the search, lowercased, split at spaces */
  GPtrArray *reasons;    /* char * per registry index: why it cannot come next, or NULL */
};

G_DEFINE_FINAL_TYPE (CamlLayerPalette, caml_layer_palette, GTK_TYPE_BOX)

enum { SIGNAL_LAYER_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ---------------------------------------------------------------- groups */

/* Whether the layer, with its defaults, takes input: its output shape and
 * whether it has weights of its own, or the engine's error. */
static gboolean
fits (const CamlLayerOps *ops, const CamlShape *input, CamlShape *out, gboolean *weights,
      GError **error)
{
  CamlLayerSpec spec = { .ops = ops };
  caml_layer_ops_default_options (ops, spec.opt);
  CamlModel *model = caml_model_new_shapes (input, &spec, 1, error);
  if (model == NULL)
    return FALSE;
  if (out != NULL)
    *out = model->layers[0]->out;
  if (weights != NULL)
    *weights = model->n_weights > 0;
  caml_model_free (model);
  return TRUE;
}

CamlLayerGroup
caml_layer_group_of (const CamlLayerOps *ops)
{
  guint accepts = ops->accepts != 0 ? ops->accepts : CAML_ACCEPTS_DENSE;
  if (accepts & CAML_ACCEPTS (CAML_SHAPE_TOKENS))
    return CAML_LAYER_GROUP_TEXT;
  if (accepts & CAML_ACCEPTS (CAML_SHAPE_SEQUENCE))
    return CAML_LAYER_GROUP_SEQUENCE;
  if (ops->context_aware)
    return CAML_LAYER_GROUP_CONTEXT_AWARE;

  /* Probed on a small image and on a vector, with the defaults. */
  CamlShape image = caml_shape_image (2, 12, 12), flat = caml_shape_flat (4), out;
  gboolean weights = FALSE;
  if (!fits (ops, &image, &out, &weights, NULL))
    return CAML_LAYER_GROUP_DENSE;
  if (!fits (ops, &flat, NULL, NULL, NULL))
    return CAML_LAYER_GROUP_CONVOLUTION;
  if (out.ndim == 1 && !weights)   /* Flatten ends the convolutions */
    return CAML_LAYER_GROUP_CONVOLUTION;
  return CAML_LAYER_GROUP_DENSE;
}

const char *
caml_layer_group_title (CamlLayerGroup group)
{
  static const char *const titles[CAML_N_LAYER_GROUPS] = {
    [CAML_LAYER_GROUP_DENSE] = "Dense",
    [CAML_LAYER_GROUP_CONVOLUTION] = "Convolution",
    [CAML_LAYER_GROUP_CONTEXT_AWARE] = "Context-aware",
    [CAML_LAYER_GROUP_TEXT] = "Text",
    [CAML_LAYER_GROUP_SEQUENCE] = "Sequence",
  };
  g_return_val_if_fail (group >= 0 && group < CAML_N_LAYER_GROUPS, "");
  return titles[group];
}

static CamlLayerGroup
row_group (GtkListBoxRow *row)
{
  return (CamlLayerGroup) GPOINTER_TO_INT (g_object_get_data (G_OBJECT (row), "caml-group"));
}

/* ---------------------------------------------------------- search, headers */

static gboolean
row_matches (GtkListBoxRow *row, gpointer data)
{
  CamlLayerPalette *self = data;
  const char *text = g_object_get_data (G_OBJECT (row), "caml-search");
  for (int i = 0; self->words != NULL && self->words[i] != NULL; i++)
    if (*self->words[i] != '\0' && strstr (text, self->words[i]) == NULL)
      return FALSE;
  return TRUE;
}

/* A group's title above its first row shown. */
static void
update_header (GtkListBoxRow *row, GtkListBoxRow *before, gpointer data)
{
  CamlLayerGroup group = row_group (row);
  if (before != NULL && row_group (before) == group)
    {
      gtk_list_box_row_set_header (row, NULL);
      return;
    }
  GtkWidget *header = gtk_list_box_row_get_header (row);
  if (header == NULL)
    {
      header = gtk_label_new (caml_layer_group_title (group));
      gtk_label_set_xalign (GTK_LABEL (header), 0);
      gtk_widget_add_css_class (header, "palette-group");
      gtk_list_box_row_set_header (row, header);
    }
}

static void
on_search_changed (GtkSearchEntry *entry, CamlLayerPalette *self)
{
  g_autofree char *lower = g_utf8_strdown (gtk_editable_get_text (GTK_EDITABLE (entry)), -1);
  g_strfreev (self->words);
  self->words = g_strsplit (g_strstrip (lower), " ", -1);
  gtk_list_box_invalidate_filter (self->list);
  gtk_list_box_invalidate_headers (self->list);
}

static GtkListBoxRow *
first_match (CamlLayerPalette *self)
{
  GtkListBoxRow *row;
  for (int i = 0; (row = gtk_list_box_get_row_at_index (self->list, i)) != NULL; i++)
    if (row_matches (row, self) && gtk_widget_get_sensitive (GTK_WIDGET (row)))
      return row;
  return NULL;
}

const char *
caml_layer_palette_get_first_match (CamlLayerPalette *self)
{
  GtkListBoxRow *row = first_match (self);
  return row != NULL ? g_object_get_data (G_OBJECT (row), ROW_NAME) : NULL;
}

static void
on_search_activate (GtkSearchEntry *entry, CamlLayerPalette *self)
{
  GtkListBoxRow *row = first_match (self);
  if (row != NULL)
    g_signal_emit (self, signals[SIGNAL_LAYER_ACTIVATED], 0,
                   g_object_get_data (G_OBJECT (row), ROW_NAME));
  else
    gtk_widget_error_bell (GTK_WIDGET (entry));
}

static void
on_stop_search (GtkSearchEntry *entry, CamlLayerPalette *self)
{
  gtk_editable_set_text (GTK_EDITABLE (entry), "");
}

static void
on_row_activated (GtkListBox *list, GtkListBoxRow *row, CamlLayerPalette *self)
{
  g_signal_emit (self, signals[SIGNAL_LAYER_ACTIVATED], 0,
                 g_object_get_data (G_OBJECT (row), ROW_NAME));
}

/* Down from the search goes to the first layer shown. */
static gboolean
on_search_key (GtkEventControllerKey *key, guint keyval, guint keycode, GdkModifierType state,
               CamlLayerPalette *self)
{
  if (keyval != GDK_KEY_Down && keyval != GDK_KEY_KP_Down)
    return FALSE;
  GtkListBoxRow *row = first_match (self);
  if (row != NULL)
    gtk_widget_grab_focus (GTK_WIDGET (row));
  return row != NULL;
}

/* Tab leaves the list, to what takes focus after the palette (the model
 * list): a GtkListBox takes Tab from row to row, which made the palette 19
 * Tab stops. Up and Down still move between its rows, Enter adds the layer. */
static gboolean
on_list_key (GtkEventControllerKey *key, guint keyval, guint keycode, GdkModifierType state,
             CamlLayerPalette *self)
{
  gboolean backward = keyval == GDK_KEY_ISO_Left_Tab
                      || (keyval == GDK_KEY_Tab && (state & GDK_SHIFT_MASK));
  if (state & (GDK_CONTROL_MASK | GDK_ALT_MASK))
    return FALSE;
  if (backward)
    {
      /* From the first row, the window's Shift+Tab leaves the list. */
      GtkListBoxRow *first = gtk_list_box_get_row_at_index (self->list, 0);
      if (first != NULL)
        gtk_widget_grab_focus (GTK_WIDGET (first));
      return FALSE;
    }
  if (keyval != GDK_KEY_Tab)
    return FALSE;
  for (GtkWidget *w = gtk_widget_get_next_sibling (GTK_WIDGET (self)); w != NULL;
       w = gtk_widget_get_next_sibling (w))
    if (gtk_widget_child_focus (w, GTK_DIR_TAB_FORWARD))
      return TRUE;
  return FALSE;
}

/* ----------------------------------------------------------------- drag */

/* A palette row carries "new:NAME"; a greyed one is not dragged. */
static char *
palette_row_payload (GtkWidget *row)
{
  if (!gtk_widget_is_sensitive (row))
    return NULL;   /* locked, or the layer does not fit */
  return g_strdup_printf ("new:%s", (const char *) g_object_get_data (G_OBJECT (row), ROW_NAME));
}

/* ------------------------------------------------------------------- rows */

static char *
available_tip (const CamlLayerOps *ops)
{
  return g_strdup_printf ("%s (\"%s\"): %s. Click or press Enter to add it to the end of "
                          "the model, or drag it to a place in the model.", ops->title,
                          ops->name, ops->description);
}

static void
fill (CamlLayerPalette *self)
{
  int n_types = 0;
  const CamlLayerOps *const *types = caml_layer_registry (&n_types);

  /* Group by group, registry order within each. */
  for (int group = 0; group < CAML_N_LAYER_GROUPS; group++)
    for (int i = 0; i < n_types; i++)
      {
        const CamlLayerOps *ops = types[i];
        if ((int) caml_layer_group_of (ops) != group)
          continue;
        GtkWidget *row = gtk_list_box_row_new ();
        GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
        GtkWidget *title = gtk_label_new (ops->title);
        GtkWidget *desc = gtk_label_new (ops->description);
        g_autofree char *tip = available_tip (ops);
        g_autofree char *search = g_strdup_printf ("%s %s %s %s", ops->title, ops->name,
                                                   ops->description,
                                                   caml_layer_group_title (group));

        gtk_widget_add_css_class (row, "palette-row");
        gtk_widget_add_css_class (title, "layer-title");
        gtk_widget_add_css_class (desc, "palette-description");
        gtk_label_set_xalign (GTK_LABEL (title), 0);
        gtk_label_set_xalign (GTK_LABEL (desc), 0);
        gtk_label_set_ellipsize (GTK_LABEL (desc), PANGO_ELLIPSIZE_END);
        gtk_widget_set_hexpand (desc, TRUE);
        gtk_widget_set_margin_start (box, 8);
        gtk_widget_set_margin_end (box, 8);
        gtk_widget_set_margin_top (box, 5);
        gtk_widget_set_margin_bottom (box, 5);
        gtk_box_append (GTK_BOX (box), title);
        gtk_box_append (GTK_BOX (box), desc);
        gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
        gtk_widget_set_tooltip_text (row, tip);
        g_object_set_data (G_OBJECT (row), ROW_OPS, (gpointer) ops);
        g_object_set_data (G_OBJECT (row), ROW_NAME, (gpointer) ops->name);
        g_object_set_data (G_OBJECT (row), "caml-index", GINT_TO_POINTER (i));
        g_object_set_data (G_OBJECT (row), "caml-group", GINT_TO_POINTER (group));
        g_object_set_data_full (G_OBJECT (row), "caml-search", g_utf8_strdown (search, -1),
                                g_free);
        gtk_accessible_update_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                        ops->title, -1);

        caml_row_drag_add (row, GDK_ACTION_COPY, palette_row_payload);
        gtk_list_box_append (self->list, row);
      }
}

/* "layer 0 (embedding) takes token ids, …" / "layer 0 (conv2d), input shape
 * (2): …" → what follows the layer's name: the tooltip names the layer. */
static const char *
after_layer_name (const char *message)
{
  const char *close = g_str_has_prefix (message, "layer ") ? strchr (message, ')') : NULL;
  if (close == NULL)
    return message;
  close++;
  if (g_str_has_prefix (close, ", input shape "))
    {
      const char *colon = strstr (close, "): ");
      return colon != NULL ? colon + 3 : close + 2;
    }
  return *close == ' ' ? close + 1 : close;
}

void
caml_layer_palette_set_input (CamlLayerPalette *self, const CamlShape *input)
{
  GtkListBoxRow *row;
  g_autofree char *where = input != NULL ? caml_shape_to_string (input) : NULL;

  for (int i = 0; (row = gtk_list_box_get_row_at_index (self->list, i)) != NULL; i++)
    {
      const CamlLayerOps *ops = g_object_get_data (G_OBJECT (row), ROW_OPS);
      int index = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (row), "caml-index"));
      g_autoptr (GError) error = NULL;
      char *reason = NULL;

      if (input != NULL && !fits (ops, input, NULL, NULL, &error))
        {
          const char *why = after_layer_name (error->message);
          gboolean stop = g_str_has_suffix (why, ".");
          /* "takes token ids, but its input is (1)" names the shape itself */
          reason = g_str_has_prefix (why, "takes ")
                   ? g_strdup_printf ("%s cannot come next: it %s%s", ops->title, why,
                                      stop ? "" : ".")
                   : g_strdup_printf ("%s cannot come next (the model ends with %s): %s%s",
                                      ops->title, where, why, stop ? "" : ".");
        }
      g_free (self->reasons->pdata[index]);
      self->reasons->pdata[index] = reason;
      gtk_widget_set_sensitive (GTK_WIDGET (row), reason == NULL);
      g_autofree char *tip = reason != NULL ? g_strdup (reason) : available_tip (ops);
      gtk_widget_set_tooltip_text (GTK_WIDGET (row), tip);
      gtk_accessible_update_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
                                      tip, -1);
    }
}

GtkWidget *
caml_layer_palette_get_row (CamlLayerPalette *self, const char *name)
{
  GtkListBoxRow *row;
  for (int i = 0; (row = gtk_list_box_get_row_at_index (self->list, i)) != NULL; i++)
    if (g_strcmp0 (g_object_get_data (G_OBJECT (row), ROW_NAME), name) == 0)
      return GTK_WIDGET (row);
  return NULL;
}

const char *
caml_layer_palette_get_reason (CamlLayerPalette *self, const char *name)
{
  GtkWidget *row = caml_layer_palette_get_row (self, name);
  if (row == NULL)
    return NULL;
  return self->reasons->pdata[GPOINTER_TO_INT (g_object_get_data (G_OBJECT (row),
                                                                   "caml-index"))];
}

GtkWidget *
caml_layer_palette_get_search (CamlLayerPalette *self)
{
  return GTK_WIDGET (self->search);
}

GtkListBox *
caml_layer_palette_get_list (CamlLayerPalette *self)
{
  return self->list;
}

/* -------------------------------------------------------------- lifecycle */

static void
caml_layer_palette_dispose (GObject *object)
{
  CamlLayerPalette *self = CAML_LAYER_PALETTE (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), CAML_TYPE_LAYER_PALETTE);
  g_clear_pointer (&self->words, g_strfreev);
  g_clear_pointer (&self->reasons, g_ptr_array_unref);
  G_OBJECT_CLASS (caml_layer_palette_parent_class)->dispose (object);
}

static void
caml_layer_palette_class_init (CamlLayerPaletteClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = caml_layer_palette_dispose;
  signals[SIGNAL_LAYER_ACTIVATED] =
    g_signal_new ("layer-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                  NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/caml/Workbench/ui/caml-layer-palette.ui");
  gtk_widget_class_bind_template_child (widget_class, CamlLayerPalette, search);
  gtk_widget_class_bind_template_child (widget_class, CamlLayerPalette, list);
  gtk_widget_class_bind_template_callback (widget_class, on_search_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_search_activate);
  gtk_widget_class_bind_template_callback (widget_class, on_stop_search);
  gtk_widget_class_bind_template_callback (widget_class, on_row_activated);
}

static void
caml_layer_palette_init (CamlLayerPalette *self)
{
  int n_types = 0;

  gtk_widget_init_template (GTK_WIDGET (self));
  caml_layer_registry (&n_types);
  self->reasons = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_set_size (self->reasons, n_types);
  gtk_list_box_set_filter_func (self->list, row_matches, self, NULL);
  gtk_list_box_set_header_func (self->list, update_header, NULL, NULL);
  fill (self);

  GtkWidget *none = gtk_label_new ("No layer type matches the search.");
  gtk_widget_add_css_class (none, "dim-label");
  gtk_widget_set_margin_top (none, 12);
  gtk_widget_set_margin_bottom (none, 12);
  gtk_list_box_set_placeholder (self->list, none);

  GtkEventController *key = gtk_event_controller_key_new ();
  g_signal_connect (key, "key-pressed", G_CALLBACK (on_search_key), self);
  gtk_widget_add_controller (GTK_WIDGET (self->search), key);
  key = gtk_event_controller_key_new ();
  gtk_event_controller_set_propagation_phase (key, GTK_PHASE_CAPTURE);
  g_signal_connect (key, "key-pressed", G_CALLBACK (on_list_key), self);
  gtk_widget_add_controller (GTK_WIDGET (self->list), key);
  /* Typing on a row goes to the search. */
  gtk_search_entry_set_key_capture_widget (self->search, GTK_WIDGET (self->list));
}

GtkWidget *
caml_layer_palette_new (void)
{
  return g_object_new (CAML_TYPE_LAYER_PALETTE, NULL);
}
