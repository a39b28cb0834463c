/*
 * tools/common/tls.h: the TLS options shared by iwarp_ping and iwarp_bw
 * (--tls, --tls-cert, --tls-key, --tls-ca, --tls-psk-file).
 */
#ifndef IWARP_TOOLS_COMMON_TLS_H
#define IWARP_TOOLS_COMMON_TLS_H

#include <stdbool.h>
#include <stdio.h>

struct iwarp_cm_id;

struct tool_tls {
	int on; /* --tls, or any --tls-* option */
	const char *cert, *key, *ca, *psk;
};

/* Long option values, above every tool's own (>= 0x4000). */
enum {
	TOOL_OPT_TLS = 0x4000,
	TOOL_OPT_TLS_CERT,
	TOOL_OPT_TLS_KEY,
	TOOL_OPT_TLS_CA,
	TOOL_OPT_TLS_PSK,
};

/* struct option entries for getopt_long (append to a tool's table). */
/* clang-format off */
#define TOOL_TLS_LONG_OPTS                                                     \
	{"tls", no_argument, NULL, TOOL_OPT_TLS},                              \
	{"tls-cert", required_argument, NULL, TOOL_OPT_TLS_CERT},              \
	{"tls-key", required_argument, NULL, TOOL_OPT_TLS_KEY},                \
	{"tls-ca", required_argument, NULL, TOOL_OPT_TLS_CA},                  \
	{"tls-psk-file", required_argument, NULL, TOOL_OPT_TLS_PSK}
/* clang-format on */

/* Takes option |op| with |arg|: 1 when it was a TLS option, else 0. */
int tool_tls_opt(struct tool_tls *t, int op, const char *arg);

/* Checks the combination; prints why not and returns -1 when unusable. */
int tool_tls_check(const struct tool_tls *t, const char *prog);

/* The help lines of the TLS options. */
void tool_tls_usage(FILE *f);

/*
 * Applies |t| to |id| (before connect / listen): the server requires a
 * client certificate when --tls-ca is given. 0 or -errno (printed).
 */
int tool_tls_apply(const struct tool_tls *t, struct iwarp_cm_id *id,
		   bool server, const char *prog);

#endif /* IWARP_TOOLS_COMMON_TLS_H */
