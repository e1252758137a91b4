// Parsing a configuration text in config tests.
#pragma once

#include <string>
#include <string_view>

#include "gtest/gtest.h"

#include "lib/config/config_loader.h"

namespace topologyd::config::testing {

// The loader's message for `yaml`; a test failure (and "") when it is accepted.
inline std::string ErrorOf(std::string_view yaml) {
  auto config = ParseConfig(yaml, "test.yaml");
  EXPECT_FALSE(config.ok()) << "accepted:\n" << yaml;
  return config.ok() ? "" : std::string(config.status().message());
}

// The configuration `yaml` gives; a test failure (and the defaults) when it is refused.
inline Config MustParse(std::string_view yaml) {
  auto config = ParseConfig(yaml, "test.yaml");
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : Config{};
}

}  // namespace topologyd::config::testing
