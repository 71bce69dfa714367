// SPDX-License-Identifier: MIT
/*
 * libcapstone, loaded when annotate first disassembles instead of at
 * start-up. Debian's libcapstone.so.4 carries every architecture's tables:
 * 77,000 relative relocations that the dynamic loader applied, and whose
 * 2.5 MB of pages it touched, at every start of xpu-report, about 15 ms
 * (more than half of a short report's start), though only annotate uses it.
 * As report/finders/debuginfod_dl.c does for libdebuginfod, these definitions
 * stand in for the functions annotate.c calls (the executable exports
 * nothing, so nothing else binds to them); the soname's major is the one of
 * the header they were compiled against (cs_insn's layout changes between
 * majors). Static builds link libcapstone.a instead.
 */
#if defined(HAVE_CAPSTONE) && !defined(XPU_STATIC)
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <capstone/capstone.h>
#include "common/log.h"

#define CAPSTONE_DL_STR2(x) #x
#define CAPSTONE_DL_STR(x) CAPSTONE_DL_STR2(x)
#define CAPSTONE_DL_SONAME "libcapstone.so." CAPSTONE_DL_STR(CS_API_MAJOR)

static struct {
	bool tried, ok;
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_err (*close)(csh *);
	cs_err (*option)(csh, cs_opt_type, size_t);
	size_t (*disasm)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **);
	void (*free)(cs_insn *, size_t);
	bool (*insn_group)(csh, const cs_insn *, unsigned int);
} capstone_dl;

static bool capstone_dl__load(void)
{
	void *h;

	if (capstone_dl.tried)
		return capstone_dl.ok;
	capstone_dl.tried = true;
	h = dlopen(CAPSTONE_DL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		debug(1, "annotate: %s (install libcapstone%d)", dlerror(), CS_API_MAJOR);
		return false;
	}
	*(void **)&capstone_dl.open = dlsym(h, "cs_open");
	*(void **)&capstone_dl.close = dlsym(h, "cs_close");
	*(void **)&capstone_dl.option = dlsym(h, "cs_option");
	*(void **)&capstone_dl.disasm = dlsym(h, "cs_disasm");
	*(void **)&capstone_dl.free = dlsym(h, "cs_free");
	*(void **)&capstone_dl.insn_group = dlsym(h, "cs_insn_group");
	capstone_dl.ok = capstone_dl.open && capstone_dl.close && capstone_dl.option &&
			 capstone_dl.disasm && capstone_dl.free && capstone_dl.insn_group;
	if (!capstone_dl.ok)
		debug(1, "annotate: %s lacks a function", CAPSTONE_DL_SONAME);
	return capstone_dl.ok;
}

/* Only cs_open can be the first call: the others take what it made. */
cs_err cs_open(cs_arch arch, cs_mode mode, csh *handle)
{
	return capstone_dl__load() ? capstone_dl.open(arch, mode, handle) : CS_ERR_MEM;
}

cs_err cs_close(csh *handle)
{
	return capstone_dl.close(handle);
}

cs_err cs_option(csh handle, cs_opt_type type, size_t value)
{
	return capstone_dl.option(handle, type, value);
}

size_t cs_disasm(csh handle, const uint8_t *code, size_t code_size, uint64_t address,
		 size_t count, cs_insn **insn)
{
	return capstone_dl.disasm(handle, code, code_size, address, count, insn);
}

void cs_free(cs_insn *insn, size_t count)
{
	capstone_dl.free(insn, count);
}

bool cs_insn_group(csh handle, const cs_insn *insn, unsigned int group_id)
{
	return capstone_dl.insn_group(handle, insn, group_id);
}
#endif
