/*
 * fuzz/fuzz_conn.c: arbitrary octets into an established RDMAP engine
 * (rdmap/rdmap_conn.h) behind the fake owner of tests/rdmap_fake.h.
 *
 * Input: octet 0 selects the framing and role (bit 0 CRC, bit 1 markers,
 * bit 2 initiator, bits 3-4 the RFC 6581 RTR (none, Send, Write, Read),
 * bit 5 a large fpdu_max, bit 6 the first chunk through rx_prefill, bit 7
 * revoke region 0x100 part way); octet 1 seeds the chunk sizes, its bit 7
 * also turns the RFC 7306 extensions on (region 0x100 then allows remote
 * atomics too); the rest is the stream. Seeds select CRC off (the CRC field is
 * then not checked, RFC 5044 §6; fuzzing builds bypass CRC checks anyway).
 *
 * Regions (STag: TO base, rights): 0x100: 0x100000 local+remote write
 * (Write target, Read Response sink), 0x200: 0x200000 remote read,
 * 0x400: 0x400000 remote write, invalidatable, and 0x300 (local, its
 * real address) for receive WQEs and send payloads. Posted: four receive
 * WQEs of 1024 octets, and a Read (1024 octets from STag 0x77 into
 * 0x101000), a Send and a Write on the SQ.
 *
 * Invariants: no reference leaked after rdmap_conn_destroy, none given
 * back twice, no octet written around a region, set_error and closed at
 * most once.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdmap_fake.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct fk_owner o;

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Takes what the engine offers, accepting a random prefix. */
static void drain(uint32_t *s)
{
	struct iovec iov[64];
	size_t total;
	int n, i, rounds;

	for (rounds = 0; rounds < 64 && o.c; rounds++) {
		n = rdmap_conn_tx_iov(o.c, iov, 64);
		if (n <= 0)
			return;
		for (i = 0, total = 0; i < n; i++)
			total += iov[i].iov_len;
		if (rnd(s) % 4 == 0)
			total = rnd(s) % (total + 1);
		rdmap_conn_tx_done(o.c, total);
		if (!total)
			return;
	}
}

static void check(bool ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum mpa_rtr rtrs[4] = {MPA_RTR_NONE, MPA_RTR_SEND,
					     MPA_RTR_WRITE, MPA_RTR_READ};
	struct rdmap_conn_cfg cfg;
	struct fk_region *rl, *r;
	struct rdmap_wqe *w;
	uint8_t flags, mode;
	uint32_t s;
	size_t chunk, revoke_at, k;
	int i;

	if (size < 2)
		return 0;
	flags = data[0];
	mode = data[1];
	s = 0x9E3779B9u ^ (uint32_t)mode * 0x01000193u;
	data += 2;
	size -= 2;

	fk_init(&o);
	memset(&cfg, 0, sizeof(cfg));
	cfg.crc = flags & 1;
	cfg.markers_tx = cfg.markers_rx = (flags & 2) != 0;
	cfg.initiator = (flags & 4) != 0;
	cfg.rtr = rtrs[(flags >> 3) & 3];
	cfg.p2p = cfg.rtr != MPA_RTR_NONE;
	cfg.ird = 4;
	cfg.ord = 4;
	cfg.fpdu_max = (flags & 0x20) ? 32768 : 0;
	cfg.rdmap_ext = (mode & 0x80) != 0;
	/* bulk octets in memory provided per receive, as the engine does */
	fk_rx_provided = (mode & 0x40) != 0;
	if (!fk_create(&o, &cfg))
		abort();
	/* a Send with no receive WQE may wait for one (resumed or expired
	 * below) */
	rdmap_conn_set_rx_wait(o.c, (mode & 0x20) != 0);
	r = fk_region_add(
		&o, 0x100, 8192,
		IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |
			(cfg.rdmap_ext ? IWARP_ACCESS_REMOTE_ATOMIC : 0),
		0);
	r->base = 0x100000;
	r = fk_region_add(&o, 0x200, 8192, IWARP_ACCESS_REMOTE_READ, 0x22);
	r->base = 0x200000;
	r = fk_region_add(&o, 0x400, 64, IWARP_ACCESS_REMOTE_WRITE, 0);
	r->base = 0x400000;
	r->invalidatable = true;
	rl = fk_region_add(&o, 0x300, 8192, IWARP_ACCESS_LOCAL_WRITE, 0x33);
	check(rl != NULL);
	for (i = 0; i < 4; i++)
		fk_post_recv(&o, 10 + (uint64_t)i, 0x300, rl->buf + 1024 * i,
			     1024);
	w = fk_post_send(&o, 1, IWARP_WR_RDMA_READ, 0, 0x100, NULL, 1024);
	w->sge[0].addr = 0x101000;
	w->rkey = 0x77;
	w->remote_addr = 0x5000;
	fk_post_send(&o, 2, IWARP_WR_SEND, 0, 0x300, rl->buf + 4096, 100);
	w = fk_post_send(&o, 3, IWARP_WR_RDMA_WRITE, 0, 0x300, rl->buf + 5000,
			 200);
	w->rkey = 0x88;
	w->remote_addr = 0x9000;
	rdmap_conn_sq_kick(o.c);
	drain(&s);

	revoke_at = (flags & 0x80) && size ? rnd(&s) % size : SIZE_MAX;
	if ((flags & 0x40) && size) {
		chunk = rnd(&s) % (size + 1);
		if (revoke_at < chunk)
			chunk = revoke_at;
		(void)rdmap_conn_rx_prefill(o.c, data, chunk);
		data += chunk;
		size -= chunk;
		revoke_at -= revoke_at == SIZE_MAX ? 0 : chunk;
		drain(&s);
	}
	while (size > 0 && o.c) {
		switch (rnd(&s) % 4) {
		case 0:
			chunk = 1;
			break;
		case 1:
			chunk = 1 + rnd(&s) % 16;
			break;
		case 2:
			chunk = 1 + rnd(&s) % 2048;
			break;
		default:
			chunk = size;
			break;
		}
		if (chunk > size)
			chunk = size;
		if (revoke_at != SIZE_MAX && revoke_at < chunk && revoke_at)
			chunk = revoke_at;
		k = fk_rx_feed(&o, data, chunk, 1 + rnd(&s) % 4096);
		if (rdmap_conn_rx_waiting(o.c)) {
			/* the octets not taken are read after the wait */
			chunk = k;
			if ((rnd(&s) & 1) && o.rq_head - o.rq_tail < FK_RQ) {
				fk_post_recv(&o, 20, 0x300, rl->buf, 1024);
				rdmap_conn_rx_resume(o.c);
			} else {
				rdmap_conn_rx_wait_expired(o.c);
			}
		}
		data += chunk;
		size -= chunk;
		if (revoke_at != SIZE_MAX) {
			revoke_at -= chunk < revoke_at ? chunk : revoke_at;
			if (revoke_at == 0) {
				/* deregistration: invalid first, then revoke */
				fk_region_find(&o, 0x100)->valid = false;
				if (rdmap_conn_mem_revoke(o.c, 0x100) &&
				    o.cancel_rx)
					fk_rx_done(&o, 0);
				revoke_at = SIZE_MAX;
			}
		}
		drain(&s);
		if (o.c->state == RDMAP_CONN_CLOSED)
			break;
	}
	/* the stream ends: EOF or an error, then the engine drains */
	if (o.c->state != RDMAP_CONN_CLOSED && (rnd(&s) & 1))
		rdmap_conn_closed(o.c, (rnd(&s) & 1) ? 0 : -ECONNRESET);
	drain(&s);
	if (getenv("FUZZ_CONN_VERBOSE"))
		fprintf(stderr,
			"fuzz_conn: flags %02x: %d send / %d recv completions, "
			"set_error %d (%d/%d/%d)\n",
			flags, o.nscq, o.nrcq, o.set_error_calls,
			o.err_cause.layer, o.err_cause.etype,
			o.err_cause.ecode);
	check(o.set_error_calls <= 1);
	check(o.closed_calls <= 1);
	check(fk_guards_ok(&o));
	rdmap_conn_destroy(o.c);
	o.c = NULL;
	check(fk_refs(&o) == 0);
	check(o.bad_puts == 0);
	fk_fini(&o);
	return 0;
}
