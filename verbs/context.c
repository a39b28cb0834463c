/*
 * verbs/context.c: context attributes (defaults + environment), open, close,
 * query, device limits, inline progress.
 *
 * Environment rule: iwarp_context_attr_init() fills the defaults and then
 * applies IWARP_PROGRESS, IWARP_CRC, IWARP_MPA_REV, IWARP_MARKERS,
 * IWARP_P2P, IWARP_FPDU_MAX, IWARP_RDMAP_EXT and IWARP_CC (an unparsable
 * value is ignored).
 * iwarp_open_context(NULL) uses exactly that; iwarp_open_context(attr) uses
 * the caller's struct as is, so a value the caller set after
 * iwarp_context_attr_init() wins over the environment.
 * IWARP_DISCONNECT_HOLD_MS, IWARP_RNR_WAIT_MS and IWARP_ENGINES have no
 * attribute (the public
 * struct keeps its size): iwarp_open_context() reads them into the context
 * itself.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "io/engine.h"
#include "util/mem.h"
#include "verbs/verbs.h"

#define CTX_MPA_REQ_TIMEOUT_MS 5000
#define CTX_MPA_REP_TIMEOUT_MS 10000
/* Initiator's pause before its first FPDU; see cm/cm_conn.c "siw race". */
#define CTX_REPLY_GRACE_MS	10
#define CTX_REPLY_GRACE_MAX_MS	1000
#define CTX_RESP_TX_WAIT_MAX_MS 60000
/* rev 1 / no-RTR responder: send after this long without a first FPDU
 * from the initiator (docs/message-order.md) */
#define CTX_RESP_TX_WAIT_MS 1000
#define CTX_FPDU_MIN	    64 /* room for MPA + DDP + RDMAP headers and data */
#define CTX_FPDU_MAX	    65535 /* ULPDU_Length is 16 bits (RFC 5044 §4.1) */
#define CTX_CC_NAME_LEN	    32	  /* sizeof(ctx->cc_name) */
/* A peer's DISCONNECTED waits for the application's polls at most this
 * long (cm/cm_disc.c, iwarp_cm_get_event(3)); the environment may set
 * 0..CTX_DISC_HOLD_MAX_MS. */
#define CTX_DISC_HOLD_MS     100
#define CTX_DISC_HOLD_MAX_MS 60000
/* How long a Send may wait for a receive WQE (docs/receive-wait.md),
 * 0..CTX_RNR_WAIT_MAX_MS; 0: it fails at once, as on siw (RFC 5041 §7.2). */
#define CTX_RNR_WAIT_MS	    1000
#define CTX_RNR_WAIT_MAX_MS 3600000
/* Progress engines of a context (docs/engine-threads.md): IWARP_ENGINES may
 * set 1..IW_MAX_ENGINES; INLINE progress has exactly one. */
#define CTX_ENGINES 1

/* Maps |val| to an index of |names| (case-insensitive); -1 if none. */
static int env_pick(const char *val, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcasecmp(val, names[i]))
			return i;
	return -1;
}

/* Parses an unsigned decimal in [lo, hi]; -1 if not one. */
static long env_number(const char *val, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(val, &end, 10);
	if (errno || end == val || *end || v < lo || v > hi)
		return -1;
	return v;
}

static void attr_apply_env(struct iwarp_context_attr *attr)
{
	static const char *const progress[] = {"adaptive", "latency", "cpu",
					       "inline"};
	static const char *const crc[] = {"off", "request", "require"};
	static const char *const p2p[] = {"none", "write", "read", "send",
					  "auto"};
	const char *v;
	long n;
	int i;

	v = getenv("IWARP_PROGRESS");
	if (v && (i = env_pick(v, progress, 4)) >= 0)
		attr->progress = (enum iwarp_progress_mode)i;
	v = getenv("IWARP_CRC");
	if (v && (i = env_pick(v, crc, 3)) >= 0)
		attr->crc = (enum iwarp_crc_policy)i;
	v = getenv("IWARP_P2P");
	if (v && (i = env_pick(v, p2p, 5)) >= 0)
		attr->p2p = (enum iwarp_p2p_rtr)i;
	v = getenv("IWARP_MPA_REV");
	if (v && (n = env_number(v, 1, 2)) > 0)
		attr->mpa_rev = (int)n;
	v = getenv("IWARP_MARKERS");
	if (v && (n = env_number(v, 0, 1)) >= 0)
		attr->markers = (int)n;
	v = getenv("IWARP_FPDU_MAX");
	if (v && (n = env_number(v, 0, CTX_FPDU_MAX)) >= 0 &&
	    (n == 0 || n >= CTX_FPDU_MIN))
		attr->fpdu_max = (uint32_t)n;
	v = getenv("IWARP_MPA_REPLY_GRACE_MS");
	if (v && (n = env_number(v, 0, CTX_REPLY_GRACE_MAX_MS)) >= 0)
		attr->mpa_reply_grace_ms = (uint32_t)n;
	v = getenv("IWARP_RESPONDER_TX_WAIT_MS");
	if (v && (n = env_number(v, 0, CTX_RESP_TX_WAIT_MAX_MS)) >= 0)
		attr->responder_tx_wait_ms = (uint32_t)n;
	v = getenv("IWARP_RDMAP_EXT");
	if (v && (n = env_number(v, 0, 1)) >= 0)
		attr->rdmap_ext = (int)n;
	v = getenv("IWARP_CC");
	if (v && *v && strlen(v) < CTX_CC_NAME_LEN)
		attr->congestion_control = v;
}

/* IWARP_DISCONNECT_HOLD_MS if set and in range, else CTX_DISC_HOLD_MS. */
static uint32_t ctx_disc_hold_ms(void)
{
	const char *v = getenv("IWARP_DISCONNECT_HOLD_MS");
	long n;

	if (v && (n = env_number(v, 0, CTX_DISC_HOLD_MAX_MS)) >= 0)
		return (uint32_t)n;
	return CTX_DISC_HOLD_MS;
}

/* IWARP_RNR_WAIT_MS if set and in range, else CTX_RNR_WAIT_MS. */
static uint32_t ctx_rnr_wait_ms(void)
{
	const char *v = getenv("IWARP_RNR_WAIT_MS");
	long n;

	if (v && (n = env_number(v, 0, CTX_RNR_WAIT_MAX_MS)) >= 0)
		return (uint32_t)n;
	return CTX_RNR_WAIT_MS;
}

/* IWARP_SOCKET_IO: "direct" = the engines read and write their plain TCP
 * sockets with system calls on readiness (io/engine.h, direct_io), so a
 * thread waiting in iwarp_get_cq_event receives its own messages; "ring" =
 * io_uring operations. Unset (or unknown): direct with one engine, where a
 * waiting thread can drive it; ring with several, where only the progress
 * threads read the sockets and the ring streams small messages faster
 * (bench/README.md, docs/direct-sockets.md). */
static bool ctx_direct_io(unsigned int n_engines)
{
	static const char *const io[] = {"ring", "direct"};
	const char *v = getenv("IWARP_SOCKET_IO");
	int pick = v ? env_pick(v, io, 2) : -1;

	if (pick >= 0)
		return pick == 1;
	return n_engines == 1;
}

/* IWARP_ENGINES if set and in range, else CTX_ENGINES; 1 for INLINE. */
static unsigned int ctx_n_engines(const struct iwarp_context_attr *a)
{
	const char *v = getenv("IWARP_ENGINES");
	long n;

	if (a->progress == IWARP_PROGRESS_INLINE)
		return 1; /* its callers drive "the" engine of the context */
	if (v && (n = env_number(v, 1, IW_MAX_ENGINES)) > 0)
		return (unsigned int)n;
	return CTX_ENGINES;
}

struct engine *ctx_engine_pick(struct iwarp_context *ctx)
{
	unsigned int i;

	if (ctx->n_engines == 1)
		return ctx->engine;
	i = __atomic_fetch_add(&ctx->next_engine, 1, __ATOMIC_RELAXED);
	return ctx->engines[i % ctx->n_engines];
}

unsigned int ctx_engine_self(const struct iwarp_context *ctx)
{
	unsigned int i;

	for (i = 1; i < ctx->n_engines; i++)
		if (engine_in_thread(ctx->engines[i]))
			return i;
	return 0;
}

/* Stops and frees the engines; their conn lists are empty by then. */
static void ctx_engines_destroy(struct iwarp_context *ctx)
{
	while (ctx->n_engines)
		engine_destroy(ctx->engines[--ctx->n_engines]);
	iw_free(ctx->engines);
	iw_free(ctx->conns);
}

static int ctx_engines_create(struct iwarp_context *ctx)
{
	struct engine_attr eattr;
	unsigned int n = ctx_n_engines(&ctx->attr);

	ctx->engines = iw_calloc(n, sizeof(*ctx->engines));
	ctx->conns = iw_calloc(n, sizeof(*ctx->conns));
	if (!ctx->engines || !ctx->conns) {
		ctx_engines_destroy(ctx);
		return -ENOMEM;
	}
	memset(&eattr, 0, sizeof(eattr));
	eattr.mode = (enum engine_mode)ctx->attr.progress; /* same values */
	eattr.busy_poll_us = ctx->attr.busy_poll_us;
	eattr.congestion_control = ctx->attr.congestion_control;
	eattr.direct_io = ctx_direct_io(n);
	while (ctx->n_engines < n) {
		struct engine *eng = engine_create(&eattr);

		if (!eng) {
			int err = errno ? -errno : -ENOMEM;

			ctx_engines_destroy(ctx);
			return err;
		}
		ctx->engines[ctx->n_engines++] = eng;
	}
	ctx->engine = ctx->engines[0];
	return 0;
}

IWARP_EXPORT void iwarp_context_attr_init(struct iwarp_context_attr *attr)
{
	if (!attr)
		return;
	memset(attr, 0, sizeof(*attr));
	attr->mpa_rev = 2;
	attr->crc = IWARP_CRC_OFF;
	attr->markers = 0;
	/* RFC 6581: as initiator with MPA rev 2, ask for an RTR so either
	 * side may send first (docs/message-order.md) */
	attr->p2p = IWARP_P2P_AUTO;
	attr->fpdu_max = 0;
	attr->progress = IWARP_PROGRESS_ADAPTIVE;
	attr->busy_poll_us = 0;
	attr->congestion_control = NULL;
	attr->mpa_req_timeout_ms = CTX_MPA_REQ_TIMEOUT_MS;
	attr->mpa_rep_timeout_ms = CTX_MPA_REP_TIMEOUT_MS;
	attr->max_private_data = IW_MAX_PRIVATE_DATA;
	attr->mpa_reply_grace_ms = CTX_REPLY_GRACE_MS;
	attr->responder_tx_wait_ms = CTX_RESP_TX_WAIT_MS;
	attr_apply_env(attr);
}

/* Returns 0 if |a| is a usable set of attributes, else -EINVAL. */
static int attr_validate(const struct iwarp_context_attr *a)
{
	if (a->mpa_rev != 1 && a->mpa_rev != 2)
		return -EINVAL;
	if ((unsigned int)a->crc > IWARP_CRC_REQUIRE ||
	    (unsigned int)a->p2p > IWARP_P2P_AUTO ||
	    (unsigned int)a->progress > IWARP_PROGRESS_INLINE)
		return -EINVAL;
	if (a->markers != 0 && a->markers != 1)
		return -EINVAL;
	if (a->rdmap_ext != 0 && a->rdmap_ext != 1)
		return -EINVAL;
	if (a->fpdu_max &&
	    (a->fpdu_max < CTX_FPDU_MIN || a->fpdu_max > CTX_FPDU_MAX))
		return -EINVAL;
	if (a->max_private_data > IW_MAX_PRIVATE_DATA)
		return -EINVAL;
	if (a->mpa_reply_grace_ms > CTX_REPLY_GRACE_MAX_MS)
		return -EINVAL;
	if (a->responder_tx_wait_ms > CTX_RESP_TX_WAIT_MAX_MS)
		return -EINVAL;
	if (a->congestion_control &&
	    (!*a->congestion_control ||
	     strlen(a->congestion_control) >= CTX_CC_NAME_LEN))
		return -EINVAL;
	return 0;
}

IWARP_EXPORT struct iwarp_context *
iwarp_open_context(const struct iwarp_context_attr *attr)
{
	struct iwarp_context *ctx;
	int err;

	ctx = iw_calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	pthread_mutex_init(&ctx->conn_lock, NULL); /* cannot fail (Linux) */
	if (attr)
		ctx->attr = *attr;
	else
		iwarp_context_attr_init(&ctx->attr);
	err = attr_validate(&ctx->attr);
	if (err)
		goto err_free;
	if (ctx->attr.congestion_control) {
		strcpy(ctx->cc_name, ctx->attr.congestion_control);
		ctx->attr.congestion_control = ctx->cc_name;
	}
	ctx->disc_hold_ms = ctx_disc_hold_ms();
	ctx->rnr_wait_ms = ctx_rnr_wait_ms();
	ctx->next_handle = 1;
	ctx->next_qp_num = 1;
	err = -pthread_mutex_init(&ctx->lock, NULL);
	if (err)
		goto err_free;
	ctx->async_fd = eventfd(0, EFD_CLOEXEC);
	if (ctx->async_fd < 0) {
		err = -errno;
		goto err_lock;
	}
	ctx->mrs = mr_table_create();
	if (!ctx->mrs) {
		err = -errno;
		goto err_fd;
	}
	err = ctx_engines_create(ctx);
	if (err)
		goto err_mrs;
	return ctx;

err_mrs:
	mr_table_destroy(ctx->mrs);
err_fd:
	close(ctx->async_fd);
err_lock:
	pthread_mutex_destroy(&ctx->lock);
err_free:
	pthread_mutex_destroy(&ctx->conn_lock);
	iw_free(ctx);
	errno = -err;
	return NULL;
}

IWARP_EXPORT int iwarp_close_context(struct iwarp_context *ctx)
{
	bool busy;

	if (!ctx)
		return -EINVAL;
	pthread_mutex_lock(&ctx->lock);
	busy = ctx->n_pd || ctx->n_cq || ctx->n_qp || ctx->n_srq || ctx->n_mr ||
	       ctx->n_channel;
	pthread_mutex_unlock(&ctx->lock);
	if (busy)
		return -EBUSY;
	ctx_engines_destroy(ctx);
	ctx_async_purge(ctx, NULL);
	mr_table_destroy(ctx->mrs);
	close(ctx->async_fd);
	pthread_mutex_destroy(&ctx->lock);
	pthread_mutex_destroy(&ctx->conn_lock);
	iw_free(ctx);
	return 0;
}

IWARP_EXPORT int iwarp_query_context(struct iwarp_context *ctx,
				     struct iwarp_context_attr *attr)
{
	if (!ctx || !attr)
		return -EINVAL;
	*attr = ctx->attr;
	return 0;
}

IWARP_EXPORT int iwarp_progress(struct iwarp_context *ctx)
{
	if (!ctx)
		return -EINVAL;
	if (ctx->attr.progress != IWARP_PROGRESS_INLINE)
		return 0; /* the progress thread owns the engine */
	return engine_progress(ctx->engine);
}

IWARP_EXPORT int iwarp_query_device(struct iwarp_context *ctx,
				    struct iwarp_device_attr *attr)
{
	if (!ctx || !attr)
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	snprintf(attr->fw_ver, sizeof(attr->fw_ver), "libiwarp %s",
		 PACKAGE_VERSION);
	attr->max_mr_size = UINT64_MAX;
	attr->page_size_cap = ~(uint64_t)0xfff; /* any page size >= 4 KiB */
	attr->max_qp = IW_MAX_QP;
	attr->max_qp_wr = IW_MAX_QP_WR;
	attr->max_sge = IW_MAX_SGE;
	attr->max_sge_rd = IW_MAX_SGE_RD;
	attr->max_cq = IW_MAX_CQ;
	attr->max_cqe = IW_MAX_CQE;
	attr->max_mr = IW_MAX_MR - 1; /* index 0 is never used */
	attr->max_pd = IW_MAX_PD;
	attr->max_qp_rd_atom = IW_MAX_IRD_ORD;
	attr->max_qp_init_rd_atom = IW_MAX_IRD_ORD;
	/* RFC 7306 atomics share IRD/ORD with Reads (max_qp_rd_atom) and are
	 * atomic against every atomic of the library (rdmap_atomic_exec) */
	attr->atomic_cap =
		ctx->attr.rdmap_ext ? IWARP_ATOMIC_GLOB : IWARP_ATOMIC_NONE;
	attr->masked_atomic_cap = attr->atomic_cap;
	attr->max_srq = IW_MAX_SRQ;
	attr->max_srq_wr = IW_MAX_SRQ_WR;
	attr->max_srq_sge = IW_MAX_SGE;
	attr->max_inline_data = IW_MAX_INLINE;
	/* RFC 6581 §5: enhanced mode carries IRD/ORD in 4 octets of it */
	attr->max_private_data = (int)ctx->attr.max_private_data -
				 (ctx->attr.mpa_rev == 2 ? 4 : 0);
	if (attr->max_private_data < 0)
		attr->max_private_data = 0;
	attr->transport_type = IWARP_TRANSPORT_IWARP;
	attr->node_type = IWARP_NODE_RNIC;
	return 0;
}

int ctx_count(struct iwarp_context *ctx, int *counter, int delta, int max)
{
	int err = 0;

	pthread_mutex_lock(&ctx->lock);
	if (delta > 0 && *counter + delta > max)
		err = -ENOMEM;
	else
		*counter += delta;
	pthread_mutex_unlock(&ctx->lock);
	return err;
}
