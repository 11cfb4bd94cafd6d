# The two commands of the README, and a few more for developers.
#   make run    install what is missing, build what runs (sluiced and the
#               tools sluice and sluice-log, not the tests), start sluiced
#               on $(LISTEN) (tcp://127.0.0.1:7711) with its data in
#               $(DATA) (./data): make run LISTEN=tcp://127.0.0.1:7800
#               DATA=/srv/q; the sluice tool then needs SLUICE_URL (or -s)
#   make test   install what is missing, build, run every test plainly and
#               under AddressSanitizer + UndefinedBehaviorSanitizer (make
#               test-plain and make test-asan run one of the two)
#   make chaos  ten minutes of faults on a replicated cluster under load,
#               every client's history checked (tests/integration/test_chaos.c)
#   make install [PREFIX=/usr/local] [DESTDIR=...]
#               build, then install sluiced, sluice, sluice-log, sluice.h,
#               libsluice (.so and .a), sluice.pc and the man pages of the
#               three programs (share/man/man1) under PREFIX
# Everything else is CMake's: build/ (plain) and build-asan/ (sanitizers);
# make test runs the tests of both from build-both/.

PKGS       := cmake ninja-build make gcc pkg-config liburing-dev libxxhash-dev \
              libnng-dev libcmocka-dev libjansson-dev libmbedtls-dev beanstalkd python3 \
              tzdata mold # schedules' time zones (util/tz.c); the linker (CMakeLists.txt)
# python3-redis and npm's ioredis (bench/clients) are the Redis clients the
# language clients are compared with (make bench-clients).
BENCH_PKGS := gnuplot-nox redis-server python3-redis \
              $(if $(shell command -v npm 2>/dev/null),,npm)
# What the tests of the HTTP face use: promtool checks /metrics, headless
# chromium (driven by chromedriver) loads the admin page. The etcd client's
# tests (and failover's) run a real etcd. groff renders the man pages
# (tests/integration/test_help.c), warnings on.
# npm installs the OpenAPI validator the HTTP API's test runs (Debian 12
# has no python3-openapi-spec-validator): tests/openapi, test-only. Debian's
# npm only where no npm is installed (it conflicts with other Node.js
# installations).
# python3-venv: the Python client's package test installs it with pip
# into a virtual environment (Debian's python3 has no pip of its own).
# Node.js runs the Node client's tests (clients/node); Debian's nodejs only
# where no node is installed.
TEST_PKGS  := prometheus chromium chromium-driver etcd-server openssl curl \
              python3-venv groff-base \
              $(if $(shell command -v npm 2>/dev/null),,npm) \
              $(if $(shell command -v node 2>/dev/null),,nodejs)
JOBS       := $(shell nproc 2>/dev/null || echo 2)
BUILD      := build
ASAN       := build-asan
LISTEN     ?= tcp://127.0.0.1:7711
DATA       ?= ./data
PREFIX     ?= /usr/local
# Every test runs once: a test that needs a second try is a defect. The
# tests mostly wait (for servers, timers, fsyncs: half a core each on
# average), so one more runs than there are cores; those that measure time
# run first, beside each other only (SLUICE_CALM_TESTS, tests/CMakeLists.txt).
TEST_JOBS  := $(shell echo $$(( $(JOBS) + 1 )))
CTEST      := ctest --output-on-failure -j $(TEST_JOBS)
# make test runs the two trees' tests in one ctest over $(BOTH), a
# directory that lists both (the sanitized tree's are named san.*). Run
# one tree after the other, each left a third of the cores idle while its
# last tests waited; run together, three times as many as cores keep them
# busy: most tests spend more of their time waiting for a server, a timer
# or a peer than running (one ctest, so the tests that measure time still
# run first, calm).
BOTH       := build-both
BOTH_JOBS  := $(shell echo $$(( $(JOBS) * 3 )))

.PHONY: all deps bench-deps test-deps build build-asan run test test-plain test-asan \
        chaos install bench bench-clients fuzz format format-check clean

all: build

# Installs, through apt, the Debian packages that are not installed yet.
define apt_install
	@missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q \
			--no-install-recommends $$missing; \
	fi
endef

deps:
	$(call apt_install,$(PKGS))

bench-deps: deps
	$(call apt_install,$(BENCH_PKGS))
	@[ -d bench/clients/node_modules ] || \
		npm install --prefix bench/clients --no-audit --no-fund

test-deps: deps
	$(call apt_install,$(TEST_PKGS))
	@[ -d tests/openapi/node_modules ] || \
		npm install --prefix tests/openapi --no-audit --no-fund

# Ninja builds the trees: on two cores a cold build of the plain tree
# takes 93 s, where make's recursion over CMake's Makefiles took 148 s. A
# tree configured for another generator is configured again. No compiler
# cache: a clean clone's (CI's) is empty, and an empty ccache made that
# build 133 s (120 s in its depend mode); ninja already rebuilds only what
# changed. LAUNCHER=ccache at a tree's first configure brings it back.
LAUNCHER   ?=
define configure
	@if [ -f $(1)/CMakeCache.txt ] && \
	    ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$$' $(1)/CMakeCache.txt; \
	then rm -rf $(1)/CMakeCache.txt $(1)/CMakeFiles; fi
	cmake -G Ninja -S . -B $(1) $(2) -DCMAKE_C_COMPILER_LAUNCHER=$(LAUNCHER)
endef

$(BUILD)/build.ninja: CMakeLists.txt | deps
	$(call configure,$(BUILD),-DCMAKE_BUILD_TYPE=Release)

$(ASAN)/build.ninja: CMakeLists.txt | deps
	$(call configure,$(ASAN),-DCMAKE_BUILD_TYPE=Debug -DSLUICE_SANITIZE=ON)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps $(ASAN)/build.ninja
	cmake --build $(ASAN) -j $(JOBS)

# Only what runs is built (a cold build of everything, tests included,
# takes minutes): the server, and the tools the README uses next.
run: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target sluiced sluice_cmd sluice-log
	mkdir -p $(DATA)
	exec $(BUILD)/bin/sluiced --data $(DATA) --listen $(LISTEN)

test-plain: build test-deps
	cd $(BUILD) && $(CTEST)

# The sanitized tree's tests carry their ASAN_OPTIONS and
# SLUICE_SANITIZED=1 (tests/CMakeLists.txt).
test-asan: build-asan test-deps
	cd $(ASAN) && $(CTEST)

test: build build-asan test-deps
	@mkdir -p $(BOTH)
	@printf 'subdirs("%s" "%s")\n' $(abspath $(BUILD)) $(abspath $(ASAN)) \
		> $(BOTH)/CTestTestfile.cmake
	cd $(BOTH) && ctest --output-on-failure -j $(BOTH_JOBS)

# The chaos test's long run: CHAOS_SECS of load with a fault after every
# second or so of calm (kill -9, SIGSTOP, a full disk, failover, and a
# quarter of them moves: with etcd installed, a second cluster shares an
# etcd and the map with the first, and tube mv moves from one to the other
# and back while its clients work it through the map, the mover or a node
# killed -9 in a move's middle), then the figures: operations, faults,
# unknowns, moves, violations. The seed is printed; SLUICE_TEST_SEED=N
# replays its fault schedule. The full disk needs root. CHAOS_MOVES=0
# runs the one cluster without etcd.
CHAOS_SECS ?= 600
CHAOS_MOVES ?= 1
chaos: build test-deps
	cd $(BUILD) && SLUICE_CHAOS_SECS=$(CHAOS_SECS) SLUICE_CHAOS_FAULTS=0 \
		SLUICE_CHAOS_MOVES=$(CHAOS_MOVES) \
		SLUICE_TEST_SEED=$${SLUICE_TEST_SEED:-$$(date +%s)} \
		bin/test_chaos

# The dynamic linker's cache is refreshed when root installs into the
# system itself (not under DESTDIR), so the new libsluice.so is found.
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; fi

bench: bench-deps build
	bench/compare.sh

# The Python and Node.js clients against libsluice, and each against
# Redis through a client of its language (docs/benchmarks.md).
bench-clients: bench-deps build
	bench/clients.sh

fuzz:
	cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DSLUICE_FUZZ=ON
	cmake --build build-fuzz -j $(JOBS)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

format-check:
	clang-format --dry-run -Werror $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN) $(BOTH) build-fuzz
