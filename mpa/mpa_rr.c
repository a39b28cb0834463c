/* mpa/mpa_rr.c: MPA Request/Reply codec (RFC 5044 §7.1, RFC 6581 §5). */
#include "config.h"

#include <errno.h>

#include "iwarp/iwarp.h"
#include "mpa/mpa_rr.h"
#include "util/bytes.h"

/* RFC 5044 §7.1: the two keys differ only in octet 9 ('q' / 'p'). */
static const uint8_t mpa_key_req[MPA_RR_KEY_LEN] = "MPA ID Req Frame";
static const uint8_t mpa_key_rep[MPA_RR_KEY_LEN] = "MPA ID Rep Frame";

/*
 * Checks the |len| (<= 16) Key octets present. Returns 1 for a Request key
 * prefix, 2 for a Reply key prefix, 3 when both still match (the first 9
 * octets), 0 when neither matches.
 */
static int rr_key_match(const uint8_t *buf, size_t len)
{
	int match = 3;
	size_t i;

	if (len > MPA_RR_KEY_LEN)
		len = MPA_RR_KEY_LEN;
	for (i = 0; i < len; i++) {
		if (buf[i] != mpa_key_req[i])
			match &= ~1;
		if (buf[i] != mpa_key_rep[i])
			match &= ~2;
	}
	return match;
}

int mpa_rr_peek(const uint8_t *buf, size_t len)
{
	uint16_t pd_length;

	if (rr_key_match(buf, len) == 0)
		return IWARP_ERR_MPA_KEY;
	if (len < MPA_RR_HDR_LEN)
		return IWARP_ERR_TRUNCATED;
	pd_length = iw_get_u16be(buf + 18);
	if (pd_length > MPA_RR_PD_MAX)
		return IWARP_ERR_MPA_PD_LENGTH;
	return MPA_RR_HDR_LEN + pd_length;
}

/* The reserved bits of a frame of revision |rev|. */
static uint8_t rr_rsvd_mask(uint8_t rev)
{
	return rev == MPA_REV_2 ? MPA_RR_RSVD_MASK_V2 : MPA_RR_RSVD_MASK;
}

int mpa_rr_decode(struct mpa_rr *rr, const uint8_t *buf, size_t len,
		  unsigned int flags)
{
	bool lax = (flags & MPA_RR_DECODE_LAX) != 0;
	size_t total;
	uint8_t f;
	uint16_t w;
	int key;

	key = rr_key_match(buf, len);
	if (key == 0)
		return IWARP_ERR_MPA_KEY;
	if (len < MPA_RR_HDR_LEN)
		return IWARP_ERR_TRUNCATED;

	f = buf[16];
	rr->kind = key == 1 ? MPA_RR_REQUEST : MPA_RR_REPLY;
	rr->m = (f & MPA_RR_FLAG_M) != 0;
	rr->c = (f & MPA_RR_FLAG_C) != 0;
	rr->r = (f & MPA_RR_FLAG_R) != 0;
	rr->rev = buf[17];
	rr->pd_length = iw_get_u16be(buf + 18);
	/* RFC 6581 §5: Enhanced needs Rev 2; rev 2 without it is RFC 5044. */
	rr->enhanced = rr->rev == MPA_REV_2 && (f & MPA_RR_FLAG_ENHANCED);
	rr->rsvd = (uint8_t)(f & rr_rsvd_mask(rr->rev));
	rr->has_ird_ord = false;
	rr->p2p = false;
	rr->rtr = MPA_RTR_NONE;
	rr->ird = 0;
	rr->ord = 0;
	rr->pdata = NULL;
	rr->pdata_len = 0;

	/* RFC 5044 §7.1: this version knows revisions up to 2 (RFC 6581). */
	if (rr->rev > MPA_REV_2)
		return IWARP_ERR_MPA_REV;
	if (rr->pd_length > MPA_RR_PD_MAX)
		return IWARP_ERR_MPA_PD_LENGTH;
	/* RFC 5044 §7.1: R is only meaningful in a Reply. */
	if (rr->r && rr->kind == MPA_RR_REQUEST)
		return IWARP_ERR_MPA_REQ_REP;
	/* RFC 6581 §5: the IRD/ORD words are part of PD_Length. */
	if (rr->enhanced && rr->pd_length < MPA_RR_IRD_ORD_LEN &&
	    !(lax && rr->r))
		return IWARP_ERR_MPA_ENHANCED_PD;
	if (rr->rsvd && !lax)
		return IWARP_ERR_MPA_RESERVED;

	total = MPA_RR_HDR_LEN + (size_t)rr->pd_length;
	if (len < total)
		return IWARP_ERR_TRUNCATED;

	rr->pdata = buf + MPA_RR_HDR_LEN;
	rr->pdata_len = rr->pd_length;
	if (rr->enhanced && rr->pd_length >= MPA_RR_IRD_ORD_LEN) {
		rr->has_ird_ord = true;
		w = iw_get_u16be(buf + MPA_RR_HDR_LEN);
		rr->p2p = (w & MPA_IRD_A) != 0;
		if (w & MPA_IRD_B)
			rr->rtr |= MPA_RTR_SEND;
		rr->ird = (uint16_t)(w & MPA_IRD_ORD_MASK);
		w = iw_get_u16be(buf + MPA_RR_HDR_LEN + 2);
		if (w & MPA_ORD_C)
			rr->rtr |= MPA_RTR_WRITE;
		if (w & MPA_ORD_D)
			rr->rtr |= MPA_RTR_READ;
		rr->ord = (uint16_t)(w & MPA_IRD_ORD_MASK);
		rr->pdata += MPA_RR_IRD_ORD_LEN;
		rr->pdata_len -= MPA_RR_IRD_ORD_LEN;
	}
	if (rr->pdata_len == 0)
		rr->pdata = NULL;
	return (int)total;
}

size_t mpa_rr_encoded_len(const struct mpa_rr *rr)
{
	size_t n = MPA_RR_HDR_LEN + rr->pdata_len;

	return rr->enhanced ? n + MPA_RR_IRD_ORD_LEN : n;
}

int mpa_rr_encode(uint8_t *out, size_t cap, const struct mpa_rr *rr)
{
	size_t pd_len = rr->pdata_len;
	size_t total;
	uint16_t w;
	uint8_t f;
	uint8_t *p;

	if (rr->enhanced) {
		if (rr->rev != MPA_REV_2 || rr->ird > MPA_IRD_ORD_MASK ||
		    rr->ord > MPA_IRD_ORD_MASK || (rr->rtr & ~MPA_RTR_ALL))
			return -EINVAL;
		pd_len += MPA_RR_IRD_ORD_LEN;
	}
	if (pd_len > MPA_RR_PD_MAX || (rr->pdata_len && !rr->pdata))
		return -EINVAL;
	if (rr->rsvd & ~rr_rsvd_mask(rr->rev))
		return -EINVAL;
	if (rr->r && rr->kind == MPA_RR_REQUEST)
		return -EINVAL;
	total = MPA_RR_HDR_LEN + pd_len;
	if (cap < total)
		return -ENOSPC;

	f = rr->rsvd;
	if (rr->m)
		f |= MPA_RR_FLAG_M;
	if (rr->c)
		f |= MPA_RR_FLAG_C;
	if (rr->r)
		f |= MPA_RR_FLAG_R;
	if (rr->enhanced)
		f |= MPA_RR_FLAG_ENHANCED;

	p = iw_put_bytes(out,
			 rr->kind == MPA_RR_REQUEST ? mpa_key_req : mpa_key_rep,
			 MPA_RR_KEY_LEN);
	p = iw_put_u8(p, f);
	p = iw_put_u8(p, rr->rev);
	p = iw_put_u16be(p, (uint16_t)pd_len);
	if (rr->enhanced) {
		w = rr->ird;
		if (rr->p2p)
			w |= MPA_IRD_A;
		if (rr->rtr & MPA_RTR_SEND)
			w |= MPA_IRD_B;
		p = iw_put_u16be(p, w);
		w = rr->ord;
		if (rr->rtr & MPA_RTR_WRITE)
			w |= MPA_ORD_C;
		if (rr->rtr & MPA_RTR_READ)
			w |= MPA_ORD_D;
		p = iw_put_u16be(p, w);
	}
	if (rr->pdata_len)
		iw_put_bytes(p, rr->pdata, rr->pdata_len);
	return (int)total;
}
