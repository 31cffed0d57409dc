/* png.c — see png.h. */
#include "render/png.h"
#include "render/fit.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef ATTNVIZ_ISAL
#include <isa-l.h>
#endif

#define PNG_MAX_TEXT 64

typedef struct {
    char *err;
    size_t errlen;
} PngErr;

static void on_png_error(png_structp png, png_const_charp msg) {
    PngErr *pe = png_get_error_ptr(png);
    if (pe) errmsg_set(pe->err, pe->errlen, "libpng: %s", msg);
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg) { (void)png; (void)msg; }

static int is_ascii(const char *s) {
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80) return 0;
    return 1;
}

/* PNG keywords: 1–79 printable Latin-1 characters, no leading, trailing or
 * double spaces.  Anything else is replaced so the chunk stays valid. */
static void clean_keyword(char *out, size_t outlen, const char *key) {
    size_t n = 0;
    for (const unsigned char *k = (const unsigned char *)(key ? key : ""); *k && n + 1 < outlen && n < 79; k++) {
        unsigned char ch = *k;
        if (ch < 0x20 || ch >= 0x7F) ch = '_';
        if (ch == ' ' && (n == 0 || out[n - 1] == ' ')) continue;
        out[n++] = (char)ch;
    }
    while (n > 0 && out[n - 1] == ' ') n--;
    if (n == 0) out[n++] = '_';
    out[n] = '\0';
}

#ifdef ATTNVIZ_ISAL
/* The image data as one zlib stream: every row after its filter byte 0 (no
 * filter), compressed whole by ISA-L's igzip at level 1.  On a GPT-2 head's
 * 828 x 852 heatmap that takes 0.85 ms where zlib's level 2 took 5.9 ms, and
 * the file comes out 11% smaller (65 against 73 KB); zlib was 40% of `run`'s
 * CPU time on a 144-head folder.  Returns the stream (free it) or NULL. */
static unsigned char *deflate_rows(const Canvas *c, size_t *zlen, PngErr *pe) {
    size_t row = 1 + (size_t)c->w * 3, n = row * (size_t)c->h;
    size_t cap = n + n / 16 + 1024; /* stored blocks at worst: 5 bytes a 64 KiB block */
    /* the level buffer (igzip's hash table) zeroed and the rows followed by
     * zeroed bytes: nothing igzip may look at before overwriting it is left
     * over from an earlier picture, so the same pixels give the same bytes */
    unsigned char *raw = malloc(n + 64), *z = malloc(cap), *lvl = calloc(1, ISAL_DEF_LVL1_DEFAULT);
    if (!raw || !z || !lvl) {
        free(raw), free(z), free(lvl);
        errmsg_set(pe->err, pe->errlen, "out of memory for a %d x %d picture", c->w, c->h);
        return NULL;
    }
    memset(raw + n, 0, 64);
    for (int y = 0; y < c->h; y++) {
        raw[(size_t)y * row] = 0;
        memcpy(raw + (size_t)y * row + 1, c->px + (size_t)y * (size_t)c->w * 3, row - 1);
    }
    struct isal_zstream s;
    memset(&s, 0, sizeof s);   /* isal_deflate_stateless_init leaves hist_bits, which the deflate reads */
    isal_deflate_stateless_init(&s);
    s.level = 1;
    s.level_buf = lvl;
    s.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    s.gzip_flag = IGZIP_ZLIB;
    s.end_of_stream = 1;
    s.flush = NO_FLUSH;
    s.next_in = raw;
    s.avail_in = (uint32_t)n;
    s.next_out = z;
    s.avail_out = (uint32_t)cap;
    int rc = isal_deflate_stateless(&s);
    free(raw), free(lvl);
    if (rc != COMP_OK) {
        free(z);
        errmsg_set(pe->err, pe->errlen, "igzip: cannot compress the picture (code %d)", rc);
        return NULL;
    }
    *zlen = s.total_out;
    return z;
}
#endif

/* The libpng part, kept apart so that setjmp only sees this frame's locals.
 * With ISA-L (make finds libisal), libpng writes the signature and every
 * chunk with its CRC, and the IDAT's zlib stream is igzip's (above); without
 * it, libpng deflates the rows with zlib at level 2. */
static int write_stream(FILE *fp, const Canvas *c, png_text *texts, int ntext, PngErr *pe) {
#ifdef ATTNVIZ_ISAL
    size_t zlen = 0;
    unsigned char *z = deflate_rows(c, &zlen, pe);
    if (!z) return -1;
    if (zlen > 0x7FFFFFFF) {
        free(z);
        return errmsg_set(pe->err, pe->errlen, "picture too large for one PNG chunk");
    }
#endif
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, pe, on_png_error, on_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        if (png) png_destroy_write_struct(&png, NULL);
#ifdef ATTNVIZ_ISAL
        free(z);
#endif
        return errmsg_set(pe->err, pe->errlen, "libpng: cannot create writer");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
#ifdef ATTNVIZ_ISAL
        free(z);
#endif
        return -1;
    }
    png_init_io(png, fp);
    /* Flat colour regions compress well unfiltered; libpng's adaptive filter
     * search at level 6 was 80% of `run`'s picture time.  NONE at level 3 is
     * 4x faster for files ~10% larger (measured on run's 30 pictures); level 2
     * deflates a GPT-2 head's 828 x 852 heatmap in about 55% of level 3's time
     * for a file 14% larger (zlib at levels 1..3 on its rows). */
    png_set_compression_level(png, 2);
    png_set_filter(png, 0, PNG_FILTER_NONE);
    png_set_IHDR(png, info, (png_uint_32)c->w, (png_uint_32)c->h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (ntext > 0) png_set_text(png, info, texts, ntext);
    png_write_info(png, info);
#ifdef ATTNVIZ_ISAL
    png_write_chunk(png, (png_const_bytep) "IDAT", z, zlen);
    png_write_chunk(png, (png_const_bytep) "IEND", NULL, 0);
    png_write_flush(png);
    free(z);
#else
    for (int y = 0; y < c->h; y++)
        png_write_row(png, c->px + (size_t)y * (size_t)c->w * 3);
    png_write_end(png, info);
#endif
    png_destroy_write_struct(&png, &info);
    return 0;
}

/* The text chunks: "Software" = "attnviz", then the meta items with a key
 * and a value (at most PNG_MAX_TEXT in all).  keys holds the cleaned
 * keywords the chunks point to.  Returns how many. */
static int collect_texts(png_text texts[PNG_MAX_TEXT], char keys[PNG_MAX_TEXT][80], const RenderMeta *meta) {
    int ntext = 0;
    memset(texts, 0, PNG_MAX_TEXT * sizeof *texts);
    texts[ntext].compression = PNG_TEXT_COMPRESSION_NONE;
    texts[ntext].key = (png_charp) "Software";
    texts[ntext].text = (png_charp) "attnviz";
    ntext++;
    for (int i = 0; meta && meta->items && i < meta->n && ntext < PNG_MAX_TEXT; i++) {
        const RenderMetaItem *it = &meta->items[i];
        if (!it->key || !it->value) continue;
        clean_keyword(keys[ntext], sizeof keys[ntext], it->key);
        texts[ntext].key = keys[ntext];
        texts[ntext].text = (png_charp)it->value;
        if (is_ascii(it->value)) {
            texts[ntext].compression = PNG_TEXT_COMPRESSION_NONE;
        } else {
            texts[ntext].compression = PNG_ITXT_COMPRESSION_NONE;
            texts[ntext].lang = (png_charp) "";
            texts[ntext].lang_key = (png_charp) "";
        }
        ntext++;
    }
    return ntext;
}

/* Writes c as it is (the page's size already). */
static int write_page(const char *path, const Canvas *c, const RenderMeta *meta, char *err, size_t errlen) {
    png_text texts[PNG_MAX_TEXT];
    char keys[PNG_MAX_TEXT][80];
    PngErr pe = {err, errlen};
    if (!path || !*path) return errmsg_set(err, errlen, "no output path given for the picture");
    int ntext = collect_texts(texts, keys, meta);

    AtomicFile af;
    if (atomic_open(&af, path, err, errlen)) return -1;
    if (write_stream(af.f, c, texts, ntext, &pe)) {
        char why[256];
        snprintf(why, sizeof why, "%s", err ? err : "");
        errmsg_set(err, errlen, "cannot write %s: %s", path, why);
        atomic_abort(&af);
        return -1;
    }
    return atomic_commit(&af, err, errlen);
}

int png_write_canvas(const char *path, const Canvas *c, const RenderMeta *meta,
                     char *err, size_t errlen) {
    if (!path || !*path) return errmsg_set(err, errlen, "no output path given for the picture");
    if (!fit_needed(c)) return write_page(path, c, meta, err, errlen);
    Canvas fitted;
    if (fit_canvas(c, &fitted, err, errlen)) return -1;
    int status = write_page(path, &fitted, meta, err, errlen);
    canvas_free(&fitted);
    return status;
}
