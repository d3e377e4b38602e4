/* alloc-count.h — counts GLib allocations, for the tests that check that a
 * pass allocates nothing once its buffers are reserved. A test executable
 * that links alloc-count.c is linked with -Wl,--wrap for each GLib
 * allocation function (tests/meson.build), so the calls of the engine and
 * of the test (not those inside GLib) go through a counter first: no hook
 * in the engine. */
#pragma once

#include <glib.h>

/* The allocations made since the program started. */
guint caml_test_allocations (void);
