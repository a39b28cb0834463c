# man/local.mk: man pages (section 1 tools, section 3 functions, section 7 overview).
# tests/man_coverage.sh checks every public function has its page here.
dist_man_MANS += \
	man/iwarp.7 \
	man/iwarp_ack_async_event.3 \
	man/iwarp_ack_cq_events.3 \
	man/iwarp_alloc_pd.3 \
	man/iwarp_async_fd.3 \
	man/iwarp_close_context.3 \
	man/iwarp_context_attr_init.3 \
	man/iwarp_create_comp_channel.3 \
	man/iwarp_create_cq.3 \
	man/iwarp_create_qp.3 \
	man/iwarp_create_srq.3 \
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
