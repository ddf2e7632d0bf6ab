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

/// `MHD_get_daemon_info` is variadic: the daemon's epoll descriptor (a
/// daemon without a thread of its own, run by the application's loop), or -1.
static inline int
shim_MHD_get_epoll_fd(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info == NULL ? -1 : info->epoll_fd;
}

/// `MHD_get_connection_info` is variadic: the client's socket address,
/// or NULL if unknown.
static inline const struct sockaddr *
shim_MHD_get_client_address(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

/// `MHD_get_connection_info` is variadic: the connection's socket, or -1.
static inline int
shim_MHD_get_connection_fd(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/// `MHD_set_response_options` is variadic: sets `flags` on `response`.
static inline enum MHD_Result
shim_MHD_set_response_flags(struct MHD_Response *response, enum MHD_ResponseFlags flags)
{
    return MHD_set_response_options(response, flags, MHD_RO_END);
}

/// `MHD_get_connection_info` is variadic: the pointer the connection
/// notification callback stored as the connection's socket context, or NULL.
static inline void *
shim_MHD_get_socket_context(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

/// `MHD_get_connection_info` is variadic: the connection's GnuTLS session
/// (a `gnutls_session_t`), or NULL without TLS.
static inline void *
shim_MHD_get_tls_session(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    return info == NULL ? NULL : info->tls_session;
}

#endif
