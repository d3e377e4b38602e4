/* test-cli-progress.c — caml train's progress bar fits the terminal: it
 * printed about 128 columns whatever the width, which wrap on an
 * 80-column terminal and leave a line behind at every redraw. */
#include <math.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cli-progress.h"

/* A text run as the user saw it: every field there is. */
static CamlProgress
text_run (void)
{
  CamlProgress p = {
    .state = CAML_TRAINER_RUNNING, .step = 385, .total_steps = 1500, .last_loss = 0.227229,
    .steps_per_second = 74.2, .tokens = 1234567, .tokens_per_second = 89471.3,
    .seconds = 12, .classification = TRUE, .n_rows = 3,
  };
  p.last_row.test_metric = 0.815367;
  return p;
}

static void
test_fits (void **state)
{
  (void) state;
  CamlProgress p = text_run ();
  for (int columns = 1; columns <= 200; columns++)
    {
      g_autofree char *line = caml_cli_progress_line (&p, "validation", columns);
      assert_true ((int) strlen (line) <= MAX (columns - 1, 1));
      assert_null (strchr (line, '\r'));
      assert_null (strchr (line, '\n'));
      if (columns >= 40)
        assert_non_null (strstr (line, "step 385/1500"));
    }
}

/* Wide: everything, with a 30-column bar. 80 columns: the figures that
 * matter most. A text run keeps tokens/s, which it is read by, and gives up
 * steps/s, then the bar (the percentage says as much); other runs keep the
 * bar and give up the rates. */
static void
test_what_goes (void **state)
{
  (void) state;
  CamlProgress p = text_run ();
  g_autofree char *wide = caml_cli_progress_line (&p, "test", 200);
  assert_true (g_str_has_prefix (wide, "[#######-----------------------]  26% step 385/1500  "
                                       "loss 0.2272  test acc 0.8154  74 steps/s  "
                                       "89471 tokens/s  eta 15s"));
  assert_non_null (strstr (wide, "test acc 0.8154"));
  assert_non_null (strstr (wide, "74 steps/s"));
  assert_non_null (strstr (wide, "89471 tokens/s"));
  assert_non_null (strstr (wide, "eta 15s"));

  g_autofree char *eighty = caml_cli_progress_line (&p, "test", 80);
  assert_string_equal (eighty, " 26% step 385/1500  loss 0.2272  test acc 0.8154  "
                               "89471 tokens/s  eta 15s");
  /* wide enough for the bar too, but not for steps/s */
  g_autofree char *ninety = caml_cli_progress_line (&p, "test", 90);
  assert_true (g_str_has_prefix (ninety, "[###----------]  26% step 385/1500"));
  assert_non_null (strstr (ninety, "89471 tokens/s  eta 15s"));
  assert_null (strstr (ninety, "steps/s"));

  CamlProgress images = p;
  images.tokens = 0;
  images.tokens_per_second = 0;
  g_autofree char *eighty_images = caml_cli_progress_line (&images, "test", 80);
  assert_true (eighty_images[0] == '[');
  assert_non_null (strstr (eighty_images, "loss 0.2272"));
  assert_non_null (strstr (eighty_images, "test acc 0.8154"));
  assert_null (strstr (eighty_images, "tokens/s"));

  g_autofree char *narrow = caml_cli_progress_line (&p, "test", 40);
  assert_true (g_str_has_prefix (narrow, " 26% step 385/1500  loss 0.2272"));

  /* before any evaluation: no metric; a long eta in minutes */
  p.n_rows = 0;
  p.steps_per_second = 1.0;
  g_autofree char *early = caml_cli_progress_line (&p, "test", 200);
  assert_null (strstr (early, "acc"));
  assert_non_null (strstr (early, "eta 18m35s"));
}

/* The first frame, before any step: a dash for the loss, not "loss nan". */
static void
test_no_loss_yet (void **state)
{
  (void) state;
  CamlProgress p = text_run ();
  p.step = 0;
  p.last_loss = NAN;
  p.n_rows = 0;
  p.steps_per_second = 0;
  g_autofree char *line = caml_cli_progress_line (&p, "test", 200);
  assert_non_null (strstr (line, "step 0/1500  loss -"));
  assert_null (strstr (line, "nan"));
  /* a loss that is NaN after a step is shown as it is */
  p.step = 1;
  g_autofree char *later = caml_cli_progress_line (&p, "test", 200);
  assert_non_null (strstr (later, "loss nan"));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_fits),
    cmocka_unit_test (test_what_goes),
    cmocka_unit_test (test_no_loss_yet),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
