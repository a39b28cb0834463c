/* verbs/pd.c: protection domains (RFC 5040 §8: STags are bound to a PD). */
#include "config.h"

#include <errno.h>

#include "util/mem.h"
#include "verbs/verbs.h"

void pd_get(struct iwarp_pd *pd)
{
	__atomic_add_fetch(&pd_from_pub(pd)->refs, 1, __ATOMIC_RELAXED);
}

void pd_put(struct iwarp_pd *pd)
{
	__atomic_sub_fetch(&pd_from_pub(pd)->refs, 1, __ATOMIC_RELEASE);
}

IWARP_EXPORT struct iwarp_pd *iwarp_alloc_pd(struct iwarp_context *ctx)
{
	struct iw_pd *pd;
	int err;

	if (!ctx) {
		errno = EINVAL;
		return NULL;
	}
	err = ctx_count(ctx, &ctx->n_pd, 1, IW_MAX_PD);
	if (err) {
		errno = -err;
		return NULL;
	}
	pd = iw_calloc(1, sizeof(*pd));
	if (!pd) {
		ctx_count(ctx, &ctx->n_pd, -1, 0);
		errno = ENOMEM;
		return NULL;
	}
	pd->pub.context = ctx;
	pthread_mutex_lock(&ctx->lock);
	pd->pub.handle = ctx->next_handle++;
	pthread_mutex_unlock(&ctx->lock);
	return &pd->pub;
}

IWARP_EXPORT int iwarp_dealloc_pd(struct iwarp_pd *pd)
{
	struct iwarp_context *ctx;

	if (!pd)
		return -EINVAL;
	if (__atomic_load_n(&pd_from_pub(pd)->refs, __ATOMIC_ACQUIRE))
		return -EBUSY;
	ctx = pd->context;
	ctx_count(ctx, &ctx->n_pd, -1, 0);
	iw_free(pd_from_pub(pd));
	return 0;
}
