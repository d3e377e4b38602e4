/* test-gui-plots.c — the plot views and pages under Xvfb: the loss plot
 * (hover, smoothing, the previous run), CA-NN parts, the words page,
 * σ-maps, exports that are caml train's files byte for byte, the views'
 * drawing and the window's throughput while it trains.
 *
 * Run by `meson test gui-plots` through xvfb-run, with GSETTINGS_SCHEMA_DIR
 * set to the schema compiled in the build tree, GSETTINGS_BACKEND=memory. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <sys/wait.h>
#include <cmocka.h>

#include <glib/gstdio.h>
#include <gtk/gtk.h>

#include "caml-application.h"
#include "words-page.h"
#include "caml-window.h"
#include "caml-model-editor.h"
#include "presets.h"
#include "caml-data-source.h"
#include "caml-run.h"
#include "caml-session.h"
#include "gui-harness.h"

/* A run that trained leaves its curves, dashed, when the model changes or
 * Train starts afresh: the next run is compared with it. Forget the
 * Previous Run and other data drop them. */
static void
test_previous_run (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  assert_false (enabled (win, "forget-previous"));
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  gtk_spin_button_set_value (steps, 60);
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  iterate_until (always_false, NULL, 0.2);
  g_autofree char *trained = loss_labels (win);
  assert_string_equal (trained, "train loss (smoothed)|test loss");
  long n_first = 0;
  caml_window_get_losses (win, &n_first);
  assert_int_equal (n_first, 60);

  /* The model changes: the new, untrained run shows the previous curves. */
  activate_editor (win, "select-layer", g_variant_new_int32 (0));
  activate_editor (win, "layer-option", g_variant_new ("(sd)", "units", 4.0));
  assert_true (iterate_until (not_loading, win, 10));
  assert_true (enabled (win, "forget-previous"));
  g_autofree char *before = loss_labels (win);
  assert_string_equal (before, "train loss (smoothed)|test loss|previous run: train loss"
                               "|previous run: test loss");
  const CamlPlotLine *line = caml_plot_view_get_line (caml_window_get_plot_view (win, "loss"));
  size_t n = 0;
  caml_plot_line_get_values (line, 2, &n);
  assert_true (n >= 2);
  caml_plot_line_get_values (line, 0, &n);
  assert_int_equal (n, 0);   /* nothing of the new run yet */

  /* Trained too: both, until the previous run is forgotten. */
  gtk_spin_button_set_value (steps, 30);
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  iterate_until (always_false, NULL, 0.2);
  caml_plot_line_get_values (caml_plot_view_get_line (caml_window_get_plot_view (win, "loss")),
                             0, &n);
  assert_true (n > 0);
  g_autofree char *both = loss_labels (win);
  assert_string_equal (both, before);
  activate (win, "forget-previous", NULL);
  g_autofree char *forgotten = loss_labels (win);
  assert_string_equal (forgotten, "train loss (smoothed)|test loss");
  assert_false (enabled (win, "forget-previous"));

  /* Train again: this run becomes the previous one; other data drops it. */
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  assert_true (enabled (win, "forget-previous"));
  activate (win, "data", g_variant_new_string ("xor"));
  assert_true (iterate_until (not_loading, win, 10));
  assert_false (enabled (win, "forget-previous"));
  gtk_window_destroy (GTK_WINDOW (win));
}

/* The Smoothing slider's trend is an average of log(loss) on the log axis
 * (a linear one sat far above a loss falling by decades), a linear one on
 * the linear axis, and the legend says the line is smoothed. */
static void
test_smoothing_follows_axis (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "steps_spin")), 60);
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  iterate_until (always_false, NULL, 0.2);
  long n_steps = 0;
  const float *losses = caml_window_get_losses (win, &n_steps);
  assert_int_equal (n_steps, 60);
  GtkRange *smoothing = GTK_RANGE (template_child (win, "smoothing_scale"));
  double factor = gtk_range_get_value (smoothing);
  assert_true (factor > 0);
  g_autofree double *log_ema = caml_plot_doubles_from_floats (losses, n_steps);
  g_autofree double *lin_ema = caml_plot_doubles_from_floats (losses, n_steps);
  caml_plot_ema_log (log_ema, log_ema, n_steps, factor);
  caml_plot_ema (lin_ema, lin_ema, n_steps, factor);
  CamlPlotView *view = caml_window_get_plot_view (win, "loss");

  gboolean axis[] = { TRUE, FALSE };
  for (int a = 0; a < 2; a++)
    {
      g_action_group_change_action_state (G_ACTION_GROUP (win), "log-scale",
                                          g_variant_new_boolean (axis[a]));
      const CamlPlotLine *line = caml_plot_view_get_line (view);
      assert_string_equal (caml_plot_line_get_label (line, 0), "train loss (smoothed)");
      size_t n = 0;
      const double *v = caml_plot_line_get_values (line, 0, &n);
      assert_int_equal (n, 60);
      const double *want = axis[a] ? log_ema : lin_ema;
      for (size_t i = 0; i < n; i++)
        assert_true (fabs (v[i] - want[i]) <= 1e-9 * fabs (want[i]));
    }
  /* the two differ on this run, so the check above tells them apart */
  assert_true (fabs (log_ema[n_steps - 1] - lin_ema[n_steps - 1])
               > 1e-6 * lin_ema[n_steps - 1]);

  /* no smoothing: the raw loss, called what it is */
  gtk_range_set_value (smoothing, 0.0);
  assert_string_equal (caml_plot_line_get_label (caml_plot_view_get_line (view), 0),
                       "train loss");
  gtk_range_set_value (smoothing, factor);
  g_action_group_change_action_state (G_ACTION_GROUP (win), "log-scale",
                                      g_variant_new_boolean (TRUE));
  gtk_window_destroy (GTK_WINDOW (win));
}

static int want_parts_layer;

static gboolean
parts_on_wanted_layer (gpointer data)
{
  return caml_window_get_parts_layer (CAML_WINDOW (data)) == want_parts_layer;
}

static void
test_ca_nn_parts (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  CamlPlotView *parts = caml_window_get_plot_view (win, "parts");
  assert_non_null (parts);

  activate_editor (win, "select-layer", g_variant_new_int32 (1));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_parts_layer (win), 1);
  activate_editor (win, "select-layer", g_variant_new_int32 (0));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_parts_layer (win), 0);
  activate_editor (win, "select-layer", g_variant_new_int32 (2));   /* dense: the last CA-NN */
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_parts_layer (win), 1);

  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 120));
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  /* The page is prepared when it is shown. */
  guint before_page = caml_plot_view_get_update_count (parts);
  activate (win, "plots-page", g_variant_new_string ("parts"));
  assert_true (caml_plot_view_get_update_count (parts) > before_page);
  int n_maps = 0;
  caml_plot_view_get_heatmap (parts, 0, &n_maps);
  assert_int_equal (n_maps, 4);   /* χ, χ·f₁, (1 − χ)·f₀, the fit */
  double lo, hi;
  caml_plot_heatmap_get_range (caml_plot_view_get_heatmap (parts, 2, NULL), &lo, &hi);
  print_message ("the context-sensitive part (1 − χ)·f₀ spans %.4g … %.4g\n", lo, hi);
  assert_true (hi - lo > 1e-6);
  size_t n_segments = 0;
  caml_plot_heatmap_get_segments (caml_plot_view_get_heatmap (parts, 1, NULL), &n_segments);
  assert_true (n_segments > 0);   /* χ·f₁ has contours: it is not flat */

  /* Choosing the other CA-NN after training samples its parts on a worker
   * thread, from the trained weights. */
  guint updates = caml_plot_view_get_update_count (parts);
  activate_editor (win, "select-layer", g_variant_new_int32 (0));
  assert_true (caml_window_is_loading (win));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_parts_layer (win), 0);
  assert_true (caml_plot_view_get_update_count (parts) > updates);
  caml_plot_heatmap_get_range (caml_plot_view_get_heatmap (parts, 2, NULL), &lo, &hi);
  assert_true (hi - lo > 1e-6);
  activate_editor (win, "select-layer", g_variant_new_int32 (1));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_parts_layer (win), 1);

  /* While a run trains, or is paused, the model is locked but a layer can
   * still be chosen for the parts (the whole editor was insensitive). */
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  gtk_spin_button_set_value (steps, 1000000);
  assert_true (iterate_until (can_train, win, 30));
  activate (win, "train", NULL);
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_RUNNING);
  assert_false (editor_enabled (win, "add-layer"));
  assert_true (editor_enabled (win, "select-layer"));
  GtkWidget *editor = template_child (win, "model_editor");
  assert_true (gtk_widget_is_sensitive (editor));
  activate_editor (win, "select-layer", g_variant_new_int32 (0));
  want_parts_layer = 0;   /* sampled by the trainer's thread at its next report */
  assert_true (iterate_until (parts_on_wanted_layer, win, 30));
  activate (win, "pause", NULL);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_PAUSED);
  updates = caml_plot_view_get_update_count (parts);
  activate_editor (win, "select-layer", g_variant_new_int32 (1));
  want_parts_layer = 1;   /* sampled on a worker */
  assert_true (iterate_until (parts_on_wanted_layer, win, 30));
  assert_true (caml_plot_view_get_update_count (parts) > updates);
  activate (win, "stop", NULL);
  assert_true (iterate_until (run_ended, win, 30));
  /* the model did not change */
  assert_int_equal (caml_window_get_experiment (win)->n_layers, 3);

  const char *out_dir = g_getenv ("CAML_SCREENSHOT_DIR");
  g_autofree char *png = g_build_filename (out_dir != NULL ? out_dir : ".", "gui-parts.png",
                                           NULL);
  g_autoptr (GError) error = NULL;
  assert_true (caml_plot_view_write (parts, png, 4 * 400, 400, &error));

  /* A surface model exports its surface, χ maps and parts, nothing else. */
  assert_string_equal (gtk_button_get_label (GTK_BUTTON (template_child (win, "main_toggle"))),
                       "Surface and χ");
  assert_true (enabled (win, "export-surface"));
  assert_true (enabled (win, "export-chi"));
  assert_true (enabled (win, "export-parts"));
  assert_false (enabled (win, "export-words"));
  assert_false (enabled (win, "export-sigma"));
  assert_false (enabled (win, "export-accuracy"));   /* no accuracy for a surface */
  assert_false (enabled (win, "export-sigma-auc"));

  /* A model without a CA-NN has no parts. */
  activate (win, "reset", NULL);
  activate_editor (win, "clear-model", NULL);
  activate_editor (win, "add-layer", g_variant_new_string ("dense"));
  activate_editor (win, "layer-option", g_variant_new ("(sd)", "units", 1.0));
  assert_true (enabled (win, "train"));
  assert_int_equal (caml_window_get_parts_layer (win), -1);
  gtk_window_destroy (GTK_WINDOW (win));
}

/* The shade tag (g0 … g20) of the character at offset in the words text,
 * -2 for the grey of a word the model did not read, or -1. */
static int
shade_at (GtkTextBuffer *buffer, int offset)
{
  GtkTextIter at;
  gtk_text_buffer_get_iter_at_offset (buffer, &at, offset);
  int shade = -1;
  GSList *tags = gtk_text_iter_get_tags (&at);
  for (GSList *t = tags; t != NULL; t = t->next)
    {
      g_autofree char *name = NULL;
      g_object_get (t->data, "name", &name, NULL);
      if (name != NULL && name[0] == 'g')
        shade = atoi (name + 1);
      else if (name != NULL && g_str_equal (name, "cut"))
        shade = -2;
    }
  g_slist_free (tags);
  return shade;
}

/* A text model with a per-word gate offers the words page: the most and
 * least context-free words as two bar plots, rebuilt while training. */
static void
test_words (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-words-XXXXXX", NULL);
  g_autofree char *path = write_words_experiment (
    dir, "", "{ \"layer\": \"ca_bsfe\", \"dim\": 5, \"gate_dim\": 5 }", 400);
  CamlWindow *win = open_window_on (path);
  g_autoptr (GError) error = NULL;

  /* Shown before training: the untrained gates. */
  CamlPlotView *words = caml_window_get_plot_view (win, "words");
  assert_non_null (words);
  guint before_page = caml_plot_view_get_update_count (words);
  activate (win, "plots-page", g_variant_new_string ("words"));
  g_autoptr (GVariant) page = g_action_group_get_action_state (G_ACTION_GROUP (win),
                                                                "plots-page");
  assert_string_equal (g_variant_get_string (page, NULL), "words");
  assert_true (caml_plot_view_get_update_count (words) > before_page);

  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 120));
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  /* A classifier exports its test accuracy plot (the menu had no item). */
  assert_true (enabled (win, "export-accuracy"));
  assert_false (enabled (win, "export-sigma-auc"));
  /* Rebuilt from the samples taken while training (and the final one). */
  assert_true (caml_plot_view_get_update_count (words) >= before_page + 2);
  int n_bars = 0;
  caml_plot_view_get_bars (words, 0, &n_bars);
  assert_int_equal (n_bars, 2);
  const CamlPlotBars *most_free = caml_plot_view_get_bars (words, 0, NULL);
  const CamlPlotBars *most_sensitive = caml_plot_view_get_bars (words, 1, NULL);
  /* 25 a list, or — fewer than 50 words seen 20 times — split between
   * them (caml_words_split), no word in both */
  int n_free = caml_plot_bars_get_n (most_free);
  int n_sensitive = caml_plot_bars_get_n (most_sensitive);
  assert_true (n_free > 0 && n_free <= 25 && (n_free == n_sensitive || n_free == n_sensitive + 1));
  for (int i = 0; i < n_free; i++)
    for (int j = 0; j < n_sensitive; j++)
      assert_string_not_equal (caml_plot_bars_get_row (most_free, i, NULL),
                               caml_plot_bars_get_row (most_sensitive, j, NULL));
  double top, bottom;
  const char *free_word = caml_plot_bars_get_row (most_free, 0, &top);
  const char *sensitive_word = caml_plot_bars_get_row (most_sensitive, 0, &bottom);
  print_message ("most context-free \"%s\" χ̃ = %.3f, least \"%s\" χ̃ = %.3f\n", free_word, top,
                 sensitive_word, bottom);
  assert_true (top >= 0 && top <= 1 && bottom >= 0 && bottom <= 1);
  assert_true (top > bottom);
  /* The label words carry the sentiment: they keep their own vectors. */
  gboolean label_words_sensitive = FALSE;
  for (int i = 0; i < 5; i++)
    {
      const char *w = caml_plot_bars_get_row (most_sensitive, i, NULL);
      label_words_sensitive |= g_str_equal (w, "good") || g_str_equal (w, "bad");
    }
  assert_true (label_words_sensitive);

  /* Beside the lists, the first test texts word by word: a header with the
   * label and the model's P(1), then each word shaded by its χ̃ — the label
   * word of the first text as dark as the list says it is. */
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (caml_window_get_words_text (win));
  GtkTextIter start, end;
  gtk_text_buffer_get_bounds (buffer, &start, &end);
  g_autofree char *shown = gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
  assert_non_null (strstr (shown, "test text 0 · label "));
  assert_non_null (strstr (shown, "test text 11 · label "));
  assert_null (strstr (shown, "test text 12"));
  assert_non_null (strstr (shown, " · model: P(1) = 0."));
  const char *first = strstr (shown, "the movie is bad");
  assert_non_null (first);
  int shade = shade_at (buffer, (int) g_utf8_pointer_to_offset (shown, first)
                                + (int) strlen ("the movie is "));
  double bad_chi = -1;   /* 45 words are seen 20 times: the two lists hold them all */
  for (int list = 0; list < 2; list++)
    for (int i = 0; i < (list ? n_sensitive : n_free); i++)
      {
        double v;
        if (g_str_equal (caml_plot_bars_get_row (list ? most_sensitive : most_free, i, &v),
                         "bad"))
          bad_chi = v;
      }
  print_message ("\"bad\" in the first text: shade %d (χ̃ %.3f)\n", shade, bad_chi);
  assert_true (bad_chi >= 0);
  assert_int_equal (shade, caml_words_shade ((float) bad_chi));

  const char *out_dir = g_getenv ("CAML_SCREENSHOT_DIR");
  g_autofree char *png = g_build_filename (out_dir != NULL ? out_dir : ".", "gui-words.png",
                                           NULL);
  assert_true (caml_plot_view_write (words, png, 1120, 600, &error));

  /* Export Words Page: the page caml train writes, drawn on a worker thread
   * from the run's weights. */
  g_autofree char *page_path = g_build_filename (dir, "words.html", NULL);
  caml_window_export_words_page (win, page_path);
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_null (caml_window_get_error (win));
  g_autofree char *html = NULL;
  assert_true (g_file_get_contents (page_path, &html, NULL, NULL));
  assert_non_null (strstr (html, "<title>χ̃ for words: words, seed 0</title>"));
  assert_non_null (strstr (html, "<h2>20 test samples</h2>"));
  g_autofree char *bad_row = g_strdup_printf (">bad</span></td><td class=\"n\">%.3f</td>",
                                              bad_chi);
  assert_non_null (strstr (html, bad_row));   /* the same χ̃ as the bars */
  g_unlink (page_path);

  /* Saved weights record the vocabulary their word rows belong to (its
   * size at byte 12, after the magic and the version). */
  g_autofree char *weights_path = g_build_filename (dir, "words.weights", NULL);
  caml_window_save_weights (win, weights_path);
  assert_true (iterate_until (no_jobs, NULL, 30));
  g_autofree char *bytes = NULL;
  gsize n_bytes = 0;
  assert_true (g_file_get_contents (weights_path, &bytes, &n_bytes, NULL));
  assert_true (n_bytes > 24);
  guint32 version = 0, vocab_words = 0;
  memcpy (&version, bytes + 8, 4);
  memcpy (&vocab_words, bytes + 12, 4);
  assert_int_equal (GUINT32_FROM_LE (version), 2);
  assert_true (GUINT32_FROM_LE (vocab_words) > 0);
  g_unlink (weights_path);

  /* A text model: its first page shows the test accuracy, and only the
   * plots it has can be exported. */
  GtkWidget *main_toggle = template_child (win, "main_toggle");
  assert_string_equal (gtk_button_get_label (GTK_BUTTON (main_toggle)), "Test Accuracy");
  assert_true (enabled (win, "export-loss"));
  assert_true (enabled (win, "export-words"));
  assert_false (enabled (win, "export-surface"));
  assert_false (enabled (win, "export-chi"));
  assert_false (enabled (win, "export-parts"));
  assert_false (enabled (win, "export-sigma"));

  /* Data the model does not fit: once they are there, the words page keeps
   * nothing of the run. */
  activate (win, "data", g_variant_new_string ("xor"));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_experiment (win)->data.kind, CAML_DATA_XOR);
  assert_false (caml_window_has_run (win));
  gtk_text_buffer_get_bounds (buffer, &start, &end);
  g_autofree char *after = gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
  assert_null (strstr (after, "test text 0"));
  assert_null (strstr (after, "P(1)"));
  assert_null (caml_plot_view_get_bars (words, 0, NULL));
  assert_false (enabled (win, "export-words"));
  gtk_window_destroy (GTK_WINDOW (win));
  remove_words_experiment (dir);
}

static char *
plots_page (CamlWindow *win)
{
  g_autoptr (GVariant) page = g_action_group_get_action_state (G_ACTION_GROUP (win),
                                                                "plots-page");
  return g_strdup (g_variant_get_string (page, NULL));
}

/* The page the user chose comes back with a run that offers it again: an
 * edit that leaves no words to show goes to the main page, its undo back to
 * the words (it stayed on the main page). */
static void
test_words_page_chosen (void **state)
{
  (void) state;
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-words-XXXXXX", NULL);
  g_autofree char *path = write_words_experiment (
    dir, "", "{ \"layer\": \"ca_bsfe\", \"dim\": 5, \"gate_dim\": 5 }", 400);
  CamlWindow *win = open_window_on (path);
  activate (win, "plots-page", g_variant_new_string ("words"));

  /* A last layer three wide: the model does not fit the data, no run. */
  activate_editor (win, "add-layer", g_variant_new_string ("dense"));
  activate_editor (win, "layer-option", g_variant_new ("(sd)", "units", 3.0));
  assert_true (iterate_until (not_loading, win, 10));
  assert_false (enabled (win, "train"));
  g_autofree char *left = plots_page (win);
  assert_string_equal (left, "main");

  activate_editor (win, "undo", NULL);
  activate_editor (win, "undo", NULL);
  assert_true (iterate_until (can_train, win, 30));
  g_autofree char *back = plots_page (win);
  assert_string_equal (back, "words");
  gtk_window_destroy (GTK_WINDOW (win));
  remove_words_experiment (dir);
}

/* A per-position gate (CA-ATT, whose χ_i depends on the text with the mean
 * of the words as its query) offers the words page too: every word of the
 * test texts shaded by its χ there — words past max_tokens grey — and the
 * lists by mean χ. */
static void
test_words_per_position (void **state)
{
  (void) state;
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-words-XXXXXX", NULL);
  g_autofree char *path = write_words_experiment (
    dir, ", \"max_tokens\": 5",
    "{ \"layer\": \"embedding\", \"dim\": 8 }, { \"layer\": \"ca_att\", \"query\": \"mean\" }",
    300);
  CamlWindow *win = open_window_on (path);
  activate (win, "plots-page", g_variant_new_string ("words"));
  g_autoptr (GVariant) page = g_action_group_get_action_state (G_ACTION_GROUP (win),
                                                                "plots-page");
  assert_string_equal (g_variant_get_string (page, NULL), "words");
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 120));
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);

  CamlPlotView *words = caml_window_get_plot_view (win, "words");
  int n_bars = 0;
  caml_plot_view_get_bars (words, 0, &n_bars);
  assert_int_equal (n_bars, 2);
  double top, bottom;
  caml_plot_bars_get_row (caml_plot_view_get_bars (words, 0, NULL), 0, &top);
  caml_plot_bars_get_row (caml_plot_view_get_bars (words, 1, NULL), 0, &bottom);
  assert_true (top >= bottom && top <= 1 && bottom >= 0);

  /* The first five words of the first text have a shade, the last two,
   * which the model did not read, are grey. */
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (caml_window_get_words_text (win));
  GtkTextIter start, end;
  gtk_text_buffer_get_bounds (buffer, &start, &end);
  g_autofree char *shown = gtk_text_buffer_get_text (buffer, &start, &end, FALSE);
  const char *first = strstr (shown, "the movie is ");
  assert_non_null (first);
  int offset = (int) g_utf8_pointer_to_offset (shown, first);
  for (int k = 0; k < 7; k++)   /* the movie is good|bad wA | wB wC */
    {
      if (k < 5)
        assert_true (shade_at (buffer, offset) >= 0);
      else
        assert_int_equal (shade_at (buffer, offset), -2);
      const char *space = strchr (shown + (first - shown), ' ');
      assert_non_null (space);
      offset += (int) g_utf8_pointer_to_offset (first, space) + 1;
      first = space + 1;
    }
  gtk_window_destroy (GTK_WINDOW (win));
  remove_words_experiment (dir);
}

static void
test_sigma_maps (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-idx-XXXXXX", NULL);
  const char *names[] = { "train-images", "train-labels", "test-images", "test-labels" };
  char *paths[4];
  for (int i = 0; i < 4; i++)
    paths[i] = g_build_filename (dir, names[i], NULL);
  write_idx_pair (paths[0], paths[1], 200, 1);
  write_idx_pair (paths[2], paths[3], 120, 2);

  g_autofree char *json = g_strdup_printf (
    "{ \"name\": \"idx-ca-cnn\", \"seed\": 0,"
    "  \"data\": { \"idx\": { \"train_images\": \"%s\", \"train_labels\": \"%s\","
    "                        \"test_images\": \"%s\", \"test_labels\": \"%s\" } },"
    "  \"model\": [ { \"layer\": \"ca_cnn\", \"kernel\": 3, \"depth\": 2 },"
    "               { \"layer\": \"flatten\" },"
    "               { \"layer\": \"dense\", \"units\": 10, \"activation\": \"identity\" } ],"
    "  \"loss\": \"softmax_cross_entropy\","
    "  \"optimizer\": { \"type\": \"adagrad\", \"lr\": 0.01 },"
    "  \"training\": { \"steps\": 30, \"batch_size\": 20, \"eval_every\": 10 } }",
    paths[0], paths[1], paths[2], paths[3]);
  g_autofree char *exp_path = g_build_filename (dir, "idx.json", NULL);
  assert_true (g_file_set_contents (exp_path, json, -1, NULL));

  CamlWindow *win = caml_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (win));
  assert_true (iterate_until (is_mapped, win, 10));
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_load_file (win, exp_path, &error));
  /* Files load on a worker thread: the window says so, and Train (not
   * pressed here) would wait for them. */
  assert_true (caml_window_is_loading (win));
  assert_non_null (strstr (caml_window_get_data_text (win), "Loading"));
  assert_true (iterate_until (not_loading, win, 60));
  assert_null (caml_window_get_error (win));
  assert_true (enabled (win, "train"));

  /* The untrained maps are there before training; image models show no
   * surface. */
  assert_false (gtk_widget_is_visible (GTK_WIDGET (caml_window_get_plot_view (win, "surface"))));
  CamlPlotView *sigma = caml_window_get_plot_view (win, "sigma");
  assert_true (gtk_widget_is_visible (GTK_WIDGET (sigma)));
  assert_true (caml_window_get_sigma_snapshots (win, NULL) >= 1);
  assert_true (caml_plot_view_has_plot (sigma));

  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 120));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  iterate_until (always_false, NULL, 0.3);   /* the last report's update */
  double upper = -1;
  int n = caml_window_get_sigma_snapshots (win, &upper);
  print_message ("σ-maps: %d snapshots, scrubber up to %g\n", n, upper);
  assert_true (n >= 2);                       /* untrained + the final one at least */
  assert_true (upper == n - 1);
  assert_true (caml_plot_view_has_plot (sigma));
  assert_true (caml_plot_view_has_plot (caml_window_get_plot_view (win, "sigma-auc")));
  /* The accuracy and AUC plots span the run's steps as the loss plot
   * does, not just the evaluations (10…30 here; one at step 1000 spanned
   * 900…1100). The AUC starts at the untrained maps, step 0, and so do
   * the others (the AUC's 0…2 stood beside a loss plot's 1…10). */
  const CamlPlotAxis *loss_x =
    caml_plot_line_get_x_axis (caml_plot_view_get_line (caml_window_get_plot_view (win, "loss")));
  const CamlPlotAxis *acc_x = caml_plot_line_get_x_axis (
    caml_plot_view_get_line (caml_window_get_plot_view (win, "accuracy")));
  const CamlPlotAxis *auc_x = caml_plot_line_get_x_axis (
    caml_plot_view_get_line (caml_window_get_plot_view (win, "sigma-auc")));
  print_message ("x axes: loss %g…%g, accuracy %g…%g, AUC %g…%g\n", loss_x->lo, loss_x->hi,
                 acc_x->lo, acc_x->hi, auc_x->lo, auc_x->hi);
  assert_true (acc_x->lo == loss_x->lo && acc_x->hi == loss_x->hi);
  assert_true (auc_x->lo == loss_x->lo && auc_x->hi == loss_x->hi);
  assert_true (loss_x->lo == 0.0);
  /* Scrubbing back shows the first snapshot again, and its step is
   * marked on every plot by step; at the right end, none is. */
  guint updates = caml_plot_view_get_update_count (sigma);
  gtk_range_set_value (caml_window_get_sigma_scrubber (win), 0);
  assert_true (caml_plot_view_get_update_count (sigma) > updates);
  assert_int_equal (caml_session_get_marked_step (caml_window_get_session (win)), 0);
  const char *const by_step[] = { "loss", "accuracy", "sigma-auc" };
  for (size_t v = 0; v < G_N_ELEMENTS (by_step); v++)
    {
      size_t n_marks = 0;
      const CamlPlotEvent *marks = caml_plot_line_get_events (
        caml_plot_view_get_line (caml_window_get_plot_view (win, by_step[v])), &n_marks);
      gboolean marked = FALSE;
      for (size_t e = 0; e < n_marks; e++)
        marked |= marks[e].x == 0.0 && g_strcmp0 (marks[e].text, "shown") == 0;
      print_message ("%s: %zu markers\n", by_step[v], n_marks);
      assert_true (marked);
    }
  updates = caml_plot_view_get_update_count (sigma);
  gtk_range_set_value (caml_window_get_sigma_scrubber (win), n - 1);
  assert_true (caml_plot_view_get_update_count (sigma) > updates);
  assert_int_equal (caml_session_get_marked_step (caml_window_get_session (win)), -1);
  /* Stretch redraws the grid on the maps' own range, which the title
   * gives, and is remembered; off again, the title is the plain one. */
  const char *title = caml_plot_tiles_get_title (caml_plot_view_get_tiles (sigma));
  assert_null (strstr (title, "stretched"));
  /* … whose maps: the layer's index and type, in the CLI's grid's title */
  assert_non_null (strstr (title, ", step "));
  assert_non_null (strstr (title, ": σ-maps of layer 0 (ca_cnn) ("));
  updates = caml_plot_view_get_update_count (sigma);
  g_action_group_change_action_state (G_ACTION_GROUP (win), "sigma-stretch",
                                      g_variant_new_boolean (TRUE));
  assert_true (caml_plot_view_get_update_count (sigma) > updates);
  title = caml_plot_tiles_get_title (caml_plot_view_get_tiles (sigma));
  print_message ("stretched: %s\n", title);
  assert_non_null (strstr (title, "stretched"));
  assert_non_null (strstr (title, "χ black "));
  GSettings *settings = caml_application_get_settings (app);
  assert_true (g_settings_get_boolean (settings, "sigma-stretch"));
  g_action_group_change_action_state (G_ACTION_GROUP (win), "sigma-stretch",
                                      g_variant_new_boolean (FALSE));
  assert_false (g_settings_get_boolean (settings, "sigma-stretch"));
  title = caml_plot_tiles_get_title (caml_plot_view_get_tiles (sigma));
  assert_null (strstr (title, "stretched"));
  g_autofree char *png = g_build_filename (dir, "sigma.png", NULL);
  assert_true (caml_plot_view_write (sigma, png, 800, 300, &error));

  g_unlink (png);
  g_unlink (exp_path);
  for (int i = 0; i < 4; i++)
    {
      g_unlink (paths[i]);
      g_free (paths[i]);
    }
  g_rmdir (dir);
  gtk_window_destroy (GTK_WINDOW (win));
}

/* The window's copy of the run is at its last step: the losses, the
 * surface and the σ-maps the cards show. */
static long caught_up_steps;

static gboolean
caught_up (gpointer data)
{
  CamlWindow *win = CAML_WINDOW (data);
  CamlRun *run = caml_window_peek_run (win);
  long n = 0;
  caml_window_get_losses (win, &n);
  if (run == NULL || n != caught_up_steps)
    return FALSE;
  if (caml_run_has_surface (run) && caml_run_get_surface_step (run) != caught_up_steps)
    return FALSE;
  if (caml_run_has_sigma (run))
    {
      const CamlPlotTiles *tiles =
        caml_plot_view_get_tiles (caml_window_get_plot_view (win, "sigma"));
      g_autofree char *at = g_strdup_printf (", step %ld:", caught_up_steps);
      return tiles != NULL && strstr (caml_plot_tiles_get_title (tiles), at) != NULL;
    }
  return TRUE;
}

/* Runs `caml train` with args (NULL-terminated) and the window's thread
 * count into out. */
static void
cli_train (const char *caml, const char *out, const char *const *args)
{
  g_autofree char *threads = g_strdup_printf ("%d", caml_get_threads ());
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) caml);
  g_ptr_array_add (argv, (gpointer) "train");
  for (int i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  const char *tail[] = { "--threads", threads, "--out", out, "-q", NULL };
  for (int i = 0; tail[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) tail[i]);
  g_ptr_array_add (argv, NULL);
  g_autofree char *err = NULL;
  int status = 0;
  g_autoptr (GError) error = NULL;
  assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL,
                             NULL, NULL, NULL, &err, &status, &error));
  if (!g_spawn_check_wait_status (status, NULL))
    fail_msg ("caml train failed: %s", err);
  g_ptr_array_unref (argv);
}

/* Export Plot of `what` is, byte for byte, the PNG caml train wrote. */
static void
assert_export_is (CamlWindow *win, const char *what, const char *dir, const char *cli_png)
{
  g_autofree char *name = g_strdup_printf ("export-%s.png", what);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_export_plot (win, what, path, &error));
  g_autofree char *exported = NULL, *written = NULL;
  gsize n_exported = 0, n_written = 0;
  assert_true (g_file_get_contents (path, &exported, &n_exported, NULL));
  assert_true (g_file_get_contents (cli_png, &written, &n_written, NULL));
  print_message ("%s: exported %" G_GSIZE_FORMAT " bytes, caml train %" G_GSIZE_FORMAT "\n",
                 what, n_exported, n_written);
  if (n_exported != n_written || memcmp (exported, written, n_written) != 0)
    fail_msg ("the exported %s (%s) is not caml train's %s", what, path, cli_png);
  g_unlink (path);
}

/* One figure code: the workbench's exports of a trained run's loss,
 * surface and σ-maps are the files caml train writes for the same run. */
static void
test_export_matches_cli (void **state)
{
  const char *caml = g_getenv ("CAML_CLI");
  if (caml == NULL)
    {
      print_message ("CAML_CLI is not set: nothing to compare with\n");
      skip ();
    }
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-figures-XXXXXX", NULL);
  g_autofree char *cli_dir = g_build_filename (dir, "surface", NULL);

  /* A surface: the loss and the fitted surface beside its ground truth. */
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "steps_spin")), 300);
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  caught_up_steps = 300;
  assert_true (iterate_until (caught_up, win, 10));
  const char *surface_args[] = { "--preset", "surface-ca-nn-1", "--steps", "300", NULL };
  cli_train (caml, cli_dir, surface_args);
  g_autofree char *loss_png = g_build_filename (cli_dir, "loss.png", NULL);
  g_autofree char *surface_png = g_build_filename (cli_dir, "surface.png", NULL);
  assert_export_is (win, "loss", dir, loss_png);
  assert_export_is (win, "surface", dir, surface_png);
  gtk_window_destroy (GTK_WINDOW (win));

  /* An image model: its loss with the accuracy, and the σ-maps at the end. */
  const char *names[] = { "train-images", "train-labels", "test-images", "test-labels" };
  char *paths[4];
  for (int i = 0; i < 4; i++)
    paths[i] = g_build_filename (dir, names[i], NULL);
  write_idx_pair (paths[0], paths[1], 200, 1);
  write_idx_pair (paths[2], paths[3], 120, 2);
  g_autofree char *json = g_strdup_printf (
    "{ \"name\": \"bars\", \"seed\": 3,"
    "  \"data\": { \"idx\": { \"train_images\": \"%s\", \"train_labels\": \"%s\","
    "                        \"test_images\": \"%s\", \"test_labels\": \"%s\" } },"
    "  \"model\": [ { \"layer\": \"ca_cnn\", \"kernel\": 3, \"depth\": 2 },"
    "               { \"layer\": \"flatten\" },"
    "               { \"layer\": \"dense\", \"units\": 10, \"activation\": \"identity\" } ],"
    "  \"loss\": \"softmax_cross_entropy\","
    "  \"optimizer\": { \"type\": \"adagrad\", \"lr\": 0.01 },"
    "  \"training\": { \"steps\": 30, \"batch_size\": 20, \"eval_every\": 10 } }",
    paths[0], paths[1], paths[2], paths[3]);
  g_autofree char *exp_path = g_build_filename (dir, "bars.json", NULL);
  assert_true (g_file_set_contents (exp_path, json, -1, NULL));
  win = caml_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (win));
  assert_true (iterate_until (is_mapped, win, 10));
  g_autoptr (GError) error = NULL;
  assert_true (caml_window_load_file (win, exp_path, &error));
  assert_true (iterate_until (not_loading, win, 60));
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 120));
  caught_up_steps = 30;
  assert_true (iterate_until (caught_up, win, 10));
  g_autofree char *bars_dir = g_build_filename (dir, "bars", NULL);
  const char *bars_args[] = { exp_path, "--sigma-steps", "last", NULL };
  cli_train (caml, bars_dir, bars_args);
  g_autofree char *bars_loss = g_build_filename (bars_dir, "loss.png", NULL);
  g_autofree char *sigma_png = g_build_filename (bars_dir, "sigma-step30.png", NULL);
  assert_export_is (win, "loss", dir, bars_loss);
  assert_export_is (win, "sigma", dir, sigma_png);
  gtk_window_destroy (GTK_WINDOW (win));

  for (int i = 0; i < 4; i++)
    g_free (paths[i]);
  remove_tree (dir);
}

/* The loss plot's read-out gives the step's train loss and the evaluation
 * nearest it — before the first evaluation too. */
static void
test_loss_hover (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "steps_spin")), 100);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "eval_spin")), 50);
  assert_true (iterate_until (not_loading, win, 10));
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  iterate_until (always_false, NULL, 0.3);   /* the last report's update */
  CamlPlotView *loss = caml_window_get_plot_view (win, "loss");
  long n = 0;
  const float *losses = caml_window_get_losses (win, &n);
  assert_int_equal (n, 100);
  struct { double x; long step; long eval; } at[] = {
    { 10.2, 10, 50 }, { 74.0, 74, 50 }, { 75.0, 75, 50 }, { 76.0, 76, 100 }, { 100.0, 100, 100 },
  };
  for (size_t k = 0; k < G_N_ELEMENTS (at); k++)
    {
      g_autofree char *text = caml_plot_view_get_hover_text_at (loss, at[k].x, 0.5);
      assert_non_null (text);
      g_autofree char *head = g_strdup_printf ("step %ld  train %.4g", at[k].step,
                                               (double) losses[at[k].step - 1]);
      g_autofree char *tail = g_strdup_printf (" at step %ld", at[k].eval);
      if (!g_str_has_prefix (text, head) || !g_str_has_suffix (text, tail))
        fail_msg ("at %g: \"%s\" (expected \"%s…%s\")", at[k].x, text, head, tail);
    }
  gtk_window_destroy (GTK_WINDOW (win));
}

/* A plot whose scene is replaced faster than the worker draws it still
 * shows new images: each finished image is taken even though its scene has
 * moved on (they were all thrown away, so a fast run's loss plot stayed at
 * step 700 while training reached step 400,000). Counted in work, not
 * time: every scene the worker starts on is replaced before it finishes,
 * and every image it finishes must be taken. */
typedef struct {
  CamlPlotView *view;
  guint count;
} ViewCount;

static gboolean
render_started (gpointer data)
{
  ViewCount *c = data;
  return caml_plot_view_get_render_count (c->view) > c->count;
}

static gboolean
frame_drawn (gpointer data)
{
  return caml_plot_view_get_draw_count (CAML_PLOT_VIEW (data)) > 0;
}

static void
set_loss_scene (CamlPlotView *view, int scene)
{
  enum { N = 20000 };
  g_autofree double *x = g_new (double, N);
  g_autofree double *y = g_new (double, N);
  for (int i = 0; i < N; i++)
    {
      x[i] = i + 1;
      y[i] = 1.0 / (i + 1) + 0.01 * sin (i * 0.01 + scene);
    }
  CamlPlotSeries series[] = { { x, y, N, "loss", 0, FALSE } };
  CamlPlotLineOptions opts = { .title = "loss", .x_label = "step", .y_label = "loss",
                               .log_y = TRUE };
  caml_plot_view_set_line (view, caml_plot_line_new (&opts, series, 1, NULL, 0));
}

static void
test_plot_view_fast_scenes (void **state)
{
  GtkWidget *win = gtk_window_new ();
  CamlPlotView *view = CAML_PLOT_VIEW (caml_plot_view_new ());
  gtk_widget_set_size_request (GTK_WIDGET (view), 700, 400);
  gtk_window_set_child (GTK_WINDOW (win), GTK_WIDGET (view));
  gtk_window_present (GTK_WINDOW (win));
  assert_true (iterate_until (is_mapped, view, 10));

  enum { ROUNDS = 4, PER_RENDER = 3 };
  int scenes = 0;
  set_loss_scene (view, scenes++);
  /* The view's first image is drawn on the main thread. */
  assert_true (iterate_until (frame_drawn, view, 60));
  guint images_before = caml_plot_view_get_image_count (view);
  guint renders_before = caml_plot_view_get_render_count (view);
  set_loss_scene (view, scenes++);
  /* Each scene the worker starts on is replaced, more than once, before it
   * can finish (a render started and its image taken are two dispatches of
   * the main loop, and nothing runs between the wait and the new scenes).
   * The worker draws one image at a time, so when the (ROUNDS + 1)th has
   * started, ROUNDS have finished, all of scenes replaced meanwhile. */
  for (int round = 0; round <= ROUNDS; round++)
    {
      ViewCount started = { view, caml_plot_view_get_render_count (view) };
      assert_true (iterate_until (render_started, &started, 60));
      for (int k = 0; k < PER_RENDER; k++)
        set_loss_scene (view, scenes++);
    }
  guint renders = caml_plot_view_get_render_count (view) - renders_before;
  guint images = caml_plot_view_get_image_count (view) - images_before;
  print_message ("%d scenes set, %u images asked of the worker, %u taken\n",
                 scenes, renders, images);
  assert_int_equal (renders, ROUNDS + 1);
  /* Every finished image was taken, though its scene had moved on. */
  assert_int_equal (images, ROUNDS);
  gtk_window_destroy (GTK_WINDOW (win));
}

/* Stopped before the first evaluation, the accuracy pane says so instead
 * of promising an evaluation at a step the run will not reach. */
static void
test_stop_before_evaluation (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "rnn-sanity-gru"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (can_train, win, 30));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "steps_spin")), 1000000);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (template_child (win, "eval_spin")), 500000);
  assert_true (iterate_until (can_train, win, 30));
  assert_string_equal (placeholder_of (win, "accuracy"), "test accuracy appears at step 500000");
  activate (win, "train", NULL);
  assert_true (iterate_until (not_loading, win, 10));
  iterate_until (always_false, NULL, 0.2);
  activate (win, "stop", NULL);
  assert_true (iterate_until (run_ended, win, 30));
  iterate_until (always_false, NULL, 0.2);
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_STOPPED);
  long n = 0;
  caml_window_get_losses (win, &n);
  g_autofree char *expected = g_strdup_printf ("stopped at step %ld, before the first "
                                               "evaluation (step 500000)", n);
  print_message ("accuracy: %s\n", placeholder_of (win, "accuracy"));
  assert_string_equal (placeholder_of (win, "accuracy"), expected);
  gtk_window_destroy (GTK_WINDOW (win));
}

static int
compare_gaps (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

/* The same experiment headless, in this process: steps per second. */
static double
headless_rate (const CamlExperiment *exp)
{
  CamlDataset *train = NULL, *test = NULL;
  CamlProgress p;

  assert_true (caml_experiment_load_datasets (exp, &train, &test, NULL));
  CamlModel *model = caml_experiment_build_model (exp, &train->x_shape, NULL);
  assert_non_null (model);
  CamlTrainer *trainer = caml_trainer_new (exp, model, train, test);
  assert_true (caml_trainer_start (trainer, FALSE, NULL));
  caml_trainer_join (trainer);
  caml_trainer_get_progress (trainer, &p);
  caml_trainer_free (trainer);
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  return p.step / p.seconds;
}

/* Frame clock: how long each frame's update, layout and paint took. */
typedef struct {
  gint64  start, layout_end, paint_end;
  GArray *durations;   /* gint64 µs */
  /* frames over 16 ms: how long their update + layout and their paint took */
  GArray *slow_layout, *slow_paint;
} FrameTimes;

static void
on_before_paint (GdkFrameClock *clock, gpointer data)
{
  FrameTimes *ft = data;
  ft->start = g_get_monotonic_time ();
  ft->layout_end = ft->paint_end = 0;
}

/* Connected after GTK's own handlers of these phases, so they mark their end. */
static void
on_layout (GdkFrameClock *clock, gpointer data)
{
  ((FrameTimes *) data)->layout_end = g_get_monotonic_time ();
}

static void
on_paint (GdkFrameClock *clock, gpointer data)
{
  ((FrameTimes *) data)->paint_end = g_get_monotonic_time ();
}

static void
on_after_paint (GdkFrameClock *clock, gpointer data)
{
  FrameTimes *ft = data;
  if (ft->start != 0)
    {
      gint64 d = g_get_monotonic_time () - ft->start;
      g_array_append_val (ft->durations, d);
      if (d > 16000 && ft->layout_end != 0 && ft->paint_end >= ft->layout_end)
        {
          gint64 layout = ft->layout_end - ft->start, paint = ft->paint_end - ft->layout_end;
          g_array_append_val (ft->slow_layout, layout);
          g_array_append_val (ft->slow_paint, paint);
        }
    }
  ft->start = 0;
}

static double
percentile_ms (GArray *values, double q)
{
  if (values->len == 0)
    return 0;
  g_array_sort (values, compare_gaps);
  return g_array_index (values, gint64, (guint) (q * (values->len - 1))) / 1000.0;
}

/* Training with the window open and its plots updating, against the same
 * run headless (the trainer the CLI runs, in this process): throughput,
 * how long the main loop ever stalled, and how long each frame took. A
 * measurement, not a test of speed (the machine is shared): it runs only
 * with CAML_GUI_BENCHMARK set — to 1 for surface-ca-nn-2, or to a preset's
 * name; CAML_GUI_BENCHMARK_STEPS overrides its step count — and prints its
 * figures; the live learning-rate change it makes is checked. */
static void
test_throughput (void **state)
{
  const char *which = g_getenv ("CAML_GUI_BENCHMARK");
  if (which == NULL)
    {
      print_message ("throughput measurement skipped: set CAML_GUI_BENCHMARK=1 to run it\n");
      skip ();
    }
  const char *preset = g_str_equal (which, "1") ? "surface-ca-nn-2" : which;
  const char *steps_text = g_getenv ("CAML_GUI_BENCHMARK_STEPS");
  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = caml_presets_load (preset, &error);
  assert_non_null (exp);
  if (steps_text != NULL)
    exp->steps = atoi (steps_text);
  else if (g_str_equal (preset, "surface-ca-nn-2"))
    exp->steps = 30000;
  exp->eval_every = MAX (1, MIN (exp->eval_every, exp->steps / 10));

  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, preset));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 300));
  double best_cli = 0, best_gui = 0, sample_seconds = 0;
  Stall stall = { 0, 0, g_array_new (FALSE, FALSE, sizeof (gint64)) };
  FrameTimes frames = { 0, 0, 0, g_array_new (FALSE, FALSE, sizeof (gint64)),
                        g_array_new (FALSE, FALSE, sizeof (gint64)),
                        g_array_new (FALSE, FALSE, sizeof (gint64)) };
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (win));
  gulong before_id = g_signal_connect (clock, "before-paint", G_CALLBACK (on_before_paint), &frames);
  gulong after_id = g_signal_connect (clock, "after-paint", G_CALLBACK (on_after_paint), &frames);
  gulong layout_id = g_signal_connect (clock, "layout", G_CALLBACK (on_layout), &frames);
  gulong paint_id = g_signal_connect (clock, "paint", G_CALLBACK (on_paint), &frames);

  const char *rounds_text = g_getenv ("CAML_GUI_BENCHMARK_ROUNDS");
  int rounds = rounds_text != NULL ? CLAMP (atoi (rounds_text), 1, 50) : 2;
  GArray *ratios = g_array_new (FALSE, FALSE, sizeof (gint64));   /* ‰ */
  for (int round = 0; round < rounds; round++)
    {
      double cli = headless_rate (exp);
      best_cli = MAX (best_cli, cli);

      caml_window_set_experiment (win, caml_experiment_copy (exp), NULL, "benchmark");
      assert_true (iterate_until (not_loading, win, 300));
      iterate_until (always_false, NULL, 0.2);
      stall.last = 0;
      guint tick = g_timeout_add (5, on_stall_tick, &stall);
      activate (win, "train", NULL);
      if (round == 0)
        {
          /* A live learning-rate change reaches the trainer and is marked
           * (small enough not to change what is being measured). */
          double lr = caml_window_get_experiment (win)->optimizer.lr * 0.999;
          activate (win, "set-lr", g_variant_new_double (lr));
          assert_int_equal (caml_window_get_n_events (win), 1);
          assert_true (caml_window_get_experiment (win)->optimizer.lr == lr);
        }
      assert_true (iterate_until (run_ended, win, 3600));
      g_source_remove (tick);
      double rate = 0;
      caml_window_get_run_timing (win, &rate, &sample_seconds);
      best_gui = MAX (best_gui, rate);
      gint64 ratio = (gint64) (1000 * rate / cli);   /* the pair ran back to back */
      g_array_append_val (ratios, ratio);
    }
  g_signal_handler_disconnect (clock, before_id);
  g_signal_handler_disconnect (clock, after_id);
  g_signal_handler_disconnect (clock, layout_id);
  g_signal_handler_disconnect (clock, paint_id);
  print_message ("%s, %d steps: headless %.1f steps/s, with the window %.1f steps/s (%.1f %%); "
                 "%.3f s sampling plots; main loop stalls: p99 %.1f ms, max %.1f ms; "
                 "%u frames: median %.1f ms, p99 %.1f ms, max %.1f ms\n",
                 preset, exp->steps, best_cli, best_gui, 100 * best_gui / best_cli,
                 sample_seconds, percentile_ms (stall.gaps, 0.99), stall.max_gap / 1000.0,
                 frames.durations->len, percentile_ms (frames.durations, 0.5),
                 percentile_ms (frames.durations, 0.99), percentile_ms (frames.durations, 1.0));
  print_message ("%d rounds, each headless then in the window: median ratio %.1f %%, "
                 "lowest %.1f %%, highest %.1f %%\n", rounds, percentile_ms (ratios, 0.5) * 100,
                 percentile_ms (ratios, 0) * 100, percentile_ms (ratios, 1) * 100);
  g_array_unref (ratios);
  print_message ("%u frames over 16 ms; their update + layout: median %.1f ms, max %.1f ms; "
                 "paint: median %.1f ms, max %.1f ms\n",
                 frames.slow_layout->len, percentile_ms (frames.slow_layout, 0.5),
                 percentile_ms (frames.slow_layout, 1.0), percentile_ms (frames.slow_paint, 0.5),
                 percentile_ms (frames.slow_paint, 1.0));
  g_array_unref (stall.gaps);
  g_array_unref (frames.durations);
  g_array_unref (frames.slow_layout);
  g_array_unref (frames.slow_paint);
  caml_experiment_free (exp);
  gtk_window_destroy (GTK_WINDOW (win));
}

/* Switching a two-class model's data keeps a loss it can train with: one
 * output under the sigmoid (it became softmax, and Train was refused). */
static void
test_loss_follows_data (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "rnn-sanity-gru"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_experiment (win)->loss, CAML_LOSS_SIGMOID_XENT);
  activate (win, "data", g_variant_new_string ("xor"));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_experiment (win)->loss, CAML_LOSS_MSE);
  activate (win, "data", g_variant_new_string ("rnn_sanity"));
  assert_true (iterate_until (not_loading, win, 10));
  assert_int_equal (caml_window_get_experiment (win)->loss, CAML_LOSS_SIGMOID_XENT);
  assert_true (enabled (win, "train"));

  /* Trained, then made invalid: no accuracy curve of the gone run stays. */
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  gtk_spin_button_set_value (steps, 20);
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  iterate_until (always_false, NULL, 0.2);
  assert_true (caml_plot_view_has_plot (caml_window_get_plot_view (win, "accuracy")));
  activate_editor (win, "select-layer", g_variant_new_int32 (0));
  activate_editor (win, "remove-layer", NULL);
  assert_false (caml_model_editor_is_valid (CAML_MODEL_EDITOR (template_child (win,
                                                                               "model_editor"))));
  assert_false (caml_plot_view_has_plot (caml_window_get_plot_view (win, "accuracy")));
  gtk_window_destroy (GTK_WINDOW (win));
}

/* Held-out training data (data.validation_fraction) is called what it is:
 * not "test". */
static void
test_validation_labels (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-validation-XXXXXX", NULL);
  g_autofree char *path = write_words_experiment (dir, ", \"validation_fraction\": 0.2",
                                                  "{ \"layer\": \"ca_bsfe\" }", 20);
  CamlWindow *win = open_window_on (path);
  assert_non_null (strstr (caml_window_get_data_text (win), "validation samples"));
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  iterate_until (always_false, NULL, 0.2);
  g_autofree char *labels = loss_labels (win);
  assert_string_equal (labels, "train loss (smoothed)|validation loss");
  const CamlPlotLine *acc = caml_plot_view_get_line (caml_window_get_plot_view (win, "accuracy"));
  assert_non_null (acc);
  assert_string_equal (caml_plot_line_get_label (acc, 0), "validation accuracy");
  assert_non_null (strstr (status_text (win), "Validation accuracy"));
  gtk_window_destroy (GTK_WINDOW (win));
  remove_words_experiment (dir);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_plot_view_fast_scenes),
    cmocka_unit_test (test_loss_hover),
    cmocka_unit_test (test_previous_run),
    cmocka_unit_test (test_smoothing_follows_axis),
    cmocka_unit_test (test_loss_follows_data),
    cmocka_unit_test (test_validation_labels),
    cmocka_unit_test (test_ca_nn_parts),
    cmocka_unit_test (test_words),
    cmocka_unit_test (test_words_page_chosen),
    cmocka_unit_test (test_words_per_position),
    cmocka_unit_test (test_sigma_maps),
    cmocka_unit_test (test_export_matches_cli),
    cmocka_unit_test (test_stop_before_evaluation),
    cmocka_unit_test (test_throughput),
  };
  if (!gui_harness_init ("test-gui-plots"))
    return 1;
  return gui_harness_finish (cmocka_run_group_tests (tests, NULL, NULL));
}
