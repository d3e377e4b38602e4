/* plot-png.h — what the plot tests share (test-plot.c,
 * test-plot-parallel.c): a plot's PNG read back. */
#pragma once

#include <cairo.h>

/* The PNG at path, flushed for reading its pixels; it must be width ×
 * height (else the running cmocka test fails). */
cairo_surface_t *load_png (const char *path, int width, int height);
