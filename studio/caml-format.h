/* caml-format.h — numbers as the workbench writes them, in its fields and
 * in what it says about them. Plain C. */
#pragma once

#include <glib.h>

/* value > 0 as a field shows it: "0.01", "1000", "1e-7" (g_free): the
 * fewest significant digits that read back as the value. */
char *caml_format_positive (double value);
