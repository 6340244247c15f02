#pragma once
// The ClockTable::graphics_mhz key of the SM clocks of a GPU whose memory clock is
// not controlled (a sweep table with a blank mem_mhz column); its memory_mhz list
// is then empty. NVML lists no memory clock of 0 MHz.
namespace dvfslab {

inline constexpr int memory_not_controlled_mhz = 0;

}  // namespace dvfslab
