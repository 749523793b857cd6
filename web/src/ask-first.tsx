/**
 * Asking before a destructive action, inline (delete a risk or an attachment,
 * remove a user, revoke a key, make oneself a member): the question takes the
 * button's place, keyboard focus moves to Cancel, the safe choice, Escape
 * cancels, and focus goes back to the button that asked (docs/dashboard.md).
 */
import { useEffect, useRef, useState } from "preact/hooks";

/** Confirmation is the question and its two buttons; Cancel has focus as it appears. */
export function Confirmation(props: { label: string; text: string; confirm: string; small?: boolean; onConfirm: () => void; onCancel: () => void }) {
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => cancel.current?.focus(), []);
  const size = props.small ? " small" : "";
  return (
    <span class="confirm row" role="group" aria-label={props.label} onKeyDown={(e) => e.key === "Escape" && props.onCancel()}>
      <span>{props.text}</span>
      <button type="button" class={"danger" + size} onClick={props.onConfirm}>{props.confirm}</button>
      <button type="button" class={"secondary" + size} ref={cancel} onClick={props.onCancel}>Cancel</button>
    </span>
  );
}

/**
 * AskFirst is a button (`ask`, named `askLabel` when its text alone is
 * ambiguous) that shows a Confirmation instead of acting; onAsk runs as the
 * question opens (what the user is asked about, as shown then), onConfirm only
 * on its confirm button.
 */
export function AskFirst(props: { ask: string; askLabel?: string; label: string; text: string; confirm: string; small?: boolean; onAsk?: () => void; onConfirm: () => void }) {
  const [asking, setAsking] = useState(false);
  const back = useRef(false);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!asking && back.current) button.current?.focus();
    back.current = false;
  }, [asking]);
  if (asking) {
    return (
      <Confirmation label={props.label} text={props.text} confirm={props.confirm} small={props.small}
        onConfirm={() => {
          setAsking(false);
          props.onConfirm();
        }}
        onCancel={() => {
          back.current = true;
          setAsking(false);
        }} />
    );
  }
  return (
    <button type="button" class={"danger" + (props.small ? " small" : "")} ref={button} aria-label={props.askLabel} onClick={() => {
      props.onAsk?.();
      setAsking(true);
    }}>
      {props.ask}
    </button>
  );
}
