/*
 * iwarp_bw: perftest-compatible Write/Read/Send bandwidth and latency tests
 * (ib_write_bw -R & co.) over libiwarp. Server without an address, client
 * with one. See iwarp_bw(1) and the perftest facts in bw.h.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "tools/bw/bw.h"
#include "tools/common/stop.h"

#define BW_PEER_CLOSE_MS                                                       \
	5000 /* server: wait for the client's control close                    \
	      */

enum {
	OPT_TEST = 256,
	OPT_LATENCY,
	OPT_GBITS,
	OPT_JSON,
	OPT_CRC,
	OPT_MARKERS,
	OPT_MPA_REV,
	OPT_P2P,
	OPT_CC,
	OPT_PROGRESS,
	OPT_BIND,
	OPT_CQ_WAIT,
	OPT_CQ_SPIN,
	OPT_CPU_UTIL,
	OPT_WRITE_IMM,
	OPT_SEND_IMM,
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: iwarp_bw [--test write|read|send|atomic] [--latency] [OPTIONS]            (server)\n"
		"       iwarp_bw [--test write|read|send|atomic] [--latency] [OPTIONS] SERVER_ADDR (client)\n"
		"  -A, --atomic_type=FETCH_AND_ADD|CMP_AND_SWAP  --test atomic's operation\n"
		"      --write_with_imm  RDMA Write with Immediate Data (checked sequence)\n"
		"      --send_with_imm   Send with Immediate Data (checked sequence)\n"
		"Options (perftest names):\n"
		"  -s, --size=N          message size (default 65536 BW, 2 latency; K/M suffix)\n"
		"  -a, --all             all sizes 2 .. 2^23\n"
		"  -n, --iters=N         iterations (default 5000 BW, 1000 latency)\n"
		"  -D, --duration=SEC    run for SEC seconds instead (BW tests; margin 2 s)\n"
		"  -q, --qp=N            number of QPs (default 1; up to 65535, as far as\n"
		"                        file descriptors and memory allow; latency\n"
		"                        tests measure QP 0, the others stay idle)\n"
		"  -l, --post_list=N     post lists of N WRs chained by next (BW tests)\n"
		"      --cpu_util        report CPU utilization (process CPU / wall time)\n"
		"  -b, --bidirectional   bidirectional BW\n"
		"  -t, --tx-depth=N      send queue depth (default 128 BW, 1 latency)\n"
		"  -r, --rx-depth=N      receive depth for Send tests (default 512)\n"
		"  -I, --inline_size=N   max inline size (default 0)\n"
		"  -o, --outs=N          outstanding reads (default: device maximum)\n"
		"  -Q, --cq-mod=N        signal every N-th work request (default 100)\n"
		"  -p, --port=N          TCP port (default 18515)\n"
		"  -e, --use_event       sleep on CQ events when idle (= --cq-wait=event)\n"
		"  -F, -R                accepted (rdma_cm is the only mode)\n"
		"      --report_gbits    report Gb/sec instead of MB/sec\n"
		"      --json            one JSON object per size on stdout\n"
		"      --bind=ADDR       server: listen on ADDR only\n"
		"libiwarp options:\n"
		"      --crc             require MPA CRC32c\n"
		"      --markers         ask the peer for MPA markers\n"
		"      --mpa-rev=1|2     MPA revision (default 2)\n"
		"      --p2p=none|write|read|send|auto  RFC 6581 RTR message\n"
		"      --cc=NAME         TCP congestion control\n"
		"      --progress=adaptive|latency|cpu|inline  engine mode\n"
		"                        (default adaptive; inline with --latency)\n"
		"      --cq-wait=hybrid|event|spin  BW loops with nothing to post and an\n"
		"                        empty CQ: spin --cq-spin us then sleep on the\n"
		"                        completion channel (hybrid, default), sleep at\n"
		"                        once (event), or always spin (spin, perftest's)\n"
		"      --cq-spin=USEC    busy-poll window of hybrid (default 0)\n"
		"  -h, --help            this text\n");
	tool_tls_usage(f);
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	if (*end == 'K' || *end == 'k')
		v *= 1024, end++;
	else if (*end == 'M' || *end == 'm')
		v *= 1024 * 1024, end++;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	uint64_t v;

	if (parse_u64(s, &v) || v < (uint64_t)lo || v > (uint64_t)hi)
		return -1;
	*out = (int)v;
	return 0;
}

/*
 * The RFC 7306 tests (ext.c): an atomic test runs the Read flow with 8-octet
 * messages (ib_atomic_bw/ib_atomic_lat); Immediate Data rides on the Write
 * or Send test. Every WR's value is checked, so no -a (sizes) or -D (the
 * server could not know the count). A Write with Immediate Data consumes a
 * receive and no credits flow back: the receiver posts one per iteration
 * up front (rx_depth = iters).
 */
static int ext_args(struct bw_opts *o, int rx)
{
	if (!o->atomic && !o->write_imm && !o->send_imm)
		return 0;
	if (o->atomic + o->write_imm + o->send_imm > 1 ||
	    (o->write_imm && o->verb != BW_WRITE) ||
	    (o->send_imm && o->verb != BW_SEND)) {
		fprintf(stderr,
			" iwarp_bw: --write_with_imm needs --test write, --send_with_imm"
			" --test send, and --test atomic neither\n");
		return -1;
	}
	if (o->all || o->duration) {
		fprintf(stderr,
			" iwarp_bw: -a and -D do not go with the RFC 7306 tests\n");
		return -1;
	}
	if (o->atomic) {
		if (o->size_set && o->size != 8) {
			fprintf(stderr,
				" iwarp_bw: atomic messages are 8 octets\n");
			return -1;
		}
		o->verb = BW_READ;
		o->size = 8;
		o->size_set = 1;
		if (o->duplex) {
			fprintf(stderr,
				" iwarp_bw: -b does not go with --test atomic\n");
			return -1;
		}
	}
	if (o->send_imm) {
		/*
		 * One RFC 7306 Immediate Data message per WR, with no payload
		 * (iwarp(7)); the rows count the 8 octets of Immediate Data
		 * that the message carries on the wire (RFC 7306 §4.1).
		 */
		if (o->size_set && o->size != 8) {
			fprintf(stderr,
				" iwarp_bw: --send_with_imm messages are 8 octets of Immediate Data\n");
			return -1;
		}
		o->size = 8;
		o->size_set = 1;
	}
	if (o->write_imm) {
		uint64_t n = o->iters_set ? o->iters : o->latency ? 1000 : 5000;

		if (n > 16384 || o->duplex || rx > 0) {
			fprintf(stderr,
				" iwarp_bw: --write_with_imm needs -n <= 16384, no -b, no -r"
				" (one receive per iteration is posted up front)\n");
			return -1;
		}
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct bw_opts *o)
{
	static const struct option lo[] = {
		{"test", required_argument, NULL, OPT_TEST},
		{"latency", no_argument, NULL, OPT_LATENCY},
		{"size", required_argument, NULL, 's'},
		{"all", no_argument, NULL, 'a'},
		{"iters", required_argument, NULL, 'n'},
		{"duration", required_argument, NULL, 'D'},
		{"qp", required_argument, NULL, 'q'},
		{"bidirectional", no_argument, NULL, 'b'},
		{"tx-depth", required_argument, NULL, 't'},
		{"rx-depth", required_argument, NULL, 'r'},
		{"inline_size", required_argument, NULL, 'I'},
		{"outs", required_argument, NULL, 'o'},
		{"cq-mod", required_argument, NULL, 'Q'},
		{"port", required_argument, NULL, 'p'},
		{"CPU-freq", no_argument, NULL, 'F'},
		{"rdma_cm", no_argument, NULL, 'R'},
		{"report_gbits", no_argument, NULL, OPT_GBITS},
		{"json", no_argument, NULL, OPT_JSON},
		{"bind", required_argument, NULL, OPT_BIND},
		{"crc", no_argument, NULL, OPT_CRC},
		{"markers", no_argument, NULL, OPT_MARKERS},
		{"mpa-rev", required_argument, NULL, OPT_MPA_REV},
		{"p2p", required_argument, NULL, OPT_P2P},
		{"cc", required_argument, NULL, OPT_CC},
		{"progress", required_argument, NULL, OPT_PROGRESS},
		{"use_event", no_argument, NULL, 'e'},
		{"cq-wait", required_argument, NULL, OPT_CQ_WAIT},
		{"cq-spin", required_argument, NULL, OPT_CQ_SPIN},
		{"post_list", required_argument, NULL, 'l'},
		{"cpu_util", no_argument, NULL, OPT_CPU_UTIL},
		{"atomic_type", required_argument, NULL, 'A'},
		{"write_with_imm", no_argument, NULL, OPT_WRITE_IMM},
		{"send_with_imm", no_argument, NULL, OPT_SEND_IMM},
		{"help", no_argument, NULL, 'h'},
		TOOL_TLS_LONG_OPTS,
		{NULL, 0, NULL, 0},
	};
	int c, tx = -1, rx = -1, v;

	memset(o, 0, sizeof(*o));
	o->verb = BW_WRITE;
	o->port = 18515;
	o->num_qps = 1;
	o->cq_mod = 100;
	o->margin = 2;
	o->out_reads = -1;
	o->mpa_rev = 0;
	o->cq_wait = BW_WAIT_HYBRID;
	o->cq_spin_us = BW_CQ_SPIN_US;
	o->post_list = 1;
	while ((c = getopt_long(argc, argv, "s:an:D:q:bt:r:I:o:Q:p:l:eFRhA:",
				lo, NULL)) != -1) {
		if (tool_tls_opt(&o->tls, c, optarg))
			continue;
		switch (c) {
		case OPT_TEST:
			if (!strcmp(optarg, "write"))
				o->verb = BW_WRITE;
			else if (!strcmp(optarg, "read"))
				o->verb = BW_READ;
			else if (!strcmp(optarg, "send"))
				o->verb = BW_SEND;
			else if (!strcmp(optarg, "atomic"))
				o->atomic = 1; /* the Read flow (ib_atomic_*) */
			else
				goto bad;
			break;
		case OPT_LATENCY:
			o->latency = 1;
			break;
		case 's':
			if (parse_u64(optarg, &o->size) || o->size < 1 ||
			    o->size > BW_MAX_SIZE)
				goto bad;
			o->size_set = 1;
			break;
		case 'a':
			o->all = 1;
			break;
		case 'n':
			if (parse_u64(optarg, &o->iters) || o->iters < 5 ||
			    o->iters > 100000000)
				goto bad;
			o->iters_set = 1;
			break;
		case 'D':
			if (parse_int(optarg, 1, 86400, &o->duration))
				goto bad;
			break;
		case 'q':
			if (parse_int(optarg, 1, BW_MAX_QPS, &o->num_qps))
				goto bad;
			break;
		case 'l':
			if (parse_int(optarg, 1, BW_MAX_POST_LIST,
				      &o->post_list))
				goto bad;
			break;
		case OPT_CPU_UTIL:
			o->cpu_util = 1;
			break;
		case 'A':
			if (!strcmp(optarg, "FETCH_AND_ADD"))
				o->atomic_op = BW_ATOMIC_FA;
			else if (!strcmp(optarg, "CMP_AND_SWAP"))
				o->atomic_op = BW_ATOMIC_CAS;
			else
				goto bad;
			break;
		case OPT_WRITE_IMM:
			o->write_imm = 1;
			break;
		case OPT_SEND_IMM:
			o->send_imm = 1;
			break;
		case 'b':
			o->duplex = 1;
			break;
		case 't':
			if (parse_int(optarg, 1, 15000, &tx))
				goto bad;
			break;
		case 'r':
			if (parse_int(optarg, 1, 16384, &rx))
				goto bad;
			break;
		case 'I':
			if (parse_int(optarg, 0, 912, &o->inline_size))
				goto bad;
			break;
		case 'o':
			if (parse_int(optarg, 1, 255, &o->out_reads))
				goto bad;
			break;
		case 'Q':
			if (parse_int(optarg, 1, 1024, &o->cq_mod))
				goto bad;
			break;
		case 'p':
			if (parse_int(optarg, 1, 65535, &v))
				goto bad;
			o->port = (uint16_t)v;
			break;
		case 'F':
		case 'R':
			break;
		case OPT_GBITS:
			o->report_gbits = 1;
			break;
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_BIND:
			o->bind_addr = optarg;
			break;
		case OPT_CRC:
			o->crc_set = 1;
			o->crc = IWARP_CRC_REQUIRE;
			break;
		case OPT_MARKERS:
			o->markers = 1;
			break;
		case OPT_MPA_REV:
			if (parse_int(optarg, 1, 2, &o->mpa_rev))
				goto bad;
			break;
		case OPT_P2P:
			o->p2p_set = 1;
			if (!strcmp(optarg, "none"))
				o->p2p = IWARP_P2P_NONE;
			else if (!strcmp(optarg, "write"))
				o->p2p = IWARP_P2P_WRITE;
			else if (!strcmp(optarg, "read"))
				o->p2p = IWARP_P2P_READ;
			else if (!strcmp(optarg, "send"))
				o->p2p = IWARP_P2P_SEND;
			else if (!strcmp(optarg, "auto"))
				o->p2p = IWARP_P2P_AUTO;
			else
				goto bad;
			break;
		case OPT_CC:
			o->cc = optarg;
			break;
		case OPT_PROGRESS:
			o->progress_set = 1;
			if (!strcmp(optarg, "adaptive"))
				o->progress = IWARP_PROGRESS_ADAPTIVE;
			else if (!strcmp(optarg, "latency"))
				o->progress = IWARP_PROGRESS_LATENCY;
			else if (!strcmp(optarg, "cpu"))
				o->progress = IWARP_PROGRESS_CPU;
			else if (!strcmp(optarg, "inline"))
				o->progress = IWARP_PROGRESS_INLINE;
			else
				goto bad;
			break;
		case 'e':
			o->cq_wait = BW_WAIT_EVENT;
			break;
		case OPT_CQ_WAIT:
			if (!strcmp(optarg, "hybrid"))
				o->cq_wait = BW_WAIT_HYBRID;
			else if (!strcmp(optarg, "event"))
				o->cq_wait = BW_WAIT_EVENT;
			else if (!strcmp(optarg, "spin"))
				o->cq_wait = BW_WAIT_SPIN;
			else
				goto bad;
			break;
		case OPT_CQ_SPIN:
			if (parse_int(optarg, 0, 1000000, &o->cq_spin_us))
				goto bad;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			goto bad;
		}
	}
	if (optind < argc)
		o->server = argv[optind++];
	if (optind < argc)
		goto bad;
	if (ext_args(o, rx))
		return -1;
	if (tool_tls_check(&o->tls, "iwarp_bw"))
		return -1;
	if (!o->size_set)
		o->size = o->latency ? 2 : 65536;
	if (!o->iters_set)
		o->iters = o->latency ? 1000 : 5000;
	o->tx_depth = tx > 0 ? tx : o->latency ? 1 : 128;
	o->rx_depth = rx > 0 ? rx : o->verb == BW_SEND ? 512 : 1;
	if (o->write_imm)
		o->rx_depth = (int)o->iters;
	/*
	 * perftest_parameters.c force_dependecies: in an iteration run (no
	 * -D) tx_depth is at most iters, and a Send test's rx_depth too. The
	 * Send BW credit rule depends on it: the sender stops while
	 * scnt + 1 - credit >= rx_depth, so with -n 20 a perftest sender
	 * sends 19 Sends and waits for a credit, which only comes if our
	 * receiver's credit_cnt (rx_depth / 3) is derived from the same
	 * clamped depth.
	 */
	if (!o->duration) {
		if ((uint64_t)o->tx_depth > o->iters)
			o->tx_depth = (int)o->iters;
		if (o->verb == BW_SEND && (uint64_t)o->rx_depth > o->iters)
			o->rx_depth = (int)o->iters;
	}
	if (o->latency) {
		o->cq_mod = 1;
		if (o->duplex || o->duration || o->post_list > 1) {
			fprintf(stderr,
				" iwarp_bw: -b, -D and -l are BW-test options\n");
			return -1;
		}
	}
	if (o->cq_mod > o->tx_depth)
		o->cq_mod = o->tx_depth;
	if (o->post_list > o->tx_depth)
		o->post_list = o->tx_depth;
	if (o->duration && (o->all || o->duration <= 2 * o->margin)) {
		fprintf(stderr,
			" iwarp_bw: -D needs DURATION > 2*MARGIN (4 s) and no -a\n");
		return -1;
	}
	if (o->verb == BW_READ)
		o->inline_size = 0;
	o->progress_line =
		!o->json && isatty(STDOUT_FILENO) && isatty(STDERR_FILENO);
	return 0;
bad:
	usage(stderr);
	return -1;
}

static struct iwarp_context *open_ctx(struct bw_opts *o)
{
	struct iwarp_context_attr a;
	struct iwarp_device_attr da;
	struct iwarp_context *ctx;

	iwarp_context_attr_init(&a);
	if (o->crc_set)
		a.crc = o->crc;
	if (o->markers)
		a.markers = 1;
	if (o->mpa_rev)
		a.mpa_rev = o->mpa_rev;
	/* run_iter_lat_write: the server (our MPA responder on the data
	 * connection) writes first; the default IWARP_P2P_AUTO RTR lets it
	 * (RFC 6581 §7, iwarp_bw(1)) */
	if (o->p2p_set)
		a.p2p = o->p2p;
	if (o->latency && o->verb == BW_WRITE && !o->server &&
	    !getenv("IWARP_RESPONDER_TX_WAIT_MS"))
		/*
		 * The other half of the same problem: a client whose stack
		 * sends no RTR (Linux siw without peer_to_peer, or MPA rev 1)
		 * waits for our first Write while we wait for its first FPDU.
		 * After 200 ms without one the server writes anyway, as siw
		 * does (iwarp_bw(1)); our own client's RTR arrives long before.
		 */
		a.responder_tx_wait_ms = 200;
	if (o->cc)
		a.congestion_control = o->cc;
	if (bw_ext_used(o)) /* RFC 7306, offered in the MPA exchange */
		a.rdmap_ext = 1;
	if (o->progress_set)
		a.progress = o->progress;
	else if (o->latency && o->cq_wait != BW_WAIT_EVENT &&
		 !getenv("IWARP_PROGRESS"))
		/* One thread per process: the application's own busy-poll
		 * drives the engine. With an engine thread, two processes
		 * would spin four threads (iwarp_bw(1), NOTES). With -e the
		 * application sleeps on the completion channel: the engine
		 * keeps its default mode (its thread must run). */
		a.progress = IWARP_PROGRESS_INLINE;
	ctx = iwarp_open_context(&a);
	if (!ctx) {
		int err = errno;

		if (err == ENOSYS)
			fprintf(stderr,
				" iwarp_bw: io_uring unavailable on this kernel\n");
		else
			fprintf(stderr, " iwarp_bw: iwarp_open_context: %s\n",
				iwarp_strerror(-err));
		return NULL;
	}
	if (iwarp_query_context(ctx, &a) == 0)
		o->progress = a.progress;
	if (o->out_reads < 0) {
		o->out_reads = 16;
		if (iwarp_query_device(ctx, &da) == 0 &&
		    da.max_qp_init_rd_atom > 0)
			o->out_reads = da.max_qp_init_rd_atom < 255
					       ? da.max_qp_init_rd_atom
					       : 255;
	}
	return ctx;
}

/*
 * Every data QP is a TCP socket: raise the soft RLIMIT_NOFILE to the hard
 * limit so that -q is bounded by the hard limit only (a failure past it is
 * reported with the count reached, data.c).
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* After a failure: prints pending QP async events (a TERMINATE's cause). */
static void print_async_events(struct iwarp_context *ctx)
{
	struct pollfd pfd = {.fd = iwarp_async_fd(ctx), .events = POLLIN};
	struct iwarp_async_event ev;
	int i;

	for (i = 0; i < 8 && pfd.fd >= 0 && poll(&pfd, 1, 0) > 0; i++) {
		if (iwarp_get_async_event(ctx, &ev))
			break;
		fprintf(stderr, " iwarp_bw: async event %s",
			iwarp_event_type_str(ev.event_type));
		if (ev.term.layer || ev.term.etype || ev.term.ecode)
			fprintf(stderr, ", TERMINATE %s by %s",
				iwarp_term_strerror(ev.term.layer,
						    ev.term.etype,
						    ev.term.ecode),
				ev.term_received ? "the peer" : "us");
		fprintf(stderr, "\n");
		iwarp_ack_async_event(&ev);
	}
}

/*
 * Pre-test handshakes: the counts of the perftest 6.06 mains (bw.h), checked
 * against the call sites of ctx_hand_shake in Debian's perftest 4.5+0.17
 * binaries:
 *  - send_bw.c and send_lat.c: one per QP, one, [local], one per QP
 *    (remote); nothing more (send_lat has no trailing one);
 *  - write_lat.c and read_lat.c: one, one per QP, [local], one per QP
 *    (remote), one;
 *  - write_bw.c and read_bw.c: one per QP, [local], one per QP (remote),
 *    one.
 */
static int pre_handshakes(struct bw_comm *c, struct bw_data *d,
			  const struct bw_opts *o, struct bw_dest *my,
			  struct bw_dest *rem)
{
	int i, rc = 0;

	if (o->verb == BW_SEND) { /* one per QP, one */
		for (i = 0; !rc && i < d->n; i++)
			rc = bw_comm_handshake(c, &my[i], &rem[i]);
		if (!rc)
			rc = bw_comm_handshake(c, &my[0], &rem[0]);
	} else if (o->latency) { /* one, one per QP */
		rc = bw_comm_handshake(c, &my[0], &rem[0]);
		for (i = 0; !rc && i < d->n; i++)
			rc = bw_comm_handshake(c, &my[i], &rem[i]);
	} else { /* one per QP */
		for (i = 0; !rc && i < d->n; i++)
			rc = bw_comm_handshake(c, &my[i], &rem[i]);
	}
	for (i = 0; i < d->n; i++)
		bw_print_dest(o, "local", &my[i]);
	for (i = 0; !rc && i < d->n; i++) {
		rc = bw_comm_handshake(c, &my[i], &rem[i]);
		if (!rc)
			bw_print_dest(o, "remote", &rem[i]);
	}
	if (!rc && o->verb != BW_SEND) /* "after moving qp to RTR" */
		rc = bw_comm_handshake(c, &my[0], &rem[0]);
	for (i = 0; !rc && i < d->n; i++) {
		d->q[i].rem_addr = rem[i].vaddr;
		d->q[i].rem_rkey = rem[i].rkey;
	}
	return rc;
}

static uint64_t first_size(const struct bw_opts *o)
{
	return o->all ? 2 : o->size;
}

static uint64_t next_size(const struct bw_opts *o, uint64_t s)
{
	return o->all && s < BW_MAX_SIZE ? s * 2 : 0;
}

static int run_rdma_bw(struct bw_comm *c, struct bw_data *d,
		       const struct bw_opts *o, struct bw_dest *my,
		       struct bw_dest *rem)
{
	struct bw_report mine, theirs;
	struct bw_result r;
	uint64_t s;
	int rc;

	memset(&mine, 0, sizeof(mine));
	if (!o->server && !o->duplex) { /* the server waits for the client */
		/* our CPU while the client runs (the engine's receive side):
		 * from here until the client's post-run handshake */
		double c0 = bw_cpu_seconds();
		uint64_t w0 = bw_now_ns();
		int bad = 0;

		if (o->write_imm) { /* every Write consumes a receive: check
				       each */
			rc = bw_run_bw_server(d, o, o->size, &r);
			if (rc)
				return rc;
		}
		rc = bw_comm_handshake(c, &my[0], &rem[0]);
		/* the client's atomics are all done; a failed check still lets
		 * the run end normally for the client, then fails ours */
		if (!rc && o->atomic)
			bad = bw_atomic_check_server(d, o, d->n, o->iters);
		bw_set_row_cpu(bw_cpu_seconds() - c0,
			       (double)(bw_now_ns() - w0) / 1e9);
		if (!rc)
			rc = bw_comm_xchg_report(c, &mine, &theirs);
		if (!rc)
			bw_print_bw_row(o, &theirs, NULL);
		if (!rc)
			rc = bw_comm_handshake(c, &my[0], &rem[0]);
		bw_print_line(o);
		return rc ? rc : bad;
	}
	for (s = first_size(o); s; s = next_size(o, s)) {
		if (o->duplex && (rc = bw_comm_handshake(c, &my[0], &rem[0])))
			return rc;
		rc = bw_run_bw(d, o, s, &r);
		if (!rc && o->atomic) /* outside the measured interval */
			rc = bw_atomic_readback(d, o, o->iters);
		if (rc)
			return rc;
		if (o->duplex && o->all &&
		    (rc = bw_comm_handshake(c, &my[0], &rem[0])))
			return rc;
		bw_make_report(o, &r, &mine);
		bw_set_row_cpu(r.cpu_s, r.wall_s);
		if (o->duplex) {
			rc = bw_comm_xchg_report(c, &mine, &theirs);
			if (rc)
				return rc;
			bw_print_bw_row(o, &mine, &theirs);
		} else {
			bw_print_bw_row(o, &mine, NULL);
		}
	}
	bw_print_line(o);
	if (!o->duplex) {
		rc = bw_comm_handshake(c, &my[0], &rem[0]);
		if (!rc)
			rc = bw_comm_xchg_report(c, &mine, &theirs);
		if (rc)
			return rc;
	}
	return bw_comm_handshake(c, &my[0], &rem[0]); /* ctx_close_connection */
}

static int run_send_bw(struct bw_comm *c, struct bw_data *d,
		       const struct bw_opts *o, struct bw_dest *my,
		       struct bw_dest *rem)
{
	struct bw_report mine, theirs;
	struct bw_result r;
	int recv_side = !o->server || o->duplex;
	uint64_t s;
	int rc;

	for (s = first_size(o); s; s = next_size(o, s)) {
		if (recv_side && (rc = bw_post_recvs(d, o, s)))
			return rc;
		rc = bw_comm_handshake(c, &my[0], &rem[0]);
		if (rc)
			return rc;
		if (o->duplex || o->server)
			rc = bw_run_bw(d, o, s, &r);
		else
			rc = bw_run_bw_server(d, o, s, &r);
		if (rc)
			return rc;
		bw_make_report(o, &r, &mine);
		bw_set_row_cpu(r.cpu_s, r.wall_s);
		if (o->duplex && !o->duration) {
			rc = bw_comm_xchg_report(c, &mine, &theirs);
			if (rc)
				return rc;
			bw_print_bw_row(o, &mine, &theirs);
		} else {
			bw_print_bw_row(o, &mine, NULL);
		}
		if (o->all && (rc = bw_comm_handshake(c, &my[0], &rem[0])))
			return rc;
	}
	bw_print_line(o);
	return bw_comm_handshake(c, &my[0], &rem[0]);
}

static int run_lat(struct bw_comm *c, struct bw_data *d,
		   const struct bw_opts *o, struct bw_dest *my,
		   struct bw_dest *rem)
{
	uint64_t *t, s;
	double cpu = 0, wall = 0;
	int rc = 0;

	if (o->verb == BW_READ && !o->server) /* only the client reads */
		goto close;
	t = calloc((size_t)o->iters, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (s = first_size(o); s && !rc; s = next_size(o, s)) {
		/*
		 * send_lat.c: post the receives, then a handshake, before
		 * every size. write_lat.c has no per-size sync: the server
		 * writes the next size's first value right away, so the
		 * buffer must not be cleared here (it is zeroed once when
		 * allocated; each size polls a new last octet).
		 */
		if (o->verb == BW_SEND) {
			rc = bw_post_recvs(d, o, s);
			if (!rc)
				rc = bw_comm_handshake(c, &my[0], &rem[0]);
		}
		if (!rc) {
			double c0 = bw_cpu_seconds();
			uint64_t w0 = bw_now_ns();

			rc = bw_run_lat(d, o, s, t);
			cpu = bw_cpu_seconds() - c0;
			wall = (double)(bw_now_ns() - w0) / 1e9;
		}
		if (!rc)
			bw_print_lat_row(o, s, t, o->iters, cpu, wall);
	}
	free(t);
	if (rc)
		return rc;
close:
	bw_print_line(o);
	/*
	 * read_lat.c and send_lat.c end with ctx_close_connection (one more
	 * handshake); write_lat.c does not (its 6.06 binary has not even the
	 * "Failed to close connection" string): its processes go straight to
	 * tearing down.
	 */
	if (o->verb == BW_WRITE)
		return 0;
	rc = bw_comm_handshake(c, &my[0], &rem[0]);
	if (!rc && o->atomic && !o->server) /* the client's atomics are done */
		rc = bw_atomic_check_server(d, o, 1, o->iters);
	return rc;
}

int main(int argc, char **argv)
{
	struct bw_opts o;
	struct iwarp_context *ctx;
	struct bw_comm c;
	struct bw_data d;
	struct bw_dest *my = NULL, *rem = NULL;
	int mtu = BW_MTU_ENUM, rc, i;

	if (parse_args(argc, argv, &o))
		return 1;
	raise_nofile();
	/* SIGINT/SIGTERM: every wait returns -EINTR, then a bounded clean
	 * disconnect, then the tool dies of the signal (iwarp_bw(1)) */
	if (tool_stop_init()) {
		perror(" iwarp_bw: signal handlers");
		return 1;
	}
	srandom((unsigned int)(getpid() ^ time(NULL)));
	/* the wait loops' short sleeps (bw_backoff) must not be stretched
	 * by the default 50 us timer slack */
	(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	ctx = open_ctx(&o);
	if (!ctx)
		return tool_stop_exit(errno == ENOSYS ? BW_EXIT_NOURING : 1);
	memset(&d, 0, sizeof(d));
	if (!o.server && !o.json) {
		printf("\n************************************\n");
		printf("* Waiting for client to connect... *\n");
		printf("************************************\n");
		fflush(stdout);
	}
	rc = bw_comm_establish(&c, ctx, &o);
	if (!rc)
		rc = bw_comm_preamble(&c, &mtu);
	if (!rc)
		rc = bw_data_connect(&d, ctx, &c, &o);
	if (rc)
		goto out;
	my = calloc((size_t)o.num_qps, sizeof(*my));
	rem = calloc((size_t)o.num_qps, sizeof(*rem));
	if (!my || !rem) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < o.num_qps; i++)
		bw_data_my_dest(&d, &o, i, &my[i]);
	bw_print_params(&o, ctx, mtu);
	bw_print_setup(&o);
	/* --write_with_imm: the receives are there before the peer may write */
	if (o.write_imm && (o.latency || !o.server))
		rc = bw_post_recvs(&d, &o, o.size);
	if (!rc)
		rc = pre_handshakes(&c, &d, &o, my, rem);
	if (rc)
		goto out;
	bw_print_header(&o);
	if (o.latency)
		rc = run_lat(&c, &d, &o, my, rem);
	else if (o.verb == BW_SEND)
		rc = run_send_bw(&c, &d, &o, my, rem);
	else
		rc = run_rdma_bw(&c, &d, &o, my, rem);
out:
	if (tool_stop_signal()) {
		fprintf(stderr, " iwarp_bw: %s, stopping\n",
			tool_stop_signal() == SIGINT ? "SIGINT" : "SIGTERM");
		bw_stop_teardown();
		if (!rc)
			rc = -EINTR;
	} else if (rc) {
		print_async_events(ctx);
		fprintf(stderr, " iwarp_bw: test failed: %s\n",
			iwarp_strerror(rc));
	}
	bw_data_close(&d, &o);
	/*
	 * perftest's server disconnects the data QPs (rdma_cm_disconnect_nodes,
	 * done by bw_data_close) but its client may still be finishing its
	 * ctx_close_connection Send on the control QP; a FIN from us right
	 * after our last reply made that Send fail on siw ("Unable to write
	 * to socket/rdma_cm"). The client closes the control connection after
	 * its data ids are down: let it go first (bounded).
	 */
	if (!rc && !o.server)
		(void)bw_comm_wait_peer_close(&c, BW_PEER_CLOSE_MS);
	bw_comm_close(&c);
	iwarp_close_context(ctx);
	free(my);
	free(rem);
	/* after SIGINT/SIGTERM: killed by the signal, once torn down */
	return tool_stop_exit(rc ? 1 : 0);
}
