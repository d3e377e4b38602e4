/* test-gui-inspect.c — the Inspect page and the surface's data controls
 * under Xvfb: the layer table's rows and the χ histogram of the untrained
 * model, which changes once it has trained; the train fraction and noise
 * fields editing the experiment and making the data again.
 *
 * Run by `meson test gui-inspect` through xvfb-run, like the other gui-*
 * tests. The statistics themselves are tested headless (test-layer-stats.c)
 * and the noise option in the engine (test-data-noise.c). */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <gtk/gtk.h>

#include "caml-application.h"
#include "caml-inspect-page.h"
#include "caml-plot-view.h"
#include "caml-run.h"
#include "caml-session.h"
#include "caml-window.h"
#include "gui-harness.h"

static void
shot (CamlWindow *win, const char *name)
{
  const char *dir = g_getenv ("CAML_SCREENSHOT_DIR");
  if (dir == NULL)
    return;
  g_autofree char *path = g_build_filename (dir, name, NULL);
  save_screenshot (GTK_WIDGET (win), path);
}

static void
test_inspect_page (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (can_train, win, 30));
  CamlSession *session = caml_window_get_session (win);
  activate (win, "plots-page", g_variant_new_string ("inspect"));
  GtkStack *stack = GTK_STACK (template_child (win, "plots_stack"));
  assert_string_equal (gtk_stack_get_visible_child_name (stack), "inspect");
  iterate_until (always_false, NULL, 0.2);

  /* The untrained model: a row per layer, χ of the CA-NN over 1000 test
   * samples, its histogram shown. */
  CamlInspectPage *page = CAML_INSPECT_PAGE (template_child (win, "inspect_page"));
  GListModel *rows = G_LIST_MODEL (gtk_column_view_get_model (caml_inspect_page_get_table (page)));
  assert_int_equal (g_list_model_get_n_items (rows), 2);
  const CamlLayerStats *stats = caml_session_get_layer_stats (session);
  assert_non_null (stats);
  assert_int_equal (stats->n_samples, 1000);
  assert_int_equal (stats->step, 0);
  assert_true (stats->layers[0].gated);
  assert_false (stats->layers[1].gated);
  assert_int_equal (stats->layers[0].count, 1000);
  double mean0 = caml_layer_stat_mean (&stats->layers[0]);
  assert_true (isfinite (mean0) && isfinite (caml_layer_stat_sd (&stats->layers[0])));
  guint64 bins0[CAML_CHI_BINS];
  memcpy (bins0, stats->layers[0].bins, sizeof bins0);
  int nonzero = 0;
  for (int b = 0; b < CAML_CHI_BINS; b++)
    nonzero += bins0[b] > 0;
  assert_true (nonzero >= 3);   /* not one spike: χ varies with the input */
  assert_int_equal (caml_inspect_page_get_layer (page), 0);   /* the first gated layer */
  CamlPlotView *hist = caml_inspect_page_get_histogram (page);
  assert_true (caml_plot_view_has_plot (hist));
  const CamlPlotFigure *before = caml_plot_view_get_figure (hist, NULL, NULL);
  shot (win, "inspect-untrained.png");
  /* Hovering a bin reads its share */
  g_autofree char *read = caml_plot_view_get_hover_text_at (hist, 0.52, 0.01);
  print_message ("hover: %s\n", read);
  assert_non_null (read);
  assert_non_null (strstr (read, "χ 0.50–0.55: "));
  assert_non_null (strstr (read, " % of "));
  assert_true (enabled (win, "export-plot"));

  /* The dense layer has no gate: no histogram, a word why. */
  caml_inspect_page_select_layer (page, 1);
  assert_false (caml_plot_view_has_plot (hist));
  assert_non_null (strstr (placeholder_of (win, "chi-histogram"), "select a CA layer"));
  caml_inspect_page_select_layer (page, 0);
  assert_true (caml_plot_view_has_plot (hist));

  /* Trained: other χ, another histogram, the selection kept. */
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 120));
  iterate_until (always_false, NULL, 0.2);
  stats = caml_session_get_layer_stats (session);
  assert_int_equal (stats->step, 1000);
  assert_int_equal (stats->layers[0].count, 1000);
  assert_true (memcmp (bins0, stats->layers[0].bins, sizeof bins0) != 0);
  assert_true (fabs (caml_layer_stat_mean (&stats->layers[0]) - mean0) > 1e-3);
  assert_int_equal (caml_inspect_page_get_layer (page), 0);
  assert_true (caml_plot_view_get_figure (hist, NULL, NULL) != before);
  shot (win, "inspect-trained.png");
  gtk_window_destroy (GTK_WINDOW (win));
}

static void
test_surface_data_controls (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (can_train, win, 30));
  CamlSession *session = caml_window_get_session (win);
  GtkSpinButton *fraction = GTK_SPIN_BUTTON (template_child (win, "fraction_spin"));
  GtkSpinButton *noise = GTK_SPIN_BUTTON (template_child (win, "noise_spin"));
  assert_true (gtk_widget_get_visible (template_child (win, "surface_data_grid")));
  assert_true (gtk_spin_button_get_value (fraction) == 0.01);
  assert_true (gtk_spin_button_get_value (noise) == 0.0);
  assert_int_equal (caml_run_get_train (caml_session_peek_run (session))->n, 66);

  /* The train fraction: an edit, the data made again. */
  type_into (win, fraction, "0.05");
  gtk_spin_button_update (fraction);
  assert_true (iterate_until (can_train, win, 30));
  assert_true (caml_window_get_experiment (win)->data.train_fraction == 0.05);
  assert_true (caml_window_is_modified (win));
  const CamlDataset *train = caml_run_get_train (caml_session_peek_run (session));
  assert_int_equal (train->n, 328);
  g_autofree float *clean = g_memdup2 (train->y, sizeof (float) * train->n);

  /* Noise: the same points, other targets. */
  type_into (win, noise, "0.1");
  gtk_spin_button_update (noise);
  assert_true (iterate_until (can_train, win, 30));
  assert_true (caml_window_get_experiment (win)->data.noise == 0.1);
  train = caml_run_get_train (caml_session_peek_run (session));
  assert_int_equal (train->n, 328);
  int changed = 0;
  for (int i = 0; i < train->n; i++)
    changed += train->y[i] != clean[i];
  assert_int_equal (changed, train->n);

  /* Out of range: clamped, and said. */
  type_into (win, noise, "20");
  gtk_spin_button_update (noise);
  assert_true (iterate_until (can_train, win, 30));
  assert_true (caml_window_get_experiment (win)->data.noise == CAML_MAX_NOISE);
  assert_true (notice_has (win, "Noise set to 10"));

  /* Back to none: the data as the preset's. */
  gtk_spin_button_set_value (noise, 0);
  assert_true (iterate_until (can_train, win, 30));
  train = caml_run_get_train (caml_session_peek_run (session));
  assert_memory_equal (train->y, clean, sizeof (float) * train->n);

  /* XOR has no grid: no such fields. */
  activate (win, "data", g_variant_new_string ("xor"));
  assert_true (iterate_until (can_train, win, 30));
  assert_false (gtk_widget_get_visible (template_child (win, "surface_data_grid")));
  gtk_window_destroy (GTK_WINDOW (win));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_inspect_page),
    cmocka_unit_test (test_surface_data_controls),
  };
  if (!gui_harness_init ("test-gui-inspect"))
    return 1;
  return gui_harness_finish (cmocka_run_group_tests (tests, NULL, NULL));
}
