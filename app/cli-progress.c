/* cli-progress.c — the progress bar of `caml train` on a terminal. */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli-progress.h"

int
caml_cli_terminal_columns (int fd)
{
  struct winsize ws;
  if (ioctl (fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return ws.ws_col;
  const char *env = g_getenv ("COLUMNS");
  guint64 columns;
  if (env != NULL && g_ascii_string_to_unsigned (env, 10, 1, 10000, &columns, NULL))
    return (int) columns;
  return 80;
}

/* 42 → "42s", 125 → "2m05s", 7380 → "2h03m" */
static char *
duration (double seconds)
{
  long s = seconds > 0 && seconds < 1e9 ? (long) (seconds + 0.5) : 0;
  if (s < 100)
    return g_strdup_printf ("%lds", s);
  if (s < 3600)
    return g_strdup_printf ("%ldm%02lds", s / 60, s % 60);
  return g_strdup_printf ("%ldh%02ldm", s / 3600, (s % 3600) / 60);
}

/* The fields after the loss, in the order shown, and the bar before them. */
enum { F_METRIC, F_STEPS, F_TOKENS, F_ETA, N_FIELDS, BAR = N_FIELDS, N_ITEMS };
/* The order in which they go when the line is too long. A text run keeps
 * tokens/s (the rate a text run is read by) before steps/s, and the figures
 * before the bar, which only repeats the percentage. */
static const int drop_order[N_ITEMS] = { F_TOKENS, F_STEPS, F_ETA, BAR, F_METRIC };
static const int drop_order_text[N_ITEMS] = { F_STEPS, BAR, F_ETA, F_TOKENS, F_METRIC };

/* shown[i]: whether item i stays when the first `dropped` of order go. */
static void
keep_items (gboolean *shown, const int *order, int dropped)
{
  for (int i = 0; i < N_ITEMS; i++)
    shown[i] = TRUE;
  for (int i = 0; i < dropped; i++)
    shown[order[i]] = FALSE;
}

static char *
join (const char *head, char *const *fields, const gboolean *shown)
{
  GString *s = g_string_new (head);
  for (int f = 0; f < N_FIELDS; f++)
    if (shown[f] && fields[f] != NULL)
      g_string_append_printf (s, "  %s", fields[f]);
  return g_string_free (s, FALSE);
}

char *
caml_cli_progress_line (const CamlProgress *p, const char *evaluated_on, int columns)
{
  enum { BAR_MAX = 30, BAR_MIN = 10 };
  int avail = MAX (columns - 1, 1);
  double frac = p->total_steps > 0 ? (double) p->step / p->total_steps : 0.0;
  g_autofree char *eta = duration (p->steps_per_second > 0
                                   ? (p->total_steps - p->step) / p->steps_per_second : 0.0);
  char *fields[N_FIELDS] = {
    [F_METRIC] = p->n_rows > 0 ? g_strdup_printf ("%s %s %.4g", evaluated_on,
                                                  p->classification ? "acc" : "mse",
                                                  p->last_row.test_metric) : NULL,
    [F_ETA] = g_strdup_printf ("eta %s", eta),
    [F_STEPS] = g_strdup_printf ("%.0f steps/s", p->steps_per_second),
    [F_TOKENS] = p->tokens > 0 ? g_strdup_printf ("%.0f tokens/s", p->tokens_per_second)
                               : NULL,
  };
  /* before the first step there is no loss yet (last_loss is NaN): a dash */
  g_autofree char *loss = p->step > 0 ? g_strdup_printf ("%.4g", p->last_loss) : g_strdup ("-");
  g_autofree char *head = g_strdup_printf ("%3.0f%% step %ld/%ld  loss %s", 100 * frac,
                                           p->step, p->total_steps, loss);
  const int *order = p->tokens > 0 ? drop_order_text : drop_order;
  gboolean shown[N_ITEMS];
  char *line = NULL;

  /* Fewer items until the line fits: a bar of BAR_MIN to BAR_MAX columns
   * while the bar stays; in the end the head alone, cut if need be. */
  for (int dropped = 0; dropped <= N_ITEMS && line == NULL; dropped++)
    {
      keep_items (shown, order, dropped);
      g_autofree char *rest = join (head, fields, shown);
      if (!shown[BAR])
        {
          if ((int) strlen (rest) <= avail || dropped == N_ITEMS)
            line = g_steal_pointer (&rest);
          continue;
        }
      int bar = MIN (BAR_MAX, avail - (int) strlen (rest) - 3);   /* "[", "] " */
      if (bar < BAR_MIN)
        continue;
      int filled = (int) (frac * bar);
      GString *s = g_string_new ("[");
      for (int i = 0; i < bar; i++)
        g_string_append_c (s, i < filled ? '#' : '-');
      g_string_append_printf (s, "] %s", rest);
      line = g_string_free (s, FALSE);
    }
  if ((int) strlen (line) > avail)
    line[avail] = '\0';   /* ASCII only: a byte is a column */
  for (int f = 0; f < N_FIELDS; f++)
    g_free (fields[f]);
  return line;
}
