// The simdedup spans review. All data comes from the JSON block #report-data; every text and
// id from the corpus is written with textContent, never as markup.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const docs = data.documents;
  const PAGE = 100;
  const $ = (id) => document.getElementById(id);
  let order = docs.map((_, i) => i);
  let page = 0;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  const INVISIBLE_IN_TEXT = /(?![\n\t])[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}]/gu;
  const codePoint = (c) => "U+" + c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
  function appendText(parent, text) {
    let last = 0;
    for (const match of text.matchAll(INVISIBLE_IN_TEXT)) {
      if (match.index > last) parent.appendChild(document.createTextNode(text.slice(last, match.index)));
      parent.appendChild(el("span", "ctl", codePoint(match[0])));
      last = match.index + match[0].length;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }
  const fmt = (n) => Number(n).toLocaleString("en");
  const pct = (s) => (s === null || s === undefined ? "\u2013" : (100 * s).toFixed(1) + "%");

  function overview() {
    const spans = docs.reduce((n, d) => n + d.spans.length, 0);
    const whole = docs.filter((d) => d.left_whole).length;
    const items = [["documents with spans", fmt(data.total)], ["shown here", fmt(docs.length)],
                   ["spans shown", fmt(spans)], ["left whole (too much removed)", fmt(whole)],
                   ["texts not read", fmt(data.missing.length)]];
    for (const [label, value] of items) {
      const box = el("div", "number");
      box.appendChild(el("b", null, value));
      box.appendChild(document.createTextNode(label));
      $("overview-numbers").appendChild(box);
    }
  }

  function sorted() {
    const how = $("sort").value, needle = $("search").value;
    order = docs.map((_, i) => i).filter((i) => !needle || docs[i].id.includes(needle));
    if (how === "share") order.sort((a, b) => (docs[b].share || 0) - (docs[a].share || 0) || a - b);
    if (how === "spans") order.sort((a, b) => docs[b].spans.length - docs[a].spans.length || a - b);
  }

  function list() {
    const rows = $("document-rows");
    rows.textContent = "";
    const pages = Math.max(1, Math.ceil(order.length / PAGE));
    page = Math.min(page, pages - 1);
    for (const i of order.slice(page * PAGE, (page + 1) * PAGE)) {
      const d = docs[i];
      const row = el("tr");
      row.appendChild(el("td", null, i + 1));
      row.appendChild(el("td", "id", d.id));
      row.appendChild(el("td", null, d.spans.length));
      row.appendChild(el("td", null, pct(d.share)));
      row.appendChild(el("td", null, d.left_whole ? "yes" : ""));
      row.addEventListener("click", () => show(i, row));
      rows.appendChild(row);
    }
    $("list-summary").textContent = fmt(order.length) + " documents";
    $("page-label").textContent = "page " + (page + 1) + " of " + pages;
  }

  function show(i, row) {
    for (const r of document.querySelectorAll("#document-rows tr.selected")) r.classList.remove("selected");
    if (row) row.classList.add("selected");
    const d = docs[i], detail = $("document-detail");
    detail.textContent = "";
    detail.appendChild(el("h3", "id", d.id));
    if (d.left_whole) detail.appendChild(el("p", "warning", "Left whole: it would lose " + pct(d.share) + " of its text."));
    const grid = el("div", "side-by-side");
    const textBox = el("div", "text");
    const notes = el("div");
    if (d.text === null) {
      textBox.appendChild(el("span", "cut", "The text could not be read as it was when the spans were found."));
    } else {
      let last = 0;
      d.spans.forEach((s, k) => {
        appendText(textBox, d.text.slice(last, s.start));
        const mark = el("mark");
        mark.id = "span-" + k;
        mark.title = "repeats " + s.copy + " at character " + s.copy_start;
        appendText(mark, d.text.slice(s.start, s.end));
        textBox.appendChild(mark);
        last = s.end;
      });
      appendText(textBox, d.text.slice(last));
    }
    d.spans.forEach((s, k) => {
      const note = el("div", "span-note");
      note.appendChild(el("h4", null, "span " + (k + 1) + ": similarity " + Number(s.similarity).toFixed(3) +
                                      ", in " + fmt(s.documents) + " documents"));
      const where = el("p");
      where.appendChild(document.createTextNode("repeats "));
      where.appendChild(el("span", "id", s.copy));
      where.appendChild(document.createTextNode(" at character " + fmt(s.copy_start)));
      note.appendChild(where);
      const copy = el("div", "text");
      if (s.copy_text === null) copy.appendChild(el("span", "cut", "not read"));
      else appendText(copy, s.copy_text);
      note.appendChild(copy);
      notes.appendChild(note);
    });
    grid.appendChild(textBox);
    grid.appendChild(notes);
    detail.appendChild(grid);
  }

  overview();
  sorted();
  list();
  $("sort").addEventListener("change", () => { page = 0; sorted(); list(); });
  $("search").addEventListener("input", () => { page = 0; sorted(); list(); });
  $("previous-page").addEventListener("click", () => { if (page > 0) { page--; list(); } });
  $("next-page").addEventListener("click", () => { page++; list(); });
  if (order.length) show(order[0], document.querySelector("#document-rows tr"));
  document.body.dataset.ready = "true";
})();
