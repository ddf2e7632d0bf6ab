// libmicrohttpd 0.9.75, polling with epoll, takes a connection's socket out
// of its epoll set when the connection is suspended (EPOLL_CTL_DEL, in
// `internal_suspend_connection_`) and puts it back after the resume, once
// the connection waits for its socket again (EPOLL_CTL_ADD, in
// `MHD_connection_epoll_update_`). The server suspends every request that
// waits for the database, so every such request pays two system calls that
// free and allocate the kernel's record of the registration and its entry
// in the socket's wait queue.
//
// This file keeps a suspended connection's socket in the set instead:
//
// 1. `mhd_suspend_connection_in_epoll` names the connection being
//    suspended, on this thread, around `MHD_suspend_connection`. The
//    EPOLL_CTL_DEL made meanwhile is recorded, not made: the connection is
//    "kept".
// 2. libmicrohttpd must never see an event for a suspended connection: it
//    would put the connection in its ready list, process it while
//    suspended, and panic when resuming it ("Resumed connection was already
//    in EREADY set"). So events of kept connections are taken out of
//    `epoll_wait`'s results before libmicrohttpd reads them, and noted.
// 3. After the resume, libmicrohttpd marks the connection ready to read and
//    to write ("we might have missed the edge poll event during
//    suspension"), and adds the socket back once a read or write finds it
//    empty or full. That EPOLL_CTL_ADD, for the same socket and connection,
//    finds the registration still there, with the same events and data: the
//    connection is no longer kept, and nothing is done, unless an event was
//    hidden meanwhile. Such an event may have come after libmicrohttpd last
//    found the socket empty, so the registration is then modified
//    (EPOLL_CTL_MOD), which polls the socket and reports it if it is ready,
//    as the ADD would have.
// 4. A socket that libmicrohttpd closes (a connection that ends between its
//    resume and that ADD) is forgotten at once: the kernel drops a closed
//    socket's registration, and a new connection on the same descriptor
//    number, maybe with its structure at the same address, must be added
//    for real.
//
// libmicrohttpd's calls of `epoll_ctl`, `epoll_wait` and `close` come here
// (LibrarySlots.c), and nobody else's. The state is the calling thread's: a
// daemon without a thread of its own is run, and its connections suspended,
// on one thread (the server's event loop); anything else (a daemon's stop,
// on another thread, after its loop has ended) finds nothing kept and goes
// straight to the C library.

#define _GNU_SOURCE
#include "CMicroHTTPDErrorHook.h"
#include "LibrarySlots.h"

#if defined(__linux__)

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/// A kept registration, found by its socket.
struct kept_socket {
    const void *connection;  // NULL: not kept (all zero)
    int epoll;
    /// An event of this socket was hidden from libmicrohttpd meanwhile.
    bool hid_event;
};

/// A kept connection in the set of addresses.
struct kept_entry {
    const void *connection;  // NULL: an empty slot
    int socket;
};

/// One thread's kept connections: by socket (for `epoll_ctl` and `close`),
/// and as a set of connection addresses (for `epoll_wait`'s events, which
/// carry the connection, not the socket).
struct kept_connections {
    struct kept_socket *by_socket;
    size_t sockets;  // capacity of `by_socket`
    /// Open addressing with linear probing.
    struct kept_entry *set;
    size_t set_mask;  // capacity - 1, the capacity a power of two
    size_t count;
    /// The connection `MHD_suspend_connection` is suspending on this thread.
    const void *suspending;
};

static _Thread_local struct kept_connections *kept;
static pthread_key_t kept_key;
static pthread_once_t key_made = PTHREAD_ONCE_INIT;
static atomic_bool installed;

static void free_kept(void *value)
{
    struct kept_connections *state = value;
    free(state->by_socket);
    free(state->set);
    free(state);
}

static void make_key(void)
{
    pthread_key_create(&kept_key, free_kept);
}

/// This thread's state, made on first use; NULL if memory ran out.
static struct kept_connections *thread_kept(void)
{
    if (kept != NULL) return kept;
    pthread_once(&key_made, make_key);
    struct kept_connections *state = calloc(1, sizeof *state);
    if (state == NULL) return NULL;
    pthread_setspecific(kept_key, state);
    kept = state;
    return state;
}

static size_t slot_of(const void *connection, size_t mask)
{
    uint64_t hash = (uint64_t)(uintptr_t)connection * 0x9E3779B97F4A7C15ull;
    return (size_t)(hash >> 32) & mask;
}

/// The kept socket of `connection`, or -1.
static int set_find(const struct kept_connections *state, const void *connection)
{
    for (size_t slot = slot_of(connection, state->set_mask);; slot = (slot + 1) & state->set_mask) {
        if (state->set[slot].connection == connection) return state->set[slot].socket;
        if (state->set[slot].connection == NULL) return -1;
    }
}

/// Adds `connection` to a set with room for it.
static void set_insert(struct kept_connections *state, const void *connection, int socket)
{
    size_t slot = slot_of(connection, state->set_mask);
    while (state->set[slot].connection != NULL) slot = (slot + 1) & state->set_mask;
    state->set[slot] = (struct kept_entry){connection, socket};
}

static void set_remove(struct kept_connections *state, const void *connection)
{
    const size_t mask = state->set_mask;
    size_t slot = slot_of(connection, mask);
    while (state->set[slot].connection != connection) {
        if (state->set[slot].connection == NULL) return;
        slot = (slot + 1) & mask;
    }
    // Backward-shift deletion: moves each later entry of the run into the
    // hole when the hole lies between its home slot and where it is.
    size_t hole = slot;
    for (size_t next = (hole + 1) & mask; state->set[next].connection != NULL; next = (next + 1) & mask) {
        const size_t home = slot_of(state->set[next].connection, mask);
        if (((next - home) & mask) >= ((next - hole) & mask)) {
            state->set[hole] = state->set[next];
            hole = next;
        }
    }
    state->set[hole] = (struct kept_entry){NULL, -1};
}

/// Makes room for one more kept connection on `socket`; false if memory ran out.
static bool reserve(struct kept_connections *state, int socket)
{
    if ((size_t)socket >= state->sockets) {
        size_t sockets = state->sockets == 0 ? 1024 : state->sockets;
        while (sockets <= (size_t)socket) sockets *= 2;
        // calloc, not realloc: the pages of sockets never kept stay untouched.
        struct kept_socket *by_socket = calloc(sockets, sizeof *by_socket);
        if (by_socket == NULL) return false;
        if (state->sockets > 0) memcpy(by_socket, state->by_socket, state->sockets * sizeof *by_socket);
        free(state->by_socket);
        state->by_socket = by_socket;
        state->sockets = sockets;
    }
    // At most half full, so that probes stay short.
    if (state->set == NULL || 2 * (state->count + 1) > state->set_mask + 1) {
        const size_t capacity = state->set == NULL ? 64 : 2 * (state->set_mask + 1);
        struct kept_entry *old = state->set;
        const size_t old_capacity = state->set == NULL ? 0 : state->set_mask + 1;
        struct kept_entry *set = calloc(capacity, sizeof *set);
        if (set == NULL) return false;
        state->set = set;
        state->set_mask = capacity - 1;
        for (size_t slot = 0; slot < old_capacity; slot++) {
            if (old[slot].connection != NULL) set_insert(state, old[slot].connection, old[slot].socket);
        }
        free(old);
    }
    return true;
}

static void forget(struct kept_connections *state, int socket)
{
    struct kept_socket *entry = &state->by_socket[socket];
    set_remove(state, entry->connection);
    *entry = (struct kept_socket){NULL, 0, false};
    state->count--;
}

static int keeping_epoll_ctl(int epoll, int operation, int socket, struct epoll_event *event)
{
    struct kept_connections *state = kept;
    if (state != NULL && socket >= 0) {
        if (operation == EPOLL_CTL_DEL && state->suspending != NULL && reserve(state, socket)) {
            if (state->by_socket[socket].connection != NULL) forget(state, socket);
            state->by_socket[socket] = (struct kept_socket){state->suspending, epoll, false};
            set_insert(state, state->suspending, socket);
            state->count++;
            return 0;
        }
        if (operation == EPOLL_CTL_ADD && (size_t)socket < state->sockets) {
            const struct kept_socket entry = state->by_socket[socket];
            if (entry.connection != NULL) {
                forget(state, socket);
                if (entry.connection == event->data.ptr && entry.epoll == epoll) {
                    // An ADD polls the socket and reports it at once if it
                    // is ready. An event hidden meanwhile may have come after
                    // libmicrohttpd last found the socket empty (or full), so
                    // the registration polls it again, as an ADD would.
                    return entry.hid_event ? epoll_ctl(epoll, EPOLL_CTL_MOD, socket, event) : 0;
                }
                // Another connection on this socket: the kept one's registration
                // cannot be there any more (its socket was closed), so add.
            }
        }
    }
    return epoll_ctl(epoll, operation, socket, event);
}

static int keeping_epoll_wait(int epoll, struct epoll_event *events, int most, int timeout)
{
    const int count = epoll_wait(epoll, events, most, timeout);
    struct kept_connections *state = kept;
    if (count <= 0 || state == NULL || state->count == 0) return count;
    int left = 0;
    for (int index = 0; index < count; index++) {
        const int socket = events[index].data.ptr == NULL ? -1 : set_find(state, events[index].data.ptr);
        if (socket >= 0) {
            state->by_socket[socket].hid_event = true;
            continue;
        }
        events[left++] = events[index];
    }
    return left;
}

static int keeping_close(int descriptor)
{
    struct kept_connections *state = kept;
    if (state != NULL && descriptor >= 0 && (size_t)descriptor < state->sockets
        && state->by_socket[descriptor].connection != NULL) {
        forget(state, descriptor);
    }
    return close(descriptor);
}

static pthread_once_t redirected = PTHREAD_ONCE_INIT;

static void redirect(void)
{
    // `epoll_ctl` last: the other two do nothing until it keeps a connection.
    const char *const names[] = {"epoll_wait", "close", "epoll_ctl"};
    void *const functions[] = {(void *)keeping_epoll_wait, (void *)keeping_close, (void *)keeping_epoll_ctl};
    atomic_store_explicit(&installed, mhd_redirect_library_calls(names, functions, 3), memory_order_release);
}

bool mhd_epoll_suspension_install(void)
{
    pthread_once(&redirected, redirect);
    return atomic_load_explicit(&installed, memory_order_acquire);
}

void mhd_suspend_connection_in_epoll(struct MHD_Connection *connection)
{
    struct kept_connections *state =
        atomic_load_explicit(&installed, memory_order_acquire) ? thread_kept() : NULL;
    if (state == NULL) return MHD_suspend_connection(connection);
    state->suspending = connection;
    MHD_suspend_connection(connection);
    state->suspending = NULL;
}

#else

bool mhd_epoll_suspension_install(void)
{
    return false;
}

void mhd_suspend_connection_in_epoll(struct MHD_Connection *connection)
{
    MHD_suspend_connection(connection);
}

#endif
