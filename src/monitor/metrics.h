// The monitor's metrics, in Prometheus's text exposition format (version
// 0.0.4: what /metrics serves and node_exporter's textfile collector reads).
// Families are declared once with their type and help; series are the
// family's label sets. The number of series is capped (cardinality is a
// Prometheus server's cost, not only ours): a series over the cap is
// refused and counted in rdmacheck_monitor_series_refused_total.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace rdmacheck::monitor {

using Labels = std::vector<std::pair<std::string, std::string>>;

enum class MetricType { kCounter, kGauge, kHistogram };

// Valid metric and label names, as Prometheus defines them.
bool valid_metric_name(const std::string& name);
bool valid_label_name(const std::string& name);
// A label value with \, " and newline escaped.
std::string escape_label_value(const std::string& v);
// A sample value: integers as integers, +Inf, -Inf, NaN as Prometheus spells them.
std::string format_value(double v);

class Registry {
 public:
  static constexpr size_t kDefaultMaxSeries = 20000;
  explicit Registry(size_t max_series = kDefaultMaxSeries);

  // Declares a family; false when the name is invalid or declared already.
  // A histogram's BOUNDS are its buckets' upper bounds, increasing (+Inf is added).
  bool declare(const std::string& name, MetricType type, const std::string& help,
               std::vector<double> bounds = {});

  // False when the family is not declared with that type, a label name is
  // invalid, or the series would be one over the cap.
  bool add(const std::string& name, const Labels& labels, double delta = 1);  // counter
  bool set(const std::string& name, const Labels& labels, double value);      // gauge
  bool observe(const std::string& name, const Labels& labels, double value);  // histogram
  // Forgets every series of every family whose label KEY has VALUE (a peer
  // that left the peer list), so nothing grows with the fleet's history.
  void forget(const std::string& key, const std::string& value);
  // Forgets the series of family NAME whose labels include every pair of
  // MATCH (a peer's findings of its last round, before this round's are set).
  void forget_matching(const std::string& name, const Labels& match);

  // The whole registry, families in the order they were declared.
  [[nodiscard]] std::string exposition() const;
  [[nodiscard]] size_t series() const;

 private:
  struct Series {
    double value = 0;              // counter, gauge
    std::vector<uint64_t> counts;  // histogram: per bucket (not cumulative), then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  struct Family {
    std::string name;
    MetricType type = MetricType::kGauge;
    std::string help;
    std::vector<double> bounds;
    std::map<Labels, Series> series;
  };
  Series* find(const std::string& name, MetricType type, const Labels& labels);

  size_t max_series_;
  mutable std::mutex mu_;
  std::vector<Family> families_;
  size_t series_ = 0;
  uint64_t refused_ = 0;
};

}  // namespace rdmacheck::monitor
