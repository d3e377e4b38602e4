/* plot-png.c — see plot-png.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "plot-png.h"

cairo_surface_t *
load_png (const char *path, int width, int height)
{
  cairo_surface_t *img = cairo_image_surface_create_from_png (path);
  assert_int_equal (cairo_surface_status (img), CAIRO_STATUS_SUCCESS);
  assert_int_equal (cairo_image_surface_get_width (img), width);
  assert_int_equal (cairo_image_surface_get_height (img), height);
  cairo_surface_flush (img);
  return img;
}
