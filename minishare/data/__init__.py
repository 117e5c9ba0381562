"""Host-side data for minishare: corpora, a BPE tokenizer, ALBERT pre-training examples (MLM with
SOP or NSP), toy sequence-to-sequence tasks and pointer forests. Everything here produces NumPy int64 arrays and
needs only NumPy and the standard library; the model side moves them to its backend. Held-out
items (sentences, problems, forests) are ones no training stream can draw (``holdout``).

``PIPELINE_VERSION`` names this version of what the data code produces (corpora, tokenizer,
examples, batches): the reproduction's caches are keyed by it, so a change here that alters any
example must raise it, and every cached result made before is then made again."""
from minishare.data.corpus import (EVENTS, TOPICS, default_corpus, grammar_corpus, load_text,
                                   split_sentences)
from minishare.data.forest import PointerForest, follow_to_root
from minishare.data.pretraining import (IGNORE_INDEX, PretrainingData, collate, mask_tokens,
                                        ngram_probabilities, segment_pairs, select_spans,
                                        split_documents, truncate_pair)
from minishare.data.seq2seq import (BOS_ID, EOS_ID, PAD_ID, AdditionTask, CopyTask, PointerTask,
                                    ReverseTask, ScanTask, SortTask, get_task)
from minishare.data.tokenizer import SPECIAL_TOKENS, Tokenizer, pretokenize

PIPELINE_VERSION = 3
# What each version changed, for the line that says a committed result was made before it.
PIPELINE_CHANGES = {3: "held-out sentences, problems and forests apart from training by construction, and a "
                       "grammar corpus whose sentence order no cue-only rule reads, with topics for NSP"}

__all__ = [
    "PIPELINE_CHANGES",
    "PIPELINE_VERSION",
    "default_corpus", "grammar_corpus", "load_text", "split_sentences", "EVENTS", "TOPICS",
    "Tokenizer", "SPECIAL_TOKENS", "pretokenize",
    "PretrainingData", "split_documents", "segment_pairs", "select_spans", "mask_tokens",
    "ngram_probabilities", "collate", "truncate_pair", "IGNORE_INDEX",
    "get_task", "CopyTask", "ReverseTask", "SortTask", "AdditionTask", "ScanTask", "PointerTask",
    "PAD_ID", "BOS_ID", "EOS_ID", "PointerForest", "follow_to_root",
]
