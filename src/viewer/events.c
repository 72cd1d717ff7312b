/* events.c — `--events FILE`: scripted input for tests and demos. Each line is one event,
 * fed through the same handlers as GLFW's callbacks (input.c); after each one the main loop
 * does what a frame would (process, draw, save, print). Coordinates are framebuffer pixels of
 * the window (or of the --size / default 960x720 view when headless), origin top-left.
 *
 *   # comment                       blank lines and comments are skipped
 *   key [MOD+]...NAME               NAME: a..z, 0..9, left right up down home space escape
 *                                   f1 ? [ ] , . - = (or lbracket rbracket comma period
 *                                   minus equal);
 *                                   MOD: shift ctrl alt. e.g. key shift+right, key ctrl+c
 *   move X Y                        the cursor moves
 *   down left|right|middle [X Y]    a button goes down (after moving to X Y)
 *   up left|right|middle [X Y]
 *   drag left|right X0 Y0 X1 Y1 [STEPS]   down at X0 Y0, STEPS moves (default 8), up at X1 Y1
 *   scroll DY [X Y]                 wheel by DY notches (positive zooms in) at X Y
 *   resize W H                      the framebuffer becomes W x H
 *   drop PATH                       a file is dropped on the window (the rest of the line)
 */
#include "viewer.h"
#include "error.h"

#include <GLFW/glfw3.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int key_code(const char *name)
{
    static const struct { const char *n; int k; } named[] = {
        {"left", GLFW_KEY_LEFT}, {"right", GLFW_KEY_RIGHT}, {"up", GLFW_KEY_UP}, {"down", GLFW_KEY_DOWN},
        {"home", GLFW_KEY_HOME}, {"space", GLFW_KEY_SPACE}, {"escape", GLFW_KEY_ESCAPE},
        {"esc", GLFW_KEY_ESCAPE}, {"f1", GLFW_KEY_F1}, {"slash", GLFW_KEY_SLASH}, {"?", GLFW_KEY_SLASH},
        {"[", GLFW_KEY_LEFT_BRACKET}, {"lbracket", GLFW_KEY_LEFT_BRACKET}, {"]", GLFW_KEY_RIGHT_BRACKET},
        {"rbracket", GLFW_KEY_RIGHT_BRACKET}, {",", GLFW_KEY_COMMA}, {"comma", GLFW_KEY_COMMA},
        {".", GLFW_KEY_PERIOD}, {"period", GLFW_KEY_PERIOD}, {"-", GLFW_KEY_MINUS}, {"minus", GLFW_KEY_MINUS},
        {"=", GLFW_KEY_EQUAL}, {"equal", GLFW_KEY_EQUAL},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (!strcasecmp(name, named[i].n))
            return named[i].k;
    if (strlen(name) == 1 && isalpha((unsigned char)name[0]))
        return GLFW_KEY_A + (toupper((unsigned char)name[0]) - 'A');
    if (strlen(name) == 1 && isdigit((unsigned char)name[0]))
        return GLFW_KEY_0 + (name[0] - '0');
    return -1;
}

static int button_code(const char *name)
{
    if (!strcasecmp(name, "left")) return GLFW_MOUSE_BUTTON_LEFT;
    if (!strcasecmp(name, "right")) return GLFW_MOUSE_BUTTON_RIGHT;
    if (!strcasecmp(name, "middle")) return GLFW_MOUSE_BUTTON_MIDDLE;
    return -1;
}

static int num(const char *s, double *out)
{
    if (!s)
        return -1;
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return errno || *end || end == s ? -1 : 0;
}

int vw__events_run(vw_app *a, const char *path, int (*step)(vw_app *a, void *user), void *user)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return imgpu_error("cannot read events file '%s': %s", path, strerror(errno));
    char line[4200];
    int lineno = 0, rc = 0;
    while (rc == 0 && !a->quit && fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '\0' || *p == '#')
            continue;
        char *save = NULL, *verb = strtok_r(p, " \t", &save);
        char *arg[6] = {0};
        int nargs = 0;
        if (!strcmp(verb, "drop")) {
            char *rest = save;
            while (rest && isspace((unsigned char)*rest))
                rest++;
            if (!rest || !*rest)
                goto bad;
            vw_app_drop(a, rest);
            rc = step(a, user);
            continue;
        }
        while (nargs < 6 && (arg[nargs] = strtok_r(NULL, " \t", &save)) != NULL)
            nargs++;
        double v[5];
        if (!strcmp(verb, "key") && nargs == 1) {
            int mods = 0;
            char *k = arg[0], *plus;
            while ((plus = strchr(k, '+')) != NULL && plus[1] != '\0') {
                *plus = '\0';
                if (!strcasecmp(k, "shift")) mods |= GLFW_MOD_SHIFT;
                else if (!strcasecmp(k, "ctrl") || !strcasecmp(k, "control")) mods |= GLFW_MOD_CONTROL;
                else if (!strcasecmp(k, "alt")) mods |= GLFW_MOD_ALT;
                else goto bad;
                k = plus + 1;
            }
            int code = key_code(k);
            if (code < 0)
                goto bad;
            if (!strcmp(k, "?"))
                mods |= GLFW_MOD_SHIFT;
            vw_app_key(a, code, mods);
        } else if (!strcmp(verb, "move") && nargs == 2) {
            if (num(arg[0], &v[0]) || num(arg[1], &v[1]))
                goto bad;
            vw_app_cursor(a, v[0], v[1]);
        } else if ((!strcmp(verb, "down") || !strcmp(verb, "up")) && (nargs == 1 || nargs == 3)) {
            int b = button_code(arg[0]);
            if (b < 0)
                goto bad;
            if (nargs == 3) {
                if (num(arg[1], &v[0]) || num(arg[2], &v[1]))
                    goto bad;
                vw_app_cursor(a, v[0], v[1]);
            }
            vw_app_button(a, b, verb[0] == 'd', 0);
        } else if (!strcmp(verb, "drag") && (nargs == 5 || nargs == 6)) {
            int b = button_code(arg[0]);
            double steps = 8;
            if (b < 0 || num(arg[1], &v[0]) || num(arg[2], &v[1]) || num(arg[3], &v[2]) || num(arg[4], &v[3]) ||
                (nargs == 6 && (num(arg[5], &steps) || steps < 1 || steps > 10000)))
                goto bad;
            vw_app_cursor(a, v[0], v[1]);
            vw_app_button(a, b, 1, 0);
            for (int i = 1; i <= (int)steps && rc == 0; i++) {
                vw_app_cursor(a, v[0] + (v[2] - v[0]) * i / (int)steps, v[1] + (v[3] - v[1]) * i / (int)steps);
                rc = step(a, user);
            }
            vw_app_button(a, b, 0, 0);
        } else if (!strcmp(verb, "scroll") && (nargs == 1 || nargs == 3)) {
            if (num(arg[0], &v[0]))
                goto bad;
            if (nargs == 3) {
                if (num(arg[1], &v[1]) || num(arg[2], &v[2]))
                    goto bad;
                vw_app_cursor(a, v[1], v[2]);
            }
            vw_app_scroll(a, v[0]);
        } else if (!strcmp(verb, "resize") && nargs == 2) {
            if (num(arg[0], &v[0]) || num(arg[1], &v[1]) || v[0] < 1 || v[1] < 1 || v[0] > 16384 || v[1] > 16384)
                goto bad;
            vw_app_resize(a, (int)v[0], (int)v[1]);
        } else {
            goto bad;
        }
        if (rc == 0)
            rc = step(a, user);
        continue;
    bad:
        rc = imgpu_error("%s:%d: bad event line (see 'imgpu view --help' for the format)", path, lineno);
    }
    fclose(f);
    return rc;
}
