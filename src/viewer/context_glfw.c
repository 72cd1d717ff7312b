/* context_glfw.c — a GLFW window with an OpenGL 3.3 core context: the interactive viewer,
 * and hidden windows for snapshots where an X server is there but EGL is not wanted (Mesa
 * under Xvfb in CI). The callbacks translate GLFW's input into the app's handlers (input.c);
 * cursor positions come in window coordinates and are scaled to framebuffer pixels here, so
 * HiDPI (framebuffer larger than the window) needs nothing anywhere else.
 */
#include "viewer.h"
#include "error.h"

#include <GL/glew.h>
#include <GLFW/glfw3.h>

#include <stdio.h>
#include <string.h>

static char s_glfw_error[256];

static void on_error(int code, const char *msg)
{
    snprintf(s_glfw_error, sizeof s_glfw_error, "%s (GLFW error 0x%x)", msg, (unsigned)code);
}

static vw_app *app_of(GLFWwindow *w) { return (vw_app *)glfwGetWindowUserPointer(w); }

/* framebuffer pixels per window coordinate */
static void update_scale(GLFWwindow *w, vw_app *a)
{
    int ww, wh, fw, fh;
    glfwGetWindowSize(w, &ww, &wh);
    glfwGetFramebufferSize(w, &fw, &fh);
    a->px_per_win = ww > 0 ? (double)fw / ww : 1.0;
}

static void on_key(GLFWwindow *w, int key, int scancode, int action, int mods)
{
    (void)scancode;
    vw_app *a = app_of(w);
    if (a && (action == GLFW_PRESS || action == GLFW_REPEAT))
        vw_app_key(a, key, mods);
}

static void on_button(GLFWwindow *w, int button, int action, int mods)
{
    vw_app *a = app_of(w);
    if (a)
        vw_app_button(a, button, action == GLFW_PRESS, mods);
}

static void on_cursor(GLFWwindow *w, double x, double y)
{
    vw_app *a = app_of(w);
    if (a)
        vw_app_cursor(a, x * a->px_per_win, y * a->px_per_win);
}

static void on_scroll(GLFWwindow *w, double dx, double dy)
{
    (void)dx;
    vw_app *a = app_of(w);
    if (a)
        vw_app_scroll(a, dy);
}

static void on_fb_size(GLFWwindow *w, int fw, int fh)
{
    vw_app *a = app_of(w);
    if (a && fw > 0 && fh > 0) {
        update_scale(w, a);
        vw_app_resize(a, fw, fh);
    }
}

static void on_drop(GLFWwindow *w, int n, const char **paths)
{
    vw_app *a = app_of(w);
    if (a && n > 0)
        vw_app_drop(a, paths[0]); /* copied: GLFW's string lives only during the callback */
}

int vw__glfw_open(vw_context *c, int w, int h, int visible, const char *title, vw_app *app)
{
    memset(c, 0, sizeof *c);
    c->kind = VW_CTX_GLFW;
    glfwSetErrorCallback(on_error);
    if (!glfwInit())
        return imgpu_error("cannot open a window: %s", s_glfw_error[0] ? s_glfw_error : "glfwInit failed");
    c->glfw_inited = 1;
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
    glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
    c->window = glfwCreateWindow(w, h, title, NULL, NULL);
    if (!c->window) {
        imgpu_error("cannot open a window: %s", s_glfw_error[0] ? s_glfw_error : "glfwCreateWindow failed");
        goto fail;
    }
    glfwMakeContextCurrent(c->window);
    if (vw__gl_load(0) != 0)
        goto fail;
    glfwSwapInterval(1); /* the monitor's rate, no faster */
    if (app) {
        glfwSetWindowUserPointer(c->window, app);
        glfwSetKeyCallback(c->window, on_key);
        glfwSetMouseButtonCallback(c->window, on_button);
        glfwSetCursorPosCallback(c->window, on_cursor);
        glfwSetScrollCallback(c->window, on_scroll);
        glfwSetFramebufferSizeCallback(c->window, on_fb_size);
        glfwSetDropCallback(c->window, on_drop);
        update_scale(c->window, app);
    }
    return 0;
fail:
    vw__glfw_close(c);
    return -1;
}

void vw__glfw_close(vw_context *c)
{
    if (!c)
        return;
    if (c->window)
        glfwDestroyWindow(c->window);
    c->window = NULL;
    if (c->glfw_inited)
        glfwTerminate();
    c->glfw_inited = 0;
}

int vw__gl_load(int is_egl)
{
    glewExperimental = GL_TRUE; /* core profile: GLEW must not trust the extension string alone */
    GLenum e = glewInit();
    if (e != GLEW_OK && !(is_egl && e == GLEW_ERROR_NO_GLX_DISPLAY))
        return imgpu_error("cannot load OpenGL entry points: %s", (const char *)glewGetErrorString(e));
    while (glGetError() != GL_NO_ERROR) /* glewInit may leave GL_INVAL_ENUM behind in core profiles */
        ;
    if (!glGenFramebuffers || !glCreateShader || !glGenVertexArrays)
        return imgpu_error("OpenGL 3.3 entry points missing (GL %s)", (const char *)glGetString(GL_VERSION));
    return 0;
}
