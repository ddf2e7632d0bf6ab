#ifndef CMICROHTTPD_ERROR_HOOK_H
#define CMICROHTTPD_ERROR_HOOK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// Builds the response to send instead of an error response that
/// libmicrohttpd queued on its own, for `status_code`; returns NULL to let
/// libmicrohttpd's own go out. The hook queues the returned response and
/// then destroys it (releases the caller's reference).
typedef struct MHD_Response *(*MHDErrorResponseReplacement)(struct MHD_Connection *connection,
                                                           unsigned int status_code);

/// Routes every error response (status 400 or more) that libmicrohttpd
/// queues by itself — for requests it cannot parse or hold, refused
/// without asking the application — through `replacement`. Process-wide;
/// installing again replaces the function.
///
/// Returns whether the hook is in effect: false where this platform or
/// this link leaves libmicrohttpd's own `MHD_queue_response` in place
/// (then libmicrohttpd's short HTML pages go out unchanged).
bool mhd_error_hook_install(MHDErrorResponseReplacement replacement);

/// Makes libmicrohttpd give the pages of a connection's memory pool back to
/// the kernel when it zeroes the pool after a request, instead of writing
/// zeros to them (PoolRelease.c says why and how). Process-wide, once.
///
/// Returns whether it is in effect: false where this platform or this
/// libmicrohttpd build has no PLT slot for `memset` to redirect.
bool mhd_pool_release_install(void);

/// What the next zeroing of a connection's pool memory on this thread does:
/// the reset right after libmicrohttpd's request-completed callback, or the
/// shrinking of the read buffer right after a response is queued.
typedef enum {
    /// Writes zeros to it, as libmicrohttpd does (the default).
    MHD_POOL_RESET_ZERO = 0,
    /// Gives its pages back to the kernel: a connection that most likely
    /// stays idle now.
    MHD_POOL_RESET_RELEASE = 1,
    /// Leaves its contents: a busy connection, whose next request fills
    /// the pool again at once.
    MHD_POOL_RESET_KEEP = 2,
} MHDPoolReset;

void mhd_pool_reset_next(MHDPoolReset reset);

#endif
