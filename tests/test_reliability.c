/* test_reliability.c — issue 14's library pieces: messages cut on a UTF-8
 * boundary, the staged output folder (nothing new on failure, earlier files kept). */
#include "check.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "core/outdir.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TEST(errmsg_cut_keeps_utf8_whole) {
    char err[8];
    for (size_t len = 2; len <= sizeof err; len++) {
        errmsg_set(err, len, "abcdé€𝄞xyz");   /* 1-, 2-, 3- and 4-byte characters */
        size_t n = strlen(err);
        CHECK(n < len);
        /* what is left is whole characters: "a", "ab", … never a lead byte without its tail */
        const char *whole[] = {"", "a", "ab", "abc", "abcd", "abcd", "abcdé", "abcdé"};
        CHECK(!strcmp(err, whole[len - 1]));
    }
}

static int exists(const char *p) { struct stat st; return stat(p, &st) == 0; }

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (f) { fputs(text, f); fclose(f); }
}

TEST(outstage_commit_into_existing_folder_keeps_other_files) {
    char dir[512], path[600], err[256];
    REQUIRE(path_join(dir, sizeof dir, check_tmpdir(), "stage-existing", err, sizeof err) == 0);
    mkdir(dir, 0777);
    REQUIRE(path_join(path, sizeof path, dir, "old.txt", err, sizeof err) == 0);
    write_text(path, "old");
    OutStage st;
    CHECK(outstage_open(&st, dir, 0, err, sizeof err) == -1);   /* old.txt is not attnviz's: refused */
    CHECK(strstr(err, "did not write (old.txt)") && strstr(err, "--force"));
    REQUIRE(outstage_open(&st, dir, 1, err, sizeof err) == 0);
    CHECK(!st.fresh);
    REQUIRE(path_join(path, sizeof path, st.dir, "sub", err, sizeof err) == 0);
    mkdir(path, 0777);
    REQUIRE(path_join(path, sizeof path, st.dir, "sub/new.txt", err, sizeof err) == 0);
    write_text(path, "new");
    REQUIRE(outstage_commit(&st, err, sizeof err) == 0);
    REQUIRE(path_join(path, sizeof path, dir, "old.txt", err, sizeof err) == 0);
    CHECK(exists(path));
    REQUIRE(path_join(path, sizeof path, dir, "sub/new.txt", err, sizeof err) == 0);
    CHECK(exists(path));
}

TEST(outstage_abort_leaves_nothing_new) {
    char dir[512], path[600], err[256], top[512];
    REQUIRE(path_join(top, sizeof top, check_tmpdir(), "stage-fresh", err, sizeof err) == 0);
    REQUIRE(path_join(dir, sizeof dir, top, "a/b", err, sizeof err) == 0);
    OutStage st;
    REQUIRE(outstage_open(&st, dir, 0, err, sizeof err) == 0);
    CHECK(st.fresh);
    REQUIRE(path_join(path, sizeof path, st.dir, "x.png", err, sizeof err) == 0);
    write_text(path, "x");
    outstage_abort(&st);
    CHECK(!exists(top));   /* the parents open created are gone too */
    REQUIRE(outstage_open(&st, dir, 0, err, sizeof err) == 0);
    REQUIRE(path_join(path, sizeof path, st.dir, "x.png", err, sizeof err) == 0);
    write_text(path, "x");
    REQUIRE(outstage_commit(&st, err, sizeof err) == 0);
    REQUIRE(path_join(path, sizeof path, dir, "x.png", err, sizeof err) == 0);
    CHECK(exists(path));
}

TEST(outstage_refuses_a_file) {
    char path[512], err[256];
    REQUIRE(path_join(path, sizeof path, check_tmpdir(), "stage-file", err, sizeof err) == 0);
    write_text(path, "x");
    OutStage st;
    CHECK(outstage_open(&st, path, 0, err, sizeof err) == -1);
    CHECK(strstr(err, "not a folder") != NULL);
}

/* file_write_atomic over an existing file (swapped in, the old one removed),
 * onto a new name, and onto a folder (refused, folder and no temporary left). */
TEST(atomic_write_replaces_creates_and_refuses_a_folder) {
    char dir[512], path[600], err[256];
    REQUIRE(path_join(dir, sizeof dir, check_tmpdir(), "atomic-replace", err, sizeof err) == 0);
    mkdir(dir, 0777);
    REQUIRE(path_join(path, sizeof path, dir, "t.bin", err, sizeof err) == 0);
    unlink(path);
    REQUIRE(file_write_atomic(path, "first", 5, err, sizeof err) == 0);
    REQUIRE(file_write_atomic(path, "second!", 7, err, sizeof err) == 0);
    size_t n = 0;
    char *got = file_read_all(path, 100, &n, err, sizeof err);
    REQUIRE(got);
    CHECK(n == 7 && !memcmp(got, "second!", 7));
    free(got);
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0644);
    DIR *d = opendir(dir);
    REQUIRE(d);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) files += e->d_name[0] != '.';
    closedir(d);
    CHECK_INT(files, 1);   /* no temporary, no old file left */
    REQUIRE(path_join(path, sizeof path, dir, "sub", err, sizeof err) == 0);
    mkdir(path, 0777);
    CHECK_INT(file_write_atomic(path, "x", 1, err, sizeof err), -1);
    CHECK(stat(path, &sb) == 0 && S_ISDIR(sb.st_mode));
    rmdir(path);
}
