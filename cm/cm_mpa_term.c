/*
 * cm/cm_mpa_term.c: TERMINATEs of the MPA connection setup and the RFC 6581
 * RTR check (RFC 5040 §4.8, RFC 5044 §7.1/§8, RFC 6581 §6-§7). See
 * cm_mpa_term.h.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "cm/cm_mpa_term.h"
#include "ddp/ddp_hdr.h"
#include "iwarp/iwarp.h"
#include "mpa/mpa_tx.h"
#include "rdmap/rdmap_opcode.h"
#include "rdmap/rdmap_rreq.h"
#include "rdmap/rdmap_term.h"
#include "util/bytes.h"

/* RFC 5040 §4.8 / docs/interop-notes.md §6.6: MSN of the first (only)
 * Terminate. */
#define CM_TERM_MSN 1

int cm_term_llp_encode(uint8_t *out, size_t cap, uint8_t ecode, bool crc,
		       bool markers)
{
	uint8_t ulpdu[RDMAP_TERM_BARE_LEN];
	struct iovec in, iov[MPA_TX_IOV_MAX(1u, 2u)];
	struct mpa_tx_scratch s;
	struct rdmap_term t;
	struct mpa_tx tx;
	size_t cnt = 0, i, off = 0;
	int n, len;

	if (!rdmap_term_cause_valid(IWARP_TERM_LAYER_LLP, IWARP_LLP_ETYPE_MPA,
				    ecode))
		return -EINVAL;
	/* RFC 5040 §4.8: bare Terminate, no headers attached (Hdrct 0) */
	memset(&t, 0, sizeof(t));
	t.cause.layer = IWARP_TERM_LAYER_LLP;
	t.cause.etype = IWARP_LLP_ETYPE_MPA;
	t.cause.ecode = ecode;
	n = rdmap_term_encode(ulpdu, sizeof(ulpdu), CM_TERM_MSN, &t);
	if (n < 0)
		return n;
	/* RFC 5044 §5: the first FPDU after the Request/Reply is at 0 */
	if (mpa_tx_init(&tx, markers, crc, 0))
		return -EINVAL;
	in.iov_base = ulpdu;
	in.iov_len = (size_t)n;
	len = mpa_tx_frame(&tx, &in, 1, &s, iov, sizeof(iov) / sizeof(iov[0]),
			   &cnt);
	if (len < 0)
		return len;
	if ((size_t)len > cap)
		return -ENOSPC;
	for (i = 0; i < cnt; i++) {
		memcpy(out + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	return len;
}

int cm_mpa_term_queue(struct cm_mpa *m, uint8_t ecode, bool crc, bool markers)
{
	size_t unsent = m->tx_len - m->tx_off;
	int n;

	/* keep what is still unsent, in front */
	memmove(m->tx, m->tx + m->tx_off, unsent);
	m->tx_off = 0;
	m->tx_len = unsent;
	n = cm_term_llp_encode(m->tx + unsent, sizeof(m->tx) - unsent, ecode,
			       crc, markers);
	if (n < 0)
		return n;
	m->tx_len += (size_t)n;
	return n;
}

int cm_mpa_reply_term(struct cm_mpa *m)
{
	struct mpa_rr rr;
	int ecode, n;

	if (m->role != CM_MPA_INITIATOR || m->state != CM_MPA_S_FAILED ||
	    !m->frame_len)
		return 0;
	ecode = mpa_neg_error_llp_ecode(m->err);
	if (ecode <= 0)
		return 0; /* R=1 (RFC 5044 §7.1), timeout, ... */
	/* a well-formed MPA frame only: its C and M frame the TERMINATE */
	if (mpa_rr_decode(&rr, m->rx, m->frame_len, MPA_RR_DECODE_LAX) < 0 ||
	    rr.r)
		return 0;
	/* RFC 5044 §7.1: CRC when either frame has C=1; the Reply's M asks
	 * us to insert markers */
	n = cm_mpa_term_queue(m, (uint8_t)ecode,
			      rr.c || m->params.crc != MPA_CRC_OFF, rr.m);
	return n < 0 ? n : ecode;
}

/* The fixed shape of the zero-length message of |rtr| (RFC 6581 §7). */
struct rtr_shape {
	bool tagged;
	uint8_t opcode;
	uint32_t qn; /* untagged only */
	uint16_t ulpdu_len;
};

static int rtr_shape_get(enum mpa_rtr rtr, struct rtr_shape *sh)
{
	struct mpa_rtr_msg msg;

	if (mpa_rtr_msg_get(rtr, &msg))
		return -EINVAL;
	sh->tagged = msg.tagged;
	sh->opcode = msg.rdmap_opcode;
	if (sh->tagged) {
		sh->qn = 0;
		sh->ulpdu_len = DDP_TAGGED_HDR_LEN;
	} else if (sh->opcode == RDMAP_OP_READ_REQUEST) {
		sh->qn = DDP_QN_READ_REQUEST; /* RFC 5040 §5.1 */
		sh->ulpdu_len = RDMAP_RREQ_MSG_LEN;
	} else {
		sh->qn = DDP_QN_SEND;
		sh->ulpdu_len = DDP_UNTAGGED_HDR_LEN;
	}
	return 0;
}

int cm_mpa_rtr_check(const struct cm_mpa *m)
{
	size_t clen, off = m->res.markers_rx ? MPA_MARKER_LEN : 0;
	const uint8_t *c = cm_mpa_carry(m, &clen), *u;
	struct rtr_shape sh;
	struct rdmap_rreq rr;
	struct ddp_hdr h;
	uint16_t ulpdu;

	if (!m->res.p2p || rtr_shape_get(m->res.rtr, &sh))
		return -EINVAL;
	/* ULPDU_Length and the DDP/RDMAP control octets (RFC 5041 §4.2) */
	if (clen < off + MPA_LEN_FIELD + 2)
		return CM_MPA_NEED_MORE;
	ulpdu = iw_get_u16be(c + off);
	u = c + off + MPA_LEN_FIELD;
	if (ulpdu >= 2 && !(u[0] & DDP_CTRL_T) &&
	    (u[1] & RDMAP_CTRL_OPCODE_MASK) == RDMAP_OP_TERMINATE)
		return CM_MPA_RTR_PEER_TERM; /* RFC 5040 §4.8: no answer */
	if (ulpdu != sh.ulpdu_len || !(u[0] & DDP_CTRL_L) ||
	    !!(u[0] & DDP_CTRL_T) != sh.tagged ||
	    (u[1] & RDMAP_CTRL_OPCODE_MASK) != sh.opcode)
		return IWARP_ERR_MPA_RTR;
	/* the whole header: QN (RFC 5040 §5.1), Read size 0 (§4.4) */
	if (clen < off + MPA_LEN_FIELD + ulpdu)
		return CM_MPA_NEED_MORE;
	if (ddp_hdr_decode(&h, u, ulpdu) < 0)
		return IWARP_ERR_MPA_RTR;
	if (!sh.tagged && h.qn != sh.qn)
		return IWARP_ERR_MPA_RTR;
	if (sh.opcode == RDMAP_OP_READ_REQUEST &&
	    (rdmap_rreq_decode(&rr, u + DDP_UNTAGGED_HDR_LEN,
			       RDMAP_RREQ_HDR_LEN) < 0 ||
	     rr.size != 0))
		return IWARP_ERR_MPA_RTR;
	/* RFC 5044 §4: then pad and CRC; the datapath checks the CRC */
	if (clen < off + mpa_fpdu_content_len(ulpdu))
		return CM_MPA_NEED_MORE;
	return CM_MPA_DONE;
}
