/*
 * compat/rdmacm/cma.h: internals of the compat librdmacm.so.1.
 *
 * Every librdmacm object is a wrapper whose first member is the structure
 * the application sees (rdma-core 44's <rdma/rdma_cma.h>), so a pointer to
 * it converts back to the wrapper. The wrappers hold the native objects of
 * libiwarp's connection manager (iwarp_cm_*); the ibverbs objects come from
 * the compat libibverbs (compat/compat_priv.h).
 */
#ifndef IWARP_COMPAT_CMA_H
#define IWARP_COMPAT_CMA_H

#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "compat/compat_priv.h"

struct cma_channel {
	struct rdma_event_channel ch; /* ch.fd is the native channel's fd */
	struct iwarp_event_channel *nch;
};

struct cma_qp_link;

struct cma_id {
	struct rdma_cm_id id;
	struct iwarp_cm_id *nid;
	struct cma_channel *chan;
	int sync; /* created with a NULL channel: calls wait for their event */
	struct cma_qp_link
		*link; /* the QP made by rdma_create_qp, under cma_link_lock */
	int own_send_cq,
		own_recv_cq; /* rdma_create_qp made id->send_cq / recv_cq */
};

struct cma_event {
	struct rdma_cm_event ev;
	struct iwarp_cm_event *nev;
};

static inline struct cma_id *cma_id_of(struct rdma_cm_id *id)
{
	return (struct cma_id *)id;
}

static inline struct cma_channel *cma_channel_of(struct rdma_event_channel *ch)
{
	return (struct cma_channel *)ch;
}

/* Sets errno from a native return value (-errno or enum iwarp_error) and
 * returns -1, the librdmacm convention; 0 stays 0. */
int cma_ret(int ret);
/* errno value for a native error code (positive). */
int cma_errno(int ret);

/* A line on stderr ("librdmacm(iwarp): ...") when IWARP_DEBUG is set
 * and not "0", as the native library's debug log. */
void cma_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Sets errno and returns -1 as cma_ret, logging |what| when it fails. */
int cma_ret_log(const char *what, int ret);

/* The process-wide device context (opened on first use through the compat
 * libibverbs) and its default PD (for rdma_create_qp with pd NULL). NULL
 * with errno set on failure. */
struct ibv_context *cma_verbs(void);
struct ibv_pd *cma_default_pd(struct ibv_context *verbs);

/* Copies the native id's addresses into id->route.addr. */
void cma_sync_addr(struct cma_id *cid);

/* Makes a wrapper for the child id of a CONNECT_REQUEST. */
struct cma_id *cma_child_id(struct cma_id *listen, struct iwarp_cm_id *nid);

/* Synchronous ids (channel NULL): waits for the event that answers a call
 * and returns 0 when it is |expect| with status 0, else -1 with errno. */
int cma_sync_wait(struct cma_id *cid, enum rdma_cm_event_type expect);

struct cma_channel *cma_channel_create(void);
void cma_channel_destroy(struct cma_channel *chan);

/* Unlinks the QP of |cid| from the id before the id goes away. */
void cma_qp_unlink(struct cma_id *cid);

#endif /* IWARP_COMPAT_CMA_H */
