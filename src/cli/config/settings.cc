#include "cli/config/settings.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <set>

#include "warden/text.h"

namespace warden::cli::config {
namespace {

bool IsDecimal(std::string_view text) {
  const size_t digits = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  return text.size() > digits &&
         text.find_first_not_of("0123456789", digits) == std::string_view::npos;
}

// Hands `texts` to `opt` as if typed after its flag, and runs its checks
// and conversion. Errors start with the flag, as the flag's own do.
Status Feed(CLI::Option& opt, const ConfigKey& key, const std::vector<std::string>& texts) {
  const std::string flag(key.flag);
  for (const std::string& text : texts) {
    if (key.kind == ValueKind::kBool && text != "true" && text != "false" && text != "1" &&
        text != "0") {
      return InvalidArgument(flag + " must be true or false, not '" + OneLine(text, 40) + "'");
    }
    if (key.kind == ValueKind::kInteger && !IsDecimal(text)) {
      return InvalidArgument(flag + ": '" + OneLine(text, 40) + "' is not a decimal integer");
    }
  }
  try {
    opt.clear();
    for (const std::string& text : texts) opt.add_result(text);
    opt.run_callback();
  } catch (const CLI::ConversionError&) {
    return InvalidArgument(flag + ": '" + OneLine(texts.empty() ? "" : texts[0], 40) +
                           "' is not a value it takes");
  } catch (const CLI::ParseError& e) {
    return InvalidArgument(OneLine(e.what(), 200));
  }
  return Status::Ok();
}

}  // namespace

EnvFn ProcessEnv() {
  return [](const std::string& name) -> const char* { return std::getenv(name.c_str()); };
}

std::string Source::ToString() const {
  switch (kind) {
    case Kind::kDefault:
      return "default";
    case Kind::kFlag:
      return "flag " + name;
    case Kind::kEnv:
      return "env " + name;
    case Kind::kFile:
      return name + ":" + std::to_string(at.line);
  }
  return "";
}

std::optional<ConfigLocation> LocateConfig(const std::optional<std::string>& flag,
                                           const EnvFn& env, const std::string& default_path) {
  if (flag) return ConfigLocation{*flag, "--config"};
  if (const char* named = env("WARDEN_CONFIG"); named != nullptr && *named != '\0') {
    return ConfigLocation{named, "WARDEN_CONFIG"};
  }
  struct stat st {};
  if (stat(default_path.c_str(), &st) == 0 || errno != ENOENT) {
    return ConfigLocation{default_path, "the default path"};
  }
  return std::nullopt;
}

Result<Settings> Settings::Read(std::optional<ConfigLocation> location) {
  Settings s;
  if (location) {
    if (location->path.empty()) {
      return InvalidArgument(location->from + " names no file (to read none: " +
                             location->from + " /dev/null)");
    }
    WARDEN_ASSIGN_OR_RETURN(s.parsed_, ReadConfig(location->path, location->from));
  }
  s.file_ = std::move(location);
  return s;
}

const Applied* Settings::Find(const ConfigKey& key) const {
  for (const Applied& a : applied_) {
    if (a.key == &key) return &a;
  }
  return nullptr;
}

Status Settings::Apply(CLI::App& cmd, std::string_view section, const EnvFn& env) {
  for (const ConfigKey& key : ConfigKeys()) {
    if (key.section == section) WARDEN_RETURN_IF_ERROR(ApplyKey(cmd, key, env));
  }
  if (section == "worker") return ApplyTasks(cmd);
  return Status::Ok();
}

Status Settings::ApplyKey(CLI::App& cmd, const ConfigKey& key, const EnvFn& env) {
  CLI::Option* opt = cmd.get_option_no_throw(std::string(key.flag));
  if (opt == nullptr) return Internal(key.dotted() + ": no flag " + std::string(key.flag));
  Applied a{&key, "", {}};
  std::string text;
  const std::string variable = key.env();
  const char* from_env = env(variable);
  const FileValue* from_file = parsed_ ? parsed_->Find(key) : nullptr;
  if (opt->count() > 0) {
    a.source = {Source::Kind::kFlag, std::string(key.flag), {}};
  } else if (from_env != nullptr && *from_env != '\0') {
    a.source = {Source::Kind::kEnv, variable, {}};
    text = from_env;
  } else if (from_file != nullptr) {
    a.source = {Source::Kind::kFile, parsed_->path, from_file->at};
    text = from_file->text;
  }
  applied_.push_back(a);
  if (a.source.kind != Source::Kind::kEnv && a.source.kind != Source::Kind::kFile) {
    return Status::Ok();
  }
  return Attribute(Feed(*opt, key, {text}), key.section);
}

// A task of the file runs unless a --task flag names it too: flags win,
// task by task, and the file's other tasks stay.
Status Settings::ApplyTasks(CLI::App& cmd) {
  CLI::Option* opt = cmd.get_option_no_throw("--task");
  if (opt == nullptr) return Internal("[tasks]: no flag --task");
  const std::vector<std::string> given = opt->results();
  std::set<std::string> named;
  for (const std::string& t : given) named.insert(t.substr(0, t.find('=')));
  std::vector<std::string> texts;
  if (parsed_) {
    for (const FileValue* v : parsed_->Tasks()) {
      if (named.count(v->task)) continue;
      applied_.push_back({nullptr, v->task, {Source::Kind::kFile, parsed_->path, v->at}});
      texts.push_back(v->task + "=" + v->text);
    }
  }
  for (const std::string& t : given) {
    applied_.push_back({nullptr, t.substr(0, t.find('=')), {Source::Kind::kFlag, "--task", {}}});
  }
  if (texts.empty()) return Status::Ok();
  texts.insert(texts.end(), given.begin(), given.end());
  static const ConfigKey kTasks{"tasks", "--task", ValueKind::kString};
  return Feed(*opt, kTasks, texts);
}

Status Settings::Attribute(const Status& s, std::string_view section) const {
  if (s.ok()) return s;
  const std::string& m = s.message();
  for (const Applied& a : applied_) {
    if (a.key == nullptr || (!section.empty() && a.key->section != section)) continue;
    const std::string flag(a.key->flag);
    if (m.compare(0, flag.size(), flag) != 0) continue;
    if (m.size() > flag.size() && m[flag.size()] != ':' && m[flag.size()] != ' ') continue;
    const std::string rest = m.substr(flag.size());
    switch (a.source.kind) {
      case Source::Kind::kEnv:
        return Status(s.code(), a.source.name + rest);
      case Source::Kind::kFile:
        return Status(s.code(), a.source.name + ":" + std::to_string(a.source.at.line) + ":" +
                                    std::to_string(a.source.at.column) + ": " +
                                    a.key->dotted() + rest);
      case Source::Kind::kDefault:
      case Source::Kind::kFlag:
        return s;
    }
  }
  return s;
}

}  // namespace warden::cli::config
