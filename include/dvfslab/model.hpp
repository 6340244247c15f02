#pragma once
// A model of one workload on one GPU: time per unit of work and average board power
// as functions of the SM clock, the memory clock and the board power limit, fitted
// to a few measured settings (docs/model.md gives the form and why).
//
//   time  t(x, y)  = τ0 + τ1/x + τ2/x² + τ3·(r/x − 1)⁺ + τ4/y   x = SM clock / ref, y = memory clock / ref
//   power P(x, y)  = π0 + π1·x + π2·x·h + π3·x·h² + π4·y     h = max(0, x − knee)
//   a power limit L acts through the clock: the board draws softmin(P(x, y), η·L) and the
//   firmware lowers x until P(x_eff, y) equals that draw; time is t(x_eff, y).
//
// Every coefficient is non-negative; a weak prior toward a generic shape keeps fits
// from 3–6 settings stable; a knob the points do not vary takes the prior's shape,
// and the fit's report says so.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dvfslab/types.hpp"

namespace dvfslab::model {

// One measured setting: seconds per unit of work and average power; the spreads
// (standard deviations over repetitions) are optional and only widen intervals.
struct Observation {
  Setting setting;
  double time_s = 0;
  double power_w = 0;
  std::optional<double> time_sd_s;
  std::optional<double> power_sd_w;
};

// What is known besides the points. `reference` is the setting an absent knob means
// (the GPU's default); a knob absent there too means the top value among the points.
struct Facts {
  std::string gpu;
  std::string workload;
  Setting reference;
};

struct FitOptions {
  // Leave-one-out refits for the report (and the intervals): n more fits. A search
  // that refits after every probe leaves them out.
  bool cross_validate = true;
  // Weight of the prior shape against one point's squared relative error: small, so a
  // few points override it along every knob they vary and it decides only what they
  // leave open. bench/model_bench validates it leave-one-table-out (docs/model.md).
  double prior_weight = 0.0002;
};

// A predicted value and its ~95 % interval.
struct Estimate {
  double value = 0;
  double low = 0;
  double high = 0;
};

struct Prediction {
  Estimate time_s;
  Estimate power_w;
  Estimate energy_j;          // time × power, per unit of work
  double sm_fraction = 1;     // effective SM clock / reference, after a power limit acts
  bool extrapolated = false;  // outside the range of the fitted points on some knob
};

struct Parameter {
  std::string name;  // "time.inv_sm", "power.sm_knee", "cap.softness", ...
  double value = 0;
  std::optional<double> sd;  // jackknife (leave-one-out) standard deviation; absent under 4 points
};

struct Residual {
  Setting setting;
  double time_pct = 0;  // (predicted − measured) / measured × 100
  double power_pct = 0;
};

struct FitReport {
  std::size_t points = 0;
  bool identifiable = false;
  std::string reason;              // why not identifiable; "" when it is
  std::vector<std::string> notes;  // knobs the points do not vary, etc.
  std::vector<Parameter> parameters;
  std::vector<Residual> residuals;
  double time_rms_pct = 0;  // fit residuals, relative
  double power_rms_pct = 0;
  // Leave-one-out cross-validation (absent with fewer than 4 points): each point
  // predicted by the model fitted to the others; mean absolute percentage error.
  std::optional<double> loo_time_mape_pct;
  std::optional<double> loo_power_mape_pct;
  std::optional<double> loo_energy_mape_pct;
};

class Model {
 public:
  // Time, power and energy at `setting` (absent knobs as in Facts::reference).
  Prediction predict(const Setting& setting) const;

  const std::string& gpu() const { return gpu_; }
  const std::string& workload() const { return workload_; }
  const FitReport& report() const { return report_; }
  // The settings the model was fitted over (MHz, W; low == high for a knob the
  // points did not vary) and what an absent knob means.
  struct Domain {
    double sm_low_mhz = 0, sm_high_mhz = 0, mem_low_mhz = 0, mem_high_mhz = 0;
    std::optional<double> power_limit_low_w, power_limit_high_w;
    std::optional<double> default_sm_mhz, default_mem_mhz, default_power_limit_w;
  };
  Domain domain() const {
    return {sm_low_,         sm_high_,         mem_low_,
            mem_high_,       power_limit_low_, power_limit_high_,
            default_sm_mhz_, default_mem_mhz_, default_power_limit_w_};
  }

  // One entry of model.json's "models" (docs/model.md#json). from_json throws
  // ConfigError naming the field on anything missing or of the wrong type.
  nlohmann::json to_json() const;
  static Model from_json(const nlohmann::json& json);

 private:
  friend Model fit(const std::vector<Observation>&, const Facts&, const FitOptions&);

  std::string gpu_;
  std::string workload_;
  // Knob references (MHz, W): x = sm / sm_ref etc.; the default when a knob is absent.
  double sm_ref_ = 1, mem_ref_ = 1;
  std::optional<double> default_sm_mhz_, default_mem_mhz_, default_power_limit_w_;
  double sm_low_ = 1, sm_high_ = 1, mem_low_ = 1, mem_high_ = 1;  // fitted range
  std::optional<double> power_limit_low_, power_limit_high_;
  std::vector<double> time_coef_;   // τ0..τ3
  std::vector<double> power_coef_;  // π0..π4
  double ridge_ = 1;                // SM clock fraction below which the work turns compute-bound
  double knee_ = 0;                 // SM clock fraction where the voltage starts to rise
  double cap_softness_ = 8;         // q of softmin(a, b) = (a^-q + b^-q)^(-1/q)
  double limit_share_ = 1;          // η: the average draw a limit L allows is η·L
  double time_rel_sd_ = 0.01, power_rel_sd_ = 0.01;  // interval half-widths / 1.96
  FitReport report_;
};

// Fits the model to the points of one (GPU, workload). Never throws for points it
// cannot identify the model from: the report says so (identifiable false, reason),
// and the model then holds the prior shape scaled to the points. Throws ConfigError
// when there are no points or a time or power is not a positive finite number.
Model fit(const std::vector<Observation>& points, const Facts& facts, const FitOptions& options = {});

// model.json, format version 1: {"format": "dvfslab-model", "version": 1, "models": [...]},
// one model per (GPU, workload).
nlohmann::json to_json(const std::vector<Model>& models);
std::vector<Model> models_from_json(const nlohmann::json& document);
// Reads a model.json file; throws ConfigError naming the file on anything wrong.
std::vector<Model> read_models(const std::filesystem::path& path);
// The model of (gpu, workload) among `models`, or nullptr.
const Model* find_model(const std::vector<Model>& models, const std::string& gpu,
                        const std::string& workload);

}  // namespace dvfslab::model
