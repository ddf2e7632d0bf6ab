// libmicrohttpd answers some requests on its own, without asking the
// application: 414 or 431 for a request line or header section larger
// than the connection's memory pool, 400 for a malformed HTTP version,
// header line, Content-Length or chunked body, 413 for a Content-Length or
// chunk size beyond 64 bits, 505 for an HTTP version other than 1.x, 500 for
// an upload it cannot buffer. In 0.9.75 all of these are sent from one place,
// `transmit_error_response_len` (connection.c): a response made from a static
// HTML string, handed to the public `MHD_queue_response`. No option or
// callback changes that response, and no callback runs at all for a request
// line that never fits in the pool.
//
// This file replaces those responses, by ELF symbol interposition:
//
// 1. libmicrohttpd is a shared library built with default visibility for its
//    API and without -Bsymbolic, so its own call to `MHD_queue_response` goes
//    through its PLT and binds, like any reference, to the first definition
//    in the process's global lookup scope, where the executable comes first.
// 2. This file gives the executable a definition of `MHD_queue_response`.
//    The static linker puts a definition that a shared library of the link
//    also defines into the executable's dynamic symbol table (even with
//    --no-export-dynamic), so libmicrohttpd's call lands here. So do the
//    application's own calls, which the static linker binds here too.
// 3. A call whose return address lies in libmicrohttpd's code segment is
//    libmicrohttpd queueing a response by itself (its only other callers,
//    the basic and digest authentication helpers, are never used here). For
//    an error status, the application's replacement is queued instead, by
//    libmicrohttpd's own definition (found with dlsym(RTLD_NEXT)), with the
//    same connection and status: libmicrohttpd then goes on as it would,
//    sends the response, closes the connection and frees its own response.
//    Every other call passes through unchanged.
// 4. For a refusal made while it parses the header fields (a malformed or
//    oversized Content-Length), libmicrohttpd 0.9.75 builds the response's
//    head a second time, behind the first, in the same write buffer: its
//    state machine goes on as if the request were fine. A client would
//    read that second head as the body. So a replaced response arms its
//    connection (its socket, and its TLS session if any) on this thread,
//    the connection's event loop, which also sends it; libmicrohttpd's
//    calls of `send`, `sendmsg` and `gnutls_record_send` come here
//    (LibrarySlots.c), and the first one for an armed connection leaves
//    out the first of two identical heads it begins with, and reports
//    them as sent. A send that does not begin with a head twice (a version
//    that builds it once) goes out unchanged: the check is on the bytes,
//    not on the version. (With the patches off, 0.9.75 sends both heads.)
//
// `mhd_error_hook_install` confirms step 2 (the global definition is this
// one). A libmicrohttpd linked with -Bsymbolic would bind its call inside the
// library and bypass the hook without that check noticing; the tests that
// send oversized and malformed requests would.

#define _GNU_SOURCE
#include "CMicroHTTPDPatches.h"

#if defined(__linux__)

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include "LibrarySlots.h"

typedef enum MHD_Result (*QueueResponse)(struct MHD_Connection *, unsigned int, struct MHD_Response *);

static pthread_once_t resolved = PTHREAD_ONCE_INIT;
/// libmicrohttpd's own `MHD_queue_response`.
static QueueResponse library_queue_response;
/// libmicrohttpd's code segment, [start, end).
static uintptr_t library_code_start, library_code_end;
static _Atomic(MHDErrorResponseReplacement) installed_replacement;

static int find_code_segment(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const uintptr_t address = (uintptr_t)data;
    for (ElfW(Half) index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[index];
        if (header->p_type != PT_LOAD || (header->p_flags & PF_X) == 0) continue;
        const uintptr_t start = info->dlpi_addr + header->p_vaddr;
        if (address >= start && address - start < header->p_memsz) {
            library_code_start = start;
            library_code_end = start + header->p_memsz;
            return 1;
        }
    }
    return 0;
}

static void resolve(void)
{
    library_queue_response = (QueueResponse)dlsym(RTLD_NEXT, "MHD_queue_response");
    if (library_queue_response != NULL) {
        dl_iterate_phdr(find_code_segment, (void *)library_queue_response);
    }
}

// MARK: - The head built twice (4)

typedef ssize_t (*RecordSend)(void *session, const void *data, size_t length);
/// GnuTLS's own `gnutls_record_send`.
static RecordSend gnutls_send;

/// The connection whose next send may begin with the same head twice; -1
/// and NULL: none. The calling thread's: a connection is processed, and
/// its response sent, on its daemon's thread.
static _Thread_local int armed_socket = -1;
static _Thread_local void *armed_session;

static void arm(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *socket = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *session = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    armed_socket = socket == NULL ? -1 : socket->connect_fd;
    armed_session = session == NULL ? NULL : session->tls_session;
}

/// The length of the head `data` begins with twice over, 0 when it does not.
static size_t doubled_head(const void *data, size_t length)
{
    const char *end = memmem(data, length, "\r\n\r\n", 4);
    if (end == NULL) return 0;
    const size_t head = (size_t)(end - (const char *)data) + 4;
    return length >= 2 * head && memcmp(data, (const char *)data + head, head) == 0 ? head : 0;
}

static ssize_t send_one_head(int socket, const void *data, size_t length, int flags)
{
    if (socket == armed_socket && armed_session == NULL) {
        armed_socket = -1;
        const size_t skipped = doubled_head(data, length);
        if (skipped > 0) {
            const ssize_t sent = send(socket, (const char *)data + skipped, length - skipped, flags);
            return sent < 0 ? sent : sent + (ssize_t)skipped;
        }
    }
    return send(socket, data, length, flags);
}

static ssize_t sendmsg_one_head(int socket, const struct msghdr *message, int flags)
{
    if (socket == armed_socket && armed_session == NULL && message->msg_iovlen > 0 && message->msg_iovlen <= 8) {
        armed_socket = -1;
        const size_t skipped = doubled_head(message->msg_iov[0].iov_base, message->msg_iov[0].iov_len);
        if (skipped > 0) {
            struct iovec vectors[8];
            memcpy(vectors, message->msg_iov, message->msg_iovlen * sizeof(struct iovec));
            vectors[0].iov_base = (char *)vectors[0].iov_base + skipped;
            vectors[0].iov_len -= skipped;
            struct msghdr adjusted = *message;
            adjusted.msg_iov = vectors;
            const ssize_t sent = sendmsg(socket, &adjusted, flags);
            return sent < 0 ? sent : sent + (ssize_t)skipped;
        }
    }
    return sendmsg(socket, message, flags);
}

static ssize_t record_send_one_head(void *session, const void *data, size_t length)
{
    if (session != NULL && session == armed_session) {
        armed_socket = -1;
        armed_session = NULL;
        const size_t skipped = doubled_head(data, length);
        if (skipped > 0) {
            const ssize_t sent = gnutls_send(session, (const char *)data + skipped, length - skipped);
            return sent < 0 ? sent : sent + (ssize_t)skipped;
        }
    }
    return gnutls_send(session, data, length);
}

static void redirect_sends(void)
{
    const char *const names[] = {"send", "sendmsg"};
    void *const functions[] = {(void *)send_one_head, (void *)sendmsg_one_head};
    (void)mhd_redirect_library_calls(names, functions, 2);
    gnutls_send = (RecordSend)dlsym(RTLD_DEFAULT, "gnutls_record_send");
    if (gnutls_send != NULL) {
        const char *const tls_names[] = {"gnutls_record_send"};
        void *const tls_functions[] = {(void *)record_send_one_head};
        (void)mhd_redirect_library_calls(tls_names, tls_functions, 1);
    }
}

// MARK: - The hook

enum MHD_Result
MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code, struct MHD_Response *response)
{
    const uintptr_t caller = (uintptr_t)__builtin_return_address(0);
    pthread_once(&resolved, resolve);
    if (library_queue_response == NULL) return MHD_NO;
    const MHDErrorResponseReplacement replacement =
        atomic_load_explicit(&installed_replacement, memory_order_acquire);
    if (replacement != NULL && (status_code & ~MHD_ICY_FLAG) >= 400
        && caller >= library_code_start && caller < library_code_end) {
        struct MHD_Response *own = replacement(connection, status_code);
        if (own != NULL) {
            const enum MHD_Result result = library_queue_response(connection, status_code, own);
            MHD_destroy_response(own);
            if (result == MHD_YES) arm(connection);
            return result;
        }
    }
    return library_queue_response(connection, status_code, response);
}

static pthread_once_t sends_redirected = PTHREAD_ONCE_INIT;

bool mhd_error_hook_install(MHDErrorResponseReplacement replacement)
{
    pthread_once(&resolved, resolve);
    pthread_once(&sends_redirected, redirect_sends);
    atomic_store_explicit(&installed_replacement, replacement, memory_order_release);
    return library_queue_response != NULL && library_code_end > library_code_start
        && dlsym(RTLD_DEFAULT, "MHD_queue_response") == (void *)MHD_queue_response;
}

#else

bool mhd_error_hook_install(MHDErrorResponseReplacement replacement)
{
    (void)replacement;
    return false;
}

#endif
