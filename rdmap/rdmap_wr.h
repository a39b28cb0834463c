/*
 * rdmap/rdmap_wr.h: work requests as the RDMAP engine sees them: a send
 * WQE (Send family, RDMA Write, RDMA Read; RFC 5040 §5) and a receive WQE
 * (the buffer an untagged Send message is placed into, RFC 5041 §5.3).
 *
 * The owner of the engine (verbs/) keeps them in its rings; the engine
 * reads them through struct rdmap_ops (rdmap/rdmap_conn.h).
 */
#ifndef IWARP_RDMAP_RDMAP_WR_H
#define IWARP_RDMAP_RDMAP_WR_H

#include <stdbool.h>
#include <stdint.h>

#include "iwarp/iwarp.h"

#define RDMAP_MAX_SGE	 6   /* scatter/gather entries of one WR (as siw) */
#define RDMAP_MAX_INLINE 128 /* >= 80 (siw) and >= 72 (Open MPI) */

/*
 * A send WQE. What no WQE needs at once shares its room (216 octets
 * instead of 360: a send queue of 128 is 27 KiB, and its pages are
 * first touched as the application posts).
 */
struct rdmap_wqe {
	uint64_t wr_id;
	enum iwarp_wr_opcode opcode;
	unsigned int send_flags; /* IWARP_SEND_*; SIGNALED already folded */
	uint32_t invalidate_rkey;
	uint32_t imm_data; /* RFC 7306 Immediate Data (network order) */
	uint64_t remote_addr;
	uint32_t rkey;
	uint32_t num_sge;
	uint32_t total_len;
	bool is_inline; /* payload copied into inline_data (Send, Write) */
	union {
		/* RFC 7306 atomics (sge[0] receives the original value) */
		struct {
			uint64_t compare_add, swap, compare_add_mask, swap_mask;
		};
		/* IWARP_WR_BIND_MW (never on the wire; ops->sq_local runs
		 * it) */
		struct {
			uint32_t mw_stag;  /* the window's STag when posted */
			uint32_t new_stag; /* its STag after the bind */
			uint32_t mr_lkey;  /* the region it is bound to */
			uint64_t addr, length;
			int access;
		} bind;
	};
	union {
		struct iwarp_sge sge[RDMAP_MAX_SGE]; /* unless is_inline */
		uint8_t inline_data[RDMAP_MAX_INLINE];
	};
};

/* True for the send opcodes of RFC 7306 (need the extensions negotiated). */
static inline bool rdmap_wr_is_ext(enum iwarp_wr_opcode op)
{
	return op == IWARP_WR_RDMA_WRITE_WITH_IMM ||
	       op == IWARP_WR_SEND_WITH_IMM ||
	       op == IWARP_WR_ATOMIC_CMP_AND_SWP ||
	       op == IWARP_WR_ATOMIC_FETCH_AND_ADD ||
	       op == IWARP_WR_MASKED_ATOMIC_CMP_AND_SWP ||
	       op == IWARP_WR_MASKED_ATOMIC_FETCH_AND_ADD;
}

/* True for the RFC 7306 atomic send opcodes. */
static inline bool rdmap_wr_is_atomic(enum iwarp_wr_opcode op)
{
	return op == IWARP_WR_ATOMIC_CMP_AND_SWP ||
	       op == IWARP_WR_ATOMIC_FETCH_AND_ADD ||
	       op == IWARP_WR_MASKED_ATOMIC_CMP_AND_SWP ||
	       op == IWARP_WR_MASKED_ATOMIC_FETCH_AND_ADD;
}

/* A receive WQE. */
struct rdmap_rqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t total_len;
	struct iwarp_sge sge[RDMAP_MAX_SGE];
};

#endif /* IWARP_RDMAP_RDMAP_WR_H */
