/*
 * verbs/mw.c: memory windows (RFC 5040 §2.1, RFC 5042 §5; ibverbs
 * ibv_alloc_mw / ibv_bind_mw semantics).
 *
 * A window is an STag of its own onto part of a registered region, with
 * remote rights no wider than the region allows. Its entry lives in the
 * context's STag table (verbs/mr.c), so the engine resolves a window's
 * STag like a region's; an access through it references the region.
 *
 * Binding and local invalidation are send-queue work requests that never
 * go on the wire: the engine runs them (mw_sq_local) when the send queue
 * reaches them, so they act in order with the WRs around them, and they
 * complete in order (IWARP_WC_BIND_MW, IWARP_WC_LOCAL_INV). A type 1
 * window is bound with iwarp_bind_mw (the library picks its next key); a
 * type 2 window with an IWARP_WR_BIND_MW WR carrying the new STag the
 * consumer chose (iwarp_inc_rkey), and only while it is free or
 * invalidated. Only type 2 windows may be invalidated by the peer (Send
 * with Invalidate) or by IWARP_WR_LOCAL_INV.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "util/mem.h"
#include "verbs/verbs.h"

#define MW_ACCESS_ALL (IWARP_ACCESS_REMOTE_WRITE | IWARP_ACCESS_REMOTE_READ)

IWARP_EXPORT struct iwarp_mw *iwarp_alloc_mw(struct iwarp_pd *pd,
					     enum iwarp_mw_type type)
{
	struct iwarp_context *ctx;
	struct iw_mw *mw;
	uint32_t stag;
	int err;

	if (!pd || (type != IWARP_MW_TYPE_1 && type != IWARP_MW_TYPE_2)) {
		errno = EINVAL;
		return NULL;
	}
	ctx = pd->context;
	/* windows share the STag table and its limit with the regions */
	err = ctx_count(ctx, &ctx->n_mr, 1, IW_MAX_MR - 1);
	if (err) {
		errno = -err;
		return NULL;
	}
	mw = iw_calloc(1, sizeof(*mw));
	if (!mw) {
		ctx_count(ctx, &ctx->n_mr, -1, 0);
		errno = ENOMEM;
		return NULL;
	}
	err = mr_mw_alloc(ctx, pd, (int)type, &stag);
	if (err) {
		iw_free(mw);
		ctx_count(ctx, &ctx->n_mr, -1, 0);
		errno = -err;
		return NULL;
	}
	pd_get(pd);
	mw->pub.context = ctx;
	mw->pub.pd = pd;
	mw->pub.rkey = stag;
	mw->pub.handle = MR_STAG_INDEX(stag);
	mw->pub.type = type;
	return &mw->pub;
}

/*
 * The window's STag stops working at once (a bound window is unbound
 * first). An access through it that is in flight holds the region, not
 * the window: its later segments find the STag invalid and fail.
 */
IWARP_EXPORT int iwarp_dealloc_mw(struct iwarp_mw *mw)
{
	struct iwarp_context *ctx;

	if (!mw || !mw->context || !mw->pd)
		return -EINVAL;
	ctx = mw->context;
	mr_mw_free(ctx, mw->handle << 8);
	pd_put(mw->pd);
	ctx_count(ctx, &ctx->n_mr, -1, 0);
	iw_free((struct iw_mw *)mw);
	return 0;
}

int mw_bind_wr_check(const struct iw_qp *qp,
		     const struct iwarp_mw_bind_info *bi,
		     const struct iwarp_mw *mw, uint32_t rkey,
		     enum iwarp_mw_type type)
{
	const struct iw_mr *mr;

	if (!mw || mw->type != type || mw->pd != qp->pub.pd ||
	    MR_STAG_INDEX(rkey) != mw->handle)
		return -EINVAL;
	if (bi->mw_access_flags & ~(unsigned int)MW_ACCESS_ALL)
		return -EINVAL;
	if (!bi->length)
		return 0; /* unbind: no region needed */
	mr = (const struct iw_mr *)bi->mr;
	if (!mr || mr->pub.pd != mw->pd)
		return -EINVAL;
	/* ibverbs: the region allows binding; a window granting remote
	 * write needs a region with local write */
	if (!(mr->access & IWARP_ACCESS_MW_BIND) ||
	    ((bi->mw_access_flags & IWARP_ACCESS_REMOTE_WRITE) &&
	     !(mr->access & IWARP_ACCESS_LOCAL_WRITE)))
		return -EACCES;
	if (bi->addr < (uint64_t)(uintptr_t)mr->pub.addr ||
	    bi->addr - (uint64_t)(uintptr_t)mr->pub.addr > mr->pub.length ||
	    bi->length > mr->pub.length -
				 (bi->addr - (uint64_t)(uintptr_t)mr->pub.addr))
		return -EINVAL;
	return 0;
}

void mw_bind_wqe_fill(struct rdmap_wqe *w, const struct iwarp_send_wr *wr)
{
	const struct iwarp_mw_bind_info *bi = &wr->bind_mw.bind_info;

	memset(&w->bind, 0, sizeof(w->bind));
	if (wr->opcode != IWARP_WR_BIND_MW)
		return;
	w->bind.mw_stag = wr->bind_mw.mw->rkey;
	w->bind.new_stag = wr->bind_mw.rkey;
	w->bind.mr_lkey = bi->length && bi->mr ? bi->mr->lkey : 0;
	w->bind.addr = bi->addr;
	w->bind.length = bi->length;
	w->bind.access = (int)bi->mw_access_flags;
}

enum iwarp_wc_status mw_sq_local(struct iwarp_context *ctx,
				 const struct iwarp_pd *pd,
				 const struct rdmap_wqe *w)
{
	struct mw_bind_req b;

	switch (w->opcode) {
	case IWARP_WR_BIND_MW:
		b.mw_stag = w->bind.mw_stag;
		b.new_stag = w->bind.new_stag;
		b.mr_lkey = w->bind.mr_lkey;
		b.addr = w->bind.addr;
		b.length = w->bind.length;
		b.access = w->bind.access;
		return mr_mw_bind(ctx, pd, &b) ? IWARP_WC_MW_BIND_ERR
					       : IWARP_WC_SUCCESS;
	case IWARP_WR_LOCAL_INV:
		return mr_local_invalidate(ctx, w->invalidate_rkey, pd)
			       ? IWARP_WC_MW_BIND_ERR
			       : IWARP_WC_SUCCESS;
	case IWARP_WR_RDMA_WRITE:
	case IWARP_WR_SEND:
	case IWARP_WR_RDMA_READ:
	case IWARP_WR_SEND_WITH_INV:
	case IWARP_WR_RDMA_WRITE_WITH_IMM:
	case IWARP_WR_SEND_WITH_IMM:
	case IWARP_WR_ATOMIC_CMP_AND_SWP:
	case IWARP_WR_ATOMIC_FETCH_AND_ADD:
	case IWARP_WR_MASKED_ATOMIC_CMP_AND_SWP:
	case IWARP_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		break;
	}
	return IWARP_WC_LOC_QP_OP_ERR;
}

IWARP_EXPORT int iwarp_bind_mw(struct iwarp_qp *qp, struct iwarp_mw *mw,
			       const struct iwarp_mw_bind *mw_bind)
{
	struct iwarp_send_wr wr, *bad = NULL;
	uint32_t rkey;
	int err;

	if (!qp || !mw || !mw_bind || mw->type != IWARP_MW_TYPE_1)
		return -EINVAL;
	if (mw_bind->send_flags &
	    ~(unsigned int)(IWARP_SEND_SIGNALED | IWARP_SEND_FENCE))
		return -EINVAL;
	rkey = iwarp_inc_rkey(mw->rkey); /* a new key on every bind */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IWARP_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = mw_bind->bind_info;
	err = qp_post_send(qp, &wr, &bad, IWARP_MW_TYPE_1);
	if (err)
		return err;
	mw->rkey = rkey;
	return 0;
}
