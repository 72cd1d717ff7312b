/* icu_stub.c — libicuuc.so.72 for the vips carried to the GPU machine (bench/fetch_vips.sh):
 * Debian 12's libxml2 (which librsvg, a dependency of libvips42, links) imports these seven
 * ICU converter functions, and binds them at load (BIND_NOW). ICU itself (libicu72, 9.4 MB of
 * packages) does not fit the carry. vipsthumbnail on JPEG never parses XML, so these are never
 * called; should one be, ucnv_open fails (U_UNSUPPORTED_ERROR, 16) and libxml2 reports an
 * unsupported encoding. Built as: cc -shared -fPIC -Wl,-soname,libicuuc.so.72 */
#include <stddef.h>

typedef int UErrorCode;
void UCNV_FROM_U_CALLBACK_STOP_72(void) {}
void UCNV_TO_U_CALLBACK_STOP_72(void) {}
void *ucnv_open_72(const char *name, UErrorCode *err)
{
    (void)name;
    if (err)
        *err = 16;
    return NULL;
}
void ucnv_close_72(void *cnv) { (void)cnv; }
void ucnv_convertEx_72(void) {}
void ucnv_setFromUCallBack_72(void) {}
void ucnv_setToUCallBack_72(void) {}
