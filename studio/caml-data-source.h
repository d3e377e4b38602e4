/* caml-data-source.h — what the workbench's data picker needs to know about
 * each data kind before loading it: a title, whether a fetched set is on
 * this computer (and, when not, the command that fetches it), and which of
 * four chosen IDX files is which.
 *
 * Plain C on the engine and GIO: no GTK, so tests call it headless. */
#pragma once

#include "caml.h"

G_BEGIN_DECLS

/* "XOR (4 points)", "Surface x·exp(−x²−y²)", "MNIST", "Fashion-MNIST",
 * "IDX files…". */
const char *caml_data_source_title (CamlDataKind kind);

/* The argument of datasets/fetch for a fetched set ("mnist",
 * "fashion-mnist"), or NULL for the others. */
const char *caml_data_source_fetch_name (CamlDataKind kind);

/* For MNIST and Fashion-MNIST: NULL when their four files (raw or .gz) are
 * in caml_data_dir(), else a message that names what is missing and the
 * command that fetches it. NULL for every other kind. Free with g_free. */
char *caml_data_source_missing (CamlDataKind kind);

/* Orders n chosen IDX files as train images, train labels, test images,
 * test labels (CamlDataConfig.idx_paths). Images and labels are told apart
 * by the magic number in each file's header (raw or gzip); the larger pair
 * (by item count) is the training set, or, when both pairs hold as many
 * items, the pair whose names say "train" (the other says "t10k" or
 * "test"). FALSE with an error that says what is wrong: not four files, a
 * file that is not IDX, images and labels that do not pair up. Reads only
 * the first bytes of each file. */
gboolean caml_data_source_order_idx (const char *const *paths, int n, char *ordered[4],
                                     GError **error);

G_END_DECLS
