// The OpenAPI 3.1 document of the HTTP API: src/server/openapi.json,
// compiled in (served at GET /openapi.json). tests/api validates real
// responses of every route against it.
#pragma once

namespace warden::server {

extern const char* const kOpenApiJson;

}  // namespace warden::server
