/* caml-plot-heatmap.c — a 2-D scalar field as a colour image with a colour
 * bar, contour lines and an optional scatter overlay (training points). */
#include "caml-plot-private.h"

#include <math.h>
#include <string.h>

#define BAR_STEPS 256

struct _CamlPlotHeatmap {
  CamlPlotHeatmapOptions opts;  /* string fields point at the copies below */
  char *title;
  char *x_label;
  char *y_label;
  char *value_label;

  double *values;               /* (ny, nx), row 0 at y0 */
  int nx, ny;
  double x0, x1, y0, y1;
  double vmin, vmax;            /* colour scale */

  double *px, *py;              /* (n_points) scatter overlay */
  double *point_rgb;            /* (n_points, 3) fill colours, NULL without values */
  size_t n_points;

  CamlPlotAxis x, y, bar;
  double *levels;               /* (n_levels) contour levels */
  gboolean *level_light;        /* (n_levels) draw this level in white */
  int n_levels;
  CamlPlotSegment *segments;    /* (n_segments) */
  size_t n_segments;

  cairo_surface_t *image;       /* nx × ny RGB24, image row 0 = top (y1) */
  cairo_surface_t *bar_image;   /* 1 × BAR_STEPS, row 0 = top (vmax) */
};

static guint32
pack_rgb (const double rgb[3])
{
  return ((guint32) lround (rgb[0] * 255.0) << 16)
         | ((guint32) lround (rgb[1] * 255.0) << 8)
         | (guint32) lround (rgb[2] * 255.0);
}

static double
luminance (const double rgb[3])
{
  return 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2];
}

/* Colour image of the field; row order flipped so that y grows upwards. */
static cairo_surface_t *
build_image (const CamlPlotHeatmap *plot)
{
  cairo_surface_t *img = cairo_image_surface_create (CAIRO_FORMAT_RGB24, plot->nx, plot->ny);
  size_t n = (size_t) plot->nx * plot->ny;
  g_autofree double *t = g_new (double, n);

  if (cairo_surface_status (img) != CAIRO_STATUS_SUCCESS)
    return img;  /* an error surface: drawing it is a no-op */
  caml_plot_normalize (t, plot->values, n, plot->vmin, plot->vmax);

  cairo_surface_flush (img);
  unsigned char *data = cairo_image_surface_get_data (img);
  int stride = cairo_image_surface_get_stride (img);
  for (int j = 0; j < plot->ny; j++)
    {
      guint32 *row = (guint32 *) (data + (size_t) (plot->ny - 1 - j) * stride);
      for (int i = 0; i < plot->nx; i++)
        {
          double rgb[3];
          caml_plot_colormap_rgb (plot->opts.colormap, t[(size_t) j * plot->nx + i], rgb);
          row[i] = pack_rgb (rgb);
        }
    }
  cairo_surface_mark_dirty (img);
  return img;
}

static cairo_surface_t *
build_bar (CamlPlotColormap cmap)
{
  cairo_surface_t *img = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 1, BAR_STEPS);

  if (cairo_surface_status (img) != CAIRO_STATUS_SUCCESS)
    return img;
  cairo_surface_flush (img);
  unsigned char *data = cairo_image_surface_get_data (img);
  int stride = cairo_image_surface_get_stride (img);
  for (int r = 0; r < BAR_STEPS; r++)
    {
      double rgb[3];
      caml_plot_colormap_rgb (cmap, 1.0 - (r + 0.5) / BAR_STEPS, rgb);
      *(guint32 *) (data + (size_t) r * stride) = pack_rgb (rgb);
    }
  cairo_surface_mark_dirty (img);
  return img;
}

static void
compute_levels (CamlPlotHeatmap *plot)
{
  CamlPlotAxis axis;

  plot->levels = g_new (double, CAML_PLOT_MAX_TICKS);
  plot->level_light = g_new (gboolean, CAML_PLOT_MAX_TICKS);
  plot->n_levels = 0;
  if (plot->opts.n_contours <= 0)
    return;

  caml_plot_axis_linear (&axis, plot->vmin, plot->vmax, plot->opts.n_contours + 2);
  for (int i = 0; i < axis.n_ticks; i++)
    {
      double level = axis.ticks[i];
      double span = plot->vmax - plot->vmin;
      double rgb[3];
      if (level <= plot->vmin + 1e-9 * span || level >= plot->vmax - 1e-9 * span)
        continue;
      caml_plot_colormap_rgb (plot->opts.colormap, (level - plot->vmin) / span, rgb);
      plot->levels[plot->n_levels] = level;
      plot->level_light[plot->n_levels] = luminance (rgb) < 0.45;
      plot->n_levels++;
    }
  plot->segments = caml_plot_contours (plot->values, plot->nx, plot->ny,
                                       plot->x0, plot->x1, plot->y0, plot->y1,
                                       plot->levels, plot->n_levels, &plot->n_segments);
}

CamlPlotHeatmap *
caml_plot_heatmap_new (const CamlPlotHeatmapOptions *opts,
                       const double *values, int nx, int ny,
                       double x0, double x1, double y0, double y1,
                       const double *px, const double *py,
                       const double *pv, size_t n_points)
{
  static const CamlPlotHeatmapOptions defaults = {
    .colormap = CAML_PLOT_COLORMAP_VIRIDIS, .colorbar = TRUE, .smooth = TRUE,
  };

  g_return_val_if_fail (values != NULL && nx >= 2 && ny >= 2, NULL);
  g_return_val_if_fail (x1 > x0 && y1 > y0, NULL);
  g_return_val_if_fail (n_points == 0 || (px != NULL && py != NULL), NULL);

  CamlPlotHeatmap *plot = g_new0 (CamlPlotHeatmap, 1);
  size_t n = (size_t) nx * ny;

  plot->opts = opts != NULL ? *opts : defaults;
  plot->title = g_strdup (plot->opts.title);
  plot->x_label = g_strdup (plot->opts.x_label);
  plot->y_label = g_strdup (plot->opts.y_label);
  plot->value_label = g_strdup (plot->opts.value_label);
  plot->opts.title = plot->title;
  plot->opts.x_label = plot->x_label;
  plot->opts.y_label = plot->y_label;
  plot->opts.value_label = plot->value_label;

  plot->values = g_memdup2 (values, n * sizeof (double));
  plot->nx = nx;
  plot->ny = ny;
  plot->x0 = x0;
  plot->x1 = x1;
  plot->y0 = y0;
  plot->y1 = y1;

  double lo = 0.0, hi = 1.0;
  if (plot->opts.fixed_range)
    {
      lo = plot->opts.vmin;
      hi = plot->opts.vmax;
    }
  else
    caml_plot_finite_range (values, n, FALSE, &lo, &hi);
  /* the colour bar axis widens constant ranges and swaps reversed ones */
  caml_plot_axis_linear (&plot->bar, lo, hi, 6);
  plot->vmin = plot->bar.lo;
  plot->vmax = plot->bar.hi;

  caml_plot_axis_linear (&plot->x, x0, x1, 7);
  caml_plot_axis_linear (&plot->y, y0, y1, 7);

  /* Beyond CAML_PLOT_HEATMAP_MAX_POINTS the markers only cover each other
   * (and a million of them took minutes to draw): an even stride through
   * the points. */
  size_t shown = MIN (n_points, (size_t) CAML_PLOT_HEATMAP_MAX_POINTS);
  plot->n_points = shown;
  plot->px = g_new (double, MAX (shown, 1));
  plot->py = g_new (double, MAX (shown, 1));
  g_autofree double *v = pv != NULL ? g_new (double, MAX (shown, 1)) : NULL;
  for (size_t k = 0; k < shown; k++)
    {
      size_t i = shown < n_points ? (size_t) ((double) k * n_points / shown) : k;
      plot->px[k] = px[i];
      plot->py[k] = py[i];
      if (v != NULL)
        v[k] = pv[i];
    }
  if (v != NULL && shown > 0)
    {
      g_autofree double *t = g_new (double, shown);
      caml_plot_normalize (t, v, shown, plot->vmin, plot->vmax);
      plot->point_rgb = g_new (double, 3 * shown);
      for (size_t i = 0; i < shown; i++)
        caml_plot_colormap_rgb (plot->opts.colormap, t[i], &plot->point_rgb[3 * i]);
    }

  compute_levels (plot);
  plot->image = build_image (plot);
  plot->bar_image = build_bar (plot->opts.colormap);
  return plot;
}

void
caml_plot_heatmap_free (CamlPlotHeatmap *plot)
{
  if (plot == NULL)
    return;
  g_free (plot->title);
  g_free (plot->x_label);
  g_free (plot->y_label);
  g_free (plot->value_label);
  g_free (plot->values);
  g_free (plot->px);
  g_free (plot->py);
  g_free (plot->point_rgb);
  g_free (plot->levels);
  g_free (plot->level_light);
  g_free (plot->segments);
  cairo_surface_destroy (plot->image);
  cairo_surface_destroy (plot->bar_image);
  g_free (plot);
}

void
caml_plot_heatmap_get_range (const CamlPlotHeatmap *plot, double *vmin, double *vmax)
{
  *vmin = plot->vmin;
  *vmax = plot->vmax;
}

const double *
caml_plot_heatmap_get_levels (const CamlPlotHeatmap *plot, int *n_levels)
{
  *n_levels = plot->n_levels;
  return plot->levels;
}

const CamlPlotSegment *
caml_plot_heatmap_get_segments (const CamlPlotHeatmap *plot, size_t *n_segments)
{
  *n_segments = plot->n_segments;
  return plot->segments;
}

/* ----------------------------------------------------------- drawing --- */

static double
bar_extra (cairo_t *cr, const CamlPlotHeatmap *plot, const CamlPlotStyle *style)
{
  double s = style->scale;
  double widest = 0.0;
  char buf[64];

  if (!plot->opts.colorbar)
    return 0.0;
  for (int i = 0; i < plot->bar.n_ticks; i++)
    {
      caml_plot_axis_tick_label (&plot->bar, i, buf, sizeof buf);
      widest = MAX (widest, caml_plot_text_width (cr, style->tick_size, buf));
    }
  return 14.0 * s + 14.0 * s + 8.0 * s + widest
         + (plot->value_label != NULL ? style->label_size * 1.5 : 0.0);
}

static void
draw_field (cairo_t *cr, const CamlPlotHeatmap *plot, const CamlPlotRect *area)
{
  /* image pixel centres sit on the grid nodes; the half cells at the border
   * fall outside the clip */
  double cw = area->width / (plot->nx - 1);
  double ch = area->height / (plot->ny - 1);

  cairo_save (cr);
  cairo_rectangle (cr, area->x, area->y, area->width, area->height);
  cairo_clip (cr);
  cairo_translate (cr, area->x - 0.5 * cw, area->y - 0.5 * ch);
  cairo_scale (cr, cw, ch);
  cairo_set_source_surface (cr, plot->image, 0.0, 0.0);
  cairo_pattern_set_filter (cairo_get_source (cr),
                            plot->opts.smooth ? CAIRO_FILTER_BILINEAR : CAIRO_FILTER_NEAREST);
  cairo_pattern_set_extend (cairo_get_source (cr), CAIRO_EXTEND_PAD);
  cairo_paint (cr);
  cairo_restore (cr);
}

static void
draw_contours (cairo_t *cr, const CamlPlotHeatmap *plot, const CamlPlotStyle *style,
               const CamlPlotRect *area)
{
  double ax0 = area->x, ax1 = area->x + area->width;
  double ay0 = area->y + area->height, ay1 = area->y;

  cairo_save (cr);
  cairo_rectangle (cr, area->x, area->y, area->width, area->height);
  cairo_clip (cr);
  cairo_set_line_width (cr, 0.9 * style->scale);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_ROUND);
  for (int light = 0; light < 2; light++)
    {
      if (light)
        cairo_set_source_rgba (cr, 1.0, 1.0, 1.0, 0.75);
      else
        cairo_set_source_rgba (cr, 0.0, 0.0, 0.0, 0.55);
      for (size_t k = 0; k < plot->n_segments; k++)
        {
          const CamlPlotSegment *sg = &plot->segments[k];
          if (plot->level_light[sg->level] != light)
            continue;
          cairo_move_to (cr, caml_plot_axis_map (&plot->x, sg->x0, ax0, ax1),
                         caml_plot_axis_map (&plot->y, sg->y0, ay0, ay1));
          cairo_line_to (cr, caml_plot_axis_map (&plot->x, sg->x1, ax0, ax1),
                         caml_plot_axis_map (&plot->y, sg->y1, ay0, ay1));
        }
      cairo_stroke (cr);
    }
  cairo_restore (cr);
}

static void
draw_points (cairo_t *cr, const CamlPlotHeatmap *plot, const CamlPlotStyle *style,
             const CamlPlotRect *area)
{
  double s = style->scale;
  double r = MAX (2.8 * s, 2.2);

  cairo_save (cr);
  cairo_rectangle (cr, area->x, area->y, area->width, area->height);
  cairo_clip (cr);
  for (size_t i = 0; i < plot->n_points; i++)
    {
      double px = caml_plot_axis_map (&plot->x, plot->px[i], area->x, area->x + area->width);
      double py = caml_plot_axis_map (&plot->y, plot->py[i], area->y + area->height, area->y);
      if (!isfinite (px) || !isfinite (py))
        continue;

      if (plot->opts.marker == CAML_PLOT_MARKER_CROSS)
        {
          cairo_set_line_cap (cr, CAIRO_LINE_CAP_ROUND);
          for (int pass = 0; pass < 2; pass++)
            {
              cairo_move_to (cr, px - r, py - r);
              cairo_line_to (cr, px + r, py + r);
              cairo_move_to (cr, px - r, py + r);
              cairo_line_to (cr, px + r, py - r);
              if (pass == 0)
                {
                  cairo_set_source_rgb (cr, 1.0, 1.0, 1.0);
                  cairo_set_line_width (cr, 3.6 * s);
                }
              else
                {
                  cairo_set_source_rgb (cr, 0.0, 0.0, 0.0);
                  cairo_set_line_width (cr, 1.5 * s);
                }
              cairo_stroke (cr);
            }
          continue;
        }

      /* dot: value colour (or black) inside a white ring inside a dark
       * rim, each at least a pixel wide: a point coloured like the surface
       * under it (a good fit) still stands out on dark and light colours */
      double ring = MAX (1.3 * s, 1.3), rim = MAX (1.1 * s, 1.1);
      cairo_new_sub_path (cr);
      cairo_arc (cr, px, py, r + ring + rim, 0.0, 2.0 * G_PI);
      cairo_set_source_rgba (cr, 0.0, 0.0, 0.0, 0.85);
      cairo_fill (cr);
      cairo_arc (cr, px, py, r + ring, 0.0, 2.0 * G_PI);
      cairo_set_source_rgb (cr, 1.0, 1.0, 1.0);
      cairo_fill (cr);
      cairo_arc (cr, px, py, r, 0.0, 2.0 * G_PI);
      if (plot->point_rgb != NULL)
        cairo_set_source_rgb (cr, plot->point_rgb[3 * i], plot->point_rgb[3 * i + 1],
                              plot->point_rgb[3 * i + 2]);
      else
        cairo_set_source_rgb (cr, 0.0, 0.0, 0.0);
      cairo_fill (cr);
    }
  cairo_restore (cr);
}

static void
draw_colorbar (cairo_t *cr, const CamlPlotHeatmap *plot, const CamlPlotStyle *style,
               const CamlPlotRect *area)
{
  double s = style->scale;
  double bx = area->x + area->width + 14.0 * s;
  double bw = 14.0 * s;
  double by = area->y, bh = area->height;
  double widest = 0.0;
  char buf[64];

  cairo_save (cr);
  cairo_save (cr);
  cairo_rectangle (cr, bx, by, bw, bh);
  cairo_clip (cr);
  cairo_translate (cr, bx, by);
  cairo_scale (cr, bw, bh / BAR_STEPS);
  cairo_set_source_surface (cr, plot->bar_image, 0.0, 0.0);
  cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_BILINEAR);
  cairo_pattern_set_extend (cairo_get_source (cr), CAIRO_EXTEND_PAD);
  cairo_paint (cr);
  cairo_restore (cr);

  /* contour levels as hairlines across the bar */
  cairo_set_line_width (cr, 0.9 * s);
  for (int i = 0; i < plot->n_levels; i++)
    {
      double py = caml_plot_axis_map (&plot->bar, plot->levels[i], by + bh, by);
      if (plot->level_light[i])
        cairo_set_source_rgba (cr, 1.0, 1.0, 1.0, 0.75);
      else
        cairo_set_source_rgba (cr, 0.0, 0.0, 0.0, 0.55);
      cairo_move_to (cr, bx, py);
      cairo_line_to (cr, bx + bw, py);
      cairo_stroke (cr);
    }

  cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
  cairo_set_line_width (cr, 1.0 * s);
  cairo_rectangle (cr, bx, by, bw, bh);
  for (int i = 0; i < plot->bar.n_ticks; i++)
    {
      double py = caml_plot_axis_map (&plot->bar, plot->bar.ticks[i], by + bh, by);
      cairo_move_to (cr, bx + bw, py);
      cairo_line_to (cr, bx + bw + 4.0 * s, py);
    }
  cairo_stroke (cr);

  cairo_set_source_rgb (cr, 0.15, 0.15, 0.15);
  for (int i = 0; i < plot->bar.n_ticks; i++)
    {
      double py = caml_plot_axis_map (&plot->bar, plot->bar.ticks[i], by + bh, by);
      caml_plot_axis_tick_label (&plot->bar, i, buf, sizeof buf);
      widest = MAX (widest, caml_plot_text_width (cr, style->tick_size, buf));
      caml_plot_text (cr, style->tick_size, FALSE, bx + bw + 8.0 * s, py, 0.0, 0.5, buf);
    }
  if (plot->value_label != NULL)
    {
      cairo_set_source_rgb (cr, 0.0, 0.0, 0.0);
      cairo_save (cr);
      cairo_translate (cr, bx + bw + 8.0 * s + widest + 6.0 * s + style->label_size * 0.5,
                       by + 0.5 * bh);
      cairo_rotate (cr, G_PI / 2.0);
      caml_plot_text (cr, style->label_size, FALSE, 0.0, 0.0, 0.5, 0.5, plot->value_label);
      cairo_restore (cr);
    }
  cairo_restore (cr);
}

void
caml_plot_heatmap_draw (const CamlPlotHeatmap *plot, cairo_t *cr,
                        double width, double height, CamlPlotRect *frame)
{
  CamlPlotStyle style;
  CamlPlotRect area;

  caml_plot_style_init (&style, width, height);
  caml_plot_layout (cr, &style, width, height, plot->title, plot->x_label, plot->y_label,
                    &plot->y, bar_extra (cr, plot, &style), &area);
  if (plot->opts.equal_aspect)
    {
      double aspect = (plot->y1 - plot->y0) / (plot->x1 - plot->x0);
      double w = MIN (area.width, area.height / aspect);
      double h = w * aspect;
      area.x += 0.5 * (area.width - w);
      area.y += 0.5 * (area.height - h);
      area.width = w;
      area.height = h;
    }
  if (frame != NULL)
    *frame = area;

  cairo_save (cr);
  draw_field (cr, plot, &area);
  draw_contours (cr, plot, &style, &area);
  draw_points (cr, plot, &style, &area);
  caml_plot_draw_axes (cr, &style, width, &area, &plot->x, &plot->y, NULL,
                       plot->title, plot->x_label, plot->y_label);
  if (plot->opts.colorbar)
    draw_colorbar (cr, plot, &style, &area);
  cairo_restore (cr);
}

void
caml_plot_heatmap_draw_cb (cairo_t *cr, double width, double height, gpointer user_data)
{
  caml_plot_heatmap_draw (user_data, cr, width, height, NULL);
}
