# xpu-perf build. `make` builds ./xpu-record, ./xpu-report and, when the CUDA
# toolkit is found, ./libxpu-cupti.so. `make static` links the two tools
# statically for copying to machines without build dependencies.
# `make check` builds and runs the whole test suite. Quiet unless V=1.

CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
CUDA_HOME ?= /usr/local/cuda
O        ?= build
PREFIX   ?= /usr/local
VERSION  := 0.1.0

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' '$(1)' '$(2)';
endif

CFLAGS_BASE := -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	-D_GNU_SOURCE -std=gnu11 -fno-omit-frame-pointer
CFLAGS   ?=
CFLAGS   += $(CFLAGS_BASE) -I. -I$(O) -DXPU_VERSION='"$(VERSION)"'
LDFLAGS  ?=

include Makefile.config

CFLAGS += $(foreach f,$(FEATURES),-DHAVE_$(f)=1)

ifeq ($(STATIC),1)
LDFLAGS += -static
CFLAGS += -DXPU_STATIC=1
endif

# ---- libraries each program needs --------------------------------------------
LIBS_FORMAT := -lzstd -lz -lpthread
# libdw: the report's CFI step, run by the recorder to prune stack words
# (record/unwind/unwind_reads.c)
LIBS_RECORD := -lbpf -ldw -lelf $(LIBS_FORMAT) -llzma -lbz2
LIBS_REPORT := -ldw -lelf $(LIBS_FORMAT) -llzma -lbz2 -ldl
ifneq ($(call has,LIBIBERTY),)
LIBS_REPORT += -liberty
endif
ifneq ($(call has,CAPSTONE),)
ifeq ($(STATIC),1)
LIBS_REPORT += -lcapstone
else
# libcapstone is dlopen()ed when annotate first disassembles
# (report/annotate/capstone_dl.c): linking it costs every start ~15 ms of relocations.
LIBS_REPORT += -ldl
endif
endif
ifneq ($(call has,NCURSES),)
LIBS_REPORT += -lncursesw -ltinfo
endif
ifneq ($(call has,DEBUGINFOD),)
ifneq ($(STATIC),1)
# libdebuginfod is dlopen()ed on first use (report/finders/debuginfod_dl.c): linking
# it would load 27 more libraries at every start.
LIBS_REPORT += -ldl
endif
endif
ifneq ($(call has,PROTOBUF_C),)
# --pprof: profile.proto compiled by protoc-c into a small library of its own,
# linked wherever the report's objects are (tests and fuzz builds too);
# --timeline: our subset of Perfetto's trace protos, the same way.
PPROF_LIB := $(O)/gen/libpprof-pb.a
PERFETTO_LIB := $(O)/gen/libperfetto-pb.a
LIBS_REPORT := $(PPROF_LIB) $(PERFETTO_LIB) $(LIBS_REPORT) -lprotobuf-c
CFLAGS += -I$(O)/gen
endif
ifeq ($(STATIC),1)
# Static libdw pulls libelf's zstd use; libdebuginfod is not linkable statically.
LIBS_REPORT := $(filter-out -ldebuginfod,$(LIBS_REPORT)) -lzstd
LIBS_RECORD += -lzstd
CFLAGS := $(filter-out -DHAVE_DEBUGINFOD=1,$(CFLAGS))
endif

# ---- sources: one folder per layer --------------------------------------------
LIB_SRCS    := $(wildcard common/*.c format/*.c)
RECORD_SRCS := $(wildcard record/*.c record/*/*.c)
REPORT_SRCS := $(wildcard report/*.c report/*/*.c)
CUPTI_SRCS  := $(wildcard cupti/*.c cupti/memory/*.c)
BPF_SRCS    := $(wildcard bpf/*.bpf.c)
ARCHIVE_SRCS := $(wildcard archive/*.c)

LIB_OBJS    := $(LIB_SRCS:%.c=$(O)/%.o)
RECORD_OBJS := $(RECORD_SRCS:%.c=$(O)/%.o)
REPORT_OBJS := $(REPORT_SRCS:%.c=$(O)/%.o)
ARCHIVE_OBJS := $(ARCHIVE_SRCS:%.c=$(O)/%.o)
BPF_OBJS    := $(BPF_SRCS:%.bpf.c=$(O)/bpf/%.bpf.o)
BPF_SKELS   := $(BPF_SRCS:bpf/%.bpf.c=$(O)/bpf/%.skel.h)
LIBXPU      := $(O)/libxpu.a

# Programs land at the top of the tree (BINDIR=. ); `make static` puts its
# statically linked pair in $(O)/static/bin instead.
BINDIR ?= .
PROGS := $(BINDIR)/xpu-record $(BINDIR)/xpu-report $(BINDIR)/xpu-archive
ifneq ($(call has,CUDA),)
PROGS += libxpu-cupti.so
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all static install check test clean demo bench fuzz version man

all: $(PROGS)

version:
	@echo "xpu-perf $(VERSION) features: $(FEATURES)"

$(O)/%.o: %.c
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(LIBXPU): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# ---- BPF: .bpf.c -> .bpf.o -> .skel.h ---------------------------------------
$(O)/vmlinux.h:
	$(call msg,GEN,$@)
	@mkdir -p $(dir $@)
	$(Q)test -r /sys/kernel/btf/vmlinux || { echo "error: /sys/kernel/btf/vmlinux missing: the build needs a kernel with BTF (CONFIG_DEBUG_INFO_BTF=y)" >&2; exit 1; }
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

BPF_ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
$(O)/bpf/%.bpf.o: bpf/%.bpf.c $(O)/vmlinux.h $(wildcard bpf/*.h) format/xpu_format.h
	$(call msg,BPF,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -I$(O) -I. -c $< -o $@
	$(Q)llvm-strip -g $@ 2>/dev/null || true

$(O)/bpf/%.skel.h: $(O)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(RECORD_OBJS): $(BPF_SKELS)

$(BINDIR)/xpu-record: $(RECORD_OBJS) $(LIBXPU)
	$(call msg,LINK,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_RECORD)

ifneq ($(PPROF_LIB),)
$(O)/gen/profile.pb-c.c $(O)/gen/profile.pb-c.h: $(PPROF_PROTO)
	$(call msg,PROTOC,$@)
	@mkdir -p $(O)/gen
	$(Q)protoc-c --c_out=$(O)/gen --proto_path=$(dir $(PPROF_PROTO)) $(PPROF_PROTO)

$(O)/gen/perfetto_trace.pb-c.c $(O)/gen/perfetto_trace.pb-c.h: report/output/perfetto_trace.proto
	$(call msg,PROTOC,$@)
	@mkdir -p $(O)/gen
	$(Q)protoc-c --c_out=$(O)/gen --proto_path=report/output $<

$(O)/gen/%.pb-c.o: $(O)/gen/%.pb-c.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -w -c -o $@ $<

$(PPROF_LIB): $(O)/gen/profile.pb-c.o
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(PERFETTO_LIB): $(O)/gen/perfetto_trace.pb-c.o
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# Everything that includes the generated headers or links LIBS_REPORT waits for them.
$(REPORT_OBJS) $(O)/asan/obj/report/output/pprof.o $(O)/fuzz/obj/report/output/pprof.o \
$(O)/asan/obj/report/output/timeline.o $(O)/fuzz/obj/report/output/timeline.o: | $(PPROF_LIB) $(PERFETTO_LIB)
endif

# The archive writer is xpu-archive's alone.
$(BINDIR)/xpu-report: $(filter-out $(O)/report/files/archive_write.o,$(REPORT_OBJS)) $(LIBXPU)
	$(call msg,LINK,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_REPORT)

# xpu-archive runs the report's session passes: report objects minus main.o.
$(BINDIR)/xpu-archive: $(ARCHIVE_OBJS) $(filter-out $(O)/report/main.o,$(REPORT_OBJS)) $(LIBXPU)
	$(call msg,LINK,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS_REPORT)

# ---- CUPTI injection library (needs the CUDA toolkit) ---------------------------
CUPTI_CFLAGS := $(CFLAGS_BASE) -I. -fPIC -fvisibility=hidden -I$(CUDA_HOME)/include \
	-I$(CUDA_HOME)/extras/CUPTI/include -DXPU_VERSION='"$(VERSION)"'
CUPTI_LDFLAGS := -shared -Wl,-z,defs -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/extras/CUPTI/lib64 \
	-Wl,-rpath,$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/extras/CUPTI/lib64
# The library lives inside the profiled process: it links the cupti/ objects,
# the record encoder and the launch walk (common/unwind_simple_walk.c,
# common/unwind_table.c: libc only); no reader, writer, die(), zstd or zlib.
CUPTI_OBJS := $(CUPTI_SRCS:%.c=$(O)/pic/%.o) $(O)/pic/format/encode.o \
	$(O)/pic/common/unwind_simple_walk.o $(O)/pic/common/unwind_table.o

$(O)/pic/%.o: %.c
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CUPTI_CFLAGS) -MMD -MP -c -o $@ $<

libxpu-cupti.so: $(CUPTI_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CUPTI_LDFLAGS) -o $@ $^ -lcupti -lpthread

# ---- static and install -----------------------------------------------------
static:
	$(MAKE) O=$(O)/static STATIC=1 BINDIR=$(O)/static/bin $(O)/static/bin/xpu-record $(O)/static/bin/xpu-report $(O)/static/bin/xpu-archive
	@echo "static binaries: $(O)/static/bin/xpu-record $(O)/static/bin/xpu-report $(O)/static/bin/xpu-archive"

# Man pages from the command pages in Documentation/ (pandoc, which
# scripts/setup.sh installs): `man -l $(O)/man/xpu-report.1`.
MAN_PAGES := $(patsubst %,$(O)/man/%.1,xpu-record xpu-report xpu-report-tui xpu-archive)
man: $(MAN_PAGES)
$(O)/man/%.1: Documentation/%.md Documentation/man.lua
	@command -v pandoc >/dev/null || { echo "make man: pandoc not found: run scripts/setup.sh (or apt-get install pandoc)" >&2; exit 1; }
	@mkdir -p $(@D)
	$(call msg,MAN,$@)pandoc -s -f markdown -t man --shift-heading-level-by=-1 \
		--lua-filter=Documentation/man.lua -M title=$* -M section=1 \
		-M header="xpu-perf manual" -M footer="xpu-perf $(VERSION)" $< -o $@

install: all man
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/xpu-perf $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 xpu-record xpu-report xpu-archive $(DESTDIR)$(PREFIX)/bin/
	$(if $(call has,CUDA),install -m 755 libxpu-cupti.so $(DESTDIR)$(PREFIX)/lib/xpu-perf/)
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man1/

# ---- tests --------------------------------------------------------------------
-include tests/Makefile.tests
-include bench/Makefile.bench

clean:
	rm -rf $(O) xpu-record xpu-report xpu-archive libxpu-cupti.so

-include $(shell find $(O) -name '*.d' 2>/dev/null)
