// SPDX-License-Identifier: GPL-2.0
/*
 * pea: user-space symbols of profiled processes, for pea profile.
 *
 * A process's memory map is read from /proc/PID/maps once (usyms_snap())
 * and kept: its executable file mappings, each with the ELF file it maps,
 * whose symbol tables (.symtab, else .dynsym: STT_FUNC and STT_GNU_IFUNC
 * with their sizes) and PT_LOAD segments are read once per file (by
 * device and inode, so two processes of one program share them) and kept
 * until usyms_free(). Samples are then named from the snapshot, whenever
 * the records are read: a process that has exited by then (its
 * /proc/PID/maps gone) is still named, as long as its snapshot was taken
 * while it lived. pea profile takes it when a pid first appears, and for
 * -- CMD at the child's exec and at its exit (ptrace stops), so a
 * command that exits before the tool reads a single record is named.
 *
 * An address: the mapping holding it, then its file offset (address -
 * start + the mapping's offset), then the ELF virtual address (through
 * the PT_LOAD segment holding that offset), then the symbol at or below
 * it within its size. Memory is bounded: USYM_FILES_MAX files,
 * USYM_SYMS_MAX symbols a file, USYM_MAPS_MAX mappings a process.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "pea_tool.h"
#include "usym.h"

#define USYM_FILES_MAX	1024
#define USYM_SYMS_MAX	(1U << 20)
#define USYM_MAPS_MAX	4096
#define USYM_PROCS_MAX	4096
#define USYM_LOADS_MAX	16
/* Build-id bytes kept: perf's BUILD_ID_SIZE, which cuts longer ones. */
#define USYM_BUILD_ID_MAX	20

struct usym {
	__u64 addr;
	__u64 size;
	char *name;
};

struct ufile {
	dev_t dev;
	ino_t ino;
	char *path;
	struct usym *syms;	/* sorted by address */
	size_t nr, cap;
	struct {
		__u64 vaddr, off, filesz;
	} load[USYM_LOADS_MAX];
	int nload;
	bool elf;		/* a 64-bit ELF file was read */
	bool hit;		/* a frame was in one of its mappings */
	__u8 build_id[USYM_BUILD_ID_MAX];
	size_t build_id_len;	/* 0: none */
};

struct umap {
	__u64 start, end, pgoff;
	struct ufile *file;	/* NULL: anonymous or unreadable */
	char *name;		/* the mapping's path or [name] */
};

struct uproc {
	int pid;
	struct umap *maps;
	size_t nr;
	unsigned int gen;	/* the snapshot's number (usyms_gen()) */
};

struct usyms {
	struct ufile *files[USYM_FILES_MAX];
	size_t nfiles;
	struct uproc *procs;
	size_t nprocs, cap;
	unsigned int gens;	/* snapshots taken */
};

struct usyms *usyms_new(void)
{
	return calloc(1, sizeof(struct usyms));
}

static void ufile_free(struct ufile *f)
{
	size_t i;

	for (i = 0; i < f->nr; i++)
		free(f->syms[i].name);
	free(f->syms);
	free(f->path);
	free(f);
}

static void uproc_clear(struct uproc *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		free(p->maps[i].name);
	free(p->maps);
	p->maps = NULL;
	p->nr = 0;
}

void usyms_free(struct usyms *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->nfiles; i++)
		ufile_free(u->files[i]);
	for (i = 0; i < u->nprocs; i++)
		uproc_clear(&u->procs[i]);
	free(u->procs);
	free(u);
}

static bool in_file(__u64 off, __u64 len, __u64 size)
{
	return off <= size && len <= size - off;
}

static int usym_cmp(const void *a, const void *b)
{
	const struct usym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Sized symbols before unsized ones at one address. */
	return (x->size == 0) - (y->size == 0);
}

/* Read the functions of one symbol table into @f. */
static int read_table(struct ufile *f, const unsigned char *m, __u64 size,
		      const Elf64_Shdr *sh, const Elf64_Shdr *strtab)
{
	const Elf64_Sym *sym = (const void *)(m + sh->sh_offset);
	const char *str = (const char *)(m + strtab->sh_offset);
	__u64 n, i;

	if (sh->sh_entsize != sizeof(Elf64_Sym) ||
	    !in_file(sh->sh_offset, sh->sh_size, size) ||
	    !in_file(strtab->sh_offset, strtab->sh_size, size))
		return 0;
	n = sh->sh_size / sizeof(Elf64_Sym);
	for (i = 0; i < n && f->nr < USYM_SYMS_MAX; i++) {
		int type = ELF64_ST_TYPE(sym[i].st_info);
		__u32 nm = sym[i].st_name;
		struct usym *s;

		if (sym[i].st_shndx == SHN_UNDEF || !sym[i].st_value ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    nm >= strtab->sh_size || !str[nm] ||
		    strnlen(str + nm, strtab->sh_size - nm) ==
		    strtab->sh_size - nm)
			continue;
		if (f->nr == f->cap) {
			size_t cap = f->cap ? f->cap * 2 : 256;
			struct usym *p = realloc(f->syms, cap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			f->syms = p;
			f->cap = cap;
		}
		s = &f->syms[f->nr];
		s->addr = sym[i].st_value;
		s->size = sym[i].st_size;
		s->name = strdup(str + nm);
		if (!s->name)
			return -ENOMEM;
		f->nr++;
	}
	return 0;
}

static int read_elf(struct ufile *f, const unsigned char *m, __u64 size)
{
	const Elf64_Ehdr *eh = (const void *)m;
	const Elf64_Shdr *sh;
	const Elf64_Phdr *ph;
	int i, pass, err;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return 0;
	ph = (const void *)(m + eh->e_phoff);
	if (eh->e_phentsize != sizeof(*ph) ||
	    !in_file(eh->e_phoff, (__u64)eh->e_phnum * sizeof(*ph), size))
		return 0;
	for (i = 0; i < eh->e_phnum && f->nload < USYM_LOADS_MAX; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		f->load[f->nload].vaddr = ph[i].p_vaddr;
		f->load[f->nload].off = ph[i].p_offset;
		f->load[f->nload].filesz = ph[i].p_filesz;
		f->nload++;
	}
	f->elf = true;
	sh = (const void *)(m + eh->e_shoff);
	if (eh->e_shentsize != sizeof(*sh) ||
	    !in_file(eh->e_shoff, (__u64)eh->e_shnum * sizeof(*sh), size))
		return 0;
	/* .symtab (static functions too), else .dynsym (a stripped file). */
	for (pass = 0; pass < 2 && !f->nr; pass++)
		for (i = 0; i < eh->e_shnum; i++) {
			if (sh[i].sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) ||
			    sh[i].sh_link >= eh->e_shnum)
				continue;
			err = read_table(f, m, size, &sh[i],
					 &sh[sh[i].sh_link]);
			if (err)
				return err;
		}
	if (f->nr)
		qsort(f->syms, f->nr, sizeof(*f->syms), usym_cmp);
	return 0;
}

/* The GNU build-id note of @data's notes, if any, into @f. */
static bool note_build_id(struct ufile *f, Elf_Data *data)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (data &&
	       (off = gelf_getnote(data, off, &nh, &name_off, &desc_off))) {
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((char *)data->d_buf + name_off, "GNU", 4) ||
		    !nh.n_descsz)
			continue;
		f->build_id_len = nh.n_descsz < USYM_BUILD_ID_MAX ?
				  nh.n_descsz : USYM_BUILD_ID_MAX;
		memcpy(f->build_id, (char *)data->d_buf + desc_off,
		       f->build_id_len);
		return true;
	}
	return false;
}

/*
 * The file's build-id (NT_GNU_BUILD_ID), by libelf's note API: from the
 * SHT_NOTE sections, else from the PT_NOTE segments (a file whose section
 * headers were stripped), as perf's filename__read_build_id() looks for
 * it. Any ELF class; none found leaves build_id_len 0.
 */
static void read_build_id(struct ufile *f, int fd)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t i, n;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return;
	if (elf_kind(e) != ELF_K_ELF)
		goto out;
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    note_build_id(f, elf_getdata(scn, NULL)))
			goto out;
	if (elf_getphdrnum(e, &n))
		goto out;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_NOTE &&
		    note_build_id(f, elf_getdata_rawchunk(e, ph.p_offset,
							  ph.p_filesz,
							  ELF_T_NHDR)))
			break;
out:
	elf_end(e);
}

/*
 * The file of a mapping, read once: from @path if it is still the file
 * the process mapped (same device and inode), else from the process's
 * map_files link (a deleted or replaced file). NULL if it cannot be read.
 */
static struct ufile *ufile_get(struct usyms *u, const char *path,
			       const char *alt, dev_t dev, ino_t ino)
{
	struct ufile *f;
	struct stat st;
	void *m = MAP_FAILED;
	size_t i;
	int fd;

	for (i = 0; i < u->nfiles; i++)
		if (u->files[i]->dev == dev && u->files[i]->ino == ino)
			return u->files[i];
	if (u->nfiles == USYM_FILES_MAX)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) || st.st_dev != dev ||
			st.st_ino != ino)) {
		close(fd);
		fd = -1;
	}
	if (fd < 0 && alt)
		fd = open(alt, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f || fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto fail;
	f->dev = dev;
	f->ino = ino;
	f->path = strdup(path);
	if (!f->path)
		goto fail;
	if (st.st_size >= (off_t)sizeof(Elf64_Ehdr))
		m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m != MAP_FAILED) {
		int err = read_elf(f, m, st.st_size);

		munmap(m, st.st_size);
		if (err)
			goto fail;
		read_build_id(f, fd);
	}
	close(fd);
	u->files[u->nfiles++] = f;
	return f;
fail:
	if (f)
		ufile_free(f);
	close(fd);
	return NULL;
}

static struct uproc *uproc_get(struct usyms *u, int pid, bool create)
{
	size_t i;

	for (i = 0; i < u->nprocs; i++)
		if (u->procs[i].pid == pid)
			return &u->procs[i];
	if (!create || u->nprocs == USYM_PROCS_MAX)
		return NULL;
	if (u->nprocs == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 16;
		struct uproc *p = realloc(u->procs, cap * sizeof(*p));

		if (!p)
			return NULL;
		u->procs = p;
		u->cap = cap;
	}
	memset(&u->procs[u->nprocs], 0, sizeof(u->procs[0]));
	u->procs[u->nprocs].pid = pid;
	return &u->procs[u->nprocs++];
}

bool usyms_known(const struct usyms *u, int pid)
{
	size_t i;

	for (i = 0; i < u->nprocs; i++)
		if (u->procs[i].pid == pid)
			return u->procs[i].nr > 0;
	return false;
}

int usyms_rekey(struct usyms *u, int pid, int key)
{
	struct uproc *p = uproc_get(u, pid, false);

	if (!p)
		return -ENOENT;
	if (uproc_get(u, key, false))
		return -EEXIST;
	p->pid = key;
	return 0;
}

int usyms_snap(struct usyms *u, int pid)
{
	char path[64], line[4096 + 256], alt[128];
	struct umap *maps = NULL;
	struct uproc *p;
	size_t nr = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && nr < USYM_MAPS_MAX) {
		unsigned long long start, end, pgoff, ino;
		unsigned int maj, min;
		char perms[8];
		int n = 0;
		char *name;
		struct umap *mp;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start,
			   &end, perms, &pgoff, &maj, &min, &ino, &n) < 7 ||
		    !n)
			continue;
		if (perms[2] != 'x')
			continue;
		name = line + n;
		name[strcspn(name, "\n")] = '\0';
		mp = realloc(maps, (nr + 1) * sizeof(*maps));
		if (!mp)
			break;
		maps = mp;
		mp = &maps[nr];
		mp->start = start;
		mp->end = end;
		mp->pgoff = pgoff;
		mp->file = NULL;
		mp->name = strdup(*name ? name : "[anon]");
		if (!mp->name)
			break;
		if (ino && name[0] == '/') {
			/* " (deleted)": the file's old content, by map_files. */
			snprintf(alt, sizeof(alt), "/proc/%d/map_files/%llx-%llx",
				 pid, start, end);
			mp->file = ufile_get(u, name, alt,
					     makedev(maj, min), ino);
		}
		nr++;
	}
	fclose(f);
	if (!nr) {
		free(maps);
		return -ESRCH;	/* a zombie or a kernel thread: no memory */
	}
	p = uproc_get(u, pid, true);
	if (!p) {
		struct uproc tmp = { .maps = maps, .nr = nr };

		uproc_clear(&tmp);
		return -ENOMEM;
	}
	uproc_clear(p);
	p->maps = maps;
	p->nr = nr;
	p->gen = ++u->gens;
	return 0;
}

unsigned int usyms_gen(const struct usyms *u, int pid)
{
	const struct uproc *p = uproc_get((struct usyms *)u, pid, false);

	return p && p->nr ? p->gen : 0;
}

static const struct usym *usym_find(const struct ufile *f, __u64 v)
{
	size_t lo = 0, hi = f->nr;

	if (!f->nr || v < f->syms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->syms[mid].addr <= v)
			lo = mid;
		else
			hi = mid;
	}
	/* The nearest at or below: within its size, or unsized. */
	while (lo > 0 && f->syms[lo].size &&
	       v >= f->syms[lo].addr + f->syms[lo].size &&
	       f->syms[lo - 1].addr == f->syms[lo].addr)
		lo--;
	if (f->syms[lo].size && v >= f->syms[lo].addr + f->syms[lo].size)
		return NULL;
	return &f->syms[lo];
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

bool usyms_covers(const struct usyms *u, int pid, __u64 addr)
{
	const struct uproc *p = uproc_get((struct usyms *)u, pid, false);
	size_t i;

	for (i = 0; p && i < p->nr; i++)
		if (addr >= p->maps[i].start && addr < p->maps[i].end)
			return true;
	return false;
}

int usyms_name(const struct usyms *u, int pid, __u64 addr, char *buf,
	       size_t len)
{
	const struct umap *m = NULL;
	const struct usym *s = NULL;
	const struct uproc *p;
	__u64 off = 0, v = 0;
	size_t i;
	int j;

	p = uproc_get((struct usyms *)u, pid, false);
	for (i = 0; p && i < p->nr; i++)
		if (addr >= p->maps[i].start && addr < p->maps[i].end) {
			m = &p->maps[i];
			break;
		}
	if (!m) {
		snprintf(buf, len, "[unknown]");
		return -ESRCH;
	}
	if (m->file)
		m->file->hit = true;
	off = addr - m->start + m->pgoff;
	if (m->file && m->file->elf)
		for (j = 0; j < m->file->nload; j++)
			if (off >= m->file->load[j].off &&
			    off < m->file->load[j].off +
				  m->file->load[j].filesz) {
				v = off - m->file->load[j].off +
				    m->file->load[j].vaddr;
				s = usym_find(m->file, v);
				break;
			}
	if (s) {
		snprintf(buf, len, "%s", s->name);
		return 0;
	}
	snprintf(buf, len, "[%s+0x%llx]", base(m->name),
		 (unsigned long long)off);
	return -ENOENT;
}

int usyms_write_build_ids(const struct usyms *u, FILE *out)
{
	size_t i, j;
	int n = 0;

	for (i = 0; i < u->nfiles; i++) {
		const struct ufile *f = u->files[i];

		if (!f->hit || !f->build_id_len)
			continue;
		for (j = 0; j < f->build_id_len; j++)
			fprintf(out, "%02x", f->build_id[j]);
		fprintf(out, " %s\n", f->path);
		n++;
	}
	return ferror(out) ? -EIO : n;
}

/* The bias of mapping @m of an ELF file: its start less its ELF address. */
static bool map_bias(const struct umap *m, __u64 *bias)
{
	int j;

	for (j = 0; j < m->file->nload; j++)
		if (m->pgoff >= m->file->load[j].off &&
		    m->pgoff < m->file->load[j].off + m->file->load[j].filesz) {
			*bias = m->start - (m->pgoff - m->file->load[j].off +
					    m->file->load[j].vaddr);
			return true;
		}
	return false;
}

int usyms_files(const struct usyms *u, int pid,
		int (*cb)(const char *path, __u64 bias, __u64 start,
			  __u64 end, void *arg), void *arg)
{
	const struct uproc *p = uproc_get((struct usyms *)u, pid, false);
	size_t i, j;
	int ret;

	if (!p || !p->nr)
		return -ESRCH;
	for (i = 0; i < p->nr; i++) {
		const struct umap *m = &p->maps[i];
		__u64 bias, end = m->end;
		bool seen = false;

		if (!m->file || !m->file->elf || !map_bias(m, &bias))
			continue;
		/* Once per file and place: its first mapping, to its last. */
		for (j = 0; j < i && !seen; j++)
			seen = p->maps[j].file == m->file;
		if (seen)
			continue;
		for (j = i + 1; j < p->nr; j++)
			if (p->maps[j].file == m->file)
				end = p->maps[j].end;
		ret = cb(m->file->path, bias, m->start, end, arg);
		if (ret)
			return ret;
	}
	return 0;
}
