/*
 * rdmap/rdmap_conn_tx.c: the RDMAP engine's transmit path. Send WQEs, Read
 * Responses, the RFC 6581 RTR and the TERMINATE become DDP segments (RFC 5041
 * §5.1) framed into FPDUs (RFC 5044 §4-6) whose iovecs point at per-FPDU
 * scratch and at the registered payload (no copy).
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "rdmap/rdmap_opcode.h"
#include "rdmap/rdmap_conn_int.h"
#include "util/tsan.h"

static uint32_t conn_slots_used(const struct rdmap_conn *c)
{
	return c->slot_tail - c->slot_head;
}

static uint32_t orq_count(const struct rdmap_conn *c)
{
	return c->orq_tail - c->orq_head;
}

/* True when a Read WQE of the SQ is still outstanding (Fence, RFC 5040 §5.2).
 */
static bool orq_has_sq_reads(const struct rdmap_conn *c)
{
	uint32_t i;

	for (i = c->orq_head; i != c->orq_tail; i++)
		if (c->orq[i & (c->orq_size - 1)].in_sq)
			return true;
	return false;
}

/* Largest ULPDU for an FPDU starting at the current stream position. */
static size_t conn_mulpdu(const struct rdmap_conn *c)
{
	size_t budget = c->fpdu_max ? c->fpdu_max : RDMAP_CONN_FPDU_DEFAULT;
	int m;

	/* with markers as without: the FPDU fills the budget (the MSS),
	 * markers counted in it (RFC 5044 §5, §8) */
	m = mpa_tx_max_ulpdu(&c->mtx, budget);
	return m < 0 ? 0 : (size_t)m;
}

/* Most iovecs one FPDU can need (the header and RDMAP_MAX_SGE pieces). */
static uint32_t conn_fpdu_iov_max(const struct rdmap_conn *c)
{
	return (uint32_t)MPA_TX_IOV_MAX(
		RDMAP_MAX_SGE + 1u, c->mtx.markers ? MPA_MAX_FPDU_MARKERS : 0u);
}

/* Ring units one framed FPDU holds at most: one when it is staged. */
static uint32_t conn_slot_iov_max(const struct rdmap_conn *c)
{
	return c->stage ? 1u : conn_fpdu_iov_max(c);
}

/* Octets on the wire of the largest FPDU this connection frames: its
 * budget, and never more than a 65535-octet ULPDU makes (RFC 5044 §4). */
static uint32_t conn_wire_max(const struct rdmap_conn *c)
{
	size_t budget = c->fpdu_max ? c->fpdu_max : RDMAP_CONN_FPDU_DEFAULT;
	size_t most = MPA_LEN_FIELD + 65535u + 3u + MPA_CRC_LEN +
		      MPA_MARKER_LEN * MPA_MAX_FPDU_MARKERS;

	return (uint32_t)(budget < most ? budget : most);
}

/* The rings have room for |fpdus| more FPDUs of the largest kind, each
 * possibly skipping a ring's end. */
static bool conn_iov_room(const struct rdmap_conn *c, uint32_t fpdus)
{
	uint32_t free_units = c->iov_cap - (c->iov_tail - c->iov_head);

	if (c->stage && RDMAP_CONN_TX_STAGE - (c->stage_tail - c->stage_head) <
				fpdus * 2u * conn_wire_max(c))
		return false;
	return free_units >= fpdus * 2u * conn_slot_iov_max(c);
}

/*
 * Where |len| contiguous units go in a ring of |cap| (a power of two)
 * whose free-running tail is |tail|: the offset returned, and in *units
 * what they hold, |len| plus the end of the ring skipped when they would
 * not fit before it.
 */
static uint32_t ring_place(uint32_t tail, uint32_t cap, uint32_t len,
			   uint32_t *units)
{
	uint32_t off = tail & (cap - 1u);

	if (off + len > cap) {
		*units = cap - off + len;
		return 0;
	}
	*units = len;
	return off;
}

/* Takes |k| contiguous iovecs for |sl| from the ring (conn_iov_room was
 * checked). */
static void conn_iov_take(struct rdmap_conn *c, struct rdmap_slot *sl,
			  uint32_t k)
{
	sl->iov_mark = c->iov_tail;
	sl->iov = &c->iovs[ring_place(c->iov_tail, c->iov_cap, k,
				      &sl->iov_units)];
}

/*
 * Copies the FPDU framed into c->stage_iov (|cnt| iovecs, |len| octets)
 * into the staging ring and gives |sl| one iovec for it. Returns false
 * when it does not fit (conn_iov_room was checked, so it does).
 */
static bool conn_stage_copy(struct rdmap_conn *c, struct rdmap_slot *sl,
			    size_t cnt, size_t len)
{
	uint32_t units, off = ring_place(c->stage_tail, RDMAP_CONN_TX_STAGE,
					 (uint32_t)len, &units);
	uint8_t *dst = c->stage + off;
	size_t i;

	if (RDMAP_CONN_TX_STAGE - (c->stage_tail - c->stage_head) < units)
		return false;
	sl->stage_mark = c->stage_tail;
	sl->stage_units = units;
	c->stage_tail += units;
	for (i = 0; i < cnt; i++) {
		memcpy(dst, c->stage_iov[i].iov_base, c->stage_iov[i].iov_len);
		dst += c->stage_iov[i].iov_len;
	}
	conn_iov_take(c, sl, 1u);
	sl->iov[0].iov_base = dst - len;
	sl->iov[0].iov_len = len;
	return true;
}

/* the length field and the header go out as one iovec (rdmap_slot) */
_Static_assert(offsetof(struct rdmap_slot, ulp) ==
		       offsetof(struct rdmap_slot, fixed) +
			       sizeof(struct mpa_tx_fixed),
	       "the slot's header must follow its length field");

/*
 * Frames one ULPDU: header |hdr| (copied into the slot) and payload |pay|
 * into the next free slot. Returns the slot or NULL (cannot happen with a
 * sane fpdu_max; the connection then fails).
 */
static struct rdmap_slot *conn_frame(struct rdmap_conn *c, const uint8_t *hdr,
				     size_t hdr_len, const struct iovec *pay,
				     size_t npay)
{
	struct rdmap_slot *sl = conn_slot(c, c->slot_tail);
	struct iovec ul[RDMAP_MAX_SGE + 1];
	size_t n = 0, cnt = 0, i;
	int rc;

	memcpy(sl->ulp, hdr, hdr_len);
	ul[n].iov_base = sl->ulp;
	ul[n++].iov_len = hdr_len;
	for (i = 0; i < npay && n < RDMAP_MAX_SGE + 1; i++)
		if (pay[i].iov_len)
			ul[n++] = pay[i];
	sl->pos = c->mtx.pos;
	if (c->stage) {
		rc = mpa_tx_frame_parts(&c->mtx, ul, n, &sl->fixed, c->marks,
					c->stage_iov, conn_fpdu_iov_max(c),
					&cnt);
		if (rc <= 0 || !conn_stage_copy(c, sl, cnt, (size_t)rc))
			return NULL;
		sl->niov = 1u;
		c->iov_tail += sl->iov_units;
	} else {
		conn_iov_take(c, sl, conn_fpdu_iov_max(c));
		rc = mpa_tx_frame_parts(&c->mtx, ul, n, &sl->fixed, NULL,
					sl->iov, conn_fpdu_iov_max(c), &cnt);
		if (rc <= 0)
			return NULL;
		sl->niov = (uint32_t)cnt;
		/* give back what the FPDU did not use */
		sl->iov_units -= conn_fpdu_iov_max(c) - sl->niov;
		c->iov_tail += sl->iov_units;
	}
	sl->wire_len = (size_t)rc;
	sl->has_sq = false;
	sl->sq_signaled = false;
	sl->sq_done = 0;
	sl->mem_ref = 0;
	sl->is_term = false;
	c->slot_tail++;
	return sl;
}

/* Payload iovecs of WQE |w| for message octets [off, off + len). */
static size_t conn_wqe_iov(const struct rdmap_wqe *w, uint32_t off,
			   uint32_t len, struct iovec *out)
{
	size_t n = 0;
	uint32_t i, take;

	if (!len)
		return 0;
	if (w->is_inline) {
		out[0].iov_base = (void *)(uintptr_t)(w->inline_data + off);
		out[0].iov_len = len;
		return 1;
	}
	for (i = 0; i < w->num_sge && len; i++) {
		if (off >= w->sge[i].length) {
			off -= w->sge[i].length;
			continue;
		}
		take = w->sge[i].length - off;
		if (take > len)
			take = len;
		out[n].iov_base = (void *)(uintptr_t)(w->sge[i].addr + off);
		out[n++].iov_len = take;
		len -= take;
		off = 0;
	}
	return n;
}

/* A WQE failed a local check: complete it in order, then fail the QP. */
static void conn_local_error(struct rdmap_conn *c, uint32_t idx,
			     enum iwarp_wc_status status)
{
	c->loc_err = true;
	c->loc_err_idx = idx;
	c->loc_err_status = status;
	conn_sq_progress(c);
}

/* Frames one FPDU of the RFC 6581 RTR (P2P initiator, §7). */
static bool conn_frame_rtr(struct rdmap_conn *c)
{
	uint8_t hdr[RDMAP_RREQ_MSG_LEN];
	struct ddp_seg_iter it;
	struct ddp_seg seg;
	struct rdmap_rreq rr;
	struct rdmap_orq *o;
	uint32_t msn = 0;
	size_t len;

	switch (c->rtr) {
	case MPA_RTR_READ:
		/* zero-length Read Request, sink/source STag 1 (never 0,
		 * docs/interop-notes.md §0.3); takes one ORQ slot */
		memset(&rr, 0, sizeof(rr));
		rr.sink_stag = MPA_RTR_STAG;
		rr.src_stag = MPA_RTR_STAG;
		ddp_tx_msn_alloc(&c->txq, DDP_QN_READ_REQUEST, &msn);
		len = rdmap_rreq_msg_encode(hdr, msn, &rr);
		if (!conn_frame(c, hdr, len, NULL, 0))
			return false;
		o = &c->orq[c->orq_tail++ & (c->orq_size - 1)];
		memset(o, 0, sizeof(*o));
		o->sink_stag = MPA_RTR_STAG;
		conn_orq_publish(c);
		break;
	case MPA_RTR_SEND:
		ddp_tx_msn_alloc(&c->txq, DDP_QN_SEND, &msn);
		ddp_seg_init_untagged(&it, RDMAP_OP_SEND, DDP_QN_SEND, msn, 0,
				      0);
		goto one;
	case MPA_RTR_WRITE:
	case MPA_RTR_NONE:
	default:
		ddp_seg_init_tagged(&it, RDMAP_OP_WRITE, MPA_RTR_STAG, 0, 0);
	one:
		if (ddp_seg_next(&it, conn_mulpdu(c), &seg) != 1 ||
		    !conn_frame(c, seg.hdr_bytes, seg.hdr_len, NULL, 0))
			return false;
		break;
	}
	c->rtr_pending = false;
	return true;
}

/*
 * Frames the next FPDU of the Read Response at the IRQ head (RFC 5040
 * §4.5). The source was validated when the Read Request arrived, but the
 * application may deregister it while the response is still being sent:
 * every segment checks the STag again over its own range before its
 * octets are read (RFC 5040 §8), so a stale source ends the stream with a
 * TERMINATE instead of reading memory the application gave back. Returns
 * 1, 0 on an internal failure, or the access error (< 0).
 */
static int conn_frame_atomic_response(struct rdmap_conn *c,
				      const struct rdmap_irq *e);

static int conn_frame_response(struct rdmap_conn *c)
{
	struct rdmap_irq *e = &c->irq[c->irq_head & (c->irq_size - 1)];
	struct rdmap_mem m = {NULL, 0};
	struct rdmap_slot *sl;
	struct ddp_seg seg;
	struct iovec pay;
	int rc;

	if (e->atomic)
		return conn_frame_atomic_response(c, e);
	if (!c->rs_active) {
		if (ddp_seg_init_tagged(&c->rs_it, RDMAP_OP_READ_RESPONSE,
					e->rr.sink_stag, e->rr.sink_to,
					e->rr.size))
			return 0;
		c->rs_active = true;
	}
	if (ddp_seg_next(&c->rs_it, conn_mulpdu(c), &seg) != 1)
		return 0;
	if (seg.len) {
		/* held by the FPDU until TCP took it (tx_done) */
		rc = c->ops->mem_get(
			c->owner, e->rr.src_stag, IWARP_ACCESS_REMOTE_READ,
			e->rr.src_to + seg.offset, seg.len, false, &m);
		if (rc)
			return rc;
	}
	pay.iov_base = m.ptr;
	pay.iov_len = seg.len;
	sl = conn_frame(c, seg.hdr_bytes, seg.hdr_len, &pay, seg.len ? 1 : 0);
	if (!sl) {
		conn_mem_put(c, &m);
		return 0;
	}
	sl->mem_ref = m.ref;
	c->resp_burst++;
	if (ddp_seg_done(&c->rs_it)) {
		c->rs_active = false;
		c->irq_head++;
	}
	return 1;
}

/*
 * RFC 7306 Atomic Response to the Atomic Request at the IRQ head: executes
 * it now (in request order with the Read Responses before it, RFC 5040
 * §5.5), checking the target again (RFC 5040 §8: the region may have been
 * deregistered since the request arrived), then frames the 12-octet
 * response on QN 4. Returns 1, 0 on an internal failure, or the error.
 */
static int conn_frame_atomic_response(struct rdmap_conn *c,
				      const struct rdmap_irq *e)
{
	uint8_t buf[DDP_UNTAGGED_HDR_LEN + RDMAP_ATOMIC_RESP_LEN];
	struct rdmap_mem m = {NULL, 0};
	struct rdmap_atomic_resp ar;
	struct ddp_seg_iter it;
	struct ddp_seg seg;
	uint32_t msn = 0;
	int rc;

	rc = c->ops->mem_get(c->owner, e->ar.stag, IWARP_ACCESS_REMOTE_ATOMIC,
			     e->ar.to, 8, false, &m);
	if (rc)
		return rc;
	if ((uintptr_t)m.ptr & 7u) {
		conn_mem_put(c, &m);
		return IWARP_ERR_RDMAP_ATOMIC_ALIGN;
	}
	ar.req_id = e->ar.req_id;
	iw_tsan_net_begin(); /* the network changes the region */
	ar.orig = rdmap_atomic_exec(&e->ar, (uint64_t *)(uintptr_t)m.ptr);
	iw_tsan_net_end();
	conn_mem_put(c, &m);
	ddp_tx_msn_alloc(&c->txq, RDMAP_QN_ATOMIC_RESPONSE, &msn);
	if (ddp_seg_init_untagged(&it, RDMAP_OP_ATOMIC_RESPONSE,
				  RDMAP_QN_ATOMIC_RESPONSE, msn, 0,
				  RDMAP_ATOMIC_RESP_LEN) ||
	    ddp_seg_next(&it, sizeof(buf), &seg) != 1 ||
	    seg.len != RDMAP_ATOMIC_RESP_LEN)
		return 0;
	memcpy(buf, seg.hdr_bytes, seg.hdr_len);
	rdmap_atomic_resp_encode(buf + seg.hdr_len, &ar);
	if (!conn_frame(c, buf, seg.hdr_len + RDMAP_ATOMIC_RESP_LEN, NULL, 0))
		return 0;
	c->resp_burst++;
	c->irq_head++;
	return 1;
}

/* RFC 7306 Immediate Data message of WQE |w| (Immediate Data with SE when
 * solicited) as the SQ message in progress: 0 or the DDP error. */
static int conn_imm_init(struct rdmap_conn *c, const struct rdmap_wqe *w)
{
	uint8_t op = (w->send_flags & IWARP_SEND_SOLICITED)
			     ? RDMAP_OP_IMM_DATA_SE
			     : RDMAP_OP_IMM_DATA;
	uint32_t msn = 0;

	ddp_tx_msn_alloc(&c->txq, DDP_QN_SEND, &msn);
	c->sq_imm = true;
	return ddp_seg_init_untagged(&c->sq_it, op, DDP_QN_SEND, msn, 0,
				     RDMAP_IMM_LEN);
}

/* Frames the next FPDU of the SQ message in progress. */
static bool conn_frame_sq(struct rdmap_conn *c)
{
	const struct rdmap_wqe *w = c->sq_w;
	struct iovec pay[RDMAP_MAX_SGE];
	struct rdmap_slot *sl;
	struct ddp_seg seg;
	size_t n;

	if (ddp_seg_next(&c->sq_it, conn_mulpdu(c), &seg) != 1)
		return false;
	if (c->sq_imm) {
		/* RFC 7306: 8 octets of Immediate Data; the verbs value (4
		 * octets, network order) first, then zeros
		 * (docs/rdmap-ext.md) */
		uint8_t imm[RDMAP_IMM_LEN] = {0};
		uint8_t *inl = conn_slot(c, c->slot_tail)->inl;

		memcpy(imm, &w->imm_data, sizeof(w->imm_data));
		memcpy(inl, imm + seg.offset, seg.len);
		pay[0].iov_base = inl;
		pay[0].iov_len = seg.len;
		n = 1;
	} else if (w->is_inline && seg.len) {
		/* the slot keeps its own copy: an FPDU the kernel is still
		 * sending never reads the owner's WQE ring (which the QP's
		 * destruction frees) */
		uint8_t *inl = conn_slot(c, c->slot_tail)->inl;

		memcpy(inl, w->inline_data + seg.offset, seg.len);
		pay[0].iov_base = inl;
		pay[0].iov_len = seg.len;
		n = 1;
	} else {
		n = conn_wqe_iov(w, seg.offset, seg.len, pay);
	}
	sl = conn_frame(c, seg.hdr_bytes, seg.hdr_len, pay, n);
	if (!sl)
		return false;
	if (ddp_seg_done(&c->sq_it)) {
		/* RFC 7306: RDMA Write with Immediate Data is the Write
		 * followed by an Immediate Data message */
		if (w->opcode == IWARP_WR_RDMA_WRITE_WITH_IMM && !c->sq_imm)
			return conn_imm_init(c, w) == 0;
		sl->has_sq = true;
		sl->sq_signaled = (w->send_flags & IWARP_SEND_SIGNALED) != 0;
		sl->sq_done = c->sq_idx + 1;
		c->sq_active = false;
		c->sq_imm = false;
	}
	return true;
}

/*
 * Whether WQE |idx| (a Read or an atomic: it takes an ORD credit and its
 * result lands in sge[0]) may start now: true, or false when it must wait
 * for a credit or was failed locally (ORD 0, bad sink).
 */
static bool conn_orq_admit(struct rdmap_conn *c, uint32_t idx,
			   const struct rdmap_wqe *w)
{
	if (!c->ord) {
		/* no outbound Reads negotiated (ORD 0, RFC 6581 §5) */
		c->ops->sq_started(c->owner, idx);
		conn_local_error(c, idx, IWARP_WC_LOC_QP_OP_ERR);
		return false;
	}
	/* ORD: at most |ord| Reads (and atomics, RFC 7306 §4.2)
	 * outstanding (RFC 6581 §5); the Read RTR's slot counts too */
	if (orq_count(c) >= c->ord || orq_count(c) >= c->orq_size)
		return false;
	if (c->ops->mem_check_local(c->owner, &w->sge[0],
				    IWARP_ACCESS_LOCAL_WRITE)) {
		c->ops->sq_started(c->owner, idx);
		conn_local_error(c, idx, IWARP_WC_LOC_PROT_ERR);
		return false;
	}
	return true;
}

/*
 * Starts an RFC 7306 atomic WQE: one Atomic Request FPDU on QN 3 that,
 * like a Read Request, takes an ORD credit (an ORQ slot) until its Atomic
 * Response arrives. 1 / 0 / -1 as conn_start_read.
 */
static int conn_start_atomic(struct rdmap_conn *c, uint32_t idx,
			     const struct rdmap_wqe *w)
{
	uint8_t buf[DDP_UNTAGGED_HDR_LEN + RDMAP_ATOMIC_REQ_LEN];
	struct rdmap_atomic_req ar;
	struct ddp_seg_iter it;
	struct rdmap_slot *sl;
	struct rdmap_orq *o;
	struct ddp_seg seg;
	uint32_t msn = 0;

	if (!conn_orq_admit(c, idx, w))
		return 0;
	memset(&ar, 0, sizeof(ar));
	if (w->opcode == IWARP_WR_ATOMIC_FETCH_AND_ADD ||
	    w->opcode == IWARP_WR_MASKED_ATOMIC_FETCH_AND_ADD) {
		ar.op = RDMAP_ATOMIC_FETCH_ADD;
		ar.add_swap = w->compare_add;
		/* masked: the set bits end the fields (rdmap_ext.h) */
		if (w->opcode == IWARP_WR_MASKED_ATOMIC_FETCH_AND_ADD)
			ar.add_swap_mask = w->compare_add_mask;
	} else {
		ar.op = RDMAP_ATOMIC_CMP_SWAP;
		ar.cmp = w->compare_add;
		ar.add_swap = w->swap;
		ar.cmp_mask = UINT64_MAX;
		ar.add_swap_mask = UINT64_MAX;
		if (w->opcode == IWARP_WR_MASKED_ATOMIC_CMP_AND_SWP) {
			ar.cmp_mask = w->compare_add_mask;
			ar.add_swap_mask = w->swap_mask;
		}
	}
	ar.req_id = ++c->atomic_id;
	ar.stag = w->rkey;
	ar.to = w->remote_addr;
	ddp_tx_msn_alloc(&c->txq, RDMAP_QN_ATOMIC_REQUEST, &msn);
	if (ddp_seg_init_untagged(&it, RDMAP_OP_ATOMIC_REQUEST,
				  RDMAP_QN_ATOMIC_REQUEST, msn, 0,
				  RDMAP_ATOMIC_REQ_LEN) ||
	    ddp_seg_next(&it, sizeof(buf), &seg) != 1 ||
	    seg.len != RDMAP_ATOMIC_REQ_LEN)
		return -1;
	memcpy(buf, seg.hdr_bytes, seg.hdr_len);
	rdmap_atomic_req_encode(buf + seg.hdr_len, &ar);
	sl = conn_frame(c, buf, seg.hdr_len + RDMAP_ATOMIC_REQ_LEN, NULL, 0);
	if (!sl)
		return -1;
	sl->has_sq = true;
	sl->sq_done = idx + 1;
	o = &c->orq[c->orq_tail++ & (c->orq_size - 1)];
	memset(o, 0, sizeof(*o));
	o->sq_idx = idx;
	o->in_sq = true;
	o->atomic = true;
	o->req_id = ar.req_id;
	o->sink = w->sge[0];
	o->size = 8;
	conn_orq_publish(c);
	c->ops->sq_started(c->owner, idx);
	return 1;
}

/* Starts a Read WQE: one Read Request FPDU (RFC 5040 §4.4). 1 / 0 / -1. */
static int conn_start_read(struct rdmap_conn *c, uint32_t idx,
			   const struct rdmap_wqe *w)
{
	uint8_t hdr[RDMAP_RREQ_MSG_LEN];
	struct rdmap_slot *sl;
	struct rdmap_rreq rr;
	struct rdmap_orq *o;
	uint32_t msn = 0;
	size_t len;

	if (!conn_orq_admit(c, idx, w))
		return 0;
	memset(&rr, 0, sizeof(rr));
	/* the sink is the local SGE: its lkey is the STag (RFC 5040 §4.4);
	 * never STag 0 on the wire for a zero-length sink */
	rr.sink_stag = w->sge[0].lkey ? w->sge[0].lkey : MPA_RTR_STAG;
	rr.sink_to = w->sge[0].addr;
	rr.size = w->sge[0].length;
	rr.src_stag = w->rkey;
	rr.src_to = w->remote_addr;
	ddp_tx_msn_alloc(&c->txq, DDP_QN_READ_REQUEST, &msn);
	len = rdmap_rreq_msg_encode(hdr, msn, &rr);
	sl = conn_frame(c, hdr, len, NULL, 0);
	if (!sl)
		return -1;
	sl->has_sq = true;
	sl->sq_done = idx + 1;
	o = &c->orq[c->orq_tail++ & (c->orq_size - 1)];
	memset(o, 0, sizeof(*o));
	o->sq_idx = idx;
	o->in_sq = true;
	o->sink_stag = rr.sink_stag;
	o->sink_to = rr.sink_to;
	o->size = rr.size;
	o->got = 0;
	conn_orq_publish(c);
	c->ops->sq_started(c->owner, idx);
	return 1;
}

/*
 * A WQE that never goes on the wire (memory window bind, local
 * invalidate): runs when the SQ reaches it, so it acts after every WQE
 * before it was started and before any after it. It completes in SQ
 * order: with the last FPDU framed before it (once TCP took that), or at
 * once when everything before it was handed to TCP already.
 */
static int conn_sq_local(struct rdmap_conn *c, uint32_t idx,
			 const struct rdmap_wqe *w)
{
	enum iwarp_wc_status st = IWARP_WC_LOC_QP_OP_ERR;
	struct rdmap_slot *last;

	if (c->ops->sq_local)
		st = c->ops->sq_local(c->owner, w);
	c->ops->sq_started(c->owner, idx);
	if (st != IWARP_WC_SUCCESS) {
		conn_local_error(c, idx, st);
		return 0;
	}
	if (c->slot_head != c->slot_tail) {
		last = conn_slot(c, c->slot_tail - 1u);
		last->has_sq = true;
		last->sq_done = idx + 1;
	} else {
		c->sq_sent = idx + 1;
	}
	conn_sq_progress(c);
	return 1;
}

/*
 * Before the connection may transmit (a responder waits for the first
 * inbound FPDU, RFC 5044 §7.1), memory operations at the head of the SQ
 * run anyway: they need no wire, and a consumer may wait for a bind's
 * completion before it sends the peer anything.
 */
void conn_sq_local_head(struct rdmap_conn *c)
{
	const struct rdmap_wqe *w;
	uint32_t idx;

	while (c->state == RDMAP_CONN_RUN && c->bound && !c->tx_enabled &&
	       !c->loc_err && !c->sq_active && c->slot_head == c->slot_tail) {
		w = c->ops->sq_next(c->owner, &idx);
		if (!w || (w->opcode != IWARP_WR_BIND_MW &&
			   w->opcode != IWARP_WR_LOCAL_INV))
			return;
		if (!conn_sq_local(c, idx, w))
			return;
	}
}

/*
 * Starts the next SQ WQE: 1 when a message was started or framed, 0 when
 * none can start now (empty, SQD, Fence, ORD, after a local error), -1 on
 * an internal framing failure.
 */
static int conn_sq_start(struct rdmap_conn *c)
{
	const struct rdmap_wqe *w;
	uint32_t idx, i;
	uint8_t op;
	int rc;

	if (!c->bound || c->loc_err)
		return 0;
	w = c->ops->sq_next(c->owner, &idx);
	if (!w)
		return 0;
	/* Fence: wait until every prior Read completed (RFC 5040 §5.2) */
	if ((w->send_flags & IWARP_SEND_FENCE) && orq_has_sq_reads(c))
		return 0;
	/* RFC 7306 opcodes only on a connection that negotiated them */
	if (rdmap_wr_is_ext(w->opcode) && !c->ext) {
		c->ops->sq_started(c->owner, idx);
		conn_local_error(c, idx, IWARP_WC_LOC_QP_OP_ERR);
		return 0;
	}
	if (w->opcode == IWARP_WR_RDMA_READ)
		return conn_start_read(c, idx, w);
	if (rdmap_wr_is_atomic(w->opcode))
		return conn_start_atomic(c, idx, w);
	if (w->opcode == IWARP_WR_BIND_MW || w->opcode == IWARP_WR_LOCAL_INV)
		return conn_sq_local(c, idx, w);
	if (!w->is_inline)
		for (i = 0; i < w->num_sge; i++)
			if (c->ops->mem_check_local(c->owner, &w->sge[i], 0)) {
				c->ops->sq_started(c->owner, idx);
				conn_local_error(c, idx, IWARP_WC_LOC_PROT_ERR);
				return 0;
			}
	c->sq_imm = false;
	switch (w->opcode) {
	case IWARP_WR_RDMA_WRITE:
	case IWARP_WR_RDMA_WRITE_WITH_IMM:
		rc = ddp_seg_init_tagged(&c->sq_it, RDMAP_OP_WRITE, w->rkey,
					 w->remote_addr, w->total_len);
		break;
	case IWARP_WR_SEND_WITH_IMM:
		rc = conn_imm_init(c, w);
		break;
	case IWARP_WR_SEND:
	case IWARP_WR_SEND_WITH_INV: {
		uint32_t msn = 0, inv = 0;

		/* RFC 5040 §4.3: opcodes 3/5 (SE), 4/6 with Invalidate */
		if (w->opcode == IWARP_WR_SEND_WITH_INV) {
			op = (w->send_flags & IWARP_SEND_SOLICITED)
				     ? RDMAP_OP_SEND_SE_INV
				     : RDMAP_OP_SEND_INV;
			inv = w->invalidate_rkey;
		} else {
			op = (w->send_flags & IWARP_SEND_SOLICITED)
				     ? RDMAP_OP_SEND_SE
				     : RDMAP_OP_SEND;
		}
		ddp_tx_msn_alloc(&c->txq, DDP_QN_SEND, &msn);
		rc = ddp_seg_init_untagged(&c->sq_it, op, DDP_QN_SEND, msn, inv,
					   w->total_len);
		break;
	}
	case IWARP_WR_RDMA_READ:
	case IWARP_WR_ATOMIC_CMP_AND_SWP:
	case IWARP_WR_ATOMIC_FETCH_AND_ADD:
	case IWARP_WR_MASKED_ATOMIC_CMP_AND_SWP:
	case IWARP_WR_MASKED_ATOMIC_FETCH_AND_ADD:
	case IWARP_WR_LOCAL_INV: /* conn_sq_local */
	case IWARP_WR_BIND_MW:
	default:
		rc = -EINVAL;
		break;
	}
	c->ops->sq_started(c->owner, idx);
	if (rc) {
		conn_local_error(c, idx, IWARP_WC_LOC_QP_OP_ERR);
		return 0;
	}
	c->sq_active = true;
	c->sq_idx = idx;
	c->sq_w = w;
	return 1;
}

/* Frames the TERMINATE (RFC 5040 §4.8: QN 2, MSN 1, MO 0, L=1). */
static void conn_frame_term(struct rdmap_conn *c)
{
	uint8_t buf[RDMAP_TERM_MAX_LEN];
	struct rdmap_slot *sl;
	uint32_t msn = 0;
	int len;

	ddp_tx_msn_alloc(&c->txq, DDP_QN_TERMINATE, &msn);
	len = rdmap_term_encode(buf, sizeof(buf), msn, &c->term);
	c->term_framed = true;
	if (len <= 0)
		return;
	sl = conn_frame(c, buf, (size_t)len, NULL, 0);
	if (sl)
		sl->is_term = true;
}

/*
 * Framing stopped on a full ring: small FPDUs want all the slots (many
 * per sendmsg); for large ones RDMAP_CONN_TX_SLOTS_FEW already fill a
 * sendmsg. Judged by the average size of what is framed, so that a
 * stream of one size keeps the ring it got. The size changes at the next
 * rewind (conn_rings_rewind), when no slot or iovec is in flight.
 */
static void conn_rings_size_next(struct rdmap_conn *c)
{
	const struct rdmap_slot *head;
	uint64_t ahead;

	if (c->slot_head == c->slot_tail)
		return;
	head = conn_slot(c, c->slot_head);
	ahead = c->mtx.pos - head->pos;
	c->slot_cap_next =
		ahead < (uint64_t)RDMAP_CONN_TX_SMALL_FPDU * conn_slots_used(c)
			? RDMAP_CONN_TX_SLOTS
			: RDMAP_CONN_TX_SLOTS_FEW;
}

/* Frames FPDUs while slots are free (one stays reserved for TERMINATE). */
static void conn_tx_fill(struct rdmap_conn *c)
{
	bool sq_tagged, resp, sq_turn, sq_blocked = false;
	int rc;

	for (;;) {
		if (c->state == RDMAP_CONN_TERM) {
			if (!c->term_framed &&
			    conn_slots_used(c) < c->slot_cap &&
			    conn_iov_room(c, 1))
				conn_frame_term(c);
			return;
		}
		if (c->state != RDMAP_CONN_RUN || !c->tx_enabled || !c->bound)
			return;
		/* one slot and its iovecs stay reserved for TERMINATE */
		if (conn_slots_used(c) >= c->slot_cap - 1 ||
		    !conn_iov_room(c, 2)) {
			conn_rings_size_next(c);
			return;
		}
		if (c->rtr_pending) {
			if (!conn_frame_rtr(c))
				goto internal;
			continue;
		}
		/* Read Responses first, but never inside a tagged message:
		 * DDP tagged messages do not interleave (RFC 5041 §5.1);
		 * after RDMAP_CONN_RESP_BURST of their FPDUs the send queue
		 * gets a turn, so a stream of Read Requests cannot starve it */
		sq_tagged = c->sq_active && c->sq_it.hdr.tagged;
		resp = !sq_tagged &&
		       (c->rs_active || c->irq_head != c->irq_tail);
		/* the send queue's turn comes between Read Responses, or
		 * inside one only for a Send in progress (untagged) */
		sq_turn = c->resp_burst >= RDMAP_CONN_RESP_BURST &&
			  !sq_blocked &&
			  (!c->rs_active || (c->sq_active && !sq_tagged));
		if (resp && !sq_turn) {
			rc = conn_frame_response(c);
			if (rc < 0) {
				conn_fail(c, rc, false);
				return;
			}
			if (!rc)
				goto internal;
			continue;
		}
		c->resp_burst = 0;
		if (c->sq_active) {
			if (!conn_frame_sq(c))
				goto internal;
			continue;
		}
		rc = conn_sq_start(c);
		if (rc < 0)
			goto internal;
		/* the turn frames the started message's first FPDU, or
		 * Read Responses would take another burst before it */
		if (rc > 0 && c->sq_active && !conn_frame_sq(c))
			goto internal;
		if (rc == 0) {
			if (!resp || c->state != RDMAP_CONN_RUN)
				return;
			sq_blocked = true; /* nothing to start: answer on */
		}
	}
internal : {
	struct iwarp_term_cause lc = {
		.layer = IWARP_TERM_LAYER_RDMAP,
		.etype = IWARP_RDMAP_ETYPE_LOCAL_CATASTROPHIC,
		.ecode = 0,
	};

	conn_fail_cause(c, &lc);
}
}

/* Drops framed FPDUs that the transport has not taken (after a failure). */
void conn_tx_drop_unsent(struct rdmap_conn *c)
{
	uint32_t first = c->slot_head + (c->head_off ? 1u : 0u);

	c->drop_unsent = false;
	if ((int32_t)(c->slot_tail - first) <= 0)
		return;
	conn_slots_release(c, first);
	c->mtx.pos = conn_slot(c, first)->pos;
	c->iov_tail = conn_slot(c, first)->iov_mark;
	if (c->stage)
		c->stage_tail = conn_slot(c, first)->stage_mark;
	c->slot_tail = first;
	c->sq_active = false;
	c->rs_active = false;
}

void rdmap_conn_tx_open(struct rdmap_conn *c)
{
	if (c->tx_enabled || c->state != RDMAP_CONN_RUN)
		return;
	c->tx_enabled = true;
	conn_tx_kick(c);
}

bool rdmap_conn_tx_waiting(const struct rdmap_conn *c)
{
	return !c->tx_enabled && c->state == RDMAP_CONN_RUN && c->bound;
}

bool rdmap_conn_tx_held(const struct rdmap_conn *c)
{
	if (!rdmap_conn_tx_waiting(c))
		return false;
	return c->sq_active || c->ops->sq_pending(c->owner);
}

bool rdmap_conn_tx_pending(const struct rdmap_conn *c)
{
	if (c->state == RDMAP_CONN_CLOSED)
		return false;
	if (c->slot_head != c->slot_tail)
		return true;
	if (c->state == RDMAP_CONN_TERM)
		return !c->term_framed;
	if (!c->tx_enabled || !c->bound)
		return false;
	return c->rtr_pending || c->sq_active || c->rs_active ||
	       c->irq_head != c->irq_tail || c->ops->sq_pending(c->owner);
}

int rdmap_conn_tx_iov(struct rdmap_conn *c, struct iovec *iov, int cap)
{
	size_t off = c->head_off, len;
	uint8_t *base;
	uint32_t s, i;
	size_t cut_len = 0;
	int n = 0, cut = 0;

	if (c->state == RDMAP_CONN_CLOSED || cap <= 0)
		return 0;
	if (c->drop_unsent && !c->tx_busy)
		conn_tx_drop_unsent(c);
	conn_tx_fill(c);
	for (s = c->slot_head; s != c->slot_tail && n < cap; s++) {
		const struct rdmap_slot *sl = conn_slot(c, s);

		for (i = 0; i < sl->niov && n < cap; i++) {
			len = sl->iov[i].iov_len;
			if (off >= len) {
				off -= len;
				continue;
			}
			base = (uint8_t *)sl->iov[i].iov_base + off;
			len -= off;
			off = 0;
			/* staged FPDUs lie back to back: one iovec for all */
			if (n > 0 && (uint8_t *)iov[n - 1].iov_base +
						     iov[n - 1].iov_len ==
					     base) {
				iov[n - 1].iov_len += len;
				continue;
			}
			iov[n].iov_base = base;
			iov[n++].iov_len = len;
		}
		if (sl->sq_signaled && i == sl->niov && n > 0) {
			cut = n;
			cut_len = iov[n - 1].iov_len;
		}
	}
	/*
	 * A Send or Write completes once handed to TCP
	 * (docs/interop-notes.md §1.3). The gather ends after the last FPDU
	 * of the last WQE in it that asked for a completion: every
	 * completion it can give is reported when that part returns, and
	 * the application may post again while the unsignaled tail goes
	 * out. At most one cut per gather, so a queue that signals every
	 * WQE still sends everything in one call.
	 */
	if (cut > 0) {
		n = cut;
		iov[n - 1].iov_len = cut_len;
	}
	c->tx_busy = n > 0;
	return n;
}

/*
 * Everything framed was sent: the next FPDU starts both rings at their
 * first entry again (the counters still run forward, through 2^32). A
 * connection then touches only as much of its rings as it keeps in
 * flight, not all of them once: with a thousand streaming connections
 * that first pass was page faults on the engine thread.
 */
static void conn_rings_rewind(struct rdmap_conn *c)
{
	/* rounded to the larger of the old and new sizes, a multiple of
	 * both (powers of two) */
	uint32_t slots =
		c->slot_cap > c->slot_cap_next ? c->slot_cap : c->slot_cap_next;
	uint32_t iovs = RDMAP_CONN_TX_IOVS_FOR(slots);

	c->slot_head = c->slot_tail =
		(c->slot_tail + slots - 1u) & ~(slots - 1u);
	c->iov_head = c->iov_tail = (c->iov_tail + iovs - 1u) & ~(iovs - 1u);
	c->slot_cap = c->slot_cap_next;
	c->iov_cap = RDMAP_CONN_TX_IOVS_FOR(c->slot_cap);
	c->stage_head = c->stage_tail =
		(c->stage_tail + RDMAP_CONN_TX_STAGE - 1u) &
		~(RDMAP_CONN_TX_STAGE - 1u);
}

void rdmap_conn_tx_done(struct rdmap_conn *c, size_t n)
{
	bool term_sent = false;
	struct rdmap_slot *sl;
	size_t rem;

	c->tx_busy = false;
	while (n > 0 && c->slot_head != c->slot_tail) {
		sl = conn_slot(c, c->slot_head);
		rem = sl->wire_len - c->head_off;
		if (n < rem) {
			c->head_off += n;
			break;
		}
		n -= rem;
		c->head_off = 0;
		c->slot_head++;
		c->iov_head += sl->iov_units;
		if (c->stage)
			c->stage_head += sl->stage_units;
		if (sl->mem_ref)
			c->ops->mem_put(c->owner, sl->mem_ref);
		sl->mem_ref = 0;
		/* docs/interop-notes.md §1.3: a Send/Write completes once
		 * handed to TCP */
		if (sl->has_sq)
			c->sq_sent = sl->sq_done;
		if (sl->is_term)
			term_sent = true;
	}
	if (c->slot_head == c->slot_tail && !c->head_off)
		conn_rings_rewind(c);
	if (c->state == RDMAP_CONN_CLOSED)
		return;
	if (c->drop_unsent)
		conn_tx_drop_unsent(c);
	if (term_sent) {
		conn_finish(c, c->close_err, true);
		return;
	}
	conn_sq_progress(c);
}
