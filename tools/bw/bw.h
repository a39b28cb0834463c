/*
 * iwarp_bw: perftest-compatible bandwidth and latency tests over libiwarp.
 * Shared types of the tool. Uses only the public header <iwarp/iwarp.h>.
 *
 * Perftest facts this tool follows (linux-rdma/perftest, the version that
 * Debian 12 ships as perftest 4.5+0.17, whose internal VERSION is "6.06").
 * Re-check them against these files before changing the wire behaviour:
 *
 * src/perftest_parameters.c (force_dependecies, ctx_print_test_info):
 *  - -R sets work_rdma_cm; that also sets use_rdma_cm, so BOTH the control
 *    ("Data ex. method : rdma_cm") and the data QPs go through rdma_cm, on
 *    the same TCP port (default 18515).
 *  - Parameter block lines and the "rdma_cm QPs\t : ON" (tab!) line; the
 *    server also prints " Waiting for client rdma_cm QP to connect".
 * src/perftest_parameters.h:
 *  - DEF_PORT 18515, DEF_SIZE_BW 65536, DEF_SIZE_LAT 2, DEF_ITERS 1000 (lat),
 *    DEF_ITERS_WB 5000 (bw), DEF_TX_BW 128, DEF_TX_LAT 1, DEF_RX_SEND 512,
 *    DEF_RX_RDMA 1, DEF_CQ_MOD 100, DEF_DURATION 5, DEF_MARGIN 2,
 *    MAX_SIZE 8388608 (-a runs 2^1 .. 2^23), MAX_VERSION 16, RESULT_LINE
 *    (87 dashes), RESULT_FMT(_G), REPORT_FMT, REPORT_FMT_EXT (6 decimals when
 *    the Gb/s average is < 0.1), RESULT_FMT_LAT, REPORT_FMT_LAT. The exact
 *    format strings of 6.06 were checked with strings(1) on Debian's
 *    ib_write_bw binary (REPORT_FMT_LAT prints iterations with %lu).
 *  - struct bw_report_data {size, iters, bw_peak, bw_avg, ..., msgRate_avg}.
 * src/perftest_resources.h: struct pingpong_dest on x86-64 (56 octets):
 *    lid@0 out_reads@4 qpn@8 psn@12 rkey@16 (pad) vaddr@24 gid[16]@32
 *    srqn@48 gid_index@52.
 * src/perftest_communication.c / .h:
 *  - Control channel (create_comm_struct, establish_connection,
 *    rdma_client_connect, rdma_server_connect): one RC QP, tx/rx depth 1,
 *    each side posts ONE receive of sizeof(pingpong_dest) with
 *    wr_id SYNC_SPEC_ID (5) before connect/accept and re-posts one after each
 *    received message. conn_param: retry_count 7, rnr_retry_count 7,
 *    responder_resources = initiator_depth = out_reads for READ tests, else 0.
 *    The server listens with backlog = num_of_qps, accepts the first
 *    request and destroys the listening id.
 *  - rdma_write_keys/rdma_read_keys (ctx_hand_shake): a Send of the whole
 *    pingpong_dest, wr_id 5; with HAVE_ENDIAN every integer field is
 *    big-endian (htobe32/htobe64), gid copied raw. The CLIENT writes first,
 *    then reads; the server reads, then writes.
 *  - ctx_xchg_data (rdma_write_data/rdma_read_data): same pattern, |size|
 *    octets. exchange_versions: 16 octets (version string). check_sys_data
 *    (peer >= 5.32): cycle_buffer then cache_line_size, each a big-endian
 *    int; both sides take the max. check_mtu (peer >= 5.1): the MTU enum
 *    printed with "%d", 2 octets if peer >= 5.31 (else sizeof(int)).
 *  - xchg_bw_reports: five separate exchanges: size (8, BE), iters (8 BE if
 *    peer >= 5.33, else 4), bw_peak, bw_avg, msgRate_avg (doubles, byte
 *    swapped to big-endian).
 *  - create_rdma_cm_connection: handshake, then the data connections (the
 *    client resolves/connects num_of_qps ids and retries 10 times, 100 ms
 *    apart, because the server may not listen yet; the server listens on
 *    the same port with backlog num_of_qps), then another handshake.
 *    Server accept clamps responder_resources/initiator_depth to the peer's.
 *  - rdma_cm_disconnect_nodes (destroy_ctx): the SERVER rdma_disconnect()s
 *    every data id; both sides then wait for one DISCONNECTED per id.
 *  - ctx_close_connection: one more handshake.
 * src/perftest_communication.c set_up_connection: my_dest.vaddr =
 *    buf + (num_of_qps + i) * BUFF_SIZE (second half of one buffer is the
 *    remote target), rkey = the MR's rkey, out_reads, random 24-bit psn.
 * src/perftest_resources.c:
 *  - MR access: LOCAL_WRITE, + REMOTE_WRITE for WRITE, + REMOTE_READ for
 *    READ, and READ on iWARP also gets REMOTE_WRITE (iWARP Read sink).
 *  - run_iter_bw: up to tx_depth outstanding, every cq_mod-th WR signalled
 *    (and the last one); tposted/tcompleted per WR for the peak.
 *  - iWARP Send tests (send_rcredit): ctx_alloc_credit overwrites
 *    my_dest.rkey/vaddr with a credit buffer (2*num_qps uint32, REMOTE_WRITE,
 *    credit_buf = second half); credit_cnt = rx_depth/3. The receiver, each
 *    time (rcnt % rx_depth) % credit_cnt == 0, RDMA-Writes its uint32 receive
 *    count (host order) to the sender's credit word; the sender stops while
 *    scnt + 1 - credit >= rx_depth. The sender zeroes its credit words after
 *    the per-size handshake.
 *  - force_dependecies (perftest_parameters.c): without -D, tx_depth is
 *    clamped to iters, and for Send tests rx_depth too (so the credit
 *    interval rx_depth/3 matches the sender's stop rule).
 *  - run_iter_lat_write: ping-pong of RDMA Writes; the SERVER writes first
 *    (only it skips the wait while scnt < 1), each side spins on the last
 *    octet of its remote-target region (buf + BUFF + size - 1) until it
 *    equals (char)++rcnt, then writes (char)++scnt as its own last octet
 *    and posts; no handshake between sizes with -a. run_iter_lat (read): the
 * client posts one Read at a time. run_iter_lat_send: Send ping-pong, client
 *    first. Latency = deltas of consecutive tposted, sorted: min, max,
 *    median (typical), avg, stdev, 99% and 99.9% percentiles; divided by 2
 *    for Send and Write, not for Read.
 *  - print_report_bw: MB/sec = 0x100000 B/s, Gb/sec = 125000000 B/s,
 *    MsgRate = iters / time / 1e6.
 * src/write_bw.c, read_bw.c: handshakes after the connection: one per QP,
 *    one per QP again (remote info printed), one more; the server then waits
 *    in a handshake, xchg_bw_reports, prints the client's report, closes.
 *    The client runs every size (duplex: a handshake before each run, and
 *    after it with -a), prints, handshake + xchg_bw_reports, closes.
 * src/send_bw.c: one handshake per QP (credit info), one, one per QP; then
 *    per size: the receiver posts its receives, handshake, run, both sides
 *    print their own row, (-a: handshake); close.
 * src/read_lat.c, write_lat.c: one, one per QP, one per QP, one; the
 *    read_lat server then only closes; write_lat.c has no
 *    ctx_close_connection at the end (read_lat and send_lat do). send_lat.c:
 *    one per QP, one, one
 *    per QP (no trailing one); then per size it posts the receives and
 *    handshakes. (Counts checked against the ctx_hand_shake call sites in
 *    the Debian 4.5+0.17 binaries and a siw capture.)
 * End: the server disconnects the data ids; our server then waits for the
 *    client to close the control connection before closing it.
 */
#ifndef IWARP_TOOLS_BW_H
#define IWARP_TOOLS_BW_H

#include "tools/common/tls.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <iwarp/iwarp.h>

#define BW_PERFTEST_VERSION "6.06" /* what we announce (perftest 4.5-0.17) */
#define BW_MAX_VERSION	    16
#define BW_DEST_SIZE	    56 /* sizeof(struct pingpong_dest), x86-64 */
#define BW_SYNC_WRID	    5  /* SYNC_SPEC_ID */
#define BW_CTRL_BUF	    256
#define BW_MAX_SIZE	    (8u << 20)
#define BW_CYCLE_BUFFER	    4096
#define BW_CACHE_LINE	    64
#define BW_MTU_ENUM	    5 /* IBV_MTU_4096 */
#define BW_EXIT_NOURING	    2
#define BW_MAX_QPS	    65535 /* the QP index lives in 16 bits of a wr_id */
#define BW_MAX_POST_LIST    1024

enum bw_verb { BW_SEND = 0, BW_WRITE = 1, BW_READ = 2 };

/*
 * How a BW loop waits when it can post nothing and the CQ is empty:
 * HYBRID busy-polls cq_spin_us, then sleeps on a completion channel;
 * EVENT sleeps at once (perftest -e, --use_event); SPIN never sleeps
 * (perftest's default). INLINE progress always spins (it drives the engine).
 * A Send sender waiting for credits naps instead of sleeping on the
 * channel (tools/bw/idle.h).
 */
enum bw_cq_wait { BW_WAIT_HYBRID = 0, BW_WAIT_EVENT = 1, BW_WAIT_SPIN = 2 };
/* Default busy-poll window of BW_WAIT_HYBRID: none. On 2 cores a spinning
 * application thread takes the CPU the engine threads need; with 20 us,
 * 64 B Writes ran 83-101 MB/s against 95-142 and 4 KiB Send 2,553-2,918
 * against 2,870-3,088, both with more CPU (bench/README.md). */
#define BW_CQ_SPIN_US 0

/* -A: the atomic operation of --test atomic (default FETCH_AND_ADD). */
enum bw_atomic_op { BW_ATOMIC_FA = 0, BW_ATOMIC_CAS = 1 };

/* Command line options (perftest names plus the libiwarp knobs). */
struct bw_opts {
	struct tool_tls tls; /* --tls* */
	enum bw_verb verb;
	int latency;
	const char *server; /* NULL: we are the server */
	const char *bind_addr;
	uint16_t port;
	uint64_t size;
	int size_set;
	int all;
	uint64_t iters;
	int iters_set;
	int duration;
	int margin;
	int num_qps;
	int duplex;
	int tx_depth;
	int rx_depth;
	int inline_size;
	int out_reads;
	int cq_mod;
	int report_gbits;
	int json;
	int progress_line;
	/* libiwarp */
	int crc_set;
	enum iwarp_crc_policy crc;
	int markers;
	int mpa_rev;
	int p2p_set;
	enum iwarp_p2p_rtr p2p;
	const char *cc;
	int progress_set;
	enum iwarp_progress_mode progress;
	enum bw_cq_wait cq_wait;
	int cq_spin_us;
	int post_list; /* -l: WRs chained by next per iwarp_post_send */
	int cpu_util;  /* --cpu_util: report process CPU time / wall time */
	/* RFC 7306 tests (ext.c); each turns on the context's rdmap_ext */
	int atomic; /* --test atomic: verb is BW_READ (same flow), size 8 */
	enum bw_atomic_op atomic_op; /* -A, --atomic_type */
	int write_imm;		     /* --write_with_imm (Write test) */
	int send_imm;		     /* --send_with_imm (Send test) */
};

/*
 * Figures measured outside the per-size rows (connection set-up, memory),
 * printed once and repeated in every JSON line (main.c fills it).
 */
struct bw_stats {
	int qps;	     /* data QPs connected */
	double connect_s;    /* wall time to connect (client) or accept them */
	long rss_before_kib; /* VmRSS before the data connections */
	long rss_after_kib;  /* VmRSS once all are established */
};

extern struct bw_stats bw_stats;

/* Process CPU time (all threads, user + system) in seconds, getrusage. */
double bw_cpu_seconds(void);

/* VmRSS of this process in KiB (/proc/self/status), -1 if unknown. */
long bw_rss_kib(void);

/* struct pingpong_dest in host form. */
struct bw_dest {
	int32_t lid;
	int32_t out_reads;
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint64_t vaddr;
	uint8_t gid[16];
	uint32_t srqn;
	int32_t gid_index;
};

/* struct bw_report_data fields that go on the wire. */
struct bw_report {
	uint64_t size;
	uint64_t iters;
	double bw_peak;
	double bw_avg;
	double msg_rate;
};

/* The control connection (perftest's user_comm with use_rdma_cm). */
struct bw_comm {
	struct iwarp_context *ctx;
	struct iwarp_event_channel *ch;
	struct iwarp_cm_id *id;
	struct iwarp_pd *pd;
	struct iwarp_cq *scq;
	struct iwarp_cq *rcq;
	struct iwarp_mr *mr;
	uint8_t *buf; /* [0, BW_CTRL_BUF) receive, [BW_CTRL_BUF, 2x) send */
	int client;
	int inline_progress;
	char rem_version[BW_MAX_VERSION];
	double rem_ver;
};

/* One data QP. */
struct bw_qp {
	struct iwarp_cm_id *id;
	struct iwarp_qp *qp;
	uint64_t rem_addr;
	uint32_t rem_rkey;
	uint64_t scnt;		 /* WRs posted */
	uint64_t ccnt;		 /* WRs completed */
	uint64_t rposted;	 /* receives posted (Send tests) */
	uint64_t rcnt;		 /* receives completed */
	uint64_t credits_out;	 /* credit Writes not yet completed */
	uint64_t credits_posted; /* credit Writes posted (source slot index) */
	uint64_t batch;		 /* WRs posted since the last signaled one */
	uint64_t batch_tick; /* when the batch's first WR was posted (run.c) */
	int connected;
};

/* The data side: one PD, one buffer, CQs shared by all QPs. */
struct bw_data {
	struct iwarp_context *ctx;
	struct iwarp_event_channel *ch;
	struct iwarp_cm_id *listen_id;
	struct iwarp_pd *pd;
	struct iwarp_cq *scq;
	struct iwarp_cq *rcq;
	struct iwarp_mr *mr;
	uint8_t *buf; /* 2 * n * buff octets */
	size_t buff;  /* BUFF_SIZE: max(size, cycle_buffer) */
	struct bw_qp *q;
	int n;
	int send_credit;    /* iWARP Send test: credits by RDMA Write */
	uint32_t *ctrl_buf; /* [0,n) our counts, [n,2n) credits from peer,
			     * then tx_depth credit-Write source slots per QP */
	struct iwarp_mr *ctrl_mr;
	uint32_t credit_cnt;
	uint32_t max_inline;
	int inline_progress;
	/* completion channel of scq and rcq (non-blocking fd unless
	 * chan_block), NULL when the BW loops only spin (BW_WAIT_SPIN, INLINE
	 * progress, latency) */
	struct iwarp_comp_channel *chan;
	/* the BW loop sleeps in a blocking iwarp_get_cq_event, not poll(2):
	 * the receiver of a Send test counting messages (data.c) */
	int chan_block;
};

/* ---- comm.c: control channel and perftest wire formats ---- */

/*
 * Encodes |d| as perftest's 56-octet big-endian struct pingpong_dest into
 * |out| (BW_DEST_SIZE octets).
 */
void bw_dest_encode(const struct bw_dest *d, uint8_t *out);

/*
 * Decodes a received pingpong_dest of |len| octets into |d|.
 * Returns 0, or -EBADMSG when |len| is too short to hold rkey and vaddr.
 */
int bw_dest_decode(const uint8_t *in, size_t len, struct bw_dest *d);

/*
 * Connects (client) or accepts (server) the control connection on
 * |o|->port. Returns 0 or a negative code (message printed).
 */
int bw_comm_establish(struct bw_comm *c, struct iwarp_context *ctx,
		      const struct bw_opts *o);

/*
 * ctx_xchg_data: the client sends |len| octets of |mine| then receives into
 * |theirs|; the server the other way round. Returns the received length or a
 * negative code.
 */
int bw_comm_xchg(struct bw_comm *c, const void *mine, size_t len, void *theirs,
		 size_t cap);

/* ctx_hand_shake: exchanges |mine| for the peer's pingpong_dest. 0 or < 0. */
int bw_comm_handshake(struct bw_comm *c, const struct bw_dest *mine,
		      struct bw_dest *theirs);

/* xchg_bw_reports: 0 or < 0. */
int bw_comm_xchg_report(struct bw_comm *c, const struct bw_report *mine,
			struct bw_report *theirs);

/*
 * exchange_versions + check_sys_data + check_mtu. Fills the peer version and
 * *|mtu| (the smaller MTU enum). Returns 0 or < 0.
 */
int bw_comm_preamble(struct bw_comm *c, int *mtu);

/*
 * Server side, after its last control exchange: waits up to |ms| for the
 * client to close the control connection (DISCONNECTED on |c|'s channel),
 * so that our FIN never overtakes a message the client still sends (its
 * ctx_close_connection Send must complete successfully on its side).
 * Returns 0, -ETIMEDOUT, -ENOTCONN or the CM error.
 */
int bw_comm_wait_peer_close(struct bw_comm *c, int ms);

/* Tears the control connection down. */
void bw_comm_close(struct bw_comm *c);

/* Makes |fd| non-blocking: a CM event channel (bw_cm_wait polls it) or a
 * completion channel (the BW loops drain it). 0 or -errno. */
int bw_fd_nonblock(int fd);

/* The next CM event on |ch| of any kind, waiting up to |ms|: 0 (*ev set, to
 * be acked), -ETIMEDOUT, -EINTR (a stop signal) or another -errno. */
int bw_cm_next(struct iwarp_event_channel *ch, int inline_progress, int ms,
	       struct iwarp_cm_event **ev);
/* If |e| reports a failure (ADDR_ERROR, REJECTED, ...): says so, acks it and
 * returns the error; else 0 (|e| untouched). */
int bw_cm_failed(struct iwarp_cm_event *e, const char *waiting_for);

/*
 * Waits up to |ms| for a CM event of type |want| on the non-blocking channel
 * |ch| (other events are acknowledged and ignored unless fatal). With
 * |inline_progress| (IWARP_PROGRESS_INLINE) it drives the engine through
 * iwarp_cm_get_event at least every millisecond instead of sleeping in
 * poll(2). On success *|ev| is the event, to be acked by the caller.
 * Returns 0, -ETIMEDOUT, -EINTR (SIGINT/SIGTERM, see bw_stopping) or the
 * event's error.
 */
int bw_cm_wait(struct iwarp_event_channel *ch, int inline_progress,
	       enum iwarp_cm_event_type want, int ms,
	       struct iwarp_cm_event **ev);

/*
 * SIGINT/SIGTERM (tools/common/stop.h): nonzero once the run must stop.
 * Every wait and measurement loop checks it (or polls the self-pipe) and
 * returns -EINTR, until main calls bw_stop_teardown().
 */
int bw_stopping(void);

/* After SIGINT/SIGTERM, bound of the whole teardown's CM waits. */
#define BW_STOP_CLOSE_MS 500

/*
 * main, before tearing down after a signal: from now on bw_cm_wait no longer
 * fails with -EINTR (the disconnect waits must run) but ends at the latest
 * BW_STOP_CLOSE_MS after this call.
 */
void bw_stop_teardown(void);

/* State of a wait loop: busy-poll first, then bounded sleeps. */
struct bw_backoff {
	uint64_t start;	   /* when the wait began (ns), 0 = not read yet */
	uint64_t sleep_ns; /* next sleep, 0 = still spinning */
	unsigned int spins;
	int yield_only; /* INLINE mode: sched_yield, never sleep */
};

/* Starts a wait; with |inline_progress| the back-off only yields. */
void bw_backoff_init(struct bw_backoff *b, int inline_progress);

/*
 * Called after each empty poll: busy-polls for the first 10 ms of the wait,
 * then sleeps 10 us, doubling up to 1 ms; in INLINE mode (the caller is the
 * only driver of its engine) it calls sched_yield() instead of sleeping.
 */
void bw_backoff(struct bw_backoff *b);

/*
 * Polls |cq| until one completion arrives (iwarp_poll_cq drives the engine
 * in INLINE mode), with bw_backoff between empty polls. 0 or < 0 (-EINTR
 * on SIGINT/SIGTERM).
 */
int bw_poll_one(struct iwarp_cq *cq, int inline_progress, struct iwarp_wc *wc);

/* ---- data.c: data connections, buffer, QPs ---- */

/*
 * Creates the data resources and connects num_qps QPs (client) or accepts
 * them (server), between the two handshakes of create_rdma_cm_connection.
 * Returns 0 or < 0.
 */
int bw_data_connect(struct bw_data *d, struct iwarp_context *ctx,
		    struct bw_comm *c, const struct bw_opts *o);

/* Fills |mine| for QP |i| (set_up_connection, + ctx_alloc_credit). */
void bw_data_my_dest(const struct bw_data *d, const struct bw_opts *o, int i,
		     struct bw_dest *mine);

/* Disconnects (server) and waits for DISCONNECTED, then frees everything. */
void bw_data_close(struct bw_data *d, const struct bw_opts *o);

/* ---- run.c: the measurements ---- */

/* Per-size results of a BW run. */
struct bw_result {
	uint64_t size;
	uint64_t iters; /* per QP (printed), as perftest's -n */
	uint64_t msgs;	/* messages of all QPs in |seconds| (the figures) */
	double seconds;
	double peak_bps; /* octets per second */
	double cpu_s;	 /* process CPU seconds over the measured interval */
	double wall_s;	 /* wall seconds of that interval (0: not measured) */
};

/* BW sender loop (run_iter_bw); duplex also receives. 0 or < 0. */
int bw_run_bw(struct bw_data *d, const struct bw_opts *o, uint64_t size,
	      struct bw_result *r);

/* Send BW receiver loop (run_iter_bw_server). 0 or < 0. */
int bw_run_bw_server(struct bw_data *d, const struct bw_opts *o, uint64_t size,
		     struct bw_result *r);

/* Posts the receives for a Send test of |size| octets. 0 or < 0. */
int bw_post_recvs(struct bw_data *d, const struct bw_opts *o, uint64_t size);

/* Latency loops; fill |samples| with the post time (ns) of every iteration. */
int bw_run_lat(struct bw_data *d, const struct bw_opts *o, uint64_t size,
	       uint64_t *samples);

/* ---- ext.c: RFC 7306 tests (atomics, Immediate Data) ---- */

/* Whether |o| selects an RFC 7306 test (the context needs rdmap_ext). */
int bw_ext_used(const struct bw_opts *o);

/* "FETCH_AND_ADD" or "CMP_AND_SWAP". */
const char *bw_atomic_name(const struct bw_opts *o);

/*
 * Turns the data WR number |seq| of a QP (filled by run.c for the base
 * verb) into an Atomic Request on the peer's counter at |rem_addr|/|rkey|,
 * or a Write/Send with Immediate Data htonl(seq).
 */
void bw_ext_fill_wr(const struct bw_opts *o, uint64_t seq, uint64_t rem_addr,
		    uint32_t rkey, struct iwarp_send_wr *wr,
		    struct iwarp_sge *sge);

/* Checks receive completion number |seq| of QP |qp| of an Immediate Data
 * test (a no-op otherwise). 0 or -EBADMSG (message printed). */
int bw_ext_check_recv(const struct bw_opts *o, int qp, uint64_t seq,
		      const struct iwarp_wc *wc);

/* Checks the original value |got| fetched by atomic number |seq|. */
int bw_atomic_check_fetched(const struct bw_opts *o, uint64_t seq,
			    uint64_t got);

/* Server: checks that the counters of QPs [0, |nqp|) equal |want|. */
int bw_atomic_check_server(const struct bw_data *d, const struct bw_opts *o,
			   int nqp, uint64_t want);

/* Client after an atomic BW run: reads every QP's counter with a
 * FETCH_AND_ADD of 0 and checks it equals |want|. 0, -EBADMSG or < 0. */
int bw_atomic_readback(struct bw_data *d, const struct bw_opts *o,
		       uint64_t want);

/* After a failed post: explains -EOPNOTSUPP (extensions not negotiated). */
void bw_ext_post_error(int rc);

/* ---- report.c: output ---- */

/* Prints perftest's parameter block. */
void bw_print_params(const struct bw_opts *o, struct iwarp_context *ctx,
		     int mtu);

/* Prints " local/remote address: ..." lines. */
void bw_print_dest(const struct bw_opts *o, const char *side,
		   const struct bw_dest *d);

/* Prints the table header. */
void bw_print_header(const struct bw_opts *o);

/* Fills |rep| from |r| (print_report_bw). */
void bw_make_report(const struct bw_opts *o, const struct bw_result *r,
		    struct bw_report *rep);

/* CPU utilization of the last BW run, for the row bw_print_bw_row prints
 * next (wall 0: none measured, e.g. the report of the peer). */
void bw_set_row_cpu(double cpu_s, double wall_s);

/* Prints one BW row (|rem| NULL or the peer's report to add). */
void bw_print_bw_row(const struct bw_opts *o, const struct bw_report *mine,
		     const struct bw_report *rem);

/* Prints one latency row from |n| samples (ns), sorted in place; |cpu_s|
 * and |wall_s|: CPU and wall seconds of the run (wall 0: not measured). */
void bw_print_lat_row(const struct bw_opts *o, uint64_t size, uint64_t *samples,
		      uint64_t n, double cpu_s, double wall_s);

/* Prints the connection set-up line (and memory) from bw_stats. */
void bw_print_setup(const struct bw_opts *o);

/* Prints the separator line (not in JSON mode). */
void bw_print_line(const struct bw_opts *o);

/* Live progress line on stderr (only when enabled). */
void bw_progress(const struct bw_opts *o, uint64_t size, uint64_t done,
		 uint64_t total);

/* Monotonic time in nanoseconds. */
uint64_t bw_now_ns(void);

#endif /* IWARP_TOOLS_BW_H */
