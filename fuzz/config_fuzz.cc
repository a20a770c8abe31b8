// warden.toml: ParseConfig (src/cli/config/config_file.h), toml++ and all,
// on any bytes. Checks: nothing throws or crashes; a refusal is one
// InvalidArgument line naming the file and a line and column inside the
// text; an accepted file's values are what their flags can take (integers
// in decimal, booleans as true/false, queue names and task names a worker
// can serve, no NUL byte), at positions inside the text; and the file
// written back with TomlKey/TomlString/TomlValue (what `warden config
// check` prints) reads back to the same values, whatever bytes they hold.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "cli/config/config_file.h"
#include "cli/config/toml_text.h"
#include "fuzz_check.h"
#include "warden/client.h"
#include "warden/lists.h"

namespace warden::fuzz {
namespace {

using cli::config::ConfigFile;
using cli::config::FileValue;
using cli::config::ValueKind;

const char kName[] = "fuzz.toml";

// toml++ 3.3 reaches __builtin_unreachable (undefined behaviour, which
// UBSan stops on) when it asks whether one of these code points is
// whitespace, as it does outside strings (README.md, Found so far): they
// are replaced by 'x' before parsing, so that the fuzzer explores the rest
// instead of stopping there. Other bytes, malformed UTF-8 included, pass.
std::string WithoutCodePointsTomlMishandles(const std::string& in) {
  std::string out;
  for (size_t i = 0; i < in.size();) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(in[i + k]); };
    char32_t c = 0;
    size_t n = 0;
    if (b(0) >= 0xC2 && b(0) <= 0xDF && i + 1 < in.size() && (b(1) & 0xC0) == 0x80) {
      c = (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
      n = 2;
    } else if ((b(0) & 0xF0) == 0xE0 && i + 2 < in.size() && (b(1) & 0xC0) == 0x80 &&
               (b(2) & 0xC0) == 0x80) {
      c = (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
      n = 3;
    }
    const bool mishandled = (c >= 0xA1 && c <= 0x499) || (c >= 0x2C5E && c <= 0x2FFF) ||
                            (c >= 0x3001 && c <= 0x3057) || (c >= 0xFB26 && c <= 0xFEFE);
    if (n > 0 && mishandled) {
      out += 'x';
      i += n;
    } else {
      out += in[i++];
    }
  }
  return out;
}

int Lines(const std::string& text) {
  return 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

void CheckValue(const FileValue& v, int lines) {
  FUZZ_CHECK(v.at.line >= 1 && v.at.line <= lines && v.at.column >= 1, v.text);
  FUZZ_CHECK(v.text.find('\0') == std::string::npos, v.text);
  if (v.key == nullptr) {
    JobSpec spec;
    spec.task = v.task;
    FUZZ_CHECK(ValidateSpec(spec).ok(), v.task);
    FUZZ_CHECK(v.text.find_first_not_of(" \t\n\r") != std::string::npos, v.text);
    return;
  }
  switch (v.key->kind) {
    case ValueKind::kInteger:
      FUZZ_CHECK(v.text == std::to_string(std::stoll(v.text)), v.text);
      break;
    case ValueKind::kBool:
      FUZZ_CHECK(v.text == "true" || v.text == "false", v.text);
      break;
    case ValueKind::kQueues: {
      const auto queues = SplitList(v.text);
      FUZZ_CHECK(!queues.empty(), v.text);
      for (const std::string& q : queues) FUZZ_CHECK(ValidateQueueName(q).ok(), q);
      FUZZ_CHECK(JoinList(queues) == v.text, v.text);
      break;
    }
    case ValueKind::kString:
    case ValueKind::kDuration:
      break;
  }
}

// The value as config check's JSON holds it.
Json Typed(const FileValue& v) {
  if (v.key == nullptr) return v.text;
  switch (v.key->kind) {
    case ValueKind::kInteger:
      return std::stoll(v.text);
    case ValueKind::kBool:
      return v.text == "true";
    case ValueKind::kQueues:
      return SplitList(v.text);
    case ValueKind::kString:
    case ValueKind::kDuration:
      break;
  }
  return v.text;
}

std::string WrittenBack(const ConfigFile& f) {
  std::string out;
  for (const std::string& section : cli::config::ConfigSections()) {
    out += "[" + section + "]\n";
    for (const FileValue& v : f.values) {
      const bool here = v.key ? v.key->section == section : section == "tasks";
      if (!here) continue;
      out += cli::config::TomlKey(v.key ? v.key->name() : v.task) + " = " +
             cli::config::TomlValue(Typed(v)) + "\n";
    }
  }
  return out;
}

std::vector<std::string> Shown(const ConfigFile& f) {
  std::vector<std::string> out;
  for (const FileValue& v : f.values) {
    out.push_back((v.key ? v.key->dotted() : "tasks." + v.task) + "=" + v.text);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace warden;
  using namespace warden::fuzz;
  const std::string text = WithoutCodePointsTomlMishandles(
      std::string(reinterpret_cast<const char*>(data), size));
  const auto file = cli::config::ParseConfig(text, kName);
  if (!file.has_value()) {
    CheckRefusal(file.error(), 500);
    const std::string& m = file.error().message();
    const std::string prefix = std::string(kName) + ":";
    FUZZ_CHECK(m.rfind(prefix, 0) == 0, m);
    const long line = std::strtol(m.c_str() + prefix.size(), nullptr, 10);
    FUZZ_CHECK(line >= 1 && line <= Lines(text) + 1, m);
    return 0;
  }
  for (const FileValue& v : file->values) CheckValue(v, Lines(text));
  const std::string back = WrittenBack(*file);
  const auto again = cli::config::ParseConfig(back, kName);
  FUZZ_CHECK(again.has_value(), again.error().message() + "\n" + back);
  FUZZ_CHECK(Shown(*again) == Shown(*file), back);
  return 0;
}
