/*
 * io/tls.c: the TLS 1.3 backend (io/tls.h): an OpenSSL session over a BIO
 * pair, wrapped around the socket backend.
 *
 * Data path: SSL writes records into its end of the pair; the ciphertext
 * ring is sent from where it lies (BIO_nread0, no copy) by the inner
 * backend. The inner backend receives straight into the other ring
 * (BIO_nwrite0) and SSL decrypts from it into the endpoint's iovecs. The
 * endpoint's iovecs are staged into one buffer per record so a batch of
 * small FPDU pieces becomes full 16 KiB records, not one record per iovec.
 *
 * One recv and one send of the endpoint at most (io/backend.h); the inner
 * backend keeps one receive in flight while the ring has room (read-ahead)
 * and one send while ciphertext is queued. Completions to the endpoint are
 * delivered from the engine work item or from inner completions, never
 * from inside recv()/send().
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "io/backend.h"
#include "io/engine_int.h"
#include "io/tls_int.h"
#include "util/mem.h"

/* Ciphertext ring per direction. */
#define TLS_RING (256 * 1024)
/* Plaintext of one record (RFC 8446 §5.1) and the room one record needs. */
#define TLS_REC	     16384
#define TLS_REC_ROOM (TLS_REC + 512)

struct tls_be {
	struct io_backend be; /* first */
	struct io_backend *inner;
	struct io_tls_ctx *ctx;
	SSL *ssl;
	BIO *ibio; /* SSL's end of the pair */
	BIO *nbio; /* the network end: ciphertext in and out */
	bool server;
	bool hs_done;
	int err;	 /* sticky failure (-errno) */
	bool local_fail; /* we raised the failure (an alert may be queued) */
	bool got_bytes;	 /* any ciphertext came from the peer */

	/* inner ops */
	bool in_rx, in_tx, in_eof, tx_dead;
	struct iovec in_rx_iov, in_tx_iov;

	/* the endpoint's ops */
	const struct iovec *rx_iov, *tx_iov;
	int rx_cnt, tx_cnt;
	bool rx_on, tx_on;	 /* an op is outstanding */
	bool rx_ready, tx_ready; /* its result is known */
	ssize_t rx_res, tx_res;

	bool shut_req, notify_sent, inner_shut;
	bool dying, abort;
	unsigned int depth;
	struct engine_work work;
	uint8_t stage[TLS_REC];
};

static void tls_progress(struct tls_be *t);

/* Maps the OpenSSL failure at the head of the error queue to -errno. */
static int tls_map_error(const struct tls_be *t)
{
	unsigned long e = ERR_peek_error();
	int reason = ERR_GET_REASON(e);

	if (getenv("IWARP_TLS_DEBUG")) {
		char b[256];
		ERR_error_string_n(e, b, sizeof(b));
		fprintf(stderr, "tls: %s\n", b);
	}
	if (!e)
		return -EPROTO;
	if (ERR_GET_LIB(e) != ERR_LIB_SSL)
		return -EACCES; /* X509 verification and key checks */
	if (reason >= SSL_AD_REASON_OFFSET &&
	    reason < SSL_AD_REASON_OFFSET + 256) {
		/* an alert the peer sent (RFC 8446 §6.2) */
		switch (reason - SSL_AD_REASON_OFFSET) {
		case SSL_AD_PROTOCOL_VERSION:
			return -EPROTONOSUPPORT;
		case SSL_AD_HANDSHAKE_FAILURE:
		case SSL_AD_BAD_CERTIFICATE:
		case SSL_AD_UNSUPPORTED_CERTIFICATE:
		case SSL_AD_CERTIFICATE_REVOKED:
		case SSL_AD_CERTIFICATE_EXPIRED:
		case SSL_AD_CERTIFICATE_UNKNOWN:
		case SSL_AD_UNKNOWN_CA:
		case SSL_AD_ACCESS_DENIED:
		case SSL_AD_DECRYPT_ERROR:
		case SSL_AD_INSUFFICIENT_SECURITY:
		case SSL_AD_CERTIFICATE_REQUIRED:
		case SSL_AD_UNKNOWN_PSK_IDENTITY:
			return -EACCES;
		case SSL_AD_BAD_RECORD_MAC:
			return -EBADMSG;
		case SSL_AD_ILLEGAL_PARAMETER:
			/* OpenSSL's answer to a PSK binder that does not
			 * verify (RFC 8446 §4.2.11.2): a wrong key */
			if (!t->server && !t->hs_done && t->ctx->psk_len)
				return -EACCES;
			return -EPROTO;
		default:
			return -EPROTO;
		}
	}
	switch (reason) {
	case SSL_R_CERTIFICATE_VERIFY_FAILED:
	case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
	case SSL_R_BINDER_DOES_NOT_VERIFY:
	case SSL_R_NO_SHARED_CIPHER:
	case SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM:
	case SSL_R_MISSING_SIGALGS_EXTENSION:
		return -EACCES;
	case SSL_R_UNSUPPORTED_PROTOCOL:
	case SSL_R_NO_PROTOCOLS_AVAILABLE:
	case SSL_R_VERSION_TOO_LOW:
		return -EPROTONOSUPPORT;
	case SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC:
		return -EBADMSG;
	default:
		return -EPROTO; /* not TLS, or a broken record layer */
	}
}

/* Records a failure raised by SSL (an alert may wait in the ring). */
static void tls_fail_ssl(struct tls_be *t)
{
	if (!t->err) {
		t->err = tls_map_error(t);
		t->local_fail = true;
	}
	ERR_clear_error();
}

static size_t tls_out_pending(const struct tls_be *t)
{
	return BIO_ctrl_pending(t->nbio);
}

/* Starts an inner send of queued ciphertext. */
static void tls_flush(struct tls_be *t)
{
	char *p;
	int n, rc;

	if (t->in_tx || t->tx_dead)
		return;
	n = BIO_nread0(t->nbio, &p);
	if (n <= 0) {
		if (t->notify_sent && !t->inner_shut && !t->dying) {
			t->inner_shut = true;
			if (t->inner->ops->shutdown(t->inner) < 0)
				t->tx_dead = true;
		}
		return;
	}
	t->in_tx_iov.iov_base = p;
	t->in_tx_iov.iov_len = (size_t)n;
	rc = t->inner->ops->send(t->inner, &t->in_tx_iov, 1);
	if (rc < 0) {
		t->tx_dead = true;
		if (!t->err)
			t->err = rc;
		return;
	}
	t->in_tx = true;
}

/* Starts an inner receive into the free part of the ring (read-ahead). */
static void tls_fill(struct tls_be *t)
{
	char *p;
	int n, rc;

	if (t->in_rx || t->in_eof || t->dying || t->err)
		return;
	n = BIO_nwrite0(t->nbio, &p);
	if (n <= 0)
		return; /* full: SSL_read makes room */
	t->in_rx_iov.iov_base = p;
	t->in_rx_iov.iov_len = (size_t)n;
	rc = t->inner->ops->recv(t->inner, &t->in_rx_iov, 1);
	if (rc < 0) {
		t->err = rc;
		return;
	}
	t->in_rx = true;
}

/* The peer's stream ended: what a read that needs more data reports. */
static int tls_eof_result(const struct tls_be *t)
{
	if (!t->hs_done)
		return t->got_bytes ? -ECONNRESET : -EPROTO;
	/* RFC 8446 §6.1: an end without close_notify may be a truncation;
	 * after our own close_notify the stream is over anyway */
	return t->notify_sent ? 0 : -ECONNRESET;
}

static void tls_handshake(struct tls_be *t)
{
	int rc;

	ERR_clear_error();
	rc = SSL_do_handshake(t->ssl);
	if (rc == 1) {
		t->hs_done = true;
		return;
	}
	switch (SSL_get_error(t->ssl, rc)) {
	case SSL_ERROR_WANT_READ:
		if (t->in_eof && !t->err)
			t->err = tls_eof_result(t);
		break;
	case SSL_ERROR_WANT_WRITE:
		break;
	default:
		tls_fail_ssl(t);
		break;
	}
}

/* Decrypts into the endpoint's pending receive. */
static void tls_read(struct tls_be *t)
{
	size_t total = 0;
	int i, rc = 0;

	if (!t->rx_on || t->rx_ready)
		return;
	for (i = 0; i < t->rx_cnt; i++) {
		uint8_t *base = t->rx_iov[i].iov_base;
		size_t len = t->rx_iov[i].iov_len, off = 0;

		while (off < len) {
			size_t want = len - off;

			if (want > INT_MAX)
				want = INT_MAX;
			ERR_clear_error();
			rc = SSL_read(t->ssl, base + off, (int)want);
			if (rc <= 0)
				goto out;
			off += (size_t)rc;
			total += (size_t)rc;
		}
	}
out:
	switch (rc > 0 ? SSL_ERROR_NONE : SSL_get_error(t->ssl, rc)) {
	case SSL_ERROR_NONE:
		break; /* every iovec filled */
	case SSL_ERROR_WANT_READ:
		if (!total && t->in_eof && !t->err)
			t->err = tls_eof_result(t);
		break;
	case SSL_ERROR_WANT_WRITE:
		break;
	case SSL_ERROR_ZERO_RETURN:
		if (!total) {
			t->rx_ready = true; /* close_notify: a clean end */
			t->rx_res = 0;
		} /* else: SSL_read says so again next time */
		break;
	default:
		/* now: a failed SSL object does not queue its reason again;
		 * what was decrypted before still goes up first */
		tls_fail_ssl(t);
		break;
	}
	if (total) {
		t->rx_ready = true;
		t->rx_res = (ssize_t)total;
	}
}

/* Encrypts |len| bytes at |p| as one record; false when it must wait. */
static bool tls_write_rec(struct tls_be *t, const void *p, size_t len)
{
	int rc;

	ERR_clear_error();
	rc = SSL_write(t->ssl, p, (int)len);
	if (rc == (int)len)
		return true;
	if (rc <= 0 && SSL_get_error(t->ssl, rc) == SSL_ERROR_WANT_WRITE)
		return false; /* cannot happen with TLS_REC_ROOM free */
	tls_fail_ssl(t);
	return false;
}

/* Encrypts the endpoint's pending send while the ring has room. */
static void tls_write(struct tls_be *t)
{
	size_t total = 0;
	int i = 0;
	size_t off = 0;

	if (!t->tx_on || t->tx_ready)
		return;
	while (i < t->tx_cnt && !t->err &&
	       (size_t)BIO_ctrl_get_write_guarantee(t->ibio) >= TLS_REC_ROOM) {
		const uint8_t *base = t->tx_iov[i].iov_base;
		size_t len = t->tx_iov[i].iov_len, staged = 0;

		if (off == len) {
			i++;
			off = 0;
			continue;
		}
		if (len - off >= TLS_REC) {
			/* a whole record straight from the caller's buffer */
			if (!tls_write_rec(t, base + off, TLS_REC))
				break;
			off += TLS_REC;
			total += TLS_REC;
			continue;
		}
		/* gather small pieces into one record */
		while (i < t->tx_cnt && staged < TLS_REC) {
			size_t k = t->tx_iov[i].iov_len - off;

			if (k > TLS_REC - staged)
				k = TLS_REC - staged;
			memcpy(t->stage + staged,
			       (const uint8_t *)t->tx_iov[i].iov_base + off, k);
			staged += k;
			off += k;
			if (off == t->tx_iov[i].iov_len) {
				i++;
				off = 0;
			}
		}
		if (!tls_write_rec(t, t->stage, staged))
			break; /* only on failure: the room was there */
		total += staged;
	}
	if (total) {
		t->tx_ready = true;
		t->tx_res = (ssize_t)total;
	} else if (t->err) {
		t->tx_ready = true;
		t->tx_res = t->err;
	}
}

/* Hands finished results (and failures) to the endpoint. */
static void tls_deliver(struct tls_be *t)
{
	/* a failure goes up once our alert left (or cannot leave), so the
	 * peer learns why before the endpoint resets the connection */
	bool err_out =
		t->err && (t->tx_dead || (!t->in_tx && !tls_out_pending(t)));

	if (t->rx_on && !t->rx_ready && err_out) {
		t->rx_ready = true;
		t->rx_res = t->err;
	}
	if (t->tx_on && !t->tx_ready && err_out) {
		t->tx_ready = true;
		t->tx_res = t->err;
	}
	if (t->rx_on && t->rx_ready && !t->dying) {
		t->rx_on = t->rx_ready = false;
		t->be.up.rx_complete(t->be.up.up, t->rx_res);
	}
	if (t->tx_on && t->tx_ready && !t->dying) {
		t->tx_on = t->tx_ready = false;
		t->be.up.tx_complete(t->be.up.up, t->tx_res);
	}
}

static void tls_free(struct tls_be *t)
{
	t->inner->ops->destroy(t->inner, t->abort);
	SSL_free(t->ssl); /* frees the SSL end of the pair */
	BIO_free(t->nbio);
	io_tls_ctx_unref(t->ctx);
	iw_free(t);
}

/* Frees |t| once destroyed, idle below and outside every callback. */
static bool tls_maybe_free(struct tls_be *t)
{
	if (!t->dying || t->depth || t->in_rx || t->in_tx ||
	    atomic_load(&t->work.queued))
		return false;
	if (!t->abort && !t->tx_dead && tls_out_pending(t)) {
		tls_flush(t); /* orderly: close_notify leaves first */
		if (t->in_tx)
			return false;
	}
	tls_free(t);
	return true;
}

static void tls_progress(struct tls_be *t)
{
	t->depth++;
	if (!t->dying) {
		if (!t->hs_done && !t->err)
			tls_handshake(t);
		if (t->hs_done && !t->err) {
			tls_read(t);
			tls_write(t);
			if (t->shut_req && !t->notify_sent && !t->tx_on) {
				ERR_clear_error();
				SSL_shutdown(t->ssl); /* close_notify */
				ERR_clear_error();
				t->notify_sent = true;
			}
		}
		if (t->shut_req && !t->hs_done && !t->inner_shut) {
			t->inner_shut = true; /* no session: plain FIN */
			(void)t->inner->ops->shutdown(t->inner);
		}
		tls_flush(t);
		tls_fill(t);
		tls_deliver(t);
	}
	t->depth--;
	(void)tls_maybe_free(t);
}

static void tls_work(void *arg)
{
	tls_progress(arg);
}

static void tls_rx_complete(void *up, ssize_t res)
{
	struct tls_be *t = up;

	t->in_rx = false;
	if (res > 0) {
		char *p;
		int n = BIO_nwrite(t->nbio, &p, (int)res);

		/* the pair rewinds an emptied ring: move the bytes along */
		if (n == (int)res && p != t->in_rx_iov.iov_base)
			memmove(p, t->in_rx_iov.iov_base, (size_t)res);
		t->got_bytes = true;
	} else if (res == 0) {
		t->in_eof = true;
	} else if (res != -EAGAIN && res != -EINTR && !t->err) {
		if (res == -ECANCELED && t->dying)
			t->in_eof = true;
		else if (!t->hs_done && !t->got_bytes)
			t->err = -EPROTO; /* reset before any TLS record */
		else
			t->err = (int)res;
	}
	tls_progress(t);
}

static void tls_tx_complete(void *up, ssize_t res)
{
	struct tls_be *t = up;

	t->in_tx = false;
	if (res > 0) {
		char *p;

		BIO_nread(t->nbio, &p, (int)res);
	} else if (res != -EAGAIN && res != -EINTR) {
		t->tx_dead = true;
		if (!t->err)
			t->err = res ? (int)res : -EPIPE;
	}
	tls_progress(t);
}

static int tls_recv(struct io_backend *be, const struct iovec *iov, int cnt)
{
	struct tls_be *t = (struct tls_be *)be;

	t->rx_iov = iov;
	t->rx_cnt = cnt;
	t->rx_on = true;
	t->rx_ready = false;
	engine_work_queue(be->eng, &t->work);
	return 0;
}

static int tls_send(struct io_backend *be, const struct iovec *iov, int cnt)
{
	struct tls_be *t = (struct tls_be *)be;

	t->tx_iov = iov;
	t->tx_cnt = cnt;
	t->tx_on = true;
	t->tx_ready = false;
	engine_work_queue(be->eng, &t->work);
	return 0;
}

static int tls_shutdown(struct io_backend *be)
{
	struct tls_be *t = (struct tls_be *)be;

	t->shut_req = true;
	engine_work_queue(be->eng, &t->work);
	return 0;
}

static void tls_cancel_rx(struct io_backend *be)
{
	struct tls_be *t = (struct tls_be *)be;

	if (t->rx_on && !t->rx_ready) {
		t->rx_ready = true;
		t->rx_res = -ECANCELED;
		engine_work_queue(be->eng, &t->work);
	}
}

static void tls_cancel(struct io_backend *be)
{
	struct tls_be *t = (struct tls_be *)be;

	tls_cancel_rx(be);
	if (t->tx_on && !t->tx_ready) {
		t->tx_ready = true;
		t->tx_res = -ECANCELED;
		engine_work_queue(be->eng, &t->work);
	}
}

static void tls_destroy(struct io_backend *be, bool abort)
{
	struct tls_be *t = (struct tls_be *)be;

	t->dying = true;
	/* our failure: let the alert reach the peer (FIN, not RST) */
	t->abort = abort && !t->local_fail;
	if (!t->abort) {
		if (t->hs_done && !t->notify_sent && !t->err) {
			ERR_clear_error();
			SSL_shutdown(t->ssl); /* a clean end for the peer */
			ERR_clear_error();
			t->notify_sent = true;
		}
		tls_flush(t); /* the close_notify or alert leaves now */
	}
	/* bounded like the socket backend's own destroy: what the kernel
	 * took goes out before the FIN, a send blocked on a peer that stopped
	 * reading is cancelled rather than waited for */
	if (t->in_rx || t->in_tx)
		t->inner->ops->cancel(t->inner);
	(void)tls_maybe_free(t);
}

static int tls_mss(struct io_backend *be)
{
	struct tls_be *t = (struct tls_be *)be;

	return t->inner->ops->mss(t->inner);
}

static const struct io_backend_ops tls_ops = {
	.name = "tls",
	.recv = tls_recv,
	.send = tls_send,
	.shutdown = tls_shutdown,
	.cancel = tls_cancel,
	.cancel_rx = tls_cancel_rx,
	.destroy = tls_destroy,
	.mss = tls_mss,
};

/* Per-connection verification (RFC 8446 §4.4.2.4). 0 or -errno. */
static int tls_setup_verify(struct tls_be *t)
{
	const struct io_tls_ctx *c = t->ctx;

	if (!t->server) {
		SSL_set_verify(t->ssl, SSL_VERIFY_PEER, NULL);
		if (c->peer_name[0]) {
			X509_VERIFY_PARAM *vp = SSL_get0_param(t->ssl);

			if (X509_VERIFY_PARAM_set1_ip_asc(vp, c->peer_name) !=
				    1 &&
			    SSL_set1_host(t->ssl, c->peer_name) != 1)
				return -ENOMEM;
		}
		return 0;
	}
	if (c->require_peer_cert)
		SSL_set_verify(t->ssl,
			       SSL_VERIFY_PEER |
				       SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
			       NULL);
	else if (c->has_ca)
		SSL_set_verify(t->ssl, SSL_VERIFY_PEER, NULL);
	else
		SSL_set_verify(t->ssl, SSL_VERIFY_NONE, NULL);
	return 0;
}

struct io_backend *io_tls_wrap(struct io_backend *inner, struct io_tls_ctx *ctx,
			       bool server)
{
	struct tls_be *t = iw_calloc(1, sizeof(*t));
	struct io_backend_up up = {tls_rx_complete, tls_tx_complete, NULL};

	if (!t)
		goto err;
	ERR_clear_error();
	t->ssl = SSL_new(ctx->ssl_ctx);
	if (!t->ssl ||
	    BIO_new_bio_pair(&t->ibio, TLS_RING, &t->nbio, TLS_RING) != 1)
		goto err_ssl;
	SSL_set_bio(t->ssl, t->ibio, t->ibio);
	t->ctx = ctx;
	io_tls_ctx_ref(ctx);
	t->server = server;
	if (tls_setup_verify(t) < 0) {
		io_tls_ctx_unref(ctx);
		goto err_ssl;
	}
	if (server)
		SSL_set_accept_state(t->ssl);
	else
		SSL_set_connect_state(t->ssl);
	t->be.ops = &tls_ops;
	t->be.eng = inner->eng;
	t->inner = inner;
	engine_work_init(&t->work, tls_work, t);
	up.up = t;
	io_backend_set_up(inner, &up);
	engine_work_queue(t->be.eng, &t->work); /* the handshake starts */
	return &t->be;

err_ssl:
	ERR_clear_error();
	if (t->ssl)
		SSL_free(t->ssl); /* frees ibio once set */
	else if (t->ibio)
		BIO_free(t->ibio);
	if (t->nbio)
		BIO_free(t->nbio);
	iw_free(t);
err:
	inner->ops->destroy(inner, true);
	errno = ENOMEM;
	return NULL;
}
