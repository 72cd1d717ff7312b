/* batch_manifest.h — what made each output of `imgpu batch` (issue 15): OUTDIR/.imgpu-batch.
 *
 * The manifest is a text journal, one line per output written, appended (never rewritten):
 *
 *   # imgpu batch manifest 1 ...                                    (first line)
 *   R <fnv1a-64 of the rest, 16 hex> <TAB> OUT <TAB> OUT_SIZE <TAB> OUT_MTIME_NS <TAB>
 *     IN_SIZE <TAB> IN_MTIME_NS <TAB> SETTINGS
 *
 * OUT is the output's name relative to OUTDIR; OUT and SETTINGS have '%', control characters
 * and DEL escaped as %XX. OUT_SIZE and OUT_MTIME_NS identify the output file the line is
 * about: a line counts for an output only while the file there still has that size and
 * modification time (the last such line wins). The line is appended just before the output's
 * temp file is renamed into place (io.h's before_rename), so a batch killed at any point
 * leaves every output in OUTDIR with its line (a line whose rename never happened describes
 * no file and is ignored). Each line goes out in one write() with O_APPEND, so the encode
 * threads (one lock) and concurrent `--shard` processes on one machine never interleave
 * lines; a torn last line (a kill mid-write, a full disk) fails its checksum and is ignored.
 *
 * SETTINGS is canonical: the op chain with every parameter, then the save options that
 * affect this output's bytes (its format, and JPEG quality or PNG level for those formats):
 *   "equalize mode=luminance formula=opencv | rotate angle=15 filter=bicubic canvas=expand
 *    background=default ; format=png png-level=1"
 * A line whose SETTINGS is "?" records an output found in OUTDIR before the folder had a
 * manifest (made by an older imgpu): its settings are unknown.
 *
 * Hostile manifests (issue 25). Anyone who can write in OUTDIR can write this file, so what it
 * holds bounds nothing: it is read line by line through one buffer of IMGPU_MANIFEST_LINE_MAX
 * bytes, and only the lines about the outputs this run asks about (imgpu_manifest_want: name,
 * size and mtime of the file there) are kept, the latest for each. Memory is that buffer plus
 * a bounded amount per output asked about (SETTINGS at most IMGPU_MANIFEST_SETTINGS_MAX bytes,
 * shared by consecutive lines that repeat it), whatever the file holds: a gigabyte of empty
 * lines, one endless line, or records forged for other names. A line that is not an intact
 * record (longer than the bound, torn, edited, empty) is ignored, and the run says once how
 * many it ignored ("imgpu: OUTDIR/.imgpu-batch: N lines ignored ..."); the outputs only those
 * lines described have no record (stale, not skipped). A manifest that is a symbolic link
 * (O_NOFOLLOW), not a regular file, or has more than one hard link (a link planted to a file
 * elsewhere would take the appends) is refused, when read and when opened for appending (its
 * link count is checked on the descriptor written to, so no race swaps it). Found at the
 * start, the batch stops before any output is written, with "imgpu: 'OUTDIR/.imgpu-batch' has
 * N hard links: refusing to use it ..." (or "is a symbolic link: ..."); planted later, every
 * output whose line cannot be written fails with that message and is not put in place. It is not
 * replaced by a rename instead, as the outputs are: a rewrite per line costs the whole file
 * each time, and concurrent shards would lose each other's lines; appending keeps both
 * guarantees above. A first append after a torn last line writes a '\n' first, so the torn
 * line stays one ignored line and does not swallow the new one.
 */
#ifndef IMGPU_BATCH_MANIFEST_H
#define IMGPU_BATCH_MANIFEST_H

#include "io.h"
#include "op.h"

#include <stddef.h>
#include <sys/stat.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IMGPU_MANIFEST_NAME ".imgpu-batch"
#define IMGPU_MANIFEST_UNKNOWN_SETTINGS "?"

typedef struct imgpu_manifest imgpu_manifest;

/* The longest line read (the longest imgpu writes is about 18 KiB: a 4096-byte name with
 * every byte escaped, and 32 ops), and the longest SETTINGS kept (imgpu writes < 5.5 KiB). */
#define IMGPU_MANIFEST_LINE_MAX (64 * 1024)
#define IMGPU_MANIFEST_SETTINGS_MAX (8 * 1024)
/* The line bound in use: IMGPU_MANIFEST_LINE_MAX. For tests only: fuzz_manifest makes it
 * small, so that short inputs reach the edges of the reader's buffer. */
extern size_t imgpu__manifest_line_max;

/* Opens OUTDIR/.imgpu-batch if there is one (outdir need not exist); imgpu_manifest_read
 * reads it. NULL + error recorded when it exists but cannot be read, is not a regular file,
 * has more than one hard link, or out of memory. */
imgpu_manifest *imgpu_manifest_open(const char *outdir);
/* Whether OUTDIR had a manifest when it was opened. */
int imgpu_manifest_found(const imgpu_manifest *m);
/* Asks about the existing output `rel` (relative to OUTDIR; `out`: its stat now): the read
 * keeps the latest line that describes it. Call for every output to check, before the read.
 * 0, or -1 + error (out of memory). */
int imgpu_manifest_want(imgpu_manifest *m, const char *rel, const struct stat *out);
/* Reads the manifest once, line by line (see above), keeping what imgpu_manifest_check needs
 * for the outputs asked about, and prints one notice when it ignored lines. Call once, after
 * the wants (and with no manifest too). 0, or -1 + error (a read error, out of memory). */
int imgpu_manifest_read(imgpu_manifest *m);
/* fsync and close the journal (if it was written), free everything. 0, or -1 + error when
 * the final sync failed. Accepts NULL. */
int imgpu_manifest_close(imgpu_manifest *m);

/* The canonical settings string of an output at out_path (its extension gives the format),
 * and out_depth (8: --depth 8, recorded as depth=8), malloc'ed; NULL when out of memory. */
char *imgpu_manifest_settings(const imgpu_op *ops, int nops, const imgpu_save_options *save,
                              const char *out_path, int out_depth);

typedef enum imgpu_manifest_state {
    IMGPU_MANIFEST_MATCH = 0,     /* made with these settings from this input: skip it */
    IMGPU_MANIFEST_OTHER_SETTINGS,/* made with other settings (*recorded says which) */
    IMGPU_MANIFEST_INPUT_CHANGED, /* these settings, but the input's size or mtime changed */
    IMGPU_MANIFEST_UNKNOWN,       /* no line describes the file there (changed since, or
                                   * written by another program) */
    IMGPU_MANIFEST_LEGACY,        /* made before OUTDIR had a manifest: settings unknown */
} imgpu_manifest_state;

/* What the manifest says of the existing output `rel` (relative to OUTDIR; `out` its stat)
 * made from the input `in` with `settings`, after imgpu_manifest_read (an output not asked
 * about with this stat is UNKNOWN). *recorded (may be NULL) gets the recorded settings for
 * OTHER_SETTINGS, valid until close. A folder with no manifest at all gives LEGACY.
 * Read-only; safe from one thread. */
imgpu_manifest_state imgpu_manifest_check(const imgpu_manifest *m, const char *rel,
                                          const char *settings, const struct stat *in,
                                          const struct stat *out, const char **recorded);

/* Appends the line for output `rel` (thread-safe). The journal is created on first use (mode
 * 0666 less the umask). 0, or -1 + error recorded ("cannot write 'OUTDIR/.imgpu-batch': ...",
 * or the hard-link refusal above). */
int imgpu_manifest_add(imgpu_manifest *m, const char *rel, const char *settings,
                       long long in_size, long long in_mtime_ns, long long out_size,
                       long long out_mtime_ns);

/* A stat's modification time in ns since the epoch. */
long long imgpu_manifest_mtime_ns(const struct stat *st);

#ifdef __cplusplus
}
#endif
#endif
