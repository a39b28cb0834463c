# man/local.mk: man pages (section 1 tools, section 3 functions, section 7 overview).
dist_man_MANS += \
	man/iwarp.7 \
	man/iwarp_strerror.3 \
	man/iwarp_error_to_term.3 \
	man/iwarp_term_strerror.3
