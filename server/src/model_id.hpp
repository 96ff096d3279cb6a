// Model ids: the lower-case hex SHA-256 (OpenSSL) of a validated model's canonical form (canonicalForm,
// denoc/model_io.hpp), and the form every id has. docs/service.md, "Models and ids".
#pragma once

#include <string>

#include "denoc/model.hpp"

namespace denoc::server {

/// Lower-case hex SHA-256 of bytes (OpenSSL). Throws RequestError(Internal) if OpenSSL fails.
std::string sha256Hex(const std::string& bytes);

/// The id of a validated model: sha256Hex(canonicalForm(spec)).
std::string modelId(const ModelSpec& spec);

/// True when s is 64 lower-case hex digits.
bool isModelId(const std::string& s);

}  // namespace denoc::server
