// warden add --batch [TASK] [--cmd 'SHELL'] [FLAGS] < jobs.ndjson
//
// Two passes, so that a bad line anywhere stores nothing while the memory a
// batch takes stays bounded however long it is: the first reads and checks
// every line and keeps the good ones in a temporary file; the second reads
// them back and enqueues them, kMaxBatchJobs to a transaction.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>

#include "cli/add_batch.h"
#include "cli/render.h"
#include "warden/job_json.h"
#include "warden/plural.h"
#include "warden/text.h"

namespace warden::cli {
namespace {

// A kind of job as workers serve it: queue, task, command or not
// (Client::AnyWorkerRuns answers the same for every job of a kind).
using KindKey = std::tuple<std::string, std::string, bool>;
KindKey KindKeyOf(const JobSpec& spec) { return {spec.queue, spec.task, !spec.command.empty()}; }

// The lines that passed the first pass, "NUMBER TEXT\n" each (a good line
// holds no line break and no NUL), in a file of $TMPDIR (else /tmp) that is
// unlinked at once: it goes when the process ends, however it ends.
class Spool {
 public:
  Spool() = default;
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;
  ~Spool() {
    if (file_ != nullptr) std::fclose(file_);
    std::free(line_);
  }

  Status Open() {
    const char* tmp = std::getenv("TMPDIR");
    dir_ = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    std::string path = dir_ + "/warden-batch-XXXXXX";
    const int fd = mkostemp(path.data(), O_CLOEXEC);
    if (fd < 0) return Failed("create");
    unlink(path.c_str());
    file_ = fdopen(fd, "w+");
    if (file_ == nullptr) {
      close(fd);
      return Failed("open");
    }
    return Status::Ok();
  }
  Status Add(int64_t number, const std::string& text) {
    if (std::fprintf(file_, "%" PRId64 " ", number) < 0 ||
        std::fwrite(text.data(), 1, text.size(), file_) != text.size() ||
        std::fputc('\n', file_) == EOF) {
      return Failed("write");
    }
    return Status::Ok();
  }
  // Ends the writing; Next then reads from the start.
  Status Rewind() {
    if (std::fflush(file_) != 0 || std::fseek(file_, 0, SEEK_SET) != 0) return Failed("write");
    return Status::Ok();
  }
  // The next line kept; false at the end (or on a read error: `error()`).
  bool Next(int64_t* number, std::string_view* text) {
    const ssize_t n = getline(&line_, &capacity_, file_);
    if (n <= 0) return false;
    char* rest = nullptr;
    *number = std::strtoll(line_, &rest, 10);
    *text = std::string_view(rest + 1, static_cast<size_t>(line_ + n - 1 - (rest + 1)));
    return true;
  }
  Status error() { return std::ferror(file_) ? Failed("read") : Status::Ok(); }

 private:
  Status Failed(const char* what) const {
    return Unavailable(std::string("cannot ") + what + " the batch's temporary file in " + dir_ +
                       " (it holds the checked lines until they are stored; "
                       "TMPDIR moves it): " +
                       std::strerror(errno));
  }
  std::string dir_;
  std::FILE* file_ = nullptr;
  char* line_ = nullptr;
  size_t capacity_ = 0;
};

// Jobs a worker would pick by the same rule (Client::AnyWorkerRuns): one
// question per kind, not per job.
struct JobKind {
  JobSpec sample;
  int64_t created = 0;
  std::optional<bool> served;  // unknown: not asked, or the question failed
};
// Past this many kinds, `served` is left unknown (null) rather than asking
// the store once for each.
constexpr size_t kMaxKindsAsked = 64;

struct Stored {
  JobId id;
  bool created;
  uint32_t kind;
};

class BatchRun {
 public:
  BatchRun(Client& client, const Globals& g, const JobJsonOptions& options)
      : client_(client), g_(g), options_(options) {}

  // Enqueues what `spool` holds, `total` jobs.
  int Run(Spool& spool, int64_t total) {
    int64_t number = 0;
    std::string_view text;
    while (spool.Next(&number, &text)) {
      // Read as in the first pass (the same options, the same now): it
      // cannot fail unless the file changed under us.
      auto spec = JobSpecFromJsonText(text, options_);
      if (!spec.has_value()) {
        return Failed(Internal("line " + std::to_string(number) +
                               " reads differently now: " + spec.error().message()),
                      total);
      }
      chunk_.push_back(std::move(spec).value());
      chunk_lines_.push_back(number);
      if (chunk_.size() == kMaxBatchJobs) {
        if (Status s = Commit(); !s.ok()) return Failed(s, total);
      }
    }
    if (Status s = spool.error(); !s.ok()) return Failed(s, total);
    if (Status s = Commit(); !s.ok()) return Failed(s, total);
    AskServed();
    NoteUnserved();  // on stderr, --json or not, as `warden add` says it
    if (g_.json) PrintRows();
    return 0;
  }

 private:
  Status Commit() {
    if (chunk_.empty()) return Status::Ok();
    auto results = client_.EnqueueMany(chunk_);
    if (!results.has_value()) return results.error();
    for (size_t i = 0; i < chunk_.size(); ++i) {
      const EnqueueResult& r = (*results)[i];
      const uint32_t kind = KindOf(chunk_[i]);
      if (r.created) ++kinds_[kind].created;
      if (g_.json) {
        stored_.push_back({r.id, r.created, kind});
        continue;
      }
      // stdout is the ids alone, a line each, as `warden add` prints one.
      std::cout << r.id << "\n";
      if (!r.created) {
        std::cerr << "warden: line " << chunk_lines_[i] << ": job " << r.id
                  << " already exists with that unique key; nothing was added\n";
      }
    }
    std::cout.flush();
    committed_ += static_cast<int64_t>(chunk_.size());
    last_line_ = chunk_lines_.back();
    chunk_.clear();
    chunk_lines_.clear();
    return Status::Ok();
  }

  uint32_t KindOf(const JobSpec& spec) {
    auto [it, added] = kind_index_.try_emplace(KindKeyOf(spec), kinds_.size());
    if (added) kinds_.push_back(JobKind{spec, 0, std::nullopt});
    return it->second;
  }

  void AskServed() {
    for (size_t k = 0; k < kinds_.size() && k < kMaxKindsAsked; ++k) {
      auto served = client_.AnyWorkerRuns(kinds_[k].sample);
      if (served.has_value()) kinds_[k].served = *served;
    }
  }

  // Said, never refused: the jobs are stored, and wait for their worker.
  void NoteUnserved() const {
    for (const JobKind& k : kinds_) {
      if (k.created == 0 || k.served.value_or(true)) continue;
      const std::string what =
          k.sample.command.empty() ? "task " + OneLine(k.sample.task, 60) : "command jobs";
      std::cerr << "warden: note: no active worker runs " << what << " on queue "
                << OneLine(k.sample.queue, 60) << " yet: " << Plural(k.created, "new job")
                << (k.created == 1 ? " waits" : " wait") << " until one does ("
                << WhoWouldRun(k.sample) << ")\n";
    }
  }

  Json Row(const Stored& row) const {
    const std::optional<bool>& served = kinds_[row.kind].served;
    return {{"id", row.id},
            {"created", row.created},
            {"served", served.has_value() ? Json(*served) : Json()}};
  }
  // One array, a job an element on a line of its own, written as it goes
  // rather than built first: a batch may be millions of jobs long.
  void PrintRows() const {
    std::cout << "[";
    for (size_t i = 0; i < stored_.size(); ++i) {
      std::cout << (i == 0 ? "\n  " : ",\n  ") << Row(stored_[i]).dump();
    }
    std::cout << (stored_.empty() ? "]\n" : "\n]\n");
  }

  // A later transaction failed: what the earlier ones stored stays stored,
  // and is said (text: their ids are already on stdout; --json: "jobs").
  int Failed(const Status& s, int64_t total) const {
    if (committed_ == 0) return Fail(s);
    const Status partial(s.code(), "stored " + std::to_string(committed_) + " of " +
                                       Plural(total, "job") + " (lines 1 to " +
                                       std::to_string(last_line_) +
                                       (g_.json ? "" : "; their ids are on stdout") +
                                       "), not the rest: " + s.message());
    if (!g_.json) return Fail(partial);
    Json jobs = Json::array();
    for (const Stored& row : stored_) jobs.push_back(Row(row));
    return FailWith(partial, {{"jobs", jobs}});
  }

  Client& client_;
  const Globals& g_;
  const JobJsonOptions& options_;
  std::vector<JobSpec> chunk_;
  std::vector<int64_t> chunk_lines_;
  int64_t committed_ = 0, last_line_ = 0;
  std::vector<Stored> stored_;  // --json only
  std::vector<JobKind> kinds_;
  std::map<KindKey, uint32_t> kind_index_;
};

// `--require-worker`: the batch's kinds of job (queue, task, command or
// not), each with its first line and count, asked of the live workers
// before anything is stored.
class RequiredWorkers {
 public:
  void Add(const JobLine& line) {
    auto [it, added] = kinds_.try_emplace(KindKeyOf(line.spec), Kind{line.spec, line.number});
    ++it->second.jobs;
  }

  // FailedPrecondition naming the first line of a kind no worker runs.
  Status Check(Client& client) const {
    const Kind* first = nullptr;
    size_t unserved = 0;
    for (const auto& [key, kind] : kinds_) {
      WARDEN_ASSIGN_OR_RETURN(bool served, client.AnyWorkerRuns(kind.sample));
      if (served) continue;
      ++unserved;
      if (first == nullptr || kind.first_line < first->first_line) first = &kind;
    }
    if (first == nullptr) return Status::Ok();
    std::string more;
    if (unserved > 1) {
      more = ", and " + Plural(static_cast<int64_t>(unserved - 1), "other kind") +
             " of job no worker runs";
    }
    return FailedPrecondition("line " + std::to_string(first->first_line) + ": " +
                              NoWorkerRuns(first->sample) + "; nothing was added (" +
                              Plural(first->jobs, "job") + " like it" + more + ")");
  }

 private:
  struct Kind {
    JobSpec sample;
    int64_t first_line = 0;
    int64_t jobs = 0;
  };
  std::map<KindKey, Kind> kinds_;
};

}  // namespace

int AddBatch(const JobSpec& defaults, const Globals& g, std::istream& in, bool require_worker) {
  JobJsonOptions options;
  options.defaults = defaults;
  options.now = NowMs();  // one instant for both passes
  Spool spool;
  if (Status s = spool.Open(); !s.ok()) return Fail(s);
  JobLineReader reader(in, options);
  RequiredWorkers required;
  int64_t total = 0;
  while (true) {
    auto line = reader.Next();
    if (!line.has_value()) return Fail(line.error());
    if (!*line) break;
    if (Status s = spool.Add((*line)->number, (*line)->text); !s.ok()) return Fail(s);
    if (require_worker) required.Add(**line);
    ++total;
  }
  if (Status s = spool.Rewind(); !s.ok()) return Fail(s);
  auto client = OpenClient(g);
  if (!client.has_value()) return Fail(client.error());
  if (require_worker) {
    if (Status s = required.Check(**client); !s.ok()) return Fail(s);
  }
  return BatchRun(**client, g, options).Run(spool, total);
}

}  // namespace warden::cli
