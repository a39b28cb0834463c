/*
 * io/tls.h: TLS 1.3 (RFC 8446) as a backend wrapped around another backend
 * (io/backend.h), with OpenSSL in user space over memory BIOs.
 *
 * Ciphertext moves through the inner backend (the TCP socket); plaintext
 * is what the endpoint above sees, so MPA/DDP/RDMAP run unchanged inside
 * the TLS stream. The handshake runs inside the backend before the first
 * plaintext byte: the endpoint's first recv/send wait for it, and a failed
 * handshake completes them with a precise -errno:
 *   -EACCES          authentication refused (certificate or PSK, either side)
 *   -EPROTO          the peer does not speak TLS (or broke the record layer)
 *   -EPROTONOSUPPORT the peer offered only TLS < 1.3 (no downgrade)
 *   -EBADMSG         a record failed its AEAD check (tampered stream)
 *   -ECONNRESET      the stream ended without close_notify
 * Only io/ includes OpenSSL headers.
 */
#ifndef IWARP_IO_TLS_H
#define IWARP_IO_TLS_H

#include <stdbool.h>

struct io_backend;
struct io_tls_ctx;

/* Credentials, all optional (PEM files; the PSK file holds hex digits). */
struct io_tls_cfg {
	const char *cert_file;
	const char *key_file;
	const char *ca_file;
	const char *psk_file;
	const char *psk_identity; /* NULL: "iwarp" */
	const char *peer_name;	/* client: name/IP the server cert must carry */
	bool require_peer_cert; /* server: refuse clients without a cert */
};

/*
 * Loads and checks the credentials of |cfg| into a shareable context
 * (refcount 1). Any thread. NULL with errno: ENOENT/EACCES (a file cannot
 * be opened), EINVAL (a file does not parse, key and certificate do not
 * match, a PSK shorter than 16 octets, nothing usable at all), ENOMEM.
 */
struct io_tls_ctx *io_tls_ctx_create(const struct io_tls_cfg *cfg);

/* Reference counting; any thread. unref(NULL) is a no-op. */
void io_tls_ctx_ref(struct io_tls_ctx *ctx);
void io_tls_ctx_unref(struct io_tls_ctx *ctx);

/* The context can serve (certificate and key, or a PSK). */
bool io_tls_ctx_can_serve(const struct io_tls_ctx *ctx);

/* The context can authenticate a server (a CA file, or a PSK). */
bool io_tls_ctx_can_connect(const struct io_tls_ctx *ctx);

/*
 * Wraps |inner| (takes ownership) in a TLS 1.3 session of |ctx| (takes its
 * own reference), as the server or the client. The handshake starts on the
 * next loop iteration. Engine thread. NULL with errno ENOMEM (|inner| is
 * destroyed then).
 */
struct io_backend *io_tls_wrap(struct io_backend *inner, struct io_tls_ctx *ctx,
			       bool server);

/*
 * True when the kernel offers the "tls" TCP upper-layer protocol (kTLS,
 * /proc/sys/net/ipv4/tcp_available_ulp). io/tls.c does not use it yet
 * (docs/tls.md). Any thread.
 */
bool io_tls_ktls_available(void);

#endif /* IWARP_IO_TLS_H */
