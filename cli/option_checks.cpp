// Checks of option values as typed, shared by every command (cli/option_checks.h).
#include "cli/option_checks.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace gpuplan {

CLI::Validator PositiveInteger() {
  return CLI::Validator(
      [](std::string& value) {
        char* end = nullptr;
        const long long v = std::strtoll(value.c_str(), &end, 10);
        return !value.empty() && *end == '\0' && v > 0
                   ? std::string()
                   : "must be a positive integer, got '" + value + "'";
      },
      "");
}

void CheckOptionValues(CLI::App* app) {
  const CLI::Validator given(
      [](std::string& value) {
        return value.empty() ? std::string("an empty value is not allowed") : std::string();
      },
      "");
  const CLI::Validator decimal(
      [](std::string& value) {
        size_t i = !value.empty() && value[0] == '-' ? 1 : 0;
        const bool digits =
            i < value.size() && value.find_first_not_of("0123456789", i) == std::string::npos;
        const bool leading_zero = value.size() > i + 1 && value[i] == '0';
        if (!digits || leading_zero) {
          return "'" + value + "' is not a decimal integer (digits, no leading zero)";
        }
        errno = 0;
        (void)std::strtoll(value.c_str(), nullptr, 10);
        return errno == ERANGE ? "'" + value + "' is out of range (at most 9223372036854775807)"
                               : std::string();
      },
      "");
  // CLI11 reads "nan" and "inf" into a double; no option means either.
  const CLI::Validator finite(
      [](std::string& value) {
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        return *end == '\0' && !std::isfinite(v) ? "'" + value + "' is not a finite number"
                                                 : std::string();
      },
      "");
  std::vector<CLI::App*> apps = {app};
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) apps.push_back(sub);
  for (CLI::App* a : apps) {
    for (CLI::Option* opt : a->get_options()) {
      // Flags take no value; an option whose value may be left out (--sweep [FILE]) has none to
      // check when it is.
      if (opt->get_type_size() == 0 || opt->get_items_expected_min() == 0) continue;
      opt->check(given);
      if (opt->get_type_name() == "INT" || opt->get_type_name() == "UINT") opt->check(decimal);
      if (opt->get_type_name() == "FLOAT") opt->check(finite);
    }
  }
}

}  // namespace gpuplan
