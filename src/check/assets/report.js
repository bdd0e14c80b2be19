// Renders the rdmacheck check report embedded in #report-data (check/html.cc runs it
// inside a function that holds doc, $, main, section and table).

  document.getElementById('title').textContent =
      `rdmacheck check ${doc.host} (port ${doc.port})`;
  const sum = section('Summary');
  sum.append(table(['layer', 'status', 'time', 'note'], doc.layers.map((l) => [
    l.layer, $('span', {class: 'st ' + l.status}, l.status.replace('_', ' ').toUpperCase()),
    l.status === 'not_run' ? '' : l.seconds.toFixed(1) + ' s', l.not_run_reason])));
  if (doc.expired_in) sum.append($('p', {class: 'warn'}, `The deadline passed during ${doc.expired_in}.`));
  sum.append($('p', {}, `Total ${(doc.elapsed_ms / 1000).toFixed(1)} s, exit status ${doc.exit}.`));
  // The ticket header, as the text report starts with it.
  if (doc.ticket) {
    const t = doc.ticket;
    const devs = t.devices.map((d) =>
        `, ${d.name} fw ${d.fw_ver || '-'}${d.board_id ? ' board ' + d.board_id : ''}`).join('');
    sum.append($('p', {class: 'ticket'},
        `rdmacheck ${t.version}, kernel ${t.kernel}, rdma-core ${t.rdma_core}${devs}, ${t.timestamp}`),
        $('p', {class: 'ticket'}, 'command: ', $('code', {}, t.command_line)));
  }

  const fs = section('Findings');
  for (const l of doc.layers) {
    for (const f of l.findings) {
      fs.append($('div', {class: 'finding ' + f.severity},
          $('b', {}, `${f.severity.toUpperCase()} ${f.id}`), ` (${l.layer}${f.host ? ', ' + f.host : ''}): ${f.summary}`,
          ...f.evidence.map((e) => $('div', {class: 'ev'}, 'evidence: ' + e)),
          f.fix ? $('div', {class: 'fix'}, 'fix: ' + f.fix) : ''));
    }
  }
  if (!fs.querySelector('.finding')) fs.append($('p', {}, 'No findings.'));

  // Both hosts' doctors: this host's every check, the server's findings.
  const doctors = section('Doctor');
  const ld = doc.local_doctor;
  if (ld && ld.checks) {
    doctors.append($('p', {}, `This host: ${ld.summary.fail} failures, ${ld.summary.warn} ` +
        `warnings, ${ld.summary.info} notes.`));
    doctors.append(table(['check', 'subject', 'status'], ld.checks.map((c) =>
        [c.check, c.subject, $('span', {class: 'st ' + c.status}, c.status.toUpperCase())])));
  }
  if (Array.isArray(doc.peer_doctor)) {
    const n = (s) => doc.peer_doctor.filter((f) => f.severity === s).length;
    const ids = doc.peer_doctor.map((f) => f.id).join(', ') || 'none';
    doctors.append($('p', {}, `Server: ${n('fail')} failures, ${n('warn')} warnings, ` +
        `${n('info')} notes (${ids}).`));
  } else {
    doctors.append($('p', {}, 'Server: its doctor did not answer.'));
  }

  const hosts = section('Both hosts');
  const keys = ['hostname', 'device', 'port', 'gid_index', 'gid_type', 'gid', 'active_mtu',
                'netdev', 'netdev_mtu', 'rate_gbps', 'version'];
  hosts.append(table(['', 'this host', 'server'], keys.map((k) => [
    k, doc.local ? doc.local[k] : '', doc.peer ? doc.peer[k] : ''])));

  const tl = section('Queue-pair state timelines');
  for (const p of doc.pings) {
    const what = p.transport === 'ud' ? 'UD ping' : (p.timeline.local.some((s) => s.name === 'ESTABLISHED') ? 'rdma_cm ping' : 'RC ping');
    const steps = (arr) => arr.map((s) => `${s.name}${s.ok ? ' (' + s.usec.toFixed(0) + ' µs)' : ' FAILED'}`).join(' → ') || '(none)';
    tl.append($('h3', {}, what), table(['side', 'steps'], [['here', steps(p.timeline.local)], ['server', steps(p.timeline.peer)]]));
  }

  let charts = 0;
  const chart = (parent, title, config) => {
    const canvas = $('canvas', {width: '720', height: '320'});
    parent.append($('h3', {}, title), $('div', {class: 'chart'}, canvas));
    config.options = Object.assign({animation: false, responsive: false}, config.options || {});
    new Chart(canvas.getContext('2d'), config);
    charts += 1;
  };
  const perf = section('Performance');
  const bw = doc.perf.filter((p) => p.command === 'bw' && p.results.length);
  if (bw.length) {
    chart(perf, 'Bandwidth by message size', {
      type: 'line',
      data: {datasets: bw.map((p) => ({label: p.spec.op + ' (Gb/s)',
        data: p.results.map((r) => ({x: r.size, y: r.avg_gbps}))}))},
      options: {scales: {x: {type: 'logarithmic', title: {display: true, text: 'message size (bytes)'}},
                         y: {title: {display: true, text: 'Gb/s'}}}}});
  }
  const lat = doc.perf.filter((p) => p.command === 'lat' && p.results.length);
  for (const p of lat) {
    const r = p.results[0];
    const hist = r.histogram && r.histogram.length ? r.histogram : null;
    chart(perf, `${p.spec.op} latency, ${r.size} B (${r.measure.replace(/_/g, ' ')})`, hist ? {
      type: 'bar',
      data: {labels: hist.map((b) => `${b.lo_us.toFixed(1)}–${b.hi_us.toFixed(1)}`),
             datasets: [{label: 'round trips', data: hist.map((b) => b.count)}]},
      options: {scales: {x: {title: {display: true, text: 'µs'}}}}} : {
      type: 'bar',
      data: {labels: ['min', 'median', 'mean', 'p99', 'p99.9', 'max'],
             datasets: [{label: 'µs', data: [r.min_us, r.median_us, r.mean_us, r.p99_us, r.p999_us, r.max_us]}]}});
  }
  if (!charts) perf.append($('p', {}, 'The performance layer did not run.'));
  const cnt = section('Counter deltas during the tests');
  let any = false;
  for (const p of doc.perf) {
    for (const side of ['local', 'peer']) {
      const c = p.counters && p.counters[side];
      if (!c) continue;
      const rows = Object.entries(c.deltas || c).filter(([, v]) => typeof v === 'number' && v !== 0).map(([k, v]) => [k, v]);
      if (rows.length) { any = true; cnt.append($('h3', {}, `${p.spec.op} ${p.command}, ${side === 'local' ? 'this host' : 'server'}`), table(['counter', 'delta'], rows)); }
    }
  }
  if (!any) cnt.append($('p', {}, 'No counter moved.'));
  document.body.dataset.charts = String(charts);
