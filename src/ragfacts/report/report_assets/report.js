// The per-answer view of a ragfacts report. Every text from data is inserted with textContent or text nodes,
// never as HTML: an answer holding a script tag shows as text.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var list = document.getElementById("answers");
  var multi = data.runs.length > 1;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function score(value) { return value === null || value === undefined ? "" : " " + Number(value).toFixed(2); }
  function methodName(entry) { return (multi ? data.runs[entry[0]].name + " · " : "") + entry[1]; }

  function recallClass(value) {
    // a recall chip: green when every fact is there, red when none is, amber in between
    if (value === null || value === undefined) return "";
    return value >= 1 ? "consistent" : (value <= 0 ? "inconsistent" : "partial");
  }

  function chip(entry) {
    var view = entry[2];
    var label = view.label || (view.score === null || view.score === undefined ? "unscored" : "recall");
    var shown = view.probability === null || view.probability === undefined ? score(view.score)
      : " P(faithful) " + Number(view.probability).toFixed(2) + (view.calibrated ? "" : " (uncalibrated)");
    var colour = view.label || (view.complete ? recallClass(view.score) : "unscored");
    var node = el("span", "chip " + colour, methodName(entry) + ": " + label + shown);
    if (view.failures) node.title = view.failures + " failed call(s)";
    return node;
  }

  function highlight(container, text, quotes) {
    // Split a text into text nodes and <mark>s at the quotes found in it verbatim (the reference at its quotes,
    // the answer at its segments).
    var marks = [];
    quotes.forEach(function (q) {
      var at = q.text ? text.indexOf(q.text) : -1;
      if (at >= 0) marks.push([at, at + q.text.length, q.label]);
    });
    marks.sort(function (a, b) { return a[0] - b[0]; });
    var position = 0;
    marks.forEach(function (m) {
      if (m[0] < position) return;
      container.appendChild(document.createTextNode(text.slice(position, m[0])));
      container.appendChild(el("mark", m[2] || "", text.slice(m[0], m[1])));
      position = m[1];
    });
    container.appendChild(document.createTextNode(text.slice(position)));
  }

  function renderView(entry, quotes) {
    var view = entry[2];
    var box = el("div", "method");
    var title = el("div", "title");
    title.appendChild(chip(entry));
    box.appendChild(title);
    if (view.reason) box.appendChild(el("div", "explanation", view.reason));
    (view.problems || []).forEach(function (p) { box.appendChild(el("div", "explanation", "• " + p)); });
    (view.segments || []).forEach(function (s, n) {
      var seg = el("div", "segment " + (s.label || ""));
      var line = "#" + (n + 1) + " " + s.text;
      seg.appendChild(el("div", "", line));
      var facts = [s.label];
      if (s.error_types && s.error_types.length) facts.push(s.error_types.join(", "));
      if (s.probability !== null && s.probability !== undefined) facts.push("P(supported) " + Number(s.probability).toFixed(2));
      seg.appendChild(el("div", "explanation", facts.join(" · ")));
      (s.explanations || []).forEach(function (x) { seg.appendChild(el("div", "explanation", x)); });
      (s.quotes || []).forEach(function (q) {
        var found = q.match === "not_found" ? "not found in the reference" : (q.match === "exact" ? "found" : "found (normalised)");
        seg.appendChild(el("div", "quote " + q.match, "“" + q.text + "” — " + found));
        quotes.push({ text: q.text, label: s.label });
      });
      box.appendChild(seg);
    });
    (view.claims || []).forEach(function (c) {
      var claim = el("div", "segment " + (c.verdict === "supported" ? "consistent" : c.verdict === "unscored" ? "unscored" : "inconsistent"));
      claim.appendChild(el("span", "", c.text + " — "));
      claim.appendChild(el("span", c.verdict, c.verdict));
      if (c.reason) claim.appendChild(el("div", "explanation", c.reason));
      box.appendChild(claim);
    });
    (view.facts || []).forEach(function (f) {
      var fact = el("div", "segment " + (f.verdict === "True" ? "consistent" : f.verdict === "False" ? "inconsistent" : "unscored"));
      fact.appendChild(el("span", "", f.fact + " — "));
      fact.appendChild(el("span", f.verdict, f.verdict));
      if (f.raw && f.raw !== f.verdict) fact.appendChild(el("div", "explanation", "model said: " + f.raw));
      if (f.citation) fact.appendChild(el("div", "quote " + (f.citation_found ? "exact" : "not_found"), "citation “" + f.citation + "” — " + (f.citation_found ? "found in the answer" : "not found in the answer")));
      box.appendChild(fact);
    });
    (view.failed_calls || []).forEach(function (f) { box.appendChild(el("div", "explanation unscored", "failed call: " + f)); });
    return box;
  }

  function renderDetail(item) {
    var detail = el("div", "detail");
    if (item.question) { detail.appendChild(el("h3", "", "Question")); detail.appendChild(el("div", "", item.question)); }
    detail.appendChild(el("h3", "", "Answer" + (item.gold ? " (gold: " + item.gold + (item.error_type ? ", " + item.error_type : "") + ")" : "")));
    var answer = el("div", "answer-text");
    detail.appendChild(answer);
    var quotes = [];
    item.results.forEach(function (entry) { detail.appendChild(renderView(entry, quotes)); });
    // The answer coloured by the first result with segments: each segment found verbatim in the answer is marked
    // with its verdict (segments a decomposition rewrote are listed under their method only).
    var segmented = item.results.filter(function (entry) { return (entry[2].segments || []).length; })[0];
    var parts = segmented ? segmented[2].segments.map(function (s) { return { text: s.text, label: s.label || "" }; }) : [];
    highlight(answer, item.answer, parts);
    if (segmented) detail.insertBefore(el("div", "note", "coloured by " + methodName(segmented) + ": green consistent, red inconsistent, yellow unscored"), answer.nextSibling);
    if (item.ref >= 0) {
      detail.appendChild(el("h3", "", "Reference"));
      var ref = el("div", "reference");
      highlight(ref, data.references[item.ref], quotes);
      detail.appendChild(ref);
    }
    return detail;
  }

  var rows = data.items.map(function (item) {
    var box = el("div", "answer");
    var head = el("div", "head");
    head.appendChild(el("span", "id", item.id));
    if (item.gold) head.appendChild(el("span", "chip " + item.gold, "gold: " + item.gold));
    item.results.forEach(function (entry) { head.appendChild(chip(entry)); });
    head.appendChild(el("span", "snippet", item.answer));
    var detail = null;
    head.addEventListener("click", function () {
      if (!detail) { detail = renderDetail(item); box.appendChild(detail); }
      else detail.classList.toggle("hidden");
    });
    box.appendChild(head);
    list.appendChild(box);
    return { item: item, box: box, text: (item.id + "\n" + item.question + "\n" + item.answer).toLowerCase() };
  });

  var search = document.getElementById("f-search");
  var boxes = { disagree: document.getElementById("f-disagree"), failures: document.getElementById("f-failures"), differs: document.getElementById("f-differs") };
  var type = document.getElementById("f-type");
  var lang = document.getElementById("f-lang");
  var count = document.getElementById("count");

  function apply() {
    var q = search.value.trim().toLowerCase();
    var shown = 0;
    rows.forEach(function (row) {
      var f = row.item.flags;
      var visible = (!q || row.text.indexOf(q) >= 0) &&
        (!boxes.disagree.checked || f.disagree) && (!boxes.failures.checked || f.failures) &&
        (!boxes.differs.checked || f.differs) &&
        (!type.value || row.item.types.indexOf(type.value) >= 0) && (!lang.value || row.item.lang === lang.value);
      row.box.classList.toggle("hidden", !visible);
      if (visible) shown += 1;
    });
    count.textContent = shown + " of " + rows.length + " answers";
    var state = new URLSearchParams();
    if (q) state.set("q", search.value.trim());
    Object.keys(boxes).forEach(function (k) { if (boxes[k].checked) state.set(k, "1"); });
    if (type.value) state.set("type", type.value);
    if (lang.value) state.set("lang", lang.value);
    var hash = state.toString();
    if (location.hash.slice(1) !== hash) history.replaceState(null, "", hash ? "#" + hash : location.pathname);
  }

  function fromHash() {
    var initial = new URLSearchParams(location.hash.slice(1));
    search.value = initial.get("q") || "";
    Object.keys(boxes).forEach(function (k) { boxes[k].checked = initial.get(k) === "1"; });
    type.value = initial.get("type") || "";
    lang.value = initial.get("lang") || "";
    apply();
  }
  [search, type, lang].forEach(function (n) { n.addEventListener("input", apply); n.addEventListener("change", apply); });
  Object.keys(boxes).forEach(function (k) { boxes[k].addEventListener("change", apply); });
  window.addEventListener("hashchange", fromHash);
  fromHash();
  document.body.dataset.ready = "1";
})();
