/* outdir.c — see outdir.h. */
#include "core/outdir.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_HEADER "attnviz-files 3\n"      /* sizes and outdir_hash       */
#define MANIFEST_HEADER_V2 "attnviz-files 2\n"   /* sizes and byte-wise FNV-1a   */
#define BACKUP_DIR ".attnviz-old"

unsigned long long outdir_hash(unsigned long long h, const void *data, size_t n) {
    const unsigned char *p = data;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {   /* a word at a time: the byte loop was 17 ms of a 12 MB run's 500 */
        unsigned long long w;
        memcpy(&w, p + i, 8);   /* the host's byte order: a list is read back where it was written */
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* Removes path and everything under it, never following a link (a link is
 * removed, not what it points at).  Uses only the stack, so a signal handler
 * may call it. */
static void remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (!S_ISDIR(st.st_mode)) { unlink(path); return; }
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char sub[4096];
            if (path_join(sub, sizeof sub, path, e->d_name, NULL, 0) == 0) remove_tree(sub);
        }
        closedir(d);
    }
    rmdir(path);
}

/* ---- names below the target, reached without following a link ---- */

/* 1 for a plain relative name: no leading "/", no empty, "." or ".." part. */
static int plain_name(const char *rel) {
    if (!*rel || rel[0] == '/') return 0;
    for (const char *p = rel; *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) return 0;
        p = slash ? slash + 1 : p + n;
    }
    return 1;
}

/* The folder holding rel's last part, opened from base without following a
 * link at any step (O_NOFOLLOW); *leaf points at that part of rel.  With
 * create, missing folders are made (each made one's depth goes into made[],
 * counting up *n_made).  An fd, or -1 with errno (ELOOP/ENOTDIR: a link or a
 * file where a folder should be). */
static int open_parent(int base, const char *rel, const char **leaf, int create, int *made, int *n_made) {
    int fd = dup(base), depth = 0;
    const char *p = rel;
    for (const char *slash; fd >= 0 && (slash = strchr(p, '/')); p = slash + 1, depth++) {
        char part[NAME_MAX + 1];
        size_t n = (size_t)(slash - p);
        if (n > NAME_MAX) { close(fd); errno = ENAMETOOLONG; return -1; }
        memcpy(part, p, n);
        part[n] = '\0';
        int next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && errno == ENOENT && create && mkdirat(fd, part, 0777) == 0) {
            if (made) made[(*n_made)++] = depth;
            next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        int e = errno;
        close(fd);
        errno = e;
        fd = next;
    }
    *leaf = p;
    return fd;
}

/* Size and hash of the regular file name in dir fd, opened without following
 * a link and without blocking (a FIFO is no file of ours).  0, or -1. */
static int file_sig_as(int dir, const char *name, int fnv, size_t *size, unsigned long long *hash);

static int file_sig(int dir, const char *name, size_t *size, unsigned long long *hash) {
    return file_sig_as(dir, name, 0, size, hash);
}

/* A version-2 list's hash: FNV-1a 64, a byte at a time. */
static unsigned long long fnv_bytes(unsigned long long h, const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* file_sig with outdir_hash, or (fnv) the hash a version-2 list holds. */
static int file_sig_as(int dir, const char *name, int fnv, size_t *size, unsigned long long *hash) {
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) { close(fd); return -1; }
    unsigned long long h = OUTDIR_HASH_START;
    char buf[65536];
    ssize_t got;
    size_t total = 0;
    do {   /* whole 64 KB chunks but the last, so the hash never depends on how read() splits the file */
        size_t have = 0;
        while (have < sizeof buf && (got = read(fd, buf + have, sizeof buf - have)) > 0) have += (size_t)got;
        h = fnv ? fnv_bytes(h, (const unsigned char *)buf, have) : outdir_hash(h, buf, have);
        total += have;
    } while (got > 0);
    close(fd);
    if (got < 0) return -1;
    *size = total;
    *hash = h;
    return 0;
}

/* ---- the list of what was written ---- */

/* One "SIZE HASH NAME" line for every regular file under root/rel (the list
 * and the staging mark left out), in the folder's order.  A folder's files are
 * read and hashed side by side on the threads (a run's trace.json and
 * index.html are megabytes, and a run with pictures has hundreds), then listed
 * in order.  0, or -1 with err. */
typedef struct { char *name; int is_dir, ok; size_t size; unsigned long long hash; } Entry;

static int list_files(const char *root, const char *rel, StrBuf *b, char *err, size_t errlen) {
    char dir[4096];
    if (path_join(dir, sizeof dir, root, rel, err, errlen)) return -1;
    DIR *d = opendir(dir);
    if (!d) return errmsg_set(err, errlen, "cannot read %s: %s", dir, strerror(errno));
    Entry *e = NULL;
    int n = 0, cap = 0, rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d))) {
        const char *name = de->d_name;
        struct stat sb;
        if (!strcmp(name, ".") || !strcmp(name, "..") ||
            (!*rel && (!strcmp(name, OUTDIR_MANIFEST) || !strcmp(name, OUTDIR_MARK))) ||
            fstatat(dirfd(d), name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (n == cap) {
            Entry *g = realloc(e, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *g);
            if (!g) { rc = errmsg_set(err, errlen, "out of memory"); break; }
            e = g;
        }
        e[n] = (Entry){.name = strdup(name), .is_dir = S_ISDIR(sb.st_mode)};
        if (!e[n++].name) rc = errmsg_set(err, errlen, "out of memory");
    }
#ifdef _OPENMP
    #pragma omp parallel for schedule(dynamic, 1) if (rc == 0 && n > 1)
#endif
    for (int i = 0; i < (rc == 0 ? n : 0); i++)
        if (!e[i].is_dir) e[i].ok = file_sig(dirfd(d), e[i].name, &e[i].size, &e[i].hash) == 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        char sub[4096];
        if (path_join(sub, sizeof sub, rel, e[i].name, err, errlen)) rc = -1;
        else if (e[i].is_dir) rc = list_files(root, sub, b, err, errlen);
        else if (!e[i].ok) rc = errmsg_set(err, errlen, "cannot read %s/%s", dir, e[i].name);
        else if (strbuf_printf(b, "%zu %016llx %s\n", e[i].size, e[i].hash, sub) != 0)
            rc = errmsg_set(err, errlen, "out of memory");
    }
    for (int i = 0; i < n; i++) free(e[i].name);
    free(e);
    closedir(d);
    return rc;
}

/* The name of a list line ("SIZE HASH NAME"), its length in *n; NULL when the
 * line has no such shape. */
static const char *line_name(const char *line, size_t len, size_t *n, size_t *size, unsigned long long *hash) {
    char head[64];
    const char *sp1 = memchr(line, ' ', len), *sp2 = sp1 ? memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - line)) : NULL;
    if (!sp2 || (size_t)(sp2 - line) >= sizeof head) return NULL;
    memcpy(head, line, (size_t)(sp2 - line));
    head[sp2 - line] = '\0';
    char hex[20];
    if (sscanf(head, "%zu %16s", size, hex) != 2 || strlen(hex) != 16 || sscanf(hex, "%16llx", hash) != 1) return NULL;
    *n = len - (size_t)(sp2 + 1 - line);
    return sp2 + 1;
}

/* Calls fn(name, n, size, hash, arg) for each well-formed line of a version-2
 * list (nothing for any other text). */
static void each_listed(const char *list, void (*fn)(const char *, size_t, size_t, unsigned long long, void *),
                        void *arg) {
    if (!list || (strncmp(list, MANIFEST_HEADER, strlen(MANIFEST_HEADER)) &&
                  strncmp(list, MANIFEST_HEADER_V2, strlen(MANIFEST_HEADER_V2))))
        return;
    for (const char *p = list + strlen(MANIFEST_HEADER); *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p), n, size;
        unsigned long long hash;
        const char *name = line_name(p, len, &n, &size, &hash);
        if (name && n > 0) fn(name, n, size, hash, arg);
        p = nl ? nl + 1 : p + len;
    }
}

/* 1 if list names name (length n), or a file below it when prefix. */
static int names(const char *list, const char *name, size_t n, int prefix) {
    for (const char *p = list; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p), m, size;
        unsigned long long hash;
        const char *it = line_name(p, len, &m, &size, &hash);
        if (!it) it = p, m = len;   /* an older list: a name a line */
        if (m >= n && !memcmp(it, name, n) && (m == n || (prefix && it[n] == '/'))) return 1;
        p = nl ? nl + 1 : p + len;
    }
    return 0;
}

typedef struct {
    int target;          /* fd of the target folder */
    const char *now;     /* the new list            */
    int fnv;             /* the old list is version 2: its hashes are FNV-1a's */
} Prune;

/* Removes one file of the old list when the new one does not name it and it
 * is still what attnviz wrote; then the folders that leaves empty. */
static void prune_one(const char *name, size_t n, size_t size, unsigned long long hash, void *arg) {
    const Prune *pr = arg;
    char rel[4096], *leafp;
    if (n >= sizeof rel || names(pr->now, name, n, 0)) return;
    memcpy(rel, name, n);
    rel[n] = '\0';
    if (!plain_name(rel)) return;
    const char *leaf;
    int dir = open_parent(pr->target, rel, &leaf, 0, NULL, NULL);
    if (dir < 0) return;
    size_t have;
    unsigned long long h;
    if (file_sig_as(dir, leaf, pr->fnv, &have, &h) == 0 && have == size && h == hash && unlinkat(dir, leaf, 0) == 0)
        for (leafp = strrchr(rel, '/'); leafp; leafp = strrchr(rel, '/')) {   /* the folders it leaves empty */
            *leafp = '\0';
            const char *last;
            int up = open_parent(pr->target, rel, &last, 0, NULL, NULL);
            int gone = up >= 0 && unlinkat(up, last, AT_REMOVEDIR) == 0;
            if (up >= 0) close(up);
            if (!gone) break;
        }
    close(dir);
}

/* ---- the target ---- */

/* 1 when entry name of folder dir (fd) is attnviz's: the list names it or a
 * file below it, it holds a list of its own, it is a staging folder, or .gitkeep. */
static int ours(int dir, const char *name, const char *list) {
    if (!strcmp(name, OUTDIR_MANIFEST) || !strcmp(name, ".gitkeep") || !strncmp(name, ".attnviz-tmp-", 13)) return 1;
    if (names(list, name, strlen(name), 1)) return 1;
    int sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) return 0;
    int own = faccessat(sub, OUTDIR_MANIFEST, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
    close(sub);
    return own;
}

int outdir_check(const char *target, int force, char *err, size_t errlen) {
    struct stat sb, lb;
    if (!target || !*target) return errmsg_set(err, errlen, "--out needs a folder name");
    if (lstat(target, &lb) == 0 && S_ISLNK(lb.st_mode) && stat(target, &sb) != 0)
        return errmsg_set(err, errlen, "--out %s is a link that leads nowhere (choose another --out)", target);
    if (stat(target, &sb) != 0) return 0;   /* a new folder */
    if (!S_ISDIR(sb.st_mode)) return errmsg_set(err, errlen, "--out %s is a file, not a folder (choose another --out)", target);
    char real[PATH_MAX], home[PATH_MAX];
    if (realpath(target, real) && !strcmp(real, "/"))
        return errmsg_set(err, errlen, "--out %s is the root folder: attnviz never writes there (choose a folder of "
                          "its own, e.g. --out output/run)", target);
    const char *h = getenv("HOME");
    if (!force && h && *h && realpath(h, home) && !strcmp(real, home))
        return errmsg_set(err, errlen, "--out %s is your home folder (choose a folder of its own, e.g. --out "
                          "attnviz-out, or add --force)", target);
    if (force) return 0;
    DIR *d = opendir(target);
    if (!d) return errmsg_set(err, errlen, "cannot read output folder %s: %s", target, strerror(errno));
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", target, OUTDIR_MANIFEST);
    char *list = file_read_all(path, (size_t)16 << 20, NULL, NULL, 0);
    struct dirent *e;
    char foreign[256] = "";
    while (!foreign[0] && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !ours(dirfd(d), e->d_name, list))
            snprintf(foreign, sizeof foreign, "%s", e->d_name);
    closedir(d);
    free(list);
    if (foreign[0])
        return errmsg_set(err, errlen, "--out %s holds files attnviz did not write (%s): choose a new or empty folder, "
                          "or add --force to write beside them (attnviz never removes them)", target, foreign);
    return 0;
}

/* mkdir -p; the outermost folder created goes into made ("" if none). */
static int make_parents(const char *dir, char *made, size_t made_len) {
    char path[4096];
    size_t n = strlen(dir);
    made[0] = '\0';
    if (n == 0 || n >= sizeof path) { errno = ENAMETOOLONG; return -1; }
    memcpy(path, dir, n + 1);
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        if (mkdir(path, 0777) == 0) { if (!made[0]) snprintf(made, made_len, "%s", path); }
        else if (errno != EEXIST) return -1;
        *p = c;
        if (!c) break;
    }
    return 0;
}

/* Staging folders of attnviz's in folder dir whose names start with prefix,
 * left by a process that is gone (its mark names a pid that no longer runs). */
static void remove_stale(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    size_t pl = strlen(prefix);
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, pl)) continue;
        char stage[4096], mark[4200];
        if (path_join(stage, sizeof stage, dir, e->d_name, NULL, 0)) continue;
        snprintf(mark, sizeof mark, "%s/%s", stage, OUTDIR_MARK);
        char *text = file_read_all(mark, 64, NULL, NULL, 0);
        long pid = 0;
        struct stat sb;
        if (text && sscanf(text, "attnviz-stage %ld", &pid) == 1 && pid > 0 && pid != (long)getpid() &&
            kill((pid_t)pid, 0) != 0 && errno == ESRCH && lstat(stage, &sb) == 0 && S_ISDIR(sb.st_mode))
            remove_tree(stage);
        free(text);
    }
    closedir(d);
}

int outstage_open(OutStage *st, const char *target, int force, char *err, size_t errlen) {
    memset(st, 0, sizeof *st);
    size_t n = strlen(target);
    while (n > 1 && target[n - 1] == '/') n--;
    if (n == 0 || n + 32 >= sizeof st->dir) return errmsg_set(err, errlen, "output folder name is empty or too long");
    memcpy(st->target, target, n);
    st->target[n] = '\0';
    if (outdir_check(st->target, force, err, errlen)) return -1;
    char parent[4096], base[4200];
    snprintf(parent, sizeof parent, "%s", st->target);
    char *slash = strrchr(parent, '/');
    snprintf(base, sizeof base, "%s.tmp-", slash ? slash + 1 : parent);
    if (slash == parent) parent[1] = '\0';
    else if (slash) *slash = '\0';
    else snprintf(parent, sizeof parent, ".");
    struct stat sb;
    if (stat(st->target, &sb) == 0) {
        remove_stale(st->target, ".attnviz-tmp-");
        if (path_join(st->dir, sizeof st->dir, st->target, ".attnviz-tmp-XXXXXX", err, errlen)) return -1;
    } else {
        st->fresh = 1;
        if (snprintf(st->dir, sizeof st->dir, "%s.tmp-XXXXXX", st->target) >= (int)sizeof st->dir)
            return errmsg_set(err, errlen, "path too long: %s.tmp-XXXXXX", st->target);
        if (slash && slash != parent && make_parents(parent, st->made, sizeof st->made) != 0)
            return errmsg_set(err, errlen, "cannot create folder %s: %s", parent, strerror(errno));
        remove_stale(parent, base);
    }
    if (!mkdtemp(st->dir)) {
        int e = errno;
        if (st->made[0]) remove_tree(st->made);
        return errmsg_set(err, errlen, "cannot write to output folder %s: %s", st->target, strerror(e));
    }
    (void)chmod(st->dir, 0755);
    char mark[4200], text[64];
    snprintf(mark, sizeof mark, "%s/%s", st->dir, OUTDIR_MARK);
    int len = snprintf(text, sizeof text, "attnviz-stage %ld\n", (long)getpid());
    if (file_write_atomic(mark, text, (size_t)len, err, errlen)) { outstage_abort(st); return -1; }
    return 0;
}

/* ---- commit: every file in, or none ---- */

typedef struct {
    const char *rel;     /* the file, below the staging folder and the target */
    int kept;            /* 1: the file it replaced was kept aside            */
} Moved;

/* Each line's name of the new list as a C string (the list is edited in place). */
static int split_names(char *list, const char ***out) {
    int n = 0;
    for (char *p = list; *p; p++) n += *p == '\n';
    *out = malloc(sizeof **out * (size_t)(n + 1));
    if (!*out) return -1;
    int k = 0;
    for (char *p = list; *p;) {
        char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p), m, size;
        unsigned long long hash;
        const char *name = line_name(p, len, &m, &size, &hash);
        if (nl) *nl = '\0';
        if (name) (*out)[k++] = name;
        p = nl ? nl + 1 : p + len;
    }
    return k;
}

/* Every staged file can land: no folder on its way is a link or a file, and
 * its own place is no folder.  0, or -1 with err naming the place. */
static int check_places(int target, const char *tname, const char **rel, int n, char *err, size_t errlen) {
    for (int i = 0; i < n; i++) {
        const char *leaf;
        int dir = open_parent(target, rel[i], &leaf, 0, NULL, NULL);
        if (dir < 0 && errno != ENOENT)
            return errmsg_set(err, errlen, "%s/%s: a folder on the way is a link or a file, which attnviz does not "
                              "follow (move it away or choose another --out)", tname, rel[i]);
        struct stat sb;
        int blocked = dir >= 0 && fstatat(dir, leaf, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode);
        if (dir >= 0) close(dir);
        if (blocked)
            return errmsg_set(err, errlen, "%s/%s is a folder where attnviz writes a file (move it away or choose "
                              "another --out)", tname, rel[i]);
    }
    return 0;
}

/* Moves staged file i into the target, the file it replaces into the backup
 * folder under the name i.  0, or -1 (errno). */
static int move_in(int stage, int target, int backup, const char *rel, int i, Moved *m) {
    const char *leaf, *sleaf;
    char kept[32];
    snprintf(kept, sizeof kept, "%d", i);
    int dst = open_parent(target, rel, &leaf, 1, NULL, NULL), src = open_parent(stage, rel, &sleaf, 0, NULL, NULL);
    int rc = dst < 0 || src < 0 ? -1 : 0;
    struct stat sb;
    m->rel = rel;
    m->kept = 0;
    if (rc == 0 && fstatat(dst, leaf, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
        rc = renameat(dst, leaf, backup, kept);
        m->kept = rc == 0;
    }
    if (rc == 0 && renameat(src, sleaf, dst, leaf) != 0) {
        int e = errno;
        if (m->kept) renameat(backup, kept, dst, leaf);
        m->kept = 0;
        errno = e;
        rc = -1;
    }
    if (dst >= 0) close(dst);
    if (src >= 0) close(src);
    return rc;
}

/* Puts back moves[0..n) in reverse: each file to the staging folder, the one
 * it replaced to its place; then removes the folders that leaves empty. */
static void roll_back(int stage, int target, int backup, const Moved *moves, int n) {
    for (int i = n - 1; i >= 0; i--) {
        const char *leaf, *sleaf;
        char kept[32];
        snprintf(kept, sizeof kept, "%d", i);
        int dst = open_parent(target, moves[i].rel, &leaf, 0, NULL, NULL);
        int src = open_parent(stage, moves[i].rel, &sleaf, 0, NULL, NULL);
        if (dst >= 0 && src >= 0) renameat(dst, leaf, src, sleaf);
        if (dst >= 0 && moves[i].kept) renameat(backup, kept, dst, leaf);
        if (dst >= 0) close(dst);
        if (src >= 0) close(src);
        char rel[4096], *slash;   /* the folders the move made, if now empty */
        snprintf(rel, sizeof rel, "%s", moves[i].rel);
        while ((slash = strrchr(rel, '/'))) {
            *slash = '\0';
            int up = open_parent(target, rel, &leaf, 0, NULL, NULL);
            int gone = up >= 0 && unlinkat(up, leaf, AT_REMOVEDIR) == 0;
            if (up >= 0) close(up);
            if (!gone) break;
        }
    }
}

/* The staged files into the existing target, all or none.  0, or -1 with err. */
static int commit_into(OutStage *st, char *list, char *err, size_t errlen) {
    const char **rel = NULL;
    Moved *moves = NULL;
    int n = split_names(list, &rel), done = 0, rc = -1;
    int target = open(st->target, O_RDONLY | O_DIRECTORY | O_CLOEXEC), stage = open(st->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int backup = -1;
    if (n < 0 || !(moves = malloc(sizeof *moves * (size_t)(n + 1)))) { errmsg_set(err, errlen, "out of memory"); goto done; }
    if (target < 0 || stage < 0) { errmsg_set(err, errlen, "cannot open %s: %s", st->target, strerror(errno)); goto done; }
    if (check_places(target, st->target, rel, n, err, errlen)) goto done;
    if (mkdirat(stage, BACKUP_DIR, 0700) != 0 ||
        (backup = openat(stage, BACKUP_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        errmsg_set(err, errlen, "cannot write to %s: %s", st->target, strerror(errno));
        goto done;
    }
    for (; done < n; done++)
        if (move_in(stage, target, backup, rel[done], done, &moves[done]) != 0) {
            errmsg_set(err, errlen, "cannot move %s into %s: %s (nothing was changed)", rel[done], st->target,
                       strerror(errno));
            roll_back(stage, target, backup, moves, done);
            goto done;
        }
    rc = 0;
done:
    if (backup >= 0) close(backup);
    if (target >= 0) close(target);
    if (stage >= 0) close(stage);
    free(moves);
    free(rel);
    return rc;
}

int outstage_commit(OutStage *st, char *err, size_t errlen) {
    if (!st->dir[0]) return errmsg_set(err, errlen, "nothing to commit");
    StrBuf now = {0};
    char manifest[4200], why[4400] = "out of memory";
    snprintf(manifest, sizeof manifest, "%s/%s", st->target, OUTDIR_MANIFEST);
    if (strbuf_printf(&now, "%s", MANIFEST_HEADER) != 0 || list_files(st->dir, "", &now, why, sizeof why) != 0) {
        free(now.buf);
        errmsg_set(err, errlen, "cannot list what was written for %s: %s", st->target, why);
        outstage_abort(st);
        return -1;
    }
    char *names_now = strdup(now.buf);
    int rc = names_now ? 0 : errmsg_set(err, errlen, "out of memory");
    char mark[4200];
    snprintf(mark, sizeof mark, "%s/%s", st->dir, OUTDIR_MARK);
    if (rc == 0 && st->fresh) {
        unlink(mark);
        if (rename(st->dir, st->target) == 0) st->dir[0] = '\0';
        else rc = errmsg_set(err, errlen, "cannot create output folder %s: %s", st->target, strerror(errno));
    } else if (rc == 0) {
        char *old = file_read_all(manifest, (size_t)16 << 20, NULL, NULL, 0);   /* none: nothing to prune */
        rc = commit_into(st, names_now, err, errlen);
        int target = rc == 0 ? open(st->target, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        Prune pr = {target, now.buf, old && !strncmp(old, MANIFEST_HEADER_V2, strlen(MANIFEST_HEADER_V2))};
        if (target >= 0) {
            each_listed(old, prune_one, &pr);
            close(target);
        }
        free(old);
    }
    if (rc == 0) rc = file_write_atomic(manifest, now.buf, now.len, err, errlen);
    if (st->dir[0]) remove_tree(st->dir);
    if (rc != 0 && st->made[0]) remove_tree(st->made);
    free(names_now);
    free(now.buf);
    memset(st, 0, sizeof *st);
    return rc;
}

void outstage_abort(OutStage *st) {
    if (!st || !st->dir[0]) return;
    outstage_abort_now(st);
    memset(st, 0, sizeof *st);
}

void outstage_abort_now(const OutStage *st) {
    if (!st || !st->dir[0]) return;
    remove_tree(st->dir);
    if (st->made[0]) remove_tree(st->made);
}
