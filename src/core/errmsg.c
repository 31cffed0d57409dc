/* errmsg.c — see errmsg.h. */
#include "core/errmsg.h"
#include <stdarg.h>
#include <stdio.h>

int errmsg_set(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        if (n >= (int)errlen && errlen > 1) {   /* cut: never inside a UTF-8 character */
            size_t i = errlen - 2;              /* the last byte kept */
            while (i > 0 && ((unsigned char)err[i] & 0xC0) == 0x80) i--;
            unsigned char c = (unsigned char)err[i];
            size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
            if (i + len > errlen - 1) err[i] = '\0';
        }
        for (char *p = err; *p; p++)   /* one line, whatever a file's name or field held: controls become spaces */
            if ((unsigned char)*p < 0x20 || *p == 0x7F) *p = ' ';
    }
    return -1;
}
