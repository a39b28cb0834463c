# tests/abi.mk: the library's ABI (docs/abi.md).
# The header, libiwarp.map, debian/libiwarp1.symbols and the built library
# name the same functions, each in a version node.
TESTS += tests/abi_symbols.sh
dist_check_SCRIPTS += tests/abi_symbols.sh

# The ABI against the committed libabigail baseline (scripts/abi-check.sh:
# additions pass, anything else fails). `make abi-check` runs it alone;
# `make abi-update` rewrites abi/libiwarp.abi after an intended change.
TESTS += tests/abi_check.sh
dist_check_SCRIPTS += tests/abi_check.sh
dist_noinst_SCRIPTS += scripts/abi-check.sh
EXTRA_DIST += abi/libiwarp.abi abi/libiwarp.suppr docs/abi.md
abi-check: libiwarp.la
	$(abs_top_srcdir)/scripts/abi-check.sh $(abs_top_builddir)
abi-update: libiwarp.la
	$(abs_top_srcdir)/scripts/abi-check.sh --update $(abs_top_builddir)
.PHONY: abi-check abi-update
