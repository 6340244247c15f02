#pragma once
// Checks on the raw text of a TOML file that toml11 does not make: it parses arrays
// and inline tables recursively without a depth limit (a small file of nested
// brackets overflows the stack), and it passes invalid UTF-8 through into strings
// that later fail as JSON, and its time grows with (values on a line) × (the
// line's length).
#include <cstddef>
#include <string>

namespace dvfslab {

// Deeper than any plan needs (the deepest valid plan nests 3 levels) and far below
// what toml11 survives (a key of 10,000 dotted parts takes it a minute).
inline constexpr int max_toml_nesting = 32;

// Throws ConfigError "source:line:column: ..." at the first `[` or `{` that opens a
// level deeper than max_toml_nesting, or the dot that gives a dotted key (each part
// a nested table) more parts than that; brackets and dots inside strings and
// comments do not count.
void check_toml_nesting(const std::string& text, const std::string& source_name);

// Throws ConfigError "source:line: ..." for the first line longer than `max_bytes`.
void check_line_lengths(const std::string& text, const std::string& source_name, std::size_t max_bytes);

// Throws ConfigError "source:line:column: ..." at the first byte that is not part of
// valid UTF-8 (TOML files are UTF-8; overlong forms and surrogates are invalid).
void check_utf8(const std::string& text, const std::string& source_name);

}  // namespace dvfslab
