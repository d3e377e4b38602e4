/* test-gui-window.c — the workbench's window under Xvfb: autosave and
 * recovery, menus and the focus, recent files, several windows, saving and
 * opening runs, the banner, sizes of the window, quitting, the renderer.
 * What the session does behind the window is tested headless by
 * test-session.c; the other window tests are test-gui-editor.c and
 * test-gui-plots.c, test-gui-runs.c, all on gui-harness.c.
 *
 * Run by `meson test gui-window` through xvfb-run, with GSETTINGS_SCHEMA_DIR
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


static CamlWindow *
find_window (gboolean (*pred) (CamlWindow *win))
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (CAML_IS_WINDOW (l->data) && pred (CAML_WINDOW (l->data)))
      return CAML_WINDOW (l->data);
  return NULL;
}

static gboolean
shows_recovery (CamlWindow *win)
{
  const char *msg = caml_window_get_error (win);
  return msg != NULL && strstr (msg, "session that ended unexpectedly") != NULL;
}

static gboolean
is_recovered (CamlWindow *win)
{
  return caml_window_is_recovered (win);
}

static char *
plant_leftover (GPid pid, const char *tag, const char *contents)
{
  g_autofree char *name = g_strdup_printf ("%ld-%s.json", (long) pid, tag);
  char *path = g_build_filename (autosave_dir, name, NULL);
  assert_true (g_file_set_contents (path, contents, -1, NULL));
  return path;
}

/* An edit is autosaved within a second (and loads back equal); a save
 * removes the file. A crashed session's leftovers (a dead pid's files, one
 * corrupt) are offered at startup: Recover opens the readable one as a
 * modified "(recovered)" window, Discard deletes the corrupt one. Runs
 * first: the application looks for leftovers once, at its first window. */
static void
test_autosave (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_null (caml_window_get_autosave_path (win));
  activate_editor (win, "add-layer", g_variant_new_string ("dense"));
  assert_true (caml_window_is_modified (win));
  assert_true (iterate_until (autosave_written, win, 5));
  g_autofree char *own = caml_window_get_autosave_path (win);
  assert_true (g_str_has_prefix (own, autosave_dir));
  g_autoptr (GError) error = NULL;
  CamlExperiment *saved = caml_experiment_load_file (own, &error);
  assert_non_null (saved);
  assert_true (caml_experiment_equal (saved, caml_window_get_experiment (win)));

  g_autofree char *dir = g_dir_make_tmp ("caml-gui-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "edited.json", NULL);
  assert_true (caml_window_save_to_path (win, path, &error));
  assert_false (g_file_test (own, G_FILE_TEST_EXISTS));
  gtk_window_destroy (GTK_WINDOW (win));
  g_unlink (path);
  g_rmdir (dir);

  /* A crashed session: its pid is a child that has exited. */
  const char *argv[] = { "true", NULL };
  GPid dead = 0;
  int status = 0;
  assert_true (g_spawn_async (NULL, (char **) argv, NULL,
                              G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                              &dead, &error));
  assert_int_equal (waitpid (dead, &status, 0), dead);
  g_spawn_close_pid (dead);
  g_autofree char *json = caml_experiment_to_json (saved);
  g_autofree char *good = plant_leftover (dead, "good", json);
  g_autofree char *corrupt = plant_leftover (dead, "corrupt", "{ \"steps\": ");

  g_application_activate (G_APPLICATION (app));
  CamlWindow *first = find_window (shows_recovery);
  assert_non_null (first);
  print_message ("recovery banner: %s\n", caml_window_get_error (first));
  /* An offer, not an error, and nothing is recovered before Recover. */
  assert_non_null (strstr (caml_window_get_error (first),
                           "1 unsaved experiment from a session that ended unexpectedly "
                           "can be recovered"));
  GtkWidget *banner = template_child (first, "banner_revealer");
  assert_true (gtk_widget_has_css_class (GTK_WIDGET (banner), "info"));
  assert_non_null (strstr (caml_window_get_error (first), "corrupt.json"));
  assert_true (g_action_group_get_action_enabled (G_ACTION_GROUP (app), "recover-autosaves"));

  g_action_group_activate_action (G_ACTION_GROUP (app), "recover-autosaves", NULL);
  CamlWindow *recovered = find_window (is_recovered);
  assert_non_null (recovered);
  assert_true (caml_window_is_modified (recovered));
  assert_true (caml_experiment_equal (saved, caml_window_get_experiment (recovered)));
  assert_non_null (strstr (gtk_window_get_title (GTK_WINDOW (recovered)), "(recovered)"));
  assert_false (g_file_test (good, G_FILE_TEST_EXISTS));      /* now the window's own */
  assert_true (autosave_written (recovered));
  /* The corrupt one is still offered, to be discarded. */
  assert_true (shows_recovery (first));
  assert_true (g_file_test (corrupt, G_FILE_TEST_EXISTS));
  g_action_group_activate_action (G_ACTION_GROUP (app), "discard-autosaves", NULL);
  assert_false (g_file_test (corrupt, G_FILE_TEST_EXISTS));
  assert_null (caml_window_get_error (first));

  /* Saved elsewhere, a recovered experiment keeps its name: it may be one
   * set apart from the file it came from. */
  g_autofree char *recovered_own = caml_window_get_autosave_path (recovered);
  g_autofree char *later = g_dir_make_tmp ("caml-gui-XXXXXX", NULL);
  g_autofree char *elsewhere = g_build_filename (later, "elsewhere.json", NULL);
  assert_true (caml_window_save_to_path (recovered, elsewhere, &error));
  assert_string_equal (caml_window_get_experiment (recovered)->name, saved->name);
  g_unlink (elsewhere);
  g_rmdir (later);
  g_unlink (recovered_own);
  caml_experiment_free (saved);
  gtk_window_destroy (GTK_WINDOW (recovered));
  gtk_window_destroy (GTK_WINDOW (first));
}

/* What tools/run opens (caml-workbench --preset surface-ca-nn-2): the
 * preset, ready to train at once — Train enabled while the model is built
 * (on a worker thread, in a moment), and F5 and Ctrl+Return bound to it. */
static void
test_ready_to_train (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_string_equal (caml_window_get_experiment (win)->name, "surface-ca-nn-2");
  assert_true (enabled (win, "train"));
  assert_true (iterate_until (not_loading, win, 10));
  assert_true (caml_plot_view_has_plot (caml_window_get_plot_view (win, "surface")));
  assert_true (enabled (win, "train"));
  assert_null (caml_window_get_error (win));
  g_auto (GStrv) accels = gtk_application_get_accels_for_action (GTK_APPLICATION (app),
                                                                 "win.train");
  assert_true (g_strv_contains ((const char *const *) accels, "F5"));
  assert_true (g_strv_contains ((const char *const *) accels, "<Control>Return"));
  gtk_window_destroy (GTK_WINDOW (win));
}

/* The mapped item of a popover menu that reads text. */
static GtkWidget *
find_menu_item (GtkWidget *root, const char *text)
{
  for (GtkWidget *c = gtk_widget_get_first_child (root); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      if (g_str_equal (G_OBJECT_TYPE_NAME (c), "GtkModelButton") && gtk_widget_get_mapped (c))
        {
          g_autofree char *label = NULL;
          g_object_get (c, "text", &label, NULL);
          if (label != NULL && g_str_equal (label, text))
            return c;
        }
      GtkWidget *found = find_menu_item (c, text);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The header bar's ☰ button. */
static GtkMenuButton *
find_main_menu (GtkWidget *root)
{
  for (GtkWidget *c = gtk_widget_get_first_child (root); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      const char *tip = gtk_widget_get_tooltip_text (c);
      if (GTK_IS_MENU_BUTTON (c) && tip != NULL && g_str_equal (tip, "Main menu"))
        return GTK_MENU_BUTTON (c);
      GtkMenuButton *found = find_main_menu (c);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static gboolean
focus_settled (gpointer data)
{
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (data));
  return focus == NULL || gtk_widget_get_mapped (focus);
}

/* A menu that closes gives the keyboard back: GTK 4.8 left the focus in
 * the closed popover when the item chosen was in a submenu (☰ → Style →
 * Dark), where F5 and the other shortcuts reached nothing until a click.
 * Fails without the window's focus_rescue. */
static void
test_focus_after_menu (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_true (iterate_until (is_mapped, win, 10));
  GtkWidget *bar = gtk_window_get_titlebar (GTK_WINDOW (win));
  GtkMenuButton *menu = find_main_menu (bar);
  assert_non_null (menu);
  GtkPopover *popover = gtk_menu_button_get_popover (menu);
  assert_non_null (popover);
  gtk_menu_button_popup (menu);
  assert_true (iterate_until (is_mapped, popover, 10));
  /* Style opens its submenu, and Dark is chosen there, by the keyboard
   * as a user does (Space or Enter on the focused item). */
  GtkWidget *style = find_menu_item (GTK_WIDGET (popover), "Style");
  assert_non_null (style);
  assert_true (gtk_widget_grab_focus (style));
  assert_true (gtk_widget_activate (style));
  iterate_until (always_false, NULL, 0.3);
  GtkWidget *dark = find_menu_item (GTK_WIDGET (popover), "Dark");
  assert_non_null (dark);
  assert_true (gtk_widget_grab_focus (dark));
  assert_true (gtk_widget_activate (dark));
  assert_true (iterate_until (focus_settled, win, 5));
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (win));
  print_message ("after the menu closed, the focus is on %s\n",
                 focus != NULL ? G_OBJECT_TYPE_NAME (focus) : "nothing");
  assert_false (focus != NULL && gtk_widget_is_ancestor (focus, GTK_WIDGET (popover)));
  g_action_group_activate_action (G_ACTION_GROUP (app), "style", g_variant_new_string ("system"));
  gtk_window_destroy (GTK_WINDOW (win));
}

/* ☰ → Threads → 1 Thread: the runs started after train on one thread (the
 * engine's count and the setting say so), and All Cores goes back. */
static void
test_threads_menu (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_true (iterate_until (is_mapped, win, 10));
  GtkMenuButton *menu = find_main_menu (gtk_window_get_titlebar (GTK_WINDOW (win)));
  assert_non_null (menu);
  GtkPopover *popover = gtk_menu_button_get_popover (menu);
  gtk_menu_button_popup (menu);
  assert_true (iterate_until (is_mapped, popover, 10));
  GtkWidget *threads = find_menu_item (GTK_WIDGET (popover), "Threads");
  assert_non_null (threads);
  assert_true (gtk_widget_grab_focus (threads));
  assert_true (gtk_widget_activate (threads));
  iterate_until (always_false, NULL, 0.3);
  g_autofree char *all = g_strdup_printf ("All Cores (%d)", caml_get_cores ());
  assert_non_null (find_menu_item (GTK_WIDGET (popover), all));
  GtkWidget *one = find_menu_item (GTK_WIDGET (popover), "1 Thread");
  assert_non_null (one);
  assert_true (gtk_widget_grab_focus (one));
  assert_true (gtk_widget_activate (one));
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (caml_get_threads (), 1);
  g_autoptr (GVariant) state1 = g_action_group_get_action_state (G_ACTION_GROUP (app), "threads");
  assert_int_equal (g_variant_get_int32 (state1), 1);
  g_action_group_activate_action (G_ACTION_GROUP (app), "threads", g_variant_new_int32 (0));
  iterate_until (always_false, NULL, 0.1);
  g_autoptr (GVariant) state0 = g_action_group_get_action_state (G_ACTION_GROUP (app), "threads");
  assert_int_equal (g_variant_get_int32 (state0), 0);
  assert_true (caml_get_threads () >= 1);
  gtk_window_destroy (GTK_WINDOW (win));
}

/* Saves the window's weights and tells whether they are the bytes of file. */
static gboolean
window_weights_equal (CamlWindow *win, const char *dir, const char *file)
{
  g_autofree char *out = g_build_filename (dir, "out.weights", NULL);
  caml_window_save_weights (win, out);   /* written on a worker thread */
  assert_true (iterate_until (no_jobs, NULL, 30));
  g_autofree char *a = NULL, *b = NULL;
  gsize na = 0, nb = 0;
  assert_true (g_file_get_contents (file, &a, &na, NULL));
  assert_true (g_file_get_contents (out, &b, &nb, NULL));
  g_unlink (out);
  return na == nb && memcmp (a, b, na) == 0;
}

static gboolean
surface_at_40 (gpointer data)
{
  CamlRun *run = caml_window_peek_run (CAML_WINDOW (data));
  return run != NULL && caml_run_get_surface_step (run) == 40;
}

/* Save Run writes what `caml train --resume` reads; Open Run (a folder, as
 * the CLI writes it too) stands the run at the saved step with its curves,
 * and Train goes on exactly: the weights at the end are those of one run
 * of the total, through minibatches, dropout, Adam and em_steps. A run at
 * its last step says to raise Steps; raised, it goes on. A state that no
 * longer fits (another seed) is said, and the run starts at step 0 from the
 * weights; a folder without experiment.json changes nothing; Save Run into a
 * folder with other files is refused. Open Recent lists the run's folder,
 * and opens it as a run again. */
static void
test_open_run (void **state)
{
  (void) state;
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-run-XXXXXX", NULL);
  g_autofree char *exp_path = g_build_filename (dir, "exp.json", NULL);
  g_autofree char *saved = g_build_filename (dir, "saved", NULL);
  g_autofree char *reference = g_build_filename (dir, "reference.weights", NULL);
  g_autofree char *busy = g_build_filename (dir, "busy", NULL);
  g_autofree char *busy_file = g_build_filename (busy, "summary.json", NULL);
  g_autoptr (GError) error = NULL;
  static const char json[] =
    "{ \"name\": \"resumable\", \"seed\": 2,"
    "  \"data\": { \"builtin\": \"surface\", \"grid\": 21, \"train_fraction\": 0.3 },"
    "  \"model\": [ { \"layer\": \"dense\", \"units\": 6, \"activation\": \"tanh\" },"
    "               { \"layer\": \"dropout\", \"rate\": 0.2 },"
    "               { \"layer\": \"ca_nn\", \"units\": 3, \"activation\": \"tanh\" },"
    "               { \"layer\": \"dense\", \"units\": 1 } ],"
    "  \"optimizer\": { \"type\": \"adam\", \"lr\": 0.02, \"em_steps\": 5 },"
    "  \"training\": { \"steps\": 40, \"batch_size\": 8, \"eval_every\": 10 } }";
  assert_true (g_file_set_contents (exp_path, json, -1, NULL));

  /* Trained to 40 and saved; then on to 100 in the same window (exactly
   * one run of 100: the reference). */
  CamlWindow *win = open_window_on (exp_path);
  assert_false (enabled (win, "save-run"));   /* nothing trained yet */
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  assert_true (iterate_until (is_enabled_save_run, win, 10));
  caml_window_save_run (win, saved);
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_null (caml_window_get_error (win));
  assert_true (notice_has (win, "Saved the run"));
  for (int i = 0; caml_run_resumable_files[i] != NULL; i++)
    {
      g_autofree char *path = g_build_filename (saved, caml_run_resumable_files[i], NULL);
      assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
    }
  /* … not into a folder that holds other files */
  g_mkdir (busy, 0700);
  assert_true (g_file_set_contents (busy_file, "{}", -1, NULL));
  caml_window_save_run (win, busy);
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_non_null (caml_window_get_error (win));
  assert_non_null (strstr (caml_window_get_error (win), "summary.json"));
  caml_window_show_error (win, NULL);

  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  gtk_spin_button_set_value (steps, 100);     /* goes on from step 40 */
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  caml_window_save_weights (win, reference);
  assert_true (iterate_until (no_jobs, NULL, 30));
  gtk_window_destroy (GTK_WINDOW (win));

  /* Opened: at step 40 with its 40 losses, not started. */
  win = caml_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (win));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (caml_window_open_run (win, saved, &error));
  assert_true (iterate_until (can_train, win, 30));
  assert_null (caml_window_get_error (win));
  assert_true (notice_has (win, "at step 40"));
  assert_true (iterate_until (surface_at_40, win, 10));   /* the surface's title: step 40 */
  {
    /* Open Recent lists the run as its folder */
    g_auto (GStrv) recent = g_settings_get_strv (caml_application_get_settings (app),
                                                 "recent-files");
    g_autofree char *canonical = g_canonicalize_filename (saved, NULL);
    assert_non_null (recent[0]);
    assert_string_equal (recent[0], canonical);
  }
  CamlRun *run = caml_window_peek_run (win);
  assert_non_null (run);
  CamlProgress p;
  caml_run_get_progress (run, &p);
  assert_int_equal (p.step, 40);
  assert_int_equal (p.state, CAML_TRAINER_IDLE);
  long n_losses = 0;
  g_free (caml_run_copy_losses (run, &n_losses));
  assert_int_equal (n_losses, 40);
  /* at its last step: Train says to raise Steps */
  activate (win, "train", NULL);
  assert_true (notice_has (win, "raise Steps"));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_IDLE);
  /* raised: the run is built again on the same weights and state */
  steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  gtk_spin_button_set_value (steps, 100);
  assert_true (iterate_until (can_train, win, 30));
  caml_run_get_progress (caml_window_peek_run (win), &p);
  assert_int_equal (p.step, 40);
  assert_false (enabled (win, "forget-previous"));   /* the same curves: not a previous run */
  /* … and its weights are on disk: not set aside (a banner offered to save them) */
  assert_false (enabled (win, "save-set-aside"));
  assert_null (caml_window_get_error (win));
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  assert_int_equal (caml_window_get_state (win), CAML_TRAINER_FINISHED);
  assert_true (window_weights_equal (win, dir, reference));

  /* Another seed in the saved experiment: its state no longer fits. */
  {
    g_autofree char *path = g_build_filename (saved, "experiment.json", NULL);
    g_autofree char *text = NULL;
    assert_true (g_file_get_contents (path, &text, NULL, NULL));
    char *seed = strstr (text, "\"seed\": 2");
    assert_non_null (seed);
    seed[strlen ("\"seed\": ")] = '9';
    assert_true (g_file_set_contents (path, text, -1, NULL));
  }
  assert_true (caml_window_open_run (win, saved, &error));
  assert_true (iterate_until (can_train, win, 30));
  assert_non_null (caml_window_get_error (win));
  assert_non_null (strstr (caml_window_get_error (win), "state was not loaded"));
  assert_non_null (strstr (caml_window_get_error (win), "trainer.state"));
  caml_run_get_progress (caml_window_peek_run (win), &p);
  assert_int_equal (p.step, 0);

  /* Not a run: nothing changes. */
  const CamlExperiment *before = caml_window_get_experiment (win);
  assert_false (caml_window_open_run (win, busy, &error));
  assert_non_null (strstr (error->message, "no experiment.json"));
  g_clear_error (&error);
  assert_true (caml_window_get_experiment (win) == before);

  /* A folder on the command line (or dropped on the icon) opens as a run. */
  gtk_window_destroy (GTK_WINDOW (win));
  g_autoptr (GFile) folder = g_file_new_for_path (saved);
  g_application_open (G_APPLICATION (app), &folder, 1, "");
  win = CAML_WINDOW (gtk_application_get_active_window (GTK_APPLICATION (app)));
  assert_non_null (win);
  assert_true (iterate_until (can_train, win, 30));
  assert_string_equal (caml_window_get_experiment (win)->name, "resumable");
  gtk_window_destroy (GTK_WINDOW (win));

  /* … and so does the folder from Open Recent: its weights and state load
   * (the state, of seed 2, no longer fits the experiment's seed 9). */
  g_action_group_activate_action (G_ACTION_GROUP (app), "open-recent",
                                  g_variant_new_string (saved));
  win = CAML_WINDOW (gtk_application_get_active_window (GTK_APPLICATION (app)));
  assert_non_null (win);
  assert_true (iterate_until (can_train, win, 30));
  assert_string_equal (caml_window_get_experiment (win)->name, "resumable");
  assert_non_null (caml_window_get_error (win));
  assert_non_null (strstr (caml_window_get_error (win), "state was not loaded"));
  gtk_window_destroy (GTK_WINDOW (win));

  remove_tree (dir);
}

/* A window of 1024×700 shows every plot and control without cutting any
 * off: the window's content asks for no more (the header bar included), and
 * at that size neither the side bar nor the plots need to scroll — which
 * is what they do in a smaller window. For a surface, an image and a text
 * model (its words page), those whose data is there. */
static gboolean
scrolls (GtkWidget *scroller)
{
  GtkScrolledWindow *sw = GTK_SCROLLED_WINDOW (scroller);
  GtkAdjustment *adj[] = { gtk_scrolled_window_get_hadjustment (sw),
                           gtk_scrolled_window_get_vadjustment (sw) };
  for (int i = 0; i < 2; i++)
    if (gtk_adjustment_get_upper (adj[i]) - gtk_adjustment_get_lower (adj[i])
        > gtk_adjustment_get_page_size (adj[i]) + 0.5)
      {
        print_message ("%s scrolls: %g of %g\n", i == 0 ? "across" : "down",
                       gtk_adjustment_get_page_size (adj[i]),
                       gtk_adjustment_get_upper (adj[i]) - gtk_adjustment_get_lower (adj[i]));
        return TRUE;
      }
  return FALSE;
}

static void
test_small_window (void **state)
{
  static const char *const presets[] = { "surface-ca-nn-2", "mnist-ca-cnn", "sst-ca-bsfe" };

  for (guint p = 0; p < G_N_ELEMENTS (presets); p++)
    {
      g_autoptr (GError) error = NULL;
      CamlExperiment *exp = caml_presets_load (presets[p], &error);
      assert_non_null (exp);
      char *missing = caml_data_source_missing (exp->data.kind);
      if (exp->data.kind == CAML_DATA_SST)
        {
          g_autofree char *sst = g_build_filename (caml_shared_datasets_dir (), "sst",
                                                   "sentiment-train", NULL);
          if (!g_file_test (sst, G_FILE_TEST_EXISTS))
            missing = g_strdup_printf ("%s is not there (../shared/datasets)", sst);
        }
      if (missing != NULL)
        {
          print_message ("%s skipped: %s\n", presets[p], missing);
          g_free (missing);
          caml_experiment_free (exp);
          continue;
        }
      CamlWindow *win = caml_window_new (GTK_APPLICATION (app));
      gtk_window_set_default_size (GTK_WINDOW (win), 1024, 700);
      caml_window_set_experiment (win, exp, NULL, presets[p]);
      gtk_window_present (GTK_WINDOW (win));
      assert_true (iterate_until (is_mapped, win, 10));
      assert_true (iterate_until (not_loading, win, 120));
      assert_null (caml_window_get_error (win));
      if (exp->data.kind == CAML_DATA_SST)
        activate (win, "plots-page", g_variant_new_string ("words"));

      GtkWidget *child = gtk_window_get_child (GTK_WINDOW (win));
      GtkWidget *bar = gtk_window_get_titlebar (GTK_WINDOW (win));
      int min_width, min_height, bar_height;
      gtk_widget_measure (child, GTK_ORIENTATION_HORIZONTAL, -1, &min_width, NULL, NULL, NULL);
      gtk_widget_measure (child, GTK_ORIENTATION_VERTICAL, -1, &min_height, NULL, NULL, NULL);
      gtk_widget_measure (bar, GTK_ORIENTATION_VERTICAL, -1, &bar_height, NULL, NULL, NULL);
      print_message ("%s: the window's content needs at least %d × %d (+ %d for the header "
                     "bar)\n", presets[p], min_width, min_height, bar_height);
      assert_true (min_width <= 1024);
      assert_true (min_height + bar_height <= 700);

      /* At 1024×700 (the frame included) nothing scrolls yet. */
      iterate_until (always_false, NULL, 0.5);
      assert_true (gtk_widget_get_width (GTK_WIDGET (win)) <= 1024);
      assert_true (gtk_widget_get_height (GTK_WIDGET (win)) <= 700);
      GtkWidget *sidebar = template_child (win, "sidebar_scroller");
      GtkWidget *plots = template_child (win, "plots_scroller");
      print_message ("%s at 1024×700: side bar %d × %d, plots %d × %d\n", presets[p],
                     gtk_widget_get_width (sidebar), gtk_widget_get_height (sidebar),
                     gtk_widget_get_width (plots), gtk_widget_get_height (plots));
      gboolean sidebar_scrolls = scrolls (sidebar), plots_scroll = scrolls (plots);
      assert_false (sidebar_scrolls);
      assert_false (plots_scroll);
      gtk_window_destroy (GTK_WINDOW (win));
    }
}

/* Narrower than about 1240 px the side bar gives up width (to 325 px at
 * 975 and below), so that at 900 px the plots still fit across; it is 420
 * again in a wide window, and a width the user dragged it to stays. */
static gboolean
scrolls_across (GtkWidget *scroller)
{
  GtkAdjustment *adj = gtk_scrolled_window_get_hadjustment (GTK_SCROLLED_WINDOW (scroller));
  return gtk_adjustment_get_upper (adj) - gtk_adjustment_get_lower (adj)
         > gtk_adjustment_get_page_size (adj) + 0.5;
}

static void
test_narrow_window (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  GtkPaned *paned = GTK_PANED (template_child (win, "main_paned"));
  GtkWidget *plots = template_child (win, "plots_scroller");

  gtk_window_set_default_size (GTK_WINDOW (win), 1360, 860);
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (gtk_paned_get_position (paned), 420);

  gtk_window_set_default_size (GTK_WINDOW (win), 900, 700);
  iterate_until (always_false, NULL, 0.5);
  print_message ("at 900×700: window %d, side bar %d, plots %d\n",
                 gtk_widget_get_width (GTK_WIDGET (win)), gtk_paned_get_position (paned),
                 gtk_widget_get_width (plots));
  assert_int_equal (gtk_paned_get_position (paned), 325);
  assert_true (gtk_widget_get_width (GTK_WIDGET (win)) <= 900);
  assert_false (scrolls_across (plots));

  gtk_window_set_default_size (GTK_WINDOW (win), 1110, 800);
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (gtk_paned_get_position (paned), 370);
  gtk_window_set_default_size (GTK_WINDOW (win), 1360, 860);
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (gtk_paned_get_position (paned), 420);

  /* Below the window's smallest width GTK clamps the divider; fitting goes
   * on once the window is wide again (it stopped: a narrow side bar for
   * good). */
  gtk_window_set_default_size (GTK_WINDOW (win), 700, 500);
  iterate_until (always_false, NULL, 0.5);
  print_message ("at 700×500: window %d, side bar %d\n",
                 gtk_widget_get_width (GTK_WIDGET (win)), gtk_paned_get_position (paned));
  gtk_window_set_default_size (GTK_WINDOW (win), 1360, 860);
  iterate_until (always_false, NULL, 0.5);
  assert_int_equal (gtk_paned_get_position (paned), 420);

  /* dragged by the user: kept */
  gtk_paned_set_position (paned, 380);
  gtk_window_set_default_size (GTK_WINDOW (win), 1000, 800);
  iterate_until (always_false, NULL, 0.3);
  assert_int_equal (gtk_paned_get_position (paned), 380);
  gtk_window_destroy (GTK_WINDOW (win));
}

static char *
recent_target (GMenuModel *menu, int i)
{
  g_autoptr (GVariant) v = g_menu_model_get_item_attribute_value (menu, i,
                                                                  G_MENU_ATTRIBUTE_TARGET,
                                                                  G_VARIANT_TYPE_STRING);
  return v != NULL ? g_variant_dup_string (v, NULL) : NULL;
}

static CamlWindow *
window_with_lr (double lr)
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l != NULL; l = l->next)
    if (CAML_IS_WINDOW (l->data)
        && fabs (caml_window_get_experiment (l->data)->optimizer.lr - lr) < 1e-12)
      return CAML_WINDOW (l->data);
  return NULL;
}

/* Saved and opened experiments go first in Open Recent (eight at most);
 * opening one goes the way of Open — a window with changes keeps them — and
 * a file that is gone leaves the list. */
static void
test_recent_files (void **state)
{
  GSettings *settings = caml_application_get_settings (app);
  assert_non_null (settings);
  g_settings_set_strv (settings, "recent-files", NULL);
  GMenuModel *menu = caml_application_get_recent_menu (app);
  assert_int_equal (g_menu_model_get_n_items (menu), 1);   /* "No Recent Experiments" */
  assert_false (g_action_group_get_action_enabled (G_ACTION_GROUP (app), "no-recent"));

  g_autofree char *dir = g_dir_make_tmp ("caml-gui-recent-XXXXXX", NULL);
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  char *paths[10];
  for (int i = 0; i < 10; i++)
    {
      g_autofree char *name = g_strdup_printf ("e%d.json", i);
      paths[i] = g_build_filename (dir, name, NULL);
      activate (win, "set-lr", g_variant_new_double (0.01 * (i + 1)));
      g_autoptr (GError) error = NULL;
      assert_true (caml_window_save_to_path (win, paths[i], &error));
    }
  assert_int_equal (g_menu_model_get_n_items (menu), CAML_MAX_RECENT);
  g_autofree char *first = recent_target (menu, 0);
  g_autofree char *last = recent_target (menu, CAML_MAX_RECENT - 1);
  assert_string_equal (first, paths[9]);
  assert_string_equal (last, paths[2]);

  /* Open e3 with unsaved changes in the window: they stay in it. */
  activate (win, "set-lr", g_variant_new_double (0.5));
  assert_true (caml_window_is_modified (win));
  g_action_group_activate_action (G_ACTION_GROUP (app), "open-recent",
                                  g_variant_new_string (paths[3]));
  CamlWindow *opened = window_with_lr (0.04);
  assert_non_null (opened);
  assert_true (opened != win);
  assert_true (caml_window_get_experiment (win)->optimizer.lr == 0.5);
  g_autofree char *now_first = recent_target (menu, 0);
  assert_string_equal (now_first, paths[3]);
  gtk_window_destroy (GTK_WINDOW (opened));

  /* A file that is gone. */
  g_unlink (paths[5]);
  g_action_group_activate_action (G_ACTION_GROUP (app), "open-recent",
                                  g_variant_new_string (paths[5]));
  assert_non_null (caml_window_get_error (win));
  assert_non_null (strstr (caml_window_get_error (win), "no longer there"));
  g_auto (GStrv) left = g_settings_get_strv (settings, "recent-files");
  assert_false (g_strv_contains ((const char *const *) left, paths[5]));
  assert_int_equal (g_strv_length (left), CAML_MAX_RECENT - 1);

  gtk_window_destroy (GTK_WINDOW (win));
  for (int i = 0; i < 10; i++)
    {
      g_unlink (paths[i]);
      g_free (paths[i]);
    }
  g_rmdir (dir);
}

/* `caml-workbench missing.json bad.json good.json`: every file that cannot
 * be opened is named in a banner — the first one too, which the second
 * used to replace — and the file that opens gets a window of its own, not
 * the one whose banner lists the others. */
static void
test_open_several (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-open-XXXXXX", NULL);
  g_autofree char *missing = g_build_filename (dir, "missing.json", NULL);
  g_autofree char *bad = g_build_filename (dir, "bad.json", NULL);
  g_autofree char *good = g_build_filename (dir, "good.json", NULL);
  assert_true (g_file_set_contents (bad, "{ \"steps\": ", -1, NULL));
  assert_true (g_file_set_contents (good, "{ \"name\": \"good\", \"training\": { \"steps\": 77 } }",
                                    -1, NULL));
  GList *before = g_list_copy (gtk_application_get_windows (GTK_APPLICATION (app)));
  GFile *files[3] = { g_file_new_for_path (missing), g_file_new_for_path (bad),
                      g_file_new_for_path (good) };

  g_application_open (G_APPLICATION (app), files, 3, "");
  CamlWindow *errors = NULL, *opened = NULL;
  int n_new = 0;
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    {
      if (!CAML_IS_WINDOW (l->data))
        continue;
      CamlWindow *win = CAML_WINDOW (l->data);
      gboolean is_new = g_list_find (before, l->data) == NULL;
      n_new += is_new;
      /* (An open window may take the errors: the active one.) */
      if (has_error_with (win, "missing.json"))
        errors = win;
      if (is_new && g_strcmp0 (caml_window_get_experiment (win)->name, "good") == 0)
        opened = win;
    }
  assert_non_null (errors);
  print_message ("banner: %s\n", caml_window_get_error (errors));
  assert_true (has_error_with (errors, "bad.json"));          /* both, one line each */
  assert_non_null (strchr (caml_window_get_error (errors), '\n'));
  assert_non_null (opened);
  assert_true (opened != errors);
  assert_null (caml_window_get_error (opened));
  assert_int_equal (caml_window_get_experiment (opened)->steps, 77);
  assert_int_equal (n_new, g_list_find (before, errors) != NULL ? 1 : 2);

  gtk_window_destroy (GTK_WINDOW (errors));
  gtk_window_destroy (GTK_WINDOW (opened));
  for (int i = 0; i < 3; i++)
    g_object_unref (files[i]);
  g_list_free (before);
  g_unlink (bad);
  g_unlink (good);
  g_rmdir (dir);
}

/* Saved to another file, a name that follows its file follows it
 * (test-session.c, test_save_as_name), and the title shows it. */
static void
test_save_as_title (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-name-XXXXXX", NULL);
  g_autofree char *mine = g_build_filename (dir, "mine.json", NULL);
  g_autoptr (GError) error = NULL;
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_string_equal (gtk_window_get_title (GTK_WINDOW (win)), "xor-ca-nn");
  assert_true (caml_window_save_to_path (win, mine, &error));
  assert_string_equal (caml_window_get_experiment (win)->name, "mine");
  assert_string_equal (gtk_window_get_title (GTK_WINDOW (win)), "mine");
  assert_false (caml_window_is_modified (win));
  gtk_window_destroy (GTK_WINDOW (win));
  g_unlink (mine);
  g_rmdir (dir);
}

/* win may be gone (freed): only compared. */
static gboolean
is_open (gconstpointer win)
{
  return g_list_find (gtk_application_get_windows (GTK_APPLICATION (app)), win) != NULL;
}

static gboolean
has_file (gpointer path)
{
  return g_file_test (path, G_FILE_TEST_EXISTS);
}

static gboolean
all_closed (gpointer windows)
{
  for (CamlWindow **w = windows; *w != NULL; w++)
    if (is_open (*w))
      return FALSE;
  return TRUE;
}

/* app.quit asks about each window with unsaved changes before it closes
 * any: Cancel keeps every window open; Discard and Save (choosing a file)
 * go on, and then all close — without GLib criticals (fatal here). */
static void
test_quit (void **state)
{
  CamlWindow *clean = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  CamlWindow *edited = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  CamlWindow *unsaved = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  CamlWindow *windows[] = { clean, edited, unsaved, NULL };
  assert_true (iterate_until (is_mapped, unsaved, 10));
  activate_editor (edited, "add-layer", g_variant_new_string ("dense"));
  activate_editor (unsaved, "add-layer", g_variant_new_string ("dense"));

  /* Cancel: nothing closes, not even the window without changes. */
  g_action_group_activate_action (G_ACTION_GROUP (app), "quit", NULL);
  CamlWindow *asking = dialog_of (edited, GTK_TYPE_MESSAGE_DIALOG) != NULL ? edited : unsaved;
  GtkWindow *question = dialog_of (asking, GTK_TYPE_MESSAGE_DIALOG);
  assert_non_null (question);
  assert_null (dialog_of (asking == edited ? unsaved : edited, GTK_TYPE_MESSAGE_DIALOG));
  for (CamlWindow **w = windows; *w != NULL; w++)
    assert_true (is_open (*w));
  gtk_dialog_response (GTK_DIALOG (question), GTK_RESPONSE_CANCEL);
  iterate_until (always_false, NULL, 0.1);
  for (CamlWindow **w = windows; *w != NULL; w++)
    assert_true (is_open (*w));
  assert_null (dialog_of (edited, GTK_TYPE_MESSAGE_DIALOG));
  assert_null (dialog_of (unsaved, GTK_TYPE_MESSAGE_DIALOG));

  /* Again: Discard one, Save the other into a file chosen then. */
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-quit-XXXXXX", NULL);
  /* The chooser suggests the experiment's name. */
  g_autofree char *path = g_build_filename (dir, "surface-ca-nn-1.json", NULL);
  g_action_group_activate_action (G_ACTION_GROUP (app), "quit", NULL);
  for (int answered = 0; answered < 2; answered++)
    {
      asking = dialog_of (edited, GTK_TYPE_MESSAGE_DIALOG) != NULL ? edited : unsaved;
      question = dialog_of (asking, GTK_TYPE_MESSAGE_DIALOG);
      assert_non_null (question);
      for (CamlWindow **w = windows; *w != NULL; w++)
        assert_true (is_open (*w));
      if (asking == edited)
        {
          gtk_dialog_response (GTK_DIALOG (question), 1);   /* Discard */
          continue;
        }
      gtk_dialog_response (GTK_DIALOG (question), 2);       /* Save */
      GtkWindow *chooser = dialog_of (unsaved, GTK_TYPE_FILE_CHOOSER_DIALOG);
      assert_non_null (chooser);
      assert_true (iterate_until (is_mapped, chooser, 10));
      iterate_until (always_false, NULL, 0.2);   /* it has its suggested name */
      g_autoptr (GFile) file = g_file_new_for_path (path);
      assert_true (gtk_file_chooser_set_file (GTK_FILE_CHOOSER (chooser), file, NULL));
      iterate_until (always_false, NULL, 0.2);   /* the folder is read */
      /* As a click does (the chooser checks the name before it answers). */
      GtkWidget *accept = gtk_dialog_get_widget_for_response (GTK_DIALOG (chooser),
                                                              GTK_RESPONSE_ACCEPT);
      assert_non_null (accept);
      gtk_widget_activate (accept);
      assert_true (iterate_until (has_file, path, 10));
    }
  assert_true (iterate_until (all_closed, windows, 10));
  g_autoptr (GError) error = NULL;
  CamlExperiment *saved = caml_experiment_load_file (path, &error);
  assert_non_null (saved);
  assert_int_equal (saved->n_layers, 3);   /* the preset's two and the one added */
  caml_experiment_free (saved);
  g_unlink (path);
  g_rmdir (dir);
}

/* A window with no changes but a value still being typed is asked too,
 * before any window closes: Cancel then keeps all of them open. */
static void
test_quit_pending_edit (void **state)
{
  CamlWindow *dirty = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  CamlWindow *typing = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_true (iterate_until (is_mapped, typing, 10));
  activate_editor (dirty, "add-layer", g_variant_new_string ("dense"));
  type_into (typing, GTK_SPIN_BUTTON (template_child (typing, "steps_spin")), "500");
  assert_false (caml_window_is_modified (typing));

  g_action_group_activate_action (G_ACTION_GROUP (app), "quit", NULL);
  for (int answered = 0; answered < 2; answered++)
    {
      CamlWindow *asking = dialog_of (dirty, GTK_TYPE_MESSAGE_DIALOG) != NULL ? dirty : typing;
      GtkWindow *question = dialog_of (asking, GTK_TYPE_MESSAGE_DIALOG);
      assert_non_null (question);
      assert_true (is_open (dirty) && is_open (typing));
      gtk_dialog_response (GTK_DIALOG (question),
                           asking == dirty ? 1 /* Discard */ : GTK_RESPONSE_CANCEL);
      iterate_until (always_false, NULL, 0.1);
      if (asking == typing)
        break;
    }
  /* Cancelled in the typing window: both still open, its edit taken. */
  assert_true (is_open (dirty) && is_open (typing));
  assert_int_equal (caml_window_get_experiment (typing)->steps, 500);
  gtk_window_destroy (GTK_WINDOW (dirty));
  gtk_window_destroy (GTK_WINDOW (typing));
}

/* A window destroyed while it asks (its question dies without an answer)
 * does not stall the quit: the next window asks. */
static void
test_quit_asking_destroyed (void **state)
{
  CamlWindow *a = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-1"));
  CamlWindow *b = CAML_WINDOW (caml_application_open_preset (app, "surface-ca-nn-2"));
  assert_true (iterate_until (is_mapped, b, 10));
  activate_editor (a, "add-layer", g_variant_new_string ("dense"));
  activate_editor (b, "add-layer", g_variant_new_string ("dense"));
  g_action_group_activate_action (G_ACTION_GROUP (app), "quit", NULL);
  CamlWindow *asking = dialog_of (a, GTK_TYPE_MESSAGE_DIALOG) != NULL ? a : b;
  CamlWindow *other = asking == a ? b : a;
  assert_null (dialog_of (other, GTK_TYPE_MESSAGE_DIALOG));
  gtk_window_destroy (GTK_WINDOW (asking));
  iterate_until (always_false, NULL, 0.1);
  GtkWindow *question = dialog_of (other, GTK_TYPE_MESSAGE_DIALOG);
  assert_non_null (question);
  gtk_dialog_response (GTK_DIALOG (question), 1);   /* Discard: the quit ends it */
  CamlWindow *rest[] = { other, NULL };
  assert_true (iterate_until (all_closed, rest, 10));
}

/* Train, Save or Close with the focus in a field nobody typed into change
 * nothing: GTK would re-read its rounded display (lr 0.000015 shows as
 * 0.00002 at five digits) and change the value. */
static void
test_focus_without_edit (void **state)
{
  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = caml_presets_load ("surface-ca-nn-1", &error);
  assert_non_null (exp);
  exp->optimizer.lr = 0.000015;
  CamlWindow *win = caml_window_new (GTK_APPLICATION (app));
  caml_window_set_experiment (win, exp, NULL, "rounding");
  gtk_window_present (GTK_WINDOW (win));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_false (caml_window_is_modified (win));
  gtk_widget_grab_focus (template_child (win, "lr_spin"));
  gtk_window_close (GTK_WINDOW (win));
  iterate_until (always_false, NULL, 0.2);
  /* Unchanged, so it closed without asking. */
  assert_false (is_open (win));
}

/* Cairo instead of software OpenGL, unless the user chose. (The windows of
 * this test run already have their renderer: GSK reads the variable once.) */
static void
test_renderer_choice (void **state)
{
  g_autofree char *saved = g_strdup (g_getenv ("GSK_RENDERER"));
  g_autofree char *saved_soft = g_strdup (g_getenv ("LIBGL_ALWAYS_SOFTWARE"));

  g_setenv ("GSK_RENDERER", "ngl", TRUE);
  g_setenv ("LIBGL_ALWAYS_SOFTWARE", "1", TRUE);
  assert_null (caml_application_choose_renderer ());
  assert_string_equal (g_getenv ("GSK_RENDERER"), "ngl");

  g_unsetenv ("GSK_RENDERER");
  assert_non_null (caml_application_choose_renderer ());
  assert_string_equal (g_getenv ("GSK_RENDERER"), "cairo");

  /* Without a GPU render node, or on Xvfb (no DRI3), also Cairo. */
  g_unsetenv ("GSK_RENDERER");
  g_unsetenv ("LIBGL_ALWAYS_SOFTWARE");
  const char *reason = caml_application_choose_renderer ();
  print_message ("this machine: %s\n", reason != NULL ? reason : "hardware OpenGL, GSK's choice");

  if (saved_soft != NULL)
    g_setenv ("LIBGL_ALWAYS_SOFTWARE", saved_soft, TRUE);
  else
    g_unsetenv ("LIBGL_ALWAYS_SOFTWARE");
  if (saved != NULL)
    g_setenv ("GSK_RENDERER", saved, TRUE);
  else
    g_unsetenv ("GSK_RENDERER");
}

/* A correction ("Learning rate kept at 0.1: must be > 0") stays in the status
 * line: rebuilding the run loaded from a file does not cover it with a
 * second "Loaded the weights from …". */
static void
test_notice_kept (void **state)
{
  g_autofree char *dir = g_dir_make_tmp ("caml-gui-notice-XXXXXX", NULL);
  g_autofree char *exp_path = g_build_filename (dir, "xor.json", NULL);
  g_autofree char *wa = g_build_filename (dir, "a.weights", NULL);
  static const char json[] =
    "{ \"name\": \"xor\", \"seed\": 0, \"data\": { \"builtin\": \"xor\" },"
    "  \"model\": [ { \"layer\": \"ca_nn\", \"units\": 1, \"activation\": \"tanh\" } ],"
    "  \"loss\": \"mse\", \"optimizer\": { \"type\": \"adam\", \"lr\": 0.1 },"
    "  \"training\": { \"steps\": 20, \"batch_size\": 0, \"eval_every\": 10 } }";
  assert_true (g_file_set_contents (exp_path, json, -1, NULL));
  g_autoptr (GError) error = NULL;
  CamlExperiment *exp = caml_experiment_load_data (json, -1, "xor", &error);
  assert_non_null (exp);
  CamlDataset *train = NULL, *test = NULL;
  assert_true (caml_experiment_load_datasets (exp, &train, &test, &error));
  CamlModel *model = caml_experiment_build_model_for (exp, train, &error);
  assert_non_null (model);
  assert_true (caml_weights_save (model, wa, &error));

  CamlWindow *win = open_window_on (exp_path);
  caml_window_load_weights (win, wa);
  assert_true (iterate_until (can_train, win, 30));
  assert_string_equal (caml_window_get_last_notice (win), "Loaded the weights from a.weights");
  GtkSpinButton *lr = GTK_SPIN_BUTTON (template_child (win, "lr_spin"));
  type_into (win, lr, "0");
  gtk_spin_button_update (lr);
  type_into (win, lr, "0.2");   /* a change that rebuilds the run */
  gtk_spin_button_update (lr);
  assert_string_equal (status_text (win), "Learning rate kept at 0.1: must be > 0");
  assert_true (iterate_until (no_jobs, NULL, 30));
  assert_true (iterate_until (can_train, win, 30));
  /* (The notice, not the label: a slow machine may outlast its 6 s.) */
  assert_string_equal (caml_window_get_last_notice (win), "Learning rate kept at 0.1: must be > 0");
  gtk_window_destroy (GTK_WINDOW (win));
  caml_model_free (model);
  caml_dataset_free (train);
  caml_dataset_free (test);
  caml_experiment_free (exp);
  g_unlink (wa);
  g_unlink (exp_path);
  g_rmdir (dir);
}

/* The set-aside weights of a replaced run (test-session.c: when they are
 * kept, saved and dropped) show in the banner, with Save Them… enabled
 * until they are saved or dismissed. */
static void
test_set_aside_banner (void **state)
{
  CamlWindow *win = CAML_WINDOW (caml_application_open_preset (app, "xor-ca-nn"));
  assert_true (iterate_until (is_mapped, win, 10));
  assert_true (iterate_until (not_loading, win, 10));
  GtkSpinButton *steps = GTK_SPIN_BUTTON (template_child (win, "steps_spin"));
  assert_false (enabled (win, "save-set-aside"));
  gtk_spin_button_set_value (steps, 50);
  assert_true (iterate_until (not_loading, win, 10));
  activate (win, "train", NULL);
  assert_true (iterate_until (run_ended, win, 60));
  gtk_spin_button_set_value (steps, 40);
  assert_true (iterate_until (not_loading, win, 10));
  assert_true (caml_window_has_set_aside_weights (win, NULL));
  assert_true (enabled (win, "save-set-aside"));
  assert_non_null (strstr (caml_window_get_error (win), "trained to step 50"));
  GtkButton *save = GTK_BUTTON (template_child (win, "banner_button"));
  assert_true (gtk_widget_get_visible (GTK_WIDGET (save)));
  assert_string_equal (gtk_actionable_get_action_name (GTK_ACTIONABLE (save)),
                       "win.save-set-aside");
  activate (win, "dismiss-banner", NULL);   /* Dismiss: they go */
  assert_false (caml_window_has_set_aside_weights (win, NULL));
  assert_false (enabled (win, "save-set-aside"));
  assert_null (caml_window_get_error (win));
  gtk_window_destroy (GTK_WINDOW (win));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    /* first: the application looks for leftovers once, at its first window */
    cmocka_unit_test (test_autosave),
    cmocka_unit_test (test_threads_menu),
    cmocka_unit_test (test_ready_to_train),
    cmocka_unit_test (test_notice_kept),
    cmocka_unit_test (test_set_aside_banner),
    cmocka_unit_test (test_focus_after_menu),
    cmocka_unit_test (test_open_run),
    cmocka_unit_test (test_save_as_title),
    cmocka_unit_test (test_recent_files),
    cmocka_unit_test (test_open_several),
    cmocka_unit_test (test_small_window),
    cmocka_unit_test (test_narrow_window),
    cmocka_unit_test (test_quit),
    cmocka_unit_test (test_quit_pending_edit),
    cmocka_unit_test (test_quit_asking_destroyed),
    cmocka_unit_test (test_focus_without_edit),
    cmocka_unit_test (test_renderer_choice),
  };
  if (!gui_harness_init ("test-gui-window"))
    return 1;
  return gui_harness_finish (cmocka_run_group_tests (tests, NULL, NULL));
}
