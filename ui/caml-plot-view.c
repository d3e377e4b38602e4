/* caml-plot-view.c — a GtkDrawingArea showing one prepared plot.
 *
 * The plot objects are built (all arithmetic done) by whoever calls
 * caml_plot_view_set_*; they go into an immutable, reference-counted Scene.
 * Rasterising a scene (hundreds of antialiased paths, bilinear heatmaps)
 * takes tens of milliseconds in software — too long for a frame — so a
 * worker thread draws it with Cairo into an image surface — the whole white
 * card with its rounded corners (the plots use dark ink, so they read the
 * same in light and dark themes) — one image at a time for all views,
 * within a shared CPU budget (below), and the draw function only paints the
 * newest image, plus the hover read-out whose text the motion handler
 * prepared. A view's first image, and exports, are drawn on the main thread.
 * Every image goes through caml_plot_draw_image, which keeps Cairo's fonts
 * out of two threads at once. The worker touches nothing of GTK: only the
 * scene (which nobody changes once built) and its own surface.
 *
 * This is a leaf widget without children, so it has no .ui template. */
#include "caml-plot-view.h"

#include <math.h>
#include <time.h>

/* What one plot view shows: some plots of a figure; never changed once
 * set, so a worker may draw it while the main thread goes on. */
typedef struct {
  CamlPlotFigure *figure;         /* a reference */
  int first, n;                   /* the plots shown */
  double cell_aspect;             /* heatmaps: 1.2, so that four go in two rows
                                   * in a tall view (CamlPlotPanel.cell_aspect) */
} Scene;

/* An image of a scene at a size, drawn by the worker. */
typedef struct {
  Scene *scene;                   /* a reference */
  int width, height, scale;
  cairo_surface_t *surface;       /* width·scale × height·scale, or NULL */
  gint64 cpu_us;                  /* the worker's CPU time for it */
  CamlPlotRect frame;             /* the line plot's data area, in widget pixels */
  char *hint;                     /* the view's hint when it was asked for, or NULL */
} Render;

struct _CamlPlotView {
  GtkDrawingArea parent_instance;

  /* owned */
  Scene *scene;                   /* a reference, or NULL */
  Render *image;                  /* the newest finished image, or NULL */
  gboolean rendering;             /* a worker job is under way */
  gboolean queued;                /* waiting in the render budget's line */
  char *placeholder;
  char *hint;                     /* a line plot's corner hint, or NULL (from the next image) */
  char *hover_text;
  double hover_x;                 /* pixels, < 0 when not hovering */
  double pointer_x, pointer_y;    /* pixels, the pointer over the view; < 0 when outside */
  CamlPlotRect frame;             /* the line plot's data area, from the last draw */
  guint n_updates;
  guint n_draws;
  guint n_images;
  guint n_renders;

  /* borrowed */
  CamlPlotViewHoverFunc hover_func;
  gpointer hover_data;
};

G_DEFINE_FINAL_TYPE (CamlPlotView, caml_plot_view, GTK_TYPE_DRAWING_AREA)

static void
scene_free (Scene *scene)
{
  g_clear_pointer (&scene->figure, caml_plot_figure_unref);
}

/* Shows plots [first, first + n) of figure (a reference is taken). */
static Scene *
scene_new (CamlPlotFigure *figure, int first, int n)
{
  Scene *scene = g_atomic_rc_box_new0 (Scene);
  int total = caml_plot_figure_get_n_plots (figure);
  scene->figure = caml_plot_figure_ref (figure);
  scene->first = CLAMP (first, 0, total);
  scene->n = CLAMP (n, 0, total - scene->first);
  /* a map with its axes and colour bar is about 1.2 times as wide as tall */
  if (caml_plot_figure_get_heatmap (figure, scene->first) != NULL)
    scene->cell_aspect = 1.2;
  return scene;
}

/* The line plot shown alone, or NULL. */
static const CamlPlotLine *
scene_line (const Scene *scene)
{
  return scene != NULL && scene->n == 1 ? caml_plot_figure_get_line (scene->figure, scene->first)
                                        : NULL;
}

/* The tile grid shown alone, or NULL. */
static const CamlPlotTiles *
scene_tiles (const Scene *scene)
{
  return scene != NULL && scene->n == 1
         ? caml_plot_figure_get_tiles (scene->figure, scene->first) : NULL;
}

static void
scene_unref (Scene *scene)
{
  g_atomic_rc_box_release_full (scene, (GDestroyNotify) scene_free);
}

static void
render_free (Render *render)
{
  g_clear_pointer (&render->scene, scene_unref);
  g_clear_pointer (&render->surface, cairo_surface_destroy);
  g_free (render->hint);
  g_free (render);
}

/* Draws a scene; for a line plot *frame gets its data area. Any thread. */
static void
draw_scene (const Scene *scene, cairo_t *cr, double width, double height, CamlPlotRect *frame)
{
  caml_plot_figure_draw (scene->figure, scene->first, scene->n, scene->cell_aspect, cr, width,
                         height, frame);
}

/* A line plot's hint (what hovering does) in the card's bottom-right
 * corner, under the plot area and right of the x caption, drawn into the
 * plot's image (with the plots' font, caml_plot_text) and only when it
 * takes under a third of the width — never cut. */
static void
draw_hint (cairo_t *cr, const Scene *scene, const char *hint, const CamlPlotRect *frame,
           double width, double height)
{
  if (hint == NULL || scene_line (scene) == NULL || frame->width <= 0)
    return;
  if (caml_plot_text_width (cr, 11, hint) > width / 3.0
      || frame->y + frame->height + 30 > height - 4)
    return;
  cairo_set_source_rgb (cr, 0.55, 0.55, 0.55);
  caml_plot_text (cr, 11, FALSE, width - 8, height - 6, 1.0, 1.0, hint);
}

/* For a file: the plot without the window's hint ("hover to read values"). */
static void
draw_plot_for_file (cairo_t *cr, double width, double height, gpointer user_data)
{
  CamlPlotView *self = user_data;
  draw_scene (self->scene, cr, width, height, &self->frame);
}

static gboolean
scene_has_plot (const Scene *scene)
{
  return scene != NULL && scene->n > 0;
}

static void
rounded_rect (cairo_t *cr, double x, double y, double w, double h, double r)
{
  cairo_new_sub_path (cr);
  cairo_arc (cr, x + w - r, y + r, r, -G_PI / 2, 0);
  cairo_arc (cr, x + w - r, y + h - r, r, 0, G_PI / 2);
  cairo_arc (cr, x + r, y + h - r, r, G_PI / 2, G_PI);
  cairo_arc (cr, x + r, y + r, r, G_PI, 3 * G_PI / 2);
  cairo_close_path (cr);
}

void
caml_plot_view_draw_card (cairo_t *cr, int width, int height)
{
  rounded_rect (cr, 0, 0, width, height, 8);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_fill_preserve (cr);
  cairo_clip (cr);
}

/* The whole card, corners transparent, so that the main thread paints it
 * with one unclipped blit (a rounded clip there would composite through a
 * mask every frame). */
static void
draw_render (cairo_t *cr, double width, double height, gpointer user_data)
{
  Render *render = user_data;
  caml_plot_view_draw_card (cr, render->width, render->height);
  draw_scene (render->scene, cr, render->width, render->height, &render->frame);
  draw_hint (cr, render->scene, render->hint, &render->frame, render->width, render->height);
}

static void
render_draw (Render *render)
{
  render->surface = caml_plot_draw_image (render->width, render->height, render->scale,
                                          draw_render, render);
}

static Render *
render_new (CamlPlotView *self, int width, int height)
{
  Render *render = g_new0 (Render, 1);
  render->scene = g_atomic_rc_box_acquire (self->scene);
  render->width = width;
  render->height = height;
  render->scale = gtk_widget_get_scale_factor (GTK_WIDGET (self));
  render->hint = g_strdup (self->hint);
  return render;
}

static void
render_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Render *render = task_data;
  struct timespec t0, t1;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t0);
  render_draw (render);
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t1);
  render->cpu_us = (t1.tv_sec - t0.tv_sec) * G_USEC_PER_SEC + (t1.tv_nsec - t0.tv_nsec) / 1000;
  g_task_return_boolean (task, TRUE);
}

static gboolean
image_is_current (CamlPlotView *self, int width, int height)
{
  return self->image != NULL && self->image->scene == self->scene
         && self->image->width == width && self->image->height == height
         && self->image->scale == gtk_widget_get_scale_factor (GTK_WIDGET (self));
}

/* All views share one budget for the worker's drawing: one image is drawn
 * at a time, and after an image that took d of CPU the next one starts
 * d · (1 / RENDER_SHARE − 1) later (at most RENDER_MAX_GAP), so that live
 * plots take about 5 % of one core from training however many there
 * are and however often they change. Views wait in line, oldest first; a
 * view draws the newest scene when its turn comes. */
#define RENDER_SHARE    0.05
#define RENDER_MAX_GAP  (G_USEC_PER_SEC / 2)

static struct {
  gboolean busy;                  /* an image is being drawn */
  gint64 next_start;              /* monotonic µs: no image starts before */
  GQueue waiting;                 /* CamlPlotView references */
  guint timeout_id;
} budget;

static void start_render (CamlPlotView *self, int width, int height);
static void pump_renders (void);
static void update_hover (CamlPlotView *self);

static gboolean
on_budget_timeout (gpointer unused)
{
  budget.timeout_id = 0;
  pump_renders ();
  return G_SOURCE_REMOVE;
}

static void
pump_renders (void)
{
  while (!budget.busy && !g_queue_is_empty (&budget.waiting))
    {
      gint64 now = g_get_monotonic_time ();
      if (now < budget.next_start)
        {
          if (budget.timeout_id == 0)
            budget.timeout_id = g_timeout_add ((guint) ((budget.next_start - now + 999) / 1000),
                                               on_budget_timeout, NULL);
          return;
        }
      CamlPlotView *view = g_queue_pop_head (&budget.waiting);
      int width = gtk_widget_get_width (GTK_WIDGET (view));
      int height = gtk_widget_get_height (GTK_WIDGET (view));
      view->queued = FALSE;
      if (gtk_widget_get_mapped (GTK_WIDGET (view)) && scene_has_plot (view->scene)
          && width > 0 && height > 0 && !image_is_current (view, width, height))
        start_render (view, width, height);
      g_object_unref (view);
    }
}

static void
request_render (CamlPlotView *self)
{
  if (self->queued || self->rendering)
    return;
  self->queued = TRUE;
  g_queue_push_tail (&budget.waiting, g_object_ref (self));
  pump_renders ();
}

/* Main thread: keep the newest image, and draw again if the scene or the
 * size moved on meanwhile. */
static void
on_render_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (CamlPlotView) self = user_data;   /* the task's reference, dropped here */
  Render *render = g_task_get_task_data (G_TASK (result));

  self->rendering = FALSE;
  budget.busy = FALSE;
  budget.next_start = g_get_monotonic_time ()
                      + MIN ((gint64) (render->cpu_us * (1 / RENDER_SHARE - 1)), RENDER_MAX_GAP);
  /* The image is kept even when the scene has moved on meanwhile: it is
   * newer than the one shown. Discarding it starved a plot whose scene
   * changes faster than it draws — a fast run's loss plot stayed at step
   * 700 while training reached step 400,000. The newer scene is drawn
   * next (request_render below). */
  if (render->surface != NULL)
    {
      /* Move the image out; the task frees the empty shell. */
      g_clear_pointer (&self->image, render_free);
      self->image = g_memdup2 (render, sizeof *render);
      self->n_images++;
      render->scene = NULL;
      render->surface = NULL;
      render->hint = NULL;
      self->frame = self->image->frame;
      update_hover (self);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
  pump_renders ();
}

static void
start_render (CamlPlotView *self, int width, int height)
{
  Render *render = render_new (self, width, height);

  /* The view is the callback's data, not the task's source object: the
   * worker may drop the task's last reference, and a source object would be
   * released with it — a destroyed view finalized off the main thread. */
  GTask *task = g_task_new (NULL, NULL, on_render_done, g_object_ref (self));
  g_task_set_source_tag (task, start_render);
  g_task_set_task_data (task, render, (GDestroyNotify) render_free);
  self->rendering = TRUE;
  self->n_renders++;
  budget.busy = TRUE;
  g_task_run_in_thread (task, render_thread);
  g_object_unref (task);
}

static gboolean
hovering (CamlPlotView *self)
{
  return scene_line (self->scene) != NULL && self->hover_text != NULL && self->hover_x >= 0;
}

/* The hover read-out of a line plot: a rule at the pointer and the text. */
static void
draw_hover (CamlPlotView *self, cairo_t *cr)
{
  cairo_text_extents_t ext;
  double x = self->hover_x;

  if (!hovering (self))
    return;
  cairo_set_source_rgba (cr, 0.2, 0.2, 0.2, 0.6);
  cairo_set_line_width (cr, 1);
  cairo_move_to (cr, floor (x) + 0.5, self->frame.y);
  cairo_line_to (cr, floor (x) + 0.5, self->frame.y + self->frame.height);
  cairo_stroke (cr);

  cairo_select_font_face (cr, "monospace", CAIRO_FONT_SLANT_NORMAL,
                          CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 12);
  cairo_text_extents (cr, self->hover_text, &ext);
  double bx = self->frame.x + 6, by = self->frame.y + self->frame.height - ext.height - 14;
  cairo_set_source_rgba (cr, 1, 1, 1, 0.9);
  cairo_rectangle (cr, bx, by, ext.x_advance + 12, ext.height + 10);
  cairo_fill_preserve (cr);
  cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
  cairo_stroke (cr);
  cairo_set_source_rgb (cr, 0, 0, 0);
  cairo_move_to (cr, bx + 6 - ext.x_bearing, by + 5 - ext.y_bearing);
  cairo_show_text (cr, self->hover_text);
}

static gboolean
hover_after_first_image (gpointer data)
{
  update_hover (CAML_PLOT_VIEW (data));
  return G_SOURCE_REMOVE;
}

static void
caml_plot_view_draw (GtkDrawingArea *area, cairo_t *cr, int width, int height,
                     gpointer user_data)
{
  CamlPlotView *self = CAML_PLOT_VIEW (area);

  if (scene_has_plot (self->scene))
    {
      if (self->image == NULL)
        {
          /* Nothing to show yet: this image is drawn here, the next ones by
           * the worker. */
          Render *render = render_new (self, width, height);
          render_draw (render);
          self->image = render;
          self->frame = render->frame;
          /* The read-out for a pointer already over the view, after this
           * draw (it queues one), as a worker's image gets it. */
          g_idle_add_full (G_PRIORITY_DEFAULT, hover_after_first_image, g_object_ref (self),
                           g_object_unref);
        }
      if (image_is_current (self, width, height))
        self->n_draws++;
      else
        request_render (self);

      if (self->image->width == width && self->image->height == height)
        {
          /* The newest image (of an older scene until the next is drawn). */
          cairo_set_source_surface (cr, self->image->surface, 0, 0);
          cairo_paint (cr);
        }
      else
        {
          /* Stretched while one at the new size is drawn. */
          caml_plot_view_draw_card (cr, width, height);
          cairo_save (cr);
          cairo_scale (cr, (double) width / self->image->width,
                       (double) height / self->image->height);
          cairo_set_source_surface (cr, self->image->surface, 0, 0);
          cairo_paint (cr);
          cairo_restore (cr);
        }
    }
  else
    caml_plot_view_draw_card (cr, width, height);
  if (!scene_has_plot (self->scene) && self->placeholder != NULL)
    {
      /* Centred, and wrapped to the card's width: a narrow card (the
       * accuracy beside the σ-maps) shows all of it on a few lines. */
      PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self),
                                                            self->placeholder);
      PangoContext *context = pango_layout_get_context (layout);
      PangoFontDescription *font =
        pango_font_description_copy (pango_context_get_font_description (context));
      int text_w = 0, text_h = 0;
      pango_font_description_set_absolute_size (font, 14 * PANGO_SCALE);
      pango_layout_set_font_description (layout, font);
      pango_font_description_free (font);
      pango_layout_set_width (layout, MAX (width - 32, 1) * PANGO_SCALE);
      pango_layout_set_wrap (layout, PANGO_WRAP_WORD_CHAR);
      pango_layout_set_alignment (layout, PANGO_ALIGN_CENTER);
      pango_layout_get_pixel_size (layout, &text_w, &text_h);
      cairo_set_source_rgb (cr, 0.45, 0.45, 0.45);
      cairo_move_to (cr, 16, MAX ((height - text_h) / 2.0, 0.0));
      pango_cairo_show_layout (cr, layout);
      g_object_unref (layout);
    }

  draw_hover (self, cr);
}

/* The read-out for the pointer's position over the plot shown. Called when
 * the pointer moves and whenever the plot or its frame changes: a plot
 * replaced every tick while training keeps its read-out. */
static void
update_hover (CamlPlotView *self)
{
  double x = self->pointer_x, y = self->pointer_y;
  gboolean had = self->hover_text != NULL;

  g_clear_pointer (&self->hover_text, g_free);
  self->hover_x = -1;
  const CamlPlotLine *line = scene_line (self->scene);
  if (x >= 0 && line != NULL && self->hover_func != NULL
      && self->frame.width > 0
      && x >= self->frame.x && x <= self->frame.x + self->frame.width
      && y >= self->frame.y && y <= self->frame.y + self->frame.height)
    {
      const CamlPlotAxis *xa = caml_plot_line_get_x_axis (line);
      const CamlPlotAxis *ya = caml_plot_line_get_y_axis (line);
      double dx = caml_plot_axis_unmap (xa, x, self->frame.x, self->frame.x + self->frame.width);
      double dy = caml_plot_axis_unmap (ya, y, self->frame.y + self->frame.height,
                                        self->frame.y);
      self->hover_text = self->hover_func (self, dx, dy, self->hover_data);
      self->hover_x = x;
    }
  if (had || self->hover_text != NULL)
    gtk_widget_queue_draw (GTK_WIDGET (self));
}

gboolean
caml_plot_view_to_data (CamlPlotView *self, double x, double y, double *data_x, double *data_y,
                        double *pixels_per_x, double *pixels_per_y)
{
  g_return_val_if_fail (CAML_IS_PLOT_VIEW (self), FALSE);
  const CamlPlotLine *line = scene_line (self->scene);
  if (line == NULL || self->frame.width <= 0 || self->frame.height <= 0
      || x < self->frame.x || x > self->frame.x + self->frame.width
      || y < self->frame.y || y > self->frame.y + self->frame.height)
    return FALSE;
  const CamlPlotAxis *xa = caml_plot_line_get_x_axis (line);
  const CamlPlotAxis *ya = caml_plot_line_get_y_axis (line);
  double x0 = self->frame.x, x1 = self->frame.x + self->frame.width;
  double y0 = self->frame.y + self->frame.height, y1 = self->frame.y;
  *data_x = caml_plot_axis_unmap (xa, x, x0, x1);
  *data_y = caml_plot_axis_unmap (ya, y, y0, y1);
  /* the scale near the point: pixels a unit of data spans there */
  if (pixels_per_x != NULL)
    *pixels_per_x = fabs (caml_plot_axis_map (xa, *data_x + 1e-6, x0, x1)
                          - caml_plot_axis_map (xa, *data_x, x0, x1)) / 1e-6;
  if (pixels_per_y != NULL)
    *pixels_per_y = fabs (caml_plot_axis_map (ya, *data_y + 1e-6, y0, y1)
                          - caml_plot_axis_map (ya, *data_y, y0, y1)) / 1e-6;
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *motion, double x, double y, CamlPlotView *self)
{
  self->pointer_x = x;
  self->pointer_y = y;
  update_hover (self);
}

static void
on_leave (GtkEventControllerMotion *motion, CamlPlotView *self)
{
  self->pointer_x = self->pointer_y = -1;
  update_hover (self);
}

static void
caml_plot_view_dispose (GObject *object)
{
  CamlPlotView *self = CAML_PLOT_VIEW (object);

  g_clear_pointer (&self->scene, scene_unref);
  g_clear_pointer (&self->image, render_free);
  g_clear_pointer (&self->placeholder, g_free);
  g_clear_pointer (&self->hint, g_free);
  g_clear_pointer (&self->hover_text, g_free);
  G_OBJECT_CLASS (caml_plot_view_parent_class)->dispose (object);
}

static void
caml_plot_view_class_init (CamlPlotViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = caml_plot_view_dispose;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "plotview");
}

static void
caml_plot_view_init (CamlPlotView *self)
{
  GtkEventController *motion = gtk_event_controller_motion_new ();

  self->hover_x = -1;
  self->pointer_x = self->pointer_y = -1;
  gtk_widget_add_css_class (GTK_WIDGET (self), "plot-card");
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self), caml_plot_view_draw, NULL, NULL);
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);
}

GtkWidget *
caml_plot_view_new (void)
{
  return g_object_new (CAML_TYPE_PLOT_VIEW, NULL);
}

void
caml_plot_view_clear (CamlPlotView *self)
{
  g_return_if_fail (CAML_IS_PLOT_VIEW (self));
  g_clear_pointer (&self->scene, scene_unref);
  g_clear_pointer (&self->hover_text, g_free);
  self->hover_x = -1;
  self->frame = (CamlPlotRect) { 0 };
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Replaces the scene (NULL: none). The frame of the last image stays until
 * the new one is drawn, and with it the hover read-out, recomputed for the
 * new data. */
static void
set_scene (CamlPlotView *self, Scene *scene)
{
  g_clear_pointer (&self->scene, scene_unref);
  self->scene = scene;
  if (scene == NULL)
    self->frame = (CamlPlotRect) { 0 };
  self->n_updates++;
  update_hover (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Shows a figure of its own, of one plot or of plots of a kind. */
static void
set_own_figure (CamlPlotView *self, CamlPlotFigure *figure)
{
  int n = caml_plot_figure_get_n_plots (figure);
  set_scene (self, n > 0 ? scene_new (figure, 0, n) : NULL);
  caml_plot_figure_unref (figure);
}

void
caml_plot_view_set_figure (CamlPlotView *self, CamlPlotFigure *figure, int first, int n)
{
  g_return_if_fail (CAML_IS_PLOT_VIEW (self));
  set_scene (self, figure != NULL && n > 0 ? scene_new (figure, first, n) : NULL);
}

const CamlPlotFigure *
caml_plot_view_get_figure (CamlPlotView *self, int *first, int *n)
{
  if (first != NULL)
    *first = self->scene != NULL ? self->scene->first : 0;
  if (n != NULL)
    *n = self->scene != NULL ? self->scene->n : 0;
  return self->scene != NULL ? self->scene->figure : NULL;
}

void
caml_plot_view_set_line (CamlPlotView *self, CamlPlotLine *plot)
{
  g_return_if_fail (CAML_IS_PLOT_VIEW (self));
  if (plot == NULL)
    {
      set_scene (self, NULL);
      return;
    }
  CamlPlotFigure *figure = caml_plot_figure_new (NULL, 0, 0);
  caml_plot_figure_add_line (figure, plot);
  set_own_figure (self, figure);
}

/* The index of plot `index` among those shown in the figure, or -1;
 * *n: how many are shown. */
static int
shown_index (CamlPlotView *self, int index, int *n)
{
  int shown = self->scene != NULL ? self->scene->n : 0;
  if (n != NULL)
    *n = shown;
  return index >= 0 && index < shown ? self->scene->first + index : -1;
}

const CamlPlotHeatmap *
caml_plot_view_get_heatmap (CamlPlotView *self, int index, int *n_maps)
{
  int i = shown_index (self, index, n_maps);
  return i >= 0 ? caml_plot_figure_get_heatmap (self->scene->figure, i) : NULL;
}

const CamlPlotBars *
caml_plot_view_get_bars (CamlPlotView *self, int index, int *n_bars)
{
  int i = shown_index (self, index, n_bars);
  return i >= 0 ? caml_plot_figure_get_bars (self->scene->figure, i) : NULL;
}

void
caml_plot_view_set_placeholder (CamlPlotView *self, const char *text)
{
  g_return_if_fail (CAML_IS_PLOT_VIEW (self));
  g_free (self->placeholder);
  self->placeholder = g_strdup (text);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

char *
caml_plot_view_get_hover_text_at (CamlPlotView *self, double x, double y)
{
  if (scene_line (self->scene) == NULL || self->hover_func == NULL)
    return NULL;
  return self->hover_func (self, x, y, self->hover_data);
}

void
caml_plot_view_set_hover_func (CamlPlotView *self, CamlPlotViewHoverFunc func,
                               gpointer user_data)
{
  g_return_if_fail (CAML_IS_PLOT_VIEW (self));
  self->hover_func = func;
  self->hover_data = user_data;
}

void
caml_plot_view_set_hint (CamlPlotView *self, const char *text)
{
  g_return_if_fail (CAML_IS_PLOT_VIEW (self));
  g_free (self->hint);
  self->hint = g_strdup (text);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

const char *
caml_plot_view_get_placeholder (CamlPlotView *self)
{
  return self->placeholder;
}

gboolean
caml_plot_view_has_plot (CamlPlotView *self)
{
  return scene_has_plot (self->scene);
}

const CamlPlotLine *
caml_plot_view_get_line (CamlPlotView *self)
{
  return scene_line (self->scene);
}

const CamlPlotTiles *
caml_plot_view_get_tiles (CamlPlotView *self)
{
  return scene_tiles (self->scene);
}

guint
caml_plot_view_get_update_count (CamlPlotView *self)
{
  return self->n_updates;
}

guint
caml_plot_view_get_image_count (CamlPlotView *self)
{
  return self->n_images;
}

guint
caml_plot_view_get_render_count (CamlPlotView *self)
{
  return self->n_renders;
}

guint
caml_plot_view_get_draw_count (CamlPlotView *self)
{
  return self->n_draws;
}

gboolean
caml_plot_view_write (CamlPlotView *self, const char *path, int width, int height,
                      GError **error)
{
  g_return_val_if_fail (CAML_IS_PLOT_VIEW (self), FALSE);
  if (!caml_plot_view_has_plot (self))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "there is no plot to export yet");
      return FALSE;
    }
  /* A tile grid is as tall as it is at this width: no empty band below. */
  if (scene_tiles (self->scene) != NULL)
    height = caml_plot_tiles_fit_height (scene_tiles (self->scene), width);
  /* PNG or SVG, as the name says; another extension is refused, not
   * written as PNG under its name. */
  g_autofree char *base = g_path_get_basename (path);
  const char *dot = strrchr (base, '.');
  gboolean svg = dot != NULL && g_ascii_strcasecmp (dot, ".svg") == 0;
  if (dot != NULL && !svg && g_ascii_strcasecmp (dot, ".png") != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_FILENAME,
                   "%s: plots are exported as PNG or SVG: name the file .png or .svg", path);
      return FALSE;
    }
  CamlPlotRect saved = self->frame;
  gboolean ok = svg ? caml_plot_write_svg (path, width, height, draw_plot_for_file, self, error)
                    : caml_plot_write_png (path, width, height, draw_plot_for_file, self, error);
  self->frame = saved;
  return ok;
}
