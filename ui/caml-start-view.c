/* caml-start-view.c — the start page: New, Open, recent files, and the
 * presets by the paper's sections with their claimed and measured figures.
 * A card carries its preset's name as object data "caml-preset", a
 * section's box its CamlPresetSection as "caml-section". */
#include "caml-start-view.h"

#include "preset-guide.h"
#include "presets.h"

struct _CamlStartView
{
  GtkWidget   parent_instance;

  /* template widgets */
  GtkWidget  *scroller;
  GtkFlowBox *recent_box;
  GtkBox     *sections_box;

  /* owned */
  GMenuModel *recent;
};

G_DEFINE_FINAL_TYPE (CamlStartView, caml_start_view, GTK_TYPE_WIDGET)

static GtkWidget *
wrapped_label (const char *text, const char *css_class, int lines)
{
  GtkWidget *label = gtk_label_new (text);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_width_chars (GTK_LABEL (label), 30);
  gtk_label_set_max_width_chars (GTK_LABEL (label), 40);
  if (lines > 0)
    {
      /* the whole text in the tooltip */
      gtk_label_set_lines (GTK_LABEL (label), lines);
      gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
      gtk_widget_set_tooltip_text (label, text);
    }
  if (css_class != NULL)
    gtk_widget_add_css_class (label, css_class);
  return label;
}

/* A preset's card: a button (app.preset) holding its name, description,
 * the paper's claim and what this build measured. */
static GtkWidget *
preset_card (const char *name, const CamlExperiment *exp, GHashTable *measures)
{
  GtkWidget *button = gtk_button_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 3);
  g_autofree char *paper = exp != NULL && exp->paper != NULL
                           ? g_strdup_printf ("paper: %s", exp->paper)
                           : g_strdup ("paper: no figure");
  g_autofree char *measured = caml_preset_measured_text (measures, name);

  /* Object data, not the widget's name: a name is a quark each, and past
   * 2048 quarks GLib keeps its old table, which LeakSanitizer reports. */
  g_object_set_data_full (G_OBJECT (button), "caml-preset", g_strdup (name), g_free);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "app.preset");
  gtk_actionable_set_action_target_value (GTK_ACTIONABLE (button), g_variant_new_string (name));
  gtk_widget_add_css_class (button, "preset-card");
  gtk_box_append (GTK_BOX (box), wrapped_label (name, "heading", 0));
  if (exp != NULL && exp->description != NULL)
    gtk_box_append (GTK_BOX (box), wrapped_label (exp->description, NULL, 3));
  gtk_box_append (GTK_BOX (box), wrapped_label (paper, "dim-label", 0));
  gtk_box_append (GTK_BOX (box), wrapped_label (measured,
                                                g_str_has_prefix (measured, "measured")
                                                ? "preset-measured" : "preset-unmeasured", 0));
  gtk_button_set_child (GTK_BUTTON (button), box);
  return button;
}

static GtkWidget *
new_flow_box (void)
{
  GtkWidget *flow = gtk_flow_box_new ();
  gtk_flow_box_set_selection_mode (GTK_FLOW_BOX (flow), GTK_SELECTION_NONE);
  gtk_flow_box_set_homogeneous (GTK_FLOW_BOX (flow), TRUE);
  gtk_flow_box_set_max_children_per_line (GTK_FLOW_BOX (flow), 4);
  gtk_flow_box_set_column_spacing (GTK_FLOW_BOX (flow), 6);
  gtk_flow_box_set_row_spacing (GTK_FLOW_BOX (flow), 6);
  return flow;
}

/* The presets, each in its section (caml_preset_section_of), built once. */
static void
build_sections (CamlStartView *self)
{
  g_auto (GStrv) names = caml_presets_list ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GHashTable) measures = caml_preset_measures_load (&error);
  GtkWidget *flows[CAML_PRESET_N_SECTIONS] = { NULL };

  if (measures == NULL)
    gtk_box_append (self->sections_box, wrapped_label (error->message, "error", 0));
  for (int s = 0; s < CAML_PRESET_N_SECTIONS; s++)
    {
      GtkWidget *title = wrapped_label (caml_preset_section_title (s), "title-4", 0);
      gtk_widget_set_margin_top (title, 6);
      flows[s] = new_flow_box ();
      g_object_set_data (G_OBJECT (flows[s]), "caml-section", GINT_TO_POINTER (s));
      gtk_box_append (self->sections_box, title);
      gtk_box_append (self->sections_box, flows[s]);
    }
  for (int i = 0; names[i] != NULL; i++)
    {
      CamlExperiment *exp = caml_presets_load (names[i], NULL);
      CamlPresetSection s = exp != NULL ? caml_preset_section_of (exp) : CAML_PRESET_SECTION_OTHER;
      gtk_flow_box_append (GTK_FLOW_BOX (flows[s]), preset_card (names[i], exp, measures));
      g_clear_pointer (&exp, caml_experiment_free);
    }
  /* An empty section (Other, usually) is not shown. */
  for (int s = 0; s < CAML_PRESET_N_SECTIONS; s++)
    if (gtk_widget_get_first_child (flows[s]) == NULL)
      {
        gtk_widget_set_visible (gtk_widget_get_prev_sibling (flows[s]), FALSE);
        gtk_widget_set_visible (flows[s], FALSE);
      }
}

static void
rebuild_recent (CamlStartView *self)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->recent_box))) != NULL)
    gtk_flow_box_remove (self->recent_box, child);
  int n = self->recent != NULL ? g_menu_model_get_n_items (self->recent) : 0;
  for (int i = 0; i < n; i++)
    {
      g_autofree char *label = NULL, *action = NULL;
      g_autoptr (GVariant) target = g_menu_model_get_item_attribute_value (
        self->recent, i, G_MENU_ATTRIBUTE_TARGET, NULL);
      g_menu_model_get_item_attribute (self->recent, i, G_MENU_ATTRIBUTE_LABEL, "s", &label);
      g_menu_model_get_item_attribute (self->recent, i, G_MENU_ATTRIBUTE_ACTION, "s", &action);
      /* The label is the menu's: "__" for an underscore, as a button reads it. */
      GtkWidget *button = gtk_button_new_with_mnemonic (label != NULL ? label : "");
      GtkWidget *text = gtk_button_get_child (GTK_BUTTON (button));
      if (GTK_IS_LABEL (text))
        {
          gtk_label_set_ellipsize (GTK_LABEL (text), PANGO_ELLIPSIZE_MIDDLE);
          gtk_label_set_xalign (GTK_LABEL (text), 0);
        }
      gtk_widget_set_tooltip_text (button, target != NULL && g_variant_is_of_type (
                                     target, G_VARIANT_TYPE_STRING)
                                   ? g_variant_get_string (target, NULL) : NULL);
      if (action != NULL)
        gtk_actionable_set_action_name (GTK_ACTIONABLE (button), action);
      if (target != NULL)
        gtk_actionable_set_action_target_value (GTK_ACTIONABLE (button), target);
      gtk_flow_box_append (self->recent_box, button);
    }
}

void
caml_start_view_set_recent (CamlStartView *self, GMenuModel *recent)
{
  g_return_if_fail (CAML_IS_START_VIEW (self));
  if (self->recent != NULL)
    g_signal_handlers_disconnect_by_data (self->recent, self);
  g_set_object (&self->recent, recent);
  if (recent != NULL)
    g_signal_connect_swapped (recent, "items-changed", G_CALLBACK (rebuild_recent), self);
  rebuild_recent (self);
}

static void
caml_start_view_dispose (GObject *object)
{
  CamlStartView *self = CAML_START_VIEW (object);

  if (self->recent != NULL)
    g_signal_handlers_disconnect_by_data (self->recent, self);
  g_clear_object (&self->recent);
  gtk_widget_dispose_template (GTK_WIDGET (self), CAML_TYPE_START_VIEW);
  G_OBJECT_CLASS (caml_start_view_parent_class)->dispose (object);
}

static void
caml_start_view_class_init (CamlStartViewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = caml_start_view_dispose;
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/caml/Workbench/ui/caml-start-view.ui");
  gtk_widget_class_bind_template_child (widget_class, CamlStartView, scroller);
  gtk_widget_class_bind_template_child (widget_class, CamlStartView, recent_box);
  gtk_widget_class_bind_template_child (widget_class, CamlStartView, sections_box);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
caml_start_view_init (CamlStartView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  build_sections (self);
  /* Escape goes back to the experiment underneath, as the button does. */
  GtkEventController *keys = gtk_shortcut_controller_new ();
  gtk_shortcut_controller_add_shortcut (GTK_SHORTCUT_CONTROLLER (keys),
                                        gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_Escape, 0),
                                                          gtk_named_action_new ("win.hide-start")));
  gtk_widget_add_controller (GTK_WIDGET (self), keys);
}
