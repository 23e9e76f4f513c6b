# The SLUB+Q teaching kit.  `make help` lists what you can do; the work
# happens in scripts/, grading/ and tests/, outside this file.
#
# STAGE picks a stage by number (STAGE=0) or folder name; the default is the
# last stage.  KIT_WORK moves the work directory (kernel tree, builds,
# logs; default ~/.cache/slubq-kit) and GDB_PORT the gdb stub's port.
# APPEND adds kernel parameters to boot and lab (APPEND=slub_debug=FZPU).
# VARIANT picks another configuration, config/variants/VARIANT.config
# (VARIANT=proof: lockdep, KASAN and two NUMA nodes).  LAB is STAGE's other
# name (lab N is stage N); TREE=exercise builds the student's tree of the
# lab (make exercise) instead of the stage's source.

LAB ?=
STAGE ?= $(LAB)
# A setting given on make's command line wins over its KIT_* name in the
# environment, which the scripts read (and which make walkthrough's own
# make commands inherit).
export KIT_APPEND := $(or $(APPEND),$(KIT_APPEND))
export KIT_VARIANT := $(or $(VARIANT),$(KIT_VARIANT))
export KIT_TREE := $(or $(TREE),$(KIT_TREE))
export KIT_DOCS_EDITION := $(or $(EDITION),$(KIT_DOCS_EDITION))

.PHONY: help deps build boot gdb lab walkthrough excerpts exercise grade delta test bench irqsoff docs share clean
help:
	@echo "make deps                install the Debian packages the kit uses"
	@echo "make lab STAGE=N         build, boot halted under QEMU, attach gdb: the lab"
	@echo "make walkthrough STAGE=N type every step of lab N's handout for you, print it"
	@echo "make excerpts STAGE=N    the same, listing each output excerpt that no longer"
	@echo "                         matches with what was printed instead"
	@echo "make boot STAGE=N        build and boot to a shell on the serial console"
	@echo "make gdb STAGE=N         attach gdb to a kernel started with make boot"
	@echo "make build STAGE=N       build the stage's kernel and the initramfs"
	@echo "make exercise LAB=N      your folder for lab N's graded work: a kernel tree with"
	@echo "                         functions to write (07, 08, 09), an answers file"
	@echo "make grade LAB=N         build, boot and grade your work; prints a score"
	@echo "make delta STAGE=N       what stage N changes over stage N-1"
	@echo "make test                build, boot and check every stage (TAP output)"
	@echo "make test STAGE=N        only stage N's checks; FILTER=REGEX: checks whose names match"
	@echo "make bench               SLAB, SLUB, SLUB+Q (STAGE's) and sheaves side by side: hackbench,"
	@echo "                         a microbenchmark, slab memory, fast paths; a report with plots"
	@echo "make irqsoff [STAGES=...] time with interrupts off in drains and resizes (08, 10, 11)"
	@echo "make docs                the handouts as HTML, the diagrams as SVG (no answers)"
	@echo "make share [STAGES=...]  build every stage in KIT_WORK for a class to share"
	@echo "                         (students then set KIT_SHARED to it: docs/instructors.md)"
	@echo "make clean               remove the builds (keeps the source and ccache)"
	@echo "settings (make VAR=value, or KIT_* in the environment), and their defaults:"
	@echo "  STAGE=N                 the stage (number or folder name); default: the last"
	@echo "  LAB=N                   the same as STAGE=N"
	@echo "  TREE=exercise           build, boot, debug your tree of the lab (make exercise);"
	@echo "                          default: the stage's own source"
	@echo "  VARIANT=NAME            another kernel config, config/variants/NAME.config:"
	@echo "                          proof (lockdep, KASAN, 2 NUMA nodes), irqsoff (tracers),"
	@echo "                          bench (as a distribution ships it), slab (bench, SLAB),"
	@echo "                          stats, slab-stats (bench, slab with the allocator's statistics);"
	@echo "                          default: none"
	@echo "  APPEND=ARGS             more kernel parameters; default: none"
	@echo "  FILTER=REGEX            make test, make grade: only checks whose names match;"
	@echo "                          default: all"
	@echo "  STAGES='N ...'          make irqsoff, make share: the stages"
	@echo "  QUICK=1                 make bench: the lab's shorter run (3 boots a kernel, 2 CPUs,"
	@echo "                          no statistics kernels); default: the full run"
	@echo "  KIT_BENCH_BOOTS=N       make bench: boots of each kernel; default: 5"
	@echo "  KIT_BENCH_RUNS=N        make bench: runs of each hackbench in a boot; default: 3"
	@echo "  KIT_BENCH_CPUS='N ...'  make bench: the CPU counts to boot with; default: '2 1'"
	@echo "  KIT_BENCH_RESULTS=DIR   make bench: its results folder; default: a new one in"
	@echo "                          KIT_WORK/bench, named for the date"
	@echo "  KIT_BENCH_READY_WAIT=S  make bench: seconds a guest has to come up before"
	@echo "                          its boot is made again; default: 300"
	@echo "  EDITION=instructor      make docs: with the answers, in docs/html-instructor;"
	@echo "                          default: student (no answers), in docs/html"
	@echo "  KIT_WORK=DIR            source, builds, logs; default: ~/.cache/slubq-kit"
	@echo "                          (\$$XDG_CACHE_HOME/slubq-kit if that is set)"
	@echo "  KIT_EXERCISES=DIR       the students' trees; default: KIT_WORK/exercises"
	@echo "  KIT_SHARED=DIR          a class's shared kit (make share): its kernels, never"
	@echo "                          built; default: none, you build your own"
	@echo "  GDB_PORT=N              the gdb stub's port; default: 20000 + uid % 10000"
	@echo "  KIT_ACCEL=NAME          QEMU's accelerator; default: tcg (kvm at your own risk)"
	@echo "  KIT_WALKTHROUGH_TIMEOUT=S  seconds a walkthrough may take; default: 600"
	@echo "  LINUX_TARBALL=FILE      the kernel source; default: /usr/src/linux-source-6.1.tar.xz"
	@echo "stages: $(notdir $(wildcard stages/[0-9][0-9]-*))"

deps:
	@scripts/deps.sh

build:
	@scripts/deps.sh --quiet
	@scripts/build-kernel.sh "$(STAGE)"
	@scripts/initramfs.sh "$(STAGE)" >/dev/null

boot: build
	@scripts/qemu.sh "$(STAGE)"

gdb:
	@scripts/gdb.sh "$(STAGE)"

lab: build
	@scripts/lab.sh "$(STAGE)"

# The handout's own make lab or make boot builds what it needs.
walkthrough:
	@scripts/walkthrough.sh "$(STAGE)"

excerpts:
	@scripts/walkthrough.sh --excerpts "$(STAGE)"

exercise:
	@grading/exercise.sh "$(STAGE)"

grade:
	@KIT_GRADE_FILTER="$(FILTER)" grading/grade.sh "$(STAGE)"

delta:
	@scripts/series.sh delta "$(STAGE)"

# Standard output is TAP: deps says its piece on standard error.
test:
	@scripts/deps.sh scripts/packages.txt tests/packages.txt >&2
	@KIT_TEST_STAGE="$(STAGE)" KIT_TEST_FILTER="$(FILTER)" tests/run.sh

bench:
	@scripts/deps.sh --quiet
	@scripts/bench.sh $(if $(QUICK),--quick) $(STAGE)

irqsoff:
	@scripts/irqsoff.sh $(STAGES)

docs:
	@docs/build.sh

share:
	@scripts/share.sh $(STAGES)

clean:
	@scripts/clean.sh
