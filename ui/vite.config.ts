import { defineConfig } from "vite";

// Tauri serves ui/dist from inside the binary; the dev server is only for `tauri dev`.
export default defineConfig({
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: { outDir: "dist", emptyOutDir: true, target: "es2022" },
  test: { environment: "jsdom", globals: true },
});
