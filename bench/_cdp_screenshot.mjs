// A screenshot as a DevTools MCP server takes it: Chromium headless, driven over the Chrome
// DevTools Protocol, `Page.captureScreenshot` with the format and quality asked for.
//
//   node --experimental-websocket bench/_cdp_screenshot.mjs PAGE.html OUT WIDTH HEIGHT SCALE FORMAT QUALITY
//
// Chromium is started on loopback with a throwaway profile and stopped at the end.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const [page, out, width, height, scale, format, quality] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), "visiongate-cdp-"));
const chromium = spawn(process.env.CHROMIUM || "chromium", [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--hide-scrollbars",
  "--remote-debugging-address=127.0.0.1",
  "--remote-debugging-port=0",
  `--user-data-dir=${profile}`,
  "about:blank",
]);

function endpoint() {
  return new Promise((ok, fail) => {
    let seen = "";
    chromium.stderr.on("data", (chunk) => {
      seen += chunk;
      const found = seen.match(/DevTools listening on (ws:\/\/\S+)/);
      if (found) ok(found[1]);
    });
    chromium.on("exit", () => fail(new Error(`chromium exited: ${seen.slice(-500)}`)));
  });
}

async function main() {
  const browser = new URL(await endpoint());
  const listing = await fetch(`http://${browser.host}/json/list`).then((r) => r.json());
  const target = listing.find((entry) => entry.type === "page");
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((ok) => socket.addEventListener("open", ok, { once: true }));
  let next = 0;
  const pending = new Map();
  const events = [];
  socket.addEventListener("message", (message) => {
    const body = JSON.parse(message.data);
    if (body.id !== undefined) pending.get(body.id)?.(body);
    else events.push(body.method);
  });
  const call = (method, params = {}) =>
    new Promise((ok, fail) => {
      const id = ++next;
      pending.set(id, (body) => (body.error ? fail(new Error(body.error.message)) : ok(body.result)));
      socket.send(JSON.stringify({ id, method, params }));
    });
  await call("Page.enable");
  await call("Emulation.setDeviceMetricsOverride", {
    width: Number(width),
    height: Number(height),
    deviceScaleFactor: Number(scale),
    mobile: false,
  });
  await call("Page.navigate", { url: `file://${resolve(page)}` });
  while (!events.includes("Page.loadEventFired")) await new Promise((ok) => setTimeout(ok, 20));
  const shot = await call("Page.captureScreenshot", { format, quality: Number(quality) });
  writeFileSync(out, Buffer.from(shot.data, "base64"));
  socket.close();
}

try {
  await main();
} finally {
  chromium.kill();
  await new Promise((ok) => chromium.on("exit", ok));
  rmSync(profile, { recursive: true, force: true });
}
