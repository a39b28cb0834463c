/* ddp/ddp_rx.c: DDP receive-side validation (RFC 5041 §5.3, §7). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ddp/ddp_rx.h"
#include "iwarp/iwarp.h"

void ddp_rx_init(struct ddp_rx *rx)
{
	unsigned int i;

	memset(rx, 0, sizeof(*rx));
	for (i = 0; i < DDP_NUM_QN; i++)
		rx->q[i].msn = DDP_MSN_FIRST; /* RFC 5041 §5.3 */
}

int ddp_rx_post(struct ddp_rx *rx, uint32_t qn, uint32_t len)
{
	if (qn >= DDP_NUM_QN)
		return IWARP_ERR_DDP_QN;
	rx->q[qn].posted = true;
	rx->q[qn].post_len = len;
	return 0;
}

void ddp_rx_unpost(struct ddp_rx *rx, uint32_t qn)
{
	if (qn < DDP_NUM_QN) {
		rx->q[qn].posted = false;
		rx->q[qn].post_len = 0;
	}
}

int ddp_rx_untagged(struct ddp_rx *rx, const struct ddp_hdr *h, uint32_t len,
		    struct ddp_rx_seg *out)
{
	struct ddp_rx_queue *q;
	uint32_t buf_len, mo;
	bool first;
	int rc;

	if (h->tagged)
		return -EINVAL;
	rc = ddp_hdr_check(h);
	if (rc < 0)
		return rc;
	/* RFC 5041 §5.3, §7: only the queues the ULP (RDMAP) defines */
	if (h->qn >= DDP_NUM_QN)
		return IWARP_ERR_DDP_QN;
	q = &rx->q[h->qn];

	/*
	 * RFC 5041 §5.3: the MSN names the message. Over an in-order LLP the
	 * only valid MSN is the current message's while one is in progress
	 * (messages of one queue do not interleave), else the next expected.
	 */
	if (h->msn != q->msn)
		return IWARP_ERR_DDP_MSN_RANGE;
	first = !q->in_msg;
	if (first) {
		/* RFC 5041 §7: "invalid MSN - no buffer available" */
		if (!q->posted)
			return IWARP_ERR_DDP_MSN_NO_BUFFER;
		buf_len = q->post_len;
		mo = 0;
	} else {
		buf_len = q->buf_len;
		mo = q->mo;
	}
	/* RFC 5041 §4.4: MO is the offset of this payload in the message */
	if (h->mo != mo)
		return IWARP_ERR_DDP_MO;
	if ((uint64_t)mo + len > buf_len)
		return IWARP_ERR_DDP_MSG_TOO_LONG;

	out->offset = mo;
	out->len = len;
	out->first = first;
	out->complete = h->last;
	out->msg_len = 0;
	if (first) {
		q->posted = false;
		q->post_len = 0;
		q->buf_len = buf_len;
		q->in_msg = true;
	}
	q->mo = mo + len;
	if (h->last) {
		/* RFC 5041 §4.2, §5.3: L ends the message, MSN advances */
		out->msg_len = q->mo;
		q->in_msg = false;
		q->mo = 0;
		q->buf_len = 0;
		q->msn++;
	}
	return 0;
}

int ddp_tagged_bounds(uint64_t base, uint64_t buf_len, uint64_t to,
		      uint64_t len)
{
	uint64_t off;

	/* RFC 5041 §7: TO wrap if TO + len > 2^64 */
	if (len > 0 && to > UINT64_MAX - (len - 1))
		return IWARP_ERR_DDP_TO_WRAP;
	/* RFC 5040 §8.1 / RFC 5041 §7: base and bounds */
	if (to < base)
		return IWARP_ERR_DDP_BOUNDS;
	off = to - base;
	if (off > buf_len || len > buf_len - off)
		return IWARP_ERR_DDP_BOUNDS;
	return 0;
}

int ddp_tagged_check(const struct ddp_hdr *h, uint32_t len,
		     const struct ddp_tagged_buf *buf)
{
	int rc;

	if (!h->tagged)
		return -EINVAL;
	rc = ddp_hdr_check(h);
	if (rc < 0)
		return rc;
	if (!buf)
		return IWARP_ERR_DDP_STAG;
	switch (buf->state) {
	case DDP_STAG_VALID:
		break;
	case DDP_STAG_INVALID:
		return IWARP_ERR_DDP_STAG;
	case DDP_STAG_NOT_ASSOC:
		return IWARP_ERR_DDP_STAG_STREAM;
	default:
		return IWARP_ERR_DDP_STAG;
	}
	return ddp_tagged_bounds(buf->base, buf->len, h->to, len);
}

int ddp_rx_tagged(struct ddp_rx *rx, const struct ddp_hdr *h, uint32_t len,
		  const struct ddp_tagged_buf *buf, struct ddp_rx_seg *out)
{
	struct ddp_rx_tagged_ctx *t = &rx->tagged;
	int rc;

	rc = ddp_tagged_check(h, len, buf);
	if (rc < 0)
		return rc;
	/* segments of one message arrive in order, TO advancing (§4.3) */
	if (t->in_msg && (h->stag != t->stag || h->to != t->next_to))
		return -EPROTO;

	out->offset = h->to - buf->base;
	out->len = len;
	out->first = !t->in_msg;
	out->complete = h->last;
	out->msg_len = 0;
	if (!t->in_msg) {
		t->in_msg = true;
		t->stag = h->stag;
		t->bytes = 0;
	}
	t->bytes += len;
	t->next_to = h->to + len;
	if (h->last) {
		out->msg_len = t->bytes;
		memset(t, 0, sizeof(*t));
	}
	return 0;
}
