#ifndef CMICROHTTPD_LIBRARY_SLOTS_H
#define CMICROHTTPD_LIBRARY_SLOTS_H

#include <stdbool.h>
#include <stddef.h>

/// Points libmicrohttpd's own calls of the C library functions `names`
/// (its PLT slots for them) at `functions`, for libmicrohttpd alone: no
/// other caller of those functions is affected. All or none: returns false,
/// and changes nothing, where this platform or this libmicrohttpd build has
/// no slot for one of them.
bool mhd_redirect_library_calls(const char *const names[], void *const functions[], size_t count);

#endif
