/*
 * mpa/mpa_negotiate.c: MPA connection setup for both roles (RFC 5044 §7.1,
 * RFC 6581). See mpa_negotiate.h for the interop decisions.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "iwarp/iwarp.h"
#include "mpa/mpa_negotiate.h"

/* RFC 6581 §5: RTR preference of the responder (siw picks Write first). */
static const enum mpa_rtr rtr_preference[] = {
	MPA_RTR_WRITE,
	MPA_RTR_READ,
	MPA_RTR_SEND,
};

static uint16_t min_u16(uint16_t a, uint16_t b)
{
	return a < b ? a : b;
}

/* True when |set| has exactly one RTR bit. */
static bool rtr_is_single(unsigned int set)
{
	return set == MPA_RTR_SEND || set == MPA_RTR_WRITE ||
	       set == MPA_RTR_READ;
}

void mpa_neg_params_init(struct mpa_neg_params *p)
{
	memset(p, 0, sizeof(*p));
	p->rev = MPA_REV_2;
	p->crc = MPA_CRC_REQUEST;
	p->markers_rx = false;
	p->p2p = false;
	p->p2p_optional = false;
	p->rtr_mask = MPA_RTR_WRITE | MPA_RTR_READ;
	p->ird = MPA_NEG_IRD_ORD_MAX;
	p->ord = MPA_NEG_IRD_ORD_MAX;
	p->max_pd = MPA_RR_PD_MAX;
	p->strict_ird = false;
}

int mpa_neg_params_check(const struct mpa_neg_params *p)
{
	if (p->rev != MPA_REV_1 && p->rev != MPA_REV_2)
		return -EINVAL;
	switch (p->crc) {
	case MPA_CRC_OFF:
	case MPA_CRC_REQUEST:
	case MPA_CRC_REQUIRE:
		break;
	default:
		return -EINVAL;
	}
	if ((p->rtr_mask & ~MPA_RTR_ALL) || p->ird > MPA_NEG_IRD_ORD_MAX ||
	    p->ord > MPA_NEG_IRD_ORD_MAX || p->max_pd > MPA_RR_PD_MAX)
		return -EINVAL;
	/* RFC 6581 §5: A and the RTR bits live in the enhanced header. */
	if (p->p2p && (p->rev != MPA_REV_2 || p->rtr_mask == 0))
		return -EINVAL;
	return 0;
}

/*
 * RFC 6581 §7 (cxgb3 96ac7e88, siw): the ORD an initiator advertises. When
 * the offered RTR set includes Read, the Read RTR takes one outbound Read
 * slot, so the Request says ORD >= 1 whatever the ULP asked for: the
 * responder sizes its IRD from our ORD (siw answers IRD = min(ORD, 128))
 * and refuses a Read RTR with IRD 0.
 */
static uint16_t neg_request_ord(const struct mpa_neg_params *p)
{
	if (p->p2p && (p->rtr_mask & MPA_RTR_READ) && p->ord == 0)
		return 1;
	return p->ord;
}

int mpa_neg_request_encode(const struct mpa_neg_params *p,
			   const uint8_t *ulp_pd, size_t ulp_len, uint8_t *out,
			   size_t cap)
{
	struct mpa_rr rr;

	if (mpa_neg_params_check(p))
		return -EINVAL;
	memset(&rr, 0, sizeof(rr));
	rr.kind = MPA_RR_REQUEST;
	rr.m = p->markers_rx; /* RFC 5044 §7.1: M asks for markers toward us */
	rr.c = p->crc != MPA_CRC_OFF;
	rr.rev = p->rev;
	rr.enhanced = p->rev == MPA_REV_2;
	if (rr.enhanced) {
		/* RFC 6581 §5: our IRD and ORD, A and the offered RTR set. */
		rr.ird = p->ird;
		rr.ord = neg_request_ord(p);
		rr.p2p = p->p2p;
		rr.rtr = p->p2p ? p->rtr_mask : MPA_RTR_NONE;
	}
	if (p->rdmap_ext)
		rr.rsvd |= MPA_RR_FLAG_RDMAP_EXT;
	rr.pdata = ulp_pd;
	rr.pdata_len = ulp_len;
	return mpa_rr_encode(out, cap, &rr);
}

/* Fills the parts of |res| common to both roles from the peer frame. */
static void neg_result_init(struct mpa_neg_result *res,
			    const struct mpa_rr *peer)
{
	memset(res, 0, sizeof(*res));
	res->peer = *peer;
	res->peer_pdata = peer->pdata;
	res->peer_pdata_len = peer->pdata_len;
	res->rev = peer->rev;
	res->rtr = MPA_RTR_NONE;
}

int mpa_neg_initiator_process(const struct mpa_neg_params *p,
			      const uint8_t *buf, size_t len,
			      struct mpa_neg_result *res)
{
	struct mpa_rr rep;
	bool enhanced = p->rev == MPA_REV_2;
	uint16_t ord = neg_request_ord(p);
	int n;

	if (mpa_neg_params_check(p))
		return -EINVAL;
	n = mpa_rr_decode(&rep, buf, len, MPA_RR_DECODE_LAX);
	if (n < 0)
		return n;
	neg_result_init(res, &rep);
	if (rep.kind != MPA_RR_REPLY)
		return IWARP_ERR_MPA_KEY;
	if (rep.pd_length > p->max_pd)
		return IWARP_ERR_MPA_PD_LENGTH;
	/* RFC 5044 §7.1: R=1 rejects; its private data goes to the ULP. */
	if (rep.r)
		return IWARP_ERR_MPA_REJECTED;
	/*
	 * RFC 6581 §5: an enhanced Request gets a rev 2 enhanced Reply; a
	 * rev 1 Request a rev 1 (or pre-RFC rev 0) Reply.
	 */
	if (enhanced ? !rep.enhanced : rep.rev > p->rev)
		return IWARP_ERR_MPA_REQ_REP;

	/* RFC 5044 §7.1: CRC if either frame has C=1. */
	if (p->crc == MPA_CRC_REQUIRE && !rep.c)
		return IWARP_ERR_MPA_CRC_REQUIRED;
	res->crc = rep.c || p->crc != MPA_CRC_OFF;
	/* RFC 5044 §7.1: the Reply's M asks us to insert markers. */
	res->markers_tx = rep.m;
	res->markers_rx = p->markers_rx;
	res->enhanced = rep.enhanced;
	res->ird = p->ird;
	res->ord = ord;
	/* both frames carry the RFC 7306 offer (a peer echoes it only when
	 * our Request had it) */
	res->rdmap_ext = p->rdmap_ext && (rep.rsvd & MPA_RR_FLAG_RDMAP_EXT);
	if (!rep.enhanced)
		return n;

	/* RFC 6581 §5: our ORD <= peer IRD, peer ORD <= our IRD. */
	if (p->strict_ird && (rep.ird < ord || rep.ord > p->ird))
		return IWARP_ERR_MPA_IRD;
	res->ord = min_u16(ord, rep.ird);
	res->ird = min_u16(p->ird, rep.ord);

	if (!p->p2p)
		return n; /* A/RTR bits we did not ask for are ignored */
	/*
	 * IWARP_P2P_AUTO offered an RTR only so that a responder may send
	 * first; a responder that does not echo A runs the client-server
	 * model (RFC 5044 §7.1: we send first anyway), so that is no error.
	 */
	if (!rep.p2p && p->p2p_optional)
		return n;
	/* RFC 6581 §9.2: A echoed, exactly one of the offered RTR types. */
	if (!rep.p2p || !rtr_is_single(rep.rtr) || !(rep.rtr & p->rtr_mask))
		return IWARP_ERR_MPA_RTR;
	res->p2p = true;
	res->rtr = (enum mpa_rtr)rep.rtr;
	/* RFC 6581 §7 (cxgb3 96ac7e88, siw): a Read RTR needs ORD >= 1. */
	if (res->rtr == MPA_RTR_READ && res->ord == 0)
		res->ord = 1;
	return n;
}

/*
 * RFC 6581 §9.2: the one RTR type the responder picks from |offered|
 * (all locally acceptable types when the Request named none), or
 * MPA_RTR_NONE. A Read RTR needs local IRD >= 1.
 */
static enum mpa_rtr neg_choose_rtr(const struct mpa_neg_params *p,
				   unsigned int offered)
{
	unsigned int cand = offered ? offered & p->rtr_mask : p->rtr_mask;
	size_t i;

	if (p->ird == 0)
		cand &= ~(unsigned int)MPA_RTR_READ;
	for (i = 0; i < sizeof(rtr_preference) / sizeof(rtr_preference[0]); i++)
		if (cand & (unsigned int)rtr_preference[i])
			return rtr_preference[i];
	return MPA_RTR_NONE;
}

int mpa_neg_responder_process(const struct mpa_neg_params *p,
			      const uint8_t *buf, size_t len,
			      struct mpa_neg_result *res,
			      struct mpa_neg_reply *reply)
{
	struct mpa_rr *rep = &reply->rr;
	struct mpa_rr req;
	enum mpa_rtr rtr;
	int n;

	memset(reply, 0, sizeof(*reply));
	if (mpa_neg_params_check(p))
		return -EINVAL;
	rep->kind = MPA_RR_REPLY;
	n = mpa_rr_decode(&req, buf, len, MPA_RR_DECODE_LAX);
	if (n == IWARP_ERR_MPA_ENHANCED_PD) {
		/* siw answers `30 02 00 00`; our R=1 Reply is well-formed */
		neg_result_init(res, &req);
		reply->send = true;
		rep->r = true;
		rep->rev = req.rev;
		return n;
	}
	if (n < 0)
		return n;
	neg_result_init(res, &req);
	if (req.kind != MPA_RR_REQUEST)
		return IWARP_ERR_MPA_KEY;

	/* RFC 5044 §7.1 / docs/interop-notes.md §10: answer with the
	 * Request's revision. */
	reply->send = true;
	rep->rev = req.rev;
	rep->enhanced = req.enhanced;
	/* RFC 5044 §7.1: CRC if either side asks; echo the peer's C. */
	rep->c = req.c || p->crc != MPA_CRC_OFF;
	rep->m = p->markers_rx;
	res->crc = rep->c;
	res->markers_tx = req.m; /* we support markers: honour M (not siw) */
	res->markers_rx = p->markers_rx;
	res->enhanced = req.enhanced;
	res->ird = p->ird;
	res->ord = p->ord;
	if (p->rdmap_ext && (req.rsvd & MPA_RR_FLAG_RDMAP_EXT)) {
		rep->rsvd |= MPA_RR_FLAG_RDMAP_EXT;
		res->rdmap_ext = true;
	}

	if (req.pd_length > p->max_pd) {
		rep->r = true;
		return IWARP_ERR_MPA_PD_LENGTH;
	}
	if (!req.enhanced)
		return n;

	/* RFC 6581 §5: our IRD covers the peer's ORD, our ORD its IRD. */
	res->ird = min_u16(p->ird, req.ord);
	res->ord = min_u16(p->ord, req.ird);
	if (req.p2p) {
		/* RFC 6581 §9.2: echo A, choose exactly one RTR type. */
		rep->p2p = true;
		rtr = neg_choose_rtr(p, req.rtr);
		if (rtr == MPA_RTR_NONE) {
			rep->r = true;
			return IWARP_ERR_MPA_RTR;
		}
		rep->rtr = (uint8_t)rtr;
		res->p2p = true;
		res->rtr = rtr;
		/* RFC 6581 §7: the Read RTR needs one inbound Read slot. */
		if (rtr == MPA_RTR_READ && res->ird == 0)
			res->ird = 1;
	}
	rep->ird = res->ird;
	rep->ord = res->ord;
	if (p->strict_ird && req.ord > p->ird) {
		rep->r = true;
		return IWARP_ERR_MPA_IRD;
	}
	return n;
}

int mpa_neg_reply_encode(const struct mpa_neg_reply *reply,
			 const uint8_t *ulp_pd, size_t ulp_len, uint8_t *out,
			 size_t cap)
{
	struct mpa_rr rr;

	if (!reply->send)
		return -EINVAL;
	rr = reply->rr;
	rr.pdata = ulp_pd;
	rr.pdata_len = ulp_len;
	return mpa_rr_encode(out, cap, &rr);
}

int mpa_neg_error_llp_ecode(int err)
{
	switch (err) {
	case IWARP_ERR_MPA_IRD:
		return IWARP_LLP_ECODE_INSUFFICIENT_IRD;
	case IWARP_ERR_MPA_RTR:
		return IWARP_LLP_ECODE_NO_MATCHING_RTR;
	case IWARP_ERR_MPA_KEY:
	case IWARP_ERR_MPA_REV:
	case IWARP_ERR_MPA_PD_LENGTH:
	case IWARP_ERR_MPA_ENHANCED_PD:
	case IWARP_ERR_MPA_RESERVED:
	case IWARP_ERR_MPA_MARKERS:
	case IWARP_ERR_MPA_CRC_REQUIRED:
	case IWARP_ERR_MPA_REQ_REP:
		return IWARP_LLP_ECODE_INVALID_REQ_REP;
	default:
		return -EINVAL;
	}
}

int mpa_rtr_msg_get(enum mpa_rtr rtr, struct mpa_rtr_msg *m)
{
	memset(m, 0, sizeof(*m));
	/* never STag 0 in an RTR (docs/interop-notes.md §0.3); TO 0, len 0 */
	switch (rtr) {
	case MPA_RTR_WRITE:
		m->rdmap_opcode = 0x0; /* RDMA Write, RFC 5040 §4.3 */
		m->tagged = true;
		m->stag = MPA_RTR_STAG;
		return 0;
	case MPA_RTR_READ:
		m->rdmap_opcode = 0x1; /* RDMA Read Request on QN 1 */
		m->stag = MPA_RTR_STAG;
		m->sink_stag = MPA_RTR_STAG;
		m->uses_ord = true;
		return 0;
	case MPA_RTR_SEND:
		m->rdmap_opcode = 0x3; /* Send on QN 0 */
		return 0;
	case MPA_RTR_NONE:
	default:
		return -EINVAL;
	}
}

const char *mpa_rtr_name(enum mpa_rtr rtr)
{
	switch (rtr) {
	case MPA_RTR_NONE:
		return "none";
	case MPA_RTR_SEND:
		return "send";
	case MPA_RTR_WRITE:
		return "write";
	case MPA_RTR_READ:
		return "read";
	default:
		return "invalid";
	}
}
