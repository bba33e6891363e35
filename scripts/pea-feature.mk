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
