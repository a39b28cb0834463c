/*
 * compat/compat_priv.h: what the compatibility libibverbs.so.1
 * (compat/verbs/) shares with the compatibility librdmacm.so.1
 * (compat/rdmacm/).
 *
 * Both libraries are built on the public libiwarp API. librdmacm creates
 * connected QPs with iwarp_cm_create_qp() and hands them to applications
 * as struct ibv_qp, so it needs the native objects under the ibverbs ones
 * and a way to wrap a native QP. These functions are exported by
 * libibverbs.so.1 in the private version node IWARP_COMPAT_PRIVATE (not
 * for applications; no man page).
 */
#ifndef IWARP_COMPAT_PRIV_H
#define IWARP_COMPAT_PRIV_H

#include <infiniband/verbs.h>
#include <iwarp/iwarp.h>

/* The native object under an ibverbs object created by the compat
 * libibverbs; NULL with errno EINVAL when |x| is NULL or not ours. */
struct iwarp_context *iwc_native_context(struct ibv_context *ctx);
struct iwarp_pd *iwc_native_pd(struct ibv_pd *pd);
struct iwarp_cq *iwc_native_cq(struct ibv_cq *cq);
struct iwarp_srq *iwc_native_srq(struct ibv_srq *srq);
struct iwarp_qp *iwc_native_qp(struct ibv_qp *qp);

/*
 * Wraps native QP |iqp| (already created on iwc_native_pd(pd)) as an
 * ibv_qp of |pd|: qp_context, send_cq, recv_cq, srq, qp_type and
 * cap from |attr|; qp_num from the native QP. ibv_post_send/recv,
 * ibv_modify_qp, ibv_query_qp work on it as on any QP of the library.
 * ibv_destroy_qp() on the wrapper calls |destroy|(|arg|) (which destroys
 * the native QP, e.g. through iwarp_cm_destroy_qp) and, when that
 * returns 0, frees the wrapper. NULL with errno on failure.
 */
struct ibv_qp *iwc_qp_wrap(struct ibv_pd *pd, struct iwarp_qp *iqp,
			   const struct ibv_qp_init_attr *attr,
			   int (*destroy)(void *arg), void *arg);

#endif /* IWARP_COMPAT_PRIV_H */
