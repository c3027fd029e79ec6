# adaptrace: build with `make`, test with `make check`, install with `make install`.
VERSION := 0.1.0
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DESTDIR ?=

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
OUT := build
ARCH_INC := /usr/include/$(shell uname -m)-linux-gnu

CFLAGS ?= -O2 -g
AT_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers \
	-Iinclude -Iuser -I$(OUT) -DAT_VERSION='"$(VERSION)"' -D_GNU_SOURCE
LDLIBS := -lbpf -lelf -lz -lm -lcapstone

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror \
	-Iinclude -Ivmlinux -I$(ARCH_INC)

BPF_SRCS := $(wildcard bpf/*.bpf.c)
SKELS := $(patsubst bpf/%.bpf.c,$(OUT)/%.skel.h,$(BPF_SRCS))
USER_SRCS := $(wildcard user/*.c)
USER_OBJS := $(patsubst user/%.c,$(OUT)/user/%.o,$(USER_SRCS))
# Every module but the entry point, for unit tests and fuzzers.
LIB_SRCS := $(filter-out user/main.c,$(USER_SRCS))

.PHONY: all clean install check unit fuzz targets bench format demo
.SECONDARY:
all: adaptrace

vmlinux/vmlinux.h:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(OUT)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) include/adaptrace.h vmlinux/vmlinux.h | $(OUT)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp.o
	$(BPFTOOL) gen object $@ $@.tmp.o && rm -f $@.tmp.o

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@.tmp && mv $@.tmp $@

$(OUT)/user/%.o: user/%.c $(wildcard user/*.h) include/adaptrace.h $(SKELS) | $(OUT)
	$(CC) $(CFLAGS) $(AT_CFLAGS) -c $< -o $@

adaptrace: $(USER_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(OUT):
	mkdir -p $(OUT)/user

install: adaptrace
	install -D -m 0755 adaptrace $(DESTDIR)$(BINDIR)/adaptrace

# Test programs, unit tests (ASan/UBSan) and fuzzers live under tests/.
targets unit fuzz: adaptrace
	$(MAKE) -C tests $@ LIB_SRCS="$(addprefix ../,$(LIB_SRCS))" OUT=../$(OUT)

check: adaptrace
	$(MAKE) -j$$(nproc) -C tests all LIB_SRCS="$(addprefix ../,$(LIB_SRCS))" OUT=../$(OUT)
	tests/run.sh

# The bundled demo: a request-processing workload traced from its start.
$(OUT)/demo: demo/demo.c | $(OUT)
	$(CC) -O1 -g -fno-omit-frame-pointer -pthread $< -o $@

demo: adaptrace $(OUT)/demo
	./adaptrace record -o $(OUT)/demo.data -- $(OUT)/demo
	./adaptrace report $(OUT)/demo.data --top 5 --hist lookup

bench: adaptrace
	$(MAKE) -C bench

format:
	clang-format -i bpf/*.c user/*.c user/*.h include/*.h tests/unit/*.c tests/unit/*.h tests/fuzz/*.c

clean:
	rm -rf $(OUT) adaptrace
	-$(MAKE) -C tests clean
	-$(MAKE) -C bench clean
