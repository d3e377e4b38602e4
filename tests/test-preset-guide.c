/* test-preset-guide.c — the presets' sections and measured figures
 * (studio/preset-guide.c), headless: every preset in exactly one section,
 * the sections as the paper has them, the build's measured.json read, and
 * a malformed one an error that names the file and the place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "preset-guide.h"
#include "presets.h"

static CamlPresetSection
section_of (const char *name)
{
  CamlExperiment *exp = caml_presets_load (name, NULL);
  assert_non_null (exp);
  CamlPresetSection s = caml_preset_section_of (exp);
  caml_experiment_free (exp);
  return s;
}

static void
test_sections (void **state)
{
  assert_int_equal (section_of ("xor-ca-nn"), CAML_PRESET_SECTION_SURFACES);
  assert_int_equal (section_of ("surface-ca-nn-2"), CAML_PRESET_SECTION_SURFACES);
  assert_int_equal (section_of ("mnist-ca-cnn"), CAML_PRESET_SECTION_IMAGES);
  assert_int_equal (section_of ("fashion-ca-res"), CAML_PRESET_SECTION_IMAGES);
  assert_int_equal (section_of ("imdb-ca-bsfe"), CAML_PRESET_SECTION_TEXT);
  assert_int_equal (section_of ("sst-average"), CAML_PRESET_SECTION_TEXT);
  /* SST data, but recurrent or attention layers: a sequence model */
  assert_int_equal (section_of ("sst-rnn-lstm"), CAML_PRESET_SECTION_SEQUENCES);
  assert_int_equal (section_of ("sst-attention-ca-att"), CAML_PRESET_SECTION_SEQUENCES);
  assert_int_equal (section_of ("rnn-sanity-gru"), CAML_PRESET_SECTION_SEQUENCES);

  /* Every preset in exactly one section. */
  g_auto (GStrv) all = caml_presets_list ();
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  guint total = 0;
  GStrv lists[CAML_PRESET_N_SECTIONS] = { NULL };
  for (int s = 0; s < CAML_PRESET_N_SECTIONS; s++)
    {
      assert_non_null (caml_preset_section_title (s));
      lists[s] = caml_presets_in_section (s);
      for (int i = 0; lists[s][i] != NULL; i++, total++)
        {
          assert_false (g_hash_table_contains (seen, lists[s][i]));
          g_hash_table_add (seen, lists[s][i]);
        }
    }
  assert_int_equal (total, g_strv_length (all));
  for (int i = 0; all[i] != NULL; i++)
    assert_true (g_hash_table_contains (seen, all[i]));
  /* Every built-in preset belongs to one of the paper's sections. */
  assert_null (lists[CAML_PRESET_SECTION_OTHER][0]);
  for (int s = 0; s < CAML_PRESET_N_SECTIONS; s++)
    g_strfreev (lists[s]);
}

static void
test_measured (void **state)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GHashTable) built = caml_preset_measures_load (&error);
  assert_null (error);
  assert_non_null (built);
  /* Each name the file gives is a preset. */
  GHashTableIter iter;
  gpointer key;
  g_hash_table_iter_init (&iter, built);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    assert_true (caml_presets_exists (key));

  const char *doc =
    "{ \"presets\": { \"xor-ca-nn\": [ { \"metric\": \"train_mse\", \"value\": 0.00021,"
    " \"sd\": 0.0001, \"runs\": 3, \"steps\": 1000, \"experiment\": \"xor\","
    " \"command\": \"caml reproduce --quick\", \"date\": \"2026-11-29\" } ] } }";
  g_autoptr (GHashTable) m = caml_preset_measures_parse (doc, -1, "measured.json", &error);
  assert_null (error);
  g_autofree char *text = caml_preset_measured_text (m, "xor-ca-nn");
  assert_string_equal (text, "measured: 0.00021 training MSE (caml reproduce --quick, "
                             "1000 steps, mean of 3 runs, 2026-11-29)");
  g_autofree char *none = caml_preset_measured_text (m, "xor-nn");
  assert_string_equal (none, "not measured yet");
  g_autofree char *none2 = caml_preset_measured_text (NULL, "xor-nn");
  assert_string_equal (none2, "not measured yet");
}

static void
expect_error (const char *doc, const char *message_part)
{
  g_autoptr (GError) error = NULL;
  GHashTable *m = caml_preset_measures_parse (doc, -1, "measured.json", &error);
  assert_null (m);
  assert_non_null (error);
  print_message ("%s\n", error->message);
  assert_true (g_str_has_prefix (error->message, "measured.json: "));
  assert_non_null (strstr (error->message, message_part));
}

static void
test_malformed (void **state)
{
  expect_error ("{ \"presets\": { \"x\": [ ", "measured.json: ");   /* json-glib's line:column */
  expect_error ("[1, 2]", "the document: not an object");
  expect_error ("{ }", "presets: missing");
  expect_error ("{ \"presets\": { \"xor-nn\": 3 } }", "presets.xor-nn: not a list");
  expect_error ("{ \"presets\": { \"xor-nn\": [ { \"metric\": \"m\", \"value\": \"high\" } ] } }",
                "presets.xor-nn[0].value: not a number");
  expect_error ("{ \"presets\": { \"xor-nn\": [ { \"value\": 1 } ] } }",
                "presets.xor-nn[0].metric: missing");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_sections),
    cmocka_unit_test (test_measured),
    cmocka_unit_test (test_malformed),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
