"""What an identifier's words suggest: the name heuristics, in one place.

A name is weak evidence. It may keep a rule quiet (a function named `update_ema` writes parameters on
purpose) or tip a value the code already makes likely; it is never on its own the reason for a finding.
Matching is on whole words: `update_EMA_model` has the words update, ema, model; `schema` has no word
`ema` and `dispatch` no word `patch`. Each heuristic lists cases that must and must not match
(tests/analysis/test_names.py checks them all).
"""
from __future__ import annotations

import functools
import re
from typing import Iterable, Optional

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b|_)|[A-Z]?[a-z]+|[A-Z]+")


@functools.lru_cache(maxsize=8192)  # rules ask about the same few names over and over
def words(identifier: Optional[str]) -> tuple[str, ...]:
    """`_init_weights` -> (init, weights); `emaUpdate` -> (ema, update); `QNet2` -> (q, net); digits dropped."""
    if not identifier:
        return ()
    return tuple(w.lower() for w in _WORD.findall(identifier))


class Heuristic:
    """Matches an identifier by its words: any of `anywhere`, a `last` word (the head noun: `loss_scale_value`
    is a value, not a loss), a `first` word, a word starting with one of `prefixes`, a run of words in
    `phrases`, or the whole name (lowercased) in `whole`."""

    def __init__(self, anywhere: Iterable[str] = (), last: Iterable[str] = (), first: Iterable[str] = (),
                 prefixes: Iterable[str] = (), phrases: Iterable[str] = (), whole: Iterable[str] = (), must=(),
                 must_not=()):
        self.anywhere, self.last, self.first = frozenset(anywhere), frozenset(last), frozenset(first)
        self.whole = frozenset(whole)
        self.prefixes = tuple(prefixes)
        self.phrases = tuple(tuple(p.split()) for p in phrases)
        self.must, self.must_not = tuple(must), tuple(must_not)
        self._seen: dict = {}

    def __call__(self, identifier: Optional[str]) -> bool:
        if identifier not in self._seen:
            if len(self._seen) > 8192:
                self._seen.clear()
            self._seen[identifier] = self._match(identifier)
        return self._seen[identifier]

    def _match(self, identifier: Optional[str]) -> bool:
        ws = words(identifier)
        if not ws:
            return False
        if identifier.lower() in self.whole:
            return True
        if ws[-1] in self.last or ws[0] in self.first or any(w in self.anywhere for w in ws):
            return True
        if self.prefixes and any(w.startswith(self.prefixes) for w in ws):
            return True
        return any(ws[i:i + len(p)] == p for p in self.phrases for i in range(len(ws) - len(p) + 1))


# Functions whose job is to write parameters, gradients or optimizer / EMA state on purpose.
PARAM_UPDATE_FUNC = Heuristic(
    anywhere="""init initialize initialise initialization reset build fuse fused merge convert load pretrained
    resize ema momentum polyak swa average averaged averaging step update optimize optimise optimizer
    optimiser clip clipping prune pruning tie tied sync synchronize broadcast allreduce setup prepare patch
    surgery transfer""".split(),
    prefixes=("reinit", "quantiz", "quantis"),
    phrases=["copy param", "copy params", "copy parameters", "weight norm", "normalize weight", "zero grad",
             "all reduce"],
    must=["__init__", "_init_weights", "reset_parameters", "update_ema", "emaUpdate", "soft_update", "train_step",
          "step", "fuse_conv_bn", "load_pretrained", "zero_grad", "all_reduce", "quantize_model", "patch_model"],
    must_not=["schema_activation", "dispatch", "forward", "masked_activation", "compute_stats", "training_loop"],
)
# The last word of a name that holds a module (`model`, `q_net`, `ema_model`, `encoders`).
MODULE_NAME = Heuristic(
    last="""model models net nets network networks module modules encoder encoders decoder decoders backbone
    policy actor critic classifier generator discriminator teacher student layer layers block blocks head
    heads qnet transformer unet vae autoencoder mlp cnn rnn lstm gru""".split(),
    must=["model", "ema_model", "q_net", "target_net2", "self_encoder", "Generator", "actor"],
    must_not=["model_name", "network_config", "actor_critic_kwargs", "layer_norm_eps", "headers", "modelled"],
)
# A callee that computes a loss: the last word is a loss (`compute_loss`, `criterion`), or `loss_fn`.
LOSS_FUNC = Heuristic(
    last="loss losses criterion criteria objective lossfn".split(),
    phrases=["loss fn", "loss func", "loss function", "loss fct"],
    must=["criterion", "compute_loss", "loss_fn", "lossfn", "get_loss", "nll_loss", "LossFunction"],
    must_not=["loss_scale_value", "scaler", "get_loss_weights", "lossless_encode", "gloss"],
)
# Receivers that are not modules even when their last word says so: trainers, optimizers, loaders, ...
NOT_MODULE = Heuristic(
    anywhere="""optimizer optimiser optim opt scheduler sched scaler metric metrics engine trainer accelerator
    lr tokenizer dataset loader dataloader buffer env logger callback plugin strategy client runner manager
    stats""".split(),
    prefixes=("optim", "sched"),
    must=["optimizer", "lr_scheduler", "grad_scaler", "train_loader", "replay_buffer", "env", "trainer"],
    must_not=["model", "encoder", "envelope_net", "loaded_model"],
)
# Objects whose `.detach()` / `.to()` is not a tensor's: hooks, handles, threads, sockets, graphs, finalizers.
OTHER_OBJECT = Heuristic(
    anywhere="""hook hooks handle handles repo session thread process proc conn connection socket sock graph
    node tree env finalizer""".split(),
    must=["hook_handle", "self._finalizer", "sock", "thread", "conn", "dgl_graph"],
    must_not=["hidden", "x", "batch", "h", "shooked"],
)
# Benchmark and warm-up functions, where `out.cpu()` waits for the GPU.
TIMING_FUNC = Heuristic(
    anywhere="bench benchmark profile profiler profiling warmup timeit timing synchronize synchronise".split(),
    phrases=["warm up"],
    must=["benchmark_forward", "warm_up", "warmup", "profile_model", "timeit"],
    must_not=["train", "benching_stats_unrelated_word"],
)
# Optimizer objects (their `step()` is training).
OPTIMIZER_NAME = Heuristic(
    anywhere="opt sgd adam adamw".split(), prefixes=("optim",),
    must=["optimizer", "opt", "optim_g", "adam", "sgd"],
    must_not=["option", "options", "adaptive", "optional_loss"],
)
# Names a state_dict() snapshot gets when it is meant to outlive training (TEN301).
SNAPSHOT_NAME = Heuristic(
    anywhere="""best init initial orig original old prev previous snapshot snap saved backup start baseline
    before ref reference pretrained frozen""".split(),
    must=["best_state", "init_weights", "orig_sd", "snapshot", "weights_before", "pretrained_state"],
    must_not=["state", "sd", "weights", "checkpoint", "restart_count"],
)
# Names of a state_dict() meant to hold the latest weights, whatever training does after it (TEN301 is
# quiet): the alias gives what the name says. `current` is not one (a rollback point is taken "current").
LATEST_NAME = Heuristic(
    anywhere="last latest final".split(),
    must=["last_wts", "latest_state", "final_weights", "model_last"],
    must_not=["current_state", "cur_sd", "best_state", "lasting", "finalize"],
)
# Classes whose state_dict() is data rather than live parameters: optimizers, trainers, callbacks, ...
NOT_MODULE_CLASS = Heuristic(
    anywhere="""optimizer optimiser optim scheduler sched scaler metric metrics engine trainer callback
    checkpoint loop state sampler loader dataloader logger""".split(),
    prefixes=("optim", "sched"),
    must=["MyOptimizer", "WarmupScheduler", "TrainState", "ModelCheckpoint", "TrainingLoop", "GradScaler"],
    must_not=["ResNet", "Encoder", "Statement", "Loopy", "Metricless"],
)
# Parameters, gradients and optimizer state by their usual names: `p`, `param`, `exp_avg_sq`, `ema_w`.
PARAM_NAME = Heuristic(
    whole="p param params parameter w weight bias grad g buf state".split(),
    first="exp momentum ema shadow avg running master".split(),
    must=["p", "param", "exp_avg_sq", "momentum_buffer", "ema_w", "shadow", "running_mean", "w"],
    must_not=["pred", "x", "hidden", "wave", "logits", "out", "weight_decay", "state_dict", "grad_norm"],
)

# Functions that train a model (a call to one trains what it receives).
TRAINING_FUNC = Heuristic(
    anywhere="train training fit learn optimize optimise".split(),
    last="step backward".split(),
    must=["train", "train_epoch", "fit", "training_step", "optimize_model", "backward", "run_train_loop"],
    must_not=["trainer_name", "transform", "fitness", "evaluate", "stepper_config"],
)
# Data loaders (a loop over one yields batches).
LOADER = Heuristic(
    anywhere="loader loaders dataloader dataloaders".split(),
    must=["train_loader", "loader", "self.val_dataloader", "test_loaders"],
    must_not=["loaded", "dataset", "batches", "downloader_count"],
)
# Callback hooks, which a training framework calls between steps or epochs.
CALLBACK_HOOK = Heuristic(
    first=["on"],
    must=["on_epoch_end", "on_validation_end", "on_train_batch_end", "onEpochEnd"],
    must_not=["one_epoch", "online_update", "train", "once"],
)
# Objects that run training on a model they were given: `trainer.run(loader)`, `engine.run(data)`.
TRAINER = Heuristic(
    anywhere="trainer trainers engine learner solver".split(),
    must=["trainer", "self.trainer", "engine", "pl_trainer", "learner"],
    must_not=["train_loader", "model", "pca", "training_args", "engineer_name_x"],
)
# Functions whose name says they compute and return a detached number or log (not a computation to keep).
NOT_A_COMPUTATION = Heuristic(
    first="assert print log info debug warn warning format str repr len isinstance type".split(),
    last="equal close allclose".split(),
    prefixes=("assert", "logging"),
    must=["assertEqual", "print", "log_metrics", "info", "assert_close", "allclose", "logging_step"],
    must_not=["compute", "forward", "loss", "stack"],
)
# forward() and its variants.
FORWARD_FUNC = Heuristic(
    first=["forward"], last=["forward"],
    must=["forward", "_forward", "forward_train", "encoder_forward"],
    must_not=["forwarding_table_size_x", "fwd", "step"],
)
# What `.to(x)` is given when it moves a tensor rather than casting it: a device (`.to(device)`,
# `.to(self.device)`, `.to(x.device)`); a cast to a dtype or to another tensor's type may copy.
DEVICE_NAME = Heuristic(
    last="device devices dev cpu cuda gpu".split(),
    must=["device", "self.device", "x.device", "torch_device", "target_dev", "gpu"],
    must_not=["dtype", "device_count", "devices_list", "cuda_available", "other_tensor"],
)

ALL = {name: h for name, h in globals().items() if isinstance(h, Heuristic)}
