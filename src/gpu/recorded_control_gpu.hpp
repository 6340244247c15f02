#pragma once
// The controls of a GPU that answers from a sweep table or a model (replayed
// tables, twins): a control call is only recorded, and the setting shows in what
// the GPU answers next. Before each change the GPU settles what ran under the old
// setting (settle_before_change), so energy and time keep their true history.
#include <string>

#include "dvfslab/gpu.hpp"

namespace dvfslab {

class RecordedControlGpu : public Gpu {
 public:
  ControlState control_state() override { return control_; }
  // Such a setting lives only in this object.
  bool persists_settings() const override { return false; }

  // `requested` with the default for each knob it leaves alone.
  Setting with_defaults(const Setting& requested) const;
  // The same with `workload`'s own default (default_setting_of).
  Setting with_defaults_of(const std::string& workload, const Setting& requested) const;
  // The setting the GPU is at: what was applied, the default for the rest.
  Setting current_setting() const;
  // The setting `workload` runs at: what was applied, its own default for the rest.
  Setting current_setting_of(const std::string& workload) const;

 protected:
  // The setting with nothing applied: every knob the source controls is set.
  virtual Setting default_setting() const = 0;
  // What `workload` runs at with nothing applied: a table's workload measured only
  // at other settings than the GPU's default has its own baseline.
  virtual Setting default_setting_of(const std::string& workload) const {
    (void)workload;
    return default_setting();
  }
  virtual void settle_before_change() = 0;
  // `limits` with the current limit filled in (the applied one, else the default).
  PowerLimits with_current_limit(PowerLimits limits) const;

  void do_lock_sm_clocks(int min_mhz, int max_mhz) final;
  void do_reset_sm_clocks() final;
  void do_lock_memory_clocks(int min_mhz, int max_mhz) final;
  void do_reset_memory_clocks() final;
  void do_set_application_clocks(int memory_mhz, int graphics_mhz) final;
  void do_reset_application_clocks() final;
  void do_set_power_limit(double watts) final;
  void do_reset_power_limit() final;

 private:
  // The knobs applied, each as the GPU answers it (a locked clock over the application one).
  Setting applied_setting() const;

  ControlState control_;
};

}  // namespace dvfslab
