/* idx-private.h — private to the engine and its tests: the IDX loader of
 * caml_idx_load over bytes in memory instead of two paths. The fuzz target
 * (tests/fuzz/fuzz-idx.c) and the regression tests use it; it is not part of
 * the public API in caml.h. */
#pragma once

#include "caml-private.h"

G_BEGIN_DECLS

/* As caml_idx_load, reading the two files from memory (raw or gzipped, the
 * same checks, the same messages); the names stand for the files in errors
 * (NULL: "<images>", "<labels>"). */
CamlDataset *caml_idx_load_bytes (GBytes *images, const char *images_name,
                                  GBytes *labels, const char *labels_name,
                                  int limit, GError **error);

G_END_DECLS
