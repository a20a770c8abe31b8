#include "runtime/checkpoint_writer.h"

#include <utility>

namespace warden {

CheckpointWriter::CheckpointWriter(Env& env, SaveFn save, std::function<void()> on_fenced)
    : env_(env), save_(std::move(save)), on_fenced_(std::move(on_fenced)) {}

CheckpointWriter::~CheckpointWriter() { Finish(); }

void CheckpointWriter::Submit(Json checkpoint) {
  MutexLock lock(mu_);
  if (done_) return;
  pending_ = std::move(checkpoint);
  ++submitted_;
  if (!thread_) {
    thread_ = env_.StartThread([this] { Loop(); });
  } else {
    cv_.NotifyOne();
  }
}

Status CheckpointWriter::SaveAndWait(Json checkpoint, const std::function<bool()>& give_up) {
  Submit(std::move(checkpoint));
  UniqueMutexLock lock(mu_);
  if (done_) return FailedPrecondition("the job has ended; its checkpoint was not saved");
  const int64_t mine = submitted_;
  while (settled_ < mine) {
    if (give_up()) {
      return FailedPrecondition("this attempt must stop; its checkpoint may or may not be saved");
    }
    cv_.WaitFor(lock, Millis(10));
  }
  return last_;
}

std::string CheckpointWriter::Finish() {
  {
    MutexLock lock(mu_);
    done_ = true;
  }
  cv_.NotifyOne();
  if (thread_) thread_->Join();
  MutexLock lock(mu_);
  return errors_;
}

void CheckpointWriter::Loop() {
  UniqueMutexLock lock(mu_);
  while (true) {
    cv_.Wait(lock, [&]() REQUIRES(mu_) { return done_ || pending_.has_value(); });
    if (!pending_) return;  // done, and nothing left to write
    Json checkpoint = std::move(*pending_);
    pending_.reset();
    const int64_t seq = submitted_;
    lock.Unlock();
    Result<bool> saved = save_(checkpoint);
    if (saved.has_value() && !*saved) on_fenced_();
    lock.Lock();
    settled_ = seq;
    if (!saved.has_value()) {
      last_ = saved.error();
      if (errors_.size() < 4096) {
        errors_ += "warden: checkpoint not saved: " + saved.error().ToString() + "\n";
      }
    } else if (!*saved) {
      last_ = FailedPrecondition("this attempt was fenced off; stop working on it");
    } else {
      last_ = Status::Ok();
    }
    cv_.NotifyAll();
  }
}

}  // namespace warden
