#!/usr/bin/env bash
# The Prometheus side of FleetLab (tests/lab/fleet_lab_test.cc), run on h1:
# Debian's Prometheus scrapes every guest's `rdmacheck monitor` and
# evaluates the shipped rules (contrib/prometheus/rdmacheck-rules.yml) with
# their windows scaled to the lab's minutes: [5m] -> [30s], for: 2m -> 10s,
# 1m -> 6s, 5m -> 30s (what the rules compare is unchanged). What it sees is
# read from Prometheus's HTTP API, never from the daemons, and printed a
# fact a line for the test to hold:
#   pairs-up N / rtt-pairs N / turnaround-pairs N   before any fault
#   loss-alert after N s                            h3's port loses (the lab's switch):
#                                                   from the first probe lost to h3 to firing
#   stall-alert after N s                           h4's serve is stopped (SIGSTOP)
#   resolved after N s                              everything healed, no alert firing
#   seen ALERT PEER                                 every alert that ever fired
# Usage: prometheus_fleet.sh start RULES   (h1's setup: Prometheus starts
#          while the other guests still boot; it takes a minute under TCG)
#        prometheus_fleet.sh drive SIGNAL_DIR   (h1's run; SIGNAL_DIR:
#          /run/lab/h1, seen by every guest)
set -u
api=http://127.0.0.1:9090/api/v1
t0=$(date +%s)
now() { echo $(($(date +%s) - t0)); }
q() { # q PROMQL: the first result's value, or "none"
  curl -s -m 5 --data-urlencode "query=$1" "$api/query" | jq -r '.data.result[0].value[1] // "none"'
}
firing() { # the firing alerts, one "NAME PEER" a line
  curl -s -m 5 "$api/alerts" |
    jq -r '.data.alerts[] | select(.state == "firing") | "\(.labels.alertname) \(.labels.peer // "-")"'
}
series() { # series PROMQL: each result as "LABELS VALUE"
  curl -s -m 5 --data-urlencode "query=$1" "$api/query" |
    jq -r '.data.result[] | "\(.metric | del(.__name__, .job, .instance) | to_entries | map("\(.key)=\(.value)") | join(",")) \(.value[1])"'
}
# Records the firing set in /tmp/now (and every one ever seen in /tmp/seen);
# prints it, with the rules' view of each host, whenever it changes.
last=""
note_seen() {
  firing | sort > /tmp/now
  cat /tmp/now >> /tmp/seen
  local cur
  cur=$(tr '\n' ';' < /tmp/now)
  if [ "$cur" != "$last" ]; then
    echo "t=$(now) firing: ${cur:-nothing}"
    echo "  lossy: $(series 'rdmacheck:peer_lossy_fraction > 0' | tr '\n' ' ')"
    echo "  stalled: $(series 'rdmacheck:peer_stalled_fraction > 0' | tr '\n' ' ')"
    echo "  memory: $(free -m | awk '/^Mem:/ {print $3 " MiB used, " $7 " MiB available"}')"
    last=$cur
  fi
}

if [ "$1" = start ]; then
  sed -e 's/\[5m\]/[30s]/g' -e 's/for: 2m/for: 10s/' -e 's/for: 1m/for: 6s/' \
    -e 's/for: 5m/for: 30s/' "$2" > /tmp/rules.yml
  cat > /tmp/prometheus.yml <<'EOF'
global:
  scrape_interval: 2s
  scrape_timeout: 2s
  evaluation_interval: 2s
rule_files: ['/tmp/rules.yml']
scrape_configs:
  - job_name: rdmacheck
    static_configs:
      - targets: ['h1:9479', 'h2:9479', 'h3:9479', 'h4:9479']
EOF
  promtool check config /tmp/prometheus.yml > /dev/null || { echo "config refused"; exit 1; }
  prometheus --config.file=/tmp/prometheus.yml --storage.tsdb.path=/tmp/prom \
    --web.listen-address=127.0.0.1:9090 > /tmp/prom.log 2>&1 &
  echo $! > /tmp/prom.pid
  exit 0
fi
sig=$2
trap 'echo "driver exits ($?) at $(now) s" >&2; kill "$(cat /tmp/prom.pid)" 2> /dev/null; touch "$sig/finished"' EXIT
for _ in $(seq 1200); do
  curl -sf -m 2 http://127.0.0.1:9090/-/ready > /dev/null && break
  sleep 0.1
done
curl -sf -m 2 http://127.0.0.1:9090/-/ready > /dev/null || { echo "prometheus never ready"; tail /tmp/prom.log; exit 1; }
echo "prometheus ready after $(now) s"

# 1: all 12 directed pairs up over RC, with round trips and the responders' turnaround.
# Over the last minute: a scrape that failed (h3's port may be losing by
# now) leaves its series stale for a moment.
for _ in $(seq 120); do
  up=$(q 'count(max_over_time(rdmacheck_peer_up{transport="rc"}[1m]) == 1)')
  rtt=$(q 'count(max_over_time(rdmacheck_probe_rtt_seconds_count{transport="rc"}[1m]) > 0)')
  [ "$up" = 12 ] && [ "$rtt" = 12 ] && break
  sleep 1
done
echo "pairs-up $up"
echo "rtt-pairs $rtt"
echo "turnaround-pairs $(q 'count(max_over_time(rdmacheck_probe_turnaround_seconds_count[1m]) > 0)')"
echo "network-rtt-pairs $(q 'count(max_over_time(rdmacheck_probe_network_rtt_seconds_count[1m]) > 0)')"

# 2: the lab's switch loses 5 % on h3's port (--fault-at): h3 or its link, nobody else.
num() { case $1 in '' | *[!0-9.]*) return 1 ;; esac; }
deadline=$(($(now) + 240))
lost_seen=""
while [ "$(now)" -lt $deadline ]; do
  note_seen
  if [ -z "$lost_seen" ] && num "$(q 'sum(rdmacheck_probes_lost_total{peer="h3"}) > 0')"; then
    lost_seen=$(now)
  fi
  grep -q '^RdmacheckHostOrLink h3$' /tmp/now && break
  sleep 2
done
if grep -q '^RdmacheckHostOrLink h3$' /tmp/now; then
  # From Prometheus's own record where it has it: the first sample with a
  # probe lost to h3, and when the alert went pending (it fires its for:,
  # 10 s, later); else from when this loop first saw a lost probe.
  first=$(q 'min_over_time((timestamp(sum(rdmacheck_probes_lost_total{peer="h3"}) > 0))[10m:1s])')
  active=$(q 'ALERTS_FOR_STATE{alertname="RdmacheckHostOrLink"}')
  if num "$first" && num "$active"; then
    echo "loss-alert after $((${active%.*} + 10 - ${first%.*})) s"
  else
    echo "loss-alert after $(($(now) - ${lost_seen:-0})) s (first=$first active=$active)"
  fi
else
  echo "loss-alert never"
fi

# 3: h4's serve stops: a host stall, not its link.
touch "$sig/stall-h4"
for _ in $(seq 60); do [ -e /run/lab/h4/stopped ] && break; sleep 0.5; done
stopped=$(now)
while [ "$(now)" -lt $((stopped + 150)) ]; do
  note_seen
  grep -q '^RdmacheckHostStall h4$' /tmp/now && break
  sleep 2
done
if grep -q '^RdmacheckHostStall h4$' /tmp/now; then
  echo "stall-alert after $(($(now) - stopped)) s"
else
  echo "stall-alert never"
fi
touch "$sig/resume-h4"

# 4: healed (h4 resumed; the lab ends h3's loss with --fault-until): every alert resolves.
healed=$(now)
while [ "$(now)" -lt $((healed + 150)) ]; do
  note_seen
  [ -s /tmp/now ] || break
  sleep 2
done
if [ -s /tmp/now ]; then
  echo "resolved never: $(tr '\n' ';' < /tmp/now)"
else
  echo "resolved after $(($(now) - healed)) s"
fi
sort -u /tmp/seen | sed 's/^/seen /'
echo "done after $(now) s"
# What each prober counted of h3 and h4, for the record (and a failure's trace).
series 'rdmacheck_probes_unanswered_total{peer=~"h3|h4"} > 0' | sed 's/^/unanswered /'
series 'rdmacheck_probes_lost_total{peer=~"h3|h4"} > 0' | sed 's/^/lost /'
series 'rdmacheck_probe_errors_total{peer=~"h3|h4"}' | sed 's/^/errors /'
