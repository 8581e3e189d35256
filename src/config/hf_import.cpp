// import_hf_config / import_hf_config_file of config/model_loader.hpp: dispatch on model_type,
// naming, and validation with errors pointing at the HF keys.
#include <algorithm>
#include <filesystem>

#include "config/hf_families.hpp"
#include "config/model_loader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"

namespace moesim::config {

namespace {

std::vector<std::string> supported_model_types() {
  std::vector<std::string> out;
  for (const hf::Family& f : hf::families()) out.emplace_back(f.model_type);
  return out;
}

/// The checkpoint's name: the last part of `_name_or_path` when the config has one, else the file
/// name, else (for a file called config.json) its folder; HF's cache layout
/// models--ORG--NAME/snapshots/HASH/config.json gives NAME.
std::string model_name(const Json& cfg, const std::string& file) {
  if (const auto it = cfg.find("_name_or_path"); it != cfg.end() && it->is_string()) {
    std::string n = it->get<std::string>();
    while (!n.empty() && n.back() == '/') n.pop_back();
    if (const auto slash = n.rfind('/'); slash != std::string::npos) n = n.substr(slash + 1);
    if (!n.empty()) return n;
  }
  const std::filesystem::path p(file);
  std::string n = p.stem().string();
  if (n == "config") {
    const std::filesystem::path dir = p.parent_path();
    n = dir.filename().string();
    if (dir.parent_path().filename() == "snapshots") {
      n = dir.parent_path().parent_path().filename().string();
      if (const auto dash = n.rfind("--"); dash != std::string::npos) n = n.substr(dash + 2);
    }
  }
  return n.empty() ? "hf-model" : n;
}

}  // namespace

model::ModelSpec import_hf_config(const Json& cfg, const std::string& file) {
  try {
    const ObjectReader r = hf::lenient_reader(cfg, "");
    const auto types = supported_model_types();
    const Json* type = r.get("model_type");
    if (!type) throw InputError("/model_type", "", "required field is missing", join(types));
    if (!type->is_string()) {
      throw InputError("/model_type", describe_value(*type), "expected a string, got " + describe_type(*type), join(types));
    }
    const auto families = hf::families();
    const auto family = std::find_if(families.begin(), families.end(),
                                     [&](const hf::Family& f) { return f.model_type == type->get<std::string>(); });
    if (family == families.end()) throw InputError("/model_type", describe_value(*type), "unsupported model_type", join(types));

    hf::Imported imp = family->read(cfg);
    imp.spec.name = model_name(cfg, file);
    imp.spec.source = "HuggingFace config.json: " + file;
    try {
      model::validate(imp.spec);
    } catch (const InputError& e) {
      const auto hf_key = std::find_if(imp.hf_key_of.begin(), imp.hf_key_of.end(),
                                       [&](const auto& kv) { return kv.first == e.json_path(); });
      if (hf_key == imp.hf_key_of.end()) throw;
      throw InputError(hf_key->second, e.value(), e.rule(), e.allowed());
    }
    return imp.spec;
  } catch (InputError& e) {
    e.in_file(file);
    throw;
  }
}

model::ModelSpec import_hf_config_file(const std::string& path) {
  return import_hf_config(load_json_file(path), path);
}

}  // namespace moesim::config
