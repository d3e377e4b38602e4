/* caml-parallel-view.c — a GtkDrawingArea showing a parallel-coordinates
 * plot, with brushing, hovering and activating runs.
 *
 * Everything happens on the main thread. The plot (built by whoever calls
 * set_plot, all arithmetic done) is drawn into an image through
 * caml_plot_draw_image — which keeps Cairo's fonts out of two threads at
 * once while a CamlPlotView's worker draws — when it, its brushes, its
 * highlighted run or the size change; a frame only paints that image.
 * Hit tests measure text too, so they ask the plot their question with a
 * cr of caml_plot_draw_image's (ask() below). Drawing a few hundred lines
 * takes milliseconds, so a drag brushes live.
 *
 * A leaf widget without children: no .ui template. */
#include "caml-parallel-view.h"
#include "caml-plot-view.h"   /* the card plots are shown on */

struct _CamlParallelView {
  GtkDrawingArea parent_instance;

  /* owned */
  CamlPlotParallel *plot;         /* or NULL */
  cairo_surface_t *image;         /* the plot drawn on its card, or NULL */
  int image_width, image_height, image_scale;
  guint version;                  /* bumped when the plot, a brush or the highlight change */
  guint image_version;            /* the version the image shows */
  int drag_axis;                  /* the axis a press was on, or -1 */
  double drag_x, drag_y;          /* where that press was */
  double drag_from;               /* the axis' value there */
  gboolean dragging;              /* the drag went past the threshold: it brushes */
  gboolean dragged;               /* the press became a drag: its release is no click */
  int hover_row;                  /* the highlighted line under the pointer, or -1 */
  const char *cursor;             /* the cursor's name, or NULL: the default */
  guint n_draws;
  guint n_images;
};

G_DEFINE_FINAL_TYPE (CamlParallelView, caml_parallel_view, GTK_TYPE_DRAWING_AREA)

enum {
  SIGNAL_BRUSH_CHANGED,
  SIGNAL_ROW_ACTIVATED,
  N_SIGNALS,
};

static guint signals[N_SIGNALS];

/* ---------------------------------------------------------- geometry --- */

/* A question about the plot's geometry at the view's size. */
typedef enum {
  ASK_AXIS,      /* the axis at (x, y), and its value there */
  ASK_ROW,       /* the passing line at (x, y) */
  ASK_VALUE,     /* axis' value at y, taken within the axis */
} AskKind;

typedef struct {
  const CamlPlotParallel *plot;
  double width, height;
  AskKind kind;
  double x, y;
  int axis;                       /* ASK_AXIS: the answer; ASK_VALUE: the axis asked of */
  int row;
  double value;
} Ask;

static void
answer (cairo_t *cr, double unused_width, double unused_height, gpointer data)
{
  Ask *q = data;
  double x, top, bottom;

  switch (q->kind)
    {
    case ASK_AXIS:
      q->axis = caml_plot_parallel_axis_at (q->plot, cr, q->width, q->height, q->x, q->y,
                                            &q->value);
      break;
    case ASK_ROW:
      q->row = caml_plot_parallel_row_at (q->plot, cr, q->width, q->height, q->x, q->y);
      break;
    case ASK_VALUE:
      caml_plot_parallel_axis_x (q->plot, cr, q->width, q->height, q->axis, &x, &top, &bottom);
      caml_plot_parallel_axis_at (q->plot, cr, q->width, q->height, x,
                                  CLAMP (q->y, top, bottom), &q->value);
      break;
    }
}

/* Answers q with a cr of caml_plot_draw_image's, under the plots' lock (a
 * one-pixel image nobody sees); FALSE without a plot or a size. */
static gboolean
ask (CamlParallelView *self, Ask *q)
{
  q->plot = self->plot;
  q->width = gtk_widget_get_width (GTK_WIDGET (self));
  q->height = gtk_widget_get_height (GTK_WIDGET (self));
  if (self->plot == NULL || q->width <= 0 || q->height <= 0)
    return FALSE;
  cairo_surface_destroy (caml_plot_draw_image (1, 1, 1, answer, q));
  return TRUE;
}

static int
axis_at (CamlParallelView *self, double x, double y, double *value)
{
  Ask q = { .kind = ASK_AXIS, .x = x, .y = y, .axis = -1 };
  ask (self, &q);
  if (value != NULL)
    *value = q.value;
  return q.axis;
}

static int
row_at (CamlParallelView *self, double x, double y)
{
  Ask q = { .kind = ASK_ROW, .x = x, .y = y, .row = -1 };
  ask (self, &q);
  return q.row;
}

/* ------------------------------------------------------------ state --- */

static void
changed (CamlParallelView *self)
{
  self->version++;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* The line under the pointer: highlighted, its run the tooltip. */
static void
set_hover (CamlParallelView *self, int row)
{
  if (row == self->hover_row)
    return;
  self->hover_row = row;
  if (self->plot != NULL)
    caml_plot_parallel_set_highlight (self->plot, row);
  g_autofree char *text = row >= 0 ? caml_plot_parallel_describe_row (self->plot, row) : NULL;
  gtk_widget_set_tooltip_text (GTK_WIDGET (self), text);
  changed (self);
}

static void
set_cursor (CamlParallelView *self, const char *name)
{
  if (g_strcmp0 (name, self->cursor) == 0)
    return;
  self->cursor = name;
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self), name);
}

/* After a brush changed: a highlighted line that no longer passes is
 * faint, and no longer hovered. */
static void
brushes_changed (CamlParallelView *self, int axis)
{
  if (self->hover_row >= 0 && !caml_plot_parallel_row_passes (self->plot, self->hover_row))
    set_hover (self, -1);
  changed (self);
  g_signal_emit (self, signals[SIGNAL_BRUSH_CHANGED], 0, axis);
}

void
caml_parallel_view_brush (CamlParallelView *self, int axis, double lo, double hi)
{
  g_return_if_fail (CAML_IS_PARALLEL_VIEW (self) && self->plot != NULL);
  g_return_if_fail (axis >= 0 && axis < caml_plot_parallel_get_n_axes (self->plot));
  caml_plot_parallel_set_brush (self->plot, axis, lo, hi);
  brushes_changed (self, axis);
}

void
caml_parallel_view_clear_brush (CamlParallelView *self, int axis)
{
  g_return_if_fail (CAML_IS_PARALLEL_VIEW (self));
  if (self->plot == NULL)
    return;
  g_return_if_fail (axis >= -1 && axis < caml_plot_parallel_get_n_axes (self->plot));
  gboolean any = FALSE;
  for (int a = 0; a < caml_plot_parallel_get_n_axes (self->plot); a++)
    if (axis == -1 || a == axis)
      any |= caml_plot_parallel_get_brush (self->plot, a, NULL, NULL);
  if (!any)
    return;
  caml_plot_parallel_clear_brush (self->plot, axis);
  brushes_changed (self, axis);
}

int
caml_parallel_view_activate_at (CamlParallelView *self, double x, double y)
{
  g_return_val_if_fail (CAML_IS_PARALLEL_VIEW (self), -1);
  int row = row_at (self, x, y);
  if (row >= 0)
    g_signal_emit (self, signals[SIGNAL_ROW_ACTIVATED], 0, row);
  return row;
}

/* The axis of the new plot named as axis of the old one, or -1. */
static int
same_axis (const CamlPlotParallel *old, int axis, const CamlPlotParallel *plot)
{
  const char *name = caml_plot_parallel_get_axis_name (old, axis);
  for (int b = 0; b < caml_plot_parallel_get_n_axes (plot); b++)
    if (g_strcmp0 (caml_plot_parallel_get_axis_name (plot, b), name) == 0)
      return b;
  return -1;
}

void
caml_parallel_view_set_plot (CamlParallelView *self, CamlPlotParallel *plot)
{
  g_return_if_fail (CAML_IS_PARALLEL_VIEW (self));
  g_return_if_fail (plot == NULL || plot != self->plot);
  CamlPlotParallel *old = self->plot;
  gboolean dropped = FALSE;

  for (int a = 0; old != NULL && a < caml_plot_parallel_get_n_axes (old); a++)
    {
      double lo, hi;
      if (!caml_plot_parallel_get_brush (old, a, &lo, &hi))
        continue;
      int b = plot != NULL ? same_axis (old, a, plot) : -1;
      if (b >= 0)
        caml_plot_parallel_set_brush (plot, b, lo, hi);
      else
        dropped = TRUE;
    }
  /* a drag under way goes on along the axis of that name */
  if (self->drag_axis >= 0)
    self->drag_axis = plot != NULL ? same_axis (old, self->drag_axis, plot) : -1;
  if (plot != NULL)
    caml_plot_parallel_set_highlight (plot, -1);
  self->plot = plot;
  caml_plot_parallel_free (old);
  self->hover_row = -1;
  gtk_widget_set_tooltip_text (GTK_WIDGET (self), NULL);
  changed (self);
  if (dropped)
    g_signal_emit (self, signals[SIGNAL_BRUSH_CHANGED], 0, -1);
}

const CamlPlotParallel *
caml_parallel_view_get_plot (CamlParallelView *self)
{
  g_return_val_if_fail (CAML_IS_PARALLEL_VIEW (self), NULL);
  return self->plot;
}

/* ------------------------------------------------------------ input --- */

static void
on_motion (GtkEventControllerMotion *motion, double x, double y, CamlParallelView *self)
{
  if (self->dragging)
    return;
  int row = row_at (self, x, y);
  set_hover (self, row);
  set_cursor (self, row >= 0 ? "pointer"
                    : axis_at (self, x, y, NULL) >= 0 ? "ns-resize" : NULL);
}

static void
on_leave (GtkEventControllerMotion *motion, CamlParallelView *self)
{
  set_hover (self, -1);
  set_cursor (self, NULL);
}

/* A press on an axis may start a brush: it does once the pointer moves
 * past the drag threshold. */
static void
on_drag_begin (GtkGestureDrag *drag, double x, double y, CamlParallelView *self)
{
  self->drag_x = x;
  self->drag_y = y;
  self->dragging = FALSE;
  self->drag_axis = axis_at (self, x, y, &self->drag_from);
}

/* The brush runs from the press to the pointer, live. */
static void
on_drag_update (GtkGestureDrag *drag, double dx, double dy, CamlParallelView *self)
{
  double x = self->drag_x + dx, y = self->drag_y + dy;

  if (self->drag_axis < 0 || self->plot == NULL)
    return;
  if (!self->dragging
      && !gtk_drag_check_threshold (GTK_WIDGET (self), (int) self->drag_x, (int) self->drag_y,
                                    (int) x, (int) y))
    return;
  if (!self->dragging)
    set_hover (self, -1);
  self->dragging = TRUE;
  self->dragged = TRUE;
  Ask q = { .kind = ASK_VALUE, .axis = self->drag_axis, .y = y };
  if (ask (self, &q))
    caml_parallel_view_brush (self, self->drag_axis, self->drag_from, q.value);
}

static void
on_drag_end (GtkGestureDrag *drag, double dx, double dy, CamlParallelView *self)
{
  self->dragging = FALSE;
  self->drag_axis = -1;
}

/* A click without a drag: on an axis it clears the axis' brush, on a line
 * it opens the run; a double click clears every brush. */
static void
on_pressed (GtkGestureClick *click, int n_press, double x, double y, CamlParallelView *self)
{
  gtk_widget_grab_focus (GTK_WIDGET (self));
  self->dragged = FALSE;
  if (n_press == 2)
    caml_parallel_view_clear_brush (self, -1);
}

static void
on_released (GtkGestureClick *click, int n_press, double x, double y, CamlParallelView *self)
{
  /* GTK's click gesture reports the release of a drag too */
  if (n_press != 1 || self->plot == NULL || self->dragged)
    return;
  int axis = axis_at (self, x, y, NULL);
  if (axis >= 0)
    caml_parallel_view_clear_brush (self, axis);
  else
    caml_parallel_view_activate_at (self, x, y);
}

static gboolean
on_key_pressed (GtkEventControllerKey *key, guint keyval, guint keycode, GdkModifierType state,
                CamlParallelView *self)
{
  if (keyval != GDK_KEY_Escape || self->plot == NULL)
    return FALSE;
  guint before = self->version;
  caml_parallel_view_clear_brush (self, -1);
  return self->version != before;
}

/* ---------------------------------------------------------- drawing --- */

static void
draw_plot_on_card (cairo_t *cr, double width, double height, gpointer plot)
{
  caml_plot_view_draw_card (cr, (int) width, (int) height);
  caml_plot_parallel_draw (plot, cr, width, height);
}

static void
caml_parallel_view_draw (GtkDrawingArea *area, cairo_t *cr, int width, int height,
                         gpointer unused)
{
  CamlParallelView *self = CAML_PARALLEL_VIEW (area);
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (self));

  self->n_draws++;
  if (self->plot == NULL)
    {
      caml_plot_view_draw_card (cr, width, height);
      return;
    }
  if (self->image == NULL || self->image_version != self->version
      || self->image_width != width || self->image_height != height
      || self->image_scale != scale)
    {
      g_clear_pointer (&self->image, cairo_surface_destroy);
      self->image = caml_plot_draw_image (width, height, scale, draw_plot_on_card, self->plot);
      self->image_width = width;
      self->image_height = height;
      self->image_scale = scale;
      self->image_version = self->version;
      self->n_images++;
    }
  cairo_set_source_surface (cr, self->image, 0, 0);
  cairo_paint (cr);
}

guint
caml_parallel_view_get_draw_count (CamlParallelView *self)
{
  return self->n_draws;
}

guint
caml_parallel_view_get_image_count (CamlParallelView *self)
{
  return self->n_images;
}

gboolean
caml_parallel_view_write (CamlParallelView *self, const char *path, int width, int height,
                          GError **error)
{
  g_return_val_if_fail (CAML_IS_PARALLEL_VIEW (self), FALSE);
  if (self->plot == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "there is no plot to export yet");
      return FALSE;
    }
  return caml_plot_write_png (path, width, height, caml_plot_parallel_draw_cb, self->plot,
                              error);
}

/* ------------------------------------------------------------ class --- */

static void
caml_parallel_view_dispose (GObject *object)
{
  CamlParallelView *self = CAML_PARALLEL_VIEW (object);

  g_clear_pointer (&self->plot, caml_plot_parallel_free);
  g_clear_pointer (&self->image, cairo_surface_destroy);
  G_OBJECT_CLASS (caml_parallel_view_parent_class)->dispose (object);
}

static void
caml_parallel_view_class_init (CamlParallelViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = caml_parallel_view_dispose;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "parallelview");
  signals[SIGNAL_BRUSH_CHANGED] =
    g_signal_new ("brush-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 1, G_TYPE_INT);
  signals[SIGNAL_ROW_ACTIVATED] =
    g_signal_new ("row-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 1, G_TYPE_INT);
}

static void
caml_parallel_view_init (CamlParallelView *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  GtkEventController *motion = gtk_event_controller_motion_new ();
  GtkGesture *drag = gtk_gesture_drag_new ();
  GtkGesture *click = gtk_gesture_click_new ();
  GtkEventController *key = gtk_event_controller_key_new ();

  self->drag_axis = -1;
  self->hover_row = -1;
  gtk_widget_add_css_class (widget, "plot-card");
  gtk_widget_set_focusable (widget, TRUE);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self), caml_parallel_view_draw, NULL, NULL);

  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (widget, motion);
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (drag), GDK_BUTTON_PRIMARY);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (on_drag_end), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (drag));
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (click), GDK_BUTTON_PRIMARY);
  g_signal_connect (click, "pressed", G_CALLBACK (on_pressed), self);
  g_signal_connect (click, "released", G_CALLBACK (on_released), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (click));
  g_signal_connect (key, "key-pressed", G_CALLBACK (on_key_pressed), self);
  gtk_widget_add_controller (widget, key);
}

GtkWidget *
caml_parallel_view_new (void)
{
  return g_object_new (CAML_TYPE_PARALLEL_VIEW, NULL);
}
