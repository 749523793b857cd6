/** Cursor paging (docs/openapi.yaml, `limit` and `cursor`): one page, and every page as async iteration. */

import type { CallOptions, Request, Settled } from "./transport.js";
import type { ListParams, Page } from "./types.js";

/** Sends one request through the client's call loop. */
export type Send = (req: Request, opts?: CallOptions) => Promise<Settled>;

/**
 * getPage reads one page of the list at path: `limit` and `cursor` from
 * params, and any other defined member of params as a filter of the query.
 */
export async function getPage<T>(
  send: Send,
  path: string,
  params: ListParams,
  opts?: CallOptions,
): Promise<Page<T>> {
  const query = { ...params } as Record<string, string | number | undefined>;
  const r = await send({ method: "GET", path, query, expect: "json" }, opts);
  return r.json as Page<T>;
}

/**
 * paginate yields every item of every page, fetching a page only when the
 * previous one is used up, so `for await` with `break` stops fetching. Each
 * page is its own call, with its own retry budget; an error rejects the
 * iteration at the page that failed.
 */
export async function* paginate<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  cursor?: string,
): AsyncGenerator<T, void, undefined> {
  let next = cursor;
  for (;;) {
    const page = await fetchPage(next);
    yield* page.data;
    if (!page.hasMore || !page.nextCursor) return;
    next = page.nextCursor;
  }
}
