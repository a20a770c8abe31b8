// A request as the server's handlers see it, and their response: plain
// structs, so that routing, authentication and the API are tested without
// a socket, and only listener.cc knows Boost.Beast.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace warden::server {

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // decoded, without the query
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string peer;  // "ADDR:PORT" of the client

  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

}  // namespace warden::server
