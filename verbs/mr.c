/*
 * verbs/mr.c: memory registration and the STag table (RFC 5040 §8,
 * RFC 5041 §7 tagged buffer checks).
 *
 * STag = 24-bit index << 8 | 8-bit key; lkey == rkey == STag. Index 0 is
 * never used, so STag 0 and STag 1 (the RFC 6581 RTR placeholder) never
 * match. The key of an index changes on every registration and is drawn
 * from a PRNG seeded by getrandom(), so a stale or guessed STag misses.
 *
 * Lookups come from the engine thread while the application registers:
 * a rwlock guards the table; lookups take the read side and allocate
 * nothing. The table grows (doubling, up to IW_MAX_MR) under the write side.
 *
 * References: the engine holds one (mr_get / mr_put) on a region for as
 * long as it, or a transport operation it started, may place into or read
 * from it. iwarp_dereg_mr invalidates the STag first (no new reference),
 * then waits for the references to come back (mr_wait_unused), and only
 * then frees the index for reuse.
 *
 * Memory windows (verbs/mw.c) live in the same table: an entry of kind
 * MW1/MW2 describes the window's current binding (addr, length, rights,
 * the region |mr_idx|); |invalidated| means "not bound". A remote access
 * through a window takes its reference on the underlying region, not on
 * the window: the memory it touches stays registered, and a window can
 * be rebound, invalidated or freed while an operation through it is in
 * flight (that operation's later segments find the STag invalid). A
 * region with windows bound to it cannot be deregistered (-EBUSY).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "util/mem.h"
#include "verbs/verbs.h"

#define MR_TABLE_INIT 256
#define MR_ACCESS_ALL                                                          \
	(IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |                \
	 IWARP_ACCESS_REMOTE_READ | IWARP_ACCESS_REMOTE_ATOMIC |               \
	 IWARP_ACCESS_MW_BIND)

/* What an STag table entry is. */
enum mr_kind {
	MR_KIND_MR = 0,	 /* a memory region */
	MR_KIND_MW1 = 1, /* a type 1 memory window */
	MR_KIND_MW2 = 2, /* a type 2 memory window */
};

struct mr_entry {
	uint32_t refs; /* engine references (mr_get/mr_put, atomic) */
	bool revoking; /* being deregistered: waiting for refs to drop */
	uint64_t addr;
	uint64_t length;
	const struct iwarp_pd *pd;
	int access;
	uint8_t key; /* current key, or the last one when free */
	bool valid;
	bool invalidated; /* MR: invalidated; window: not bound */
	uint32_t next_free;
	uint8_t kind;	   /* enum mr_kind */
	uint32_t mr_idx;   /* window: the region it is bound to */
	uint32_t mw_bound; /* region: windows bound to it */
};

struct mr_table {
	pthread_rwlock_t lock;
	pthread_mutex_t wait_lock; /* with |drained|: dereg waits for refs */
	pthread_cond_t drained;
	struct mr_entry *e;
	uint32_t cap;	    /* entries allocated; index 0 unused */
	uint32_t free_head; /* 0 = no free entry below |used| */
	uint32_t used;	    /* entries [1, used) have been handed out */
	uint64_t rng;	    /* xorshift64* state */
};

static uint64_t mr_rand(struct mr_table *t)
{
	uint64_t x = t->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	t->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

struct mr_table *mr_table_create(void)
{
	struct mr_table *t = iw_calloc(1, sizeof(*t));
	struct timespec ts;
	uint64_t seed = 0;

	if (!t)
		return NULL;
	t->e = iw_calloc(MR_TABLE_INIT, sizeof(*t->e));
	if (!t->e) {
		iw_free(t);
		return NULL;
	}
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
		       (uint64_t)(uintptr_t)t;
	}
	t->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
	t->cap = MR_TABLE_INIT;
	t->used = 1;
	pthread_rwlock_init(&t->lock, NULL);
	pthread_mutex_init(&t->wait_lock, NULL);
	pthread_cond_init(&t->drained, NULL);
	return t;
}

void mr_table_destroy(struct mr_table *t)
{
	if (!t)
		return;
	pthread_rwlock_destroy(&t->lock);
	pthread_mutex_destroy(&t->wait_lock);
	pthread_cond_destroy(&t->drained);
	iw_free(t->e);
	iw_free(t);
}

/* Takes a free index (write lock held); 0 when the table is full. */
static uint32_t mr_index_alloc(struct mr_table *t)
{
	struct mr_entry *ne;
	uint32_t i, ncap;

	if (t->free_head) {
		i = t->free_head;
		t->free_head = t->e[i].next_free;
		return i;
	}
	if (t->used == t->cap) {
		if (t->cap >= IW_MAX_MR)
			return 0;
		ncap = t->cap * 2;
		ne = iw_realloc(t->e, (size_t)ncap * sizeof(*ne));
		if (!ne)
			return 0;
		memset(ne + t->cap, 0, (size_t)(ncap - t->cap) * sizeof(*ne));
		t->e = ne;
		t->cap = ncap;
	}
	i = t->used++;
	t->e[i].key = (uint8_t)(mr_rand(t) >> 56);
	return i;
}

IWARP_EXPORT struct iwarp_mr *iwarp_reg_mr(struct iwarp_pd *pd, void *addr,
					   size_t length, int access)
{
	struct iwarp_context *ctx;
	struct mr_table *t;
	struct mr_entry *e;
	struct iw_mr *mr;
	uint32_t idx;
	uint8_t key;
	int err;

	if (!pd || !addr || !length || (access & ~MR_ACCESS_ALL) ||
	    (uintptr_t)addr + length < (uintptr_t)addr) {
		errno = EINVAL;
		return NULL;
	}
	/* verbs rule: remote write (and atomic) access needs local write */
	if ((access &
	     (IWARP_ACCESS_REMOTE_WRITE | IWARP_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IWARP_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	ctx = pd->context;
	err = ctx_count(ctx, &ctx->n_mr, 1, IW_MAX_MR - 1);
	if (err) {
		errno = -err;
		return NULL;
	}
	mr = iw_calloc(1, sizeof(*mr));
	if (!mr) {
		ctx_count(ctx, &ctx->n_mr, -1, 0);
		return NULL;
	}
	t = ctx->mrs;
	pthread_rwlock_wrlock(&t->lock);
	idx = mr_index_alloc(t);
	if (!idx) {
		pthread_rwlock_unlock(&t->lock);
		iw_free(mr);
		ctx_count(ctx, &ctx->n_mr, -1, 0);
		errno = ENOMEM;
		return NULL;
	}
	e = &t->e[idx];
	do {
		key = (uint8_t)(mr_rand(t) >> 56);
	} while (key == e->key); /* a new key on every registration */
	e->key = key;
	e->addr = (uint64_t)(uintptr_t)addr;
	e->length = (uint64_t)length;
	e->pd = pd;
	e->access = access;
	e->valid = true;
	e->invalidated = false;
	e->kind = MR_KIND_MR;
	e->mw_bound = 0;
	pthread_rwlock_unlock(&t->lock);

	pd_get(pd);
	mr->access = access;
	mr->pub.context = ctx;
	mr->pub.pd = pd;
	mr->pub.addr = addr;
	mr->pub.length = length;
	mr->pub.handle = idx;
	mr->pub.lkey = idx << 8 | key;
	mr->pub.rkey = mr->pub.lkey;
	return &mr->pub;
}

/* References on entry |idx| (the table may grow meanwhile: read lock). */
static uint32_t mr_refs(struct mr_table *t, uint32_t idx)
{
	uint32_t n;

	pthread_rwlock_rdlock(&t->lock);
	n = __atomic_load_n(&t->e[idx].refs, __ATOMIC_ACQUIRE);
	pthread_rwlock_unlock(&t->lock);
	return n;
}

/*
 * Deregistration of a region the engine still references (an inbound
 * Write or Read Response being placed into it, Read Response FPDUs being
 * sent from it): asks the engine to let go (the connections concerned
 * fail with an invalid-STag TERMINATE, RFC 5040 §7 / RFC 5041 §7, and
 * cancel receives into it) and waits until every reference came back, so
 * that after iwarp_dereg_mr returns nothing touches the memory. In inline
 * progress mode the waiting thread drives the engine itself.
 */
static void mr_wait_unused(struct iwarp_context *ctx, struct mr_table *t,
			   uint32_t idx, uint32_t stag)
{
	bool inline_mode = ctx->attr.progress == IWARP_PROGRESS_INLINE;
	struct timespec ts;

	engine_mem_revoke(ctx, stag);
	while (mr_refs(t, idx)) {
		if (inline_mode) {
			engine_progress(ctx->engine);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&t->wait_lock);
		if (mr_refs(t, idx))
			pthread_cond_timedwait(&t->drained, &t->wait_lock, &ts);
		pthread_mutex_unlock(&t->wait_lock);
	}
}

IWARP_EXPORT int iwarp_dereg_mr(struct iwarp_mr *mr)
{
	struct iwarp_context *ctx;
	struct mr_table *t;
	struct mr_entry *e;
	uint32_t idx;

	if (!mr || !mr->context)
		return -EINVAL;
	ctx = mr->context;
	t = ctx->mrs;
	idx = MR_STAG_INDEX(mr->lkey);
	pthread_rwlock_wrlock(&t->lock);
	if (idx == 0 || idx >= t->used || !t->e[idx].valid ||
	    t->e[idx].kind != MR_KIND_MR ||
	    t->e[idx].key != MR_STAG_KEY(mr->lkey)) {
		pthread_rwlock_unlock(&t->lock);
		return -EINVAL;
	}
	e = &t->e[idx];
	if (e->mw_bound) { /* ibverbs: windows still bound to it */
		pthread_rwlock_unlock(&t->lock);
		return -EBUSY;
	}
	e->valid = false; /* no new reference from here on */
	e->revoking = __atomic_load_n(&e->refs, __ATOMIC_ACQUIRE) != 0;
	pthread_rwlock_unlock(&t->lock);
	if (e->revoking)
		mr_wait_unused(ctx, t, idx, mr->lkey);
	pthread_rwlock_wrlock(&t->lock);
	e = &t->e[idx];
	e->revoking = false;
	e->pd = NULL;
	e->next_free = t->free_head;
	t->free_head = idx;
	pthread_rwlock_unlock(&t->lock);
	pd_put(mr->pd);
	ctx_count(ctx, &ctx->n_mr, -1, 0);
	iw_free((struct iw_mr *)mr);
	return 0;
}

/* Whether an MR with |have| rights grants |want| (Read sink rule). */
static bool mr_access_ok(int have, int want)
{
	if ((want & IWARP_ACCESS_LOCAL_WRITE) &&
	    (have & IWARP_ACCESS_REMOTE_WRITE))
		have |= IWARP_ACCESS_LOCAL_WRITE;
	return (have & want) == want;
}

/*
 * Copies entry |in| but its reference count: engines (one per thread, and
 * a context may have several) take references under the read lock, so the
 * count is only ever used atomically.
 */
static void mr_entry_copy(struct mr_entry *out, const struct mr_entry *in)
{
	out->refs = 0;
	out->revoking = in->revoking;
	out->addr = in->addr;
	out->length = in->length;
	out->pd = in->pd;
	out->access = in->access;
	out->key = in->key;
	out->valid = in->valid;
	out->invalidated = in->invalidated;
	out->next_free = in->next_free;
	out->kind = in->kind;
	out->mr_idx = in->mr_idx;
	out->mw_bound = in->mw_bound;
}

/* Copies the live entry for |stag| (read lock held by caller); false if
 * none. For a bound window, *ref_idx is its region (whose reference an
 * access takes), else the entry itself. */
static bool mr_lookup_ref(struct mr_table *t, uint32_t stag,
			  struct mr_entry *out, uint32_t *ref_idx)
{
	uint32_t idx = MR_STAG_INDEX(stag);
	const struct mr_entry *m;

	if (idx == 0 || idx >= t->used)
		return false;
	if (!t->e[idx].valid || t->e[idx].invalidated ||
	    t->e[idx].key != MR_STAG_KEY(stag))
		return false;
	mr_entry_copy(out, &t->e[idx]);
	*ref_idx = idx;
	if (out->kind != MR_KIND_MR) {
		/* the window's region must still grant access itself */
		m = &t->e[out->mr_idx];
		if (!m->valid || m->invalidated)
			return false;
		*ref_idx = out->mr_idx;
	}
	return true;
}

static bool mr_lookup(struct mr_table *t, uint32_t stag, struct mr_entry *out)
{
	uint32_t ref_idx;

	return mr_lookup_ref(t, stag, out, &ref_idx);
}

/* Ends the binding of window |e| (write lock held). */
static void mw_unbind_locked(struct mr_table *t, struct mr_entry *e)
{
	if (!e->invalidated && t->e[e->mr_idx].mw_bound)
		t->e[e->mr_idx].mw_bound--;
	e->invalidated = true;
}

/*
 * Remote invalidation by an inbound Send with Invalidate (RFC 5040 §5.3,
 * §6.4; RFC 5042 §5): only a bound type 2 window of the connection's PD
 * may be invalidated remotely (as in ibverbs); the window then grants no
 * access until it is bound again. Any other STag (a region, a type 1
 * window, an unknown, stale or unbound STag) is refused with the remote
 * operation error "STag cannot be invalidated" and stays as it was; an
 * STag of another PD with the remote protection variant.
 */
int mr_invalidate(struct iwarp_context *ctx, uint32_t stag,
		  const struct iwarp_pd *pd)
{
	struct mr_table *t = ctx->mrs;
	uint32_t idx = MR_STAG_INDEX(stag);
	struct mr_entry *e;
	int rc = 0;

	pthread_rwlock_wrlock(&t->lock);
	e = (idx && idx < t->used) ? &t->e[idx] : NULL;
	if (!e || !e->valid || e->invalidated || e->key != MR_STAG_KEY(stag))
		rc = IWARP_ERR_RDMAP_INVALIDATE_OP;
	else if (e->pd != pd)
		rc = IWARP_ERR_RDMAP_INVALIDATE;
	else if (e->kind != MR_KIND_MW2)
		rc = IWARP_ERR_RDMAP_INVALIDATE_OP;
	else
		mw_unbind_locked(t, e);
	pthread_rwlock_unlock(&t->lock);
	return rc;
}

int mr_local_invalidate(struct iwarp_context *ctx, uint32_t stag,
			const struct iwarp_pd *pd)
{
	struct mr_table *t = ctx->mrs;
	uint32_t idx = MR_STAG_INDEX(stag);
	struct mr_entry *e;
	int rc = 0;

	pthread_rwlock_wrlock(&t->lock);
	e = (idx && idx < t->used) ? &t->e[idx] : NULL;
	if (!e || !e->valid || e->invalidated || e->key != MR_STAG_KEY(stag))
		rc = -EINVAL;
	else if (e->pd != pd)
		rc = -EPERM;
	else if (e->kind == MR_KIND_MW1)
		rc = -EINVAL; /* a type 1 window is unbound by a bind */
	else if (e->kind == MR_KIND_MW2)
		mw_unbind_locked(t, e);
	else
		e->invalidated = true;
	pthread_rwlock_unlock(&t->lock);
	return rc;
}

int mr_mw_alloc(struct iwarp_context *ctx, const struct iwarp_pd *pd, int type,
		uint32_t *stag)
{
	struct mr_table *t = ctx->mrs;
	struct mr_entry *e;
	uint32_t idx;
	uint8_t key;

	pthread_rwlock_wrlock(&t->lock);
	idx = mr_index_alloc(t);
	if (!idx) {
		pthread_rwlock_unlock(&t->lock);
		return -ENOMEM;
	}
	e = &t->e[idx];
	do {
		key = (uint8_t)(mr_rand(t) >> 56);
	} while (key == e->key);
	e->key = key;
	e->addr = 0;
	e->length = 0;
	e->pd = pd;
	e->access = 0;
	e->valid = true;
	e->invalidated = true; /* not bound yet */
	e->kind = type == IWARP_MW_TYPE_2 ? MR_KIND_MW2 : MR_KIND_MW1;
	e->mr_idx = 0;
	e->mw_bound = 0;
	pthread_rwlock_unlock(&t->lock);
	*stag = idx << 8 | key;
	return 0;
}

void mr_mw_free(struct iwarp_context *ctx, uint32_t stag)
{
	struct mr_table *t = ctx->mrs;
	struct mr_entry *e;

	pthread_rwlock_wrlock(&t->lock);
	e = &t->e[MR_STAG_INDEX(stag)];
	mw_unbind_locked(t, e);
	e->valid = false;
	e->pd = NULL;
	e->next_free = t->free_head;
	t->free_head = MR_STAG_INDEX(stag);
	pthread_rwlock_unlock(&t->lock);
}

int mr_mw_bind(struct iwarp_context *ctx, const struct iwarp_pd *pd,
	       const struct mw_bind_req *b)
{
	struct mr_table *t = ctx->mrs;
	uint32_t idx = MR_STAG_INDEX(b->mw_stag);
	uint32_t ridx = MR_STAG_INDEX(b->mr_lkey);
	struct mr_entry *e, *m;
	int rc = 0;

	pthread_rwlock_wrlock(&t->lock);
	e = (idx && idx < t->used) ? &t->e[idx] : NULL;
	m = (ridx && ridx < t->used) ? &t->e[ridx] : NULL;
	if (!e || !e->valid || e->kind == MR_KIND_MR ||
	    MR_STAG_INDEX(b->new_stag) != idx || e->pd != pd) {
		rc = -EINVAL;
	} else if (e->kind == MR_KIND_MW2 && !e->invalidated) {
		/* a type 2 window binds only when free or invalidated */
		rc = -EBUSY;
	} else if (MR_STAG_KEY(b->new_stag) == e->key) {
		/* every bind changes the key: the STag of the previous
		 * binding must not reach the new one */
		rc = -EINVAL;
	} else if (b->length == 0) {
		mw_unbind_locked(t, e); /* a zero-length bind unbinds */
		e->key = MR_STAG_KEY(b->new_stag);
	} else if (!m || !m->valid || m->invalidated || m->kind != MR_KIND_MR ||
		   m->key != MR_STAG_KEY(b->mr_lkey) || m->pd != pd) {
		rc = -EINVAL;
	} else if (!(m->access & IWARP_ACCESS_MW_BIND) ||
		   ((b->access & IWARP_ACCESS_REMOTE_WRITE) &&
		    !(m->access & IWARP_ACCESS_LOCAL_WRITE))) {
		rc = -EACCES;
	} else if (b->addr < m->addr || b->addr - m->addr > m->length ||
		   b->length > m->length - (b->addr - m->addr)) {
		rc = -EFAULT;
	} else {
		mw_unbind_locked(t, e);
		e->key = MR_STAG_KEY(b->new_stag);
		e->addr = b->addr;
		e->length = b->length;
		e->access = b->access;
		e->mr_idx = ridx;
		e->invalidated = false;
		m->mw_bound++;
	}
	pthread_rwlock_unlock(&t->lock);
	return rc;
}

/* The remote access checks on entry copy |e| (RFC 5040 §8 / RFC 5041 §7:
 * STag, stream (PD), access, wrap, bounds). */
static int mr_remote_ok(const struct mr_entry *found, const struct iwarp_pd *pd,
			int access, uint64_t to, uint64_t len, bool tagged_ddp)
{
	struct mr_entry e;

	if (!found)
		return tagged_ddp ? IWARP_ERR_DDP_STAG : IWARP_ERR_RDMAP_STAG;
	e = *found;
	if (e.pd != pd)
		return tagged_ddp ? IWARP_ERR_DDP_STAG_STREAM
				  : IWARP_ERR_RDMAP_STAG_STREAM;
	if (!mr_access_ok(e.access, access))
		return IWARP_ERR_RDMAP_ACCESS;
	/* the range's last octet is to + len - 1: a range ending exactly at
	 * 2^64 does not wrap; the bounds are checked without overflow */
	if (len && to > UINT64_MAX - (len - 1))
		return tagged_ddp ? IWARP_ERR_DDP_TO_WRAP
				  : IWARP_ERR_RDMAP_TO_WRAP;
	if (to < e.addr || to - e.addr > e.length ||
	    len > e.length - (to - e.addr))
		return tagged_ddp ? IWARP_ERR_DDP_BOUNDS
				  : IWARP_ERR_RDMAP_BOUNDS;
	return 0;
}

int mr_get(struct iwarp_context *ctx, uint32_t stag, const struct iwarp_pd *pd,
	   int access, uint64_t to, uint64_t len, bool tagged_ddp,
	   uint8_t **dst, uint32_t *ref)
{
	struct mr_table *t = ctx->mrs;
	uint32_t ref_idx = 0;
	struct mr_entry e;
	bool found;
	int rc;

	pthread_rwlock_rdlock(&t->lock);
	found = mr_lookup_ref(t, stag, &e, &ref_idx);
	rc = mr_remote_ok(found ? &e : NULL, pd, access, to, len, tagged_ddp);
	if (!rc) { /* taken under the lock: dereg sees it or we see !valid */
		__atomic_fetch_add(&t->e[ref_idx].refs, 1, __ATOMIC_ACQ_REL);
		*ref = ref_idx << 8 | t->e[ref_idx].key;
	}
	pthread_rwlock_unlock(&t->lock);
	if (!rc && dst)
		*dst = (uint8_t *)(uintptr_t)to;
	return rc;
}

void mr_put(struct iwarp_context *ctx, uint32_t stag)
{
	struct mr_table *t = ctx->mrs;
	uint32_t left;
	bool wake;

	pthread_rwlock_rdlock(&t->lock);
	left = __atomic_sub_fetch(&t->e[MR_STAG_INDEX(stag)].refs, 1,
				  __ATOMIC_ACQ_REL);
	wake = left == 0 && t->e[MR_STAG_INDEX(stag)].revoking;
	pthread_rwlock_unlock(&t->lock);
	if (wake) {
		pthread_mutex_lock(&t->wait_lock);
		pthread_cond_broadcast(&t->drained);
		pthread_mutex_unlock(&t->wait_lock);
	}
}

int mr_check_remote(struct iwarp_context *ctx, uint32_t stag,
		    const struct iwarp_pd *pd, int access, uint64_t to,
		    uint64_t len, bool tagged_ddp, uint8_t **dst)
{
	struct mr_entry e;
	bool found;
	int rc;

	pthread_rwlock_rdlock(&ctx->mrs->lock);
	found = mr_lookup(ctx->mrs, stag, &e);
	pthread_rwlock_unlock(&ctx->mrs->lock);
	rc = mr_remote_ok(found ? &e : NULL, pd, access, to, len, tagged_ddp);
	if (rc)
		return rc;
	if (dst)
		*dst = (uint8_t *)(uintptr_t)to;
	return 0;
}

int mr_check_local(struct iwarp_context *ctx, const struct iwarp_sge *sge,
		   const struct iwarp_pd *pd, int access)
{
	struct mr_entry e;
	bool found;

	if (!sge->length)
		return 0;
	pthread_rwlock_rdlock(&ctx->mrs->lock);
	found = mr_lookup(ctx->mrs, sge->lkey, &e);
	pthread_rwlock_unlock(&ctx->mrs->lock);
	if (!found || e.kind != MR_KIND_MR) /* a window is no lkey */
		return -EINVAL;
	if (e.pd != pd)
		return -EPERM;
	if (sge->addr + sge->length < sge->addr || sge->addr < e.addr ||
	    sge->addr + sge->length > e.addr + e.length)
		return -EFAULT;
	if (!mr_access_ok(e.access, access))
		return -EACCES;
	return 0;
}
