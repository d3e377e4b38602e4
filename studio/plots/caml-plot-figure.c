/* caml-plot-figure.c — a figure: plots side by side, shared by reference
 * (see caml-plot.h). */
#include <string.h>

#include "caml-plot.h"

typedef enum { PLOT_LINE, PLOT_HEATMAP, PLOT_BARS, PLOT_TILES } PlotKind;

typedef struct {
  PlotKind kind;
  gpointer plot;
} Plot;

struct _CamlPlotFigure {
  char   *title;
  int     width, height;   /* written at; height <= 0: the tiles' fit */
  GArray *plots;           /* Plot */
};

static void
figure_free (CamlPlotFigure *figure)
{
  for (guint i = 0; i < figure->plots->len; i++)
    {
      Plot *p = &g_array_index (figure->plots, Plot, i);
      switch (p->kind)
        {
        case PLOT_LINE: caml_plot_line_free (p->plot); break;
        case PLOT_HEATMAP: caml_plot_heatmap_free (p->plot); break;
        case PLOT_BARS: caml_plot_bars_free (p->plot); break;
        case PLOT_TILES: caml_plot_tiles_free (p->plot); break;
        }
    }
  g_array_unref (figure->plots);
  g_free (figure->title);
}

CamlPlotFigure *
caml_plot_figure_new (const char *title, int width, int height)
{
  CamlPlotFigure *figure = g_atomic_rc_box_new0 (CamlPlotFigure);
  figure->title = g_strdup (title);
  figure->width = width;
  figure->height = height;
  figure->plots = g_array_new (FALSE, FALSE, sizeof (Plot));
  return figure;
}

CamlPlotFigure *
caml_plot_figure_ref (CamlPlotFigure *figure)
{
  return g_atomic_rc_box_acquire (figure);
}

void
caml_plot_figure_unref (CamlPlotFigure *figure)
{
  g_atomic_rc_box_release_full (figure, (GDestroyNotify) figure_free);
}

static void
add (CamlPlotFigure *figure, PlotKind kind, gpointer plot)
{
  g_return_if_fail (plot != NULL);
  Plot p = { kind, plot };
  g_array_append_val (figure->plots, p);
}

void
caml_plot_figure_add_line (CamlPlotFigure *figure, CamlPlotLine *plot)
{
  add (figure, PLOT_LINE, plot);
}

void
caml_plot_figure_add_heatmap (CamlPlotFigure *figure, CamlPlotHeatmap *plot)
{
  add (figure, PLOT_HEATMAP, plot);
}

void
caml_plot_figure_add_bars (CamlPlotFigure *figure, CamlPlotBars *plot)
{
  add (figure, PLOT_BARS, plot);
}

void
caml_plot_figure_add_tiles (CamlPlotFigure *figure, CamlPlotTiles *plot)
{
  add (figure, PLOT_TILES, plot);
}

int
caml_plot_figure_get_n_plots (const CamlPlotFigure *figure)
{
  return (int) figure->plots->len;
}

static gconstpointer
get (const CamlPlotFigure *figure, int i, PlotKind kind)
{
  if (i < 0 || i >= (int) figure->plots->len)
    return NULL;
  const Plot *p = &g_array_index (figure->plots, Plot, i);
  return p->kind == kind ? p->plot : NULL;
}

const CamlPlotLine *
caml_plot_figure_get_line (const CamlPlotFigure *figure, int i)
{
  return get (figure, i, PLOT_LINE);
}

const CamlPlotHeatmap *
caml_plot_figure_get_heatmap (const CamlPlotFigure *figure, int i)
{
  return get (figure, i, PLOT_HEATMAP);
}

const CamlPlotBars *
caml_plot_figure_get_bars (const CamlPlotFigure *figure, int i)
{
  return get (figure, i, PLOT_BARS);
}

const CamlPlotTiles *
caml_plot_figure_get_tiles (const CamlPlotFigure *figure, int i)
{
  return get (figure, i, PLOT_TILES);
}

void
caml_plot_figure_get_size (const CamlPlotFigure *figure, int *width, int *height)
{
  *width = figure->width;
  *height = figure->height;
  const CamlPlotTiles *tiles = caml_plot_figure_get_tiles (figure, 0);
  if (*height <= 0)
    *height = tiles != NULL ? caml_plot_tiles_fit_height (tiles, figure->width) : 500;
}

static CamlPlotDrawFunc
draw_func (PlotKind kind)
{
  switch (kind)
    {
    case PLOT_LINE: return caml_plot_line_draw_cb;
    case PLOT_HEATMAP: return caml_plot_heatmap_draw_cb;
    case PLOT_BARS: return caml_plot_bars_draw_cb;
    case PLOT_TILES: return caml_plot_tiles_draw_cb;
    }
  g_assert_not_reached ();
}

void
caml_plot_figure_draw (const CamlPlotFigure *figure, int first, int n, double cell_aspect,
                       cairo_t *cr, double width, double height, CamlPlotRect *frame)
{
  int total = (int) figure->plots->len;
  first = CLAMP (first, 0, total);
  n = CLAMP (n, 0, total - first);
  gboolean whole = first == 0 && n == total;
  const char *title = whole ? figure->title : NULL;
  if (n == 0)
    return;
  const Plot *p = &g_array_index (figure->plots, Plot, first);
  if (n == 1 && title == NULL)
    {
      if (p->kind == PLOT_LINE)
        caml_plot_line_draw (p->plot, cr, width, height, frame);
      else
        draw_func (p->kind) (cr, width, height, p->plot);
      return;
    }
  CamlPlotPanelCell *cells = g_newa (CamlPlotPanelCell, n);
  for (int i = 0; i < n; i++)
    cells[i] = (CamlPlotPanelCell) { draw_func (p[i].kind), p[i].plot };
  CamlPlotPanel panel = { title, cells, n, cell_aspect > 0 ? 0 : n, cell_aspect };
  caml_plot_panel_draw (&panel, cr, width, height);
}

static void
draw_whole (cairo_t *cr, double width, double height, gpointer user_data)
{
  const CamlPlotFigure *figure = user_data;
  caml_plot_figure_draw (figure, 0, (int) figure->plots->len, 0, cr, width, height, NULL);
}

gboolean
caml_plot_figure_write (const CamlPlotFigure *figure, const char *path, GError **error)
{
  /* PNG or SVG, as the name says; another extension is refused, not
   * written as PNG under its name. */
  g_autofree char *base = g_path_get_basename (path);
  const char *dot = strrchr (base, '.');
  gboolean svg = dot != NULL && g_ascii_strcasecmp (dot, ".svg") == 0;
  if (dot != NULL && !svg && g_ascii_strcasecmp (dot, ".png") != 0)
    {
      g_set_error (error, CAML_PLOT_ERROR, CAML_PLOT_ERROR_FILE_NAME,
                   "%s: plots are exported as PNG or SVG: name the file .png or .svg", path);
      return FALSE;
    }
  int width, height;
  caml_plot_figure_get_size (figure, &width, &height);
  gpointer data = (gpointer) figure;
  return svg ? caml_plot_write_svg (path, width, height, draw_whole, data, error)
             : caml_plot_write_png (path, width, height, draw_whole, data, error);
}
