/* stb_impl.c — placeholder; the I/O work fills this in. */
typedef int imgpu_stb_impl_placeholder;
