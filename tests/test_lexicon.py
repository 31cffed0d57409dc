"""The lexicon of the corpus (samples/corpus/{nouns,adjectives,verbs,names}.txt).

Read here independently of the C parser (issue 12, spec A), so a broken entry is
found even before the generator runs:
  - minimum sizes (300 nouns, 120 adjectives, 120 verbs, 40 given names);
  - every entry has its English, French and Vietnamese; nouns a French gender m/f;
  - column counts; six French present forms; auxiliary a/e; future ending in -a;
    frames and selection syntax; known class names (at most 40 in all);
  - every class a template of templates.txt asks for still has entries;
  - no English word twice with the same frames; no name that is a word of
    another file; no beau/vieux/nouveau/fou/mou;
  - every word survives attnviz's tokenizer unchanged (lowercase letters only,
    "_" the only joiner, no apostrophe or hyphen).
Run by `make test` (tests/pyrun.py) or alone: /usr/bin/python3 tests/test_lexicon.py
"""
import os, re, shutil, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "samples", "corpus")

NOUN_CLASSES_TODAY = {"animal", "person", "place", "dest", "object", "thing",
                      "container", "surface", "food", "topping"}
ROLES = {"agent", "path", "weary", "load", "fitbig", "fitsmall", "feeling", "pre"}
VERB_TEMPLATE_CLASSES = {"cross", "perceive", "carry", "handle"}
FRAMES = {"intr", "tr", "ditr", "dest"}
ETRE = {"aller", "venir", "revenir", "devenir", "arriver", "partir", "entrer",
        "sortir", "rester", "tomber", "monter", "descendre", "rentrer",
        "retourner", "naître", "mourir"}
BANNED_ADJ = {"beau", "bel", "belle", "beaux", "belles", "vieux", "vieil", "vieille",
              "vieilles", "nouveau", "nouvel", "nouvelle", "nouveaux", "nouvelles",
              "fou", "fol", "folle", "fous", "folles", "mou", "mol", "molle", "mous",
              "molles"}
MAX_CLASSES = 40
SEL = re.compile(r"^([sord]):([a-z]+(?:\|[a-z]+)*)$")


def rows(path):
    """[(line number, fields)] of a lexicon file: no comments, no blank lines."""
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if s and not s.startswith("#"):
                out.append((n, s.split()))
    return out


def word_problem(field):
    """Why FIELD would not survive the tokenizer unchanged, or None ("-" is none)."""
    if field == "-":
        return None
    for piece in field.split("_"):
        if not piece:
            return "empty piece (doubled or stray _)"
        if piece != piece.lower():
            return "not lowercase"
        if "'" in piece or "\u2019" in piece:
            return "apostrophe (elided forms do not belong in the lexicon)"
        if not all(c.isalpha() for c in piece):
            return "character other than a letter (only _ joins words)"
    return None


def pieces(field):
    return [] if field == "-" else field.split("_")


class Lexicon:
    """The four files read and checked; .problems lists every broken rule."""

    def __init__(self, d):
        self.d = d
        self.problems = []
        self.words = set()          # every token of nouns/adjectives/verbs
        self.nouns, self.adjs, self.verbs, self.names = [], [], [], []
        self.read_nouns()
        self.read_adjectives()
        self.read_verbs()
        self.read_names()
        self.check_classes()
        self.check_templates()
        self.check_names()
        self.check_counts()

    def bad(self, f, n, msg):
        self.problems.append(f"{f}:{n}: {msg}")

    def words_ok(self, f, n, fields):
        for x in fields:
            for form in x.split("|"):
                why = word_problem(form)
                if why:
                    self.bad(f, n, f"{form!r}: {why}")
                self.words.update(pieces(form))

    def read_nouns(self):
        f, seen = "nouns.txt", set()
        for n, c in rows(os.path.join(self.d, f)):
            if len(c) != 7:
                self.bad(f, n, f"expected 7 columns, got {len(c)}")
                continue
            en_sg, en_pl, fr_sg, fr_pl, g, vi, cls = c
            self.words_ok(f, n, c[:4] + [vi])
            if g not in ("m", "f"):
                self.bad(f, n, f"French gender {g!r} is not m or f")
            if en_sg == "-" and en_pl == "-":
                self.bad(f, n, "no English")
            if (en_sg == "-") != (fr_sg == "-") or (en_pl == "-") != (fr_pl == "-"):
                self.bad(f, n, "English and French do not have the same forms")
            if vi == "-":
                self.bad(f, n, "no Vietnamese")
            classes = cls.split(",")
            if "mass" in classes and en_pl != "-":
                self.bad(f, n, "a mass noun has no plural")
            if "neutral" in classes and "person" not in classes:
                self.bad(f, n, "neutral is for persons")
            for w in {en_sg, en_pl}:         # sheep / sheep is one noun
                if w != "-":
                    if w in seen:
                        self.bad(f, n, f"English noun {w!r} listed twice")
                    seen.add(w)
            self.nouns.append((en_sg, en_pl, classes))

    def read_adjectives(self):
        f, seen = "adjectives.txt", set()
        for n, c in rows(os.path.join(self.d, f)):
            if len(c) != 4:
                self.bad(f, n, f"expected 4 columns, got {len(c)}")
                continue
            en, fr, vi, cls = c
            self.words_ok(f, n, [en, fr, vi])
            forms = fr.split("|")
            if len(forms) not in (1, 4):
                self.bad(f, n, "French must be one form or m|f|mp|fp")
            if "-" in (en, fr, vi):
                self.bad(f, n, "an adjective needs English, French and Vietnamese")
            if BANNED_ADJ & set(forms):
                self.bad(f, n, f"{fr}: changes form before a vowel (beau/vieux/nouveau...)")
            classes = cls.split(",")
            if "agent" in classes and "path" in classes:
                self.bad(f, n, "both agent and path")
            if en in seen:
                self.bad(f, n, f"English adjective {en!r} listed twice")
            seen.add(en)
            self.adjs.append((en, classes))

    def read_verbs(self):
        f, seen = "verbs.txt", {}
        for n, c in rows(os.path.join(self.d, f)):
            if len(c) != 14:
                self.bad(f, n, f"expected 14 columns, got {len(c)}")
                continue
            (en, en3, enp, inf, pres, pp, aux, fut, vi, frames, ep, fp, vp, sel) = c
            self.words_ok(f, n, [en, en3, enp, inf, pres, pp, fut, vi, ep, fp, vp])
            if "-" in (en, en3, enp, inf, pp, fut, vi):
                self.bad(f, n, "a verb needs all its English, French and Vietnamese forms")
            self.check_french(f, n, inf, pres, pp, aux, fut)
            if not pieces(en3) or not pieces(en3)[0].endswith("s"):
                self.bad(f, n, f"en_3s {en3!r} does not end in s")
            fr_set = set(frames.split(","))
            if not fr_set <= FRAMES:
                self.bad(f, n, f"frames {frames!r}: only {sorted(FRAMES)}")
            if "ditr" in fr_set and (ep == "-" or fp == "-"):
                self.bad(f, n, "ditr needs the recipient's preposition (to / à)")
            if fr_set == {"intr"} and (ep, fp, vp) != ("-", "-", "-"):
                self.bad(f, n, "an intransitive verb takes no preposition")
            for fr in fr_set:
                if (en, fr) in seen:
                    self.bad(f, n, f"{en!r} with frame {fr} also on line {seen[(en, fr)]}")
                seen[(en, fr)] = n
            self.check_sel(f, n, sel, fr_set)
            self.verbs.append((en, fr_set, sel))

    def check_french(self, f, n, inf, pres, pp, aux, fut):
        p = pres.split("|")
        if len(p) != 6:
            self.bad(f, n, f"fr_pres needs 6 forms je|tu|il|nous|vous|ils, got {len(p)}")
        else:
            je, tu, il, nous, vous, ils = p
            if not je.endswith(("e", "s", "x", "ai")):
                self.bad(f, n, f"je {je!r}?")
            if not tu.endswith(("s", "x")):
                self.bad(f, n, f"tu {tu!r}?")
            if not nous.endswith("ons") and nous != "sommes":
                self.bad(f, n, f"nous {nous!r}?")
            if not vous.endswith("ez") and vous not in ("êtes", "faites", "dites"):
                self.bad(f, n, f"vous {vous!r}?")
            if not ils.endswith(("ent", "ont")):
                self.bad(f, n, f"ils {ils!r}?")
        if not inf.endswith(("er", "ir", "re", "oir")):
            self.bad(f, n, f"infinitive {inf!r}?")
        if not pp.endswith(("é", "i", "u", "t", "s")):
            self.bad(f, n, f"participle {pp!r}?")
        if aux not in ("a", "e"):
            self.bad(f, n, f"fr_aux {aux!r} is not a or e")
        elif (aux == "e") != (inf in ETRE):
            self.bad(f, n, f"{inf} takes {'être' if inf in ETRE else 'avoir'}")
        if not fut.endswith("ra"):
            self.bad(f, n, f"fr_fut {fut!r} must be the 3rd person future (…ra)")

    def check_sel(self, f, n, sel, fr_set):
        if sel == "-":
            return
        need = {"o": {"tr", "ditr"}, "r": {"ditr"}, "d": {"dest"}, "s": FRAMES}
        for item in sel.split(","):
            if item in VERB_TEMPLATE_CLASSES:
                continue
            m = SEL.match(item)
            if not m:
                self.bad(f, n, f"sel item {item!r}: s:C|C, o:, r:, d: or "
                         f"{'/'.join(sorted(VERB_TEMPLATE_CLASSES))}")
            elif not (need[m.group(1)] & fr_set):
                self.bad(f, n, f"sel {item!r} does not fit frames {sorted(fr_set)}")

    def read_names(self):
        f, seen = "names.txt", set()
        for n, c in rows(os.path.join(self.d, f)):
            if len(c) != 2:
                self.bad(f, n, f"expected 2 columns, got {len(c)}")
                continue
            name, kind = c
            why = word_problem(name)
            if why or "_" in name or name == "-":
                self.bad(f, n, f"name {name!r}: {why or 'one word'}")
            if kind not in ("m", "f", "city"):
                self.bad(f, n, f"kind {kind!r} is not m, f or city")
            if name in seen:
                self.bad(f, n, f"name {name!r} listed twice")
            seen.add(name)
            self.names.append((n, name, kind))

    def check_classes(self):
        noun_cls = {x for _, _, cl in self.nouns for x in cl}
        for _, cl in self.adjs:
            for x in cl:
                if x not in noun_cls and x not in ROLES:
                    self.bad("adjectives.txt", "-", f"class {x!r} is no noun class or role")
        verb_cls = set()
        for en, _, sel in self.verbs:
            for item in sel.split(","):
                m = SEL.match(item)
                if m:
                    for x in m.group(2).split("|"):
                        if x not in noun_cls:
                            self.bad("verbs.txt", "-", f"{en}: {item}: {x!r} is no noun class")
                elif item in VERB_TEMPLATE_CLASSES:
                    verb_cls.add(item)
        every = noun_cls | {x for _, cl in self.adjs for x in cl} | verb_cls
        if len(every) > MAX_CLASSES:
            self.bad("lexicon", "-", f"{len(every)} class names (at most {MAX_CLASSES})")
        for x in NOUN_CLASSES_TODAY:
            if x not in noun_cls:
                self.bad("nouns.txt", "-", f"class {x!r} of today has no noun left")

    def check_templates(self):
        """Every class a slot of templates.txt asks for has entries."""
        path = os.path.join(self.d, "templates.txt")
        if not os.path.exists(path):
            return
        have = {
            "noun": {x for _, _, cl in self.nouns for x in cl},
            "adj": {x for _, cl in self.adjs for x in cl},
            "verb": {i for _, _, sel in self.verbs for i in sel.split(",")},
        }
        for n, c in rows(path):
            if c[0] == "slot" and len(c) >= 4 and c[2] in have:
                for x in c[3].split("|"):
                    if x not in have[c[2]]:
                        self.bad("templates.txt", n, f"no {c[2]} of class {x!r} is left")

    def other_words(self):
        """Tokens of words.txt and templates.txt's literals (names must avoid them)."""
        out = set()
        p = os.path.join(self.d, "words.txt")
        if os.path.exists(p):
            for _, c in rows(p):
                out.add(c[0])
                for x in c[2:]:
                    out.update(pieces(x.split("=", 1)[-1]))
        p = os.path.join(self.d, "templates.txt")
        if os.path.exists(p):
            for _, c in rows(p):
                if c[0] in ("en", "fr", "vi"):
                    out.update(t.split("#")[0] for t in c[1:] if not t.startswith("{"))
                elif c[0] == "lesson":
                    out.update(x.split("=", 1)[-1] for x in c[2:])
        return out

    def check_names(self):
        taken = self.words | self.other_words()
        for n, name, _ in self.names:
            if name in taken:
                self.bad("names.txt", n, f"{name!r} is also a word of the lexicon")

    def check_counts(self):
        want = [("nouns", len(self.nouns), 300), ("adjectives", len(self.adjs), 120),
                ("verbs", len({v[0] for v in self.verbs}), 120),
                ("given names", sum(k != "city" for _, _, k in self.names), 40),
                ("cities", sum(k == "city" for _, _, k in self.names), 8)]
        for what, got, least in want:
            if got < least:
                self.bad("lexicon", "-", f"{got} {what}, at least {least} needed")


def inventory(lex):
    """{class: count} over nouns, adjectives and verbs (for the report)."""
    inv = {}
    for _, _, cl in lex.nouns:
        for x in cl:
            inv[f"noun:{x}"] = inv.get(f"noun:{x}", 0) + 1
    for _, cl in lex.adjs:
        for x in cl:
            inv[f"adj:{x}"] = inv.get(f"adj:{x}", 0) + 1
    for _, fr, sel in lex.verbs:
        for x in list(fr) + [i for i in sel.split(",") if i in VERB_TEMPLATE_CLASSES]:
            inv[f"verb:{x}"] = inv.get(f"verb:{x}", 0) + 1
    return inv


# ------------------------------------------------------------------ tests --

def test_lexicon_is_complete_and_well_formed():
    lex = Lexicon(CORPUS)
    assert not lex.problems, "\n".join(lex.problems)


BREAKS = [
    # (file, line appended, text the report must contain)
    ("nouns.txt", "lamp2 lamps2 lampe lampes x cái_đèn object", "gender"),
    ("nouns.txt", "kettle kettles bouilloire bouilloires f - object", "Vietnamese"),
    ("nouns.txt", "water2 - l'eau - f nước drink,mass", "apostrophe"),
    ("nouns.txt", "Cup cups tasse tasses f cái_tách object", "lowercase"),
    ("nouns.txt", "cup2 cups2 tasse tasses f cái tách object", "7 columns"),
    ("adjectives.txt", "handsome beau|belle|beaux|belles đẹp_trai person", "beau"),
    ("adjectives.txt", "red rouge đỏ object", "twice"),
    ("adjectives.txt", "silly bête ngốc person,agent,path", "agent and path"),
    ("verbs.txt", "eat eats ate manger mange|manges|mange|mangeons|mangent mangé a "
                  "mangera ăn tr - - - s:person", "6 forms"),
    ("verbs.txt", "nap naps napped dormir dors|dors|dort|dormons|dormez|dorment dormi a "
                  "dormir ngủ intr - - - s:person", "future"),
    ("verbs.txt", "go2 goes2 went2 aller vais|vas|va|allons|allez|vont allé a ira đi "
                  "dest to à đến d:place", "être"),
    ("verbs.txt", "see sees saw voir vois|vois|voit|voyons|voyez|voient vu a verra "
                  "thấy tr - - - s:person", "also on line"),
    ("verbs.txt", "gaze gazes gazed fixer fixe|fixes|fixe|fixons|fixez|fixent fixé a "
                  "fixera nhìn tr - - - x:person", "sel item"),
    ("verbs.txt", "nap naps napped dormir dors|dors|dort|dormons|dormez|dorment dormi a "
                  "dormira ngủ intr - - - s:person,o:food", "does not fit"),
    ("verbs.txt", "gaze gazes gazed fixer fixe|fixes|fixe|fixons|fixez|fixent fixé a "
                  "fixera nhìn jump - - - s:person", "frames"),
    ("names.txt", "cat m", "also a word"),
    ("names.txt", "didn't m", "name"),
    ("names.txt", "zoé x", "kind"),
]


def copy_corpus(tmp):
    d = os.path.join(tmp, "corpus")
    shutil.copytree(CORPUS, d)
    return d


def test_lexicon_check_catches_broken_entries(tmp):
    for i, (fname, line, expect) in enumerate(BREAKS):
        d = copy_corpus(os.path.join(tmp, str(i)))
        with open(os.path.join(d, fname), "a", encoding="utf-8") as f:
            f.write("\n" + line + "\n")
        probs = Lexicon(d).problems
        assert any(expect in p for p in probs), f"{fname} + {line!r}: {probs}"


def test_lexicon_check_catches_a_lost_template_class(tmp):
    d = copy_corpus(tmp)
    p = os.path.join(d, "nouns.txt")
    with open(p, encoding="utf-8") as f:
        lines = f.readlines()
    with open(p, "w", encoding="utf-8") as f:
        f.writelines(l for l in lines if "container" not in l or l.startswith("#"))
    probs = Lexicon(d).problems
    assert any("'container' is left" in x for x in probs), probs


def test_lexicon_check_counts_minimums(tmp):
    d = copy_corpus(tmp)
    p = os.path.join(d, "verbs.txt")
    with open(p, encoding="utf-8") as f:
        lines = f.readlines()
    with open(p, "w", encoding="utf-8") as f:
        f.writelines(lines[:60])
    probs = Lexicon(d).problems
    assert any("verbs, at least 120" in x for x in probs), probs


if __name__ == "__main__":
    lex = Lexicon(CORPUS)
    print("\n".join(lex.problems) or "lexicon: no problems")
    if "-v" in sys.argv:
        for k, v in sorted(inventory(lex).items()):
            print(f"{k:20} {v}")
    import tempfile
    for fn in (test_lexicon_check_catches_broken_entries,
               test_lexicon_check_catches_a_lost_template_class,
               test_lexicon_check_counts_minimums):
        with tempfile.TemporaryDirectory() as t:
            fn(tmp=t)
    print("broken copies: all caught")
    sys.exit(1 if lex.problems else 0)
