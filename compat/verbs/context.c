/*
 * compat/verbs/context.c: ibv_open_device / ibv_close_device and the
 * queries of the device and its one port.
 *
 * Each ibv_open_device() opens its own native context (its own progress
 * engine), so two opens are as independent as two opens of a hardware
 * device. The context is a struct verbs_context (abi_compat says so) whose
 * legacy ops table reaches the data path, and whose extended part answers
 * query_port and query_device_ex; every other extended op is NULL, which
 * the inline functions of <infiniband/verbs.h> report as EOPNOTSUPP.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/verbs/iwc.h"

struct iwc_context *iwc_ctx(struct ibv_context *ctx)
{
	struct iwc_context *c;

	if (!ctx || ctx->device != iwc_device() ||
	    ctx->abi_compat != __VERBS_ABI_IS_EXTENDED)
		return NULL;
	c = IWC_CONTAINER(ctx, struct iwc_context, vctx.context);
	return c->magic == IWC_MAGIC_CTX ? c : NULL;
}

IWC_EXPORT struct iwarp_context *iwc_native_context(struct ibv_context *ctx)
{
	struct iwc_context *c = iwc_ctx(ctx);

	if (!c) {
		errno = EINVAL;
		return NULL;
	}
	return c->native;
}

IWC_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct iwc_context *c;
	struct ibv_context *ctx;
	int err;

	if (device != iwc_device()) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->native = iwarp_open_context(NULL);
	if (!c->native) {
		err = errno;
		free(c);
		errno = err;
		return NULL;
	}
	c->magic = IWC_MAGIC_CTX;
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.query_port = iwc_op_query_port;
	c->vctx.query_device_ex = iwc_op_query_device_ex;
	ctx = &c->vctx.context;
	ctx->device = device;
	ctx->cmd_fd = -1;
	ctx->async_fd = iwarp_async_fd(c->native);
	ctx->num_comp_vectors = 1;
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->ops.poll_cq = iwc_op_poll_cq;
	ctx->ops.req_notify_cq = iwc_op_req_notify_cq;
	ctx->ops.post_send = iwc_op_post_send;
	ctx->ops.post_recv = iwc_op_post_recv;
	ctx->ops.post_srq_recv = iwc_op_post_srq_recv;
	ctx->ops.alloc_mw = iwc_op_alloc_mw;
	ctx->ops.dealloc_mw = iwc_op_dealloc_mw;
	ctx->ops.bind_mw = iwc_op_bind_mw;
	return ctx;
}

IWC_EXPORT int ibv_close_device(struct ibv_context *context)
{
	struct iwc_context *c = iwc_ctx(context);
	int ret;

	if (!c)
		return EINVAL;
	ret = iwarp_close_context(c->native);
	if (ret < 0)
		return iwc_errno(ret);
	c->magic = 0;
	pthread_mutex_destroy(&context->mutex);
	free(c);
	return 0;
}

static void fill_device_attr(const struct iwarp_device_attr *n,
			     struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", n->fw_ver);
	a->node_guid = htobe64(iwc_node_guid());
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = n->max_mr_size;
	a->page_size_cap = n->page_size_cap;
	a->vendor_id = n->vendor_id;
	a->vendor_part_id = n->vendor_part_id;
	a->hw_ver = n->hw_ver;
	a->max_qp = n->max_qp;
	a->max_qp_wr = n->max_qp_wr;
	/* RFC 5040 §5.3 Send with Invalidate, local invalidate and type 2
	 * windows are the memory management extensions */
	a->device_cap_flags = IBV_DEVICE_SRQ_RESIZE | IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B |
			      IBV_DEVICE_MEM_MGT_EXTENSIONS;
	a->max_sge = n->max_sge;
	a->max_sge_rd = n->max_sge_rd;
	a->max_cq = n->max_cq;
	a->max_cqe = n->max_cqe;
	a->max_mr = n->max_mr;
	a->max_mw = n->max_mr;
	a->max_pd = n->max_pd;
	a->max_qp_rd_atom = n->max_qp_rd_atom;
	a->max_res_rd_atom = n->max_qp_rd_atom * n->max_qp;
	a->max_qp_init_rd_atom = n->max_qp_init_rd_atom;
	a->atomic_cap = n->atomic_cap == IWARP_ATOMIC_GLOB  ? IBV_ATOMIC_GLOB
			: n->atomic_cap == IWARP_ATOMIC_HCA ? IBV_ATOMIC_HCA
							    : IBV_ATOMIC_NONE;
	a->max_srq = n->max_srq;
	a->max_srq_wr = n->max_srq_wr;
	a->max_srq_sge = n->max_srq_sge;
	a->max_pkeys = 1;
	a->phys_port_cnt = 1;
}

IWC_EXPORT int ibv_query_device(struct ibv_context *context,
				struct ibv_device_attr *device_attr)
{
	struct iwc_context *c = iwc_ctx(context);
	struct iwarp_device_attr n;
	int ret;

	if (!c || !device_attr)
		return EINVAL;
	ret = iwarp_query_device(c->native, &n);
	if (ret < 0)
		return iwc_errno(ret);
	fill_device_attr(&n, device_attr);
	return 0;
}

int iwc_op_query_device_ex(struct ibv_context *context,
			   const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex full;
	int ret;

	if (input && input->comp_mask)
		return EINVAL;
	if (!attr || attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	memset(&full, 0, sizeof(full));
	ret = ibv_query_device(context, &full.orig_attr);
	if (ret)
		return ret;
	full.phys_port_cnt_ex = 1;
	memcpy(attr, &full,
	       attr_size < sizeof(full) ? attr_size : sizeof(full));
	if (attr_size > sizeof(full))
		memset((char *)attr + sizeof(full), 0,
		       attr_size - sizeof(full));
	return 0;
}

static void fill_port_attr(const struct iwarp_device_attr *n,
			   struct ibv_port_attr *p)
{
	memset(p, 0, sizeof(*p));
	p->state = IBV_PORT_ACTIVE;
	p->max_mtu = IBV_MTU_4096;
	/* the largest ibverbs MTU an Ethernet frame of 1500 octets holds;
	 * iWARP itself segments by the TCP MSS (RFC 5044 §6) */
	p->active_mtu = IBV_MTU_1024;
	p->gid_tbl_len = 1;
	p->max_msg_sz = n->max_mr_size > UINT32_MAX ? UINT32_MAX
						    : (uint32_t)n->max_mr_size;
	p->pkey_tbl_len = 1;
	/* ibverbs encodings: width 2 = 4 lanes, speed 4 = 10 Gb/s a lane */
	p->active_width = 2;
	p->active_speed = 4;
	p->phys_state = 5; /* LinkUp */
	p->link_layer = IBV_LINK_LAYER_ETHERNET;
}

int iwc_op_query_port(struct ibv_context *context, uint8_t port_num,
		      struct ibv_port_attr *port_attr, size_t port_attr_len)
{
	struct iwc_context *c = iwc_ctx(context);
	struct iwarp_device_attr n;
	struct ibv_port_attr full;
	int ret;

	if (!c || !port_attr || port_num != 1)
		return EINVAL;
	ret = iwarp_query_device(c->native, &n);
	if (ret < 0)
		return iwc_errno(ret);
	fill_port_attr(&n, &full);
	memcpy(port_attr, &full,
	       port_attr_len < sizeof(full) ? port_attr_len : sizeof(full));
	return 0;
}

/* The exported symbol: called by the inline ibv_query_port() only when the
 * context has no query_port op, and by binaries built before it existed,
 * whose struct ends before port_cap_flags2. */
#undef ibv_query_port
IWC_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
			      struct _compat_ibv_port_attr *port_attr)
{
	return iwc_op_query_port(
		context, port_num, (struct ibv_port_attr *)(void *)port_attr,
		offsetof(struct ibv_port_attr, port_cap_flags2));
}

IWC_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num,
			     int index, union ibv_gid *gid)
{
	if (!iwc_ctx(context) || !gid || port_num != 1 || index != 0)
		return EINVAL;
	/* iWARP devices carry the MAC address of their port as GID */
	memset(gid, 0, sizeof(*gid));
	iwc_node_mac(gid->raw);
	return 0;
}

IWC_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
				 uint32_t gid_index,
				 struct ibv_gid_entry *entry, uint32_t flags,
				 size_t entry_size)
{
	struct ibv_gid_entry e;
	int ret;

	if (!entry || flags || port_num > 255)
		return EINVAL;
	memset(&e, 0, sizeof(e));
	ret = ibv_query_gid(context, (uint8_t)port_num, (int)gid_index, &e.gid);
	if (ret)
		return ret == EINVAL && iwc_ctx(context) && port_num == 1
			       ? ENODATA
			       : ret;
	e.gid_index = gid_index;
	e.port_num = port_num;
	e.gid_type = IBV_GID_TYPE_IB;
	memcpy(entry, &e, entry_size < sizeof(e) ? entry_size : sizeof(e));
	return 0;
}

IWC_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context,
					struct ibv_gid_entry *entries,
					size_t max_entries, uint32_t flags,
					size_t entry_size)
{
	int ret;

	if (!entries || flags || entry_size < sizeof(struct ibv_gid_entry))
		return -EINVAL;
	if (max_entries < 1)
		return -EINVAL;
	ret = _ibv_query_gid_ex(context, 1, 0, entries, 0, entry_size);
	return ret ? -ret : 1;
}

IWC_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num,
			      int index, __be16 *pkey)
{
	if (!iwc_ctx(context) || !pkey || port_num != 1 || index != 0)
		return EINVAL;
	*pkey = htobe16(0xffff); /* the default (full member) P_Key */
	return 0;
}

IWC_EXPORT int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num,
				  __be16 pkey)
{
	if (!iwc_ctx(context) || port_num != 1)
		return -EINVAL;
	return (be16toh(pkey) & 0x7fff) == 0x7fff ? 0 : -ENOENT;
}
