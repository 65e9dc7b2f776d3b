import { defineConfig } from 'vite';

// The page: index.html at the root, web/ for its code, src/ for everything it computes.
export default defineConfig({
  root: '.',
  base: './',
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 2000 },
  server: { port: 5173 },
  preview: { port: 4173 },
});
