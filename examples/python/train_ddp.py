#!/usr/bin/env python3
"""A small PyTorch DistributedDataParallel training job on the CPU (gloo), one process per rank.

    dvfslab tune --device sim:h200x2 -- python3 examples/python/train_ddp.py   # dvfslab tunes both GPUs
    python3 examples/python/train_ddp.py --tune sim:h200x2                     # dvfslab.Tuner in every rank

Every rank writes a `dvfslab:iter 1 items B rank R` marker per step (dvfslab.markers),
so that `dvfslab measure` and `dvfslab tune` see each rank's progress. With --tune
SPEC every rank opens the GPUs SPEC names, takes the one of its LOCAL_RANK, and
tunes it with dvfslab.Tuner under torch.distributed: rank 0 decides, every rank
changes its own GPU at the same step (docs/multi-gpu.md). A simulated GPU there runs
on virtual time: each step also runs a comparable simulated load (ResNet-50
training) on it, so the tuning is deterministic; every figure is the simulator's.
"""
import argparse
import gc
import json
import os
import socket

import torch
import torch.distributed as distributed
import torch.multiprocessing as multiprocessing
from torch.nn.parallel import DistributedDataParallel

import dvfslab
from dvfslab import markers


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=2, help="processes, one per GPU (default 2)")
    parser.add_argument("--steps", type=int, default=60, help="training steps of every rank (default 60)")
    parser.add_argument("--batch", type=int, default=32, help="samples per rank and step (default 32)")
    parser.add_argument("--tune", metavar="SPEC", help="tune each rank's GPU of SPEC with dvfslab.Tuner")
    parser.add_argument("--warmup-iters", type=int, default=2, help="with --tune: the Tuner's warmup_iters")
    parser.add_argument("--probe-iters", type=int, default=3, help="with --tune: the Tuner's probe_iters")
    parser.add_argument("--record", metavar="DIR",
                        help="with --tune: write each rank's settings, step by step, to DIR/rank-R.json")
    return parser.parse_args()


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def train_step(model, optimizer, inputs, targets):
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(inputs), targets)
    loss.backward()  # DDP all-reduces the gradients here
    optimizer.step()
    return loss.item()


def train(model, optimizer, inputs, targets, args):
    losses = []
    with markers.window("train"):
        for _ in range(args.steps):
            losses.append(train_step(model, optimizer, inputs, targets))
            markers.iteration(items=args.batch)
    return losses


def sm_mhz_under_load(gpu, batch):
    """The simulated GPU's SM clock while it runs the load (outside the tuner's windows)."""
    gpu.attach_load("resnet50", batch)
    gpu.advance(0.2)
    sm_mhz = gpu.telemetry().sm_mhz
    gpu.detach_load()
    return sm_mhz


def train_tuned(model, optimizer, inputs, targets, args, local_rank):
    gpu = dvfslab.open_all(args.tune, virtual_time=True, allow_clock_changes=True)[local_rank]
    simulated = isinstance(gpu, dvfslab.SimGpu)
    found_sm_mhz = sm_mhz_under_load(gpu, args.batch) if simulated else None
    losses, settings = [], []
    with dvfslab.Tuner(gpu, knobs="sm", warmup_iters=args.warmup_iters, probe_iters=args.probe_iters,
                       settle_iters=0) as tuner:
        for _ in range(args.steps):
            with tuner.step(items=args.batch):
                losses.append(train_step(model, optimizer, inputs, targets))
                if simulated:
                    gpu.simulate("resnet50", args.batch)
            settings.append(tuner.current_setting["label"])
            markers.iteration(items=args.batch)
    report = tuner.report()
    after_sm_mhz = sm_mhz_under_load(gpu, args.batch) if simulated else None
    record = {"rank": distributed.get_rank(), "gpu": gpu.device_spec, "uuid": gpu.uuid, "settings": settings,
              "held": [span["setting"]["label"] for span in report["held"]],
              "job_energy_j": report["energy_j"], "restore_actions": report["restore_actions"],
              "sm_mhz_before": found_sm_mhz, "sm_mhz_after": after_sm_mhz}
    return losses, record


def train_rank(local_rank, args):
    """This rank's share of the job; its DDP model lives only in here (see run_rank)."""
    torch.manual_seed(0)
    model = DistributedDataParallel(
        torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(1 + local_rank)  # every rank its own shard of the data
    inputs = torch.randn(args.batch, 64)
    targets = torch.randint(0, 10, (args.batch,))
    if not args.tune:
        return train(model, optimizer, inputs, targets, args)
    losses, record = train_tuned(model, optimizer, inputs, targets, args, local_rank)
    if args.record:
        with open(os.path.join(args.record, f"rank-{local_rank}.json"), "w") as out:
            json.dump(record, out, indent=2)
    held = ", ".join(record["held"]) or "nothing (the job ended while probing)"
    print(f"rank {local_rank}: {args.steps} steps on {record['gpu']}, held {held}; "
          f"restored: {'; '.join(record['restore_actions']) or 'nothing to restore'}")
    return losses


def run_rank(local_rank, args, port):
    # What torchrun would set: the markers read the rank from it.
    os.environ.update(RANK=str(local_rank), LOCAL_RANK=str(local_rank), WORLD_SIZE=str(args.ranks))
    distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=local_rank,
                                   world_size=args.ranks)
    losses = train_rank(local_rank, args)
    print(f"rank {local_rank}: loss {losses[0]:.4f} -> {losses[-1]:.4f} over {args.steps} steps")
    markers.close()
    # The DDP model is gone by now (and with it its reducer's hold on the process
    # group), so the group ends here, where torch lets gloo's threads finish, and not
    # in the interpreter's shutdown: there, PyTorch 1.13 can wait forever on a gloo
    # thread that needs the interpreter lock (seen in 1 of 3 runs on a busy 2-core machine).
    gc.collect()
    distributed.destroy_process_group()


def main():
    args = parse_arguments()
    if args.ranks < 1 or args.steps < 1 or args.batch < 1:
        raise SystemExit("--ranks, --steps and --batch must be 1 or more")
    multiprocessing.spawn(run_rank, args=(args, free_port()), nprocs=args.ranks, join=True)


if __name__ == "__main__":
    main()
