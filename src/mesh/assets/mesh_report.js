// Renders the rdmacheck mesh report embedded in #report-data: heatmaps of
// latency and bandwidth (hosts x hosts, row = client, column = server), the
// findings, each round's time and the hosts' doctor summary. check/html.cc
// runs it inside a function that holds doc, $, main, section and table.
  const hosts = doc.hosts;
  const n = hosts.length;
  const status = ['PASS', 'WARN', 'FAIL'][doc.exit_status] || 'FAIL';
  const sizeText = (b) => (b % 1024 === 0 ? `${b / 1024} KiB` : `${b} B`);

  document.getElementById('title').textContent =
      `rdmacheck mesh: ${n} hosts, ${n * (n - 1) / 2} pairs, ${status}`;
  const sum = section('Summary');
  const what = doc.mode === 'quick' ? 'RC bring-up and ping' :
      `ping, then RDMA WRITE of ${doc.options.sizes.map(sizeText).join(', ')} for ${doc.options.duration_s} s each way`;
  sum.append($('p', {}, $('span', {class: 'st ' + status.toLowerCase()}, status),
      ` ${n} hosts (${hosts.join(', ')}) in ${doc.rounds.length} rounds, ${doc.mode} mode: ${what}; ` +
      `${doc.options.pings} pings per direction, each round at most ${doc.options.round_timeout_s} s. ` +
      `Total ${doc.elapsed_s.toFixed(1)} s, exit status ${doc.exit_status}.`));
  if (doc.ticket) {
    const t = doc.ticket;
    const devs = t.devices.map((d) =>
        `, ${d.name} fw ${d.fw_ver || '-'}${d.board_id ? ' board ' + d.board_id : ''}`).join('');
    sum.append($('p', {class: 'ticket'},
        `rdmacheck ${t.version}, kernel ${t.kernel}, rdma-core ${t.rdma_core}${devs}, ${t.timestamp} (rank 0)`),
        $('p', {class: 'ticket'}, 'command: ', $('code', {}, t.command_line)));
  }

  const fs = section('Findings');
  const finding = (f) => $('div', {class: 'finding ' + f.severity},
      $('b', {}, `${f.severity.toUpperCase()} ${f.id}`),
      `${f.host || f.subject ? ' (' + (f.host || f.subject) + ')' : ''}: ${f.summary}`,
      ...f.evidence.map((e) => $('div', {class: 'ev'}, 'evidence: ' + e)),
      f.fix ? $('div', {class: 'fix'}, 'fix: ' + f.fix) : '');
  for (const f of doc.findings) fs.append(finding(f));
  if (!doc.findings.length) fs.append($('p', {}, 'No findings.'));

  // One probe per direction of each pair: what a cell's title tells.
  const probe = {};
  for (const p of doc.probes) probe[`${p.from},${p.to}`] = p;
  let cells = 0;
  let failedCells = 0;
  // Colour by how far a figure is from the fleet's reference, on a log
  // scale: green at the reference or better, yellow at 2x worse, red at 4x
  // worse or more. WORSE(v) is that factor for the figure.
  const colour = (factor) => {
    const bad = Math.min(Math.max(Math.log2(Math.max(factor, 1e-9)), 0), 2);
    return `hsl(${Math.round(120 * (1 - bad / 2))}, 65%, 78%)`;
  };
  const heatmap = (parent, spec) => {
    const m = doc.matrices[spec.key];
    const ref = doc.reference[spec.key];
    const values = m.flat().filter((v) => typeof v === 'number');
    const sorted = values.slice().sort((a, b) => a - b);
    const mid = ref ? ref.median : (sorted.length ? sorted[Math.floor(sorted.length / 2)] : 0);
    const t = $('table', {class: 'heatmap', id: 'heatmap-' + spec.key},
        $('tr', {}, $('th', {class: 'corner'}, 'client \\ server'), ...hosts.map((h) => $('th', {}, h))));
    for (let i = 0; i < n; ++i) {
      const row = $('tr', {}, $('th', {}, hosts[i]));
      for (let j = 0; j < n; ++j) {
        if (i === j) { row.append($('td', {class: 'self'}, '')); continue; }
        const p = probe[`${i},${j}`];
        const v = m[i][j];
        const pair = `${hosts[i]} → ${hosts[j]}`;
        let td;
        if (doc.matrices.failed[i][j]) {
          const why = p ? `failed at ${p.stage}: ${p.error}` : 'failed';
          td = $('td', {class: 'cell failed', title: `${pair}: ${why}`}, 'FAIL');
          failedCells += 1;
        } else if (typeof v === 'number') {
          td = $('td', {class: 'cell', title: `${pair}: ${spec.tip(v, p)} (fleet ${spec.fmt(mid)} ${spec.unit})`,
                        style: `background: ${colour(mid > 0 ? spec.worse(v, mid) : 1)}`}, spec.fmt(v));
        } else {
          const why = p && p.bw_error ? `not measured: ${p.bw_error}` : 'not measured';
          td = $('td', {class: 'cell none', title: `${pair}: ${why}`}, '–');
        }
        td.dataset.from = hosts[i];
        td.dataset.to = hosts[j];
        cells += 1;
        row.append(td);
      }
      t.append(row);
    }
    parent.append($('h3', {}, spec.title), t,
        $('p', {class: 'legend'}, 'colour: ',
          $('span', {class: 'key', style: `background: ${colour(1)}`}, `at the fleet's ${spec.fmt(mid)} ${spec.unit} or better`), ' ',
          $('span', {class: 'key', style: `background: ${colour(2)}`}, '2× worse'), ' ',
          $('span', {class: 'key', style: `background: ${colour(4)}`}, '4× worse or more'), ' ',
          $('span', {class: 'key failed'}, 'FAIL: did not connect'), ' ',
          $('span', {class: 'key none'}, '–: not measured'),
          '. Hover a cell for the pair, its figure and direction.'));
  };
  const maps = section('Heatmaps (row = client, column = server)');
  heatmap(maps, {key: 'latency_us', title: 'Latency: least RC round trip (µs)', unit: 'µs',
    fmt: (v) => v.toFixed(v < 100 ? 1 : 0), worse: (v, mid) => v / mid,
    tip: (v, p) => `least RC round trip ${v.toFixed(1)} µs, ${hostsOf(p)}` +
        (p ? `, median ${p.rtt_median_us.toFixed(1)} µs, ${p.pings_ok} of ${p.pings_sent} pings answered` : '')});
  if (doc.mode !== 'quick') {
    heatmap(maps, {key: 'bandwidth_gbps', title: 'Bandwidth: RDMA WRITE, row sends to column (Gb/s)', unit: 'Gb/s',
      fmt: (v) => v.toFixed(2), worse: (v, mid) => (v > 0 ? mid / v : 1e9),
      tip: (v, p) => `RDMA WRITE ${v.toFixed(2)} Gb/s, ${hostsOf(p)}` +
          (p && p.loss_counters ? `, ${p.loss_counters} loss counter events` : '')});
  }
  function hostsOf(p) { return p ? `${hosts[p.from]} client, ${hosts[p.to]} server, round ${p.round + 1}` : ''; }

  const pairs = doc.pairs.filter((p) => p.unreachable || p.bad.length);
  if (pairs.length) {
    maps.append($('h3', {}, 'Worst pairs'), table(['pair', 'why'], pairs.map((p) =>
        [`${p.a} ↔ ${p.b}`, [p.unreachable ? 'cannot connect' : '', ...p.bad].filter(Boolean).join(', ')])));
  }

  const rs = section('Rounds');
  const longest = Math.max(...doc.rounds.map((r) => r.seconds), 1e-9);
  rs.append(table(['round', 'pairs', 'time', ''], doc.rounds.map((r) => [
    String(r.round + 1), String(r.pairs), r.seconds.toFixed(1) + ' s',
    $('div', {class: 'bar', style: `width: ${(12 * r.seconds / longest).toFixed(2)}em`})])));
  const total = doc.rounds.reduce((a, r) => a + r.seconds, 0);
  const limit = doc.options.round_timeout_s;
  const late = doc.rounds.filter((r) => r.seconds >= limit + 0.05);
  rs.append($('p', {}, `All ${doc.rounds.length} rounds ${total.toFixed(1)} s; each round's deadline ` +
      `was ${limit} s` + (late.length ? ', which ' + late.map((r) =>
        `round ${r.round + 1} overran by ${(r.seconds - limit).toFixed(1)} s`).join(', ') + '.' : '.')));

  const dr = section('Host health (each host\'s doctor, summarised)');
  for (const f of doc.doctor) dr.append(finding(f));
  if (!doc.doctor.length) dr.append($('p', {}, 'No host reported a problem.'));
  const errs = doc.server_errors.map((e, i) => [hosts[i], e]).filter(([, e]) => e);
  if (errs.length) dr.append($('h3', {}, 'In-process servers that did not start'), table(['host', 'why'], errs));

  document.body.dataset.cells = String(cells);
  document.body.dataset.failedCells = String(failedCells);
