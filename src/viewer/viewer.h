/* viewer.h — the pieces of imgpu-view (the `imgpu view` program), one file each:
 *   viewer.c        options, image list, the main loop, snapshots, save
 *   input.c         the controls: keys, mouse, wheel, drops -> settings and view (no GL here)
 *   events.c        --events FILE: scripted input fed through the same handlers
 *   display.c       GL objects, drawing, the glTexSubImage2D upload path; CUDA-GL interop
 *                   through src/cuda/interop.h, the viewer's one door into the CUDA backend
 *   context_egl.c   headless GL through EGL's device platform (pbuffer, no X server)
 *   context_glfw.c  a GLFW window (interactive, or hidden for snapshots under an X server)
 *   text.c          a tiny bitmap font for the on-screen help
 * Coordinates: framebuffer pixels, origin top-left, y down (GLFW's window coordinates are
 * scaled by the framebuffer/window ratio first, so HiDPI needs nothing else).
 */
#ifndef IMGPU_VIEWER_H
#define IMGPU_VIEWER_H

#include <stdint.h>

#include "image.h"
#include "ops.h"
#include "cli/options.h"

/* ---- GL contexts ------------------------------------------------------------------------- */
typedef enum vw_context_kind { VW_CTX_EGL = 0, VW_CTX_GLFW } vw_context_kind;

struct GLFWwindow;
struct vw_app;

typedef struct vw_context {
    vw_context_kind kind;
    void *egl_display, *egl_surface, *egl_context; /* EGL */
    struct GLFWwindow *window;                      /* GLFW */
    int glfw_inited;
} vw_context;

/* Each makes the context current and loads GL entry points (GLEW); 0 or -1 with a message.
 * close accepts a context that failed to open. */
int vw__egl_open(vw_context *c);
void vw__egl_close(vw_context *c);
/* visible = 0 makes a hidden window (snapshots under an X server). app receives the
 * callbacks (may be NULL for hidden windows). */
int vw__glfw_open(vw_context *c, int w, int h, int visible, const char *title, struct vw_app *app);
void vw__glfw_close(vw_context *c);
/* glewInit after a context is current; treats GLEW_ERROR_NO_GLX_DISPLAY as success under EGL
 * (Debian's GLEW is built for GLX but has loaded every entry point by then). */
int vw__gl_load(int is_egl);

/* ---- display: GL textures, interop, drawing ---------------------------------------------- */
typedef enum vw_show { VW_SHOW_PROCESSED = 0, VW_SHOW_ORIGINAL, VW_SHOW_SPLIT } vw_show;

typedef struct vw_draw {
    double zoom;       /* framebuffer pixels per image pixel */
    double ox, oy;     /* framebuffer position of the processed image's top-left corner */
    vw_show show;
    double split_x;    /* VW_SHOW_SPLIT: framebuffer x of the divider */
    int hist;          /* histogram overlay: a vw_hist_pos (VW_HIST_OFF: none) */
    int help;          /* help overlay */
    int wl_auto;       /* 16-bit images: the window is each shown image's min..max */
    double wl_lo, wl_hi; /* else this window of 16-bit levels is black..white */
} vw_draw;

/* Where the histogram overlay is: H steps through these in order, back to off. */
typedef enum vw_hist_pos {
    VW_HIST_OFF = 0,
    VW_HIST_LOWER_RIGHT, /* --histogram */
    VW_HIST_LOWER_LEFT,
    VW_HIST_TOP_RIGHT,
    VW_HIST_TOP_LEFT,
    VW_HIST_STATES
} vw_hist_pos;

typedef enum vw_path { VW_PATH_INTEROP = 0, VW_PATH_UPLOAD_CUDA, VW_PATH_UPLOAD_CPU } vw_path;

typedef struct vw_display vw_display;
/* After a context is current. device: auto/cpu/cuda (as the CLI's --device); interop = 0
 * forces the upload path. */
vw_display *vw_display_new(imgpu_device device, int interop);
void vw_display_free(vw_display *d);
vw_path vw_display_path(const vw_display *d);
const char *vw_display_path_name(vw_path p);
/* A new source image (the display keeps its own copy where it needs one). */
int vw_display_set_image(vw_display *d, const imgpu_image *src);
/* Run ops on the source and put the result into the back display texture, then make it the
 * front one; also the "after" histogram when hist is set. *gpu_ms (may be NULL): GPU time of
 * the ops and the write into the texture (CUDA events), or the CPU time on the CPU path. */
int vw_display_process(vw_display *d, const imgpu_op *ops, int n, int hist, double *gpu_ms);
/* The source's depth (8 or 16); 16-bit images are drawn through a window (vw_draw's wl_*). */
int vw_display_depth(const vw_display *d);
/* The windows (lo, hi; 16-bit levels) that v gives the processed image and the original:
 * with wl_auto each one's min..max of the color samples. */
void vw_display_window(const vw_display *d, const vw_draw *v, double proc[2], double orig[2]);
/* Draw into the current framebuffer (fb_w x fb_h). */
int vw_display_draw(vw_display *d, const vw_draw *v, int fb_w, int fb_h);
/* The processed image as displayed, read back through GL at 1:1 (a framebuffer object of the
 * image's size, the display texture drawn texel for texel, glReadPixels) and converted back to
 * the image's own channel layout: exactly the pixels the CLI writes. */
imgpu_image *vw_display_read_raw(vw_display *d);
/* The view as a w x h window would show it, read back as RGB. */
imgpu_image *vw_display_read_view(vw_display *d, const vw_draw *v, int w, int h);
/* The processed image at full resolution for saving (a download or the host result). */
imgpu_image *vw_display_result(vw_display *d);
/* The help overlay: an RGBA image, drawn at the top-left (the display keeps a texture). */
int vw_display_set_help(vw_display *d, const imgpu_image *rgba);
/* A note (what N / P skipped): an RGBA image drawn at the bottom-left; NULL removes it. */
int vw_display_set_note(vw_display *d, const imgpu_image *rgba);

/* ---- text.c ------------------------------------------------------------------------------- */
/* RGBA image of `text` (lines split at '\n') in a 5x7 font at `scale`, white on translucent
 * black. NULL with a message on failure. */
imgpu_image *vw__text_image(const char *text, int scale);
/* One line of text, tight: glyphs at `scale` with `pad` pixels of translucent black around
 * them. colors: NULL (white) or one code per character: 'w' white, 'r' 'g' 'b' 'y' the
 * histogram overlay's curve colours. NULL with a message on failure. */
imgpu_image *vw__label_image(const char *text, const char *colors, int scale, int pad);

/* ---- the application state and the controls (input.c) ------------------------------------ */
enum { VW_MAX_OPS = 32 };  /* ops of the op table the viewer keeps (imgpu_op_count()) */
enum { VW_DRAG_NONE = 0, VW_DRAG_PAN, VW_DRAG_ROTATE, VW_DRAG_DIVIDER };

typedef struct vw_app {
    /* what the processing depends on */
    int contrast;            /* the contrast op shown: an index of the op table whose view_key
                              * turned it on (one at a time), or -1 */
    imgpu_op vop[VW_MAX_OPS]; /* each op of the table with the parameters the options and its
                              * keys (view_steps) gave it */
    imgpu_eq_mode mode;      /* M: the contrast ops' --mode, one for all */
    long angle_c;            /* the angle in hundredths of a degree, (-18000, 18000]: k / 100.0
                              * is the double that strtod gives for the printed decimal */
    imgpu_filter filter;
    int crop;
    /* the image */
    int src_w, src_h, src_c; /* 0 when none is loaded */
    int src_depth;           /* 8 or 16 */
    /* the window of 16-bit levels shown black..white (16-bit images only; a view setting, the
     * saved and printed results keep every level): auto is each image's min..max */
    int wl_auto;
    double wl_lo, wl_hi;     /* the window when not auto */
    double wl_cur_lo, wl_cur_hi; /* the processed image's window now (set by the main loop):
                              * where the keys start from auto */
    const char *path;
    /* the view */
    int fb_w, fb_h;
    double px_per_win;       /* framebuffer pixels per window coordinate (HiDPI) */
    double zoom, ox, oy;
    int fit;                 /* refit on resize and on size changes */
    vw_show show, show_before_space;
    double split_frac;       /* divider position as a share of the framebuffer width */
    int hist;                /* a vw_hist_pos: H cycles it */
    int help;
    /* pointer state */
    double cx, cy;
    int drag;
    double drag_x, drag_y, drag_a0;
    long drag_angle0;
    /* requests for the main loop */
    int dirty_ops, dirty_view, quit, want_save, want_copy, want_fullsize;
    int open_delta;          /* N / P: +1 / -1 */
    char drop_path[4096];    /* a dropped file ("" when none): the loop opens it */
    double gpu_ms;           /* last processing time, for the title */
} vw_app;

/* GLFW key and mouse codes are the vocabulary (GLFW_KEY_*, GLFW_MOD_*, GLFW_MOUSE_BUTTON_*). */
void vw_app_reset(vw_app *a);            /* everything to defaults (R) */
void vw_app_fit(vw_app *a);              /* Home */
void vw_app_key(vw_app *a, int key, int mods);
void vw_app_button(vw_app *a, int button, int press, int mods);
void vw_app_cursor(vw_app *a, double x, double y);   /* framebuffer pixels */
void vw_app_scroll(vw_app *a, double dy);
void vw_app_resize(vw_app *a, int fb_w, int fb_h);
void vw_app_drop(vw_app *a, const char *path);
/* The ops of the current settings (at most 2): the contrast op shown, then the rotation. */
int vw_app_ops(const vw_app *a, imgpu_op ops[2]);
/* The processed image's size for the current settings. */
void vw_app_result_size(const vw_app *a, int *w, int *h);
/* The draw parameters of the current view. */
vw_draw vw_app_draw(const vw_app *a);
/* The equivalent imgpu command line(s) into buf; out_path is the output file named there. */
void vw_app_command_line(const vw_app *a, const char *out_path, char *buf, size_t n);
/* "equalize luminance + rotate 12.5 bilinear expand" (or "original"): each op as its descriptor
 * writes it (IMGPU_OP_TEXT_STATUS). */
void vw_app_describe(const vw_app *a, char *buf, size_t n);
/* Angle as the shortest decimal: "12.5", "-90", "0.01". */
void vw_angle_string(long angle_c, char *buf, size_t n);
/* A double as the shortest plain decimal that strtod reads back as the same double: "40", "2.5"
 * (%.17g where no plain decimal of up to 17 places does). */
void vw_number_string(double x, char *buf, size_t n);

/* ---- events.c ----------------------------------------------------------------------------- */
/* Reads FILE's events (see events.c for the format) and feeds them to the app one by one,
 * calling step(a, user) after each so the caller can process and draw as a frame would.
 * 0, or -1 with a message naming the file and line. */
int vw__events_run(vw_app *a, const char *path, int (*step)(vw_app *a, void *user), void *user);

#endif
