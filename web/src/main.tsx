/**
 * The dashboard's entry point: opens the outbox (IndexedDB), starts this tab's
 * bid for the sender lock, and renders the app.
 */
import { render } from "preact";
import { App } from "./app";
import { Outbox } from "./outbox/outbox";
import { ChangeStore } from "./outbox/store";
import { xhrTransport } from "./outbox/xhr";
import { setOutbox } from "./state";
import "./style.css";

async function main(): Promise<void> {
  const box = new Outbox({
    store: await ChangeStore.open(),
    transport: xhrTransport,
    locks: navigator.locks,
    channel: new BroadcastChannel("riskapi-outbox"),
    online: () => navigator.onLine,
  });
  setOutbox(box);
  box.start();
  // Back online: whatever waits for its backoff is worth trying at once.
  addEventListener("online", () => box.retryNow());
  render(<App />, document.getElementById("app")!);
}

void main();
