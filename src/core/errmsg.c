/* errmsg.c — see errmsg.h. */
#include "core/errmsg.h"
#include <stdarg.h>
#include <stdio.h>

int errmsg_set(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}
