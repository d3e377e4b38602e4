/* caml-format.h — numbers as the workbench writes them, in its fields and
 * in what it says about them. Plain C. */
#pragma once

#include <glib.h>

/* value > 0 as a field shows it: "0.01", "1000", "1e-7" (g_free): the
 * fewest significant digits that read back as the value. */
char *caml_format_positive (double value);

/* The one style of what the status line says: a sentence, its first
 * letter a capital ("Training the baseline: …", "Units set to 8: …").
 * A new string; NULL stays NULL. */
char *caml_format_sentence (const char *text);
