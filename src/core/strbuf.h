/* strbuf.h — a growing text buffer for JSON and other text built piece by
 * piece (the trace's extra sections, the training snapshots).
 *
 *   StrBuf s = {0};
 *   strbuf_printf(&s, "{\"n\": %d}", 3);     → s.buf "…", s.len
 *   free(s.buf);                              the caller owns s.buf
 *
 * Every call returns 0, or -1 when memory ran out (the text so far stays
 * valid), so a caller can OR the results and check once. */
#ifndef ATTNVIZ_STRBUF_H
#define ATTNVIZ_STRBUF_H
#include <stddef.h>

typedef struct { char *buf; size_t len, cap; } StrBuf;

int strbuf_printf(StrBuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal of UTF-8 text t (RFC 8259 escapes). */
int strbuf_json_string(StrBuf *s, const char *t);
/* A JSON number with full float32 precision, the fewest digits that read back
 * (core/floatfmt.h, as the trace prints it); null when not finite. */
int strbuf_json_number(StrBuf *s, float x);

#endif
