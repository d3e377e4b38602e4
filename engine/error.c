/* error.c — the engine's GError domain. */
#include "caml-private.h"

G_DEFINE_QUARK (caml-error-quark, caml_error)
