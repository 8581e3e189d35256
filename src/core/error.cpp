#include "core/error.hpp"

#include <utility>

namespace moesim {

InputError::InputError(std::string json_path, std::string value, std::string rule, std::string allowed)
    : json_path_(std::move(json_path)), value_(std::move(value)), rule_(std::move(rule)), allowed_(std::move(allowed)) {
  rebuild();
}

InputError& InputError::in_file(const std::string& file) {
  if (file_.empty()) file_ = file;
  rebuild();
  return *this;
}

InputError& InputError::under(const std::string& prefix) {
  json_path_ = prefix + json_path_;
  rebuild();
  return *this;
}

void InputError::rebuild() {
  message_.clear();
  if (!file_.empty()) message_ += file_ + ": ";
  message_ += "at " + (json_path_.empty() ? std::string("/") : json_path_) + ": ";
  if (!value_.empty()) message_ += "value " + value_ + ": ";
  message_ += rule_;
  if (!allowed_.empty()) message_ += "; allowed: " + allowed_;
}

}  // namespace moesim
