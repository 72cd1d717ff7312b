/* input.c — the viewer's controls: keys, mouse buttons, cursor motion, the wheel, window
 * resizes and dropped files turn into settings (what the ops do) and a view (where the image
 * sits). No GL and no GLFW calls here, only GLFW's key codes: the GLFW callbacks, the
 * --events script and the tests all drive the same functions. The main loop reads the
 * request flags (dirty_ops, want_save, ...) and acts on them.
 */
#include "viewer.h"

#include <GLFW/glfw3.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

enum { DIVIDER_GRAB = 8 }; /* framebuffer pixels either side of the divider that grab it */

static long wrap_angle(long c)
{
    /* (-180, 180] degrees in hundredths */
    c %= 36000;
    if (c > 18000)
        c -= 36000;
    if (c <= -18000)
        c += 36000;
    return c;
}

void vw_angle_string(long angle_c, char *buf, size_t n)
{
    long a = angle_c < 0 ? -angle_c : angle_c;
    if (a % 100 == 0)
        snprintf(buf, n, "%s%ld", angle_c < 0 ? "-" : "", a / 100);
    else if (a % 10 == 0)
        snprintf(buf, n, "%s%ld.%ld", angle_c < 0 ? "-" : "", a / 100, a % 100 / 10);
    else
        snprintf(buf, n, "%s%ld.%02ld", angle_c < 0 ? "-" : "", a / 100, a % 100);
}

void vw_number_string(double x, char *buf, size_t n)
{
    for (int prec = 0; prec <= 17; prec++) { /* plain decimals first: "40", "2.5" */
        snprintf(buf, n, "%.*f", prec, x);
        if (strtod(buf, NULL) == x)
            return;
    }
    snprintf(buf, n, "%.17g", x);
}

/* The contrast op shown, with the viewer's one mode (M) where it has a --mode. */
static imgpu_op contrast_op(const vw_app *a)
{
    imgpu_op op = a->vop[a->contrast];
    const imgpu_param *m = imgpu_op_param(imgpu_op_at(a->contrast), "mode", 4);
    if (m)
        *(int *)imgpu_param_ptr(&op, m, m->offset) = (int)a->mode;
    return op;
}

int vw_app_ops(const vw_app *a, imgpu_op ops[2])
{
    int n = 0;
    if (a->contrast >= 0)
        ops[n++] = contrast_op(a);
    if (a->angle_c != 0) {
        ops[n] = imgpu_op_rotate(a->angle_c / 100.0);
        ops[n].u.rotate.filter = a->filter;
        ops[n].u.rotate.crop = a->crop;
        n++;
    }
    return n;
}

void vw_app_result_size(const vw_app *a, int *w, int *h)
{
    *w = a->src_w;
    *h = a->src_h;
    if (a->angle_c != 0 && a->src_w > 0) {
        imgpu_op r = imgpu_op_rotate(a->angle_c / 100.0);
        r.u.rotate.crop = a->crop;
        imgpu_rotate_output_size(a->src_w, a->src_h, &r.u.rotate, w, h);
    }
}

void vw_app_fit(vw_app *a)
{
    int w, h;
    vw_app_result_size(a, &w, &h);
    a->fit = 1;
    a->dirty_view = 1;
    if (w <= 0 || h <= 0 || a->fb_w <= 0 || a->fb_h <= 0)
        return;
    double zx = (double)a->fb_w / w, zy = (double)a->fb_h / h;
    a->zoom = zx < zy ? zx : zy;
    a->ox = (a->fb_w - w * a->zoom) / 2;
    a->oy = (a->fb_h - h * a->zoom) / 2;
}

static void one_to_one(vw_app *a)
{
    int w, h;
    vw_app_result_size(a, &w, &h);
    /* keep the pixel at the window centre where it is, then snap to whole pixels */
    double u = (a->fb_w / 2.0 - a->ox) / a->zoom, v = (a->fb_h / 2.0 - a->oy) / a->zoom;
    if (a->fit) {
        u = w / 2.0;
        v = h / 2.0;
    }
    a->zoom = 1.0;
    a->ox = floor(a->fb_w / 2.0 - u);
    a->oy = floor(a->fb_h / 2.0 - v);
    a->fit = 0;
    a->dirty_view = 1;
}

/* A settings change that may change the result's size: keep the image centre in place (or
 * refit). */
static void settings_changed(vw_app *a, int old_w, int old_h)
{
    int w, h;
    vw_app_result_size(a, &w, &h);
    a->dirty_ops = 1;
    a->dirty_view = 1;
    if (a->fit) {
        vw_app_fit(a);
        return;
    }
    a->ox += (old_w - w) * a->zoom / 2;
    a->oy += (old_h - h) * a->zoom / 2;
}

static void set_angle(vw_app *a, long c)
{
    int w, h;
    vw_app_result_size(a, &w, &h);
    c = wrap_angle(c);
    if (c == a->angle_c)
        return;
    a->angle_c = c;
    settings_changed(a, w, h);
}

/* Window / level keys (16-bit images): Up / Down move the window by a tenth of its width
 * (Shift: a hundredth), = / - narrow / widen it by 1.25 about its centre, A goes back to auto. */
enum { WL_MAX = 65535 };

static void window_key(vw_app *a, int key, int shift)
{
    if (a->src_depth != 16)
        return;
    if (key == GLFW_KEY_A) {
        a->wl_auto = 1;
        a->dirty_view = 1;
        return;
    }
    double lo = a->wl_auto ? a->wl_cur_lo : a->wl_lo, hi = a->wl_auto ? a->wl_cur_hi : a->wl_hi;
    double w = hi - lo < 1 ? 1 : hi - lo, c = (lo + hi) / 2;
    switch (key) {
    case GLFW_KEY_UP: c += w / (shift ? 100 : 10); break;
    case GLFW_KEY_DOWN: c -= w / (shift ? 100 : 10); break;
    case GLFW_KEY_EQUAL: w /= 1.25; break;
    case GLFW_KEY_MINUS: w *= 1.25; break;
    default: return;
    }
    w = w < 1 ? 1 : w > 2.0 * WL_MAX ? 2.0 * WL_MAX : w;
    c = c < 0 ? 0 : c > WL_MAX ? WL_MAX : c;
    /* whole levels, so the title shows what is drawn */
    a->wl_lo = floor(c - w / 2 + 0.5);
    a->wl_hi = a->wl_lo + floor(w + 0.5);
    a->wl_auto = 0;
    a->dirty_view = 1;
}

void vw_app_reset(vw_app *a)
{
    /* the op table's defaults, as every front end starts from them */
    a->contrast = -1;
    for (int i = 0; i < imgpu_op_count() && i < VW_MAX_OPS; i++)
        a->vop[i] = imgpu_op_default(imgpu_op_at(i)->kind);
    const imgpu_op rot = imgpu_op_default(IMGPU_OP_ROTATE);
    a->mode = IMGPU_MODE_LUMINANCE;
    a->angle_c = 0;
    a->filter = rot.u.rotate.filter;
    a->crop = rot.u.rotate.crop;
    a->show = VW_SHOW_PROCESSED;
    a->split_frac = 0.5;
    a->hist = 0;
    a->wl_auto = 1;
    a->dirty_ops = 1;
    vw_app_fit(a);
}

/* The op table's viewer keys (op_table.h: view_key, view_steps): an op's key makes it the one
 * contrast op shown (again: off; another op's key switches); its steps change a parameter of
 * the op shown. Nothing for any other key. */
static void contrast_key(vw_app *a, int key, int shift)
{
    for (int i = 0; i < imgpu_op_count() && i < VW_MAX_OPS; i++) {
        const imgpu_op_desc *d = imgpu_op_at(i);
        if (d->view_key && key == d->view_key) {
            a->contrast = a->contrast == i ? -1 : i;
            a->dirty_ops = 1;
            return;
        }
    }
    if (a->contrast < 0)
        return;
    const imgpu_op_desc *d = imgpu_op_at(a->contrast);
    for (size_t k = 0; k < sizeof d->view_steps / sizeof d->view_steps[0]; k++) {
        const struct imgpu_view_step *st = &d->view_steps[k];
        if (!st->param || (key != st->down && key != st->up))
            continue;
        const imgpu_param *p = imgpu_op_param(d, st->param, strlen(st->param));
        imgpu_op *op = &a->vop[a->contrast];
        const double dv = (key == st->down ? -1 : 1) * (shift ? st->big_step : st->step);
        int changed = 0;
        if (p->type == IMGPU_PARAM_DOUBLE) {
            double *x = imgpu_param_ptr(op, p, p->offset), v = *x + dv;
            v = v < st->min ? st->min : v > st->max ? st->max : v;
            changed = v != *x;
            *x = v;
        } else { /* INT, or SIZE: a square grid from its first side */
            int *x = imgpu_param_ptr(op, p, p->offset), *y = p->type == IMGPU_PARAM_SIZE
                                                                  ? imgpu_param_ptr(op, p, p->offset2) : x;
            double v = *x + dv;
            v = v < st->min ? st->min : v > st->max ? st->max : v;
            changed = (int)v != *x || (int)v != *y;
            *x = *y = (int)v;
        }
        a->dirty_ops |= changed;
        a->dirty_view = 1;
        return;
    }
}

void vw_app_key(vw_app *a, int key, int mods)
{
    int w, h;
    vw_app_result_size(a, &w, &h);
    const int shift = mods & GLFW_MOD_SHIFT, ctrl = mods & GLFW_MOD_CONTROL;
    switch (key) {
    case GLFW_KEY_M:
        a->mode = a->mode == IMGPU_MODE_LUMINANCE ? IMGPU_MODE_PER_CHANNEL : IMGPU_MODE_LUMINANCE;
        a->dirty_ops |= a->contrast >= 0;
        a->dirty_view = 1;
        break;
    case GLFW_KEY_C:
        if (ctrl) {
            a->want_copy = 1;
            break;
        }
        contrast_key(a, key, shift);
        break;
    case GLFW_KEY_LEFT: set_angle(a, a->angle_c + (shift ? 10 : 100)); break;   /* counterclockwise */
    case GLFW_KEY_RIGHT: set_angle(a, a->angle_c - (shift ? 10 : 100)); break;  /* clockwise */
    case GLFW_KEY_9: set_angle(a, a->angle_c - 9000); break;
    case GLFW_KEY_0: set_angle(a, a->angle_c + 9000); break;
    case GLFW_KEY_F:
        a->filter = a->filter == IMGPU_FILTER_BILINEAR  ? IMGPU_FILTER_BICUBIC
                    : a->filter == IMGPU_FILTER_BICUBIC ? IMGPU_FILTER_NEAREST
                                                        : IMGPU_FILTER_BILINEAR;
        a->dirty_ops = a->angle_c != 0;
        a->dirty_view = 1;
        break;
    case GLFW_KEY_X:
        a->crop = !a->crop;
        if (a->angle_c != 0)
            settings_changed(a, w, h);
        a->dirty_view = 1;
        break;
    case GLFW_KEY_R: vw_app_reset(a); break;
    case GLFW_KEY_HOME: vw_app_fit(a); break;
    case GLFW_KEY_1: one_to_one(a); break;
    case GLFW_KEY_SPACE:
        a->show = a->show == VW_SHOW_ORIGINAL ? VW_SHOW_PROCESSED : VW_SHOW_ORIGINAL;
        a->dirty_view = 1;
        break;
    case GLFW_KEY_V:
        a->show = a->show == VW_SHOW_SPLIT ? VW_SHOW_PROCESSED : VW_SHOW_SPLIT;
        a->dirty_view = 1;
        break;
    case GLFW_KEY_H: /* off -> lower right -> lower left -> top right -> top left -> off */
        a->hist = (a->hist + 1) % VW_HIST_STATES;
        if (a->hist == VW_HIST_LOWER_RIGHT)
            a->dirty_ops = 1; /* the "after" histogram is computed with the frame; it stays valid while moved */
        a->dirty_view = 1;
        break;
    case GLFW_KEY_SLASH: /* '?' is Shift+/ on US layouts; F1 works everywhere */
    case GLFW_KEY_F1:
        a->help = !a->help;
        a->dirty_view = 1;
        break;
    case GLFW_KEY_UP:
    case GLFW_KEY_DOWN:
    case GLFW_KEY_EQUAL:
    case GLFW_KEY_MINUS:
    case GLFW_KEY_A: window_key(a, key, shift); break;
    case GLFW_KEY_S: a->want_save = 1; break;
    case GLFW_KEY_N: a->open_delta = 1; break;
    case GLFW_KEY_P: a->open_delta = -1; break;
    case GLFW_KEY_ESCAPE:
    case GLFW_KEY_Q: a->quit = 1; break;
    default: contrast_key(a, key, shift); break; /* the op table's keys */
    }
}

/* Angle in degrees of the cursor about the processed image's centre on screen, counterclockwise
 * positive as seen (the screen's y points down, hence the minus). */
static double cursor_angle(const vw_app *a, double x, double y)
{
    int w, h;
    vw_app_result_size(a, &w, &h);
    double cx = a->ox + w * a->zoom / 2, cy = a->oy + h * a->zoom / 2;
    return atan2(-(y - cy), x - cx) * 180.0 / M_PI;
}

void vw_app_button(vw_app *a, int button, int press, int mods)
{
    (void)mods;
    if (!press) {
        a->drag = VW_DRAG_NONE;
        return;
    }
    a->drag_x = a->cx;
    a->drag_y = a->cy;
    if (button == GLFW_MOUSE_BUTTON_LEFT) {
        if (a->show == VW_SHOW_SPLIT && fabs(a->cx - a->split_frac * a->fb_w) <= DIVIDER_GRAB)
            a->drag = VW_DRAG_DIVIDER;
        else
            a->drag = VW_DRAG_PAN;
    } else if (button == GLFW_MOUSE_BUTTON_RIGHT) {
        a->drag = VW_DRAG_ROTATE;
        a->drag_a0 = cursor_angle(a, a->cx, a->cy);
        a->drag_angle0 = a->angle_c;
    }
}

void vw_app_cursor(vw_app *a, double x, double y)
{
    const double dx = x - a->cx, dy = y - a->cy;
    a->cx = x;
    a->cy = y;
    switch (a->drag) {
    case VW_DRAG_PAN:
        a->ox += dx;
        a->oy += dy;
        a->fit = 0;
        a->dirty_view = 1;
        break;
    case VW_DRAG_DIVIDER:
        if (a->fb_w > 0) {
            a->split_frac = x / a->fb_w;
            if (a->split_frac < 0) a->split_frac = 0;
            if (a->split_frac > 1) a->split_frac = 1;
        }
        a->dirty_view = 1;
        break;
    case VW_DRAG_ROTATE: {
        double d = cursor_angle(a, x, y) - a->drag_a0;
        set_angle(a, a->drag_angle0 + lround(d * 100.0));
        break;
    }
    default: break;
    }
}

void vw_app_scroll(vw_app *a, double dy)
{
    double f = pow(1.1, dy), z = a->zoom * f;
    if (z < 1.0 / 64) z = 1.0 / 64;
    if (z > 64) z = 64;
    f = z / a->zoom;
    /* the image point under the cursor stays under it */
    a->ox = a->cx - (a->cx - a->ox) * f;
    a->oy = a->cy - (a->cy - a->oy) * f;
    a->zoom = z;
    a->fit = 0;
    a->dirty_view = 1;
}

void vw_app_resize(vw_app *a, int fb_w, int fb_h)
{
    if (a->fit || a->fb_w <= 0 || a->fb_h <= 0) {
        a->fb_w = fb_w;
        a->fb_h = fb_h;
        vw_app_fit(a);
        return;
    }
    /* keep the image centre at the same share of the window */
    a->ox += (fb_w - a->fb_w) / 2.0;
    a->oy += (fb_h - a->fb_h) / 2.0;
    a->fb_w = fb_w;
    a->fb_h = fb_h;
    a->dirty_view = 1;
}

void vw_app_drop(vw_app *a, const char *path)
{
    if (strlen(path) < sizeof a->drop_path)
        memcpy(a->drop_path, path, strlen(path) + 1);
}

vw_draw vw_app_draw(const vw_app *a)
{
    vw_draw d;
    memset(&d, 0, sizeof d);
    d.zoom = a->zoom;
    d.ox = a->ox;
    d.oy = a->oy;
    d.show = a->show;
    d.split_x = a->split_frac * a->fb_w;
    d.hist = a->hist;
    d.help = a->help;
    d.wl_auto = a->wl_auto;
    d.wl_lo = a->wl_lo;
    d.wl_hi = a->wl_hi;
    return d;
}

static const char *filter_name(imgpu_filter f)
{
    return f == IMGPU_FILTER_NEAREST ? "nearest" : f == IMGPU_FILTER_BICUBIC ? "bicubic" : "bilinear";
}


/* A shell word: bare when it is plainly safe, else in single quotes ('\'' for a quote). */
static void shell_word(const char *s, char *buf, size_t n)
{
    int safe = *s != '\0';
    for (const char *p = s; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+,:=@%", *p))
            safe = 0;
    if (safe) {
        snprintf(buf, n, "%s", s);
        return;
    }
    size_t k = 0;
    if (k + 1 < n) buf[k++] = '\'';
    for (const char *p = s; *p && k + 5 < n; p++) {
        if (*p == '\'') {
            memcpy(buf + k, "'\\''", 4);
            k += 4;
        } else {
            buf[k++] = *p;
        }
    }
    if (k + 1 < n) buf[k++] = '\'';
    buf[k < n ? k : n - 1] = '\0';
}

void vw_app_command_line(const vw_app *a, const char *out_path, char *buf, size_t n)
{
    char in[2048], out[2048], ang[32];
    shell_word(a->path ? a->path : "IN", in, sizeof in);
    shell_word(out_path, out, sizeof out);
    vw_angle_string(a->angle_c, ang, sizeof ang);
    char rot[256];
    snprintf(rot, sizeof rot, "--angle %s --filter %s %s", ang, filter_name(a->filter),
             a->crop ? "--crop" : "--expand");
    char contrast[4400] = "";
    if (a->contrast >= 0) {
        /* the op's command with its options, as its descriptor writes them */
        const imgpu_op op = contrast_op(a);
        char opts[256];
        imgpu_op_at(a->contrast)->write(&op, IMGPU_OP_TEXT_OPTIONS, opts, sizeof opts);
        snprintf(contrast, sizeof contrast, "%s %s %s %s", imgpu_op_at(a->contrast)->name, in, out, opts);
    }
    if (contrast[0] && a->angle_c != 0)
        snprintf(buf, n, "imgpu %s && imgpu rotate %s %s %s --force", contrast, out, out, rot);
    else if (contrast[0])
        snprintf(buf, n, "imgpu %s", contrast);
    else if (a->angle_c != 0)
        snprintf(buf, n, "imgpu rotate %s %s %s", in, out, rot);
    else /* a quarter turn of 0 is the identity, pixel for pixel */
        snprintf(buf, n, "imgpu rotate %s %s --angle 0", in, out);
}

void vw_app_describe(const vw_app *a, char *buf, size_t n)
{
    char ang[32];
    vw_angle_string(a->angle_c, ang, sizeof ang);
    if (a->contrast < 0 && a->angle_c == 0) {
        snprintf(buf, n, "original");
        return;
    }
    char eq[160] = "", rot[96] = "";
    if (a->contrast >= 0) {
        const imgpu_op op = contrast_op(a);
        imgpu_op_at(a->contrast)->write(&op, IMGPU_OP_TEXT_STATUS, eq, sizeof eq);
    }
    if (a->angle_c != 0)
        snprintf(rot, sizeof rot, "rotate %s %s %s", ang, filter_name(a->filter), a->crop ? "crop" : "expand");
    snprintf(buf, n, "%s%s%s", eq, eq[0] && rot[0] ? " + " : "", rot);
}
