// The console's build (npm run console:build → console/dist, served by src/routes/console.ts) and its dev server
// (npm run console:dev), which proxies the API to a running service so the pages stay same-origin as in production.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const api = process.env.ARS_API_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
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
