// Renders the rdmacheck check report embedded in #report-data: the verdict and
// the ticket header first, then the numbers (with the link's rate), the
// charts, the pings, both hosts' doctors and the evidence.
// Tests read the page through ids and data- attributes (src/testing/check_page.cc).
// check/html.cc runs it inside the common page function, which holds doc, $
// and main; its own section and table (with ids) shadow the common ones.
(function () {
  const section = (id, title) => {
    const s = $('section', {id}, $('h2', {}, title));
    main.append(s);
    return s;
  };
  const table = (id, head, rows) => $('table', id ? {id} : {},
      $('tr', {}, ...head.map((h) => $('th', {}, h))),
      ...rows.map((r) => Array.isArray(r) ? $('tr', {}, ...r.map((c) => $('td', {}, c ?? ''))) : r));
  const row = (cls, cells) => $('tr', {class: cls}, ...cells.map((c) => $('td', {}, c ?? '')));
  const st = (s) => $('span', {class: 'st ' + s}, s.replace('_', ' ').toUpperCase());

  // Units as people read them: message sizes in bytes with binary prefixes.
  const bytes = (n) => n >= 1 << 20 && n % (1 << 20) === 0 ? `${n / (1 << 20)} MiB`
      : n >= 1024 && n % 1024 === 0 ? `${n / 1024} KiB` : `${n} B`;
  const num = (x, digits) => typeof x === 'number' ? x.toFixed(digits) : '';
  // perf/units.cc's rate_text: the unit the rate reaches 1 in, three digits.
  const sig = (x) => x <= 0 ? '0' : x.toFixed(Math.max(0, 2 - Math.floor(Math.log10(Number(x.toPrecision(3))))));
  const rate = (mpps) => {
    if (typeof mpps !== 'number') return '';
    for (const [per, unit] of [[1, 'Mpps'], [1e3, 'kpps']]) {
      if (Number((mpps * per).toPrecision(3)) >= 1) return `${sig(mpps * per)} ${unit}`;
    }
    return `${sig(mpps * 1e6)} pps`;
  };
  // A bandwidth run's spread over its intervals; absent in older documents.
  const spread = (i) => i ? `${sig(i.min_gbps)} / ${sig(i.median_gbps)} / ${sig(i.p99_gbps)} over ${i.count}` : '';
  const us = (x) => typeof x !== 'number' ? '' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);

  // Debian's Chart.js 3.9 has no default palette: every series names its colour.
  // One colour per operation; the second direction of a bidirectional run is lighter.
  const kOpColour = {write: '#1f77b4', read: '#ff7f0e', send: '#2ca02c', write_imm: '#9467bd',
                     atomic_fadd: '#d62728', atomic_cswap: '#8c564b'};
  const kTransportColour = {rc: '#17becf', ud: '#bcbd22', cm: '#e377c2', tcp: '#7f7f7f'};
  const kLinkColour = '#b8860b';
  const lighter = (hex) => '#' + [1, 3, 5].map((i) => Math.round(
      parseInt(hex.substr(i, 2), 16) * 0.55 + 255 * 0.45).toString(16).padStart(2, '0')).join('');
  // Which way the data of an operation flows, seen from this host.
  const flow = (op) => op === 'read' ? 'server → here' : op.startsWith('atomic') ? 'both ways' : 'here → server';

  // The title and the verdict: the answer before the evidence.
  const verdict = ['pass', 'warn', 'fail'][doc.exit_status] || 'fail';
  document.getElementById('title').textContent = `rdmacheck check ${doc.host} (port ${doc.port})`;
  const head = section('verdict-section', 'Verdict');
  head.append($('p', {id: 'verdict', class: 'verdict ' + verdict}, st(verdict),
      verdict === 'pass' ? ' every layer passed' : ` exit status ${doc.exit_status}`));
  if (doc.top_findings.length) {
    head.append($('ul', {id: 'top-findings'}, ...doc.top_findings.map((f) =>
        $('li', {}, st(f.severity), ` ${f.id}: ${f.summary}`))));
  }
  head.append(table('layers', ['layer', 'status', 'time', 'note'], doc.layers.map((l) => [
    l.layer, st(l.status), l.status === 'not_run' ? '' : l.seconds.toFixed(1) + ' s', l.not_run_reason])));
  if (doc.expired_in) head.append($('p', {class: 'warn'}, `The deadline passed during ${doc.expired_in}.`));

  // The ticket header: what a support ticket needs, as the text report starts with it.
  const t = doc.ticket;
  const run = section('run', 'Run');
  run.append(table('ticket', ['', ''], [
    ['timestamp', t.timestamp],
    ['command', $('code', {}, t.command_line)],
    ['rdmacheck', `${t.version} here, ${doc.peer ? doc.peer.version : '?'} on the server`],
    ['kernel', t.kernel],
    ['rdma-core', t.rdma_core],
    ...t.devices.map((d) => [`device ${d.name}`,
      `firmware ${d.fw_ver || 'none'}, board ${d.board_id || 'none'}`]),
    ['priority', `traffic class ${doc.priority.traffic_class}, service level ${doc.priority.sl}` +
      ` (${doc.priority.source}: ${doc.priority.why})`],
    ['total', `${(doc.elapsed_ms / 1000).toFixed(1)} s, exit status ${doc.exit_status}`]]));

  // The link's rate from the facts: the slower port of the two ends.
  const rates = [doc.local, doc.peer].filter((h) => h && h.rate_gbps > 0).map((h) => h.rate_gbps);
  const link = rates.length ? Math.min(...rates) : 0;

  // The numbers.
  const res = section('results', 'Results');
  const bw = doc.perf.filter((p) => p.command === 'bw');
  const lat = doc.perf.filter((p) => p.command === 'lat');
  if (link) {
    res.append($('p', {id: 'link-rate'}, `Link rate ${link} Gb/s: the slower port of this host ` +
        `(${doc.local ? doc.local.rate_gbps : '?'} Gb/s) and the server ` +
        `(${doc.peer ? doc.peer.rate_gbps : '?'} Gb/s), the dashed line on the bandwidth chart.`));
  }
  const cpu = (p) => p.cpu && p.cpu.local ? `${num(p.cpu.local.percent, 0)} % / ${num(p.cpu.peer && p.cpu.peer.percent, 0)} %` : '';
  const bwRows = [];
  for (const p of bw) {
    if (!p.ok && !p.results.length) bwRows.push(row('failed', [p.spec.op, p.spec.transport, '', '', `failed: ${p.error}`]));
    for (const r of p.results) {
      const dir = r.directions ? `both: out ${num(r.directions.out_gbps, 3)}, in ${num(r.directions.in_gbps, 3)}` : flow(p.spec.op);
      bwRows.push(row('result', [p.spec.op, p.spec.transport, dir, bytes(r.size), num(r.avg_gbps, 3),
        num(r.peak_gbps, 3), spread(r.intervals), rate(r.mpps), link ? num(100 * r.avg_gbps / link, 1) + ' %' : '', cpu(p)]));
    }
  }
  const tb = doc.tcp_baseline;
  if (tb && tb.ok) {
    bwRows.push(row('baseline', ['TCP stream', 'tcp', 'here → server', '', num(tb.gbps, 3), '', '', '',
      link ? num(100 * tb.gbps / link, 1) + ' %' : '', `${num(tb.client_cpu_percent, 0)} % / ${num(tb.server_cpu_percent, 0)} %`]));
  }
  if (bwRows.length) {
    res.append($('h3', {}, 'Bandwidth'), table('bw-results', ['operation', 'transport', 'data flows',
      'message', 'Gb/s', 'peak Gb/s', 'min / median / p99 Gb/s over intervals', 'message rate', 'of link', 'CPU here / server'], bwRows));
  }
  const latRows = [];
  for (const p of lat) {
    if (!p.ok && !p.results.length) latRows.push(row('failed', [p.spec.op, p.spec.transport, '', `failed: ${p.error}`]));
    for (const r of p.results) {
      latRows.push(row('result', [p.spec.op, p.spec.transport, bytes(r.size), r.round_trips, us(r.min_us),
        us(r.median_us), us(r.p99_us), us(r.p999_us), us(r.max_us), r.measure.replace(/_/g, ' ')]));
    }
  }
  if (tb && tb.ok) {
    latRows.push(row('baseline', ['TCP echo', 'tcp', '1 B', tb.echoes, us(tb.half_rtt_min_us),
      us(tb.half_rtt_median_us), '', '', '', 'half round trip']));
  }
  if (latRows.length) {
    res.append($('h3', {}, 'Latency (µs)'), table('lat-results', ['operation', 'transport', 'message',
      'round trips', 'min', 'median', 'p99', 'p99.9', 'max', 'measure'], latRows));
  }
  if (!bwRows.length && !latRows.length) res.append($('p', {}, 'The performance layer did not run.'));

  // Charts. Each canvas says what it drew (data-series, data-x-ticks), and
  // where it sits on the page (data-rect), for the screenshot test.
  let charts = 0;
  const canvases = [];
  const chart = (parent, id, title, config, series) => {
    const canvas = $('canvas', {id: 'chart-' + id, width: '720', height: '320'});
    parent.append($('h3', {}, title), $('div', {class: 'chart'}, canvas));
    config.options = Object.assign({animation: false, responsive: false}, config.options || {});
    const c = new Chart(canvas.getContext('2d'), config);
    canvas.dataset.series = series.map(([name, colour]) => `${name}=${colour}`).join(',');
    canvas.dataset.xTicks = c.scales.x.ticks.map((tk) => tk.label).join('|');
    canvases.push(canvas);
    charts += 1;
  };
  const axis = (text, extra) => Object.assign({title: {display: true, text}}, extra || {});
  const sizesOf = (runs) => [...new Set(runs.flatMap((p) => p.results.map((r) => r.size)))].sort((a, b) => a - b);
  const bySize = (sizes, results, value) => sizes.map((s) => {
    const r = results.find((x) => x.size === s);
    return r ? value(r) : null;
  });

  const charted = section('charts', 'Charts');
  const bwRuns = bw.filter((p) => p.results.length);
  if (bwRuns.length) {
    const sizes = sizesOf(bwRuns);
    const datasets = [];
    const series = [];
    for (const p of bwRuns) {
      const colour = kOpColour[p.spec.op] || '#333333';
      const bidir = p.results.some((r) => r.directions);
      const add = (name, label, c, value) => {
        datasets.push({label, data: bySize(sizes, p.results, value), backgroundColor: c, borderWidth: 0});
        series.push([name, c]);
      };
      if (bidir) {
        add(p.spec.op + '-out', `${p.spec.op} (out, here → server)`, colour, (r) => r.directions.out_gbps);
        add(p.spec.op + '-in', `${p.spec.op} (in, server → here)`, lighter(colour), (r) => r.directions.in_gbps);
      } else {
        add(p.spec.op, `${p.spec.op} (${flow(p.spec.op)})`, colour, (r) => r.avg_gbps);
      }
    }
    // The link's rate, drawn across the whole plot with its value.
    const linkLine = {id: 'linkRate', afterDatasetsDraw(c) {
      if (!link) return;
      const {ctx, chartArea: a} = c;
      const y = c.scales.y.getPixelForValue(link);
      ctx.save();
      ctx.strokeStyle = kLinkColour; ctx.fillStyle = kLinkColour;
      ctx.lineWidth = 3; ctx.setLineDash([12, 6]);
      ctx.beginPath(); ctx.moveTo(a.left, y); ctx.lineTo(a.right, y); ctx.stroke();
      ctx.font = '12px sans-serif'; ctx.textAlign = 'right';
      ctx.fillText(`link ${link} Gb/s`, a.right - 4, y - 6);
      ctx.restore();
    }};
    if (link) series.push(['link', kLinkColour]);
    chart(charted, 'bandwidth', 'Bandwidth by message size', {
      type: 'bar', data: {labels: sizes.map(bytes), datasets}, plugins: [linkLine],
      options: {scales: {x: axis('message size'),
                         y: axis('Gb/s', {beginAtZero: true, suggestedMax: link ? link * 1.1 : undefined})}}},
      series);
  }

  // Latency: one histogram for every operation over the same log-linear
  // buckets (ten a decade), so that their bars line up.
  const latRuns = lat.filter((p) => p.results.length);
  const withHist = latRuns.filter((p) => p.results[0].histogram && p.results[0].histogram.length);
  if (withHist.length) {
    const key = (x) => x.toPrecision(6);
    const edges = new Map();
    for (const p of withHist) for (const b of p.results[0].histogram) edges.set(key(b.lo_us), b);
    const buckets = [...edges.values()].sort((a, b) => a.lo_us - b.lo_us);
    const series = [];
    const datasets = withHist.map((p) => {
      const colour = kOpColour[p.spec.op] || '#333333';
      series.push([p.spec.op, colour]);
      const counts = new Map(p.results[0].histogram.map((b) => [key(b.lo_us), b.count]));
      return {label: `${p.spec.op}, ${bytes(p.results[0].size)}`, backgroundColor: colour, borderWidth: 0,
              data: buckets.map((b) => counts.get(key(b.lo_us)) ?? 0)};
    });
    const measure = withHist[0].results[0].measure.replace(/_/g, ' ');
    chart(charted, 'latency', `Latency distribution (${measure}s, µs)`, {
      type: 'bar', data: {labels: buckets.map((b) => `${us(b.lo_us)}–${us(b.hi_us)}`), datasets},
      options: {scales: {x: axis('µs'), y: axis('round trips', {beginAtZero: true})}}}, series);
  } else if (latRuns.length) {
    const series = latRuns.map((p) => [p.spec.op, kOpColour[p.spec.op] || '#333333']);
    chart(charted, 'latency', 'Latency (µs)', {
      type: 'bar', data: {labels: ['min', 'median', 'mean', 'p99', 'p99.9', 'max'],
        datasets: latRuns.map((p, i) => {
          const r = p.results[0];
          return {label: p.spec.op, backgroundColor: series[i][1], borderWidth: 0,
                  data: [r.min_us, r.median_us, r.mean_us, r.p99_us, r.p999_us, r.max_us]};
        })},
      options: {scales: {x: axis('statistic'), y: axis('µs', {beginAtZero: true})}}}, series);
  }
  if (latRuns.some((p) => p.results.length > 1)) {
    const sizes = sizesOf(latRuns);
    const series = latRuns.map((p) => [p.spec.op, kOpColour[p.spec.op] || '#333333']);
    chart(charted, 'latency-sizes', 'Median latency by message size', {
      type: 'line', data: {labels: sizes.map(bytes), datasets: latRuns.map((p, i) => ({
        label: p.spec.op, borderColor: series[i][1], backgroundColor: series[i][1],
        data: bySize(sizes, p.results, (r) => r.median_us)}))},
      options: {scales: {x: axis('message size'), y: axis('µs', {beginAtZero: true})}}}, series);
  }

  // Pings: round-trip times, and the size ladder up to beyond two MTUs.
  const pingName = (p) => p.transport === 'ud' ? 'UD'
      : p.timeline.local.some((s) => s.name === 'ESTABLISHED') ? 'rdma_cm' : 'RC';
  const pingColour = (p) => kTransportColour[{UD: 'ud', RC: 'rc', rdma_cm: 'cm'}[pingName(p)]];
  const pings = section('pings', 'Pings');
  if (doc.pings.length) {
    pings.append(table('ping-rtts', ['ping', 'op', 'sent', 'answered', 'min µs', 'median µs', 'p99 µs',
      'max µs', 'note'], doc.pings.map((p) => row('ping', [pingName(p), p.op, p.summary.sent,
      p.summary.received, us(p.summary.min_us), us(p.summary.median_us), us(p.summary.p99_us),
      us(p.summary.max_us), p.ok ? '' : `failed at ${p.failed_stage}: ${p.error}`]))));
    const laddered = doc.pings.filter((p) => p.ladder.length);
    const sizes = [...new Set(laddered.flatMap((p) => p.ladder.map((s) => s.size)))].sort((a, b) => a - b);
    if (sizes.length) {
      pings.append($('h3', {}, 'Size ladder (round trip, µs)'), table('ladder', ['message',
        ...laddered.map(pingName)], sizes.map((s) => row('rung', [bytes(s), ...laddered.map((p) => {
          const r = p.ladder.find((x) => x.size === s);
          return !r ? '' : r.ok ? us(r.rtt_us) : `failed: ${r.error}`;
        })]))));
      const series = laddered.map((p) => [pingName(p), pingColour(p)]);
      chart(pings, 'ladder', 'Ping round trip by message size', {
        type: 'line', data: {labels: sizes.map(bytes), datasets: laddered.map((p, i) => ({
          label: `${pingName(p)} ${p.op}`, borderColor: series[i][1], backgroundColor: series[i][1],
          data: sizes.map((s) => {
            const r = p.ladder.find((x) => x.size === s && x.ok);
            return r ? r.rtt_us : null;
          })}))},
        options: {scales: {x: axis('message size'), y: axis('µs', {beginAtZero: true})}}}, series);
    }
  } else {
    pings.append($('p', {}, 'The connection layer did not run.'));
  }

  const fs = section('findings', 'Findings');
  for (const l of doc.layers) {
    for (const f of l.findings) {
      fs.append($('div', {class: 'finding ' + f.severity},
          $('b', {}, `${f.severity.toUpperCase()} ${f.id}`), ` (${l.layer}${f.host ? ', ' + f.host : ''}): ${f.summary}`,
          ...f.evidence.map((e) => $('div', {class: 'ev'}, 'evidence: ' + e)),
          f.fix ? $('div', {class: 'fix'}, 'fix: ' + f.fix) : ''));
    }
  }
  if (!fs.querySelector('.finding')) fs.append($('p', {}, 'No findings.'));

  // Both hosts' doctors: this host's every check with what it read, the
  // server's findings (what it sends back).
  const doctors = section('doctor', 'Doctor on both hosts');
  const facts = (f) => Object.entries(f || {}).map(([k, v]) =>
      `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : v}`).join('; ');
  const ld = doc.local_doctor;
  const local = $('div', {id: 'doctor-local'}, $('h3', {}, `This host (${ld.host.hostname}, kernel ${ld.host.kernel})`),
      $('p', {}, `${ld.summary.fail} failures, ${ld.summary.warn} warnings, ${ld.summary.info} notes.`));
  local.append(table(null, ['check', 'subject', 'status', 'findings', 'what it read'], ld.checks.map((c) =>
      row('check', [c.check, c.subject, st(c.status), c.findings.join(', '), $('span', {class: 'facts'}, facts(c.facts))]))));
  const peer = $('div', {id: 'doctor-peer'}, $('h3', {}, `Server (${doc.peer ? doc.peer.hostname : doc.host})`));
  if (Array.isArray(doc.peer_doctor)) {
    const n = (s) => doc.peer_doctor.filter((f) => f.severity === s).length;
    peer.append($('p', {}, `${n('fail')} failures, ${n('warn')} warnings, ${n('info')} notes.`));
    if (doc.peer_doctor.length) {
      peer.append(table(null, ['finding', 'subject', 'severity', 'summary'], doc.peer_doctor.map((f) =>
          row('finding-row', [f.id, f.subject || '', st(f.severity), f.summary]))));
    }
  } else {
    peer.append($('p', {}, 'Its doctor did not answer.'));
  }
  doctors.append(local, peer);

  const hosts = section('hosts', 'Both hosts');
  const keys = ['hostname', 'version', 'device', 'port', 'gid_index', 'gid_type', 'gid', 'active_mtu_bytes',
                'path_mtu_bytes', 'netdev', 'netdev_mtu_bytes', 'rate_gbps', 'traffic_class', 'sl', 'choice'];
  hosts.append(table('host-facts', ['', 'this host', 'server'], keys.map((k) => [
    k, doc.local ? doc.local[k] : '', doc.peer ? doc.peer[k] : ''])));

  const tl = section('timelines', 'Queue-pair state timelines');
  for (const p of doc.pings) {
    const steps = (arr) => arr.map((s) => `${s.name}${s.ok ? ' (' + s.usec.toFixed(0) + ' µs)' : ' FAILED'}`).join(' → ') || '(none)';
    tl.append($('h3', {}, `${pingName(p)} ping`), table(null, ['side', 'steps'],
        [['here', steps(p.timeline.local)], ['server', steps(p.timeline.peer)]]));
  }

  const cnt = section('counters', 'Counter deltas during the tests');
  let any = false;
  for (const p of doc.perf) {
    for (const side of ['local', 'peer']) {
      const c = p.counters && p.counters[side];
      if (!c) continue;
      const rows = Object.entries(c.deltas || c).filter(([, v]) => typeof v === 'number' && v !== 0).map(([k, v]) => [k, v]);
      if (rows.length) {
        any = true;
        cnt.append($('h3', {}, `${p.spec.op} ${p.command}, ${side === 'local' ? 'this host' : 'server'}`),
            table(null, ['counter', 'delta'], rows));
      }
    }
  }
  if (!any) cnt.append($('p', {}, 'No counter moved.'));

  // Where each chart landed, in CSS pixels of the whole page.
  for (const c of canvases) {
    const r = c.getBoundingClientRect();
    c.dataset.rect = [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height].map(Math.round).join(',');
  }
  document.body.dataset.charts = String(charts);
})();
