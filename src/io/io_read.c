/* io_read.c — reading an input whole, once, into memory, for io.c's loader: a regular file
 * to its end under --max-file-size; a FIFO, a pipe (/dev/stdin) or a character device
 * through poll() under the --max-decode-time deadline for the whole wait, stopping once it
 * has more than the size limit, or after its first bytes when they are no image format
 * (/dev/zero). Directories, block devices and sockets are refused by name. Messages are
 * "cannot read 'PATH': REASON".
 */
#include "codec.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

uint64_t imgpu__max_file_bytes(const imgpu_load_options *opts)
{
    uint64_t limit = opts && opts->max_file_bytes ? opts->max_file_bytes
                                                  : IMGPU_DEFAULT_MAX_FILE_BYTES;
    return limit > (uint64_t)INT_MAX ? (uint64_t)INT_MAX : limit;
}

/* Bytes of a file's start that decide its format: imgpu__codec_sniff looks at no more (TGA's
 * header is the longest it reads), so a stream whose first bytes are no image is refused
 * after them. */
#define SNIFF_BYTES 18

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Read an input whole, once, into a malloc'ed buffer. The path is opened once without
 * blocking (a FIFO with no writer would block open() forever) and everything else is asked
 * of the descriptor. A regular file is read to its end, at most limit + 1 bytes. Anything
 * else that can be read (a FIFO, a pipe such as /dev/stdin, a character device) is read
 * through poll() under a deadline of --max-decode-time for the whole wait, so no writer, a
 * stalled writer or an endless device cannot hang the run: it stops as soon as it has more
 * than the size limit, and after its first SNIFF_BYTES when they are no image (/dev/zero). */
int imgpu__read_input(const char *path, const imgpu_load_options *opts, unsigned char **out,
                      size_t *out_len)
{
    const uint64_t limit = imgpu__max_file_bytes(opts);
    const uint64_t ms = opts && opts->max_decode_ms ? opts->max_decode_ms
                                                    : IMGPU_DEFAULT_MAX_DECODE_MS;
    unsigned char *buf = NULL;
    size_t len = 0, cap;
    int rc = -1, stream, sniffed = 0;
    struct stat st;

    /* "-": standard input, read through a duplicate so closing it leaves fd 0 alone (no
     * O_NONBLOCK there: the file description is shared with whoever gave it to us; poll()
     * below never lets a read block anyway). */
    const int is_stdin = !strcmp(path, "-");
    if (is_stdin && isatty(0))
        return imgpu_error("cannot read '-': standard input is a terminal (pipe an image in, "
                           "e.g. 'cat a.png | imgpu info -')");
    int fd = is_stdin ? fcntl(0, F_DUPFD_CLOEXEC, 3)
                      : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        /* A socket cannot be opened at all; say what it is rather than "No such device". */
        if (e == ENXIO && stat(path, &st) == 0 && S_ISSOCK(st.st_mode))
            return imgpu_error("cannot read '%s': is a socket, not a file", path);
        return imgpu_error("cannot read '%s': %s", path, strerror(e));
    }
    const uint64_t t_end = now_ms() + ms;
    if (fstat(fd, &st) != 0) {
        imgpu_error("cannot read '%s': %s", path, strerror(errno));
        goto done;
    }
    if (S_ISDIR(st.st_mode)) {
        imgpu_error("cannot read '%s': is a directory", path);
        goto done;
    }
    if (S_ISBLK(st.st_mode)) {
        imgpu_error("cannot read '%s': is a block device, not an image file", path);
        goto done;
    }
    stream = !S_ISREG(st.st_mode);
    if (!stream) {
        if (st.st_size == 0) {
            imgpu_error("cannot read '%s': file is empty", path);
            goto done;
        }
        if ((uint64_t)st.st_size > limit) {
            imgpu_error("cannot read '%s': file is too large (%lld bytes; the limit is %llu "
                        "bytes, raise it with --max-file-size or IMGPU_MAX_FILE_SIZE)", path,
                        (long long)st.st_size, (unsigned long long)limit);
            goto done;
        }
        /* A regular file never blocks; plain reads from here on. */
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
            imgpu_error("cannot read '%s': %s", path, strerror(errno));
            goto done;
        }
    }
    /* Read to EOF rather than trusting st_size: a file can change. limit < INT_MAX, so
     * limit + 1 fits a size_t. */
    cap = stream ? 4096 : (size_t)st.st_size + 1;
    if ((uint64_t)cap > limit + 1)
        cap = (size_t)limit + 1;
    buf = malloc(cap);
    if (!buf) {
        imgpu_error("cannot read '%s': out of memory", path);
        goto done;
    }
    for (;;) {
        if (len == cap) {
            size_t ncap = (uint64_t)cap * 2 > limit + 1 ? (size_t)limit + 1 : cap * 2;
            unsigned char *nb = realloc(buf, ncap);
            if (!nb) {
                imgpu_error("cannot read '%s': out of memory", path);
                goto done;
            }
            buf = nb;
            cap = ncap;
        }
        if (stream) {
            uint64_t t = now_ms();
            struct pollfd pfd = { .fd = fd, .events = POLLIN };
            int pr = t >= t_end ? 0
                     : poll(&pfd, 1, t_end - t > INT_MAX ? INT_MAX : (int)(t_end - t));
            if (pr < 0 && errno == EINTR)
                continue;
            if (pr < 0) {
                imgpu_error("cannot read '%s': %s", path, strerror(errno));
                goto done;
            }
            if (pr == 0) {
                if (len == 0)
                    imgpu_error("cannot read '%s': no data within %.3g s (the --max-decode-time "
                                "limit; raise it with --max-decode-time or IMGPU_MAX_DECODE_TIME)",
                                path, (double)ms / 1000.0);
                else
                    imgpu_error("cannot read '%s': the data did not end within %.3g s (%zu "
                                "bytes read; the --max-decode-time limit; raise it with "
                                "--max-decode-time or IMGPU_MAX_DECODE_TIME)", path,
                                (double)ms / 1000.0, len);
                goto done;
            }
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
                continue;
            imgpu_error("cannot read '%s': %s", path, strerror(errno));
            goto done;
        }
        if (got == 0)
            break;
        len += (size_t)got;
        if ((uint64_t)len > limit) {
            imgpu_error("cannot read '%s': file is too large (more than the limit of %llu bytes, "
                        "raise it with --max-file-size or IMGPU_MAX_FILE_SIZE)", path,
                        (unsigned long long)limit);
            goto done;
        }
        if (stream && !sniffed && len >= SNIFF_BYTES) {
            imgpu_format f;
            sniffed = 1;
            if (imgpu__codec_sniff_checked(path, buf, len, &f) < 0)
                goto done;
        }
    }
    if (len == 0) {
        imgpu_error("cannot read '%s': file is empty", path);
        goto done;
    }
    *out = buf;
    *out_len = len;
    buf = NULL;
    rc = 0;
done:
    free(buf);
    close(fd);
    return rc;
}

/* ---- the load limits from the environment (io.h: imgpu_load_options_from_env) ---------- */

static int env_limit(const char *var, uint64_t *field, int (*parse)(const char *, uint64_t *),
                     const char *what)
{
    const char *v = getenv(var);
    if (*field || !v || !*v)
        return 0;
    if (parse(v, field) < 0)
        return imgpu_error("invalid %s '%s' (%s)", var, v, what);
    return 0;
}

static int parse_count(const char *s, uint64_t *out)
{
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9')
            return -1;
    return imgpu_parse_size(s, out);
}

int imgpu_load_options_from_env(imgpu_load_options *o)
{
    if (env_limit("IMGPU_MAX_PIXELS", &o->max_pixels, parse_count,
                  "a positive whole number of pixels") < 0 ||
        env_limit("IMGPU_MAX_FILE_SIZE", &o->max_file_bytes, imgpu_parse_size,
                  "a positive number of bytes, optionally with K, M or G") < 0 ||
        env_limit("IMGPU_MAX_DECODE_TIME", &o->max_decode_ms, imgpu_parse_seconds,
                  "a positive number of seconds") < 0)
        return -1;
    return 0;
}
