/* outdir.h — an output folder that changes all at once or not at all, and
 * never reaches outside itself.
 *
 * A command that writes several files into a folder (--out) writes them into
 * a hidden staging folder first and moves them in only when all are written:
 *
 *     OutStage st;
 *     if (outstage_open(&st, "output", force, err, errlen)) return -1;
 *     ... write every file under st.dir ...
 *     ok ? outstage_commit(&st, err, errlen) : outstage_abort(&st);
 *
 * The target.  outdir_check refuses "/" and, unless force, the home folder
 * and a folder holding files attnviz did not write: a file counts as
 * attnviz's when the folder's list names it (or a folder it lies in), when it
 * is a folder with a list of its own (output/run inside output/), a staging
 * folder of attnviz's, or .gitkeep.  A link that leads nowhere is refused.
 *
 * Staging.  When the target exists the staging folder is
 * TARGET/.attnviz-tmp-XXXXXX; when it does not, TARGET.tmp-XXXXXX beside it
 * (its missing parents created), and commit is one rename.  Each staging
 * folder holds .attnviz-stage with the process id that made it, so the next
 * open removes staging folders whose process is gone (a crash, a kill -9);
 * outstage_abort_now is what a SIGINT/SIGTERM handler calls.
 *
 * Commit into an existing folder, all or nothing: every staged file's place is
 * checked first (no folder on the way may be a link or a file, no file may
 * land on a folder); then each file replaces its place, the file it replaces
 * kept aside, and if any move fails every moved file is put back and every
 * folder commit made is removed, so TARGET is as it was.
 *
 * The list, TARGET/.attnviz-files: "attnviz-files 3", then one line a file,
 * "SIZE HASH NAME" (bytes, outdir_hash of the content in 64 KB chunks, the
 * path below TARGET).  A version-2 list (an attnviz before the word hash)
 * is read the same way, its hashes FNV-1a 64 of the bytes.
 * After a commit, the files the previous list named that this output did not
 * write again are removed, and only when each is still what attnviz wrote:
 * a plain name (relative, no "." or ".." part), reached without following any
 * link, a regular file of the listed size and hash.  A list without the
 * header (an older attnviz's, or anyone's) removes nothing.
 *
 * Errors: -1 and a one-line message in err; nothing exits. */
#ifndef ATTNVIZ_OUTDIR_H
#define ATTNVIZ_OUTDIR_H
#include <stddef.h>

#define OUTDIR_MANIFEST ".attnviz-files"
#define OUTDIR_MARK ".attnviz-stage"

typedef struct {
    char target[4096];   /* the folder the user named                   */
    char dir[4096];      /* where to write now (the staging folder)      */
    char made[4096];     /* the outermost parent open created, or ""    */
    int fresh;           /* 1: target did not exist (commit = one rename) */
} OutStage;

/* The target may be written (see above).  0, or -1 with err. */
int outdir_check(const char *target, int force, char *err, size_t errlen);

int outstage_open(OutStage *st, const char *target, int force, char *err, size_t errlen);
int outstage_commit(OutStage *st, char *err, size_t errlen);
void outstage_abort(OutStage *st);

/* For a signal handler: removes st's staging folder and the parents open
 * made, allocating nothing.  st may be NULL. */
void outstage_abort_now(const OutStage *st);

/* A 64-bit hash of n bytes, continued from h (start with OUTDIR_HASH_START):
 * FNV-1a's multiplier over 8-byte words (host order), mixed, then the last
 * bytes one by one, so the same bytes cut into the same chunks hash the same
 * (the list of written files feeds whole 64 KB chunks). */
#define OUTDIR_HASH_START 0xcbf29ce484222325ULL
unsigned long long outdir_hash(unsigned long long h, const void *data, size_t n);

#endif
