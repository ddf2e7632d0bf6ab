#ifndef CLIBCRYPTO_SHIM_H
#define CLIBCRYPTO_SHIM_H

// OpenSSL's libcrypto: the digests, HMAC, PBKDF2 and the signature checks
// (RSA, P-256, Ed25519) that authentication needs
// (Sources/Authentication/LibCrypto.swift, LibCrypto+PublicKey.swift).
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/param_build.h>

/// The public key of `type` ("RSA", "EC") that `builder`'s parameters
/// describe, once OpenSSL's public-key check passes (an EC point on its
/// curve, an RSA modulus and exponent that can be one); NULL otherwise.
/// Frees `builder`; the caller frees the key.
static inline EVP_PKEY *clibcrypto_checked_public_key(const char *type, OSSL_PARAM_BLD *builder) {
    OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(builder);
    OSSL_PARAM_BLD_free(builder);
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *making = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    int made = params != NULL && making != NULL && EVP_PKEY_fromdata_init(making) == 1 &&
        EVP_PKEY_fromdata(making, &key, EVP_PKEY_PUBLIC_KEY, params) == 1;
    EVP_PKEY_CTX_free(making);
    OSSL_PARAM_free(params);
    if (!made) return NULL;
    EVP_PKEY_CTX *checking = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    int valid = checking != NULL && EVP_PKEY_public_check(checking) == 1;
    EVP_PKEY_CTX_free(checking);
    if (!valid) {
        EVP_PKEY_free(key);
        return NULL;
    }
    return key;
}

/// The RSA public key of a modulus and an exponent (big-endian bytes); NULL
/// when they make none. (OpenSSL keeps the parameters' names, not copies:
/// they are C literals here.)
static inline EVP_PKEY *clibcrypto_rsa_public_key(const unsigned char *n, int n_length, const unsigned char *e, int e_length) {
    OSSL_PARAM_BLD *builder = OSSL_PARAM_BLD_new();
    BIGNUM *modulus = BN_bin2bn(n, n_length, NULL);
    BIGNUM *exponent = BN_bin2bn(e, e_length, NULL);
    EVP_PKEY *key = NULL;
    if (builder != NULL && modulus != NULL && exponent != NULL && OSSL_PARAM_BLD_push_BN(builder, "n", modulus) == 1 &&
        OSSL_PARAM_BLD_push_BN(builder, "e", exponent) == 1) {
        key = clibcrypto_checked_public_key("RSA", builder);
    } else {
        OSSL_PARAM_BLD_free(builder);
    }
    BN_free(modulus);
    BN_free(exponent);
    return key;
}

/// The P-256 public key of an encoded point (SEC 1: 0x04, x, y); NULL when
/// it is not a point of the curve.
static inline EVP_PKEY *clibcrypto_p256_public_key(const unsigned char *point, size_t length) {
    OSSL_PARAM_BLD *builder = OSSL_PARAM_BLD_new();
    if (builder == NULL) return NULL;
    if (OSSL_PARAM_BLD_push_utf8_string(builder, "group", "prime256v1", 0) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(builder, "pub", point, length) != 1) {
        OSSL_PARAM_BLD_free(builder);
        return NULL;
    }
    return clibcrypto_checked_public_key("EC", builder);
}

#endif
