#!/usr/bin/env python3
"""A small PyTorch training loop tuned while it runs with dvfslab.Tuner.

    python3 examples/python/train_tuned.py                       # CPU training, simulated H200
    python3 examples/python/train_tuned.py --device 0            # the first NVIDIA GPU (CUDA)

The in-script form of `dvfslab tune -- python3 train.py`: after --warmup steps the
tuner probes SM clocks (--probe steps each, the default first), holds the one with
the least energy per step, and restores the GPU when the loop ends, fails or is
interrupted (Ctrl-C still raises KeyboardInterrupt here). On a simulated GPU
(--device sim:NAME) the model trains on the CPU while the simulated GPU, on virtual
time, runs one iteration of a comparable simulated load (ResNet-50 training) per
step, so the energy figures are the simulator's: the output says SIMULATED. On a
real GPU the model trains there with CUDA, which needs the right to change clocks
(root, or an administrator's grant); DVFSLAB_READ_ONLY=1 refuses.
"""
import argparse
import json
import sys

import torch

import dvfslab


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="sim:h200", help="dvfslab device spec (default sim:h200)")
    parser.add_argument("--steps", type=int, default=400, help="training steps (default 400)")
    parser.add_argument("--batch", type=int, default=64, help="batch size (default 64)")
    parser.add_argument("--warmup", type=int, default=10, help="steps run as found first (default 10)")
    parser.add_argument("--probe", type=int, default=10, help="steps per probed setting (default 10)")
    parser.add_argument("--objective", default="energy", help="what to minimise (default energy)")
    parser.add_argument("--json", metavar="FILE", help="also write the summary (with the report) to FILE")
    return parser.parse_args()


def main():
    args = parse_arguments()
    simulated = args.device.startswith("sim:")
    gpu = dvfslab.open(args.device, virtual_time=simulated, allow_clock_changes=True)
    torch_device = "cpu" if gpu.simulated else "cuda"
    if torch_device == "cuda" and not torch.cuda.is_available():
        sys.exit(f"{gpu.name} is a real GPU but this PyTorch has no CUDA: use --device sim:NAME")
    label = " SIMULATED" if gpu.simulated else ""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    model = model.to(torch_device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs = torch.randn(args.batch, 256, device=torch_device)
    targets = torch.randint(0, 10, (args.batch,), device=torch_device)

    losses = []
    with dvfslab.Tuner(gpu, objective=args.objective, knobs="sm", warmup_iters=args.warmup,
                       probe_iters=args.probe) as tuner:
        for _ in range(args.steps):
            with tuner.step(items=args.batch):
                optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(inputs), targets)
                loss.backward()
                optimizer.step()
                if gpu.simulated:
                    gpu.simulate("resnet50", args.batch)
                losses.append(loss.item())  # waits for the step's GPU work, so the step holds it
        held = tuner.current_setting
    report = tuner.report()

    print(f"# {gpu.name}{label}: {report['iterations']} steps, {report['energy_j']:.1f} J, "
          f"{len(report['probes'])} probes ({report['probe_energy_j']:.1f} J)")
    print(f"# held{label}: {held['label']}")
    if report["estimated_default_energy_j"]:
        at_default = report["estimated_default_energy_j"]
        print(f"# this run{label}: {(report['energy_j'] / at_default - 1) * 100:+.1f} % energy against the "
              f"default setting ({at_default:.1f} J estimated)")
    print(f"# restored: {'; '.join(report['restore_actions']) or 'nothing to restore'}")
    if args.json:
        summary = {"device": gpu.device_spec, "gpu": gpu.name, "simulated": gpu.simulated,
                   "first_loss": losses[0], "last_loss": losses[-1], "held": held, "report": report}
        with open(args.json, "w") as out:
            json.dump(summary, out, indent=2)


if __name__ == "__main__":
    main()
