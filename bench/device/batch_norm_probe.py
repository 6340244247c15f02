"""Times training batch norm (+ ReLU), forward and backward, on every batch-norm
input shape of torchvision's ResNet-50 at a given batch, channels-last bf16 as
under autocast (FP32 affine parameters), three ways: ATen's default dispatch,
cuDNN's kernels called directly (ATen does not choose them for bf16 inputs), and
the same layer under torch.compile. Prints JSON: per shape and summed over the
network's layers. Read-only: it only runs CUDA work."""
import argparse
import collections
import json

import torch
import torch.nn.functional as F
import torchvision

from kernel_profile import time_cuda

EPS = 1e-5
MOMENTUM = 0.1


def network_shapes(batch):
    """(channels, height, width) -> how many of ResNet-50's batch norms see it."""
    model = torchvision.models.resnet50()
    counts = collections.Counter()
    hooks = [module.register_forward_pre_hook(lambda _m, args: counts.update([tuple(args[0].shape[1:])]))
             for module in model.modules() if isinstance(module, torch.nn.BatchNorm2d)]
    with torch.no_grad():
        model(torch.zeros(1, 3, 224, 224))
    for hook in hooks:
        hook.remove()
    return counts


def parameters(channels):
    weight = torch.rand(channels, device="cuda", requires_grad=True)
    bias = torch.rand(channels, device="cuda", requires_grad=True)
    return weight, bias, torch.zeros(channels, device="cuda"), torch.ones(channels, device="cuda")


def aten_step(x, grad, channels):
    weight, bias, mean, var = parameters(channels)
    x = x.detach().requires_grad_()

    def step():
        y = F.batch_norm(x, mean, var, weight, bias, True, MOMENTUM, EPS).relu_()
        y.backward(grad)
    return step


def cudnn_step(x, grad, channels):
    # cuDNN's batch norm asks for bf16 parameters with a bf16 input.
    weight, bias, mean, var = (t.detach().to(x.dtype) for t in parameters(channels))

    def step():
        y, save_mean, save_var, reserve = torch.cudnn_batch_norm(x, weight, bias, mean, var, True, MOMENTUM, EPS)
        relu_mask = y > 0
        grad_y = grad * relu_mask
        torch.ops.aten.cudnn_batch_norm_backward(x, grad_y.contiguous(memory_format=torch.channels_last),
                                                 weight, mean, var, save_mean, save_var, EPS, reserve)
    return step


def compiled_step(x, grad, channels):
    weight, bias, mean, var = parameters(channels)
    x = x.detach().requires_grad_()
    layer = torch.compile(lambda t: F.batch_norm(t, mean, var, weight, bias, True, MOMENTUM, EPS).relu())

    def step():
        layer(x).backward(grad)
    return step


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile variant")
    args = parser.parse_args()
    variants = {"aten": aten_step, "cudnn": cudnn_step}
    if not args.no_compile:
        variants["compile"] = compiled_step
    shapes = []
    totals = collections.Counter()
    for (channels, height, width), count in sorted(network_shapes(args.batch).items()):
        x = torch.randn(args.batch, channels, height, width, device="cuda", dtype=torch.bfloat16)
        x = x.contiguous(memory_format=torch.channels_last)
        grad = torch.randn_like(x)
        row = {"shape": [args.batch, channels, height, width], "layers": count}
        for name, make in variants.items():
            try:
                row[name + "_ms"] = time_cuda(make(x, grad, channels)) * 1e3
                totals[name + "_ms"] += row[name + "_ms"] * count
            except RuntimeError as error:
                row[name + "_error"] = str(error).splitlines()[0]
        shapes.append(row)
        print(json.dumps(row), flush=True)
    print(json.dumps({"batch": args.batch, "network_total": dict(totals), "torch": torch.__version__,
                      "cudnn": torch.backends.cudnn.version(), "shapes": shapes}))


if __name__ == "__main__":
    main()
