/* fileio.h — the two file chores every writer and reader shares.
 *
 * Atomic write: a file is written under a temporary name in the same folder
 * (PATH.tmp-XXXXXX, mode 0644) and renamed onto PATH only when every byte is
 * out, so a reader never sees half a file and a failed write leaves PATH as it
 * was.  The usual pattern:
 *
 *     AtomicFile af;
 *     if (atomic_open(&af, path, err, errlen)) return -1;
 *     fprintf(af.f, ...);                      // any stdio writes
 *     return atomic_commit(&af, err, errlen);  // or atomic_abort(&af)
 *
 * Whole-file read: file_read_all returns the bytes plus a NUL, refusing files
 * over a stated limit before reading them.
 *
 * Path join: path_join writes DIR/NAME or fails; a path is never cut short.
 *
 * Errors: -1 and a one-line message "cannot write PATH: reason" in err
 * (errmsg.h); nothing exits. */
#ifndef ATTNVIZ_FILEIO_H
#define ATTNVIZ_FILEIO_H
#include <stddef.h>
#include <stdio.h>

typedef struct {
    FILE *f;           /* write here; NULL once committed or aborted */
    char *tmp;         /* the temporary's name (owned)               */
    char *path;        /* the target (owned)                         */
} AtomicFile;

/* Creates the temporary beside path.  0, or -1 with err (af is then empty). */
int atomic_open(AtomicFile *af, const char *path, char *err, size_t errlen);
/* Flushes, closes and renames the temporary onto the target (over an existing
 * file: the two swap names atomically, then the old one is unlinked); on any failure
 * the temporary is removed and the target untouched.  Always releases af.
 * 0, or -1 with err. */
int atomic_commit(AtomicFile *af, char *err, size_t errlen);
/* Closes and removes the temporary.  Accepts an empty or released af. */
void atomic_abort(AtomicFile *af);

/* n bytes of data to path, atomically.  0, or -1 with err. */
int file_write_atomic(const char *path, const void *data, size_t n, char *err, size_t errlen);

/* A file to read, opened without blocking (a FIFO or a device where a file
 * should be never hangs the open) and checked to be a regular file; the fd is
 * then blocking again.  The fd, or -1 with err ("cannot read PATH: not a
 * regular file"). */
int file_open_regular(const char *path, char *err, size_t errlen);

/* The whole file as a NUL-terminated buffer (caller frees); *len (may be NULL)
 * gets its size.  Files over max_bytes are refused before reading.  NULL with
 * err ("cannot read PATH: …", "PATH is N bytes; the limit is M"). */
char *file_read_all(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen);

/* dir + "/" + name into out (capacity n bytes); the "/" only when both are
 * non-empty ("" + "x" is "x", "d" + "" is "d").  0, or -1 with err "path too
 * long: DIR/NAME" (err may be NULL) and out set to "" when it does not fit. */
int path_join(char *out, size_t n, const char *dir, const char *name, char *err, size_t errlen);

#endif
