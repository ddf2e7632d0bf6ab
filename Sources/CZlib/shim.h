#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H

#include <zlib.h>

/// `deflateInit2` is a macro (it passes the library's version and the
/// stream's size): wrapped once here. `windowBits` 15 + 16 writes a gzip
/// header and trailer; memory level 8 is zlib's default.
static inline int czlib_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

#endif
