# Test programs for the integration tests (included by tests/Makefile).
# Each targets/NAME.c builds to build/targets/NAME; simple.c also builds as
# PIE, non-PIE and stripped (.dynsym only) variants, and libuser links
# against the shared library libattest.so.
TARGET_CFLAGS := -O1 -g -fno-omit-frame-pointer -std=gnu11 -Wall -Wextra -pthread
TARGET_HDRS := targets/common.h
TD := $(B)/targets

TARGET_PROGS := $(filter-out libattest libuser,$(patsubst targets/%.c,%,$(wildcard targets/*.c)))
TARGETS := $(addprefix $(TD)/,$(TARGET_PROGS) simple_pie simple_nopie simple_stripped \
	libattest.so libuser thrower)

targets: $(TARGETS)

$(TD)/%: targets/%.c $(TARGET_HDRS) | $(TD)
	$(CC) $(TARGET_CFLAGS) $< -o $@

$(TD)/simple_pie: targets/simple.c $(TARGET_HDRS) | $(TD)
	$(CC) $(TARGET_CFLAGS) -fPIE -pie $< -o $@

$(TD)/simple_nopie: targets/simple.c $(TARGET_HDRS) | $(TD)
	$(CC) $(TARGET_CFLAGS) -fno-pie -no-pie $< -o $@

# Exports every global function, then loses .symtab: only .dynsym remains.
$(TD)/simple_stripped: targets/simple.c $(TARGET_HDRS) | $(TD)
	$(CC) $(TARGET_CFLAGS) -rdynamic $< -o $@.tmp
	strip $@.tmp && mv $@.tmp $@

$(TD)/libattest.so: targets/libattest.c $(TARGET_HDRS) | $(TD)
	$(CC) $(TARGET_CFLAGS) -fPIC -shared $< -o $@

$(TD)/libuser: targets/libuser.c $(TD)/libattest.so $(TARGET_HDRS) | $(TD)
	$(CC) $(TARGET_CFLAGS) $< -o $@ -L$(TD) -lattest -Wl,-rpath,'$$ORIGIN'

# C++ exceptions for libstdc++'s USDT probes (throw, catch).
$(TD)/thrower: targets/thrower.cpp | $(TD)
	$(CXX) -O1 -g $< -o $@

$(TD):
	mkdir -p $@
