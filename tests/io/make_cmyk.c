/* make_cmyk.c — the inputs of tests/io/cmyk_check.py, made here rather than shipped: a CMYK
 * output profile built with lcms2's API, and CMYK, YCCK and profile-less CMYK JPEGs of a test
 * picture converted to CMYK through it (libjpeg-turbo writes them, with the Adobe marker and
 * Adobe's inverted samples, as Photoshop, ImageMagick and libvips do).
 *
 * The profile ("imgpu test CMYK"): ICC v4, output class, CMYK data, Lab PCS. Its AToB0 is a
 * 9^4 CLUT of a made-up press: each ink's coverage raised to the power 0.8 (dot gain), the
 * three colours through the naive (1 - c)(1 - k) model, black that is not quite black (a
 * density that leaves 4% of the light), read as sRGB and taken to Lab; its BToA0 a 17^3 CLUT
 * of the inverse (grey component replacement: K = min of the three inks' needs); the same
 * tables serve as AToB1 / BToA1 (relative colorimetric). Nothing in
 * it is the formula imgpu applies without a profile, so a load that ignores the profile is
 * far from the reference.
 *
 * usage: make_cmyk DIR [RGB-RAW W H | --small]
 *   writes DIR/cmyk.icc, DIR/srgb.icc (lcms2's built-in sRGB, for ImageMagick's -profile),
 *   DIR/cmyk.jpg (CMYK + profile), DIR/ycck.jpg (YCCK + profile), DIR/cmyk_noicc.jpg (CMYK,
 *   no profile), DIR/plain_cmyk.jpg (CMYK + profile, no Adobe marker).
 *   The picture is the raw RGB file given (W x H, 8-bit), or a made-up one of gradients and
 *   colour patches (96 x 64). --small: a 16 x 12 picture and coarser tables (5^4 and 9^3
 *   points: a profile of about 10 KB), for fuzz seeds (tests/fuzz/seeds/jpeg/lcms_*.jpg).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <lcms2.h>

static cmsHTRANSFORM s_srgb_to_lab, s_lab_to_srgb;
static int s_grid_a2b = 9, s_grid_b2a = 17;

static double dot_gain(double v) { return pow(v, 0.8); }

/* CMYK (0..1 ink) -> sRGB (0..1) of the made-up press */
static void press(const double cmyk[4], double rgb[3])
{
    const double k = 0.96 * dot_gain(cmyk[3]);
    for (int i = 0; i < 3; i++)
        rgb[i] = (1 - dot_gain(cmyk[i])) * (1 - k);
}

static int sample_atob(const cmsUInt16Number in[], cmsUInt16Number out[], void *cargo)
{
    (void)cargo;
    double cmyk[4], rgb[3];
    cmsCIELab lab;
    for (int i = 0; i < 4; i++)
        cmyk[i] = in[i] / 65535.0;
    press(cmyk, rgb);
    cmsDoTransform(s_srgb_to_lab, rgb, &lab, 1);
    cmsFloat2LabEncoded(out, &lab);
    return 1;
}

static int sample_btoa(const cmsUInt16Number in[], cmsUInt16Number out[], void *cargo)
{
    (void)cargo;
    cmsCIELab lab;
    double rgb[3], need[3];
    cmsLabEncoded2Float(&lab, in);
    cmsDoTransform(s_lab_to_srgb, &lab, rgb, 1);
    for (int i = 0; i < 3; i++) {
        double v = rgb[i] < 0 ? 0 : rgb[i] > 1 ? 1 : rgb[i];
        need[i] = 1 - v;
    }
    double kk = need[0] < need[1] ? need[0] : need[1];
    kk = kk < need[2] ? kk : need[2];
    if (kk > 0.96)
        kk = 0.96;
    const double k = pow(kk / 0.96, 1 / 0.8);
    for (int i = 0; i < 3; i++) {
        double c = 1 - (1 - need[i]) / (1 - kk);   /* the colour's own ink after black */
        c = c < 0 ? 0 : c > 1 ? 1 : c;
        out[i] = (cmsUInt16Number)lround(pow(c, 1 / 0.8) * 65535);
    }
    out[3] = (cmsUInt16Number)lround(k * 65535);
    return 1;
}

static int save_profile(cmsHPROFILE h, const char *path)
{
    return cmsSaveProfileToFile(h, path) ? 0 : -1;
}

static cmsHPROFILE make_profile(void)
{
    cmsHPROFILE h = cmsCreateProfilePlaceholder(NULL);
    cmsSetProfileVersion(h, 4.3);
    cmsSetDeviceClass(h, cmsSigOutputClass);
    cmsSetColorSpace(h, cmsSigCmykData);
    cmsSetPCS(h, cmsSigLabData);
    cmsSetHeaderRenderingIntent(h, INTENT_RELATIVE_COLORIMETRIC);

    cmsMLU *desc = cmsMLUalloc(NULL, 1), *cprt = cmsMLUalloc(NULL, 1);
    cmsMLUsetASCII(desc, "en", "US", "imgpu test CMYK");
    cmsMLUsetASCII(cprt, "en", "US", "No copyright, use freely (CC0): made by imgpu's tests");
    cmsWriteTag(h, cmsSigProfileDescriptionTag, desc);
    cmsWriteTag(h, cmsSigCopyrightTag, cprt);
    cmsWriteTag(h, cmsSigMediaWhitePointTag, cmsD50_XYZ());
    cmsMLUfree(desc);
    cmsMLUfree(cprt);

    cmsPipeline *a2b = cmsPipelineAlloc(NULL, 4, 3);
    cmsStage *clut = cmsStageAllocCLut16bit(NULL, (cmsUInt32Number)s_grid_a2b, 4, 3, NULL);
    cmsStageSampleCLut16bit(clut, sample_atob, NULL, 0);
    /* lutAtoBType holds A curves, a CLUT and B curves (identity curves here) */
    cmsPipelineInsertStage(a2b, cmsAT_END, cmsStageAllocToneCurves(NULL, 4, NULL));
    cmsPipelineInsertStage(a2b, cmsAT_END, clut);
    cmsPipelineInsertStage(a2b, cmsAT_END, cmsStageAllocToneCurves(NULL, 3, NULL));
    cmsWriteTag(h, cmsSigAToB0Tag, a2b);
    cmsLinkTag(h, cmsSigAToB1Tag, cmsSigAToB0Tag);   /* the same table, relative colorimetric */
    cmsPipelineFree(a2b);

    cmsPipeline *b2a = cmsPipelineAlloc(NULL, 3, 4);
    clut = cmsStageAllocCLut16bit(NULL, (cmsUInt32Number)s_grid_b2a, 3, 4, NULL);
    cmsStageSampleCLut16bit(clut, sample_btoa, NULL, 0);
    cmsPipelineInsertStage(b2a, cmsAT_END, cmsStageAllocToneCurves(NULL, 3, NULL));
    cmsPipelineInsertStage(b2a, cmsAT_END, clut);
    cmsPipelineInsertStage(b2a, cmsAT_END, cmsStageAllocToneCurves(NULL, 4, NULL));
    cmsWriteTag(h, cmsSigBToA0Tag, b2a);
    cmsLinkTag(h, cmsSigBToA1Tag, cmsSigBToA0Tag);
    cmsPipelineFree(b2a);
    return h;
}

/* CMYK samples (ink, 0 = none) into a JPEG: cs JCS_CMYK or JCS_YCCK, stored as 255 - ink
 * (Adobe's convention, which libvips, PIL and ImageMagick assume of every CMYK JPEG); adobe 0
 * leaves out the Adobe marker that libjpeg otherwise writes. */
static int write_jpeg(const char *path, const unsigned char *cmyk, int w, int h,
                      J_COLOR_SPACE cs, int adobe, const unsigned char *icc, size_t icc_len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    struct jpeg_compress_struct ci;
    struct jpeg_error_mgr err;
    ci.err = jpeg_std_error(&err);
    jpeg_create_compress(&ci);
    jpeg_stdio_dest(&ci, f);
    ci.image_width = (JDIMENSION)w;
    ci.image_height = (JDIMENSION)h;
    ci.input_components = 4;
    ci.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&ci);
    jpeg_set_colorspace(&ci, cs);
    ci.write_Adobe_marker = adobe ? TRUE : FALSE;
    jpeg_set_quality(&ci, 95, TRUE);
    jpeg_start_compress(&ci, TRUE);
    if (icc)
        jpeg_write_icc_profile(&ci, icc, (unsigned)icc_len);
    unsigned char *row = malloc((size_t)w * 4);
    while (ci.next_scanline < ci.image_height) {
        const unsigned char *src = cmyk + (size_t)ci.next_scanline * w * 4;
        for (int i = 0; i < w * 4; i++)
            row[i] = (unsigned char)(255 - src[i]);
        JSAMPROW r = row;
        jpeg_write_scanlines(&ci, &r, 1);
    }
    jpeg_finish_compress(&ci);
    jpeg_destroy_compress(&ci);
    free(row);
    return fclose(f) == 0 ? 0 : -1;
}

static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = len > 0 ? malloc((size_t)len) : NULL;
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return b;
}

int main(int argc, char **argv)
{
    const int small = argc == 3 && !strcmp(argv[2], "--small");
    if (argc != 2 && argc != 5 && !small) {
        fprintf(stderr, "usage: %s DIR [RGB-RAW W H | --small]\n", argv[0]);
        return 2;
    }
    if (small) {
        s_grid_a2b = 5;
        s_grid_b2a = 9;
    }
    char path[4096];
    const char *dir = argv[1];
    cmsHPROFILE srgb = cmsCreate_sRGBProfile(), lab = cmsCreateLab4Profile(NULL);
    s_srgb_to_lab = cmsCreateTransform(srgb, TYPE_RGB_DBL, lab, TYPE_Lab_DBL,
                                       INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOCACHE);
    s_lab_to_srgb = cmsCreateTransform(lab, TYPE_Lab_DBL, srgb, TYPE_RGB_DBL,
                                       INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOCACHE);
    cmsHPROFILE cmyk = make_profile();
    snprintf(path, sizeof path, "%s/cmyk.icc", dir);
    if (save_profile(cmyk, path) < 0)
        return 1;
    snprintf(path, sizeof path, "%s/srgb.icc", dir);
    if (save_profile(srgb, path) < 0)
        return 1;
    /* the profile as written, reopened: what a reader of the JPEG gets */
    size_t icc_len;
    snprintf(path, sizeof path, "%s/cmyk.icc", dir);
    unsigned char *icc = read_file(path, &icc_len);
    if (!icc)
        return 1;

    int w = small ? 16 : 96, h = small ? 12 : 64;
    unsigned char *rgb;
    if (argc == 5) {
        size_t n;
        w = atoi(argv[3]);
        h = atoi(argv[4]);
        rgb = read_file(argv[2], &n);
        if (!rgb || w < 1 || h < 1 || n != (size_t)w * h * 3)
            return 1;
    } else {
        rgb = malloc((size_t)w * h * 3);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                unsigned char *p = rgb + ((size_t)y * w + x) * 3;
                if (y < h / 2) {   /* gradients: hue across, lightness down */
                    const double hx = 6.0 * x / w, v = 1.0 - (double)y / h;
                    const int sector = (int)hx;
                    const double f = hx - sector;
                    const double c[6][3] = { {1, f, 0}, {1 - f, 1, 0}, {0, 1, f},
                                             {0, 1 - f, 1}, {f, 0, 1}, {1, 0, 1 - f} };
                    for (int i = 0; i < 3; i++)
                        p[i] = (unsigned char)lround(255 * v * (0.15 + 0.85 * c[sector % 6][i]));
                } else {           /* patches: 8 x 2 of colours and greys */
                    const int k = (x * 8 / w) + 8 * ((y - h / 2) * 2 / (h - h / 2));
                    static const unsigned char pal[16][3] = {
                        {255, 255, 255}, {0, 0, 0}, {128, 128, 128}, {200, 60, 40},
                        {40, 160, 70}, {30, 70, 190}, {240, 210, 60}, {150, 80, 160},
                        {230, 230, 230}, {40, 40, 40}, {90, 130, 160}, {250, 150, 120},
                        {120, 90, 60}, {60, 200, 200}, {210, 40, 120}, {170, 190, 90} };
                    memcpy(p, pal[k], 3);
                }
            }
    }
    cmsHTRANSFORM to_cmyk = cmsCreateTransform(srgb, TYPE_RGB_8, cmyk, TYPE_CMYK_8,
                                               INTENT_RELATIVE_COLORIMETRIC, 0);
    unsigned char *px = malloc((size_t)w * h * 4);
    if (!to_cmyk || !px)
        return 1;
    cmsDoTransform(to_cmyk, rgb, px, (cmsUInt32Number)(w * h));

    struct { const char *name; J_COLOR_SPACE cs; int adobe, icc; } out[] = {
        { "cmyk.jpg", JCS_CMYK, 1, 1 },
        { "ycck.jpg", JCS_YCCK, 1, 1 },
        { "cmyk_noicc.jpg", JCS_CMYK, 1, 0 },
        { "plain_cmyk.jpg", JCS_CMYK, 0, 1 },
    };
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, out[i].name);
        if (write_jpeg(path, px, w, h, out[i].cs, out[i].adobe, out[i].icc ? icc : NULL,
                       icc_len) < 0)
            return 1;
    }
    cmsDeleteTransform(to_cmyk);
    cmsDeleteTransform(s_srgb_to_lab);
    cmsDeleteTransform(s_lab_to_srgb);
    cmsCloseProfile(cmyk);
    cmsCloseProfile(srgb);
    cmsCloseProfile(lab);
    free(icc);
    free(rgb);
    free(px);
    return 0;
}
