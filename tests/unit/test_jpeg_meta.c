/* test_jpeg_meta.c — the ICC profile in a JPEG written elsewhere (nvJPEG's output, through
 * the JPEG codec entry's insert_meta, codec.h), on a CPU machine: a JPEG from imgpu's own encoder stands
 * in for nvJPEG's. The profile is split into APP2 segments of at most 65519 bytes numbered
 * 1..N of N; the largest JPEG can carry (255 x 65519 bytes) goes into exactly 255 and loads back
 * whole through the JPEG reader; one byte more is left out with the notice the libjpeg path
 * gives (issue 25: it vanished silently), and the EXIF and XMP still go in. stderr is caught in
 * a temporary file to read the notice. */
#include "codec.h"
#include "error.h"
#include "io.h"
#include "meta.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The APP2 ICC segments of jpg (before its first scan): how many, and whether each is
 * numbered 1..N of N with at most 65519 bytes; *total: their data together. */
static int icc_segments(const unsigned char *jpg, size_t n, int *numbered, size_t *total)
{
    int count = 0;
    *numbered = 1;
    *total = 0;
    for (size_t i = 2; i + 4 <= n && jpg[i] == 0xFF && jpg[i + 1] != 0xDA;) {
        const size_t len = (size_t)jpg[i + 2] << 8 | jpg[i + 3];
        if (jpg[i + 1] == 0xE2 && len >= 16 && !memcmp(jpg + i + 4, "ICC_PROFILE", 12)) {
            count++;
            if (jpg[i + 16] != count || len - 16 > 65519)
                *numbered = 0;
            *total += len - 16;
        }
        i += 2 + len;
    }
    return count;
}

/* stderr into a temporary file while f runs: what it printed, into out */
static void caught(void (*f)(void *), void *ctx, char *out, size_t cap)
{
    fflush(stderr);
    FILE *tmp = tmpfile();
    const int saved = dup(2);
    if (!tmp || saved < 0 || dup2(fileno(tmp), 2) < 0)
        abort();
    f(ctx);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    const size_t k = fread(out, 1, cap - 1, tmp);
    out[k] = '\0';
    fclose(tmp);
}

typedef struct job {
    const unsigned char *jpg;
    size_t n;
    const imgpu_meta *m;
    unsigned char *out;
    size_t out_len;
    int rc;
} job;

static void insert(void *ctx)
{
    job *j = ctx;
    char why[160];
    j->rc = imgpu__codec_of(IMGPU_FORMAT_JPEG)->insert_meta(j->jpg, j->n, j->m, "out.jpg", &j->out, &j->out_len, why,
                                    sizeof why);
}

int main(void)
{
    imgpu_image *im = imgpu_image_new(16, 8, 3, 8);
    unsigned char *jpg = NULL;
    size_t jn = 0;
    CHECK(im && imgpu_image_encode(im, IMGPU_FORMAT_JPEG, NULL, &jpg, &jn) == 0);
    if (!jpg)
        TEST_MAIN_END();

    const size_t max = (size_t)255 * 65519;
    unsigned char *icc = malloc(max + 1);
    if (!icc)
        abort();
    for (size_t i = 0; i < max + 1; i++)
        icc[i] = (unsigned char)(i * 2654435761u >> 24);
    static const unsigned char exif[] = { 'I', 'I', '*', 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
    static const unsigned char xmp[] = "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"/>";
    imgpu_meta m;
    memset(&m, 0, sizeof m);
    m.icc = icc;
    m.exif = (unsigned char *)exif;
    m.exif_len = sizeof exif;
    m.xmp = (unsigned char *)xmp;
    m.xmp_len = sizeof xmp - 1;

    static const size_t sizes[] = { 128, 65519, 65520, (size_t)255 * 65519 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        m.icc_len = sizes[s];
        job j = { jpg, jn, &m, NULL, 0, -1 };
        char err[512];
        caught(insert, &j, err, sizeof err);
        CHECKF(j.rc == 0 && !err[0], "%zu bytes: rc %d, '%s'", sizes[s], j.rc, err);
        int numbered;
        size_t total;
        const int k = icc_segments(j.out, j.out_len, &numbered, &total);
        const int want = (int)((sizes[s] + 65518) / 65519);
        CHECKF(k == want && numbered && total == sizes[s], "%zu bytes: %d segments (want %d)",
               sizes[s], k, want);
        /* every segment says N: the byte after the sequence number */
        int other = 0;
        for (size_t i = 2; i + 4 <= j.out_len && j.out[i] == 0xFF && j.out[i + 1] != 0xDA;) {
            const size_t len = (size_t)j.out[i + 2] << 8 | j.out[i + 3];
            if (j.out[i + 1] == 0xE2 && j.out[i + 17] != want)
                other++;
            i += 2 + len;
        }
        CHECKF(other == 0, "%zu bytes: %d segments with another count", sizes[s], other);
        /* the JPEG reader puts it back together */
        imgpu_meta *back = NULL;
        imgpu_image *got = j.out ? imgpu_image_load_memory_meta(j.out, j.out_len, "out.jpg", NULL,
                                                                &back) : NULL;
        CHECKF(got && back && back->icc_len == sizes[s] && !memcmp(back->icc, icc, sizes[s]) &&
               back->xmp_len == m.xmp_len, "%zu bytes: read back", sizes[s]);
        imgpu_image_free(got);
        imgpu_meta_free(back);
        free(j.out);
    }

    /* one byte more: left out, with the notice; EXIF and XMP still go in */
    m.icc_len = max + 1;
    job j = { jpg, jn, &m, NULL, 0, -1 };
    char err[512];
    caught(insert, &j, err, sizeof err);
    int numbered;
    size_t total;
    CHECK(j.rc == 0 && icc_segments(j.out, j.out_len, &numbered, &total) == 0);
    CHECKF(strstr(err, "'out.jpg': the ICC profile (16707346 bytes) does not fit 255 JPEG APP2 "
                       "segments (16707345 bytes at most): left out") != NULL, "notice: '%s'", err);
    imgpu_meta *back = NULL;
    imgpu_image *got =
        j.out ? imgpu_image_load_memory_meta(j.out, j.out_len, "out.jpg", NULL, &back) : NULL;
    CHECK(got && back && !back->icc && back->exif_len == sizeof exif && back->xmp_len == m.xmp_len);
    imgpu_image_free(got);
    imgpu_meta_free(back);
    free(j.out);

    free(icc);
    free(jpg);
    imgpu_image_free(im);
    TEST_MAIN_END();
}
