// A request as the server's handlers see it, and their response: plain
// structs, so that routing, authentication and the API are tested without
// a socket, and only listener.cc knows Boost.Beast.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace warden::server {

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // decoded, without the query (to compare and quote)
  // The path's segments, each decoded alone (SplitTarget): what routes by
  // segment must read, since `path` cannot tell "a%2Fb" from "a/b".
  std::vector<std::string> segments;
  // The path as sent, still encoded (what the logs quote: unambiguous).
  std::string raw_path;
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  // The request declares a body (Content-Length above 0, or chunked): set
  // before its body is read, while `body` is still empty.
  bool declares_body = false;
  std::string peer;  // "ADDR:PORT" of the client

  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
};

// A response that stays open and sends text as it comes (Server-Sent
// Events). The listener writes the headers, then calls `attach` once with a
// function that queues text for the client from any thread (false once the
// connection is gone), and keeps what attach returns while the connection
// is open. The connection holds no thread meanwhile.
struct StreamBody {
  std::function<std::shared_ptr<void>(std::function<bool(std::string)> send)> attach;
  // Closed after this, so that a revoked token's stream does not outlive
  // it for long; an EventSource (or the dashboard) connects again.
  std::chrono::milliseconds max_age{5 * 60'000};
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::shared_ptr<StreamBody> stream;  // set: `body` is ignored
  // Who was served ("token:NAME", "no-auth"), for the access log; not sent.
  std::string actor;
};

}  // namespace warden::server
