/*
 * bench/tcp_raw_tls.c: the TLS mode of tcp_raw, the baseline of the
 * encrypted iwarp_bw rows of bench.sh:
 *
 *   tcp_raw tls [-s SIZE] [-D SECS] [--cc CC] [--json]
 *
 * One TCP connection on 127.0.0.1 inside TLS 1.3 with OpenSSL's defaults
 * (the same library, version and cipher suite choice as libiwarp's io/tls.c:
 * TLS_AES_256_GCM_SHA384 between two OpenSSL 3 peers), a certificate made
 * in memory. A sender thread calls SSL_write(SIZE) in a loop on a blocking
 * socket, a receiver thread SSL_read()s into 1 MiB; bandwidth is counted at
 * the receiver after a 250 ms warm-up (read-ahead on, 256 KiB read buffer).
 * Prints one JSON line.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "bench/tcp_raw.h"

struct tls_run {
	size_t size;
	double seconds;
	const char *cc;
	SSL_CTX *sctx, *cctx;
	int sfd, cfd;
	volatile int stop;
	uint64_t bytes, t0, t1;
	double c0, c1;
	int err;
	char cipher[64];
};

/* A self-signed P-256 certificate for the server context. */
static int tls_cert(SSL_CTX *ctx)
{
	EVP_PKEY *pk = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	X509_NAME *n;
	int ok = 0;

	if (!pk || !x)
		goto out;
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, pk);
	n = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
				   (const unsigned char *)"tcp_raw", -1, -1, 0);
	X509_set_issuer_name(x, n);
	ok = X509_sign(x, pk, EVP_sha256()) > 0 &&
	     SSL_CTX_use_certificate(ctx, x) == 1 &&
	     SSL_CTX_use_PrivateKey(ctx, pk) == 1;
out:
	X509_free(x);
	EVP_PKEY_free(pk);
	return ok ? 0 : -1;
}

static SSL_CTX *tls_ctx(int server)
{
	SSL_CTX *c = SSL_CTX_new(TLS_method());

	if (!c)
		return NULL;
	SSL_CTX_set_min_proto_version(c, TLS1_3_VERSION);
	SSL_CTX_set_num_tickets(c, 0);
	/* a fair baseline: read whole socket buffers, not a record header
	 * then its body per recv(2) */
	SSL_CTX_set_read_ahead(c, 1);
	SSL_CTX_set_default_read_buffer_len(c, 256 * 1024);
	if (server && tls_cert(c)) {
		SSL_CTX_free(c);
		return NULL;
	}
	return c;
}

static void *tls_recv(void *arg)
{
	struct tls_run *r = arg;
	size_t len = 1 << 20;
	char *buf = malloc(len);
	SSL *ssl = SSL_new(r->sctx);
	uint64_t first = 0, warm = 250000000ULL;

	if (!buf || !ssl) {
		r->err = ENOMEM;
		goto out;
	}
	SSL_set_fd(ssl, r->sfd);
	if (SSL_accept(ssl) != 1) {
		r->err = EPROTO;
		goto out;
	}
	for (;;) {
		int n = SSL_read(ssl, buf, (int)len);
		uint64_t now;

		if (n <= 0)
			break;
		now = now_ns();
		if (!first)
			first = now;
		if (!r->t0) {
			if (now - first >= warm) {
				r->t0 = now;
				r->c0 = cpu_now();
			}
			continue;
		}
		if (!r->stop) {
			r->bytes += (uint64_t)n;
			r->t1 = now;
		}
	}
	r->c1 = cpu_now();
out:
	SSL_free(ssl);
	free(buf);
	return NULL;
}

static void *tls_send(void *arg)
{
	struct tls_run *r = arg;
	char *buf = calloc(1, r->size);
	SSL *ssl = SSL_new(r->cctx);

	if (!buf || !ssl) {
		r->err = ENOMEM;
		goto out;
	}
	SSL_set_fd(ssl, r->cfd);
	if (SSL_connect(ssl) != 1) {
		r->err = EPROTO;
		goto out;
	}
	snprintf(r->cipher, sizeof(r->cipher), "%s",
		 SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)));
	while (!r->stop)
		if (SSL_write(ssl, buf, (int)r->size) <= 0) {
			r->err = EIO;
			break;
		}
	SSL_shutdown(ssl);
out:
	shutdown(r->cfd, SHUT_WR);
	SSL_free(ssl);
	free(buf);
	return NULL;
}

/* A connected pair on 127.0.0.1 (TCP_NODELAY as the engine sets it). */
static int tls_pair(struct tls_run *r)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (lfd < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r->cfd = socket(AF_INET, SOCK_STREAM, 0);
	if (r->cfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen) < 0 ||
	    listen(lfd, 1) < 0)
		return -1;
	if (r->cc)
		setsockopt(r->cfd, IPPROTO_TCP, TCP_CONGESTION, r->cc,
			   (socklen_t)strlen(r->cc));
	if (connect(r->cfd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -1;
	r->sfd = accept(lfd, NULL, NULL);
	close(lfd);
	if (r->sfd < 0)
		return -1;
	setsockopt(r->cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(r->sfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

int tcp_raw_tls(int argc, char **argv)
{
	static const struct option lo[] = {
		{"cc", required_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	struct tls_run r;
	pthread_t ts, tr;
	struct timespec d;
	double sec;
	int c;

	memset(&r, 0, sizeof(r));
	r.size = 65536;
	r.seconds = 1.5;
	optind = 2;
	while ((c = getopt_long(argc, argv, "s:D:", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			r.size = (size_t)strtoul(optarg, NULL, 0);
			break;
		case 'D':
			r.seconds = strtod(optarg, NULL);
			break;
		case 'c':
			r.cc = optarg;
			break;
		case 'j':
			break;
		default:
			fprintf(stderr,
				"usage: tcp_raw tls [-s SIZE] [-D SECS] [--cc CC] [--json]\n");
			return 1;
		}
	}
	if (r.size < 1 || r.size > (1u << 30) || r.seconds <= 0)
		return 1;
	r.sctx = tls_ctx(1);
	r.cctx = tls_ctx(0);
	if (!r.sctx || !r.cctx || tls_pair(&r)) {
		fprintf(stderr, "tcp_raw: tls set-up: %s\n", strerror(errno));
		return 1;
	}
	pthread_create(&tr, NULL, tls_recv, &r);
	pthread_create(&ts, NULL, tls_send, &r);
	d.tv_sec = (time_t)r.seconds;
	d.tv_nsec = (long)((r.seconds - (double)d.tv_sec) * 1e9);
	nanosleep(&d, NULL);
	r.stop = 1;
	pthread_join(ts, NULL);
	pthread_join(tr, NULL);
	sec = r.t1 > r.t0 ? (double)(r.t1 - r.t0) / 1e9 : 0;
	if (sec <= 0 || r.err) {
		fprintf(stderr, "tcp_raw: tls: nothing measured (%s)\n",
			strerror(r.err ? r.err : EAGAIN));
		return 1;
	}
	printf("{\"tool\":\"tcp_raw\",\"mode\":\"tls\",\"bytes\":%zu,\"cipher\":\"%s\","
	       "\"seconds\":%.3f,\"bytes_total\":%llu,\"bw_average\":%.3f,"
	       "\"unit\":\"MB/sec\",\"cpu_s\":%.3f}\n",
	       r.size, r.cipher, sec, (unsigned long long)r.bytes,
	       (double)r.bytes / sec / 1048576.0, r.c1 - r.c0);
	close(r.sfd);
	close(r.cfd);
	SSL_CTX_free(r.sctx);
	SSL_CTX_free(r.cctx);
	return 0;
}
