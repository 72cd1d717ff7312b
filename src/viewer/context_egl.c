/* context_egl.c — headless OpenGL through EGL: no X server, no window. Tries EGL's device
 * platform first (EGL_EXT_platform_device: one EGLDisplay per GPU; on NVIDIA's driver this is
 * the context CUDA can share textures with), preferring a device that names a CUDA device
 * (EGL_NV_device_cuda), then the default display (Mesa's surfaceless or software device).
 * A 16 x 16 pbuffer is made current; the viewer renders into framebuffer objects of its own.
 * Desktop OpenGL 3.3 core is requested (EGL_OPENGL_API), not GLES.
 */
#include "viewer.h"
#include "error.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <string.h>

#ifndef EGL_CUDA_DEVICE_NV
#define EGL_CUDA_DEVICE_NV 0x323A
#endif

static int try_display(vw_context *c, EGLDisplay dpy, const char **why)
{
    EGLint major = 0, minor = 0, n = 0;
    EGLConfig cfg;
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, &major, &minor)) {
        *why = "eglInitialize failed";
        return -1;
    }
    const EGLint cfg_attr[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8,
                               EGL_BLUE_SIZE, 8, EGL_ALPHA_SIZE, 8, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                               EGL_NONE};
    const EGLint pb_attr[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
    const EGLint ctx_attr[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                               EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    EGLSurface surf = EGL_NO_SURFACE;
    EGLContext ctx = EGL_NO_CONTEXT;
    if (!eglChooseConfig(dpy, cfg_attr, &cfg, 1, &n) || n < 1) {
        *why = "no RGBA8 pbuffer config with desktop OpenGL";
        goto fail;
    }
    if (!eglBindAPI(EGL_OPENGL_API)) {
        *why = "eglBindAPI(EGL_OPENGL_API) failed";
        goto fail;
    }
    if ((surf = eglCreatePbufferSurface(dpy, cfg, pb_attr)) == EGL_NO_SURFACE) {
        *why = "eglCreatePbufferSurface failed";
        goto fail;
    }
    if ((ctx = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, ctx_attr)) == EGL_NO_CONTEXT) {
        *why = "eglCreateContext (OpenGL 3.3 core) failed";
        goto fail;
    }
    if (!eglMakeCurrent(dpy, surf, surf, ctx)) {
        *why = "eglMakeCurrent failed";
        goto fail;
    }
    c->kind = VW_CTX_EGL;
    c->egl_display = dpy;
    c->egl_surface = surf;
    c->egl_context = ctx;
    return 0;
fail:
    if (ctx != EGL_NO_CONTEXT)
        eglDestroyContext(dpy, ctx);
    if (surf != EGL_NO_SURFACE)
        eglDestroySurface(dpy, surf);
    eglTerminate(dpy);
    return -1;
}

int vw__egl_open(vw_context *c)
{
    const char *why = "no EGL display";
    memset(c, 0, sizeof *c);
    const char *client_ext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    PFNEGLQUERYDEVICESEXTPROC query_devices = (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    PFNEGLQUERYDEVICEATTRIBEXTPROC query_attrib =
        (PFNEGLQUERYDEVICEATTRIBEXTPROC)eglGetProcAddress("eglQueryDeviceAttribEXT");
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    if (client_ext && strstr(client_ext, "EGL_EXT_platform_device") && query_devices && get_platform_display) {
        EGLDeviceEXT devs[16];
        EGLint n = 0;
        if (query_devices(16, devs, &n) && n > 0) {
            /* two passes: devices that name a CUDA device first */
            for (int pass = 0; pass < 2; pass++)
                for (EGLint i = 0; i < n; i++) {
                    EGLAttrib cuda = -1;
                    int is_cuda = query_attrib && query_attrib(devs[i], EGL_CUDA_DEVICE_NV, &cuda) && cuda >= 0;
                    if (is_cuda != (pass == 0))
                        continue;
                    EGLDisplay dpy = get_platform_display(EGL_PLATFORM_DEVICE_EXT, devs[i], NULL);
                    if (try_display(c, dpy, &why) == 0)
                        goto loaded;
                }
        }
    }
    if (try_display(c, eglGetDisplay(EGL_DEFAULT_DISPLAY), &why) == 0)
        goto loaded;
    return imgpu_error("no headless OpenGL context through EGL: %s (error 0x%x)", why, (unsigned)eglGetError());
loaded:
    if (vw__gl_load(1) != 0) {
        vw__egl_close(c);
        return -1;
    }
    return 0;
}

void vw__egl_close(vw_context *c)
{
    if (!c || !c->egl_display)
        return;
    eglMakeCurrent(c->egl_display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (c->egl_context)
        eglDestroyContext(c->egl_display, c->egl_context);
    if (c->egl_surface)
        eglDestroySurface(c->egl_display, c->egl_surface);
    eglTerminate(c->egl_display);
    c->egl_display = c->egl_surface = c->egl_context = NULL;
}
