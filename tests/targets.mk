# Test programs for the integration tests (included by tests/Makefile).
# Each targets/NAME.c builds to build/targets/NAME; simple.c also builds as
# PIE, non-PIE and stripped (.dynsym only) variants, mt also with
# -fcf-protection (mt_cet), and libuser links
# against the shared library libattest.so.
TARGET_CFLAGS := -O1 -g -fno-omit-frame-pointer -std=gnu11 -Wall -Wextra -pthread
TARGET_HDRS := targets/common.h
TD := $(B)/targets

TARGET_PROGS := $(filter-out libattest libuser fifty,$(patsubst targets/%.c,%,$(wildcard targets/*.c)))
TARGETS := $(addprefix $(TD)/,$(TARGET_PROGS) simple_pie simple_nopie simple_stripped \
	libattest.so libuser mt_cet thrower)

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

# Built as CET distributions build: functions start with endbr64 (single-
# stepped) then push %rbp (emulated), the case probe placement is for.
$(TD)/mt_cet: targets/mt.c $(TARGET_HDRS) | $(TD)
	$(CC) $(TARGET_CFLAGS) -fcf-protection=full $< -o $@

# -O2: outer() reaches inner() by a tail call (jmp), sharing its return slot.
$(TD)/tailcall: targets/tailcall.c $(TARGET_HDRS) | $(TD)
	$(CC) $(TARGET_CFLAGS) -O2 -foptimize-sibling-calls $< -o $@

$(TD)/libattest.so: targets/libattest.c $(TARGET_HDRS) | $(TD)
	$(CC) $(TARGET_CFLAGS) -fPIC -shared $< -o $@

$(TD)/libuser: targets/libuser.c $(TD)/libattest.so $(TARGET_HDRS) | $(TD)
	$(CC) $(TARGET_CFLAGS) $< -o $@ -L$(TD) -lattest -Wl,-rpath,'$$ORIGIN'

# C++ exceptions for libstdc++'s USDT probes (throw, catch).
$(TD)/thrower: targets/thrower.cpp | $(TD)
	$(CXX) -O1 -g $< -o $@

$(TD):
	mkdir -p $@

# fifty: the diff tests' program, built three times under one file name, as
# two builds of one program differ (different build-ids): the base, one with
# f17 20 % slower, one calling f33 twice as often.
FIFTY := $(TD)/ab/base/fifty $(TD)/ab/slow/fifty $(TD)/ab/twice/fifty
targets: $(FIFTY)
FIFTY_DEFS_base :=
FIFTY_DEFS_slow := -DSLOW_FN=17
FIFTY_DEFS_twice := -DTWICE_FN=33
$(TD)/ab/%/fifty: targets/fifty.c $(TARGET_HDRS)
	mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) $(FIFTY_DEFS_$*) $< -o $@

# -O2: tail() reaches leaf_direct() by a jmp, a call site of its own.
$(TD)/callsites: targets/callsites.c $(TARGET_HDRS) | $(TD)
	$(CC) $(TARGET_CFLAGS) -O2 -foptimize-sibling-calls $< -o $@
