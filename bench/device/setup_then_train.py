#!/usr/bin/env python3
"""A BERT-base training job with set-up before its loop, to check `dvfslab measure`'s
default steady window on a real GPU (issue 26, H5).

Like a real training script it spends a while before its first step: it builds the
model (Hugging Face transformers, random weights from BertConfig: nothing is
downloaded), moves it to the GPU, makes its batches on the CPU, and waits
--setup-seconds more (data loading). Then it trains --iterations steps, writing
`dvfslab:iter 1 items <batch>` after each (no named windows, so dvfslab's default
window is what is checked). It reads NVML's energy counter itself at the end of the
first step and of the last, and reports the loop's time per iteration and energy per
item over exactly the iterations after the first marker, which is the window dvfslab
opens by default.
"""
import argparse
import sys
import time

import torch
from transformers import BertConfig, BertForMaskedLM

from steady_load import Markers, NvmlEnergy, cuda_pci_bus_id, write_result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--setup-seconds", type=float, default=15.0, help="extra set-up after building the model")
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--sequence", type=int, default=128)
    parser.add_argument("--out", help="write the JSON result here instead of stdout")
    args = parser.parse_args()

    started_s = time.perf_counter()
    device = torch.device("cuda", 0)
    energy = NvmlEnergy(cuda_pci_bus_id(device))
    markers = Markers()
    config = BertConfig()
    model = BertForMaskedLM(config).to(device=device, dtype=torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    inputs = torch.randint(0, config.vocab_size, (args.batch, args.sequence))
    labels = inputs.clone()
    time.sleep(args.setup_seconds)
    inputs, labels = inputs.to(device), labels.to(device)

    def step():
        loss = model(input_ids=inputs, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize(device)
        markers.write(f"dvfslab:iter 1 items {args.batch}")

    step()
    # Read right beside the first marker, after the GPU has finished.
    loop_start_j = energy.joules()
    loop_start_s = time.perf_counter()
    setup_s = loop_start_s - started_s
    for _ in range(args.iterations - 1):
        step()
    loop_end_s = time.perf_counter()
    loop_end_j = energy.joules()
    markers.close()

    iterations = args.iterations - 1
    seconds = loop_end_s - loop_start_s
    result = {
        "device": torch.cuda.get_device_name(device),
        "nvml": energy.source,
        "setup_and_first_step_s": setup_s,
        "iterations_after_first_marker": iterations,
        "seconds": seconds,
        "time_per_iteration_s": seconds / iterations,
        "energy_j": loop_end_j - loop_start_j,
        "energy_per_item_j": (loop_end_j - loop_start_j) / (iterations * args.batch),
    }
    write_result(result, args.out)


if __name__ == "__main__":
    sys.exit(main())
