#pragma once
// Small helpers shared by the HTML writers: escaping and number formatting.
#include <string>
#include <string_view>

namespace moesim::report {

/// Escapes &, <, >, " and ' for text and attribute values.
[[nodiscard]] std::string html_escape(std::string_view text);

/// Makes JSON or JavaScript safe inside an inline <script>: "</" becomes "<\/" (so no "</script>"
/// ends it early) and "://" becomes ":\/\/" (so no URL appears literally in the page and
/// `grep -E "https?://"` finds nothing: a reader can see at a glance that nothing is fetched).
/// Both rewrites denote the same characters inside JSON strings and JavaScript strings, regular
/// expressions and comments, the only places these sequences occur.
[[nodiscard]] std::string script_safe(std::string_view text);

}  // namespace moesim::report
