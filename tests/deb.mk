# tests/deb.mk: the Debian packaging (debian/, see debian/README.source).
# `make check-deb` builds the packages from a copy of the source tree,
# installs them into a throwaway dpkg root and runs iwarp_ping from there
# (tests/deb_install.sh: root, debhelper; a few minutes). Not part of
# `make check`; .ci/run runs it.
check-deb:
	@rc=0; top_srcdir=$(abs_top_srcdir) bash $(abs_top_srcdir)/tests/deb_install.sh || rc=$$?; \
	if [ $$rc = 77 ]; then echo "check-deb: SKIPPED (see above)"; rc=0; fi; \
	exit $$rc
.PHONY: check-deb
dist_noinst_SCRIPTS += tests/deb_install.sh
EXTRA_DIST += debian/changelog debian/control debian/copyright debian/rules \
	debian/source/format debian/README.source debian/not-installed \
	debian/libiwarp1.install debian/libiwarp1.symbols \
	debian/libiwarp1.lintian-overrides \
	debian/libiwarp-dev.install debian/libiwarp-dev.lintian-overrides \
	debian/iwarp-tools.install debian/iwarp-tools.lintian-overrides
