/*
 * compat/rdmacm/unsupported.c: the rest of librdmacm's ABI. iWARP has no
 * multicast, no ECE and no IB path records; rsockets and the rdma_create_ep
 * family are not implemented. Each call exists so that programs linked
 * against librdmacm load, and fails cleanly: -1 with errno ENOSYS (or
 * EOPNOTSUPP where the operation cannot exist on iWARP).
 */
#include <errno.h>
#include <poll.h>
#include <sys/select.h>

#include <rdma/rsocket.h>

#include "compat/rdmacm/cma.h"

#define CMA_FAIL(err)                                                          \
	do {                                                                   \
		errno = (err);                                                 \
		return -1;                                                     \
	} while (0)

int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
		   struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	(void)id, (void)res, (void)pd, (void)qp_init_attr;
	CMA_FAIL(ENOSYS);
}

void rdma_destroy_ep(struct rdma_cm_id *id)
{
	/* as rdma_destroy_ep(3): the QP, the SRQ, then the id */
	if (!id)
		return;
	rdma_destroy_qp(id);
	rdma_destroy_srq(id);
	rdma_destroy_id(id);
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	(void)listen, (void)id;
	CMA_FAIL(ENOSYS);
}

int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	(void)id, (void)event;
	CMA_FAIL(ENOSYS);
}

int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr,
			void *context)
{
	(void)id, (void)addr, (void)context;
	CMA_FAIL(EOPNOTSUPP);
}

int rdma_join_multicast_ex(struct rdma_cm_id *id,
			   struct rdma_cm_join_mc_attr_ex *mc_join_attr,
			   void *context)
{
	(void)id, (void)mc_join_attr, (void)context;
	CMA_FAIL(EOPNOTSUPP);
}

int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id, (void)addr;
	CMA_FAIL(EOPNOTSUPP);
}

int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	CMA_FAIL(EOPNOTSUPP);
}

int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	(void)id, (void)ece;
	CMA_FAIL(EOPNOTSUPP);
}

int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
		    uint8_t private_data_len)
{
	(void)id, (void)private_data, (void)private_data_len;
	CMA_FAIL(EOPNOTSUPP);
}

/* rsockets: none can be created, so every rsocket call but the two
 * multiplexers sees a descriptor that is not an rsocket. */
int rsocket(int domain, int type, int protocol)
{
	(void)domain, (void)type, (void)protocol;
	CMA_FAIL(ENOSYS);
}

int rbind(int s, const struct sockaddr *addr, socklen_t len)
{
	(void)s, (void)addr, (void)len;
	CMA_FAIL(ENOSYS);
}

int rlisten(int s, int backlog)
{
	(void)s, (void)backlog;
	CMA_FAIL(ENOSYS);
}

int raccept(int s, struct sockaddr *addr, socklen_t *len)
{
	(void)s, (void)addr, (void)len;
	CMA_FAIL(ENOSYS);
}

int rconnect(int s, const struct sockaddr *addr, socklen_t len)
{
	(void)s, (void)addr, (void)len;
	CMA_FAIL(ENOSYS);
}

int rshutdown(int s, int how)
{
	(void)s, (void)how;
	CMA_FAIL(ENOSYS);
}

int rclose(int s)
{
	(void)s;
	CMA_FAIL(ENOSYS);
}

ssize_t rrecv(int s, void *buf, size_t len, int flags)
{
	(void)s, (void)buf, (void)len, (void)flags;
	CMA_FAIL(ENOSYS);
}

ssize_t rrecvfrom(int s, void *buf, size_t len, int flags, struct sockaddr *src,
		  socklen_t *alen)
{
	(void)s, (void)buf, (void)len, (void)flags, (void)src, (void)alen;
	CMA_FAIL(ENOSYS);
}

ssize_t rrecvmsg(int s, struct msghdr *msg, int flags)
{
	(void)s, (void)msg, (void)flags;
	CMA_FAIL(ENOSYS);
}

ssize_t rsend(int s, const void *buf, size_t len, int flags)
{
	(void)s, (void)buf, (void)len, (void)flags;
	CMA_FAIL(ENOSYS);
}

ssize_t rsendto(int s, const void *buf, size_t len, int flags,
		const struct sockaddr *dst, socklen_t alen)
{
	(void)s, (void)buf, (void)len, (void)flags, (void)dst, (void)alen;
	CMA_FAIL(ENOSYS);
}

ssize_t rsendmsg(int s, const struct msghdr *msg, int flags)
{
	(void)s, (void)msg, (void)flags;
	CMA_FAIL(ENOSYS);
}

ssize_t rread(int s, void *buf, size_t count)
{
	(void)s, (void)buf, (void)count;
	CMA_FAIL(ENOSYS);
}

ssize_t rreadv(int s, const struct iovec *iov, int iovcnt)
{
	(void)s, (void)iov, (void)iovcnt;
	CMA_FAIL(ENOSYS);
}

ssize_t rwrite(int s, const void *buf, size_t count)
{
	(void)s, (void)buf, (void)count;
	CMA_FAIL(ENOSYS);
}

ssize_t rwritev(int s, const struct iovec *iov, int iovcnt)
{
	(void)s, (void)iov, (void)iovcnt;
	CMA_FAIL(ENOSYS);
}

/* No descriptor is an rsocket, so these are poll(2) and select(2). */
int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}

int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	    struct timeval *timeout)
{
	return select(nfds, readfds, writefds, exceptfds, timeout);
}

int rgetpeername(int s, struct sockaddr *addr, socklen_t *len)
{
	(void)s, (void)addr, (void)len;
	CMA_FAIL(ENOSYS);
}

int rgetsockname(int s, struct sockaddr *addr, socklen_t *len)
{
	(void)s, (void)addr, (void)len;
	CMA_FAIL(ENOSYS);
}

int rsetsockopt(int s, int level, int optname, const void *optval,
		socklen_t optlen)
{
	(void)s, (void)level, (void)optname, (void)optval, (void)optlen;
	CMA_FAIL(ENOSYS);
}

int rgetsockopt(int s, int level, int optname, void *optval, socklen_t *optlen)
{
	(void)s, (void)level, (void)optname, (void)optval, (void)optlen;
	CMA_FAIL(ENOSYS);
}

int rfcntl(int s, int cmd, ...)
{
	(void)s, (void)cmd;
	CMA_FAIL(ENOSYS);
}

off_t riomap(int s, void *buf, size_t len, int prot, int flags, off_t offset)
{
	(void)s, (void)buf, (void)len, (void)prot, (void)flags, (void)offset;
	CMA_FAIL(ENOSYS);
}

int riounmap(int s, void *buf, size_t len)
{
	(void)s, (void)buf, (void)len;
	CMA_FAIL(ENOSYS);
}

size_t riowrite(int s, const void *buf, size_t count, off_t offset, int flags)
{
	(void)s, (void)buf, (void)count, (void)offset, (void)flags;
	errno = ENOSYS;
	return 0;
}
