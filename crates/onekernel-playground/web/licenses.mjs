// Prepends the licence notices of the bundled packages to ../assets/editor.js.
import { readFileSync, writeFileSync, existsSync } from "node:fs";
const pkgs = ["@codemirror/state", "@codemirror/view", "@codemirror/commands",
  "@codemirror/language", "@codemirror/lang-rust", "@codemirror/lint", "@codemirror/search",
  "@codemirror/autocomplete", "@lezer/common", "@lezer/highlight", "@lezer/lr", "@lezer/rust",
  "@marijn/find-cluster-break", "style-mod", "w3c-keyname", "crelt"];
let header = "/*! onekernel playground editor: CodeMirror 6 (https://codemirror.net), bundled with esbuild.\n" +
  " * Built from crates/onekernel-playground/web (npm install && npm run build).\n * Bundled packages and their licences:\n";
for (const p of pkgs) {
  const dir = `node_modules/${p}`;
  if (!existsSync(dir)) continue;
  const meta = JSON.parse(readFileSync(`${dir}/package.json`, "utf8"));
  header += ` *   ${p}@${meta.version} (${meta.license})\n`;
}
const licence = readFileSync("node_modules/@codemirror/view/LICENSE", "utf8").trim();
header += " *\n * " + licence.split("\n").join("\n * ") + "\n */\n";
const out = "../assets/editor.js";
writeFileSync(out, header + readFileSync(out, "utf8"));
