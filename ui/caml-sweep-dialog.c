/* caml-sweep-dialog.c — the question Sweep… asks (caml-sweep-dialog.h).
 * Built in code, as the New dialog is: two rows of a key and its values,
 * the baselines' switch, the folder, a line that says what the plan will
 * train or why it cannot, and Start. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "caml-sweep-dialog.h"

typedef struct {
  CamlSession        *session;
  CamlExperiment     *exp;
  char               *preset;
  char               *out_dir;
  char              **keys, **titles, **current;
  CamlSweepDialogFunc func;
  gpointer            user_data;
  GtkDropDown        *key[2];
  GtkEntry           *values[2];
  GtkCheckButton     *second, *baselines;
  GtkLabel           *summary, *folder;
  GtkButton          *start;
  GtkWindow          *dialog;
} SweepDialog;

static void
sweep_dialog_free (SweepDialog *d)
{
  g_object_unref (d->session);
  caml_experiment_free (d->exp);
  g_free (d->preset);
  g_free (d->out_dir);
  g_strfreev (d->keys);
  g_strfreev (d->titles);
  g_strfreev (d->current);
  g_free (d);
}

static SweepDialog *
dialog_of (GtkWindow *dialog)
{
  return g_object_get_data (G_OBJECT (dialog), "caml-sweep-dialog");
}

/* The choices of a layer option that is a word ("tanh,relu,…"), or NULL. */
static char *
word_choices (const CamlExperiment *exp, const char *key)
{
  const char *dot = strchr (key, '.');
  int only = -1;
  if (dot != NULL && g_ascii_isdigit (key[0]))
    {
      only = atoi (key);
      key = dot + 1;
    }
  else if (dot != NULL)
    return NULL;   /* optimizer.lr, training.steps */
  for (int i = 0; i < exp->n_layers; i++)
    {
      if (only >= 0 && i != only)
        continue;
      const CamlLayerOps *ops = exp->layers[i].ops;
      int o = caml_layer_ops_option_index (ops, key);
      if (o >= 0 && ops->options[o].type == CAML_OPT_ENUM)
        return g_strjoinv (",", (char **) ops->options[o].choices);
      if (o >= 0)
        return NULL;
    }
  return NULL;
}

/* Values to start from, around the current one: a tenth, it and ten
 * times a rate; half, it and twice a count; seeds 0, 1, 2; both truths;
 * every choice of a word. */
static char *
suggest (const CamlExperiment *exp, const char *key, const char *current)
{
  char *words = word_choices (exp, key);
  if (words != NULL)
    return words;
  if (g_str_equal (key, "seed"))
    return g_strdup ("0,1,2");
  if (g_strcmp0 (current, "true") == 0 || g_strcmp0 (current, "false") == 0)
    return g_strdup ("false,true");
  char *end = NULL;
  double v = current != NULL ? g_ascii_strtod (current, &end) : NAN;
  if (current == NULL || end == current || *end != '\0' || !isfinite (v))
    return g_strdup (current != NULL ? current : "");
  gboolean whole = strchr (current, '.') == NULL && strchr (current, 'e') == NULL;
  if (g_str_has_suffix (key, "em_steps"))
    return v > 0 ? g_strdup_printf ("0,%s", current) : g_strdup ("0,100");
  if (whole)
    {
      long n = (long) v;
      if (n <= 1)
        return g_strdup_printf ("%ld,%ld,%ld", n, n + 1, n + 2);
      return n % 2 == 0 ? g_strdup_printf ("%ld,%ld,%ld", n / 2, n, n * 2)
                        : g_strdup_printf ("%ld,%ld,%ld", n - 2, n, n + 2);
    }
  if (v == 0)
    return g_strdup ("0,0.0001,0.001");
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (a, sizeof a, "%.3g", v / 10);
  g_ascii_formatd (b, sizeof b, "%.3g", v * 10);
  return g_strdup_printf ("%s,%s,%s", a, current, b);
}

/* The plan the dialog shows (new), or NULL with the check's error. */
static CamlSweepPlan *
build_plan (SweepDialog *d, GError **error)
{
  g_autoptr (CamlSweepPlan) plan = caml_sweep_plan_new (caml_experiment_copy (d->exp),
                                                        d->preset, NULL);
  int axes = gtk_check_button_get_active (d->second) ? 2 : 1;
  for (int a = 0; a < axes; a++)
    {
      guint k = gtk_drop_down_get_selected (d->key[a]);
      if (k == GTK_INVALID_LIST_POSITION || d->keys[k] == NULL)
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID, "choose a setting to vary");
          return NULL;
        }
      const char *text = gtk_editable_get_text (GTK_EDITABLE (d->values[a]));
      g_auto (GStrv) parts = g_strsplit (text, ",", -1);
      GPtrArray *values = g_ptr_array_new ();
      for (int i = 0; parts[i] != NULL; i++)
        if (*g_strstrip (parts[i]) != '\0')
          g_ptr_array_add (values, parts[i]);
      gboolean ok = values->len > 0;
      if (!ok)
        g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                     "%s: give its values, separated by commas", d->keys[k]);
      else
        ok = caml_sweep_plan_add_axis (plan, d->keys[k], (const char *const *) values->pdata,
                                       (int) values->len, error);
      g_ptr_array_free (values, TRUE);
      if (!ok)
        return NULL;
    }
  plan->baselines = gtk_check_button_get_active (d->baselines);
  if (!caml_session_check_sweep (d->session, plan, error))
    return NULL;
  return g_steal_pointer (&plan);
}

static void
update (SweepDialog *d)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CamlSweepPlan) plan = build_plan (d, &error);
  if (plan == NULL)
    {
      /* the check words it for the command line ("--grid KEY=…: …") */
      const char *message = error->message;
      if (g_str_has_prefix (message, "--grid "))
        message += strlen ("--grid ");
      gtk_label_set_text (d->summary, message);
      gtk_widget_add_css_class (GTK_WIDGET (d->summary), "error");
    }
  else
    {
      int points = caml_sweep_plan_n_points (plan), runs = caml_sweep_plan_n_runs (plan);
      g_autofree char *text =
        runs > points
        ? g_strdup_printf ("%d runs: %d point%s, each with its matched baseline; %d steps each",
                           runs, points, points == 1 ? "" : "s", plan->exp->steps)
        : g_strdup_printf ("%d run%s, %d steps each", runs, runs == 1 ? "" : "s",
                           plan->exp->steps);
      gtk_label_set_text (d->summary, text);
      gtk_widget_remove_css_class (GTK_WIDGET (d->summary), "error");
    }
  gtk_widget_set_sensitive (GTK_WIDGET (d->start), plan != NULL);
  gtk_widget_set_sensitive (GTK_WIDGET (d->key[1]), gtk_check_button_get_active (d->second));
  gtk_widget_set_sensitive (GTK_WIDGET (d->values[1]), gtk_check_button_get_active (d->second));
}

static void
on_key_selected (GtkDropDown *drop, GParamSpec *pspec, SweepDialog *d)
{
  int a = drop == d->key[1];
  guint k = gtk_drop_down_get_selected (drop);
  if (k != GTK_INVALID_LIST_POSITION && d->keys[k] != NULL)
    {
      g_autofree char *values = suggest (d->exp, d->keys[k], d->current[k]);
      gtk_editable_set_text (GTK_EDITABLE (d->values[a]), values);
    }
  update (d);
}

static void
on_changed (GtkWidget *widget, SweepDialog *d)
{
  update (d);
}

static void
on_folder_response (GtkNativeDialog *chooser, int response, SweepDialog *d)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
      g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;
      if (path != NULL)
        {
          g_free (d->out_dir);
          d->out_dir = g_steal_pointer (&path);
          gtk_label_set_text (d->folder, d->out_dir);
        }
    }
  g_object_unref (chooser);
}

static void
on_choose_folder (GtkButton *button, SweepDialog *d)
{
  GtkFileChooserNative *chooser =
    gtk_file_chooser_native_new ("Folder for the Sweep's Runs", d->dialog,
                                 GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, "_Select", "_Cancel");
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  g_signal_connect (chooser, "response", G_CALLBACK (on_folder_response), d);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

static void
on_start (GtkButton *button, SweepDialog *d)
{
  g_autoptr (GError) error = NULL;
  CamlSweepPlan *plan = build_plan (d, &error);
  if (plan == NULL)
    return;
  d->func (plan, d->out_dir, d->user_data);
  gtk_window_destroy (d->dialog);
}

static void
on_cancel (GtkButton *button, SweepDialog *d)
{
  gtk_window_destroy (d->dialog);
}

static GtkWidget *
axis_row (SweepDialog *d, int a, const char *mnemonic)
{
  GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  GtkWidget *label = gtk_label_new_with_mnemonic (mnemonic);
  gtk_label_set_width_chars (GTK_LABEL (label), 7);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  d->key[a] = GTK_DROP_DOWN (gtk_drop_down_new_from_strings ((const char *const *) d->titles));
  gtk_widget_set_hexpand (GTK_WIDGET (d->key[a]), TRUE);
  gtk_label_set_mnemonic_widget (GTK_LABEL (label), GTK_WIDGET (d->key[a]));
  d->values[a] = GTK_ENTRY (gtk_entry_new ());
  gtk_entry_set_placeholder_text (d->values[a], "values, e.g. 3,5,8");
  gtk_editable_set_width_chars (GTK_EDITABLE (d->values[a]), 18);
  gtk_widget_set_tooltip_text (GTK_WIDGET (d->values[a]),
                               "The values to train at, separated by commas");
  gtk_box_append (GTK_BOX (row), label);
  gtk_box_append (GTK_BOX (row), GTK_WIDGET (d->key[a]));
  gtk_box_append (GTK_BOX (row), GTK_WIDGET (d->values[a]));
  return row;
}

/* The key a sweep of exp varies first: the first context-aware layer's
 * kernel, or its width when another layer follows it (the last layer's
 * width is the data's), else the learning rate. */
static guint
first_key (SweepDialog *d)
{
  g_autoptr (GPtrArray) wanted = g_ptr_array_new_with_free_func (g_free);
  for (int i = 0; i < d->exp->n_layers; i++)
    if (d->exp->layers[i].ops->context_aware)
      {
        g_ptr_array_add (wanted, g_strdup_printf ("%d.kernel", i));
        if (i < d->exp->n_layers - 1)
          g_ptr_array_add (wanted, g_strdup_printf ("%d.units", i));
        break;
      }
  g_ptr_array_add (wanted, g_strdup ("optimizer.lr"));
  for (guint w = 0; w < wanted->len; w++)
    for (guint k = 0; d->keys[k] != NULL; k++)
      if (g_str_equal (d->keys[k], wanted->pdata[w]))
        return k;
  return 0;
}

GtkWindow *
caml_sweep_dialog_present (GtkWindow *parent, CamlSession *session, const char *preset,
                           const char *default_dir, CamlSweepDialogFunc func,
                           gpointer user_data)
{
  g_return_val_if_fail (CAML_IS_SESSION (session) && default_dir != NULL && func != NULL, NULL);
  const CamlExperiment *exp = caml_session_get_experiment (session);
  GtkWindow *dialog = GTK_WINDOW (gtk_window_new ());
  gtk_window_set_title (dialog, "Sweep");
  gtk_window_set_modal (dialog, TRUE);
  gtk_window_set_resizable (dialog, FALSE);
  gtk_window_set_destroy_with_parent (dialog, TRUE);
  if (parent != NULL)
    gtk_window_set_transient_for (dialog, parent);

  SweepDialog *d = g_new0 (SweepDialog, 1);
  d->session = g_object_ref (session);
  d->exp = caml_experiment_copy (exp);
  d->preset = g_strdup (preset);
  d->out_dir = g_strdup (default_dir);
  d->func = func;
  d->user_data = user_data;
  d->dialog = dialog;
  d->keys = caml_sweep_keys (exp, &d->titles, &d->current);
  g_object_set_data_full (G_OBJECT (dialog), "caml-sweep-dialog", d,
                          (GDestroyNotify) sweep_dialog_free);

  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 10);
  gtk_widget_set_margin_top (box, 18);
  gtk_widget_set_margin_bottom (box, 18);
  gtk_widget_set_margin_start (box, 18);
  gtk_widget_set_margin_end (box, 18);
  GtkWidget *text = gtk_label_new ("Train this experiment at every combination of the values "
                                   "of one or two settings, one run after another in the "
                                   "background. The runs fill the Sweep page — a table, the "
                                   "metric against the first setting (the paper's Fig. 17) "
                                   "and parallel coordinates — and the Runs list as they end; "
                                   "each is kept as a results folder. `caml sweep "
                                   "FOLDER/sweep.json` runs the same sweep headless.");
  gtk_label_set_wrap (GTK_LABEL (text), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (text), 60);
  gtk_label_set_xalign (GTK_LABEL (text), 0);
  gtk_box_append (GTK_BOX (box), text);

  gtk_box_append (GTK_BOX (box), axis_row (d, 0, "_Vary"));
  d->second = GTK_CHECK_BUTTON (gtk_check_button_new_with_mnemonic ("_And a second setting"));
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (d->second));
  gtk_box_append (GTK_BOX (box), axis_row (d, 1, "_By"));

  gboolean ca = FALSE;
  for (int i = 0; i < exp->n_layers; i++)
    ca |= exp->layers[i].ops->context_aware;
  d->baselines = GTK_CHECK_BUTTON (gtk_check_button_new_with_mnemonic (
    "Train each point's matched _baseline too"));
  gtk_check_button_set_active (d->baselines, ca);
  gtk_widget_set_sensitive (GTK_WIDGET (d->baselines), ca);
  gtk_widget_set_tooltip_text (GTK_WIDGET (d->baselines),
                               ca ? "The same model with each context-aware layer replaced by "
                                    "its plain counterpart (CA-CNN → conv2d, CA-NN → dense), "
                                    "with the same options, seed and data order"
                                  : "The model has no context-aware layer: its baseline would "
                                    "be the same model");
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (d->baselines));

  GtkWidget *folder_row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  GtkWidget *folder_label = gtk_label_new ("Folder");
  gtk_label_set_width_chars (GTK_LABEL (folder_label), 7);
  gtk_label_set_xalign (GTK_LABEL (folder_label), 0);
  d->folder = GTK_LABEL (gtk_label_new (d->out_dir));
  gtk_label_set_ellipsize (d->folder, PANGO_ELLIPSIZE_START);
  gtk_label_set_xalign (d->folder, 0);
  gtk_widget_set_hexpand (GTK_WIDGET (d->folder), TRUE);
  GtkWidget *choose = gtk_button_new_with_mnemonic ("_Choose…");
  g_signal_connect (choose, "clicked", G_CALLBACK (on_choose_folder), d);
  gtk_box_append (GTK_BOX (folder_row), folder_label);
  gtk_box_append (GTK_BOX (folder_row), GTK_WIDGET (d->folder));
  gtk_box_append (GTK_BOX (folder_row), choose);
  gtk_box_append (GTK_BOX (box), folder_row);

  d->summary = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (d->summary, TRUE);
  gtk_label_set_max_width_chars (d->summary, 60);
  gtk_label_set_xalign (d->summary, 0);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (d->summary));

  GtkWidget *buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  gtk_widget_set_halign (buttons, GTK_ALIGN_END);
  GtkWidget *cancel = gtk_button_new_with_mnemonic ("_Cancel");
  d->start = GTK_BUTTON (gtk_button_new_with_mnemonic ("_Start"));
  gtk_widget_add_css_class (GTK_WIDGET (d->start), "suggested-action");
  g_signal_connect (cancel, "clicked", G_CALLBACK (on_cancel), d);
  g_signal_connect (d->start, "clicked", G_CALLBACK (on_start), d);
  gtk_box_append (GTK_BOX (buttons), cancel);
  gtk_box_append (GTK_BOX (buttons), GTK_WIDGET (d->start));
  gtk_box_append (GTK_BOX (box), buttons);
  gtk_window_set_child (dialog, box);
  gtk_window_set_default_widget (dialog, GTK_WIDGET (d->start));

  /* the first key and a second one after it, with values to start from */
  guint first = first_key (d);
  guint n_keys = g_strv_length (d->keys);
  gtk_drop_down_set_selected (d->key[0], first);
  gtk_drop_down_set_selected (d->key[1], n_keys > 1 ? (first + 1) % n_keys : 0);
  for (int a = 0; a < 2; a++)
    {
      on_key_selected (d->key[a], NULL, d);
      g_signal_connect (d->key[a], "notify::selected", G_CALLBACK (on_key_selected), d);
      g_signal_connect (d->values[a], "changed", G_CALLBACK (on_changed), d);
    }
  g_signal_connect (d->second, "toggled", G_CALLBACK (on_changed), d);
  g_signal_connect (d->baselines, "toggled", G_CALLBACK (on_changed), d);
  update (d);
  gtk_window_present (dialog);
  return dialog;
}

GtkDropDown *
caml_sweep_dialog_get_key (GtkWindow *dialog, int axis)
{
  return dialog_of (dialog)->key[axis != 0];
}

GtkEditable *
caml_sweep_dialog_get_values (GtkWindow *dialog, int axis)
{
  return GTK_EDITABLE (dialog_of (dialog)->values[axis != 0]);
}

GtkCheckButton *
caml_sweep_dialog_get_second (GtkWindow *dialog)
{
  return dialog_of (dialog)->second;
}

GtkCheckButton *
caml_sweep_dialog_get_baselines (GtkWindow *dialog)
{
  return dialog_of (dialog)->baselines;
}

const char *
caml_sweep_dialog_get_summary (GtkWindow *dialog)
{
  return gtk_label_get_text (dialog_of (dialog)->summary);
}

GtkButton *
caml_sweep_dialog_get_start (GtkWindow *dialog)
{
  return dialog_of (dialog)->start;
}
