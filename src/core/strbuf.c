/* strbuf.c — see strbuf.h. */
#include "core/strbuf.h"
#include "core/floatfmt.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int strbuf_printf(StrBuf *s, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = s->cap - s->len;
        int n = vsnprintf(s->buf ? s->buf + s->len : NULL, s->buf ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return -1;
        if (s->buf && (size_t)n < room) { s->len += (size_t)n; return 0; }
        size_t cap = s->cap ? s->cap * 2 : 4096;
        while (cap < s->len + (size_t)n + 1) cap *= 2;
        char *b = realloc(s->buf, cap);
        if (!b) return -1;
        s->buf = b; s->cap = cap;
    }
}

int strbuf_json_string(StrBuf *s, const char *t) {
    int bad = strbuf_printf(s, "\"");
    for (const unsigned char *p = (const unsigned char *)t; *p && !bad; p++) {
        if (*p == '"' || *p == '\\') bad |= strbuf_printf(s, "\\%c", *p);
        else if (*p == '\n') bad |= strbuf_printf(s, "\\n");
        else if (*p == '\t') bad |= strbuf_printf(s, "\\t");
        else if (*p == '\r') bad |= strbuf_printf(s, "\\r");
        else if (*p < 0x20) bad |= strbuf_printf(s, "\\u%04x", *p);
        else bad |= strbuf_printf(s, "%c", *p);
    }
    return bad | strbuf_printf(s, "\"");
}

int strbuf_json_number(StrBuf *s, float x) {
    char b[FLOAT_FORMAT_MAX];
    if (!isfinite(x)) return strbuf_printf(s, "null");
    float_format(x, 9, b);   /* the trace's numbers: the fewest digits that read back */
    return strbuf_printf(s, "%s", b);
}
