#include "report/collective_json.hpp"

#include <nlohmann/json.hpp>

namespace moesim::report {

std::string collective_rows_to_json_text(const std::vector<CollectiveRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    out.push_back({{"op", r.op},
                   {"gpus", r.gpus},
                   {"bytes", r.bytes},
                   {"time_s", r.time_s},
                   {"algbw_GBps", r.algbw_GBps},
                   {"busbw_GBps", r.busbw_GBps},
                   {"algorithm", r.algorithm},
                   {"fidelity", r.fidelity}});
  }
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace moesim::report
