#include "monitor/metrics.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace rdmacheck::monitor {
namespace {

constexpr const char* kRefused = "rdmacheck_monitor_series_refused_total";

bool name_char(char c, bool first, bool colon) {
  const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  if (alpha || (colon && c == ':')) return true;
  return !first && c >= '0' && c <= '9';
}

bool valid_name(const std::string& n, bool colon) {
  if (n.empty()) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    if (!name_char(n[i], i == 0, colon)) return false;
  }
  return true;
}

// HELP text escapes backslash and newline; a label value also the double quote.
std::string escape(const std::string& text, bool quote) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string label_text(const Labels& labels, const std::string& extra_key = "",
                       const std::string& extra_value = "") {
  std::string out;
  for (const auto& [k, v] : labels) {
    out += fmt::format("{}{}=\"{}\"", out.empty() ? "" : ",", k, escape_label_value(v));
  }
  if (!extra_key.empty()) {
    out += fmt::format("{}{}=\"{}\"", out.empty() ? "" : ",", extra_key, extra_value);
  }
  return out.empty() ? "" : "{" + out + "}";
}

const char* type_name(MetricType t) {
  switch (t) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

bool valid_metric_name(const std::string& name) { return valid_name(name, true); }

bool valid_label_name(const std::string& name) {
  return valid_name(name, false) && name.rfind("__", 0) != 0;  // __ is Prometheus's own
}

std::string escape_label_value(const std::string& v) { return escape(v, true); }

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

Registry::Registry(size_t max_series) : max_series_(max_series) {}

bool Registry::declare(const std::string& name, MetricType type, const std::string& help,
                       std::vector<double> bounds) {
  if (!valid_metric_name(name) || name == kRefused) return false;
  if (type == MetricType::kHistogram &&
      (bounds.empty() || !std::is_sorted(bounds.begin(), bounds.end()) ||
       std::adjacent_find(bounds.begin(), bounds.end()) != bounds.end())) {
    return false;
  }
  const std::lock_guard lock(mu_);
  for (const auto& f : families_) {
    if (f.name == name) return false;
  }
  families_.push_back(Family{name, type, help, std::move(bounds), {}});
  return true;
}

Registry::Series* Registry::find(const std::string& name, MetricType type, const Labels& labels) {
  for (auto& f : families_) {
    if (f.name != name) continue;
    if (f.type != type) return nullptr;
    if (auto it = f.series.find(labels); it != f.series.end()) return &it->second;
    for (const auto& [k, v] : labels) {
      if (!valid_label_name(k) || (type == MetricType::kHistogram && k == "le")) return nullptr;
    }
    if (series_ >= max_series_) {
      ++refused_;
      return nullptr;
    }
    ++series_;
    Series s;
    if (type == MetricType::kHistogram) s.counts.assign(f.bounds.size() + 1, 0);
    return &f.series.emplace(labels, std::move(s)).first->second;
  }
  return nullptr;
}

bool Registry::add(const std::string& name, const Labels& labels, double delta) {
  if (!(delta >= 0)) return false;  // a counter only grows (NaN refused too)
  const std::lock_guard lock(mu_);
  Series* s = find(name, MetricType::kCounter, labels);
  if (s == nullptr) return false;
  s->value += delta;
  return true;
}

bool Registry::set(const std::string& name, const Labels& labels, double value) {
  const std::lock_guard lock(mu_);
  Series* s = find(name, MetricType::kGauge, labels);
  if (s == nullptr) return false;
  s->value = value;
  return true;
}

bool Registry::observe(const std::string& name, const Labels& labels, double value) {
  if (std::isnan(value)) return false;
  const std::lock_guard lock(mu_);
  Series* s = find(name, MetricType::kHistogram, labels);
  if (s == nullptr) return false;
  for (const auto& f : families_) {
    if (f.name != name) continue;
    const auto at = std::lower_bound(f.bounds.begin(), f.bounds.end(), value) - f.bounds.begin();
    ++s->counts[static_cast<size_t>(at)];
    break;
  }
  s->sum += value;
  ++s->count;
  return true;
}

void Registry::forget(const std::string& key, const std::string& value) {
  const std::lock_guard lock(mu_);
  for (auto& f : families_) {
    for (auto it = f.series.begin(); it != f.series.end();) {
      const bool match = std::any_of(it->first.begin(), it->first.end(), [&](const auto& kv) {
        return kv.first == key && kv.second == value;
      });
      if (match) {
        it = f.series.erase(it);
        --series_;
      } else {
        ++it;
      }
    }
  }
}

void Registry::forget_matching(const std::string& name, const Labels& match) {
  const std::lock_guard lock(mu_);
  for (auto& f : families_) {
    if (f.name != name) continue;
    for (auto it = f.series.begin(); it != f.series.end();) {
      const bool all = std::all_of(match.begin(), match.end(), [&](const auto& kv) {
        return std::find(it->first.begin(), it->first.end(), kv) != it->first.end();
      });
      if (all) {
        it = f.series.erase(it);
        --series_;
      } else {
        ++it;
      }
    }
  }
}

size_t Registry::series() const {
  const std::lock_guard lock(mu_);
  return series_;
}

std::string Registry::exposition() const {
  const std::lock_guard lock(mu_);
  std::string out;
  for (const auto& f : families_) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f.name, escape(f.help, false), f.name,
                       type_name(f.type));
    for (const auto& [labels, s] : f.series) {
      if (f.type != MetricType::kHistogram) {
        out += fmt::format("{}{} {}\n", f.name, label_text(labels), format_value(s.value));
        continue;
      }
      uint64_t cumulative = 0;
      for (size_t b = 0; b < f.bounds.size(); ++b) {
        cumulative += s.counts[b];
        out += fmt::format("{}_bucket{} {}\n", f.name,
                           label_text(labels, "le", format_value(f.bounds[b])), cumulative);
      }
      out += fmt::format("{}_bucket{} {}\n", f.name, label_text(labels, "le", "+Inf"), s.count);
      out += fmt::format("{}_sum{} {}\n", f.name, label_text(labels), format_value(s.sum));
      out += fmt::format("{}_count{} {}\n", f.name, label_text(labels), s.count);
    }
  }
  out += fmt::format(
      "# HELP {} Series the monitor did not create because its cap ({}) was reached\n"
      "# TYPE {} counter\n{} {}\n",
      kRefused, max_series_, kRefused, kRefused, refused_);
  return out;
}

}  // namespace rdmacheck::monitor
