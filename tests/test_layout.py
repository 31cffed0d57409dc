"""The layout of src/ (docs/architecture.md): rooms, and which room may include which.

Read from the #include lines, so the rule stays true as code is added:
  - every source file lives in a known room, src/ROOM/NAME.c|h;
  - a room includes only itself and the rooms below it (RANK);
  - inside a room the modules (NAME.c + NAME.h + a private NAME_internal.h) include
    each other without circles;
  - a subcommand (src/cli/*.c) is a leaf: nothing outside cli/ includes cli/, and
    inside cli/ only the shared cli.h is included;
  - a room may hold one folder, assets/, of files that are not C (ASSET_EXTENSIONS:
    the interactive page's CSS and JavaScript, render/page.h) which the Makefile
    embeds into the binary at build time; they are kept as real files so that they
    read, diff and lint as what they are, not as C string literals.
"""
import os, re, subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")

# Lower numbers sit lower: a room may include rooms with a smaller rank only.
RANK = {
    "core": 0,       # float kernels, attention, JSON matrices, errors, files, rng, safetensors
    "trace": 1,      # the record of every map and its JSON writer
    "tokenize": 1,   # vocabularies: the own model's words, BPE, WordPiece
    "model": 2,      # the own encoder-decoder: forward, backward, checkpoint, decoding
    "family": 2,     # foreign model families (GPT-2, BERT): configs, loaders, forward passes
    "render": 2,     # PNG, colour maps, font, layouts, HTML, views of trace maps
    "corpus": 2,     # grammar, lexicon, generated and read corpus files
    "train": 3,      # training data, optimiser, loop, state file, evaluation
    "net": 3,        # one interface to every model: the bundled translator and the foreign families
    "pipeline": 4,   # sentence -> model -> maps -> pictures + trace
    "demo": 5,       # the lesson in pictures
    "cli": 6,        # one leaf file per subcommand, main.c
}

ASSETS = "assets"
PYTHON = "python"    # src/python/*.py: the notebook module (no C, no rank)
ASSET_EXTENSIONS = (".js", ".css")

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def scan(src):
    """{relpath: [included relpaths]} for every .c/.h under src, plus stray files."""
    files, stray = {}, []
    for room in sorted(os.listdir(src)):
        d = os.path.join(src, room)
        if not os.path.isdir(d):
            stray.append(room)
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                with open(os.path.join(d, name), encoding="utf-8") as f:
                    files[f"{room}/{name}"] = INCLUDE.findall(f.read())
            elif room == PYTHON and (name.endswith(".py") or name == "__pycache__"):
                continue   # the notebook module, installed beside the program (make install)
            elif name == ASSETS and os.path.isdir(os.path.join(d, name)):
                stray += [f"{room}/{ASSETS}/{a}" for a in sorted(os.listdir(os.path.join(d, name)))
                          if not a.endswith(ASSET_EXTENSIONS)]
            else:
                stray.append(f"{room}/{name}")
    return files, stray


def find_cycle(graph):
    """A list of nodes forming a cycle in {node: set(nodes)}, or None."""
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def module_of(path):
    """ROOM/NAME for ROOM/NAME.c, ROOM/NAME.h and NAME's private header ROOM/NAME_internal.h."""
    mod = path.rsplit(".", 1)[0]
    return mod[:-len("_internal")] if mod.endswith("_internal") else mod


def problems(src, rank=RANK):
    """Every broken rule of the layout, one line each (empty: all good)."""
    files, stray = scan(src)
    out = [f"src/{s}: not a .c/.h file in a room (src/ROOM/NAME.c)" for s in stray]
    modules = {}
    for path, incs in files.items():
        room = path.split("/")[0]
        mod = module_of(path)
        if room not in rank:
            out.append(f"src/{path}: room '{room}' has no rank in tests/test_layout.py and docs/architecture.md")
            continue
        modules.setdefault(mod, set())
        for inc in incs:
            if "/" not in inc:
                out.append(f"src/{path}: #include \"{inc}\" must name its room (\"ROOM/{inc}\")")
                continue
            if inc not in files:
                out.append(f"src/{path}: #include \"{inc}\": no such file in src/")
                continue
            to = inc.split("/")[0]
            if to == room:
                target = module_of(inc)
                if target != mod:
                    modules[mod].add(target)
                if room == "cli" and inc != "cli/cli.h":
                    out.append(f"src/{path}: includes {inc}; a subcommand is a leaf, share code through a lower room")
            elif to == "cli":
                out.append(f"src/{path}: includes {inc}; nothing outside cli/ may include the command line")
            elif rank.get(to, 99) >= rank[room]:
                out.append(f"src/{path}: {room} (rank {rank[room]}) includes {inc} ({to}, rank {rank.get(to)}); "
                           f"imports flow down only")
    cycle = find_cycle(modules)
    if cycle:
        out.append("circle of includes: " + " -> ".join(cycle))
    return out


# Functions longer than this are split along their own sections (STYLE.md).
MAX_FUNCTION_LINES = 120
# The corpus generator's template machinery is replaced by the grammar of the
# "everyday sentences" issue; it is left as it is until then.
LONG_FUNCTIONS_ALLOWED = {("corpus/templates.c", "tpl_line")}


def functions(text):
    """(name, first line, number of lines) of every function defined in C text."""
    lines, out, depth, start = text.split("\n"), [], 0, None
    for i, line in enumerate(lines):
        code = re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'', '""', line)
        code = re.sub(r"//.*|/\*.*?\*/", "", code)
        before = depth
        depth += code.count("{") - code.count("}")
        if before == 0 and depth > 0 and ")" in code and "=" not in code.split("(")[0] \
                and not re.match(r"\s*(typedef|struct|enum|union)\b", code):
            j = i   # back to the first line of a signature that spans lines
            while j > 0 and lines[j - 1].strip() and not lines[j - 1].rstrip().endswith((";", "}", "*/")) \
                    and not lines[j - 1].startswith("#"):
                j -= 1
            m = re.search(r"(\w+)\s*\(", " ".join(lines[j:i + 1]))
            start = (m.group(1) if m else "?", j)
        if before > 0 and depth == 0 and start:
            out.append((start[0], start[1] + 1, i - start[1] + 1))
            start = None
    return out


def test_layout_functions_fit_on_a_screen():
    long = []
    for room in sorted(os.listdir(SRC)):
        for name in sorted(os.listdir(os.path.join(SRC, room))):
            if not name.endswith(".c"):
                continue
            with open(os.path.join(SRC, room, name), encoding="utf-8") as f:
                for fn, line, n in functions(f.read()):
                    if n > MAX_FUNCTION_LINES and (f"{room}/{name}", fn) not in LONG_FUNCTIONS_ALLOWED:
                        long.append(f"src/{room}/{name}:{line} {fn}: {n} lines")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (split them along their sections):\n  " + "\n  ".join(long)


def test_layout_function_finder():
    text = "static int f(int a,\n             int b) {\n    if (a) { return \"}\"[0]; }\n    return b;\n}\n" \
           "struct S {\n    int x;\n};\nint g(void) {\n    return 0;\n}\n"
    assert functions(text) == [("f", 1, 5), ("g", 9, 3)], functions(text)


def test_layout_rooms_and_include_direction():
    bad = problems(SRC)
    assert not bad, "layout broken:\n  " + "\n  ".join(bad)


# The commands that take any model (docs/architecture.md, "One path"): they open
# it through net/net.h and never name its kind.
ANY_MODEL_COMMANDS = ("run.c", "generate.c", "compare.c", "info.c", "tokenize.c", "forward.c")
KIND_HEADERS = ("family/", "model/", "net/model_file.h", "net/describe.h")
KIND_NAMES = re.compile(r"\b(HfFile|HfModel|LlamaModel|ModelFile|Model|hf_file_\w+|model_file_\w+|"
                        r"llama_\w+|HF_FILE_\w+|HF_ROUTE_\w+|MODEL_ENC_DEC|checkpoint_\w+)\b")


def kind_problems(src, commands=ANY_MODEL_COMMANDS):
    """Each place a command that takes any model names a model's kind."""
    out = []
    for name in commands:
        with open(os.path.join(src, "cli", name), encoding="utf-8") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            if inc.startswith(KIND_HEADERS):
                out.append(f"src/cli/{name}: includes {inc}; open the model with net/net.h")
        code = re.sub(r"/\*.*?\*/|//[^\n]*|\"(\\.|[^\"\\])*\"", " ", text, flags=re.S)
        for m in sorted(set(KIND_NAMES.findall(code))):
            out.append(f"src/cli/{name}: names {m}; ask the model what it can do (net.h's NetCap)")
    return out


def test_layout_commands_never_name_a_model_kind():
    bad = kind_problems(SRC)
    assert not bad, "a command branches on the model's kind:\n  " + "\n  ".join(bad)


def test_layout_kind_checker_catches_a_kind(tmp):
    """The checker itself: a command that includes a family header and names HfFile fails it."""
    write(tmp, "src/cli/run.c", '#include "cli/cli.h"\n#include "family/hf_file.h"\n/* HfFile in a comment is fine */\n'
                                'static int f(HfFile *h) { return h != 0; }\n')
    bad = kind_problems(os.path.join(tmp, "src"), ("run.c",))
    assert len(bad) == 2 and "family/hf_file.h" in bad[0] and "HfFile" in bad[1], bad


def test_layout_top_level_is_exact():
    names = sorted(n for n in os.listdir(ROOT) if not n.startswith(".") and n != "build")
    assert names == sorted(["src", "docs", "samples", "tests", "output", "Makefile", "README.md"]), names


def write(tmp, rel, text):
    p = os.path.join(tmp, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w", encoding="utf-8") as f:
        f.write(text)


def test_layout_checker_catches_circles_and_upward_includes(tmp):
    """The checker itself, on a small tree that breaks each rule once."""
    src = os.path.join(tmp, "src")
    write(tmp, "src/core/a.h", '#include "core/b.h"\n')
    write(tmp, "src/core/a.c", '#include "core/a.h"\n')
    write(tmp, "src/core/b.h", "\n")
    write(tmp, "src/core/b.c", '#include "core/b.h"\n#include "core/a.h"\n')   # a -> b -> a
    write(tmp, "src/model/m.c", '#include "core/a.h"\n')                        # fine: down
    write(tmp, "src/core/up.c", '#include "model/m.h"\n')                       # up
    write(tmp, "src/model/m.h", "\n")
    write(tmp, "src/render/r.c", '#include "model/m.h"\n')                      # same rank
    write(tmp, "src/cli/run.c", '#include "cli/cli.h"\n')
    write(tmp, "src/cli/cli.h", "\n")
    write(tmp, "src/cli/demo.c", '#include "cli/run.h"\n')                      # cli not a leaf
    write(tmp, "src/cli/run.h", "\n")
    write(tmp, "src/demo/l.c", '#include "cli/cli.h"\n#include "tensor.h"\n')  # into cli; no room
    write(tmp, "src/stray.c", "\n")
    bad = problems(src)
    text = "\n".join(bad)
    assert "circle of includes: core/a -> core/b -> core/a" in text, text
    assert "src/core/up.c: core (rank 0) includes model/m.h" in text, text
    assert "src/render/r.c: render (rank 2) includes model/m.h" in text, text
    assert "src/cli/demo.c: includes cli/run.h" in text, text
    assert "src/demo/l.c: includes cli/cli.h" in text, text
    assert "must name its room" in text, text
    assert "src/stray.c" in text, text
    assert len(bad) == 7, text
    # and the good parts of that tree raise nothing once the bad files go
    for rel in ["src/core/b.c", "src/core/up.c", "src/render/r.c", "src/cli/demo.c", "src/demo/l.c", "src/stray.c"]:
        os.remove(os.path.join(tmp, rel))
    assert problems(src) == []


# ---- issue 23 (h3): a header is the manual of its own module ----
# Every function declared in ROOM/NAME.h or ROOM/NAME_internal.h is defined in
# ROOM/NAME.c, so the include graph (problems() above) is the call graph and a
# circle of calls shows as a circle of includes.  Checked here for the rooms
# made to follow it so far; the other rooms join as they are split.
HEADER_RULE_ROOMS = ("demo", "pipeline")


def declared(text):
    """Names of the functions a header declares (prototypes at file level)."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    text = "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("#"))
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "{}":
            depth += 1 if ch == "{" else -1
        elif depth == 0 and ch == ";":
            st = re.sub(r"__attribute__\s*\(\(.*?\)\)", "", " ".join(cur.split()))
            m = re.match(r"[\w\s\*]*?\b(\w+)\s*\(", st)
            if m and not st.startswith("typedef"):
                out.append(m.group(1))
            cur = ""
        elif depth == 0:
            cur += ch
    return out


def header_problems(src, rooms=HEADER_RULE_ROOMS):
    """Functions declared in a module's header but defined outside its NAME.c, one line each."""
    out = []
    for room in rooms:
        d = os.path.join(src, room)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if not name.endswith(".h"):
                continue
            mod = module_of(f"{room}/{name}").split("/")[1]
            c = os.path.join(d, mod + ".c")
            defined = set()
            if os.path.exists(c):
                with open(c, encoding="utf-8") as f:
                    defined = {fn for fn, _, _ in functions(f.read())}
            with open(os.path.join(d, name), encoding="utf-8") as f:
                for fn in declared(f.read()):
                    if fn not in defined:
                        out.append(f"src/{room}/{name} declares {fn}, which {room}/{mod}.c does not define")
    return out


def test_layout_headers_declare_their_own_module():
    bad = header_problems(SRC)
    assert not bad, "a header declares another file's functions (give that file its own header):\n  " + "\n  ".join(bad)


def test_layout_header_checker_catches_a_borrowed_declaration(tmp):
    src = os.path.join(tmp, "src")
    write(tmp, "src/demo/d.h", "typedef struct { int (*f)(void); } D;\nint d_go(D *d,\n         int x) __attribute__((pure));\n"
                               "int d_part(void);   /* defined in d_part.c */\n")
    write(tmp, "src/demo/d.c", '#include "demo/d.h"\nint d_go(D *d,\n         int x) {\n    return x;\n}\n')
    write(tmp, "src/demo/d_part.c", '#include "demo/d.h"\nint d_part(void) {\n    return 1;\n}\n')
    assert declared(open(os.path.join(src, "demo/d.h")).read()) == ["d_go", "d_part"]
    assert header_problems(src, ("demo",)) == ["src/demo/d.h declares d_part, which demo/d.c does not define"]


# ---- circles of calls inside a room, read from the object files -------------
# Includes alone miss a room whose files share one header (demo.h declaring the
# parts and the driver's helpers): the driver calls the parts and the parts call
# the driver.  nm tells which file defines and which uses each symbol.

def object_dir():
    """build/src (or the tree of the build that made $ATTNVIZ, e.g. build/san)."""
    exe = os.environ.get("ATTNVIZ")
    base = os.path.dirname(exe) if exe else os.path.join(ROOT, "build")
    return os.path.join(base, "src")


def call_graph(objdir):
    """{ROOM/NAME: set of ROOM/OTHER it calls} between the object files of one room."""
    objs = {}
    for room in sorted(os.listdir(objdir)):
        d = os.path.join(objdir, room)
        if os.path.isdir(d):
            objs.update({os.path.join(d, n): f"{room}/{n[:-2]}" for n in sorted(os.listdir(d)) if n.endswith(".o")})
    defined, used = {}, {key: set() for key in objs.values()}
    if objs:   # one nm for every file: "FILE.o:[ADDR] TYPE SYMBOL" a line
        out = subprocess.run(["nm", "-A", *objs], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            cut = line.index(".o:") + 2
            path, rest = line[:cut], line[cut + 1:]
            key, parts = objs[path], rest.split()
            if len(parts) == 3 and parts[1] in "TDBR":
                defined.setdefault(parts[2], key)
            elif len(parts) == 2 and parts[0] == "U":
                used[key].add(parts[1])
    graph = {}
    for key, syms in used.items():
        graph[key] = {defined[s] for s in syms
                      if s in defined and defined[s] != key and defined[s].split("/")[0] == key.split("/")[0]}
    return graph


def test_layout_no_circle_of_calls_inside_a_room():
    objdir = object_dir()
    assert os.path.isdir(objdir), f"{objdir}: no object files (run make first)"
    live = {f"{r}/{n[:-2]}" for r in os.listdir(SRC) for n in os.listdir(os.path.join(SRC, r)) if n.endswith(".c")}
    graph = {k: v & live for k, v in call_graph(objdir).items() if k in live}
    assert len(graph) == len(live), f"object files missing for: {sorted(live - set(graph))}"
    cycle = find_cycle(graph)
    assert not cycle, "circle of calls inside a room (put the shared helpers in a file of their own): " + \
        " -> ".join(cycle)


def test_layout_call_circle_checker(tmp):
    """The call checker on two files that call each other, then on a fixed pair."""
    cc = os.environ.get("CC", "cc")
    d = os.path.join(tmp, "src", "demo")
    os.makedirs(d)

    def build(a_calls_b):
        write(tmp, "src/demo/a.c", "int b(void);\nint a(void) { return %s; }\nint helper(void) { return 1; }\n"
              % ("b()" if a_calls_b else "1"))
        write(tmp, "src/demo/b.c", "int helper(void);\nint b(void) { return helper(); }\n")
        for n in ("a", "b"):
            subprocess.run([cc, "-c", "-o", os.path.join(d, n + ".o"), os.path.join(d, n + ".c")], check=True)
        return find_cycle(call_graph(os.path.join(tmp, "src")))

    assert build(True) == ["demo/a", "demo/b", "demo/a"]
    assert build(False) is None


# ---- sizes: files under 1,000 lines, functions under 13 parameters ----------
MAX_FILE_LINES = 1000
MAX_PARAMS = 12


def parameters(text):
    """(name, line, number of parameters) of every function defined in C text."""
    lines, out = text.split("\n"), []
    for name, first, n in functions(text):
        sig = " ".join(lines[first - 1:first - 1 + n])
        sig = re.sub(r"/\*.*?\*/|//[^\n]*", "", sig)
        i = sig.find(name + "(") if name + "(" in sig else sig.find(name)
        i = sig.find("(", i)
        depth, count, body = 0, 0, ""
        for ch in sig[i:]:
            if ch == "(":
                depth += 1
                if depth == 1:
                    continue
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    break
            if depth == 1 and ch == ",":
                count += 1
            body += ch
        params = 0 if body.strip() in ("", "void") else count + 1
        out.append((name, first, params))
    return out


def test_layout_parameter_counter():
    text = "static int f(int a, int (*cb)(int, int),\n             const char *s) {\n    return a;\n}\n" \
           "void g(void) {\n}\n"
    assert parameters(text) == [("f", 1, 3), ("g", 5, 0)], parameters(text)


def test_layout_sizes():
    big = []
    for room in sorted(os.listdir(SRC)):
        names = sorted(os.listdir(os.path.join(SRC, room)))
        if ASSETS in names:   # the page's CSS and JavaScript: the same size rule
            names.remove(ASSETS)
            names += [f"{ASSETS}/{a}" for a in sorted(os.listdir(os.path.join(SRC, room, ASSETS)))]
        for name in names:
            with open(os.path.join(SRC, room, name), encoding="utf-8") as f:
                text = f.read()
            n = text.count("\n")
            if n > MAX_FILE_LINES:
                big.append(f"src/{room}/{name}: {n} lines (over {MAX_FILE_LINES}: split it along its sections)")
            if name.endswith(".c"):
                for fn, line, p in parameters(text):
                    if p > MAX_PARAMS:
                        big.append(f"src/{room}/{name}:{line} {fn}: {p} parameters (over {MAX_PARAMS}: pass a struct)")
    assert not big, "too big:\n  " + "\n  ".join(big)
