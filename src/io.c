/* io.c — placeholder; the I/O work fills this in. */
#include "io.h"
#include "error.h"
imgpu_format imgpu_format_from_path(const char *path) { (void)path; return IMGPU_FORMAT_UNKNOWN; }
const char *imgpu_format_name(imgpu_format f) { (void)f; return "?"; }
imgpu_image *imgpu_image_load(const char *path, const imgpu_load_options *o) { (void)o; imgpu_error("cannot read '%s': not implemented", path); return 0; }
imgpu_image *imgpu_image_load_memory(const void *b, size_t l, const char *n, const imgpu_load_options *o) { (void)b; (void)l; (void)o; imgpu_error("cannot read '%s': not implemented", n); return 0; }
int imgpu_image_save(const imgpu_image *im, const char *path, const imgpu_save_options *o) { (void)im; (void)o; return imgpu_error("cannot write '%s': not implemented", path); }
int imgpu_image_encode(const imgpu_image *im, imgpu_format f, const imgpu_save_options *o, unsigned char **out, size_t *len) { (void)im; (void)f; (void)o; (void)out; (void)len; return imgpu_error("not implemented"); }
