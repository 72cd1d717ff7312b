/* test_pages.c — multi-page output (io.h: imgpu_pages_begin / _add / _finish / _abandon, the TIFF
 * writer's pages) and imgpu_image_load_pages, below the CLI's --pages all (issue 30):
 *   - three pages of different sizes, channels and depths, each with its own metadata (the
 *     first and last with the EXIF, ICC and XMP of a photo, the middle none), read back page by
 *     page: the pixels exactly, the page count, each page's metadata as written (the EXIF's
 *     Exif IFD on a later page too: the camera and date read back);
 *   - imgpu_image_load_pages hands over every page, in order, with the count;
 *   - a format that holds one image is refused by begin; a page more than announced, or a
 *     finish short of pages, fails and leaves the target as it was.
 */
#include "error.h"
#include "exif.h"
#include "io.h"
#include "test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static imgpu_image *pattern(int w, int h, int c, int depth, unsigned seed)
{
    imgpu_image *im = imgpu_image_new(w, h, c, depth);
    for (int y = 0; im && y < h; y++)
        for (size_t i = 0; i < (size_t)w * (size_t)c; i++)
            imgpu_sample_put(imgpu_image_row(im, y), depth, i,
                             (unsigned)(y * 131 + (int)i * 7 + (int)seed * 29) *
                                 (depth == 16 ? 97u : 1u) % (depth == 16 ? 65536u : 256u));
    return im;
}

static int same_pixels(const imgpu_image *a, const imgpu_image *b)
{
    if (!a || !b || a->width != b->width || a->height != b->height ||
        a->channels != b->channels || a->depth != b->depth)
        return 0;
    const size_t row = (size_t)a->width * (size_t)a->channels * (size_t)(a->depth / 8);
    for (int y = 0; y < a->height; y++)
        if (memcmp(imgpu_image_row(a, y), imgpu_image_row(b, y), row))
            return 0;
    return 1;
}

static int same_block(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
    return an == bn && (!an || !memcmp(a, b, an));
}

typedef struct walk {
    int seen, count_ok;
    const imgpu_image *want[3];
} walk;

static int on_page(void *ctx, int index, int count, imgpu_image *im, imgpu_meta *meta)
{
    walk *w = ctx;
    CHECKF(index == w->seen && count == 3 && same_pixels(im, w->want[index]),
           "load_pages: page %d of %d", index, count);
    w->seen++;
    imgpu_image_free(im);
    imgpu_meta_free(meta);
    return 0;
}

int main(void)
{
    const char *assets = getenv("IMGPU_ASSETS");
    char photo[4096], dir[] = "/tmp/imgpu_test_pages.XXXXXX", path[4200], png[4200];
    if (!assets || !mkdtemp(dir)) {
        printf("skip: IMGPU_ASSETS unset or no temporary folder\n");
        return 77;
    }
    snprintf(photo, sizeof photo, "%s/../tests/fuzz/seeds/jpeg/meta_all.jpg", assets);
    snprintf(path, sizeof path, "%s/three.tif", dir);
    snprintf(png, sizeof png, "%s/one.png", dir);
    imgpu_set_quiet(1);

    imgpu_load_result r = { 0 };
    imgpu_load_options lo = { 0 };
    lo.no_auto_orient = 1;
    imgpu_image *src = imgpu_image_load_ex(photo, &lo, &r);
    CHECKF(src && r.meta->exif && r.meta->icc && r.meta->xmp, "the photo and its metadata: %s",
           imgpu_error_message());
    if (!src)
        TEST_MAIN_END();
    imgpu_exif_info want_ex;
    CHECK(imgpu_exif_parse(r.meta->exif, r.meta->exif_len, &want_ex) == 0 && want_ex.make[0] &&
          want_ex.datetime_original[0]);

    imgpu_image *pg[3] = { pattern(5, 4, 3, 8, 1), pattern(3, 7, 1, 16, 2),
                           pattern(6, 2, 4, 8, 3) };
    const imgpu_meta *meta[3] = { r.meta, NULL, r.meta };
    imgpu_page_writer *w = imgpu_pages_begin(path, 3, 0, NULL);
    CHECKF(w != NULL, "begin: %s", imgpu_error_message());
    for (int i = 0; w && i < 3; i++)
        CHECKF(imgpu_pages_add(w, pg[i], meta[i]) == 0, "add page %d: %s", i, imgpu_error_message());
    CHECKF(w && imgpu_pages_finish(w) == 0, "finish: %s", imgpu_error_message());

    for (int i = 0; i < 3; i++) {
        imgpu_load_result rb = { 0 };
        imgpu_load_options o = { 0 };
        o.page = i;
        o.no_auto_orient = 1;
        imgpu_image *back = imgpu_image_load_ex(path, &o, &rb);
        CHECKF(back && same_pixels(back, pg[i]), "page %d: the pixels (%s)", i,
               back ? "differ" : imgpu_error_message());
        CHECKF(back && rb.meta->pages == 3 && rb.meta->page == i, "page %d: 3 pages", i);
        if (back && meta[i]) {
            imgpu_exif_info ex;
            CHECKF(rb.meta->exif && imgpu_exif_parse(rb.meta->exif, rb.meta->exif_len, &ex) == 0 &&
                   !strcmp(ex.make, want_ex.make) &&
                   !strcmp(ex.datetime_original, want_ex.datetime_original),
                   "page %d: the EXIF (camera and date from its Exif IFD)", i);
            CHECKF(same_block(rb.meta->icc, rb.meta->icc_len, r.meta->icc, r.meta->icc_len) &&
                   same_block(rb.meta->xmp, rb.meta->xmp_len, r.meta->xmp, r.meta->xmp_len),
                   "page %d: the ICC profile and the XMP packet", i);
        } else if (back) {
            CHECKF(!rb.meta->exif && !rb.meta->icc && !rb.meta->xmp, "page %d: no metadata", i);
        }
        imgpu_meta_free(rb.meta);
        imgpu_image_free(back);
    }

    walk wk = { 0, 0, { pg[0], pg[1], pg[2] } };
    CHECKF(imgpu_image_load_pages(path, &lo, on_page, &wk) == 0 && wk.seen == 3,
           "load_pages: every page (%d seen): %s", wk.seen, imgpu_error_message());

    /* refusals: one-image formats, too many pages, too few */
    imgpu_error_clear();
    CHECK(imgpu_pages_begin(png, 2, 0, NULL) == NULL &&
          strstr(imgpu_error_message(), "PNG holds one image") != NULL);
    FILE *f = fopen(path, "rb");
    long before = -1;
    if (f) {
        fseek(f, 0, SEEK_END);
        before = ftell(f);
        fclose(f);
    }
    w = imgpu_pages_begin(path, 1, 0, NULL);
    CHECK(w && imgpu_pages_add(w, pg[0], NULL) == 0);
    CHECK(w && imgpu_pages_add(w, pg[1], NULL) < 0 &&
          strstr(imgpu_error_message(), "more TIFF pages than announced") != NULL);
    imgpu_pages_abandon(w);
    w = imgpu_pages_begin(path, 2, 0, NULL);
    CHECK(w && imgpu_pages_add(w, pg[0], NULL) == 0);
    CHECK(w && imgpu_pages_finish(w) < 0 && strstr(imgpu_error_message(), "1 TIFF pages of 2"));
    f = fopen(path, "rb");
    long after = -2;
    if (f) {
        fseek(f, 0, SEEK_END);
        after = ftell(f);
        fclose(f);
    }
    CHECKF(before > 0 && before == after, "the three-page file is left as it was (%ld, %ld)",
           before, after);
    imgpu_pages_abandon(NULL);

    for (int i = 0; i < 3; i++)
        imgpu_image_free(pg[i]);
    imgpu_image_free(src);
    imgpu_meta_free(r.meta);
    unlink(path);
    rmdir(dir);
    TEST_MAIN_END();
}
