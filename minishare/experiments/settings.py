"""The sizes of the ``reproduce`` experiments: ``--quick`` (CI, a few minutes on 2 cores) and the
full run (under an hour on 2 cores). Every model is tiny; what the figures show is the shape of
the papers' effects, not their scale."""
import dataclasses


@dataclasses.dataclass(frozen=True)
class Settings:
    quick: bool
    pretrain_steps: int          # ALBERT MLM + SOP/NSP runs
    batch_size: int
    seq_len: int
    vocab_size: int
    albert: dict                 # overrides of the albert-tiny preset
    seq2seq_task: str
    seq2seq_steps: int
    seq2seq: dict                # TransformerConfig fields of the Vanilla model
    eval_every: int
    depths: tuple                # the depth sweep of the memory and time experiment
    timing_repeats: int
    # Takase & Kiyono ("takase") and the language model ("lm"); the numbers are argued below
    takase_task: str             # toy seq2seq task of the encoder-decoder
    takase_steps: int            # updates of every run (the paper compares at equal updates)
    takase_batch_size: int
    takase_lr: float
    takase_evals: int            # held-out evaluations per run (the equal-time reading needs several)
    takase_model: dict           # Vanilla's width: TransformerConfig fields (H, heads, FFN)
    takase_layers: int           # n: Vanilla M = N = n; strategies M = n at N = 2n, and N = 3n (efficiency)
    takase_norms: tuple          # LN positions: Post-LN (the paper's main setting), then Pre-LN
    lm_steps: int
    lm_batch_size: int
    lm_seq_len: int
    lm_lr: float
    lm_evals: int
    lm_model: dict               # Vanilla LM's width (decoder-only)
    lm_layers: int               # n: Vanilla M = N = n, strategies M = n at N = 2n
    lm_norm: str                 # LN position of the LM runs

    def key(self):
        """What a cached result depends on: rerunning with other settings retrains."""
        return dataclasses.asdict(self)


# Quick: every experiment runs, on small models and few steps (about a minute on 2 cores); the
# seq2seq task is "reverse", whose short targets keep greedy decoding in evaluation cheap.
QUICK = Settings(quick=True, pretrain_steps=80, batch_size=16, seq_len=32, vocab_size=1000,
                 albert=dict(hidden_size=64, embedding_size=32, num_attention_heads=2,
                             intermediate_size=256, num_hidden_layers=4),
                 seq2seq_task="reverse", seq2seq_steps=100,
                 seq2seq=dict(hidden_size=32, num_attention_heads=2, intermediate_size=128,
                              num_hidden_layers=2, norm_position="pre"),
                 eval_every=20, depths=(2, 4, 8), timing_repeats=3,
                 takase_task="reverse", takase_steps=30, takase_batch_size=16, takase_lr=3e-3, takase_evals=3,
                 takase_model=dict(hidden_size=16, num_attention_heads=2, intermediate_size=64),
                 takase_layers=2, takase_norms=("post", "pre"),
                 lm_steps=20, lm_batch_size=8, lm_seq_len=32, lm_lr=3e-3, lm_evals=2,
                 lm_model=dict(hidden_size=16, num_attention_heads=2, intermediate_size=64),
                 lm_layers=2, lm_norm="pre")

# The albert-tiny preset (E = 32, H = 128, N = 4) with V = 1,000: in 1,200 steps it gets below the
# unigram baseline on held-out MLM and well above chance on SOP. SCAN at 600 steps leaves the
# seq2seq models mid-way (about 90% exact match for Vanilla), where differences can show.
FULL = Settings(quick=False, pretrain_steps=1200, batch_size=32, seq_len=64, vocab_size=1000,
                albert=dict(hidden_size=128, embedding_size=32, num_attention_heads=2,
                            intermediate_size=512, num_hidden_layers=4),
                seq2seq_task="scan", seq2seq_steps=600,
                seq2seq=dict(hidden_size=64, num_attention_heads=4, intermediate_size=256,
                             num_hidden_layers=3, norm_position="pre"),
                eval_every=200, depths=(2, 4, 8, 12), timing_repeats=5,
                takase_task="reverse", takase_steps=400, takase_batch_size=32, takase_lr=3e-3, takase_evals=8,
                takase_model=dict(hidden_size=32, num_attention_heads=4, intermediate_size=128),
                takase_layers=6, takase_norms=("post", "pre"),
                lm_steps=400, lm_batch_size=16, lm_seq_len=64, lm_lr=3e-3, lm_evals=4,
                lm_model=dict(hidden_size=64, num_attention_heads=4, intermediate_size=256),
                lm_layers=3, lm_norm="pre")
