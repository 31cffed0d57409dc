/* page.h — the interactive, offline index.html: the traces' numbers embedded
 * as JSON, and a page (plain HTML, CSS and JavaScript, nothing fetched) that
 * draws from them a head view, a model view, a heatmap with the value under
 * the pointer, the step-through Q·Kᵀ → ÷√d_k → +mask → softmax → ·V and, when
 * a trace has a "generation" section, its timeline, and when it has a
 * "passage" section (a long text, pipeline/longtext.h), the whole text where
 * pointing at a token colours the keys its row looks at most.  The still pictures of
 * the gallery page (render/html.h) stay below it, as downloads.
 *
 * The CSS and JavaScript are real files, src/render/assets/page.css, page.js
 * and page_passage.js (the Passage tab), embedded into the binary at build time (the Makefile turns them
 * into build/gen/page_assets.inc): one binary, no file read at run time.
 *
 * Use: page_data_add() each trace (while it still holds what the page should
 * show), then page_write() the gallery page with the views inserted at a byte
 * offset of it (where its header ends).  Besides the traces the page gets one
 * block of its own (id "attnviz-page"): the colour maps as the PNGs draw them
 * (render_cmap_rgb sampled at N evenly spaced positions, hex "rrggbb" per
 * colour; viridis N = 256, exactly its table; diverging N = 1021, so its
 * eleven control colours sit on samples), so page.js paints no colour of its
 * own, and, for a comparison (page_data_compare), which sets are A and B.
 * Matrices are embedded as their float32 bytes (little-endian, base64: each
 * value exactly as the trace holds it, and cheap to write); page.js reads them
 * back as rows of numbers, −∞ and NaN as null; single numbers are %.6g text.  At most PAGE_MAX_CELLS numbers are
 * embedded over all traces: past that the step matrices, then whole maps, are
 * left out, and the page says how many.
 *
 * Ownership: PageData owns its JSON texts (page_data_free, which accepts a
 * zeroed PageData); page_write frees the gallery page either way.  Errors:
 * -1 with a message in err; nothing here prints or exits. */
#ifndef ATTNVIZ_PAGE_H
#define ATTNVIZ_PAGE_H
#include <stddef.h>
#include "render/html.h"
#include "trace/trace.h"

#define PAGE_MAX_CELLS ((size_t)4000000)

typedef struct {
    char **json;      /* n JSON object texts, one per trace, owned  */
    int n, cap;
    size_t cells;     /* numbers embedded so far, over every trace  */
    int compare;      /* page_data_compare was called: sets 0 (A) and 1 (B) */
    float compare_scale;
} PageData;

void page_data_init(PageData *pd);
void page_data_free(PageData *pd);

/* Where the page opens: map index, head index and query row (-1: none).  The
 * page shows that head and, when a row is given, opens with that query token
 * pinned in the head view and chosen in the step-through. */
typedef struct {
    int map, head, query;
} PageFocus;

/* Adds trace t as one data set of the page: `name` is what the page's chooser
 * shows, `trace_file` the trace's file beside the page (a download link) or
 * NULL when none is written, focus where the views open (NULL: the first map,
 * head and query).  The trace's images become the page's download list; its
 * "generation" section, when present, is embedded as it is.
 * 0, or -1 with err (out of memory). */
int page_data_add(PageData *pd, const Trace *t, const char *name, const char *trace_file,
                  const PageFocus *focus, char *err, size_t errlen);

/* Marks the page as a comparison: data sets 0 and 1 (page_data_add's order)
 * are sides A and B.  The page adds a Difference tab (B − A of the head shown,
 * cell by cell, on the diverging map with the symmetric scale ±scale, the
 * scale of the comparison's PNGs) and opens on it. */
void page_data_compare(PageData *pd, float scale);

/* Writes the gallery page g with the interactive views (and pd's data)
 * inserted at byte offset `at` of it, atomically to path (html_page_write).
 * Frees g either way.  0, or -1 with err. */
int page_write(HtmlPage *g, size_t at, const PageData *pd, const char *path, char *err, size_t errlen);

#endif
