"""Times inference max pooling on every max-pool input shape of torchvision's
AlexNet, VGG-16, GoogLeNet and ResNet-50 at a given batch, bf16, several ways:
ATen on channels-last input (what dvfslab's CNNs run), ATen on contiguous (NCHW)
input, the window maximum as an `amax` over a strided view, as the elementwise
maximum of the k x k shifted strided slices, and torch.compile of the channels-last
pool. Prints JSON per shape and summed per network. Read-only: CUDA work only."""
import argparse
import collections
import json
import math

import torch
import torch.nn.functional as F
import torchvision

from kernel_profile import time_cuda

NETWORKS = {
    "alexnet": lambda: torchvision.models.alexnet(),
    "vgg16": lambda: torchvision.models.vgg16(),
    "googlenet": lambda: torchvision.models.googlenet(aux_logits=False, init_weights=False),
    "resnet50": lambda: torchvision.models.resnet50(),
}


def pool_shapes(name):
    """(channels, height, width, kernel, stride, padding, ceil_mode) -> count in the network."""
    model = NETWORKS[name]().eval()
    counts = collections.Counter()

    def record(module, args):
        c, h, w = args[0].shape[1:]
        counts.update([(c, h, w, module.kernel_size, module.stride, module.padding, module.ceil_mode)])
    hooks = [m.register_forward_pre_hook(record) for m in model.modules() if isinstance(m, torch.nn.MaxPool2d)]
    with torch.no_grad():
        model(torch.zeros(1, 3, 224, 224))
    for hook in hooks:
        hook.remove()
    return counts


def output_size(size, kernel, stride, padding, ceil_mode):
    rounding = math.ceil if ceil_mode else math.floor
    out = rounding((size + 2 * padding - kernel) / stride) + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def padded(x, kernel, stride, padding, out_h, out_w):
    extra_h = max(0, (out_h - 1) * stride + kernel - x.shape[2] - 2 * padding)
    extra_w = max(0, (out_w - 1) * stride + kernel - x.shape[3] - 2 * padding)
    return F.pad(x, (padding, padding + extra_w, padding, padding + extra_h), value=-math.inf)


def variants(kernel, stride, padding, ceil_mode, height, width):
    out_h = output_size(height, kernel, stride, padding, ceil_mode)
    out_w = output_size(width, kernel, stride, padding, ceil_mode)

    def aten(x):
        return F.max_pool2d(x, kernel, stride, padding, ceil_mode=ceil_mode)

    def strided_amax(x):
        windows = padded(x, kernel, stride, padding, out_h, out_w).unfold(2, kernel, stride).unfold(3, kernel, stride)
        return windows.amax((-2, -1))[:, :, :out_h, :out_w]

    def shifted_slices(x):
        xp = padded(x, kernel, stride, padding, out_h, out_w)
        result = None
        for i in range(kernel):
            for j in range(kernel):
                part = xp[:, :, i:i + stride * (out_h - 1) + 1:stride, j:j + stride * (out_w - 1) + 1:stride]
                result = part.clone(memory_format=torch.preserve_format) if result is None \
                    else torch.maximum(result, part, out=result)
        return result

    return {"aten": aten, "strided_amax": strided_amax, "shifted_slices": shifted_slices,
            "compile": torch.compile(aten)}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args()
    report = {"batch": args.batch, "torch": torch.__version__, "networks": {}}
    for network in NETWORKS:
        totals = collections.Counter()
        rows = []
        for (c, h, w, kernel, stride, padding, ceil_mode), count in pool_shapes(network).items():
            nchw = torch.randn(args.batch, c, h, w, device="cuda", dtype=torch.bfloat16)
            channels_last = nchw.contiguous(memory_format=torch.channels_last)
            row = {"shape": [c, h, w], "kernel": kernel, "stride": stride, "padding": padding,
                   "ceil_mode": ceil_mode, "count": count}
            reference = None
            with torch.no_grad():
                for name, pool in variants(kernel, stride, padding, ceil_mode, h, w).items():
                    for layout, x in (("channels_last", channels_last), ("nchw", nchw)):
                        if layout == "nchw" and name != "aten":
                            continue
                        key = f"{name}_{layout}_ms"
                        result = pool(x)
                        if reference is None:
                            reference = result
                        row[name + "_equal"] = bool(torch.equal(result, reference))
                        row[key] = time_cuda(lambda: pool(x)) * 1e3
                        totals[key] += row[key] * count
            rows.append(row)
            print(json.dumps(row), flush=True)
        report["networks"][network] = {"total_ms": dict(totals), "pools": rows}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
