#include "cli/config/config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <sstream>
#include <toml++/toml.h>

#include "warden/client.h"
#include "warden/did_you_mean.h"
#include "warden/text.h"

namespace warden::cli::config {
namespace {

// Built by appending: g++ 12 warns falsely (-Wrestrict) on "'" + string.
std::string Quoted(std::string_view s) {
  std::string out = "'";
  out += OneLine(s, 60);
  out += '\'';
  return out;
}

std::string Join(const std::vector<std::string>& names, const char* before, const char* after) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ", ";
    out += before + n + after;
  }
  return out;
}

// "a string (\"8\")", "an integer (30)", "a table": for "must be X, not Y".
std::string Described(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "a string (\"" + OneLine(node.as_string()->get(), 40) + "\")";
    case toml::node_type::integer:
      return "an integer (" + std::to_string(node.as_integer()->get()) + ")";
    case toml::node_type::floating_point: {
      std::ostringstream out;
      out << node.as_floating_point()->get();
      return "a float (" + out.str() + ")";
    }
    case toml::node_type::boolean:
      return node.as_boolean()->get() ? "a boolean (true)" : "a boolean (false)";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

Position At(const toml::source_region& where) {
  return {static_cast<int>(where.begin.line), static_cast<int>(where.begin.column)};
}

// Walks the parsed document; keeps the first error in the file's order,
// so that a file with several mistakes is fixed from the top.
class Reader {
 public:
  explicit Reader(std::string path) { file_.path = std::move(path); }

  void Document(const toml::table& root) {
    for (auto&& [key, node] : root) Section(key, node);
  }

  Result<ConfigFile> Finish() {
    if (error_) return InvalidArgument(*error_);
    std::stable_sort(file_.values.begin(), file_.values.end(),
                     [](const FileValue& a, const FileValue& b) {
                       return std::pair(a.at.line, a.at.column) < std::pair(b.at.line, b.at.column);
                     });
    return std::move(file_);
  }

  void Error(Position at, const std::string& what) {
    if (error_ && std::pair(at.line, at.column) >= std::pair(error_at_.line, error_at_.column)) {
      return;
    }
    error_at_ = at;
    error_ = file_.path + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) + ": " +
             what;
  }

 private:
  void Section(const toml::key& key, const toml::node& node) {
    const std::string name(key.str());
    const auto& sections = ConfigSections();
    if (std::find(sections.begin(), sections.end(), name) == sections.end()) {
      return Error(At(key.source()), Unknown(name, node));
    }
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      return Error(At(node.source()),
                   name + " must be a section ([" + name + "]), not " + Described(node));
    }
    for (auto&& [k, v] : *table) {
      if (name == "tasks") {
        Task(k, v);
      } else {
        Setting(name, k, v);
      }
    }
  }

  // A name at the top level that is not a section.
  static std::string Unknown(const std::string& name, const toml::node& node) {
    if (!node.is_table()) {
      for (const std::string& section : ConfigSections()) {
        if (FindKey(section, name) != nullptr) {
          return "'" + name + "' is outside any section: write it under [" + section + "]";
        }
      }
      return "unknown key " + Quoted(name) + ": every setting is in a section (" +
             Join(ConfigSections(), "[", "]") + ")";
    }
    const std::string guess = Closest(name, ConfigSections());
    if (!guess.empty()) {
      return "unknown section [" + OneLine(name, 60) + "] (did you mean [" + guess + "]?)";
    }
    return "unknown section [" + OneLine(name, 60) + "] (the sections: " +
           Join(ConfigSections(), "[", "]") + ")";
  }

  void Setting(const std::string& section, const toml::key& k, const toml::node& v) {
    const std::string name(k.str());
    const ConfigKey* key = FindKey(section, name);
    if (key == nullptr) {
      const std::string guess = Closest(name, KeyNames(section));
      return Error(At(k.source()),
                   "unknown key " + Quoted(section + "." + name) +
                       (guess.empty() ? " (the keys of [" + section + "]: " +
                                            Join(KeyNames(section), "", "") + ")"
                                      : " (did you mean '" + guess + "'?)"));
    }
    const std::string dotted = key->dotted();
    const Position at = At(v.source());
    std::string text;
    switch (key->kind) {
      case ValueKind::kString:
      case ValueKind::kDuration:
        if (!v.is_string()) {
          return Error(at, dotted + " must be " +
                               (key->kind == ValueKind::kDuration
                                    ? "a duration string such as \"30s\" or \"1h30m\""
                                    : "a string") +
                               ", not " + Described(v));
        }
        text = v.as_string()->get();
        break;
      case ValueKind::kInteger:
        if (!v.is_integer()) return Error(at, dotted + " must be an integer, not " + Described(v));
        text = std::to_string(v.as_integer()->get());
        break;
      case ValueKind::kBool:
        if (!v.is_boolean()) {
          return Error(at, dotted + " must be true or false, not " + Described(v));
        }
        text = v.as_boolean()->get() ? "true" : "false";
        break;
      case ValueKind::kQueues:
        if (!Queues(*key, v, &text)) return;
        break;
    }
    if (text.find('\0') != std::string::npos) {
      return Error(at, dotted + " must not contain a NUL byte");
    }
    file_.values.push_back({key, "", std::move(text), at});
  }

  // ["a", "b"] -> "a,b"; false after an error.
  bool Queues(const ConfigKey& key, const toml::node& v, std::string* text) {
    const toml::array* array = v.as_array();
    const std::string dotted = key.dotted();
    if (array == nullptr) {
      Error(At(v.source()), dotted + " must be an array of queue names, such as [\"default\", "
                                     "\"mail\"], not " + Described(v));
      return false;
    }
    if (array->empty()) {
      Error(At(v.source()), dotted + " must name at least one queue");
      return false;
    }
    for (const toml::node& item : *array) {
      if (!item.is_string()) {
        Error(At(item.source()), dotted + " must hold queue names (strings), not " +
                                     Described(item));
        return false;
      }
      // The rule of `warden add --queue`: a queue a worker can name.
      if (Status s = ValidateQueueName(item.as_string()->get()); !s.ok()) {
        Error(At(item.source()), dotted + ": " + s.message());
        return false;
      }
      if (!text->empty()) *text += ',';
      *text += item.as_string()->get();
    }
    return true;
  }

  void Task(const toml::key& k, const toml::node& v) {
    const std::string name(k.str());
    if (!v.is_string()) {
      return Error(At(v.source()),
                   "tasks." + OneLine(name, 60) + " must be a string (the command), not " +
                       Described(v) +
                       (v.is_table() ? " (a task name with a dot in it is quoted: \"a.b\" = ...)"
                                     : ""));
    }
    // The rules of a job's task name (`warden add TASK`): a worker's task
    // that no job could name would never run.
    JobSpec spec;
    spec.task = name;
    if (Status s = ValidateSpec(spec); !s.ok()) {
      return Error(At(k.source()), "[tasks] " + s.message());
    }
    const std::string& command = v.as_string()->get();
    if (command.find_first_not_of(" \t\n\r") == std::string::npos) {
      return Error(At(v.source()), "tasks." + name + " must be a shell command, not empty");
    }
    if (command.find('\0') != std::string::npos) {
      return Error(At(v.source()), "tasks." + name + " must not contain a NUL byte");
    }
    file_.values.push_back({nullptr, name, command, At(k.source())});
  }

  ConfigFile file_;
  std::optional<std::string> error_;
  Position error_at_;
};

}  // namespace

const FileValue* ConfigFile::Find(const ConfigKey& key) const {
  for (const FileValue& v : values) {
    if (v.key == &key) return &v;
  }
  return nullptr;
}

std::vector<const FileValue*> ConfigFile::Tasks() const {
  std::vector<const FileValue*> out;
  for (const FileValue& v : values) {
    if (v.key == nullptr) out.push_back(&v);
  }
  return out;
}

Result<ConfigFile> ParseConfig(std::string_view text, const std::string& path) {
  Reader reader(path);
  if (text.size() > kMaxConfigBytes) {
    reader.Error({1, 1}, "the file is larger than " + std::to_string(kMaxConfigBytes) +
                             " bytes: not a configuration file");
    return reader.Finish();
  }
  // toml++ reports a syntax error by throwing: caught here, so that no
  // exception leaves this function.
  try {
    const toml::table root = toml::parse(text, path);
    reader.Document(root);
  } catch (const toml::parse_error& e) {
    reader.Error(At(e.source()), OneLine(e.description(), 200));
  } catch (const std::exception& e) {
    reader.Error({1, 1}, "cannot read it as TOML: " + OneLine(e.what(), 200));
  }
  return reader.Finish();
}

Result<ConfigFile> ReadConfig(const std::string& path, const std::string& from) {
  const auto fail = [&](int err) -> Status {
    const std::string what = "cannot read the configuration file '" + OneLine(path, 200) +
                             "' (" + from + "): " + std::strerror(err);
    return err == ENOENT ? NotFound(what) : FailedPrecondition(what);
  };
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno);
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    return fail(EISDIR);
  }
  // One byte past the limit is enough to know it is too large.
  std::string text;
  char buf[65536];
  while (text.size() <= kMaxConfigBytes) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return fail(err);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return ParseConfig(text, path);
}

}  // namespace warden::cli::config
