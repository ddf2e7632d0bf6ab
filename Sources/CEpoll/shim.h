#ifndef CEPOLL_SHIM_H
#define CEPOLL_SHIM_H

// Linux's epoll and eventfd, which Swift's Glibc module leaves out.
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

// A GNU extension, declared only with _GNU_SOURCE: names a thread (as `top -H` shows it).
extern int pthread_setname_np(pthread_t thread, const char *name);

#endif
