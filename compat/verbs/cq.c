/*
 * compat/verbs/cq.c: completion channels and completion queues of the
 * compat libibverbs. Work completion statuses and opcodes have the
 * ibverbs values natively; poll_cq copies each native completion into the
 * caller's struct ibv_wc through a small on-stack batch.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat/verbs/iwc.h"

/* completions per native poll when they cannot be converted in place */
#define IWC_POLL_BATCH 32

/* the wc_flags ibverbs defines with the native values */
#define IWC_WC_FLAGS (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)

_Static_assert(IBV_WC_SEND == (int)IWARP_WC_SEND &&
		       IBV_WC_RDMA_WRITE == (int)IWARP_WC_RDMA_WRITE &&
		       IBV_WC_RDMA_READ == (int)IWARP_WC_RDMA_READ &&
		       IBV_WC_COMP_SWAP == (int)IWARP_WC_COMP_SWAP &&
		       IBV_WC_FETCH_ADD == (int)IWARP_WC_FETCH_ADD &&
		       IBV_WC_BIND_MW == (int)IWARP_WC_BIND_MW &&
		       IBV_WC_LOCAL_INV == (int)IWARP_WC_LOCAL_INV &&
		       IBV_WC_RECV == (int)IWARP_WC_RECV &&
		       IBV_WC_RECV_RDMA_WITH_IMM ==
			       (int)IWARP_WC_RECV_RDMA_WITH_IMM,
	       "work completion opcodes differ");
_Static_assert(IBV_WC_SUCCESS == (int)IWARP_WC_SUCCESS &&
		       IBV_WC_LOC_LEN_ERR == (int)IWARP_WC_LOC_LEN_ERR &&
		       IBV_WC_LOC_QP_OP_ERR == (int)IWARP_WC_LOC_QP_OP_ERR &&
		       IBV_WC_LOC_PROT_ERR == (int)IWARP_WC_LOC_PROT_ERR &&
		       IBV_WC_WR_FLUSH_ERR == (int)IWARP_WC_WR_FLUSH_ERR &&
		       IBV_WC_MW_BIND_ERR == (int)IWARP_WC_MW_BIND_ERR &&
		       IBV_WC_BAD_RESP_ERR == (int)IWARP_WC_BAD_RESP_ERR &&
		       IBV_WC_LOC_ACCESS_ERR == (int)IWARP_WC_LOC_ACCESS_ERR &&
		       IBV_WC_REM_INV_REQ_ERR ==
			       (int)IWARP_WC_REM_INV_REQ_ERR &&
		       IBV_WC_REM_ACCESS_ERR == (int)IWARP_WC_REM_ACCESS_ERR &&
		       IBV_WC_REM_OP_ERR == (int)IWARP_WC_REM_OP_ERR &&
		       IBV_WC_RETRY_EXC_ERR == (int)IWARP_WC_RETRY_EXC_ERR &&
		       IBV_WC_RNR_RETRY_EXC_ERR ==
			       (int)IWARP_WC_RNR_RETRY_EXC_ERR &&
		       IBV_WC_FATAL_ERR == (int)IWARP_WC_FATAL_ERR &&
		       IBV_WC_GENERAL_ERR == (int)IWARP_WC_GENERAL_ERR,
	       "work completion statuses differ");
_Static_assert(IBV_WC_WITH_IMM == (int)IWARP_WC_WITH_IMM &&
		       IBV_WC_WITH_INV == (int)IWARP_WC_WITH_INV,
	       "work completion flags differ");

struct iwc_cq *iwc_cq(struct ibv_cq *cq)
{
	struct iwc_cq *c = (struct iwc_cq *)(void *)cq;

	return c && c->magic == IWC_MAGIC_CQ ? c : NULL;
}

static struct iwc_channel *iwc_chan(struct ibv_comp_channel *ch)
{
	struct iwc_channel *c = (struct iwc_channel *)(void *)ch;

	return c && c->magic == IWC_MAGIC_CHAN ? c : NULL;
}

static void wc_convert(const struct iwarp_wc *s, struct ibv_wc *d)
{
	d->wr_id = s->wr_id;
	d->status = (enum ibv_wc_status)s->status;
	d->opcode = (enum ibv_wc_opcode)s->opcode;
	d->vendor_err = s->vendor_err;
	d->byte_len = s->byte_len;
	if (s->wc_flags & IWARP_WC_WITH_INV)
		d->invalidated_rkey = s->invalidated_rkey;
	else
		d->imm_data = s->imm_data;
	d->qp_num = s->qp_num;
	d->src_qp = s->src_qp;
	d->wc_flags = s->wc_flags & IWC_WC_FLAGS;
	d->pkey_index = 0;
	d->slid = 0;
	d->sl = 0;
	d->dlid_path_bits = 0;
}

IWC_EXPORT struct iwarp_cq *iwc_native_cq(struct ibv_cq *cq)
{
	struct iwc_cq *c = iwc_cq(cq);

	if (!c) {
		errno = EINVAL;
		return NULL;
	}
	return c->native;
}

IWC_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	struct iwc_context *c = iwc_ctx(context);
	struct iwc_channel *ch;
	int err;

	if (!c) {
		errno = EINVAL;
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	ch->native = iwarp_create_comp_channel(c->native);
	if (!ch->native) {
		err = errno;
		free(ch);
		errno = err;
		return NULL;
	}
	ch->magic = IWC_MAGIC_CHAN;
	ch->ch.context = context;
	ch->ch.fd = ch->native->fd;
	return &ch->ch;
}

IWC_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct iwc_channel *ch = iwc_chan(channel);
	int ret;

	if (!ch)
		return EINVAL;
	ret = iwarp_destroy_comp_channel(ch->native);
	if (ret < 0)
		return iwc_errno(ret); /* EBUSY: CQs still use it */
	ch->magic = 0;
	free(ch);
	return 0;
}

IWC_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
					void *cq_context,
					struct ibv_comp_channel *channel,
					int comp_vector)
{
	struct iwc_context *c = iwc_ctx(context);
	struct iwc_channel *ch = NULL;
	struct iwc_cq *q;
	int err;

	if (!c || (channel && !(ch = iwc_chan(channel))) || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	/* the native cq_context leads back to the wrapper (ibv_get_cq_event) */
	q->native =
		iwarp_create_cq(c->native, cqe, q, ch ? ch->native : NULL, 0);
	if (!q->native) {
		err = errno;
		free(q);
		errno = err;
		return NULL;
	}
	q->magic = IWC_MAGIC_CQ;
	q->cq.context = context;
	q->cq.channel = channel;
	q->cq.cq_context = cq_context;
	q->cq.cqe = q->native->cqe;
	pthread_mutex_init(&q->cq.mutex, NULL);
	pthread_cond_init(&q->cq.cond, NULL);
	return &q->cq;
}

IWC_EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	struct iwc_cq *q = iwc_cq(cq);
	int ret;

	if (!q)
		return EINVAL;
	ret = iwarp_resize_cq(q->native, cqe);
	if (ret < 0)
		return iwc_errno(ret);
	cq->cqe = q->native->cqe;
	return 0;
}

IWC_EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct iwc_cq *q = iwc_cq(cq);
	int ret;

	if (!q)
		return EINVAL;
	ret = iwarp_destroy_cq(q->native);
	if (ret < 0)
		return iwc_errno(ret); /* EBUSY: QPs still use it */
	q->magic = 0;
	pthread_cond_destroy(&cq->cond);
	pthread_mutex_destroy(&cq->mutex);
	free(q);
	return 0;
}

IWC_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel,
				struct ibv_cq **cq, void **cq_context)
{
	struct iwc_channel *ch = iwc_chan(channel);
	struct iwarp_cq *ncq;
	void *nctx;
	struct iwc_cq *q;
	int ret;

	if (!ch || !cq || !cq_context) {
		errno = EINVAL;
		return -1;
	}
	ret = iwarp_get_cq_event(ch->native, &ncq, &nctx);
	if (ret < 0) {
		errno = iwc_errno(ret);
		return -1;
	}
	q = nctx;
	*cq = &q->cq;
	*cq_context = q->cq.cq_context;
	return 0;
}

IWC_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	struct iwc_cq *q = iwc_cq(cq);

	if (q)
		iwarp_ack_cq_events(q->native, nevents);
}

/* The native completions are written into the caller's array and
 * converted in place, each from a copy of itself: no second buffer, one
 * native call per poll. */
_Static_assert(sizeof(struct iwarp_wc) <= sizeof(struct ibv_wc) &&
		       _Alignof(struct iwarp_wc) <= _Alignof(struct ibv_wc),
	       "an ibv_wc array cannot hold native completions in place");

int iwc_op_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct iwc_cq *q = (struct iwc_cq *)(void *)cq;
	struct iwarp_wc nwc[IWC_POLL_BATCH];
	int n;

	if (num_entries < 0 || (num_entries && !wc))
		return -EINVAL;
	if (sizeof(struct iwarp_wc) == sizeof(struct ibv_wc)) {
		n = iwarp_poll_cq(q->native, num_entries,
				  (struct iwarp_wc *)(void *)wc);
		for (int i = 0; i < n; i++) {
			struct iwarp_wc s;

			memcpy(&s, &((struct iwarp_wc *)(void *)wc)[i],
			       sizeof(s));
			wc_convert(&s, &wc[i]);
		}
		return n;
	}
	/* (a native completion smaller than ibv_wc: through a batch) */
	n = iwarp_poll_cq(q->native,
			  num_entries < IWC_POLL_BATCH ? num_entries
						       : IWC_POLL_BATCH,
			  nwc);
	for (int i = 0; i < n; i++)
		wc_convert(&nwc[i], &wc[i]);
	return n;
}

int iwc_op_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct iwc_cq *q = (struct iwc_cq *)(void *)cq;

	return iwc_errno(iwarp_req_notify_cq(q->native, solicited_only));
}
