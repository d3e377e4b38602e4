/* caml-words-view.c — the words page (caml-words-view.h). */
#include <math.h>

#include "caml-words-view.h"
#include "figures.h"
#include "words-page.h"

#define WORDS_MIN_COUNT 20   /* words seen this often in training */
#define WORDS_TOP       25   /* this many most and least context-free */

struct _CamlWordsView {
  GtkBox parent_instance;

  /* template widgets */
  GtkTextView  *words_text;
  CamlPlotView *words_view;

  /* owned */
  CamlSession  *session;
  GArray       *word_spans;   /* WordSpan: where each shown word is in words_text */
  gboolean      shown;
};

G_DEFINE_FINAL_TYPE (CamlWordsView, caml_words_view, GTK_TYPE_BOX)

/* A shown word of the sample texts: its characters in words_text's buffer,
 * its vocabulary id (−1: unseen in training) and its place in token_chi. */
typedef struct {
  int start, end, id, token;
} WordSpan;

/* One tag per shade of words.html (background and text colour), plus the
 * sample headers, the dotted underline of unseen words and the grey of
 * words the model did not read. */
static void
make_tags (CamlWordsView *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->words_text);
  for (int shade = 0; shade < CAML_WORDS_N_SHADES; shade++)
    {
      int r, g, b;
      gboolean white;
      caml_words_shade_colour (shade, &r, &g, &b, &white);
      g_autofree char *name = g_strdup_printf ("g%d", shade);
      GdkRGBA bg = { r / 255.0f, g / 255.0f, b / 255.0f, 1.0f };
      GdkRGBA fg = white ? (GdkRGBA) { 1, 1, 1, 1 } : (GdkRGBA) { 0.07f, 0.07f, 0.07f, 1 };
      gtk_text_buffer_create_tag (buffer, name, "background-rgba", &bg,
                                  "foreground-rgba", &fg, NULL);
    }
  GdkRGBA grey = { 0.4f, 0.4f, 0.4f, 1 };
  gtk_text_buffer_create_tag (buffer, "meta", "scale", 0.85, "foreground-rgba", &grey,
                              "pixels-above-lines", 8, NULL);
  gtk_text_buffer_create_tag (buffer, "oov", "underline", PANGO_UNDERLINE_SINGLE,
                              "underline-rgba", &grey, NULL);
  GdkRGBA light = { 0.6f, 0.6f, 0.6f, 1 };
  gtk_text_buffer_create_tag (buffer, "cut", "foreground-rgba", &light, NULL);
  self->word_spans = g_array_new (FALSE, FALSE, sizeof (WordSpan));
}

/* A tagged stretch of the words text, in characters. */
typedef struct {
  int         start, end;
  const char *tags[2];   /* interned; tags[1] may be NULL */
} TagRun;

static void
append_run (GString *text, int *chars, GArray *runs, const char *piece, const char *tag,
            const char *tag2)
{
  int n = (int) g_utf8_strlen (piece, -1);
  if (tag != NULL)
    {
      TagRun run = { *chars, *chars + n, { g_intern_string (tag),
                                           tag2 != NULL ? g_intern_string (tag2) : NULL } };
      g_array_append_val (runs, run);
    }
  g_string_append (text, piece);
  *chars += n;
}

/* Puts text with its tags into buffer. When the buffer holds a text of the
 * same length (the same samples at the next evaluation: only P(1)'s digits
 * and the shades change) only the characters that differ are replaced and
 * the tags laid anew: the view keeps its layout. A buffer set anew while it
 * is shown lays its text out while the frame is drawn, which GTK reports as
 * "Trying to snapshot GtkBox … without a current allocation". */
static void
fill_words_buffer (GtkTextBuffer *buffer, const char *text, GArray *runs)
{
  GtkTextIter a, b;
  gtk_text_buffer_get_bounds (buffer, &a, &b);
  g_autofree char *old = gtk_text_buffer_get_text (buffer, &a, &b, TRUE);
  if (g_utf8_strlen (old, -1) != g_utf8_strlen (text, -1))
    gtk_text_buffer_set_text (buffer, text, -1);
  else
    {
      const char *o = old, *t = text;
      for (int at = 0; *t != '\0';)
        {
          if (g_utf8_get_char (o) == g_utf8_get_char (t))
            {
              o = g_utf8_next_char (o);
              t = g_utf8_next_char (t);
              at++;
              continue;
            }
          const char *from = t;
          int n = 0;
          while (*t != '\0' && g_utf8_get_char (o) != g_utf8_get_char (t))
            {
              o = g_utf8_next_char (o);
              t = g_utf8_next_char (t);
              n++;
            }
          gtk_text_buffer_get_iter_at_offset (buffer, &a, at);
          gtk_text_buffer_get_iter_at_offset (buffer, &b, at + n);
          gtk_text_buffer_delete (buffer, &a, &b);
          gtk_text_buffer_insert (buffer, &a, from, (int) (t - from));
          at += n;
        }
      gtk_text_buffer_get_bounds (buffer, &a, &b);
      gtk_text_buffer_remove_all_tags (buffer, &a, &b);
    }
  for (guint i = 0; i < runs->len; i++)
    {
      const TagRun *run = &g_array_index (runs, TagRun, i);
      gtk_text_buffer_get_iter_at_offset (buffer, &a, run->start);
      gtk_text_buffer_get_iter_at_offset (buffer, &b, run->end);
      for (int k = 0; k < 2 && run->tags[k] != NULL; k++)
        gtk_text_buffer_apply_tag_by_name (buffer, run->tags[k], &a, &b);
    }
}

/* The first test texts, each word shaded by its χ̃ — or by a per-position
 * gate's χ there — as in words.html, with the label and the model's
 * P(class 1). */
static void
rebuild_words_text (CamlWordsView *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (self->words_text);
  g_autoptr (GString) text = g_string_new (NULL);
  g_autoptr (GArray) runs = g_array_new (FALSE, FALSE, sizeof (TagRun));
  int chars = 0;
  int n = 0;
  CamlRun *run = caml_session_peek_run (self->session);
  const float *probs = NULL, *token_chi = NULL;
  const float *word_chi = caml_session_get_words (self->session, &probs, &token_chi);
  const CamlWordSample *samples = run != NULL && word_chi != NULL
                                  && caml_run_get_words_layer (run) >= 0
                                  ? caml_run_get_word_samples (run, &n) : NULL;
  g_array_set_size (self->word_spans, 0);
  if (samples == NULL || n == 0)
    {
      g_autofree char *none = g_strdup_printf (samples == NULL
                                               ? "The %s texts appear here, each word shaded "
                                                 "by its gate χ̃."
                                               : "The %s set keeps no texts to show.",
                                               caml_session_evaluated_on (self->session));
      append_run (text, &chars, runs, none, "meta", NULL);
      fill_words_buffer (buffer, text->str, runs);
      return;
    }
  for (int i = 0; i < n; i++)
    {
      const CamlWordSample *sample = &samples[i];
      g_autoptr (GString) meta = g_string_new (NULL);
      g_string_append_printf (meta, "%s%s text %d", i > 0 ? "\n" : "",
                              caml_session_evaluated_on (self->session), i);
      if (sample->label >= 0)
        g_string_append_printf (meta, " · label %d", sample->label);
      if (probs != NULL && isfinite (probs[i]))
        g_string_append_printf (meta, " · model: P(1) = %.3f", probs[i]);
      g_string_append_c (meta, '\n');
      append_run (text, &chars, runs, meta->str, "meta", NULL);
      for (int k = 0; k < sample->n_words; k++)
        {
          int id = sample->ids[k];
          int token = i * CAML_RUN_WORDS_SHOWN + k;
          float chi = token_chi != NULL ? token_chi[token]
                      : !sample->read[k] ? NAN : id >= 0 ? word_chi[id] : 1.0f;
          char tag[8];
          if (isfinite (chi))
            g_snprintf (tag, sizeof tag, "g%d", caml_words_shade (chi));
          else   /* not read by the model, or not measured */
            g_strlcpy (tag, "cut", sizeof tag);
          WordSpan span = { chars, 0, id, token };
          append_run (text, &chars, runs, sample->words[k], tag, id < 0 ? "oov" : NULL);
          span.end = chars;
          g_array_append_val (self->word_spans, span);
          append_run (text, &chars, runs, " ", NULL, NULL);
        }
      if (sample->more > 0)
        {
          g_autofree char *more = g_strdup_printf ("… (%d more words)", sample->more);
          append_run (text, &chars, runs, more, "meta", NULL);
        }
      append_run (text, &chars, runs, "\n", NULL, NULL);
    }
  fill_words_buffer (buffer, text->str, runs);
}

/* A word's χ̃ and training count under the pointer. */
static gboolean
on_words_text_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard,
                       GtkTooltip *tooltip, CamlWordsView *self)
{
  GtkTextView *view = GTK_TEXT_VIEW (widget);
  GtkTextIter iter;
  int bx, by;
  CamlRun *run = caml_session_peek_run (self->session);
  const float *token_chi = NULL;
  const float *word_chi = caml_session_get_words (self->session, NULL, &token_chi);
  if (keyboard || run == NULL || word_chi == NULL || self->word_spans == NULL)
    return FALSE;
  gtk_text_view_window_to_buffer_coords (view, GTK_TEXT_WINDOW_WIDGET, x, y, &bx, &by);
  if (!gtk_text_view_get_iter_at_location (view, &iter, bx, by))
    return FALSE;
  int offset = gtk_text_iter_get_offset (&iter);
  const WordSpan *spans = (const WordSpan *) self->word_spans->data;
  int lo = 0, hi = (int) self->word_spans->len;
  while (lo < hi)    /* the first span that ends after offset */
    {
      int mid = (lo + hi) / 2;
      if (spans[mid].end <= offset)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (lo >= (int) self->word_spans->len || spans[lo].start > offset)
    return FALSE;
  const CamlVocab *vocab = caml_run_get_train (run)->vocab;
  const WordSpan *span = &spans[lo];
  g_autoptr (GString) text = g_string_new (NULL);
  if (token_chi == NULL)
    {
      int n = 0;
      const CamlWordSample *samples = caml_run_get_word_samples (run, &n);
      if (!samples[span->token / CAML_RUN_WORDS_SHOWN].read[span->token % CAML_RUN_WORDS_SHOWN])
        g_string_append_printf (text, "past data.max_tokens (%d): not read; ",
                                caml_run_get_experiment (run)->data.max_tokens);
      if (span->id < 0)
        g_string_append (text, "unseen in training: χ̃ = 1 (v0)");
      else
        g_string_append_printf (text, "χ̃ = %.3f, %" G_GINT64_FORMAT "× in training",
                                word_chi[span->id], caml_vocab_count (vocab, span->id));
    }
  else
    {
      int n = 0;
      const CamlWordSample *samples = caml_run_get_word_samples (run, &n);
      gboolean own = samples[span->token / CAML_RUN_WORDS_SHOWN].aligned;
      float chi = token_chi[span->token];
      if (isfinite (chi))
        g_string_append_printf (text, own ? "χ = %.3f here" : "mean χ = %.3f", chi);
      else
        g_string_append (text, own ? "past the model's input length: not read"
                                   : "χ not measured");
      if (own && span->id >= 0 && isfinite (word_chi[span->id]))
        g_string_append_printf (text, ", mean χ %.3f", word_chi[span->id]);
      if (span->id < 0)
        g_string_append (text, "; unseen in training");
      else
        g_string_append_printf (text, "; %" G_GINT64_FORMAT "× in training",
                                caml_vocab_count (vocab, span->id));
    }
  gtk_tooltip_set_text (tooltip, text->str);
  return TRUE;
}

/* The words page: the first test texts shaded word by word, and the
 * WORDS_TOP most and least context-free words among those seen
 * WORDS_MIN_COUNT times in training, as `caml train`'s words.png ranks them.
 * Prepared only while shown, like the parts page. */
void
caml_words_view_rebuild (CamlWordsView *self)
{
  if (self->session == NULL)
    return;
  CamlRun *run = caml_session_peek_run (self->session);
  const float *word_chi = caml_session_get_words (self->session, NULL, NULL);

  rebuild_words_text (self);
  if (run == NULL || caml_run_get_words_layer (run) < 0 || word_chi == NULL)
    {
      caml_plot_view_clear (self->words_view);
      caml_plot_view_set_placeholder (self->words_view, run == NULL ? "no model yet"
                                      : "words are shown for text data and a gate over "
                                        "words (CA-BSFE, CA-ATT, CA-RNN)");
      return;
    }
  g_autofree char *texts_read = NULL;
  g_autofree char *layer = caml_run_describe_words (run, &texts_read);
  g_autofree char *title = caml_session_dup_run_title (self->session);
  CamlFigureWords words = {
    .vocab = caml_run_get_train (run)->vocab, .chi = word_chi,
    .per_position = caml_run_words_per_position (run), .texts_read = texts_read,
    .layer = layer, .title = title, .min_count = WORDS_MIN_COUNT, .n_top = WORDS_TOP,
  };
  int shown = 0;
  g_autoptr (CamlPlotFigure) figure = caml_figure_words (&words, &shown);
  if (shown == 0)
    {
      caml_plot_view_clear (self->words_view);
      caml_plot_view_set_placeholder (self->words_view, "no word is seen "
                                      G_STRINGIFY (WORDS_MIN_COUNT) " times in training");
      return;
    }
  caml_plot_view_set_figure (self->words_view, figure, 0, 2);
}


static void
on_progress (CamlSession *session, guint what, CamlWordsView *self)
{
  /* a run gone shows no texts, P(1) or bars of its own */
  if ((what & CAML_SESSION_WORDS)
      && (self->shown || caml_session_peek_run (session) == NULL))
    caml_words_view_rebuild (self);
}

void
caml_words_view_set_session (CamlWordsView *self, CamlSession *session)
{
  g_return_if_fail (CAML_IS_WORDS_VIEW (self));
  if (self->session != NULL)
    g_signal_handlers_disconnect_by_data (self->session, self);
  g_set_object (&self->session, session);
  if (session != NULL)
    g_signal_connect (session, "progress", G_CALLBACK (on_progress), self);
}

void
caml_words_view_set_shown (CamlWordsView *self, gboolean shown)
{
  self->shown = shown;
}

GtkTextView *
caml_words_view_get_text (CamlWordsView *self)
{
  return self->words_text;
}

CamlPlotView *
caml_words_view_get_bars (CamlWordsView *self)
{
  return self->words_view;
}

static void
caml_words_view_dispose (GObject *object)
{
  CamlWordsView *self = CAML_WORDS_VIEW (object);

  caml_words_view_set_session (self, NULL);
  g_clear_pointer (&self->word_spans, g_array_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), CAML_TYPE_WORDS_VIEW);
  G_OBJECT_CLASS (caml_words_view_parent_class)->dispose (object);
}

static void
caml_words_view_class_init (CamlWordsViewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = caml_words_view_dispose;
  g_type_ensure (CAML_TYPE_PLOT_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/caml/Workbench/ui/caml-words-view.ui");
  gtk_widget_class_bind_template_child (widget_class, CamlWordsView, words_text);
  gtk_widget_class_bind_template_child (widget_class, CamlWordsView, words_view);
}

static void
caml_words_view_init (CamlWordsView *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  make_tags (self);
  g_signal_connect (self->words_text, "query-tooltip", G_CALLBACK (on_words_text_tooltip), self);
  caml_plot_view_set_placeholder (self->words_view, "words are shown for text data and a "
                                  "gate over words (CA-BSFE, CA-ATT, CA-RNN)");
}
