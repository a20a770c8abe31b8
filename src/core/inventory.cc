#include <set>
#include <string>

#include "warden/nodes.h"
#include "warden/text.h"

namespace warden {
namespace {

bool NodeNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '.' || c == '-' || c == '_' || c == ':';
}

// A whole number of at most 7 digits (kMaxNodeCapacity has 7).
std::optional<int64_t> Digits(std::string_view text) {
  if (text.empty() || text.size() > 7) return std::nullopt;
  int64_t n = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

Result<std::vector<NodeSpec>> FromJson(std::string_view text) {
  const Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return InvalidArgument("the inventory is not valid JSON (want an array of nodes)");
  }
  if (!doc.is_array()) return InvalidArgument("a JSON inventory must be an array of nodes");
  std::vector<NodeSpec> nodes;
  for (size_t i = 0; i < doc.size(); ++i) {
    const Json& e = doc[i];
    const std::string where = "inventory element " + std::to_string(i);
    NodeSpec n;
    if (e.is_string()) {
      n.name = e.get<std::string>();
    } else if (e.is_object()) {
      for (const auto& [key, value] : e.items()) {
        if (key != "name" && key != "capacity") {
          return InvalidArgument(where + ": unknown key '" + OneLine(key, 40) +
                                 "' (a node has name and capacity)");
        }
      }
      if (!e.contains("name") || !e["name"].is_string()) {
        return InvalidArgument(where + ": want \"name\": a string");
      }
      n.name = e["name"].get<std::string>();
      if (e.contains("capacity") && !e["capacity"].is_null()) {
        if (!e["capacity"].is_number_integer()) {
          return InvalidArgument(where + ": \"capacity\" must be a whole number or null");
        }
        n.capacity = e["capacity"].get<int64_t>();
      }
    } else {
      return InvalidArgument(where + ": want a name or {\"name\": ..., \"capacity\": ...}");
    }
    if (Status s = CheckNodeName(n.name); !s.ok()) return s.Annotate(where);
    if (n.capacity) {
      if (Status s = CheckNodeCapacity(*n.capacity); !s.ok()) return s.Annotate(where);
    }
    nodes.push_back(std::move(n));
  }
  return nodes;
}

Result<std::vector<NodeSpec>> FromLines(std::string_view text) {
  std::vector<NodeSpec> nodes;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    std::vector<std::string_view> fields;
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      const size_t start = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
      if (i > start) fields.push_back(line.substr(start, i - start));
    }
    if (fields.empty()) continue;
    const std::string where = "inventory line " + std::to_string(line_no);
    if (fields.size() > 2) {
      return InvalidArgument(where + ": want NAME [CAPACITY], got " +
                             std::to_string(fields.size()) + " fields");
    }
    NodeSpec n;
    n.name = std::string(fields[0]);
    if (Status s = CheckNodeName(n.name); !s.ok()) return s.Annotate(where);
    if (fields.size() == 2) {
      auto c = ParseNodeCapacity(fields[1]);
      if (!c.has_value()) return c.error().Annotate(where);
      n.capacity = *c;
    }
    nodes.push_back(std::move(n));
  }
  return nodes;
}

}  // namespace

Status CheckNodeName(std::string_view name) {
  if (name.empty()) return InvalidArgument("a node name must not be empty");
  if (name.size() > 253) {
    return InvalidArgument("node name '" + OneLine(name, 40) + "' is longer than 253 bytes");
  }
  for (const char c : name) {
    if (!NodeNameChar(c)) {
      return InvalidArgument("node name '" + OneLine(name, 40) +
                             "' may hold only letters, digits and . - _ :");
    }
  }
  return Status::Ok();
}

Status CheckNodeCapacity(int64_t capacity) {
  if (capacity < 1 || capacity > kMaxNodeCapacity) {
    return InvalidArgument("a node's capacity must be from 1 to " +
                           std::to_string(kMaxNodeCapacity) + " (to stop a node, disable it)");
  }
  return Status::Ok();
}

Result<std::optional<int64_t>> ParseNodeCapacity(std::string_view text) {
  if (text == "-") return std::optional<int64_t>();
  const std::optional<int64_t> c = Digits(text);
  if (!c || *c < 1) {
    return InvalidArgument("capacity '" + OneLine(text, 40) + "' is not a whole number from 1 to " +
                           std::to_string(kMaxNodeCapacity) + " (or - for none)");
  }
  WARDEN_RETURN_IF_ERROR(CheckNodeCapacity(*c));
  return c;
}

Result<std::vector<NodeSpec>> ParseInventory(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  const bool json = first != std::string_view::npos && (text[first] == '[' || text[first] == '{');
  WARDEN_ASSIGN_OR_RETURN(std::vector<NodeSpec> nodes, json ? FromJson(text) : FromLines(text));
  std::set<std::string> seen;
  for (const NodeSpec& n : nodes) {
    if (!seen.insert(n.name).second) {
      return InvalidArgument("the inventory names node '" + OneLine(n.name, 40) + "' twice");
    }
  }
  return nodes;
}

std::string DescribeCapacity(const std::optional<int64_t>& capacity) {
  return capacity ? "capacity " + std::to_string(*capacity) : "no capacity limit";
}

}  // namespace warden
