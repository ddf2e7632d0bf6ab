// libmicrohttpd 0.9.75, polling with epoll, takes a connection's socket out
// of its epoll set when the connection is suspended (EPOLL_CTL_DEL, in
// `internal_suspend_connection_`) and puts it back after the resume, once
// the connection waits for its socket again (EPOLL_CTL_ADD, in
// `MHD_connection_epoll_update_`). On resume it also marks the connection
// ready to read and to write ("we might have missed the edge poll event
// during suspension"), so it reads the socket again, most often to find it
// empty. The server suspends every request that waits for the database, so
// every such request pays three system calls for nothing: two that free and
// allocate the kernel's record of the registration and its entry in the
// socket's wait queue, and an empty read.
//
// This file keeps a suspended connection's socket in the set, and answers
// that read itself when it knows the socket is empty:
//
// 1. Every connection libmicrohttpd adds to its set is known by its socket
//    and by its address (the data of its events), until its socket is
//    removed for good or closed. A socket libmicrohttpd closes while kept
//    (2) is removed from the set first, as libmicrohttpd removes the others:
//    the kernel drops a closed socket's registration only once no process
//    holds the socket any more. Then it is forgotten, so that a new
//    connection on the same descriptor number, maybe with its structure at
//    the same address, is added for real.
// 2. `mhd_suspend_connection_in_epoll` names the connection being
//    suspended, on this thread, around `MHD_suspend_connection`. The
//    EPOLL_CTL_DEL made meanwhile is recorded, not made: the connection is
//    "kept".
// 3. libmicrohttpd must never see an event for a suspended connection: it
//    would put the connection in its ready list, process it while
//    suspended, and panic when resuming it ("Resumed connection was already
//    in EREADY set"). So events of kept connections are taken out of
//    `epoll_wait`'s results before libmicrohttpd reads them, and noted.
// 4. The EPOLL_CTL_ADD that libmicrohttpd makes after the resume, once a
//    read or write found the socket empty or full, for the same socket and
//    connection, finds the registration still there, with the same events
//    and data: the connection is no longer kept, and nothing is done, unless
//    an event was held back meanwhile. Such an event may have come after
//    libmicrohttpd last found the socket empty, so the registration is then
//    modified (EPOLL_CTL_MOD), which polls the socket and reports it if it
//    is ready, as the ADD would have.
// 5. A socket is known empty from a read that came back short (libmicrohttpd
//    itself then stops reading until the next event) or found nothing, until
//    the next event of its connection is taken from the kernel, held back or
//    not. Any byte that arrives later makes the kernel queue such an event.
//    A read of a kept socket known empty fails with EAGAIN without a system
//    call. libmicrohttpd then adds the socket back (4), so that an event the
//    kernel has queued meanwhile reaches it.
//
// libmicrohttpd's calls of `epoll_ctl`, `epoll_wait`, `recv` and `close`
// come here (LibrarySlots.c), and nobody else's. The state is the calling
// thread's: a daemon without a thread of its own is run, and its
// connections suspended, on one thread (the server's event loop); anything
// else (a daemon's stop, on another thread, after its loop has ended) finds
// nothing known and goes straight to the C library.

#define _GNU_SOURCE
#include "CMicroHTTPDPatches.h"
#include "LibrarySlots.h"

#if defined(__linux__)

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/// A known registration, found by its socket.
struct known_socket {
    const void *connection;  // NULL: not known (all zero)
    int epoll;
    /// Suspended, or resumed and not yet added back.
    bool kept;
    /// An event of this socket was held back while it was kept.
    bool held_event;
    /// Nothing to read, as far as the events tell.
    bool empty;
};

/// A known connection in the set of addresses.
struct known_entry {
    const void *connection;  // NULL: an empty slot
    int socket;
};

/// One thread's known connections: by socket (for `epoll_ctl`, `recv` and
/// `close`), and as a set of connection addresses (for `epoll_wait`'s
/// events, which carry the connection, not the socket).
struct known_connections {
    struct known_socket *by_socket;
    size_t sockets;  // capacity of `by_socket`
    /// Open addressing with linear probing.
    struct known_entry *set;
    size_t set_mask;  // capacity - 1, the capacity a power of two
    size_t count;
    /// The connection `MHD_suspend_connection` is suspending on this thread.
    const void *suspending;
};

static _Thread_local struct known_connections *known;
static pthread_key_t known_key;
static pthread_once_t key_made = PTHREAD_ONCE_INIT;
static atomic_bool installed;

static void free_known(void *value)
{
    struct known_connections *state = value;
    free(state->by_socket);
    free(state->set);
    free(state);
}

static void make_key(void)
{
    pthread_key_create(&known_key, free_known);
}

/// This thread's state, made on first use; NULL if memory ran out.
static struct known_connections *thread_known(void)
{
    if (known != NULL) return known;
    pthread_once(&key_made, make_key);
    struct known_connections *state = calloc(1, sizeof *state);
    if (state == NULL) return NULL;
    pthread_setspecific(known_key, state);
    known = state;
    return state;
}

static size_t slot_of(const void *connection, size_t mask)
{
    uint64_t hash = (uint64_t)(uintptr_t)connection * 0x9E3779B97F4A7C15ull;
    return (size_t)(hash >> 32) & mask;
}

/// The socket of `connection`, or -1; the set is allocated (a connection is known).
static int set_find(const struct known_connections *state, const void *connection)
{
    for (size_t slot = slot_of(connection, state->set_mask);; slot = (slot + 1) & state->set_mask) {
        if (state->set[slot].connection == connection) return state->set[slot].socket;
        if (state->set[slot].connection == NULL) return -1;
    }
}

/// Adds `connection` to a set with room for it.
static void set_insert(struct known_connections *state, const void *connection, int socket)
{
    size_t slot = slot_of(connection, state->set_mask);
    while (state->set[slot].connection != NULL) slot = (slot + 1) & state->set_mask;
    state->set[slot] = (struct known_entry){connection, socket};
}

static void set_remove(struct known_connections *state, const void *connection)
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
    state->set[hole] = (struct known_entry){NULL, -1};
}

/// Makes room for one more known connection on `socket`; false if memory ran out.
static bool reserve(struct known_connections *state, int socket)
{
    if ((size_t)socket >= state->sockets) {
        size_t sockets = state->sockets == 0 ? 1024 : state->sockets;
        while (sockets <= (size_t)socket) sockets *= 2;
        // calloc, not realloc: the pages of sockets never known stay untouched.
        struct known_socket *by_socket = calloc(sockets, sizeof *by_socket);
        if (by_socket == NULL) return false;
        if (state->sockets > 0) memcpy(by_socket, state->by_socket, state->sockets * sizeof *by_socket);
        free(state->by_socket);
        state->by_socket = by_socket;
        state->sockets = sockets;
    }
    // At most half full, so that probes stay short.
    if (state->set == NULL || 2 * (state->count + 1) > state->set_mask + 1) {
        const size_t capacity = state->set == NULL ? 64 : 2 * (state->set_mask + 1);
        struct known_entry *old = state->set;
        const size_t old_capacity = state->set == NULL ? 0 : state->set_mask + 1;
        struct known_entry *set = calloc(capacity, sizeof *set);
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

/// The known socket `socket`, or NULL.
static struct known_socket *find(struct known_connections *state, int socket)
{
    if (state == NULL || socket < 0 || (size_t)socket >= state->sockets) return NULL;
    struct known_socket *entry = &state->by_socket[socket];
    return entry->connection != NULL ? entry : NULL;
}

static void forget(struct known_connections *state, int socket)
{
    struct known_socket *entry = &state->by_socket[socket];
    set_remove(state, entry->connection);
    *entry = (struct known_socket){0};
    state->count--;
}

/// Knows `connection` on `socket`, registered in `epoll`, and returns its
/// entry; NULL if memory runs out: it stays unknown (its socket is then left
/// to the C library).
static struct known_socket *learn(struct known_connections *state, int socket, const void *connection, int epoll)
{
    if (!reserve(state, socket)) return NULL;
    if (state->by_socket[socket].connection != NULL) forget(state, socket);
    state->by_socket[socket] = (struct known_socket){connection, epoll, false, false, false};
    set_insert(state, connection, socket);
    state->count++;
    return &state->by_socket[socket];
}

static int keeping_epoll_ctl(int epoll, int operation, int socket, struct epoll_event *event)
{
    struct known_connections *state = known;
    struct known_socket *entry = find(state, socket);
    switch (operation) {
    case EPOLL_CTL_DEL:
        if (state != NULL && state->suspending != NULL) {
            if (entry == NULL || entry->connection != state->suspending || entry->epoll != epoll) {
                entry = learn(state, socket, state->suspending, epoll);
                if (entry == NULL) break;
            }
            entry->kept = true;
            entry->held_event = false;
            return 0;
        }
        if (entry != NULL) forget(state, socket);
        break;
    case EPOLL_CTL_ADD:
        if (entry != NULL && entry->kept && entry->connection == event->data.ptr && entry->epoll == epoll) {
            entry->kept = false;
            // An ADD polls the socket and reports it at once if it is ready.
            return entry->held_event ? epoll_ctl(epoll, EPOLL_CTL_MOD, socket, event) : 0;
        }
        if (entry != NULL) forget(state, socket);  // another connection, on a socket closed and reused
        if (state == NULL && atomic_load_explicit(&installed, memory_order_acquire)) state = thread_known();
        if (state != NULL && socket >= 0 && event->data.ptr != NULL) {
            const int result = epoll_ctl(epoll, operation, socket, event);
            if (result == 0) learn(state, socket, event->data.ptr, epoll);
            return result;
        }
        break;
    default:
        break;
    }
    return epoll_ctl(epoll, operation, socket, event);
}

static int keeping_epoll_wait(int epoll, struct epoll_event *events, int most, int timeout)
{
    const int count = epoll_wait(epoll, events, most, timeout);
    struct known_connections *state = known;
    if (count <= 0 || state == NULL || state->count == 0) return count;
    int left = 0;
    for (int index = 0; index < count; index++) {
        const int socket = events[index].data.ptr == NULL ? -1 : set_find(state, events[index].data.ptr);
        if (socket >= 0) {
            struct known_socket *entry = &state->by_socket[socket];
            entry->empty = false;
            if (entry->kept) {
                entry->held_event = true;
                continue;
            }
        }
        events[left++] = events[index];
    }
    return left;
}

static ssize_t keeping_recv(int socket, void *buffer, size_t length, int flags)
{
    struct known_socket *entry = find(known, socket);
    if (entry != NULL && entry->kept && entry->empty && length > 0) {
        errno = EAGAIN;
        return -1;
    }
    const ssize_t received = recv(socket, buffer, length, flags);
    if (entry != NULL) {
        entry->empty = received > 0 ? (size_t)received < length : received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
    return received;
}

static int keeping_close(int descriptor)
{
    struct known_connections *state = known;
    const struct known_socket *entry = find(state, descriptor);
    if (entry != NULL) {
        // A kept socket is still registered. Closing does not remove the
        // registration while another process holds the socket too (a child
        // between fork and exec): it would go on reporting events with this
        // connection's address after its structure is freed.
        if (entry->kept) epoll_ctl(entry->epoll, EPOLL_CTL_DEL, descriptor, NULL);
        forget(state, descriptor);
    }
    return close(descriptor);
}

static pthread_once_t redirected = PTHREAD_ONCE_INIT;

static void redirect(void)
{
    // `epoll_ctl` last: the others do nothing until it knows a connection.
    const char *const names[] = {"epoll_wait", "recv", "close", "epoll_ctl"};
    void *const functions[] = {
        (void *)keeping_epoll_wait, (void *)keeping_recv, (void *)keeping_close, (void *)keeping_epoll_ctl};
    atomic_store_explicit(&installed, mhd_redirect_library_calls(names, functions, 4), memory_order_release);
}

bool mhd_epoll_suspension_install(void)
{
    pthread_once(&redirected, redirect);
    return atomic_load_explicit(&installed, memory_order_acquire);
}

void mhd_suspend_connection_in_epoll(struct MHD_Connection *connection)
{
    struct known_connections *state =
        atomic_load_explicit(&installed, memory_order_acquire) ? thread_known() : NULL;
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
