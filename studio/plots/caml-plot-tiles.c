/* caml-plot-tiles.c — a grid of small images drawn with sharp pixels. */
#include "caml-plot-private.h"

#include <math.h>

#define GAP       1   /* pixels between tiles */
#define GROUP_GAP 4   /* pixels between groups of tiles */

struct _CamlPlotTiles {
  char            *title;
  char            *legend;   /* the colour bar's caption, or NULL: none */
  CamlPlotColormap colormap;
  CamlPlotAxis     legend_axis;   /* legend_lo … legend_hi, its ticks */
  cairo_surface_t *image;   /* the whole grid at one pixel per value */
  int              width, height;
};

static int
column_x (int col, int w, int group)
{
  int groups_before = group > 0 ? col / group : 0;
  return col * (w + GAP) + groups_before * (GROUP_GAP - GAP);
}

CamlPlotTiles *
caml_plot_tiles_new (const CamlPlotTilesOptions *opts, const float *tiles, int count,
                     int h, int w)
{
  CamlPlotTiles *plot = g_new0 (CamlPlotTiles, 1);
  int cols = MAX (1, MIN (opts->n_cols, MAX (count, 1)));
  int rows = MAX (1, (count + cols - 1) / cols);
  plot->title = g_strdup (opts->title);
  plot->legend = g_strdup (opts->legend);
  plot->colormap = opts->colormap;
  if (opts->legend != NULL)
    caml_plot_axis_linear (&plot->legend_axis, opts->legend_lo, opts->legend_hi, 5);
  plot->width = column_x (cols - 1, w, opts->group) + w;
  plot->height = rows * (h + GAP) - GAP;
  plot->image = cairo_image_surface_create (CAIRO_FORMAT_RGB24, plot->width, plot->height);

  cairo_surface_flush (plot->image);
  unsigned char *data = cairo_image_surface_get_data (plot->image);
  int stride = cairo_image_surface_get_stride (plot->image);
  /* White gaps, then every tile through the colormap. */
  memset (data, 0xff, (size_t) stride * plot->height);
  for (int t = 0; t < count; t++)
    {
      int x0 = column_x (t % cols, w, opts->group), y0 = (t / cols) * (h + GAP);
      const float *tile = tiles + (size_t) t * h * w;
      for (int y = 0; y < h; y++)
        {
          guint32 *row = (guint32 *) (data + (size_t) (y0 + y) * stride) + x0;
          for (int x = 0; x < w; x++)
            {
              double rgb[3];
              caml_plot_colormap_rgb (opts->colormap, tile[y * w + x], rgb);
              row[x] = ((guint32) lround (rgb[0] * 255) << 16)
                       | ((guint32) lround (rgb[1] * 255) << 8)
                       | (guint32) lround (rgb[2] * 255);
            }
        }
    }
  cairo_surface_mark_dirty (plot->image);
  return plot;
}

void
caml_plot_tiles_free (CamlPlotTiles *plot)
{
  if (plot == NULL)
    return;
  cairo_surface_destroy (plot->image);
  g_free (plot->title);
  g_free (plot->legend);
  g_free (plot);
}

void
caml_plot_tiles_get_size (const CamlPlotTiles *plot, int *width, int *height)
{
  *width = plot->width;
  *height = plot->height;
}

const char *
caml_plot_tiles_get_title (const CamlPlotTiles *plot)
{
  return plot->title;
}

#define MARGIN 6.0

static double
title_space (const CamlPlotTiles *plot, double width, double height)
{
  CamlPlotStyle style;
  caml_plot_style_init (&style, width, height);
  return plot->title ? style.title_size * 2.0 : 4.0;
}

/* The band under the grid for the colour bar and its tick labels. */
static double
legend_space (const CamlPlotTiles *plot, double width, double height)
{
  CamlPlotStyle style;
  caml_plot_style_init (&style, width, height);
  return plot->legend ? style.tick_size * 3.4 : 0.0;
}

int
caml_plot_tiles_fit_height (const CamlPlotTiles *plot, int width)
{
  double scale = MAX (width - 2 * MARGIN, 1.0) / plot->width;
  double height = scale * plot->height + 40.0;

  /* the text's size follows the figure's: settle it in a few rounds */
  for (int round = 0; round < 4; round++)
    height = title_space (plot, width, height) + scale * plot->height + MARGIN
             + legend_space (plot, width, height);
  return (int) ceil (height);
}

/* A horizontal colour bar centred under the grid, from y down: the caption
 * on its left, tick labels under it. */
static void
draw_legend (const CamlPlotTiles *plot, cairo_t *cr, const CamlPlotStyle *style, double width,
             double y)
{
  const CamlPlotAxis *axis = &plot->legend_axis;
  double ts = style->tick_size;
  double bar_w = MIN (0.36 * width, 360.0 * style->scale), bar_h = ts;
  double x0 = (width - bar_w) / 2, y0 = y + 0.6 * ts;

  cairo_save (cr);
  cairo_pattern_t *ramp = cairo_pattern_create_linear (x0, 0, x0 + bar_w, 0);
  for (int k = 0; k <= 16; k++)
    {
      double rgb[3];
      caml_plot_colormap_rgb (plot->colormap, k / 16.0, rgb);
      cairo_pattern_add_color_stop_rgb (ramp, k / 16.0, rgb[0], rgb[1], rgb[2]);
    }
  cairo_rectangle (cr, x0, y0, bar_w, bar_h);
  cairo_set_source (cr, ramp);
  cairo_fill_preserve (cr);
  cairo_pattern_destroy (ramp);
  cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
  cairo_set_line_width (cr, 1.0);
  cairo_stroke (cr);

  cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
  caml_plot_text (cr, style->label_size, FALSE, x0 - 0.6 * ts, y0 + 0.5 * bar_h, 1.0, 0.5,
                  plot->legend);
  for (int i = 0; i < axis->n_ticks; i++)
    {
      char buf[64];
      double x = caml_plot_axis_map (axis, axis->ticks[i], x0, x0 + bar_w);
      cairo_move_to (cr, x, y0 + bar_h);
      cairo_line_to (cr, x, y0 + bar_h + 0.3 * ts);
      cairo_stroke (cr);
      caml_plot_axis_tick_label (axis, i, buf, sizeof buf);
      caml_plot_text (cr, ts, FALSE, x, y0 + bar_h + 1.3 * ts, 0.5, 1.0, buf);
    }
  cairo_restore (cr);
}

void
caml_plot_tiles_draw (const CamlPlotTiles *plot, cairo_t *cr, double width, double height)
{
  CamlPlotStyle style;
  caml_plot_style_init (&style, width, height);
  double top = title_space (plot, width, height);
  double margin = MARGIN;

  cairo_save (cr);
  cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
  if (plot->title)
    caml_plot_draw_title (cr, style.title_size, width, width / 2,
                          style.title_size * (0.5 + 0.72), plot->title);

  double below = legend_space (plot, width, height);
  double avail_w = width - 2 * margin, avail_h = height - top - margin - below;
  double scale = MIN (avail_w / plot->width, avail_h / plot->height);
  if (scale > 0)
    {
      double x = (width - scale * plot->width) / 2, y = top;
      cairo_save (cr);
      cairo_translate (cr, x, y);
      cairo_scale (cr, scale, scale);
      cairo_set_source_surface (cr, plot->image, 0, 0);
      cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
      cairo_paint (cr);
      cairo_restore (cr);
      if (plot->legend != NULL)
        draw_legend (plot, cr, &style, width, top + scale * plot->height);
    }
  cairo_restore (cr);
}

void
caml_plot_tiles_draw_cb (cairo_t *cr, double width, double height, gpointer user_data)
{
  caml_plot_tiles_draw (user_data, cr, width, height);
}
