/*
 * compat/verbs/misc.c: asynchronous events, fork support, the rate
 * conversions, and the rest of the libibverbs ABI: entry points for
 * InfiniBand-only features (address handles, multicast, ECE, importing
 * objects of another process, the kernel command marshalling) exist so
 * that programs linked against libibverbs.so.1 load, and fail cleanly
 * with EOPNOTSUPP (or NULL and errno EOPNOTSUPP) when called.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "compat/verbs/iwc.h"

/* libibverbs symbols the installed headers no longer declare */
struct ib_uverbs_qp_attr;
struct ib_uverbs_ah_attr;
struct ib_user_path_rec;
struct ibv_sa_path_rec;
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
				struct ib_uverbs_qp_attr *src);
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
				struct ib_uverbs_ah_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
				 struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
			       struct ibv_sa_path_rec *src);
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);
void ibv_register_driver(const char *name,
			 void *(*init_func)(const char *, int));
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

/* ---- asynchronous events ---- */

static enum ibv_event_type event_from_native(enum iwarp_event_type t)
{
	switch (t) {
	case IWARP_EVENT_CQ_ERR:
		return IBV_EVENT_CQ_ERR;
	case IWARP_EVENT_QP_FATAL:
		return IBV_EVENT_QP_FATAL;
	case IWARP_EVENT_QP_REQ_ERR:
		return IBV_EVENT_QP_REQ_ERR;
	case IWARP_EVENT_QP_ACCESS_ERR:
		return IBV_EVENT_QP_ACCESS_ERR;
	case IWARP_EVENT_COMM_EST:
		return IBV_EVENT_COMM_EST;
	case IWARP_EVENT_SQ_DRAINED:
		return IBV_EVENT_SQ_DRAINED;
	case IWARP_EVENT_QP_LAST_WQE_REACHED:
		return IBV_EVENT_QP_LAST_WQE_REACHED;
	case IWARP_EVENT_SRQ_LIMIT_REACHED:
		return IBV_EVENT_SRQ_LIMIT_REACHED;
	case IWARP_EVENT_SRQ_ERR:
		return IBV_EVENT_SRQ_ERR;
	case IWARP_EVENT_QP_TX_HELD:
		break; /* no ibverbs equivalent: event_element drops it */
	}
	return IBV_EVENT_DEVICE_FATAL;
}

/* The ibverbs element of a native event; false when the native object
 * is none of ours (a native QP nobody wrapped yet): such events are
 * dropped, an application could not name their object. */
static bool event_element(const struct iwarp_async_event *ev,
			  struct ibv_async_event *event)
{
	/* libiwarp's report of a responder's held first FPDUs (iwarp(7),
	 * "Who sends first") has no ibverbs event; rdma-core programs never
	 * expect one */
	if (ev->event_type == IWARP_EVENT_QP_TX_HELD)
		return false;
	if (ev->event_type == IWARP_EVENT_CQ_ERR) {
		struct iwc_cq *q =
			ev->element.cq ? ev->element.cq->cq_context : NULL;

		if (!q || q->magic != IWC_MAGIC_CQ ||
		    q->native != ev->element.cq)
			return false;
		event->element.cq = &q->cq;
	} else if (ev->event_type == IWARP_EVENT_SRQ_ERR ||
		   ev->event_type == IWARP_EVENT_SRQ_LIMIT_REACHED) {
		struct iwc_srq *s =
			ev->element.srq ? ev->element.srq->srq_context : NULL;

		if (!s || s->magic != IWC_MAGIC_SRQ ||
		    s->native != ev->element.srq)
			return false;
		event->element.srq = &s->srq;
	} else {
		struct iwc_qp *q =
			ev->element.qp ? ev->element.qp->qp_context : NULL;

		if (!q || q->magic != IWC_MAGIC_QP ||
		    q->native != ev->element.qp)
			return false;
		event->element.qp = &q->qp;
	}
	return true;
}

IWC_EXPORT int ibv_get_async_event(struct ibv_context *context,
				   struct ibv_async_event *event)
{
	struct iwc_context *c = iwc_ctx(context);
	struct iwarp_async_event ev;
	int ret;

	if (!c || !event) {
		errno = EINVAL;
		return -1;
	}
	do {
		ret = iwarp_get_async_event(c->native, &ev);
		if (ret < 0) {
			errno = iwc_errno(ret);
			return -1;
		}
		memset(event, 0, sizeof(*event));
		event->event_type = event_from_native(ev.event_type);
	} while (!event_element(&ev, event));
	return 0;
}

IWC_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	/* the native events hold no reference on their element */
	(void)event;
}

/* ---- fork ---- */

/* Registration pins nothing in a kernel (RFC 5040 STags live in this
 * process), so fork() needs no preparation. */
IWC_EXPORT int ibv_fork_init(void)
{
	return 0;
}

IWC_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

IWC_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	(void)base, (void)size;
	return 0;
}

IWC_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	(void)base, (void)size;
	return 0;
}

/* ---- rate conversions (the values of enum ibv_rate) ---- */

static const struct {
	enum ibv_rate rate;
	int mult; /* of 2.5 Gb/s */
	int mbps;
} rates[] = {
	{IBV_RATE_2_5_GBPS, 1, 2500},	    {IBV_RATE_5_GBPS, 2, 5000},
	{IBV_RATE_10_GBPS, 4, 10000},	    {IBV_RATE_20_GBPS, 8, 20000},
	{IBV_RATE_30_GBPS, 12, 30000},	    {IBV_RATE_40_GBPS, 16, 40000},
	{IBV_RATE_60_GBPS, 24, 60000},	    {IBV_RATE_80_GBPS, 32, 80000},
	{IBV_RATE_120_GBPS, 48, 120000},    {IBV_RATE_14_GBPS, 0, 14062},
	{IBV_RATE_56_GBPS, 0, 56250},	    {IBV_RATE_112_GBPS, 0, 112500},
	{IBV_RATE_168_GBPS, 0, 168750},	    {IBV_RATE_25_GBPS, 10, 25781},
	{IBV_RATE_100_GBPS, 40, 103125},    {IBV_RATE_200_GBPS, 80, 206250},
	{IBV_RATE_300_GBPS, 120, 309375},   {IBV_RATE_28_GBPS, 11, 28125},
	{IBV_RATE_50_GBPS, 20, 53125},	    {IBV_RATE_400_GBPS, 160, 425000},
	{IBV_RATE_600_GBPS, 240, 637500},   {IBV_RATE_800_GBPS, 320, 850000},
	{IBV_RATE_1200_GBPS, 480, 1275000},
};

IWC_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].rate == rate)
			return rates[i].mult ? rates[i].mult : -1;
	return -1;
}

IWC_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].mult && rates[i].mult == mult)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

IWC_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

IWC_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/* ---- InfiniBand-only features: present, unsupported ---- */

IWC_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd,
					struct ibv_ah_attr *attr)
{
	(void)pd, (void)attr;
	errno = EOPNOTSUPP; /* address handles serve UD QPs */
	return NULL;
}

IWC_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd,
						struct ibv_wc *wc,
						struct ibv_grh *grh,
						uint8_t port_num)
{
	(void)pd, (void)wc, (void)grh, (void)port_num;
	errno = EOPNOTSUPP;
	return NULL;
}

IWC_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context,
				   uint8_t port_num, struct ibv_wc *wc,
				   struct ibv_grh *grh,
				   struct ibv_ah_attr *ah_attr)
{
	(void)context, (void)port_num, (void)wc, (void)grh, (void)ah_attr;
	return EOPNOTSUPP;
}

IWC_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	(void)ah;
	return EOPNOTSUPP;
}

IWC_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
				uint16_t lid)
{
	(void)qp, (void)gid, (void)lid;
	return EOPNOTSUPP;
}

IWC_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
				uint16_t lid)
{
	(void)qp, (void)gid, (void)lid;
	return EOPNOTSUPP;
}

IWC_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
					   struct ibv_ah_attr *attr,
					   uint8_t eth_mac[ETHERNET_LL_SIZE],
					   uint16_t *vid)
{
	(void)context, (void)attr, (void)eth_mac, (void)vid;
	return EOPNOTSUPP;
}

IWC_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp, (void)ece;
	return EOPNOTSUPP;
}

IWC_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp, (void)ece;
	return EOPNOTSUPP;
}

IWC_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	(void)qp;
	errno = EOPNOTSUPP; /* no QP is created with ibv_create_qp_ex() */
	return NULL;
}

IWC_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp,
					  enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp, (void)op, (void)flags;
	/* RFC 5040 §5.5: placement order of tagged data is not promised,
	 * only delivery order */
	return 0;
}

IWC_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = EOPNOTSUPP;
	return NULL;
}

IWC_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context,
					uint32_t pd_handle)
{
	(void)context, (void)pd_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

IWC_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

IWC_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd, (void)mr_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

IWC_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

IWC_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context,
					uint32_t dm_handle)
{
	(void)context, (void)dm_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

IWC_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

/* Kernel command marshalling of libibverbs 1.0: there is no kernel
 * interface here; the copies clear their destination. */
IWC_EXPORT void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
					   struct ib_uverbs_qp_attr *src)
{
	(void)src;
	memset(dst, 0, sizeof(*dst));
}

IWC_EXPORT void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
					   struct ib_uverbs_ah_attr *src)
{
	(void)src;
	memset(dst, 0, sizeof(*dst));
}

IWC_EXPORT void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
					    struct ib_user_path_rec *src)
{
	(void)dst, (void)src;
}

IWC_EXPORT void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
					  struct ibv_sa_path_rec *src)
{
	(void)dst, (void)src;
}

IWC_EXPORT const char *ibv_get_sysfs_path(void)
{
	return "/sys";
}

IWC_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
				   size_t size)
{
	(void)dir, (void)file, (void)buf, (void)size;
	errno = ENOENT; /* the device has no sysfs entry */
	return -1;
}

IWC_EXPORT void ibv_register_driver(const char *name,
				    void *(*init_func)(const char *, int))
{
	(void)name, (void)init_func; /* no provider drivers */
}
