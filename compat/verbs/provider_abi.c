/*
 * compat/verbs/provider_abi.c: the provider interface of libibverbs
 * (version node IBVERBS_PRIVATE_34), which Debian's direct-verbs
 * libraries (libmlx5.so.1, libefa.so.1, libmana.so.1, libmlx4.so.1)
 * import. perftest and libfabric link those libraries, so the dynamic
 * linker needs these symbols to load the programs at all; the libraries'
 * constructors register their drivers (ignored: this library has no
 * provider drivers, its one device is iwarp0). The rest serves devices
 * of those drivers, which never exist here, and fails with EOPNOTSUPP.
 * The entry points take no arguments here: they never read them.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>

#include "compat/verbs/iwc.h"

int __ioctl_final_num_attrs(void);
IWC_EXPORT int __ioctl_final_num_attrs(void)
{
	return EOPNOTSUPP;
}

void __verbs_log(void);
IWC_EXPORT void __verbs_log(void)
{
}

void *_verbs_init_and_alloc_context(void);
IWC_EXPORT void *_verbs_init_and_alloc_context(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

int execute_ioctl(void);
IWC_EXPORT int execute_ioctl(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_advise_mr(void);
IWC_EXPORT int ibv_cmd_advise_mr(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_alloc_dm(void);
IWC_EXPORT int ibv_cmd_alloc_dm(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_alloc_mw(void);
IWC_EXPORT int ibv_cmd_alloc_mw(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_alloc_pd(void);
IWC_EXPORT int ibv_cmd_alloc_pd(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_attach_mcast(void);
IWC_EXPORT int ibv_cmd_attach_mcast(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_close_xrcd(void);
IWC_EXPORT int ibv_cmd_close_xrcd(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_create_ah(void);
IWC_EXPORT int ibv_cmd_create_ah(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_create_counters(void);
IWC_EXPORT int ibv_cmd_create_counters(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_create_cq(void);
IWC_EXPORT int ibv_cmd_create_cq(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_create_cq_ex(void);
IWC_EXPORT int ibv_cmd_create_cq_ex(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_create_flow(void);
IWC_EXPORT int ibv_cmd_create_flow(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_create_flow_action_esp(void);
IWC_EXPORT int ibv_cmd_create_flow_action_esp(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_create_qp(void);
IWC_EXPORT int ibv_cmd_create_qp(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_create_qp_ex(void);
IWC_EXPORT int ibv_cmd_create_qp_ex(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_create_qp_ex2(void);
IWC_EXPORT int ibv_cmd_create_qp_ex2(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_create_rwq_ind_table(void);
IWC_EXPORT int ibv_cmd_create_rwq_ind_table(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_create_srq(void);
IWC_EXPORT int ibv_cmd_create_srq(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_create_srq_ex(void);
IWC_EXPORT int ibv_cmd_create_srq_ex(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_create_wq(void);
IWC_EXPORT int ibv_cmd_create_wq(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_dealloc_mw(void);
IWC_EXPORT int ibv_cmd_dealloc_mw(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_dealloc_pd(void);
IWC_EXPORT int ibv_cmd_dealloc_pd(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_dereg_mr(void);
IWC_EXPORT int ibv_cmd_dereg_mr(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_destroy_ah(void);
IWC_EXPORT int ibv_cmd_destroy_ah(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_destroy_counters(void);
IWC_EXPORT int ibv_cmd_destroy_counters(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_destroy_cq(void);
IWC_EXPORT int ibv_cmd_destroy_cq(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_destroy_flow(void);
IWC_EXPORT int ibv_cmd_destroy_flow(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_destroy_flow_action(void);
IWC_EXPORT int ibv_cmd_destroy_flow_action(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_destroy_qp(void);
IWC_EXPORT int ibv_cmd_destroy_qp(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_destroy_rwq_ind_table(void);
IWC_EXPORT int ibv_cmd_destroy_rwq_ind_table(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_destroy_srq(void);
IWC_EXPORT int ibv_cmd_destroy_srq(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_destroy_wq(void);
IWC_EXPORT int ibv_cmd_destroy_wq(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_detach_mcast(void);
IWC_EXPORT int ibv_cmd_detach_mcast(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_free_dm(void);
IWC_EXPORT int ibv_cmd_free_dm(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_get_context(void);
IWC_EXPORT int ibv_cmd_get_context(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_modify_cq(void);
IWC_EXPORT int ibv_cmd_modify_cq(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_modify_flow_action_esp(void);
IWC_EXPORT int ibv_cmd_modify_flow_action_esp(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_modify_qp(void);
IWC_EXPORT int ibv_cmd_modify_qp(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_modify_qp_ex(void);
IWC_EXPORT int ibv_cmd_modify_qp_ex(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_modify_srq(void);
IWC_EXPORT int ibv_cmd_modify_srq(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_modify_wq(void);
IWC_EXPORT int ibv_cmd_modify_wq(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_open_qp(void);
IWC_EXPORT int ibv_cmd_open_qp(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_open_xrcd(void);
IWC_EXPORT int ibv_cmd_open_xrcd(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_poll_cq(void);
IWC_EXPORT int ibv_cmd_poll_cq(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_post_recv(void);
IWC_EXPORT int ibv_cmd_post_recv(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_post_send(void);
IWC_EXPORT int ibv_cmd_post_send(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_post_srq_recv(void);
IWC_EXPORT int ibv_cmd_post_srq_recv(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_query_context(void);
IWC_EXPORT int ibv_cmd_query_context(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_query_device_any(void);
IWC_EXPORT int ibv_cmd_query_device_any(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_query_mr(void);
IWC_EXPORT int ibv_cmd_query_mr(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_query_port(void);
IWC_EXPORT int ibv_cmd_query_port(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_query_qp(void);
IWC_EXPORT int ibv_cmd_query_qp(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_query_srq(void);
IWC_EXPORT int ibv_cmd_query_srq(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_read_counters(void);
IWC_EXPORT int ibv_cmd_read_counters(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_reg_dm_mr(void);
IWC_EXPORT int ibv_cmd_reg_dm_mr(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_reg_dmabuf_mr(void);
IWC_EXPORT int ibv_cmd_reg_dmabuf_mr(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_reg_mr(void);
IWC_EXPORT int ibv_cmd_reg_mr(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_req_notify_cq(void);
IWC_EXPORT int ibv_cmd_req_notify_cq(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_rereg_mr(void);
IWC_EXPORT int ibv_cmd_rereg_mr(void)
{
	return EOPNOTSUPP;
}

int ibv_cmd_resize_cq(void);
IWC_EXPORT int ibv_cmd_resize_cq(void)
{
	return EOPNOTSUPP;
}

int ibv_query_gid_type(void);
IWC_EXPORT int ibv_query_gid_type(void)
{
	return EOPNOTSUPP;
}

int ibv_read_ibdev_sysfs_file(void);
IWC_EXPORT int ibv_read_ibdev_sysfs_file(void)
{
	return EOPNOTSUPP;
}

int verbs_allow_disassociate_destroy(void);
IWC_EXPORT int verbs_allow_disassociate_destroy(void)
{
	return 0;
}

void verbs_init_cq(void);
IWC_EXPORT void verbs_init_cq(void)
{
}

void *verbs_open_device(void);
IWC_EXPORT void *verbs_open_device(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

void verbs_register_driver_34(void);
IWC_EXPORT void verbs_register_driver_34(void)
{
}

void verbs_set_ops(void);
IWC_EXPORT void verbs_set_ops(void)
{
}

void verbs_uninit_context(void);
IWC_EXPORT void verbs_uninit_context(void)
{
}
