"""The small value objects a GPU gives (PowerLimits, Telemetry, ClockTable) print
what they hold, not `<object at 0x...>`."""
import dvfslab


def test_first_contact_power_limits_and_telemetry_print_their_values():
    gpu = dvfslab.open("sim:h200", virtual_time=True)
    limits = gpu.power_limits()
    assert repr(limits) == (f"dvfslab.PowerLimits(default_w={limits.default_w!r}, min_w={limits.min_w!r}, "
                            f"max_w={limits.max_w!r}, current_w={limits.current_w!r})")
    assert limits.default_w == 700.0 and "default_w=700.0" in repr(limits)
    reading = gpu.telemetry()
    fields = ("time_s", "power_instant_w", "power_average_w", "energy_j", "sm_mhz", "mem_mhz", "gpu_temperature_c",
              "memory_temperature_c", "gpu_utilization_pct", "memory_utilization_pct", "throttle_reasons")
    assert repr(reading) == "dvfslab.Telemetry(" + ", ".join(
        f"{field}={getattr(reading, field)!r}" for field in fields) + ")"
    assert reading.sm_mhz is not None and f"sm_mhz={reading.sm_mhz}" in repr(reading)


def test_first_contact_a_clock_table_prints_its_range_and_defaults():
    table = dvfslab.open("sim:h200", virtual_time=True).clock_table()
    graphics = table.all_graphics_mhz()
    memory = ", ".join(str(mhz) for mhz in table.memory_mhz)
    assert repr(table) == (f"<dvfslab.ClockTable: memory {memory} MHz; {len(graphics)} graphics clocks, "
                           f"{min(graphics)} to {max(graphics)} MHz; default graphics "
                           f"{table.default_graphics_mhz} MHz, memory {table.default_memory_mhz} MHz>")


def test_library_keywords_come_from_the_backend_table_and_an_unknown_one_is_a_type_error():
    assert dvfslab.open("sim:v100", nvml_library=None, virtual_time=True).describe()["backend"] == "sim"
    assert dvfslab.open("sim:mi300x", rocm_library=None, virtual_time=True).describe()["backend"] == "sim"
    try:
        dvfslab.open("sim:v100", level_zero_library="/usr/lib/libze_loader.so")
    except TypeError as error:
        assert "level_zero_library" in str(error)
    else:
        raise AssertionError("an unknown library keyword was accepted")
