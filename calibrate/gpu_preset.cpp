#include "calibrate/gpu_preset.hpp"

#include <algorithm>
#include <cctype>

namespace moesim::calibrate {
namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

}  // namespace

std::string gpu_preset_for(std::string_view device_name) {
  const std::string n = upper(device_name);
  // PCIe and NVL boards have other clocks, power and links than the SXM presets describe.
  const bool board = has(n, "PCIE") || has(n, "NVL");
  if (has(n, "GB300")) return "gb300";
  if (has(n, "GB200")) return "gb200";
  if (has(n, "B300") && !board) return "b300";
  if (has(n, "B200") && !board) return "b200";
  if (has(n, "H200") && !board) return "h200-sxm";
  if (has(n, "H100") && !board && (has(n, "SXM") || has(n, "HBM3"))) return "h100-sxm";
  if (has(n, "H800") && !board) return "h800-sxm";
  if (has(n, "A100") && has(n, "SXM") && has(n, "80GB")) return "a100-sxm-80g";
  return std::string(device_name);
}

}  // namespace moesim::calibrate
