/*
 * tools/ping/ping.h: iwarp_ping, an rping-compatible ping over libiwarp.
 *
 * The tool uses only the public header <iwarp/iwarp.h>, so it doubles as an
 * example of the verbs and CM API. It speaks rping's wire protocol
 * (rdma-core librdmacm/examples/rping.c), per ping iteration:
 *
 *   client                                 server
 *   SEND {start_buf addr, rkey, size} ---->
 *                                    <---- RDMA Read of start_buf (size)
 *                                    <---- SEND "go ahead" (16 bytes)
 *   SEND {rdma_buf addr, rkey, size}  ---->
 *                                    <---- RDMA Write into rdma_buf
 *                                          (strlen + 1 bytes)
 *                                    <---- SEND "go ahead" (16 bytes)
 *
 * Every control message is 16 bytes {__be64 buf; __be32 rkey; __be32 size}
 * sent with a signaled SEND; a RECV of any other length is an error.
 * The active side sends the first message (librdmacm rdma_connect(3),
 * "IWARP SPECIFIC"); the server pre-posts its RECV before accepting.
 */
#ifndef TOOLS_PING_PING_H
#define TOOLS_PING_PING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/common/tls.h"

#include <iwarp/iwarp.h>

#define PING_DEFAULT_PORT 7174
#define PING_DEFAULT_SIZE 64
/* rping's RPING_MIN_BUFSIZE: sizeof("2147483647") + sizeof("rdma-ping-%d: ") */
#define PING_MIN_SIZE 26
#define PING_MAX_SIZE 65535
/* Server RDMA buffer: holds any size a client may advertise. */
#define PING_SERVER_BUF		65536
#define PING_CTRL_LEN		16 /* {be64 buf; be32 rkey; be32 size} */
#define PING_SQ_DEPTH		16 /* rping RPING_SQ_DEPTH */
#define PING_RQ_DEPTH		2  /* rping max_recv_wr */
#define PING_CQ_DEPTH		(PING_SQ_DEPTH * 2)
#define PING_RESOLVE_MS		2000 /* rping rdma_resolve_addr/route timeout */
#define PING_LISTEN_BACKLOG	3    /* rping rdma_listen backlog */
#define PING_DEFAULT_TIMEOUT_MS 10000
/* After SIGINT/SIGTERM: bound of the wait for DISCONNECTED (the tool must
 * be gone within a second, iwarp_ping(1) EXIT STATUS). */
#define PING_INTERRUPT_MS 500

/* Exit statuses (documented in iwarp_ping.1). */
#define PING_EXIT_OK	   0
#define PING_EXIT_FAIL	   1
#define PING_EXIT_USAGE	   2
#define PING_EXIT_NO_URING 3

/* Command line options. */
struct ping_opts {
	int server;	       /* 1 server (-s), 0 client (-c), -1 unset */
	const char *addr;      /* -a: server bind address / client target */
	const char *src_addr;  /* -I: client source address */
	uint16_t port;	       /* -p */
	uint32_t size;	       /* -S: ping data size */
	uint32_t count;	       /* -C: 0 = infinite */
	int verbose;	       /* -v: print ping data */
	int validate;	       /* -V: check the data */
	int debug;	       /* -d: trace events */
	int persistent;	       /* -P: server keeps accepting */
	int self_qp;	       /* -q: accepted for rping compatibility */
	int timeout_ms;	       /* --timeout: bound of every wait for the peer */
	int listen_timeout_ms; /* --listen-timeout: 0 = wait forever */
	/* Context attributes; -1 = not given (library default/environment). */
	int crc; /* enum iwarp_crc_policy */
	int markers;
	int mpa_rev;
	int p2p;	     /* enum iwarp_p2p_rtr */
	struct tool_tls tls; /* --tls* */
};

/*
 * Parses the command line into |o|. Prints usage on -h (returns 1) and an
 * error message on bad input.
 * Returns 0 to run, 1 when the program should exit successfully (help,
 * version), -EINVAL on a usage error.
 */
int ping_opts_parse(struct ping_opts *o, int argc, char **argv);

/* Prints the usage text, listing every option with its default, to |f|. */
void ping_opts_usage(FILE *f);

/*
 * Fills |buf| (|size| >= PING_MIN_SIZE bytes) with rping's payload for ping
 * number |ping|: "rdma-ping-<ping>: " then the ASCII cycle 'A'..'z' starting
 * at 'A' + ping % 58, and a NUL as the last byte.
 */
void ping_payload_fill(char *buf, uint32_t size, uint32_t ping);

/*
 * Checks |buf| (|size| bytes) against ping_payload_fill(ping).
 * Returns -1 if it matches, else the offset of the first differing byte.
 */
long ping_payload_check(const char *buf, uint32_t size, uint32_t ping);

/* Encodes a 16-byte control message {buf, rkey, size}, big endian. */
void ping_ctrl_encode(uint8_t out[PING_CTRL_LEN], uint64_t buf, uint32_t rkey,
		      uint32_t size);

/* Decodes a 16-byte control message. */
void ping_ctrl_decode(const uint8_t in[PING_CTRL_LEN], uint64_t *buf,
		      uint32_t *rkey, uint32_t *size);

/* Round-trip statistics: exact count/min/max/mean, percentiles over a
 * bounded sample (all samples up to PING_STATS_KEEP, then a uniform
 * reservoir). */
#define PING_STATS_KEEP (1u << 20)

struct ping_stats {
	uint64_t count;
	uint64_t min_ns;
	uint64_t max_ns;
	double sum_ns;
	uint32_t *sample; /* nanoseconds, saturated at UINT32_MAX */
	uint32_t n_sample;
	uint32_t cap;
	uint64_t rng;
};

/* Empty statistics. */
void ping_stats_init(struct ping_stats *s);

/* Adds one round trip of |ns| nanoseconds. Returns 0 or -ENOMEM. */
int ping_stats_add(struct ping_stats *s, uint64_t ns);

/* The |pct| percentile (0..100, nearest rank) in ns; 0 if empty. Sorts. */
uint64_t ping_stats_percentile(struct ping_stats *s, double pct);

/* Frees the sample buffer. */
void ping_stats_free(struct ping_stats *s);

/* Monotonic clock in nanoseconds. */
uint64_t ping_now_ns(void);

/*
 * Runs the tool with parsed options: opens the context, then the client or
 * the server event loop. Prints every error to stderr.
 * Returns a PING_EXIT_* status.
 */
int ping_run(const struct ping_opts *o);

#endif /* TOOLS_PING_PING_H */
