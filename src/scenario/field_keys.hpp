#pragma once
// A visitor of any field table (scenario_fields.hpp, plan_request_fields.hpp) that collects its keys
// in table order and which of them are required: the strict reader's allowed list and the message of
// a missing section, taken from the one table instead of a second list.
#include <string>
#include <vector>

#include "scenario/field.hpp"

namespace moesim {

struct FieldKeys {
  std::vector<std::string> keys, required;

  void add(const FieldInfo& info) {
    keys.emplace_back(info.key);
    if (info.required) required.emplace_back(info.key);
  }
  template <typename... A> void section(const FieldInfo& i, A&&...) { add(i); }
  template <typename... A> void special(const FieldInfo& i, A&&...) { add(i); }
  template <typename... A> void constant(const FieldInfo& i, A&&...) { add(i); }
  template <typename... A> void text(const FieldInfo& i, A&&...) { add(i); }
  template <typename... A> void integer(const FieldInfo& i, A&&...) { add(i); }
  template <typename... A> void number(const FieldInfo& i, A&&...) { add(i); }
  template <typename... A> void optional_integer(const FieldInfo& i, A&&...) { add(i); }
  template <typename... A> void optional_number(const FieldInfo& i, A&&...) { add(i); }
  template <typename... A> void boolean(const FieldInfo& i, A&&...) { add(i); }
  template <typename... A> void enumeration(const FieldInfo& i, A&&...) { add(i); }
  template <typename... A> void integer_list(const FieldInfo& i, A&&...) { add(i); }
  template <typename... A> void enumeration_list(const FieldInfo& i, A&&...) { add(i); }
};

}  // namespace moesim
