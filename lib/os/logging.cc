#include "lib/os/logging.h"

#include <memory>

#include "fmt/format.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace topologyd::os {
namespace {

// %* in a pattern: the log message as a JSON string body (quotes, backslashes and control
// characters escaped), so every JSON line parses whatever the message holds.
class JsonEscapedMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    for (char c : std::string_view(msg.payload.data(), msg.payload.size())) {
      switch (c) {
        case '"':
          dest.append(std::string_view("\\\""));
          break;
        case '\\':
          dest.append(std::string_view("\\\\"));
          break;
        case '\n':
          dest.append(std::string_view("\\n"));
          break;
        case '\t':
          dest.append(std::string_view("\\t"));
          break;
        case '\r':
          dest.append(std::string_view("\\r"));
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            fmt::format_to(std::back_inserter(dest), "\\u{:04x}", static_cast<int>(c));
          } else {
            dest.push_back(c);
          }
      }
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonEscapedMessage>();
  }
};

}  // namespace

absl::Status ConfigureLogging(const std::string& level, const std::string& format) {
  spdlog::level::level_enum lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(fmt::format("unknown log level \"{}\"", level));
  }
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (format == "json") {
    formatter->add_flag<JsonEscapedMessage>('*').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","msg":"%*"})");
  } else if (format == "text") {
    formatter->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");
  } else {
    return absl::InvalidArgumentError(fmt::format("unknown log format \"{}\"", format));
  }
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = std::make_shared<spdlog::logger>("topologyd",
                                              std::make_shared<spdlog::sinks::stderr_sink_mt>());
    spdlog::set_default_logger(l);
    return l;
  }();
  logger->set_formatter(std::move(formatter));
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::trace);
  return absl::OkStatus();
}

}  // namespace topologyd::os
