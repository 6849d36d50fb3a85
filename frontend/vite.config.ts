import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// The build goes to dist/, which embed.go embeds into the Go binary. dist/.keep
// is tracked so that go:embed finds the directory in a fresh clone: emptyOutDir
// is off and the keepDist plugin removes only what earlier builds wrote, so a
// build never deletes the tracked placeholder.
import { readdirSync, rmSync, existsSync } from 'node:fs';
import { join } from 'node:path';

function keepDist() {
  return {
    name: 'switchboard-keep-dist',
    apply: 'build' as const,
    buildStart() {
      const dir = join(import.meta.dirname, 'dist');
      if (!existsSync(dir)) return;
      for (const name of readdirSync(dir)) {
        if (name !== '.keep') rmSync(join(dir, name), { recursive: true, force: true });
      }
    },
  };
}

export default defineConfig({
  plugins: [svelte(), keepDist()],
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: false,
    target: 'es2022',
    // One small bundle; uPlot is the only runtime dependency.
    chunkSizeWarningLimit: 300,
  },
  server: {
    // `npm run dev` against a running daemon: SWITCHBOARD_API=http://127.0.0.1:PORT
    proxy: process.env.SWITCHBOARD_API
      ? { '/api': { target: process.env.SWITCHBOARD_API, changeOrigin: false } }
      : undefined,
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.ts'],
  },
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
});
