// Autograd Lens player: steps a recording as the window does, from the data embedded in this page.
// Every string of the recording goes into the page as text (textContent, setAttribute), never as
// markup. The looks of states are CSS classes whose rules are made from the window's own style
// definitions; a step restyles only the items whose look changed (NOTE [looks as changes]).
(function () {
  "use strict";
  var T0 = performance.now();
  var SVG_NS = "http://www.w3.org/2000/svg";
  var D = JSON.parse(document.getElementById("lens-data").textContent);
  var ST = D.steps, SC = D.scene, K = D.constants;
  var count = ST.count;
  var strings = ST.strings;

  function el(tag, cls, parent) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (parent) parent.appendChild(e);
    return e;
  }
  function svg(tag, attrs, parent) {
    var e = document.createElementNS(SVG_NS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(e, s) { e.textContent = s == null ? "" : String(s); return e; }
  function clip(s, limit) {
    var flat = String(s).split(/\s+/).filter(Boolean).join(" ");
    limit = limit || K.max_chars;
    return flat.length <= limit ? flat : flat.slice(0, limit - 1) + "\u2026";
  }
  function formatBytes(n) {
    if (n < 1024) return String(n) + " B";
    if (n < 1024 * 1024) return (n / 1024).toFixed(1) + " KiB";
    return (n / 1024 / 1024).toFixed(1) + " MiB";
  }

  // -- the looks: "n:running", "s:freed|gone|note", "e:flow", "c:hidden" ------------------------
  var LOOKS = SC.looks.map(function (s) {
    var kind = s.charAt(0), rest = s.slice(2), parts = rest.split("|");
    return { kind: kind, state: parts[0], gone: parts[1] === "gone", note: parts.slice(2).join("|") };
  });

  // -- the graph, drawn once ---------------------------------------------------------------------
  var graph = document.getElementById("graph");
  var world = document.getElementById("world");
  var layers = {
    clusters: document.getElementById("l-clusters"), edges: document.getElementById("l-edges"),
    slotEdges: document.getElementById("l-slot-edges"), slots: document.getElementById("l-slots"),
    proxies: document.getElementById("l-proxies"), nodes: document.getElementById("l-nodes"),
  };
  var items = SC.items;
  var nNodes = items.nodes.length, nSlots = items.slots.length, nEdges = items.edges.length;
  var firstSlot = nNodes, firstEdge = nNodes + nSlots, firstCluster = nNodes + nSlots + nEdges;
  var nItems = firstCluster + items.clusters.length;
  var els = new Array(nItems);  // the <g> of each item
  var tagEls = new Array(nNodes);  // a node's state tag line
  var slotHead = new Array(nSlots), slotBody = new Array(nSlots), slotEdgeEls = new Array(nSlots);
  var proxiesOf = {};
  var shown = new Int32Array(nItems).fill(-1);  // the look each item is drawn in

  // Graphviz sized the boxes with its own font metrics; a line estimated wider than its box (bold
  // DejaVu Sans averages ~0.66 em a character) is fitted to it. Lines a step rewrites (a state's
  // tag) are never fitted: ``fixed`` lines are the first ``fixed`` rows.
  function lines(g, cx, cy, rows, px, firstBold, boldLast, width, fixed) {
    var lh = px * 1.2, top = cy - (rows.length * lh) / 2 + lh * 0.8, out = [];
    for (var i = 0; i < rows.length; i++) {
      var bold = (i === 0 && firstBold) || (boldLast && i === rows.length - 1);
      var a = { x: cx, y: top + i * lh, "class": bold ? "hd" : "bd" }, room = width - 8;
      if (i < fixed && String(rows[i]).length * px * (bold ? 0.66 : 0.6) > room && room > 0) {
        a.textLength = room;
        a.lengthAdjust = "spacingAndGlyphs";
      }
      out.push(text(svg("text", a, g), rows[i]));
    }
    return out;
  }
  function rect(g, x, y, w, h, cls, rounded) {
    var a = { x: x - w / 2, y: y - h / 2, width: w, height: h, "class": cls };
    if (rounded) { a.rx = Math.min(8, h / 4); }
    return svg("rect", a, g);
  }
  function pathD(flat) {
    if (!flat.length) return "";
    var d = "M" + flat[0] + " " + flat[1];
    for (var i = 2; i + 5 < flat.length + 0; i += 6) {
      d += "C" + flat[i] + " " + flat[i + 1] + " " + flat[i + 2] + " " + flat[i + 3] + " " + flat[i + 4] + " " + flat[i + 5];
    }
    return d;
  }
  function arrowD(flat, tip) {
    var n = flat.length, x0 = flat[n - 2], y0 = flat[n - 1], dx = tip[0] - x0, dy = tip[1] - y0;
    var len = Math.sqrt(dx * dx + dy * dy) || 1, half = 0.35 * len, nx = -dy / len * half, ny = dx / len * half;
    return "M" + tip[0] + " " + tip[1] + "L" + (x0 + nx) + " " + (y0 + ny) + "L" + (x0 - nx) + " " + (y0 - ny) + "Z";
  }

  // Items sit in groups of CHUNK: a restyled item makes the browser measure its group again and
  // the groups above it, not every item of a layer (a step took 5-20 ms at 5,000 nodes).
  var CHUNK = 128, chunks = new Map();
  function chunk(layer, i) {
    var list = chunks.get(layer);
    if (!list) chunks.set(layer, list = []);
    var k = Math.floor(i / CHUNK);
    if (!list[k]) {
      list[k] = svg("g", {});
      var next = null;  // keep the groups in order, whatever order they are made in
      for (var j = k + 1; j < list.length; j++) if (list[j]) { next = list[j]; break; }
      layer.insertBefore(list[k], next);
    }
    return list[k];
  }
  function buildClusters() {
    items.clusters.forEach(function (c, i) {
      var g = svg("g", { "class": "cl", "data-cluster": c[0] }, chunk(layers.clusters, i));
      rect(g, c[2], c[3], c[4], c[5], "bx", true);
      text(svg("text", { x: c[2] - c[4] / 2 + 8, y: c[3] - c[5] / 2 + 14 }, g), c[1]);
      els[firstCluster + i] = g;
    });
  }
  // A dash pattern along an edge across a 200-iteration loop (70,000 units) is 10,000 dashes, made
  // anew at every paint: 777 such edges took 12 s a frame. Long edges are drawn solid, at their
  // state's colour and opacity.
  var LONG_EDGE = 4000, longEdge = new Uint8Array(nEdges);
  function extent(flat) {
    var x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (var k = 0; k + 1 < flat.length; k += 2) {
      x0 = Math.min(x0, flat[k]); x1 = Math.max(x1, flat[k]); y0 = Math.min(y0, flat[k + 1]); y1 = Math.max(y1, flat[k + 1]);
    }
    return x1 - x0 + y1 - y0;
  }
  function buildEdges() {
    items.edges.forEach(function (e, i) {
      var g = svg("g", { "class": "ed" }, chunk(layers.edges, i));
      if (extent(e[2]) > LONG_EDGE) longEdge[i] = 1;
      svg("path", { d: pathD(e[2]) }, g);
      if (e[3]) svg("path", { d: arrowD(e[2], e[3]), "class": "ar" }, g);
      els[firstEdge + i] = g;
    });
  }
  // Nodes' boxes and every edge are made at once; a node's text, and saved values and stand-ins
  // whole, are made the first time they are on screen at a zoom where they are drawn (the
  // window's NOTE [overview]: fitted, a 5,000-node graph's text is too small to read, and making
  // and laying out its 50,000 text elements took seconds).
  function buildNodes() {
    items.nodes.forEach(function (n, i) {
      var g = svg("g", { "data-node": n[0] }, chunk(layers.nodes, i));
      rect(g, n[2], n[3], n[4], n[5], "bx", n[7]);
      els[i] = g;
    });
  }
  function nodeTexts(i) {
    var n = items.nodes[i], rows = lines(els[i], n[2], n[3], n[6].concat([""]), K.node_font_px, true, true, n[4], n[6].length);
    tagEls[i] = rows[rows.length - 1];
    tagEls[i].textContent = K.node_tags[LOOKS[shown[i]].state] || "";
  }
  function buildProxy(k) {
    var p = items.proxies[k], n = items.nodes[p[0]];
    var g = svg("g", { "data-proxy": n[0] }, chunk(layers.proxies, k));
    rect(g, p[1], p[2], p[3], p[4], "bx", n[7]);
    lines(g, p[1], p[2], p[5], K.slot_font_px, true, false, p[3], p[5].length);
    (proxiesOf[p[0]] = proxiesOf[p[0]] || []).push(g);
    if (shown[p[0]] >= 0) g.setAttribute("class", "px " + nodeClass(p[0], LOOKS[shown[p[0]]]));
    proxyEls[k] = g;
  }
  function buildSlot(i) {
    var s = items.slots[i], node = items.nodes[s[0]][0];
    var g = svg("g", { "data-slot": node + "/" + s[1] }, chunk(layers.slots, i));
    rect(g, s[3], s[4], s[5], s[6], "bx", s[2] === "value");
    if (s[2] === "tensor") rect(g, s[3], s[4], s[5], s[6], "ht").setAttribute("fill", "url(#hatch)");
    if (s[8]) {
      var line = svg("g", { "class": "se" }, chunk(layers.slotEdges, i));
      svg("path", { d: pathD(s[8][0]) }, line);
      slotEdgeEls[i] = line;
    }
    els[firstSlot + i] = g;
    applyLook(firstSlot + i, looks[firstSlot + i]);
  }
  function slotTexts(i) {
    var s = items.slots[i], rows = lines(els[firstSlot + i], s[3], s[4], [s[1]].concat(s[7]), K.slot_font_px, true, false, s[5], s[2] === "value" ? 1 + s[7].length : 0);
    slotHead[i] = rows[0];
    slotBody[i] = rows[1] || null;
    var code = shown[firstSlot + i];
    shown[firstSlot + i] = -1;
    applyLook(firstSlot + i, code);
  }
  var proxyEls = new Array(items.proxies.length);
  var nodeTextDone = new Uint8Array(nNodes), slotTextDone = new Uint8Array(nSlots);

  // what is on screen at the view's zoom is made (each item once)
  var built = false;
  function materialize() {
    if (!built) return;
    var w = viewSize.w, h = viewSize.h, m = 40 / view.s;
    var x0 = -view.x / view.s - m, y0 = -view.y / view.s - m, x1 = (w - view.x) / view.s + m, y1 = (h - view.y) / view.s + m;
    function seen(x, y, bw, bh) { return x + bw / 2 >= x0 && x - bw / 2 <= x1 && y + bh / 2 >= y0 && y - bh / 2 <= y1; }
    var i;
    if (view.s * K.node_font_px >= K.min_readable_px) {
      for (i = 0; i < nNodes; i++) {
        var n = items.nodes[i];
        if (!nodeTextDone[i] && seen(n[2], n[3], n[4], n[5])) { nodeTextDone[i] = 1; nodeTexts(i); }
      }
    }
    if (view.s < MIN_SLOT_LOD) return;
    var readable = view.s * K.slot_font_px >= K.min_readable_px;
    for (i = 0; i < nSlots; i++) {
      var s = items.slots[i];
      if (slotTextDone[i] || !seen(s[3], s[4], s[5], s[6])) continue;
      if (!els[firstSlot + i]) buildSlot(i);
      if (readable) { slotTextDone[i] = 1; slotTexts(i); }
    }
    for (i = 0; i < items.proxies.length; i++) {
      var p = items.proxies[i];
      if (!proxyEls[i] && seen(p[1], p[2], p[3], p[4])) buildProxy(i);
    }
  }

  function nodeClass(item, look) {
    var n = items.nodes[item];
    return "k-" + n[1] + " s-" + look.state + (n[7] ? " mod" : "");
  }
  function applyLook(item, code) {
    if (shown[item] === code) return;
    var g = els[item];
    if (!g) return;  // a saved value not made yet: made in the look of the step shown then
    shown[item] = code;
    var look = LOOKS[code];
    if (item < firstSlot) {
      var cls = nodeClass(item, look);
      g.setAttribute("class", "nd " + cls);
      g.setAttribute("data-state", look.state);
      if (tagEls[item]) tagEls[item].textContent = K.node_tags[look.state] || "";
      var px = proxiesOf[item];
      if (px) for (var j = 0; j < px.length; j++) px[j].setAttribute("class", "px " + cls);
    } else if (item < firstEdge) {
      var i = item - firstSlot, s = items.slots[i];
      g.setAttribute("class", "sl s-" + look.state + (look.gone ? " fd" : ""));
      g.setAttribute("data-state", look.state);
      if (slotHead[i]) slotHead[i].textContent = clip(s[1] + " " + (K.slot_tags[look.state] || ""));
      if (s[2] === "tensor" && slotBody[i]) slotBody[i].textContent = look.note || s[7][0];
      var line = slotEdgeEls[i];
      if (line) line.setAttribute("class", "se e-" + (look.state === "hidden" ? "hidden" : look.gone ? "gone" : "normal"));
    } else if (item < firstCluster) {
      g.setAttribute("class", "ed e-" + look.state + (longEdge[item - firstEdge] ? " long" : ""));
    } else {
      g.setAttribute("class", "cl c-" + look.state);
    }
  }

  // -- looks step by step ------------------------------------------------------------------------
  var looks = Int32Array.from(SC.initial);  // every item's look at the step shown
  var previous = [];  // per step, the look each of its changes replaced (for stepping back)
  (function () {
    var walk = Int32Array.from(SC.initial);
    for (var i = 0; i < SC.changes.length; i++) {
      var ch = SC.changes[i], prev = new Int32Array(ch.length / 2);
      for (var k = 0; k < ch.length; k += 2) { prev[k / 2] = walk[ch[k]]; walk[ch[k]] = ch[k + 1]; }
      previous.push(prev);
    }
  })();
  var index = 0;
  var touched = new Uint8Array(nItems), touchedList = [];

  function touch(item) { if (!touched[item]) { touched[item] = 1; touchedList.push(item); } }
  function moveLooks(to) {
    var i, k, ch;
    if (to > index) {
      for (i = index + 1; i <= to; i++) {
        ch = SC.changes[i];
        for (k = 0; k < ch.length; k += 2) { looks[ch[k]] = ch[k + 1]; touch(ch[k]); }
      }
    } else {
      for (i = index; i > to; i--) {
        ch = SC.changes[i];
        var prev = previous[i];
        for (k = ch.length - 2; k >= 0; k -= 2) { looks[ch[k]] = prev[k / 2]; touch(ch[k]); }
      }
    }
    for (k = 0; k < touchedList.length; k++) { applyLook(touchedList[k], looks[touchedList[k]]); touched[touchedList[k]] = 0; }
    touchedList.length = 0;
  }

  // -- the program -------------------------------------------------------------------------------
  // Only the lines in sight are made (a generated program of 2,500 lines took 300 ms to lay out
  // whole); every line has the same height, so a line's place is its number.
  var LINE_PX = 19;
  var codeEl = document.getElementById("code"), codeBox = document.getElementById("code-panel");
  var codeText = ST.program.replace(/\n$/, "").split("\n");
  var FIRST = ST.first_line || 1;  // the number of the first line shown (a with-block of a file)
  codeEl.style.height = codeText.length * LINE_PX + "px";
  codeEl.style.minWidth = (Math.max.apply(null, codeText.slice(0, 20000).map(function (l) { return l.length; }).concat([0])) + 6) + "ch";
  // A step reads no layout (that would lay out the restyled graph at once, 5-20 ms): the code box's
  // height is read at a resize, its scroll position kept from its scroll events.
  var markedLine = 0, markedFail = false, drawnRange = [-1, -1], rowOf = {};
  var codeView = { top: 0, height: 600 };
  function renderCode(force) {
    var first = Math.max(0, Math.floor(codeView.top / LINE_PX) - 10);
    var last = Math.min(codeText.length, first + Math.ceil(codeView.height / LINE_PX) + 20);
    if (!force && first === drawnRange[0] && last === drawnRange[1]) return;
    drawnRange = [first, last];
    codeEl.textContent = "";
    rowOf = {};
    for (var i = first; i < last; i++) {
      var row = el("div", "ln", codeEl);
      row.style.top = i * LINE_PX + "px";
      row.setAttribute("data-line", i + FIRST);
      var no = text(el("span", "no", row), i + FIRST);
      no.title = "go to the first step that ran this line";
      no.setAttribute("data-go", i + FIRST);
      text(el("span", "tx", row), codeText[i]);
      rowOf[i + FIRST] = row;
    }
    markRow();
  }
  function markRow() {
    var row = rowOf[markedLine];
    if (row) row.className = markedFail ? "ln cur fail" : "ln cur";
  }
  codeEl.addEventListener("click", function (ev) {
    var line = ev.target && ev.target.getAttribute && ev.target.getAttribute("data-go");
    if (line) goToLine(+line);
  });
  codeBox.addEventListener("scroll", function () { codeView.top = codeBox.scrollTop; renderCode(false); });
  function measureCode() { codeView = { top: codeBox.scrollTop, height: codeBox.clientHeight || 600 }; }
  function goToLine(line) {
    for (var i = 0; i < count; i++) if (ST.line[i] === line) return go(i);
    for (var c = 0; c < ST.calls.length; c++) if (ST.calls[c].line === line) return go(ST.calls[c].first_step);
  }
  function showLine(i) {
    var line = ST.line[i] || 0, fail = strings[ST.kind[i]] === "error";
    if (line === markedLine && fail === markedFail) return;
    var old = rowOf[markedLine];
    if (old) old.className = "ln";
    markedLine = line; markedFail = fail;
    if (line) {
      var top = (line - FIRST) * LINE_PX;
      if (top < codeView.top || top + LINE_PX > codeView.top + codeView.height) {
        codeView.top = Math.max(0, top - codeView.height / 3);
        codeBox.scrollTop = codeView.top;
      }
    }
    renderCode(false);
    markRow();
  }

  // -- gradients per call ------------------------------------------------------------------------
  // The value line and the history are the window's gradient panel's own words, made in Python
  // (app.core.lesson.panel_words) and kept as runs of steps: the page only shows the step's run.
  var gradList = document.getElementById("grad-list");
  var leafEls = ST.grads.leaves.map(function (name) {
    var box = el("div", "leaf", gradList);
    box.setAttribute("data-leaf", name);
    return { box: box, now: el("div", "leaf-now", box), history: el("div", "leaf-history", box), name: name };
  });
  if (!leafEls.length) text(el("div", "", gradList), "no leaf tensors that require grad");
  function gradAt(name, i) {
    var ch = ST.grads.changes[name], found = null;
    for (var k = 0; k < ch.length && ch[k][0] <= i; k++) found = ch[k];
    return found;
  }
  // A run [first step, value] holds from its step to the next run's: the last run starting at i or before.
  function runAt(runs, i) {
    var lo = 0, hi = runs.length - 1;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (runs[mid][0] <= i) lo = mid; else hi = mid - 1;
    }
    return runs[lo][1];
  }
  function showGrads(i) {
    leafEls.forEach(function (leaf) {
      var now = gradAt(leaf.name, i);
      leaf.now.textContent = strings[runAt(ST.grads.text[leaf.name], i)];
      leaf.box.setAttribute("data-grad", JSON.stringify(now ? now[1] : null));
      leaf.history.textContent = "";
      var rows = runAt(ST.grads.history[leaf.name], i);
      (rows.length ? rows : [null]).forEach(function (k) {
        var r = k === null ? "" : strings[k];
        text(el("div", "", leaf.history), r).title = r;
      });
    });
  }

  // -- the error panel, at the error step only -----------------------------------------------------
  var errorPanel = document.getElementById("error-panel");
  var EP = ST.error_panel;
  if (EP) {
    text(document.getElementById("error-title"), EP.title);
    // the first sentence says what went wrong; the whole message is a click away, so the first fix
    // stays above the fold at 1280x720 (as the window's error panel)
    var message = document.getElementById("error-message"), more = document.getElementById("error-more");
    var first = firstSentence(EP.message);
    text(message, first);
    if (first !== EP.message.trim()) {
      more.hidden = false;
      more.addEventListener("click", function () { text(message, EP.message); more.hidden = true; });
    }
    var fixes = document.getElementById("fixes");
    EP.fixes.forEach(function (f, i) {
      var box = el("div", "fix", fixes);
      text(el("div", "fix-title", box), "Fix " + (i + 1) + ": " + f.title);
      text(el("div", "fix-why", box), f.explanation);
      var pre = el("pre", "diff", box);
      f.diff.forEach(function (line) { text(el("span", line.charAt(0) === "+" ? "add" : "del", pre), line); });
    });
  }
  function firstSentence(message) {
    var t = message.trim(), m = /[.!?](?=\s)|\n/.exec(t);
    return m ? t.slice(0, m.index + m[0].length).trim() : t;
  }
  function showError(i) { errorPanel.hidden = !(EP && EP.step === i); }

  // -- step counter, caption, timeline, chart -------------------------------------------------------
  var stepNumber = document.getElementById("step-number"), stepDetail = document.getElementById("step-detail");
  var caption = document.getElementById("caption"), slider = document.getElementById("slider");
  slider.max = Math.max(count - 1, 0);
  slider.addEventListener("input", function () { go(+slider.value); });
  text(document.getElementById("title"), ST.title || ST.name);
  text(document.getElementById("device"), ST.name + " · recorded on " + ST.device + " · torch " + ST.torch_version);
  document.title = (ST.title || ST.name) + " · Autograd Lens";

  function placeMarks() {
    var marks = document.getElementById("marks"), width = marks.clientWidth || 800;
    marks.textContent = "";
    var lastRight = { call: -1e9, iteration: -1e9, fail: -1e9 }, span = Math.max(count - 1, 1);
    var room = ST.marks.length * 28 < width, lastCall = null;
    ST.marks.forEach(function (m) {
      var x = (m[0] / span) * width, b = el("button", "mark " + m[1], marks);
      b.type = "button";
      b.style.left = (m[0] / span * 100) + "%";
      b.title = m[3];
      b.setAttribute("data-step", m[0]);
      if (m[1] === "fail" && lastCall && lastCall.step === m[0]) {  // beside its call's own mark
        var warn = text(el("span", "warn", lastCall.button), " " + m[2]);
        warn.title = m[3];
        lastCall.button.title += "; " + m[3];
        marks.removeChild(b);
        return;
      }
      if (m[1] === "call") lastCall = { step: m[0], button: b };
      var label = m[1] === "fail" ? m[2] : room ? m[2] : m[1] === "call" ? m[2].replace("call ", "") : "";
      if (x - lastRight[m[1]] < 30 && m[1] !== "fail") label = "";
      if (label) lastRight[m[1]] = x;
      text(b, label || "\u200b");
      b.addEventListener("click", function () { go(m[0]); });
    });
  }

  var chart = document.getElementById("chart"), chartText = document.getElementById("chart-text"), nowLine;
  (function drawChart() {
    var W = 1000, H = 100, span = Math.max(count - 1, 1);
    chart.setAttribute("viewBox", "0 0 " + W + " " + H);
    function series(values, cls) {
      var max = Math.max.apply(null, [1].concat(values.length > 100000 ? [] : values));
      if (values.length > 100000) for (var v = 0; v < values.length; v++) if (values[v] > max) max = values[v];
      var pts = [], buckets = Math.min(values.length, 2000);
      for (var b = 0; b < buckets; b++) {
        var lo = Math.floor(b * values.length / buckets), hi = Math.max(lo + 1, Math.floor((b + 1) * values.length / buckets)), top = 0;
        for (var k = lo; k < hi; k++) if (values[k] > top) top = values[k];
        pts.push(((lo / span) * W).toFixed(1) + "," + (H - 4 - (top / max) * (H - 8)).toFixed(1));
      }
      svg("polyline", { points: pts.join(" "), "class": cls }, chart);
    }
    series(ST.saved_bytes, "saved");
    series(ST.alive_nodes, "alive");
    nowLine = svg("line", { x1: 0, x2: 0, y1: 0, y2: H, "class": "now" }, chart);
    chart.addEventListener("click", function (ev) {
      var r = chart.getBoundingClientRect();
      go(Math.round((ev.clientX - r.left) / r.width * span));
    });
  })();
  function showChart(i) {
    var x = (i / Math.max(count - 1, 1)) * 1000;
    nowLine.setAttribute("x1", x); nowLine.setAttribute("x2", x);
    chartText.textContent = "saved " + formatBytes(ST.saved_bytes[i]) + " · " + ST.alive_nodes[i] + " nodes alive";
  }

  // -- legend, themes -------------------------------------------------------------------------------
  (function legend() {
    var list = document.getElementById("legend-list");
    K.legend.forEach(function (e) {
      var s = svg("svg", { viewBox: "0 0 44 18" }, list);
      var g = svg("g", { "class": e.box === "node" ? "nd k-op s-" + e.state : "sl s-" + e.state }, s);
      svg("rect", { x: 2, y: 2, width: 40, height: 14, "class": "bx", rx: e.state === "value" ? 4 : 0 }, g);
      if (e.box === "slot") svg("rect", { x: 2, y: 2, width: 40, height: 14, "class": "ht", fill: "url(#hatch)" }, g);
      var t = el("div", "", list);
      text(el("b", "", t), e.tag);
      t.appendChild(document.createTextNode(" " + e.meaning));
    });
  })();
  var themeSelect = document.getElementById("theme");
  K.themes.forEach(function (name) { var o = text(el("option", "", themeSelect), name); o.value = name; });
  function setTheme(name) {
    K.themes.forEach(function (t) { document.body.classList.remove("theme-" + t); });
    document.body.classList.add("theme-" + name);
    themeSelect.value = name;
  }
  themeSelect.addEventListener("change", function () { setTheme(themeSelect.value); });

  // -- zoom and pan -------------------------------------------------------------------------------
  var view = { x: 0, y: 0, s: 1 }, fitted = true;
  var MIN_SLOT_LOD = 0.12;
  function applyView() {
    materialize();
    world.setAttribute("transform", "translate(" + view.x + " " + view.y + ") scale(" + view.s + ")");
    graph.classList.toggle("far-nodes", view.s * K.node_font_px < K.min_readable_px);
    graph.classList.toggle("far-slots", view.s * K.slot_font_px < K.min_readable_px);
    graph.classList.toggle("no-slots", view.s < MIN_SLOT_LOD);
  }
  var viewSize = { w: 800, h: 500 };  // the graph's box in pixels: read at a fit and a resize only
  function fit() {
    viewSize = { w: graph.clientWidth || 800, h: graph.clientHeight || 500 };
    var w = viewSize.w, h = viewSize.h, m = 12;
    var s = Math.min((w - 2 * m) / Math.max(SC.width, 1), (h - 2 * m) / Math.max(SC.height, 1));
    s = Math.min(s, 1.5);
    view = { s: s, x: (w - SC.width * s) / 2, y: (h - SC.height * s) / 2 };
    fitted = true;
    applyView();
  }
  function zoom(factor, cx, cy) {
    if (cx === undefined) { cx = viewSize.w / 2; cy = viewSize.h / 2; }
    var s = Math.max(0.005, Math.min(20, view.s * factor));
    view.x = cx - (cx - view.x) * (s / view.s);
    view.y = cy - (cy - view.y) * (s / view.s);
    view.s = s;
    fitted = false;
    framedError = false;  // the learner's own zoom stays
    applyView();
  }
  graph.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var r = graph.getBoundingClientRect();
    zoom(Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  var drag = null;
  graph.addEventListener("pointerdown", function (ev) {
    drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y };
    graph.setPointerCapture(ev.pointerId);
    graph.classList.add("dragging");
  });
  graph.addEventListener("pointermove", function (ev) {
    if (!drag) return;
    view.x = drag.vx + ev.clientX - drag.x; view.y = drag.vy + ev.clientY - drag.y;
    fitted = false;
    framedError = false;
    applyView();
  });
  graph.addEventListener("pointerup", function () { drag = null; graph.classList.remove("dragging"); });
  window.addEventListener("resize", function () {
    viewSize = { w: graph.clientWidth || 800, h: graph.clientHeight || 500 };
    if (fitted) fit(); else applyView();
    placeMarks();
    measureCode();
    renderCode(true);
  });

  // Follow the running node (the window's View > Follow): at a step about a node, the view pans to
  // it at a zoom its text reads at, unless it is in sight at such a zoom already. Off until turned
  // on, as in the window: zoomed in on a 200-iteration loop a step took 70 ms (median; 2-6 ms fitted).
  var FOLLOW_PX = 12, followButton = document.getElementById("b-follow"), following = false;
  function setFollow(on) {
    following = on;
    followButton.setAttribute("aria-pressed", on ? "true" : "false");
    if (on) follow(index);
  }
  followButton.addEventListener("click", function () { setFollow(!following); if (!following) fit(); followButton.blur(); });
  // An error step's failing node is shown readable whether or not following is on, as the window
  // shows it (fitted, a GAN's 40 nodes left no label readable until "follow" was pressed); the
  // fitted view comes back on the next step, unless the learner zoomed or dragged meanwhile.
  var framedError = false;
  function follow(i) {
    var node = SC.focus[i], error = strings[ST.kind[i]] === "error";
    if (framedError && !error) {
      framedError = false;
      if (!following) { fit(); return; }
    }
    if (node === undefined || node < 0) return;
    if (!following) {
      if (!error || !fitted) return;
      framedError = true;
    }
    var n = items.nodes[node], s = view.s;
    var sx = n[2] * s + view.x, sy = n[3] * s + view.y, inside = sx > 40 && sy > 40 && sx < viewSize.w - 40 && sy < viewSize.h - 40;
    if (inside && s * K.node_font_px >= FOLLOW_PX * 0.75) return;
    if (s * K.node_font_px < FOLLOW_PX) s = FOLLOW_PX / K.node_font_px;
    view = { s: s, x: viewSize.w / 2 - n[2] * s, y: viewSize.h / 2 - n[3] * s };
    fitted = false;
    applyView();
  }

  // -- stepping ---------------------------------------------------------------------------------
  function go(to) {
    to = Math.max(0, Math.min(count - 1, to | 0));
    if (count === 0) return;
    moveLooks(to);
    index = to;
    stepNumber.textContent = "Step " + to + " / " + (count - 1);
    stepDetail.textContent = strings[ST.detail[to]];
    var cap = strings[ST.caption[to]];
    caption.textContent = cap;
    var printed = ST.printed[String(to)];
    if (printed) text(el("div", "printed", caption), printed.join("\n"));
    slider.value = to;
    showLine(to);
    showGrads(to);
    showError(to);
    showChart(to);
    follow(to);
  }
  function stops(list, forward) {
    if (forward) { for (var i = 0; i < list.length; i++) if (list[i] > index) return go(list[i]); return go(count - 1); }
    for (var j = list.length - 1; j >= 0; j--) if (list[j] < index) return go(list[j]);
    return go(0);
  }
  var timer = null, playButton = document.getElementById("b-play");
  function play() {
    if (timer) { clearInterval(timer); timer = null; playButton.textContent = "\u25b6"; return; }
    if (index >= count - 1) go(0);
    playButton.textContent = "\u23f8";
    timer = setInterval(function () { if (index >= count - 1) play(); else go(index + 1); }, 500);
  }
  var buttons = {
    "b-home": function () { go(0); }, "b-end": function () { go(count - 1); },
    "b-prev": function () { go(index - 1); }, "b-next": function () { go(index + 1); },
    "b-prev-call": function () { stops(ST.call_stops, false); }, "b-next-call": function () { stops(ST.call_stops, true); },
    "b-play": play, "b-fit": fit,
    "b-zoom-in": function () { zoom(1.25); }, "b-zoom-out": function () { zoom(0.8); },
  };
  Object.keys(buttons).forEach(function (id) {
    var button = document.getElementById(id);
    // a clicked button gives the keyboard back: Space then plays, and never clicks it again too
    button.addEventListener("click", function () { buttons[id](); button.blur(); });
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.target === themeSelect) return;
    var ctrl = ev.ctrlKey || ev.metaKey, done = true;
    if (ev.key === "ArrowRight" || ev.key === "ArrowLeft") {
      var fwd = ev.key === "ArrowRight";
      if (ev.shiftKey) stops(ST.call_stops, fwd);
      else if (ctrl) stops(ST.iteration_starts, fwd);
      else go(index + (fwd ? 1 : -1));
    } else if (ev.key === "Home") go(0);
    else if (ev.key === "End") go(count - 1);
    else if (ev.key === " " || ev.key === "Spacebar") play();
    else if (ctrl && (ev.key === "=" || ev.key === "+")) zoom(1.25);
    else if (ctrl && ev.key === "-") zoom(0.8);
    else if (ctrl && ev.key === "0") fit();
    else done = false;
    if (done) ev.preventDefault();
  });

  // -- first paint --------------------------------------------------------------------------------
  var phases = { parsed: performance.now() - T0 };
  setTheme(K.themes[0]);
  fit();  // before the items exist: text too small to read is never laid out
  followButton.setAttribute("aria-pressed", "false");
  graph.removeChild(world);  // made and styled while detached: no style work per element
  buildClusters(); buildEdges(); buildNodes();
  phases.built = performance.now() - T0;
  for (var item = 0; item < nItems; item++) applyLook(item, looks[item]);
  graph.appendChild(world);
  built = true;
  materialize();
  phases.styled = performance.now() - T0;
  placeMarks();
  measureCode();
  renderCode(true);
  go(ST.opening);
  phases.stepped = performance.now() - T0;
  var player = window.lensPlayer = {
    go: go, count: count, fit: fit, zoom: zoom, setTheme: setTheme, setFollow: setFollow,
    get index() { return index; },
    built_ms: performance.now() - T0,
    phases: phases,
    first_paint_ms: null,
  };
  requestAnimationFrame(function () { setTimeout(function () { player.first_paint_ms = performance.now(); }, 0); });
})();
