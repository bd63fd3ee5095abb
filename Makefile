# chatfmt — plain make. `make` builds build/libchatfmt.{a,so} and build/chatfmt.
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter
# Code layout the library is measured with (make bench), each flag kept if
# $(CC) takes it: functions start on cache lines (render-only 1.5% faster),
# and x86 gcc zeroes structs with vector stores, not `rep stosq`, whose
# start-up (~30 cycles) a render met three times (13 ns of its fixed 70).
# `make TUNE=` builds without them.
comma   := ,
ifeq ($(origin TUNE),undefined)
TUNE    := $(shell for f in -falign-functions=64 -mmemset-strategy=vector_loop:1024:noalign$(comma)libcall:-1:noalign; do \
             $(CC) -Werror $$f -x c -c /dev/null -o /dev/null 2>/dev/null && printf '%s ' "$$f"; done)
endif
CPPFLAGS += -Iinclude -Isrc -D_POSIX_C_SOURCE=200809L
LDLIBS  := -lm -lpthread
BUILD   ?= build
SHARED  ?= ../shared
VERSION := 0.1.0
SOMAJOR := 0

# The stages, each a folder: engine (template text -> output), chat (template
# sources, caps, polyfills), reply (model text -> message), the API on top.
SRCS    := $(sort $(wildcard src/*.c src/*/*.c))
HDRS    := $(wildcard src/*.h src/*/*.h)
OBJS    := $(SRCS:src/%.c=$(BUILD)/obj/%.o)
PICOBJS := $(SRCS:src/%.c=$(BUILD)/pic/%.o)
CLISRCS := $(sort $(wildcard cli/*.c))
CLIOBJS := $(CLISRCS:cli/%.c=$(BUILD)/cli/%.o)

all: $(BUILD)/libchatfmt.a $(BUILD)/libchatfmt.so $(BUILD)/chatfmt

$(BUILD)/obj/%.o: src/%.c $(HDRS) include/chatfmt.h
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(TUNE) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

$(BUILD)/pic/%.o: src/%.c $(HDRS) include/chatfmt.h
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(TUNE) $(CFLAGS) $(CPPFLAGS) -fPIC -fvisibility=hidden -DCF_BUILD_SHARED -c $< -o $@

$(BUILD)/cli/%.o: cli/%.c $(wildcard cli/*.h) include/chatfmt.h
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(TUNE) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

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

test: all python-ext
	CHATFMT_BIN=$(BUILD)/chatfmt BUILD=$(BUILD) CC="$(CC)" CFLAGS="$(CFLAGS)" \
	CHATFMT_SHARED="$${CHATFMT_SHARED:-$(SHARED)}" bash tests/run_tests.sh

clean:
	rm -rf build build-* python/chatfmt/_speedups*.so

.PHONY: all run test clean

# The Python binding's optional C render path (python/chatfmt/_speedups.c):
# built beside the package when this python3 has its headers, else skipped
# (the binding then renders through ctypes alone, with the same results).
PY_EXT_SUFFIX := $(shell python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX') or '')" 2>/dev/null)
PY_INCLUDE    := $(shell python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])" 2>/dev/null)
PY_EXT        := python/chatfmt/_speedups$(PY_EXT_SUFFIX)

python-ext:
	@if [ -n "$(PY_EXT_SUFFIX)" ] && [ -f "$(PY_INCLUDE)/Python.h" ]; then \
	    $(MAKE) --no-print-directory $(PY_EXT); \
	else echo "python-ext: no Python.h for python3: the binding uses its ctypes path only"; fi

PY_EXT_SRCS   := python/chatfmt/_speedups.c python/chatfmt/_render_batch.c python/chatfmt/_batch_pool.c python/chatfmt/_text_out.c
$(PY_EXT): $(PY_EXT_SRCS) python/chatfmt/_speedups.h python/chatfmt/_batch_pool.h python/chatfmt/_text_out.h include/chatfmt.h
	$(CC) $(WARN) -O2 -g -DNDEBUG -fPIC -shared -D_POSIX_C_SOURCE=200809L -Iinclude -I$(PY_INCLUDE) $(PY_EXT_SRCS) \
	    -ldl -lpthread -o $@

.PHONY: python-ext

# Speed and memory against Python Jinja2 in the same run (a benchmark, not a test).
bench: all python-ext
	BUILD=$(BUILD) CC="$(CC)" CHATFMT_SHARED="$${CHATFMT_SHARED:-$(SHARED)}" bash bench/run_bench.sh

# Parity and speed next to @huggingface/jinja and minijinja-js (installed with npm into build/peers).
bench-peers: all
	BUILD=$(BUILD) CHATFMT_SHARED="$${CHATFMT_SHARED:-$(SHARED)}" bash bench/compare_peers.sh

.PHONY: bench bench-peers

# ---- WebAssembly: the npm package js/ (make wasm -> js/dist/chatfmt.mjs + .wasm) ----
# The library's sources (SRCS) compile unchanged with emscripten (installed by
# js/tools/ensure_emscripten.sh when missing), plus the flat C surface the
# wrapper calls (js/src/chatfmt_wasm.c). emscripten's malloc aligns to 8
# bytes on wasm32; the library relies on malloc's 16 (glibc's, and the
# arenas' ARENA_ALIGN), so the build links emscripten's own dlmalloc.c
# compiled with MALLOC_ALIGNMENT=16 in place of the stock one.
EMCC        ?= emcc
WASM_BUILD  := $(BUILD)/wasm
WASM_CFLAGS := -O2 -DCF_NO_SIMD -DNDEBUG
WASM_OBJS   := $(SRCS:src/%.c=$(WASM_BUILD)/obj/%.o) $(WASM_BUILD)/obj/chatfmt_wasm.o \
               $(WASM_BUILD)/obj/dlmalloc16.o $(WASM_BUILD)/obj/sbrk.o
# Node's ES module loader cannot run emscripten 3.1's node-flavoured ES6
# output (it reads __dirname): the module is built for the web, and the
# wrapper hands it the .wasm bytes itself under Node.
WASM_LDFLAGS := -O2 -sMALLOC=none -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createChatfmt \
               -sENVIRONMENT=web,worker -sALLOW_MEMORY_GROWTH=1 -sTOTAL_STACK=8388608 \
               -sEXPORTED_RUNTIME_METHODS=FS -sEXPORTED_FUNCTIONS=_malloc,_free
# emscripten's JS optimizer imports acorn, which Debian installs there
EM_ENV      := NODE_PATH=/usr/share/nodejs$${NODE_PATH:+:$$NODE_PATH}

wasm:
	@bash js/tools/ensure_emscripten.sh
	@$(MAKE) --no-print-directory js/dist/chatfmt.mjs

js/dist/chatfmt.mjs: $(WASM_OBJS)
	@mkdir -p js/dist
	$(EM_ENV) $(EMCC) $(WASM_LDFLAGS) $(WASM_OBJS) -o $@
	@ls -l js/dist/chatfmt.mjs js/dist/chatfmt.wasm | awk '{s += $$5} END {printf "wasm: js/dist/ %.0f KiB (module + wasm)\n", s / 1024}'

$(WASM_BUILD)/obj/%.o: src/%.c $(wildcard src/*.h src/*/*.h) include/chatfmt.h
	@mkdir -p $(dir $@)
	$(EM_ENV) $(EMCC) $(WARN) $(WASM_CFLAGS) $(CPPFLAGS) -c $< -o $@

$(WASM_BUILD)/obj/chatfmt_wasm.o: js/src/chatfmt_wasm.c include/chatfmt.h
	@mkdir -p $(dir $@)
	$(EM_ENV) $(EMCC) $(WARN) $(WASM_CFLAGS) $(CPPFLAGS) -c $< -o $@

EM_ROOT = $(shell $(EM_ENV) em-config EMSCRIPTEN_ROOT 2> /dev/null || echo /usr/share/emscripten)

$(WASM_BUILD)/obj/dlmalloc16.o:
	@mkdir -p $(dir $@)
	$(EM_ENV) $(EMCC) -O2 -DMALLOC_ALIGNMENT=16 -c $(EM_ROOT)/system/lib/dlmalloc.c -o $@

$(WASM_BUILD)/obj/sbrk.o:
	@mkdir -p $(dir $@)
	$(EM_ENV) $(EMCC) -O2 -c $(EM_ROOT)/system/lib/sbrk.c -o $@

.PHONY: wasm

# The same suite on an AddressSanitizer + UBSan build in build-asan/.
ASAN_CFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

test-asan:
	$(MAKE) BUILD=build-asan CFLAGS="$(ASAN_CFLAGS)" test

# The CLI on every seed x conversation (and the batch tables) under valgrind.
test-valgrind: all
	CHATFMT_SHARED="$${CHATFMT_SHARED:-$(SHARED)}" python3 tests/memcheck.py --bin $(BUILD)/chatfmt --logs $(BUILD)/memcheck

.PHONY: test-asan test-valgrind

# ---- install: make install [PREFIX=/usr/local] [DESTDIR=/staging] -------------------
# Header, static and shared library (versioned soname), pkg-config file, CMake
# package (find_package(chatfmt): chatfmt::chatfmt), the CLI and its man page.
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
MANDIR       ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CMAKEDIR     ?= $(LIBDIR)/cmake/chatfmt
INSTALL      ?= install

# The CMake files locate the tree relative to themselves (a moved prefix still works).
relpath = $(shell realpath -m --relative-to='$(2)' '$(1)')
under_prefix = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
SUBST = sed -e 's|@CHATFMT_VERSION@|$(VERSION)|g' -e 's|@CHATFMT_SOMAJOR@|$(SOMAJOR)|g' \
	-e 's|@CHATFMT_PREFIX@|$(PREFIX)|g' -e 's|@CHATFMT_LIBDIR@|$(call under_prefix,$(LIBDIR))|g' \
	-e 's|@CHATFMT_INCLUDEDIR@|$(call under_prefix,$(INCLUDEDIR))|g' \
	-e 's|@CHATFMT_PREFIX_FROM_CMAKEDIR@|$(call relpath,$(PREFIX),$(CMAKEDIR))|g' \
	-e 's|@CHATFMT_LIBDIR_REL@|$(call relpath,$(LIBDIR),$(PREFIX))|g' \
	-e 's|@CHATFMT_INCLUDEDIR_REL@|$(call relpath,$(INCLUDEDIR),$(PREFIX))|g'
SONAME_FILES := libchatfmt.so libchatfmt.so.$(SOMAJOR) libchatfmt.so.$(VERSION)

install: all
	$(INSTALL) -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(LIBDIR)' '$(DESTDIR)$(INCLUDEDIR)' \
		'$(DESTDIR)$(PKGCONFIGDIR)' '$(DESTDIR)$(MANDIR)/man1' '$(DESTDIR)$(CMAKEDIR)'
	$(INSTALL) -m 755 $(BUILD)/chatfmt '$(DESTDIR)$(BINDIR)/chatfmt'
	$(INSTALL) -m 644 include/chatfmt.h '$(DESTDIR)$(INCLUDEDIR)/chatfmt.h'
	$(INSTALL) -m 644 $(BUILD)/libchatfmt.a '$(DESTDIR)$(LIBDIR)/libchatfmt.a'
	$(INSTALL) -m 755 $(BUILD)/libchatfmt.so.$(VERSION) '$(DESTDIR)$(LIBDIR)/libchatfmt.so.$(VERSION)'
	ln -sf libchatfmt.so.$(VERSION) '$(DESTDIR)$(LIBDIR)/libchatfmt.so.$(SOMAJOR)'
	ln -sf libchatfmt.so.$(VERSION) '$(DESTDIR)$(LIBDIR)/libchatfmt.so'
	$(INSTALL) -m 644 man/chatfmt.1 '$(DESTDIR)$(MANDIR)/man1/chatfmt.1'
	$(SUBST) chatfmt.pc.in > '$(DESTDIR)$(PKGCONFIGDIR)/chatfmt.pc'
	$(SUBST) cmake/chatfmtConfig.cmake.in > '$(DESTDIR)$(CMAKEDIR)/chatfmtConfig.cmake'
	$(SUBST) cmake/chatfmtConfigVersion.cmake.in > '$(DESTDIR)$(CMAKEDIR)/chatfmtConfigVersion.cmake'

uninstall:
	rm -f '$(DESTDIR)$(BINDIR)/chatfmt' '$(DESTDIR)$(INCLUDEDIR)/chatfmt.h' \
		'$(DESTDIR)$(LIBDIR)/libchatfmt.a' $(SONAME_FILES:%='$(DESTDIR)$(LIBDIR)/%') \
		'$(DESTDIR)$(PKGCONFIGDIR)/chatfmt.pc' '$(DESTDIR)$(MANDIR)/man1/chatfmt.1' \
		'$(DESTDIR)$(CMAKEDIR)/chatfmtConfig.cmake' '$(DESTDIR)$(CMAKEDIR)/chatfmtConfigVersion.cmake'
	-rmdir '$(DESTDIR)$(CMAKEDIR)' 2> /dev/null

# examples/*.c against the build tree's static library, into $(BUILD)/examples/.
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))

examples: $(EXAMPLES)

$(BUILD)/examples/%: examples/%.c include/chatfmt.h $(BUILD)/libchatfmt.a
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) $< $(BUILD)/libchatfmt.a $(LDLIBS) -o $@

.PHONY: install uninstall examples

# ---- fuzzing: clang libFuzzer + ASan + UBSan (fuzz/README.md) ----------------
# `make fuzz` runs each harness for FUZZ_SECONDS (default 60) on its corpus in
# build-fuzz/corpus/NAME (seeded by fuzz/make_seeds.py); crashes land in
# build-fuzz/artifacts/. `make fuzz-ci` replays the same inputs every run:
# a fixed seed and run count, the seed corpora in name order, ASLR off.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_BUILD   := build-fuzz
FUZZERS      := render json marshal reply loaders builder
# (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION: the usual libFuzzer macro; `random` then reads no clock)
FUZZ_CFLAGS  := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
                -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
FUZZ_OBJS    := $(SRCS:src/%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_BINS    := $(FUZZERS:%=$(FUZZ_BUILD)/fuzz_%)

fuzz-toolchain:
	@printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
	    > $(FUZZ_BUILD).probe.c
	@$(FUZZ_CC) -fsanitize=fuzzer,address,undefined $(FUZZ_BUILD).probe.c -o $(FUZZ_BUILD).probe 2>/dev/null || { \
	    rm -f $(FUZZ_BUILD).probe.c; \
	    echo "error: '$(FUZZ_CC) -fsanitize=fuzzer' does not link: install clang and its libFuzzer runtime"; \
	    echo "       (Debian/Ubuntu: apt-get install -y clang libclang-rt-dev, or libclang-rt-14-dev for clang 14)"; \
	    exit 1; }
	@rm -f $(FUZZ_BUILD).probe.c $(FUZZ_BUILD).probe

$(FUZZ_BUILD)/obj/%.o: src/%.c $(HDRS) include/chatfmt.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(WARN) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(CPPFLAGS) -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_common.h $(FUZZ_OBJS)
	$(FUZZ_CC) $(WARN) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(CPPFLAGS) $< $(FUZZ_OBJS) $(LDLIBS) -o $@

fuzz-build: fuzz-toolchain $(FUZZ_BINS)

# (kept: without this make deletes them as intermediates, and rebuilds them every run)
.SECONDARY: $(FUZZ_OBJS)

fuzz-seeds:
	python3 fuzz/make_seeds.py $(FUZZ_BUILD)/seeds "$${CHATFMT_SHARED:-$(SHARED)}"

fuzz: fuzz-build fuzz-seeds
	@mkdir -p $(FUZZ_BUILD)/artifacts
	@for f in $(FUZZERS); do \
	    mkdir -p $(FUZZ_BUILD)/corpus/$$f; \
	    dict=; [ -f fuzz/$$f.dict ] && dict=-dict=fuzz/$$f.dict; \
	    echo "== fuzz_$$f for $(FUZZ_SECONDS) s"; \
	    $(FUZZ_BUILD)/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	        -print_final_stats=1 $$dict -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$f- \
	        $(FUZZ_BUILD)/corpus/$$f $(FUZZ_BUILD)/seeds/$$f 2> $(FUZZ_BUILD)/fuzz_$$f.log \
	    || { tail -n 40 $(FUZZ_BUILD)/fuzz_$$f.log; echo "FAIL fuzz_$$f (input in $(FUZZ_BUILD)/artifacts/)"; exit 1; }; \
	    grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units)' $(FUZZ_BUILD)/fuzz_$$f.log | tail -n 1; \
	done

# Runs per harness in fuzz-ci: 15-45 s of CPU each (fuzz/README.md).
FUZZ_CI_SEED          := 1
FUZZ_CI_RUNS_render   := 150000
FUZZ_CI_RUNS_json     := 350000
FUZZ_CI_RUNS_marshal  := 1500000
FUZZ_CI_RUNS_reply    := 100000
FUZZ_CI_RUNS_loaders  := 100000
FUZZ_CI_RUNS_builder  := 2000000

# The seeds are written afresh (a stale file would change the inputs), with
# build/chatfmt present so that peer replies get their formats. No corpus
# directory: what the run finds stays in memory, so a rerun starts alike.
# Addresses reach the search (libFuzzer's comparison traces, our caches keyed
# by pointer), so ASLR is turned off where the kernel allows it, and the
# environment is fixed (its size moves the stack).
fuzz-ci: fuzz-build $(BUILD)/chatfmt $(BUILD)/libchatfmt.so
	rm -rf $(FUZZ_BUILD)/ci-seeds
	python3 fuzz/make_seeds.py $(FUZZ_BUILD)/ci-seeds "$${CHATFMT_SHARED:-$(SHARED)}"
	@mkdir -p $(FUZZ_BUILD)/artifacts
	@fixed_addresses="setarch $$(uname -m) -R"; \
	$$fixed_addresses true 2>/dev/null || { fixed_addresses=; \
	    echo "warning: setarch -R fails here: addresses vary, so may the inputs tried"; }; \
	for harness_runs in $(foreach f,$(FUZZERS),$(f):$(FUZZ_CI_RUNS_$(f))); do \
	    f=$${harness_runs%:*}; runs=$${harness_runs#*:}; \
	    ls -d $(FUZZ_BUILD)/ci-seeds/$$f/* | LC_ALL=C sort | paste -sd, > $(FUZZ_BUILD)/ci-seeds/$$f.list; \
	    dict=; [ -f fuzz/$$f.dict ] && dict=-dict=fuzz/$$f.dict; \
	    echo "== fuzz_$$f: $$runs runs, seed $(FUZZ_CI_SEED)"; \
	    env -i PATH=/usr/local/bin:/usr/bin:/bin CHATFMT_NOW=2026-03-14T15:09:26 TZ=UTC \
	        $$fixed_addresses $(FUZZ_BUILD)/fuzz_$$f \
	        -seed=$(FUZZ_CI_SEED) -runs=$$runs -seed_inputs=@$(FUZZ_BUILD)/ci-seeds/$$f.list \
	        -timeout=120 -rss_limit_mb=2048 -print_final_stats=1 $$dict \
	        -artifact_prefix=$(FUZZ_BUILD)/artifacts/ci-$$f- 2> $(FUZZ_BUILD)/fuzz_ci_$$f.log \
	    || { tail -n 40 $(FUZZ_BUILD)/fuzz_ci_$$f.log; echo "FAIL fuzz_$$f (input in $(FUZZ_BUILD)/artifacts/)"; exit 1; }; \
	    grep -E '^#[0-9]+[[:space:]]+DONE' $(FUZZ_BUILD)/fuzz_ci_$$f.log | sed -E 's/ (exec\/s|rss): [0-9]+(Mb)?//g'; \
	done

# ---- ThreadSanitizer: one compiled template rendered from 8 threads ------------
TSAN_BUILD  := build-tsan
TSAN_CFLAGS := -O1 -g -fsanitize=thread -fno-omit-frame-pointer

# ... and the CLI's worker pipeline: render --batch and dataset mode on 4 threads.
test-tsan:
	$(MAKE) BUILD=$(TSAN_BUILD) CFLAGS="$(TSAN_CFLAGS)" $(TSAN_BUILD)/libchatfmt.a $(TSAN_BUILD)/chatfmt
	$(CC) $(WARN) $(TSAN_CFLAGS) $(CPPFLAGS) tests/test_threads.c $(TSAN_BUILD)/libchatfmt.a $(LDLIBS) \
	    -o $(TSAN_BUILD)/test_threads
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" $(TSAN_BUILD)/test_threads
	python3 "$${CHATFMT_SHARED:-$(SHARED)}/tools/mkcases.py" "$${CHATFMT_SHARED:-$(SHARED)}/seeds" \
	    "$${CHATFMT_SHARED:-$(SHARED)}/conversations" > $(TSAN_BUILD)/cases.jsonl
	for i in 1 2 3 4; do cat $(TSAN_BUILD)/cases.jsonl; done > $(TSAN_BUILD)/cases4.jsonl
	TSAN_OPTIONS="halt_on_error=1" $(TSAN_BUILD)/chatfmt render --batch $(TSAN_BUILD)/cases4.jsonl --threads 4 \
	    > $(TSAN_BUILD)/batch.out
	for f in "$${CHATFMT_SHARED:-$(SHARED)}"/conversations/*.json; do tr -d '\n' < "$$f"; echo; done \
	    > $(TSAN_BUILD)/rows.jsonl
	for i in 1 2 3 4 5 6 7 8; do cat $(TSAN_BUILD)/rows.jsonl; done > $(TSAN_BUILD)/rows8.jsonl
	TSAN_OPTIONS="halt_on_error=1" $(TSAN_BUILD)/chatfmt render glm45 --jsonl $(TSAN_BUILD)/rows8.jsonl \
	    --threads 4 > $(TSAN_BUILD)/dataset.out
	cat $(TSAN_BUILD)/rows8.jsonl | TSAN_OPTIONS="halt_on_error=1" $(TSAN_BUILD)/chatfmt render glm45 --jsonl - \
	    --threads 4 | cmp - $(TSAN_BUILD)/dataset.out
	@echo "test-tsan: threads test, render --batch and dataset mode (a file and a pipe) on 4 threads: no race reported"

.PHONY: fuzz fuzz-ci fuzz-build fuzz-seeds fuzz-toolchain test-tsan
