#!/usr/bin/env python3
"""Compares `dvfslab info --json` with nvidia-smi's view of the same GPUs.

Usage: compare_info.py DVFSLAB_INFO.json NVIDIA_SMI_Q.txt NVIDIA_SMI_GPUS.csv

NVIDIA_SMI_Q.txt is `nvidia-smi -q -d CLOCK,POWER,SUPPORTED_CLOCKS`;
NVIDIA_SMI_GPUS.csv is `nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,
driver_version,power.draw,clocks.sm,clocks.mem,temperature.gpu
--format=csv,noheader,nounits`. Facts (name, driver, clock table, power limits)
must agree exactly (limits within 0.5 W); live readings were taken moments apart,
so they agree within tolerances. Prints one line per check and exits 1 if any
check disagrees.
"""
import csv
import json
import re
import sys

# Live readings come from two programs a second or so apart.
POWER_TOLERANCE_W = 15.0
POWER_TOLERANCE_FRACTION = 0.15
TEMPERATURE_TOLERANCE_C = 3.0
LIMIT_TOLERANCE_W = 0.5

LINE = re.compile(r"^(\s*)([^:]+?)\s*:\s*(.*)$")


def number(text):
    """The leading number of '75.12 W' or '1980 MHz'; None for 'N/A'."""
    match = re.match(r"^\s*(-?\d+(?:\.\d+)?)", text or "")
    return float(match.group(1)) if match else None


def parse_smi_query(text):
    """Splits `nvidia-smi -q` into its header values and one dict per GPU.

    Each GPU dict maps 'Section/Key' to the value, except the supported-clock
    table, kept as {memory MHz: [graphics MHz, ...]} under 'supported_clocks'.
    """
    header, gpus = {}, []
    gpu, sections = None, []
    memory = None
    for raw in text.splitlines():
        if not raw.strip():
            continue
        if raw.startswith("GPU "):
            gpu = {"bus_id": raw.split()[1], "supported_clocks": {}}
            gpus.append(gpu)
            sections, memory = [], None
            continue
        indent = len(raw) - len(raw.lstrip())
        match = LINE.match(raw)
        if gpu is None:
            if match:
                header[match.group(2).strip()] = match.group(3).strip()
            continue
        if not match:  # a section title
            sections = [s for s in sections if s[0] < indent] + [(indent, raw.strip())]
            continue
        sections = [s for s in sections if s[0] < indent]
        key, value = match.group(2).strip(), match.group(3).strip()
        path = "/".join(name for _, name in sections)
        if path.endswith("Supported Clocks"):
            if key == "Memory":
                memory = int(number(value))
                gpu["supported_clocks"][memory] = []
            elif key == "Graphics" and memory is not None:
                gpu["supported_clocks"][memory].append(int(number(value)))
            continue
        gpu[f"{path}/{key}"] = value
    return header, gpus


def find(gpu, *candidates):
    """The first value whose key ends with one of the candidates (drivers differ)."""
    for candidate in candidates:
        for key, value in gpu.items():
            if isinstance(value, str) and key.endswith(candidate):
                return value
    return None


def normalise_bus_id(text):
    domain, bus, rest = text.lower().split(":")
    return f"{int(domain, 16):08x}:{bus}:{rest}"


class Report:
    def __init__(self):
        self.failures = 0

    def check(self, label, ok, detail):
        self.failures += 0 if ok else 1
        print(f"{'agree' if ok else 'DIFFER':6}  {label}: {detail}")

    def close(self, label, ours, theirs, tolerance, unit):
        if ours is None or theirs is None:
            self.check(label, ours is None and theirs is None, f"dvfslab {ours}, nvidia-smi {theirs}")
            return
        self.check(label, abs(ours - theirs) <= tolerance,
                   f"dvfslab {ours:g} {unit}, nvidia-smi {theirs:g} {unit} (tolerance {tolerance:g})")


def compare_gpu(report, device, smi, row, driver):
    index = device["index"]
    tag = f"GPU {index}"
    report.check(f"{tag} name", device["name"] == row["name"], f"{device['name']!r} vs {row['name']!r}")
    report.check(f"{tag} UUID", device["uuid"] == row["uuid"], device["uuid"])
    report.check(f"{tag} PCI bus id", normalise_bus_id(device["pci_bus_id"]) == normalise_bus_id(row["pci"]),
                 f"{device['pci_bus_id']} vs {row['pci']}")
    report.check(f"{tag} driver", device["driver_version"] == driver, f"{device['driver_version']} vs {driver}")

    table = smi["supported_clocks"]
    ours = {int(memory): clocks for memory, clocks in device["clocks"]["graphics_mhz"].items()}
    report.check(f"{tag} memory clocks", sorted(ours) == sorted(table),
                 f"dvfslab {sorted(ours, reverse=True)}, nvidia-smi {sorted(table, reverse=True)}")
    for memory in sorted(table, reverse=True):
        mine, theirs = sorted(ours.get(memory, [])), sorted(table[memory])
        report.check(f"{tag} graphics clocks @ {memory} MHz", mine == theirs,
                     f"dvfslab {len(mine)} clocks {mine[:1]}..{mine[-1:]}, "
                     f"nvidia-smi {len(theirs)} clocks {theirs[:1]}..{theirs[-1:]}")
    defaults = device["clocks"]["default_applications"]
    smi_graphics = number(find(smi, "Default Applications Clocks/Graphics"))
    smi_memory = number(find(smi, "Default Applications Clocks/Memory"))
    report.check(f"{tag} default application clocks",
                 (defaults["graphics_mhz"], defaults["memory_mhz"]) == (smi_graphics, smi_memory),
                 f"dvfslab {defaults['graphics_mhz']}/{defaults['memory_mhz']} MHz, "
                 f"nvidia-smi {smi_graphics:g}/{smi_memory:g} MHz")

    limits = device["power_limit_w"]
    for ours_key, smi_keys in (("default", ("Default Power Limit",)), ("min", ("Min Power Limit",)),
                               ("max", ("Max Power Limit",)),
                               ("current", ("Current Power Limit", "Enforced Power Limit", "Power Limit"))):
        theirs = number(find(smi, *(f"Power Readings/{key}" for key in smi_keys)))
        report.close(f"{tag} power limit {ours_key}", limits[ours_key], theirs, LIMIT_TOLERANCE_W, "W")

    live = device["telemetry"]
    instant = number(find(smi, "Power Readings/Instantaneous Power Draw", "Power Readings/Power Draw"))
    average = number(find(smi, "Power Readings/Average Power Draw")) or number(row["power"])
    for label, ours, theirs in (("instant power", live["power_instant_w"], instant),
                                ("averaged power", live["power_average_w"], average)):
        tolerance = max(POWER_TOLERANCE_W, POWER_TOLERANCE_FRACTION * (theirs or 0))
        report.close(f"{tag} {label} (live)", ours, theirs, tolerance, "W")
    report.close(f"{tag} memory clock (live)", live["mem_mhz"], number(row["mem_mhz"]), 0, "MHz")
    sm = number(row["sm_mhz"])
    report.close(f"{tag} SM clock (live)", live["sm_mhz"], sm, max(100.0, 0.1 * (sm or 0)), "MHz")
    report.close(f"{tag} GPU temperature (live)", live["gpu_temperature_c"], number(row["temperature"]),
                 TEMPERATURE_TOLERANCE_C, "°C")


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        devices = json.load(f)["devices"]
    with open(argv[2]) as f:
        header, smi_gpus = parse_smi_query(f.read())
    with open(argv[3]) as f:
        fields = ["index", "name", "uuid", "pci", "driver", "power", "sm_mhz", "mem_mhz", "temperature"]
        rows = [dict(zip(fields, (cell.strip() for cell in line))) for line in csv.reader(f) if line]

    report = Report()
    report.check("GPU count", len(devices) == len(smi_gpus) == len(rows),
                 f"dvfslab {len(devices)}, nvidia-smi {len(smi_gpus)} (-q) and {len(rows)} (--query-gpu)")
    report.check("simulated", not any(d["simulated"] for d in devices), "dvfslab read real GPUs")
    smi_by_bus = {normalise_bus_id(g["bus_id"]): g for g in smi_gpus}
    for device, row in zip(devices, rows):
        smi = smi_by_bus.get(normalise_bus_id(device["pci_bus_id"]))
        if smi is None:
            report.check(f"GPU {device['index']}", False, f"nvidia-smi has no GPU at {device['pci_bus_id']}")
            continue
        compare_gpu(report, device, smi, row, header.get("Driver Version"))
    print(f"{'all checks agree' if report.failures == 0 else f'{report.failures} checks differ'}")
    return 0 if report.failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
