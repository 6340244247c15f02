#!/usr/bin/env python3
"""Measures what fused convolution layers gain over PyTorch's layer-by-layer CNNs.

For each torchvision CNN it times, in bf16 with channels-last input on the local
NVIDIA GPU:
  inference: the eager model; the eager model replayed from a CUDA graph; and a
             "frozen" form, graphed: batch norm folded into the convolution weights,
             weights cast to bf16 once, and each convolution + bias + ReLU (and, in
             ResNet, + residual) run as one cuDNN fused call;
  training (AlexNet, VGG-16): the eager step, graphed, and the same step with each
             convolution + bias + ReLU fused in the forward pass (backward: ReLU
             mask from the output, then one convolution_backward for input, weight
             and bias gradients), graphed.
It also prints how far the frozen logits are from the eager ones. Only reads the
GPU. Usage: python3 bench/device/fusion_probe.py [--seconds 1.5] [--models alexnet,vgg16]
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

import graph_probe

BF16 = torch.bfloat16


def fold(conv, bn):
    """Weight and bias of `conv` followed by eval-mode `bn`, in bf16 channels-last."""
    weight, bias = conv.weight.float(), conv.bias.float() if conv.bias is not None else None
    if bn is not None:
        scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
        weight = weight * scale.view(-1, 1, 1, 1)
        bias = bn.bias - bn.running_mean * scale + (bias * scale if bias is not None else 0)
    if bias is None:
        bias = torch.zeros(weight.shape[0], device=weight.device)
    return weight.to(BF16).contiguous(memory_format=torch.channels_last), bias.to(BF16)


class FusedConv:
    def __init__(self, conv, bn=None, relu=True):
        self.weight, self.bias = fold(conv, bn)
        self.stride, self.padding, self.relu = conv.stride, conv.padding, relu

    def __call__(self, x, residual=None):
        if residual is not None:
            return torch.cudnn_convolution_add_relu(x, self.weight, residual, 1.0, self.bias, self.stride,
                                                    self.padding, (1, 1), 1)
        if self.relu:
            return torch.cudnn_convolution_relu(x, self.weight, self.bias, self.stride, self.padding, (1, 1), 1)
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding)


def frozen_sequential(layers):
    """AlexNet/VGG features or classifiers: conv/linear followed by ReLU become one call."""
    steps, items, i = [], list(layers), 0
    while i < len(items):
        layer = items[i]
        followed_by_relu = i + 1 < len(items) and isinstance(items[i + 1], nn.ReLU)
        if isinstance(layer, nn.Conv2d):
            steps.append(FusedConv(layer, relu=followed_by_relu))
            i += 2 if followed_by_relu else 1
        elif isinstance(layer, nn.Linear):
            weight, bias = layer.weight.to(BF16), layer.bias.to(BF16)
            if followed_by_relu:
                steps.append(lambda x, w=weight, b=bias: torch._addmm_activation(b, x, w.t()))
                i += 2
            else:
                steps.append(lambda x, w=weight, b=bias: F.linear(x, w, b))
                i += 1
        elif isinstance(layer, nn.Dropout):
            i += 1
        else:
            steps.append(layer)
            i += 1
    return steps


def frozen_forward(name, net):
    if name in ("alexnet", "vgg16"):
        features, classifier = frozen_sequential(net.features), frozen_sequential(net.classifier)

        def forward(x):
            for step in features:
                x = step(x)
            x = torch.flatten(net.avgpool(x), 1)
            for step in classifier:
                x = step(x)
            return x
        return forward
    if name == "resnet50":
        stem = FusedConv(net.conv1, net.bn1)
        blocks = []
        for stage in (net.layer1, net.layer2, net.layer3, net.layer4):
            for b in stage:
                down = FusedConv(b.downsample[0], b.downsample[1], relu=False) if b.downsample is not None else None
                blocks.append((FusedConv(b.conv1, b.bn1), FusedConv(b.conv2, b.bn2), FusedConv(b.conv3, b.bn3), down))
        fc_w, fc_b = net.fc.weight.to(BF16), net.fc.bias.to(BF16)

        def forward(x):
            x = F.max_pool2d(stem(x), 3, 2, 1)
            for c1, c2, c3, down in blocks:
                identity = down(x) if down is not None else x
                x = c3(c2(c1(x)), residual=identity)
            return F.linear(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1), fc_w, fc_b)
        return forward
    # GoogLeNet: every BasicConv2d is conv + bn + relu.
    basic = lambda m: FusedConv(m.conv, m.bn)

    def inception(m):
        b1, b2a, b2b, b3a, b3b = basic(m.branch1), basic(m.branch2[0]), basic(m.branch2[1]), \
            basic(m.branch3[0]), basic(m.branch3[1])
        pool, b4 = m.branch4[0], basic(m.branch4[1])
        return lambda x: torch.cat([b1(x), b2b(b2a(x)), b3b(b3a(x)), b4(pool(x))], 1)
    stem = [basic(net.conv1), net.maxpool1, basic(net.conv2), basic(net.conv3), net.maxpool2]
    body = [inception(net.inception3a), inception(net.inception3b), net.maxpool3,
            inception(net.inception4a), inception(net.inception4b), inception(net.inception4c),
            inception(net.inception4d), inception(net.inception4e), net.maxpool4,
            inception(net.inception5a), inception(net.inception5b)]
    fc_w, fc_b = net.fc.weight.to(BF16), net.fc.bias.to(BF16)

    def forward(x):
        for step in stem + body:
            x = step(x)
        return F.linear(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1), fc_w, fc_b)
    return forward


class ConvBiasRelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding):
        out = torch.cudnn_convolution_relu(x, weight, bias, stride, padding, (1, 1), 1)
        ctx.save_for_backward(x, weight, out)
        ctx.geometry = (stride, padding)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, weight, out = ctx.saved_tensors
        stride, padding = ctx.geometry
        grad = torch.ops.aten.threshold_backward(grad, out, 0)
        dx, dw, db = torch.ops.aten.convolution_backward(grad, x, weight, [weight.shape[0]], stride, padding,
                                                          [1, 1], False, [0, 0], 1, [True, True, True])
        return dx, dw, db, None, None


def fused_training_forward(net):
    items = list(net.features)

    def forward(x):
        x = x.to(BF16)
        i = 0
        while i < len(items):
            layer = items[i]
            if isinstance(layer, nn.Conv2d):
                x = ConvBiasRelu.apply(x, layer.weight.to(BF16), layer.bias.to(BF16), layer.stride, layer.padding)
                i += 2
            else:
                x = layer(x)
                i += 1
        x = torch.flatten(net.avgpool(x), 1)
        return net.classifier(x)
    return forward


def build(name, train):
    torch.manual_seed(1234)
    if name == "googlenet":
        net = torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True)
    else:
        net = getattr(torchvision.models, name)(weights=None)
    net = net.cuda().to(memory_format=torch.channels_last).train(train)
    return net


def images(batch):
    return torch.randn(batch, 3, 224, 224, generator=torch.Generator().manual_seed(1234)).cuda().contiguous(
        memory_format=torch.channels_last)


def probe_inference(name, seconds):
    net, x = build(name, False), images(256)

    def eager():
        with torch.inference_mode(), torch.autocast("cuda", dtype=BF16):
            return net(x)
    frozen = frozen_forward(name, net)
    xb = x.to(BF16)

    def fused():
        with torch.inference_mode():
            return frozen(xb)
    difference = (eager().float() - fused().float()).abs().max().item()
    scale = eager().float().abs().max().item()
    rates = [graph_probe.items_per_s(eager, 256, seconds), graph_probe.items_per_s(graph_probe.graphed(eager), 256,
                                                                                    seconds),
             graph_probe.items_per_s(graph_probe.graphed(fused), 256, seconds)]
    print(f"{name} infer b256: eager {rates[0]:,.0f}  eager+graph {rates[1]:,.0f}  frozen+graph {rates[2]:,.0f} "
          f"img/s  (frozen/eager {rates[2] / rates[0]:.3f}x, frozen/graphed {rates[2] / rates[1]:.3f}x; "
          f"max |logit diff| {difference:.3g} of {scale:.3g})", flush=True)


def probe_training(name, seconds):
    results = []
    for fused in (False, True):
        net, x = build(name, True), images(128)
        labels = torch.randint(1000, (128,), generator=torch.Generator().manual_seed(1)).cuda()
        optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4, fused=True)
        forward = fused_training_forward(net) if fused else net

        def step():
            optimizer.zero_grad(set_to_none=False)
            with torch.autocast("cuda", dtype=BF16):
                loss = F.cross_entropy(forward(x), labels)
            loss.backward()
            optimizer.step()
        if not fused:
            results.append(graph_probe.items_per_s(step, 128, seconds))
        results.append(graph_probe.items_per_s(graph_probe.graphed(step), 128, seconds))
        del net, optimizer
        torch.cuda.empty_cache()
    print(f"{name} train b128: eager {results[0]:,.0f}  eager+graph {results[1]:,.0f}  fused+graph {results[2]:,.0f} "
          f"img/s  (fused/graphed {results[2] / results[1]:.3f}x)", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--models", default="alexnet,vgg16,googlenet,resnet50")
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    print(torch.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name(0), flush=True)
    for name in args.models.split(","):
        try:
            probe_inference(name, args.seconds)
        except Exception as error:
            print(f"{name} infer: FAILED {error}", flush=True)
        if name in ("alexnet", "vgg16"):
            try:
                probe_training(name, args.seconds)
            except Exception as error:
                print(f"{name} train: FAILED {error}", flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
