/**
 * The dashboard's entry point: opens the outbox (IndexedDB), starts this tab's
 * bid for the sender lock, and renders the app.
 */
import { render } from "preact";
import { App } from "./app";
import { Outbox } from "./outbox/outbox";
import { sdkTransport } from "./outbox/send";
import { ChangeStore } from "./outbox/store";
import { mode } from "./mode";
import { registerServiceWorker } from "./offline";
import { identity, onIdentityChange } from "./session";
import { setOutbox } from "./state";
import "./style.css";

async function main(): Promise<void> {
  const box = new Outbox({
    store: await ChangeStore.open(),
    transport: sdkTransport,
    locks: navigator.locks,
    identity,
    channel: new BroadcastChannel("riskapi-outbox"),
    online: () => navigator.onLine,
    mode,
  });
  setOutbox(box);
  box.start();
  // Back online, or someone signed in: what waits is worth trying at once
  // (only the signed-in user's changes are ever sent).
  addEventListener("online", () => box.retryNow());
  onIdentityChange(() => box.retryNow());
  render(<App />, document.getElementById("app")!);
  // The app and the user's reads kept for a reload offline (offline.ts).
  registerServiceWorker();
}

void main();
