/**
 * A fetch made of XMLHttpRequest, for the one thing fetch cannot do in
 * browsers: report upload progress (CallOptions.onUploadProgress). It speaks
 * fetch's contract, so the call loop, the retry rule and the errors stay the
 * same whichever sends.
 */

/** hasXHR is true where XMLHttpRequest exists (browsers and their workers, not Node). */
export function hasXHR(): boolean {
  return typeof XMLHttpRequest === "function";
}

/**
 * xhrFetch returns a fetch whose requests are sent with XMLHttpRequest,
 * calling onProgress(loaded, total) as the body goes out (total 0 when
 * unknown). A failure to get any answer rejects with a TypeError, as fetch
 * does; an aborted signal rejects with its reason. The response body is read
 * whole before the promise resolves.
 */
export function xhrFetch(onProgress: (loaded: number, total: number) => void): typeof globalThis.fetch {
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const signal = init.signal;
      if (signal?.aborted) return reject(signal.reason);
      const xhr = new XMLHttpRequest();
      xhr.open(init.method ?? "GET", String(input instanceof Request ? input.url : input));
      xhr.responseType = "arraybuffer";
      xhr.withCredentials = init.credentials === "include";
      // The browser sets User-Agent itself and refuses it from a page.
      new Headers(init.headers).forEach((v, k) => k !== "user-agent" && xhr.setRequestHeader(k, v));
      const onAbort = () => xhr.abort();
      signal?.addEventListener("abort", onAbort, { once: true });
      const end = () => signal?.removeEventListener("abort", onAbort);
      xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : 0);
      xhr.onerror = () => (end(), reject(new TypeError("network error: no response")));
      xhr.onabort = () => (end(), reject(signal?.aborted ? signal.reason : new TypeError("network error: aborted")));
      xhr.onload = () => {
        end();
        const empty = xhr.status === 204 || xhr.status === 205 || xhr.status === 304;
        resolve(new Response(empty ? null : (xhr.response as ArrayBuffer), { status: xhr.status, statusText: xhr.statusText, headers: parseHeaders(xhr.getAllResponseHeaders()) }));
      };
      xhr.send((init.body ?? null) as XMLHttpRequestBodyInit | null);
    });
}

function parseHeaders(raw: string): Headers {
  const h = new Headers();
  for (const line of raw.trim().split(/[\r\n]+/)) {
    const i = line.indexOf(":");
    if (i > 0) h.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  return h;
}
