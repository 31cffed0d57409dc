/* mapview.h — pictures of a trace's attention maps: the descriptions that
 * render.h draws, built from a TraceMap (trace.h), so every subcommand draws a
 * head the same way.  Nothing is allocated: the strings and matrices stay
 * owned by the map. */
#ifndef ATTNVIZ_MAPVIEW_H
#define ATTNVIZ_MAPVIEW_H
#include "render/render.h"
#include "trace/trace.h"

/* Heatmap of head h's weights: queries down the left, keys on top, viridis on
 * a fixed 0–1 scale, masked cells hatched and labelled 0, values when they fit.
 * The strings and matrices stay owned by the map. */
RenderHeatmap mapview_weights_heatmap(const TraceMap *m, int h, const char *title,
                                      const char *subtitle, int highlight_row);

#endif
