/* test_fit.c — text that does not fit its buffer is never cut silently: a path
 * join that fails instead (core/fileio.h path_join) and a title or caption that
 * ends with "…" on a UTF-8 character boundary (render/fmt.h fmt_fit). */
#include "check.h"
#include "core/fileio.h"
#include "render/fmt.h"
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

/* text printed into n bytes, then fitted; returns fmt_fit's answer.  Not
 * inlined: the cuts are on purpose, and GCC would warn about them. */
__attribute__((noinline)) static int fit(char *buf, size_t n, const char *text) {
    return fmt_fit(buf, n, snprintf(buf, n, "%s", text));
}

TEST(fmt_fit_marks_a_cut_with_an_ellipsis) {
    char buf[32];
    /* exact fit: untouched */
    CHECK_INT(fit(buf, 7, "abcdef"), 0);
    CHECK(!strcmp(buf, "abcdef"));
    /* one byte too long: cut, and "…" says so */
    CHECK_INT(fit(buf, 7, "abcdefg"), 1);
    CHECK(!strcmp(buf, "abc\xE2\x80\xA6"));
    /* a cut inside "→" (3 bytes) drops the whole character */
    const char *arrow = "ab\xE2\x86\x92" "cdef";                /* "ab→cdef", 9 bytes */
    CHECK_INT(fit(buf, 7, arrow), 1);
    CHECK(!strcmp(buf, "ab\xE2\x80\xA6"));
    CHECK_INT(fit(buf, 8, arrow), 1);
    CHECK(!strcmp(buf, "ab\xE2\x80\xA6"));
    CHECK_INT(fit(buf, 9, arrow), 1);
    CHECK(!strcmp(buf, "ab\xE2\x86\x92\xE2\x80\xA6"));
    CHECK_INT(fit(buf, 10, arrow), 0);
    CHECK(!strcmp(buf, arrow));
    /* every size: whole characters of the text, then "…", inside the buffer */
    const char *mixed = "a\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E" "xyz";  /* "aé€𝄞xyz": 1-, 2-, 3-, 4-byte */
    const size_t whole[] = {0, 1, 3, 6, 10, 11, 12, 13};        /* character boundaries of mixed */
    for (size_t n = 4; n <= strlen(mixed); n++) {
        CHECK_INT(fit(buf, n, mixed), 1);
        size_t len = strlen(buf), kept = len - 3, best = 0;
        for (size_t k = 0; k < sizeof whole / sizeof whole[0]; k++)
            if (whole[k] + 3 < n) best = whole[k];
        CHECK(len < n);
        CHECK(!strcmp(buf + kept, "\xE2\x80\xA6"));
        CHECK_INT(kept, best);                                  /* as much as fits, never half a character */
        CHECK(!memcmp(buf, mixed, kept));
    }
    /* below 4 bytes there is no room for "…": cut at a boundary only */
    CHECK_INT(fit(buf, 3, "\xC3\xA9\xC3\xA9"), 1);
    CHECK(!strcmp(buf, "\xC3\xA9"));
    CHECK_INT(fit(buf, 2, "\xC3\xA9"), 1);
    CHECK(!strcmp(buf, ""));
    CHECK_INT(fmt_fit(buf, 0, 5), 1);
    /* an encoding error leaves no text */
    strcpy(buf, "junk");
    CHECK_INT(fmt_fit(buf, sizeof buf, -1), 1);
    CHECK(!strcmp(buf, ""));
}

TEST(visible_token_shows_white_space) {
    char buf[32];
    CHECK(!strcmp(fmt_visible_token(" ", buf, sizeof buf), "\xE2\x90\xA3"));              /* ␣ */
    CHECK(!strcmp(fmt_visible_token("\n\n", buf, sizeof buf), "\xE2\x86\xB5\xE2\x86\xB5")); /* ↵↵ */
    CHECK(!strcmp(fmt_visible_token(" \t", buf, sizeof buf), "\xE2\x90\xA3\xE2\x87\xA5"));  /* ␣⇥ */
    const char *the = " the";
    CHECK(fmt_visible_token(the, buf, sizeof buf) == the);   /* a word keeps its own form */
    CHECK(!strcmp(fmt_visible_token("    ", buf, 8), "\xE2\x90\xA3\xE2\x90\xA3"));   /* cut whole: 2 of 4 fit */
}
