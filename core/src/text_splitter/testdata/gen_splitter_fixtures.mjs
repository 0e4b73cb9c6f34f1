// Regenerates splitter_fixtures.json from LangChain JS's own splitters, so
// the Rust tests pin LangChain's chunks rather than our reading of them.
//
// Usage (no network needed at run time):
//   mkdir -p /tmp/lcsplit && cd /tmp/lcsplit && npm init -y
//   npm install --ignore-scripts --legacy-peer-deps @langchain/textsplitters@1.0.1 @langchain/core@1.1.8
//   cp gen_splitter_fixtures.mjs /tmp/lcsplit/ && cd /tmp/lcsplit
//   node gen_splitter_fixtures.mjs > splitter_fixtures.json
//
// Texts whose chunks would need the empty separator to cut a character
// outside the Basic Multilingual Plane are left out: LangChain cuts such a
// character into two UTF-16 halves, nodekit keeps it whole (documented).
import { readFileSync } from "node:fs";
import { RecursiveCharacterTextSplitter, CharacterTextSplitter } from "@langchain/textsplitters";

const version = JSON.parse(readFileSync(new URL("./node_modules/@langchain/textsplitters/package.json", import.meta.url), "utf8")).version;

// A seeded generator, so the file is the same on every run.
let seed = 0x2545f491;
const rand = () => {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed / 4294967296;
};
const pick = (xs) => xs[Math.floor(rand() * xs.length)];

const words = ["alpha", "beta", "gamma", "delta", "epsilon", "a", "of", "the", "Zürich", "naïve", "東京", "日本語テキスト",
  "supercalifragilisticexpialidocious", "x", "—", "end.", "(note)", "café", "😀", "🚀rocket", "a😀b"];
const gaps = [" ", " ", " ", " ", "  ", "\n", "\n\n", "\n\n\n", " \n ", "\t", "\u00a0", "\r\n", "\n \n", "\u3000", "\ufeff", "\u0085"];
const randomText = () => {
  const n = 1 + Math.floor(rand() * 30);
  let t = rand() < 0.2 ? pick(gaps) : "";
  for (let i = 0; i < n; i++) t += pick(words) + (i + 1 < n ? pick(gaps) : "");
  if (rand() < 0.2) t += pick(gaps);
  return t;
};

const fixed = [
  "Hello world, this is a test.\n\nSecond paragraph here with more words.\nA new line.\n\n\n   Third   para.",
  "abcdefghijklmnopqrstuvwxyz 0123456789",
  "one two three four five six seven eight nine ten",
  "abcde fghij",
  "ab.cd.ef.gh",
  "",
  "   ",
  "a\n\n\n\nb\n\n\n\n\nc",
  "# Title\n\nIntro text here.\n## Section A\nbody a text that goes on\n## Section B\nbody b\n\n```\ncode block\n```\n\nTail.",
  "fn main() {\n    let x = 1;\n}\n\nfn other() {\n    if x {\n        loop {}\n    }\n}\nconst Y: u8 = 2;\n",
  "def f(x):\n    return x\n\nclass A:\n\tdef g(self):\n\t\tpass\n",
  "<html><body><div><p>Para one.</p><p>Para two is longer than the others.</p></div><ul><li>one</li><li>two</li></ul></body></html>",
  "Line one\r\nLine two\r\n\r\nLine four",
  "\ufeffBOM start and NEL\u0085middle and nbsp\u00a0end\u3000",
  "東京は日本の首都です。\n\n大阪は大きな都市です。京都は古い都市です。",
  "emoji 😀 in 🚀 text with 👍🏽 skin tones and more words to split",
];

const configs = [];
for (const [size, overlap] of [[1000, 200], [100, 20], [50, 10], [20, 5], [10, 3], [10, 0], [7, 2], [5, 0], [3, 1], [2, 0]]) {
  configs.push({ kind: "recursive", chunkSize: size, chunkOverlap: overlap, keepSeparator: true, separators: null, language: null });
  configs.push({ kind: "recursive", chunkSize: size, chunkOverlap: overlap, keepSeparator: false, separators: ["\n\n", "\n", " ", ""], language: null });
}
for (const language of ["markdown", "rust", "python", "html", "js", "latex"]) {
  configs.push({ kind: "recursive", chunkSize: 30, chunkOverlap: 5, keepSeparator: false, separators: null, language });
  configs.push({ kind: "recursive", chunkSize: 40, chunkOverlap: 0, keepSeparator: true, separators: null, language });
}
configs.push({ kind: "recursive", chunkSize: 6, chunkOverlap: 0, keepSeparator: true, separators: [".", ""], language: null });
configs.push({ kind: "recursive", chunkSize: 12, chunkOverlap: 4, keepSeparator: true, separators: ["\n\n", "\n"], language: null });
configs.push({ kind: "recursive", chunkSize: 12, chunkOverlap: 4, keepSeparator: true, separators: [], language: null });
for (const [separator, size, overlap] of [["", 10, 2], ["\n", 10, 0], ["\n\n", 30, 5], [" ", 8, 3]]) {
  configs.push({ kind: "character", chunkSize: size, chunkOverlap: overlap, keepSeparator: false, separator });
}
configs.push({ kind: "character", chunkSize: 8, chunkOverlap: 3, keepSeparator: true, separator: " " });

const make = (c) => {
  if (c.kind === "character") {
    return new CharacterTextSplitter({ separator: c.separator, chunkSize: c.chunkSize, chunkOverlap: c.chunkOverlap, keepSeparator: c.keepSeparator });
  }
  const fields = { chunkSize: c.chunkSize, chunkOverlap: c.chunkOverlap, keepSeparator: c.keepSeparator };
  if (c.separators) fields.separators = c.separators;
  return c.language ? RecursiveCharacterTextSplitter.fromLanguage(c.language, fields) : new RecursiveCharacterTextSplitter(fields);
};

// Whether a chunk holds half of a surrogate pair.
const halves = (s) => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

// Texts and configurations are stored once; each case names them by index.
// A case holds the chunks and, from createDocuments, each chunk's
// metadata.loc.lines as [from, to] (the metadata is the input's plus loc).
const cases = [];
let skipped = 0;
const texts = [...fixed];
for (let i = 0; i < 40; i++) texts.push(randomText());
// console.warn is how LangChain reports an oversized chunk; keep stdout clean.
console.warn = () => {};
const metadatas = [{}, { source: "x" }, { loc: { pageNumber: 2 }, source: "y" }];
for (const [c, config] of configs.entries()) {
  const splitter = make(config);
  for (const [t, text] of texts.entries()) {
    // Tiny chunks of long random texts add size, not cases.
    if (config.chunkSize <= 3 && t >= fixed.length + 8) continue;
    const chunks = await splitter.splitText(text);
    if (chunks.some(halves)) { skipped++; continue; }
    const m = Math.floor(rand() * metadatas.length);
    const documents = await splitter.createDocuments([text], [structuredClone(metadatas[m])]);
    for (const [i, d] of documents.entries()) {
      const { loc, ...rest } = d.metadata;
      const expected = { ...metadatas[m] };
      delete expected.loc;
      if (d.pageContent !== chunks[i] || JSON.stringify(rest) !== JSON.stringify(expected)) throw new Error("unexpected document");
    }
    const lines = documents.map((d) => [d.metadata.loc.lines.from, d.metadata.loc.lines.to]);
    cases.push({ c, t, m, chunks, lines });
  }
}
console.log(JSON.stringify({ generator: `@langchain/textsplitters ${version}`, skipped, configs, texts, metadatas, cases }));
