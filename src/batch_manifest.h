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

/* Reads OUTDIR/.imgpu-batch if there is one (outdir need not exist). NULL + error recorded
 * when it exists but cannot be read, or out of memory. */
imgpu_manifest *imgpu_manifest_open(const char *outdir);
/* Whether OUTDIR had a manifest when it was opened. */
int imgpu_manifest_found(const imgpu_manifest *m);
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
 * made from the input `in` with `settings`. *recorded (may be NULL) gets the recorded
 * settings for OTHER_SETTINGS, valid until close. A folder with no manifest at all gives
 * LEGACY. Read-only; safe from one thread. */
imgpu_manifest_state imgpu_manifest_check(const imgpu_manifest *m, const char *rel,
                                          const char *settings, const struct stat *in,
                                          const struct stat *out, const char **recorded);

/* Appends the line for output `rel` (thread-safe). The journal is created on first use (mode
 * 0666 less the umask). 0, or -1 + error recorded ("cannot write 'OUTDIR/.imgpu-batch': ..."). */
int imgpu_manifest_add(imgpu_manifest *m, const char *rel, const char *settings,
                       long long in_size, long long in_mtime_ns, long long out_size,
                       long long out_mtime_ns);

/* A stat's modification time in ns since the epoch. */
long long imgpu_manifest_mtime_ns(const struct stat *st);

#ifdef __cplusplus
}
#endif
#endif
