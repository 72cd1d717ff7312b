/* io_write.c — the checked, atomic write behind every save: the encoded bytes go to a temp
 * file beside the target, every write, flush, fsync and close is checked, and the temp file
 * is renamed over the target (keeping a replaced file's permission bits, 0666 & ~umask for a
 * new one), so a failure never leaves a partial file or harms an existing one. A symbolic
 * link is followed or replaced itself (no_follow); a device or FIFO target is written in
 * place. Messages are "cannot write 'PATH': REASON".
 */
#include "codec.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

static pthread_once_t s_umask_once = PTHREAD_ONCE_INIT;
static mode_t s_umask;

/* umask can only be read by setting it, which would briefly change it for every thread;
 * Linux also shows it in /proc/self/status, so use that, and the set-and-restore only
 * where /proc is missing (once, on the first save). */
static void read_umask(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    if (fp) {
        char line[256];
        while (fgets(line, sizeof line, fp)) {
            unsigned int m;
            if (sscanf(line, "Umask: %o", &m) == 1) {
                s_umask = (mode_t)(m & 0777);
                fclose(fp);
                return;
            }
        }
        fclose(fp);
    }
    s_umask = umask(022);
    umask(s_umask);
}

/* Write all of buf to fp and close it; 0 or errno. Every step is checked: fwrite can succeed
 * into the stdio buffer and the error (ENOSPC, EFBIG, EIO) surface only at fflush, fsync or
 * even close. */
static int write_close(FILE *fp, const unsigned char *buf, size_t len, int sync)
{
    int err = 0;
    if (len && fwrite(buf, 1, len, fp) != len)
        err = errno ? errno : EIO;
    if (!err && fflush(fp) != 0)
        err = errno ? errno : EIO;
    if (!err && sync && fsync(fileno(fp)) != 0)
        err = errno;
    if (fclose(fp) != 0 && !err)
        err = errno ? errno : EIO;
    return err;
}

/* The staging request of this thread's next imgpu__write_atomic (codec.h). */
static _Thread_local const char *t_stage_tag;
static _Thread_local char **t_staged;

void imgpu__write_stage_next(const char *tag, char **staged)
{
    t_stage_tag = tag;
    t_staged = staged;
}

int imgpu__write_atomic(const char *path, const unsigned char *buf, size_t len, int no_follow,
                        int (*before_rename)(void *ctx, long long size, long long mtime_ns),
                        void *ctx)
{
    /* staged: the temp file is the result, handed to the caller instead of renamed */
    const char *stag = t_stage_tag;
    char **staged = t_staged;
    t_stage_tag = NULL;
    t_staged = NULL;
    char *resolved = NULL, *tmp = NULL;
    int fd = -1, rc = -1, created = 0;
    struct stat st;
    const char *target = path;
    int exists = 0;

    /* Through a symlink the user named, replace the file it names, not the link. With
     * no_follow the link is an entry like any other: rename() below replaces the link itself
     * (rename never follows its last component), and lstat keeps what the link points to
     * out of every check, so nothing outside the link's folder is read, written or chmod'ed. */
    if (!no_follow && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        resolved = realpath(path, NULL);
        if (resolved)
            target = resolved;
    }
    if ((no_follow ? lstat(target, &st) : stat(target, &st)) == 0 && !S_ISLNK(st.st_mode)) {
        exists = 1;
        if (S_ISDIR(st.st_mode)) {
            imgpu_error("cannot write '%s': is a directory", path);
            goto done;
        }
        if (!S_ISREG(st.st_mode) && stag) {   /* staged outputs are renamed into place later */
            imgpu_error("cannot write '%s': not a regular file", path);
            goto done;
        }
        if (!S_ISREG(st.st_mode)) {
            /* A device or FIFO (/dev/stdout, /dev/full) cannot be replaced by rename, and
             * must not be: write into it directly. Opened without blocking, or a FIFO that
             * nobody reads would hang open() forever; with a reader there, the writes may
             * block (the reader sets the pace). */
            int wfd = open(target, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
            if (wfd < 0) {
                if (errno == ENXIO && S_ISFIFO(st.st_mode))
                    imgpu_error("cannot write '%s': no process is reading the FIFO", path);
                else
                    imgpu_error("cannot write '%s': %s", path, strerror(errno));
                goto done;
            }
            int fl = fcntl(wfd, F_GETFL);
            FILE *fp = fl < 0 || fcntl(wfd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? NULL
                                                                           : fdopen(wfd, "wb");
            if (!fp) {
                imgpu_error("cannot write '%s': %s", path, strerror(errno));
                close(wfd);
                goto done;
            }
            int err = write_close(fp, buf, len, 0);
            if (err) {
                imgpu_error("cannot write '%s': %s", path, strerror(err));
                goto done;
            }
            rc = 0;
            goto done;
        }
        /* rename() would replace a write-protected file too; respect the protection. */
        if (access(target, W_OK) != 0) {
            imgpu_error("cannot write '%s': %s", path, strerror(errno));
            goto done;
        }
    }

    /* "DIR/.NAME.XXXXXX" beside the target, so rename() stays within one file system
     * ("DIR/.NAME.TAG.XXXXXX" when staged: the tag names the run that leaves it). */
    const char *slash = strrchr(target, '/');
    size_t dirlen = slash ? (size_t)(slash - target) + 1 : 0;
    const char *base = slash ? slash + 1 : target;
    size_t baselen = strlen(base);
    if (baselen > 200)   /* NAME_MAX is 255; leave room for the dot and the suffix */
        baselen = 200;
    const size_t taglen = stag ? strlen(stag) + 1 : 0;
    tmp = malloc(dirlen + baselen + taglen + 16);
    if (!tmp) {
        imgpu_error("cannot write '%s': out of memory", path);
        goto done;
    }
    memcpy(tmp, target, dirlen);
    tmp[dirlen] = '.';
    memcpy(tmp + dirlen + 1, base, baselen);
    char *suffix = tmp + dirlen + 1 + baselen;
    if (stag) {
        *suffix++ = '.';
        memcpy(suffix, stag, taglen - 1);
        suffix += taglen - 1;
    }
    strcpy(suffix, ".XXXXXX");
    fd = mkstemp(tmp);
    if (fd < 0) {
        imgpu_error("cannot write '%s': %s", path, strerror(errno));
        goto done;
    }
    created = 1;
    pthread_once(&s_umask_once, read_umask);
    /* mkstemp makes the file 0600; give it what a plain create would, or keep the mode of
     * the file being replaced. */
    mode_t mode = exists ? (st.st_mode & 0777) : (0666 & ~s_umask);
    if (fchmod(fd, mode) != 0) {
        imgpu_error("cannot write '%s': %s", path, strerror(errno));
        goto done;
    }
    FILE *fp = fdopen(fd, "wb");
    if (!fp) {
        imgpu_error("cannot write '%s': %s", path, strerror(errno));
        goto done;
    }
    fd = -1;   /* fclose in write_close owns it now */
    int err = write_close(fp, buf, len, 1);
    if (err) {
        imgpu_error("cannot write '%s': %s", path, strerror(err));
        goto done;
    }
    if (before_rename) {
        struct stat tst;
        if (lstat(tmp, &tst) != 0) {
            imgpu_error("cannot write '%s': %s", path, strerror(errno));
            goto done;
        }
        if (before_rename(ctx, (long long)tst.st_size,
                          (long long)tst.st_mtim.tv_sec * 1000000000LL + tst.st_mtim.tv_nsec) != 0)
            goto done;
    }
    if (stag) {   /* written whole and synced: the caller puts it in place */
        *staged = tmp;
        tmp = NULL;
        created = 0;
        rc = 0;
        goto done;
    }
    if (rename(tmp, target) != 0) {
        imgpu_error("cannot write '%s': %s", path, strerror(errno));
        goto done;
    }
    created = 0;
    /* Make the rename itself durable. Best effort: the new file is in place by now, so
     * failing the save here would report an error for a write that happened. */
    tmp[dirlen] = '\0';
    int dfd = open(dirlen ? tmp : ".", O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    rc = 0;
done:
    if (fd >= 0)
        close(fd);
    if (created)
        unlink(tmp);
    free(tmp);
    free(resolved);
    return rc;
}

int imgpu__write_stdout(const unsigned char *buf, size_t len)
{
    /* Called only with the whole encoded file in hand, so a failed encode writes nothing.
     * SIGPIPE would kill us silently on a closed reader: ignore it, and say EPIPE instead. */
    signal(SIGPIPE, SIG_IGN);
    if (isatty(1))
        return imgpu_error("cannot write '-': standard output is a terminal (redirect it to a "
                           "file or a pipe)");
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(1, buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd p = { .fd = 1, .events = POLLOUT };
            poll(&p, 1, -1);
            continue;
        }
        if (n <= 0)
            return imgpu_error("cannot write '-': %s", n < 0 ? strerror(errno) : "short write");
        done += (size_t)n;
    }
    return 0;
}
