#!/usr/bin/env node
// A small static server for the lesson site, web/site/ (node:http only).
//   node scripts/serve.mjs            -> http://localhost:8080/
//   PORT=0 node scripts/serve.mjs     -> a free port, printed
// Pages under /examples/ get a strict Content-Security-Policy, like a course platform would send,
// so the embedding example proves that the components and the wasm engine run without eval; they
// are not cross-origin isolated (the plain embed recipe: the engine runs one thread there).
// Everything else (the lesson) is served cross-origin isolated (COOP same-origin + COEP
// require-corp, ISOLATION_HEADERS), so the engine there loads its threaded build.
import http from 'node:http';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const DEFAULT_ROOT = path.resolve(here, '..', 'web', 'site');

export const EXAMPLES_CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'";

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.license': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.d.ts': 'text/plain; charset=utf-8',
};

/** The headers that make a page cross-origin isolated (crossOriginIsolated === true). */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

export function mimeFor(file) {
  return MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Start the static server.
 * @param {{port?: number, root?: string, host?: string}} [opts]
 * @returns {Promise<{server: http.Server, port: number, url: string, close: () => Promise<void>}>}
 */
export function startServer({ port = 8080, root = DEFAULT_ROOT, host = '127.0.0.1' } = {}) {
  const base = path.resolve(root);
  const server = http.createServer(async (req, res) => {
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { Allow: 'GET, HEAD' }).end();
        return;
      }
      const url = new URL(req.url, 'http://localhost');
      let rel = decodeURIComponent(url.pathname);
      let file = path.resolve(base, '.' + rel);
      if (file !== base && !file.startsWith(base + path.sep)) {
        res.writeHead(403, { 'Content-Type': 'text/plain' }).end('forbidden');
        return;
      }
      let st = await stat(file).catch(() => null);
      if (st?.isDirectory()) {
        if (!rel.endsWith('/')) {
          res.writeHead(301, { Location: rel + '/' + url.search }).end();
          return;
        }
        file = path.join(file, 'index.html');
        st = await stat(file).catch(() => null);
      }
      if (!st?.isFile()) {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`not found: ${rel}`);
        return;
      }
      const headers = {
        'Content-Type': mimeFor(file),
        'Content-Length': st.size,
        'Cache-Control': 'no-cache',
        'X-Content-Type-Options': 'nosniff',
      };
      if (rel.startsWith('/examples/')) headers['Content-Security-Policy'] = EXAMPLES_CSP;
      else Object.assign(headers, ISOLATION_HEADERS);
      res.writeHead(200, headers);
      if (req.method === 'HEAD') { res.end(); return; }
      createReadStream(file).on('error', () => res.destroy()).pipe(res);
    } catch (err) {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(err?.message ?? err));
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const actual = server.address().port;
      const shown = host === '127.0.0.1' || host === '0.0.0.0' ? 'localhost' : host;
      resolve({
        server,
        port: actual,
        url: `http://${shown}:${actual}/`,
        close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
      });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const port = process.env.PORT === undefined ? 8080 : Number(process.env.PORT);
  const { url } = await startServer({ port, host: process.env.HOST ?? '127.0.0.1' });
  console.log(`mha-wasm lesson: ${url}`);
  const examples = (await import('node:fs')).readdirSync(new URL('../web/site/examples/', import.meta.url)).filter((f) => f.endsWith('.html')).sort();
  console.log(`one page per element, under a strict CSP: ${examples.map((f) => `${url}examples/${f}`).join('\n  ')}`);
}
