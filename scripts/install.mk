# SPDX-License-Identifier: GPL-2.0
#
# make install / make uninstall, and the shared library they install
# (included by the top Makefile, which defines BUILD, USER_CFLAGS, KVER...).
#
#   make install     the module, libpea (shared and static), its headers,
#                    pea.pc, the pea tool and the man pages
#   make install-user  all of it but the module (what the packages use)
#   make install-module  only pea.ko into MODULEDIR, then depmod
#   make uninstall   removes exactly the files install puts (the same lists)
#
# Variables: DESTDIR (a staging root: depmod is then skipped, as
# distributions run it on the target), PREFIX (default /usr/local; the
# packages use /usr), SBINDIR, INCLUDEDIR, LIBDIR, PKGCONFIGDIR, MANDIR,
# MODULEDIR (default /lib/modules/$(KVER)/updates), LDFLAGS.

PEA_VERSION := $(strip $(shell cat VERSION))
PEA_SOVERSION := 0

PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
INCLUDEDIR ?= $(PREFIX)/include
LIBDIR ?= $(PREFIX)/lib
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR ?= $(PREFIX)/share/man
MODULEDIR ?= /lib/modules/$(KVER)/updates
DEPMOD ?= $(firstword $(wildcard /sbin/depmod /usr/sbin/depmod) depmod)
INSTALL ?= install

SHLIB_DIR := $(BUILD)/shlib
SHLIB_REAL := libpea.so.$(PEA_VERSION)
SHLIB_SONAME := libpea.so.$(PEA_SOVERSION)
SHLIB := $(SHLIB_DIR)/$(SHLIB_REAL)
PIC_OBJS := $(patsubst lib/%.c,$(BUILD)/lib-pic/%.o,$(LIB_SRCS))
# The installed pea tool links libpea.so.0 (the in-tree one is static,
# for the test guest).
PEA_TOOL_SHARED := $(BUILD)/tools/shared/pea
# libbpf (ktypes.c) and what it needs, linked statically into the
# installed tool too: it runs without libbpf1 installed. zlib stays shared
# (zlib1g is on every Debian system, and lintian refuses an embedded copy:
# embedded-library).
PEA_TOOL_STATIC_LIBS := -Wl,-Bstatic -lbpf -ldw -lelf -lzstd -Wl,-Bdynamic -lz -lbz2 -llzma

# Every file install-user puts, relative to DESTDIR; uninstall removes
# these. scripts/check-install.sh holds the same list as documentation.
INSTALL_USER_FILES := $(SBINDIR)/pea \
	$(INCLUDEDIR)/pea/pea.h $(INCLUDEDIR)/pea/libpea.h \
	$(LIBDIR)/$(SHLIB_REAL) $(LIBDIR)/$(SHLIB_SONAME) $(LIBDIR)/libpea.so \
	$(LIBDIR)/libpea.a $(PKGCONFIGDIR)/pea.pc \
	$(MANDIR)/man8/pea.8 $(MANDIR)/man3/libpea.3
INSTALL_MODULE_FILES := $(MODULEDIR)/pea.ko

.PHONY: shlib install install-user install-module uninstall \
	uninstall-user uninstall-module

shlib: $(SHLIB) $(PEA_TOOL_SHARED)

$(BUILD)/lib-pic/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -fPIC -fvisibility=hidden -MMD -MP -c -o $@ $<

# Only the symbols listed in lib/libpea.map (the LIBPEA_API functions of
# libpea.h) are exported, under the version node PEA_0.
$(SHLIB): $(PIC_OBJS) lib/libpea.map
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(SHLIB_SONAME) \
		-Wl,--version-script=lib/libpea.map -Wl,-z,defs \
		-o $@ $(PIC_OBJS) -pthread
	ln -sf $(SHLIB_REAL) $(SHLIB_DIR)/$(SHLIB_SONAME)
	ln -sf $(SHLIB_SONAME) $(SHLIB_DIR)/libpea.so

$(PEA_TOOL_SHARED): $(PEA_OBJS) $(SHLIB)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(LDFLAGS) -o $@ $(PEA_OBJS) -L$(SHLIB_DIR) -lpea \
		$(PEA_TOOL_STATIC_LIBS)

install: install-module install-user

install-user: $(SHLIB) $(LIBPEA) $(PEA_TOOL_SHARED)
	$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(INCLUDEDIR)/pea \
		$(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man3
	$(INSTALL) -m 0755 $(PEA_TOOL_SHARED) $(DESTDIR)$(SBINDIR)/pea
	$(INSTALL) -m 0644 include/uapi/linux/pea.h $(DESTDIR)$(INCLUDEDIR)/pea/pea.h
	$(INSTALL) -m 0644 lib/libpea.h $(DESTDIR)$(INCLUDEDIR)/pea/libpea.h
	$(INSTALL) -m 0644 $(SHLIB) $(DESTDIR)$(LIBDIR)/$(SHLIB_REAL)
	ln -sf $(SHLIB_REAL) $(DESTDIR)$(LIBDIR)/$(SHLIB_SONAME)
	ln -sf $(SHLIB_SONAME) $(DESTDIR)$(LIBDIR)/libpea.so
	$(INSTALL) -m 0644 $(LIBPEA) $(DESTDIR)$(LIBDIR)/libpea.a
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(PEA_VERSION)|' \
		lib/pea.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/pea.pc
	chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/pea.pc
	sed 's|@VERSION@|$(PEA_VERSION)|' man/pea.8 > $(DESTDIR)$(MANDIR)/man8/pea.8
	sed 's|@VERSION@|$(PEA_VERSION)|' man/libpea.3 > $(DESTDIR)$(MANDIR)/man3/libpea.3
	chmod 0644 $(DESTDIR)$(MANDIR)/man8/pea.8 $(DESTDIR)$(MANDIR)/man3/libpea.3

install-module: module
	$(INSTALL) -d $(DESTDIR)$(MODULEDIR)
	$(INSTALL) -m 0644 pea.ko $(DESTDIR)$(MODULEDIR)/pea.ko
	$(call pea_depmod)

uninstall: uninstall-module uninstall-user

uninstall-user:
	rm -f $(addprefix $(DESTDIR),$(INSTALL_USER_FILES))
	-rmdir $(DESTDIR)$(INCLUDEDIR)/pea

uninstall-module:
	rm -f $(addprefix $(DESTDIR),$(INSTALL_MODULE_FILES))
	$(call pea_depmod)

# depmod runs for the live system only; with DESTDIR it is left to the
# target (as Debian's packages and DKMS do).
define pea_depmod
	@if [ -z "$(DESTDIR)" ]; then echo "$(DEPMOD) -a $(KVER)"; \
		$(DEPMOD) -a $(KVER); \
	else echo "DESTDIR is set, depmod skipped: run 'depmod -a $(KVER)' on the target"; fi
endef

-include $(wildcard $(BUILD)/lib-pic/*.d)
