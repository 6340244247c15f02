#!/usr/bin/env python3
"""A small PyTorch training loop measured per step with dvfslab.Meter.

    python3 examples/python/train_measured.py                    # CPU training, simulated H200
    python3 examples/python/train_measured.py --device 0         # the first NVIDIA GPU (CUDA)

On a simulated GPU (--device sim:NAME) the model trains on the CPU while the
simulated GPU runs a comparable simulated load (ResNet-50 training), so the
figures are the simulator's: every line says SIMULATED. On a real GPU the model
trains there with CUDA; the GPU is only read (no clock is changed).
"""
import argparse
import json
import sys

import torch

import dvfslab


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="sim:h200", help="dvfslab device spec (default sim:h200)")
    parser.add_argument("--steps", type=int, default=40, help="training steps (default 40)")
    parser.add_argument("--batch", type=int, default=64, help="batch size (default 64)")
    parser.add_argument("--warmup", type=int, default=5, help="steps left out of the steady window (default 5)")
    parser.add_argument("--json", metavar="FILE", help="also write the summary as JSON to FILE")
    return parser.parse_args()


def make_model(torch_device):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    return model.to(torch_device)


def main():
    args = parse_arguments()
    gpu = dvfslab.open(args.device)
    torch_device = "cpu" if gpu.simulated else "cuda"
    if torch_device == "cuda" and not torch.cuda.is_available():
        sys.exit(f"{gpu.name} is a real GPU but this PyTorch has no CUDA: use --device sim:NAME")
    label = " SIMULATED" if gpu.simulated else ""
    model = make_model(torch_device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs = torch.randn(args.batch, 256, device=torch_device)
    targets = torch.randint(0, 10, (args.batch,), device=torch_device)

    if gpu.simulated:
        gpu.attach_load("resnet50", args.batch)
    print(f"# {gpu.name}{label}: step, loss, seconds, joules, watts")
    losses = []
    with dvfslab.Meter(gpu) as meter:
        with meter.window("train") as train, meter.window("steady", skip_iterations=args.warmup) as steady:
            for step in range(args.steps):
                optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(inputs), targets)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())  # waits for the step's work, so the step window holds it
                measured = meter.step(items=args.batch)
                energy = "n/a" if measured.energy_j is None else f"{measured.energy_j:.3f}"
                power = "n/a" if measured.mean_power_w is None else f"{measured.mean_power_w:.1f}"
                print(f"{step:4d} {losses[-1]:.4f} {measured.duration_s:.4f} {energy} {power}{label}")
    if gpu.simulated:
        gpu.detach_load()

    summary = {"device": gpu.device_spec, "gpu": gpu.name, "simulated": gpu.simulated,
               "first_loss": losses[0], "last_loss": losses[-1],
               "train": train.measurement.to_dict(),
               "steady": steady.measurement.to_dict() if steady.measurement else None}
    whole = train.measurement
    print(f"# train{label}: {whole.iterations} steps, {whole.duration_s:.3f} s, {whole.energy_j:.2f} J, "
          f"{whole.mean_power_w:.1f} W mean")
    if steady.measurement and steady.measurement.energy_per_item_j is not None:
        print(f"# steady{label}: {steady.measurement.energy_per_item_j:.5f} J per sample, "
              f"{steady.measurement.items_per_s:.0f} samples/s")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(summary, out, indent=2)


if __name__ == "__main__":
    main()
