// Checks of a YAML text that the node tree cannot make: yaml-cpp keeps the first of two equal keys
// in a mapping (a user who edits a key lower in a long file would get a silently wrong run), and
// passes bytes that are not UTF-8 through to names that JSON and HDF5 output later refuse.
#pragma once

#include <string>

namespace memwall::model {

// InputError (file, line, key) for the first duplicate key of any mapping (both lines named) or the
// first text that is not UTF-8 (a value, a key or a comment) or holds a control character (a value
// or a key). Reads the parser's events, so an
// alias is read once, not expanded: linear in the text's size whatever its anchors. A YAML syntax
// error is left to the loader, which reports it.
void check_yaml_text(const std::string& text, const std::string& file_label);

} // namespace memwall::model
