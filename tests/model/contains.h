// A gmock-free substring assertion for the model tests (the test target links only gtest).
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace gpuplan {

/// Succeeds when `text` contains `part`; the failure message shows both.
inline ::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

}  // namespace gpuplan
