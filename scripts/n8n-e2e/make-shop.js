'use strict';
// Creates the shop database of the end-to-end run with n8n's own sqlite3 module.
//   N8N_DIR=... node make-shop.js FILE
const path = require('path');
const sqlite3 = require(path.join(process.env.N8N_DIR, 'node_modules', 'sqlite3'));
const db = new sqlite3.Database(process.argv[2]);
db.serialize(() => {
  db.run('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT)');
  db.run("INSERT INTO customers (id, name, city) VALUES (1, 'Ada Lovelace', 'London'), (2, 'Grace Hopper', 'New York')");
});
db.close((e) => { if (e) { console.error(e); process.exit(1); } });
