/* cli-progress.h — the progress bar of `caml train` on a terminal. */
#pragma once

#include "caml.h"

/* The columns of the terminal on fd: its window size, else $COLUMNS, else
 * 80. */
int caml_cli_terminal_columns (int fd);

/* The progress line for p — bar, percentage, step, loss, the latest
 * evaluation's metric on evaluated_on ("test", "validation"), steps/s,
 * tokens/s, eta — in at most columns − 1 characters (a full line would
 * wrap on terminals that wrap at the last column and leave a line behind
 * at each redraw): the bar shrinks first, then tokens/s, steps/s, the eta,
 * the bar and the metric go, in that order; a line still too long is cut.
 * No "\r", no padding.
 * g_free the result. */
char *caml_cli_progress_line (const CamlProgress *p, const char *evaluated_on, int columns);
