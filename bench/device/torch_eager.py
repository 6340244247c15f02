#!/usr/bin/env python3
"""Times dvfslab's LibTorch workloads against the same models in PyTorch eager.

For every configuration it first runs the PyTorch eager model (torchvision CNNs;
BERT-base and GPT-2 small defined below, layer for layer as dvfslab builds them)
and then `dvfslab run-workload ... --json` with the same batch, precision,
channels-last setting, optimizer and synthetic batch (same seed, same generator
calls), and reads the GPU's energy counter through NVML around each measured
window. NVML is only queried (read-only): nothing on the GPU is changed.

Writes torch_vs_eager.{csv,json,md} to --out and prints the markdown table.
"""
import argparse
import csv
import ctypes
import json
import math
import os
import subprocess
import sys
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
    return BertBase() if name == "bert_base" else Gpt2Small()


def synthetic_batch(name, batch, size, device, channels_last):
    """The same generator calls as dvfslab's ModelWorkload, so the data match."""
    generator = torch.Generator().manual_seed(SEED)
    if name in IMAGE_MODELS:
        images = torch.randn(batch, 3, size, size, generator=generator).to(device)
        labels = torch.randint(1000, (batch,), generator=generator).to(device)
        if channels_last:
            images = images.contiguous(memory_format=torch.channels_last)
        return images, labels
    if name == "gpt2_small":
        sequence = torch.randint(Gpt2Small.vocabulary, (batch, size + 1), generator=generator)
        return sequence[:, :-1].contiguous().to(device), sequence[:, 1:].contiguous().to(device)
    tokens = torch.randint(BertBase.vocabulary, (batch, size), generator=generator).to(device)
    targets = torch.randint(BertBase.vocabulary, (batch, size), generator=generator).to(device)
    return tokens, targets


def eager_step_function(config, device):
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
    if mode == "infer":
        def infer_step():
            with torch.inference_mode(), autocast():
                model.infer(inputs)
        return infer_step
    if name in IMAGE_MODELS:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")

    def train_step():
        optimizer.zero_grad(set_to_none=True)
        with autocast():
            loss = model.loss(inputs, targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    return train_step


def time_eager(config, nvml, target_seconds, warmup):
    device = torch.device("cuda")
    step = eager_step_function(config, device)
    for _ in range(warmup):
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
    return iterations, seconds, energy


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
    transformers = (("bert_base", 32, 128), ("gpt2_small", 8, 1024))
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


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dvfslab", required=True, help="path of the dvfslab binary (built with LibTorch)")
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
    args = parser.parse_args()

    nvml = Nvml()
    began = time.perf_counter()
    rows = []
    only = set(filter(None, args.only.split(",")))
    for config in default_configs():
        selected = not only or config["model"] in only or f"{config['model']}/{config['mode']}" in only
        if not selected or (args.precision and config["precision"] != args.precision):
            continue
        config["cudnn_benchmark"] = not args.no_cudnn_benchmark
        if time.perf_counter() - began > args.budget or (args.stop_at and time.time() > args.stop_at):
            print("time budget spent; skipping the remaining configurations", file=sys.stderr)
            break
        label = f"{config['model']} {config['mode']} {config['precision']} b{config['batch']}"
        try:
            iterations, eager_s, eager_j = time_eager(config, nvml, args.seconds, args.warmup)
            ours = time_dvfslab(config, nvml, args.dvfslab, iterations, args.warmup)
        except Exception as error:  # one failing configuration must not hide the others
            print(f"{label}: FAILED: {error}", file=sys.stderr)
            rows.append(dict(config, error=str(error)))
            torch.cuda.empty_cache()
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
        print(f"{label}: dvfslab {ours_rate:,.0f} vs eager {eager_rate:,.0f} {row['unit']}/s "
              f"({row['speedup']:.3f}x), {row['dvfslab_w']:.0f} W vs {row['eager_w']:.0f} W{unfused_note}",
              file=sys.stderr)
        write_results(rows, args, began, quiet=True)
    write_results(rows, args, began, quiet=False)


def write_results(rows, args, began, quiet):
    """Writes the table, CSV and JSON of the rows so far (a killed run keeps them)."""
    good = [r for r in rows if "error" not in r]
    cnn_bf16 = [r["speedup"] for r in good if r["model"] in IMAGE_MODELS and r["precision"] == "bf16"]
    summary = dict(cnn_bf16_geomean_speedup=geometric_mean(cnn_bf16),
                   cnn_bf16_min_speedup=min(cnn_bf16) if cnn_bf16 else float("nan"),
                   torch_version=torch.__version__, gpu=torch.cuda.get_device_name(0),
                   seconds_per_window=args.seconds, warmup=args.warmup, elapsed_s=time.perf_counter() - began,
                   nvml_energy_counter="nvmlDeviceGetTotalEnergyConsumption")

    lines = ["| model | mode | prec | batch | size | unit | dvfslab /s | eager /s | speed-up | dvfslab W | eager W "
             "| dvfslab J/item | eager J/item | energy ratio | graph | cuDNN autotune |",
             "|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['mode']} | {r['precision']} | {r['batch']} | {r['size']} | "
                         f"failed: {r['error'][:80]} ||||||||||")
            continue
        lines.append(f"| {r['model']} | {r['mode']} | {r['precision']} | {r['batch']} | {r['size']} | {r['unit']} | "
                     f"{r['dvfslab_items_per_s']:,.0f} | {r['eager_items_per_s']:,.0f} | {r['speedup']:.3f}× | "
                     f"{r['dvfslab_w']:.0f} | {r['eager_w']:.0f} | {r['dvfslab_j_per_item']:.4g} | "
                     f"{r['eager_j_per_item']:.4g} | {r['energy_ratio']:.3f}× | {'yes' if r['cuda_graph'] else 'no'} | "
                     f"{'yes' if r['cudnn_benchmark'] else 'no'} |")
    lines.append("")
    lines.append(f"CNN bf16 (train b128, infer b256): geometric-mean speed-up "
                 f"{summary['cnn_bf16_geomean_speedup']:.3f}×, minimum {summary['cnn_bf16_min_speedup']:.3f}× "
                 f"({summary['gpu']}, PyTorch {summary['torch_version']}).")
    table = "\n".join(lines)
    if not quiet:
        print(table)

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "torch_vs_eager.md"), "w") as f:
        f.write(table + "\n")
    with open(os.path.join(args.out, "torch_vs_eager.json"), "w") as f:
        json.dump(dict(summary=summary, rows=rows), f, indent=2)
    fields = sorted({key for row in rows for key in row})
    with open(os.path.join(args.out, "torch_vs_eager.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
