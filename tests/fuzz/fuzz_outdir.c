/* fuzz_outdir.c — libFuzzer harness for the output folder's list
 * (core/outdir.h): any bytes as TARGET/.attnviz-files, then a staged output
 * committed into TARGET, whose files include a link out of it and a folder
 * beside it holds a file.  Whatever the list says, the file outside stays,
 * the link stays a link, and the commit's own files land.
 * Seeds: tests/fuzz/outdir/. */
#include "core/outdir.h"
#include "fuzz_scratch.h"
#include <sys/stat.h>

static void put(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
}

static int holds(const char *path, const char *text) {
    char buf[64] = "";
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return !strcmp(buf, text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char cmd[700], target[600], outside[600], path[700], err[512];
    const char *root = fuzz_scratch();
    snprintf(cmd, sizeof cmd, "rm -rf '%s/t' '%s/outside'", root, root);
    if (system(cmd) != 0) abort();
    snprintf(target, sizeof target, "%s/t", root);
    snprintf(outside, sizeof outside, "%s/outside", root);
    mkdir(target, 0777);
    mkdir(outside, 0777);
    snprintf(path, sizeof path, "%s/secret", outside);
    put(path, "key");
    snprintf(path, sizeof path, "%s/h", target);
    if (symlink(outside, path) != 0) abort();
    snprintf(path, sizeof path, "%s/old.png", target);
    put(path, "old");
    snprintf(path, sizeof path, "%s/%s", target, OUTDIR_MANIFEST);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size) fwrite(data, 1, size, f);
    fclose(f);
    OutStage st;
    if (outstage_open(&st, target, 1, err, sizeof err) != 0) abort();
    snprintf(path, sizeof path, "%s/new.png", st.dir);
    put(path, "new");
    if (outstage_commit(&st, err, sizeof err) != 0) abort();
    snprintf(path, sizeof path, "%s/secret", outside);
    if (!holds(path, "key")) abort();   /* nothing outside the target is touched */
    snprintf(path, sizeof path, "%s/h", target);
    struct stat sb;
    if (lstat(path, &sb) != 0 || !S_ISLNK(sb.st_mode)) abort();
    snprintf(path, sizeof path, "%s/new.png", target);
    if (!holds(path, "new")) abort();
    return 0;
}
