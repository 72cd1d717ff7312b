/* viewer.c — imgpu-view, the program behind `imgpu view`: options, the list of images, the
 * main loop and the headless snapshots.
 *
 * Interactive: a GLFW window; the loop sleeps in glfwWaitEvents until input arrives (idle
 * costs nothing), re-runs the ops only when a setting changed, and redraws only when the
 * view changed. Snapshots (--snapshot OUT): one frame rendered offscreen (EGL's device
 * platform where a GPU is, else a hidden GLFW window or Mesa's EGL) and written with the
 * CLI's writer; without --size the frame is the processed image at 1:1, read back through
 * GL, so it equals the `imgpu OP` command's output pixel for pixel.
 */
#include "viewer.h"
#include "error.h"
#include "io.h"

#include <GL/glew.h>
#include <GLFW/glfw3.h>

#include "backend/cuda/interop.h"
#include "session.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };
enum { CTX_AUTO = 0, CTX_EGL, CTX_GLFW };

static const char s_help[] =
    "usage: imgpu view [FILE|DIR]... [OPTIONS]\n"
    "\n"
    "Shows images processed live on the GPU (CUDA-OpenGL interop; elsewhere the CPU and a\n"
    "texture upload). One file opens its folder's images for N / P; a folder opens its images.\n"
    "\n"
    "settings (also the start of an interactive session):\n";
/* ... each op's lines from the op table (view_doc), then: */
static const char s_help_rest[] =
    "  --histogram          show the histogram overlay (labelled BEFORE / AFTER) at the lower\n"
    "                       right; H steps it: lower right, lower left, top right, top left, off\n"
    "16-bit images are processed in 16 bits (saved and printed as such) and shown through a\n"
    "window of levels, black..white: auto is the shown image's min..max (A); Up / Down move\n"
    "it by a tenth of its width (Shift: a hundredth), = / - narrow / widen it by 1.25; the\n"
    "title shows it, and view snapshots (--size) honour it. The histogram overlay's panels span\n"
    "the data's range, min..max, as their labels say (BEFORE 3160..10760).\n"
    "headless:\n"
    "  --snapshot OUT       render one frame offscreen and write it; without --size it is the\n"
    "                       processed image at 1:1, equal to the CLI's output\n"
    "  --size WxH           snapshot of the view as a WxH window shows it (RGB)\n"
    "  --frames N           process N frames first (with --stats: per-frame GPU time)\n"
    "  --stats              print the display path and GL, and with --frames the per-frame times\n"
    "  --events FILE        feed scripted key/mouse events, one per line (docs/cli.md, \"Scripted\n"
    "                       events\": key [shift+]NAME, move X Y, drag, scroll, resize, drop)\n"
    "other:\n"
    "  --screenshot OUT     window: on quitting, write what the window shows (its framebuffer)\n"
    "  --save-dir DIR       where S saves (default: next to the input; never overwrites)\n"
    "  --device auto|cpu|cuda (default auto, or IMGPU_DEVICE)\n"
    "  --no-interop         force the glTexSubImage2D upload path\n"
    "  --context auto|egl|glfw  GL context for snapshots (auto: EGL when a GPU is usable,\n"
    "                       else a hidden GLFW window when $DISPLAY is set, else EGL)\n"
    "  --window WxH         initial window size (default 1280x800)\n"
    "  --max-pixels N       refuse images, and results of the ops, larger than N pixels\n"
    "  --max-memory N       refuse decodes and ops needing more than N bytes of memory (K, M, G;\n"
    "                       default 8G; environment: IMGPU_MAX_PIXELS, IMGPU_MAX_MEMORY)\n"
    "  --max-file-size N    refuse files over N bytes (K, M, G; default 1G)\n"
    "  --max-decode-time S  give up decoding a file after S seconds (default 30; environment:\n"
    "                       IMGPU_MAX_FILE_SIZE, IMGPU_MAX_DECODE_TIME)\n"
    "  --no-auto-orient     show the stored pixels (default: upright by EXIF orientation)\n"
    "  --page N             the page of multi-page TIFFs to show (default 0)\n"
    "  --quiet  -h, --help\n"
    "\n"
    "controls: see '?' in the window, or docs/cli.md.\n";

/* The '?' overlay: each op's keys from the op table (view_keys), then these. */
static const char s_controls_rest[] =
    "WHEEL  ZOOM   LEFT DRAG  PAN   HOME  FIT   1  1:1\n"
    "SPACE  ORIGINAL/PROCESSED   V  SPLIT VIEW (DRAG THE DIVIDER)\n"
    "H  HISTOGRAM (BEFORE / AFTER, CDF): LOWER RIGHT > LOWER LEFT > TOP RIGHT > TOP LEFT > OFF\n"
    "16-BIT: UP/DOWN  WINDOW LEVEL (SHIFT FINE)   = / -  NARROWER / WIDER   A  AUTO (MIN..MAX)\n"
    "S  SAVE   CTRL+C  PRINT THE IMGPU COMMAND LINE\n"
    "N / P  NEXT / PREVIOUS IMAGE   DROP A FILE TO OPEN IT\n"
    "?  THIS HELP   ESC / Q  QUIT";

typedef struct options {
    const char **files;
    int nfiles;
    const char *snapshot, *events, *save_dir, *screenshot;
    int size_w, size_h, win_w, win_h;
    int frames, stats, histogram, quiet, interop, context;
    int have_rotate;
    /* Each op of the op table: whether its --OP was given, and the parameters its options set
     * (an option goes to every op that has it: --mode to each contrast op; the viewer has one
     * mode). Not chained as in batch: a setting may come before or after its --OP. */
    unsigned char op_on[VW_MAX_OPS];
    imgpu_op vop[VW_MAX_OPS];
    const imgpu_param *given[VW_MAX_OPS]; /* the op parameters given, in order */
    int ngiven;
    imgpu_device device;
    imgpu_run_options run;  /* limits (--max-*) */
} options;

typedef struct viewer {
    options o;
    vw_app app;
    vw_context ctx;
    vw_display *disp;
    imgpu_image *img;
    imgpu_meta *meta;   /* img's ICC profile, EXIF, XMP and text: S and --snapshot write them, as the CLI */
    char **list; /* the images N / P walk through */
    int nlist, cur;
    char title[1024];
    char note[1024]; /* what N / P / a drop skipped: in the title and the overlay until the next one */
    double *frame_ms;
    int nframe_ms, cap_frame_ms;
} viewer;

/* ---- options -------------------------------------------------------------------------------- */

static int usage(const char *fmt, const char *arg)
{
    char line[IMGPU_MESSAGE_MAX];
    imgpu_format_message(line, sizeof line, fmt, arg);   /* arg comes from argv: escaped */
    fprintf(stderr, "imgpu: view: %s\ntry 'imgpu view --help'\n", line);
    return EXIT_USAGE;
}

/* A usage error recorded by options.h's parsers (already escaped). */
static int usage_recorded(void)
{
    fprintf(stderr, "imgpu: view: %s\ntry 'imgpu view --help'\n", imgpu_usage_message());
    return EXIT_USAGE;
}

static int parse_size(const char *s, int *w, int *h)
{
    char *end;
    errno = 0;
    long a = strtol(s, &end, 10);
    if (errno || end == s || (*end != 'x' && *end != 'X') || a < 1 || a > 16384)
        return -1;
    const char *t = end + 1;
    long b = strtol(t, &end, 10);
    if (errno || end == t || *end || b < 1 || b > 16384)
        return -1;
    *w = (int)a;
    *h = (int)b;
    return 0;
}

/* The index of op d in the op table. */
static int op_index(const imgpu_op_desc *d)
{
    for (int k = 0; k < imgpu_op_count() && k < VW_MAX_OPS; k++)
        if (imgpu_op_at(k) == d)
            return k;
    return -1;
}

/* One contrast op at a time (the ops with a view_key: E and C switch between them), and a
 * parameter only one contrast op has needs that op ("--X needs --OP"). */
static int check_contrast(const options *o)
{
    int first = -1;
    for (int k = 0; k < imgpu_op_count() && k < VW_MAX_OPS; k++) {
        const imgpu_op_desc *d = imgpu_op_at(k);
        if (!d->view_key || !o->op_on[k])
            continue;
        if (first >= 0) {
            char msg[160];
            const imgpu_op_desc *f = imgpu_op_at(first);
            snprintf(msg, sizeof msg, "--%s and --%s exclude each other (%c and %c switch between them)", f->name,
                     d->name, f->view_key, d->view_key);
            return usage("%s", msg);
        }
        first = k;
    }
    for (int k = 0; k < imgpu_op_count() && k < VW_MAX_OPS; k++) {
        const imgpu_op_desc *d = imgpu_op_at(k);
        if (!d->view_key || o->op_on[k])
            continue;
        for (int j = 0; j < d->nparams; j++) {
            const imgpu_param *p = &d->params[j];
            int given = 0, owners = 0;
            for (int g = 0; g < o->ngiven; g++)
                given |= !strcmp(o->given[g]->name, p->name);
            for (int m = 0; m < imgpu_op_count(); m++)
                owners += imgpu_op_at(m)->view_key && imgpu_opt_op_has(imgpu_op_at(m), p, IMGPU_FRONT_VIEW);
            if (given && owners == 1 && (p->fronts & IMGPU_FRONT_VIEW)) {
                char msg[160];
                snprintf(msg, sizeof msg, "--%s needs --%s", p->name, d->name);
                return usage("%s", msg);
            }
        }
    }
    return 0;
}

static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    for (int k = 0; k < imgpu_op_count() && k < VW_MAX_OPS; k++)
        o->vop[k] = imgpu_op_default(imgpu_op_at(k)->kind);
    o->device = IMGPU_DEVICE_AUTO;
    int device_given = 0;
    o->interop = 1;
    o->win_w = 1280;
    o->win_h = 800;
    o->files = calloc((size_t)argc + 1, sizeof *o->files);
    if (!o->files)
        return usage("%s", "out of memory");
    int opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (opts_done || a[0] != '-' || !strcmp(a, "-")) {
            o->files[o->nfiles++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            opts_done = 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(s_help, stdout);
            imgpu_opt_help_view_ops(stdout);
            fputs(s_help_rest, stdout);
            exit(fflush(stdout) ? EXIT_FAIL : EXIT_OK); /* main's own helper: nothing to clean */
        }
        char name[64];
        const char *val = NULL, *eq = strchr(a, '=');
        if (eq) {
            snprintf(name, sizeof name, "%.*s", (int)(eq - a), a);
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
        }
        /* the viewer's own flags; the ops and their options are the op table's, the limits
         * options.h's table */
        static const char *flags[] = {"--histogram", "--stats", "--quiet", "--no-interop"};
        const int dashed = !strncmp(name, "--", 2);
        const size_t nlen = dashed ? strlen(name + 2) : 0;
        const imgpu_op_desc *add = dashed ? imgpu_opt_find_op(name + 2, nlen) : NULL;
        if (add && (!add->view_doc || !*add->view_doc))
            add = NULL; /* an op the viewer does not show (no view_doc): not its option */
        const imgpu_param *pp = dashed && !add ? imgpu_opt_find_param(NULL, name + 2, nlen, IMGPU_FRONT_VIEW) : NULL;
        const imgpu_opt *so = dashed && !add && !pp ? imgpu_opt_find(name + 2, nlen, IMGPU_FRONT_VIEW) : NULL;
        int is_flag = (so && !so->metavar) || (pp && !pp->metavar) || (add && !add->add_param);
        for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
            is_flag |= !strcmp(name, flags[k]);
        if (is_flag && val)
            return usage("option '%s' takes no value", name);
        if (!is_flag && !val) {
            if (i + 1 >= argc)
                return usage("option '%s' needs a value", name);
            val = argv[++i];
        }
        if (add) {
            /* --OP [VALUE]: the op on (--rotate DEG: its angle) */
            const int k = op_index(add);
            imgpu_op fresh;
            if (k < 0 || imgpu_opt_add_op(add, val, &fresh) < 0)
                return usage_recorded();
            if (add->add_param) {
                const imgpu_param *ap = imgpu_op_param(add, add->add_param, strlen(add->add_param));
                if (imgpu_param_apply(ap, val, &o->vop[k]) < 0)
                    return usage_recorded();
            }
            o->op_on[k] = 1;
            o->have_rotate |= add->kind == IMGPU_OP_ROTATE;
        } else if (pp) {
            /* a parameter: every op that has it */
            for (int k = 0; k < imgpu_op_count() && k < VW_MAX_OPS; k++) {
                const imgpu_param *p = imgpu_opt_find_param(imgpu_op_at(k), name + 2, nlen, IMGPU_FRONT_VIEW);
                if (p && imgpu_param_apply(p, val, &o->vop[k]) < 0)
                    return usage_recorded();
            }
            if (o->ngiven < VW_MAX_OPS)
                o->given[o->ngiven++] = pp;
        } else if (so) {
            if (imgpu_opt_apply(so, val, &o->run) < 0)
                return usage_recorded();
        }
        else if (!strcmp(name, "--histogram")) o->histogram = 1;
        else if (!strcmp(name, "--stats")) o->stats = 1;
        else if (!strcmp(name, "--quiet")) o->quiet = 1;
        else if (!strcmp(name, "--no-interop")) o->interop = 0;
        else if (!strcmp(name, "--snapshot")) o->snapshot = val;
        else if (!strcmp(name, "--events")) o->events = val;
        else if (!strcmp(name, "--save-dir")) o->save_dir = val;
        else if (!strcmp(name, "--screenshot")) o->screenshot = val;
        else if (!strcmp(name, "--size")) {
            if (parse_size(val, &o->size_w, &o->size_h))
                return usage("--size: '%s' is not WxH (1..16384 each)", val);
        } else if (!strcmp(name, "--window")) {
            if (parse_size(val, &o->win_w, &o->win_h))
                return usage("--window: '%s' is not WxH (1..16384 each)", val);
        } else if (!strcmp(name, "--frames")) {
            char *end;
            long n = strtol(val, &end, 10);
            if (end == val || *end || n < 1 || n > 100000)
                return usage("--frames: '%s' is not a count 1..100000", val);
            o->frames = (int)n;
        } else if (!strcmp(name, "--device")) {
            if (imgpu_opt_device(val, &o->device) < 0)
                return usage_recorded();
            device_given = 1;
        } else if (!strcmp(name, "--context")) {
            if (!strcmp(val, "auto")) o->context = CTX_AUTO;
            else if (!strcmp(val, "egl")) o->context = CTX_EGL;
            else if (!strcmp(val, "glfw")) o->context = CTX_GLFW;
            else return usage("--context: '%s' is not auto, egl or glfw", val);
        } else {
            return usage("unknown option '%s'", name);
        }
    }
    if (o->nfiles == 0)
        return usage("%s", "no image given");
    /* the bounds every pipeline obeys (imgpu_pipeline_plan): options first, then IMGPU_MAX_* */
    if (imgpu_load_options_from_env(&o->run.load) < 0)
        return usage("%s", imgpu_error_message());
    imgpu_limits lim = {o->run.load.max_pixels, o->run.max_memory};
    if (imgpu_limits_from_env(&lim) < 0)
        return usage("%s", imgpu_error_message());
    imgpu_set_limits(&lim);
    if (!device_given && imgpu_device_from_env(&o->device) < 0)   /* IMGPU_DEVICE; --device wins */
        return usage("%s", imgpu_error_message());
    if (check_contrast(o) != 0)
        return EXIT_USAGE;
    if (o->snapshot && imgpu_format_from_path(o->snapshot) == IMGPU_FORMAT_UNKNOWN)
        return usage("--snapshot: '%s' has no known image extension (.png .jpg .bmp .tga .pnm)", o->snapshot);
    if (o->screenshot && (o->snapshot || imgpu_format_from_path(o->screenshot) == IMGPU_FORMAT_UNKNOWN))
        return usage("--screenshot: '%s' needs a window (no --snapshot) and an image extension", o->screenshot);
    if ((o->frames || o->size_w) && !o->snapshot)
        return usage("%s", "--frames and --size go with --snapshot");
    return 0;
}

/* ---- the image list -------------------------------------------------------------------------- */

static int is_image_name(const char *name)
{
    return name[0] != '.' && imgpu_format_from_path(name) != IMGPU_FORMAT_UNKNOWN;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int list_add(viewer *v, const char *path)
{
    char **l = realloc(v->list, (size_t)(v->nlist + 1) * sizeof *l);
    if (!l || !(l[v->nlist] = strdup(path))) {
        if (l)
            v->list = l;
        return imgpu_error("out of memory");
    }
    v->list = l;
    v->nlist++;
    return 0;
}

/* The images of a folder, sorted by name. */
static int list_dir(viewer *v, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return imgpu_error("cannot read folder '%s': %s", dir, strerror(errno));
    int first = v->nlist;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_image_name(e->d_name))
            continue;
        char p[4096];
        if (snprintf(p, sizeof p, "%s/%s", strcmp(dir, "") ? dir : ".", e->d_name) >= (int)sizeof p)
            continue;
        struct stat st;
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && list_add(v, p) != 0) {
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    qsort(v->list + first, (size_t)(v->nlist - first), sizeof *v->list, cmp_str);
    return 0;
}

static int build_list(viewer *v)
{
    struct stat st;
    if (v->o.nfiles == 1 && stat(v->o.files[0], &st) == 0 && S_ISDIR(st.st_mode)) {
        if (list_dir(v, v->o.files[0]) != 0)
            return -1;
        if (v->nlist == 0)
            return imgpu_error("no images in folder '%s'", v->o.files[0]);
        return 0;
    }
    if (v->o.nfiles == 1 && (!v->o.snapshot || v->o.events)) {
        /* one file: its folder's images, starting at it (a scripted snapshot's N / P walk
         * them as a window's do; a snapshot without --events never leaves the file) */
        const char *f = v->o.files[0], *slash = strrchr(f, '/');
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - f) : 1, slash ? f : ".");
        if (slash == f)
            snprintf(dir, sizeof dir, "/");
        if (list_dir(v, dir) == 0) {
            char want[8200];
            snprintf(want, sizeof want, "%s/%s", dir, slash ? slash + 1 : f);
            for (int i = 0; i < v->nlist; i++)
                if (!strcmp(v->list[i], want)) {
                    free(v->list[i]);
                    v->list[i] = strdup(f); /* keep the name as given (shown, and in command lines) */
                    v->cur = i;
                    return v->list[i] ? 0 : imgpu_error("out of memory");
                }
        }
        imgpu_error_clear();
        for (int i = 0; i < v->nlist; i++)
            free(v->list[i]);
        v->nlist = 0;
    }
    for (int i = 0; i < v->o.nfiles; i++)
        if (list_add(v, v->o.files[i]) != 0)
            return -1;
    return 0;
}

/* ---- frames ---------------------------------------------------------------------------------- */

static void update_title(viewer *v)
{
    if (!v->ctx.window)
        return;
    char ops[256];
    vw_app_describe(&v->app, ops, sizeof ops);
    const char *name = strrchr(v->app.path, '/');
    name = name ? name + 1 : v->app.path;
    char shown[512];
    snprintf(v->title, sizeof v->title, "%s  %dx%d %s%s  |  %s  |  %.2f ms %s (%s)",
             imgpu_escape(name, shown, sizeof shown), v->app.src_w, v->app.src_h,
             imgpu_image_layout_name(v->app.src_c), v->app.src_depth == 16 ? " 16-bit" : "", ops,
             v->app.gpu_ms, vw_display_path(v->disp) == VW_PATH_UPLOAD_CPU ? "CPU" : "GPU",
             vw_display_path_name(vw_display_path(v->disp)));
    if (v->app.src_depth == 16) {
        size_t k = strlen(v->title);
        snprintf(v->title + k, sizeof v->title - k, "  |  window %.0f..%.0f%s", v->app.wl_cur_lo, v->app.wl_cur_hi,
                 v->app.wl_auto ? " (auto)" : "");
    }
    if (v->note[0]) {
        size_t k = strlen(v->title);
        snprintf(v->title + k, sizeof v->title - k, "  |  %s", v->note);
    }
    glfwSetWindowTitle(v->ctx.window, v->title);
}

/* The processed image's window of 16-bit levels now, for the keys and the title. */
static void update_window(viewer *v)
{
    vw_draw d = vw_app_draw(&v->app);
    double proc[2], orig[2];
    vw_display_window(v->disp, &d, proc, orig);
    v->app.wl_cur_lo = proc[0];
    v->app.wl_cur_hi = proc[1];
}

/* The note ("" clears it): the title, and an overlay at the bottom-left of the view (lines of
 * at most 100 characters, so a long path still fits a window). */
static int set_note(viewer *v, const char *text)
{
    snprintf(v->note, sizeof v->note, "%s", text);
    char wrapped[sizeof v->note + 16];
    size_t k = 0;
    int col = 0;
    for (const char *p = v->note; *p && k + 2 < sizeof wrapped; p++) {
        if (*p == '\n' || col == 100) {
            wrapped[k++] = '\n';
            col = 0;
            if (*p == '\n')
                continue;
        }
        wrapped[k++] = *p;
        col++;
    }
    wrapped[k] = '\0';
    imgpu_image *im = NULL;
    if (v->note[0] && !(im = vw__text_image(wrapped, 2)))
        return -1;
    int rc = vw_display_set_note(v->disp, im);
    imgpu_image_free(im);
    update_title(v);
    v->app.dirty_view = 1;
    return rc;
}

/* Files N / P or a drop could not show (each already said so on stderr): say so in the
 * window. msg: the last one's message. */
static void note_skipped(viewer *v, int nskipped, const char *msg)
{
    char text[sizeof v->note];
    int n = nskipped == 1 ? snprintf(text, sizeof text, "skipped: ")
                          : snprintf(text, sizeof text, "skipped %d files, the last: ", nskipped);
    snprintf(text + n, sizeof text - (size_t)n, "%.*s", (int)(sizeof text - (size_t)n - 1), msg);
    if (set_note(v, text) != 0) { /* the note is a courtesy: the message went to stderr */
        fprintf(stderr, "imgpu: %s\n", imgpu_error_message());
        imgpu_error_clear();
    }
}

static int process(viewer *v)
{
    imgpu_op ops[2];
    int n = vw_app_ops(&v->app, ops);
    double ms = 0;
    if (vw_display_process(v->disp, ops, n, v->app.hist != VW_HIST_OFF, &ms) != 0)
        return -1;
    v->app.gpu_ms = ms;
    update_window(v);
    v->app.dirty_ops = 0;
    v->app.dirty_view = 1;
    if (v->nframe_ms < v->cap_frame_ms)
        v->frame_ms[v->nframe_ms++] = ms;
    update_title(v);
    return 0;
}

/* Load list[i] and make it the current image (settings stay; the view refits). */
static int open_image(viewer *v, int i)
{
    imgpu_load_result r = {0};
    imgpu_image *img = imgpu_image_load_ex(v->list[i], &v->o.run.load, &r);
    if (!img)
        return -1;
    if (vw_display_set_image(v->disp, img) != 0) {
        imgpu_image_free(img);
        imgpu_meta_free(r.meta);
        return -1;
    }
    imgpu_image_free(v->img);
    imgpu_meta_free(v->meta);
    v->img = img;
    v->meta = r.meta;
    v->cur = i;
    v->app.path = v->list[i];
    v->app.src_w = img->width;
    v->app.src_h = img->height;
    v->app.src_c = img->channels;
    v->app.src_depth = img->depth;
    if (v->ctx.window)
        glfwSetWindowAspectRatio(v->ctx.window, img->width, img->height);
    vw_app_fit(&v->app);
    return process(v);
}

/* S: the processed image at full resolution, next to the input (or in --save-dir) as
 * NAME.view.png, NAME.view-2.png, ...: never over an existing file. The name is reserved with
 * O_EXCL first, then the CLI's atomic writer renames its temp file over that placeholder. */
static int save(viewer *v)
{
    const char *path = v->app.path, *slash = strrchr(path, '/');
    char dir[4096], stem[1024], out[8192];
    if (v->o.save_dir)
        snprintf(dir, sizeof dir, "%s", v->o.save_dir);
    else if (slash)
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    else
        snprintf(dir, sizeof dir, ".");
    snprintf(stem, sizeof stem, "%s", slash ? slash + 1 : path);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem)
        *dot = '\0';
    int fd = -1;
    for (int k = 1; k < 10000 && fd < 0; k++) {
        if (k == 1)
            snprintf(out, sizeof out, "%s/%s.view.png", dir, stem);
        else
            snprintf(out, sizeof out, "%s/%s.view-%d.png", dir, stem, k);
        fd = open(out, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0 && errno != EEXIST)
            return imgpu_error("cannot save into '%s': %s", dir, strerror(errno));
    }
    if (fd < 0)
        return imgpu_error("cannot save: too many %s.view-N.png files in '%s'", stem, dir);
    close(fd);
    imgpu_image *res = vw_display_result(v->disp);
    /* no_follow: the placeholder could be swapped for a link before the rename; the input's
     * metadata travels as with the CLI */
    imgpu_save_options so = { .quality = 0, .png_level = -1, .no_follow = 1, .meta = v->meta };
    if (!res || imgpu_image_save(res, out, &so) != 0) {
        imgpu_image_free(res);
        unlink(out);
        return -1;
    }
    imgpu_image_free(res);
    imgpu_notice("saved %s", out);
    return 0;
}

static void copy_command(viewer *v)
{
    const char *path = v->app.path, *slash = strrchr(path, '/');
    char out[8192], stem[1024], line[20000];
    snprintf(stem, sizeof stem, "%s", slash ? slash + 1 : path);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem)
        *dot = '\0';
    if (v->o.save_dir)
        snprintf(out, sizeof out, "%s/%s.view.png", v->o.save_dir, stem);
    else if (slash)
        snprintf(out, sizeof out, "%.*s/%s.view.png", (int)(slash - path), path, stem);
    else
        snprintf(out, sizeof out, "%s.view.png", stem);
    vw_app_command_line(&v->app, out, line, sizeof line);
    char shown[sizeof line];
    printf("%s\n", imgpu_escape(line, shown, sizeof shown));
    fflush(stdout);
    if (v->ctx.window)
        glfwSetClipboardString(v->ctx.window, line);
}

static int draw(viewer *v)
{
    if (v->app.src_depth == 16) { /* the window keys change the view only: the title follows */
        double lo = v->app.wl_cur_lo, hi = v->app.wl_cur_hi;
        update_window(v);
        if (lo != v->app.wl_cur_lo || hi != v->app.wl_cur_hi)
            update_title(v);
    }
    vw_draw d = vw_app_draw(&v->app);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (vw_display_draw(v->disp, &d, v->app.fb_w, v->app.fb_h) != 0)
        return -1;
    glfwSwapBuffers(v->ctx.window);
    v->app.dirty_view = 0;
    return 0;
}

/* Act on what the input asked for: what one frame of the loop does. */
static int handle_requests(vw_app *a, void *user)
{
    viewer *v = user;
    if (a->drop_path[0]) {
        char p[sizeof a->drop_path];
        memcpy(p, a->drop_path, sizeof p);
        a->drop_path[0] = '\0';
        if (v->note[0] && set_note(v, "") != 0)
            return -1;
        if (list_add(v, p) != 0 || open_image(v, v->nlist - 1) != 0) { /* a bad drop is not fatal */
            char msg[sizeof v->note];
            snprintf(msg, sizeof msg, "%s", imgpu_error_message());
            imgpu_error_clear();
            fprintf(stderr, "imgpu: skipped: %s\n", msg);
            note_skipped(v, 1, msg);
        }
    }
    if (a->open_delta) {
        /* N / P: the next file that opens; what cannot be shown (corrupt, unsupported) is
         * skipped, not retried on every press, so the files after it stay reachable */
        const int step = a->open_delta;
        int skipped = 0;
        char last[sizeof v->note] = "";
        a->open_delta = 0;
        if (v->note[0] && set_note(v, "") != 0)
            return -1;
        for (int k = 1; k < v->nlist; k++) {
            int i = ((v->cur + step * k) % v->nlist + v->nlist) % v->nlist;
            if (open_image(v, i) == 0)
                break;
            skipped++;
            snprintf(last, sizeof last, "%s", imgpu_error_message());
            fprintf(stderr, "imgpu: skipped: %s\n", last);
            imgpu_error_clear();
        }
        if (skipped)
            note_skipped(v, skipped, last);
    }
    if (a->dirty_ops && process(v) != 0)
        return -1;
    if (a->want_save) {
        a->want_save = 0;
        if (save(v) != 0) {
            fprintf(stderr, "imgpu: %s\n", imgpu_error_message());
            imgpu_error_clear();
        }
    }
    if (a->want_copy) {
        a->want_copy = 0;
        copy_command(v);
    }
    if (v->ctx.window && a->dirty_view && draw(v) != 0)
        return -1;
    if (v->ctx.window)
        glfwPollEvents();
    return 0;
}

/* --screenshot: the window's framebuffer as drawn, read back from the back buffer. */
static int screenshot(viewer *v)
{
    const int w = v->app.fb_w, h = v->app.fb_h;
    vw_draw d = vw_app_draw(&v->app);
    imgpu_image *im = imgpu_image_new(w, h, 4, 8), *rgb = imgpu_image_new(w, h, 3, 8);
    int rc = -1;
    if (!im || !rgb)
        goto done;
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (vw_display_draw(v->disp, &d, w, h) != 0)
        goto done;
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, im->data);
    for (int y = 0; y < h; y++) /* GL's row 0 is the bottom */
        for (int x = 0; x < w; x++)
            memcpy(imgpu_image_row(rgb, y) + x * 3, imgpu_image_row(im, h - 1 - y) + x * 4, 3);
    rc = imgpu_image_save(rgb, v->o.screenshot, NULL);
done:
    imgpu_image_free(im);
    imgpu_image_free(rgb);
    return rc;
}

/* ---- snapshots --------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int run_snapshot(viewer *v)
{
    if (v->o.frames > 0) {
        v->nframe_ms = 0;
        double t0 = wall_ms();
        for (int i = 0; i < v->o.frames; i++)
            if (process(v) != 0)
                return -1;
        glFinish();
        double wall = (wall_ms() - t0) / v->o.frames;
        if (v->o.stats && v->nframe_ms > 0) {
            qsort(v->frame_ms, (size_t)v->nframe_ms, sizeof *v->frame_ms, cmp_double);
            char ops[256];
            vw_app_describe(&v->app, ops, sizeof ops);
            printf("frames: %d of %dx%d %s, %s (%s)\n", v->o.frames, v->app.src_w, v->app.src_h,
                   imgpu_image_layout_name(v->app.src_c), ops, vw_display_path_name(vw_display_path(v->disp)));
            printf("%s time per frame: median %.3f ms, min %.3f ms, max %.3f ms; wall per frame %.3f ms\n",
                   vw_display_path(v->disp) == VW_PATH_UPLOAD_CPU ? "CPU" : "GPU",
                   v->frame_ms[v->nframe_ms / 2], v->frame_ms[0], v->frame_ms[v->nframe_ms - 1], wall);
        }
    }
    update_window(v);
    if (v->o.stats && v->app.src_depth == 16)
        printf("window: %.0f..%.0f%s\n", v->app.wl_cur_lo, v->app.wl_cur_hi, v->app.wl_auto ? " (auto)" : "");
    imgpu_image *snap;
    /* The 1:1 snapshot is the CLI's output, metadata included; a --size view is a picture of
     * the window (the image scaled, the overlays): only the ICC profile, which its colours are
     * still in, travels, not the image's EXIF and XMP. */
    imgpu_save_options so = { .png_level = -1, .meta = v->meta };
    imgpu_meta view_meta;
    memset(&view_meta, 0, sizeof view_meta);
    if (v->o.size_w) {
        vw_draw d = vw_app_draw(&v->app);
        snap = vw_display_read_view(v->disp, &d, v->o.size_w, v->o.size_h);
        if (v->meta) {
            view_meta.icc = v->meta->icc;   /* borrowed: view_meta is never freed */
            view_meta.icc_len = v->meta->icc_len;
        }
        so.meta = &view_meta;
    } else {
        snap = vw_display_read_raw(v->disp);
    }
    if (!snap)
        return -1;
    int rc = imgpu_image_save(snap, v->o.snapshot, &so);
    imgpu_image_free(snap);
    return rc;
}

/* ---- main ------------------------------------------------------------------------------------ */

static int gpu_usable(imgpu_device dev)
{
    if (dev == IMGPU_DEVICE_CPU)
        return 0;
    int ok = imgpu_session_available();
    if (!ok)
        imgpu_error_clear(); /* the display says why, once */
    return ok;
}

static int open_context(viewer *v)
{
    if (!v->o.snapshot)
        return vw__glfw_open(&v->ctx, v->o.win_w, v->o.win_h, 1, "imgpu view", &v->app);
    int kind = v->o.context;
    if (kind == CTX_AUTO) {
        const char *disp = getenv("DISPLAY");
        kind = gpu_usable(v->o.device) && v->o.interop ? CTX_EGL : (disp && *disp ? CTX_GLFW : CTX_EGL);
    }
    if (kind == CTX_EGL)
        return vw__egl_open(&v->ctx);
    return vw__glfw_open(&v->ctx, 64, 64, 0, "imgpu view", NULL);
}

static void close_context(viewer *v)
{
    if (v->ctx.kind == VW_CTX_EGL)
        vw__egl_close(&v->ctx);
    else
        vw__glfw_close(&v->ctx);
}

int main(int argc, char **argv)
{
    viewer v;
    memset(&v, 0, sizeof v);
    int rc = parse_options(argc, argv, &v.o);
    if (rc != 0) {
        free(v.o.files);
        return rc;
    }
    imgpu_set_quiet(v.o.quiet);
    rc = EXIT_FAIL;
    if (build_list(&v) != 0)
        goto done;
    vw_app *a = &v.app;
    vw_app_reset(a);
    /* the ops as the options left them: the contrast op shown, every op's parameters, the
     * one mode (from any op whose --mode the viewer takes: --mode went to each of them; an
     * op's --mode outside the viewer's, as autolevel's linked|per-channel, is left at its
     * default by the options and must not reset the one mode: M and the shown op carry it) */
    imgpu_op rotate_op = imgpu_op_default(IMGPU_OP_ROTATE);
    for (int k = 0; k < imgpu_op_count() && k < VW_MAX_OPS; k++) {
        const imgpu_op_desc *d = imgpu_op_at(k);
        a->vop[k] = v.o.vop[k];
        if (d->view_key && v.o.op_on[k])
            a->contrast = k;
        const imgpu_param *m = imgpu_opt_find_param(d, "mode", 4, IMGPU_FRONT_VIEW);
        if (m)
            a->mode = (imgpu_eq_mode)*(const int *)imgpu_param_cptr(&v.o.vop[k], m->offset);
        if (d->kind == IMGPU_OP_ROTATE)
            rotate_op = v.o.vop[k];
    }
    a->filter = rotate_op.u.rotate.filter;
    a->crop = rotate_op.u.rotate.crop;
    a->hist = v.o.histogram ? VW_HIST_LOWER_RIGHT : VW_HIST_OFF;
    if (v.o.have_rotate) {
        /* to hundredths of a degree, wrapped to (-180, 180] as the controls keep it */
        const double deg = imgpu_rotate_angle(&rotate_op.u.rotate);   /* --clockwise folded in */
        double c = fmod(round(deg * 100.0), 36000.0);
        if (c > 18000) c -= 36000;
        if (c <= -18000) c += 36000;
        a->angle_c = (long)c;
        if (fabs(round(deg * 100.0) - deg * 100.0) > 1e-6)
            imgpu_notice("view: --rotate %g is rounded to hundredths of a degree", rotate_op.u.rotate.angle);
    }
    a->fb_w = v.o.snapshot ? (v.o.size_w ? v.o.size_w : 960) : v.o.win_w;
    a->fb_h = v.o.snapshot ? (v.o.size_h ? v.o.size_h : 720) : v.o.win_h;
    a->px_per_win = 1.0;
    if (v.o.frames && !(v.frame_ms = calloc((size_t)v.o.frames, sizeof *v.frame_ms)))
        goto done;
    v.cap_frame_ms = v.o.frames;
    if (open_context(&v) != 0)
        goto done;
    if (v.ctx.window && !v.o.snapshot) {
        /* a window shows its framebuffer; a snapshot's hidden window is only a context (64x64,
         * never shown): the view keeps the --size (or default) frame it is rendered into */
        int fw, fh;
        glfwGetFramebufferSize(v.ctx.window, &fw, &fh);
        a->fb_w = fw;
        a->fb_h = fh;
    }
    if (!(v.disp = vw_display_new(v.o.device, v.o.interop)))
        goto done;
    if (v.o.stats) {
        printf("display: %s; OpenGL %s (%s, %s) through %s\n", vw_display_path_name(vw_display_path(v.disp)),
               (const char *)glGetString(GL_VERSION), (const char *)glGetString(GL_VENDOR),
               (const char *)glGetString(GL_RENDERER), v.ctx.kind == VW_CTX_EGL ? "EGL" : "GLFW");
        fflush(stdout);
    }
    char controls[2048];
    imgpu_opt_help_view_keys(controls, sizeof controls);
    snprintf(controls + strlen(controls), sizeof controls - strlen(controls), "%s", s_controls_rest);
    imgpu_image *help = vw__text_image(controls, 2);
    if (!help || vw_display_set_help(v.disp, help) != 0) {
        imgpu_image_free(help);
        goto done;
    }
    imgpu_image_free(help);
    if (open_image(&v, v.cur) != 0)
        goto done;
    if (v.o.events && vw__events_run(a, v.o.events, handle_requests, &v) != 0)
        goto done;
    if (v.o.snapshot) {
        if (handle_requests(a, &v) != 0 || run_snapshot(&v) != 0)
            goto done;
    } else {
        while (!a->quit && !glfwWindowShouldClose(v.ctx.window)) {
            if (handle_requests(a, &v) != 0)
                goto done;
            if (!a->dirty_ops && !a->dirty_view && !a->drop_path[0] && !a->open_delta && !a->want_save &&
                !a->want_copy && !a->quit)
                glfwWaitEvents(); /* idle: sleep until input arrives */
        }
        if (v.o.screenshot && screenshot(&v) != 0)
            goto done;
    }
    rc = EXIT_OK;
done:
    if (rc != EXIT_OK)
        fprintf(stderr, "imgpu: %s\n", imgpu_error_message()[0] ? imgpu_error_message() : "unknown error");
    vw_display_free(v.disp);
    close_context(&v);
    imgpu_image_free(v.img);
    imgpu_meta_free(v.meta);
    for (int i = 0; i < v.nlist; i++)
        free(v.list[i]);
    free(v.list);
    free(v.frame_ms);
    free(v.o.files);
    imgpu_backend_shutdown();
    return rc;
}
