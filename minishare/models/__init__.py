"""Models: ALBERT/BERT for pre-training (in and out of Hugging Face's layout: ``hub``), an encoder-decoder, a decoder-only language model, a looped token classifier and a recursive one whose tokens choose their depth."""
from minishare.models.albert import AlbertForPreTraining, AlbertMLMHead, AlbertModel
from minishare.models.bert import BertForPreTraining
from minishare.models.config import AlbertConfig, TransformerConfig
from minishare.models.looped import LoopedConfig, LoopedForTokenClassification
from minishare.models.mor import RecursionConfig, RecursiveForTokenClassification
from minishare.models.outputs import ModelOutput
from minishare.models.presets import PRESETS
from minishare.models.seq2seq import DecoderLM, EncoderDecoderModel
