/* memory.h — what a run may take, said before the work starts.
 *
 *   memory_available  the bytes the machine can give now (MemAvailable in
 *                     /proc/meminfo, else the physical memory), or 0 when
 *                     unknown; --max-memory (memory_set_limit) or
 *                     ATTNVIZ_MAX_MEMORY (bytes, or with a K/M/G suffix) caps
 *                     it, so a run can be held to less
 *   memory_check      need against that: 0, or -1 with "WHAT would take about N GB,
 *                     and M GB is free (HOW)"
 * Errors: -1 and one line in err. */
#ifndef ATTNVIZ_MEMORY_H
#define ATTNVIZ_MEMORY_H
#include <stddef.h>

size_t memory_available(void);

/* --max-memory SIZE ("800M", "2G"): caps memory_available as
 * ATTNVIZ_MAX_MEMORY does, and wins over it.  0, or -1 with err. */
int memory_set_limit(const char *size, char *err, size_t errlen);

/* need: the estimate in bytes (SIZE_MAX when it overflowed); what: "the maps of
 * 30 layers x 9 heads over 4,000 tokens"; how: what helps ("--layers, a shorter
 * text"). */
int memory_check(size_t need, const char *what, const char *how, char *err, size_t errlen);

#endif
