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

/* One line, parsed (its strings point into the line). */
typedef struct rec {
    char *rel, *settings;
    long long out_size, out_mtime, in_size, in_mtime;
} rec;

/* A settings string shared by the lines that record the same one (most of a manifest). */
typedef struct shared_str {
    size_t refs;
    char s[];
} shared_str;

/* An output this run asks about (imgpu_manifest_want) and the latest line describing it. */
typedef struct want {
    char *rel;
    long long out_size, out_mtime;   /* the file there now */
    int has;                          /* a line describes it: the fields below */
    long long in_size, in_mtime;
    shared_str *settings;
} want;

struct imgpu_manifest {
    char *path;
    int found;
    int rfd;        /* the manifest opened for reading, until imgpu_manifest_read; -1 */
    want *w;        /* sorted by rel by imgpu_manifest_read */
    size_t nw, capw;
    shared_str *last;   /* the settings of the latest line kept */
    pthread_mutex_t lock;
    int fd;         /* the journal, opened for append on first add; -1 until then */
    int torn;       /* its last line had no '\n' when opened: the next write ends it first */
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

size_t imgpu__manifest_line_max = IMGPU_MANIFEST_LINE_MAX;

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

static void str_release(shared_str *p)
{
    if (p && --p->refs == 0)
        free(p);
}

static int cmp_want(const void *a, const void *b)
{
    return strcmp(((const want *)a)->rel, ((const want *)b)->rel);
}

/* The first want whose rel is not below rel (m->nw when none). */
static size_t want_lower(const imgpu_manifest *m, const char *rel)
{
    size_t lo = 0, hi = m->nw;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(m->w[mid].rel, rel) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A hard link planted as the manifest would make its appends land in another file (outside
 * OUTDIR, perhaps): a manifest has one name. 0, or -1 + error. */
static int one_link(const imgpu_manifest *m, const struct stat *st)
{
    if (st->st_nlink > 1)
        return imgpu_error("'%s' has %ju hard links: refusing to use it, as another name of it "
                           "may be a file outside the output folder (remove it; imgpu then starts "
                           "a new one)", m->path, (uintmax_t)st->st_nlink);
    return 0;
}

/* open() of the manifest failed with ELOOP: O_NOFOLLOW met a symbolic link. -1 + error. */
static int no_symlink(const imgpu_manifest *m)
{
    return imgpu_error("'%s' is a symbolic link: refusing to use it, as it may lead to a file "
                       "outside the output folder (remove it; imgpu then starts a new one)", m->path);
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
    m->rfd = -1;
    pthread_mutex_init(&m->lock, NULL);

    int fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return m;   /* no manifest (or no OUTDIR yet) */
        if (errno == ELOOP)
            no_symlink(m);
        else
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
    if (one_link(m, &st) < 0) {
        close(fd);
        imgpu_manifest_close(m);
        return NULL;
    }
    m->found = 1;
    m->rfd = fd;
    return m;
}

int imgpu_manifest_found(const imgpu_manifest *m) { return m->found; }

int imgpu_manifest_want(imgpu_manifest *m, const char *rel, const struct stat *out)
{
    if (m->nw == m->capw) {
        size_t cap = m->capw ? m->capw * 2 : 64;
        want *w = realloc(m->w, cap * sizeof *w);
        if (!w)
            return imgpu_error("out of memory");
        m->w = w;
        m->capw = cap;
    }
    want *w = &m->w[m->nw];
    memset(w, 0, sizeof *w);
    if (!(w->rel = strdup(rel)))
        return imgpu_error("out of memory");
    w->out_size = (long long)out->st_size;
    w->out_mtime = imgpu_manifest_mtime_ns(out);
    m->nw++;
    return 0;
}

/* One intact record: it counts for every output asked about that it describes (the same
 * name, size and mtime), and, being later, replaces what an earlier line said of them.
 * 0, or -1 when out of memory. */
static int keep(imgpu_manifest *m, const rec *r)
{
    shared_str *set = NULL;
    for (size_t i = want_lower(m, r->rel); i < m->nw && !strcmp(m->w[i].rel, r->rel); i++) {
        want *w = &m->w[i];
        if (w->out_size != r->out_size || w->out_mtime != r->out_mtime)
            continue;
        if (!set) {
            if (m->last && !strcmp(m->last->s, r->settings)) {
                set = m->last;
            } else {
                size_t n = strlen(r->settings) + 1;
                if (!(set = malloc(sizeof *set + n)))
                    return -1;
                set->refs = 1;   /* m->last's */
                memcpy(set->s, r->settings, n);
                str_release(m->last);
                m->last = set;
            }
        }
        set->refs++;
        str_release(w->settings);
        w->settings = set;
        w->has = 1;
        w->in_size = r->in_size;
        w->in_mtime = r->in_mtime;
    }
    return 0;
}

/* One line, without its '\n' (NUL-terminated in place): 1 when it is a record imgpu writes
 * or the header, 0 when it is not (ignored), -1 when out of memory. */
static int take_line(imgpu_manifest *m, char *line, size_t len)
{
    if (len == sizeof HEADER - 2 && !memcmp(line, HEADER, len))
        return 1;   /* the header (twice when two shards began the file at once) */
    rec r;
    if (memchr(line, '\0', len) || parse_line(line, &r) < 0)
        return 0;
    if (strlen(r.settings) > IMGPU_MANIFEST_SETTINGS_MAX)
        return 0;   /* longer than imgpu writes: not its line, and not to be kept */
    return keep(m, &r) < 0 ? -1 : 1;
}

int imgpu_manifest_read(imgpu_manifest *m)
{
    if (m->nw > 1)
        qsort(m->w, m->nw, sizeof *m->w, cmp_want);
    if (m->rfd < 0)
        return 0;
    /* Line by line through one buffer of the longest line: the memory used is this buffer
     * and what is kept for the outputs asked about, whatever the file holds (a gigabyte of
     * empty lines, one endless line, or forged records of other names). */
    const size_t cap = imgpu__manifest_line_max + 1;   /* a line and its '\n' */
    char *buf = malloc(cap);
    if (!buf)
        return imgpu_error("out of memory");
    size_t start = 0, end = 0, scan = 0;
    unsigned long long ignored = 0, too_long = 0;
    int skipping = 0;   /* inside a line longer than the buffer: dropped to its '\n' */
    int rc = -1;
    for (;;) {   /* to the end, even if another process appends meanwhile */
        if (end == cap) {
            if (start == 0) {   /* no '\n' in a whole buffer: too long */
                skipping = 1;
                end = scan = 0;
            } else {
                memmove(buf, buf + start, end - start);
                end -= start;
                scan -= start;
                start = 0;
            }
        }
        ssize_t got = read(m->rfd, buf + end, cap - end);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            imgpu_error("cannot read '%s': %s", m->path, strerror(errno));
            goto done;
        }
        if (got == 0)
            break;
        end += (size_t)got;
        char *nl;
        while (scan < end && (nl = memchr(buf + scan, '\n', end - scan))) {
            size_t at = (size_t)(nl - buf);
            if (!skipping && at == start) {   /* empty lines, counted at a byte's cost */
                size_t k = at;
                while (k < end && buf[k] == '\n')
                    k++;
                ignored += k - at;
                start = scan = k;
                continue;
            }
            if (skipping) {
                skipping = 0;
                ignored++;
                too_long++;
            } else {
                *nl = '\0';
                int t = take_line(m, buf + start, at - start);
                if (t < 0) {
                    imgpu_error("out of memory");
                    goto done;
                }
                ignored += t == 0;
            }
            start = scan = at + 1;
        }
        scan = end;
    }
    if (skipping) {          /* the last line, too long and without its '\n' */
        ignored++;
        too_long++;
    } else if (end > start) {
        ignored++;           /* a last line without its '\n': torn (a kill, a full disk) */
    }
    if (ignored) {
        char more[64] = "";
        if (too_long)
            snprintf(more, sizeof more, " (%llu longer than %zu bytes)", too_long, imgpu__manifest_line_max);
        imgpu_notice("%s: %llu line%s ignored%s: not %s that imgpu wrote (edited, torn by a kill "
                     "or a full disk, or planted); an output that only %s described has no record",
                     m->path, ignored, ignored == 1 ? "" : "s", more,
                     ignored == 1 ? "a record" : "records", ignored == 1 ? "it" : "they");
    }
    rc = 0;
done:
    free(buf);
    close(m->rfd);
    m->rfd = -1;
    return rc;
}

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
    if (m->rfd >= 0)
        close(m->rfd);
    pthread_mutex_destroy(&m->lock);
    for (size_t i = 0; i < m->nw; i++) {
        free(m->w[i].rel);
        str_release(m->w[i].settings);
    }
    free(m->w);
    str_release(m->last);
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
    const int quality = IMGPU_SAVE_QUALITY(save, f);   /* what the encoder uses (WebP: 75) */
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
    long long osize = (long long)out->st_size, omtime = imgpu_manifest_mtime_ns(out);
    for (size_t i = want_lower(m, rel); i < m->nw && !strcmp(m->w[i].rel, rel); i++) {
        const want *w = &m->w[i];   /* the latest line that describes the file there */
        if (!w->has || w->out_size != osize || w->out_mtime != omtime)
            continue;
        if (!strcmp(w->settings->s, IMGPU_MANIFEST_UNKNOWN_SETTINGS))
            return IMGPU_MANIFEST_LEGACY;
        if (strcmp(w->settings->s, settings) != 0) {
            if (recorded)
                *recorded = w->settings->s;
            return IMGPU_MANIFEST_OTHER_SETTINGS;
        }
        if (w->in_size != (long long)in->st_size || w->in_mtime != imgpu_manifest_mtime_ns(in))
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
    size_t cap = 1 + 19 + escaped_len(rel) + escaped_len(settings) + 5 * 24 + 2;
    char *buf = malloc(cap);
    if (!buf)
        return imgpu_error("out of memory");
    char *line = buf + 1;   /* buf[0]: room for a '\n' that ends a torn last line */
    char *body = line + 19, *o = body;
    o = escape_into(o, rel);
    o += snprintf(o, cap - (size_t)(o - buf), "\t%lld\t%lld\t%lld\t%lld\t", out_size, out_mtime_ns,
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
    const size_t len = (size_t)(o - line);
    if (len - 1 > imgpu__manifest_line_max || strlen(settings) > IMGPU_MANIFEST_SETTINGS_MAX) {
        free(buf);   /* a line the reader would ignore (cannot happen with imgpu's names) */
        return imgpu_error("cannot write '%s': the line of '%s' would be longer than %zu bytes",
                           m->path, rel, imgpu__manifest_line_max);
    }

    int err = 0, refused = 0;
    pthread_mutex_lock(&m->lock);
    if (m->fd < 0) {
        /* O_RDWR: pread looks at the last byte */
        int fd = open(m->path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
        struct stat st;
        char last;
        ssize_t r;
        if (fd < 0 && errno == ELOOP)
            refused = no_symlink(m);   /* planted since open, or open found none */
        else if (fd < 0)
            err = errno;
        else if (fstat(fd, &st) != 0)
            err = errno;
        else if (!S_ISREG(st.st_mode))
            err = EINVAL;
        else if (st.st_nlink > 1)   /* planted since open, or open found none */
            refused = one_link(m, &st);
        else if (st.st_size == 0)
            err = write_all(fd, HEADER, sizeof HEADER - 1);
        else if ((r = pread(fd, &last, 1, st.st_size - 1)) < 0)
            err = errno;
        else
            m->torn = r == 1 && last != '\n';
        if (fd >= 0 && (err || refused))
            close(fd);
        else if (fd >= 0)
            m->fd = fd;
    }
    /* one write() per line: O_APPEND keeps lines of other writers (shards) whole. After a
     * last line torn by a kill or a full disk, a '\n' first ends it (it stays one ignored
     * line), or the reader would take it and this line as one, and lose this one. */
    if (m->fd >= 0) {
        if (m->torn) {
            buf[0] = '\n';
            if (!(err = write_all(m->fd, buf, len + 1)))
                m->torn = 0;
        } else {
            err = write_all(m->fd, line, len);
        }
    }
    pthread_mutex_unlock(&m->lock);
    free(buf);
    if (refused)
        return -1;
    if (err)
        return imgpu_error("cannot write '%s': %s", m->path, strerror(err));
    return 0;
}
