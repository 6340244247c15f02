#pragma once
// Checks on the raw text of a TOML file that toml11 does not make: it parses arrays
// and inline tables recursively without a depth limit (a small file of nested
// brackets overflows the stack), and it passes invalid UTF-8 through into strings
// that later fail as JSON.
#include <string>

namespace dvfslab {

// Deeper than any plan needs (the deepest valid plan nests 3 levels, a `[[cases]]`
// header counts 2) and far below what toml11 survives.
inline constexpr int max_toml_nesting = 32;

// Throws ConfigError "source:line:column: ..." at the first `[` or `{` that opens a
// level deeper than max_toml_nesting; brackets inside strings and comments do not
// count.
void check_toml_nesting(const std::string& text, const std::string& source_name);

// Throws ConfigError "source:line:column: ..." at the first byte that is not part of
// valid UTF-8 (TOML files are UTF-8; overlong forms and surrogates are invalid).
void check_utf8(const std::string& text, const std::string& source_name);

}  // namespace dvfslab
