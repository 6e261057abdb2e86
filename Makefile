# Makefile: builds libremem (.a and .so), the remem command, the tests, the
# fuzz targets and the benchmarks. Sources are found by wildcard, so a new
# part, test or benchmark is one new file. Dependencies come from
# pkg-config; scripts/deps.sh installs the Debian packages they live in:
# `deps.sh runtime` for building and serving, `deps.sh test` (PostgreSQL,
# clang, node, python3-venv) only for the test, sanitizer and fuzz targets.
#
#   make            library and command (build/); changes no tracked file
#   make format     reformat every C file with .clang-format (never the default)
#   make python     a wheel of the Python package (build/python/)
#   make test       every test, ending with "N passed, M failed, K skipped"
#   make asan       the whole suite under AddressSanitizer + UBSan (build-asan/)
#   make fuzz       each fuzz target for FUZZ_SECONDS (default 10)
#   make bench      the benchmarks (bench/README.md)
#   make run        build, then `remem serve` on ./remem.db at 127.0.0.1:8077
#   make demo       build, then the end-to-end demo on ./remem-demo.db
#   make install    PREFIX=/usr/local
#   make REMEM_ALLOC=libc   the remem binary on glibc's malloc, not jemalloc

PREFIX  ?= /usr/local
BUILD   ?= build
CC      ?= cc
PKGS    := sqlite3 libpq jansson libcurl libmicrohttpd openblas libutf8proc libzstd libxxhash libcrypto yaml-0.1
OPT     ?= -O2
# assert() stays on in every build this Makefile makes (default, test,
# asan): the asserted invariants sit outside the per-candidate loops and
# cost nothing measurable. A packager who wants them out adds -DNDEBUG.
CFLAGS  ?= $(OPT) -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra -fPIC -pthread \
           -Iinclude -Isrc $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libstemmer (Snowball, the lexical lane's stemmer) has no pkg-config file.
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lstemmer -lm -lpthread
SANFLAGS ?=
# The library exports only what include/remem.h marks REMEM_API (the
# remem_* calls); everything else in libremem.so is hidden, so its internal
# names (cache_get, store_open, ...) cannot clash with other libraries in a
# caller's process. tests/e2e/abi_symbols.sh checks the exported list.
LIB_CFLAGS := -fvisibility=hidden
# The version is written once, in include/remem.h (REMEM_VERSION_MAJOR,
# _MINOR, _PATCH); remem.pc takes it from there.
VERSION := $(shell sed -n 's/^\#define REMEM_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$$/\2/p' include/remem.h | paste -sd.)

# Every .c under src/ (at any depth) is the library; cli/, server/ and mcp/
# are the faces linked into the remem command. fuzz/run.sh asks for the same
# list (make print-lib-src), so it is defined here only.
LIB_SRC   := $(sort $(shell find src -name '*.c'))
FACE_SRC  := $(sort $(shell find cli server mcp -name '*.c'))
TEST_SRC  := $(sort $(wildcard tests/test_*.c))
BENCH_SRC := $(sort $(wildcard bench/bench_*.c))
FUZZ_SRC  := $(sort $(wildcard fuzz/fuzz_*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
$(LIB_OBJ): CFLAGS += $(LIB_CFLAGS)
FACE_OBJ := $(FACE_SRC:%.c=$(BUILD)/obj/%.o)
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCHES  := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
SUPPORT_SRC := $(sort $(wildcard tests/support/*.c))
SUPPORT_OBJ := $(SUPPORT_SRC:%.c=$(BUILD)/obj/%.o)

# Objects of test support code are not intermediate files to delete.
.SECONDARY:

# Plain `make` builds; it never rewrites a tracked file.
.DEFAULT_GOAL := all

# Reformat every C file with .clang-format.
format:
	clang-format -i $$(git ls-files '*.c' '*.h')

print-lib-src:
	@echo $(LIB_SRC)

# The pkg-config packages the library links (fuzz/run.sh builds with them).
print-pkgs:
	@echo $(PKGS)

print-version:
	@echo $(VERSION)

.PHONY: format print-lib-src print-pkgs print-version all deps deps-test python test check asan ubsan fuzz fuzz-smoke bench install uninstall clean demo run serve tests-only

# The Python methods of the operations, generated from the library's table
# and committed (bindings/python/tools/gen_ops.py rewrites the file only
# when its text changes; tests/e2e/python_package.sh fails when the
# committed file is stale). Sanitizer builds leave it alone.
PY_OPS := $(if $(SANFLAGS),,bindings/python/remem/_ops.py)

all: $(BUILD)/libremem.a $(BUILD)/libremem.so $(BUILD)/remem $(BUILD)/remem.pc $(PY_OPS)

bindings/python/remem/_ops.py: $(BUILD)/libremem.so bindings/python/tools/gen_ops.py
	@if command -v python3 >/dev/null; then \
	  python3 bindings/python/tools/gen_ops.py $(BUILD)/libremem.so $@; \
	else echo "make: no python3: $@ left as committed"; fi

# A wheel of the Python package (pure Python: it loads libremem.so), built
# offline with Debian's python3, pip, setuptools and wheel.
PY_DEBIAN := $(firstword $(wildcard /usr/bin/python3) python3)
python: all
	@bash scripts/deps.sh python
	rm -rf $(BUILD)/python
	$(PY_DEBIAN) -m pip wheel -q --no-deps --no-build-isolation -w $(BUILD)/python ./bindings/python
	@rm -rf bindings/python/build bindings/python/*.egg-info

deps:
	@bash scripts/deps.sh runtime
deps-test:
	@bash scripts/deps.sh test

# Objects depend on the Makefile too: a change of flags (visibility,
# sanitizers) rebuilds them instead of linking stale ones.
$(BUILD)/obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libremem.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libremem.so: $(LIB_OBJ)
	$(CC) $(CFLAGS) $(LIB_CFLAGS) $(SANFLAGS) -shared -Wl,-soname,libremem.so.0 -o $@ $^ $(LDLIBS)

# The remem binary's allocator: jemalloc (Debian's libjemalloc2), whose
# background thread gives a churning cache's free pages back without the
# lock-holding trims glibc's malloc needs (server/heap.c). REMEM_ALLOC=libc
# keeps glibc's; a sanitizer's build always does (its allocator replaces
# both). The library itself never links it: a caller's process keeps its own.
REMEM_ALLOC ?= jemalloc
ALLOC_LIBS := $(if $(SANFLAGS),,$(if $(filter jemalloc,$(REMEM_ALLOC)),$(shell pkg-config --libs jemalloc 2>/dev/null || echo -ljemalloc)))
$(BUILD)/remem: $(FACE_OBJ) $(BUILD)/libremem.a
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $(FACE_OBJ) $(BUILD)/libremem.a $(LDLIBS) $(ALLOC_LIBS)

# server/openapi.c embeds docs/openapi.json with .incbin, which -MMD cannot see.
$(BUILD)/obj/server/openapi.o: docs/openapi.json
# server/ui.c embeds the inspector's files and Debian's Chart.js (libjs-chart.js) the same way.
CHARTJS ?= /usr/share/javascript/chart.js/chart.min.js
$(BUILD)/obj/server/ui.o: server/ui/index.html server/ui/app.js server/ui/app.css $(CHARTJS)
$(BUILD)/obj/server/ui.o: CFLAGS += -DREMEM_CHARTJS='"$(CHARTJS)"'

$(BUILD)/remem.pc: remem.pc.in include/remem.h
	@mkdir -p $(BUILD)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

$(BUILD)/tests/%: tests/%.c $(BUILD)/libremem.a $(SUPPORT_OBJ) tests/test.h $(wildcard tests/support/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -Itests -o $@ $< $(SUPPORT_OBJ) $(BUILD)/libremem.a $(LDLIBS)

# Fault injection (tests/test_fault.c, docs/fuzzing.md): the test is linked
# with --wrap for remem's allocator, file-writing and store-opening calls,
# its clock and its id source, so that tests/fault/fault.c can make the Nth
# one fail. Only this test binary is linked so: the library, the command
# and every other test are built as always, and pay nothing for it.
FAULT_WRAP := malloc calloc realloc strdup strndup aligned_alloc vasprintf \
              fopen open write pwrite fwrite fputs fputc fprintf json_dumpf json_dump_file \
              json_loads json_loadb \
              fflush fsync fdatasync fclose rename mkdir ftruncate \
              store_open util_now_ms util_new_id
comma := ,
$(BUILD)/obj/tests/fault/fault.o: CFLAGS += -Itests
$(BUILD)/tests/test_fault: tests/test_fault.c $(BUILD)/obj/tests/fault/fault.o $(BUILD)/libremem.a \
                           tests/test.h tests/fault/fault.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -Itests -o $@ $< $(BUILD)/obj/tests/fault/fault.o \
	  $(BUILD)/libremem.a $(LDLIBS) $(addprefix -Wl$(comma)--wrap=,$(FAULT_WRAP))

$(BUILD)/bench/%: bench/%.c $(BUILD)/libremem.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -O3 -march=native -o $@ $< $(BUILD)/libremem.a $(LDLIBS)

tests-only: all $(TESTS)
	@bash tests/run.sh $(BUILD)

# test and asan first make sure the Debian packages are there, then re-enter
# make so that pkg-config sees them.
test check: deps-test
	@$(MAKE) --no-print-directory fuzz-smoke
	@$(MAKE) --no-print-directory tests-only

asan: deps-test
	@$(MAKE) --no-print-directory BUILD=build-asan OPT=-O1 \
	  SANFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  tests-only

ubsan: asan

FUZZ_SECONDS ?= 10
fuzz: deps-test
	@bash fuzz/run.sh $(FUZZ_SECONDS)
fuzz-smoke:
	@bash fuzz/run.sh 3

bench: deps
	@$(MAKE) --no-print-directory all $(BENCHES)
	@bash bench/run.sh $(BUILD)

# The main job on the embedded default: one SQLite file, no other service.
run serve: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/remem --db $${REMEM_DB:-./remem.db} serve --listen $${REMEM_LISTEN:-127.0.0.1:8077}

demo: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/remem --db $${REMEM_DB:-./remem-demo.db} demo

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/remem.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/libremem.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libremem.so $(DESTDIR)$(PREFIX)/lib/libremem.so.0
	ln -sf libremem.so.0 $(DESTDIR)$(PREFIX)/lib/libremem.so
	install -m 755 $(BUILD)/remem $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/remem.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/include/remem.h $(DESTDIR)$(PREFIX)/lib/libremem.* \
	  $(DESTDIR)$(PREFIX)/bin/remem $(DESTDIR)$(PREFIX)/lib/pkgconfig/remem.pc

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
