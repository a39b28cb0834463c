/*
 * tools/ping/opts.c: command line of iwarp_ping. rping's options keep their
 * letters and defaults (rdma-core librdmacm/man/rping.1); libiwarp's own
 * connection options are long options.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ping/ping.h"

enum {
	OPT_CRC = 256,
	OPT_MARKERS,
	OPT_MPA_REV,
	OPT_P2P,
	OPT_TIMEOUT,
	OPT_LISTEN_TIMEOUT,
	OPT_VERSION,
};

static const struct option opts_long[] = {
	{"server", no_argument, NULL, 's'},
	{"client", no_argument, NULL, 'c'},
	{"addr", required_argument, NULL, 'a'},
	{"src-addr", required_argument, NULL, 'I'},
	{"port", required_argument, NULL, 'p'},
	{"size", required_argument, NULL, 'S'},
	{"count", required_argument, NULL, 'C'},
	{"verbose", no_argument, NULL, 'v'},
	{"validate", no_argument, NULL, 'V'},
	{"debug", no_argument, NULL, 'd'},
	{"persistent", no_argument, NULL, 'P'},
	{"crc", optional_argument, NULL, OPT_CRC},
	{"markers", no_argument, NULL, OPT_MARKERS},
	{"mpa-rev", required_argument, NULL, OPT_MPA_REV},
	{"p2p", required_argument, NULL, OPT_P2P},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"listen-timeout", required_argument, NULL, OPT_LISTEN_TIMEOUT},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	TOOL_TLS_LONG_OPTS,
	{NULL, 0, NULL, 0},
};

void ping_opts_usage(FILE *f)
{
	fprintf(f,
		"usage: iwarp_ping -s [-vVdP] [-S size] [-C count] [-a addr] [-p port] [options]\n"
		"       iwarp_ping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port] [options]\n"
		"\n"
		"rping-compatible options:\n"
		"  -s, --server          server side\n"
		"  -c, --client          client side\n"
		"  -a, --addr ADDR       server: address to bind (default: any IPv4,\n"
		"                        use -a ::0 for any IPv6); client: server address\n"
		"  -I, --src-addr ADDR   client: source address to bind to (default: any)\n"
		"  -p, --port PORT       TCP port (default %d)\n"
		"  -S, --size SIZE       ping data size, %d..%d (default %d)\n"
		"  -C, --count COUNT     ping count, 0 = infinite (default 0)\n"
		"  -v, --verbose         display ping data to stdout\n"
		"  -V, --validate        validate ping data\n"
		"  -d, --debug           debug output (events, keys, addresses)\n"
		"  -P, --persistent      server keeps accepting connections (default: one)\n"
		"  -q                    accepted for rping compatibility; no effect\n"
		"\n"
		"libiwarp options (default: the library's, after IWARP_* environment):\n"
		"  --crc[=request|require|off]\n                        request MPA CRC32c (default: off, follow the peer)\n"
		"  --markers             ask the peer to insert MPA markers (default: off)\n"
		"  --mpa-rev 1|2         MPA revision; 2 = RFC 6581 enhanced (default 2)\n"
		"  --p2p none|write|read|send|auto\n"
		"                        RFC 6581 ready-to-receive message (default auto)\n"
		"  --timeout MS          bound of every wait for the peer (default %d)\n"
		"  --listen-timeout MS   server: give up when no client connects in MS,\n"
		"                        0 = wait forever (default 0)\n"
		"  -h, --help            this text\n"
		"  --version             print the version\n"
		"\n",
		PING_DEFAULT_PORT, PING_MIN_SIZE, PING_MAX_SIZE,
		PING_DEFAULT_SIZE, PING_DEFAULT_TIMEOUT_MS);
	tool_tls_usage(f);
	fprintf(f, "\nexit status: 0 success, 1 failure, 2 usage error, "
		   "3 io_uring unavailable\n");
}

/* Parses a decimal in [min, max] into |out|. Returns 0 or -EINVAL. */
static int opts_num(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Index of |s| in |names| (|n| entries); -1 if absent. */
static int opts_pick(const char *s, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static const char *const p2p_names[] = {"none", "write", "read", "send",
					"auto"};

/* Handles one parsed option |op|. Returns 0, 1 (exit ok) or -EINVAL. */
static int opts_one(struct ping_opts *o, int op, const char *arg)
{
	long v;

	if (tool_tls_opt(&o->tls, op, arg))
		return 0;
	switch (op) {
	case 's':
		o->server = 1;
		return 0;
	case 'c':
		o->server = 0;
		return 0;
	case 'a':
		o->addr = arg;
		return 0;
	case 'I':
		o->src_addr = arg;
		return 0;
	case 'p':
		if (opts_num(arg, 0, 65535, &v)) {
			fprintf(stderr, "iwarp_ping: invalid port %s\n", arg);
			return -EINVAL;
		}
		o->port = (uint16_t)v;
		return 0;
	case 'S':
		if (opts_num(arg, INT_MIN, INT_MAX, &v) || v < PING_MIN_SIZE ||
		    v > PING_MAX_SIZE) {
			/* rping's wording */
			fprintf(stderr,
				"Invalid size %s (valid range is %d to %d)\n",
				arg, PING_MIN_SIZE, PING_MAX_SIZE);
			return -EINVAL;
		}
		o->size = (uint32_t)v;
		return 0;
	case 'C':
		if (opts_num(arg, 0, INT_MAX, &v)) {
			fprintf(stderr, "Invalid count %s\n", arg);
			return -EINVAL;
		}
		o->count = (uint32_t)v;
		return 0;
	case 'v':
		o->verbose++;
		return 0;
	case 'V':
		o->validate++;
		return 0;
	case 'd':
		o->debug++;
		return 0;
	case 'P':
		o->persistent = 1;
		return 0;
	case 'q':
		o->self_qp = 1;
		return 0;
	case OPT_CRC:
		if (!arg || !strcmp(arg, "request")) {
			o->crc = IWARP_CRC_REQUEST;
		} else if (!strcmp(arg, "require")) {
			o->crc = IWARP_CRC_REQUIRE;
		} else if (!strcmp(arg, "off")) {
			o->crc = IWARP_CRC_OFF;
		} else {
			fprintf(stderr, "iwarp_ping: invalid --crc=%s\n", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_MARKERS:
		o->markers = 1;
		return 0;
	case OPT_MPA_REV:
		if (opts_num(arg, 1, 2, &v)) {
			fprintf(stderr,
				"iwarp_ping: --mpa-rev must be 1 or 2\n");
			return -EINVAL;
		}
		o->mpa_rev = (int)v;
		return 0;
	case OPT_P2P:
		o->p2p = opts_pick(arg, p2p_names, 5);
		if (o->p2p < 0) {
			fprintf(stderr,
				"iwarp_ping: --p2p must be none, write, read, send or auto\n");
			return -EINVAL;
		}
		return 0;
	case OPT_TIMEOUT:
		if (opts_num(arg, 1, INT_MAX, &v)) {
			fprintf(stderr, "iwarp_ping: invalid --timeout %s\n",
				arg);
			return -EINVAL;
		}
		o->timeout_ms = (int)v;
		return 0;
	case OPT_LISTEN_TIMEOUT:
		if (opts_num(arg, 0, INT_MAX, &v)) {
			fprintf(stderr,
				"iwarp_ping: invalid --listen-timeout %s\n",
				arg);
			return -EINVAL;
		}
		o->listen_timeout_ms = (int)v;
		return 0;
	case 'h':
		ping_opts_usage(stdout);
		return 1;
	case OPT_VERSION:
		printf("iwarp_ping (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
		return 1;
	default:
		ping_opts_usage(stderr);
		return -EINVAL;
	}
}

int ping_opts_parse(struct ping_opts *o, int argc, char **argv)
{
	int op, ret;

	memset(o, 0, sizeof(*o));
	o->server = -1;
	o->port = PING_DEFAULT_PORT;
	o->size = PING_DEFAULT_SIZE;
	o->timeout_ms = PING_DEFAULT_TIMEOUT_MS;
	o->crc = -1;
	o->markers = -1;
	o->mpa_rev = -1;
	o->p2p = -1;

	optind = 0; /* glibc: start a fresh scan (parse may run twice) */
	while ((op = getopt_long(argc, argv, "a:I:Pp:C:S:scvVdqh", opts_long,
				 NULL)) != -1) {
		ret = opts_one(o, op, optarg);
		if (ret)
			return ret;
	}
	if (optind < argc) {
		fprintf(stderr, "iwarp_ping: unexpected argument '%s'\n",
			argv[optind]);
		ping_opts_usage(stderr);
		return -EINVAL;
	}
	if (o->server == -1) {
		ping_opts_usage(stderr);
		return -EINVAL;
	}
	if (!o->server && !o->addr) {
		fprintf(stderr, "iwarp_ping: the client needs -a ADDR\n");
		return -EINVAL;
	}
	if (o->server && o->src_addr) {
		fprintf(stderr, "iwarp_ping: -I is a client option\n");
		return -EINVAL;
	}
	if (!o->server && o->persistent) {
		fprintf(stderr, "iwarp_ping: -P is a server option\n");
		return -EINVAL;
	}
	if (tool_tls_check(&o->tls, "iwarp_ping"))
		return -EINVAL;
	return 0;
}
