/* html.c — see html.h. */
#include "render/html.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include <stdlib.h>
#include <string.h>

static void put(HtmlPage *p, const char *s, size_t n) {
    if (p->oom) return;
    if (p->len + n + 1 > p->cap) {
        size_t cap = p->cap ? p->cap : 4096;
        while (cap < p->len + n + 1) cap *= 2;
        char *b = realloc(p->buf, cap);
        if (!b) { p->oom = 1; return; }
        p->buf = b; p->cap = cap;
    }
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    p->buf[p->len] = '\0';
}

void html_raw(HtmlPage *p, const char *s) { put(p, s, strlen(s)); }

void html_bytes(HtmlPage *p, const char *s, size_t n) { put(p, s, n); }

void html_reserve(HtmlPage *p, size_t n) {
    if (p->oom || p->len + n + 1 <= p->cap) return;
    char *b = realloc(p->buf, p->len + n + 1);
    if (!b) { p->oom = 1; return; }
    p->buf = b;
    p->cap = p->len + n + 1;
}

void html_text(HtmlPage *p, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '&': html_raw(p, "&amp;"); break;
        case '<': html_raw(p, "&lt;"); break;
        case '>': html_raw(p, "&gt;"); break;
        case '"': html_raw(p, "&quot;"); break;
        case '\'': html_raw(p, "&#39;"); break;
        default: put(p, s, 1);
        }
    }
}

void html_page_begin(HtmlPage *p, const char *title, const char *subtitle) {
    memset(p, 0, sizeof *p);
    html_raw(p, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    html_text(p, title);
    html_raw(p, "</title>\n<style>\n"
        "body{font-family:'DejaVu Sans',Verdana,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}\n"
        "h1{font-size:1.7em;margin-bottom:.2em} h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}\n"
        "figure{margin:1.5em 0;padding:1em;border:1px solid #e4e4e4;border-radius:6px;background:#fafafa}\n"
        "figure img{max-width:100%;height:auto;display:block;margin:0 auto;background:#fff}\n"
        "figcaption{margin-top:.6em} .vi{color:#555;font-style:italic;display:block;margin-top:.2em}\n"
        "code,pre{font-family:'DejaVu Sans Mono',monospace;font-size:.9em}\n"
        "pre{background:#f3f3f3;padding:.6em;overflow-x:auto;border-radius:4px}\n"
        ".cmd{display:block;margin-top:.4em;color:#333;background:#eef;padding:.2em .5em;border-radius:3px;overflow-x:auto;white-space:pre}\n"
        "nav a{margin-right:1em}\n"
        "</style>\n</head>\n<body>\n<h1>");
    html_text(p, title);
    html_raw(p, "</h1>\n");
    if (subtitle) { html_raw(p, "<p>"); html_text(p, subtitle); html_raw(p, "</p>\n"); }
}

void html_section(HtmlPage *p, const char *id, const char *heading, const char *text_en,
                  const char *text_vi) {
    html_raw(p, "<h2");
    if (id) { html_raw(p, " id=\""); html_text(p, id); html_raw(p, "\""); }
    html_raw(p, ">");
    html_text(p, heading);
    html_raw(p, "</h2>\n");
    if (text_en) { html_raw(p, "<p>"); html_text(p, text_en); html_raw(p, "</p>\n"); }
    if (text_vi) { html_raw(p, "<p class=\"vi\" lang=\"vi\">"); html_text(p, text_vi); html_raw(p, "</p>\n"); }
}

void html_figure(HtmlPage *p, const char *img, const char *caption_en, const char *caption_vi,
                 const char *command) {
    html_raw(p, "<figure>\n<a href=\"");
    html_text(p, img);
    html_raw(p, "\"><img src=\"");
    html_text(p, img);
    html_raw(p, "\" alt=\"");
    html_text(p, caption_en ? caption_en : img);
    html_raw(p, "\" loading=\"lazy\"></a>\n<figcaption>");
    html_text(p, caption_en ? caption_en : img);
    if (caption_vi) { html_raw(p, "<span class=\"vi\" lang=\"vi\">"); html_text(p, caption_vi); html_raw(p, "</span>"); }
    if (command) { html_raw(p, "<code class=\"cmd\">"); html_text(p, command); html_raw(p, "</code>"); }
    html_raw(p, "</figcaption>\n</figure>\n");
}

void html_link(HtmlPage *p, const char *href, const char *text) {
    html_raw(p, "<p><a href=\"");
    html_text(p, href);
    html_raw(p, "\">");
    html_text(p, text);
    html_raw(p, "</a></p>\n");
}

void html_pre(HtmlPage *p, const char *text) {
    html_raw(p, "<pre>");
    html_text(p, text);
    html_raw(p, "</pre>\n");
}

void html_page_free(HtmlPage *p) {
    free(p->buf);
    memset(p, 0, sizeof *p);
}

void html_page_end(HtmlPage *p) {
    html_raw(p, "<footer><p><small>Made by attnviz, offline.</small></p></footer>\n</body>\n</html>\n");
}

int html_page_write(HtmlPage *p, const char *path, char *err, size_t errlen) {
    html_page_end(p);
    int rc = p->oom ? errmsg_set(err, errlen, "out of memory building %s", path)
                    : file_write_atomic(path, p->buf, p->len, err, errlen);
    html_page_free(p);
    return rc;
}
