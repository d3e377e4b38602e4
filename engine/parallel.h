/* parallel.h — private to the engine: split work in two halves. */
#pragma once

#include <glib.h>

/* Called as func (0, data) and func (1, data), possibly at the same time on
 * two threads: each call does its half. */
typedef void (*CamlPartFunc) (int part, gpointer data);

/* How many parts run at once (1 or 2). The first call also sets OpenBLAS to
 * one thread for the whole process. */
int  caml_parallel_parts (void);
/* Runs both parts and returns when both are done. */
void caml_parallel_run (CamlPartFunc func, gpointer data);
/* Lowers the calling thread to background priority when
 * caml_set_background_priority was called (once per thread; cheap after). */
void caml_parallel_lower_priority (void);
