#!/usr/bin/env python3
"""Times dvfslab's LibTorch workloads against the same models in PyTorch eager.

For every configuration it first runs the PyTorch eager model (torchvision CNNs;
BERT-base, GPT-2 small and the Llama decoder at its 125m preset defined below,
layer for layer as dvfslab builds them) and then `dvfslab run-workload ... --json`
with the same batch, precision, channels-last setting, optimizer and synthetic
batch (same seed, same generator calls), and reads the GPU's energy counter
through NVML around each measured window. NVML is only queried (read-only):
nothing on the GPU is changed.

With --compile every row also times torch.compile (default mode) of the same eager
model: the model's forward (inference) or forward + loss (training) is compiled,
the optimizer step stays the eager one. Compilation and the compiled warm-up run
before the timed window, so they are not in it, but they do count against
--budget. --warm-compile-only compiles the selected configurations in parallel
worker processes, without timing anything, to fill Inductor's on-disk cache while
dvfslab builds (torch_vs_eager.sh does this when given --compile); the timed run
then loads the compiled kernels instead of generating them again.

Writes torch_vs_eager.{csv,json,md} (torch_vs_compile.* with --compile) to --out
and prints the markdown table.
"""
import argparse
import csv
import ctypes
import getpass
import glob
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 1234
IMAGE_MODELS = ("alexnet", "vgg16", "googlenet", "resnet50")


class Nvml:
    """The two read-only NVML queries this benchmark needs."""

    def __init__(self, index=0):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        self._check(self.lib.nvmlInit_v2())
        self.handle = ctypes.c_void_p()
        self._check(self.lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(self.handle)))

    def _check(self, code):
        if code != 0:
            raise RuntimeError(f"NVML call failed with code {code}")

    def energy_j(self):
        millijoules = ctypes.c_ulonglong()
        self._check(self.lib.nvmlDeviceGetTotalEnergyConsumption(self.handle, ctypes.byref(millijoules)))
        return millijoules.value / 1000.0


# ---------------------------------------------------------------- transformers
class BertLayer(nn.Module):
    def __init__(self, width=768, heads=12, ff=3072, dropout=0.1):
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.query, self.key, self.value = nn.Linear(width, width), nn.Linear(width, width), nn.Linear(width, width)
        self.attention_output = nn.Linear(width, width)
        self.attention_norm = nn.LayerNorm(width, eps=1e-12)
        self.intermediate, self.output = nn.Linear(width, ff), nn.Linear(ff, width)
        self.output_norm = nn.LayerNorm(width, eps=1e-12)

    def forward(self, x):
        b, t, w = x.shape
        split = lambda y: y.view(b, t, self.heads, w // self.heads).transpose(1, 2)
        p = self.dropout if self.training else 0.0
        context = F.scaled_dot_product_attention(split(self.query(x)), split(self.key(x)), split(self.value(x)),
                                                 dropout_p=p)
        context = context.transpose(1, 2).reshape(b, t, w)
        y = self.attention_norm(x + F.dropout(self.attention_output(context), p, self.training))
        return self.output_norm(y + F.dropout(self.output(F.gelu(self.intermediate(y))), p, self.training))


class BertBase(nn.Module):
    vocabulary = 30522

    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(self.vocabulary, 768)
        self.position_embeddings = nn.Embedding(512, 768)
        self.token_type_embeddings = nn.Embedding(2, 768)
        self.embedding_norm = nn.LayerNorm(768, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer() for _ in range(12))
        self.pooler = nn.Linear(768, 768)
        init_transformer(self)

    def encode(self, tokens):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.word_embeddings(tokens) + self.position_embeddings(positions) + self.token_type_embeddings.weight[0]
        x = F.dropout(self.embedding_norm(x), 0.1, self.training)
        for layer in self.layers:
            x = layer(x)
        return x

    def infer(self, tokens):
        return torch.tanh(self.pooler(self.encode(tokens)[:, 0]))

    def loss(self, tokens, targets):
        logits = F.linear(self.encode(tokens), self.word_embeddings.weight)
        return F.cross_entropy(logits.reshape(-1, self.vocabulary), targets.reshape(-1))


class Gpt2Block(nn.Module):
    def __init__(self, width=768, heads=12, dropout=0.1):
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.ln_1, self.ln_2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.c_attn, self.c_proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.c_fc, self.mlp_c_proj = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x):
        b, t, w = x.shape
        p = self.dropout if self.training else 0.0
        qkv = self.c_attn(self.ln_1(x)).view(b, t, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        context = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], dropout_p=p, is_causal=True)
        y = x + F.dropout(self.c_proj(context.transpose(1, 2).reshape(b, t, w)), p, self.training)
        mlp = self.mlp_c_proj(F.gelu(self.c_fc(self.ln_2(y)), approximate="tanh"))
        return y + F.dropout(mlp, p, self.training)


class Gpt2Small(nn.Module):
    vocabulary = 50257

    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(self.vocabulary, 768), nn.Embedding(1024, 768)
        self.h = nn.ModuleList(Gpt2Block() for _ in range(12))
        self.ln_f = nn.LayerNorm(768)
        init_transformer(self)

    def infer(self, tokens):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = F.dropout(self.wte(tokens) + self.wpe(positions), 0.1, self.training)
        for block in self.h:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)

    def loss(self, tokens, targets):
        return F.cross_entropy(self.infer(tokens).reshape(-1, self.vocabulary), targets.reshape(-1))


class LlamaBlock(nn.Module):
    """dvfslab's Llama block (src/workload/torch/llama.cpp): RMSNorm, rotary
    positions, grouped-query attention, SwiGLU; no biases."""

    def __init__(self, width, heads, kv_heads, mlp_hidden):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, width // heads
        self.input_layernorm = nn.Parameter(torch.ones(width))
        self.q_proj = nn.Linear(width, width, bias=False)
        self.k_proj = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(width, width, bias=False)
        self.post_attention_layernorm = nn.Parameter(torch.ones(width))
        self.gate_proj = nn.Linear(width, mlp_hidden, bias=False)
        self.up_proj = nn.Linear(width, mlp_hidden, bias=False)
        self.down_proj = nn.Linear(mlp_hidden, width, bias=False)

    def forward(self, x, cos, sin):
        b, t, w = x.shape
        split = lambda y, n: y.view(b, t, n, self.head_dim).transpose(1, 2)
        h = rms_norm(x, self.input_layernorm)
        query = rotate(split(self.q_proj(h), self.heads), cos, sin)
        key = rotate(split(self.k_proj(h), self.kv_heads), cos, sin)
        value = split(self.v_proj(h), self.kv_heads)
        groups = self.heads // self.kv_heads
        context = F.scaled_dot_product_attention(query, key.repeat_interleave(groups, 1),
                                                 value.repeat_interleave(groups, 1), is_causal=True)
        y = x + self.o_proj(context.transpose(1, 2).reshape(b, t, w))
        m = rms_norm(y, self.post_attention_layernorm)
        return y + self.down_proj(F.silu(self.gate_proj(m)) * self.up_proj(m))


def rms_norm(x, gain, epsilon=1e-5):
    wide = x.float()
    return (wide * torch.rsqrt(wide.pow(2).mean(-1, keepdim=True) + epsilon)).to(x.dtype) * gain


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    rotated_half = torch.cat((-x[..., half:], x[..., :half]), -1)
    return x * cos.to(x.dtype) + rotated_half * sin.to(x.dtype)


class Llama125m(nn.Module):
    """dvfslab's `llama` at its default preset 125m: 12 layers of width 768, 12
    heads, 4 KV heads, MLP 2048, 32,000-token vocabulary, untied head."""
    vocabulary = 32000

    def __init__(self, layers=12, width=768, heads=12, kv_heads=4, mlp_hidden=2048, max_positions=4096):
        super().__init__()
        self.embed_tokens = nn.Embedding(self.vocabulary, width)
        self.layers = nn.ModuleList(LlamaBlock(width, heads, kv_heads, mlp_hidden) for _ in range(layers))
        self.norm = nn.Parameter(torch.ones(width))
        self.lm_head = nn.Linear(width, self.vocabulary, bias=False)
        dim = width // heads
        inverse_frequencies = torch.pow(10000.0, -torch.arange(0, dim, 2, dtype=torch.double) / dim).float()
        angles = torch.outer(torch.arange(max_positions, dtype=torch.float), inverse_frequencies)
        both_halves = torch.cat((angles, angles), -1)
        self.register_buffer("rotary_cos", both_halves.cos())
        self.register_buffer("rotary_sin", both_halves.sin())
        init_transformer(self)

    def infer(self, tokens):
        count = tokens.shape[1]
        cos, sin = self.rotary_cos[:count], self.rotary_sin[:count]
        x = self.embed_tokens(tokens)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.lm_head(rms_norm(x, self.norm))

    def loss(self, tokens, targets):
        return F.cross_entropy(self.infer(tokens).reshape(-1, self.vocabulary), targets.reshape(-1))


def init_transformer(module):
    with torch.no_grad():
        for name, parameter in module.named_parameters():
            if parameter.dim() >= 2:
                parameter.normal_(0.0, 0.02)
            elif name.endswith("bias"):
                parameter.zero_()


class ImageClassifier(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def infer(self, images):
        return self.net(images)

    def loss(self, images, labels):
        return F.cross_entropy(self.net(images), labels)


def build_model(name):
    if name in IMAGE_MODELS:
        import torchvision

        if name == "googlenet":
            net = torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True)
        else:
            net = getattr(torchvision.models, name)(weights=None)
        return ImageClassifier(net)
    return {"bert_base": BertBase, "gpt2_small": Gpt2Small, "llama": Llama125m}[name]()


def synthetic_batch(name, batch, size, device, channels_last):
    """The same generator calls as dvfslab's ModelWorkload, so the data match."""
    generator = torch.Generator().manual_seed(SEED)
    if name in IMAGE_MODELS:
        images = torch.randn(batch, 3, size, size, generator=generator).to(device)
        labels = torch.randint(1000, (batch,), generator=generator).to(device)
        if channels_last:
            images = images.contiguous(memory_format=torch.channels_last)
        return images, labels
    if name in ("gpt2_small", "llama"):
        vocabulary = Gpt2Small.vocabulary if name == "gpt2_small" else Llama125m.vocabulary
        sequence = torch.randint(vocabulary, (batch, size + 1), generator=generator)
        return sequence[:, :-1].contiguous().to(device), sequence[:, 1:].contiguous().to(device)
    tokens = torch.randint(BertBase.vocabulary, (batch, size), generator=generator).to(device)
    targets = torch.randint(BertBase.vocabulary, (batch, size), generator=generator).to(device)
    return tokens, targets


def eager_step_function(config, device, compiled=False):
    """One step of the eager model; with compiled=True its forward (and loss) goes
    through torch.compile in default mode. The optimizer is left eager on purpose:
    that is how torch.compile is usually applied (`torch.compile(model)`), and
    dvfslab's fused optimizer step is part of what the comparison measures."""
    name, mode, precision = config["model"], config["mode"], config["precision"]
    torch.manual_seed(SEED)
    model = build_model(name).to(device)
    channels_last = name in IMAGE_MODELS and config["channels_last"]
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    model.train(mode == "train")
    inputs, targets = synthetic_batch(name, config["batch"], config["size"], device, channels_last)
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.benchmark = config["cudnn_benchmark"]
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    autocast = lambda: torch.autocast("cuda", dtype=dtype, enabled=dtype is not None)
    # infer/loss are methods, not forward(), so compiling the module object would
    # leave them eager: compile the bound methods the step calls instead.
    forward = model.infer if mode == "infer" else model.loss
    if compiled:
        forward = torch.compile(forward)
    if mode == "infer":
        def infer_step():
            with torch.inference_mode(), autocast():
                forward(inputs)
        return infer_step
    if name in IMAGE_MODELS:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")

    def train_step():
        optimizer.zero_grad(set_to_none=True)
        with autocast():
            loss = forward(inputs, targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    return train_step


def time_eager(config, nvml, target_seconds, warmup, compiled=False):
    """Times the eager model (or, with compiled=True, its torch.compile form).

    Returns (iterations, seconds, energy J, seconds of the first step). For the
    compiled model the first step is where Dynamo traces and Inductor compiles (or
    loads from its cache); it and the other warm-up steps run before the window."""
    device = torch.device("cuda")
    step = eager_step_function(config, device, compiled)
    torch.cuda.synchronize()
    first = time.perf_counter()
    step()
    torch.cuda.synchronize()
    first_step_s = time.perf_counter() - first
    # Eager: the first step is one of the warm-up steps, as before. Compiled: the
    # first step is the compile, and the warm-up steps follow it.
    for _ in range(warmup if compiled else max(warmup - 1, 0)):
        step()
    torch.cuda.synchronize()
    # A short probe sets the iteration count for a window of about target_seconds.
    start = time.perf_counter()
    probe = 0
    while time.perf_counter() - start < 0.3 or probe < 2:
        step()
        torch.cuda.synchronize()
        probe += 1
    iterations = max(5, math.ceil(target_seconds / ((time.perf_counter() - start) / probe)))
    torch.cuda.synchronize()
    energy0, start = nvml.energy_j(), time.perf_counter()
    for _ in range(iterations):
        step()
    torch.cuda.synchronize()
    seconds, energy = time.perf_counter() - start, nvml.energy_j() - energy0
    del step
    torch.cuda.empty_cache()
    return iterations, seconds, energy, first_step_s


def compile_counters():
    """Inductor/AOTAutograd cache hits and misses and Dynamo's graph count, so the
    table can say whether a row's compile came from the warmed cache."""
    from torch._dynamo.utils import counters
    return dict(fxgraph_cache_hit=counters["inductor"]["fxgraph_cache_hit"],
                fxgraph_cache_miss=counters["inductor"]["fxgraph_cache_miss"],
                autograd_cache_hit=counters["aot_autograd"]["autograd_cache_hit"],
                autograd_cache_miss=counters["aot_autograd"]["autograd_cache_miss"],
                graphs=counters["stats"]["unique_graphs"])


def time_compiled(config, nvml, target_seconds, warmup):
    from torch._dynamo.utils import counters
    counters.clear()
    iterations, seconds, energy, first_step_s = time_eager(config, nvml, target_seconds, warmup, compiled=True)
    counts = compile_counters()
    # Drops the compiled code and its guards (and the model they hold) so the
    # next configuration's compile starts clean: Dynamo's recompile limit counts
    # per code object, and every CNN shares ImageClassifier.infer/loss.
    torch._dynamo.reset()
    torch.cuda.empty_cache()
    return iterations, seconds, energy, first_step_s, counts


def time_dvfslab(config, nvml, binary, iterations, warmup, extra_args=()):
    read_fd, write_fd = os.pipe()
    command = [binary, "run-workload", config["model"], "--batch", str(config["batch"]), "--mode", config["mode"],
               "--precision", config["precision"], "--iters", str(iterations), "--warmup", str(warmup),
               "--mark-every", str(iterations), "--torch-device", "cuda", "--json"]
    command += ["--image-size" if config["model"] in IMAGE_MODELS else "--seq-len", str(config["size"])]
    if not config["channels_last"]:
        command.append("--no-channels-last")
    if not config["cudnn_benchmark"]:
        command.append("--no-cudnn-benchmark")
    command += list(extra_args)
    environment = dict(os.environ, DVFSLAB_MARK_FD=str(write_fd))
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment,
                               pass_fds=(write_fd,), text=True)
    os.close(write_fd)
    energy0 = energy1 = None
    with os.fdopen(read_fd) as markers:
        for line in markers:
            if line.startswith("dvfslab:begin measured"):
                energy0 = nvml.energy_j()
            elif line.startswith("dvfslab:end measured"):
                energy1 = nvml.energy_j()
    out, err = process.communicate()
    if process.returncode != 0 or energy0 is None or energy1 is None:
        raise RuntimeError(f"{' '.join(command)} failed ({process.returncode}): {err.strip()}")
    result = json.loads(out)
    result["energy_j"] = energy1 - energy0
    result["stderr"] = err.strip()
    return result


def default_configs():
    """The targets first (bf16 CNNs), then the transformers, then FP32 training and inference."""
    configs = []
    for model in IMAGE_MODELS:
        configs.append(dict(model=model, mode="train", precision="bf16", batch=128, size=224))
        configs.append(dict(model=model, mode="infer", precision="bf16", batch=256, size=224))
    transformers = (("bert_base", 32, 128), ("gpt2_small", 8, 1024), ("llama", 8, 1024))
    for model, batch, size in transformers:
        configs.append(dict(model=model, mode="train", precision="bf16", batch=batch, size=size))
        configs.append(dict(model=model, mode="infer", precision="bf16", batch=batch, size=size))
    for model in IMAGE_MODELS:
        configs.append(dict(model=model, mode="train", precision="fp32", batch=128, size=224))
        configs.append(dict(model=model, mode="infer", precision="fp32", batch=256, size=224))
    for model, batch, size in transformers:
        configs.append(dict(model=model, mode="train", precision="fp32", batch=batch, size=size))
        configs.append(dict(model=model, mode="infer", precision="fp32", batch=batch, size=size))
    for config in configs:
        config["channels_last"] = True
    return configs


def python_launch_us(device, count=5000):
    """Microseconds per small kernel launched from Python on this host. Eager and
    compiled PyTorch launch from Python and slow down on a slower host, where
    dvfslab replays a CUDA graph: a run whose figure is well above another's
    compares them on unequal terms."""
    x = torch.zeros(1, device=device)
    synchronize = torch.cuda.synchronize if x.is_cuda else (lambda: None)
    for _ in range(200):
        x.add_(1)
    synchronize()
    start = time.perf_counter()
    for _ in range(count):
        x.add_(1)
    synchronize()
    return (time.perf_counter() - start) / count * 1e6


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def selected_configs(args):
    only = set(filter(None, args.only.split(",")))
    for config in default_configs():
        selected = not only or config["model"] in only or f"{config['model']}/{config['mode']}" in only
        if not selected or (args.precision and config["precision"] != args.precision):
            continue
        config["cudnn_benchmark"] = not args.no_cudnn_benchmark
        yield config


def config_key(config):
    return f"{config['model']}/{config['mode']}/{config['precision']}"


def compile_one(args):
    """Worker of --warm-compile-only: compiles one configuration and runs two steps,
    which writes its Inductor kernels (and AOTAutograd graphs) to the on-disk cache.
    Prints one JSON line: how long the cold compile took."""
    config = next(c for c in selected_configs(args) if config_key(c) == args.compile_one)
    from torch._dynamo.utils import counters
    counters.clear()
    step = eager_step_function(config, torch.device("cuda"), compiled=True)
    torch.cuda.synchronize()
    start = time.perf_counter()
    step()
    torch.cuda.synchronize()
    first_step_s = time.perf_counter() - start
    step()
    torch.cuda.synchronize()
    print(json.dumps(dict(key=args.compile_one, cold_compile_s=first_step_s, **compile_counters())), flush=True)


def inductor_cache_dir():
    try:
        from torch._inductor.runtime.cache_dir_utils import cache_dir
        return cache_dir()
    except Exception:
        return os.environ.get("TORCHINDUCTOR_CACHE_DIR", f"/tmp/torchinductor_{getpass.getuser()}")


def warm_compile_cache(args):
    """Compiles every selected configuration in parallel worker processes (no
    timing), so the timed run's torch.compile finds its kernels in Inductor's
    on-disk cache. Meant to overlap the dvfslab build, which needs only CPUs;
    the workers share the GPU with each other, never with a timed window (the
    timed run starts after this returns, and this returns only once every
    worker has exited). Writes compile_warm.json to --out."""
    began = time.perf_counter()
    pending = sorted(selected_configs(args),
                     key=lambda c: (c["mode"] != "train", {"googlenet": 0, "resnet50": 1, "gpt2_small": 2,
                                                           "llama": 3, "bert_base": 4, "vgg16": 5}.get(c["model"], 6)))
    # Each worker's Inductor compile pool gets its share of the cores (this
    # setting is left out of Inductor's cache key, so the timed run still hits).
    threads = max(1, (os.cpu_count() or 1) // max(1, args.jobs))
    environment = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS=str(threads), PYTHONUNBUFFERED="1")
    running, results = {}, []
    base = [sys.executable, os.path.abspath(__file__), "--out", args.out, "--warmup", str(args.warmup)]
    if args.no_cudnn_benchmark:
        base.append("--no-cudnn-benchmark")

    def stop(*_):
        raise SystemExit(1)
    signal.signal(signal.SIGTERM, stop)
    try:
        while pending or running:
            out_of_time = time.perf_counter() - began > args.warm_budget
            while pending and len(running) < args.jobs and not out_of_time:
                config = pending.pop(0)
                # Output goes to files, not pipes: a worker's compile warnings could
                # fill a pipe nobody reads until it exits, and stall it.
                log = tempfile.TemporaryFile("w+")
                process = subprocess.Popen(base + ["--compile-one", config_key(config)], env=environment,
                                           stdout=log, stderr=subprocess.STDOUT, text=True)
                running[process] = (config_key(config), time.perf_counter(), log)
            if out_of_time:
                # Unfinished configurations compile cold in the timed run instead.
                for process, (key, start, log) in running.items():
                    process.kill()
                    process.wait()
                    log.close()
                    results.append(dict(key=key, error=f"stopped after {time.perf_counter() - start:.0f} s "
                                                         "(warm-up budget spent)"))
                results += [dict(key=config_key(c), error="not started (warm-up budget spent)") for c in pending]
                running, pending = {}, []
                break
            for process in [p for p in running if p.poll() is not None]:
                key, start, log = running.pop(process)
                log.seek(0)
                out = log.read()
                log.close()
                lines = [line for line in out.splitlines() if line.startswith("{")]
                try:
                    result = json.loads(lines[-1])
                except (IndexError, ValueError):
                    result = dict(key=key, error=f"exit {process.returncode}: {out.strip()[-300:]}")
                result["wall_s"] = time.perf_counter() - start
                results.append(result)
                print(f"compile warm-up {key}: {result.get('cold_compile_s', result.get('error'))}",
                      file=sys.stderr, flush=True)
            time.sleep(0.2)
    finally:
        for process in running:
            process.kill()
            process.wait()
    # The workers ran side by side on one GPU, so any kernel-config timings they
    # cached (Inductor's *.best_config files) were taken under contention; drop
    # them so the timed run re-tunes on an otherwise idle GPU during its warm-up.
    dropped = 0
    for path in glob.glob(os.path.join(inductor_cache_dir(), "**", "*.best_config"), recursive=True):
        try:
            os.remove(path)
            dropped += 1
        except OSError:
            pass
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "compile_warm.json"), "w") as f:
        json.dump(dict(jobs=args.jobs, compile_threads_per_job=threads, elapsed_s=time.perf_counter() - began,
                       best_config_files_dropped=dropped, cache_dir=inductor_cache_dir(), results=results), f,
                  indent=2)
    print(f"compile warm-up done in {time.perf_counter() - began:.0f} s", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dvfslab", help="path of the dvfslab binary (built with LibTorch); required unless "
                                          "--warm-compile-only")
    parser.add_argument("--out", default=os.environ.get("OUT", "."), help="directory for the CSV/JSON/markdown")
    parser.add_argument("--seconds", type=float, default=2.0, help="measured window per run (default 2 s)")
    parser.add_argument("--warmup", type=int, default=3, help="warm-up iterations per run")
    parser.add_argument("--budget", type=float, default=420.0,
                        help="stop starting new configurations after this many seconds")
    parser.add_argument("--stop-at", type=float, default=0.0,
                        help="also stop starting configurations after this Unix time (for runs with a hard limit)")
    parser.add_argument("--only", default="",
                        help="comma-separated models (resnet50) or model/mode (resnet50/infer) to run (default: all)")
    parser.add_argument("--no-cudnn-benchmark", action="store_true",
                        help="let cuDNN pick convolution algorithms by heuristics on both sides instead of timing "
                             "them (FP32 autotuning of a large CNN takes minutes)")
    parser.add_argument("--also-unfused", action="store_true",
                        help="for the CNNs, also time dvfslab with --no-fusion (layer by layer, as PyTorch runs "
                             "them), to show what the fused convolution units contribute")
    parser.add_argument("--precision", default="", help="run only this precision (bf16 or fp32; default: both)")
    parser.add_argument("--compile", action="store_true",
                        help="also time torch.compile (default mode) of the eager model in every row; writes "
                             "torch_vs_compile.{md,csv,json}")
    parser.add_argument("--warm-compile-only", action="store_true",
                        help="time nothing: compile the selected configurations in parallel to fill Inductor's "
                             "cache (run it beside the dvfslab build, before a --compile run)")
    parser.add_argument("--jobs", type=int, default=4, help="parallel workers for --warm-compile-only")
    parser.add_argument("--warm-budget", type=float, default=300.0,
                        help="--warm-compile-only stops its workers after this many seconds")
    parser.add_argument("--compile-one", default="", help=argparse.SUPPRESS)  # the warm-up's worker
    args = parser.parse_args()
    if args.compile_one:
        return compile_one(args)
    if args.warm_compile_only:
        return warm_compile_cache(args)
    if not args.dvfslab:
        parser.error("--dvfslab is required")

    nvml = Nvml()
    began = time.perf_counter()
    launch_us = python_launch_us("cuda")
    rows = []
    warm = {}
    warm_path = os.path.join(args.out, "compile_warm.json")
    if args.compile and os.path.exists(warm_path):
        with open(warm_path) as f:
            warm = {r["key"]: r for r in json.load(f)["results"]}
    for config in selected_configs(args):
        if time.perf_counter() - began > args.budget or (args.stop_at and time.time() > args.stop_at):
            print("time budget spent; skipping the remaining configurations", file=sys.stderr)
            break
        label = f"{config['model']} {config['mode']} {config['precision']} b{config['batch']}"
        try:
            iterations, eager_s, eager_j, _ = time_eager(config, nvml, args.seconds, args.warmup)
            ours = time_dvfslab(config, nvml, args.dvfslab, iterations, args.warmup) if not args.compile else None
        except Exception as error:  # one failing configuration must not hide the others
            print(f"{label}: FAILED: {error}", file=sys.stderr)
            rows.append(dict(config, error=str(error)))
            torch.cuda.empty_cache()
            continue
        compiled = None
        if args.compile:
            # Eager, then compiled, then dvfslab: the compiled model is timed in
            # this process and freed (with Dynamo's state) before dvfslab starts.
            try:
                compiled = time_compiled(config, nvml, args.seconds, args.warmup)
            except Exception as error:  # a compile failure still leaves the eager comparison
                print(f"{label} torch.compile: FAILED: {str(error)[:2000]}", file=sys.stderr)
                compiled = error
                torch._dynamo.reset()
                torch.cuda.empty_cache()
            try:
                ours = time_dvfslab(config, nvml, args.dvfslab, iterations, args.warmup)
            except Exception as error:
                print(f"{label}: FAILED: {error}", file=sys.stderr)
                rows.append(dict(config, error=str(error)))
                continue
        items = ours["items_per_iteration"]
        eager_rate = iterations * items / eager_s
        ours_rate = ours["items_per_s"]
        row = dict(config, unit=ours["item_unit"], iterations=iterations, cuda_graph=ours["cuda_graph"],
                   dvfslab_items_per_s=ours_rate, eager_items_per_s=eager_rate,
                   speedup=ours_rate / eager_rate,
                   dvfslab_w=ours["energy_j"] / ours["seconds"], eager_w=eager_j / eager_s,
                   dvfslab_j_per_item=ours["energy_j"] / (iterations * items),
                   eager_j_per_item=eager_j / (iterations * items), notices="; ".join(ours["notices"]))
        row["energy_ratio"] = row["eager_j_per_item"] / row["dvfslab_j_per_item"]
        row["fused_layers"] = ours.get("fused_layers", 0)
        if isinstance(compiled, Exception):
            row["compile_error"] = str(compiled)[:500]
        elif compiled is not None:
            compile_iterations, compile_s, compile_j, first_step_s, counts = compiled
            row.update(compile_iterations=compile_iterations,
                       compile_items_per_s=compile_iterations * items / compile_s,
                       compile_w=compile_j / compile_s, compile_j_per_item=compile_j / (compile_iterations * items),
                       compile_first_step_s=first_step_s, **{f"compile_{k}": v for k, v in counts.items()})
            row["speedup_vs_compile"] = ours_rate / row["compile_items_per_s"]
            row["compile_vs_eager"] = row["compile_items_per_s"] / eager_rate
            row["energy_ratio_vs_compile"] = row["compile_j_per_item"] / row["dvfslab_j_per_item"]
            cold = warm.get(config_key(config), {})
            if "cold_compile_s" in cold:
                row["compile_cold_s"] = cold["cold_compile_s"]
        if args.also_unfused and config["model"] in IMAGE_MODELS:
            try:
                unfused = time_dvfslab(config, nvml, args.dvfslab, iterations, args.warmup, ["--no-fusion"])
                row["dvfslab_unfused_items_per_s"] = unfused["items_per_s"]
                row["unfused_speedup"] = unfused["items_per_s"] / eager_rate
            except Exception as error:
                print(f"{label} --no-fusion: FAILED: {error}", file=sys.stderr)
        rows.append(row)
        unfused_note = (f"; --no-fusion {row['dvfslab_unfused_items_per_s']:,.0f} ({row['unfused_speedup']:.3f}x)"
                        if "unfused_speedup" in row else "")
        compile_note = (f"; compile {row['compile_items_per_s']:,.0f} ({row['speedup_vs_compile']:.3f}x, "
                        f"first step {row['compile_first_step_s']:.1f} s)" if "speedup_vs_compile" in row else "")
        print(f"{label}: dvfslab {ours_rate:,.0f} vs eager {eager_rate:,.0f} {row['unit']}/s "
              f"({row['speedup']:.3f}x), {row['dvfslab_w']:.0f} W vs {row['eager_w']:.0f} W{unfused_note}"
              f"{compile_note}", file=sys.stderr)
        write_results(rows, args, began, launch_us, quiet=True)
    write_results(rows, args, began, launch_us, quiet=False)


def fmt_compile_s(r):
    first = f"{r['compile_first_step_s']:.1f}"
    return f"{r['compile_cold_s']:.1f} / {first}" if "compile_cold_s" in r else f"— / {first}"


def write_results(rows, args, began, launch_us, quiet):
    """Writes the table, CSV and JSON of the rows so far (a killed run keeps them)."""
    good = [r for r in rows if "error" not in r]
    cnn_bf16 = [r["speedup"] for r in good if r["model"] in IMAGE_MODELS and r["precision"] == "bf16"]
    summary = dict(cnn_bf16_geomean_speedup=geometric_mean(cnn_bf16),
                   cnn_bf16_min_speedup=min(cnn_bf16) if cnn_bf16 else float("nan"),
                   torch_version=torch.__version__, gpu=torch.cuda.get_device_name(0),
                   seconds_per_window=args.seconds, warmup=args.warmup, elapsed_s=time.perf_counter() - began,
                   python_launch_us=launch_us,
                   nvml_energy_counter="nvmlDeviceGetTotalEnergyConsumption")
    versus_compile = [r["speedup_vs_compile"] for r in good if "speedup_vs_compile" in r]
    compile_gain = [r["compile_vs_eager"] for r in good if "compile_vs_eager" in r]
    if args.compile:
        summary.update(compile_mode="default", compiled_rows=len(versus_compile),
                       geomean_speedup_vs_compile=geometric_mean(versus_compile),
                       min_speedup_vs_compile=min(versus_compile) if versus_compile else float("nan"),
                       geomean_compile_vs_eager=geometric_mean(compile_gain),
                       geomean_speedup_vs_eager=geometric_mean([r["speedup"] for r in good]))

    if not args.compile:
        lines = ["| model | mode | prec | batch | size | unit | dvfslab /s | eager /s | speed-up | dvfslab W | eager W "
                 "| dvfslab J/item | eager J/item | energy ratio | graph | cuDNN autotune |",
                 "|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    else:
        # The eager table's columns, each followed by its torch.compile counterpart.
        lines = ["| model | mode | prec | batch | size | unit | dvfslab /s | eager /s | compile /s | speed-up "
                 "| dvfslab / compile | compile / eager | dvfslab W | eager W | compile W | dvfslab J/item "
                 "| eager J/item | compile J/item | energy ratio | energy ratio vs compile "
                 "| compile s (cold / cached) | graph | cuDNN autotune |",
                 "|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
                 "|---:|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['mode']} | {r['precision']} | {r['batch']} | {r['size']} | "
                         f"failed: {r['error'][:80]} ||||||||||")
            continue
        if not args.compile:
            lines.append(f"| {r['model']} | {r['mode']} | {r['precision']} | {r['batch']} | {r['size']} | "
                         f"{r['unit']} | {r['dvfslab_items_per_s']:,.0f} | {r['eager_items_per_s']:,.0f} | "
                         f"{r['speedup']:.3f}× | {r['dvfslab_w']:.0f} | {r['eager_w']:.0f} | "
                         f"{r['dvfslab_j_per_item']:.4g} | {r['eager_j_per_item']:.4g} | {r['energy_ratio']:.3f}× | "
                         f"{'yes' if r['cuda_graph'] else 'no'} | {'yes' if r['cudnn_benchmark'] else 'no'} |")
            continue
        if "speedup_vs_compile" in r:
            c = (f"{r['compile_items_per_s']:,.0f}", f"{r['speedup_vs_compile']:.3f}×", f"{r['compile_vs_eager']:.3f}×",
                 f"{r['compile_w']:.0f}", f"{r['compile_j_per_item']:.4g}", f"{r['energy_ratio_vs_compile']:.3f}×",
                 fmt_compile_s(r))
        else:
            c = ("failed",) + ("—",) * 6
        lines.append(f"| {r['model']} | {r['mode']} | {r['precision']} | {r['batch']} | {r['size']} | {r['unit']} | "
                     f"{r['dvfslab_items_per_s']:,.0f} | {r['eager_items_per_s']:,.0f} | {c[0]} | "
                     f"{r['speedup']:.3f}× | {c[1]} | {c[2]} | {r['dvfslab_w']:.0f} | {r['eager_w']:.0f} | {c[3]} | "
                     f"{r['dvfslab_j_per_item']:.4g} | {r['eager_j_per_item']:.4g} | {c[4]} | "
                     f"{r['energy_ratio']:.3f}× | {c[5]} | {c[6]} | {'yes' if r['cuda_graph'] else 'no'} | "
                     f"{'yes' if r['cudnn_benchmark'] else 'no'} |")
    lines.append("")
    lines.append(f"CNN bf16 (train b128, infer b256): geometric-mean speed-up "
                 f"{summary['cnn_bf16_geomean_speedup']:.3f}×, minimum {summary['cnn_bf16_min_speedup']:.3f}× "
                 f"({summary['gpu']}, PyTorch {summary['torch_version']}).")
    if args.compile:
        lines.append(f"Against torch.compile (default mode), {len(versus_compile)} rows: dvfslab / compile "
                     f"geometric mean {summary['geomean_speedup_vs_compile']:.3f}×, minimum "
                     f"{summary['min_speedup_vs_compile']:.3f}×; compile / eager geometric mean "
                     f"{summary['geomean_compile_vs_eager']:.3f}×.")
    lines.append(f"Python launched a small kernel every {launch_us:.1f} µs on this host (eager and compile "
                 f"launch from Python; dvfslab replays a CUDA graph).")
    table = "\n".join(lines)
    if not quiet:
        print(table)

    name = "torch_vs_compile" if args.compile else "torch_vs_eager"
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"{name}.md"), "w") as f:
        f.write(table + "\n")
    with open(os.path.join(args.out, f"{name}.json"), "w") as f:
        json.dump(dict(summary=summary, rows=rows), f, indent=2)
    fields = sorted({key for row in rows for key in row})
    with open(os.path.join(args.out, f"{name}.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
