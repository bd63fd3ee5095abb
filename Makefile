# chatfmt — plain make. `make` builds build/libchatfmt.{a,so} and build/chatfmt.
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter
CPPFLAGS += -Iinclude -Isrc -D_POSIX_C_SOURCE=200809L
LDLIBS  := -lm -lpthread
BUILD   ?= build
SHARED  ?= ../shared
VERSION := 0.1.0
SOMAJOR := 0

SRCS    := $(sort $(wildcard src/*.c))
OBJS    := $(SRCS:src/%.c=$(BUILD)/obj/%.o)
PICOBJS := $(SRCS:src/%.c=$(BUILD)/pic/%.o)
CLISRCS := $(sort $(wildcard cli/*.c))
CLIOBJS := $(CLISRCS:cli/%.c=$(BUILD)/cli/%.o)

all: $(BUILD)/libchatfmt.a $(BUILD)/libchatfmt.so $(BUILD)/chatfmt

$(BUILD)/obj/%.o: src/%.c $(wildcard src/*.h) include/chatfmt.h
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

$(BUILD)/pic/%.o: src/%.c $(wildcard src/*.h) include/chatfmt.h
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -fPIC -fvisibility=hidden -DCF_BUILD_SHARED -c $< -o $@

$(BUILD)/cli/%.o: cli/%.c $(wildcard cli/*.h) include/chatfmt.h
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

$(BUILD)/libchatfmt.a: $(OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libchatfmt.so: $(PICOBJS)
	$(CC) -shared -Wl,-soname,libchatfmt.so.$(SOMAJOR) -o $(BUILD)/libchatfmt.so.$(VERSION) $^ $(LDLIBS)
	ln -sf libchatfmt.so.$(VERSION) $(BUILD)/libchatfmt.so.$(SOMAJOR)
	ln -sf libchatfmt.so.$(VERSION) $@

$(BUILD)/chatfmt: $(CLIOBJS) $(BUILD)/libchatfmt.a
	$(CC) $(CFLAGS) -o $@ $(CLIOBJS) $(BUILD)/libchatfmt.a $(LDLIBS)

run: all
	$(BUILD)/chatfmt render glm45 examples/conversation.json

test: all
	CHATFMT_BIN=$(BUILD)/chatfmt BUILD=$(BUILD) CC="$(CC)" CFLAGS="$(CFLAGS)" \
	CHATFMT_SHARED="$${CHATFMT_SHARED:-$(SHARED)}" bash tests/run_tests.sh

clean:
	rm -rf build build-*

.PHONY: all run test clean

# Speed and memory against Python Jinja2 in the same run (a benchmark, not a test).
bench: all
	BUILD=$(BUILD) CC="$(CC)" CHATFMT_SHARED="$${CHATFMT_SHARED:-$(SHARED)}" bash bench/run_bench.sh

.PHONY: bench

# The same suite on an AddressSanitizer + UBSan build in build-asan/.
ASAN_CFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

test-asan:
	$(MAKE) BUILD=build-asan CFLAGS="$(ASAN_CFLAGS)" test

# The CLI on every seed x conversation (and the batch tables) under valgrind.
test-valgrind: all
	CHATFMT_SHARED="$${CHATFMT_SHARED:-$(SHARED)}" python3 tests/memcheck.py --bin $(BUILD)/chatfmt --logs $(BUILD)/memcheck

.PHONY: test-asan test-valgrind
