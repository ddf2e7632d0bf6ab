#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H

#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// `MHD_start_daemon` is variadic, which Swift cannot call. Every option is
/// passed through one `MHD_OPTION_ARRAY` (terminated by `MHD_OPTION_END`).
static inline struct MHD_Daemon *
shim_MHD_start_daemon(unsigned int flags,
                      uint16_t port,
                      MHD_AcceptPolicyCallback apc,
                      void *apc_cls,
                      MHD_AccessHandlerCallback dh,
                      void *dh_cls,
                      struct MHD_OptionItem *options)
{
    return MHD_start_daemon(flags, port, apc, apc_cls, dh, dh_cls,
                            MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

#endif
