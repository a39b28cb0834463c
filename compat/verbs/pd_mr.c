/*
 * compat/verbs/pd_mr.c: protection domains, memory regions and memory
 * windows (RFC 5040 §2.1, RFC 5042 §5) of the compat libibverbs.
 * ibverbs access flags and window types have the native values; flags
 * that only change how a region may be registered (relaxed ordering,
 * optional ranges, huge pages) are accepted and ignored, flags that
 * change what the region is (zero-based, on-demand paging) are refused.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "compat/verbs/iwc.h"

#define IWC_NATIVE_ACCESS                                                      \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                    \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |                   \
	 IBV_ACCESS_MW_BIND)
#define IWC_IGNORED_ACCESS                                                     \
	(IBV_ACCESS_RELAXED_ORDERING | IBV_ACCESS_HUGETLB |                    \
	 IBV_ACCESS_OPTIONAL_RANGE)

struct iwc_pd *iwc_pd(struct ibv_pd *pd)
{
	struct iwc_pd *p = (struct iwc_pd *)(void *)pd;

	return p && iwc_ctx(pd->context) && p->magic == IWC_MAGIC_PD ? p : NULL;
}

struct iwc_mr *iwc_mr(struct ibv_mr *mr)
{
	struct iwc_mr *m = (struct iwc_mr *)(void *)mr;

	return m && m->magic == IWC_MAGIC_MR ? m : NULL;
}

struct iwc_mw *iwc_mw(struct ibv_mw *mw)
{
	struct iwc_mw *w = (struct iwc_mw *)(void *)mw;

	return w && w->magic == IWC_MAGIC_MW ? w : NULL;
}

IWC_EXPORT struct iwarp_pd *iwc_native_pd(struct ibv_pd *pd)
{
	struct iwc_pd *p = iwc_pd(pd);

	if (!p) {
		errno = EINVAL;
		return NULL;
	}
	return p->native;
}

IWC_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct iwc_context *c = iwc_ctx(context);
	struct iwc_pd *p;
	int err;

	if (!c) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->native = iwarp_alloc_pd(c->native);
	if (!p->native) {
		err = errno;
		free(p);
		errno = err;
		return NULL;
	}
	p->magic = IWC_MAGIC_PD;
	p->pd.context = context;
	p->pd.handle = p->native->handle;
	return &p->pd;
}

IWC_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct iwc_pd *p = iwc_pd(pd);
	int ret;

	if (!p)
		return EINVAL;
	ret = iwarp_dealloc_pd(p->native);
	if (ret < 0)
		return iwc_errno(ret); /* EBUSY: objects still use it */
	p->magic = 0;
	free(p);
	return 0;
}

IWC_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
					   size_t length, uint64_t iova,
					   unsigned int access)
{
	struct iwc_pd *p = iwc_pd(pd);
	struct iwc_mr *m;
	int err;

	if (!p) {
		errno = EINVAL;
		return NULL;
	}
	if (access & ~(unsigned int)(IWC_NATIVE_ACCESS | IWC_IGNORED_ACCESS)) {
		/* zero-based, on-demand paging and the rest */
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* the tagged offset of an iWARP region is its virtual address
	 * (RFC 5040 §2.1): another I/O virtual address is not supported */
	if (iova != (uint64_t)(uintptr_t)addr) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->native = iwarp_reg_mr(p->native, addr, length,
				 (int)(access & IWC_NATIVE_ACCESS));
	if (!m->native) {
		err = errno;
		free(m);
		errno = err;
		return NULL;
	}
	m->magic = IWC_MAGIC_MR;
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->mr.handle = m->native->handle;
	m->mr.lkey = m->native->lkey;
	m->mr.rkey = m->native->rkey;
	return &m->mr;
}

#undef ibv_reg_mr
IWC_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr,
				     size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uint64_t)(uintptr_t)addr,
				(unsigned int)access);
}

#undef ibv_reg_mr_iova
IWC_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr,
					  size_t length, uint64_t iova,
					  int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

IWC_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					    size_t length, uint64_t iova,
					    int fd, int access)
{
	(void)pd, (void)offset, (void)length, (void)iova, (void)fd,
		(void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

IWC_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
			    void *addr, size_t length, int access)
{
	(void)mr, (void)flags, (void)pd, (void)addr, (void)length, (void)access;
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
}

IWC_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct iwc_mr *m = iwc_mr(mr);
	int ret;

	if (!m)
		return EINVAL;
	ret = iwarp_dereg_mr(m->native);
	if (ret < 0)
		return iwc_errno(ret);
	m->magic = 0;
	free(m);
	return 0;
}

struct ibv_mw *iwc_op_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct iwc_pd *p = iwc_pd(pd);
	struct iwc_mw *w;
	int err;

	if (!p || (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	w->native = iwarp_alloc_mw(p->native, type == IBV_MW_TYPE_1
						      ? IWARP_MW_TYPE_1
						      : IWARP_MW_TYPE_2);
	if (!w->native) {
		err = errno;
		free(w);
		errno = err;
		return NULL;
	}
	w->magic = IWC_MAGIC_MW;
	w->mw.context = pd->context;
	w->mw.pd = pd;
	w->mw.rkey = w->native->rkey;
	w->mw.handle = w->native->handle;
	w->mw.type = type;
	return &w->mw;
}

int iwc_op_dealloc_mw(struct ibv_mw *mw)
{
	struct iwc_mw *w = iwc_mw(mw);
	int ret;

	if (!w)
		return EINVAL;
	ret = iwarp_dealloc_mw(w->native);
	if (ret < 0)
		return iwc_errno(ret);
	w->magic = 0;
	free(w);
	return 0;
}

int iwc_op_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		   struct ibv_mw_bind *mw_bind)
{
	struct iwc_qp *q = iwc_qp(qp);
	struct iwc_mw *w = iwc_mw(mw);
	struct iwarp_mw_bind b;
	int ret;

	if (!q || !w || !mw_bind)
		return EINVAL;
	b.wr_id = mw_bind->wr_id;
	b.send_flags =
		mw_bind->send_flags & (IBV_SEND_SIGNALED | IBV_SEND_FENCE);
	b.bind_info.mr = NULL;
	if (mw_bind->bind_info.mr) {
		struct iwc_mr *m = iwc_mr(mw_bind->bind_info.mr);

		if (!m)
			return EINVAL;
		b.bind_info.mr = m->native;
	}
	b.bind_info.addr = mw_bind->bind_info.addr;
	b.bind_info.length = mw_bind->bind_info.length;
	b.bind_info.mw_access_flags = mw_bind->bind_info.mw_access_flags;
	ret = iwarp_bind_mw(q->native, w->native, &b);
	if (ret < 0)
		return iwc_errno(ret);
	mw->rkey = w->native->rkey;
	return 0;
}
