/*
 * compat/rdmacm/addrinfo.c: rdma_getaddrinfo(3) / rdma_freeaddrinfo(3)
 * over getaddrinfo(3). iWARP addresses are IP addresses and ports of the
 * TCP port space, so each result is one IP address: the source with
 * RAI_PASSIVE, else the destination (with the source the hints give).
 * Without node and service, the one result carries the addresses the
 * hints give (rdma_getaddrinfo(3): either node, service or hints must be
 * provided); libfabric's verbs provider asks that way.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "compat/rdmacm/cma.h"

static struct sockaddr *cma_dup_addr(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *copy = malloc(len);

	if (copy)
		memcpy(copy, sa, len);
	return copy;
}

static int cma_gai_errno(int rc)
{
	switch (rc) {
	case EAI_MEMORY:
		return ENOMEM;
	case EAI_FAMILY:
		return EAFNOSUPPORT;
	case EAI_SYSTEM:
		return errno;
	case EAI_AGAIN:
		return EAGAIN;
	default:
		return EADDRNOTAVAIL; /* EAI_NONAME, EAI_SERVICE, ... */
	}
}

/* The result for hints without node and service: their addresses. */
static int cma_addrinfo_from_hints(const struct rdma_addrinfo *hints,
				   struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));

	if (!r)
		return -1;
	r->ai_flags = hints->ai_flags;
	r->ai_family = hints->ai_family;
	r->ai_qp_type = IBV_QPT_RC;
	r->ai_port_space = RDMA_PS_TCP;
	if (hints->ai_src_addr && hints->ai_src_len) {
		r->ai_src_addr =
			cma_dup_addr(hints->ai_src_addr, hints->ai_src_len);
		if (!r->ai_src_addr)
			goto nomem;
		r->ai_src_len = hints->ai_src_len;
		if (!r->ai_family)
			r->ai_family = r->ai_src_addr->sa_family;
	}
	if (hints->ai_dst_addr && hints->ai_dst_len) {
		r->ai_dst_addr =
			cma_dup_addr(hints->ai_dst_addr, hints->ai_dst_len);
		if (!r->ai_dst_addr)
			goto nomem;
		r->ai_dst_len = hints->ai_dst_len;
		if (!r->ai_family)
			r->ai_family = r->ai_dst_addr->sa_family;
	}
	*res = r;
	return 0;
nomem:
	rdma_freeaddrinfo(r);
	errno = ENOMEM;
	return -1;
}

int rdma_getaddrinfo(const char *node, const char *service,
		     const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	struct addrinfo ai_hints, *ai = NULL, *p;
	struct rdma_addrinfo *head = NULL, **tail = &head;
	int passive = hints && (hints->ai_flags & RAI_PASSIVE);
	int rc;

	int from_hints = !node && !service && hints &&
			 ((hints->ai_src_addr && hints->ai_src_len) ||
			  (hints->ai_dst_addr && hints->ai_dst_len));

	if (!res || (!node && !service && !from_hints)) {
		errno = EINVAL;
		return -1;
	}
	if (hints && hints->ai_port_space &&
	    hints->ai_port_space != RDMA_PS_TCP) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	if (hints && hints->ai_qp_type && hints->ai_qp_type != IBV_QPT_RC) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (from_hints)
		return cma_addrinfo_from_hints(hints, res);
	memset(&ai_hints, 0, sizeof(ai_hints));
	ai_hints.ai_socktype = SOCK_STREAM;
	ai_hints.ai_protocol = IPPROTO_TCP;
	if (hints) {
		ai_hints.ai_family = hints->ai_family;
		if (hints->ai_flags & RAI_PASSIVE)
			ai_hints.ai_flags |= AI_PASSIVE;
		if (hints->ai_flags & RAI_NUMERICHOST)
			ai_hints.ai_flags |= AI_NUMERICHOST;
	}
	rc = getaddrinfo(node, service, &ai_hints, &ai);
	if (rc) {
		errno = cma_gai_errno(rc);
		return -1;
	}
	for (p = ai; p; p = p->ai_next) {
		struct rdma_addrinfo *r = calloc(1, sizeof(*r));

		if (!r)
			goto nomem;
		*tail = r;
		tail = &r->ai_next;
		r->ai_flags = hints ? hints->ai_flags : 0;
		r->ai_family = p->ai_family;
		r->ai_qp_type = IBV_QPT_RC;
		r->ai_port_space = RDMA_PS_TCP;
		if (passive) {
			r->ai_src_addr =
				cma_dup_addr(p->ai_addr, p->ai_addrlen);
			if (!r->ai_src_addr)
				goto nomem;
			r->ai_src_len = p->ai_addrlen;
		} else {
			r->ai_dst_addr =
				cma_dup_addr(p->ai_addr, p->ai_addrlen);
			if (!r->ai_dst_addr)
				goto nomem;
			r->ai_dst_len = p->ai_addrlen;
			if (hints && hints->ai_src_addr && hints->ai_src_len) {
				r->ai_src_addr = cma_dup_addr(
					hints->ai_src_addr, hints->ai_src_len);
				if (!r->ai_src_addr)
					goto nomem;
				r->ai_src_len = hints->ai_src_len;
			}
		}
	}
	freeaddrinfo(ai);
	*res = head;
	return 0;
nomem:
	freeaddrinfo(ai);
	rdma_freeaddrinfo(head);
	errno = ENOMEM;
	return -1;
}

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = next;
	}
}
