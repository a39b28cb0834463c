/*
 * cm/cm_mpa.c: MPA connection setup state machine (RFC 5044 §7.1,
 * RFC 6581). See cm_mpa.h.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "cm/cm_mpa.h"
#include "iwarp/iwarp.h"

int cm_mpa_init(struct cm_mpa *m, enum cm_mpa_role role,
		const struct mpa_neg_params *p, uint64_t now_ms,
		uint32_t timeout_ms)
{
	if (mpa_neg_params_check(p))
		return -EINVAL;
	if (role != CM_MPA_INITIATOR && role != CM_MPA_RESPONDER)
		return -EINVAL;
	memset(m, 0, offsetof(struct cm_mpa, rx));
	m->role = role;
	m->params = *p;
	if (role == CM_MPA_RESPONDER) {
		m->state = CM_MPA_S_WAIT_REQ;
		if (timeout_ms)
			m->deadline_ms = now_ms + timeout_ms;
	} else {
		m->state = CM_MPA_S_IDLE;
	}
	return 0;
}

/* Largest ULP private data a frame of ours may carry. */
static size_t mpa_ulp_max(const struct cm_mpa *m, bool enhanced)
{
	size_t max = m->params.max_pd;

	/* RFC 6581 §5: the IRD/ORD octets count in PD_Length. */
	if (enhanced)
		return max >= MPA_RR_IRD_ORD_LEN ? max - MPA_RR_IRD_ORD_LEN : 0;
	return max;
}

int cm_mpa_start(struct cm_mpa *m, const uint8_t *pd, size_t len,
		 uint64_t now_ms, uint32_t timeout_ms)
{
	int n;

	if (m->role != CM_MPA_INITIATOR || m->state != CM_MPA_S_IDLE)
		return -EINVAL;
	if (len > mpa_ulp_max(m, m->params.rev == MPA_REV_2))
		return -EINVAL;
	n = mpa_neg_request_encode(&m->params, pd, len, m->tx, sizeof(m->tx));
	if (n < 0)
		return n == -ENOSPC ? -EINVAL : n;
	m->tx_len = (size_t)n;
	m->tx_off = 0;
	m->state = CM_MPA_S_WAIT_REP;
	m->deadline_ms = timeout_ms ? now_ms + timeout_ms : 0;
	return 0;
}

size_t cm_mpa_rx_space(struct cm_mpa *m, uint8_t **buf)
{
	switch (m->state) {
	case CM_MPA_S_WAIT_REP:
	case CM_MPA_S_WAIT_REQ:
	case CM_MPA_S_REQ_RCVD:
	case CM_MPA_S_ESTABLISHED:
		break;
	case CM_MPA_S_IDLE:
	case CM_MPA_S_REJECTED:
	case CM_MPA_S_FAILED:
	default:
		return 0;
	}
	*buf = m->rx + m->rx_len;
	return sizeof(m->rx) - m->rx_len;
}

/* Enters FAILED (or REJECTED for an R=1 Reply) with |err|; returns it. */
static int mpa_fail(struct cm_mpa *m, int err)
{
	m->state = err == IWARP_ERR_MPA_REJECTED ? CM_MPA_S_REJECTED
						 : CM_MPA_S_FAILED;
	m->err = err;
	m->deadline_ms = 0;
	return err;
}

/* The peer's frame is complete at rx[0..n): negotiate (both roles). */
static int mpa_frame_done(struct cm_mpa *m, size_t n)
{
	int rc;

	m->frame_len = n;
	m->deadline_ms = 0;
	if (m->role == CM_MPA_INITIATOR) {
		rc = mpa_neg_initiator_process(&m->params, m->rx, n, &m->res);
		if (rc < 0)
			return mpa_fail(m, rc);
		m->state = CM_MPA_S_ESTABLISHED;
		return CM_MPA_DONE;
	}
	rc = mpa_neg_responder_process(&m->params, m->rx, n, &m->res,
				       &m->reply);
	if (rc < 0) {
		/* RFC 5044 §7.1: refuse with R=1 where a Reply is due; no
		 * ULP private data (the ULP never saw this Request). */
		if (m->reply.send) {
			int len = mpa_neg_reply_encode(&m->reply, NULL, 0,
						       m->tx, sizeof(m->tx));

			if (len > 0) {
				m->tx_len = (size_t)len;
				m->tx_off = 0;
			}
		}
		return mpa_fail(m, rc);
	}
	m->state = CM_MPA_S_REQ_RCVD;
	return CM_MPA_DONE;
}

int cm_mpa_rx_done(struct cm_mpa *m, size_t n)
{
	int len;

	if (m->state == CM_MPA_S_FAILED || m->state == CM_MPA_S_REJECTED)
		return m->err;
	if (m->state == CM_MPA_S_IDLE || n > sizeof(m->rx) - m->rx_len)
		return -EINVAL;
	m->rx_len += n;
	if (m->state != CM_MPA_S_WAIT_REP && m->state != CM_MPA_S_WAIT_REQ)
		return CM_MPA_NEED_MORE; /* carry for the datapath */
	/*
	 * RFC 5044 §7.1: the Key is checked octet by octet as it arrives, so
	 * a peer that is not speaking MPA is refused at its first wrong octet.
	 */
	len = mpa_rr_peek(m->rx, m->rx_len);
	if (len == IWARP_ERR_TRUNCATED)
		return CM_MPA_NEED_MORE;
	if (len < 0)
		return mpa_fail(m, len);
	if ((size_t)len > m->rx_len)
		return CM_MPA_NEED_MORE;
	return mpa_frame_done(m, (size_t)len);
}

int cm_mpa_feed(struct cm_mpa *m, const uint8_t *buf, size_t len)
{
	uint8_t *dst;
	size_t room, k;
	int rc = CM_MPA_NEED_MORE, r;

	while (len) {
		room = cm_mpa_rx_space(m, &dst);
		if (!room)
			return m->state == CM_MPA_S_FAILED ||
					       m->state == CM_MPA_S_REJECTED
				       ? m->err
				       : -ENOSPC;
		k = len < room ? len : room;
		memcpy(dst, buf, k);
		r = cm_mpa_rx_done(m, k);
		if (r < 0)
			return r;
		if (r == CM_MPA_DONE)
			rc = CM_MPA_DONE;
		buf += k;
		len -= k;
	}
	return rc;
}

static uint16_t clamp_u16(int v, uint16_t max)
{
	if (v < 0)
		return 0;
	return v > (int)max ? max : (uint16_t)v;
}

int cm_mpa_accept(struct cm_mpa *m, const uint8_t *pd, size_t len, int ird,
		  int ord)
{
	struct mpa_rr *rr = &m->reply.rr;
	uint16_t i = m->res.ird, o = m->res.ord;
	int n;

	if (m->role != CM_MPA_RESPONDER || m->state != CM_MPA_S_REQ_RCVD)
		return -EINVAL;
	if (len > mpa_ulp_max(m, rr->enhanced))
		return -EINVAL;
	if (ird >= 0)
		i = clamp_u16(ird, MPA_NEG_IRD_ORD_MAX);
	if (ord >= 0)
		o = clamp_u16(ord, MPA_NEG_IRD_ORD_MAX);
	if (rr->enhanced) {
		/* RFC 6581 §5: our ORD must not exceed the peer's IRD. */
		if (o > m->res.peer.ird)
			o = m->res.peer.ird;
		/* RFC 6581 §7: a Read RTR takes one of our IRD slots. */
		if (m->res.rtr == MPA_RTR_READ && i == 0)
			i = 1;
		rr->ird = i;
		rr->ord = o;
	}
	n = mpa_neg_reply_encode(&m->reply, pd, len, m->tx, sizeof(m->tx));
	if (n < 0)
		return -EINVAL;
	m->res.ird = i;
	m->res.ord = o;
	m->tx_len = (size_t)n;
	m->tx_off = 0;
	m->state = CM_MPA_S_ESTABLISHED;
	return 0;
}

int cm_mpa_reject(struct cm_mpa *m, const uint8_t *pd, size_t len)
{
	int n;

	if (m->role != CM_MPA_RESPONDER || m->state != CM_MPA_S_REQ_RCVD)
		return -EINVAL;
	if (len > mpa_ulp_max(m, m->reply.rr.enhanced))
		return -EINVAL;
	m->reply.rr.r = true; /* RFC 5044 §7.1: R=1 rejects the connection */
	n = mpa_neg_reply_encode(&m->reply, pd, len, m->tx, sizeof(m->tx));
	if (n < 0) {
		m->reply.rr.r = false;
		return -EINVAL;
	}
	m->tx_len = (size_t)n;
	m->tx_off = 0;
	m->state = CM_MPA_S_REJECTED;
	m->err = IWARP_ERR_MPA_REJECTED;
	return 0;
}

size_t cm_mpa_tx_peek(const struct cm_mpa *m, const uint8_t **buf)
{
	*buf = m->tx + m->tx_off;
	return m->tx_len - m->tx_off;
}

void cm_mpa_tx_done(struct cm_mpa *m, size_t n)
{
	size_t left = m->tx_len - m->tx_off;

	m->tx_off += n < left ? n : left;
}

uint64_t cm_mpa_deadline(const struct cm_mpa *m)
{
	return m->deadline_ms;
}

int cm_mpa_timeout(struct cm_mpa *m, uint64_t now_ms)
{
	if (m->state != CM_MPA_S_WAIT_REP && m->state != CM_MPA_S_WAIT_REQ)
		return 0;
	if (!m->deadline_ms || now_ms < m->deadline_ms)
		return 0;
	return mpa_fail(m, -ETIMEDOUT);
}

const uint8_t *cm_mpa_peer_pdata(const struct cm_mpa *m, size_t *len)
{
	if (!m->frame_len) {
		*len = 0;
		return NULL;
	}
	*len = m->res.peer_pdata_len;
	return m->res.peer_pdata;
}

const uint8_t *cm_mpa_carry(const struct cm_mpa *m, size_t *len)
{
	if (!m->frame_len || m->rx_len <= m->frame_len) {
		*len = 0;
		return NULL;
	}
	*len = m->rx_len - m->frame_len;
	return m->rx + m->frame_len;
}
