/* caml-model-editor.c — palette, model stack, inspector, undo/redo.
 *
 * The model is a GArray of CamlLayerSpec. After every edit the editor asks
 * the engine to build it (caml_model_new on the data's input shape): when
 * that fails, models of growing prefixes find the first layer that does not
 * fit, and that row shows the engine's message. Undo/redo keep snapshots of
 * the whole array (models are a handful of layers). */
#include "caml-model-editor.h"
#include "caml-row-drag.h"
#include "caml-layer-palette.h"
#include "caml-layer-row.h"

#include <float.h>
#include <math.h>

#define MAX_UNDO 200
#define ERROR_FLASH_MS 1500

struct _CamlModelEditor {
  GtkBox parent_instance;

  /* template widgets */
  CamlLayerPalette *palette;
  GtkListBox *stack;
  GtkLabel   *summary_label;
  GtkLabel   *inspector_title;
  GtkGrid    *inspector;

  gboolean   back_tab;        /* a Shift+Tab is being handled (on_palette_enter) */
  gboolean   back_tab_to_first; /* … and it entered the palette */
  guint      back_tab_idle;

  /* owned */
  GArray    *layers;          /* CamlLayerSpec */
  GPtrArray *undo;            /* GArray of CamlLayerSpec, oldest first */
  GPtrArray *redo;
  int        coalesce_layer;  /* last option edit, merged into one undo step */
  char      *coalesce_key;
  GPtrArray *shapes;          /* char *, per layer, NULL when unknown */
  char      *error;           /* first error, or NULL */
  int        error_layer;
  size_t     n_weights;
  CamlShape  end;             /* the model's output shape, where a new layer goes … */
  gboolean   has_end;         /* … when the whole model builds */
  CamlShape  input;
  gboolean   has_input;
  int        want_outputs;
  char      *data_name;
  char      *data_error;
  int        selected;        /* -1: none */
  GSimpleActionGroup *actions; /* editor.*: the edits, undo and redo */
  gboolean   locked;          /* caml_model_editor_set_locked */
  gboolean   syncing;         /* programmatic widget changes */
  GtkWidget *option_widgets[CAML_MAX_OPTIONS];
};

G_DEFINE_FINAL_TYPE (CamlModelEditor, caml_model_editor, GTK_TYPE_BOX)

enum {
  SIGNAL_MODEL_CHANGED,
  SIGNAL_SELECTION_CHANGED,
  SIGNAL_VALUE_CORRECTED,
  SIGNAL_ERROR,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

static GArray *
copy_layers (GArray *layers)
{
  GArray *copy = g_array_sized_new (FALSE, TRUE, sizeof (CamlLayerSpec), layers->len);
  g_array_append_vals (copy, layers->data, layers->len);
  return copy;
}

static CamlLayerSpec *
layer_at (CamlModelEditor *self, int i)
{
  return &g_array_index (self->layers, CamlLayerSpec, i);
}

/* ------------------------------------------------------------ validation */

/* "layer 2 (dense), input shape (5): …" → "…": the row already says which. */
static const char *
strip_layer_prefix (const char *message)
{
  if (!g_str_has_prefix (message, "layer "))
    return message;
  const char *close = strchr (message, ')');
  if (close == NULL)
    return message;
  close++;
  if (g_str_has_prefix (close, ": ") || g_str_has_prefix (close, ", "))
    return close + 2;
  return message;
}

static void
validate (CamlModelEditor *self)
{
  int n = (int) self->layers->len;
  const CamlLayerSpec *specs = (const CamlLayerSpec *) self->layers->data;
  g_autoptr (GError) error = NULL;

  g_ptr_array_set_size (self->shapes, 0);
  for (int i = 0; i < n; i++)
    g_ptr_array_add (self->shapes, NULL);
  g_clear_pointer (&self->error, g_free);
  self->error_layer = -1;
  self->n_weights = 0;
  self->has_end = FALSE;

  if (!self->has_input && self->data_error == NULL)
    {
      self->error = g_strdup_printf ("waiting for the %s data to load",
                                     self->data_name ? self->data_name : "");
      return;
    }
  if (!self->has_input)
    {
      self->error = g_strdup_printf ("the %s data could not be read: %s",
                                     self->data_name ? self->data_name : "",
                                     self->data_error);
      return;
    }
  if (n == 0)
    {
      self->end = self->input;
      self->has_end = TRUE;
      self->error = g_strdup ("the model has no layers: click a layer type above to add one");
      return;
    }

  /* Shapes only: no weights to allocate and initialise on the main thread. */
  CamlModel *model = caml_model_new_shapes (&self->input, specs, n, &error);
  int good = n;
  if (model == NULL)
    {
      /* The first prefix that fails ends at the offending layer. */
      good = 0;
      for (int k = 1; k <= n; k++)
        {
          g_autoptr (GError) local = NULL;
          CamlModel *prefix = caml_model_new_shapes (&self->input, specs, k, &local);
          if (prefix == NULL)
            {
              g_clear_error (&error);
              error = g_steal_pointer (&local);
              good = k - 1;
              break;
            }
          caml_model_free (prefix);
        }
      self->error_layer = good < n ? good : n - 1;
      self->error = g_strdup (strip_layer_prefix (error->message));
      if (good > 0)
        model = caml_model_new_shapes (&self->input, specs, good, NULL);
    }
  if (model != NULL)
    {
      for (int i = 0; i < model->n_layers; i++)
        self->shapes->pdata[i] = caml_shape_to_string (&model->layers[i]->out);
      self->n_weights = model->n_weights;
      if (good == n)
        {
          self->end = *caml_model_output_shape (model);
          self->has_end = TRUE;
        }
      if (good == n && self->want_outputs > 0)
        {
          size_t outputs = caml_shape_size (caml_model_output_shape (model));
          /* Two classes also fit one output: a logit under the sigmoid loss. */
          if ((int) outputs != self->want_outputs
              && !(self->want_outputs == 2 && outputs == 1))
            {
              self->error_layer = n - 1;
              self->error = g_strdup_printf ("the model ends with %zu output%s but the %s data "
                                             "needs %d: make the last layer %d wide",
                                             outputs, outputs == 1 ? "" : "s",
                                             self->data_name ? self->data_name : "",
                                             self->want_outputs, self->want_outputs);
            }
        }
      caml_model_free (model);
    }
}

/* ------------------------------------------------------------------ rows */

char *
caml_model_editor_options_text (const CamlLayerSpec *spec)
{
  GString *s = g_string_new (NULL);
  for (int o = 0; o < spec->ops->n_options; o++)
    {
      const CamlOptionSpec *opt = &spec->ops->options[o];
      double v = spec->opt[o];
      if (s->len > 0)
        g_string_append (s, ", ");
      switch (opt->type)
        {
        case CAML_OPT_ENUM:
          g_string_append (s, opt->choices[(int) v]);
          break;
        case CAML_OPT_BOOL:
          g_string_append_printf (s, "%s%s", v != 0 ? "" : "no ", opt->key);
          break;
        default:
          if (v == 0 && opt->zero_means != NULL)
            g_string_append_printf (s, "%s = %s", opt->key, opt->zero_means);   /* "stride = size" */
          else
            g_string_append_printf (s, "%s %g", opt->key, v);
          break;
        }
    }
  return g_string_free (s, FALSE);
}

static void update_inspector (CamlModelEditor *self);
static void add_drag_source (GtkWidget *row);

static void
update_rows (CamlModelEditor *self)
{
  int n = (int) self->layers->len;
  int count = 0;

  self->syncing = TRUE;
  for (GtkWidget *w = gtk_widget_get_first_child (GTK_WIDGET (self->stack)); w != NULL;
       w = gtk_widget_get_next_sibling (w))
    if (CAML_IS_LAYER_ROW (w))
      count++;
  while (count > n)
    {
      GtkListBoxRow *last = gtk_list_box_get_row_at_index (self->stack, count - 1);
      gtk_list_box_remove (self->stack, GTK_WIDGET (last));
      count--;
    }
  while (count < n)
    {
      GtkWidget *row = caml_layer_row_new ();
      add_drag_source (row);
      gtk_list_box_append (self->stack, row);
      count++;
    }
  for (int i = 0; i < n; i++)
    {
      const CamlLayerSpec *spec = layer_at (self, i);
      CamlLayerRow *row = CAML_LAYER_ROW (gtk_list_box_get_row_at_index (self->stack, i));
      g_autofree char *opts = caml_model_editor_options_text (spec);
      caml_layer_row_update (row, i, spec->ops->title, opts, self->shapes->pdata[i],
                             i == self->error_layer ? self->error : NULL);
    }
  if (self->selected >= 0 && self->selected < n)
    gtk_list_box_select_row (self->stack, gtk_list_box_get_row_at_index (self->stack,
                                                                         self->selected));
  else
    gtk_list_box_unselect_all (self->stack);

  /* The header has room for a few words: the gist, the whole message in
   * its tooltip (a long data error would show only its end). */
  if (self->error != NULL && self->error_layer < 0)
    {
      const char *data = self->data_name != NULL ? self->data_name : "";
      g_autofree char *text = self->has_input ? g_strdup ("no layers yet")
                              : self->data_error == NULL
                              ? g_strdup_printf ("waiting for the %s data", data)
                              : g_strdup_printf ("no %s data", data);
      gtk_label_set_text (self->summary_label, text);
    }
  else if (self->error != NULL)
    {
      g_autofree char *text = g_strdup_printf ("layer %d does not fit", self->error_layer);
      gtk_label_set_text (self->summary_label, text);
    }
  else
    {
      g_autofree char *in = caml_shape_to_string (&self->input);
      g_autofree char *text = g_strdup_printf ("%s → %s, %'zu weights", in,
                                               n > 0 ? (char *) self->shapes->pdata[n - 1] : "",
                                               self->n_weights);
      gtk_label_set_text (self->summary_label, text);
    }
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->summary_label),
                               self->error != NULL ? self->error
                               : gtk_label_get_text (self->summary_label));
  caml_layer_palette_set_input (self->palette, self->has_end ? &self->end : NULL);
  self->syncing = FALSE;
}

static void update_actions (CamlModelEditor *self);

/* After any edit: check, show, tell the window. */
static void
model_changed (CamlModelEditor *self, gboolean structure)
{
  validate (self);
  update_rows (self);
  if (structure)
    update_inspector (self);
  update_actions (self);
  g_signal_emit (self, signals[SIGNAL_MODEL_CHANGED], 0);
}

/* ------------------------------------------------- typed values, checked */

typedef struct {
  char           *name;
  CamlSpinReport  report;
  gpointer        user_data;
} RangeCheck;

static void
range_check_free (gpointer p, GClosure *closure)
{
  RangeCheck *check = p;
  g_free (check->name);
  g_free (check);
}

static gboolean
end_error_flash (gpointer data)
{
  g_object_set_data (G_OBJECT (data), "caml-error-flash", NULL);
  gtk_widget_remove_css_class (GTK_WIDGET (data), "error");
  return G_SOURCE_REMOVE;
}

static void
flash_error (GtkWidget *widget)
{
  guint id = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (widget), "caml-error-flash"));
  if (id != 0)
    g_source_remove (id);
  gtk_widget_add_css_class (widget, "error");
  id = g_timeout_add_full (G_PRIORITY_DEFAULT, ERROR_FLASH_MS, end_error_flash,
                           g_object_ref (widget), g_object_unref);
  g_object_set_data (G_OBJECT (widget), "caml-error-flash", GUINT_TO_POINTER (id));
}

static char *
format_value (GtkSpinButton *spin, double value)
{
  return gtk_spin_button_get_digits (spin) == 0 ? g_strdup_printf ("%.0f", value)
                                                : g_strdup_printf ("%g", value);
}

/* The spin button's "input": what GTK's own parsing does (a number, then
 * clamped to the range), saying so when the text was not taken as typed. */
static int
on_checked_input (GtkSpinButton *spin, double *value, RangeCheck *check)
{
  GtkAdjustment *adj = gtk_spin_button_get_adjustment (spin);
  double lower = gtk_adjustment_get_lower (adj), upper = gtk_adjustment_get_upper (adj);
  g_autofree char *text = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (spin))));
  g_autofree char *lo = format_value (spin, lower), *hi = format_value (spin, upper);
  g_autofree char *message = NULL;
  char *end = NULL;
  double typed = g_strtod (text, &end);

  if (end == text || *end != '\0' || !isfinite (typed))
    {
      *value = gtk_adjustment_get_value (adj);
      g_autofree char *kept = format_value (spin, *value);
      /* What was kept first: a narrow status line cuts the end. */
      message = *text == '\0'
                ? g_strdup_printf ("%s kept at %s: no number typed (%s…%s)", check->name, kept,
                                   lo, hi)
                : g_strdup_printf ("%s kept at %s: \"%s\" is not a number (%s…%s)",
                                   check->name, kept, text, lo, hi);
    }
  else if (typed < lower || typed > upper)
    {
      *value = CLAMP (typed, lower, upper);
      g_autofree char *set = format_value (spin, *value);
      message = g_strdup_printf ("%s set to %s: must be %s…%s", check->name, set, lo, hi);
    }
  else
    {
      *value = typed;
      return TRUE;
    }
  flash_error (GTK_WIDGET (spin));
  check->report (message, check->user_data);
  return TRUE;
}

/* ------------------------------ a field for any number > 0 (or ≥ 0) */

#define POSITIVE_KEY "caml-positive"   /* object data: a PositiveField */

typedef struct {
  RangeCheck check;
  double     last;       /* the value at the last value-changed */
  gboolean   zero;       /* 0 is taken too: a field for any number ≥ 0 */
} PositiveField;

static void
positive_field_free (gpointer p, GClosure *closure)
{
  PositiveField *field = p;
  g_free (field->check.name);
  g_free (field);
}

/* "+" and "−" step by a tenth of the value's decade (0.01 → 0.011, 1000 →
 * 1100, 0.01 − 0.001 → 0.009 → 0.0089), Page Up/Down by the decade. */
static void
set_positive_increments (GtkSpinButton *spin, double value)
{
  double decade = pow (10.0, floor (log10 (value) + 1e-9));
  if (isfinite (decade) && decade > 0)
    gtk_spin_button_set_increments (spin, decade / 10, decade);
}

static int
on_positive_output (GtkSpinButton *spin, gpointer unused)
{
  g_autofree char *text = caml_format_positive (gtk_spin_button_get_value (spin));
  if (!g_str_equal (text, gtk_editable_get_text (GTK_EDITABLE (spin))))
    gtk_editable_set_text (GTK_EDITABLE (spin), text);
  return TRUE;
}

static int
on_positive_input (GtkSpinButton *spin, double *value, PositiveField *field)
{
  GtkAdjustment *adj = gtk_spin_button_get_adjustment (spin);
  g_autofree char *text = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (spin))));
  char *end = NULL;
  double typed = g_strtod (text, &end);
  double now = gtk_adjustment_get_value (adj);

  const char *range = field->zero ? "≥ 0" : "> 0";

  if (end != text && *end == '\0' && isfinite (typed)
      && (typed > 0 || (field->zero && typed == 0)))
    {
      typed += 0.0;   /* "-0" is 0 */
      /* GTK takes no change under 1e-10 (its EPSILON): 2e-11 typed over
       * 1e-11 would be shown and not kept. */
      if (typed != now && fabs (typed - now) <= 1e-10)
        gtk_adjustment_set_value (adj, typed);
      *value = typed;
      return TRUE;
    }
  *value = now;
  g_autofree char *kept = caml_format_positive (now);
  g_autofree char *message =
    *text == '\0' || end == text || *end != '\0' || !isfinite (typed)
    ? (*text == '\0' ? g_strdup_printf ("%s kept at %s: no number typed (%s)",
                                         field->check.name, kept, range)
       : g_strdup_printf ("%s kept at %s: \"%s\" is not a number (%s)", field->check.name,
                          kept, text, range))
    : g_strdup_printf ("%s kept at %s: must be %s", field->check.name, kept, range);
  flash_error (GTK_WIDGET (spin));
  field->check.report (message, field->check.user_data);
  return TRUE;
}

/* Connected first: a step of the arrows lands on a float sum (0.01 + 0.001
 * = 0.011000000000000001); it is rounded to 15 significant digits, which
 * any value typed with fewer keeps. A value set or typed is left as it is. */
static void
on_positive_changed (GtkSpinButton *spin, PositiveField *field)
{
  double value = gtk_spin_button_get_value (spin);
  double step = 0, page = 0;

  gtk_spin_button_get_increments (spin, &step, &page);
  double moved = fabs (value - field->last);
  gboolean stepped = fabs (moved - step) <= 1e-9 * step || fabs (moved - page) <= 1e-9 * page;
  field->last = value;
  if (stepped)
    {
      char buf[40];
      g_snprintf (buf, sizeof buf, "%.15g", value);
      double rounded = g_strtod (buf, NULL);
      if (rounded != value && (rounded > 0 || (field->zero && rounded == 0)))
        {
          field->last = rounded;
          gtk_adjustment_set_value (gtk_spin_button_get_adjustment (spin), rounded);
          return;   /* the nested value-changed set the increments */
        }
    }
  set_positive_increments (spin, value);
}

static void
make_number_field (GtkSpinButton *spin, const char *name, gboolean zero, CamlSpinReport report,
                   gpointer user_data)
{
  PositiveField *field = g_new0 (PositiveField, 1);
  double value = gtk_spin_button_get_value (spin);

  g_return_if_fail (GTK_IS_SPIN_BUTTON (spin) && name != NULL && report != NULL);
  field->check.name = g_strdup (name);
  field->check.report = report;
  field->check.user_data = user_data;
  field->last = value;
  field->zero = zero;
  /* Typed as "1e-5" too: a numeric field would drop the "e". */
  gtk_spin_button_set_numeric (spin, FALSE);
  gtk_spin_button_set_range (spin, zero ? 0.0 : DBL_TRUE_MIN, DBL_MAX);
  gtk_spin_button_set_update_policy (spin, GTK_UPDATE_ALWAYS);
  g_object_set_data (G_OBJECT (spin), POSITIVE_KEY, field);
  g_signal_connect (spin, "output", G_CALLBACK (on_positive_output), NULL);
  g_signal_connect_data (spin, "input", G_CALLBACK (on_positive_input), field,
                         positive_field_free, 0);
  g_signal_connect (spin, "value-changed", G_CALLBACK (on_positive_changed), field);
  /* (At 0, a field for ≥ 0 keeps its adjustment's increments.) */
  if (value > 0 || !zero)
    set_positive_increments (spin, value > 0 ? value : 1.0);
  on_positive_output (spin, NULL);
}

void
caml_spin_button_make_positive (GtkSpinButton *spin, const char *name, CamlSpinReport report,
                                gpointer user_data)
{
  make_number_field (spin, name, FALSE, report, user_data);
}

void
caml_spin_button_make_nonnegative (GtkSpinButton *spin, const char *name,
                                   CamlSpinReport report, gpointer user_data)
{
  make_number_field (spin, name, TRUE, report, user_data);
}

void
caml_spin_button_set_positive (GtkSpinButton *spin, double value)
{
  GtkAdjustment *adj = gtk_spin_button_get_adjustment (spin);

  PositiveField *field = g_object_get_data (G_OBJECT (spin), POSITIVE_KEY);

  g_return_if_fail (field != NULL && (value > 0 || (field->zero && value == 0)));
  field->last = value;   /* set, not stepped: kept exactly */
  /* The adjustment itself: gtk_spin_button_set_value ignores a change of
   * less than 1e-10, and clamps nothing here that the range does not. */
  gtk_adjustment_set_value (adj, value);
}

gboolean
caml_spin_button_is_edited (GtkSpinButton *spin)
{
  if (g_object_get_data (G_OBJECT (spin), POSITIVE_KEY) != NULL)
    {
      g_autofree char *shown = caml_format_positive (gtk_spin_button_get_value (spin));
      return !g_str_equal (gtk_editable_get_text (GTK_EDITABLE (spin)), shown);
    }
  /* How GTK 4.8 shows a value (gtk_spin_button_format_for_value): fixed
   * digits, no "-0". */
  double value = gtk_spin_button_get_value (spin);
  int digits = (int) gtk_spin_button_get_digits (spin);
  g_autofree char *shown = g_strdup_printf ("%0.*f", digits, value);
  g_autofree char *zero = g_strdup_printf ("%0.*f", digits, 0.0);
  const char *text = gtk_editable_get_text (GTK_EDITABLE (spin));
  if (shown[0] == '-' && g_str_equal (shown + 1, zero))
    return !g_str_equal (text, zero);
  return !g_str_equal (text, shown);
}

void
caml_spin_button_check_range (GtkSpinButton *spin, const char *name, CamlSpinReport report,
                              gpointer user_data)
{
  RangeCheck *check = g_new0 (RangeCheck, 1);

  g_return_if_fail (GTK_IS_SPIN_BUTTON (spin) && name != NULL && report != NULL);
  check->name = g_strdup (name);
  check->report = report;
  check->user_data = user_data;
  g_signal_connect_data (spin, "input", G_CALLBACK (on_checked_input), check,
                         range_check_free, 0);
}

static void
report_value_corrected (const char *message, gpointer user_data)
{
  g_signal_emit (user_data, signals[SIGNAL_VALUE_CORRECTED], 0, message);
}

/* ------------------------------------------------------------- inspector */

static void
activate_option (GtkWidget *widget, const char *key, double value)
{
  CamlModelEditor *self = CAML_MODEL_EDITOR (gtk_widget_get_ancestor (widget,
                                                                      CAML_TYPE_MODEL_EDITOR));
  if (self == NULL || self->syncing)
    return;
  gtk_widget_activate_action (widget, "editor.layer-option", "(sd)", key, value);
}

static void
on_spin_changed (GtkSpinButton *spin, gpointer unused)
{
  activate_option (GTK_WIDGET (spin), g_object_get_data (G_OBJECT (spin), "caml-key"),
                   gtk_spin_button_get_value (spin));
}

static void
on_drop_down_changed (GtkDropDown *drop, GParamSpec *pspec, gpointer unused)
{
  activate_option (GTK_WIDGET (drop), g_object_get_data (G_OBJECT (drop), "caml-key"),
                   (double) gtk_drop_down_get_selected (drop));
}

static void
on_switch_changed (GtkSwitch *sw, GParamSpec *pspec, gpointer unused)
{
  activate_option (GTK_WIDGET (sw), g_object_get_data (G_OBJECT (sw), "caml-key"),
                   gtk_switch_get_active (sw) ? 1.0 : 0.0);
}

static void
sync_inspector_values (CamlModelEditor *self)
{
  if (self->selected < 0 || self->selected >= (int) self->layers->len)
    return;
  const CamlLayerSpec *spec = layer_at (self, self->selected);
  self->syncing = TRUE;
  for (int o = 0; o < spec->ops->n_options && o < CAML_MAX_OPTIONS; o++)
    {
      GtkWidget *w = self->option_widgets[o];
      if (w == NULL)
        continue;
      if (GTK_IS_SPIN_BUTTON (w))
        {
          if (gtk_spin_button_get_value (GTK_SPIN_BUTTON (w)) != spec->opt[o])
            gtk_spin_button_set_value (GTK_SPIN_BUTTON (w), spec->opt[o]);
        }
      else if (GTK_IS_DROP_DOWN (w))
        gtk_drop_down_set_selected (GTK_DROP_DOWN (w), (guint) spec->opt[o]);
      else if (GTK_IS_SWITCH (w))
        gtk_switch_set_active (GTK_SWITCH (w), spec->opt[o] != 0.0);
    }
  self->syncing = FALSE;
}

static void
update_inspector (CamlModelEditor *self)
{
  GtkWidget *child;

  self->syncing = TRUE;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->inspector))) != NULL)
    gtk_grid_remove (self->inspector, child);
  memset (self->option_widgets, 0, sizeof self->option_widgets);

  if (self->selected < 0 || self->selected >= (int) self->layers->len)
    {
      GtkWidget *hint = gtk_label_new (self->layers->len > 0
                                       ? "Select a layer to edit its options."
                                       : "Add a layer from the palette above.");
      gtk_widget_add_css_class (hint, "dim-label");
      gtk_label_set_xalign (GTK_LABEL (hint), 0);
      gtk_grid_attach (self->inspector, hint, 0, 0, 2, 1);
      gtk_label_set_text (self->inspector_title, "Inspector");
      self->syncing = FALSE;
      return;
    }

  const CamlLayerSpec *spec = layer_at (self, self->selected);
  g_autofree char *title = g_strdup_printf ("Layer %d · %s", self->selected, spec->ops->title);
  gtk_label_set_text (self->inspector_title, title);

  GtkWidget *desc = gtk_label_new (spec->ops->description);
  gtk_label_set_wrap (GTK_LABEL (desc), TRUE);
  gtk_label_set_xalign (GTK_LABEL (desc), 0);
  gtk_widget_add_css_class (desc, "dim-label");
  gtk_grid_attach (self->inspector, desc, 0, 0, 2, 1);

  for (int o = 0; o < spec->ops->n_options && o < CAML_MAX_OPTIONS; o++)
    {
      const CamlOptionSpec *opt = &spec->ops->options[o];
      GtkWidget *label = gtk_label_new (opt->key);
      GtkWidget *w;

      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_widget_set_tooltip_text (label, opt->help);
      switch (opt->type)
        {
        case CAML_OPT_INT:
        case CAML_OPT_FLOAT:
          {
            gboolean is_int = opt->type == CAML_OPT_INT;
            double step = is_int ? 1.0 : MAX ((opt->max - opt->min) / 1000.0, 1e-4);
            GtkAdjustment *adj = gtk_adjustment_new (spec->opt[o], opt->min, opt->max, step,
                                                     is_int ? 8 * step : 10 * step, 0);
            w = gtk_spin_button_new (adj, 1, is_int ? 0 : 4);
            gtk_spin_button_set_numeric (GTK_SPIN_BUTTON (w), TRUE);
            /* Ctrl+Z is the model's undo: the field's own would empty it
             * once the model has nothing left to undo */
            gtk_editable_set_enable_undo (GTK_EDITABLE (w), FALSE);
            caml_spin_button_check_range (GTK_SPIN_BUTTON (w), opt->key,
                                          report_value_corrected, self);
            g_signal_connect (w, "value-changed", G_CALLBACK (on_spin_changed), NULL);
            break;
          }
        case CAML_OPT_ENUM:
          w = gtk_drop_down_new_from_strings ((const char *const *) opt->choices);
          gtk_drop_down_set_selected (GTK_DROP_DOWN (w), (guint) spec->opt[o]);
          g_signal_connect (w, "notify::selected", G_CALLBACK (on_drop_down_changed), NULL);
          break;
        case CAML_OPT_BOOL:
        default:
          w = gtk_switch_new ();
          gtk_switch_set_active (GTK_SWITCH (w), spec->opt[o] != 0.0);
          gtk_widget_set_halign (w, GTK_ALIGN_START);
          g_signal_connect (w, "notify::active", G_CALLBACK (on_switch_changed), NULL);
          break;
        }
      g_object_set_data_full (G_OBJECT (w), "caml-key", g_strdup (opt->key), g_free);
      gtk_widget_set_tooltip_text (w, opt->help);
      gtk_widget_set_hexpand (w, TRUE);
      gtk_accessible_update_property (GTK_ACCESSIBLE (w), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                      opt->key, -1);
      gtk_grid_attach (self->inspector, label, 0, o + 1, 1, 1);
      gtk_grid_attach (self->inspector, w, 1, o + 1, 1, 1);
      self->option_widgets[o] = w;
    }
  if (spec->ops->n_options == 0)
    {
      GtkWidget *none = gtk_label_new ("This layer has no options.");
      gtk_widget_add_css_class (none, "dim-label");
      gtk_label_set_xalign (GTK_LABEL (none), 0);
      gtk_grid_attach (self->inspector, none, 0, 1, 2, 1);
    }
  self->syncing = FALSE;
}

/* ------------------------------------------------------------- undo/redo */

static void
push_undo (CamlModelEditor *self)
{
  g_ptr_array_add (self->undo, copy_layers (self->layers));
  if (self->undo->len > MAX_UNDO)
    g_ptr_array_remove_index (self->undo, 0);
  g_ptr_array_set_size (self->redo, 0);
  g_clear_pointer (&self->coalesce_key, g_free);
}

static void
restore (CamlModelEditor *self, GPtrArray *from, GPtrArray *to)
{
  if (from->len == 0)
    return;
  g_ptr_array_add (to, self->layers);
  self->layers = g_ptr_array_steal_index (from, from->len - 1);
  g_clear_pointer (&self->coalesce_key, g_free);
  if (self->selected >= (int) self->layers->len)
    self->selected = (int) self->layers->len - 1;
  model_changed (self, TRUE);
  g_signal_emit (self, signals[SIGNAL_SELECTION_CHANGED], 0);
}

void
caml_model_editor_undo (CamlModelEditor *self)
{
  restore (self, self->undo, self->redo);
}

void
caml_model_editor_redo (CamlModelEditor *self)
{
  restore (self, self->redo, self->undo);
}

/* ----------------------------------------------------------------- edits */

void
caml_model_editor_set_layers (CamlModelEditor *self, const CamlLayerSpec *specs, int n)
{
  g_array_set_size (self->layers, 0);
  g_array_append_vals (self->layers, specs, n);
  g_ptr_array_set_size (self->undo, 0);
  g_ptr_array_set_size (self->redo, 0);
  g_clear_pointer (&self->coalesce_key, g_free);
  self->selected = n > 0 ? 0 : -1;
  model_changed (self, TRUE);
  g_signal_emit (self, signals[SIGNAL_SELECTION_CHANGED], 0);
}

const CamlLayerSpec *
caml_model_editor_get_layers (CamlModelEditor *self, int *n)
{
  *n = (int) self->layers->len;
  return (const CamlLayerSpec *) self->layers->data;
}

void
caml_model_editor_set_data (CamlModelEditor *self, const CamlShape *input, int want_outputs,
                            const char *data_name, const char *data_error)
{
  self->has_input = input != NULL;
  if (input != NULL)
    self->input = *input;
  self->want_outputs = want_outputs;
  g_free (self->data_name);
  self->data_name = g_strdup (data_name);
  g_free (self->data_error);
  self->data_error = g_strdup (data_error);
  validate (self);
  update_rows (self);
}

void
caml_model_editor_insert_layer (CamlModelEditor *self, const CamlLayerOps *ops, int index)
{
  CamlLayerSpec spec = { .ops = ops };

  g_return_if_fail (ops != NULL);
  if (index < 0 || index > (int) self->layers->len)
    index = (int) self->layers->len;
  push_undo (self);
  caml_layer_ops_default_options (ops, spec.opt);
  g_array_insert_val (self->layers, index, spec);
  self->selected = index;
  model_changed (self, TRUE);
  g_signal_emit (self, signals[SIGNAL_SELECTION_CHANGED], 0);
  /* On the new row: Alt+Up/Down move it, Delete removes it, at once. */
  gtk_widget_grab_focus (GTK_WIDGET (gtk_list_box_get_row_at_index (self->stack, index)));
}

void
caml_model_editor_remove_selected (CamlModelEditor *self)
{
  if (self->selected < 0 || self->selected >= (int) self->layers->len)
    return;
  push_undo (self);
  g_array_remove_index (self->layers, self->selected);
  if (self->selected >= (int) self->layers->len)
    self->selected = (int) self->layers->len - 1;
  model_changed (self, TRUE);
  g_signal_emit (self, signals[SIGNAL_SELECTION_CHANGED], 0);
  if (self->selected >= 0)
    gtk_widget_grab_focus (GTK_WIDGET (gtk_list_box_get_row_at_index (self->stack,
                                                                      self->selected)));
}

void
caml_model_editor_move_layer (CamlModelEditor *self, int from, int to)
{
  int n = (int) self->layers->len;

  if (from < 0 || from >= n || to < 0 || to >= n || from == to)
    return;
  push_undo (self);
  CamlLayerSpec spec = *layer_at (self, from);
  g_array_remove_index (self->layers, from);
  g_array_insert_val (self->layers, to, spec);
  self->selected = to;
  model_changed (self, TRUE);
  g_signal_emit (self, signals[SIGNAL_SELECTION_CHANGED], 0);
  gtk_widget_grab_focus (GTK_WIDGET (gtk_list_box_get_row_at_index (self->stack, to)));
}

void
caml_model_editor_move_selected (CamlModelEditor *self, int delta)
{
  caml_model_editor_move_layer (self, self->selected, self->selected + delta);
}

void
caml_model_editor_clear (CamlModelEditor *self)
{
  if (self->layers->len == 0)
    return;
  push_undo (self);
  g_array_set_size (self->layers, 0);
  self->selected = -1;
  model_changed (self, TRUE);
  g_signal_emit (self, signals[SIGNAL_SELECTION_CHANGED], 0);
}

gboolean
caml_model_editor_set_option (CamlModelEditor *self, const char *key, double value,
                              GError **error)
{
  if (self->selected < 0 || self->selected >= (int) self->layers->len)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "no layer is selected");
      return FALSE;
    }
  CamlLayerSpec *spec = layer_at (self, self->selected);
  int o = caml_layer_ops_option_index (spec->ops, key);
  if (o < 0)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "%s has no option \"%s\"",
                   spec->ops->title, key);
      return FALSE;
    }
  g_autofree char *where = g_strdup_printf ("layer %d (%s): %s", self->selected,
                                            spec->ops->name, key);
  if (!caml_option_check (&spec->ops->options[o], value, where, error))
    return FALSE;
  if (spec->opt[o] == value)
    return TRUE;

  /* Typing 1, 2, 8 into a spin button is one edit, not three. */
  if (self->coalesce_key == NULL || self->coalesce_layer != self->selected
      || !g_str_equal (self->coalesce_key, key))
    {
      push_undo (self);
      self->coalesce_key = g_strdup (key);
      self->coalesce_layer = self->selected;
    }
  spec = layer_at (self, self->selected);
  spec->opt[o] = value;
  sync_inspector_values (self);
  model_changed (self, FALSE);
  return TRUE;
}

void
caml_model_editor_select (CamlModelEditor *self, int index)
{
  if (index >= (int) self->layers->len)
    index = (int) self->layers->len - 1;
  if (index == self->selected)
    return;
  self->selected = index;
  g_clear_pointer (&self->coalesce_key, g_free);
  update_rows (self);
  update_inspector (self);
  update_actions (self);
  g_signal_emit (self, signals[SIGNAL_SELECTION_CHANGED], 0);
}

void
caml_model_editor_set_locked (CamlModelEditor *self, gboolean locked)
{
  self->locked = locked;
  gtk_widget_set_sensitive (GTK_WIDGET (self->palette), !locked);
  gtk_widget_set_sensitive (GTK_WIDGET (self->inspector), !locked);
  update_actions (self);
}

gboolean
caml_model_editor_locks (CamlModelEditor *self, GtkWidget *widget)
{
  GtkWidget *parts[] = { GTK_WIDGET (self->palette), GTK_WIDGET (self->inspector) };
  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    if (widget == parts[i] || gtk_widget_is_ancestor (widget, parts[i]))
      return TRUE;
  return FALSE;
}

int
caml_model_editor_get_selected (CamlModelEditor *self)
{
  return self->selected;
}

gboolean
caml_model_editor_is_valid (CamlModelEditor *self)
{
  return self->error == NULL;
}

const char *
caml_model_editor_get_error (CamlModelEditor *self, int *layer)
{
  if (layer != NULL)
    *layer = self->error_layer;
  return self->error;
}

/* ----------------------------------------------------------- list events */

static void
on_row_selected (GtkListBox *box, GtkListBoxRow *row, CamlModelEditor *self)
{
  if (self->syncing)
    return;
  caml_model_editor_select (self, row != NULL ? gtk_list_box_row_get_index (row) : -1);
}

/* Drag and drop: palette rows carry "new:NAME" (caml-layer-palette.c),
 * stack rows "move:INDEX" (caml-row-drag.c drags both). */
static char *
stack_row_payload (GtkWidget *row)
{
  GtkWidget *editor = gtk_widget_get_ancestor (row, CAML_TYPE_MODEL_EDITOR);

  if (editor != NULL && CAML_MODEL_EDITOR (editor)->locked)
    return NULL;
  return g_strdup_printf ("move:%d", gtk_list_box_row_get_index (GTK_LIST_BOX_ROW (row)));
}

static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y,
         CamlModelEditor *self)
{
  const char *payload = g_value_get_string (value);
  if (self->locked)
    return FALSE;
  GtkListBoxRow *row = gtk_list_box_get_row_at_y (self->stack, (int) y);
  int n = (int) self->layers->len;
  int index = n;

  if (row != NULL)
    {
      graphene_rect_t bounds;
      index = gtk_list_box_row_get_index (row);
      if (gtk_widget_compute_bounds (GTK_WIDGET (row), GTK_WIDGET (self->stack), &bounds)
          && y > bounds.origin.y + bounds.size.height / 2)
        index++;
    }
  if (payload == NULL)
    return FALSE;
  if (g_str_has_prefix (payload, "new:"))
    {
      const CamlLayerOps *ops = caml_layer_lookup (payload + 4);
      if (ops == NULL)
        return FALSE;
      caml_model_editor_insert_layer (self, ops, index);
      return TRUE;
    }
  if (g_str_has_prefix (payload, "move:"))
    {
      int from = atoi (payload + 5);
      int to = index > from ? index - 1 : index;
      caml_model_editor_move_layer (self, from, CLAMP (to, 0, MAX (n - 1, 0)));
      return TRUE;
    }
  return FALSE;
}

static void
add_drag_source (GtkWidget *row)
{
  caml_row_drag_add (row, GDK_ACTION_COPY | GDK_ACTION_MOVE, stack_row_payload);
}

/* Shift+Tab into the palette from what follows it lands on its first row,
 * as Tab does, not on its last (GtkListBox enters from the end going
 * backwards). The flag lives until the key press is handled: a click on
 * a row later is not redirected. */
static gboolean
end_back_tab (gpointer data)
{
  CamlModelEditor *self = data;
  GtkListBox *list = caml_layer_palette_get_list (self->palette);
  GtkListBoxRow *first = gtk_list_box_get_row_at_index (list, 0);
  if (self->back_tab_to_first && first != NULL)
    {
      GtkWidget *scroller = gtk_widget_get_ancestor (GTK_WIDGET (list),
                                                     GTK_TYPE_SCROLLED_WINDOW);
      gtk_widget_grab_focus (GTK_WIDGET (first));
      if (scroller != NULL)   /* a grab does not scroll: show the row */
        {
          GtkAdjustment *v = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
          gtk_adjustment_set_value (v, gtk_adjustment_get_lower (v));
        }
    }
  self->back_tab = self->back_tab_to_first = FALSE;
  self->back_tab_idle = 0;
  return G_SOURCE_REMOVE;
}

static gboolean
on_editor_key (GtkEventControllerKey *key, guint keyval, guint keycode,
               GdkModifierType state, CamlModelEditor *self)
{
  GtkWidget *focus = gtk_root_get_focus (gtk_widget_get_root (GTK_WIDGET (self)));
  gboolean backward = keyval == GDK_KEY_ISO_Left_Tab
                      || (keyval == GDK_KEY_Tab && (state & GDK_SHIFT_MASK));
  self->back_tab = backward && !(state & (GDK_CONTROL_MASK | GDK_ALT_MASK))
                   && focus != NULL
                   && !gtk_widget_is_ancestor (focus, GTK_WIDGET (caml_layer_palette_get_list (
                                                        self->palette)));
  if (self->back_tab && self->back_tab_idle == 0)
    self->back_tab_idle = g_idle_add (end_back_tab, self);
  return FALSE;   /* the window moves the focus */
}

static void
on_palette_enter (GtkEventControllerFocus *focus, CamlModelEditor *self)
{
  if (!self->back_tab)
    return;
  /* The idle that ends the key press moves the focus, once the window's
   * own move is done (a grab from inside it would be overridden). */
  self->back_tab = FALSE;
  self->back_tab_to_first = TRUE;
}

/* --------------------------------------------------------------- actions */

static void
action_add_layer (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlModelEditor *self = user_data;
  const char *name = g_variant_get_string (param, NULL);
  const CamlLayerOps *ops = caml_layer_lookup (name);

  if (ops == NULL)
    {
      g_autofree char *text = g_strdup_printf ("no layer type named \"%s\"", name);
      g_signal_emit (self, signals[SIGNAL_ERROR], 0, text);
      return;
    }
  caml_model_editor_insert_layer (self, ops, -1);
}

/* A palette row clicked, or Enter in its search: through the action, which
 * a lock disables. */
static void
on_palette_layer (CamlLayerPalette *palette, const char *name, CamlModelEditor *self)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "editor.add-layer", "s", name);
}

static void
action_remove_layer (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_model_editor_remove_selected (user_data);
}

static void
action_move_layer_up (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_model_editor_move_selected (user_data, -1);
}

static void
action_move_layer_down (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_model_editor_move_selected (user_data, +1);
}

static void
action_select_layer (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_model_editor_select (user_data, g_variant_get_int32 (param));
}

static void
action_layer_option (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  CamlModelEditor *self = user_data;
  g_autoptr (GError) error = NULL;
  const char *key = NULL;
  double value = 0;

  g_variant_get (param, "(&sd)", &key, &value);
  if (!caml_model_editor_set_option (self, key, value, &error))
    g_signal_emit (self, signals[SIGNAL_ERROR], 0, error->message);
}

static void
action_clear_model (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_model_editor_clear (user_data);
}

static void
action_undo (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_model_editor_undo (user_data);
}

static void
action_redo (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  caml_model_editor_redo (user_data);
}

static const GActionEntry editor_entries[] = {
  { "add-layer", action_add_layer, "s" },
  { "remove-layer", action_remove_layer },
  { "move-layer-up", action_move_layer_up },
  { "move-layer-down", action_move_layer_down },
  { "select-layer", action_select_layer, "i" },
  { "layer-option", action_layer_option, "(sd)" },
  { "clear-model", action_clear_model },
  { "undo", action_undo },
  { "redo", action_redo },
};

static void
set_enabled (CamlModelEditor *self, const char *name, gboolean enabled)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self->actions), name);
  g_simple_action_set_enabled (G_SIMPLE_ACTION (action), enabled);
}

/* The model stays as it is while locked (a run under way); a layer can
 * still be selected (the parts page follows it). */
static void
update_actions (CamlModelEditor *self)
{
  int n = (int) self->layers->len, selected = self->selected;
  gboolean free = !self->locked;

  if (self->actions == NULL)
    return;
  set_enabled (self, "add-layer", free);
  set_enabled (self, "clear-model", free && n > 0);
  set_enabled (self, "remove-layer", free && selected >= 0);
  set_enabled (self, "move-layer-up", free && selected > 0);
  set_enabled (self, "move-layer-down", free && selected >= 0 && selected < n - 1);
  set_enabled (self, "layer-option", free && selected >= 0);
  set_enabled (self, "select-layer", TRUE);
  set_enabled (self, "undo", free && self->undo->len > 0);
  set_enabled (self, "redo", free && self->redo->len > 0);
}

GActionGroup *
caml_model_editor_get_actions (CamlModelEditor *self)
{
  return G_ACTION_GROUP (self->actions);
}

/* ------------------------------------------------------------- lifecycle */

static void
caml_model_editor_dispose (GObject *object)
{
  CamlModelEditor *self = CAML_MODEL_EDITOR (object);

  /* Removing the rows would report selection changes to a half-gone editor. */
  if (self->stack != NULL)
    g_signal_handlers_disconnect_by_data (self->stack, self);
  gtk_widget_dispose_template (GTK_WIDGET (self), CAML_TYPE_MODEL_EDITOR);
  g_clear_handle_id (&self->back_tab_idle, g_source_remove);
  g_clear_pointer (&self->layers, g_array_unref);
  g_clear_pointer (&self->undo, g_ptr_array_unref);
  g_clear_pointer (&self->redo, g_ptr_array_unref);
  g_clear_pointer (&self->shapes, g_ptr_array_unref);
  g_clear_pointer (&self->coalesce_key, g_free);
  g_clear_pointer (&self->error, g_free);
  g_clear_pointer (&self->data_name, g_free);
  g_clear_pointer (&self->data_error, g_free);
  g_clear_object (&self->actions);
  G_OBJECT_CLASS (caml_model_editor_parent_class)->dispose (object);
}

static void
caml_model_editor_class_init (CamlModelEditorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = caml_model_editor_dispose;

  signals[SIGNAL_MODEL_CHANGED] =
    g_signal_new ("model-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_SELECTION_CHANGED] =
    g_signal_new ("selection-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_VALUE_CORRECTED] =
    g_signal_new ("value-corrected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIGNAL_ERROR] =
    g_signal_new ("error", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);

  g_type_ensure (CAML_TYPE_LAYER_PALETTE);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/caml/Workbench/ui/caml-model-editor.ui");
  gtk_widget_class_bind_template_child (widget_class, CamlModelEditor, palette);
  gtk_widget_class_bind_template_child (widget_class, CamlModelEditor, stack);
  gtk_widget_class_bind_template_child (widget_class, CamlModelEditor, summary_label);
  gtk_widget_class_bind_template_child (widget_class, CamlModelEditor, inspector_title);
  gtk_widget_class_bind_template_child (widget_class, CamlModelEditor, inspector);
  gtk_widget_class_bind_template_callback (widget_class, on_palette_layer);
}

static void
caml_model_editor_init (CamlModelEditor *self)
{
  GtkDropTarget *drop;

  gtk_widget_init_template (GTK_WIDGET (self));
  self->actions = g_simple_action_group_new ();
  g_action_map_add_action_entries (G_ACTION_MAP (self->actions), editor_entries,
                                   G_N_ELEMENTS (editor_entries), self);
  gtk_widget_insert_action_group (GTK_WIDGET (self), "editor", G_ACTION_GROUP (self->actions));
  self->layers = g_array_new (FALSE, TRUE, sizeof (CamlLayerSpec));
  self->undo = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  self->redo = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  self->shapes = g_ptr_array_new_with_free_func (g_free);
  self->selected = -1;
  self->error_layer = -1;
  self->input = caml_shape_flat (2);
  self->has_input = TRUE;

  GtkEventController *key = gtk_event_controller_key_new ();
  gtk_event_controller_set_propagation_phase (key, GTK_PHASE_CAPTURE);
  g_signal_connect (key, "key-pressed", G_CALLBACK (on_editor_key), self);
  gtk_widget_add_controller (GTK_WIDGET (self), key);
  GtkEventController *enter = gtk_event_controller_focus_new ();
  g_signal_connect (enter, "enter", G_CALLBACK (on_palette_enter), self);
  gtk_widget_add_controller (GTK_WIDGET (caml_layer_palette_get_list (self->palette)), enter);
  g_signal_connect (self->stack, "row-selected", G_CALLBACK (on_row_selected), self);
  drop = gtk_drop_target_new (G_TYPE_STRING, GDK_ACTION_COPY | GDK_ACTION_MOVE);
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self->stack), GTK_EVENT_CONTROLLER (drop));
  model_changed (self, TRUE);
}

GtkWidget *
caml_model_editor_new (void)
{
  return g_object_new (CAML_TYPE_MODEL_EDITOR, NULL);
}
