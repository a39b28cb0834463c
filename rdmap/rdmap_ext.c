/* rdmap/rdmap_ext.c: RFC 7306 Atomic Request/Response codecs and the
 * atomic operations' semantics. */
#include "config.h"

#include "rdmap/rdmap_ext.h"

#include "iwarp/iwarp.h"
#include "util/bytes.h"

size_t rdmap_atomic_req_encode(uint8_t *out, const struct rdmap_atomic_req *r)
{
	uint8_t *p = out;

	/* RFC 7306 §5.2.1: 28 reserved bits, then the 4-bit opcode */
	p = iw_put_u32be(p, r->op & RDMAP_ATOMIC_OP_MASK);
	p = iw_put_u32be(p, r->req_id);
	p = iw_put_u32be(p, r->stag);
	p = iw_put_u64be(p, r->to);
	p = iw_put_u64be(p, r->add_swap);
	p = iw_put_u64be(p, r->add_swap_mask);
	p = iw_put_u64be(p, r->cmp);
	p = iw_put_u64be(p, r->cmp_mask);
	return (size_t)(p - out);
}

int rdmap_atomic_req_decode(struct rdmap_atomic_req *r, const uint8_t *buf,
			    size_t len)
{
	if (len < RDMAP_ATOMIC_REQ_LEN)
		return IWARP_ERR_TRUNCATED;
	r->op = (uint8_t)(iw_get_u32be(buf) & RDMAP_ATOMIC_OP_MASK);
	r->req_id = iw_get_u32be(buf + 4);
	r->stag = iw_get_u32be(buf + 8);
	r->to = iw_get_u64be(buf + 12);
	r->add_swap = iw_get_u64be(buf + 20);
	r->add_swap_mask = iw_get_u64be(buf + 28);
	r->cmp = iw_get_u64be(buf + 36);
	r->cmp_mask = iw_get_u64be(buf + 44);
	return RDMAP_ATOMIC_REQ_LEN;
}

size_t rdmap_atomic_resp_encode(uint8_t *out, const struct rdmap_atomic_resp *r)
{
	uint8_t *p = out;

	p = iw_put_u32be(p, r->req_id);
	p = iw_put_u64be(p, r->orig);
	return (size_t)(p - out);
}

int rdmap_atomic_resp_decode(struct rdmap_atomic_resp *r, const uint8_t *buf,
			     size_t len)
{
	if (len < RDMAP_ATOMIC_RESP_LEN)
		return IWARP_ERR_TRUNCATED;
	r->req_id = iw_get_u32be(buf);
	r->orig = iw_get_u64be(buf + 4);
	return RDMAP_ATOMIC_RESP_LEN;
}

/* Field-wise add: a set bit of |mask| ends a field (no carry out of it). */
static uint64_t masked_add(uint64_t a, uint64_t b, uint64_t mask)
{
	uint64_t sum = 0, carry = 0, bit, s;
	unsigned int i;

	if (!mask)
		return a + b;
	for (i = 0; i < 64; i++) {
		bit = 1ull << i;
		s = ((a & bit) ? 1u : 0u) + ((b & bit) ? 1u : 0u) + carry;
		if (s & 1u)
			sum |= bit;
		carry = (mask & bit) ? 0u : s >> 1;
	}
	return sum;
}

uint64_t rdmap_atomic_apply(const struct rdmap_atomic_req *r, uint64_t orig)
{
	uint64_t m = r->add_swap_mask;

	switch (r->op) {
	case RDMAP_ATOMIC_FETCH_ADD:
		return masked_add(orig, r->add_swap, m);
	case RDMAP_ATOMIC_SWAP:
		return (orig & ~m) | (r->add_swap & m);
	case RDMAP_ATOMIC_CMP_SWAP:
		if ((orig ^ r->cmp) & r->cmp_mask)
			return orig;
		return (orig & ~m) | (r->add_swap & m);
	default:
		return orig;
	}
}

int rdmap_atomic_op_valid(uint8_t op)
{
	return op == RDMAP_ATOMIC_FETCH_ADD || op == RDMAP_ATOMIC_SWAP ||
	       op == RDMAP_ATOMIC_CMP_SWAP;
}

uint64_t rdmap_atomic_exec(const struct rdmap_atomic_req *r, uint64_t *target)
{
	uint64_t old, val;

	if (r->op == RDMAP_ATOMIC_FETCH_ADD && !r->add_swap_mask)
		return __atomic_fetch_add(target, r->add_swap,
					  __ATOMIC_SEQ_CST);
	old = __atomic_load_n(target, __ATOMIC_SEQ_CST);
	do {
		val = rdmap_atomic_apply(r, old);
		if (val == old)
			break; /* compare failed, or nothing changes */
	} while (!__atomic_compare_exchange_n(
		target, &old, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	return old;
}
