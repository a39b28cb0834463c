/*
 * tools/common/tls.c: the TLS options of the tools (tools/common/tls.h).
 */
#include "config.h"

#include <string.h>

#include "iwarp/iwarp.h"
#include "tools/common/tls.h"

int tool_tls_opt(struct tool_tls *t, int op, const char *arg)
{
	switch (op) {
	case TOOL_OPT_TLS:
		break;
	case TOOL_OPT_TLS_CERT:
		t->cert = arg;
		break;
	case TOOL_OPT_TLS_KEY:
		t->key = arg;
		break;
	case TOOL_OPT_TLS_CA:
		t->ca = arg;
		break;
	case TOOL_OPT_TLS_PSK:
		t->psk = arg;
		break;
	default:
		return 0;
	}
	t->on = 1;
	return 1;
}

int tool_tls_check(const struct tool_tls *t, const char *prog)
{
	if (!t->on)
		return 0;
	if (!t->cert != !t->key) {
		fprintf(stderr, "%s: --tls-cert and --tls-key go together\n",
			prog);
		return -1;
	}
	if (!t->cert && !t->ca && !t->psk) {
		fprintf(stderr,
			"%s: --tls needs credentials: --tls-cert/--tls-key, "
			"--tls-ca or --tls-psk-file\n",
			prog);
		return -1;
	}
	return 0;
}

void tool_tls_usage(FILE *f)
{
	fprintf(f,
		"TLS 1.3 (both sides must ask; any --tls-* implies --tls):\n"
		"  --tls                 run MPA/DDP/RDMAP inside TLS 1.3\n"
		"  --tls-cert FILE       our certificate (PEM), with --tls-key\n"
		"  --tls-key FILE        its private key (PEM)\n"
		"  --tls-ca FILE         CA(s) the peer's certificate must chain to;\n"
		"                        on the server it also requires a client certificate\n"
		"  --tls-psk-file FILE   external pre-shared key, hex (16..64 octets),\n"
		"                        identity \"iwarp\"\n");
}

int tool_tls_apply(const struct tool_tls *t, struct iwarp_cm_id *id,
		   bool server, const char *prog)
{
	struct iwarp_tls_attr a;
	int rc;

	if (!t->on)
		return 0;
	memset(&a, 0, sizeof(a));
	a.cert_file = t->cert;
	a.key_file = t->key;
	a.ca_file = t->ca;
	a.psk_file = t->psk;
	a.require_peer_cert = server && t->ca;
	rc = iwarp_cm_set_tls(id, &a);
	if (rc)
		fprintf(stderr, "%s: TLS credentials: %s\n", prog,
			strerror(-rc));
	return rc;
}
