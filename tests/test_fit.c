/* test_fit.c — text that does not fit its buffer is never cut silently: a path
 * join that fails instead (core/fileio.h path_join). */
#include "check.h"
#include "core/fileio.h"
#include <stdio.h>
#include <string.h>

TEST(path_join_fits_or_fails) {
    char out[16], err[128];
    /* "abc/defg" is 8 bytes: fits in 9, not in 8 */
    CHECK_INT(path_join(out, 9, "abc", "defg", err, sizeof err), 0);
    CHECK(!strcmp(out, "abc/defg"));
    err[0] = '\0';
    CHECK_INT(path_join(out, 8, "abc", "defg", err, sizeof err), -1);
    CHECK(!strcmp(out, ""));                                   /* never a cut path */
    CHECK(!strncmp(err, "path too long", 13));
    CHECK(strstr(err, "abc/defg") != NULL);
    CHECK(strchr(err, '\n') == NULL);
    /* the "/" only between two non-empty parts */
    CHECK_INT(path_join(out, sizeof out, "", "name", err, sizeof err), 0);
    CHECK(!strcmp(out, "name"));
    CHECK_INT(path_join(out, sizeof out, "dir", "", err, sizeof err), 0);
    CHECK(!strcmp(out, "dir"));
    CHECK_INT(path_join(out, sizeof out, "", "", err, sizeof err), 0);
    CHECK(!strcmp(out, ""));
    CHECK_INT(path_join(out, 1, "", "", err, sizeof err), 0);
    CHECK_INT(path_join(out, 1, "", "x", NULL, 0), -1);        /* err may be NULL */
    CHECK_INT(path_join(out, 0, "", "", NULL, 0), -1);         /* no room even for the NUL */
}
