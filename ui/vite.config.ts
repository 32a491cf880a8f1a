import { defineConfig } from "vite";

// Tauri serves ui/dist from inside the binary; the dev server is only for `tauri dev`.
export default defineConfig({
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: {
    outDir: "dist", emptyOutDir: true, target: "es2022",
    // Two pages: the main window and the quick-ask window.
    rollupOptions: { input: { main: "index.html", quick: "quick.html" } },
  },
  test: { environment: "jsdom", globals: true },
});
