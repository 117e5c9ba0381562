"""Text to train on, without downloading anything: a corpus is a list of documents, and a document
is a list of sentences (str) in their original order, the shape the pre-training scripts of BERT
and ALBERT read (one sentence per line, documents separated by blank lines).

- ``default_corpus()``: real English prose that ships with every CPython install: the
  documentation topics of ``pydoc_data.topics`` (the text ``help("if")`` prints) and the docstrings
  of the standard-library modules. Each section of a topic and each module docstring is one
  document. On CPython 3.11.7 it holds 298 documents, 3,328 sentences and 58,585
  whitespace-separated words (360,481 characters; 46,679 of the words come from the topics), a
  small corpus, sized for NumPy on a laptop. Other Python versions ship slightly different
  documentation, so these numbers move a little with the interpreter.
- ``load_text(path)``: documents from your own UTF-8 text file or folder of ``.txt`` files.
- ``grammar_corpus(n_documents, seed)``: synthetic stories from a small grammar with known
  structure (subject-verb agreement across relative clauses, a day's events in cyclic order, one
  place per story as its topic), so that the masked-word, sentence-order and next-sentence tasks
  each have an answer a small model can learn, and no surface cue tells the sentence order.
"""
import ast
import functools
import itertools
import os
import re
import sys
import sysconfig
import tokenize
from pathlib import Path

import numpy as np

from minishare import safeio
from minishare.checks import is_int
from minishare.data import holdout
from minishare.errors import InvalidValue

# A sentence ends at ., ! or ? followed by space and a capital, digit, quote or bracket; "e.g." and
# "i.e." are the abbreviations the documentation uses mid-sentence.
_SENTENCE_END = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<=[.!?])\s+(?=[A-Z0-9\"“(\[])")
# A whitespace run that is not a single space: only these are replaced (re.sub keeps a list of
# the pieces between its matches, which for every single space would be a list of all the words)
_WHITESPACE = re.compile(r"\s{2,}|[^\S ]")


def split_sentences(text):
    """Split running text into sentences with the simple rule above; whitespace runs become one
    space. ``split_sentences("It runs.  Then it stops.") == ["It runs.", "Then it stops."]``."""
    text = _WHITESPACE.sub(" ", text).strip()
    return [s for s in _SENTENCE_END.split(text) if s]


# ---------------------------------------------------------------- the default corpus

_HEADING_RULE = re.compile(r"^([*=\-~^])\1{2,}$")   # the underline of a section title
_LIST_MARKER = re.compile(r"^(\d+\.|\*|-)\s+")
# Inline markup, matched left to right so that a literal such as "**" is read as a literal: pydoc's
# "code" quotes, **strong**, *emphasis*, ``code`` and :role:`target` (module docstrings), and
# footnote references [5]. Each is replaced by its content.
_MARKUP = re.compile(r'"(?P<literal>[^"]+)"'
                     r"|\*\*(?P<strong>[^*]+)\*\*"
                     r"|(?<!\w)\*(?P<emphasis>[^*\s][^*]*?)\*(?!\w)"
                     r"|``(?P<code>[^`]+)``"
                     r"|:\w+:`(?P<role>[^`]+)`"
                     r"|\s\[\d+\]")
_LEFTOVER = re.compile(r'["*`]')   # still there after the cleanup: the sentence is code, not prose
_TERMINAL = re.compile(r"[.!?][)\"”’]*$")
_MIN_WORDS = 3


def _indent(line):
    return len(line) - len(line.lstrip(" "))


def _paragraphs(lines):
    """Blocks of non-blank ``lines`` (an iterable of str); a section title (a line over a rule of
    *, =, - ...) is a block of its own even where no blank line sets it apart."""
    block = []
    for line in itertools.chain(lines, [""]):
        stripped = line.strip()
        if block and _HEADING_RULE.match(stripped):   # the line above is a title
            if len(block) > 1:
                yield block[:-1]
            yield [block[-1], stripped]
            block = []
        elif stripped:
            block.append(line.rstrip())
        elif block:
            yield block
            block = []


def _clean_sections(text):
    """Split documentation text at its section titles and keep only its prose.

    Dropped: titles, tables, and every block indented deeper than a paragraph that ends with a
    colon (code examples, grammar rules, "See also:" lists); the rest is joined into sentences with
    the markup removed. Sentences without end punctuation (signatures, leftovers) or with fewer
    than three words are dropped too. Returns a list of sections, each a list of sentences.
    """
    sections, sentences = [], []
    code_indent = None   # blocks indented at least this deep are the example after a colon
    for block in _paragraphs(text.splitlines()):
        if len(block) == 2 and _HEADING_RULE.match(block[1].strip()):
            sections.append(sentences)
            sentences, code_indent = [], None
            continue
        first = block[0]
        if code_indent is not None and _indent(first) >= code_indent:
            continue
        code_indent = None
        if first.lstrip().startswith(("+", "|", ">>>")):
            continue
        marker = _LIST_MARKER.match(first.lstrip())
        content_indent = _indent(first) + (marker.end() if marker else 0)
        # Join the wrapped lines; textwrap breaks hyphenated words after the hyphen ("re-|raises").
        prose = re.sub(r"(?<=\w-)\n(?=\w)", "", "\n".join(line.strip() for line in block))
        prose = prose.replace("\n", " ")
        if marker:
            prose = prose[marker.end():]
        if prose.endswith(":"):
            code_indent = content_indent + 1
        prose = _MARKUP.sub(lambda m: m.group(m.lastgroup) if m.lastgroup else "", prose)
        sentences += [s for s in split_sentences(prose) if _TERMINAL.search(s)
                      and len(s.split()) >= _MIN_WORDS and not _LEFTOVER.search(s)]
    sections.append(sentences)
    return sections


def _module_docstrings():
    """The docstring of each public standard-library module, read from its source file with the
    tokenizer (nothing is imported, so no module runs), in sorted module order."""
    stdlib = Path(sysconfig.get_path("stdlib"))
    for name in sorted(sys.stdlib_module_names):
        if name.startswith("_") or name in ("this", "antigravity"):
            continue
        for path in (stdlib / f"{name}.py", stdlib / name / "__init__.py"):
            if path.is_file():
                yield _first_string(path)
                break


def _first_string(path):
    """The module docstring of a source file: its first token, if that is a string literal."""
    with tokenize.open(path) as f:
        for token in tokenize.generate_tokens(f.readline):
            if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE):
                continue
            if token.type == tokenize.STRING:
                value = ast.literal_eval(token.string)
                return value if isinstance(value, str) else ""
            return ""
    return ""


@functools.lru_cache(maxsize=1)
def _default_corpus():
    from pydoc_data.topics import topics
    texts = [topics[key] for key in sorted(topics)] + list(_module_docstrings())
    return tuple(tuple(section) for text in texts for section in _clean_sections(text)
                 if len(section) >= 2)


def default_corpus():
    """The built-in English corpus (see the module docstring): a list of documents, each a list of
    at least two sentences. Deterministic for a given Python install; built once per process."""
    return [list(document) for document in _default_corpus()]


# ---------------------------------------------------------------- your own text

def load_text(path):
    """Documents from a UTF-8 text file, or from every ``*.txt`` file of a folder (sorted by name).

    Documents are separated by blank lines; the lines of one document are joined and split into
    sentences with ``split_sentences``. Files are read a line at a time, and only regular files
    are read (a FIFO or a device named ``*.txt`` is refused, not waited on). Raises
    ``FileNotFoundError`` for a missing path and ``ValueError`` for a file that is not UTF-8 or
    not a regular file, a file with no text, or a folder with no ``.txt`` file, each naming the
    file.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.txt"))
        if not files:
            raise InvalidValue(f"{path}: folder contains no .txt file")
    elif os.path.lexists(path):
        files = [path]
    else:
        raise FileNotFoundError(f"{path}: no such file or folder")
    for file in files:                 # all checked before any is read
        safeio.regular_file(file)
    documents = []
    for file in files:
        found = [split_sentences(" ".join(block)) for block in _paragraphs(_lines(file))]
        if not found:
            raise InvalidValue(f"{file}: contains no text")
        documents += found
    return documents


def _lines(file):
    """The lines of a UTF-8 file, read one at a time (a byte-order mark, U+FEFF, dropped)."""
    with open(file, "rb") as f:
        offset = 0
        for raw in f:
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise InvalidValue(f"{file}: not UTF-8 text ({error.reason} at byte {offset + error.start})"
                                   ) from None
            if offset == 0:
                line = line.removeprefix("\ufeff")
            offset += len(raw)
            del raw                           # a corpus may be one line: hold it once, not twice
            yield from line.splitlines()      # the line breaks str.splitlines knows, as before


# ---------------------------------------------------------------- the grammar corpus
#
# Sentence-order prediction must be solvable from what the sentences say and from nothing else.
# An earlier version opened every story with "The <noun>" and kept pronouns and "Then," for later
# sentences: the first token of segment B told the order 81% of the time. Now every sentence is
# built the same way wherever it stands, and the day's events are a cycle that a story enters
# anywhere, so neither a sentence's form nor its event says where in a story it stands; only the
# order of two events does.

_NOUNS = ("cat", "dog", "farmer", "teacher", "bird", "baker", "king", "girl", "boy", "fox")
_PLURAL_NOUNS = ("cats", "dogs", "farmers", "teachers", "birds", "bakers", "kings", "girls", "boys",
                 "foxes")
_RELATIVE_VERBS = (("sees", "see"), ("chases", "chase"), ("likes", "like"), ("feeds", "feed"),
                   ("follows", "follow"), ("watches", "watch"))
# Verbs are (singular, plural) pairs, so verb[int(plural)] agrees with a subject.
# The script of a day, a cycle (after "falls asleep" comes "wakes up" again):
# (singular verb phrase, plural verb phrase, takes an object).
EVENTS = (
    ("wakes up", "wake up", False),
    ("eats breakfast", "eat breakfast", False),
    ("feeds", "feed", True),
    ("walks to work", "walk to work", False),
    ("meets", "meet", True),
    ("starts working", "start working", False),
    ("calls", "call", True),
    ("eats lunch", "eat lunch", False),
    ("helps", "help", True),
    ("buys some bread", "buy some bread", False),
    ("goes home", "go home", False),
    ("visits", "visit", True),
    ("cooks dinner", "cook dinner", False),
    ("sings a song", "sing a song", False),
    ("reads a letter", "read a letter", False),
    ("falls asleep", "fall asleep", False),
)
# The topics: a place and its things. A story happens at one place, and every sentence ends with one
# of its things ("near the nets"), so a segment of another story is told apart by its topic: a
# signal for next-sentence prediction apart from the order of events, as in real text.
TOPICS = {
    "harbour": ("boats", "nets", "fish", "sails", "shells", "ropes"),
    "farm": ("hens", "cows", "goats", "barns", "tractors", "fences"),
    "forest": ("trees", "owls", "mushrooms", "logs", "ferns", "deer"),
    "castle": ("towers", "knights", "flags", "gates", "horses", "swords"),
    "school": ("desks", "pens", "maps", "globes", "bells", "chalk"),
    "kitchen": ("pots", "ovens", "spoons", "plates", "apples", "cakes"),
}
_PREPOSITIONS = ("near", "with", "beside")
_PRONOUN_PROB = 0.5    # chance that a sentence's subject is the protagonist's pronoun
_RELATIVE_PROB = 0.4   # chance that a noun phrase carries a relative clause (halved per level)
_SYLLABLES = ("ba", "ko", "mi", "ru", "te", "lo", "fi", "da", "ne", "su", "pa", "gu")
_FACTS_SEED = 7_919    # one table of facts for every seed: the task stays the same


class _World:
    """The difficulty knobs of the grammar corpus, and the tables they imply.

    nouns:  how many nouns: the first ten are English, more are made of two syllables ("bako",
            plural "bakos"); a larger vocabulary is more to learn.
    depth:  how deeply relative clauses nest; agreement across a deeper clause is harder.
    events: (fewest, most) events per story: the story length. At most half the cycle of
            ``EVENTS`` (8), so that every event of a story's later part is less than half a day
            ahead of every event of its earlier part: which of two segments comes first is never
            ambiguous.
    topics: how many of ``TOPICS`` the stories are spread over. With 1 every story happens at the
            same place, and a segment of another story differs only in its events and protagonist.
    facts:  each noun does each transitive event to one fixed object (the baker always feeds the
            foxes): a table of nouns × transitive events that a model can only memorize. Facts are
            where capacity matters: a shared stack has fewer parameters to store them in.
    """

    def __init__(self, nouns=10, depth=2, events=(4, 8), topics=len(TOPICS), facts=False):
        most = len(_SYLLABLES) * (len(_SYLLABLES) - 1) + 10
        if not (is_int(nouns) and 10 <= nouns <= most):
            raise InvalidValue(f"nouns must be an int in [10, {most}], got {nouns!r}")
        if not (is_int(depth) and depth >= 0):
            raise InvalidValue(f"depth must be an int >= 0, got {depth!r}")
        if not (is_int(topics) and 1 <= topics <= len(TOPICS)):
            raise InvalidValue(f"topics must be an int in [1, {len(TOPICS)}], got {topics!r}")
        low, high = events
        if not 1 <= low <= high <= len(EVENTS) // 2:
            raise InvalidValue(f"events must be (fewest, most) with 1 <= fewest <= most <= {len(EVENTS) // 2} "
                               f"(half the day's cycle), got {events!r}")
        made = [a + b for a in _SYLLABLES for b in _SYLLABLES if a != b][:nouns - 10]
        self.nouns = _NOUNS + tuple(made)
        self.plural_nouns = _PLURAL_NOUNS + tuple(w + "s" for w in made)
        self.depth, self.events = depth, (low, high)
        self.places = list(TOPICS.values())[:topics]
        table = np.random.default_rng(_FACTS_SEED)
        self.facts = ({(n, e): int(table.integers(nouns)) for n in range(nouns)
                       for e, (_, _, transitive) in enumerate(EVENTS) if transitive} if facts else None)


def _noun_phrase(rng, world, plural, depth=0, index=None):
    """"the N", sometimes followed by a relative clause about it; N is the noun at ``index``, or
    a random one."""
    nouns = world.plural_nouns if plural else world.nouns
    index = rng.integers(len(nouns)) if index is None else index
    return ["the", nouns[index]] + _relative_clause(rng, world, plural, depth)


def _relative_clause(rng, world, head_plural, depth):
    """Nothing, or a clause whose verb agrees with its own subject: subject relative "that chases
    the cats" (the verb agrees with the head noun) or object relative "that the cats chase"."""
    if depth >= world.depth or rng.random() >= _RELATIVE_PROB / 2 ** depth:
        return []
    verb = _RELATIVE_VERBS[rng.integers(len(_RELATIVE_VERBS))]
    inner_plural = bool(rng.random() < 0.5)
    inner = _noun_phrase(rng, world, inner_plural, depth + 1)
    if rng.random() < 0.5:
        return ["that", verb[int(head_plural)], *inner]
    return ["that", *inner, verb[int(inner_plural)]]


def _sentence(rng, world, who, plural, pronoun, event, things):
    """One sentence, built the same way wherever it stands in its story: the protagonist (noun
    ``who``, or its pronoun) as subject, the event's verb phrase agreeing with it, the event's
    object if it takes one, and one of the place's ``things``:
    "The dog that the cats chase feeds the girls near the nets."."""
    words = [pronoun] if rng.random() < _PRONOUN_PROB else _noun_phrase(rng, world, plural, index=who)
    singular_phrase, plural_phrase, transitive = EVENTS[event]
    words.append(plural_phrase if plural else singular_phrase)
    if transitive and world.facts is not None:       # the fixed object: a fact to remember
        words += ["the", world.plural_nouns[world.facts[(who, event)]]]
    elif transitive:
        words += _noun_phrase(rng, world, bool(rng.random() < 0.5))
    words += [_PREPOSITIONS[rng.integers(len(_PREPOSITIONS))], "the", things[rng.integers(len(things))]]
    sentence = " ".join(words) + "."
    return sentence[0].upper() + sentence[1:]


def _story(rng, world, held_out):
    """One document: a protagonist at one place, living through consecutive events of the day's
    cycle from a random start. Each sentence is drawn from the held-out part of all sentences
    (``held_out``) or from the rest (``holdout.draw``)."""
    plural = bool(rng.random() < 0.5)
    who = int(rng.integers(len(world.nouns)))
    pronoun = "they" if plural else ("he", "she")[rng.integers(2)]
    things = world.places[rng.integers(len(world.places))]
    first = int(rng.integers(len(EVENTS)))                 # anywhere on the cycle
    n_events = int(rng.integers(world.events[0], world.events[1] + 1))
    return [holdout.draw(lambda rng: _sentence(rng, world, who, plural, pronoun, event, things), rng, held_out)
            for event in (np.arange(first, first + n_events) % len(EVENTS)).tolist()]


def grammar_corpus(n_documents, seed=0, **knobs):
    """``n_documents`` synthetic stories, deterministic for a given ``seed``; ``knobs`` set the
    difficulty (``nouns``, ``depth``, ``events``, ``topics``, ``facts``; see ``_World``), by default
    ten nouns, clauses two deep, 4 to 8 events, all six topics and no facts.

    Each story follows one protagonist (singular or plural) at one place through consecutive
    events of ``EVENTS``, a day's cycle entered anywhere, so swapping two segments of a story is
    detectable (the later one's events follow the earlier one's) while no single sentence says
    where in its story it stands: sentence-order prediction is learnable, and only by comparing the
    segments. Verbs agree in number with their subject, also across nested relative clauses ("The
    dog that the cats chase wakes up near the boats."), a classic probe of what masked-word
    prediction learns.

    The stories that ``split_documents`` holds out (with its defaults, the split every run makes)
    are written from the held-out tenth of all possible sentences (``holdout.is_held_out``), the
    others from the rest: no held-out story has a sentence of a training story, by construction.
    """
    if n_documents < 1:
        raise InvalidValue(f"n_documents must be at least 1, got {n_documents}")
    world = _World(**knobs)
    rng = np.random.default_rng(seed)
    held_out = holdout.held_out_documents(n_documents) if n_documents > 1 else set()
    return [_story(rng, world, i in held_out) for i in range(n_documents)]
