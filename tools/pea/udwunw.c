// SPDX-License-Identifier: GPL-2.0
/*
 * pea: DWARF unwinding of user stacks, for pea profile --call-graph dwarf.
 *
 * The kernel puts the task's user registers and a copy of the top of its
 * user stack in each sample (PEA_SAMPLE_F_USER_REGS, struct
 * pea_user_regs), as perf's PERF_SAMPLE_REGS_USER and _STACK_USER; the
 * stack is unwound here with elfutils' libdwfl, as perf's libdw unwinder
 * does (the well-kept library for it, already what udwarf.c reads DWARF
 * with, and in Debian as libdw-dev): the call frame information of each
 * file (.eh_frame, or its .debug_frame; separate debug files are not
 * looked for, so no debuginfod server is asked) says where each frame's return address and callee-saved registers
 * are, relative to its canonical frame address.
 *
 * One Dwfl per process (the key its maps are kept under in usym.c):
 * every ELF file of its maps' snapshot is reported at its load bias
 * (dwfl_report_elf()), then dwfl_attach_state() with callbacks that give
 * the thread of the sample being unwound (next_thread), its registers
 * (set_initial_registers: the record's, in DWARF order already) and its
 * memory (memory_read: the stack copy; nothing else, so a frame whose
 * return address lies past the copy ends the stack there). The Dwfl is
 * kept for the process's next samples; libdwfl makes a new thread state
 * for each dwfl_getthread_frames().
 *
 * What this does not unwind (the stack then ends there): frames in the
 * vDSO or in anonymous code (JITs; no file), files unreadable since the
 * snapshot, and 32-bit tasks (their ip only).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdwfl.h>
#include "pea_tool.h"
#include "usym.h"
#include "udwunw.h"

#define UDWUNW_PROCS_MAX	256	/* Dwfls kept; the oldest goes */

/* The sample being unwound: what the callbacks read. */
struct udwunw_cur {
	pid_t tid;
	const struct pea_user_regs *ur;
	const unsigned char *stack;
	__u64 sp;
	__u32 stack_size;
	__u64 *ips;
	int n, max;
};

struct udwunw_proc {
	int key;
	unsigned int gen;	/* of the snapshot its modules are from */
	Dwfl *dwfl;		/* NULL: it could not be made */
};

struct udwunw {
	const struct usyms *us;
	struct udwunw_proc procs[UDWUNW_PROCS_MAX];
	int nprocs, next;
	struct udwunw_cur cur;
};

/*
 * No separate debug file: the file's own call frame information
 * (.eh_frame, which x86-64 code has for every function by default, or
 * its .debug_frame) is what unwinding reads. dwfl_standard_find_debuginfo()
 * would also ask debuginfod servers (DEBUGINFOD_URLS) over the network
 * for every file without local debug info, in the middle of a profile.
 */
static int udwunw_find_debuginfo(Dwfl_Module *mod, void **userdata,
				 const char *modname, Dwarf_Addr base,
				 const char *file_name,
				 const char *debuglink_file,
				 GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base;
	(void)file_name, (void)debuglink_file, (void)debuglink_crc;
	*debuginfo_file_name = NULL;
	return -1;
}

static const Dwfl_Callbacks udwunw_dwfl_cb = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = udwunw_find_debuginfo,
};

struct udwunw *udwunw_new(const struct usyms *us)
{
	struct udwunw *w = calloc(1, sizeof(*w));

	if (w)
		w->us = us;
	return w;
}

static void udwunw_proc_drop(struct udwunw_proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->key = 0;
}

void udwunw_free(struct udwunw *w)
{
	int i;

	if (!w)
		return;
	for (i = 0; i < w->nprocs; i++)
		udwunw_proc_drop(&w->procs[i]);
	free(w);
}

/* ---- the thread callbacks: one thread, the sample's ---- */

static pid_t udwunw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct udwunw_cur *c = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = c;
	return c->tid;
}

static bool udwunw_get_thread(Dwfl *dwfl, pid_t tid, void *arg,
			      void **thread_argp)
{
	struct udwunw_cur *c = arg;

	(void)dwfl;
	if (tid != c->tid)
		return false;
	*thread_argp = c;
	return true;
}

/* A word of the stack copy; anything else cannot be read. */
static bool udwunw_memory_read(Dwfl *dwfl, Dwarf_Addr addr,
			       Dwarf_Word *result, void *arg)
{
	struct udwunw_cur *c = arg;
	__u64 off;

	(void)dwfl;
	if (addr < c->sp)
		return false;
	off = addr - c->sp;
	if (off > c->stack_size || c->stack_size - off < sizeof(*result))
		return false;
	memcpy(result, c->stack + off, sizeof(*result));
	return true;
}

static bool udwunw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct udwunw_cur *c = arg;
	Dwarf_Word regs[PEA_UREGS_NR];
	int i;

	for (i = 0; i < PEA_UREGS_NR; i++)
		regs[i] = c->ur->regs[i];
	/* DWARF 0..15 are the general registers, 16 the return address. */
	return dwfl_thread_state_registers(thread, 0, PEA_UREGS_NR, regs);
}

static const Dwfl_Thread_Callbacks udwunw_thread_cb = {
	.next_thread = udwunw_next_thread,
	.get_thread = udwunw_get_thread,
	.memory_read = udwunw_memory_read,
	.set_initial_registers = udwunw_set_initial_registers,
};

/* ---- modules ---- */

static int udwunw_report(const char *path, __u64 bias, __u64 start,
			 __u64 end, void *arg)
{
	Dwfl *dwfl = arg;

	(void)start;
	(void)end;
	/* ET_DYN at its bias; an ET_EXEC where its headers say. */
	dwfl_report_elf(dwfl, path, path, -1, bias, true);
	return 0;
}

/* @key's slot: its own (emptied if its maps were read again), a new one,
 * or the oldest's. */
static struct udwunw_proc *udwunw_slot(struct udwunw *w, int key,
				       unsigned int gen)
{
	struct udwunw_proc *p;
	int i;

	for (i = 0; i < w->nprocs; i++) {
		p = &w->procs[i];
		if (p->key != key || !p->dwfl)
			continue;
		if (p->gen == gen)
			return p;
		udwunw_proc_drop(p);	/* its maps were read again */
		return p;
	}
	if (w->nprocs < UDWUNW_PROCS_MAX)
		return &w->procs[w->nprocs++];
	p = &w->procs[w->next];
	w->next = (w->next + 1) % UDWUNW_PROCS_MAX;
	udwunw_proc_drop(p);
	return p;
}

/* The Dwfl of @key's current snapshot, made on first use. */
static struct udwunw_proc *udwunw_proc(struct udwunw *w, int key)
{
	unsigned int gen = usyms_gen(w->us, key);
	struct udwunw_proc *p;

	if (!gen)
		return NULL;
	p = udwunw_slot(w, key, gen);
	if (p->dwfl)
		return p;
	p->key = key;
	p->gen = gen;
	p->dwfl = dwfl_begin(&udwunw_dwfl_cb);
	if (!p->dwfl)
		return NULL;
	dwfl_report_begin(p->dwfl);
	if (usyms_files(w->us, key, udwunw_report, p->dwfl) ||
	    dwfl_report_end(p->dwfl, NULL, NULL) ||
	    !dwfl_attach_state(p->dwfl, NULL, key > 0 ? key : 1,
			       &udwunw_thread_cb, &w->cur)) {
		udwunw_proc_drop(p);
		return NULL;
	}
	return p;
}

static int udwunw_frame(Dwfl_Frame *state, void *arg)
{
	struct udwunw_cur *c = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	/* The first is the ip; a pc of 0 is the outermost frame's end. */
	if (c->n && !pc)
		return DWARF_CB_ABORT;
	c->ips[c->n++] = pc;
	return c->n < c->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int udwunw_unwind(struct udwunw *w, int key, const struct pea_user_regs *ur,
		  size_t len, __u64 *ips, int max)
{
	struct udwunw_cur *c = &w->cur;
	struct udwunw_proc *p;

	if (len < sizeof(*ur) || ur->stack_size > len - sizeof(*ur) ||
	    max < 1)
		return -EINVAL;
	ips[0] = ur->regs[PEA_UREG_IP];
	if (ur->abi != PEA_UREGS_ABI_64)
		return 1;
	p = udwunw_proc(w, key);
	if (!p)
		return 1;
	memset(c, 0, sizeof(*c));
	c->tid = key > 0 ? key : 1;
	c->ur = ur;
	c->stack = ur->stack;
	c->sp = ur->regs[PEA_UREG_SP];
	c->stack_size = ur->stack_size;
	c->ips = ips;
	c->max = max;
	/* An error ends the stack where it came; the frames so far stand. */
	dwfl_getthread_frames(p->dwfl, c->tid, udwunw_frame, c);
	return c->n ? c->n : 1;
}
