/*
 * io/tls_ctx.c: TLS 1.3 credentials (certificates, CA, external PSK) loaded
 * into one OpenSSL SSL_CTX shared by the connections of a CM id.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "io/tls_int.h"
#include "util/mem.h"

/* Opens |path| once to get the system's errno for a missing file. */
static int tls_file_check(const char *path)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return errno ? -errno : -ENOENT;
	fclose(f);
	return 0;
}

static int tls_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Reads the hex PSK of |path| (white space ignored). 0 or -errno. */
static int tls_psk_load(struct io_tls_ctx *c, const char *path)
{
	FILE *f = fopen(path, "r");
	int ch, hi = -1;

	if (!f)
		return errno ? -errno : -ENOENT;
	c->psk_len = 0;
	while ((ch = fgetc(f)) != EOF) {
		int v;

		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')
			continue;
		v = tls_hexval(ch);
		if (v < 0 || (hi < 0 && c->psk_len == sizeof(c->psk))) {
			fclose(f);
			return -EINVAL;
		}
		if (hi < 0) {
			hi = v;
		} else {
			c->psk[c->psk_len++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	fclose(f);
	if (hi >= 0 || c->psk_len < TLS_PSK_MIN)
		return -EINVAL;
	return 0;
}

/* A session carrying the external PSK (RFC 8446 §4.2.11). */
static SSL_SESSION *tls_psk_session(SSL *ssl, const struct io_tls_ctx *c)
{
	static const unsigned char id[2] = {0x13, 0x02};
	const SSL_CIPHER *cipher = SSL_CIPHER_find(ssl, id);
	SSL_SESSION *s;

	if (!cipher)
		return NULL;
	s = SSL_SESSION_new();
	if (!s)
		return NULL;
	if (!SSL_SESSION_set1_master_key(s, c->psk, c->psk_len) ||
	    !SSL_SESSION_set_cipher(s, cipher) ||
	    !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
		SSL_SESSION_free(s);
		return NULL;
	}
	return s;
}

static int tls_psk_use_cb(SSL *ssl, const EVP_MD *md, const unsigned char **id,
			  size_t *idlen, SSL_SESSION **sess)
{
	const struct io_tls_ctx *c =
		SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), tls_ctx_index());
	SSL_SESSION *s;

	*sess = NULL;
	if (!c || !c->psk_len)
		return 1; /* no PSK: certificates only */
	s = tls_psk_session(ssl, c);
	if (!s)
		return 0;
	if (md &&
	    md != SSL_CIPHER_get_handshake_digest(SSL_SESSION_get0_cipher(s))) {
		SSL_SESSION_free(s); /* after a HelloRetryRequest: not usable */
		return 1;
	}
	*id = (const unsigned char *)c->psk_identity;
	*idlen = strlen(c->psk_identity);
	*sess = s;
	return 1;
}

static int tls_psk_find_cb(SSL *ssl, const unsigned char *id, size_t idlen,
			   SSL_SESSION **sess)
{
	const struct io_tls_ctx *c =
		SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), tls_ctx_index());

	*sess = NULL;
	if (!c || !c->psk_len || idlen != strlen(c->psk_identity) ||
	    memcmp(id, c->psk_identity, idlen) != 0)
		return 1; /* unknown identity: certificates, or refusal */
	*sess = tls_psk_session(ssl, c);
	return *sess ? 1 : 0;
}

static int tls_ctx_index_v = -1;
static pthread_once_t tls_ctx_once = PTHREAD_ONCE_INIT;

static void tls_ctx_index_init(void)
{
	tls_ctx_index_v = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

int tls_ctx_index(void)
{
	pthread_once(&tls_ctx_once, tls_ctx_index_init);
	return tls_ctx_index_v;
}

/* Loads the files of |cfg| into |c|. 0 or -errno. */
static int tls_ctx_load(struct io_tls_ctx *c, const struct io_tls_cfg *cfg)
{
	SSL_CTX *s = c->ssl_ctx;
	int err;

	if (!cfg->cert_file != !cfg->key_file)
		return -EINVAL; /* a certificate needs its key */
	if (cfg->cert_file) {
		if ((err = tls_file_check(cfg->cert_file)) ||
		    (err = tls_file_check(cfg->key_file)))
			return err;
		if (SSL_CTX_use_certificate_chain_file(s, cfg->cert_file) !=
			    1 ||
		    SSL_CTX_use_PrivateKey_file(s, cfg->key_file,
						SSL_FILETYPE_PEM) != 1 ||
		    SSL_CTX_check_private_key(s) != 1)
			return -EINVAL;
		c->has_cert = true;
	}
	if (cfg->ca_file) {
		if ((err = tls_file_check(cfg->ca_file)))
			return err;
		if (SSL_CTX_load_verify_locations(s, cfg->ca_file, NULL) != 1)
			return -EINVAL;
		c->has_ca = true;
	}
	if (cfg->psk_file) {
		const char *idn =
			cfg->psk_identity ? cfg->psk_identity : "iwarp";

		if ((err = tls_psk_load(c, cfg->psk_file)))
			return err;
		if (!*idn || strlen(idn) >= sizeof(c->psk_identity))
			return -EINVAL;
		strcpy(c->psk_identity, idn);
		SSL_CTX_set_psk_use_session_callback(s, tls_psk_use_cb);
		SSL_CTX_set_psk_find_session_callback(s, tls_psk_find_cb);
	}
	if (cfg->peer_name) {
		if (!*cfg->peer_name ||
		    strlen(cfg->peer_name) >= sizeof(c->peer_name))
			return -EINVAL;
		strcpy(c->peer_name, cfg->peer_name);
	}
	if (cfg->require_peer_cert && !c->has_ca)
		return -EINVAL; /* nothing to verify the client against */
	c->require_peer_cert = cfg->require_peer_cert;
	if (!c->has_cert && !c->has_ca && !c->psk_len)
		return -EINVAL;
	return 0;
}

struct io_tls_ctx *io_tls_ctx_create(const struct io_tls_cfg *cfg)
{
	struct io_tls_ctx *c;
	int err = -ENOMEM;

	if (!cfg) {
		errno = EINVAL;
		return NULL;
	}
	c = iw_calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	atomic_init(&c->refs, 1);
	ERR_clear_error();
	c->ssl_ctx = SSL_CTX_new(TLS_method());
	if (!c->ssl_ctx || tls_ctx_index() < 0)
		goto err;
	/* RFC 8446 only: a peer offering less fails (no downgrade) */
	if (SSL_CTX_set_min_proto_version(c->ssl_ctx, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_set_max_proto_version(c->ssl_ctx, TLS1_3_VERSION) != 1)
		goto err;
	SSL_CTX_set_ex_data(c->ssl_ctx, tls_ctx_index(), c);
	SSL_CTX_set_num_tickets(c->ssl_ctx,
				0); /* one connection, no resumption */
	SSL_CTX_set_session_cache_mode(c->ssl_ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_mode(c->ssl_ctx,
			 SSL_MODE_ENABLE_PARTIAL_WRITE |
				 SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	err = tls_ctx_load(c, cfg);
	if (err)
		goto err;
	ERR_clear_error();
	return c;
err:
	ERR_clear_error();
	if (c->ssl_ctx)
		SSL_CTX_free(c->ssl_ctx);
	OPENSSL_cleanse(c->psk, sizeof(c->psk));
	iw_free(c);
	errno = -err;
	return NULL;
}

void io_tls_ctx_ref(struct io_tls_ctx *ctx)
{
	atomic_fetch_add(&ctx->refs, 1);
}

void io_tls_ctx_unref(struct io_tls_ctx *ctx)
{
	if (!ctx || atomic_fetch_sub(&ctx->refs, 1) != 1)
		return;
	SSL_CTX_free(ctx->ssl_ctx);
	OPENSSL_cleanse(ctx->psk, sizeof(ctx->psk));
	iw_free(ctx);
}

bool io_tls_ctx_can_serve(const struct io_tls_ctx *ctx)
{
	return ctx->has_cert || ctx->psk_len;
}

bool io_tls_ctx_can_connect(const struct io_tls_ctx *ctx)
{
	return ctx->has_ca || ctx->psk_len;
}

bool io_tls_ktls_available(void)
{
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_available_ulp", "r");
	char buf[256], *tok, *save = NULL;
	bool found = false;

	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		for (tok = strtok_r(buf, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save))
			if (strcmp(tok, "tls") == 0)
				found = true;
	}
	fclose(f);
	return found;
}
