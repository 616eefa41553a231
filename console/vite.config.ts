// The console's build (npm run console:build → console/dist, served by src/routes/console.ts) and its dev server
// (npm run console:dev), which proxies the API to a running service so the pages stay same-origin as in production.
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

/**
 * Issue 40 item 8: each script and stylesheet is also written brotli- and gzip-compressed beside itself
 * (`x.js.br`, `x.js.gz`), at the highest levels, once, at build time; the service sends the one the browser accepts
 * (src/routes/console.ts, @fastify/static's preCompressed). Compressing per request would cost CPU on every load.
 */
function precompressed(): Plugin {
  return {
    name: 'ars-precompressed',
    apply: 'build',
    generateBundle(_options, bundle) {
      for (const file of Object.values(bundle)) {
        if (!/\.(js|css|svg|json)$/.test(file.fileName)) continue;
        const source = Buffer.from(file.type === 'chunk' ? file.code : file.source);
        const br = brotliCompressSync(source, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: source.length } });
        const gz = gzipSync(source, { level: 9 });
        // Only where it saves something: a tiny file's compressed form can be larger.
        if (br.length < source.length) this.emitFile({ type: 'asset', fileName: `${file.fileName}.br`, source: br });
        if (gz.length < source.length) this.emitFile({ type: 'asset', fileName: `${file.fileName}.gz`, source: gz });
      }
    },
  };
}

const api = process.env.ARS_API_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react(), precompressed()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The CSP allows no inline script: the module-preload polyfill would be one.
    modulePreload: { polyfill: false },
    // Inlined assets would be data: URLs in CSS or scripts; keep every asset a hashed file under /assets.
    assetsInlineLimit: 0,
  },
  server: {
    port: 5173,
    proxy: {
      '/api': { target: api, changeOrigin: false },
      '/zones': { target: api, changeOrigin: false },
      '/openapi.json': { target: api },
    },
  },
});
