/*
 * compat/verbs/iwc.h: the objects of the compat libibverbs.so.1.
 *
 * Each ibverbs object the library hands out is the first member of a
 * wrapper that also holds the native libiwarp object under it, so the
 * inline functions of <infiniband/verbs.h> (which only see the ibverbs
 * struct and its context's ops table) reach our code, and our code finds
 * the native object by container arithmetic. A magic word after the
 * ibverbs struct tells our objects from foreign ones (iwc_native_*()).
 */
#ifndef IWC_VERBS_IWC_H
#define IWC_VERBS_IWC_H

#include <infiniband/verbs.h>
#include <iwarp/iwarp.h>
#include <stddef.h>

#include "compat/compat_priv.h"

#define IWC_EXPORT __attribute__((visibility("default")))

enum iwc_magic {
	IWC_MAGIC_CTX = 0x69774378,  /* "iwCx" */
	IWC_MAGIC_PD = 0x69775064,   /* "iwPd" */
	IWC_MAGIC_CQ = 0x69774371,   /* "iwCq" */
	IWC_MAGIC_SRQ = 0x69775372,  /* "iwSr" */
	IWC_MAGIC_QP = 0x69775170,   /* "iwQp" */
	IWC_MAGIC_MR = 0x69774d72,   /* "iwMr" */
	IWC_MAGIC_MW = 0x69774d77,   /* "iwMw" */
	IWC_MAGIC_CHAN = 0x69774368, /* "iwCh" */
};

struct iwc_context {
	struct verbs_context vctx; /* vctx.context is what applications see */
	uint32_t magic;
	struct iwarp_context *native;
};

struct iwc_pd {
	struct ibv_pd pd;
	uint32_t magic;
	struct iwarp_pd *native;
};

struct iwc_mr {
	struct ibv_mr mr;
	uint32_t magic;
	struct iwarp_mr *native;
};

struct iwc_mw {
	struct ibv_mw mw;
	uint32_t magic;
	struct iwarp_mw *native;
};

struct iwc_channel {
	struct ibv_comp_channel ch;
	uint32_t magic;
	struct iwarp_comp_channel *native;
};

struct iwc_cq {
	struct ibv_cq cq;
	uint32_t magic;
	struct iwarp_cq *native;
};

struct iwc_srq {
	struct ibv_srq srq;
	uint32_t magic;
	struct iwarp_srq *native;
};

struct iwc_qp {
	struct ibv_qp qp;
	uint32_t magic;
	struct iwarp_qp *native;
	struct ibv_qp_cap cap; /* what creation granted (ibv_query_qp) */
	int sq_sig_all;
	/* iwc_qp_wrap: destroys the native QP; NULL = iwarp_destroy_qp */
	int (*destroy)(void *arg);
	void *arg;
};

#define IWC_CONTAINER(ptr, type, member)                                       \
	((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* The wrapper of an ibverbs object of this library, or NULL (NULL or
 * foreign object). */
struct iwc_context *iwc_ctx(struct ibv_context *ctx);
struct iwc_pd *iwc_pd(struct ibv_pd *pd);
struct iwc_cq *iwc_cq(struct ibv_cq *cq);
struct iwc_srq *iwc_srq(struct ibv_srq *srq);
struct iwc_qp *iwc_qp(struct ibv_qp *qp);
struct iwc_mr *iwc_mr(struct ibv_mr *mr);
struct iwc_mw *iwc_mw(struct ibv_mw *mw);

/* The one device (device.c). */
struct ibv_device *iwc_device(void);
uint64_t iwc_node_guid(void); /* host order */
void iwc_node_mac(uint8_t mac[6]);

/* Native return value (0, count or negative) to an ibverbs positive errno. */
static inline int iwc_errno(int ret)
{
	if (ret >= 0)
		return 0;
	if (ret > -4096)
		return -ret;
	return EIO; /* a library code (enum iwarp_error) */
}

/* The context ops (context.c fills them from these). */
int iwc_op_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int iwc_op_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int iwc_op_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr);
int iwc_op_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr);
int iwc_op_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
struct ibv_mw *iwc_op_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int iwc_op_dealloc_mw(struct ibv_mw *mw);
int iwc_op_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		   struct ibv_mw_bind *mw_bind);
int iwc_op_query_port(struct ibv_context *context, uint8_t port_num,
		      struct ibv_port_attr *port_attr, size_t port_attr_len);
int iwc_op_query_device_ex(struct ibv_context *context,
			   const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size);

#endif /* IWC_VERBS_IWC_H */
