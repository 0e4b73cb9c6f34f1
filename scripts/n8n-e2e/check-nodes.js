'use strict';
// Checks n8n's /types/nodes.json against the catalog: every packaged node is
// listed as <prefix>.<name> (NODE_PREFIX: CUSTOM from a custom folder, the
// package name when installed), and every field of its catalog description
// is there unchanged. The codex of a node from a custom folder is the one of
// its `<Class>.node.json` file, with "Custom Nodes" added to its categories;
// an installed package's is the description's own, and n8n adds its
// `communityNodePackageVersion`. A `file:` icon becomes
// the URL n8n serves the file at (iconUrl).
//   NODE_PREFIX=… node check-nodes.js nodes.json PACKAGE_DIR PROGRAM
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const [listing, pkgDir, program] = process.argv.slice(2);
const prefix = process.env.NODE_PREFIX || 'CUSTOM';
const custom = prefix === 'CUSTOM';
const listed = new Map(JSON.parse(fs.readFileSync(listing, 'utf8')).map((d) => [d.name, d]));
const catalog = new Map(JSON.parse(execFileSync(program, ['catalog'], { maxBuffer: 1 << 26 })).map((d) => [d.name, d]));
const manifest = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));

const canonical = (v) => JSON.stringify(v, (k, x) => (x && typeof x === 'object' && !Array.isArray(x)
  ? Object.fromEntries(Object.keys(x).sort().map((key) => [key, x[key]])) : x));
let failures = 0;
const packaged = Object.values(manifest.nodekit.nodes);
for (const full of packaged) {
  const ours = catalog.get(full);
  const bare = full.slice(full.lastIndexOf('.') + 1);
  const theirs = listed.get(`${prefix}.${bare}`);
  if (!ours) { console.error(`${full}: not in the program's catalog`); failures++; continue; }
  if (!theirs) { console.error(`${full}: n8n does not list ${prefix}.${bare}`); failures++; continue; }
  for (const key of Object.keys(ours)) {
    if (key === 'name' || key === 'codex') continue;
    if (key === 'icon' && String(ours.icon).startsWith('file:') && theirs.icon === undefined) {
      // iconUrl is icons/<prefix>/<the file's path>: the file must be in the package.
      const served = path.resolve(pkgDir, String(theirs.iconUrl).slice(`icons/${prefix}/`.length));
      if (!served.endsWith(`/${ours.icon.slice('file:'.length)}`) || !fs.existsSync(served)) {
        console.error(`${full}: icon ${ours.icon} became ${theirs.iconUrl}`);
        failures++;
      }
      continue;
    }
    if (canonical(ours[key]) !== canonical(theirs[key])) {
      console.error(`${full}: field ${key} differs:\n  catalog ${String(JSON.stringify(ours[key])).slice(0, 300)}\n  n8n     ${String(JSON.stringify(theirs[key])).slice(0, 300)}`);
      failures++;
    }
  }
  // n8n adds the version of an installed package.
  const added = Object.keys(theirs).filter((k) => !(k in ours) && k !== 'iconUrl' && k !== 'communityNodePackageVersion');
  if (added.length) console.error(`${full}: n8n added ${added.join(', ')}`);
  if (ours.codex) {
    const expected = custom ? {
      categories: [...(ours.codex.categories || []), 'Custom Nodes'],
      ...(ours.codex.subcategories && { subcategories: ours.codex.subcategories }),
      resources: { ...(ours.codex.resources || {}) },
    } : ours.codex;
    if (canonical(expected) !== canonical(theirs.codex)) {
      console.error(`${full}: codex ${JSON.stringify(theirs.codex)}, expected ${JSON.stringify(expected)}`);
      failures++;
    }
  }
}
if (failures) { console.error(`${failures} difference(s)`); process.exit(1); }
console.error(`n8n lists all ${packaged.length} packaged nodes with the catalog's descriptions`);
