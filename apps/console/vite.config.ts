import { defineConfig } from 'vite';

// Served by the API at /ui (apps/api/src/http/console.ts): every asset from S4 itself, no CDN.
export default defineConfig({
  base: '/ui/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No inline script or style: the page's CSP allows only the console's own files.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
});
