#pragma once
// Making text from data safe inside an HTML page.
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace dvfslab::report_detail {

// Escapes & < > " ' for element content and quoted attribute values.
std::string html_escape(std::string_view text);
// JSON text safe inside <script type="application/json">: '<', '>' and '&' become
// \u escapes, so no "</script>" or "<!--" can end or confuse the element.
std::string json_for_script(const nlohmann::json& value);
// JavaScript source safe inside <script>: "</script" is written "<\/script", which
// means the same inside the string and regex literals where it can occur.
std::string javascript_for_script(std::string_view source);

}  // namespace dvfslab::report_detail
