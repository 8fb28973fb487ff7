// The simdedup review report. All data comes from the JSON block #report-data; every text and
// id from the corpus is written with textContent, never as markup. Clusters are rendered a page
// at a time, and one cluster's texts only when it is opened, so a large report opens at once.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const ids = data.ids;
  const original = data.decisions;
  const decisions = original.slice();
  const KEEP = 0, DROP = 1, HELD = 2;
  const PAGE = 100;
  const NEAR = 0.03;
  const $ = (id) => document.getElementById(id);

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // Characters that would act instead of showing (controls, bidi overrides, line separators,
  // lone surrogates) are shown as their code point.
  const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}]/gu;
  const INVISIBLE_IN_TEXT = /(?![\n\t])[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}]/gu;
  const codePoint = (c) => "U+" + c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
  const shownId = (i) => ids[i].replace(INVISIBLE, (c) => "\u27e8" + codePoint(c) + "\u27e9");

  function appendText(parent, text) {
    let last = 0;
    for (const match of text.matchAll(INVISIBLE_IN_TEXT)) {
      if (match.index > last) parent.appendChild(document.createTextNode(text.slice(last, match.index)));
      parent.appendChild(el("span", "ctl", codePoint(match[0])));
      last = match.index + match[0].length;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }

  function idNode(i) {
    const href = data.links[i];
    // links are made by simdedup as percent-encoded relative paths; anything else is shown as text
    if (typeof href === "string" && /^\.\.?\/[A-Za-z0-9%._~\/-]*$/.test(href)) {
      const link = el("a", "id", shownId(i));
      link.href = href;
      return link;
    }
    return el("span", "id", shownId(i));
  }

  const fmt = (n) => (n === null || n === undefined ? "\u2013" : Number(n).toLocaleString("en"));
  const sim = (s) => (s === null || s === undefined ? "\u2013" : Number(s).toFixed(3));

  // --- overview -------------------------------------------------------------------------
  const clusters = data.clusters;
  const clustersOf = new Map();
  clusters.forEach((cluster, c) => cluster.members.forEach((m) => {
    if (!clustersOf.has(m[0])) clustersOf.set(m[0], []);
    clustersOf.get(m[0]).push(c);
  }));

  function overview() {
    const o = data.overview;
    const numbers = $("overview-numbers");
    const items = [
      ["documents read", o.documents === null ? "not known" : fmt(o.documents)],
      ["clusters", fmt(o.clusters)], ["documents in clusters", fmt(o.members)],
      ["select would drop", fmt(o.dropped)], ["bytes saved", fmt(o.bytes_saved)],
      ["held back (links, kept elsewhere)", fmt(o.held)], ["texts not read", fmt(o.missing)],
    ];
    for (const [label, value] of items) {
      const box = el("div", "number");
      box.appendChild(el("b", null, value));
      box.appendChild(document.createTextNode(label));
      numbers.appendChild(box);
    }
    const settings = [["keep policy (select --keep)", data.policy], [`threshold (${data.threshold_option})`, String(data.threshold)],
                      ["characters shown per document", fmt(o.shown_chars)], ...data.settings];
    for (const [key, value] of settings) {
      const row = el("tr");
      row.appendChild(el("th", null, key));
      row.appendChild(el("td", null, value));
      $("settings-table").appendChild(row);
    }
    const sizes = new Map();
    for (const cluster of clusters) {
      const n = Math.min(cluster.members.length, 11);
      sizes.set(n, (sizes.get(n) || 0) + 1);
    }
    const sizeBins = [];
    for (let n = 2; n <= 11; n++) sizeBins.push([n === 11 ? "11+" : String(n), sizes.get(n) || 0]);
    $("chart-sizes").appendChild(histogram(sizeBins, null));
    const similarities = [];
    for (const cluster of clusters) {
      for (const m of cluster.members) if (m[0] !== cluster.rep && m[3] !== null) similarities.push(m[3]);
    }
    const low = Math.min(data.threshold, ...similarities.slice(0, 100000)) - 0.02;
    const start = Math.max(0, Math.floor(low * 50) / 50);
    const bins = [];
    for (let x = start; x < 1.0 - 1e-9; x += 0.02) bins.push([x.toFixed(2), 0]);
    for (const s of similarities) {
      const b = Math.min(bins.length - 1, Math.max(0, Math.floor((s - start) / 0.02 + 1e-9)));
      if (bins.length) bins[b][1]++;
    }
    $("chart-similarities").appendChild(histogram(bins, bins.length ? (data.threshold - start) / (bins.length * 0.02) : null));
  }

  const SVG = "http://www.w3.org/2000/svg";
  function svgNode(tag, attributes, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // bins: [label, count]; threshold: where to draw it, as a fraction of the axis (or null)
  function histogram(bins, threshold) {
    const width = 460, height = 170, left = 36, bottom = 24, top = 14;
    const svg = svgNode("svg", {width, height, viewBox: `0 0 ${width} ${height}`, role: "img"});
    const most = Math.max(1, ...bins.map((b) => b[1]));
    const step = (width - left - 8) / Math.max(1, bins.length);
    const plot = height - bottom - top;
    svg.appendChild(svgNode("text", {x: 2, y: top + 4}, String(most)));
    svg.appendChild(svgNode("text", {x: 2, y: height - bottom}, "0"));
    bins.forEach(([label, count], i) => {
      const h = (count / most) * plot;
      const bar = svgNode("rect", {class: "bar", x: left + i * step + 1, y: top + plot - h, width: Math.max(1, step - 2), height: h});
      bar.appendChild(svgNode("title", {}, `${label}: ${count}`));
      svg.appendChild(bar);
      const every = Math.ceil(bins.length / 10);
      if (i % every === 0) svg.appendChild(svgNode("text", {x: left + i * step, y: height - 8}, label));
    });
    if (threshold !== null && threshold >= 0 && threshold <= 1) {
      const x = left + threshold * (width - left - 8);
      svg.appendChild(svgNode("line", {class: "threshold", x1: x, x2: x, y1: top - 4, y2: top + plot}));
      svg.appendChild(svgNode("text", {class: "threshold-label", x: x + 3, y: top + 6}, "threshold " + data.threshold));
    }
    return svg;
  }

  // --- decisions ------------------------------------------------------------------------
  function keepsOne(c, without) {
    return clusters[c].members.some((m) => m[0] !== without && decisions[m[0]] === KEEP);
  }

  function setDecision(i, drop) {
    if (decisions[i] === HELD) return "held back: " + (data.held[i] || "");
    if (drop && !(clustersOf.get(i) || []).every((c) => keepsOne(c, i))) {
      return "every cluster keeps one member: keep another member of its cluster first";
    }
    decisions[i] = drop ? DROP : KEEP;
    return null;
  }

  // An id as the bytes of its file name (UTF-8; U+DC80..U+DCFF stand for undecodable bytes, as
  // Python's os.fsencode writes them), or null when no file can have that name.
  function nameBytes(id) {
    const out = [];
    for (let k = 0; k < id.length; k++) {
      let c = id.charCodeAt(k);
      if (c === 0) return null;
      if (c >= 0xd800 && c <= 0xdbff && k + 1 < id.length) {
        const d = id.charCodeAt(k + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          k++;
          out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
          continue;
        }
      }
      if (c >= 0xdc80 && c <= 0xdcff) out.push(c - 0xdc00);
      else if (c >= 0xd800 && c <= 0xdfff) return null;
      else if (c < 0x80) out.push(c);
      else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
      else out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    }
    return out;
  }

  // The drop list as select writes it: the dropped ids in the order select meets them, each
  // ended by a newline (or NUL); an error message for an id that cannot be listed so.
  function dropList(nul) {
    const end = nul ? 0 : 10;
    const parts = [];
    let size = 0;
    for (let i = 0; i < ids.length; i++) {
      if (decisions[i] !== DROP) continue;
      const name = nameBytes(ids[i]);
      if (name === null || name.includes(end)) {
        return {error: "the id " + shownId(i) + " cannot be listed as a path" + (name !== null ? "; use the NUL-separated list" : "")};
      }
      name.push(end);
      parts.push(name);
      size += name.length;
    }
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const part of parts) { bytes.set(part, at); at += part.length; }
    return {bytes};
  }

  function download(nul) {
    const list = dropList(nul);
    if (list.error) { $("decision-message").textContent = list.error; return; }
    const url = URL.createObjectURL(new Blob([list.bytes], {type: "application/octet-stream"}));
    const link = el("a");
    link.href = url;
    link.download = nul ? "drop-list.nul" : "drop-list.txt";
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    $("decision-message").textContent = "";
  }

  function summarize() {
    let dropped = 0, changed = 0;
    for (let i = 0; i < ids.length; i++) {
      if (decisions[i] === DROP) dropped++;
      if (decisions[i] !== original[i]) changed++;
    }
    $("decision-summary").textContent = `${fmt(dropped)} documents in the drop list` +
      (changed ? `, ${fmt(changed)} changed by you` : ", as select decides");
  }

  // --- the cluster list -----------------------------------------------------------------
  let order = [];
  let page = 0;
  let selected = -1;

  function lowest(c) { const v = clusters[c].lowest; return v === null ? 1 : v; }
  function drops(c) { return clusters[c].members.filter((m) => decisions[m[0]] === DROP).length; }

  function refreshList() {
    const sort = $("sort").value;
    const nearOnly = $("near-only").checked;
    const minSize = Number($("min-size").value) || 0;
    const query = $("search").value.trim().toLowerCase();
    order = [];
    for (let c = 0; c < clusters.length; c++) {
      const cluster = clusters[c];
      if (cluster.members.length < minSize) continue;
      if (nearOnly && Math.abs(lowest(c) - data.threshold) > NEAR) continue;
      if (query && !cluster.members.some((m) => ids[m[0]].toLowerCase().includes(query))) continue;
      order.push(c);
    }
    const keys = {
      size: (c) => -clusters[c].members.length,
      lowest: (c) => lowest(c),
      near: (c) => Math.abs(lowest(c) - data.threshold),
    };
    if (keys[sort]) order.sort((a, b) => keys[sort](a) - keys[sort](b) || a - b);
    page = 0;
    renderPage();
  }

  function renderPage() {
    const body = $("cluster-rows");
    body.replaceChildren();
    const pages = Math.max(1, Math.ceil(order.length / PAGE));
    page = Math.min(page, pages - 1);
    for (const c of order.slice(page * PAGE, (page + 1) * PAGE)) {
      const cluster = clusters[c];
      const row = el("tr");
      row.dataset.cluster = String(c);
      if (c === selected) row.className = "selected";
      row.appendChild(el("td", null, c + 1));
      row.appendChild(el("td", null, cluster.members.length));
      row.appendChild(el("td", null, sim(cluster.lowest)));
      row.appendChild(el("td", null, drops(c)));
      const rep = el("td");
      rep.appendChild(el("span", "id", shownId(cluster.rep)));
      row.appendChild(rep);
      row.addEventListener("click", () => openCluster(c));
      body.appendChild(row);
    }
    $("list-summary").textContent = `${fmt(order.length)} of ${fmt(clusters.length)} clusters`;
    $("page-label").textContent = `page ${page + 1} of ${pages}`;
    $("previous-page").disabled = page === 0;
    $("next-page").disabled = page >= pages - 1;
  }

  // --- one cluster ----------------------------------------------------------------------
  function decisionText(i) {
    if (decisions[i] === HELD) return "held back: " + (data.held[i] || "");
    const word = decisions[i] === DROP ? "drop" : "keep";
    return decisions[i] === original[i] ? word : word + " (changed)";
  }

  // A cluster of COMPACT members or more lists its members grouped by identical text, the
  // groups least similar to the representative first, GROUP_PAGE groups a page.
  const COMPACT = 100, GROUP_PAGE = 25, GROUP_SHOWN = 100;
  let groupPage = 0;
  let openGroups = new Set();

  // keepView: a change inside the open cluster (a decision, another member compared), which
  // leaves the page where it is; else the cluster's detail is brought into view
  function openCluster(c, compared, keepView) {
    if (c !== selected) { groupPage = 0; openGroups = new Set(); }
    selected = c;
    for (const row of $("cluster-rows").children) row.className = row.dataset.cluster === String(c) ? "selected" : "";
    const cluster = clusters[c];
    const detail = $("cluster-detail");
    detail.replaceChildren();
    detail.appendChild(el("h3", null, `Cluster ${c + 1}: ${cluster.members.length} members, lowest ${data.quantity} to the representative ${sim(cluster.lowest)}`));
    if (compared === undefined || compared === null) compared = cluster.compare === null || cluster.compare === undefined ? 0 : cluster.compare;
    const table = el("table", "members");
    const head = el("tr");
    for (const h of ["drop", "id", "bytes", "distance", data.quantity, "decision", ""]) head.appendChild(el("th", null, h));
    table.appendChild(head);
    if (cluster.same && cluster.members.length >= COMPACT) {
      compactMembers(c, table, compared);
    } else {
      cluster.members.forEach((m, k) => table.appendChild(memberRow(c, k, compared)));
    }
    detail.appendChild(table);
    if (cluster.members.some((m) => m[0] !== cluster.rep)) sideBySide(cluster, compared);
    if (cluster.pair) pulls(cluster.pair);
    if (!keepView) {
      detail.scrollTop = 0;
      const box = detail.getBoundingClientRect();
      if (box.top < 0 || box.top > window.innerHeight - 120) detail.scrollIntoView({block: "start"});
    }
  }

  function memberRow(c, k, compared) {
    const cluster = clusters[c];
    const m = cluster.members[k];
    const i = m[0];
    const row = el("tr");
    const box = el("input");
    box.type = "checkbox";
    box.checked = decisions[i] === DROP;
    box.disabled = decisions[i] === HELD;
    box.title = "in the drop list";
    box.addEventListener("change", () => {
      const refused = setDecision(i, box.checked);
      $("decision-message").textContent = refused || "";
      openCluster(c, compared, true);
      summarize();
      renderPage();
    });
    const cell = el("td");
    cell.appendChild(box);
    row.appendChild(cell);
    const idCell = el("td");
    idCell.appendChild(idNode(i));
    if (i === cluster.rep) idCell.appendChild(el("span", "note", " (representative)"));
    row.appendChild(idCell);
    row.appendChild(el("td", null, fmt(m[1])));
    row.appendChild(el("td", null, m[2] === null ? "\u2013" : m[2]));
    row.appendChild(el("td", null, m[4] === false ? sim(m[3]) + " (estimate)" : sim(m[3])));
    const decision = el("td", "decision-" + ["keep", "drop", "held"][decisions[i]], decisionText(i));
    if (decisions[i] !== original[i]) decision.classList.add("changed");
    row.appendChild(decision);
    const compare = el("td");
    if (i !== cluster.rep) {
      const button = el("button", null, k === compared ? "compared below" : "compare");
      button.type = "button";
      button.disabled = k === compared;
      button.addEventListener("click", () => openCluster(c, k, true));
      compare.appendChild(button);
    }
    row.appendChild(compare);
    return row;
  }

  function compactMembers(c, table, compared) {
    const cluster = clusters[c];
    const groups = new Map();
    cluster.same.forEach((first, k) => {
      if (!groups.has(first)) groups.set(first, []);
      groups.get(first).push(k);
    });
    const need = (ks) => Math.min(...ks.map((k) => cluster.members[k][0] === cluster.rep ? 2 : (cluster.members[k][3] ?? 1.5)));
    const ordered = [...groups.values()].sort((a, b) => need(a) - need(b) || a[0] - b[0]);
    const pages = Math.ceil(ordered.length / GROUP_PAGE);
    groupPage = Math.min(groupPage, pages - 1);
    const pager = el("div", "members-pager");
    pager.appendChild(el("span", null, `${fmt(cluster.members.length)} members, ${fmt(ordered.length)} distinct texts: ` +
      `members with the same text in one row, the least ${data.quantity} first. `));
    for (const [label, step] of [["previous", -1], ["next", 1]]) {
      const button = el("button", null, label);
      button.type = "button";
      button.className = "group-" + label;
      button.disabled = groupPage + step < 0 || groupPage + step >= pages;
      button.addEventListener("click", () => { groupPage += step; openCluster(c, compared, true); });
      pager.appendChild(button);
      if (step < 0) pager.appendChild(el("span", "group-page", ` texts ${fmt(groupPage * GROUP_PAGE + 1)}\u2013${fmt(Math.min(ordered.length, (groupPage + 1) * GROUP_PAGE))} of ${fmt(ordered.length)} `));
    }
    $("cluster-detail").appendChild(pager);
    for (const ks of ordered.slice(groupPage * GROUP_PAGE, (groupPage + 1) * GROUP_PAGE)) {
      if (ks.length === 1) { table.appendChild(memberRow(c, ks[0], compared)); continue; }
      const first = cluster.members[ks[0]];
      const row = el("tr", "group");
      row.appendChild(el("td", null, "\u00d7" + ks.length));
      const idCell = el("td");
      idCell.appendChild(idNode(first[0]));
      idCell.appendChild(el("span", "note", ` and ${fmt(ks.length - 1)} more with the same text` +
        (ks.some((k) => cluster.members[k][0] === cluster.rep) ? " (the representative's)" : "")));
      row.appendChild(idCell);
      row.appendChild(el("td", null, fmt(first[1])));
      const distances = ks.map((k) => cluster.members[k][2]).filter((d) => d !== null);
      const [near, far] = [Math.min(...distances), Math.max(...distances)];
      row.appendChild(el("td", null, !distances.length ? "\u2013" : near === far ? near : `${near}\u2013${far}`));
      const scores = ks.map((k) => cluster.members[k][3]).filter((s) => s !== null);
      row.appendChild(el("td", null, scores.length ? sim(Math.min(...scores)) : "\u2013"));
      const dropped = ks.filter((k) => decisions[cluster.members[k][0]] === DROP).length;
      row.appendChild(el("td", null, `${fmt(dropped)} drop, ${fmt(ks.length - dropped)} keep`));
      const toggle = el("td");
      const button = el("button", null, openGroups.has(ks[0]) ? "hide members" : "show members");
      button.type = "button";
      button.addEventListener("click", () => {
        if (openGroups.has(ks[0])) openGroups.delete(ks[0]); else openGroups.add(ks[0]);
        openCluster(c, compared, true);
      });
      toggle.appendChild(button);
      row.appendChild(toggle);
      table.appendChild(row);
      if (!openGroups.has(ks[0])) continue;
      for (const k of ks.slice(0, GROUP_SHOWN)) {
        const member = memberRow(c, k, compared);
        member.className = "in-group";
        table.appendChild(member);
      }
      if (ks.length > GROUP_SHOWN) {
        const more = el("tr", "in-group");
        const cell = el("td", "note", `and ${fmt(ks.length - GROUP_SHOWN)} more with this text (search their ids above)`);
        cell.colSpan = 7;
        more.appendChild(cell);
        table.appendChild(more);
      }
    }
  }

  function textBlock(i, spans) {
    const box = el("div", "text");
    const text = data.texts[i];
    if (text === null) {
      box.appendChild(el("em", "warning", "text not available: " + (data.missing[i] || "not read")));
      return box;
    }
    let at = 0;
    for (let s = 0; s + 1 < (spans || []).length; s += 2) {
      if (spans[s] > at) appendText(box, text.slice(at, spans[s]));
      const mark = el("mark");
      appendText(mark, text.slice(spans[s], spans[s + 1]));
      box.appendChild(mark);
      at = spans[s + 1];
    }
    if (at < text.length) appendText(box, text.slice(at));
    if (data.lengths[i]) {
      const whole = data.read_cut[i] ? `more than ${fmt(data.lengths[i])}` : fmt(data.lengths[i]);
      box.appendChild(el("span", "cut", `\u2702 cut here: ${fmt(text.length)} of ${whole} characters shown`));
    }
    return box;
  }

  function sideBySide(cluster, k) {
    const i = cluster.members[k][0];
    const spans = cluster.diffs[k] || [[], []];
    const grid = el("div", "side-by-side");
    for (const [label, j, marks] of [["representative", cluster.rep, spans[0]], ["member", i, spans[1]]]) {
      const column = el("div");
      const title = el("h4", null, label + ": ");
      title.appendChild(idNode(j));
      column.appendChild(title);
      column.appendChild(textBlock(j, marks));
      grid.appendChild(column);
    }
    const score = cluster.members[k][3];
    const why = k === cluster.compare && score !== null
      ? `: the member least like the representative by the ${data.quantity} that decided (${sim(score)})`
      : "";
    detail().appendChild(el("h3", "side-title", "Side by side, the differing passages marked" + why));
    detail().appendChild(grid);
  }

  function detail() { return $("cluster-detail"); }

  function pulls(pair) {
    const how = {texts: "measured on the texts", "cluster line": "as the cluster line gives it",
                 "cluster line estimate": "as the cluster line estimates it"}[pair.measured] || pair.measured;
    detail().appendChild(el("h3", null, `Least resemblant pair (${how}): ${data.quantity} ${sim(pair.score)}`));
    if (pair.bag !== undefined) detail().appendChild(el("p", null, `What the features say (weighted Jaccard of the features, not what decides): ${sim(pair.bag)}`));
    const names = el("p");
    names.appendChild(document.createTextNode("A: "));
    names.appendChild(idNode(pair.a));
    names.appendChild(document.createTextNode("  B: "));
    names.appendChild(idNode(pair.b));
    detail().appendChild(names);
    if (!pair.together) return;
    const grid = el("div", "pulls");
    const lists = [
      ["pulling together (weight in A / B)", pair.together.map((t) => [t[0], `${t[1]} / ${t[2]}`])],
      ["pushing apart, more in A", pair.apart_a.map((t) => [t[0], "+" + t[1]])],
      ["pushing apart, more in B", pair.apart_b.map((t) => [t[0], "+" + t[1]])],
    ];
    for (const [title, items] of lists) {
      const column = el("div");
      column.appendChild(el("h4", null, title));
      const list = el("ul");
      for (const [feature, weight] of items) {
        const item = el("li");
        const name = el("code");
        appendText(name, feature);
        item.appendChild(name);
        item.appendChild(document.createTextNode(" " + weight));
        list.appendChild(item);
      }
      if (!items.length) list.appendChild(el("li", null, "(none)"));
      column.appendChild(list);
      grid.appendChild(column);
    }
    detail().appendChild(grid);
  }

  // --- pairs kept apart -----------------------------------------------------------------
  function keptApart() {
    const pairs = data.apart || [];
    if (!pairs.length) return;
    $("apart").hidden = false;
    $("apart-score").textContent = data.quantity;
    const body = $("apart-rows");
    const clusterCell = (c) => {
      const cell = el("td");
      const button = el("button", null, "#" + (c + 1));
      button.type = "button";
      button.addEventListener("click", () => openCluster(c));
      cell.appendChild(button);
      return cell;
    };
    for (const [a, b, ca, cb, score, failingA, failingB, failingScore] of pairs) {
      const row = el("tr");
      const aCell = el("td"), bCell = el("td"), failing = el("td");
      aCell.appendChild(idNode(a));
      bCell.appendChild(idNode(b));
      if (failingA !== null) {
        failing.appendChild(idNode(failingA));
        failing.appendChild(el("span", "note", " and "));
        failing.appendChild(idNode(failingB));
      } else {
        failing.textContent = "no pair across them fails: other options made these clusters";
      }
      row.append(aCell, clusterCell(ca), bCell, clusterCell(cb), el("td", null, sim(score)), failing,
                 el("td", null, sim(failingScore)));
      body.appendChild(row);
    }
  }

  // --- wiring -----------------------------------------------------------------------------
  overview();
  keptApart();
  summarize();
  $("near-width").textContent = "\u00b1" + NEAR;
  for (const id of ["sort", "near-only", "min-size", "search"]) $(id).addEventListener("input", refreshList);
  $("previous-page").addEventListener("click", () => { page--; renderPage(); });
  $("next-page").addEventListener("click", () => { page++; renderPage(); });
  $("download-lines").addEventListener("click", () => download(false));
  $("download-nul").addEventListener("click", () => download(true));
  $("reset-decisions").addEventListener("click", () => {
    original.forEach((d, i) => { decisions[i] = d; });
    summarize();
    renderPage();
    if (selected >= 0) openCluster(selected, undefined, true);
  });
  refreshList();
  if (clusters.length) openCluster(order.length ? order[0] : 0, undefined, true);
  document.body.dataset.ready = "true";
})();
