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
//
// One answer stays malformed whatever it is: for a bad Content-Length,
// libmicrohttpd 0.9.75 then builds the response's head a second time (its
// state machine goes on as if the request were fine) and the client reads
// that second head as the body.
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
            return result;
        }
    }
    return library_queue_response(connection, status_code, response);
}

bool mhd_error_hook_install(MHDErrorResponseReplacement replacement)
{
    pthread_once(&resolved, resolve);
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
