/* display.c — the viewer's GL side: display textures, drawing, read-back, the upload path.
 *
 * Two ways to get a processed frame into the RGBA8 display texture:
 *  - interop (NVIDIA GL with a usable GPU): the source stays on the device in a CUDA session;
 *    each frame runs the ops there and a kernel writes the result through a surface object
 *    into the GL texture, which was registered with CUDA once: map, launch, unmap, draw.
 *    Nothing crosses to the host. The CUDA side of this (the session, registering, mapping,
 *    the display kernels) is src/cuda/interop.c, reached through src/cuda/interop.h only.
 *  - upload (no GPU, or a GL that CUDA cannot share with, such as Mesa): the ops run on the
 *    available backend (a CUDA session with a download, or the CPU reference), the result is
 *    expanded to RGBA on the host and sent with glTexSubImage2D. One notice line says so.
 * The display texture is double-buffered: a frame is written into the back texture while GL
 * may still be drawing the front one, then they swap. Textures only grow (a rotation by mouse
 * changes the result size every frame; re-registering with CUDA each time would cost ms), so
 * a texture holds the result in its top-left res_w x res_h texels.
 * 16-bit images take the upload path whatever the GPU (the interop kernel writes RGBA8): the
 * ops run through the pipeline API (on the CUDA backend where a session is open, else the CPU),
 * the result goes into RGBA16 textures, and the shader maps a window of 16-bit levels (auto:
 * the shown image's min..max) onto black..white. The 1:1 read-back reads RGBA16, so a 16-bit
 * snapshot or save is the CLI's 16-bit output exactly; the window applies to the view only.
 * The histogram overlay's data (256 x 4 RGBA32F, see kernels/viewer.cu) is made by a kernel
 * into a registered texture too, or on the host on the upload path; the fragment shader draws
 * the bars and CDF curves from it. Its labels (BEFORE, AFTER, the colour legend) are small
 * RGBA textures made once from the bitmap font and drawn over it by GL, the same on both paths.
 * A 16-bit panel spans its image's data range (the auto window: min..max of the color
 * samples), not 0..65535, where a scan's 3160..10760 would be a spike at the left; its label
 * says which ("BEFORE 3160..10760"), remade when the range changes.
 * Unregister before deleting a GL object (cuda-samples rule).
 */
#include "viewer.h"
#include "error.h"

#include <GL/glew.h>

#include "backend/cuda/interop.h"
#include "session.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { HIST_W = 256, HIST_H = 4, CAP_ROUND = 64 };
/* the histogram overlay's labels, each at scale 1 (small overlays) and 2 */
enum { LAB_BEFORE = 0, LAB_AFTER, LAB_LEGEND_RGB, LAB_LEGEND_GRAY, LAB_KINDS, LAB_PAD = 2 };

typedef struct label { GLuint tex; int w, h; } label; /* an RGBA text texture */

struct vw_display {
    vw_path path;
    GLuint prog_img, prog_ovl, vao, fbo;
    GLuint tex[2];          /* display textures, cap_w x cap_h */
    int cap_w, cap_h, front;
    GLuint tex_orig;        /* the source, orig_cap_w x orig_cap_h */
    int orig_cap_w, orig_cap_h;
    GLuint tex_hist, tex_help, tex_note;
    int help_w, help_h, note_w, note_h;
    label lab[LAB_KINDS][2];
    label rlab[2][2];       /* 16-bit: "BEFORE LO..HI", "AFTER LO..HI" */
    unsigned rlab_lo[2], rlab_hi[2];
    int src_w, src_h, src_c;
    int res_w, res_h, res_c;
    int depth;              /* the source's (and so the result's) depth: 8 or 16 */
    int tex_depth, orig_depth; /* what the display and source textures were made for */
    unsigned src_lo, src_hi, res_lo, res_hi; /* 16-bit: min and max color samples (auto window) */
    int have_result, hist_valid;
    imgpu_image *h_src;     /* upload path: the source on the host */
    unsigned char *rgba;    /* upload path: RGBA staging */
    size_t rgba_bytes;
    float h_before[3][256]; /* upload path: normalised "before" counts and CDF */
    float h_before_cdf[3][256];
    imgpu_interop *cu;      /* the session, its histograms and events (src/cuda/interop.c) */
    imgpu_interop_tex *res[2], *res_orig, *res_hist; /* tex[], tex_orig, tex_hist registered */
};

/* ---- shaders -------------------------------------------------------------------------------- */

static const char *s_vs =
    "#version 330 core\n"
    "void main() {\n"
    "  vec2 p = vec2((gl_VertexID << 1) & 2, gl_VertexID & 2);\n" /* one triangle covering the target */
    "  gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);\n"
    "}\n";

/* Image: u_raw = 1 copies texel (x, y) to fragment (x, y) (the exact read-back); otherwise the
 * view, in framebuffer pixels with the origin top-left. Texture coordinates are clamped to the
 * result's texel centres so linear filtering never reads the unused part of a grown texture. */
static const char *s_fs_img =
    "#version 330 core\n"
    "uniform sampler2D u_proc, u_orig;\n"
    "uniform int u_raw, u_show;\n"
    "uniform vec2 u_fb, u_o_proc, u_o_orig, u_size_proc, u_size_orig, u_cap_proc, u_cap_orig;\n"
    "uniform float u_zoom, u_split;\n"
    "uniform int u_wl;\n"                            /* 1: 16-bit, map the window to black..white */
    "uniform vec2 u_wl_proc, u_wl_orig;\n"           /* windows (lo, hi) as texel values 0..1 */
    "out vec4 o;\n"
    "vec4 fetch(sampler2D t, vec2 org, vec2 size, vec2 cap, vec2 p, out bool inside) {\n"
    "  vec2 uv = (p - org) / u_zoom;\n"
    "  inside = all(greaterThanEqual(uv, vec2(0.0))) && all(lessThan(uv, size));\n"
    "  return texture(t, clamp(uv, vec2(0.5), size - 0.5) / cap);\n"
    "}\n"
    "void main() {\n"
    "  if (u_raw == 1) { o = texelFetch(u_proc, ivec2(gl_FragCoord.xy), 0); return; }\n"
    "  vec2 p = vec2(gl_FragCoord.x, u_fb.y - gl_FragCoord.y);\n"
    "  bool orig = u_show == 1 || (u_show == 2 && p.x < u_split);\n"
    "  bool inside;\n"
    "  vec4 c = orig ? fetch(u_orig, u_o_orig, u_size_orig, u_cap_orig, p, inside)\n"
    "                : fetch(u_proc, u_o_proc, u_size_proc, u_cap_proc, p, inside);\n"
    "  if (u_wl == 1) {\n"
    "    vec2 w = orig ? u_wl_orig : u_wl_proc;\n"
    "    c.rgb = clamp((c.rgb - w.x) / (w.y - w.x), 0.0, 1.0);\n"
    /* rounded to a whole 8-bit level here, so the framebuffer's float-to-8-bit conversion
     * (whose rounding differs between GL drivers: NVIDIA's put 3% of samples 1 level off
     * numpy's round() where Mesa's matched) only ever sees exact k/255 values */
    "    c.rgb = floor(c.rgb * 255.0 + 0.5) / 255.0;\n"
    "  }\n"
    "  if (!inside) o = vec4(0.13, 0.13, 0.14, 1.0);\n"
    "  else {\n"
    "    float k = mod(floor(p.x / 8.0) + floor(p.y / 8.0), 2.0);\n" /* checkerboard under alpha */
    "    vec3 chk = mix(vec3(0.62), vec3(0.82), k);\n"
    "    o = vec4(mix(chk, c.rgb, c.a), 1.0);\n"
    "  }\n"
    "  if (u_show == 2 && abs(p.x - u_split) < 1.0) o = vec4(1.0, 0.85, 0.2, 1.0);\n"
    "}\n";

/* Overlays in a rectangle (x, y, w, h; framebuffer pixels, top-left origin):
 * u_kind 0: the histogram (before on top, after below; bars per channel, CDF curves);
 * u_kind 1: an RGBA texture 1:1 (the help text). */
static const char *s_fs_ovl =
    "#version 330 core\n"
    "uniform sampler2D u_tex;\n"
    "uniform int u_kind, u_colors;\n"
    "uniform vec2 u_fb;\n"
    "uniform vec4 u_rect;\n"
    "out vec4 o;\n"
    "void main() {\n"
    "  vec2 p = vec2(gl_FragCoord.x, u_fb.y - gl_FragCoord.y) - u_rect.xy;\n"
    "  if (any(lessThan(p, vec2(0.0))) || any(greaterThanEqual(p, u_rect.zw))) discard;\n"
    "  if (u_kind == 1) { o = texelFetch(u_tex, ivec2(p), 0); return; }\n"
    "  float ph = u_rect.w * 0.5;\n"                 /* panel height */
    "  int panel = p.y < ph ? 0 : 1;\n"
    "  float y = p.y - float(panel) * ph;\n"
    "  float m = 6.0, h = (ph - m - y) / (ph - 2.0 * m);\n" /* 0 at the panel's base, 1 at the top */
    "  int bin = clamp(int(p.x / u_rect.z * 256.0), 0, 255);\n"
    "  vec4 cnt = texelFetch(u_tex, ivec2(bin, panel * 2), 0);\n"
    "  vec4 cdf = texelFetch(u_tex, ivec2(bin, panel * 2 + 1), 0);\n"
    "  vec3 col = vec3(0.0);\n"
    "  float a = 0.72;\n"
    "  float t = 1.2 / (ph - 2.0 * m);\n"
    "  if (h >= 0.0 && h <= 1.0) {\n"
    "    if (u_colors == 1) {\n"
    "      if (h < cnt.x) col = vec3(0.75);\n"
    "      if (abs(h - cdf.x) < t) { col = vec3(1.0, 0.9, 0.2); a = 1.0; }\n"
    "    } else {\n"
    "      col = vec3(h < cnt.x ? 0.85 : 0.0, h < cnt.y ? 0.85 : 0.0, h < cnt.z ? 0.9 : 0.0);\n"
    "      if (abs(h - cdf.x) < t) { col = vec3(1.0, 0.35, 0.35); a = 1.0; }\n"
    "      if (abs(h - cdf.y) < t) { col = vec3(0.35, 1.0, 0.35); a = 1.0; }\n"
    "      if (abs(h - cdf.z) < t) { col = vec3(0.45, 0.55, 1.0); a = 1.0; }\n"
    "    }\n"
    "  }\n"
    "  if (abs(p.y - ph) < 1.0) { col = vec3(0.6); a = 1.0; }\n" /* between before and after */
    "  o = vec4(col, a);\n"
    "}\n";

static GLuint compile(GLenum type, const char *src)
{
    GLuint s = glCreateShader(type);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetShaderInfoLog(s, sizeof log, NULL, log);
        imgpu_error("viewer shader does not compile: %s", log);
        glDeleteShader(s);
        return 0;
    }
    return s;
}

static GLuint program(const char *fs_src)
{
    GLuint vs = compile(GL_VERTEX_SHADER, s_vs), fs = vs ? compile(GL_FRAGMENT_SHADER, fs_src) : 0;
    if (!fs) {
        glDeleteShader(vs);
        return 0;
    }
    GLuint p = glCreateProgram();
    glAttachShader(p, vs);
    glAttachShader(p, fs);
    glLinkProgram(p);
    glDeleteShader(vs);
    glDeleteShader(fs);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetProgramInfoLog(p, sizeof log, NULL, log);
        imgpu_error("viewer shaders do not link: %s", log);
        glDeleteProgram(p);
        return 0;
    }
    return p;
}

static GLuint new_texture(GLenum internal, int w, int h, GLenum format, GLenum type)
{
    GLuint t = 0;
    glGenTextures(1, &t);
    glBindTexture(GL_TEXTURE_2D, t);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexImage2D(GL_TEXTURE_2D, 0, (GLint)internal, w, h, 0, format, type, NULL);
    return t;
}

static int gl_check(const char *what)
{
    GLenum e = glGetError();
    if (e == GL_NO_ERROR)
        return 0;
    if (e == GL_OUT_OF_MEMORY)
        return imgpu_error("OpenGL is out of memory (%s)", what);
    return imgpu_error("OpenGL error 0x%x in %s", (unsigned)e, what);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- textures ------------------------------------------------------------------------------- */

/* Does this GL share textures with CUDA? Registers a small texture once to find out. */
static int interop_probe(char *why, size_t n)
{
    GLuint t = new_texture(GL_RGBA8, 16, 16, GL_RGBA, GL_UNSIGNED_BYTE);
    int rc = imgpu_interop_probe(t, why, n);
    glDeleteTextures(1, &t);
    return rc;
}

/* Grow the double-buffered display textures to hold w x h (rounded up, so a rotation by mouse
 * regrows rarely). */
static int ensure_capacity(vw_display *d, int w, int h)
{
    GLint max = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max);
    if (w > max || h > max)
        return imgpu_error("a %dx%d frame exceeds this OpenGL's largest texture (%d)", w, h, (int)max);
    if (d->tex_depth != d->depth) /* another depth: new textures of the other format */
        d->cap_w = d->cap_h = 0;
    if (w <= d->cap_w && h <= d->cap_h)
        return 0;
    int cw = w > d->cap_w ? w : d->cap_w, ch = h > d->cap_h ? h : d->cap_h;
    cw = (cw + CAP_ROUND - 1) / CAP_ROUND * CAP_ROUND;
    ch = (ch + CAP_ROUND - 1) / CAP_ROUND * CAP_ROUND;
    if (cw > max) cw = max;
    if (ch > max) ch = max;
    for (int i = 0; i < 2; i++) {
        imgpu_interop_unregister(&d->res[i]);
        if (d->tex[i])
            glDeleteTextures(1, &d->tex[i]);
        d->tex[i] = d->depth == 16 ? new_texture(GL_RGBA16, cw, ch, GL_RGBA, GL_UNSIGNED_SHORT)
                                   : new_texture(GL_RGBA8, cw, ch, GL_RGBA, GL_UNSIGNED_BYTE);
    }
    d->cap_w = cw;
    d->cap_h = ch;
    d->tex_depth = d->depth;
    if (gl_check("allocating the display textures") != 0)
        return -1;
    if (d->path == VW_PATH_INTEROP && d->depth == 8)
        for (int i = 0; i < 2; i++)
            if (imgpu_interop_register(d->tex[i], &d->res[i]) != 0) {
                d->cap_w = d->cap_h = 0;   /* not usable: the next frame makes them again */
                return -1;
            }
    return 0;
}

static int ensure_orig(vw_display *d, int w, int h)
{
    if (d->tex_orig && w <= d->orig_cap_w && h <= d->orig_cap_h && d->orig_depth == d->depth)
        return 0;
    imgpu_interop_unregister(&d->res_orig);
    if (d->tex_orig)
        glDeleteTextures(1, &d->tex_orig);
    d->tex_orig = d->depth == 16 ? new_texture(GL_RGBA16, w, h, GL_RGBA, GL_UNSIGNED_SHORT)
                                 : new_texture(GL_RGBA8, w, h, GL_RGBA, GL_UNSIGNED_BYTE);
    d->orig_cap_w = w;
    d->orig_cap_h = h;
    d->orig_depth = d->depth;
    if (gl_check("allocating the source texture") != 0)
        return -1;
    if (d->path == VW_PATH_INTEROP && d->depth == 8 && imgpu_interop_register(d->tex_orig, &d->res_orig) != 0) {
        d->orig_cap_w = d->orig_cap_h = 0;   /* not usable: the next image makes it again */
        return -1;
    }
    return 0;
}

/* ---- create / destroy ----------------------------------------------------------------------- */

/* The histogram overlay's labels; the legend's colours are the shader's curve colours. */
static int make_labels(vw_display *d)
{
    static const struct { const char *text, *colors; } lab[LAB_KINDS] = {
        [LAB_BEFORE] = {"BEFORE", NULL},
        [LAB_AFTER] = {"AFTER", NULL},
        [LAB_LEGEND_RGB] = {"R G B", "rwgwb"},
        [LAB_LEGEND_GRAY] = {"CDF", "yyy"},
    };
    for (int k = 0; k < LAB_KINDS; k++)
        for (int s = 0; s < 2; s++) {
            imgpu_image *im = vw__label_image(lab[k].text, lab[k].colors, s + 1, LAB_PAD);
            if (!im)
                return -1;
            d->lab[k][s].tex = new_texture(GL_RGBA8, im->width, im->height, GL_RGBA, GL_UNSIGNED_BYTE);
            glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, im->width, im->height, GL_RGBA, GL_UNSIGNED_BYTE, im->data);
            d->lab[k][s].w = im->width;
            d->lab[k][s].h = im->height;
            imgpu_image_free(im);
        }
    return gl_check("uploading the histogram labels");
}

vw_display *vw_display_new(imgpu_device device, int interop)
{
    vw_display *d = calloc(1, sizeof *d);
    if (!d) {
        imgpu_error("out of memory");
        return NULL;
    }
    d->path = VW_PATH_UPLOAD_CPU;
    if (!(d->prog_img = program(s_fs_img)) || !(d->prog_ovl = program(s_fs_ovl)))
        goto fail;
    glGenVertexArrays(1, &d->vao);
    glGenFramebuffers(1, &d->fbo);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    d->tex_hist = new_texture(GL_RGBA32F, HIST_W, HIST_H, GL_RGBA, GL_FLOAT);
    if (gl_check("creating the viewer's GL objects") != 0 || make_labels(d) != 0)
        goto fail;

    const char *gl_vendor = (const char *)glGetString(GL_VENDOR);
    const char *gl_renderer = (const char *)glGetString(GL_RENDERER);
    if (device != IMGPU_DEVICE_CPU) {
        if (!imgpu_session_available()) {
            if (device == IMGPU_DEVICE_CUDA)
                goto fail; /* the reason is recorded */
            imgpu_notice("no CUDA-GL interop (%s): the viewer computes on the CPU and uploads each frame "
                         "with glTexSubImage2D", imgpu_error_message());
            imgpu_error_clear();
        } else {
            char why[256] = "disabled by --no-interop";
            if (!(d->cu = imgpu_interop_new()))
                goto fail;
            if (interop && interop_probe(why, sizeof why) == 0 &&
                imgpu_interop_register(d->tex_hist, &d->res_hist) == 0) {
                d->path = VW_PATH_INTEROP;
            } else {
                d->path = VW_PATH_UPLOAD_CUDA;
                imgpu_notice("no CUDA-GL interop with this OpenGL (%s, %s: %s): the viewer computes on the GPU and "
                             "uploads each frame with glTexSubImage2D", gl_vendor ? gl_vendor : "?",
                             gl_renderer ? gl_renderer : "?", why);
                imgpu_error_clear();
            }
        }
    }
    return d;
fail:
    vw_display_free(d);
    return NULL;
}

void vw_display_free(vw_display *d)
{
    if (!d)
        return;
    /* unregistered before GL deletes the textures below */
    imgpu_interop_unregister(&d->res[0]);
    imgpu_interop_unregister(&d->res[1]);
    imgpu_interop_unregister(&d->res_orig);
    imgpu_interop_unregister(&d->res_hist);
    imgpu_interop_free(d->cu);
    GLuint texs[] = {d->tex[0], d->tex[1], d->tex_orig, d->tex_hist, d->tex_help, d->tex_note};
    for (size_t i = 0; i < sizeof texs / sizeof texs[0]; i++)
        if (texs[i])
            glDeleteTextures(1, &texs[i]);
    for (int k = 0; k < LAB_KINDS; k++)
        for (int s = 0; s < 2; s++)
            if (d->lab[k][s].tex)
                glDeleteTextures(1, &d->lab[k][s].tex);
    for (int k = 0; k < 2; k++)
        for (int s = 0; s < 2; s++)
            if (d->rlab[k][s].tex)
                glDeleteTextures(1, &d->rlab[k][s].tex);
    if (d->fbo)
        glDeleteFramebuffers(1, &d->fbo);
    if (d->vao)
        glDeleteVertexArrays(1, &d->vao);
    if (d->prog_img)
        glDeleteProgram(d->prog_img);
    if (d->prog_ovl)
        glDeleteProgram(d->prog_ovl);
    imgpu_image_free(d->h_src);
    free(d->rgba);
    free(d);
}

vw_path vw_display_path(const vw_display *d) { return d->path; }

const char *vw_display_path_name(vw_path p)
{
    switch (p) {
    case VW_PATH_INTEROP: return "CUDA-GL interop";
    case VW_PATH_UPLOAD_CUDA: return "CUDA + glTexSubImage2D upload";
    default: return "CPU + glTexSubImage2D upload";
    }
}

/* ---- the upload path ------------------------------------------------------------------------ */

/* The RGBA staging buffer (host memory the uploads expand into) grown to `need` bytes. */
static int ensure_staging(vw_display *d, size_t need)
{
    if (need > d->rgba_bytes) {
        unsigned char *p = realloc(d->rgba, need);
        if (!p)
            return imgpu_error("out of memory (%zu bytes of RGBA staging)", need);
        d->rgba = p;
        d->rgba_bytes = need;
    }
    return 0;
}

static int upload_rgba16(vw_display *d, GLuint t, const imgpu_image *im)
{
    size_t need = (size_t)im->width * im->height * 4 * sizeof(uint16_t);
    if (ensure_staging(d, need) != 0)
        return -1;
    uint16_t *o = (uint16_t *)(void *)d->rgba; /* malloc'ed: aligned for any type */
    for (int y = 0; y < im->height; y++) {
        const unsigned char *row = imgpu_image_row(im, y);
        for (size_t x = 0; x < (size_t)im->width; x++, o += 4) {
            const size_t i = x * im->channels;
            switch (im->channels) {
            case 1: o[0] = o[1] = o[2] = (uint16_t)imgpu_sample_get(row, 16, i), o[3] = 65535; break;
            case 2:
                o[0] = o[1] = o[2] = (uint16_t)imgpu_sample_get(row, 16, i);
                o[3] = (uint16_t)imgpu_sample_get(row, 16, i + 1);
                break;
            default:
                for (int k = 0; k < 4; k++)
                    o[k] = k < im->channels ? (uint16_t)imgpu_sample_get(row, 16, i + k) : 65535;
                break;
            }
        }
    }
    glBindTexture(GL_TEXTURE_2D, t);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, im->width, im->height, GL_RGBA, GL_UNSIGNED_SHORT, d->rgba);
    return gl_check("glTexSubImage2D (16-bit)");
}

/* Expand to RGBA (as the to_surface kernel does) and upload into texture t at (0, 0); 16-bit
 * images as RGBA16 (opaque alpha 65535). */
static int upload_rgba(vw_display *d, GLuint t, const imgpu_image *im)
{
    if (im->depth == 16)
        return upload_rgba16(d, t, im);
    size_t need = (size_t)im->width * im->height * 4;
    if (ensure_staging(d, need) != 0)
        return -1;
    for (int y = 0; y < im->height; y++) {
        const unsigned char *s = imgpu_image_row(im, y);
        unsigned char *o = d->rgba + (size_t)y * im->width * 4;
        for (int x = 0; x < im->width; x++, o += 4, s += im->channels) {
            switch (im->channels) {
            case 1: o[0] = o[1] = o[2] = s[0], o[3] = 255; break;
            case 2: o[0] = o[1] = o[2] = s[0], o[3] = s[1]; break;
            case 3: o[0] = s[0], o[1] = s[1], o[2] = s[2], o[3] = 255; break;
            default: memcpy(o, s, 4); break;
            }
        }
    }
    glBindTexture(GL_TEXTURE_2D, t);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, im->width, im->height, GL_RGBA, GL_UNSIGNED_BYTE, d->rgba);
    return gl_check("glTexSubImage2D");
}

/* The smallest and largest color sample (alpha left out) of a 16-bit image: the auto window. */
static void range16(const imgpu_image *im, unsigned *lo, unsigned *hi)
{
    const int c = im->channels, colors = imgpu_image_color_channels(im);
    unsigned a = 65535, b = 0;
    for (int y = 0; y < im->height; y++) {
        const unsigned char *row = imgpu_image_row(im, y);
        for (size_t x = 0; x < (size_t)im->width; x++)
            for (int k = 0; k < colors; k++) {
                unsigned v = imgpu_sample_get(row, 16, x * c + k);
                a = v < a ? v : a;
                b = v > b ? v : b;
            }
    }
    *lo = a;
    *hi = b;
}

/* The overlay's 256 bins of a 16-bit image over its data range lo..hi (range16): level v goes
 * to bin (v - lo) * 256 / (hi - lo + 1), as `imgpu histogram --range`; alpha samples outside
 * the range (the overlay draws no alpha) are not counted. */
static void histogram16(const imgpu_image *im, unsigned lo, unsigned hi, imgpu_histogram *h)
{
    memset(h, 0, sizeof *h);
    h->channels = im->channels;
    const uint64_t width = (uint64_t)hi - lo + 1;
    for (int y = 0; y < im->height; y++) {
        const unsigned char *row = imgpu_image_row(im, y);
        for (size_t i = 0; i < (size_t)im->width * im->channels; i++) {
            const unsigned v = imgpu_sample_get(row, 16, i);
            if (v >= lo && v <= hi)
                h->bins[i % im->channels][(uint64_t)(v - lo) * 256 / width]++;
        }
    }
}

static int histogram_any(const imgpu_image *im, imgpu_device dev, unsigned lo, unsigned hi, imgpu_histogram *h)
{
    if (im->depth == 16) {
        histogram16(im, lo, hi, h);
        return 0;
    }
    return imgpu_histogram_compute(im, dev, h, NULL);
}

/* A 16-bit panel's label, "BEFORE LO..HI" (panel 0) or "AFTER LO..HI", made again only when
 * the range changes. */
static int range_label(vw_display *d, int panel, unsigned lo, unsigned hi)
{
    if (d->rlab[panel][0].tex && d->rlab_lo[panel] == lo && d->rlab_hi[panel] == hi)
        return 0;
    char text[48];
    snprintf(text, sizeof text, "%s %u..%u", panel ? "AFTER" : "BEFORE", lo, hi);
    for (int s = 0; s < 2; s++) {
        imgpu_image *im = vw__label_image(text, NULL, s + 1, LAB_PAD);
        if (!im)
            return -1;
        if (d->rlab[panel][s].tex)
            glDeleteTextures(1, &d->rlab[panel][s].tex);
        d->rlab[panel][s].tex = new_texture(GL_RGBA8, im->width, im->height, GL_RGBA, GL_UNSIGNED_BYTE);
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, im->width, im->height, GL_RGBA, GL_UNSIGNED_BYTE, im->data);
        d->rlab[panel][s].w = im->width;
        d->rlab[panel][s].h = im->height;
        imgpu_image_free(im);
    }
    d->rlab_lo[panel] = lo;
    d->rlab_hi[panel] = hi;
    return gl_check("uploading a histogram label");
}

/* The same scaling as kernels/viewer.cu's hist_to_surface, on the host. */
static void normalise(const imgpu_histogram *h, float cnt[3][256], float cdf[3][256])
{
    const int colors = h->channels >= 3 ? 3 : 1;
    uint32_t m = 0;
    memset(cnt, 0, sizeof(float) * 3 * 256);
    memset(cdf, 0, sizeof(float) * 3 * 256);
    for (int c = 0; c < colors; c++)
        for (int v = 1; v <= 254; v++)
            if (h->bins[c][v] > m)
                m = h->bins[c][v];
    for (int c = 0; c < colors; c++) {
        unsigned long long total = 0, cum = 0;
        for (int v = 0; v < 256; v++)
            total += h->bins[c][v];
        for (int v = 0; v < 256; v++) {
            uint32_t b = h->bins[c][v];
            cum += b;
            cnt[c][v] = m ? fminf((float)b / (float)m, 1.0f) : (b ? 1.0f : 0.0f);
            cdf[c][v] = total ? (float)((double)cum / (double)total) : 0.0f;
        }
    }
}

static void put_hist_rows(float *tex, int row, float cnt[3][256], float cdf[3][256])
{
    for (int v = 0; v < 256; v++)
        for (int c = 0; c < 4; c++) {
            tex[((row + 0) * 256 + v) * 4 + c] = c < 3 ? cnt[c][v] : 1.0f;
            tex[((row + 1) * 256 + v) * 4 + c] = c < 3 ? cdf[c][v] : 1.0f;
        }
}

static int upload_hist(vw_display *d, const imgpu_image *res)
{
    imgpu_histogram h;
    float cnt[3][256], cdf[3][256];
    static float tex[HIST_H * HIST_W * 4];
    imgpu_device dev = d->path == VW_PATH_UPLOAD_CUDA ? IMGPU_DEVICE_CUDA : IMGPU_DEVICE_CPU;
    if (histogram_any(res, dev, d->res_lo, d->res_hi, &h) != 0)
        return -1;
    if (res->depth == 16 && range_label(d, 1, d->res_lo, d->res_hi) != 0)
        return -1;
    normalise(&h, cnt, cdf);
    put_hist_rows(tex, 0, d->h_before, d->h_before_cdf);
    put_hist_rows(tex, 2, cnt, cdf);
    glBindTexture(GL_TEXTURE_2D, d->tex_hist);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, HIST_W, HIST_H, GL_RGBA, GL_FLOAT, tex);
    return gl_check("uploading the histogram");
}

/* ---- source and frames ---------------------------------------------------------------------- */

int vw_display_set_image(vw_display *d, const imgpu_image *src)
{
    if (src->depth != 8 && src->depth != 16)
        return imgpu_error("the viewer shows 8- and 16-bit images, not %d-bit ones", src->depth);
    d->depth = src->depth;
    d->src_w = src->width;
    d->src_h = src->height;
    d->src_c = src->channels;
    d->have_result = 0;
    d->hist_valid = 0;
    if (ensure_orig(d, src->width, src->height) != 0)
        return -1;
    if (d->cu && d->depth == 8) {
        /* the source on the device and its histogram; on the interop path also written into
         * the source texture, and then nothing is left to do on the host */
        const int interop = d->path == VW_PATH_INTEROP;
        if (imgpu_interop_set_source(d->cu, src, interop ? d->res_orig : NULL) != 0)
            return -1;
        if (interop)
            return 0;
    }
    /* upload path: keep a host copy to compute from (CPU) and to show as the original */
    imgpu_image_free(d->h_src);
    if (!(d->h_src = imgpu_image_copy(src)))
        return -1;
    imgpu_histogram h;
    if (d->depth == 16) {
        range16(src, &d->src_lo, &d->src_hi);
        if (range_label(d, 0, d->src_lo, d->src_hi) != 0)
            return -1;
    }
    if (histogram_any(src, IMGPU_DEVICE_CPU, d->src_lo, d->src_hi, &h) != 0)
        return -1;
    normalise(&h, d->h_before, d->h_before_cdf);
    return upload_rgba(d, d->tex_orig, src);
}

/* Result size of ops on the source, without running them (to size the textures first). */
static void result_shape(const vw_display *d, const imgpu_op *ops, int n, int *w, int *h)
{
    *w = d->src_w;
    *h = d->src_h;
    for (int i = 0; i < n; i++) {
        const imgpu_op_desc *dd = imgpu_op_desc_of(ops[i].kind);
        if (dd && dd->out_size)
            dd->out_size(*w, *h, &ops[i], w, h);
    }
}

int vw_display_process(vw_display *d, const imgpu_op *ops, int n, int hist, double *gpu_ms)
{
    int w, h;
    result_shape(d, ops, n, &w, &h);
    if (ensure_capacity(d, w, h) != 0)
        return -1;
    const int back = d->have_result ? 1 - d->front : 0;
    if (d->path == VW_PATH_INTEROP && d->depth == 8) {
        int c;
        if (imgpu_interop_process(d->cu, ops, n, d->res[back], hist ? d->res_hist : NULL, &w, &h, &c, gpu_ms) != 0)
            return -1;
        d->res_c = c;
        goto done;
    }
    {
        double t0 = now_ms();
        imgpu_image *res = NULL;
        int rc = 0;
        if (d->path == VW_PATH_UPLOAD_CUDA && d->depth == 8) {
            if (imgpu_interop_run(d->cu, ops, n, &res) != 0)
                return -1;
        }
        /* the CPU path; and 16-bit images on any path, through the pipeline API on the GPU
         * when the viewer has one (one upload and one download per frame) */
        const imgpu_device dev = d->path == VW_PATH_UPLOAD_CPU ? IMGPU_DEVICE_CPU : IMGPU_DEVICE_CUDA;
        if ((d->path == VW_PATH_UPLOAD_CPU || d->depth == 16) &&
            !(res = n ? imgpu_pipeline_run(d->h_src, ops, n, dev, NULL) : imgpu_image_copy(d->h_src)))
            return -1;
        if (gpu_ms)
            *gpu_ms = now_ms() - t0;
        rc = upload_rgba(d, d->tex[back], res);
        if (res->depth == 16)
            range16(res, &d->res_lo, &d->res_hi); /* before upload_hist: its bins span this */
        if (rc == 0 && hist)
            rc = upload_hist(d, res);
        d->res_c = res->channels;
        imgpu_image_free(res);
        if (rc)
            return rc;
    }
done:
    d->res_w = w;
    d->res_h = h;
    d->front = back;
    d->have_result = 1;
    d->hist_valid = hist;
    return 0;
}

/* ---- drawing -------------------------------------------------------------------------------- */

static void set_filter(GLuint t, int linear)
{
    glBindTexture(GL_TEXTURE_2D, t);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, linear ? GL_LINEAR : GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, linear ? GL_LINEAR : GL_NEAREST);
}

void vw_display_window(const vw_display *d, const vw_draw *v, double proc[2], double orig[2])
{
    if (v->wl_auto) {
        proc[0] = d->res_lo, proc[1] = d->res_hi;
        orig[0] = d->src_lo, orig[1] = d->src_hi;
    } else {
        proc[0] = orig[0] = v->wl_lo;
        proc[1] = orig[1] = v->wl_hi;
    }
    /* a flat image (min == max) or a window narrowed to nothing: one level wide, no 0 / 0 */
    if (proc[1] <= proc[0])
        proc[1] = proc[0] + 1;
    if (orig[1] <= orig[0])
        orig[1] = orig[0] + 1;
}

int vw_display_depth(const vw_display *d) { return d->depth; }

static void draw_image(vw_display *d, const vw_draw *v, int fb_w, int fb_h, int raw)
{
    GLuint p = d->prog_img;
    glUseProgram(p);
    glBindVertexArray(d->vao);
    const int linear = !raw && v->zoom < 1.0;
    glActiveTexture(GL_TEXTURE0);
    set_filter(d->tex[d->front], linear);
    glActiveTexture(GL_TEXTURE1);
    set_filter(d->tex_orig, linear);
    glActiveTexture(GL_TEXTURE0);
    glUniform1i(glGetUniformLocation(p, "u_proc"), 0);
    glUniform1i(glGetUniformLocation(p, "u_orig"), 1);
    glUniform1i(glGetUniformLocation(p, "u_raw"), raw);
    if (!raw) {
        /* the original is centred where the processed image is centred */
        double cx = v->ox + d->res_w * v->zoom / 2, cy = v->oy + d->res_h * v->zoom / 2;
        glUniform1i(glGetUniformLocation(p, "u_show"), (int)v->show);
        glUniform2f(glGetUniformLocation(p, "u_fb"), (float)fb_w, (float)fb_h);
        glUniform2f(glGetUniformLocation(p, "u_o_proc"), (float)v->ox, (float)v->oy);
        glUniform2f(glGetUniformLocation(p, "u_o_orig"), (float)(cx - d->src_w * v->zoom / 2),
                    (float)(cy - d->src_h * v->zoom / 2));
        glUniform2f(glGetUniformLocation(p, "u_size_proc"), (float)d->res_w, (float)d->res_h);
        glUniform2f(glGetUniformLocation(p, "u_size_orig"), (float)d->src_w, (float)d->src_h);
        glUniform2f(glGetUniformLocation(p, "u_cap_proc"), (float)d->cap_w, (float)d->cap_h);
        glUniform2f(glGetUniformLocation(p, "u_cap_orig"), (float)d->orig_cap_w, (float)d->orig_cap_h);
        glUniform1f(glGetUniformLocation(p, "u_zoom"), (float)v->zoom);
        glUniform1f(glGetUniformLocation(p, "u_split"), (float)v->split_x);
        double wp[2], wo[2];
        vw_display_window(d, v, wp, wo);
        glUniform1i(glGetUniformLocation(p, "u_wl"), d->depth == 16);
        glUniform2f(glGetUniformLocation(p, "u_wl_proc"), (float)(wp[0] / 65535.0), (float)(wp[1] / 65535.0));
        glUniform2f(glGetUniformLocation(p, "u_wl_orig"), (float)(wo[0] / 65535.0), (float)(wo[1] / 65535.0));
    }
    glDisable(GL_BLEND);
    glDrawArrays(GL_TRIANGLES, 0, 3);
}

static void draw_overlay(vw_display *d, int kind, GLuint tex, float x, float y, float w, float h, int fb_w, int fb_h)
{
    GLuint p = d->prog_ovl;
    glUseProgram(p);
    glBindVertexArray(d->vao);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, tex);
    glUniform1i(glGetUniformLocation(p, "u_tex"), 0);
    glUniform1i(glGetUniformLocation(p, "u_kind"), kind);
    glUniform1i(glGetUniformLocation(p, "u_colors"), d->src_c >= 3 ? 3 : 1);
    glUniform2f(glGetUniformLocation(p, "u_fb"), (float)fb_w, (float)fb_h);
    glUniform4f(glGetUniformLocation(p, "u_rect"), x, y, w, h);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glDisable(GL_BLEND);
}

/* The histogram overlay in a corner: at most 512 x 256, and at most half the framebuffer's width
 * and height less the margins, so that whichever corner it is in, the opposite corners stay
 * visible (H moves it away from what it covers). Labels go top-left in each panel, the colour
 * legend after BEFORE (where the CDF curves are low; they all end top-right), where they fit. */
static void draw_histogram(vw_display *d, vw_hist_pos pos, int fb_w, int fb_h)
{
    enum { MARGIN = 10 };
    float w = 512.0f;
    if (w > fb_w / 2.0f - 1.5f * MARGIN)
        w = floorf(fb_w / 2.0f - 1.5f * MARGIN);
    if (w > 2.0f * floorf(fb_h / 2.0f - 1.5f * MARGIN))
        w = 2.0f * floorf(fb_h / 2.0f - 1.5f * MARGIN);
    const float h = floorf(w / 2), ph = floorf(h / 2); /* ph: the shader's panel height, h / 2 */
    if (w < 64)
        return;
    const int right = pos == VW_HIST_LOWER_RIGHT || pos == VW_HIST_TOP_RIGHT;
    const int top = pos == VW_HIST_TOP_RIGHT || pos == VW_HIST_TOP_LEFT;
    const float x = right ? fb_w - w - MARGIN : MARGIN;
    float y = top ? MARGIN : fb_h - h - MARGIN;
    if (!top && !right && d->tex_note && y > d->note_h + 2 * MARGIN + h) /* above N / P's note */
        y -= d->note_h + MARGIN;
    draw_overlay(d, 0, d->tex_hist, x, y, w, h, fb_w, fb_h);
    const int legend = d->src_c >= 3 ? LAB_LEGEND_RGB : LAB_LEGEND_GRAY;
    /* label scale 2, or 1 on small overlays or where the longer labels of a 16-bit image
     * ("BEFORE 3160..10760") would not fit at 2; none when even 1 does not fit */
    int s = w >= 240 ? 1 : 0;
    const label *pl[2];
    float lx;
    for (;; s--) {
        if (s < 0)
            return; /* too small to label without hiding the bars */
        /* the panels' labels: BEFORE and AFTER, with the range of a 16-bit image's bins */
        pl[0] = d->depth == 16 && d->rlab[0][s].tex ? &d->rlab[0][s] : &d->lab[LAB_BEFORE][s];
        pl[1] = d->depth == 16 && d->rlab[1][s].tex ? &d->rlab[1][s] : &d->lab[LAB_AFTER][s];
        lx = x + 4 + pl[0]->w + 8 * (s + 1); /* the legend's x */
        if (pl[0]->h * 2 <= ph && lx + d->lab[legend][s].w <= x + w / 2 && x + 4 + pl[1]->w <= x + w / 2)
            break;
    }
    for (int panel = 0; panel < 2; panel++)
        draw_overlay(d, 1, pl[panel]->tex, x + 4, y + panel * ph + 3, (float)pl[panel]->w, (float)pl[panel]->h,
                     fb_w, fb_h);
    draw_overlay(d, 1, d->lab[legend][s].tex, lx, y + 3, (float)d->lab[legend][s].w,
                 (float)d->lab[legend][s].h, fb_w, fb_h);
}

int vw_display_draw(vw_display *d, const vw_draw *v, int fb_w, int fb_h)
{
    if (!d->have_result)
        return imgpu_error("nothing to draw yet");
    glViewport(0, 0, fb_w, fb_h);
    draw_image(d, v, fb_w, fb_h, 0);
    if (v->hist != VW_HIST_OFF && d->hist_valid)
        draw_histogram(d, (vw_hist_pos)v->hist, fb_w, fb_h);
    if (v->help && d->tex_help)
        draw_overlay(d, 1, d->tex_help, 10, 10, (float)d->help_w, (float)d->help_h, fb_w, fb_h);
    if (d->tex_note)
        draw_overlay(d, 1, d->tex_note, 10, (float)(fb_h - d->note_h - 10), (float)d->note_w, (float)d->note_h,
                     fb_w, fb_h);
    return gl_check("drawing");
}

int vw_display_set_help(vw_display *d, const imgpu_image *rgba)
{
    if (d->tex_help)
        glDeleteTextures(1, &d->tex_help);
    d->tex_help = new_texture(GL_RGBA8, rgba->width, rgba->height, GL_RGBA, GL_UNSIGNED_BYTE);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, rgba->width, rgba->height, GL_RGBA, GL_UNSIGNED_BYTE, rgba->data);
    d->help_w = rgba->width;
    d->help_h = rgba->height;
    return gl_check("uploading the help text");
}

int vw_display_set_note(vw_display *d, const imgpu_image *rgba)
{
    if (d->tex_note)
        glDeleteTextures(1, &d->tex_note);
    d->tex_note = 0;
    if (!rgba)
        return 0;
    d->tex_note = new_texture(GL_RGBA8, rgba->width, rgba->height, GL_RGBA, GL_UNSIGNED_BYTE);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, rgba->width, rgba->height, GL_RGBA, GL_UNSIGNED_BYTE, rgba->data);
    d->note_w = rgba->width;
    d->note_h = rgba->height;
    return gl_check("uploading the note");
}

/* Render into a w x h framebuffer object and read it back (rows bottom-up as GL gives them). */
static unsigned char *render_offscreen(vw_display *d, const vw_draw *v, int w, int h, int raw)
{
    GLuint rb = 0;
    unsigned char *px = NULL;
    size_t bytes = 0;
    const int deep = raw && d->depth == 16; /* the 1:1 read-back of a 16-bit result: RGBA16 */
    if (imgpu_image_bytes(w, h, 4, deep ? 16 : 8, &bytes) != 0)
        return NULL;
    if (!(px = malloc(bytes))) {
        imgpu_error("out of memory (%zu bytes for a read-back)", bytes);
        return NULL;
    }
    glGenRenderbuffers(1, &rb);
    glBindRenderbuffer(GL_RENDERBUFFER, rb);
    glRenderbufferStorage(GL_RENDERBUFFER, deep ? GL_RGBA16 : GL_RGBA8, w, h);
    glBindFramebuffer(GL_FRAMEBUFFER, d->fbo);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rb);
    if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
        imgpu_error("cannot render a %dx%d frame offscreen (framebuffer incomplete)", w, h);
        goto fail;
    }
    glViewport(0, 0, w, h);
    if (raw)
        draw_image(d, v, w, h, 1);
    else if (vw_display_draw(d, v, w, h) != 0)
        goto fail;
    glReadBuffer(GL_COLOR_ATTACHMENT0);
    glReadPixels(0, 0, w, h, GL_RGBA, deep ? GL_UNSIGNED_SHORT : GL_UNSIGNED_BYTE, px);
    if (gl_check("glReadPixels") != 0)
        goto fail;
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteRenderbuffers(1, &rb);
    return px;
fail:
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteRenderbuffers(1, &rb);
    free(px);
    return NULL;
}

imgpu_image *vw_display_read_raw(vw_display *d)
{
    if (!d->have_result) {
        imgpu_error("nothing rendered yet");
        return NULL;
    }
    vw_draw v;
    memset(&v, 0, sizeof v);
    unsigned char *px = render_offscreen(d, &v, d->res_w, d->res_h, 1);
    imgpu_image *im = px ? imgpu_image_new(d->res_w, d->res_h, d->res_c, d->depth) : NULL;
    if (!im) {
        free(px);
        return NULL;
    }
    /* texel row y was drawn into framebuffer row y: no flip. Back to the image's channels. */
    static const int pick[5][4] = {{0}, {0}, {0, 3}, {0, 1, 2}, {0, 1, 2, 3}};
    const size_t bps = d->depth == 16 ? 2 : 1;
    for (int y = 0; y < im->height; y++) {
        const unsigned char *s = px + (size_t)y * im->width * 4 * bps;
        unsigned char *o = imgpu_image_row(im, y);
        for (int x = 0; x < im->width; x++, s += 4 * bps, o += im->channels * bps)
            for (int c = 0; c < im->channels; c++)
                memcpy(o + c * bps, s + pick[im->channels][c] * bps, bps);
    }
    free(px);
    return im;
}

imgpu_image *vw_display_read_view(vw_display *d, const vw_draw *v, int w, int h)
{
    unsigned char *px = render_offscreen(d, v, w, h, 0);
    imgpu_image *im = px ? imgpu_image_new(w, h, 3, 8) : NULL;
    if (!im) {
        free(px);
        return NULL;
    }
    for (int y = 0; y < h; y++) { /* GL's row 0 is the bottom */
        const unsigned char *s = px + (size_t)(h - 1 - y) * w * 4;
        unsigned char *o = imgpu_image_row(im, y);
        for (int x = 0; x < w; x++, s += 4, o += 3)
            memcpy(o, s, 3);
    }
    free(px);
    return im;
}

imgpu_image *vw_display_result(vw_display *d)
{
    if (d->cu && d->depth == 8) {
        imgpu_image *out = NULL;
        return imgpu_interop_download(d->cu, &out) == 0 ? out : NULL;
    }
    /* CPU path and 16-bit images: the display texture holds exactly the result (read_raw's
     * contract) */
    return vw_display_read_raw(d);
}
