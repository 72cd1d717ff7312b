/* batch_manifest.c — OUTDIR/.imgpu-batch, what made each output of `imgpu batch` (the format
 * and its guarantees are in batch_manifest.h). */
#include "batch_manifest.h"
#include "error.h"
#include "op/op_table.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEADER "# imgpu batch manifest 1: what made each output (imgpu batch reads it; do not edit)\n"

typedef struct rec {
    char *rel, *settings;
    long long out_size, out_mtime, in_size, in_mtime;
    size_t seq;     /* line order: later lines win */
} rec;

struct imgpu_manifest {
    char *path;
    int found;
    rec *v;         /* sorted by rel, then seq */
    size_t n;
    char *text;     /* the file read; rec strings point into it */
    pthread_mutex_t lock;
    int fd;         /* the journal, opened for append on first add; -1 until then */
};

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

long long imgpu_manifest_mtime_ns(const struct stat *st)
{
    return (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

/* ---- escaping: '%', control characters and DEL as %XX ---------------------------------- */

static size_t escaped_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '%') ? 3 : 1;
    return n;
}

static char *escape_into(char *o, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f || c == '%') {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        } else {
            *o++ = (char)c;
        }
    }
    return o;
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* In place; 0, or -1 for a malformed escape. */
static int unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (*s == '%') {
            int a = hexval(s[1]), b = a < 0 ? -1 : hexval(s[2]);
            if (b < 0)
                return -1;
            *o++ = (char)(a * 16 + b);
            s += 2;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
    return 0;
}

/* ---- reading ------------------------------------------------------------------------------ */

static int parse_ll(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

/* One line (without its '\n', NUL-terminated in place) into r; 0, or -1 when it is not a
 * whole, intact record (a torn write, an edit): such lines are ignored. */
static int parse_line(char *line, rec *r)
{
    if (line[0] != 'R' || line[1] != ' ' || strlen(line) < 19 || line[18] != '\t')
        return -1;
    char *body = line + 19;
    char sum[17];
    snprintf(sum, sizeof sum, "%016llx", (unsigned long long)fnv1a(body, strlen(body)));
    if (memcmp(sum, line + 2, 16) != 0)
        return -1;
    char *f[6];
    int k = 0;
    f[k++] = body;
    for (char *p = body; *p && k < 6; p++)
        if (*p == '\t') {
            *p = '\0';
            f[k++] = p + 1;
        }
    if (k != 6 || unescape(f[0]) < 0 || unescape(f[5]) < 0 || parse_ll(f[1], &r->out_size) < 0 ||
        parse_ll(f[2], &r->out_mtime) < 0 || parse_ll(f[3], &r->in_size) < 0 ||
        parse_ll(f[4], &r->in_mtime) < 0)
        return -1;
    r->rel = f[0];
    r->settings = f[5];
    return 0;
}

static int cmp_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    int c = strcmp(x->rel, y->rel);
    return c ? c : (x->seq < y->seq ? -1 : x->seq > y->seq);
}

imgpu_manifest *imgpu_manifest_open(const char *outdir)
{
    imgpu_manifest *m = calloc(1, sizeof *m);
    size_t plen = strlen(outdir) + sizeof IMGPU_MANIFEST_NAME + 1;
    if (!m || !(m->path = malloc(plen))) {
        free(m);
        imgpu_error("out of memory");
        return NULL;
    }
    snprintf(m->path, plen, "%s/%s", outdir, IMGPU_MANIFEST_NAME);
    m->fd = -1;
    pthread_mutex_init(&m->lock, NULL);

    int fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return m;   /* no manifest (or no OUTDIR yet) */
        imgpu_error("cannot read '%s': %s", m->path, strerror(errno));
        imgpu_manifest_close(m);
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        imgpu_error("cannot read '%s': not a regular file", m->path);
        close(fd);
        imgpu_manifest_close(m);
        return NULL;
    }
    m->found = 1;
    size_t cap = (size_t)st.st_size + 1, len = 0;
    if (!(m->text = malloc(cap + 1))) {
        close(fd);
        imgpu_manifest_close(m);
        imgpu_error("out of memory");
        return NULL;
    }
    for (;;) {   /* to the end, even if another process appends meanwhile */
        if (len == cap) {
            char *t = realloc(m->text, cap * 2 + 1);
            if (!t) {
                close(fd);
                imgpu_manifest_close(m);
                imgpu_error("out of memory");
                return NULL;
            }
            m->text = t;
            cap *= 2;
        }
        ssize_t r = read(fd, m->text + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            imgpu_error("cannot read '%s': %s", m->path, strerror(errno));
            close(fd);
            imgpu_manifest_close(m);
            return NULL;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    m->text[len] = '\0';

    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += m->text[i] == '\n';
    if (!(m->v = calloc(lines ? lines : 1, sizeof *m->v))) {
        imgpu_manifest_close(m);
        imgpu_error("out of memory");
        return NULL;
    }
    char *p = m->text, *end = m->text + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break;   /* a last line without its '\n': torn, ignored */
        *nl = '\0';
        if (memchr(p, '\0', (size_t)(nl - p)) == NULL && parse_line(p, &m->v[m->n]) == 0) {
            m->v[m->n].seq = m->n;
            m->n++;
        }
        p = nl + 1;
    }
    if (m->n)
        qsort(m->v, m->n, sizeof *m->v, cmp_rec);
    return m;
}

int imgpu_manifest_found(const imgpu_manifest *m) { return m->found; }

int imgpu_manifest_close(imgpu_manifest *m)
{
    if (!m)
        return 0;
    int rc = 0;
    if (m->fd >= 0) {
        if (fsync(m->fd) != 0)
            rc = imgpu_error("cannot write '%s': %s", m->path, strerror(errno));
        close(m->fd);
    }
    pthread_mutex_destroy(&m->lock);
    free(m->v);
    free(m->text);
    free(m->path);
    free(m);
    return rc;
}

/* ---- the settings string ------------------------------------------------------------------ */

char *imgpu_manifest_settings(const imgpu_op *ops, int nops, const imgpu_save_options *save,
                              const char *out_path, int out_depth)
{
    size_t cap = 128 + (size_t)nops * 160;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t n = 0;
#define PUT(...) (n += (size_t)snprintf(s + n, n < cap ? cap - n : 0, __VA_ARGS__))
    if (nops == 0)
        PUT("copy");
    for (int i = 0; i < nops; i++) {
        const imgpu_op *op = &ops[i];
        if (i)
            PUT(" | ");
        const imgpu_op_desc *d = imgpu_op_desc_of(op->kind);
        char text[320];
        if (d)
            d->write(op, IMGPU_OP_TEXT_MANIFEST, text, sizeof text);
        else
            snprintf(text, sizeof text, "op%d", (int)op->kind);
        PUT("%s", text);
    }
    imgpu_format f = imgpu_format_from_path(out_path);
    char fname[16];
    snprintf(fname, sizeof fname, "%s", imgpu_format_name(f));
    for (char *c = fname; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    PUT(" ; format=%s", fname);
    if (out_depth == 8)   /* --depth 8: 16-bit results written as 8 bits */
        PUT(" depth=8");
    /* every output setting that changes the written file (defaults spelled out, so a run
     * that names the default explicitly matches one that did not) */
    static const char *const sub[] = { "420", "444", "422", "420" };
    static const char *const comp[] = { "deflate", "none", "deflate", "lzw", "packbits", "zstd",
                                        "lzma", "jpeg", "webp" };
    const int quality = save && save->quality > 0 ? save->quality : IMGPU_DEFAULT_QUALITY;
    if (f == IMGPU_FORMAT_JPEG) {
        PUT(" quality=%d subsampling=%s", quality, sub[save ? save->subsampling & 3 : 0]);
        if (save && save->progressive)
            PUT(" progressive");
        if (save && save->optimize)
            PUT(" optimize");
        if (save && save->has_background)
            PUT(" background=#%02x%02x%02x", save->background[0], save->background[1],
                save->background[2]);
    } else if (f == IMGPU_FORMAT_PNG) {
        PUT(" png-level=%d", save && save->png_level >= 0 ? save->png_level : 1);
    } else if (f == IMGPU_FORMAT_TIFF) {
        PUT(" compression=%s", comp[save && save->compression <= IMGPU_COMPRESSION_WEBP ? save->compression : 0]);
        if (save && (save->compression == IMGPU_COMPRESSION_JPEG || save->compression == IMGPU_COMPRESSION_WEBP))
            PUT(" quality=%d", quality);
    } else if (f == IMGPU_FORMAT_WEBP) {
        if (save && save->lossless)
            PUT(" lossless");
        else
            PUT(" quality=%d", quality);
    }
    if (save && save->strip)
        PUT(" strip");
#undef PUT
    if (n >= cap) {   /* cannot happen with the bounds above; never record a cut string */
        free(s);
        return NULL;
    }
    return s;
}

/* ---- lookup ------------------------------------------------------------------------------- */

imgpu_manifest_state imgpu_manifest_check(const imgpu_manifest *m, const char *rel,
                                          const char *settings, const struct stat *in,
                                          const struct stat *out, const char **recorded)
{
    if (recorded)
        *recorded = NULL;
    if (!m->found)
        return IMGPU_MANIFEST_LEGACY;
    /* the first record of rel */
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(m->v[mid].rel, rel) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < m->n && !strcmp(m->v[end].rel, rel))
        end++;
    long long osize = (long long)out->st_size, omtime = imgpu_manifest_mtime_ns(out);
    for (size_t i = end; i-- > lo;) {   /* the latest line that describes the file there */
        const rec *r = &m->v[i];
        if (r->out_size != osize || r->out_mtime != omtime)
            continue;
        if (!strcmp(r->settings, IMGPU_MANIFEST_UNKNOWN_SETTINGS))
            return IMGPU_MANIFEST_LEGACY;
        if (strcmp(r->settings, settings) != 0) {
            if (recorded)
                *recorded = r->settings;
            return IMGPU_MANIFEST_OTHER_SETTINGS;
        }
        if (r->in_size != (long long)in->st_size || r->in_mtime != imgpu_manifest_mtime_ns(in))
            return IMGPU_MANIFEST_INPUT_CHANGED;
        return IMGPU_MANIFEST_MATCH;
    }
    return IMGPU_MANIFEST_UNKNOWN;
}

/* ---- appending ---------------------------------------------------------------------------- */

static int write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

int imgpu_manifest_add(imgpu_manifest *m, const char *rel, const char *settings,
                       long long in_size, long long in_mtime_ns, long long out_size,
                       long long out_mtime_ns)
{
    size_t cap = 19 + escaped_len(rel) + escaped_len(settings) + 5 * 24 + 2;
    char *line = malloc(cap);
    if (!line)
        return imgpu_error("out of memory");
    char *body = line + 19, *o = body;
    o = escape_into(o, rel);
    o += snprintf(o, cap - (size_t)(o - line), "\t%lld\t%lld\t%lld\t%lld\t", out_size, out_mtime_ns,
                  in_size, in_mtime_ns);
    o = escape_into(o, settings);
    *o = '\0';
    char sum[17];
    snprintf(sum, sizeof sum, "%016llx", (unsigned long long)fnv1a(body, (size_t)(o - body)));
    line[0] = 'R';
    line[1] = ' ';
    memcpy(line + 2, sum, 16);
    line[18] = '\t';
    *o++ = '\n';

    int err = 0;
    pthread_mutex_lock(&m->lock);
    if (m->fd < 0) {
        m->fd = open(m->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
        struct stat st;
        if (m->fd < 0)
            err = errno;
        else if (fstat(m->fd, &st) != 0)
            err = errno;
        else if (!S_ISREG(st.st_mode))
            err = EINVAL;
        else if (st.st_size == 0)
            err = write_all(m->fd, HEADER, sizeof HEADER - 1);
        if (err && m->fd >= 0) {
            close(m->fd);
            m->fd = -1;
        }
    }
    /* one write() per line: O_APPEND keeps lines of other writers (shards) whole */
    if (!err)
        err = write_all(m->fd, line, (size_t)(o - line));
    pthread_mutex_unlock(&m->lock);
    free(line);
    if (err)
        return imgpu_error("cannot write '%s': %s", m->path, strerror(err));
    return 0;
}
