// kschedlib report: sortable and filterable tables. The page reads fully without this script.
"use strict";
(function () {
  function value(row, index, numeric) {
    var td = row.cells[index];
    if (!td) { return numeric ? -Infinity : ""; }
    var v = td.getAttribute("data-v");
    if (numeric) {
      var n = parseFloat(v !== null ? v : td.textContent);
      return isNaN(n) ? -Infinity : n;
    }
    return (v !== null ? v : td.textContent).toLowerCase();
  }

  function sortBy(table, th, index) {
    var numeric = th.hasAttribute("data-num");
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    var heads = table.tHead.rows[0].cells;
    for (var i = 0; i < heads.length; i++) { heads[i].removeAttribute("aria-sort"); }
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = value(a, index, numeric), y = value(b, index, numeric);
      var order = x < y ? -1 : (x > y ? 1 : 0);
      return ascending ? order : -order;
    });
    var fragment = document.createDocumentFragment();
    rows.forEach(function (row) { fragment.appendChild(row); });
    body.appendChild(fragment);
  }

  function addFilter(table) {
    var box = document.createElement("label");
    box.className = "filter";
    var input = document.createElement("input");
    input.type = "search";
    input.placeholder = "filter rows";
    var count = document.createElement("span");
    var rows = table.tBodies[0].rows;
    count.textContent = rows.length + " rows";
    box.appendChild(input);
    box.appendChild(count);
    table.parentNode.insertBefore(box, table);
    input.addEventListener("input", function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      for (var i = 0; i < rows.length; i++) {
        var text = rows[i].textContent.toLowerCase();
        var match = words.every(function (w) { return text.indexOf(w) >= 0; });
        rows[i].hidden = !match;
        shown += match ? 1 : 0;
      }
      count.textContent = shown + " of " + rows.length + " rows";
    });
  }

  // Large heat maps draw one path per colour; name the node under the pointer, and go to its row on a click.
  function heatmap(box) {
    var names = box.getAttribute("data-names").split(" ");
    var cols = +box.getAttribute("data-cols"), step = +box.getAttribute("data-step");
    var block = +box.getAttribute("data-block"), head = +box.getAttribute("data-head");
    var table = document.getElementById(box.getAttribute("data-table"));
    var rows = {};
    if (table) {
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) { rows[row.cells[0].textContent] = row; });
    }
    var svg = box.querySelector("svg");
    var resources = Array.prototype.map.call(svg.querySelectorAll("text"), function (t) { return t.textContent; });
    var tip = document.createElement("div");
    tip.className = "tip";
    tip.hidden = true;
    box.appendChild(tip);
    function at(event) {
      var frame = svg.getBoundingClientRect(), view = svg.viewBox.baseVal;
      var x = (event.clientX - frame.left) * view.width / frame.width;
      var y = (event.clientY - frame.top) * view.height / frame.height;
      var part = Math.floor(y / block), inner = y - part * block - head;
      var column = Math.floor(x / step), index = Math.floor(inner / step) * cols + column;
      if (inner < 0 || column >= cols || index >= names.length || part >= resources.length) { return null; }
      return {name: names[index], part: part};
    }
    svg.addEventListener("mousemove", function (event) {
      var found = at(event);
      if (!found) { tip.hidden = true; return; }
      var row = rows[found.name];
      tip.textContent = found.name + " " + resources[found.part] + ": " +
        (row && row.cells[found.part + 1] ? row.cells[found.part + 1].textContent : "");
      var frame = box.getBoundingClientRect();
      tip.style.left = (event.clientX - frame.left + 12) + "px";
      tip.style.top = (event.clientY - frame.top + 12) + "px";
      tip.hidden = false;
    });
    svg.addEventListener("mouseleave", function () { tip.hidden = true; });
    svg.addEventListener("click", function (event) {
      var found = at(event), row = found && rows[found.name];
      if (!row) { return; }
      Array.prototype.forEach.call(document.querySelectorAll("tr.hit"), function (r) { r.classList.remove("hit"); });
      row.hidden = false;
      row.classList.add("hit");
      row.scrollIntoView({block: "center"});
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("div.heatmap[data-names]"), heatmap);

  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = th.textContent;
      button.title = "sort by " + th.textContent;
      th.textContent = "";
      th.appendChild(button);
      button.addEventListener("click", function () { sortBy(table, th, index); });
    });
    if (table.hasAttribute("data-filter")) { addFilter(table); }
  });
  document.documentElement.setAttribute("data-script", "ready");
})();
