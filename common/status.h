// Errors as values. Libraries return Status or Expected<T>; only main() turns them into exit codes.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace gpuplan {

/// Why an operation failed. `kInvalidInput` means the user gave something wrong (exit code 2 in the
/// CLI); `kUnavailable` means the environment lacks something (no GPU, no file); `kInternal` is a
/// bug; `kCancelled` means the caller asked a long operation to stop (the GUI's Cancel);
/// `kNotFound` means a valid question has no answer (the planner found no plan: exit code 3).
enum class ErrorKind { kInvalidInput, kUnavailable, kInternal, kCancelled, kNotFound };

/// Ok, or an error with a one-line human-readable message that names the file/field at fault.
class Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Invalid(std::string message) {
    return Status(ErrorKind::kInvalidInput, std::move(message));
  }
  static Status Unavailable(std::string message) {
    return Status(ErrorKind::kUnavailable, std::move(message));
  }
  static Status Internal(std::string message) {
    return Status(ErrorKind::kInternal, std::move(message));
  }
  static Status Cancelled(std::string message) {
    return Status(ErrorKind::kCancelled, std::move(message));
  }
  static Status NotFound(std::string message) {
    return Status(ErrorKind::kNotFound, std::move(message));
  }

  bool ok() const { return !failed_; }
  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }

  /// Returns a copy whose message is "prefix: message" (adds context while propagating).
  Status WithPrefix(const std::string& prefix) const {
    return failed_ ? Status(kind_, prefix + ": " + message_) : *this;
  }

 private:
  Status(ErrorKind kind, std::string message)
      : failed_(true), kind_(kind), message_(std::move(message)) {}
  bool failed_ = false;
  ErrorKind kind_ = ErrorKind::kInternal;
  std::string message_;
};

/// A value of T, or the Status explaining why there is none.
template <typename T>
class Expected {
 public:
  Expected(T value) : data_(std::move(value)) {}         // NOLINT: implicit by design
  Expected(Status status) : data_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(data_);
  }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace gpuplan

/// Propagates a failed Status from an expression returning Status.
#define GPUPLAN_RETURN_IF_ERROR(expr) \
  do {                                \
    ::gpuplan::Status _st = (expr);   \
    if (!_st.ok()) return _st;        \
  } while (0)
