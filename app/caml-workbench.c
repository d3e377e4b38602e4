/* caml-workbench.c — the GTK workbench's entry point.
 *
 *   caml-workbench [FILE.json…] [--preset NAME]
 */
#include "caml-application.h"

int
main (int argc, char **argv)
{
  const char *cairo = caml_application_choose_renderer ();
  if (cairo != NULL)
    g_debug ("drawing with Cairo: %s (GSK_RENDERER overrides)", cairo);

  g_autoptr (CamlApplication) app = caml_application_new (G_APPLICATION_DEFAULT_FLAGS);
  return g_application_run (G_APPLICATION (app), argc, argv);
}
