// The search page: the form posted to /search as JSON (format json): the table is the
// command's lines, each hit's with its alignment, and the TSV is those lines.
"use strict";

const $ = (id) => document.getElementById(id);
const headers = () => {
  const token = $("token").value;
  const h = { "content-type": "application/json" };
  if (token) h.authorization = "Bearer " + token;
  return h;
};

function say(text, error) {
  $("status").textContent = text;
  $("status").className = error ? "error" : "";
}

async function databases() {
  const health = await fetch("/health").then((r) => r.json());
  $("version").textContent = "wavedp " + health.version;
  const answer = await fetch("/databases", { headers: headers() });
  if (answer.status === 401) {
    document.querySelector(".token").hidden = false;
    say("This service asks for a token.", true);
    return;
  }
  const body = await answer.json();
  $("database").replaceChildren(...body.databases.map((d) => {
    const option = document.createElement("option");
    option.value = d.name;
    option.textContent = `${d.name} (${d.alphabet}, ${d.sequences.toLocaleString()} sequences)`;
    return option;
  }));
}

function request(format) {
  const body = { queries: $("queries").value, database: $("database").value,
                 top: Number($("top").value), stats: $("stats").value, mode: $("mode").value,
                 format: format };
  for (const name of ["matrix", "gap_open", "gap_extend", "evalue"]) {
    const value = $(name).value.trim();
    if (value) body[name] = name === "matrix" ? value : Number(value);
  }
  return body;
}

function cell(row, text, number) {
  const td = row.insertCell();
  td.textContent = text;
  if (number) td.className = "number";
  return td;
}

function show(answer) {
  // the table is the command's own lines (BLAST's 12 columns, as wavedp search prints
  // them), each hit's with its alignment
  const rows = $("hits").tBodies[0];
  rows.replaceChildren();
  const hits = answer.queries.flatMap((query) => query.hits);
  for (const hit of hits) {
    const row = rows.insertRow();
    hit.blast6.split("\t").forEach((field, j) => cell(row, field, j >= 2));
    const toggle = document.createElement("button");
    toggle.type = "button";
    toggle.textContent = "alignment";
    const detail = rows.insertRow();
    detail.className = "alignment";
    detail.hidden = true;
    const pre = document.createElement("pre");
    pre.textContent = hit.pairwise;
    const wide = detail.insertCell();
    wide.colSpan = 13;
    wide.append(pre);
    toggle.onclick = () => { detail.hidden = !detail.hidden; };
    row.insertCell().append(toggle);
  }
  const tsv = hits.map((hit) => hit.blast6 + "\n").join("");
  $("download").href = URL.createObjectURL(new Blob([tsv],
                                                    { type: "text/tab-separated-values" }));
  $("results").hidden = false;
  say(`${hits.length} hits for ${answer.queries.length} queries in ${answer.database}.`);
}

async function search(event) {
  event.preventDefault();
  say("Searching...");
  $("go").disabled = true;
  try {
    const answer = await fetch("/search", { method: "POST", headers: headers(),
                                            body: JSON.stringify(request("json")) });
    const body = await answer.json();
    if (!answer.ok) {
      say(body.error || `refused (${answer.status})`, true);
      return;
    }
    show(body);
  } catch (error) {
    say("The service cannot be reached: " + error, true);
  } finally {
    $("go").disabled = false;
  }
}

$("upload").addEventListener("change", async () => {
  const file = $("upload").files[0];
  if (file) $("queries").value = await file.text();
});
$("token").addEventListener("change", databases);
$("search").addEventListener("submit", search);
databases().catch((error) => say("The service cannot be reached: " + error, true));
