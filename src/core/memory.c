/* memory.c — see memory.h. */
#include "core/memory.h"
#include "core/errmsg.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t option_cap;   /* --max-memory, 0: none */

/* "800000000", "800M", "2G", "1.5g" in bytes; 0 when it is no size. */
static size_t parse_size(const char *s) {
    if (!s || !*s) return 0;
    char *end;
    double v = strtod(s, &end);
    double unit = *end == 'K' || *end == 'k' ? 1024.0 : *end == 'M' || *end == 'm' ? 1048576.0
                : *end == 'G' || *end == 'g' ? 1073741824.0 : 1.0;
    if (unit > 1.0) end++;
    if (*end || !(v > 0) || v * unit >= (double)SIZE_MAX) return 0;
    return (size_t)(v * unit);
}

/* --max-memory, else ATTNVIZ_MAX_MEMORY; 0 when neither is set. */
static size_t env_cap(void) {
    return option_cap ? option_cap : parse_size(getenv("ATTNVIZ_MAX_MEMORY"));
}

int memory_set_limit(const char *size, char *err, size_t errlen) {
    if (!(option_cap = parse_size(size)))
        return errmsg_set(err, errlen, "--max-memory '%s' is not a size such as 800M or 2G", size);
    return 0;
}

size_t memory_available(void) {
    size_t avail = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        unsigned long long kb;
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) { avail = (size_t)(kb * 1024ULL); break; }
    }
    if (f) fclose(f);
    if (!avail) {
        long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
        if (pages > 0 && size > 0) avail = (size_t)pages * (size_t)size;
    }
    size_t cap = env_cap();
    return cap && (!avail || cap < avail) ? cap : avail;
}

/* "2.3 GB", "48 MB", "96 kB". */
static void human(double b, char *out, size_t n) {
    if (b >= 1e9) snprintf(out, n, "%.1f GB", b / 1e9);
    else if (b >= 1e6) snprintf(out, n, "%.0f MB", b / 1e6);
    else snprintf(out, n, "%.0f kB", b / 1e3);
}

int memory_check(size_t need, const char *what, const char *how, char *err, size_t errlen) {
    size_t have = memory_available();
    if (!have || need <= have) return 0;
    if (need == SIZE_MAX)
        return errmsg_set(err, errlen, "%s would take more memory than any machine has (%s)", what, how);
    char n[32], h[32];
    human((double)need, n, sizeof n);
    human((double)have, h, sizeof h);
    return errmsg_set(err, errlen, "%s would take about %s, and %s is free%s (%s)", what, n, h,
                      option_cap ? " under --max-memory" : getenv("ATTNVIZ_MAX_MEMORY") ? " under ATTNVIZ_MAX_MEMORY" : "",
                      how);
}
