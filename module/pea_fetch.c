// SPDX-License-Identifier: GPL-2.0
/*
 * pea: fetch chains (struct pea_fetch), evaluated at a probe's hit into a
 * struct pea_fetch_block, and the fault-safe reads they and captures use.
 *
 * A chain is what a fetch argument of kprobe_events or uprobe_events is
 * (kernel/trace/trace_probe.c parses those, trace_probe_tmpl.h and
 * trace_probe_kernel.h evaluate them): a base, pointer reads at offsets,
 * then a value of a type. Its reads never fault: a kprobe's read of an
 * address below TASK_SIZE reads user memory, any other kernel memory,
 * as probe_mem_read() and fetch_store_string() do on architectures whose
 * user and kernel addresses do not overlap; a read the attacher marks
 * user (kprobe_events' "+u" and ustring) reads user memory whatever the
 * address; a uprobe's reads are all of the probed process's memory (as
 * trace_uprobe.c's). Linux's strncpy_from_{kernel,user}_nofault(), which
 * those use for strings, are not exported to modules (on either Debian
 * kernel): strings are copied page by page with the exported
 * copy_from_{kernel,user}_nofault() and cut at the first NUL.
 *
 * A tracepoint's chains start at a field of its entry
 * (PEA_FETCH_BASE_FIELD), as an eprobe's fetch arguments do
 * (trace_eprobe.c: get_event_field() gives the base, then the same
 * process_fetch_insn_bottom() as a kprobe's); the field's value is read
 * from the entry's bytes, never past them, and the rest is a kprobe's
 * chain.
 *
 * The evaluation runs in the probe's handler (any context, NMI
 * included): no locks, no allocation, never sleeps. The block is built in
 * a per-CPU buffer of the handler's nesting level, so that the record is
 * reserved at its exact size.
 */
#include <linux/align.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/percpu.h>
#include <linux/pid_namespace.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "pea_ctx.h"
#include "pea_fetch.h"
#include "pea_intval.h"
#include "pea_perm.h"

/*
 * copy_from_kernel_nofault() refuses non-canonical addresses by the CPU's
 * virtual address width (x86_virt_bits, from CPUID), not by the width the
 * page tables use. With 4-level paging on a CPU that has LA57 (booted
 * no5lvl) an address canonical for 57 bits but not for 48 passes that
 * check, and the load takes a #GP, which the exception fixup survives but
 * reports with a WARNING ("General protection fault in user access"):
 * panic_on_warn would turn a capture into a crash. Check the whole range
 * against the paging mode in use first.
 */
static bool pea_kernel_range_ok(const void *src, size_t len)
{
#ifdef CONFIG_X86_64
	unsigned long start = (unsigned long)src, last = start + len - 1;

	return last >= start &&
	       __is_canonical_address(start, __VIRTUAL_MASK_SHIFT + 1) &&
	       __is_canonical_address(last, __VIRTUAL_MASK_SHIFT + 1);
#else
	return true;
#endif
}

/**
 * pea_read_nofault() - copy @len bytes from kernel or user memory
 * without faulting
 * @dst: where to
 * @src: from where
 * @len: bytes
 * @user: @src is a user address of the current task
 *
 * Return: 0 or -EFAULT (or another negative errno of the copy).
 */
long pea_read_nofault(void *dst, const void *src, size_t len, bool user)
{
	if (user)
		return copy_from_user_nofault(dst, (const void __user *)src,
					      len);
	if (!pea_kernel_range_ok(src, len))
		return -EFAULT;
	return copy_from_kernel_nofault(dst, src, len);
}

/**
 * pea_strncpy_nofault() - copy a NUL-terminated string without faulting
 * @dst: @count bytes
 * @src: the string
 * @count: bytes at most, the NUL included
 * @user: @src is a user address of the current task
 *
 * strncpy_from_{user,kernel}_nofault() are not exported to modules: copy
 * page by page (a chunk within one page is readable or not as a whole)
 * and stop at the first NUL. Bytes of @dst after the NUL may hold what
 * followed it in the chunk.
 *
 * Return: the length with the NUL, @count if there is none in @count
 * bytes, or -EFAULT.
 */
long pea_strncpy_nofault(u8 *dst, const u8 *src, size_t count, bool user)
{
	size_t n = 0, chunk;
	u8 *nul;

	while (n < count) {
		chunk = min(count - n, PAGE_SIZE -
			    offset_in_page((unsigned long)(src + n)));
		if (pea_read_nofault(dst + n, src + n, chunk, user))
			return -EFAULT;
		nul = memchr(dst + n, 0, chunk);
		if (nul)
			return nul - dst + 1;
		n += chunk;
	}
	return count;
}

/* One block per nesting level, with room for a string's NUL probe. */
#define PEA_FETCH_BUF_WORDS	DIV_ROUND_UP(PEA_FETCH_BLOCK_MAX + 8, 8)

struct pea_fetch_bufs {
	int level;
	u64 buf[PEA_NEST_MAX][PEA_FETCH_BUF_WORDS];
};

/*
 * Allocated at load: a module's static per-CPU data comes from the small
 * reserved chunk (PERCPU_MODULE_RESERVE, 8 KiB), which these 4 KiB and
 * the scratch slots of pea_link.c together outgrow.
 */
static struct pea_fetch_bufs __percpu *pea_fetch_bufs;

/**
 * pea_fetch_init() - allocate the block buffers, at module load
 *
 * Return: 0 or -ENOMEM.
 */
int pea_fetch_init(void)
{
	pea_fetch_bufs = alloc_percpu(struct pea_fetch_bufs);
	return pea_fetch_bufs ? 0 : -ENOMEM;
}

/**
 * pea_fetch_exit() - free them, at unload, once no link is left
 */
void pea_fetch_exit(void)
{
	free_percpu(pea_fetch_bufs);
}

/**
 * pea_fetch_buf_get() - this CPU's block buffer for this nesting level
 *
 * Preemption must be off. Every call, whatever it returns, is paired with
 * a pea_fetch_buf_put(). Levels nest as pea_scratch_get()'s do: a handler
 * interrupting another on this CPU returns before it resumes.
 *
 * Return: PEA_FETCH_BLOCK_MAX + 8 bytes, 8-aligned, or NULL past
 * PEA_NEST_MAX levels.
 */
void *pea_fetch_buf_get(void)
{
	int level = this_cpu_inc_return(pea_fetch_bufs->level) - 1;

	barrier();
	if (level >= PEA_NEST_MAX)
		return NULL;
	return this_cpu_ptr(pea_fetch_bufs)->buf[level];
}

/**
 * pea_fetch_buf_put() - give back the buffer of pea_fetch_buf_get()
 */
void pea_fetch_buf_put(void)
{
	barrier();
	this_cpu_dec(pea_fetch_bufs->level);
}

/**
 * pea_fetch_width() - an integer fetch type's width in bytes
 * @type: PEA_FETCH_U8 .. PEA_FETCH_ARRAY
 *
 * Return: 1, 2, 4 or 8; 0 for strings and arrays.
 */
u32 pea_fetch_width(u8 type)
{
	switch (type) {
	case PEA_FETCH_U8:
	case PEA_FETCH_S8:
		return 1;
	case PEA_FETCH_U16:
	case PEA_FETCH_S16:
		return 2;
	case PEA_FETCH_U32:
	case PEA_FETCH_S32:
		return 4;
	case PEA_FETCH_U64:
	case PEA_FETCH_S64:
		return 8;
	}
	return 0;
}

/* Whether the fetch reads memory at all. */
static bool pea_fetch_reads(const struct pea_fetch *f)
{
	if (f->base == PEA_FETCH_BASE_CTX)
		return false;
	return f->nr_deref || (f->flags & PEA_FETCH_F_LOAD) ||
	       !pea_fetch_width(f->type);
}

/*
 * The reads of @f as @user bits: its pointer reads, and the value's unless
 * it is an integer taken as it is (0 when it reads nothing).
 */
static u8 pea_fetch_read_mask(const struct pea_fetch *f)
{
	if (!pea_fetch_reads(f))
		return 0;
	if (pea_fetch_width(f->type) && !(f->flags & PEA_FETCH_F_LOAD))
		return (u8)GENMASK(f->nr_deref - 1, 0);
	return (u8)GENMASK(f->nr_deref, 0);
}

/* The value's bytes at most: the bound each fetch counts against. */
static u32 pea_fetch_max(const struct pea_fetch *f)
{
	u32 w = pea_fetch_width(f->type);

	return w ? w : f->size;
}

/*
 * A context value reads nothing: no deref, flags, offsets or user bits;
 * the comm is a string, the rest integers.
 */
static int pea_fetch_check_ctx(const struct pea_fetch *f)
{
	u32 i;

	if (!f->arg || f->arg > PEA_FETCH_CTX_MAX || f->nr_deref ||
	    f->flags || f->user)
		return -EINVAL;
	for (i = 0; i <= PEA_FETCH_DEPTH_MAX; i++)
		if (f->offset[i])
			return -EINVAL;
	if (f->arg == PEA_FETCH_CTX_COMM)
		return f->type == PEA_FETCH_STR && f->size &&
		       f->size <= PEA_FETCH_DATA_MAX ? 0 : -EINVAL;
	return pea_fetch_width(f->type) && !f->size ? 0 : -EINVAL;
}

/*
 * A field base (tracepoints only): an integer or pointer field of 1, 2,
 * 4 or 8 bytes, @arg 0. Whether the event has such a field at
 * @field_offset is the link's to check (pea_tp.c): the kernel's field
 * table is the event's.
 */
static int pea_fetch_check_field(const struct pea_fetch *f, u32 kind)
{
	if (!(kind & PEA_FETCH_KIND_TP) || f->arg)
		return -EINVAL;
	switch (f->field_size) {
	case 1:
	case 2:
	case 4:
	case 8:
		return 0;
	}
	return -EINVAL;
}

static int pea_fetch_check(const struct pea_fetch *f, u32 kind)
{
	u32 w = pea_fetch_width(f->type), i;
	int err;

	/* Too deep: EINVAL, as trace_probe.c's TOO_MANY_OPS. */
	if (f->nr_deref > PEA_FETCH_DEPTH_MAX)
		return -EINVAL;
	if (f->flags & ~PEA_FETCH_FLAGS)
		return -EINVAL;
	if (f->base != PEA_FETCH_BASE_FIELD && f->reserved)
		return -EINVAL;
	/* A tracepoint has a field or its task, not registers. */
	if ((kind & PEA_FETCH_KIND_TP) && f->base != PEA_FETCH_BASE_FIELD &&
	    f->base != PEA_FETCH_BASE_CTX)
		return -EINVAL;
	switch (f->base) {
	case PEA_FETCH_BASE_ARG:
		if (f->arg > 5)
			return -EINVAL;
		break;
	case PEA_FETCH_BASE_RET:
		if (!(kind & PEA_FETCH_KIND_RET))
			return -EINVAL;
		fallthrough;
	case PEA_FETCH_BASE_SP:
		if (f->arg)
			return -EINVAL;
		break;
	case PEA_FETCH_BASE_CTX:
		return pea_fetch_check_ctx(f);
	case PEA_FETCH_BASE_FIELD:
		err = pea_fetch_check_field(f, kind);
		if (err)
			return err;
		break;
	default:
		return -EINVAL;
	}
	if (f->type < PEA_FETCH_U8 || f->type > PEA_FETCH_ARRAY)
		return -EINVAL;
	if (w ? f->size : !f->size || f->size > PEA_FETCH_DATA_MAX)
		return -EINVAL;
	/* LOAD is for integers; strings and arrays always read memory. */
	if (!w && (f->flags & PEA_FETCH_F_LOAD))
		return -EINVAL;
	/* An integer taken as it is has no offset to add. */
	if (w && !(f->flags & PEA_FETCH_F_LOAD) && f->offset[f->nr_deref])
		return -EINVAL;
	for (i = f->nr_deref + 1; i <= PEA_FETCH_DEPTH_MAX; i++)
		if (f->offset[i])
			return -EINVAL;
	/* Bits past the reads there are. */
	if (f->user >> (f->nr_deref + 1))
		return -EINVAL;
	if (!pea_fetch_reads(f) && f->user)
		return -EINVAL;
	/* Uprobes read the process's memory only, with its pointer size. */
	if (kind & PEA_FETCH_KIND_USER)
		return f->user ? -EINVAL : 0;
	return f->flags & PEA_FETCH_F_PTR32 ? -EINVAL : 0;
}

/**
 * pea_fetch_copy() - copy and check an attach's fetches
 * @uptr: user pointer to @nr struct pea_fetch
 * @nr: fetches, 0..PEA_FETCH_MAX
 * @reserved: the attr's field after @nr, which must be zero
 * @kind: PEA_FETCH_KIND_* of the probe
 *
 * Return: the set (kfree()d by pea_fetch_free()), NULL for none, or
 * ERR_PTR(-E2BIG) (more than PEA_FETCH_MAX, values past
 * PEA_FETCH_DATA_MAX in all), -EINVAL (deeper than PEA_FETCH_DEPTH_MAX,
 * one value past PEA_FETCH_DATA_MAX, anything malformed), -EPERM (a
 * kprobe's uid or gid context value without CAP_BPF and CAP_PERFMON,
 * before the fetches are checked), -EFAULT or -ENOMEM.
 */
struct pea_fetch_set *pea_fetch_copy(u64 uptr, u32 nr, u32 reserved,
				     u32 kind)
{
	struct pea_fetch_set *fs;
	u32 i, data = 0;
	int err;

	if (reserved)
		return ERR_PTR(-EINVAL);
	if (!nr)
		return uptr ? ERR_PTR(-EINVAL) : NULL;
	if (nr > PEA_FETCH_MAX)
		return ERR_PTR(-E2BIG);
	fs = kzalloc(struct_size(fs, f, nr), GFP_KERNEL_ACCOUNT);
	if (!fs)
		return ERR_PTR(-ENOMEM);
	fs->nr = nr;
	if (copy_from_user(fs->f, u64_to_user_ptr(uptr),
			   nr * sizeof(fs->f[0]))) {
		err = -EFAULT;
		goto fail;
	}
	/*
	 * At a kprobe the uid and gid take a kprobe program's rule
	 * (bpf_get_current_uid_gid()), asked before the fetches are checked,
	 * as bpf(BPF_PROG_LOAD) answers EPERM before its verifier.
	 */
	for (i = 0; i < nr && !(kind & PEA_FETCH_KIND_USER); i++)
		if (fs->f[i].base == PEA_FETCH_BASE_CTX &&
		    pea_ctx_is_cred(fs->f[i].arg)) {
			err = pea_perm_kernel_read();
			if (err)
				goto fail;
			break;
		}
	for (i = 0; i < nr; i++) {
		const struct pea_fetch *f = &fs->f[i];

		err = pea_fetch_check(f, kind);
		if (err)
			goto fail;
		data += ALIGN(pea_fetch_max(f), 8);
		if (data > PEA_FETCH_DATA_MAX) {
			err = -E2BIG;
			goto fail;
		}
		if (pea_fetch_reads(f))
			fs->mem_read = true;
		if (f->base == PEA_FETCH_BASE_CTX && pea_ctx_is_cred(f->arg))
			fs->mem_read = true;
		/* A read no user bit marks may be of kernel memory. */
		if (!(kind & PEA_FETCH_KIND_USER) &&
		    (pea_fetch_read_mask(f) & ~f->user))
			fs->kernel_read = true;
	}
	fs->block_max = struct_size_t(struct pea_fetch_block, values, nr) +
			data;
	return fs;
fail:
	kfree(fs);
	return ERR_PTR(err);
}

/**
 * pea_fetch_size() - the bytes a set holds, for the attacher's quota
 * @fs: the set, or NULL
 *
 * Return: its allocation's size (0 for none).
 */
size_t pea_fetch_size(const struct pea_fetch_set *fs)
{
	return fs ? kmalloc_size_roundup(struct_size(fs, f, fs->nr)) : 0;
}

/**
 * pea_fetch_free() - free what pea_fetch_copy() returned
 * @fs: the set, or NULL
 */
void pea_fetch_free(struct pea_fetch_set *fs)
{
	kfree(fs);
}

/*
 * Read @len bytes at @addr, read @step of @f: a uprobe's (@user) or a
 * marked one from user memory, else by the address as Linux's kprobe
 * fetches (probe_mem_read()).
 */
static bool pea_fetch_user(const struct pea_fetch *f, u32 step,
			   unsigned long addr, bool user)
{
	if (user || (f->user & BIT(step)))
		return true;
#ifdef CONFIG_ARCH_HAS_NON_OVERLAPPING_ADDRESS_SPACE
	if (addr < TASK_SIZE)
		return true;
#endif
	return false;
}

/*
 * A PEA_FETCH_BASE_CTX value of the current task into @dst, as
 * pea_ctx.c reads it: ids in @pid_ns, the link's (its attacher's).
 */
static u32 pea_fetch_ctx(struct pid_namespace *pid_ns,
			 const struct pea_fetch *f, u8 *dst,
			 struct pea_fetch_value *v)
{
	u32 w = pea_fetch_width(f->type);
	char comm[TASK_COMM_LEN];
	u64 x;

	if (f->arg == PEA_FETCH_CTX_COMM) {
		x = pea_ctx_comm(comm);
		if (x > f->size) {
			v->status = PEA_FETCH_TRUNCATED;
			x = f->size;
		}
		memcpy(dst, comm, x);
		return x;
	}
	x = pea_ctx_int(pid_ns, f->arg);
	memcpy(dst, &x, w);	/* the low bytes (little-endian) */
	return w;
}

/* What a hit's chains start from. */
struct pea_fetch_hit {
	struct pt_regs *regs;
	const u64 *args;	/* probes: the six arguments */
	s64 ret;
	bool user;		/* a uprobe's: every read is of user memory */
	struct pid_namespace *pid_ns;
	const u8 *entry;	/* tracepoints: the entry, @entry_len bytes */
	u32 entry_len;
};

/*
 * Evaluate @f into @dst (room for its maximum plus a NUL probe) and
 * describe it in @v. Return the value's length.
 */
static u32 pea_fetch_one(const struct pea_fetch_hit *hit,
			 const struct pea_fetch *f, u8 *dst,
			 struct pea_fetch_value *v)
{
	u32 w = pea_fetch_width(f->type), plen;
	bool user = hit->user;
	unsigned long a, addr;
	u64 p;
	long n;
	u32 i = 0;

	switch (f->base) {
	case PEA_FETCH_BASE_CTX:
		return pea_fetch_ctx(hit->pid_ns, f, dst, v);
	case PEA_FETCH_BASE_ARG:
		a = hit->args[f->arg];
		break;
	case PEA_FETCH_BASE_RET:
		a = hit->ret;
		break;
	case PEA_FETCH_BASE_FIELD:
		/*
		 * The field checked at attach is in every entry of the event;
		 * still, never read past this one: a field it does not hold
		 * is read 0's failure.
		 */
		if (!hit->entry ||
		    (u32)f->field_offset + f->field_size > hit->entry_len)
			goto fault;
		a = pea_int_load(hit->entry + f->field_offset, f->field_size,
				 false);
		break;
	default:
		a = user ? user_stack_pointer(hit->regs) :
			   kernel_stack_pointer(hit->regs);
		break;
	}
	plen = f->flags & PEA_FETCH_F_PTR32 ? 4 : 8;
	for (i = 0; i < f->nr_deref; i++) {
		addr = a + (long)f->offset[i];
		p = 0;
		if (pea_read_nofault(&p, (const void *)addr, plen,
				     pea_fetch_user(f, i, addr, user)))
			goto fault;
		a = p;	/* little-endian: a 4-byte pointer zero-extended */
	}
	addr = a + (long)f->offset[i];
	if (w && !(f->flags & PEA_FETCH_F_LOAD)) {
		p = a;
		memcpy(dst, &p, w);	/* the low bytes (little-endian) */
		return w;
	}
	if (w || f->type == PEA_FETCH_ARRAY) {
		w = w ? w : f->size;
		if (pea_read_nofault(dst, (const void *)addr, w,
				     pea_fetch_user(f, i, addr, user)))
			goto fault;
		return w;
	}
	/* A string: one byte more tells whether it was cut. */
	n = pea_strncpy_nofault(dst, (const u8 *)addr, f->size + 1,
				pea_fetch_user(f, i, addr, user));
	if (n <= 0)
		goto fault;
	if (n == f->size + 1 && dst[f->size]) {
		v->status = PEA_FETCH_TRUNCATED;
		return f->size;
	}
	return n - 1;	/* the NUL is not kept */
fault:
	v->status = PEA_FETCH_FAULT;
	v->step = i;
	return 0;
}

/**
 * pea_fetch_prefault() - fault in the user pages a uprobe's chains read
 * @fs: the fetches (a uprobe's: every read is of user memory)
 * @regs: the user registers of the hit
 * @args: the six arguments at entry
 * @ret: the return value (returns), else 0
 *
 * uprobe_events reads its fetches in the uprobe handler with
 * copy_from_user(), which faults pages in (trace_uprobe.c); pea evaluates
 * them later with preemption off, where a page not yet faulted in (a
 * library's .rodata the caller only took the address of, untouched heap,
 * swapped out) would read as a fault. So the chain is walked here first,
 * where the handler may sleep: each pointer read with copy_from_user(),
 * each value's bytes (a string's at most, and its NUL) with
 * fault_in_readable(). A page reclaimed between the two still reads as a
 * fault. Reads that fail here fail there too; nothing here is kept.
 *
 * Context: the probed task's uprobe handler, which may sleep.
 */
void pea_fetch_prefault(const struct pea_fetch_set *fs, struct pt_regs *regs,
			const u64 *args, s64 ret)
{
	u32 i, j, w, plen;
	unsigned long a;
	u64 p;

	for (i = 0; i < fs->nr; i++) {
		const struct pea_fetch *f = &fs->f[i];

		if (!pea_fetch_reads(f))
			continue;
		a = f->base == PEA_FETCH_BASE_ARG ? args[f->arg] :
		    f->base == PEA_FETCH_BASE_RET ? (unsigned long)ret :
						    user_stack_pointer(regs);
		plen = f->flags & PEA_FETCH_F_PTR32 ? 4 : 8;
		for (j = 0; j < f->nr_deref; j++) {
			p = 0;
			if (copy_from_user(&p, (const void __user *)(a +
					   (long)f->offset[j]), plen))
				break;
			a = p;
		}
		w = pea_fetch_width(f->type);
		if (j < f->nr_deref || (w && !(f->flags & PEA_FETCH_F_LOAD)))
			continue;
		fault_in_readable((const char __user *)(a + (long)f->offset[j]),
				  w ? w : f->size + (f->type == PEA_FETCH_STR));
	}
}

/*
 * The chains of @fs into @block, each value at an 8-byte boundary, the
 * bytes between a value's end and the next boundary zeroed: nothing of an
 * earlier hit's or of memory past a string's NUL reaches the record.
 */
static u32 pea_fetch_run(const struct pea_fetch_set *fs,
			 const struct pea_fetch_hit *hit, void *block)
{
	struct pea_fetch_block *b = block;
	u32 off = struct_size(b, values, fs->nr), i, len;

	b->nr = fs->nr;
	b->reserved = 0;
	for (i = 0; i < fs->nr; i++) {
		struct pea_fetch_value *v = &b->values[i];
		u8 *dst = (u8 *)block + off;

		v->offset = off;
		v->status = PEA_FETCH_OK;
		v->step = 0;
		v->reserved = 0;
		len = pea_fetch_one(hit, &fs->f[i], dst, v);
		v->len = len;
		memset(dst + len, 0, ALIGN(len, 8) - len);
		off += ALIGN(len, 8);
	}
	b->size = off;
	return off;
}

/**
 * pea_fetch_eval() - evaluate a probe's fetches into a block
 * @fs: the fetches
 * @regs: the registers of the hit (its stack pointer)
 * @args: the six arguments at entry
 * @ret: the return value (returns), else 0
 * @user: a uprobe's hit: every read is of user memory
 * @pid_ns: the link's pid namespace, which context ids are given in
 * @block: a buffer of pea_fetch_buf_get()
 *
 * Each value starts at an 8-byte boundary of the block, the bytes between
 * a value's end and the next boundary are zeroed: nothing of an earlier
 * hit's or of memory past a string's NUL reaches the record.
 *
 * Return: the block's size (struct pea_fetch_block.size).
 */
u32 pea_fetch_eval(const struct pea_fetch_set *fs, struct pt_regs *regs,
		   const u64 *args, s64 ret, bool user,
		   struct pid_namespace *pid_ns, void *block)
{
	struct pea_fetch_hit hit = {
		.regs = regs, .args = args, .ret = ret, .user = user,
		.pid_ns = pid_ns,
	};

	return pea_fetch_run(fs, &hit, block);
}

/**
 * pea_fetch_eval_entry() - evaluate a tracepoint's fetches into a block
 * @fs: the fetches (PEA_FETCH_KIND_TP: fields and context values)
 * @entry: the hit's entry
 * @len: its bytes: no field past them is read
 * @pid_ns: the link's pid namespace, which context ids are given in
 * @block: a buffer of pea_fetch_buf_get()
 *
 * As pea_fetch_eval(), the chains' bases being fields of @entry.
 *
 * Return: the block's size (struct pea_fetch_block.size).
 */
u32 pea_fetch_eval_entry(const struct pea_fetch_set *fs, const void *entry,
			 u32 len, struct pid_namespace *pid_ns, void *block)
{
	struct pea_fetch_hit hit = {
		.pid_ns = pid_ns, .entry = entry, .entry_len = len,
	};

	return pea_fetch_run(fs, &hit, block);
}

