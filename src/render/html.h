/* html.h — static, offline HTML pages (index.html) that show pictures in order.
 *
 * A page is built in memory, then written atomically by html_page_write (a
 * temporary file renamed into place, core/fileio.h).  Everything given as text
 * is escaped; no script, no network, no CDN.
 * Each figure has an image (relative path), a caption in English, an optional
 * Vietnamese caption, and optionally the exact command that makes it. */
#ifndef ATTNVIZ_HTML_H
#define ATTNVIZ_HTML_H
#include <stddef.h>

typedef struct {
    char *buf;
    size_t len, cap;
    int oom;
} HtmlPage;

void html_page_begin(HtmlPage *p, const char *title, const char *subtitle);
void html_section(HtmlPage *p, const char *id, const char *heading, const char *text_en,
                  const char *text_vi);
void html_figure(HtmlPage *p, const char *img, const char *caption_en, const char *caption_vi,
                 const char *command);
/* A link to another page (e.g. a sentence's subfolder index). */
void html_link(HtmlPage *p, const char *href, const char *text);
/* Preformatted text block (a table printed by the tool, a translation). */
void html_pre(HtmlPage *p, const char *text);
/* Adds raw, already-safe HTML (internal use only). */
void html_raw(HtmlPage *p, const char *s);
void html_bytes(HtmlPage *p, const char *s, size_t n);   /* n bytes of raw HTML */
/* Room for n more bytes at once (a page of maps is megabytes: one allocation, not a doubling's copies). */
void html_reserve(HtmlPage *p, size_t n);
void html_text(HtmlPage *p, const char *s);   /* escaped */
/* Closes the page (its footer) without writing it: for a page written in parts. */
void html_page_end(HtmlPage *p);
/* Closes the page and writes it.  0, or -1 with err. Frees the buffer either way. */
int  html_page_write(HtmlPage *p, const char *path, char *err, size_t errlen);
void html_page_free(HtmlPage *p);

#endif
