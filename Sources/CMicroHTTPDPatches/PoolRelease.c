// Every keep-alive connection of libmicrohttpd owns a memory pool (the
// server sizes it at twice its header limit: 32 KB by default). After each
// request, libmicrohttpd 0.9.75 resets the pool and zeroes the whole of it
// with `memset` (`MHD_pool_reset`, "technically not needed, but safer"),
// which writes, and so makes resident, every page of it, the untouched ones
// included. An idle connection that has served one request thus keeps its
// whole pool in memory, however little of it the request used.
//
// This file gives the pool's zeroed pages back to the kernel instead:
//
// 1. `mhd_pool_release_install` points libmicrohttpd's own calls of
//    `memset` at `release_or_zero` (LibrarySlots.c): no other caller of
//    `memset` is affected.
// 2. For a zeroing of at least four pages, `release_or_zero` hands the whole
//    pages inside the range to `madvise(MADV_DONTNEED)` and zeroes only the
//    partial pages at either end. On private anonymous memory, which every
//    large block libmicrohttpd zeroes is (its pools and structures come from
//    malloc or an anonymous private mmap), the discarded pages read back as
//    zeros: the same contents as after `memset`, without the memory. The
//    next request faults in only the pages it uses (two or three for a small
//    request). Anything else, or a failed madvise, goes to `memset`.
// 3. Giving pages back costs the madvise, the TLB shootdown it causes on
//    the other core, and the page faults of the connection's next request,
//    which a connection busy with one request after another would pay on
//    every request to free pages it fills again at once. So the server says, just before each reset (in
//    libmicrohttpd's request-completed callback, on the same thread), what
//    becomes of this connection's pool (`mhd_pool_reset_next`): its pages go
//    back when its previous request ended long enough ago; a busy
//    connection's pool is left as it is.
// 4. Leaving a busy pool unzeroed skips writing 32 KB per request, which
//    also evicts most of the core's L1 data cache. libmicrohttpd does not
//    rely on the zeros: a connection's first request gets its pool from
//    `malloc` (pools of 32 KB and less are not mmapped), uninitialised, and
//    the zeroing is, in its own words, "technically not needed, but safer".
//    A zeroing without the server's word, or of anything else, goes to
//    `memset`.

#define _GNU_SOURCE
#include "CMicroHTTPDPatches.h"
#include "LibrarySlots.h"

#if defined(__linux__)

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uintptr_t page_size;

/// What the next large zeroing on this thread does (the server's word for
/// the pool reset that follows a request).
static _Thread_local MHDPoolReset next_reset = MHD_POOL_RESET_ZERO;

void mhd_pool_reset_next(MHDPoolReset reset)
{
    next_reset = reset;
}

static void *release_or_zero(void *start, int value, size_t length)
{
    // A zeroing of less than a page is not a pool's (reset or shrunk
    // buffer), and leaves the word for the one that follows.
    if (value == 0 && length >= page_size && next_reset == MHD_POOL_RESET_KEEP) {
        next_reset = MHD_POOL_RESET_ZERO;
        return start;
    }
    if (value == 0 && length >= 4 * page_size && next_reset == MHD_POOL_RESET_RELEASE) {
        next_reset = MHD_POOL_RESET_ZERO;
        const uintptr_t begin = (uintptr_t)start, end = begin + length;
        const uintptr_t first_page = (begin + page_size - 1) & ~(page_size - 1);
        const uintptr_t last_page = end & ~(page_size - 1);
        if (madvise((void *)first_page, last_page - first_page, MADV_DONTNEED) == 0) {
            memset(start, 0, first_page - begin);
            memset((void *)last_page, 0, end - last_page);
            return start;
        }
    }
    return memset(start, value, length);
}

static bool installed;

static pthread_once_t patched = PTHREAD_ONCE_INIT;

static void patch(void)
{
    page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    const char *const names[] = {"memset"};
    void *const functions[] = {(void *)release_or_zero};
    installed = mhd_redirect_library_calls(names, functions, 1);
}

bool mhd_pool_release_install(void)
{
    pthread_once(&patched, patch);
    return installed;
}

#else

bool mhd_pool_release_install(void)
{
    return false;
}

void mhd_pool_reset_next(MHDPoolReset reset)
{
    (void)reset;
}

#endif
