"""The embedded corpora: the default corpus from CPython's own documentation, load_text's errors,
and the grammar corpus checked by a small parser written here, independently of the generator."""
import pytest

from minishare.data.corpus import default_corpus, grammar_corpus, load_text, split_sentences


# ---------------------------------------------------------------- default corpus

def test_default_corpus_is_deterministic_and_a_fresh_copy():
    first = default_corpus()
    original = [list(document) for document in first]
    first[0].append("Changed by the caller.")
    assert default_corpus() == original


def test_default_corpus_has_a_useful_size():
    corpus = default_corpus()
    n_sentences = sum(len(document) for document in corpus)
    n_words = sum(len(sentence.split()) for document in corpus for sentence in document)
    assert len(corpus) >= 200
    assert n_sentences >= 2500
    assert n_words >= 40_000
    assert all(len(document) >= 2 for document in corpus)


def test_default_corpus_is_clean_prose():
    sentences = [sentence for document in default_corpus() for sentence in document]
    assert all(isinstance(s, str) and s == s.strip() and "  " not in s for s in sentences)
    assert all(s[-1] in '.!?)"”’' for s in sentences)
    assert all(len(s.split()) >= 3 for s in sentences)
    for markup in ('"', "*", "`", ">>>", "::=", "+---", "====", "\n"):
        assert not any(markup in s for s in sentences), markup
    # A sentence of the "if" topic, with pydoc's quotes around the keyword removed.
    assert "If all expressions are false, the suite of the else clause, if present, is executed." \
        in sentences


def test_split_sentences():
    assert split_sentences("It runs.  Then it\nstops! Does it? Yes.") == \
        ["It runs.", "Then it stops!", "Does it?", "Yes."]
    assert split_sentences("Use a list, e.g. Foo or bar. Done.") == \
        ["Use a list, e.g. Foo or bar.", "Done."]
    assert split_sentences("version 3.11 is out.") == ["version 3.11 is out."]


# ---------------------------------------------------------------- load_text

def test_load_text_reads_documents_from_a_file_and_a_folder(tmp_path):
    (tmp_path / "b.txt").write_text("Second file. It has one document.\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text("First one.\nStill first.\n\n\nAnother document here.\n",
                                    encoding="utf-8")
    (tmp_path / "notes.md").write_text("Not read.", encoding="utf-8")
    assert load_text(tmp_path / "a.txt") == [["First one.", "Still first."],
                                             ["Another document here."]]
    assert load_text(tmp_path) == [["First one.", "Still first."], ["Another document here."],
                                   ["Second file.", "It has one document."]]


def test_load_text_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        load_text(tmp_path / "missing.txt")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Café au lait.".encode("latin-1"))
    with pytest.raises(ValueError, match="latin.txt.*UTF-8"):
        load_text(latin)
    empty = tmp_path / "empty.txt"
    empty.write_text(" \n\n \n", encoding="utf-8")
    with pytest.raises(ValueError, match="empty.txt.*no text"):
        load_text(empty)
    folder = tmp_path / "nothing"
    folder.mkdir()
    with pytest.raises(ValueError, match="nothing.*no .txt"):
        load_text(folder)


# ---------------------------------------------------------------- grammar corpus

# The day's script as the test reads it: plural verb of each event, in temporal order.
SCRIPT = ["wake", "eat", "feed", "walk", "meet", "buy", "help", "go", "cook", "visit", "sing",
          "fall"]
TRANSITIVE = {"feed", "meet", "help", "visit"}
SINGULAR = {("goes" if verb == "go" else verb + "s"): verb for verb in SCRIPT}


def agrees(verb, plural):
    """In this grammar a singular present-tense verb ends in -s, a plural one does not."""
    return verb.endswith("s") != plural


def parse_noun_phrase(words, i, depth=0):
    """Parse "the N [that ...]" from words[i]; check each relative clause's agreement.
    Returns (plural, index after the phrase, deepest nesting)."""
    assert words[i] == "the", words
    plural = words[i + 1].endswith("s")   # cats, foxes; cat, fox
    j, deepest = i + 2, depth
    if j < len(words) and words[j] == "that":
        if words[j + 1] == "the":   # object relative: that the N V
            inner_plural, k, deepest = parse_noun_phrase(words, j + 1, depth + 1)
            assert agrees(words[k], inner_plural), words
            j = k + 1
        else:                       # subject relative: that V the N
            assert agrees(words[j + 1], plural), words
            _, j, deepest = parse_noun_phrase(words, j + 2, depth + 1)
    return plural, j, deepest


def parse_sentence(sentence):
    """Check a story sentence; return (event index in SCRIPT, deepest relative clause nesting)."""
    assert sentence[0].isupper() and sentence.endswith(".")
    words = sentence[:-1].lower().replace(",", "").split()
    if words[:2] == ["after", "that"]:
        words = words[2:]
    elif words[0] in ("then", "later"):
        words = words[1:]
    if words[0] in ("he", "she", "they"):
        plural, i, deepest = words[0] == "they", 1, 0
    else:
        plural, i, deepest = parse_noun_phrase(words, 0)
    verb = words[i]
    assert agrees(verb, plural), sentence
    event = SINGULAR.get(verb, verb)
    if event in TRANSITIVE:
        _, end, object_depth = parse_noun_phrase(words, i + 1)
        assert end == len(words), sentence
        deepest = max(deepest, object_depth)
    return SCRIPT.index(event), deepest


def test_grammar_corpus_is_deterministic_per_seed():
    assert grammar_corpus(20, seed=3) == grammar_corpus(20, seed=3)
    assert grammar_corpus(20, seed=3) != grammar_corpus(20, seed=4)
    with pytest.raises(ValueError, match="n_documents"):
        grammar_corpus(0)


def test_grammar_stories_agree_and_follow_the_script():
    depths = []
    for story in grammar_corpus(300, seed=0):
        assert 4 <= len(story) <= 8
        events = []
        for sentence in story:
            event, depth = parse_sentence(sentence)
            events.append(event)
            depths.append(depth)
        assert events == sorted(set(events)), story   # strictly in script order
    assert 0.1 < sum(d >= 1 for d in depths) / len(depths) < 0.5   # relative clauses are common
    assert max(depths) == 2                                         # and nest two deep


def test_grammar_parser_catches_a_disagreeing_verb():
    assert parse_sentence("The dog that the cats chase wakes up.") == (0, 1)
    with pytest.raises(AssertionError):
        parse_sentence("The dog that the cats chases wakes up.")
    with pytest.raises(AssertionError):
        parse_sentence("The dogs that chase the cat wakes up.")


def test_grammar_knobs_facts_topics_and_vocabulary():
    import re as _re
    stories = grammar_corpus(400, seed=2, nouns=40, topics=4, facts=True)
    # facts: a protagonist's transitive event always has the same object, whatever the story
    seen = {}
    for story in stories:
        first = story[0].split()
        noun = first[1]                                          # "The <noun> ..." opens every story
        for sentence in story:      # the protagonist (or its pronoun) right before the verb
            m = _re.match(r"(?:(?:Then|Later|After that), )?(?:[Tt]he \w+|[Tt]hey|[Hh]e|[Ss]he) "
                          r"(feeds?|meets?|helps?|visits?) the (\w+)", sentence)
            if m:
                key = (noun.rstrip("s"), m.group(1).rstrip("s"))
                assert seen.setdefault(key, m.group(2)) == m.group(2), (key, sentence)
    assert len(seen) > 50
    # topics: a story happens at one place, named at least in its first sentence
    for story in stories:
        places = set(_re.findall(r"at the (\w+)\.", " ".join(story)))
        assert len(places) == 1 and " at the " in story[0]
    # vocabulary: 40 nouns (ten English, thirty made of syllables) can open a story
    singular = {s[0].split()[1] for s in stories if not s[0].split()[1].endswith("s")}
    assert 30 <= len(singular) <= 40
    assert grammar_corpus(5, seed=1) == grammar_corpus(5, seed=1, nouns=10, depth=2, events=(4, 8))


@pytest.mark.parametrize("knobs, message", [(dict(nouns=5), "nouns"), (dict(depth=-1), "depth"),
                                            (dict(topics=99), "topics"), (dict(events=(5, 3)), "events")])
def test_grammar_knobs_are_checked(knobs, message):
    with pytest.raises(ValueError, match=message):
        grammar_corpus(3, **knobs)
