# man/local.mk: man pages (section 3 functions, section 7 overview, iwarp_decode.1;
# the other tools list their own page). tests/man_coverage.sh checks that every
# public function has its page here.
dist_man_MANS += \
	man/iwarp.7 \
	man/iwarp_ack_async_event.3 \
	man/iwarp_ack_cq_events.3 \
	man/iwarp_alloc_mw.3 \
	man/iwarp_alloc_pd.3 \
	man/iwarp_async_fd.3 \
	man/iwarp_bind_mw.3 \
	man/iwarp_close_context.3 \
	man/iwarp_cm_accept.3 \
	man/iwarp_cm_ack_event.3 \
	man/iwarp_cm_bind_addr.3 \
	man/iwarp_cm_connect.3 \
	man/iwarp_cm_create_event_channel.3 \
	man/iwarp_cm_create_id.3 \
	man/iwarp_cm_create_qp.3 \
	man/iwarp_cm_destroy_event_channel.3 \
	man/iwarp_cm_destroy_id.3 \
	man/iwarp_cm_destroy_qp.3 \
	man/iwarp_cm_disconnect.3 \
	man/iwarp_cm_event_str.3 \
	man/iwarp_cm_get_event.3 \
	man/iwarp_cm_getaddr.3 \
	man/iwarp_cm_listen.3 \
	man/iwarp_cm_migrate_id.3 \
	man/iwarp_cm_reject.3 \
	man/iwarp_cm_set_tls.3 \
	man/iwarp_cm_resolve_addr.3 \
	man/iwarp_cm_resolve_route.3 \
	man/iwarp_context_attr_init.3 \
	man/iwarp_create_comp_channel.3 \
	man/iwarp_create_cq.3 \
	man/iwarp_create_qp.3 \
	man/iwarp_create_srq.3 \
	man/iwarp_dealloc_mw.3 \
	man/iwarp_dealloc_pd.3 \
	man/iwarp_decode.1 \
	man/iwarp_dereg_mr.3 \
	man/iwarp_destroy_comp_channel.3 \
	man/iwarp_destroy_cq.3 \
	man/iwarp_destroy_qp.3 \
	man/iwarp_destroy_srq.3 \
	man/iwarp_error_to_term.3 \
	man/iwarp_event_type_str.3 \
	man/iwarp_get_async_event.3 \
	man/iwarp_get_cq_event.3 \
	man/iwarp_inc_rkey.3 \
	man/iwarp_modify_qp.3 \
	man/iwarp_modify_srq.3 \
	man/iwarp_open_context.3 \
	man/iwarp_poll_cq.3 \
	man/iwarp_post_recv.3 \
	man/iwarp_post_send.3 \
	man/iwarp_post_srq_recv.3 \
	man/iwarp_progress.3 \
	man/iwarp_query_context.3 \
	man/iwarp_query_device.3 \
	man/iwarp_query_qp.3 \
	man/iwarp_query_srq.3 \
	man/iwarp_reg_mr.3 \
	man/iwarp_req_notify_cq.3 \
	man/iwarp_resize_cq.3 \
	man/iwarp_strerror.3 \
	man/iwarp_term_strerror.3 \
	man/iwarp_wc_status_str.3
# iwarp_run (compat/rdmacm/rdmacm.mk)
dist_man_MANS += man/iwarp_run.1
