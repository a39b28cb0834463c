/*
 * tests/rdmap_fake.c: the fake owner of an RDMAP engine (tests/rdmap_fake.h).
 * The ops mirror verbs/qp_conn.c's semantics without verbs objects.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdmap_fake.h"

static struct fk_region *fk_find(struct fk_owner *o, uint32_t stag)
{
	int i;

	for (i = 0; i < o->nreg; i++)
		if (o->reg[i].stag == stag)
			return &o->reg[i];
	return NULL;
}

struct fk_region *fk_region_find(struct fk_owner *o, uint32_t stag)
{
	return fk_find(o, stag);
}

/* LOCAL_WRITE (a Read Response sink) is granted by either write right. */
static bool fk_access_ok(int have, int want)
{
	if (want & IWARP_ACCESS_LOCAL_WRITE) {
		if (!(have &
		      (IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE)))
			return false;
		want &= ~IWARP_ACCESS_LOCAL_WRITE;
	}
	return (have & want) == want;
}

static int fk_mem_get(void *owner, uint32_t stag, int access, uint64_t to,
		      uint64_t len, bool tagged_ddp, struct rdmap_mem *out)
{
	struct fk_owner *o = owner;
	struct fk_region *r = fk_find(o, stag);
	uint64_t base;

	out->ptr = NULL;
	out->ref = 0;
	if (!r || !r->valid)
		return tagged_ddp ? IWARP_ERR_DDP_STAG : IWARP_ERR_RDMAP_STAG;
	if (!fk_access_ok(r->access, access))
		return IWARP_ERR_RDMAP_ACCESS;
	if (to + len < to)
		return tagged_ddp ? IWARP_ERR_DDP_TO_WRAP
				  : IWARP_ERR_RDMAP_TO_WRAP;
	base = r->base;
	if (to < base || to + len > base + r->len)
		return tagged_ddp ? IWARP_ERR_DDP_BOUNDS
				  : IWARP_ERR_RDMAP_BOUNDS;
	r->refs++;
	out->ptr = r->buf + (to - base);
	out->ref = stag;
	return 0;
}

static void fk_mem_put(void *owner, uint32_t ref)
{
	struct fk_owner *o = owner;
	struct fk_region *r = fk_find(o, ref);

	if (!r || r->refs <= 0) {
		o->bad_puts++;
		return;
	}
	r->refs--;
}

static int fk_mem_check_local(void *owner, const struct iwarp_sge *sge,
			      int access)
{
	struct fk_owner *o = owner;
	struct fk_region *r = fk_find(o, sge->lkey);
	uint64_t base;

	if (!r || !r->valid)
		return -EINVAL;
	if (access && !fk_access_ok(r->access, access))
		return -EACCES;
	base = r->base;
	if (sge->addr < base || sge->addr + sge->length > base + r->len)
		return -EFAULT;
	return 0;
}

static int fk_invalidate(void *owner, uint32_t stag)
{
	struct fk_owner *o = owner;
	struct fk_region *r = fk_find(o, stag);

	if (!r || !r->valid)
		return IWARP_ERR_RDMAP_STAG;
	if (!r->invalidatable)
		return IWARP_ERR_RDMAP_INVALIDATE;
	r->valid = false;
	return 0;
}

static bool fk_stream_allows(void *owner, int access)
{
	struct fk_owner *o = owner;

	return (o->stream_access & access) == access;
}

static int fk_recv_take(void *owner, struct rdmap_rqe *out)
{
	struct fk_owner *o = owner;

	if (o->rq_tail == o->rq_head)
		return -ENOENT;
	*out = o->rq[o->rq_tail++ & (FK_RQ - 1)];
	return 0;
}

static int fk_rcq_push(struct fk_owner *o, const struct iwarp_wc *wc)
{
	if (o->rcq_room == 0 || o->nrcq >= FK_CQ)
		return -ENOSPC;
	if (o->rcq_room > 0)
		o->rcq_room--;
	o->rcq[o->nrcq++] = *wc;
	return 0;
}

static int fk_scq_push(struct fk_owner *o, const struct iwarp_wc *wc)
{
	if (o->scq_room == 0 || o->nscq >= FK_CQ)
		return -ENOSPC;
	if (o->scq_room > 0)
		o->scq_room--;
	o->scq[o->nscq++] = *wc;
	return 0;
}

static int fk_recv_complete(void *owner, const struct iwarp_wc *wc,
			    bool solicited)
{
	(void)solicited;
	return fk_rcq_push(owner, wc);
}

static const struct rdmap_wqe *fk_sq_next(void *owner, uint32_t *idx)
{
	struct fk_owner *o = owner;

	if (o->sq_stopped || o->sq_next == o->sq_head)
		return NULL;
	*idx = o->sq_next;
	return &o->sq[o->sq_next & (FK_SQ - 1)];
}

static void fk_sq_started(void *owner, uint32_t idx)
{
	struct fk_owner *o = owner;

	o->sq_next = idx + 1;
}

static bool fk_sq_pending(void *owner)
{
	struct fk_owner *o = owner;

	return o->sq_next != o->sq_head;
}

static uint32_t fk_sq_oldest(void *owner)
{
	struct fk_owner *o = owner;

	return o->sq_tail;
}

static enum iwarp_wc_opcode fk_wc_opcode(enum iwarp_wr_opcode op)
{
	switch (op) {
	case IWARP_WR_RDMA_WRITE:
		return IWARP_WC_RDMA_WRITE;
	case IWARP_WR_RDMA_READ:
		return IWARP_WC_RDMA_READ;
	case IWARP_WR_RDMA_WRITE_WITH_IMM:
		return IWARP_WC_RDMA_WRITE;
	case IWARP_WR_ATOMIC_CMP_AND_SWP:
	case IWARP_WR_MASKED_ATOMIC_CMP_AND_SWP:
		return IWARP_WC_COMP_SWAP;
	case IWARP_WR_ATOMIC_FETCH_AND_ADD:
	case IWARP_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		return IWARP_WC_FETCH_ADD;
	case IWARP_WR_SEND:
	case IWARP_WR_SEND_WITH_INV:
	case IWARP_WR_SEND_WITH_IMM:
		return IWARP_WC_SEND;
	case IWARP_WR_BIND_MW:
		return IWARP_WC_BIND_MW;
	case IWARP_WR_LOCAL_INV:
		return IWARP_WC_LOCAL_INV;
	}
	return IWARP_WC_SEND;
}

static void fk_sq_wc(const struct fk_owner *o, uint32_t idx,
		     enum iwarp_wc_status status, uint32_t vendor_err,
		     struct iwarp_wc *wc)
{
	const struct rdmap_wqe *w = &o->sq[idx & (FK_SQ - 1)];

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = w->wr_id;
	wc->status = status;
	wc->opcode = fk_wc_opcode(w->opcode);
	wc->byte_len = w->total_len;
	wc->vendor_err = vendor_err;
}

static int fk_sq_complete(void *owner, uint32_t upto)
{
	struct fk_owner *o = owner;
	struct iwarp_wc wc;

	while ((int32_t)(upto - o->sq_tail) > 0 && o->sq_tail != o->sq_head) {
		fk_sq_wc(o, o->sq_tail, IWARP_WC_SUCCESS, 0, &wc);
		if (fk_scq_push(o, &wc))
			return -ENOSPC;
		o->sq_tail++;
	}
	return 0;
}

static int fk_sq_fail_one(void *owner, enum iwarp_wc_status status,
			  uint32_t vendor_err)
{
	struct fk_owner *o = owner;
	struct iwarp_wc wc;

	if (o->sq_tail == o->sq_head)
		return 0;
	fk_sq_wc(o, o->sq_tail, status, vendor_err, &wc);
	o->sq_tail++;
	if ((int32_t)(o->sq_next - o->sq_tail) < 0)
		o->sq_next = o->sq_tail;
	return fk_scq_push(o, &wc);
}

/* Like qp_set_error: the QP is in ERR, what is still queued is flushed. */
static void fk_set_error(void *owner, const struct iwarp_term_cause *cause,
			 bool received, bool async)
{
	struct fk_owner *o = owner;
	struct iwarp_wc wc;

	o->set_error_calls++;
	o->err_cause_valid = cause != NULL;
	if (cause)
		o->err_cause = *cause;
	o->err_received = received;
	o->err_async = async;
	o->sq_stopped = true;
	while (o->sq_tail != o->sq_head) {
		fk_sq_wc(o, o->sq_tail, IWARP_WC_WR_FLUSH_ERR, 0, &wc);
		(void)fk_scq_push(o, &wc);
		o->sq_tail++;
	}
	o->sq_next = o->sq_tail;
	while (o->rq_tail != o->rq_head) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = o->rq[o->rq_tail++ & (FK_RQ - 1)].wr_id;
		wc.status = IWARP_WC_WR_FLUSH_ERR;
		wc.opcode = IWARP_WC_RECV;
		(void)fk_rcq_push(o, &wc);
	}
}

static void fk_closed(void *owner, int err,
		      const struct iwarp_term_cause *cause)
{
	struct fk_owner *o = owner;

	o->closed_calls++;
	o->closed_err = err;
	o->closed_cause_valid = cause != NULL;
	if (cause)
		o->closed_cause = *cause;
}

static void fk_kick_tx(void *owner)
{
	((struct fk_owner *)owner)->kicks++;
}

static void fk_shutdown(void *owner)
{
	((struct fk_owner *)owner)->shutdowns++;
}

static void fk_term_queued(void *owner)
{
	((struct fk_owner *)owner)->term_queued++;
}

static void fk_cancel_rx(void *owner)
{
	((struct fk_owner *)owner)->cancel_rx++;
}

static int fk_rx_wait(void *owner, bool wait)
{
	struct fk_owner *o = owner;

	if (!wait) {
		o->rx_wait_ends++;
		return 0;
	}
	o->rx_waits++;
	return o->rx_wait_rc;
}

static void fk_kick_rx(void *owner)
{
	((struct fk_owner *)owner)->rx_kicks++;
}

const struct rdmap_ops fk_ops = {
	.mem_get = fk_mem_get,
	.mem_put = fk_mem_put,
	.mem_check_local = fk_mem_check_local,
	.invalidate = fk_invalidate,
	.stream_allows = fk_stream_allows,
	.recv_take = fk_recv_take,
	.recv_complete = fk_recv_complete,
	.sq_next = fk_sq_next,
	.sq_started = fk_sq_started,
	.sq_pending = fk_sq_pending,
	.sq_oldest = fk_sq_oldest,
	.sq_complete = fk_sq_complete,
	.sq_fail_one = fk_sq_fail_one,
	.set_error = fk_set_error,
	.closed = fk_closed,
	.kick_tx = fk_kick_tx,
	.shutdown = fk_shutdown,
	.term_queued = fk_term_queued,
	.cancel_rx = fk_cancel_rx,
	.rx_wait = fk_rx_wait,
	.kick_rx = fk_kick_rx,
};

void fk_init(struct fk_owner *o)
{
	memset(o, 0, sizeof(*o));
	o->scq_room = -1;
	o->rcq_room = -1;
	o->stream_access = IWARP_ACCESS_REMOTE_WRITE |
			   IWARP_ACCESS_REMOTE_READ |
			   IWARP_ACCESS_REMOTE_ATOMIC;
}

bool fk_rx_provided;

bool fk_create(struct fk_owner *o, const struct rdmap_conn_cfg *cfg)
{
	o->c = rdmap_conn_create(cfg, &fk_ops, o);
	if (o->c && fk_rx_provided)
		rdmap_conn_set_rx_provided(o->c);
	return o->c != NULL;
}

void fk_fini(struct fk_owner *o)
{
	int i;

	rdmap_conn_destroy(o->c);
	o->c = NULL;
	for (i = 0; i < o->nreg; i++)
		if (!o->reg[i].ext)
			free(o->reg[i].mem);
	o->nreg = 0;
}

struct fk_region *fk_region_add_ext(struct fk_owner *o, uint32_t stag,
				    uint8_t *mem, size_t len, int access,
				    uint8_t fill)
{
	struct fk_region *r;

	if (o->nreg >= FK_REGIONS || !mem)
		return NULL;
	r = &o->reg[o->nreg];
	memset(r, 0, sizeof(*r));
	r->mem = mem;
	r->ext = true;
	memset(r->mem, FK_GUARD_BYTE, len + 2 * FK_GUARD);
	r->buf = r->mem + FK_GUARD;
	memset(r->buf, fill, len);
	r->len = len;
	r->base = (uint64_t)(uintptr_t)r->buf;
	r->stag = stag;
	r->access = access;
	r->valid = true;
	o->nreg++;
	return r;
}

struct fk_region *fk_region_add(struct fk_owner *o, uint32_t stag, size_t len,
				int access, uint8_t fill)
{
	struct fk_region *r;
	uint8_t *mem = malloc(len + 2 * FK_GUARD);

	r = fk_region_add_ext(o, stag, mem, len, access, fill);
	if (!r) {
		free(mem);
		return NULL;
	}
	r->ext = false;
	return r;
}

long fk_refs(const struct fk_owner *o)
{
	long n = 0;
	int i;

	for (i = 0; i < o->nreg; i++)
		n += o->reg[i].refs;
	return n;
}

bool fk_guards_ok(const struct fk_owner *o)
{
	int i;
	size_t k;

	for (i = 0; i < o->nreg; i++) {
		const struct fk_region *r = &o->reg[i];

		for (k = 0; k < FK_GUARD; k++)
			if (r->mem[k] != FK_GUARD_BYTE ||
			    r->buf[r->len + k] != FK_GUARD_BYTE)
				return false;
	}
	return true;
}

struct rdmap_wqe *fk_post_send(struct fk_owner *o, uint64_t wr_id,
			       enum iwarp_wr_opcode op, unsigned int flags,
			       uint32_t lkey, const void *addr, uint32_t len)
{
	struct rdmap_wqe *w = &o->sq[o->sq_head & (FK_SQ - 1)];

	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	w->opcode = op;
	w->send_flags = flags | IWARP_SEND_SIGNALED;
	w->num_sge = 1;
	w->total_len = len;
	w->sge[0].addr = (uint64_t)(uintptr_t)addr;
	w->sge[0].length = len;
	w->sge[0].lkey = lkey;
	o->sq_head++;
	return w;
}

void fk_post_recv(struct fk_owner *o, uint64_t wr_id, uint32_t lkey, void *addr,
		  uint32_t len)
{
	struct rdmap_rqe *r = &o->rq[o->rq_head++ & (FK_RQ - 1)];

	memset(r, 0, sizeof(*r));
	r->wr_id = wr_id;
	r->num_sge = 1;
	r->total_len = len;
	r->sge[0].addr = (uint64_t)(uintptr_t)addr;
	r->sge[0].length = len;
	r->sge[0].lkey = lkey;
}

size_t fk_tx_drain(struct fk_owner *o, uint8_t *out, size_t cap)
{
	struct iovec iov[64];
	size_t got = 0, k, take;
	int n, i;

	while (o->c && got < cap) {
		n = rdmap_conn_tx_iov(o->c, iov, 64);
		if (n <= 0)
			break;
		k = 0;
		for (i = 0; i < n && got < cap; i++) {
			take = iov[i].iov_len;
			if (take > cap - got)
				take = cap - got;
			memcpy(out + got, iov[i].iov_base, take);
			got += take;
			k += take;
		}
		rdmap_conn_tx_done(o->c, k);
		if (!k)
			break;
	}
	return got;
}

/* The memory fk_rx_iov provides (fk_rx_provided), shared by every owner
 * as an engine's endpoints share its scratch. */
static uint8_t fk_scratch[RDMAP_CONN_RX_BUF];

int fk_rx_iov(struct fk_owner *o, struct iovec *iov, int cap)
{
	int n = rdmap_conn_rx_iov(o->c, iov, cap), i;

	o->prov = false;
	if (n <= 0 || iov[n - 1].iov_base)
		return n;
	if (!fk_rx_provided || iov[n - 1].iov_len > sizeof(fk_scratch))
		abort(); /* asked without the mode, or for too much */
	iov[n - 1].iov_base = fk_scratch;
	o->prov = true;
	for (o->prov_own = 0, i = 0; i < n - 1; i++)
		o->prov_own += iov[i].iov_len;
	return n;
}

void fk_rx_done(struct fk_owner *o, size_t n)
{
	if (!fk_rx_provided) {
		rdmap_conn_rx_done(o->c, n);
		return;
	}
	rdmap_conn_rx_done_at(o->c, n, o->prov ? fk_scratch : NULL);
	/* the octets were consumed: what the connection still pointed at
	 * would read garbage from now on */
	if (o->prov && n > o->prov_own)
		memset(fk_scratch, 0xa5, n - o->prov_own);
	o->prov = false;
}

size_t fk_rx_feed(struct fk_owner *o, const uint8_t *buf, size_t len,
		  size_t chunk)
{
	struct iovec iov[8];
	size_t want, k, take, done = 0;
	int n, i;

	while (o->c && len > 0) {
		n = fk_rx_iov(o, iov, 8);
		if (n <= 0)
			return done; /* over or paused: the rest is not read */
		want = chunk && chunk < len ? chunk : len;
		k = 0;
		for (i = 0; i < n && k < want; i++) {
			take = iov[i].iov_len;
			if (take > want - k)
				take = want - k;
			memcpy(iov[i].iov_base, buf + k, take);
			k += take;
		}
		fk_rx_done(o, k);
		if (!k)
			return done;
		buf += k;
		len -= k;
		done += k;
	}
	return done;
}

void fk_pump(struct fk_owner *a, struct fk_owner *b)
{
	static uint8_t buf[1u << 16];
	size_t n, m;

	do {
		n = fk_tx_drain(a, buf, sizeof(buf));
		fk_rx_feed(b, buf, n, 0);
		m = fk_tx_drain(b, buf, sizeof(buf));
		fk_rx_feed(a, buf, m, 0);
	} while (n || m);
}
