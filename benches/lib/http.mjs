// What the Node.js load generators of the benchmarks share: a JSON POST
// over kept-alive connections, and percentiles.
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

/** POSTs `body` as JSON to `url`; resolves to `{status, text}`. */
export function post(url, body) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** The `p`th percentile of `sorted` (ascending). */
export const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
