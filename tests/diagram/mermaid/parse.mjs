// Parse Mermaid files with Mermaid's own parser (the npm `mermaid` package) under Node.
//
// usage: node parse.mjs FILE...   prints one JSON object per file on stdout, one per line:
//   {"file", "ok": true, "type", "vertices": [{id, text, type}], "edges": [{start, end,
//    text, stroke}], "subgraphs": [{id, title, nodes}]}  or  {"file", "ok": false, "error"}
//
// Mermaid needs a DOM only for DOMPurify (it sanitises labels); jsdom provides one, so the
// parser runs headless. Labels come back as Mermaid stores them: entity codes (`#35;`) in
// its internal placeholder form, which decodeEntities() turns back into characters the
// same way Mermaid does before it renders (mermaid/src/utils.ts decodeEntities, then the
// browser's entity decoding).
import { readFileSync } from "node:fs";
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const mermaid = (await import("mermaid")).default;
mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });

function decodeEntities(text) {
  const html = String(text ?? "")
    .replace(/ﬂ°°/g, "&#")
    .replace(/ﬂ°/g, "&")
    .replace(/¶ß/g, ";");
  const el = dom.window.document.createElement("textarea");
  el.innerHTML = html;
  return el.value;
}

function values(collection) {
  return collection instanceof Map ? [...collection.values()] : Object.values(collection);
}

for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, "utf8");
  try {
    await mermaid.parse(text);
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
    const db = diagram.db;
    const out = {
      file,
      ok: true,
      type: diagram.type,
      vertices: values(db.getVertices()).map((v) => ({
        id: v.id,
        text: decodeEntities(v.text),
        type: v.type,
      })),
      edges: db.getEdges().map((e) => ({
        start: e.start,
        end: e.end,
        text: decodeEntities(e.text),
        stroke: e.stroke,
      })),
      subgraphs: db.getSubGraphs().map((s) => ({
        id: s.id,
        title: decodeEntities(s.title),
        nodes: s.nodes,
      })),
    };
    console.log(JSON.stringify(out));
  } catch (err) {
    console.log(JSON.stringify({ file, ok: false, error: String(err?.message ?? err) }));
  }
}
