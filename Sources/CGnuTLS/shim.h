#ifndef CGNUTLS_SHIM_H
#define CGNUTLS_SHIM_H

// GnuTLS, the TLS library libmicrohttpd serves HTTPS with: the server
// loads and checks certificates itself, so that it can replace them while
// it runs (Sources/HTTPServer/TLSCredentials.swift), and checks a priority
// string before libmicrohttpd is given it.
#include <gnutls/gnutls.h>

#endif
