/* caml-window-plots.c — the window's plot pages: the loss and accuracy
 * cards, the surface, χ and CA-NN parts, the σ-maps with their AUC, and the
 * words page. Each figure is built by studio/figures.c from the session's
 * copies of the run, when the session says they changed ("progress"). */
#include <math.h>

#include "caml-window-private.h"
#include "caml-format.h"
#include "figures.h"
#include "report.h"
#include "words-page.h"

#define WORDS_MIN_COUNT     20       /* words page: words seen this often in training */
#define WORDS_TOP           25       /* … this many most and least context-free */

/* "NAME, seed S": the title of the run's loss and words figures, as
 * caml train's. */
static char *
run_title (CamlWindow *self)
{
  CamlRun *run = caml_session_peek_run (self->session);
  const CamlExperiment *exp = run != NULL ? caml_run_get_experiment (run)
                                          : caml_session_get_experiment (self->session);
  return g_strdup_printf ("%s, seed %" G_GUINT64_FORMAT, exp->name ? exp->name : "experiment",
                          exp->seed);
}

/* A shown word of the sample texts: its characters in words_text's buffer,
 * its vocabulary id (−1: unseen in training) and its place in token_chi. */
typedef struct {
  int start, end, id, token;
} WordSpan;

/* One tag per shade of words.html (background and text colour), plus the
 * sample headers, the dotted underline of unseen words and the grey of
 * words the model did not read. */
static void
make_words_tags (CamlWindow *self)
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
rebuild_words_text (CamlWindow *self)
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
                       GtkTooltip *tooltip, CamlWindow *self)
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
static void
rebuild_words_plots (CamlWindow *self)
{
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
  g_autofree char *title = run_title (self);
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

/* ------------------------------------------------------------------ loss */

/* The loss figure of what the session holds: the run's curves with the
 * previous run's and the baseline's (previous and baseline are filled in
 * when there are any), the events recorded (appended to events) and the
 * Smoothing and Log scale settings. A file (an export) smooths as caml
 * train does, so that a run's export is its loss.png. *title is new. */
static void
describe_loss (CamlWindow *self, CamlFigureDetail detail, CamlFigureLoss *loss,
               CamlFigureCurves *previous, CamlFigureCurves *baseline, GArray *events,
               char **title)
{
  CamlSession *session = self->session;
  const CamlProgress *progress = caml_session_get_progress (session);
  guint n_events = 0;
  const CamlSessionEvent *marks = caml_session_get_events (session, &n_events);

  previous->losses = caml_session_get_previous_losses (session, &previous->n_steps,
                                                       &previous->rows, &previous->n_rows,
                                                       &previous->classification);
  baseline->losses = caml_session_get_baseline_losses (session, &baseline->n_steps);
  baseline->rows = caml_session_get_baseline_rows (session, &baseline->n_rows);
  baseline->classification = progress->classification;
  for (guint i = 0; i < n_events; i++)
    {
      CamlPlotEvent pe = { (double) marks[i].step, marks[i].text };
      g_array_append_val (events, pe);
    }
  *title = run_title (self);
  *loss = (CamlFigureLoss) {
    .run = { .classification = progress->classification },
    .previous = previous->n_steps > 0 ? previous : NULL,
    .baseline = caml_session_peek_baseline (session) != NULL ? baseline : NULL,
    .events = (CamlPlotEvent *) events->data, .n_events = events->len,
    .title = *title, .evaluated_on = caml_session_evaluated_on (session),
    .smoothing = detail == CAML_FIGURE_FILE ? -1 : self->smoothing,
    .linear = !self->log_scale,
    .detail = detail,
  };
  loss->run.losses = caml_session_get_losses (session, &loss->run.n_steps);
  loss->run.rows = caml_session_get_rows (session, &loss->run.n_rows);
}

static void rebuild_sigma_auc (CamlWindow *self);

/* The accuracy plot before the run's first evaluation: when it comes, or
 * why it will not (a run stopped or diverged before it: a stopped run is
 * not evaluated). */
static void
clear_accuracy (CamlWindow *self)
{
  CamlRun *run = caml_session_peek_run (self->session);
  caml_plot_view_clear (self->accuracy_view);
  if (run == NULL)
    return;
  /* The first evaluation: every eval_every steps, or after the last. */
  const CamlExperiment *exp = caml_run_get_experiment (run);
  int first = exp->eval_every > 0 ? MIN (exp->eval_every, exp->steps) : exp->steps;
  CamlTrainerState state = caml_session_get_state (self->session);
  g_autofree char *when =
    state == CAML_TRAINER_STOPPED
    ? g_strdup_printf ("stopped at step %ld, before the first evaluation (step %d)",
                       caml_session_get_progress (self->session)->step, first)
    : state == CAML_TRAINER_FAILED
    ? g_strdup_printf ("diverged before the first evaluation (step %d)", first)
    : g_strdup_printf ("%s accuracy appears at step %d",
                       caml_session_evaluated_on (self->session), first);
  caml_plot_view_set_placeholder (self->accuracy_view, when);
}

void
caml_window_rebuild_loss_plot (CamlWindow *self)
{
  CamlSession *session = self->session;
  CamlRun *run = caml_session_peek_run (session);
  long n = 0, prev_n = 0;
  int r = 0, prev_r = 0;
  gboolean prev_classification = FALSE;
  const CamlEvalRow *prev_rows = NULL;
  const float *losses = caml_session_get_losses (session, &n);
  caml_session_get_rows (session, &r);
  caml_session_get_previous_losses (session, &prev_n, &prev_rows, &prev_r, &prev_classification);

  if (n == 0 && r == 0 && prev_n == 0)
    {
      CamlTrainerState state = caml_session_get_state (session);
      CamlDivergence d;
      g_autofree char *why =
        state == CAML_TRAINER_FAILED && caml_run_get_divergence (run, &d)
        ? g_strdup_printf ("Diverged at step %ld; the weights are back at step %ld, before any "
                           "loss was kept", d.step, d.rolled_back_to)
        : state == CAML_TRAINER_RUNNING ? g_strdup ("Training: the loss appears after the first step")
        : state == CAML_TRAINER_PAUSED ? g_strdup ("Paused before the first step: Step (F7) "
                                                   "or Resume (F5)")
        : state == CAML_TRAINER_STOPPED ? g_strdup ("Stopped before the first step")
        : g_strdup ("Press Train (F5) to start");
      caml_plot_view_clear (self->loss_view);
      caml_plot_view_set_placeholder (self->loss_view, why);
      caml_window_set_action_enabled (self, "export-loss", FALSE);
    }
  else
    {
      CamlFigureLoss loss;
      CamlFigureCurves previous, baseline;
      g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (CamlPlotEvent));
      g_autofree char *title = NULL;
      describe_loss (self, CAML_FIGURE_LIVE, &loss, &previous, &baseline, events, &title);
      g_autoptr (CamlPlotFigure) figure = caml_figure_loss (&loss);
      /* the trend the hover read-out gives */
      g_free (self->smooth);
      self->smooth = g_new (double, MAX (n, 1));
      caml_figure_loss_trend (losses, n, self->smoothing, !self->log_scale, self->smooth);
      caml_plot_view_set_figure (self->loss_view, figure, 0, 1);
      caml_window_set_action_enabled (self, "export-loss", TRUE);
      /* the AUC's span follows the loss plot's, not only its snapshots */
      if (run != NULL && caml_run_has_sigma (run) && caml_session_get_sigma_count (session) > 0)
        rebuild_sigma_auc (self);

      /* The accuracy, from the run's first evaluation (or the previous run's) */
      gboolean prev_acc = prev_classification && prev_r > 0;
      if (caml_plot_figure_get_n_plots (figure) > 1
          && ((caml_session_get_progress (session)->classification && r > 0)
              || (prev_acc && r == 0)))
        {
          caml_plot_view_set_figure (self->accuracy_view, figure, 1, 1);
          caml_window_set_action_enabled (self, "export-accuracy", TRUE);
        }
    }
  /* Nothing to show yet: when it comes, or why not. */
  if (r == 0 && !(prev_classification && prev_r > 0))
    clear_accuracy (self);
}

static char *
loss_hover (CamlPlotView *view, double x, double y, gpointer user_data)
{
  CamlWindow *self = user_data;
  long n_steps = 0;
  int n_rows = 0;
  const float *losses = caml_session_get_losses (self->session, &n_steps);
  const CamlEvalRow *rows = caml_session_get_rows (self->session, &n_rows);

  if (n_steps <= 0 || caml_plot_view_get_line (view) == NULL)
    return NULL;
  long i = CLAMP (lround (x), 1, n_steps) - 1;
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "step %ld  train %.4g", i + 1, (double) losses[i]);
  if (self->smooth != NULL && self->smoothing > 0)
    g_string_append_printf (s, " (smoothed %.4g)", self->smooth[i]);
  /* the evaluation nearest the pointer (the earlier one of two as near) */
  int nearest = -1;
  long step = i + 1;
  for (int r = 0; r < n_rows; r++)
    if (nearest < 0 || labs (rows[r].step - step) < labs (rows[nearest].step - step))
      nearest = r;
  if (nearest >= 0)
    g_string_append_printf (s, "  %s %.4g at step %ld",
                            caml_session_evaluated_on (self->session),
                            rows[nearest].test_loss, rows[nearest].step);
  return g_string_free (s, FALSE);
}

/* -------------------------------------------------------------- surfaces */

/* The plane the run's surface, χ and parts maps cover. */
static CamlFigurePlane
run_plane (CamlWindow *self)
{
  CamlRun *run = caml_session_peek_run (self->session);
  return (CamlFigurePlane) { caml_run_get_experiment (run), caml_run_get_train (run),
                             CAML_FIGURE_GRID };
}

static void
rebuild_parts_plots (CamlWindow *self)
{
  CamlRun *run = caml_session_peek_run (self->session);
  const float *chi = NULL, *default_part = NULL, *value_part = NULL;
  const float *fit = caml_session_get_surface (self->session, &chi, &default_part, &value_part);
  int layer = caml_session_get_parts_layer (self->session);
  size_t cells = (size_t) CAML_FIGURE_GRID * CAML_FIGURE_GRID;
  const float *parts_chi = NULL;

  int n_chi = run != NULL ? caml_run_get_n_chi (run) : 0;
  for (int k = 0; fit != NULL && k < n_chi && k < 4; k++)
    if (caml_run_get_chi_layer (run, k, NULL) == layer)
      parts_chi = chi + k * cells;
  if (parts_chi == NULL)
    {
      caml_plot_view_clear (self->parts_view);
      caml_plot_view_set_placeholder (self->parts_view, "this model has no CA-NN layer");
      return;
    }
  CamlFigurePlane plane = run_plane (self);
  g_autoptr (CamlPlotFigure) parts = caml_figure_parts (&plane, layer, fit, parts_chi,
                                                        default_part, value_part);
  caml_plot_view_set_figure (self->parts_view, parts, 0, 4);
}

/* Builds the surface and χ figures from the copied grids. */
static void
rebuild_surface_plots (CamlWindow *self)
{
  CamlRun *run = caml_session_peek_run (self->session);
  const float *chi_maps = NULL;
  const float *fit = caml_session_get_surface (self->session, &chi_maps, NULL, NULL);
  CamlFigurePlane plane = run_plane (self);
  int n_chi = MIN (caml_run_get_n_chi (run), 4);

  /* The card shows the fitted surface, the figure's last map (an export
   * writes the ground truth beside it, as caml train's surface.png). */
  g_autoptr (CamlPlotFigure) surface = caml_figure_surface (&plane, fit);
  caml_plot_view_set_figure (self->surface_view, surface,
                             caml_plot_figure_get_n_plots (surface) - 1, 1);
  if (n_chi == 0)
    {
      caml_plot_view_clear (self->chi_view);
      caml_plot_view_set_placeholder (self->chi_view, "this model has no per-sample gate χ");
      return;
    }
  int layers[4];
  const char *titles[4];
  for (int k = 0; k < n_chi; k++)
    layers[k] = caml_run_get_chi_layer (run, k, &titles[k]);
  g_autoptr (CamlPlotFigure) chi = caml_figure_chi (&plane, n_chi, layers, titles, chi_maps);
  caml_plot_view_set_figure (self->chi_view, chi, 0, n_chi);
  /* The parts page is prepared only while it is shown (four more maps
   * each update): switching to it, or exporting it, prepares it. */
  if (g_str_equal (gtk_stack_get_visible_child_name (self->plots_stack), "parts"))
    rebuild_parts_plots (self);
}

/* ---------------------------------------------------------------- σ-maps */

/* The σ-map AUC by step, spanning the run as the loss plot does: built
 * with each new snapshot and each loss plot. */
static void
rebuild_sigma_auc (CamlWindow *self)
{
  g_autofree double *steps = NULL, *auc = NULL;
  int m = caml_run_copy_sigma_auc (caml_session_peek_run (self->session), &steps, &auc);
  CamlFigureLoss loss;
  CamlFigureCurves previous, baseline;
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (CamlPlotEvent));
  g_autofree char *title = NULL;
  double first, last;
  describe_loss (self, CAML_FIGURE_LIVE, &loss, &previous, &baseline, events, &title);
  caml_figure_loss_span (&loss, &first, &last);
  g_autoptr (CamlPlotFigure) figure = caml_figure_sigma_auc (steps, auc, m, first, last);
  caml_plot_view_set_figure (self->sigma_auc_view, figure, 0, 1);
  caml_window_set_action_enabled (self, "export-sigma-auc", TRUE);
}

/* The scrubber spans the snapshots kept; at its right end it follows the
 * latest. Builds the grid of the selected snapshot and the AUC curve. */
void
caml_window_rebuild_sigma_plots (CamlWindow *self, gboolean new_data)
{
  GtkAdjustment *adj = gtk_range_get_adjustment (GTK_RANGE (self->sigma_scale));
  CamlRun *run = caml_session_peek_run (self->session);
  int n = caml_session_get_sigma_count (self->session);

  gboolean was_syncing = self->syncing;
  self->syncing = TRUE;
  gtk_adjustment_set_upper (adj, MAX (n - 1, 0));
  if (self->sigma_follow || n == 0)
    gtk_adjustment_set_value (adj, MAX (n - 1, 0));
  self->syncing = was_syncing;
  gtk_widget_set_sensitive (GTK_WIDGET (self->sigma_scale), n > 1);
  if (n == 0)
    {
      caml_plot_view_clear (self->sigma_view);
      caml_plot_view_set_placeholder (self->sigma_view, "σ-maps appear while training");
      return;
    }
  int index = CLAMP ((int) lround (gtk_adjustment_get_value (adj)), 0, n - 1);

  if (new_data || index != self->sigma_shown)
    {
      g_autoptr (CamlSigmaSnapshot) snap = caml_run_copy_sigma (run, index);
      if (snap != NULL)
        {
          const CamlExperiment *exp = caml_run_get_experiment (run);
          g_autoptr (CamlPlotFigure) grid =
            caml_figure_sigma_grid (snap, self->sigma_stretch,
                                    exp->name ? exp->name : "experiment",
                                    caml_run_get_sigma_source (run));
          caml_plot_view_set_figure (self->sigma_view, grid, 0, 1);
          self->sigma_shown = index;
        }
    }

  if (new_data)
    rebuild_sigma_auc (self);
}

static void
on_sigma_scrubbed (GtkRange *range, CamlWindow *self)
{
  CamlRun *run = caml_session_peek_run (self->session);
  if (self->syncing || run == NULL || !caml_run_has_sigma (run))
    return;
  GtkAdjustment *adj = gtk_range_get_adjustment (range);
  self->sigma_follow = gtk_adjustment_get_value (adj) >= gtk_adjustment_get_upper (adj) - 0.5;
  caml_window_rebuild_sigma_plots (self, FALSE);
}

/* Image models show the test accuracy beside the σ-maps, under their AUC;
 * the others across the plot area's width. */
static void
place_accuracy (CamlWindow *self, gboolean beside_sigma)
{
  GtkWidget *acc = GTK_WIDGET (self->accuracy_view);
  GtkWidget *parent = gtk_widget_get_parent (acc);

  if ((parent == GTK_WIDGET (self->sigma_side)) == beside_sigma)
    return;
  g_object_ref (acc);
  if (beside_sigma)
    {
      gtk_grid_remove (self->bottom_grid, acc);
      gtk_widget_set_size_request (acc, -1, 100);
      gtk_widget_set_hexpand (acc, FALSE);   /* the σ-maps take the width */
      gtk_box_append (self->sigma_side, acc);
    }
  else
    {
      gtk_box_remove (self->sigma_side, acc);
      gtk_widget_set_size_request (acc, -1, 190);
      gtk_widget_set_hexpand (acc, TRUE);
      gtk_grid_attach (self->bottom_grid, acc, 0, 1, 3, 1);
    }
  g_object_unref (acc);
}

/* ---------------------------------------------------------------- pages */

/* Offers the parts page when there are parts to show and the words page
 * when the run has word gates; leaves a page that is not offered (once
 * the run is known). */
static void
update_plots_switcher (CamlWindow *self)
{
  CamlRun *run = caml_session_peek_run (self->session);
  gboolean words = run != NULL && caml_run_get_words_layer (run) >= 0;
  gboolean parts = caml_session_has_parts (self->session);
  const char *page = gtk_stack_get_visible_child_name (self->plots_stack);

  gtk_widget_set_visible (GTK_WIDGET (self->parts_toggle), parts);
  gtk_widget_set_visible (GTK_WIDGET (self->words_toggle), words);
  /* A per-word gate (CA-BSFE) or one per position (CA-ATT, CA-RNN). */
  if (words)
    gtk_widget_set_tooltip_text (GTK_WIDGET (self->words_toggle),
                                 caml_run_words_per_position (run)
                                 ? "Texts shaded by the gate χ at each word, and the words "
                                   "ranked by their mean χ (light: χ → 1, context-free)"
                                 : "The most and least context-free words by their gate χ̃ "
                                   "(light: χ̃ → 1, the word is replaced by the shared v0)");
  gtk_widget_set_visible (GTK_WIDGET (self->plots_switcher), parts || words);
  /* The page the user chose comes back when a later run offers it again
   * (an edit undone, another preset of the same kind). */
  const char *want = g_str_equal (self->chosen_page, "parts") && parts ? "parts"
                     : g_str_equal (self->chosen_page, "words") && words ? "words" : NULL;
  if (want == NULL
      && ((g_str_equal (page, "parts") && !parts)
          || (g_str_equal (page, "words") && !words
              && (run != NULL || !caml_session_is_loading (self->session)))))   /* kept while built */
    want = "main";
  if (want != NULL && !g_str_equal (page, want))
    {
      const char *chosen = self->chosen_page;
      g_action_group_activate_action (G_ACTION_GROUP (self), "plots-page",
                                      g_variant_new_string (want));
      self->chosen_page = chosen;   /* the user's choice stays */
    }
}

/* Every map gets the same width: the χ view spans one grid column per gate. */
static void
set_chi_columns (CamlWindow *self, int n)
{
  g_object_ref (self->chi_view);
  gtk_grid_remove (self->bottom_grid, GTK_WIDGET (self->chi_view));
  gtk_grid_attach (self->bottom_grid, GTK_WIDGET (self->chi_view), 1, 0, MAX (n, 1), 1);
  g_object_unref (self->chi_view);
  update_plots_switcher (self);
}

static void
show_surface_placeholders (CamlWindow *self, const char *why)
{
  set_chi_columns (self, 1);
  caml_plot_view_clear (self->surface_view);
  caml_plot_view_clear (self->chi_view);
  caml_plot_view_set_placeholder (self->surface_view, why);
  caml_plot_view_set_placeholder (self->chi_view, why);
}

/* What the plots say while there is no run. */
static void
show_waiting (CamlWindow *self, const char *why)
{
  /* In the layout the run will have: the surface and χ for the plane's data
   * sets, else the accuracy across (it showed the surface panels for text,
   * and a reloaded run's accuracy curve beside the waiting loss plot). */
  const CamlExperiment *exp = caml_session_get_experiment (self->session);
  gboolean surface = exp->data.kind == CAML_DATA_XOR || exp->data.kind == CAML_DATA_SURFACE;
  gtk_widget_set_visible (GTK_WIDGET (self->surface_view), surface);
  gtk_widget_set_visible (GTK_WIDGET (self->chi_view), surface);
  gtk_widget_set_visible (GTK_WIDGET (self->accuracy_view), !surface);
  gtk_widget_set_visible (GTK_WIDGET (self->sigma_box), FALSE);
  place_accuracy (self, FALSE);
  show_surface_placeholders (self, why);
  caml_plot_view_clear (self->accuracy_view);
  caml_plot_view_set_placeholder (self->accuracy_view, why);
  caml_plot_view_clear (self->loss_view);
  caml_plot_view_set_placeholder (self->loss_view, why);
}

void
caml_window_on_waiting (CamlSession *session, int wait, const char *why, CamlWindow *self)
{
  gtk_widget_set_visible (GTK_WIDGET (self->sigma_box), FALSE);   /* until a run has σ-maps */
  if (wait != CAML_SESSION_WAIT_BAD_MODEL)
    {
      show_waiting (self, why);
      return;
    }
  /* Train pressed while the data loaded: there is nothing to train. */
  show_surface_placeholders (self, "fix the model to see its surface");
  caml_plot_view_clear (self->loss_view);
  caml_plot_view_set_placeholder (self->loss_view, why);
  caml_plot_view_clear (self->accuracy_view);   /* no curves of a run left */
  caml_plot_view_set_placeholder (self->accuracy_view, why);
}

/* A new run: the pages take its layout, and show its untrained surface or
 * σ-maps. */
static void
lay_out_run (CamlWindow *self)
{
  CamlRun *run = caml_session_peek_run (self->session);
  gboolean surface = caml_run_has_surface (run);
  /* The first page's name says what it shows for this model and data. */
  gtk_button_set_label (GTK_BUTTON (self->main_toggle),
                        surface ? "Surface and χ"
                        : caml_run_has_sigma (run) ? "σ-Maps and Accuracy"
                        : "Test Accuracy");
  gtk_widget_set_visible (GTK_WIDGET (self->surface_view), surface);
  gtk_widget_set_visible (GTK_WIDGET (self->chi_view), surface);
  gtk_widget_set_visible (GTK_WIDGET (self->accuracy_view), !surface);
  gtk_widget_set_visible (GTK_WIDGET (self->sigma_box), caml_run_has_sigma (run));
  place_accuracy (self, caml_run_has_sigma (run));
  caml_plot_view_clear (self->sigma_auc_view);
  caml_plot_view_set_placeholder (self->sigma_auc_view, "AUC of χ: digit vs background");
  self->sigma_shown = -1;
  self->sigma_follow = TRUE;
  if (!surface)
    show_surface_placeholders (self, "surfaces are drawn for 2-D → 1-D regression");
  else
    set_chi_columns (self, caml_run_get_n_chi (run));
}

void
caml_window_on_progress (CamlSession *session, guint what, CamlWindow *self)
{
  const char *page = gtk_stack_get_visible_child_name (self->plots_stack);

  if (what & CAML_SESSION_NEW_RUN)
    lay_out_run (self);
  if (what & CAML_SESSION_CURVES)
    caml_window_rebuild_loss_plot (self);
  if (what & CAML_SESSION_SIGMA)
    caml_window_rebuild_sigma_plots (self, TRUE);
  if ((what & CAML_SESSION_WORDS) && self->word_spans != NULL
      && (g_str_equal (page, "words") || caml_session_peek_run (session) == NULL))
    rebuild_words_plots (self);
  if ((what & CAML_SESSION_SURFACE) && caml_session_get_surface (session, NULL, NULL, NULL))
    rebuild_surface_plots (self);
}

/* Shows a plots page ("main", "parts" or "words"), prepared before it
 * shows: a text view filled once it is on screen lays its text out while
 * the frame is drawn, which GTK reports as a window drawn "without a
 * current allocation". */
void
caml_window_show_page (CamlWindow *self, const char *page)
{
  self->chosen_page = g_intern_string (page);
  if (g_str_equal (page, "parts") && caml_session_peek_run (self->session) != NULL
      && caml_session_get_surface (self->session, NULL, NULL, NULL) != NULL)
    rebuild_parts_plots (self);
  if (g_str_equal (page, "words"))
    rebuild_words_plots (self);
  gtk_stack_set_visible_child_name (self->plots_stack, page);
}

/* ---------------------------------------------------------------- export */

gboolean
caml_window_export_plot (CamlWindow *self, const char *what, const char *path, GError **error)
{
  CamlPlotView *view = caml_window_get_plot_view (self, what);
  int first = 0, n = 0;
  const CamlPlotFigure *shown = view != NULL ? caml_plot_view_get_figure (view, &first, &n)
                                             : NULL;

  if (shown == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "there is no plot to export yet");
      return FALSE;
    }
  /* The accuracy alone, as the card shows it. */
  if (g_str_equal (what, "accuracy"))
    return caml_plot_view_write (view, path, 2 * CAML_FIGURE_CELL_WIDTH,
                                 CAML_FIGURE_CELL_HEIGHT, error);
  /* The loss figure as a file: every step, smoothed as caml train's
   * loss.png (with the accuracy beside it for a classifier). */
  if (g_str_equal (what, "loss"))
    {
      CamlFigureLoss loss;
      CamlFigureCurves previous, baseline;
      g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (CamlPlotEvent));
      g_autofree char *title = NULL;
      describe_loss (self, CAML_FIGURE_FILE, &loss, &previous, &baseline, events, &title);
      g_autoptr (CamlPlotFigure) figure = caml_figure_loss (&loss);
      return caml_plot_figure_write (figure, path, error);
    }
  /* The whole figure the card shows part of (the surface beside its ground
   * truth), as caml train writes it. */
  return caml_plot_figure_write (shown, path, error);
}

static void
export_plot_to (CamlWindow *self, const char *path, gpointer data)
{
  g_autoptr (GError) error = NULL;

  if (!caml_window_export_plot (self, data, path, &error))
    caml_window_show_error (self, error->message);
  else
    caml_window_show_done (self, "Exported the plot to", path);
}

/* Before Export Plot asks where: the pages prepared only while shown. */
void
caml_window_ask_export_plot (CamlWindow *self, const char *what)
{
  CamlPlotView *view = caml_window_get_plot_view (self, what);
  const CamlExperiment *exp = caml_session_get_experiment (self->session);
  g_autofree char *name = g_strdup_printf ("%s-%s.png", exp->name ? exp->name : "experiment",
                                           what);
  if (g_str_equal (what, "parts") && caml_session_peek_run (self->session) != NULL
      && caml_session_get_surface (self->session, NULL, NULL, NULL) != NULL)
    rebuild_parts_plots (self);
  if (g_str_equal (what, "words"))
    rebuild_words_plots (self);
  if (view == NULL || !caml_plot_view_has_plot (view))
    {
      caml_window_show_error (self, "There is no such plot to export yet: train first.");
      return;
    }
  caml_window_ask_save_path (self, "Export Plot (.png or .svg)", name, export_plot_to, what);
}

/* --------------------------------------------------------------- lifecycle */

void
caml_window_plots_init (CamlWindow *self)
{
  make_words_tags (self);
  g_signal_connect (self->words_text, "query-tooltip", G_CALLBACK (on_words_text_tooltip), self);
  caml_plot_view_set_hover_func (self->loss_view, loss_hover, self);
  /* In the loss card's corner, where it fits whole (the toolbar above the
   * plots cut it to "H…" at 1024 px beside the page switcher). */
  caml_plot_view_set_hint (self->loss_view, "hover to read values");
  g_signal_connect (self->sigma_scale, "value-changed", G_CALLBACK (on_sigma_scrubbed), self);
  self->sigma_shown = -1;
  self->sigma_follow = TRUE;
  caml_plot_view_set_placeholder (self->words_view, "words are shown for text data and a "
                                  "gate over words (CA-BSFE, CA-ATT, CA-RNN)");
}

void
caml_window_plots_dispose (CamlWindow *self)
{
  g_clear_pointer (&self->word_spans, g_array_unref);
  g_clear_pointer (&self->smooth, g_free);
}
