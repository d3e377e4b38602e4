/* caml-plot-bars.c — labelled horizontal bars, one row each. */
#include "caml-plot-private.h"

#include <math.h>

struct _CamlPlotBars {
  char            *title;
  CamlPlotColormap colormap;
  double           vmin, vmax;
  char           **labels;    /* (n) */
  double          *values;    /* (n) */
  char           **texts;     /* (n) the printed values */
  int              n;
};

CamlPlotBars *
caml_plot_bars_new (const CamlPlotBarsOptions *opts, const char *const *labels,
                    const double *values, int n)
{
  CamlPlotBars *plot = g_new0 (CamlPlotBars, 1);
  plot->title = g_strdup (opts->title);
  plot->colormap = opts->colormap;
  plot->vmin = opts->vmin;
  plot->vmax = opts->vmax > opts->vmin ? opts->vmax : opts->vmin + 1.0;
  plot->n = MAX (n, 0);
  plot->labels = g_new0 (char *, plot->n + 1);
  plot->texts = g_new0 (char *, plot->n + 1);
  plot->values = g_new (double, MAX (plot->n, 1));
  for (int i = 0; i < plot->n; i++)
    {
      plot->labels[i] = g_strdup (labels[i]);
      plot->values[i] = values[i];
      plot->texts[i] = isfinite (values[i]) ? g_strdup_printf ("%.3f", values[i])
                                            : g_strdup ("–");
    }
  return plot;
}

void
caml_plot_bars_free (CamlPlotBars *plot)
{
  if (plot == NULL)
    return;
  g_strfreev (plot->labels);
  g_strfreev (plot->texts);
  g_free (plot->values);
  g_free (plot->title);
  g_free (plot);
}

int
caml_plot_bars_get_n (const CamlPlotBars *plot)
{
  return plot->n;
}

const char *
caml_plot_bars_get_row (const CamlPlotBars *plot, int i, double *value)
{
  g_return_val_if_fail (i >= 0 && i < plot->n, NULL);
  if (value != NULL)
    *value = plot->values[i];
  return plot->labels[i];
}

/* Rows fill the height below the title, up to three text lines each (a few
 * words drew bars a fifth of the panel tall); labels take the widest
 * label's width, the printed values the widest value's, bars the rest. */
static void
bars_layout (const CamlPlotBars *plot, cairo_t *cr, double width, double height,
             const CamlPlotStyle *style, double *row_h, double *top, double *bar_x,
             double *bar_w)
{
  double label_w = 0, value_w = 0, pad = 6 * style->scale;
  for (int i = 0; i < plot->n; i++)
    {
      label_w = MAX (label_w, caml_plot_text_width (cr, style->tick_size, plot->labels[i]));
      value_w = MAX (value_w, caml_plot_text_width (cr, style->tick_size, plot->texts[i]));
    }
  *top = plot->title ? style->title_size * 2.0 : pad;
  *row_h = plot->n > 0 ? MIN ((height - *top - pad) / plot->n, 3.0 * style->tick_size) : 0;
  *bar_x = pad + label_w + pad;
  *bar_w = MAX (width - *bar_x - pad - value_w - pad, 1.0);
}

void
caml_plot_bars_row_rect (const CamlPlotBars *plot, cairo_t *cr, double width, double height,
                         int i, CamlPlotRect *rect)
{
  CamlPlotStyle style;
  caml_plot_style_init (&style, width, height);
  double row_h, top, bar_x, bar_w;
  bars_layout (plot, cr, width, height, &style, &row_h, &top, &bar_x, &bar_w);
  *rect = (CamlPlotRect) { bar_x, top + i * row_h + 0.15 * row_h, bar_w, 0.7 * row_h };
}

void
caml_plot_bars_draw (const CamlPlotBars *plot, cairo_t *cr, double width, double height)
{
  CamlPlotStyle style;
  caml_plot_style_init (&style, width, height);
  double row_h, top, bar_x, bar_w;
  bars_layout (plot, cr, width, height, &style, &row_h, &top, &bar_x, &bar_w);
  double pad = 6 * style.scale;

  cairo_save (cr);
  cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
  if (plot->title)
    caml_plot_draw_title (cr, style.title_size, width, width / 2,
                          style.title_size * (0.5 + 0.72), plot->title);
  for (int i = 0; i < plot->n; i++)
    {
      CamlPlotRect r = { bar_x, top + i * row_h + 0.15 * row_h, bar_w, 0.7 * row_h };
      double mid = r.y + r.height / 2;
      cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
      caml_plot_text (cr, style.tick_size, FALSE, bar_x - pad, mid, 1.0, 0.5, plot->labels[i]);
      double v = plot->values[i], t = (v - plot->vmin) / (plot->vmax - plot->vmin);
      double end = bar_x;
      if (isfinite (v))
        {
          double rgb[3];
          t = CLAMP (t, 0.0, 1.0);
          caml_plot_colormap_rgb (plot->colormap, t, rgb);
          end = bar_x + t * bar_w;
          cairo_rectangle (cr, r.x, r.y, t * bar_w, r.height);
          cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
          cairo_fill_preserve (cr);
          /* An outline keeps light bars (χ near 1: almost white) visible
           * on white: a darker shade of the colormap's dark end, a pixel wide. */
          cairo_set_source_rgb (cr, 0.25, 0.3, 0.42);
          cairo_set_line_width (cr, MAX (1.0, 0.8 * style.scale));
          cairo_stroke (cr);
        }
      cairo_set_source_rgb (cr, 0.25, 0.25, 0.25);
      caml_plot_text (cr, style.tick_size, FALSE, end + pad, mid, 0.0, 0.5, plot->texts[i]);
    }
  cairo_restore (cr);
}

void
caml_plot_bars_draw_cb (cairo_t *cr, double width, double height, gpointer user_data)
{
  caml_plot_bars_draw (user_data, cr, width, height);
}
