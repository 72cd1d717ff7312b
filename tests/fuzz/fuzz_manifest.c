/* fuzz_manifest.c — libFuzzer target: the batch manifest reader (src/batch/batch_manifest.c) on any
 * file. Input: byte 0 is a set of switches, the rest is the file OUTDIR/.imgpu-batch.
 *   bit 0    lines shaped "R <16 bytes>\t..." get the right checksum first, so that the fuzzer
 *            reaches the fields behind it (without it, only lines it got right count);
 *   bits 1-7 the reader's line bound: 16 + 8 * (byte 0 >> 1) bytes (16..1032) instead of
 *            64 KiB, so short inputs reach the edges of its buffer (lines that end exactly
 *            there, one byte past, a line longer than the buffer, a buffer of empty lines).
 * The target writes the file in a temporary folder, asks about a few outputs (the names and
 * sizes the seeds use: tests/fuzz/make_text_seeds.py), reads, and holds every answer to
 * the one this file's own reader gives (ref_*: the format of batch_manifest.h read the
 * simple way, the whole file in memory): the state of each output, and the settings recorded
 * for OTHER_SETTINGS. Then it appends a record whose name and settings come from the input
 * (any bytes but NUL) and reads the file again: that record must be found and match, whatever
 * the file held before (a torn last line, no header, garbage, lines over the bound).
 */
#include "batch/batch_manifest.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER "# imgpu batch manifest 1: what made each output (imgpu batch reads it; do not edit)"

typedef struct ask {
    const char *rel;
    long long out_size, out_mtime;
} ask;

/* the outputs asked about (the seeds have lines for them), all with input (1, 2) and
 * settings "S" */
static const ask s_asks[] = {
    { "a.png", 10, 20 }, { "a.png", 11, 20 }, { "sub/b%.png", 0, 0 }, { "\x01\t", 5, -1 },
    { "c.png", 7, 1700000000123456789LL },
};
#define NASK (sizeof s_asks / sizeof *s_asks)
#define SETTINGS "S"

static char s_dir[64], s_file[96];

static void cleanup(void)
{
    unlink(s_file);
    rmdir(s_dir);
}

static int setup(void)
{
    if (s_dir[0])
        return 0;
    /* tmpfs where there is one: the reader's close fsyncs after an append */
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(s_dir, sizeof s_dir, "%s/fuzz_manifest.XXXXXX", base);
    if (!mkdtemp(s_dir))
        return -1;
    snprintf(s_file, sizeof s_file, "%s/%s", s_dir, IMGPU_MANIFEST_NAME);
    atexit(cleanup);
    return 0;
}

static struct stat stat_of(long long size, long long mtime_ns)
{
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_size = (off_t)size;
    /* floor division: imgpu_manifest_mtime_ns gives sec * 1e9 + nsec back */
    long long sec = mtime_ns / 1000000000LL, ns = mtime_ns % 1000000000LL;
    if (ns < 0) {
        ns += 1000000000LL;
        sec -= 1;
    }
    st.st_mtim.tv_sec = (time_t)sec;
    st.st_mtim.tv_nsec = (long)ns;
    return st;
}

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* ---- the reference reader ------------------------------------------------------------------ */

typedef struct ref {
    int has;
    long long in_size, in_mtime;
    char *settings;
} ref;

static int hexv(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* %XX (lowercase) decoded into a new string; NULL when malformed */
static char *unesc(const char *s, size_t n)
{
    char *o = malloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '%') {
            o[k++] = s[i];
            continue;
        }
        if (i + 2 >= n || hexv(s[i + 1]) < 0 || hexv(s[i + 2]) < 0) {
            free(o);
            return NULL;
        }
        o[k++] = (char)(hexv(s[i + 1]) * 16 + hexv(s[i + 2]));
        i += 2;
    }
    o[k] = '\0';
    return o;
}

static int num(const char *s, size_t n, long long *v)
{
    char *tmp = malloc(n + 1);
    if (!tmp)
        abort();
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    char *end;
    errno = 0;
    *v = strtoll(tmp, &end, 10);
    int rc = errno || end == tmp || *end ? -1 : 0;
    free(tmp);
    return rc;
}

/* One line (no '\n'): updates r[] for the asks it describes. */
static void ref_line(const char *l, size_t n, ref *r)
{
    if (n > imgpu__manifest_line_max || memchr(l, '\0', n))
        return;
    if (n < 19 || l[0] != 'R' || l[1] != ' ' || l[18] != '\t')
        return;
    const char *body = l + 19;
    size_t bn = n - 19;
    char sum[17];
    snprintf(sum, sizeof sum, "%016llx", (unsigned long long)fnv1a(body, bn));
    if (memcmp(sum, l + 2, 16))
        return;
    /* five tabs split six fields; the sixth (settings) keeps any further tab */
    const char *f[6];
    size_t fl[6];
    int k = 0;
    const char *p = body, *end = body + bn;
    while (k < 5) {
        const char *t = memchr(p, '\t', (size_t)(end - p));
        if (!t)
            return;
        f[k] = p;
        fl[k] = (size_t)(t - p);
        k++;
        p = t + 1;
    }
    f[5] = p;
    fl[5] = (size_t)(end - p);
    long long v[4];
    for (int i = 0; i < 4; i++)
        if (num(f[i + 1], fl[i + 1], &v[i]) < 0)
            return;
    char *rel = unesc(f[0], fl[0]), *set = unesc(f[5], fl[5]);
    if (rel && set && strlen(set) <= IMGPU_MANIFEST_SETTINGS_MAX) {
        for (size_t a = 0; a < NASK; a++) {
            if (strcmp(s_asks[a].rel, rel) || s_asks[a].out_size != v[0] || s_asks[a].out_mtime != v[1])
                continue;
            free(r[a].settings);
            r[a].settings = strdup(set);
            r[a].has = 1;
            r[a].in_size = v[2];
            r[a].in_mtime = v[3];
        }
    }
    free(rel);
    free(set);
}

static void ref_read(const char *d, size_t n, ref *r)
{
    size_t s = 0;
    for (size_t i = 0; i < n; i++)
        if (d[i] == '\n') {
            ref_line(d + s, i - s, r);
            s = i + 1;
        }
    /* d[s..n): a last line without its '\n' is torn: ignored */
}

static imgpu_manifest_state ref_state(const ref *r, const char **recorded)
{
    *recorded = NULL;
    if (!r->has)
        return IMGPU_MANIFEST_UNKNOWN;
    if (!strcmp(r->settings, IMGPU_MANIFEST_UNKNOWN_SETTINGS))
        return IMGPU_MANIFEST_LEGACY;
    if (strcmp(r->settings, SETTINGS)) {
        *recorded = r->settings;
        return IMGPU_MANIFEST_OTHER_SETTINGS;
    }
    if (r->in_size != 1 || r->in_mtime != 2)
        return IMGPU_MANIFEST_INPUT_CHANGED;
    return IMGPU_MANIFEST_MATCH;
}

/* ---- the target ---------------------------------------------------------------------------- */

static void put_file(const char *d, size_t n)
{
    int fd = open(s_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        abort();
    while (n) {
        ssize_t w = write(fd, d, n);
        if (w <= 0)
            abort();
        d += w;
        n -= (size_t)w;
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || setup() < 0)
        return 0;
    imgpu_set_quiet(1);   /* the notice of ignored lines: not what is checked here */
    const unsigned flags = data[0];
    const size_t n = size - 1;
    char *file = malloc(n + 1);
    if (!file)
        return 0;
    memcpy(file, data + 1, n);
    file[n] = '\0';
    if (flags & 1) {   /* fix the checksum of every line shaped like a record */
        size_t s = 0;
        for (size_t i = 0; i <= n; i++) {
            if (i < n && file[i] != '\n')
                continue;
            size_t len = i - s;
            char *l = file + s;
            if (len >= 19 && l[0] == 'R' && l[1] == ' ' && l[18] == '\t') {
                char sum[17];
                snprintf(sum, sizeof sum, "%016llx", (unsigned long long)fnv1a(l + 19, len - 19));
                memcpy(l + 2, sum, 16);
            }
            s = i + 1;
        }
    }
    imgpu__manifest_line_max = 16 + 8 * (size_t)(flags >> 1);
    put_file(file, n);

    /* 1. what the reader says of the asked outputs: the reference's answer */
    ref r[NASK];
    memset(r, 0, sizeof r);
    ref_read(file, n, r);
    imgpu_manifest *m = imgpu_manifest_open(s_dir);
    if (!m || !imgpu_manifest_found(m))
        abort();
    for (size_t a = 0; a < NASK; a++) {
        struct stat out = stat_of(s_asks[a].out_size, s_asks[a].out_mtime);
        if (imgpu_manifest_want(m, s_asks[a].rel, &out) < 0)
            abort();
    }
    if (imgpu_manifest_read(m) < 0)
        abort();
    struct stat in = stat_of(1, 2);
    for (size_t a = 0; a < NASK; a++) {
        struct stat out = stat_of(s_asks[a].out_size, s_asks[a].out_mtime);
        const char *got_rec = (const char *)1, *want_rec;
        imgpu_manifest_state got = imgpu_manifest_check(m, s_asks[a].rel, SETTINGS, &in, &out, &got_rec);
        imgpu_manifest_state want = ref_state(&r[a], &want_rec);
        if (got != want || (want_rec ? !got_rec || strcmp(got_rec, want_rec) : got_rec != NULL)) {
            fprintf(stderr, "ask %zu (%s): state %d, the reference %d\n", a, s_asks[a].rel,
                    (int)got, (int)want);
            abort();
        }
    }
    /* an output nobody asked about: no record */
    struct stat other = stat_of(10, 20);
    if (imgpu_manifest_check(m, "never-asked.png", SETTINGS, &in, &other, NULL) != IMGPU_MANIFEST_UNKNOWN)
        abort();
    for (size_t a = 0; a < NASK; a++)
        free(r[a].settings);

    /* 2. append a record of input-made name and settings, read again: found, matching */
    imgpu__manifest_line_max = IMGPU_MANIFEST_LINE_MAX;
    char rel[48], set[48] = "T";   /* never "?", the settings of an unknown origin */
    size_t rn = 0, sn = 1;
    for (size_t i = 0; i < n && rn < 40; i++)
        if (data[1 + i])
            rel[rn++] = (char)data[1 + i];
    rel[rn] = '\0';
    if (!rn)
        strcpy(rel, "x");
    for (size_t i = n; i-- > 0 && sn < 40;)
        if (data[1 + i])
            set[sn++] = (char)data[1 + i];
    set[sn] = '\0';
    const long long osize = (long long)n * 7 + 3, omtime = -(long long)n * 1000000007LL;
    imgpu_error_clear();
    if (imgpu_manifest_add(m, rel, set, 41, 42, osize, omtime) < 0) {
        fprintf(stderr, "add: %s\n", imgpu_error_message());
        abort();
    }
    if (imgpu_manifest_close(m) < 0)
        abort();
    m = imgpu_manifest_open(s_dir);
    if (!m)
        abort();
    struct stat o2 = stat_of(osize, omtime), i2 = stat_of(41, 42);
    if (imgpu_manifest_want(m, rel, &o2) < 0 || imgpu_manifest_read(m) < 0)
        abort();
    const char *rec = NULL;
    imgpu_manifest_state s = imgpu_manifest_check(m, rel, set, &i2, &o2, &rec);
    if (s != IMGPU_MANIFEST_MATCH) {
        fprintf(stderr, "the appended record: state %d (recorded '%s')\n", (int)s, rec ? rec : "");
        abort();
    }
    imgpu_manifest_close(m);
    free(file);
    imgpu_error_clear();
    return 0;
}
