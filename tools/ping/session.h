/*
 * tools/ping/session.h: the event loop and one ping connection (session).
 *
 * One thread runs everything: poll() on the CM event channel fd, the
 * completion channel fd and the async event fd, each wait bounded by the
 * nearest session deadline. CM events go to the session in the cm_id's
 * context, CQ events to the session in the CQ's cq_context; each session is
 * a state machine (rping's states, see rping.c enum test_state).
 */
#ifndef TOOLS_PING_SESSION_H
#define TOOLS_PING_SESSION_H

#include <stdint.h>

#include "tools/ping/ping.h"

enum sess_state {
	/* client: connection setup */
	SESS_RESOLVE_ADDR,
	SESS_RESOLVE_ROUTE,
	SESS_CONNECTING,
	/* client: one ping */
	SESS_C_WAIT_GO1, /* sent start_buf adv, wait "go ahead" */
	SESS_C_WAIT_GO2, /* sent rdma_buf adv, wait "go ahead" */
	/* server: one ping */
	SESS_ACCEPTING,	       /* accepted, wait ESTABLISHED / first RECV */
	SESS_S_WAIT_READ_ADV,  /* wait the client's start_buf adv */
	SESS_S_WAIT_READ,      /* RDMA Read posted */
	SESS_S_WAIT_WRITE_ADV, /* wait the client's rdma_buf adv */
	SESS_S_WAIT_WRITE,     /* RDMA Write posted */
	/* both */
	SESS_DISCONNECTING, /* disconnect called, wait DISCONNECTED */
	SESS_DONE,	    /* finished; the loop tears it down */
};

/* wr_id values: name the operation of a failed completion. */
enum sess_wr {
	SESS_WR_RECV = 1,
	SESS_WR_SEND = 2,
	SESS_WR_READ = 3,
	SESS_WR_WRITE = 4,
};

struct ping_loop;

struct ping_sess {
	struct ping_loop *loop;
	const struct ping_opts *o;
	struct ping_sess *next;
	int server;
	enum sess_state state;
	int established; /* connected, no DISCONNECTED seen yet */
	int rejected;	 /* server: refused request, not a session */
	int result;	 /* 0 ok, -1 failed (message printed) */
	char peer[64];	 /* "addr:port" for messages */

	struct iwarp_cm_id *id;
	struct iwarp_pd *pd;
	struct iwarp_cq *cq;
	struct iwarp_qp *qp;

	uint8_t recv_buf[PING_CTRL_LEN];
	struct iwarp_mr *recv_mr;
	uint8_t send_buf[2][PING_CTRL_LEN]; /* [0] start adv, [1] sink adv */
	struct iwarp_mr *send_mr;
	char *rdma_buf; /* client: Write sink; server: Read sink */
	uint32_t rdma_size;
	struct iwarp_mr *rdma_mr;
	char *start_buf; /* client: Read source */
	struct iwarp_mr *start_mr;

	uint32_t ping;	      /* completed ping iterations */
	uint32_t read_len;    /* server: bytes read this ping */
	uint64_t remote_addr; /* server: last advertised buffer */
	uint32_t remote_rkey;
	uint32_t remote_len;
	uint64_t t_start; /* client: start of this ping */
	struct ping_stats stats;

	uint64_t deadline;   /* ns (ping_now_ns), 0 = none */
	const char *waiting; /* what the deadline waits for */
};

struct ping_loop {
	const struct ping_opts *o;
	struct iwarp_context *ctx;
	struct iwarp_event_channel *cm_ch;
	struct iwarp_comp_channel *comp_ch;
	struct iwarp_cm_id *listen_id; /* server */
	uint64_t listen_deadline;      /* server, 0 = none */
	struct ping_sess *sessions;
	int sessions_done;
	int failures;
	int stop;	     /* leave the loop */
	int interrupted;     /* SIGINT/SIGTERM seen: sessions are ending */
	int inline_progress; /* IWARP_PROGRESS_INLINE: the loop drives it */
};

/* ---- sess.c: resources and posting, shared by both roles ---- */

/*
 * A new session on cm_id |id| (may be NULL for a client before its id
 * exists), linked into |l|. Returns NULL (errno set) on allocation failure.
 */
struct ping_sess *sess_new(struct ping_loop *l, struct iwarp_cm_id *id,
			   int server);

/*
 * Creates the PD, the CQ (on the loop's completion channel, armed), the QP
 * through iwarp_cm_create_qp and the registered buffers with rping's sizes
 * and access flags, then posts the first RECV. Prints what failed.
 * Returns 0 or a negative error.
 */
int sess_setup(struct ping_sess *s);

/* Releases everything sess_setup created and the cm_id; unlinks |s|. */
void sess_free(struct ping_sess *s);

/* Posts the RECV of the next 16-byte control message. Returns 0 or -err. */
int sess_post_recv(struct ping_sess *s);

/* Posts a signaled SEND of send_buf[|idx|] (16 bytes). Returns 0 or -err. */
int sess_post_ctrl(struct ping_sess *s, int idx);

/*
 * Posts a signaled RDMA Read (|read| != 0) or Write between rdma_buf
 * (|len| bytes) and the remote buffer (|raddr|, |rkey|). Returns 0 or -err.
 */
int sess_post_rdma(struct ping_sess *s, int read, uint32_t len, uint64_t raddr,
		   uint32_t rkey);

/* Starts a wait for the peer, described by |what|, bounded by --timeout. */
void sess_wait(struct ping_sess *s, const char *what);

/*
 * Ends the session: |failed| 0 = success, else failure; moves to
 * SESS_DONE. The loop frees it after the current event.
 */
void sess_end(struct ping_sess *s, int failed);

/*
 * SIGINT/SIGTERM: a connected session disconnects now and waits at most
 * PING_INTERRUPT_MS for DISCONNECTED; one not connected yet ends at once
 * (sess_free destroys its cm_id). Not a failure of the session.
 */
void sess_interrupt(struct ping_sess *s);

/* Prints "iwarp_ping: <peer>: <message>" to stderr and fails |s|. */
void sess_fail(struct ping_sess *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Fails the session on an error CM event, in rping's words
 * ("cma event X, error N: text"). */
void sess_fail_cm_event(struct ping_sess *s, const struct iwarp_cm_event *ev);

/* Prints a debug line (with -d) to stdout, as rping's DEBUG_LOG. */
void ping_dbg(const struct ping_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Checks completion |wc| of |s|: success returns 0; a flush returns 1
 * (ignore it, as rping does: the DISCONNECTED event or the deadline follows);
 * any other error is printed (status text and TERMINATE cause), fails |s|
 * and returns -1.
 */
int sess_check_wc(struct ping_sess *s, const struct iwarp_wc *wc);

/* Formats |sa| as "addr:port" into |buf|. */
void ping_fmt_addr(const struct sockaddr *sa, char *buf, size_t len);

/* ---- client.c ---- */

/* Creates the client session and starts address resolution. Returns 0 or
 * a negative error (printed). */
int client_start(struct ping_loop *l);

/* A CM event for client session |s|. */
void client_cm_event(struct ping_sess *s, const struct iwarp_cm_event *ev);

/* A completion for client session |s|. */
void client_wc(struct ping_sess *s, const struct iwarp_wc *wc);

/* Prints the round-trip statistics of |s| to stdout. */
void client_print_stats(struct ping_sess *s);

/* ---- server.c ---- */

/* Binds and listens. Returns 0 or a negative error (printed). */
int server_start(struct ping_loop *l);

/* CONNECT_REQUEST on the listener: accept (or reject) |ev->id|. */
void server_connect_request(struct ping_loop *l,
			    const struct iwarp_cm_event *ev);

/* A CM event for server session |s|. */
void server_cm_event(struct ping_sess *s, const struct iwarp_cm_event *ev);

/* A completion for server session |s|. */
void server_wc(struct ping_sess *s, const struct iwarp_wc *wc);

#endif /* TOOLS_PING_SESSION_H */
