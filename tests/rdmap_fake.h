/*
 * tests/rdmap_fake.h: a fake owner of an RDMAP engine (rdmap/rdmap_conn.h)
 * for tests and fuzzing: an SQ ring of struct rdmap_wqe, an RQ of struct
 * rdmap_rqe, a region table (STag -> guarded buffer, access flags) that
 * counts the references mem_get takes and mem_put gives back, completion
 * logs and recorders for set_error/closed and the driver callbacks. No
 * verbs objects, no sockets: everything is deterministic.
 *
 * Two fakes wired back to back (fk_pump) move each engine's tx_iov octets
 * into the other's rx_iov, like a TCP connection that never loses data.
 */
#ifndef IWARP_TESTS_RDMAP_FAKE_H
#define IWARP_TESTS_RDMAP_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rdmap/rdmap_conn.h"

#define FK_REGIONS    8
#define FK_SQ	      256u /* power of two */
#define FK_RQ	      64u  /* power of two */
#define FK_CQ	      512
#define FK_GUARD      64 /* guard octets on either side of a region */
#define FK_GUARD_BYTE 0xA5

struct fk_region {
	uint32_t stag;
	int access;	    /* IWARP_ACCESS_* */
	bool valid;	    /* false after fk_region_invalidate */
	bool invalidatable; /* may be remotely invalidated */
	uint8_t *mem;	    /* guard + buf + guard */
	uint8_t *buf;
	size_t len;
	uint64_t base; /* TO of buf[0]: (uintptr_t)buf unless changed
			* (the engine dereferences only addresses that
			* mem_get returns and those of Send/RQE SGEs) */
	long refs;     /* references held (mem_get - mem_put) */
	bool ext;      /* |mem| is the caller's (not freed) */
};

struct fk_owner {
	struct rdmap_conn *c;
	struct fk_region reg[FK_REGIONS];
	int nreg;
	/* send queue: [sq_tail, sq_head) posted, sq_next the next to offer */
	struct rdmap_wqe sq[FK_SQ];
	uint32_t sq_head, sq_next, sq_tail;
	bool sq_stopped; /* like a QP not in RTS */
	/* receive queue: [rq_tail, rq_head) posted */
	struct rdmap_rqe rq[FK_RQ];
	uint32_t rq_head, rq_tail;
	/* completions */
	struct iwarp_wc scq[FK_CQ];
	int nscq;
	struct iwarp_wc rcq[FK_CQ];
	int nrcq;
	int scq_room, rcq_room; /* < 0: unlimited; else -ENOSPC when 0 */
	/* stream rights (RFC 5040 §8) */
	int stream_access;
	/* recorders */
	int set_error_calls;
	bool err_cause_valid, err_received, err_async;
	struct iwarp_term_cause err_cause;
	int closed_calls;
	int closed_err;
	bool closed_cause_valid;
	struct iwarp_term_cause closed_cause;
	int kicks, shutdowns, term_queued, cancel_rx;
	/* waits for a receive WQE (rdmap_conn_set_rx_wait): rx_wait(true)
	 * returns |rx_wait_rc| (0: the owner waits) */
	int rx_wait_rc;
	int rx_waits, rx_wait_ends, rx_kicks;
	long bad_puts; /* mem_put of an unknown/unheld ref */
	/* fk_rx_iov gave the last iovec provided memory, after |prov_own|
	 * octets of the connection's own iovecs */
	bool prov;
	size_t prov_own;
};

extern const struct rdmap_ops fk_ops;

/* fk_create makes connections whose bulk octets go to memory that
 * fk_rx_feed provides per receive (rdmap_conn_set_rx_provided), and
 * poisons after each rdmap_conn_rx_done_at. */
extern bool fk_rx_provided;

/* rdmap_conn_rx_iov / rdmap_conn_rx_done, providing the bulk memory
 * when fk_rx_provided. */
int fk_rx_iov(struct fk_owner *o, struct iovec *iov, int cap);
void fk_rx_done(struct fk_owner *o, size_t n);

/* Initializes |o| (no engine yet). */
void fk_init(struct fk_owner *o);
/* Creates the engine for |o|; false on failure. */
bool fk_create(struct fk_owner *o, const struct rdmap_conn_cfg *cfg);
/* Destroys the engine (if any) and frees the regions. */
void fk_fini(struct fk_owner *o);
/* Adds a region of |len| octets (filled with |fill|), returns it. */
struct fk_region *fk_region_add(struct fk_owner *o, uint32_t stag, size_t len,
				int access, uint8_t fill);
/* The same in caller memory |mem| of |len| + 2 * FK_GUARD octets (so that
 * successive owners can use the same addresses). */
struct fk_region *fk_region_add_ext(struct fk_owner *o, uint32_t stag,
				    uint8_t *mem, size_t len, int access,
				    uint8_t fill);
struct fk_region *fk_region_find(struct fk_owner *o, uint32_t stag);
/* Total references held over all regions. */
long fk_refs(const struct fk_owner *o);
/* True when every guard octet is intact. */
bool fk_guards_ok(const struct fk_owner *o);

/* Posting (does not kick the engine). */
struct rdmap_wqe *fk_post_send(struct fk_owner *o, uint64_t wr_id,
			       enum iwarp_wr_opcode op, unsigned int flags,
			       uint32_t lkey, const void *addr, uint32_t len);
void fk_post_recv(struct fk_owner *o, uint64_t wr_id, uint32_t lkey, void *addr,
		  uint32_t len);

/* Drains |o|'s transmit side into |out| (up to |cap|, the rest is kept
 * for later if |cap| is reached). Returns the octets taken. */
size_t fk_tx_drain(struct fk_owner *o, uint8_t *out, size_t cap);
/* Feeds |len| octets to |o|'s receive side through rx_iov/rx_done in
 * pieces of at most |chunk| octets (0: as large as rx_iov allows), until
 * the engine offers no room. Returns the octets it took. */
size_t fk_rx_feed(struct fk_owner *o, const uint8_t *buf, size_t len,
		  size_t chunk);
/* Moves octets both ways until neither side has anything to send. */
void fk_pump(struct fk_owner *a, struct fk_owner *b);

#endif /* IWARP_TESTS_RDMAP_FAKE_H */
