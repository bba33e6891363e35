// SPDX-License-Identifier: GPL-2.0
/*
 * pea: a small ELF reader for uprobes: the file offset of a function of an
 * executable or shared library, from its .symtab or .dynsym. For PIE and
 * non-PIE files alike, the offset is the symbol's value minus the vaddr of
 * the PT_LOAD segment holding it plus that segment's file offset. Also
 * every function's name, for uprobe globs (probe_glob.c).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "pea_tool.h"

/* Whether [off, off + len) lies inside a file of @size bytes. */
static bool in_file(__u64 off, __u64 len, __u64 size)
{
	return off <= size && len <= size - off;
}

/*
 * Walk one symbol table's defined functions: @fn(@arg, name, value) for
 * each until it returns non-zero, which is returned (0: all walked).
 */
static int each_in_table(const unsigned char *f, __u64 size,
			 const Elf64_Shdr *sh, const Elf64_Shdr *strtab,
			 int (*fn)(void *arg, const char *name, __u64 value),
			 void *arg)
{
	__u64 n, i;
	const Elf64_Sym *sym = (const void *)(f + sh->sh_offset);
	const char *str = (const char *)(f + strtab->sh_offset);
	int ret;

	if (sh->sh_entsize != sizeof(Elf64_Sym) ||
	    !in_file(sh->sh_offset, sh->sh_size, size) ||
	    !in_file(strtab->sh_offset, strtab->sh_size, size))
		return 0;
	n = sh->sh_size / sizeof(Elf64_Sym);
	for (i = 0; i < n; i++) {
		__u32 nm = sym[i].st_name;
		int type = ELF64_ST_TYPE(sym[i].st_info);

		if (sym[i].st_shndx == SHN_UNDEF || !sym[i].st_value ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC &&
		     type != STT_NOTYPE) ||
		    nm >= strtab->sh_size ||
		    strnlen(str + nm, strtab->sh_size - nm) ==
		    strtab->sh_size - nm)
			continue;
		ret = fn(arg, str + nm, sym[i].st_value);
		if (ret)
			return ret;
	}
	return 0;
}

struct find_ctx {
	const char *name;
	__u64 value;
};

static int find_one(void *arg, const char *name, __u64 value)
{
	struct find_ctx *c = arg;

	if (strcmp(name, c->name))
		return 0;
	c->value = value;
	return 1;
}

/* The file offset of virtual address @v, from the PT_LOAD segments. */
static int vaddr_to_off(const unsigned char *f, __u64 size,
			const Elf64_Ehdr *eh, __u64 v, __u64 *off)
{
	const Elf64_Phdr *ph = (const void *)(f + eh->e_phoff);
	int i;

	if (eh->e_phentsize != sizeof(*ph) ||
	    !in_file(eh->e_phoff, (__u64)eh->e_phnum * sizeof(*ph), size))
		return -ENOEXEC;
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && v >= ph[i].p_vaddr &&
		    v < ph[i].p_vaddr + ph[i].p_filesz) {
			*off = v - ph[i].p_vaddr + ph[i].p_offset;
			return 0;
		}
	return -ENOEXEC;
}

/*
 * Walk the defined functions of the ELF image @f: .symtab first (it has
 * static functions too), then .dynsym; as each_in_table(), or -ENOEXEC.
 */
static int elf_each(const unsigned char *f, __u64 size,
		    int (*fn)(void *arg, const char *name, __u64 value),
		    void *arg)
{
	const Elf64_Ehdr *eh = (const void *)f;
	const Elf64_Shdr *sh;
	int i, pass, ret = 0;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    (eh->e_type != ET_EXEC && eh->e_type != ET_DYN))
		return -ENOEXEC;
	sh = (const void *)(f + eh->e_shoff);
	if (eh->e_shentsize != sizeof(*sh) ||
	    !in_file(eh->e_shoff, (__u64)eh->e_shnum * sizeof(*sh), size))
		return -ENOEXEC;
	for (pass = 0; pass < 2 && !ret; pass++)
		for (i = 0; i < eh->e_shnum && !ret; i++) {
			if (sh[i].sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) ||
			    sh[i].sh_link >= eh->e_shnum)
				continue;
			ret = each_in_table(f, size, &sh[i],
					    &sh[sh[i].sh_link], fn, arg);
		}
	return ret;
}

static int elf_lookup(const unsigned char *f, __u64 size, const char *name,
		      __u64 *off)
{
	struct find_ctx c = { .name = name };
	int ret = elf_each(f, size, find_one, &c);

	if (ret < 0)
		return ret;
	if (!ret)
		return -ENOENT;
	return vaddr_to_off(f, size, (const void *)f, c.value, off);
}

/* Map @path read-only: 0 with *@f and *@size, or -errno. */
static int elf_map(const char *path, void **f, __u64 *size)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -ENOEXEC;
	}
	*f = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	err = *f == MAP_FAILED ? -errno : 0;
	close(fd);
	*size = st.st_size;
	return err;
}

/**
 * elf_sym_offset() - the file offset of function @name in ELF file @path
 * @path: an executable or a shared library (64-bit, little-endian)
 * @name: the symbol, as .symtab or .dynsym spell it
 * @off:  gets the offset
 *
 * Return: 0, -errno of open/stat/mmap, -ENOEXEC (not a 64-bit
 * little-endian ELF executable or library, or the symbol is in no
 * loadable segment), or -ENOENT (no such function).
 */
int elf_sym_offset(const char *path, const char *name, __u64 *off)
{
	__u64 size;
	void *f;
	int err;

	err = elf_map(path, &f, &size);
	if (err)
		return err;
	err = elf_lookup(f, size, name, off);
	munmap(f, size);
	return err;
}

struct each_ctx {
	void (*fn)(void *arg, const char *name);
	void *arg;
};

static int each_one(void *arg, const char *name, __u64 value)
{
	struct each_ctx *c = arg;

	(void)value;
	c->fn(c->arg, name);
	return 0;
}

/**
 * elf_sym_each() - every function of ELF file @path, by name
 * @path: an executable or a shared library (64-bit, little-endian)
 * @fn:   called with @arg and each defined function's name (.symtab's,
 *        then .dynsym's: a name may come twice)
 * @arg:  for @fn
 *
 * Return: 0, -errno of open/stat/mmap, or -ENOEXEC (not a 64-bit
 * little-endian ELF executable or library).
 */
int elf_sym_each(const char *path, void (*fn)(void *arg, const char *name),
		 void *arg)
{
	struct each_ctx c = { .fn = fn, .arg = arg };
	__u64 size;
	void *f;
	int err;

	err = elf_map(path, &f, &size);
	if (err)
		return err;
	err = elf_each(f, size, each_one, &c);
	munmap(f, size);
	return err;
}
