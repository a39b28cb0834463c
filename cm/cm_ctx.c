/*
 * cm/cm_ctx.c: the process-wide default context of ids created with
 * verbs == NULL, and the MPA parameters a context's attributes ask for.
 *
 * The default context is opened with iwarp_open_context(NULL) (defaults +
 * environment) by the first id that needs it and closed when the last id
 * referencing it is destroyed, unless the application still has objects
 * on it (iwarp_close_context() says -EBUSY): then it stays open for the
 * next id.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>

#include "cm/cm_int.h"
#include "verbs/verbs.h"

/*
 * open_lock guards the pointer and serializes opening and closing the
 * context; default_lock guards only the count. Closing joins and locks the
 * context's engines, whose threads take default_lock (a listener's new
 * child id, cm_ctx_ref_default) while they run: so the close happens under
 * open_lock only, never under default_lock.
 */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static struct iwarp_context *default_ctx;
static unsigned int default_refs;

struct iwarp_context *cm_ctx_get(struct iwarp_context *verbs, bool *is_default)
{
	struct iwarp_context *ctx;

	*is_default = false;
	if (verbs)
		return verbs;
	pthread_mutex_lock(&open_lock);
	if (!default_ctx)
		default_ctx = iwarp_open_context(NULL);
	ctx = default_ctx;
	if (ctx) {
		pthread_mutex_lock(&default_lock);
		default_refs++;
		pthread_mutex_unlock(&default_lock);
		*is_default = true;
	}
	pthread_mutex_unlock(&open_lock);
	return ctx; /* NULL: errno from iwarp_open_context */
}

void cm_ctx_ref_default(void)
{
	pthread_mutex_lock(&default_lock);
	default_refs++;
	pthread_mutex_unlock(&default_lock);
}

void cm_ctx_put_default(void)
{
	struct iwarp_context *ctx = NULL;

	pthread_mutex_lock(&open_lock);
	pthread_mutex_lock(&default_lock);
	if (default_refs && !--default_refs)
		ctx = default_ctx;
	pthread_mutex_unlock(&default_lock);
	/* no id refers to it, so no engine thread takes a reference now */
	if (ctx && iwarp_close_context(ctx) == 0)
		default_ctx = NULL;
	pthread_mutex_unlock(&open_lock);
}

struct engine *cm_ctx_engine(struct iwarp_context *ctx)
{
	return ctx_engine_pick(ctx);
}

void cm_ctx_mpa_params(struct iwarp_context *ctx, struct mpa_neg_params *p)
{
	cm_attr_mpa_params(&ctx->attr, p);
}

void cm_attr_mpa_params(const struct iwarp_context_attr *a,
			struct mpa_neg_params *p)
{
	mpa_neg_params_init(p);
	p->rev = a->mpa_rev == 1 ? MPA_REV_1 : MPA_REV_2;
	switch (a->crc) {
	case IWARP_CRC_REQUEST:
		p->crc = MPA_CRC_REQUEST;
		break;
	case IWARP_CRC_REQUIRE:
		p->crc = MPA_CRC_REQUIRE;
		break;
	case IWARP_CRC_OFF:
	default:
		p->crc = MPA_CRC_OFF;
		break;
	}
	p->markers_rx = a->markers != 0;
	p->rdmap_ext = a->rdmap_ext != 0; /* RFC 7306 offer (mpa_negotiate.h) */
	/*
	 * RFC 6581 §5/§9.2: as initiator we offer exactly the configured RTR
	 * type, or Write and Read for IWARP_P2P_AUTO (what siw offers; the
	 * responder picks); as responder we accept Write and Read (as siw)
	 * and also the configured type (a zero-length Send when asked for).
	 */
	p->p2p = a->p2p != IWARP_P2P_NONE && p->rev == MPA_REV_2;
	p->p2p_optional = a->p2p == IWARP_P2P_AUTO;
	switch (a->p2p) {
	case IWARP_P2P_WRITE:
		p->rtr_mask = MPA_RTR_WRITE;
		break;
	case IWARP_P2P_READ:
		p->rtr_mask = MPA_RTR_READ;
		break;
	case IWARP_P2P_SEND:
		p->rtr_mask = MPA_RTR_SEND;
		break;
	case IWARP_P2P_AUTO:
	case IWARP_P2P_NONE:
	default:
		p->rtr_mask = MPA_RTR_WRITE | MPA_RTR_READ;
		break;
	}
	p->max_pd = (uint16_t)(a->max_private_data > MPA_RR_PD_MAX
				       ? MPA_RR_PD_MAX
				       : a->max_private_data);
}

size_t cm_ctx_fpdu_max(struct iwarp_context *ctx)
{
	return ctx->attr.fpdu_max;
}
