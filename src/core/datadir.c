/* datadir.c — see datadir.h. */
#include "core/datadir.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int datadir_find(const char *rel, char *path, size_t n) {
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        const char *base[] = {"/../samples/", "/../../samples/", "/../share/attnviz/"};
        for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) {
            char candidate[PATH_MAX + 512], real[PATH_MAX];
            snprintf(candidate, sizeof candidate, "%s%s%s", exe, base[i], rel);
            if (access(candidate, R_OK) != 0) continue;
            snprintf(path, n, "%s", realpath(candidate, real) ? real : candidate);
            return 0;
        }
    }
    snprintf(path, n, "%s/%s", ATTNVIZ_DATADIR, rel);
    return access(path, R_OK) == 0 ? 0 : -1;
}
