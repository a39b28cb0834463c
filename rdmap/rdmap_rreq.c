/* rdmap/rdmap_rreq.c: RDMA Read Request codec (RFC 5040 §4.4). */
#include "config.h"

#include "rdmap/rdmap_rreq.h"

#include "iwarp/iwarp.h"
#include "rdmap/rdmap_opcode.h"
#include "util/bytes.h"

size_t rdmap_rreq_encode(uint8_t *out, const struct rdmap_rreq *rr)
{
	uint8_t *p = out;

	p = iw_put_u32be(p, rr->sink_stag);
	p = iw_put_u64be(p, rr->sink_to);
	p = iw_put_u32be(p, rr->size);
	p = iw_put_u32be(p, rr->src_stag);
	p = iw_put_u64be(p, rr->src_to);
	return (size_t)(p - out);
}

int rdmap_rreq_decode(struct rdmap_rreq *rr, const uint8_t *buf, size_t len)
{
	if (len < RDMAP_RREQ_HDR_LEN)
		return IWARP_ERR_TRUNCATED;
	rr->sink_stag = iw_get_u32be(buf);
	rr->sink_to = iw_get_u64be(buf + 4);
	rr->size = iw_get_u32be(buf + 12);
	rr->src_stag = iw_get_u32be(buf + 16);
	rr->src_to = iw_get_u64be(buf + 20);
	return RDMAP_RREQ_HDR_LEN;
}

size_t rdmap_rreq_msg_encode(uint8_t *out, uint32_t msn,
			     const struct rdmap_rreq *rr)
{
	struct ddp_hdr h = {
		.tagged = false,
		.last = true,
		.dv = DDP_VERSION,
		.rv = RDMAP_VERSION,
		.opcode = RDMAP_OP_READ_REQUEST,
		.qn = DDP_QN_READ_REQUEST,
		.msn = msn,
		.mo = 0,
	};
	size_t n;

	n = ddp_hdr_encode(out, &h);
	return n + rdmap_rreq_encode(out + n, rr);
}

int rdmap_rreq_msg_decode(struct ddp_hdr *h, struct rdmap_rreq *rr,
			  const uint8_t *ulpdu, size_t len)
{
	struct ddp_hdr tmp;
	int rc;

	if (!h)
		h = &tmp;
	rc = ddp_hdr_decode(h, ulpdu, len);
	if (rc < 0)
		return rc;
	rc = rdmap_hdr_check(h);
	if (rc < 0)
		return rc;
	if (h->opcode != RDMAP_OP_READ_REQUEST)
		return IWARP_ERR_RDMAP_OPCODE;
	/* RFC 5040 §4.4: the Read Request is a single untagged segment. */
	if (!h->last || h->mo != 0)
		return IWARP_ERR_DDP_MO;
	if (len < RDMAP_RREQ_MSG_LEN)
		return IWARP_ERR_TRUNCATED;
	if (len > RDMAP_RREQ_MSG_LEN)
		return IWARP_ERR_DDP_MSG_TOO_LONG;
	rc = rdmap_rreq_decode(rr, ulpdu + DDP_UNTAGGED_HDR_LEN,
			       len - DDP_UNTAGGED_HDR_LEN);
	if (rc < 0)
		return rc;
	return RDMAP_RREQ_MSG_LEN;
}
