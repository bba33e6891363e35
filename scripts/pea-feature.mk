# SPDX-License-Identifier: GPL-2.0
#
# pea: the Kbuild feature probe, included by ./Kbuild and
# selftests/module/Kbuild.
#
# Feature probes: grep the target kernel's headers, not its version.
#
#   ccflags-y += $(call pea_feature,MACRO,HEADER,'PRESENT','ABSENT')
#
# gives -DMACRO when $(srctree)/include/HEADER matches the grep pattern
# PRESENT (proof that the feature is there), nothing when it matches
# ABSENT (proof of the older API), and stops the build when it matches
# neither: a pattern gone stale must not silently pick the old API.
# Patterns are basic regular expressions, quoted, without commas or
# unbalanced parentheses (make counts them: match a lone one with .).
pea_grep = $(shell grep -qs -- $(2) $(srctree)/include/$(1) && echo y)
pea_feature = $(strip \
	$(if $(call pea_grep,$(2),$(3)),-D$(1), \
	$(if $(call pea_grep,$(2),$(4)),, \
	$(error pea feature probe $(1): $(srctree)/include/$(2) matches \
		neither $(3) (present) nor $(4) (absent)))))

# Configuration probes: the target kernel's own configuration, from its
# build tree's include/generated/autoconf.h, not its version.
#
#   ccflags-y += $(call pea_config_feature,MACRO,OPTION,KNOWN)
#
# gives -DMACRO when CONFIG_OPTION is y there, nothing when it is not set
# but CONFIG_KNOWN (an option every kernel pea runs on has) is, and stops
# the build when CONFIG_KNOWN is missing too: that file is not a
# configuration this probe can read.
pea_autoconf = $(objtree)/include/generated/autoconf.h
pea_config_y = $(shell grep -qs -- '^.define CONFIG_$(1) 1$$' $(pea_autoconf) && echo y)
pea_config_feature = $(strip \
	$(if $(call pea_config_y,$(2)),-D$(1), \
	$(if $(call pea_config_y,$(3)),, \
	$(error pea config probe $(1): $(pea_autoconf) sets neither \
		CONFIG_$(2) nor CONFIG_$(3)))))
