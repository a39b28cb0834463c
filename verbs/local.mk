# verbs/local.mk: verbs objects (context, PD, MR/STag table, CQ and
# completion channel, SRQ, QP state machine and posting, async events).
libiwarp_core_la_SOURCES += \
	verbs/verbs.h \
	verbs/context.c \
	verbs/async.c \
	verbs/wait.c \
	verbs/wait.h \
	verbs/pd.c \
	verbs/mr.c \
	verbs/mw.c \
	verbs/comp_channel.c \
	verbs/cq.c \
	verbs/srq.c \
	verbs/qp.c \
	verbs/qp_post.c \
	verbs/qp_complete.c \
	verbs/qp_overflow.h \
	verbs/strings.c

if HAVE_CHECK
check_PROGRAMS += tests/verbs_test
TESTS += tests/verbs_test
tests_verbs_test_SOURCES = tests/verbs_test.c
tests_verbs_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_verbs_test_LDADD = $(IWTEST_LINK)
endif

if HAVE_CHECK
check_PROGRAMS += tests/verbs_overflow_test
TESTS += tests/verbs_overflow_test
tests_verbs_overflow_test_SOURCES = tests/verbs_overflow_test.c
tests_verbs_overflow_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_verbs_overflow_test_LDADD = $(IWTEST_LINK)
endif
