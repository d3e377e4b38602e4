/* caml-words-view.h — the words page of a text model with a gate over
 * words: the first test texts word by word in a text view, each word
 * shaded as words.html shades it (caml_words_shade), unseen words
 * underlined, a tooltip with its gate and training count; beside them the
 * most and least context-free words as bars (caml_figure_words). Prepared
 * only while shown, or when asked (an export). */
#pragma once

#include <gtk/gtk.h>

#include "caml-plot-view.h"
#include "caml-session.h"

G_BEGIN_DECLS

#define CAML_TYPE_WORDS_VIEW (caml_words_view_get_type ())
G_DECLARE_FINAL_TYPE (CamlWordsView, caml_words_view, CAML, WORDS_VIEW, GtkBox)

/* Follows session (a reference is kept; NULL: none). */
void          caml_words_view_set_session (CamlWordsView *self, CamlSession *session);
/* Shown: prepared with every sample of the words then. */
void          caml_words_view_set_shown (CamlWordsView *self, gboolean shown);
/* Prepares the texts and the bars now. */
void          caml_words_view_rebuild (CamlWordsView *self);
GtkTextView  *caml_words_view_get_text (CamlWordsView *self);
CamlPlotView *caml_words_view_get_bars (CamlWordsView *self);

G_END_DECLS
