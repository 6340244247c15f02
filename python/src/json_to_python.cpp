#include <nlohmann/json.hpp>

#include "bindings.hpp"

namespace dvfslab::python {

namespace py = pybind11;

py::object to_python(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return py::none();
    case nlohmann::json::value_t::boolean: return py::bool_(value.get<bool>());
    case nlohmann::json::value_t::number_integer: return py::int_(value.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: return py::int_(value.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float: return py::float_(value.get<double>());
    case nlohmann::json::value_t::string:
      // Names from databases and sweep tables may hold invalid UTF-8: replace it, as the CLI's JSON does.
      return py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
          value.get_ref<const std::string&>().data(),
          static_cast<Py_ssize_t>(value.get_ref<const std::string&>().size()), "replace"));
    case nlohmann::json::value_t::array: {
      py::list list;
      for (const auto& element : value) list.append(to_python(element));
      return list;
    }
    case nlohmann::json::value_t::object: {
      py::dict dict;
      for (const auto& [key, element] : value.items()) dict[py::str(key)] = to_python(element);
      return dict;
    }
    default: return py::none();  // binary and discarded values: the library writes neither
  }
}

}  // namespace dvfslab::python
