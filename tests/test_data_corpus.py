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

# The day's cycle as the test reads it: the plural verb phrase of each event, in temporal order
# (after the last comes the first again), and the places' things, written out here.
SCRIPT = ["wake up", "eat breakfast", "feed", "walk to work", "meet", "start working", "call", "eat lunch",
          "help", "buy some bread", "go home", "visit", "cook dinner", "sing a song", "read a letter",
          "fall asleep"]
TRANSITIVE = {"feed", "meet", "call", "help", "visit"}
PLACES = [{"boats", "nets", "fish", "sails", "shells", "ropes"}, {"hens", "cows", "goats", "barns", "tractors", "fences"},
          {"trees", "owls", "mushrooms", "logs", "ferns", "deer"}, {"towers", "knights", "flags", "gates", "horses", "swords"},
          {"desks", "pens", "maps", "globes", "bells", "chalk"}, {"pots", "ovens", "spoons", "plates", "apples", "cakes"}]


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
    """Check a story sentence; return a dict: event (index in SCRIPT), depth (deepest relative
    clause), subject (the noun, or None for a pronoun), object (the noun, or None) and thing (the
    place's thing it ends with)."""
    assert sentence[0].isupper() and sentence.endswith(".")
    words = sentence[:-1].lower().split()
    if words[0] in ("he", "she", "they"):
        plural, i, deepest, subject = words[0] == "they", 1, 0, None
    else:
        plural, i, deepest = parse_noun_phrase(words, 0)
        subject = words[1]
    verb = words[i]
    assert agrees(verb, plural), sentence
    base = "go" if verb == "goes" else verb[:-1] if verb.endswith("s") else verb
    event = next(e for e, phrase in enumerate(SCRIPT)
                 if phrase.split() == [base, *words[i + 1:i + len(phrase.split())]])
    end, obj = i + len(SCRIPT[event].split()), None
    if SCRIPT[event] in TRANSITIVE:
        _, object_end, object_depth = parse_noun_phrase(words, end)
        obj, end, deepest = words[end + 1], object_end, max(deepest, object_depth)
    assert words[end:end + 2] in (["near", "the"], ["with", "the"], ["beside", "the"]) and end + 3 == len(words), \
        sentence
    return {"event": event, "depth": deepest, "subject": subject, "object": obj, "thing": words[-1]}


def test_grammar_corpus_is_deterministic_per_seed():
    assert grammar_corpus(20, seed=3) == grammar_corpus(20, seed=3)
    assert grammar_corpus(20, seed=3) != grammar_corpus(20, seed=4)
    with pytest.raises(ValueError, match="n_documents"):
        grammar_corpus(0)


def test_grammar_stories_agree_follow_the_cycle_and_keep_to_one_place():
    depths, first_events, places = [], [], []
    for story in grammar_corpus(600, seed=0):
        assert 4 <= len(story) <= 8
        parsed = [parse_sentence(sentence) for sentence in story]
        events = [p["event"] for p in parsed]
        assert all((b - a) % len(SCRIPT) == 1 for a, b in zip(events, events[1:])), story   # consecutive
        first_events.append(events[0])
        depths += [p["depth"] for p in parsed]
        place = [i for i, things in enumerate(PLACES) if {p["thing"] for p in parsed} <= things]
        assert len(place) == 1, story
        places += place
    assert 0.1 < sum(d >= 1 for d in depths) / len(depths) < 0.6   # relative clauses are common
    assert max(depths) == 2                                         # and nest two deep
    # a story enters the cycle anywhere (each start expected 600 / 16 = 37.5 times), at any place
    assert all(20 <= first_events.count(e) <= 60 for e in range(len(SCRIPT))), first_events
    assert all(60 <= places.count(p) <= 140 for p in range(len(PLACES)))


def test_a_sentence_looks_the_same_wherever_it_stands():
    # The old corpus opened every story with "The <noun>" and used pronouns and "Then," later only.
    stories = grammar_corpus(1000, seed=1)
    for position in (0, 1, 3):
        at = [story[position].split()[0] for story in stories]
        pronouns = sum(word in ("He", "She", "They") for word in at) / len(at)
        assert 0.44 < pronouns < 0.56, (position, pronouns)                # _PRONOUN_PROB = 0.5
        assert set(at) <= {"He", "She", "They", "The"}


def test_grammar_parser_catches_a_disagreeing_verb():
    assert parse_sentence("The dog that the cats chase wakes up near the boats.")["depth"] == 1
    with pytest.raises(AssertionError):
        parse_sentence("The dog that the cats chases wakes up near the boats.")
    with pytest.raises(AssertionError):
        parse_sentence("The dogs that chase the cat wakes up near the boats.")
    with pytest.raises(AssertionError):
        parse_sentence("The dogs wake up.")   # no place


def singular(noun):
    return noun[:-2] if noun.endswith("xes") else noun.removesuffix("s")   # foxes, cats, bakos


def test_grammar_knobs_facts_topics_and_vocabulary():
    stories = grammar_corpus(400, seed=2, nouns=40, topics=2, facts=True)
    # facts: a protagonist's transitive event always has the same object, whatever the story
    seen, protagonists = {}, set()
    for story in stories:
        parsed = [parse_sentence(sentence) for sentence in story]
        nouns = {singular(p["subject"]) for p in parsed if p["subject"]}
        assert len(nouns) <= 1, story        # one protagonist, named or a pronoun
        protagonists |= nouns
        for p in parsed:
            if p["object"] and nouns:
                key = (*nouns, p["event"])
                assert seen.setdefault(key, p["object"]) == p["object"], (key, story)
    assert len(seen) > 50
    # topics: two places' things only
    things = {sentence[:-1].split()[-1] for story in stories for sentence in story}
    assert things == PLACES[0] | PLACES[1]
    # vocabulary: 40 nouns (ten English, thirty made of syllables) play the protagonist
    assert 30 <= len(protagonists) <= 40
    assert grammar_corpus(5, seed=1) == grammar_corpus(5, seed=1, nouns=10, depth=2, events=(4, 8), topics=6)


@pytest.mark.parametrize("knobs, message", [(dict(nouns=5), "nouns"), (dict(depth=-1), "depth"),
                                            (dict(topics=99), "topics"), (dict(topics=0), "topics"),
                                            (dict(events=(5, 3)), "events"), (dict(events=(4, 9)), "half")])
def test_grammar_knobs_are_checked(knobs, message):
    with pytest.raises(ValueError, match=message):
        grammar_corpus(3, **knobs)
