// SPDX-License-Identifier: GPL-2.0
/*
 * pea: 'ctx.NAME' fetch expressions, the task that hit a probe
 * (PEA_FETCH_BASE_CTX), and cgroup v2 paths as the ids ctx.cgroup holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include "ctxfetch.h"

static const struct {
	const char *name;
	__u8 arg;
	__u8 type;		/* 0: the comm, a string */
	const char *cname;
} ctx_values[] = {
	{ "comm", PEA_FETCH_CTX_COMM, 0, "char[16]" },
	{ "tid", PEA_FETCH_CTX_TID, PEA_FETCH_U32, "u32" },
	{ "pid", PEA_FETCH_CTX_PID, PEA_FETCH_U32, "u32" },
	{ "uid", PEA_FETCH_CTX_UID, PEA_FETCH_U32, "u32" },
	{ "gid", PEA_FETCH_CTX_GID, PEA_FETCH_U32, "u32" },
	{ "cgroup", PEA_FETCH_CTX_CGROUP, PEA_FETCH_U64, "u64" },
	{ "cpu", PEA_FETCH_CTX_CPU, PEA_FETCH_U32, "u32" },
};

int ctxfetch_parse(const char *expr, struct kfetch *out, char *why,
		   size_t len)
{
	size_t i;

	if (strncmp(expr, "ctx.", 4))
		return 0;
	for (i = 0; i < sizeof(ctx_values) / sizeof(ctx_values[0]); i++) {
		if (strcmp(expr + 4, ctx_values[i].name))
			continue;
		out->f.base = PEA_FETCH_BASE_CTX;
		out->f.arg = ctx_values[i].arg;
		snprintf(out->type.name, sizeof(out->type.name), "%s",
			 ctx_values[i].cname);
		if (!ctx_values[i].type) {
			out->f.type = PEA_FETCH_STR;
			out->f.size = 16;
			out->str = true;
			out->type.cls = KT_CHAR_PTR;
			out->type.size = 8;
			return 1;
		}
		out->f.type = ctx_values[i].type;
		out->type.cls = KT_INT;
		out->type.size = ctx_values[i].type == PEA_FETCH_U64 ? 8 : 4;
		return 1;
	}
	snprintf(why, len,
		 "'%s': no such context value (ctx.comm, ctx.tid, ctx.pid, ctx.uid, ctx.gid, ctx.cgroup, ctx.cpu)",
		 expr);
	return -EINVAL;
}

bool ctxfetch_is_cgroup(const struct pea_fetch *f)
{
	return f->base == PEA_FETCH_BASE_CTX && f->arg == PEA_FETCH_CTX_CGROUP;
}

int ctxfetch_cgroup_id(const char *path, __u64 *id, char *why, size_t len)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + 64];
	} h;
	struct statfs st;
	struct stat sb;
	int mount_id, err;

	if (stat(path, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
		snprintf(why, len, "'%s' is a file, not a cgroup directory",
			 path);
		return -ENOTDIR;
	}
	if (statfs(path, &st)) {
		err = errno;
		snprintf(why, len, "cgroup '%s': %s", path, strerror(err));
		return -err;
	}
	if (st.f_type != 0x63677270) {	/* CGROUP2_SUPER_MAGIC */
		snprintf(why, len, "'%s' is not in a cgroup v2 file system",
			 path);
		return -EINVAL;
	}
	h.fh.handle_bytes = 64;
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0)) {
		err = errno;
		snprintf(why, len, "cgroup '%s': %s", path, strerror(err));
		return -err;
	}
	if (h.fh.handle_bytes != sizeof(*id)) {
		snprintf(why, len, "'%s': a %u-byte handle, not a cgroup id",
			 path, h.fh.handle_bytes);
		return -EINVAL;
	}
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}
