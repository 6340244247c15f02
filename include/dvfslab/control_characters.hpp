#pragma once
// Text from a user, a table or a database that ends up inside a line dvfslab
// writes: a one-line error message, or a comment of generated shell text. A line
// break there would end the line and let the rest be read as something else (in
// shell text: as a command), and terminal codes could hide what follows.
#include <string>
#include <string_view>

namespace dvfslab {

// `text` with its line breaks shown as \n and every other control character (bytes
// below 0x20, and 0x7F) as \xNN, so that it stays on one line as written.
std::string escape_control_characters(std::string_view text);

// Whether `text` holds a control character (a byte below 0x20, or 0x7F).
bool has_control_character(std::string_view text);

}  // namespace dvfslab
