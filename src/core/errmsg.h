/* errmsg.h — the one way library-like modules report an error: a printf-style
 * one-line message into the caller's buffer (err may be NULL or errlen 0, then
 * nothing is written; control characters, such as a newline in a file name or
 * field quoted, become spaces).  Returns -1 so a function can `return errmsg_set(...)`. */
#ifndef ATTNVIZ_ERRMSG_H
#define ATTNVIZ_ERRMSG_H
#include <stddef.h>

int errmsg_set(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
