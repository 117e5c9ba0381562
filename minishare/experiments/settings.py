"""The sizes of the ``reproduce`` experiments: ``--quick`` (CI, a few minutes on 2 cores) and the
full run (under an hour on 2 cores with ``--jobs 2``). Every model is tiny; what the figures show
is the shape of the papers' effects, not their scale. Every training comparison runs once per seed
in ``seeds``, and the report gives mean and spread over them (``stats``)."""
import dataclasses


@dataclasses.dataclass(frozen=True)
class Settings:
    quick: bool
    seeds: tuple                 # every training comparison runs once per seed
    pretrain_steps: int          # ALBERT MLM + SOP/NSP runs
    pretrain_lr: float           # peak AdamW learning rate of the ALBERT runs
    batch_size: int
    seq_len: int
    vocab_size: int
    albert: dict                 # overrides of the albert-tiny preset (the sharing variants)
    embedding_sizes: tuple       # E of the embedding-size sweep, at the H of ``albert``
    layerwise: dict              # overrides for ALBERT Figure 1: N >= 12, E of the ALBERT-style model
    seq2seq: dict                # TransformerConfig fields of the Vanilla model
    eval_every: int
    depths: tuple                # the depth sweep of the memory and time experiment
    timing_repeats: int
    # analysis experiments (FLOPs check, gradient norms by layer position)
    flops_models: tuple          # (H, N) of the tiny ALBERTs whose step time is set against their FLOPs
    flops_batch: int             # batch size of that timing (sequence length: seq_len)
    gradnorm_model: dict         # albert-tiny overrides of the gradient-norm models, N included
    gradnorm_unique: int         # M of Cycle (rev) in the gradient-norm comparison
    gradnorm_steps: tuple        # training steps at which the gradient norms are measured (0: init)
    gradnorm_batch: tuple        # (batch size, sequence length) of those runs
    act_task: str                # toy seq2seq task of the Universal Transformer with ACT
    act_steps: int               # its training steps
    act: dict                    # its TransformerConfig fields (sharing "universal", act=True)
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
    # looped depth ("looped", chapter 14): pointer forests (data.forest), three arms per seed
    looped_forest: dict          # PointerForest fields: n_symbols, n_chains
    looped_model: dict           # LoopedConfig width: hidden_size, num_attention_heads, intermediate_size
    looped_train_depths: tuple   # forest depths of the training batches
    looped_test_depth: int       # depth of the test forests (nodes at every depth 0..it)
    looped_iterations: tuple     # (r̄, k): mean iterations in training, the last k backpropagated
    looped_max_iterations: int   # test-time r from 1 to this
    looped_steps: int
    looped_batch_size: int
    looped_lr: float
    looped_test_forests: int
    # tokens that choose their depth ("mor", chapter 16): pointer forests, fixed depths, ACT, MoR
    mor_forest: dict             # PointerForest fields: n_symbols, n_chains
    mor_depth: int               # depth of every forest, training and test (nodes of depth 0..it)
    mor_model: dict              # RecursionConfig width: hidden_size, num_attention_heads, intermediate_size
    mor_capacities: tuple        # MoR's c_r, one per recursion (N_r of them); Σ c_r T must be an integer r
    mor_act_weight: float        # ACT's ponder cost τ (its mean passes are measured, not set)
    mor_steps: int
    mor_batch_size: int
    mor_lr: float
    mor_test_forests: int

    def key(self):
        """What a cached result depends on: rerunning with other settings retrains."""
        return dataclasses.asdict(self)


# Quick: every experiment runs, on small models and few steps; the seq2seq task is "reverse", whose
# short targets keep greedy decoding in evaluation cheap. Two seeds: the least that has a spread;
# the numbers are not meant to separate anything. The ALBERT runs (30 steps of H = 32, N = 2) cost
# less than their setup (tokenizer and examples, about 2 CPU-s each).
QUICK = Settings(quick=True, seeds=(0, 1), pretrain_steps=30, pretrain_lr=3e-3, batch_size=8, seq_len=32,
                 vocab_size=1000,
                 albert=dict(hidden_size=32, embedding_size=16, num_attention_heads=2,
                             intermediate_size=64, num_hidden_layers=2),
                 embedding_sizes=(8, 16, 32),
                 layerwise=dict(num_hidden_layers=12, embedding_size=8),
                 seq2seq=dict(hidden_size=32, num_attention_heads=2, intermediate_size=128,
                              num_hidden_layers=2, norm_position="pre"),
                 eval_every=10, depths=(2, 4, 8), timing_repeats=3,
                 flops_models=((32, 2), (64, 2), (64, 4)), flops_batch=4,
                 gradnorm_model=dict(hidden_size=32, embedding_size=16, num_attention_heads=2,
                                     intermediate_size=128, num_hidden_layers=6),
                 gradnorm_unique=3, gradnorm_steps=(0, 5), gradnorm_batch=(8, 16),
                 act_task="copy", act_steps=30,
                 act=dict(hidden_size=16, num_attention_heads=2, intermediate_size=32, num_hidden_layers=3,
                          norm_position="pre", sharing="universal", timestep_signal=True, act=True,
                          act_loss_weight=0.001),
                 takase_task="reverse", takase_steps=30, takase_batch_size=16, takase_lr=3e-3, takase_evals=3,
                 takase_model=dict(hidden_size=16, num_attention_heads=2, intermediate_size=64),
                 takase_layers=2, takase_norms=("post", "pre"),
                 lm_steps=20, lm_batch_size=8, lm_seq_len=32, lm_lr=3e-3, lm_evals=2,
                 lm_model=dict(hidden_size=16, num_attention_heads=2, intermediate_size=64),
                 lm_layers=2, lm_norm="pre",
                 looped_forest=dict(n_symbols=12, n_chains=2), looped_train_depths=(1, 2), looped_test_depth=4,
                 looped_model=dict(hidden_size=16, num_attention_heads=2, intermediate_size=32),
                 looped_iterations=(3, 2), looped_max_iterations=6, looped_steps=15, looped_batch_size=8,
                 looped_lr=3e-3, looped_test_forests=16,
                 mor_forest=dict(n_symbols=12, n_chains=2), mor_depth=3,
                 mor_model=dict(hidden_size=16, num_attention_heads=2, intermediate_size=32),
                 mor_capacities=(1, 0.5, 0.25, 0.25), mor_act_weight=0.01, mor_steps=10, mor_batch_size=8,
                 mor_lr=3e-3, mor_test_forests=16)

# Full. The ALBERT numbers come from pilot runs on the 2 shared cores (CPU seconds measured with
# time.process_time, so other processes on the machine do not inflate them):
# - H = 64, E = 32, N = 4, FFN 256, batch 32 × 64 tokens: about 0.11 CPU-s per step (H = 128, the
#   old setting, cost 2.5× as much); 36 batches make an epoch of the embedded corpus, so 500 steps
#   see it about 14 times (the regularizer experiment needs repeated data).
# - lr 3e-3 (peak, linear warm-up and decay): at 400 steps the held-out MLM loss was 5.94 against
#   6.03 with lr 1e-3 (unigram baseline 6.09), i.e. 1e-3 had barely left the unigram solution.
# - 500 steps: the budget. Runs of this part: 12 sharing variants + 3 NSP + 12 E sweep + 6 untied
#   (N = 4, about 0.11 × 500 + 3 s setup each) and 6 Figure 1 runs (N = 12, about 0.3 CPU-s per
#   step): about 33 × 58 + 6 × 153 = 2,800 CPU-s, plus about 60 s of evaluation in run(), within
#   the 3,600 core-seconds of this part (about 25 minutes of wall clock with --jobs 2).
# - E in {16, 32, 64} at H = 64: ALBERT's Table 3 sweeps E up to H; 32 is the variants' own E,
#   so its runs are shared with albert_sharing. Figure 1: N = 12 (the least depth the issue asks
#   for), ALBERT-style E = 16 (E/H = 1/4).
FULL = Settings(quick=False, seeds=(0, 1, 2), pretrain_steps=500, pretrain_lr=3e-3, batch_size=32, seq_len=64,
                vocab_size=1000,
                albert=dict(hidden_size=64, embedding_size=32, num_attention_heads=2,
                            intermediate_size=256, num_hidden_layers=4),
                embedding_sizes=(16, 32, 64),
                layerwise=dict(num_hidden_layers=12, embedding_size=16),
                seq2seq=dict(hidden_size=64, num_attention_heads=4, intermediate_size=256,
                             num_hidden_layers=3, norm_position="pre"),
                eval_every=100, depths=(2, 4, 8, 12), timing_repeats=9,
                flops_models=((64, 2), (128, 2), (128, 6), (256, 4)), flops_batch=8,
                gradnorm_model=dict(hidden_size=64, embedding_size=32, num_attention_heads=2,
                                    intermediate_size=256, num_hidden_layers=12),
                gradnorm_unique=4, gradnorm_steps=(0, 10, 100), gradnorm_batch=(16, 32),
                # ACT pilots (600 steps, seed 0): at H = 32 the Universal Transformer with the timestep
                # signal learned neither reverse, addition nor copy; at H = 64 it copies (exact match 0.91)
                act_task="copy", act_steps=800,
                act=dict(hidden_size=64, num_attention_heads=4, intermediate_size=128, num_hidden_layers=4,
                         norm_position="pre", sharing="universal", timestep_signal=True, act=True,
                         act_loss_weight=0.001),
                # Takase & Kiyono, from pilots on 2 shared cores (seed 0; CPU-s by time.process_time):
                # - "reverse" (batch 32, lr 3e-3, 400 steps) at H = 32 has a plateau at held-out loss
                #   1.96 (the length is learnt, the letters not): Vanilla M=N=6 Post-LN left it (0.65,
                #   71% exact), the widened Universal (H = 80) too (0.02, 100%), but every shared stack
                #   stayed on it: Cycle (rev) M=6/N=12 Post-LN 1.94 (lr 3e-3), 1.97 (lr 1e-3), 1.93
                #   (warm-up 200), Pre-LN 1.96; M=3/N=6 and M=3/N=9 1.92-1.96; "copy" the same;
                #   "addition" stays near 1.6 for all. So H = 64 (the width that left the plateau was
                #   the widened one) and n = 3 (M = 6/N = 18 costs 3x as much; M = 3/N = 9 keeps the
                #   paper's N = 3M of the efficiency comparison). At H = 64, Cycle M=3/N=6 left the
                #   plateau: Post-LN 0.51 (step 200), 0.02 (400, 100% exact); Pre-LN 1.98 (200), 1.66
                #   (400): mid-way, where the two LN positions and the methods can differ.
                # - cost: Cycle M=3/N=6 at H = 64, 30 CPU-s for 400 steps (4 evaluations); M=3/N=9
                #   about 1.4x that. 2 LN x 8 methods x 3 seeds: about 1,650 CPU-s; the LM about 500;
                #   step timing in run() about 70. 5 evaluations (every 80 steps) keep greedy decoding
                #   cheap and still give the equal-time reading some resolution.
                # - LM: Vanilla M=N=3, H = 64, batch 16 x 64 tokens: 29 CPU-s for 400 steps,
                #   perplexity 450 (step 100), 238 (300), 189 (400); widened Universal (H = 96) 35 s,
                #   178 at 400: mid-way, still falling. 300 steps to fit the budget.
                takase_task="reverse", takase_steps=400, takase_batch_size=32, takase_lr=3e-3, takase_evals=5,
                takase_model=dict(hidden_size=64, num_attention_heads=4, intermediate_size=256),
                takase_layers=3, takase_norms=("post", "pre"),
                lm_steps=300, lm_batch_size=16, lm_seq_len=64, lm_lr=3e-3, lm_evals=6,
                lm_model=dict(hidden_size=64, num_attention_heads=4, intermediate_size=256),
                lm_layers=3, lm_norm="pre",
                # looped, from one pilot (seed 0, the looped arm, 2 shared cores): 0.07 CPU-s per step;
                # after 800 steps depths up to 3 were solved at r = 1, depth 4 (the deepest trained)
                # rose from 0.01 at r = 1 to 0.82 at r = 7, and depths 5-7 (beyond training) rose
                # from 0.02 to 0.43, 0.32, 0.24 at r = 9-11, then fell slowly (0.36, 0.28, 0.23 at
                # r = 16), still rising with steps. 1,500 steps; the same-compute arm (7 layers,
                # full backpropagation) costs about twice the looped one: about 20 CPU-minutes in all.
                looped_forest=dict(n_symbols=32, n_chains=4), looped_train_depths=(1, 2, 3, 4), looped_test_depth=7,
                looped_model=dict(hidden_size=64, num_attention_heads=2, intermediate_size=128),
                looped_iterations=(6, 3), looped_max_iterations=24, looped_steps=1500, looped_batch_size=32,
                looped_lr=3e-3, looped_test_forests=128,
                mor_forest=dict(n_symbols=32, n_chains=4), mor_depth=5,
                mor_model=dict(hidden_size=32, num_attention_heads=2, intermediate_size=64),
                mor_capacities=(1, 0.5, 0.25, 0.25), mor_act_weight=0.01, mor_steps=600, mor_batch_size=32,
                mor_lr=3e-3, mor_test_forests=128)
