// Checks of option values as the user typed them, before CLI11 converts them.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuplan {

/// An integer option's value must be above 0 ("must be a positive integer, got '0'"), for
/// options where 0 has no meaning rather than meaning "not given".
CLI::Validator PositiveInteger();

/// Adds to every option of `app` and its subcommands that takes a value: an empty value is an
/// error (not the option's default), an integer must be decimal and fit an int64_t (CLI11 alone
/// reads "010" as octal 8, "0x8" as hex, and clamps 2^64), and a number must be finite (CLI11
/// reads "nan" and "inf"). Call after every command has attached its options.
void CheckOptionValues(CLI::App* app);

}  // namespace gpuplan
