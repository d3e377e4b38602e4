/* caml-plot.c — shared drawing helpers (text, axes), the panel layout and
 * PNG/SVG output. */
#include "caml-plot-private.h"
#include "caml.h"   /* caml_file_replace: exports are written crash-safely */

#include <math.h>
#include <cairo-svg.h>
#include <png.h>
#include <setjmp.h>

G_DEFINE_QUARK (caml-plot-error-quark, caml_plot_error)

/* ------------------------------------------------------------- style --- */

void
caml_plot_style_init (CamlPlotStyle *style, double width, double height)
{
  /* text shrinks more slowly than the figure so small plots stay legible */
  double s = CLAMP (sqrt (MIN (width / 640.0, height / 480.0)), 0.7, 2.0);

  style->scale = s;
  style->title_size = 15.0 * s;
  style->label_size = 13.0 * s;
  style->tick_size = 11.0 * s;
}

/* Plots and threads. Cairo 1.16's scaled fonts are not safe to use from two
 * threads at once: now and then cairo_scaled_font_destroy aborts with
 * "! scaled_font->cache_frozen" (seen once in the GUI tests, while a plot
 * view's worker drew). Cairo hands one scaled font to everybody who asks for
 * the same face, size and font options, so
 *   - plot text uses font options of its own: greyscale antialiasing (files
 *     then have no colour fringes, whatever fontconfig says) with a subpixel
 *     order, which greyscale ignores and GTK never pairs with it: a plot's
 *     fonts are never the toolkit's, whose text the main thread draws;
 *   - plots are drawn one at a time, in whichever thread: the writers below
 *     and caml_plot_draw_image hold plot_lock while they draw. */
static GMutex plot_lock;

static const cairo_font_options_t *
plot_font_options (void)
{
  static gsize once;
  static cairo_font_options_t *options;

  if (g_once_init_enter (&once))
    {
      options = cairo_font_options_create ();
      cairo_font_options_set_antialias (options, CAIRO_ANTIALIAS_GRAY);
      cairo_font_options_set_subpixel_order (options, CAIRO_SUBPIXEL_ORDER_VBGR);
      cairo_font_options_set_hint_metrics (options, CAIRO_HINT_METRICS_ON);
      g_once_init_leave (&once, 1);
    }
  return options;
}

static void
set_font (cairo_t *cr, double size, gboolean bold)
{
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL,
                          bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, size);
  cairo_set_font_options (cr, plot_font_options ());
}

double
caml_plot_text_width (cairo_t *cr, double size, const char *text)
{
  cairo_text_extents_t ext;

  if (text == NULL || *text == '\0')
    return 0.0;
  set_font (cr, size, FALSE);
  cairo_text_extents (cr, text, &ext);
  return ext.x_advance;
}

void
caml_plot_text (cairo_t *cr, double size, gboolean bold,
                double x, double y, double ax, double ay, const char *text)
{
  cairo_text_extents_t ext;
  double cap = size * 0.72;  /* height of capitals and digits in Sans */

  if (text == NULL || *text == '\0')
    return;
  set_font (cr, size, bold);
  cairo_text_extents (cr, text, &ext);
  cairo_move_to (cr, x - ax * ext.x_advance, y + cap * (1.0 - ay));
  cairo_show_text (cr, text);
}

static double
weighted_width (cairo_t *cr, double size, gboolean bold, const char *text)
{
  cairo_text_extents_t ext;

  set_font (cr, size, bold);
  cairo_text_extents (cr, text, &ext);
  return ext.x_advance;
}

/* The first n characters of text (whole UTF-8 ones), trailing spaces
 * dropped, and "…". */
static char *
text_head (const char *text, glong n)
{
  g_autofree char *head = g_utf8_substring (text, 0, n);
  return g_strconcat (g_strchomp (head), "…", NULL);
}

/* Characters of a text measured at most: more would not fit any plot, and
 * measuring a name of megabytes took minutes. */
#define TEXT_MAX_CHARS 1000

char *
caml_plot_shorten_text (cairo_t *cr, double size, gboolean bold, const char *text,
                        double avail)
{
  glong total = g_utf8_strlen (text, -1);
  glong n = MIN (total, TEXT_MAX_CHARS);
  char *shown = n < total ? text_head (text, n) : g_strdup (text);

  if (n <= 1 || weighted_width (cr, size, bold, shown) <= avail)
    return shown;
  /* The longest head that fits with "…" (at least one character), by
   * bisection. */
  glong lo = 1, hi = n - 1, best = 1;
  while (lo <= hi)
    {
      glong mid = lo + (hi - lo) / 2;
      g_autofree char *head = text_head (text, mid);
      if (weighted_width (cr, size, bold, head) <= avail)
        {
          best = mid;
          lo = mid + 1;
        }
      else
        hi = mid - 1;
    }
  g_free (shown);
  return text_head (text, best);
}

void
caml_plot_draw_title (cairo_t *cr, double size, double width, double cx, double y,
                      const char *title)
{
  if (title == NULL || *title == '\0')
    return;
  double margin = MAX (4.0, 0.01 * width);
  double avail = MAX (width - 2.0 * margin, 1.0);
  g_autofree char *whole = caml_plot_shorten_text (cr, size, TRUE, title, G_MAXDOUBLE);
  double tw = weighted_width (cr, size, TRUE, whole);

  if (tw > avail)
    size = MAX (size * avail / tw, 0.75 * size);
  /* Still too wide: shortened with "…". */
  g_autofree char *shown = caml_plot_shorten_text (cr, size, TRUE, title, avail);
  tw = weighted_width (cr, size, TRUE, shown);
  cx = CLAMP (cx, margin + 0.5 * tw, MAX (margin + 0.5 * tw, width - margin - 0.5 * tw));
  caml_plot_text (cr, size, TRUE, cx, y, 0.5, 1.0, shown);
}

void
caml_plot_text_vertical (cairo_t *cr, double size, double x, double y, const char *text)
{
  if (text == NULL || *text == '\0')
    return;
  cairo_save (cr);
  cairo_translate (cr, x, y);
  cairo_rotate (cr, -G_PI / 2.0);
  caml_plot_text (cr, size, FALSE, 0.0, 0.0, 0.5, 0.5, text);
  cairo_restore (cr);
}

/* ---------------------------------------------------------- axes --- */


void
caml_plot_layout (cairo_t *cr, const CamlPlotStyle *style, double width, double height,
                  const char *title, const char *x_label, const char *y_label,
                  const CamlPlotAxis *y, double extra_right, CamlPlotRect *area)
{
  double s = style->scale;
  double widest = 0.0;
  char buf[64];

  for (int i = 0; i < y->n_ticks; i++)
    {
      caml_plot_axis_tick_label (y, i, buf, sizeof buf);
      widest = MAX (widest, caml_plot_text_width (cr, style->tick_size, buf));
    }

  double top = title != NULL && *title ? style->title_size * 2.2 : 14.0 * s;
  double bottom = 9.0 * s + style->tick_size * 1.3 + 10.0 * s
                  + (x_label != NULL && *x_label ? style->label_size * 1.5 : 0.0);
  double left = 10.0 * s + (y_label != NULL && *y_label ? style->label_size * 1.6 : 0.0)
                + widest + 9.0 * s;
  double right = 22.0 * s + extra_right;

  area->x = left;
  area->y = top;
  area->width = MAX (width - left - right, 10.0);
  area->height = MAX (height - top - bottom, 10.0);
}

void
caml_plot_draw_grid (cairo_t *cr, const CamlPlotStyle *style, const CamlPlotRect *area,
                     const CamlPlotAxis *x, const CamlPlotAxis *y)
{
  double x0 = area->x, x1 = area->x + area->width;
  double y0 = area->y + area->height, y1 = area->y;

  cairo_save (cr);
  cairo_set_line_width (cr, 0.6 * style->scale);
  cairo_set_source_rgb (cr, 0.93, 0.93, 0.93);
  for (int i = 0; i < y->n_minor; i++)
    {
      double py = caml_plot_axis_map (y, y->minor[i], y0, y1);
      cairo_move_to (cr, x0, py);
      cairo_line_to (cr, x1, py);
    }
  for (int i = 0; i < x->n_minor; i++)
    {
      double px = caml_plot_axis_map (x, x->minor[i], x0, x1);
      cairo_move_to (cr, px, y0);
      cairo_line_to (cr, px, y1);
    }
  cairo_stroke (cr);

  cairo_set_line_width (cr, 0.8 * style->scale);
  cairo_set_source_rgb (cr, 0.85, 0.85, 0.85);
  for (int i = 0; i < y->n_ticks; i++)
    {
      double py = caml_plot_axis_map (y, y->ticks[i], y0, y1);
      cairo_move_to (cr, x0, py);
      cairo_line_to (cr, x1, py);
    }
  for (int i = 0; i < x->n_ticks; i++)
    {
      double px = caml_plot_axis_map (x, x->ticks[i], x0, x1);
      cairo_move_to (cr, px, y0);
      cairo_line_to (cr, px, y1);
    }
  cairo_stroke (cr);
  cairo_restore (cr);
}

void
caml_plot_draw_axes (cairo_t *cr, const CamlPlotStyle *style, double width,
                     const CamlPlotRect *area, const CamlPlotAxis *x, const CamlPlotAxis *y,
                     const char *const *x_tick_labels, const char *title, const char *x_label,
                     const char *y_label)
{
  double s = style->scale;
  double tick_len = 4.0 * s;
  double x0 = area->x, x1 = area->x + area->width;
  double y0 = area->y + area->height, y1 = area->y;
  char labels[CAML_PLOT_MAX_TICKS][64];
  const char *texts[CAML_PLOT_MAX_TICKS];
  double widths[CAML_PLOT_MAX_TICKS];

  cairo_save (cr);
  cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
  cairo_set_line_width (cr, 1.0 * s);
  cairo_rectangle (cr, x0, y1, area->width, area->height);
  for (int i = 0; i < x->n_ticks; i++)
    {
      double px = caml_plot_axis_map (x, x->ticks[i], x0, x1);
      cairo_move_to (cr, px, y0);
      cairo_line_to (cr, px, y0 + tick_len);
    }
  for (int i = 0; i < y->n_ticks; i++)
    {
      double py = caml_plot_axis_map (y, y->ticks[i], y0, y1);
      cairo_move_to (cr, x0, py);
      cairo_line_to (cr, x0 - tick_len, py);
    }
  cairo_stroke (cr);

  /* x labels: thin them out (every 2nd, 3rd…) when they would collide */
  for (int i = 0; i < x->n_ticks; i++)
    {
      caml_plot_axis_tick_label (x, i, labels[i], sizeof labels[i]);
      texts[i] = x_tick_labels != NULL ? x_tick_labels[i] : labels[i];
      widths[i] = caml_plot_text_width (cr, style->tick_size, texts[i]);
    }
  int stride = 1;
  for (; stride < x->n_ticks; stride++)
    {
      gboolean fits = TRUE;
      for (int i = stride; i < x->n_ticks; i += stride)
        {
          double gap = caml_plot_axis_map (x, x->ticks[i], x0, x1)
                       - caml_plot_axis_map (x, x->ticks[i - stride], x0, x1);
          if (gap < 0.5 * (widths[i] + widths[i - stride]) + 8.0 * s)
            fits = FALSE;
        }
      if (fits)
        break;
    }
  cairo_set_source_rgb (cr, 0.15, 0.15, 0.15);
  for (int i = 0; i < x->n_ticks; i += stride)
    caml_plot_text (cr, style->tick_size, FALSE, caml_plot_axis_map (x, x->ticks[i], x0, x1),
                    y0 + tick_len + 4.0 * s, 0.5, 0.0, texts[i]);
  double widest = 0.0;
  for (int i = 0; i < y->n_ticks; i++)
    {
      char buf[64];
      caml_plot_axis_tick_label (y, i, buf, sizeof buf);
      widest = MAX (widest, caml_plot_text_width (cr, style->tick_size, buf));
      caml_plot_text (cr, style->tick_size, FALSE, x0 - tick_len - 4.0 * s,
                      caml_plot_axis_map (y, y->ticks[i], y0, y1), 1.0, 0.5, buf);
    }

  cairo_set_source_rgb (cr, 0.0, 0.0, 0.0);
  if (x_label != NULL)
    caml_plot_text (cr, style->label_size, FALSE, x0 + 0.5 * area->width,
                    y0 + tick_len + 4.0 * s + style->tick_size * 1.3 + 6.0 * s,
                    0.5, 0.0, x_label);
  if (y_label != NULL)
    caml_plot_text_vertical (cr, style->label_size,
                             x0 - tick_len - 4.0 * s - widest - 9.0 * s - style->label_size * 0.5,
                             y1 + 0.5 * area->height, y_label);
  caml_plot_draw_title (cr, style->title_size, width, x0 + 0.5 * area->width,
                        y1 - style->title_size * 0.75, title);
  cairo_restore (cr);
}

/* ------------------------------------------------------------- note --- */

void
caml_plot_draw_note (cairo_t *cr, const CamlPlotStyle *style, const CamlPlotRect *area,
                     const char *note)
{
  if (note == NULL || *note == '\0')
    return;
  double s = style->scale;
  double size = style->tick_size * 1.1;
  double avail = MAX (0.8 * area->width, 20.0);
  g_auto (GStrv) words = g_strsplit (note, " ", -1);
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);
  GString *line = g_string_new (NULL);
  for (int i = 0; words[i] != NULL; i++)
    {
      if (*words[i] == '\0')
        continue;
      g_autofree char *longer = line->len > 0 ? g_strconcat (line->str, " ", words[i], NULL)
                                              : g_strdup (words[i]);
      if (line->len > 0 && caml_plot_text_width (cr, size, longer) > avail)
        {
          g_ptr_array_add (lines, g_strdup (line->str));
          g_string_assign (line, words[i]);
        }
      else
        g_string_assign (line, longer);
    }
  if (line->len > 0)
    g_ptr_array_add (lines, g_string_free (line, FALSE));
  else
    g_string_free (line, TRUE);

  double widest = 0.0;
  for (guint i = 0; i < lines->len; i++)
    widest = MAX (widest, caml_plot_text_width (cr, size, lines->pdata[i]));
  double row = size * 1.4, pad = 8.0 * s;
  double bw = widest + 2.0 * pad, bh = lines->len * row - (row - size * 0.72) + 2.0 * pad;
  double bx = area->x + 0.5 * (area->width - bw), by = area->y + 0.5 * (area->height - bh);
  cairo_save (cr);
  cairo_rectangle (cr, bx, by, bw, bh);
  cairo_set_source_rgba (cr, 1.0, 1.0, 1.0, 0.92);
  cairo_fill_preserve (cr);
  cairo_set_source_rgb (cr, 0.75, 0.75, 0.75);
  cairo_set_line_width (cr, 0.8 * s);
  cairo_stroke (cr);
  cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
  for (guint i = 0; i < lines->len; i++)
    caml_plot_text (cr, size, FALSE, area->x + 0.5 * area->width, by + pad + i * row, 0.5, 0.0,
                    lines->pdata[i]);
  cairo_restore (cr);
  g_ptr_array_free (lines, TRUE);
}

/* ------------------------------------------------------------ panel --- */

static double
panel_title_height (const CamlPlotPanel *panel, double width, double height)
{
  CamlPlotStyle style;

  if (panel->title == NULL || *panel->title == '\0')
    return 0.0;
  caml_plot_style_init (&style, width, height);
  return style.title_size * 2.4;
}

/* The height of the largest cell of the panel's aspect in a grid of cols. */
static double
panel_cell_size (const CamlPlotPanel *panel, int cols, double width, double height)
{
  int rows = (MAX (panel->n_cells, 1) + cols - 1) / cols;
  return MIN (width / cols / panel->cell_aspect, height / rows);
}

static int
panel_cols (const CamlPlotPanel *panel, double width, double height)
{
  int n = MAX (panel->n_cells, 1);
  if (panel->cell_aspect <= 0.0)
    return panel->n_cols > 0 ? MIN (panel->n_cols, n) : n;
  /* Of the grids with rows as full as they can be (2 × 2 for four cells,
   * not 3 + 1), the one with the largest cells; one row unless that is
   * over 10 % smaller. */
  int best = n;
  double best_size = 0.0;
  for (int rows = 1; rows <= n; rows++)
    {
      int cols = (n + rows - 1) / rows;
      double size = panel_cell_size (panel, cols, width, height);
      if (size > best_size)
        {
          best = cols;
          best_size = size;
        }
    }
  return best_size > 1.1 * panel_cell_size (panel, n, width, height) ? best : n;
}

void
caml_plot_panel_cell_rect (const CamlPlotPanel *panel, double width, double height,
                           int index, CamlPlotRect *rect)
{
  double top = panel_title_height (panel, width, height);
  int cols = panel_cols (panel, width, height - top);
  int rows = (MAX (panel->n_cells, 1) + cols - 1) / cols;
  double cw = width / cols;
  double ch = (height - top) / rows;

  rect->x = (index % cols) * cw;
  rect->y = top + (index / cols) * ch;
  rect->width = cw;
  rect->height = ch;
}

void
caml_plot_panel_draw (const CamlPlotPanel *panel, cairo_t *cr, double width, double height)
{
  if (panel->title != NULL && *panel->title != '\0')
    {
      CamlPlotStyle style;
      caml_plot_style_init (&style, width, height);
      cairo_set_source_rgb (cr, 0.0, 0.0, 0.0);
      caml_plot_draw_title (cr, style.title_size * 1.1, width, width / 2.0,
                            panel_title_height (panel, width, height) * 0.7, panel->title);
    }
  for (int i = 0; i < panel->n_cells; i++)
    {
      CamlPlotRect r;
      caml_plot_panel_cell_rect (panel, width, height, i, &r);
      if (panel->cells[i].draw == NULL)
        continue;
      cairo_save (cr);
      cairo_rectangle (cr, r.x, r.y, r.width, r.height);
      cairo_clip (cr);
      cairo_translate (cr, r.x, r.y);
      panel->cells[i].draw (cr, r.width, r.height, panel->cells[i].user_data);
      cairo_restore (cr);
    }
}

void
caml_plot_panel_draw_cb (cairo_t *cr, double width, double height, gpointer user_data)
{
  caml_plot_panel_draw (user_data, cr, width, height);
}

/* ------------------------------------------------------------ output --- */

static cairo_status_t
append_bytes (void *closure, const unsigned char *data, unsigned int length)
{
  g_byte_array_append (closure, data, length);
  return CAIRO_STATUS_SUCCESS;
}

static gboolean
check_status (cairo_status_t status, const char *path, GError **error)
{
  if (status == CAIRO_STATUS_SUCCESS)
    return TRUE;
  g_set_error (error, CAML_PLOT_ERROR, CAML_PLOT_ERROR_RENDER,
               "Could not render the plot for %s: %s", path, cairo_status_to_string (status));
  return FALSE;
}

/* Paints white, then draw; returns the first error of cr. */
static cairo_status_t
render (cairo_surface_t *surface, int width, int height,
        CamlPlotDrawFunc draw, gpointer user_data)
{
  cairo_t *cr = cairo_create (surface);
  cairo_status_t status;

  cairo_set_source_rgb (cr, 1.0, 1.0, 1.0);
  cairo_paint (cr);
  cairo_set_antialias (cr, CAIRO_ANTIALIAS_DEFAULT);
  draw (cr, width, height, user_data);
  status = cairo_status (cr);
  cairo_destroy (cr);
  return status;
}

/* PNG through libpng rather than cairo_surface_write_to_png: Cairo asks
 * zlib for its default level, and compressing was half of what `caml
 * sweep` spent on a small model. Plots are flat colours, so zlib's fastest
 * level with the Up filter costs a fraction of the time for files ~20 %
 * larger. Opaque images are written as RGB, others as straight RGBA. */
static void
png_append (png_structp png, png_bytep data, size_t length)
{
  g_byte_array_append (png_get_io_ptr (png), data, length);
}

static void
png_flush_nothing (png_structp png)
{
  (void) png;
}

static void
png_fail (png_structp png, png_const_charp message)
{
  (void) message;
  png_longjmp (png, 1);
}

static void
png_warn_nothing (png_structp png, png_const_charp message)
{
  (void) png;
  (void) message;
}

static gboolean
is_opaque (const unsigned char *data, int width, int height, int stride)
{
  for (int y = 0; y < height; y++)
    {
      const uint32_t *row = (const uint32_t *) (data + (size_t) y * stride);
      for (int x = 0; x < width; x++)
        if ((row[x] >> 24) != 0xff)
          return FALSE;
    }
  return TRUE;
}

/* One row of Cairo's native-endian premultiplied ARGB as RGB or RGBA bytes. */
static void
row_to_bytes (const uint32_t *row, int width, gboolean opaque, unsigned char *out)
{
  for (int x = 0; x < width; x++)
    {
      uint32_t p = row[x];
      unsigned a = p >> 24, r = (p >> 16) & 0xff, g = (p >> 8) & 0xff, b = p & 0xff;
      if (opaque)
        {
          *out++ = r;
          *out++ = g;
          *out++ = b;
          continue;
        }
      if (a != 0 && a != 0xff)
        {
          r = (r * 255 + a / 2) / a;
          g = (g * 255 + a / 2) / a;
          b = (b * 255 + a / 2) / a;
        }
      *out++ = r;
      *out++ = g;
      *out++ = b;
      *out++ = a;
    }
}

static gboolean
encode_png (cairo_surface_t *surface, GByteArray *bytes)
{
  int width = cairo_image_surface_get_width (surface);
  int height = cairo_image_surface_get_height (surface);
  int stride = cairo_image_surface_get_stride (surface);
  const unsigned char *data = cairo_image_surface_get_data (surface);
  gboolean opaque = is_opaque (data, width, height, stride);
  unsigned char *volatile line = g_malloc ((size_t) width * 4);
  png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL, png_fail,
                                             png_warn_nothing);
  png_infop info = png ? png_create_info_struct (png) : NULL;
  gboolean ok = FALSE;

  if (info != NULL && setjmp (png_jmpbuf (png)) == 0)
    {
      png_set_write_fn (png, bytes, png_append, png_flush_nothing);
      png_set_compression_level (png, 1);
      png_set_filter (png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
      png_set_IHDR (png, info, width, height, 8,
                    opaque ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGB_ALPHA,
                    PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
      png_write_info (png, info);
      for (int y = 0; y < height; y++)
        {
          row_to_bytes ((const uint32_t *) (data + (size_t) y * stride), width, opaque, line);
          png_write_row (png, line);
        }
      png_write_end (png, info);
      ok = TRUE;
    }
  png_destroy_write_struct (&png, &info);
  g_free (line);
  return ok;
}

static gboolean
save_bytes (const char *path, GByteArray *bytes, GError **error)
{
  return caml_file_replace (path, bytes->data, bytes->len, error);
}

static gboolean
check_size (const char *path, int width, int height, GError **error)
{
  if (width > 0 && height > 0 && width <= 16384 && height <= 16384)
    return TRUE;
  g_set_error (error, CAML_PLOT_ERROR, CAML_PLOT_ERROR_RENDER,
               "Could not render the plot for %s: size %d × %d is out of range (1…16384)",
               path, width, height);
  return FALSE;
}

gboolean
caml_plot_write_png (const char *path, int width, int height,
                     CamlPlotDrawFunc draw, gpointer user_data, GError **error)
{
  g_return_val_if_fail (path != NULL && draw != NULL, FALSE);
  if (!check_size (path, width, height, error))
    return FALSE;

  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width, height);
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  cairo_status_t status = cairo_surface_status (surface);

  if (status == CAIRO_STATUS_SUCCESS)
    {
      g_mutex_lock (&plot_lock);
      status = render (surface, width, height, draw, user_data);
      g_mutex_unlock (&plot_lock);
    }
  if (status == CAIRO_STATUS_SUCCESS)
    {
      cairo_surface_flush (surface);
      if (!encode_png (surface, bytes))
        status = CAIRO_STATUS_WRITE_ERROR;
    }
  cairo_surface_destroy (surface);
  if (!check_status (status, path, error))
    return FALSE;
  return save_bytes (path, bytes, error);
}

gboolean
caml_plot_write_svg (const char *path, int width, int height,
                     CamlPlotDrawFunc draw, gpointer user_data, GError **error)
{
  g_return_val_if_fail (path != NULL && draw != NULL, FALSE);
  if (!check_size (path, width, height, error))
    return FALSE;

  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  cairo_surface_t *surface = cairo_svg_surface_create_for_stream (append_bytes, bytes,
                                                                  width, height);
  cairo_status_t status = cairo_surface_status (surface);

  /* The SVG surface holds the fonts until it is finished and gone. */
  g_mutex_lock (&plot_lock);
  if (status == CAIRO_STATUS_SUCCESS)
    status = render (surface, width, height, draw, user_data);
  cairo_surface_finish (surface);
  if (status == CAIRO_STATUS_SUCCESS)
    status = cairo_surface_status (surface);
  cairo_surface_destroy (surface);
  g_mutex_unlock (&plot_lock);
  if (!check_status (status, path, error))
    return FALSE;
  return save_bytes (path, bytes, error);
}

cairo_surface_t *
caml_plot_draw_image (int width, int height, int scale, CamlPlotDrawFunc draw,
                      gpointer user_data)
{
  g_return_val_if_fail (draw != NULL && scale > 0, NULL);
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32,
                                                         MAX (width, 0) * scale,
                                                         MAX (height, 0) * scale);
  if (cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS)
    return surface;
  cairo_surface_set_device_scale (surface, scale, scale);
  g_mutex_lock (&plot_lock);
  cairo_t *cr = cairo_create (surface);
  draw (cr, width, height, user_data);
  cairo_destroy (cr);
  g_mutex_unlock (&plot_lock);
  cairo_surface_flush (surface);
  return surface;
}
